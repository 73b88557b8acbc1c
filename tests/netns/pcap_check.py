#!/usr/bin/env python3
"""pcap_check.py: is every TCP connection to PORT in a capture TLS 1.3, and
does no forbidden plaintext appear in it?

    pcap_check.py CAPTURE.pcap PORT|all [--secret-file F] [--forbid TEXT]...
                  [--forbid-hex HEX]... [--forbid-ip A.B.C.D]...

Reads the capture itself (classic pcap; Ethernet, Linux cooked or raw IP),
reassembles each direction of each TCP connection whose server port is PORT
(every TCP connection with "all") by sequence number, then checks:

  * TLS 1.3: both directions parse, from their first byte to their last,
    as TLS records; the client's first record is a ClientHello offering
    TLS 1.3 (supported_versions 0x0304), the server's first is a ServerHello
    selecting it; after the hellos only application_data records (and the
    compatibility change_cipher_spec) follow, so everything else is
    encrypted. A Shoal pair connection (src/transport/tls/tls_pair.c) opens
    with an 8-byte preamble ("SHP1" and the dialer's PE number) and a 1-byte
    answer in the clear, then carries frames of two channels (a 4-byte
    little-endian header: bit 31 the channel, the rest the length): each
    channel must be TLS 1.3 as above on its own, channel 0 opened by the
    dialer, channel 1 by the other end.
  * forbidden bytes anywhere in either direction: each --forbid TEXT, each
    --forbid-hex, each --forbid-ip as text and as 4 network-order bytes, and
    the secret file's content raw, stripped, as hex (lower and upper case)
    and, when the content is itself hex or base64 text, the bytes it
    encodes (and their hex and base64), and its SHA-256/384/512 digests
    (a pre-shared key derived from it).

Exit 0: connections found and the capture is clean. Exit 1: at least one
finding (each printed on its own line, starting "FOUND:"). Exit 2: nothing
to check (no connection to PORT, unreadable capture). The same check run on
a plaintext job must exit 1: that is how a test proves the check can fail.
"""
import base64
import binascii
import hashlib
import re
import struct
import sys

MIN_FORBIDDEN = 4  # shorter needles would match ciphertext by chance


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("not a pcap file (too short)")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise ValueError("not a classic pcap file (magic %s); write it with tcpdump -w" % magic.hex())
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        yield linktype, data[off:off + incl]
        off += incl


def ip_payload(linktype, frame):
    """Returns the IPv4 packet inside a frame, or None."""
    if linktype == 1:  # Ethernet
        off, etype = 12, None
        etype = struct.unpack(">H", frame[off:off + 2])[0]
        off += 2
        while etype in (0x8100, 0x88A8):  # VLAN tags
            etype = struct.unpack(">H", frame[off + 2:off + 4])[0]
            off += 4
        return frame[off:] if etype == 0x0800 else None
    if linktype == 113:  # Linux cooked (SLL)
        return frame[16:] if struct.unpack(">H", frame[14:16])[0] == 0x0800 else None
    if linktype == 276:  # Linux cooked v2
        return frame[20:] if struct.unpack(">H", frame[0:2])[0] == 0x0800 else None
    if linktype in (101, 228, 12):  # raw IP
        return frame if frame and frame[0] >> 4 == 4 else None
    raise ValueError("unsupported link type %d" % linktype)


