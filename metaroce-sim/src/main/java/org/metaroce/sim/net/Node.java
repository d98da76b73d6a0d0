// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.util.ArrayList;
import java.util.List;

/** A host or a switch: something with ports that receives packets. */
public abstract class Node {
    final Network network;
    final int id;
    final String name;
    final List<Port> ports = new ArrayList<>();

    Node(final Network network, final int id, final String name) {
        this.network = network;
        this.id = id;
        this.name = name;
    }

    /** @return index among all nodes of the network */
    public int id() {
        return id;
    }

    /** @return a readable name such as {@code leaf3} or {@code host17} */
    public String name() {
        return name;
    }

    /** @return this node's ports, in creation order */
    public List<Port> ports() {
        return ports;
    }

    Port addPort(final long rateBps, final long propagationNs) {
        final Port p = new Port(this, ports.size(), rateBps, propagationNs);
        ports.add(p);
        return p;
    }

    /** A packet finished arriving on {@code in}. */
    abstract void receive(long nowNs, Packet p, Port in);

    /** {@code out} took {@code p} off its queue and started sending it. */
    void onDequeued(final long nowNs, final Packet p, final Port out) {
        // Most nodes need not know.
    }

    @Override
    public String toString() {
        return name;
    }
}
