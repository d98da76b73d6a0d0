// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty.linux;

import java.util.Locale;
import java.util.Optional;

/**
 * Whether the native Linux UDP sockets of this package can be used in this JVM.
 *
 * <p>This class is compiled for Java 17; the sockets are compiled for Java 22 and exist only in
 * {@code META-INF/versions/22} of the metaroce-netty jar, so that JDK 17 users get the same jar
 * and fall back to Netty. The check loads the versioned libc binding reflectively (as Lucene
 * loads its Panama code): on a new enough runtime, from a multi-release jar, with native access
 * granted, binding succeeds; otherwise {@link #unavailabilityReason()} says what is missing in
 * one line a log can carry.
 */
public final class NativeUdp {
    /** The first JDK whose {@code java.lang.foreign} is final. */
    public static final int MINIMUM_JDK = 22;

    /** The libc binding: a class that exists only under META-INF/versions/22. */
    static final String LIBC_CLASS = "org.metaroce.netty.linux.Libc";

    private static final String REASON = findReason(System.getProperty("os.name", ""),
        System.getProperty("os.arch", ""), Runtime.version().feature());

    private NativeUdp() {
    }

    /** @return whether the native sockets can be opened in this JVM */
    public static boolean isAvailable() {
        return REASON == null;
    }

    /**
     * @return why the native sockets cannot be used (e.g. "needs JDK 22 or newer, running 17"),
     *     or empty when {@link #isAvailable()}
     */
    public static Optional<String> unavailabilityReason() {
        return Optional.ofNullable(REASON);
    }

    /**
     * @return the reason, or null when the versioned binding loaded; checks the platform first so
     *     that the answer names the first thing the user has to change
     */
    static String findReason(final String osName, final String osArch, final int jdkFeature) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return "not Linux (os.name is " + osName + ")";
        }
        if (!("amd64".equals(osArch) || "x86_64".equals(osArch) || "aarch64".equals(osArch))) {
            // The struct layouts are those of the 64-bit Linux ABIs these two share.
            return "unsupported architecture " + osArch + " (x86_64 and aarch64 are supported)";
        }
        if (jdkFeature < MINIMUM_JDK) {
            return "needs JDK " + MINIMUM_JDK + " or newer, running " + jdkFeature;
        }
        try {
            Class.forName(LIBC_CLASS, true, NativeUdp.class.getClassLoader());
            return null;
        } catch (final ClassNotFoundException ex) {
            return "the native classes are missing: metaroce-netty was built on a JDK older than "
                + MINIMUM_JDK + ", or is not on the class or module path as its multi-release jar";
        } catch (final LinkageError ex) {
            final Throwable cause = ex.getCause() != null ? ex.getCause() : ex;
            if (cause instanceof IllegalCallerException) {
                // On the module path native access is granted to this module by its name.
                final Module module = NativeUdp.class.getModule();
                return "native access denied: run with --enable-native-access="
                    + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
            }
            return "cannot bind libc: " + cause;
        }
    }
}
