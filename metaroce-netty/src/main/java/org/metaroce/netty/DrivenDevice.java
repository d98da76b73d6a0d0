// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import java.net.InetSocketAddress;

/**
 * What whoever drives a device's duty cycles needs of the device: the steps of one cycle, when the
 * next one is due, and its release. A {@link DriverLoop} runs these steps for every device attached
 * to it (DEDICATED, SHARED); an INVOKER owner runs them from {@code doWork} ({@link InvokerRunner}).
 * The event loop is not here: the driver owns it, and runs it between {@link #beginIo()} and
 * {@link #readPolledSocket()} when {@link #needsEventLoopIo()} says so, once for all its devices.
 *
 * <p>Owning thread only, except where noted.
 */
interface DrivenDevice {
    /** Marks the start of a duty cycle: datagrams read from now on get a fresh timestamp. */
    void beginIo();

    /**
     * @return whether this cycle must poll the event loop for I/O: the BATCHED path reads there, and
     *     a POLLED device needs it only while a send socket waits to drain (and every
     *     {@value MetaRoceDevice#EVENT_LOOP_POLL_EVERY} cycles as a safety net); never on the native
     *     transport, none of whose sockets is in the event loop
     */
    boolean needsEventLoopIo();

    /** @return datagrams read from the endpoint socket on the POLLED path (0 on the BATCHED path) */
    int readPolledSocket();

    /**
     * @return datagrams read like {@link #readPolledSocket()}, stopping after the first that
     *     completes a work request (so that the application reacts before the rest is read)
     */
    int readPolledSocketUntilCompletion();

    /** @return work done running queued commands, polling the endpoint into the sink and flushing */
    int protocolCycle();

    /** @return when the device next needs a cycle ({@link Long#MAX_VALUE}: nothing due) */
    long nextDeadlineNs();

    /** @return {@link #nextDeadlineNs()}, or {@link Long#MAX_VALUE} once released */
    long nextDeadlineNsOnLoop();

    /** @return whether commands wait for the owning thread; any thread */
    boolean hasQueuedCommands();

    /** @return whether a send socket holds datagrams its full buffer did not take yet */
    boolean hasPendingOutbound();

    /**
     * @return the endpoint socket when the owning thread reads it (POLLED path), else null; any
     *     thread once the sockets are open (to wake a wait on it)
     */
    PolledUdpSocket polledSocket();

    /** @param watch where the sink registers send sockets whose buffer filled (see {@link WritabilityWatch}) */
    void watchWritabilityWith(WritabilityWatch watch);

    /** @return whether {@link #release()} ran */
    boolean isReleased();

    /**
     * Fails queued commands, closes the sockets and releases every buffer, in the device's order
     * (the runner's {@link ModeRunner#unwatchSockets()} and {@link ModeRunner#releaseEventLoop()}
     * among them). Idempotent.
     */
    void release();

    /** @return the bound endpoint socket address (null before the sockets open), for log messages */
    InetSocketAddress localAddress();
}
