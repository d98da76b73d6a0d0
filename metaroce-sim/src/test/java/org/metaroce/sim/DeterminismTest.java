// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.metaroce.sim.report.ReportWriter;
import org.metaroce.sim.scenario.RunResult;
import org.metaroce.sim.scenario.Scenario;
import org.metaroce.sim.scenario.ScenarioConfig;
import org.metaroce.sim.scenario.ScenarioRunner;
import org.metaroce.sim.transport.TransportProfile;

/** Same seed, same bytes: every output file of a run is a function of the seed and the configuration. */
class DeterminismTest {
    private static ScenarioConfig config(final long seed) {
        final ScenarioConfig c = new ScenarioConfig();
        c.scenario = Scenario.WEBSEARCH;
        c.profile = TransportProfile.metaroce().withTrimming(true);
        c.hosts = 8;
        c.hostsPerLeaf = 4;
        c.durationNs = 500_000;
        c.bufferBytesPerPort = 64_000;
        c.seed = seed;
        return c;
    }

    private static List<Path> files(final Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    @Test
    void sameSeedGivesByteIdenticalOutputsAndAnotherSeedDoesNot(@TempDir final Path tmp) throws IOException {
        final long seed = 20261130;
        System.out.println("seed=" + seed);
        final RunResult first = ScenarioRunner.run(config(seed));
        final RunResult second = ScenarioRunner.run(config(seed));
        final RunResult other = ScenarioRunner.run(config(seed + 1));
        assertThat(first.completed).isTrue();
        assertThat(first.flows.size()).isGreaterThan(3);
        ReportWriter.write(first, tmp.resolve("a"));
        ReportWriter.write(second, tmp.resolve("b"));
        ReportWriter.write(other, tmp.resolve("c"));
        final List<Path> a = files(tmp.resolve("a"));
        assertThat(a).extracting(p -> p.getFileName().toString())
            .containsExactly("counters.csv", "flows.csv", "queue.csv", "queue.svg", "slowdown_cdf.svg", "summary.md");
        for (final Path p : a) {
            final byte[] x = Files.readAllBytes(p);
            final byte[] y = Files.readAllBytes(tmp.resolve("b").resolve(p.getFileName()));
            assertThat(y).as("%s identical across runs with seed %d", p.getFileName(), seed).isEqualTo(x);
        }
        assertThat(first.events).isEqualTo(second.events);
        assertThat(Files.readAllBytes(tmp.resolve("c").resolve("flows.csv")))
            .as("a different seed draws different flows")
            .isNotEqualTo(Files.readAllBytes(tmp.resolve("a").resolve("flows.csv")));
    }
}