def tcp_streams(path, port):
    """{(client, cport, server, sport): {"c2s": bytes, "s2c": bytes}}. Port 0:
    every TCP connection, the client being the side that sent the first SYN."""
    segs = {}  # (src, sport, dst, dport) -> {"isn": int|None, "data": [(seq, bytes)]}
    clients = set()  # (src, sport, dst, dport) of pure SYNs
    for linktype, frame in read_pcap(path):
        ip = ip_payload(linktype, frame)
        if ip is None or len(ip) < 20 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        src, dst = ip[12:16], ip[16:20]
        tcp = ip[ihl:total]
        if len(tcp) < 20:
            continue
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        if port and port not in (sport, dport):
            continue
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        key = (src, sport, dst, dport)
        st = segs.setdefault(key, {"isn": None, "data": []})
        if flags & 0x02:  # SYN
            st["isn"] = seq
            if not flags & 0x10:
                clients.add(key)
        payload = bytes(tcp[doff:])
        if payload:
            st["data"].append((seq, payload))
    out = {}
    for (src, sport, dst, dport), st in segs.items():
        if not st["data"] and st["isn"] is None:
            continue
        if port:
            to_server = dport == port
        elif (src, sport, dst, dport) in clients or (dst, dport, src, sport) in clients:
            to_server = (src, sport, dst, dport) in clients
        else:  # the handshake was not captured: call the lower port the server
            to_server = dport < sport
        if to_server:
            conn, direction = (src, sport, dst, dport), "c2s"
        else:
            conn, direction = (dst, dport, src, sport), "s2c"
        base = (st["isn"] + 1) if st["isn"] is not None else min(s for s, _ in st["data"])
        buf = bytearray()
        for seq, payload in st["data"]:
            rel = (seq - base) & 0xFFFFFFFF
            if rel > 1 << 30:  # before the base: a stray segment
                continue
            if len(buf) < rel + len(payload):
                buf.extend(b"\0" * (rel + len(payload) - len(buf)))
            buf[rel:rel + len(payload)] = payload
        out.setdefault(conn, {"c2s": b"", "s2c": b""})[direction] = bytes(buf)
    return out


def tls_records(stream):
    """[(type, version, fragment)], trailing bytes that are no whole record."""
    recs, off = [], 0
    while off + 5 <= len(stream):
        ctype, ver, length = struct.unpack(">BHH", stream[off:off + 5])
        if ctype not in (20, 21, 22, 23) or ver not in (0x0301, 0x0302, 0x0303) or length > 16384 + 256:
            return recs, stream[off:]
        if off + 5 + length > len(stream):
            return recs, stream[off:]
        recs.append((ctype, ver, stream[off + 5:off + 5 + length]))
        off += 5 + length
    return recs, stream[off:]


def hello_extensions(body, client):
    """Extensions of a ClientHello/ServerHello body (after the 4-byte header)."""
    off = 2 + 32
    sid = body[off]
    off += 1 + sid
    if client:
        n = struct.unpack(">H", body[off:off + 2])[0]
        off += 2 + n
        n = body[off]
        off += 1 + n
    else:
        off += 2 + 1
    if off + 2 > len(body):
        return {}
    end = off + 2 + struct.unpack(">H", body[off:off + 2])[0]
    off += 2
    exts = {}
    while off + 4 <= end:
        etype, elen = struct.unpack(">HH", body[off:off + 4])
        exts[etype] = body[off + 4:off + 4 + elen]
        off += 4 + elen
    return exts


def pair_channels(name, streams, notes, found):
    """The two channels of a Shoal pair connection, each as a connection of
    its own ({"c2s", "s2c"}, c2s from the end that opened the channel), or
    None when the connection does not open as one."""
    c2s, s2c = streams["c2s"], streams["s2c"]
    if len(c2s) < 8 or c2s[:4] != b"SHP1":
        return None
    notes.append("%s: pair connection from PE %d (its opening in the clear by design)"
                 % (name, struct.unpack("<I", c2s[4:8])[0]))
    answer = s2c[:1]
    if answer not in (b"A", b"R"):
        found.append("%s: the pair connection's answer is %r, not A or R" % (name, answer))
        return {}
    if answer == b"R":
        if len(c2s) > 8 or len(s2c) > 1:
            found.append("%s: bytes after a refused pair connection's opening" % name)
        return {}
    chans = {0: {"c2s": b"", "s2c": b""}, 1: {"c2s": b"", "s2c": b""}}
    for direction, data, start in (("c2s", c2s[8:], 8), ("s2c", s2c[1:], 1)):
        parts, off = {0: [], 1: []}, 0
        while off + 4 <= len(data):
            h = struct.unpack("<I", data[off:off + 4])[0]
            ch, n = h >> 31, h & 0x7FFFFFFF
            if n == 0 or n > 1 << 20 or off + 4 + n > len(data):
                break
            parts[ch].append(data[off + 4:off + 4 + n])
            off += 4 + n
        if off != len(data):
            found.append("%s: %d bytes from the %s at offset %d are no whole frames: %r"
                         % (name, len(data) - off, "client" if direction == "c2s" else "server", start + off,
                            data[off:off + 48]))
        for ch in (0, 1):
            opener_side = direction if ch == 0 else ("s2c" if direction == "c2s" else "c2s")
            chans[ch][opener_side] = b"".join(parts[ch])
    return chans


