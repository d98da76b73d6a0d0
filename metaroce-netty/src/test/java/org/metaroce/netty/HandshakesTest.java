// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.Test;
import org.metaroce.core.connection.CmEventType;

/**
 * {@link Handshakes} on its own, with plain objects as connections: each outcome reaches the
 * caller once, with what it needs to say what failed, and connections are told apart by identity.
 */
class HandshakesTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("192.0.2.1", 4796);
    private final Handshakes<Object> handshakes = new Handshakes<>();

    @Test
    void establishedCompletesTheCallerWithItsConnectionOnce() {
        final Object c = new Object();
        final CompletableFuture<Object> f = start(c, true);
        handshakes.established(c);
        assertThat(f).isCompletedWithValue(c);
        assertThat(handshakes.size()).isZero();
        handshakes.failed(c, CmEventType.DISCONNECTED, "later");
        assertThat(f).as("the outcome is final").isCompletedWithValue(c);
    }

    @Test
    void aRejectionCarriesTheServersReasonAndPrivateData() {
        final Object c = new Object();
        final CompletableFuture<Object> f = start(c, true);
        handshakes.rejected(c, 28, new byte[] {1, 2});
        assertThat(f).isCompletedExceptionally();
        final Throwable cause = causeOf(f);
        assertThat(cause).isInstanceOf(ConnectionRejectedException.class);
        final ConnectionRejectedException r = (ConnectionRejectedException) cause;
        assertThat(r.reason()).isEqualTo(28);
        assertThat(r.privateData()).containsExactly(1, 2);
    }

    @Test
    void aFailureSaysWhichAttemptFailedAndHow() {
        final Object client = new Object();
        final Object accepted = new Object();
        final CompletableFuture<Object> connect = start(client, true);
        final CompletableFuture<Object> accept = start(accepted, false);
        handshakes.failed(client, CmEventType.UNREACHABLE, "no answer");
        handshakes.failed(accepted, CmEventType.CONNECT_ERROR, "the handshake failed");
        assertThat(causeOf(connect)).isInstanceOf(ConnectionFailedException.class)
            .hasMessage("connection to " + SERVER + " (service 7) failed: no answer");
        assertThat(((ConnectionFailedException) causeOf(connect)).event()).isEqualTo(CmEventType.UNREACHABLE);
        assertThat(causeOf(accept)).hasMessage("accepted connection from " + SERVER
            + " (service 7) failed: the handshake failed");
    }

    @Test
    void anAbandonedAttemptHandsBackItsConnectionOnce() {
        final Object c = new Object();
        final Object other = new Object();
        final CompletableFuture<Object> f = start(c, true);
        start(other, true);
        assertThat(handshakes.abandoned(f)).isSameAs(c);
        assertThat(handshakes.abandoned(f)).as("already gone").isNull();
        assertThat(handshakes.size()).isEqualTo(1);
        handshakes.notStarted(other);
        assertThat(handshakes.size()).isZero();
    }

    @Test
    void connectionsAreToldApartByIdentityNotEquality() {
        final String a = new String("conn");
        final String b = new String("conn");
        final Handshakes<String> byIdentity = new Handshakes<>();
        final CompletableFuture<String> fa = new CompletableFuture<>();
        final CompletableFuture<String> fb = new CompletableFuture<>();
        byIdentity.started(a, new Handshakes.Pending<>(fa, SERVER, 7, true));
        byIdentity.started(b, new Handshakes.Pending<>(fb, SERVER, 7, true));
        byIdentity.established(b);
        assertThat(fb).isCompletedWithValue(b);
        assertThat(fa).isNotDone();
    }

    private CompletableFuture<Object> start(final Object connection, final boolean client) {
        final CompletableFuture<Object> f = new CompletableFuture<>();
        handshakes.started(connection, new Handshakes.Pending<>(f, SERVER, 7, client));
        return f;
    }

    private static Throwable causeOf(final CompletableFuture<?> f) {
        try {
            f.join();
            throw new AssertionError("not failed: " + f);
        } catch (final CompletionException ex) {
            return ex.getCause();
        }
    }
}
