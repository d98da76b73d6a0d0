// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.connection.CapturingSink.Sent;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.core.engine.PeerDirectory;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.AccessFlags;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.core.verbs.QpState;
import org.metaroce.core.wire.BaseHeader;
import org.metaroce.core.wire.ConnectHeader;
import org.metaroce.core.wire.Opcode;

/**
 * The server's side of [CM-010] driven packet by packet: what it answers, what state it keeps, and
 * what a flood of spoofed requests costs it.
 */
class StatelessServerTest {
    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;
    private static final long T0 = 1000 * S;
    private static final long SERVICE = 20_000;
    private static final int PORT = 4796;
    private static final int CLIENT = 7;
    private static final int CLIENT_QPN = 1110;

    /** A peer directory that counts pins, to show that only verified peers are pinned. */
    static final class CountingDirectory implements PeerDirectory {
        int pins;
        int unpins;

        @Override
        public int hostOf(final int peerId) {
            return peerId;
        }

        @Override
        public int pin(final int peerId) {
            pins++;
            return peerId;
        }

        @Override
        public void unpin(final int peerId) {
            unpins++;
        }
    }

    /** One endpoint with a connection manager, fed and polled by hand. */
    static final class Harness {
        final Endpoint endpoint;
        final ConnectionManager cm;
        final CountingDirectory directory = new CountingDirectory();
        final CapturingSink sink = new CapturingSink();
        final List<CmEvent> events = new ArrayList<>();
        final ProtectionDomain pd;

        Harness(final long seed, final CmConfig config) {
            endpoint = new Endpoint(new EndpointConfig(), new SeededRandomSource(seed));
            cm = new ConnectionManager(endpoint, PORT, directory, config);
            cm.eventHandler(events::add);
            pd = endpoint.allocateProtectionDomain();
        }

        Listener listen() {
            return cm.listen(SERVICE, new ListenParams().resources(pd, endpoint.createCompletionQueue(64),
                endpoint.createCompletionQueue(64), QueuePairCapabilities.defaults()).accessFlags(AccessFlags.ALL)
                .pathMtu(4096).paths(50_000, 50_001, 50_002));
        }

        List<Sent> exchange(final long now, final DirectBuffer packet, final int peer) {
            endpoint.onDatagram(now, packet, 0, packet.capacity(), peer, 0);
            endpoint.poll(now, sink);
            return sink.take();
        }

        List<Sent> poll(final long now) {
            endpoint.poll(now, sink);
            return sink.take();
        }

        /** First request, challenge, second request: returns the answers to the second. */
        List<Sent> handshake(final long now, final int peer, final int qpn, final long txid, final byte[] data) {
            final List<Sent> challenge = exchange(now, Packets.request(qpn, SERVICE, txid, null, data), peer);
            assertThat(challenge).hasSize(1);
            return exchange(now, Packets.request(qpn, SERVICE, txid, Packets.cookieOf(challenge.get(0).packet()), data),
                peer);
        }

        void assertNoState() {
            assertThat(cm.handshakeTableSize()).isZero();
            assertThat(cm.connectionCount()).isZero();
            assertThat(endpoint.queuePairCount()).isZero();
            assertThat(events).isEmpty();
            assertThat(directory.pins).isZero();
        }
    }

