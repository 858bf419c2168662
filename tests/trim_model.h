/* A brute-force reference model for the trimming engine, shared by tests/t_trim.c and
   fuzz/fuzz_trim.c.  Include after jitanon.h with the implementation.

   tm_check feeds an event sequence to jitanon_trim, builds the output (loads and moves
   become jit mappings, mmaps become the pieces the engine returned), and for every sample
   compares three answers:
     expected - the contract, computed from the INPUT by scanning every earlier event:
                if the latest event at x among {loads/moves, FILE mmaps, ANON mmaps of
                processes without a jitdump} is a load/move, that function; otherwise
                the latest mmap of any kind at x (or nothing);
     output   - perf's latest-wins map replayed over the OUTPUT by scanning;
     engine   - jitanon_trim_resolve.
   Everything is in feed order (equal timestamps: the later event wins).  O(n^2), on
   purpose: it is obviously right, and sequences are short. */
#ifndef JITANON_TRIM_MODEL_H
#define JITANON_TRIM_MODEL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TM_FN JITANON__PRIVATE
#define TM_MAXPID 8u

/* Input ops, plus TM_MAP for an output mapping. */
enum { TM_LOAD, TM_MOVE, TM_ANON, TM_FILE, TM_SAMPLE, TM_JITDUMP, TM_FORK, TM_FORGET, TM_NOPS, TM_MAP };

typedef struct tm_ev {
    int op;
    uint32_t pid, pid2; /* pid2: the FORK child */
    uint32_t kind;      /* TM_MAP: jitanon_trim_kind */
    uint64_t time, start, len, pgoff, id; /* MOVE: start = new address, pgoff = old */
} tm_ev;

typedef struct tm_run {
    const jitanon_trim_opts *opts; /* may be NULL */
    int retry_on_error; /* on an engine error, check the maps did not change, retry once */
    int plain_only;     /* leave out the cached resolve (its caches allocate: allocation sweeps) */
    uint64_t samples, pieces, engine_errors;
    jitanon_result stopped_by; /* retry off: the engine error that ended the run */
    char why[320];             /* the first mismatch */
} tm_run;

typedef struct tm_ctx {
    const tm_ev *in;
    size_t n;
    char *valid, *trimmed; /* per input event: accepted; ANON trimmed (pid had a jitdump) */
    tm_ev *out;
    size_t nout, outcap;
    int flag[TM_MAXPID];
    jitanon_trim *t;
    tm_run *run;
} tm_ctx;

/* Deterministic PRNG (splitmix64): the seed printed by a failing test reproduces it. */
TM_FN uint64_t tm_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

TM_FN int tm_has(uint64_t start, uint64_t len, uint64_t x) { return len && x >= start && x - start < len; }

/* len 0 or a wrap: events the engine must not record. */
TM_FN int tm_span_ok(uint64_t start, uint64_t len) { return len && len - 1 <= UINT64_MAX - start; }

TM_FN int tm_fail(tm_ctx *c, const char *what, size_t i, uint64_t x, uint64_t a, uint64_t b)
{
    if (!c->run->why[0])
        snprintf(c->run->why, sizeof c->run->why, "event %lu (op %d pid %u): %s at x=%llx: %llu vs %llu",
                 (unsigned long)i, i < c->n ? c->in[i].op : -1, i < c->n ? (unsigned)c->in[i].pid : 0u, what,
                 (unsigned long long)x, (unsigned long long)a, (unsigned long long)b);
    return 1;
}

/* Walks history backwards from position `end` for pid: a FORK into the current pid
   continues with the parent's older history, a FORGET ends it.  Returns the next index
   (or (size_t)-1) and keeps *cur up to date. */
TM_FN size_t tm_prev(const tm_ev *ev, size_t j, uint32_t *cur)
{
    while (j-- > 0) {
        if (ev[j].op == TM_FORK && ev[j].pid2 == *cur && ev[j].pid != ev[j].pid2) {
            *cur = ev[j].pid;
            continue;
        }
        if (ev[j].pid != *cur) continue;
        return ev[j].op == TM_FORGET ? (size_t)-1 : j;
    }
    return (size_t)-1;
}

