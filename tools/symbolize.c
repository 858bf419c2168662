/* symbolize: the profiler's side of jitanon.  Resolves every sample of a perf.data
   against the jitdumps it names, in memory, with the trimming engine - no ELF files are
   written (the way samply reads jitdumps) - and prints a flat profile, or the samples'
   call stacks folded for flame graphs.

   usage: symbolize [--jitdump-dir DIR] [--top N] [--folded [--annotate]] [--svg FILE] [--title T]
                    [--pprof FILE] perf.data

   Every frame, in the flat profile as in the stacks, is named by the library's frame
   iterator and tools/frames.h's rule, as perf script names it on `jitanon-inject`'s
   output: the jitdump's function name; in JIT code the dump says nothing of, the perf
   map's (--jitdump-dir, then /tmp/perf-<pid>.map), else [unknown]; native code by its
   ELF symbol (.symtab/.dynsym, the PLT, debug files and perf's build-id cache, as perf
   6.1 finds them; C++ names demangled as perf prints them when built with libstdc++:
   tools/symbols.h), also in the jitted-*.so files of an injected recording; kernel code
   by its kallsyms symbol; where perf has no symbol, [file] ([node]) or
   [kernel.kallsyms].  --call-graph dwarf samples are unwound by the library.  The flat
   profile tags JIT names with where they came from ([jitdump], [perf-<pid>.map]).

   --folded prints one line per distinct stack, `comm;root;...;leaf count` (Brendan
   Gregg's collapsed format: flamegraph.pl, inferno-flamegraph and speedscope read it),
   from the callchains of a `perf record -g` recording (the sample's ip alone without
   one).
   A callchain with a context marker other than kernel, user or hypervisor is dropped
   whole, as perf does: the sample counts as `comm` alone.  ';' in a name becomes ':'
   and line breaks become spaces, so every line stays one stack.
   --annotate marks frames the way flamegraph.pl --color=java and inferno colour them:
   `_[j]` after a JIT frame, `_[k]` after a kernel frame (speedscope shows the marks as
   part of the names, so they are not the default).
   --svg FILE writes the same stacks as a flame graph (tools/flamegraph.h).

   --pprof FILE writes them as a pprof profile (profile.proto, tools/pprof.h: go tool
   pprof, Pyroscope, Parca, Grafana, speedscope), gzipped when built with ZLIB=1, plain
   protobuf otherwise (pprof readers take both), written atomically (FILE "-": standard
   output), the same bytes for the same recording:
     - a Sample per distinct (stack, pid, tid, comm), leaf first, the frames and names of
       --folded (the comm is a label, not a frame); labels pid and tid (numbers), comm;
     - value columns "samples"/"count", then one per event of the recording: cpu-clock as
       pprof names CPU time, "cpu"/"nanoseconds" (its period is in ns), other events by
       perf's name with unit "count"; each sample adds its PERF_SAMPLE_PERIOD (or the
       fixed period) to its event's column.  period_type/period: the first event's (with
       -F, 1e9/freq ns); a comment names the event; duration: first to last sample;
       time_nanos: the first sample's wall time, from perf's clock data (written with -k);
     - one Location per address, Mapping and line: a jitted function is its own Mapping
       (its code range in the file jitanon-inject maps it from, next to the dump: a
       region file's jitted-<pid>-r<N>.so at the code's offset there by default);
       other frames the piece of the mmap they are in (start, end, file offset, the
       MMAP2 build-id, else the recording's build-id table's), the kernel's [kernel.kallsyms] mapping; mapping[0] is the main binary
       (the first sampled process's first file mapping after its last exec: the program
       a launcher such as jitanon-record execs, not the launcher);
     - Functions: JIT names from the jitdump, with the file and line of its DEBUG_INFO
       entry for the address (return addresses looked up one byte back, in the call; the
       line bias of V8/LLVM removed as the ELF writer does); native and kernel frames
       by their symbols, as --folded names them: every Mapping says it is symbolized, so
       pprof does not try the local files. */
#ifndef _GNU_SOURCE /* (g++ defines it) */
#define _GNU_SOURCE
#endif
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include "cli_files.h"
#include "flamegraph.h"
#include "frames.h"
#include "pprof.h"
#include "symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FRAMES 1024 /* perf records at most 127 by default (kernel.perf_event_max_stack) */
#define NAME_LEN 2048   /* a frame's name is cut there */

/* A thread's names over time (COMM records), and where it came from (FORK), so a sample
   is named with the comm its thread had then, as perf script prints it. */
typedef struct task_event {
    uint32_t tid, from_tid; /* from_tid: FORK's parent thread; 0 for a COMM */
    uint64_t time;
    char *comm;             /* NULL for a FORK */
    size_t seq;             /* arrival order, for records with equal times */
} task_event;

/* --pprof: what the Mapping of an address is (MMAP/MMAP2 records, from opts.on_event). */
typedef struct mmap_ev {
    uint32_t pid;
    uint64_t start, len, pgoff;
    char *file;
    char build_id[41]; /* hex, "" when the record has none */
    size_t seq;
} mmap_ev;

/* --pprof: a jitted function's code and its DEBUG_INFO lines (offsets from its code
   address), from the jitdumps as the injector loads them (opts.io.load_dump). */
typedef struct dbg_line {
    uint64_t off;
    int64_t line;
    int64_t file; /* in profile.files */
} dbg_line;

typedef struct jit_fn {
    uint32_t pid;
    uint64_t code_index, code_addr, code_size;
    size_t line, nlines; /* in profile.lines */
} jit_fn;

/* --pprof: the last Location of frames that look the same (a frame's Location depends on
   these alone), so a hot address costs no string interning. */
typedef struct loc_memo {
    uint64_t ip, start, code_index, name_hash, loc;
    uint32_t pid, flags;
} loc_memo;
#define LOC_MEMO 65536

/* --pprof: an exec of process pid, after the first `seq` mmaps (so its image's mmaps,
   which the kernel reports after it, are those from seq on). */
typedef struct exec_mark {
    uint32_t pid;
    size_t seq;
} exec_mark;
#define PERF_RECORD_MISC_COMM_EXEC (1u << 13) /* perf_event.h: a COMM of an exec */

