#!/bin/sh
# The figures in the docs (issue #42): every paragraph, list item or table of README.md and
# doc/*.md with a measured time, speed, ratio, share or amount of memory names the command
# that measures it; no guessed times ("~1 min"); the README's Start section names make demo,
# make test and make unit.  Reads the docs only (no build, no perf): docs_check.py says how.
# Against an older README: python3 tests/oracle/docs_check.py --readme FILE
jt_name="docs oracle"; . "$(dirname "$0")/common.sh"
jt_need python3
chk="$root/tests/oracle/docs_check.py"
# the check itself: a README with one offence of each kind must fail on each, at its line
cat > "$tmp/bad.md" <<'MD'
# x

## Start

```sh
make demo    # ~1 min
make test
```

## Figures

A run took 3.2 s and 40 MB, 2.5x faster.

The same, measured (`make bench`): 3.2 s.

## Table

| a | b |
|---|---|
| 12% | 1.5 GB/s |
MD
python3 "$chk" --makefile "$root/Makefile" --readme "$tmp/bad.md" > "$tmp/bad.out"
got=$(sed -n 's/^FAIL \(docs [a-z]*\): [^:]*:\([0-9]*\):.*/\1 \2/p' "$tmp/bad.out" | sort | tr '\n' ,)
# a guessed time (line 6) and a time in Start without its measure (6); make unit missing
# (the section's line, 3); a paragraph (12) and a table (18) that name no command
if [ "$got" = "docs guesses 6,docs provenance 12,docs provenance 18,docs start 3,docs start 6," ]; then
  echo "PASS docs self-check: a README with a guessed time, no make unit and two unsourced figures fails at each"
else echo "FAIL docs self-check: expected its FAIL lines at 6, 12, 18, 3 and 6, got $got:"; sed 's/^/  /' "$tmp/bad.out"; fi
python3 "$chk" --makefile "$root/Makefile" --readme README.md doc/*.md || echo "FAIL docs: docs_check.py stopped"