/* The contract, from the input: see the top of this file. */
TM_FN uint32_t tm_expected(const tm_ctx *c, size_t i, uint32_t pid, uint64_t x, uint64_t *id)
{
    uint32_t cur = pid, kind = JITANON_TRIM_NONE;
    size_t j = i;
    const tm_ev *e;
    while ((j = tm_prev(c->in, j, &cur)) != (size_t)-1) {
        e = &c->in[j];
        if (!c->valid[j] || e->op == TM_SAMPLE || e->op == TM_JITDUMP || e->op == TM_FORK) continue;
        if (!tm_has(e->start, e->len, x)) continue;
        if (e->op == TM_LOAD || e->op == TM_MOVE) {
            *id = e->id;
            return JITANON_TRIM_JIT;
        }
        if (kind == JITANON_TRIM_NONE) { /* the latest mmap of any kind so far */
            kind = e->op == TM_ANON ? JITANON_TRIM_ANON : JITANON_TRIM_FILE;
            *id = e->id;
        }
        if (e->op == TM_FILE || !c->trimmed[j]) return kind; /* hides anything older */
    }
    if (kind == JITANON_TRIM_NONE) *id = 0;
    return kind;
}

/* perf's latest-wins map over our output. */
TM_FN uint32_t tm_output(const tm_ctx *c, uint32_t pid, uint64_t x, uint64_t *id)
{
    uint32_t cur = pid;
    size_t j = c->nout;
    while ((j = tm_prev(c->out, j, &cur)) != (size_t)-1) {
        if (c->out[j].op == TM_MAP && tm_has(c->out[j].start, c->out[j].len, x)) {
            *id = c->out[j].id;
            return c->out[j].kind;
        }
    }
    *id = 0;
    return JITANON_TRIM_NONE;
}

TM_FN int tm_emit(tm_ctx *c, int op, uint32_t pid, uint32_t pid2, uint32_t kind, uint64_t start, uint64_t len,
                  uint64_t id)
{
    tm_ev *e;
    if (c->nout == c->outcap) {
        size_t ncap = c->outcap ? c->outcap * 2 : 256;
        tm_ev *n = (tm_ev *)realloc(c->out, ncap * sizeof *n);
        if (!n) return 0;
        c->out = n;
        c->outcap = ncap;
    }
    e = &c->out[c->nout++];
    memset(e, 0, sizeof *e);
    e->op = op;
    e->pid = pid;
    e->pid2 = pid2;
    e->kind = kind;
    e->start = start;
    e->len = len;
    e->id = id;
    return 1;
}

/* Checks the pieces of mmap event i against the rules, and appends them to the output. */
TM_FN int tm_pieces(tm_ctx *c, size_t i, const jitanon_trim_piece *p, size_t np)
{
    const tm_ev *e = &c->in[i];
    size_t k;
    uint64_t prev_end = 0;
    int whole = e->op == TM_FILE || !c->trimmed[i] || !e->len;
    if (whole && (np != 1 || p[0].start != e->start || p[0].len != e->len || p[0].pgoff != e->pgoff))
        return tm_fail(c, "mmap not passed through whole", i, e->start, np, 1);
    for (k = 0; k < np && !whole; k++) {
        if (!p[k].len || p[k].start < e->start || p[k].start - e->start > e->len - 1 ||
            p[k].len - 1 > (e->len - 1) - (p[k].start - e->start))
            return tm_fail(c, "piece outside the mmap", i, p[k].start, p[k].len, e->len);
        if (k && p[k].start <= prev_end)
            return tm_fail(c, "pieces overlap, touch or are unsorted", i, p[k].start, prev_end, 0);
        if (p[k].pgoff != e->pgoff + (p[k].start - e->start))
            return tm_fail(c, "piece pgoff", i, p[k].start, p[k].pgoff, e->pgoff);
        prev_end = p[k].start + p[k].len; /* one past the end; pieces never reach 2^64 - 1 + 1 here */
        if (p[k].start + (p[k].len - 1) == UINT64_MAX) prev_end = UINT64_MAX;
    }
    for (k = 0; k < np; k++)
        if (!tm_emit(c, TM_MAP, e->pid, 0, e->op == TM_FILE ? JITANON_TRIM_FILE : JITANON_TRIM_ANON, p[k].start,
                     p[k].len, e->id))
            return tm_fail(c, "out of memory in the model", i, 0, 0, 0);
    c->run->pieces += np;
    return 0;
}