    @Test
    void challengeEchoesTheRequestFromTheEndpointPortAndKeepsNoState() {
        final Harness h = new Harness(1, new CmConfig());
        h.listen();
        final UnsafeBuffer request = Packets.request(CLIENT_QPN, SERVICE, 0x0123_4567_89AB_CDEFL, null, new byte[200]);
        final List<Sent> out = h.exchange(T0, request, CLIENT);
        assertThat(out).hasSize(1);
        final Sent challenge = out.get(0);
        final UnsafeBuffer p = challenge.packet();
        assertThat(challenge.opcode()).isEqualTo(Opcode.CONNECT_CHALLENGE.value());
        assertThat(challenge.peerId()).isEqualTo(CLIENT);
        assertThat(challenge.entropy()).isEqualTo(PORT); // [ENC-003]
        assertThat(challenge.length()).isEqualTo(76).isLessThanOrEqualTo(request.capacity()); // [SEC-005]
        // [CM-001, CM-002]
        assertThat(BaseHeader.destQpn(p, 0)).isEqualTo(CLIENT_QPN);
        assertThat(BaseHeader.sourceQpn(p, 0)).isZero();
        assertThat(BaseHeader.psn(p, 0)).isZero();
        assertThat(BaseHeader.pathId(p, 0)).isZero();
        assertThat(BaseHeader.payloadLength(p, 0)).isZero();
        assertThat(ConnectHeader.serviceId(p, 24)).isEqualTo(SERVICE);
        assertThat(ConnectHeader.transactionId(p, 24)).isEqualTo(0x0123_4567_89AB_CDEFL);
        assertThat(ConnectHeader.initialPsn(p, 24)).isZero();
        assertThat(ConnectHeader.pathMtu(p, 24)).isEqualTo(1024);
        assertThat(ConnectHeader.pathCount(p, 24)).isEqualTo(2);
        assertThat(ConnectHeader.reason(p, 24)).isZero();
        assertThat(CookieJar.isZero(p, 24 + ConnectHeader.COOKIE_OFFSET)).isFalse();
        assertThat(p.getInt(24 + ConnectHeader.COOKIE_OFFSET, java.nio.ByteOrder.BIG_ENDIAN))
            .isEqualTo(CookieJar.seconds(T0));
        h.assertNoState();
        assertThat(h.cm.counters().get(CmCounter.CHALLENGES_SENT)).isEqualTo(1);
    }

    @Test
    void verifiedRequestIsDeliveredOnceAndDuplicatesRepeatTheAnswer() {
        // [CM-012] table lookup, one entry, one CONNECT_REQUEST event with the private data, QP to RTR, CONNECT_REPLY; [CM-021] nothing delivered before the cookie is verified.
        final Harness h = new Harness(2, new CmConfig());
        h.listen();
        final byte[] data = {1, 2, 3, 4};
        final UnsafeBuffer first = Packets.request(CLIENT_QPN, SERVICE, 99, null, data);
        final UnsafeBuffer cookie = Packets.cookieOf(h.exchange(T0, first, CLIENT).get(0).packet());
        assertThat(h.events).as("no event, no private data, for a request without a verified cookie [CM-021]")
            .isEmpty();
        final UnsafeBuffer second = Packets.request(CLIENT_QPN, SERVICE, 99, cookie, data);
        assertThat(h.exchange(T0 + MS, second, CLIENT)).isEmpty();
        assertThat(h.events).hasSize(1);
        final CmEvent event = h.events.get(0);
        assertThat(event.type()).isEqualTo(CmEventType.CONNECT_REQUEST);
        assertThat(event.privateData()).isEqualTo(data);
        assertThat(event.listener().serviceId()).isEqualTo(SERVICE);
        final Connection c = event.connection();
        assertThat(c.state()).isEqualTo(ConnectionState.REQUEST_PENDING);
        assertThat(c.remoteQpn()).isEqualTo(CLIENT_QPN);
        assertThat(h.cm.handshakeTableSize()).isEqualTo(1);
        assertThat(h.endpoint.queuePairCount()).as("no QP before accept").isZero();
        assertThat(h.directory.pins).isEqualTo(1);

        // Duplicate while the application has not decided: ignored [CM-025].
        assertThat(h.exchange(T0 + 2 * MS, second, CLIENT)).isEmpty();
        assertThat(h.events).hasSize(1);

        assertThat(h.cm.accept(event, new byte[] {9})).isTrue();
        final List<Sent> reply = h.poll(T0 + 3 * MS);
        assertThat(reply).hasSize(1);
        final UnsafeBuffer r = reply.get(0).packet();
        assertThat(reply.get(0).opcode()).isEqualTo(Opcode.CONNECT_REPLY.value());
        assertThat(reply.get(0).entropy()).isEqualTo(PORT);
        assertThat(Packets.destQpn(r)).isEqualTo(CLIENT_QPN);
        assertThat(Packets.sourceQpn(r)).isEqualTo(c.localQpn()).isNotZero();
        assertThat(Packets.initialPsn(r)).isEqualTo(c.localInitialPsn());
        assertThat(ConnectHeader.pathMtu(r, 24)).isEqualTo(1024);
        assertThat(ConnectHeader.pathCount(r, 24)).isEqualTo(2);
        assertThat(BaseHeader.payloadLength(r, 0)).isEqualTo(1);
        assertThat(c.queuePair().state()).isEqualTo(QpState.RTR);

        // Duplicate after accept: the same reply again, no new QP, no new event.
        final List<Sent> again = h.exchange(T0 + 4 * MS, second, CLIENT);
        assertThat(again).hasSize(1);
        assertThat(again.get(0).opcode()).isEqualTo(Opcode.CONNECT_REPLY.value());
        assertThat(Packets.sourceQpn(again.get(0).packet())).isEqualTo(c.localQpn());
        assertThat(h.endpoint.queuePairCount()).isEqualTo(1);
        assertThat(h.events).hasSize(1);
        // A duplicate first request only earns a new challenge.
        final List<Sent> challenge = h.exchange(T0 + 5 * MS, first, CLIENT);
        assertThat(challenge).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_CHALLENGE.value());

