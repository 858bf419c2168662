/* perfdata-cat: prints one line per perf.data record, or copies a perf.data file through
   jitanon's reader and writer unchanged.

       perfdata-cat [--summary] FILE|-
       perfdata-cat --copy OUT [--pipe] FILE|-      (OUT "-" = stdout, pipe mode)

   An MMAP2 of the first layout (kernel 3.10, no prot and flags) prints "first-layout".
   perf record -z input is decompressed: the records inside are printed, and a copy is
   written uncompressed.

   Exits 1 with the error (and its byte offset) on malformed input, 2 on bad usage. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "cli_files.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void print_record(const jitanon_perf_record *rec)
{
    const jitanon_perf_mmap *m = &rec->mmap;
    printf("%llu %s", (unsigned long long)rec->offset, jitanon_perf_record_name(rec->type));
    if (rec->sid.present & JITANON_PERF_SAMPLE_TIME) printf(" t=%llu", (unsigned long long)rec->sid.time);
    if (rec->sid.present & JITANON_PERF_SAMPLE_TID) printf(" %u/%u", (unsigned)rec->sid.pid, (unsigned)rec->sid.tid);
    if (rec->type == JITANON_PERF_RECORD_SAMPLE) printf(" ip=%#llx", (unsigned long long)rec->sample.ip);
    if (rec->type == JITANON_PERF_RECORD_MMAP || rec->type == JITANON_PERF_RECORD_MMAP2)
        printf(" [%#llx-%#llx) pgoff=%#llx prot=%u flags=%u%s %.*s", (unsigned long long)m->start,
               (unsigned long long)(m->start + m->len), (unsigned long long)m->pgoff, (unsigned)m->prot,
               (unsigned)m->flags, m->first_layout ? " first-layout" : "", (int)m->filename.length, m->filename.data);
    if (rec->type == JITANON_PERF_RECORD_COMM) printf(" %.*s", (int)rec->comm.comm.length, rec->comm.comm.data);
    if (rec->type == JITANON_PERF_RECORD_EVENT_UPDATE && rec->event_update.text.data)
        printf(" %s id=%llu %.*s", rec->event_update.kind == JITANON_PERF_EVENT_UPDATE_NAME ? "name" : "unit",
               (unsigned long long)rec->event_update.id, (int)rec->event_update.text.length, rec->event_update.text.data);
    putchar('\n');
}

static void print_summary(const jitanon_perf_reader *r)
{
    unsigned t;
    size_t i;
    printf("mode %s, %s-endian, %zu attrs, %llu records\n", r->mode == JITANON_PERF_FILE ? "file" : "pipe",
           r->big_endian ? "big" : "little", r->attr_count, (unsigned long long)r->stats.records);
    for (i = 0; i < r->attr_count; i++)
        printf("attr %zu: type %u config %llu sample_type %#llx ids %zu sample_id_all %d clockid %d\n", i,
               (unsigned)r->attrs[i].type, (unsigned long long)r->attrs[i].config,
               (unsigned long long)r->attrs[i].sample_type, r->attrs[i].id_count, r->attrs[i].sample_id_all,
               r->attrs[i].use_clockid ? (int)r->attrs[i].clockid : -1);
    for (t = 0; t < 128; t++)
        if (r->stats.by_type[t])
            printf("%-20s %llu\n", jitanon_perf_record_name(t), (unsigned long long)r->stats.by_type[t]);
}

static int fail(const char *in, const jitanon_error *err)
{
    char msg[256];
    jitanon_format_error(msg, sizeof msg, err);
    fprintf(stderr, "perfdata-cat: %s: %s\n", in, msg);
    return 1;
}

static int cat(const char *in, int summary)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res = jitanon_perf_reader_open(&r, in, NULL, &err);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK)
        if (!summary) print_record(&rec);
    if (res == JITANON_END && summary) print_summary(&r);
    if (res == JITANON_END && r.warnings) { /* a killed or cut recording: what is there was read */
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &r.damage);
        fprintf(stderr, "perfdata-cat: warning: %s: damaged input, %llu bytes after the last whole record ignored: %s\n",
                in, (unsigned long long)r.bytes_ignored, msg);
    }
    jitanon_perf_reader_release(&r);
    return res == JITANON_END ? 0 : fail(in, &err);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: perfdata-cat [--summary] FILE|-\n"
               "       perfdata-cat --copy OUT [--pipe] FILE|-\n"
               "  (default)     one line per record: offset, type, time, pid/tid, ip, mmap range and file\n"
               "  --summary     the attrs and a count per record type\n"
               "  --copy OUT    copy FILE through jitanon's reader and writer (OUT -: standard output)\n"
               "  --pipe        the copy in pipe format (default: FILE's format)\n"
               "  -h, --help    this text; every option: man perfdata-cat (or man doc/perfdata-cat.1)\n");
}

int main(int argc, char **argv)
{
    const char *copy = NULL, *in = NULL;
    int i, summary = 0, pipe_out = 0;
    jitanon_error err;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--copy") == 0 && i + 1 < argc) copy = argv[++i];
        else if (strcmp(argv[i], "--pipe") == 0) pipe_out = 1;
        else if (strcmp(argv[i], "--summary") == 0) summary = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), 0;
        else if (!in && (argv[i][0] != '-' || argv[i][1] == '\0')) in = argv[i];
        else in = NULL, argc = 0;
    }
    if (!in) return usage(stderr), 2;
    /* the OS's reason for a file that cannot be used, said before anything is read */
    if (cli_file("perfdata-cat", in, CLI_INPUT, "a recording (DIR/perf.data)") != 0) return 1;
    if (!copy) return cat(in, summary);
    if (!strcmp(copy, "-") && isatty(1)) { /* binary perf.data is no text for a terminal */
        fprintf(stderr, "perfdata-cat: refusing to write binary perf.data to a terminal: give --copy FILE, or pipe it "
                        "(perfdata-cat --copy - %s | perf report -i -)\n", in);
        return 2;
    }
    if (cli_file("perfdata-cat", copy, CLI_OUTPUT, NULL) != 0) return 1;
    if (jitanon_perf_copy_file(in, copy, pipe_out ? JITANON_PERF_PIPE : JITANON_PERF_SAME_MODE, NULL, &err) !=
        JITANON_OK)
        return fail(in, &err);
    return 0;
}
