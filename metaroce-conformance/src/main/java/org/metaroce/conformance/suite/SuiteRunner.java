// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.suite;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metaroce.conformance.agent.AgentClient;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.agent.AgentProtocol;
import org.metaroce.conformance.tester.LowerTester;

/**
 * Runs cases against one agent: hello once (version and features), then for every selected case
 * a reset, a fresh lower-tester socket, the case's code under an anti-hang guard, and a verdict.
 */
public final class SuiteRunner {
    private final SuiteConfig config;
    private Set<String> features = Set.of();
    private Set<String> extensions = Set.of();
    private String implementation = "";
    private InetSocketAddress target;
    private ExecutorService exec;

    public SuiteRunner(final SuiteConfig config) {
        this.config = config;
    }

    /** @return the features the IUT declared (after {@link #run}) */
    public Set<String> features() {
        return features;
    }

    /** @return the implementation name the agent gave */
    public String implementation() {
        return implementation;
    }

    /**
     * Runs the cases the configuration selects.
     *
     * @param cases the catalogue
     * @param onResult called after each case (for live console output)
     * @return results in run order
     * @throws AgentException if the agent cannot be reached or speaks another version
     */
    public List<CaseResult> run(final List<ConformanceCase> cases, final Consumer<CaseResult> onResult) {
        final List<CaseResult> results = new ArrayList<>();
        exec = newExecutor();
        try (AgentClient agent = new AgentClient(config.agent(), 10_000)) {
            hello(agent);
            warmUp(agent);
            for (final ConformanceCase c : cases) {
                if (!config.selects(c)) {
                    continue;
                }
                final CaseResult r = runOne(agent, c);
                results.add(r);
                onResult.accept(r);
            }
        } finally {
            exec.shutdownNow();
        }
        return results;
    }

    private void hello(final AgentClient agent) {
        final ObjectNode req = AgentClient.request(AgentProtocol.HELLO);
        req.put("version", AgentProtocol.VERSION);
        final ObjectNode r = agent.call(req);
        final Set<String> f = new HashSet<>();
        for (final JsonNode n : r.path("features")) {
            f.add(n.asText());
        }
        features = Set.copyOf(f);
        final Set<String> x = new HashSet<>();
        for (final JsonNode n : r.path("extensions")) {
            x.add(n.asText());
        }
        extensions = Set.copyOf(x);
        implementation = r.path("implementation").asText("");
        if (config.target() != null) {
            target = config.target();
        } else {
            final JsonNode ep = r.path("endpoint");
            String host = ep.path("host").asText("");
            if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::")) {
                host = config.agent().getHostString();
            }
            target = new InetSocketAddress(host, ep.path("port").asInt());
        }
    }

    /**
     * Completes one handshake before the first case, so that start-up costs of a fresh IUT (class
     * loading, the first HMAC, secure-random seeding) do not count against the first case's timers.
     */
    private void warmUp(final AgentClient agent) {
        final ConformanceCase warm = new ConformanceCase("warm-up", "0 Warm-up", Level.MUST, List.of("CONF-008"),
            "warm-up handshake", null, ctx -> { });
        for (int attempt = 0; attempt < 5; attempt++) {
            try (LowerTester tester = new LowerTester(config.bind(), target)) {
                agent.call(AgentClient.request(AgentProtocol.RESET));
                new CaseContext(agent, tester, features, config.seed(), warm).connect(QpOptions.defaults());
                return;
            } catch (final CaseFailure | CaseSkipped | AgentException ex) {
                LowerTester.sleep(200);
            }
        }
    }

    private static ExecutorService newExecutor() {
        return Executors.newSingleThreadExecutor(r -> {
            final Thread t = new Thread(r, "conformance-case");
            t.setDaemon(true);
            return t;
        });
    }

    private CaseResult runOne(final AgentClient agent, final ConformanceCase c) {
        final long start = System.nanoTime();
        if (c.level() == Level.SHOULD && !config.strict()) {
            return new CaseResult(c, Verdict.SKIP, null, null, "SHOULD case: run with --strict", 0);
        }
        if (c.feature() != null && !features.contains(c.feature())) {
            return new CaseResult(c, Verdict.SKIP, null, null, "the IUT does not declare " + c.feature(), 0);
        }
        try {
            agent.call(AgentClient.request(AgentProtocol.RESET));
        } catch (final AgentException ex) {
            return new CaseResult(c, Verdict.INCONCLUSIVE, null, null, "reset failed: " + ex.getMessage(), 0);
        }
        try (LowerTester tester = new LowerTester(config.bind(), target)) {
            final CaseContext ctx = new CaseContext(agent, tester, features, extensions, config.seed(), c);
            final Future<?> f = exec.submit(() -> {
                c.body().run(ctx);
                return null;
            });
            Verdict v = Verdict.PASS;
            String expected = null;
            String actual = null;
            String message = null;
            try {
                f.get(config.caseTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (final TimeoutException ex) {
                f.cancel(true);
                // The hung case may ignore the interrupt: later cases get a fresh thread.
                exec.shutdownNow();
                exec = newExecutor();
                v = Verdict.FAIL;
                expected = "the case to finish within " + config.caseTimeoutMs() + " ms";
                actual = "it hung (the IUT or the agent stopped answering)";
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                v = Verdict.INCONCLUSIVE;
                message = "interrupted";
            } catch (final ExecutionException ex) {
                final Throwable t = ex.getCause();
                if (t instanceof CaseFailure cf) {
                    v = Verdict.FAIL;
                    expected = cf.expected();
                    actual = cf.actual();
                } else if (t instanceof CaseSkipped cs) {
                    v = Verdict.SKIP;
                    message = cs.getMessage();
                } else if (t instanceof AgentException ae) {
                    v = Verdict.INCONCLUSIVE;
                    message = "agent: " + ae.code() + ": " + ae.getMessage();
                } else {
                    v = Verdict.FAIL;
                    expected = "packets the case can interpret";
                    actual = String.valueOf(t);
                }
            }
            if (v == Verdict.FAIL && c.requirements().stream().anyMatch(config.deviations()::contains)) {
                v = Verdict.DEVIATION;
            }
            return new CaseResult(c, v, expected, actual, message, (System.nanoTime() - start) / 1_000_000L);
        }
    }
}
