// SPDX-FileCopyrightText: 2026 The MetaRoCE-J maintainers
// SPDX-License-Identifier: Apache-2.0

package org.metaroce.examples;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Consumer;

import org.metaroce.core.connection.Connection;
import org.metaroce.core.connection.ConnectParams;
import org.metaroce.core.connection.ListenParams;
import org.metaroce.core.engine.Endpoint;
import org.metaroce.core.engine.QueuePairCapabilities;
import org.metaroce.core.verbs.CompletionQueue;
import org.metaroce.core.verbs.ProtectionDomain;
import org.metaroce.netty.ConnectionService;
import org.metaroce.netty.DeviceConfig;
import org.metaroce.netty.IncomingRequest;
import org.metaroce.netty.MetaRoceDevice;
import org.metaroce.netty.ThreadingMode;

/**
 * What each side of an example starts with — a device, its connection service, a protection
 * domain and a completion queue, as ibv_open_device, rdma_create_event_channel, ibv_alloc_pd and
 * ibv_create_cq give a libibverbs program — and the two ways a side gets connected: a server
 * accepts one client, a client connects. The device runs in INVOKER mode: the thread that opens
 * the context owns the device and drives it, and the connection service's blocking calls drive it
 * while they wait. Closing the context closes the service, then the device.
 *
 * @param device the device, owned by the thread that opened the context
 * @param cm its connection service
 * @param pd a protection domain for the side's memory regions and queue pairs
 * @param cq a completion queue (16 entries), for both queues of the side's queue pair
 */
public record VerbsContext(MetaRoceDevice device, ConnectionService cm, ProtectionDomain pd, CompletionQueue cq)
    implements AutoCloseable {

    // [readme-begin]
    /** Opens a device on bind (port 0: any free port) that the calling thread owns and drives. */
    public static VerbsContext open(InetSocketAddress bind) {
        MetaRoceDevice device = new MetaRoceDevice(new DeviceConfig().bindAddress(bind.getAddress())
            .endpointPort(bind.getPort()).threadingMode(ThreadingMode.INVOKER));
        try {
            Endpoint ep = device.endpoint();
            return new VerbsContext(device, new ConnectionService(device), ep.allocateProtectionDomain(),
                ep.createCompletionQueue(16));
        } catch (RuntimeException ex) {
            device.close();
            throw ex;
        }
    }

    /**
     * Server: listens on serviceId, tells listening where, and accepts the first client with
     * privateData in the reply. Each client's queue pair grants accessFlags (REMOTE_WRITE,
     * REMOTE_READ, REMOTE_ATOMIC: what the client will do to this side's memory).
     */
    public Connection acceptOne(long serviceId, int accessFlags, byte[] privateData,
                                Consumer<InetSocketAddress> listening) throws Exception {
        cm.listen(serviceId, new ListenParams().resources(pd, cq, cq, QueuePairCapabilities.defaults())
            .accessFlags(accessFlags).paths(device.entropyPorts()));
        listening.accept(device.localAddress());
        IncomingRequest request = cm.awaitRequest(serviceId, Duration.ofSeconds(30));
        return cm.accept(request, privateData, Duration.ofSeconds(5));
    }

    /** Client: connects to serviceId at server; the server's private data is connection.peerPrivateData(). */
    public Connection connect(InetSocketAddress server, long serviceId, CompletionQueue recvCq) throws Exception {
        return cm.connect(server, serviceId, new ConnectParams().resources(pd, cq, recvCq,
            QueuePairCapabilities.defaults()).paths(device.entropyPorts()), Duration.ofSeconds(5));
    }
    // [readme-end]

    /**
     * Client with one completion queue for sends and receives: {@link #connect(InetSocketAddress, long, CompletionQueue)}
     * with {@link #cq()} for both.
     *
     * @param server the server's address
     * @param serviceId the service it listens on
     * @return the established connection
     * @throws Exception if the connection is rejected or fails
     */
    public Connection connect(final InetSocketAddress server, final long serviceId) throws Exception {
        return connect(server, serviceId, cq);
    }

    /** Closes the connection service (pending calls fail, listeners close), then the device. */
    @Override
    public void close() {
        try {
            cm.close();
        } finally {
            device.close();
        }
    }
}
