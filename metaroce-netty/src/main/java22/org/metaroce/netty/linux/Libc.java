// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

/**
 * Downcall handles of the libc functions the sockets use, bound once. Loading this class performs
 * the JDK's restricted linker calls: {@link NativeUdp} loads it to find out whether native access
 * is granted.
 *
 * <p>Every handle that can fail takes, before the C arguments, a segment of
 * {@link #CAPTURE_LAYOUT} into which the linker copies {@code errno} right after the call (the JVM
 * itself may change errno before Java code could read it). The handles are {@code static final}
 * so that the JIT inlines the downcall stubs; callers use {@code invokeExact} with exactly these
 * types, which does not box.
 *
 * <p>These handles are for setup calls, and for {@link Syscalls}' fallback. A call with errno
 * capture allocates 40 B unless C2 inlines the JDK's check of the capture segment
 * ({@code SharedUtils.checkCaptureSegment} slices it on every call) into the caller, which it may
 * or may not do. So the data path ({@code sendmmsg}, {@code send}, {@code recvmmsg},
 * {@code recvmsg}, the epoll waits, {@code epoll_ctl}, {@code getsockopt(SO_ERROR)} and the
 * eventfd's {@code read}) calls the kernel through {@link Syscalls}, whose result is the negated
 * errno itself: nothing captured, nothing allocated whatever the JIT inlines, and errno exact,
 * since no errno is read at all. Handles without capture, retried through these on -1, lose the
 * error a socket holds for its next call; errno read through {@code __errno_location()} after the
 * call may be the JVM's (a safepoint's wait barrier calls {@code futex} through {@code syscall()});
 * see {@link Syscalls}. {@code size_t}/{@code ssize_t} are {@code long} and
 * {@code socklen_t} is {@code int}: the 64-bit Linux ABIs (x86_64, aarch64) {@link NativeUdp}
 * admits.
 */
