#!/bin/sh
# The suite and the tools must not depend on where the checkout is (#42): a user clones
# under /tmp, or under a path with a space.  This copies the checkout (its sources and the
# binaries the chosen oracles run, not the ASan builds) to /tmp/jitanon-paths.XXXXXX/a b/
# and runs there the oracles that broke on such paths: live.sh, which mounts a private
# tmpfs over /tmp (the checkout vanished under it), and jvmti.sh, whose attach passes the
# agent's path to jcmd (which split it at the space).  Their PASS/FAIL/SKIP lines come
# through with "paths: " in front (tests/run.sh's ci_may_skip judges their SKIPs as it
# judges the oracles' own); then some again as the user nobody (below).  live.sh runs one workload: the path is what is tested here.
jt_name="paths"; . "$(dirname "$0")/common.sh"
for b in jitanon-inject jitdump-cat libjitanon-jvmti.so; do
  [ -f "$root/build/$b" ] || jt_skip "build/$b not built (make)"
done
# /tmp itself, not TMPDIR: what broke was a checkout under /tmp
top=$(mktemp -d /tmp/jitanon-paths.XXXXXX) || { echo "FAIL paths: cannot make a directory in /tmp"; exit 0; }
jt_cleanup_hook() { rm -rf "$top"; }
dest="$top/a b/jitanon"
mkdir -p "$dest/build"
# the sources as they are in the checkout (tracked or not), no build output, no .git
(cd "$root" && tar --exclude=./build --exclude=./.git -cf - .) | (cd "$dest" && tar -xf -) ||
  { echo "FAIL paths: cannot copy the checkout to $dest"; exit 0; }
# the tools the oracles run, copied (a symlink would hide the space from the agent's
# path); deno, bun and the npm packages are large and path-free: linked
for f in "$root"/build/*; do
  case ${f##*/} in
    test_*|fuzz-*|npm|arm64) ;;
    *) [ -f "$f" ] && cp -p "$f" "$dest/build/" ;;
  esac
done
# pprof.sh's decoder is copied: the user nobody (below) may not pass through the
# checkout's parents (a clone in a directory of mktemp -d, mode 0700, failed CI so)
if [ -d "$root/build/npm/node_modules" ]; then
  mkdir -p "$dest/build/npm/node_modules"
  for m in "$root"/build/npm/node_modules/*; do
    case ${m##*/} in
      pprof-format) cp -R "$m" "$dest/build/npm/node_modules/" ;;
      *) ln -s "$m" "$dest/build/npm/node_modules/" ;;
    esac
  done
fi
(cd "$dest" && { sh tests/oracle/jvmti.sh; sh tests/oracle/live.sh hot3; }) 2>&1 |
  sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 paths: /p'

# jitanon-record gives java (started by a script: no command line to add flags to) its
# agent through JAVA_TOOL_OPTIONS, which the JVM splits at spaces too: from the copy, into
# an output directory with a space, the hot method must be named
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && [ -x "$dest/build/jitanon-record" ]; then
  mkdir -p "$top/j x/out y"
  cat > "$top/j x/Hot.java" <<'JAVA'
public class Hot {
    static long f(long n) { long a = 0; for (long i = 0; i < n; i++) a += i % 7; return a; }
    public static void main(String[] x) {
        long e = System.nanoTime() + 1500000000L, s = 0;
        while (System.nanoTime() < e) s += f(100000);
        System.out.println(s);
    }
}
JAVA
  if (cd "$top/j x" && javac Hot.java) >"$top/javac.txt" 2>&1 &&
     (cd "$top/j x" && "$dest/build/jitanon-record" -o "$top/j x/out y/p.data" -- sh -c 'exec java -XX:-UsePerfData -cp . Hot') >"$top/rec.txt" 2>&1 &&
     grep -q 'Hot\.f' "$top/rec.txt"; then
    echo "PASS paths: jitanon-record of java in a script, agent and output under paths with spaces: $(grep -m1 'Hot\.f' "$top/rec.txt" | tr -s ' ')"
  else echo "FAIL paths: jitanon-record of java in a script under paths with spaces: $(tail -n 3 "$top/javac.txt" "$top/rec.txt" | tr '\n' ' ')"; fi
fi

# As a user other than root (#42): the oracles that failed so, from the same copy, as
# nobody (HOME /nonexistent: the oracles bring their own).  What needs root skips with
# its reason (perf's kernel samples with perf_event_paranoid 2, mount namespaces).
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
  chown -R nobody "$top" && chmod 755 "$top"
  runuser -u nobody -- sh -c 'cd "$1" && for o in tools layouts symbolize pprof; do sh tests/oracle/$o.sh; done
    sh tests/oracle/live.sh hot3' sh "$dest" 2>&1 | sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 paths as nobody: /p'
else echo "SKIP paths as nobody: needs root, runuser and a user nobody"; fi
