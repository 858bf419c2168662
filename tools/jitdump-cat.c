/* jitdump-cat: print a jitdump file - header and one line per record - or a summary, or
   a list of format problems.  Reads through the streaming reader, so memory stays bounded
   by the largest record (plus 32 bytes per LOAD with --check).

   usage: jitdump-cat [--summary | --check] FILE|-          */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "cli_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

typedef struct load_span {
    uint64_t start, end, index, time;
} load_span;

typedef struct check_state {
    load_span *loads;
    size_t nloads, cap;
    uint64_t pending_debug_addr, prev_time, problems;
    int have_pending_debug, v8;
    uint64_t debug_outside, debug_biased;
} check_state;

static size_t read_file(void *user, void *dst, size_t size)
{
    FILE *f = (FILE *)user;
    size_t n = fread(dst, 1, size, f);
    if (n == 0 && ferror(f)) return SIZE_MAX;
    return n;
}

static void print_header(const jitanon_jitdump_header *h)
{
    printf("header: version %" PRIu32 " size %" PRIu32 " elf_mach %" PRIu32 " pad1 0x%" PRIx32 " pid %" PRIu32
           " timestamp %" PRIu64 " flags 0x%" PRIx64 " %s%s\n",
           h->version, h->total_size, h->elf_mach, h->pad1, h->pid, h->timestamp, h->flags,
           h->big_endian ? "big-endian" : "little-endian", h->arch_timestamp ? " arch-timestamps" : "");
}

static void print_record(const jitanon_jitdump_record *r)
{
    printf("%8" PRIu64 " %-14s t=%" PRIu64, r->offset, jitanon_jitdump_record_name(r->id), r->timestamp);
    switch (r->id) {
    case JITANON_JITDUMP_CODE_LOAD:
        printf(" pid %" PRIu32 " tid %" PRIu32 " addr 0x%" PRIx64 " size %" PRIu64 " index %" PRIu64 " %.*s\n",
               r->load.pid, r->load.tid, r->load.code_addr, r->load.code_size, r->load.code_index,
               (int)r->load.name.length, r->load.name.data);
        break;
    case JITANON_JITDUMP_CODE_MOVE:
        printf(" pid %" PRIu32 " tid %" PRIu32 " 0x%" PRIx64 " -> 0x%" PRIx64 " size %" PRIu64 " index %" PRIu64 "\n",
               r->move.pid, r->move.tid, r->move.old_code_addr, r->move.new_code_addr, r->move.code_size,
               r->move.code_index);
        break;
    case JITANON_JITDUMP_CODE_DEBUG_INFO: {
        jitanon_jitdump_debug_iter it;
        jitanon_jitdump_debug_entry e;
        printf(" addr 0x%" PRIx64 " entries %" PRIu64, r->debug.code_addr, r->debug.nr_entry);
        jitanon_jitdump_debug_iter_begin(&it, r);
        if (jitanon_jitdump_debug_iter_next(&it, &e))
            printf(" first %.*s:%" PRId32 ":%" PRId32 " @0x%" PRIx64, (int)e.file.length, e.file.data, e.lineno,
                   e.discrim, e.addr);
        printf("\n");
        break;
    }
    case JITANON_JITDUMP_CODE_UNWINDING_INFO:
        printf(" unwinding %" PRIu64 " eh_frame_hdr %" PRIu64 " mapped %" PRIu64 "\n", r->unwind.unwinding_size,
               r->unwind.eh_frame_hdr_size, r->unwind.mapped_size);
        break;
    default:
        printf(" size %" PRIu32 "\n", r->total_size);
    }
}

static void problem(check_state *c, const jitanon_jitdump_record *r, const char *what)
{
    c->problems++;
    if (c->problems <= 50) printf("problem at byte %" PRIu64 " (record %" PRIu64 "): %s\n", r->offset, r->index, what);
}

static void check_record(check_state *c, const jitanon_jitdump_record *r)
{
    if (r->index > 0 && r->timestamp < c->prev_time) problem(c, r, "timestamp goes backwards");
    c->prev_time = r->timestamp;
    if (r->id == JITANON_JITDUMP_CODE_DEBUG_INFO) {
        jitanon_jitdump_debug_iter it;
        jitanon_jitdump_debug_entry e;
        if (c->have_pending_debug) problem(c, r, "DEBUG_INFO replaces an earlier one that no LOAD used");
        c->have_pending_debug = 1;
        c->pending_debug_addr = r->debug.code_addr;
        jitanon_jitdump_debug_iter_begin(&it, r);
        while (jitanon_jitdump_debug_iter_next(&it, &e))
            if (e.addr < r->debug.code_addr) c->debug_outside++;
    }
    if (r->id == JITANON_JITDUMP_CODE_LOAD) {
        if (c->have_pending_debug && c->pending_debug_addr != r->load.code_addr)
            problem(c, r, "LOAD follows a DEBUG_INFO for a different code_addr");
        c->have_pending_debug = 0;
        if (c->nloads == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 1024;
            c->loads = (load_span *)realloc(c->loads, c->cap * sizeof *c->loads);
            if (!c->loads) exit(3);
        }
        c->loads[c->nloads].start = r->load.code_addr;
        c->loads[c->nloads].end = r->load.code_addr + r->load.code_size;
        c->loads[c->nloads].index = r->load.code_index;
        c->loads[c->nloads].time = r->timestamp;
        c->nloads++;
        if (r->load.code_addr + r->load.code_size < r->load.code_addr) problem(c, r, "code range wraps around");
    }
}

static int by_start(const void *a, const void *b)
{
    const load_span *x = (const load_span *)a, *y = (const load_span *)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time;
}

