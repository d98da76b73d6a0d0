// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.ReferenceBackend;

/** The reference implementation behind an agent on loopback, for tests. */
final class ReferenceAgentFixture implements AutoCloseable {
    final AgentServer server;
    final ReferenceBackend backend;

    ReferenceAgentFixture() {
        this(false);
    }

    /** @param declareEcn the self-test variant that declares ECN (requester-side ECN cases) */
    ReferenceAgentFixture(final boolean declareEcn) {
        backend = new ReferenceBackend(InetAddress.getLoopbackAddress(), 0, declareEcn);
        server = new AgentServer(backend, InetAddress.getLoopbackAddress(), 0);
    }

    InetSocketAddress control() {
        return server.address();
    }

    @Override
    public void close() {
        server.close();
    }
}