typedef struct pprof_state {
    pp_profile pp;
    loc_memo *memo;       /* LOC_MEMO entries, direct-mapped */
    pp_profile files;     /* a string pool only: the DEBUG_INFO file names */
    mmap_ev *mmaps;
    size_t nmmaps, mmaps_cap;
    uint64_t *attr_period; /* nattrs: the period of a sample without its own (0: none) */
    int typed;             /* the value columns are declared (at the first sample) */
    jit_fn *fns;          /* by (pid, code_index): fns_h */
    size_t fns_cap, nfns;
    ix_hash fns_h;
    dbg_line *lines;
    size_t nlines, lines_cap;
    char (*dumps)[4096];  /* the dump path of each pid, for the JIT mappings */
    uint32_t *dump_pids;
    size_t ndumps;
    uint64_t *locs;       /* one sample's stack */
    uint32_t nattrs;      /* value columns after "samples": one per attr */
    uint64_t first_time, last_time;
    int64_t *values;
    /* the main binary (mapping[0]): the executable of the first sampled process, as
       its last exec (a COMM record with PERF_RECORD_MISC_COMM_EXEC) loaded it */
    int have_main_pid;
    uint32_t main_pid;
    exec_mark *execs;
    size_t nexecs, execs_cap;
    /* perf's HEADER_CLOCK_DATA (feature 29, written with -k): the wall clock at a moment
       of the recording's clock, for time_nanos */
    int have_clock;
    uint32_t clockid;
    uint64_t wall_ns, clock_ns;
} pprof_state;

typedef struct profile {
    uint64_t total;
    int stacks;            /* --folded / --svg: collect stacks instead of a flat profile */
    int annotate;          /* --annotate: _[j] after JIT frames, _[k] after kernel ones */
    int no_tree;           /* --pprof alone: the stacks go to the profile only */
    fg_tree tree;          /* the stacks, or (flat profile) one frame per sample */
    task_event *tasks;
    size_t ntasks, tasks_cap;
    char (*names)[NAME_LEN]; /* MAX_FRAMES + 1: one sample's frame names */
    fg_frame *frames;
    pprof_state *pprof;    /* --pprof */
    jitanon_perf_reader *reader;
} profile;

static void add(profile *p, const char *name)
{
    fg_frame f;
    f.name = name;
    f.kind = FG_OTHER;
    p->total++;
    fg_add(&p->tree, &f, 1, 1);
}

/* The comm of thread tid at time t: its last COMM by then, else what it inherited at
   its FORK, else ":tid" (what perf script prints for a thread it knows nothing of). */
static const char *comm_at(const profile *p, uint32_t tid, uint64_t t, int hops)
{
    size_t lo = 0, hi = p->ntasks, i;
    while (lo < hi) { /* first event of a later thread, or of this one after t */
        size_t mid = lo + (hi - lo) / 2;
        const task_event *e = &p->tasks[mid];
        if (e->tid < tid || (e->tid == tid && e->time <= t)) lo = mid + 1;
        else hi = mid;
    }
    for (i = lo; i-- > 0 && p->tasks[i].tid == tid;) {
        if (p->tasks[i].comm) return p->tasks[i].comm;
        if (hops < 64 && p->tasks[i].from_tid != tid) return comm_at(p, p->tasks[i].from_tid, p->tasks[i].time, hops + 1);
    }
    /* before its first COMM: the first one it ever gets (perf's synthesized COMMs of
       running threads carry no meaningful time) */
    if (lo < p->ntasks && p->tasks[lo].tid == tid && p->tasks[lo].comm) return p->tasks[lo].comm;
    return NULL;
}

/* ---- --pprof ---------------------------------------------------------------------- */

static void *xgrow(void *v, size_t *cap, size_t need, size_t elem)
{
    return pp__grow(v, cap, need, elem);
}

