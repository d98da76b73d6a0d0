// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.metaroce.core.engine.DatagramEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device's receive path above the transports: every datagram the endpoint socket reads, from
 * whichever transport, comes here and goes to {@link DatagramEndpoint#onDatagram} with its peer
 * id and the ECN codepoint the transport read. Here, once for all transports:
 * <ul>
 *   <li>the clock is read once per read batch ({@link #onBatchEnd()} or {@link #beginCycle()}
 *       makes the next datagram read it again), or taken from the transport, which read it after
 *       its receive call ({@link #onBatchClock(long)});</li>
 *   <li>a GRO-coalesced datagram is cut into the datagrams it holds, of the reported segment size;</li>
 *   <li>the sender's peer id comes from the {@link PeerTable}, from a raw address without allocation;</li>
 *   <li>an {@link InboundDropRule} and {@link InboundFaults}, when configured, drop or hold back datagrams;</li>
 *   <li>what the endpoint throws is counted and logged, never passed to the transport.</li>
 * </ul>
 *
 * <p>Owning thread only.
 */
final class ReceiveDispatcher implements DatagramReceiver {
    private static final Logger LOG = LoggerFactory.getLogger(ReceiveDispatcher.class);

    private final DatagramEndpoint endpoint;
    private final PeerTable peers;
    private final DriverCounters counters;
    private long batchNowNs;
    private boolean clockValid;
    private long errorsLogged;

    /** Datagrams picked to drop (null when off), before the seeded faults. */
    private InboundDropRule dropRule;
    /** Fault injection (null when off): the decisions, and the one datagram held back. */
    private SplittableRandom faultRandom;
    private InboundFaults faults;
    private UnsafeBuffer held;
    private int heldLength = -1;
    private int heldPeer;
    private int heldEcn;

    /** While reading with a stop at the first completion: the completion count to compare with, else null. */
    private LongSupplier completions;
    private long completionsBefore;

    ReceiveDispatcher(final DatagramEndpoint endpoint, final PeerTable peers, final DriverCounters counters) {
        this.endpoint = endpoint;
        this.peers = peers;
        this.counters = counters;
    }

    /** Turns on seeded loss and reordering of received datagrams (before the device starts). */
    void injectFaults(final InboundFaults profile, final int maxDatagramBytes) {
        faults = profile;
        faultRandom = new SplittableRandom(profile.seed());
        // Room for a whole GRO slot, as a transport that does not split coalesced datagrams reads that much.
        held = new UnsafeBuffer(new byte[Math.max(maxDatagramBytes, DeviceConfig.GRO_SLOT_BYTES)]);
    }

    /** Drops the datagrams {@code rule} picks, or none when null (before the device starts). */
    void dropRule(final InboundDropRule rule) {
        dropRule = rule;
    }

    /** Marks the start of a duty cycle: datagrams read from now on get a fresh timestamp. */
    void beginCycle() {
        clockValid = false;
    }

    /**
     * Reads a polled socket, up to {@code maxDatagrams}.
     *
     * @param socket the endpoint socket
     * @param stopOnCompletion when not null, reading stops after a datagram that produced a
     *     completion (the count it returns changed), so the application can react before later
     *     datagrams are read
     * @return datagrams read
     */
    int readFrom(final PolledUdpSocket socket, final int maxDatagrams, final LongSupplier stopOnCompletion) {
        completions = stopOnCompletion;
        completionsBefore = stopOnCompletion == null ? 0 : stopOnCompletion.getAsLong();
        try {
            return socket.receive(maxDatagrams);
        } catch (final java.io.IOException ex) {
            // ICMP errors reported on the socket, a closed socket: UDP is lossy anyway.
            counters.increment(DriverCounter.RECEIVE_ERRORS);
            LOG.debug("receive on {} failed: {}", socket.localAddress(), ex.toString());
            return 0;
        } finally {
            completions = null;
        }
    }

    @Override
    public boolean onDatagram(final DirectBuffer data, final int offset, final int length, final SourceAddress source,
                              final int ecn, final int segmentBytes) {
        return onDatagram(data, offset, length, source, ecn, segmentBytes, NO_ARRIVAL);
    }

    @Override
    public boolean onDatagram(final DirectBuffer data, final int offset, final int length, final SourceAddress source,
                              final int ecn, final int segmentBytes, final long arrivalNs) {
        if (!clockValid) {
            batchNowNs = System.nanoTime();
            clockValid = true;
        }
        try {
            final int peerId = source.lookupOrAssign(peers);
            // The kernel's stamp, never later than the batch's clock (read after the receive).
            final long arrival = arrivalNs == NO_ARRIVAL ? batchNowNs : Math.min(arrivalNs, batchNowNs);
            if (segmentBytes <= 0 || segmentBytes >= length) {
                deliver(data, offset, length, peerId, ecn, arrival);
            } else {
                // UDP GRO: the kernel coalesced datagrams of one flow back to back; each is a packet
                // (the stamp is the first one's: GRO holds a flow's datagrams for microseconds).
                for (int at = 0; at < length; at += segmentBytes) {
                    deliver(data, offset + at, Math.min(segmentBytes, length - at), peerId, ecn, arrival);
                }
            }
        } catch (final Throwable t) {
            counters.increment(DriverCounter.ENGINE_ERRORS);
            logError("the endpoint threw while processing a datagram", t);
        }
        return completions == null || completions.getAsLong() == completionsBefore;
    }

    @Override
    public void onBatchClock(final long nowNs) {
        // The transport's reading, taken after its receive call as this one would be: one read fewer per batch.
        batchNowNs = nowNs;
        clockValid = true;
    }

    @Override
    public void onBatchEnd() {
        if (heldLength >= 0) {
            try {
                releaseHeld(); // a held datagram waits at most until the end of its read batch
            } catch (final Throwable t) {
                counters.increment(DriverCounter.ENGINE_ERRORS);
                logError("the endpoint threw while processing a datagram", t);
            }
        }
        // The next batch reads the clock again.
        clockValid = false;
    }

    private void deliver(final DirectBuffer data, final int offset, final int length, final int peerId,
                         final int ecn, final long arrivalNs) {
        counters.increment(DriverCounter.DATAGRAMS_RECEIVED);
        counters.add(DriverCounter.BYTES_RECEIVED, length);
        if (dropRule != null && dropRule.drop(data, offset, length)) {
            counters.increment(DriverCounter.FAULT_DROPPED);
            return;
        }
        if (faults != null) {
            if (faultRandom.nextDouble() < faults.dropProbability()) {
                counters.increment(DriverCounter.FAULT_DROPPED);
                return;
            }
            if (heldLength < 0 && length <= held.capacity()
                && faultRandom.nextDouble() < faults.reorderProbability()) {
                // Copied: the transport reuses its receive memory as soon as this returns.
                held.putBytes(0, data, offset, length);
                heldLength = length;
                heldPeer = peerId;
                heldEcn = ecn;
                counters.increment(DriverCounter.FAULT_REORDERED);
                return;
            }
        }
        endpoint.onDatagram(batchNowNs, arrivalNs, data, offset, length, peerId, ecn);
        releaseHeld();
    }

    /** Delivers the datagram held back by fault injection, if any, now. */
    private void releaseHeld() {
        if (heldLength >= 0) {
            final int length = heldLength;
            heldLength = -1;
            endpoint.onDatagram(batchNowNs, held, 0, length, heldPeer, heldEcn);
        }
    }

    private void logError(final String what, final Throwable t) {
        // A bug that repeats on every packet must not flood the log: the first ten, then every 10000th.
        final long n = errorsLogged++;
        if (n < 10 || n % 10_000 == 0) {
            LOG.error("{} (occurrence {})", what, n + 1, t);
        }
    }
}
