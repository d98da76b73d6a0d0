// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.metaroce.conformance.agent.AgentClient;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.Json;
import org.metaroce.conformance.agent.ReferenceBackend;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.suite.CaseContext;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.ConformanceCase;
import org.metaroce.conformance.suite.Level;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import org.metaroce.conformance.suite.Verdict;

/** The suite's own obligations of specification 12.4 [CONF-008], [CONF-013], [CONF-014], [CONF-017], [CONF-019..021]. */
class SuiteObligationsTest {
    private static Path repoRoot() {
        Path dir = Paths.get("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("spec-notes"))) {
            dir = dir.getParent();
        }
        return dir;
    }

    private static Path moduleSources() {
        return repoRoot().resolve("metaroce-conformance/src/main/java/org/metaroce/conformance");
    }

    /**
     * [CONF-008] the lower tester observes and drives the IUT only through the wire and the agent:
     * its packages use the core's wire codecs and nothing of the engine, connection manager,
     * verbs or drivers (only the reference agent, package {@code agent}, may).
     */
    @Test
    void theSuiteUsesOnlyTheWireCodecsOfTheReference() throws IOException {
        final Pattern ref = Pattern.compile("org\\.metaroce\\.(core\\.[a-z]+|netty|collectives|sim|cli)\\b");
        final List<String> offending = new ArrayList<>();
        for (final String pkg : List.of("cases", "suite", "tester", "report", "proxy")) {
            try (Stream<Path> files = Files.walk(moduleSources().resolve(pkg))) {
                for (final Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    final Matcher m = ref.matcher(Files.readString(f));
                    while (m.find()) {
                        if (!m.group(1).equals("core.wire")) {
                            offending.add(f.getFileName() + ": " + m.group());
                        }
                    }
                }
            }
        }
        assertThat(offending).as("references to reference-implementation internals in the suite").isEmpty();
    }

    /**
     * [CONF-013] each case cites requirement IDs of the specification and has the level of the
     * strongest key word among them: MUST when it cites a MUST requirement, else SHOULD.
     */
    @Test
    void eachCaseHasTheLevelOfItsStrongestRequirement() {
        final Map<String, String> levels = RequirementCitationTest.levels(repoRoot().resolve("spec-notes"));
        final List<String> wrong = new ArrayList<>();
        for (final ConformanceCase c : Catalog.all()) {
            assertThat(c.requirements()).as(c.id()).isNotEmpty();
            // Pure MUST requirements make a MUST case; a requirement with both key words lets a case
            // check either part (cm.qpn-random checks QP-001's SHOULD: random QPNs).
            final boolean anyMust = c.requirements().stream().anyMatch(id -> "MUST".equals(levels.get(id)));
            final boolean anyShould = c.requirements().stream().anyMatch(id -> "SHOULD".equals(levels.get(id)));
            final boolean anyMixed = c.requirements().stream().anyMatch(id -> "MUST/SHOULD".equals(levels.get(id)));
            if (anyMust && c.level() != Level.MUST || !anyMust && !anyMixed && anyShould && c.level() != Level.SHOULD) {
                wrong.add(c.id() + " is " + c.level() + " citing " + c.requirements());
            }
        }
        assertThat(wrong).as("cases whose level is not that of their strongest requirement").isEmpty();
    }

    /**
     * [CONF-014] a check that the IUT does not do something while the tester withholds an
     * acknowledgement lasts less than the 25.5 ms a conforming IUT may take to give up.
     */
    @Test
    void quietChecksDuringRetriesEndBeforeTheShortestRetryBudget() {
        assertThat(CaseContext.RETRYING_QUIET_MS).isPositive().isLessThan(25);
    }

