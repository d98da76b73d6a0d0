// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * Parameters of a connection manager, with the defaults of specification 9.13 and 11.4
 * [GEN-004]. Mutable until the manager is built; each setter validates and names what it rejects.
 */
public final class CmConfig {
    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;

    private long retransmitInitialNs = 100 * MS;
    private long retransmitMaxNs = S;
    private long connectTimeoutNs = 3 * S;
    private long disconnectTimeoutNs = S;
    private int cookieLifetimeSeconds = 8;
    private long secretRotationNs = 120 * S;
    private long timewaitNs = 10 * S;
    private int listenerLimit = 1024;
    private int maxHandshakes = 16_384;
    private int maxHandshakesPerHost = 4096;
    private int answerRatePerSource = 1000;
    private int rateLimiterBuckets = 4096;
    private int globalAnswerRate;
    private int answerQueueCapacity = 1024;

    /** @return CM_RETRANSMIT_INITIAL in ns */
    public long retransmitInitialNs() {
        return retransmitInitialNs;
    }

    /**
     * @param ns CM_RETRANSMIT_INITIAL: first retransmission interval of a handshake or disconnect
     *     packet [CM-022], default 100 ms
     * @return this
     */
    public CmConfig retransmitInitialNs(final long ns) {
        this.retransmitInitialNs = positive("retransmitInitialNs", ns);
        return this;
    }

    /** @return largest retransmission interval in ns */
    public long retransmitMaxNs() {
        return retransmitMaxNs;
    }

    /**
     * @param ns the interval doubles after each retransmission up to this, default 1 s [CM-022]
     * @return this
     */
    public CmConfig retransmitMaxNs(final long ns) {
        this.retransmitMaxNs = positive("retransmitMaxNs", ns);
        return this;
    }

    /** @return CONNECT_TIMEOUT in ns */
    public long connectTimeoutNs() {
        return connectTimeoutNs;
    }

    /**
     * @param ns CONNECT_TIMEOUT, default 3 s: a client gives up (UNREACHABLE) this long after its
     *     first CONNECT_REQUEST [CM-023]; a server (CONNECT_ERROR) this long after CONNECT_REPLY
     *     [CM-024]. A {@link ConnectParams} may override it per connection.
     * @return this
     */
    public CmConfig connectTimeoutNs(final long ns) {
        this.connectTimeoutNs = positive("connectTimeoutNs", ns);
        return this;
    }

    /** @return DISCONNECT_TIMEOUT in ns */
    public long disconnectTimeoutNs() {
        return disconnectTimeoutNs;
    }

    /**
     * @param ns DISCONNECT_TIMEOUT, default 1 s: longest a disconnect waits for DISCONNECT_REPLY
     *     [CM-032]
     * @return this
     */
    public CmConfig disconnectTimeoutNs(final long ns) {
        this.disconnectTimeoutNs = positive("disconnectTimeoutNs", ns);
        return this;
    }

    /** @return COOKIE_LIFETIME in whole seconds */
    public int cookieLifetimeSeconds() {
        return cookieLifetimeSeconds;
    }

    /**
     * @param seconds COOKIE_LIFETIME, default 8 s (the cookie's issue time has 1 s resolution)
     *     [CM-016]; must not exceed the secret rotation interval
     * @return this
     */
    public CmConfig cookieLifetimeSeconds(final int seconds) {
        if (seconds < 1 || seconds > 3600) {
            throw new IllegalArgumentException("cookieLifetimeSeconds must be in 1..3600, got " + seconds);
        }
        if (seconds * S > secretRotationNs) {
            throw new IllegalArgumentException("cookieLifetimeSeconds (" + seconds
                + " s) must not exceed secretRotationNs (" + secretRotationNs + " ns) [CM-017]");
        }
        this.cookieLifetimeSeconds = seconds;
        return this;
    }

    /** @return SECRET_ROTATION in ns */
    public long secretRotationNs() {
        return secretRotationNs;
    }

    /**
     * @param ns SECRET_ROTATION, default 120 s, never less than COOKIE_LIFETIME [CM-017]
     * @return this
     */
    public CmConfig secretRotationNs(final long ns) {
        if (ns < cookieLifetimeSeconds * S) {
            throw new IllegalArgumentException("secretRotationNs (" + ns + ") must be at least COOKIE_LIFETIME ("
                + cookieLifetimeSeconds + " s) [CM-017]");
        }
        this.secretRotationNs = ns;
        return this;
    }

    /** @return QPN_QUARANTINE (time-wait) in ns */
    public long timewaitNs() {
        return timewaitNs;
    }

    /**
     * @param ns QPN_QUARANTINE, default 10 s: how long a finished connection's identity is kept to
     *     answer duplicate DISCONNECT_REQUESTs before TIMEWAIT_EXIT [CM-034]
     * @return this
     */
    public CmConfig timewaitNs(final long ns) {
        this.timewaitNs = nonNegative("timewaitNs", ns);
        return this;
    }

