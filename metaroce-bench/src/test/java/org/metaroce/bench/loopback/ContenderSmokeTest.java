// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each contender of the comparison moves data correctly over loopback: a verified self-check
 * (messages stamped and compared byte for byte where they landed; raw UDP counted), then a short
 * unpaced burst whose delivery is counted, and verified ping-pongs. Not a measurement: nothing
 * here depends on speed (the timeouts are anti-hang guards).
 */
class ContenderSmokeTest {
    /**
     * Three 4 KiB packets (MetaRoCE, raw UDP) or two Aeron fragments; not a power of two, so that
     * a slot or a message that got another's bytes cannot match the pattern by accident.
     */
    private static final int SIZE = 12_288;

    @ParameterizedTest
    @EnumSource(Contender.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void streamDeliversIntactData(final Contender contender) {
        assumeTrue(contender.unavailabilityReason() == null, () -> contender.label + " skipped: "
            + contender.unavailabilityReason());
        try (StreamHarness h = contender.stream(SIZE, 8192, Idle.SPIN, Link.DEFAULT)) {
            h.sendAndAwait(8);
            assertThat(h.deliveredBytes()).isEqualTo(8L * SIZE);
            for (int i = 0; i < 64; i++) {
                h.send();
            }
            // A second verified batch after an unpaced burst: the stream still delivers intact data.
            // Datagrams without a protocol are lost when a receive buffer overflows.
            if (contender != Contender.RAW_UDP && contender != Contender.UDP_CEILING) {
                h.sendAndAwait(8);
                assertThat(h.deliveredBytes()).isEqualTo(80L * SIZE);
            } else {
                assertThat(h.deliveredBytes()).isGreaterThanOrEqualTo(8L * SIZE);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Contender.class, names = {"METAROCE_SEND", "AERON", "RAW_UDP", "TCP"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pingPongEchoesEveryMessage(final Contender contender) {
        try (PingPongHarness h = contender.pingPong(64, 100, Idle.BACKOFF)) {
            for (int i = 0; i < 200; i++) {
                h.roundTrip();
            }
        }
    }
}