static int by_mmap(const void *a, const void *b)
{
    const mmap_ev *x = (const mmap_ev *)a, *y = (const mmap_ev *)b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The mapping of pid that holds ip, with that file name when `file` is given: of the
   records that hold it, the last in the recording (a later mmap replaces an earlier
   one; the scan back over lower starts is bounded, so a pid with thousands of
   mappings costs a few hundred steps at most). */
static mmap_ev *find_mmap(pprof_state *st, uint32_t pid, uint64_t ip, const char *file, size_t file_len)
{
    size_t lo = 0, hi = st->nmmaps, i, steps = 0;
    mmap_ev *best = NULL;
    while (lo < hi) { /* first record of a later pid, or of this one starting after ip */
        size_t mid = lo + (hi - lo) / 2;
        const mmap_ev *e = &st->mmaps[mid];
        if (e->pid < pid || (e->pid == pid && e->start <= ip)) lo = mid + 1;
        else hi = mid;
    }
    for (i = lo; i-- > 0 && st->mmaps[i].pid == pid && steps++ < 512;) {
        mmap_ev *e = &st->mmaps[i];
        if (ip - e->start >= e->len) continue;
        if (file && (strlen(e->file) != file_len || memcmp(e->file, file, file_len))) continue;
        if (!best || e->seq > best->seq) best = e;
    }
    return best;
}

static int fn_eq(const void *ctx, size_t idx, const void *key)
{
    const jit_fn *f = &((const pprof_state *)ctx)->fns[idx], *k = (const jit_fn *)key;
    return f->pid == k->pid && f->code_index == k->code_index;
}

static uint64_t fn_rehash(const void *ctx, size_t idx)
{
    const jit_fn *f = &((const pprof_state *)ctx)->fns[idx];
    return pp__mix(f->pid, f->code_index);
}

/* The function (pid, code_index): found, or (insert) a new empty one. */
static jit_fn *find_fn(pprof_state *st, uint32_t pid, uint64_t code_index, int insert)
{
    jit_fn k;
    size_t slot;
    int found;
    if (!insert && !st->nfns) return NULL;
    memset(&k, 0, sizeof k);
    k.pid = pid;
    k.code_index = code_index;
    slot = ix_find(&st->fns_h, pp__mix(pid, code_index), st, &k, fn_eq, fn_rehash, &found);
    if (found) return &st->fns[st->fns_h.slot[slot] - 1];
    if (!insert) return NULL;
    st->fns = (jit_fn *)xgrow(st->fns, &st->fns_cap, st->nfns + 1, sizeof *st->fns);
    st->fns[st->nfns] = k;
    ix_put(&st->fns_h, slot, st->nfns);
    return &st->fns[st->nfns++];
}

static int by_off(const void *a, const void *b)
{
    const dbg_line *x = (const dbg_line *)a, *y = (const dbg_line *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* One record of a dump for scan_dump (below); returns the DEBUG_INFO record waiting for
   its CODE_LOAD, or NULL (kept in *keep: an iterator's record is gone at the next one). */
static const jitanon_jitdump_record *pprof_dump_record(pprof_state *st, uint32_t pid, const jitanon_jitdump_record *rec,
                                                       const jitanon_jitdump_record *dbg, jitanon_jitdump_record *keep,
                                                       uint64_t bias)
{
    jit_fn *f;
    if (rec->id == JITANON_JITDUMP_CODE_DEBUG_INFO) {
        *keep = *rec;
        return keep;
    }
    if (rec->id != JITANON_JITDUMP_CODE_LOAD) return dbg;
    f = find_fn(st, pid, rec->load.code_index, 1);
    f->code_addr = rec->load.code_addr;
    f->code_size = rec->load.code_size;
    f->line = st->nlines;
    f->nlines = 0;
    if (dbg && dbg->debug.code_addr == rec->load.code_addr) {
        jitanon_jitdump_debug_iter it;
        jitanon_jitdump_debug_entry e;
        jitanon_jitdump_debug_iter_begin(&it, dbg);
        while (jitanon_jitdump_debug_iter_next(&it, &e)) {
            dbg_line *l;
            uint64_t a = e.addr - bias;
            if (a < rec->load.code_addr || a - rec->load.code_addr >= rec->load.code_size || e.lineno <= 0) continue;
            st->lines = (dbg_line *)xgrow(st->lines, &st->lines_cap, st->nlines + 1, sizeof *st->lines);
            l = &st->lines[st->nlines++];
            l->off = a - rec->load.code_addr;
            l->line = e.lineno;
            l->file = pp_string(&st->files, e.file.data, e.file.length);
        }
        f->nlines = st->nlines - f->line;
        if (f->nlines > 1) qsort(st->lines + f->line, f->nlines, sizeof *st->lines, by_off);
    }
    return NULL;
}

/* What --pprof keeps of a dump: each CODE_LOAD's code range, with the lines of the
   CODE_DEBUG_INFO record before it when that record names the same code address (the
   pairing perf inject makes).  Debug addresses lose the line bias the dump has (V8 and
   LLVM add 0x40: jitanon_elf_line_bias_scan finds it from the data). */
static void scan_dump(pprof_state *st, const char *path, const jitanon_jitdump *d)
{
    jitanon_elf_line_bias_scan scan;
    uint64_t bias = 0;
    const jitanon_jitdump_record *dbg = NULL;
    jitanon_jitdump_record dbg_rec;
    uint32_t pid = d->header.pid;
    const char *base = strrchr(path, '/');
    int pass;
    /* the pid the injector found the dump for is in its name, jit-<pid>.dump */
    base = base ? base + 1 : path;
    if (!strncmp(base, "jit-", 4)) pid = (uint32_t)strtoul(base + 4, NULL, 10);
    st->dumps = (char(*)[4096])realloc(st->dumps, (st->ndumps + 1) * sizeof *st->dumps);
    st->dump_pids = (uint32_t *)realloc(st->dump_pids, (st->ndumps + 1) * sizeof *st->dump_pids);
    if (!st->dumps || !st->dump_pids) exit(3);
    snprintf(st->dumps[st->ndumps], sizeof st->dumps[0], "%s", path);
    st->dump_pids[st->ndumps++] = pid;
    /* two walks over the records (the injector may have loaded the dump without a
       record table: records == NULL) - the bias is known only after all of them */
    jitanon_elf_line_bias_scan_init(&scan, &d->header);
    for (pass = 0; pass < 2; pass++) {
        jitanon_jitdump_iter it;
        jitanon_jitdump_record rec;
        jitanon_error e;
        size_t i = 0;
        int have_iter = !d->records && jitanon_jitdump_iter_begin(&it, d->data, d->valid_size, NULL, &e) == JITANON_OK;
        if (pass == 1)
            bias = jitanon_elf_line_bias_scan_result(&scan) == JITANON_ELF_LINE_BIAS_PERF ? JITANON_ELF_LINE_BIAS_PERF : 0;
        for (;;) {
            if (d->records) {
                if (i >= d->record_count) break;
                rec = d->records[i++];
            } else if (!have_iter || jitanon_jitdump_iter_next(&it, &rec, &e) != JITANON_OK) break;
            if (pass == 0) jitanon_elf_line_bias_scan_add(&scan, &rec);
            else dbg = pprof_dump_record(st, pid, &rec, dbg, &dbg_rec, bias);
        }
    }
}

/* io.load_dump for --pprof: the dump as the default loader would read it (a regular file
   only, opened without blocking; symlinks as the kernel's protected_symlinks allows),
   through the public jitdump API, then scanned for its functions and lines. */
static jitanon_result load_dump(void *user, const char *path, const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                                jitanon_error *err)
{
    profile *p = (profile *)user;
    struct stat sb;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    jitanon_result r;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    *out = NULL;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0) close(fd);
        memset(err, 0, sizeof *err);
        err->type = JITANON_ERR_IO;
        err->description = jitanon_result_string(JITANON_ERR_IO);
        snprintf(err->info, sizeof err->info, "%s", fd < 0 ? "cannot open it" : "not a regular file");
        return JITANON_ERR_IO;
    }
    for (;;) {
        ssize_t k;
        buf = (uint8_t *)xgrow(buf, &cap, n + 65536, 1);
        k = read(fd, buf + n, cap - n);
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fd);
    r = jitanon_jitdump_load_memory(buf, n, opts, out, err);
    free(buf);
    if (r == JITANON_OK) scan_dump(p->pprof, path, *out);
    return r;
}

/* The dump's record of a jitted frame's function: by the sample's pid, else (a child
   that runs its parent's code after a fork) from another dump whose function of that
   code_index starts where this frame's does. */
static const jit_fn *jit_fn_of(pprof_state *st, uint32_t pid, const jitanon_frame *f)
{
    const jit_fn *fn = find_fn(st, pid, f->code_index, 0);
    size_t i;
    for (i = 0; !fn && i < st->ndumps; i++)
        if (st->dump_pids[i] != pid && (fn = find_fn(st, st->dump_pids[i], f->code_index, 0)) != NULL &&
            fn->code_addr != f->start)
            fn = NULL;
    return fn;
}

/* A mapping's build-id in hex: its MMAP2 record's, else the recording's build-id table's
   (the frame's, JITANON_FRAME_WANT_BUILD_ID: perf record writes that table; kept in the
   record, so the main binary's mapping, made at the end, gets it too), else NULL. */
static const char *mapping_build_id(mmap_ev *m, const jitanon_frame *f)
{
    size_t i;
    if (!m->build_id[0])
        for (i = 0; i < f->build_id.size && i < 20; i++) snprintf(m->build_id + 2 * i, 3, "%02x", f->build_id.data[i]);
    return m->build_id[0] ? m->build_id : NULL;
}

/* The Mapping of one frame of process pid, or 0 (no mapping holds it). */
static uint64_t frame_mapping(pprof_state *st, uint32_t pid, const jitanon_frame *f)
{
    mmap_ev *m;
    if (f->kind == JITANON_FRAME_JIT) {
        /* each jitted function is its own mapping, of the file jitanon-inject maps it
           from (jitanon_frame.file; symbolize writes none): go tool pprof merges mappings
           of one file, offset and size class into one and rebases their addresses, so a
           region file's functions each keep their own offset in it */
        const jit_fn *fn = jit_fn_of(st, pid, f);
        size_t dir = f->path.length;
        char file[4096 + 64];
        uint64_t end = f->start + (fn && fn->code_size ? fn->code_size : 1);
        if (f->file.length) /* the file jitanon-inject maps it from: a region's, at the code's offset there */
            return pp_mapping(&st->pp, f->start, end, f->pgoff, f->file.data, NULL);
        while (dir > 0 && f->path.data[dir - 1] != '/') dir--;
        snprintf(file, sizeof file, "%.*sjitted-%u-%" PRIu64 ".so", (int)dir, f->path.data, (unsigned)pid, f->code_index);
        return pp_mapping(&st->pp, f->start, end, 0, file, NULL);
    }
    if (f->kind == JITANON_FRAME_KERNEL) {
        m = find_mmap(st, UINT32_MAX, f->ip, NULL, 0); /* the kernel's mmaps have pid -1 */
        if (!m) return pp_mapping(&st->pp, UINT64_C(1) << 63, UINT64_MAX, 0, "[kernel.kallsyms]", NULL);
        return pp_mapping(&st->pp, m->start, m->start + m->len, m->pgoff, m->file, mapping_build_id(m, f));
    }
    if (f->kind == JITANON_FRAME_UNKNOWN) return 0;
    /* a perf map's frame: the anonymous mapping it is in (path is the map's file) */
    m = f->kind == JITANON_FRAME_PERF_MAP ? find_mmap(st, pid, f->ip, NULL, 0)
                                          : find_mmap(st, pid, f->ip, f->path.data, f->path.length);
    if (m) {
        /* the piece of the mmap the trimming left (f->start on), not the whole record */
        uint64_t start = f->kind == JITANON_FRAME_FILE && f->start >= m->start && f->start <= f->ip ? f->start : m->start;
        return pp_mapping(&st->pp, start, m->start + m->len, m->pgoff + (start - m->start), m->file,
                          mapping_build_id(m, f));
    }
    {
        /* a mapping inherited across fork has no record of this pid: its name only */
        char name[NAME_LEN];
        snprintf(name, sizeof name, "%.*s", (int)f->path.length, f->path.data);
        return pp_mapping(&st->pp, f->start, f->start, 0, name, NULL);
    }
}

/* The Location of one frame: its address, mapping and function, and for jitted code with
   DEBUG_INFO the source line (a return address - every frame but a stack's first - is
   looked up one byte back, in the call instruction). */
static uint64_t frame_location(pprof_state *st, uint32_t pid, const jitanon_frame *f, int leaf, const char *name,
                               fg_kind kind)
{
    uint64_t mapping, fid, nh = pp__mix(pp__bytes_hash(name, strlen(name)), pp__bytes_hash(f->path.data, f->path.length));
    const char *file = NULL;
    int64_t line = 0, start_line = 0;
    uint32_t flags = (uint32_t)kind | (uint32_t)(f->kernel != 0) << 4 | (uint32_t)(leaf != 0) << 5 | (uint32_t)f->kind << 8;
    loc_memo *memo = &st->memo[ix_slot(
        pp__mix(pp__mix(pp__mix(pp__mix(pp__mix(f->ip, f->start), f->code_index), nh), pid), flags), LOC_MEMO)];
    if (memo->loc && memo->ip == f->ip && memo->start == f->start && memo->code_index == f->code_index &&
        memo->name_hash == nh && memo->pid == pid && memo->flags == flags)
        return memo->loc;
    mapping = frame_mapping(st, pid, f);
    if (f->kind == JITANON_FRAME_JIT) {
        const jit_fn *fn = jit_fn_of(st, pid, f);
        if (fn && fn->nlines) {
            const dbg_line *v = st->lines + fn->line;
            uint64_t off = f->ip - f->start - (leaf || f->ip == f->start ? 0 : 1);
            size_t lo = 0, hi = fn->nlines;
            while (lo < hi) { /* first entry after off */
                size_t mid = lo + (hi - lo) / 2;
                if (v[mid].off <= off) lo = mid + 1;
                else hi = mid;
            }
            /* the function's own file: its first entry's (V8 names the script of every
               position in it) */
            file = st->files.str + st->files.str_off[v[0].file];
            start_line = v[0].line;
            if (lo) {
                line = v[lo - 1].line;
                file = st->files.str + st->files.str_off[v[lo - 1].file];
            }
        }
    }
    fid = pp_function(&st->pp, name, strlen(name), file, start_line);
    memo->ip = f->ip;
    memo->start = f->start;
    memo->code_index = f->code_index;
    memo->name_hash = nh;
    memo->pid = pid;
    memo->flags = flags;
    memo->loc = pp_location(&st->pp, mapping, f->ip, fid, line);
    return memo->loc;
}

/* One sample into the profile: its stack, a count of 1 and its period in its event's
   column, labels pid, tid and comm (as perf script names the thread). */
static void pprof_sample(pprof_state *st, const jitanon_inject_sample *s, const uint64_t *locs, size_t n,
                         const char *comm)
{
    pp_label lab[3];
    size_t i, attr = s->rec->attr_index;
    for (i = 0; i <= st->nattrs; i++) st->values[i] = 0;
    st->values[0] = 1;
    if (attr < st->nattrs)
        st->values[1 + attr] = (int64_t)(s->rec->sample.period ? s->rec->sample.period : st->attr_period[attr]);
    memset(lab, 0, sizeof lab);
    lab[0].key = "pid";
    lab[0].num = s->pid;
    lab[1].key = "tid";
    lab[1].num = s->tid;
    lab[2].key = "comm";
    lab[2].str = comm;
    if (!st->have_main_pid) {
        st->have_main_pid = 1;
        st->main_pid = s->pid;
    }
    pp_sample(&st->pp, locs, n, st->values, lab, 3);
    if (!st->first_time || s->time < st->first_time) st->first_time = s->time;
    if (s->time > st->last_time) st->last_time = s->time;
}

static void pprof_begin(pprof_state *st, jitanon_perf_reader *r); /* below, with the value columns */

/* fr_stack's frames as pprof Locations (names before fr_clean, as the profile keeps them) */
static void pprof_frame(void *user, size_t i, const jitanon_inject_sample *s, const jitanon_frame *f, int first,
                        const char *name, fg_kind kind)
{
    pprof_state *st = (pprof_state *)user;
    st->locs[i] = frame_location(st, s->pid, f, first, name, kind);
}

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    profile *p = (profile *)user;
    char name[NAME_LEN + 64]; /* the stacks' cut, and a tag */
    if (p->pprof && !p->pprof->typed) pprof_begin(p->pprof, p->reader);
    if (p->stacks) {
        char(*names)[NAME_LEN] = p->names, comm[32];
        fg_frame *frames = p->frames;
        size_t n, k;
        pprof_state *st = p->pprof;
        const char *c = comm_at(p, s->tid, s->time, 0);
        if (c) snprintf(comm, sizeof comm, "%s", c);
        else snprintf(comm, sizeof comm, ":%u", (unsigned)s->tid);
        /* leaf first, as recorded (a chain perf would drop: the sample counts as comm alone) */
        n = fr_stack(s, names[0], NAME_LEN, frames, MAX_FRAMES, st ? pprof_frame : NULL, st);
        if (st) pprof_sample(st, s, st->locs, n, comm);
        for (k = 0; k < n; k++) {
            if (p->annotate && (frames[k].kind == FG_JIT || frames[k].kind == FG_PERFMAP || frames[k].kind == FG_KERNEL)) {
                size_t len = strlen(names[k]);
                if (len > NAME_LEN - 5) len = NAME_LEN - 5;
                memcpy(names[k] + len, frames[k].kind == FG_KERNEL ? "_[k]" : "_[j]", 5);
            }
        }
        /* root first: the comm, then the chain reversed */
        fr_clean(comm);
        fr_root_first(frames, n, comm);
        if (!p->no_tree) fg_add(&p->tree, frames, n + 1, 1);
        p->total++;
        return;
    }
    /* the flat profile: frames.h's names, with where a JIT name came from */
    {
        size_t len;
        jitanon_frame f;
        fg_kind k = fr_sample(s, name, NAME_LEN, &f);
        len = strlen(name);
        if (k == FG_JIT && f.kind == JITANON_FRAME_JIT) snprintf(name + len, sizeof name - len, " [jitdump]");
        else if (k == FG_PERFMAP && f.kind == JITANON_FRAME_PERF_MAP) { /* the map's file, as the frame names it */
            size_t blen;
            const char *b = fr__base(f.path, &blen);
            snprintf(name + len, sizeof name - len, " [%.*s]", (int)blen, b);
        }
    }
    add(p, name);
}

static int by_tid_time(const void *a, const void *b)
{
    const task_event *x = (const task_event *)a, *y = (const task_event *)b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define FEAT_CLOCK_DATA 29 /* perf's HEADER_CLOCK_DATA */

static uint64_t rd_u(const uint8_t *p, unsigned n, int big)
{
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < n; i++) v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

/* HEADER_CLOCK_DATA: u32 version (1), u32 clockid, u64 wall-clock ns, u64 clockid ns. */
static void clock_data(pprof_state *st, jitanon_bytes b, int big)
{
    if (b.size < 24 || rd_u(b.data, 4, big) < 1) return;
    st->have_clock = 1;
    st->clockid = (uint32_t)rd_u(b.data + 4, 4, big);
    st->wall_ns = rd_u(b.data + 8, 8, big);
    st->clock_ns = rd_u(b.data + 16, 8, big);
}

/* Where `key` goes in v (n sorted elements of `size` bytes): after every element not
   greater, so elements that compare equal keep their arrival order. */
static size_t upper_bound(const void *v, size_t n, size_t size, const void *key, int (*cmp)(const void *, const void *))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp((const char *)v + mid * size, key) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* --pprof: an mmap (for the Mappings), kept sorted for find_mmap. */
static void pprof_mmap(pprof_state *st, const jitanon_perf_record *rec)
{
    mmap_ev m;
    size_t i, at;
    memset(&m, 0, sizeof m);
    m.pid = rec->mmap.pid;
    m.start = rec->mmap.start;
    m.len = rec->mmap.len;
    m.pgoff = rec->mmap.pgoff;
    m.seq = st->nmmaps;
    m.file = (char *)malloc(rec->mmap.filename.length + 1);
    if (!m.file) exit(3);
    memcpy(m.file, rec->mmap.filename.data, rec->mmap.filename.length);
    m.file[rec->mmap.filename.length] = 0;
    if (rec->mmap.has_build_id)
        for (i = 0; i < rec->mmap.build_id_size && i < 20; i++) snprintf(m.build_id + 2 * i, 3, "%02x", rec->mmap.build_id[i]);
    st->mmaps = (mmap_ev *)xgrow(st->mmaps, &st->mmaps_cap, st->nmmaps + 1, sizeof *st->mmaps);
    at = upper_bound(st->mmaps, st->nmmaps, sizeof m, &m, by_mmap);
    memmove(st->mmaps + at + 1, st->mmaps + at, (st->nmmaps - at) * sizeof m);
    st->mmaps[at] = m;
    st->nmmaps++;
}

/* A COMM or FORK, kept sorted by thread and time for comm_at. */
static void add_task(profile *p, const jitanon_perf_record *rec)
{
    task_event e;
    size_t at;
    memset(&e, 0, sizeof e);
    e.time = (rec->sid.present & JITANON_PERF_SAMPLE_TIME) ? rec->sid.time : 0;
    e.seq = p->ntasks;
    if (rec->type == JITANON_PERF_RECORD_COMM) {
        e.tid = rec->comm.tid;
        e.from_tid = rec->comm.tid;
        e.comm = (char *)malloc(rec->comm.comm.length + 1);
        if (!e.comm) exit(3);
        memcpy(e.comm, rec->comm.comm.data, rec->comm.comm.length);
        e.comm[rec->comm.comm.length] = 0;
    } else {
        e.tid = rec->task.tid;
        e.from_tid = rec->task.ptid;
        e.time = rec->task.time;
    }
    if (p->ntasks == p->tasks_cap) {
        p->tasks_cap = p->tasks_cap ? p->tasks_cap * 2 : 256;
        p->tasks = (task_event *)realloc(p->tasks, p->tasks_cap * sizeof *p->tasks);
        if (!p->tasks) exit(3);
    }
    at = upper_bound(p->tasks, p->ntasks, sizeof e, &e, by_tid_time);
    memmove(p->tasks + at + 1, p->tasks + at, (p->ntasks - at) * sizeof e);
    p->tasks[at] = e;
    p->ntasks++;
}

/* opts.on_event: the threads' names and the mappings, in time order with the samples,
   so the recording is read once. */
static void on_event(void *user, const jitanon_perf_record *rec)
{
    profile *p = (profile *)user;
    if (p->stacks && (rec->type == JITANON_PERF_RECORD_COMM || rec->type == JITANON_PERF_RECORD_FORK)) add_task(p, rec);
    if (!p->pprof) return;
    if (rec->type == JITANON_PERF_RECORD_MMAP || rec->type == JITANON_PERF_RECORD_MMAP2) pprof_mmap(p->pprof, rec);
    else if (rec->type == JITANON_PERF_RECORD_COMM && (rec->misc & PERF_RECORD_MISC_COMM_EXEC)) {
        pprof_state *st = p->pprof;
        st->execs = (exec_mark *)xgrow(st->execs, &st->execs_cap, st->nexecs + 1, sizeof *st->execs);
        st->execs[st->nexecs].pid = rec->comm.pid;
        st->execs[st->nexecs++].seq = st->nmmaps;
    } else if (rec->type == JITANON_PERF_RECORD_HEADER_FEATURE && rec->feature.feat_id == FEAT_CLOCK_DATA)
        clock_data(p->pprof, rec->feature.data, rec->big_endian); /* a pipe's */
}

/* perf's names of the generic events (perf_event.h's PERF_COUNT_HW_* / _SW_* order). */
static const char *const hw_events[] = {"cycles", "instructions", "cache-references", "cache-misses", "branches",
                                        "branch-misses", "bus-cycles", "stalled-cycles-frontend",
                                        "stalled-cycles-backend", "ref-cycles"};
static const char *const sw_events[] = {"cpu-clock", "task-clock", "page-faults", "context-switches",
                                        "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
                                        "emulation-faults", "dummy", "bpf-output", "cgroup-switches"};

/* The value columns: "samples"/"count", then one per event of the recording, named as
   pprof names CPU time ("cpu"/"nanoseconds": cpu-clock's period is in nanoseconds) or
   by the event with unit "count".  A sample without its own period (a fixed-period
   recording without PERF_SAMPLE_PERIOD) gets the attr's sample_period.  Declared at the
   first sample (a pipe's attrs come as records before it), or at the end. */
static void pprof_types(pprof_state *st, jitanon_perf_reader *r)
{
    size_t i;
    jitanon_bytes cd;
    jitanon_error err;
    if (!st->have_clock && r->mode == JITANON_PERF_FILE &&
        jitanon_perf_reader_load_features(r, &err) == JITANON_OK &&
        jitanon_perf_reader_feature(r, FEAT_CLOCK_DATA, &cd))
        clock_data(st, cd, r->big_endian);
    /* the samples' clock is the clock data's: time_nanos is the first sample's wall time */
    if (st->have_clock && r->attr_count && (!r->attrs[0].use_clockid || (uint32_t)r->attrs[0].clockid != st->clockid))
        st->have_clock = 0;
    st->nattrs = (uint32_t)r->attr_count;
    pp_sample_type(&st->pp, "samples", "count");
    for (i = 0; i < r->attr_count; i++) {
        const jitanon_perf_attr *a = &r->attrs[i];
        const char *ev = NULL, *unit = "count";
        char buf[64], note[160];
        uint64_t period = a->raw.size >= 24 ? jitanon_perf_u64_at(a->raw, 2, r->big_endian) : 0;
        int freq = (a->flags >> 10) & 1;
        if (a->type == 0 && a->config < sizeof hw_events / sizeof *hw_events) ev = hw_events[a->config];
        if (a->type == 1 && a->config < sizeof sw_events / sizeof *sw_events) ev = sw_events[a->config];
        if (!ev) {
            snprintf(buf, sizeof buf, "event-%u-0x%" PRIx64, (unsigned)a->type, a->config);
            ev = buf;
        }
        if (a->type == 1 && a->config <= 1) unit = "nanoseconds"; /* cpu-clock, task-clock */
        pp_sample_type(&st->pp, a->type == 1 && a->config == 0 ? "cpu" : ev, unit);
        if (i == 0) {
            st->pp.period_type = pp_str(&st->pp, a->type == 1 && a->config == 0 ? "cpu" : ev);
            st->pp.period_unit = pp_str(&st->pp, unit);
            /* -F: the period is per sample, about 1e9/freq ns for the clocks */
            st->pp.period = (int64_t)(freq ? (period && a->type == 1 && a->config <= 1 ? 1000000000u / period : 0) : period);
            snprintf(note, sizeof note, "event: %s, %s %" PRIu64, ev, freq ? "frequency (Hz)" : "period", period);
            pp_comment(&st->pp, note);
        }
        if (!freq) st->attr_period[i] = period;
    }
}

/* The value columns and what one sample needs, once the attrs are known. */
static void pprof_begin(pprof_state *st, jitanon_perf_reader *r)
{
    st->typed = 1;
    st->attr_period = (uint64_t *)calloc(r->attr_count + 1, sizeof *st->attr_period);
    if (!st->attr_period) exit(3);
    pprof_types(st, r);
    st->values = (int64_t *)calloc(st->nattrs + 1, sizeof *st->values);
    st->locs = (uint64_t *)calloc(MAX_FRAMES + 1, sizeof *st->locs);
    st->memo = (loc_memo *)calloc(LOC_MEMO, sizeof *st->memo);
    if (!st->values || !st->locs || !st->memo) exit(3);
}

/* mapping[0] is the main binary for pprof (its "File:" line): the first file mapping of
   the first sampled process from its last exec on - its executable, which the kernel
   (and perf's synthesized records) maps first.  From its last exec: a program started by
   a launcher that execs it (jitanon-record, env, a shell's exec) is the program, not the
   launcher whose image the process had before. */
static void pprof_main_mapping(pprof_state *st)
{
    size_t k, from = 0;
    const mmap_ev *best = NULL;
    const char *bid;
    if (!st->have_main_pid) return;
    for (k = st->nexecs; k-- > 0;)
        if (st->execs[k].pid == st->main_pid) {
            from = st->execs[k].seq;
            break;
        }
    for (k = 0; k < st->nmmaps; k++) {
        const mmap_ev *m = &st->mmaps[k];
        if (m->pid == st->main_pid && m->seq >= from && m->file[0] == '/' && strncmp(m->file, "/memfd:", 7) &&
            (!best || m->seq < best->seq))
            best = m;
    }
    if (!best) return;
    bid = best->build_id[0] ? best->build_id : NULL;
    /* a record gets its build-id when a frame lands in it (mapping_build_id): the first
       one of the binary may have none (no sample there), another of the same file a frame
       hit has it, and a file's build-id is the file's */
    for (k = 0; k < st->nmmaps && !bid; k++)
        if (st->mmaps[k].pid == best->pid && st->mmaps[k].build_id[0] && !strcmp(st->mmaps[k].file, best->file))
            bid = st->mmaps[k].build_id;
    st->pp.main_mapping = pp_mapping(&st->pp, best->start, best->start + best->len, best->pgoff, best->file, bid);
}

/* The profile, written atomically (a temporary file renamed over `path`), or to standard
   output for "-". */
static int write_pprof(pprof_state *st, const char *path)
{
    jitanon_atomic_file af;
    jitanon_error err;
    jitanon_result res;
    pp_buf b;
    int z;
    pprof_main_mapping(st);
    if (st->last_time > st->first_time) st->pp.duration_nanos = (int64_t)(st->last_time - st->first_time);
    if (st->have_clock && st->first_time && st->wall_ns + st->first_time >= st->clock_ns)
        st->pp.time_nanos = (int64_t)(st->wall_ns + st->first_time - st->clock_ns);
    memset(&b, 0, sizeof b);
    z = pp_serialize(&st->pp, &b, 1);
    if (!strcmp(path, "-")) { /* standard output, for a pipe into an uploader */
        int bad;
        errno = 0;
        bad = z < 0 || fwrite(b.p, 1, b.n, stdout) != b.n || fflush(stdout) != 0;
        free(b.p);
        if (bad)
            fprintf(stderr, "symbolize: cannot write the profile to standard output: %s\n", strerror(errno ? errno : EIO));
        return bad ? -1 : 0;
    }
    res = z < 0 ? JITANON_ERR_IO : jitanon_atomic_open(&af, path, NULL, &err);
    if (res == JITANON_OK) {
        jitanon_sink sink = jitanon_atomic_sink(&af);
        if (sink.write_fn(sink.user, b.p, b.n) != 0) {
            jitanon_atomic_abort(&af);
            res = JITANON_ERR_IO;
            memset(&err, 0, sizeof err);
            err.type = res;
            err.description = jitanon_result_string(res);
        } else res = jitanon_atomic_commit(&af, 0, &err);
    } else if (z < 0) {
        memset(&err, 0, sizeof err);
        err.type = res;
        err.description = jitanon_result_string(res);
        snprintf(err.info, sizeof err.info, "gzip failed");
    }
    free(b.p);
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "symbolize: cannot write %s: %s\n", path, msg);
        return -1;
    }
    return 0;
}

