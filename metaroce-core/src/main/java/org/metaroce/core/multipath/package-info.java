// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/** Per-packet spraying over a queue pair's entropy values, steering away from paths that lose or delay packets. */
package org.metaroce.core.multipath;
