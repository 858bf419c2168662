/* Built by tests/compile_matrix.sh with JITANON_MINIMAL (readers only): the jitdump and
   perf.data readers work and nothing else is linked in.  argv[1]: a jitdump (tests/data).
   Prints the dump's record and LOAD counts, and what the perf.data reader says of a cut
   header (a typed error with its byte offset, as in a full build), and that jitanon_features
   reports none of the parts left out; exits 0 when each is as expected. */
#define JITANON_MINIMAL
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "memio.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    static const uint8_t cut[] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 0x68, 0, 0, 0};
    jitanon_jitdump *d = NULL;
    jitanon_perf_reader r;
    jitanon_error err;
    memin src = memin_make(cut, sizeof cut, 0, 0);
    size_t i, loads = 0, d_records;
    jitanon_result res;
    if (argc != 2) return 2;
    if (jitanon_jitdump_load_file(argv[1], NULL, &d, &err) != JITANON_OK) {
        printf("jitdump: %s\n", err.description);
        return 1;
    }
    for (i = 0; i < d->record_count; i++) loads += d->records[i].id == JITANON_JITDUMP_CODE_LOAD;
    d_records = d->record_count;
    printf("jitdump %u records, %u loads\n", (unsigned)d->record_count, (unsigned)loads);
    jitanon_jitdump_destroy(d);
    res = jitanon_perf_reader_init(&r, memin_read, NULL, &src, NULL, &err);
    printf("perf.data %s at byte %u\n", jitanon_result_string(res), (unsigned)err.offset);
    printf("unwind, live, inject: %u\n",
           jitanon_features() & (JITANON_FEATURE_UNWIND | JITANON_FEATURE_LIVE | JITANON_FEATURE_INJECT));
    jitanon_perf_reader_release(&r);
    /* what node-head.dump holds, a cut header's error where the input ends, no left-out part */
    return d_records == 40 && loads == 20 && res == JITANON_ERR_TRUNCATED && err.offset == sizeof cut &&
                   !(jitanon_features() & (JITANON_FEATURE_UNWIND | JITANON_FEATURE_LIVE | JITANON_FEATURE_INJECT))
               ? 0
               : 1;
}
