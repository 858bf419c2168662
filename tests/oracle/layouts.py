#!/usr/bin/env python3
"""Byte builder for tests/oracle/layouts.sh: rewrites a perf.data that today's perf recorded
into a layout older tools or kernels wrote, so that real perf can be asked about it.

  layouts.py tracing12 IN.pipe OUT.pipe   HEADER_TRACING_DATA as perf 4.x wrote it: 12 bytes
                                          (header, u32 size), the tracing data right after
  layouts.py mmap2v1 IN.pipe OUT.pipe     every MMAP2 as kernel 3.10 wrote it: no prot and
                                          flags, the file name 8 bytes earlier
  layouts.py feature IN.data OUT.data BIT HEX
                                          file mode: feature section BIT set to the bytes HEX
                                          (added or replaced)

Little-endian input only (what the machines running the oracle record)."""
import struct
import sys

TRACING_DATA, AUXTRACE, MMAP2 = 66, 71, 10
MISC_MMAP_BUILD_ID = 1 << 14


def records(d):
    """(offset, total size) of each record of a pipe stream after its 16-byte header."""
    off = 16
    while off + 8 <= len(d):
        typ, _misc, size = struct.unpack_from('<IHH', d, off)
        extra = 0
        if typ == TRACING_DATA:
            extra = struct.unpack_from('<I', d, off + 8)[0]
        elif typ == AUXTRACE:
            extra = struct.unpack_from('<Q', d, off + 8)[0]
        if size < 8:
            raise SystemExit('bad record at %d' % off)
        yield off, size + extra
        off += size + extra


def rewrite(d, fn):
    out = bytearray(d[:16])
    for off, total in records(d):
        out += fn(bytearray(d[off:off + total]))
    return bytes(out)


def tracing12(rec):
    typ, misc, size = struct.unpack_from('<IHH', rec, 0)
    if typ != TRACING_DATA or size != 16:
        return rec
    return rec[:6] + struct.pack('<H', 12) + rec[8:12] + rec[16:]


def mmap2v1(rec):
    typ, misc, size = struct.unpack_from('<IHH', rec, 0)
    if typ != MMAP2 or misc & MISC_MMAP_BUILD_ID:
        return rec
    # header 8, pid/tid 8, start/len/pgoff 24, maj/min 8, ino/ino_generation 16 = 64
    return rec[:6] + struct.pack('<H', size - 8) + rec[8:64] + rec[72:]


def feature(d, bit, data):
    hsize = struct.unpack_from('<Q', d, 8)[0]
    if d[:8] != b'PERFILE2' or hsize != 104:
        raise SystemExit('not a little-endian perf.data file')
    data_off, data_size = struct.unpack_from('<QQ', d, 40)
    bits = list(struct.unpack_from('<4Q', d, 72))
    table = data_off + data_size
    sections = {}
    i = 0
    for b in range(256):
        if bits[b // 64] >> (b % 64) & 1:
            o, s = struct.unpack_from('<QQ', d, table + 16 * i)
            sections[b] = d[o:o + s]
            i += 1
    sections[bit] = data
    bits = [0, 0, 0, 0]
    for b in sections:
        bits[b // 64] |= 1 << (b % 64)
    out = bytearray(d[:table])
    struct.pack_into('<4Q', out, 72, *bits)
    at = table + 16 * len(sections)
    for b in sorted(sections):
        out += struct.pack('<QQ', at, len(sections[b]))
        at += len(sections[b])
    for b in sorted(sections):
        out += sections[b]
    return bytes(out)


def main():
    cmd, src, dst = sys.argv[1:4]
    d = open(src, 'rb').read()
    if cmd == 'tracing12':
        d = rewrite(d, tracing12)
    elif cmd == 'mmap2v1':
        d = rewrite(d, mmap2v1)
    elif cmd == 'feature':
        d = feature(d, int(sys.argv[4]), bytes.fromhex(sys.argv[5]))
    else:
        raise SystemExit(__doc__)
    open(dst, 'wb').write(d)


main()