/* A snapshot of one process's map, to prove a failed call changed nothing. */
typedef struct tm_snap {
    jitanon_range *r;
    size_t n;
} tm_snap;

TM_FN void tm_snap_take(const jitanon_trim *t, uint32_t pid, tm_snap *s)
{
    const jitanon_rangemap *m = jitanon_trim_map(t, pid);
    jitanon_rangemap_iter it;
    jitanon_range r;
    size_t cap = 0;
    s->r = NULL;
    s->n = 0;
    if (!m) return;
    jitanon_rangemap_iter_begin_all(&it, m);
    while (jitanon_rangemap_iter_next(&it, &r)) {
        if (s->n == cap) {
            cap = cap ? cap * 2 : 64;
            s->r = (jitanon_range *)realloc(s->r, cap * sizeof *s->r);
            if (!s->r) abort();
        }
        /* field by field over zeroed bytes: the snapshots are compared with memcmp, and
           the padding after `kind` is whatever the stack held */
        memset(&s->r[s->n], 0, sizeof s->r[s->n]);
        s->r[s->n].start = r.start;
        s->r[s->n].len = r.len;
        s->r[s->n].kind = r.kind;
        s->r[s->n++].id = r.id;
    }
}

/* 1 if pid's map still equals the snapshot. */
TM_FN int tm_snap_same(const jitanon_trim *t, uint32_t pid, const tm_snap *s)
{
    tm_snap now;
    int same;
    tm_snap_take(t, pid, &now);
    same = now.n == s->n && (!now.n || memcmp(now.r, s->r, now.n * sizeof *now.r) == 0);
    free(now.r);
    return same;
}

/* Feeds event i to the engine. */
TM_FN jitanon_result tm_feed(tm_ctx *c, size_t i, const jitanon_trim_piece **p, size_t *np)
{
    const tm_ev *e = &c->in[i];
    jitanon_error err;
    jitanon_trim_event te;
    te.pid = e->pid;
    te.kind = e->op == TM_ANON ? JITANON_TRIM_ANON : e->op == TM_FILE ? JITANON_TRIM_FILE : JITANON_TRIM_JIT;
    te.time = e->time;
    te.start = e->start;
    te.len = e->len;
    te.pgoff = e->op == TM_MOVE ? 0 : e->pgoff; /* a move's pgoff field holds its old address */
    te.id = e->id;
    *np = 0;
    switch (e->op) {
    case TM_LOAD: return jitanon_trim_load(c->t, &te, &err);
    case TM_MOVE: return jitanon_trim_move(c->t, &te, &err);
    case TM_ANON:
    case TM_FILE: return jitanon_trim_mmap(c->t, &te, p, np, &err);
    case TM_JITDUMP: return jitanon_trim_set_jitdump(c->t, e->pid, &err);
    case TM_FORK: return jitanon_trim_fork(c->t, e->pid, e->pid2, &err);
    case TM_FORGET: jitanon_trim_forget(c->t, e->pid); return JITANON_OK;
    default: return JITANON_OK;
    }
}

/* Feeds event i; in retry mode an allocation failure must leave both maps involved as
   they were, and the retry must then succeed. 1 = go on, 0 = stop (mismatch or error). */
