/* libFuzzer harness: the jitdump reader, three ways over the same bytes - the memory
   iterator, the streaming reader (fed in odd-sized pieces), and the whole-dump loader -
   which must agree on how many records they accept. */
#define JITANON_MAX_RECORD_SIZE (1u << 20)
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdlib.h>
#include "../tests/memio.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jitanon_jitdump_iter it;
    jitanon_jitdump_stream s;
    jitanon_jitdump_record rec;
    jitanon_error err;
    jitanon_jitdump_opts opts;
    jitanon_jitdump *d;
    memin pw;
    uint64_t n_iter = 0, n_stream = 0;
    jitanon_result r;
    memset(&opts, 0, sizeof opts);
    opts.memory_limit = 64u << 20;
    r = jitanon_jitdump_iter_begin(&it, data, size, &opts, &err);
    while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, &err)) == JITANON_OK) {
        jitanon_jitdump_debug_iter di;
        jitanon_jitdump_debug_entry e;
        volatile size_t sink = 0;
        n_iter++;
        jitanon_jitdump_debug_iter_begin(&di, &rec);
        while (jitanon_jitdump_debug_iter_next(&di, &e)) sink += e.file.length ? (size_t)e.file.data[0] : 0;
        if (rec.id == JITANON_JITDUMP_CODE_LOAD && rec.load.name.length) sink += (size_t)rec.load.name.data[0];
        (void)sink;
    }
    pw = memin_make(data, size, 7, 1);
    if (jitanon_jitdump_stream_init(&s, memin_read, &pw, &opts, &err) == JITANON_OK) {
        while (jitanon_jitdump_stream_next(&s, &rec, &err) == JITANON_OK) n_stream++;
        jitanon_jitdump_stream_release(&s);
    }
    if (n_stream != n_iter) abort();
    if (jitanon_jitdump_load_memory(data, size, &opts, &d, &err) == JITANON_OK && d->record_count != n_iter) abort();
    jitanon_jitdump_destroy(d);
    return 0;
}
