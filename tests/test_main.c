/* The unit-test binary: includes the implementation so internal jitanon__* helpers can
   be tested white-box.  Built and run under ASan+UBSan by `make test`. */
#define JITANON_IMPLEMENTATION
#include "../jitanon.h"
#include "elfread.h"
#include "memio.h"
#include "jdrec.h"
#include "test.h"

jt_state jt;
static const char *jt_skip_reason;

void jt_skip(const char *reason) { jt_skip_reason = reason; }

void jt_run(const char *name, void (*fn)(void))
{
    if (jt.filter && !strstr(name, jt.filter)) return;
    jt.cur_failed = 0;
    jt_skip_reason = NULL;
    fn();
    if (jt.cur_failed) {
        jt.failed++;
        printf("FAIL %s\n", name);
    } else if (jt_skip_reason) {
        jt.passed++;
        printf("SKIP %s: %s\n", name, jt_skip_reason);
    } else {
        jt.passed++;
        printf("PASS %s\n", name);
    }
    fflush(stdout);
}

#include "testutil.c"
#include "t_core.c"
#include "t_jitdump.c"
#include "t_perfdata.c"
#include "t_zstd.c"
#include "t_trim.c"
#include "t_deflt.c"
#include "t_elf.c"
#include "t_inject.c"
#include "t_damage.c"
#include "t_pipenames.c"
#include "t_pprof.c"
#include "t_ns.c"
#include "t_record.c"
#include "t_live.c"
#include "t_perfmap.c"
#include "t_runtimes.c"
#include "t_speed.c"
#include "t_surface.c"
#include "t_api.c"
#include "t_scan.c"
#include "t_seam.c"
#include "t_alloc.c"
#include "t_bcache.c"
#include "t_region.c"
#include "t_unwind.c"
#include "t_symbols.c"

int main(int argc, char **argv)
{
    if (argc > 1) jt.filter = argv[1];
    suite_core();
    suite_jitdump();
    suite_perfdata();
    suite_zstd();
    suite_trim();
    suite_elf();
    suite_inject();
    suite_damage();
    suite_pipenames();
    suite_pprof();
    suite_ns();
    suite_record();
    suite_live();
    suite_perfmap();
    suite_runtimes();
    suite_speed();
    suite_surface();
    suite_api();
    suite_unwind();
    suite_scan();
    suite_seam();
    suite_deflt();
    suite_alloc();
    suite_bcache();
    suite_region();
    suite_symbols();
    printf("%d passed, %d failed\n", jt.passed, jt.failed);
    return jt.failed ? 1 : 0;
}
