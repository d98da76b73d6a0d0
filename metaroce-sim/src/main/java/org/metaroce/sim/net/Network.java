// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.sim.net;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.metaroce.core.SeededRandomSource;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.EndpointConfig;
import org.metaroce.sim.Simulator;

/**
 * The simulated fabric: hosts and switches joined by links, with shortest-path equal-cost routes
 * computed from the graph. Built by {@link TopologyBuilder}; faults (link failure, random loss)
 * are injected here.
 */
public final class Network {
    final Simulator simulator;
    final FabricConfig config;
    final PacketPool pool = new PacketPool();
    private final List<Node> nodes = new ArrayList<>();
    private final List<Host> hosts = new ArrayList<>();
    private final List<Switch> switches = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    private String description = "";

    /**
     * @param simulator the event kernel
     * @param config switch and NIC behaviour
     */
    public Network(final Simulator simulator, final FabricConfig config) {
        this.simulator = simulator;
        this.config = config;
    }

    /** @return the event kernel */
    public Simulator simulator() {
        return simulator;
    }

    /** @return switch and NIC behaviour */
    public FabricConfig config() {
        return config;
    }

    /** @return the packet pool (its size shows the run's packet high-water mark) */
    public PacketPool pool() {
        return pool;
    }

    /** @return hosts by index */
    public List<Host> hosts() {
        return Collections.unmodifiableList(hosts);
    }

    /** @return every switch */
    public List<Switch> switches() {
        return Collections.unmodifiableList(switches);
    }

    /** @return every link */
    public List<Link> links() {
        return Collections.unmodifiableList(links);
    }

    /** @return a one-line description of the topology */
    public String description() {
        return description;
    }

    void description(final String text) {
        this.description = text;
    }

    /**
     * Adds a host running a new endpoint.
     *
     * @param endpointConfig protocol parameters of its endpoint
     * @return the host
     */
    public Host addHost(final EndpointConfig endpointConfig) {
        final int index = hosts.size();
        final Endpoint endpoint = new Endpoint(endpointConfig, new SeededRandomSource(simulator.newRandom().nextLong()));
        final Host h = new Host(this, nodes.size(), index, endpoint);
        nodes.add(h);
        hosts.add(h);
        return h;
    }

    /**
     * @param name switch name
     * @return a new switch
     */
    public Switch addSwitch(final String name) {
        final Switch s = new Switch(this, nodes.size(), name, config, simulator.newRandom());
        nodes.add(s);
        switches.add(s);
        return s;
    }

    /**
     * Joins two nodes with a full-duplex link. A host has exactly one link (its NIC).
     *
     * @param x one end
     * @param y the other end
     * @param rateBps line rate of both directions
     * @param propagationNs one-way propagation delay
     * @return the link
     */
    public Link connect(final Node x, final Node y, final long rateBps, final long propagationNs) {
        for (final Node n : new Node[] {x, y}) {
            if (n instanceof Host h && h.nic() != null) {
                throw new IllegalArgumentException(n.name() + " already has its NIC link");
            }
        }
        final Port px = x.addPort(rateBps, propagationNs);
        final Port py = y.addPort(rateBps, propagationNs);
        px.peer = py;
        py.peer = px;
        if (x instanceof Host h) {
            h.attachNic(px);
        }
        if (y instanceof Host h) {
            h.attachNic(py);
        }
        final Link link = new Link(px, py);
        links.add(link);
        return link;
    }

    /** Sizes switch buffers and computes equal-cost shortest-path routes over links that are up. */
    public void finish() {
        for (final Host h : hosts) {
            if (h.nic() == null) {
                throw new IllegalStateException(h.name() + " has no link");
            }
        }
        for (final Switch s : switches) {
            s.sizeBuffer();
        }
        computeRoutes();
    }

    /** Recomputes routes (after a link failure, once the control plane has noticed). */
    public void computeRoutes() {
        final int[] dist = new int[nodes.size()];
        final ArrayDeque<Node> frontier = new ArrayDeque<>();
        for (final Switch s : switches) {
            s.routes = new int[hosts.size()][];
        }
        for (final Host dst : hosts) {
            Arrays.fill(dist, Integer.MAX_VALUE);
            dist[dst.id] = 0;
            frontier.clear();
            frontier.add(dst);
            while (!frontier.isEmpty()) {
                final Node n = frontier.poll();
                for (final Port p : n.ports) {
                    final Node m = p.peer.owner;
                    // Hosts do not forward; only switches extend paths.
                    if (p.up && p.peer.up && m instanceof Switch && dist[m.id] == Integer.MAX_VALUE) {
                        dist[m.id] = dist[n.id] + 1;
                        frontier.add(m);
                    }
                }
            }
            for (final Switch s : switches) {
                if (dist[s.id] == Integer.MAX_VALUE) {
                    s.routes[dst.hostIndex()] = new int[0];
                    continue;
                }
                int count = 0;
                final int[] candidates = new int[s.ports.size()];
                for (final Port p : s.ports) {
                    final Node m = p.peer.owner;
                    if (p.up && p.peer.up && dist[m.id] == dist[s.id] - 1 && (m instanceof Switch || m == dst)) {
                        candidates[count++] = p.index;
                    }
                }
                s.routes[dst.hostIndex()] = Arrays.copyOf(candidates, count);
            }
        }
    }

    /**
     * Fails a link at {@code atNs}: from then on everything sent on it is lost. Routing reacts
     * {@code detectionNs} later (the time a real control plane needs to notice), or never when negative.
     *
     * @param link the link
     * @param atNs when it fails
     * @param detectionNs delay until routes avoid it; negative for never
     */
    public void failLink(final Link link, final long atNs, final long detectionNs) {
        simulator.schedule(atNs, (now, subject, arg) -> {
            link.a().up = false;
            link.b().up = false;
        }, null, 0);
        if (detectionNs >= 0) {
            simulator.schedule(atNs + detectionNs, (now, subject, arg) -> computeRoutes(), null, 0);
        }
    }

    /**
     * Makes a link lose each packet independently with probability {@code p}, in both directions.
     *
     * @param link the link
     * @param p loss probability in [0, 1)
     */
    public void randomLoss(final Link link, final double p) {
        if (!(p >= 0 && p < 1)) {
            throw new IllegalArgumentException("loss probability must be in [0, 1), got " + p);
        }
        link.a().lossProbability(p, simulator.newRandom());
        link.b().lossProbability(p, simulator.newRandom());
    }

    /** @return every switch port (the egress queues of the fabric) */
    public List<Port> switchPorts() {
        final List<Port> out = new ArrayList<>();
        for (final Switch s : switches) {
            out.addAll(s.ports);
        }
        return out;
    }

    /** @return every port of every node */
    public List<Port> allPorts() {
        final List<Port> out = new ArrayList<>();
        for (final Node n : nodes) {
            out.addAll(n.ports);
        }
        return out;
    }
}
