#!/usr/bin/env python3
"""Compares two `perf script -F comm,tid,time,ip,sym,dso` listings sample by sample
(tests/oracle/script.sh: perf's of jitanon-inject's output, and build/jitanon-script's
of the same recording).  A sample is its `comm tid time:` line and its frames, in
order; a frame is compared by its symbol when its dso is a jitted file (a function's
jitted-<pid>-<n>.so, a region's jitted-<pid>-r<N>.so, a process's jitted-<pid>.so), and
by the file's name too (not its directory: perf's is the --elf-dir of the injection, ours
next to the dump), or a perf map (JIT and perf-map frames), else by its dso (native and kernel symbols are the embedder's
business; ips may differ: perf prints a file's relative to it).

perf's inlined frames (from a file's DWARF: with --call-graph dwarf, perf 6.1 prints the
functions inlined at a frame's address) are no frames of the recording: PERF.txt is perf
script's listing with --no-inline, compared as it is; --inlined PERF-INLINE.txt, the same
listing without --no-inline, is read against it and its inlined frames counted: perf
prints them before the frame's own line, at the same ip (`ip f (inlined)`; with its dso
when f is the frame's own symbol's name), so of a run of lines at one ip of one file, the
lines beyond the frames the listing without them has there are inlined ones.  A frame it
prints only as inlined functions (its own line left out: an out-of-line clone such as
`f.constprop.0` whose DWARF names f) is counted as well.  Every other line must be
--no-inline's, in order.

usage: script_cmp.py PERF.txt OURS.txt [--edge-ok] [--symbols] [--inlined PERF-INLINE.txt]
       [--dwarf FILE]   (one summary line; exit 1 on a difference)
--edge-ok (dwarf stacks): up to 1 sample in 1,000 may end a frame or two apart below main
(outer_edge), counted in the summary.
--symbols: every frame by its symbol and its dso (native and kernel symbols too: the
frame iterator's JITANON_FRAME_WANT_SYMBOL), the summary counting the native and kernel
frames perf names and those it leaves [unknown].
A frame perf prints at ip 100 in a perf map with no symbol is the region layout's key address
0x100 (doc/layouts.md): jitanon-inject's output maps //anon there for hotspot, so a garbage
return address of 0x100 in a frame-pointer callchain (erlang's) lands in it for perf, where
the recording had nothing mapped (per-function output: [unknown] ([unknown])); it is read as
[unknown] and counted.
--dwarf FILE: also count the inlined functions FILE's DWARF holds at perf's frames in FILE
(`addr2line -i`: the records past an address's first): with frame-pointer callchains perf
6.1 built without libbfd (Debian's) prints none, its addr2line path reading one line.
"""
import re
import subprocess
import sys

JIT = re.compile(r'(^|/)jitted-\d+(-r?\d+)?\.so$')
PERF_MAP = re.compile(r'(^|/)perf-\d+\.map$')
FRAME = re.compile(r'^\s+[0-9a-f]+ (.*) \((.*)\)$')
ONE_LINE = re.compile(r'^( *\S.*? \d+\.\d+:)(\s+[0-9a-f]+ .* \(.*\))$')


SYMBOLS = '--symbols' in sys.argv[3:]
INLINED = [0, 0]  # perf's inlined lines set aside; frames it printed only as inlined ones
KEY = [0]  # perf's frames at the region layout's key address 0x100, read as [unknown]


def samples(path, perf=False, count=False):
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
        ip = line.split()[0]
        if perf and ip == '100' and sym == '[unknown]' and PERF_MAP.search(dso):
            KEY[0] += count
            dso = '[unknown]'
        if dso == 'inlined':  # (perf prints an inlined function without its file)
            f = ('inl', '(inlined)', 'inlined')
        elif JIT.search(dso):  # by its file's name too (perf's in the elf dir, ours next to the dump)
            f = ('sym', sym + ' (' + dso.rsplit('/', 1)[-1] + ')', 'jit')
        elif PERF_MAP.search(dso):
            f = ('sym', sym, 'map')
        elif SYMBOLS:
            kind = 'kernel' if dso.startswith('[kernel.') or (dso.startswith('[') and dso not in ('[unknown]', '[vdso]')) \
                else 'unknown' if dso == '[unknown]' else 'native'
            if sym == '[unknown]' and kind != 'unknown':
                kind += '-unnamed'
            f = ('dso', sym + ' (' + dso + ')', kind)
        else:
            f = ('dso', dso, 'other')
        # (a run: the lines at one ip of one file; an inlined line joins the next one's)
        run = cur[1][-1] if cur[1] else None
        if run and run[0] == ip and (f[0] == 'inl' or run[1] in (None, dso)):
            run[2].append(f)
            if f[0] != 'inl':
                run[1] = dso
        else:
            cur[1].append([ip, None if f[0] == 'inl' else dso, [f]])
    return out