@SuppressWarnings("restricted")
final class Libc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** The layout of the segment errno is captured into. */
    static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET = CAPTURE_LAYOUT.byteOffset(PathElement.groupElement("errno"));

    /** {@code int socket(int domain, int type, int protocol)}. */
    static final MethodHandle SOCKET = withErrno("socket", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
    /** {@code int bind(int fd, const struct sockaddr *addr, socklen_t len)}. */
    static final MethodHandle BIND = withErrno("bind", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    /** {@code int connect(int fd, const struct sockaddr *addr, socklen_t len)}. */
    static final MethodHandle CONNECT = withErrno("connect", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT);
    /** {@code int getsockname(int fd, struct sockaddr *addr, socklen_t *len)}. */
    static final MethodHandle GETSOCKNAME = withErrno("getsockname", JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
    /** {@code int setsockopt(int fd, int level, int name, const void *value, socklen_t len)}. */
    static final MethodHandle SETSOCKOPT = withErrno("setsockopt", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
        ADDRESS, JAVA_INT);
    /** {@code int getsockopt(int fd, int level, int name, void *value, socklen_t *len)}. */
    static final MethodHandle GETSOCKOPT = withErrno("getsockopt", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT,
        ADDRESS, ADDRESS);
    /** {@code int close(int fd)}. */
    static final MethodHandle CLOSE = withErrno("close", JAVA_INT, JAVA_INT);
    /** {@code int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)}. */
    static final MethodHandle SENDMMSG = withErrno("sendmmsg", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    /**
     * {@code ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr
     * *to, socklen_t tolen)}: {@code send} is this with no address. The buffer is a raw address
     * ({@code long}): a pointer and a 64-bit integer travel alike in the ABIs {@link NativeUdp}
     * admits, and no segment has to be made per call.
     */
    static final MethodHandle SENDTO = withErrno("sendto", JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT,
        ADDRESS, JAVA_INT);
    /**
     * {@code int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
     * struct timespec *timeout)}.
     */
    static final MethodHandle RECVMMSG = withErrno("recvmmsg", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
        ADDRESS);
    /**
     * {@code ssize_t recvmsg(int fd, struct msghdr *msg, int flags)}: the error queue's reads and a
     * spinning reader's single reads. An ordinary downcall: linked critical
     * ({@code Linker.Option.critical}, no thread-state transitions) a call cost the same, 158 ns
     * (JDK 25, a failing call in a loop), so it keeps the safepoint checks.
     */
    static final MethodHandle RECVMSG = withErrno("recvmsg", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT);
    /** {@code int epoll_create1(int flags)}. */
    static final MethodHandle EPOLL_CREATE1 = withErrno("epoll_create1", JAVA_INT, JAVA_INT);
    /** {@code int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)}. */
    static final MethodHandle EPOLL_CTL = withErrno("epoll_ctl", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS);
    /** {@code int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)}. */
    static final MethodHandle EPOLL_WAIT = withErrno("epoll_wait", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
    /**
     * {@code int epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct
     * timespec *timeout, const sigset_t *sigmask)} (glibc 2.35, Linux 5.11): a wait to the
     * nanosecond, where {@code epoll_wait} counts whole milliseconds. Null where libc lacks it.
     */
    static final MethodHandle EPOLL_PWAIT2 = optionalWithErrno("epoll_pwait2", JAVA_INT, JAVA_INT, ADDRESS,
        JAVA_INT, ADDRESS, ADDRESS);
    /** {@code int eventfd(unsigned int initval, int flags)}. */
    static final MethodHandle EVENTFD = withErrno("eventfd", JAVA_INT, JAVA_INT, JAVA_INT);
    /** {@code int sched_setaffinity(pid_t pid, size_t cpusetsize, const cpu_set_t *mask)}. */
    static final MethodHandle SCHED_SETAFFINITY = withErrno("sched_setaffinity", JAVA_INT, JAVA_INT, JAVA_LONG,
        ADDRESS);
    /** {@code int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask)}. */
    static final MethodHandle SCHED_GETAFFINITY = withErrno("sched_getaffinity", JAVA_INT, JAVA_INT, JAVA_LONG,
        ADDRESS);
    /** {@code ssize_t read(int fd, void *buf, size_t count)}. */
    static final MethodHandle READ = withErrno("read", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);
    /**
     * {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)}, the
     * address as a {@code long} (-1 is {@code MAP_FAILED}): the page of {@link Syscalls}' stubs.
     */
    static final MethodHandle MMAP = withErrno("mmap", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_LONG);
    /** {@code int mprotect(void *addr, size_t length, int prot)}. */
    static final MethodHandle MPROTECT = withErrno("mprotect", JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT);
    /** {@code int munmap(void *addr, size_t length)}. */
    static final MethodHandle MUNMAP = withErrno("munmap", JAVA_INT, JAVA_LONG, JAVA_LONG);
    /**
     * {@code ssize_t write(int fd, const void *buf, size_t count)}, without errno: its one use, an
     * eventfd wake-up from any thread, has no failure to react to.
     */
    static final MethodHandle WRITE = LINKER.downcallHandle(symbol("write"),
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));

    /**
     * {@code int clock_gettime(clockid_t clockid, struct timespec *tp)}, without errno: the clocks
     * asked for exist on every Linux (a vDSO call, no system call).
     */
    static final MethodHandle CLOCK_GETTIME = LINKER.downcallHandle(symbol("clock_gettime"),
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    private Libc() {
    }

    /** @return CLOCK_REALTIME in ns, read into {@code timespec} (16 bytes), the clock of receive timestamps */
    static long realtimeNs(final MemorySegment timespec) {
        try {
            final int r = (int) CLOCK_GETTIME.invokeExact(Uapi.CLOCK_REALTIME, timespec);
            if (r != 0) {
                return Long.MIN_VALUE;
            }
        } catch (final Throwable t) {
            throw new IllegalStateException("clock_gettime failed", t);
        }
        return timespec.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) * 1_000_000_000L
            + timespec.get(java.lang.foreign.ValueLayout.JAVA_LONG, 8);
    }

    /** @return a segment to capture errno into, owned by {@code arena} */
    static MemorySegment allocateCapture(final Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** @return the errno the last call through {@code capture} left */
    static int errno(final MemorySegment capture) {
        return capture.get(JAVA_INT, ERRNO_OFFSET);
    }

    private static MethodHandle withErrno(final String name, final java.lang.foreign.MemoryLayout result,
                                          final java.lang.foreign.MemoryLayout... args) {
        return LINKER.downcallHandle(symbol(name), FunctionDescriptor.of(result, args), CAPTURE_ERRNO);
    }

    /** @return the handle, or null when libc has no such function (an older glibc) */
    private static MethodHandle optionalWithErrno(final String name, final java.lang.foreign.MemoryLayout result,
                                                  final java.lang.foreign.MemoryLayout... args) {
        return LINKER.defaultLookup().find(name)
            .map(address -> LINKER.downcallHandle(address, FunctionDescriptor.of(result, args), CAPTURE_ERRNO))
            .orElse(null);
    }

    private static MemorySegment symbol(final String name) {
        return LINKER.defaultLookup().find(name)
            .orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
    }
}
