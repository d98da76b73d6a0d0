// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.conformance.tester.Packet;
import org.metaroce.conformance.tester.PacketBuilder;
import org.metaroce.core.wire.DropReason;
import org.metaroce.core.wire.Flags;
import org.metaroce.core.wire.Opcode;
import org.metaroce.core.wire.PacketValidator;

/**
 * The lower tester's packets, judged by the core validator (an independent reading of section 3):
 * correct by default, and each override breaks exactly the rule it names.
 */
class PacketBuilderTest {
    private static DropReason validate(final byte[] d) {
        return new PacketValidator().validate(new UnsafeBuffer(d), 0, d.length);
    }

    private static PacketBuilder write() {
        return PacketBuilder.of(Opcode.WRITE).destQpn(77).srcQpn(88).psn(-2).flags(Flags.LAST).va(0x1000).rkey(5)
            .payload(new byte[64]);
    }

    @Test
    void defaultPacketsAreValidAndParseBack() {
        final byte[] d = write().msn(3).build();
        assertThat(validate(d)).isNull();
        final Packet p = new Packet(d, null, 0);
        assertThat(p.opcode()).isEqualTo(Opcode.WRITE);
        assertThat(p.psn()).isEqualTo(-2);
        assertThat(p.destQpn()).isEqualTo(77);
        assertThat(p.sourceQpn()).isEqualTo(88);
        assertThat(p.msn()).isEqualTo(3);
        assertThat(p.messageLength()).isEqualTo(64);
        assertThat(p.dmaLength()).isEqualTo(64);
        assertThat(p.integrityValid()).isTrue();
        assertThat(p.lengthConsistent()).isTrue();
        for (final Opcode op : Opcode.values()) {
            final byte[] any = PacketBuilder.of(op).build();
            assertThat(validate(any)).as(op.name()).isNull();
        }
    }

    @Test
    void eachOverrideBreaksTheRuleItNames() {
        assertThat(validate(write().corruptIntegrity().build())).isEqualTo(DropReason.INTEGRITY_CHECK_FAILED);
        assertThat(validate(write().version(2).build())).isEqualTo(DropReason.UNSUPPORTED_VERSION);
        assertThat(validate(write().rawOpcode(0x0A).build())).isEqualTo(DropReason.UNKNOWN_OPCODE);
        assertThat(validate(write().headerLengthWords(13).build())).isEqualTo(DropReason.BAD_HEADER_LENGTH);
        assertThat(validate(write().extraBytes(4).build())).isEqualTo(DropReason.LENGTH_MISMATCH);
        assertThat(validate(write().truncateTo(16).build())).isEqualTo(DropReason.TRUNCATED);
        assertThat(validate(write().messageLength(32).dmaLength(32).build()))
            .isEqualTo(DropReason.BAD_MESSAGE_BOUNDS);
        assertThat(validate(PacketBuilder.of(Opcode.READ_REQUEST).trimmed().build())).isEqualTo(DropReason.BAD_TRIM);
        assertThat(validate(PacketBuilder.of(Opcode.WRITE).trimmed().build())).isNull();
    }

    @Test
    void resealRepairsAnEditedPacket() {
        final byte[] d = write().build();
        d[9] ^= 1;
        assertThat(validate(d)).isEqualTo(DropReason.INTEGRITY_CHECK_FAILED);
        PacketBuilder.reseal(d);
        assertThat(validate(d)).isNull();
    }
}
