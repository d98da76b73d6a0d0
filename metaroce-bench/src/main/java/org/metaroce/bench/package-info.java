// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/** JMH benchmarks for MetaRoCE; run with {@code java -jar metaroce-bench/target/metaroce-benchmarks.jar}. */
package org.metaroce.bench;
