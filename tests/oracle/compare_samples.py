"""Compares `perf script -F tid,time,ip,sym,dso` outputs sample by sample.

usage: compare_samples.py MODE INPUT PERF_INJECT OURS [JITPID...]
  contract: for every sample perf inject resolves into a jitted-*.so, ours names the same
            function; every sample the raw input resolved to a symbol is not [unknown] in ours.
  same:     the sample lines are identical once ELF directories are ignored.
  samesym:  the same symbols, and jitted ELFs where the other has them (another ELF layout).
Prints one summary line; exits 1 on a violation.
"""
import re, sys

def load(path):
    rows = []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
        if not m:
            continue
        tid, time, ip, sym, dso = m.groups()
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        rows.append((tid, time, ip, sym, dso.rsplit("/", 1)[-1]))
    return rows

def unknown(sym):
    return sym.startswith("[unknown]") or sym == ""

mode, raw_p, perf_p, ours_p = sys.argv[1:5]
raw, perf, ours = load(raw_p), load(perf_p), load(ours_p)
if not (len(raw) == len(perf) == len(ours)) or not raw:
    print("sample counts differ or empty: raw %d perf-inject %d ours %d" % (len(raw), len(perf), len(ours)))
    sys.exit(1)
bad = []
stats = {"jit_perf": 0, "jit_ours": 0, "unknown_perf": 0, "unknown_ours": 0, "unknown_raw": 0}
for r, p, o in zip(raw, perf, ours):
    if (r[0], r[1], r[2]) != (o[0], o[1], o[2]) or (p[0], p[1], p[2]) != (o[0], o[1], o[2]):
        bad.append("sample order differs at %s" % (o,))
        break
    stats["jit_perf"] += p[4].startswith("jitted-")
    stats["jit_ours"] += o[4].startswith("jitted-")
    stats["unknown_perf"] += unknown(p[3])
    stats["unknown_ours"] += unknown(o[3])
    stats["unknown_raw"] += unknown(r[3])
    if mode == "samesym":  # another ELF layout: same function, file names may differ
        if p[3] != o[3] or p[4].startswith("jitted-") != o[4].startswith("jitted-"):
            bad.append("%s / %s at ip %s" % (p[3:], o[3:], o[2]))
        continue
    if mode == "same":
        if p[3:] != o[3:]:
            bad.append("perf inject %s / ours %s at ip %s" % (p[3:], o[3:], o[2]))
        continue
    if p[4].startswith("jitted-") and (o[3] != p[3] or not o[4].startswith("jitted-")):
        bad.append("perf inject: %s in %s, ours: %s in %s (ip %s)" % (p[3], p[4], o[3], o[4], o[2]))
    if not unknown(r[3]) and unknown(o[3]):
        bad.append("input: %s in %s, ours: [unknown] (ip %s)" % (r[3], r[4], o[2]))
print("%d samples; in jitted ELFs: perf inject %d, ours %d; [unknown]: input %d, perf inject %d, ours %d; %d violation(s)%s"
      % (len(ours), stats["jit_perf"], stats["jit_ours"], stats["unknown_raw"], stats["unknown_perf"],
         stats["unknown_ours"], len(bad), (": " + bad[0]) if bad else ""))
sys.exit(1 if bad else 0)
