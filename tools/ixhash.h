/* ixhash.h: the tools' one hash table (not part of jitanon.h): open addressing over the
   indices of a table the caller keeps (flamegraph.h's names and tree nodes, pprof.h's
   strings, mappings, functions, locations and samples).  A slot holds an index + 1 (0:
   empty); the table grows at half full, rehashing each index through the caller's
   `rehash`; nothing is ever removed.  No dependency beyond libc.  Allocation failure
   exits with status 3, as the tools do.

       ix_hash h = {0};
       int found;
       size_t slot = ix_find(&h, hash, table, &key, eq, rehash, &found);
       if (found) return h.slot[slot] - 1;      // the index of the entry equal to key
       ... append the entry to the table, at index n ...
       ix_put(&h, slot, n);
       ...
       ix_release(&h); */
#ifndef IXHASH_H
#define IXHASH_H

#include <stdint.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#define IX_DEF static __attribute__((unused))
#else
#define IX_DEF static
#endif

typedef struct ix_hash {
    uint32_t *slot;
    size_t cap, n;
} ix_hash;

/* Whether the entry at idx of the caller's table (ctx) equals the key. */
typedef int (*ix_eq_fn)(const void *ctx, size_t idx, const void *key);
/* The hash of the entry at idx (as the caller hashed its key when it was added). */
typedef uint64_t (*ix_rehash_fn)(const void *ctx, size_t idx);

/* A slot from a hash: splitmix64's finaliser first, so that keys differing only in high
   bits (addresses, indices mixed by multiplication) do not share low bits.  cap: a power
   of two. */
IX_DEF size_t ix_slot(uint64_t h, size_t cap)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

/* The slot of the entry equal to the key, or of the empty slot where it goes (room made
   for one more first); *found says which. */
IX_DEF size_t ix_find(ix_hash *h, uint64_t hash, const void *ctx, const void *key, ix_eq_fn eq, ix_rehash_fn rehash,
                      int *found)
{
    size_t i;
    if (2 * (h->n + 1) > h->cap) {
        size_t old = h->cap, k;
        uint32_t *o = h->slot;
        h->cap = old ? old * 2 : 256;
        h->slot = (uint32_t *)calloc(h->cap, sizeof *h->slot);
        if (!h->slot) exit(3);
        for (k = 0; k < old; k++)
            if (o[k]) {
                i = ix_slot(rehash(ctx, o[k] - 1), h->cap);
                while (h->slot[i]) i = (i + 1) & (h->cap - 1);
                h->slot[i] = o[k];
            }
        free(o);
    }
    for (i = ix_slot(hash, h->cap); h->slot[i]; i = (i + 1) & (h->cap - 1))
        if (eq(ctx, h->slot[i] - 1, key)) {
            *found = 1;
            return i;
        }
    *found = 0;
    return i;
}

/* Index idx (its entry just added) into the empty slot ix_find gave for it. */
IX_DEF void ix_put(ix_hash *h, size_t slot, size_t idx)
{
    if (idx >= UINT32_MAX) exit(3);
    h->slot[slot] = (uint32_t)(idx + 1);
    h->n++;
}

IX_DEF void ix_release(ix_hash *h)
{
    free(h->slot);
    h->slot = NULL;
    h->cap = h->n = 0;
}

#endif
