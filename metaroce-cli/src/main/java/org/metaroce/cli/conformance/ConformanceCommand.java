// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.conformance;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

import org.metaroce.conformance.agent.Json;
import org.metaroce.conformance.cases.Catalog;
import org.metaroce.conformance.report.Reports;
import org.metaroce.conformance.suite.CaseResult;
import org.metaroce.conformance.suite.SuiteConfig;
import org.metaroce.conformance.suite.SuiteRunner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code metaroce conformance}: runs the compliance suite against an agent. */
@Command(name = "conformance", mixinStandardHelpOptions = true,
    description = {"Run the MetaRoCE compliance suite against an implementation's agent "
        + "(see docs/conformance.md). Exit code 0 when every MUST case passes, 1 otherwise."})
public final class ConformanceCommand implements Callable<Integer> {
    @Option(names = "--agent", description = "the agent's control address host:port (required to run cases)")
    String agent;

    @Option(names = "--target", description = "send packets here instead of the endpoint the agent announces "
        + "(e.g. through 'metaroce proxy')")
    String target;

    @Option(names = "--bind", description = "local address of the lower tester (default: the agent's host)")
    String bind;

    @Option(names = "--section", split = ",", description = "run only sections or case-ID prefixes, e.g. 3,mem")
    List<String> sections = List.of();

    @Option(names = "--case", split = ",", description = "run only these case IDs")
    List<String> cases = List.of();

    @Option(names = "--strict", description = "also run SHOULD cases and count their failures")
    boolean strict;

    @Option(names = "--seed", defaultValue = "1", description = "seed of every random choice (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--deviations", description = "file of requirement IDs the IUT declares it does not meet, one a line")
    Path deviations;

    @Option(names = "--json", description = "write the JSON report here")
    Path json;

    @Option(names = "--junit", description = "write JUnit XML (one suite per section) here")
    Path junit;

    @Option(names = "--list", description = "list the cases and exit")
    boolean list;

    @Option(names = "--coverage", description = "print the requirement coverage table for the spec-notes directory "
        + "given and exit")
    Path coverage;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        final PrintWriter out = spec.commandLine().getOut();
        if (list) {
            Catalog.all().forEach(c -> out.println(c.id() + "  " + c.level() + "  " + c.requirements() + "  "
                + c.title()));
            return 0;
        }
        if (coverage != null) {
            out.print(org.metaroce.conformance.report.Coverage.markdown(coverage, Catalog.all()));
            out.flush();
            return 0;
        }
        if (agent == null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "--agent host:port is required to run the suite");
        }
        final InetSocketAddress agentAddr = address(agent);
        SuiteConfig config = SuiteConfig.of(agentAddr, seed).withStrict(strict).withSections(sections)
            .withCases(cases);
        if (bind != null) {
            config = new SuiteConfig(config.agent(), config.target(), new InetSocketAddress(InetAddress.getByName(bind),
                0), config.strict(), seed, config.sections(), config.caseIds(), config.deviations(),
                config.caseTimeoutMs());
        }
        if (target != null) {
            config = config.withTarget(address(target));
        }
        if (deviations != null) {
            final Set<String> ids = new HashSet<>();
            for (final String line : Files.readAllLines(deviations)) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    ids.add(line.trim());
                }
            }
            config = config.withDeviations(ids);
        }
        out.println("MetaRoCE conformance: agent " + agentAddr + ", seed " + seed + (strict ? ", strict" : ""));
        final SuiteRunner runner = new SuiteRunner(config);
        final String[] section = {""};
        final List<CaseResult> results = runner.run(Catalog.all(), r -> {
            if (!r.testCase().section().equals(section[0])) {
                section[0] = r.testCase().section();
                out.println(section[0]);
            }
            out.println(Reports.line(r));
        });
        out.println();
        out.println("IUT: " + runner.implementation() + ", features " + runner.features());
        out.println(Reports.requirementSummary(results));
        out.println(Reports.summary(results));
        if (json != null) {
            Files.writeString(json, Json.line(Reports.json(results, runner.implementation(), seed, strict)) + "\n");
        }
        if (junit != null) {
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(junit, StandardCharsets.UTF_8))) {
                Reports.junit(results, w);
            }
        }
        return Reports.mustFailed(results) ? 1 : 0;
    }

    static InetSocketAddress address(final String hostPort) {
        final int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("expected host:port, got " + hostPort);
        }
        return new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }
}
