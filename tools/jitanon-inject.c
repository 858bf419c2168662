/* jitanon-inject: a drop-in for `perf inject --jit` that trims coalesced //anon mmaps to
   the parts that do not cover jitted code, instead of dropping them.

   jitanon-inject [-i IN] [-o OUT] [-j] [-f] [-v] [--anon=range|all|keep]
                  [--elf=function|process] [--elf-dir DIR] [--jitdump-dir DIR]
                  [--elf-files=auto|all|sampled] [--late=auto|name|keep] [--late-window MS]
                  [--threads N] [-N] [--buildid-dir DIR] [--stats] [--strict]  */
#ifndef _GNU_SOURCE /* (g++ defines it) */
#define _GNU_SOURCE
#endif
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "inject_cli.h"
#include "cli_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct cli {
    int stats;
    uint64_t total;
    int progress;
    struct timespec start, last;
    const jitanon_inject_stats *st; /* updated as the run goes */
} cli;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jitanon-inject -i perf.data -o perf.jit.data   (perf inject --jit, trimming //anon)\n"
            "       perf record -k mono -o - -- CMD | jitanon-inject | perf report -i -\n"
            "  -i, --input FILE        perf.data to read (default -: stdin; -z recordings too)\n"
            "  -o, --output FILE       perf.data to write (default -: stdout, pipe mode; not a\n"
            "                          terminal); written atomically, never over the input\n"
            "  -j, --jit, -f, --force  accepted for compatibility with perf inject\n"
            INJECT_CLI_HELP
            "      --help, --version   every option: man jitanon-inject (or man doc/jitanon-inject.1)\n");
}

/* Problems (an unreadable dump, a refused file) are always worth a line. */
static void on_log(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "jitanon-inject: %s\n", msg);
}

static double seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* At most a few updates a second: bytes done of total and the rate so far. */
static void on_progress(void *user, uint64_t done)
{
    cli *c = (cli *)user;
    struct timespec now;
    double elapsed;
    if (!c->progress) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (seconds(&c->last, &now) < 0.25) return;
    c->last = now;
    elapsed = seconds(&c->start, &now);
    fprintf(stderr, "\rjitanon-inject: %" PRIu64 " of %" PRIu64 " MB (%.0f%%), %.0f MB/s, %" PRIu64 " ELF files, %" PRIu64
            " cached  ", done >> 20, c->total >> 20, c->total ? 100.0 * (double)done / (double)c->total : 0.0,
            elapsed > 0 ? (double)done / 1048576.0 / elapsed : 0.0, c->st->elf.files, c->st->buildid.cached);
}

