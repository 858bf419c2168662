/* -- Address ranges: an interval map, and the //anon trimming engine ------------------

   jitanon_rangemap is a reusable map from non-overlapping address ranges to a small
   value (a kind and an id).  jitanon_trim builds one per process and uses it to replay
   the address map that perf builds from our *output*: later mappings win their range and
   split older ones.  A trimmable mmap (`//anon`, `[anon:`, `/memfd:`) of a process with
   a jitdump is replaced by its pieces that do not cover live jitted code, so it never
   hides a function the jitdump loaded earlier; everything else resolves as before.

   Ordering: the engine is a replay in *feed order*.  Callers feed each process's events
   in nondecreasing time; among events with equal timestamps the one fed later wins (as in
   perf's ordered queue, which is stable), so the injector must write its output in the
   order it fed the engine.  The timestamps are only checked (see reject_out_of_order). */

struct jitanon__rm_node; /* defined with the implementation */

/* One piece of a rangemap: [start, start + len), len >= 1.  Ranges may end at
   UINT64_MAX inclusive; `len` always fits because a piece never grows beyond the range
   that was assigned (len <= UINT64_MAX).  kind 0 is never stored (it means "nothing"). */
typedef struct jitanon_range {
    uint64_t start, len;
    uint32_t kind;
    uint64_t id;
} jitanon_range;

/* Caller-owned interval map.  jitanon_rangemap_init, then assign/lookup/iterate, then
   jitanon_rangemap_free.  Nodes live in one pool (indices, not pointers), so the struct may
   be moved by value.  Every operation is expected O(log n + k), k = pieces touched (a
   treap with deterministic priorities; nothing recurses). */
typedef struct jitanon_rangemap {
    struct jitanon__rm_node *nodes_; /* pool; index 0 is the null node */
    size_t cap_;                     /* pool capacity in nodes */
    uint32_t used_, free_, nfree_;   /* high-water mark, free list head and length */
    uint32_t root_, count_;          /* treap root, number of pieces */
    uint32_t seed_;                  /* deterministic priority generator */
    jitanon_allocator allocator;
} jitanon_rangemap;

/* Iterator over the pieces overlapping a range, in address order.  Invalidated by any
   change to the map. */
typedef struct jitanon_rangemap_iter {
    const jitanon_rangemap *map;
    uint32_t cur;
    uint64_t last; /* inclusive end of the queried range */
} jitanon_rangemap_iter;

/* Initialises an empty map; allocates nothing yet.  `a` (may be NULL = default) is
   copied.  Never fails. */
JITANON_API void jitanon_rangemap_init(jitanon_rangemap *m, const jitanon_allocator *a);

/* Frees the pool; the map is empty and reusable afterwards.  NULL-safe. */
JITANON_API void jitanon_rangemap_free(jitanon_rangemap *m);

/* Makes [start, start + len) map to (kind, id): pieces there are overwritten, pieces
   sticking out on either side are cut.  kind 0 erases the range instead.  len 0 is a
   no-op (JITANON_OK).  A range past UINT64_MAX fails with JITANON_ERR_INVALID_ARGUMENT;
   JITANON_ERR_NOMEM / JITANON_ERR_LIMIT (2^32 - 2 pieces) leave the map unchanged. */
JITANON_API jitanon_result jitanon_rangemap_assign(jitanon_rangemap *m, uint64_t start, uint64_t len,
                                                   uint32_t kind, uint64_t id, jitanon_error *err);

/* Removes every piece (or part of one) inside [start, start + len).  Same errors as
   jitanon_rangemap_assign. */
JITANON_API jitanon_result jitanon_rangemap_erase(jitanon_rangemap *m, uint64_t start, uint64_t len,
                                                  jitanon_error *err);

/* Finds the piece containing `addr`.  Returns 1 and fills *out (may be NULL) if there is
   one, else 0 (and *out is zeroed). */
JITANON_API int jitanon_rangemap_lookup(const jitanon_rangemap *m, uint64_t addr, jitanon_range *out);

