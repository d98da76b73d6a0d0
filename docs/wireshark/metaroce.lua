-- metaroce.lua -- Wireshark dissector for the MetaRoCE wire protocol (specification v1, section 3).
--
-- Usage:
--   tshark -X lua_script:/path/to/metaroce.lua -r capture.pcap
--   wireshark -X lua_script:/path/to/metaroce.lua
-- or copy this file into the personal Lua plugins folder (Help > About Wireshark > Folders).
--
-- The dissector is registered on UDP port 4796 (changeable in Preferences > Protocols > MetaRoCE),
-- appears in "Decode As..." for any UDP port, and also registers a strict heuristic on UDP so
-- MetaRoCE on other ports is recognised when the header is self-consistent.
--
-- One UDP payload may hold several MetaRoCE packets back to back: a capture taken before UDP
-- segmentation offload (GSO, e.g. on loopback or a host with USO) or after receive offload (GRO)
-- sees one super-datagram per batch. When the payload splits exactly into consecutive packets,
-- each consistent by its own Header Length and Payload Length (and attached ACK trailer), each is dissected as its own
-- MetaRoCE tree (metaroce.gso.index / metaroce.gso.count) and its Integrity Check verified.
--
-- Written for Wireshark 4.0 (Lua 5.2, bit32). The Integrity Check is verified with a table-driven
-- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init/xorout 0xFFFFFFFF), stored big-endian
-- in the last 4 bytes of the datagram. Trimmed packets ([WIRE-042]) carry no Integrity Check.
--
-- Running as root: Wireshark 4.0 prints "Running as user root ... This could be dangerous." but still
-- loads scripts given with -X lua_script: (verified with tshark 4.0.17); no extra option is needed.
--
-- Display filter examples:
--   metaroce.bh.opcode == 3            metaroce.integrity.status == "bad"
--   metaroce.bh.flags.trimmed          metaroce.nack.reason == 3
--   metaroce.bh.flags.attached_ack     metaroce.attached.cumulative_psn  (an ACK riding on a request, v1.0.15)

local bit = bit32

local metaroce = Proto("metaroce", "MetaRoCE")

local DEFAULT_PORT = 4796
local BH_LEN = 24
local CRC_LEN = 4

---------------------------------------------------------------------------------------------------
-- Tables from the specification
---------------------------------------------------------------------------------------------------

local opcode_names = {
    [0x01] = "SEND",
    [0x02] = "SEND_WITH_IMM",
    [0x03] = "WRITE",
    [0x04] = "WRITE_WITH_IMM",
    [0x05] = "READ_REQUEST",
    [0x06] = "READ_RESPONSE",
    [0x07] = "FETCH_ADD",
    [0x08] = "CMP_SWAP",
    [0x09] = "ATOMIC_RESPONSE",
    [0x10] = "ACK",
    [0x11] = "NACK",
    [0x12] = "CNP",
    [0x13] = "KEEPALIVE",
    [0x20] = "CONNECT_REQUEST",
    [0x21] = "CONNECT_CHALLENGE",
    [0x22] = "CONNECT_REPLY",
    [0x23] = "CONNECT_REJECT",
    [0x24] = "READY_TO_USE",
    [0x25] = "DISCONNECT_REQUEST",
    [0x26] = "DISCONNECT_REPLY",
}

local nack_reason_names = {
    [0x01] = "PSN_WINDOW",
    [0x02] = "TRIMMED",
    [0x03] = "RNR",
    [0x04] = "REMOTE_ACCESS",
    [0x05] = "INVALID_REQUEST",
    [0x06] = "REMOTE_OPERATION",
    [0x07] = "SEQUENCE_GAP",
}

-- Extension headers per opcode, in wire order (table 3.4 / 3.5).
local opcode_ext = {
    [0x01] = { "msg" },
    [0x02] = { "msg", "imm" },
    [0x03] = { "msg", "reth" },
    [0x04] = { "msg", "reth", "imm" },
    [0x05] = { "msg", "reth" },
    [0x06] = { "msg" },
    [0x07] = { "msg", "atomic" },
    [0x08] = { "msg", "atomic" },
    [0x09] = { "msg", "aack" },
    [0x10] = { "ack" },
    [0x11] = { "ack", "nack" },
    [0x12] = {},
    [0x13] = {},
    [0x20] = { "cm" },
    [0x21] = { "cm" },
    [0x22] = { "cm" },
    [0x23] = { "cm" },
    [0x24] = { "cm" },
    [0x25] = { "cm" },
    [0x26] = { "cm" },
}

local ext_size = { msg = 16, reth = 16, imm = 4, atomic = 28, aack = 8, ack = 32, nack = 8, cm = 48 }

-- Opcodes that may carry a payload, and the limit (3.4, [WIRE-021], [WIRE-022]).
local payload_limit = {
    [0x01] = 8192, [0x02] = 8192, [0x03] = 8192, [0x04] = 8192, [0x06] = 8192,
    [0x20] = 256, [0x22] = 256, [0x23] = 256,
}

-- Opcodes that a switch may trim ([WIRE-042]): those that carry payload.
local trimmable = {
    [0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x06] = true,
}

-- Expected Header Length in 4-byte words for each opcode.
local opcode_hlen = {}
for op, exts in pairs(opcode_ext) do
    local n = BH_LEN
    for _, e in ipairs(exts) do n = n + ext_size[e] end
    opcode_hlen[op] = n / 4
end

local FLAG_ACK_REQ    = 0x8000
local FLAG_SOLICITED  = 0x4000
local FLAG_LAST       = 0x2000
local FLAG_RETRANSMIT = 0x1000
local FLAG_TRIMMED    = 0x0800
local FLAG_ATTACHED   = 0x0400

