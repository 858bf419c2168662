/* -- Injection -------------------------------------------------------------------------- */

JITANON_API int jitanon_is_jitdump_marker(const char *path, size_t len, uint32_t *pid)
{
    size_t base = len, i;
    uint64_t v = 0;
    while (base > 0 && path[base - 1] != '/') base--;
    path += base;
    len -= base;
    /* "jit-" digits ".dump", nothing else: perf's rule, and our guard against opening
       arbitrary files named by an untrusted recording. */
    if (len < 4 + 1 + 5 || memcmp(path, "jit-", 4) != 0 || memcmp(path + len - 5, ".dump", 5) != 0) return 0;
    for (i = 4; i < len - 5; i++) {
        if (path[i] < '0' || path[i] > '9') return 0;
        v = v * 10 + (uint64_t)(path[i] - '0');
        if (v > UINT32_MAX) return 0;
    }
    if (pid) *pid = (uint32_t)v;
    return 1;
}

JITANON_API uint64_t jitanon_tsc_to_perf_time(uint64_t cyc, uint64_t time_shift, uint64_t time_mult,
                                              uint64_t time_zero, int extended, uint64_t time_cycles,
                                              uint64_t time_mask, int cap_user_time_zero, int cap_user_time_short)
{
    uint64_t quot, rem, shift = time_shift & 63;
    if (extended && !cap_user_time_zero) return 0;
    if (extended && cap_user_time_short) cyc = time_cycles + ((cyc - time_cycles) & time_mask);
    quot = cyc >> shift;
    rem = cyc & (((uint64_t)1 << shift) - 1);
    return time_zero + quot * time_mult + ((rem * time_mult) >> shift);
}

/* One jitted function known to the injector: where its code lives in which ELF file. */
typedef struct jitanon__inj_func {
    uint32_t pid, tid;      /* of the synthesized MMAP2s (the marker's process) */
    uint64_t code_index, pgoff, code_addr;
    size_t path;            /* offset of the ELF path in the path pool */
    jitanon_str name;       /* a view into the dump, which lives as long as the injector */
} jitanon__inj_func;

/* A CODE_LOAD or CODE_MOVE, in perf time. */
typedef struct jitanon__inj_event {
    uint64_t time, seq;
    uint64_t start, size;
    size_t func;
    int is_move;
} jitanon__inj_event;

typedef struct jitanon__inj_dump {
    jitanon_jitdump *dump;
    jitanon__inj_event *events;
    size_t count, cap, next;
} jitanon__inj_dump;

/* What happens to a buffered input record. */
enum { JITANON__INJ_PASS = 0, JITANON__INJ_DROP = 1, JITANON__INJ_PIECES = 2 };

/* A buffered input record, with the few decoded fields the decisions need (the raw
   bytes sit in the round buffer; names are kept as offsets into them). */
typedef struct jitanon__inj_rec {
    size_t off, size;       /* raw bytes in the round buffer */
    uint64_t time, offset;  /* perf time; byte offset in the input */
    uint32_t type, action, misc;
    uint32_t pid, tid, ppid, cpu;
    uint64_t start, len, pgoff;
    size_t name_off, name_len; /* mmap file name, relative to the record */
    size_t first_piece, pieces;
} jitanon__inj_rec;

typedef struct jitanon__inj_synth {
    uint64_t time, seq, start, size;
    size_t func;
} jitanon__inj_synth;

typedef struct jitanon__inj {
    const jitanon_inject_opts *opts;
    jitanon_inject_io io;
    jitanon_allocator a;
    jitanon_perf_reader *in;
    jitanon_perf_writer *out;
    jitanon_inject_stats *st;
    jitanon_error *err;
    jitanon_trim *trim;
    jitanon__inj_dump *dumps;
    size_t ndumps, dumps_cap;
    jitanon__inj_func *funcs;
    size_t nfuncs, funcs_cap;
    jitanon_membuf paths;   /* NUL-terminated ELF paths */
    jitanon_membuf elfbuf;  /* one ELF being written */
    uint32_t *dump_pids;    /* processes with a usable jitdump (for --anon=all) */
    size_t ndump_pids, dump_pids_cap;
    /* the current round */
    jitanon_membuf round;
    jitanon__inj_rec *recs;
    size_t nrecs, recs_cap;
    uint32_t *order;        /* sort permutation, plus as much scratch */
    size_t order_cap;
    jitanon_trim_piece *pieces;
    size_t npieces, pieces_cap;
    jitanon__inj_synth *synth;
    size_t nsynth, synth_cap;
    uint64_t last_time, seq, bytes_done;
    size_t mmap_attr;        /* the attr whose trailer synthesized MMAP2s carry */
    uint32_t marker_cpu;
    uint8_t *enc;            /* scratch for encoded MMAP2s */
    size_t enc_cap;
    int have_time_conv;
    jitanon_perf_record time_conv;
} jitanon__inj;

JITANON__PRIVATE void jitanon__inj_log(jitanon__inj *j, const char *fmt, const char *s, const jitanon_error *e)
{
    char msg[512], detail[256];
    if (!j->io.log) return;
    detail[0] = 0;
    if (e) jitanon_format_error(detail, sizeof detail, e);
    jitanon__fmt(msg, sizeof msg, fmt, s, detail);
    j->io.log(j->io.user, msg);
}

/* -- default I/O: the file system ------------------------------------------------------ */

JITANON__PRIVATE jitanon_jitdump *jitanon__inj_load_default(void *user, const char *path,
                                                            const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    (void)user;
#ifndef JITANON_NO_STDIO
    return jitanon_jitdump_load_file(path, opts, err);
#else
    (void)path;
    (void)opts;
    JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_STDIO");
    return NULL;
#endif
}

#if JITANON__POSIX
/* An existing file may be replaced only when it is a regular file that is itself a jitted
   stub (an ET_DYN ELF with a build-id, as we and perf write them) of reasonable size. */
JITANON__PRIVATE int jitanon__inj_replaceable(const char *path, const void *data, size_t size, int *identical)
{
    struct stat st;
    int fd, ok = 0;
    uint8_t *buf;
    *identical = 0;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)(64 << 20)) return 0;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    buf = (uint8_t *)JITANON_MALLOC((size_t)st.st_size + 1);
    if (buf && read(fd, buf, (size_t)st.st_size) == (ssize_t)st.st_size) {
        jitanon_elf_file f;
        ok = jitanon_elf_parse(&f, buf, (size_t)st.st_size, NULL) == JITANON_OK && f.type == 3 && f.build_id.size > 0;
        *identical = ok && (size_t)st.st_size == size && memcmp(buf, data, size) == 0;
    }
    JITANON_FREE(buf);
    close(fd);
    return ok;
}
#endif

