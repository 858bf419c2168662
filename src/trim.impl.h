/* -- Address ranges: the rangemap ------------------------------------------------------- */

/* A treap node.  Ranges are kept as [start, last] (inclusive) so one that ends at
   UINT64_MAX needs no special case.  prev/next thread the pieces in address order, so
   iteration costs O(1) a piece with no parent pointers and no stack. */
struct jitanon__rm_node {
    uint64_t start, last, id;
    uint32_t kind, prio;
    uint32_t left, right, prev, next; /* pool indices; 0 = none */
};

typedef struct jitanon__rm_node jitanon__rm_node;

/* Largest pool, counting the null node 0: indices and used_ must fit in a uint32. */
#define JITANON__RM_MAX_NODES 0xFFFFFFFFu

/* Deterministic priorities (xorshift32) keep runs reproducible.  Someone who knows the
   sequence could pick addresses that deepen the tree: that costs time, never safety,
   because nothing here recurses. */
JITANON__PRIVATE uint32_t jitanon__rm_prio(jitanon_rangemap *m)
{
    uint32_t x = m->seed_ ? m->seed_ : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    m->seed_ = x;
    return x;
}

/* Makes sure `n` nodes can be taken without allocating, so that a change, once begun,
   cannot fail half-way and leave the map inconsistent. */
JITANON__PRIVATE jitanon_result jitanon__rm_reserve(jitanon_rangemap *m, size_t n, jitanon_error *err)
{
    size_t spare = (m->cap_ > m->used_ ? m->cap_ - m->used_ : 0) + m->nfree_, need;
    void *p = m->nodes_;
    if (spare >= n) return JITANON_OK;
    need = (size_t)m->used_ + (n - m->nfree_);
    if (need < n || need > (size_t)JITANON__RM_MAX_NODES)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "rangemap full (%U pieces)", (uint64_t)m->count_);
    if (!jitanon__grow(&m->allocator, &p, &m->cap_, need, sizeof(jitanon__rm_node)))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "rangemap pool of %U nodes", (uint64_t)need);
    m->nodes_ = (jitanon__rm_node *)p;
    return JITANON_OK;
}

/* Takes a reserved node (free list first) and gives it a fresh priority. */
JITANON__PRIVATE uint32_t jitanon__rm_take(jitanon_rangemap *m)
{
    uint32_t i;
    if (m->free_) {
        i = m->free_;
        m->free_ = m->nodes_[i].right;
        m->nfree_--;
    } else {
        i = m->used_++;
    }
    memset(&m->nodes_[i], 0, sizeof m->nodes_[i]);
    m->nodes_[i].prio = jitanon__rm_prio(m);
    return i;
}

JITANON__PRIVATE void jitanon__rm_release(jitanon_rangemap *m, uint32_t i)
{
    m->nodes_[i].right = m->free_;
    m->free_ = i;
    m->nfree_++;
}

/* Splits tree t into *l (start < key) and *r (start >= key), iteratively: each step
   hangs the current node on the open edge of one side and descends. */
JITANON__PRIVATE void jitanon__rm_split(jitanon__rm_node *n, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
    uint32_t *lp = l, *rp = r;
    while (t) {
        if (n[t].start < key) {
            *lp = t;
            lp = &n[t].right;
            t = n[t].right;
        } else {
            *rp = t;
            rp = &n[t].left;
            t = n[t].left;
        }
    }
    *lp = 0;
    *rp = 0;
}

/* Joins trees a and b (every start in a below every start in b), iteratively. */
JITANON__PRIVATE uint32_t jitanon__rm_merge(jitanon__rm_node *n, uint32_t a, uint32_t b)
{
    uint32_t root = 0, *slot = &root;
    while (a && b) {
        if (n[a].prio >= n[b].prio) {
            *slot = a;
            slot = &n[a].right;
            a = n[a].right;
        } else {
            *slot = b;
            slot = &n[b].left;
            b = n[b].left;
        }
    }
    *slot = a ? a : b;
    return root;
}

