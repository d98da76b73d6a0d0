// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim;

/**
 * Something that reacts to a scheduled event. Events carry an object and an int so that the
 * common cases (a packet arriving on a port, a timer of a host) need no event object of their own.
 */
@FunctionalInterface
public interface EventHandler {
    /**
     * @param nowNs the virtual time of the event
     * @param subject the object given when the event was scheduled (may be null)
     * @param arg the int given when the event was scheduled
     */
    void onEvent(long nowNs, Object subject, int arg);
}