-- The attached ACK trailer (3.5.9, v1.0.15): Triggering PSN and an ACK header, after the payload.
local ATTACHED_LEN = 36
-- Request opcodes, the only ones that may carry it ([WIRE-072]).
local request_opcode = {
    [0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x05] = true, [0x07] = true, [0x08] = true,
}

---------------------------------------------------------------------------------------------------
-- Fields. Abbreviations are "metaroce." + the keys used in spec-notes/vectors/*.json.
---------------------------------------------------------------------------------------------------

local F = {}
local function add(f) F[#F + 1] = f; return f end

-- Base Header
local f_bh_version        = add(ProtoField.uint8 ("metaroce.bh.version", "Version", base.DEC, nil, 0xF0))
local f_bh_reserved0      = add(ProtoField.uint8 ("metaroce.bh.reserved0", "Reserved", base.HEX, nil, 0x0F))
local f_bh_opcode         = add(ProtoField.uint8 ("metaroce.bh.opcode", "Opcode", base.DEC, opcode_names))
local f_bh_flags          = add(ProtoField.uint16("metaroce.bh.flags", "Flags", base.DEC))
local f_bh_flag_ack_req   = add(ProtoField.bool  ("metaroce.bh.flags.ack_req", "ACK_REQ", 16, nil, FLAG_ACK_REQ))
local f_bh_flag_solicited = add(ProtoField.bool  ("metaroce.bh.flags.solicited", "SOLICITED", 16, nil, FLAG_SOLICITED))
local f_bh_flag_last      = add(ProtoField.bool  ("metaroce.bh.flags.last", "LAST", 16, nil, FLAG_LAST))
local f_bh_flag_retx      = add(ProtoField.bool  ("metaroce.bh.flags.retransmit", "RETRANSMIT", 16, nil, FLAG_RETRANSMIT))
local f_bh_flag_trimmed   = add(ProtoField.bool  ("metaroce.bh.flags.trimmed", "TRIMMED", 16, nil, FLAG_TRIMMED))
local f_bh_flag_attached  = add(ProtoField.bool  ("metaroce.bh.flags.attached_ack", "ATTACHED_ACK", 16, nil, FLAG_ATTACHED))
local f_bh_flag_reserved  = add(ProtoField.uint16("metaroce.bh.flags.reserved", "Reserved flags", base.HEX, nil, 0x03FF))
local f_bh_reserved4      = add(ProtoField.uint8 ("metaroce.bh.reserved4", "Reserved", base.HEX))
local f_bh_dqpn           = add(ProtoField.uint24("metaroce.bh.dqpn", "Destination QPN", base.DEC))
local f_bh_psn            = add(ProtoField.uint32("metaroce.bh.psn", "PSN", base.DEC))
local f_bh_payload_length = add(ProtoField.uint16("metaroce.bh.payload_length", "Payload Length", base.DEC))
local f_bh_path_id        = add(ProtoField.uint8 ("metaroce.bh.path_id", "Path ID", base.DEC))
local f_bh_header_length  = add(ProtoField.uint8 ("metaroce.bh.header_length", "Header Length (words)", base.DEC))
local f_bh_timestamp      = add(ProtoField.uint32("metaroce.bh.timestamp", "Transmit Timestamp (ns)", base.DEC))
local f_bh_reserved20     = add(ProtoField.uint8 ("metaroce.bh.reserved20", "Reserved", base.HEX))
local f_bh_sqpn           = add(ProtoField.uint24("metaroce.bh.sqpn", "Source QPN", base.DEC))

-- MSG
local f_msg_msn    = add(ProtoField.uint32("metaroce.msg.msn", "Message Sequence Number", base.DEC))
local f_msg_offset = add(ProtoField.uint32("metaroce.msg.offset", "Message Offset", base.DEC))
local f_msg_length = add(ProtoField.uint32("metaroce.msg.length", "Message Length", base.DEC))
local f_msg_rsn    = add(ProtoField.uint32("metaroce.msg.rsn", "Receive Sequence Number", base.DEC))

-- RETH
local f_reth_va         = add(ProtoField.uint64("metaroce.reth.va", "Virtual Address", base.DEC))
local f_reth_rkey       = add(ProtoField.uint32("metaroce.reth.rkey", "R_Key", base.DEC))
local f_reth_dma_length = add(ProtoField.uint32("metaroce.reth.dma_length", "DMA Length", base.DEC))

-- IMM
local f_imm_data = add(ProtoField.uint32("metaroce.imm.data", "Immediate Data", base.DEC))

-- ATOMIC
local f_atomic_va       = add(ProtoField.uint64("metaroce.atomic.va", "Virtual Address", base.DEC))
local f_atomic_rkey     = add(ProtoField.uint32("metaroce.atomic.rkey", "R_Key", base.DEC))
local f_atomic_swap_add = add(ProtoField.uint64("metaroce.atomic.swap_add", "Swap or Add Data", base.DEC))
local f_atomic_compare  = add(ProtoField.uint64("metaroce.atomic.compare", "Compare Data", base.DEC))

-- AACK
local f_aack_original = add(ProtoField.uint64("metaroce.aack.original", "Original Remote Data", base.DEC))

-- ACK
local f_ack_cumulative_psn   = add(ProtoField.uint32("metaroce.ack.cumulative_psn", "Cumulative PSN", base.DEC))
local f_ack_sack_bitmap      = add(ProtoField.uint64("metaroce.ack.sack_bitmap", "Selective-ACK Bitmap", base.DEC))
local f_ack_echoed_timestamp = add(ProtoField.uint32("metaroce.ack.echoed_timestamp", "Echoed Timestamp (ns)", base.DEC))
local f_ack_ack_delay        = add(ProtoField.uint32("metaroce.ack.ack_delay", "ACK Delay (ns)", base.DEC))
local f_ack_ce_count         = add(ProtoField.uint32("metaroce.ack.ce_count", "CE Count", base.DEC))
local f_ack_credit           = add(ProtoField.uint32("metaroce.ack.credit", "Credit", base.DEC))
local f_ack_echoed_path_id   = add(ProtoField.uint8 ("metaroce.ack.echoed_path_id", "Echoed Path ID", base.DEC))
local f_ack_flags            = add(ProtoField.uint8 ("metaroce.ack.flags", "ACK Flags", base.DEC))
local f_ack_flag_ecn_echo    = add(ProtoField.bool  ("metaroce.ack.flags.ecn_echo", "ECN_ECHO", 8, nil, 0x01))
local f_ack_flag_duplicate   = add(ProtoField.bool  ("metaroce.ack.flags.duplicate", "DUPLICATE", 8, nil, 0x02))
local f_ack_sender_count     = add(ProtoField.uint8 ("metaroce.ack.sender_count", "Sender Count", base.DEC))
local f_ack_reserved         = add(ProtoField.uint8 ("metaroce.ack.reserved", "Reserved", base.HEX))

-- Attached ACK trailer (v1.0.15): the same ACK fields under "attached."
local f_att_trigger_psn      = add(ProtoField.uint32("metaroce.attached.trigger_psn", "Triggering PSN", base.DEC))
local f_att_cumulative_psn   = add(ProtoField.uint32("metaroce.attached.cumulative_psn", "Cumulative PSN", base.DEC))
local f_att_sack_bitmap      = add(ProtoField.uint64("metaroce.attached.sack_bitmap", "Selective-ACK Bitmap", base.DEC))
local f_att_echoed_timestamp = add(ProtoField.uint32("metaroce.attached.echoed_timestamp", "Echoed Timestamp (ns)", base.DEC))
local f_att_ack_delay        = add(ProtoField.uint32("metaroce.attached.ack_delay", "ACK Delay (ns)", base.DEC))
local f_att_ce_count         = add(ProtoField.uint32("metaroce.attached.ce_count", "CE Count", base.DEC))
local f_att_credit           = add(ProtoField.uint32("metaroce.attached.credit", "Credit", base.DEC))
local f_att_echoed_path_id   = add(ProtoField.uint8 ("metaroce.attached.echoed_path_id", "Echoed Path ID", base.DEC))
local f_att_flags            = add(ProtoField.uint8 ("metaroce.attached.flags", "ACK Flags", base.DEC))
local f_att_flag_ecn_echo    = add(ProtoField.bool  ("metaroce.attached.flags.ecn_echo", "ECN_ECHO", 8, nil, 0x01))
local f_att_flag_duplicate   = add(ProtoField.bool  ("metaroce.attached.flags.duplicate", "DUPLICATE", 8, nil, 0x02))
local f_att_sender_count     = add(ProtoField.uint8 ("metaroce.attached.sender_count", "Sender Count", base.DEC))
local f_att_reserved         = add(ProtoField.uint8 ("metaroce.attached.reserved", "Reserved", base.HEX))

-- NACK
local f_nack_reason    = add(ProtoField.uint8 ("metaroce.nack.reason", "Reason", base.DEC, nack_reason_names))
local f_nack_rnr_timer = add(ProtoField.uint8 ("metaroce.nack.rnr_timer", "RNR Timer (x10 us)", base.DEC))
local f_nack_reserved  = add(ProtoField.uint16("metaroce.nack.reserved", "Reserved", base.HEX))
local f_nack_psn       = add(ProtoField.uint32("metaroce.nack.psn", "NACK PSN", base.DEC))

-- CM
local f_cm_service_id          = add(ProtoField.uint64("metaroce.cm.service_id", "Service ID", base.DEC))
local f_cm_transaction_id      = add(ProtoField.uint64("metaroce.cm.transaction_id", "Transaction ID", base.DEC))
local f_cm_initial_psn         = add(ProtoField.uint32("metaroce.cm.initial_psn", "Initial PSN", base.DEC))
local f_cm_path_mtu            = add(ProtoField.uint16("metaroce.cm.path_mtu", "Path MTU", base.DEC))
local f_cm_capabilities        = add(ProtoField.uint16("metaroce.cm.capabilities", "Capability Flags", base.DEC))
local f_cm_cap_credit          = add(ProtoField.bool  ("metaroce.cm.capabilities.receiver_credit", "RECEIVER_CREDIT", 16, nil, 0x0001))
local f_cm_cap_gbn             = add(ProtoField.bool  ("metaroce.cm.capabilities.go_back_n", "GO_BACK_N", 16, nil, 0x0002))
local f_cm_cap_ecn             = add(ProtoField.bool  ("metaroce.cm.capabilities.ecn", "ECN", 16, nil, 0x0004))
local f_cm_cap_sender_count    = add(ProtoField.bool  ("metaroce.cm.capabilities.sender_count", "SENDER_COUNT", 16, nil, 0x0008))
local f_cm_cap_attached_ack    = add(ProtoField.bool  ("metaroce.cm.capabilities.attached_ack", "ATTACHED_ACK", 16, nil, 0x0010))
local f_cm_cap_deferred_ack    = add(ProtoField.bool  ("metaroce.cm.capabilities.deferred_ack", "DEFERRED_ACK", 16, nil, 0x0020))
local f_cm_initiator_depth     = add(ProtoField.uint8 ("metaroce.cm.initiator_depth", "Initiator Depth", base.DEC))
local f_cm_responder_resources = add(ProtoField.uint8 ("metaroce.cm.responder_resources", "Responder Resources", base.DEC))
local f_cm_path_count          = add(ProtoField.uint8 ("metaroce.cm.path_count", "Path Count", base.DEC))
local f_cm_reason              = add(ProtoField.uint8 ("metaroce.cm.reason", "Reason", base.DEC))
local f_cm_cookie              = add(ProtoField.bytes ("metaroce.cm.cookie", "Cookie"))

-- Payload and Integrity Check
local f_payload           = add(ProtoField.bytes ("metaroce.payload", "Payload"))
local f_integrity_crc32c  = add(ProtoField.uint32("metaroce.integrity.crc32c", "Integrity Check (CRC-32C)", base.DEC))
local f_integrity_calc    = add(ProtoField.uint32("metaroce.integrity.computed", "Computed CRC-32C", base.DEC))
local f_integrity_status  = add(ProtoField.string("metaroce.integrity.status", "Integrity status"))

-- Super-datagrams (GSO/GRO): position of each packet in its UDP payload
local f_gso_index = add(ProtoField.uint16("metaroce.gso.index", "Packet in UDP payload", base.DEC))
local f_gso_count = add(ProtoField.uint16("metaroce.gso.count", "Packets in UDP payload", base.DEC))

metaroce.fields = F

---------------------------------------------------------------------------------------------------
-- Expert info
---------------------------------------------------------------------------------------------------

local e_bad_crc = ProtoExpert.new("metaroce.integrity.bad", "Integrity Check (CRC-32C) failed",
    expert.group.CHECKSUM, expert.severity.ERROR)
local e_unknown_opcode = ProtoExpert.new("metaroce.bh.opcode.unknown", "Unknown opcode",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_bad_header_length = ProtoExpert.new("metaroce.bh.header_length.bad", "Header Length does not match the opcode",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_length_mismatch = ProtoExpert.new("metaroce.length_mismatch", "Datagram length does not match Header Length and Payload Length",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_truncated = ProtoExpert.new("metaroce.truncated", "Truncated MetaRoCE packet",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_bad_version = ProtoExpert.new("metaroce.bh.version.unsupported", "Unsupported version",
    expert.group.PROTOCOL, expert.severity.WARN)
local e_bad_trim = ProtoExpert.new("metaroce.bad_trim", "Invalid trimmed packet",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_trimmed = ProtoExpert.new("metaroce.trimmed", "Trimmed packet: no payload and no Integrity Check",
    expert.group.SEQUENCE, expert.severity.CHAT)
local e_unexpected_payload = ProtoExpert.new("metaroce.unexpected_payload", "Payload not allowed for this opcode",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_oversize = ProtoExpert.new("metaroce.oversize", "Payload Length exceeds the limit for this opcode",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_reserved = ProtoExpert.new("metaroce.reserved_nonzero", "Reserved field is not zero",
    expert.group.PROTOCOL, expert.severity.WARN)
local e_bad_attached = ProtoExpert.new("metaroce.bad_attached_ack", "ATTACHED_ACK on an opcode that is not a request",
    expert.group.MALFORMED, expert.severity.ERROR)

metaroce.experts = { e_bad_crc, e_unknown_opcode, e_bad_header_length, e_length_mismatch, e_truncated,
    e_bad_version, e_bad_trim, e_trimmed, e_unexpected_payload, e_oversize, e_reserved, e_bad_attached }

---------------------------------------------------------------------------------------------------
-- Preferences
---------------------------------------------------------------------------------------------------

metaroce.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT, "UDP destination port of MetaRoCE traffic")
metaroce.prefs.verify_crc = Pref.bool("Verify Integrity Check", true, "Compute and verify the CRC-32C trailer")

---------------------------------------------------------------------------------------------------
-- CRC-32C (Castagnoli), table-driven, Lua 5.2 bit32
---------------------------------------------------------------------------------------------------

local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if bit.band(c, 1) ~= 0 then
            c = bit.bxor(bit.rshift(c, 1), 0x82F63B78)
        else
            c = bit.rshift(c, 1)
        end
    end
    crc_table[i] = c
end

-- CRC-32C of the Lua string s.
local function crc32c(s)
    local band, bxor, rshift, byte = bit.band, bit.bxor, bit.rshift, string.byte
    local c = 0xFFFFFFFF
    local n = #s
    local i = 1
    while i <= n do
        local j = math.min(i + 255, n)
        local chunk = { byte(s, i, j) }
        for k = 1, #chunk do
            c = bxor(crc_table[band(bxor(c, chunk[k]), 0xFF)], rshift(c, 8))
        end
        i = j + 1
    end
    return bxor(c, 0xFFFFFFFF)
end

-- Self test with the standard check value ("123456789" -> 0xE3069283).
assert(crc32c("123456789") == 0xE3069283, "metaroce.lua: CRC-32C self-test failed")

---------------------------------------------------------------------------------------------------
-- Extension header dissectors: each takes (tvb, offset, tree) and returns a table of values
---------------------------------------------------------------------------------------------------

local function reserved_check(tree, range)
    local zero = true
    for i = 0, range:len() - 1 do
        if range(i, 1):uint() ~= 0 then zero = false break end
    end
    if not zero then tree:add_proto_expert_info(e_reserved) end
end

local ext_dissectors = {}

ext_dissectors.msg = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 16), "Message Header (MSG)")
    t:add(f_msg_msn, tvb(o, 4))
    t:add(f_msg_offset, tvb(o + 4, 4))
    t:add(f_msg_length, tvb(o + 8, 4))
    t:add(f_msg_rsn, tvb(o + 12, 4))
    return { msn = tvb(o, 4):uint(), offset = tvb(o + 4, 4):uint(), length = tvb(o + 8, 4):uint() }
end

ext_dissectors.reth = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 16), "RDMA Header (RETH)")
    t:add(f_reth_va, tvb(o, 8))
    t:add(f_reth_rkey, tvb(o + 8, 4))
    t:add(f_reth_dma_length, tvb(o + 12, 4))
    return { rkey = tvb(o + 8, 4):uint(), dma_length = tvb(o + 12, 4):uint() }
end

ext_dissectors.imm = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 4), "Immediate Data (IMM)")
    t:add(f_imm_data, tvb(o, 4))
    return { data = tvb(o, 4):uint() }
end

ext_dissectors.atomic = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 28), "Atomic Header (ATOMIC)")
    t:add(f_atomic_va, tvb(o, 8))
    t:add(f_atomic_rkey, tvb(o + 8, 4))
    t:add(f_atomic_swap_add, tvb(o + 12, 8))
    t:add(f_atomic_compare, tvb(o + 20, 8))
    return {}
end

ext_dissectors.aack = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 8), "Atomic Acknowledgement (AACK)")
    t:add(f_aack_original, tvb(o, 8))
    return {}
end

ext_dissectors.ack = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 32), "Acknowledgement Header (ACK)")
    t:add(f_ack_cumulative_psn, tvb(o, 4))
    t:add(f_ack_sack_bitmap, tvb(o + 4, 8))
    t:add(f_ack_echoed_timestamp, tvb(o + 12, 4))
    t:add(f_ack_ack_delay, tvb(o + 16, 4))
    t:add(f_ack_ce_count, tvb(o + 20, 4))
    local credit = tvb(o + 24, 4):uint()
    local ct = t:add(f_ack_credit, tvb(o + 24, 4))
    if credit == 0xFFFFFFFF then ct:append_text(" (no limit)") end
    t:add(f_ack_echoed_path_id, tvb(o + 28, 1))
    local ft = t:add(f_ack_flags, tvb(o + 29, 1))
    ft:add(f_ack_flag_ecn_echo, tvb(o + 29, 1))
    ft:add(f_ack_flag_duplicate, tvb(o + 29, 1))
    -- Byte 30: the responder's Sender Count with SENDER_COUNT negotiated, else 0 [CC-038] (v1.0.10).
    local sc = t:add(f_ack_sender_count, tvb(o + 30, 1))
    if tvb(o + 30, 1):uint() == 0 then sc:append_text(" (none: SENDER_COUNT not negotiated)") end
    local rt = t:add(f_ack_reserved, tvb(o + 31, 1))
    reserved_check(rt, tvb(o + 31, 1))
    return { cumulative_psn = tvb(o, 4):uint() }
end

-- The attached ACK trailer at o ([WIRE-071], v1.0.15): Triggering PSN, then an ACK header.
local function dissect_attached(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, ATTACHED_LEN), "Attached ACK")
    t:add(f_att_trigger_psn, tvb(o, 4))
    local a = o + 4
    t:add(f_att_cumulative_psn, tvb(a, 4))
    t:add(f_att_sack_bitmap, tvb(a + 4, 8))
    t:add(f_att_echoed_timestamp, tvb(a + 12, 4))
    t:add(f_att_ack_delay, tvb(a + 16, 4))
    t:add(f_att_ce_count, tvb(a + 20, 4))
    local ct = t:add(f_att_credit, tvb(a + 24, 4))
    if tvb(a + 24, 4):uint() == 0xFFFFFFFF then ct:append_text(" (no limit)") end
    t:add(f_att_echoed_path_id, tvb(a + 28, 1))
    local ft = t:add(f_att_flags, tvb(a + 29, 1))
    ft:add(f_att_flag_ecn_echo, tvb(a + 29, 1))
    ft:add(f_att_flag_duplicate, tvb(a + 29, 1))
    t:add(f_att_sender_count, tvb(a + 30, 1))
    local rt = t:add(f_att_reserved, tvb(a + 31, 1))
    reserved_check(rt, tvb(a + 31, 1))
    return tvb(o, 4):uint(), tvb(a, 4):uint()
end

ext_dissectors.nack = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 8), "Negative Acknowledgement (NACK)")
    t:add(f_nack_reason, tvb(o, 1))
    t:add(f_nack_rnr_timer, tvb(o + 1, 1))
    local rt = t:add(f_nack_reserved, tvb(o + 2, 2))
    reserved_check(rt, tvb(o + 2, 2))
    t:add(f_nack_psn, tvb(o + 4, 4))
    return { reason = tvb(o, 1):uint(), psn = tvb(o + 4, 4):uint() }
end

ext_dissectors.cm = function(tvb, o, tree)
    local t = tree:add(metaroce, tvb(o, 48), "Connection-Manager Header (CM)")
    t:add(f_cm_service_id, tvb(o, 8))
    t:add(f_cm_transaction_id, tvb(o + 8, 8))
    t:add(f_cm_initial_psn, tvb(o + 16, 4))
    t:add(f_cm_path_mtu, tvb(o + 20, 2))
    local ct = t:add(f_cm_capabilities, tvb(o + 22, 2))
    ct:add(f_cm_cap_credit, tvb(o + 22, 2))
    ct:add(f_cm_cap_gbn, tvb(o + 22, 2))
    ct:add(f_cm_cap_ecn, tvb(o + 22, 2))
    ct:add(f_cm_cap_sender_count, tvb(o + 22, 2))
    ct:add(f_cm_cap_attached_ack, tvb(o + 22, 2))
    ct:add(f_cm_cap_deferred_ack, tvb(o + 22, 2))
    t:add(f_cm_initiator_depth, tvb(o + 24, 1))
    t:add(f_cm_responder_resources, tvb(o + 25, 1))
    t:add(f_cm_path_count, tvb(o + 26, 1))
    t:add(f_cm_reason, tvb(o + 27, 1))
    t:add(f_cm_cookie, tvb(o + 28, 20))
    return { service_id = tvb(o, 8):uint64() }
end

---------------------------------------------------------------------------------------------------
-- Main dissector
---------------------------------------------------------------------------------------------------

local function flag_names(flags)
    local names = {}
    if bit.band(flags, FLAG_ACK_REQ) ~= 0 then names[#names + 1] = "A" end
    if bit.band(flags, FLAG_SOLICITED) ~= 0 then names[#names + 1] = "S" end
    if bit.band(flags, FLAG_LAST) ~= 0 then names[#names + 1] = "L" end
    if bit.band(flags, FLAG_RETRANSMIT) ~= 0 then names[#names + 1] = "R" end
    if bit.band(flags, FLAG_TRIMMED) ~= 0 then names[#names + 1] = "T" end
    if bit.band(flags, FLAG_ATTACHED) ~= 0 then names[#names + 1] = "K" end
    return table.concat(names, ",")
end

-- Dissects one MetaRoCE packet (the whole of tvb), the index-th of count in its UDP payload when
-- index is given (count 0: the first of a payload not all captured, whose length is reported).
-- Returns its length, the Info text and the integrity status ("good", "bad", "absent" or
-- "unverified").
local function dissect_packet(tvb, pinfo, tree, index, count, reported_len)
    local len = tvb:len()

    local root = tree:add(metaroce, tvb(), "MetaRoCE")
    if index and count == 0 then
        root:append_text(" [first in the UDP payload; the rest was not captured]")
    elseif index then
        root:append_text(string.format(" [%d of %d in the UDP payload]", index, count))
        root:add(f_gso_index, index):set_generated()
        root:add(f_gso_count, count):set_generated()
    end

    if len < BH_LEN then
        root:add_proto_expert_info(e_truncated, "Truncated: " .. len .. " bytes, Base Header needs 24")
        root:add(f_integrity_status, "absent"):set_generated()
        return len, "MetaRoCE truncated (" .. len .. " bytes)", "absent"
    end

    -- Base Header
    local version = bit.rshift(tvb(0, 1):uint(), 4)
    local opcode = tvb(1, 1):uint()
    local flags = tvb(2, 2):uint()
    local dqpn = tvb(5, 3):uint()
    local psn = tvb(8, 4):uint()
    local payload_length = tvb(12, 2):uint()
    local hlen_words = tvb(15, 1):uint()
    local trimmed = bit.band(flags, FLAG_TRIMMED) ~= 0
    -- A trimmed packet lost its attached ACK with its payload ([WIRE-074]).
    local trailer = (bit.band(flags, FLAG_ATTACHED) ~= 0 and not trimmed) and ATTACHED_LEN or 0
    local opname = opcode_names[opcode] or string.format("UNKNOWN(0x%02x)", opcode)

    local bh = root:add(metaroce, tvb(0, BH_LEN), "Base Header")
    local vt = bh:add(f_bh_version, tvb(0, 1))
    if version ~= 1 then
        vt:add_proto_expert_info(e_bad_version, "Unsupported version " .. version .. " (this dissector implements 1)")
    end
    local r0 = bh:add(f_bh_reserved0, tvb(0, 1))
    if bit.band(tvb(0, 1):uint(), 0x0F) ~= 0 then r0:add_proto_expert_info(e_reserved) end
    local ot = bh:add(f_bh_opcode, tvb(1, 1))
    if not opcode_names[opcode] then
        ot:add_proto_expert_info(e_unknown_opcode, string.format("Unknown opcode 0x%02x", opcode))
    end
    local ft = bh:add(f_bh_flags, tvb(2, 2))
    local fn = flag_names(flags)
    if fn ~= "" then ft:append_text(" [" .. fn .. "]") end
    ft:add(f_bh_flag_ack_req, tvb(2, 2))
    ft:add(f_bh_flag_solicited, tvb(2, 2))
    ft:add(f_bh_flag_last, tvb(2, 2))
    ft:add(f_bh_flag_retx, tvb(2, 2))
    ft:add(f_bh_flag_trimmed, tvb(2, 2))
    local fat = ft:add(f_bh_flag_attached, tvb(2, 2))
    if bit.band(flags, FLAG_ATTACHED) ~= 0 and opcode_names[opcode] and not request_opcode[opcode] then
        fat:add_proto_expert_info(e_bad_attached, "ATTACHED_ACK on " .. opname .. " (only requests carry it)")
    end
    local frt = ft:add(f_bh_flag_reserved, tvb(2, 2))
    if bit.band(flags, 0x03FF) ~= 0 then frt:add_proto_expert_info(e_reserved) end
    local r4 = bh:add(f_bh_reserved4, tvb(4, 1))
    if tvb(4, 1):uint() ~= 0 then r4:add_proto_expert_info(e_reserved) end
    bh:add(f_bh_dqpn, tvb(5, 3))
    bh:add(f_bh_psn, tvb(8, 4))
    bh:add(f_bh_payload_length, tvb(12, 2))
    bh:add(f_bh_path_id, tvb(14, 1))
    local ht = bh:add(f_bh_header_length, tvb(15, 1))
    ht:append_text(" (" .. (hlen_words * 4) .. " bytes)")
    bh:add(f_bh_timestamp, tvb(16, 4))
    local r20 = bh:add(f_bh_reserved20, tvb(20, 1))
    if tvb(20, 1):uint() ~= 0 then r20:add_proto_expert_info(e_reserved) end
    bh:add(f_bh_sqpn, tvb(21, 3))

    local info = string.format("%s PSN=%u QPN=%u len=%u", opname, psn, dqpn, payload_length)

    -- Extension headers. Their layout is determined by the opcode alone ([WIRE-004]); when the
    -- opcode is unknown, fall back to Header Length to find the end of the headers.
    local exts = opcode_ext[opcode]
    local expected_hlen = opcode_hlen[opcode]
    if expected_hlen and hlen_words ~= expected_hlen then
        ht:add_proto_expert_info(e_bad_header_length, string.format(
            "Header Length %d words, %s requires %d", hlen_words, opname, expected_hlen))
    elseif not expected_hlen and hlen_words * 4 < BH_LEN then
        ht:add_proto_expert_info(e_bad_header_length, "Header Length " .. hlen_words .. " words is shorter than the Base Header")
    end
    local hdr_end = (expected_hlen or hlen_words) * 4
    if hdr_end < BH_LEN then hdr_end = BH_LEN end

    local offset = BH_LEN
    local values = {}
    if exts then
        for _, e in ipairs(exts) do
            local sz = ext_size[e]
            if offset + sz > len then
                root:add_proto_expert_info(e_truncated, string.format(
                    "Truncated: %s header needs %d bytes at offset %d, datagram has %d", string.upper(e), sz, offset, len))
                root:add(f_integrity_status, "absent"):set_generated()
                return len, info .. " [TRUNCATED]", "absent"
            end
            values[e] = ext_dissectors[e](tvb, offset, root)
            offset = offset + sz
        end
    elseif hdr_end > len then
        root:add_proto_expert_info(e_truncated, "Truncated: Header Length exceeds the datagram")
        root:add(f_integrity_status, "absent"):set_generated()
        return len, info .. " [TRUNCATED]", "absent"
    end

    if values.ack then info = info .. string.format(" cumPSN=%u", values.ack.cumulative_psn) end
    if values.nack then
        info = info .. string.format(" reason=%s nackPSN=%u",
            nack_reason_names[values.nack.reason] or tostring(values.nack.reason), values.nack.psn)
    end
    if values.msg then info = info .. string.format(" MSN=%u off=%u", values.msg.msn, values.msg.offset) end
    if fn ~= "" then info = info .. " [" .. fn .. "]" end

    -- Payload and Integrity Check
    local status
    local reported = reported_len or tvb:reported_len()
    if len < reported and len >= hdr_end then
        -- Cut by the capture's snapshot length: the headers are all here, the rest is not, so the
        -- Integrity Check cannot be verified (nor is its absence an error).
        status = "unverified"
        if hdr_end + payload_length + trailer + CRC_LEN ~= reported and not (trimmed and reported == hdr_end) then
            root:add_proto_expert_info(e_length_mismatch, string.format(
                "Datagram is %d bytes; Header Length %d + Payload Length %d + %d + 4 = %d",
                reported, hdr_end, payload_length, trailer, hdr_end + payload_length + trailer + CRC_LEN))
        end
        if len > hdr_end then
            root:add(f_payload, tvb(hdr_end, len - hdr_end)):set_text(string.format(
                "Payload (%d of %d bytes captured)", len - hdr_end, math.max(0, reported - hdr_end - CRC_LEN)))
        end
        info = info .. " [snapped]"
    elseif trimmed and len == hdr_end then
        -- Correctly trimmed: no payload, no Integrity Check ([WIRE-042]).
        status = "absent"
        if not trimmable[opcode] then
            root:add_proto_expert_info(e_bad_trim, opname .. " may not be trimmed")
        end
        if payload_length ~= 0 then
            root:add_proto_expert_info(e_bad_trim, "Trimmed packet with non-zero Payload Length")
        end
        root:add_proto_expert_info(e_trimmed)
    elseif len < hdr_end + trailer + CRC_LEN then
        status = "absent"
        root:add_proto_expert_info(e_truncated, string.format(
            "Truncated: %d bytes, headers plus Integrity Check need %d", len, hdr_end + trailer + CRC_LEN))
        info = info .. " [TRUNCATED]"
    else
        if trimmed then
            root:add_proto_expert_info(e_bad_trim, "TRIMMED flag set but the packet still has payload or Integrity Check")
        end
        local crc_off = len - CRC_LEN
        local plen = crc_off - trailer - hdr_end
        if plen > 0 then
            local pt = root:add(f_payload, tvb(hdr_end, plen))
            pt:set_text(string.format("Payload (%d bytes)", plen))
            if opcode == 0x20 or opcode == 0x22 or opcode == 0x23 then pt:append_text(" [private data]") end
        end
        if trailer > 0 then
            -- Between payload and Integrity Check, covered by it ([WIRE-071]).
            local trig, cum = dissect_attached(tvb, crc_off - trailer, root)
            info = info .. string.format(" +ACK(trigger=%u cumPSN=%u)", trig, cum)
        end
        if hdr_end + payload_length + trailer + CRC_LEN ~= len then
            root:add_proto_expert_info(e_length_mismatch, string.format(
                "Datagram is %d bytes; Header Length %d + Payload Length %d + %d + 4 = %d",
                len, hdr_end, payload_length, trailer, hdr_end + payload_length + trailer + CRC_LEN))
        end
        local limit = payload_limit[opcode]
        if exts and not limit and payload_length ~= 0 then
            root:add_proto_expert_info(e_unexpected_payload, opname .. " carries no payload, Payload Length must be 0")
        elseif limit and payload_length > limit then
            root:add_proto_expert_info(e_oversize, string.format(
                "Payload Length %d exceeds %d for %s", payload_length, limit, opname))
        end

        local stored = tvb(crc_off, CRC_LEN):uint()
        local it = root:add(metaroce, tvb(crc_off, CRC_LEN), "Integrity Check")
        local ct = it:add(f_integrity_crc32c, tvb(crc_off, CRC_LEN))
        ct:append_text(string.format(" (0x%08x)", stored))
        if metaroce.prefs.verify_crc then
            local computed = crc32c(tvb:raw(0, crc_off))
            local cc = it:add(f_integrity_calc, tvb(crc_off, CRC_LEN), computed)
            cc:set_generated()
            cc:append_text(string.format(" (0x%08x)", computed))
            if computed == stored then
                status = "good"
            else
                status = "bad"
                ct:add_proto_expert_info(e_bad_crc, string.format(
                    "Integrity Check failed: stored 0x%08x, computed 0x%08x", stored, computed))
                info = info .. " [BAD CRC]"
            end
        else
            status = "unverified"
        end
    end
    local st = root:add(f_integrity_status, status)
    st:set_generated()

    root:append_text(string.format(", %s, PSN %u, QPN %u", opname, psn, dqpn))
    return len, info, status
end

-- Length of the packet at offset o as its own Base Header describes it (Header Length of a known
-- opcode, Payload Length, the 4-byte Integrity Check unless trimmed), or nil when the bytes there
-- are no self-consistent MetaRoCE Base Header.
local function packet_length(tvb, o)
    -- The Base Header must be captured (a snapshot length may cut what follows it).
    if tvb:len() - o < BH_LEN then return nil end
    if bit.rshift(tvb(o, 1):uint(), 4) ~= 1 then return nil end
    local expected = opcode_hlen[tvb(o + 1, 1):uint()]
    if not expected or tvb(o + 15, 1):uint() ~= expected then return nil end
    local pl = tvb(o + 12, 2):uint()
    local flags = tvb(o + 2, 2):uint()
    if bit.band(flags, FLAG_TRIMMED) ~= 0 and pl == 0 then
        return expected * 4
    end
    if bit.band(flags, FLAG_ATTACHED) ~= 0 then
        return expected * 4 + pl + ATTACHED_LEN + CRC_LEN
    end
    return expected * 4 + pl + CRC_LEN
end

-- The packets of a UDP payload: a list of {offset, length} when it splits exactly into
-- consecutive self-consistent packets (one for an ordinary datagram), else nil.
local function split(tvb)
    local packets = {}
    local o = 0
    local len = tvb:reported_len()
    while o < len do
        local n = packet_length(tvb, o)
        if not n or o + n > len then return nil end
        packets[#packets + 1] = { o, n }
        o = o + n
    end
    if #packets == 0 then return nil end
    -- Several packets cut by a snapshot length: not split (each would look complete but cut).
    if #packets > 1 and tvb:len() < len then return nil end
    return packets
end

function metaroce.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    if len == 0 then return 0 end
    pinfo.cols.protocol:set("MetaRoCE")
    local packets = split(tvb)
    local first = packet_length(tvb, 0)
    if not packets and first and first < tvb:reported_len() and tvb:len() < tvb:reported_len() then
        -- A super-datagram cut by the snapshot length: only the first packet's headers are known.
        local _, info = dissect_packet(tvb(0, math.min(first, tvb:len())):tvb(), pinfo, tree, 1, 0, first)
        pinfo.cols.info:set(string.format("first packet of a %d-byte UDP payload (not all captured): %s",
            tvb:reported_len(), info))
        return len
    end
    if not packets or #packets == 1 then
        -- One packet, or bytes that do not split: dissected whole, so that a length mismatch or a
        -- truncation is reported against the datagram.
        local _, info = dissect_packet(tvb, pinfo, tree)
        pinfo.cols.info:set(info)
        return len
    end
    local good, bad, first_info, last_info = 0, 0, nil, nil
    for i, p in ipairs(packets) do
        local sub = tvb(p[1], p[2]):tvb()
        local _, info, status = dissect_packet(sub, pinfo, tree, i, #packets)
        if status == "good" then good = good + 1 elseif status == "bad" then bad = bad + 1 end
        if i == 1 then first_info = info end
        last_info = info
    end
    pinfo.cols.info:set(string.format("%d packets (%d good%s): %s ... %s", #packets, good,
        bad > 0 and string.format(", %d BAD", bad) or "", first_info, last_info))
    return len
end

---------------------------------------------------------------------------------------------------
-- Registration
---------------------------------------------------------------------------------------------------

local udp_port_table = DissectorTable.get("udp.port")
local registered_port = DEFAULT_PORT
udp_port_table:add(registered_port, metaroce)

function metaroce.prefs_changed()
    if metaroce.prefs.udp_port ~= registered_port then
        if registered_port ~= 0 then udp_port_table:remove(registered_port, metaroce) end
        registered_port = metaroce.prefs.udp_port
        if registered_port ~= 0 then udp_port_table:add(registered_port, metaroce) end
    end
end

-- Strict heuristic: the UDP payload splits exactly into one or more consecutive packets, each
-- with version 1, a known opcode, the matching Header Length and a length consistent with
-- [WIRE-005]. Lets MetaRoCE on a non-default port be recognised automatically.
local function heuristic(tvb, pinfo, tree)
    if not split(tvb) and not (tvb:len() < tvb:reported_len() and packet_length(tvb, 0)) then return false end
    metaroce.dissector(tvb, pinfo, tree)
    return true
end
metaroce:register_heuristic("udp", heuristic)
