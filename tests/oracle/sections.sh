#!/bin/sh
# The header's sections (issue #45): none over 2,500 lines, none calling a later one but
# through the hooks, the contents table and doc/HACKING.md's map in the header's order.
# Reads the sources only: sections_check.py says how.  Its self-check: a header whose
# first section calls a later one without a hook must fail.
jt_name="sections oracle"; . "$(dirname "$0")/common.sh"
jt_need python3
chk="$root/tests/oracle/sections_check.py"
python3 "$chk" "$root/jitanon.h" "$root/doc/HACKING.md" || echo "FAIL sections: sections_check.py stopped"
# a copy where [layouts] calls a [decide] function that is not a hook
sed 's/^\(JITANON__PRIVATE int jitanon__inj_hit(jitanon__inj \*j, uint32_t pid, uint64_t ip)\)$/\1 { (void)jitanon__inj_late_due; }\n\1/' \
  "$root/jitanon.h" > "$tmp/bad.h"
if python3 "$chk" "$tmp/bad.h" "$root/doc/HACKING.md" | grep -q 'calls jitanon__inj_late_due of the later \[decide\]'; then
  echo "PASS sections self-check: a call into a later section without a hook fails"
else echo "FAIL sections self-check: a call into a later section without a hook was not found"; fi
