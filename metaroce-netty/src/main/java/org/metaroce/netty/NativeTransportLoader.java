// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.lang.reflect.InvocationTargetException;

import org.metaroce.netty.linux.NativeUdp;

/**
 * Builds the native transport's objects, whose classes exist only in {@code META-INF/versions/22}
 * of the multi-release jar: this Java 17 code cannot name them, so it loads them reflectively, as
 * {@link NativeUdp} loads the libc binding. Called only after {@link Transport#resolve()} chose
 * {@link Transport#NATIVE}, so the classes are there.
 */
final class NativeTransportLoader {
    private static final String TRANSPORT = "org.metaroce.netty.NativeUdpTransport";
    private static final String WAITER = "org.metaroce.netty.NativeReadinessWaiter";

    private NativeTransportLoader() {
    }

    /**
     * @param maxDatagramBytes largest datagram a receive slot holds whole (without GRO)
     * @param receiveSlots datagrams one {@code recvmmsg} reads at most
     * @param gro whether receiving sockets turn UDP GRO on (their slots then hold 64 KiB)
     * @param counters the device's counters (the sockets count what their error queues held)
     * @return a native {@link UdpTransport}
     */
    static UdpTransport transport(final int maxDatagramBytes, final int receiveSlots, final boolean gro,
                                  final DriverCounters counters) {
        return (UdpTransport) construct(TRANSPORT, new Class<?>[] {int.class, int.class, boolean.class,
            DriverCounters.class}, maxDatagramBytes, receiveSlots, gro, counters);
    }

    /** @return a waiter over native endpoint sockets, for a driver thread that idles by blocking */
    static ReadinessWaiter waiter() {
        return (ReadinessWaiter) construct(WAITER, new Class<?>[0]);
    }

    private static Object construct(final String className, final Class<?>[] types, final Object... args) {
        if (!NativeUdp.isAvailable()) {
            throw new IllegalStateException("the native transport is not available: "
                + NativeUdp.unavailabilityReason().orElse("unknown reason"));
        }
        try {
            final var constructor = Class.forName(className, true, NativeTransportLoader.class.getClassLoader())
                .getDeclaredConstructor(types);
            return constructor.newInstance(args);
        } catch (final InvocationTargetException ex) {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw new IllegalStateException("cannot create " + className + ": " + cause, cause);
        } catch (final ReflectiveOperationException ex) {
            throw new IllegalStateException("cannot create " + className + " (the native classes are missing from "
                + "the multi-release jar): " + ex, ex);
        }
    }
}
