// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Locale;

/**
 * The data path's system calls, each returning what the kernel returned: the count, or the
 * negated errno ({@code -EAGAIN}, {@code -ECONNREFUSED}, ...). No errno is read, so none is
 * captured: a call made through {@link Libc}'s handles with
 * {@code Linker.Option.captureCallState("errno")} passes its capture segment through the JDK's
 * {@code SharedUtils.checkCaptureSegment}, which returns a new slice of it on every call, 40 B that
 * escape analysis removes only when C2 inlines the whole downcall into its caller. Whether it does
 * depends on compile order; the data path must not allocate whatever the JIT inlines
 * ({@code NativeDataPathWorstCaseInliningTest} forbids that inlining).
 *
 * <p>Each call is a stub of four or five instructions, all of them in one page of their own, written
 * once when this class loads and then made read-only and executable ({@code mmap},
 * {@code mprotect}): mark the indirect call's target, load the system call's number, move the
 * fourth argument where the kernel wants it (x86_64 only), trap, return.
 * The C calling convention already puts the other arguments in the registers the kernel reads
 * them from, and the kernel's result, the negated errno on failure, comes back as the stub's.
 * libc's wrappers do no more for these calls than turn that result into -1 and errno. The stubs
 * exist for x86_64 alone, the one architecture they have run on; their numbers are those of
 * {@code <asm/unistd_64.h>}. On aarch64, the other architecture {@link NativeUdp} admits, the calls
 * go through libc (below) until stubs for it have run on an aarch64 host: a wrong instruction would
 * fault the process instead of falling back.
 *
 * <p>Exact errno was the first requirement, so the alternatives that keep libc's wrappers were
 * weighed against it and refused (docs/native-transport.md, "Errno without allocation"):
 * a handle without errno capture, retried through a capturing handle when it returns -1, loses
 * the error the kernel holds for a socket's next call ({@code sk_err}, an ICMP error): the first
 * call takes it, the retry then succeeds or finds {@code EAGAIN}, and a refused connected peer is
 * never reported (LinuxUdpSocketTest fails with it), and it offers a datagram dropped by a full qdisc
 * ({@code ENOBUFS}) twice; reading errno through {@code __errno_location()} after the call is not
 * exact either, since a thread that meets a safepoint poll on the way back may block in the VM,
 * whose wait barrier calls {@code futex} through libc's {@code syscall()} and so sets errno.
 *
 * <p>Where the stubs cannot be made (a system that refuses executable memory to the process, an
 * architecture without stubs), or a stub does not answer a call on a bad descriptor with
 * {@code -EBADF} when this class loads, each handle is the same call through libc with errno
 * captured into a segment of the calling thread, the same results: exact, allocation-free as far
 * as the JIT inlines it, as before. {@link #fallbackReason()} tells which.
 */
@SuppressWarnings("restricted")
final class Syscalls {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final int PAGE = 4096;
    /** Bytes per stub: each starts 16-byte aligned. */
    private static final int STUB_BYTES = 16;

    /** Why the stubs are not used, or null when they are. */
    private static final String FALLBACK_REASON;

    /** {@code sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)}. */
    static final MethodHandle SENDMMSG;
    /**
     * {@code sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
     * socklen_t tolen)}: {@code send} is this with no address. The buffer is a raw address.
     */
    static final MethodHandle SENDTO;
    /** {@code recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, struct timespec *timeout)}. */
    static final MethodHandle RECVMMSG;
    /** {@code recvmsg(int fd, struct msghdr *msg, int flags)}. */
    static final MethodHandle RECVMSG;
    /**
     * {@code epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout, const
     * sigset_t *sigmask, size_t sigsetsize)} with a null mask: {@code epoll_wait}, which aarch64
     * has only in this form.
     */
    static final MethodHandle EPOLL_PWAIT;
    /**
     * {@code epoll_pwait2(int epfd, struct epoll_event *events, int maxevents, const struct
     * timespec *timeout, const sigset_t *sigmask, size_t sigsetsize)} (Linux 5.11;
     * {@code -ENOSYS} before).
     */
    static final MethodHandle EPOLL_PWAIT2;
    /** {@code epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)}. */
    static final MethodHandle EPOLL_CTL;
    /** {@code getsockopt(int fd, int level, int name, void *value, socklen_t *len)}. */
    static final MethodHandle GETSOCKOPT;
    /** {@code read(int fd, void *buf, size_t count)}. */
    static final MethodHandle READ;