JITANON__PRIVATE uint32_t jitanon__rm_leftmost(const jitanon__rm_node *n, uint32_t t)
{
    while (t && n[t].left) t = n[t].left;
    return t;
}

JITANON__PRIVATE uint32_t jitanon__rm_rightmost(const jitanon__rm_node *n, uint32_t t)
{
    while (t && n[t].right) t = n[t].right;
    return t;
}

/* The node with the greatest start <= addr, or 0. */
JITANON__PRIVATE uint32_t jitanon__rm_floor(const jitanon_rangemap *m, uint64_t addr)
{
    uint32_t t = m->root_, best = 0;
    while (t) {
        if (m->nodes_[t].start <= addr) {
            best = t;
            t = m->nodes_[t].right;
        } else {
            t = m->nodes_[t].left;
        }
    }
    return best;
}

/* The node containing addr, or 0. */
JITANON__PRIVATE uint32_t jitanon__rm_find(const jitanon_rangemap *m, uint64_t addr)
{
    uint32_t f = jitanon__rm_floor(m, addr);
    return f && m->nodes_[f].last >= addr ? f : 0;
}

/* Links the chain prev, x[0..nx), succ in address order and counts the new pieces. */
JITANON__PRIVATE void jitanon__rm_link(jitanon_rangemap *m, uint32_t prev, const uint32_t *x, int nx, uint32_t succ)
{
    jitanon__rm_node *n = m->nodes_;
    int i;
    for (i = 0; i < nx; i++) {
        n[x[i]].prev = prev;
        if (prev) n[prev].next = x[i];
        prev = x[i];
        m->count_++;
    }
    if (prev) n[prev].next = succ;
    if (succ) n[succ].prev = prev;
}

/* A fresh node for [s, last] -> (kind, id), not yet in the tree; the caller reserved it. */
JITANON__PRIVATE uint32_t jitanon__rm_new(jitanon_rangemap *m, uint64_t s, uint64_t last, uint32_t kind, uint64_t id)
{
    uint32_t i = jitanon__rm_take(m);
    m->nodes_[i].start = s;
    m->nodes_[i].last = last;
    m->nodes_[i].kind = kind;
    m->nodes_[i].id = id;
    return i;
}

/* Releases the run of pieces from `first` on that start at or before `last` (already cut
   out of the tree); returns the piece after them. */
JITANON__PRIVATE uint32_t jitanon__rm_drop_run(jitanon_rangemap *m, uint32_t first, uint64_t last)
{
    uint32_t i = first, nx;
    while (i && m->nodes_[i].start <= last) {
        nx = m->nodes_[i].next;
        jitanon__rm_release(m, i);
        m->count_--;
        i = nx;
    }
    return i;
}

/* The heart of assign and erase: [s, last] becomes (kind, id), or a hole when kind is 0.
   Split the tree at s and at last + 1, throw the middle away, shorten the piece that
   straddles s, re-add the tail of the piece that straddled `last`, merge back.  Only the
   reservation can fail, and it happens before anything changes. */
JITANON__PRIVATE jitanon_result jitanon__rm_set(jitanon_rangemap *m, uint64_t s, uint64_t last, uint32_t kind,
                                                uint64_t id, jitanon_error *err)
{
    uint32_t a, b, c, d = 0, pred, first, succ, add[2] = {0, 0}, hold = jitanon__rm_find(m, last);
    int nadd = 0, tail = hold && m->nodes_[hold].last > last;
    jitanon__rm_node *n;
    jitanon_result r = jitanon__rm_reserve(m, (size_t)(kind != 0) + (size_t)tail, err);
    if (r != JITANON_OK) return r;
    if (kind) add[nadd++] = jitanon__rm_new(m, s, last, kind, id);
    if (tail) /* copied now: hold is released below, or shortened if it also straddles s */
        add[nadd++] = jitanon__rm_new(m, last + 1, m->nodes_[hold].last, m->nodes_[hold].kind, m->nodes_[hold].id);
    n = m->nodes_;
    jitanon__rm_split(n, m->root_, s, &a, &b);
    pred = jitanon__rm_rightmost(n, a);
    first = pred ? n[pred].next : jitanon__rm_leftmost(n, b);
    if (pred && n[pred].last >= s) n[pred].last = s - 1; /* pred.start < s, so s > 0 */
    c = b;
    if (last != UINT64_MAX) jitanon__rm_split(n, b, last + 1, &c, &d);
    (void)c; /* its nodes are exactly the list run from `first`: released through the list */
    succ = jitanon__rm_drop_run(m, first, last);
    jitanon__rm_link(m, pred, add, nadd, succ);
    m->root_ = jitanon__rm_merge(n, jitanon__rm_merge(n, a, jitanon__rm_merge(n, add[0], add[1])), d);
    return JITANON_OK;
}

