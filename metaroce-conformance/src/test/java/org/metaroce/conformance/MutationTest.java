// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.node.ArrayNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.ReferenceBackend;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.proxy.FaultProfile;
import org.metaroce.conformance.proxy.FaultProxy;
import org.metaroce.conformance.proxy.PacketMutator;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import org.metaroce.conformance.suite.Verdict;

/**
 * Proof that the suite catches bugs [CONF-001]: each mutant IUT (a packet-rewriting shim in front
 * of the reference agent, or an agent that misreports completions) runs the cases that should
 * catch it, and each of those cases must FAIL. A control run through a shim that changes nothing
 * shows the same cases PASS, so the failures come from the mutation alone.
 */
class MutationTest {
    private static final long SEED = 4242;
    private static ReferenceAgentFixture agent;
    private static InetSocketAddress endpoint;

    @BeforeAll
    static void start() {
        System.out.println("mutation seed " + SEED);
        agent = new ReferenceAgentFixture();
        endpoint = agent.backend.dataAddress();
    }

    @AfterAll
    static void stop() {
        agent.close();
    }

    private static Map<String, Verdict> runThroughShim(final Function<AtomicReference<FaultProxy>, PacketMutator> m,
                                                       final List<String> caseIds) {
        final AtomicReference<FaultProxy> ref = new AtomicReference<>();
        try (FaultProxy shim = new FaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), endpoint,
            FaultProfile.NONE, FaultProfile.NONE, SEED, m.apply(ref))) {
            ref.set(shim);
            return run(agent.control(), shim.listenAddress(), caseIds);
        }
    }

    private static Map<String, Verdict> run(final InetSocketAddress control, final InetSocketAddress target,
                                            final List<String> caseIds) {
        final SuiteConfig config = SuiteConfig.of(control, SEED).withCases(caseIds).withTarget(target);
        final List<CaseResult> results = new SuiteRunner(config).run(Catalog.all(), r -> System.out.println(
            "  " + r.verdict() + " " + r.testCase().id() + (r.actual() != null ? " (actual: " + r.actual() + ")" : "")));
        return results.stream().collect(Collectors.toMap(r -> r.testCase().id(), CaseResult::verdict));
    }

    private static void assertKilled(final String mutant, final Map<String, Verdict> verdicts,
                                     final List<String> killers) {
        System.out.println("mutant " + mutant + ": " + verdicts);
        assertThat(verdicts).as(mutant).containsOnlyKeys(killers);
        assertThat(verdicts.values()).as("every selected case fails the mutant " + mutant)
            .containsOnly(Verdict.FAIL);
    }

    private static void shim(final String name, final Function<AtomicReference<FaultProxy>, PacketMutator> m,
                             final String... killers) {
        assertKilled(name, runThroughShim(m, List.of(killers)), List.of(killers));
    }

    @Test
    @DisplayName("control: the same cases pass through a shim that changes nothing")
    void controlShimPasses() {
        final List<String> all = List.of("wire.integrity-check", "mem.bad-rkey", "rel.one-loss-one-retransmit",
            "rel.ack-echo", "ops.rnr-then-success", "rel.psn-out-of-range", "cm.keepalive-no-ackreq",
            "rel.duplicate", "cm.challenge", "sec.spoofed-handshakes");
        final Map<String, Verdict> v = runThroughShim(ref -> PacketMutator.NONE, all);
        assertThat(v.values()).as(v.toString()).containsOnly(Verdict.PASS);
        assertThat(v).hasSize(all.size());
    }

    @Test
    void ignoresIntegrityCheck() {
        shim("ignores the integrity check", ref -> Mutants.ignoresIntegrityCheck(), "wire.integrity-check");
    }

    @Test
    void acceptsBadRkey() {
        shim("accepts a bad rkey", ref -> Mutants.acceptsBadRkey(), "mem.bad-rkey", "mem.deregistered");
    }

    @Test
    void resendsEverything() {
        shim("go-back-N instead of selective repeat", Mutants::resendsEverything,
            "rel.one-loss-one-retransmit", "rel.multi-gap");
    }

    @Test
    void acksWrongPsn() {
        shim("ACKs the wrong PSN", ref -> Mutants.acksWrongPsn(), "rel.ack-echo", "rel.sack-bitmap");
    }

    @Test
    void neverSendsRnr() {
        shim("never sends RNR", ref -> Mutants.neverSendsRnr(), "ops.rnr-then-success");
    }

    @Test
    void acceptsAnyPsn() {
        shim("accepts any PSN", ref -> Mutants.acceptsAnyPsn(), "rel.psn-out-of-range", "rel.psn-beyond-window");
    }

    @Test
    void answersEveryKeepalive() {
        shim("answers KEEPALIVE without ACK_REQ", ref -> Mutants.answersEveryKeepalive(), "cm.keepalive-no-ackreq");
    }

    @Test
    void noDuplicateFlag() {
        shim("no DUPLICATE flag on duplicate ACKs", ref -> Mutants.noDuplicateFlag(), "rel.duplicate");
    }

    @Test
    void keepsStateForUnverifiedHandshakes() {
        shim("keeps state for unverified handshakes", Mutants::skipsCookieCheck, "cm.challenge",
            "sec.spoofed-handshakes");
    }

    private static void agentMutant(final String name, final UnaryOperator<ArrayNode> completions,
                                    final String... killers) {
        try (AgentServer broken = new AgentServer(new BrokenBackend(new ReferenceBackend(
            InetAddress.getLoopbackAddress(), 0), completions), InetAddress.getLoopbackAddress(), 0)) {
            assertKilled(name, run(broken.address(), null, List.of(killers)), List.of(killers));
        }
    }

    private static void optionMutant(final String name, final java.util.function.Consumer<
        com.fasterxml.jackson.databind.node.ObjectNode> requests, final String... killers) {
        try (AgentServer broken = new AgentServer(new BrokenBackend(new ReferenceBackend(
            InetAddress.getLoopbackAddress(), 0), BrokenBackend.sameCompletions(), requests),
            InetAddress.getLoopbackAddress(), 0)) {
            assertKilled(name, run(broken.address(), null, List.of(killers)), List.of(killers));
        }
    }

    /** An agent mutant behind a packet shim, for faults that need both (e.g. a capability claimed but not run). */
    private static void optionAndShimMutant(final String name, final java.util.function.Consumer<
        com.fasterxml.jackson.databind.node.ObjectNode> requests, final PacketMutator mutator,
                                            final String... killers) {
        try (ReferenceBackend backend = new ReferenceBackend(InetAddress.getLoopbackAddress(), 0);
             AgentServer broken = new AgentServer(new BrokenBackend(backend, BrokenBackend.sameCompletions(),
                 requests), InetAddress.getLoopbackAddress(), 0);
             FaultProxy shim = new FaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                 backend.dataAddress(), FaultProfile.NONE, FaultProfile.NONE, SEED, mutator)) {
            assertKilled(name, run(broken.address(), shim.listenAddress(), List.of(killers)), List.of(killers));
        }
    }

    @Test
    void selectiveRepeatUnderGoBackN() {
        optionAndShimMutant("go-back-N negotiated, selective repeat run (accepts out-of-order)",
            BrokenBackend.ignoresOption("capabilities"), Mutants.claimsGoBackN(), "rel.gbn-responder");
    }

    @Test
    void resendsOnlyTheNackPsn() {
        shim("go-back-N requester resending only the NACK PSN", ref -> Mutants.resendsOnlyNackPsn(),
            "rel.gbn-requester");
    }

    @Test
    void holdsFewerReadsThanAdvertised() {
        shim("holds fewer READs than its Responder Resources (reply claims 12)",
            ref -> Mutants.claimsResponderResources(12), "ops.responder-busy");
    }

    @Test
    void keepsStateForFloodedHandshakes() {
        // A reference of its own: the connections this mutant piles up must not load the shared one.
        final AtomicReference<FaultProxy> ref = new AtomicReference<>();
        try (ReferenceBackend backend = new ReferenceBackend(InetAddress.getLoopbackAddress(), 0);
             AgentServer server = new AgentServer(backend, InetAddress.getLoopbackAddress(), 0);
             FaultProxy shim = new FaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                 backend.dataAddress(), FaultProfile.NONE, FaultProfile.NONE, SEED,
                 Mutants.skipsCookieCheck(ref, true))) {
            ref.set(shim);
            assertKilled("keeps state for unverified handshakes, under a flood", run(server.address(),
                shim.listenAddress(), List.of("robust.flood-memory")), List.of("robust.flood-memory"));
        }
    }

    @Test
    void completesUnsignaledWrs() {
        optionMutant("completes unsignaled WRs", BrokenBackend.signalsEverything(), "ops.unsignaled");
    }

    @Test
    void reusesRkeys() {
        try (AgentServer broken = new AgentServer(new BrokenBackend(new ReferenceBackend(
            InetAddress.getLoopbackAddress(), 0), BrokenBackend.sameCompletions()).replies(BrokenBackend.reusesRkeys()),
            InetAddress.getLoopbackAddress(), 0)) {
            assertKilled("reuses rkeys", run(broken.address(), null, List.of("mem.keys-unique")),
                List.of("mem.keys-unique"));
        }
    }

    @Test
    void spraysASinglePathQp() {
        shim("sprays a QP with Path Count 1", ref -> Mutants.spraysSinglePath(), "mp.single-path");
    }

    @Test
    void ignoresTimeout() {
        optionMutant("resends before TIMEOUT (agent drops timeout_us: the 1 ms default runs)",
            BrokenBackend.ignoresOption("timeout_us"), "rel.initial-rto");
    }

    @Test
    void echoesTheWrongPath() {
        shim("echoes Path ID 0 for every packet", ref -> Mutants.echoesPathZero(), "cc.responder-signals");
    }

    @Test
    void ignoresDelayFeedback() {
        optionMutant("ignores delay feedback (FIXED where DEFAULT is asked)", BrokenBackend.fixedForDefault(),
            "cc.delay-reaction");
    }

    /**
     * Killed by cc.default-initial-window, deterministically (it counts the first flight). Not by
     * cc.default-delay-reaction: that case compares the most packets outstanding in its control
     * phase with those under added delay, and the control-phase maximum includes the flight sent
     * before the first ACK brings the tester's Credit of 32; a window-less IUT on a fast host sends
     * hundreds then, so 32 under delay is "at most half" and the case passes it (three runs in a row
     * in CI; on a loaded host its first flight was smaller and the case failed it). Judging the
     * delay reaction from the credit-limited phase only is open work on the case.
     */
    @Test
    void hasNoCongestionWindow() {
        optionMutant("no congestion window (default options run FIXED at the largest window)",
            BrokenBackend.noCongestionWindow(), "cc.default-initial-window");
    }

    @Test
    void exceedsInitialWindow() {
        optionMutant("exceeds the initial window (CONGESTION_WINDOW ignored)",
            BrokenBackend.ignoresOption("congestion_window"), "cc.initial-window", "cc.fixed-window");
    }

    @Test
    void ignoresCredit() {
        shim("ignores the Credit (shim grants 4096 in every ACK)", ref -> Mutants.ignoresCredit(),
            "cc.credit-honoured", "cc.receiver-credit-window");
    }

    @Test
    void doesNotFlushOnError() {
        agentMutant("does not flush on error", BrokenBackend.noFlush(), "mem.error-flush", "rel.nack-remote-access",
            "qp.post-in-err");
    }

    @Test
    void completesTwice() {
        agentMutant("completes twice", BrokenBackend.completesTwice(), "rel.lost-acks", "rel.lossy-link-transfer");
    }

    /** The ECN self-test variant of the reference behind a shim: the case passes unchanged, fails stripped. */
    private static Map<String, Verdict> runEcnVariant(final PacketMutator mutator, final List<String> caseIds) {
        try (ReferenceAgentFixture ecn = new ReferenceAgentFixture(true);
             FaultProxy shim = new FaultProxy(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                 ecn.backend.dataAddress(), FaultProfile.NONE, FaultProfile.NONE, SEED, mutator)) {
            return run(ecn.control(), shim.listenAddress(), caseIds);
        }
    }

    @Test
    @DisplayName("control: cc.ecn-echo-reaction passes the ECN variant through a shim that changes nothing")
    void ecnVariantPassesThroughNoOpShim() {
        final Map<String, Verdict> v = runEcnVariant(PacketMutator.NONE, List.of("cc.ecn-echo-reaction"));
        assertThat(v).as(v.toString()).containsEntry("cc.ecn-echo-reaction", Verdict.PASS).hasSize(1);
    }

    @Test
    void ignoresEcnEcho() {
        assertKilled("ignores ECN echo (shim strips ECN_ECHO and CE Count from ACKs)",
            runEcnVariant(Mutants.stripsEcnEcho(), List.of("cc.ecn-echo-reaction")), List.of("cc.ecn-echo-reaction"));
    }
}
