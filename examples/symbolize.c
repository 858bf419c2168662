/* symbolize: the profiler's side of jitanon.  Resolves every sample of a perf.data
   against the jitdumps it names, in memory, with the trimming engine - no ELF files are
   written (the way samply reads jitdumps) - and prints a flat profile.

   usage: symbolize [--jitdump-dir DIR] [--top N] perf.data

   Samples in //anon memory are named from /tmp/perf-<pid>.map when it exists, as perf
   report does; the rest show the mapping they landed in. */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *name;
    uint64_t count;
} entry;

typedef struct perfmap_line {
    uint64_t start, size;
    char *name;
} perfmap_line;

typedef struct profile {
    entry *v;
    size_t n, cap;
    uint64_t total;
    uint32_t map_pid;      /* the pid whose perf map is loaded (0: none tried yet) */
    perfmap_line *map;
    size_t map_n;
} profile;

static void add(profile *p, const char *name)
{
    size_t i;
    p->total++;
    for (i = 0; i < p->n; i++) /* a flat profile has few distinct names: a scan is fine */
        if (!strcmp(p->v[i].name, name)) {
            p->v[i].count++;
            return;
        }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->v = (entry *)realloc(p->v, p->cap * sizeof *p->v);
        if (!p->v) exit(3);
    }
    p->v[p->n].name = strdup(name);
    p->v[p->n++].count = 1;
}

static void free_map(profile *p)
{
    size_t i;
    for (i = 0; i < p->map_n; i++) free(p->map[i].name);
    free(p->map);
    p->map = NULL;
    p->map_n = 0;
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
        m.name = strdup(line + off);
        p->map[p->map_n++] = m;
    }
    fclose(f);
}

static void on_sample(void *user, const jitanon_inject_sample *s)
{
    profile *p = (profile *)user;
    char name[512];
    size_t i;
    if (s->kind == JITANON_TRIM_JIT) {
        snprintf(name, sizeof name, "%.*s [jitdump]", (int)s->name.length, s->name.data);
    } else if (s->kind == JITANON_TRIM_ANON && s->name.length >= 6 && !memcmp(s->name.data, "//anon", 6)) {
        load_map(p, s->pid);
        snprintf(name, sizeof name, "[JIT] tid %u 0x%" PRIx64, (unsigned)s->pid, s->ip);
        for (i = 0; i < p->map_n; i++)
            if (s->ip - p->map[i].start < p->map[i].size) {
                snprintf(name, sizeof name, "%s [perf-%u.map]", p->map[i].name, (unsigned)s->pid);
                break;
            }
    } else if (s->kind != JITANON_TRIM_NONE) {
        snprintf(name, sizeof name, "[%.*s]", (int)s->name.length, s->name.data);
    } else {
        snprintf(name, sizeof name, "[unknown]");
    }
    add(p, name);
}

static int by_count(const void *a, const void *b)
{
    const entry *x = (const entry *)a, *y = (const entry *)b;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    jitanon_inject_opts o;
    jitanon_perf_reader r;
    jitanon_error err;
    jitanon_result res;
    profile p;
    size_t i, top = 25;
    memset(&o, 0, sizeof o);
    memset(&p, 0, sizeof p);
    for (i = 1; i < (size_t)argc; i++) {
        if (!strcmp(argv[i], "--jitdump-dir") && i + 1 < (size_t)argc) o.jitdump_dir = argv[++i];
        else if (!strcmp(argv[i], "--top") && i + 1 < (size_t)argc) top = (size_t)atol(argv[++i]);
        else path = argv[i];
    }
    if (!path) return fprintf(stderr, "usage: symbolize [--jitdump-dir DIR] [--top N] perf.data\n"), 2;
    o.on_sample = on_sample;
    o.io.user = &p;
    res = jitanon_perf_reader_open(&r, path, NULL, &err);
    if (res == JITANON_OK) res = jitanon_inject(&r, NULL, &o, NULL, &err); /* no output: resolve only */
    jitanon_perf_reader_release(&r);
    if (res != JITANON_OK) {
        char msg[512];
        jitanon_format_error(msg, sizeof msg, &err);
        fprintf(stderr, "symbolize: %s: %s\n", path, msg);
        return 1;
    }
    qsort(p.v, p.n, sizeof *p.v, by_count);
    printf("%" PRIu64 " samples\n", p.total);
    for (i = 0; i < p.n && i < top; i++)
        printf("%6.2f%%  %8" PRIu64 "  %s\n", 100.0 * (double)p.v[i].count / (double)p.total, p.v[i].count, p.v[i].name);
    for (i = 0; i < p.n; i++) free(p.v[i].name);
    free(p.v);
    free_map(&p);
    return 0;
}
