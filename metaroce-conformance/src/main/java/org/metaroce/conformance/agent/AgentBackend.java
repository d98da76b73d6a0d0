// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance.agent;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What an agent does with one command of the contract (specification 12.4.2). The server owns the
 * framing (JSON lines, ids, error replies); a backend only maps commands to an implementation.
 */
public interface AgentBackend extends AutoCloseable {
    /**
     * Executes one command.
     *
     * @param command the command name ({@link AgentProtocol})
     * @param request the whole request object (its arguments)
     * @param reply the reply object to fill with results ("id" and "ok" are added by the server)
     * @throws AgentException when the command fails, with the contract's error code
     */
    void execute(String command, ObjectNode request, ObjectNode reply);

    @Override
    void close();
}