TM_FN int tm_feed_checked(tm_ctx *c, size_t i, const jitanon_trim_piece **p, size_t *np, jitanon_result *r)
{
    tm_snap a, b;
    int same;
    if (!c->run->retry_on_error) {
        *r = tm_feed(c, i, p, np);
        return *r == JITANON_OK || *r == JITANON_ERR_INVALID_ARGUMENT; /* the latter is judged by tm_step */
    }
    tm_snap_take(c->t, c->in[i].pid, &a);
    tm_snap_take(c->t, c->in[i].pid2, &b);
    *r = tm_feed(c, i, p, np);
    if (*r == JITANON_ERR_NOMEM || *r == JITANON_ERR_LIMIT) {
        c->run->engine_errors++;
        same = tm_snap_same(c->t, c->in[i].pid, &a) && tm_snap_same(c->t, c->in[i].pid2, &b);
        if (!same) tm_fail(c, "a failed call changed the map", i, 0, 0, 0);
        *r = same ? tm_feed(c, i, p, np) : *r;
    }
    free(a.r);
    free(b.r);
    return !c->run->why[0];
}

/* Applies event i to the model side (flags, output) and checks the engine's answer. */
TM_FN int tm_step(tm_ctx *c, size_t i)
{
    const tm_ev *e = &c->in[i];
    const jitanon_trim_piece *p = NULL;
    size_t np = 0;
    jitanon_result r;
    int ok_span = tm_span_ok(e->start, e->len);
    if (e->pid >= TM_MAXPID || e->pid2 >= TM_MAXPID) return tm_fail(c, "pid out of model range", i, 0, e->pid, 0);
    if (e->op == TM_ANON) c->trimmed[i] = (char)c->flag[e->pid];
    if (!tm_feed_checked(c, i, &p, &np, &r)) {
        if (r != JITANON_OK && !c->run->why[0]) c->run->stopped_by = r;
        return 1;
    }
    if ((e->op == TM_LOAD || e->op == TM_MOVE || e->op == TM_ANON || e->op == TM_FILE) && e->len && !ok_span) {
        if (r != JITANON_ERR_INVALID_ARGUMENT) return tm_fail(c, "wrapping range accepted", i, e->start, r, 0);
        return 0; /* valid[i] stays 0: the event did not happen */
    }
    if (r != JITANON_OK) return tm_fail(c, "engine error", i, 0, (uint64_t)r, 0);
    c->valid[i] = 1;
    switch (e->op) {
    case TM_LOAD:
    case TM_MOVE:
        if (e->len && !tm_emit(c, TM_MAP, e->pid, 0, JITANON_TRIM_JIT, e->start, e->len, e->id))
            return tm_fail(c, "out of memory in the model", i, 0, 0, 0);
        return 0;
    case TM_ANON:
    case TM_FILE: return tm_pieces(c, i, p, np);
    case TM_JITDUMP: c->flag[e->pid] = 1; return 0;
    case TM_FORK:
        if (e->pid != e->pid2) c->flag[e->pid2] = 0;
        return tm_emit(c, e->op, e->pid, e->pid2, 0, 0, 0, 0) ? 0 : tm_fail(c, "model oom", i, 0, 0, 0);
    case TM_FORGET:
        c->flag[e->pid] = 0;
        return tm_emit(c, e->op, e->pid, e->pid2, 0, 0, 0, 0) ? 0 : tm_fail(c, "model oom", i, 0, 0, 0);
    default: return 0;
    }
}

/* Compares the three answers for (pid, x) at position i. */
TM_FN int tm_probe(tm_ctx *c, size_t i, uint32_t pid, uint64_t x)
{
    uint64_t id_e = 0, id_o = 0;
    uint32_t k_e = tm_expected(c, i, pid, x, &id_e), k_o = tm_output(c, pid, x, &id_o);
    jitanon_range got;
    uint32_t k_g = (uint32_t)jitanon_trim_resolve(c->t, pid, x, &got);
    c->run->samples++;
    if (k_e != k_o || id_e != id_o) return tm_fail(c, "output map breaks the contract (kind<<32|id)", i, x, (uint64_t)k_e << 32 | id_e, (uint64_t)k_o << 32 | id_o);
    if (k_e != k_g || id_e != got.id) return tm_fail(c, "resolve differs from the contract (kind<<32|id)", i, x, (uint64_t)k_e << 32 | id_e, (uint64_t)k_g << 32 | got.id);
    if (k_g != JITANON_TRIM_NONE && !tm_has(got.start, got.len, x)) return tm_fail(c, "resolved piece misses x", i, x, got.start, got.len);
    if (!c->run->plain_only) { /* the injector's cached path (its sorted array's and page table's copies) agrees */
        jitanon_range fast;
        uint32_t k_f = (uint32_t)jitanon__trim_resolve_fast(c->t, pid, x, &fast);
        if (k_f != k_g || fast.id != got.id || fast.start != got.start || fast.len != got.len || fast.kind != got.kind)
            return tm_fail(c, "the cached resolve differs from resolve (kind<<32|id)", i, x, (uint64_t)k_g << 32 | got.id,
                           (uint64_t)k_f << 32 | fast.id);
    }
    return 0;
}

