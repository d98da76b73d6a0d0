// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

/** A full-duplex cable between two ports. */
public final class Link {
    private final Port a;
    private final Port b;

    Link(final Port a, final Port b) {
        this.a = a;
        this.b = b;
    }

    /** @return the port at the first node */
    public Port a() {
        return a;
    }

    /** @return the port at the second node */
    public Port b() {
        return b;
    }

    /** @return whether both directions are up */
    public boolean isUp() {
        return a.up && b.up;
    }

    @Override
    public String toString() {
        return a.owner.name + "<->" + b.owner.name;
    }
}
