package org.metaroce.core.engine;

/**
 * How the driver's peer identifiers relate to hosts. A driver gives every remote UDP address
 * (IP address and port) it talks to or hears from a {@code peerId}; a queue pair sends to its
 * peer's endpoint address, but receives its peer's packets from many source ports (one per
 * entropy value), and must not use the source port to identify the peer [ENC-004]. So the
 * engine checks a packet's origin by host: the IP address of the sender must be the QP's remote
 * IP address [QP spec, check 13]. The in-memory wire and the simulator use one id per host, so
 * the identity mapping serves them.
 */
@FunctionalInterface
public interface PeerDirectory {
    /** One id per host: the peer id is the host id. */
    PeerDirectory IDENTITY = peerId -> peerId;

    /**
     * @param peerId a peer id the driver handed to the endpoint or that a QP sends to
     * @return an id equal for exactly the peer ids that share an IP address
     */
    int hostOf(int peerId);
}
