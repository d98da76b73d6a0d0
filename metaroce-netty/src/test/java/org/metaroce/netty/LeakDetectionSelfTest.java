// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/** Proves that the leak check the other tests rely on really catches a leaked buffer. */
class LeakDetectionSelfTest {
    @Test
    void aBufferThatIsNeverReleasedIsReported() {
        assertThat(RecordingLeakDetector.installed()).isTrue();
        leakOne();
        final List<String> leaks = RecordingLeakDetector.collectLeaks();
        assertThat(leaks).as("the deliberately leaked buffer").isNotEmpty();
        assertThat(leaks.get(0)).contains("LEAK");
    }

    private static void leakOne() {
        final ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        leaked.writeLong(42);
    }
}
