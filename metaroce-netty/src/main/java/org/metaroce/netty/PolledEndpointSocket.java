package org.metaroce.netty;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.function.Consumer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoint socket of the POLLED receive path ({@link ReceivePath}): a non-blocking JDK
 * {@link DatagramChannel} that the owning thread reads in each duty cycle, one {@code recvfrom} per
 * datagram, into one reused direct buffer. No readiness poll precedes a read and nothing is
 * allocated per datagram: the JDK keeps the last sender's address and returns the same object while
 * the sender does not change, so a new address object appears only when consecutive datagrams come
 * from different source ports. Connection-manager packets leave from here too [ENC-003].
 *
 * <p>Owning thread only.
 */
final class PolledEndpointSocket implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PolledEndpointSocket.class);
    /** Readiness is the whole answer of a wait: no key is looked at. */
    private static final Consumer<SelectionKey> IGNORE_KEY = key -> { };

    private final DatagramChannel channel;
    private final ByteBuffer receiveBuffer;
    private final UnsafeBuffer receiveView;
    private final InetSocketAddress localAddress;
    private final DriverCounters counters;
    private final int maxDatagramBytes;
    /** Opened on the first {@link #awaitReadable}: a device that never blocks needs none. */
    private volatile Selector selector;

    /**
     * Opens and binds the socket.
     *
     * @param bind local address and port (0 for an ephemeral port)
     * @param maxDatagramBytes largest datagram read whole (longer ones arrive truncated and fail validation)
     * @param receiveBufferBytes SO_RCVBUF
     * @param sendBufferBytes SO_SNDBUF
     * @param trafficClass IP_TOS / IPV6_TCLASS value (DSCP in the upper six bits)
     * @param counters where send failures are counted
     * @throws IOException if the socket cannot be opened or bound
     */
    PolledEndpointSocket(final InetSocketAddress bind, final int maxDatagramBytes, final int receiveBufferBytes,
                         final int sendBufferBytes, final int trafficClass, final DriverCounters counters)
        throws IOException {
        this.counters = counters;
        this.maxDatagramBytes = maxDatagramBytes;
        final DatagramChannel opened = DatagramChannel.open(bind.getAddress() instanceof java.net.Inet6Address
            ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        try {
            opened.setOption(StandardSocketOptions.SO_RCVBUF, receiveBufferBytes);
            opened.setOption(StandardSocketOptions.SO_SNDBUF, sendBufferBytes);
            opened.setOption(StandardSocketOptions.IP_TOS, trafficClass);
            opened.configureBlocking(false);
            opened.bind(bind);
        } catch (final IOException | RuntimeException ex) {
            opened.close();
            throw ex;
        }
        this.channel = opened;
        this.localAddress = (InetSocketAddress) opened.getLocalAddress();
        this.receiveBuffer = BufferUtil.allocateDirectAligned(align(maxDatagramBytes), 64);
        this.receiveBuffer.limit(maxDatagramBytes);
        this.receiveView = new UnsafeBuffer(receiveBuffer);
    }

    private static int align(final int bytes) {
        return (bytes + 63) & ~63;
    }

    /** @return the bound address */
    InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * Reads what has arrived, up to {@code maxDatagrams}, handing each datagram to {@code handler}.
     *
     * @param completions when not null, reading stops after a datagram that produced a completion
     *     (the count it returns changed), so the application can react before later datagrams are read
     * @return number of datagrams read
     */
    int receive(final InboundHandler handler, final int maxDatagrams,
                final java.util.function.LongSupplier completions) {
        int read = 0;
        final long completionsBefore = completions == null ? 0 : completions.getAsLong();
        try {
            while (read < maxDatagrams) {
                receiveBuffer.clear().limit(maxDatagramBytes);
                final SocketAddress sender = channel.receive(receiveBuffer);
                if (sender == null) {
                    break;
                }
                read++;
                handler.deliverPolled(receiveView, receiveBuffer.position(), (InetSocketAddress) sender);
                if (completions != null && completions.getAsLong() != completionsBefore) {
                    break;
                }
            }
        } catch (final IOException ex) {
            // ICMP errors reported on the socket, a closed channel: UDP is lossy anyway.
            counters.increment(DriverCounter.RECEIVE_ERRORS);
            LOG.debug("receive on {} failed: {}", localAddress, ex.toString());
        } finally {
            if (read > 0) {
                handler.endPolledBurst();
            }
        }
        return read;
    }

    /**
     * Blocks until a datagram is there to read, {@link #wakeup()} is called, or {@code timeoutMs}
     * passes (owning thread). Reads stay the duty cycle's: this only waits for readiness.
     *
     * @param timeoutMs longest wait in milliseconds, at least 1
     * @throws IOException if the selector cannot be opened or the wait fails
     */
    void awaitReadable(final long timeoutMs) throws IOException {
        Selector current = selector;
        if (current == null) {
            current = Selector.open();
            channel.register(current, SelectionKey.OP_READ);
            selector = current;
        }
        // The Consumer form reports ready keys without adding them to the selected-key set (no
        // allocation per wake-up); readiness alone is the answer.
        current.select(IGNORE_KEY, Math.max(1, timeoutMs));
    }

    /** Ends a current (or the next) {@link #awaitReadable} at once; any thread. */
    void wakeup() {
        final Selector current = selector;
        if (current != null) {
            current.wakeup();
        }
    }

    /**
     * Sends one datagram from the endpoint port.
     *
     * @param datagram the bytes between position and limit (consumed)
     * @param recipient destination
     * @return whether the kernel took it
     */
    boolean send(final ByteBuffer datagram, final InetSocketAddress recipient) {
        try {
            if (channel.send(datagram, recipient) > 0) {
                return true;
            }
            counters.increment(DriverCounter.SEND_ERRORS); // socket buffer full
        } catch (final IOException ex) {
            counters.increment(DriverCounter.SEND_ERRORS);
            LOG.debug("send from {} to {} failed: {}", localAddress, recipient, ex.toString());
        }
        return false;
    }

    @Override
    public void close() {
        try {
            final Selector current = selector;
            if (current != null) {
                current.close();
            }
        } catch (final IOException ex) {
            LOG.debug("closing the selector of {} failed", localAddress, ex);
        }
        try {
            channel.close();
        } catch (final IOException ex) {
            LOG.debug("closing {} failed", localAddress, ex);
        }
    }
}