    /** [CONF-017] every random choice of a case derives from the seed: the same seed, the same choices. */
    @Test
    void theSeedDeterminesEveryRandomChoice() {
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture()) {
            final List<Long> a = choices(agent, 11);
            final List<Long> b = choices(agent, 11);
            final List<Long> c = choices(agent, 12);
            assertThat(a).hasSize(3).isEqualTo(b).isNotEqualTo(c);
        }
    }

    private static List<Long> choices(final ReferenceAgentFixture agent, final long seed) {
        final List<Long> seen = new ArrayList<>();
        final ConformanceCase probe = new ConformanceCase("probe", "1 Test", Level.MUST, List.of("CONF-017"), "probe",
            null, ctx -> {
                seen.add(ctx.random().nextLong());
                seen.add((long) ctx.newQpn());
                seen.add(ctx.newServiceId());
            });
        final List<CaseResult> r = new SuiteRunner(SuiteConfig.of(agent.control(), seed)).run(List.of(probe), x -> { });
        assertThat(r).extracting(CaseResult::verdict).containsExactly(Verdict.PASS);
        return seen;
    }

    /** [CONF-019] a case that needs an extension the agent does not list is SKIPPED, never run. */
    @Test
    void casesNeedingAnUnlistedExtensionAreSkipped() {
        final ConformanceCase needsCc = new ConformanceCase("needs-cc", "1 Test", Level.MUST, List.of("CONF-019"),
            "needs cc", null, ctx -> ctx.requireExtension("cc"));
        try (AgentServer listing = new AgentServer(new ReferenceBackend(InetAddress.getLoopbackAddress(), 0),
                InetAddress.getLoopbackAddress(), 0);
             AgentServer silent = new AgentServer(new BrokenBackend(new ReferenceBackend(
                 InetAddress.getLoopbackAddress(), 0), BrokenBackend.sameCompletions()).replies((cmd, reply) -> {
                     if (cmd.equals(AgentProtocol.HELLO)) {
                         reply.remove("extensions");
                     }
                 }), InetAddress.getLoopbackAddress(), 0)) {
            assertThat(new SuiteRunner(SuiteConfig.of(listing.address(), 1)).run(List.of(needsCc), x -> { }))
                .extracting(CaseResult::verdict).containsExactly(Verdict.PASS);
            assertThat(new SuiteRunner(SuiteConfig.of(silent.address(), 1)).run(List.of(needsCc), x -> { }))
                .extracting(CaseResult::verdict).containsExactly(Verdict.SKIP);
        }
    }

    /** [CONF-020] integer arguments as JSON numbers or decimal strings, unsigned 64-bit included. */
    @Test
    void integersAreReadFromNumbersAndDecimalStrings() throws Exception {
        final ObjectNode o = Json.parseObject("{\"a\":4096,\"b\":\"4096\",\"c\":\"18446744073709551615\","
            + "\"d\":\"9007199254740993\"}");
        assertThat(Json.requireLong(o, "a")).isEqualTo(4096);
        assertThat(Json.requireLong(o, "b")).isEqualTo(4096);
        assertThat(Long.toUnsignedString(Json.requireLong(o, "c"))).isEqualTo("18446744073709551615");
        assertThat(Json.requireLong(o, "d")).as("2^53 + 1, exact").isEqualTo((1L << 53) + 1);
        assertThat(Json.unsigned(-1L)).isEqualTo("18446744073709551615");
    }

    /**
     * [CONF-021] a refused post answers FAILED with the refusal code as {@code status}, and the
     * suite's client surfaces it; [CONF-020] the reference accepts a string where a number is usual.
     */
    @Test
    void aRefusedPostCarriesItsStatus() {
        try (ReferenceAgentFixture agent = new ReferenceAgentFixture();
             AgentClient client = new AgentClient(agent.control(), 5000)) {
            final ObjectNode hello = AgentClient.request(AgentProtocol.HELLO);
            hello.put("version", 1);
            client.call(hello);
            final ObjectNode reg = AgentClient.request(AgentProtocol.REG_MR);
            reg.put("length", "64");
            reg.putArray("access").add("LOCAL_WRITE");
            final ObjectNode mr = client.call(reg);
            assertThat(mr.get("addr").isTextual()).as("addr is a decimal string").isTrue();
            // A QP still connecting (RTR at best): a send is refused INVALID_QP_STATE [QP-015].
            final ObjectNode connect = AgentClient.request(AgentProtocol.CONNECT);
            connect.put("host", "127.0.0.1");
            connect.put("port", 9);
            connect.put("service_id", 1);
            connect.put("connect_timeout_ms", 200);
            final int qp = client.call(connect).get("qp").asInt();
            final ObjectNode post = AgentClient.request(AgentProtocol.POST_SEND);
            post.put("qp", qp);
            post.put("wr_id", 1);
            post.put("opcode", "RDMA_WRITE");
            post.put("remote_addr", "4096");
            post.put("rkey", 1);
            try {
                client.call(post);
                throw new AssertionError("a post to a QP that is not in RTS was accepted");
            } catch (final AgentException ex) {
                assertThat(ex.code()).isEqualTo(AgentException.FAILED);
                assertThat(ex.status()).isEqualTo("INVALID_QP_STATE");
            }
        }
    }

    /** Every case's requirements exist and the catalogue's case IDs are unique [CONF-005, CONF-013]. */
    @Test
    void caseIdsAreUnique() {
        final Set<String> ids = new TreeSet<>();
        final List<String> dup = Catalog.all().stream().map(ConformanceCase::id).filter(id -> !ids.add(id))
            .collect(Collectors.toList());
        assertThat(dup).isEmpty();
    }
}
