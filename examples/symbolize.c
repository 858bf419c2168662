/* symbolize: the profiler's side of jitanon.  Resolves every sample of a perf.data
   against the jitdumps it names, in memory, with the trimming engine - no ELF files are
   written (the way samply reads jitdumps) - and prints a flat profile, or the samples'
   call stacks folded for flame graphs.

   usage: symbolize [--jitdump-dir DIR] [--top N] [--folded [--annotate]] [--svg FILE] [--title T] perf.data

   Samples in //anon memory are named from /tmp/perf-<pid>.map when it exists, as perf
   report does; the rest show the mapping they landed in.

   --folded prints one line per distinct stack, `comm;root;...;leaf count` (Brendan
   Gregg's collapsed format: flamegraph.pl, inferno-flamegraph and speedscope read it),
   from the callchains of a `perf record -g` recording (the sample's ip alone without
   one).  Frames are named as perf script names them on `jitanon-inject`'s output:
     - JIT code: the jitdump's function name; where the dump says nothing (the trimmed
       //anon parts), the perf map's name, else [unknown];
     - kernel frames (after the callchain's kernel marker; without a callchain, an
       address in the upper half): [kernel.kallsyms] (no kernel symbols are read);
     - other mappings: [file] - the basename of the executable or library, or the
       mapping's own name when it has brackets ([vdso]) - since this example reads no
       ELF symbol tables;
     - addresses in no mapping: [unknown].
   A callchain with a context marker other than kernel, user or hypervisor is dropped
   whole, as perf does: the sample counts as `comm` alone.  ';' in a name becomes ':'
   and line breaks become spaces, so every line stays one stack.
   --annotate marks frames the way flamegraph.pl --color=java and inferno colour them:
   `_[j]` after a JIT frame, `_[k]` after a kernel frame (speedscope shows the marks as
   part of the names, so they are not the default).
   --svg FILE writes the same stacks as a flame graph (examples/flamegraph.h). */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include "flamegraph.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Callchain context markers (the perf_event ABI): entries at or above PERF_CONTEXT_MAX
   say which space the following addresses belong to. */
#define CTX_HV ((uint64_t)-32)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_MAX ((uint64_t)-4095)
/* x86-64 and arm64 kernels live in the upper half (for samples without a callchain) */
#define KERNEL_START 0x8000000000000000u
#define MAX_FRAMES 1024 /* perf records at most 127 by default (kernel.perf_event_max_stack) */
#define NAME_LEN 2048   /* a frame's name is cut there */

typedef struct perfmap_line {
    uint64_t start, size;
    char *name;
} perfmap_line;

/* A thread's names over time (COMM records), and where it came from (FORK), so a sample
   is named with the comm its thread had then, as perf script prints it. */
typedef struct task_event {
    uint32_t tid, from_tid; /* from_tid: FORK's parent thread; 0 for a COMM */
    uint64_t time;
    char *comm;             /* NULL for a FORK */
    size_t seq;             /* file order, for records with equal times */
} task_event;

typedef struct profile {
    uint64_t total;
    uint32_t map_pid;      /* the pid whose perf map is loaded (0: none tried yet) */
    perfmap_line *map;
    size_t map_n;
    int stacks;            /* --folded / --svg: collect stacks instead of a flat profile */
    int annotate;          /* --annotate: _[j] after JIT frames, _[k] after kernel ones */
    fg_tree tree;          /* the stacks, or (flat profile) one frame per sample */
    task_event *tasks;
    size_t ntasks, tasks_cap;
    char (*names)[NAME_LEN]; /* MAX_FRAMES + 1: one sample's frame names */
    fg_frame *frames;
} profile;

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) exit(3);
    return d;
}

static void add(profile *p, const char *name)
{
    fg_frame f;
    f.name = name;
    f.kind = FG_OTHER;
    p->total++;
    fg_add(&p->tree, &f, 1, 1);
}

static void free_map(profile *p)
{
    size_t i;
    for (i = 0; i < p->map_n; i++) free(p->map[i].name);
    free(p->map);
    p->map = NULL;
    p->map_n = 0;
}

