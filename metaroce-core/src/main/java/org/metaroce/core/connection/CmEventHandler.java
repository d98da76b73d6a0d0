// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * Receives connection-manager events on the endpoint's thread, once the endpoint has finished the
 * step that raised them (see {@link ConnectionManager#deliverEvents()}): right after the
 * connection-manager packet, or in the endpoint's next poll (before its queue pairs are polled)
 * for what a timer, a queue pair or an application call caused. A handler may call back into the
 * {@link ConnectionManager} (accept, reject, connect, disconnect) and the endpoint (create or
 * destroy queue pairs, post work); events it causes are delivered after it returns, in order. It
 * must not drive the endpoint ({@code poll}, {@code onDatagram}) itself. Without a handler, events
 * wait in {@link ConnectionManager#pollEvent()}.
 */
@FunctionalInterface
public interface CmEventHandler {
    /** @param event the event; owned by the handler from now on */
    void onEvent(CmEvent event);
}