static void print_stats(const jitanon_inject_stats *s)
{
    fprintf(stderr,
            "records in %" PRIu64 ", out %" PRIu64 " (samples %" PRIu64 ")\n"
            "jitdumps: markers %" PRIu64 ", loaded %" PRIu64 ", unusable %" PRIu64 "; loads %" PRIu64
            ", moves %" PRIu64 "; mmaps synthesized %" PRIu64 "\n"
            "anon mmaps of jitdump processes: kept %" PRIu64 ", split %" PRIu64 " (into %" PRIu64
            " pieces), dropped %" PRIu64 "\n"
            "ELF files %" PRIu64 " (%" PRIu64 " bytes), refused %" PRIu64 "; rounds %" PRIu64
            ", largest %" PRIu64 " bytes\n",
            s->read.records, s->write.records, s->read.samples, s->dumps.markers, s->dumps.loaded, s->dumps.failed,
            s->trim.loads, s->trim.moves, s->write.mmaps_synthesized, s->trim.kept, s->trim.split, s->trim.pieces,
            s->trim.dropped, s->elf.files, s->elf.bytes, s->elf.refused, s->read.rounds, s->read.largest_round_bytes);
    if (s->late.loads)
        fprintf(stderr, "late: %" PRIu64 " functions mapped before their load record, %" PRIu64 " samples named so\n",
                s->late.loads, s->late.samples);
    if (s->write.region_bases || s->write.region_claims)
        fprintf(stderr, "region files: %" PRIu64 " slices framed by their file's base; %" PRIu64
                " functions mapped with the memory they load into, %" PRIu64 " of them taken back\n",
                s->write.region_bases, s->write.region_claims, s->write.region_repairs);
    if (s->dumps.stopped)
        fprintf(stderr, "jitdumps that stopped before their process's samples did %" PRIu64 ": %" PRIu64
                " samples in JIT memory after their last record stay unnamed (named above)\n",
                s->dumps.stopped, s->dumps.samples_after_end);
    if (s->dumps.clock_fixed)
        fprintf(stderr, "jitdumps flagged as TSC whose times were CLOCK_MONOTONIC, read as such: %" PRIu64
                " (named above)\n", s->dumps.clock_fixed);
    if (s->dumps.debug_unmatched)
        fprintf(stderr, "debug records that matched no load: %" PRIu64 "\n", s->dumps.debug_unmatched);
    fprintf(stderr, "build-ids listed %" PRIu64 "; build-id cache: %" PRIu64 " files added or already there, %" PRIu64
            " failed\n", s->buildid.entries, s->buildid.cached, s->buildid.cache_failed);
    if (s->perf_map.maps)
        fprintf(stderr, "perf maps: %" PRIu64 " read, %" PRIu64 " entries into stubs, %" PRIu64
                " lines skipped; %" PRIu64 " mmaps name a stub\n",
                s->perf_map.maps, s->perf_map.entries, s->perf_map.bad_lines, s->perf_map.mmaps);
    if (s->follow.dumps)
        fprintf(stderr, "live: %" PRIu64 " jitdumps followed as they grew, read again %" PRIu64
                " times; waited %.1f ms in all\n", s->follow.dumps, s->follow.reads, (double)s->follow.wait_ns / 1e6);
    if (s->follow.dumps)
        fprintf(stderr, "held back: %" PRIu64 " rounds, at most %.1f MiB and %.0f ms, bound reached %" PRIu64
                " times; samples in JIT memory unnamed: past the bound %" PRIu64 ", JIT stopped writing %" PRIu64
                ", no jitdump %" PRIu64 ", not in the jitdump %" PRIu64 "\n",
                s->hold.rounds, (double)s->hold.peak_bytes / 1048576.0, (double)s->hold.max_delay_ns / 1e6,
                s->hold.bound_hits, s->unnamed.past_bound, s->unnamed.stopped, s->unnamed.no_dump,
                s->unnamed.not_in_dump);
    if (s->dumps.in_namespace)
        fprintf(stderr, "jitdumps read inside their process's root (another mount namespace: a container) %" PRIu64
                " (named above)\n", s->dumps.in_namespace);
    if (s->fallbacks) fprintf(stderr, "fallbacks %#" PRIx64 " (see the messages above)\n", s->fallbacks);
    if (s->dumps.damaged || s->read.warnings)
        fprintf(stderr,
                "damaged input used: jitdumps %" PRIu64 " (loads kept %" PRIu64 ", bytes ignored %" PRIu64
                "); perf.data warnings %#" PRIx64 " (bytes ignored %" PRIu64 ")\n",
                s->dumps.damaged, s->dumps.damaged_loads_kept, s->dumps.bytes_ignored, s->read.warnings,
                s->read.bytes_ignored);
}