def flat(runs):
    return [f for r in runs for f in r[2]]


def inlined(p, o):
    """The inlined lines of p (a sample's runs in the listing with them) against o (the same
    sample's without them): (set aside, frames p printed only as inlined ones), None when
    p is not o with inlined lines added.  Of each run of p, the last as many lines as o's
    run there has are the frames; the lines before them, inlined ones."""
    if len(p) != len(o) or any(len(a[2]) < len(b[2]) for a, b in zip(p, o)):
        return None
    aside = only = 0
    for a, b in zip(p, o):
        n = len(a[2]) - len(b[2])
        aside += n
        for f, g in zip(a[2][n:], b[2]):
            if f[0] == 'inl':
                only += 1
            elif f != g:
                return None
    return aside, only


def outer_edge(pf, of):
    # one listing is the other's but for at most two outermost frames, all in libc, ld.so
    # or nowhere: where the unwinders end below main (perf's libunwind falls back to frame
    # pointers where the CFI ends; seen once in ~100,000 CPython samples)
    short, long_ = (pf, of) if len(pf) < len(of) else (of, pf)
    extra = long_[len(short):]
    return (0 < len(extra) <= 2 and long_[:len(short)] == short and
            all(f[1] == '[unknown]' or '/libc.so' in f[1] or 'ld-linux' in f[1] for f in extra))


def dwarf_inlines(path, elf):
    """The inlined functions elf's DWARF holds at perf's frames in elf (addr2line -i: the
    records past an address's first), each ip as often as perf's listing has it."""
    ips = {}
    for line in open(path, encoding='utf-8', errors='replace'):
        m = FRAME.match(line)
        if m and m.group(2) == elf:
            ips[line.split()[0]] = ips.get(line.split()[0], 0) + 1
    got = subprocess.run(['addr2line', '-a', '-i', '-f', '-e', elf], input='\n'.join(ips) + '\n',
                         capture_output=True, text=True).stdout.splitlines()
    n, at, lines = 0, None, 0
    for line in got + ['0x']:
        if line.startswith('0x'):  # (-a: each address's records follow it, two lines each)
            if at is not None and lines > 2:
                n += (lines // 2 - 1) * ips.get(at, 0)
            at, lines = '%x' % int(line, 16) if len(line) > 2 else None, 0
        else:
            lines += 1
    return n


def main():
    perf, ours = samples(sys.argv[1], perf=True, count=True), samples(sys.argv[2])
    args = sys.argv[3:]
    dwarf = args[args.index('--dwarf') + 1] if '--dwarf' in args[:-1] else None
    edge_ok = '--edge-ok' in args
    edges = 0
    kinds = {}
    if len(perf) != len(ours):
        print('%d samples, perf script has %d' % (len(ours), len(perf)))
        return 1
    if '--inlined' in args[:-1]:
        with_inl = samples(args[args.index('--inlined') + 1], perf=True)
        for i, (p, o) in enumerate(zip(with_inl, perf)):
            got = inlined(p[1], o[1]) if p[0] == o[0] and len(with_inl) == len(perf) else None
            if got is None:
                print('sample %d: perf script without --no-inline is not the listing with it plus inlined frames '
                      '(%d / %d samples)' % (i, len(with_inl), len(perf)))
                print('  inline: ' + ' | '.join(p[2][:24]))
                print('  plain:  ' + ' | '.join(o[2][:24]))
                return 1
            INLINED[0] += got[0]
            INLINED[1] += got[1]
    for s in perf:
        for f in flat(s[1]):
            kinds[f[2]] = kinds.get(f[2], 0) + 1
    for i, (p, o) in enumerate(zip(perf, ours)):
        pf, of = [f[:2] for f in flat(p[1])], [f[:2] for f in flat(o[1])]
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
    inl = ''
    if '--inlined' in args:
        inl = '; %d inlined frames of perf set aside (--no-inline)' % INLINED[0]
        if INLINED[1]:
            inl += ', and %d frames it prints only as the functions inlined there' % INLINED[1]
    if KEY[0]:
        inl += '; %d frames at 0x100, the region files\' key address (perf: //anon of the output, the recording: nothing)' % KEY[0]
    if dwarf:
        inl += ' (the DWARF of %s inlines %d at its frames: addr2line -i)' % (dwarf.rsplit('/', 1)[-1],
                                                                             dwarf_inlines(sys.argv[1], dwarf))
    print('%d samples, %d frames (%d JIT, %d perf-map, %s)%s%s' %
          (len(perf), sum(kinds.values()), kinds.get('jit', 0), kinds.get('map', 0), other, inl,
           '; %d ending a frame or two apart below main' % edges if edges else ''))
    return 1 if edges * 1000 > len(perf) else 0


if __name__ == '__main__':
    sys.exit(main())
