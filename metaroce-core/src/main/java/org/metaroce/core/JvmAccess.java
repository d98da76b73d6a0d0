// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The one JVM flag MetaRoCE needs, checked where the library is first touched.
 *
 * <p>Agrona 2.x, which holds every buffer of the engine, reaches {@code jdk.internal.misc.Unsafe}.
 * {@code java.base} exports that package to nobody unless the JVM is told to; without it Agrona's
 * first buffer fails with a raw {@link IllegalAccessError} from deep inside Agrona. The
 * {@link org.metaroce.core.engine.Endpoint} and the UDP device call {@link #requireUnsafeExport()}
 * before they allocate anything, so the user reads which flag to add instead:
 * <ul>
 *   <li>class path: {@value #CLASS_PATH_FLAG}</li>
 *   <li>module path: {@value #MODULE_PATH_FLAG} (Agrona's module is {@value #AGRONA_MODULE})</li>
 *   <li>executable jar: the manifest attribute {@code Add-Exports: java.base/jdk.internal.misc}</li>
 * </ul>
 */
public final class JvmAccess {
    /** The package Agrona reads {@code Unsafe} from. */
    public static final String PACKAGE = "jdk.internal.misc";
    /** The automatic module name of Agrona 2.x (from its manifest). */
    public static final String AGRONA_MODULE = "org.agrona";
    /** The flag for an application on the class path. */
    public static final String CLASS_PATH_FLAG = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";
    /** The flag for an application on the module path. */
    public static final String MODULE_PATH_FLAG = "--add-exports java.base/jdk.internal.misc=org.agrona";

    private JvmAccess() {
    }

    /**
     * @return whether {@code java.base} exports {@value #PACKAGE} to the module Agrona was loaded in
     *     (its named module on the module path, the unnamed module of its class loader on the class path)
     */
    public static boolean unsafeExported() {
        return Object.class.getModule().isExported(PACKAGE, UnsafeBuffer.class.getModule());
    }

    /**
     * Fails with a message naming the missing flag unless Agrona can reach {@code Unsafe}.
     *
     * @return true (so that a constructor can call it in its {@code this(...)} arguments, before its
     *     field initialisers allocate buffers)
     * @throws IllegalStateException if the JVM was started without the export
     */
    public static boolean requireUnsafeExport() {
        if (unsafeExported()) {
            return true;
        }
        final Module agrona = UnsafeBuffer.class.getModule();
        throw new IllegalStateException("MetaRoCE needs java.base to export " + PACKAGE
            + " to Agrona (it uses jdk.internal.misc.Unsafe), and this JVM does not (Agrona is loaded "
            + (agrona.isNamed() ? "as module " + agrona.getName() : "from the class path") + "). Start java with "
            + CLASS_PATH_FLAG + " when MetaRoCE is on the class path, or with " + MODULE_PATH_FLAG
            + " on the module path; an executable jar can instead carry the manifest attribute"
            + " 'Add-Exports: java.base/jdk.internal.misc'.");
    }
}