/* Problems the injector meets on the way (a dump it cannot read or refuses, one cut
   short or damaged, of which the valid part is used) are worth a line, as jitanon-inject
   prints them. */
static void on_log(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "symbolize: %s\n", msg);
}

/* Damage of the recording that the reader recovered from (a killed perf record: data
   size 0; a file cut inside a record; unreadable feature sections): what could be read is
   used, and said once, in jitanon-inject's words. */
static void input_damage(const jitanon_perf_reader *r)
{
    char what[256] = "", detail[256];
    size_t n = 0;
    if (!r->warnings) return;
    if (r->warnings & JITANON_PERF_WARN_DATA_SIZE_ZERO)
        n += (size_t)snprintf(what + n, sizeof what - n, "; data size 0: read to the end");
    if (r->warnings & JITANON_PERF_WARN_CUT)
        n += (size_t)snprintf(what + n, sizeof what - n, "; ends inside a record: %" PRIu64 " bytes ignored",
                              r->bytes_ignored);
    if (r->warnings & JITANON_PERF_WARN_FEATURES) snprintf(what + n, sizeof what - n, "; feature sections treated as absent");
    jitanon_format_error(detail, sizeof detail, &r->damage);
    fprintf(stderr, "symbolize: the perf.data input is damaged (%s); what could be read is used: %s\n", what + 2, detail);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: symbolize [--jitdump-dir DIR] [--top N] [--folded [--annotate]] [--svg FILE] [--title T]\n"
               "                 [--pprof FILE] perf.data\n"
               "  (default)        flat profile of the samples' own addresses, the top N (25) names\n"
               "  --folded         one line per distinct call stack: comm;root;...;leaf count\n"
               "  --annotate       JIT frames end in _[j], kernel frames in _[k] (flamegraph.pl --color=java)\n"
               "  --svg FILE       the stacks as a flame graph (SVG: hover, search, click to zoom)\n"
               "  --title T        the flame graph's title\n"
               "  --pprof FILE     the samples as a pprof profile (profile.proto; gzipped when built with ZLIB=1;\n"
               "                   - for standard output)\n"
               "  --jitdump-dir D  where to look for jit-<pid>.dump when the recorded path does not exist\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL, *svg = NULL, *title = NULL, *pprof = NULL;
    jitanon_inject_opts o;
    jitanon_perf_reader r;
    jitanon_error err;
    jitanon_result res;
    profile p;
    size_t i, top = 25;
    int folded = 0, status = 0, have_cache;
    jitanon_buildid_cache cache;
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    for (i = 1; i < (size_t)argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--jitdump-dir") && i + 1 < (size_t)argc) o.jitdump_dir = argv[++i];
        else if (!strcmp(a, "--top") && i + 1 < (size_t)argc) top = (size_t)atol(argv[++i]);
        else if (!strcmp(a, "--svg") && i + 1 < (size_t)argc) svg = argv[++i];
        else if (!strcmp(a, "--pprof") && i + 1 < (size_t)argc) pprof = argv[++i];
        else if (!strcmp(a, "--title") && i + 1 < (size_t)argc) title = argv[++i];
        else if (!strcmp(a, "--folded")) folded = 1;
        else if (!strcmp(a, "--annotate")) p.annotate = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(stdout), 0;
        else if (a[0] == '-' && a[1]) return fprintf(stderr, "symbolize: unknown option %s\n", a), usage(stderr), 2;
        else if (path) return fprintf(stderr, "symbolize: one perf.data only (%s, %s)\n", path, a), 2;
        else path = a;
    }
    if (!path) return usage(stderr), 2;
    /* the OS's reason for a file that cannot be used, before the recording is read */
    if (cli_file("symbolize", path, CLI_INPUT, "a recording (DIR/perf.data)") != 0 ||
        (svg && cli_file("symbolize", svg, CLI_OUTPUT, NULL) != 0) ||
        (pprof && cli_file("symbolize", pprof, CLI_OUTPUT, NULL) != 0))
        return 1;
    p.stacks = folded || svg || pprof;
    p.no_tree = !folded && !svg;
    o.on_sample = on_sample;
    o.on_event = on_event;
    o.sample_user = &p;
    o.io.user = &p; /* load_dump's */
    o.io.log = on_log;
    fg_init(&p.tree);
    if (p.stacks) {
        p.names = (char(*)[NAME_LEN])malloc((MAX_FRAMES + 1) * sizeof *p.names);
        p.frames = (fg_frame *)malloc((MAX_FRAMES + 1) * sizeof *p.frames);
        if (!p.names || !p.frames) exit(3);
    }
    if (pprof) {
        p.pprof = (pprof_state *)calloc(1, sizeof *p.pprof);
        if (!p.pprof) exit(3);
        pp_init(&p.pprof->pp);
        pp_init(&p.pprof->files);
        o.io.load_dump = load_dump;
        o.sample_fields |= JITANON_SAMPLE_FILES; /* JIT Mappings: the files jitanon-inject writes */
        /* no io.find_process: this load_dump follows symlinks, so it must never be
           handed a container's /proc/<pid>/root path (a dump only inside a container is
           then not found: --jitdump-dir takes a copy) */
    }
    p.reader = &r;
    have_cache = sy_setup(&o, &cache, 1); /* native names: perf's build-id cache, C++ demangled */
    res = jitanon_perf_reader_open(&r, path, NULL, &err);
    /* a file's attrs and features are there before its records; a pipe's come as records */
    if (res == JITANON_OK && p.pprof && r.mode == JITANON_PERF_FILE) pprof_begin(p.pprof, &r);
    if (res == JITANON_OK) res = jitanon_symbolize(&r, &o, NULL, &err); /* one pass, nothing written */
    if (res == JITANON_OK && p.pprof && !p.pprof->typed) pprof_begin(p.pprof, &r);
    if (res == JITANON_OK) input_damage(&r);
    jitanon_perf_reader_release(&r);
    if (have_cache) jitanon_buildid_cache_release(&cache);
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "symbolize: %s: %s\n", path, msg);
        status = 1;
    } else if (p.stacks) {
        if (folded) fg_write_folded(&p.tree, stdout);
        if (svg) {
            FILE *f;
            errno = 0;
            f = fopen(svg, "w");
            if (f) fg_write_svg(&p.tree, f, title ? title : path);
            if (!f || ferror(f) | fclose(f)) {
                fprintf(stderr, "symbolize: cannot write %s: %s\n", svg, strerror(errno ? errno : EIO));
                status = 1;
            }
        }
        if (pprof && write_pprof(p.pprof, pprof) != 0) status = 1;
    } else {
        /* the flat profile: the root's children, most samples first */
        size_t n;
        fg_count *v = fg_top(&p.tree, &n);
        printf("%" PRIu64 " samples\n", p.total);
        for (i = 0; i < n && i < top; i++)
            printf("%6.2f%%  %8" PRIu64 "  %s\n", 100.0 * (double)v[i].count / (double)p.total, v[i].count, v[i].name);
        free(v);
    }
    for (i = 0; i < p.ntasks; i++) free(p.tasks[i].comm);
    free(p.tasks);
    fg_release(&p.tree);
    free(p.names);
    free(p.frames);
    if (p.pprof) {
        pprof_state *st = p.pprof;
        for (i = 0; i < st->nmmaps; i++) free(st->mmaps[i].file);
        free(st->mmaps);
        free(st->attr_period);
        free(st->fns);
        ix_release(&st->fns_h);
        free(st->lines);
        free(st->dumps);
        free(st->dump_pids);
        free(st->execs);
        free(st->locs);
        free(st->memo);
        free(st->values);
        pp_release(&st->pp);
        pp_release(&st->files);
        free(st);
    }
    return status;
}