/* [start, start + len) as an inclusive range; 0 for len 0, -1 for a wrap. */
JITANON__PRIVATE int jitanon__rm_span(uint64_t start, uint64_t len, uint64_t *last)
{
    if (!len) return 0;
    if (len - 1 > UINT64_MAX - start) return -1;
    *last = start + (len - 1);
    return 1;
}

JITANON__PRIVATE jitanon_result jitanon__rm_bad_span(jitanon_error *err, uint64_t start, uint64_t len)
{
    return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "range %X + %X runs past the end of the address space",
                         start, len);
}

JITANON_API void jitanon_rangemap_init(jitanon_rangemap *m, const jitanon_allocator *a)
{
    JITANON_ASSERT(m);
    memset(m, 0, sizeof *m);
    m->used_ = 1; /* node 0 is the null node */
    if (a) m->allocator = *a;
}

JITANON_API void jitanon_rangemap_free(jitanon_rangemap *m)
{
    jitanon_allocator a;
    if (!m) return;
    a = m->allocator;
    jitanon__free(&a, m->nodes_, m->cap_ * sizeof(jitanon__rm_node));
    jitanon_rangemap_init(m, &a);
}

JITANON_API jitanon_result jitanon_rangemap_assign(jitanon_rangemap *m, uint64_t start, uint64_t len,
                                                   uint32_t kind, uint64_t id, jitanon_error *err)
{
    uint64_t last = 0;
    int span = jitanon__rm_span(start, len, &last);
    JITANON_ASSERT(m);
    jitanon__clear_error(err);
    if (span < 0) return jitanon__rm_bad_span(err, start, len);
    if (!span) return JITANON_OK;
    return jitanon__rm_set(m, start, last, kind, id, err);
}

JITANON_API jitanon_result jitanon_rangemap_erase(jitanon_rangemap *m, uint64_t start, uint64_t len,
                                                  jitanon_error *err)
{
    return jitanon_rangemap_assign(m, start, len, 0, 0, err);
}

/* Public view of node i. */
JITANON__PRIVATE void jitanon__rm_out(const jitanon_rangemap *m, uint32_t i, jitanon_range *out)
{
    const jitanon__rm_node *n = &m->nodes_[i];
    out->start = n->start;
    out->len = n->last - n->start + 1; /* cannot overflow: see jitanon_range */
    out->kind = n->kind;
    out->id = n->id;
}

JITANON_API int jitanon_rangemap_lookup(const jitanon_rangemap *m, uint64_t addr, jitanon_range *out)
{
    uint32_t i = jitanon__rm_find(m, addr);
    if (out) {
        memset(out, 0, sizeof *out);
        if (i) jitanon__rm_out(m, i, out);
    }
    return i != 0;
}

JITANON_API void jitanon_rangemap_iter_begin(jitanon_rangemap_iter *it, const jitanon_rangemap *m,
                                             uint64_t start, uint64_t len)
{
    uint32_t f;
    it->map = m;
    it->cur = 0;
    it->last = len - 1 > UINT64_MAX - start ? UINT64_MAX : start + (len - 1);
    if (!len) return;
    f = jitanon__rm_floor(m, start);
    if (f && m->nodes_[f].last >= start) it->cur = f;
    else it->cur = f ? m->nodes_[f].next : jitanon__rm_leftmost(m->nodes_, m->root_);
}

