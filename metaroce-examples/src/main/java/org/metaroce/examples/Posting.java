// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import org.metaroce.core.verbs.PostStatus;

/** Turns a refused post into an exception: posting returns codes, as ibv_post_send returns errno. */
public final class Posting {
    private Posting() {
    }

    /**
     * @param status what {@code postSend} or {@code postRecv} returned
     * @throws IllegalStateException naming the {@link PostStatus} unless it is OK
     */
    public static void require(final int status) {
        if (status != PostStatus.OK) {
            throw new IllegalStateException("post refused: " + PostStatus.describe(status));
        }
    }
}
