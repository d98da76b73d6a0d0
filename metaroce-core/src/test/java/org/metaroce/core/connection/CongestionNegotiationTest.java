// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.metaroce.core.connection.CmFixture.CLIENT_PORT;
import static org.metaroce.core.connection.CmFixture.S;
import static org.metaroce.core.connection.CmFixture.SERVER_PORT;
import static org.metaroce.core.connection.CmFixture.SERVICE;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.congestion.CongestionControlAlgorithm;
import org.metaroce.core.congestion.DcqcnCongestionControl;
import org.metaroce.core.congestion.DelayBasedCongestionControl;
import org.metaroce.core.connection.CmFixture.Node;
import org.metaroce.core.engine.AsyncEventType;
import org.metaroce.core.engine.AsyncEvents;
import org.metaroce.core.engine.EndpointCounter;
import org.metaroce.core.testwire.LinkProfile;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.ConnectHeader;

/** The connection manager turns negotiated capabilities and the chosen algorithm into QP attributes. */
class CongestionNegotiationTest {
    private static List<AsyncEventType> drain(final AsyncEvents events) {
        final List<AsyncEventType> types = new ArrayList<>();
        while (!events.isEmpty()) {
            types.add(events.peekType());
            events.remove();
        }
        return types;
    }

    @Test
    @DisplayName("[CM-019] [CM-007] [CC-008] capabilities become the QP's CAPABILITIES; CC_ALGORITHM falls back without its capability")
    void negotiatedCapabilitiesSelectTheAlgorithms() {
        final CmFixture f = new CmFixture(31, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        // The server asks for receiver credit but does not offer the capability: it falls back.
        server.cm.listen(SERVICE, server.listenParams()
            .capabilities(ConnectHeader.CAP_ECN | ConnectHeader.CAP_GO_BACK_N)
            .congestionControl(CongestionControlAlgorithm.RECEIVER_CREDIT));
        server.onRequest = e -> assertThat(server.cm.accept(e, null)).isTrue();
        final Connection c = client.cm.connect(client.connectParams(server)
            .capabilities(ConnectHeader.CAP_ECN | ConnectHeader.CAP_GO_BACK_N | ConnectHeader.CAP_RECEIVER_CREDIT)
            .congestionControl(CongestionControlAlgorithm.DCQCN));
        assertThat(f.runUntil(() -> server.count(CmEventType.ESTABLISHED) > 0
            && client.count(CmEventType.ESTABLISHED) > 0, S)).isTrue();
        final Connection s = server.first(CmEventType.CONNECT_REQUEST).connection();

        final int negotiated = ConnectHeader.CAP_ECN | ConnectHeader.CAP_GO_BACK_N;
        assertThat(c.queuePair().capabilities()).isEqualTo(negotiated);
        assertThat(s.queuePair().capabilities()).isEqualTo(negotiated);
        assertThat(c.queuePair().isGoBackN()).isTrue();
        assertThat(c.queuePair().congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DCQCN);
        assertThat(c.queuePair().congestionControl()).isInstanceOf(DcqcnCongestionControl.class);
        assertThat(s.queuePair().requestedCongestionControlAlgorithm())
            .isEqualTo(CongestionControlAlgorithm.RECEIVER_CREDIT);
        assertThat(s.queuePair().congestionControlAlgorithm()).isEqualTo(CongestionControlAlgorithm.DEFAULT);
        assertThat(s.queuePair().congestionControl()).isInstanceOf(DelayBasedCongestionControl.class);
        assertThat(drain(server.endpoint.asyncEvents())).contains(AsyncEventType.CC_FALLBACK);
        assertThat(server.endpoint.counters().get(EndpointCounter.CC_FALLBACKS)).isEqualTo(1);
        assertThat(drain(client.endpoint.asyncEvents())).doesNotContain(AsyncEventType.CC_FALLBACK);

        // Traffic flows over the negotiated baseline (go-back-N, DCQCN pacing).
        client.mr.buffer().setMemory(0, 65536, (byte) 0x5a);
        c.queuePair().postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(client.address(0), 65536, client.mr.lkey()).remoteAddr(server.address(0))
            .rkey(server.mr.rkey()));
        assertThat(f.runUntil(() -> client.sendCompletions.size() == 1, S)).isTrue();
        assertThat(server.mr.buffer().getByte(65535)).isEqualTo((byte) 0x5a);
    }

    @Test
    @DisplayName("[CM-019] [REL-071] ATTACHED_ACK is offered by default and in effect only when both sides offer it")
    void attachedAckIsOfferedByDefaultAndInEffectOnlyWhenBothOfferIt() {
        for (final boolean serverOffers : new boolean[] {true, false}) {
            final CmFixture f = new CmFixture(33, LinkProfile.perfect());
            final Node server = f.node(SERVER_PORT, new CmConfig());
            final Node client = f.node(CLIENT_PORT, new CmConfig());
            server.endpoint.config().attachedAck(serverOffers);
            server.cm.listen(SERVICE, server.listenParams());
            server.onRequest = e -> assertThat(server.cm.accept(e, null)).isTrue();
            final Connection c = client.cm.connect(client.connectParams(server));
            assertThat(f.runUntil(() -> server.count(CmEventType.ESTABLISHED) > 0
                && client.count(CmEventType.ESTABLISHED) > 0, S)).isTrue();
            final Connection s = server.first(CmEventType.CONNECT_REQUEST).connection();
            final int expected = serverOffers ? ConnectHeader.CAP_ATTACHED_ACK : 0;
            assertThat(c.queuePair().capabilities()).as("server offers: %s", serverOffers).isEqualTo(expected);
            assertThat(s.queuePair().capabilities()).as("server offers: %s", serverOffers).isEqualTo(expected);
        }
    }

    @Test
    @DisplayName("[CC-022] without CC_ALGORITHM the endpoint's configured algorithm runs; CONGESTION_WINDOW sizes FIXED")
    void congestionWindowParameterSizesTheFixedWindow() {
        final CmFixture f = new CmFixture(32, LinkProfile.perfect());
        final Node server = f.node(SERVER_PORT, new CmConfig());
        final Node client = f.node(CLIENT_PORT, new CmConfig());
        server.cm.listen(SERVICE, server.listenParams());
        server.onRequest = e -> assertThat(server.cm.accept(e, null)).isTrue();
        final Connection c = client.cm.connect(client.connectParams(server)
            .congestionControl(CongestionControlAlgorithm.FIXED).congestionWindowPackets(7));
        assertThat(f.runUntil(() -> client.count(CmEventType.ESTABLISHED) > 0, S)).isTrue();
        assertThat(c.queuePair().congestionControl().windowPackets()).isEqualTo(7);
        assertThat(c.queuePair().capabilities()).as("both sides offer only the default, ATTACHED_ACK (v1.0.15)")
            .isEqualTo(ConnectHeader.CAP_ATTACHED_ACK);
        assertThat(c.queuePair().isGoBackN()).isFalse();
    }
}
