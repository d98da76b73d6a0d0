// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import java.nio.ByteOrder;
import java.security.GeneralSecurityException;
import java.util.Arrays;

import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.metaroce.core.RandomSource;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.wire.WireConstants;

/**
 * The server's stateless cookies [CM-015..CM-017]: a 4-byte issue time (seconds) followed by the
 * first 16 bytes of HMAC-SHA-256 over (client address, Service ID, Transaction ID, client QPN,
 * issue time), keyed with a 32-byte secret that rotates, the previous one kept for verification
 * for one cookie lifetime. Holds no per-client state; computing and verifying reuse preallocated
 * buffers.
 */
final class CookieJar {
    static final String ALGORITHM = "HmacSHA256";
    static final int SECRET_LENGTH = 32;
    static final int MAC_LENGTH = 16;
    static final int TIME_LENGTH = 4;
    /** Largest message: address (18) + Service ID + Transaction ID + QPN + time. */
    static final int MAX_MESSAGE = PeerDirectory.MAX_ADDRESS_BYTES + 8 + 8 + 4 + 4;

    /** {@link #verify} results. */
    static final int VALID = 0;
    static final int BAD = 1;
    static final int STALE = 2;

    private static final long NS_PER_S = 1_000_000_000L;

    private final RandomSource random;
    private final long rotationNs;
    private final int lifetimeSeconds;
    private Mac current;
    private Mac previous;
    private boolean started;
    private long currentSinceNs;
    private long previousUntilNs;
    private long rotations;

    private final byte[] message = new byte[MAX_MESSAGE];
    private final byte[] digest = new byte[32];

    CookieJar(final RandomSource random, final long rotationNs, final int lifetimeSeconds) {
        this.random = random;
        this.rotationNs = rotationNs;
        this.lifetimeSeconds = lifetimeSeconds;
        this.current = newMac();
        this.previous = newMac();
    }

    /** @return how many times the secret was replaced (not counting the first) */
    long rotations() {
        return rotations;
    }

    /**
     * Starts the secret on first use and rotates it when due [CM-017].
     *
     * @param nowNs current time
     * @return whether a rotation happened
     */
    boolean maintain(final long nowNs) {
        if (!started) {
            rekey(current);
            currentSinceNs = nowNs;
            previousUntilNs = nowNs;
            started = true;
            return false;
        }
        if (nowNs - currentSinceNs < rotationNs) {
            return false;
        }
        final Mac retired = previous;
        previous = current;
        current = retired;
        rekey(current);
        // With no traffic for longer than rotation + lifetime, the old secret is useless anyway.
        previousUntilNs = nowNs - currentSinceNs >= rotationNs + lifetimeSeconds * NS_PER_S
            ? nowNs : nowNs + lifetimeSeconds * NS_PER_S;
        currentSinceNs = nowNs;
        rotations++;
        return true;
    }

    /**
     * Writes a fresh cookie for the request.
     *
     * @param nowNs current time
     * @param address the client's address bytes ({@link PeerDirectory#addressBytes})
     * @param addressLength their number
     * @param serviceId Service ID of the request
     * @param transactionId Transaction ID of the request
     * @param sourceQpn client QPN of the request
     * @param dst where the 20 bytes go
     * @param dstOffset first byte in {@code dst}
     */
    void issue(final long nowNs, final DirectBuffer address, final int addressLength, final long serviceId,
               final long transactionId, final int sourceQpn, final MutableDirectBuffer dst, final int dstOffset) {
        final int time = seconds(nowNs);
        compute(current, address, addressLength, serviceId, transactionId, sourceQpn, time, message, digest);
        dst.putInt(dstOffset, time, ByteOrder.BIG_ENDIAN);
        dst.putBytes(dstOffset + TIME_LENGTH, digest, 0, MAC_LENGTH);
    }