/* Starts iterating the pieces that overlap [start, start + len); a range running past
   UINT64_MAX is clipped there, len 0 yields nothing.  Pieces come out whole (not clipped
   to the query). */
JITANON_API void jitanon_rangemap_iter_begin(jitanon_rangemap_iter *it, const jitanon_rangemap *m,
                                             uint64_t start, uint64_t len);

/* Starts iterating every piece of the map, in address order. */
JITANON_API void jitanon_rangemap_iter_all(jitanon_rangemap_iter *it, const jitanon_rangemap *m);

/* Next piece in address order: returns 1 and fills *out, or 0 at the end. */
JITANON_API int jitanon_rangemap_iter_next(jitanon_rangemap_iter *it, jitanon_range *out);

/* Number of pieces in the map. */
JITANON_API size_t jitanon_rangemap_count(const jitanon_rangemap *m);

/* Replaces *dst's contents with a copy of src (dst keeps its own allocator).  On failure
   (JITANON_ERR_NOMEM) dst is unchanged. */
JITANON_API jitanon_result jitanon_rangemap_copy(jitanon_rangemap *dst, const jitanon_rangemap *src,
                                                 jitanon_error *err);

/* -- The trimming engine ------------------------------------------------------------------ */

/* What an address of a process resolves to (the rangemap kinds the engine stores). */
typedef enum jitanon_trim_kind {
    JITANON_TRIM_NONE = 0, /* nothing mapped there */
    JITANON_TRIM_JIT = 1,  /* a jitted function; id = the func_id given to load/move */
    JITANON_TRIM_ANON = 2, /* a trimmable mmap (//anon, [anon:, /memfd:); id = map_id */
    JITANON_TRIM_FILE = 3  /* any other mmap; id = map_id */
} jitanon_trim_kind;

/* One piece of an mmap to write out: pgoff = original pgoff + (start - original start),
   computed modulo 2^64 (anonymous maps carry the start address as pgoff). */
typedef struct jitanon_trim_piece {
    uint64_t start, len, pgoff;
} jitanon_trim_piece;

typedef struct jitanon_trim_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    size_t memory_limit;    /* bytes the engine may hold (besides itself); 0 = unlimited */
    int reject_out_of_order; /* an event older than its process's latest one fails with
                                JITANON_ERR_INVALID_ARGUMENT instead of being counted */
    uint32_t end_zero_;
} jitanon_trim_opts;

typedef struct jitanon_trim_stats {
    uint64_t loads, moves;   /* jit events applied (zero-sized ones are not counted) */
    uint64_t file_mmaps;     /* FILE mmaps recorded */
    uint64_t untrimmed;      /* trimmable mmaps of processes without a jitdump: kept whole */
    uint64_t kept;           /* trimmable mmaps of jitdump processes that hid no jit code */
    uint64_t split;          /* ... emitted as one or more smaller pieces */
    uint64_t dropped;        /* ... lying wholly on live jit code: nothing emitted */
    uint64_t pieces;         /* pieces emitted for trimmable mmaps of jitdump processes */
    uint64_t out_of_order;   /* events older than their process's latest (accepted) */
    uint64_t processes;      /* processes currently known */
    size_t bytes_held, peak_bytes; /* memory held by the engine's tables */
} jitanon_trim_stats;

/* Opaque engine. */
typedef struct jitanon_trim jitanon_trim;

/* Creates an engine (opts may be NULL).  Returns NULL on error (JITANON_ERR_BAD_OPTIONS,
   JITANON_ERR_NOMEM).  Free with jitanon_trim_free. */
JITANON_API jitanon_trim *jitanon_trim_new(const jitanon_trim_opts *opts, jitanon_error *err);

/* Frees the engine and everything it holds.  NULL-safe. */
JITANON_API void jitanon_trim_free(jitanon_trim *t);

/* Marks `pid` as having a jitdump (perf inject's marker mmap was seen): from now on its
   trimmable mmaps are trimmed.  Without it they are kept whole and may hide jit code,
   exactly as perf would.  Errors: JITANON_ERR_NOMEM / JITANON_ERR_LIMIT. */
