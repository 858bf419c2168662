/* libFuzzer harness: the trimming engine against the brute-force model of
   tests/trim_model.h.  The input is decoded as at most 4096 events (loads, moves, mmaps,
   samples, jitdump flags, forks, exits) in a 1 KiB window at the bottom, middle or very
   top of the address space; any disagreement with the contract aborts.  Every 7th input
   also runs with a small memory_limit, which must end in JITANON_ERR_LIMIT, never in a
   wrong answer. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "../tests/trim_model.h"
#include <stdlib.h>

enum { FUZZ_MAX_EVENTS = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tm_ev *ev = (tm_ev *)calloc(FUZZ_MAX_EVENTS, sizeof *ev);
    size_t n;
    tm_run run;
    jitanon_trim_opts opts;
    int r;
    if (!ev) return 0;
    n = tm_decode(data, size, ev, FUZZ_MAX_EVENTS);
    memset(&run, 0, sizeof run);
    if (tm_check(ev, n, &run) != 0) {
        fprintf(stderr, "fuzz_trim: %s\n", run.why);
        abort();
    }
    if (size && data[0] % 7 == 6) {
        memset(&opts, 0, sizeof opts);
        opts.memory_limit = 2048;
        memset(&run, 0, sizeof run);
        run.opts = &opts;
        r = tm_check(ev, n, &run);
        if (r == 1 || (r == 2 && run.stopped_by != JITANON_ERR_LIMIT)) {
            fprintf(stderr, "fuzz_trim (memory_limit): %s %s\n", run.why, jitanon_result_string(run.stopped_by));
            abort();
        }
    }
    free(ev);
    return 0;
}