    /**
     * Checks a returned cookie [CM-016]: valid under the current or (within its grace period) the
     * previous secret, then fresh.
     *
     * @return {@link #VALID}, {@link #BAD} or {@link #STALE}
     */
    int verify(final long nowNs, final DirectBuffer address, final int addressLength, final long serviceId,
               final long transactionId, final int sourceQpn, final DirectBuffer cookie, final int cookieOffset) {
        final int time = cookie.getInt(cookieOffset, ByteOrder.BIG_ENDIAN);
        compute(current, address, addressLength, serviceId, transactionId, sourceQpn, time, message, digest);
        boolean valid = constantTimeEquals(digest, cookie, cookieOffset + TIME_LENGTH);
        if (!valid && nowNs < previousUntilNs) {
            compute(previous, address, addressLength, serviceId, transactionId, sourceQpn, time, message, digest);
            valid = constantTimeEquals(digest, cookie, cookieOffset + TIME_LENGTH);
        }
        if (!valid) {
            return BAD;
        }
        final long age = Integer.toUnsignedLong(seconds(nowNs) - time);
        return age <= lifetimeSeconds ? VALID : STALE;
    }

    /** @return the cookie clock: whole seconds modulo 2^32 [CM-015] */
    static int seconds(final long nowNs) {
        return (int) Math.floorDiv(nowNs, NS_PER_S);
    }

    /** @return whether all 20 cookie bytes are zero */
    static boolean isZero(final DirectBuffer b, final int offset) {
        int acc = 0;
        for (int i = 0; i < WireConstants.COOKIE_LENGTH; i++) {
            acc |= b.getByte(offset + i);
        }
        return acc == 0;
    }

    /**
     * HMAC-SHA-256 over the message of [CM-015] with the address part as given; writes all 32
     * bytes into {@code digest}.
     */
    static void compute(final Mac mac, final DirectBuffer address, final int addressLength, final long serviceId,
                        final long transactionId, final int sourceQpn, final int time, final byte[] message,
                        final byte[] digest) {
        address.getBytes(0, message, 0, addressLength);
        int i = addressLength;
        i = putLong(message, i, serviceId);
        i = putLong(message, i, transactionId);
        i = putInt(message, i, sourceQpn & WireConstants.MAX_QPN);
        i = putInt(message, i, time);
        mac.update(message, 0, i);
        try {
            mac.doFinal(digest, 0);
        } catch (final ShortBufferException ex) {
            throw new IllegalStateException(ex);
        }
    }

    static Mac newMac() {
        try {
            return Mac.getInstance(ALGORITHM);
        } catch (final GeneralSecurityException ex) {
            throw new IllegalStateException(ALGORITHM + " is not available", ex);
        }
    }

    static void init(final Mac mac, final byte[] key) {
        try {
            mac.init(new SecretKeySpec(key, ALGORITHM));
        } catch (final GeneralSecurityException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private void rekey(final Mac mac) {
        final byte[] secret = new byte[SECRET_LENGTH];
        for (int i = 0; i < SECRET_LENGTH; i += 8) {
            putLong(secret, i, random.nextLong());
        }
        init(mac, secret);
        Arrays.fill(secret, (byte) 0);
    }

    private static boolean constantTimeEquals(final byte[] mac, final DirectBuffer b, final int offset) {
        int diff = 0;
        for (int i = 0; i < MAC_LENGTH; i++) {
            diff |= mac[i] ^ b.getByte(offset + i);
        }
        return diff == 0;
    }

    private static int putLong(final byte[] dst, final int at, final long v) {
        for (int k = 0; k < 8; k++) {
            dst[at + k] = (byte) (v >>> (56 - 8 * k));
        }
        return at + 8;
    }

    private static int putInt(final byte[] dst, final int at, final int v) {
        for (int k = 0; k < 4; k++) {
            dst[at + k] = (byte) (v >>> (24 - 8 * k));
        }
        return at + 4;
    }
}
