/* inject_cli.h: the injection options shared by the tools' command lines
   (jitanon-inject and jitanon-record take the same ones, parsed and explained here once).
   Not part of jitanon.h; include it after jitanon.h.

       inject_cli ic;
       inject_cli_init(&ic);
       for (i = 1; i < argc; i++) {
           int k = inject_cli_arg(&ic, "jitanon-inject", argc, argv, &i);
           if (k < 0) return 2;          // a bad value: the message is printed
           if (k > 0) continue;          // one of ours
           ...                           // the tool's own options
       }
       if (inject_cli_finish(&ic, "jitanon-inject") != 0) return 1;   // --elf-dir, threads, cache
       ... jitanon_inject_file(in, out, mode, &ic.o, &ic.po, &st, &err) ...
       inject_cli_release(&ic); */
#ifndef INJECT_CLI_H
#define INJECT_CLI_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct inject_cli {
    jitanon_inject_opts o;
    jitanon_perf_opts po;
    jitanon_buildid_cache cache;
    const char *cache_dir;
    int no_cache, stats;
    int elf_files_set; /* --elf-files was given (a tool may pick another default) */
    int perf_map_set;  /* --perf-map was given (the same) */
    long threads;
    char elf_dir_abs[PATH_MAX]; /* --elf-dir made absolute */
} inject_cli;

/* The lines of --help for these options, common ones first (all of them in the man page). */
#define INJECT_CLI_HELP                                                                             \
    "      --anon=MODE         range (default): trim //anon to what is not jitted; all; keep\n"    \
    "      --elf=LAYOUT        region (default since 0.6: few files), function (perf's), process\n" \
    "      --elf-dir DIR       write the ELF files to DIR (default: next to each jitdump)\n"       \
    "      --elf-files=WHICH   auto (default: the ones samples can reach; pipes: all), all\n"      \
    "      --jitdump-dir DIR   look for jit-<pid>.dump in DIR when the recorded path fails\n"      \
    "      --late=MODE         auto (default), name: samples shortly before their load; keep\n"  \
    "      --late-window MS    how early a sample may be named so (default 100)\n"                 \
    "      --perf-map=elf      carry /tmp/perf-<pid>.map names in an ELF (default: keep)\n"        \
    "      --follow-wait MS    pipe input: wait at most MS for a JIT still writing (10)\n"         \
    "      --hold-back MIB     pipe input: hold what a jitdump has not reached (64; 0: never)\n" \
    "      --follow-idle MS    pipe input: a jitdump not grown for MS is done (default 60000)\n"  \
    "      --line-bias=B       auto (default), none, or bytes to subtract from line addresses\n"   \
    "      --threads N         threads writing ELF files (default: CPUs, at most 8)\n"             \
    "  -N, --no-buildid-cache  do not add the ELF files to perf's build-id cache\n"                \
    "      --buildid-dir DIR   the build-id cache (default: $PERF_BUILDID_DIR, ~/.debug)\n"        \
    "      --strict            refuse damaged input instead of using its valid part\n"             \
    "      --stats             print the injector's counters when done (-v: the same)\n"

static void inject_cli_init(inject_cli *c)
{
    memset(c, 0, sizeof *c);
    c->threads = -1;
}

