// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli.conformance;

import java.net.InetAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.ReferenceBackend;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code metaroce agent}: the reference implementation as an IUT for the compliance suite. */
@Command(name = "agent", mixinStandardHelpOptions = true,
    description = {"Run the reference implementation behind the compliance agent contract (JSON lines over TCP, "
        + "spec-notes/12-conformance.md 12.4), for 'metaroce conformance --agent'."})
public final class AgentCommand implements Callable<Integer> {
    @Option(names = "--control-port", required = true, description = "TCP port of the control channel")
    int controlPort;

    @Option(names = "--bind", defaultValue = "127.0.0.1",
        description = "address of the control channel and of the device (default ${DEFAULT-VALUE})")
    String bind;

    @Option(names = "--endpoint-port", defaultValue = "0",
        description = "UDP endpoint port of the device (default: any free port, announced in hello)")
    int endpointPort;

    @Option(names = "--self-test-declare-ecn",
        description = "FOR THE SUITE'S SELF-TESTS ONLY: declare the ECN feature although the driver cannot read "
            + "CE marks (the responder never echoes one); lets the requester-side ECN cases (cc.ecn-echo-reaction) "
            + "run against the reference. Never use it to claim ECN to a real peer.")
    boolean selfTestDeclareEcn;

    @Override
    public Integer call() throws Exception {
        final InetAddress address = InetAddress.getByName(bind);
        final ReferenceBackend backend = new ReferenceBackend(address, endpointPort, selfTestDeclareEcn);
        final CountDownLatch done = new CountDownLatch(1);
        try (AgentServer server = new AgentServer(backend, address, controlPort)) {
            System.out.println("metaroce agent: control " + server.address() + ", endpoint " + backend.dataAddress()
                + (selfTestDeclareEcn ? " [self-test: declares ECN]" : "") + " (Ctrl-C to stop)");
            Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));
            done.await();
        }
        return 0;
    }
}
