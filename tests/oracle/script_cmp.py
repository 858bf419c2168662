#!/usr/bin/env python3
"""Compares two `perf script -F comm,tid,time,ip,sym,dso` listings sample by sample
(tests/oracle/script.sh: perf's of jitanon-inject's output, and build/jitanon-script's
of the same recording).  A sample is its `comm tid time:` line and its frames, in
order; a frame is compared by its symbol when its dso is a jitted file (a function's
jitted-<pid>-<n>.so, a region's jitted-<pid>-r<N>.so, a process's jitted-<pid>.so:
jitanon-script names the function's own file whatever the layout) or a perf map (JIT and
perf-map frames), else by its dso (native and kernel symbols are the embedder's
business; ips may differ: perf prints a file's relative to it).

usage: script_cmp.py PERF.txt OURS.txt [--edge-ok] [--symbols]   (one summary line; exit 1 on a difference)
--edge-ok (dwarf stacks): up to 1 sample in 1,000 may end a frame or two apart below main
(outer_edge), counted in the summary.
--symbols: every frame by its symbol and its dso (native and kernel symbols too: the
frame iterator's JITANON_FRAME_WANT_SYMBOL), the summary counting the native and kernel
frames perf names and those it leaves [unknown].
"""
import re
import sys

JIT = re.compile(r'(^|/)jitted-\d+(-r?\d+)?\.so$')
PERF_MAP = re.compile(r'(^|/)perf-\d+\.map$')
FRAME = re.compile(r'^\s+[0-9a-f]+ (.*) \((.*)\)$')
ONE_LINE = re.compile(r'^( *\S.*? \d+\.\d+:)(\s+[0-9a-f]+ .* \(.*\))$')


SYMBOLS = '--symbols' in sys.argv[3:]


def samples(path):
    out, cur = [], None
    for line in open(path, encoding='utf-8', errors='replace'):
        line = line.rstrip('\n')
        if not line.strip():
            continue
        one = ONE_LINE.match(line) if not line.startswith('\t') else None
        if one:  # a sample without a callchain: perf prints its one frame on its line
            line = one.group(2)
            cur = [' '.join(one.group(1).split()), [], []]
            out.append(cur)
        elif line[0] not in ' \t' or line.lstrip().endswith(':') and not FRAME.match(line):
            cur = [' '.join(line.split()), [], []]
            out.append(cur)
            continue
        cur[2].append(line.strip())
        m = FRAME.match(line)
        sym, dso = (m.group(1), m.group(2)) if m else (line.strip(), '?')
        if JIT.search(dso) or PERF_MAP.search(dso):
            cur[1].append(('sym', sym, 'jit' if JIT.search(dso) else 'map'))
        elif SYMBOLS:
            kind = 'kernel' if dso.startswith('[kernel.') or (dso.startswith('[') and dso not in ('[unknown]', '[vdso]')) \
                else 'unknown' if dso == '[unknown]' else 'native'
            if sym == '[unknown]' and kind != 'unknown':
                kind += '-unnamed'
            cur[1].append(('dso', sym + ' (' + dso + ')', kind))
        else:
            cur[1].append(('dso', dso, 'other'))
    return out


def outer_edge(pf, of):
    # one listing is the other's but for at most two outermost frames, all in libc, ld.so
    # or nowhere: where the unwinders end below main (perf's libunwind falls back to frame
    # pointers where the CFI ends; seen once in ~100,000 CPython samples)
    short, long_ = (pf, of) if len(pf) < len(of) else (of, pf)
    extra = long_[len(short):]
    return (0 < len(extra) <= 2 and long_[:len(short)] == short and
            all(f[1] == '[unknown]' or '/libc.so' in f[1] or 'ld-linux' in f[1] for f in extra))


def main():
    perf, ours = samples(sys.argv[1]), samples(sys.argv[2])
    edge_ok = '--edge-ok' in sys.argv[3:]
    edges = 0
    kinds = {}
    for s in perf:
        for f in s[1]:
            kinds[f[2]] = kinds.get(f[2], 0) + 1
    frames = sum(len(s[1]) for s in perf)
    if len(perf) != len(ours):
        print('%d samples, perf script has %d' % (len(ours), len(perf)))
        return 1
    for i, (p, o) in enumerate(zip(perf, ours)):
        pf, of = [f[:2] for f in p[1]], [f[:2] for f in o[1]]
        if edge_ok and p[0] == o[0] and outer_edge(pf, of):
            edges += 1
            continue
        if p[0] != o[0] or pf != of:
            k = next((k for k in range(min(len(pf), len(of))) if pf[k] != of[k]), min(len(pf), len(of)))
            print('sample %d (%r / ours %r) differs at frame %d of %d / %d: perf %r, ours %r' %
                  (i, p[0], o[0], k, len(pf), len(of), pf[k:k + 2], of[k:k + 2]))
            # both samples whole, ips included, for the log
            print('  perf: ' + ' | '.join(p[2][:24]))
            print('  ours: ' + ' | '.join(o[2][:24]))
            return 1
    if SYMBOLS:
        other = '%d native named, %d native [unknown], %d kernel named, %d kernel [unknown], %d nowhere' % (
            kinds.get('native', 0), kinds.get('native-unnamed', 0), kinds.get('kernel', 0),
            kinds.get('kernel-unnamed', 0), kinds.get('unknown', 0))
    else:
        other = '%d other' % kinds.get('other', 0)
    print('%d samples, %d frames (%d JIT, %d perf-map, %s)%s' %
          (len(perf), frames, kinds.get('jit', 0), kinds.get('map', 0), other,
           '; %d ending a frame or two apart below main' % edges if edges else ''))
    return 1 if edges * 1000 > len(perf) else 0


if __name__ == '__main__':
    sys.exit(main())
