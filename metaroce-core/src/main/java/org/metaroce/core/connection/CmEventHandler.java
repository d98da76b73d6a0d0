// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.core.connection;

/**
 * Receives connection-manager events as they happen, on the endpoint's thread. A handler may call
 * back into the {@link ConnectionManager} (accept, reject, connect, disconnect); events it causes
 * are delivered after it returns. Without a handler, events wait in
 * {@link ConnectionManager#pollEvent()}.
 */
@FunctionalInterface
public interface CmEventHandler {
    /** @param event the event; owned by the handler from now on */
    void onEvent(CmEvent event);
}