static const char *inject_cli_value(int argc, char **argv, int *i, const char *longname, const char *shortname)
{
    size_t n = strlen(longname);
    if (!strncmp(argv[*i], longname, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
    if ((!strcmp(argv[*i], longname) || (shortname && !strcmp(argv[*i], shortname))) && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* 1: argv[*i] (and its value) was an injection option; 0: not one; -1: a bad value
   (said on stderr, prefixed with `tool`). */
static int inject_cli_arg(inject_cli *c, const char *tool, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    jitanon_inject_opts *o = &c->o;
    if ((v = inject_cli_value(argc, argv, i, "--elf-dir", NULL))) o->elf_dir = v;
    else if ((v = inject_cli_value(argc, argv, i, "--jitdump-dir", NULL))) o->jitdump_dir = v;
    else if ((v = inject_cli_value(argc, argv, i, "--late", NULL))) {
        if (!strcmp(v, "auto")) o->late = JITANON_LATE_AUTO;
        else if (!strcmp(v, "keep")) o->late = JITANON_LATE_KEEP;
        else if (!strcmp(v, "name")) o->late = JITANON_LATE_NAME;
        else return fprintf(stderr, "%s: --late takes auto, name or keep\n", tool), -1;
    } else if ((v = inject_cli_value(argc, argv, i, "--late-window", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || n == 0 || n > 3600000)
            return fprintf(stderr, "%s: --late-window takes 1 to 3600000 (milliseconds)\n", tool), -1;
        o->late_window_ns = (uint64_t)n * 1000000u;
    } else if ((v = inject_cli_value(argc, argv, i, "--follow-wait", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || n > 60000)
            return fprintf(stderr, "%s: --follow-wait takes 0 to 60000 (milliseconds)\n", tool), -1;
        o->follow_wait_us = n ? (uint32_t)n * 1000u : JITANON_FOLLOW_WAIT_NONE;
    } else if ((v = inject_cli_value(argc, argv, i, "--hold-back", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || n > 65536)
            return fprintf(stderr, "%s: --hold-back takes 0 to 65536 (MiB)\n", tool), -1;
        o->hold_bytes = n ? (uint64_t)n << 20 : JITANON_HOLD_NONE;
    } else if ((v = inject_cli_value(argc, argv, i, "--follow-idle", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || n == 0 || n > 3600000)
            return fprintf(stderr, "%s: --follow-idle takes 1 to 3600000 (milliseconds)\n", tool), -1;
        o->follow_idle_ms = (uint32_t)n;
    } else if ((v = inject_cli_value(argc, argv, i, "--perf-map", NULL))) {
        if (!strcmp(v, "keep")) o->perf_map = JITANON_PERF_MAP_KEEP;
        else if (!strcmp(v, "elf")) o->perf_map = JITANON_PERF_MAP_ELF;
        else return fprintf(stderr, "%s: --perf-map takes keep or elf\n", tool), -1;
        c->perf_map_set = 1;
    } else if ((v = inject_cli_value(argc, argv, i, "--buildid-dir", NULL))) c->cache_dir = v;
    else if ((v = inject_cli_value(argc, argv, i, "--threads", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*v || *end || n > 64) return fprintf(stderr, "%s: --threads takes 0 to 64\n", tool), -1;
        c->threads = (long)n;
    } else if ((v = inject_cli_value(argc, argv, i, "--anon", NULL))) {
        if (!strcmp(v, "range")) o->anon_mode = JITANON_ANON_RANGE;
        else if (!strcmp(v, "all")) o->anon_mode = JITANON_ANON_ALL;
        else if (!strcmp(v, "keep")) o->anon_mode = JITANON_ANON_KEEP;
        else return fprintf(stderr, "%s: --anon takes range, all or keep\n", tool), -1;
    } else if ((v = inject_cli_value(argc, argv, i, "--elf", NULL))) {
        if (!strcmp(v, "region")) o->elf_layout = JITANON_ELF_PER_REGION;
        else if (!strcmp(v, "function")) o->elf_layout = JITANON_ELF_PER_FUNCTION;
        else if (!strcmp(v, "process")) o->elf_layout = JITANON_ELF_PER_PROCESS;
        else return fprintf(stderr, "%s: --elf takes region, function or process\n", tool), -1;
    } else if ((v = inject_cli_value(argc, argv, i, "--elf-files", NULL))) {
        if (!strcmp(v, "auto")) o->elf_files = JITANON_ELF_FILES_AUTO;
        else if (!strcmp(v, "all")) o->elf_files = JITANON_ELF_FILES_ALL;
        else if (!strcmp(v, "sampled")) o->elf_files = JITANON_ELF_FILES_SAMPLED;
        else return fprintf(stderr, "%s: --elf-files takes auto, all or sampled\n", tool), -1;
        c->elf_files_set = 1;
    } else if ((v = inject_cli_value(argc, argv, i, "--line-bias", NULL))) {
        char *end;
        unsigned long n = strtoul(v, &end, 0);
        if (!strcmp(v, "auto")) o->elf.line_bias = JITANON_ELF_LINE_BIAS_AUTO;
        else if (!strcmp(v, "none") || (*v && !*end && n == 0)) o->elf.line_bias = JITANON_ELF_LINE_BIAS_NONE;
        else if (*v && !*end && n < JITANON_ELF_LINE_BIAS_NONE) o->elf.line_bias = (uint32_t)n;
        else return fprintf(stderr, "%s: --line-bias takes auto, none or a byte count\n", tool), -1;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose") || !strcmp(a, "--stats")) c->stats = 1;
    else if (!strcmp(a, "-N") || !strcmp(a, "--no-buildid-cache")) c->no_cache = 1;
    else if (!strcmp(a, "--strict")) o->jitdump.strict = c->po.strict = 1;
    else return 0;
    return 1;
}

/* After the options: create --elf-dir, pick the writer threads, open the build-id cache
   (a cache that cannot be opened costs only a warning).  Nonzero: a fatal problem, said. */
static int inject_cli_finish(inject_cli *c, const char *tool)
{
    jitanon_error err;
    /* A directory named on the command line is one the user wants: create it. */
    if (c->o.elf_dir && mkdir(c->o.elf_dir, 0755) != 0 && errno != EEXIST)
        return fprintf(stderr, "%s: cannot create %s: %s\n", tool, c->o.elf_dir, strerror(errno)), 1;
    /* The MMAP2s name the files by this path, and a relative one holds only from this
       directory: perf report run elsewhere, and hotspot's parser anywhere, would not find
       them (perf inject's own paths are absolute: they start from the dump's). */
    if (c->o.elf_dir && c->o.elf_dir[0] != '/' && realpath(c->o.elf_dir, c->elf_dir_abs)) c->o.elf_dir = c->elf_dir_abs;
    /* Creating the files is the kernel's work, and it runs on every CPU at once (region
       files: the functions with files of their own, while the region files are built).
       A per-process file is one write of many functions: threads there only when asked
       for (and reported). */
    if (c->threads < 0 && c->o.elf_layout == JITANON_ELF_PER_PROCESS) c->threads = 0;
    if (c->threads < 0) {
        c->threads = sysconf(_SC_NPROCESSORS_ONLN);
        c->threads = c->threads < 1 ? 1 : c->threads > 8 ? 8 : c->threads;
    }
    c->o.elf_threads = (uint32_t)c->threads;
    /* As perf inject --jit: the files go into the build-id cache too, so that the profile
       still reads once they are gone. */
    if (!c->no_cache && jitanon_buildid_cache_open(&c->cache, c->cache_dir, &err) == JITANON_OK)
        c->o.buildid_cache = &c->cache;
    else if (!c->no_cache) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "%s: warning: %s: ELF files are not cached (-N skips the cache)\n", tool, msg);
    }
    return 0;
}

static void inject_cli_release(inject_cli *c)
{
    if (c->o.buildid_cache) jitanon_buildid_cache_release(c->o.buildid_cache);
    c->o.buildid_cache = NULL;
}

#endif