def check_tls(name, streams, notes):
    """Findings (strings) about one connection's TLS structure."""
    found = []
    chans = pair_channels(name, streams, notes, found)
    if chans is not None:
        for ch, chan in sorted(chans.items()):
            if chan["c2s"] or chan["s2c"]:
                found += check_records("%s channel %d" % (name, ch), chan, notes)
        return found
    return check_records(name, streams, notes)


def check_records(name, streams, notes):
    """Findings about a byte stream pair that must be one TLS 1.3 session."""
    found = []
    for direction, want in (("c2s", 1), ("s2c", 2)):
        data = streams[direction]
        who = "client" if direction == "c2s" else "server"
        if not data:
            found.append("%s: the %s sent nothing" % (name, who))
            continue
        recs, rest = tls_records(data)
        if rest:
            found.append("%s: %d bytes from the %s at offset %d are not TLS records: %r"
                         % (name, len(rest), who, len(data) - len(rest), rest[:48]))
        if not recs or recs[0][0] != 22 or not recs[0][2] or recs[0][2][0] != want:
            found.append("%s: the %s's first record is not a %s" % (name, who, "ClientHello" if want == 1 else "ServerHello"))
            continue
        body = recs[0][2][4:]
        try:
            exts = hello_extensions(body, want == 1)
        except (IndexError, struct.error):
            exts = {}
        sv = exts.get(0x002B, b"")
        if want == 1:
            offered = [sv[i:i + 2] for i in range(1, len(sv), 2)] if sv else []
            if b"\x03\x04" not in offered:
                found.append("%s: the ClientHello does not offer TLS 1.3" % name)
            psk = exts.get(0x0029)
            if psk:
                n = struct.unpack(">H", psk[2:4])[0] if len(psk) >= 4 else 0
                notes.append("%s: pre-shared key identity %r (sent in the clear by design)" % (name, psk[4:4 + n]))
        else:
            if sv != b"\x03\x04":
                found.append("%s: the ServerHello does not select TLS 1.3 (supported_versions %s)" % (name, sv.hex() or "absent"))
            else:
                notes.append("%s: TLS 1.3 handshake (ServerHello selects 0x0304)" % name)
        for i, (ctype, _, frag) in enumerate(recs[1:], 1):
            if ctype == 23 or (ctype == 20 and frag == b"\x01"):
                continue
            if ctype == 21:
                notes.append("%s: plaintext alert from the %s: %s" % (name, who, frag.hex()))
                continue
            found.append("%s: record %d from the %s is type %d in the clear, not application data" % (name, i, who, ctype))
        notes.append("%s: %s sent %d bytes in %d records" % (name, who, len(data), len(recs)))
    return found


