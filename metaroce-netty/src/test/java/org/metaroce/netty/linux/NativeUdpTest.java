// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The Java 17 entry point answers clearly on every JDK: on JDK 22+ (tests run with the versioned
 * classes on the class path) the native sockets are available; below, the reason names the JDK.
 */
class NativeUdpTest {
    @Test
    void availabilityMatchesTheRunningJdk() {
        final int feature = Runtime.version().feature();
        System.out.println("NativeUdp on JDK " + feature + ": available " + NativeUdp.isAvailable()
            + (NativeUdp.isAvailable() ? "" : ", " + NativeUdp.unavailabilityReason().orElseThrow()));
        if (feature >= NativeUdp.MINIMUM_JDK) {
            assertThat(NativeUdp.unavailabilityReason()).isEmpty();
            assertThat(NativeUdp.isAvailable()).isTrue();
        } else {
            assertThat(NativeUdp.isAvailable()).isFalse();
            assertThat(NativeUdp.unavailabilityReason())
                .hasValue("needs JDK 22 or newer, running " + feature);
        }
    }

    @Test
    void otherSystemsAndArchitecturesAreNamed() {
        assertThat(NativeUdp.findReason("Mac OS X", "aarch64", 25)).isEqualTo("not Linux (os.name is Mac OS X)");
        assertThat(NativeUdp.findReason("Linux", "riscv64", 25))
            .isEqualTo("unsupported architecture riscv64 (x86_64 and aarch64 are supported)");
        assertThat(NativeUdp.findReason("Linux", "amd64", 21)).isEqualTo("needs JDK 22 or newer, running 21");
    }
}
