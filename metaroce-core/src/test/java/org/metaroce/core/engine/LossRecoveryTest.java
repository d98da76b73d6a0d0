// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.engine.Scoreboard.DELIVERED;
import static org.metaroce.core.engine.Scoreboard.IN_FLIGHT;
import static org.metaroce.core.engine.Scoreboard.KIND_DATA;
import static org.metaroce.core.engine.Scoreboard.KIND_READ;
import static org.metaroce.core.engine.Scoreboard.LOST;

import org.junit.jupiter.api.Test;

/**
 * Selective repeat and go-back-N on their own, over a bare {@link Scoreboard}: which loss
 * detectors run and what an RTO expiry resends [REL-028, REL-054], and go-back-N's READ_RESPONSEs
 * in PSN order only, requested again once per missing PSN until the episode ends [REL-055].
 */
class LossRecoveryTest {
    private final Scoreboard sb = new Scoreboard(64);
    private final EndpointCounters counters = new EndpointCounters();
    private long seq;

    /** Sends {@code slots} PSNs from {@code first} for work request {@code wqe}. */
    private void send(final int first, final long wqe, final int slots, final byte kind) {
        for (int i = 0; i < slots; i++) {
            sb.assign(first + i, wqe, i, kind);
            sb.sent(first + i, 0, seq++, 0, false);
        }
    }

    private void resend(final int first, final int slots) {
        for (int i = 0; i < slots; i++) {
            sb.sent(first + i, 1_000, seq++, 0, false);
        }
    }

    private byte[] states(final int from, final int to) {
        final byte[] s = new byte[to - from];
        for (int psn = from; psn < to; psn++) {
            s[psn - from] = sb.state(psn);
        }
        return s;
    }

    @Test
    void selectiveRepeatRunsEveryDetectorResendsTheOldestAndTakesResponsesInAnyOrder() {
        final LossRecovery recovery = LossRecovery.of(false, sb, counters);
        assertThat(recovery).isSameAs(LossRecovery.SELECTIVE_REPEAT);
        assertThat(recovery.rack()).isTrue();
        assertThat(recovery.tailProbe()).isTrue();
        assertThat(recovery.timeoutResendsAll()).isFalse();

        send(0, 0, 4, KIND_READ);
        assertThat(recovery.dropsResponse(3, 0, 4)).as("placed by offset, in any order [OPS-022]").isFalse();
        assertThat(states(0, 4)).containsOnly(IN_FLIGHT);
        assertThat(counters.toString()).isEqualTo("EndpointCounters{}");
    }

    @Test
    void goBackNUsesNeitherRackNorTheProbeAndAnExpiryResendsEverything() {
        final LossRecovery recovery = LossRecovery.of(true, sb, counters);
        assertThat(recovery).isInstanceOf(LossRecovery.GoBackN.class);
        assertThat(recovery.rack()).isFalse();
        assertThat(recovery.tailProbe()).isFalse();
        assertThat(recovery.timeoutResendsAll()).isTrue();
        assertThat(LossRecovery.of(true, sb, counters)).as("one per connection: it remembers re-requests")
            .isNotSameAs(recovery);
    }

    @Test
    void goBackNDropsAResponseAfterAMissingOneAndRequestsItsReadAgainOncePerMissingPsn() {
        final LossRecovery recovery = LossRecovery.of(true, sb, counters);
        // READ A takes PSNs 0..3, READ B 4..5; A's first response has arrived.
        send(0, 0, 4, KIND_READ);
        send(4, 1, 2, KIND_READ);
        sb.delivered(0, 0L);

        // Response 2 while 1 is missing: dropped, and A requested again from 1; B stays in flight.
        assertThat(recovery.dropsResponse(2, 0, 6)).isTrue();
        assertThat(states(0, 6)).containsExactly(DELIVERED, LOST, LOST, LOST, IN_FLIGHT, IN_FLIGHT);
        assertThat(sb.lossCause(1)).isEqualTo(EndpointCounter.RETRANSMITS_GO_BACK_N);
        assertThat(counters.get(EndpointCounter.SEQUENCE_GAP)).isEqualTo(1);

        // The re-request left; response 3 of the first request arrives, 1 still missing: dropped,
        // not requested a second time in this episode.
        resend(1, 3);
        assertThat(recovery.dropsResponse(3, 0, 6)).isTrue();
        assertThat(states(1, 4)).containsOnly(IN_FLIGHT);
        assertThat(counters.get(EndpointCounter.SEQUENCE_GAP)).isEqualTo(2);

        // An RTO expiry or progress ends the episode: the same gap is requested again.
        recovery.endEpisode();
        assertThat(recovery.dropsResponse(3, 0, 6)).isTrue();
        assertThat(states(1, 4)).containsOnly(LOST);

        // In order: accepted, and so is a second answer to a delivered slot (the requester counts
        // it as a duplicate).
        resend(1, 3);
        assertThat(recovery.dropsResponse(1, 0, 6)).isFalse();
        sb.delivered(1, 0L);
        assertThat(recovery.dropsResponse(1, 0, 6)).isFalse();

        // A response of B while A's 2 is missing: A is requested again from 2 (a new missing PSN),
        // B is not.
        assertThat(recovery.dropsResponse(4, 0, 6)).isTrue();
        assertThat(states(2, 6)).containsExactly(LOST, LOST, IN_FLIGHT, IN_FLIGHT);
        assertThat(counters.get(EndpointCounter.SEQUENCE_GAP)).isEqualTo(4);
    }

    @Test
    void goBackNOrdersResponsesOnlyBehindReadSlots() {
        final LossRecovery recovery = LossRecovery.of(true, sb, counters);
        // A WRITE packet in flight before a READ: its ACK is not a response, so no gap.
        send(0, 0, 1, KIND_DATA);
        send(1, 1, 2, KIND_READ);
        assertThat(recovery.dropsResponse(1, 0, 3)).isFalse();
        assertThat(states(0, 3)).containsOnly(IN_FLIGHT);
        assertThat(counters.get(EndpointCounter.SEQUENCE_GAP)).isZero();
    }
}