JITANON_API jitanon_result jitanon_trim_set_jitdump(jitanon_trim *t, uint32_t pid, jitanon_error *err);

/* A JIT_CODE_LOAD: [start, start + size) now holds func_id (over anything there).
   size 0 is a no-op; a range past UINT64_MAX is JITANON_ERR_INVALID_ARGUMENT.  On any
   error the address maps are unchanged (as for jitanon_trim_mmap). */
JITANON_API jitanon_result jitanon_trim_load(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start,
                                             uint64_t size, uint64_t func_id, jitanon_error *err);

/* A JIT_CODE_MOVE: like a load of func_id at [new_start, new_start + size).  The old
   range is NOT unmapped, because perf does not unmap it either; old_start is unused. */
JITANON_API jitanon_result jitanon_trim_move(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t old_start,
                                             uint64_t new_start, uint64_t size, uint64_t func_id,
                                             jitanon_error *err);

/* An MMAP/MMAP2 of kind JITANON_TRIM_ANON or JITANON_TRIM_FILE (see jitanon_trim_classify).
   *pieces / *count (either may be NULL) receive what to write out instead, in address
   order, in a buffer owned by the engine and valid until the next call:
   - FILE, or ANON of a process without a jitdump: the mmap itself, unchanged;
   - ANON of a jitdump process: its parts not on live jit code (zero, one or more);
     cost O((pieces + 1) log n + k), k = map pieces under the mmap.
   len 0: the mmap unchanged, nothing recorded.  A range past UINT64_MAX or another kind
   is JITANON_ERR_INVALID_ARGUMENT.  On any error every address map is left unchanged
   (the process may have been registered, with an empty map). */
JITANON_API jitanon_result jitanon_trim_mmap(jitanon_trim *t, uint32_t pid, uint64_t time, uint64_t start,
                                             uint64_t len, uint64_t pgoff, jitanon_trim_kind kind,
                                             uint64_t map_id, const jitanon_trim_piece **pieces,
                                             size_t *count, jitanon_error *err);

/* perf's FORK of a new process: `child` starts with a copy of parent's address map (as
   perf clones it) and without a jitdump.  parent == child, or an unknown parent, gives
   the child an empty map.  Errors: JITANON_ERR_NOMEM / JITANON_ERR_LIMIT, engine unchanged. */
JITANON_API jitanon_result jitanon_trim_fork(jitanon_trim *t, uint32_t parent, uint32_t child,
                                             jitanon_error *err);

/* Forgets a process and its jitdump flag (exit, or exec, which starts a fresh address
   map and a new program that must announce its own jitdump).  Cannot fail. */
JITANON_API void jitanon_trim_forget(jitanon_trim *t, uint32_t pid);

/* What `addr` of `pid` resolves to after every event fed so far, in the output.  Fills
   *out (may be NULL) with the piece (start, len, kind, id) and returns its kind;
   JITANON_TRIM_NONE (out zeroed) when nothing is mapped or the pid is unknown.  This is
   all a profiler needs to symbolize samples in memory. */
JITANON_API jitanon_trim_kind jitanon_trim_resolve(const jitanon_trim *t, uint32_t pid, uint64_t addr,
                                                   jitanon_range *out);

/* The process's current map (kinds are jitanon_trim_kind), for iterating; NULL for an
   unknown pid.  Invalidated by the next call that feeds an event. */
JITANON_API const jitanon_rangemap *jitanon_trim_map(const jitanon_trim *t, uint32_t pid);

/* Counters so far; never NULL for a live engine. */
JITANON_API const jitanon_trim_stats *jitanon_trim_get_stats(const jitanon_trim *t);

/* JITANON_TRIM_ANON for a name starting with "//anon", "[anon:" or "/memfd:" (the names
   perf inject --jit strips), else JITANON_TRIM_FILE.  `name` need not be NUL-terminated. */
JITANON_API jitanon_trim_kind jitanon_trim_classify(const char *name, size_t len);