    private static final FunctionDescriptor SENDMMSG_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_INT, JAVA_INT);
    private static final FunctionDescriptor SENDTO_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG,
        JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor RECVMMSG_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_INT, JAVA_INT, ADDRESS);
    private static final FunctionDescriptor RECVMSG_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_INT);
    private static final FunctionDescriptor EPOLL_PWAIT_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor EPOLL_PWAIT2_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor EPOLL_CTL_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_INT,
        JAVA_INT, ADDRESS);
    private static final FunctionDescriptor GETSOCKOPT_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_INT,
        JAVA_INT, ADDRESS, ADDRESS);
    private static final FunctionDescriptor READ_TYPE = FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS,
        JAVA_LONG);

    /** The calls in stub order, with their numbers on x86_64. */
    private enum Call {
        SENDMMSG(307), SENDTO(44), RECVMMSG(299), RECVMSG(47), EPOLL_PWAIT(281), EPOLL_PWAIT2(441), EPOLL_CTL(233),
        GETSOCKOPT(55), READ(0);

        final int x86;

        Call(final int x86) {
            this.x86 = x86;
        }
    }

    static {
        final String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        final boolean x86 = arch.equals("amd64") || arch.equals("x86_64");
        MemorySegment page = null;
        String reason = null;
        if (!x86) {
            reason = "no system call stubs for " + arch + " (x86_64 only)";
        } else {
            try {
                page = stubs();
                final long r = (long) raw(page, Call.GETSOCKOPT, GETSOCKOPT_TYPE).invokeExact(-1, Uapi.SOL_SOCKET,
                    Uapi.SO_ERROR, MemorySegment.NULL, MemorySegment.NULL);
                if (r != -Errno.EBADF) {
                    reason = "the getsockopt stub answered a bad descriptor with " + r + ", not -EBADF";
                    page = null;
                }
            } catch (final ErrnoException ex) {
                reason = ex.getMessage();
            } catch (final RuntimeException | Error ex) {
                throw ex;
            } catch (final Throwable t) {
                throw new IllegalStateException(t);
            }
        }
        FALLBACK_REASON = reason;
        if (reason != null) {
            // Once per process: the data path then allocates as far as the JIT fails to inline the capture.
            System.getLogger(Syscalls.class.getName()).log(System.Logger.Level.WARNING,
                "native data path through libc with errno captured (may allocate 40 B per call): " + reason);
        }
        SENDMMSG = page != null ? raw(page, Call.SENDMMSG, SENDMMSG_TYPE) : throughLibc("sendmmsg", SENDMMSG_TYPE);
        SENDTO = page != null ? raw(page, Call.SENDTO, SENDTO_TYPE) : throughLibc("sendto", SENDTO_TYPE);
        RECVMMSG = page != null ? raw(page, Call.RECVMMSG, RECVMMSG_TYPE) : throughLibc("recvmmsg", RECVMMSG_TYPE);
        RECVMSG = page != null ? raw(page, Call.RECVMSG, RECVMSG_TYPE) : throughLibc("recvmsg", RECVMSG_TYPE);
        EPOLL_PWAIT = page != null ? raw(page, Call.EPOLL_PWAIT, EPOLL_PWAIT_TYPE)
            : throughLibc("epollPwait", EPOLL_PWAIT_TYPE);
        EPOLL_PWAIT2 = page != null ? raw(page, Call.EPOLL_PWAIT2, EPOLL_PWAIT2_TYPE)
            : throughLibc("epollPwait2", EPOLL_PWAIT2_TYPE);
        EPOLL_CTL = page != null ? raw(page, Call.EPOLL_CTL, EPOLL_CTL_TYPE) : throughLibc("epollCtl", EPOLL_CTL_TYPE);
        GETSOCKOPT = page != null ? raw(page, Call.GETSOCKOPT, GETSOCKOPT_TYPE)
            : throughLibc("getsockopt", GETSOCKOPT_TYPE);
        READ = page != null ? raw(page, Call.READ, READ_TYPE) : throughLibc("read", READ_TYPE);
    }

    private Syscalls() {
    }

    /** @return why the calls go through libc with errno captured, or null when they go through the stubs */
    static String fallbackReason() {
        return FALLBACK_REASON;
    }

    /**
     * Writes the stubs into a fresh page and makes it read-only and executable (never writable
     * and executable at once). The page lives as long as the process.
     *
     * <pre>
     * endbr64; mov eax, NR; mov r10, rcx; syscall; ret
     * </pre>
     *
     * The x86_64 kernel reads the fourth argument from r10 (the C convention passes it in rcx,
     * which {@code syscall} overwrites); the other arguments (rdi, rsi, rdx, r8, r9) are where the C
     * convention put them. {@code endbr64} marks an indirect call's target where control-flow
     * enforcement is on, and is a no-op elsewhere.
     */
    private static MemorySegment stubs() throws ErrnoException {
        final long address;
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment capture = Libc.allocateCapture(arena);
            address = (long) Libc.MMAP.invokeExact(capture, 0L, (long) PAGE, Uapi.PROT_READ | Uapi.PROT_WRITE,
                Uapi.MAP_PRIVATE | Uapi.MAP_ANONYMOUS, -1, 0L);
            if (address == -1L) {
                throw new ErrnoException("mmap(" + PAGE + ", PROT_READ | PROT_WRITE)", Libc.errno(capture));
            }
            final MemorySegment page = MemorySegment.ofAddress(address).reinterpret(PAGE);
            for (final Call call : Call.values()) {
                final int nr = call.x86;
                final byte[] code = {
                    (byte) 0xF3, 0x0F, 0x1E, (byte) 0xFA,                                      // endbr64
                    (byte) 0xB8, (byte) nr, (byte) (nr >>> 8), (byte) (nr >>> 16), (byte) (nr >>> 24), // mov eax, nr
                    0x49, (byte) 0x89, (byte) 0xCA,                                            // mov r10, rcx
                    0x0F, 0x05,                                                                // syscall
                    (byte) 0xC3,                                                               // ret
                };
                MemorySegment.copy(code, 0, page, JAVA_BYTE, (long) call.ordinal() * STUB_BYTES, code.length);
            }
            final int r = (int) Libc.MPROTECT.invokeExact(capture, address, (long) PAGE,
                Uapi.PROT_READ | Uapi.PROT_EXEC);
            if (r != 0) {
                final int errno = Libc.errno(capture);
                final int ignored = (int) Libc.MUNMAP.invokeExact(capture, address, (long) PAGE);
                throw new ErrnoException("mprotect(PROT_READ | PROT_EXEC)", errno);
            }
            return page;
        } catch (final ErrnoException | RuntimeException | Error ex) {
            throw ex;
        } catch (final Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static MethodHandle raw(final MemorySegment page, final Call call, final FunctionDescriptor type) {
        return LINKER.downcallHandle(page.asSlice((long) call.ordinal() * STUB_BYTES, STUB_BYTES), type);
    }

    /** @return the static method of {@link ThroughLibc} called {@code name}, of the stub's type */
    private static MethodHandle throughLibc(final String name, final FunctionDescriptor type) {
        try {
            final MethodType t = type.toMethodType();
            return MethodHandles.lookup().findStatic(ThroughLibc.class, name, t);
        } catch (final ReflectiveOperationException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * The calls through libc's wrappers, errno captured into a segment of the calling thread
     * (each thread has its own, made on its first call): the stubs' results where the stubs
     * cannot be made. Package-private for the test that compares both.
     */
    static final class ThroughLibc {
        private static final ThreadLocal<MemorySegment> CAPTURE =
            ThreadLocal.withInitial(() -> Libc.allocateCapture(Arena.ofAuto()));

        private ThroughLibc() {
        }

        static long sendmmsg(final int fd, final MemorySegment vec, final int vlen, final int flags)
            throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.SENDMMSG.invokeExact(c, fd, vec, vlen, flags), c);
        }

        static long sendto(final int fd, final long buf, final long len, final int flags, final MemorySegment to,
                           final int toLength) throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((long) Libc.SENDTO.invokeExact(c, fd, buf, len, flags, to, toLength), c);
        }

        static long recvmmsg(final int fd, final MemorySegment vec, final int vlen, final int flags,
                             final MemorySegment timeout) throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.RECVMMSG.invokeExact(c, fd, vec, vlen, flags, timeout), c);
        }

        static long recvmsg(final int fd, final MemorySegment msg, final int flags) throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((long) Libc.RECVMSG.invokeExact(c, fd, msg, flags), c);
        }

        /** {@code epoll_wait}: the mask is always null here. */
        static long epollPwait(final int epfd, final MemorySegment events, final int maxEvents, final int timeout,
                               final MemorySegment sigmask, final long sigsetsize) throws Throwable {
            if (!sigmask.equals(MemorySegment.NULL)) {
                throw new IllegalArgumentException("no signal mask through libc's epoll_wait");
            }
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.EPOLL_WAIT.invokeExact(c, epfd, events, maxEvents, timeout), c);
        }

        static long epollPwait2(final int epfd, final MemorySegment events, final int maxEvents,
                                final MemorySegment timeout, final MemorySegment sigmask, final long sigsetsize)
            throws Throwable {
            if (Libc.EPOLL_PWAIT2 == null) {
                return -Errno.ENOSYS;
            }
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.EPOLL_PWAIT2.invokeExact(c, epfd, events, maxEvents, timeout, sigmask), c);
        }

        static long epollCtl(final int epfd, final int op, final int fd, final MemorySegment event)
            throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.EPOLL_CTL.invokeExact(c, epfd, op, fd, event), c);
        }

        static long getsockopt(final int fd, final int level, final int name, final MemorySegment value,
                               final MemorySegment length) throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((int) Libc.GETSOCKOPT.invokeExact(c, fd, level, name, value, length), c);
        }

        static long read(final int fd, final MemorySegment buf, final long count) throws Throwable {
            final MemorySegment c = CAPTURE.get();
            return result((long) Libc.READ.invokeExact(c, fd, buf, count), c);
        }

        /** @return {@code r}, or the negated errno when the call failed */
        private static long result(final long r, final MemorySegment capture) {
            return r >= 0 ? r : -Libc.errno(capture);
        }
    }
}
