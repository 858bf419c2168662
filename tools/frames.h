/* frames.h: how the tools name a frame (symbolize, jitanon-record: their tables, folded
   stacks, flame graphs), in one place, so that the same address reads the same in each.
   Needs jitanon.h (the perf map parser, jitanon_inject_sample) and flamegraph.h (the
   kinds).  Not part of jitanon.h.

       fr_maps maps;
       fr_maps_init(&maps, dir);                       // perf maps: dir first, then /tmp
       kind = fr_sample(&maps, &s, kernel, out, cap);  // a sample or a callchain frame
       kind = fr_name(kernel, sym, symlen, kind, mapping, maplen, out, cap);  // the rule
       n = fr_stack(&maps, &s, names, NAME_LEN, frames, max, each, user);     // its stack
       fr_root_first(frames, n, comm);                 // for fg_add: comm, root .. leaf
       fr_maps_release(&maps);

   The rule, as perf script names frames of jitanon-inject's output:
     - kernel code (after the callchain's kernel marker, or a sample's own address in the
       kernel): [kernel.kallsyms] (no kernel symbols are read);
     - JIT code: the jitdump's function name; where the dump names nothing (trimmed
       //anon parts), the perf map's name, else [unknown];
     - other mappings: [file], the basename of the executable or library, or the
       mapping's own name when it has brackets ([vdso]): no ELF symbol tables are read;
     - addresses in no mapping: [unknown].
   Allocation failure exits with status 3, as the tools do. */
#ifndef FRAMES_H
#define FRAMES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x86-64 and arm64 kernels live in the upper half */
#define FR_KERNEL_START 0x8000000000000000u
#define FR_MAX_PIDS 64 /* perf maps held at once; the least recently loaded goes first */

typedef struct fr_map {
    uint32_t pid;
    jitanon_perfmap *map; /* NULL: none found */
} fr_map;

typedef struct fr_maps {
    const char *dir; /* looked in before /tmp (NULL: /tmp alone) */
    fr_map m[FR_MAX_PIDS];
    size_t n, next;
} fr_maps;

static void fr_maps_init(fr_maps *ms, const char *dir)
{
    memset(ms, 0, sizeof *ms);
    ms->dir = dir;
}

static void fr_maps_release(fr_maps *ms)
{
    size_t i;
    for (i = 0; i < ms->n; i++) jitanon_perfmap_destroy(ms->m[i].map);
    ms->n = 0;
}

/* The perf map of pid at path, parsed by the library (damaged lines skipped), or NULL. */
static jitanon_perfmap *fr__load(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    jitanon_perfmap_opts o;
    jitanon_perfmap *m = NULL;
    if (!f) return NULL;
    do {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            if (!(buf = (char *)realloc(buf, cap))) exit(3);
        }
        len += got = fread(buf + len, 1, cap - len, f);
    } while (got);
    fclose(f);
    memset(&o, 0, sizeof o); /* the default allocator, no limit */
    if (jitanon_perfmap_load_memory(buf, len, &o, &m, NULL) != JITANON_OK) m = NULL;
    free(buf);
    return m;
}

/* The perf map's name for ip in process pid (length in *len), or NULL. */
static const char *fr_map_name(fr_maps *ms, uint32_t pid, uint64_t ip, size_t *len)
{
    const jitanon_perfmap_entry *e;
    fr_map *slot = NULL;
    size_t i;
    for (i = 0; i < ms->n && !slot; i++)
        if (ms->m[i].pid == pid) slot = &ms->m[i];
    if (!slot) {
        char path[4200];
        if (ms->n < FR_MAX_PIDS) slot = &ms->m[ms->n++];
        else {
            slot = &ms->m[ms->next];
            ms->next = (ms->next + 1) % FR_MAX_PIDS;
            jitanon_perfmap_destroy(slot->map);
        }
        slot->pid = pid;
        slot->map = NULL;
        if (ms->dir && (size_t)snprintf(path, sizeof path, "%s/perf-%u.map", ms->dir, (unsigned)pid) < sizeof path)
            slot->map = fr__load(path);
        if (!slot->map) {
            snprintf(path, sizeof path, "/tmp/perf-%u.map", (unsigned)pid);
            slot->map = fr__load(path);
        }
    }
    if (!slot->map || !(e = jitanon_perfmap_lookup(slot->map, ip))) return NULL;
    *len = e->name.length;
    return e->name.data;
}

/* Executable anonymous memory, where JIT code lives: //anon, [anon:name], /memfd:. */
static int fr_is_anon(const jitanon_str *n)
{
    return (n->length >= 6 && (!memcmp(n->data, "//anon", 6) || !memcmp(n->data, "[anon:", 6))) ||
           (n->length >= 7 && !memcmp(n->data, "/memfd:", 7));
}

/* A sample's own address in the kernel (no callchain marker to say so): the injector
   resolves it to the kernel's mapping; a process mapping never holds it. */
static int fr_in_kernel(const jitanon_inject_sample *s)
{
    return s->ip >= FR_KERNEL_START &&
           (s->kind == JITANON_TRIM_NONE || (s->kind == JITANON_TRIM_FILE && s->cpumode != JITANON_PERF_MISC_USER));
}