static int by_start(const void *a, const void *b)
{
    const perfmap_line *x = (const perfmap_line *)a, *y = (const perfmap_line *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void load_map(profile *p, uint32_t pid)
{
    char path[64], line[4096];
    FILE *f;
    size_t cap = 0;
    if (p->map_pid == pid) return;
    free_map(p);
    p->map_pid = pid;
    snprintf(path, sizeof path, "/tmp/perf-%u.map", (unsigned)pid);
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        perfmap_line m;
        int off = 0;
        if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &m.start, &m.size, &off) < 2 || !off) continue;
        line[strcspn(line, "\n")] = 0;
        if (p->map_n == cap) {
            cap = cap ? cap * 2 : 256;
            p->map = (perfmap_line *)realloc(p->map, cap * sizeof *p->map);
            if (!p->map) exit(3);
        }
        m.name = xstrdup(line + off);
        p->map[p->map_n++] = m;
    }
    fclose(f);
    if (p->map_n) qsort(p->map, p->map_n, sizeof *p->map, by_start);
}

/* The perf map's name for ip: of the entries holding it, the one starting last. */
static const char *map_name(profile *p, uint32_t pid, uint64_t ip)
{
    size_t lo = 0, hi, i;
    load_map(p, pid);
    hi = p->map_n;
    while (lo < hi) { /* first entry starting after ip */
        size_t mid = lo + (hi - lo) / 2;
        if (p->map[mid].start <= ip) lo = mid + 1;
        else hi = mid;
    }
    for (i = lo; i-- > 0;)
        if (ip - p->map[i].start < p->map[i].size) return p->map[i].name;
    return NULL;
}

static int is_anon(const jitanon_str *n)
{
    return (n->length >= 6 && !memcmp(n->data, "//anon", 6)) || (n->length >= 6 && !memcmp(n->data, "[anon:", 6)) ||
           (n->length >= 7 && !memcmp(n->data, "/memfd:", 7));
}

/* One frame's name for --folded (see the top comment), and its kind for the colours. */
static fg_kind frame_name(profile *p, const jitanon_inject_sample *s, int kernel, char *out, size_t cap)
{
    const char *m;
    size_t i, b;
    if (s->kind == JITANON_TRIM_JIT) {
        snprintf(out, cap, "%.*s", (int)s->name.length, s->name.data);
        return FG_JIT;
    }
    if (kernel) {
        snprintf(out, cap, "[kernel.kallsyms]");
        return FG_KERNEL;
    }
    if (s->kind == JITANON_TRIM_ANON && is_anon(&s->name)) {
        if ((m = map_name(p, s->pid, s->ip)) != NULL) {
            snprintf(out, cap, "%s", m);
            return FG_PERFMAP;
        }
        snprintf(out, cap, "[unknown]");
        return FG_UNKNOWN;
    }
    if (s->kind != JITANON_TRIM_NONE && s->name.length) {
        if (s->name.data[0] == '[') {
            snprintf(out, cap, "%.*s", (int)s->name.length, s->name.data);
        } else {
            for (b = i = 0; i < s->name.length; i++)
                if (s->name.data[i] == '/') b = i + 1;
            snprintf(out, cap, "[%.*s]", (int)(s->name.length - b), s->name.data + b);
        }
        return FG_NATIVE;
    }
    snprintf(out, cap, "[unknown]");
    return FG_UNKNOWN;
}

