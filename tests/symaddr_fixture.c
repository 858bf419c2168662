/* symaddr_fixture: rewrites a real perf.data recording (file mode, little-endian, one
   attr, sample_type IP|TID|TIME|CPU|PERIOD, no callchain: `perf record -e cpu-clock`)
   through jitanon's writer, every user-mode sample's ip replaced by the next address of
   ADDRS (hex, one a line; cycled), for tests/oracle/script.sh: perf script and
   jitanon-script then name the addresses chosen, such as those where symbols nest (a
   label inside a function), where perf's answer depends on its tree of symbols.

       symaddr_fixture IN OUT ADDRS */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const jitanon_error *err)
{
    char msg[512];
    if (err && err->type != JITANON_OK) {
        jitanon_format_error(msg, sizeof msg, err);
        fprintf(stderr, "symaddr_fixture: %s: %s\n", what, msg);
    } else fprintf(stderr, "symaddr_fixture: %s\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    static jitanon_perf_reader r;
    static jitanon_perf_writer w;
    static uint64_t addrs[65536];
    jitanon_atomic_file out;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    jitanon_perf_attr a;
    size_t n = 0, k = 0, i;
    char line[64];
    FILE *list;
    if (argc != 4) {
        fprintf(stderr, "usage: symaddr_fixture IN OUT ADDRS\n");
        return 2;
    }
    if (!(list = fopen(argv[3], "r"))) return fail("cannot read the addresses", NULL);
    while (n < sizeof addrs / sizeof addrs[0] && fgets(line, sizeof line, list)) addrs[n++] = strtoull(line, NULL, 16);
    fclose(list);
    if (!n) return fail("no address", NULL);
    if (jitanon_perf_reader_open(&r, argv[1], NULL, &err) != JITANON_OK || r.mode != JITANON_PERF_FILE || r.big_endian ||
        r.attr_count != 1 || jitanon_perf_reader_load_features(&r, &err) != JITANON_OK)
        return fail("cannot read the input (a little-endian perf.data file with one attr)", &err);
    if (r.attrs[0].sample_type & ~(uint64_t)(0x1 | 0x2 | 0x4 | 0x80 | 0x100))
        return fail("the input's sample_type is not within IP|TID|TIME|CPU|PERIOD", NULL);
    if (jitanon_atomic_open(&out, argv[2], NULL, &err) != JITANON_OK) return fail("cannot create the output", &err);
    res = jitanon_perf_writer_init(&w, JITANON_PERF_FILE, 0, jitanon_atomic_sink(&out), jitanon_atomic_pwrite, NULL, &err);
    a = r.attrs[0];
    if (res == JITANON_OK) res = jitanon_perf_writer_add_attr(&w, &a, &err);
    for (i = 0; res == JITANON_OK && i < r.state_->feat_count; i++) {
        jitanon_bytes b;
        if (jitanon_perf_reader_feature(&r, r.state_->feats[i].bit, &b))
            res = jitanon_perf_writer_add_feature(&w, r.state_->feats[i].bit, b.data, b.size, &err);
    }
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        uint8_t buf[65536];
        if (rec.type == JITANON_PERF_RECORD_SAMPLE && (rec.misc & 7) == 2 && rec.raw.size >= 16 &&
            rec.raw.size <= sizeof buf) {
            memcpy(buf, rec.raw.data, rec.raw.size);
            jitanon__wr64(buf + 8, addrs[k++ % n], 0); /* the ip: the first field */
            res = jitanon_perf_writer_write(&w, buf, rec.raw.size, &err);
        } else res = jitanon_perf_writer_write(&w, rec.raw.data, rec.raw.size, &err);
    }
    if (res == JITANON_END) res = JITANON_OK;
    if (res == JITANON_OK) res = jitanon_perf_writer_finish(&w, &err);
    if (res == JITANON_OK) res = jitanon_atomic_commit(&out, 0, &err);
    else jitanon_atomic_abort(&out);
    jitanon_perf_writer_release(&w);
    jitanon_perf_reader_release(&r);
    return res == JITANON_OK ? 0 : fail("writing the output", &err);
}
