// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * MetaRoCE core: the sans-I/O protocol engine and the verbs API.
 *
 * <p>The API packages are exported to everyone. The wire format's flyweights and validator
 * ({@code org.metaroce.core.wire}) are an implementation detail that only the project's own
 * drivers, tools and compliance suite read: they are exported to those modules only, so that an
 * application on the module path cannot come to depend on them. {@code reliability} is internal to
 * this module; {@code multipath} is exported because a queue pair's per-path statistics
 * ({@code QueuePair.paths()}) are part of the API. (On the class path a module descriptor is
 * ignored and every package is visible, as before.)
 *
 * <p>Agrona reaches {@code jdk.internal.misc.Unsafe}: the JVM needs
 * {@code --add-exports java.base/jdk.internal.misc=org.agrona} on the module path
 * ({@code =ALL-UNNAMED} on the class path); see {@link org.metaroce.core.JvmAccess}.
 */
@SuppressWarnings({"module", "requires-automatic", "requires-transitive-automatic"})
module org.metaroce.core {
    requires transitive org.agrona;
    requires org.slf4j;

    exports org.metaroce.core;
    exports org.metaroce.core.congestion;
    exports org.metaroce.core.connection;
    exports org.metaroce.core.engine;
    exports org.metaroce.core.multipath;
    exports org.metaroce.core.verbs;

    exports org.metaroce.core.wire to
        org.metaroce.netty,
        org.metaroce.conformance,
        org.metaroce.sim,
        org.metaroce.cli,
        org.metaroce.bench;
}
