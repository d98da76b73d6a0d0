package org.metaroce.netty;

import io.netty.channel.epoll.Epoll;

/** Which Netty transport a device uses. */
public enum Transport {
    /** Linux native epoll: recvmmsg, sendmmsg, UDP GSO and GRO. Fails if the native library is unavailable. */
    EPOLL,
    /** Java NIO: portable; one system call per datagram. */
    NIO,
    /** {@link #EPOLL} when {@link #epollAvailable()}, else {@link #NIO}. */
    AUTO;

    /** @return whether Netty's native epoll transport can be used in this JVM */
    public static boolean epollAvailable() {
        return Epoll.isAvailable();
    }

    /** @return why epoll is unavailable, or null when it is available */
    public static Throwable epollUnavailabilityCause() {
        return Epoll.unavailabilityCause();
    }

    /**
     * @return the concrete transport: {@link #AUTO} resolved, the others as they are
     * @throws IllegalStateException if {@link #EPOLL} is asked for and unavailable
     */
    public Transport resolve() {
        switch (this) {
            case AUTO:
                return epollAvailable() ? EPOLL : NIO;
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
}
