#!/usr/bin/env python3
"""The house rules of jitanon.h's implementation, checked (issue #45):

  - every section (a line "/* -- [tag] ..." or "/* == [tag] ...") is at most MAX_LINES long;
  - no section calls a function of a later section, except the hooks: functions declared
    in the "-- hooks:" block of [inject] (each with the section that defines it) and
    jitanon__os_default, the platform seam ([seam] declares it, [posix] defines it);
  - every hook is in fact defined in the section its comment names;
  - the contents table lists every section tag, in the header's order, and doc/HACKING.md's
    map has a row for each (its first cell the tag), in the same order, and names every
    tests/t_*.c.

Comments and string literals are blanked before names are looked for, so a comment that
mentions a later function is not a call.  Prints PASS/FAIL lines; exits 1 on a FAIL.

    python3 tests/oracle/sections_check.py jitanon.h doc/HACKING.md
"""
import glob
import os
import re
import sys

MAX_LINES = 2500
SEAM_HOOKS = {"jitanon__os_default"}
TAG = re.compile(r"/\* (?:--|==) \[([a-z0-9-]+)\]")


def blank(text):
    """Comments and strings to blanks, keeping lines (and a section header's first line)."""
    def comment(m):
        s = m.group(0)
        first = s.split("\n", 1)[0]
        keep = first if TAG.match(first) else "/*"
        return keep + "\n" * s.count("\n") + ("" if "\n" not in s and keep != "/*" else "*/")
    text = re.sub(r"/\*.*?\*/", comment, text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def main(header, hacking):
    raw = open(header).read()
    lines = raw.split("\n")
    code = blank(raw).split("\n")
    assert len(code) == len(lines)
    start = next(i for i, l in enumerate(lines) if "Stop here if you only need the API" in l)
    secs = [(i, m.group(1)) for i, l in enumerate(lines) if i > start for m in [TAG.match(l)] if m]
    fails = []

    def sec_of(i):
        s = None
        for a, n in secs:
            if a > i:
                break
            s = n
        return s

    # 1. sizes
    ends = [a for a, _ in secs[1:]] + [len(lines)]
    for (a, n), e in zip(secs, ends):
        if e - a > MAX_LINES:
            fails.append("section [%s] is %d lines (at most %d)" % (n, e - a, MAX_LINES))

    # 2. definitions and the hooks block
    defs = {}
    for i, l in enumerate(code):
        if i <= start:
            continue
        m = re.match(r"^(?:JITANON__PRIVATE |JITANON_API |static )[^;=(]*?\b(jitanon__[a-z0-9_]+)\(", l)
        if not m:
            continue
        j = i
        while j < len(code) and "{" not in code[j] and ";" not in code[j]:
            j += 1
        if j < len(code) and "{" in code[j]:
            defs.setdefault(m.group(1), i)
    h0 = next((i for i, l in enumerate(lines) if l.startswith("/* -- hooks:")), None)
    hooks = {}
    if h0 is None:
        fails.append("no '/* -- hooks:' block in [inject]")
    else:
        where = None
        for i in range(h0 + 1, len(lines)):
            if TAG.match(lines[i]) or lines[i].startswith("/* -- "):
                break
            m = re.match(r"/\* \[([a-z0-9-]+)\]", lines[i])
            if m:
                where = m.group(1)
            m = re.match(r"^JITANON__PRIVATE [^(]*?\b(jitanon__[a-z0-9_]+)\(", lines[i])
            if m:
                hooks[m.group(1)] = where
        for f, w in sorted(hooks.items()):
            if f not in defs:
                fails.append("hook %s is never defined" % f)
            elif sec_of(defs[f]) != w:
                fails.append("hook %s: its comment says [%s], it is defined in [%s]" % (f, w, sec_of(defs[f])))

    # 3. forward calls
    seen = set()
    for i, l in enumerate(code):
        if i <= start:
            continue
        for m in re.finditer(r"\b(jitanon__[a-z0-9_]+)\b", l):
            f = m.group(1)
            if f not in defs or defs[f] <= i or f in hooks or f in SEAM_HOOKS:
                continue
            a, b = sec_of(i), sec_of(defs[f])
            if a != b and (a, f) not in seen:
                seen.add((a, f))
                fails.append("[%s] line %d calls %s of the later [%s] (not a hook)" % (a, i + 1, f, b))

    # 4. the contents table and HACKING.md's map
    order = [n for _, n in secs]
    c0 = next(i for i, l in enumerate(lines) if "Contents of the implementation" in l)
    c1 = next(i for i in range(c0, len(lines)) if "=====" in lines[i] and i > c0 + 1)
    table = re.findall(r"^\s+((?:\[[a-z0-9-]+\]\s*)+)", "\n".join(lines[c0:c1]), flags=re.M)
    listed = [t for row in table for t in re.findall(r"\[([a-z0-9-]+)\]", row)]
    if listed != order:
        fails.append("the contents table lists %s; the sections are %s" % (" ".join(listed), " ".join(order)))
    rows = re.findall(r"^\| `\[([a-z0-9-]+)\]` \|", open(hacking).read(), flags=re.M)
    if rows != order:
        fails.append("doc/HACKING.md's map has rows %s; the sections are %s" % (" ".join(rows), " ".join(order)))
    # 5. every unit-test file is on the map
    hack = open(hacking).read()
    for t in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(header)), "tests", "t_*.c"))):
        if "tests/" + os.path.basename(t) not in hack:
            fails.append("doc/HACKING.md's map names no section for tests/%s" % os.path.basename(t))
    for f in fails:
        print("FAIL sections: " + f)
    if not fails:
        print("PASS sections: %d sections, the largest [%s] %d lines; %d hooks; contents table and HACKING.md in order"
              % (len(secs), max(zip([e - a for (a, _), e in zip(secs, ends)], order))[1],
                 max(e - a for (a, _), e in zip(secs, ends)), len(hooks)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "jitanon.h",
                  sys.argv[2] if len(sys.argv) > 2 else "doc/HACKING.md"))