JITANON_API void jitanon_rangemap_iter_all(jitanon_rangemap_iter *it, const jitanon_rangemap *m)
{
    it->map = m;
    it->cur = jitanon__rm_leftmost(m->nodes_, m->root_);
    it->last = UINT64_MAX;
}

JITANON_API int jitanon_rangemap_iter_next(jitanon_rangemap_iter *it, jitanon_range *out)
{
    uint32_t i = it->cur;
    if (!i || it->map->nodes_[i].start > it->last) {
        it->cur = 0;
        return 0;
    }
    jitanon__rm_out(it->map, i, out);
    it->cur = it->map->nodes_[i].next;
    return 1;
}

JITANON_API size_t jitanon_rangemap_count(const jitanon_rangemap *m) { return m->count_; }

JITANON_API jitanon_result jitanon_rangemap_copy(jitanon_rangemap *dst, const jitanon_rangemap *src,
                                                 jitanon_error *err)
{
    jitanon_rangemap tmp;
    void *p = NULL;
    size_t cap = 0;
    jitanon__clear_error(err);
    if (dst == src) return JITANON_OK;
    jitanon_rangemap_init(&tmp, &dst->allocator);
    if (src->nodes_) { /* indices stay valid in a byte copy of the pool */
        if (!jitanon__grow(&tmp.allocator, &p, &cap, src->used_, sizeof(jitanon__rm_node)))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "rangemap copy of %U nodes", (uint64_t)src->used_);
        memcpy(p, src->nodes_, (size_t)src->used_ * sizeof(jitanon__rm_node));
        tmp = *src;
        tmp.allocator = dst->allocator;
        tmp.nodes_ = (jitanon__rm_node *)p;
        tmp.cap_ = cap;
    }
    jitanon_rangemap_free(dst);
    *dst = tmp;
    return JITANON_OK;
}

/* -- The trimming engine ---------------------------------------------------------------- */

/* One process: its address map as perf will build it from our output. */
typedef struct jitanon__trim_proc {
    uint32_t pid;
    int has_jitdump, seen;
    uint64_t last_time;
    jitanon_rangemap map;
} jitanon__trim_proc;

struct jitanon_trim {
    jitanon_allocator user_alloc; /* the caller's; backs everything */
    jitanon_allocator alloc;      /* counting wrapper given to every table (memory_limit) */
    size_t memory_limit;
    int limit_hit, reject_out_of_order;
    jitanon_rangemap pids; /* [pid, pid] -> index into procs */
    jitanon__trim_proc *procs;
    size_t nprocs, procs_cap;
    jitanon_trim_piece *pieces; /* output of the last jitanon_trim_mmap */
    size_t pieces_cap;
    jitanon_trim_stats stats;
};

/* The counting allocator: refuses what would pass memory_limit and notes that it did,
   so the failure can be reported as JITANON_ERR_LIMIT rather than out of memory. */
JITANON__PRIVATE int jitanon__trim_admit(jitanon_trim *t, size_t old_size, size_t new_size)
{
    size_t held = t->stats.bytes_held - (old_size < t->stats.bytes_held ? old_size : t->stats.bytes_held);
    if (t->memory_limit && (new_size > t->memory_limit || held > t->memory_limit - new_size)) {
        t->limit_hit = 1;
        return 0;
    }
    return 1;
}

JITANON__PRIVATE void jitanon__trim_count(jitanon_trim *t, size_t old_size, size_t new_size)
{
    t->stats.bytes_held -= old_size < t->stats.bytes_held ? old_size : t->stats.bytes_held;
    t->stats.bytes_held += new_size;
    if (t->stats.bytes_held > t->stats.peak_bytes) t->stats.peak_bytes = t->stats.bytes_held;
}

JITANON__PRIVATE void *jitanon__trim_alloc_fn(void *user, size_t size)
{
    jitanon_trim *t = (jitanon_trim *)user;
    void *p;
    if (!jitanon__trim_admit(t, 0, size)) return NULL;
    p = jitanon__malloc(&t->user_alloc, size);
    if (p) jitanon__trim_count(t, 0, size);
    return p;
}

