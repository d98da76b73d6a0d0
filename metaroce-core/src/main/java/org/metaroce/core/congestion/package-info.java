// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

/**
 * Congestion control behind one small interface, chosen per queue pair by the CC_ALGORITHM and
 * CAPABILITIES attributes (specification section 8): the delay-based default, receiver credit,
 * the DCQCN baseline and a fixed window. The engine asks for a window and a pacing time and feeds
 * back acknowledgements, RTT samples, ECN echoes, credits, CNPs and losses; every callback runs on
 * the data path and allocates nothing.
 */
package org.metaroce.core.congestion;
