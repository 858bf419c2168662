/* frames.h: how the tools name a frame (symbolize, jitanon-record: their tables, folded
   stacks, flame graphs), in one place, so that the same address reads the same in each:
   the library's frame iterator names it (jitanon_inject_frame_iter, with FR_WANT), this
   turns its jitanon_frame into one line's name.  Needs jitanon.h and flamegraph.h (the
   kinds).  Not part of jitanon.h.

       kind = fr_name(&frame, out, cap);                                  // one frame
       kind = fr_sample(s, out, cap);                                     // a sample's own ip
       n = fr_stack(s, names, NAME_LEN, frames, max, each, user);         // its stack
       fr_root_first(frames, n, comm);                 // for fg_add: comm, root .. leaf

   The rule, as perf script names frames of jitanon-inject's output (perf's symbol where
   it prints one; where it prints [unknown], the file, which says more in a flame graph):
     - JIT code: the jitdump's function name; in anonymous memory (//anon, [anon:...],
       /memfd:...) the perf map's name, else [unknown];
     - kernel code: its kallsyms symbol, else [kernel.kallsyms] (a module: [module]);
     - other mappings: the file's ELF symbol as perf 6.1 finds it (C++ names demangled
       when the tool links a demangler: symbols.h), also in the jitted-*.so files of an
       injected recording; where the file has none, [file] (its basename; a bracketed
       mapping's own name: [vdso]);
     - addresses in no mapping: [unknown].
   Allocation failure exits with status 3, as the tools do. */
#ifndef FRAMES_H
#define FRAMES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what the tools ask of the frame iterator: every name perf script prints, and the
   file's build-id (pprof's Mappings; found on the way to the symbols anyway) */
#define FR_WANT                                                                                                   \
    (JITANON_FRAME_WANT_PERF_MAP | JITANON_FRAME_WANT_SYMBOL | JITANON_FRAME_WANT_UNWIND | JITANON_FRAME_WANT_BUILD_ID)

/* The last path component of n (length in *len). */
static const char *fr__base(jitanon_str n, size_t *len)
{
    size_t i, b = 0;
    for (i = 0; i < n.length; i++)
        if (n.data[i] == '/') b = i + 1;
    *len = n.length - b;
    return n.data + b;
}

/* The file a frame is in holds JIT code's names: jitanon-inject's jitted-<pid>-<n>.so for
   a function, jitted-<pid>-r<N>.so for a region, jitted-<pid>.so for a process (FG_JIT),
   its jitted-<pid>.map.so or a perf-<pid>.map (FG_PERFMAP). */
static fg_kind fr__jitted(jitanon_str path)
{
    size_t len;
    const char *b = fr__base(path, &len);
    if (len > 9 && !memcmp(b, "perf-", 5) && !memcmp(b + len - 4, ".map", 4)) return FG_PERFMAP;
    if (len < 10 || memcmp(b, "jitted-", 7) || memcmp(b + len - 3, ".so", 3)) return FG_NATIVE;
    return len >= 14 && !memcmp(b + len - 7, ".map.so", 7) ? FG_PERFMAP : FG_JIT;
}

/* Executable anonymous memory, where JIT code lives: what perf names from a perf map
   (//anon, /dev/zero, /anon_hugepage) and what it leaves unnamed ([anon:name], /memfd:). */
static int fr_is_anon(jitanon_str n)
{
    return (n.length >= 6 && (!memcmp(n.data, "//anon", 6) || !memcmp(n.data, "[anon:", 6))) ||
           (n.length >= 7 && !memcmp(n.data, "/memfd:", 7)) || (n.length >= 9 && !memcmp(n.data, "/dev/zero", 9)) ||
           (n.length >= 14 && !memcmp(n.data, "/anon_hugepage", 14));
}

