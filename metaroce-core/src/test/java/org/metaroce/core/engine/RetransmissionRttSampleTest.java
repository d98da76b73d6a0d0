package org.metaroce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.metaroce.core.verbs.SendFlags;
import org.metaroce.core.verbs.SendRequest;
import org.metaroce.core.verbs.WcStatus;
import org.metaroce.core.verbs.WrOpcode;
import org.metaroce.core.wire.Opcode;

/**
 * [REL-020]: an ACK whose Echoed Timestamp equals the Transmit Timestamp of its triggering PSN's
 * latest transmission is an RTT sample even when that transmission was a retransmission: the
 * echo names the copy, so Karn's ambiguity does not arise. A QP whose remaining packets have all
 * been retransmitted (after a burst of trims) otherwise keeps a stale SRTT and delay signal.
 */
class RetransmissionRttSampleTest {
    @Test
    @DisplayName("[REL-020] the ACK of a retransmission echoing its timestamp gives an RTT sample")
    void retransmissionIsSampled() {
        System.out.println("seed=1301");
        final TwoNodeFixture f = new TwoNodeFixture(1301).connect(1024);
        final boolean[] dropped = {false};
        // Lose the first transmission of the one WRITE: the RTO retransmits it, and its ACK is
        // the first the requester gets.
        f.wire.filter((from, to, buf, off, len, now) -> {
            if (from == f.a.node && !dropped[0] && buf.getByte(off + 1) == Opcode.WRITE.value()) {
                dropped[0] = true;
                return true;
            }
            return false;
        });
        f.a.qp.postSend(new SendRequest(1).wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
            .addSge(f.a.address(0), 1000, f.a.mr.lkey()).remoteAddr(f.b.address(0)).rkey(f.b.mr.rkey()));
        assertThat(f.runUntilCompletions(1, 0)).isTrue();
        assertThat(dropped[0]).isTrue();
        assertThat(f.a.sendCompletions.get(0).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(f.a.endpoint.counters().retransmits()).isEqualTo(1);
        assertThat(f.a.qp.smoothedRttNs()).as("SRTT from the retransmission's ACK").isPositive();
    }
}
