// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.reliability.RttEstimator;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.OwningThread;
import org.metaroce.core.verbs.QpAttributes;
import org.metaroce.core.wire.ConnectHeader;

/** {@link ReceiverShare} on its own, with the endpoint's census as a stub. */
class ReceiverShareTest {
    private final Census census = new Census();
    private final CurrentAttributes attributes = new CurrentAttributes(0);
    private RttEstimator rtt;
    private final ReceiverShare share = new ReceiverShare(census, attributes, () -> rtt);

    private void negotiate(final int capabilities) {
        attributes.applyPeer(new QpAttributes().pathMtu(1024).destQpn(0x42).remotePeer(3)
            .paths(new int[] {49152}).capabilities(capabilities), 9, 1);
    }

    @Test
    void withoutReceiverCreditTheWholeWindowIsGranted() {
        negotiate(0);
        census.senders = 50;
        assertThat(share.creditToGrant(0, 256)).isEqualTo(256);
        assertThat(share.senderCountNegotiated()).isFalse();
        assertThat(share.senderCountToAdvertise(0)).isZero();
    }

    @Test
    void receiverCreditSharesOneBdpAmongTheActiveSenders() {
        // [CC-018]: 100 Gb/s x BASE_RTT_INIT (10 us) / 1024-byte PMTU = 122 packets.
        negotiate(ConnectHeader.CAP_RECEIVER_CREDIT);
        census.senders = 1;
        assertThat(share.creditToGrant(0, 256)).isEqualTo(122);
        assertThat(census.windowNs).isEqualTo(2 * DelayBasedCongestionControl.BASE_RTT_INIT_NS);
        census.senders = 5;
        assertThat(share.creditToGrant(0, 256)).isEqualTo(24);
        census.senders = 1000;
        assertThat(share.creditToGrant(0, 256)).as("at least 1").isEqualTo(1);
        census.senders = 1;
        assertThat(share.creditToGrant(0, 64)).as("at most the window").isEqualTo(64);
    }

    @Test
    void theRequestersMinRttReplacesBaseRttInitOnceSampled() {
        negotiate(ConnectHeader.CAP_RECEIVER_CREDIT | ConnectHeader.CAP_SENDER_COUNT);
        census.senders = 1;
        rtt = new RttEstimator(1_000_000, 1_000, 1_000_000_000);
        assertThat(share.creditToGrant(0, 1024)).as("no sample yet").isEqualTo(122);
        rtt.onSample(20_000);
        assertThat(share.creditToGrant(0, 1024)).isEqualTo(244);
        assertThat(census.windowNs).isEqualTo(40_000);
        census.senders = 7;
        assertThat(share.senderCountToAdvertise(0)).isEqualTo(7);
        assertThat(census.windowNs).isEqualTo(40_000);
    }

    /** The endpoint's census of senders; the rest of the context is not used. */
    private static final class Census implements QueuePairContext {
        int senders = 1;
        long windowNs;

        @Override
        public EndpointConfig config() {
            return new EndpointConfig();
        }

        @Override
        public int activeRequestSenders(final long nowNs, final long windowNs) {
            this.windowNs = windowNs;
            return senders;
        }

        @Override
        public int receivingSenders(final long nowNs, final long windowNs) {
            this.windowNs = windowNs;
            return senders;
        }

        @Override
        public EndpointCounters counters() {
            throw new AssertionError("not used");
        }

        @Override
        public PacketWriter writer() {
            throw new AssertionError("not used");
        }

        @Override
        public EventTrace trace() {
            throw new AssertionError("not used");
        }

        @Override
        public OwningThread owningThread() {
            throw new AssertionError("not used");
        }

        @Override
        public long nowNs() {
            throw new AssertionError("not used");
        }

        @Override
        public int hostOf(final int peerId) {
            throw new AssertionError("not used");
        }

        @Override
        public void senderCountChanged() {
            throw new AssertionError("not used");
        }

        @Override
        public void requestAccepted() {
            throw new AssertionError("not used");
        }

        @Override
        public void firstRequestWaitMayChange() {
            throw new AssertionError("not used");
        }

        @Override
        public void destroyed() {
            throw new AssertionError("not used");
        }

        @Override
        public void touched() {
            throw new AssertionError("not used");
        }

        @Override
        public void raise(final AsyncEventType type) {
            throw new AssertionError("not used");
        }

        @Override
        public void onCompletionQueueOverflow(final CompletionQueue cq) {
            throw new AssertionError("not used");
        }
    }
}