    /** @return default limit of pending plus established connections per listener */
    public int listenerLimit() {
        return listenerLimit;
    }

    /**
     * @param limit default bound of pending plus established connections per listener, default
     *     1024 [CM-012, SEC-008]; {@link ListenParams} may override it
     * @return this
     */
    public CmConfig listenerLimit(final int limit) {
        this.listenerLimit = range("listenerLimit", limit, 1, 1 << 20);
        return this;
    }

    /** @return bound of the server's handshake table */
    public int maxHandshakes() {
        return maxHandshakes;
    }

    /**
     * @param entries most verified handshakes remembered at once (for duplicate detection, CM-025);
     *     beyond it verified requests are rejected with NO_RESOURCES [SEC-009, GEN-006]
     * @return this
     */
    public CmConfig maxHandshakes(final int entries) {
        this.maxHandshakes = range("maxHandshakes", entries, 1, 1 << 22);
        return this;
    }

    /** @return bound of the handshake entries of one client IP address [CM-040] */
    public int maxHandshakesPerHost() {
        return maxHandshakesPerHost;
    }

    /**
     * @param entries most verified handshakes remembered at once for one client IP address; beyond
     *     it that address's verified requests are rejected with NO_RESOURCES, so that one host
     *     cannot fill the table for everyone [CM-040]. Entries last COOKIE_LIFETIME + 2 s, so this
     *     is also about how many connections one host can open per that time
     * @return this
     */
    public CmConfig maxHandshakesPerHost(final int entries) {
        this.maxHandshakesPerHost = range("maxHandshakesPerHost", entries, 1, 1 << 22);
        return this;
    }

    /** @return answers per second to one unverified source address, 0 for no limit */
    public int answerRatePerSource() {
        return answerRatePerSource;
    }

    /**
     * @param perSecond most CONNECT_CHALLENGEs and stateless CONNECT_REJECTs per second to one
     *     source IP address, default 1000, 0 for no limit [SEC-008]. Kept in a fixed table of
     *     hashed buckets, so it costs no per-source state.
     * @return this
     */
    public CmConfig answerRatePerSource(final int perSecond) {
        this.answerRatePerSource = range("answerRatePerSource", perSecond, 0, 100_000_000);
        return this;
    }

    /** @return number of hashed rate-limit buckets */
    public int rateLimiterBuckets() {
        return rateLimiterBuckets;
    }

    /**
     * @param buckets size of the fixed table of per-source rate-limit buckets, a power of two
     * @return this
     */
    public CmConfig rateLimiterBuckets(final int buckets) {
        if (buckets < 1 || buckets > (1 << 20) || Integer.bitCount(buckets) != 1) {
            throw new IllegalArgumentException("rateLimiterBuckets must be a power of two in 1..2^20, got " + buckets);
        }
        this.rateLimiterBuckets = buckets;
        return this;
    }

    /** @return answers per second to unverified sources in total, 0 for no limit */
    public int globalAnswerRate() {
        return globalAnswerRate;
    }

    /**
     * @param perSecond most stateless answers per second to all unverified sources together,
     *     default 0 (no limit beyond the per-source one)
     * @return this
     */
    public CmConfig globalAnswerRate(final int perSecond) {
        this.globalAnswerRate = range("globalAnswerRate", perSecond, 0, 100_000_000);
        return this;
    }

    /** @return capacity of the queue of answers waiting for the next poll */
    public int answerQueueCapacity() {
        return answerQueueCapacity;
    }

    /**
     * @param packets header-only answers (challenges, stateless rejects, DISCONNECT_REPLY,
     *     READY_TO_USE) buffered between a receive and the next poll; more are dropped and counted
     * @return this
     */
    public CmConfig answerQueueCapacity(final int packets) {
        this.answerQueueCapacity = range("answerQueueCapacity", packets, 1, 1 << 20);
        return this;
    }

    private static long positive(final String name, final long v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be > 0, got " + v);
        }
        return v;
    }

    private static long nonNegative(final String name, final long v) {
        if (v < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + v);
        }
        return v;
    }

    private static int range(final String name, final int v, final int min, final int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    @Override
    public String toString() {
        return "CmConfig{retransmitInitialNs=" + retransmitInitialNs + ", retransmitMaxNs=" + retransmitMaxNs
            + ", connectTimeoutNs=" + connectTimeoutNs + ", disconnectTimeoutNs=" + disconnectTimeoutNs
            + ", cookieLifetimeSeconds=" + cookieLifetimeSeconds + ", secretRotationNs=" + secretRotationNs
            + ", timewaitNs=" + timewaitNs + ", listenerLimit=" + listenerLimit + ", maxHandshakes=" + maxHandshakes
            + ", maxHandshakesPerHost=" + maxHandshakesPerHost + ", answerRatePerSource=" + answerRatePerSource + ", globalAnswerRate=" + globalAnswerRate + '}';
    }
}
