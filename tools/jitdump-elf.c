/* jitdump-elf - write ELF files for the functions of a jitdump.

   usage: jitdump-elf [--process] [--stats] [--lines] [--compress] [--line-bias=auto|none|BYTES] DUMP OUTDIR

   Default: one jitted-<pid>-<code_index>.so per CODE_LOAD, as `perf inject --jit` names
   them.  --process: one jitted-<pid>.so holding every function, each at its own offset.
   Prints one line per function: `index addr size pgoff path name` (pgoff is what an
   injector puts into the MMAP2 for that function).  --stats prints functions/s and MB/s
   of ELF output to stderr.  --lines also prints the dump's debug entries that fall inside
   their function as `line index offset lineno file` (read straight from the dump, for
   checking the emitted DWARF with addr2line).  DEBUG_INFO and UNWINDING_INFO records belong to the next
   CODE_LOAD, as perf pairs them.  --line-bias: what to subtract from debug addresses
   (V8 and LLVM's PerfJITEventListener add 0x40); auto (default) detects it from the
   dump's data, none subtracts nothing; --v8-bias=on|off|auto are the old names.

   Exit status: 0 done; 1 an error; 2 bad usage; 3 the dump ends inside a record (the JIT
   was still writing it, or died): the files of the functions before the cut are written,
   and stderr says where the dump was cut. */
#define _POSIX_C_SOURCE 200809L
#define JITANON_IMPLEMENTATION
#include "../jitanon.h"
#include "cli_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    int process, stats, lines;
    jitanon_elf_opts elf;
    const char *dump, *outdir;
} options;

typedef struct file_sink {
    FILE *f;
    uint64_t bytes;
} file_sink;

static int file_write(void *user, const void *data, size_t size)
{
    file_sink *s = (file_sink *)user;
    s->bytes += size;
    return fwrite(data, 1, size, s->f) != size;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, const jitanon_error *err)
{
    char msg[256];
    jitanon_format_error(msg, sizeof msg, err);
    fprintf(stderr, "jitdump-elf: %s: %s\n", what, msg);
    return 1;
}

/* Writes one finished builder to `path`; adds the bytes written to *total. */
static int write_file(jitanon_elf_builder *b, const char *path, uint64_t *total, jitanon_elf_info *info)
{
    jitanon_error err;
    file_sink fs;
    jitanon_sink sink;
    int bad;
    fs.f = fopen(path, "wb");
    fs.bytes = 0;
    if (!fs.f) return fprintf(stderr, "jitdump-elf: cannot create %s: %s\n", path, strerror(errno)), 1;
    sink.write_fn = file_write;
    sink.user = &fs;
    bad = jitanon_elf_builder_finish(b, sink, info, &err) != JITANON_OK;
    errno = 0;
    if ((ferror(fs.f) | fclose(fs.f)) != 0 && !bad)
        return fprintf(stderr, "jitdump-elf: cannot write %s: %s\n", path, strerror(errno ? errno : EIO)), 1;
    *total += fs.bytes;
    return bad ? fail(path, &err) : 0;
}

static void print_func(const jitanon_jitdump_record *rec, uint64_t pgoff, const char *path)
{
    printf("%llu 0x%llx %llu 0x%llx %s %.*s\n", (unsigned long long)rec->load.code_index,
           (unsigned long long)rec->load.code_addr, (unsigned long long)rec->load.code_size,
           (unsigned long long)pgoff, path, (int)rec->load.name.length, rec->load.name.data);
}

