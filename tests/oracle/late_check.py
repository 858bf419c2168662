#!/usr/bin/env python3
"""Checks --late=name against the truth.

late_check.py truth TRUTH KEEP NAME
    TRUTH: tinyjit --late output ("code <name> <hex addr> <size> <ns>" per function).
    KEEP, NAME: `perf script -F time,ip,sym --ns` of the --late=keep and --late=name outputs.
    Every sample in a function's code must be named with it in NAME; every sample that
    changed between KEEP and NAME must now carry the truth; nothing else may change.
late_check.py map MAP KEEP NAME
    MAP: the runtime's perf map (/tmp/perf-<pid>.map, written as it creates code).
    Every sample that changed must now carry a name the map gives for its address.
Prints counts; exits 1 on any wrong name."""
import sys


def samples(path):
    out = []
    for line in open(path, errors="replace"):
        p = line.split()
        if len(p) < 2 or not p[0].endswith(":"):
            continue
        try:
            out.append((float(p[0][:-1]), int(p[1], 16), p[2] if len(p) > 2 else ""))
        except ValueError:
            continue
    return out


def same_name(sym, full):
    """perf script prints a symbol's first word; a JVM's map adds the return type and
    the parameters ("long demo.Many.m1(long)" for demo.Many.m1)."""
    return sym == full or full.startswith(sym + " ") or (" " + sym + "(") in (" " + full)


def main():
    mode, ref, keep_path, name_path = sys.argv[1:5]
    keep, name = samples(keep_path), samples(name_path)
    if len(keep) != len(name) or any(a[:2] != b[:2] for a, b in zip(keep, name)):
        print("the two outputs hold different samples (%d vs %d)" % (len(keep), len(name)))
        return 1
    ranges = []  # (start, end, name)
    for line in open(ref, errors="replace"):
        p = line.split()
        if mode in ("truth", "partial") and len(p) == 5 and p[0] == "code":
            ranges.append((int(p[2], 16), int(p[2], 16) + int(p[3]), p[1]))
        elif mode == "map" and len(p) >= 3:
            try:
                a, n = int(p[0], 16), int(p[1], 16)
            except ValueError:
                continue
            ranges.append((a, a + n, " ".join(p[2:])))

    def truths(ip):
        return {n for a, e, n in ranges if a <= ip < e}

    changed = wrong = unnamed = infuncs = 0
    for (t, ip, before), (_, _, after) in zip(keep, name):
        want = truths(ip)
        if mode != "map" and want:
            infuncs += 1
            if after not in want:
                unnamed += 1
        if before != after:
            changed += 1
            if not any(same_name(after, w) for w in want):
                wrong += 1
                if wrong <= 5:
                    print("wrong: %.9f %x %r -> %r, truth %r" % (t, ip, before, after, sorted(want)[:3]))
    print("%d samples, %d named before their load record, %d wrong%s" % (
        len(keep), changed, wrong,
        ", %d of %d in functions unnamed" % (unnamed, infuncs) if mode != "map" else ""))
    return 1 if wrong or (mode == "truth" and (unnamed or not changed)) else 0


if __name__ == "__main__":
    sys.exit(main())
