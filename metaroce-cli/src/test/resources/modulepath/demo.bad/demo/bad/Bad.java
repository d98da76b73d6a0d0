// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package demo.bad;

import org.metaroce.core.wire.BaseHeader;

/** Must not compile: org.metaroce.core.wire is exported only to the project's modules. */
public final class Bad {
    private Bad() {
    }

    static BaseHeader header() {
        return new BaseHeader();
    }
}
