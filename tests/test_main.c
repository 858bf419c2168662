/* The unit-test binary: includes the implementation so internal jitanon__* helpers can
   be tested white-box.  Built and run under ASan+UBSan by `make unit` (and `make test`);
   `build/test_main NAME` runs the tests whose name has NAME in it, or the suite NAME.
   The suites are listed in tests/suites.h (doc/testing.md). */
#define JITANON_IMPLEMENTATION
#include "../jitanon.h"
#include "elfread.h"
#include "memio.h"
#include "jdrec.h"
#include "test.h"

jt_state jt;
static const char *jt_skip_reason;

void jt_skip(const char *reason) { jt_skip_reason = reason; }

void jt_suite(const char *name, void (*fn)(void))
{
    jt.suite = name;
    fn();
    jt.suite = NULL;
}

/* with a filter, a test runs when its name has the filter in it or its suite is named so */
void jt_run(const char *name, void (*fn)(void))
{
    if (jt.filter && !strstr(name, jt.filter) && !(jt.suite && !strcmp(jt.suite, jt.filter))) return;
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

/* the suites, each appending itself to JT_SUITES (test.h) */
static void jt_suites_none(void) {}
#define JT_SUITES jt_suites_none
#include "suites.h"

int main(int argc, char **argv)
{
    if (argc > 1) jt.filter = argv[1];
    JT_SUITES();
    printf("%d passed, %d failed\n", jt.passed, jt.failed);
    if (jt.filter && !jt.passed && !jt.failed) {
        fprintf(stderr, "no test has \"%s\" in its name, and no suite is named so (tests/suites.h)\n", jt.filter);
        return 2;
    }
    return jt.failed ? 1 : 0;
}