def needles(args):
    """[(description, bytes)] of everything that must not appear."""
    out = []

    def add(desc, b):
        if len(b) >= MIN_FORBIDDEN and all(b != x for _, x in out):
            out.append((desc, b))

    for t in args["forbid"]:
        add("text %r" % t, t.encode())
    for h in args["forbid_hex"]:
        add("bytes %s" % h, binascii.unhexlify(h))
    for a in args["forbid_ip"]:
        add("address %s as text" % a, a.encode())
        add("address %s as bytes" % a, bytes(int(x) for x in a.split(".")))
    for path in args["secret_file"]:
        with open(path, "rb") as f:
            raw = f.read()
        for desc, b in (("raw", raw), ("stripped", raw.strip())):
            add("secret file %s" % desc, b)
            add("secret file %s as hex" % desc, b.hex().encode())
            add("secret file %s as HEX" % desc, b.hex().upper().encode())
            add("secret file %s as base64" % desc, base64.b64encode(b))
        for line in raw.split(b"\n"):
            line = line.strip()
            if len(line) >= MIN_FORBIDDEN:
                add("secret file line", line)
        text = raw.strip()
        for h in ("sha256", "sha384", "sha512"):  # a key derived by hashing the secret
            add("secret's %s" % h, hashlib.new(h, text).digest())
            add("secret's %s as hex" % h, hashlib.new(h, text).hexdigest().encode())
        decoded = []
        if re.fullmatch(rb"[0-9a-fA-F]+", text) and len(text) % 2 == 0:
            decoded.append(("hex-decoded", binascii.unhexlify(text)))
        if re.fullmatch(rb"[A-Za-z0-9+/=\s]+", text):
            try:
                decoded.append(("base64-decoded", base64.b64decode(text, validate=False)))
            except binascii.Error:
                pass
        # Content after a "name:" or "name=" prefix (e.g. "shoal-secret-v1:HEX").
        m = re.search(rb"[:=]\s*([0-9a-fA-F]{16,})\s*$", text)
        if m and len(m.group(1)) % 2 == 0:
            add("secret file value", m.group(1))
            decoded.append(("value hex-decoded", binascii.unhexlify(m.group(1))))
        for desc, b in decoded:
            add("secret %s" % desc, b)
            add("secret %s as hex" % desc, b.hex().encode())
            add("secret %s as base64" % desc, base64.b64encode(b))
            if len(b) >= 16:  # any 16-byte window of the key material
                for i in range(0, len(b) - 15, 8):
                    add("secret %s bytes %d..%d" % (desc, i, i + 16), b[i:i + 16])
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, port = argv[1], (0 if argv[2] == "all" else int(argv[2]))
    args = {"forbid": [], "forbid_hex": [], "forbid_ip": [], "secret_file": []}
    i = 3
    while i < len(argv):
        opt = argv[i].lstrip("-").replace("-", "_")
        if opt not in args or i + 1 >= len(argv):
            print("pcap_check.py: bad option %s" % argv[i], file=sys.stderr)
            return 2
        args[opt].append(argv[i + 1])
        i += 2
    try:
        conns = tcp_streams(path, port)
    except (OSError, ValueError, struct.error) as e:
        print("pcap_check.py: cannot read %s: %s" % (path, e), file=sys.stderr)
        return 2
    if not conns:
        print("pcap_check.py: no TCP connection to port %s in %s" % (port or "any", path), file=sys.stderr)
        return 2
    forbidden = needles(args)
    findings, notes = [], []
    total = 0
    for (c, cp, s, sp), streams in sorted(conns.items()):
        name = "%s:%d->%s:%d" % (".".join(map(str, c)), cp, ".".join(map(str, s)), sp)
        total += len(streams["c2s"]) + len(streams["s2c"])
        findings += check_tls(name, streams, notes)
        for direction in ("c2s", "s2c"):
            data = streams[direction]
            for desc, b in forbidden:
                at = data.find(b)
                if at >= 0:
                    findings.append("%s: %s in the clear (%s, offset %d)" % (name, desc, direction, at))
    print("pcap_check: %d connection(s) to port %s, %d payload bytes, %d forbidden needles"
          % (len(conns), port or "any", total, len(forbidden)))
    for n in notes:
        print("  note: " + n)
    for f in findings:
        print("FOUND: " + f)
    if findings:
        return 1
    print("pcap_check: clean (TLS 1.3 only, nothing forbidden in the clear)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
