// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

/** How a switch picks among equal-cost next hops. */
public enum LoadBalancing {
    /** Hash of the 5-tuple: a flow (one UDP source port) stays on one path; the entropy chooses it. */
    ECMP,
    /** Each packet to a uniformly random next hop, whatever its 5-tuple (switch-side spraying). */
    SPRAY
}