/* auto | none | a byte count (0x40, 64; 0 = none). */
static int parse_bias(const char *v, uint32_t *bias)
{
    char *end;
    unsigned long n;
    if (!strcmp(v, "auto")) *bias = JITANON_ELF_LINE_BIAS_AUTO;
    else if (!strcmp(v, "none")) *bias = JITANON_ELF_LINE_BIAS_NONE;
    else {
        n = strtoul(v, &end, 0);
        if (!*v || *end || n >= JITANON_ELF_LINE_BIAS_NONE) return 0;
        *bias = n ? (uint32_t)n : JITANON_ELF_LINE_BIAS_NONE;
    }
    return 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jitdump-elf [--process] [--stats] [--lines] [--compress] [--line-bias=auto|none|BYTES] DUMP OUTDIR\n"
               "  (default)       one jitted-<pid>-<code_index>.so per function in OUTDIR, as perf inject names them;\n"
               "                  one line per function: index addr size pgoff path name\n"
               "  --process       one jitted-<pid>.so holding every function\n"
               "  --lines         also the dump's line entries: line index offset lineno file\n"
               "  --compress      compress the DWARF sections (SHF_COMPRESSED, zlib)\n"
               "  --line-bias=B   auto (default), none, or bytes to subtract from line addresses\n"
               "  --stats         functions/s and MB/s of ELF output, on standard error\n"
               "  -h, --help      this text; every option: man jitdump-elf (or man doc/jitdump-elf.1)\n"
               "exit status 3: the dump is cut inside a record; the functions before the cut are written\n");
}

/* 1: options parsed; 0: a usage error; -1: --help. */
static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return -1;
        if (!strcmp(argv[i], "--process")) o->process = 1;
        else if (!strcmp(argv[i], "--stats")) o->stats = 1;
        else if (!strcmp(argv[i], "--lines")) o->lines = 1;
        else if (!strcmp(argv[i], "--compress")) o->elf.compress_debug = 1;
        else if (!strcmp(argv[i], "--v8-bias=on")) o->elf.line_bias = JITANON_ELF_LINE_BIAS_PERF;
        else if (!strcmp(argv[i], "--v8-bias=off")) o->elf.line_bias = JITANON_ELF_LINE_BIAS_NONE;
        else if (!strcmp(argv[i], "--v8-bias=auto")) o->elf.line_bias = JITANON_ELF_LINE_BIAS_AUTO;
        else if (!strncmp(argv[i], "--line-bias=", 12)) {
            if (!parse_bias(argv[i] + 12, &o->elf.line_bias)) return 0;
        } else return 0;
    }
    if (argc - i != 2) return 0;
    o->dump = argv[i];
    o->outdir = argv[i + 1];
    return 1;
}

/* The dump's own view of a function's lines: entry address minus the dump's line bias
   (resolved once for the whole dump in main), relative to the function start. */
static void print_lines(const options *o, const jitanon_jitdump_header *h, const jitanon_jitdump_record *load,
                        const jitanon_jitdump_record *debug)
{
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry e;
    uint64_t start = load->load.code_addr + (o->elf.line_bias == JITANON_ELF_LINE_BIAS_NONE ? 0u : o->elf.line_bias);
    (void)h;
    jitanon_jitdump_debug_iter_begin(&it, debug);
    while (jitanon_jitdump_debug_iter_next(&it, &e))
        if (e.addr >= start && e.addr - start < load->load.code_size)
            printf("line %llu %llu %d %.*s\n", (unsigned long long)load->load.code_index,
                   (unsigned long long)(e.addr - start), (int)e.lineno, (int)e.file.length, e.file.data);
}

/* Each function of the dump (a CODE_LOAD with its DEBUG_INFO and UNWINDING_INFO, paired
   as jitanon-inject pairs them: jitanon_jitdump_func_iter) into its file, or all into one. */
