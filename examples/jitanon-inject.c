/* jitanon-inject: a drop-in for `perf inject --jit` that trims coalesced //anon mmaps to
   the parts that do not cover jitted code, instead of dropping them.

   jitanon-inject [-i IN] [-o OUT] [-j] [-f] [-v] [--anon=range|all|keep]
                  [--elf=function|process] [--elf-dir DIR] [--jitdump-dir DIR]
                  [--elf-files=auto|all|sampled] [--late=auto|name|keep] [--late-window MS]
                  [--threads N] [-N] [--buildid-dir DIR] [--stats] [--strict]  */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

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
            "usage: jitanon-inject [options]\n"
            "  -i, --input FILE        perf.data to read (default '-': stdin)\n"
            "                          (perf record -z input is read too: the output is\n"
            "                          written uncompressed)\n"
            "  -o, --output FILE       perf.data to write (default '-': stdout, pipe mode)\n"
            "  -j, --jit               accepted for compatibility with perf inject (always on)\n"
            "  -f, --force             accepted for compatibility with perf inject\n"
            "  -v, --verbose           same as --stats\n"
            "      --anon=MODE         range (default): trim //anon, [anon: and /memfd: mmaps to what\n"
            "                          does not cover jitted code; all: drop them (perf's way);\n"
            "                          keep: strip nothing\n"
            "      --elf=LAYOUT        function (default): jitted-<pid>-<index>.so per function;\n"
            "                          process: one jitted-<pid>.so per process\n"
            "      --elf-dir DIR       write ELF files to DIR (default: next to each jitdump)\n"
            "      --elf-files=WHICH   auto (default): sampled for file output, else all;\n"
            "                          sampled: only the files an address of a sample lands in\n"
            "                          (ip, callchain, data address, branch stack, and for dwarf\n"
            "                          call graphs any word of the user stack and registers): the\n"
            "                          only ones perf report opens (not for pipes: all then);\n"
            "                          all: a file for every function, as perf inject\n"
            "      --jitdump-dir DIR   look for jit-<pid>.dump in DIR when the recorded path fails\n"
            "      --late=MODE         auto (default): name as below on file input, else keep;\n"
            "                          name: samples that ran in a function shortly before the JIT\n"
            "                          wrote its load record are named after it, when nothing else\n"
            "                          was ever described at those addresses (file input only);\n"
            "                          keep: a function is mapped from its load record on (perf)\n"
            "      --late-window MS    how long before its load record a function may be named\n"
            "                          (default 100 ms)\n"
            "      --line-bias=B       subtract B from debug-info addresses: auto (default; detected\n"
            "                          per dump: V8 and LLVM JITs add 0x40), none, or bytes (0x40)\n"
            "      --threads N         threads creating per-function ELF files (default: one per\n"
            "                          online CPU, at most 8; 0: write them in the main thread)\n"
            "  -N, --no-buildid-cache  do not add the ELF files to perf's build-id cache\n"
            "      --buildid-dir DIR   the build-id cache (default: $PERF_BUILDID_DIR, perf's\n"
            "                          buildid.dir config, ~/.debug)\n"
            "      --stats             print counters on stderr when done\n"
            "      --strict            refuse damaged input (a jitdump or perf.data cut short or\n"
            "                          with garbage, a killed recording) instead of using its\n"
            "                          valid part with a warning\n"
            "      --help, --version\n");
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
            elapsed > 0 ? (double)done / 1048576.0 / elapsed : 0.0, c->st->elf_files, c->st->buildid_cached);
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
            s->records_in, s->records_out, s->samples, s->markers, s->dumps_loaded, s->dumps_failed, s->loads, s->moves,
            s->mmaps_synthesized, s->anon_kept, s->anon_split, s->anon_pieces, s->anon_dropped, s->elf_files, s->elf_bytes,
            s->elf_refused, s->rounds, s->largest_round_bytes);
    if (s->late_loads)
        fprintf(stderr, "late: %" PRIu64 " functions mapped before their load record, %" PRIu64 " samples named so\n",
                s->late_loads, s->late_samples);
    fprintf(stderr, "build-ids listed %" PRIu64 "; build-id cache: %" PRIu64 " files added or already there, %" PRIu64
            " failed\n", s->buildid_entries, s->buildid_cached, s->buildid_cache_failed);
    if (s->fallbacks) fprintf(stderr, "fallbacks %#" PRIx64 " (see the messages above)\n", s->fallbacks);
    if (s->dumps_damaged || s->input_warnings)
        fprintf(stderr,
                "damaged input used: jitdumps %" PRIu64 " (loads kept %" PRIu64 ", bytes ignored %" PRIu64
                "); perf.data warnings %#" PRIx64 " (bytes ignored %" PRIu64 ")\n",
                s->dumps_damaged, s->damaged_loads_kept, s->jitdump_bytes_ignored, s->input_warnings,
                s->input_bytes_ignored);
}

