// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.testwire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.agrona.DirectBuffer;
import org.agrona.collections.IntArrayList;
import org.junit.jupiter.api.Test;
import org.metaroce.core.engine.DatagramEndpoint;
import org.metaroce.core.engine.TransmitSink;

class InMemoryWireTest {
    private static final long SEED = 0x5EED_1234L;
    private static final long DELAY = LinkProfile.DEFAULT_DELAY_NS;

    private static InMemoryWire wire(final LinkProfile profile) {
        final InMemoryWire wire = new InMemoryWire(SEED, profile);
        System.out.println(wire);
        return wire;
    }

    /** Wire with a paced sender (node 0) and a receiver (node 1). */
    private static PingEndpoint[] pacedPair(final InMemoryWire wire, final int count, final long intervalNs) {
        final PingEndpoint sender = PingEndpoint.paced(1, count, intervalNs);
        final PingEndpoint receiver = PingEndpoint.receiver();
        assertThat(wire.attach(sender)).isZero();
        assertThat(wire.attach(receiver)).isEqualTo(1);
        return new PingEndpoint[] {sender, receiver};
    }

    private static IntArrayList range(final int from, final int to) {
        final IntArrayList list = new IntArrayList();
        for (int i = from; i < to; i++) {
            list.addInt(i);
        }
        return list;
    }

    @Test
    void perfectLinkDeliversEverythingOnceInOrderAfterTheDelay() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint sender = PingEndpoint.burst(1, 5_000);
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(sender);
        wire.attach(receiver);

        assertThat(wire.runUntil(() -> receiver.receivedPsns.size() == 5_000, 1_000_000)).isTrue();

