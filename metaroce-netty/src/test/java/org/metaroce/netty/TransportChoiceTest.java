// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * {@link TransportChoice} on its own: the transport and receive path a configuration gets, and
 * the combinations refused before any socket opens, whether or not the native transport is
 * available on this host (the transport is handed in where it matters).
 */
class TransportChoiceTest {
    @Test
    void aNettyTransportAskedForIsTheOneUsed() {
        assertThat(TransportChoice.transport(new DeviceConfig().transport(Transport.NIO))).isEqualTo(Transport.NIO);
    }

    @Test
    void autoWithTheBatchedPathTakesTheBestNettyTransport() {
        final DeviceConfig config = new DeviceConfig().transport(Transport.AUTO).receivePath(ReceivePath.BATCHED);
        assertThat(TransportChoice.transport(config))
            .isEqualTo(Transport.epollAvailable() ? Transport.EPOLL : Transport.NIO);
    }

    @Test
    void theNativeTransportAlwaysPollsAndRefusesTheBatchedPath() {
        assertThat(TransportChoice.receivePath(new DeviceConfig(), Transport.NATIVE, true)).isEqualTo(ReceivePath.POLLED);
        assertThat(TransportChoice.receivePath(new DeviceConfig().gro(true), Transport.NATIVE, false))
            .as("the native reader takes GRO batches itself").isEqualTo(ReceivePath.POLLED);
        assertThatThrownBy(() -> TransportChoice.receivePath(new DeviceConfig().receivePath(ReceivePath.BATCHED),
            Transport.NATIVE, false)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("receivePath BATCHED needs a Netty transport");
    }

    @Test
    void onNettyThePathFollowsTheConfigurationAndARefusalNamesTheDevice() {
        assertThat(TransportChoice.receivePath(new DeviceConfig(), Transport.NIO, false)).isEqualTo(ReceivePath.POLLED);
        assertThat(TransportChoice.receivePath(new DeviceConfig(), Transport.NIO, true)).isEqualTo(ReceivePath.BATCHED);
        final DeviceConfig polledWithGro = new DeviceConfig().receivePath(ReceivePath.POLLED).gro(true);
        assertThatThrownBy(() -> TransportChoice.receivePath(polledWithGro, Transport.EPOLL, false))
            .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("cannot open device ")
            .hasMessageContaining("cannot use UDP GRO");
    }

    @Test
    void onlyTheNativeTransportReadsEcn() {
        assertThat(TransportChoice.readsEcn(Transport.NATIVE)).isTrue();
        assertThat(TransportChoice.readsEcn(Transport.EPOLL)).isFalse();
        assertThat(TransportChoice.readsEcn(Transport.NIO)).isFalse();
    }
}