/* The rule (see the top): kernel code; else a symbol (sym, symlen > 0) of kind `kind`;
   else the mapping's name; else [unknown].  Returns the frame's kind. */
static fg_kind fr_name(int kernel, const char *sym, size_t symlen, fg_kind kind, const char *mapping, size_t maplen,
                       char *out, size_t cap)
{
    size_t i, b = 0;
    if (kernel) return snprintf(out, cap, "[kernel.kallsyms]"), FG_KERNEL;
    if (sym && symlen) return snprintf(out, cap, "%.*s", (int)symlen, sym), kind;
    if (mapping && maplen) {
        if (mapping[0] == '[') return snprintf(out, cap, "%.*s", (int)maplen, mapping), FG_NATIVE;
        for (i = 0; i < maplen; i++)
            if (mapping[i] == '/') b = i + 1;
        return snprintf(out, cap, "[%.*s]", (int)(maplen - b), mapping + b), FG_NATIVE;
    }
    return snprintf(out, cap, "[unknown]"), FG_UNKNOWN;
}

/* A sample (or a callchain frame resolved with jitanon_inject_sample_resolve) named by
   the rule; kernel: it is kernel code (the callchain's marker, or fr_in_kernel). */
static fg_kind fr_sample(fr_maps *ms, const jitanon_inject_sample *s, int kernel, char *out, size_t cap)
{
    const char *m;
    size_t len = 0;
    if (s->kind == JITANON_TRIM_JIT) return fr_name(0, s->name.data, s->name.length, FG_JIT, NULL, 0, out, cap);
    if (kernel) return fr_name(1, NULL, 0, FG_KERNEL, NULL, 0, out, cap);
    if (s->kind == JITANON_TRIM_ANON && fr_is_anon(&s->name)) {
        m = fr_map_name(ms, s->pid, s->ip, &len);
        return fr_name(0, m, len, FG_PERFMAP, NULL, 0, out, cap);
    }
    if (s->kind != JITANON_TRIM_NONE) return fr_name(0, NULL, 0, FG_NATIVE, s->name.data, s->name.length, out, cap);
    return fr_name(0, NULL, 0, FG_UNKNOWN, NULL, 0, out, cap);
}

/* A name made fit for one line of folded stacks: ';' separates frames there. */
static void fr_clean(char *s)
{
    for (; *s; s++)
        if (*s == ';') *s = ':';
        else if (*s == '\n' || *s == '\r') *s = ' ';
}

/* Told of each frame of fr_stack as it is named: its index, the sample it resolved to,
   whether it is kernel code, whether it is the first of its context (the leaf, or the
   first after a marker: a return address elsewhere), its name (not yet fr_clean-ed). */
typedef void (*fr_each_fn)(void *user, size_t i, const jitanon_inject_sample *f, int kernel, int first,
                           const char *name, fg_kind kind);

/* A sample's stack, leaf first, named by the rule into frames[0..n) (their names in
   `names`, rows of name_len bytes, fr_clean-ed), at most max: its callchain's entries,
   each in the context its markers set; a chain holding another marker (a guest's, some
   JITs' -1) is dropped whole, as perf drops it (n = 0); without a callchain, the
   sample's own address.  `each` may be NULL.  Returns n. */
static size_t fr_stack(fr_maps *ms, const jitanon_inject_sample *s, char *names, size_t name_len, fg_frame *frames,
                       size_t max, fr_each_fn each, void *user)
{
    size_t n = 0, i, k;
    int kernel = 0, first = 1;
    if (!s->callchain_nr && max) { /* no context marker: the address tells */
        int kern = fr_in_kernel(s);
        frames[0].kind = fr_sample(ms, s, kern, names, name_len);
        if (each) each(user, 0, s, kern, 1, names, frames[0].kind);
        n = 1;
    }
    for (i = 0; i < s->callchain_nr && n < max; i++) {
        uint64_t ip = jitanon_perf_u64_at(s->callchain, i, s->big_endian);
        jitanon_inject_sample f;
        if (ip >= JITANON_PERF_CONTEXT_MAX) {
            if (ip != JITANON_PERF_CONTEXT_KERNEL && ip != JITANON_PERF_CONTEXT_HV && ip != JITANON_PERF_CONTEXT_USER) {
                n = 0;
                break;
            }
            kernel = ip != JITANON_PERF_CONTEXT_USER;
            first = 1;
            continue;
        }
        (void)jitanon_inject_sample_resolve(s, ip, &f);
        frames[n].kind = fr_sample(ms, &f, kernel, names + n * name_len, name_len);
        if (each) each(user, n, &f, kernel, first, names + n * name_len, frames[n].kind);
        first = 0;
        n++;
    }
    for (k = 0; k < n; k++) {
        fr_clean(names + k * name_len);
        frames[k].name = names + k * name_len;
    }
    return n;
}

/* frames[0..n) leaf first -> frames[0..n] root first under `root` (the comm), as fg_add
   takes a stack: frames has room for n + 1. */
static void fr_root_first(fg_frame *frames, size_t n, const char *root)
{
    size_t k;
    frames[n].name = root;
    frames[n].kind = FG_OTHER;
    for (k = 0; k < (n + 1) / 2; k++) {
        fg_frame t = frames[k];
        frames[k] = frames[n - k];
        frames[n - k] = t;
    }
}

#endif
