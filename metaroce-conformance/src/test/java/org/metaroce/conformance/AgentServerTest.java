// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.metaroce.conformance.agent.AgentBackend;
import org.metaroce.conformance.agent.AgentClient;
import org.metaroce.conformance.agent.AgentException;
import org.metaroce.conformance.agent.AgentServer;
import org.metaroce.conformance.agent.Json;

/** The control channel answers bad input precisely and stays usable [CONF-009]. */
class AgentServerTest {
    /** A backend that echoes its arguments for hello and fails reset. */
    private static final class Echo implements AgentBackend {
        @Override
        public void execute(final String command, final ObjectNode request, final ObjectNode reply) {
            if (command.equals("reset")) {
                throw new AgentException(AgentException.FAILED, "nope");
            }
            reply.put("seen", command);
            reply.put("n", Json.requireInt(request, "version", 0, 5));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void malformedLinesGetBadRequestAndTheChannelStaysUsable() throws Exception {
        try (AgentServer server = new AgentServer(new Echo(), InetAddress.getLoopbackAddress(), 0);
             Socket s = new Socket(server.address().getAddress(), server.address().getPort())) {
            final Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
            final BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(),
                StandardCharsets.UTF_8));
            final String[] bad = {"{not json", "[1,2]", "{\"cmd\":\"hello\"}", "{\"id\":1,\"cmd\":\"hello\"} x",
                "{\"id\":2,\"id\":3,\"cmd\":\"hello\"}", "{\"id\":4,\"cmd\":\"frobnicate\"}",
                "{\"id\":5,\"cmd\":\"hello\",\"version\":\"seven\"}", "{\"id\":6,\"cmd\":\"hello\",\"version\":9}"};
            final String[] codes = {"BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST",
                "UNSUPPORTED", "BAD_REQUEST", "BAD_REQUEST"};
            for (int i = 0; i < bad.length; i++) {
                out.write(bad[i] + "\n");
                out.flush();
                final ObjectNode reply = Json.parseObject(in.readLine());
                assertThat(reply.get("ok").asBoolean()).as(bad[i]).isFalse();
                assertThat(reply.get("error").asText()).as(bad[i]).isEqualTo(codes[i]);
                assertThat(reply.get("message").asText()).as(bad[i]).isNotBlank();
            }
            out.write("{\"id\":7,\"cmd\":\"hello\",\"version\":1}\n");
            out.flush();
            final ObjectNode ok = Json.parseObject(in.readLine());
            assertThat(ok.get("ok").asBoolean()).isTrue();
            assertThat(ok.get("id").asInt()).isEqualTo(7);
            assertThat(ok.get("seen").asText()).isEqualTo("hello");
        }
    }

    @Test
    void clientSurfacesErrorCodes() {
        try (AgentServer server = new AgentServer(new Echo(), InetAddress.getLoopbackAddress(), 0);
             AgentClient client = new AgentClient(server.address(), 5000)) {
            final ObjectNode hello = AgentClient.request("hello");
            hello.put("version", 1);
            assertThat(client.call(hello).get("n").asInt()).isEqualTo(1);
            assertThatThrownBy(() -> client.call(AgentClient.request("reset")))
                .isInstanceOfSatisfying(AgentException.class, e -> assertThat(e.code()).isEqualTo("FAILED"))
                .hasMessageContaining("nope");
        }
    }
}
