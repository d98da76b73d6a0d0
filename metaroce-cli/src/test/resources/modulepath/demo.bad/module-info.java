// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/** An application that reaches for a package the library does not export to it (ModulePathTest). */
module demo.bad {
    requires org.metaroce.core;
}