JITANON__PRIVATE void *jitanon__trim_realloc_fn(void *user, void *ptr, size_t old_size, size_t new_size)
{
    jitanon_trim *t = (jitanon_trim *)user;
    void *p;
    if (!jitanon__trim_admit(t, ptr ? old_size : 0, new_size)) return NULL;
    p = jitanon__realloc(&t->user_alloc, ptr, old_size, new_size);
    if (p) jitanon__trim_count(t, ptr ? old_size : 0, new_size);
    return p;
}

JITANON__PRIVATE void jitanon__trim_free_fn(void *user, void *ptr, size_t size)
{
    jitanon_trim *t = (jitanon_trim *)user;
    jitanon__free(&t->user_alloc, ptr, size);
    jitanon__trim_count(t, size, 0);
}

/* Reports an allocation failure as JITANON_ERR_LIMIT when memory_limit refused it. */
JITANON__PRIVATE jitanon_result jitanon__trim_fix(jitanon_trim *t, jitanon_result r, jitanon_error *err)
{
    if (r == JITANON_ERR_NOMEM && t->limit_hit)
        r = JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "memory_limit of %U bytes reached", (uint64_t)t->memory_limit);
    t->limit_hit = 0;
    return r;
}

JITANON__PRIVATE jitanon_result jitanon__trim_oom(jitanon_trim *t, jitanon_error *err, const char *what)
{
    return jitanon__trim_fix(t, JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "%s", what), err);
}

JITANON__PRIVATE jitanon__trim_proc *jitanon__trim_find(const jitanon_trim *t, uint32_t pid)
{
    jitanon_range r;
    if (!jitanon_rangemap_lookup(&t->pids, pid, &r)) return NULL;
    return &t->procs[r.id];
}

/* Finds or creates the process.  The pointer is valid until another process is created. */
JITANON__PRIVATE jitanon_result jitanon__trim_get(jitanon_trim *t, uint32_t pid, jitanon__trim_proc **out,
                                                  jitanon_error *err)
{
    jitanon__trim_proc *p = jitanon__trim_find(t, pid);
    void *arr = t->procs;
    jitanon_result r;
    if ((*out = p) != NULL) return JITANON_OK;
    if (!jitanon__grow(&t->alloc, &arr, &t->procs_cap, t->nprocs + 1, sizeof *p))
        return jitanon__trim_oom(t, err, "process table");
    t->procs = (jitanon__trim_proc *)arr;
    r = jitanon__rm_set(&t->pids, pid, pid, 1, t->nprocs, err);
    if (r != JITANON_OK) return jitanon__trim_fix(t, r, err);
    p = &t->procs[t->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    jitanon_rangemap_init(&p->map, &t->alloc);
    t->stats.processes++;
    *out = p;
    return JITANON_OK;
}

/* Checks an event's time against its process's latest; *late says it is older. */
JITANON__PRIVATE jitanon_result jitanon__trim_time(const jitanon_trim *t, const jitanon__trim_proc *p, uint64_t time,
                                                   int *late, jitanon_error *err)
{
    *late = p->seen && time < p->last_time;
    if (*late && t->reject_out_of_order)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "pid %u: time %U is before %U",
                             (unsigned)p->pid, time, p->last_time);
    return JITANON_OK;
}

/* Called once the event has been applied. */
JITANON__PRIVATE void jitanon__trim_commit(jitanon_trim *t, jitanon__trim_proc *p, uint64_t time, int late)
{
    if (late) t->stats.out_of_order++;
    if (!p->seen || time > p->last_time) p->last_time = time;
    p->seen = 1;
}

/* Common start of an event: argument checks, the process, its clock. */
JITANON__PRIVATE jitanon_result jitanon__trim_begin(jitanon_trim *t, uint32_t pid, uint64_t time,
                                                    jitanon__trim_proc **p, int *late, jitanon_error *err)
{
    jitanon_result r = jitanon__trim_get(t, pid, p, err);
    if (r != JITANON_OK) return r;
    return jitanon__trim_time(t, *p, time, late, err);
}