        // READY_TO_USE completes it.
        final UnsafeBuffer rtu = Packets.cm(Opcode.READY_TO_USE, c.localQpn(), CLIENT_QPN, SERVICE, 99, 0, 1024, 0, 0,
            0, 2, 0, null, null);
        assertThat(h.exchange(T0 + 6 * MS, rtu, CLIENT)).isEmpty();
        assertThat(c.state()).isEqualTo(ConnectionState.ESTABLISHED);
        assertThat(c.queuePair().state()).isEqualTo(QpState.RTS);
        assertThat(h.events).extracting(CmEvent::type)
            .containsExactly(CmEventType.CONNECT_REQUEST, CmEventType.ESTABLISHED);
        // Accepting twice is a programming error.
        assertThatThrownBy(() -> h.cm.accept(c, null)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void forgedCookiesAreChallengedAndCreateNoState() {
        final Harness h = new Harness(3, new CmConfig());
        h.listen();
        final SeededRandomSource random = new SeededRandomSource(3);
        final UnsafeBuffer forged = new UnsafeBuffer(new byte[20]);
        for (int i = 0; i < 100; i++) {
            forged.putLong(0, random.nextLong());
            forged.putLong(8, random.nextLong());
            forged.putInt(16, random.nextInt());
            final List<Sent> out =
                h.exchange(T0 + i * MS, Packets.request(CLIENT_QPN, SERVICE, i, forged, null), CLIENT);
            assertThat(out).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_CHALLENGE.value());
        }
        // A genuine cookie does not verify for another address, QPN or Transaction ID.
        final UnsafeBuffer genuine = Packets.cookieOf(
            h.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 5, null, null), CLIENT).get(0).packet());
        h.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 5, genuine, null), CLIENT + 1);
        h.exchange(T0 + S, Packets.request(CLIENT_QPN + 1, SERVICE, 5, genuine, null), CLIENT);
        h.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 6, genuine, null), CLIENT);
        assertThat(h.cm.counters().get(CmCounter.BAD_COOKIE)).isEqualTo(103);
        h.assertNoState();
        // ... and does for its own.
        h.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 5, genuine, null), CLIENT);
        assertThat(h.events).hasSize(1);
    }

    @Test
    void spoofedFloodFromManyAddressesAllocatesNoStateAndAnswersOncePerRequestAtMost() {
        final Harness h = new Harness(4, new CmConfig());
        h.listen();
        final SeededRandomSource random = new SeededRandomSource(4);
        final UnsafeBuffer forged = new UnsafeBuffer(new byte[20]);
        int answers = 0;
        final int requests = 10_000;
        for (int i = 0; i < requests; i++) {
            final int peer = 1000 + i;
            final DirectBuffer cookie;
            if ((i & 1) == 0) {
                cookie = null;
            } else {
                forged.putLong(0, random.nextLong());
                forged.putLong(8, random.nextLong());
                cookie = forged;
            }
            final UnsafeBuffer request = Packets.request(random.nextInt() & 0xFF_FFFF | 1, SERVICE, random.nextLong(),
                cookie, new byte[16]);
            final long now = T0 + i * 10_000L; // 100,000 requests per second
            h.endpoint.onDatagram(now, request, 0, request.capacity(), peer, 0);
            if (i % 500 == 499) {
                for (final Sent s : h.poll(now)) {
                    answers++;
                    assertThat(s.opcode()).isEqualTo(Opcode.CONNECT_CHALLENGE.value());
                    assertThat(s.length()).isLessThanOrEqualTo(request.capacity());
                    assertThat(s.peerId()).isBetween(1000, 1000 + i);
                }
            }
            // No per-peer state at any point [CM-011].
            assertThat(h.cm.handshakeTableSize()).isZero();
        }
        for (final Sent s : h.poll(T0 + S)) {
            answers++;
            assertThat(s.opcode()).isEqualTo(Opcode.CONNECT_CHALLENGE.value());
        }
        h.assertNoState();
        assertThat(answers).isLessThanOrEqualTo(requests);
        assertThat(h.cm.counters().get(CmCounter.BAD_COOKIE)).isEqualTo(requests / 2);
        assertThat(h.cm.counters().get(CmCounter.CHALLENGES_SENT)
            + h.cm.counters().get(CmCounter.ANSWERS_RATE_LIMITED)).isEqualTo(requests);
        System.out.println("flood from " + requests + " addresses: " + answers + " challenges, " + h.cm.counters());
    }

    @Test
    void floodFromOneAddressIsRateLimited() {
        final Harness h = new Harness(5, new CmConfig());
        h.listen();
        int answers = 0;
        for (int i = 0; i < 10_000; i++) {
            final long now = T0 + i * 100_000L; // 10,000 per second for one second
            h.endpoint.onDatagram(now, Packets.request(CLIENT_QPN, SERVICE, i, null, null), 0, 76, CLIENT, 0);
            if (i % 100 == 99) {
                answers += h.poll(now).size();
            }
        }
        answers += h.poll(T0 + S).size();
        // [SEC-008]: 1000 per second and source, with a burst of a tenth of a second.
        assertThat(answers).isBetween(1000, 1101);
        assertThat(h.cm.counters().get(CmCounter.ANSWERS_RATE_LIMITED)).isEqualTo(10_000 - answers);
        h.assertNoState();
        // Other sources are not affected.
        assertThat(h.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 1, null, null), CLIENT + 5000)).hasSize(1);
    }

    @Test
    void staleCookieIsRejectedWithoutState() {
        final Harness h = new Harness(6, new CmConfig());
        h.listen();
        final long t = T0 + 500 * MS;
        final UnsafeBuffer cookie = Packets.cookieOf(
            h.exchange(t, Packets.request(CLIENT_QPN, SERVICE, 1, null, null), CLIENT).get(0).packet());
        // Still fresh at 8 s of cookie age [CM-016]...
        h.exchange(t + 8 * S, Packets.request(CLIENT_QPN, SERVICE, 1, cookie, null), CLIENT);
        assertThat(h.events).hasSize(1);
        // ... stale at 9 s: CONNECT_REJECT STALE_COOKIE, no private data, no state [CM-010 step 5].
        final UnsafeBuffer cookie2 = Packets.cookieOf(
            h.exchange(t, Packets.request(CLIENT_QPN, SERVICE, 2, null, null), CLIENT).get(0).packet());
        final List<Sent> out = h.exchange(t + 9 * S, Packets.request(CLIENT_QPN, SERVICE, 2, cookie2, new byte[50]),
            CLIENT);
        assertThat(out).hasSize(1);
        assertThat(out.get(0).opcode()).isEqualTo(Opcode.CONNECT_REJECT.value());
        assertThat(Packets.reason(out.get(0).packet())).isEqualTo(CmReason.STALE_COOKIE);
        assertThat(BaseHeader.payloadLength(out.get(0).packet(), 0)).isZero();
        assertThat(h.cm.counters().get(CmCounter.STALE_COOKIE)).isEqualTo(1);
        assertThat(h.cm.handshakeTableSize()).isEqualTo(1);
        assertThat(h.events).hasSize(1);
    }

    @Test
    void rotationKeepsThePreviousSecretForOneLifetime() {
        // [SEC-013] cookie secrets are rotated [CM-017].
        final Harness h = new Harness(7, new CmConfig().secretRotationNs(8 * S));
        h.listen();
        final long t = T0 + 500 * MS; // the secret starts here
        final UnsafeBuffer c1 = Packets.cookieOf(
            h.exchange(t, Packets.request(CLIENT_QPN, SERVICE, 1, null, null), CLIENT).get(0).packet());
        final UnsafeBuffer c2 = Packets.cookieOf(
            h.exchange(t + 7900 * MS, Packets.request(CLIENT_QPN, SERVICE, 2, null, null), CLIENT).get(0).packet());
        // The secret rotates at t + 8 s; a cookie of the previous secret still verifies.
        h.poll(t + 8 * S);
        assertThat(h.cm.secretRotations()).isEqualTo(1);
        h.exchange(t + 8100 * MS, Packets.request(CLIENT_QPN, SERVICE, 1, c1, null), CLIENT);
        assertThat(h.events).hasSize(1);
        // Two rotations later the old secret is gone: a cookie that is still fresh no longer verifies.
        h.poll(t + 16 * S);
        assertThat(h.cm.secretRotations()).isEqualTo(2);
        final List<Sent> out = h.exchange(t + 16 * S, Packets.request(CLIENT_QPN, SERVICE, 2, c2, null), CLIENT);
        assertThat(out).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_CHALLENGE.value());
        assertThat(h.cm.counters().get(CmCounter.BAD_COOKIE)).isEqualTo(1);
        assertThat(h.events).hasSize(1);
    }

    @Test
    void restartedServerRechallengesOldCookies() {
        // [SEC-013] each server draws its own random secret: a restarted one verifies none of the old cookies.
        final Harness before = new Harness(8, new CmConfig());
        before.listen();
        final UnsafeBuffer cookie = Packets.cookieOf(
            before.exchange(T0, Packets.request(CLIENT_QPN, SERVICE, 1, null, null), CLIENT).get(0).packet());
        final Harness after = new Harness(9, new CmConfig()); // new secret [CM-017]
        after.listen();
        final List<Sent> out = after.exchange(T0 + S, Packets.request(CLIENT_QPN, SERVICE, 1, cookie, null), CLIENT);
        assertThat(out).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_CHALLENGE.value());
        assertThat(after.cm.counters().get(CmCounter.BAD_COOKIE)).isEqualTo(1);
        after.assertNoState();
    }

    @Test
    void statelessRejectsForBadParametersAndUnknownServices() {
        final Harness h = new Harness(10, new CmConfig());
        h.listen();
        final byte[] data = new byte[100];
        final List<UnsafeBuffer> bad = List.of(
            Packets.cm(Opcode.CONNECT_REQUEST, 0, CLIENT_QPN, SERVICE, 1, 0, 1000, 0, 1, 1, 1, 0, null, data),
            Packets.cm(Opcode.CONNECT_REQUEST, 0, CLIENT_QPN, SERVICE, 1, 0, 1024, 0, 1, 1, 0, 0, null, data),
            Packets.cm(Opcode.CONNECT_REQUEST, 0, 0, SERVICE, 1, 0, 1024, 0, 1, 1, 1, 0, null, data));
        for (final UnsafeBuffer request : bad) {
            final List<Sent> out = h.exchange(T0, request, CLIENT);
            assertThat(out).hasSize(1);
            assertThat(out.get(0).opcode()).isEqualTo(Opcode.CONNECT_REJECT.value());
            assertThat(Packets.reason(out.get(0).packet())).isEqualTo(CmReason.BAD_PARAMETERS);
            assertThat(out.get(0).length()).isEqualTo(76);
        }
        final List<Sent> out = h.exchange(T0, Packets.request(CLIENT_QPN, SERVICE + 1, 1, null, data), CLIENT);
        assertThat(Packets.reason(out.get(0).packet())).isEqualTo(CmReason.NO_LISTENER);
        assertThat(Packets.destQpn(out.get(0).packet())).isEqualTo(CLIENT_QPN);
        // Other opcodes to QPN 0 and packets to unknown QPNs are dropped unanswered.
        assertThat(h.exchange(T0, Packets.cm(Opcode.READY_TO_USE, 0, CLIENT_QPN, SERVICE, 1, 0, 1024, 0, 1, 1, 1, 0,
            null, null), CLIENT)).isEmpty();
        assertThat(h.exchange(T0, Packets.cm(Opcode.DISCONNECT_REQUEST, 4242, CLIENT_QPN, SERVICE, 1, 0, 1024, 0, 1, 1,
            1, 0, null, null), CLIENT)).isEmpty();
        assertThat(h.cm.counters().get(CmCounter.CM_UNEXPECTED)).isEqualTo(1);
        assertThat(h.cm.counters().get(CmCounter.UNKNOWN_QPN)).isEqualTo(1);
        h.assertNoState();
    }

    /**
     * [WIRE-070, QP-024, CM-003]: a CONNECT_REQUEST must go to QPN 0. To a QPN nobody knows it is
     * dropped as UNKNOWN_QPN (step 10 of 4.8), to the QPN of a connection as CM_UNEXPECTED; neither
     * is answered nor creates state.
     */
    @Test
    void connectRequestToANonZeroQpnIsUnknownOrUnexpected() {
        final Harness h = new Harness(12, new CmConfig());
        h.listen();
        assertThat(h.exchange(T0, Packets.cm(Opcode.CONNECT_REQUEST, 4242, CLIENT_QPN, SERVICE, 1, 0, 1024, 0, 1, 1, 1,
            0, null, null), CLIENT)).isEmpty();
        assertThat(h.cm.counters().get(CmCounter.UNKNOWN_QPN)).isEqualTo(1);
        assertThat(h.cm.counters().get(CmCounter.CM_UNEXPECTED)).isZero();
        h.assertNoState();

        h.cm.eventHandler(e -> h.cm.accept(e, null));
        final List<Sent> reply = h.handshake(T0, CLIENT, CLIENT_QPN, 2, null);
        assertThat(reply).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_REPLY.value());
        final int serverQpn = Packets.sourceQpn(reply.get(0).packet());
        assertThat(h.exchange(T0, Packets.cm(Opcode.CONNECT_REQUEST, serverQpn, CLIENT_QPN, SERVICE, 2, 0, 1024, 0, 1,
            1, 1, 0, null, null), CLIENT)).isEmpty();
        assertThat(h.cm.counters().get(CmCounter.CM_UNEXPECTED)).isEqualTo(1);
        assertThat(h.cm.counters().get(CmCounter.UNKNOWN_QPN)).isEqualTo(1);
        assertThat(h.endpoint.queuePairCount()).isEqualTo(1);
    }

    /**
     * [CM-040]: one client host gets at most its share of the handshake table; beyond it its
     * verified requests are rejected NO_RESOURCES while other hosts still get in, and its share
     * comes back as its entries expire.
     */
    @Test
    void oneHostGetsABoundedShareOfTheHandshakeTable() {
        final Harness h = new Harness(13, new CmConfig().maxHandshakesPerHost(2));
        h.listen();
        h.cm.eventHandler(e -> {
            h.events.add(e);
            h.cm.reject(e, null);
        });
        final List<Sent> first = h.handshake(T0, CLIENT, CLIENT_QPN, 1, null);
        final List<Sent> second = h.handshake(T0, CLIENT, CLIENT_QPN + 1, 2, null);
        assertThat(first).extracting(Sent::opcode).containsExactly(Opcode.CONNECT_REJECT.value());
        assertThat(Packets.reason(second.get(0).packet())).isEqualTo(CmReason.REJECTED_BY_APPLICATION);
        final List<Sent> third = h.handshake(T0, CLIENT, CLIENT_QPN + 2, 3, null);
        assertThat(third).hasSize(1);
        assertThat(Packets.reason(third.get(0).packet())).isEqualTo(CmReason.NO_RESOURCES);
        assertThat(h.cm.counters().get(CmCounter.HOST_HANDSHAKES_FULL)).isEqualTo(1);
        assertThat(h.events).hasSize(2);
        // Another host is not affected.
        assertThat(Packets.reason(h.handshake(T0, CLIENT + 1, CLIENT_QPN, 4, null).get(0).packet()))
            .isEqualTo(CmReason.REJECTED_BY_APPLICATION);
        assertThat(h.cm.handshakeTableSize()).isEqualTo(3);
        // Once its entries expire (COOKIE_LIFETIME + 2 s), the host gets in again.
        h.poll(T0 + 11 * S);
        assertThat(h.cm.handshakeTableSize()).isZero();
        assertThat(Packets.reason(h.handshake(T0 + 11 * S, CLIENT, CLIENT_QPN + 3, 5, null).get(0).packet()))
            .isEqualTo(CmReason.REJECTED_BY_APPLICATION);
        assertThat(h.events).hasSize(4);
    }

    @Test
    void fullHandshakeTableRejectsWithNoResources() {
        final Harness h = new Harness(11, new CmConfig().maxHandshakes(2));
        h.listen();
        assertThat(h.handshake(T0, CLIENT, CLIENT_QPN, 1, null)).isEmpty();
        assertThat(h.handshake(T0, CLIENT + 1, CLIENT_QPN, 2, null)).isEmpty();
        final List<Sent> out = h.handshake(T0, CLIENT + 2, CLIENT_QPN, 3, null);
        assertThat(out).hasSize(1);
        assertThat(Packets.reason(out.get(0).packet())).isEqualTo(CmReason.NO_RESOURCES);
        assertThat(h.cm.counters().get(CmCounter.HANDSHAKE_TABLE_FULL)).isEqualTo(1);
        assertThat(h.cm.handshakeTableSize()).isEqualTo(2);
        assertThat(h.events).hasSize(2);
        // Entries expire once no duplicate with a fresh cookie can arrive any more.
        h.cm.reject(h.events.get(0), null);
        h.cm.reject(h.events.get(1), null);
        h.poll(T0 + 11 * S);
        assertThat(h.cm.handshakeTableSize()).isZero();
        assertThat(h.directory.unpins).isEqualTo(h.directory.pins);
    }

    @Test
    void restartedClientTearsDownItsOldConnection() {
        final Harness h = new Harness(12, new CmConfig());
        h.listen();
        h.cm.eventHandler(e -> {
            h.events.add(e);
            if (e.type() == CmEventType.CONNECT_REQUEST) {
                h.cm.accept(e, null);
            }
        });
        assertThat(h.handshake(T0, CLIENT, CLIENT_QPN, 1, null)).extracting(Sent::opcode)
            .containsExactly(Opcode.CONNECT_REPLY.value());
        final Connection old = h.events.get(0).connection();
        h.exchange(T0 + MS, Packets.cm(Opcode.READY_TO_USE, old.localQpn(), CLIENT_QPN, SERVICE, 1, 0, 1024, 0, 0, 0,
            2, 0, null, null), CLIENT);
        assertThat(old.state()).isEqualTo(ConnectionState.ESTABLISHED);
        // The client restarted and reuses QPN 1110 with a new Transaction ID [CM-036].
        assertThat(h.handshake(T0 + S, CLIENT, CLIENT_QPN, 2, null)).extracting(Sent::opcode)
            .containsExactly(Opcode.CONNECT_REPLY.value());
        assertThat(h.events).extracting(CmEvent::type).containsExactly(CmEventType.CONNECT_REQUEST,
            CmEventType.ESTABLISHED, CmEventType.DISCONNECTED, CmEventType.CONNECT_REQUEST);
        assertThat(h.events.get(2).reason()).isEqualTo(CmReason.PEER_RESTARTED);
        assertThat(h.events.get(2).connection()).isSameAs(old);
        assertThat(old.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(h.events.get(3).connection().state()).isEqualTo(ConnectionState.ACCEPTED);
    }

    @Test
    void clientRefusesAReplyOutsideItsProposal() {
        final Harness client = new Harness(13, new CmConfig());
        final int server = 3;
        final Connection c = client.cm.connect(new ConnectParams().peer(server).serviceId(SERVICE)
            .resources(client.pd, client.endpoint.createCompletionQueue(64), client.endpoint.createCompletionQueue(64),
                QueuePairCapabilities.defaults()).pathMtu(1024).paths(60_000, 60_001));
        final List<Sent> first = client.poll(T0);
        assertThat(first).hasSize(1);
        assertThat(first.get(0).peerId()).isEqualTo(server);
        assertThat(first.get(0).entropy()).isEqualTo(PORT);
        final long txid = Packets.transactionId(first.get(0).packet());
        assertThat(txid).isEqualTo(c.transactionId());
        final UnsafeBuffer cookie = new UnsafeBuffer(new byte[20]);
        cookie.putInt(0, 77);
        cookie.putInt(4, 0x5EED);
        // A challenge with the wrong Transaction ID, or from another host, is dropped [CM-003].
        assertThat(client.exchange(T0 + MS, Packets.cm(Opcode.CONNECT_CHALLENGE, c.localQpn(), 0, SERVICE, txid + 1, 0,
            1024, 0, 0, 0, 2, 0, cookie, null), server)).isEmpty();
        assertThat(client.exchange(T0 + MS, Packets.cm(Opcode.CONNECT_CHALLENGE, c.localQpn(), 0, SERVICE, txid, 0,
            1024, 0, 0, 0, 2, 0, cookie, null), server + 1)).isEmpty();
        assertThat(client.cm.counters().get(CmCounter.CM_MISMATCH)).isEqualTo(2);
        // The real challenge: the second request is the first plus the cookie [CM-006].
        final List<Sent> second = client.exchange(T0 + MS, Packets.cm(Opcode.CONNECT_CHALLENGE, c.localQpn(), 0,
            SERVICE, txid, 0, 1024, 0, 0, 0, 2, 0, cookie, null), server);
        assertThat(second).hasSize(1);
        final UnsafeBuffer p1 = first.get(0).packet();
        final UnsafeBuffer p2 = second.get(0).packet();
        assertThat(Packets.cookieOf(p2).getInt(4)).isEqualTo(cookie.getInt(4));
        for (int i = 0; i < 72; i++) {
            if ((i < 16 || i >= 20) && (i < 24 + ConnectHeader.COOKIE_OFFSET || i >= 72)) {
                assertThat(p2.getByte(i)).as("byte %d", i).isEqualTo(p1.getByte(i));
            }
        }
        // A reply with a larger MTU than proposed is refused [CM-009].
        final List<Sent> out = client.exchange(T0 + 2 * MS, Packets.cm(Opcode.CONNECT_REPLY, c.localQpn(), 555, SERVICE,
            txid, 42, 2048, 0, 1, 1, 2, 0, null, null), server);
        assertThat(client.events).extracting(CmEvent::type).containsExactly(CmEventType.CONNECT_ERROR);
        assertThat(client.events.get(0).reason()).isEqualTo(CmReason.BAD_PARAMETERS);
        assertThat(c.queuePair().state()).isEqualTo(QpState.ERR);
        assertThat(out).hasSize(1);
        assertThat(out.get(0).opcode()).isEqualTo(Opcode.DISCONNECT_REQUEST.value());
        assertThat(Packets.destQpn(out.get(0).packet())).isEqualTo(555);
        assertThat(Packets.reason(out.get(0).packet())).isEqualTo(CmReason.BAD_PARAMETERS);
        // The DISCONNECT_REPLY ends it quietly (CONNECT_ERROR was the event).
        client.exchange(T0 + 3 * MS, Packets.cm(Opcode.DISCONNECT_REPLY, c.localQpn(), 555, SERVICE, txid, 0, 0, 0, 0,
            0, 0, 0, null, null), server);
        assertThat(c.state()).isEqualTo(ConnectionState.TIMEWAIT);
        assertThat(client.events).hasSize(1);
    }

    @Test
    void cookieMatchesTheSpecificationTestVector() throws Exception {
        // [CM-015] test vector: K = 00..1f, client 192.0.2.1:49152, service 20000, txid 0x0123456789ABCDEF,
        // QPN 1110, issue time 1000 s.
        final byte[] key = new byte[32];
        for (int i = 0; i < 32; i++) {
            key[i] = (byte) i;
        }
        final javax.crypto.Mac mac = CookieJar.newMac();
        CookieJar.init(mac, key);
        final PeerDirectory real = new PeerDirectory() {
            @Override
            public int hostOf(final int peerId) {
                return peerId;
            }

            @Override
            public int addressBytes(final int peerId, final MutableDirectBuffer dst, final int offset) {
                final byte[] v6 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 192, 0, 2, 1,
                    (byte) 0xc0, 0x00};
                dst.putBytes(offset, v6);
                return v6.length;
            }
        };
        final UnsafeBuffer address = new UnsafeBuffer(new byte[18]);
        assertThat(real.addressBytes(1, address, 0)).isEqualTo(18);
        final byte[] message = new byte[CookieJar.MAX_MESSAGE];
        final byte[] digest = new byte[32];
        CookieJar.compute(mac, address, 18, 20_000, 0x0123_4567_89AB_CDEFL, 1110, 1000, message, digest);
        assertThat(hex(message, 42)).isEqualTo("00000000000000000000ffffc0000201" + "c000" + "0000000000004e20"
            + "0123456789abcdef" + "00000456" + "000003e8");
        assertThat(hex(digest, 32)).isEqualTo("a6015d630c471200d322023b83d86a55" + "9cdf8032c98d27ab6d4b347cf0d85ec6");
    }

    private static String hex(final byte[] b, final int n) {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append(String.format("%02x", b[i]));
        }
        return sb.toString();
    }
}
