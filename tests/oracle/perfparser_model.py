"""A model of how hotspot's parser (KDAB/perfparser) registers mappings and keys frames,
written from the facts in ../shared/reference/consumers.md (no code of it): for debugging
the region layout (doc/layouts.md), not run by the tests.

usage: perf script --ns -i OUT.data --show-mmap-events -F comm,pid,time,ip,dso > ev.txt
       python3 perfparser_model.py ev.txt [ADDR_HEX]
       python3 perfparser_model.py --flushes ev.txt
--flushes counts the parser's module flushes: a frame in a file reports its module (from
start - pgoff to the end of its last PT_LOAD, read from the file); a mapping that replaces
one whose start lies inside a reported module throws every module away.  Each flush is
put down to the kind of the new mapping and of the one it replaced.
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
import bisect, collections, re, struct, sys

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
reported = {}                      # pid -> {path: (lo, hi)}: the modules held since the last flush
flushes = collections.Counter()
load_end = {}


def elf_load_end(path):
    # the end of the last PT_LOAD (elfutils' module end, less its base); None: no ELF
    if path not in load_end:
        end = None
        try:
            with open(path, 'rb') as f:
                h = f.read(64)
                if h[:4] == b'\x7fELF' and h[4] == 2:
                    phoff, = struct.unpack_from('<Q', h, 32)
                    phentsize, phnum = struct.unpack_from('<HH', h, 54)
                    f.seek(phoff)
                    ph = f.read(phentsize * phnum)
                    for k in range(phnum):
                        t, = struct.unpack_from('<I', ph, k * phentsize)
                        if t == 1:
                            va, = struct.unpack_from('<Q', ph, k * phentsize + 16)
                            ms, = struct.unpack_from('<Q', ph, k * phentsize + 40)
                            end = va + ms
        except OSError:
            pass
        load_end[path] = end
    return load_end[path]


def kind(path):
    if '/jitted-' in path:
        return 'region file' if '-r' in path.rsplit('/', 1)[-1] else 'function file'
    return '//anon' if special(path) else 'other file'


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
    held = reported.get(pid, {})
    for idx in gone:
        i = els[idx]
        if any(lo <= i.a < hi for lo, hi in held.values()):
            flushes[(kind(path), kind(i.path))] += 1
            held.clear()
            break
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
    count = sys.argv[1] == '--flushes'
    if count:
        del sys.argv[1]
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
        if count and e and not special(e.path) and e.path not in reported.setdefault(pid, {}):
            end = elf_load_end(e.path)
            if end:
                b = (e.base if e.base is not None and e.base > 0x1000 else e.a) - e.pg
                reported[pid][e.path] = (b, b + end)
        if e and '-r' in e.path and e.path.endswith('.so'):
            total += 1
            if e.base is None:  # keyed from the slice's own start, not the file's one base
                bad += 1
                if bad <= 5:
                    print('no base: ip %x in %r at %s' % (ip, e, t))
    print('frames in region files', total, 'in a mapping without its base', bad)
    if count:
        print('flushes', sum(flushes.values()))
        for (n, o), c in flushes.most_common():
            print('  %5d  a %s mapped over a %s' % (c, n, o))


if __name__ == '__main__':
    main()