JITANON_API jitanon_trim *jitanon_trim_new(const jitanon_trim_opts *opts, jitanon_error *err)
{
    jitanon_trim *t;
    const jitanon_allocator *a = opts ? &opts->allocator : NULL;
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_)) {
        JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_trim_opts not zero-initialised");
        return NULL;
    }
    t = (jitanon_trim *)jitanon__malloc(a, sizeof *t);
    if (!t) {
        JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "trim engine");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    if (a) t->user_alloc = *a;
    t->alloc.alloc_fn = jitanon__trim_alloc_fn;
    t->alloc.realloc_fn = jitanon__trim_realloc_fn;
    t->alloc.free_fn = jitanon__trim_free_fn;
    t->alloc.user = t;
    t->memory_limit = opts ? opts->memory_limit : 0;
    t->reject_out_of_order = opts ? opts->reject_out_of_order : 0;
    jitanon_rangemap_init(&t->pids, &t->alloc);
    return t;
}

JITANON_API void jitanon_trim_free(jitanon_trim *t)
{
    jitanon_allocator a;
    size_t i;
    if (!t) return;
    for (i = 0; i < t->nprocs; i++) jitanon_rangemap_free(&t->procs[i].map);
    jitanon__free(&t->alloc, t->procs, t->procs_cap * sizeof *t->procs);
    jitanon__free(&t->alloc, t->pieces, t->pieces_cap * sizeof *t->pieces);
    jitanon_rangemap_free(&t->pids);
    a = t->user_alloc;
    jitanon__free(&a, t, sizeof *t);
}

JITANON_API jitanon_result jitanon_trim_set_jitdump(jitanon_trim *t, uint32_t pid, jitanon_error *err)
{
    jitanon__trim_proc *p;
    jitanon_result r;
    jitanon__clear_error(err);
    t->limit_hit = 0;
    r = jitanon__trim_get(t, pid, &p, err);
    if (r == JITANON_OK) p->has_jitdump = 1;
    return r;
}

