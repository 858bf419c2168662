#!/usr/bin/env python3
"""Folds `perf script -F comm,tid,ip,sym,dso` output into collapsed stacks
(`comm;root;...;leaf count`, one line per distinct stack, sorted), naming each frame
by the rules tools/frames.h documents, so the two can be compared line for line:
  - every frame: the symbol perf printed, native ones too (libraries, the executable,
    the jitted-*.so files of an injected recording, the kernel's kallsyms);
  - where perf printed [unknown]: in a jitted file (jitted-<pid>-<n>.so, a region's
    jitted-<pid>-r<N>.so, a process's jitted-<pid>.so), a perf map, //anon, [anon:...]
    or /memfd: memory [unknown]; a kernel frame [kernel.kallsyms] (perf script
    does not print a frame's context: the kernel part of a chain is its leading run of
    upper-half addresses); another mapping [basename of the dso], or the dso itself when
    it is bracketed; no mapping [unknown].
';' in a name becomes ':' and line breaks spaces, as symbolize does.

usage: perf script -F comm,tid,ip,sym,dso --no-inline -i X | fold_perf_script.py
"""
import re
import sys

KERNEL_START = 1 << 63
JIT_DSO = re.compile(r'(^|/)jitted-\d+(-r?\d+)?\.so$')
PERF_MAP = re.compile(r'(^|/)perf-\d+\.map$')
HEADER = re.compile(r'^(.*?)\s+(\d+)\s*(.*)$')  # comm, tid, [ip sym (dso)] without a callchain
FRAME = re.compile(r'^\s*([0-9a-f]+)\s(.*)$')


def frame_name(ip, rest, kernel):
    i = rest.rfind(' (')
    if i < 0 or not rest.endswith(')'):
        sym, dso = rest.strip(), '[unknown]'
    else:
        sym, dso = rest[:i].strip(), rest[i + 2:-1]
    anon = dso.startswith('//anon') or dso.startswith('[anon:') or dso.startswith('/memfd:')
    if sym and sym != '[unknown]':
        name = sym
    elif not kernel and (JIT_DSO.search(dso) or PERF_MAP.search(dso) or anon):
        name = '[unknown]'
    elif kernel:
        name = '[kernel.kallsyms]' if dso.startswith('[') else '[' + re.sub(r'\.ko$', '', dso.rsplit('/', 1)[-1]) + ']'
    elif dso == '[unknown]' or dso == '':
        name = '[unknown]'
    elif dso.startswith('['):
        name = dso
    else:
        name = '[' + dso.rsplit('/', 1)[-1] + ']'
    return name.replace(';', ':')


def fold(lines):
    counts = {}
    comm, frames, kinds = None, [], []

    def flush():
        if comm is not None:
            key = ';'.join([comm.replace(';', ':')] + frames[::-1])
            counts[key] = counts.get(key, 0) + 1

    for line in lines:
        line = line.rstrip('\n')
        if not line.strip():
            continue
        if line[0] in ' \t':
            m = FRAME.match(line)
            if m:
                ip = int(m.group(1), 16)
                kernel = ip >= KERNEL_START and all(k for k in kinds)
                kinds.append(kernel)
                frames.append(frame_name(ip, m.group(2), kernel))
            continue
        flush()
        m = HEADER.match(line)
        comm, frames, kinds = (m.group(1).strip(), [], []) if m else (line.strip(), [], [])
        rest = m.group(3) if m else ''
        fm = FRAME.match(rest) if rest else None
        if fm:  # no callchain: the sample's own ip on the header line
            ip = int(fm.group(1), 16)
            frames.append(frame_name(ip, fm.group(2), ip >= KERNEL_START))
    flush()
    return counts


if __name__ == '__main__':
    counts = fold(sys.stdin)
    for k in sorted(counts, key=lambda s: s.encode()):
        print('%s %d' % (k, counts[k]))
