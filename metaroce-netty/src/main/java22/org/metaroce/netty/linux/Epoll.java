// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * Blocking waits for sockets: an {@code epoll} instance with an {@code eventfd} that
 * {@link #wakeUp()} signals from any thread. Busy polling needs none of this (it is calling
 * {@link LinuxUdpSocket#receive} in a loop); this is for a thread that has nothing to do until a
 * datagram arrives or another thread hands it work.
 *
 * <p>{@link #await(int)} runs on one thread; {@link #wakeUp()} on any. Neither allocates.
 */
public final class Epoll implements AutoCloseable {
    /** {@code EPOLLIN}: readable. */
    public static final int EPOLLIN = 0x001;
    /** {@code EPOLLOUT}: writable. */
    public static final int EPOLLOUT = 0x004;
    /** {@code EPOLLERR}: an error is pending (always reported). */
    public static final int EPOLLERR = 0x008;

    /** The token of the wake-up eventfd; {@link #add} refuses it. */
    private static final long WAKE_TOKEN = -1L;

    /**
     * {@code struct epoll_event} is {@code __attribute__((packed))} on x86_64 only
     * ({@code EPOLL_PACKED} in {@code <linux/eventpoll.h>}): 12 bytes with the data at 4 there,
     * 16 bytes with the data at 8 (natural alignment) on aarch64.
     */
    private static final boolean PACKED = isX86();
    private static final int EVENT_SIZE = PACKED ? 12 : 16;
    private static final int DATA_OFFSET = PACKED ? 4 : 8;

    /** Set once by {@link #close}; read and written under this object's monitor. */
    private boolean closed;
    private final Arena arena;
    private final int epfd;
    private final int eventfd;
    private final int maxEvents;
    private final MemorySegment events;
    /** errno of the setup calls ({@code epoll_create1}, {@code eventfd}). */
    private final MemorySegment capture;
    private final MemorySegment counter;
    /** Holds 1: what every wake-up writes; never changes, so any thread may pass it. */
    private final MemorySegment one;
    /**
     * The {@code struct epoll_event} of {@code epoll_ctl}, reused under this object's monitor: a
     * send socket is watched for writability on the data path, which must not allocate.
     */
    private final MemorySegment control;
    /** The {@code struct timespec} of {@link #awaitNanos}, owning thread only. */
    private final MemorySegment timeout;
    /** Whether {@code epoll_pwait2} may be tried: the kernel has not said ENOSYS. */
    private boolean nanosecondWaits = true;
    private final long[] readyTokens;
    private final int[] readyEvents;
    private int ready;
    private boolean wokenUp;

    /**
     * @param maxEvents readiness events one {@link #await} reports at most
     * @throws ErrnoException if {@code epoll_create1} or {@code eventfd} fail
     */
    public Epoll(final int maxEvents) throws ErrnoException {
        if (maxEvents < 1) {
            throw new IllegalArgumentException("maxEvents must be positive, got " + maxEvents);
        }
        this.maxEvents = maxEvents;
        arena = Arena.ofShared();
        // One slot more than asked: the eventfd's event must not crowd out a socket's.
        events = arena.allocate((long) (maxEvents + 1) * EVENT_SIZE, 8);
        capture = Libc.allocateCapture(arena);
        counter = arena.allocate(JAVA_LONG);
        one = arena.allocate(JAVA_LONG);
        one.set(JAVA_LONG, 0, 1L);
        control = arena.allocate(16, 8);
        timeout = arena.allocate(16, 8);
        readyTokens = new long[maxEvents + 1];
        readyEvents = new int[maxEvents + 1];
        int ep = -1;
        int ev = -1;
        try {
            ep = (int) Libc.EPOLL_CREATE1.invokeExact(capture, Uapi.EPOLL_CLOEXEC);
            if (ep < 0) {
                throw new ErrnoException("epoll_create1", Libc.errno(capture));
            }
            ev = (int) Libc.EVENTFD.invokeExact(capture, 0, Uapi.EFD_NONBLOCK | Uapi.EFD_CLOEXEC);
            if (ev < 0) {
                throw new ErrnoException("eventfd", Libc.errno(capture));
            }
            control(ep, Uapi.EPOLL_CTL_ADD, ev, EPOLLIN, WAKE_TOKEN);
        } catch (final ErrnoException | RuntimeException | Error ex) {
            closeQuietly(ev);
            closeQuietly(ep);
            arena.close();
            throw ex;
        } catch (final Throwable t) {
            arena.close();
            throw new IllegalStateException(t);
        }
        epfd = ep;
        eventfd = ev;
    }

    /**
     * Watches {@code fd} for {@code events}.
     *
     * @param token what {@link #readyToken(int)} reports for it (any value but -1)
     * @throws ErrnoException e.g. {@code EEXIST} when it is watched already
     */
    public void add(final int fd, final int events, final long token) throws ErrnoException {
        if (token == WAKE_TOKEN) {
            throw new IllegalArgumentException("token -1 is the wake-up's");
        }
        control(epfd, Uapi.EPOLL_CTL_ADD, fd, events, token);
    }

    /** Watches {@code socket} for readability ({@link #EPOLLIN}). */
    public void add(final LinuxUdpSocket socket, final long token) throws ErrnoException {
        add(socket.fd(), EPOLLIN, token);
    }

    /** Changes what {@code fd} is watched for. */
    public void modify(final int fd, final int events, final long token) throws ErrnoException {
        control(epfd, Uapi.EPOLL_CTL_MOD, fd, events, token);
    }

    /** Stops watching {@code fd}. */
    public void remove(final int fd) throws ErrnoException {
        control(epfd, Uapi.EPOLL_CTL_DEL, fd, 0, 0);
    }

    /**
     * Waits until a watched descriptor is ready, {@link #wakeUp()} is called, or the timeout
     * passes. A wake-up that came before the call makes it return at once.
     *
     * @param timeoutMillis -1: no timeout; 0: just look
     * @return descriptors ready (their tokens and events by index), 0 on timeout, wake-up or a
     *     signal ({@link #wokenUp()} tells a wake-up apart)
     */
    public int await(final int timeoutMillis) {
        final long n;
        try {
            n = (long) Syscalls.EPOLL_PWAIT.invokeExact(epfd, events, maxEvents + 1, timeoutMillis, MemorySegment.NULL,
                0L);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        return harvest((int) n);
    }

    /**
     * As {@link #await(int)}, with a timeout to the nanosecond where the system allows it
     * ({@code epoll_pwait2}; see {@link #nanosecondWaits()}), else rounded up to whole
     * milliseconds. A wait for a deadline closer than a millisecond can so still end when a
     * datagram arrives, instead of sleeping blind until the deadline or a millisecond past it.
     *
     * @param timeoutNs at least 0 (0: just look)
     * @return as {@link #await(int)}
     */
    public int awaitNanos(final long timeoutNs) {
        if (nanosecondWaits) {
            final long ns = Math.max(0, timeoutNs);
            timeout.set(JAVA_LONG, 0, ns / 1_000_000_000L);
            timeout.set(JAVA_LONG, 8, ns % 1_000_000_000L);
            final long n;
            try {
                n = (long) Syscalls.EPOLL_PWAIT2.invokeExact(epfd, events, maxEvents + 1, timeout, MemorySegment.NULL,
                    0L);
            } catch (final RuntimeException | Error ex) {
                throw ex;
            } catch (final Throwable t) {
                throw new IllegalStateException(t);
            }
            if (n != -Errno.ENOSYS) {
                return harvest((int) n);
            }
            // A kernel before 5.11 (or, through libc, a glibc before 2.35): milliseconds from now on.
            nanosecondWaits = false;
        }
        final long ms = (Math.max(0, timeoutNs) + 999_999) / 1_000_000;
        return await((int) Math.min(ms, Integer.MAX_VALUE));
    }

    /**
     * @return whether {@link #awaitNanos} waits to the nanosecond ({@code epoll_pwait2} not refused
     *     by the kernel so far), not rounded up to whole milliseconds
     */
    public boolean nanosecondWaits() {
        return nanosecondWaits;
    }

    /** Records what a wait returned: the ready descriptors, and whether a wake-up was among them. */
    private int harvest(final int n) {
        ready = 0;
        wokenUp = false;
        // n < 0 is EINTR (a signal) in practice: the caller's loop simply waits again.
        for (int i = 0; i < n; i++) {
            final long offset = (long) i * EVENT_SIZE;
            final long token = events.get(JAVA_LONG_UNALIGNED, offset + DATA_OFFSET);
            if (token == WAKE_TOKEN) {
                wokenUp = true;
                drainWakeUps();
            } else {
                readyTokens[ready] = token;
                readyEvents[ready] = events.get(JAVA_INT_UNALIGNED, offset);
                ready++;
            }
        }
        return ready;
    }

    /** @return whether the last {@link #await} saw a {@link #wakeUp()} */
    public boolean wokenUp() {
        return wokenUp;
    }

    /** @return the token of the {@code i}-th ready descriptor of the last {@link #await} */
    public long readyToken(final int i) {
        return readyTokens[checkIndex(i)];
    }

    /** @return the events ({@link #EPOLLIN}, ...) of the {@code i}-th ready descriptor */
    public int readyEvents(final int i) {
        return readyEvents[checkIndex(i)];
    }

    /**
     * Makes the current or next {@link #await} return; any thread, any number of times, also after
     * {@link #close} (then it does nothing). Serialised with close: a write racing the close would
     * hold the arena's memory while it is freed (the close then failed and the driver thread died
     * before it reported its end), or write into a descriptor number already reused.
     */
    public synchronized void wakeUp() {
        if (closed) {
            return;
        }
        try {
            final long ignored = (long) Libc.WRITE.invokeExact(eventfd, one, 8L);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Closes the epoll instance and the eventfd (watched sockets stay open); later calls do nothing. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeQuietly(eventfd);
        closeQuietly(epfd);
        arena.close();
    }

    private void drainWakeUps() {
        try {
            // Non-blocking eventfd: one read returns the sum of all writes and resets it to 0.
            final long ignored = (long) Syscalls.READ.invokeExact(eventfd, counter, 8L);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** {@code epoll_ctl}; allocates nothing unless it fails (the label is built for the exception only). */
    private synchronized void control(final int ep, final int op, final int fd, final int events, final long token)
        throws ErrnoException {
        if (closed) {
            throw new ErrnoException(label(op, fd), Errno.EBADF);
        }
        control.set(JAVA_INT_UNALIGNED, 0, events);
        control.set(JAVA_LONG_UNALIGNED, DATA_OFFSET, token);
        final long r;
        try {
            r = (long) Syscalls.EPOLL_CTL.invokeExact(ep, op, fd, control);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
        if (r < 0) {
            throw new ErrnoException(label(op, fd), (int) -r);
        }
    }

    private static String label(final int op, final int fd) {
        final String name = op == Uapi.EPOLL_CTL_ADD ? "ADD" : op == Uapi.EPOLL_CTL_MOD ? "MOD" : "DEL";
        return "epoll_ctl(" + name + " " + fd + ")";
    }

    private static void closeQuietly(final int fd) {
        if (fd < 0) {
            return;
        }
        try (Arena call = Arena.ofConfined()) {
            final int ignored = (int) Libc.CLOSE.invokeExact(Libc.allocateCapture(call), fd);
        } catch (final RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private int checkIndex(final int i) {
        if (i < 0 || i >= ready) {
            throw new IndexOutOfBoundsException("event " + i + " of " + ready);
        }
        return i;
    }

    private static boolean isX86() {
        final String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return arch.equals("amd64") || arch.equals("x86_64");
    }
}