static void check_finish(check_state *c, const jitanon_jitdump_header *h)
{
    size_t i, overlaps = 0, dup_index = 0;
    uint64_t end = 0;
    if (c->nloads > 1) qsort(c->loads, c->nloads, sizeof *c->loads, by_start); /* loads is NULL without any */
    for (i = 0; i < c->nloads; i++) {
        if (i > 0 && c->loads[i].start < end) overlaps++;
        if (c->loads[i].end > end) end = c->loads[i].end;
    }
    for (i = 1; i < c->nloads; i++)
        if (c->loads[i].start == c->loads[i - 1].start && c->loads[i].index == c->loads[i - 1].index) dup_index++;
    if (overlaps)
        printf("problem: %zu LOAD(s) overlap code loaded earlier (code space reused without MOVE or unload; "
               "the later load wins)\n", overlaps);
    if (dup_index) printf("problem: %zu LOAD(s) repeat an address and code_index\n", dup_index);
    if (c->have_pending_debug) printf("problem: the last DEBUG_INFO is not followed by a LOAD\n");
    if (c->debug_outside) printf("note: %" PRIu64 " debug entries lie below their function's code_addr\n", c->debug_outside);
    if (h->pad1 == 0xDEADBEEFu)
        printf("quirk: pad1 is 0xDEADBEEF (V8/node): header timestamp is wall-clock microseconds and debug "
               "entry addresses carry a +0x40 bias\n");
    if (h->version == 2) printf("quirk: header version 2 (old Mono); read as version 1\n");
    if (h->total_size > 40) printf("quirk: header is %" PRIu32 " bytes; the extension was skipped\n", h->total_size);
#if !defined(__x86_64__)
    if (h->elf_mach == 62) printf("quirk: elf_mach is EM_X86_64 on a non-x86-64 host (Erlang writes it everywhere)\n");
#endif
    if (h->arch_timestamp) printf("note: timestamps are raw arch counters; perf.data needs TIME_CONV\n");
    free(c->loads);
}

static void print_summary(const jitanon_jitdump_stats *st)
{
    int i;
    for (i = 0; i < JITANON_JITDUMP_CODE_MAX; i++) printf("%-16s %" PRIu64 "\n", jitanon_jitdump_record_name((uint32_t)i), st->by_id[i]);
    printf("%-16s %" PRIu64 "\n", "UNKNOWN", st->unknown);
    printf("%-16s %" PRIu64 "\n", "code_bytes", st->code_bytes);
    printf("%-16s %" PRIu64 " .. %" PRIu64 "\n", "time_range", st->first_time, st->last_time);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jitdump-cat [--summary | --check] FILE|-\n"
               "  (default)     the header, then one line per record: offset, type, time, fields, name\n"
               "  --summary     the header and a count per record type, code bytes, time range\n"
               "  --check       the header and the format problems found (at most 50 listed)\n"
               "  -h, --help    this text; every option: man jitdump-cat (or man doc/jitdump-cat.1)\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int summary = 0, check = 0, i, rc = 0;
    FILE *f;
    jitanon_jitdump_stream s;
    jitanon_jitdump_record rec;
    jitanon_error err;
    jitanon_result r;
    check_state cs;
    memset(&cs, 0, sizeof cs);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--summary")) summary = 1;
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), 0;
        else if (argv[i][0] == '-' && argv[i][1])
            return fprintf(stderr, "jitdump-cat: unknown option %s\n", argv[i]), usage(stderr), 2;
        else if (path) return fprintf(stderr, "jitdump-cat: one jitdump only (%s, %s)\n", path, argv[i]), 2;
        else path = argv[i];
    }
    if (!path) return usage(stderr), 2;
    /* the OS's reason for a file that cannot be read */
    if (cli_file("jitdump-cat", path, CLI_INPUT, "a jitdump (DIR/jit-<pid>.dump)") != 0) return 1;
    f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return fprintf(stderr, "jitdump-cat: cannot open %s: %s\n", path, strerror(errno)), 1;
    jitanon_jitdump_stream_init(&s, read_file, f, NULL, &err);
    while ((r = jitanon_jitdump_stream_next(&s, &rec, &err)) == JITANON_OK) {
        if (rec.index == 0 && !summary && !check) print_header(&s.header);
        if (!summary && !check) print_record(&rec);
        if (check) check_record(&cs, &rec);
    }
    if (r == JITANON_AGAIN && s.have_header && s.pending == 0) {
        r = JITANON_END; /* clean end of file */
    } else if (r == JITANON_AGAIN) {
        if (!s.have_header) fprintf(stderr, "jitdump-cat: %s: truncated header (%zu bytes)\n", path, s.pending);
        else fprintf(stderr, "jitdump-cat: %s: truncated tail at byte %" PRIu64 ": record %" PRIu64 " incomplete (%zu bytes present)\n",
                     path, s.consumed, s.next_index, s.pending);
        rc = 1;
    } else {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitdump-cat: %s: %s\n", path, msg);
        rc = 1;
    }
    if (s.have_header && (summary || check)) print_header(&s.header);
    /* Without a header nothing was read: no table of zeros.  After an error the table
       counts what came before it, and says so. */
    if (summary && s.have_header) {
        if (rc) printf("summary of the %" PRIu64 " record(s) before the error:\n", s.next_index);
        print_summary(&s.stats);
    }
    if (check && s.have_header) {
        check_finish(&cs, &s.header);
        printf("%" PRIu64 " record(s), %" PRIu64 " problem(s) listed\n", s.next_index, cs.problems);
    } else free(cs.loads);
    jitanon_jitdump_stream_release(&s);
    if (f != stdin) fclose(f);
    return rc;
}
