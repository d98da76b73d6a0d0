// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.metaroce.core.RandomSource;
import org.metaroce.core.SecureRandomSource;
import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;

/**
 * [GEN-005] initial PSNs, keys, QPNs and cookie secrets come from a cryptographically secure source
 * unless a seeded one is configured, and a seeded one can be injected for tests and simulations.
 */
class RandomSourceConfigTest {
    @Test
    void theDeviceUsesASecureSourceUnlessASeededOneIsConfigured() {
        assertThat(new DeviceConfig().randomSource()).isInstanceOf(SecureRandomSource.class);
        final SeededRandomSource seeded = new SeededRandomSource(5);
        assertThat(new DeviceConfig().randomSource(seeded).randomSource()).isSameAs(seeded);
    }

    @Test
    void aSeededSourceMakesQpnsAndKeysRepeatable() {
        final int[] first = draw(new SeededRandomSource(99));
        assertThat(draw(new SeededRandomSource(99))).as("the same seed, the same QPNs and rkeys").containsExactly(first);
        assertThat(draw(new SeededRandomSource(100))).as("another seed, other values").isNotEqualTo(first);
    }

    /** @return the QPNs of two queue pairs and the rkey of one region of an endpoint drawing from {@code random} */
    private static int[] draw(final RandomSource random) {
        final Endpoint ep = new Endpoint(new EndpointConfig(), random);
        final var pd = ep.allocateProtectionDomain();
        final var cq = ep.createCompletionQueue(4);
        final int q1 = ep.createQueuePair(pd, cq, cq, org.metaroce.core.engine.QueuePairCapabilities.defaults()).qpn();
        final int q2 = ep.createQueuePair(pd, cq, cq, org.metaroce.core.engine.QueuePairCapabilities.defaults()).qpn();
        final int rkey = pd.registerMemory(java.nio.ByteBuffer.allocateDirect(64), 0).rkey();
        return new int[] {q1, q2, rkey};
    }
}
