// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.reliability.ReceiveWindow;
import org.metaroce.core.wire.AckHeader;
import org.metaroce.core.wire.NackHeader;
import org.metaroce.core.wire.Opcode;

/**
 * The responder's acknowledgement writer on its own: every ACK and NACK carries the window's
 * state, the CE count and a fresh Credit [REL-012, REL-013]; what was advertised decides whether
 * a packet used the last credit [REL-014, REL-019], and a refused claim advertises nothing.
 */
class AckWriterTest {
    private static final int BASE = 0xFFFF_FFF0;

    private final ReceiveWindow window = new ReceiveWindow(256, BASE);
    private final ResponseCapture out = new ResponseCapture();
    private final EndpointCounters counters = new EndpointCounters();
    private int grant = 10;
    private int senders;
    private final AckWriter writer = new AckWriter(window, out, (now, size) -> grant, now -> senders, counters);

    private int ack(final int i) {
        return out.offset(i) + Opcode.ACK.ackOffset();
    }

    @Test
    void anAckCarriesTheWindowTheCeCountAndAFreshCredit() {
        writer.start(BASE);
        window.markReceived(BASE);
        window.markReceived(BASE + 2);
        writer.ceMarked();
        writer.ceMarked();

        assertThat(writer.ack(5_000, out, 0, 0, 0, BASE + 2, 77, 4_000, 3, 1)).isTrue();

        assertThat(out.opcode(0)).isEqualTo(Opcode.ACK.value());
        assertThat(out.psn(0)).as("the triggering packet's PSN").isEqualTo(BASE + 2);
        assertThat(AckHeader.cumulativePsn(out.buffer, ack(0))).isEqualTo(BASE + 1);
        assertThat(AckHeader.sackBitmap(out.buffer, ack(0))).isEqualTo(window.sackBitmap()).isNotZero();
        assertThat(AckHeader.ceCount(out.buffer, ack(0))).isEqualTo(2);
        assertThat(AckHeader.credit(out.buffer, ack(0))).isEqualTo(10);
        assertThat(AckHeader.echoedTimestamp(out.buffer, ack(0))).isEqualTo(77);
        assertThat(AckHeader.ackDelay(out.buffer, ack(0))).as("from the trigger's arrival [REL-066]").isEqualTo(1_000);
        assertThat(AckHeader.echoedPathId(out.buffer, ack(0))).isEqualTo(3);
        assertThat(AckHeader.senderCount(out.buffer, ack(0))).as("reserved without SENDER_COUNT [CC-038]").isZero();
        assertThat(counters.get(EndpointCounter.ACKS_OUT)).isEqualTo(1);

        writer.resetCeCount();
        senders = 7;
        writer.ack(5_000, out, 0, 0, 0, BASE + 2, 0, 9_000, 0, 0);
        assertThat(AckHeader.ceCount(out.buffer, ack(1))).isZero();
        assertThat(AckHeader.senderCount(out.buffer, ack(1))).as("the count when it is sent [CC-038]").isEqualTo(7);
        assertThat(AckHeader.ackDelay(out.buffer, ack(1))).as("never negative").isZero();
    }

    @Test
    void theLastCreditIsCountedFromWhatWasAdvertised() {
        writer.start(BASE);
        assertThat(writer.usesLastCredit(BASE + 62)).as("64 before any ACK").isFalse();
        assertThat(writer.usesLastCredit(BASE + 63)).isTrue();

        window.markReceived(BASE);
        grant = 4;
        writer.ack(0, out, 0, 0, 0, BASE, 0, 0, 0, 0);

        assertThat(writer.usesLastCredit(BASE + 3)).isFalse();
        assertThat(writer.usesLastCredit(BASE + 4)).as("cumulative BASE+1 plus credit 4").isTrue();
    }

    @Test
    void aNackCarriesItsReasonAndARefusedClaimAdvertisesNothing() {
        writer.start(BASE);
        grant = 1;
        out.room = 0;
        assertThat(writer.ack(0, out, 5, BASE, 0, BASE, 0, 0, 0, 0)).isFalse();
        assertThat(writer.usesLastCredit(BASE + 62)).as("still the initial credit").isFalse();
        assertThat(counters.get(EndpointCounter.NACKS_OUT)).isZero();

        out.room = 2;
        assertThat(writer.ack(0, out, 5, BASE + 1, 7, BASE + 3, 0, 0, 0, 0)).isTrue();
        final int nack = out.offset(0) + Opcode.NACK.nackOffset();
        assertThat(out.opcode(0)).isEqualTo(Opcode.NACK.value());
        assertThat(NackHeader.reason(out.buffer, nack)).isEqualTo(5);
        assertThat(NackHeader.nackPsn(out.buffer, nack)).isEqualTo(BASE + 1);
        assertThat(NackHeader.rnrTimer(out.buffer, nack)).isEqualTo(7);
        assertThat(counters.get(EndpointCounter.NACKS_OUT)).isEqualTo(1);

        assertThat(writer.cnp(0, out, BASE + 9)).isTrue();
        assertThat(out.opcode(1)).isEqualTo(Opcode.CNP.value());
        assertThat(out.psn(1)).isEqualTo(BASE + 9);
        assertThat(counters.get(EndpointCounter.CNPS_OUT)).isEqualTo(1);
        assertThat(writer.cnp(0, out, BASE + 9)).as("no room left").isFalse();
    }
}