        assertThat(receiver.receivedPsns).isEqualTo(range(0, 5_000));
        assertThat(receiver.receivedTimes).allMatch(t -> t == DELAY);
        assertThat(receiver.receivedFrom).allMatch(from -> from == 0);
        assertThat(receiver.corrupted).isZero();
        assertThat(receiver.lastEcn).isEqualTo(DatagramEndpoint.ECN_NOT_ECT);
        assertThat(wire.now()).isEqualTo(DELAY);
        assertThat(wire.inFlight()).isZero();
        assertThat(wire.stats().sent()).isEqualTo(5_000);
        assertThat(wire.stats().delivered()).isEqualTo(5_000);
        assertThat(wire.stats().dropped()).isZero();
        assertThat(wire.trace().count(PacketFate.DELIVERED)).isEqualTo(5_000);
        assertThat(wire.trace().size()).isEqualTo(5_000);
        // 5000 x 16 bytes do not fit one 64 KiB poll batch: the wire polled again at the same instant.
        assertThat(sender.sentTimes).allMatch(t -> t == 0);
    }

    @Test
    void serializationRateSpacesPacketsOut() {
        final InMemoryWire wire = wire(LinkProfile.builder().rateBitsPerSecond(1_000_000_000L).build());
        final PingEndpoint sender = new PingEndpoint(1, 10, 0, 125);
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(sender);
        wire.attach(receiver);

        wire.runFor(1_000_000);

        // 125 bytes at 1 Gb/s take 1 µs each on the sender's serializer.
        assertThat(receiver.receivedPsns).isEqualTo(range(0, 10));
        for (int i = 0; i < 10; i++) {
            assertThat(receiver.receivedTimes.getLong(i)).isEqualTo(DELAY + (i + 1) * 1_000L);
        }
    }

    @Test
    void echoRoundTripTakesTwoOneWayDelays() {
        final InMemoryWire wire = wire(LinkProfile.builder().delayNs(7_000).build());
        final PingEndpoint pinger = PingEndpoint.paced(1, 100, 1_000);
        final EchoEndpoint echo = new EchoEndpoint();
        wire.attach(pinger);
        wire.attach(echo);

        assertThat(wire.runUntil(() -> pinger.receivedPsns.size() == 100, 10_000_000)).isTrue();

        assertThat(pinger.receivedPsns).isEqualTo(range(0, 100));
        for (int i = 0; i < 100; i++) {
            assertThat(pinger.receivedTimes.getLong(i) - pinger.sentTimes.getLong(i)).isEqualTo(14_000);
        }
        assertThat(pinger.receivedFrom).allMatch(from -> from == 1);
        assertThat(wire.now()).isEqualTo(99 * 1_000 + 14_000);
        assertThat(echo.echoed).isEqualTo(100);
    }

    @Test
    void senderIdentityIsTheNodeId() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint a = PingEndpoint.burst(2, 3);
        final PingEndpoint b = PingEndpoint.burst(2, 4);
        final PingEndpoint sinkNode = PingEndpoint.receiver();
        wire.attach(a);
        wire.attach(b);
        wire.attach(sinkNode);

        wire.runFor(100_000);

        assertThat(sinkNode.receivedFrom.stream().filter(n -> n == 0).count()).isEqualTo(3);
        assertThat(sinkNode.receivedFrom.stream().filter(n -> n == 1).count()).isEqualTo(4);
        assertThat(wire.trace().count(e -> e.from() == 1 && e.to() == 2)).isEqualTo(4);
    }

    @Test
    void lossRateIsCloseToConfiguredOver100kPackets() {
        final InMemoryWire wire = wire(LinkProfile.builder().loss(0.02).build());
        wire.trace().enabled(false);
        final PingEndpoint[] pair = pacedPair(wire, 100_000, 100);

        wire.runFor(20_000_000);

        final long lost = 100_000 - pair[1].receivedPsns.size();
        System.out.println(wire);
        assertThat(pair[0].done()).isTrue();
        assertThat(lost).isEqualTo(wire.stats().droppedLoss()).isBetween(1_700L, 2_300L);
        assertThat(wire.trace().size()).isZero();
        assertThat(wire.stats().delivered() + wire.stats().dropped()).isEqualTo(wire.stats().sent());
    }

    @Test
    void burstLossDropsInRunsAtTheStationaryRate() {
        // Bad state 0.005 / (0.005 + 0.2) = 2.44% of the time, bursts of 5 packets on average.
        final InMemoryWire wire = wire(LinkProfile.builder().burstLoss(0.005, 0.2, 1.0).build());
        wire.trace().enabled(false);
        final PingEndpoint[] pair = pacedPair(wire, 100_000, 100);

        wire.runFor(20_000_000);

        final IntArrayList received = pair[1].receivedPsns;
        final long lost = 100_000 - received.size();
        int runs = 0;
        int expected = 0;
        for (int i = 0; i < received.size(); i++) {
            if (received.getInt(i) != expected) {
                runs++;
            }
            expected = received.getInt(i) + 1;
        }
        System.out.println(wire + " lossRuns=" + runs + " meanRun=" + (double) lost / runs);
        assertThat(lost).isEqualTo(wire.stats().droppedLoss()).isBetween(1_800L, 3_100L);
        assertThat((double) lost / runs).isGreaterThan(3.0);
    }

    @Test
    void duplicatesAndCorruptionHappenAndAreCounted() {
        final InMemoryWire wire = wire(LinkProfile.builder().duplicate(0.05).corrupt(0.05).build());
        final PingEndpoint[] pair = pacedPair(wire, 10_000, 200);

        wire.runFor(10_000_000);

        final WireStats stats = wire.stats();
        System.out.println(wire);
        final PingEndpoint receiver = pair[1];
        assertThat(stats.duplicated()).isBetween(350L, 650L);
        assertThat(stats.corrupted()).isBetween(350L, 700L);
        assertThat(stats.delivered()).isEqualTo(10_000 + stats.duplicated());
        assertThat(receiver.receivedPsns.size() + receiver.corrupted).isEqualTo((int) stats.delivered());
        assertThat(receiver.corrupted).isEqualTo((int) stats.corrupted());
        final Set<Integer> seen = new HashSet<>();
        int intactDuplicates = 0;
        for (int i = 0; i < receiver.receivedPsns.size(); i++) {
            if (!seen.add(receiver.receivedPsns.getInt(i))) {
                intactDuplicates++;
            }
        }
        assertThat(intactDuplicates).isPositive();
        assertThat(wire.trace().count(PacketFate.DUPLICATED)).isEqualTo(stats.duplicated());
        assertThat(wire.trace().count(PacketFate.CORRUPTED)).isEqualTo(stats.corrupted());
    }

    @Test
    void reorderingLetsLaterPacketsOvertake() {
        final InMemoryWire wire = wire(LinkProfile.builder().reorder(0.05, 10_000, 30_000).build());
        final PingEndpoint[] pair = pacedPair(wire, 2_000, 1_000);

        wire.runFor(5_000_000);

        final IntArrayList received = pair[1].receivedPsns;
        int inversions = 0;
        for (int i = 1; i < received.size(); i++) {
            if (received.getInt(i) < received.getInt(i - 1)) {
                inversions++;
            }
        }
        System.out.println(wire + " inversions=" + inversions);
        assertThat(wire.stats().reordered()).isBetween(50L, 150L);
        assertThat(inversions).isGreaterThan(50);
        final List<Integer> sorted = new ArrayList<>(received);
        sorted.sort(null);
        assertThat(sorted).isEqualTo(range(0, 2_000));
    }

    @Test
    void jitterAloneVariesDelayButKeepsOrder() {
        final InMemoryWire wire = wire(LinkProfile.builder().jitterNs(3_000).build());
        final PingEndpoint[] pair = pacedPair(wire, 1_000, 100);

        wire.runFor(1_000_000);

        assertThat(pair[1].receivedPsns).isEqualTo(range(0, 1_000));
        final Set<Long> latencies = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            final long latency = pair[1].receivedTimes.getLong(i) - pair[0].sentTimes.getLong(i);
            assertThat(latency).isBetween(DELAY, DELAY + 3_000);
            latencies.add(latency);
        }
        assertThat(latencies.size()).isGreaterThan(100);
    }

    @Test
    void blackholeDropsExactlyThePacketsSentInsideTheWindow() {
        final InMemoryWire wire = wire(LinkProfile.builder().blackhole(20_000, 40_000).blackhole(70_000, 70_001).build());
        final PingEndpoint[] pair = pacedPair(wire, 100, 1_000);

        wire.runFor(1_000_000);

        final IntArrayList expected = range(0, 20);
        expected.addAll(range(40, 70));
        expected.addAll(range(71, 100));
        assertThat(pair[1].receivedPsns).isEqualTo(expected);
        assertThat(wire.stats().droppedBlackhole()).isEqualTo(21);
        assertThat(wire.trace().select(e -> e.fate() == PacketFate.DROPPED_BLACKHOLE))
            .allMatch(e -> e.timeNs() >= 20_000 && e.timeNs() < 40_000 || e.timeNs() == 70_000);
    }

    @Test
    void filterDropsExactlyTheNthMatchingPacket() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        wire.filter(PacketFilter.dropNth(3, PacketMatcher.opcode(PingEndpoint.OPCODE_WRITE)));
        final PingEndpoint[] pair = pacedPair(wire, 30, 1_000);

        wire.runFor(1_000_000);

        // WRITEs are PSNs 0, 3, 6, ...: the third is PSN 6.
        final IntArrayList expected = range(0, 30);
        expected.removeInt(6);
        assertThat(pair[1].receivedPsns).isEqualTo(expected);
        assertThat(wire.stats().droppedFilter()).isEqualTo(1);
        final List<TraceEvent> drops = wire.trace().select(e -> e.fate() == PacketFate.DROPPED_FILTER);
        assertThat(drops).hasSize(1);
        assertThat(drops.get(0).psn()).isEqualTo(6);
        assertThat(drops.get(0).opcode()).isEqualTo(PingEndpoint.OPCODE_WRITE);
        assertThat(drops.get(0).packetId()).isEqualTo(7);
    }

    @Test
    void filterByOpcodeAndPsnAndByWindow() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        // PSN 12 is a WRITE, so only the second filter naming it matches.
        wire.filter(PacketFilter.dropOpcodePsn(PingEndpoint.OPCODE_SEND, 10)
            .or(PacketFilter.dropOpcodePsn(PingEndpoint.OPCODE_SEND, 12))
            .or(PacketFilter.dropOpcodePsn(PingEndpoint.OPCODE_WRITE, 12))
            .or(PacketFilter.dropInWindow(20_000, 25_000, PacketMatcher.any())));
        final PingEndpoint[] pair = pacedPair(wire, 30, 1_000);

        wire.runFor(1_000_000);

        final IntArrayList expected = range(0, 30);
        expected.removeIf(psn -> psn == 10 || psn == 12 || psn >= 20 && psn < 25);
        assertThat(pair[1].receivedPsns).isEqualTo(expected);
        assertThat(wire.stats().droppedFilter()).isEqualTo(7);
    }

    @Test
    void filterSeesEachDirectionAndDropFirstStopsCounting() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint pinger = PingEndpoint.paced(1, 10, 1_000);
        wire.attach(pinger);
        wire.attach(new EchoEndpoint());
        wire.filter(PacketFilter.dropFirst(2, PacketMatcher.link(1, 0)));

        wire.runFor(1_000_000);

        assertThat(pinger.receivedPsns).isEqualTo(range(2, 10));
        assertThat(wire.trace().select(e -> e.fate() == PacketFate.DROPPED_FILTER))
            .extracting(TraceEvent::from).containsExactly(1, 1);
    }

    @Test
    void deadlineTimersFireAtTheExactVirtualTime() {
        final InMemoryWire wire = new InMemoryWire(SEED, LinkProfile.perfect(), 123_456_789L);
        final TimerEndpoint timer = new TimerEndpoint(1, 1_000_000);
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(timer);
        wire.attach(receiver);

        assertThat(wire.runUntil(() -> receiver.receivedPsns.size() == 1, 10_000_000)).isTrue();

        assertThat(timer.armedAtNs).isEqualTo(123_456_789L);
        assertThat(timer.firedAtNs).isEqualTo(123_456_789L + 1_000_000);
        assertThat(receiver.receivedTimes.getLong(0)).isEqualTo(123_456_789L + 1_000_000 + DELAY);
        assertThat(wire.now()).isEqualTo(receiver.receivedTimes.getLong(0));
        // Armed, fired, polled once more to settle the instant it emitted at, then at the arrival:
        // virtual time jumped straight to each event, no busy polling in between.
        assertThat(timer.polls).isEqualTo(4);
    }

    @Test
    void ceMarkingDeliversEcnCeAndCountsIt() {
        final InMemoryWire wire = wire(LinkProfile.builder().ceMark(0.1).ecn(DatagramEndpoint.ECN_ECT_0).build());
        final PingEndpoint[] pair = pacedPair(wire, 5_000, 100);

        wire.runFor(2_000_000);

        assertThat(wire.stats().ceMarked()).isBetween(400L, 600L);
        assertThat(pair[1].ceMarked).isEqualTo((int) wire.stats().ceMarked());
        assertThat(pair[1].receivedPsns).isEqualTo(range(0, 5_000));
        assertThat(wire.trace().count(PacketFate.CE_MARKED)).isEqualTo(wire.stats().ceMarked());
    }

    @Test
    void perLinkProfileOverridesTheDefaultInOneDirection() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint a = PingEndpoint.paced(1, 50, 1_000);
        final PingEndpoint b = PingEndpoint.paced(0, 50, 1_000);
        wire.attach(a);
        wire.attach(b);
        wire.link(0, 1, LinkProfile.builder().loss(1.0).build());
        wire.defaultProfile(LinkProfile.builder().delayNs(2_000).build());

        wire.runFor(1_000_000);

        assertThat(b.receivedPsns).isEmpty();
        assertThat(a.receivedPsns).isEqualTo(range(0, 50));
        assertThat(a.receivedTimes.getLong(0)).isEqualTo(2_000);
        assertThat(wire.profile(0, 1).lossProbability()).isEqualTo(1.0);
        assertThat(wire.profile(1, 0).delayNs()).isEqualTo(2_000);
    }

    @Test
    void sameSeedGivesTheSameTraceAndDifferentSeedsDiffer() {
        final long seed = 0xC0FFEEL;
        System.out.println("InMemoryWireTest determinism seed=" + seed);
        final List<TraceEvent> first = faultyPingEcho(seed);
        final List<TraceEvent> second = faultyPingEcho(seed);
        final List<TraceEvent> other = faultyPingEcho(seed + 1);

        assertThat(first.size()).isGreaterThan(3_000);
        assertThat(second).isEqualTo(first);
        assertThat(other).isNotEqualTo(first);
        for (final PacketFate fate : PacketFate.values()) {
            if (fate == PacketFate.DROPPED_QUEUE || fate == PacketFate.TRIMMED) {
                continue; // need a bottleneck port: bottleneckQueuesMarksAndTailDrops, engine trimming tests
            }
            assertThat(first.stream().filter(e -> e.fate() == fate).count()).as(fate.name()).isPositive();
        }
    }

    @Test
    void bottleneckQueuesMarksAndTailDrops() {
        // Four senders burst 10 packets each at one receiver behind a 1 Gb/s port with a 4-packet
        // buffer and a 1-packet marking threshold.
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(receiver);
        for (int i = 0; i < 4; i++) {
            wire.attach(PingEndpoint.burst(0, 10));
        }
        final int length = PingEndpoint.MIN_LENGTH;
        wire.bottleneck(0, 1_000_000_000L, 4L * length, length);
        wire.runFor(1_000_000);
        final WireStats stats = wire.stats();
        assertThat(stats.droppedQueue()).as(stats.toString()).isEqualTo(40 - 4);
        assertThat(wire.trace().count(PacketFate.DROPPED_QUEUE)).isEqualTo(36);
        // The first packet finds an empty queue, the second one packet: only later ones are marked.
        assertThat(stats.ceMarked()).isEqualTo(2);
        assertThat(stats.maxQueueBytes()).isEqualTo(4L * length);
        assertThat(receiver.receivedPsns).hasSize(4);
        // Serialized one after another at the port: 8 ns per byte at 1 Gb/s, then the link delay.
        final long txNs = length * 8L;
        assertThat(receiver.receivedTimes.getLong(3)).isEqualTo(4 * txNs + DELAY);
    }

    @Test
    void policerMarksAndDropsWithoutQueueing() {
        // The real-socket rig's bottleneck (nftables on the receiver's input hook): a marker above
        // 0.5 Gb/s with a one-packet burst, then a policer above 1 Gb/s with a four-packet burst.
        // Four senders burst 10 ECN-capable packets each at once.
        final InMemoryWire wire = wire(LinkProfile.builder().ecn(DatagramEndpoint.ECN_ECT_0).build());
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(receiver);
        for (int i = 0; i < 4; i++) {
            wire.attach(PingEndpoint.burst(0, 10));
        }
        final int length = PingEndpoint.MIN_LENGTH;
        wire.policer(0, 1_000_000_000L, 4L * length, 500_000_000L, length);
        wire.runFor(1_000_000);
        final WireStats stats = wire.stats();
        // The bucket holds four packets: the rest of the burst is dropped, none of it queued.
        assertThat(stats.droppedQueue()).as(stats.toString()).isEqualTo(36);
        assertThat(receiver.receivedPsns).hasSize(4);
        assertThat(stats.maxQueueBytes()).isZero();
        // Only the first packet finds the marker's one-packet burst; what passes after it is marked.
        assertThat(stats.ceMarked()).isEqualTo(3);
        // Nothing waits: every packet that passes arrives after the link delay alone.
        for (int i = 0; i < 4; i++) {
            assertThat(receiver.receivedTimes.getLong(i)).isEqualTo(DELAY);
        }
        // A packet's worth of time later each bucket has room for one more packet.
        final InMemoryWire later = wire(LinkProfile.builder().ecn(DatagramEndpoint.ECN_ECT_0).build());
        final PingEndpoint r2 = PingEndpoint.receiver();
        later.attach(r2);
        later.attach(PingEndpoint.paced(0, 8, length * 8L));
        later.policer(0, 1_000_000_000L, length, 500_000_000L, length);
        later.runFor(1_000_000);
        // Paced at 1 Gb/s: the policer passes all eight, the marker (0.5 Gb/s) every other one.
        assertThat(later.stats().droppedQueue()).as(later.stats().toString()).isZero();
        assertThat(later.stats().ceMarked()).isEqualTo(4);
    }

    @Test
    void notEcnCapablePacketsAreNeverMarkedByThePolicer() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint receiver = PingEndpoint.receiver();
        wire.attach(receiver);
        wire.attach(PingEndpoint.burst(0, 10));
        wire.policer(0, 1_000_000_000L, 10L * PingEndpoint.MIN_LENGTH, 1_000_000L, PingEndpoint.MIN_LENGTH);
        wire.runFor(1_000_000);
        assertThat(receiver.receivedPsns).hasSize(10);
        assertThat(wire.stats().ceMarked()).isZero();
    }

    private static List<TraceEvent> faultyPingEcho(final long seed) {
        final LinkProfile faulty = LinkProfile.builder()
            .jitterNs(2_000).rateBitsPerSecond(10_000_000_000L).loss(0.02).burstLoss(0.01, 0.3, 0.8)
            .duplicate(0.02).reorder(0.05).corrupt(0.01).ceMark(0.05).blackhole(500_000, 520_000).build();
        final InMemoryWire wire = new InMemoryWire(seed, faulty);
        final PingEndpoint pinger = PingEndpoint.paced(1, 2_000, 500);
        wire.attach(pinger);
        wire.attach(new EchoEndpoint());
        wire.filter(PacketFilter.dropNth(5, PacketMatcher.any()));
        wire.runFor(5_000_000);
        System.out.println(wire);
        return wire.trace().snapshot();
    }

    @Test
    void runUntilStopsAtTheConditionOrTheTimeout() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final PingEndpoint[] pair = pacedPair(wire, 1, 0);

        assertThat(wire.runUntil(() -> pair[1].receivedPsns.size() == 1, 1_000_000)).isTrue();
        assertThat(wire.now()).isEqualTo(DELAY);

        assertThat(wire.runUntil(() -> pair[1].receivedPsns.size() == 2, 1_000_000)).isFalse();
        assertThat(wire.now()).isEqualTo(DELAY + 1_000_000);

        wire.runUntil(3_000_000);
        assertThat(wire.now()).isEqualTo(3_000_000);
        assertThat(wire.step()).isFalse();
        assertThatThrownBy(() -> wire.runUntil(1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anInstantThatNeverSettlesIsReportedAsALivelock() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        wire.maxPollRoundsPerInstant(1_000);
        wire.attach(new ScriptEndpoint((now, sink) -> {
            final int offset = sink.claim(16);
            PingEndpoint.write(sink.buffer(), offset, 16, 0);
            sink.commit(offset, 16, 0, 0);
        }, () -> Long.MAX_VALUE));
        assertThatThrownBy(() -> wire.runFor(1_000)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("livelock").hasMessageContaining("seed=" + SEED);

        final InMemoryWire stale = wire(LinkProfile.perfect());
        stale.maxPollRoundsPerInstant(1_000);
        stale.attach(new ScriptEndpoint((now, sink) -> { }, () -> 0L));
        assertThatThrownBy(() -> stale.runFor(1_000)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("node 0 keeps a deadline <= now");
    }

    @Test
    void sinkEnforcesTheClaimCommitContract() {
        final InMemoryWire wire = wire(LinkProfile.perfect());
        final List<Integer> claims = new ArrayList<>();
        final int[] polls = new int[1];
        wire.attach(new ScriptEndpoint((now, sink) -> {
            if (polls[0]++ > 0) {
                return;
            }
            int offset;
            while ((offset = sink.claim(1_000)) != TransmitSink.NO_ROOM) {
                claims.add(offset);
            }
            // Abandoned claims are fine; a smaller claim still fits in the tail.
            assertThat(sink.claim(536)).isEqualTo(65_000);
            assertThatThrownBy(() -> sink.commit(0, 16, 0, 0)).isInstanceOf(IllegalStateException.class);
            assertThat(sink.claim(8)).isEqualTo(TransmitSink.NO_ROOM);
        }, () -> Long.MAX_VALUE));
        wire.runFor(10);
        assertThat(claims).hasSize(65).startsWith(0, 1_000, 2_000);

        final InMemoryWire bad = wire(LinkProfile.perfect());
        bad.attach(new ScriptEndpoint((now, sink) -> {
            final int offset = sink.claim(16);
            sink.commit(offset, 16, 7, 0);
        }, () -> Long.MAX_VALUE));
        assertThatThrownBy(() -> bad.runFor(10)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("unknown peerId 7");
    }

    @Test
    void traceDumpAndToStringAreReadable() {
        final InMemoryWire wire = wire(LinkProfile.builder().loss(0.5).build());
        pacedPair(wire, 20, 1_000);
        wire.runFor(100_000);

        final String dump = wire.trace().dump(5);
        System.out.println(dump);
        assertThat(dump.lines()).hasSize(6);
        assertThat(dump).contains("0->1").contains("op=0x03").contains("more events");
        assertThat(wire.toString()).contains("seed=" + SEED).contains("droppedLoss=");
        assertThat(wire.trace().dump(e -> e.fate().isDrop(), 100).lines())
            .hasSize((int) wire.stats().dropped()).allMatch(line -> line.contains("DROPPED_LOSS"));
    }

    /** Endpoint whose poll and deadline are supplied by the test. */
    private static final class ScriptEndpoint implements DatagramEndpoint {
        interface Poll {
            void poll(long nowNs, TransmitSink sink);
        }

        private final Poll poll;
        private final java.util.function.LongSupplier deadline;

        ScriptEndpoint(final Poll poll, final java.util.function.LongSupplier deadline) {
            this.poll = poll;
            this.deadline = deadline;
        }

        @Override
        public void onDatagram(final long nowNs, final DirectBuffer buffer, final int offset, final int length,
                               final int peerId, final int ecn) {
        }

        @Override
        public int poll(final long nowNs, final TransmitSink sink) {
            poll.poll(nowNs, sink);
            return 0;
        }

        @Override
        public long nextDeadlineNs() {
            return deadline.getAsLong();
        }
    }
}