static void clean_name(char *s)
{
    for (; *s; s++)
        if (*s == ';') *s = ':';
        else if (*s == '\n' || *s == '\r') *s = ' ';
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

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    profile *p = (profile *)user;
    char name[512];
    size_t i;
    if (p->stacks) {
        char(*names)[NAME_LEN] = p->names, comm[32];
        fg_frame *frames = p->frames;
        size_t n = 0, k;
        int kernel = 0;
        const char *c = comm_at(p, s->tid, s->time, 0);
        if (c) snprintf(comm, sizeof comm, "%s", c);
        else snprintf(comm, sizeof comm, ":%u", (unsigned)s->tid);
        /* leaf first, as recorded */
        if (!s->callchain_nr) { /* no context marker: the address tells */
            frames[n].kind = frame_name(p, s, s->kind == JITANON_TRIM_NONE && s->ip >= KERNEL_START, names[n],
                                        sizeof names[n]);
            n++;
        }
        for (i = 0; i < s->callchain_nr && n < MAX_FRAMES; i++) {
            uint64_t ip = jitanon_perf_u64_at(s->callchain, i, s->big_endian);
            jitanon_inject_sample f;
            if (ip >= CTX_MAX) {
                /* perf drops a whole callchain with a marker other than these three
                   (some JITs' chains end in -1): so do we, keeping the sample */
                if (ip != CTX_KERNEL && ip != CTX_HV && ip != CTX_USER) {
                    n = 0;
                    break;
                }
                kernel = ip != CTX_USER;
                continue;
            }
            (void)jitanon_inject_sample_resolve(s, ip, &f);
            frames[n].kind = frame_name(p, &f, kernel, names[n], sizeof names[n]);
            n++;
        }
        for (k = 0; k < n; k++) {
            clean_name(names[k]);
            if (p->annotate && (frames[k].kind == FG_JIT || frames[k].kind == FG_PERFMAP || frames[k].kind == FG_KERNEL)) {
                size_t len = strlen(names[k]);
                if (len > NAME_LEN - 5) len = NAME_LEN - 5;
                memcpy(names[k] + len, frames[k].kind == FG_KERNEL ? "_[k]" : "_[j]", 5);
            }
            frames[k].name = names[k];
        }
        /* root first: the comm, then the chain reversed */
        frames[n].name = comm;
        frames[n].kind = FG_OTHER;
        clean_name(comm);
        for (k = 0; k < (n + 1) / 2; k++) {
            fg_frame tmp = frames[k];
            frames[k] = frames[n - k];
            frames[n - k] = tmp;
        }
        fg_add(&p->tree, frames, n + 1, 1);
        p->total++;
        return;
    }
    if (s->kind == JITANON_TRIM_JIT) {
        snprintf(name, sizeof name, "%.*s [jitdump]", (int)s->name.length, s->name.data);
    } else if (s->kind == JITANON_TRIM_ANON && s->name.length >= 6 && !memcmp(s->name.data, "//anon", 6)) {
        const char *m = map_name(p, s->pid, s->ip);
        if (m) snprintf(name, sizeof name, "%s [perf-%u.map]", m, (unsigned)s->pid);
        else snprintf(name, sizeof name, "[JIT] tid %u 0x%" PRIx64, (unsigned)s->pid, s->ip);
    } else if (s->kind != JITANON_TRIM_NONE) {
        snprintf(name, sizeof name, "[%.*s]", (int)s->name.length, s->name.data);
    } else {
        snprintf(name, sizeof name, "[unknown]");
    }
    add(p, name);
}

typedef struct entry {
    const char *name;
    uint64_t count;
} entry;

