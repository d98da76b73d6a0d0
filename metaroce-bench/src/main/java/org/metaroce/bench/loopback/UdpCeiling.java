// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import java.lang.reflect.InvocationTargetException;

import org.metaroce.netty.linux.NativeUdp;

/**
 * Opens the UDP ceiling contender, whose harness ({@code NativeUdpCeilingStream}) is compiled for
 * Java 22 and exists only in {@code META-INF/versions/22} of the benchmark jar: this Java 17
 * class constructs it reflectively when {@link NativeUdp#isAvailable()}.
 */
final class UdpCeiling {
    private static final String HARNESS = "org.metaroce.bench.loopback.NativeUdpCeilingStream";

    private UdpCeiling() {
    }

    /** @return why the ceiling cannot be measured in this JVM, or null when it can */
    static String unavailabilityReason() {
        return NativeUdp.unavailabilityReason().orElse(null);
    }

    /**
     * @param size message bytes (a multiple of 4096)
     * @param idle how both threads wait
     * @return the connected harness
     * @throws IllegalStateException naming the reason when the native sockets are unavailable
     */
    static StreamHarness open(final int size, final Idle idle) {
        final String reason = unavailabilityReason();
        if (reason != null) {
            throw new IllegalStateException("the UDP ceiling (native) cannot run: " + reason);
        }
        try {
            return (StreamHarness) Class.forName(HARNESS).getConstructor(int.class, Idle.class)
                .newInstance(size, idle);
        } catch (final InvocationTargetException ex) {
            if (ex.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("the UDP ceiling failed to start: " + ex.getCause(), ex.getCause());
        } catch (final ReflectiveOperationException ex) {
            throw new IllegalStateException("the UDP ceiling's harness is missing (the benchmark jar was built "
                + "on a JDK older than 22?): " + ex, ex);
        }
    }
}
