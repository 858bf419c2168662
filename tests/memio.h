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

#endif