JITANON__PRIVATE int jitanon__inj_write_default(void *user, const char *dir, const char *name, const void *data,
                                                size_t size)
{
#if JITANON__POSIX
    char path[4096], tmp[4200];
    int fd, identical;
    (void)user;
    if (jitanon__fmt(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return 1;
    jitanon__fmt(tmp, sizeof tmp, "%s/.%s.%u.tmp", dir, name, (unsigned)getpid());
    if (!jitanon__inj_replaceable(path, data, size, &identical)) return 1;
    if (identical) return 0; /* deterministic output: the same file is already there */
    fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return 1;
    if (jitanon__fd_write(&fd, data, size) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return 1;
    }
    return 0;
#else
    (void)user;
    (void)dir;
    (void)name;
    (void)data;
    (void)size;
    return 1;
#endif
}

/* -- bookkeeping ---------------------------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__inj_nomem(jitanon__inj *j, const char *what)
{
    return JITANON__FAIL(j->err, JITANON_ERR_NOMEM, j->in->stats.records, "out of memory (%s)", what);
}

JITANON__PRIVATE int jitanon__inj_has_dump(const jitanon__inj *j, uint32_t pid)
{
    size_t i;
    for (i = 0; i < j->ndump_pids; i++)
        if (j->dump_pids[i] == pid) return 1;
    return 0;
}

/* Stores a NUL-terminated path in the pool; returns its offset or SIZE_MAX. */
JITANON__PRIVATE size_t jitanon__inj_add_path(jitanon__inj *j, const char *dir, const char *name)
{
    size_t off = j->paths.size;
    static const char slash = '/', nul = 0;
    if (jitanon_membuf_write(&j->paths, dir, strlen(dir)) || jitanon_membuf_write(&j->paths, &slash, 1) ||
        jitanon_membuf_write(&j->paths, name, strlen(name)) || jitanon_membuf_write(&j->paths, &nul, 1))
        return SIZE_MAX;
    return off;
}

JITANON__PRIVATE const char *jitanon__inj_path(const jitanon__inj *j, size_t off)
{
    return (const char *)j->paths.data + off;
}

/* -- time -------------------------------------------------------------------------------- */

/* Record times of a dump in perf time; fails unless the recording's clock matches. */
JITANON__PRIVATE jitanon_result jitanon__inj_check_clock(jitanon__inj *j, const jitanon_jitdump *d, uint64_t off)
{
    size_t i;
    if (d->header.arch_timestamp) {
        if (!j->have_time_conv || !j->time_conv.time_conv.time_mult)
            return JITANON__FAIL(j->err, JITANON_ERR_CLOCK, off,
                                 "the jitdump has arch (TSC) timestamps but the recording has no TIME_CONV "
                                 "record; re-record with a newer perf, or make the JIT write CLOCK_MONOTONIC "
                                 "and record with `perf record -k mono`");
        return JITANON_OK;
    }
    for (i = 0; i < j->in->attr_count; i++)
        if (!j->in->attrs[i].use_clockid || j->in->attrs[i].clockid != 1)
            return JITANON__FAIL(j->err, JITANON_ERR_CLOCK, off,
                                 "jitdump timestamps are CLOCK_MONOTONIC but event %U was not recorded with it; "
                                 "re-record with `perf record -k mono`", (uint64_t)i);
    return JITANON_OK;
}

JITANON__PRIVATE uint64_t jitanon__inj_time(const jitanon__inj *j, const jitanon_jitdump *d, uint64_t t)
{
    const jitanon_perf_record *c = &j->time_conv;
    if (!d->header.arch_timestamp) return t;
    return jitanon_tsc_to_perf_time(t, c->time_conv.time_shift, c->time_conv.time_mult, c->time_conv.time_zero,
                                    c->time_conv.extended, c->time_conv.time_cycles, c->time_conv.time_mask,
                                    c->time_conv.cap_user_time_zero, c->time_conv.cap_user_time_short);
}

/* -- sorting: a stable merge sort of indices (rounds are nearly sorted already) ---------- */

typedef int (*jitanon__less_fn)(const void *ctx, uint32_t a, uint32_t b);

JITANON__PRIVATE void jitanon__msort(uint32_t *v, uint32_t *tmp, size_t n, jitanon__less_fn less, const void *ctx)
{
    size_t width, i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            size_t lo = i, mid = i + width < n ? i + width : n, hi = i + 2 * width < n ? i + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            if (mid >= hi || !less(ctx, v[mid], v[mid - 1])) { /* already in order */
                memcpy(tmp + lo, v + lo, (hi - lo) * sizeof *v);
                continue;
            }
            while (a < mid && b < hi) tmp[k++] = less(ctx, v[b], v[a]) ? v[b++] : v[a++];
            while (a < mid) tmp[k++] = v[a++];
            while (b < hi) tmp[k++] = v[b++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
}

JITANON__PRIVATE int jitanon__inj_rec_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__inj_rec *r = (const jitanon__inj_rec *)ctx;
    return r[a].time < r[b].time || (r[a].time == r[b].time && a < b);
}

JITANON__PRIVATE int jitanon__inj_ev_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__inj_event *e = (const jitanon__inj_event *)ctx;
    return e[a].time < e[b].time || (e[a].time == e[b].time && e[a].seq < e[b].seq);
}

/* Sorts an event array by (time, seq) through an index permutation. */
JITANON__PRIVATE int jitanon__inj_sort_events(jitanon__inj *j, jitanon__inj_event *ev, size_t n)
{
    uint32_t *idx, *tmp;
    jitanon__inj_event *copy;
    size_t i, bytes;
    if (n < 2) return 1;
    if (n > UINT32_MAX || !jitanon__mul_size(n, sizeof *ev, &bytes)) return 0;
    idx = (uint32_t *)jitanon__malloc(&j->a, n * sizeof *idx);
    tmp = (uint32_t *)jitanon__malloc(&j->a, n * sizeof *tmp);
    copy = (jitanon__inj_event *)jitanon__malloc(&j->a, bytes);
    if (idx && tmp && copy) {
        for (i = 0; i < n; i++) idx[i] = (uint32_t)i;
        jitanon__msort(idx, tmp, n, jitanon__inj_ev_less, ev);
        memcpy(copy, ev, bytes);
        for (i = 0; i < n; i++) ev[i] = copy[idx[i]];
    }
    jitanon__free(&j->a, idx, n * sizeof *idx);
    jitanon__free(&j->a, tmp, n * sizeof *tmp);
    jitanon__free(&j->a, copy, bytes);
    return idx && tmp && copy;
}

/* -- jitdumps -> ELF files and jit events ----------------------------------------------- */

typedef struct jitanon__inj_ctx {
    jitanon__inj_dump *jd;
    const char *dir;
    uint32_t pid, tid;
    uint64_t *indices; /* sorted code_index of every LOAD, for duplicate detection */
    uint32_t *used;    /* per sorted slot: how many loads with that index were named */
    size_t nindices, nalloc;
    jitanon_elf_builder pb; /* per-process layout */
    size_t ppath;
} jitanon__inj_ctx;

JITANON__PRIVATE int jitanon__u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Names repeat perf's (jitted-<pid>-<index>.so); a code_index a dump reuses gets a
   numbered suffix so that no earlier MMAP2 loses its file. */
JITANON__PRIVATE void jitanon__inj_func_name(jitanon__inj_ctx *c, const jitanon_jit_record *r, char *name, size_t cap)
{
    size_t lo = 0, hi = c->nindices, first, n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->indices[mid] < r->load.code_index) lo = mid + 1;
        else hi = mid;
    }
    first = lo;
    n = first < c->nindices ? c->used[first]++ : 0;
    if (n == 0) jitanon__fmt(name, cap, "jitted-%u-%U.so", (unsigned)r->load.pid, r->load.code_index);
    else jitanon__fmt(name, cap, "jitted-%u-%U-%U.so", (unsigned)r->load.pid, r->load.code_index, (uint64_t)n);
}

