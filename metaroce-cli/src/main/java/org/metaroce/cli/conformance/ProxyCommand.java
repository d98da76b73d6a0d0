// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.conformance;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.metaroce.conformance.proxy.FaultProfile;
import org.metaroce.conformance.proxy.FaultProxy;
import org.metaroce.conformance.proxy.PacketMutator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code metaroce proxy}: the suite's seeded UDP fault proxy on its own. */
@Command(name = "proxy", mixinStandardHelpOptions = true,
    description = {"A seeded UDP fault proxy: the first peer to send to --listen is the client, its packets go to "
        + "--target, answers come back.", "Profile: loss=5,burst=3,reorder=2,reorder-ms=1,dup=1,corrupt=1@24-56,"
        + "delay=2,jitter=1,blackhole=1000-1500,rate=10000"})
public final class ProxyCommand implements Callable<Integer> {
    @Option(names = "--listen", required = true, description = "host:port clients send to")
    String listen;

    @Option(names = "--target", required = true, description = "host:port packets are forwarded to")
    String target;

    @Option(names = "--profile", defaultValue = "none", description = "faults in both directions")
    String profile;

    @Option(names = "--to-target", description = "faults towards the target only (overrides --profile)")
    String toTarget;

    @Option(names = "--to-client", description = "faults towards the client only (overrides --profile)")
    String toClient;

    @Option(names = "--seed", defaultValue = "1", description = "seed (default ${DEFAULT-VALUE})")
    long seed;

    @Override
    public Integer call() throws Exception {
        final FaultProfile both = FaultProfile.parse(profile);
        final FaultProfile a = toTarget != null ? FaultProfile.parse(toTarget) : both;
        final FaultProfile b = toClient != null ? FaultProfile.parse(toClient) : both;
        final CountDownLatch done = new CountDownLatch(1);
        try (FaultProxy proxy = new FaultProxy(ConformanceCommand.address(listen), ConformanceCommand.address(target),
            a, b, seed, PacketMutator.NONE)) {
            System.out.println("metaroce proxy: " + proxy.listenAddress() + " -> " + target + ", seed " + seed
                + " (Ctrl-C to stop)");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                System.out.println("to target: " + proxy.toTargetStats());
                System.out.println("to client: " + proxy.toClientStats());
                done.countDown();
            }));
            done.await();
        }
        return 0;
    }
}