/* The input is never modified: refuse to write over it. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, "-") || !strcmp(b, "-")) return 0;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static const char *arg_value(int argc, char **argv, int *i, const char *longname, const char *shortname)
{
    size_t n = strlen(longname);
    if (!strncmp(argv[*i], longname, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
    if ((!strcmp(argv[*i], longname) || (shortname && !strcmp(argv[*i], shortname))) && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *in = "-", *out = "-", *v;
    jitanon_inject_opts o;
    jitanon_inject_stats st;
    jitanon_error err;
    jitanon_result r;
    cli c;
    jitanon_buildid_cache cache;
    jitanon_perf_opts po;
    const char *cache_dir = NULL;
    int i, no_cache = 0;
    long threads = -1;
    struct stat sb;
    memset(&o, 0, sizeof o);
    memset(&c, 0, sizeof c);
    memset(&po, 0, sizeof po);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((v = arg_value(argc, argv, &i, "--input", "-i"))) in = v;
        else if ((v = arg_value(argc, argv, &i, "--output", "-o"))) out = v;
        else if ((v = arg_value(argc, argv, &i, "--elf-dir", NULL))) o.elf_dir = v;
        else if ((v = arg_value(argc, argv, &i, "--jitdump-dir", NULL))) o.jitdump_dir = v;
        else if ((v = arg_value(argc, argv, &i, "--late", NULL))) {
            if (!strcmp(v, "auto")) o.late = JITANON_LATE_AUTO;
            else if (!strcmp(v, "keep")) o.late = JITANON_LATE_KEEP;
            else if (!strcmp(v, "name")) o.late = JITANON_LATE_NAME;
            else return fprintf(stderr, "jitanon-inject: --late takes auto, name or keep\n"), 2;
        } else if ((v = arg_value(argc, argv, &i, "--late-window", NULL))) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || n == 0 || n > 3600000)
                return fprintf(stderr, "jitanon-inject: --late-window takes 1 to 3600000 (milliseconds)\n"), 2;
            o.late_window_ns = (uint64_t)n * 1000000u;
        } else if ((v = arg_value(argc, argv, &i, "--buildid-dir", NULL))) cache_dir = v;
        else if ((v = arg_value(argc, argv, &i, "--threads", NULL))) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || n > 64) return fprintf(stderr, "jitanon-inject: --threads takes 0 to 64\n"), 2;
            threads = (long)n;
        }
        else if ((v = arg_value(argc, argv, &i, "--anon", NULL))) {
            if (!strcmp(v, "range")) o.anon_mode = JITANON_ANON_RANGE;
            else if (!strcmp(v, "all")) o.anon_mode = JITANON_ANON_ALL;
            else if (!strcmp(v, "keep")) o.anon_mode = JITANON_ANON_KEEP;
            else return fprintf(stderr, "jitanon-inject: --anon takes range, all or keep\n"), 2;
        } else if ((v = arg_value(argc, argv, &i, "--elf", NULL))) {
            if (!strcmp(v, "function")) o.elf_layout = JITANON_ELF_PER_FUNCTION;
            else if (!strcmp(v, "process")) o.elf_layout = JITANON_ELF_PER_PROCESS;
            else return fprintf(stderr, "jitanon-inject: --elf takes function or process\n"), 2;
        } else if ((v = arg_value(argc, argv, &i, "--elf-files", NULL))) {
            if (!strcmp(v, "auto")) o.elf_files = JITANON_ELF_FILES_AUTO;
            else if (!strcmp(v, "all")) o.elf_files = JITANON_ELF_FILES_ALL;
            else if (!strcmp(v, "sampled")) o.elf_files = JITANON_ELF_FILES_SAMPLED;
            else return fprintf(stderr, "jitanon-inject: --elf-files takes auto, all or sampled\n"), 2;
        } else if ((v = arg_value(argc, argv, &i, "--line-bias", NULL))) {
            char *end;
            unsigned long n = strtoul(v, &end, 0);
            if (!strcmp(v, "auto")) o.elf.line_bias = JITANON_ELF_LINE_BIAS_AUTO;
            else if (!strcmp(v, "none") || (*v && !*end && n == 0)) o.elf.line_bias = JITANON_ELF_LINE_BIAS_NONE;
            else if (*v && !*end && n < JITANON_ELF_LINE_BIAS_NONE) o.elf.line_bias = (uint32_t)n;
            else return fprintf(stderr, "jitanon-inject: --line-bias takes auto, none or a byte count\n"), 2;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jit") || !strcmp(a, "-f") || !strcmp(a, "--force")) {
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) c.stats = 1;
        else if (!strcmp(a, "--stats")) c.stats = 1;
        else if (!strcmp(a, "-N") || !strcmp(a, "--no-buildid-cache")) no_cache = 1;
        else if (!strcmp(a, "--strict")) o.jitdump.strict = po.strict = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), 0;
        else if (!strcmp(a, "--version")) return printf("jitanon-inject %s\n", JITANON_VERSION_STRING), 0;
        else return fprintf(stderr, "jitanon-inject: unknown option '%s'\n", a), usage(stderr), 2;
    }
    if (same_file(in, out)) return fprintf(stderr, "jitanon-inject: refusing to overwrite the input %s\n", in), 2;
    /* A directory named on the command line is one the user wants: create it. */
    if (o.elf_dir && mkdir(o.elf_dir, 0755) != 0 && errno != EEXIST)
        return fprintf(stderr, "jitanon-inject: cannot create %s: %s\n", o.elf_dir, strerror(errno)), 1;
    /* Progress only for people watching: a terminal, and an input large enough to wait for. */
    c.progress = isatty(2) && strcmp(in, "-") && stat(in, &sb) == 0 && sb.st_size > (64 << 20);
    if (c.progress) {
        c.total = (uint64_t)sb.st_size;
        clock_gettime(CLOCK_MONOTONIC, &c.start);
        c.last = c.start;
    }
    /* Creating the files is the kernel's work, and it runs on every CPU at once.  A
       per-process file is one write: threads there only when asked for (and reported). */
    if (threads < 0 && o.elf_layout == JITANON_ELF_PER_PROCESS) threads = 0;
    if (threads < 0) {
        threads = sysconf(_SC_NPROCESSORS_ONLN);
        threads = threads < 1 ? 1 : threads > 8 ? 8 : threads;
    }
    o.elf_threads = (uint32_t)threads;
    /* As perf inject --jit: the files go into the build-id cache too, so that the profile
       still reads once they are gone.  A cache that cannot be opened costs only that. */
    if (!no_cache && jitanon_buildid_cache_open(&cache, cache_dir, &err) == JITANON_OK)
        o.buildid_cache = &cache;
    else if (!no_cache) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitanon-inject: warning: %s: ELF files are not cached (-N skips the cache)\n", msg);
    }
    c.st = &st;
    memset(&st, 0, sizeof st);
    o.io.log = on_log;
    o.io.progress = on_progress;
    o.io.user = &c;
    r = jitanon_inject_file(in, out, JITANON_PERF_SAME_MODE, &o, &po, &st, &err);
    if (c.progress) fprintf(stderr, "\n");
    if (o.buildid_cache) jitanon_buildid_cache_release(o.buildid_cache);
    if (r != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "jitanon-inject: %s: %s\n", in, msg);
        return 1;
    }
    if (c.stats) print_stats(&st);
    return 0;
}