/* The rule (see the top) for one frame of the iterator.  Returns the frame's kind. */
static fg_kind fr_name(const jitanon_frame *f, char *out, size_t cap)
{
    size_t len;
    const char *b;
    switch (f->kind) {
    case JITANON_FRAME_JIT:
    case JITANON_FRAME_PERF_MAP:
        if (!f->name.length) break;
        snprintf(out, cap, "%.*s", (int)f->name.length, f->name.data);
        return f->kind == JITANON_FRAME_JIT ? FG_JIT : FG_PERFMAP;
    case JITANON_FRAME_KERNEL:
        if (f->name.length) snprintf(out, cap, "%.*s", (int)f->name.length, f->name.data);
        else if (!f->path.length || f->path.data[0] == '[') snprintf(out, cap, "[kernel.kallsyms]");
        else { /* a module, by its file's name less .ko, as perf names it */
            b = fr__base(f->path, &len);
            if (len > 3 && !memcmp(b + len - 3, ".ko", 3)) len -= 3;
            snprintf(out, cap, "[%.*s]", (int)len, b);
        }
        return FG_KERNEL;
    case JITANON_FRAME_FILE:
        if (f->name.length) {
            snprintf(out, cap, "%.*s", (int)f->name.length, f->name.data);
            return fr__jitted(f->path);
        }
        if (fr_is_anon(f->path) || !f->path.length) break;
        if (f->path.data[0] == '[') snprintf(out, cap, "%.*s", (int)f->path.length, f->path.data);
        else {
            b = fr__base(f->path, &len);
            snprintf(out, cap, "[%.*s]", (int)len, b);
        }
        return FG_NATIVE;
    default:
        break;
    }
    snprintf(out, cap, "[unknown]");
    return FG_UNKNOWN;
}

/* A sample's own address (in the kernel's maps when its cpumode says kernel), named by
   the rule; *f (may be NULL) gets the frame. */
static fg_kind fr_sample(const jitanon_inject_sample *s, char *out, size_t cap, jitanon_frame *f)
{
    jitanon_frame own;
    if (!f) f = &own;
    (void)jitanon_inject_frame_at(s, s->ip, s->cpumode != JITANON_PERF_MISC_USER && s->cpumode != 5u /* guest user */,
                                  FR_WANT & ~JITANON_FRAME_WANT_UNWIND, f);
    return fr_name(f, out, cap);
}

/* A name made fit for one line of folded stacks: ';' separates frames there. */
static void fr_clean(char *s)
{
    for (; *s; s++)
        if (*s == ';') *s = ':';
        else if (*s == '\n' || *s == '\r') *s = ' ';
}

/* Told of each frame of fr_stack as it is named: its index, the sample, the frame,
   whether it is the first of its context (the leaf, or the first after the kernel's
   part: a return address elsewhere), its name (not yet fr_clean-ed). */
typedef void (*fr_each_fn)(void *user, size_t i, const jitanon_inject_sample *s, const jitanon_frame *f, int first,
                           const char *name, fg_kind kind);

/* A sample's stack, leaf first, as the library's frame iterator gives it (FR_WANT: the
   callchain in the contexts its markers set, a chain perf drops dropped whole (n = 0),
   DWARF-unwound user frames of a --call-graph dwarf sample; without either, the sample's
   own address), named by the rule into frames[0..n) (their names in `names`, rows of
   name_len bytes, fr_clean-ed), at most max.  `each` may be NULL.  Returns n. */
static size_t fr_stack(const jitanon_inject_sample *s, char *names, size_t name_len, fg_frame *frames, size_t max,
                       fr_each_fn each, void *user)
{
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    size_t n = 0, k;
    int kernel = -1;
    jitanon_inject_frame_iter_begin(&it, s, FR_WANT);
    while (n < max && jitanon_inject_frame_iter_next(&it, &f)) {
        frames[n].kind = fr_name(&f, names + n * name_len, name_len);
        if (each) each(user, n, s, &f, f.kernel != kernel, names + n * name_len, frames[n].kind);
        kernel = f.kernel;
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
