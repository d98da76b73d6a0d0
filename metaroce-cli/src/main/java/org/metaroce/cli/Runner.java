// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.cli;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.metaroce.netty.EventLoopIdleStrategy;
import org.metaroce.netty.MetaRoceDevice;

/**
 * The benchmark loop of one thread: drive the INVOKER devices this thread owns (if any), advance
 * the agents, idle when nothing happened. Idling never sleeps past the next protocol deadline of
 * an owned device (retransmission, acknowledgement coalescing): closer than 50 µs it spins.
 */
final class Runner {
    private static final long DEADLINE_SPIN_NS = 50_000;

    private Runner() {
    }

    /** @return the idle strategy of a DEDICATED or SHARED driver thread */
    static IdleStrategy driverIdle(final BenchConfig.Idle idle) {
        return switch (idle) {
            case spin -> new BusySpinIdleStrategy();
            case backoff -> new BackoffIdleStrategy(100, 10, 1_000, 100_000);
            case block -> new EventLoopIdleStrategy();
        };
    }

    /** One step of every agent not yet done; records whether all are done and flags a failure. */
    /** Longest single wait of a loop whose agents only wait for their peers. */
    private static final long WAITING_FOR_PEER_NS = 50_000_000L;

    private static final class AgentStep implements java.util.function.IntSupplier {
        private final Agent[] agents;
        private final AtomicBoolean abort;
        boolean allDone;

        /** @return whether every agent still running only waits for its peer to connect */
        boolean allWaitingForPeers() {
            for (final Agent a : agents) {
                if (!a.isDone() && !a.waitingForPeer()) {
                    return false;
                }
            }
            return true;
        }

        AgentStep(final Agent[] agents, final AtomicBoolean abort) {
            this.agents = agents;
            this.abort = abort;
        }

        @Override
        public int getAsInt() {
            int work = 0;
            boolean done = true;
            for (final Agent a : agents) {
                if (!a.isDone()) {
                    work += a.doWork();
                    done &= a.isDone();
                }
                if (a.failure() != null) {
                    abort.set(true);
                }
            }
            allDone = done;
            return work;
        }
    }

    /**
     * Runs until every agent is done, one of them failed, or {@code abort} is set.
     *
     * @param devices INVOKER devices owned by this thread
     * @param agents the agents to advance
     * @param idle how to idle
     * @param abort set by another thread to stop; set here when an agent fails
     */
    static void drive(final List<MetaRoceDevice> devices, final List<Agent> agents, final BenchConfig.Idle idle,
                      final AtomicBoolean abort) {
        final MetaRoceDevice[] owned = devices.toArray(new MetaRoceDevice[0]);
        final AgentStep step = new AgentStep(agents.toArray(new Agent[0]), abort);
        final long maxParkNs = idle == BenchConfig.Idle.block ? 1_000_000 : 100_000;
        int idleCount = 0;
        while (!abort.get()) {
            int work;
            if (owned.length == 1) {
                // The agents run between the device's reading and sending: a reply they post on a
                // completion leaves in the same cycle, ahead of the request's ACK.
                work = owned[0].doWork(step);
            } else {
                work = 0;
                for (final MetaRoceDevice d : owned) {
                    work += d.doWork();
                }
                work += step.getAsInt();
            }
            if (step.allDone) {
                return;
            }
            if (work > 0) {
                idleCount = 0;
                continue;
            }
            if (owned.length == 1 && agents.size() > 0 && step.allWaitingForPeers()) {
                // Nothing happens before the client's CONNECT_REQUEST arrives, whatever the idle
                // strategy: wait on the socket (no CPU) and wake the moment it does.
                owned[0].awaitWork(WAITING_FOR_PEER_NS);
                continue;
            }
            if (idle == BenchConfig.Idle.spin) {
                Thread.onSpinWait();
                continue;
            }
            idleCount++;
            if (idleCount <= 100) {
                Thread.onSpinWait();
            } else if (idleCount <= 110) {
                Thread.yield();
            } else if (idle == BenchConfig.Idle.block && owned.length == 1) {
                // Blocks until a datagram, a command or the device's next deadline; the agents
                // act only on completions, so nothing else can be due within the 1 ms bound.
                owned[0].awaitWork(maxParkNs);
            } else {
                long park = Math.min(maxParkNs, 1_000L << Math.min(20, idleCount - 111));
                if (owned.length > 0) {
                    long deadline = Long.MAX_VALUE;
                    for (final MetaRoceDevice d : owned) {
                        deadline = Math.min(deadline, d.nextDeadlineNs());
                    }
                    if (deadline != Long.MAX_VALUE) {
                        final long until = deadline - System.nanoTime();
                        if (until <= DEADLINE_SPIN_NS) {
                            Thread.onSpinWait();
                            continue;
                        }
                        park = Math.min(park, until - DEADLINE_SPIN_NS);
                    }
                }
                LockSupport.parkNanos(park);
            }
        }
    }
}
