// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.channel.epoll.Epoll;
import org.metaroce.netty.linux.NativeUdp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Which datagram transport a device uses. */
public enum Transport {
    /**
     * Linux sockets through the JDK's foreign function API (JDK 22+): {@code sendmmsg} and
     * {@code recvmmsg} on memory the driver owns, UDP GSO and GRO, ECT(0) on sent packets and the
     * ECN field of every received datagram; every socket is read by the owning thread (no event
     * loop). Fails if {@link NativeUdp#isAvailable()} is false.
     */
    NATIVE,
    /** Netty's native epoll: recvmmsg, sendmmsg, UDP GSO and GRO. Fails if the native library is unavailable. */
    EPOLL,
    /** Java NIO: portable; one system call per datagram. */
    NIO,
    /**
     * {@link #NATIVE} when {@link NativeUdp#isAvailable()}, else {@link #EPOLL} when
     * {@link #epollAvailable()}, else {@link #NIO}; a fallback from NATIVE on Linux is logged once
     * per JVM with the reason.
     */
    AUTO;

    private static final Logger LOG = LoggerFactory.getLogger(Transport.class);
    /** The fallback line is written once: every device of a JVM falls back for the same reason. */
    private static final AtomicBoolean FALLBACK_LOGGED = new AtomicBoolean();

    /** @return whether Netty's native epoll transport can be used in this JVM */
    public static boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    /** @return why epoll is unavailable, or null when it is available */
    public static Throwable epollUnavailabilityCause() {
        return Epoll.unavailabilityCause();
    }

    /**
     * @param name "native", "epoll", "nio" or "auto" (any case), as tools accept it
     * @return the transport
     * @throws IllegalArgumentException for any other name
     */
    public static Transport parse(final String name) {
        for (final Transport t : values()) {
            if (t.name().equalsIgnoreCase(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + name + "' (native, epoll, nio or auto)");
    }

    /**
     * @return the concrete transport: {@link #AUTO} resolved, the others as they are
     * @throws IllegalStateException if {@link #NATIVE} or {@link #EPOLL} is asked for and
     *     unavailable; the message says why and what to change
     */
    public Transport resolve() {
        switch (this) {
            case AUTO:
                if (NativeUdp.isAvailable()) {
                    return NATIVE;
                }
                final Transport netty = epollAvailable() ? EPOLL : NIO;
                logFallback(netty);
                return netty;
            case NATIVE:
                if (!NativeUdp.isAvailable()) {
                    throw new IllegalStateException("the native transport is not available: "
                        + NativeUdp.unavailabilityReason().orElse("unknown reason")
                        + " (or choose transport epoll, nio or auto to use Netty)");
                }
                return NATIVE;
            case EPOLL:
                if (!epollAvailable()) {
                    throw new IllegalStateException("the epoll transport is not available: "
                        + epollUnavailabilityCause(), epollUnavailabilityCause());
                }
                return EPOLL;
            default:
                return this;
        }
    }

    private static void logFallback(final Transport chosen) {
        final String reason = NativeUdp.unavailabilityReason().orElse("unknown reason");
        // Off Linux, Netty is the only choice: nothing fell back.
        if (reason.startsWith("not Linux") || !FALLBACK_LOGGED.compareAndSet(false, true)) {
            return;
        }
        LOG.info("native transport unavailable ({}); using {}", reason, chosen.name().toLowerCase(java.util.Locale.ROOT));
    }
}
