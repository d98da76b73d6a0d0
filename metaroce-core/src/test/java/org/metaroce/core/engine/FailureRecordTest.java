// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FailureRecordTest {
    @Test
    void theFirstReasonIsKeptAsTheRootCause() {
        final FailureRecord record = new FailureRecord();
        assertThat(record.reason()).isNull();
        record.reason("peer dead");
        record.reason("its completion queue overflowed");
        assertThat(record.reason()).isEqualTo("peer dead");
    }

    @Test
    void theTraceIsEmptyUntilCapturedAndThenACopyOfThisQueuePairsLastEvents() {
        final FailureRecord record = new FailureRecord();
        final EventTrace ring = new EventTrace(64);
        ring.record(1_000, 5, TraceEvent.TAIL_PROBE, 1, 1, 0, 0);
        assertThat(record.trace()).isEmpty();
        for (int i = 0; i < 30; i++) {
            ring.record(2_000 + i * 1_000L, i % 2 == 0 ? 5 : 6, TraceEvent.TAIL_PROBE, i, i, 0, 0);
        }
        record.capture(ring, 5, 40_000);
        final java.util.List<String> lines = record.trace();
        // 16 events of QP 5 in all (the first and the 15 even ones), fewer than TRACE_EVENTS.
        assertThat(lines).hasSize(16).isEqualTo(ring.last(5, FailureRecord.TRACE_EVENTS, 40_000));
        // A copy: what the ring records after the failure does not change the lines.
        for (int i = 0; i < 64; i++) {
            ring.record(50_000 + i, 5, TraceEvent.TAIL_PROBE, 99, 99, 0, 0);
        }
        final FailureRecord other = new FailureRecord();
        other.capture(ring, 7, 0);
        assertThat(other.trace()).isEmpty();
        assertThat(record.trace()).isSameAs(lines);
        assertThat(lines.get(0)).startsWith("-0.039 ms QP 0x000005 TAIL_PROBE psn 1");
    }

    @Test
    void onlyTheLastTraceEventsAreKept() {
        final FailureRecord record = new FailureRecord();
        final EventTrace ring = new EventTrace(64);
        for (int i = 0; i < 40; i++) {
            ring.record(i * 1_000L, 5, TraceEvent.TAIL_PROBE, i, i, 0, 0);
        }
        record.capture(ring, 5, 40_000);
        assertThat(record.trace()).hasSize(FailureRecord.TRACE_EVENTS);
        assertThat(record.trace().get(0)).contains("psn " + (40 - FailureRecord.TRACE_EVENTS) + " ");
    }
}
