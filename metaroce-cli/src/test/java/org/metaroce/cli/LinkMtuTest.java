// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;

/** The default path MTU never makes a datagram larger than the link [ENC-020], [ENC-021]. */
class LinkMtuTest {
    @Test
    void pathMtuFitsTheLink() {
        assertThat(LinkMtu.pathMtuFor(1500, false)).isEqualTo(1024);
        assertThat(LinkMtu.pathMtuFor(1500, true)).isEqualTo(1024);
        assertThat(LinkMtu.pathMtuFor(9000, false)).isEqualTo(4096);
        assertThat(LinkMtu.pathMtuFor(65536, false)).isEqualTo(4096);
        assertThat(LinkMtu.pathMtuFor(4196, false)).isEqualTo(4096);
        assertThat(LinkMtu.pathMtuFor(4195, false)).isEqualTo(2048);
        assertThat(LinkMtu.pathMtuFor(576, false)).isEqualTo(256);
        for (int link = 600; link <= 9000; link += 7) {
            final int pmtu = LinkMtu.pathMtuFor(link, false);
            assertThat(20 + 8 + 68 + pmtu + 4).as("link %d", link).isLessThanOrEqualTo(link);
        }
    }

    @Test
    void loopbackAllowsThePreferredSize() throws Exception {
        assertThat(LinkMtu.towards(InetAddress.getLoopbackAddress())).isEqualTo(LinkMtu.PREFERRED);
    }
}
