#!/usr/bin/env python3
"""Generates the MetaRoCE v1 golden test vectors (specification section 3.8).

This generator is written from the specification text alone, with Python's struct module, and
shares no code with the Java reference implementation: the Java codec, the Wireshark dissector
and this script are three independent readings of section 3 that the tests hold to the same bytes.

Usage: python3 spec-notes/vectors/generate.py   (rewrites the *.json files next to this script)
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value

OPCODES = {
    "SEND": (0x01, ["msg"]),
    "SEND_WITH_IMM": (0x02, ["msg", "imm"]),
    "WRITE": (0x03, ["msg", "reth"]),
    "WRITE_WITH_IMM": (0x04, ["msg", "reth", "imm"]),
    "READ_REQUEST": (0x05, ["msg", "reth"]),
    "READ_RESPONSE": (0x06, ["msg"]),
    "FETCH_ADD": (0x07, ["msg", "atomic"]),
    "CMP_SWAP": (0x08, ["msg", "atomic"]),
    "ATOMIC_RESPONSE": (0x09, ["msg", "aack"]),
    "ACK": (0x10, ["ack"]),
    "NACK": (0x11, ["ack", "nack"]),
    "CNP": (0x12, []),
    "KEEPALIVE": (0x13, []),
    "CONNECT_REQUEST": (0x20, ["cm"]),
    "CONNECT_CHALLENGE": (0x21, ["cm"]),
    "CONNECT_REPLY": (0x22, ["cm"]),
    "CONNECT_REJECT": (0x23, ["cm"]),
    "READY_TO_USE": (0x24, ["cm"]),
    "DISCONNECT_REQUEST": (0x25, ["cm"]),
    "DISCONNECT_REPLY": (0x26, ["cm"]),
}

# Each extension: list of (field, struct code). Big-endian throughout [WIRE-001].
EXT = {
    "msg": [("msn", "I"), ("offset", "I"), ("length", "I"), ("rsn", "I")],
    "reth": [("va", "Q"), ("rkey", "I"), ("dma_length", "I")],
    "imm": [("data", "I")],
    "atomic": [("va", "Q"), ("rkey", "I"), ("swap_add", "Q"), ("compare", "Q")],
    "aack": [("original", "Q")],
    "ack": [("cumulative_psn", "I"), ("sack_bitmap", "Q"), ("echoed_timestamp", "I"),
            ("ack_delay", "I"), ("ce_count", "I"), ("credit", "I"), ("echoed_path_id", "B"),
            ("flags", "B"), ("sender_count", "B"), ("_reserved", "B")],
    "nack": [("reason", "B"), ("rnr_timer", "B"), ("_reserved", "H"), ("psn", "I")],
    "cm": [("service_id", "Q"), ("transaction_id", "Q"), ("initial_psn", "I"), ("path_mtu", "H"),
           ("capabilities", "H"), ("initiator_depth", "B"), ("responder_resources", "B"),
           ("path_count", "B"), ("reason", "B"), ("cookie", "20s")],
}


# The attached ACK trailer (v1.0.15, 3.5.9): Triggering PSN, then an ACK header's 32 bytes.
ATTACHED = [("trigger_psn", "I")] + EXT["ack"]


def build(opcode_name, bh, ext, payload=b"", trimmed=False, attached=None):
    value, exts = OPCODES[opcode_name]
    ext_bytes = b""
    fields = {}
    for name in exts:
        for field, code in EXT[name]:
            v = 0 if field.startswith("_") else ext[name + "." + field]
            ext_bytes += struct.pack(">" + code, v)
            if not field.startswith("_"):
                key = name + "." + field
                if isinstance(v, bytes):
                    fields[key] = v.hex()
                elif v >= 2 ** 53:  # 2^53 - 1 is the largest exact JSON number (3.8, v1.0.1)
                    fields[key] = str(v)
                else:
                    fields[key] = v
    header_len = 24 + len(ext_bytes)
    assert header_len % 4 == 0
    flags = bh["flags"]
    payload_len = 0 if trimmed else len(payload)
    base = struct.pack(
        ">BBHIIHBBII",
        1 << 4,                       # version 1, reserved nibble 0
        value,
        flags,
        bh["dqpn"] & 0xFFFFFF,        # reserved byte 0 + 24-bit QPN
        bh["psn"],
        payload_len,
        bh["path_id"],
        header_len // 4,
        bh["timestamp"],
        bh["sqpn"] & 0xFFFFFF,
    )
    assert len(base) == 24
    fields = {
        "bh.version": 1, "bh.opcode": value, "bh.flags": flags, "bh.dqpn": bh["dqpn"],
        "bh.psn": bh["psn"], "bh.payload_length": payload_len, "bh.path_id": bh["path_id"],
        "bh.header_length": header_len // 4, "bh.timestamp": bh["timestamp"], "bh.sqpn": bh["sqpn"],
        **fields,
    }
    if trimmed:
        packet = base + ext_bytes
        fields["integrity.status"] = "absent"
    else:
        trailer = b""
        if attached is not None:
            assert flags & K
            for field, code in ATTACHED:
                v = 0 if field.startswith("_") else attached["attached." + field]
                trailer += struct.pack(">" + code, v)
        covered = base + ext_bytes + payload + trailer
        crc = crc32c(covered)
        packet = covered + struct.pack(">I", crc)
        fields["payload.hex"] = payload.hex()
        if attached is not None:
            fields.update({k: (str(v) if v >= 2 ** 53 else v) for k, v in attached.items()})
        fields["integrity.crc32c"] = crc
    return packet, fields


A, S, L, R, T, K = 0x8000, 0x4000, 0x2000, 0x1000, 0x0800, 0x0400
TS = 0x89ABCDEF
COOKIE = bytes(range(0xA0, 0xB4))
PRIVATE = bytes.fromhex("00007f3a12c04000") + struct.pack(">II", 0x5EC2E7, 65536)  # addr, rkey, len


def bh(flags=0, dqpn=0x000123, psn=0x00000064, path_id=3, sqpn=0x000456, timestamp=TS):
    return {"flags": flags, "dqpn": dqpn, "psn": psn, "path_id": path_id, "sqpn": sqpn,
            "timestamp": timestamp}


def cm(**kw):
    d = {"cm.service_id": 0x0000000000004E20, "cm.transaction_id": 0x0123456789ABCDEF,
         "cm.initial_psn": 0x3A5F0C21, "cm.path_mtu": 4096, "cm.capabilities": 0x0001,
         "cm.initiator_depth": 16, "cm.responder_resources": 16, "cm.path_count": 8,
         "cm.reason": 0, "cm.cookie": bytes(20)}
    d.update({"cm." + k: v for k, v in kw.items()})
    return d


PAYLOAD64 = bytes((i * 7 + 1) & 0xFF for i in range(64))
VA = 0x00007F3A12C04000

VECTORS = [
    ("send-only", "SEND carrying a whole 64-byte message in one packet (LAST set, ACK_REQ set).",
     ["WIRE-003", "WIRE-015", "WIRE-030", "WIRE-032", "WIRE-040"],
     "SEND", bh(flags=A | L), {"msg.msn": 7, "msg.offset": 0, "msg.length": 64, "msg.rsn": 5}, PAYLOAD64, False),
    ("send-with-imm-middle", "Middle packet of a 3-packet SEND_WITH_IMM; offset 1024, PMTU 1024 (payload truncated to 64 bytes for the vector's size, so offset+payload stays within length).",
     ["WIRE-031", "WIRE-036"],
     "SEND_WITH_IMM", bh(psn=0xFFFFFFFE), {"msg.msn": 8, "msg.offset": 1024, "msg.length": 3000, "msg.rsn": 6, "imm.data": 0xCAFEF00D}, PAYLOAD64, False),
    ("write-first", "First packet of a 4096-byte WRITE with a retransmission flag.",
     ["WIRE-034", "WIRE-035", "WIRE-016"],
     "WRITE", bh(flags=R, path_id=0), {"msg.msn": 9, "msg.offset": 0, "msg.length": 4096, "msg.rsn": 0, "reth.va": VA, "reth.rkey": 0x5EC2E7, "reth.dma_length": 4096}, PAYLOAD64, False),
    ("write-with-imm-last", "Last packet of a WRITE_WITH_IMM, SOLICITED and LAST.",
     ["WIRE-034", "WIRE-036", "WIRE-015"],
     "WRITE_WITH_IMM", bh(flags=S | L), {"msg.msn": 10, "msg.offset": 192, "msg.length": 256, "msg.rsn": 7, "reth.va": VA, "reth.rkey": 0x5EC2E7, "reth.dma_length": 256, "imm.data": 0x00000001}, PAYLOAD64, False),
    ("write-zero-length", "Zero-length WRITE: one packet, no payload.",
     ["WIRE-015", "WIRE-031"],
     "WRITE", bh(flags=L), {"msg.msn": 11, "msg.offset": 0, "msg.length": 0, "msg.rsn": 0, "reth.va": VA, "reth.rkey": 0x5EC2E7, "reth.dma_length": 0}, b"", False),
    ("read-request", "READ_REQUEST for 8192 bytes (reserves 2 PSNs at PMTU 4096).",
     ["WIRE-031", "WIRE-035", "WIRE-021"],
     "READ_REQUEST", bh(flags=A | L), {"msg.msn": 12, "msg.offset": 0, "msg.length": 8192, "msg.rsn": 0, "reth.va": VA + 4096, "reth.rkey": 0x00C0FFEE, "reth.dma_length": 8192}, b"", False),
    ("read-response", "Second READ_RESPONSE packet of that read.",
     ["WIRE-030", "WIRE-031"],
     "READ_RESPONSE", bh(flags=L, dqpn=0x000456, sqpn=0x000123, psn=0x00000065), {"msg.msn": 12, "msg.offset": 4096, "msg.length": 8192, "msg.rsn": 0}, PAYLOAD64, False),
    ("fetch-add", "FETCH_ADD of 1 to an aligned 8-byte target; compare is zero.",
     ["WIRE-037"],
     "FETCH_ADD", bh(flags=A | L), {"msg.msn": 13, "msg.offset": 0, "msg.length": 8, "msg.rsn": 0, "atomic.va": VA + 8, "atomic.rkey": 0x00C0FFEE, "atomic.swap_add": 1, "atomic.compare": 0}, b"", False),
    ("cmp-swap", "CMP_SWAP with 64-bit operands above 2^53 (decimal strings in the vector).",
     ["WIRE-037"],
     "CMP_SWAP", bh(flags=A | L), {"msg.msn": 14, "msg.offset": 0, "msg.length": 8, "msg.rsn": 0, "atomic.va": VA + 16, "atomic.rkey": 0x00C0FFEE, "atomic.swap_add": 0xFEDCBA9876543210, "atomic.compare": 0x0123456789ABCDEF}, b"", False),
    ("atomic-response", "ATOMIC_RESPONSE returning the original value.",
     ["WIRE-030"],
     "ATOMIC_RESPONSE", bh(flags=L, dqpn=0x000456, sqpn=0x000123), {"msg.msn": 14, "msg.offset": 0, "msg.length": 8, "msg.rsn": 0, "aack.original": 0xFFFFFFFFFFFFFFFF}, b"", False),
    ("ack-sack", "ACK with cumulative PSN 100 and PSNs 102, 103 and 164 selectively acknowledged, ECN echo, unlimited credit.",
     ["WIRE-060", "WIRE-061"],
     "ACK", bh(dqpn=0x000456, sqpn=0x000123, psn=0x00000066), {"ack.cumulative_psn": 100, "ack.sack_bitmap": (1 << 1) | (1 << 2) | (1 << 63), "ack.echoed_timestamp": 0x01020304, "ack.ack_delay": 2500, "ack.ce_count": 3, "ack.credit": 0xFFFFFFFF, "ack.echoed_path_id": 3, "ack.flags": 0x01, "ack.sender_count": 0}, b"", False),
    ("ack-sender-count", "ACK of a responder with SENDER_COUNT negotiated (v1.0.10): 32 requesters, credit 4, echoing path 2.",
     ["WIRE-060", "CC-038"],
     "ACK", bh(dqpn=0x000456, sqpn=0x000123, psn=0x00000070), {"ack.cumulative_psn": 0x71, "ack.sack_bitmap": 0, "ack.echoed_timestamp": 0x0A0B0C0D, "ack.ack_delay": 800, "ack.ce_count": 0, "ack.credit": 4, "ack.echoed_path_id": 2, "ack.flags": 0, "ack.sender_count": 32}, b"", False),
    ("nack-rnr", "NACK reason RNR with a 120 us timer (12 units), after an ACK header.",
     ["WIRE-063"],
     "NACK", bh(dqpn=0x000456, sqpn=0x000123, psn=0x00000064), {"ack.cumulative_psn": 100, "ack.sack_bitmap": 0, "ack.echoed_timestamp": TS, "ack.ack_delay": 0, "ack.ce_count": 0, "ack.credit": 32, "ack.echoed_path_id": 3, "ack.flags": 0, "ack.sender_count": 0, "nack.reason": 0x03, "nack.rnr_timer": 12, "nack.psn": 100}, b"", False),
    ("cnp", "Congestion notification packet (DCQCN baseline), PSN of the CE-marked packet that caused it.",
     ["WIRE-003", "WIRE-065"],
     "CNP", bh(dqpn=0x000456, sqpn=0x000123, psn=0x00000065), {}, b"", False),
    ("keepalive", "KEEPALIVE asking for an immediate ACK.",
     ["WIRE-003"],
     "KEEPALIVE", bh(flags=A, psn=0x00000064), {}, b"", False),
    ("connect-request", "First CONNECT_REQUEST (no cookie) with 16 bytes of private data (an MR address, rkey and length).",
     ["WIRE-070"],
     "CONNECT_REQUEST", bh(dqpn=0, psn=0, path_id=0, sqpn=0x000456), cm(), PRIVATE, False),
    ("connect-challenge", "CONNECT_CHALLENGE carrying a 20-byte stateless cookie.",
     ["WIRE-070"],
     "CONNECT_CHALLENGE", bh(dqpn=0x000456, psn=0, path_id=0, sqpn=0), cm(cookie=COOKIE, initial_psn=0), b"", False),
    ("connect-reply", "CONNECT_REPLY with the server's QPN (source), initial PSN and negotiated parameters.",
     ["WIRE-070"],
     "CONNECT_REPLY", bh(dqpn=0x000456, psn=0, path_id=0, sqpn=0x000123), cm(initial_psn=0x0BADCAFE, path_mtu=1024, capabilities=0, initiator_depth=8, responder_resources=8, path_count=4), PRIVATE, False),
    ("connect-reject", "CONNECT_REJECT with reason 0x02 and 5 bytes of private data.",
     ["WIRE-070"],
     "CONNECT_REJECT", bh(dqpn=0x000456, psn=0, path_id=0, sqpn=0), cm(reason=0x02, initial_psn=0), b"busy!", False),
    ("ready-to-use", "READY_TO_USE completing the handshake.",
     ["WIRE-070"],
     "READY_TO_USE", bh(dqpn=0x000123, psn=0, path_id=0, sqpn=0x000456), cm(), b"", False),
    ("disconnect-request", "DISCONNECT_REQUEST.",
     ["WIRE-070"],
     "DISCONNECT_REQUEST", bh(dqpn=0x000123, psn=0, path_id=0, sqpn=0x000456), cm(), b"", False),
    ("disconnect-reply", "DISCONNECT_REPLY.",
     ["WIRE-070"],
     "DISCONNECT_REPLY", bh(dqpn=0x000456, psn=0, path_id=0, sqpn=0x000123), cm(), b"", False),
    ("write-trimmed", "A WRITE packet after a switch trimmed it: TRIMMED set, payload length 0, no integrity check.",
     ["WIRE-042", "WIRE-005"],
     "WRITE", bh(flags=T, psn=0x00000065), {"msg.msn": 9, "msg.offset": 1024, "msg.length": 4096, "msg.rsn": 0, "reth.va": VA, "reth.rkey": 0x5EC2E7, "reth.dma_length": 4096}, PAYLOAD64, True),
    ("send-attached-ack", "SEND (a reply) carrying the ACK of the peer's request PSN 0x200 in its trailer (ATTACHED_ACK, v1.0.15): cumulative 0x201, credit 64, held 1500 ns; Payload Length counts only the 64-byte payload.",
     ["WIRE-071", "WIRE-005", "WIRE-040", "REL-071"],
     "SEND", bh(flags=A | L | K, psn=0x00000080, path_id=1), {"msg.msn": 15, "msg.offset": 0, "msg.length": 64, "msg.rsn": 9}, PAYLOAD64, False,
     {"attached.trigger_psn": 0x200, "attached.cumulative_psn": 0x201, "attached.sack_bitmap": 0, "attached.echoed_timestamp": 0x11223344, "attached.ack_delay": 1500, "attached.ce_count": 0, "attached.credit": 64, "attached.echoed_path_id": 2, "attached.flags": 0, "attached.sender_count": 0}),
]


def main():
    names = set()
    for name, desc, reqs, opcode, header, ext, payload, trimmed, *attached in VECTORS:
        assert name not in names
        names.add(name)
        packet, fields = build(opcode, header, ext, payload, trimmed, attached[0] if attached else None)
        doc = {"name": name, "description": desc, "requirements": reqs, "opcode": opcode,
               "length": len(packet), "hex": packet.hex(), "fields": fields}
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    print(f"wrote {len(VECTORS)} vectors to {HERE}")


if __name__ == "__main__":
    main()