static int run(const options *o, const jitanon_jitdump *d, uint64_t *funcs, uint64_t *bytes)
{
    jitanon_jitdump_func_iter it;
    jitanon_jitdump_func f;
    jitanon_elf_builder b;
    jitanon_error err;
    jitanon_elf_func fn;
    jitanon_result res;
    char path[4096];
    uint64_t pgoff;
    int rc = 0;
    if (o->process) {
        snprintf(path, sizeof path, "%s/jitted-%u.so", o->outdir, (unsigned)d->header.pid);
        if (jitanon_elf_builder_init(&b, &d->header, &o->elf, &err) != JITANON_OK) return fail("init", &err);
    }
    jitanon_jitdump_func_iter_begin(&it, d, NULL);
    while (rc == 0 && (res = jitanon_jitdump_func_iter_next(&it, &f, &err)) == JITANON_OK) {
        if (o->lines && f.debug) print_lines(o, &d->header, f.load, f.debug);
        jitanon_elf_func_of(&f, &fn);
        if (!o->process) {
            snprintf(path, sizeof path, "%s/jitted-%u-%llu.so", o->outdir, (unsigned)f.load->load.pid,
                     (unsigned long long)f.load->load.code_index);
            if (jitanon_elf_builder_init(&b, &d->header, &o->elf, &err) != JITANON_OK) {
                rc = fail("init", &err);
                break;
            }
        }
        if (jitanon_elf_builder_add(&b, &fn, &pgoff, &err) != JITANON_OK) {
            jitanon_elf_builder_release(&b);
            jitanon_jitdump_func_iter_release(&it);
            return fail("add", &err);
        }
        print_func(f.load, pgoff, path);
        ++*funcs;
        if (!o->process) {
            rc = write_file(&b, path, bytes, NULL);
            jitanon_elf_builder_release(&b);
        }
    }
    if (rc == 0 && res != JITANON_END) rc = fail("functions", &err);
    if (rc == 0 && o->stats) fprintf(stderr, "debug records that matched no load: %llu\n", (unsigned long long)it.debug_unmatched);
    jitanon_jitdump_func_iter_release(&it);
    if (o->process) {
        jitanon_elf_info info;
        int bad = rc ? 0 : write_file(&b, path, bytes, &info);
        jitanon_elf_builder_release(&b);
        return rc ? rc : bad;
    }
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    jitanon_error err;
    jitanon_jitdump *d;
    uint64_t funcs = 0, bytes = 0;
    double t0, t1;
    int rc;
    rc = parse_args(argc, argv, &o);
    if (rc < 0) return usage(stdout), 0;
    if (rc == 0) return usage(stderr), 2;
    /* the OS's reason for a dump that cannot be read or a directory that takes no file */
    if (cli_file("jitdump-elf", o.dump, CLI_INPUT, "a jitdump (DIR/jit-<pid>.dump)") != 0 ||
        cli_file("jitdump-elf", o.outdir, CLI_OUTPUT_DIR, NULL) != 0)
        return 1;
    if (jitanon_jitdump_load_file(o.dump, NULL, &d, &err) != JITANON_OK) return fail(o.dump, &err);
    if (o.elf.line_bias == JITANON_ELF_LINE_BIAS_AUTO) { /* per dump, not per file */
        jitanon_elf_line_bias_scan scan;
        size_t i;
        jitanon_elf_line_bias_scan_init(&scan, &d->header);
        for (i = 0; i < d->record_count; i++) jitanon_elf_line_bias_scan_add(&scan, &d->records[i]);
        o.elf.line_bias = jitanon_elf_line_bias_scan_result(&scan);
    }
    t0 = now();
    rc = run(&o, d, &funcs, &bytes);
    t1 = now();
    if (rc == 0 && d->tail_error.type != JITANON_OK) {
        char msg[256];
        jitanon_format_error(msg, sizeof msg, &d->tail_error);
        fprintf(stderr,
                "jitdump-elf: %s: the dump is cut or damaged at record %llu (%s); wrote the %llu function(s) of the "
                "%llu bytes before it\n",
                o.dump, (unsigned long long)d->tail_error.record_index, msg, (unsigned long long)funcs,
                (unsigned long long)d->valid_size);
        rc = 3;
    }
    if (o.stats && t1 > t0)
        fprintf(stderr, "jitdump-elf: %llu functions, %llu bytes of ELF in %.3f s: %.0f functions/s, %.1f MB/s\n",
                (unsigned long long)funcs, (unsigned long long)bytes, t1 - t0, (double)funcs / (t1 - t0),
                (double)bytes / 1e6 / (t1 - t0));
    jitanon_jitdump_destroy(d);
    return rc;
}
