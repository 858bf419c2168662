"""A model of how hotspot's parser (KDAB/perfparser) registers mappings and keys frames,
written from the facts in ../shared/reference/consumers.md (no code of it): for debugging
the region layout (doc/layouts.md), not run by the tests.

usage: perf script --ns -i OUT.data --show-mmap-events -F comm,pid,time,ip,dso > ev.txt
       python3 perfparser_model.py ev.txt [ADDR_HEX]
Replays the MMAP/MMAP2 events in order: a mapping of the same file at the same
start - pgoff that overlaps or touches a held one is merged with it (and ignored when it
adds nothing); any other overlap cuts what it covers, and the pieces forget their base; a
file mapping inherits the start of the process's last pgoff-0 mapping of the same file
when it lies above it, a pgoff-0 one becomes that last one, any other file mapping forgets
it.  Prints how many frames in region files (jitted-*-r*.so) sit in a mapping that inherited
no base (their key, ip - mapping start, then differs from slice to slice of the file; the
bases jitanon frames slices with sit at one address, 0x100, per file); with ADDR, every
registration that covers it.  Callchain entries inside jitted files print file-relative
addresses in perf script: the file's start - pgoff is added back.
"""
import bisect, re, sys

MM = re.compile(r'^\s*\S+\s+(\d+)\s+([\d.]+): PERF_RECORD_MMAP2? (-?\d+)/\d+: '
                r'\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|\d+)[^\]]*\]: \S+ (.*)$')


def special(p):
    return (p == '' or p.startswith('[') or p.startswith('/dev/') or p.startswith('/memfd:')
            or p.startswith('/SYSV') or p == '//anon')


class Elf:
    def __init__(self, a, l, pg, path, base=None, tag=''):
        self.a, self.l, self.pg, self.path, self.base, self.tag = a, l, pg, path, base, tag

    def __repr__(self):
        return '[%x+%x pg %x %s base %s %s]' % (self.a, self.l, self.pg, self.path.rsplit('/', 1)[-1],
                                                hex(self.base) if self.base is not None else '-', self.tag)


maps, last, fbase = {}, {}, {}


def register(pid, a, l, pg, path, t):
    els = maps.setdefault(pid, [])
    end = a + l
    new, gone = [], []
    for idx, i in enumerate(els):
        if i.a >= end:
            break
        ie = i.a + i.l
        if ie < a:
            continue
        if a - pg == i.a - i.pg and path == i.path:
            a, pg, end = min(a, i.a), min(pg, i.pg), max(end, ie)
            l = end - a
            if a == i.a and l == i.l:
                return 'held already'
        elif ie == a:
            continue
        if i.a < a:
            new.append(Elf(i.a, a - i.a, i.pg, i.path, None, 'piece@' + t))
        if ie > end:
            new.append(Elf(end, ie - end, i.pg + end - i.a, i.path, None, 'piece@' + t))
        gone.append(idx)
    for idx in reversed(gone):
        del els[idx]
    e = Elf(a, l, pg, path, None, 'mapped@' + t)
    if not special(path):
        lb = last.get(pid)
        if lb and lb.path == path and e.a > lb.a:
            e.base = lb.a
        elif pg == 0:
            last[pid] = e
        else:
            last[pid] = None
    new.append(e)
    for n in new:
        els.insert(bisect.bisect_left([x.a for x in els], n.a), n)
    return 'ok'


def find(pid, ip):
    els = maps.get(pid, [])
    k = bisect.bisect_right([x.a for x in els], ip) - 1
    return els[k] if k >= 0 and els[k].a + els[k].l > ip else None


def main():
    want = int(sys.argv[2], 16) if len(sys.argv) > 2 else None
    bad = total = 0
    pid, t = None, ''
    for line in open(sys.argv[1], errors='replace'):
        m = MM.match(line)
        if m:
            p, a, l = int(m.group(3)), int(m.group(4), 16), int(m.group(5), 16)
            pg, path = int(m.group(6), 0), m.group(7).strip()
            r = register(p, a, l, pg, path, m.group(2))
            if 'jitted' in path and l > 1:
                fbase[path] = a - pg
            if want is not None and a <= want < a + l:
                print('MAP', m.group(2), hex(a), hex(l), hex(pg), path.rsplit('/', 1)[-1], r)
            continue
        h = re.match(r'^\s*\S+\s+(\d+)\s+([\d.]+):\s*$', line)
        if h:
            pid, t = int(h.group(1)), h.group(2)
            continue
        f = re.match(r'^\s+([0-9a-f]+)\s+\((.*)\)\s*$', line)
        if not f or pid is None:
            continue
        ip = int(f.group(1), 16) + (fbase.get(f.group(2), 0) if 'jitted' in f.group(2) else 0)
        e = find(pid, ip)
        if e and '-r' in e.path and e.path.endswith('.so'):
            total += 1
            if e.base is None:  # keyed from the slice's own start, not the file's one base
                bad += 1
                if bad <= 5:
                    print('no base: ip %x in %r at %s' % (ip, e, t))
    print('frames in region files', total, 'in a mapping without its base', bad)


if __name__ == '__main__':
    main()
