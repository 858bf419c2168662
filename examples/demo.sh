#!/bin/sh
# make demo: placeholder until the injector lands - shows a generated jitdump.
set -eu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "== jitdump-cat on tests/data/node-head.dump (first records of a real node --perf-prof dump)"
./build/jitdump-cat tests/data/node-head.dump | head -12
./build/jitdump-cat --summary tests/data/node-head.dump