JITANON__PRIVATE jitanon_result jitanon__inj_push_event(jitanon__inj *j, jitanon__inj_dump *jd, uint64_t time,
                                                        uint64_t start, uint64_t size, size_t func, int is_move)
{
    jitanon__inj_event *e;
    if (!jitanon__grow(&j->a, (void **)&jd->events, &jd->cap, jd->count + 1, sizeof *e))
        return jitanon__inj_nomem(j, "jit events");
    e = &jd->events[jd->count++];
    e->time = time;
    e->seq = j->seq++;
    e->start = start;
    e->size = size;
    e->func = func;
    e->is_move = is_move;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__inj_push_func(jitanon__inj *j, jitanon__inj_ctx *c, const jitanon_jit_record *r,
                                                       uint64_t pgoff, size_t path)
{
    jitanon__inj_func *f;
    if (!jitanon__grow(&j->a, (void **)&j->funcs, &j->funcs_cap, j->nfuncs + 1, sizeof *f))
        return jitanon__inj_nomem(j, "functions");
    f = &j->funcs[j->nfuncs++];
    f->pid = c->pid;
    f->tid = r->load.pid == c->pid ? r->load.tid : c->tid;
    f->code_index = r->load.code_index;
    f->pgoff = pgoff;
    f->path = path;
    f->name = r->load.name;
    f->code_addr = r->load.code_addr;
    j->st->loads++;
    return jitanon__inj_push_event(j, c->jd, jitanon__inj_time(j, c->jd->dump, r->timestamp), r->load.code_addr,
                                   r->load.code_size, j->nfuncs - 1, 0);
}

JITANON__PRIVATE jitanon_result jitanon__inj_write_file(jitanon__inj *j, jitanon__inj_ctx *c, const char *name)
{
    if (j->io.write_elf(j->io.user, c->dir, name, j->elfbuf.data, j->elfbuf.size) != 0) {
        j->st->elf_refused++;
        jitanon__inj_log(j, "cannot write %s (%s): its functions get no mapping", name, NULL);
        return JITANON_ERR_WRITE;
    }
    j->st->elf_files++;
    j->st->elf_bytes += j->elfbuf.size;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__inj_load(jitanon__inj *j, jitanon__inj_ctx *c, const jitanon_jit_record *r,
                                                  const jitanon_jit_record *debug, const jitanon_jit_record *unwind)
{
    jitanon_elf_func fn;
    uint64_t pgoff = 0;
    jitanon_sink sink;
    jitanon_result res;
    char name[96];
    memset(&fn, 0, sizeof fn);
    fn.name = r->load.name;
    fn.code_addr = r->load.code_addr;
    fn.code = r->load.code;
    fn.debug = debug;
    fn.unwind = unwind;
    if (!j->out) return jitanon__inj_push_func(j, c, r, 0, SIZE_MAX); /* resolving only */
    if (j->opts->elf_layout == JITANON_ELF_PER_PROCESS) {
        if ((res = jitanon_elf_builder_add(&c->pb, &fn, &pgoff, j->err)) != JITANON_OK) return res;
        return jitanon__inj_push_func(j, c, r, pgoff, c->ppath);
    }
    j->elfbuf.size = 0;
    sink.write_fn = jitanon_membuf_write;
    sink.user = &j->elfbuf;
    jitanon__inj_func_name(c, r, name, sizeof name);
    {
        jitanon_elf_info info;
        res = jitanon_elf_write_function(sink, &c->jd->dump->header, &fn, &j->opts->elf, &info, j->err);
        if (res != JITANON_OK) return res;
        pgoff = info.text_offset;
    }
    if (jitanon__inj_write_file(j, c, name) != JITANON_OK) return JITANON_OK; /* logged; no mapping */
    {
        size_t path = jitanon__inj_add_path(j, c->dir, name);
        if (path == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
        return jitanon__inj_push_func(j, c, r, pgoff, path);
    }
}

/* A MOVE maps the function's file again at a new address: find the latest LOAD of the
   same code_index in this dump. */
JITANON__PRIVATE jitanon_result jitanon__inj_move(jitanon__inj *j, jitanon__inj_ctx *c, const jitanon_jit_record *r,
                                                  size_t first_func)
{
    size_t i = j->nfuncs;
    while (i > first_func) {
        i--;
        if (j->funcs[i].code_index == r->move.code_index) {
            j->st->moves++;
            return jitanon__inj_push_event(j, c->jd, jitanon__inj_time(j, c->jd->dump, r->timestamp),
                                           r->move.new_code_addr, r->move.code_size, i, 1);
        }
    }
    return JITANON_OK; /* a MOVE without its LOAD: nothing to map */
}

JITANON__PRIVATE jitanon_result jitanon__inj_walk(jitanon__inj *j, jitanon__inj_ctx *c)
{
    const jitanon_jitdump *d = c->jd->dump;
    const jitanon_jit_record *debug = NULL, *unwind = NULL;
    size_t i, first_func = j->nfuncs;
    jitanon_result res = JITANON_OK;
    for (i = 0; i < d->record_count && res == JITANON_OK; i++) {
        const jitanon_jit_record *r = &d->records[i];
        /* DEBUG_INFO and UNWINDING_INFO describe the next LOAD (as perf reads them). */
        if (r->id == JITANON_JIT_CODE_DEBUG_INFO) debug = r;
        else if (r->id == JITANON_JIT_CODE_UNWINDING_INFO) unwind = r;
        else if (r->id == JITANON_JIT_CODE_LOAD) {
            res = jitanon__inj_load(j, c, r, debug, unwind);
            debug = unwind = NULL;
        } else if (r->id == JITANON_JIT_CODE_MOVE) res = jitanon__inj_move(j, c, r, first_func);
    }
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__inj_index_loads(jitanon__inj *j, jitanon__inj_ctx *c)
{
    const jitanon_jitdump *d = c->jd->dump;
    size_t i, n = (size_t)d->stats.by_id[JITANON_JIT_CODE_LOAD];
    c->nalloc = n;
    c->indices = (uint64_t *)jitanon__malloc(&j->a, n * sizeof *c->indices);
    c->used = (uint32_t *)jitanon__malloc(&j->a, n * sizeof *c->used);
    if (!c->indices || !c->used) return jitanon__inj_nomem(j, "load index");
    for (i = 0; i < d->record_count && c->nindices < n; i++)
        if (d->records[i].id == JITANON_JIT_CODE_LOAD) c->indices[c->nindices++] = d->records[i].load.code_index;
    qsort(c->indices, c->nindices, sizeof *c->indices, jitanon__u64_cmp);
    memset(c->used, 0, n * sizeof *c->used);
    return JITANON_OK;
}

/* Writes the ELF files of one dump and queues its jit events.  Per-process layout: one
   builder collects every function, then one file is written. */
JITANON__PRIVATE jitanon_result jitanon__inj_process_dump(jitanon__inj *j, jitanon__inj_ctx *c)
{
    jitanon_result res;
    int per_process = j->out && j->opts->elf_layout == JITANON_ELF_PER_PROCESS;
    char name[64];
    if (!per_process && (res = jitanon__inj_index_loads(j, c)) != JITANON_OK) return res;
    if (per_process) {
        jitanon__fmt(name, sizeof name, "jitted-%u.so", (unsigned)c->pid);
        if ((c->ppath = jitanon__inj_add_path(j, c->dir, name)) == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
        if ((res = jitanon_elf_builder_init(&c->pb, &c->jd->dump->header, &j->opts->elf, j->err)) != JITANON_OK)
            return res;
    }
    if ((res = jitanon__inj_walk(j, c)) != JITANON_OK) return res;
    if (per_process) {
        jitanon_sink sink;
        sink.write_fn = jitanon_membuf_write;
        sink.user = &j->elfbuf;
        j->elfbuf.size = 0;
        if ((res = jitanon_elf_builder_finish(&c->pb, sink, NULL, j->err)) != JITANON_OK) return res;
        if (jitanon__inj_write_file(j, c, name) != JITANON_OK) c->jd->count = 0; /* no file: no mappings */
    }
    if (!jitanon__inj_sort_events(j, c->jd->events, c->jd->count)) return jitanon__inj_nomem(j, "event sort");
    c->jd->next = 0;
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__inj_ctx_free(jitanon__inj *j, jitanon__inj_ctx *c)
{
    jitanon__free(&j->a, c->indices, c->nalloc * sizeof *c->indices);
    jitanon__free(&j->a, c->used, c->nalloc * sizeof *c->used);
    if (j->out && j->opts->elf_layout == JITANON_ELF_PER_PROCESS) jitanon_elf_builder_free(&c->pb);
}

/* -- markers ------------------------------------------------------------------------------- */

/* Loads the dump a marker names: the recorded path first, then opts.jitdump_dir. */
JITANON__PRIVATE jitanon_jitdump *jitanon__inj_open_dump(jitanon__inj *j, const jitanon_str *name, char *found,
                                                         size_t cap)
{
    jitanon_error e;
    jitanon_jitdump *d;
    size_t base = name->length;
    if (name->length >= cap) return NULL;
    memcpy(found, name->data, name->length);
    found[name->length] = 0;
    d = j->io.load_dump(j->io.user, found, &j->opts->jitdump, &e);
    if (d || !j->opts->jitdump_dir) {
        if (!d) jitanon__inj_log(j, "cannot read jitdump %s: %s", found, &e);
        return d;
    }
    while (base > 0 && name->data[base - 1] != '/') base--;
    if (jitanon__fmt(found, cap, "%s/", j->opts->jitdump_dir) + (name->length - base) >= cap) return NULL;
    memcpy(found + strlen(found), name->data + base, name->length - base);
    found[strlen(j->opts->jitdump_dir) + 1 + (name->length - base)] = 0;
    d = j->io.load_dump(j->io.user, found, &j->opts->jitdump, &e);
    if (!d) jitanon__inj_log(j, "cannot read jitdump %s: %s", found, &e);
    return d;
}

JITANON__PRIVATE jitanon_result jitanon__inj_add_dump(jitanon__inj *j, jitanon_jitdump *d, const jitanon_perf_mmap *m,
                                                      const char *found)
{
    jitanon__inj_ctx c;
    jitanon_result res;
    char dir[4096];
    size_t dl = strlen(found);
    if (!jitanon__grow(&j->a, (void **)&j->dumps, &j->dumps_cap, j->ndumps + 1, sizeof *j->dumps) ||
        !jitanon__grow(&j->a, (void **)&j->dump_pids, &j->dump_pids_cap, j->ndump_pids + 1, sizeof *j->dump_pids)) {
        jitanon_jitdump_free(d);
        return jitanon__inj_nomem(j, "dumps");
    }
    memset(&j->dumps[j->ndumps], 0, sizeof *j->dumps);
    j->dumps[j->ndumps].dump = d;
    memset(&c, 0, sizeof c);
    c.jd = &j->dumps[j->ndumps++];
    c.pid = m->pid;
    c.tid = m->tid;
    /* ELFs go next to the dump (perf's choice) unless the caller picked a directory. */
    while (dl > 0 && found[dl - 1] != '/') dl--;
    if (j->opts->elf_dir) c.dir = j->opts->elf_dir;
    else if (dl == 0) c.dir = ".";
    else {
        memcpy(dir, found, dl - 1 ? dl - 1 : 1);
        dir[dl - 1 ? dl - 1 : 1] = 0;
        c.dir = dir;
    }
    res = jitanon__inj_process_dump(j, &c);
    jitanon__inj_ctx_free(j, &c);
    if (res != JITANON_OK) return res;
    j->dump_pids[j->ndump_pids++] = m->pid;
    if (j->opts->anon_mode == JITANON_ANON_RANGE) return jitanon_trim_set_jitdump(j->trim, m->pid, j->err);
    return JITANON_OK;
}

/* A usable dump consumes its marker (as perf does); an unusable one leaves the marker
   and its process exactly as recorded. */
JITANON__PRIVATE jitanon_result jitanon__inj_marker(jitanon__inj *j, const jitanon_perf_record *rec, jitanon__inj_rec *r)
{
    char found[4096];
    jitanon_jitdump *d;
    jitanon_result res;
    j->st->markers++;
    j->marker_cpu = rec->sid.cpu;
    d = jitanon__inj_open_dump(j, &rec->mmap.filename, found, sizeof found);
    if (!d) {
        j->st->dumps_failed++;
        return JITANON_OK; /* its process is left as it was recorded */
    }
    if (d->stats.by_id[JITANON_JIT_CODE_LOAD] == 0) {
        jitanon__inj_log(j, "jitdump %s holds no CODE_LOAD records%s", found, NULL);
        jitanon_jitdump_free(d);
        j->st->dumps_failed++;
        return JITANON_OK;
    }
    if (d->tail_error.type != JITANON_OK) jitanon__inj_log(j, "jitdump %s: %s (records before it are used)", found, &d->tail_error);
    if ((res = jitanon__inj_check_clock(j, d, rec->offset)) != JITANON_OK) {
        jitanon_jitdump_free(d);
        return res;
    }
    j->st->dumps_loaded++;
    r->action = JITANON__INJ_DROP;
    return jitanon__inj_add_dump(j, d, &rec->mmap, found);
}

/* -- one round: buffer, decide in time order, write in file order --------------------------- */

JITANON__PRIVATE int jitanon__inj_is_mmap(uint32_t type)
{
    return type == JITANON_PERF_RECORD_MMAP || type == JITANON_PERF_RECORD_MMAP2;
}

/* The earliest pending jit event over all dumps (few dumps: a linear scan is enough). */
JITANON__PRIVATE jitanon__inj_event *jitanon__inj_next_event(jitanon__inj *j, size_t *which)
{
    jitanon__inj_event *best = NULL;
    size_t i;
    for (i = 0; i < j->ndumps; i++) {
        jitanon__inj_dump *d = &j->dumps[i];
        jitanon__inj_event *e = d->next < d->count ? &d->events[d->next] : NULL;
        if (e && (!best || e->time < best->time || (e->time == best->time && e->seq < best->seq))) {
            best = e;
            *which = i;
        }
    }
    return best;
}

/* Applies every jit event up to `time` (all of them when `all`). */
JITANON__PRIVATE jitanon_result jitanon__inj_apply_until(jitanon__inj *j, uint64_t time, int all)
{
    size_t which = 0;
    jitanon__inj_event *e;
    while ((e = jitanon__inj_next_event(j, &which)) != NULL && (all || e->time <= time)) {
        const jitanon__inj_func *f = &j->funcs[e->func];
        jitanon__inj_synth *s;
        jitanon_result res = JITANON_OK;
        j->dumps[which].next++;
        if (e->size == 0) continue;
        if (j->opts->anon_mode == JITANON_ANON_RANGE)
            res = e->is_move ? jitanon_trim_move(j->trim, f->pid, e->time, 0, e->start, e->size, e->func, j->err)
                             : jitanon_trim_load(j->trim, f->pid, e->time, e->start, e->size, e->func, j->err);
        if (res != JITANON_OK && res != JITANON_ERR_INVALID_ARGUMENT) return res; /* wrapping ranges: skip */
        if (!jitanon__grow(&j->a, (void **)&j->synth, &j->synth_cap, j->nsynth + 1, sizeof *s))
            return jitanon__inj_nomem(j, "synthesized mmaps");
        s = &j->synth[j->nsynth++];
        s->time = e->time;
        s->seq = e->seq;
        s->start = e->start;
        s->size = e->size;
        s->func = e->func;
    }
    return JITANON_OK;
}

/* Decides what one mmap record becomes. */
JITANON__PRIVATE jitanon_result jitanon__inj_decide_mmap(jitanon__inj *j, jitanon__inj_rec *r,
                                                         const jitanon_perf_mmap *m)
{
    jitanon_trim_kind kind = jitanon_trim_classify(m->filename.data, m->filename.length);
    const jitanon_trim_piece *p = NULL;
    size_t n = 0, i;
    uint64_t map_id = 0;
    jitanon_result res;
    int dumped = kind == JITANON_TRIM_ANON && jitanon__inj_has_dump(j, m->pid);
    if (j->opts->anon_mode == JITANON_ANON_ALL && dumped) {
        r->action = JITANON__INJ_DROP;
        j->st->anon_dropped++;
        return JITANON_OK;
    }
    if (j->opts->anon_mode != JITANON_ANON_RANGE) return JITANON_OK;
    if (j->opts->on_sample) { /* remember the name, so samples can say where they landed */
        static const char nul = 0;
        map_id = j->paths.size;
        if (jitanon_membuf_write(&j->paths, m->filename.data, m->filename.length) ||
            jitanon_membuf_write(&j->paths, &nul, 1))
            return jitanon__inj_nomem(j, "mmap names");
    }
    res = jitanon_trim_mmap(j->trim, m->pid, r->time, m->start, m->len, m->pgoff, kind, map_id, &p, &n, j->err);
    if (res == JITANON_ERR_INVALID_ARGUMENT) return JITANON_OK; /* a wrapping range: pass it on */
    if (res != JITANON_OK || !dumped) return res;
    if (n == 1 && p[0].start == m->start && p[0].len == m->len) {
        j->st->anon_kept++;
        return JITANON_OK;
    }
    if (n == 0) j->st->anon_dropped++;
    else j->st->anon_split++;
    j->st->anon_pieces += n;
    if (!jitanon__grow(&j->a, (void **)&j->pieces, &j->pieces_cap, j->npieces + n, sizeof *j->pieces))
        return jitanon__inj_nomem(j, "pieces");
    r->action = n ? JITANON__INJ_PIECES : JITANON__INJ_DROP;
    r->first_piece = j->npieces;
    r->pieces = n;
    for (i = 0; i < n; i++) j->pieces[j->npieces++] = p[i];
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__inj_buffer(jitanon__inj *j, const jitanon_perf_record *rec)
{
    jitanon__inj_rec *r;
    if (!jitanon__grow(&j->a, (void **)&j->recs, &j->recs_cap, j->nrecs + 1, sizeof *r) ||
        jitanon_membuf_write(&j->round, rec->raw.data, rec->raw.size))
        return jitanon__inj_nomem(j, "round buffer");
    r = &j->recs[j->nrecs++];
    memset(r, 0, sizeof *r);
    r->off = j->round.size - rec->raw.size;
    r->size = rec->raw.size;
    r->offset = rec->offset;
    r->type = rec->type;
    r->misc = rec->misc;
    r->cpu = rec->sid.cpu;
    /* Records without a time (tool records) keep their place next to their neighbours. */
    if (rec->sid.present & JITANON_PERF_SAMPLE_TIME) j->last_time = rec->sid.time;
    r->time = j->last_time;
    if (jitanon__inj_is_mmap(rec->type)) {
        r->pid = rec->mmap.pid;
        r->tid = rec->mmap.tid;
        r->start = rec->mmap.start;
        r->len = rec->mmap.len;
        r->pgoff = rec->mmap.pgoff;
        r->name_off = (size_t)((const uint8_t *)rec->mmap.filename.data - rec->raw.data);
        r->name_len = rec->mmap.filename.length;
    } else if (rec->type == JITANON_PERF_RECORD_SAMPLE) {
        r->pid = rec->sid.pid;
        r->tid = rec->sid.tid;
        r->start = rec->sample.ip;
    } else if (rec->type == JITANON_PERF_RECORD_FORK) {
        r->pid = rec->task.pid;
        r->ppid = rec->task.ppid;
    } else if (rec->type == JITANON_PERF_RECORD_COMM) {
        r->pid = rec->comm.pid;
    } else if (rec->type == JITANON_PERF_RECORD_TIME_CONV) {
        j->time_conv = *rec;
        j->have_time_conv = 1;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_perf_mmap jitanon__inj_mmap_of(const jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon_perf_mmap m;
    memset(&m, 0, sizeof m);
    m.pid = r->pid;
    m.tid = r->tid;
    m.start = r->start;
    m.len = r->len;
    m.pgoff = r->pgoff;
    m.filename.data = (const char *)j->round.data + r->off + r->name_off;
    m.filename.length = r->name_len;
    return m;
}

#define JITANON__PERF_MISC_COMM_EXEC (1u << 13)

JITANON__PRIVATE void jitanon__inj_resolve(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon_sample_info s;
    jitanon_range where;
    memset(&s, 0, sizeof s);
    s.pid = r->pid;
    s.tid = r->tid;
    s.time = r->time;
    s.ip = r->start;
    s.kind = j->trim ? jitanon_trim_resolve(j->trim, r->pid, r->start, &where) : JITANON_TRIM_NONE;
    if (s.kind == JITANON_TRIM_JIT && where.id < j->nfuncs) {
        const jitanon__inj_func *f = &j->funcs[where.id];
        s.name = f->name;
        s.start = f->code_addr;
        s.code_index = f->code_index;
    } else if (s.kind != JITANON_TRIM_NONE && where.id < j->paths.size) {
        s.name.data = jitanon__inj_path(j, (size_t)where.id);
        s.name.length = strlen(s.name.data);
        s.start = where.start;
    }
    j->opts->on_sample(j->io.user, &s);
}

/* Replays one buffered record in time order. */
JITANON__PRIVATE jitanon_result jitanon__inj_decide(jitanon__inj *j, jitanon__inj_rec *r)
{
    jitanon_result res = JITANON_OK;
    int range = j->opts->anon_mode == JITANON_ANON_RANGE;
    if (jitanon__inj_is_mmap(r->type)) {
        jitanon_perf_mmap m = jitanon__inj_mmap_of(j, r);
        if (jitanon_is_jitdump_marker(m.filename.data, m.filename.length, NULL)) {
            jitanon_perf_record rec;
            memset(&rec, 0, sizeof rec);
            rec.mmap = m;
            rec.offset = r->offset;
            rec.sid.cpu = r->cpu;
            return jitanon__inj_marker(j, &rec, r);
        }
        return jitanon__inj_decide_mmap(j, r, &m);
    }
    if (r->type == JITANON_PERF_RECORD_SAMPLE) {
        j->st->samples++;
        if (j->opts->on_sample) jitanon__inj_resolve(j, r);
    }
    /* perf's address maps: a new process starts from its parent's; exec starts afresh. */
    if (range && r->type == JITANON_PERF_RECORD_FORK && r->pid != r->ppid)
        res = jitanon_trim_fork(j->trim, r->ppid, r->pid, j->err);
    if (range && r->type == JITANON_PERF_RECORD_COMM && (r->misc & JITANON__PERF_MISC_COMM_EXEC))
        jitanon_trim_forget(j->trim, r->pid);
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__inj_emit_synth(jitanon__inj *j, const jitanon__inj_synth *s)
{
    const jitanon__inj_func *f = &j->funcs[s->func];
    const jitanon_perf_attr *attr = NULL;
    jitanon_perf_mmap m;
    size_t size = 0, i;
    jitanon_result res;
    /* The trailer follows the attr that records mmaps (attr bit 8, `mmap`). */
    for (i = 0; i < j->in->attr_count && !attr; i++)
        if (j->in->attrs[i].flags & (1u << 8)) attr = &j->in->attrs[i];
    if (!attr && j->in->attr_count) attr = &j->in->attrs[0];
    memset(&m, 0, sizeof m);
    m.pid = f->pid;
    m.tid = f->tid;
    m.start = s->start;
    m.len = s->size;
    m.pgoff = f->pgoff;
    m.prot = 5;  /* PROT_READ | PROT_EXEC */
    m.flags = 2; /* MAP_PRIVATE */
    m.filename.data = jitanon__inj_path(j, f->path);
    m.filename.length = strlen(m.filename.data);
    res = jitanon_perf_encode_mmap2(j->enc, j->enc_cap, &size, &m, JITANON_PERF_MISC_USER, s->time, j->marker_cpu,
                                    attr, j->in->big_endian, j->err);
    if (res == JITANON_ERR_LIMIT) {
        if (!jitanon__grow(&j->a, (void **)&j->enc, &j->enc_cap, size, 1)) return jitanon__inj_nomem(j, "mmap2");
        res = jitanon_perf_encode_mmap2(j->enc, j->enc_cap, &size, &m, JITANON_PERF_MISC_USER, s->time, j->marker_cpu,
                                        attr, j->in->big_endian, j->err);
    }
    if (res != JITANON_OK) return res;
    j->st->mmaps_synthesized++;
    return jitanon_perf_writer_write(j->out, j->enc, size, j->err);
}

JITANON__PRIVATE jitanon_result jitanon__inj_emit_rec(jitanon__inj *j, const jitanon__inj_rec *r)
{
    const uint8_t *raw = j->round.data + r->off;
    size_t i;
    if (r->action == JITANON__INJ_PASS) return jitanon_perf_writer_write(j->out, raw, r->size, j->err);
    for (i = 0; r->action == JITANON__INJ_PIECES && i < r->pieces; i++) {
        const jitanon_trim_piece *p = &j->pieces[r->first_piece + i];
        jitanon_perf_record rec;
        size_t size = 0;
        jitanon_result res;
        memset(&rec, 0, sizeof rec);
        rec.type = r->type;
        rec.raw.data = raw;
        rec.raw.size = r->size;
        rec.offset = r->offset;
        if (!jitanon__grow(&j->a, (void **)&j->enc, &j->enc_cap, r->size, 1)) return jitanon__inj_nomem(j, "pieces");
        res = jitanon_perf_rewrite_mmap(j->enc, j->enc_cap, &size, &rec, p->start, p->len, p->pgoff, j->in->big_endian,
                                        j->err);
        if (res == JITANON_OK) res = jitanon_perf_writer_write(j->out, j->enc, size, j->err);
        if (res != JITANON_OK) return res;
    }
    return JITANON_OK;
}

JITANON__PRIVATE int jitanon__inj_synth_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__inj_synth *s = (const jitanon__inj_synth *)ctx;
    return s[a].time < s[b].time || (s[a].time == s[b].time && s[a].seq < s[b].seq);
}

/* Fills j->order with 0..n-1 sorted by `less` (stable); order and its scratch half share
   one allocation. */
JITANON__PRIVATE int jitanon__inj_order(jitanon__inj *j, size_t n, jitanon__less_fn less, const void *ctx)
{
    size_t i;
    if (n > UINT32_MAX / 2) return 0;
    if (!jitanon__grow(&j->a, (void **)&j->order, &j->order_cap, 2 * n, sizeof *j->order)) return 0;
    for (i = 0; i < n; i++) j->order[i] = (uint32_t)i;
    jitanon__msort(j->order, j->order + n, n, less, ctx);
    return 1;
}

/* Emits the round in file order, each synthesized MMAP2 just before the first record
   that is not older than it. */
JITANON__PRIVATE jitanon_result jitanon__inj_emit_round(jitanon__inj *j)
{
    size_t k, s = 0;
    jitanon_result res = JITANON_OK;
    if (!jitanon__inj_order(j, j->nsynth, jitanon__inj_synth_less, j->synth)) return jitanon__inj_nomem(j, "sort");
    for (k = 0; k < j->nrecs && res == JITANON_OK; k++) {
        while (res == JITANON_OK && s < j->nsynth && j->synth[j->order[s]].time <= j->recs[k].time)
            res = jitanon__inj_emit_synth(j, &j->synth[j->order[s++]]);
        if (res == JITANON_OK) res = jitanon__inj_emit_rec(j, &j->recs[k]);
    }
    while (res == JITANON_OK && s < j->nsynth) res = jitanon__inj_emit_synth(j, &j->synth[j->order[s++]]);
    return res;
}

/* Decides every buffered record in time order, applying jit events as time passes, then
   writes the round.  `last`: no more input, so every remaining jit event is due. */
JITANON__PRIVATE jitanon_result jitanon__inj_round(jitanon__inj *j, int last)
{
    size_t k;
    uint64_t max_time = 0;
    jitanon_result res = JITANON_OK;
    if (!jitanon__inj_order(j, j->nrecs, jitanon__inj_rec_less, j->recs)) return jitanon__inj_nomem(j, "sort");
    for (k = 0; k < j->nrecs && res == JITANON_OK; k++) {
        jitanon__inj_rec *r = &j->recs[j->order[k]];
        if (r->time > max_time) max_time = r->time;
        res = jitanon__inj_apply_until(j, r->time, 0);
        if (res == JITANON_OK) res = jitanon__inj_decide(j, r);
    }
    if (res == JITANON_OK) res = jitanon__inj_apply_until(j, max_time, last);
    if (res == JITANON_OK && j->out) res = jitanon__inj_emit_round(j);
    j->st->rounds++;
    if (j->round.size > j->st->largest_round_bytes) j->st->largest_round_bytes = j->round.size;
    j->round.size = 0;
    j->nrecs = j->npieces = j->nsynth = 0;
    if (j->io.progress) j->io.progress(j->io.user, j->bytes_done);
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__inj_record(jitanon__inj *j, const jitanon_perf_record *rec)
{
    jitanon_result res;
    uint64_t limit = j->opts->max_round_bytes ? j->opts->max_round_bytes : (uint64_t)256 << 20;
    j->st->records_in++;
    if (!rec->from_compressed) j->bytes_done = rec->offset + rec->raw.size;
    /* Attr and feature records become file sections when pipe turns into file: pass
       them on at once, after whatever is buffered. */
    if (rec->type == JITANON_PERF_RECORD_HEADER_ATTR || rec->type == JITANON_PERF_RECORD_HEADER_FEATURE) {
        if (j->nrecs && (res = jitanon__inj_round(j, 0)) != JITANON_OK) return res;
        return j->out ? jitanon__pc_record(j->in, j->out, rec, j->err) : JITANON_OK;
    }
    if ((res = jitanon__inj_buffer(j, rec)) != JITANON_OK) return res;
    if (rec->type == JITANON_PERF_RECORD_FINISHED_ROUND || j->round.size >= limit) return jitanon__inj_round(j, 0);
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__inj_free(jitanon__inj *j)
{
    size_t i;
    for (i = 0; i < j->ndumps; i++) {
        jitanon__free(&j->a, j->dumps[i].events, j->dumps[i].cap * sizeof *j->dumps[i].events);
        jitanon_jitdump_free(j->dumps[i].dump);
    }
    jitanon__free(&j->a, j->dumps, j->dumps_cap * sizeof *j->dumps);
    jitanon__free(&j->a, j->dump_pids, j->dump_pids_cap * sizeof *j->dump_pids);
    jitanon__free(&j->a, j->funcs, j->funcs_cap * sizeof *j->funcs);
    jitanon__free(&j->a, j->recs, j->recs_cap * sizeof *j->recs);
    jitanon__free(&j->a, j->order, j->order_cap * sizeof *j->order);
    jitanon__free(&j->a, j->pieces, j->pieces_cap * sizeof *j->pieces);
    jitanon__free(&j->a, j->synth, j->synth_cap * sizeof *j->synth);
    jitanon__free(&j->a, j->enc, j->enc_cap);
    jitanon_membuf_free(&j->paths);
    jitanon_membuf_free(&j->elfbuf);
    jitanon_membuf_free(&j->round);
    jitanon_trim_free(j->trim);
}

JITANON__PRIVATE jitanon_result jitanon__inj_start(jitanon__inj *j, const jitanon_inject_opts *opts,
                                                   jitanon_inject_opts *defaults)
{
    size_t i;
    jitanon_result res = JITANON_OK;
    if (!opts) {
        memset(defaults, 0, sizeof *defaults);
        opts = defaults;
    }
    if (!jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(j->err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_inject_opts not zero-initialised");
    if (opts->anon_mode > JITANON_ANON_KEEP || opts->elf_layout > JITANON_ELF_PER_PROCESS)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0, "unknown anon_mode or elf_layout");
    if (j->out && j->in->big_endian != j->out->big_endian)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0, "the writer must use the input's byte order");
    j->opts = opts;
    j->a = opts->allocator;
    j->io = opts->io;
    if (!j->io.load_dump) j->io.load_dump = jitanon__inj_load_default;
    if (!j->io.write_elf) j->io.write_elf = jitanon__inj_write_default;
    j->paths.allocator = j->elfbuf.allocator = j->round.allocator = j->a;
    if (opts->anon_mode == JITANON_ANON_RANGE || opts->on_sample) {
        jitanon_trim_opts to;
        memset(&to, 0, sizeof to);
        to.allocator = j->a;
        if (!(j->trim = jitanon_trim_new(&to, j->err))) return j->err ? j->err->type : JITANON_ERR_NOMEM;
    }
    for (i = 0; res == JITANON_OK && j->out && j->in->mode == JITANON_PERF_FILE && i < j->in->attr_count; i++)
        res = jitanon_perf_writer_add_attr(j->out, &j->in->attrs[i], j->err);
    return res;
}

JITANON_API jitanon_result jitanon_inject(jitanon_perf_reader *in, jitanon_perf_writer *out,
                                          const jitanon_inject_opts *opts, jitanon_inject_stats *stats,
                                          jitanon_error *err)
{
    jitanon__inj j;
    jitanon_inject_opts defaults;
    jitanon_inject_stats local;
    jitanon_perf_record rec;
    jitanon_result res;
    int feats_done = 0;
    JITANON_ASSERT(in);
    jitanon__clear_error(err);
    memset(&j, 0, sizeof j);
    j.in = in;
    j.out = out;
    j.err = err;
    j.st = stats ? stats : &local;
    memset(j.st, 0, sizeof *j.st);
    res = jitanon__inj_start(&j, opts, &defaults);
    /* A pipe wants features before the records; a file takes them at the end anyway. */
    if (res == JITANON_OK && out && in->mode == JITANON_PERF_FILE && in->seek_fn_) {
        res = jitanon__pc_features(in, out, err);
        feats_done = 1;
    }
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(in, &rec, err)) == JITANON_OK)
        res = jitanon__inj_record(&j, &rec);
    if (res == JITANON_END) {
        jitanon__clear_error(err);
        res = jitanon__inj_round(&j, 1);
    }
    if (res == JITANON_OK && out && in->mode == JITANON_PERF_FILE && !feats_done)
        res = jitanon__pc_features(in, out, err);
    if (res == JITANON_OK && out) res = jitanon_perf_writer_finish(out, err);
    j.st->records_out = out ? out->records : 0;
    jitanon__inj_free(&j);
    return res;
}

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
typedef struct jitanon__inj_pump {
    const jitanon_inject_opts *opts;
    jitanon_inject_stats *stats;
} jitanon__inj_pump;

JITANON__PRIVATE jitanon_result jitanon__inj_pump_fn(void *ctx, jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                     jitanon_error *err)
{
    const jitanon__inj_pump *p = (const jitanon__inj_pump *)ctx;
    return jitanon_inject(r, w, p->opts, p->stats, err);
}

JITANON_API jitanon_result jitanon_inject_file(const char *in_path, const char *out_path, int out_mode,
                                               const jitanon_inject_opts *opts, const jitanon_perf_opts *perf_opts,
                                               jitanon_inject_stats *stats, jitanon_error *err)
{
    jitanon__inj_pump p;
    p.opts = opts;
    p.stats = stats;
    return jitanon__pc_run(in_path, out_path, out_mode, perf_opts, jitanon__inj_pump_fn, &p, err);
}
#endif
