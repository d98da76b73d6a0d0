// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.metaroce.netty.linux.NativeUdp;

/**
 * {@link NativeDataPathAllocationTest}'s measurement in the worst case the JIT may choose, made
 * certain: a JVM forked with C2 forbidden to inline the FFM linker's check of an errno capture
 * segment ({@code SharedUtils.checkCaptureSegment}, which returns a new slice of the segment on
 * every call made with {@code Linker.Option.captureCallState}). Where that check is not inlined
 * into the caller, escape analysis cannot remove the slice: 40 B per call. On main before the
 * data path's system calls returned the errno in their result ({@code Syscalls}) this fork
 * allocated 424,480 B in every round, 280 B per loop turn: 40 B for each of the turn's seven
 * system calls (sendmmsg, send, the reads and the epoll wait); in an ordinary JVM the same happened
 * to one call site now and then, by chance of compile order (40 B per turn, one run in five to
 * seven). The allocation must not depend on what the JIT inlines.
 */
class NativeDataPathWorstCaseInliningTest {
    /** The worst case: no C2 compilation inlines the capture segment's check. */
    static final String DONT_INLINE_CAPTURE_CHECK =
        "-XX:CompileCommand=dontinline,jdk.internal.foreign.abi.SharedUtils::checkCaptureSegment";
    /** What HotSpot prints when it has taken the command. */
    static final String COMMAND_TAKEN = "CompileCommand: dontinline jdk/internal/foreign/abi/SharedUtils.checkCaptureSegment";
    private static final Pattern MEASURED = Pattern.compile("native data path: (\\d+) B allocated");

    @Test
    void dataPathAllocatesNothingWhenTheCaptureCheckIsNeverInlined() throws Exception {
        assumeTrue(NativeUdp.isAvailable(), () -> "native transport unavailable: " + NativeUdp.unavailabilityReason());
        final String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        final List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED",
            DONT_INLINE_CAPTURE_CHECK, "-cp", classpath, Probe.class.getName());
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        System.out.println(out);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).as("the JVM took the command").contains(COMMAND_TAKEN);
        final Matcher m = MEASURED.matcher(out);
        assertThat(m.find()).as(out).isTrue();
        assertThat(Long.parseLong(m.group(1))).as("bytes allocated by the native data path in steady state, "
            + "checkCaptureSegment never inlined").isZero();
    }

    /** Runs {@link NativeDataPathAllocationTest#measure()} in the forked JVM. */
    public static final class Probe {
        private Probe() {
        }

        public static void main(final String[] args) throws Exception {
            if (!NativeUdp.isAvailable()) {
                System.out.println("native transport unavailable: " + NativeUdp.unavailabilityReason());
                System.exit(2);
            }
            final NativeDataPathAllocationTest.Measured m = NativeDataPathAllocationTest.measure();
            System.out.println("received " + m.datagrams() + ", ECT(0) " + m.ect0());
            System.exit(m.ect0() == m.datagrams() ? 0 : 3);
        }
    }
}
