/* tests/memio.h: memory as the library's I/O callbacks, for the unit tests and the fuzz
   harnesses (include it after jitanon.h).

   memin is a jitanon_read_fn/jitanon_seek_fn over a byte array: whole reads, reads of
   at most `step` bytes, or odd-sized ones (`odd`: the step changes after every read, 1..97,
   so reads end inside records and headers).  Reads see only the first `size` bytes: raise
   it to play a file that is still being written.  membuf_pwrite is the positioned write a
   file-mode perf.data writer patches its header with. */
#ifndef JITANON_TEST_MEMIO_H
#define JITANON_TEST_MEMIO_H

typedef struct memin {
    const uint8_t *data;
    size_t size, pos;
    size_t step; /* 0: as much as asked */
    int odd;
} memin;

static inline memin memin_make(const void *data, size_t size, size_t step, int odd)
{
    memin m;
    m.data = (const uint8_t *)data;
    m.size = size;
    m.pos = 0;
    m.step = step;
    m.odd = odd;
    return m;
}

static inline size_t memin_read(void *user, void *dst, size_t size)
{
    memin *m = (memin *)user;
    size_t n = m->size - m->pos;
    if (n > size) n = size;
    if (m->step && n > m->step) n = m->step;
    if (m->odd) m->step = m->step * 7 % 97 + 1; /* 1..97, never 0 before the end */
    if (n) memcpy(dst, m->data + m->pos, n);
    m->pos += n;
    return n;
}

static inline int memin_seek(void *user, uint64_t off)
{
    memin *m = (memin *)user;
    if (off > m->size) return 1;
    m->pos = (size_t)off;
    return 0;
}

static inline int membuf_pwrite(void *user, const void *data, size_t size, uint64_t off)
{
    jitanon_membuf *m = (jitanon_membuf *)user;
    if (off > m->size || size > m->size - off) return 1;
    memcpy(m->data + off, data, size);
    return 0;
}

/* memio_pool: jitanon_thread_pool without threads, the seam's in-memory implementation.
   Tasks run on the calling thread when it waits for them: in queue order, or (reverse)
   the newest first, so a test sees that the library collects outcomes in order whatever
   order its tasks ran in.  refuse: start_fn fails (no worker could start). */
typedef struct memio_pool {
    void (*task)(void *ctx, size_t index);
    void *ctx;
    size_t queued, done;
    int reverse, refuse, started, stopped;
} memio_pool;

static inline int memio_pool_start(void *user, unsigned workers, void (*task)(void *ctx, size_t index), void *ctx,
                                   const jitanon_allocator *allocator, void **pool)
{
    memio_pool *m = (memio_pool *)user;
    (void)workers, (void)allocator;
    if (m->refuse) return 0;
    m->task = task;
    m->ctx = ctx;
    m->queued = m->done = 0;
    m->started++;
    *pool = m;
    return 1;
}

static inline void memio_pool_run(void *user, void *pool, size_t first, size_t count)
{
    memio_pool *m = (memio_pool *)pool;
    (void)user;
    if (first + count > m->queued) m->queued = first + count;
}

static inline void memio_pool_wait(void *user, void *pool, size_t end)
{
    memio_pool *m = (memio_pool *)pool;
    size_t i;
    (void)user;
    if (end <= m->done) return;
    for (i = 0; i < end - m->done; i++) m->task(m->ctx, m->reverse ? end - 1 - i : m->done + i);
    m->done = end;
}

static inline void memio_pool_stop(void *user, void *pool)
{
    (void)user;
    ((memio_pool *)pool)->stopped++;
}

static inline jitanon_thread_pool memio_pool_make(memio_pool *m)
{
    jitanon_thread_pool tp = {memio_pool_start, memio_pool_run, memio_pool_wait, memio_pool_stop, NULL};
    tp.user = m;
    return tp;
}

/* A jitanon_stream reading a memin. */
static inline jitanon_stream memin_stream(memin *m)
{
    jitanon_stream s = {memin_read, NULL, NULL, NULL, 0, NULL};
    s.user = m;
    s.size = m->size;
    return s;
}

#endif
