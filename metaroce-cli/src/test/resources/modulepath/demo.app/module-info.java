// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/** An application of the library on the module path (ModulePathTest). */
module demo.app {
    requires org.metaroce.collectives;
}