/* The input is never modified: refuse to write over it. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, "-") || !strcmp(b, "-")) return 0;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int main(int argc, char **argv)
{
    const char *in = "-", *out = "-", *v;
    inject_cli ic;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_result r;
    cli c;
    int i;
    struct stat sb;
    inject_cli_init(&ic);
    memset(&c, 0, sizeof c);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = inject_cli_arg(&ic, "jitanon-inject", argc, argv, &i);
        if (k < 0) return 2;
        if (k > 0) continue;
        if ((v = inject_cli_value(argc, argv, &i, "--input", "-i"))) in = v;
        else if ((v = inject_cli_value(argc, argv, &i, "--output", "-o"))) out = v;
        else if (!strcmp(a, "-j") || !strcmp(a, "--jit") || !strcmp(a, "-f") || !strcmp(a, "--force")) {
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), 0;
        else if (!strcmp(a, "--version")) return printf("jitanon-inject %s\n", JITANON_VERSION_STRING), 0;
        else return fprintf(stderr, "jitanon-inject: unknown option '%s' (--help lists them)\n", a), 2;
    }
    c.stats = ic.stats;
    /* Binary perf.data on a terminal is garbage on the screen and a confused terminal. */
    if (!strcmp(out, "-") && isatty(1))
        return fprintf(stderr, "jitanon-inject: refusing to write binary perf.data to a terminal: give -o FILE, "
                               "or pipe it: jitanon-inject -i %s | perf report -i -\n",
                       strcmp(in, "-") ? in : "perf.data"),
               2;
    if (!strcmp(in, "-") && isatty(0))
        return fprintf(stderr, "jitanon-inject: no input: give -i perf.data, or pipe a recording in "
                               "(perf record -o - ... | jitanon-inject ...); --help for more\n"),
               2;
    /* The OS's reason for an input that cannot be read, said the way the OS says it. */
    if (cli_file("jitanon-inject", in, CLI_INPUT, "a recording (-i DIR/perf.data)") != 0) return 1;
    if (strcmp(in, "-") && stat(in, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0)
        return fprintf(stderr, "jitanon-inject: %s is empty: perf record wrote nothing into it (its message says why)\n",
                       in), 1;
    /* ... and for the output, whose directory must take a new file */
    if (cli_file("jitanon-inject", out, CLI_OUTPUT, NULL) != 0) return 1;
    if (same_file(in, out)) return fprintf(stderr, "jitanon-inject: refusing to overwrite the input %s\n", in), 2;
    if (inject_cli_finish(&ic, "jitanon-inject") != 0) return 1;
    /* Progress only for people watching: a terminal, and an input large enough to wait for. */
    c.progress = isatty(2) && strcmp(in, "-") && stat(in, &sb) == 0 && sb.st_size > (64 << 20);
    if (c.progress) {
        c.total = (uint64_t)sb.st_size;
        clock_gettime(CLOCK_MONOTONIC, &c.start);
        c.last = c.start;
    }
    c.st = &st;
    memset(&st, 0, sizeof st);
    ic.o.io.log = on_log;
    ic.o.io.progress = on_progress;
    ic.o.io.user = &c;
    r = jitanon_inject_file(in, out, JITANON_PERF_SAME_MODE, &ic.o, &ic.po, &st, &err);
    if (c.progress) fprintf(stderr, "\n");
    inject_cli_release(&ic);
    if (r != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        /* the input named first; a problem in another file (a jitdump) names that too */
        if (r == JITANON_ERR_TRUNCATED && !err.offset && !strcmp(in, "-") && !strcmp(err.source, "perf.data"))
            fprintf(stderr, "jitanon-inject: nothing came in on stdin: pipe a recording in (perf record -o - ... | "
                            "jitanon-inject ...), or give -i perf.data\n");
        else if (err.source[0] && strcmp(err.source, "perf.data") != 0)
            fprintf(stderr, "jitanon-inject: %s: %s: %s\n", in, err.source, msg);
        else
            fprintf(stderr, "jitanon-inject: %s: %s\n", in, msg);
        return 1;
    }
    if (c.stats) print_stats(&st);
    /* Nothing to do is worth a sentence when the recording has JIT code (executable
       anonymous memory) but no process said where its jitdump is. */
    if (!st.dumps.markers && st.trim.untrimmed)
        fprintf(stderr, "jitanon-inject: note: no jitdump in %s (no process mapped one): its JIT code is named by "
                        "perf maps at most; a runtime writes one when started with its flag (node --perf-prof, deno "
                        "--v8-flags=--perf-prof, python3.13 -X perf_jit, BUN_JSC_useJITDump=1, java "
                        "-agentpath:libjitanon-jvmti.so; jitanon-record adds them)\n",
                strcmp(in, "-") ? in : "the input");
    return 0;
}