/* Runs the whole check.  0 = all good, 1 = mismatch (run->why), 2 = stopped by an engine
   error (run->stopped_by; only without retry_on_error).  The engine is always freed. */
TM_FN int tm_check(const tm_ev *evs, size_t n, tm_run *run)
{
    tm_ctx c;
    jitanon_error err;
    size_t i;
    int bad = 0;
    memset(&c, 0, sizeof c);
    c.in = evs;
    c.n = n;
    c.run = run;
    run->why[0] = 0;
    run->stopped_by = JITANON_OK;
    c.valid = (char *)calloc(n + 1, 1);
    c.trimmed = (char *)calloc(n + 1, 1);
    if (jitanon_trim_create(run->opts, &c.t, &err) != JITANON_OK) {
        run->stopped_by = err.type;
        bad = 2;
    }
    for (i = 0; i < n && !bad; i++) {
        if (!c.valid || !c.trimmed) bad = tm_fail(&c, "out of memory in the model", i, 0, 0, 0);
        else if (evs[i].op == TM_SAMPLE) bad = tm_probe(&c, i, evs[i].pid, evs[i].start);
        else bad = tm_step(&c, i);
        if (run->stopped_by != JITANON_OK) bad = 2;
    }
    /* Afterwards: the boundaries of a spread of events, in every pid. */
    for (i = 0; i < n && !bad; i += n / 16 + 1) {
        uint32_t pid;
        const tm_ev *e = &evs[i];
        for (pid = 0; pid < TM_MAXPID && !bad; pid++)
            bad = tm_probe(&c, n, pid, e->start) || tm_probe(&c, n, pid, e->start - 1) ||
                  tm_probe(&c, n, pid, e->start + e->len) || tm_probe(&c, n, pid, e->start + e->len - 1);
    }
    jitanon_trim_destroy(c.t);
    free(c.valid);
    free(c.trimmed);
    free(c.out);
    return bad;
}

/* Decodes fuzzer bytes into events: byte 0 picks the address base, then 6 bytes an event
   (op, pid, time step, 10-bit offset, 11-bit length, id).  At most `max` events. */
TM_FN size_t tm_decode(const uint8_t *d, size_t size, tm_ev *ev, size_t max)
{
    static const uint64_t bases[4] = {0, 1ull << 40, UINT64_MAX - 1023, 0x7ffff000u};
    uint64_t base, time = 0;
    size_t n = 0, pos = 1;
    if (!size) return 0;
    base = bases[d[0] & 3];
    while (n < max && size - pos >= 6) {
        const uint8_t *b = d + pos;
        tm_ev *e = &ev[n++];
        memset(e, 0, sizeof *e);
        e->op = (b[0] & 15) % TM_NOPS;
        e->pid = (uint32_t)(b[0] >> 4) & 3;
        e->pid2 = (uint32_t)(b[5] >> 6);
        time += (uint64_t)(b[5] >> 5 & 1);
        e->time = time;
        e->start = base + ((uint64_t)b[1] | (uint64_t)(b[2] & 3) << 8);
        e->len = (uint64_t)b[3] | (uint64_t)(b[4] & 7) << 8;
        e->pgoff = e->op == TM_MOVE ? base + b[2] : e->start;
        e->id = (uint64_t)(b[5] & 31) + 1;
        pos += 6;
    }
    return n;
}
#endif
