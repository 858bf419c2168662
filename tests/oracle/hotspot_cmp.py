#!/usr/bin/env python3
"""Check that hotspot-perfparser names every jitted frame as perf does, sample by sample.

usage: hotspot_cmp.py PERFPARSER_OUTPUT PERF_SCRIPT_OUTPUT

PERFPARSER_OUTPUT is `hotspot-perfparser --input X --output OUT`: the magic
"QPERFSTREAM\\0", a little-endian int32 stream version, then events, each a
little-endian uint32 size and a big-endian payload whose first byte is the event
type.  Four are read (hotspot 1.3's numbering, measured on its output):
  3 location: id, uint64 address, file string id, pid, line, column, parent location id
  4 symbol:   id (= the location it names), name string id, binary, path, isKernel
  5 string:   id, uint32 length, bytes
 13 sample:   pid, tid, uint64 time, cpu, uint32 frame count, location ids (leaf
              first), guessed-frame count, costs
A frame's function is its parent location when it has one.

PERF_SCRIPT_OUTPUT is `perf script --ns -F tid,time,ip,sym,dso`, with or without
callchains.  Samples are matched by (tid, time); every frame perf resolves in a
jitted-*.so must carry the same name in perfparser's frame at the same distance from
the leaf or from the root.  Prints one summary line; exits 1 when a jitted frame
differs, a name perf shows is never named by perfparser, or there is nothing jitted
to compare."""
import re
import struct
import sys


def read_stream(path):
    """(tid, time) -> frame names, leaf first."""
    b = open(path, 'rb').read()
    if not b.startswith(b'QPERFSTREAM\0'):
        sys.exit('not a perfparser stream: ' + path)
    p = 16
    locs, syms, strs, samples = {}, {}, {}, {}
    while p + 4 <= len(b):
        n = struct.unpack_from('<I', b, p)[0]
        ev = b[p + 4:p + 4 + n]
        p += 4 + n
        if not ev:
            continue
        t = ev[0]
        if t == 3 and len(ev) >= 33:
            i, _addr, _f, _pid, _l, _c, parent = struct.unpack_from('>iQiIiii', ev, 1)
            locs[i] = parent
        elif t == 4 and len(ev) >= 9:
            i, name = struct.unpack_from('>ii', ev, 1)
            syms[i] = name
        elif t == 5 and len(ev) >= 9:
            i, ln = struct.unpack_from('>iI', ev, 1)
            strs[i] = ev[9:9 + ln].decode('utf-8', 'replace') if ln != 0xffffffff else ''
        elif t == 13 and len(ev) >= 25:
            _pid, tid, time, _cpu, nf = struct.unpack_from('>IIQII', ev, 1)
            if len(ev) >= 25 + 4 * nf:
                samples[(tid, time)] = struct.unpack_from('>%di' % nf, ev, 25)

    def name(i):
        parent = locs.get(i, -1)
        fn = parent if parent != -1 else i
        return strs.get(syms.get(fn), '')
    return {k: [name(i) for i in v] for k, v in samples.items()}


def read_perf(path):
    """(tid, time) -> [(symbol, in a jitted-*.so)], leaf first."""
    out, key = {}, None
    head = re.compile(r'^\s*(\d+)\s+(\d+)\.(\d+):')
    frame = re.compile(r'^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$')
    for line in open(path, errors='replace'):
        m = head.match(line)
        if m:
            key = (int(m.group(1)), int(m.group(2)) * 1000000000 + int(m.group(3)))
            out[key] = []
            # without call graphs the one frame follows on the same line
            line = line[m.end():]
            if not line.strip():
                continue
            line = ' ' + line
        m = frame.match(line)
        if m and key is not None:
            sym = re.sub(r'\+0x[0-9a-f]+$', '', m.group(1))
            out[key].append((sym, '/jitted-' in m.group(2)))
    return out


def main():
    pp = read_stream(sys.argv[1])
    perf = read_perf(sys.argv[2])
    want, got, bad, frames, unmatched = set(), set(), [], 0, 0
    for key, pf in perf.items():
        jit = [(i, s) for i, (s, j) in enumerate(pf) if j and s != '[unknown]']
        if not jit:
            continue
        want.update(s for _, s in jit)
        names = pp.get(key)
        if names is None:
            unmatched += 1
            continue
        for i, s in jit:
            frames += 1
            # the two may differ by a frame at the leaf (perfparser adds an unnamed one
            # under a page fault), so a jitted frame counts at its distance from the
            # leaf or from the root
            r = len(names) - (len(pf) - i)
            if (i < len(names) and names[i] == s) or (0 <= r < len(names) and names[r] == s):
                got.add(s)
            else:
                bad.append('t=%d frame %d perf=%s perfparser=%s' %
                           (key[1], i, s, (names[i] or '??') if i < len(names) else '-'))
    missing = sorted(want - got)
    print('%d of %d JIT names, %d of %d jitted frames differ, %d samples unmatched' %
          (len(got), len(want), len(bad), frames, unmatched))
    for line in bad[:3]:
        print('  differs: ' + line)
    for s in missing[:3]:
        print('  never named: ' + s)
    sys.exit(1 if bad or missing or not want else 0)


if __name__ == '__main__':
    main()