/* Loads and moves: the range becomes jit-owned by id, whatever was there. */
JITANON__PRIVATE jitanon_result jitanon__trim_jit(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start,
                                                  uint64_t size, uint64_t id, uint64_t *counter, jitanon_error *err)
{
    jitanon__trim_proc *p;
    uint64_t last = 0;
    int late, span = jitanon__rm_span(start, size, &last);
    jitanon_result r;
    jitanon__clear_error(err);
    t->limit_hit = 0;
    if (span < 0) return jitanon__rm_bad_span(err, start, size);
    if (!span) return JITANON_OK;
    r = jitanon__trim_begin(t, pid, time, &p, &late, err);
    if (r == JITANON_OK) r = jitanon__trim_fix(t, jitanon__rm_set(&p->map, start, last, JITANON_TRIM_JIT, id, err), err);
    if (r != JITANON_OK) return r;
    jitanon__trim_commit(t, p, time, late);
    (*counter)++;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_trim_load(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start,
                                             uint64_t size, uint64_t func_id, jitanon_error *err)
{
    return jitanon__trim_jit(t, pid, time, start, size, func_id, &t->stats.loads, err);
}

JITANON_API jitanon_result jitanon_trim_move(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t old_start,
                                             uint64_t new_start, uint64_t size, uint64_t func_id,
                                             jitanon_error *err)
{
    (void)old_start; /* perf leaves the old mapping in place, and so must we */
    return jitanon__trim_jit(t, pid, time, new_start, size, func_id, &t->stats.moves, err);
}

/* Appends a piece to the output buffer. */
JITANON__PRIVATE jitanon_result jitanon__trim_piece(jitanon_trim *t, size_t *n, uint64_t start, uint64_t last,
                                                    uint64_t orig_start, uint64_t pgoff, jitanon_error *err)
{
    void *arr = t->pieces;
    if (!jitanon__grow(&t->alloc, &arr, &t->pieces_cap, *n + 1, sizeof *t->pieces))
        return jitanon__trim_oom(t, err, "mmap pieces");
    t->pieces = (jitanon_trim_piece *)arr;
    t->pieces[*n].start = start;
    t->pieces[*n].len = last - start + 1;
    t->pieces[*n].pgoff = pgoff + (start - orig_start); /* modulo 2^64 by design */
    (*n)++;
    return JITANON_OK;
}

/* The parts of [start, last] not on jit code in map m, into t->pieces.  Reads only. */
JITANON__PRIVATE jitanon_result jitanon__trim_gaps(jitanon_trim *t, const jitanon_rangemap *m, uint64_t start,
                                                   uint64_t last, uint64_t pgoff, size_t *n, jitanon_error *err)
{
    jitanon_rangemap_iter it;
    jitanon_range r;
    uint64_t cur = start, rs, rl;
    jitanon_result res;
    jitanon_rangemap_iter_begin(&it, m, start, last - start + 1);
    while (jitanon_rangemap_iter_next(&it, &r)) {
        if (r.kind != JITANON_TRIM_JIT) continue;
        rs = r.start > start ? r.start : start;
        rl = r.start + (r.len - 1);
        if (rs > cur && (res = jitanon__trim_piece(t, n, cur, rs - 1, start, pgoff, err)) != JITANON_OK) return res;
        if (rl >= last) return JITANON_OK;
        cur = rl + 1;
    }
    return jitanon__trim_piece(t, n, cur, last, start, pgoff, err);
}

/* A trimmable mmap of a jitdump process: compute the pieces, reserve every node the
   assignments may need (pieces + 1 for a cut tail), then apply them, which cannot fail. */
JITANON__PRIVATE jitanon_result jitanon__trim_anon(jitanon_trim *t, jitanon__trim_proc *p, uint64_t start,
                                                   uint64_t last, uint64_t pgoff, uint64_t map_id, size_t *n,
                                                   jitanon_error *err)
{
    size_t i;
    jitanon_result r = jitanon__trim_gaps(t, &p->map, start, last, pgoff, n, err);
    if (r == JITANON_OK) r = jitanon__trim_fix(t, jitanon__rm_reserve(&p->map, *n + 1, err), err);
    if (r != JITANON_OK) return r;
    for (i = 0; i < *n; i++) {
        r = jitanon__rm_set(&p->map, t->pieces[i].start, t->pieces[i].start + (t->pieces[i].len - 1),
                            JITANON_TRIM_ANON, map_id, err);
        JITANON_ASSERT(r == JITANON_OK);
    }
    if (*n == 0) t->stats.dropped++;
    else if (*n == 1 && t->pieces[0].start == start && t->pieces[0].len - 1 == last - start) t->stats.kept++;
    else t->stats.split++;
    t->stats.pieces += *n;
    return JITANON_OK;
}

/* A FILE mmap, or a trimmable one of a process without a jitdump: recorded whole. */
JITANON__PRIVATE jitanon_result jitanon__trim_whole(jitanon_trim *t, jitanon__trim_proc *p, uint64_t start,
                                                    uint64_t last, uint64_t pgoff, jitanon_trim_kind kind,
                                                    uint64_t map_id, size_t *n, jitanon_error *err)
{
    jitanon_result r = jitanon__trim_piece(t, n, start, last, start, pgoff, err);
    if (r == JITANON_OK) r = jitanon__trim_fix(t, jitanon__rm_set(&p->map, start, last, (uint32_t)kind, map_id, err), err);
    if (r != JITANON_OK) return r;
    if (kind == JITANON_TRIM_FILE) t->stats.file_mmaps++;
    else t->stats.untrimmed++;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_trim_mmap(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start,
                                             uint64_t len, uint64_t pgoff, jitanon_trim_kind kind,
                                             uint64_t map_id, const jitanon_trim_piece **pieces,
                                             size_t *count, jitanon_error *err)
{
    jitanon__trim_proc *p;
    uint64_t last = 0;
    size_t n = 0;
    int late, span = jitanon__rm_span(start, len, &last);
    jitanon_result r;
    jitanon__clear_error(err);
    t->limit_hit = 0;
    if (pieces) *pieces = NULL;
    if (count) *count = 0;
    if (kind != JITANON_TRIM_ANON && kind != JITANON_TRIM_FILE)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "mmap kind %u is neither ANON nor FILE", (unsigned)kind);
    if (span < 0) return jitanon__rm_bad_span(err, start, len);
    if (!span) { /* covers nothing: pass it through, remember nothing */
        r = jitanon__trim_piece(t, &n, start, start, start, pgoff, err);
        if (r != JITANON_OK) return r;
        t->pieces[0].len = 0;
    } else {
        r = jitanon__trim_begin(t, pid, time, &p, &late, err);
        if (r != JITANON_OK) return r;
        if (kind == JITANON_TRIM_ANON && p->has_jitdump) r = jitanon__trim_anon(t, p, start, last, pgoff, map_id, &n, err);
        else r = jitanon__trim_whole(t, p, start, last, pgoff, kind, map_id, &n, err);
        if (r != JITANON_OK) return r;
        jitanon__trim_commit(t, p, time, late);
    }
    if (pieces) *pieces = n ? t->pieces : NULL;
    if (count) *count = n;
    return JITANON_OK;
}

JITANON_API void jitanon_trim_forget(jitanon_trim *t, uint32_t pid)
{
    jitanon__trim_proc *p = jitanon__trim_find(t, pid);
    size_t i;
    uint32_t node;
    jitanon_result r;
    if (!p) return;
    i = (size_t)(p - t->procs);
    jitanon_rangemap_free(&p->map);
    r = jitanon__rm_set(&t->pids, pid, pid, 0, 0, NULL); /* removes a whole node: allocates nothing */
    JITANON_ASSERT(r == JITANON_OK);
    (void)r;
    if (i != --t->nprocs) { /* keep procs dense: the last one moves into the hole */
        t->procs[i] = t->procs[t->nprocs];
        node = jitanon__rm_find(&t->pids, t->procs[i].pid);
        JITANON_ASSERT(node);
        t->pids.nodes_[node].id = i;
    }
    t->stats.processes--;
}

JITANON_API jitanon_result jitanon_trim_fork(jitanon_trim *t, uint32_t parent, uint32_t child, jitanon_error *err)
{
    jitanon__trim_proc *c;
    jitanon_result r;
    jitanon__clear_error(err);
    t->limit_hit = 0;
    if (parent == child) return JITANON_OK; /* a thread: it shares the map */
    if (!jitanon__trim_find(t, parent)) {
        jitanon_trim_forget(t, child);
        return JITANON_OK;
    }
    r = jitanon__trim_get(t, child, &c, err);
    if (r != JITANON_OK) return r;
    r = jitanon_rangemap_copy(&c->map, &jitanon__trim_find(t, parent)->map, err);
    if (r != JITANON_OK) return jitanon__trim_fix(t, r, err);
    c->has_jitdump = 0; /* perf looks jitdumps up by pid: the child has none */
    return JITANON_OK;
}

JITANON_API jitanon_trim_kind jitanon_trim_resolve(const jitanon_trim *t, uint32_t pid, uint64_t addr,
                                                   jitanon_range *out)
{
    const jitanon__trim_proc *p = jitanon__trim_find(t, pid);
    jitanon_range tmp;
    if (!out) out = &tmp;
    memset(out, 0, sizeof *out);
    if (!p || !jitanon_rangemap_lookup(&p->map, addr, out)) return JITANON_TRIM_NONE;
    return (jitanon_trim_kind)out->kind;
}

JITANON_API const jitanon_rangemap *jitanon_trim_map(const jitanon_trim *t, uint32_t pid)
{
    const jitanon__trim_proc *p = jitanon__trim_find(t, pid);
    return p ? &p->map : NULL;
}

JITANON_API const jitanon_trim_stats *jitanon_trim_get_stats(const jitanon_trim *t) { return &t->stats; }

JITANON_API jitanon_trim_kind jitanon_trim_classify(const char *name, size_t len)
{
    static const char *const prefixes[] = {"//anon", "[anon:", "/memfd:"};
    size_t i, n;
    for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        n = strlen(prefixes[i]);
        if (name && len >= n && memcmp(name, prefixes[i], n) == 0) return JITANON_TRIM_ANON;
    }
    return JITANON_TRIM_FILE;
}
