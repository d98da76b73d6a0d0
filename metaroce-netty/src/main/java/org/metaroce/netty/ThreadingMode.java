// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.netty;

/**
 * Which thread drives a device. Whatever the mode, exactly one thread (the <em>owning</em> thread)
 * runs the device's I/O, its endpoint and every queue pair; other threads reach it through
 * {@link MetaRoceDevice#submit}, {@link MetaRoceDevice#execute} and {@link MetaRoceDevice#call}, and
 * consume completions straight from the completion queues (single-producer/single-consumer).
 */
public enum ThreadingMode {
    /** The device starts its own driver thread, which runs duty cycles and idles with the configured strategy. */
    DEDICATED,
    /**
     * No thread: the thread that constructs the device owns it and makes progress by calling
     * {@link MetaRoceDevice#doWork()}. Lowest latency (no hand-off) and deterministic in tests.
     */
    INVOKER,
    /**
     * The device attaches to a {@link SharedDriver}: one thread and one event loop drive several
     * devices, each duty cycle serving all of them. Set the driver with
     * {@link DeviceConfig#sharedDriver(SharedDriver)}.
     */
    SHARED
}
