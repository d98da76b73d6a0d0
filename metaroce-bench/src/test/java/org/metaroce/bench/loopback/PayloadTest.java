// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.bench.loopback;

import static org.assertj.core.api.Assertions.assertThat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The self-checks' oracle: it accepts the stamped pattern and names the first difference otherwise. */
class PayloadTest {
    @Test
    void acceptsStampedPatternAndRejectsAnyChange() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[3 * 4096]);
        Payload.fill(b, 4096, 4096);
        Payload.stamp(b, 4096, 4096, 7);
        assertThat(Payload.check(b, 4096, 4096, 7)).isNull();
        assertThat(Payload.check(b, 4096, 4096, 8)).contains("sequence number 7");
        b.putByte(4096 + 100, (byte) (b.getByte(4096 + 100) + 1));
        assertThat(Payload.check(b, 4096, 4096, 7)).contains("byte 100");
        // The pattern of one message is not the continuation of another's.
        Payload.fill(b, 0, 8192);
        Payload.stamp(b, 4096, 4096, 7);
        assertThat(Payload.check(b, 4096, 4096, 7)).contains("differs at byte");
    }

    @Test
    void shortMessagesCarryNoSequenceNumber() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8]);
        Payload.fill(b, 0, 5);
        Payload.stamp(b, 0, 5, 3);
        assertThat(Payload.check(b, 0, 5, 3)).isNull();
        b.putByte(4, (byte) 0);
        assertThat(Payload.check(b, 0, 5, 3)).contains("byte 4");
    }
}
