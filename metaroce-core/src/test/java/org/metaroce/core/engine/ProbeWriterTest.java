// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;

/** {@link ProbeWriter} on its own: a KEEPALIVE with ACK_REQ, header only, on a path chosen per attempt. */
class ProbeWriterTest {
    private final ResponseCapture sink = new ResponseCapture();
    private final EndpointCounters counters = new EndpointCounters();
    private final CurrentAttributes attributes = new CurrentAttributes(0);
    private int committed;
    private int lastEntropy;
    private final ProbeWriter probes = new ProbeWriter(0x17, attributes, new PacketWriter(),
        (s, offset, length, entropy) -> {
            s.commit(offset, length, 0, entropy);
            committed++;
            lastEntropy = entropy;
        }, counters);

    ProbeWriterTest() {
        attributes.applyPeer(new QpAttributes().pathMtu(1024).destQpn(0x42).remotePeer(3)
            .paths(new int[] {49152, 49153, 49154}), 9, 1);
    }

    @Test
    void writesAHeaderOnlyKeepaliveThatAsksForAnAck() {
        // [CM-027, REL-019, WIRE-065]: the PSN field is what the caller passes, the requester's next PSN.
        assertThat(probes.write(1_000, sink, 0, 77)).isTrue();
        assertThat(committed).isEqualTo(1);
        assertThat(Opcode.of(sink.opcode(0))).isEqualTo(Opcode.KEEPALIVE);
        assertThat(sink.flags(0) & Flags.ACK_REQ).isNotZero();
        assertThat(sink.psn(0)).isEqualTo(77);
        assertThat(sink.payloadLength(0)).isZero();
        assertThat(BaseHeader.destQpn(sink.buffer, sink.offset(0))).isEqualTo(0x42);
        assertThat(counters.get(EndpointCounter.KEEPALIVES_OUT)).isEqualTo(1);
    }

    @Test
    void eachAttemptLeavesItsTurnsPathAndNamesThePathItTakes() {
        // A probe is sent as a retransmission away from path attempt mod paths [MP-014], so that
        // successive probes do not all take a path that may be the one losing them.
        for (int attempt = 0; attempt < 6; attempt++) {
            assertThat(probes.write(1_000 + attempt, sink, attempt, 1)).isTrue();
            final int pathId = BaseHeader.pathId(sink.buffer, sink.offset(attempt));
            assertThat(pathId).isNotEqualTo(attempt % 3);
            assertThat(lastEntropy).isEqualTo(attributes.paths().entropy(pathId));
        }
    }

    @Test
    void aFullSinkSendsAndCountsNothing() {
        sink.room = 0;
        assertThat(probes.write(1_000, sink, 0, 1)).isFalse();
        assertThat(committed).isZero();
        assertThat(counters.get(EndpointCounter.KEEPALIVES_OUT)).isZero();
    }
}