static int by_count(const void *a, const void *b)
{
    const entry *x = (const entry *)a, *y = (const entry *)b;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static int by_tid_time(const void *a, const void *b)
{
    const task_event *x = (const task_event *)a, *y = (const task_event *)b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* First pass (stacks only): the COMM and FORK records, which on_sample does not see. */
static jitanon_result read_tasks(profile *p, const char *path, jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_result res = jitanon_perf_reader_open(&r, path, NULL, err);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, err)) == JITANON_OK) {
        task_event e;
        if (rec.type != JITANON_PERF_RECORD_COMM && rec.type != JITANON_PERF_RECORD_FORK) continue;
        memset(&e, 0, sizeof e);
        e.time = (rec.sid.present & JITANON_PERF_SAMPLE_TIME) ? rec.sid.time : 0;
        e.seq = p->ntasks;
        if (rec.type == JITANON_PERF_RECORD_COMM) {
            e.tid = rec.comm.tid;
            e.from_tid = rec.comm.tid;
            e.comm = (char *)malloc(rec.comm.comm.length + 1);
            if (!e.comm) exit(3);
            memcpy(e.comm, rec.comm.comm.data, rec.comm.comm.length);
            e.comm[rec.comm.comm.length] = 0;
        } else {
            e.tid = rec.task.tid;
            e.from_tid = rec.task.ptid;
            e.time = rec.task.time;
        }
        if (p->ntasks == p->tasks_cap) {
            p->tasks_cap = p->tasks_cap ? p->tasks_cap * 2 : 256;
            p->tasks = (task_event *)realloc(p->tasks, p->tasks_cap * sizeof *p->tasks);
            if (!p->tasks) exit(3);
        }
        p->tasks[p->ntasks++] = e;
    }
    jitanon_perf_reader_release(&r);
    if (p->ntasks) qsort(p->tasks, p->ntasks, sizeof *p->tasks, by_tid_time);
    return res == JITANON_END ? JITANON_OK : res;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: symbolize [--jitdump-dir DIR] [--top N] [--folded [--annotate]] [--svg FILE] [--title T] perf.data\n"
               "  (default)        flat profile of the samples' own addresses, the top N (25) names\n"
               "  --folded         one line per distinct call stack: comm;root;...;leaf count\n"
               "  --annotate       JIT frames end in _[j], kernel frames in _[k] (flamegraph.pl --color=java)\n"
               "  --svg FILE       the stacks as a flame graph (SVG: hover, search, click to zoom)\n"
               "  --title T        the flame graph's title\n"
               "  --jitdump-dir D  where to look for jit-<pid>.dump when the recorded path does not exist\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL, *svg = NULL, *title = NULL;
    jitanon_inject_opts o;
    jitanon_perf_reader r;
    jitanon_error err;
    jitanon_result res;
    profile p;
    size_t i, top = 25;
    int folded = 0, status = 0;
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    for (i = 1; i < (size_t)argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--jitdump-dir") && i + 1 < (size_t)argc) o.jitdump_dir = argv[++i];
        else if (!strcmp(a, "--top") && i + 1 < (size_t)argc) top = (size_t)atol(argv[++i]);
        else if (!strcmp(a, "--svg") && i + 1 < (size_t)argc) svg = argv[++i];
        else if (!strcmp(a, "--title") && i + 1 < (size_t)argc) title = argv[++i];
        else if (!strcmp(a, "--folded")) folded = 1;
        else if (!strcmp(a, "--annotate")) p.annotate = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(stdout), 0;
        else if (a[0] == '-' && a[1]) return fprintf(stderr, "symbolize: unknown option %s\n", a), usage(stderr), 2;
        else if (path) return fprintf(stderr, "symbolize: one perf.data only (%s, %s)\n", path, a), 2;
        else path = a;
    }
    if (!path) return usage(stderr), 2;
    p.stacks = folded || svg;
    if (p.stacks && !strcmp(path, "-"))
        return fprintf(stderr, "symbolize: --folded and --svg read the recording twice: give a file, not -\n"), 2;
    o.on_sample = on_sample;
    o.io.user = &p;
    fg_init(&p.tree);
    if (p.stacks) {
        p.names = (char(*)[NAME_LEN])malloc((MAX_FRAMES + 1) * sizeof *p.names);
        p.frames = (fg_frame *)malloc((MAX_FRAMES + 1) * sizeof *p.frames);
        if (!p.names || !p.frames) exit(3);
    }
    res = p.stacks ? read_tasks(&p, path, &err) : JITANON_OK;
    if (res == JITANON_OK) {
        res = jitanon_perf_reader_open(&r, path, NULL, &err);
        if (res == JITANON_OK) res = jitanon_inject(&r, NULL, &o, NULL, &err); /* no output: resolve only */
        jitanon_perf_reader_release(&r);
    }
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "symbolize: %s: %s\n", path, msg);
        status = 1;
    } else if (p.stacks) {
        if (folded) fg_write_folded(&p.tree, stdout);
        if (svg) {
            FILE *f = fopen(svg, "w");
            if (f) fg_write_svg(&p.tree, f, title ? title : path);
            if (!f || ferror(f) | fclose(f)) {
                fprintf(stderr, "symbolize: cannot write %s\n", svg);
                status = 1;
            }
        }
    } else {
        /* the flat profile: the root's children, most samples first */
        entry *v = (entry *)malloc(p.tree.n * sizeof *v);
        size_t n = 0;
        uint32_t c;
        if (!v) exit(3);
        for (c = p.tree.nodes[0].child; c; c = p.tree.nodes[c].sibling, n++) {
            v[n].name = p.tree.str + p.tree.nodes[c].name;
            v[n].count = p.tree.nodes[c].total;
        }
        if (n) qsort(v, n, sizeof *v, by_count);
        printf("%" PRIu64 " samples\n", p.total);
        for (i = 0; i < n && i < top; i++)
            printf("%6.2f%%  %8" PRIu64 "  %s\n", 100.0 * (double)v[i].count / (double)p.total, v[i].count, v[i].name);
        free(v);
    }
    free_map(&p);
    for (i = 0; i < p.ntasks; i++) free(p.tasks[i].comm);
    free(p.tasks);
    fg_release(&p.tree);
    free(p.names);
    free(p.frames);
    return status;
}
