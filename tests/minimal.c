/* Built by tests/compile_matrix.sh with JITANON_MINIMAL (readers only): the jitdump and
   perf.data readers work and nothing else is linked in.  argv[1]: a jitdump (tests/data).
   Prints the dump's record and LOAD counts, and what the perf.data reader says of a cut
   header (a typed error with its byte offset, as in a full build), and that jitanon_features
   reports none of the parts left out. */
#define JITANON_MINIMAL
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>
#include <string.h>

typedef struct bytes_src {
    const uint8_t *p;
    size_t n, at;
} bytes_src;

static size_t bytes_read(void *user, void *dst, size_t size)
{
    bytes_src *b = (bytes_src *)user;
    if (size > b->n - b->at) size = b->n - b->at;
    memcpy(dst, b->p + b->at, size);
    b->at += size;
    return size;
}

int main(int argc, char **argv)
{
    static const uint8_t cut[] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 0x68, 0, 0, 0};
    jitanon_jitdump *d = NULL;
    jitanon_perf_reader r;
    jitanon_error err;
    bytes_src src = {cut, sizeof cut, 0};
    size_t i, loads = 0;
    jitanon_result res;
    if (argc != 2) return 2;
    if (jitanon_jitdump_load_file(argv[1], NULL, &d, &err) != JITANON_OK) {
        printf("jitdump: %s\n", err.description);
        return 1;
    }
    for (i = 0; i < d->record_count; i++) loads += d->records[i].id == JITANON_JITDUMP_CODE_LOAD;
    printf("jitdump %u records, %u loads\n", (unsigned)d->record_count, (unsigned)loads);
    jitanon_jitdump_destroy(d);
    res = jitanon_perf_reader_init(&r, bytes_read, NULL, &src, NULL, &err);
    printf("perf.data %s at byte %u\n", jitanon_result_string(res), (unsigned)err.offset);
    printf("unwind, live, inject: %u\n",
           jitanon_features() & (JITANON_FEATURE_UNWIND | JITANON_FEATURE_LIVE | JITANON_FEATURE_INJECT));
    jitanon_perf_reader_release(&r);
    return res == JITANON_OK;
}
