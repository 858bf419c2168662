/* jitanon.h - correct profiles of JIT-compiled code on Linux.  License: see end of file.

   Reads jitdump files and perf.data recordings, writes ELF stubs for jitted code, and
   rewrites perf.data the way `perf inject --jit` does - except that coalesced `//anon`
   (and memfd) mmaps are trimmed to the parts that do not overlap live jitted code,
   instead of being dropped whole.

   Do this:
       #define JITANON_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   Quick start - read a jitdump held in memory:

       jitanon_jitdump_iter it;
       jitanon_jitdump_record rec;
       jitanon_error err;
       jitanon_result r = jitanon_jitdump_iter_begin(&it, data, size, NULL, &err);
       while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, &err)) == JITANON_OK)
           if (rec.id == JITANON_JITDUMP_CODE_LOAD) use(rec.load.code_addr, rec.load.name);
       if (r != JITANON_END) report(&err);   // err.offset is the byte offset of the problem

   Emit an ELF stub for one jitted function (file offset of the code = the MMAP2 pgoff):

       jitanon_elf_func fn = {0};
       jitanon_elf_info info;
       jitanon_membuf out = {0};
       jitanon_sink sink = {jitanon_membuf_write, &out};
       fn.name = rec.load.name; fn.code_addr = rec.load.code_addr; fn.code = rec.load.code;
       jitanon_elf_write_function(sink, &it.header, &fn, NULL, &info, &err);

   Rewrite a perf.data the way `perf inject --jit` does, trimming //anon mmaps:

       jitanon_inject_stats st;
       jitanon_inject_file("perf.data", "perf.jit.data", JITANON_PERF_SAME_MODE, NULL, NULL,
                           &st, &err);

   Or resolve samples in memory without writing anything (jitanon_inject with a NULL
   writer and opts.on_sample), or drive the trimming engine (jitanon_trim_*) yourself.

   Configuration macros (define before including the implementation):
       JITANON_STATIC            make every public function static to the including file
       JITANON_API               override the linkage of public functions (default: extern)
       JITANON_MALLOC/REALLOC/FREE  default allocator (all three or none; default libc)
       JITANON_ASSERT(x)         internal invariant / API misuse checks (default: assert)
       JITANON_NO_STDIO          remove the path- and FILE-based convenience functions; this
                                 also leaves out the OS layer (as JITANON_NO_POSIX does)
       JITANON_NO_POSIX          never use POSIX calls (atomic output, ELF files, marker mmap,
                                 clock: they report JITANON_ERR_FEATURE_DISABLED).  Otherwise
                                 POSIX is used on every unix whatever the -std=: in strict
                                 mode this file defines _POSIX_C_SOURCE 200809L before the
                                 first system header, and stops with #error when the
                                 including file included one first, jitanon.h itself
                                 included without the implementation counting too (then
                                 define _POSIX_C_SOURCE=200809L or _GNU_SOURCE before any
                                 #include)
       JITANON_NO_THREADS        leave POSIX threads out (with jitanon_inject_opts.elf_threads
                                 the calling thread then writes the files, reported as
                                 JITANON_INJECT_FALLBACK_NO_THREADS); with glibc older than
                                 2.34 link with -pthread
       JITANON_NO_SHA_NI         never use the x86 SHA extensions for build-ids (they are
                                 used, with gcc or clang on x86-64, when CPUID reports them)
       JITANON_USE_ZLIB          compress debug sections (needs -lz); otherwise disabled
       JITANON_NO_ZSTD           leave out the built-in zstd decoder (perf record -z
                                 recordings then need jitanon_perf_opts.decompress)
       JITANON_MAX_RECORD_SIZE   largest jitdump record accepted (default 256 MiB)
       JITANON_CONFIG_HEADER     a header included first, to hold the above
       JITANON_ERROR_LOCATION    record the implementation's function/line in errors
       JITANON_COMPAT_0_1, _0_2  keep the names of those releases (typedefs and inline
                                 functions, at the end of this file)

   jitanon_features() tells what a build has (JITANON_FEATURE_POSIX, _THREADS, ...).

   Errors: every fallible call returns a jitanon_result and fills an optional
   jitanon_error (code, byte offset in the input, record index, message).  Malformed
   input never asserts, crashes or leaks; it yields a typed error.

   Thread safety: there is no global or static mutable state.  Distinct objects may be
   used from distinct threads at the same time.  The library starts threads only when
   asked to (jitanon_inject_opts.elf_threads).

   Naming: one prefix per format or part (jitanon_jitdump_*, jitanon_perf_*,
   jitanon_elf_*, jitanon_rangemap_*, jitanon_trim_*, jitanon_inject_*, and the helpers
   jitanon_membuf_*, jitanon_atomic_*).  A caller-owned struct is set up by _init (_open
   for a path) and torn down by _release; a heap object comes from _create or _load_*
   (which return a jitanon_result and the object through an out parameter, so the reason
   for a failure is not lost when err is NULL) and goes with _destroy; iterators are
   _iter_begin and _iter_next.  Where ending is itself an act that can fail it has its
   own verb: a writer or builder _finish-es its output, a jitdump file _close-s (it
   writes CODE_CLOSE), an atomic file _commit-s or _abort-s.  Structs that other objects
   point into say so ("do not copy"); the rest may be moved by value.  Fields whose names
   end in _ are private: zero them with the rest, never set or read them.

   Recent history (the full revision history, with every rename, is at the end of this file):
       0.5.0  the platform as a seam ([posix], jitanon_stream, jitanon_thread_pool), the
              public pieces tools need (record encoders, a dump's functions, on_event),
              one counting allocator, stats nested by stage, a faster record path
       0.4.0  live pipes (dumps followed as they grow), containers (dumps read through
              /proc/PID/root), perf maps (symbols-only stubs for //anon leftovers), per-
              function files only for what samples reach (JITANON_ELF_FILES_AUTO)
       0.3.0  late loads, perf's build-id cache, a zstd decoder (perf record -z), damaged
              input recovered from, old perf.data layouts; page-aligned ELF stubs
       0.2.0  the API made consistent (JITANON_COMPAT_0_1 keeps the 0.1 names)
*/

/* Strict ISO modes (-std=c99) hide POSIX unless a feature macro asks for it before the
   first system header: ask for it here, for the implementation only, when the includer
   chose nothing (gnu modes and explicit choices are left alone).  _FEATURES_H (glibc, musl)
   means a system header came first: too late, the implementation says so with #error. */
#if defined(JITANON_IMPLEMENTATION) && !defined(JITANON_IMPLEMENTATION_INCLUDED) && defined(__unix__) &&       \
    defined(__STRICT_ANSI__) && !defined(JITANON_NO_POSIX) && !defined(JITANON_NO_STDIO) &&                   \
    !defined(_POSIX_C_SOURCE) && !defined(_POSIX_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) && \
    !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE) && !defined(_FEATURES_H)
#define _POSIX_C_SOURCE 200809L
#endif

#ifndef JITANON_H_INCLUDED
#define JITANON_H_INCLUDED

#ifdef JITANON_CONFIG_HEADER
#include JITANON_CONFIG_HEADER
#endif

#include <stddef.h>
#include <stdint.h>

#define JITANON_VERSION_MAJOR 0
#define JITANON_VERSION_MINOR 5
#define JITANON_VERSION_PATCH 0
#define JITANON_VERSION_STRING "0.5.0"
/* A version as one number (0.4.0 -> 4000).  C++ gets its own casts: an includer built with
   -Wold-style-cast must not see a C cast. */
#ifdef __cplusplus
#define jitanon_pack_version(major, minor, patch) \
    (static_cast<uint32_t>(major) * 1000000u + static_cast<uint32_t>(minor) * 1000u + \
     static_cast<uint32_t>(patch))
#else
#define jitanon_pack_version(major, minor, patch) \
    ((uint32_t)(major) * 1000000u + (uint32_t)(minor) * 1000u + (uint32_t)(patch))
#endif
#define JITANON_VERSION \
    jitanon_pack_version(JITANON_VERSION_MAJOR, JITANON_VERSION_MINOR, JITANON_VERSION_PATCH)

#ifndef JITANON_API
#ifdef JITANON_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define JITANON_API static __attribute__((unused))
#else
#define JITANON_API static
#endif
#else
#define JITANON_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* -- Results and errors ---------------------------------------------------------- */

/* One list generates the enum and the descriptions, so they cannot drift apart. */
#define JITANON__RESULTS(X)                                                            \
    X(OK, "ok")                                                                        \
    X(END, "end of input")                                                             \
    X(AGAIN, "incomplete trailing record; more data may follow")                      \
    X(ERR_TRUNCATED, "input is truncated")                                             \
    X(ERR_BAD_MAGIC, "not a recognised file (bad magic)")                              \
    X(ERR_BAD_VERSION, "unsupported format version")                                   \
    X(ERR_BAD_FLAGS, "unsupported flags")                                              \
    X(ERR_BAD_HEADER, "malformed file header")                                         \
    X(ERR_BAD_RECORD, "malformed record")                                              \
    X(ERR_LIMIT, "a configured limit was exceeded")                                    \
    X(ERR_NOMEM, "out of memory")                                                      \
    X(ERR_IO, "input/output error")                                                    \
    X(ERR_WRITE, "write failed")                                                       \
    X(ERR_BAD_OPTIONS, "options struct not zero-initialised")                          \
    X(ERR_UNSUPPORTED, "unsupported input")                                            \
    X(ERR_COMPRESSED, "compressed perf.data needs a decompressor")                     \
    X(ERR_CLOCK, "recording clock does not match the jitdump clock")                   \
    X(ERR_FEATURE_DISABLED, "feature compiled out")                                    \
    X(ERR_INVALID_ARGUMENT, "invalid argument")                                        \
    X(ERR_BAD_ZSTD, "malformed zstd data")

#define JITANON__ENUM_ITEM(name, desc) JITANON_##name,
typedef enum jitanon_result {
    JITANON__RESULTS(JITANON__ENUM_ITEM)
    JITANON_RESULT_COUNT
} jitanon_result;
#undef JITANON__ENUM_ITEM

typedef struct jitanon_error {
    jitanon_result type;     /* JITANON_OK when nothing went wrong */
    const char *description; /* static text for `type` */
    uint64_t offset;         /* byte offset in `source` where the problem is (a malformed
                                perf.data record: its first byte; JITANON_ERR_TRUNCATED
                                from the perf.data reader: where the input ends, info
                                naming what it cut); 0 for a problem at no
                                place in it (JITANON_ERR_LIMIT, _NOMEM, _IO, _WRITE, options
                                and arguments: jitanon_format_error then shows none) */
    uint64_t record_index;   /* 0-based index of the record involved, if any */
    uint32_t record_type;    /* type/id of that record, if any */
    char info[128];          /* detail, always NUL-terminated */
    const char *func;        /* implementation location (JITANON_ERROR_LOCATION only) */
    int line;
    /* The input the offset belongs to, NUL-terminated: "perf.data" (the perf.data
       reader), "jitdump" or "perf map" (their readers), followed by the file's path when
       whoever knows it says so (jitanon_inject: "jitdump /tmp/jit-42.dump"); empty when
       the problem is in no input (options, memory, output).  jitanon_format_error leaves
       it out: print it beside the message. */
    char source[96];
} jitanon_error;

/* Static description of a result code; never NULL. */
JITANON_API const char *jitanon_result_string(jitanon_result r);

/* Formats `err` as one line ("truncated at byte 123 (record 4): ...", without "at byte"
   when the problem is at no offset; err.source is not included) into dst (always
   NUL-terminated when n > 0).  Returns the length the full text needs, like snprintf. */
JITANON_API size_t jitanon_format_error(char *dst, size_t n, const jitanon_error *err);

/* The version of the implementation (JITANON_VERSION when header and implementation match). */
JITANON_API uint32_t jitanon_version(void);

/* What the implementation was built with (see the configuration macros at the top). */
typedef enum jitanon_feature {
    JITANON_FEATURE_POSIX = 1,   /* file output, jitanon_jitdump_file_*, jitanon_jitdump_now */
    JITANON_FEATURE_THREADS = 2, /* jitanon_inject_opts.elf_threads */
    JITANON_FEATURE_ZLIB = 4,    /* compressed debug sections */
    JITANON_FEATURE_SHA_NI = 8,  /* x86 SHA extensions, used when CPUID reports them */
    JITANON_FEATURE_STDIO = 16,  /* the path- and FILE-based functions */
    JITANON_FEATURE_ZSTD = 32    /* the built-in zstd decoder (perf record -z) */
} jitanon_feature;
/* A bitmask of jitanon_feature. */
JITANON_API unsigned jitanon_features(void);

/* -- Memory, views, I/O callbacks ------------------------------------------------- */

/* Runtime allocator.  Any NULL function falls back to JITANON_MALLOC/REALLOC/FREE.
   Sizes are passed back so arena or counting allocators need no headers. */
typedef struct jitanon_allocator {
    void *(*alloc_fn)(void *user, size_t size);
    void *(*realloc_fn)(void *user, void *ptr, size_t old_size, size_t new_size);
    void (*free_fn)(void *user, void *ptr, size_t size);
    void *user;
} jitanon_allocator;

/* Internal, embedded in the perf.data reader and writer: the one counting allocator
   behind every memory limit (see [alloc]). */
typedef struct jitanon__counted {
    jitanon_allocator base; /* does the allocating */
    size_t limit;           /* 0 = none */
    size_t held, peak;
    int hit;                /* the limit refused a request (reported as JITANON_ERR_LIMIT) */
    const char *name;       /* the option that set the limit, for the message */
} jitanon__counted;

/* A string view into the input: not NUL-terminated. */
typedef struct jitanon_str {
    const char *data;
    size_t length;
} jitanon_str;

/* A byte view into the input. */
typedef struct jitanon_bytes {
    const uint8_t *data;
    size_t size;
} jitanon_bytes;

/* Pull source: copy up to `size` bytes into dst; return the count, 0 at end of data
   (for now: a growing file may have more later), or SIZE_MAX on an I/O error. */
typedef size_t (*jitanon_read_fn)(void *user, void *dst, size_t size);

/* Push sink: write all `size` bytes; return 0 on success, nonzero on failure. */
typedef int (*jitanon_write_fn)(void *user, const void *data, size_t size);

typedef struct jitanon_sink {
    jitanon_write_fn write_fn;
    void *user;
} jitanon_sink;

/* Internal, embedded in the streaming readers: a pulled input whose unread bytes are
   buf[pos, len), the first of them at input offset `off`. */
typedef struct jitanon__input {
    jitanon_read_fn read_fn;
    void *user;
    uint8_t *buf;
    size_t len, cap, pos;
    uint64_t off;
} jitanon__input;

/* A growable memory buffer usable as a sink (jitanon_membuf_write): zero it, optionally
   set `allocator` and `max_size`; `data`/`size` are the bytes written so far.  Free with
   jitanon_membuf_release.  It is also the one buffer jitanon's own writers append to. */
typedef struct jitanon_membuf {
    uint8_t *data;
    size_t size, capacity;
    jitanon_allocator allocator;
    size_t max_size; /* 0 = unlimited; writing beyond fails */
    /* internal */
    int failed_;         /* an internal append failed; later ones do nothing */
    jitanon_sink spill_; /* set: a full buffer is written here instead of growing */
} jitanon_membuf;

JITANON_API int jitanon_membuf_write(void *membuf, const void *data, size_t size);
JITANON_API void jitanon_membuf_release(jitanon_membuf *b);

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* Atomic output file: a temporary file (O_CREAT|O_EXCL, mode 0644) next to `path`, renamed
   over `path` only by _commit; _abort (or a failed _commit) unlinks it.  A `path` that
   exists and is no regular file (/dev/null, a FIFO, a terminal) is written in place
   (tmp_path stays NULL; nothing to sync or rename): a rename would replace the device
   with a file (as root, /dev/null itself).  Built with
   JITANON_NO_POSIX, _open returns JITANON_ERR_FEATURE_DISABLED.  It holds no pointer into
   itself, but jitanon_atomic_sink hands out a pointer TO it (the sink's user, also the
   `user` jitanon_atomic_pwrite gets): do not move or copy it while a writer uses them. */
typedef struct jitanon_atomic_file {
    int fd;
    char *tmp_path, *path;
    size_t tmp_cap_, path_cap_;
    jitanon_allocator allocator;
    int failed;   /* a write failed: _commit refuses */
    uint8_t *buf; /* writes are gathered into 64 KiB system calls */
    size_t buf_len, buf_cap;
} jitanon_atomic_file;

JITANON_API jitanon_result jitanon_atomic_open(jitanon_atomic_file *f, const char *path,
                                               const jitanon_allocator *allocator,
                                               jitanon_error *err);
/* Sink and positioned write for the writer (user = the jitanon_atomic_file). */
JITANON_API jitanon_sink jitanon_atomic_sink(jitanon_atomic_file *f);
JITANON_API int jitanon_atomic_pwrite(void *file, const void *data, size_t size, uint64_t offset);
/* do_fsync: flush to disk before the rename.  Closes the file either way (a failed commit
   removes the temporary file); _abort afterwards is harmless. */
JITANON_API jitanon_result jitanon_atomic_commit(jitanon_atomic_file *f, int do_fsync,
                                                 jitanon_error *err);
/* NULL-safe, idempotent: removes the temporary file if it still exists and frees what
   _open allocated.  Call it after a failed _open too. */
JITANON_API void jitanon_atomic_abort(jitanon_atomic_file *f);
#endif

/* -- zstd decoder ------------------------------------------------------------------ */

/* Decodes the zstd frames (RFC 8878) and skippable frames in src[0..size) and appends
   the content to `out` (its allocator serves the decoder too; its max_size is honoured).
   Frames that need a dictionary are refused (JITANON_ERR_UNSUPPORTED), corrupt data is
   JITANON_ERR_BAD_ZSTD or _TRUNCATED with err.offset in src, content checksums are
   verified.  A frame declaring a window over max_window (0 = 128 MiB, UINT64_MAX = no
   cap) is JITANON_ERR_LIMIT.  The perf reader uses the same decoder for `perf record -z`
   records, streaming.  Compiled out by JITANON_NO_ZSTD (JITANON_ERR_FEATURE_DISABLED). */
JITANON_API jitanon_result jitanon_zstd_decompress(const void *src, size_t size, jitanon_membuf *out,
                                                   uint64_t max_window, jitanon_error *err);

/* -- jitdump reader ---------------------------------------------------------------- */

/* Record ids (jitdump specification, tools/perf/Documentation/jitdump-specification.txt). */
typedef enum jitanon_jitdump_record_id {
    JITANON_JITDUMP_CODE_LOAD = 0,
    JITANON_JITDUMP_CODE_MOVE = 1,
    JITANON_JITDUMP_CODE_DEBUG_INFO = 2,
    JITANON_JITDUMP_CODE_CLOSE = 3,
    JITANON_JITDUMP_CODE_UNWINDING_INFO = 4,
    JITANON_JITDUMP_CODE_MAX = 5 /* first id we do not know: readers return such records
                                    with the prefix fields and raw only */
} jitanon_jitdump_record_id;

#define JITANON_JITDUMP_MAGIC 0x4A695444u /* "JiTD" as a u32 in the writer's order */
#define JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP 1ull

/* Things a dump did that we accept but a writer should not do. */
enum {
    JITANON_JITDUMP_WARN_VERSION2 = 1u << 0,      /* header version 2 (old Mono) */
    JITANON_JITDUMP_WARN_HEADER_EXTRA = 1u << 1,  /* header larger than 40 bytes; extra skipped */
    JITANON_JITDUMP_WARN_UNKNOWN_RECORD = 1u << 2 /* records with an unknown id were skipped */
};

typedef struct jitanon_jitdump_header {
    uint32_t magic, version, total_size, elf_mach, pad1, pid;
    uint64_t timestamp, flags;
    int big_endian;     /* the dump was written big-endian */
    int arch_timestamp; /* flags has JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP: record times are raw TSC */
} jitanon_jitdump_header;

/* One debug-info entry.  `file` is resolved: the 0xFF 0x00 "same as the previous
   entry" marker yields the previous entry's name. */
typedef struct jitanon_jitdump_debug_entry {
    uint64_t addr;
    int32_t lineno, discrim;
    jitanon_str file;
} jitanon_jitdump_debug_entry;

/* One record.  Only the member selected by `id` is meaningful.  Views point into the
   input and live as long as it does (for a stream: until the next _next call).  The
   same struct is what jitanon_jitdump_write takes. */
typedef struct jitanon_jitdump_record {
    uint32_t id, total_size;
    uint64_t timestamp;
    uint64_t offset; /* byte offset of the record in the dump */
    uint64_t index;  /* 0-based record number */
    int big_endian;  /* the dump's byte order, which raw and the views below are in */
    jitanon_bytes raw; /* the whole record, prefix included */
    struct {
        uint32_t pid, tid;
        uint64_t vma, code_addr, code_size, code_index;
        jitanon_str name;   /* without the NUL */
        jitanon_bytes code; /* code_size bytes */
    } load;
    struct {
        uint32_t pid, tid;
        uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
    } move;
    struct {
        uint64_t code_addr, nr_entry;
        jitanon_bytes entries; /* validated: walk with jitanon_jitdump_debug_iter_next */
    } debug;
    struct {
        uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
        /* As perf and V8 write it: .eh_frame first, then .eh_frame_hdr (the
           specification says the opposite; no writer does that). */
        jitanon_bytes eh_frame, eh_frame_hdr;
    } unwind;
} jitanon_jitdump_record;

/* Walks the entries of a CODE_DEBUG_INFO record: start with
   jitanon_jitdump_debug_iter_begin (any other record gives no entries), then call
   jitanon_jitdump_debug_iter_next until it returns 0.  Entries were validated when the
   record was read, so this cannot fail. */
typedef struct jitanon_jitdump_debug_iter {
    const uint8_t *p;
    size_t left;
    uint64_t remaining;
    int big_endian, started;
    jitanon_str prev_file;
} jitanon_jitdump_debug_iter;

JITANON_API void jitanon_jitdump_debug_iter_begin(jitanon_jitdump_debug_iter *it, const jitanon_jitdump_record *rec);
JITANON_API int jitanon_jitdump_debug_iter_next(jitanon_jitdump_debug_iter *it, jitanon_jitdump_debug_entry *out);

/* Which CODE_LOAD a DEBUG_INFO describes.  JITs write it before its LOAD, mostly just
   before; LLVM's ORC JITLink writes all DEBUG_INFO of a batch, then the batch's LOADs.
   Pair them by code address: a LOAD takes the newest unpaired DEBUG_INFO before it whose
   code_addr is its own (JITANON_JITDUMP_DEBUG_SAME_ADDR); failing that, the newest one read
   since the previous LOAD whose first entry lies in its code (JITANON_JITDUMP_DEBUG_IN_CODE:
   a JIT that writes some other code_addr, paired as perf pairs it).  This says which of
   the two holds for (debug, load); jitanon-inject and tools/jitdump-elf.c pair so. */
#define JITANON_JITDUMP_DEBUG_SAME_ADDR 2
#define JITANON_JITDUMP_DEBUG_IN_CODE 1
JITANON_API int jitanon_jitdump_debug_fits(const jitanon_jitdump_record *debug, const jitanon_jitdump_record *load);

/* A loaded dump's functions: each CODE_LOAD with the DEBUG_INFO it takes (paired as
   above; at most JITANON_JITDUMP_DEBUG_WAITING wait, and the oldest one no LOAD took goes
   when one more comes) and the UNWINDING_INFO read since the LOAD before it, what
   perf inject and jitanon-inject make one ELF function of (jitanon_elf_func_of).
       jitanon_jitdump_func_iter it;
       jitanon_jitdump_func fn;
       jitanon_jitdump_func_iter_begin(&it, dump, NULL);
       while ((res = jitanon_jitdump_func_iter_next(&it, &fn, &err)) == JITANON_OK) use(fn.load, fn.debug);
       jitanon_jitdump_func_iter_release(&it);   // res: JITANON_END, or JITANON_ERR_NOMEM
   The records are the dump's (valid while it is); the iterator holds the waiting list. */
#define JITANON_JITDUMP_DEBUG_WAITING 4096u
typedef struct jitanon_jitdump_func {
    const jitanon_jitdump_record *load;
    const jitanon_jitdump_record *debug;  /* NULL: none */
    const jitanon_jitdump_record *unwind; /* NULL: none */
} jitanon_jitdump_func;

typedef struct jitanon_jitdump_func_iter {
    uint64_t debug_unmatched; /* DEBUG_INFO no LOAD took (all of them once _next gave END) */
    /* internal */
    const struct jitanon_jitdump *dump_;
    size_t next_, nwait_, wait_cap_;
    const jitanon_jitdump_record *unwind_;
    const jitanon_jitdump_record **wait_;
    unsigned char *recent_; /* read since the last LOAD */
    size_t recent_cap_;
    jitanon_allocator allocator_;
} jitanon_jitdump_func_iter;

/* allocator may be NULL (the default). */
JITANON_API void jitanon_jitdump_func_iter_begin(jitanon_jitdump_func_iter *it, const struct jitanon_jitdump *d,
                                                 const jitanon_allocator *allocator);
/* JITANON_OK with the next function, JITANON_END after the last, JITANON_ERR_NOMEM. */
JITANON_API jitanon_result jitanon_jitdump_func_iter_next(jitanon_jitdump_func_iter *it, jitanon_jitdump_func *out,
                                                          jitanon_error *err);
/* NULL-safe. */
JITANON_API void jitanon_jitdump_func_iter_release(jitanon_jitdump_func_iter *it);

typedef struct jitanon_jitdump_opts {
    uint32_t begin_zero_;
    uint64_t max_record_size; /* 0 = JITANON_MAX_RECORD_SIZE */
    jitanon_allocator allocator;
    size_t memory_limit; /* bytes the loader may hold at once (the copy of the dump, the
                            dump, its record table); 0 = unlimited */
    /* The loader keeps the records before a damaged one (a crash, a disk that lost the
       last writes: zeros or garbage after the last whole record) or before a record cut
       short at the end, and says where in tail_error.  strict refuses such a dump: the
       load fails with that error. */
    int strict;
    /* internal (the injector's, not API): the loader validates and counts but keeps no
       record table (records == NULL); the injector passes it to io.load_dump */
    int no_records_;
    uint32_t end_zero_;
} jitanon_jitdump_opts;

/* Counters kept while reading. */
typedef struct jitanon_jitdump_stats {
    uint64_t by_id[JITANON_JITDUMP_CODE_MAX]; /* records per known id */
    uint64_t unknown;                     /* records with an unknown id (skipped) */
    uint64_t code_bytes;                  /* sum of CODE_LOAD code sizes */
    uint64_t first_time, last_time;       /* record timestamp range */
    uint32_t warnings;                    /* JITANON_JITDUMP_WARN_* */
} jitanon_jitdump_stats;

/* Pull iterator over a dump held in memory.  Caller-owned, allocates nothing.
   _next returns JITANON_OK with a record, JITANON_END after the last one, or an error.
   A dump cut inside a record returns JITANON_ERR_TRUNCATED (err.offset = record start,
   err.info says how many bytes are missing) after every complete record before it. */
typedef struct jitanon_jitdump_iter {
    jitanon_jitdump_header header;
    jitanon_jitdump_stats stats;
    const uint8_t *data;
    size_t size, pos;
    uint64_t max_record_size, next_index;
    uint64_t missing; /* bytes missing from a truncated trailing record */
} jitanon_jitdump_iter;

JITANON_API jitanon_result jitanon_jitdump_iter_begin(jitanon_jitdump_iter *it, const void *data,
                                                     size_t size, const jitanon_jitdump_opts *opts,
                                                     jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_iter_next(jitanon_jitdump_iter *it,
                                                     jitanon_jitdump_record *rec, jitanon_error *err);

/* Streaming reader over a read callback, for a dump that may still be being written.
   An incomplete trailing record gives JITANON_AGAIN: call _next again later and it resumes.
   Memory grows only to the largest record.  Free with jitanon_jitdump_stream_release. */
typedef struct jitanon_jitdump_stream {
    jitanon_jitdump_header header;
    jitanon_jitdump_stats stats;
    int have_header;
    jitanon_allocator allocator;
    uint64_t max_record_size, next_index;
    /* Progress after every call: `consumed` is the input offset of the next record;
       `pending` bytes are read but not consumed yet (an incomplete header or record). */
    uint64_t consumed;
    size_t pending;
    jitanon__input in_; /* internal */
} jitanon_jitdump_stream;

JITANON_API jitanon_result jitanon_jitdump_stream_init(jitanon_jitdump_stream *s, jitanon_read_fn read_fn,
                                                       void *user, const jitanon_jitdump_opts *opts,
                                                       jitanon_error *err);
/* Returns JITANON_OK (record valid until the next call), JITANON_AGAIN (need more data;
   also returned before the header is complete), or an error. */
JITANON_API jitanon_result jitanon_jitdump_stream_next(jitanon_jitdump_stream *s, jitanon_jitdump_record *rec,
                                                       jitanon_error *err);
JITANON_API void jitanon_jitdump_stream_release(jitanon_jitdump_stream *s);

/* A whole dump, loaded.  `records` are views into `data`. */
typedef struct jitanon_jitdump {
    jitanon_jitdump_header header;
    jitanon_jitdump_stats stats;
    uint8_t *data;
    size_t size;
    jitanon_jitdump_record *records;
    size_t record_count;
    /* A truncated tail is not an error for a loaded dump (the JIT may still be running
       or may have crashed), nor is a damaged record (unless opts.strict): the records
       before it are kept and this is set (record_index: the first record not kept). */
    jitanon_error tail_error;
    size_t valid_size; /* bytes of the header and the records kept (== size without tail_error) */
    jitanon_allocator allocator;
    size_t alloc_size_, records_cap_;
} jitanon_jitdump;

/* Copies `data` and parses every record into a new dump, *out (NULL on failure; the
   result says why, err too when given).  Free with jitanon_jitdump_destroy. */
JITANON_API jitanon_result jitanon_jitdump_load_memory(const void *data, size_t size, const jitanon_jitdump_opts *opts,
                                                       jitanon_jitdump **out, jitanon_error *err);
#ifndef JITANON_NO_STDIO
/* The same for a file (or a FIFO), read whole. */
JITANON_API jitanon_result jitanon_jitdump_load_file(const char *path, const jitanon_jitdump_opts *opts,
                                                     jitanon_jitdump **out, jitanon_error *err);
#endif
/* NULL-safe. */
JITANON_API void jitanon_jitdump_destroy(jitanon_jitdump *dump);

/* Short name of a record id ("LOAD", "MOVE", ...; "UNKNOWN" otherwise). */
JITANON_API const char *jitanon_jitdump_record_name(uint32_t id);

/* -- jitdump writer ---------------------------------------------------------------- */

/* For JIT authors (and tests): writes a jitdump through a sink, in the byte order of the
   header given to _init.  A record that fits the writer's 512-byte stack buffer goes to
   the sink in one call; a larger one (a LOAD with its code, big debug or unwinding info)
   in a few calls, in order.  That is no loss: no single write makes a record appear at
   once to a reader of a growing file (write(2) may be partial), and the readers expect a
   record cut short at the end (the stream returns JITANON_AGAIN, a loaded dump keeps it
   as tail_error).  A failed call may have written part of its record: stop writing then. */
typedef struct jitanon_jitdump_writer {
    jitanon_sink sink;
    int big_endian;
    uint64_t bytes_written; /* bytes the sink accepted */
} jitanon_jitdump_writer;

/* Starts a dump: writes the 40-byte header from h's elf_mach, pad1, pid, timestamp, flags
   (or'ed with JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP when h->arch_timestamp is set) in
   h->big_endian order; magic, version (1) and total_size (40) are the writer's own.  A
   header read from a dump starts a copy of it.  Without ARCH_TIMESTAMP, timestamps must
   be CLOCK_MONOTONIC nanoseconds (jitanon_jitdump_now). */
JITANON_API jitanon_result jitanon_jitdump_writer_init(jitanon_jitdump_writer *w, jitanon_sink sink,
                                                       const jitanon_jitdump_header *h, jitanon_error *err);
/* Writes `rec` as a LOAD, MOVE, DEBUG_INFO, UNWINDING_INFO or CLOSE record: its id,
   timestamp and the member `id` selects (offset, index and raw are ignored; total_size
   only keeps the zero padding that rounds a record up to 8 bytes, as V8 pads
   UNWINDING_INFO), so a record a reader returned is written back unchanged; a zeroed
   record gets its own size.  The sizes in the member must match its views
   (load.code_size = load.code.size; unwind.unwinding_size = eh_frame.size +
   eh_frame_hdr.size, unwind.eh_frame_hdr_size = eh_frame_hdr.size), load.name holds no
   NUL, and a DEBUG_INFO's entries are the encoded bytes (as read: nr_entry of them, in
   rec->big_endian order, which must be the writer's); else JITANON_ERR_INVALID_ARGUMENT.
   vma is written as given: JITs set load.vma = load.code_addr and move.vma =
   move.new_code_addr. */
JITANON_API jitanon_result jitanon_jitdump_write(jitanon_jitdump_writer *w, const jitanon_jitdump_record *rec,
                                                 jitanon_error *err);
/* Writes a DEBUG_INFO record from an array.  Entries' `file` names must not contain NUL.
   An entry whose file equals the previous one is written with the compact 0xFF 0x00
   marker. */
JITANON_API jitanon_result jitanon_jitdump_write_debug_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                           uint64_t code_addr,
                                                           const jitanon_jitdump_debug_entry *entries,
                                                           size_t count, jitanon_error *err);

/* e_machine of the machine this library was compiled for, what a JIT writes into its
   dump's header: EM_X86_64 (62), EM_AARCH64 (183), EM_386 (3), EM_ARM (40), EM_PPC (20),
   EM_PPC64 (21), EM_S390 (22), EM_RISCV (243), EM_LOONGARCH (258); 0 when unknown. */
JITANON_API uint32_t jitanon_jitdump_host_machine(void);

/* For a JIT: creates DIR/jit-<pid>.dump (DIR NULL means the current directory), writes
   the header (elf_mach 0: jitanon_jitdump_host_machine()), and maps the file's first page
   (the system's page: 4 KiB, 16 KiB or 64 KiB) PROT_READ|PROT_EXEC so that `perf record`
   notes the marker mmap.  Write records with jitanon_jitdump_write and
   jitanon_jitdump_write_debug_info on `f->writer`, timestamps from jitanon_jitdump_now().
   The writer's sink carries the fd itself, not a pointer into `f`, so the struct may be
   copied or moved (close only one copy).  Needs POSIX (JITANON_FEATURE_POSIX); otherwise
   returns JITANON_ERR_FEATURE_DISABLED. */
typedef struct jitanon_jitdump_file {
    jitanon_jitdump_writer writer;
    int fd;
    void *marker;
    size_t marker_size;
} jitanon_jitdump_file;

JITANON_API jitanon_result jitanon_jitdump_file_open(jitanon_jitdump_file *f, const char *dir, uint32_t elf_mach,
                                                     jitanon_error *err);
/* Writes CODE_CLOSE, unmaps the marker and closes the file.  Safe on a failed open. */
JITANON_API jitanon_result jitanon_jitdump_file_close(jitanon_jitdump_file *f, jitanon_error *err);
/* CLOCK_MONOTONIC in nanoseconds, the clock `perf record -k mono` uses; 0 without POSIX. */
JITANON_API uint64_t jitanon_jitdump_now(void);

/* 1 when the basename of `path` is a jitdump marker's name in one of the forms runtimes
   write: jit-<pid>.dump (perf's only form: V8, CPython, Erlang, .NET, LLVM, JVM agents
   ...), jit-<tid>-<pid>.dump (JavaScriptCore with a directory, e.g. Bun) or
   jit-<tid>-<pid>-XXXXXX (JavaScriptCore's mkstemp name: six letters or digits, no
   suffix); *pid (may be NULL) gets the pid's value.  The injector also wants the mapping
   executable and the dump's header to name the process. */
JITANON_API int jitanon_jitdump_is_marker(const char *path, size_t len, uint32_t *pid);

/* -- perf maps ------------------------------------------------------------------------
   /tmp/perf-<pid>.map: what runtimes without a jitdump write (CPython 3.12 -X perf, node
   --perf-basic-prof, Java's Compiler.perfmap, Mono, wasmtime, .NET, LuaJIT), one function
   a line: "START SIZE NAME\n", START and SIZE in hex (a 0x or 0X prefix is accepted),
   NAME the rest of the line (spaces included; a CR before the newline is dropped).  A
   map is untrusted input: a line that is not of that form is skipped and counted with
   its reason, a last line without its newline (a write cut by a crash) too; it costs
   that line only.  A name holding a newline (Node 24's RegExp names, node#62131) keeps
   the part before it, and each rest is a line of its own that is skipped as not of
   that form (as perf reads it).  Lines that share addresses (a
   runtime listing one trampoline under two names, code replaced at the same place)
   resolve to what perf 6.1 answers with the map itself: it keeps every line in a tree
   by START and names an address by the first line its lookup meets, so of two lines
   at one START the first listed, of three the middle one, and where the lookup passes
   a line that holds the address, none (measured; [perfmap] in the implementation says
   how).  A map has no times: an entry names its addresses for the whole life of the
   process, which is how perf reads it too. */
typedef struct jitanon_perfmap_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    size_t memory_limit; /* bytes the parser may hold at once (its copy of the names,
                            the entries, the overlap map); 0 = unlimited */
    uint32_t end_zero_;
} jitanon_perfmap_opts;

typedef struct jitanon_perfmap_entry {
    uint64_t start, size; /* size >= 1: a 0 in the map names its first byte, as in perf */
    jitanon_str name;     /* into the map's own copy */
} jitanon_perfmap_entry;

typedef struct jitanon_perfmap_stats {
    uint64_t lines;       /* lines seen, the cut last one included */
    uint64_t bad_lines;   /* skipped: not START SIZE NAME, or a range past 2^64 */
    uint64_t first_bad;   /* byte offset of the first skipped line; UINT64_MAX: none */
    uint64_t cut;         /* 1: the last line had no newline and was skipped */
    uint64_t overlapping; /* lines that share addresses with another line and are not
                             named over all of theirs (another answers, or none) */
    size_t peak_bytes;    /* most bytes held at once while loading */
    struct { /* why lines were skipped (they add up to bad_lines) */
        uint64_t form;    /* not START SIZE NAME: no hex START or SIZE (or one of more than
                             16 digits), no blank after it; mostly the rest of a name that
                             held a newline */
        uint64_t no_name; /* START SIZE and nothing after */
        uint64_t nul;     /* a NUL byte in the name (an ELF string cannot hold it) */
        uint64_t range;   /* START + SIZE - 1 past 2^64 */
    } skipped;
} jitanon_perfmap_stats;

/* A loaded map: entries in address order, disjoint. */
typedef struct jitanon_perfmap {
    jitanon_perfmap_entry *entries;
    size_t count;
    jitanon_perfmap_stats stats;
    jitanon_allocator allocator_; /* private: entries and names are one block of block_size_ */
    size_t block_size_;
} jitanon_perfmap;

/* Parses `size` bytes of a map (kept nowhere: the map has its own copy; the injector
   reads files through jitanon_inject_io.load_perfmap).  Fails only
   with JITANON_ERR_NOMEM, _LIMIT (memory_limit), _BAD_OPTIONS or _INVALID_ARGUMENT;
   damage is skipped and counted. */
JITANON_API jitanon_result jitanon_perfmap_load_memory(const void *data, size_t size, const jitanon_perfmap_opts *opts,
                                                       jitanon_perfmap **out, jitanon_error *err);
/* The entry holding addr, or NULL. */
JITANON_API const jitanon_perfmap_entry *jitanon_perfmap_lookup(const jitanon_perfmap *m, uint64_t addr);
/* NULL-safe. */
JITANON_API void jitanon_perfmap_destroy(jitanon_perfmap *m);

/* -- perf.data reader ------------------------------------------------------------------

   Reads perf.data in file mode ("PERFILE2", 104-byte header, attrs + id arrays, data
   section, feature table at data.offset + data.size) and in pipe mode (16-byte header,
   then HEADER_ATTR / HEADER_FEATURE / ... records), written in either byte order.

       jitanon_perf_reader r;
       jitanon_perf_record rec;
       jitanon_error err;
       jitanon_result res = jitanon_perf_reader_open(&r, "perf.data", NULL, &err);
       while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK)
           if (rec.type == JITANON_PERF_RECORD_MMAP2) use(rec.mmap.start, rec.mmap.filename);
       jitanon_perf_reader_release(&r);
       if (res != JITANON_END) report(&err);   // err.offset = byte offset of the problem

   Memory does not grow with the file: the reader keeps one buffer as large as the largest
   record (records are at most 65535 bytes, except AUXTRACE and HEADER_TRACING_DATA whose
   trailing payload is capped by opts.max_payload), plus the attrs, their id arrays and,
   once loaded, the feature sections (capped by opts.max_header_bytes), and for `perf
   record -z` input the decompressed bytes not yet delivered (max_payload + 128 KiB) and
   the zstd window (twice the window the stream declares, capped by opts.max_zstd_window). */

/* Record types (perf_event.h and perf's user record types). */
enum {
    JITANON_PERF_RECORD_MMAP = 1,
    JITANON_PERF_RECORD_LOST = 2,
    JITANON_PERF_RECORD_COMM = 3,
    JITANON_PERF_RECORD_EXIT = 4,
    JITANON_PERF_RECORD_THROTTLE = 5,
    JITANON_PERF_RECORD_UNTHROTTLE = 6,
    JITANON_PERF_RECORD_FORK = 7,
    JITANON_PERF_RECORD_READ = 8,
    JITANON_PERF_RECORD_SAMPLE = 9,
    JITANON_PERF_RECORD_MMAP2 = 10,
    JITANON_PERF_RECORD_HEADER_ATTR = 64,
    JITANON_PERF_RECORD_HEADER_TRACING_DATA = 66,
    JITANON_PERF_RECORD_HEADER_BUILD_ID = 67,
    JITANON_PERF_RECORD_FINISHED_ROUND = 68,
    JITANON_PERF_RECORD_ID_INDEX = 69,
    JITANON_PERF_RECORD_AUXTRACE = 71,
    JITANON_PERF_RECORD_EVENT_UPDATE = 78,
    JITANON_PERF_RECORD_TIME_CONV = 79,
    JITANON_PERF_RECORD_HEADER_FEATURE = 80,
    JITANON_PERF_RECORD_COMPRESSED = 81,
    JITANON_PERF_RECORD_FINISHED_INIT = 82,
    JITANON_PERF_RECORD_COMPRESSED2 = 83
};

/* PERF_RECORD_EVENT_UPDATE kinds: per-event metadata that perf cannot rebuild from the
   attr (a pipe has no feature sections until they arrive as records). */
#define JITANON_PERF_EVENT_UPDATE_UNIT 0u
#define JITANON_PERF_EVENT_UPDATE_SCALE 1u
#define JITANON_PERF_EVENT_UPDATE_NAME 2u
#define JITANON_PERF_EVENT_UPDATE_CPUS 3u

/* perf_event_attr.sample_type bits (the ones this library interprets). */
#define JITANON_PERF_SAMPLE_IP (1ull << 0)
#define JITANON_PERF_SAMPLE_TID (1ull << 1)
#define JITANON_PERF_SAMPLE_TIME (1ull << 2)
#define JITANON_PERF_SAMPLE_ADDR (1ull << 3)
#define JITANON_PERF_SAMPLE_READ (1ull << 4)
#define JITANON_PERF_SAMPLE_CALLCHAIN (1ull << 5)
#define JITANON_PERF_SAMPLE_ID (1ull << 6)
#define JITANON_PERF_SAMPLE_CPU (1ull << 7)
#define JITANON_PERF_SAMPLE_PERIOD (1ull << 8)
#define JITANON_PERF_SAMPLE_STREAM_ID (1ull << 9)
#define JITANON_PERF_SAMPLE_RAW (1ull << 10)
#define JITANON_PERF_SAMPLE_BRANCH_STACK (1ull << 11)
#define JITANON_PERF_SAMPLE_REGS_USER (1ull << 12)
#define JITANON_PERF_SAMPLE_STACK_USER (1ull << 13)
#define JITANON_PERF_SAMPLE_IDENTIFIER (1ull << 16)

/* Record header misc bits. */
#define JITANON_PERF_MISC_CPUMODE_MASK 7u
#define JITANON_PERF_MISC_USER 2u
#define JITANON_PERF_MISC_MMAP_BUILD_ID (1u << 14)

/* Feature bits (perf_file_header.adds_features) that the writer treats specially. */
#define JITANON_PERF_FEAT_TRACING_DATA 1u
#define JITANON_PERF_FEAT_BUILD_ID 2u
#define JITANON_PERF_FEAT_COMPRESSED 27u
#define JITANON_PERF_FEAT_BITS 256u

typedef enum jitanon_perf_mode {
    JITANON_PERF_SAME_MODE = 0, /* only as out_mode of the path-to-path calls: the input's mode */
    JITANON_PERF_FILE = 1,
    JITANON_PERF_PIPE = 2
} jitanon_perf_mode;

/* Optional seek source: position the read callback at absolute byte `offset`; return 0 on
   success.  Without one the input is read strictly forward (a pipe). */
typedef int (*jitanon_seek_fn)(void *user, uint64_t offset);

/* Optional decompressor for PERF_RECORD_COMPRESSED / COMPRESSED2 (perf record -z, zstd),
   for another codec than the built-in zstd decoder (set, it is used instead): append the raw record bytes that `src` (one record's compressed payload, in input order)
   decodes to, with jitanon_membuf_write(out, ...).  Return 0 on success.  perf keeps one
   zstd stream for the whole file, so keep your decoder state in `user`.  A record may
   straddle two compressed payloads; the reader handles that. */
typedef int (*jitanon_decompress_fn)(void *user, const void *src, size_t size, jitanon_membuf *out);

typedef struct jitanon_perf_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    uint64_t max_payload;      /* AUXTRACE / HEADER_TRACING_DATA payload cap; 0 = 64 MiB */
    uint64_t max_header_bytes; /* attrs + ids + feature sections kept; 0 = 64 MiB */
    size_t memory_limit;       /* reader: bytes it may hold at once, all buffers counted (the
                                  one limit every reader and the trimming engine take); 0 = none */
    jitanon_decompress_fn decompress; /* NULL: the built-in zstd decoder (JITANON_NO_ZSTD:
                                         compressed input is JITANON_ERR_COMPRESSED) */
    void *decompress_user;
    /* Damaged input (see jitanon_perf_warning) is an error instead of being recovered. */
    int strict;
    /* A file `perf record -o FILE` is still writing (a tool tailing its recording): the end
       of the input is not final.  Where the records would end, _next returns JITANON_AGAIN
       (an incomplete last record is kept, not consumed); call it again once more may have
       been written.  perf writes the data size into the header last, when it finishes: till
       then (size 0) the data runs to the end of the input, without the warning; at each
       JITANON_AGAIN a seekable input's header is read again, and once it has the size the
       records end there (JITANON_END) and the features can be loaded; till then bytes
       that are no record are waited on too (perf writes the features before the header).
       A recording whose perf was killed keeps size 0: its reader gives JITANON_AGAIN for
       ever, so stop when the writer is gone.  _init gives JITANON_AGAIN where the file is
       too short yet (JITANON_ERR_TRUNCATED without follow) or its magic still zeros (perf
       writes the attrs first, the header last): release, and init again later. */
    int follow;
    uint64_t max_zstd_window; /* largest zstd window accepted (JITANON_ERR_LIMIT beyond);
                                 0 = 128 MiB: perf record -z uses 512 KiB (level 1) to
                                 128 MiB (level 22); memory follows the content */
    uint32_t end_zero_;
} jitanon_perf_opts;

/* What the reader recovered from (jitanon_perf_reader.warnings; opts.strict refuses
   instead).  A recording whose `perf record` was killed (SIGKILL, OOM, power loss) has
   data size 0 in its header and no feature sections; a copy cut short ends inside a
   record. */
typedef enum jitanon_perf_warning {
    JITANON_PERF_WARN_DATA_SIZE_ZERO = 1, /* header data size 0: the data runs to the end of the input
                                             (data_size says so: UINT64_MAX - data_offset) */
    JITANON_PERF_WARN_CUT = 2,            /* the input ends inside a record, or (data size 0) the data
                                             ends in bytes that are no record: the records before are kept */
    JITANON_PERF_WARN_FEATURES = 4        /* feature sections missing or unreadable: treated as absent */
} jitanon_perf_warning;

/* One event attribute with the fields an injector needs.  `raw` holds the attr.size bytes
   exactly as in the input (input byte order); `ids` are decoded to host values.  Both are
   owned by the reader (or writer) and live until its _release. */
typedef struct jitanon_perf_attr {
    uint32_t type, size; /* size: attr.size (0 in the input means 64) */
    uint64_t config, sample_type, read_format;
    uint64_t flags;      /* the bitfield word, bit n = n-th field (disabled = bit 0) */
    int sample_id_all, use_clockid;
    int32_t clockid;     /* 0 when attr.size < 96 */
    uint32_t id_hdr_size; /* bytes of sample_id trailer on non-SAMPLE kernel records */
    jitanon_bytes raw;
    const uint64_t *ids;
    size_t id_count;
} jitanon_perf_attr;

/* The sample_id trailer of a kernel record (or the same fields of a SAMPLE).  `present`
   holds the JITANON_PERF_SAMPLE_{TID,TIME,ID,STREAM_ID,CPU,IDENTIFIER} bits that were
   there; fields that were absent are 0. */
typedef struct jitanon_perf_sample_id {
    uint64_t present;
    uint32_t pid, tid, cpu;
    uint64_t time, id, stream_id;
} jitanon_perf_sample_id;

/* MMAP (type 1) or MMAP2 (type 10).  MMAP has no maj..flags (all 0). */
typedef struct jitanon_perf_mmap {
    uint32_t pid, tid;
    uint64_t start, len, pgoff;
    uint32_t maj, min;
    uint64_t ino, ino_generation;
    int has_build_id;      /* misc & MMAP_BUILD_ID: build_id replaces maj..ino_generation */
    uint8_t build_id_size; /* at most 20 */
    const uint8_t *build_id;
    uint32_t prot, flags;
    jitanon_str filename;  /* without the NUL and padding */
    int first_layout;      /* MMAP2 of the first layout (kernel 3.10 of RHEL/CentOS 7): no prot
                              and flags (0 here), the name where they are now; perf 6.1 shows
                              such a name without its first 8 bytes */
} jitanon_perf_mmap;

/* PERF_RECORD_TIME_CONV: how TSC cycles become perf time (jitanon_perf_tsc_to_time). */
typedef struct jitanon_perf_time_conv {
    uint64_t time_shift, time_mult, time_zero;
    int extended; /* header.size holds the fields below */
    uint64_t time_cycles, time_mask;
    uint8_t cap_user_time_zero, cap_user_time_short;
} jitanon_perf_time_conv;

/* One record.  Views point into the reader's buffer and stay valid until the next _next
   call; only the member selected by `type` is meaningful.  Multi-byte values inside the
   views (raw, payload, sample.callchain, id_index.entries, feature.data) are in the
   input's byte order, `big_endian`: read them with jitanon_perf_u64_at(view, i,
   rec.big_endian).  jitanon_perf_encode_mmap2 and jitanon_perf_rewrite_mmap take a record
   as their description of the record to write. */
typedef struct jitanon_perf_record {
    uint32_t type;
    uint16_t misc, size;  /* the header; size excludes a trailing payload */
    int big_endian;       /* the byte order of the input and of every view below */
    jitanon_bytes raw;    /* the whole record, trailing payload included: copy this */
    uint64_t offset;      /* in the input; for decompressed records: of the COMPRESSED record */
    uint64_t index;       /* 0-based record number, COMPRESSED containers included */
    int from_compressed;  /* delivered out of a decompressed COMPRESSED record */
    size_t attr_index;    /* the attr the record belongs to (id 0/unknown: 0) */
    jitanon_perf_sample_id sid;
    jitanon_bytes payload; /* AUXTRACE / HEADER_TRACING_DATA bytes after header.size */
    jitanon_perf_mmap mmap;
    struct {
        uint64_t ip, addr, period, callchain_nr;
        jitanon_bytes callchain; /* callchain_nr u64s in input order: jitanon_perf_u64_at */
    } sample; /* pid/tid/time/id/cpu/stream_id are in `sid` */
    struct {
        uint32_t pid, tid;
        jitanon_str comm;
    } comm;
    struct {
        uint32_t pid, ppid, tid, ptid;
        uint64_t time;
    } task; /* FORK and EXIT */
    jitanon_perf_time_conv time_conv;
    struct {
        uint64_t nr;
        int has_vm; /* the machine_pid/vcpu array follows the entries */
        jitanon_bytes entries; /* nr x {id, idx, cpu, tid} u64s */
    } id_index;
    struct {
        uint64_t feat_id;
        jitanon_bytes data;
    } feature; /* HEADER_FEATURE */
    struct {
        uint64_t kind, id; /* JITANON_PERF_EVENT_UPDATE_*; the id names the attr */
        jitanon_bytes data; /* what follows id */
        jitanon_str text;   /* NAME and UNIT: data up to its first NUL */
    } event_update; /* EVENT_UPDATE (attr_index: the attr of id); all zero when the body
                       is shorter than kind and id */
    struct {
        uint64_t id, lost; /* the event's id, the records it lost */
    } lost; /* LOST; all zero when the body is shorter */
} jitanon_perf_record;

/* Counters kept while reading. */
typedef struct jitanon_perf_stats {
    uint64_t records, by_type[128]; /* types >= 128 are counted in records only */
    uint64_t compressed_records;    /* COMPRESSED/COMPRESSED2 records decoded */
    uint64_t first_time, last_time; /* over records that carry a time */
} jitanon_perf_stats;

typedef struct jitanon__perf_idmap {
    uint64_t id;
    size_t attr;
} jitanon__perf_idmap;

/* The fixed sample fields, in the order of jitanon__perf_lay's arrays. */
enum {
    JITANON__LF_PID, JITANON__LF_TID, JITANON__LF_CPU, JITANON__LF_TIME, JITANON__LF_ID, JITANON__LF_STREAM_ID,
    JITANON__LF_IP, JITANON__LF_ADDR, JITANON__LF_PERIOD, JITANON__LF_COUNT /* the last 3: SAMPLE only */
};

/* Where one attr's fixed sample fields sit, in a SAMPLE ([0]) and in the sample_id trailer
   of other kernel records ([1]): worked out once per attr from its sample_type, so
   decoding a record is a few loads at known places.  Each field is a byte offset into
   the fields and a mask, all ones when the field is there; an absent one reads the first
   u64 (offset 0) and masks it to 0, so the loads need no branch - and at least 8 bytes. */
typedef struct jitanon__perf_lay {
    uint64_t mask[2][JITANON__LF_COUNT];
    uint8_t at[2][JITANON__LF_COUNT];
    uint8_t fixed; /* SAMPLE: the u64 slots before READ */
} jitanon__perf_lay;

typedef struct jitanon__perf_feat {
    uint32_t bit;
    uint64_t offset, size; /* in the input */
    size_t mem_off;        /* in feat_mem_, once loaded */
} jitanon__perf_feat;

/* Streaming reader.  Public fields are read-only.  It owns its buffers (and the FILE of
   _open) and its allocator points into it: use it through a pointer, never a copy. */
typedef struct jitanon_perf_reader {
    jitanon_perf_mode mode;
    int big_endian;                  /* the input's byte order */
    uint64_t features[4];            /* feature bitmap (pipe: HEADER_FEATURE ids seen) */
    uint64_t data_offset, data_size; /* file mode: the data section (size 0, as left by a
                                        killed perf record: read to the end of the input,
                                        JITANON_PERF_WARN_DATA_SIZE_ZERO) */
    jitanon_perf_attr *attrs;
    size_t attr_count;
    int features_loaded;             /* jitanon_perf_reader_load_features succeeded */
    jitanon_perf_stats stats;
    uint32_t warnings;     /* jitanon_perf_warning bits: damage recovered from */
    jitanon_error damage;  /* the first damage recovered from (type JITANON_OK when none;
                              a cut in the data replaces unreadable feature sections) */
    uint64_t bytes_ignored; /* input bytes after the last whole record of the data */
    /* private: the reader's own state (no field of it is API) */
    struct jitanon__perf_reader_state {
        jitanon__input in;
        jitanon_seek_fn seek_fn;
        void *file; /* FILE * opened by jitanon_perf_reader_open */
        jitanon_allocator allocator;
        uint64_t max_payload, max_header_bytes;
        jitanon__counted mem, header_mem; /* memory_limit (allocator is mem's hooks), max_header_bytes */
        jitanon_decompress_fn decompress;
        void *decompress_user;
        struct jitanon__zstd *zstd; /* the built-in decoder, once a compressed record came */
        uint64_t max_zstd_window;
        int eof, done;
        jitanon_membuf dbuf; /* decompressed bytes not yet delivered */
        size_t dpos;
        uint64_t doff;       /* offset of the COMPRESSED record they came from */
        size_t attr_cap;
        jitanon__perf_lay *lays; /* one per attr */
        size_t lay_cap;
        jitanon__perf_idmap *idmap;
        size_t idmap_len, idmap_cap;
        jitanon__perf_feat *feats;
        size_t feat_count;
        uint8_t *feat_mem;
        size_t feat_mem_size;
        int strict, unsized, follow;
        /* For the message of an input that ends early (jitanon__pd_short): the end of the
           bytes read so far, the file's layout (header, attrs section, the end of the
           feature table) and the size its header and feature table promise. */
        uint64_t seen, hsize, attrs_off, attrs_size, table_end, promised;
        /* the short path for SAMPLEs (jitanon__pd_fast_setup): where in the buffer the
           bytes it may take end, the least size of one, sid.present, whether a callchain
           follows */
        size_t fast_lim, fast_min;
        uint64_t fast_present;
        int fast_chain;
    } state_;
} jitanon_perf_reader;

/* Starts reading through callbacks: detects the mode and byte order and reads the file
   header, attrs and ids (file mode) or the pipe header.  seek_fn may be NULL; then a file
   whose attrs or ids lie after the data gives JITANON_ERR_UNSUPPORTED.  Always call
   jitanon_perf_reader_release afterwards, even on error. */
JITANON_API jitanon_result jitanon_perf_reader_init(jitanon_perf_reader *r, jitanon_read_fn read_fn,
                                                    jitanon_seek_fn seek_fn, void *user,
                                                    const jitanon_perf_opts *opts, jitanon_error *err);
#ifndef JITANON_NO_STDIO
/* Opens `path` ("-" = stdin, read without seeking) and calls _init. */
JITANON_API jitanon_result jitanon_perf_reader_open(jitanon_perf_reader *r, const char *path,
                                                    const jitanon_perf_opts *opts, jitanon_error *err);
#endif
/* Next record: JITANON_OK (views valid until the next call), JITANON_END after the last,
   or an error (err.offset = byte offset, err.record_index/record_type set when known).
   The records inside compressed records (perf record -z) are delivered instead of them
   (from_compressed = 1), decoded by opts.decompress or the built-in zstd decoder; with
   neither (JITANON_NO_ZSTD) they give JITANON_ERR_COMPRESSED.  An input that ends inside
   a record (or, with data size 0, in bytes that are no record) ends the records:
   JITANON_END with JITANON_PERF_WARN_CUT (opts.strict: the error).  Following a file
   being written (opts.follow): JITANON_AGAIN where there is no whole record yet. */
JITANON_API jitanon_result jitanon_perf_reader_next(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err);
/* File mode: loads every feature section.  Seekable input: any time (it seeks away and
   back, so the views of the last record become invalid).  Forward-only input: only after
   _next returned JITANON_END (else JITANON_ERR_UNSUPPORTED).  Pipe mode: no-op (features
   arrive as HEADER_FEATURE records).  Sections that cannot be read (a file cut short, a
   garbage table) are treated as absent with JITANON_PERF_WARN_FEATURES (opts.strict:
   the error).  NOTE: the bitmap of a foreign-order file is read as
   u64 words; perf's fallback for files from 32-bit hosts (u32 words) is not attempted. */
JITANON_API jitanon_result jitanon_perf_reader_load_features(jitanon_perf_reader *r, jitanon_error *err);
/* A loaded feature section (view valid until _release); returns 0 when absent or not
   loaded. */
JITANON_API int jitanon_perf_reader_feature(const jitanon_perf_reader *r, unsigned bit, jitanon_bytes *out);
/* NULL-safe; closes a file opened by _open. */
JITANON_API void jitanon_perf_reader_release(jitanon_perf_reader *r);

/* "MMAP", "SAMPLE", "HEADER_ATTR", ...; "UNKNOWN" otherwise. */
JITANON_API const char *jitanon_perf_record_name(uint32_t type);
/* The i-th u64 of a view (callchain entries, id_index entries) in the given byte order
   (a record's big_endian); 0 when i is out of range. */
JITANON_API uint64_t jitanon_perf_u64_at(jitanon_bytes b, size_t i, int big_endian);
/* TSC -> perf time, for dumps written with JITDUMP_FLAGS_ARCH_TIMESTAMP, from a
   PERF_RECORD_TIME_CONV (perf-format.md §5.11); 0 when an extended record says the
   kernel has no time_zero (cap_user_time_zero clear). */
JITANON_API uint64_t jitanon_perf_tsc_to_time(const jitanon_perf_time_conv *tc, uint64_t cyc);

/* -- perf.data writer ------------------------------------------------------------------

   Writes records in `big_endian` order, which must be the order of the records and attrs
   you pass in (the copy path uses the input's order, so every record is copied verbatim).
   File mode layout: 104-byte header | id arrays | attrs | data | feature table | feature
   payloads; the header is written last through pwrite_fn, so file mode needs one.
   Pipe mode: 16-byte header, then attrs as HEADER_ATTR and features as HEADER_FEATURE
   (TRACING_DATA as HEADER_TRACING_DATA, BUILD_ID as HEADER_BUILD_ID records; EVENT_DESC
   also as EVENT_UPDATE NAME records), as perf expects from `perf record -o -`. */

/* Positioned write: write all `size` bytes at absolute `offset`; return 0 on success. */
typedef int (*jitanon_pwrite_fn)(void *user, const void *data, size_t size, uint64_t offset);

typedef struct jitanon_perf_feature {
    uint32_t bit;
    jitanon_bytes data; /* owned by the writer */
} jitanon_perf_feature;

/* Holds no pointer into itself; it owns copies of the attrs and features (use it through a
   pointer, never a copy).  The sink's user is yours and must outlive the writer. */
typedef struct jitanon_perf_writer {
    jitanon_perf_mode mode;
    int big_endian;
    uint64_t bytes_written; /* also the current output offset */
    uint64_t records, data_offset, data_size;
    uint32_t features_skipped; /* pipe mode: features too large for one record, or ones perf
                                  cannot read from a pipe (jitanon_perf_writer_add_feature) */
    uint32_t event_names;      /* pipe mode: EVENT_UPDATE NAME records written from EVENT_DESC */
    /* internal */
    jitanon_sink sink_;
    jitanon_pwrite_fn pwrite_fn_;
    jitanon_allocator allocator_;
    uint64_t max_header_bytes_, attrs_offset_, attr_size_;
    jitanon__counted header_mem_; /* max_header_bytes */
    int started_, finished_;
    jitanon_perf_attr *attrs_;
    size_t attr_count_, attr_cap_;
    jitanon_perf_feature *feats_;
    size_t feat_count_, feat_cap_;
    uint64_t *first_ids_; /* pipe mode: each attr's first id (0: none), for the NAME records */
    size_t first_ids_len_, first_ids_cap_;
} jitanon_perf_writer;

/* Starts a writer (mode FILE or PIPE; big_endian: nonzero for big-endian output).  Pipe
   mode writes the 16-byte header now.  File mode needs pwrite_fn (the same sink's
   positioned write: it is called once, with sink.user, for the header at offset 0).
   opts may be NULL; only allocator and max_header_bytes are used. */
JITANON_API jitanon_result jitanon_perf_writer_init(jitanon_perf_writer *w, jitanon_perf_mode mode, int big_endian,
                                                    jitanon_sink sink, jitanon_pwrite_fn pwrite_fn,
                                                    const jitanon_perf_opts *opts, jitanon_error *err);
/* Adds an attr (raw bytes and ids are copied).  File mode: before the first record only.
   Pipe mode: writes a HEADER_ATTR record now. */
JITANON_API jitanon_result jitanon_perf_writer_add_attr(jitanon_perf_writer *w, const jitanon_perf_attr *attr,
                                                        jitanon_error *err);
/* Adds a feature section (copied).  File mode: written by _finish.  Pipe mode: written now,
   except what perf cannot read from a pipe (counted in features_skipped): the AUXTRACE
   index and DIR_FORMAT (file only), and empty sections other than BRANCH_STACK and STAT.
   Each bit once, but for BUILD_ID: added again, its entries extend the table.
   Pipe mode, EVENT_DESC (bit 12): also one EVENT_UPDATE NAME record per event it names
   (counted in event_names), as `perf record -o -` writes them: perf script names events
   from their attrs as the HEADER_ATTRs arrive and then keeps those names over EVENT_DESC's
   (`cycles:P` printed as `cycles:ppG`, say); a NAME record replaces them.  Entry i names
   the i-th attr added (perf pairs them by index in a file too) through its first id, so
   add the attrs first; an entry with no attr yet, or whose attr has no id while there
   are several, gets none.  Written even when the section itself is too large for a
   record. */
JITANON_API jitanon_result jitanon_perf_writer_add_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                           size_t size, jitanon_error *err);
/* Writes one record: `size` bytes including any trailing payload (rec.raw). */
JITANON_API jitanon_result jitanon_perf_writer_write(jitanon_perf_writer *w, const void *record, size_t size,
                                                     jitanon_error *err);
/* File mode: writes the feature table and sections and the header.  Pipe mode: nothing
   to do.  The writer cannot be used afterwards except for _release. */
JITANON_API jitanon_result jitanon_perf_writer_finish(jitanon_perf_writer *w, jitanon_error *err);
/* NULL-safe; frees the copies of attrs and features. */
JITANON_API void jitanon_perf_writer_release(jitanon_perf_writer *w);

/* Copies everything `r` has not read yet to `w`, unchanged: attrs, features and records
   (HEADER_ATTR/HEADER_FEATURE records are turned into file sections when converting pipe
   to file, and synthesized when converting file to pipe, with the EVENT_UPDATE NAME
   records of EVENT_DESC: jitanon_perf_writer_add_feature).  Calls _finish.  With
   compressed records (perf record -z) come out decompressed and the COMPRESSED feature
   is dropped (unless JITANON_NO_ZSTD and no opts.decompress: then they are an error).  A forward-only file-mode input converted to pipe gets its
   HEADER_FEATURE records at the end (they are not known earlier). */
JITANON_API jitanon_result jitanon_perf_copy(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err);

/* Encodes a synthesized MMAP2 record in rec->big_endian order from the fields a reader
   would decode from it: rec->mmap (the build-id variant when rec->mmap.has_build_id),
   rec->misc (cpumode, e.g. JITANON_PERF_MISC_USER; the build-id bit follows the mmap),
   and a complete sample_id trailer for `attr`: pid/tid from rec->mmap, rec->sid.time,
   rec->sid.cpu, and the attr's first id as ID, STREAM_ID and IDENTIFIER, each only when
   attr->sample_type asks for it and attr->sample_id_all is set.  attr may be NULL (no
   trailer).  Every other field of rec is ignored (zero it first).  *out_size gets the
   record size; when it exceeds `cap`, nothing is written and JITANON_ERR_LIMIT is
   returned (call with buf NULL, cap 0 to measure). */
JITANON_API jitanon_result jitanon_perf_encode_mmap2(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, const jitanon_perf_attr *attr,
                                                     jitanon_error *err);
/* Copies the MMAP or MMAP2 record rec->raw (type, trailer and every other byte kept) with
   rec->mmap.start, len and pgoff written over it in rec->big_endian order: set them on a
   record from the reader, e.g. to a trimmed piece.  Only rec->type, raw, offset (for the
   error), big_endian and those three fields are used.  Same size rules as above. */
JITANON_API jitanon_result jitanon_perf_rewrite_mmap(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, jitanon_error *err);

/* Encoders for the records a generator or a test writes (a recording made up in memory,
   fuzz seeds), so none packs bytes by hand.  jitanon_perf_encode writes rec->type in
   rec->big_endian order from the fields a reader would decode from it, rec->misc as given:
     COMM            comm.pid, tid, comm (NUL, then zeros to 8 bytes)
     FORK, EXIT      task.pid, ppid, tid, ptid, time
     LOST            lost.id, lost.lost
     MMAP            mmap.pid, tid, start, len, pgoff, filename
     MMAP2           as jitanon_perf_encode_mmap2
     SAMPLE          attr->sample_type's IDENTIFIER, IP (sample.ip), TID (sid.pid, tid),
                     TIME (sid.time), ADDR (sample.addr), ID, STREAM_ID, CPU (sid.cpu),
                     PERIOD (sample.period), CALLCHAIN (sample.callchain_nr entries of
                     sample.callchain, copied as they are: rec->big_endian order); any
                     other sample_type bit is JITANON_ERR_UNSUPPORTED; attr is needed
     FINISHED_ROUND  the header alone
   Other types are JITANON_ERR_UNSUPPORTED.  Kernel records get the sample_id trailer of
   `attr` when attr->sample_id_all (attr may be NULL: none): the record's own pid/tid
   (sid.pid/tid for LOST), sid.time, sid.cpu, and the attr's first id as ID, STREAM_ID and
   IDENTIFIER (a sample's too).  Size rules as jitanon_perf_encode_mmap2. */
JITANON_API jitanon_result jitanon_perf_encode(void *buf, size_t cap, size_t *out_size, const jitanon_perf_record *rec,
                                               const jitanon_perf_attr *attr, jitanon_error *err);
/* Encodes a perf_event_attr into buf (for jitanon_perf_writer_add_attr) and makes *attr
   describe it as the reader decodes it.  In: attr->type, size (0 = 128; at least 64, at
   most cap), config, sample_type, read_format, flags (bit n = the n-th bitfield, as the
   reader gives them: disabled 0, freq 10, sample_id_all 18, mmap2 23, use_clockid 25; a
   big-endian attr gets them from the top bit down), clockid (when size >= 96), ids (kept),
   and sample_period: the union at byte 16, a period or, with freq, a frequency.  Every
   other byte is 0.  Out: attr->raw views buf (keep buf while the attr is used), and
   sample_id_all, use_clockid and id_hdr_size follow from the fields. */
JITANON_API jitanon_result jitanon_perf_encode_attr(void *buf, size_t cap, jitanon_perf_attr *attr, uint64_t sample_period,
                                                    int big_endian, jitanon_error *err);

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* Copies perf.data `in_path` ("-" = stdin) to `out_path` ("-" = stdout, pipe mode only)
   atomically.  out_mode JITANON_PERF_SAME_MODE keeps the input's mode (stdout: pipe mode
   from any input); another value than the three is JITANON_ERR_INVALID_ARGUMENT.  opts
   may be NULL. */
JITANON_API jitanon_result jitanon_perf_copy_file(const char *in_path, const char *out_path,
                                                  jitanon_perf_mode out_mode, const jitanon_perf_opts *opts,
                                                  jitanon_error *err);
#endif
/* -- Address ranges: an interval map, and the //anon trimming engine ------------------

   jitanon_rangemap is a reusable map from non-overlapping address ranges to a small
   value (a kind and an id).  jitanon_trim builds one per process and uses it to replay
   the address map that perf builds from our *output*: later mappings win their range and
   split older ones.  A trimmable mmap (`//anon`, `[anon:`, `/memfd:`, `/dev/zero`) of a
   process with a jitdump is replaced by its pieces that do not cover live jitted code, so
   it never hides a function the jitdump loaded earlier; everything else resolves as before.

   Ordering: the engine is a replay in *feed order*.  Callers feed each process's events
   in nondecreasing time; among events with equal timestamps the one fed later wins (as in
   perf's ordered queue, which is stable), so the injector must write its output in the
   order it fed the engine.  The timestamps are only checked (stats.out_of_order). */

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
   jitanon_rangemap_release.  Nodes live in one pool (indices, not pointers), so the struct may
   be moved by value.  Every operation is expected O(log n + k), k = pieces touched (a
   treap with deterministic priorities; nothing recurses). */
typedef struct jitanon_rangemap {
    struct jitanon__rm_node *nodes_; /* pool; index 0 is the null node */
    size_t cap_;                     /* pool capacity in nodes */
    uint32_t used_, free_, nfree_;   /* high-water mark, free list head and length */
    uint32_t root_, count_;          /* treap root, number of pieces */
    uint32_t seed_;                  /* deterministic priority generator */
    jitanon_allocator allocator;
    /* The lookup cache (jitanon__rm_find_fast): node indices, each checked before use. */
    uint64_t *flat_;                 /* sorted pieces (see jitanon__rm_flatten) */
    size_t flat_cap_;                /* in pieces */
    uint64_t gen_;                   /* changes so far (never reset: caches compare it) */
    uint32_t flat_n_, flat_wait_;    /* pieces in flat_; lookups it could not answer */
    uint32_t *flat_pos_;             /* by node: 1 + its place in flat_, 0 = none or changed since */
    size_t flat_pos_cap_;            /* in nodes */
    uint32_t flat_pos_n_;            /* nodes flat_pos_ tells of (the pool's size at the build) */
    uint64_t *hits_;                 /* recent hits by 256-byte granule (start, length and node, id, kind) */
    uint32_t nhits_;                 /* slots in hits_ */
    uint32_t big_[4], big_next_;     /* recent hits in pieces of 64 KiB or more */
    uint64_t big_start_[4], big_len_[4]; /* their starts and lengths - 1 */
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
JITANON_API void jitanon_rangemap_release(jitanon_rangemap *m);

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
JITANON_API void jitanon_rangemap_iter_begin_all(jitanon_rangemap_iter *it, const jitanon_rangemap *m);

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
    JITANON_TRIM_ANON = 2, /* a trimmable mmap (//anon, [anon:, /memfd:, /dev/zero); id = map_id */
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
    /* internal (a test hook, not API): an event older than its process's latest one fails
       with JITANON_ERR_INVALID_ARGUMENT instead of being counted */
    int reject_out_of_order_;
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

/* One event fed to the engine: a jit CODE_LOAD or CODE_MOVE (id = the function's id,
   reported back by jitanon_trim_resolve), or an MMAP/MMAP2 (kind ANON or FILE, see
   jitanon_trim_classify; id = map_id; pgoff as recorded).  perf's fields, by name, so a
   call reads like the record it replays. */
typedef struct jitanon_trim_event {
    uint32_t pid;
    jitanon_trim_kind kind; /* mmaps only: ANON or FILE */
    uint64_t time;          /* perf time; nondecreasing per process */
    uint64_t start, len;    /* [start, start + len); a load's or move's code size */
    uint64_t pgoff;         /* mmaps only */
    uint64_t id;            /* func_id for loads and moves, map_id for mmaps */
} jitanon_trim_event;

/* Opaque engine. */
typedef struct jitanon_trim jitanon_trim;

/* Creates an engine (opts may be NULL) in *out.  Errors: JITANON_ERR_BAD_OPTIONS,
   JITANON_ERR_NOMEM (*out is then NULL).  Destroy with jitanon_trim_destroy. */
JITANON_API jitanon_result jitanon_trim_create(const jitanon_trim_opts *opts, jitanon_trim **out,
                                               jitanon_error *err);

/* Frees the engine and everything it holds.  NULL-safe. */
JITANON_API void jitanon_trim_destroy(jitanon_trim *t);

/* Marks `pid` as having a jitdump (perf inject's marker mmap was seen): from now on its
   trimmable mmaps are trimmed.  Without it they are kept whole and may hide jit code,
   exactly as perf would.  Errors: JITANON_ERR_NOMEM / JITANON_ERR_LIMIT. */
JITANON_API jitanon_result jitanon_trim_set_jitdump(jitanon_trim *t, uint32_t pid, jitanon_error *err);

/* A JIT_CODE_LOAD: [ev->start, ev->start + ev->len) now holds function ev->id (over
   anything there); ev->kind and ev->pgoff are not read.  len 0 is a no-op; a range past
   UINT64_MAX is JITANON_ERR_INVALID_ARGUMENT.  On any error the address maps are
   unchanged (as for jitanon_trim_mmap). */
JITANON_API jitanon_result jitanon_trim_load(jitanon_trim *t, const jitanon_trim_event *ev, jitanon_error *err);

/* A JIT_CODE_MOVE: like a load at the new address (ev->start).  The old range is NOT
   unmapped, because perf does not unmap it either, so the old address is not asked for. */
JITANON_API jitanon_result jitanon_trim_move(jitanon_trim *t, const jitanon_trim_event *ev, jitanon_error *err);

/* An MMAP/MMAP2 (ev->kind JITANON_TRIM_ANON or JITANON_TRIM_FILE, ev->id its map_id).
   *pieces / *count (either may be NULL) receive what to write out instead, in address
   order, in a buffer owned by the engine and valid until the next call:
   - FILE, or ANON of a process without a jitdump: the mmap itself, unchanged;
   - ANON of a jitdump process: its parts not on live jit code (zero, one or more),
     less the parts an earlier mmap with the same map_id still covers: re-sending those
     would not change perf's map, and a JIT growing its code cache would otherwise repeat
     every gap between functions at each growth.  So equal map_ids must mean identical
     mappings (same name, same pgoff - start; jitanon_inject interns them); a fresh id
     per mmap turns this off.  Cost O((pieces + 1) log n + k), k = map pieces under it.
   len 0: the mmap unchanged, nothing recorded.  A range past UINT64_MAX or another kind
   is JITANON_ERR_INVALID_ARGUMENT.  On any error every address map is left unchanged
   (the process may have been registered, with an empty map). */
JITANON_API jitanon_result jitanon_trim_mmap(jitanon_trim *t, const jitanon_trim_event *ev,
                                             const jitanon_trim_piece **pieces, size_t *count,
                                             jitanon_error *err);

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
   perf inject --jit strips) or "/dev/zero" (shared anonymous memory, "/dev/zero (deleted)":
   PHP's JIT buffer; perf reads it as anonymous too), else JITANON_TRIM_FILE.  `name` need
   not be NUL-terminated. */
JITANON_API jitanon_trim_kind jitanon_trim_classify(const char *name, size_t len);
/* -- ELF emission ----------------------------------------------------------------------

   Writes small ELF files that hold jitted code, so perf (and addr2line, gdb, objdump,
   elfutils) can symbolise, annotate and unwind it.  One builder makes one file: add one
   function for perf's classic per-function layout (jitted-<pid>-<index>.so), or every
   function of a dump for one per-process file.  No libelf: every table is built here and
   every offset is computed with checked math.

   Layout (file offset == virtual address for everything allocated):

       ELF header, program headers (room for 3, padded)    text_base = 0xF0 (64-bit), 0xA0 (32-bit)
       .text               function i at its own 16-aligned offset: its pgoff
       .eh_frame           at ALIGN8(end of .text), CIE/FDEs of every function
       .eh_frame_hdr       sorted lookup table over all FDEs
       .note.gnu.build-id
       ---- one PT_LOAD (R+X, p_align 0x1000) covers text_base .. end of the note ----
       .symtab .strtab .debug_abbrev .debug_info .debug_line .shstrtab, section headers

   The invariant perf relies on holds for every function: its .text file offset = its
   symbol's st_value = the PT_LOAD-relative address (p_vaddr == p_offset) = the pgoff an
   injector must put into the MMAP2.  perf maps a sample ip to ip - start + pgoff and
   looks the symbol up at that address, so several MMAP2s (one per function, each with its
   own pgoff) may name the same per-process file.

   Unwinding info: JITs that write CODE_UNWINDING_INFO for perf (V8) compute the
   pc-relative pointers in their .eh_frame assuming it sits at ALIGN8(code_size) after the
   function start, as perf's own stubs place it.  For a single function that is exactly
   where it lands here, so V8's bytes come out unchanged; in a per-process file each
   function's CIE/FDEs are moved and their pc_begin fields rebased, and the .eh_frame_hdr
   table is rebuilt over all of them.

   Class: 64-bit unless the machine is one known to be 32-bit only (EM_SPARC, EM_386,
   EM_PPC, EM_ARM); opts.elf_class overrides.  Byte order follows the dump.  e_flags is 0
   (ARM EABI and RISC-V float-ABI flags are not guessed). */

/* Line bias: V8, LLVM's PerfJITEventListener (Julia, other LLVM JITs) and writers that copy
   them add 0x40 to every DEBUG_INFO address, to account for the ELF header perf's old
   stubs put before the code.  jitanon_elf_opts.line_bias says what to subtract:
   JITANON_ELF_LINE_BIAS_AUTO (0) detects it from the data, _NONE subtracts nothing, any
   other value is the bytes to subtract (_PERF, 0x40, is what those writers add). */
typedef uint32_t jitanon_elf_line_bias;
#define JITANON_ELF_LINE_BIAS_AUTO 0u
#define JITANON_ELF_LINE_BIAS_PERF 0x40u
#define JITANON_ELF_LINE_BIAS_NONE 0xFFFFFFFFu

/* Detection, from the data (no producer marker needed).  Each function's DEBUG_INFO
   entries are compared with its code [addr, addr + size) and the bias B = 0x40:
   - an entry below addr + B: only an unbiased writer puts it there -> the dump is unbiased;
   - an entry in (addr + size, addr + size + B]: past the end, explained only by the bias;
   - the lowest entry at exactly addr + B: a biased writer's line for the first instruction.
   The dump is biased when no function says "unbiased" and either some entry lies past an
   end or more than half of the functions with entries start at addr + B (or, with no
   evidence either way, when the header carries V8's pad1 marker 0xDEADBEEF).  An
   unbiased dump never has an entry past an end, so it is shifted only when no function
   has a line in its first B bytes and most have their first exactly B in: the same
   bytes as a biased dump, which is the likelier reading.  Feed every record of a dump
   in order.  A DEBUG_INFO belongs to the LOAD the injector gives it
   (jitanon_jitdump_debug_fits: the newest with the LOAD's code address, else the newest
   since the last LOAD whose first line is in the code), so the DEBUG_INFOs of a batch
   written before the batch's LOADs (LLVM ORC JITLink) vote with their own functions; the
   last JITANON_ELF_LINE_BIAS_WAITING of them wait, older ones go without a vote. */
#define JITANON_ELF_LINE_BIAS_WAITING 32
typedef struct jitanon_elf_line_bias_scan {
    uint64_t functions;  /* LOADs with a DEBUG_INFO before them */
    uint64_t low, past_end, at_bias; /* functions giving each kind of evidence */
    int v8_marker;
    struct { /* private: the DEBUG_INFOs waiting for their LOAD */
        uint32_t nwait;
        struct { /* code address; first, lowest, highest entry; read since the last LOAD */
            uint64_t code_addr, first, lo, hi;
            uint32_t recent;
        } wait[JITANON_ELF_LINE_BIAS_WAITING];
    } state_;
} jitanon_elf_line_bias_scan;

/* h may be NULL (no marker, little-endian records). */
JITANON_API void jitanon_elf_line_bias_scan_init(jitanon_elf_line_bias_scan *s, const jitanon_jitdump_header *h);
JITANON_API void jitanon_elf_line_bias_scan_add(jitanon_elf_line_bias_scan *s, const jitanon_jitdump_record *rec);
/* JITANON_ELF_LINE_BIAS_PERF or JITANON_ELF_LINE_BIAS_NONE: a value for opts.line_bias. */
JITANON_API jitanon_elf_line_bias jitanon_elf_line_bias_scan_result(const jitanon_elf_line_bias_scan *s);

/* Things the writer noticed and worked around (jitanon_elf_info.notes). */
enum {
    JITANON_ELF_NOTE_LINE_BIAS = 1u << 0,       /* debug addresses had a line bias removed */
    JITANON_ELF_NOTE_ERLANG = 1u << 1,          /* BEAM dump: it writes EM_X86_64 whatever the host */
    JITANON_ELF_NOTE_MACHINE_FROM_HOST = 1u << 2, /* ...so e_machine was taken from the host instead */
    JITANON_ELF_NOTE_DEBUG_CLIPPED = 1u << 3,   /* debug entries outside the code were moved or dropped */
    JITANON_ELF_NOTE_UNWIND_DROPPED = 1u << 4,  /* unwinding info we cannot rebase was left out */
    JITANON_ELF_NOTE_DEBUG_COMPRESSED = 1u << 5 /* debug sections are SHF_COMPRESSED (zlib) */
};

typedef struct jitanon_elf_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    uint32_t line_bias;  /* jitanon_elf_line_bias: AUTO (detected over the functions of
                            the file), NONE, or the bytes to subtract */
    uint32_t machine;    /* e_machine to write; 0 = the dump's elf_mach (see NOTE_ERLANG) */
    uint32_t elf_class;  /* 0 = from the machine, else 32 or 64 */
    int compress_debug;  /* zlib-compress .debug_*; needs JITANON_USE_ZLIB, else
                            jitanon_elf_builder_init fails with JITANON_ERR_FEATURE_DISABLED */
    int no_debug;        /* leave out .debug_* even when DEBUG_INFO is given */
    int no_unwind;       /* leave out .eh_frame / .eh_frame_hdr */
    /* Symbols only, no code (a perf map's stub): every function is added with its
       code_addr and map_size (1 when 0) and no code, debug or unwinding info, in address
       order without overlaps; its symbol's st_value is that address itself, in an
       SHT_NOBITS section .text.nobits over them (sh_addr == sh_offset, and a PT_LOAD of
       no file bytes with p_vaddr == p_offset: perf's symbol adjustment is none), so an
       MMAP2 of such a file carries pgoff = its start address.  Tools that disassemble
       find no bytes: perf annotate prints the symbol's header and sample count over an
       empty listing (with only the map it fails: objdump has no file to read). */
    int symbols_only;
    uint32_t end_zero_;
} jitanon_elf_opts;

/* One jitted function.  Every view (and the records' views) must stay valid until
   jitanon_elf_builder_finish: the builder keeps views, never copies of the code. */
typedef struct jitanon_elf_func {
    jitanon_str name;
    uint64_t code_addr;
    jitanon_bytes code;
    const jitanon_jitdump_record *debug;  /* a CODE_DEBUG_INFO record for it, or NULL */
    const jitanon_jitdump_record *unwind; /* a CODE_UNWINDING_INFO record for it, or NULL */
    /* Bytes from the function's start that its mapping covers when that is more than the
       code (unwinding info the runtime keeps mapped after it, see CODE_UNWINDING_INFO
       mapped_size); the next function of a per-process file starts after them.  0: the
       code size. */
    uint64_t map_size;
    /* Where its code goes in the file (= its address there = the MMAP2 pgoff): 0 puts it
       after the previous function, 16-aligned; otherwise at least the headers' end
       (jitanon_elf_builder.text_base) and the previous function's end, unaligned.  A file
       whose offsets mirror the code's addresses (offset = address - one base) is read
       alike from any slice of it (jitanon_inject_opts.elf_layout = JITANON_ELF_PER_REGION). */
    uint64_t file_offset;
} jitanon_elf_func;

/* One function of a dump as the ELF writer takes it (jitanon_jitdump_func_iter): name,
   code, its DEBUG_INFO and UNWINDING_INFO, and map_size from the unwinding info's
   mapped_size (the room jitanon-inject and perf inject map after the code). */
JITANON_API void jitanon_elf_func_of(const jitanon_jitdump_func *f, jitanon_elf_func *out);

/* What a finished file looks like. */
typedef struct jitanon_elf_info {
    uint64_t file_size;
    uint64_t text_offset, text_end; /* .text range; text_offset = first function's pgoff */
    uint64_t functions, line_rows, fdes;
    uint32_t machine, elf_class;
    int big_endian;
    uint32_t notes;        /* JITANON_ELF_NOTE_* */
    uint8_t build_id[20];  /* also in .note.gnu.build-id */
} jitanon_elf_info;

/* SHA-1 state for the build-id (internal; here because the builder holds one). */
typedef struct jitanon__sha1 {
    uint32_t h[5];
    uint8_t block[64];
    size_t used;
    uint64_t total;
    int hw; /* x86 SHA extensions: 0 not asked yet, 1 absent, 2 used */
} jitanon__sha1;

/* Per-function data the builder keeps (views plus a few numbers). */
typedef struct jitanon__elf_entry {
    jitanon_str name;
    uint64_t code_addr, offset, sym_size;
    jitanon_bytes code, debug_entries, eh_frame;
    uint64_t debug_count;
    int streamed; /* name, debug and eh_frame are the builder's copies; code comes later */
} jitanon__elf_entry;

/* The code of a function added after jitanon_elf_builder_stream_code, asked for while the
   file is written: once per such function, in the order added.  *code must hold exactly
   the size given to add and stay valid until the next call.  Nonzero = failure. */
typedef int (*jitanon_elf_code_fn)(void *user, size_t index, jitanon_bytes *code);

/* Collects functions, then writes one ELF.  Caller-owned; free with
   jitanon_elf_builder_release (also after a failure). */
typedef struct jitanon_elf_builder {
    jitanon_elf_opts opts;
    uint32_t machine, elf_class, notes;
    int big_endian, have_opts;
    uint64_t bias, text_base, text_end;
    jitanon__elf_entry *funcs;
    size_t count, cap;
    jitanon__sha1 id;          /* the build-id, hashed as functions are added */
    jitanon_elf_line_bias_scan bias_scan; /* for line_bias AUTO */
    jitanon_elf_code_fn code_fn;
    void *code_user;
    struct jitanon__elf_chunk *copies; /* what streamed functions keep, newest chunk first */
} jitanon_elf_builder;

/* Starts a file for code described by `header` (machine, class, byte order, V8 marker).
   opts may be NULL.  Fails with JITANON_ERR_BAD_OPTIONS / _FEATURE_DISABLED / _INVALID_ARGUMENT. */
JITANON_API jitanon_result jitanon_elf_builder_init(jitanon_elf_builder *b, const jitanon_jitdump_header *header,
                                                    const jitanon_elf_opts *opts, jitanon_error *err);
/* Adds a function; *pgoff (may be NULL) receives its file offset = address in the file =
   the MMAP2 pgoff.  Functions are laid out in the order added. */
JITANON_API jitanon_result jitanon_elf_builder_add(jitanon_elf_builder *b, const jitanon_elf_func *fn,
                                                   uint64_t *pgoff, jitanon_error *err);
/* From now on the builder keeps nothing of what `fn` of later adds points to: names,
   debug and unwinding data are copied, the code is hashed for the build-id at once and
   asked for again through `code_fn` while the file is written.  A per-process file is
   as large as all the code of a dump; built this way, memory holds none of that code. */
JITANON_API void jitanon_elf_builder_stream_code(jitanon_elf_builder *b, jitanon_elf_code_fn code_fn, void *user);
/* Writes the file through `sink` (front to back, no seeking).  info may be NULL.  The
   output depends only on the inputs: the same functions give a byte-identical file. */
JITANON_API jitanon_result jitanon_elf_builder_finish(jitanon_elf_builder *b, jitanon_sink sink,
                                                      jitanon_elf_info *info, jitanon_error *err);
/* NULL-safe. */
JITANON_API void jitanon_elf_builder_release(jitanon_elf_builder *b);

/* One function, one file: init + add + finish + free. */
JITANON_API jitanon_result jitanon_elf_write_function(jitanon_sink sink, const jitanon_jitdump_header *header,
                                                      const jitanon_elf_func *fn, const jitanon_elf_opts *opts,
                                                      jitanon_elf_info *info, jitanon_error *err);

/* -- Injection: perf.data in -> perf.data out + ELF files ----------------------------------

   What `perf inject --jit` does, with range-aware //anon handling:
   - a marker mmap (an executable mapping of a file named as jitanon_jitdump_is_marker
     says) makes the injector load that jitdump (through the process's root while it
     runs in another mount namespace, else from the recorded path; then from
     opts.jitdump_dir) when its header names the process's pid (as recorded, or in its
     own pid namespace), and write ELF files for its functions (one per function, or one
     per process);
   - every CODE_LOAD / CODE_MOVE becomes a synthesized MMAP2 into that ELF, placed in
     timestamp order (before the first input record that is not older), so the output
     keeps its FINISHED_ROUND records and stays valid for perf's round-based sorting;
   - a trimmable mmap (`//anon`, `[anon:`, `/memfd:`, `/dev/zero`) of a process with a
     jitdump is replaced by its parts that do not cover live jitted code (jitanon_trim), so stubs and
     code without a load record keep their `[JIT] tid` / perf-<pid>.map names;
   - every other record passes through unchanged.

   Decisions follow timestamps, not file position, in the order perf's round sorting
   delivers the records: at each FINISHED_ROUND those not newer than the rounds before it,
   in time order; the newer rest waits for the next round (one CPU's next round often
   starts before another's last one ended).  Records are written in file order as far as
   they are decided, so a recording with nothing to inject comes out byte for byte.
   Memory is bounded by about two rounds plus, per jitdump, its
   functions' bookkeeping; the dump itself is held only when resolving samples
   (opts.on_sample, or no output) or with a custom io.load_dump.  Otherwise it is scanned
   when its marker arrives and streamed again from its file to write the ELFs (once more
   at the end with elf_files = SAMPLED); a per-process file is held whole only with a
   custom io.write_elf.  Exited processes are forgotten.

   Live pipes: with pipe input (a recording still running) each dump a marker names is
   followed while the JIT appends to it.  Its stream stays open and, before a round is
   decided, it is read from where the last read stopped (a record cut at the end is
   completed then), so every record up to the round's last event is known when its
   samples and //anon mmaps are decided; a function read after events newer than its load
   were decided is mapped from the last decided time on (the output stays in time order).
   A fresh round (its last event less than 250 ms before the clock now) newer than a
   dump's last record waits, in polls of 1 ms and at most opts.follow_wait_us in all, while
   that dump grew in the last 100 ms: the JIT is writing and may not have flushed yet.  A
   dump whose process exited, and every dump when the input ends, is read to its end and
   closed.  Runtimes buffer their dumps (node: 4 KiB blocks, the last at exit), so a round
   with a user-mode sample in its process's JIT memory (anonymous code memory no function
   read so far covers, or memory no mapping covers yet; a return address of its
   callchain, or a word of its copied user stack or registers, in such code memory) that
   the followed dump has not reached is held back (a dump is followed from when the round
   with its marker is read, so that round's samples wait too), with every round after it
   (the output keeps its order), until the dump reaches it, its process exits (an EXIT
   read while holding has the dump read to its end at once), the dump stops growing
   (opts.follow_idle_ms, 60 s) or the input ends; then the held rounds are decided in
   order and the output streams again.  At most opts.hold_bytes (64 MiB: raw records and
   ~160 bytes of bookkeeping each) is held: past it the oldest rounds are decided with
   what is known until half of it is held.  Samples in JIT memory left unnamed are
   counted by why (stats.unnamed) and, when holding did not suffice, told once through
   io.log at the end.  Apart from what is held, records are not kept and applied events
   are freed: memory grows only by each function's bookkeeping (a 60 s pipe of node
   running three hot functions: 35 MiB held at most, peak RSS 41 MB).  It needs streamed
   dumps (the default I/O, or io.open_dump for an embedder's own: its read returning 0
   at the end of what is written so far, then more as the file grows) and per-function
   files; otherwise (per-process files, on_sample, a custom load_dump alone) a dump is
   read once, at its marker.  An embedder's io.open_dump stream is held for as its read
   returns 0; the idle clock is jitanon_jitdump_now (CLOCK_MONOTONIC).  Counted in stats.follow (dumps, reads,
   wait_ns), stats.hold and stats.unnamed.

   Untrusted recordings: only files named as markers are opened; ELF names are
   built from numbers; an ELF is never written through a symlink, and an existing file is
   replaced only when it is itself a jitted ELF stub. */

typedef enum jitanon_anon_mode {
    JITANON_ANON_RANGE = 0, /* trim trimmable mmaps to what does not cover live jit code */
    JITANON_ANON_ALL = 1,   /* drop them whole once the process has a jitdump (perf's way) */
    JITANON_ANON_KEEP = 2   /* strip nothing */
} jitanon_anon_mode;

/* Samples that ran in a function before the JIT wrote its CODE_LOAD (HotSpot posts
   CompiledMethodLoad asynchronously; other runtimes batch their records).  NAME maps the
   function from earlier than its load - at the earliest `late_window_ns` before it, and
   not before its code's anonymous mapping is seen - when nothing else was ever described
   at its addresses: no earlier LOAD or MOVE of the process's dumps overlaps it, and when
   the claim starts the range lies inside one trimmable (//anon, [anon:, /memfd:,
   /dev/zero) mapping, or such a mapping appears over it before the load.  So a sample there can only have
   run that function's code (or code no jitdump describes, which the window bounds).
   The output stays in time order: the function's MMAP2 carries the earlier time and the
   //anon mmaps after it are trimmed around it.  It needs the whole dump before the
   samples: file input and anon_mode = RANGE.  AUTO (the default) names where it can and
   otherwise keeps load times; NAME asked for explicitly reports the fallback
   (stats.fallbacks, io.log).  Checked against the truth on real recordings (doc/late-loads.md):
   no sample was named wrongly. */
/* What becomes of the perf maps (/tmp/perf-<pid>.map) of recorded processes. */
typedef enum jitanon_perf_map_mode {
    JITANON_PERF_MAP_KEEP = 0, /* nothing: perf report reads the map at report time, from
                                  /tmp of the machine it runs on, while it is there */
    /* Into the output: for a process with executable anonymous mappings (//anon, [anon:,
       /memfd:) whose map is found (opts.jitdump_dir first when set, then /tmp), the map's
       entries become one symbols-only ELF, "jitted-<pid>.map.so" (elf_dir, else next to
       the map), listed in the build-id table and cache like every jitted file, and what
       the output keeps of those mappings (all of it without a jitdump; with one, the
       pieces the trimming leaves around jitted code) is mapped to it.  perf archive then
       carries the names; the stub holds no code, so perf annotate has nothing to
       disassemble there. */
    JITANON_PERF_MAP_ELF = 1
} jitanon_perf_map_mode;

typedef enum jitanon_late_mode {
    JITANON_LATE_AUTO = 0, /* NAME for file input with anon_mode RANGE, else KEEP (silently) */
    JITANON_LATE_NAME = 1, /* back-date the mapping as described above */
    JITANON_LATE_KEEP = 2  /* a function is mapped from its CODE_LOAD on (perf's rule) */
} jitanon_late_mode;

/* The default window for JITANON_LATE_NAME (see doc/late-loads.md for the measurements). */
#define JITANON_LATE_WINDOW_DEFAULT_NS 100000000u

/* Which ELF files hold the jitted code.  FUNCTION (the default) is perf's layout.  REGION
   writes a few files where perf writes one per function (node's 8 s bench recording: 4
   files against 9,046, 35x perf inject's speed): each is one run of a process's code whose
   file offsets mirror the code's addresses (see jitanon__eo_region); perf reads it as it
   reads per-function files, and hotspot's parser does on node and erlang (0 frames differ)
   but for 0.01-0.15% of the frames of V8's embedded builtins when node compiles throughout
   (its module lookup says "??"), and it parses the output slower there (43 s against 25 s
   on node's bench recording): not the default yet.  PROCESS puts all of a dump's code in one file at packed offsets, which perf reads
   but hotspot's parser partly misnames (its caches are keyed by the offset from each
   mapping's start). */
typedef enum jitanon_elf_layout {
    JITANON_ELF_PER_FUNCTION = 0, /* jitted-<pid>-<code_index>.so, as perf writes them */
    JITANON_ELF_PER_PROCESS = 1,  /* one jitted-<pid>.so holding every function */
    JITANON_ELF_PER_REGION = 2    /* jitted-<pid>-r<N>.so: one per run of code */
} jitanon_elf_layout;

/* Which per-function files are written.  perf report (script, annotate, and hotspot's
   unwinder) opens a jitted file only when an address of a sample lands in it, the way
   `perf inject -b` marks only the DSOs with hits; most JIT code of a long run is never
   sampled.  The addresses of a sample: its ip, its callchain entries, its data address,
   its branch stack's from and to, and, for --call-graph dwarf, every word of its user
   registers and of its copied user stack (a superset of the return addresses an unwinder
   can find there; on arm64 also without a pointer-authentication code in bits 48 and up);
   a return address and the byte before it both count. */
typedef enum jitanon_elf_files {
    JITANON_ELF_FILES_AUTO = 0,    /* SAMPLED where it applies (per-function files, file input and
                                      output), else ALL; with no fallback reported */
    JITANON_ELF_FILES_SAMPLED = 1, /* only the files an address of a sample resolves into */
    JITANON_ELF_FILES_ALL = 2      /* every function's file, as perf inject --jit */
} jitanon_elf_files;

/* -- The platform seam -----------------------------------------------------------------
   The library reaches the operating system only through three things: a jitanon_stream
   (one file being read or written), jitanon_inject_io (which files the injector reads and
   where its ELF files go) and a jitanon_thread_pool (the injector's writer threads).  The
   defaults are POSIX (the implementation's last section, [posix]); an embedder or a test
   that sets all three sees no call into the OS from the injector. */

/* A file opened for reading (read_fn) or for writing (write_fn, a jitanon_sink's write:
   0 when all bytes went out).  read_fn returns the bytes read, 0 at the end, SIZE_MAX on
   an error.  close_fn (may be NULL) ends it: 0 when it closed cleanly.  size: the file's
   size when it was opened, 0 when unknown. */
typedef struct jitanon_stream {
    jitanon_read_fn read_fn;
    int (*write_fn)(void *user, const void *data, size_t size);
    int (*close_fn)(void *user);
    void *user;
    uint64_t size;
} jitanon_stream;

/* Threads for independent tasks, numbered from 0 in the order they are queued (ufbx's
   ufbx_thread_pool is the model).  The library calls start_fn once per batch with the
   most workers it wants, the function that runs task `index` (`ctx` is the library's)
   and the allocator for the pool's own memory; run_fn makes tasks [first, first + count) runnable, on any worker and in
   any order; wait_fn returns once every task below `end` has finished (run_fn was called
   for them); stop_fn, after the last wait, ends the workers.  start_fn returns 0 when
   no worker could start (the calling thread then does the work).  Only the calling
   thread calls these. */
typedef struct jitanon_thread_pool {
    int (*start_fn)(void *user, unsigned workers, void (*task)(void *ctx, size_t index), void *ctx,
                    const jitanon_allocator *allocator, void **pool);
    void (*run_fn)(void *user, void *pool, size_t first, size_t count);
    void (*wait_fn)(void *user, void *pool, size_t end);
    void (*stop_fn)(void *user, void *pool);
    void *user;
} jitanon_thread_pool;

/* A process a jitdump marker names, as the running system shows it (see
   jitanon_inject_io.find_process). */
typedef struct jitanon_inject_process {
    uint32_t nspid;     /* its pid in its own (innermost) pid namespace; its pid when none */
    int other_mnt;      /* 1: its mount namespace is not the injector's (a container): its
                           files are read through its root, /proc/<pid>/root */
    uint64_t mnt_ns;    /* that namespace's inode, to tell a reused pid (0: unknown) */
} jitanon_inject_process;

/* Where jitdumps come from and where ELF files go.  The defaults (all NULL) read dumps
   with jitanon_jitdump_load_file and write ELFs atomically with POSIX calls; tests and
   fuzzers plug in memory versions so nothing touches the disk.  Every pointer a callback
   receives (path, dir, name, data, message, opts) is valid during that call only. */
typedef struct jitanon_inject_io {
    /* Loads the dump at `path` (already checked to be named jit-<digits>.dump) into *out,
       as jitanon_jitdump_load_file does: JITANON_OK with a dump the injector frees with
       jitanon_jitdump_destroy, or an error (err filled; *out is not used).  The default
       (NULL) opens the path as a recording may name anything: without blocking
       (O_NONBLOCK, O_NOCTTY), only a regular file (a FIFO or a device is refused at
       once), a symlink only as the kernel's protected_symlinks rule allows; err says
       why a file was refused.  A dump of a process in another mount namespace (a
       container) comes as "/proc/<pid>/root/<recorded path>": the default resolves the
       rest inside that root (openat2 RESOLVE_IN_ROOT, else refusing every symlink), and
       so must a replacement that reads it. */
    jitanon_result (*load_dump)(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                jitanon_jitdump **out, jitanon_error *err);
    /* Stores one complete ELF file called `name` ("jitted-", then digits, '-' and '.',
       then ".so"; a perf map's stub: "jitted-<pid>.map.so") in directory `dir`.  Return 0
       on success. */
    int (*write_elf)(void *user, const char *dir, const char *name, const void *data, size_t size);
    /* Reading a dump as a stream, from its start: *read gets a jitanon_read_fn and
       *stream its user pointer; the read returns 0 at the end of what was written so far
       (and more later when the JIT appends: that is how a live pipe follows a dump, see
       jitanon_inject), SIZE_MAX on an error.  close_dump (may be NULL) ends the stream.
       When set, it is used instead of load_dump wherever the injector streams a dump:
       with output and no on_sample, the way the default I/O streams its files.  The
       default (NULL) opens files as load_dump does. */
    jitanon_result (*open_dump)(void *user, const char *path, jitanon_read_fn *read, void **stream,
                                jitanon_error *err);
    void (*close_dump)(void *user, void *stream);
    /* opts.perf_map ELF: loads the perf map at `path` as jitanon_perfmap_load_file does
       (JITANON_ERR_IO when there is none).  The default (NULL) opens it as load_dump's
       default opens a dump (a regular file only, without blocking). */
    jitanon_result (*load_perfmap)(void *user, const char *path, const jitanon_perfmap_opts *opts,
                                   jitanon_perfmap **out, jitanon_error *err);
    /* The container lookup: whether process `pid` of the recording runs now and, if it
       does, *out (zeroed before the call) says how its jitdump is found: in another mount
       namespace, at "/proc/<pid>/root/<recorded path>" (load_dump or open_dump gets that
       path; a replacement resolves it inside that root as the default does), and with
       which pid in its header.  *out comes zeroed but for nspid = pid.  1 when it runs, 0 when not (the recorded path and pid
       only).  The default, jitanon_inject_find_process_proc, reads /proc; it is used only
       when load_dump and open_dump are the defaults too: an embedder with its own I/O
       sets this (to that function, to keep containers) or has /proc never read. */
    int (*find_process)(void *user, uint32_t pid, jitanon_inject_process *out);
    /* JITANON_FRAME_WANT_UNWIND: reads up to `size` bytes at `offset` of the file at
       `path` (a mapping's file, as the recording names it) into dst: the bytes read
       (fewer at its end), SIZE_MAX when it cannot be read.  Each file is read once (its
       ELF and program headers, .eh_frame_hdr and .eh_frame).  The default (NULL) opens
       it as load_dump's default opens a dump (a regular file only, without blocking).
       JITANON_FRAME_WANT_SYMBOL asks for "[vdso]" too: this process's own vdso image,
       read for a recording's [vdso] it has no build-id of, as perf 6.1 does (the
       default reads it from memory; SIZE_MAX: none). */
    size_t (*read_file)(void *user, const char *path, uint64_t offset, void *dst, size_t size);
    /* Receives warnings (a dump that cannot be read, a refused file, ...). */
    void (*log)(void *user, const char *message);
    /* Called now and then with input bytes consumed so far. */
    void (*progress)(void *user, uint64_t bytes_done);
    void *user;
    /* The writer threads of opts.elf_threads; NULL: POSIX threads where the build has
       them (jitanon_features), else none. */
    const jitanon_thread_pool *thread_pool;
} jitanon_inject_io;

/* io.find_process's default: /proc/<pid>/status (NSpid) and /proc/<pid>/ns/mnt against
   the caller's own.  0 without POSIX (JITANON_NO_POSIX) or when the process is gone;
   `user` is not used. */
JITANON_API int jitanon_inject_find_process_proc(void *user, uint32_t pid, jitanon_inject_process *out);

/* What a sample resolves to, in time order, after the injection decisions: the answer
   perf report will give for the output (see jitanon_inject_opts.on_sample).  Every
   pointer in it (name, callchain, rec and what they view) is valid during the on_sample
   call only: copy what you keep. */
typedef struct jitanon_inject_sample {
    uint32_t pid, tid;
    uint64_t time, ip;
    /* JIT: a jitdump function; ANON/FILE: an mmap of the process, or, for an address no
       mapping of the process holds, a kernel or module mapping (pid -1: [kernel.kallsyms]_text,
       a module's path; check cpumode); NONE: no mapping holds it */
    jitanon_trim_kind kind;
    jitanon_str name;        /* the function's name, or the mmap's file name */
    uint64_t start;          /* where that function or mapping piece starts */
    uint64_t code_index;     /* JIT only */
    /* The sample's callchain as recorded (callchain_nr u64s: jitanon_perf_u64_at with
       big_endian; JITANON_PERF_CONTEXT_* markers included), empty without one.  Its
       entries resolve with jitanon_inject_sample_resolve, at the sample's moment. */
    jitanon_bytes callchain;
    uint64_t callchain_nr;
    int big_endian;
    const void *ctx_;        /* private: the injector that resolved it */
    /* ANON/FILE: the mapping's file offset at `start` (ip - start + pgoff is the address's
       offset in the file, what an ELF symbolizer wants); JIT: 0. */
    uint64_t pgoff;
    /* The SAMPLE record as the reader decodes it: rec->misc & JITANON_PERF_MISC_CPUMODE_MASK
       (the cpumode), rec->sample.period, rec->sid.cpu, rec->attr_index (which event:
       jitanon_perf_reader.attrs), rec->raw. */
    const jitanon_perf_record *rec;
    uint16_t cpumode;        /* rec->misc & JITANON_PERF_MISC_CPUMODE_MASK */
    /* JIT: the loaded jitdump the function is from (held while on_sample is set, unless a
       custom io.load_dump's dump was released), for its CODE_LOAD (code_index) and its
       DEBUG_INFO lines (jitanon_jitdump_debug_fits); valid during the call, as the rest.
       NULL otherwise. */
    const jitanon_jitdump *dump;
    /* The thread's name (perf script's comm) when opts.sample_fields has
       JITANON_SAMPLE_COMM: its last COMM by the sample's time, else the one its FORK
       inherited; empty when the recording named it nowhere (perf prints ":<tid>"). */
    jitanon_str comm;
    /* private: where the lookup of ip found it, and in whose maps (the frame of the
       sample's own ip then costs no second lookup) */
    jitanon_range where_;
    uint32_t where_pid_;
    const void *rec_; /* private: the injector's copy of the record (its registers and stack) */
} jitanon_inject_sample;

/* A callchain's context markers (perf_event.h PERF_CONTEXT_*): entries at or above
   JITANON_PERF_CONTEXT_MAX are no addresses; the ones after a marker are of that mode. */
#define JITANON_PERF_CONTEXT_HV 0xffffffffffffffe0ull /* 2^64 - 32 */
#define JITANON_PERF_CONTEXT_KERNEL 0xffffffffffffff80ull /* 2^64 - 128 */
#define JITANON_PERF_CONTEXT_USER 0xfffffffffffffe00ull /* 2^64 - 512 */
#define JITANON_PERF_CONTEXT_GUEST 0xfffffffffffff800ull /* 2^64 - 2048 */
#define JITANON_PERF_CONTEXT_GUEST_KERNEL 0xfffffffffffff780ull /* 2^64 - 2176 */
#define JITANON_PERF_CONTEXT_GUEST_USER 0xfffffffffffff600ull /* 2^64 - 2560 */
#define JITANON_PERF_CONTEXT_MAX 0xfffffffffffff001ull /* 2^64 - 4095 */

/* Inside opts.on_sample only: what `ip` (a callchain entry, say) of the sample's process
   resolves to now, the way the sample's own ip did.  *out is a copy of *s with ip, kind,
   name, start and code_index of that address; returns out->kind. */
JITANON_API jitanon_trim_kind jitanon_inject_sample_resolve(const jitanon_inject_sample *s, uint64_t ip,
                                                            jitanon_inject_sample *out);

/* -- a symbolizer's view of a sample --------------------------------------------------
   What `perf script` shows for an address of a sample (on jitanon-inject's output of the
   same recording), in a symbolizer's terms: a jitanon_frame.  Nothing of it is computed
   unless asked: jitanon_inject_frame_at for one address, the frame iterator for the
   sample's callchain, and the `want` bits for what costs more than the lookup itself.
       static void on_sample(void *user, const jitanon_inject_sample *s)
       {
           jitanon_inject_frame_iter it;
           jitanon_frame f;
           jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_PERF_MAP);
           while (jitanon_inject_frame_iter_next(&it, &f)) print(&f);
       }
   Every pointer in a frame is valid during the on_sample call only, as the sample's. */
typedef enum jitanon_frame_kind {
    JITANON_FRAME_UNKNOWN = 0,  /* no mapping holds the address (perf: [unknown]) */
    JITANON_FRAME_JIT = 1,      /* a jitdump function: name, code_index, its source line */
    /* anonymous memory (//anon, /dev/zero, /anon_hugepage) its process's perf map names:
       name is the map's symbol, path the map's file (perf shows that as the dso) */
    JITANON_FRAME_PERF_MAP = 2,
    /* a mapping of the process: a file (path, pgoff, offset in the file), [vdso], or
       anonymous memory nothing names (path "//anon": perf shows /tmp/perf-<pid>.map) */
    JITANON_FRAME_FILE = 3,
    JITANON_FRAME_KERNEL = 4    /* the kernel ([kernel.kallsyms]_text) or a module (its path) */
} jitanon_frame_kind;

/* What a frame lookup adds, on request, to what one lookup in the maps gives: */
#define JITANON_FRAME_WANT_PERF_MAP 1u /* name anonymous memory from its process's perf map
                                          (each map loaded once, through io.load_perfmap,
                                          from opts.jitdump_dir then /tmp) */
#define JITANON_FRAME_WANT_BUILD_ID 2u /* build_id: the mapping's MMAP2 one (perf record
                                          --buildid-mmap), else the recording's build-id
                                          table's (HEADER_BUILD_ID of a file; read once) */
#define JITANON_FRAME_WANT_LINE 4u     /* JIT: the source file and line of its DEBUG_INFO */
/* The iterator, for a sample with user registers and a copy of its user stack (perf
   record --call-graph dwarf): the user frames unwound from them with the DWARF CFI of the
   mapped files (.eh_frame, read once per file through io.read_file) and of the jitdumps'
   UNWINDING_INFO, as perf's unwinder finds them (x86-64 and arm64), after the chain's
   kernel frames; see jitanon_inject_frame_iter. */
#define JITANON_FRAME_WANT_UNWIND 8u
/* FILE and KERNEL frames: name is the symbol `perf script` prints for them, read from the
   file's ELF symbols (.symtab, else .dynsym, and its PLT as name@plt) and from the
   kernel's kallsyms, found and chosen as perf 6.1 does: the file's .gnu_debuglink target,
   perf's build-id cache (opts.buildid_cache), /usr/lib/debug by path and by build-id, the
   file itself (inside its process's root when that runs in a container; io.find_process),
   a candidate whose build-id is not the recording's refused; /proc/kallsyms when the
   running kernel's build-id is the recording's, else the cache's kallsyms.  Each file is
   read once, through io.read_file (its headers, one symbol table, its strings, the PLT's
   relocations); names pass through opts.demangle.  Empty where perf prints [unknown]. */
#define JITANON_FRAME_WANT_SYMBOL 16u
#define JITANON_FRAME_WANT_ALL 31u

typedef struct jitanon_frame {
    uint64_t ip;
    jitanon_frame_kind kind;
    int kernel;            /* looked up in the kernel's maps (a kernel context) */
    /* JIT: the function's name; PERF_MAP: the map's symbol; FILE, KERNEL: with
       JITANON_FRAME_WANT_SYMBOL the native symbol perf names there, else empty */
    jitanon_str name;
    /* FILE, KERNEL: the mapping's name as recorded; JIT: the jitdump it came from;
       PERF_MAP: the perf map file; UNKNOWN: empty */
    jitanon_str path;
    uint64_t start;        /* JIT: code address; PERF_MAP: the symbol's; else the mapping piece's */
    uint64_t pgoff;        /* FILE, KERNEL: the mapping's file offset at start */
    uint64_t offset;       /* FILE, KERNEL: ip's offset in the file (ip - start + pgoff); else ip - start */
    uint64_t code_index;   /* JIT */
    jitanon_bytes build_id; /* FILE, KERNEL with WANT_BUILD_ID, when the recording knows it */
    /* JIT with WANT_LINE and a DEBUG_INFO: the entry at ip (the last one whose address is
       not above it, once the dump's line bias is taken off its addresses, as in its ELF
       file: jitanon_elf_opts.line_bias); else empty and 0 */
    jitanon_str src_file;
    uint32_t line;
} jitanon_frame;

/* Inside opts.on_sample only: address `ip` of the sample's process, looked up as perf
   looks up a frame: in the kernel's maps when `kernel` (a kernel context), else in the
   process's.  Returns out->kind. */
JITANON_API jitanon_frame_kind jitanon_inject_frame_at(const jitanon_inject_sample *s, uint64_t ip, int kernel,
                                                       unsigned want, jitanon_frame *out);

/* The frames perf script prints for a sample, leaf first: its callchain's entries, each
   in the context its markers set (the kernel's, the hypervisor's: kernel; user: the
   process's; before any marker: user), the markers themselves skipped; a chain holding
   another marker (a guest's, a JIT's -1) yields nothing, as perf drops it; without a
   callchain, the sample's own ip (in the context of its cpumode).  With
   JITANON_FRAME_WANT_UNWIND and a sample that carries user registers and stack (64-bit):
   the chain's kernel frames, then the user frames unwound from them as perf 6.1 shows
   them: the user ip, then each caller at its return address less one (the call, as perf
   looks it up), up to the first frame with no CFI, an undefined return address or a
   rule that needs the stack beyond the copy (a return address read past the copy from
   memory the process maps, which perf reads as 0, ends with the frame ~0: perf's
   [unknown]); a sample whose stack copy the kernel could not fill (dyn_size 0) gets no
   user frame, as perf gives none.  Caller-owned, holds nothing; valid during the
   on_sample call. */
typedef struct jitanon_inject_frame_iter {
    const jitanon_inject_sample *sample_;
    uint64_t next_;
    unsigned want_;
    int kernel_, state_;
    /* unwinding: the registers (DWARF numbering), which hold, the frame's pc */
    uint64_t regs_[33], known_, pc_;
    uint64_t stack_sp_; /* the stack pointer the copy starts at */
    const uint8_t *stack_;
    size_t stack_size_;
    uint32_t machine_;
} jitanon_inject_frame_iter;

JITANON_API void jitanon_inject_frame_iter_begin(jitanon_inject_frame_iter *it, const jitanon_inject_sample *s,
                                                 unsigned want);
/* 1 with the next frame in *out, 0 after the last. */
JITANON_API int jitanon_inject_frame_iter_next(jitanon_inject_frame_iter *it, jitanon_frame *out);
/* perf's build-id cache (what `perf report` reads when a file named by a recording is gone,
   and what `perf archive` bundles): for a file with build-id B at absolute path P,
       <cache>/P/B/elf                       the file (a hard link, else a copy)
       <cache>/.build-id/B[0..2]/B[2..]      symlink -> ../../P/B
   The cache directory is perf's: $PERF_BUILDID_DIR when set, else `buildid.dir` from perf's
   config ($PERF_CONFIG alone when set, else /etc/perfconfig then ~/.perfconfig), else
   ~/.debug.  (perf 6.1 itself reads only the config and `perf --buildid-dir`; it sets
   $PERF_BUILDID_DIR for the scripts it runs, such as perf archive.)  Nothing is ever written
   through a symlink inside the cache, nor outside it; entries appear atomically (link,
   symlink, rename).  Needs POSIX; otherwise _open reports JITANON_ERR_FEATURE_DISABLED. */
typedef struct jitanon_buildid_cache {
    char dir[4096]; /* the cache directory, as opened */
    int fd_;        /* internal: the open directory */
} jitanon_buildid_cache;

/* perf's cache directory (see above) into out (cap bytes, NUL-terminated). */
JITANON_API jitanon_result jitanon_buildid_cache_dir(char *out, size_t cap, jitanon_error *err);
/* Opens (creating it when missing) the cache at `dir`, or at perf's when dir is NULL. */
JITANON_API jitanon_result jitanon_buildid_cache_open(jitanon_buildid_cache *c, const char *dir, jitanon_error *err);
/* Adds the file at `path` (its build-id: the 20 bytes of its NT_GNU_BUILD_ID note) to the
   cache.  JITANON_OK when added or already there; JITANON_ERR_IO when it cannot be (a
   read-only cache, something not ours in the way). */
JITANON_API jitanon_result jitanon_buildid_cache_add(jitanon_buildid_cache *c, const char *path,
                                                     const uint8_t build_id[20], jitanon_error *err);
/* NULL-safe. */
JITANON_API void jitanon_buildid_cache_release(jitanon_buildid_cache *c);

typedef struct jitanon_inject_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    jitanon_anon_mode anon_mode;
    jitanon_elf_layout elf_layout;
    const char *elf_dir;      /* where ELF files go; NULL = next to each jitdump, as perf does */
    const char *jitdump_dir;  /* searched for the marker's file name when the recorded path fails (a
                                 copy of a dump there may carry the pid of the marker's name) */
    /* Per-function layout: this many threads create the ELF files while the calling thread
       builds the next ones (each file costs an inode and a directory entry: that, not
       building it, is most of the time); with elf_files = SAMPLED they write the files at
       the end.  The output is the same for any value.  0 = the calling thread writes them.
       io.write_elf, when set, is then called from those threads (io.log and io.progress
       never are).  When the threads cannot help, the calling thread writes and the
       fallback is reported (stats.fallbacks, io.log): per-process layout (one write per
       dump: JITANON_INJECT_FALLBACK_THREADS_UNUSED), or a build without POSIX threads or
       no thread could start (JITANON_INJECT_FALLBACK_NO_THREADS).  At most 64 are used. */
    uint32_t elf_threads;
    /* SAMPLED writes the files at the end, once every sample was seen (the output records
       are the same as with ALL but for the build-id table, which lists the files written;
       a file that then cannot be written is logged and its mappings stay).  It chooses
       per-function files: with elf_layout = PER_PROCESS jitanon_inject fails with
       JITANON_ERR_INVALID_ARGUMENT.  It needs file input and file output: a pipe's reader
       may want a file before the end, so with a pipe every file is written
       (JITANON_INJECT_FALLBACK_SAMPLED_PIPE).  AUTO (the default) is SAMPLED where it
       applies and ALL elsewhere, silently.  Without output (out == NULL) no file is
       written: the ELF options are only checked to be in range. */
    jitanon_elf_files elf_files;
    jitanon_late_mode late;   /* samples before their function's CODE_LOAD (see the enum) */
    uint64_t late_window_ns;  /* how far a load may be back-dated; 0 = JITANON_LATE_WINDOW_DEFAULT_NS */
    jitanon_elf_opts elf;     /* passed to the ELF writer (allocator: ours when unset) */
    jitanon_jitdump_opts jitdump; /* passed to the jitdump loader */
    jitanon_inject_io io;
    /* Called for every SAMPLE with its resolution (user = io.user).  With out == NULL in
       jitanon_inject, nothing is written and no ELF is built: a profiler's symbolizer, the
       way samply reads jitdumps. */
    void (*on_sample)(void *user, const jitanon_inject_sample *sample);
    /* Called, in time order with the samples, for every COMM, FORK, EXIT, MMAP and MMAP2
       of the input as recorded (kernel and module mappings, markers and the //anon ones
       before trimming included), and in a pipe for the HEADER_ATTR and HEADER_FEATURE
       records as they come, so that a consumer of on_sample knows every process, thread
       name, mapping and event from the same pass.  rec is as the reader decoded it (its
       index aside); it and its views are valid during the call only. */
    void (*on_event)(void *user, const jitanon_perf_record *rec);
    /* The `user` of on_sample and on_event; NULL: io.user (as before there was one). */
    void *sample_user;
    /* What on_sample's samples carry beyond what costs nothing (JITANON_SAMPLE_* bits;
       0: nothing more, the frames being asked for one by one: jitanon_inject_frame_at). */
    uint32_t sample_fields;
    /* Every ELF file written is also added to this build-id cache (opened by the caller:
       jitanon_buildid_cache_open), from the writer threads when there are some.  NULL: no
       cache.  A file that cannot be added is counted (stats.buildid.cache_failed) and told
       once through io.log; the output is written all the same.  Whatever the cache, the
       output's build-id table (HEADER_BUILD_ID) lists every ELF file written. */
    jitanon_buildid_cache *buildid_cache;
    /* Live pipes (see jitanon_inject): the longest one round waits, in all, for a
       followed dump to catch up with an event newer than its last record.
       0 = JITANON_FOLLOW_WAIT_DEFAULT_US; JITANON_FOLLOW_WAIT_NONE: never wait. */
    uint32_t follow_wait_us;
    /* Live pipes: the most memory (the records' bytes and their bookkeeping) held back
       while a followed dump has not yet reached samples in its process's JIT memory.
       0 = JITANON_HOLD_DEFAULT_BYTES (64 MiB); JITANON_HOLD_NONE: never hold (each
       round decided as it comes).  Past it the oldest rounds are decided with what is
       known (stats.unnamed.past_bound counts the cost). */
    uint64_t hold_bytes;
    /* Live pipes: a dump that has not grown for this long (ms) counts as stopped: its
       samples are no longer held.  0 = JITANON_FOLLOW_IDLE_DEFAULT_MS (60 s). */
    uint32_t follow_idle_ms;
    jitanon_perf_map_mode perf_map;
    jitanon_perfmap_opts perfmap; /* passed to the perf map reader (allocator: ours when unset) */
    /* JITANON_FRAME_WANT_SYMBOL: demangles a native symbol's NUL-terminated `name` into
       out (cap bytes): returns the demangled name's length (out holds it, NUL-terminated,
       when it is below cap; else it is called again with a buffer that large), 0 when name
       is not mangled.  user = sample_user (else io.user).  NULL: names as stored (perf
       --no-demangle); a C++ program passes abi::__cxa_demangle's answer, as perf 6.1 does. */
    size_t (*demangle)(void *user, const char *name, char *out, size_t cap);
    /* internal (a test hook for the fuzzers, not API): a round larger than this is
       processed in parts; 0 = 256 MiB */
    uint64_t max_round_bytes_;
    uint32_t end_zero_;
} jitanon_inject_opts;

/* jitanon_inject_opts.sample_fields */
#define JITANON_SAMPLE_COMM 1u /* jitanon_inject_sample.comm (the injector follows COMM and FORK) */

/* Every field zero is the default of every option (anon_mode RANGE, per-function files,
   late AUTO, ...; see each field): `jitanon_inject_opts o; jitanon_inject_opts_init(&o);`
   or memset to 0 are the same.  It exists for C++ with -Wextra, where `= {0}` warns
   (-Wmissing-field-initializers); in C `= {0}` is fine. */
JITANON_API void jitanon_inject_opts_init(jitanon_inject_opts *opts);

#define JITANON_FOLLOW_WAIT_DEFAULT_US 10000u
#define JITANON_FOLLOW_WAIT_NONE UINT32_MAX
#define JITANON_HOLD_DEFAULT_BYTES ((uint64_t)64 << 20)
#define JITANON_HOLD_NONE UINT64_MAX
#define JITANON_FOLLOW_IDLE_DEFAULT_MS 60000u

/* Options a run could not honour as given and what it did instead (bits of
   jitanon_inject_stats.fallbacks; each is also told once through io.log).  The output is
   correct either way: a fallback costs files or time, never mappings. */
typedef enum jitanon_inject_fallback {
    JITANON_INJECT_FALLBACK_SAMPLED_PIPE = 1,      /* elf_files SAMPLED, pipe in or out: every file written */
    JITANON_INJECT_FALLBACK_SAMPLED_ADDRESSES = 2, /* never set (SAMPLED follows data addresses,
                                                      branch stacks and user stacks) */
    JITANON_INJECT_FALLBACK_NO_THREADS = 4,        /* elf_threads, no thread support or none started */
    JITANON_INJECT_FALLBACK_THREADS_UNUSED = 8,    /* elf_threads with per-process files */
    JITANON_INJECT_FALLBACK_LATE_PIPE = 16,        /* late NAME with pipe input (the dumps may still
                                                      grow): KEEP */
    JITANON_INJECT_FALLBACK_LATE_ANON = 32         /* late NAME with anon_mode ALL or KEEP: KEEP */
} jitanon_inject_fallback;

/* Counters of one run, by stage; each thing is counted once, in the stage that does it. */
typedef struct jitanon_inject_stats {
    struct { /* read: the perf.data input, buffered in rounds */
        uint64_t records, samples;
        uint64_t rounds, largest_round_bytes;
        /* damage the reader recovered from (jitanon_perf_reader's warnings and
           bytes_ignored; its opts.strict refuses instead) */
        uint64_t warnings, bytes_ignored;
    } read;
    struct { /* the jitdumps: markers seen, dumps loaded or unusable */
        uint64_t markers, loaded, failed;
        /* damaged dumps whose valid part was used (opts.jitdump.strict refuses them
           instead): dumps cut short or damaged after a whole header, the CODE_LOADs kept
           from them and the bytes after their last whole record */
        uint64_t damaged, damaged_loads_kept, bytes_ignored;
        uint64_t in_namespace;    /* read inside their process's root (/proc/PID/root: a
                                     container; io.log names each) */
        uint64_t debug_unmatched; /* DEBUG_INFO records no CODE_LOAD took (see
                                     jitanon_jitdump_debug_fits): their lines are in no ELF */
        /* The JIT stopped describing its code: dumps whose process had samples (8 or
           more) in its anonymous memory (anon_mode RANGE) after the dump's last record
           that no function named, in pages where none went unnamed before (code a
           runtime never describes, as an interpreter, is sampled there before), and
           those samples (counted from the first found; until then one in 8 is looked
           at, so a few before it may be missed).  io.log says when each dump stopped:
           usually a runtime killed, or exiting without flushing its dump */
        uint64_t stopped, samples_after_end;
        uint64_t clock_fixed; /* dumps flagged JITDUMP_FLAGS_ARCH_TIMESTAMP whose times were
                                 CLOCK_MONOTONIC: read as such (io.log names each) */
    } dumps;
    struct { /* opts.late NAME */
        uint64_t loads;   /* loads mapped before their CODE_LOAD */
        uint64_t samples; /* samples whose ip fell in such a function before its load */
    } late;
    /* decide: the trimming as the injector applied it.  loads and moves are the jit
       events taken from the dumps (less those whose ELF file could not be written);
       kept, split, dropped and pieces what became of the trimmable mmaps of processes
       with a jitdump, whatever anon_mode; the other fields are its trimming engine's
       (zero when the run needs none). */
    jitanon_trim_stats trim;
    struct { /* opts.perf_map ELF */
        uint64_t maps;      /* perf maps read */
        uint64_t entries;   /* their entries written into stubs */
        uint64_t bad_lines; /* lines skipped as damage (a cut last line included) */
        uint64_t mmaps;     /* mmaps that name a stub instead of anonymous memory */
    } perf_map;
    struct { /* ELF files written, and refused (jitanon_inject_io.write_elf) */
        uint64_t files, bytes, refused;
    } elf;
    struct {
        uint64_t entries;      /* ELF files listed in the output's build-id table */
        uint64_t cached;       /* files added to opts.buildid_cache (new or already there) */
        uint64_t cache_failed; /* files that could not be added */
    } buildid;
    struct { /* write: the output */
        uint64_t records, mmaps_synthesized;
        uint64_t region_bases; /* region functions framed by their file's base and what it hid (two MMAP2s
                                  each; see JITANON_ELF_PER_REGION) */
        /* region layout, file mode: functions mapped when the anonymous memory they will
           load into was, and those of them a sample found there before their load (their
           mapping then taken back); see jitanon__inj_claim */
        uint64_t region_claims, region_repairs;
    } write;
    struct { /* live pipes: dumps followed as they grew, the reads that found more of
                one, and the time rounds waited for a dump to catch up (ns, in all) */
        uint64_t dumps, reads, wait_ns;
    } follow;
    struct { /* live pipes: rounds held back until their dumps caught up (see hold_bytes) */
        uint64_t rounds;       /* rounds held at least once */
        uint64_t peak_bytes;   /* the most held at once */
        uint64_t max_delay_ns; /* the longest a round was held (clock time) */
        uint64_t bound_hits;   /* times the bound decided the oldest rounds early */
    } hold;
    struct { /* live pipes: samples in JIT memory (anonymous code memory no function covers)
                left unnamed, by why */
        uint64_t past_bound;  /* decided before their dump reached them: hold_bytes */
        uint64_t stopped;     /* ... the JIT stopped writing (idle, or the input ended) */
        uint64_t no_dump;     /* of a process without a usable jitdump */
        uint64_t not_in_dump; /* the dump had reached them and names no function there */
    } unnamed;
    uint64_t fallbacks; /* jitanon_inject_fallback bits */
} jitanon_inject_stats;

/* Reads every record `in` has not read yet and writes the injected stream to `out`
   (attrs, features, records; then jitanon_perf_writer_finish).  `out` must use the
   input's byte order.  opts (defaults) and stats may be NULL.  A fatal problem (malformed input, a clock that
   does not match the jitdumps, a write failure) returns an error; a dump that cannot be
   read only leaves its process untouched and is reported through io.log.  A dump cut
   short or damaged after its header is used up to the damage, which io.log reports
   once and stats count (opts.jitdump.strict: the run fails with that error instead).
   Damage the reader recovered from in `in` is used the same way and reported through
   one channel, the reader's own (in->warnings, in->damage, in->bytes_ignored; counted in
   stats), not io.log.  An error names its input in err.source ("jitdump PATH" for a
   dump's).  `out` may be NULL to only resolve samples (opts.on_sample). */
JITANON_API jitanon_result jitanon_inject(jitanon_perf_reader *in, jitanon_perf_writer *out,
                                          const jitanon_inject_opts *opts, jitanon_inject_stats *stats,
                                          jitanon_error *err);

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* jitanon_inject from a path ("-" = stdin) to a path ("-" = stdout, pipe mode), the output
   written atomically (temporary file + rename).  out_mode as in jitanon_perf_copy_file;
   opts, perf_opts and stats may be NULL.  Needs POSIX for file output.  The reader is
   its own, so damage of the input is told through io.log (once, at the end). */
JITANON_API jitanon_result jitanon_inject_file(const char *in_path, const char *out_path, jitanon_perf_mode out_mode,
                                               const jitanon_inject_opts *opts, const jitanon_perf_opts *perf_opts,
                                               jitanon_inject_stats *stats, jitanon_error *err);
#endif

#ifdef __cplusplus
}
#endif
#endif /* JITANON_H_INCLUDED */

/* ======================================================================================
   Stop here if you only need the API.  The implementation follows.
   ====================================================================================== */

#ifdef JITANON_IMPLEMENTATION
#ifndef JITANON_IMPLEMENTATION_INCLUDED
#define JITANON_IMPLEMENTATION_INCLUDED

/* ======================================================================================
   Contents of the implementation, in the order data flows: bytes -> records -> address
   ranges -> ELF -> output.  Each section's header carries its tag: search for "[cursor]"
   (with the brackets) to jump there.

   Foundation
     [sysinc]         system headers and feature detection: the only #includes
     [config]         configuration defaults (allocator, assert, limits)
     [errors]         result strings, error formatting, the failure helper
     [alloc]          allocation through jitanon_allocator, growth of arrays
     [arith]          checked size arithmetic
     [sort] [hmap]    the one sort (stable, of indices) and hash (FNV-1a); a hash map
     [rbtree]         perf's red-black tree over indices (perf map lines, a file's symbols)
     [endian]         loads and stores in either byte order
     [seam]           the platform seam: jitanon_features, CPUID, the table the core reaches
                      the OS through (jitanon__os), the ISO C stdio stream
   Bytes
     [cursor]         the bounds-checked cursor every reader goes through
     [buf]            sinks and the one byte buffer (jitanon_membuf)
     [input]          chunked input for the streaming readers (one refill loop)
     [zstd]           zstd frame decoder (RFC 8878) for perf record -z; XXH64 checksums
   Records
     [jitdump-read]   jitdump: header, records, iterator, stream, loader
     [jitdump-write]  jitdump writer
     [perfmap]        perf map (/tmp/perf-<pid>.map) reader: lines, overlaps resolved as perf, bounded
     [perf-read]      perf.data reader: file and pipe mode, attrs, records, features
     [perf-write]     perf.data writer
     [perf-copy]      the copy frame (jitanon_perf_copy; jitanon_inject runs in it too)
     [perf-mmap]      synthesized and rewritten MMAP2 records
     [perf-path]      path to path: copy or inject with the output written atomically
   Address ranges
     [rangemap]       the interval map (a treap in one pool)
     [trim]           the //anon trimming engine
   ELF
     [elf]            SHA-1 build-ids, the builder, .eh_frame, symbols, DWARF, layout
     [unwind]         DWARF CFI (.eh_frame): an FDE for a pc, its rule row, one frame up
                      over registers and a copied stack (on_sample's dwarf frames)
     [symbols]        native symbols as perf 6.1 names them: a file's ELF .symtab or
                      .dynsym and PLT, kallsyms (on_sample's native and kernel frames)
   Output
     [inject]         the injector: read -> decide -> emit ELFs (jitanon__elfout, one
                      implementation per layout) -> write
   Platform
     [posix]          every call into the OS, fenced: the clock, atomic files, the jitdump file
                      and its marker mmap, the dump opener and its protections, the ELF file
                      writer, /proc, perf's build-id cache, pthreads (jitanon__os_default)
   ====================================================================================== */

/* -- [sysinc] System headers and feature detection --------------------------------------------
   Every #include of the implementation is here.  What is compiled in can be asked at run
   time: jitanon_features(). */

#ifndef JITANON_ASSERT
#include <assert.h>
#endif
#include <stdlib.h> /* malloc (the default allocator) */
#include <string.h>
#include <stdarg.h>
#ifndef JITANON_NO_STDIO
#define JITANON__STDIO 1
#include <stdio.h>
#include <errno.h> /* the OS's reason when a file cannot be opened (strerror) */
#else
#define JITANON__STDIO 0
#endif

/* POSIX (atomic output, the injector's ELF files, the jitdump marker mmap, CLOCK_MONOTONIC)
   on every unix unless JITANON_NO_POSIX or JITANON_NO_STDIO.  In a strict -std= the top of
   this file asked for it (_POSIX_C_SOURCE) before the first system header; when the
   includer had already included one, POSIX.1-2008 is hidden and no define can bring it
   back, so the build stops here rather than lose file output at run time.  The test is on
   what the calls need: O_CLOEXEC and O_NOFOLLOW (glibc: __USE_XOPEN2K8), CLOCK_MONOTONIC
   (__USE_POSIX199309; musl hides it in strict mode too), and the POSIX version. */
#if !defined(JITANON_NO_STDIO) && !defined(JITANON_NO_POSIX) && defined(__unix__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if !defined(_POSIX_VERSION) || _POSIX_VERSION < 200809L || !defined(O_CLOEXEC) || !defined(O_NOFOLLOW) || \
    !defined(CLOCK_MONOTONIC)
#error "jitanon: POSIX.1-2008 is hidden in this file (a strict -std= and a system header included before the implementation; an earlier #include of jitanon.h counts, it includes <stdint.h>): define _POSIX_C_SOURCE=200809L or _GNU_SOURCE before the first #include, or JITANON_NO_POSIX to build without file output, the jitdump marker and the clock"
#define JITANON__POSIX 0 /* only the #error above, not a cascade */
#else
#define JITANON__POSIX 1
#endif
#else
#define JITANON__POSIX 0
#endif

/* Linux: a dump inside another process's root (/proc/PID/root, a container) is opened
   with openat2(2) RESOLVE_IN_ROOT (Linux 5.6), through syscall(): glibc had no wrapper
   before 2.36, and strict modes hide syscall() itself (declared here then: the same ABI).
   O_PATH (a descriptor that opens nothing) is hidden too; glibc's __O_PATH is the same
   bit.  Without openat2 a walk that refuses every symlink does it; without O_PATH such
   paths are refused. */
#if JITANON__POSIX && defined(__linux__)
#include <sys/syscall.h>
/* getauxval(AT_SYSINFO_EHDR): where this process's vdso is (glibc 2.16; elsewhere the
   [vdso] line of /proc/self/maps says it) */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 16))
#include <sys/auxv.h>
#define JITANON__AUXV 1
#endif
#if defined(O_PATH)
#define JITANON__O_PATH O_PATH
#elif defined(__O_PATH)
#define JITANON__O_PATH __O_PATH
#endif
#endif
#if defined(JITANON__O_PATH) && defined(SYS_openat2) && !defined(JITANON_NO_OPENAT2) && \
    (defined(__GLIBC__) || defined(_GNU_SOURCE) || defined(_BSD_SOURCE) || defined(_DEFAULT_SOURCE))
#define JITANON__OPENAT2 1
#if defined(__GLIBC__) && !defined(__USE_MISC)
#ifdef __cplusplus
extern "C"
#endif
    long syscall(long number, ...);
#endif
#else
#define JITANON__OPENAT2 0
#endif

#if JITANON__POSIX && !defined(JITANON_NO_THREADS) && defined(_POSIX_THREADS) && _POSIX_THREADS > 0
#define JITANON__THREADS 1
#include <pthread.h>
#else
#define JITANON__THREADS 0
#endif

#ifdef JITANON_USE_ZLIB
#define JITANON__HAS_ZLIB 1
#include <zlib.h>
#else
#define JITANON__HAS_ZLIB 0
#endif

/* x86 SHA extensions for build-ids, used when CPUID reports them (see the OS layer). */
#if !defined(JITANON_NO_SHA_NI) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define JITANON__SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define JITANON__SHA_NI 0
#endif

#ifndef JITANON_NO_ZSTD
#define JITANON__ZSTD 1 /* the zstd decoder ([zstd]) needs nothing but libc */
#else
#define JITANON__ZSTD 0
#endif

/* -- [config] Configuration defaults ------------------------------------------------------- */

#if defined(JITANON_MALLOC) || defined(JITANON_REALLOC) || defined(JITANON_FREE)
#if !defined(JITANON_MALLOC) || !defined(JITANON_REALLOC) || !defined(JITANON_FREE)
#error "define all of JITANON_MALLOC, JITANON_REALLOC and JITANON_FREE, or none"
#endif
#else
#define JITANON_MALLOC(size) malloc(size)
#define JITANON_REALLOC(ptr, size) realloc(ptr, size)
#define JITANON_FREE(ptr) free(ptr)
#endif

#ifndef JITANON_ASSERT
#define JITANON_ASSERT(x) assert(x)
#endif

#ifndef JITANON_MAX_RECORD_SIZE
#define JITANON_MAX_RECORD_SIZE (256u * 1024u * 1024u)
#endif

/* The byte readers and the cursor run once per field of every record: inline them. */
#if defined(__GNUC__) || defined(__clang__)
#define JITANON__PRIVATE static __attribute__((unused))
#define JITANON__INLINE static inline __attribute__((unused, always_inline))
#define JITANON__NOINLINE static __attribute__((unused, noinline)) /* a slow path kept out of its caller */
#else
#define JITANON__PRIVATE static
#define JITANON__INLINE static inline
#define JITANON__NOINLINE static
#endif

/* -- [errors] Errors ----------------------------------------------------------------------- */

#define JITANON__DESC_ITEM(name, desc) desc,
static const char *const jitanon__result_desc[] = {JITANON__RESULTS(JITANON__DESC_ITEM) "?"};
#undef JITANON__DESC_ITEM

JITANON_API const char *jitanon_result_string(jitanon_result r)
{
    if ((unsigned)r >= (unsigned)JITANON_RESULT_COUNT) return "unknown result";
    return jitanon__result_desc[r];
}

JITANON_API uint32_t jitanon_version(void) { return JITANON_VERSION; }

/* A tiny formatter, so error messages need no stdio (JITANON_NO_STDIO).  Understands
   %s (char*), %u (unsigned), %U (uint64_t, decimal), %X (uint64_t, 0x-hex), %%.
   Always NUL-terminates; returns the length the full text needs. */
typedef struct jitanon__fmtbuf {
    char *dst;
    size_t cap, len;
} jitanon__fmtbuf;

JITANON__PRIVATE void jitanon__fmt_putc(jitanon__fmtbuf *b, char c)
{
    if (b->len + 1 < b->cap) b->dst[b->len] = c;
    b->len++;
}

JITANON__PRIVATE void jitanon__fmt_puts(jitanon__fmtbuf *b, const char *s)
{
    while (*s) jitanon__fmt_putc(b, *s++);
}

JITANON__PRIVATE void jitanon__fmt_num(jitanon__fmtbuf *b, uint64_t v, unsigned base)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (base == 16) jitanon__fmt_puts(b, "0x");
    while (n) jitanon__fmt_putc(b, tmp[--n]);
}

JITANON__PRIVATE size_t jitanon__vfmt(char *dst, size_t cap, const char *fmt, va_list ap)
{
    jitanon__fmtbuf b;
    b.dst = dst;
    b.cap = cap;
    b.len = 0;
    for (; *fmt; fmt++) {
        if (*fmt != '%' || !fmt[1]) {
            jitanon__fmt_putc(&b, *fmt);
            continue;
        }
        switch (*++fmt) {
        case 's': jitanon__fmt_puts(&b, va_arg(ap, const char *)); break;
        case 'u': jitanon__fmt_num(&b, va_arg(ap, unsigned), 10); break;
        case 'U': jitanon__fmt_num(&b, va_arg(ap, uint64_t), 10); break;
        case 'X': jitanon__fmt_num(&b, va_arg(ap, uint64_t), 16); break;
        default: jitanon__fmt_putc(&b, *fmt); break;
        }
    }
    if (cap) dst[b.len < cap ? b.len : cap - 1] = '\0';
    return b.len;
}

JITANON__PRIVATE size_t jitanon__fmt(char *dst, size_t cap, const char *fmt, ...)
{
    size_t n;
    va_list ap;
    va_start(ap, fmt);
    n = jitanon__vfmt(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

/* Records a failure and returns its code, so call sites read `return JITANON__FAIL(...)`. */
JITANON__PRIVATE jitanon_result jitanon__fail_loc(jitanon_error *err, jitanon_result code, uint64_t offset,
                                        const char *func, int line, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->type = code;
        err->description = jitanon_result_string(code);
        err->offset = offset;
        err->record_index = 0;
        err->record_type = 0;
        err->func = func;
        err->line = line;
        err->source[0] = '\0';
        va_start(ap, fmt);
        jitanon__vfmt(err->info, sizeof err->info, fmt, ap);
        va_end(ap);
    }
    return code;
}

#ifdef JITANON_ERROR_LOCATION
#define JITANON__FAIL(err, code, off, ...) jitanon__fail_loc(err, code, off, __func__, __LINE__, __VA_ARGS__)
#else
#define JITANON__FAIL(err, code, off, ...) jitanon__fail_loc(err, code, off, NULL, 0, __VA_ARGS__)
#endif

JITANON__PRIVATE void jitanon__clear_error(jitanon_error *err)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->description = jitanon_result_string(JITANON_OK);
    }
}

/* Names the input of an error that has none yet (or only `kind`): `kind`, and `path`
   when not NULL. */
JITANON__PRIVATE void jitanon__err_source(jitanon_error *err, const char *kind, const char *path)
{
    if (err && err->type != JITANON_OK && (!err->source[0] || !strcmp(err->source, kind)))
        jitanon__fmt(err->source, sizeof err->source, path ? "%s %s" : "%s", kind, path);
}

/* A reader's public function returns through this: its errors name the reader's input. */
JITANON__PRIVATE jitanon_result jitanon__err_from(jitanon_error *err, jitanon_result r, const char *kind)
{
    if (r != JITANON_OK && r != JITANON_END && r != JITANON_AGAIN) jitanon__err_source(err, kind, NULL);
    return r;
}

/* Results about no place in the input: with offset 0 they show no "at byte". */
JITANON__PRIVATE int jitanon__err_at_no_byte(const jitanon_error *err)
{
    switch (err->type) {
    case JITANON_ERR_LIMIT: case JITANON_ERR_NOMEM: case JITANON_ERR_IO: case JITANON_ERR_WRITE:
    case JITANON_ERR_BAD_OPTIONS: case JITANON_ERR_FEATURE_DISABLED: case JITANON_ERR_INVALID_ARGUMENT:
        return err->offset == 0;
    default: return 0;
    }
}

JITANON_API size_t jitanon_format_error(char *dst, size_t n, const jitanon_error *err)
{
    if (!err) return jitanon__fmt(dst, n, "no error");
    if (err->type == JITANON_OK) return jitanon__fmt(dst, n, "ok");
    if (jitanon__err_at_no_byte(err))
        return jitanon__fmt(dst, n, "%s: %s", jitanon_result_string(err->type), err->info);
    if (err->record_index || err->record_type)
        return jitanon__fmt(dst, n, "%s at byte %U (record %U, type %u): %s",
                            jitanon_result_string(err->type), err->offset, err->record_index,
                            (unsigned)err->record_type, err->info);
    return jitanon__fmt(dst, n, "%s at byte %U: %s", jitanon_result_string(err->type), err->offset,
                        err->info);
}

/* -- [alloc] Allocation -------------------------------------------------------------------- */

JITANON__PRIVATE void *jitanon__malloc(const jitanon_allocator *a, size_t size)
{
    if (size == 0) size = 1;
    if (a && a->alloc_fn) return a->alloc_fn(a->user, size);
    return JITANON_MALLOC(size);
}

/* Zero-byte requests are served as one byte, and every size passed back to a user hook
   follows the same rule, so counting and arena allocators always see matching sizes. */
JITANON__PRIVATE void *jitanon__realloc(const jitanon_allocator *a, void *ptr, size_t old_size, size_t new_size)
{
    if (new_size == 0) new_size = 1;
    if (ptr && old_size == 0) old_size = 1;
    if (a && a->realloc_fn) return a->realloc_fn(a->user, ptr, old_size, new_size);
    if (a && a->alloc_fn) {
        /* An allocator without realloc: emulate it so user hooks see every byte. */
        void *n = a->alloc_fn(a->user, new_size);
        if (!n) return NULL;
        if (ptr) {
            memcpy(n, ptr, old_size < new_size ? old_size : new_size);
            if (a->free_fn) a->free_fn(a->user, ptr, old_size);
            else JITANON_FREE(ptr);
        }
        return n;
    }
    (void)old_size;
    return JITANON_REALLOC(ptr, new_size);
}

JITANON__PRIVATE void jitanon__free(const jitanon_allocator *a, void *ptr, size_t size)
{
    if (!ptr) return;
    if (size == 0) size = 1;
    if (a && a->free_fn) a->free_fn(a->user, ptr, size);
    else JITANON_FREE(ptr);
    (void)size;
}

/* The one counting allocator.  Every memory limit (opts.memory_limit of the jitdump
   loader, the perf map and perf.data readers and the trimming engine; the perf.data
   header cap max_header_bytes) is a jitanon__counted: the bytes held, a limit and a note
   that the limit refused a request, so that failure is reported as JITANON_ERR_LIMIT and
   not as out of memory.  jitanon__counted_hooks gives the allocator that allocates
   through `base` and counts; it points at `c`, which must then stay where it is.
   jitanon__counted_take and _give count bytes allocated elsewhere (a budget). */
JITANON__PRIVATE void jitanon__counted_init(jitanon__counted *c, const jitanon_allocator *base, size_t limit,
                                            const char *name)
{
    memset(c, 0, sizeof *c);
    if (base) c->base = *base;
    c->limit = limit;
    c->name = name;
}

/* May old_size bytes held become new_size?  0 (and `hit`) when the limit says no. */
JITANON__PRIVATE int jitanon__counted_room(jitanon__counted *c, size_t old_size, size_t new_size)
{
    size_t rest = c->held - (old_size < c->held ? old_size : c->held);
    if (c->limit && (new_size > c->limit || rest > c->limit - new_size)) {
        c->hit = 1;
        return 0;
    }
    return 1;
}

JITANON__PRIVATE void jitanon__counted_note(jitanon__counted *c, size_t old_size, size_t new_size)
{
    c->held -= old_size < c->held ? old_size : c->held;
    c->held += new_size;
    if (c->held > c->peak) c->peak = c->held;
}

JITANON__PRIVATE int jitanon__counted_take(jitanon__counted *c, size_t old_size, size_t new_size)
{
    if (!jitanon__counted_room(c, old_size, new_size)) return 0;
    jitanon__counted_note(c, old_size, new_size);
    return 1;
}

JITANON__PRIVATE void jitanon__counted_give(jitanon__counted *c, size_t size) { jitanon__counted_note(c, size, 0); }

/* The most bytes one block replacing `old_size` held bytes may have (SIZE_MAX: no limit). */
JITANON__PRIVATE size_t jitanon__counted_left(const jitanon__counted *c, size_t old_size)
{
    size_t rest = c->held - (old_size < c->held ? old_size : c->held);
    if (!c->limit) return SIZE_MAX;
    return rest < c->limit ? c->limit - rest : 0;
}

JITANON__PRIVATE void *jitanon__counted_realloc_fn(void *user, void *ptr, size_t old_size, size_t new_size)
{
    jitanon__counted *c = (jitanon__counted *)user;
    void *p;
    if (!ptr) old_size = 0;
    if (!jitanon__counted_room(c, old_size, new_size)) return NULL;
    p = ptr ? jitanon__realloc(&c->base, ptr, old_size, new_size) : jitanon__malloc(&c->base, new_size);
    if (p) jitanon__counted_note(c, old_size, new_size);
    return p;
}

JITANON__PRIVATE void *jitanon__counted_alloc_fn(void *user, size_t size)
{
    return jitanon__counted_realloc_fn(user, NULL, 0, size);
}

JITANON__PRIVATE void jitanon__counted_free_fn(void *user, void *ptr, size_t size)
{
    jitanon__counted *c = (jitanon__counted *)user;
    jitanon__free(&c->base, ptr, size);
    jitanon__counted_give(c, size);
}

JITANON__PRIVATE jitanon_allocator jitanon__counted_hooks(jitanon__counted *c)
{
    jitanon_allocator a;
    a.alloc_fn = jitanon__counted_alloc_fn;
    a.realloc_fn = jitanon__counted_realloc_fn;
    a.free_fn = jitanon__counted_free_fn;
    a.user = c;
    return a;
}

/* A failed allocation of `what`: JITANON_ERR_LIMIT naming the option when the limit
   refused it, else JITANON_ERR_NOMEM. */
JITANON__PRIVATE jitanon_result jitanon__counted_fail(jitanon__counted *c, jitanon_error *err, uint64_t off,
                                                      const char *what)
{
    int hit = c->hit;
    c->hit = 0;
    if (hit)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, off, "%s of %U bytes reached (%s)", c->name, (uint64_t)c->limit,
                             what);
    return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "out of memory (%s)", what);
}

/* An allocation failure reported further down (JITANON_ERR_NOMEM, with that code's
   message) becomes JITANON_ERR_LIMIT when the limit refused it. */
JITANON__PRIVATE jitanon_result jitanon__counted_fix(jitanon__counted *c, jitanon_result r, jitanon_error *err)
{
    if (r == JITANON_ERR_NOMEM && c->hit)
        r = JITANON__FAIL(err, JITANON_ERR_LIMIT, err ? err->offset : 0, "%s of %U bytes reached", c->name,
                          (uint64_t)c->limit);
    c->hit = 0;
    return r;
}

/* -- [arith] Checked arithmetic ------------------------------------------------------------ */

JITANON__PRIVATE int jitanon__add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a > UINT64_MAX - b) return 0;
    *out = a + b;
    return 1;
}

JITANON__PRIVATE int jitanon__mul_size(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b) return 0;
    *out = a * b;
    return 1;
}

/* Grows an array to hold at least `need` elements of `elem` bytes (doubling).
   Returns 0 on overflow or allocation failure, leaving the array untouched. */
JITANON__PRIVATE int jitanon__grow(const jitanon_allocator *a, void **ptr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap = *cap ? *cap : 8, old_bytes, new_bytes;
    void *n;
    if (need <= *cap) return 1;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return 0;
        ncap *= 2;
    }
    if (!jitanon__mul_size(ncap, elem, &new_bytes) || !jitanon__mul_size(*cap, elem, &old_bytes)) return 0;
    n = jitanon__realloc(a, *ptr, old_bytes, new_bytes);
    if (!n) return 0;
    *ptr = n;
    *cap = ncap;
    return 1;
}

/* -- [sort] Utilities: sorting and hashing ------------------------------------------------- */

/* A stable merge sort of indices (the inputs are nearly sorted already: a run in order
   costs one comparison and a copy).  `tmp` holds n scratch indices. */
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

/* Sorts n elements of `elem` bytes stably by `less` (called with element indices): an
   index sort, then one permutation.  Input already in order costs one pass and no memory.
   Returns 0 when the scratch memory cannot be allocated (the array is then unchanged). */
JITANON__PRIVATE int jitanon__sort(const jitanon_allocator *a, void *base, size_t n, size_t elem, jitanon__less_fn less)
{
    uint32_t *idx;
    uint8_t *copy;
    size_t i, idx_bytes, bytes;
    for (i = 1; i < n && !less(base, (uint32_t)i, (uint32_t)(i - 1)); i++) {}
    if (i >= n) return 1;
    if (n > UINT32_MAX / 2 || !jitanon__mul_size(n, elem, &bytes) || !jitanon__mul_size(2 * n, sizeof *idx, &idx_bytes))
        return 0;
    idx = (uint32_t *)jitanon__malloc(a, idx_bytes);
    copy = idx ? (uint8_t *)jitanon__malloc(a, bytes) : NULL;
    if (copy) {
        for (i = 0; i < n; i++) idx[i] = (uint32_t)i;
        jitanon__msort(idx, idx + n, n, less, base);
        memcpy(copy, base, bytes);
        for (i = 0; i < n; i++) memcpy((uint8_t *)base + i * elem, copy + (size_t)idx[i] * elem, elem);
    }
    jitanon__free(a, copy, bytes);
    jitanon__free(a, idx, idx_bytes);
    return copy != NULL;
}

/* 64-bit FNV-1a; start with h = 0xcbf29ce484222325 (or chain a previous hash). */
JITANON__PRIVATE uint64_t jitanon__fnv1a(const void *data, size_t n, uint64_t h)
{
    const uint8_t *p = (const uint8_t *)data;
    while (n--) h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

/* -- [hmap] A small hash map: u64 key -> size_t value, open addressing ----------------------- */

typedef struct jitanon__hmap {
    uint64_t *keys;
    size_t *vals;  /* SIZE_MAX marks an empty slot */
    size_t count, cap; /* cap is 0 or a power of two, at most half full */
} jitanon__hmap;

JITANON__PRIVATE size_t jitanon__hmap_slot(const jitanon__hmap *m, uint64_t key)
{
    /* Keys are pids, code indices or FNV hashes: the multiply spreads their low bits. */
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
    while (m->vals[i] != SIZE_MAX && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

/* The value slot of `key`, or NULL. */
JITANON__PRIVATE size_t *jitanon__hmap_find(const jitanon__hmap *m, uint64_t key)
{
    size_t i;
    if (!m->count) return NULL;
    i = jitanon__hmap_slot(m, key);
    return m->vals[i] == SIZE_MAX ? NULL : &m->vals[i];
}

JITANON__PRIVATE void jitanon__hmap_free(jitanon__hmap *m, const jitanon_allocator *a)
{
    jitanon__free(a, m->keys, m->cap * sizeof *m->keys);
    jitanon__free(a, m->vals, m->cap * sizeof *m->vals);
    memset(m, 0, sizeof *m);
}

/* The value slot of `key` (valid until the next insertion), inserted with value `init`
   (not SIZE_MAX) when new; NULL when out of memory. */
JITANON__PRIVATE size_t *jitanon__hmap_at(jitanon__hmap *m, const jitanon_allocator *a, uint64_t key, size_t init)
{
    size_t i, *found = jitanon__hmap_find(m, key);
    if (found) return found;
    if (2 * (m->count + 1) > m->cap) {
        jitanon__hmap old = *m;
        size_t cap = m->cap ? 2 * m->cap : 16, kb, vb;
        if (cap <= m->cap || !jitanon__mul_size(cap, sizeof *m->keys, &kb) || !jitanon__mul_size(cap, sizeof *m->vals, &vb))
            return NULL;
        m->keys = (uint64_t *)jitanon__malloc(a, kb);
        m->vals = (size_t *)jitanon__malloc(a, vb);
        if (!m->keys || !m->vals) {
            jitanon__free(a, m->keys, kb);
            jitanon__free(a, m->vals, vb);
            *m = old;
            return NULL;
        }
        memset(m->vals, 0xff, vb);
        m->cap = cap;
        for (i = 0; i < old.cap; i++)
            if (old.vals[i] != SIZE_MAX) {
                size_t k = jitanon__hmap_slot(m, old.keys[i]);
                m->keys[k] = old.keys[i];
                m->vals[k] = old.vals[i];
            }
        jitanon__hmap_free(&old, a);
    }
    i = jitanon__hmap_slot(m, key);
    m->keys[i] = key;
    m->vals[i] = init;
    m->count++;
    return &m->vals[i];
}

/* -- [rbtree] perf's red-black tree, over indices ----------------------------------------- */

/* perf keeps perf-map lines and a file's symbols in red-black trees keyed by start address
   and looks an address up by walking down from the root: where entries overlap, which one
   it finds depends on the tree's shape.  [perfmap] and [symbols] rebuild that shape from the
   same operations (textbook insertion with an equal key going right; erasure by successor)
   on this one tree of node indices. */
typedef struct jitanon__rb {
    uint32_t *l, *r, *p, *ent; /* children, parent (UINT32_MAX: none), the entry a node is */
    uint64_t *key;
    uint8_t *red;
    uint32_t root, n;
} jitanon__rb;

JITANON__PRIVATE void jitanon__rb_free(const jitanon_allocator *a, jitanon__rb *rb)
{
    size_t n = rb->n;
    jitanon__free(a, rb->l, n * sizeof *rb->l), jitanon__free(a, rb->r, n * sizeof *rb->r);
    jitanon__free(a, rb->p, n * sizeof *rb->p), jitanon__free(a, rb->ent, n * sizeof *rb->ent);
    jitanon__free(a, rb->key, n * sizeof *rb->key), jitanon__free(a, rb->red, n);
    jitanon__free(a, rb, sizeof *rb);
}

#define JITANON__RB_NIL UINT32_MAX

/* A tree of n nodes (none inserted yet; key and ent for the caller to fill), or NULL. */
JITANON__PRIVATE jitanon__rb *jitanon__rb_alloc(const jitanon_allocator *a, size_t n)
{
    jitanon__rb *rb;
    if (!n || n >= JITANON__RB_NIL || !(rb = (jitanon__rb *)jitanon__malloc(a, sizeof *rb))) return NULL;
    memset(rb, 0, sizeof *rb);
    rb->n = (uint32_t)n;
    rb->root = JITANON__RB_NIL;
    rb->l = (uint32_t *)jitanon__malloc(a, n * sizeof *rb->l), rb->r = (uint32_t *)jitanon__malloc(a, n * sizeof *rb->r);
    rb->p = (uint32_t *)jitanon__malloc(a, n * sizeof *rb->p), rb->ent = (uint32_t *)jitanon__malloc(a, n * sizeof *rb->ent);
    rb->key = (uint64_t *)jitanon__malloc(a, n * sizeof *rb->key), rb->red = (uint8_t *)jitanon__malloc(a, n);
    if (!rb->l || !rb->r || !rb->p || !rb->ent || !rb->key || !rb->red) {
        jitanon__rb_free(a, rb);
        return NULL;
    }
    return rb;
}

JITANON__PRIVATE void jitanon__rb_rotate(jitanon__rb *t, uint32_t x, int left)
{
    uint32_t *a = left ? t->l : t->r, *b = left ? t->r : t->l; /* left: x's right child rises */
    uint32_t y = b[x];
    b[x] = a[y];
    if (a[y] != JITANON__RB_NIL) t->p[a[y]] = x;
    t->p[y] = t->p[x];
    if (t->p[x] == JITANON__RB_NIL) t->root = y;
    else if (x == t->l[t->p[x]]) t->l[t->p[x]] = y;
    else t->r[t->p[x]] = y;
    a[y] = x;
    t->p[x] = y;
}

JITANON__PRIVATE int jitanon__rb_red(const jitanon__rb *t, uint32_t x)
{
    return x != JITANON__RB_NIL && t->red[x];
}

/* Inserts node z at its key (an equal key goes right), then restores the colours. */
JITANON__PRIVATE void jitanon__rb_insert(jitanon__rb *t, uint32_t z)
{
    uint32_t y = JITANON__RB_NIL, x = t->root;
    while (x != JITANON__RB_NIL) y = x, x = t->key[z] < t->key[x] ? t->l[x] : t->r[x];
    t->p[z] = y, t->l[z] = t->r[z] = JITANON__RB_NIL, t->red[z] = 1;
    if (y == JITANON__RB_NIL) t->root = z;
    else if (t->key[z] < t->key[y]) t->l[y] = z;
    else t->r[y] = z;
    while (jitanon__rb_red(t, t->p[z])) {
        uint32_t p = t->p[z], g = t->p[p];
        int left = p == t->l[g];
        uint32_t u = left ? t->r[g] : t->l[g];
        if (jitanon__rb_red(t, u)) { /* the uncle red: both black, the grandparent red */
            t->red[p] = t->red[u] = 0, t->red[g] = 1;
            z = g;
            continue;
        }
        if (z == (left ? t->r[p] : t->l[p])) { /* zig-zag: straightened first */
            z = p;
            jitanon__rb_rotate(t, z, left);
            p = t->p[z];
        }
        t->red[p] = 0, t->red[g] = 1;
        jitanon__rb_rotate(t, g, !left);
    }
    t->red[t->root] = 0;
}

/* Removes node z: a node with two children is replaced by its successor; a black node
   taken out leaves its place one black short, made up from its sibling's side. */
JITANON__PRIVATE void jitanon__rb_erase(jitanon__rb *t, uint32_t z)
{
    uint32_t x, xp, y = z;
    int y_red = t->red[y];
    if (t->l[z] == JITANON__RB_NIL || t->r[z] == JITANON__RB_NIL) {
        x = t->l[z] != JITANON__RB_NIL ? t->l[z] : t->r[z];
        xp = t->p[z];
        if (x != JITANON__RB_NIL) t->p[x] = xp;
        if (xp == JITANON__RB_NIL) t->root = x;
        else if (z == t->l[xp]) t->l[xp] = x;
        else t->r[xp] = x;
    } else {
        y = t->r[z];
        while (t->l[y] != JITANON__RB_NIL) y = t->l[y];
        y_red = t->red[y];
        x = t->r[y];
        if (t->p[y] == z) xp = y;
        else {
            xp = t->p[y];
            t->l[xp] = x;
            if (x != JITANON__RB_NIL) t->p[x] = xp;
            t->r[y] = t->r[z], t->p[t->r[y]] = y;
        }
        t->l[y] = t->l[z], t->p[t->l[y]] = y;
        t->p[y] = t->p[z];
        if (t->p[z] == JITANON__RB_NIL) t->root = y;
        else if (z == t->l[t->p[z]]) t->l[t->p[z]] = y;
        else t->r[t->p[z]] = y;
        t->red[y] = t->red[z];
    }
    if (y_red) return;
    while (x != t->root && !jitanon__rb_red(t, x)) {
        /* (x may be no node: its side is the one its sibling is not on) */
        int left = x != t->r[xp];
        uint32_t w = left ? t->r[xp] : t->l[xp];
        if (jitanon__rb_red(t, w)) {
            t->red[w] = 0, t->red[xp] = 1;
            jitanon__rb_rotate(t, xp, left);
            w = left ? t->r[xp] : t->l[xp];
        }
        if (!jitanon__rb_red(t, t->l[w]) && !jitanon__rb_red(t, t->r[w])) {
            t->red[w] = 1;
            x = xp, xp = t->p[x];
            continue;
        }
        if (!jitanon__rb_red(t, left ? t->r[w] : t->l[w])) {
            t->red[left ? t->l[w] : t->r[w]] = 0, t->red[w] = 1;
            jitanon__rb_rotate(t, w, !left);
            w = left ? t->r[xp] : t->l[xp];
        }
        t->red[w] = t->red[xp], t->red[xp] = 0;
        t->red[left ? t->r[w] : t->l[w]] = 0;
        jitanon__rb_rotate(t, xp, left);
        x = t->root;
        break;
    }
    if (x != JITANON__RB_NIL) t->red[x] = 0;
}


/* -- [endian] Byte order ------------------------------------------------------------------- */

/* Formats are read and written with explicit byte shifts: no casts of input bytes to
   structs, no alignment requirement, same code on every host. */
JITANON__INLINE uint16_t jitanon__rd16(const uint8_t *p, int big)
{
    return big ? (uint16_t)((unsigned)p[0] << 8 | p[1]) : (uint16_t)((unsigned)p[1] << 8 | p[0]);
}

JITANON__INLINE uint32_t jitanon__rd32(const uint8_t *p, int big)
{
    if (big) return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Each order spelled out in full: compilers turn either into one load (and a byte swap),
   which two rd32 picked by `big` were not (the perf.data scan reads several per record). */
JITANON__INLINE uint64_t jitanon__rd64(const uint8_t *p, int big)
{
    if (big)
        return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 | (uint64_t)p[3] << 32 |
               (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 | (uint64_t)p[6] << 8 | p[7];
    return (uint64_t)p[7] << 56 | (uint64_t)p[6] << 48 | (uint64_t)p[5] << 40 | (uint64_t)p[4] << 32 |
           (uint64_t)p[3] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[1] << 8 | p[0];
}

JITANON__PRIVATE void jitanon__wr16(uint8_t *p, uint64_t v, int big)
{
    p[big ? 0 : 1] = (uint8_t)(v >> 8);
    p[big ? 1 : 0] = (uint8_t)v;
}

JITANON__PRIVATE void jitanon__wr32(uint8_t *p, uint64_t v, int big)
{
    jitanon__wr16(p + (big ? 0 : 2), v >> 16, big);
    jitanon__wr16(p + (big ? 2 : 0), v, big);
}

JITANON__PRIVATE void jitanon__wr64(uint8_t *p, uint64_t v, int big)
{
    jitanon__wr32(p + (big ? 0 : 4), v >> 32, big);
    jitanon__wr32(p + (big ? 4 : 0), v, big);
}

JITANON__PRIVATE int jitanon__host_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* == [seam] The platform seam =================================================================

   The library is portable C99 down to [inject]; what it needs of the operating system
   comes through the public seam (jitanon_stream, jitanon_inject_io, jitanon_thread_pool)
   and the table below (jitanon__os), both implemented by [posix] at the end.  Here: what
   the build has (jitanon_features), CPUID (a compiler builtin, no OS call), the table, and
   the ISO C stdio stream that path- and FILE-based readers use. */

JITANON_API unsigned jitanon_features(void)
{
    return (JITANON__POSIX ? (unsigned)JITANON_FEATURE_POSIX : 0u) |
           (JITANON__THREADS ? (unsigned)JITANON_FEATURE_THREADS : 0u) |
           (JITANON__HAS_ZLIB ? (unsigned)JITANON_FEATURE_ZLIB : 0u) |
           (JITANON__SHA_NI ? (unsigned)JITANON_FEATURE_SHA_NI : 0u) |
           (JITANON__STDIO ? (unsigned)JITANON_FEATURE_STDIO : 0u) |
           (JITANON__ZSTD ? (unsigned)JITANON_FEATURE_ZSTD : 0u);
}

#if JITANON__SHA_NI
JITANON__PRIVATE int jitanon__sha_ni_present(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19))) return 0; /* SSSE3, SSE4.1 */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 29) & 1; /* SHA */
}
#endif

/* -- the seam: what the core asks of the platform --
   Beyond the public seam (jitanon_stream, jitanon_inject_io, jitanon_thread_pool) the
   injector needs a few services of the OS: the dump opener with its protections, the ELF
   file writer, a sleep, /proc, perf's build-id cache and threads.  They are one table,
   jitanon__os; its one implementation, with the defaults of the public seam, is the last
   section of the implementation ([posix]), reached through jitanon__os_default() only. */

/* One ELF directory as the cache sees it, set up by the calling thread and then only read
   (writer threads add files through it); the calling thread also opens the .build-id/<xx>
   directories (bc_ready) before it hands a file to a writer thread, so that a writer only
   reads an entry of xx written before its file was queued. */
typedef struct jitanon__bc_dir {
    int root;          /* the cache directory's fd; -1: no cache */
    int base, ids;     /* <cache>/<real> and <cache>/.build-id, open while prepared */
    int owned;         /* base is ours alone (our uid, no group or other write): see bc_put */
    int xx[256];       /* .build-id/<xx> by its first byte: fd + 1; 0 not readied, -1 not kept */
    const char *dir;   /* the ELF directory as the recording names it */
    char real[4096];   /* its canonical absolute path: the cache mirrors that */
} jitanon__bc_dir;

JITANON__PRIVATE void jitanon__bc_hex(const uint8_t *id, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < 20; i++) {
        hex[2 * i] = digits[id[i] >> 4];
        hex[2 * i + 1] = digits[id[i] & 15];
    }
    hex[40] = 0;
}

typedef struct jitanon__os {
    /* Opens a file a recording names (a jitdump, a perf map) for reading: never blocking,
       only a regular file, symlinks and other processes' roots as jitanon_inject_io's
       load_dump describes.  err says why not. */
    jitanon_result (*open_named)(const char *path, jitanon_stream *s, jitanon_error *err);
    /* jitanon_inject_io.write_elf's default; and a file too large for memory (a
       per-process ELF) written through fill into a temporary file renamed over `path`
       (when what is there may be replaced, as write_elf checks): fill's result, or
       JITANON_ERR_WRITE when the file could not be written. */
    int (*write_elf)(void *user, const char *dir, const char *name, const void *data, size_t size);
    jitanon_result (*write_atomic)(const char *path, const jitanon_allocator *a,
                                   jitanon_result (*fill)(void *ctx, jitanon_sink sink), void *ctx);
    int (*sleep_ns)(uint64_t ns); /* about ns; 0 when it cannot */
    /* /proc: a process's pid in its namespace and its mount namespace (NULL: no /proc);
       1 when `path` is a directory. */
    int (*proc_ns)(uint32_t pid, uint32_t *nspid, int *other_mnt, uint64_t *mnt_ino);
    int (*is_dir)(const char *path);
    /* perf's build-id cache: prepare a directory, get ready for a file of build-id `id`
       (on the calling thread: optional, it saves bc_put system calls), add a file (0
       added, 1 there, -1 failed; on any thread), close. */
    int (*bc_prepare)(jitanon__bc_dir *b, int root, const char *dir);
    void (*bc_ready)(jitanon__bc_dir *b, const uint8_t *id);
    int (*bc_put)(const jitanon__bc_dir *b, const char *name, const void *data, size_t size, const uint8_t *id);
    void (*bc_close)(jitanon__bc_dir *b);
    const jitanon_thread_pool *threads; /* jitanon_inject_io.thread_pool's default; NULL: none */
    /* Reads the standard input as its bytes come (a pipe's, as perf flushes them), where
       fread waits until the whole buffer is filled: a live pipe's rounds would sit unread
       until 64 KiB more came.  NULL: fread. */
    jitanon_read_fn stdin_read;
    /* Moves a stream open_named opened to byte `off` (1), 0 when it cannot (it is then
       read from where it is); NULL: never. */
    int (*seek)(jitanon_stream *s, uint64_t off);
    /* This process's vdso image, mapped by the kernel (its size in *size): what perf
       6.1 reads for a recording's [vdso] that names no build-id; NULL: none. */
    const void *(*self_vdso)(size_t *size);
} jitanon__os;

JITANON__PRIVATE const jitanon__os *jitanon__os_default(void); /* [posix] */

/* Ends a stream (its close_fn's answer: 0 when it closed cleanly); NULL-safe, idempotent. */
JITANON__PRIVATE int jitanon__stream_close(jitanon_stream *s)
{
    int bad = s && s->close_fn ? s->close_fn(s->user) : 0;
    if (s) memset(s, 0, sizeof *s);
    return bad;
}

#ifndef JITANON_NO_STDIO
/* A jitanon_read_fn over an ISO C stream (every reader of a path, without POSIX too). */
JITANON__PRIVATE size_t jitanon__os_file_read(void *user, void *dst, size_t size)
{
    size_t n = fread(dst, 1, size, (FILE *)user);
    return n == 0 && ferror((FILE *)user) ? SIZE_MAX : n;
}

JITANON__PRIVATE int jitanon__os_file_close(void *user) { return fclose((FILE *)user) != 0; }
#endif

/* -- [cursor] The cursor ------------------------------------------------------------------- */

/* Every reader goes through this: `left` is what remains, every take compares against it
   (never `pos + n > size`, which can wrap), and `off` is the absolute input offset of `p`
   for error messages. */
typedef struct jitanon__cur {
    const uint8_t *p;
    size_t left;
    uint64_t off;
    int big;
} jitanon__cur;

JITANON__INLINE jitanon__cur jitanon__cur_make(const void *p, size_t n, uint64_t off, int big)
{
    jitanon__cur c;
    c.p = (const uint8_t *)p;
    c.left = n;
    c.off = off;
    c.big = big;
    return c;
}

JITANON__INLINE const uint8_t *jitanon__take(jitanon__cur *c, size_t n)
{
    const uint8_t *p = c->p;
    if (n > c->left) return NULL;
    c->p += n;
    c->left -= n;
    c->off += n;
    return p;
}

/* Fixed-size readers: callers check `left` once for a whole fixed layout, so these only
   assert; variable parts go through jitanon__take. */
JITANON__INLINE uint16_t jitanon__get16(jitanon__cur *c)
{
    const uint8_t *p = jitanon__take(c, 2);
    JITANON_ASSERT(p);
    return p ? jitanon__rd16(p, c->big) : 0;
}

JITANON__INLINE uint32_t jitanon__get32(jitanon__cur *c)
{
    const uint8_t *p = jitanon__take(c, 4);
    JITANON_ASSERT(p);
    return p ? jitanon__rd32(p, c->big) : 0;
}

JITANON__INLINE uint64_t jitanon__get64(jitanon__cur *c)
{
    const uint8_t *p = jitanon__take(c, 8);
    JITANON_ASSERT(p);
    return p ? jitanon__rd64(p, c->big) : 0;
}

/* A NUL-terminated string that must end inside the cursor; the NUL is consumed. */
JITANON__PRIVATE int jitanon__take_cstr(jitanon__cur *c, jitanon_str *out)
{
    const uint8_t *nul = c->left ? (const uint8_t *)memchr(c->p, 0, c->left) : NULL;
    size_t len;
    if (!nul) return 0;
    len = (size_t)(nul - c->p);
    out->data = (const char *)c->p;
    out->length = len;
    jitanon__take(c, len + 1);
    return 1;
}

/* -- [buf] Sinks and byte buffers ---------------------------------------------------------- */

/* The slow path of an append that does not fit in the room left: write the buffer out
   (and `data` directly when it alone is larger than the buffer) if it spills, else grow
   within max_size.  0 on success. */
JITANON__PRIVATE int jitanon__buf_make_room(jitanon_membuf *b, const void *data, size_t n)
{
    size_t need;
    if (b->spill_.write_fn) {
        if (b->size && b->spill_.write_fn(b->spill_.user, b->data, b->size)) return 1;
        b->size = 0;
        if (n > b->capacity) return b->spill_.write_fn(b->spill_.user, data, n) != 0;
    } else {
        if (b->size > SIZE_MAX - n) return 1;
        need = b->size + n;
        if (b->max_size && need > b->max_size) return 1;
        if (!jitanon__grow(&b->allocator, (void **)&b->data, &b->capacity, need, 1)) return 1;
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return 0;
}

/* Appends n bytes; 0 on success.  The common case is a compare and a copy. */
JITANON__INLINE int jitanon__buf_put(jitanon_membuf *b, const void *data, size_t n)
{
    if (n > b->capacity - b->size || b->max_size) return n ? jitanon__buf_make_room(b, data, n) : 0;
    if (n) memcpy(b->data + b->size, data, n);
    b->size += n;
    return 0;
}

JITANON_API int jitanon_membuf_write(void *membuf, const void *data, size_t size)
{
    return jitanon__buf_put((jitanon_membuf *)membuf, data, size);
}

JITANON_API void jitanon_membuf_release(jitanon_membuf *b)
{
    if (!b) return;
    jitanon__free(&b->allocator, b->data, b->capacity);
    b->data = NULL;
    b->size = b->capacity = 0;
}

/* Internal appends never fail one by one: the first failure sets failed_, which the
   writer checks once at the end. */
JITANON__INLINE void jitanon__buf_bytes(jitanon_membuf *b, const void *data, size_t n)
{
    if (!b->failed_ && jitanon__buf_put(b, data, n)) b->failed_ = 1;
}

JITANON__PRIVATE void jitanon__buf_u8(jitanon_membuf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    jitanon__buf_bytes(b, &x, 1);
}

JITANON__PRIVATE void jitanon__buf_u16(jitanon_membuf *b, uint64_t v, int big)
{
    uint8_t x[2];
    jitanon__wr16(x, v, big);
    jitanon__buf_bytes(b, x, 2);
}

JITANON__PRIVATE void jitanon__buf_u32(jitanon_membuf *b, uint64_t v, int big)
{
    uint8_t x[4];
    jitanon__wr32(x, v, big);
    jitanon__buf_bytes(b, x, 4);
}

JITANON__PRIVATE void jitanon__buf_u64(jitanon_membuf *b, uint64_t v, int big)
{
    uint8_t x[8];
    jitanon__wr64(x, v, big);
    jitanon__buf_bytes(b, x, 8);
}

/* A spilling buffer: writes what it holds to its spill sink. */
JITANON__PRIVATE void jitanon__buf_flush(jitanon_membuf *b)
{
    if (b->size && !b->failed_ && b->spill_.write_fn(b->spill_.user, b->data, b->size)) b->failed_ = 1;
    b->size = 0;
}

/* -- [input] Chunked input: the streaming readers keep the unread bytes of a jitanon_read_fn in
   a buffer that grows only to the largest piece asked for. -- */

JITANON__PRIVATE size_t jitanon__in_avail(const jitanon__input *in) { return in->len - in->pos; }

JITANON__PRIVATE void jitanon__in_consume(jitanon__input *in, size_t n)
{
    in->pos += n;
    in->off += n;
}

/* Makes at least `need` unread bytes available, reading into a buffer of at least
   `min_cap` bytes.  JITANON_END when the read function has nothing more for now. */
JITANON__PRIVATE jitanon_result jitanon__in_fill(jitanon__input *in, const jitanon_allocator *a, size_t need,
                                                size_t min_cap, jitanon_error *err)
{
    while (jitanon__in_avail(in) < need) {
        size_t got, want;
        if (in->pos) {
            memmove(in->buf, in->buf + in->pos, in->len - in->pos);
            in->len -= in->pos;
            in->pos = 0;
        }
        if (need > in->cap && !jitanon__grow(a, (void **)&in->buf, &in->cap, need < min_cap ? min_cap : need, 1))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, in->off, "cannot buffer %U bytes", (uint64_t)need);
        want = in->cap - in->len;
        got = in->read_fn(in->user, in->buf + in->len, want);
        if (got == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_IO, in->off + in->len, "read failed");
        if (got > want) return JITANON__FAIL(err, JITANON_ERR_IO, in->off, "read callback returned too much");
        if (got == 0) return JITANON_END;
        in->len += got;
    }
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__in_init(jitanon__input *in, jitanon_read_fn read_fn, void *user)
{
    memset(in, 0, sizeof *in);
    in->read_fn = read_fn;
    in->user = user;
}

JITANON__PRIVATE void jitanon__in_free(jitanon__input *in, const jitanon_allocator *a)
{
    jitanon__free(a, in->buf, in->cap);
    in->buf = NULL;
    in->cap = in->len = in->pos = 0;
}

JITANON__PRIVATE int jitanon__opts_ok(uint32_t begin, uint32_t end) { return begin == 0 && end == 0; }

/* The options structs begin and end with a zero word: a caller that did not zero one (or
   was built against another layout) is told so instead of having garbage read. */
#define JITANON__OPTS_BAD(opts) ((opts) && !jitanon__opts_ok((opts)->begin_zero_, (opts)->end_zero_))

JITANON__PRIVATE jitanon_result jitanon__opts_fail(jitanon_error *err, const char *type)
{
    return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "%s not zero-initialised", type);
}

/* The start of every _init: the object zeroed (so its _release is safe after a failed
   init), err cleared, the options struct checked. */
JITANON__PRIVATE jitanon_result jitanon__init_begin(void *obj, size_t size, int opts_bad, const char *opts_type,
                                                    jitanon_error *err)
{
    memset(obj, 0, size);
    jitanon__clear_error(err);
    return opts_bad ? jitanon__opts_fail(err, opts_type) : JITANON_OK;
}

/* -- [zstd] zstd frame decoder (RFC 8878) ---------------------------------------------------
   `perf record -z` writes its records as one zstd stream cut into COMPRESSED records, so
   the perf reader decodes it here, one record at a time.  Written from RFC 8878 alone.

   The decoder works in units, each of which must be whole before it is parsed: a magic
   number, the frame header descriptor, the rest of the header, a block header, a block's
   content (a compressed block at most 128 KiB; raw ones as large as libzstd accepts
   them, 2 MiB), the checksum, a skippable frame's size.  A unit that arrives in pieces
   is gathered in `hold`; a skippable frame's content is skipped as it comes.  Blocks are
   decoded into a history buffer (the output itself for one-shot decoding) that keeps at
   least the frame's window, so memory is bounded by the declared window plus a block.

   Where libzstd (the reference decoder) accepts more than RFC 8878 allows and the result
   is still well defined, so do we: blocks bounded by 128 KiB rather than the window,
   bits left over in a Huffman stream, the reserved bits of the sequence modes.  Where it
   decodes corrupt data into garbage (bitstreams read past their start), we refuse it.

   Bitstreams of FSE and Huffman data are read backwards, from the last byte, whose
   highest set bit marks where the data starts.  Reading past the beginning yields zero
   bits and is noticed (`left` goes negative); nothing is ever loaded outside the buffer. */

#if JITANON__ZSTD

#define JITANON__ZS_MAGIC 0xFD2FB528u
#define JITANON__ZS_BLOCK_MAX (128u * 1024u)
/* The largest window perf record -z makes (level 22); the history grows only as content
   comes, so a large cap costs nothing on small recordings. */
#define JITANON__ZS_DEFAULT_WINDOW ((uint64_t)128 * 1024 * 1024)
#define JITANON__ZS_HUF_MAX_BITS 11u

/* XXH64 (seed 0) of the frame content, for the optional checksum: the low 32 bits are
   stored after the last block. */
#define JITANON__XXH_P1 0x9E3779B185EBCA87ull
#define JITANON__XXH_P2 0xC2B2AE3D27D4EB4Full
#define JITANON__XXH_P3 0x165667B19E3779F9ull
#define JITANON__XXH_P4 0x85EBCA77C2B2AE63ull
#define JITANON__XXH_P5 0x27D4EB2F165667C5ull

typedef struct jitanon__xxh64 {
    uint64_t v[4], total;
    uint8_t mem[32];
    size_t mem_len;
} jitanon__xxh64;

JITANON__INLINE uint64_t jitanon__rotl64(uint64_t x, unsigned r) { return x << r | x >> (64 - r); }

JITANON__INLINE uint64_t jitanon__xxh_round(uint64_t acc, uint64_t lane)
{
    acc += lane * JITANON__XXH_P2;
    return jitanon__rotl64(acc, 31) * JITANON__XXH_P1;
}

JITANON__PRIVATE void jitanon__xxh_init(jitanon__xxh64 *h)
{
    memset(h, 0, sizeof *h);
    h->v[0] = JITANON__XXH_P1 + JITANON__XXH_P2;
    h->v[1] = JITANON__XXH_P2;
    h->v[2] = 0;
    h->v[3] = 0 - JITANON__XXH_P1;
}

JITANON__PRIVATE void jitanon__xxh_stripe(jitanon__xxh64 *h, const uint8_t *p)
{
    unsigned i;
    for (i = 0; i < 4; i++) h->v[i] = jitanon__xxh_round(h->v[i], jitanon__rd64(p + 8 * i, 0));
}

JITANON__PRIVATE void jitanon__xxh_update(jitanon__xxh64 *h, const uint8_t *p, size_t n)
{
    h->total += n;
    if (h->mem_len) {
        size_t k = 32 - h->mem_len < n ? 32 - h->mem_len : n;
        memcpy(h->mem + h->mem_len, p, k);
        h->mem_len += k;
        p += k;
        n -= k;
        if (h->mem_len < 32) return;
        jitanon__xxh_stripe(h, h->mem);
        h->mem_len = 0;
    }
    for (; n >= 32; p += 32, n -= 32) jitanon__xxh_stripe(h, p);
    if (n) memcpy(h->mem, p, n);
    h->mem_len = n;
}

JITANON__PRIVATE uint64_t jitanon__xxh_digest(const jitanon__xxh64 *h)
{
    const uint8_t *p = h->mem;
    size_t n = h->mem_len;
    uint64_t acc;
    unsigned i;
    if (h->total >= 32) {
        acc = jitanon__rotl64(h->v[0], 1) + jitanon__rotl64(h->v[1], 7) + jitanon__rotl64(h->v[2], 12) +
              jitanon__rotl64(h->v[3], 18);
        for (i = 0; i < 4; i++) acc = (acc ^ jitanon__xxh_round(0, h->v[i])) * JITANON__XXH_P1 + JITANON__XXH_P4;
    } else {
        acc = JITANON__XXH_P5;
    }
    acc += h->total;
    for (; n >= 8; p += 8, n -= 8)
        acc = jitanon__rotl64(acc ^ jitanon__xxh_round(0, jitanon__rd64(p, 0)), 27) * JITANON__XXH_P1 + JITANON__XXH_P4;
    if (n >= 4) {
        acc = jitanon__rotl64(acc ^ (uint64_t)jitanon__rd32(p, 0) * JITANON__XXH_P1, 23) * JITANON__XXH_P2 +
              JITANON__XXH_P3;
        p += 4;
        n -= 4;
    }
    for (; n; p++, n--) acc = jitanon__rotl64(acc ^ *p * JITANON__XXH_P5, 11) * JITANON__XXH_P1;
    acc ^= acc >> 33;
    acc *= JITANON__XXH_P2;
    acc ^= acc >> 29;
    acc *= JITANON__XXH_P3;
    return acc ^ acc >> 32;
}

/* Index of the highest set bit (x > 0). */
JITANON__INLINE unsigned jitanon__zs_highbit(uint64_t x)
{
    unsigned r = 0;
    while (x >>= 1) r++;
    return r;
}

/* k (<= 56) bits starting at bit `pos` of p[0..n), little-endian bit order; bits past
   the end read as 0. */
JITANON__INLINE uint64_t jitanon__zs_bits_at(const uint8_t *p, size_t n, size_t pos, unsigned k)
{
    size_t i = pos >> 3, j;
    uint64_t v = 0;
    if (n >= 8 && i <= n - 8) {
        v = jitanon__rd64(p + i, 0);
    } else {
        for (j = 0; j < 8 && i + j < n; j++) v |= (uint64_t)p[i + j] << (8 * j);
    }
    return (v >> (pos & 7)) & (((uint64_t)1 << k) - 1);
}

/* A backward bitstream: `left` bits remain unread, the next ones just below bit `left`. */
typedef struct jitanon__zs_bits {
    const uint8_t *p;
    size_t n;
    int64_t left;
} jitanon__zs_bits;

JITANON__PRIVATE int jitanon__zs_bits_init(jitanon__zs_bits *b, const uint8_t *p, size_t n)
{
    b->p = p;
    b->n = n;
    b->left = 0;
    if (!n || !p[n - 1]) return 0; /* no end mark */
    b->left = (int64_t)(8 * (n - 1) + jitanon__zs_highbit(p[n - 1]));
    return 1;
}

JITANON__INLINE uint64_t jitanon__zs_peek(const jitanon__zs_bits *b, unsigned k)
{
    int64_t at = b->left - (int64_t)k;
    if (at >= 0) return jitanon__zs_bits_at(b->p, b->n, (size_t)at, k);
    if (b->left <= 0) return 0;
    return jitanon__zs_bits_at(b->p, b->n, 0, (unsigned)b->left) << (unsigned)-at;
}

JITANON__INLINE uint64_t jitanon__zs_read(jitanon__zs_bits *b, unsigned k)
{
    uint64_t v = k ? jitanon__zs_peek(b, k) : 0;
    b->left -= (int64_t)k;
    return v;
}

/* An FSE decoding table: entry `state` gives the symbol, and the next state is
   base + (nbits bits read). */
typedef struct jitanon__zs_fse {
    uint16_t base;
    uint8_t sym, nbits;
} jitanon__zs_fse;

typedef struct jitanon__zs_table {
    unsigned log;
    jitanon__zs_fse e[512];
} jitanon__zs_table;

typedef struct jitanon__zs_huf {
    unsigned bits;
    uint8_t sym[1u << JITANON__ZS_HUF_MAX_BITS], len[1u << JITANON__ZS_HUF_MAX_BITS];
} jitanon__zs_huf;

enum { JITANON__ZS_MAGIC_U, JITANON__ZS_FHD_U, JITANON__ZS_HEADER_U, JITANON__ZS_BLOCKHDR_U, JITANON__ZS_BLOCK_U,
       JITANON__ZS_CHECKSUM_U, JITANON__ZS_SKIPSIZE_U, JITANON__ZS_SKIP_U };

typedef struct jitanon__zstd {
    jitanon_allocator alloc;
    uint64_t max_window;
    int streaming;       /* history is ours and trimmed to the window (else it is `out`) */
    int unit;            /* JITANON__ZS_*_U expected next */
    size_t need;         /* its size */
    uint8_t *hold;       /* a unit that arrived in pieces */
    size_t hold_len, hold_cap;
    uint64_t hold_off;
    uint64_t skip_left;
    /* the frame */
    unsigned fhd;
    uint64_t window, fcs, produced;
    int has_fcs;
    size_t block_max;
    unsigned block_type, block_last;
    size_t block_size; /* raw and RLE: the bytes it makes */
    size_t rep[3];
    jitanon__xxh64 xxh;
    jitanon_membuf hist; /* streaming: decoded bytes, at least the last window of them */
    jitanon_membuf *dst; /* where blocks are decoded: &hist or the caller's output */
    size_t fpos;         /* dst->data[fpos..] is what matches may reference */
    /* entropy state, carried from block to block inside a frame */
    int huf_valid;
    jitanon__zs_huf huf;
    const jitanon__zs_table *ll, *of, *ml; /* NULL: no table yet (repeat mode is invalid) */
    jitanon__zs_table tab_ll, tab_of, tab_ml, pre_ll, pre_of, pre_ml, scratch;
    uint8_t lit[JITANON__ZS_BLOCK_MAX];
} jitanon__zstd;

/* Symbol baselines and extra bits of literal lengths, match lengths and (implicitly:
   1 << code, code bits) offsets; default distributions (RFC 8878, 3.1.1.3.2.2). */
static const uint32_t jitanon__zs_ll_base[36] = {0,  1,  2,  3,  4,  5,  6,   7,   8,   9,    10,   11,
                                                 12, 13, 14, 15, 16, 18, 20,  22,  24,  28,   32,   40,
                                                 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
static const uint8_t jitanon__zs_ll_bits[36] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  1,  1,
                                                1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const uint32_t jitanon__zs_ml_base[53] = {
    3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,  16,  17,  18,  19,   20,   21,   22,   23,    24,    25,    26,    27,    28,    29,
    30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59,  67,  83,  99,  131,  259,  515,  1027, 2051,  4099,  8195,  16387, 32771, 65539};
static const uint8_t jitanon__zs_ml_bits[53] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0,  0,  0, 0,
                                                0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const int16_t jitanon__zs_ll_default[36] = {4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2,
                                                   2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
static const int16_t jitanon__zs_ml_default[53] = {1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
static const int16_t jitanon__zs_of_default[29] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                                   1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};

/* Builds the decoding table of a distribution (RFC 8878, 4.1.1): "less than 1"
   symbols take the last cells, the others are spread with a fixed step. */
JITANON__PRIVATE int jitanon__zs_fse_build(jitanon__zs_table *t, const int16_t *norm, unsigned nsym, unsigned log)
{
    uint16_t next[256];
    size_t size = (size_t)1 << log, high = size - 1, pos = 0, step = (size >> 1) + (size >> 3) + 3, u;
    unsigned s;
    int i;
    t->log = log;
    for (s = 0; s < nsym; s++) {
        if (norm[s] == -1) {
            t->e[high--].sym = (uint8_t)s;
            next[s] = 1;
        } else {
            next[s] = (uint16_t)(norm[s] > 0 ? norm[s] : 0);
        }
    }
    for (s = 0; s < nsym; s++)
        for (i = 0; i < norm[s]; i++) {
            t->e[pos].sym = (uint8_t)s;
            do pos = (pos + step) & (size - 1);
            while (pos > high);
        }
    if (pos != 0) return 0;
    for (u = 0; u < size; u++) {
        unsigned x = next[t->e[u].sym]++, nb = log - jitanon__zs_highbit(x);
        t->e[u].nbits = (uint8_t)nb;
        t->e[u].base = (uint16_t)(((size_t)x << nb) - size);
    }
    return 1;
}

/* Reads an FSE table description (RFC 8878, 4.1.1) from p[0..n) and builds its table;
   *used = its size in bytes. */
JITANON__PRIVATE jitanon_result jitanon__zs_fse_read(jitanon__zs_table *t, const uint8_t *p, size_t n, unsigned max_log,
                                                    unsigned max_sym, size_t *used, uint64_t off, jitanon_error *err)
{
    int16_t norm[256];
    size_t pos = 4;
    unsigned log, nsym = 0, nbits;
    int32_t remaining, threshold;
    if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: FSE table description missing");
    log = (p[0] & 15u) + 5;
    if (log > max_log)
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: FSE accuracy log %u over %u", log, max_log);
    remaining = ((int32_t)1 << log) + 1;
    threshold = (int32_t)1 << log;
    nbits = log + 1;
    while (remaining > 1) {
        int32_t max = 2 * threshold - 1 - remaining, v, proba;
        if (nsym > max_sym)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: FSE table describes symbols past %u", max_sym);
        v = (int32_t)jitanon__zs_bits_at(p, n, pos, nbits - 1);
        if (v < max) {
            pos += nbits - 1;
        } else {
            v = (int32_t)jitanon__zs_bits_at(p, n, pos, nbits);
            if (v >= threshold) v -= max;
            pos += nbits;
        }
        proba = v - 1;
        norm[nsym++] = (int16_t)proba;
        remaining -= proba < 0 ? 1 : proba;
        if (proba == 0) {
            unsigned rep;
            do {
                unsigned k;
                rep = (unsigned)jitanon__zs_bits_at(p, n, pos, 2);
                pos += 2;
                for (k = 0; k < rep; k++) {
                    if (nsym > max_sym)
                        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: FSE table describes symbols past %u",
                                             max_sym);
                    norm[nsym++] = 0;
                }
            } while (rep == 3);
        }
        while (remaining < threshold) {
            nbits--;
            threshold >>= 1;
        }
        if (pos > 8 * n) break;
    }
    if (remaining != 1 || (pos + 7) / 8 > n)
        return JITANON__FAIL(err, (pos + 7) / 8 > n ? JITANON_ERR_TRUNCATED : JITANON_ERR_BAD_ZSTD, off,
                             "zstd: FSE table description %s", (pos + 7) / 8 > n ? "runs past its data" : "does not add up");
    if (!jitanon__zs_fse_build(t, norm, nsym, log))
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: FSE table does not fill its cells");
    *used = (pos + 7) / 8;
    return JITANON_OK;
}

/* Builds a Huffman table from the description at p[0..n) (RFC 8878, 4.2.1); *used = its size. */
JITANON__PRIVATE jitanon_result jitanon__zs_huf_read(jitanon__zstd *z, const uint8_t *p, size_t n, size_t *used,
                                                    uint64_t off, jitanon_error *err)
{
    uint8_t w[256];
    unsigned nw = 0, i, hb, maxbits, last, weight;
    uint64_t total = 0, rest;
    size_t at = 0;
    if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: Huffman tree description missing");
    hb = p[0];
    if (hb >= 128) { /* direct: 4 bits per weight */
        nw = hb - 127;
        if (1 + (nw + 1) / 2 > n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: Huffman weights cut");
        for (i = 0; i < nw; i++) w[i] = (uint8_t)(i & 1 ? p[1 + i / 2] & 15 : p[1 + i / 2] >> 4);
        *used = 1 + (nw + 1) / 2;
    } else { /* FSE-compressed weights, two interleaved states over one bitstream */
        jitanon__zs_bits b;
        jitanon_result res;
        size_t st[2];
        unsigned cur = 0;
        if (1 + (size_t)hb > n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: Huffman weights cut");
        res = jitanon__zs_fse_read(&z->scratch, p + 1, hb, 6, 255, &at, off + 1, err);
        if (res != JITANON_OK) return res;
        if (!jitanon__zs_bits_init(&b, p + 1 + at, hb - at))
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off + 1 + at, "zstd: Huffman weight bitstream has no end mark");
        st[0] = (size_t)jitanon__zs_read(&b, z->scratch.log);
        st[1] = (size_t)jitanon__zs_read(&b, z->scratch.log);
        /* states take turns; once the bits run out, the other state gives the last weight */
        for (;;) {
            const jitanon__zs_fse *e = &z->scratch.e[st[cur]];
            if (nw >= 255) return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: more than 255 Huffman weights");
            w[nw++] = e->sym;
            st[cur] = e->base + (size_t)jitanon__zs_read(&b, e->nbits);
            cur ^= 1u;
            if (b.left >= 0) continue;
            if (nw >= 255) return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: more than 255 Huffman weights");
            w[nw++] = z->scratch.e[st[cur]].sym;
            break;
        }
        *used = 1 + (size_t)hb;
    }
    for (i = 0; i < nw; i++) {
        if (w[i] > JITANON__ZS_HUF_MAX_BITS)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: Huffman weight %u over %u", (unsigned)w[i],
                                 JITANON__ZS_HUF_MAX_BITS);
        if (w[i]) total += (uint64_t)1 << (w[i] - 1);
    }
    if (!total) return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: Huffman weights are all zero");
    maxbits = jitanon__zs_highbit(total) + 1;
    rest = ((uint64_t)1 << maxbits) - total;
    if (maxbits > JITANON__ZS_HUF_MAX_BITS || (rest & (rest - 1)))
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: Huffman weights do not make a prefix code");
    last = jitanon__zs_highbit(rest) + 1;
    w[nw++] = (uint8_t)last;
    z->huf.bits = maxbits;
    /* prefix codes in order of weight, then symbol: code space fills from 0 upwards */
    at = 0;
    for (weight = 1; weight <= maxbits; weight++)
        for (i = 0; i < nw; i++)
            if (w[i] == weight) {
                size_t k, cnt = (size_t)1 << (weight - 1);
                for (k = 0; k < cnt; k++, at++) {
                    z->huf.sym[at] = (uint8_t)i;
                    z->huf.len[at] = (uint8_t)(maxbits + 1 - weight);
                }
            }
    z->huf_valid = 1;
    return JITANON_OK;
}

/* Decodes one Huffman stream into out[0..count): the stream must end exactly. */
JITANON__PRIVATE jitanon_result jitanon__zs_huf_stream(const jitanon__zs_huf *h, const uint8_t *p, size_t n,
                                                      uint8_t *out, size_t count, uint64_t off, jitanon_error *err)
{
    jitanon__zs_bits b;
    size_t i;
    unsigned bits = h->bits;
    if (!jitanon__zs_bits_init(&b, p, n))
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: Huffman stream has no end mark");
    for (i = 0; i < count; i++) {
        size_t v = (size_t)jitanon__zs_peek(&b, bits);
        out[i] = h->sym[v];
        b.left -= h->len[v];
    }
    /* Bits left over are tolerated, as libzstd (the reference decoder) tolerates them;
       reading past the start is not. */
    if (b.left < 0)
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: Huffman stream of %U symbols read past its start (%U bits)",
                             (uint64_t)count, (uint64_t)-b.left);
    return JITANON_OK;
}

/* The literals section (RFC 8878, 3.1.1.3.1): *lit points at the literals (in the input for
   raw ones), *used = the section's size. */
JITANON__PRIVATE jitanon_result jitanon__zs_literals(jitanon__zstd *z, const uint8_t *p, size_t n, const uint8_t **lit,
                                                    size_t *nlit, size_t *used, uint64_t off, jitanon_error *err)
{
    unsigned type, sf;
    size_t regen, csize = 0, hlen;
    if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: block without a literals section");
    type = p[0] & 3u;
    sf = (p[0] >> 2) & 3u;
    if (type < 2) { /* raw or RLE */
        hlen = sf == 1 ? 2 : sf == 3 ? 3 : 1;
        if (hlen > n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: literals header cut");
        regen = hlen == 1 ? (size_t)(p[0] >> 3)
                : hlen == 2 ? (size_t)(p[0] >> 4) + ((size_t)p[1] << 4)
                            : (size_t)(p[0] >> 4) + ((size_t)p[1] << 4) + ((size_t)p[2] << 12);
    } else {
        uint64_t h;
        hlen = sf < 2 ? 3 : sf == 2 ? 4 : 5;
        if (hlen > n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: literals header cut");
        h = p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (hlen > 3 ? (uint64_t)p[3] << 24 : 0) |
            (hlen > 4 ? (uint64_t)p[4] << 32 : 0);
        if (hlen == 3) {
            regen = (size_t)(h >> 4 & 0x3FF);
            csize = (size_t)(h >> 14 & 0x3FF);
        } else if (hlen == 4) {
            regen = (size_t)(h >> 4 & 0x3FFF);
            csize = (size_t)(h >> 18 & 0x3FFF);
        } else {
            regen = (size_t)(h >> 4 & 0x3FFFF);
            csize = (size_t)(h >> 22 & 0x3FFFF);
        }
    }
    if (regen > z->block_max)
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: %U literals, over the block maximum %U",
                             (uint64_t)regen, (uint64_t)z->block_max);
    *nlit = regen;
    if (type == 0) {
        if (regen > n - hlen) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: raw literals cut");
        *lit = p + hlen;
        *used = hlen + regen;
        return JITANON_OK;
    }
    if (type == 1) {
        if (n - hlen < 1) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: RLE literals cut");
        memset(z->lit, p[hlen], regen);
        *lit = z->lit;
        *used = hlen + 1;
        return JITANON_OK;
    }
    if (csize > n - hlen) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: compressed literals cut");
    {
        const uint8_t *q = p + hlen;
        size_t qn = csize, tree = 0;
        uint64_t qoff = off + hlen;
        jitanon_result res;
        if (type == 2) {
            if ((res = jitanon__zs_huf_read(z, q, qn, &tree, qoff, err)) != JITANON_OK) return res;
        } else if (!z->huf_valid) {
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: treeless literals without an earlier Huffman table");
        }
        q += tree;
        qn -= tree;
        qoff += tree;
        if (sf == 0) {
            res = jitanon__zs_huf_stream(&z->huf, q, qn, z->lit, regen, qoff, err);
        } else {
            size_t s[4], seg = (regen + 3) / 4, k;
            if (qn < 6) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, qoff, "zstd: Huffman jump table cut");
            s[0] = jitanon__rd16(q, 0);
            s[1] = jitanon__rd16(q + 2, 0);
            s[2] = jitanon__rd16(q + 4, 0);
            if (s[0] + s[1] + s[2] > qn - 6)
                return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, qoff, "zstd: Huffman streams larger than their data");
            s[3] = qn - 6 - s[0] - s[1] - s[2];
            if (3 * seg > regen)
                return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, qoff, "zstd: %U literals cannot fill four streams",
                                     (uint64_t)regen);
            q += 6;
            qoff += 6;
            res = JITANON_OK;
            for (k = 0; k < 4 && res == JITANON_OK; k++) {
                res = jitanon__zs_huf_stream(&z->huf, q, s[k], z->lit + k * seg, k < 3 ? seg : regen - 3 * seg, qoff, err);
                q += s[k];
                qoff += s[k];
            }
        }
        if (res != JITANON_OK) return res;
    }
    *lit = z->lit;
    *used = hlen + csize;
    return JITANON_OK;
}

/* One symbol table of the sequences section: predefined, RLE, FSE-described or repeated. */
JITANON__PRIVATE jitanon_result jitanon__zs_seq_table(unsigned mode, const jitanon__zs_table **cur,
                                                     jitanon__zs_table *own, const jitanon__zs_table *pre,
                                                     unsigned max_log, unsigned max_sym, const uint8_t *p, size_t n,
                                                     size_t *used, uint64_t off, const char *what, jitanon_error *err)
{
    *used = 0;
    if (mode == 0) {
        *cur = pre;
    } else if (mode == 1) {
        if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: %s RLE symbol missing", what);
        if (p[0] > max_sym)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: %s RLE symbol %u over %u", what, (unsigned)p[0],
                                 max_sym);
        own->log = 0;
        own->e[0].sym = p[0];
        own->e[0].nbits = 0;
        own->e[0].base = 0;
        *cur = own;
        *used = 1;
    } else if (mode == 2) {
        jitanon_result res = jitanon__zs_fse_read(own, p, n, max_log, max_sym, used, off, err);
        if (res != JITANON_OK) return res;
        *cur = own;
    } else if (!*cur) {
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: %s table repeated before one was defined", what);
    }
    return JITANON_OK;
}

/* Copies a match of ml bytes from `off` back; the source may overlap the destination,
   so the copy goes in chunks no longer than the distance, which doubles as the
   repeated pattern grows. */
JITANON__INLINE void jitanon__zs_match(uint8_t *o, size_t off, size_t ml)
{
    size_t d = off;
    if (off == 1) {
        memset(o, o[-1], ml);
        return;
    }
    while (ml) {
        size_t k = d < ml ? d : ml;
        memcpy(o, o - d, k);
        o += k;
        ml -= k;
        if (d < 4096) d *= 2;
    }
}

/* Decodes a compressed block's content (RFC 8878, 3.1.1.3) to o[0..room); *produced = bytes. */
JITANON__PRIVATE jitanon_result jitanon__zs_compressed(jitanon__zstd *z, const uint8_t *p, size_t n, uint8_t *o,
                                                      size_t room, size_t *produced, uint64_t off, jitanon_error *err)
{
    const uint8_t *lit = NULL, *fstart = z->dst->data + z->fpos;
    size_t nlit = 0, used = 0, nseq, i, k;
    uint8_t *o0 = o, *oend = o + room;
    jitanon__zs_bits b;
    jitanon_result res;
    size_t sll, sof, sml;
    if ((res = jitanon__zs_literals(z, p, n, &lit, &nlit, &used, off, err)) != JITANON_OK) return res;
    p += used;
    n -= used;
    off += used;
    if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: sequences section missing");
    if (p[0] < 128) {
        nseq = p[0];
        k = 1;
    } else if (p[0] < 255) {
        if (n < 2) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: sequence count cut");
        nseq = ((size_t)(p[0] - 128) << 8) + p[1];
        k = 2;
    } else {
        if (n < 3) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: sequence count cut");
        nseq = p[1] + ((size_t)p[2] << 8) + 0x7F00;
        k = 3;
    }
    p += k;
    n -= k;
    off += k;
    if (nseq) {
        unsigned modes;
        if (!n) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off, "zstd: compression modes missing");
        modes = p[0];
        /* its two reserved bits are ignored, as libzstd ignores them */
        p++;
        n--;
        off++;
        if ((res = jitanon__zs_seq_table(modes >> 6, &z->ll, &z->tab_ll, &z->pre_ll, 9, 35, p, n, &k, off,
                                         "literal length", err)) != JITANON_OK)
            return res;
        p += k, n -= k, off += k;
        if ((res = jitanon__zs_seq_table(modes >> 4 & 3, &z->of, &z->tab_of, &z->pre_of, 8, 31, p, n, &k, off,
                                         "offset", err)) != JITANON_OK)
            return res;
        p += k, n -= k, off += k;
        if ((res = jitanon__zs_seq_table(modes >> 2 & 3, &z->ml, &z->tab_ml, &z->pre_ml, 9, 52, p, n, &k, off,
                                         "match length", err)) != JITANON_OK)
            return res;
        p += k, n -= k, off += k;
        if (!jitanon__zs_bits_init(&b, p, n))
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: sequence bitstream has no end mark");
        sll = (size_t)jitanon__zs_read(&b, z->ll->log);
        sof = (size_t)jitanon__zs_read(&b, z->of->log);
        sml = (size_t)jitanon__zs_read(&b, z->ml->log);
        for (i = 0; i < nseq; i++) {
            const jitanon__zs_fse *ell = &z->ll->e[sll], *eof = &z->of->e[sof], *eml = &z->ml->e[sml];
            unsigned ofc = eof->sym;
            size_t ofv, ll, ml, mo, avail;
            ofv = ((size_t)1 << ofc) + (size_t)jitanon__zs_read(&b, ofc);
            ml = jitanon__zs_ml_base[eml->sym] + (size_t)jitanon__zs_read(&b, jitanon__zs_ml_bits[eml->sym]);
            ll = jitanon__zs_ll_base[ell->sym] + (size_t)jitanon__zs_read(&b, jitanon__zs_ll_bits[ell->sym]);
            if (ofv > 3) {
                mo = ofv - 3;
                z->rep[2] = z->rep[1];
                z->rep[1] = z->rep[0];
                z->rep[0] = mo;
            } else {
                size_t idx = ofv - 1 + (ll == 0);
                if (idx == 0) {
                    mo = z->rep[0];
                } else {
                    mo = idx == 3 ? z->rep[0] - 1 : z->rep[idx];
                    if (!mo) mo = 1; /* a repeat of offset 1 minus one */
                    if (idx != 1) z->rep[2] = z->rep[1];
                    z->rep[1] = z->rep[0];
                    z->rep[0] = mo;
                }
            }
            if (i + 1 < nseq) {
                sll = ell->base + (size_t)jitanon__zs_read(&b, ell->nbits);
                sml = eml->base + (size_t)jitanon__zs_read(&b, eml->nbits);
                sof = eof->base + (size_t)jitanon__zs_read(&b, eof->nbits);
            }
            if (ll > nlit)
                return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: sequence %U takes %U literals, %U left",
                                     (uint64_t)i, (uint64_t)ll, (uint64_t)nlit);
            if (ll > (size_t)(oend - o) || ml > (size_t)(oend - o) - ll)
                return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: block decodes to more than %U bytes",
                                     (uint64_t)room);
            memcpy(o, lit, ll);
            o += ll;
            lit += ll;
            nlit -= ll;
            avail = (size_t)(o - fstart);
            if (mo > avail || (z->streaming && mo > z->window))
                return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off,
                                     "zstd: sequence %U copies from %U bytes back, %U are there%s", (uint64_t)i,
                                     (uint64_t)mo, (uint64_t)(avail < z->window ? avail : z->window),
                                     z->produced ? "" : " (a frame made with a dictionary?)");
            jitanon__zs_match(o, mo, ml);
            o += ml;
        }
        if (b.left < 0)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: sequence bitstream read past its start (%U bits)",
                                 (uint64_t)-b.left);
        if (b.left > 0)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: sequence bitstream longer than its %U sequences",
                                 (uint64_t)nseq);
    } else if (n) {
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: %U bytes after a block without sequences", (uint64_t)n);
    }
    if (nlit > (size_t)(oend - o))
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: block decodes to more than %U bytes", (uint64_t)room);
    memcpy(o, lit, nlit);
    o += nlit;
    *produced = (size_t)(o - o0);
    return JITANON_OK;
}

/* Room for one more block of `want` bytes in the history: a streaming history keeps the
   last window of bytes (moved to the front once it holds two windows) and grows only as
   data comes. */
JITANON__PRIVATE jitanon_result jitanon__zs_room(jitanon__zstd *z, size_t want, size_t *room, uint64_t off,
                                                jitanon_error *err)
{
    jitanon_membuf *d = z->dst;
    size_t need;
    if (z->streaming) {
        size_t keep = (size_t)z->window, limit = 2 * keep + want;
        if (d->size + want > limit && d->size > keep) {
            memmove(d->data, d->data + d->size - keep, keep);
            d->size = keep;
        }
        if (d->size + want >= d->capacity) { /* never a NULL buffer, even for empty blocks */
            size_t ncap = d->capacity * 2 > limit ? limit : d->capacity * 2;
            void *np;
            if (ncap <= d->size + want) ncap = d->size + want + 1;
            np = jitanon__realloc(&z->alloc, d->data, d->capacity, ncap);
            if (!np) return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "zstd: cannot hold a %U-byte window", (uint64_t)ncap);
            d->data = (uint8_t *)np;
            d->capacity = ncap;
        }
    } else {
        if (d->max_size && (d->size > d->max_size || want > d->max_size - d->size))
            want = d->size < d->max_size ? d->max_size - d->size : 0;
        if (d->size > SIZE_MAX - want) return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "zstd: output too large");
        need = d->size + want + 1; /* never a NULL buffer, even for empty blocks */
        if (!jitanon__grow(&d->allocator, (void **)&d->data, &d->capacity, need, 1))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "zstd: cannot hold %U decompressed bytes", (uint64_t)need);
    }
    *room = want;
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__zs_frame_begin(jitanon__zstd *z)
{
    z->rep[0] = 1;
    z->rep[1] = 4;
    z->rep[2] = 8;
    z->huf_valid = 0;
    z->ll = z->of = z->ml = NULL;
    z->produced = 0;
    jitanon__xxh_init(&z->xxh);
    if (z->streaming) z->hist.size = 0;
    z->fpos = z->dst->size;
}

/* The end of a frame: its content size, if it declared one, must match. */
JITANON__PRIVATE jitanon_result jitanon__zs_frame_end(jitanon__zstd *z, uint64_t off, jitanon_error *err)
{
    if (z->has_fcs && z->produced != z->fcs)
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: frame declares %U bytes of content, holds %U", z->fcs,
                             z->produced);
    z->unit = JITANON__ZS_MAGIC_U;
    z->need = 4;
    return JITANON_OK;
}

/* A decoded block's bytes, dst->data[at..]: checksummed, counted and, when streaming, passed on. */
JITANON__PRIVATE jitanon_result jitanon__zs_emit(jitanon__zstd *z, size_t at, jitanon_membuf *out, uint64_t off,
                                                jitanon_error *err)
{
    size_t n = z->dst->size - at;
    if (z->fhd & 4) jitanon__xxh_update(&z->xxh, z->dst->data + at, n);
    z->produced += n;
    if (z->has_fcs && z->produced > z->fcs)
        return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: frame content runs past its declared %U bytes", z->fcs);
    if (z->streaming && jitanon__buf_put(out, z->dst->data + at, n))
        return JITANON__FAIL(err, out->max_size && n > out->max_size - out->size ? JITANON_ERR_LIMIT : JITANON_ERR_NOMEM,
                             off, "zstd: cannot buffer %U more decompressed bytes (%U held)", (uint64_t)n,
                             (uint64_t)out->size);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__zs_header(jitanon__zstd *z, const uint8_t *p, uint64_t off, jitanon_error *err)
{
    static const uint8_t did_size[4] = {0, 1, 2, 4};
    unsigned fcs_flag = z->fhd >> 6, single = z->fhd >> 5 & 1u, did_flag = z->fhd & 3u, i;
    uint64_t did = 0, fcs = 0;
    size_t at = 0, fcs_size = fcs_flag ? (size_t)1 << fcs_flag : single;
    if (!single) {
        unsigned e = p[0] >> 3, m = p[0] & 7u;
        uint64_t base = (uint64_t)1 << (10 + e);
        z->window = base + base / 8 * m;
        at = 1;
    }
    for (i = 0; i < did_size[did_flag]; i++) did |= (uint64_t)p[at + i] << (8 * i);
    at += did_size[did_flag];
    for (i = 0; i < fcs_size; i++) fcs |= (uint64_t)p[at + i] << (8 * i);
    if (fcs_size == 2) fcs += 256;
    z->has_fcs = fcs_size != 0;
    z->fcs = fcs;
    if (single) z->window = fcs;
    if (did)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, off,
                             "zstd: frame needs dictionary %U; only frames without a dictionary are decoded", did);
    if (z->window > z->max_window || z->window > SIZE_MAX / 4)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, off,
                             "zstd: frame declares a %U-byte window, over the cap of %U (raise the window cap)", z->window,
                             z->max_window);
    /* RFC 8878 bounds a block by the window too; libzstd does not, nor do we: a smaller
       window still bounds what matches may reach */
    z->block_max = JITANON__ZS_BLOCK_MAX;
    jitanon__zs_frame_begin(z);
    return JITANON_OK;
}

/* Parses one whole unit p[0..z->need) found at input offset `off`. */
JITANON__PRIVATE jitanon_result jitanon__zs_unit(jitanon__zstd *z, const uint8_t *p, uint64_t off, jitanon_membuf *out,
                                                jitanon_error *err)
{
    jitanon_result res;
    switch (z->unit) {
    case JITANON__ZS_MAGIC_U: {
        uint32_t m = jitanon__rd32(p, 0);
        if (m == JITANON__ZS_MAGIC) {
            z->unit = JITANON__ZS_FHD_U;
            z->need = 1;
        } else if ((m & 0xFFFFFFF0u) == 0x184D2A50u) {
            z->unit = JITANON__ZS_SKIPSIZE_U;
            z->need = 4;
        } else {
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: not a zstd frame (magic %X)", (uint64_t)m);
        }
        return JITANON_OK;
    }
    case JITANON__ZS_FHD_U: {
        static const size_t did_size[4] = {0, 1, 2, 4};
        unsigned f = p[0], fcs_flag = f >> 6;
        if (f & 8) return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: reserved bit set in the frame header");
        z->fhd = f;
        z->unit = JITANON__ZS_HEADER_U;
        z->need = (f & 32 ? 0 : 1) + did_size[f & 3] + (fcs_flag ? (size_t)1 << fcs_flag : (size_t)(f >> 5 & 1));
        return JITANON_OK;
    }
    case JITANON__ZS_HEADER_U:
        if ((res = jitanon__zs_header(z, p, off - 1, err)) != JITANON_OK) return res;
        z->unit = JITANON__ZS_BLOCKHDR_U;
        z->need = 3;
        return JITANON_OK;
    case JITANON__ZS_BLOCKHDR_U: {
        uint32_t h = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
        size_t size = h >> 3;
        z->block_last = h & 1u;
        z->block_type = h >> 1 & 3u;
        if (z->block_type == 3) return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: reserved block type");
        /* RFC 8878 bounds raw and RLE blocks too; libzstd does not, nor do we (the size
           field allows 2 MiB; the history makes room for the block) */
        if (z->block_type == 2 && size > z->block_max)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: block of %U bytes, over the block maximum %U",
                                 (uint64_t)size, (uint64_t)z->block_max);
        z->unit = JITANON__ZS_BLOCK_U;
        z->need = z->block_type == 1 ? 1 : size;
        z->block_size = size;
        return JITANON_OK;
    }
    case JITANON__ZS_BLOCK_U: {
        size_t room = 0, at, made = 0;
        if ((res = jitanon__zs_room(z, z->block_type == 2 ? z->block_max : z->block_size, &room, off, err)) !=
            JITANON_OK)
            return res;
        at = z->dst->size;
        if (z->block_type == 0 || z->block_type == 1) {
            made = z->block_size;
            if (made > room)
                return JITANON__FAIL(err, JITANON_ERR_LIMIT, off, "zstd: output over its %U-byte limit",
                                     (uint64_t)z->dst->max_size);
            if (z->block_type == 0) memcpy(z->dst->data + at, p, made);
            else memset(z->dst->data + at, p[0], made);
        } else {
            res = jitanon__zs_compressed(z, p, z->need, z->dst->data + at, room, &made, off, err);
            if (res != JITANON_OK) return res;
        }
        z->dst->size += made;
        if ((res = jitanon__zs_emit(z, at, out, off, err)) != JITANON_OK) return res;
        if (!z->block_last) {
            z->unit = JITANON__ZS_BLOCKHDR_U;
            z->need = 3;
            return JITANON_OK;
        }
        if (z->fhd & 4) {
            z->unit = JITANON__ZS_CHECKSUM_U;
            z->need = 4;
            return JITANON_OK;
        }
        return jitanon__zs_frame_end(z, off, err);
    }
    case JITANON__ZS_CHECKSUM_U: {
        uint32_t want = jitanon__rd32(p, 0), got = (uint32_t)jitanon__xxh_digest(&z->xxh);
        if (want != got)
            return JITANON__FAIL(err, JITANON_ERR_BAD_ZSTD, off, "zstd: content checksum %X, the frame says %X",
                                 (uint64_t)got, (uint64_t)want);
        return jitanon__zs_frame_end(z, off, err);
    }
    case JITANON__ZS_SKIPSIZE_U:
        z->skip_left = jitanon__rd32(p, 0);
        z->unit = JITANON__ZS_SKIP_U;
        z->need = 0;
        return JITANON_OK;
    default:
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, off, "zstd: decoder state corrupt");
    }
}

JITANON__PRIVATE void jitanon__zstd_destroy(jitanon__zstd *z)
{
    jitanon_allocator a;
    if (!z) return;
    a = z->alloc;
    jitanon__free(&a, z->hold, z->hold_cap);
    jitanon__free(&a, z->hist.data, z->hist.capacity);
    jitanon__free(&a, z, sizeof *z);
}

/* A decoder; streaming: it keeps its own history and may leave a frame unfinished at the
   end (perf never ends its frame).  max_window 0 = 128 MiB. */
JITANON__PRIVATE jitanon_result jitanon__zstd_create(const jitanon_allocator *a, uint64_t max_window, int streaming,
                                                     jitanon__zstd **out, jitanon_error *err)
{
    jitanon__zstd *z = (jitanon__zstd *)jitanon__malloc(a, sizeof *z);
    *out = NULL;
    if (!z) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "zstd: no memory for a decoder");
    memset(z, 0, sizeof *z);
    if (a) z->alloc = *a;
    z->max_window = max_window ? max_window : JITANON__ZS_DEFAULT_WINDOW;
    z->streaming = streaming;
    z->hist.allocator = z->alloc;
    z->dst = &z->hist;
    z->unit = JITANON__ZS_MAGIC_U;
    z->need = 4;
    if (!jitanon__zs_fse_build(&z->pre_ll, jitanon__zs_ll_default, 36, 6) ||
        !jitanon__zs_fse_build(&z->pre_ml, jitanon__zs_ml_default, 53, 6) ||
        !jitanon__zs_fse_build(&z->pre_of, jitanon__zs_of_default, 29, 5)) {
        jitanon__zstd_destroy(z);
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "zstd: default tables do not build");
    }
    *out = z;
    return JITANON_OK;
}

/* Decodes src[0..n), found at input offset `off`, appending to `out`; a unit cut at the
   end waits for the next call. */
JITANON__PRIVATE jitanon_result jitanon__zstd_feed(jitanon__zstd *z, const uint8_t *src, size_t n, uint64_t off,
                                                   jitanon_membuf *out, jitanon_error *err)
{
    jitanon_result res;
    if (!z->streaming) z->dst = out;
    for (;;) {
        const uint8_t *u;
        uint64_t uoff;
        if (z->unit == JITANON__ZS_SKIP_U) {
            size_t k = z->skip_left < n ? (size_t)z->skip_left : n;
            src += k;
            n -= k;
            off += k;
            z->skip_left -= k;
            if (z->skip_left) return JITANON_OK;
            z->unit = JITANON__ZS_MAGIC_U;
            z->need = 4;
            continue;
        }
        if (!z->hold_len && n >= z->need) {
            u = src;
            uoff = off;
            src += z->need;
            n -= z->need;
            off += z->need;
        } else {
            size_t k = z->need - z->hold_len < n ? z->need - z->hold_len : n;
            if (!n) return JITANON_OK;
            if (!jitanon__grow(&z->alloc, (void **)&z->hold, &z->hold_cap, z->need, 1))
                return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "zstd: cannot buffer %U bytes", (uint64_t)z->need);
            if (!z->hold_len) z->hold_off = off;
            memcpy(z->hold + z->hold_len, src, k);
            z->hold_len += k;
            src += k;
            n -= k;
            off += k;
            if (z->hold_len < z->need) return JITANON_OK;
            u = z->hold;
            uoff = z->hold_off;
            z->hold_len = 0;
        }
        if ((res = jitanon__zs_unit(z, u, uoff, out, err)) != JITANON_OK) return res;
    }
}

/* The end of the input at offset `off`: it must not cut a unit; a streaming decoder may
   be inside a frame between blocks, as perf leaves it. */
JITANON__PRIVATE jitanon_result jitanon__zstd_end(const jitanon__zstd *z, uint64_t off, jitanon_error *err)
{
    if (!z->hold_len && (z->unit == JITANON__ZS_MAGIC_U || (z->streaming && z->unit == JITANON__ZS_BLOCKHDR_U)))
        return JITANON_OK;
    return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, z->hold_len ? z->hold_off : off,
                         "zstd: data ends inside a frame (%U of %U bytes of its next part)", (uint64_t)z->hold_len,
                         (uint64_t)(z->unit == JITANON__ZS_SKIP_U ? z->skip_left : z->need));
}

JITANON_API jitanon_result jitanon_zstd_decompress(const void *src, size_t size, jitanon_membuf *out, uint64_t max_window,
                                                   jitanon_error *err)
{
    jitanon__zstd *z;
    jitanon_result res;
    JITANON_ASSERT(out && (src || !size));
    jitanon__clear_error(err);
    res = jitanon__zstd_create(&out->allocator, max_window, 0, &z, err);
    if (res != JITANON_OK) return res;
    res = jitanon__zstd_feed(z, (const uint8_t *)src, size, 0, out, err);
    if (res == JITANON_OK) res = jitanon__zstd_end(z, size, err);
    jitanon__zstd_destroy(z);
    return res;
}

#else /* JITANON__ZSTD */

JITANON_API jitanon_result jitanon_zstd_decompress(const void *src, size_t size, jitanon_membuf *out, uint64_t max_window,
                                                   jitanon_error *err)
{
    (void)src, (void)size, (void)out, (void)max_window;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "zstd decoder left out (JITANON_NO_ZSTD)");
}

#endif /* JITANON__ZSTD */

/* -- [jitdump-read] jitdump reader --------------------------------------------------------- */

#define JITANON__JITDUMP_HEADER_SIZE 40u
#define JITANON__JITDUMP_PREFIX_SIZE 16u
#define JITANON__JITDUMP_LOAD_FIXED 56u
#define JITANON__JITDUMP_MOVE_SIZE 64u
#define JITANON__JITDUMP_DEBUG_FIXED 32u
#define JITANON__JITDUMP_DEBUG_ENTRY_FIXED 16u
#define JITANON__JITDUMP_UNWIND_FIXED 40u

JITANON_API const char *jitanon_jitdump_record_name(uint32_t id)
{
    static const char *const names[] = {"LOAD", "MOVE", "DEBUG_INFO", "CLOSE", "UNWINDING_INFO"};
    return id < JITANON_JITDUMP_CODE_MAX ? names[id] : "UNKNOWN";
}

JITANON__PRIVATE uint64_t jitanon__jitdump_max_record(const jitanon_jitdump_opts *opts)
{
    return opts && opts->max_record_size ? opts->max_record_size : (uint64_t)JITANON_MAX_RECORD_SIZE;
}

/* Parses the 40-byte header at `p` (n bytes available).  Returns JITANON_AGAIN when fewer
   than 40 bytes are there yet; the caller decides whether that means truncation. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_parse_header(const uint8_t *p, size_t n, jitanon_jitdump_header *h,
                                                jitanon_error *err)
{
    jitanon__cur c;
    uint32_t magic_le;
    if (n < 4) return JITANON_AGAIN;
    memset(h, 0, sizeof *h);
    magic_le = jitanon__rd32(p, 0);
    /* The writer stores the magic in its own byte order, so it tells us the order. */
    if (magic_le == JITANON_JITDUMP_MAGIC) h->big_endian = 0;
    else if (jitanon__rd32(p, 1) == JITANON_JITDUMP_MAGIC) h->big_endian = 1;
    else return JITANON__FAIL(err, JITANON_ERR_BAD_MAGIC, 0, "jitdump magic 'JiTD' not found (read %X)",
                              (uint64_t)magic_le);
    if (n < JITANON__JITDUMP_HEADER_SIZE) return JITANON_AGAIN;
    c = jitanon__cur_make(p, n, 0, h->big_endian);
    h->magic = jitanon__get32(&c);
    h->version = jitanon__get32(&c);
    h->total_size = jitanon__get32(&c);
    h->elf_mach = jitanon__get32(&c);
    h->pad1 = jitanon__get32(&c);
    h->pid = jitanon__get32(&c);
    h->timestamp = jitanon__get64(&c);
    h->flags = jitanon__get64(&c);
    h->arch_timestamp = (h->flags & JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP) != 0;
    if (h->version != 1 && h->version != 2)
        return JITANON__FAIL(err, JITANON_ERR_BAD_VERSION, 4, "jitdump version %u (expected 1)",
                             (unsigned)h->version);
    if (h->total_size < JITANON__JITDUMP_HEADER_SIZE)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 8, "header total_size %u is below 40",
                             (unsigned)h->total_size);
    if (h->flags & ~JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP)
        return JITANON__FAIL(err, JITANON_ERR_BAD_FLAGS, 32,
                             "unknown jitdump flag bits %X (only bit 0, ARCH_TIMESTAMP, is defined)",
                             h->flags & ~JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP);
    return JITANON_OK;
}

JITANON__PRIVATE uint32_t jitanon__jitdump_header_warnings(const jitanon_jitdump_header *h)
{
    uint32_t w = 0;
    if (h->version == 2) w |= JITANON_JITDUMP_WARN_VERSION2;
    if (h->total_size > JITANON__JITDUMP_HEADER_SIZE) w |= JITANON_JITDUMP_WARN_HEADER_EXTRA;
    return w;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_bad(jitanon_error *err, uint64_t off, const jitanon_jitdump_record *rec,
                                       const char *what)
{
    jitanon_result r = JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off, "%s record (total_size %u): %s",
                                     jitanon_jitdump_record_name(rec->id), (unsigned)rec->total_size, what);
    if (err) {
        err->record_index = rec->index;
        err->record_type = rec->id;
    }
    return r;
}

/* Checks that `nr` debug entries fit in the bytes of c, so that every later walk
   (jitanon_jitdump_debug_iter_next) is safe.  NULL when they do, else what is wrong, with
   *at its offset.  The reader checks what it reads, the writer what it is given. */
JITANON__PRIVATE const char *jitanon__jitdump_walk_debug(jitanon__cur *c, uint64_t nr, uint64_t *at)
{
    uint64_t i;
    *at = c->off - 8;
    /* Each entry takes at least 17 bytes: reject impossible counts before looping. */
    if (nr > c->left / (JITANON__JITDUMP_DEBUG_ENTRY_FIXED + 1)) return "nr_entry does not fit in the record";
    for (i = 0; i < nr; i++) {
        jitanon_str name;
        *at = c->off;
        jitanon__take(c, JITANON__JITDUMP_DEBUG_ENTRY_FIXED);
        if (c->left == 0 || !jitanon__take_cstr(c, &name)) return "debug entry file name runs past the record";
        *at = c->off;
        if (c->left < JITANON__JITDUMP_DEBUG_ENTRY_FIXED + 1 && i + 1 < nr) return "debug entries run past the record";
    }
    return NULL;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_check_debug(jitanon__cur *c, jitanon_jitdump_record *rec, jitanon_error *err)
{
    uint64_t at;
    const char *what;
    rec->debug.code_addr = jitanon__get64(c);
    rec->debug.nr_entry = jitanon__get64(c);
    rec->debug.entries.data = c->p;
    rec->debug.entries.size = c->left;
    what = jitanon__jitdump_walk_debug(c, rec->debug.nr_entry, &at);
    return what ? jitanon__jitdump_bad(err, at, rec, what) : JITANON_OK;
}

/* LOAD and MOVE both start with the writing thread and the code's vma. */
JITANON__PRIVATE void jitanon__jitdump_task(jitanon__cur *c, uint32_t *pid, uint32_t *tid, uint64_t *vma)
{
    *pid = jitanon__get32(c);
    *tid = jitanon__get32(c);
    *vma = jitanon__get64(c);
}

/* Parses one record whose prefix says `total_size` and whose bytes [p, p+total) are all
   present.  Every variable-length field is bounded by the record itself. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_parse_body(const uint8_t *p, uint64_t off, int big, jitanon_jitdump_record *rec,
                                              jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(p, rec->total_size, off, big);
    jitanon__take(&c, JITANON__JITDUMP_PREFIX_SIZE);
    switch (rec->id) {
    case JITANON_JITDUMP_CODE_LOAD:
        if (rec->total_size < JITANON__JITDUMP_LOAD_FIXED + 1)
            return jitanon__jitdump_bad(err, off, rec, "shorter than the 56-byte fixed part plus a name");
        jitanon__jitdump_task(&c, &rec->load.pid, &rec->load.tid, &rec->load.vma);
        rec->load.code_addr = jitanon__get64(&c);
        rec->load.code_size = jitanon__get64(&c);
        rec->load.code_index = jitanon__get64(&c);
        if (!jitanon__take_cstr(&c, &rec->load.name))
            return jitanon__jitdump_bad(err, off + JITANON__JITDUMP_LOAD_FIXED, rec, "function name is not NUL-terminated");
        /* The code follows the name (specification); trailing padding is tolerated. */
        if (rec->load.code_size > c.left)
            return jitanon__jitdump_bad(err, off + 40, rec, "code_size is larger than the record");
        rec->load.code.data = c.p;
        rec->load.code.size = (size_t)rec->load.code_size;
        break;
    case JITANON_JITDUMP_CODE_MOVE:
        if (rec->total_size < JITANON__JITDUMP_MOVE_SIZE)
            return jitanon__jitdump_bad(err, off, rec, "shorter than 64 bytes");
        jitanon__jitdump_task(&c, &rec->move.pid, &rec->move.tid, &rec->move.vma);
        rec->move.old_code_addr = jitanon__get64(&c);
        rec->move.new_code_addr = jitanon__get64(&c);
        rec->move.code_size = jitanon__get64(&c);
        rec->move.code_index = jitanon__get64(&c);
        break;
    case JITANON_JITDUMP_CODE_DEBUG_INFO:
        if (rec->total_size < JITANON__JITDUMP_DEBUG_FIXED)
            return jitanon__jitdump_bad(err, off, rec, "shorter than 32 bytes");
        return jitanon__jitdump_check_debug(&c, rec, err);
    case JITANON_JITDUMP_CODE_UNWINDING_INFO: {
        uint64_t eh_size;
        if (rec->total_size < JITANON__JITDUMP_UNWIND_FIXED)
            return jitanon__jitdump_bad(err, off, rec, "shorter than 40 bytes");
        rec->unwind.unwinding_size = jitanon__get64(&c);
        rec->unwind.eh_frame_hdr_size = jitanon__get64(&c);
        rec->unwind.mapped_size = jitanon__get64(&c);
        if (rec->unwind.unwinding_size > c.left)
            return jitanon__jitdump_bad(err, off + 16, rec, "unwinding_size is larger than the record");
        if (rec->unwind.eh_frame_hdr_size > rec->unwind.unwinding_size)
            return jitanon__jitdump_bad(err, off + 24, rec, "eh_frame_hdr_size is larger than unwinding_size");
        eh_size = rec->unwind.unwinding_size - rec->unwind.eh_frame_hdr_size;
        rec->unwind.eh_frame.data = c.p;
        rec->unwind.eh_frame.size = (size_t)eh_size;
        rec->unwind.eh_frame_hdr.data = c.p + eh_size;
        rec->unwind.eh_frame_hdr.size = (size_t)rec->unwind.eh_frame_hdr_size;
        break;
    }
    default: /* CLOSE has no payload; unknown ids are skipped by size */
        break;
    }
    return JITANON_OK;
}

/* Reads the record at p (avail bytes there).  JITANON_AGAIN with *missing set when the
   record is not complete yet. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_parse_record(const uint8_t *p, size_t avail, uint64_t off, int big,
                                                uint64_t max_record, uint64_t index, jitanon_jitdump_record *rec,
                                                uint64_t *missing, jitanon_error *err)
{
    memset(rec, 0, sizeof *rec);
    rec->offset = off;
    rec->index = index;
    rec->big_endian = big;
    if (avail < JITANON__JITDUMP_PREFIX_SIZE) {
        *missing = JITANON__JITDUMP_PREFIX_SIZE - avail;
        return JITANON_AGAIN;
    }
    rec->id = jitanon__rd32(p, big);
    rec->total_size = jitanon__rd32(p + 4, big);
    rec->timestamp = jitanon__rd64(p + 8, big);
    if (rec->total_size < JITANON__JITDUMP_PREFIX_SIZE)
        return jitanon__jitdump_bad(err, off + 4, rec, "total_size is below the 16-byte prefix");
    if (rec->total_size > max_record) {
        jitanon_result r = JITANON__FAIL(err, JITANON_ERR_LIMIT, off + 4,
                                         "record total_size %u exceeds the limit %U",
                                         (unsigned)rec->total_size, max_record);
        if (err) {
            err->record_index = index;
            err->record_type = rec->id;
        }
        return r;
    }
    if (rec->total_size > avail) {
        *missing = rec->total_size - avail;
        return JITANON_AGAIN;
    }
    rec->raw.data = p;
    rec->raw.size = rec->total_size;
    return jitanon__jitdump_parse_body(p, off, big, rec, err);
}

JITANON__PRIVATE void jitanon__jitdump_count(jitanon_jitdump_stats *st, const jitanon_jitdump_record *rec)
{
    if (rec->id < JITANON_JITDUMP_CODE_MAX) st->by_id[rec->id]++;
    else {
        st->unknown++;
        st->warnings |= JITANON_JITDUMP_WARN_UNKNOWN_RECORD;
    }
    if (rec->id == JITANON_JITDUMP_CODE_LOAD) st->code_bytes += rec->load.code_size;
    if (rec->index == 0 || rec->timestamp < st->first_time) st->first_time = rec->timestamp;
    if (rec->index == 0 || rec->timestamp > st->last_time) st->last_time = rec->timestamp;
}

/* Failures that end a dump's valid prefix: a record cut short, malformed, or larger than
   any record may be (so its size field is garbage). */
JITANON__PRIVATE int jitanon__jitdump_damage(jitanon_result r)
{
    return r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_RECORD || r == JITANON_ERR_LIMIT;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_truncated(jitanon_error *err, uint64_t off, uint64_t missing, uint64_t index)
{
    jitanon_result r = JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off,
                                     "record %U is cut short: %U byte(s) missing", index, missing);
    if (err) err->record_index = index;
    return r;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_iter_begin_impl(jitanon_jitdump_iter *it, const void *data,
                                                                 size_t size,
                                                     const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    jitanon_result r;
    JITANON_ASSERT(it);
    if ((r = jitanon__init_begin(it, sizeof *it, JITANON__OPTS_BAD(opts), "jitanon_jitdump_opts", err)) != JITANON_OK)
        return r;
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    it->data = (const uint8_t *)data;
    it->size = size;
    it->max_record_size = jitanon__jitdump_max_record(opts);
    r = jitanon__jitdump_parse_header(it->data, size, &it->header, err);
    if (r == JITANON_AGAIN)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, 0, "jitdump header needs 40 bytes, have %U",
                             (uint64_t)size);
    if (r != JITANON_OK) return r;
    if (it->header.total_size > size)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, size, "header total_size %u is beyond the end (%U bytes)",
                             (unsigned)it->header.total_size, (uint64_t)size);
    it->stats.warnings = jitanon__jitdump_header_warnings(&it->header);
    it->pos = it->header.total_size;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_iter_begin(jitanon_jitdump_iter *it, const void *data, size_t size,
                                                     const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_iter_begin_impl(it, data, size, opts, err), "jitdump");
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_iter_next_impl(jitanon_jitdump_iter *it, jitanon_jitdump_record *rec,
                                                                jitanon_error *err)
{
    jitanon_result r;
    uint64_t missing = 0;
    JITANON_ASSERT(it && rec);
    if (it->pos >= it->size) return JITANON_END;
    r = jitanon__jitdump_parse_record(it->data + it->pos, it->size - it->pos, it->pos, it->header.big_endian,
                                  it->max_record_size, it->next_index, rec, &missing, err);
    if (r == JITANON_AGAIN) {
        it->missing = missing;
        return jitanon__jitdump_truncated(err, it->pos, missing, it->next_index);
    }
    if (r != JITANON_OK) return r;
    it->pos += rec->total_size;
    it->next_index++;
    jitanon__jitdump_count(&it->stats, rec);
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_iter_next(jitanon_jitdump_iter *it, jitanon_jitdump_record *rec,
                                                     jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_iter_next_impl(it, rec, err), "jitdump");
}

JITANON_API void jitanon_jitdump_debug_iter_begin(jitanon_jitdump_debug_iter *it, const jitanon_jitdump_record *rec)
{
    memset(it, 0, sizeof *it);
    if (rec->id != JITANON_JITDUMP_CODE_DEBUG_INFO) return;
    it->p = rec->debug.entries.data;
    it->left = rec->debug.entries.size;
    it->remaining = rec->debug.nr_entry;
    it->big_endian = rec->big_endian;
}

JITANON_API int jitanon_jitdump_debug_iter_next(jitanon_jitdump_debug_iter *it, jitanon_jitdump_debug_entry *out)
{
    jitanon__cur c;
    jitanon_str name;
    if (it->remaining == 0) return 0;
    c = jitanon__cur_make(it->p, it->left, 0, it->big_endian);
    if (c.left < JITANON__JITDUMP_DEBUG_ENTRY_FIXED + 1) return 0; /* only if misused: validated earlier */
    out->addr = jitanon__get64(&c);
    out->lineno = (int32_t)jitanon__get32(&c);
    out->discrim = (int32_t)jitanon__get32(&c);
    if (!jitanon__take_cstr(&c, &name)) return 0;
    /* 0xFF 0x00 means "the same file as the previous entry" (jitdump.h). */
    if (name.length == 1 && (uint8_t)name.data[0] == 0xFF) {
        if (it->started) name = it->prev_file;
        else name.length = 0;
    }
    out->file = name;
    it->prev_file = name;
    it->started = 1;
    it->p = c.p;
    it->left = c.left;
    it->remaining--;
    return 1;
}

JITANON_API int jitanon_jitdump_debug_fits(const jitanon_jitdump_record *debug, const jitanon_jitdump_record *load)
{
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry e;
    if (debug->id != JITANON_JITDUMP_CODE_DEBUG_INFO || load->id != JITANON_JITDUMP_CODE_LOAD) return 0;
    if (debug->debug.code_addr == load->load.code_addr) return JITANON_JITDUMP_DEBUG_SAME_ADDR;
    jitanon_jitdump_debug_iter_begin(&it, debug);
    if (jitanon_jitdump_debug_iter_next(&it, &e) && e.addr >= load->load.code_addr &&
        e.addr - load->load.code_addr < load->load.code_size)
        return JITANON_JITDUMP_DEBUG_IN_CODE;
    return 0;
}

/* -- a loaded dump's functions (jitanon_jitdump_func_iter) -- */

JITANON_API void jitanon_jitdump_func_iter_begin(jitanon_jitdump_func_iter *it, const struct jitanon_jitdump *d,
                                                 const jitanon_allocator *allocator)
{
    JITANON_ASSERT(it && d);
    memset(it, 0, sizeof *it);
    it->dump_ = d;
    if (allocator) it->allocator_ = *allocator;
}

/* The waiting DEBUG_INFO that `load` takes: the newest with its code address, else the
   newest read since the last LOAD whose first line is in its code; SIZE_MAX: none. */
JITANON__PRIVATE size_t jitanon__jd_func_pick(const jitanon_jitdump_func_iter *it, const jitanon_jitdump_record *load)
{
    size_t i = it->nwait_;
    while (i-- > 0)
        if (jitanon_jitdump_debug_fits(it->wait_[i], load) == JITANON_JITDUMP_DEBUG_SAME_ADDR) return i;
    for (i = it->nwait_; i-- > 0 && it->recent_[i];)
        if (jitanon_jitdump_debug_fits(it->wait_[i], load)) return i;
    return SIZE_MAX;
}

JITANON__PRIVATE void jitanon__jd_func_unwait(jitanon_jitdump_func_iter *it, size_t i)
{
    memmove(it->wait_ + i, it->wait_ + i + 1, (it->nwait_ - i - 1) * sizeof *it->wait_);
    memmove(it->recent_ + i, it->recent_ + i + 1, it->nwait_ - i - 1);
    it->nwait_--;
}

JITANON__PRIVATE jitanon_result jitanon__jd_func_wait(jitanon_jitdump_func_iter *it, const jitanon_jitdump_record *r,
                                                     jitanon_error *err)
{
    if (it->nwait_ == JITANON_JITDUMP_DEBUG_WAITING) { /* never taken: the oldest goes */
        jitanon__jd_func_unwait(it, 0);
        it->debug_unmatched++;
    }
    if (!jitanon__grow(&it->allocator_, (void **)&it->wait_, &it->wait_cap_, it->nwait_ + 1, sizeof *it->wait_) ||
        !jitanon__grow(&it->allocator_, (void **)&it->recent_, &it->recent_cap_, it->nwait_ + 1, 1))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, r->offset, "cannot keep a DEBUG_INFO for its LOAD");
    it->wait_[it->nwait_] = r;
    it->recent_[it->nwait_++] = 1;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_func_iter_next(jitanon_jitdump_func_iter *it, jitanon_jitdump_func *out,
                                                          jitanon_error *err)
{
    const jitanon_jitdump *d;
    jitanon_result res;
    JITANON_ASSERT(it && it->dump_ && out);
    d = it->dump_;
    for (; it->next_ < d->record_count; it->next_++) {
        const jitanon_jitdump_record *r = &d->records[it->next_];
        size_t at, k;
        if (r->id == JITANON_JITDUMP_CODE_DEBUG_INFO && (res = jitanon__jd_func_wait(it, r, err)) != JITANON_OK) return res;
        if (r->id == JITANON_JITDUMP_CODE_UNWINDING_INFO) it->unwind_ = r;
        if (r->id != JITANON_JITDUMP_CODE_LOAD) continue;
        at = jitanon__jd_func_pick(it, r);
        for (k = 0; k < it->nwait_; k++) it->recent_[k] = 0;
        out->load = r;
        out->debug = at == SIZE_MAX ? NULL : it->wait_[at];
        out->unwind = it->unwind_;
        if (at != SIZE_MAX) jitanon__jd_func_unwait(it, at);
        it->unwind_ = NULL;
        it->next_++;
        return JITANON_OK;
    }
    it->debug_unmatched += it->nwait_;
    it->nwait_ = 0;
    return JITANON_END;
}

JITANON_API void jitanon_jitdump_func_iter_release(jitanon_jitdump_func_iter *it)
{
    if (!it) return;
    jitanon__free(&it->allocator_, (void *)it->wait_, it->wait_cap_ * sizeof *it->wait_);
    jitanon__free(&it->allocator_, it->recent_, it->recent_cap_);
    memset(it, 0, sizeof *it);
}

/* Streaming: read more only when a record is incomplete, so memory is bounded by the
   largest record (or 64 KiB: smaller reads cost a system call per few records).  Out of
   data is JITANON_AGAIN: the file may still be growing. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_fill(jitanon_jitdump_stream *s, size_t need, jitanon_error *err)
{
    jitanon_result r = jitanon__in_fill(&s->in_, &s->allocator, need, 65536, err);
    return r == JITANON_END ? JITANON_AGAIN : r;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_stream_init_impl(jitanon_jitdump_stream *s, jitanon_read_fn read_fn,
                                                                  void *user,
                                                                  const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    jitanon_result res;
    JITANON_ASSERT(s && read_fn);
    if ((res = jitanon__init_begin(s, sizeof *s, JITANON__OPTS_BAD(opts), "jitanon_jitdump_opts", err)) != JITANON_OK)
        return res;
    jitanon__in_init(&s->in_, read_fn, user);
    s->max_record_size = jitanon__jitdump_max_record(opts);
    if (opts) s->allocator = opts->allocator;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_stream_init(jitanon_jitdump_stream *s, jitanon_read_fn read_fn, void *user,
                                                       const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_stream_init_impl(s, read_fn, user, opts, err), "jitdump");
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_stream_header(jitanon_jitdump_stream *s, jitanon_error *err)
{
    jitanon_result r = jitanon__jitdump_fill(s, JITANON__JITDUMP_HEADER_SIZE, err);
    if (r == JITANON_AGAIN && jitanon__in_avail(&s->in_) >= 4) {
        /* Reject a wrong magic early rather than waiting for 40 bytes forever. */
        jitanon_jitdump_header h;
        jitanon_result m = jitanon__jitdump_parse_header(s->in_.buf + s->in_.pos, jitanon__in_avail(&s->in_), &h, err);
        if (m != JITANON_AGAIN && m != JITANON_OK) return m;
    }
    if (r != JITANON_OK) return r;
    r = jitanon__jitdump_parse_header(s->in_.buf + s->in_.pos, jitanon__in_avail(&s->in_), &s->header, err);
    if (r != JITANON_OK) return r;
    if (s->header.total_size > s->max_record_size)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 8, "header total_size %u exceeds the limit",
                             (unsigned)s->header.total_size);
    r = jitanon__jitdump_fill(s, s->header.total_size, err);
    if (r != JITANON_OK) return r;
    jitanon__in_consume(&s->in_, s->header.total_size);
    s->stats.warnings = jitanon__jitdump_header_warnings(&s->header);
    s->have_header = 1;
    return JITANON_OK;
}

/* Parses the record at the start of the unread bytes, reading more while it is incomplete. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_stream_next_impl(jitanon_jitdump_stream *s,
                                                                  jitanon_jitdump_record *rec,
                                                                  jitanon_error *err)
{
    uint64_t missing = 0;
    jitanon_result r = JITANON_OK;
    JITANON_ASSERT(s && rec);
    if (!s->have_header) r = jitanon__jitdump_stream_header(s, err);
    while (r == JITANON_OK &&
           (r = jitanon__jitdump_parse_record(s->in_.buf + s->in_.pos, jitanon__in_avail(&s->in_), s->in_.off,
                                          s->header.big_endian, s->max_record_size, s->next_index, rec, &missing,
                                          err)) == JITANON_AGAIN)
        r = jitanon__jitdump_fill(s, (size_t)(jitanon__in_avail(&s->in_) + missing), err);
    if (r == JITANON_OK) {
        jitanon__in_consume(&s->in_, rec->total_size);
        s->next_index++;
        jitanon__jitdump_count(&s->stats, rec);
    }
    s->consumed = s->in_.off;
    s->pending = s->in_.len - s->in_.pos;
    return r;
}

JITANON_API jitanon_result jitanon_jitdump_stream_next(jitanon_jitdump_stream *s, jitanon_jitdump_record *rec,
                                                       jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_stream_next_impl(s, rec, err), "jitdump");
}

JITANON_API void jitanon_jitdump_stream_release(jitanon_jitdump_stream *s)
{
    if (!s) return;
    jitanon__in_free(&s->in_, &s->allocator);
    s->pending = 0;
}

/* Takes ownership of `data` (`cap` bytes, allocated through `c`: the counting allocator
   of opts.memory_limit, which counts everything the loader holds).  Errors go to a local
   first: a truncated tail is kept in the dump even when err is NULL. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_load_owned(uint8_t *data, size_t size, size_t cap, jitanon__counted *c,
                                                            const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                                                            jitanon_error *err)
{
    jitanon_error e;
    jitanon_allocator a = jitanon__counted_hooks(c);
    jitanon_jitdump *d;
    jitanon_jitdump_iter it;
    jitanon_jitdump_record rec;
    jitanon_result r;
    int header_ok, ours = 0;
    d = (jitanon_jitdump *)jitanon__malloc(&a, sizeof *d);
    if (!d) {
        jitanon__free(&a, data, cap);
        return jitanon__counted_fail(c, err, 0, "the dump");
    }
    memset(d, 0, sizeof *d);
    d->allocator = c->base; /* the same blocks: the counting wrapper only passes them on */
    d->data = data;
    d->size = size;
    d->alloc_size_ = cap;
    r = jitanon_jitdump_iter_begin(&it, data, size, opts, &e);
    header_ok = r == JITANON_OK;
    while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, &e)) == JITANON_OK) {
        if (opts && opts->no_records_) continue;
        if (!jitanon__grow(&a, (void **)&d->records, &d->records_cap_, d->record_count + 1, sizeof rec)) {
            char what[64];
            jitanon__fmt(what, sizeof what, "the record table, after %U records", (uint64_t)d->record_count);
            r = jitanon__counted_fail(c, &e, rec.offset, what);
            ours = 1;
            break;
        }
        d->records[d->record_count++] = rec;
    }
    d->header = it.header;
    d->stats = it.stats;
    d->valid_size = header_ok ? it.pos : 0;
    /* A cut or damage after a complete header is what a crashed or still-running JIT
       leaves: keep every record before it and say where the tail broke off (the record
       at it.pos, not a limit of ours). */
    if (header_ok && !ours && jitanon__jitdump_damage(r) && !(opts && opts->strict)) {
        d->tail_error = e;
        d->tail_error.record_index = it.next_index;
        r = JITANON_END;
    }
    if (r != JITANON_END) {
        if (err) *err = e;
        jitanon_jitdump_destroy(d);
        return r;
    }
    *out = d;
    return JITANON_OK;
}

JITANON_API void jitanon_jitdump_destroy(jitanon_jitdump *d)
{
    jitanon_allocator a;
    if (!d) return;
    a = d->allocator;
    jitanon__free(&a, d->records, d->records_cap_ * sizeof *d->records);
    jitanon__free(&a, d->data, d->alloc_size_);
    jitanon__free(&a, d, sizeof *d);
}

/* What both loaders check first.  *out is NULL until a dump is complete. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_load_begin(const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                                                            jitanon_error *err)
{
    JITANON_ASSERT(out);
    *out = NULL;
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_jitdump_opts not zero-initialised");
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__jitdump_load_memory_impl(const void *data, size_t size,
                                                                  const jitanon_jitdump_opts *opts,
                                                                  jitanon_jitdump **out, jitanon_error *err)
{
    uint8_t *copy;
    jitanon__counted c;
    jitanon_allocator a;
    jitanon_result r = jitanon__jitdump_load_begin(opts, out, err);
    if (r != JITANON_OK) return r;
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    jitanon__counted_init(&c, opts ? &opts->allocator : NULL, opts ? opts->memory_limit : 0, "memory_limit");
    a = jitanon__counted_hooks(&c);
    copy = (uint8_t *)jitanon__malloc(&a, size);
    if (!copy) {
        char what[64];
        jitanon__fmt(what, sizeof what, "a copy of the dump's %U bytes", (uint64_t)size);
        return jitanon__counted_fail(&c, err, 0, what);
    }
    if (size) memcpy(copy, data, size);
    return jitanon__jitdump_load_owned(copy, size, size ? size : 1, &c, opts, out, err);
}

JITANON_API jitanon_result jitanon_jitdump_load_memory(const void *data, size_t size, const jitanon_jitdump_opts *opts,
                                                       jitanon_jitdump **out, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_load_memory_impl(data, size, opts, out, err), "jitdump");
}

/* Reads a whole stream (a file, a FIFO or stdin) into memory allocated through `c`,
   whose limit the buffer never passes: at the limit one more byte is asked for, and the
   stream fits only when there is none. */
JITANON__PRIVATE jitanon_result jitanon__slurp(jitanon_read_fn read_fn, void *user, jitanon__counted *c,
                                               uint8_t **out, size_t *size, size_t *cap, jitanon_error *err)
{
    jitanon_allocator a = jitanon__counted_hooks(c);
    uint8_t *buf = NULL;
    size_t len = 0, bcap = 0, got = 0;
    for (;;) {
        if (len == bcap) {
            size_t ncap = !bcap ? 65536 : bcap > SIZE_MAX / 2 ? SIZE_MAX : 2 * bcap;
            size_t room = jitanon__counted_left(c, bcap);
            uint8_t probe, *n;
            if (ncap > room) ncap = room;
            if (ncap <= len && (got = read_fn(user, &probe, 1)) != SIZE_MAX) {
                if (got == 0) break;
                c->hit = 1;
            }
            n = ncap > len ? (uint8_t *)jitanon__realloc(&a, buf, bcap, ncap) : NULL;
            if (!n) {
                jitanon__free(&a, buf, bcap);
                if (ncap <= len && got == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_IO, len, "read error");
                return jitanon__counted_fail(c, err, len, "reading the file");
            }
            buf = n;
            bcap = ncap;
        }
        got = read_fn(user, buf + len, bcap - len);
        if (got == SIZE_MAX) {
            jitanon__free(&a, buf, bcap);
            return JITANON__FAIL(err, JITANON_ERR_IO, len, "read error");
        }
        len += got;
        if (got == 0) break;
    }
    *out = buf;
    *size = len;
    *cap = bcap;
    return JITANON_OK;
}

/* Loads the dump a read callback gives, read whole. */
JITANON__PRIVATE jitanon_result jitanon__jitdump_load_read(jitanon_read_fn read_fn, void *user,
                                                           const jitanon_jitdump_opts *opts, jitanon_jitdump **out,
                                                           jitanon_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    jitanon__counted c;
    jitanon_result r = jitanon__jitdump_load_begin(opts, out, err);
    if (r != JITANON_OK) return r;
    jitanon__counted_init(&c, opts ? &opts->allocator : NULL, opts ? opts->memory_limit : 0, "memory_limit");
    r = jitanon__slurp(read_fn, user, &c, &buf, &len, &cap, err);
    if (r != JITANON_OK) return r;
    return jitanon__jitdump_load_owned(buf, len, cap, &c, opts, out, err);
}

#ifndef JITANON_NO_STDIO
JITANON__PRIVATE jitanon_result jitanon__jitdump_load_file_impl(const char *path, const jitanon_jitdump_opts *opts,
                                                                jitanon_jitdump **out, jitanon_error *err)
{
    FILE *f;
    jitanon_result r = jitanon__jitdump_load_begin(opts, out, err);
    if (r != JITANON_OK) return r;
    f = fopen(path, "rb");
    if (!f) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open %s: %s", path, strerror(errno));
    r = jitanon__jitdump_load_read(jitanon__os_file_read, f, opts, out, err);
    fclose(f);
    return r;
}

JITANON_API jitanon_result jitanon_jitdump_load_file(const char *path, const jitanon_jitdump_opts *opts,
                                                     jitanon_jitdump **out, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__jitdump_load_file_impl(path, opts, out, err), "jitdump");
}
#endif

/* -- [jitdump-write] jitdump writer -------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__sink_put(jitanon_sink sink, const void *data, size_t size, uint64_t *counter,
                                                  jitanon_error *err)
{
    if (sink.write_fn(sink.user, data, size))
        return JITANON__FAIL(err, JITANON_ERR_WRITE, counter ? *counter : 0, "sink refused %U bytes", (uint64_t)size);
    if (counter) *counter += size;
    return JITANON_OK;
}

/* Records are assembled in a small stack buffer that spills to the sink only when they
   are larger, so typical records cost one sink call. */
typedef struct jitanon__jw {
    jitanon_jitdump_writer *w;
    jitanon_membuf buf; /* over mem, spilling through jitanon__jw_spill */
    uint8_t mem[512];
    jitanon_result r;
    jitanon_error *err;
} jitanon__jw;

/* The first sink failure is kept in j->r; nothing is written after it. */
JITANON__PRIVATE int jitanon__jw_spill(void *user, const void *data, size_t n)
{
    jitanon__jw *j = (jitanon__jw *)user;
    if (j->r == JITANON_OK) j->r = jitanon__sink_put(j->w->sink, data, n, &j->w->bytes_written, j->err);
    return j->r != JITANON_OK;
}

JITANON__PRIVATE void jitanon__jw_start(jitanon__jw *j, jitanon_jitdump_writer *w, jitanon_error *err)
{
    j->w = w;
    memset(&j->buf, 0, sizeof j->buf);
    j->buf.data = j->mem;
    j->buf.capacity = sizeof j->mem;
    j->buf.spill_.write_fn = jitanon__jw_spill;
    j->buf.spill_.user = j;
    j->r = JITANON_OK;
    j->err = err;
    jitanon__clear_error(err);
}

JITANON__PRIVATE jitanon_result jitanon__jw_begin(jitanon__jw *j, jitanon_jitdump_writer *w, uint32_t id, uint64_t size,
                                                  uint64_t timestamp, jitanon_error *err)
{
    jitanon__jw_start(j, w, err);
    if (size > UINT32_MAX)
        return j->r = JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "record of %U bytes is too large", size);
    jitanon__buf_u32(&j->buf, id, w->big_endian);
    jitanon__buf_u32(&j->buf, size, w->big_endian);
    jitanon__buf_u64(&j->buf, timestamp, w->big_endian);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__jw_end(jitanon__jw *j)
{
    jitanon__buf_flush(&j->buf);
    return j->r;
}

JITANON_API uint32_t jitanon_jitdump_host_machine(void)
{
#if defined(__x86_64__) || defined(_M_X64)
    return 62u;
#elif defined(__aarch64__) || defined(_M_ARM64)
    return 183u;
#elif defined(__i386__) || defined(_M_IX86)
    return 3u;
#elif defined(__arm__) || defined(_M_ARM)
    return 40u;
#elif defined(__powerpc64__)
    return 21u;
#elif defined(__powerpc__)
    return 20u;
#elif defined(__s390__)
    return 22u;
#elif defined(__riscv)
    return 243u;
#elif defined(__loongarch64)
    return 258u;
#else
    return 0;
#endif
}

JITANON_API jitanon_result jitanon_jitdump_writer_init(jitanon_jitdump_writer *w, jitanon_sink sink,
                                                       const jitanon_jitdump_header *h, jitanon_error *err)
{
    jitanon__jw j;
    int big;
    JITANON_ASSERT(w && h);
    big = h->big_endian != 0;
    memset(w, 0, sizeof *w);
    w->sink = sink;
    w->big_endian = big;
    jitanon__jw_start(&j, w, err);
    jitanon__buf_u32(&j.buf, JITANON_JITDUMP_MAGIC, big);
    jitanon__buf_u32(&j.buf, 1, big);
    jitanon__buf_u32(&j.buf, JITANON__JITDUMP_HEADER_SIZE, big);
    jitanon__buf_u32(&j.buf, h->elf_mach, big);
    jitanon__buf_u32(&j.buf, h->pad1, big);
    jitanon__buf_u32(&j.buf, h->pid, big);
    jitanon__buf_u64(&j.buf, h->timestamp, big);
    jitanon__buf_u64(&j.buf, h->flags | (h->arch_timestamp ? JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP : 0), big);
    return jitanon__jw_end(&j);
}

JITANON__PRIVATE jitanon_result jitanon__jw_invalid(jitanon_jitdump_writer *w, const jitanon_jitdump_record *rec,
                                                    const char *what, jitanon_error *err)
{
    return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "cannot write %s record: %s",
                         jitanon_jitdump_record_name(rec->id), what);
}

/* Sets *size to the size of rec once written (LOAD, MOVE, UNWINDING_INFO or CLOSE;
   UINT64_MAX when it overflows, which jitanon__jw_begin refuses), *pad to the zero bytes
   at its end.  NULL when the record is consistent, else what is wrong with it. */
JITANON__PRIVATE const char *jitanon__jw_size(const jitanon_jitdump_record *rec, uint64_t *size, uint64_t *pad)
{
    static const uint64_t fixed[JITANON_JITDUMP_CODE_MAX] = {
        JITANON__JITDUMP_LOAD_FIXED, JITANON__JITDUMP_MOVE_SIZE, 0, JITANON__JITDUMP_PREFIX_SIZE,
        JITANON__JITDUMP_UNWIND_FIXED};
    *size = fixed[rec->id];
    if (rec->id == JITANON_JITDUMP_CODE_LOAD) {
        if (rec->load.code.size != rec->load.code_size) return "load.code_size is not load.code.size";
        if (rec->load.name.length && memchr(rec->load.name.data, 0, rec->load.name.length))
            return "load.name holds a NUL";
        if (!jitanon__add_u64(*size, (uint64_t)rec->load.name.length + 1, size) ||
            !jitanon__add_u64(*size, rec->load.code_size, size))
            *size = UINT64_MAX;
    } else if (rec->id == JITANON_JITDUMP_CODE_UNWINDING_INFO) {
        if (rec->unwind.eh_frame_hdr.size != rec->unwind.eh_frame_hdr_size ||
            rec->unwind.unwinding_size < rec->unwind.eh_frame_hdr_size ||
            rec->unwind.eh_frame.size != rec->unwind.unwinding_size - rec->unwind.eh_frame_hdr_size)
            return "unwind sizes do not match eh_frame and eh_frame_hdr";
        if (!jitanon__add_u64(*size, rec->unwind.unwinding_size, size)) *size = UINT64_MAX;
    }
    /* A JIT may pad a record to 8 bytes (V8 does UNWINDING_INFO): a total_size that says
       so keeps it, any other is ignored, so a stale one cannot blow a record up. */
    *pad = 0;
    if (*size < UINT32_MAX && rec->total_size > *size && rec->total_size == ((*size + 7) & ~(uint64_t)7)) {
        *pad = rec->total_size - *size;
        *size = rec->total_size;
    }
    return NULL;
}

/* A DEBUG_INFO record as read: its entries are copied verbatim, once checked as the
   reader checks them, so what we write reads back. */
JITANON__PRIVATE jitanon_result jitanon__jw_debug(jitanon_jitdump_writer *w, const jitanon_jitdump_record *rec,
                                                  jitanon_error *err)
{
    jitanon__jw j;
    uint64_t at, size = rec->debug.entries.size > UINT32_MAX
                            ? UINT64_MAX
                            : JITANON__JITDUMP_DEBUG_FIXED + (uint64_t)rec->debug.entries.size;
    jitanon__cur c = jitanon__cur_make(rec->debug.entries.data, rec->debug.entries.size, 0, rec->big_endian);
    const char *why = (rec->big_endian != 0) != (w->big_endian != 0)
                          ? "its byte order is not the dump's"
                          : jitanon__jitdump_walk_debug(&c, rec->debug.nr_entry, &at);
    if (why) return jitanon__jw_invalid(w, rec, why, err);
    if (jitanon__jw_begin(&j, w, rec->id, size, rec->timestamp, err) != JITANON_OK) return j.r;
    jitanon__buf_u64(&j.buf, rec->debug.code_addr, w->big_endian);
    jitanon__buf_u64(&j.buf, rec->debug.nr_entry, w->big_endian);
    jitanon__buf_bytes(&j.buf, rec->debug.entries.data, rec->debug.entries.size);
    return jitanon__jw_end(&j);
}

/* LOAD and MOVE both start with the writing thread, then the code's vma and more u64s. */
JITANON__PRIVATE void jitanon__jw_task(jitanon_membuf *b, uint32_t pid, uint32_t tid, const uint64_t *v, size_t n, int big)
{
    size_t i;
    jitanon__buf_u32(b, pid, big);
    jitanon__buf_u32(b, tid, big);
    for (i = 0; i < n; i++) jitanon__buf_u64(b, v[i], big);
}

JITANON_API jitanon_result jitanon_jitdump_write(jitanon_jitdump_writer *w, const jitanon_jitdump_record *rec,
                                                 jitanon_error *err)
{
    jitanon__jw j;
    static const uint8_t zeros[8] = {0};
    uint64_t size = 0, pad = 0;
    const char *why = "its id is not one a writer writes";
    int big;
    JITANON_ASSERT(w && rec);
    big = w->big_endian;
    jitanon__clear_error(err);
    if (rec->id == JITANON_JITDUMP_CODE_DEBUG_INFO) return jitanon__jw_debug(w, rec, err);
    if (rec->id >= JITANON_JITDUMP_CODE_MAX || (why = jitanon__jw_size(rec, &size, &pad)) != NULL)
        return jitanon__jw_invalid(w, rec, why, err);
    if (jitanon__jw_begin(&j, w, rec->id, size, rec->timestamp, err) != JITANON_OK) return j.r;
    switch (rec->id) {
    case JITANON_JITDUMP_CODE_LOAD: {
        const uint64_t v[4] = {rec->load.vma, rec->load.code_addr, rec->load.code_size, rec->load.code_index};
        const uint8_t nul = 0;
        jitanon__jw_task(&j.buf, rec->load.pid, rec->load.tid, v, 4, big);
        jitanon__buf_bytes(&j.buf, rec->load.name.data, rec->load.name.length);
        jitanon__buf_bytes(&j.buf, &nul, 1);
        jitanon__buf_bytes(&j.buf, rec->load.code.data, rec->load.code.size);
        break;
    }
    case JITANON_JITDUMP_CODE_MOVE: {
        const uint64_t v[5] = {rec->move.vma, rec->move.old_code_addr, rec->move.new_code_addr, rec->move.code_size,
                               rec->move.code_index};
        jitanon__jw_task(&j.buf, rec->move.pid, rec->move.tid, v, 5, big);
        break;
    }
    case JITANON_JITDUMP_CODE_UNWINDING_INFO:
        jitanon__buf_u64(&j.buf, rec->unwind.unwinding_size, big);
        jitanon__buf_u64(&j.buf, rec->unwind.eh_frame_hdr_size, big);
        jitanon__buf_u64(&j.buf, rec->unwind.mapped_size, big);
        jitanon__buf_bytes(&j.buf, rec->unwind.eh_frame.data, rec->unwind.eh_frame.size);
        jitanon__buf_bytes(&j.buf, rec->unwind.eh_frame_hdr.data, rec->unwind.eh_frame_hdr.size);
        break;
    default: /* CLOSE: the prefix only */
        break;
    }
    jitanon__buf_bytes(&j.buf, zeros, (size_t)pad);
    return jitanon__jw_end(&j);
}

JITANON__PRIVATE int jitanon__same_str(jitanon_str a, jitanon_str b)
{
    return a.length == b.length && (a.length == 0 || memcmp(a.data, b.data, a.length) == 0);
}

JITANON_API jitanon_result jitanon_jitdump_write_debug_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                           uint64_t code_addr, const jitanon_jitdump_debug_entry *entries,
                                                           size_t count, jitanon_error *err)
{
    jitanon__jw j;
    uint64_t size = JITANON__JITDUMP_DEBUG_FIXED;
    size_t i;
    static const uint8_t same_file[2] = {0xFF, 0x00};
    for (i = 0; i < count; i++) {
        int same = i > 0 && jitanon__same_str(entries[i].file, entries[i - 1].file);
        if (!jitanon__add_u64(size, JITANON__JITDUMP_DEBUG_ENTRY_FIXED + (same ? 2 : entries[i].file.length + 1), &size))
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "debug info too large");
    }
    if (jitanon__jw_begin(&j, w, JITANON_JITDUMP_CODE_DEBUG_INFO, size, timestamp, err) != JITANON_OK) return j.r;
    jitanon__buf_u64(&j.buf, code_addr, w->big_endian);
    jitanon__buf_u64(&j.buf, count, w->big_endian);
    for (i = 0; i < count; i++) {
        const uint8_t nul = 0;
        jitanon__buf_u64(&j.buf, entries[i].addr, w->big_endian);
        jitanon__buf_u32(&j.buf, (uint32_t)entries[i].lineno, w->big_endian);
        jitanon__buf_u32(&j.buf, (uint32_t)entries[i].discrim, w->big_endian);
        if (i > 0 && jitanon__same_str(entries[i].file, entries[i - 1].file)) {
            jitanon__buf_bytes(&j.buf, same_file, 2);
        } else {
            jitanon__buf_bytes(&j.buf, entries[i].file.data, entries[i].file.length);
            jitanon__buf_bytes(&j.buf, &nul, 1);
        }
    }
    return jitanon__jw_end(&j);
}

/* -- [perfmap] perf map reader ------------------------------------------------------------
   Lines are cut with the cursor and kept in the tree perf keeps of them; the address
   space, cut at every line's START and end, is named piece by piece as perf's lookup
   answers, then copied out in address order.  Everything goes through a
   counting allocator ([alloc]) so memory_limit bounds what a hostile map can make us hold. */

/* A hex number of 1..16 digits after an optional 0x; 0 when there is none (or it is
   longer: a value past 2^64). */
JITANON__PRIVATE int jitanon__pm_hex(jitanon__cur *c, uint64_t *v)
{
    unsigned digits = 0;
    *v = 0;
    if (c->left >= 3 && c->p[0] == '0' && (c->p[1] == 'x' || c->p[1] == 'X')) jitanon__take(c, 2);
    while (c->left) {
        unsigned ch = c->p[0], d;
        if (ch >= '0' && ch <= '9') d = ch - '0';
        else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') d = (ch | 0x20) - 'a' + 10;
        else break;
        if (++digits > 16) return 0;
        *v = (*v << 4) | d;
        jitanon__take(c, 1);
    }
    return digits > 0;
}

JITANON__PRIVATE int jitanon__pm_blanks(jitanon__cur *c)
{
    int n = 0;
    while (c->left && (c->p[0] == ' ' || c->p[0] == '\t')) jitanon__take(c, 1), n++;
    return n;
}

/* One line without its newline: NULL and the entry when it is START SIZE NAME, else the
   counter of stats.skipped its reason adds to. */
JITANON__PRIVATE uint64_t *jitanon__pm_line(jitanon__cur c, jitanon_perfmap_stats *st, uint64_t *start, uint64_t *size,
                                            jitanon_str *name)
{
    uint64_t last;
    if (c.left && c.p[c.left - 1] == '\r') c.left--;
    if (!jitanon__pm_hex(&c, start) || !jitanon__pm_blanks(&c) || !jitanon__pm_hex(&c, size))
        return &st->skipped.form;
    if (!jitanon__pm_blanks(&c)) return c.left ? &st->skipped.form : &st->skipped.no_name;
    if (!c.left) return &st->skipped.no_name;
    if (memchr(c.p, 0, c.left)) return &st->skipped.nul;
    if (*size == 0) *size = 1;
    if (!jitanon__add_u64(*start, *size - 1, &last)) return &st->skipped.range;
    name->data = (const char *)c.p;
    name->length = c.left;
    return NULL;
}

/* Why a map's lines were skipped, for a message: "N not START SIZE NAME, ..." (buf: 256
   bytes, enough for all four at 20 digits each). */
JITANON__PRIVATE const char *jitanon__pm_reasons(char *buf, const jitanon_perfmap_stats *st)
{
    const uint64_t n[4] = {st->skipped.form, st->skipped.no_name, st->skipped.nul, st->skipped.range};
    static const char *const what[4] = {"not START SIZE NAME (the rest of a name holding a newline looks so)",
                                        "without a name", "with a NUL in the name", "past 2^64"};
    size_t k, len = 0;
    buf[0] = 0;
    for (k = 0; k < 4; k++)
        if (n[k] && len < 256) len += jitanon__fmt(buf + len, 256 - len, "%s%U %s", len ? ", " : "", n[k], what[k]);
    return buf;
}

/* One line, a node of the tree perf 6.1 keeps of a map (measured, and read from its
   source): every line goes into a red-black tree keyed by START, an equal START to the
   right (after the lines already there); a lookup walks down from the root, left when
   the address is below a node's START, right when it is past its end, and takes the
   first node that holds it.  Which line answers an address held by several is so the
   tree's shape: the first listed of two at one START, the middle one of three (the
   rotation lifts it), and the walk can miss a line that holds the address (it went right
   past a shorter one): then perf names nothing there.  The map is resolved to what that
   walk answers, so the stub, our symbolizer and every ELF reader name what perf names
   with the map itself. */
#define JITANON__PM_NIL SIZE_MAX
typedef struct jitanon__pm_line_ref {
    uint64_t start, last;      /* last inclusive: a map may end its code at 2^64 - 1 */
    uint64_t named;            /* bytes the walk answers with this line */
    size_t name_off, name_len; /* in the input */
    size_t copied;             /* offset in the names copy + 1; 0 = not copied yet */
} jitanon__pm_line_ref;

/* The line perf's lookup answers addr with, or JITANON__PM_NIL (the tree's node i is
   line i: jitanon__rb, the lines inserted in the map's order). */
JITANON__PRIVATE size_t jitanon__pm_find(const jitanon__pm_line_ref *t, const jitanon__rb *rb, uint64_t addr)
{
    uint32_t at = rb->root;
    while (at != JITANON__RB_NIL && !(addr >= t[at].start && addr <= t[at].last))
        at = addr >= t[at].start ? rb->r[at] : rb->l[at];
    return at == JITANON__RB_NIL ? JITANON__PM_NIL : at;
}

JITANON__PRIVATE int jitanon__pm_u64_less(const void *ctx, uint32_t a, uint32_t b)
{
    const uint64_t *v = (const uint64_t *)ctx;
    return v[a] < v[b];
}

/* Cuts the address space at every START and end (`cuts`, sorted): between two cuts
   every comparison of the walk comes out the same, so one lookup answers the whole
   piece.  Adjacent pieces of one line merge.  With out NULL it counts the entries,
   each line's bytes and the names' room; then it fills out. */
JITANON__PRIVATE size_t jitanon__pm_resolve(jitanon__pm_line_ref *t, const jitanon__rb *rb, const uint64_t *cuts, size_t ncuts,
                                           jitanon_perfmap_entry *out, const char *names, size_t *names_total)
{
    size_t k = 0, n = 0, prev = JITANON__PM_NIL;
    while (k < ncuts) {
        uint64_t lo = cuts[k], len;
        size_t at = jitanon__pm_find(t, rb, lo);
        while (++k < ncuts && cuts[k] == lo) {}
        /* past the last cut only a line that ends at 2^64 - 1 (never at START 0) holds lo */
        len = k < ncuts ? cuts[k] - lo : UINT64_MAX - lo + 1;
        if (at != JITANON__PM_NIL && !out) {
            t[at].named += len;
            if (!t[at].copied) {
                t[at].copied = *names_total + 1;
                *names_total += t[at].name_len;
            }
        }
        if (at != JITANON__PM_NIL && at == prev) {
            if (out) out[n - 1].size += len;
        } else if (at != JITANON__PM_NIL) {
            if (out) {
                out[n].start = lo;
                out[n].size = len;
                out[n].name.data = names + t[at].copied - 1;
                out[n].name.length = t[at].name_len;
            }
            n++;
        }
        prev = at;
    }
    return n;
}

/* Resolves the lines as perf's tree answers them and copies the entries out, each
   line's name once: one block holds the entries and, after them, the names. */
JITANON__PRIVATE jitanon_result jitanon__pm_collect(jitanon_perfmap *m, jitanon__counted *l,
                                                    const jitanon_allocator *ca, jitanon__pm_line_ref *t, size_t nt,
                                                    const uint8_t *data, jitanon_error *err)
{
    uint64_t *cuts;
    size_t ncuts = 0, bytes, n, total = 0, i;
    char *names;
    jitanon__rb *rb;
    jitanon_result res = JITANON_OK;
    if (!nt) return JITANON_OK;
    /* perf's tree of the lines, inserted in the map's order */
    if (!(rb = jitanon__rb_alloc(ca, nt))) return jitanon__counted_fail(l, err, 0, "the map's tree");
    for (i = 0; i < nt; i++) rb->key[i] = t[i].start, rb->ent[i] = (uint32_t)i, jitanon__rb_insert(rb, (uint32_t)i);
    if (!jitanon__mul_size(nt, 2 * sizeof *cuts, &bytes) || !(cuts = (uint64_t *)jitanon__malloc(ca, bytes))) {
        jitanon__rb_free(ca, rb);
        return jitanon__counted_fail(l, err, 0, "the map's boundaries");
    }
    for (i = 0; i < nt; i++) {
        cuts[ncuts++] = t[i].start;
        if (t[i].last != UINT64_MAX) cuts[ncuts++] = t[i].last + 1;
    }
    if (!jitanon__sort(ca, cuts, ncuts, sizeof *cuts, jitanon__pm_u64_less)) {
        res = jitanon__counted_fail(l, err, 0, "the map's boundaries");
    } else if ((n = jitanon__pm_resolve(t, rb, cuts, ncuts, NULL, NULL, &total)) != 0) {
        if (!jitanon__mul_size(n, sizeof *m->entries, &i) || i > SIZE_MAX - total ||
            !(m->entries = (jitanon_perfmap_entry *)jitanon__malloc(ca, i + total))) {
            res = jitanon__counted_fail(l, err, 0, "entries");
        } else {
            m->block_size_ = i + total;
            names = (char *)m->entries + i;
            for (i = 0; i < nt; i++) {
                if (t[i].copied) memcpy(names + t[i].copied - 1, data + t[i].name_off, t[i].name_len);
                /* a line named nowhere or not everywhere: another answers some of it, or none */
                if (t[i].named <= t[i].last - t[i].start) m->stats.overlapping++;
            }
            m->count = jitanon__pm_resolve(t, rb, cuts, ncuts, m->entries, names, &total);
        }
    }
    jitanon__free(ca, cuts, bytes);
    jitanon__rb_free(ca, rb);
    return res;
}

JITANON_API void jitanon_perfmap_destroy(jitanon_perfmap *m)
{
    if (m) {
        jitanon_allocator a = m->allocator_; /* m itself goes last */
        jitanon__free(&a, m->entries, m->block_size_);
        jitanon__free(&a, m, sizeof *m);
    }
}

JITANON__PRIVATE jitanon_result jitanon__perfmap_load_memory_impl(const void *data, size_t size,
                                                                  const jitanon_perfmap_opts *opts,
                                                                  jitanon_perfmap **out, jitanon_error *err)
{
    jitanon__counted l;
    jitanon_allocator ca;
    jitanon_perfmap *m;
    jitanon__pm_line_ref *refs = NULL;
    size_t nrefs = 0, refs_cap = 0;
    jitanon__cur c = jitanon__cur_make(data, size, 0, 0);
    jitanon_result res = JITANON_OK;
    JITANON_ASSERT(out);
    *out = NULL;
    jitanon__clear_error(err);
    if (JITANON__OPTS_BAD(opts)) return jitanon__opts_fail(err, "jitanon_perfmap_opts");
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    jitanon__counted_init(&l, opts ? &opts->allocator : NULL, opts ? opts->memory_limit : 0, "memory_limit");
    ca = jitanon__counted_hooks(&l);
    if (!(m = (jitanon_perfmap *)jitanon__malloc(&ca, sizeof *m))) return jitanon__counted_fail(&l, err, 0, "the map");
    memset(m, 0, sizeof *m);
    m->allocator_ = opts ? opts->allocator : m->allocator_;
    m->stats.first_bad = UINT64_MAX;
    while (c.left && res == JITANON_OK) {
        const uint8_t *nl = (const uint8_t *)memchr(c.p, '\n', c.left);
        uint64_t at = c.off, start = 0, len = 0;
        size_t n = nl ? (size_t)(nl - c.p) : c.left;
        jitanon__cur line = jitanon__cur_make(c.p, n, at, 0);
        jitanon_str name;
        uint64_t *why;
        jitanon__take(&c, nl ? n + 1 : n);
        m->stats.lines++;
        if (!nl) { /* the writer died inside this line: its size or name may be cut */
            m->stats.cut = 1;
            break;
        }
        if ((why = jitanon__pm_line(line, &m->stats, &start, &len, &name)) != NULL) {
            ++*why;
            if (!m->stats.bad_lines++) m->stats.first_bad = at;
            continue;
        }
        if (!jitanon__grow(&ca, (void **)&refs, &refs_cap, nrefs + 1, sizeof *refs)) {
            res = jitanon__counted_fail(&l, err, at, "lines");
            break;
        }
        memset(&refs[nrefs], 0, sizeof refs[nrefs]);
        refs[nrefs].start = start;
        refs[nrefs].last = start + (len - 1); /* no overflow: jitanon__pm_line checked it */
        refs[nrefs].name_off = (size_t)((const uint8_t *)name.data - (const uint8_t *)data);
        refs[nrefs].name_len = name.length;
        nrefs++;
    }
    if (res == JITANON_OK) res = jitanon__pm_collect(m, &l, &ca, refs, nrefs, (const uint8_t *)data, err);
    jitanon__free(&ca, refs, refs_cap * sizeof *refs);
    m->stats.peak_bytes = l.peak;
    if (res != JITANON_OK) {
        jitanon_perfmap_destroy(m);
        return res;
    }
    *out = m;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perfmap_load_memory(const void *data, size_t size, const jitanon_perfmap_opts *opts,
                                                       jitanon_perfmap **out, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__perfmap_load_memory_impl(data, size, opts, out, err), "perf map");
}

JITANON_API const jitanon_perfmap_entry *jitanon_perfmap_lookup(const jitanon_perfmap *m, uint64_t addr)
{
    size_t lo = 0, hi = m ? m->count : 0;
    while (lo < hi) { /* the first entry ending after addr */
        size_t mid = lo + (hi - lo) / 2;
        const jitanon_perfmap_entry *e = &m->entries[mid];
        if (addr >= e->start && addr - e->start >= e->size) lo = mid + 1;
        else hi = mid;
    }
    return lo < (m ? m->count : 0) && addr - m->entries[lo].start < m->entries[lo].size ? &m->entries[lo] : NULL;
}

/* -- [perf-read] perf.data reader ---------------------------------------------------------- */

#define JITANON__PERF_FILE_HEADER 104u
#define JITANON__PERF_FILE_HEADER_V1 72u /* legacy header without the feature bitmap */
#define JITANON__PERF_PIPE_HEADER 16u
#define JITANON__PERF_MAGIC 0x32454C4946524550ull /* "PERFILE2" as a little-endian u64 */
#define JITANON__PERF_ATTR_VER0 64u
#define JITANON__PERF_DEFAULT_CAP (64ull * 1024u * 1024u)
#define JITANON__PERF_MIN_BUF 65536u
#define JITANON__PERF_FILE_BUF (1u << 20)
#define JITANON__PERF_MAX_REC 65535u
#define JITANON__PERF_MMAP_FIXED 40u  /* header + pid, tid, start, len, pgoff */
#define JITANON__PERF_MMAP2_FIXED 72u /* + maj/min/ino/ino_gen (or build id), prot, flags */
#define JITANON__PERF_AUXTRACE_SIZE 48u
#define JITANON__PERF_TRACING_SIZE 16u
#define JITANON__PERF_TRACING_MIN 12u /* perf 4.x: header and u32 size, no pad */
#define JITANON__PERF_SAMPLE_TRAILER                                                                  \
    (JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_ID |                    \
     JITANON_PERF_SAMPLE_STREAM_ID | JITANON_PERF_SAMPLE_CPU | JITANON_PERF_SAMPLE_IDENTIFIER)
/* read_format bits (perf_event.h) */
#define JITANON__PERF_FORMAT_ENABLED 1u
#define JITANON__PERF_FORMAT_RUNNING 2u
#define JITANON__PERF_FORMAT_ID 4u
#define JITANON__PERF_FORMAT_GROUP 8u
#define JITANON__PERF_FORMAT_LOST 16u

JITANON_API const char *jitanon_perf_record_name(uint32_t type)
{
    static const char *const kernel[] = {"UNKNOWN", "MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE",
                                         "FORK", "READ", "SAMPLE", "MMAP2", "AUX", "ITRACE_START",
                                         "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE", "NAMESPACES", "KSYMBOL",
                                         "BPF_EVENT", "CGROUP", "TEXT_POKE", "AUX_OUTPUT_HW_ID"};
    static const char *const user[] = {"HEADER_ATTR", "HEADER_EVENT_TYPE", "HEADER_TRACING_DATA",
                                       "HEADER_BUILD_ID", "FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO",
                                       "AUXTRACE", "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
                                       "STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV", "HEADER_FEATURE",
                                       "COMPRESSED", "FINISHED_INIT", "COMPRESSED2"};
    if (type < sizeof kernel / sizeof kernel[0]) return kernel[type];
    if (type >= 64 && type - 64 < sizeof user / sizeof user[0]) return user[type - 64];
    return "UNKNOWN";
}

JITANON_API uint64_t jitanon_perf_u64_at(jitanon_bytes b, size_t i, int big_endian)
{
    if (i >= b.size / 8) return 0;
    return jitanon__rd64(b.data + i * 8, big_endian);
}

JITANON_API uint64_t jitanon_perf_tsc_to_time(const jitanon_perf_time_conv *tc, uint64_t cyc)
{
    uint64_t quot, rem, shift;
    JITANON_ASSERT(tc);
    shift = tc->time_shift & 63;
    if (tc->extended && !tc->cap_user_time_zero) return 0;
    if (tc->extended && tc->cap_user_time_short) cyc = tc->time_cycles + ((cyc - tc->time_cycles) & tc->time_mask);
    quot = cyc >> shift;
    rem = cyc & (((uint64_t)1 << shift) - 1);
    return tc->time_zero + quot * tc->time_mult + ((rem * tc->time_mult) >> shift);
}

JITANON__PRIVATE unsigned jitanon__popcount64(uint64_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

/* A big-endian compiler allocates bitfields from the most significant bit, so the attr
   flag word of a big-endian file has `disabled` in bit 63: reverse it to number the
   fields the same way for both orders. */
JITANON__PRIVATE uint64_t jitanon__bitrev64(uint64_t v)
{
    uint64_t r = 0;
    unsigned i;
    for (i = 0; i < 64; i++, v >>= 1) r = (r << 1) | (v & 1);
    return r;
}

JITANON__PRIVATE jitanon_result jitanon__pd_bad(jitanon_error *err, jitanon_result code, uint64_t off,
                                               const jitanon_perf_record *rec, const char *what)
{
    jitanon_result r = JITANON__FAIL(err, code, off, "%s record (size %u): %s", jitanon_perf_record_name(rec->type),
                                     (unsigned)rec->size, what);
    if (err) {
        err->record_index = rec->index;
        err->record_type = rec->type;
    }
    return r;
}

/* -- input: the chunked input r->state_.in; its end is final (eof_) until a seek. -- */

JITANON__PRIVATE size_t jitanon__pd_avail(const jitanon_perf_reader *r) { return jitanon__in_avail(&r->state_.in); }

/* Makes at least `need` unread bytes available.  JITANON_END when the input ends first. */
JITANON__PRIVATE jitanon_result jitanon__pd_fill(jitanon_perf_reader *r, size_t need, jitanon_error *err)
{
    jitanon_result res;
    uint64_t end;
    if (jitanon__pd_avail(r) >= need) return JITANON_OK;
    if (r->state_.eof) return JITANON_END;
    /* A file (it can seek) is read in 1 MiB blocks, a pipe in 64 KiB ones: a pipe's reader
       may be following a running recording. */
    res = jitanon__in_fill(&r->state_.in, &r->state_.allocator, need, r->state_.seek_fn ? JITANON__PERF_FILE_BUF : JITANON__PERF_MIN_BUF,
                           err);
    end = r->state_.in.off + jitanon__pd_avail(r);
    if (jitanon__pd_avail(r) && end > r->state_.seen) r->state_.seen = end; /* not a seek past the end */
    if (res == JITANON_END) r->state_.eof = 1;
    return res;
}

/* What the reader was reading when the input ended: named by the error that says so.
   `section` is the section a record is in (file mode), NULL for a section itself; size 0
   when the name says it (a record's 8-byte header). */
typedef struct jitanon__pd_part {
    char name[48];
    const char *section;
    uint64_t off, size;
} jitanon__pd_part;

JITANON__PRIVATE jitanon__pd_part jitanon__pd_part_make(const char *name, uint64_t off, uint64_t size)
{
    jitanon__pd_part p;
    jitanon__fmt(p.name, sizeof p.name, "%s", name);
    p.section = NULL;
    p.off = off;
    p.size = size;
    return p;
}

/* Where the input really ends, found empty at `at`.  Read in order, that is where it
   ends; but a file can seek past its end (fseek does), so a seekable input found empty
   beyond every byte read so far ends somewhere in [seen, at]: 1-byte reads halve that
   (a seek that fails counts as past the end), then the read position is put back. */
JITANON__PRIVATE uint64_t jitanon__pd_end(jitanon_perf_reader *r, uint64_t at)
{
    jitanon__input *in = &r->state_.in;
    uint64_t lo = r->state_.seen, hi = at, back = in->off + jitanon__pd_avail(r);
    uint8_t b;
    if (at <= lo || !r->state_.seek_fn || r->state_.follow) return at;
    while (lo < hi) { /* bytes before lo exist; none at hi */
        uint64_t mid = lo + (hi - lo) / 2;
        if (!r->state_.seek_fn(in->user, mid) && in->read_fn(in->user, &b, 1) == 1) lo = mid + 1;
        else hi = mid;
    }
    (void)r->state_.seek_fn(in->user, back);
    r->state_.seen = lo;
    return lo;
}

/* The part of the file the byte `at` is in (file mode), for an input that ends before
   the part being read begins. */
JITANON__PRIVATE const char *jitanon__pd_region(const jitanon_perf_reader *r, uint64_t at)
{
    if (at < r->state_.hsize) return "the file header";
    if (at >= r->state_.attrs_off && at - r->state_.attrs_off < r->state_.attrs_size) return "the attrs section";
    if (at < r->data_offset) return "the id arrays before the data";
    if (r->state_.unsized || at - r->data_offset < r->data_size) return "the data section";
    return at < r->state_.table_end ? "the feature table" : "the feature sections";
}

/* The input ends, found empty at `at`, inside `part` or before it:
   JITANON_ERR_TRUNCATED at the byte where it really ends, saying what was cut and, for a
   file, how many of the bytes its header (and feature table) promise are missing.  One
   line, which must fit err->info: a record's section is left out when it would not. */
JITANON__PRIVATE jitanon_result jitanon__pd_short(jitanon_perf_reader *r, const jitanon__pd_part *part, uint64_t at,
                                                 jitanon_error *err)
{
    char msg[256];
    size_t n = sizeof msg;
    int in_section;
    uint64_t end = jitanon__pd_end(r, at);
    for (in_section = part->section != NULL; in_section >= 0 && n >= sizeof err->info; in_section--) {
        if (end < part->off)
            n = jitanon__fmt(msg, sizeof msg, "in %s, before %s at byte %U", jitanon__pd_region(r, end), part->name,
                             part->off);
        else
            n = jitanon__fmt(msg, sizeof msg, "%s%s%sin %s at byte %U", in_section ? "in " : "",
                             in_section ? part->section : "", in_section ? ", " : "", part->name, part->off);
        if (end >= part->off && part->size && n < sizeof msg)
            n += jitanon__fmt(msg + n, sizeof msg - n, " that needs %U bytes", part->size);
        if (r->mode == JITANON_PERF_FILE && !r->state_.unsized && r->state_.promised > end && n < sizeof msg)
            n += jitanon__fmt(msg + n, sizeof msg - n, "; the header promises %U bytes (%U missing)", r->state_.promised,
                              r->state_.promised - end);
    }
    return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, end, "%s", msg);
}

/* Consumes bytes up to input offset `off` (forward only). */
JITANON__PRIVATE jitanon_result jitanon__pd_skip_to(jitanon_perf_reader *r, uint64_t off, const jitanon__pd_part *part,
                                                   jitanon_error *err)
{
    while (r->state_.in.off < off) {
        uint64_t left = off - r->state_.in.off;
        size_t n;
        if (!jitanon__pd_avail(r)) {
            jitanon_result res;
            r->state_.in.pos = r->state_.in.len = 0; /* everything was consumed: reuse the whole buffer */
            res = jitanon__pd_fill(r, 1, err);
            if (res == JITANON_END) return jitanon__pd_short(r, part, r->state_.in.off, err);
            if (res != JITANON_OK) return res;
        }
        n = left < jitanon__pd_avail(r) ? (size_t)left : jitanon__pd_avail(r);
        jitanon__in_consume(&r->state_.in, n);
    }
    return JITANON_OK;
}

/* Positions the input at `off`, where `part` begins or lies: inside the buffer, by
   seeking, or by skipping forward. */
JITANON__PRIVATE jitanon_result jitanon__pd_goto(jitanon_perf_reader *r, uint64_t off, const jitanon__pd_part *part,
                                                jitanon_error *err)
{
    if (off >= r->state_.in.off && off - r->state_.in.off <= jitanon__pd_avail(r)) {
        jitanon__in_consume(&r->state_.in, (size_t)(off - r->state_.in.off));
        return JITANON_OK;
    }
    if (r->state_.seek_fn) {
        if (r->state_.seek_fn(r->state_.in.user, off)) {
            /* a seek function may refuse a place past the end that fseek accepts */
            if (jitanon__pd_end(r, off) < off) return jitanon__pd_short(r, part, off, err);
            return JITANON__FAIL(err, JITANON_ERR_IO, off, "cannot seek to byte %U", off);
        }
        r->state_.in.pos = r->state_.in.len = 0;
        r->state_.in.off = off;
        r->state_.eof = 0;
        return JITANON_OK;
    }
    if (off < r->state_.in.off)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, off,
                             "this layout needs seeking back to byte %U; read a file, not a pipe", off);
    return jitanon__pd_skip_to(r, off, part, err);
}

/* Copies n bytes at input offset `off` (in `part`) to dst in buffer-sized pieces. */
JITANON__PRIVATE jitanon_result jitanon__pd_read_at(jitanon_perf_reader *r, uint64_t off, uint8_t *dst, size_t n,
                                                   const jitanon__pd_part *part, jitanon_error *err)
{
    jitanon_result res = jitanon__pd_goto(r, off, part, err);
    while (res == JITANON_OK && n) {
        size_t k;
        if (!jitanon__pd_avail(r)) {
            r->state_.in.pos = r->state_.in.len = 0;
            res = jitanon__pd_fill(r, 1, err);
            if (res == JITANON_END) return jitanon__pd_short(r, part, r->state_.in.off, err);
            if (res != JITANON_OK) return res;
        }
        k = n < jitanon__pd_avail(r) ? n : jitanon__pd_avail(r);
        memcpy(dst, r->state_.in.buf + r->state_.in.pos, k);
        jitanon__in_consume(&r->state_.in, k);
        dst += k;
        n -= k;
    }
    return res;
}

/* Everything kept besides the record buffer (attrs, ids, features) is charged to the
   budget of max_header_bytes (a jitanon__counted of its own). */
JITANON__PRIVATE jitanon_result jitanon__pd_charge(jitanon__counted *c, uint64_t n, uint64_t off, jitanon_error *err)
{
    if (n > SIZE_MAX || !jitanon__counted_take(c, 0, (size_t)n)) {
        c->hit = 1;
        return jitanon__counted_fail(c, err, off, "header data");
    }
    return JITANON_OK;
}

/* The reader's public functions return through this: an allocation memory_limit refused
   is JITANON_ERR_LIMIT, and errors name the input. */
JITANON__PRIVATE jitanon_result jitanon__pd_exit(jitanon_perf_reader *r, jitanon_result res, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__counted_fix(&r->state_.mem, res, err), "perf.data");
}

/* The budget of max_header_bytes (size_t: on a 32-bit host no more can be held anyway). */
JITANON__PRIVATE void jitanon__pd_header_budget(jitanon__counted *c, uint64_t limit)
{
    jitanon__counted_init(c, NULL, limit < SIZE_MAX ? (size_t)limit : SIZE_MAX, "max_header_bytes");
}

JITANON__PRIVATE jitanon_result jitanon__pd_alloc(jitanon_perf_reader *r, uint64_t n, uint64_t off, void **out,
                                                 jitanon_error *err)
{
    jitanon_result res = jitanon__pd_charge(&r->state_.header_mem, n, off, err);
    *out = NULL;
    if (res != JITANON_OK) return res;
    *out = jitanon__malloc(&r->state_.allocator, (size_t)n);
    return *out ? JITANON_OK : JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot allocate %U bytes", n);
}

/* -- attrs and the id -> attr map ------------------------------------------------------- */

/* Reader and writer both keep owned copies of each attr's bytes and ids. */
JITANON__PRIVATE void jitanon__attrs_free(const jitanon_allocator *a, jitanon_perf_attr *attrs, size_t n, size_t cap)
{
    size_t i;
    for (i = 0; i < n; i++) {
        jitanon__free(a, (void *)(uintptr_t)attrs[i].raw.data, attrs[i].raw.size);
        jitanon__free(a, (void *)(uintptr_t)attrs[i].ids, attrs[i].id_count * 8);
    }
    jitanon__free(a, attrs, cap * sizeof *attrs);
}

JITANON__PRIVATE void jitanon__pd_decode_attr(jitanon_perf_attr *a, const uint8_t *p, uint32_t size, int big)
{
    uint64_t flags = jitanon__rd64(p + 40, big);
    a->type = jitanon__rd32(p, big);
    a->size = size;
    a->config = jitanon__rd64(p + 8, big);
    a->sample_type = jitanon__rd64(p + 24, big);
    a->read_format = jitanon__rd64(p + 32, big);
    a->flags = big ? jitanon__bitrev64(flags) : flags;
    a->sample_id_all = (int)(a->flags >> 18 & 1);
    a->use_clockid = (int)(a->flags >> 25 & 1);
    a->clockid = size >= 96 ? (int32_t)jitanon__rd32(p + 92, big) : 0;
    a->id_hdr_size = a->sample_id_all ? 8u * jitanon__popcount64(a->sample_type & JITANON__PERF_SAMPLE_TRAILER) : 0;
}

/* attr.size as the reader uses it: 0 is the first published size. */
JITANON__PRIVATE uint32_t jitanon__pd_attr_size(const uint8_t *p, int big)
{
    uint32_t s = jitanon__rd32(p + 4, big);
    return s ? s : JITANON__PERF_ATTR_VER0;
}

JITANON__PRIVATE int jitanon__pd_idless(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__perf_idmap *m = (const jitanon__perf_idmap *)ctx;
    return m[a].id < m[b].id || (m[a].id == m[b].id && m[a].attr < m[b].attr);
}

/* The attr that owns `id`: the first attr listing it; id 0 or unknown gives attr 0, which
   is how perf treats synthesized records with zeroed trailers. */
JITANON__PRIVATE size_t jitanon__pd_attr_of(const jitanon_perf_reader *r, uint64_t id)
{
    size_t lo = 0, hi = r->state_.idmap_len;
    if (r->attr_count < 2 || id == 0) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->state_.idmap[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->state_.idmap_len && r->state_.idmap[lo].id == id ? r->state_.idmap[lo].attr : 0;
}

JITANON__PRIVATE jitanon_result jitanon__pd_map_ids(jitanon_perf_reader *r, size_t ai, uint64_t off, jitanon_error *err)
{
    const jitanon_perf_attr *a = &r->attrs[ai];
    size_t i;
    if (!jitanon__grow(&r->state_.allocator, (void **)&r->state_.idmap, &r->state_.idmap_cap, r->state_.idmap_len + a->id_count + 1,
                       sizeof *r->state_.idmap))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot grow the id map");
    for (i = 0; i < a->id_count; i++) {
        r->state_.idmap[r->state_.idmap_len].id = a->ids[i];
        r->state_.idmap[r->state_.idmap_len++].attr = ai;
    }
    if (!jitanon__sort(&r->state_.allocator, r->state_.idmap, r->state_.idmap_len, sizeof *r->state_.idmap, jitanon__pd_idless))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot sort the id map");
    return JITANON_OK;
}

/* Field f of layout k is u64 slot `slot`: PID's holds pid and tid, CPU's a u32 first. */
JITANON__PRIVATE void jitanon__pd_lay_set(jitanon__perf_lay *l, int k, int f, unsigned slot)
{
    l->at[k][f] = (uint8_t)(8u * slot);
    l->mask[k][f] = f == JITANON__LF_PID || f == JITANON__LF_CPU ? 0xffffffffu : ~(uint64_t)0;
    if (f != JITANON__LF_PID) return;
    l->at[k][JITANON__LF_TID] = (uint8_t)(8u * slot + 4);
    l->mask[k][JITANON__LF_TID] = 0xffffffffu;
}

/* The slots of jitanon__perf_lay, in the order perf_event.h gives each layout. */
JITANON__PRIVATE void jitanon__pd_lay_make(jitanon__perf_lay *l, uint64_t st)
{
    unsigned n = 0;
    memset(l, 0, sizeof *l);
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) jitanon__pd_lay_set(l, 0, JITANON__LF_ID, n++);
    if (st & JITANON_PERF_SAMPLE_IP) jitanon__pd_lay_set(l, 0, JITANON__LF_IP, n++);
    if (st & JITANON_PERF_SAMPLE_TID) jitanon__pd_lay_set(l, 0, JITANON__LF_PID, n++);
    if (st & JITANON_PERF_SAMPLE_TIME) jitanon__pd_lay_set(l, 0, JITANON__LF_TIME, n++);
    if (st & JITANON_PERF_SAMPLE_ADDR) jitanon__pd_lay_set(l, 0, JITANON__LF_ADDR, n++);
    if (st & JITANON_PERF_SAMPLE_ID) jitanon__pd_lay_set(l, 0, JITANON__LF_ID, n++); /* both: ID wins, as it comes later */
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) jitanon__pd_lay_set(l, 0, JITANON__LF_STREAM_ID, n++);
    if (st & JITANON_PERF_SAMPLE_CPU) jitanon__pd_lay_set(l, 0, JITANON__LF_CPU, n++);
    if (st & JITANON_PERF_SAMPLE_PERIOD) jitanon__pd_lay_set(l, 0, JITANON__LF_PERIOD, n++);
    l->fixed = (uint8_t)n;
    n = 0;
    if (st & JITANON_PERF_SAMPLE_TID) jitanon__pd_lay_set(l, 1, JITANON__LF_PID, n++);
    if (st & JITANON_PERF_SAMPLE_TIME) jitanon__pd_lay_set(l, 1, JITANON__LF_TIME, n++);
    if (st & JITANON_PERF_SAMPLE_ID) jitanon__pd_lay_set(l, 1, JITANON__LF_ID, n++);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) jitanon__pd_lay_set(l, 1, JITANON__LF_STREAM_ID, n++);
    if (st & JITANON_PERF_SAMPLE_CPU) jitanon__pd_lay_set(l, 1, JITANON__LF_CPU, n++);
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) jitanon__pd_lay_set(l, 1, JITANON__LF_ID, n++); /* the trailer's last word */
}

/* Adds an attr: copies `raw` (size bytes), takes ownership of `ids` (n decoded ids,
   charged by the caller) even on failure. */
JITANON__PRIVATE jitanon_result jitanon__pd_add_attr(jitanon_perf_reader *r, const uint8_t *raw, uint32_t size,
                                                    uint64_t *ids, size_t n, uint64_t off, jitanon_error *err)
{
    jitanon_perf_attr *a;
    void *copy = NULL;
    jitanon_result res = JITANON_OK;
    if (!jitanon__grow(&r->state_.allocator, (void **)&r->attrs, &r->state_.attr_cap, r->attr_count + 1, sizeof *r->attrs) ||
        !jitanon__grow(&r->state_.allocator, (void **)&r->state_.lays, &r->state_.lay_cap, r->attr_count + 1, sizeof *r->state_.lays))
        res = JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot grow the attr table");
    if (res == JITANON_OK) res = jitanon__pd_alloc(r, size, off, &copy, err);
    if (res != JITANON_OK) {
        jitanon__free(&r->state_.allocator, ids, n * 8);
        return res;
    }
    memcpy(copy, raw, size);
    a = &r->attrs[r->attr_count++];
    memset(a, 0, sizeof *a);
    jitanon__pd_decode_attr(a, (const uint8_t *)copy, size, r->big_endian);
    jitanon__pd_lay_make(&r->state_.lays[r->attr_count - 1], a->sample_type);
    a->raw.data = (const uint8_t *)copy;
    a->raw.size = size;
    a->ids = ids;
    a->id_count = n;
    return jitanon__pd_map_ids(r, r->attr_count - 1, off, err);
}

/* Decodes n ids from input bytes into a new (charged) array. */
JITANON__PRIVATE jitanon_result jitanon__pd_decode_ids(jitanon_perf_reader *r, const uint8_t *p, size_t n, uint64_t off,
                                                      uint64_t **out, jitanon_error *err)
{
    void *mem;
    size_t i;
    jitanon_result res = jitanon__pd_alloc(r, (uint64_t)n * 8, off, &mem, err);
    *out = (uint64_t *)mem;
    for (i = 0; res == JITANON_OK && i < n; i++) (*out)[i] = jitanon__rd64(p + 8 * i, r->big_endian);
    return res;
}

/* -- file header ------------------------------------------------------------------------ */

/* Where header sections come from: a copy of the bytes before the data section (forward-
   only input), or the input itself through seeking. */
typedef struct jitanon__pd_pre {
    uint8_t *mem;
    uint64_t off;
    size_t len, got; /* got: what the input held of them */
} jitanon__pd_pre;

/* The bytes of `part` (a section the header points at) into dst. */
JITANON__PRIVATE jitanon_result jitanon__pd_section(jitanon_perf_reader *r, const jitanon__pd_pre *pre,
                                                   const jitanon__pd_part *part, uint8_t *dst, jitanon_error *err)
{
    uint64_t off = part->off, size = part->size;
    if (!pre->mem) return jitanon__pd_read_at(r, off, dst, (size_t)size, part, err);
    if (off < pre->off || off - pre->off > pre->len || size > pre->len - (off - pre->off))
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, off,
                             "section of %U bytes is not before the data; reading it needs a seek callback", size);
    if (off - pre->off + size > pre->got) return jitanon__pd_short(r, part, pre->off + pre->got, err);
    if (size) memcpy(dst, pre->mem + (off - pre->off), (size_t)size);
    return JITANON_OK;
}

/* The header (or the feature table) says the file holds the `size` bytes at `off`. */
JITANON__PRIVATE void jitanon__pd_promise(jitanon_perf_reader *r, uint64_t off, uint64_t size)
{
    uint64_t end;
    if (jitanon__add_u64(off, size, &end) && end > r->state_.promised) r->state_.promised = end;
}

/* One attrs-section entry: attr.size bytes, then {u64 offset, u64 size} of its id array. */
JITANON__PRIVATE jitanon_result jitanon__pd_file_attr(jitanon_perf_reader *r, const jitanon__pd_pre *pre,
                                                     const uint8_t *e, uint64_t attr_size, uint64_t off,
                                                     jitanon_error *err)
{
    uint32_t asize = jitanon__pd_attr_size(e, r->big_endian);
    uint64_t ids_off, ids_size;
    uint8_t *bytes;
    uint64_t *ids = NULL;
    jitanon__pd_part part;
    jitanon_result res;
    /* perf walks entries by attr.size + 16, so the header's attr_size must agree. */
    if ((uint64_t)asize + 16 != attr_size)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off + 4, "attr.size %u does not match attr_size %U",
                             (unsigned)asize, attr_size);
    ids_off = jitanon__rd64(e + asize, r->big_endian);
    ids_size = jitanon__rd64(e + asize + 8, r->big_endian);
    if (ids_size % 8 || ids_size > r->state_.max_header_bytes)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off + asize + 8, "bad id array size %U", ids_size);
    bytes = (uint8_t *)jitanon__malloc(&r->state_.allocator, (size_t)ids_size);
    if (!bytes) return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "cannot allocate the id array");
    jitanon__pd_promise(r, ids_off, ids_size);
    part = jitanon__pd_part_make("", ids_off, ids_size);
    jitanon__fmt(part.name, sizeof part.name, "the id array of attr %U", (uint64_t)r->attr_count);
    res = jitanon__pd_section(r, pre, &part, bytes, err);
    if (res == JITANON_OK) res = jitanon__pd_decode_ids(r, bytes, (size_t)(ids_size / 8), ids_off, &ids, err);
    jitanon__free(&r->state_.allocator, bytes, (size_t)ids_size);
    if (res != JITANON_OK) return res;
    return jitanon__pd_add_attr(r, e, asize, ids, (size_t)(ids_size / 8), off, err);
}

JITANON__PRIVATE jitanon_result jitanon__pd_file_attrs(jitanon_perf_reader *r, const jitanon__pd_pre *pre,
                                                      uint64_t attr_size, uint64_t attrs_off, uint64_t attrs_size,
                                                      jitanon_error *err)
{
    uint8_t *tab;
    uint64_t i, n = attrs_size / attr_size;
    jitanon__pd_part part = jitanon__pd_part_make("the attrs section", attrs_off, attrs_size);
    jitanon_result res;
    if (attrs_size > r->state_.max_header_bytes)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 32, "attrs section exceeds max_header_bytes");
    tab = (uint8_t *)jitanon__malloc(&r->state_.allocator, (size_t)attrs_size);
    if (!tab) return JITANON__FAIL(err, JITANON_ERR_NOMEM, attrs_off, "cannot allocate the attrs section");
    res = jitanon__pd_section(r, pre, &part, tab, err);
    for (i = 0; res == JITANON_OK && i < n; i++)
        res = jitanon__pd_file_attr(r, pre, tab + i * attr_size, attr_size, attrs_off + i * attr_size, err);
    jitanon__free(&r->state_.allocator, tab, (size_t)attrs_size);
    return res;
}

typedef struct jitanon__pd_fhdr {
    uint64_t size, attr_size, attrs_off, attrs_size;
} jitanon__pd_fhdr;

JITANON__PRIVATE jitanon_result jitanon__pd_check_fhdr(jitanon_perf_reader *r, const jitanon__pd_fhdr *h,
                                                      jitanon_error *err)
{
    uint64_t end;
    if (!jitanon__add_u64(h->attrs_off, h->attrs_size, &end))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 24, "attrs section overflows");
    if (h->attrs_size && (h->attr_size < JITANON__PERF_ATTR_VER0 + 16 || h->attrs_size % h->attr_size))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 16, "attr_size %U does not divide the attrs section",
                             h->attr_size);
    if (r->data_offset < h->size || !jitanon__add_u64(r->data_offset, r->data_size, &end))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 40, "bad data section offset %U", r->data_offset);
    return JITANON_OK;
}

/* Forward-only input: keep the bytes between the header and the data section, where perf
   puts the id arrays and attrs.  An input that ends before the data keeps what it holds:
   the section it ends in is then named (jitanon__pd_section). */
JITANON__PRIVATE jitanon_result jitanon__pd_load_pre(jitanon_perf_reader *r, jitanon__pd_pre *pre, jitanon_error *err)
{
    uint64_t n = r->data_offset - r->state_.in.off;
    jitanon__pd_part part;
    jitanon_result res;
    if (n > r->state_.max_header_bytes)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, r->state_.in.off, "%U bytes before the data exceed max_header_bytes", n);
    pre->off = r->state_.in.off;
    pre->len = (size_t)n;
    pre->mem = (uint8_t *)jitanon__malloc(&r->state_.allocator, pre->len);
    if (!pre->mem) return JITANON__FAIL(err, JITANON_ERR_NOMEM, pre->off, "cannot buffer the header sections");
    part = jitanon__pd_part_make("the sections before the data", pre->off, n);
    res = jitanon__pd_read_at(r, pre->off, pre->mem, pre->len, &part, err);
    pre->got = res == JITANON_OK ? pre->len : (size_t)(r->state_.in.off - pre->off);
    if (res == JITANON_ERR_TRUNCATED) {
        jitanon__clear_error(err);
        res = JITANON_OK;
    }
    return res;
}

JITANON__PRIVATE size_t jitanon__pd_feat_count(const uint64_t bits[4])
{
    return jitanon__popcount64(bits[0]) + jitanon__popcount64(bits[1]) + jitanon__popcount64(bits[2]) +
           jitanon__popcount64(bits[3]);
}

/* Notes damage the reader recovers from (the first one in r->damage, but a cut in the
   data replaces a failure of the feature sections: the cut names the record where the
   input ends, which the features loaded first - the injector does - can only place in
   the data section), or refuses it with opts.strict. */
JITANON__PRIVATE jitanon_result jitanon__pd_recover(jitanon_perf_reader *r, uint32_t warning, jitanon_result type,
                                                   uint64_t off, const char *what, jitanon_error *err)
{
    if (r->state_.strict) return JITANON__FAIL(err, type, off, "%s (strict)", what);
    if (!r->warnings || (warning == JITANON_PERF_WARN_CUT && r->warnings == JITANON_PERF_WARN_FEATURES)) {
        JITANON__FAIL(&r->damage, type, off, "%s", what);
        jitanon__err_source(&r->damage, "perf.data", NULL);
    }
    r->warnings |= warning;
    return JITANON_OK;
}

/* Data size 0 with nothing after the data offset, or with the feature table where data
   size 0 puts it (at the data offset): an empty data section of a finished recording,
   not a killed one.  Records cannot look like that table: a record header read as a u64
   offset holds the record's size (8 or more) in bits 48-63.  Reads ahead without
   consuming: the input stays at the data offset. */
JITANON__PRIVATE int jitanon__pd_empty_data(jitanon_perf_reader *r)
{
    jitanon_error ignored;
    size_t i, n = jitanon__pd_feat_count(r->features);
    uint64_t first = r->data_offset + 16 * (uint64_t)n;
    jitanon_result res = jitanon__pd_fill(r, n ? 16 * n : 1, &ignored);
    if (!n) return res == JITANON_END && !jitanon__pd_avail(r);
    if (res != JITANON_OK) return 0;
    for (i = 0; i < n; i++) {
        const uint8_t *e = r->state_.in.buf + r->state_.in.pos + 16 * i;
        uint64_t off = jitanon__rd64(e, r->big_endian), size = jitanon__rd64(e + 8, r->big_endian);
        if (off < first || off >= (1ull << 48) || size > r->state_.max_header_bytes) return 0;
    }
    return 1;
}

/* Data size 0: perf record was killed before it could finish the header (or the data
   section is empty).  The data then runs to the end of the input, and the feature bits
   name sections that were never written. */
JITANON__PRIVATE jitanon_result jitanon__pd_unsized(jitanon_perf_reader *r, jitanon_error *err)
{
    /* followed (opts.follow): still being written, which is no damage; the size and the
       features come at the end (jitanon__pd_follow) */
    if (!r->state_.follow) {
        jitanon_result res;
        if (jitanon__pd_empty_data(r)) return JITANON_OK;
        res = jitanon__pd_recover(r, JITANON_PERF_WARN_DATA_SIZE_ZERO, JITANON_ERR_BAD_HEADER, 48,
                                  "data size 0 (perf record killed?): the data is read to the end of the file", err);
        if (res != JITANON_OK) return res;
    }
    r->state_.unsized = 1;
    r->data_size = UINT64_MAX - r->data_offset;
    if (jitanon__pd_feat_count(r->features)) {
        memset(r->features, 0, sizeof r->features);
        if (!r->state_.follow) r->warnings |= JITANON_PERF_WARN_FEATURES;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_file_header(jitanon_perf_reader *r, uint64_t hsize, jitanon_error *err)
{
    jitanon__pd_fhdr h;
    jitanon__pd_pre pre;
    jitanon__pd_part data;
    jitanon__cur c;
    jitanon_result res = jitanon__pd_fill(r, (size_t)hsize, err);
    if (res == JITANON_END) {
        data = jitanon__pd_part_make("the file header", 0, hsize);
        return jitanon__pd_short(r, &data, jitanon__pd_avail(r), err);
    }
    if (res != JITANON_OK) return res;
    c = jitanon__cur_make(r->state_.in.buf + r->state_.in.pos + 16, (size_t)hsize - 16, 16, r->big_endian);
    h.size = hsize;
    h.attr_size = jitanon__get64(&c);
    h.attrs_off = jitanon__get64(&c);
    h.attrs_size = jitanon__get64(&c);
    r->data_offset = jitanon__get64(&c);
    r->data_size = jitanon__get64(&c);
    jitanon__take(&c, 16); /* event_types: obsolete */
    if (hsize == JITANON__PERF_FILE_HEADER) {
        unsigned i;
        for (i = 0; i < 4; i++) r->features[i] = jitanon__get64(&c);
    }
    if ((res = jitanon__pd_check_fhdr(r, &h, err)) != JITANON_OK) return res;
    /* what the file holds by its header: the attrs, the data and the feature table after
       it (data size 0: the data runs to the end, and what follows is unknown) */
    r->state_.hsize = hsize;
    r->state_.attrs_off = h.attrs_off;
    r->state_.attrs_size = h.attrs_size;
    r->state_.table_end = r->data_offset + r->data_size + 16 * (uint64_t)jitanon__pd_feat_count(r->features);
    jitanon__pd_promise(r, 0, hsize);
    jitanon__pd_promise(r, h.attrs_off, h.attrs_size);
    jitanon__pd_promise(r, r->data_offset, r->data_size ? r->state_.table_end - r->data_offset : 0);
    jitanon__in_consume(&r->state_.in, (size_t)hsize);
    memset(&pre, 0, sizeof pre);
    if (!r->state_.seek_fn) res = jitanon__pd_load_pre(r, &pre, err);
    if (res == JITANON_OK && h.attrs_size)
        res = jitanon__pd_file_attrs(r, &pre, h.attr_size, h.attrs_off, h.attrs_size, err);
    jitanon__free(&r->state_.allocator, pre.mem, pre.len);
    data = jitanon__pd_part_make("the data section", r->data_offset, r->data_size);
    if (res == JITANON_OK) res = jitanon__pd_goto(r, r->data_offset, &data, err);
    if (res == JITANON_OK && r->data_size == 0) res = jitanon__pd_unsized(r, err);
    return res;
}

/* The legacy PERFFILE (v1) header has PERFILE2's layout, but its magic is the same bytes
   in either byte order: the order is the one in which attr_size (a file) is one of the
   attr sizes of that format's time (64, 72, 80, 96 or 104 bytes) plus the 16-byte id
   section, as perf checks it.  A pipe (header size 16) says nothing: the host's order. */
JITANON__PRIVATE int jitanon__pd_legacy_attr_size(uint64_t v)
{
    return v == 80 || v == 88 || v == 96 || v == 112 || v == 120;
}

JITANON__PRIVATE jitanon_result jitanon__pd_legacy_order(jitanon_perf_reader *r, jitanon_error *err)
{
    const uint8_t *p = r->state_.in.buf + r->state_.in.pos;
    int b;
    jitanon_result res;
    for (b = 0; b < 2; b++)
        if (jitanon__rd64(p + 8, b) == JITANON__PERF_PIPE_HEADER) {
            r->big_endian = jitanon__host_big_endian();
            return JITANON_OK;
        }
    if ((res = jitanon__pd_fill(r, 24, err)) == JITANON_END) {
        jitanon__pd_part part = jitanon__pd_part_make("the legacy PERFFILE header", 0, 24);
        return jitanon__pd_short(r, &part, jitanon__pd_avail(r), err);
    }
    if (res != JITANON_OK) return res;
    p = r->state_.in.buf + r->state_.in.pos;
    for (b = 0; b < 2; b++)
        if (jitanon__pd_legacy_attr_size(jitanon__rd64(p + 16, b))) {
            r->big_endian = b;
            return JITANON_OK;
        }
    return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 16,
                         "legacy PERFFILE header: attr_size %U is none of that format's (80, 88, 96, 112, 120)",
                         jitanon__rd64(p + 16, 0));
}

JITANON__PRIVATE jitanon_result jitanon__pd_header(jitanon_perf_reader *r, jitanon_error *err)
{
    const uint8_t *p;
    uint64_t hsize;
    jitanon_result res = jitanon__pd_fill(r, JITANON__PERF_PIPE_HEADER, err);
    if (res == JITANON_END) {
        jitanon__pd_part part = jitanon__pd_part_make("the perf.data header", 0, JITANON__PERF_PIPE_HEADER);
        return jitanon__pd_short(r, &part, jitanon__pd_avail(r), err);
    }
    if (res != JITANON_OK) return res;
    p = r->state_.in.buf + r->state_.in.pos;
    /* perf writes the attrs first and the header over the zeros before them last */
    if (r->state_.follow && !memcmp(p, "\0\0\0\0\0\0\0\0", 8)) return JITANON_AGAIN;
    /* The writer stores the u64 "PERFILE2" in its own order, so the bytes tell the order. */
    if (memcmp(p, "PERFILE2", 8) == 0) r->big_endian = 0;
    else if (memcmp(p, "2ELIFREP", 8) == 0) r->big_endian = 1;
    else if (memcmp(p, "PERFFILE", 8) == 0) {
        if ((res = jitanon__pd_legacy_order(r, err)) != JITANON_OK) return res;
        p = r->state_.in.buf + r->state_.in.pos;
    } else return JITANON__FAIL(err, JITANON_ERR_BAD_MAGIC, 0, "not perf.data: magic 'PERFILE2' not found");
    hsize = jitanon__rd64(p + 8, r->big_endian);
    if (hsize == JITANON__PERF_PIPE_HEADER) {
        r->mode = JITANON_PERF_PIPE;
        jitanon__in_consume(&r->state_.in, JITANON__PERF_PIPE_HEADER);
        return JITANON_OK;
    }
    if (hsize != JITANON__PERF_FILE_HEADER && hsize != JITANON__PERF_FILE_HEADER_V1)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 8, "header size %U is neither 16 (pipe) nor 104 (file)", hsize);
    r->mode = JITANON_PERF_FILE;
    return jitanon__pd_file_header(r, hsize, err);
}

JITANON__PRIVATE jitanon_result jitanon__perf_reader_init_impl(jitanon_perf_reader *r, jitanon_read_fn read_fn,
                                                               jitanon_seek_fn seek_fn, void *user,
                                                               const jitanon_perf_opts *opts, jitanon_error *err)
{
    jitanon_result res;
    JITANON_ASSERT(r && read_fn);
    if ((res = jitanon__init_begin(r, sizeof *r, JITANON__OPTS_BAD(opts), "jitanon_perf_opts", err)) != JITANON_OK)
        return res;
    r->state_.seek_fn = seek_fn;
    jitanon__in_init(&r->state_.in, read_fn, user);
    r->state_.max_payload = opts && opts->max_payload ? opts->max_payload : JITANON__PERF_DEFAULT_CAP;
    r->state_.max_header_bytes = opts && opts->max_header_bytes ? opts->max_header_bytes : JITANON__PERF_DEFAULT_CAP;
    jitanon__pd_header_budget(&r->state_.header_mem, r->state_.max_header_bytes);
    jitanon__counted_init(&r->state_.mem, opts ? &opts->allocator : NULL, opts ? opts->memory_limit : 0, "memory_limit");
    r->state_.allocator = jitanon__counted_hooks(&r->state_.mem);
    r->state_.strict = opts && opts->strict;
    r->state_.follow = opts && opts->follow;
    if (opts) {
        r->state_.decompress = opts->decompress;
        r->state_.decompress_user = opts->decompress_user;
        r->state_.max_zstd_window = opts->max_zstd_window;
    }
    r->state_.dbuf.allocator = r->state_.allocator;
    /* decompressed bytes pending: one payload-carrying record plus a straddling tail */
    r->state_.dbuf.max_size = (size_t)(r->state_.max_payload < SIZE_MAX / 4 ? r->state_.max_payload : SIZE_MAX / 4);
    r->state_.dbuf.max_size += 2 * JITANON__PERF_MIN_BUF;
    res = jitanon__pd_header(r, err);
    /* followed: a file shorter than its header and attrs is one not written that far yet */
    if (res == JITANON_ERR_TRUNCATED && r->state_.follow) {
        jitanon__clear_error(err);
        return JITANON_AGAIN;
    }
    return res;
}

JITANON_API jitanon_result jitanon_perf_reader_init(jitanon_perf_reader *r, jitanon_read_fn read_fn,
                                                    jitanon_seek_fn seek_fn, void *user,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    return jitanon__pd_exit(r, jitanon__perf_reader_init_impl(r, read_fn, seek_fn, user, opts, err), err);
}

/* -- records ------------------------------------------------------------------------------ */

/* A record refused before it is decoded: err names it as jitanon__pd_bad does. */
JITANON__PRIVATE jitanon_result jitanon__pd_refused(const jitanon_perf_reader *r, uint32_t type, jitanon_result res,
                                                   jitanon_error *err)
{
    if (err) {
        err->record_index = r->stats.records; /* the records before it, COMPRESSED ones too */
        err->record_type = type;
    }
    return res;
}

/* Size of the record at p including a trailing payload: AUXTRACE and HEADER_TRACING_DATA
   are followed, right after their header.size bytes, by as many bytes as the u64
   (AUXTRACE) or u32 (tracing data, padded to 8 by its writer) at byte 8 says.  perf 4.x
   wrote the tracing record as 12 bytes (header, u32 size), newer perf adds a u32 pad: 16.
   JITANON_AGAIN when fewer than *total bytes are available (enough to learn the size
   first, then the whole record).  Errors point at the record's first byte. */
JITANON__PRIVATE jitanon_result jitanon__pd_measure_odd(const jitanon_perf_reader *r, const uint8_t *p, size_t avail,
                                                       uint64_t off, uint32_t type, uint16_t size, size_t *total,
                                                       jitanon_error *err)
{
    uint64_t extra = 0;
    if (size < 8)
        return jitanon__pd_refused(r, type,
                                   JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off,
                                                 "%s record: header.size %u is below 8 (the recording is damaged here)",
                                                 jitanon_perf_record_name(type), (unsigned)size),
                                   err);
    if (type == JITANON_PERF_RECORD_AUXTRACE || type == JITANON_PERF_RECORD_HEADER_TRACING_DATA) {
        size_t need = type == JITANON_PERF_RECORD_AUXTRACE ? JITANON__PERF_AUXTRACE_SIZE : JITANON__PERF_TRACING_MIN;
        if (size < need)
            return jitanon__pd_refused(r, type,
                                       JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off,
                                                     "%s record: header.size %u is below %u (the recording is damaged here)",
                                                     jitanon_perf_record_name(type), (unsigned)size, (unsigned)need),
                                       err);
        *total = need;
        if (avail < need) return JITANON_AGAIN;
        extra = type == JITANON_PERF_RECORD_AUXTRACE ? jitanon__rd64(p + 8, r->big_endian)
                                                     : jitanon__rd32(p + 8, r->big_endian);
        if (extra > r->state_.max_payload)
            return jitanon__pd_refused(r, type,
                                       JITANON__FAIL(err, JITANON_ERR_LIMIT, off,
                                                     "%s record: payload of %U bytes exceeds max_payload (raise it)",
                                                     jitanon_perf_record_name(type), extra),
                                       err);
    }
    *total = (size_t)(size + extra);
    return avail < *total ? JITANON_AGAIN : JITANON_OK;
}

/* The common record (no trailing payload, a sane size) is measured inline. */
JITANON__INLINE jitanon_result jitanon__pd_measure(const jitanon_perf_reader *r, const uint8_t *p, size_t avail,
                                                  uint64_t off, size_t *total, jitanon_error *err)
{
    uint32_t type;
    uint16_t size;
    *total = 8;
    if (avail < 8) return JITANON_AGAIN;
    type = jitanon__rd32(p, r->big_endian);
    size = jitanon__rd16(p + 6, r->big_endian);
    if (size < 8 || type == JITANON_PERF_RECORD_AUXTRACE || type == JITANON_PERF_RECORD_HEADER_TRACING_DATA)
        return jitanon__pd_measure_odd(r, p, avail, off, type, size, total, err);
    *total = size;
    return avail < size ? JITANON_AGAIN : JITANON_OK;
}

/* Position of the id that tells which attr a record belongs to; perf requires every attr
   to agree, so the first attr decides (a sample's id counts u64s from the start, any other
   record's from the end of its trailer). */
JITANON__PRIVATE int jitanon__pd_id_slot(const jitanon_perf_reader *r, int sample, size_t *slot)
{
    uint64_t st;
    if (r->attr_count < 2) return 0;
    st = r->attrs[0].sample_type;
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) *slot = sample ? 0 : 1;
    else if (!(st & JITANON_PERF_SAMPLE_ID)) return 0;
    else if (sample)
        *slot = (st & JITANON_PERF_SAMPLE_IP ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_TID ? 1u : 0u) +
                (st & JITANON_PERF_SAMPLE_TIME ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_ADDR ? 1u : 0u);
    else *slot = 1u + (st & JITANON_PERF_SAMPLE_CPU ? 1u : 0u) + (st & JITANON_PERF_SAMPLE_STREAM_ID ? 1u : 0u);
    if (!sample && !r->attrs[0].sample_id_all) return 0;
    return 1;
}

/* Field f of layout k from the fields at p (0 when absent). */
JITANON__INLINE uint64_t jitanon__pd_f64(const uint8_t *p, const jitanon__perf_lay *l, int k, int f, int big)
{
    return jitanon__rd64(p + l->at[k][f], big) & l->mask[k][f];
}

JITANON__INLINE uint32_t jitanon__pd_f32(const uint8_t *p, const jitanon__perf_lay *l, int k, int f, int big)
{
    return jitanon__rd32(p + l->at[k][f], big) & (uint32_t)l->mask[k][f];
}

/* The sample_id fields of layout k ([0] SAMPLE, [1] trailer) from the fields at p, whose
   caller checked that all the layout's slots are there, and at least one; absent fields
   are 0.  Inlined, so that a caller passing a constant `big` gets plain loads. */
JITANON__INLINE void jitanon__pd_sid_at(const uint8_t *p, const jitanon__perf_lay *l, int k, int big,
                                        jitanon_perf_sample_id *s)
{
    s->pid = jitanon__pd_f32(p, l, k, JITANON__LF_PID, big);
    s->tid = jitanon__pd_f32(p, l, k, JITANON__LF_TID, big);
    s->cpu = jitanon__pd_f32(p, l, k, JITANON__LF_CPU, big);
    s->time = jitanon__pd_f64(p, l, k, JITANON__LF_TIME, big);
    s->id = jitanon__pd_f64(p, l, k, JITANON__LF_ID, big);
    s->stream_id = jitanon__pd_f64(p, l, k, JITANON__LF_STREAM_ID, big);
}

/* A SAMPLE's fixed fields (the common case: one call per input order, each with plain loads). */
JITANON__INLINE void jitanon__pd_sample_at(const uint8_t *p, const jitanon__perf_lay *l, int big, jitanon_perf_record *rec)
{
    jitanon__pd_sid_at(p, l, 0, big, &rec->sid);
    rec->sample.ip = jitanon__pd_f64(p, l, 0, JITANON__LF_IP, big);
    rec->sample.addr = jitanon__pd_f64(p, l, 0, JITANON__LF_ADDR, big);
    rec->sample.period = jitanon__pd_f64(p, l, 0, JITANON__LF_PERIOD, big);
}

/* The sample_id trailer of a non-SAMPLE kernel record; *n shrinks to the body before it. */
JITANON__PRIVATE jitanon_result jitanon__pd_trailer(const jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                   const uint8_t *body, size_t *n, jitanon_error *err)
{
    const jitanon_perf_attr *a;
    size_t slot;
    if (!r->attr_count) return JITANON_OK;
    if (jitanon__pd_id_slot(r, 0, &slot) && *n >= slot * 8)
        rec->attr_index = jitanon__pd_attr_of(r, jitanon__rd64(body + *n - slot * 8, r->big_endian));
    a = &r->attrs[rec->attr_index];
    if (!a->sample_id_all) return JITANON_OK;
    if (a->id_hdr_size > *n)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its sample_id trailer");
    *n -= a->id_hdr_size;
    if (!a->id_hdr_size) return JITANON_OK; /* no fields: sid stays 0 */
    jitanon__pd_sid_at(body + *n, &r->state_.lays[rec->attr_index], 1, r->big_endian, &rec->sid);
    rec->sid.present = a->sample_type & JITANON__PERF_SAMPLE_TRAILER;
    return JITANON_OK;
}

/* Skips the READ part of a sample (layout from read_format). */
JITANON__PRIVATE int jitanon__pd_skip_read(jitanon__cur *c, uint64_t rf)
{
    uint64_t per = 1 + (rf & JITANON__PERF_FORMAT_ID ? 1u : 0u) + (rf & JITANON__PERF_FORMAT_LOST ? 1u : 0u);
    uint64_t hdr = (rf & JITANON__PERF_FORMAT_ENABLED ? 1u : 0u) + (rf & JITANON__PERF_FORMAT_RUNNING ? 1u : 0u);
    uint64_t words = per + hdr;
    if (rf & JITANON__PERF_FORMAT_GROUP) {
        uint64_t nr;
        if (c->left < 8) return 0;
        nr = jitanon__get64(c);
        if (nr > c->left / 8 / per) return 0;
        words = hdr + nr * per;
    }
    return words <= c->left / 8 && jitanon__take(c, (size_t)words * 8) != NULL;
}

/* A SAMPLE whose fields are not read (no attr, or too short): all of them 0. */
JITANON__PRIVATE jitanon_result jitanon__pd_sample_zero(jitanon_perf_record *rec, jitanon_result res)
{
    memset(&rec->sample, 0, sizeof rec->sample);
    memset(&rec->sid, 0, sizeof rec->sid);
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pd_sample(const jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                  jitanon__cur *c, jitanon_error *err)
{
    const jitanon_perf_attr *a;
    const jitanon__perf_lay *l;
    const uint8_t *p = c->p;
    uint64_t st;
    size_t slot;
    /* jitanon__pd_decode leaves sid and sample to this function: every field is set here */
    rec->sample.callchain_nr = 0;
    rec->sample.callchain.data = NULL;
    rec->sample.callchain.size = 0;
    if (!r->attr_count) return jitanon__pd_sample_zero(rec, JITANON_OK);
    if (jitanon__pd_id_slot(r, 1, &slot) && c->left / 8 > slot)
        rec->attr_index = jitanon__pd_attr_of(r, jitanon__rd64(c->p + slot * 8, r->big_endian));
    a = &r->attrs[rec->attr_index];
    l = &r->state_.lays[rec->attr_index];
    st = a->sample_type;
    if (!jitanon__take(c, 8u * l->fixed))
        return jitanon__pd_sample_zero(
            rec, jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its sample_type fields"));
    if (!l->fixed) jitanon__pd_sample_zero(rec, JITANON_OK); /* no fields to load */
    else if (c->big) jitanon__pd_sample_at(p, l, 1, rec);
    else jitanon__pd_sample_at(p, l, 0, rec);
    rec->sid.present = st & JITANON__PERF_SAMPLE_TRAILER;
    if ((st & JITANON_PERF_SAMPLE_READ) && !jitanon__pd_skip_read(c, a->read_format))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "read values run past the record");
    if (st & JITANON_PERF_SAMPLE_CALLCHAIN) {
        uint64_t nr = c->left >= 8 ? jitanon__get64(c) : UINT64_MAX;
        if (nr > c->left / 8)
            return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "callchain runs past the record");
        rec->sample.callchain_nr = nr;
        rec->sample.callchain.data = c->p;
        rec->sample.callchain.size = (size_t)nr * 8;
    }
    return JITANON_OK;
}

/* Whether an MMAP2 without a build id, read up to ino_generation, has the first layout,
   where the file name follows at once.  Sizes cannot tell: the name is padded to 8 bytes,
   so a name of 8 or more bytes read 8 bytes later still ends in the padding.  What does
   tell: a kernel sets only PROT_READ, PROT_WRITE and PROT_EXEC in prot (at most 7), while
   the first 4 bytes of a name hold a character above 7 ('/', '[').  An empty name is 8
   bytes that today's layout cannot hold: prot, flags and no room for a NUL. */
JITANON__PRIVATE int jitanon__pd_mmap2_first(const jitanon__cur *c)
{
    return c->left == 8 || (c->left > 8 && jitanon__rd32(c->p, c->big) > 7);
}

JITANON__PRIVATE jitanon_result jitanon__pd_mmap(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    jitanon_perf_mmap *m = &rec->mmap;
    int two = rec->type == JITANON_PERF_RECORD_MMAP2;
    if (c->left < (two ? JITANON__PERF_MMAP2_FIXED : JITANON__PERF_MMAP_FIXED) - 8u)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its fixed part");
    m->pid = jitanon__get32(c);
    m->tid = jitanon__get32(c);
    m->start = jitanon__get64(c);
    m->len = jitanon__get64(c);
    m->pgoff = jitanon__get64(c);
    if (two && (rec->misc & JITANON_PERF_MISC_MMAP_BUILD_ID)) {
        const uint8_t *b = jitanon__take(c, 24);
        m->has_build_id = 1;
        m->build_id_size = b[0] <= 20 ? b[0] : 20;
        m->build_id = b + 4;
    } else if (two) {
        m->maj = jitanon__get32(c);
        m->min = jitanon__get32(c);
        m->ino = jitanon__get64(c);
        m->ino_generation = jitanon__get64(c);
        m->first_layout = jitanon__pd_mmap2_first(c);
    }
    if (two && !m->first_layout) {
        m->prot = jitanon__get32(c);
        m->flags = jitanon__get32(c);
    }
    if (!jitanon__take_cstr(c, &m->filename))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "file name is not NUL-terminated");
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pd_comm(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    rec->comm.pid = jitanon__get32(c);
    rec->comm.tid = jitanon__get32(c);
    if (!jitanon__take_cstr(c, &rec->comm.comm))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "comm is not NUL-terminated");
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__pd_task(jitanon_perf_record *rec, jitanon__cur *c)
{
    rec->task.pid = jitanon__get32(c);
    rec->task.ppid = jitanon__get32(c);
    rec->task.tid = jitanon__get32(c);
    rec->task.ptid = jitanon__get32(c);
    rec->task.time = jitanon__get64(c);
}

JITANON__PRIVATE void jitanon__pd_time_conv(jitanon_perf_record *rec, jitanon__cur *c)
{
    rec->time_conv.time_shift = jitanon__get64(c);
    rec->time_conv.time_mult = jitanon__get64(c);
    rec->time_conv.time_zero = jitanon__get64(c);
    /* The extended part exists only in newer files: header.size says whether it is there. */
    if (c->left < 24) return;
    rec->time_conv.extended = 1;
    rec->time_conv.time_cycles = jitanon__get64(c);
    rec->time_conv.time_mask = jitanon__get64(c);
    rec->time_conv.cap_user_time_zero = c->p[0];
    rec->time_conv.cap_user_time_short = c->p[1];
}

JITANON__PRIVATE jitanon_result jitanon__pd_id_index(jitanon_perf_record *rec, jitanon__cur *c, jitanon_error *err)
{
    uint64_t nr = jitanon__get64(c);
    if (nr > c->left / 32)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "nr entries do not fit in the record");
    rec->id_index.nr = nr;
    rec->id_index.entries.data = c->p;
    rec->id_index.entries.size = (size_t)nr * 32;
    jitanon__take(c, (size_t)nr * 32);
    rec->id_index.has_vm = nr && c->left / 16 >= nr;
    return JITANON_OK;
}

/* Pipe mode: {header, attr of attr.size bytes, u64 ids[]}. */
JITANON__PRIVATE jitanon_result jitanon__pd_header_attr(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                       jitanon__cur *c, jitanon_error *err)
{
    uint32_t asize;
    size_t n;
    uint64_t *ids;
    jitanon_result res;
    asize = jitanon__pd_attr_size(c->p, r->big_endian);
    if (asize < JITANON__PERF_ATTR_VER0 || asize > c->left || (c->left - asize) % 8)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "attr.size does not fit the record");
    n = (c->left - asize) / 8;
    if ((res = jitanon__pd_decode_ids(r, c->p + asize, n, rec->offset, &ids, err)) != JITANON_OK) return res;
    if ((res = jitanon__pd_add_attr(r, c->p, asize, ids, n, rec->offset, err)) != JITANON_OK) return res;
    rec->attr_index = r->attr_count - 1;
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__pd_feature(jitanon_perf_reader *r, jitanon_perf_record *rec, jitanon__cur *c)
{
    rec->feature.feat_id = jitanon__get64(c);
    rec->feature.data.data = c->p;
    rec->feature.data.size = c->left;
    /* In a file the header's bitmap sizes the feature table: a stray record must not
       change it.  In a pipe these records are the features. */
    if (r->mode == JITANON_PERF_PIPE && rec->feature.feat_id < JITANON_PERF_FEAT_BITS)
        r->features[rec->feature.feat_id / 64] |= 1ull << (rec->feature.feat_id % 64);
}

/* {kind, id, data}: NAME and UNIT hold a NUL-terminated string.  A body too short for
   kind and id is left zero and passes through by size, as it did before it was decoded. */
JITANON__PRIVATE void jitanon__pd_event_update(const jitanon_perf_reader *r, jitanon_perf_record *rec, jitanon__cur *c)
{
    const uint8_t *nul;
    if (c->left < 16) return;
    rec->event_update.kind = jitanon__get64(c);
    rec->event_update.id = jitanon__get64(c);
    rec->attr_index = jitanon__pd_attr_of(r, rec->event_update.id);
    rec->event_update.data.data = c->p;
    rec->event_update.data.size = c->left;
    if (rec->event_update.kind != JITANON_PERF_EVENT_UPDATE_NAME && rec->event_update.kind != JITANON_PERF_EVENT_UPDATE_UNIT)
        return;
    nul = c->left ? (const uint8_t *)memchr(c->p, 0, c->left) : NULL;
    rec->event_update.text.data = (const char *)c->p;
    rec->event_update.text.length = nul ? (size_t)(nul - c->p) : c->left;
}

/* A LOST shorter than its two fields passes as before, its fields 0. */
JITANON__PRIVATE void jitanon__pd_lost(jitanon_perf_record *rec, jitanon__cur *c)
{
    if (c->left < 16) return;
    rec->lost.id = jitanon__get64(c);
    rec->lost.lost = jitanon__get64(c);
}

/* Bytes of a body before anything variable: the decoders above read them unchecked. */
JITANON__PRIVATE size_t jitanon__pd_fixed(uint32_t type)
{
    switch (type) {
    case JITANON_PERF_RECORD_COMM:
    case JITANON_PERF_RECORD_ID_INDEX:
    case JITANON_PERF_RECORD_HEADER_FEATURE: return 8;
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT:
    case JITANON_PERF_RECORD_TIME_CONV: return 24;
    case JITANON_PERF_RECORD_HEADER_ATTR: return JITANON__PERF_ATTR_VER0;
    default: return 0; /* SAMPLE and MMAP check their own layouts */
    }
}

/* Per-type decoding; c covers the body (after the 8-byte header, before the trailer). */
JITANON__PRIVATE jitanon_result jitanon__pd_body(jitanon_perf_reader *r, jitanon_perf_record *rec, jitanon__cur *c,
                                                jitanon_error *err)
{
    if (rec->type == JITANON_PERF_RECORD_SAMPLE) return jitanon__pd_sample(r, rec, c, err); /* most records */
    if (c->left < jitanon__pd_fixed(rec->type))
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec, "shorter than its fixed part");
    switch (rec->type) {
    case JITANON_PERF_RECORD_MMAP:
    case JITANON_PERF_RECORD_MMAP2: return jitanon__pd_mmap(rec, c, err);
    case JITANON_PERF_RECORD_COMM: return jitanon__pd_comm(rec, c, err);
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT: jitanon__pd_task(rec, c); return JITANON_OK;
    case JITANON_PERF_RECORD_TIME_CONV: jitanon__pd_time_conv(rec, c); return JITANON_OK;
    case JITANON_PERF_RECORD_ID_INDEX: return jitanon__pd_id_index(rec, c, err);
    case JITANON_PERF_RECORD_HEADER_ATTR: return jitanon__pd_header_attr(r, rec, c, err);
    case JITANON_PERF_RECORD_HEADER_FEATURE: jitanon__pd_feature(r, rec, c); return JITANON_OK;
    case JITANON_PERF_RECORD_EVENT_UPDATE: jitanon__pd_event_update(r, rec, c); return JITANON_OK;
    case JITANON_PERF_RECORD_LOST: jitanon__pd_lost(rec, c); return JITANON_OK;
    default: return JITANON_OK; /* passed through by size */
    }
}

/* first_time 0 is "none yet": t <= first_time - 1 is true for any t then, else t < first_time. */
JITANON__INLINE void jitanon__pd_count_time(jitanon_perf_stats *st, uint64_t t)
{
    if (t <= st->first_time - 1) st->first_time = t;
    if (t > st->last_time) st->last_time = t;
}

JITANON__PRIVATE void jitanon__pd_count(jitanon_perf_stats *st, const jitanon_perf_record *rec)
{
    st->records++;
    if (rec->type < 128) st->by_type[rec->type]++;
    if (rec->sid.present & JITANON_PERF_SAMPLE_TIME) jitanon__pd_count_time(st, rec->sid.time);
}

/* A record's header as one u64 load `h`: type in its first 4 bytes, misc and size after. */
JITANON__INLINE uint32_t jitanon__pd_h_type(uint64_t h, int big) { return (uint32_t)(big ? h >> 32 : h); }
JITANON__INLINE uint32_t jitanon__pd_h_size(uint64_t h, int big) { return (uint32_t)(big ? h : h >> 48) & 0xffffu; }

/* What every record takes from its header `h` and place (the member of its type aside). */
JITANON__INLINE void jitanon__pd_head(const jitanon_perf_reader *r, jitanon_perf_record *rec, const uint8_t *p,
                                      uint64_t h, size_t total, uint64_t off, int big)
{
    uint32_t size = jitanon__pd_h_size(h, big);
    rec->type = jitanon__pd_h_type(h, big);
    rec->misc = (uint16_t)(big ? h >> 16 : h >> 32);
    rec->size = (uint16_t)size;
    rec->big_endian = big;
    rec->raw.data = p;
    rec->raw.size = total;
    rec->offset = off;
    rec->index = r->stats.records;
    rec->from_compressed = 0;
    rec->attr_index = 0;
    rec->payload.data = total > size ? p + size : NULL;
    rec->payload.size = total > size ? total - size : 0;
}

/* The common record on a short path: a SAMPLE whole in the buffer, of a recording with one
   attr (no id to look up) with sample fields and no READ values, nothing decompressed
   pending.  Those conditions change, and the buffer moves, only on the general path (and
   in _load_features), so each works them out once when it returns: how many of the
   buffered bytes SAMPLEs may take on the short path (those before a file's data section
   ends; 0: none) and what every one of them needs. */
JITANON__PRIVATE void jitanon__pd_fast_setup(jitanon_perf_reader *r)
{
    uint64_t end, st, off = r->state_.in.off;
    r->state_.fast_lim = 0;
    if (r->attr_count != 1 || r->state_.done || r->state_.dpos != r->state_.dbuf.size || !r->state_.lays[0].fixed)
        return;
    st = r->attrs[0].sample_type;
    if (st & JITANON_PERF_SAMPLE_READ) return;
    /* a file's data section (size 0, read to the end: none, as off >= data_offset) */
    end = r->mode == JITANON_PERF_FILE ? r->data_offset + r->data_size : UINT64_MAX;
    if (off >= end) return;
    r->state_.fast_lim = r->state_.in.pos + (end - off < jitanon__pd_avail(r) ? (size_t)(end - off) : jitanon__pd_avail(r));
    r->state_.fast_min = 8u + 8u * r->state_.lays[0].fixed;
    r->state_.fast_present = st & JITANON__PERF_SAMPLE_TRAILER;
    r->state_.fast_chain = (st & JITANON_PERF_SAMPLE_CALLCHAIN) != 0;
}

/* The short path's record at p, of which `left` bytes (at least 8) may be taken; `big` is
   a constant after inlining.  0 leaves the record to the general path
   (jitanon__pd_decode), which decodes it the same way and reports what is wrong with it.
   Its stores are what it costs: nothing is stored twice, or per record in the reader
   but what the record changes. */
JITANON__INLINE int jitanon__pd_sample_fast(jitanon_perf_reader *r, jitanon_perf_record *rec, const uint8_t *p,
                                           size_t left, int big)
{
    uint64_t h = jitanon__rd64(p, big), nr = 0;
    size_t size = jitanon__pd_h_size(h, big), min = r->state_.fast_min;
    int chain = r->state_.fast_chain;
    if (jitanon__pd_h_type(h, big) != JITANON_PERF_RECORD_SAMPLE || size > left || size < min) return 0;
    if (chain) { /* right after the fixed fields */
        nr = size - min >= 8 ? jitanon__rd64(p + min, big) : UINT64_MAX;
        if (nr > (size - min - 8) / 8) return 0;
    }
    rec->sample.callchain_nr = nr;
    rec->sample.callchain.data = chain ? p + min + 8 : NULL;
    rec->sample.callchain.size = (size_t)nr * 8;
    jitanon__pd_head(r, rec, p, h, size, r->state_.in.off, big);
    jitanon__pd_sample_at(p + 8, r->state_.lays, big, rec);
    rec->sid.present = r->state_.fast_present;
    r->stats.records++;
    r->stats.by_type[JITANON_PERF_RECORD_SAMPLE]++;
    if (rec->sid.present & JITANON_PERF_SAMPLE_TIME) jitanon__pd_count_time(&r->stats, rec->sid.time);
    jitanon__in_consume(&r->state_.in, size);
    return 1;
}

JITANON__INLINE int jitanon__pd_next_sample(jitanon_perf_reader *r, jitanon_perf_record *rec)
{
    size_t pos = r->state_.in.pos, lim = r->state_.fast_lim;
    const uint8_t *p;
    if (pos + 8 > lim) return 0; /* also when lim is below pos: never left so, but cheap */
    p = r->state_.in.buf + pos;
    return r->big_endian ? jitanon__pd_sample_fast(r, rec, p, lim - pos, 1)
                         : jitanon__pd_sample_fast(r, rec, p, lim - pos, 0);
}

/* Decodes a complete record of `total` bytes at p (input offset `off`), counting nothing:
   also what the injector uses to decode a record it buffered once more (on_sample,
   on_event). */
JITANON__PRIVATE jitanon_result jitanon__pd_decode_at(jitanon_perf_reader *r, const uint8_t *p, size_t total,
                                                     uint64_t off, jitanon_perf_record *rec, jitanon_error *err)
{
    jitanon__cur c;
    size_t n;
    jitanon_result res;
    uint32_t type = jitanon__rd32(p, r->big_endian);
    /* Set the common part and clear only the member this type uses: a memset of the
       whole 400-byte record was a third of the scan time. */
    jitanon__pd_head(r, rec, p, jitanon__rd64(p, r->big_endian), total, off, r->big_endian);
    if (type != JITANON_PERF_RECORD_SAMPLE) memset(&rec->sid, 0, sizeof rec->sid);
    switch (type) {
    case JITANON_PERF_RECORD_SAMPLE: break; /* jitanon__pd_sample sets sid and sample */
    case JITANON_PERF_RECORD_MMAP:
    case JITANON_PERF_RECORD_MMAP2: memset(&rec->mmap, 0, sizeof rec->mmap); break;
    case JITANON_PERF_RECORD_COMM: memset(&rec->comm, 0, sizeof rec->comm); break;
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT: memset(&rec->task, 0, sizeof rec->task); break;
    default: memset(&rec->mmap, 0, sizeof *rec - offsetof(jitanon_perf_record, mmap));
    }
    n = (size_t)rec->size - 8;
    if (rec->type < 64 && rec->type != JITANON_PERF_RECORD_SAMPLE &&
        (res = jitanon__pd_trailer(r, rec, p + 8, &n, err)) != JITANON_OK)
        return res;
    c = jitanon__cur_make(p + 8, n, off + 8, r->big_endian);
    return jitanon__pd_body(r, rec, &c, err);
}

/* Decodes the next record and counts it. */
JITANON__PRIVATE jitanon_result jitanon__pd_decode(jitanon_perf_reader *r, const uint8_t *p, size_t total, uint64_t off,
                                                  jitanon_perf_record *rec, jitanon_error *err)
{
    jitanon_result res = jitanon__pd_decode_at(r, p, total, off, rec, err);
    if (res != JITANON_OK) return res;
    jitanon__pd_count(&r->stats, rec);
    return JITANON_OK;
}

/* The input ends inside the record at `off` (`bad` NULL; `total` bytes wanted), or (data
   size 0) the data ends in bytes that are no record (`bad`): the records before it are
   all there is.  JITANON_END after counting what is left, or the error with strict. */
JITANON__PRIVATE jitanon_result jitanon__pd_cut(jitanon_perf_reader *r, uint64_t off, size_t total,
                                               const jitanon_error *bad, jitanon_error *err)
{
    jitanon_error cut;
    jitanon_result res;
    if (bad) { /* its code and offset are the damage's */
        cut = *bad;
        cut.offset = off;
    } else {
        size_t avail = jitanon__pd_avail(r);
        const uint8_t *p = r->state_.in.buf + r->state_.in.pos;
        const char *type = avail >= 4 ? jitanon_perf_record_name(jitanon__rd32(p, r->big_endian)) : NULL;
        jitanon__pd_part part = jitanon__pd_part_make("", off, avail >= 8 ? total : 0);
        if (avail >= 8) jitanon__fmt(part.name, sizeof part.name, "a %s record", type);
        else if (avail >= 4) jitanon__fmt(part.name, sizeof part.name, "the 8-byte header of a %s record", type);
        else if (avail) jitanon__fmt(part.name, sizeof part.name, "the 8-byte header of a record");
        else part = jitanon__pd_part_make("the data section", r->data_offset, r->data_size); /* between records */
        if (avail && r->mode == JITANON_PERF_FILE) part.section = "the data section";
        jitanon__pd_short(r, &part, off + avail, &cut);
    }
    res = jitanon__pd_recover(r, JITANON_PERF_WARN_CUT, cut.type, cut.offset, cut.info, err);
    if (res != JITANON_OK) return res;
    jitanon__clear_error(err);
    do { /* what follows is read only to count it */
        r->bytes_ignored += jitanon__pd_avail(r);
        jitanon__in_consume(&r->state_.in, jitanon__pd_avail(r));
        r->state_.in.pos = r->state_.in.len = 0;
    } while (!r->state_.eof && jitanon__pd_fill(r, 1, NULL) == JITANON_OK);
    return JITANON_END;
}

/* Followed input (opts.follow) at the end of what it holds now.  perf record writes a
   file's data size (and feature bitmap) into its header when it finishes, after the data
   and the features: so the header of a seekable file still unsized is read again (the
   input put back where it was), and once it has the size the data is bounded by it - all
   of it is there by then.  JITANON_OK: bounded now, read on; JITANON_AGAIN: come back
   later (the end is not final: the input is read again then). */
JITANON__PRIVATE jitanon_result jitanon__pd_follow(jitanon_perf_reader *r, jitanon_error *err)
{
    uint8_t h[JITANON__PERF_FILE_HEADER];
    size_t got = 0, n = 1;
    uint64_t at = r->state_.in.off + jitanon__pd_avail(r), size, end; /* at: where the read function is */
    jitanon__input *in = &r->state_.in;
    int big = r->big_endian;
    r->state_.eof = 0;
    if (r->mode != JITANON_PERF_FILE || !r->state_.unsized || !r->state_.seek_fn) return JITANON_AGAIN;
    if (r->state_.seek_fn(in->user, 0)) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot seek to byte 0 (the header)");
    while (got < sizeof h && n) {
        n = in->read_fn(in->user, h + got, sizeof h - got);
        if (n > sizeof h - got) return JITANON__FAIL(err, JITANON_ERR_IO, got, "cannot read the header again");
        got += n;
    }
    if (r->state_.seek_fn(in->user, at)) return JITANON__FAIL(err, JITANON_ERR_IO, at, "cannot seek back to byte %U", at);
    if (got < 56 || jitanon__rd64(h + 40, big) != r->data_offset || !(size = jitanon__rd64(h + 48, big)))
        return JITANON_AGAIN;
    if (!jitanon__add_u64(r->data_offset, size, &end))
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 48, "data section size %U overflows", size);
    r->data_size = size;
    r->state_.unsized = 0;
    if (got == sizeof h && jitanon__rd64(h + 8, big) == JITANON__PERF_FILE_HEADER) {
        unsigned i;
        for (i = 0; i < 4; i++) r->features[i] = jitanon__rd64(h + 72 + 8 * i, big);
    }
    return JITANON_OK;
}

/* The next record from the input itself (before decompression). */
JITANON__PRIVATE jitanon_result jitanon__pd_next_raw(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err)
{
    uint64_t off = r->state_.in.off, end = r->data_offset + r->data_size;
    size_t total;
    int bounded = r->mode == JITANON_PERF_FILE; /* data size 0 (perf record killed): unsized_, to the end */
    jitanon_result res;
    if (bounded && off >= end) return JITANON_END;
    while ((res = jitanon__pd_measure(r, r->state_.in.buf + r->state_.in.pos, jitanon__pd_avail(r), off, &total, err)) == JITANON_AGAIN) {
        res = jitanon__pd_fill(r, total, err);
        if (res == JITANON_END && r->state_.follow) break; /* nothing consumed: resumes here */
        if (res == JITANON_END && !jitanon__pd_avail(r) && (!bounded || r->state_.unsized)) return JITANON_END;
        if (res == JITANON_END) return jitanon__pd_cut(r, off, total, NULL, err);
        if (res != JITANON_OK) return res;
    }
    /* Followed: the end of what there is; or, still unsized, bytes that are no record - the
       features perf writes when it finishes, before the header that says where the data
       ends: damage only if the header, read again, leaves them in the data. */
    if (r->state_.follow &&
        (res == JITANON_END || (r->state_.unsized && res != JITANON_OK && res != JITANON_ERR_LIMIT))) {
        jitanon__clear_error(err);
        res = jitanon__pd_follow(r, err);
        return res == JITANON_OK ? jitanon__pd_next_raw(r, rec, err) : res; /* bounded now: once */
    }
    if (res != JITANON_OK && r->state_.unsized && res != JITANON_ERR_LIMIT) return jitanon__pd_cut(r, off, 0, err, err);
    if (res != JITANON_OK) return res;
    if (bounded && total > end - off)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off, "record of %U bytes runs past the data section end %U",
                             (uint64_t)total, end);
    res = jitanon__pd_decode(r, r->state_.in.buf + r->state_.in.pos, total, off, rec, err);
    if (res == JITANON_OK) jitanon__in_consume(&r->state_.in, total);
    return res;
}

/* Whether compressed records come out decompressed (then the output is plain). */
JITANON__PRIVATE int jitanon__pd_decompresses(const jitanon_perf_reader *r) { return r->state_.decompress || JITANON__ZSTD; }

/* Feeds a COMPRESSED/COMPRESSED2 payload to the decompressor hook or the built-in zstd
   decoder, which carries the stream from record to record. */
JITANON__PRIVATE jitanon_result jitanon__pd_inflate(jitanon_perf_reader *r, const jitanon_perf_record *rec,
                                                   jitanon_error *err)
{
    const uint8_t *src = rec->raw.data + 8;
    size_t n = (size_t)rec->size - 8;
    uint64_t src_off = rec->offset + 8;
    if (!jitanon__pd_decompresses(r))
        return jitanon__pd_bad(err, JITANON_ERR_COMPRESSED, rec->offset, rec,
                               "from perf record -z: this build left out zstd (JITANON_NO_ZSTD); re-record without -z");
    if (rec->type == JITANON_PERF_RECORD_COMPRESSED2) {
        uint64_t data_size = n >= 8 ? jitanon__rd64(src, r->big_endian) : UINT64_MAX;
        if (data_size > n - 8)
            return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset + 8, rec, "data_size is larger than the record");
        src += 8;
        src_off += 8;
        n = (size_t)data_size;
    }
    if (r->state_.dpos) { /* keep only the undelivered tail: a record may straddle two payloads */
        memmove(r->state_.dbuf.data, r->state_.dbuf.data + r->state_.dpos, r->state_.dbuf.size - r->state_.dpos);
        r->state_.dbuf.size -= r->state_.dpos;
        r->state_.dpos = 0;
    }
    if (r->state_.decompress) {
        if (r->state_.decompress(r->state_.decompress_user, src, n, &r->state_.dbuf))
            return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, rec->offset, rec,
                                   "decompressor failed (corrupt payload or out of memory)");
    } else {
#if JITANON__ZSTD
        jitanon_result res = JITANON_OK;
        if (!r->state_.zstd) res = jitanon__zstd_create(&r->state_.allocator, r->state_.max_zstd_window, 1, &r->state_.zstd, err);
        if (res == JITANON_OK) res = jitanon__zstd_feed(r->state_.zstd, src, n, src_off, &r->state_.dbuf, err);
        if (res != JITANON_OK) {
            if (err) {
                err->record_index = rec->index;
                err->record_type = rec->type;
            }
            return res;
        }
#else
        (void)src_off;
#endif
    }
    r->state_.doff = rec->offset;
    r->stats.compressed_records++;
    return JITANON_OK;
}

/* A record from the decompressed bytes; JITANON_AGAIN when none is complete. */
JITANON__PRIVATE jitanon_result jitanon__pd_next_inflated(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                         jitanon_error *err)
{
    const uint8_t *p;
    size_t total, avail = r->state_.dbuf.size - r->state_.dpos;
    jitanon_result res;
    if (!avail) return JITANON_AGAIN; /* before the pointer: dbuf_.data may still be NULL */
    p = r->state_.dbuf.data + r->state_.dpos;
    res = jitanon__pd_measure(r, p, avail, r->state_.doff, &total, err);
    if (res != JITANON_OK) return res;
    res = jitanon__pd_decode(r, p, total, r->state_.doff, rec, err);
    if (res != JITANON_OK) return res;
    if (rec->type == JITANON_PERF_RECORD_COMPRESSED || rec->type == JITANON_PERF_RECORD_COMPRESSED2)
        return jitanon__pd_bad(err, JITANON_ERR_BAD_RECORD, r->state_.doff, rec, "compressed record inside compressed data");
    rec->from_compressed = 1;
    r->state_.dpos += total;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__perf_reader_next_impl(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                               jitanon_error *err)
{
    jitanon_result res;
    if (!r->mode) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "reader not initialised");
    for (;;) {
        if (r->state_.done) return JITANON_END;
        res = jitanon__pd_next_inflated(r, rec, err);
        if (res != JITANON_AGAIN) return res;
        res = jitanon__pd_next_raw(r, rec, err);
        if (res == JITANON_END) {
            r->state_.done = 1;
#if JITANON__ZSTD
            if (r->state_.zstd && (res = jitanon__zstd_end(r->state_.zstd, r->state_.in.off, err)) != JITANON_OK) return res;
            res = JITANON_END;
#endif
            if (r->state_.dbuf.size > r->state_.dpos)
                return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, r->state_.doff, "decompressed data ends inside a record");
        }
        if (res != JITANON_OK) return res;
        if (rec->type != JITANON_PERF_RECORD_COMPRESSED && rec->type != JITANON_PERF_RECORD_COMPRESSED2) return JITANON_OK;
        if ((res = jitanon__pd_inflate(r, rec, err)) != JITANON_OK) return res;
    }
}

/* The general path with what the public function does on it, out of line: the short one
   then needs no stack frame. */
JITANON__NOINLINE jitanon_result jitanon__pd_next_slow(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                       jitanon_error *err)
{
    jitanon_result res = jitanon__pd_exit(r, jitanon__perf_reader_next_impl(r, rec, err), err);
    jitanon__pd_fast_setup(r);
    return res;
}

JITANON_API jitanon_result jitanon_perf_reader_next(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err)
{
    JITANON_ASSERT(r && rec);
    if (jitanon__pd_next_sample(r, rec)) return JITANON_OK;
    return jitanon__pd_next_slow(r, rec, err);
}

/* -- feature sections -------------------------------------------------------------------- */

/* perf's name of a feature bit (its header.h enum), for messages; NULL for a bit it
   does not know. */
JITANON__PRIVATE const char *jitanon__pd_feat_name(uint32_t bit)
{
    static const char *const name[] = {
        "HEADER_RESERVED", "HEADER_TRACING_DATA", "HEADER_BUILD_ID", "HEADER_HOSTNAME", "HEADER_OSRELEASE",
        "HEADER_VERSION", "HEADER_ARCH", "HEADER_NRCPUS", "HEADER_CPUDESC", "HEADER_CPUID", "HEADER_TOTAL_MEM",
        "HEADER_CMDLINE", "HEADER_EVENT_DESC", "HEADER_CPU_TOPOLOGY", "HEADER_NUMA_TOPOLOGY", "HEADER_BRANCH_STACK",
        "HEADER_PMU_MAPPINGS", "HEADER_GROUP_DESC", "HEADER_AUXTRACE", "HEADER_STAT", "HEADER_CACHE",
        "HEADER_SAMPLE_TIME", "HEADER_MEM_TOPOLOGY", "HEADER_CLOCKID", "HEADER_DIR_FORMAT", "HEADER_BPF_PROG_INFO",
        "HEADER_BPF_BTF", "HEADER_COMPRESSED", "HEADER_CPU_PMU_CAPS", "HEADER_CLOCK_DATA", "HEADER_HYBRID_TOPOLOGY",
        "HEADER_PMU_CAPS"};
    return bit < sizeof name / sizeof name[0] ? name[bit] : NULL;
}

/* Reads the table at data end: one {offset, size} per set bit, in bit order. */
JITANON__PRIVATE jitanon_result jitanon__pd_feat_table(jitanon_perf_reader *r, size_t n, uint64_t *total,
                                                      jitanon_error *err)
{
    uint8_t e[16];
    unsigned bit;
    size_t i = 0;
    uint64_t at = r->data_offset + r->data_size, end;
    jitanon__pd_part part = jitanon__pd_part_make("the feature table", at, 16 * (uint64_t)n);
    void *mem;
    jitanon_result res = jitanon__pd_alloc(r, (uint64_t)n * sizeof *r->state_.feats, at, &mem, err);
    if (res != JITANON_OK) return res;
    r->state_.feats = (jitanon__perf_feat *)mem;
    r->state_.feat_count = n;
    memset(r->state_.feats, 0, n * sizeof *r->state_.feats);
    *total = 0;
    for (bit = 0; bit < JITANON_PERF_FEAT_BITS; bit++) {
        jitanon__perf_feat *f = &r->state_.feats[i];
        if (!(r->features[bit / 64] >> (bit % 64) & 1)) continue;
        if ((res = jitanon__pd_read_at(r, at + 16 * i, e, 16, &part, err)) != JITANON_OK) return res;
        f->bit = bit;
        f->offset = jitanon__rd64(e, r->big_endian);
        f->size = jitanon__rd64(e + 8, r->big_endian);
        jitanon__pd_promise(r, f->offset, f->size);
        i++;
        if (!jitanon__add_u64(f->offset, f->size, &end) || f->size > r->state_.max_header_bytes ||
            !jitanon__add_u64(*total, f->size, total))
            return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, at + 16 * (i - 1), "bad feature %u section", bit);
    }
    return JITANON_OK;
}

/* Index of the not-yet-loaded section with the lowest offset: a forward-only input can
   then read them all in one pass. */
JITANON__PRIVATE size_t jitanon__pd_next_feat(const jitanon_perf_reader *r, const uint8_t *done)
{
    size_t i, best = r->state_.feat_count;
    for (i = 0; i < r->state_.feat_count; i++)
        if (!done[i] && (best == r->state_.feat_count || r->state_.feats[i].offset < r->state_.feats[best].offset)) best = i;
    return best;
}

JITANON__PRIVATE jitanon_result jitanon__pd_feat_payloads(jitanon_perf_reader *r, uint64_t total, jitanon_error *err)
{
    uint8_t done[JITANON_PERF_FEAT_BITS];
    size_t k, pos = 0;
    void *mem;
    jitanon_result res = jitanon__pd_alloc(r, total, r->data_offset + r->data_size, &mem, err);
    if (res != JITANON_OK) return res;
    r->state_.feat_mem = (uint8_t *)mem;
    r->state_.feat_mem_size = (size_t)total;
    memset(done, 0, sizeof done);
    for (k = 0; k < r->state_.feat_count; k++) {
        size_t i = jitanon__pd_next_feat(r, done);
        jitanon__perf_feat *f = &r->state_.feats[i];
        jitanon__pd_part part = jitanon__pd_part_make("", f->offset, f->size);
        const char *name = jitanon__pd_feat_name(f->bit);
        if (name) jitanon__fmt(part.name, sizeof part.name, "the feature section %s", name);
        else jitanon__fmt(part.name, sizeof part.name, "the feature section of bit %u", (unsigned)f->bit);
        res = jitanon__pd_read_at(r, f->offset, r->state_.feat_mem + pos, (size_t)f->size, &part, err);
        if (res != JITANON_OK) return res;
        done[i] = 1;
        f->mem_off = pos;
        pos += (size_t)f->size;
    }
    return JITANON_OK;
}

/* Feature sections that cannot be read (a file cut short, a garbage table) are treated
   as absent, as a recording without them: err says why, unless strict refuses it. */
JITANON__PRIVATE jitanon_result jitanon__pd_feat_drop(jitanon_perf_reader *r, jitanon_error *err)
{
    char what[128];
    jitanon_result res;
    jitanon__fmt(what, sizeof what, "%s", err->info); /* its code and offset are the damage's */
    res = jitanon__pd_recover(r, JITANON_PERF_WARN_FEATURES, err->type, err->offset, what, err);
    if (res != JITANON_OK) return res;
    jitanon__counted_give(&r->state_.header_mem, r->state_.feat_count * sizeof *r->state_.feats + r->state_.feat_mem_size);
    jitanon__free(&r->state_.allocator, r->state_.feats, r->state_.feat_count * sizeof *r->state_.feats);
    jitanon__free(&r->state_.allocator, r->state_.feat_mem, r->state_.feat_mem_size);
    r->state_.feats = NULL;
    r->state_.feat_mem = NULL;
    r->state_.feat_count = r->state_.feat_mem_size = 0;
    memset(r->features, 0, sizeof r->features);
    jitanon__clear_error(err);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__perf_reader_load_features_impl(jitanon_perf_reader *r, jitanon_error *err)
{
    uint64_t saved = r->state_.in.off, total = 0;
    size_t n = jitanon__pd_feat_count(r->features);
    jitanon_error e;
    jitanon_result res;
    jitanon__clear_error(err);
    if (r->mode != JITANON_PERF_FILE || r->features_loaded) return JITANON_OK;
    if (r->state_.feats) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, saved, "an earlier load failed");
    if (!n) {
        r->features_loaded = 1;
        return JITANON_OK;
    }
    if (!r->state_.seek_fn && !r->state_.done)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, saved,
                             "feature sections follow the data; without a seek callback load them after the last record");
    memset(&e, 0, sizeof e);
    res = jitanon__pd_feat_table(r, n, &total, &e);
    if (res == JITANON_OK) res = jitanon__pd_feat_payloads(r, total, &e);
    if (res != JITANON_OK && res != JITANON_ERR_NOMEM) res = jitanon__pd_feat_drop(r, &e);
    if (res != JITANON_OK && err) *err = e;
    /* Back to the records even when loading failed, so reading goes on where it was. */
    if (!r->state_.done) {
        jitanon_error ignored;
        jitanon__pd_part part = jitanon__pd_part_make("the data section", r->data_offset, r->data_size);
        jitanon_result back = jitanon__pd_goto(r, saved, &part, res == JITANON_OK ? err : &ignored);
        if (res == JITANON_OK) res = back;
    }
    if (res == JITANON_OK) r->features_loaded = 1;
    return res;
}

JITANON_API jitanon_result jitanon_perf_reader_load_features(jitanon_perf_reader *r, jitanon_error *err)
{
    jitanon_result res;
    r->state_.fast_lim = 0; /* it moves the buffer */
    res = jitanon__pd_exit(r, jitanon__perf_reader_load_features_impl(r, err), err);
    jitanon__pd_fast_setup(r);
    return res;
}

JITANON_API int jitanon_perf_reader_feature(const jitanon_perf_reader *r, unsigned bit, jitanon_bytes *out)
{
    size_t i;
    for (i = 0; r->features_loaded && i < r->state_.feat_count; i++) {
        if (r->state_.feats[i].bit != bit) continue;
        out->data = r->state_.feat_mem + r->state_.feats[i].mem_off;
        out->size = (size_t)r->state_.feats[i].size;
        return 1;
    }
    return 0;
}

JITANON_API void jitanon_perf_reader_release(jitanon_perf_reader *r)
{
    const jitanon_allocator *a;
    if (!r) return;
    a = &r->state_.allocator;
    jitanon__attrs_free(a, r->attrs, r->attr_count, r->state_.attr_cap);
    jitanon__free(a, r->state_.lays, r->state_.lay_cap * sizeof *r->state_.lays);
    jitanon__free(a, r->state_.idmap, r->state_.idmap_cap * sizeof *r->state_.idmap);
    jitanon__free(a, r->state_.feats, r->state_.feat_count * sizeof *r->state_.feats);
    jitanon__free(a, r->state_.feat_mem, r->state_.feat_mem_size);
    jitanon__in_free(&r->state_.in, a);
    jitanon_membuf_release(&r->state_.dbuf);
#if JITANON__ZSTD
    jitanon__zstd_destroy(r->state_.zstd);
#endif
#ifndef JITANON_NO_STDIO
    if (r->state_.file && r->state_.file != (void *)stdin) fclose((FILE *)r->state_.file);
#endif
    memset(r, 0, sizeof *r);
}

#ifndef JITANON_NO_STDIO
JITANON__PRIVATE int jitanon__pd_fseek(void *user, uint64_t off)
{
    if (off > (uint64_t)(~0ul >> 1)) return 1; /* beyond what fseek's long can say */
    return fseek((FILE *)user, (long)off, SEEK_SET) != 0;
}

/* opts.follow: a file's end is read again later, but stdio's end of file is sticky. */
JITANON__PRIVATE size_t jitanon__pd_fread_follow(void *user, void *dst, size_t size)
{
    clearerr((FILE *)user);
    return jitanon__os_file_read(user, dst, size);
}

JITANON__PRIVATE jitanon_result jitanon__perf_reader_open_impl(jitanon_perf_reader *r, const char *path,
                                                               const jitanon_perf_opts *opts, jitanon_error *err)
{
    int std_in = strcmp(path, "-") == 0;
    FILE *f = std_in ? stdin : fopen(path, "rb");
    jitanon_result res;
    if (!f) {
        memset(r, 0, sizeof *r);
        /* the OS's reason: "No such file or directory" says more than the result code */
        return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open %s: %s", path, strerror(errno));
    }
    /* stdin may be a pipe: read it forward only, each byte as it comes (stdin_read).  A
       file is read in large blocks straight into the reader's buffer: stdio's own buffer
       would split each into 4 KiB reads.  A file on stdin (`< perf.data`) at its start is
       read as a file: seeking, its features come before its records, and with them the
       event names a pipe written from it must carry before its samples. */
    int seeks = !std_in || (ftell(f) == 0 && fseek(f, 0, SEEK_SET) == 0);
    if (!std_in) (void)setvbuf(f, NULL, _IONBF, 0); /* (stdin's buffering is its owner's) */
    if (!seeks && jitanon__os_default()->stdin_read)
        res = jitanon_perf_reader_init(r, jitanon__os_default()->stdin_read, NULL, NULL, opts, err);
    else res = jitanon_perf_reader_init(r, opts && opts->follow ? jitanon__pd_fread_follow : jitanon__os_file_read,
                                        seeks ? jitanon__pd_fseek : NULL, f, opts, err);
    r->state_.file = f;
    return res;
}

JITANON_API jitanon_result jitanon_perf_reader_open(jitanon_perf_reader *r, const char *path,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    return jitanon__err_from(err, jitanon__perf_reader_open_impl(r, path, opts, err), "perf.data");
}
#endif

/* -- [perf-write] perf.data writer --------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__pw_put(jitanon_perf_writer *w, const void *data, size_t n, jitanon_error *err)
{
    return n ? jitanon__sink_put(w->sink_, data, n, &w->bytes_written, err) : JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pw_zeros(jitanon_perf_writer *w, uint64_t n, jitanon_error *err)
{
    static const uint8_t zero[64] = {0};
    jitanon_result res = JITANON_OK;
    while (n && res == JITANON_OK) {
        size_t k = n < sizeof zero ? (size_t)n : sizeof zero;
        res = jitanon__pw_put(w, zero, k, err);
        n -= k;
    }
    return res;
}

/* Writes u64 values in the writer's byte order, 32 per sink call. */
JITANON__PRIVATE jitanon_result jitanon__pw_u64s(jitanon_perf_writer *w, const uint64_t *v, size_t n, jitanon_error *err)
{
    uint8_t b[256];
    jitanon_result res = JITANON_OK;
    while (n && res == JITANON_OK) {
        size_t i, k = n < 32 ? n : 32;
        for (i = 0; i < k; i++) jitanon__wr64(b + 8 * i, v[i], w->big_endian);
        res = jitanon__pw_put(w, b, 8 * k, err);
        v += k;
        n -= k;
    }
    return res;
}

JITANON__PRIVATE void jitanon__pw_hdr(uint8_t *p, uint32_t type, uint16_t misc, size_t size, int big)
{
    jitanon__wr32(p, type, big);
    jitanon__wr16(p + 4, misc, big);
    jitanon__wr16(p + 6, size, big);
}

JITANON_API jitanon_result jitanon_perf_writer_init(jitanon_perf_writer *w, jitanon_perf_mode mode, int big_endian,
                                                    jitanon_sink sink, jitanon_pwrite_fn pwrite_fn,
                                                    const jitanon_perf_opts *opts, jitanon_error *err)
{
    jitanon_result res;
    uint8_t h[16];
    JITANON_ASSERT(w);
    if ((res = jitanon__init_begin(w, sizeof *w, JITANON__OPTS_BAD(opts), "jitanon_perf_opts", err)) != JITANON_OK)
        return res;
    if ((mode != JITANON_PERF_FILE && mode != JITANON_PERF_PIPE) || !sink.write_fn)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "bad mode or sink");
    if (mode == JITANON_PERF_FILE && !pwrite_fn)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "file mode needs pwrite_fn: the header is written last");
    w->mode = mode;
    w->big_endian = big_endian != 0;
    w->sink_ = sink;
    w->pwrite_fn_ = pwrite_fn;
    if (opts) w->allocator_ = opts->allocator;
    w->max_header_bytes_ = opts && opts->max_header_bytes ? opts->max_header_bytes : JITANON__PERF_DEFAULT_CAP;
    jitanon__pd_header_budget(&w->header_mem_, w->max_header_bytes_);
    if (mode == JITANON_PERF_FILE) return JITANON_OK;
    jitanon__wr64(h, JITANON__PERF_MAGIC, w->big_endian);
    jitanon__wr64(h + 8, JITANON__PERF_PIPE_HEADER, w->big_endian);
    return jitanon__pw_put(w, h, sizeof h, err);
}

JITANON__PRIVATE jitanon_result jitanon__pw_usable(const jitanon_perf_writer *w, jitanon_error *err)
{
    if (!w->mode || w->finished_)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "writer not initialised or finished");
    return JITANON_OK;
}

/* Pipe mode: {header, attr, ids}; the size must fit the u16 header.size. */
JITANON__PRIVATE jitanon_result jitanon__pw_header_attr(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                       jitanon_error *err)
{
    uint8_t h[8];
    size_t size;
    jitanon_result res;
    if (a->id_count > JITANON__PERF_MAX_REC / 8 || (size = 8 + a->raw.size + 8 * a->id_count) > JITANON__PERF_MAX_REC)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written,
                             "attr with %U ids does not fit one HEADER_ATTR record", (uint64_t)a->id_count);
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_ATTR, 0, size, w->big_endian);
    res = jitanon__pw_put(w, h, 8, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.data, a->raw.size, err);
    if (res == JITANON_OK) res = jitanon__pw_u64s(w, a->ids, a->id_count, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

/* Copies n bytes into writer-owned memory, charged against max_header_bytes. */
JITANON__PRIVATE jitanon_result jitanon__pw_dup(jitanon_perf_writer *w, const void *src, size_t n, void **out,
                                               jitanon_error *err)
{
    jitanon_result res = jitanon__pd_charge(&w->header_mem_, n, w->bytes_written, err);
    *out = NULL;
    if (res != JITANON_OK) return res;
    *out = jitanon__malloc(&w->allocator_, n);
    if (!*out) return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot copy %U bytes", (uint64_t)n);
    if (n) memcpy(*out, src, n);
    return JITANON_OK;
}

/* File mode: keep a copy until the header sections are written. */
JITANON__PRIVATE jitanon_result jitanon__pw_keep_attr(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                     jitanon_error *err)
{
    void *raw = NULL, *ids = NULL;
    jitanon_perf_attr *c;
    jitanon_result res = JITANON_OK;
    size_t id_bytes;
    if (!jitanon__mul_size(a->id_count, 8, &id_bytes))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "too many ids");
    if (!jitanon__grow(&w->allocator_, (void **)&w->attrs_, &w->attr_cap_, w->attr_count_ + 1, sizeof *w->attrs_))
        res = JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow the attr table");
    if (res == JITANON_OK) res = jitanon__pw_dup(w, a->raw.data, a->raw.size, &raw, err);
    if (res == JITANON_OK) res = jitanon__pw_dup(w, a->ids, id_bytes, &ids, err);
    if (res != JITANON_OK) {
        jitanon__free(&w->allocator_, raw, a->raw.size);
        return res;
    }
    c = &w->attrs_[w->attr_count_++];
    *c = *a;
    c->raw.data = (const uint8_t *)raw;
    c->ids = (const uint64_t *)ids;
    return JITANON_OK;
}

/* Pipe mode: the attr's first id (0: none), what an EVENT_UPDATE names it by. */
JITANON__PRIVATE jitanon_result jitanon__pw_note_id(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                   jitanon_error *err)
{
    if (!jitanon__grow(&w->allocator_, (void **)&w->first_ids_, &w->first_ids_cap_, w->first_ids_len_ + 1,
                       sizeof *w->first_ids_))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow the id table");
    w->first_ids_[w->first_ids_len_++] = a->id_count ? a->ids[0] : 0;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_writer_add_attr(jitanon_perf_writer *w, const jitanon_perf_attr *attr,
                                                        jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (!attr || attr->raw.size < JITANON__PERF_ATTR_VER0 || attr->raw.size > JITANON__PERF_MAX_REC ||
        (attr->id_count && !attr->ids))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "attr raw must hold 64..65535 bytes");
    if (w->mode == JITANON_PERF_PIPE) {
        res = jitanon__pw_header_attr(w, attr, err);
        return res == JITANON_OK ? jitanon__pw_note_id(w, attr, err) : res;
    }
    if (w->started_)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, w->bytes_written,
                             "file mode: an attr arrived after the first record");
    return jitanon__pw_keep_attr(w, attr, err);
}

/* A build-id table is a list: more entries (the injector's ELF files) extend it. */
JITANON__PRIVATE jitanon_result jitanon__pw_append_feature(jitanon_perf_writer *w, jitanon_perf_feature *f,
                                                          const void *data, size_t size, jitanon_error *err)
{
    void *grown;
    jitanon_result res = jitanon__pd_charge(&w->header_mem_, size, w->bytes_written, err);
    if (res != JITANON_OK) return res;
    if (f->data.size + size < size)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "feature %u too large", (unsigned)f->bit);
    grown = jitanon__realloc(&w->allocator_, (void *)(uintptr_t)f->data.data, f->data.size, f->data.size + size);
    if (!grown) return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow feature %u", (unsigned)f->bit);
    if (size) memcpy((uint8_t *)grown + f->data.size, data, size);
    f->data.data = (const uint8_t *)grown;
    f->data.size += size;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__pw_keep_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                        size_t size, jitanon_error *err)
{
    void *copy;
    size_t i;
    jitanon_result res;
    for (i = 0; i < w->feat_count_; i++)
        if (w->feats_[i].bit == bit && bit == JITANON_PERF_FEAT_BUILD_ID)
            return jitanon__pw_append_feature(w, &w->feats_[i], data, size, err);
        else if (w->feats_[i].bit == bit)
            return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "feature %u added twice", bit);
    if (!jitanon__grow(&w->allocator_, (void **)&w->feats_, &w->feat_cap_, w->feat_count_ + 1, sizeof *w->feats_))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "cannot grow the feature table");
    if ((res = jitanon__pw_dup(w, data, size, &copy, err)) != JITANON_OK) return res;
    w->feats_[w->feat_count_].bit = bit;
    w->feats_[w->feat_count_].data.data = (const uint8_t *)copy;
    w->feats_[w->feat_count_++].data.size = size;
    return JITANON_OK;
}

/* Pipe mode: a 16-byte HEADER_TRACING_DATA record, then the data padded to 8 bytes. */
JITANON__PRIVATE jitanon_result jitanon__pw_tracing(jitanon_perf_writer *w, const void *data, size_t size,
                                                   jitanon_error *err)
{
    uint8_t h[16];
    uint64_t padded = ((uint64_t)size + 7) & ~(uint64_t)7;
    jitanon_result res;
    if (padded > UINT32_MAX)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "tracing data too large for a u32 size");
    memset(h, 0, sizeof h);
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_TRACING_DATA, 0, sizeof h, w->big_endian);
    jitanon__wr32(h + 8, padded, w->big_endian);
    res = jitanon__pw_put(w, h, sizeof h, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, data, size, err);
    if (res == JITANON_OK) res = jitanon__pw_zeros(w, padded - size, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

/* Pipe mode: the BUILD_ID section is a run of build-id entries, each shaped like a
   HEADER_BUILD_ID record except for the type. */
JITANON__PRIVATE jitanon_result jitanon__pw_build_ids(jitanon_perf_writer *w, const uint8_t *p, size_t n,
                                                     jitanon_error *err)
{
    jitanon_result res = JITANON_OK;
    while (n >= 8 && res == JITANON_OK) {
        uint8_t h[8];
        uint16_t size = jitanon__rd16(p + 6, w->big_endian);
        if (size < 8 || size > n) {
            w->features_skipped++; /* a malformed section: stop rather than emit garbage */
            break;
        }
        jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_BUILD_ID, jitanon__rd16(p + 4, w->big_endian), size, w->big_endian);
        res = jitanon__pw_put(w, h, 8, err);
        if (res == JITANON_OK) res = jitanon__pw_put(w, p + 8, (size_t)size - 8, err);
        if (res == JITANON_OK) w->records++;
        p += size;
        n -= size;
    }
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pw_feature_record(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                          size_t size, jitanon_error *err)
{
    uint8_t h[16];
    jitanon_result res;
    if (size > JITANON__PERF_MAX_REC - 16) {
        w->features_skipped++; /* header.size is a u16: perf cannot carry it in a pipe either */
        return JITANON_OK;
    }
    /* Not padded: the payload size is header.size - 16, as perf record writes it. */
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_HEADER_FEATURE, 0, 16 + size, w->big_endian);
    jitanon__wr64(h + 8, bit, w->big_endian);
    res = jitanon__pw_put(w, h, sizeof h, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, data, size, err);
    if (res == JITANON_OK) w->records++;
    return res;
}

#define JITANON__PERF_FEAT_EVENT_DESC 12u
#define JITANON__PERF_FEAT_BRANCH_STACK 15u
#define JITANON__PERF_FEAT_AUXTRACE 18u
#define JITANON__PERF_FEAT_STAT 19u
#define JITANON__PERF_FEAT_DIR_FORMAT 24u

/* Whether perf 6.1 reads the feature back from a pipe (measured bit by bit, empty and as
   recorded): the AUXTRACE index holds offsets into a file and DIR_FORMAT belongs to a
   directory of files, so perf stops on either in a pipe; an empty section stops it for
   every feature but BUILD_ID (no records), BRANCH_STACK and STAT, whose presence alone is
   the information, and EVENT_DESC. */
JITANON__PRIVATE int jitanon__pw_pipe_feature(unsigned bit, size_t size)
{
    if (bit == JITANON__PERF_FEAT_AUXTRACE || bit == JITANON__PERF_FEAT_DIR_FORMAT) return 0;
    return size || bit == JITANON_PERF_FEAT_BUILD_ID || bit == JITANON__PERF_FEAT_EVENT_DESC ||
           bit == JITANON__PERF_FEAT_BRANCH_STACK || bit == JITANON__PERF_FEAT_STAT;
}

/* One EVENT_UPDATE NAME record: {header, kind, id, the name NUL-padded to 8 bytes}. */
JITANON__PRIVATE jitanon_result jitanon__pw_event_name(jitanon_perf_writer *w, uint64_t id, const uint8_t *name,
                                                      size_t len, jitanon_error *err)
{
    uint8_t h[24];
    size_t size;
    jitanon_result res;
    if (len > JITANON__PERF_MAX_REC - 32) return JITANON_OK; /* no event has such a name: header.size is a u16 */
    size = 24 + ((len + 8) & ~(size_t)7); /* at least one NUL */
    jitanon__pw_hdr(h, JITANON_PERF_RECORD_EVENT_UPDATE, 0, size, w->big_endian);
    jitanon__wr64(h + 8, JITANON_PERF_EVENT_UPDATE_NAME, w->big_endian);
    jitanon__wr64(h + 16, id, w->big_endian);
    res = jitanon__pw_put(w, h, sizeof h, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, name, len, err);
    if (res == JITANON_OK) res = jitanon__pw_zeros(w, size - 24 - len, err);
    if (res == JITANON_OK) {
        w->records++;
        w->event_names++;
    }
    return res;
}

/* Pipe mode: the names of an EVENT_DESC section {u32 nr, u32 attr_size, nr x {attr,
   u32 nr_ids, u32 len, name[len] (NUL-padded), u64 ids[nr_ids]}} as NAME records (see
   jitanon_perf_writer_add_feature).  A section that stops making sense ends the list:
   the names before it are written, the section itself as given. */
JITANON__PRIVATE jitanon_result jitanon__pw_event_names(jitanon_perf_writer *w, const void *data, size_t size,
                                                       jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(data, size, 0, w->big_endian);
    uint32_t nre, asz, i;
    jitanon_result res = JITANON_OK;
    if (c.left < 8) return JITANON_OK;
    nre = jitanon__get32(&c);
    asz = jitanon__get32(&c);
    for (i = 0; res == JITANON_OK && i < nre; i++) {
        const uint8_t *name, *nul;
        uint32_t nr, len;
        if (!jitanon__take(&c, asz) || c.left < 8) break;
        nr = jitanon__get32(&c);
        len = jitanon__get32(&c);
        if (!(name = jitanon__take(&c, len)) || nr > c.left / 8) break;
        jitanon__take(&c, (size_t)nr * 8);
        if (i >= w->first_ids_len_ || (w->first_ids_len_ > 1 && !w->first_ids_[i])) continue;
        nul = len ? (const uint8_t *)memchr(name, 0, len) : NULL;
        res = jitanon__pw_event_name(w, w->first_ids_[i], name, nul ? (size_t)(nul - name) : len, err);
    }
    return res;
}

JITANON_API jitanon_result jitanon_perf_writer_add_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                           size_t size, jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (bit == 0 || bit >= JITANON_PERF_FEAT_BITS || (!data && size))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "bad feature %u", bit);
    if (w->mode == JITANON_PERF_FILE) return jitanon__pw_keep_feature(w, bit, data, size, err);
    if (!jitanon__pw_pipe_feature(bit, size)) {
        w->features_skipped++;
        return JITANON_OK;
    }
    if (bit == JITANON_PERF_FEAT_TRACING_DATA) return jitanon__pw_tracing(w, data, size, err);
    if (bit == JITANON_PERF_FEAT_BUILD_ID) return jitanon__pw_build_ids(w, (const uint8_t *)data, size, err);
    res = jitanon__pw_feature_record(w, bit, data, size, err);
    if (res == JITANON_OK && bit == JITANON__PERF_FEAT_EVENT_DESC) res = jitanon__pw_event_names(w, data, size, err);
    return res;
}

/* One attrs-section entry: the attr padded to the common size (whose size field then
   says so), then {offset, size} of its id array. */
JITANON__PRIVATE jitanon_result jitanon__pw_attr_entry(jitanon_perf_writer *w, const jitanon_perf_attr *a,
                                                      uint64_t asz, uint64_t ids_at, jitanon_error *err)
{
    uint8_t b[16];
    jitanon_result res = jitanon__pw_put(w, a->raw.data, 4, err);
    jitanon__wr32(b, asz, w->big_endian);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.size < asz ? b : a->raw.data + 4, 4, err);
    if (res == JITANON_OK) res = jitanon__pw_put(w, a->raw.data + 8, a->raw.size - 8, err);
    if (res == JITANON_OK) res = jitanon__pw_zeros(w, asz - a->raw.size, err);
    jitanon__wr64(b, ids_at, w->big_endian);
    jitanon__wr64(b + 8, (uint64_t)a->id_count * 8, w->big_endian);
    if (res == JITANON_OK) res = jitanon__pw_put(w, b, 16, err);
    return res;
}

/* File mode, before the first record: header placeholder, id arrays, attrs. */
JITANON__PRIVATE jitanon_result jitanon__pw_begin(jitanon_perf_writer *w, jitanon_error *err)
{
    uint64_t asz = JITANON__PERF_ATTR_VER0, at = JITANON__PERF_FILE_HEADER;
    size_t i;
    jitanon_result res;
    for (i = 0; i < w->attr_count_; i++)
        if (w->attrs_[i].raw.size > asz) asz = w->attrs_[i].raw.size;
    w->attr_size_ = asz + 16;
    w->started_ = 1;
    res = jitanon__pw_zeros(w, JITANON__PERF_FILE_HEADER, err);
    for (i = 0; res == JITANON_OK && i < w->attr_count_; i++)
        res = jitanon__pw_u64s(w, w->attrs_[i].ids, w->attrs_[i].id_count, err);
    w->attrs_offset_ = w->bytes_written;
    for (i = 0; res == JITANON_OK && i < w->attr_count_; i++) {
        res = jitanon__pw_attr_entry(w, &w->attrs_[i], asz, at, err);
        at += (uint64_t)w->attrs_[i].id_count * 8;
    }
    w->data_offset = w->bytes_written;
    return res;
}

/* `n` whole records, back to back in `size` bytes, in one sink call: a run of records
   passed through unchanged goes out as one large write instead of one call each. */
JITANON__PRIVATE jitanon_result jitanon__pw_records(jitanon_perf_writer *w, const void *records, size_t size,
                                                   uint64_t n, jitanon_error *err)
{
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    if (!records || size < 8)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, w->bytes_written, "record below 8 bytes");
    if (w->mode == JITANON_PERF_FILE && !w->started_ && (res = jitanon__pw_begin(w, err)) != JITANON_OK) return res;
    res = jitanon__pw_put(w, records, size, err);
    if (res == JITANON_OK) w->records += n;
    return res;
}

JITANON_API jitanon_result jitanon_perf_writer_write(jitanon_perf_writer *w, const void *record, size_t size,
                                                     jitanon_error *err)
{
    return jitanon__pw_records(w, record, size, 1, err);
}

/* Feature sections go out in bit order (each bit is added once). */
JITANON__PRIVATE int jitanon__pw_feat_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon_perf_feature *f = (const jitanon_perf_feature *)ctx;
    return f[a].bit < f[b].bit;
}

JITANON__PRIVATE jitanon_result jitanon__pw_features(jitanon_perf_writer *w, jitanon_error *err)
{
    uint64_t at = w->bytes_written + 16 * (uint64_t)w->feat_count_;
    size_t i;
    jitanon_result res = JITANON_OK;
    if (!jitanon__sort(&w->allocator_, w->feats_, w->feat_count_, sizeof *w->feats_, jitanon__pw_feat_less))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, w->bytes_written, "sorting the feature sections");
    for (i = 0; res == JITANON_OK && i < w->feat_count_; i++) {
        uint8_t e[16];
        jitanon__wr64(e, at, w->big_endian);
        jitanon__wr64(e + 8, w->feats_[i].data.size, w->big_endian);
        res = jitanon__pw_put(w, e, 16, err);
        at += w->feats_[i].data.size;
    }
    for (i = 0; res == JITANON_OK && i < w->feat_count_; i++)
        res = jitanon__pw_put(w, w->feats_[i].data.data, w->feats_[i].data.size, err);
    return res;
}

JITANON__PRIVATE void jitanon__pw_file_header(const jitanon_perf_writer *w, uint8_t *h)
{
    size_t i;
    int big = w->big_endian;
    memset(h, 0, JITANON__PERF_FILE_HEADER);
    jitanon__wr64(h, JITANON__PERF_MAGIC, big);
    jitanon__wr64(h + 8, JITANON__PERF_FILE_HEADER, big);
    jitanon__wr64(h + 16, w->attr_size_, big);
    jitanon__wr64(h + 24, w->attrs_offset_, big);
    jitanon__wr64(h + 32, w->attr_size_ * w->attr_count_, big);
    jitanon__wr64(h + 40, w->data_offset, big);
    jitanon__wr64(h + 48, w->data_size, big);
    for (i = 0; i < w->feat_count_; i++) { /* the bitmap is four u64 words in file order */
        uint8_t *word = h + 72 + 8 * (w->feats_[i].bit / 64);
        jitanon__wr64(word, jitanon__rd64(word, big) | 1ull << (w->feats_[i].bit % 64), big);
    }
}

JITANON_API jitanon_result jitanon_perf_writer_finish(jitanon_perf_writer *w, jitanon_error *err)
{
    uint8_t h[JITANON__PERF_FILE_HEADER];
    jitanon_result res = jitanon__pw_usable(w, err);
    if (res != JITANON_OK) return res;
    w->finished_ = 1;
    if (w->mode == JITANON_PERF_PIPE) return JITANON_OK;
    if (!w->started_ && (res = jitanon__pw_begin(w, err)) != JITANON_OK) return res;
    w->data_size = w->bytes_written - w->data_offset;
    if ((res = jitanon__pw_features(w, err)) != JITANON_OK) return res;
    jitanon__pw_file_header(w, h);
    if (w->pwrite_fn_(w->sink_.user, h, sizeof h, 0))
        return JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "cannot write the file header at offset 0");
    return JITANON_OK;
}

JITANON_API void jitanon_perf_writer_release(jitanon_perf_writer *w)
{
    size_t i;
    const jitanon_allocator *a;
    if (!w) return;
    a = &w->allocator_;
    jitanon__attrs_free(a, w->attrs_, w->attr_count_, w->attr_cap_);
    for (i = 0; i < w->feat_count_; i++) jitanon__free(a, (void *)(uintptr_t)w->feats_[i].data.data, w->feats_[i].data.size);
    jitanon__free(a, w->feats_, w->feat_cap_ * sizeof *w->feats_);
    jitanon__free(a, w->first_ids_, w->first_ids_cap_ * sizeof *w->first_ids_);
    memset(w, 0, sizeof *w);
}

/* -- [perf-copy] copy path ----------------------------------------------------------------- */

/* Decompressed, the output holds plain records, so it must not claim compression. */
/* Bit 0 is reserved and ids past the bitmap have no slot: neither can be written, so a
   copy drops them (as it drops HEADER_COMPRESSED once the data is decompressed). */
JITANON__PRIVATE int jitanon__pc_keep_feature(const jitanon_perf_reader *r, uint64_t bit)
{
    if (bit == 0 || bit >= JITANON_PERF_FEAT_BITS) return 0;
    return !(jitanon__pd_decompresses(r) && bit == JITANON_PERF_FEAT_COMPRESSED);
}

JITANON__PRIVATE jitanon_result jitanon__pc_features(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err)
{
    size_t i;
    jitanon_result res = jitanon_perf_reader_load_features(r, err);
    for (i = 0; res == JITANON_OK && i < r->state_.feat_count; i++) {
        jitanon_bytes b;
        if (!jitanon__pc_keep_feature(r, r->state_.feats[i].bit) || !jitanon_perf_reader_feature(r, r->state_.feats[i].bit, &b))
            continue;
        res = jitanon_perf_writer_add_feature(w, r->state_.feats[i].bit, b.data, b.size, err);
    }
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pc_record(jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                  const jitanon_perf_record *rec, jitanon_error *err)
{
    int to_file = r->mode == JITANON_PERF_PIPE && w->mode == JITANON_PERF_FILE;
    if (rec->type == JITANON_PERF_RECORD_HEADER_ATTR && to_file)
        return jitanon_perf_writer_add_attr(w, &r->attrs[rec->attr_index], err);
    if (rec->type == JITANON_PERF_RECORD_HEADER_FEATURE) {
        uint64_t bit = rec->feature.feat_id;
        if (!jitanon__pc_keep_feature(r, bit)) return JITANON_OK;
        if (to_file)
            return jitanon_perf_writer_add_feature(w, (unsigned)bit, rec->feature.data.data, rec->feature.data.size, err);
    }
    return jitanon_perf_writer_write(w, rec->raw.data, rec->raw.size, err);
}

/* The frame of jitanon_perf_copy for any stream of records: attrs and features where the
   output's mode wants them, every record through `record`, `end` once the input ended,
   then jitanon_perf_writer_finish.  `w` may be NULL: nothing is written. */
typedef struct jitanon__perf_pass {
    jitanon_result (*record)(void *ctx, const jitanon_perf_record *rec);
    jitanon_result (*end)(void *ctx);
    void *ctx;
} jitanon__perf_pass;

JITANON__PRIVATE jitanon_result jitanon__perf_pump(jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                   const jitanon__perf_pass *pass, jitanon_error *err)
{
    jitanon_perf_record rec;
    jitanon_result res = JITANON_OK;
    int file = w && r->mode == JITANON_PERF_FILE, feats_done = 0;
    size_t i;
    for (i = 0; res == JITANON_OK && file && i < r->attr_count; i++)
        res = jitanon_perf_writer_add_attr(w, &r->attrs[i], err);
    /* A pipe wants features before the records; a file takes them at the end anyway. */
    if (res == JITANON_OK && file && r->state_.seek_fn) {
        res = jitanon__pc_features(r, w, err);
        feats_done = 1;
    }
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(r, &rec, err)) == JITANON_OK)
        res = pass->record(pass->ctx, &rec);
    if (res != JITANON_END) return res;
    jitanon__clear_error(err);
    if (pass->end && (res = pass->end(pass->ctx)) != JITANON_OK) return res;
    if (file && !feats_done && (res = jitanon__pc_features(r, w, err)) != JITANON_OK) return res;
    return w ? jitanon_perf_writer_finish(w, err) : JITANON_OK;
}

typedef struct jitanon__pc_ctx {
    jitanon_perf_reader *r;
    jitanon_perf_writer *w;
    jitanon_error *err;
} jitanon__pc_ctx;

JITANON__PRIVATE jitanon_result jitanon__pc_copy_record(void *ctx, const jitanon_perf_record *rec)
{
    jitanon__pc_ctx *c = (jitanon__pc_ctx *)ctx;
    return jitanon__pc_record(c->r, c->w, rec, c->err);
}

JITANON_API jitanon_result jitanon_perf_copy(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err)
{
    jitanon__pc_ctx c;
    jitanon__perf_pass pass;
    JITANON_ASSERT(r && w);
    jitanon__clear_error(err);
    c.r = r;
    c.w = w;
    c.err = err;
    pass.record = jitanon__pc_copy_record;
    pass.end = NULL;
    pass.ctx = &c;
    return jitanon__perf_pump(r, w, &pass, err);
}

/* -- [perf-mmap] synthesized and rewritten MMAP records ------------------------------------ */

JITANON__PRIVATE uint8_t *jitanon__pw_put64(uint8_t *p, uint64_t v, int big)
{
    jitanon__wr64(p, v, big);
    return p + 8;
}

/* A complete sample_id trailer in perf's field order; every slot the attr asks for is filled. */
JITANON__PRIVATE void jitanon__pw_trailer(uint8_t *p, const jitanon_perf_attr *a, uint32_t pid, uint32_t tid,
                                         uint64_t time, uint32_t cpu, int big)
{
    uint64_t st = a->sample_type, id = a->id_count ? a->ids[0] : 0;
    if (st & JITANON_PERF_SAMPLE_TID) {
        jitanon__wr32(p, pid, big);
        jitanon__wr32(p + 4, tid, big);
        p += 8;
    }
    if (st & JITANON_PERF_SAMPLE_TIME) p = jitanon__pw_put64(p, time, big);
    if (st & JITANON_PERF_SAMPLE_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_CPU) {
        jitanon__wr32(p, cpu, big);
        jitanon__wr32(p + 4, 0, big);
        p += 8;
    }
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) jitanon__wr64(p, id, big);
}

JITANON__PRIVATE jitanon_result jitanon__pw_room(size_t need, void *buf, size_t cap, size_t *out_size, jitanon_error *err)
{
    *out_size = need;
    if (!buf || need > cap)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "record needs %U bytes, buffer has %U", (uint64_t)need,
                             (uint64_t)cap);
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__pw_mmap2_body(uint8_t *p, const jitanon_perf_mmap *m, int big)
{
    jitanon__wr32(p + 8, m->pid, big);
    jitanon__wr32(p + 12, m->tid, big);
    jitanon__wr64(p + 16, m->start, big);
    jitanon__wr64(p + 24, m->len, big);
    jitanon__wr64(p + 32, m->pgoff, big);
    if (m->has_build_id) {
        p[40] = m->build_id_size <= 20 ? m->build_id_size : 20;
        if (m->build_id) memcpy(p + 44, m->build_id, p[40]);
    } else {
        jitanon__wr32(p + 40, m->maj, big);
        jitanon__wr32(p + 44, m->min, big);
        jitanon__wr64(p + 48, m->ino, big);
        jitanon__wr64(p + 56, m->ino_generation, big);
    }
    jitanon__wr32(p + 64, m->prot, big);
    jitanon__wr32(p + 68, m->flags, big);
    if (m->filename.length) memcpy(p + JITANON__PERF_MMAP2_FIXED, m->filename.data, m->filename.length);
}

JITANON_API jitanon_result jitanon_perf_encode_mmap2(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, const jitanon_perf_attr *attr,
                                                     jitanon_error *err)
{
    size_t trail = attr && attr->sample_id_all ? attr->id_hdr_size : 0, name, total;
    uint8_t *p = (uint8_t *)buf;
    const jitanon_perf_mmap *m;
    uint16_t misc;
    int big;
    jitanon_result res;
    JITANON_ASSERT(rec && out_size);
    m = &rec->mmap;
    misc = rec->misc;
    big = rec->big_endian;
    jitanon__clear_error(err);
    if (m->filename.length > JITANON__PERF_MAX_REC || (m->filename.length && !m->filename.data))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "file name too long for an MMAP2 record");
    /* the trailer is written from sample_type: an id_hdr_size that says otherwise (a
       caller's own attr) would size the record for other bytes than those written */
    if (trail && trail != 8u * jitanon__popcount64(attr->sample_type & JITANON__PERF_SAMPLE_TRAILER))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "attr id_hdr_size %U does not match its sample_type",
                             (uint64_t)trail);
    name = (m->filename.length + 1 + 7) & ~(size_t)7; /* NUL, then zero padding to 8 */
    total = JITANON__PERF_MMAP2_FIXED + name + trail;
    if (total > JITANON__PERF_MAX_REC) return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "MMAP2 record over 65535 bytes");
    if ((res = jitanon__pw_room(total, buf, cap, out_size, err)) != JITANON_OK) return res;
    memset(p, 0, total);
    misc = (uint16_t)(m->has_build_id ? misc | JITANON_PERF_MISC_MMAP_BUILD_ID : misc & ~JITANON_PERF_MISC_MMAP_BUILD_ID);
    jitanon__pw_hdr(p, JITANON_PERF_RECORD_MMAP2, misc, total, big);
    jitanon__pw_mmap2_body(p, m, big);
    if (trail) /* pid/tid as the kernel writes them for an mmap: the mapping's */
        jitanon__pw_trailer(p + JITANON__PERF_MMAP2_FIXED + name, attr, m->pid, m->tid, rec->sid.time, rec->sid.cpu,
                            big);
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_rewrite_mmap(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, jitanon_error *err)
{
    uint8_t *p = (uint8_t *)buf;
    jitanon_result res;
    JITANON_ASSERT(rec && out_size);
    jitanon__clear_error(err);
    if ((rec->type != JITANON_PERF_RECORD_MMAP && rec->type != JITANON_PERF_RECORD_MMAP2) ||
        rec->raw.size < JITANON__PERF_MMAP_FIXED)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, rec->offset, "not an MMAP or MMAP2 record");
    if ((res = jitanon__pw_room(rec->raw.size, buf, cap, out_size, err)) != JITANON_OK) return res;
    memcpy(p, rec->raw.data, rec->raw.size);
    /* start, len and pgoff sit at the same offsets in MMAP and MMAP2. */
    jitanon__wr64(p + 16, rec->mmap.start, rec->big_endian);
    jitanon__wr64(p + 24, rec->mmap.len, rec->big_endian);
    jitanon__wr64(p + 32, rec->mmap.pgoff, rec->big_endian);
    return JITANON_OK;
}

/* -- records for generators and tests (jitanon_perf_encode, jitanon_perf_encode_attr) -- */

#define JITANON__PERF_ENCODE_SAMPLE                                                                                    \
    (JITANON__PERF_SAMPLE_TRAILER | JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_ADDR | JITANON_PERF_SAMPLE_PERIOD |   \
     JITANON_PERF_SAMPLE_CALLCHAIN)

/* Bytes of rec's body (after the header, before a trailer) or 0 when it cannot be encoded. */
JITANON__PRIVATE size_t jitanon__pe_body_size(const jitanon_perf_record *rec, const jitanon_perf_attr *a)
{
    switch (rec->type) {
    case JITANON_PERF_RECORD_COMM: return 8 + ((rec->comm.comm.length + 1 + 7) & ~(size_t)7);
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT: return 24;
    case JITANON_PERF_RECORD_LOST: return 16;
    case JITANON_PERF_RECORD_MMAP:
        return JITANON__PERF_MMAP_FIXED - 8 + ((rec->mmap.filename.length + 1 + 7) & ~(size_t)7);
    case JITANON_PERF_RECORD_SAMPLE:
        return 8 * jitanon__popcount64(a->sample_type & (JITANON__PERF_ENCODE_SAMPLE & ~JITANON_PERF_SAMPLE_CALLCHAIN)) +
               (a->sample_type & JITANON_PERF_SAMPLE_CALLCHAIN ? 8 + 8 * (size_t)rec->sample.callchain_nr : 0);
    default: return 0;
    }
}

/* What cannot be encoded, before any size is computed from it. */
JITANON__PRIVATE jitanon_result jitanon__pe_check(const jitanon_perf_record *rec, const jitanon_perf_attr *a,
                                                 jitanon_error *err)
{
    size_t name = rec->type == JITANON_PERF_RECORD_COMM ? rec->comm.comm.length : rec->mmap.filename.length;
    const void *name_data = rec->type == JITANON_PERF_RECORD_COMM ? (const void *)rec->comm.comm.data
                                                                  : (const void *)rec->mmap.filename.data;
    switch (rec->type) {
    case JITANON_PERF_RECORD_COMM:
    case JITANON_PERF_RECORD_MMAP:
        if (name > JITANON__PERF_MAX_REC || (name && !name_data))
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "%s record: name too long", jitanon_perf_record_name(rec->type));
        return JITANON_OK;
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT:
    case JITANON_PERF_RECORD_LOST:
    case JITANON_PERF_RECORD_FINISHED_ROUND: return JITANON_OK;
    case JITANON_PERF_RECORD_SAMPLE:
        if (!a) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "a SAMPLE needs its attr");
        if (a->sample_type & ~(uint64_t)JITANON__PERF_ENCODE_SAMPLE)
            return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, 0, "SAMPLE: sample_type %X has fields the encoder does not write",
                                 a->sample_type);
        if ((a->sample_type & JITANON_PERF_SAMPLE_CALLCHAIN) &&
            (rec->sample.callchain_nr > JITANON__PERF_MAX_REC / 8 || rec->sample.callchain.size < rec->sample.callchain_nr * 8))
            return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "SAMPLE: callchain_nr %U is not what callchain holds",
                                 rec->sample.callchain_nr);
        return JITANON_OK;
    default:
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, 0, "no encoder for %s records", jitanon_perf_record_name(rec->type));
    }
}

JITANON__PRIVATE uint8_t *jitanon__pe_put32(uint8_t *p, uint64_t v, int big)
{
    jitanon__wr32(p, v, big);
    return p + 4;
}

JITANON__PRIVATE uint8_t *jitanon__pe_str(uint8_t *p, jitanon_str s)
{
    if (s.length) memcpy(p, s.data, s.length);
    return p + ((s.length + 1 + 7) & ~(size_t)7); /* the buffer is zeroed: NUL and padding */
}

/* A SAMPLE's fields in perf's order (perf_output_sample). */
JITANON__PRIVATE void jitanon__pe_sample(uint8_t *p, const jitanon_perf_record *rec, const jitanon_perf_attr *a, int big)
{
    uint64_t st = a->sample_type, id = a->id_count ? a->ids[0] : 0;
    if (st & JITANON_PERF_SAMPLE_IDENTIFIER) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_IP) p = jitanon__pw_put64(p, rec->sample.ip, big);
    if (st & JITANON_PERF_SAMPLE_TID) p = jitanon__pe_put32(jitanon__pe_put32(p, rec->sid.pid, big), rec->sid.tid, big);
    if (st & JITANON_PERF_SAMPLE_TIME) p = jitanon__pw_put64(p, rec->sid.time, big);
    if (st & JITANON_PERF_SAMPLE_ADDR) p = jitanon__pw_put64(p, rec->sample.addr, big);
    if (st & JITANON_PERF_SAMPLE_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_STREAM_ID) p = jitanon__pw_put64(p, id, big);
    if (st & JITANON_PERF_SAMPLE_CPU) p = jitanon__pe_put32(jitanon__pe_put32(p, rec->sid.cpu, big), 0, big);
    if (st & JITANON_PERF_SAMPLE_PERIOD) p = jitanon__pw_put64(p, rec->sample.period, big);
    if (!(st & JITANON_PERF_SAMPLE_CALLCHAIN)) return;
    p = jitanon__pw_put64(p, rec->sample.callchain_nr, big);
    if (rec->sample.callchain_nr) memcpy(p, rec->sample.callchain.data, (size_t)rec->sample.callchain_nr * 8);
}

/* The body of a kernel record; returns the pid/tid its trailer carries. */
JITANON__PRIVATE void jitanon__pe_body(uint8_t *p, const jitanon_perf_record *rec, int big, uint32_t *pid, uint32_t *tid)
{
    *pid = rec->sid.pid, *tid = rec->sid.tid;
    switch (rec->type) {
    case JITANON_PERF_RECORD_COMM:
        p = jitanon__pe_put32(jitanon__pe_put32(p, rec->comm.pid, big), rec->comm.tid, big);
        jitanon__pe_str(p, rec->comm.comm);
        *pid = rec->comm.pid, *tid = rec->comm.tid;
        return;
    case JITANON_PERF_RECORD_FORK:
    case JITANON_PERF_RECORD_EXIT:
        p = jitanon__pe_put32(jitanon__pe_put32(p, rec->task.pid, big), rec->task.ppid, big);
        p = jitanon__pe_put32(jitanon__pe_put32(p, rec->task.tid, big), rec->task.ptid, big);
        jitanon__wr64(p, rec->task.time, big);
        *pid = rec->task.pid, *tid = rec->task.tid;
        return;
    case JITANON_PERF_RECORD_LOST: jitanon__wr64(jitanon__pw_put64(p, rec->lost.id, big), rec->lost.lost, big); return;
    case JITANON_PERF_RECORD_MMAP:
        p = jitanon__pe_put32(jitanon__pe_put32(p, rec->mmap.pid, big), rec->mmap.tid, big);
        p = jitanon__pw_put64(jitanon__pw_put64(p, rec->mmap.start, big), rec->mmap.len, big);
        jitanon__pe_str(jitanon__pw_put64(p, rec->mmap.pgoff, big), rec->mmap.filename);
        *pid = rec->mmap.pid, *tid = rec->mmap.tid;
        return;
    default: return; /* FINISHED_ROUND: no body */
    }
}

JITANON_API jitanon_result jitanon_perf_encode(void *buf, size_t cap, size_t *out_size, const jitanon_perf_record *rec,
                                               const jitanon_perf_attr *attr, jitanon_error *err)
{
    uint8_t *p = (uint8_t *)buf;
    size_t body, trail = 0, total;
    uint32_t pid, tid;
    jitanon_result res;
    JITANON_ASSERT(rec && out_size);
    jitanon__clear_error(err);
    if (rec->type == JITANON_PERF_RECORD_MMAP2) return jitanon_perf_encode_mmap2(buf, cap, out_size, rec, attr, err);
    if ((res = jitanon__pe_check(rec, attr, err)) != JITANON_OK) return res;
    body = jitanon__pe_body_size(rec, attr);
    if (attr && attr->sample_id_all && rec->type < 64 && rec->type != JITANON_PERF_RECORD_SAMPLE)
        trail = 8 * jitanon__popcount64(attr->sample_type & JITANON__PERF_SAMPLE_TRAILER);
    total = 8 + body + trail;
    if (total > JITANON__PERF_MAX_REC)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "%s record over 65535 bytes", jitanon_perf_record_name(rec->type));
    if ((res = jitanon__pw_room(total, buf, cap, out_size, err)) != JITANON_OK) return res;
    memset(p, 0, total);
    jitanon__pw_hdr(p, rec->type, rec->misc, total, rec->big_endian);
    if (rec->type == JITANON_PERF_RECORD_SAMPLE) {
        jitanon__pe_sample(p + 8, rec, attr, rec->big_endian);
        return JITANON_OK;
    }
    jitanon__pe_body(p + 8, rec, rec->big_endian, &pid, &tid);
    if (trail) jitanon__pw_trailer(p + 8 + body, attr, pid, tid, rec->sid.time, rec->sid.cpu, rec->big_endian);
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_perf_encode_attr(void *buf, size_t cap, jitanon_perf_attr *attr, uint64_t sample_period,
                                                    int big_endian, jitanon_error *err)
{
    uint8_t *p = (uint8_t *)buf;
    uint32_t size;
    JITANON_ASSERT(attr);
    jitanon__clear_error(err);
    size = attr->size ? attr->size : 128;
    if (size < JITANON__PERF_ATTR_VER0 || !buf || size > cap)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "attr of %u bytes: at least 64, and the buffer has %U",
                             (unsigned)size, (uint64_t)cap);
    memset(p, 0, size);
    jitanon__wr32(p, attr->type, big_endian);
    jitanon__wr32(p + 4, size, big_endian);
    jitanon__wr64(p + 8, attr->config, big_endian);
    jitanon__wr64(p + 16, sample_period, big_endian);
    jitanon__wr64(p + 24, attr->sample_type, big_endian);
    jitanon__wr64(p + 32, attr->read_format, big_endian);
    jitanon__wr64(p + 40, big_endian ? jitanon__bitrev64(attr->flags) : attr->flags, big_endian);
    if (size >= 96) jitanon__wr32(p + 92, (uint32_t)attr->clockid, big_endian);
    jitanon__pd_decode_attr(attr, p, size, big_endian);
    attr->raw.data = p;
    attr->raw.size = size;
    return JITANON_OK;
}

/* -- [perf-path] path to path: copy or inject, the output atomic --------------------------- */

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
JITANON__PRIVATE int jitanon__pc_stdout(void *user, const void *data, size_t size)
{
    (void)user;
    return fwrite(data, 1, size, stdout) != size;
}

/* What runs between an opened reader and a ready writer: the copy, or the injector. */
typedef jitanon_result (*jitanon__pump_fn)(void *ctx, jitanon_perf_reader *r, jitanon_perf_writer *w,
                                           jitanon_error *err);

JITANON__PRIVATE jitanon_result jitanon__pc_pump_copy(void *ctx, jitanon_perf_reader *r, jitanon_perf_writer *w,
                                                      jitanon_error *err)
{
    (void)ctx;
    return jitanon_perf_copy(r, w, err);
}

JITANON__PRIVATE jitanon_result jitanon__pc_to_stdout(jitanon_perf_reader *r, const jitanon_perf_opts *opts,
                                                     jitanon__pump_fn pump, void *ctx, jitanon_error *err)
{
    jitanon_perf_writer w;
    jitanon_sink s;
    jitanon_result res;
    s.write_fn = jitanon__pc_stdout;
    s.user = NULL;
    res = jitanon_perf_writer_init(&w, JITANON_PERF_PIPE, r->big_endian, s, NULL, opts, err);
    if (res == JITANON_OK) res = pump(ctx, r, &w, err);
    if (res == JITANON_OK && fflush(stdout)) res = JITANON__FAIL(err, JITANON_ERR_WRITE, w.bytes_written, "stdout");
    jitanon_perf_writer_release(&w);
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__pc_to_path(jitanon_perf_reader *r, const char *path, jitanon_perf_mode mode,
                                                   const jitanon_perf_opts *opts, jitanon__pump_fn pump, void *ctx,
                                                   jitanon_error *err)
{
    jitanon_atomic_file f;
    jitanon_perf_writer w;
    jitanon_result res = jitanon_atomic_open(&f, path, opts ? &opts->allocator : NULL, err);
    if (res != JITANON_OK) return res;
    memset(&w, 0, sizeof w);
    res = jitanon_perf_writer_init(&w, mode, r->big_endian, jitanon_atomic_sink(&f), jitanon_atomic_pwrite, opts, err);
    if (res == JITANON_OK) res = pump(ctx, r, &w, err);
    if (res == JITANON_OK) res = jitanon_atomic_commit(&f, 0, err);
    jitanon_atomic_abort(&f);
    jitanon_perf_writer_release(&w);
    return res;
}

/* Path ("-" = stdin) to path ("-" = stdout, pipe mode only), the output atomic. */
JITANON__PRIVATE jitanon_result jitanon__pc_run(const char *in_path, const char *out_path, jitanon_perf_mode out_mode,
                                               const jitanon_perf_opts *opts, jitanon__pump_fn pump, void *ctx,
                                               jitanon_error *err)
{
    jitanon_perf_reader r;
    jitanon_perf_mode mode;
    int to_stdout = strcmp(out_path, "-") == 0;
    jitanon_result res;
    if ((unsigned)out_mode > JITANON_PERF_PIPE)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "unknown out_mode %u", (unsigned)out_mode);
    res = jitanon_perf_reader_open(&r, in_path, opts, err);
    /* stdout cannot seek back to the file header: "the input's mode" is pipe there, as in perf inject */
    mode = out_mode != JITANON_PERF_SAME_MODE ? out_mode : to_stdout ? JITANON_PERF_PIPE : r.mode;
    if (res == JITANON_OK && to_stdout && mode == JITANON_PERF_FILE)
        res = JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "stdout takes pipe mode only (file mode needs a path)");
    if (res == JITANON_OK)
        res = to_stdout ? jitanon__pc_to_stdout(&r, opts, pump, ctx, err)
                        : jitanon__pc_to_path(&r, out_path, mode, opts, pump, ctx, err);
    jitanon_perf_reader_release(&r);
    return res;
}

JITANON_API jitanon_result jitanon_perf_copy_file(const char *in_path, const char *out_path,
                                                  jitanon_perf_mode out_mode, const jitanon_perf_opts *opts,
                                                  jitanon_error *err)
{
    return jitanon__pc_run(in_path, out_path, out_mode, opts, jitanon__pc_pump_copy, NULL, err);
}
#endif
/* -- [rangemap] Address ranges: the rangemap ----------------------------------------------- */

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

/* The sorted array, in one allocation of flat_cap_ * JITANON__RM_FLAT_BYTES: a record of
   four words a piece - its start; its length - 1 (all ones: longer, or unknown) << 32 |
   its node index; its id; its kind - so a hit reads one or two cache lines and no node;
   then every 4th start, so the search's first steps stay in a small array.  The capacity
   is a power of two >= 8 (jitanon__grow). */
#define JITANON__RM_FLAT_BYTES 34 /* 4 words a piece, and a word every 4 */
#define JITANON__RM_LONG 0xFFFFFFFFu
#define JITANON__RM_FLAT_STEP 4
JITANON__PRIVATE uint64_t *jitanon__rm_flat_rec(const jitanon_rangemap *m, uint32_t k) { return m->flat_ + 4 * (size_t)k; }
JITANON__PRIVATE uint64_t *jitanon__rm_flat_top(const jitanon_rangemap *m) { return m->flat_ + 4 * m->flat_cap_; }

/* A record's second word: the piece's length - 1 (clamped) and node i. */
JITANON__PRIVATE uint64_t jitanon__rm_flat_ln(uint64_t len, uint32_t i)
{
    return (len < JITANON__RM_LONG ? len : JITANON__RM_LONG) << 32 | i;
}

/* Node i's record at place k of the sorted array (a new start of a block goes to the
   top array too). */
JITANON__PRIVATE void jitanon__rm_flat_put(jitanon_rangemap *m, uint32_t k, uint32_t i)
{
    const jitanon__rm_node *n = &m->nodes_[i];
    uint64_t *rec = jitanon__rm_flat_rec(m, k);
    if (k % JITANON__RM_FLAT_STEP == 0) jitanon__rm_flat_top(m)[k / JITANON__RM_FLAT_STEP] = n->start;
    rec[0] = n->start;
    rec[1] = jitanon__rm_flat_ln(n->last - n->start, i);
    rec[2] = n->id;
    rec[3] = n->kind;
    m->flat_pos_[i] = k + 1;
}

/* The hit table's slot for addr (Fibonacci hashing of its 256-byte granule, so the
   functions sharing a page each keep their own): four words, the piece's start, (its
   length - 1) << 32 | its node, its id and its kind, so neither a hit nor a miss reads a
   node.  Only pieces of at most 4 KiB go there (17 granules at most). */
#define JITANON__RM_SLOT_SHIFT 8
#define JITANON__RM_SLOT_MAX 0xFFFu
JITANON__PRIVATE uint64_t *jitanon__rm_slot(jitanon_rangemap *m, uint64_t addr)
{
    return &m->hits_[4 * ((uint32_t)(((addr >> JITANON__RM_SLOT_SHIFT) * 0x9E3779B97F4A7C15ull) >> 40) & (m->nhits_ - 1))];
}

/* Node i is about to change or go: the lookup caches forget it, so a hit in either
   needs no look at the node (jitanon__rm_find_cached).  The hit table's slots that
   hold it are emptied: it is cached only from the granules it spans (jitanon__rm_slot). */
JITANON__PRIVATE void jitanon__rm_unslot(jitanon_rangemap *m, uint32_t i)
{
    const jitanon__rm_node *n = &m->nodes_[i];
    uint64_t g, *slot;
    if (!m->nhits_ || n->last - n->start > JITANON__RM_SLOT_MAX) return;
    for (g = n->start >> JITANON__RM_SLOT_SHIFT; g <= n->last >> JITANON__RM_SLOT_SHIFT; g++) {
        slot = jitanon__rm_slot(m, g << JITANON__RM_SLOT_SHIFT);
        if ((uint32_t)slot[1] == i) slot[0] = slot[1] = slot[2] = slot[3] = 0;
    }
}

/* ... and its entry in the sorted array becomes a miss (length 0, node 0). */
JITANON__PRIVATE void jitanon__rm_unflat(jitanon_rangemap *m, uint32_t i)
{
    jitanon__rm_unslot(m, i);
    if (i < m->flat_pos_n_ && m->flat_pos_[i]) {
        jitanon__rm_flat_rec(m, m->flat_pos_[i] - 1)[1] = 0; /* length 0, node 0: no piece */
        m->flat_pos_[i] = 0;
    }
}

/* Piece i loses its tail, to end at `last`: its start stays, so the sorted array's entry
   stays in its place with the new length. */
JITANON__PRIVATE void jitanon__rm_shorten(jitanon_rangemap *m, uint32_t i, uint64_t last)
{
    jitanon__rm_unslot(m, i);
    m->nodes_[i].last = last;
    if (i < m->flat_pos_n_ && m->flat_pos_[i])
        jitanon__rm_flat_rec(m, m->flat_pos_[i] - 1)[1] = jitanon__rm_flat_ln(last - m->nodes_[i].start, i);
}

JITANON__PRIVATE void jitanon__rm_release(jitanon_rangemap *m, uint32_t i)
{
    jitanon__rm_unflat(m, i);
    m->nodes_[i].kind = 0; /* not live: the lookup cache checks this */
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

/* -- the lookup cache.  Samples far outnumber changes in a long recording, and a treap
   descent is a chain of cache misses.  The cache keeps node indices, each checked before
   use: a live node (kind != 0; a freed node gets kind 0) that contains the address is
   the answer, because pieces never overlap.  So a change never has to touch the cache,
   and a stale entry costs a fall-back, never a wrong answer.  Beside each index the cache
   keeps a copy of its piece's bounds: an entry whose copy does not hold the address is
   passed over without reading its node (random samples miss the first layers mostly, and
   each node read is a cache miss).  Three layers, tried in turn:
   - recent hits in a direct-mapped table by 4 KiB page, and in a few large pieces (a
     binary's text, which random addresses would spread over too many pages);
   - a sorted array of the pieces that a branch-free two-level binary search reads: rebuilt
     from the list once lookups that it could not answer (pieces added since) have paid for
     the walk over every piece;
   - the tree.
   Lookups through the cache mutate the map, so they are internal (the injector's
   per-sample path); the public jitanon_rangemap_lookup stays a plain read. -- */

JITANON__PRIVATE void jitanon__rm_changed(jitanon_rangemap *m) { m->gen_++; }

/* Builds the sorted array; 0 when it cannot be allocated (lookups then use the tree).
   Every piece in it stays exact: jitanon__rm_unflat, jitanon__rm_shorten and
   jitanon__rm_flat_add keep it so. */
JITANON__PRIVATE int jitanon__rm_flatten(jitanon_rangemap *m)
{
    void *p = m->flat_, *q = m->flat_pos_;
    uint32_t i, k = 0;
    m->flat_wait_ = 0;
    if (!jitanon__grow(&m->allocator, &q, &m->flat_pos_cap_, (size_t)m->used_, sizeof *m->flat_pos_)) return 0;
    m->flat_pos_ = (uint32_t *)q;
    if (!jitanon__grow(&m->allocator, &p, &m->flat_cap_, (size_t)m->count_ + 1, JITANON__RM_FLAT_BYTES)) return 0;
    m->flat_ = (uint64_t *)p;
    memset(m->flat_pos_, 0, (size_t)m->used_ * sizeof *m->flat_pos_);
    m->flat_pos_n_ = m->used_;
    for (i = jitanon__rm_leftmost(m->nodes_, m->root_); i; i = m->nodes_[i].next) jitanon__rm_flat_put(m, k++, i);
    m->flat_n_ = k;
    return 1;
}

JITANON__PRIVATE int jitanon__rm_holds(const jitanon_rangemap *m, uint32_t i, uint64_t addr)
{
    const jitanon__rm_node *n;
    if (!i) return 0; /* before the pool is touched: an empty map has none (NULL + 0) */
    n = &m->nodes_[i];
    return n->kind && n->start <= addr && n->last >= addr;
}

/* The index of the greatest start <= addr among st[0..n) (st[0] <= addr, n >= 1), without
   a branch to mispredict. */
JITANON__PRIVATE uint32_t jitanon__rm_floor_in(const uint64_t *st, uint32_t n, uint64_t addr)
{
    uint32_t lo = 0, half;
    while (n > 1) {
        half = n / 2;
        lo = st[lo + half] <= addr ? lo + half : lo;
        n -= half;
    }
    return lo;
}

/* The node the sorted array says holds addr, or 0: its copy of the piece must hold addr.
   A piece changed since has node 0 there (jitanon__rm_unflat), so the node is not read
   (that read was the lookup's costliest miss), but for pieces too long to copy.  *at:
   1 + the piece's place when its copy is exact (jitanon__rm_out_flat), else 0. */
JITANON__PRIVATE uint32_t jitanon__rm_find_flat(const jitanon_rangemap *m, uint64_t addr, uint32_t *at)
{
    const uint64_t *rec;
    uint32_t n = m->flat_n_, k, nb, left;
    *at = 0;
    if (!n || m->flat_[0] > addr) return 0;
    nb = (n + JITANON__RM_FLAT_STEP - 1) / JITANON__RM_FLAT_STEP;
    k = jitanon__rm_floor_in(jitanon__rm_flat_top(m), nb, addr) * JITANON__RM_FLAT_STEP;
    left = n - k < JITANON__RM_FLAT_STEP ? n - k : JITANON__RM_FLAT_STEP; /* the block: its first start <= addr */
    while (left > 1 && jitanon__rm_flat_rec(m, k + 1)[0] <= addr) {
        k++;
        left--;
    }
    rec = jitanon__rm_flat_rec(m, k);
    if (rec[1] >> 32 == JITANON__RM_LONG) return jitanon__rm_holds(m, (uint32_t)rec[1], addr) ? (uint32_t)rec[1] : 0;
    if (addr - rec[0] > rec[1] >> 32 || !(uint32_t)rec[1]) return 0;
    *at = k + 1;
    return (uint32_t)rec[1];
}

/* The sorted array keeps up with the common change, code placed above every piece it
   holds (a JIT filling its code cache upward, the rest of the mapping split off after
   it): a new piece past its last start is appended when there is room.  Any other new
   piece is a miss until the next rebuild. */
JITANON__PRIVATE void jitanon__rm_flat_add(jitanon_rangemap *m, uint32_t i)
{
    uint32_t k = m->flat_n_;
    if (!m->flat_ || !k || k >= m->flat_cap_ || i >= m->flat_pos_cap_ ||
        jitanon__rm_flat_rec(m, k - 1)[0] >= m->nodes_[i].start)
        return;
    if (i >= m->flat_pos_n_) {
        memset(m->flat_pos_ + m->flat_pos_n_, 0, (size_t)(i + 1 - m->flat_pos_n_) * sizeof *m->flat_pos_);
        m->flat_pos_n_ = i + 1;
    }
    jitanon__rm_flat_put(m, k, i);
    m->flat_n_ = k + 1;
}

JITANON__PRIVATE void jitanon__rm_out(const jitanon_rangemap *m, uint32_t i, jitanon_range *out)
{
    const jitanon__rm_node *n = &m->nodes_[i];
    out->start = n->start;
    out->len = n->last - n->start + 1; /* cannot overflow: see jitanon_range */
    out->kind = n->kind;
    out->id = n->id;
}

/* What jitanon__rm_out tells of a piece, from the sorted array's exact copy at at - 1. */
JITANON__PRIVATE void jitanon__rm_out_flat(const jitanon_rangemap *m, uint32_t at, jitanon_range *out)
{
    const uint64_t *rec = jitanon__rm_flat_rec(m, at - 1);
    out->start = rec[0];
    out->len = (rec[1] >> 32) + 1;
    out->kind = (uint32_t)rec[3];
    out->id = rec[2];
}

/* Sizes the hit table to the map (64 to 4096 slots); 0 when there is none. */
JITANON__PRIVATE int jitanon__rm_hits_fit(jitanon_rangemap *m)
{
    uint32_t want = 64;
    void *p;
    if (m->nhits_ >= 4096 || (m->nhits_ && m->nhits_ >= m->count_ * 2)) return 1; /* every lookup asks: no loop */
    while (want < 4096 && want < m->count_ * 2) want *= 2;
    if (m->nhits_ >= want) return 1;
    p = jitanon__malloc(&m->allocator, want * 4 * sizeof *m->hits_);
    if (!p) return m->nhits_ != 0;
    jitanon__free(&m->allocator, m->hits_, m->nhits_ * 4 * sizeof *m->hits_);
    m->hits_ = (uint64_t *)p;
    m->nhits_ = want;
    memset(m->hits_, 0, want * 4 * sizeof *m->hits_);
    return 1;
}

/* jitanon__rm_find through the caches, with what jitanon__rm_out tells of the piece
   (when one holds addr; else *out is untouched): from the hit table's or the sorted
   array's exact copies, so mostly without reading the node. */
JITANON__PRIVATE uint32_t jitanon__rm_find_cached(jitanon_rangemap *m, uint64_t addr, jitanon_range *out)
{
    uint64_t *slot = NULL;
    uint32_t i, k, at = 0;
    if (jitanon__rm_hits_fit(m)) {
        slot = jitanon__rm_slot(m, addr);
        /* exact: a slot is emptied when its node changes (jitanon__rm_unflat) */
        if ((i = (uint32_t)slot[1]) != 0 && addr - slot[0] <= slot[1] >> 32) {
            out->start = slot[0];
            out->len = (slot[1] >> 32) + 1;
            out->id = slot[2];
            out->kind = (uint32_t)slot[3];
            return i;
        }
    }
    for (k = 0; k < 4; k++)
        if (addr - m->big_start_[k] <= m->big_len_[k] && jitanon__rm_holds(m, m->big_[k], addr)) {
            jitanon__rm_out(m, m->big_[k], out);
            return m->big_[k];
        }
    i = m->flat_ ? jitanon__rm_find_flat(m, addr, &at) : 0;
    if (!i) {
        /* A rebuild walks every piece: it waits for as many misses as a quarter of them,
           so changes interleaved with lookups cost little more than the tree alone. */
        if (++m->flat_wait_ >= m->count_ / 4 + 32) (void)jitanon__rm_flatten(m);
        if (!(i = jitanon__rm_find(m, addr))) return 0;
    }
    if (at) jitanon__rm_out_flat(m, at, out);
    else jitanon__rm_out(m, i, out);
    if (out->len - 1 >= 0xFFFFu) {
        k = m->big_next_++ & 3;
        m->big_[k] = i;
        m->big_start_[k] = out->start;
        m->big_len_[k] = out->len - 1;
    } else if (slot && out->len - 1 <= JITANON__RM_SLOT_MAX) {
        slot[0] = out->start;
        slot[1] = (out->len - 1) << 32 | i;
        slot[2] = out->id;
        slot[3] = out->kind;
    }
    return i;
}

JITANON__PRIVATE uint32_t jitanon__rm_find_fast(jitanon_rangemap *m, uint64_t addr)
{
    jitanon_range ignored;
    return jitanon__rm_find_cached(m, addr, &ignored);
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
    if (pred && n[pred].last >= s) jitanon__rm_shorten(m, pred, s - 1); /* pred.start < s, so s > 0 */
    c = b;
    if (last != UINT64_MAX) jitanon__rm_split(n, b, last + 1, &c, &d);
    (void)c; /* its nodes are exactly the list run from `first`: released through the list */
    succ = jitanon__rm_drop_run(m, first, last);
    jitanon__rm_link(m, pred, add, nadd, succ);
    if (nadd) jitanon__rm_flat_add(m, add[0]);
    if (nadd == 2) jitanon__rm_flat_add(m, add[1]);
    m->root_ = jitanon__rm_merge(n, jitanon__rm_merge(n, a, jitanon__rm_merge(n, add[0], add[1])), d);
    jitanon__rm_changed(m);
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

JITANON_API void jitanon_rangemap_release(jitanon_rangemap *m)
{
    jitanon_allocator a;
    uint64_t gen;
    if (!m) return;
    a = m->allocator;
    gen = m->gen_ + 1;
    jitanon__free(&a, m->nodes_, m->cap_ * sizeof(jitanon__rm_node));
    jitanon__free(&a, m->flat_, m->flat_cap_ * JITANON__RM_FLAT_BYTES);
    jitanon__free(&a, m->flat_pos_, m->flat_pos_cap_ * sizeof *m->flat_pos_);
    jitanon__free(&a, m->hits_, m->nhits_ * 4 * sizeof *m->hits_);
    jitanon_rangemap_init(m, &a);
    m->gen_ = gen;
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

JITANON_API void jitanon_rangemap_iter_begin_all(jitanon_rangemap_iter *it, const jitanon_rangemap *m)
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
        tmp.flat_ = NULL; /* the copy builds its own cache */
        tmp.flat_cap_ = 0;
        tmp.flat_pos_ = NULL;
        tmp.flat_pos_cap_ = 0;
        tmp.flat_pos_n_ = 0;
        tmp.hits_ = NULL;
        tmp.nhits_ = 0;
        memset(tmp.big_, 0, sizeof tmp.big_);
    }
    tmp.gen_ = (dst->gen_ > src->gen_ ? dst->gen_ : src->gen_) + 1;
    jitanon__rm_changed(&tmp);
    jitanon_rangemap_release(dst);
    *dst = tmp;
    return JITANON_OK;
}

/* -- [trim] The trimming engine ------------------------------------------------------------ */

/* One process: its address map as perf will build it from our output. */
typedef struct jitanon__trim_proc {
    uint32_t pid;
    int has_jitdump, seen;
    uint64_t last_time;
    jitanon_rangemap map;
} jitanon__trim_proc;

struct jitanon_trim {
    jitanon_allocator user_alloc; /* the caller's; backs everything */
    jitanon__counted mem;         /* [alloc]: memory_limit over the tables */
    jitanon_allocator alloc;      /* mem's hooks, given to every table */
    int reject_out_of_order;
    jitanon_rangemap pids; /* [pid, pid] -> index into procs */
    jitanon__trim_proc *procs;
    size_t nprocs, procs_cap;
    jitanon_trim_piece *pieces; /* output of the last jitanon_trim_mmap */
    size_t pieces_cap;
    jitanon_trim_stats stats;
    /* The last process jitanon__trim_resolve_fast found, valid while pids.gen_ is gen_pid. */
    uint64_t gen_pid;
    uint32_t last_pid;
    size_t last_proc; /* index into procs, + 1; 0 = none */
};

/* Reports an allocation failure as JITANON_ERR_LIMIT when memory_limit refused it. */
JITANON__PRIVATE jitanon_result jitanon__trim_fix(jitanon_trim *t, jitanon_result r, jitanon_error *err)
{
    return jitanon__counted_fix(&t->mem, r, err);
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

JITANON_API jitanon_result jitanon_trim_create(const jitanon_trim_opts *opts, jitanon_trim **out,
                                               jitanon_error *err)
{
    jitanon_trim *t;
    const jitanon_allocator *a = opts ? &opts->allocator : NULL;
    jitanon__clear_error(err);
    *out = NULL;
    if (JITANON__OPTS_BAD(opts)) return jitanon__opts_fail(err, "jitanon_trim_opts");
    t = (jitanon_trim *)jitanon__malloc(a, sizeof *t);
    if (!t) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "trim engine");
    memset(t, 0, sizeof *t);
    if (a) t->user_alloc = *a;
    jitanon__counted_init(&t->mem, a, opts ? opts->memory_limit : 0, "memory_limit");
    t->alloc = jitanon__counted_hooks(&t->mem);
    t->reject_out_of_order = opts ? opts->reject_out_of_order_ : 0;
    jitanon_rangemap_init(&t->pids, &t->alloc);
    *out = t;
    return JITANON_OK;
}

JITANON_API void jitanon_trim_destroy(jitanon_trim *t)
{
    jitanon_allocator a;
    size_t i;
    if (!t) return;
    for (i = 0; i < t->nprocs; i++) jitanon_rangemap_release(&t->procs[i].map);
    jitanon__free(&t->alloc, t->procs, t->procs_cap * sizeof *t->procs);
    jitanon__free(&t->alloc, t->pieces, t->pieces_cap * sizeof *t->pieces);
    jitanon_rangemap_release(&t->pids);
    a = t->user_alloc;
    jitanon__free(&a, t, sizeof *t);
}

JITANON_API jitanon_result jitanon_trim_set_jitdump(jitanon_trim *t, uint32_t pid, jitanon_error *err)
{
    jitanon__trim_proc *p;
    jitanon_result r;
    jitanon__clear_error(err);
    t->mem.hit = 0;
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
    t->mem.hit = 0;
    if (span < 0) return jitanon__rm_bad_span(err, start, size);
    if (!span) return JITANON_OK;
    r = jitanon__trim_begin(t, pid, time, &p, &late, err);
    if (r == JITANON_OK) r = jitanon__trim_fix(t, jitanon__rm_set(&p->map, start, last, JITANON_TRIM_JIT, id, err), err);
    if (r != JITANON_OK) return r;
    jitanon__trim_commit(t, p, time, late);
    (*counter)++;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_trim_load(jitanon_trim *t, const jitanon_trim_event *ev, jitanon_error *err)
{
    return jitanon__trim_jit(t, ev->pid, ev->time, ev->start, ev->len, ev->id, &t->stats.loads, err);
}

JITANON_API jitanon_result jitanon_trim_move(jitanon_trim *t, const jitanon_trim_event *ev, jitanon_error *err)
{
    return jitanon__trim_jit(t, ev->pid, ev->time, ev->start, ev->len, ev->id, &t->stats.moves, err);
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
                                                   uint64_t last, uint64_t pgoff, uint64_t map_id, size_t *n,
                                                   jitanon_error *err)
{
    jitanon_rangemap_iter it;
    jitanon_range r;
    uint64_t cur = start, rs, rl;
    jitanon_result res;
    jitanon_rangemap_iter_begin(&it, m, start, last - start + 1);
    while (jitanon_rangemap_iter_next(&it, &r)) {
        /* Live jit code is cut out; so is what this very mapping (an equal map_id) already
           covers: writing it again would not change perf's map, and a JIT that grows its
           code cache would otherwise repeat every gap between functions at each growth. */
        if (r.kind != JITANON_TRIM_JIT && !(r.kind == JITANON_TRIM_ANON && r.id == map_id)) continue;
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
    jitanon_result r = jitanon__trim_gaps(t, &p->map, start, last, pgoff, map_id, n, err);
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

JITANON_API jitanon_result jitanon_trim_mmap(jitanon_trim *t, const jitanon_trim_event *ev,
                                             const jitanon_trim_piece **pieces, size_t *count,
                                             jitanon_error *err)
{
    uint32_t pid = ev->pid;
    uint64_t time = ev->time, start = ev->start, len = ev->len, pgoff = ev->pgoff, map_id = ev->id;
    jitanon_trim_kind kind = ev->kind;
    jitanon__trim_proc *p;
    uint64_t last = 0;
    size_t n = 0;
    int late, span = jitanon__rm_span(start, len, &last);
    jitanon_result r;
    jitanon__clear_error(err);
    t->mem.hit = 0;
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
    jitanon_rangemap_release(&p->map);
    r = jitanon__rm_set(&t->pids, pid, pid, 0, 0, NULL); /* removes a whole node: allocates nothing */
    JITANON_ASSERT(r == JITANON_OK);
    (void)r;
    if (i != --t->nprocs) { /* keep procs dense: the last one moves into the hole */
        t->procs[i] = t->procs[t->nprocs];
        node = jitanon__rm_find(&t->pids, t->procs[i].pid);
        JITANON_ASSERT(node);
        jitanon__rm_unflat(&t->pids, node); /* the sorted array keeps a copy of the id */
        t->pids.nodes_[node].id = i;
    }
    t->stats.processes--;
}

JITANON_API jitanon_result jitanon_trim_fork(jitanon_trim *t, uint32_t parent, uint32_t child, jitanon_error *err)
{
    jitanon__trim_proc *c;
    jitanon_result r;
    jitanon__clear_error(err);
    t->mem.hit = 0;
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

/* jitanon_trim_resolve through the lookup caches (of the process table and of the
   process's map; see jitanon__rm_find_fast): what the injector asks for every sample. */
JITANON__PRIVATE jitanon_trim_kind jitanon__trim_resolve_fast(jitanon_trim *t, uint32_t pid, uint64_t addr,
                                                             jitanon_range *out)
{
    jitanon_rangemap *m;
    jitanon_range where;
    uint32_t i = 0, kind = 0;
    int limit_hit = t->mem.hit; /* a cache that could not be allocated is no failure */
    if (!t->last_proc || t->last_pid != pid || t->gen_pid != t->pids.gen_) {
        i = jitanon__rm_find_fast(&t->pids, pid);
        t->last_proc = i ? (size_t)t->pids.nodes_[i].id + 1 : 0;
        t->last_pid = pid;
        t->gen_pid = t->pids.gen_;
        i = 0;
    }
    if (t->last_proc) {
        m = &t->procs[t->last_proc - 1].map;
        if ((i = jitanon__rm_find_cached(m, addr, out ? out : &where)) != 0) kind = (out ? out : &where)->kind;
    }
    t->mem.hit = limit_hit;
    if (!i) {
        if (out) memset(out, 0, sizeof *out);
        return JITANON_TRIM_NONE;
    }
    return (jitanon_trim_kind)kind;
}

JITANON_API const jitanon_rangemap *jitanon_trim_map(const jitanon_trim *t, uint32_t pid)
{
    const jitanon__trim_proc *p = jitanon__trim_find(t, pid);
    return p ? &p->map : NULL;
}

/* The held bytes live in the counting allocator; they are copied into the stats here (t
   came from jitanon_trim_create, so it is not a const object). */
JITANON_API const jitanon_trim_stats *jitanon_trim_get_stats(const jitanon_trim *t)
{
    jitanon_trim *m = (jitanon_trim *)(uintptr_t)t;
    m->stats.bytes_held = t->mem.held;
    m->stats.peak_bytes = t->mem.peak;
    return &t->stats;
}

JITANON_API jitanon_trim_kind jitanon_trim_classify(const char *name, size_t len)
{
    static const char *const prefixes[] = {"//anon", "[anon:", "/memfd:", "/dev/zero"};
    size_t i, n;
    for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        n = strlen(prefixes[i]);
        if (name && len >= n && memcmp(name, prefixes[i], n) == 0) return JITANON_TRIM_ANON;
    }
    return JITANON_TRIM_FILE;
}
/* -- [elf] ELF emitter -----------------------------------------------------------------------

   Written from the System V gABI (ELF), the DWARF 4 specification (line programs, CIE/FDE),
   the LSB description of .eh_frame_hdr and FIPS 180-4 (SHA-1).  The layout contract with
   perf and V8 is described next to the API. */

#define JITANON__EM_SPARC 2u
#define JITANON__EM_386 3u
#define JITANON__EM_PPC 20u
#define JITANON__EM_ARM 40u
#define JITANON__EM_X86_64 62u
#define JITANON__EM_PPC64 21u
#define JITANON__EM_AARCH64 183u
#define JITANON__EM_LOONGARCH 258u
#define JITANON__SHT_PROGBITS 1u
#define JITANON__SHT_SYMTAB 2u
#define JITANON__SHT_STRTAB 3u
#define JITANON__SHT_NOTE 7u
#define JITANON__SHT_NOBITS 8u
#define JITANON__SHT_DYNSYM 11u
#define JITANON__SHF_ALLOC 2u
#define JITANON__SHF_EXECINSTR 4u
#define JITANON__SHF_COMPRESSED 0x800u
#define JITANON__PT_LOAD 1u
#define JITANON__ELF_LOAD_ALIGN 0x1000u /* > text_base, so the PT_LOAD rounds down to address 0; 64 KiB
                                          for some machines (jitanon__elf_load_align) */
#define JITANON__PT_NOTE 4u
#define JITANON__PT_GNU_EH_FRAME 0x6474e550u
#define JITANON__NT_GNU_BUILD_ID 3u
#define JITANON__ELF_MAX_PHDRS 3u
#define JITANON__ELF_MAX_SECTIONS 12u
#define JITANON__ELF_MAX_CIES 8u
#define JITANON__V8_MARKER 0xDEADBEEFu

/* -- SHA-1 (FIPS 180-4, section 6.1) -- */

JITANON__PRIVATE uint32_t jitanon__rol32(uint32_t x, unsigned n) { return (x << n) | (x >> (32u - n)); }

/* Rounds written out with a 16-word rolling schedule: the plain loop with a branch per
   round ran at 170-290 MB/s, and the build-id hashes every byte of jitted code. */
#define JITANON__SHA1_F1(b, c, d) ((d) ^ ((b) & ((c) ^ (d))))
#define JITANON__SHA1_F2(b, c, d) ((b) ^ (c) ^ (d))
#define JITANON__SHA1_F3(b, c, d) (((b) & (c)) | ((d) & ((b) | (c))))
#define JITANON__SHA1_IN(i) w[i]
#define JITANON__SHA1_W(i) \
    (w[(i) & 15] = jitanon__rol32(w[((i) + 13) & 15] ^ w[((i) + 8) & 15] ^ w[((i) + 2) & 15] ^ w[(i) & 15], 1))
#define JITANON__SHA1_R(a, b, c, d, e, F, k, x) \
    do { \
        e += jitanon__rol32(a, 5) + F(b, c, d) + (k) + (x); \
        b = jitanon__rol32(b, 30); \
    } while (0)
#define JITANON__SHA1_5(F, k, i, X) \
    JITANON__SHA1_R(a, b, c, d, e, F, k, X(i)); \
    JITANON__SHA1_R(e, a, b, c, d, F, k, X((i) + 1)); \
    JITANON__SHA1_R(d, e, a, b, c, F, k, X((i) + 2)); \
    JITANON__SHA1_R(c, d, e, a, b, F, k, X((i) + 3)); \
    JITANON__SHA1_R(b, c, d, e, a, F, k, X((i) + 4))
#define JITANON__SHA1_20(F, k, i) \
    JITANON__SHA1_5(F, k, i, JITANON__SHA1_W); \
    JITANON__SHA1_5(F, k, (i) + 5, JITANON__SHA1_W); \
    JITANON__SHA1_5(F, k, (i) + 10, JITANON__SHA1_W); \
    JITANON__SHA1_5(F, k, (i) + 15, JITANON__SHA1_W)

JITANON__PRIVATE void jitanon__sha1_block(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    unsigned i;
    for (i = 0; i < 16; i++) w[i] = jitanon__rd32(p + 4 * i, 1);
    JITANON__SHA1_5(JITANON__SHA1_F1, 0x5A827999u, 0, JITANON__SHA1_IN);
    JITANON__SHA1_5(JITANON__SHA1_F1, 0x5A827999u, 5, JITANON__SHA1_IN);
    JITANON__SHA1_5(JITANON__SHA1_F1, 0x5A827999u, 10, JITANON__SHA1_IN);
    JITANON__SHA1_R(a, b, c, d, e, JITANON__SHA1_F1, 0x5A827999u, w[15]);
    JITANON__SHA1_R(e, a, b, c, d, JITANON__SHA1_F1, 0x5A827999u, JITANON__SHA1_W(16));
    JITANON__SHA1_R(d, e, a, b, c, JITANON__SHA1_F1, 0x5A827999u, JITANON__SHA1_W(17));
    JITANON__SHA1_R(c, d, e, a, b, JITANON__SHA1_F1, 0x5A827999u, JITANON__SHA1_W(18));
    JITANON__SHA1_R(b, c, d, e, a, JITANON__SHA1_F1, 0x5A827999u, JITANON__SHA1_W(19));
    JITANON__SHA1_20(JITANON__SHA1_F2, 0x6ED9EBA1u, 20);
    JITANON__SHA1_20(JITANON__SHA1_F3, 0x8F1BBCDCu, 40);
    JITANON__SHA1_20(JITANON__SHA1_F2, 0xCA62C1D6u, 60);
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

/* x86 SHA extensions, when the CPU has them: 3-4x the portable rounds.  Asked for only
   once a hash passed 64 KiB (a per-process build-id over all the code of a dump), so
   small hashes never pay for CPUID, which traps to the hypervisor in a VM. */
#if JITANON__SHA_NI
/* One step of four rounds; m[k & 3] holds message words 4k..4k+3, highest lane first. */
#define JITANON__SHA_NI_STEP(k, f) \
    do { \
        if ((k) >= 4 && (k) < 20) \
            m[(k) & 3] = _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32(m[(k) & 3], m[((k) + 1) & 3]), \
                                                          m[((k) + 2) & 3]), m[((k) + 3) & 3]); \
        if ((k) > 0) e = _mm_sha1nexte_epu32(prev, m[(k) & 3]); \
        prev = abcd; \
        abcd = _mm_sha1rnds4_epu32(abcd, e, f); \
    } while (0)

__attribute__((target("sha,ssse3,sse4.1"))) JITANON__PRIVATE void jitanon__sha1_blocks_ni(uint32_t h[5],
                                                                                        const uint8_t *p, size_t n)
{
    const __m128i swap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(const void *)h), 0x1b);
    __m128i e0 = _mm_set_epi32((int)h[4], 0, 0, 0);
    while (n--) {
        __m128i m[4], e, prev, abcd0 = abcd, e00 = e0;
        int k;
        for (k = 0; k < 4; k++) m[k] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k)), swap);
        e = _mm_add_epi32(e0, m[0]);
        prev = abcd;
        for (k = 0; k < 5; k++) JITANON__SHA_NI_STEP(k, 0);
        for (; k < 10; k++) JITANON__SHA_NI_STEP(k, 1);
        for (; k < 15; k++) JITANON__SHA_NI_STEP(k, 2);
        for (; k < 20; k++) JITANON__SHA_NI_STEP(k, 3);
        e0 = _mm_sha1nexte_epu32(prev, e00);
        abcd = _mm_add_epi32(abcd, abcd0);
        p += 64;
    }
    _mm_storeu_si128((__m128i *)(void *)h, _mm_shuffle_epi32(abcd, 0x1b));
    h[4] = (uint32_t)_mm_extract_epi32(e0, 3);
}
#endif

JITANON__PRIVATE void jitanon__sha1_init(jitanon__sha1 *s)
{
    memset(s, 0, sizeof *s);
    s->h[0] = 0x67452301u;
    s->h[1] = 0xEFCDAB89u;
    s->h[2] = 0x98BADCFEu;
    s->h[3] = 0x10325476u;
    s->h[4] = 0xC3D2E1F0u;
}

JITANON__PRIVATE void jitanon__sha1_update(jitanon__sha1 *s, const void *data, size_t size)
{
    const uint8_t *p = (const uint8_t *)data;
    s->total += size;
    while (size) {
        size_t n = 64 - s->used;
        if (s->used == 0 && size >= 64) { /* whole blocks straight from the input */
#if JITANON__SHA_NI
            if (s->hw == 2 || (s->total >= 65536 && s->hw != 1)) {
                if (!s->hw) s->hw = jitanon__sha_ni_present() ? 2 : 1;
                if (s->hw == 2) {
                    size_t blocks = size / 64;
                    jitanon__sha1_blocks_ni(s->h, p, blocks);
                    p += blocks * 64;
                    size -= blocks * 64;
                    continue;
                }
            }
#endif
            jitanon__sha1_block(s->h, p);
            p += 64;
            size -= 64;
            continue;
        }
        if (n > size) n = size;
        memcpy(s->block + s->used, p, n);
        s->used += n;
        p += n;
        size -= n;
        if (s->used == 64) {
#if JITANON__SHA_NI
            if (s->hw == 2) jitanon__sha1_blocks_ni(s->h, s->block, 1);
            else
#endif
            jitanon__sha1_block(s->h, s->block);
            s->used = 0;
        }
    }
}

JITANON__PRIVATE void jitanon__sha1_final(jitanon__sha1 *s, uint8_t digest[20])
{
    uint8_t pad[72];
    uint64_t bits = s->total * 8;
    size_t n = (s->used < 56 ? 56 : 120) - s->used, i;
    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    jitanon__wr64(pad + n, bits, 1);
    jitanon__sha1_update(s, pad, n + 8);
    for (i = 0; i < 5; i++) jitanon__wr32(digest + 4 * i, s->h[i], 1);
}

JITANON__PRIVATE void jitanon__sha1_u64(jitanon__sha1 *s, uint64_t v)
{
    uint8_t b[8];
    jitanon__wr64(b, v, 0);
    jitanon__sha1_update(s, b, 8);
}

/* -- Output buffers (jitanon_membuf, appended to with jitanon__buf_*): ELF encodings. -- */

/* An address or offset field: 8 bytes in ELF64, 4 in ELF32. */
JITANON__PRIVATE void jitanon__buf_word(jitanon_membuf *b, uint64_t v, int is64, int big)
{
    if (is64) jitanon__buf_u64(b, v, big);
    else jitanon__buf_u32(b, v, big);
}

JITANON__PRIVATE void jitanon__buf_str(jitanon_membuf *b, const char *s, size_t n)
{
    jitanon__buf_bytes(b, s, n);
    jitanon__buf_u8(b, 0);
}

JITANON__PRIVATE void jitanon__buf_uleb(jitanon_membuf *b, uint64_t v)
{
    do {
        unsigned byte = (unsigned)(v & 0x7f);
        v >>= 7;
        jitanon__buf_u8(b, v ? byte | 0x80u : byte);
    } while (v);
}

JITANON__PRIVATE void jitanon__buf_sleb(jitanon_membuf *b, int64_t v)
{
    for (;;) {
        unsigned byte = (unsigned)((uint64_t)v & 0x7f);
        int done;
        v = v < 0 ? -((-(v + 1)) >> 7) - 1 : v >> 7; /* arithmetic shift without relying on it */
        done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        jitanon__buf_u8(b, done ? byte : byte | 0x80u);
        if (done) return;
    }
}

JITANON__PRIVATE uint64_t jitanon__align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* -- Builder ------------------------------------------------------------------------------ */

/* 64-bit unless the machine only exists as a 32-bit one. */
JITANON__PRIVATE uint32_t jitanon__elf_class_of(uint32_t machine)
{
    switch (machine) {
    case JITANON__EM_SPARC:
    case JITANON__EM_386:
    case JITANON__EM_PPC:
    case JITANON__EM_ARM: return 32;
    default: return 64;
    }
}

/* p_align of the PT_LOAD: the largest page the machine's kernels use, as its linkers
   write it (64 KiB for arm64, ppc64 and LoongArch, whose kernels may run 64 KiB pages; 4
   KiB elsewhere).  Readers only round p_vaddr down by it, to 0 either way (text_base is
   smaller); a loader on a kernel with larger pages than p_align refuses the file. */
JITANON__PRIVATE uint64_t jitanon__elf_load_align(uint32_t machine)
{
    switch (machine) {
    case JITANON__EM_AARCH64:
    case JITANON__EM_PPC64:
    case JITANON__EM_LOONGARCH: return 0x10000u;
    default: return JITANON__ELF_LOAD_ALIGN;
    }
}

JITANON__PRIVATE int jitanon__elf_is64(const jitanon_elf_builder *b) { return b->elf_class == 64; }
JITANON__PRIVATE uint64_t jitanon__elf_ehsize(int is64) { return is64 ? 64u : 52u; }
JITANON__PRIVATE uint64_t jitanon__elf_phentsize(int is64) { return is64 ? 56u : 32u; }
JITANON__PRIVATE uint64_t jitanon__elf_shentsize(int is64) { return is64 ? 64u : 40u; }

JITANON_API jitanon_result jitanon_elf_builder_init(jitanon_elf_builder *b, const jitanon_jitdump_header *header,
                                                    const jitanon_elf_opts *opts, jitanon_error *err)
{
    int is64;
    JITANON_ASSERT(b && header);
    memset(b, 0, sizeof *b);
    jitanon__clear_error(err);
    if (opts) {
        if (JITANON__OPTS_BAD(opts)) return jitanon__opts_fail(err, "jitanon_elf_opts");
        b->opts = *opts;
    }
    if (b->opts.compress_debug && !JITANON__HAS_ZLIB)
        return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "compress_debug needs JITANON_USE_ZLIB");
    if (b->opts.elf_class && b->opts.elf_class != 32 && b->opts.elf_class != 64)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "bad elf_class option");
    b->machine = b->opts.machine ? b->opts.machine : header->elf_mach;
    if (b->machine > 0xffffu)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 12, "e_machine %u does not fit 16 bits", (unsigned)b->machine);
    b->elf_class = b->opts.elf_class ? b->opts.elf_class : jitanon__elf_class_of(b->machine);
    b->big_endian = header->big_endian;
    is64 = jitanon__elf_is64(b);
    /* Room for every program header we may write, so pgoffs are known at add time. */
    b->text_base = jitanon__align_up(jitanon__elf_ehsize(is64) + JITANON__ELF_MAX_PHDRS * jitanon__elf_phentsize(is64), 16);
    b->text_end = b->text_base;
    jitanon__sha1_init(&b->id);
    jitanon__sha1_update(&b->id, "jitanon-elf-2", 14);
    jitanon_elf_line_bias_scan_init(&b->bias_scan, header);
    if (b->opts.line_bias != JITANON_ELF_LINE_BIAS_AUTO && b->opts.line_bias != JITANON_ELF_LINE_BIAS_NONE) {
        b->bias = b->opts.line_bias;
        b->notes |= JITANON_ELF_NOTE_LINE_BIAS;
    }
    return JITANON_OK;
}

/* -- Line bias detection (see jitanon_elf_line_bias_scan) -- */

/* Lowest and highest entry address of a DEBUG_INFO (and its first, when `first` is not
   NULL); 0 when it has no entry. */
JITANON__PRIVATE int jitanon__elf_debug_span(const jitanon_jitdump_record *rec, uint64_t *lo, uint64_t *hi,
                                             uint64_t *first)
{
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry d;
    int any = 0;
    jitanon_jitdump_debug_iter_begin(&it, rec);
    while (jitanon_jitdump_debug_iter_next(&it, &d)) {
        if (!any && first) *first = d.addr;
        if (!any || d.addr < *lo) *lo = d.addr;
        if (!any || d.addr > *hi) *hi = d.addr;
        any = 1;
    }
    return any;
}

JITANON__PRIVATE void jitanon__elf_bias_vote(jitanon_elf_line_bias_scan *s, uint64_t lo, uint64_t hi, uint64_t addr,
                                             uint64_t size)
{
    const uint64_t bias = JITANON_ELF_LINE_BIAS_PERF;
    s->functions++;
    if (lo < addr || lo - addr < bias) {
        s->low++;
        return;
    }
    if (hi - addr > size && hi - addr - size <= bias) s->past_end++; /* hi >= lo >= addr + bias */
    if (lo - addr == bias) s->at_bias++;
}

JITANON_API void jitanon_elf_line_bias_scan_init(jitanon_elf_line_bias_scan *s, const jitanon_jitdump_header *h)
{
    JITANON_ASSERT(s);
    memset(s, 0, sizeof *s);
    s->v8_marker = h && h->pad1 == JITANON__V8_MARKER;
}

/* The waiting DEBUG_INFO a LOAD at [addr, addr + size) takes, as jitanon_jitdump_debug_fits
   pairs them (the spans stand for the records); SIZE_MAX: none. */
JITANON__PRIVATE size_t jitanon__elf_bias_pick(const jitanon_elf_line_bias_scan *s, uint64_t addr, uint64_t size)
{
    size_t i = s->state_.nwait;
    while (i-- > 0)
        if (s->state_.wait[i].code_addr == addr) return i;
    for (i = s->state_.nwait; i-- > 0 && s->state_.wait[i].recent;)
        if (s->state_.wait[i].first >= addr && s->state_.wait[i].first - addr < size) return i;
    return SIZE_MAX;
}

JITANON_API void jitanon_elf_line_bias_scan_add(jitanon_elf_line_bias_scan *s, const jitanon_jitdump_record *rec)
{
    size_t i, n = s ? s->state_.nwait : 0;
    JITANON_ASSERT(s && rec);
    if (rec->id == JITANON_JITDUMP_CODE_DEBUG_INFO) {
        if (n == JITANON_ELF_LINE_BIAS_WAITING) /* the oldest goes without a vote */
            memmove(s->state_.wait, s->state_.wait + 1, --n * sizeof s->state_.wait[0]);
        if (jitanon__elf_debug_span(rec, &s->state_.wait[n].lo, &s->state_.wait[n].hi, &s->state_.wait[n].first)) {
            s->state_.wait[n].code_addr = rec->debug.code_addr;
            s->state_.wait[n++].recent = 1;
        }
        s->state_.nwait = (uint32_t)n;
    } else if (rec->id == JITANON_JITDUMP_CODE_LOAD) {
        i = jitanon__elf_bias_pick(s, rec->load.code_addr, rec->load.code_size);
        for (n = 0; n < s->state_.nwait; n++) s->state_.wait[n].recent = 0;
        if (i == SIZE_MAX) return;
        jitanon__elf_bias_vote(s, s->state_.wait[i].lo, s->state_.wait[i].hi, rec->load.code_addr, rec->load.code_size);
        memmove(s->state_.wait + i, s->state_.wait + i + 1, (--s->state_.nwait - i) * sizeof s->state_.wait[0]);
    }
}

JITANON_API jitanon_elf_line_bias jitanon_elf_line_bias_scan_result(const jitanon_elf_line_bias_scan *s)
{
    JITANON_ASSERT(s);
    if (s->low) return JITANON_ELF_LINE_BIAS_NONE;
    return s->past_end || s->at_bias * 2 > s->functions || s->v8_marker ? JITANON_ELF_LINE_BIAS_PERF
                                                                         : JITANON_ELF_LINE_BIAS_NONE;
}

JITANON__PRIVATE int jitanon__str_has_prefix(jitanon_str s, const char *p)
{
    size_t n = strlen(p);
    return s.length >= n && memcmp(s.data, p, n) == 0;
}

JITANON__PRIVATE int jitanon__str_has_suffix(jitanon_str s, const char *p)
{
    size_t n = strlen(p);
    return s.length >= n && memcmp(s.data + s.length - n, p, n) == 0;
}

/* BEAM's JIT names its shared fragments "global::..." and emits "...-CodeInfoPrologue"
   stubs; it also writes EM_X86_64 into the dump on every host. */
JITANON__PRIVATE int jitanon__elf_looks_erlang(jitanon_str name)
{
    return jitanon__str_has_prefix(name, "global::") || jitanon__str_has_suffix(name, "-CodeInfoPrologue");
}

JITANON__PRIVATE jitanon_result jitanon__elf_check_func(const jitanon_elf_func *fn, jitanon_error *err)
{
    if ((!fn->code.data && fn->code.size) || (!fn->name.data && fn->name.length))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL code or name view");
    if (fn->debug && fn->debug->id != JITANON_JITDUMP_CODE_DEBUG_INFO)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "debug is not a DEBUG_INFO record");
    if (fn->unwind && fn->unwind->id != JITANON_JITDUMP_CODE_UNWINDING_INFO)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "unwind is not an UNWINDING_INFO record");
    return JITANON_OK;
}

/* Streaming builders own what they keep of a function (name, debug entries, eh_frame),
   carved out of large chunks: a block per function was a tenth of the run in malloc and
   page faults. */
struct jitanon__elf_chunk {
    struct jitanon__elf_chunk *next;
    size_t size, used;
};

JITANON__PRIVATE uint8_t *jitanon__elf_carve(jitanon_elf_builder *b, size_t n)
{
    struct jitanon__elf_chunk *c = b->copies;
    size_t head = (sizeof *c + 15) & ~(size_t)15;
    if (!c || c->size - c->used < n) {
        size_t size = n > ((size_t)1 << 20) - head ? n + head : (size_t)1 << 20;
        if (n > SIZE_MAX - head) return NULL;
        if (!(c = (struct jitanon__elf_chunk *)jitanon__malloc(&b->opts.allocator, size))) return NULL;
        c->next = b->copies;
        c->size = size - head;
        c->used = 0;
        b->copies = c;
    }
    c->used += n;
    return (uint8_t *)c + head + c->used - n;
}

/* 0 when out of memory (nothing is then kept). */
JITANON__PRIVATE int jitanon__elf_keep_copies(jitanon_elf_builder *b, jitanon__elf_entry *e)
{
    size_t n = e->name.length + e->debug_entries.size + e->eh_frame.size;
    uint8_t *p = n ? jitanon__elf_carve(b, n) : NULL;
    if (n && !p) return 0;
    if (e->name.length) memcpy(p, e->name.data, e->name.length);
    if (e->debug_entries.size) memcpy(p + e->name.length, e->debug_entries.data, e->debug_entries.size);
    if (e->eh_frame.size) memcpy(p + e->name.length + e->debug_entries.size, e->eh_frame.data, e->eh_frame.size);
    e->name.data = e->name.length ? (const char *)p : NULL;
    e->debug_entries.data = e->debug_entries.size ? p + e->name.length : NULL;
    e->eh_frame.data = e->eh_frame.size ? p + e->name.length + e->debug_entries.size : NULL;
    e->code.data = NULL;
    e->streamed = 1;
    return 1;
}

JITANON_API void jitanon_elf_builder_stream_code(jitanon_elf_builder *b, jitanon_elf_code_fn code_fn, void *user)
{
    JITANON_ASSERT(b && code_fn);
    b->code_fn = code_fn;
    b->code_user = user;
}

JITANON_API void jitanon_elf_func_of(const jitanon_jitdump_func *f, jitanon_elf_func *out)
{
    uint64_t code_size, mapped;
    JITANON_ASSERT(f && f->load && out);
    memset(out, 0, sizeof *out);
    out->name = f->load->load.name;
    out->code_addr = f->load->load.code_addr;
    out->code = f->load->load.code;
    out->debug = f->debug;
    out->unwind = f->unwind;
    code_size = f->load->load.code_size;
    mapped = f->unwind ? f->unwind->unwind.mapped_size : 0;
    /* the aligned code, then the unwinding info the runtime keeps mapped; 0 on overflow */
    if (mapped && code_size <= UINT64_MAX - 7 && !jitanon__add_u64((code_size + 7) & ~(uint64_t)7, mapped, &out->map_size))
        out->map_size = 0;
}

JITANON_API jitanon_result jitanon_elf_builder_add(jitanon_elf_builder *b, const jitanon_elf_func *fn,
                                                   uint64_t *pgoff, jitanon_error *err)
{
    jitanon__elf_entry *e;
    uint64_t off = jitanon__align_up(b->text_end, 16), end;
    jitanon_result r;
    JITANON_ASSERT(b && fn);
    jitanon__clear_error(err);
    if ((r = jitanon__elf_check_func(fn, err)) != JITANON_OK) return r;
    if (fn->file_offset && !b->opts.symbols_only) {
        if (fn->file_offset < b->text_end)
            return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0,
                                 "file_offset %U lies before the end of the headers or of the previous function (%U)",
                                 fn->file_offset, b->text_end);
        off = fn->file_offset;
    }
    if (b->opts.symbols_only) { /* at its own address, after the headers and the previous one */
        if (fn->code.size || fn->debug || fn->unwind || fn->code_addr < b->text_end)
            return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0,
                                 "symbols_only: no code, debug or unwinding info; functions in address order, disjoint");
        off = fn->code_addr;
        if (!jitanon__add_u64(off, fn->map_size ? fn->map_size : 1, &end) || (!jitanon__elf_is64(b) && end > UINT32_MAX))
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "symbol past the end of the address space");
    }
    /* An empty function still takes a byte of address space so no two share an address;
       a mapping longer than the code keeps the next function out of its range. */
    else if (!jitanon__add_u64(off, fn->code.size > fn->map_size ? fn->code.size : fn->map_size ? fn->map_size : 1, &end) ||
             end > ((uint64_t)1 << 48) || (!jitanon__elf_is64(b) && end > UINT32_MAX / 2))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "too much code for one ELF file");
    if (!jitanon__grow(&b->opts.allocator, (void **)&b->funcs, &b->cap, b->count + 1, sizeof *b->funcs))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot grow the function table");
    e = &b->funcs[b->count];
    memset(e, 0, sizeof *e);
    e->name = fn->name;
    e->code_addr = fn->code_addr;
    e->offset = off;
    e->code = fn->code;
    e->sym_size = b->opts.symbols_only ? end - off : fn->code.size;
    if (fn->debug && !b->opts.no_debug) {
        e->debug_entries = fn->debug->debug.entries;
        e->debug_count = fn->debug->debug.nr_entry;
    }
    if (fn->unwind && !b->opts.no_unwind) e->eh_frame = fn->unwind->unwind.eh_frame;
    if (fn->debug && b->opts.line_bias == JITANON_ELF_LINE_BIAS_AUTO) {
        uint64_t lo = 0, hi = 0;
        if (jitanon__elf_debug_span(fn->debug, &lo, &hi, NULL))
            jitanon__elf_bias_vote(&b->bias_scan, lo, hi, fn->code_addr, fn->code.size);
    }
    if (b->code_fn && !jitanon__elf_keep_copies(b, e))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot copy a function's name, debug or unwinding info");
    b->count++;
    jitanon__sha1_update(&b->id, b->opts.symbols_only ? "S" : "F", 1);
    if (b->opts.symbols_only) jitanon__sha1_u64(&b->id, end - off);
    /* where a placed function sits is part of what the file is: a region file and a
       per-process file of the same functions in the same order must not share a build-id
       (perf would take one for the other from its cache) */
    if (fn->file_offset && !b->opts.symbols_only) {
        jitanon__sha1_update(&b->id, "O", 1);
        jitanon__sha1_u64(&b->id, off);
    }
    jitanon__sha1_u64(&b->id, fn->name.length);
    if (fn->name.length) jitanon__sha1_update(&b->id, fn->name.data, fn->name.length);
    jitanon__sha1_u64(&b->id, fn->code_addr);
    jitanon__sha1_u64(&b->id, fn->code.size);
    if (fn->code.size) jitanon__sha1_update(&b->id, fn->code.data, fn->code.size);
    if (jitanon__elf_looks_erlang(fn->name)) b->notes |= JITANON_ELF_NOTE_ERLANG;
    b->text_end = end;
    if (pgoff) *pgoff = off;
    return JITANON_OK;
}

JITANON_API void jitanon_elf_builder_release(jitanon_elf_builder *b)
{
    if (!b) return;
    while (b->copies) {
        struct jitanon__elf_chunk *c = b->copies;
        b->copies = c->next;
        jitanon__free(&b->opts.allocator, c, c->size + ((sizeof *c + 15) & ~(size_t)15));
    }
    jitanon__free(&b->opts.allocator, b->funcs, b->cap * sizeof *b->funcs);
    b->funcs = NULL;
    b->count = b->cap = 0;
}

/* -- Finishing: everything a file needs besides the code, built in memory. -- */

typedef struct jitanon__elf_sec {
    uint32_t name, type, link, info;
    uint64_t flags, off, size, align, entsize, addr;
    const jitanon_membuf *data; /* NULL for .text, written from the function views */
} jitanon__elf_sec;

typedef struct jitanon__elf_row {
    uint64_t off;
    uint32_t line, col, file;
} jitanon__elf_row;

typedef struct jitanon__elfw {
    jitanon_elf_builder *b;
    const jitanon_allocator *a;
    int is64, big;
    jitanon_membuf eh, hdr, note, sym, str, abbrev, info, line, prog, shstr, head, shdrs;
    uint64_t *tab; /* .eh_frame_hdr pairs: (pc, fde) file offsets */
    size_t tab_n, tab_cap;
    int tab_failed;
    jitanon_str *files; /* .debug_line file table, deduplicated through `hash` */
    uint32_t *hash;
    size_t file_n, file_cap, hash_cap;
    jitanon__elf_row *rows;
    size_t row_cap;
    jitanon__elf_sec sec[JITANON__ELF_MAX_SECTIONS];
    uint32_t nsec, text_idx, eh_idx, hdr_idx, note_idx;
    uint64_t text_size, eh_off, hdr_off, note_off, load_end, shoff, pos;
    jitanon_elf_info out;
} jitanon__elfw;

JITANON__PRIVATE void jitanon__elfw_free(jitanon__elfw *w)
{
    jitanon_membuf *bufs[] = {&w->eh, &w->hdr, &w->note, &w->sym, &w->str, &w->abbrev,
                             &w->info, &w->line, &w->prog, &w->shstr, &w->head, &w->shdrs};
    size_t i;
    for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++) jitanon_membuf_release(bufs[i]);
    jitanon__free(w->a, w->tab, w->tab_cap * 2 * sizeof *w->tab);
    jitanon__free(w->a, w->files, w->file_cap * sizeof *w->files);
    jitanon__free(w->a, w->hash, w->hash_cap * sizeof *w->hash);
    jitanon__free(w->a, w->rows, w->row_cap * sizeof *w->rows);
}

JITANON__PRIVATE void jitanon__elfw_init(jitanon__elfw *w, jitanon_elf_builder *b)
{
    jitanon_membuf *bufs[] = {&w->eh, &w->hdr, &w->note, &w->sym, &w->str, &w->abbrev,
                             &w->info, &w->line, &w->prog, &w->shstr, &w->head, &w->shdrs};
    size_t i;
    memset(w, 0, sizeof *w);
    w->b = b;
    w->a = &b->opts.allocator;
    w->is64 = jitanon__elf_is64(b);
    w->big = b->big_endian;
    w->text_idx = 1; /* .text is always the first section; symbols need it early */
    for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++) bufs[i]->allocator = *w->a;
}

/* -- .eh_frame: copy each function's CIEs/FDEs, rebasing pc_begin. -- */

JITANON__PRIVATE int jitanon__elf_uleb(jitanon__cur *c, uint64_t *v)
{
    unsigned shift = 0;
    *v = 0;
    for (;;) {
        const uint8_t *p = jitanon__take(c, 1);
        if (!p || shift > 63) return 0;
        *v |= (uint64_t)(*p & 0x7f) << shift;
        if (!(*p & 0x80)) return 1;
        shift += 7;
    }
}

JITANON__PRIVATE int jitanon__elf_skip_byte(jitanon__cur *c, unsigned *v)
{
    const uint8_t *p = jitanon__take(c, 1);
    if (!p) return 0;
    if (v) *v = *p;
    return 1;
}

/* Reads the FDE pointer encoding from a CIE body (after its length field).  Only what can
   be moved safely is accepted: no personality routine, no LSDA, pc-relative pointers. */
JITANON__PRIVATE int jitanon__elf_cie_encoding(jitanon__cur c, unsigned *enc)
{
    unsigned version = 0, ch = 0;
    uint64_t skip, auglen;
    jitanon_str aug;
    size_t i;
    jitanon__cur data;
    if (!jitanon__take(&c, 4) || !jitanon__elf_skip_byte(&c, &version) || !jitanon__take_cstr(&c, &aug)) return 0;
    if (version != 1 && version != 3 && version != 4) return 0;
    if (version == 4 && !jitanon__take(&c, 2)) return 0; /* address_size, segment_selector_size */
    if (!jitanon__elf_uleb(&c, &skip) || !jitanon__elf_uleb(&c, &skip)) return 0; /* alignment factors */
    if (version == 1 ? !jitanon__elf_skip_byte(&c, NULL) : !jitanon__elf_uleb(&c, &skip)) return 0;
    if (aug.length == 0 || aug.data[0] != 'z' || !jitanon__elf_uleb(&c, &auglen) || auglen > c.left) return 0;
    data = jitanon__cur_make(c.p, (size_t)auglen, 0, c.big);
    *enc = 0xff;
    for (i = 1; i < aug.length; i++) {
        if (aug.data[i] == 'S') continue;
        if (!jitanon__elf_skip_byte(&data, &ch)) return 0;
        if (aug.data[i] == 'R') *enc = ch;
        else if (ch != 0xff) return 0; /* 'L' or 'P' with data that would need moving too */
        if (aug.data[i] != 'R' && aug.data[i] != 'L' && aug.data[i] != 'P') return 0;
    }
    /* pc-relative, direct, 4- or 8-byte (DW_EH_PE_pcrel | udata4/sdata4/udata8/sdata8) */
    return (*enc & 0xf0) == 0x10 && ((*enc & 7) == 3 || (*enc & 7) == 4);
}

typedef struct jitanon__elf_cie {
    uint64_t pos;
    unsigned enc;
} jitanon__elf_cie;

JITANON__PRIVATE int jitanon__elf_tab_add(jitanon__elfw *w, uint64_t pc, uint64_t fde)
{
    if (!jitanon__grow(w->a, (void **)&w->tab, &w->tab_cap, w->tab_n + 1, 2 * sizeof *w->tab)) {
        w->tab_failed = 1; /* out of memory, not bad input: finish must fail */
        return 0;
    }
    w->tab[2 * w->tab_n] = pc;
    w->tab[2 * w->tab_n + 1] = fde;
    w->tab_n++;
    return 1;
}

/* Rebases one FDE copied to w->eh at `at` (its length field).  `delta` is where its JIT
   assumed the block would be minus where it lands. */
JITANON__PRIVATE int jitanon__elf_fde(jitanon__elfw *w, size_t at, uint64_t body_len, unsigned enc, int64_t delta)
{
    size_t width = (enc & 7) == 3 ? 4 : 8;
    uint8_t *p = w->eh.data + at + 8;
    uint64_t landed = w->eh_off;
    int64_t v, nv;
    int sgn = (enc & 8) != 0;
    if (body_len < 4 + 2 * width) return 0;
    if (width == 4) v = sgn ? (int64_t)(int32_t)jitanon__rd32(p, w->big) : (int64_t)jitanon__rd32(p, w->big);
    else v = (int64_t)jitanon__rd64(p, w->big);
    if (v > ((int64_t)1 << 48) || v < -((int64_t)1 << 48)) return 0;
    nv = v + delta;
    if (width == 4 && (sgn ? (nv < INT32_MIN || nv > INT32_MAX) : (nv < 0 || nv > (int64_t)UINT32_MAX))) return 0;
    if ((int64_t)(landed + at + 8) + nv < 0) return 0;
    if (width == 4) jitanon__wr32(p, (uint64_t)nv, w->big);
    else jitanon__wr64(p, (uint64_t)nv, w->big);
    return jitanon__elf_tab_add(w, (uint64_t)((int64_t)(landed + at + 8) + nv), landed + at);
}

/* One function's unwinding info.  The JIT assumed (perf's and V8's layout) that its
   .eh_frame starts ALIGN8(code_size) after the code.  Returns 0 when it is unusable. */
JITANON__PRIVATE int jitanon__elf_eh_func(jitanon__elfw *w, const jitanon__elf_entry *e)
{
    jitanon__cur c = jitanon__cur_make(e->eh_frame.data, e->eh_frame.size, 0, w->big);
    jitanon__elf_cie cies[JITANON__ELF_MAX_CIES];
    size_t ncie = 0, start = w->eh.size, tab_start = w->tab_n, k;
    int64_t delta = (int64_t)(e->offset + jitanon__align_up(e->code.size, 8)) - (int64_t)(w->eh_off + start);
    while (c.left >= 4) {
        uint64_t pos = c.off;
        uint32_t len = jitanon__get32(&c), id;
        const uint8_t *body;
        if (len == 0) break; /* terminator; one is written at the very end */
        if (len < 4 || len > c.left || !(body = jitanon__take(&c, len))) goto drop;
        id = jitanon__rd32(body, w->big);
        jitanon__buf_bytes(&w->eh, body - 4, (size_t)len + 4);
        if (w->eh.failed_) return 0;
        if (id == 0) {
            if (ncie == JITANON__ELF_MAX_CIES || !jitanon__elf_cie_encoding(jitanon__cur_make(body, len, 0, w->big), &cies[ncie].enc))
                goto drop;
            cies[ncie++].pos = pos;
            continue;
        }
        for (k = 0; k < ncie && cies[k].pos != pos + 4 - id; k++) {}
        if (k == ncie || !jitanon__elf_fde(w, start + (size_t)pos, len, cies[k].enc, delta)) goto drop;
    }
    return 1;
drop:
    w->eh.size = start;
    w->tab_n = tab_start;
    w->b->notes |= JITANON_ELF_NOTE_UNWIND_DROPPED;
    return 0;
}

/* Table order: by pc (FDEs arrive in address order almost always). */
JITANON__PRIVATE int jitanon__elf_tab_less(const void *ctx, uint32_t a, uint32_t b)
{
    const uint64_t *t = (const uint64_t *)ctx;
    return t[2 * (size_t)a] < t[2 * (size_t)b];
}

/* .eh_frame_hdr (LSB): version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table
   datarel|sdata4 - the same encodings V8 uses, so a single V8 function comes out as it
   went in. */
JITANON__PRIVATE int jitanon__elf_eh_hdr(jitanon__elfw *w)
{
    size_t i;
    jitanon__buf_u8(&w->hdr, 1);
    jitanon__buf_u8(&w->hdr, 0x1b);
    jitanon__buf_u8(&w->hdr, 0x03);
    jitanon__buf_u8(&w->hdr, 0x3b);
    jitanon__buf_u32(&w->hdr, (uint64_t)((int64_t)w->eh_off - (int64_t)(w->hdr_off + 4)), w->big);
    jitanon__buf_u32(&w->hdr, w->tab_n, w->big);
    for (i = 0; i < 2 * w->tab_n; i++) {
        int64_t rel = (int64_t)w->tab[i] - (int64_t)w->hdr_off;
        if (rel < INT32_MIN || rel > INT32_MAX) return 0;
        jitanon__buf_u32(&w->hdr, (uint64_t)rel, w->big);
    }
    return !w->hdr.failed_;
}

JITANON__PRIVATE jitanon_result jitanon__elf_unwind(jitanon__elfw *w, jitanon_error *err)
{
    size_t i;
    w->eh_off = jitanon__align_up(w->b->text_base + w->text_size, 8);
    for (i = 0; i < w->b->count; i++)
        if (w->b->funcs[i].eh_frame.size) jitanon__elf_eh_func(w, &w->b->funcs[i]);
    if (w->eh.failed_ || w->tab_failed) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build .eh_frame");
    if (w->tab_n == 0) { /* nothing usable: no unwind sections at all */
        w->eh.size = 0;
        w->hdr_off = w->eh_off;
        return JITANON_OK;
    }
    jitanon__buf_u32(&w->eh, 0, w->big); /* terminator */
    w->hdr_off = jitanon__align_up(w->eh_off + w->eh.size, 4);
    if (!jitanon__sort(w->a, w->tab, w->tab_n, 2 * sizeof *w->tab, jitanon__elf_tab_less))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot sort .eh_frame_hdr");
    if (!jitanon__elf_eh_hdr(w))
        return JITANON__FAIL(err, w->hdr.failed_ ? JITANON_ERR_NOMEM : JITANON_ERR_LIMIT, 0, "cannot build .eh_frame_hdr");
    w->out.fdes = w->tab_n;
    return w->eh.failed_ ? JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build .eh_frame") : JITANON_OK;
}

/* -- Build-id: SHA-1 over tagged, length-prefixed (name, address, code) of every function
   (hashed as each is added, in jitanon_elf_builder_add), then the machine and the count:
   deterministic, and different whenever any function differs. -- */

JITANON__PRIVATE void jitanon__elf_build_id(jitanon__elfw *w)
{
    jitanon__sha1 s = w->b->id; /* a copy: finishing twice gives the same id */
    jitanon__sha1_u64(&s, w->b->machine);
    jitanon__sha1_u64(&s, w->b->count);
    jitanon__sha1_final(&s, w->out.build_id);
    jitanon__buf_u32(&w->note, 4, w->big);
    jitanon__buf_u32(&w->note, 20, w->big);
    jitanon__buf_u32(&w->note, JITANON__NT_GNU_BUILD_ID, w->big);
    jitanon__buf_bytes(&w->note, "GNU", 4);
    jitanon__buf_bytes(&w->note, w->out.build_id, 20);
}

/* -- .symtab / .strtab: entry 0, then one LOCAL FUNC per function (sh_info = count + 1). -- */

JITANON__PRIVATE void jitanon__elf_symbol(jitanon__elfw *w, uint64_t name, uint64_t value, uint64_t size, unsigned info,
                                          uint64_t shndx)
{
    jitanon_membuf *b = &w->sym;
    jitanon__buf_u32(b, name, w->big);
    if (w->is64) {
        jitanon__buf_u8(b, info);
        jitanon__buf_u8(b, 0);
        jitanon__buf_u16(b, shndx, w->big);
        jitanon__buf_u64(b, value, w->big);
        jitanon__buf_u64(b, size, w->big);
    } else {
        jitanon__buf_u32(b, value, w->big);
        jitanon__buf_u32(b, size, w->big);
        jitanon__buf_u8(b, info);
        jitanon__buf_u8(b, 0);
        jitanon__buf_u16(b, shndx, w->big);
    }
}

JITANON__PRIVATE void jitanon__elf_symbols(jitanon__elfw *w)
{
    size_t i;
    jitanon__buf_u8(&w->str, 0);
    jitanon__elf_symbol(w, 0, 0, 0, 0, 0);
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        uint64_t name = w->str.size;
        jitanon__buf_str(&w->str, e->name.data, e->name.length);
        jitanon__elf_symbol(w, name, e->offset, e->sym_size, 0x02 /* STB_LOCAL, STT_FUNC */, w->text_idx);
    }
}

/* -- DWARF 4: .debug_line with a real file table, .debug_info with a compile unit and one
   subprogram per function, .debug_abbrev.  Row address = text offset + (entry.addr -
   bias - code_addr).  A row before the function start (BEAM writes the line in effect at
   entry that way) moves to the start; rows at or past the end are dropped. -- */

#define JITANON__DW_LINE_BASE (-5)
#define JITANON__DW_LINE_RANGE 14
#define JITANON__DW_OPCODE_BASE 13

JITANON__PRIVATE size_t jitanon__elf_hash_str(jitanon_str s)
{
    return (size_t)jitanon__fnv1a(s.data, s.length, 0xcbf29ce484222325ull);
}

JITANON__PRIVATE int jitanon__elf_rehash(jitanon__elfw *w)
{
    size_t cap = w->hash_cap ? w->hash_cap * 2 : 64, i, bytes;
    uint32_t *h;
    if (!jitanon__mul_size(cap, sizeof *h, &bytes) || !(h = (uint32_t *)jitanon__malloc(w->a, bytes))) return 0;
    memset(h, 0, bytes);
    for (i = 0; i < w->file_n; i++) {
        size_t j = jitanon__elf_hash_str(w->files[i]) & (cap - 1);
        while (h[j]) j = (j + 1) & (cap - 1);
        h[j] = (uint32_t)i + 1;
    }
    jitanon__free(w->a, w->hash, w->hash_cap * sizeof *w->hash);
    w->hash = h;
    w->hash_cap = cap;
    return 1;
}

/* 1-based DWARF 4 file index of `name`, added on first sight; 0 on allocation failure. */
JITANON__PRIVATE uint32_t jitanon__elf_file(jitanon__elfw *w, jitanon_str name)
{
    size_t j;
    if ((w->file_n + 1) * 2 > w->hash_cap && !jitanon__elf_rehash(w)) return 0;
    j = jitanon__elf_hash_str(name) & (w->hash_cap - 1);
    for (; w->hash[j]; j = (j + 1) & (w->hash_cap - 1))
        if (jitanon__same_str(w->files[w->hash[j] - 1], name)) return w->hash[j];
    if (w->file_n >= UINT32_MAX - 1 ||
        !jitanon__grow(w->a, (void **)&w->files, &w->file_cap, w->file_n + 1, sizeof *w->files))
        return 0;
    w->files[w->file_n++] = name;
    w->hash[j] = (uint32_t)w->file_n;
    return (uint32_t)w->file_n;
}

JITANON__PRIVATE int jitanon__elf_push_row(jitanon__elfw *w, size_t n, const jitanon__elf_row *r)
{
    if (!jitanon__grow(w->a, (void **)&w->rows, &w->row_cap, n + 1, sizeof *w->rows)) return 0;
    w->rows[n] = *r;
    return 1;
}

/* Row order: by offset (JITs emit rows in order almost always). */
JITANON__PRIVATE int jitanon__elf_row_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__elf_row *r = (const jitanon__elf_row *)ctx;
    return r[a].off < r[b].off;
}

/* Collects a function's rows into w->rows, sorted by offset.  Slot 0 is reserved for the
   row in effect at entry (the latest one before the start).  Returns the count, or
   SIZE_MAX on allocation failure. */
JITANON__PRIVATE size_t jitanon__elf_rows(jitanon__elfw *w, const jitanon__elf_entry *e)
{
    jitanon_jitdump_record rec;
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry d;
    jitanon__elf_row r, pre;
    size_t n = 1;
    uint64_t start = e->code_addr + w->b->bias, pre_addr = 0;
    int have_pre = 0;
    memset(&rec, 0, sizeof rec);
    memset(&pre, 0, sizeof pre);
    rec.id = JITANON_JITDUMP_CODE_DEBUG_INFO;
    rec.debug.entries = e->debug_entries;
    rec.debug.nr_entry = e->debug_count;
    rec.big_endian = w->big;
    jitanon_jitdump_debug_iter_begin(&it, &rec);
    while (jitanon_jitdump_debug_iter_next(&it, &d)) {
        int before = d.addr < start;
        if ((!before && d.addr - start >= e->code.size) || (before && have_pre && d.addr < pre_addr)) {
            w->b->notes |= JITANON_ELF_NOTE_DEBUG_CLIPPED;
            continue;
        }
        r.off = before ? 0 : d.addr - start;
        r.line = d.lineno > 0 ? (uint32_t)d.lineno : 0;
        r.col = d.discrim > 0 ? (uint32_t)d.discrim : 0; /* V8: column + 1, i.e. 1-based */
        if ((r.file = jitanon__elf_file(w, d.file)) == 0) return SIZE_MAX;
        if (before) {
            w->b->notes |= JITANON_ELF_NOTE_DEBUG_CLIPPED;
            pre = r;
            pre_addr = d.addr;
            have_pre = 1;
        } else if (!jitanon__elf_push_row(w, n++, &r)) {
            return SIZE_MAX;
        }
    }
    if (!jitanon__elf_push_row(w, 0, &pre)) return SIZE_MAX;
    if (!have_pre) { /* drop the reserved slot */
        if (n > 1) memmove(w->rows, w->rows + 1, (n - 1) * sizeof *w->rows);
        n--;
    }
    return jitanon__sort(w->a, w->rows, n, sizeof *w->rows, jitanon__elf_row_less) ? n : SIZE_MAX;
}

JITANON__PRIVATE void jitanon__elf_set_address(jitanon__elfw *w, uint64_t addr)
{
    jitanon__buf_u8(&w->prog, 0);
    jitanon__buf_uleb(&w->prog, w->is64 ? 9 : 5);
    jitanon__buf_u8(&w->prog, 2); /* DW_LNE_set_address */
    jitanon__buf_word(&w->prog, addr, w->is64, w->big);
}

/* One row: a special opcode when the deltas fit, else advance_line/advance_pc/copy. */
JITANON__PRIVATE void jitanon__elf_row_op(jitanon_membuf *p, int64_t dline, uint64_t dpc)
{
    if (dline >= JITANON__DW_LINE_BASE && dline < JITANON__DW_LINE_BASE + JITANON__DW_LINE_RANGE && dpc < 256) {
        uint64_t op = (uint64_t)(dline - JITANON__DW_LINE_BASE) + JITANON__DW_LINE_RANGE * dpc + JITANON__DW_OPCODE_BASE;
        if (op <= 255) {
            jitanon__buf_u8(p, (unsigned)op);
            return;
        }
    }
    if (dline) {
        jitanon__buf_u8(p, 3); /* DW_LNS_advance_line */
        jitanon__buf_sleb(p, dline);
    }
    if (dpc) {
        jitanon__buf_u8(p, 2); /* DW_LNS_advance_pc */
        jitanon__buf_uleb(p, dpc);
    }
    jitanon__buf_u8(p, 1); /* DW_LNS_copy */
}

/* One sequence per function; registers start from the DWARF defaults each time. */
JITANON__PRIVATE void jitanon__elf_sequence(jitanon__elfw *w, const jitanon__elf_entry *e, size_t n)
{
    uint64_t pc = e->offset + w->rows[0].off;
    uint32_t line = 1, file = 1, col = 0;
    size_t i;
    jitanon__elf_set_address(w, pc);
    for (i = 0; i < n; i++) {
        const jitanon__elf_row *r = &w->rows[i];
        if (r->file != file) {
            jitanon__buf_u8(&w->prog, 4); /* DW_LNS_set_file */
            jitanon__buf_uleb(&w->prog, r->file);
            file = r->file;
        }
        if (r->col != col) {
            jitanon__buf_u8(&w->prog, 5); /* DW_LNS_set_column */
            jitanon__buf_uleb(&w->prog, r->col);
            col = r->col;
        }
        jitanon__elf_row_op(&w->prog, (int64_t)r->line - (int64_t)line, e->offset + r->off - pc);
        pc = e->offset + r->off;
        line = r->line;
    }
    if (e->offset + e->code.size > pc) {
        jitanon__buf_u8(&w->prog, 2);
        jitanon__buf_uleb(&w->prog, e->offset + e->code.size - pc);
    }
    jitanon__buf_u8(&w->prog, 0);
    jitanon__buf_uleb(&w->prog, 1);
    jitanon__buf_u8(&w->prog, 1); /* DW_LNE_end_sequence */
    w->out.line_rows += n;
}

JITANON__PRIVATE void jitanon__elf_line_header(jitanon__elfw *w)
{
    static const uint8_t std_lengths[JITANON__DW_OPCODE_BASE - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
    jitanon_membuf *b = &w->line;
    size_t i, hlen_at, body_at;
    jitanon__buf_u32(b, 0, w->big); /* unit_length, patched */
    jitanon__buf_u16(b, 4, w->big);
    hlen_at = b->size;
    jitanon__buf_u32(b, 0, w->big); /* header_length, patched */
    jitanon__buf_u8(b, 1);          /* minimum_instruction_length */
    jitanon__buf_u8(b, 1);          /* maximum_operations_per_instruction */
    jitanon__buf_u8(b, 1);          /* default_is_stmt */
    jitanon__buf_u8(b, (unsigned)(JITANON__DW_LINE_BASE + 256));
    jitanon__buf_u8(b, JITANON__DW_LINE_RANGE);
    jitanon__buf_u8(b, JITANON__DW_OPCODE_BASE);
    jitanon__buf_bytes(b, std_lengths, sizeof std_lengths);
    jitanon__buf_u8(b, 0); /* no include directories: names are kept whole */
    for (i = 0; i < w->file_n; i++) {
        jitanon__buf_str(b, w->files[i].data, w->files[i].length);
        jitanon__buf_u8(b, 0); /* directory 0, mtime 0, length 0 */
        jitanon__buf_u8(b, 0);
        jitanon__buf_u8(b, 0);
    }
    jitanon__buf_u8(b, 0);
    body_at = b->size;
    jitanon__buf_bytes(b, w->prog.data, w->prog.size);
    if (b->failed_) return;
    jitanon__wr32(b->data + hlen_at, body_at - hlen_at - 4, w->big);
    jitanon__wr32(b->data, b->size - 4, w->big);
}

JITANON__PRIVATE void jitanon__elf_abbrev(jitanon__elfw *w)
{
    unsigned high_form = w->is64 ? 0x07u : 0x06u; /* DW_FORM_data8 / data4: a length (DWARF 4) */
    const uint8_t a[] = {1, 0x11, 1, /* compile_unit, children */
                         0x25, 0x08, 0x03, 0x08, 0x11, 0x01, 0x12, (uint8_t)high_form, 0x10, 0x17, 0, 0,
                         2, 0x2e, 0, /* subprogram, no children */
                         0x03, 0x08, 0x11, 0x01, 0x12, (uint8_t)high_form, 0, 0, 0};
    jitanon__buf_bytes(&w->abbrev, a, sizeof a);
}

/* Function order for the compile units: by offset. */
JITANON__PRIVATE int jitanon__elf_entry_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__elf_entry *e = (const jitanon__elf_entry *)ctx;
    return e[a].offset < e[b].offset;
}

/* One compile unit over funcs ord[lo, hi) (in offset order; the unit spans them). */
JITANON__PRIVATE void jitanon__elf_cu(jitanon__elfw *w, const uint32_t *ord, size_t lo, size_t hi)
{
    jitanon_membuf *b = &w->info;
    const jitanon__elf_entry *f = w->b->funcs;
    size_t at = b->size, i;
    uint64_t low = f[ord[lo]].offset, high = low;
    for (i = lo; i < hi; i++)
        if (f[ord[i]].offset + f[ord[i]].code.size > high) high = f[ord[i]].offset + f[ord[i]].code.size;
    jitanon__buf_u32(b, 0, w->big); /* unit_length, patched */
    jitanon__buf_u16(b, 4, w->big);
    jitanon__buf_u32(b, 0, w->big); /* .debug_abbrev offset */
    jitanon__buf_u8(b, w->is64 ? 8 : 4);
    jitanon__buf_uleb(b, 1);
    jitanon__buf_str(b, "jitanon " JITANON_VERSION_STRING, strlen("jitanon " JITANON_VERSION_STRING));
    jitanon__buf_str(b, "jitted code", 11);
    jitanon__buf_word(b, low, w->is64, w->big);
    jitanon__buf_word(b, high - low, w->is64, w->big);
    jitanon__buf_u32(b, 0, w->big); /* DW_AT_stmt_list: every unit shares the one line program */
    for (i = lo; i < hi; i++) {
        const jitanon__elf_entry *e = &f[ord[i]];
        jitanon__buf_uleb(b, 2);
        jitanon__buf_str(b, e->name.data, e->name.length);
        jitanon__buf_word(b, e->offset, w->is64, w->big);
        jitanon__buf_word(b, e->code.size, w->is64, w->big);
    }
    jitanon__buf_u8(b, 0);
    if (!b->failed_) jitanon__wr32(b->data + at, b->size - at - 4, w->big);
}

/* Subprograms per compile unit.  A region file holds thousands of functions; consumers
   find a unit by its range and then a subprogram within it, both by a walk down a list
   (hotspot's parser: a CU holding node's 35,000 functions cost it 11% of its time in the
   subprogram search alone), so a unit holds a few hundred at most. */
#define JITANON__ELF_CU_FUNCS 128

/* The compile units, each over JITANON__ELF_CU_FUNCS functions in offset order (a
   function file: one unit, one subprogram).  0 on allocation failure. */
JITANON__PRIVATE int jitanon__elf_debug_info(jitanon__elfw *w)
{
    size_t i, n = 0, k, bytes;
    uint32_t *ord;
    for (i = 0; i < w->b->count; i++) n += w->b->funcs[i].code.size != 0;
    if (!n) return 1;
    if (n > UINT32_MAX / 2 || !jitanon__mul_size(n * 2, sizeof *ord, &bytes) ||
        !(ord = (uint32_t *)jitanon__malloc(w->a, bytes)))
        return 0;
    for (i = 0, k = 0; i < w->b->count; i++)
        if (w->b->funcs[i].code.size) ord[k++] = (uint32_t)i;
    jitanon__msort(ord, ord + n, n, jitanon__elf_entry_less, w->b->funcs);
    for (i = 0; i < n; i += JITANON__ELF_CU_FUNCS)
        jitanon__elf_cu(w, ord, i, n - i < JITANON__ELF_CU_FUNCS ? n : i + JITANON__ELF_CU_FUNCS);
    jitanon__free(w->a, ord, bytes);
    return 1;
}

/* Returns 1 when debug sections were built, 0 when there is nothing to describe. */
JITANON__PRIVATE jitanon_result jitanon__elf_debug(jitanon__elfw *w, int *have, jitanon_error *err)
{
    size_t i, n;
    *have = 0;
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        if (!e->debug_count || !e->code.size) continue;
        if ((n = jitanon__elf_rows(w, e)) == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot collect line rows");
        if (n) jitanon__elf_sequence(w, e, n);
    }
    if (w->out.line_rows == 0) return JITANON_OK;
    jitanon__elf_line_header(w);
    jitanon__elf_abbrev(w);
    if (!jitanon__elf_debug_info(w)) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot sort the compile units");
    if (w->prog.failed_ || w->line.failed_ || w->abbrev.failed_ || w->info.failed_)
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build debug sections");
    if (w->line.size > UINT32_MAX - 16 || w->info.size > UINT32_MAX - 16)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "debug sections exceed 32-bit DWARF");
    *have = 1;
    return JITANON_OK;
}

#ifdef JITANON_USE_ZLIB
/* Replaces `b` by an Elf_Chdr (ELFCOMPRESS_ZLIB) and the zlib stream of its contents. */
JITANON__PRIVATE jitanon_result jitanon__elf_deflate(jitanon__elfw *w, jitanon_membuf *b, jitanon_error *err)
{
    jitanon_membuf out;
    uLongf zlen = compressBound((uLong)b->size);
    memset(&out, 0, sizeof out);
    out.allocator = *w->a;
    jitanon__buf_u32(&out, 1, w->big); /* ELFCOMPRESS_ZLIB */
    if (w->is64) jitanon__buf_u32(&out, 0, w->big);
    jitanon__buf_word(&out, b->size, w->is64, w->big);
    jitanon__buf_word(&out, 1, w->is64, w->big);
    if (!out.failed_ && !jitanon__grow(w->a, (void **)&out.data, &out.capacity, out.size + zlen, 1)) out.failed_ = 1;
    if (out.failed_) {
        jitanon_membuf_release(&out);
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot allocate the compressed section");
    }
    if ((uLong)b->size != b->size || compress2(out.data + out.size, &zlen, b->data, (uLong)b->size, Z_DEFAULT_COMPRESSION) != Z_OK) {
        jitanon_membuf_release(&out);
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "zlib compress2 failed");
    }
    out.size += zlen;
    jitanon_membuf_release(b);
    *b = out;
    return JITANON_OK;
}
#endif

/* -- Section table and layout -- */

JITANON__PRIVATE uint32_t jitanon__elf_add_sec(jitanon__elfw *w, const char *name, uint32_t type, uint64_t flags,
                                              uint64_t align, const jitanon_membuf *data)
{
    jitanon__elf_sec *s = &w->sec[++w->nsec];
    JITANON_ASSERT(w->nsec < JITANON__ELF_MAX_SECTIONS);
    memset(s, 0, sizeof *s);
    s->name = (uint32_t)w->shstr.size;
    jitanon__buf_str(&w->shstr, name, strlen(name));
    s->type = type;
    s->flags = flags;
    s->align = align;
    s->data = data;
    s->size = data ? data->size : 0;
    return w->nsec;
}

/* Allocated sections first (fixed addresses), then the rest packed after them. */
JITANON__PRIVATE void jitanon__elf_sections(jitanon__elfw *w, int have_debug)
{
    uint64_t dflags = w->b->opts.compress_debug ? JITANON__SHF_COMPRESSED : 0, dalign = dflags ? (w->is64 ? 8u : 4u) : 1u;
    uint32_t i, sym;
    jitanon__buf_u8(&w->shstr, 0);
    /* Symbols only: perf takes the symbols of any section whose name holds "text"; the
       gABI's .text would have to hold bytes. */
    jitanon__elf_add_sec(w, w->b->opts.symbols_only ? ".text.nobits" : ".text", JITANON__SHT_PROGBITS,
                         JITANON__SHF_ALLOC | JITANON__SHF_EXECINSTR, 16, NULL);
    w->sec[w->text_idx].size = w->text_size;
    w->sec[w->text_idx].off = w->b->text_base;
    if (w->b->opts.symbols_only && w->b->count) { /* no bytes: the functions' own addresses */
        w->sec[w->text_idx].type = JITANON__SHT_NOBITS;
        w->sec[w->text_idx].flags = JITANON__SHF_ALLOC;
        w->sec[w->text_idx].off = w->b->funcs[0].offset;
        w->sec[w->text_idx].size = w->b->text_end - w->b->funcs[0].offset;
    }
    if (w->eh.size) {
        w->eh_idx = jitanon__elf_add_sec(w, ".eh_frame", JITANON__SHT_PROGBITS, JITANON__SHF_ALLOC, 8, &w->eh);
        w->sec[w->eh_idx].off = w->eh_off;
        w->hdr_idx = jitanon__elf_add_sec(w, ".eh_frame_hdr", JITANON__SHT_PROGBITS, JITANON__SHF_ALLOC, 4, &w->hdr);
        w->sec[w->hdr_idx].off = w->hdr_off;
    }
    w->note_idx = jitanon__elf_add_sec(w, ".note.gnu.build-id", JITANON__SHT_NOTE, JITANON__SHF_ALLOC, 4, &w->note);
    w->sec[w->note_idx].off = w->note_off;
    for (i = 1; i <= w->nsec; i++) w->sec[i].addr = w->sec[i].off; /* file offset == address */
    sym = jitanon__elf_add_sec(w, ".symtab", JITANON__SHT_SYMTAB, 0, w->is64 ? 8 : 4, &w->sym);
    w->sec[sym].entsize = w->is64 ? 24 : 16;
    w->sec[sym].info = (uint32_t)w->b->count + 1; /* first non-local symbol: there is none */
    w->sec[sym].link = jitanon__elf_add_sec(w, ".strtab", JITANON__SHT_STRTAB, 0, 1, &w->str);
    if (have_debug) {
        jitanon__elf_add_sec(w, ".debug_abbrev", JITANON__SHT_PROGBITS, dflags, dalign, &w->abbrev);
        jitanon__elf_add_sec(w, ".debug_info", JITANON__SHT_PROGBITS, dflags, dalign, &w->info);
        jitanon__elf_add_sec(w, ".debug_line", JITANON__SHT_PROGBITS, dflags, dalign, &w->line);
    }
    jitanon__elf_add_sec(w, ".shstrtab", JITANON__SHT_STRTAB, 0, 1, &w->shstr);
    w->pos = w->load_end;
    for (i = w->note_idx + 1; i <= w->nsec; i++) {
        w->sec[i].size = w->sec[i].data->size; /* .shstrtab grew while it was being added */
        w->sec[i].off = jitanon__align_up(w->pos, w->sec[i].align);
        w->pos = w->sec[i].off + w->sec[i].size;
    }
    w->shoff = jitanon__align_up(w->pos, 8);
}

JITANON__PRIVATE void jitanon__elf_shdr(jitanon__elfw *w, const jitanon__elf_sec *s)
{
    jitanon_membuf *b = &w->shdrs;
    jitanon__buf_u32(b, s->name, w->big);
    jitanon__buf_u32(b, s->type, w->big);
    jitanon__buf_word(b, s->flags, w->is64, w->big);
    jitanon__buf_word(b, s->addr, w->is64, w->big);
    jitanon__buf_word(b, s->off, w->is64, w->big);
    jitanon__buf_word(b, s->size, w->is64, w->big);
    jitanon__buf_u32(b, s->link, w->big);
    jitanon__buf_u32(b, s->info, w->big);
    jitanon__buf_word(b, s->align, w->is64, w->big);
    jitanon__buf_word(b, s->entsize, w->is64, w->big);
}

JITANON__PRIVATE void jitanon__elf_phdr(jitanon__elfw *w, uint32_t type, uint32_t flags, uint64_t off, uint64_t size,
                                        uint64_t memsz, uint64_t align)
{
    jitanon_membuf *b = &w->head;
    jitanon__buf_u32(b, type, w->big);
    if (w->is64) jitanon__buf_u32(b, flags, w->big);
    jitanon__buf_word(b, off, w->is64, w->big);
    jitanon__buf_word(b, off, w->is64, w->big); /* p_vaddr == p_offset */
    jitanon__buf_word(b, off, w->is64, w->big);
    jitanon__buf_word(b, size, w->is64, w->big);
    jitanon__buf_word(b, memsz, w->is64, w->big);
    if (!w->is64) jitanon__buf_u32(b, flags, w->big);
    jitanon__buf_word(b, align, w->is64, w->big);
}

JITANON__PRIVATE void jitanon__elf_header(jitanon__elfw *w)
{
    jitanon_membuf *b = &w->head;
    uint8_t ident[16];
    int nobits = w->b->opts.symbols_only && w->b->count;
    unsigned phnum = w->eh.size || nobits ? 3u : 2u;
    memset(ident, 0, sizeof ident);
    memcpy(ident, "\177ELF", 4);
    ident[4] = w->is64 ? 2 : 1;  /* EI_CLASS */
    ident[5] = w->big ? 2 : 1;   /* EI_DATA */
    ident[6] = 1;                /* EI_VERSION; OSABI 0 = System V */
    jitanon__buf_bytes(b, ident, 16);
    jitanon__buf_u16(b, 3, w->big); /* ET_DYN */
    jitanon__buf_u16(b, w->out.machine, w->big);
    jitanon__buf_u32(b, 1, w->big);
    jitanon__buf_word(b, w->b->text_base, w->is64, w->big);
    jitanon__buf_word(b, jitanon__elf_ehsize(w->is64), w->is64, w->big);
    jitanon__buf_word(b, w->shoff, w->is64, w->big);
    jitanon__buf_u32(b, 0, w->big); /* e_flags */
    jitanon__buf_u16(b, jitanon__elf_ehsize(w->is64), w->big);
    jitanon__buf_u16(b, jitanon__elf_phentsize(w->is64), w->big);
    jitanon__buf_u16(b, phnum, w->big);
    jitanon__buf_u16(b, jitanon__elf_shentsize(w->is64), w->big);
    jitanon__buf_u16(b, w->nsec + 1, w->big);
    jitanon__buf_u16(b, w->nsec, w->big); /* .shstrtab is last */
    /* One PT_LOAD (R+X) over text, unwind tables and the note; then the note and unwind table.
       The load is page-aligned so that p_vaddr rounded down to p_align is 0: elfutils places
       a shared object by that rounded address, and hotspot's perfparser reports our file at
       mmap start - pgoff, which is where offset (= address) 0 sits.  With a smaller p_align
       every symbol landed p_vaddr bytes early there (perf's own files too). */
    jitanon__elf_phdr(w, JITANON__PT_LOAD, nobits ? 4 : 5, w->b->text_base, w->load_end - w->b->text_base,
                      w->load_end - w->b->text_base, jitanon__elf_load_align(w->b->machine));
    if (nobits) /* symbols only: an R+X load over the .text that has no bytes in the file */
        jitanon__elf_phdr(w, JITANON__PT_LOAD, 4, w->sec[w->text_idx].off, 0, w->sec[w->text_idx].size,
                          jitanon__elf_load_align(w->b->machine));
    jitanon__elf_phdr(w, JITANON__PT_NOTE, 4, w->note_off, w->note.size, w->note.size, 4);
    if (w->eh.size) jitanon__elf_phdr(w, JITANON__PT_GNU_EH_FRAME, 4, w->hdr_off, w->hdr.size, w->hdr.size, 4);
}

/* -- Output -- */

JITANON__PRIVATE jitanon_result jitanon__elf_put(jitanon__elfw *w, jitanon_sink sink, const void *data, size_t n,
                                                 jitanon_error *err)
{
    if (!n) return JITANON_OK;
    return jitanon__sink_put(sink, data, n, &w->pos, err);
}

JITANON__PRIVATE jitanon_result jitanon__elf_pad_to(jitanon__elfw *w, jitanon_sink sink, uint64_t to, jitanon_error *err)
{
    static const uint8_t zeros[64] = {0};
    JITANON_ASSERT(to >= w->pos);
    while (w->pos < to) {
        size_t n = to - w->pos < sizeof zeros ? (size_t)(to - w->pos) : sizeof zeros;
        jitanon_result r = jitanon__elf_put(w, sink, zeros, n, err);
        if (r != JITANON_OK) return r;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__elf_emit(jitanon__elfw *w, jitanon_sink sink, jitanon_error *err)
{
    jitanon_result r;
    size_t i;
    w->pos = 0;
    if ((r = jitanon__elf_put(w, sink, w->head.data, w->head.size, err)) != JITANON_OK) return r;
    for (i = 0; i < w->b->count && !w->b->opts.symbols_only; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        jitanon_bytes code = e->code;
        if (e->streamed) {
            code.data = NULL;
            code.size = 0;
            if (w->b->code_fn(w->b->code_user, i, &code) != 0 || code.size != e->code.size || (code.size && !code.data))
                return JITANON__FAIL(err, JITANON_ERR_IO, w->pos, "the code of function %U could not be read again",
                                     (uint64_t)i);
        }
        if ((r = jitanon__elf_pad_to(w, sink, e->offset, err)) != JITANON_OK ||
            (r = jitanon__elf_put(w, sink, code.data, code.size, err)) != JITANON_OK)
            return r;
    }
    for (i = w->text_idx + 1; i <= w->nsec; i++) {
        const jitanon__elf_sec *s = &w->sec[i];
        if ((r = jitanon__elf_pad_to(w, sink, s->off, err)) != JITANON_OK ||
            (r = jitanon__elf_put(w, sink, s->data->data, s->data->size, err)) != JITANON_OK)
            return r;
    }
    if ((r = jitanon__elf_pad_to(w, sink, w->shoff, err)) != JITANON_OK) return r;
    return jitanon__elf_put(w, sink, w->shdrs.data, w->shdrs.size, err);
}

JITANON__PRIVATE void jitanon__elf_pick_machine(jitanon__elfw *w)
{
    jitanon_elf_builder *b = w->b;
    uint32_t host = jitanon_jitdump_host_machine();
    w->out.machine = b->machine;
    if (!(b->notes & JITANON_ELF_NOTE_ERLANG) || b->opts.machine || b->machine != JITANON__EM_X86_64) {
        b->notes &= ~(uint32_t)JITANON_ELF_NOTE_ERLANG;
        return;
    }
    /* BEAM wrote EM_X86_64 unconditionally; the code is the host's (same word size). */
    if (host && host != JITANON__EM_X86_64 && jitanon__elf_class_of(host) == b->elf_class) {
        w->out.machine = host;
        b->notes |= JITANON_ELF_NOTE_MACHINE_FROM_HOST;
    }
}

JITANON__PRIVATE jitanon_result jitanon__elf_build(jitanon__elfw *w, jitanon_error *err)
{
    jitanon_result r;
    int have_debug = 0;
    size_t i;
    jitanon_elf_builder *b = w->b;
    jitanon__elf_pick_machine(w);
    if (b->count && !b->opts.symbols_only) {
        const jitanon__elf_entry *last = &b->funcs[b->count - 1];
        w->text_size = last->offset + last->code.size - b->text_base;
    }
    if ((r = jitanon__elf_unwind(w, err)) != JITANON_OK) return r;
    w->note_off = jitanon__align_up(w->eh.size ? w->hdr_off + w->hdr.size : w->b->text_base + w->text_size, 4);
    jitanon__elf_build_id(w);
    w->load_end = w->note_off + w->note.size;
    jitanon__elf_symbols(w);
    if ((r = jitanon__elf_debug(w, &have_debug, err)) != JITANON_OK) return r;
#ifdef JITANON_USE_ZLIB
    if (have_debug && b->opts.compress_debug) {
        if ((r = jitanon__elf_deflate(w, &w->abbrev, err)) != JITANON_OK || (r = jitanon__elf_deflate(w, &w->info, err)) != JITANON_OK ||
            (r = jitanon__elf_deflate(w, &w->line, err)) != JITANON_OK)
            return r;
        b->notes |= JITANON_ELF_NOTE_DEBUG_COMPRESSED;
    }
#endif
    jitanon__elf_sections(w, have_debug);
    if (!w->is64 && w->shoff + (w->nsec + 1) * jitanon__elf_shentsize(0) > UINT32_MAX)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "file too large for ELF32");
    for (i = 0; i <= w->nsec; i++) jitanon__elf_shdr(w, &w->sec[i]);
    jitanon__elf_header(w);
    if (w->note.failed_ || w->sym.failed_ || w->str.failed_ || w->shstr.failed_ || w->shdrs.failed_ || w->head.failed_)
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build ELF tables");
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_elf_builder_finish(jitanon_elf_builder *b, jitanon_sink sink, jitanon_elf_info *info,
                                                      jitanon_error *err)
{
    jitanon__elfw w;
    jitanon_result r;
    JITANON_ASSERT(b && sink.write_fn);
    jitanon__clear_error(err);
    if (b->opts.line_bias == JITANON_ELF_LINE_BIAS_AUTO &&
        jitanon_elf_line_bias_scan_result(&b->bias_scan) == JITANON_ELF_LINE_BIAS_PERF) {
        b->bias = JITANON_ELF_LINE_BIAS_PERF;
        b->notes |= JITANON_ELF_NOTE_LINE_BIAS;
    }
    jitanon__elfw_init(&w, b);
    r = jitanon__elf_build(&w, err);
    if (r == JITANON_OK && w.head.size > b->text_base) r = JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "headers overflow");
    if (r == JITANON_OK) r = jitanon__elf_emit(&w, sink, err);
    if (r == JITANON_OK && info) {
        w.out.file_size = w.pos;
        w.out.text_offset = b->text_base;
        w.out.text_end = b->text_base + w.text_size;
        w.out.functions = b->count;
        w.out.elf_class = b->elf_class;
        w.out.big_endian = b->big_endian;
        w.out.notes = b->notes;
        *info = w.out;
    }
    jitanon__elfw_free(&w);
    return r;
}

/* A builder of a caller that writes many files hashes with the CPU's SHA extensions
   as the first file learnt of them (*sha_hw: 0 not asked yet, 1 without, 2 with). */
JITANON__PRIVATE void jitanon__elf_builder_sha(jitanon_elf_builder *b, int *sha_hw)
{
#if JITANON__SHA_NI
    if (!*sha_hw) *sha_hw = jitanon__sha_ni_present() ? 2 : 1;
#else
    *sha_hw = 1;
#endif
    b->id.hw = *sha_hw;
}

/* jitanon_elf_write_function, for a caller that writes many: *sha_hw keeps what the
   first file learnt of the CPU's SHA extensions (0: not asked yet), so each small file's
   build-id is hashed with them without asking again (a question costs three cpuid calls,
   each a trap to the hypervisor in a VM; below 64 KiB a lone hash does not ask). */
JITANON__PRIVATE jitanon_result jitanon__elf_write_one(jitanon_sink sink, const jitanon_jitdump_header *header,
                                                     const jitanon_elf_func *fn, const jitanon_elf_opts *opts,
                                                     jitanon_elf_info *info, int *sha_hw, jitanon_error *err)
{
    jitanon_elf_builder b;
    jitanon_result r = jitanon_elf_builder_init(&b, header, opts, err);
    if (r == JITANON_OK && sha_hw) jitanon__elf_builder_sha(&b, sha_hw);
    if (r == JITANON_OK) r = jitanon_elf_builder_add(&b, fn, NULL, err);
    if (r == JITANON_OK) r = jitanon_elf_builder_finish(&b, sink, info, err);
    jitanon_elf_builder_release(&b);
    return r;
}

JITANON_API jitanon_result jitanon_elf_write_function(jitanon_sink sink, const jitanon_jitdump_header *header,
                                                      const jitanon_elf_func *fn, const jitanon_elf_opts *opts,
                                                      jitanon_elf_info *info, jitanon_error *err)
{
    return jitanon__elf_write_one(sink, header, fn, opts, info, NULL, err);
}

/* -- [unwind] DWARF call frame information: one frame up from a copied stack -----------------

   What an unwinder does with a sample's user registers and copied user stack (perf record
   --call-graph dwarf), from the DWARF spec (5: section 6.4, Call Frame Information) and
   the LSB's description of .eh_frame: find the FDE whose range holds a pc in an .eh_frame
   (a file's, or the one of a JIT's UNWINDING_INFO, at the address its runtime put it),
   run its CIE's initial instructions and then its own up to the pc (the rule row), and
   apply the row to the registers with the stack copy as memory.  Only what .eh_frame
   holds in practice: every DW_CFA_* but the DWARF expressions, whose frames cannot be
   stepped (a PLT stub's CFA is one).  Every byte is read through the cursor; bad CFI is
   an error with its offset in the .eh_frame.  No allocation: a row is a fixed array,
   remember_state a bounded stack. */

#define JITANON__CFI_NREGS 33  /* x86-64: DWARF 0..15 and 16 (the return address); arm64: x0..x30, sp, pc */
#define JITANON__CFI_STATES 8u /* DW_CFA_remember_state nesting (compilers use 1 or 2) */

/* A register's rule (DWARF 6.4.1); SAME is what a row starts with. */
enum {
    JITANON__CFI_SAME = 0,
    JITANON__CFI_UNDEF = 1,
    JITANON__CFI_OFFSET = 2,     /* saved at CFA + arg */
    JITANON__CFI_VAL_OFFSET = 3, /* is CFA + arg */
    JITANON__CFI_REG = 4,        /* is in register arg */
    JITANON__CFI_EXPR = 5,       /* saved at the address its expression gives (the CFA pushed first) */
    JITANON__CFI_VAL_EXPR = 6,   /* is what its expression gives */
    JITANON__CFI_UNKNOWN = 7     /* a rule that names a register not tracked: unknown */
};

typedef struct jitanon__cfi_row {
    uint8_t how[JITANON__CFI_NREGS];
    int64_t arg[JITANON__CFI_NREGS];
    uint64_t cfa_reg;
    int64_t cfa_off;
    int cfa_expr; /* DW_CFA_def_cfa_expression: the CFA is expr[JITANON__CFI_NREGS]'s value */
    /* DWARF expressions (views into the .eh_frame) of EXPR and VAL_EXPR rules, the CFA's last */
    const uint8_t *expr[JITANON__CFI_NREGS + 1];
    size_t expr_len[JITANON__CFI_NREGS + 1];
    int big; /* their byte order (the .eh_frame's) */
} jitanon__cfi_row;

/* A CIE's fields an FDE needs. */
typedef struct jitanon__cfi_cie {
    uint64_t code_align, ra;
    int64_t data_align;
    unsigned enc;      /* the FDE's pointer encoding (DW_EH_PE_*; 0: absolute, 8 bytes) */
    int aug_z, signal; /* 'z': FDEs carry augmentation data; 'S': a signal frame */
    jitanon__cur init; /* its initial instructions */
} jitanon__cfi_cie;

typedef struct jitanon__cfi_fde {
    uint64_t pc, end; /* the code it covers: [pc, end) */
    jitanon__cfi_cie cie;
    jitanon__cur ins; /* its instructions */
} jitanon__cfi_fde;

JITANON__PRIVATE int jitanon__cfi_sleb(jitanon__cur *c, int64_t *v)
{
    unsigned shift = 0;
    uint64_t u = 0;
    const uint8_t *p;
    do {
        if (!(p = jitanon__take(c, 1)) || shift > 63) return 0;
        u |= (uint64_t)(*p & 0x7f) << shift;
        shift += 7;
    } while (*p & 0x80);
    if (shift < 64 && (*p & 0x40)) u |= ~(uint64_t)0 << shift; /* sign-extend */
    *v = (int64_t)u;
    return 1;
}

/* A pointer encoded as `enc` (DW_EH_PE_*: the format in the low nibble, how it applies in
   bits 4-6) whose first byte is at address `addr` (the base of pcrel); `data` is datarel's
   base (.eh_frame_hdr's start).  0 when it does not fit or is of a kind .eh_frame does
   not use for code (indirect, textrel, funcrel, aligned). */
JITANON__PRIVATE int jitanon__cfi_ptr(jitanon__cur *c, unsigned enc, uint64_t addr, uint64_t data, uint64_t *out)
{
    const uint8_t *p;
    uint64_t v, base;
    int64_t s;
    switch (enc & 0x0f) {
    case 0x00: /* absptr: 8 bytes on the 64-bit targets unwound here */
    case 0x04:
    case 0x0c:
        if (!(p = jitanon__take(c, 8))) return 0;
        v = jitanon__rd64(p, c->big);
        break;
    case 0x01:
        if (!jitanon__elf_uleb(c, &v)) return 0;
        break;
    case 0x09:
        if (!jitanon__cfi_sleb(c, &s)) return 0;
        v = (uint64_t)s;
        break;
    case 0x02:
    case 0x0a:
        if (!(p = jitanon__take(c, 2))) return 0;
        v = jitanon__rd16(p, c->big);
        if ((enc & 0x0f) == 0x0a) v = (uint64_t)(int64_t)(int16_t)(uint16_t)v;
        break;
    case 0x03:
    case 0x0b:
        if (!(p = jitanon__take(c, 4))) return 0;
        v = jitanon__rd32(p, c->big);
        if ((enc & 0x0f) == 0x0b) v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
        break;
    default:
        return 0;
    }
    if ((enc & 0x70) == 0x00) base = 0;
    else if ((enc & 0x70) == 0x10) base = addr;
    else if ((enc & 0x70) == 0x30) base = data;
    else return 0;
    if (enc & 0x80) return 0;
    *out = base + v;
    return 1;
}

/* The entry (CIE or FDE) at `at` of an .eh_frame of `size` bytes: *body is what follows
   its CIE id / CIE pointer field (up to the entry's end), *id that field and *id_at its
   offset.  0: a terminator (length 0); -1: it does not fit. */
JITANON__PRIVATE int jitanon__cfi_entry(const uint8_t *eh, size_t size, size_t at, int big, jitanon__cur *body,
                                        uint64_t *id, size_t *id_at, size_t *next)
{
    jitanon__cur c = jitanon__cur_make(eh, size, 0, big);
    uint64_t len;
    if (!jitanon__take(&c, at) || c.left < 4) return -1;
    len = jitanon__get32(&c);
    if (len == 0) return 0;
    if (len == 0xffffffffu) { /* the 64-bit format: a 64-bit length and id */
        if (c.left < 8) return -1;
        len = jitanon__get64(&c);
        if (len < 8 || len > c.left) return -1;
        *id_at = (size_t)c.off;
        *body = jitanon__cur_make(c.p + 8, (size_t)len - 8, c.off + 8, big);
        *id = jitanon__rd64(c.p, big);
    } else {
        if (len < 4 || len > c.left) return -1;
        *id_at = (size_t)c.off;
        *body = jitanon__cur_make(c.p + 4, (size_t)len - 4, c.off + 4, big);
        *id = jitanon__rd32(c.p, big);
    }
    *next = (size_t)(body->off + body->left);
    return 1;
}

/* The CIE at `at` (.eh_frame at address eh_addr). */
JITANON__PRIVATE jitanon_result jitanon__cfi_cie_read(const uint8_t *eh, size_t size, uint64_t eh_addr, size_t at, int big,
                                                      jitanon__cfi_cie *cie, jitanon_error *err)
{
    jitanon__cur c, aug_data;
    jitanon_str aug;
    uint64_t id, auglen, ptr;
    size_t id_at, next, i;
    unsigned version = 0, b = 0;
    memset(cie, 0, sizeof *cie);
    if (jitanon__cfi_entry(eh, size, at, big, &c, &id, &id_at, &next) != 1 || id != 0)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "no CIE at %U", (uint64_t)at);
    if (!jitanon__elf_skip_byte(&c, &version) || (version != 1 && version != 3 && version != 4) ||
        !jitanon__take_cstr(&c, &aug))
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "CIE version %u", version);
    if (version == 4 && !jitanon__take(&c, 2)) /* address_size, segment_selector_size */
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, c.off, "CIE cut short");
    if (!jitanon__elf_uleb(&c, &cie->code_align) || !jitanon__cfi_sleb(&c, &cie->data_align) ||
        (version == 1 ? !jitanon__elf_skip_byte(&c, &b) : !jitanon__elf_uleb(&c, &cie->ra)))
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, c.off, "CIE cut short");
    if (version == 1) cie->ra = b;
    aug_data = jitanon__cur_make(NULL, 0, c.off, big);
    if (aug.length && aug.data[0] == 'z') {
        const uint8_t *p;
        if (!jitanon__elf_uleb(&c, &auglen) || auglen > c.left || !(p = jitanon__take(&c, (size_t)auglen)))
            return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, c.off, "CIE augmentation cut short");
        aug_data = jitanon__cur_make(p, (size_t)auglen, c.off - auglen, big);
        cie->aug_z = 1;
    } else if (aug.length) /* (gcc 2's "eh" carried a word of unknown size before the factors) */
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, at, "CIE augmentation \"%s\"", aug.data);
    for (i = 1; cie->aug_z && i < aug.length; i++) {
        unsigned enc = 0;
        switch (aug.data[i]) {
        case 'R':
            if (!jitanon__elf_skip_byte(&aug_data, &enc)) goto bad_aug;
            cie->enc = enc;
            break;
        case 'L':
            if (!jitanon__elf_skip_byte(&aug_data, NULL)) goto bad_aug;
            break;
        case 'P': /* the personality routine: skipped, read to know its size */
            if (!jitanon__elf_skip_byte(&aug_data, &enc) ||
                !jitanon__cfi_ptr(&aug_data, enc & 0x7f, eh_addr + aug_data.off, 0, &ptr))
                goto bad_aug;
            break;
        case 'S':
            cie->signal = 1;
            break;
        case 'B': /* arm64 with pointer authentication's B key: no data */
            break;
        default:
            goto bad_aug; /* an unknown letter: its data cannot be skipped */
        }
    }
    cie->init = c;
    return JITANON_OK;
bad_aug:
    return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, at, "CIE augmentation \"%s\"", aug.data);
}

/* Reads the FDE at `at` if it is one (1), with its CIE; 0: a CIE (skip it). */
JITANON__PRIVATE jitanon_result jitanon__cfi_fde_read(const uint8_t *eh, size_t size, uint64_t eh_addr, size_t at,
                                                      int big, jitanon__cfi_fde *fde, size_t *next, int *is_fde,
                                                      jitanon_error *err)
{
    jitanon__cur c;
    uint64_t id, range, auglen;
    size_t id_at;
    jitanon_result res;
    int k = jitanon__cfi_entry(eh, size, at, big, &c, &id, &id_at, next);
    *is_fde = 0;
    if (k == 0) {
        *next = size; /* a terminator ends the section */
        return JITANON_OK;
    }
    if (k < 0) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, at, "CFI entry cut short");
    if (id == 0) return JITANON_OK;
    /* the CIE pointer counts back from its own field */
    if (id > id_at) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, id_at, "CIE pointer before the section");
    if ((res = jitanon__cfi_cie_read(eh, size, eh_addr, id_at - (size_t)id, big, &fde->cie, err)) != JITANON_OK)
        return res;
    if (!jitanon__cfi_ptr(&c, fde->cie.enc, eh_addr + c.off, 0, &fde->pc) ||
        !jitanon__cfi_ptr(&c, fde->cie.enc & 0x0f, 0, 0, &range) || range > UINT64_MAX - fde->pc)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, c.off, "FDE range (encoding %u)", fde->cie.enc);
    fde->end = fde->pc + range;
    if (fde->cie.aug_z && (!jitanon__elf_uleb(&c, &auglen) || !jitanon__take(&c, (size_t)(auglen > c.left ? SIZE_MAX : auglen))))
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, c.off, "FDE augmentation cut short");
    fde->ins = c;
    *is_fde = 1;
    return JITANON_OK;
}

/* The FDE whose range holds pc in the .eh_frame at address eh_addr: JITANON_OK with it,
   JITANON_END when none does, an error for CFI that cannot be read up to it. */
JITANON__PRIVATE jitanon_result jitanon__cfi_find(const uint8_t *eh, size_t size, uint64_t eh_addr, int big, uint64_t pc,
                                                  jitanon__cfi_fde *out, jitanon_error *err)
{
    size_t at = 0, next;
    while (at < size) {
        int is_fde;
        jitanon_result res = jitanon__cfi_fde_read(eh, size, eh_addr, at, big, out, &next, &is_fde, err);
        if (res != JITANON_OK) return res;
        if (is_fde && pc >= out->pc && pc < out->end) return JITANON_OK;
        at = next;
    }
    return JITANON_END;
}

/* A factored offset: wraps instead of overflowing (hostile CFI), as the addresses it is
   added to do. */
JITANON__PRIVATE int64_t jitanon__cfi_mul(uint64_t a, int64_t b)
{
    uint64_t v = a * (uint64_t)b;
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1; /* two's complement, without UB */
}

JITANON__PRIVATE void jitanon__cfi_set(jitanon__cfi_row *row, uint64_t reg, int how, int64_t arg)
{
    if (reg >= JITANON__CFI_NREGS) return; /* a vector register: no frame needs it */
    row->how[reg] = (uint8_t)how;
    row->arg[reg] = arg;
}

/* Runs instructions `c` from code address `loc` while the row still describes pc (the
   rules set at an address above pc are not applied).  `init` is the row after the CIE's
   instructions (what DW_CFA_restore goes back to); NULL while running those. */
JITANON__PRIVATE jitanon_result jitanon__cfi_run(jitanon__cur c, const jitanon__cfi_cie *cie, uint64_t eh_addr, uint64_t loc,
                                                 uint64_t pc, jitanon__cfi_row *row, const jitanon__cfi_row *init,
                                                 jitanon_error *err)
{
    jitanon__cfi_row saved[JITANON__CFI_STATES];
    unsigned nsaved = 0;
    row->big = c.big;
    while (c.left) {
        uint64_t at = c.off, reg = 0, u = 0, delta = 0;
        int64_t s = 0;
        unsigned op = *jitanon__take(&c, 1), low = op & 0x3f;
        int ok = 1, adv = 0;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            delta = low, adv = 1;
            break;
        case 2: /* DW_CFA_offset */
            ok = jitanon__elf_uleb(&c, &u);
            jitanon__cfi_set(row, low, JITANON__CFI_OFFSET, jitanon__cfi_mul(u, cie->data_align));
            break;
        case 3: /* DW_CFA_restore */
            if (init && low < JITANON__CFI_NREGS) jitanon__cfi_set(row, low, init->how[low], init->arg[low]);
            break;
        default:
            switch (op) {
            case 0x00: /* nop */
            case 0x2d: /* GNU_window_save; on arm64 negate_ra_state: return addresses are stripped anyway */
                break;
            case 0x01: { /* set_loc */
                uint64_t to = 0;
                ok = jitanon__cfi_ptr(&c, cie->enc, eh_addr + c.off, 0, &to);
                if (ok && to > pc) return JITANON_OK;
                loc = to;
                break;
            }
            case 0x02: /* advance_loc1 */
            case 0x03: /* advance_loc2 */
            case 0x04: { /* advance_loc4 */
                size_t n = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
                const uint8_t *p = jitanon__take(&c, n);
                ok = p != NULL;
                if (ok) delta = n == 1 ? *p : n == 2 ? jitanon__rd16(p, c.big) : jitanon__rd32(p, c.big);
                adv = 1;
                break;
            }
            case 0x05: /* offset_extended */
            case 0x14: /* val_offset */
            case 0x2f: /* GNU_negative_offset_extended */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__elf_uleb(&c, &u);
                s = jitanon__cfi_mul(op == 0x2f ? (uint64_t)0 - u : u, cie->data_align);
                jitanon__cfi_set(row, reg, op == 0x14 ? JITANON__CFI_VAL_OFFSET : JITANON__CFI_OFFSET, s);
                break;
            case 0x11: /* offset_extended_sf */
            case 0x15: /* val_offset_sf */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__cfi_sleb(&c, &s);
                jitanon__cfi_set(row, reg, op == 0x15 ? JITANON__CFI_VAL_OFFSET : JITANON__CFI_OFFSET, jitanon__cfi_mul((uint64_t)s, cie->data_align));
                break;
            case 0x06: /* restore_extended */
                ok = jitanon__elf_uleb(&c, &reg);
                if (init && reg < JITANON__CFI_NREGS) jitanon__cfi_set(row, reg, init->how[reg], init->arg[reg]);
                break;
            case 0x07: /* undefined */
            case 0x08: /* same_value */
                ok = jitanon__elf_uleb(&c, &reg);
                jitanon__cfi_set(row, reg, op == 0x07 ? JITANON__CFI_UNDEF : JITANON__CFI_SAME, 0);
                break;
            case 0x09: /* register */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__elf_uleb(&c, &u);
                jitanon__cfi_set(row, reg, u < JITANON__CFI_NREGS ? JITANON__CFI_REG : JITANON__CFI_UNKNOWN, (int64_t)u);
                break;
            case 0x0a: /* remember_state */
                if (nsaved == JITANON__CFI_STATES)
                    return JITANON__FAIL(err, JITANON_ERR_LIMIT, at, "DW_CFA_remember_state nested deeper than %u",
                                         JITANON__CFI_STATES);
                saved[nsaved++] = *row;
                break;
            case 0x0b: /* restore_state: the whole row, the CFA's rule too (compilers wrap
                          an epilogue that moves the CFA in remember/restore and expect it) */
                if (!nsaved) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "DW_CFA_restore_state with nothing saved");
                *row = saved[--nsaved];
                break;
            case 0x0c: /* def_cfa */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__elf_uleb(&c, &u);
                row->cfa_reg = reg, row->cfa_off = (int64_t)u, row->cfa_expr = 0;
                break;
            case 0x12: /* def_cfa_sf */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__cfi_sleb(&c, &s);
                row->cfa_reg = reg, row->cfa_off = jitanon__cfi_mul((uint64_t)s, cie->data_align), row->cfa_expr = 0;
                break;
            case 0x0d: /* def_cfa_register */
                ok = jitanon__elf_uleb(&c, &reg);
                row->cfa_reg = reg;
                break;
            case 0x0e: /* def_cfa_offset */
                ok = jitanon__elf_uleb(&c, &u);
                row->cfa_off = (int64_t)u;
                break;
            case 0x13: /* def_cfa_offset_sf */
                ok = jitanon__cfi_sleb(&c, &s);
                row->cfa_off = jitanon__cfi_mul((uint64_t)s, cie->data_align);
                break;
            case 0x0f: /* def_cfa_expression: a block */
                ok = jitanon__elf_uleb(&c, &u) && u <= c.left;
                row->expr[JITANON__CFI_NREGS] = c.p, row->expr_len[JITANON__CFI_NREGS] = (size_t)u;
                ok = ok && jitanon__take(&c, (size_t)u);
                row->cfa_expr = 1;
                break;
            case 0x10: /* expression */
            case 0x16: /* val_expression */
                ok = jitanon__elf_uleb(&c, &reg) && jitanon__elf_uleb(&c, &u) && u <= c.left;
                if (ok && reg < JITANON__CFI_NREGS) row->expr[reg] = c.p, row->expr_len[reg] = (size_t)u;
                ok = ok && jitanon__take(&c, (size_t)u);
                jitanon__cfi_set(row, reg, op == 0x10 ? JITANON__CFI_EXPR : JITANON__CFI_VAL_EXPR, 0);
                break;
            case 0x2e: /* GNU_args_size: what a landing pad pops; nothing for unwinding */
                ok = jitanon__elf_uleb(&c, &u);
                break;
            default:
                return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, at, "DW_CFA opcode %u", op);
            }
        }
        if (!ok) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, at, "DW_CFA opcode %u cut short", op);
        if (adv) {
            uint64_t step = delta * cie->code_align;
            if (cie->code_align && step / cie->code_align != delta) return JITANON_OK; /* past any pc */
            if (step > pc - loc || loc > pc) return JITANON_OK;
            loc += step;
        }
    }
    return JITANON_OK;
}

/* The rule row at pc of an FDE found by jitanon__cfi_find. */
JITANON__PRIVATE jitanon_result jitanon__cfi_row_at(const jitanon__cfi_fde *fde, uint64_t eh_addr, uint64_t pc,
                                                    jitanon__cfi_row *row, jitanon_error *err)
{
    jitanon__cfi_row init;
    jitanon_result res;
    memset(row, 0, sizeof *row);
    /* the CIE's instructions hold at every address of the function */
    if ((res = jitanon__cfi_run(fde->cie.init, &fde->cie, eh_addr, 0, UINT64_MAX, row, NULL, err)) != JITANON_OK) return res;
    init = *row;
    return jitanon__cfi_run(fde->ins, &fde->cie, eh_addr, fde->pc, pc, row, &init, err);
}

/* Registers in DWARF numbering (jitanon__cfi_regs_from_perf) and which are known. */
typedef struct jitanon__cfi_regs {
    uint64_t v[JITANON__CFI_NREGS];
    uint64_t known; /* bit i: v[i] holds */
} jitanon__cfi_regs;

/* Reads 8 bytes at a stack address: 0 when the copy does not hold them. */
typedef int (*jitanon__cfi_mem_fn)(const void *ctx, uint64_t addr, uint64_t *out);

#define JITANON__CFI_EXPR_DEPTH 16u  /* DWARF expression stack (CFI uses 2 or 3) */
#define JITANON__CFI_EXPR_STEPS 256u /* operations one evaluation may run (branches loop) */

/* A DWARF expression (DWARF 5 section 2.5) of a CFI rule over the registers and the
   stack: the operations CFI uses (constants, register-based addresses, arithmetic and
   logic, comparisons, branches, deref).  `cfa`, when push_cfa, starts the stack (the
   rules of DW_CFA_expression and val_expression).  1 with its value in *out; 0 when it
   cannot be computed (an operation not supported, a register not known, a bad branch). */
JITANON__PRIVATE int jitanon__cfi_eval(const uint8_t *p, size_t n, int big, const jitanon__cfi_regs *r, int push_cfa,
                                       uint64_t cfa, jitanon__cfi_mem_fn mem, const void *ctx, uint64_t *out)
{
    uint64_t st[JITANON__CFI_EXPR_DEPTH], a, b, u;
    int64_t sv;
    unsigned sp = 0, steps = 0;
    jitanon__cur c = jitanon__cur_make(p, n, 0, big);
    if (push_cfa) st[sp++] = cfa;
    while (c.left) {
        unsigned op = *jitanon__take(&c, 1);
        const uint8_t *q;
        if (++steps > JITANON__CFI_EXPR_STEPS) return 0;
        if (op >= 0x30 && op <= 0x4f) { /* DW_OP_lit<n> */
            if (sp == JITANON__CFI_EXPR_DEPTH) return 0;
            st[sp++] = op - 0x30u;
            continue;
        }
        if ((op >= 0x70 && op <= 0x8f) || op == 0x92) { /* DW_OP_breg<n>, bregx: register + offset */
            uint64_t reg = op - 0x70u;
            if ((op == 0x92 && !jitanon__elf_uleb(&c, &reg)) || !jitanon__cfi_sleb(&c, &sv) ||
                reg >= JITANON__CFI_NREGS || !(r->known >> reg & 1) || sp == JITANON__CFI_EXPR_DEPTH)
                return 0;
            st[sp++] = r->v[reg] + (uint64_t)sv;
            continue;
        }
        switch (op) {
        case 0x08: case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x0e: case 0x0f: { /* const<n>u/s */
            size_t w = (size_t)1 << ((op - 0x08u) / 2);
            if (!(q = jitanon__take(&c, w)) || sp == JITANON__CFI_EXPR_DEPTH) return 0;
            u = w == 1 ? *q : w == 2 ? jitanon__rd16(q, big) : w == 4 ? jitanon__rd32(q, big) : jitanon__rd64(q, big);
            if (op & 1) u = w == 1 ? (uint64_t)(int64_t)(int8_t)(uint8_t)u : w == 2 ? (uint64_t)(int64_t)(int16_t)(uint16_t)u
                          : w == 4 ? (uint64_t)(int64_t)(int32_t)(uint32_t)u : u;
            st[sp++] = u;
            break;
        }
        case 0x10: /* constu */
        case 0x11: /* consts */
            if (sp == JITANON__CFI_EXPR_DEPTH || (op == 0x10 ? !jitanon__elf_uleb(&c, &u) : !jitanon__cfi_sleb(&c, &sv))) return 0;
            st[sp++] = op == 0x10 ? u : (uint64_t)sv;
            break;
        case 0x12: /* dup */
        case 0x14: /* over */
            if (sp < (op == 0x12 ? 1u : 2u) || sp == JITANON__CFI_EXPR_DEPTH) return 0;
            st[sp] = st[sp - (op == 0x12 ? 1u : 2u)];
            sp++;
            break;
        case 0x13: /* drop */
            if (!sp) return 0;
            sp--;
            break;
        case 0x16: /* swap */
            if (sp < 2) return 0;
            a = st[sp - 1], st[sp - 1] = st[sp - 2], st[sp - 2] = a;
            break;
        case 0x06: /* deref */
            if (!sp || !mem(ctx, st[sp - 1], &st[sp - 1])) return 0;
            break;
        case 0x23: /* plus_uconst */
            if (!sp || !jitanon__elf_uleb(&c, &u)) return 0;
            st[sp - 1] += u;
            break;
        case 0x1f: /* neg */
        case 0x20: /* not */
            if (!sp) return 0;
            st[sp - 1] = op == 0x1f ? (uint64_t)0 - st[sp - 1] : ~st[sp - 1];
            break;
        case 0x1a: case 0x1c: case 0x1e: case 0x21: case 0x22: case 0x24: case 0x25: case 0x26: case 0x27:
        case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e: /* binary: second op top */
            if (sp < 2) return 0;
            b = st[--sp], a = st[sp - 1];
            switch (op) {
            case 0x1a: a &= b; break;
            case 0x1c: a -= b; break;
            case 0x1e: a *= b; break;
            case 0x21: a |= b; break;
            case 0x22: a += b; break;
            case 0x24: a = b < 64 ? a << b : 0; break;
            case 0x25: a = b < 64 ? a >> b : 0; break;
            case 0x26: a = b < 64 ? (uint64_t)((int64_t)a >> b) : (uint64_t)((int64_t)a < 0 ? -1 : 0); break;
            case 0x27: a ^= b; break;
            case 0x29: a = a == b; break;
            case 0x2a: a = (int64_t)a >= (int64_t)b; break;
            case 0x2b: a = (int64_t)a > (int64_t)b; break;
            case 0x2c: a = (int64_t)a <= (int64_t)b; break;
            case 0x2d: a = (int64_t)a < (int64_t)b; break;
            default: a = a != b; break;
            }
            st[sp - 1] = a;
            break;
        case 0x2f: /* skip */
        case 0x28: { /* bra: skip when the popped value is not 0 */
            int16_t off;
            size_t at;
            if (!(q = jitanon__take(&c, 2))) return 0;
            off = (int16_t)jitanon__rd16(q, big);
            if (op == 0x28) {
                if (!sp) return 0;
                if (!st[--sp]) break;
            }
            at = n - c.left; /* after the operand */
            if (off < 0 ? (size_t)(-(int32_t)off) > at : (size_t)off > c.left) return 0;
            at = off < 0 ? at - (size_t)(-(int32_t)off) : at + (size_t)off;
            c = jitanon__cur_make(p + at, n - at, at, big);
            break;
        }
        case 0x96: /* nop */
            break;
        default:
            return 0;
        }
    }
    if (!sp) return 0;
    *out = st[sp - 1];
    return 1;
}

/* One frame up: the caller's registers from `row` (the callee's at its pc), the return
   address in column `ra` and the stack pointer (column `sp`) the CFA, as the ABIs of
   x86-64 and arm64 define it.  1: stepped; 0: the return address is undefined (the
   outermost frame); -1: cannot (the CFA or the return address is unknown, or lies
   outside the copy). */
JITANON__PRIVATE int jitanon__cfi_step(const jitanon__cfi_row *row, uint64_t ra, unsigned sp, jitanon__cfi_regs *r,
                                       jitanon__cfi_mem_fn mem, const void *ctx)
{
    jitanon__cfi_regs out;
    uint64_t cfa, i;
    if (ra >= JITANON__CFI_NREGS) return -1;
    if (row->cfa_expr) {
        if (!jitanon__cfi_eval(row->expr[JITANON__CFI_NREGS], row->expr_len[JITANON__CFI_NREGS], row->big, r, 0, 0, mem, ctx, &cfa))
            return -1;
    } else if (row->cfa_reg >= JITANON__CFI_NREGS || !(r->known >> row->cfa_reg & 1)) return -1;
    else cfa = r->v[row->cfa_reg] + (uint64_t)row->cfa_off;
    if (row->how[ra] == JITANON__CFI_UNDEF) return 0;
    out = *r;
    for (i = 0; i < JITANON__CFI_NREGS; i++) {
        uint64_t bit = (uint64_t)1 << i, a = cfa + (uint64_t)row->arg[i];
        switch (row->how[i]) {
        case JITANON__CFI_UNDEF:
        case JITANON__CFI_UNKNOWN:
            out.known &= ~bit;
            break;
        case JITANON__CFI_EXPR:
        case JITANON__CFI_VAL_EXPR: {
            uint64_t v = 0;
            int got = jitanon__cfi_eval(row->expr[i], row->expr_len[i], row->big, r, 1, cfa, mem, ctx, &v);
            if (got && row->how[i] == JITANON__CFI_EXPR) got = mem(ctx, v, &v);
            out.v[i] = v;
            out.known = got ? out.known | bit : out.known & ~bit;
            break;
        }
        case JITANON__CFI_OFFSET:
            if (mem(ctx, a, &out.v[i])) out.known |= bit;
            else out.known &= ~bit;
            break;
        case JITANON__CFI_VAL_OFFSET:
            out.v[i] = a, out.known |= bit;
            break;
        case JITANON__CFI_REG: {
            uint64_t from = (uint64_t)row->arg[i];
            out.v[i] = r->v[from];
            out.known = (out.known & ~bit) | ((r->known >> from & 1) << i);
            break;
        }
        default: /* SAME */
            break;
        }
    }
    out.v[sp] = cfa, out.known |= (uint64_t)1 << sp;
    if (!(out.known >> ra & 1)) return -1;
    *r = out;
    return 1;
}

/* -- [symbols] Native symbols: a mapped file's ELF symbols and the kernel's, chosen as perf 6.1 -----
   What `perf script` prints for a frame in a file or in the kernel, read from the file's
   ELF symbol table or from kallsyms (perf 6.1's choices, taken from its behaviour; the
   frame iterator uses it for JITANON_FRAME_WANT_SYMBOL in [inject]):
   - which symbols: a file's .symtab, else its .dynsym (never both); FUNC, IFUNC and
     OBJECT symbols with a name, in a section; NOTYPE ones (labels) only in a section
     whose name holds "text", and not hidden or internal; ARM's mapping symbols ($a, $d,
     $t, $x) never;
   - aliases at one address: one is kept, the one with a size, then not weak over weak,
     then global over local, then the fewer leading underscores, then the longer name
     (the demangled one when names are demangled), else the first in the table ("SyS" and
     "compat_SyS" lose in the kernel);
   - sizes: a symbol of size 0 ends where the next begins; the last at the end of the page
     after its own (kallsyms: also where the kernel's symbols meet a module's);
   - PLT: each slot of .plt (.plt.sec where x86-64's IBT put the slots) named after the
     .dynsym symbol of its .rela.plt (.rel.plt) entry, plus "@plt";
   - addresses: a frame's offset in the file (map pgoff + ip - map start) is taken to an
     address of the file through the PT_LOAD that holds it (p_vaddr - p_offset), so
     ET_EXEC, ET_DYN and prelinked files all find their symbols; the symbols of an
     ET_EXEC, ET_REL or prelinked (.gnu.prelink_undo) file that no PT_LOAD holds are
     left out, as perf cannot place them.
   - the vdso: perf record's copy in the build-id cache; for a [vdso] the recording names
     no build-id of (perf record -B, --buildid-mmap), this process's own vdso, unchecked
     (io.read_file's "[vdso]", jitanon__os.self_vdso); one it has a build-id for and the
     cache has no copy of stays unnamed, as perf 6.1 leaves it, though it may be this
     kernel's own.
   A file is read through a read function at offsets (io.read_file in the injector,
   memory in the tests and the fuzzer), only the parts it needs: its headers, one symbol
   table and its strings, and for the PLT .dynsym, .dynstr and the relocations.  Every
   read is bounded by what was read; counts are bounded by the bytes they describe. */

#define JITANON__SYM_MAX_BYTES ((uint64_t)1 << 30) /* one table or string section at most */
#define JITANON__SYM_MAX_LOADS 16
#define JITANON__SYM_MAX_SECTIONS 65536u

/* Reads up to `size` bytes at `off` of a file into dst: the bytes read (fewer at its end),
   SIZE_MAX when it cannot be read. */
typedef size_t (*jitanon__sym_read_fn)(void *user, uint64_t off, void *dst, size_t size);

typedef struct jitanon__sym_sec {
    uint64_t addr, off, size, entsize;
    uint32_t name, type, link;
} jitanon__sym_sec;

/* One ELF file's headers: what choosing it and reading its symbols needs. */
typedef struct jitanon__sym_file {
    jitanon__sym_read_fn read;
    void *user;
    int is64, big;
    int adjust; /* ET_EXEC, ET_REL or prelinked: symbols are placed through the PT_LOADs */
    uint16_t type, machine;
    jitanon__sym_sec *secs;
    size_t nsecs;
    uint8_t *shstr;
    size_t shstr_size;
    uint64_t load_off[JITANON__SYM_MAX_LOADS], load_addr[JITANON__SYM_MAX_LOADS];
    uint64_t load_filesz[JITANON__SYM_MAX_LOADS], load_memsz[JITANON__SYM_MAX_LOADS];
    size_t nloads;
    size_t symtab, dynsym; /* section index; 0: none */
    uint8_t build_id[20];
    size_t build_id_size;  /* 0: no NT_GNU_BUILD_ID note */
    char debuglink[256];   /* .gnu_debuglink's file name; "": none */
} jitanon__sym_file;

#define JITANON__SYM_PLT 1u       /* a PLT slot: name is the symbol's, "@plt" follows */
#define JITANON__SYM_DEMANGLED 2u /* the demangler was asked (name is its answer when it had one) */
#define JITANON__SYM_TIE 4u       /* aliases not chosen yet (jitanon__sym_tie): this is the first */
#define JITANON__SYM_UNEVEN 8u    /* ... and they end in different places (end is not the chosen one's) */

typedef struct jitanon__sym_ent {
    uint64_t start, end; /* [start, end), addresses of the file (kallsyms: of the kernel) */
    const char *name;    /* NUL-terminated at len */
    uint32_t len;
    uint32_t seq;        /* its place in perf's order of insertion (jitanon__rb) */
    uint8_t bind, type, flags, pad;
} jitanon__sym_ent;

typedef struct jitanon__sym_gone { /* an alias perf removed: its start and place */
    uint64_t start;
    uint32_t seq, pad;
} jitanon__sym_gone;

/* Aliases at one address whose choice needs their demangled names (jitanon__sym_fixup):
   chosen when a lookup first needs that address (most never are: node has 10,000 such
   pairs, 20,000 names to demangle, and a pass looks a few hundred up). */
typedef struct jitanon__sym_tie {
    uint64_t start;
    uint64_t zend;   /* where the chosen one ends if it has no size */
    size_t first, n; /* the aliases, in the table's order: ties[first, first + n) */
    size_t gone;     /* its n - 1 places in the gone list (SIZE_MAX: none kept) */
} jitanon__sym_tie;

/* Names made here (PLT slots, demangled names): blocks that never move, so a name handed
   out stays valid while the table lives. */
typedef struct jitanon__sym_arena {
    char **blocks;
    size_t *sizes;
    size_t n, cap, scap, used; /* used: of the last block */
} jitanon__sym_arena;

/* Demangles NUL-terminated `name` into out (cap bytes): the length of the demangled name
   (out holds it NUL-terminated when it is below cap), 0 when it is not a mangled name. */
typedef size_t (*jitanon__sym_demangle_fn)(void *user, const char *name, char *out, size_t cap);

typedef struct jitanon__sym_table {
    jitanon__sym_ent *ents;
    size_t n, cap;
    uint8_t *strings; /* the table's string section (or kallsyms' text): names point in */
    size_t strings_size;
    jitanon__sym_arena arena;
    uint64_t load_off[JITANON__SYM_MAX_LOADS], load_addr[JITANON__SYM_MAX_LOADS], load_size[JITANON__SYM_MAX_LOADS];
    size_t nloads;
    int kallsyms;
    jitanon__sym_demangle_fn demangle;
    void *demangle_user;
    uint32_t nseq, nseq_syms;     /* symbols inserted: all, the table's (the PLT's follow) */
    jitanon__sym_gone *gone;      /* the aliases removed, in perf's order */
    size_t ngone, gone_cap;
    jitanon__sym_tie *tie;        /* the choices left for later, by start */
    size_t ntie, tie_cap;
    jitanon__sym_ent *ties;       /* their aliases */
    size_t nties, ties_cap;
    jitanon__rb *rb;          /* built on the first lookup that needs it */
    int rb_failed;                /* (out of memory: the innermost symbol is taken instead) */
    struct jitanon__sym_seen *seen; /* the last answers, by address (callchains repeat) */
} jitanon__sym_table;

#define JITANON__SYM_SEEN 1024u
typedef struct jitanon__sym_seen {
    uint64_t addr;
    uint32_t ent; /* 1 + the symbol's index; UINT32_MAX: none; 0: an empty slot */
    uint32_t pad;
} jitanon__sym_seen;

JITANON__PRIVATE char *jitanon__sym_arena_put(const jitanon_allocator *a, jitanon__sym_arena *r, const char *s, size_t n,
                                             const char *suffix, size_t sn)
{
    char *p;
    size_t need = n + sn + 1;
    if (need <= n) return NULL;
    if (!r->n || r->sizes[r->n - 1] - r->used < need) {
        size_t size = need > 65536 ? need : 65536;
        if (!jitanon__grow(a, (void **)&r->blocks, &r->cap, r->n + 1, sizeof *r->blocks) ||
            !jitanon__grow(a, (void **)&r->sizes, &r->scap, r->n + 1, sizeof *r->sizes) ||
            !(p = (char *)jitanon__malloc(a, size)))
            return NULL;
        r->blocks[r->n] = p;
        r->sizes[r->n++] = size;
        r->used = 0;
    }
    p = r->blocks[r->n - 1] + r->used;
    if (n) memcpy(p, s, n);
    if (sn) memcpy(p + n, suffix, sn);
    p[n + sn] = 0;
    r->used += need;
    return p;
}

JITANON__PRIVATE void jitanon__sym_arena_free(const jitanon_allocator *a, jitanon__sym_arena *r)
{
    size_t i;
    for (i = 0; i < r->n; i++) jitanon__free(a, r->blocks[i], r->sizes[i]);
    jitanon__free(a, r->blocks, r->cap * sizeof *r->blocks);
    jitanon__free(a, r->sizes, r->scap * sizeof *r->sizes);
    memset(r, 0, sizeof *r);
}

JITANON__PRIVATE void jitanon__sym_table_free(const jitanon_allocator *a, jitanon__sym_table *t)
{
    if (t->rb) jitanon__rb_free(a, t->rb);
    jitanon__free(a, t->seen, t->seen ? JITANON__SYM_SEEN * sizeof *t->seen : 0);
    jitanon__free(a, t->gone, t->gone_cap * sizeof *t->gone);
    jitanon__free(a, t->tie, t->tie_cap * sizeof *t->tie);
    jitanon__free(a, t->ties, t->ties_cap * sizeof *t->ties);
    jitanon__free(a, t->ents, t->cap * sizeof *t->ents);
    jitanon__free(a, t->strings, t->strings_size);
    jitanon__sym_arena_free(a, &t->arena);
    memset(t, 0, sizeof *t);
}

JITANON__PRIVATE void jitanon__sym_file_free(const jitanon_allocator *a, jitanon__sym_file *f)
{
    jitanon__free(a, f->secs, f->nsecs * sizeof *f->secs);
    jitanon__free(a, f->shstr, f->shstr_size);
    f->secs = NULL, f->shstr = NULL, f->nsecs = f->shstr_size = 0;
}

/* `size` bytes at `off` of the file, allocated (*out; NULL for size 0). */
JITANON__PRIVATE jitanon_result jitanon__sym_take(const jitanon_allocator *a, const jitanon__sym_file *f, uint64_t off,
                                                  uint64_t size, uint8_t **out, const char *what, jitanon_error *err)
{
    size_t got;
    *out = NULL;
    if (!size) return JITANON_OK;
    if (size > JITANON__SYM_MAX_BYTES)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, off, "%s of %U bytes", what, size);
    if (!(*out = (uint8_t *)jitanon__malloc(a, (size_t)size)))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, off, "out of memory (%s)", what);
    got = f->read(f->user, off, *out, (size_t)size);
    if (got != (size_t)size) {
        jitanon__free(a, *out, (size_t)size);
        *out = NULL;
        return JITANON__FAIL(err, got == SIZE_MAX ? JITANON_ERR_IO : JITANON_ERR_TRUNCATED, off,
                             "%s of %U bytes past the end of the file", what, size);
    }
    return JITANON_OK;
}

/* Section i's name (empty when it has none that ends inside .shstrtab). */
JITANON__PRIVATE jitanon_str jitanon__sym_sec_name(const jitanon__sym_file *f, size_t i)
{
    jitanon_str s;
    jitanon__cur c;
    s.data = "", s.length = 0;
    if (i >= f->nsecs || f->secs[i].name >= f->shstr_size) return s;
    c = jitanon__cur_make(f->shstr + f->secs[i].name, f->shstr_size - f->secs[i].name, f->secs[i].name, 0);
    if (!jitanon__take_cstr(&c, &s)) s.data = "", s.length = 0;
    return s;
}

/* The first section called `name` (0: none), as perf finds sections by name. */
JITANON__PRIVATE size_t jitanon__sym_sec_by_name(const jitanon__sym_file *f, const char *name)
{
    size_t i, n = strlen(name);
    for (i = 1; i < f->nsecs; i++) {
        jitanon_str s = jitanon__sym_sec_name(f, i);
        if (s.length == n && !memcmp(s.data, name, n)) return i;
    }
    return 0;
}

/* The first NT_GNU_BUILD_ID note of a note section's bytes into f. */
JITANON__PRIVATE void jitanon__sym_notes(jitanon__sym_file *f, const uint8_t *p, size_t n)
{
    jitanon__cur c = jitanon__cur_make(p, n, 0, f->big);
    while (c.left >= 12) {
        uint32_t namesz = jitanon__get32(&c), descsz = jitanon__get32(&c), type = jitanon__get32(&c);
        const uint8_t *name = jitanon__take(&c, namesz), *desc;
        if (!name || !jitanon__take(&c, (4 - (namesz & 3)) & 3)) return;
        if (!(desc = jitanon__take(&c, descsz))) return;
        (void)jitanon__take(&c, (4 - (descsz & 3)) & 3);
        if (type == 3 && namesz == 4 && !memcmp(name, "GNU", 4) && descsz) {
            f->build_id_size = descsz < 20 ? descsz : 20;
            memcpy(f->build_id, desc, f->build_id_size);
            return;
        }
    }
}

/* Reads a file's ELF, program and section headers, .shstrtab, its build-id note and
   .gnu_debuglink.  JITANON_ERR_BAD_MAGIC: not ELF; a header past the file's end:
   JITANON_ERR_TRUNCATED or _BAD_HEADER, with its offset.  Free with jitanon__sym_file_free
   (also after an error). */
JITANON__PRIVATE jitanon_result jitanon__sym_open(const jitanon_allocator *a, jitanon__sym_read_fn rd, void *user,
                                                  jitanon__sym_file *f, jitanon_error *err)
{
    uint8_t eh[64], *ph = NULL, *sh = NULL;
    jitanon__cur c;
    uint64_t phoff, shoff, bytes;
    size_t got, phent, phnum, shent, shnum, shstrndx, i;
    jitanon_result r;
    memset(f, 0, sizeof *f);
    f->read = rd, f->user = user;
    got = rd(user, 0, eh, sizeof eh);
    if (got == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot read the file");
    if (got < 52 || memcmp(eh, "\177ELF", 4) || (eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2))
        return JITANON__FAIL(err, JITANON_ERR_BAD_MAGIC, 0, "not an ELF file");
    f->is64 = eh[4] == 2, f->big = eh[5] == 2;
    if (got < (f->is64 ? 64u : 52u)) return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, got, "ELF header cut short");
    c = jitanon__cur_make(eh + 16, got - 16, 16, f->big);
    f->type = jitanon__get16(&c), f->machine = jitanon__get16(&c);
    (void)jitanon__get32(&c); /* e_version */
    if (f->is64) {
        (void)jitanon__get64(&c);
        phoff = jitanon__get64(&c), shoff = jitanon__get64(&c);
    } else {
        (void)jitanon__get32(&c);
        phoff = jitanon__get32(&c), shoff = jitanon__get32(&c);
    }
    (void)jitanon__get32(&c), (void)jitanon__get16(&c); /* e_flags, e_ehsize */
    phent = jitanon__get16(&c), phnum = jitanon__get16(&c);
    shent = jitanon__get16(&c), shnum = jitanon__get16(&c), shstrndx = jitanon__get16(&c);
    /* PT_LOADs (what a file offset is as an address of the file) */
    if (phnum && phent >= (f->is64 ? 56u : 32u)) {
        if ((r = jitanon__sym_take(a, f, phoff, (uint64_t)phent * phnum, &ph, "program headers", err)) != JITANON_OK)
            return r;
        for (i = 0; i < phnum && f->nloads < JITANON__SYM_MAX_LOADS; i++) {
            jitanon__cur p = jitanon__cur_make(ph + i * phent, phent, phoff + i * phent, f->big);
            uint32_t type = jitanon__get32(&p);
            uint64_t off, vaddr, filesz, memsz;
            if (f->is64) {
                (void)jitanon__get32(&p);
                off = jitanon__get64(&p), vaddr = jitanon__get64(&p);
                (void)jitanon__get64(&p);
                filesz = jitanon__get64(&p), memsz = jitanon__get64(&p);
            } else {
                off = jitanon__get32(&p), vaddr = jitanon__get32(&p);
                (void)jitanon__get32(&p);
                filesz = jitanon__get32(&p), memsz = jitanon__get32(&p);
            }
            if (type != 1) continue; /* PT_LOAD */
            f->load_off[f->nloads] = off, f->load_addr[f->nloads] = vaddr;
            f->load_filesz[f->nloads] = filesz, f->load_memsz[f->nloads++] = memsz;
        }
        jitanon__free(a, ph, phent * phnum);
    }
    f->adjust = f->type == 2 || f->type == 1; /* ET_EXEC, ET_REL */
    if (!shoff || shent < (f->is64 ? 64u : 40u)) return JITANON_OK; /* no sections: no symbols */
    if (!shnum) { /* more than 0xff00 sections: the count is section 0's sh_size */
        uint8_t s0[64];
        if (rd(user, shoff, s0, shent < 64 ? shent : 64) != (shent < 64 ? shent : 64))
            return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, shoff, "section header 0 past the end of the file");
        shnum = (size_t)(f->is64 ? jitanon__rd64(s0 + 32, f->big) : jitanon__rd32(s0 + 20, f->big));
        if (shstrndx == 0xffff) shstrndx = jitanon__rd32(s0 + (f->is64 ? 40 : 24), f->big);
    }
    if (shnum > JITANON__SYM_MAX_SECTIONS)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, shoff, "%U sections", (uint64_t)shnum);
    bytes = (uint64_t)shent * shnum;
    if ((r = jitanon__sym_take(a, f, shoff, bytes, &sh, "section headers", err)) != JITANON_OK) return r;
    if (!(f->secs = (jitanon__sym_sec *)jitanon__malloc(a, shnum * sizeof *f->secs))) {
        jitanon__free(a, sh, (size_t)bytes);
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, shoff, "out of memory (section headers)");
    }
    f->nsecs = shnum;
    for (i = 0; i < shnum; i++) {
        jitanon__cur p = jitanon__cur_make(sh + i * shent, shent, shoff + i * shent, f->big);
        jitanon__sym_sec *s = &f->secs[i];
        s->name = jitanon__get32(&p), s->type = jitanon__get32(&p);
        if (f->is64) {
            (void)jitanon__get64(&p);
            s->addr = jitanon__get64(&p), s->off = jitanon__get64(&p), s->size = jitanon__get64(&p);
            s->link = jitanon__get32(&p);
            (void)jitanon__get32(&p), (void)jitanon__get64(&p);
            s->entsize = jitanon__get64(&p);
        } else {
            (void)jitanon__get32(&p);
            s->addr = jitanon__get32(&p), s->off = jitanon__get32(&p), s->size = jitanon__get32(&p);
            s->link = jitanon__get32(&p);
            (void)jitanon__get32(&p), (void)jitanon__get32(&p);
            s->entsize = jitanon__get32(&p);
        }
    }
    jitanon__free(a, sh, (size_t)bytes);
    /* names: a .shstrtab that cannot be read leaves every section nameless */
    if (shstrndx < shnum && f->secs[shstrndx].type != 8 /* SHT_NOBITS */ && f->secs[shstrndx].size <= (1u << 24)) {
        uint64_t sz = f->secs[shstrndx].size;
        if (jitanon__sym_take(a, f, f->secs[shstrndx].off, sz, &f->shstr, ".shstrtab", err) == JITANON_OK)
            f->shstr_size = (size_t)sz;
    }
    if ((f->symtab = jitanon__sym_sec_by_name(f, ".symtab")) && f->secs[f->symtab].type != 2) f->symtab = 0;
    if ((f->dynsym = jitanon__sym_sec_by_name(f, ".dynsym")) && f->secs[f->dynsym].type != 11) f->dynsym = 0;
    if (jitanon__sym_sec_by_name(f, ".gnu.prelink_undo")) f->adjust = 1;
    /* the build-id: .note.gnu.build-id, else any other note section */
    {
        size_t k, first = jitanon__sym_sec_by_name(f, ".note.gnu.build-id");
        for (k = 0; k <= f->nsecs && !f->build_id_size; k++) {
            size_t s = k == 0 ? first : k;
            uint8_t *p;
            if (!s || s >= f->nsecs || f->secs[s].type != 7 || f->secs[s].size > 65536 || (k && s == first)) continue;
            if (jitanon__sym_take(a, f, f->secs[s].off, f->secs[s].size, &p, "a note", err) != JITANON_OK) continue;
            jitanon__sym_notes(f, p, (size_t)f->secs[s].size);
            jitanon__free(a, p, (size_t)f->secs[s].size);
        }
    }
    /* .gnu_debuglink: a file name (no directory climbing), its padding and a CRC */
    {
        size_t s = jitanon__sym_sec_by_name(f, ".gnu_debuglink");
        uint8_t *p;
        if (s && f->secs[s].type != 8 && f->secs[s].size <= 4096 &&
            jitanon__sym_take(a, f, f->secs[s].off, f->secs[s].size, &p, ".gnu_debuglink", err) == JITANON_OK && p) {
            jitanon__cur d = jitanon__cur_make(p, (size_t)f->secs[s].size, f->secs[s].off, f->big);
            jitanon_str name;
            if (jitanon__take_cstr(&d, &name) && name.length && name.length < sizeof f->debuglink &&
                !strstr(name.data, "..")) {
                memcpy(f->debuglink, name.data, name.length);
                f->debuglink[name.length] = 0;
            }
            jitanon__free(a, p, (size_t)f->secs[s].size);
        }
    }
    jitanon__clear_error(err);
    return JITANON_OK;
}

/* One symbol table entry (ELF32 or ELF64) at the cursor. */
typedef struct jitanon__sym_raw {
    uint32_t name;
    uint8_t info, other;
    uint16_t shndx;
    uint64_t value, size;
} jitanon__sym_raw;

JITANON__PRIVATE void jitanon__sym_get(jitanon__cur *c, int is64, jitanon__sym_raw *s)
{
    s->name = jitanon__get32(c);
    if (is64) {
        s->info = *jitanon__take(c, 1), s->other = *jitanon__take(c, 1);
        s->shndx = jitanon__get16(c);
        s->value = jitanon__get64(c), s->size = jitanon__get64(c);
    } else {
        s->value = jitanon__get32(c), s->size = jitanon__get32(c);
        s->info = *jitanon__take(c, 1), s->other = *jitanon__take(c, 1);
        s->shndx = jitanon__get16(c);
    }
}

/* The PT_LOAD of f that holds address v (its memory size), or -1. */
JITANON__PRIVATE int jitanon__sym_load_of(const jitanon__sym_file *f, uint64_t v)
{
    size_t i;
    for (i = 0; i < f->nloads; i++)
        if (v >= f->load_addr[i] && v - f->load_addr[i] < f->load_memsz[i]) return (int)i;
    return -1;
}

JITANON__PRIVATE int jitanon__sym_push(const jitanon_allocator *a, jitanon__sym_table *t, uint64_t start, uint64_t size,
                                      const char *name, size_t len, uint8_t bind, uint8_t type, uint8_t flags)
{
    jitanon__sym_ent *e;
    if (len > UINT32_MAX || t->nseq == UINT32_MAX - 1 || !jitanon__grow(a, (void **)&t->ents, &t->cap, t->n + 1, sizeof *t->ents))
        return 0;
    e = &t->ents[t->n++];
    e->seq = t->nseq++;
    e->start = start;
    e->end = size > UINT64_MAX - start ? UINT64_MAX : start + size;
    e->name = name, e->len = (uint32_t)len;
    e->bind = bind, e->type = type, e->flags = flags, e->pad = 0;
    return 1;
}

/* The symbols of `syms` (its .symtab, else its .dynsym) into t, placed with the PT_LOADs of
   `rt` (the file that is mapped: the same file, or the one a debug file was split from). */
JITANON__PRIVATE jitanon_result jitanon__sym_read_syms(const jitanon_allocator *a, jitanon__sym_table *t,
                                                       const jitanon__sym_file *syms, const jitanon__sym_file *rt,
                                                       jitanon_error *err)
{
    size_t which = syms->symtab ? syms->symtab : syms->dynsym, ent = syms->is64 ? 24 : 16, i, count;
    const jitanon__sym_sec *s, *str;
    uint8_t *tab;
    jitanon_result r;
    if (!which) return JITANON_OK;
    s = &syms->secs[which];
    if (s->entsize < ent || s->link >= syms->nsecs || syms->secs[s->link].type != 3 /* SHT_STRTAB */)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, s->off, "symbol table with entries of %U bytes",
                             s->entsize);
    str = &syms->secs[s->link];
    if (str->size > UINT32_MAX) return JITANON__FAIL(err, JITANON_ERR_LIMIT, str->off, "string table of %U bytes", str->size);
    if ((r = jitanon__sym_take(a, syms, str->off, str->size, &t->strings, "string table", err)) != JITANON_OK) return r;
    t->strings_size = (size_t)str->size;
    count = (size_t)(s->size / s->entsize); /* bounded by the bytes read */
    if ((r = jitanon__sym_take(a, syms, s->off, (uint64_t)count * s->entsize, &tab, "symbol table", err)) != JITANON_OK)
        return r;
    for (i = 0; i < count; i++) {
        jitanon__cur c = jitanon__cur_make(tab + i * (size_t)s->entsize, (size_t)s->entsize, s->off + i * s->entsize,
                                           syms->big);
        jitanon__sym_raw y;
        jitanon_str name;
        jitanon__cur n;
        unsigned type, vis;
        int label;
        jitanon__sym_get(&c, syms->is64, &y);
        type = y.info & 15u, vis = y.other & 3u;
        label = type == 0 && vis != 1 && vis != 2; /* NOTYPE, not internal or hidden */
        if (!y.name || !y.shndx || y.shndx >= 0xff00u || y.shndx >= syms->nsecs) continue;
        if (type != 2 && type != 10 && type != 1 && !label) continue; /* FUNC, IFUNC, OBJECT */
        if (y.name >= t->strings_size) continue;
        n = jitanon__cur_make(t->strings + y.name, t->strings_size - y.name, str->off + y.name, 0);
        if (!jitanon__take_cstr(&n, &name) || !name.length) continue;
        /* ARM's mapping symbols mark code and data, they name nothing */
        if ((syms->machine == 40 || syms->machine == 183) && name.data[0] == '$' && name.length >= 2 &&
            strchr("adtx", name.data[1]) && (name.length == 2 || name.data[2] == '.'))
            continue;
        if (label) {
            jitanon_str sec = jitanon__sym_sec_name(syms, y.shndx);
            size_t k;
            int text = 0;
            for (k = 0; k + 4 <= sec.length && !text; k++) text = !memcmp(sec.data + k, "text", 4);
            if (!text) continue;
        }
        if (syms->machine == 40 && type == 2) y.value &= ~(uint64_t)1; /* Thumb's bit */
        if (syms->adjust && jitanon__sym_load_of(rt, y.value) < 0) continue;
        if (!jitanon__sym_push(a, t, y.value, y.size, name.data, name.length, (uint8_t)(y.info >> 4), (uint8_t)type, 0)) {
            jitanon__free(a, tab, (size_t)count * (size_t)s->entsize);
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, s->off, "out of memory (symbols)");
        }
    }
    jitanon__free(a, tab, (size_t)count * (size_t)s->entsize);
    return JITANON_OK;
}

/* name@plt for every slot of rt's PLT (its .rela.plt or .rel.plt against its .dynsym). */
JITANON__PRIVATE jitanon_result jitanon__sym_read_plt(const jitanon_allocator *a, jitanon__sym_table *t,
                                                      const jitanon__sym_file *rt, jitanon_error *err)
{
    size_t rel = jitanon__sym_sec_by_name(rt, ".rela.plt"), plt = jitanon__sym_sec_by_name(rt, ".plt"), sec, i, count,
           ent = rt->is64 ? 24 : 16;
    uint64_t at, step, head;
    uint8_t *rels = NULL, *dyn = NULL, *dstr = NULL;
    const jitanon__sym_sec *rs, *ds, *ss;
    jitanon_result r = JITANON_OK;
    int rela = 1;
    if (!rel) rel = jitanon__sym_sec_by_name(rt, ".rel.plt"), rela = 0;
    if (!rt->dynsym || !rel || !plt) return JITANON_OK;
    rs = &rt->secs[rel], ds = &rt->secs[rt->dynsym];
    if (rs->link != rt->dynsym || ds->entsize < ent || ds->link >= rt->nsecs || rs->entsize < (rela ? 3u : 2u) * (rt->is64 ? 8u : 4u))
        return JITANON_OK;
    ss = &rt->secs[ds->link];
    switch (rt->machine) {
    case 40: head = 20, step = 12; break;  /* ARM */
    case 183: head = 32, step = 16; break; /* AArch64 */
    default: head = step = rt->secs[plt].entsize; break;
    }
    sec = plt;
    /* x86 with IBT: the slots a call goes through are in .plt.sec, one per entry, no head */
    if ((rt->machine == 62 || rt->machine == 3) && (i = jitanon__sym_sec_by_name(rt, ".plt.sec")) != 0) {
        sec = i, head = 0;
        step = rt->secs[i].entsize ? rt->secs[i].entsize : 16;
    }
    if (!step) return JITANON_OK;
    count = (size_t)(rs->size / rs->entsize);
    if ((r = jitanon__sym_take(a, rt, rs->off, (uint64_t)count * rs->entsize, &rels, "PLT relocations", err)) != JITANON_OK ||
        (r = jitanon__sym_take(a, rt, ds->off, ds->size / ds->entsize * ds->entsize, &dyn, ".dynsym", err)) != JITANON_OK ||
        (r = jitanon__sym_take(a, rt, ss->off, ss->size, &dstr, ".dynstr", err)) != JITANON_OK)
        goto done;
    at = rt->secs[sec].addr + head;
    for (i = 0; i < count && r == JITANON_OK; i++, at += step) {
        jitanon__cur c = jitanon__cur_make(rels + i * (size_t)rs->entsize, (size_t)rs->entsize, rs->off + i * rs->entsize, rt->big);
        uint64_t info, k;
        jitanon_str name;
        const char *p;
        name.data = "", name.length = 0;
        if (rt->is64) (void)jitanon__get64(&c), info = jitanon__get64(&c), k = info >> 32;
        else (void)jitanon__get32(&c), info = jitanon__get32(&c), k = info >> 8;
        if (k < ds->size / ds->entsize) {
            jitanon__cur y = jitanon__cur_make(dyn + (size_t)k * (size_t)ds->entsize, (size_t)ds->entsize, 0, rt->big);
            jitanon__sym_raw s;
            jitanon__sym_get(&y, rt->is64, &s);
            if (s.name < ss->size) {
                jitanon__cur n = jitanon__cur_make(dstr + s.name, (size_t)ss->size - s.name, 0, 0);
                if (!jitanon__take_cstr(&n, &name)) name.data = "", name.length = 0;
            }
        }
        if (!(p = jitanon__sym_arena_put(a, &t->arena, name.data, name.length, "@plt", 4)) ||
            !jitanon__sym_push(a, t, at, step, p, name.length + 4, 1 /* GLOBAL */, 2 /* FUNC */, JITANON__SYM_PLT))
            r = JITANON__FAIL(err, JITANON_ERR_NOMEM, rs->off, "out of memory (PLT symbols)");
    }
done:
    jitanon__free(a, rels, (size_t)count * (size_t)rs->entsize);
    jitanon__free(a, dyn, (size_t)(ds->size / ds->entsize * ds->entsize));
    jitanon__free(a, dstr, (size_t)ss->size);
    return r;
}

JITANON__PRIVATE void jitanon__sym_settle(const jitanon_allocator *a, jitanon__sym_table *t, jitanon__sym_ent *e);

/* The name as perf prints it: demangled through the hook (once; kept in the arena). */
JITANON__PRIVATE jitanon_str jitanon__sym_name(const jitanon_allocator *a, jitanon__sym_table *t, jitanon__sym_ent *e)
{
    jitanon_str s;
    jitanon__sym_settle(a, t, e);
    if (t->demangle && !(e->flags & JITANON__SYM_DEMANGLED)) {
        char buf[512], base[512], *big = NULL;
        size_t blen = e->flags & JITANON__SYM_PLT ? e->len - 4 : e->len, n, cap = sizeof buf;
        const char *in = e->name;
        e->flags |= JITANON__SYM_DEMANGLED;
        if (e->flags & JITANON__SYM_PLT) { /* the symbol's name, without its @plt */
            if (blen >= sizeof base) goto keep;
            memcpy(base, e->name, blen);
            base[blen] = 0;
            in = base;
        }
        n = t->demangle(t->demangle_user, in, buf, cap);
        if (n >= cap && n < (1u << 20) && (big = (char *)jitanon__malloc(a, n + 1)) != NULL) {
            cap = n + 1;
            n = t->demangle(t->demangle_user, in, big, cap);
        }
        if (n && n < cap) {
            const char *sfx = e->flags & JITANON__SYM_PLT ? "@plt" : "";
            const char *p = jitanon__sym_arena_put(a, &t->arena, big ? big : buf, n, sfx, strlen(sfx));
            if (p) e->name = p, e->len = (uint32_t)(n + strlen(sfx));
        }
        if (big) jitanon__free(a, big, cap);
    }
keep:
    s.data = e->name;
    s.length = e->len;
    /* kallsyms: "name\t[module]" */
    if (t->kallsyms) {
        const char *tab = (const char *)memchr(e->name, '\t', e->len);
        if (tab) s.length = (size_t)(tab - e->name);
    }
    return s;
}

JITANON__PRIVATE size_t jitanon__sym_underscores(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && s[k] == '_') k++;
    return k;
}

/* perf's choice between two symbols at one address by their sizes and bindings: 1 keeps
   a, 0 keeps b, -1 when their names decide. */
JITANON__PRIVATE int jitanon__sym_keep_by_kind(const jitanon__sym_ent *x, const jitanon__sym_ent *y)
{
    int ax = x->end > x->start, by = y->end > y->start;
    if (ax != by) return ax;
    if ((x->bind == 2) != (y->bind == 2)) return y->bind == 2;       /* weak loses */
    if ((x->bind == 1) != (y->bind == 1)) return x->bind == 1;       /* global wins */
    return -1;
}

/* perf's choice between two symbols at one address: 1 keeps a, 0 keeps b. */
JITANON__PRIVATE int jitanon__sym_keep_first(const jitanon_allocator *a, jitanon__sym_table *t, jitanon__sym_ent *x,
                                            jitanon__sym_ent *y)
{
    int kind = jitanon__sym_keep_by_kind(x, y);
    jitanon_str nx, ny;
    size_t ux, uy;
    if (kind >= 0) return kind;
    nx = jitanon__sym_name(a, t, x);
    ny = jitanon__sym_name(a, t, y);
    if (t->kallsyms) nx.length = x->len, ny.length = y->len;         /* with their "\t[module]" */
    ux = jitanon__sym_underscores(nx.data, nx.length), uy = jitanon__sym_underscores(ny.data, ny.length);
    if (ux != uy) return ux < uy;
    if (nx.length != ny.length) return nx.length > ny.length;
    if ((nx.length >= 3 && !memcmp(nx.data, "SyS", 3)) || (nx.length >= 10 && !memcmp(nx.data, "compat_SyS", 10)))
        return 0;
    return 1;
}

/* Sorts n symbols by start, stably (the table's order at one address): a radix sort of
   (start, index) keys, 11 bits a pass, the passes over bits every start shares skipped
   (a file's addresses are below 2^32, the kernel's above 2^63: 3 passes of 6), then one
   permutation.  (jitanon__sort calls back for every comparison: a third of a cold node
   lookup's time on its 99,000 symbols.)  0 when the scratch memory cannot be had (the
   symbols are then unchanged). */
typedef struct jitanon__sym_key {
    uint64_t start;
    size_t at;
} jitanon__sym_key;

JITANON__PRIVATE int jitanon__sym_sort(const jitanon_allocator *a, jitanon__sym_ent *e, size_t n)
{
    jitanon__sym_key *k, *tmp, *sw;
    jitanon__sym_ent *copy;
    size_t i, kb, cb, count[2048];
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    unsigned shift;
    for (i = 1; i < n && e[i - 1].start <= e[i].start; i++) {}
    if (i >= n) return 1;
    if (!jitanon__mul_size(n, 2 * sizeof *k, &kb) || !jitanon__mul_size(n, sizeof *copy, &cb)) return 0;
    if (!(k = (jitanon__sym_key *)jitanon__malloc(a, kb))) return 0;
    if (!(copy = (jitanon__sym_ent *)jitanon__malloc(a, cb))) {
        jitanon__free(a, k, kb);
        return 0;
    }
    tmp = k + n;
    for (i = 0; i < n; i++) {
        k[i].start = e[i].start, k[i].at = i;
        all_or |= e[i].start, all_and &= e[i].start;
    }
    for (shift = 0; shift < 64; shift += 11) {
        size_t sum = 0, c;
        if (!(((all_or ^ all_and) >> shift) & 2047)) continue; /* every start has these bits */
        memset(count, 0, sizeof count);
        for (i = 0; i < n; i++) count[(k[i].start >> shift) & 2047]++;
        for (i = 0; i < 2048; i++) c = count[i], count[i] = sum, sum += c;
        for (i = 0; i < n; i++) tmp[count[(k[i].start >> shift) & 2047]++] = k[i];
        sw = k, k = tmp, tmp = sw;
    }
    memcpy(copy, e, cb);
    for (i = 0; i < n; i++) e[i] = copy[k[i].at];
    jitanon__free(a, copy, cb);
    jitanon__free(a, k < tmp ? k : tmp, kb); /* (the allocation starts at the lower half) */
    return 1;
}

JITANON__PRIVATE int jitanon__sym_module(const jitanon__sym_ent *e)
{
    return memchr(e->name, '[', e->len) != NULL;
}

/* Symbols of size 0 end where the next begins (the last: a page after its own page; in
   kallsyms also where the kernel's symbols meet a module's). */
JITANON__PRIVATE void jitanon__sym_ends(jitanon__sym_table *t, jitanon__sym_ent *e, size_t k)
{
    size_t i;
    for (i = 0; i + 1 < k; i++) {
        if (e[i].end != e[i].start) continue;
        if (t->kallsyms && jitanon__sym_module(&e[i]) != jitanon__sym_module(&e[i + 1]))
            e[i].end = e[i].end > UINT64_MAX - 8192 ? UINT64_MAX : (e[i].end + 4096 + 4095) & ~(uint64_t)4095;
        else e[i].end = e[i + 1].start;
    }
    if (k && e[k - 1].end == e[k - 1].start)
        e[k - 1].end = e[k - 1].start > UINT64_MAX - 8192 ? UINT64_MAX : ((e[k - 1].start + 4095) & ~(uint64_t)4095) + 4096;
}

/* Keeps the n aliases at e's address (sorted, the table's order) to be chosen between when
   a lookup first needs them (jitanon__sym_settle), with their places in the gone list.  0
   when the memory cannot be had (they are chosen now). */
JITANON__PRIVATE int jitanon__sym_defer(const jitanon_allocator *a, jitanon__sym_table *t, const jitanon__sym_ent *e,
                                       size_t n)
{
    jitanon__sym_tie *g;
    size_t i;
    if (!jitanon__grow(a, (void **)&t->tie, &t->tie_cap, t->ntie + 1, sizeof *t->tie) ||
        !jitanon__grow(a, (void **)&t->ties, &t->ties_cap, t->nties + n, sizeof *t->ties))
        return 0;
    g = &t->tie[t->ntie++];
    g->start = e->start, g->zend = e->start, g->first = t->nties, g->n = n, g->gone = SIZE_MAX;
    memcpy(t->ties + t->nties, e, n * sizeof *e);
    t->nties += n;
    if (!t->rb_failed) { /* the losers' places, in perf's order of removal; their seqs come later */
        if (jitanon__grow(a, (void **)&t->gone, &t->gone_cap, t->ngone + n - 1, sizeof *t->gone)) {
            g->gone = t->ngone;
            for (i = 0; i + 1 < n; i++, t->ngone++)
                t->gone[t->ngone].start = e->start, t->gone[t->ngone].seq = UINT32_MAX, t->gone[t->ngone].pad = 0;
        } else t->rb_failed = 1;
    }
    return 1;
}

/* Chooses between the aliases at e's address now when the choice was left for later
   (JITANON__SYM_TIE), as jitanon__sym_fixup would have: e becomes the one kept. */
JITANON__PRIVATE void jitanon__sym_settle(const jitanon_allocator *a, jitanon__sym_table *t, jitanon__sym_ent *e)
{
    size_t lo = 0, hi = t->ntie, i, lost = 0;
    jitanon__sym_tie *g;
    jitanon__sym_ent *w;
    if (!(e->flags & JITANON__SYM_TIE)) return;
    e->flags = (uint8_t)(e->flags & ~(JITANON__SYM_TIE | JITANON__SYM_UNEVEN));
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->tie[mid].start < e->start) lo = mid + 1;
        else hi = mid;
    }
    if (lo == t->ntie || t->tie[lo].start != e->start) return; /* (cannot be) */
    g = &t->tie[lo];
    w = &t->ties[g->first];
    for (i = 1; i < g->n; i++) {
        jitanon__sym_ent *m = &t->ties[g->first + i];
        int first = jitanon__sym_keep_first(a, t, w, m);
        if (g->gone != SIZE_MAX) t->gone[g->gone + lost++].seq = (first ? m : w)->seq;
        if (!first) w = m;
    }
    *e = *w;
    if (e->end == e->start) e->end = g->zend;
}

/* Sorts the symbols [from, n) by address (stably: the table's order at one address),
   keeps one of each address's aliases and ends the symbols of size 0 at the next.  perf
   6.1 chooses the aliases of an ELF file first, then ends its symbols; kallsyms' the
   other way round, so of kallsyms' aliases (all of size 0) the last at an address, the
   only one that reaches the next, wins (__x64_sys_gettid over __ia32_sys_gettid).  With a
   demangler, aliases that only their names choose between are chosen between when a
   lookup needs them (jitanon__sym_defer): demangling them all was most of a node pass's
   names. */
JITANON__PRIVATE int jitanon__sym_fixup(const jitanon_allocator *a, jitanon__sym_table *t, size_t from)
{
    jitanon__sym_ent *e;
    size_t n = t->n - from, i, j, m, k = 0, tie0 = t->ntie;
    int later = t->demangle && !t->kallsyms;
    if (!n) return 1;
    e = t->ents + from; /* (not before: no symbols, no array) */
    if (!jitanon__sym_sort(a, e, n)) return 0;
    if (t->kallsyms) jitanon__sym_ends(t, e, n);
    for (i = 0; i < n; i = j, k++) {
        size_t w = i;
        int names = 0;
        for (j = i + 1; j < n && e[j].start == e[i].start; j++) {
            int kind = later && !names ? jitanon__sym_keep_by_kind(&e[w], &e[j]) : 1;
            if (kind < 0) names = 1;
            else if (!kind) w = j;
        }
        if (names && jitanon__sym_defer(a, t, e + i, j - i)) {
            int uneven = 0;
            for (m = i + 1; m < j; m++) uneven |= e[m].end != e[i].end;
            t->tie[t->ntie - 1].zend = k; /* (its place until the ends are known) */
            e[k] = e[i];
            /* the end every alias has, else one of no size's (the chosen one's if it has none) */
            if (uneven) e[k].end = e[k].start;
            e[k].flags = (uint8_t)(e[k].flags | JITANON__SYM_TIE | (uneven ? JITANON__SYM_UNEVEN : 0));
            continue;
        }
        e[k] = e[i];
        for (m = i + 1; m < j; m++) {
            int first = jitanon__sym_keep_first(a, t, &e[k], &e[m]);
            const jitanon__sym_ent *lost = first ? &e[m] : &e[k];
            if (!t->kallsyms && !t->rb_failed) { /* (kallsyms' symbols do not nest: no tree) */
                if (jitanon__grow(a, (void **)&t->gone, &t->gone_cap, t->ngone + 1, sizeof *t->gone)) {
                    t->gone[t->ngone].start = lost->start;
                    t->gone[t->ngone].seq = lost->seq, t->gone[t->ngone++].pad = 0;
                } else t->rb_failed = 1;
            }
            if (!first) e[k] = e[m];
        }
    }
    t->n = from + k;
    if (!t->kallsyms) jitanon__sym_ends(t, e, k);
    for (i = tie0; i < t->ntie; i++) t->tie[i].zend = e[t->tie[i].zend].end;
    return 1;
}

/* Sorts e[0, n) by start, stably, where e[0, m) is sorted already: a PLT's slots, in
   address order, merged in from the back (sorting the whole table again was a tenth of
   reading node's symbols); jitanon__sym_sort when they are not in order.  0 when the
   scratch memory cannot be had. */
JITANON__PRIVATE int jitanon__sym_merge(const jitanon_allocator *a, jitanon__sym_ent *e, size_t m, size_t n)
{
    jitanon__sym_ent *run;
    size_t i, j, out;
    for (i = m + 1; i < n && e[i - 1].start <= e[i].start; i++) {}
    if (i < n) return jitanon__sym_sort(a, e, n);
    if (!(run = (jitanon__sym_ent *)jitanon__malloc(a, (n - m) * sizeof *run))) return 0;
    memcpy(run, e + m, (n - m) * sizeof *run);
    /* from the back: at one start the table's symbols stay before the slots */
    for (i = m, j = n - m, out = n; j;)
        e[--out] = i && e[i - 1].start > run[j - 1].start ? e[--i] : run[--j];
    jitanon__free(a, run, (n - m) * sizeof *run);
    return 1;
}

/* The table of a file: the symbols of `syms` (a debug file, or rt itself), the PLT of
   `rt` (the file that is mapped; NULL: syms), placed through rt's PT_LOADs. */
JITANON__PRIVATE jitanon_result jitanon__sym_build(const jitanon_allocator *a, jitanon__sym_table *t,
                                                   const jitanon__sym_file *syms, const jitanon__sym_file *rt,
                                                   jitanon_error *err)
{
    jitanon_result r;
    size_t i, nsyms;
    if (!rt) rt = syms;
    for (i = 0; i < rt->nloads; i++) {
        t->load_off[i] = rt->load_off[i], t->load_addr[i] = rt->load_addr[i], t->load_size[i] = rt->load_filesz[i];
    }
    t->nloads = rt->nloads;
    if ((r = jitanon__sym_read_syms(a, t, syms, rt, err)) != JITANON_OK) return r;
    if (!jitanon__sym_fixup(a, t, 0)) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "out of memory (sorting symbols)");
    nsyms = t->n;
    t->nseq_syms = t->nseq;
    if ((r = jitanon__sym_read_plt(a, t, rt, err)) != JITANON_OK) {
        t->n = nsyms, t->nseq = t->nseq_syms; /* without the PLT, still in order */
        return r;
    }
    /* the slots are added after the choice of aliases and ends (perf's order): merged in */
    if (t->n > nsyms && !jitanon__sym_merge(a, t->ents, nsyms, t->n))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "out of memory (sorting symbols)");
    return JITANON_OK;
}

/* kallsyms' text (`text`, size bytes, owned by t from here on): its T, W, D and B symbols
   (either case), module ones with their "\t[module]". */
JITANON__PRIVATE jitanon_result jitanon__sym_kallsyms(const jitanon_allocator *a, jitanon__sym_table *t, uint8_t *text,
                                                      size_t size, jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(text, size, 0, 0);
    t->strings = text, t->strings_size = size, t->kallsyms = 1;
    /* kallsyms' symbols overlap only where the kernel's last one before a module's reaches
       a page on: no tree (the innermost is taken there) */
    t->rb_failed = 1;
    while (c.left) {
        const uint8_t *nl = (const uint8_t *)memchr(c.p, '\n', c.left);
        size_t len = nl ? (size_t)(nl - c.p) : c.left, k = 0;
        uint8_t *line = (uint8_t *)(uintptr_t)c.p;
        uint64_t addr = 0;
        int digits = 0;
        char type;
        (void)jitanon__take(&c, nl ? len + 1 : len);
        while (k < len && digits <= 16) {
            uint8_t ch = line[k];
            unsigned v = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0') : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10u
                       : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10u : 16u;
            if (v == 16) break;
            addr = addr << 4 | v, k++, digits++;
        }
        if (!digits || digits > 16 || k + 3 > len || line[k] != ' ' || line[k + 2] != ' ') continue;
        type = (char)(line[k + 1] & ~0x20);
        if (type != 'T' && type != 'W' && type != 'D' && type != 'B') continue;
        if (k + 3 == len || line[k + 3] == '$') continue;
        if (nl) *(uint8_t *)(uintptr_t)nl = 0; /* names end at the line's end */
        else if (len) continue; /* a last line without its newline has no room for the NUL: dropped */
        if (!jitanon__sym_push(a, t, addr, 0, (const char *)line + k + 3, len - k - 3, type == 'W' ? 2 : 1, 2, 0))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, (uint64_t)(line - text), "out of memory (kallsyms)");
    }
    if (!jitanon__sym_fixup(a, t, 0)) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "out of memory (sorting kallsyms)");
    return JITANON_OK;
}

/* perf keeps a file's symbols in a red-black tree keyed by start address and looks an
   address up by walking down from the root: where symbols nest (a label inside a
   function, extended to the next symbol), which of them it finds depends on the tree's
   shape.  The tree is rebuilt here, only for a lookup that depends on it, from the same
   operations: the symbols inserted in the table's order (equal starts to the right), the
   aliases removed in the order perf removes them, the PLT slots inserted. */

/* perf's tree of t's symbols (jitanon__rb); NULL when memory runs out. */
JITANON__PRIVATE jitanon__rb *jitanon__sym_rb_build(const jitanon_allocator *a, jitanon__sym_table *t)
{
    jitanon__rb *rb;
    size_t n = t->nseq, i;
    if (t->rb || t->rb_failed) return t->rb;
    for (i = 0; t->ntie && i < t->n; i++) jitanon__sym_settle(a, t, &t->ents[i]); /* the tree holds the ones kept */
    if (!(rb = jitanon__rb_alloc(a, n))) {
        t->rb_failed = 1;
        return NULL;
    }
    for (i = 0; i < n; i++) rb->ent[i] = JITANON__RB_NIL, rb->key[i] = 0;
    for (i = 0; i < t->n; i++)
        if (t->ents[i].seq < n) rb->ent[t->ents[i].seq] = (uint32_t)i, rb->key[t->ents[i].seq] = t->ents[i].start;
    for (i = 0; i < t->ngone; i++)
        if (t->gone[i].seq < n) rb->key[t->gone[i].seq] = t->gone[i].start;
    for (i = 0; i < t->nseq_syms && i < n; i++) jitanon__rb_insert(rb, (uint32_t)i);
    for (i = 0; i < t->ngone; i++)
        if (t->gone[i].seq < t->nseq_syms) jitanon__rb_erase(rb, t->gone[i].seq);
    for (i = t->nseq_syms; i < n; i++) jitanon__rb_insert(rb, (uint32_t)i);
    return t->rb = rb;
}

JITANON__PRIVATE jitanon__sym_ent *jitanon__sym_find_at(const jitanon_allocator *a, jitanon__sym_table *t, uint64_t addr);

/* The symbol perf finds at address `addr`, or NULL, remembered by address (a frame's
   return address comes again in most samples through it). */
JITANON__PRIVATE jitanon__sym_ent *jitanon__sym_find(const jitanon_allocator *a, jitanon__sym_table *t, uint64_t addr)
{
    jitanon__sym_seen *s;
    jitanon__sym_ent *e;
    if (!t->seen && (t->seen = (jitanon__sym_seen *)jitanon__malloc(a, JITANON__SYM_SEEN * sizeof *t->seen)) != NULL)
        memset(t->seen, 0, JITANON__SYM_SEEN * sizeof *t->seen);
    if (!t->seen) return jitanon__sym_find_at(a, t, addr);
    s = &t->seen[(size_t)((addr * 0x9e3779b97f4a7c15ull) >> 54) & (JITANON__SYM_SEEN - 1)];
    if (s->ent && s->addr == addr) return s->ent == UINT32_MAX ? NULL : &t->ents[s->ent - 1];
    e = jitanon__sym_find_at(a, t, addr);
    s->addr = addr;
    s->ent = e && (size_t)(e - t->ents) < UINT32_MAX - 1 ? (uint32_t)(e - t->ents) + 1 : UINT32_MAX;
    if (e && s->ent == UINT32_MAX) s->ent = 0; /* (too far to remember) */
    return e;
}

/* The symbol perf finds at address `addr`, or NULL.  Where one symbol holds it and none
   nests, the sorted array answers; else perf's walk down its tree. */
JITANON__PRIVATE jitanon__sym_ent *jitanon__sym_find_at(const jitanon_allocator *a, jitanon__sym_table *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n, k, found = SIZE_MAX, holders = 0;
    jitanon__rb *rb;
    uint32_t x;
    while (lo < hi) { /* the first symbol starting above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->ents[mid].start <= addr) lo = mid + 1;
        else hi = mid;
    }
    for (k = 0; k < 8 && lo > k; k++) { /* (symbols nested deeper than 8 are not looked for) */
        if (t->ents[lo - 1 - k].flags & JITANON__SYM_UNEVEN) jitanon__sym_settle(a, t, &t->ents[lo - 1 - k]);
        if (addr < t->ents[lo - 1 - k].end || (addr == t->ents[lo - 1 - k].start && addr == t->ents[lo - 1 - k].end)) {
            if (found == SIZE_MAX) found = lo - 1 - k;
            holders++;
        }
    }
    if (found == lo - 1 && holders == 1) return &t->ents[found];
    if (found == SIZE_MAX || !(rb = jitanon__sym_rb_build(a, t))) return found == SIZE_MAX ? NULL : &t->ents[found];
    for (x = rb->root; x != JITANON__RB_NIL;) {
        const jitanon__sym_ent *e = rb->ent[x] < t->n ? &t->ents[rb->ent[x]] : NULL;
        if (!e) return NULL; /* (a node of no symbol: cannot be) */
        if (addr < e->start) x = rb->l[x];
        else if (addr > e->end || (addr == e->end && addr != e->start)) x = rb->r[x];
        else return &t->ents[rb->ent[x]];
    }
    return NULL;
}

/* Offset `off` of the file as an address of it (through its PT_LOAD; else as it is). */
JITANON__PRIVATE uint64_t jitanon__sym_addr_of(const jitanon__sym_table *t, uint64_t off)
{
    size_t i;
    for (i = 0; i < t->nloads; i++)
        if (off >= t->load_off[i] && off - t->load_off[i] < t->load_size[i]) return off - t->load_off[i] + t->load_addr[i];
    return off;
}

/* A memory image as a jitanon__sym_read_fn (tests, the fuzzer). */
typedef struct jitanon__sym_mem {
    const uint8_t *p;
    size_t n;
} jitanon__sym_mem;

JITANON__PRIVATE size_t jitanon__sym_mem_read(void *user, uint64_t off, void *dst, size_t size)
{
    const jitanon__sym_mem *m = (const jitanon__sym_mem *)user;
    if (off >= m->n) return 0;
    if (size > m->n - off) size = (size_t)(m->n - off);
    memcpy(dst, m->p + off, size);
    return size;
}

/* -- [inject] Injection -------------------------------------------------------------------- */

/* The numbers in a marker's basename, in the forms runtimes write (see
   jitanon_jitdump_is_marker): how many there are (1 or 2; 0: not a marker name), the
   process's last.  Nothing else: an untrusted recording names the files we open. */
JITANON__PRIVATE unsigned jitanon__marker_numbers(const char *path, size_t len, uint32_t num[2])
{
    size_t base = len, i, end;
    unsigned n = 0;
    while (base > 0 && path[base - 1] != '/') base--;
    path += base;
    len -= base;
    if (len < 5 || memcmp(path, "jit-", 4) != 0) return 0;
    if (len >= 10 && memcmp(path + len - 5, ".dump", 5) == 0) {
        end = len - 5;
    } else { /* JavaScriptCore's mkstemp name: jit-<tid>-<pid>-XXXXXX, no suffix */
        if (len < 4 + 3 + 1 + 6 || path[len - 7] != '-') return 0;
        for (i = len - 6; i < len; i++)
            if (!((path[i] >= '0' && path[i] <= '9') || (path[i] >= 'a' && path[i] <= 'z') ||
                  (path[i] >= 'A' && path[i] <= 'Z')))
                return 0;
        end = len - 7;
    }
    for (i = 4;;) { /* <digits> or <digits>-<digits> */
        uint64_t v = 0;
        size_t from = i;
        while (i < end && path[i] >= '0' && path[i] <= '9') {
            v = v * 10 + (uint64_t)(path[i++] - '0');
            if (v > UINT32_MAX) return 0;
        }
        if (i == from || n == 2) return 0;
        num[n++] = (uint32_t)v;
        if (i == end) break;
        if (path[i++] != '-') return 0;
    }
    if (end != len - 5 && n != 2) return 0; /* the mkstemp form carries tid and pid */
    return n;
}

JITANON_API int jitanon_jitdump_is_marker(const char *path, size_t len, uint32_t *pid)
{
    uint32_t num[2];
    unsigned n = jitanon__marker_numbers(path, len, num);
    if (n && pid) *pid = num[n - 1];
    return n != 0;
}

/* The injector is a pipeline of four stages, each with its own state:
     read    (jitanon__inj_buf)    buffers one round of input records;
     decide  (jitanon__inj_maps, jitanon__inj_jit) replays them in time order against
             perf's address maps and the jit events of the dumps that markers named;
     emit    (jitanon__elfout)     turns each dump's functions into ELF files, in one of
             several layouts behind one interface;
     write   (jitanon__inj_out)    writes the round in file order with the synthesized
             and trimmed mmaps. */

/* -- the injector's records and stages ---------------------------------------------------- */

/* One jitted function known to the injector: where its code lives in which ELF file. */
typedef struct jitanon__inj_eh {
    const uint8_t *eh;
    size_t size;
    uint64_t addr;
} jitanon__inj_eh;

typedef struct jitanon__inj_func {
    uint32_t pid, tid;      /* of the synthesized MMAP2s (the marker's process) */
    uint64_t code_index, pgoff, code_addr;
    uint64_t mapped_size;   /* unwind data the runtime keeps mapped after the code */
    size_t path;            /* offset of the ELF path in the path pool */
    /* its DEBUG_INFO's entries in a loaded dump (what on_sample's frames read lines
       from); NULL for a streamed dump's, or none */
    const uint8_t *dbg;
    size_t dbg_size;
    uint64_t dbg_nr;
    size_t dbg_run;         /* 1 + its lines' run in jitanon__inj_sym.lines; 0: none built yet */
    jitanon_str name;       /* a view into a loaded dump (which lives as long as the
                               injector); not kept for a streamed one */
    int failed;             /* its file could not be written (told late by writer threads) */
    int slotted;            /* region layout, file mode: its file chosen (jitanon__eo_region_slot) */
    int claimed;            /* ... and mapped ahead of its load, still in its process's claims */
    uint64_t claim_len;     /* the claim's length (what its load maps: code and kept tail) */
    size_t dump;            /* its dump in jitanon__inj_jit.dumps (followed dumps interleave) */
    size_t region;          /* its file in jitanon__inj_jit.regions, or SIZE_MAX */
} jitanon__inj_func;

/* A region file (JITANON_ELF_PER_REGION): its code sits at file offset = address - base. */
typedef struct jitanon__inj_region {
    uint64_t base;          /* B: file offset = address - B */
    uint64_t key;           /* where its pgoff-0 base is mapped (JITANON__REGION_KEY, or B) */
    size_t path;            /* in the path pool */
    size_t dump;            /* in jitanon__inj_jit.dumps */
    size_t next;            /* file mode: the file at the same B for code over sampled code, or SIZE_MAX */
} jitanon__inj_region;

/* What a sample reads and writes of its function, apart (jitanon__inj_jit.hot, same
   index): a sample lands in any of tens of thousands of functions, and this keeps that
   touch to one small entry instead of a cache miss on the whole record. */
typedef struct jitanon__inj_hot {
    uint64_t late_until;    /* late NAME: the time of its LOAD when it was mapped earlier, else 0 */
    int hit;                /* JITANON_ELF_FILES_SAMPLED: a sample resolved into it */
} jitanon__inj_hot;

/* A CODE_LOAD or CODE_MOVE, in perf time.  A late-NAME candidate is due at the start of
   the window it may claim (`time`) and keeps its LOAD's own time in `load_time`. */
typedef struct jitanon__inj_event {
    uint64_t time, seq;
    uint64_t start, size;
    size_t func;
    int is_move;
    int late;
    uint64_t load_time;
} jitanon__inj_event;

/* What the injector needs to know of a dump before walking it: what a load tells, and
   what a scan of a streamed dump tells without keeping its bytes. */
typedef struct jitanon__inj_summary {
    jitanon_jitdump_header header;
    uint64_t loads;           /* CODE_LOAD records */
    uint64_t records;         /* records of the valid prefix */
    jitanon_error tail_error; /* a tail cut short or damaged (type JITANON_OK when none) */
    uint64_t valid_size, size; /* bytes of the valid prefix, of the file */
    uint32_t line_bias;       /* opts.elf.line_bias, AUTO resolved over the whole dump */
} jitanon__inj_summary;

/* A usable jitdump: loaded whole, or (per-function output with the default file I/O)
   only summarised and then read again as a stream, so memory does not hold its code. */
typedef struct jitanon__inj_dump {
    jitanon_jitdump *dump;  /* NULL when streamed from `path` */
    jitanon__inj_summary sum;
    size_t path;            /* in the path pool */
    char *dir;              /* where its ELF files go */
    size_t dir_size;
    uint32_t pid, tid;      /* the marker's */
    unsigned generation;    /* earlier dumps of the same process */
    jitanon__inj_event *events;
    size_t count, cap, next;
    size_t first_func, nfuncs; /* its functions in jitanon__inj_jit.funcs, in dump order */
    uint64_t text_base;     /* pgoff of the code in a per-function file */
    uint64_t regions;       /* region files named so far (jitted-<pid>-r<N>.so) */
    size_t fresh_from, fresh_to; /* region layout, file mode: its fresh places in jitanon__eo_region.fresh */
    uint64_t marker_time;   /* nothing of it is mapped before its marker */
    uint64_t last_time;     /* perf time of its latest record (read so far, when followed) */
    /* samples in its process's anonymous memory after last_time that no function named,
       in pages where no sample went unnamed before (jitanon__inj_unnamed), the first and
       the last one's time; `seen`: page -> 1, pages with unnamed samples up to last_time
       (of every JITANON__INJ_LEARN_EVERY-th sample: `learn` counts them) */
    uint64_t after, after_first, after_last, learn;
    jitanon__hmap seen;
    jitanon__hmap uses;     /* per-function files: code_index -> LOADs of it named so far */
    struct jitanon__inj_follow *follow; /* a live pipe's dump still being read, else NULL */
    uint64_t read_until;    /* live: perf time of the latest record read from it */
    int complete;           /* live: its process exited and it was read to its end */
} jitanon__inj_dump;

/* What happens to a buffered input record. */
enum { JITANON__INJ_PASS = 0, JITANON__INJ_DROP = 1, JITANON__INJ_PIECES = 2 };

/* A buffered input record, with the few decoded fields the decisions need (the raw
   bytes sit in the round buffer; names are kept as offsets into them). */
typedef struct jitanon__inj_rec { /* a new field: give it its zero in jitanon__inj_buffer */
    size_t off, size;       /* raw bytes in the round buffer */
    uint64_t time, offset;  /* perf time; byte offset in the input */
    uint32_t type, action, misc;
    uint32_t pid, tid, ppid, cpu;
    uint64_t start, len, pgoff;
    size_t name_off, name_len; /* mmap file name, relative to the record */
    size_t chain_off, chain_nr; /* a sample's callchain, relative to the record */
    size_t first_piece, pieces;
    size_t stub;            /* perf_map ELF: 1 + the stub its pieces name; 0 = none */
    size_t attr;            /* a sample's attr (index into the reader's) */
    uint32_t marker_read;   /* live: a marker read when its round came (jitanon__inj_hold_markers) */
    uint32_t decided;       /* decided, not yet written (a FINISHED_ROUND: from the start) */
} jitanon__inj_rec;

/* What makes two mmaps the same mapping for perf: the name and pgoff - start. */
typedef struct jitanon__inj_ident {
    size_t name_off, name_len;
    uint64_t delta;
} jitanon__inj_ident;

typedef struct jitanon__inj_synth {
    uint64_t time, seq, start, size;
    size_t func;
    /* a region function: its MMAP2 framed by its file's base (jitanon__inj_emit_framed),
       and what the base hides then (a mapping's identity, or SIZE_MAX: //anon) */
    int frame;
    size_t restore;
    int take_back; /* not the function: what the engine has at its range (`restore`), over its claim */
} jitanon__inj_synth;

/* A round held back: its records end before recs[end]; `at` is the clock when it was
   read. */
typedef struct jitanon__inj_held {
    size_t end;
    uint64_t at;
    uint64_t limit; /* what perf delivers at its FINISHED_ROUND (jitanon__inj_buf.flush_at) */
} jitanon__inj_held;

/* Read: one round (the records between two FINISHED_ROUNDs) and what was decided for
   it, all dropped once it is written. */
typedef struct jitanon__inj_buf {
    jitanon_membuf bytes;
    jitanon__inj_rec *recs;
    size_t nrecs, recs_cap;
    jitanon_trim_piece *pieces; /* what trimmed mmaps become */
    size_t npieces, pieces_cap;
    jitanon__inj_synth *synth;  /* MMAP2s of jit events that came due */
    size_t nsynth, synth_cap;
    uint32_t *order;            /* sort permutation, plus as much scratch */
    size_t order_cap;
    uint64_t last_time;         /* records without a time take their neighbour's */
    /* perf's round sorting (its ordered events): at a FINISHED_ROUND it delivers, in time
       order, what it holds up to the newest time of the rounds before that one, and holds
       the newer rest back to be merged with the next round.  One CPU's next round often
       starts before another's last one ended, so deciding each round on its own put some
       samples in another order than perf's (2 of 6 node recordings on 2 CPUs), and let an
       mmap of the next round come after newer samples.  So records are decided as perf
       delivers them, and written in file order as far as they are decided: what follows
       the first record left for the next round waits, decided, with its trimmed pieces
       and the synthesized MMAP2s not yet placed.  `flush_at`, `newest`: the next
       FINISHED_ROUND's limit, and the newest time read. */
    uint64_t flush_at, newest;
    jitanon_trim_piece *pieces2; /* scratch: the waiting records' pieces, moved to the front */
    size_t pieces2_cap;
    jitanon__inj_synth *synth2;  /* scratch: the MMAP2s not placed yet, in time order */
    size_t synth2_cap;
    /* Live pipes: whole rounds held back until their dumps reach them (jitanon__inj_hold),
       oldest first; `recs` and `bytes` hold them, then the round being read. */
    struct jitanon__inj_held *held;
    size_t nheld, held_cap;
    size_t exits_seen;          /* records before this were looked at for EXITs */
} jitanon__inj_buf;

/* Decide, mmaps: perf's address maps, interned mapping identities. */
typedef struct jitanon__inj_maps {
    jitanon_trim *trim;         /* NULL when nothing needs the maps */
    jitanon__inj_ident *idents; /* index = the map_id given to the engine */
    size_t nidents, idents_cap;
    jitanon__hmap index;        /* hash of (name, pgoff - start) -> ident */
    jitanon_membuf names;
    uint32_t exited[64];        /* processes whose main thread exited, oldest first (a ring) */
    size_t exited_head, nexited;
} jitanon__inj_maps;

/* A DEBUG_INFO waiting for its LOAD.  A streamed dump's are copies of the raw bytes at
   `off` in jitanon__inj_wait.debug (`rec` views into them, read again when it moves). */
typedef struct jitanon__inj_dbg {
    jitanon_jitdump_record rec;
    size_t off;
    int recent; /* read since the previous LOAD */
} jitanon__inj_dbg;

/* What waits for a LOAD while a dump is walked (one for the injector's walks, one per
   followed dump: its walk goes on at the next read): the DEBUG_INFO no LOAD took yet, and
   a streamed dump's copies of them and of the UNWINDING_INFO (a streamed record lasts
   until the next read). */
typedef struct jitanon__inj_wait {
    jitanon_membuf debug, unwind; /* copies of streamed records */
    jitanon__inj_dbg *dbg;        /* DEBUG_INFO waiting for their LOAD, oldest first */
    size_t ndbg, dbg_cap;
    int count;                    /* this walk counts those no LOAD takes (a dump's first) */
} jitanon__inj_wait;

/* Decide, jit: the dumps markers named, their functions and pending events. */
typedef struct jitanon__inj_jit {
    jitanon__inj_dump *dumps;
    size_t ndumps, dumps_cap;
    jitanon__inj_func *funcs;
    size_t nfuncs, funcs_cap;
    jitanon__inj_hot *hot;     /* one a function */
    size_t hot_cap;
    /* with on_sample, one a function: its UNWINDING_INFO's .eh_frame in a loaded dump and
       where its runtime put it (what unwound frames step with; NULL: none).  Apart from
       funcs, which only symbolizers that unwind need */
    jitanon__inj_eh *ehs;
    size_t ehs_cap;
    jitanon__inj_region *regions; /* region files, in the order written */
    size_t nregions, regions_cap;
    /* pid -> 1 + the region whose base hotspot's parser holds as the process's last one
       (0: another file was mapped since), in time order as it registers mappings */
    jitanon__hmap region_last;
    jitanon_membuf paths;      /* NUL-terminated ELF and dump paths */
    jitanon__hmap pids;        /* pid -> usable dumps of it so far */
    jitanon__hmap latest;      /* live pipes: pid -> index of its latest usable dump */
    jitanon__hmap mntns;       /* pid -> its mount namespace's inode (NAMESPACES records) */
    jitanon__inj_wait wait;    /* of jitanon__inj_walk */
    uint32_t machine;          /* the recording's e_machine (HEADER_ARCH, else the host's); 0 unknown */
    int machine_asked;         /* file mode: HEADER_ARCH looked up */
    jitanon_jitdump_opts dump_opts; /* the caller's, without a record table */
    jitanon_perf_time_conv time_conv;
    int have_time_conv;
    uint32_t marker_cpu;
    uint64_t seq;
    /* late NAME: candidates whose range was not yet inside an anonymous mapping when their
       window opened, sorted by (load_time, seq); each is applied when such a mapping
       appears over it, or at its load. */
    int late;
    uint64_t late_window;
    uint64_t late_horizon; /* the latest late_until of any function: later samples need no look */
    uint64_t due; /* jitanon__inj_apply_until applies nothing before this time (0: ask it) */
    uint64_t code_lo, code_hi; /* every jitted range ever mapped lies in [code_lo, code_hi] */
    jitanon__inj_event *waiting; /* [whead, nwaiting) */
    size_t whead, nwaiting, waiting_cap;
    /* late NAME: candidates mapped before their load time; a mapping the engine does not
       trim (a file the process maps over them) sends them back to `waiting`. */
    jitanon__inj_event *early;
    size_t nearly, early_cap;
    /* What the samples' late count needs of `early` (jitanon__inj_late_sample): every
       entry's range lies in [early_lo, early_hi], and none has a load time before
       early_due (a superset after removals: only a prune makes them exact). */
    uint64_t early_lo, early_hi, early_due;
    jitanon_rangemap described; /* scratch of jitanon__inj_backdate */
    /* Region layout, file mode: per process (pid -> 1 + index), the functions mapped
       ahead of their loads (address -> function; jitanon__inj_claim), `nclaimed` in all;
       the sample whose words are being looked at (its time), and a failure to remember */
    jitanon__hmap claims_of;
    jitanon_rangemap *claims;
    size_t nclaims, claims_cap;
    uint64_t nclaimed, claim_time;
    jitanon_result claim_res;
    /* Unnamed samples (jitanon__inj_unnamed): a sample's pid is looked up once a run of
       them (stop_pid: 1 + the pid, 0 none; stop_dump: 1 + the index of its latest dump,
       0 none). */
    uint64_t stop_pid;
    size_t stop_dump;
    /* Live pipes: dumps are followed as they grow (jitanon__inj_follow_all); nothing a
       later read finds is dated before `decided`, the time of the last record decided. */
    int live;
    uint64_t decided;
    uint64_t waited_round; /* ns waited in the current round */
    uint64_t hold_bytes;   /* 0: nothing is held back (not live, or JITANON_HOLD_NONE) */
    uint64_t idle_ns;      /* a dump not grown for this long counts as stopped */
    int forced;            /* the rounds being decided were let go by the hold bound */
} jitanon__inj_jit;

/* Write: the output stream. */
typedef struct jitanon__inj_out {
    jitanon_perf_writer *w;  /* NULL: resolve samples only */
    uint8_t *enc;            /* scratch for encoded MMAP2s */
    size_t enc_cap;
} jitanon__inj_out;

typedef struct jitanon__inj jitanon__inj;
typedef struct jitanon__elfout jitanon__elfout;
typedef struct jitanon__inj_pool jitanon__inj_pool;

/* The DEBUG_INFO and UNWINDING_INFO records read since the last LOAD: they describe the
   next LOAD (as perf reads them). */
typedef struct jitanon__inj_pend {
    jitanon_jitdump_record debug, unwind;
    int have_debug, have_unwind;
} jitanon__inj_pend;

/* Emit: the one interface every ELF layout implements.  The injector walks each dump
   once: begin, add for every CODE_LOAD, end; then sample for every SAMPLE in time order
   and finish when the input ends.  `add` decides the function's file and pgoff and calls
   jitanon__inj_push_func (or not, when its file could not be written).  Optional
   operations are NULL. */
typedef struct jitanon__elfout_ops {
    int needs_maps; /* resolves samples, so the address maps must be kept */
    jitanon_result (*begin)(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd);
    jitanon_result (*add)(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd, const jitanon_jitdump_record *r,
                          const jitanon__inj_pend *p);
    jitanon_result (*end)(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd);
    void (*sample)(jitanon__inj *j, jitanon__elfout *o, const jitanon__inj_rec *r);
    jitanon_result (*finish)(jitanon__inj *j, jitanon__elfout *o);
    void (*free)(jitanon__inj *j, jitanon__elfout *o);
} jitanon__elfout_ops;

/* Walking a dump: from memory, or streamed from its file (or io.open_dump's stream). */
typedef struct jitanon__inj_src {
    jitanon_jitdump_iter it;
    jitanon_jitdump_stream st;
    int file; /* streaming: from df, or from io.open_dump's stream */
    uint64_t left; /* records of the valid prefix not read yet */
    void (*close)(void *user, void *stream); /* io.close_dump, for io.open_dump's stream */
    void *close_user, *stream;
#ifndef JITANON_NO_STDIO
    jitanon_stream df;
#endif
} jitanon__inj_src;

/* A live pipe's dump (jitanon__inj_dump.follow): its stream stays open where the last
   read stopped - after the last whole record, a cut one still pending - with the
   DEBUG_INFO / UNWINDING_INFO read for a LOAD not written yet. */
typedef struct jitanon__inj_follow {
    jitanon__inj_src src;
    jitanon__inj_pend pend;
    jitanon__inj_wait wait; /* what waits for a LOAD, from one read to the next */
    uint64_t last_time;     /* perf time of the latest record read */
    uint64_t grew_at;       /* jitanon_jitdump_now() of the last read that found records */
    uint64_t seen_at;       /* the same, or when following started (the idle clock) */
    uint64_t seen_perf;     /* the input's latest time then (the idle clock of a replay) */
    int exited;             /* its process exited: the JIT wrote all it will */
} jitanon__inj_follow;

/* State of the per-function layouts (direct, threads, sampled). */
typedef struct jitanon__eo_func {
    jitanon_membuf elf;       /* one file being built */
    jitanon__inj_pool *pool;  /* writer threads of this dump's files, if any */
    size_t first_event;
    size_t nth;               /* sampled, at the end: the LOAD being written */
} jitanon__eo_func;

/* State of the per-process layout: one streaming builder per dump. */
typedef struct jitanon__eo_proc {
    jitanon_elf_builder pb;
    jitanon_membuf elf;       /* the file, with custom I/O */
    char name[64];
    size_t path;
    jitanon__inj *j;          /* for the code of a streamed dump: */
    jitanon__inj_dump *jd;
    jitanon__inj_src code_src; /* the dump read once more while the file is written */
    int code_open;
} jitanon__eo_proc;

/* A function of the batch a region layout is laying out: where its mapping lies, and
   copies of its records (a streamed dump's last only until the next read). */
typedef struct jitanon__eo_place {
    uint64_t addr, size;    /* its mapping (at least a byte) */
    uint64_t gen;           /* 1 + the highest generation of earlier code it overlaps, else 0 */
    uint64_t room;          /* the headers' room in its dump's files */
    size_t func;            /* in jitanon__inj_jit.funcs */
    size_t dump;            /* in jitanon__inj_jit.dumps */
    size_t region;          /* its file in jitanon__inj_jit.regions once chosen, else SIZE_MAX */
    int own;                /* a file of its own, written if a sample resolves into it */
    int fresh;              /* no earlier code of its dump overlaps it */
    size_t load, debug, unwind; /* offsets of the raw records in the arena; SIZE_MAX: none */
    size_t load_len, debug_len, unwind_len;
    uint64_t load_offset;   /* the LOAD's byte offset in its dump */
} jitanon__eo_place;

/* What a region file holds at [addr, addr + len): the code of place `place` there (the
   whole function, or what later code left of it). */
typedef struct jitanon__eo_piece {
    uint64_t addr, len;
    size_t place;
} jitanon__eo_piece;

/* State of the region layout: the batch (a dump, or what one read of a followed dump
   found) is collected, then laid out and written at its end. */
typedef struct jitanon__eo_region {
    jitanon_membuf arena;
    jitanon__eo_place *places;
    size_t nplaces, places_cap;
    uint32_t *order;        /* a sort permutation and its scratch */
    size_t order_cap;
    size_t first_event;
    size_t first_place;     /* the batch's first place */
    uint64_t room;          /* the headers' room: B lies at least this far below a file's code */
    jitanon_membuf elf;
    /* file mode: what each file (same index as jitanon__inj_jit.regions) holds where, as
       functions are mapped: address -> function (jitanon__eo_region_slot) */
    jitanon_rangemap *occ;
    size_t nocc, occ_cap;
    jitanon__eo_piece *pieces; /* a file's code in address order, as it is built */
    size_t pieces_cap;
    /* file mode: each dump's places that no earlier code of the dump overlaps, in address
       order ([fresh_from, fresh_to) of the dump): what a mapping of anonymous memory may
       claim (jitanon__inj_claim) */
    uint32_t *fresh;
    size_t nfresh, fresh_cap;
} jitanon__eo_region;

struct jitanon__elfout {
    const jitanon__elfout_ops *ops;
    union {
        jitanon__eo_func fn;
        jitanon__eo_proc proc;
        jitanon__eo_region reg;
    } u;
};

/* A JIT function's lines, indexed the first time a frame asks for one
   (JITANON_FRAME_WANT_LINE): its DEBUG_INFO entries that have a line, less the dump's
   bias, sorted by address.  A run is a head (at = the run's length) and its entries.
   Looking a line up is then a binary search in these entries, where walking the record
   in the dump (tens of MB, cold) cost a third of a one-pass symbolizer's time; the name's
   length is kept too, so that only the bytes handed out are touched. */
typedef struct jitanon__inj_line {
    uint64_t at;   /* the entry's address less the bias */
    uint32_t line;
    uint32_t file; /* its file name's offset in the function's entries */
    uint32_t file_len, pad;
} jitanon__inj_line;

#define JITANON__UNW_MAX_LOADS 16
#define JITANON__UNW_MAX_BYTES ((size_t)64 << 20) /* the most of a file's CFI read */

/* A mapped file's CFI, read the first time a frame of it is unwound: its .eh_frame and
   .eh_frame_hdr (PT_GNU_EH_FRAME) at their addresses in the file (p_vaddr), and its
   PT_LOADs to turn a file offset into such an address.  ok = 0: it has none usable. */
typedef struct jitanon__unw_file {
    char *path;
    uint8_t *eh, *hdr;
    size_t eh_size, hdr_size;
    uint64_t eh_addr, hdr_addr;
    uint64_t load_off[JITANON__UNW_MAX_LOADS], load_addr[JITANON__UNW_MAX_LOADS], load_size[JITANON__UNW_MAX_LOADS];
    size_t nloads;
    /* .eh_frame_hdr's search table: fde_count entries of {initial_loc, fde} (datarel
       sdata4, the only table encoding linkers write), at table_at in hdr; 0: scan */
    size_t table_at, nfdes;
    int ok, big;
} jitanon__unw_file;

/* What a symbolizer asks of samples beyond their own fields (jitanon_inject_frame_at),
   each made on first need: the perf maps of processes, the recording's build-id table;
   and with JITANON_SAMPLE_COMM the threads' names, followed in time order. */
typedef struct jitanon__inj_sym {
    jitanon__hmap maps;         /* pid -> 1 + index in pmaps; 0: it has none */
    jitanon_perfmap **pmaps;
    size_t *pmap_path;          /* its file's path in jitanon__inj_jit.paths */
    size_t npmaps, pmaps_cap, paths_cap;
    jitanon__hmap bids;         /* FNV-1a of a path -> offset of its entry in bid_table */
    jitanon__hmap bid_ident;    /* mapping ident -> 1 + that offset, 0: none (one hash a mapping) */
    jitanon__hmap mmap_bid;     /* mapping ident -> offset in mmap_bids: an MMAP2's own build-id */
    jitanon_membuf mmap_bids;   /* {size, 20 bytes} each (perf record --buildid-mmap) */
    jitanon_bytes bid_table;    /* HEADER_BUILD_ID, as the reader holds it */
    int bids_read;
    jitanon__hmap comm;         /* tid -> offset of its name in comms */
    jitanon_membuf comms;       /* NUL-terminated names */
    jitanon__inj_line *lines;   /* the runs (jitanon__inj_func.dbg_run says where) */
    size_t nlines, lines_cap;
    jitanon__hmap unw_index;    /* FNV-1a of a path (+1 a collision) -> index in unw_files */
    jitanon__unw_file *unw_files;
    size_t nunw, unw_cap;
    jitanon__hmap sym_ident;    /* mapping ident (a container's: and pid) -> 1 + index in sym_files, 0: none */
    jitanon__hmap sym_index;    /* FNV-1a of root, path and build-id (+1 a collision) -> index in sym_files */
    jitanon__hmap sym_ns;       /* pid -> 2: in another mount namespace, 1: not */
    struct jitanon__inj_symfile *sym_files;
    size_t nsym, sym_cap;
    jitanon__sym_table kallsyms;
    int kallsyms_read;
} jitanon__inj_sym;

struct jitanon__inj {
    const jitanon_inject_opts *opts;
    jitanon_inject_io io;
    jitanon_allocator a;
    jitanon_perf_reader *in;
    jitanon_inject_stats *st;
    jitanon_error *err;
    uint64_t bytes_done;
    jitanon__inj_buf round;
    jitanon__inj_maps maps;
    jitanon__inj_jit jit;
    jitanon__elfout elf;
    jitanon__inj_out out;
    jitanon__bc_dir bc;     /* the cache's view of the ELF directory last written to */
    const jitanon__os *os;  /* the platform (jitanon__os_default) */
    jitanon_membuf bids;    /* build-id table entries not yet given to the writer */
    int bc_warned, bids_nomem;
    int sha_hw;             /* the CPU's SHA extensions, once asked (jitanon__elf_write_one) */
    jitanon__hmap pm_pids;  /* perf_map ELF: pid -> its stub's path in the pool, or JITANON__PM_NONE */
    jitanon__inj_sym sym;   /* on_sample's frames */
};

JITANON__PRIVATE void jitanon__inj_log(jitanon__inj *j, const char *fmt, const char *s, const jitanon_error *e)
{
    char msg[512], detail[256];
    if (!j->io.log) return;
    detail[0] = 0;
    if (e) jitanon_format_error(detail, sizeof detail, e);
    jitanon__fmt(msg, sizeof msg, fmt, s, detail);
    j->io.log(j->io.user, msg);
}

/* -- build-ids: the output's table and the cache -------------------------------------------- */

#define JITANON__BC_NONE 2 /* jitanon__inj_cache_put: no cache (else 0 added, 1 there, -1 failed) */
#define JITANON__PERF_MISC_BUILD_ID_SIZE (1u << 15) /* a build-id entry's size byte is set */

/* The NT_GNU_BUILD_ID of an ELF file we built, found through its PT_NOTE segment: 1 when
   found. */
JITANON__PRIVATE int jitanon__inj_elf_id(const uint8_t *p, size_t n, uint8_t *out)
{
    int big, is64;
    uint64_t phoff;
    size_t phentsize, phnum, i;
    if (!p || n < 64 || memcmp(p, "\177ELF", 4) != 0) return 0;
    is64 = p[4] == 2;
    big = p[5] == 2;
    phoff = is64 ? jitanon__rd64(p + 32, big) : jitanon__rd32(p + 28, big);
    phentsize = jitanon__rd16(p + (is64 ? 54 : 42), big);
    phnum = jitanon__rd16(p + (is64 ? 56 : 44), big);
    if (phentsize < (is64 ? 56u : 32u)) return 0;
    for (i = 0; i < phnum; i++) {
        uint64_t at = phoff + (uint64_t)i * phentsize, off, sz;
        const uint8_t *ph;
        if (at > n || n - at < phentsize) return 0;
        ph = p + at;
        if (jitanon__rd32(ph, big) != 4) continue; /* PT_NOTE */
        off = is64 ? jitanon__rd64(ph + 8, big) : jitanon__rd32(ph + 4, big);
        sz = is64 ? jitanon__rd64(ph + 32, big) : jitanon__rd32(ph + 16, big);
        if (off > n || sz > n - off) return 0;
        while (sz >= 12) { /* namesz, descsz, type, name and desc each padded to 4 */
            const uint8_t *q = p + off;
            uint64_t namesz = jitanon__rd32(q, big), descsz = jitanon__rd32(q + 4, big), type = jitanon__rd32(q + 8, big);
            uint64_t nsp = (namesz + 3) & ~(uint64_t)3, dsp = (descsz + 3) & ~(uint64_t)3;
            if (nsp > sz - 12 || dsp > sz - 12 - nsp) return 0;
            if (type == 3 && namesz == 4 && !memcmp(q + 12, "GNU", 4) && descsz == 20) {
                memcpy(out, q + 12 + nsp, 20);
                return 1;
            }
            off += 12 + nsp + dsp;
            sz -= 12 + nsp + dsp;
        }
    }
    return 0;
}

/* Points j->bc at ELF directory `dir` (no-op when it already is, or without a cache). */
JITANON__PRIVATE void jitanon__inj_cache_dir(jitanon__inj *j, const char *dir)
{
    jitanon_buildid_cache *c = j->opts->buildid_cache;
    if (!c || c->fd_ < 0 || j->bc.dir == dir) return;
    if (j->os->bc_prepare(&j->bc, c->fd_, dir) == 0) return;
    j->bc.dir = dir; /* its files are counted as failed, the warning comes with the first */
}

/* Adds one written file to the cache (writer threads call this too): 0 added, 1 already
   there, -1 failed, JITANON__BC_NONE without a cache. */
JITANON__PRIVATE int jitanon__inj_cache_put(const jitanon__os *os, const jitanon__bc_dir *b, const char *name,
                                           const jitanon_membuf *elf, const uint8_t *id)
{
    if (b->root < 0) return b->dir ? -1 : JITANON__BC_NONE;
    return os->bc_put(b, name, elf ? elf->data : NULL, elf ? elf->size : 0, id);
}

/* A file was written: its entry in the output's build-id table (as perf writes one: user
   space, pid -1 = the host, the 20-byte build-id and its size, the path NUL-padded to a
   multiple of 64), and the cache's answer counted. */
JITANON__PRIVATE void jitanon__inj_listed(jitanon__inj *j, const char *dir, const char *name, const uint8_t *id, int cached)
{
    static const uint8_t zero[64] = {0};
    uint8_t h[36];
    size_t dl = strlen(dir), nl = strlen(name), padded = (dl + 1 + nl + 1 + 63) & ~(size_t)63;
    int big = j->in->big_endian;
    if (cached == 0 || cached == 1) j->st->buildid.cached++;
    else if (cached < 0) {
        j->st->buildid.cache_failed++;
        if (!j->bc_warned++)
            jitanon__inj_log(j, "build-id cache %s is not writable here (read-only, or something not ours in the way): "
                                "files are not cached, the output is written all the same (-N skips the cache)%s",
                             j->opts->buildid_cache->dir, NULL);
    }
    if (!j->out.w || !id || 36 + padded > 0xffff) return;
    memset(h, 0, sizeof h);
    jitanon__wr16(h + 4, JITANON_PERF_MISC_USER | JITANON__PERF_MISC_BUILD_ID_SIZE, big);
    jitanon__wr16(h + 6, (uint16_t)(36 + padded), big);
    jitanon__wr32(h + 8, 0xffffffffu, big);
    memcpy(h + 12, id, 20);
    h[32] = 20;
    if (jitanon_membuf_write(&j->bids, h, sizeof h) || jitanon_membuf_write(&j->bids, dir, dl) ||
        jitanon_membuf_write(&j->bids, "/", 1) || jitanon_membuf_write(&j->bids, name, nl) ||
        jitanon_membuf_write(&j->bids, zero, padded - dl - 1 - nl))
        j->bids_nomem = 1; /* told by jitanon__inj_bids_flush */
    else j->st->buildid.entries++;
}

/* Gives the pending entries to the writer: a pipe gets HEADER_BUILD_ID records now (before
   the MMAP2s that name the files), a file extends its table at the end. */
JITANON__PRIVATE jitanon_result jitanon__inj_bids_flush(jitanon__inj *j)
{
    jitanon_result res;
    if (j->bids_nomem)
        return JITANON__FAIL(j->err, JITANON_ERR_NOMEM, j->in->stats.records, "out of memory (build-id table)");
    if (!j->out.w || !j->bids.size) return JITANON_OK;
    res = jitanon_perf_writer_add_feature(j->out.w, JITANON_PERF_FEAT_BUILD_ID, j->bids.data, j->bids.size, j->err);
    j->bids.size = 0;
    return res;
}

/* -- ELF writer threads ---------------------------------------------------------------- */

/* The outcome of one ELF file.  A function whose file could not be written gets no
   mapping (its events are dropped in jitanon__inj_drop_failed). */
JITANON__PRIVATE void jitanon__inj_written(jitanon__inj *j, const char *name, size_t size, int failed, size_t func)
{
    if (failed) {
        j->st->elf.refused++;
        jitanon__inj_log(j, "cannot write %s%s in the ELF directory: its functions get no mapping", name, NULL);
        if (func != SIZE_MAX) j->jit.funcs[func].failed = 1;
    } else {
        j->st->elf.files++;
        j->st->elf.bytes += size;
    }
}

/* A fallback the options asked for but this run cannot give: counted once, told once. */
JITANON__PRIVATE void jitanon__inj_fallback(jitanon__inj *j, uint64_t bit, const char *why)
{
    if (j->st->fallbacks & bit) return;
    j->st->fallbacks |= bit;
    jitanon__inj_log(j, "%s%s", why, NULL);
}

/* Per-function files leave through a ring of jobs, task k of the thread pool writing job
   k.  The calling thread fills a slot (its buffer swapped with the one the next ELF is
   built in: nothing is copied, and only the calling thread allocates), the pool's workers
   write them, and the calling thread collects the outcomes in order, so logs and
   statistics read as without threads. */
typedef struct jitanon__inj_job {
    jitanon_membuf buf;
    size_t func;
    char name[96];
    int failed;
    uint8_t id[20];  /* its build-id */
    int have_id, cached; /* cached: jitanon__inj_cache_put's answer */
} jitanon__inj_job;

struct jitanon__inj_pool {
    const jitanon_thread_pool *tp;
    void *handle;              /* tp's pool */
    jitanon__inj_job *jobs;
    size_t njobs;
    size_t head, tail;         /* counters: collected <= queued */
    const char *dir;
    jitanon_inject_io io;
    jitanon__bc_dir *bc;       /* j->bc: jitanon__inj_pool_submit readies it for each file */
    const jitanon__os *os;
};

/* A task of the pool, on a worker: writes job `index` and adds it to the cache. */
JITANON__PRIVATE void jitanon__inj_writer(void *ctx, size_t index)
{
    jitanon__inj_pool *p = (jitanon__inj_pool *)ctx;
    jitanon__inj_job *job = &p->jobs[index % p->njobs];
    int failed = p->io.write_elf(p->io.user, p->dir, job->name, job->buf.data, job->buf.size) != 0;
    job->cached = failed || !job->have_id ? JITANON__BC_NONE
                                           : jitanon__inj_cache_put(p->os, p->bc, job->name, &job->buf, job->id);
    job->failed = failed;
}

JITANON__PRIVATE void jitanon__inj_pool_free(jitanon__inj *j, jitanon__inj_pool *p)
{
    size_t i;
    for (i = 0; i < p->njobs; i++) jitanon_membuf_release(&p->jobs[i].buf);
    jitanon__free(&j->a, p->jobs, p->njobs * sizeof *p->jobs);
    jitanon__free(&j->a, p, sizeof *p);
}

/* NULL when no thread could be started: the files are then written by the caller. */
JITANON__PRIVATE jitanon__inj_pool *jitanon__inj_pool_start(jitanon__inj *j, const char *dir)
{
    unsigned want = j->opts->elf_threads > 64 ? 64 : j->opts->elf_threads;
    const jitanon_thread_pool *tp = j->io.thread_pool ? j->io.thread_pool : j->os->threads;
    jitanon__inj_pool *p;
    size_t i;
    if (!tp) return NULL;
    p = (jitanon__inj_pool *)jitanon__malloc(&j->a, sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->njobs = 64 + 32 * (size_t)want;
    p->jobs = (jitanon__inj_job *)jitanon__malloc(&j->a, p->njobs * sizeof *p->jobs);
    if (p->jobs) memset(p->jobs, 0, p->njobs * sizeof *p->jobs); /* before any exit: the free releases them */
    else p->njobs = 0;
    if (!p->jobs) {
        jitanon__inj_pool_free(j, p);
        return NULL;
    }
    for (i = 0; i < p->njobs; i++) p->jobs[i].buf.allocator = j->a;
    p->tp = tp;
    p->dir = dir;
    p->io = j->io;
    p->os = j->os;
    p->bc = &j->bc; /* jitanon__inj_threads prepared it for dir */
    if (!tp->start_fn(tp->user, want, jitanon__inj_writer, p, &j->a, &p->handle)) {
        jitanon__inj_pool_free(j, p);
        return NULL;
    }
    return p;
}

/* Takes the outcomes of finished jobs, oldest first: with batch > 0 of the oldest `batch`
   ones (or of all when fewer are queued), waiting for them: the caller then sleeps once
   per batch, not once per file; with batch 0 of all. */
JITANON__PRIVATE void jitanon__inj_pool_collect(jitanon__inj *j, jitanon__inj_pool *p, size_t batch)
{
    size_t end = batch && p->tail - p->head > batch ? p->head + batch : p->tail;
    p->tp->wait_fn(p->tp->user, p->handle, end);
    while (p->head < end) { /* done jobs are the caller's until queued again */
        jitanon__inj_job *job = &p->jobs[p->head % p->njobs];
        jitanon__inj_written(j, job->name, job->buf.size, job->failed, job->func);
        if (!job->failed) jitanon__inj_listed(j, p->dir, job->name, job->have_id ? job->id : NULL, job->cached);
        p->head++;
    }
}

/* Queues `elf` as the file `name` of function `func`; `elf` gets an empty buffer back. */
JITANON__PRIVATE void jitanon__inj_pool_submit(jitanon__inj *j, jitanon__inj_pool *p, jitanon_membuf *elf,
                                               const char *name, size_t func)
{
    jitanon__inj_job *job;
    jitanon_membuf t;
    size_t n = strlen(name);
    if (p->tail - p->head == p->njobs) jitanon__inj_pool_collect(j, p, p->njobs / 2);
    job = &p->jobs[p->tail % p->njobs];
    t = job->buf;
    job->buf = *elf;
    *elf = t;
    if (n >= sizeof job->name) n = sizeof job->name - 1;
    memcpy(job->name, name, n);
    job->name[n] = 0;
    job->func = func;
    job->failed = 0;
    job->have_id = jitanon__inj_elf_id((const uint8_t *)job->buf.data, job->buf.size, job->id);
    if (job->have_id) p->os->bc_ready(p->bc, job->id);
    p->tp->run_fn(p->tp->user, p->handle, p->tail, 1);
    p->tail++;
}

/* Lets the workers finish every queued file, takes the outcomes and ends the pool. */
JITANON__PRIVATE void jitanon__inj_pool_stop(jitanon__inj *j, jitanon__inj_pool *p)
{
    jitanon__inj_pool_collect(j, p, 0);
    p->tp->stop_fn(p->tp->user, p->handle);
    jitanon__inj_pool_free(j, p);
}

/* Starts writer threads for the files of directory `dir` when the options ask for them;
   NULL means the calling thread writes (reported once as a fallback). */
JITANON__PRIVATE jitanon__inj_pool *jitanon__inj_threads(jitanon__inj *j, const char *dir)
{
    jitanon__inj_pool *p;
    if (!j->io.thread_pool && !j->os->threads) return NULL; /* told once by jitanon__inj_start */
    jitanon__inj_cache_dir(j, dir);
    p = j->opts->elf_threads ? jitanon__inj_pool_start(j, dir) : NULL;
    if (!p && j->opts->elf_threads)
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_NO_THREADS,
                              "elf_threads: no writer thread could be started (or allocated); the calling thread writes the ELF files");
    return p;
}

/* Writes the file now, or queues it when there are writer threads (`elf` then comes
   back empty).  1 when it was written or queued. */
JITANON__PRIVATE int jitanon__inj_put_file(jitanon__inj *j, jitanon__inj_pool *pool, const char *dir,
                                          jitanon_membuf *elf, const char *name, size_t func)
{
    int failed;
    if (pool) {
        jitanon__inj_pool_submit(j, pool, elf, name, func);
        return 1;
    }
    failed = j->io.write_elf(j->io.user, dir, name, elf->data, elf->size) != 0;
    jitanon__inj_written(j, name, elf->size, failed, func);
    if (!failed) {
        uint8_t id[20];
        int have = jitanon__inj_elf_id((const uint8_t *)elf->data, elf->size, id);
        jitanon__inj_cache_dir(j, dir);
        if (have) j->os->bc_ready(&j->bc, id);
        jitanon__inj_listed(j, dir, name, have ? id : NULL,
                            have ? jitanon__inj_cache_put(j->os, &j->bc, name, elf, id) : JITANON__BC_NONE);
    }
    return !failed;
}

JITANON__PRIVATE void jitanon__inj_threads_stop(jitanon__inj *j, jitanon__inj_pool *pool)
{
    if (pool) jitanon__inj_pool_stop(j, pool);
}

/* Files written by threads report failure after their functions were counted: drop the
   events of those functions, and send a MOVE of one to the latest earlier LOAD of the
   same code_index whose file was written, exactly as when files are written one by one. */
JITANON__PRIVATE void jitanon__inj_drop_failed(jitanon__inj *j, jitanon__inj_dump *jd, size_t first_event)
{
    const jitanon__inj_func *fn = j->jit.funcs;
    size_t i, k = first_event;
    for (i = first_event; i < jd->count; i++) {
        jitanon__inj_event e = jd->events[i];
        if (fn[e.func].failed) {
            size_t f = e.func;
            if (!e.is_move) {
                j->st->trim.loads--;
                continue;
            }
            while (f > jd->first_func && (fn[f].failed || fn[f].code_index != fn[e.func].code_index ||
                                          fn[f].dump != fn[e.func].dump))
                f--;
            if (fn[f].failed || fn[f].code_index != fn[e.func].code_index || fn[f].dump != fn[e.func].dump) {
                j->st->trim.moves--;
                continue;
            }
            e.func = f;
        }
        jd->events[k++] = e;
    }
    jd->count = k;
}

/* -- bookkeeping ---------------------------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__inj_nomem(jitanon__inj *j, const char *what)
{
    return JITANON__FAIL(j->err, JITANON_ERR_NOMEM, j->in->stats.records, "out of memory (%s)", what);
}

/* Stores "dir/name" (or just dir when name is NULL), NUL-terminated, in the pool;
   returns its offset or SIZE_MAX. */
JITANON__PRIVATE size_t jitanon__inj_add_path(jitanon__inj *j, const char *dir, const char *name)
{
    jitanon_membuf *b = &j->jit.paths;
    size_t off = b->size;
    static const char slash = '/', nul = 0;
    if (jitanon_membuf_write(b, dir, strlen(dir)) ||
        (name && (jitanon_membuf_write(b, &slash, 1) || jitanon_membuf_write(b, name, strlen(name)))) ||
        jitanon_membuf_write(b, &nul, 1))
        return SIZE_MAX;
    return off;
}

/* A NUL-terminated copy of s[0..n) in an allocation of *size bytes; NULL when out of memory. */
JITANON__PRIVATE char *jitanon__inj_dup(jitanon__inj *j, const char *s, size_t n, size_t *size)
{
    char *d = n < SIZE_MAX ? (char *)jitanon__malloc(&j->a, n + 1) : NULL;
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    *size = n + 1;
    return d;
}

JITANON__PRIVATE const char *jitanon__inj_path(const jitanon__inj *j, size_t off)
{
    return (const char *)j->jit.paths.data + off;
}

/* -- time -------------------------------------------------------------------------------- */

/* Perf time `ns` as perf script prints it (seconds, 6 decimals), into buf (32 bytes). */
JITANON__PRIVATE const char *jitanon__inj_secs(char *buf, uint64_t ns)
{
    char us[8];
    uint32_t frac = (uint32_t)(ns % 1000000000u / 1000u);
    size_t k;
    for (k = 6; k-- > 0; frac /= 10) us[k] = (char)('0' + frac % 10);
    us[6] = 0;
    jitanon__fmt(buf, 32, "%U.%s", ns / 1000000000u, us);
    return buf;
}

/* The first event not recorded on CLOCK_MONOTONIC (perf record -k mono), or attr_count. */
JITANON__PRIVATE size_t jitanon__inj_not_mono(const jitanon__inj *j)
{
    size_t i = 0;
    while (i < j->in->attr_count && j->in->attrs[i].use_clockid && j->in->attrs[i].clockid == 1) i++;
    return i;
}

JITANON__PRIVATE uint64_t jitanon__inj_dist(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* A dump's header time on CLOCK_MONOTONIC lies this close to its marker (the JIT writes
   the header, then maps the marker), when the recording has no TIME_CONV to compare with. */
#define JITANON__INJ_CLOCK_NEAR 10000000000ull

/* Record times of a dump in perf time; fails unless the recording's clock matches.  Some
   JITs set JITDUMP_FLAGS_ARCH_TIMESTAMP while writing CLOCK_MONOTONIC times (seen on VMs:
   libxsmm#1093), which perf refuses: the header's time decides which clock the dump is on
   - the reading (TSC through the recording's TIME_CONV, or CLOCK_MONOTONIC) nearer the
   marker's perf time, and without a TIME_CONV CLOCK_MONOTONIC when it is within
   JITANON__INJ_CLOCK_NEAR of the marker - and a flag that is wrong is dropped and said. */
JITANON__PRIVATE jitanon_result jitanon__inj_check_clock(jitanon__inj *j, jitanon__inj_dump *jd, const char *path,
                                                        uint64_t off)
{
    jitanon_jitdump_header *h = &jd->sum.header;
    int conv = j->jit.have_time_conv && j->jit.time_conv.time_mult;
    size_t i = jitanon__inj_not_mono(j);
    if (h->arch_timestamp) {
        uint64_t mono = jitanon__inj_dist(h->timestamp, jd->marker_time), tsc = UINT64_MAX;
        if (conv) tsc = jitanon__inj_dist(jitanon_perf_tsc_to_time(&j->jit.time_conv, h->timestamp), jd->marker_time);
        if (i == j->in->attr_count && h->timestamp && jd->marker_time &&
            (conv ? mono < tsc : mono <= JITANON__INJ_CLOCK_NEAR)) {
            char msg[768], t[32];
            h->arch_timestamp = 0;
            j->st->dumps.clock_fixed++;
            jitanon__fmt(msg, sizeof msg,
                         "jitdump %s: its header says its times are the CPU's time stamp counter "
                         "(JITDUMP_FLAGS_ARCH_TIMESTAMP), but they are CLOCK_MONOTONIC: its header's time %s is "
                         "%U ms from its marker's%s; read as CLOCK_MONOTONIC", path, jitanon__inj_secs(t, h->timestamp),
                         mono / 1000000u, conv ? ", nearer than read as TSC through the recording's TIME_CONV" : "");
            jitanon__inj_log(j, "%s%s", msg, NULL);
            return JITANON_OK;
        }
        if (!conv)
            return JITANON__FAIL(j->err, JITANON_ERR_CLOCK, off,
                                 "the jitdump has arch (TSC) timestamps but the recording has no TIME_CONV "
                                 "record; re-record with a newer perf, or make the JIT write CLOCK_MONOTONIC "
                                 "and record with `perf record -k mono`");
        return JITANON_OK;
    }
    if (i < j->in->attr_count)
        return JITANON__FAIL(j->err, JITANON_ERR_CLOCK, off,
                             "jitdump timestamps are CLOCK_MONOTONIC but event %U was not recorded with it; "
                             "re-record with `perf record -k mono`", (uint64_t)i);
    return JITANON_OK;
}

JITANON__PRIVATE uint64_t jitanon__inj_time(const jitanon__inj *j, const jitanon__inj_dump *jd, uint64_t t)
{
    return jd->sum.header.arch_timestamp ? jitanon_perf_tsc_to_time(&j->jit.time_conv, t) : t;
}

/* -- sorting: a stable merge sort of indices (rounds are nearly sorted already) ---------- */

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

/* Sorts an event array by (time, seq); 0 when out of memory. */
JITANON__PRIVATE int jitanon__inj_sort_events(jitanon__inj *j, jitanon__inj_event *ev, size_t n)
{
    return jitanon__sort(&j->a, ev, n, sizeof *ev, jitanon__inj_ev_less);
}

/* -- reading a dump: from memory, or streamed from its file ------------------------------ */

/* A stream over the dump at `path`, from its start, every record (s->left unlimited):
   io.open_dump's when set, else the file opened as every dump is.  *size: the file's size
   at open, 0 when unknown.  jitanon__inj_src_close releases it whatever the result. */
JITANON__PRIVATE jitanon_result jitanon__inj_src_path(jitanon__inj *j, const char *path, jitanon__inj_src *s,
                                                      uint64_t *size, jitanon_error *err)
{
    jitanon_read_fn read = NULL;
    void *user = NULL;
    jitanon_result r;
    memset(s, 0, sizeof *s);
    *size = 0;
    if (j->io.open_dump) {
        if ((r = j->io.open_dump(j->io.user, path, &read, &user, err)) != JITANON_OK) return r;
        s->close = j->io.close_dump;
        s->close_user = j->io.user;
        s->stream = user;
        if (!read) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "io.open_dump returned no read function");
    } else {
#ifndef JITANON_NO_STDIO
        if ((r = j->os->open_named(path, &s->df, err)) != JITANON_OK) return r;
        read = s->df.read_fn;
        user = s->df.user;
        *size = s->df.size;
#else
        return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_STDIO");
#endif
    }
    s->file = 1;
    s->left = UINT64_MAX;
    return jitanon_jitdump_stream_init(&s->st, read, user, &j->jit.dump_opts, err);
}

/* A walk reads the valid prefix the load or scan found, no further: a dump read again
   from its file cannot grow a different tail in between. */
JITANON__PRIVATE jitanon_result jitanon__inj_src_open(jitanon__inj *j, const jitanon__inj_dump *jd, jitanon__inj_src *s)
{
    uint64_t size;
    memset(s, 0, sizeof *s);
    s->left = UINT64_MAX; /* the bytes in memory cannot change */
    if (jd->dump) return jitanon_jitdump_iter_begin(&s->it, jd->dump->data, jd->dump->size, &j->jit.dump_opts, NULL);
    if (jitanon__inj_src_path(j, jitanon__inj_path(j, jd->path), s, &size, NULL) != JITANON_OK) return JITANON_ERR_IO;
    s->left = jd->sum.records;
    return JITANON_OK;
}

/* The next record; anything but JITANON_OK ends the walk (a tail cut short is expected). */
JITANON__PRIVATE jitanon_result jitanon__inj_src_next(jitanon__inj_src *s, jitanon_jitdump_record *rec)
{
    if (!s->left) return JITANON_END;
    s->left--;
    if (!s->file) return jitanon_jitdump_iter_next(&s->it, rec, NULL);
    return jitanon_jitdump_stream_next(&s->st, rec, NULL);
}

JITANON__PRIVATE void jitanon__inj_src_close(jitanon__inj_src *s)
{
    if (s->close) s->close(s->close_user, s->stream);
#ifndef JITANON_NO_STDIO
    else if (s->file) jitanon__stream_close(&s->df);
#endif
    s->close = NULL;
    s->file = 0;
    jitanon_jitdump_stream_release(&s->st);
}

/* A stream hands out views that the next record replaces: DEBUG_INFO and UNWINDING_INFO
   wait for their LOAD in a copy of their own. */
JITANON__PRIVATE int jitanon__inj_keep(jitanon_membuf *b, const jitanon_jitdump_record *r, int big, jitanon_jitdump_record *copy)
{
    uint64_t missing = 0;
    b->size = 0;
    if (jitanon_membuf_write(b, r->raw.data, r->raw.size)) return 0;
    return jitanon__jitdump_parse_record(b->data, b->size, r->offset, big, UINT64_MAX, r->index, copy, &missing, NULL) ==
           JITANON_OK;
}

/* The line bias to build a dump's ELFs with: the option, or what a scan of the dump found. */
JITANON__PRIVATE uint32_t jitanon__inj_line_bias(const jitanon__inj *j, const jitanon_elf_line_bias_scan *scan)
{
    uint32_t opt = j->opts->elf.line_bias;
    return opt == JITANON_ELF_LINE_BIAS_AUTO ? jitanon_elf_line_bias_scan_result(scan) : opt;
}

/* The ELF options for one dump's files. */
JITANON__PRIVATE jitanon_elf_opts jitanon__inj_elf_opts(const jitanon__inj *j, const jitanon__inj_summary *sum)
{
    jitanon_elf_opts o = j->opts->elf;
    o.line_bias = sum->line_bias;
    return o;
}

#ifndef JITANON_NO_STDIO
/* Reads a dump once as a stream to learn what the loader would: its header, counts and
   valid prefix (the records before one cut short or damaged, unless strict). */
JITANON__PRIVATE jitanon_result jitanon__inj_scan(jitanon__inj *j, const char *path, jitanon__inj_summary *sum,
                                                  jitanon_error *err)
{
    jitanon__inj_src src;
    jitanon_jitdump_stream *sp = &src.st;
    jitanon_jitdump_record rec;
    jitanon_elf_line_bias_scan bias;
    jitanon_error e;
    uint64_t size;
    jitanon_result r = jitanon__inj_src_path(j, path, &src, &size, err);
    if (r != JITANON_OK) {
        jitanon__inj_src_close(&src);
        return r;
    }
    memset(&e, 0, sizeof e);
    jitanon_elf_line_bias_scan_init(&bias, NULL);
    while (r == JITANON_OK && (r = jitanon_jitdump_stream_next(sp, &rec, &e)) == JITANON_OK)
        jitanon_elf_line_bias_scan_add(&bias, &rec);
    memset(sum, 0, sizeof *sum);
    sum->header = sp->header;
    sum->loads = sp->stats.by_id[JITANON_JITDUMP_CODE_LOAD];
    sum->records = sp->next_index;
    sum->valid_size = sp->consumed;
    sum->size = size > sp->consumed + sp->pending ? size : sp->consumed + sp->pending;
    bias.v8_marker = sp->header.pad1 == JITANON__V8_MARKER; /* the header is read with the first record */
    sum->line_bias = jitanon__inj_line_bias(j, &bias);
    if (r == JITANON_AGAIN && !sp->have_header) {
        r = JITANON__FAIL(err, JITANON_ERR_TRUNCATED, sp->consumed, "jitdump header incomplete");
    } else if (r == JITANON_AGAIN && sp->pending && j->jit.live) { /* the JIT is writing it: followed */
        r = JITANON_OK;
    } else if (r == JITANON_AGAIN && sp->pending) { /* what a crashed or still-running JIT left */
        r = JITANON__FAIL(&sum->tail_error, JITANON_ERR_TRUNCATED, sp->consumed, "record %U is cut short",
                          sp->next_index);
        sum->tail_error.record_index = sp->next_index;
    } else if (r == JITANON_AGAIN) {
        r = JITANON_OK;
    } else if (sp->have_header && jitanon__jitdump_damage(r)) {
        sum->tail_error = e;
        sum->tail_error.record_index = sp->next_index;
    } else if (err) {
        *err = e;
    }
    if (sum->tail_error.type != JITANON_OK)
        r = j->jit.dump_opts.strict ? sum->tail_error.type : JITANON_OK;
    if (r != JITANON_OK && sum->tail_error.type != JITANON_OK && err) *err = sum->tail_error;
    jitanon__inj_src_close(&src);
    return r;
}
#endif

/* -- jitdumps -> functions and jit events ------------------------------------------------ */

JITANON__PRIVATE jitanon_result jitanon__inj_push_event(jitanon__inj *j, jitanon__inj_dump *jd, uint64_t time,
                                                        uint64_t start, uint64_t size, size_t func, int is_move)
{
    jitanon__inj_event *e;
    if (!jitanon__grow(&j->a, (void **)&jd->events, &jd->cap, jd->count + 1, sizeof *e))
        return jitanon__inj_nomem(j, "jit events");
    e = &jd->events[jd->count++];
    j->jit.due = 0; /* jitanon__inj_apply_until looks again */
    e->time = time;
    e->seq = j->jit.seq++;
    e->start = start;
    e->size = size;
    e->func = func;
    e->is_move = is_move;
    e->late = 0;
    e->load_time = time;
    if (size && start <= UINT64_MAX - (size - 1)) { /* the stack scan's first filter (sampled files) */
        if (!j->jit.code_hi || start < j->jit.code_lo) j->jit.code_lo = start;
        if (start + (size - 1) > j->jit.code_hi) j->jit.code_hi = start + (size - 1);
    }
    return JITANON_OK;
}

/* The length a mapping of the function gets: its code, and - when the runtime keeps its
   unwinding info mapped right after the code (mapped_size) - that too, 8-aligned, as perf
   maps it.  Samples there belong to the function's file, not to the //anon around it. */
JITANON__PRIVATE uint64_t jitanon__inj_map_len(uint64_t code_size, uint64_t mapped_size)
{
    uint64_t len;
    if (!mapped_size || code_size > UINT64_MAX - 7) return code_size;
    len = (code_size + 7) & ~(uint64_t)7;
    return jitanon__add_u64(len, mapped_size, &len) ? len : code_size;
}

/* A LOAD whose file (now or later) is `path`, its code at `pgoff` in it. */
JITANON__PRIVATE jitanon_result jitanon__inj_push_func(jitanon__inj *j, jitanon__inj_dump *jd,
                                                       const jitanon_jitdump_record *r, const jitanon__inj_pend *p,
                                                       uint64_t pgoff, size_t path)
{
    jitanon__inj_jit *jt = &j->jit;
    jitanon__inj_func *f;
    if (!jitanon__grow(&j->a, (void **)&jt->funcs, &jt->funcs_cap, jt->nfuncs + 1, sizeof *f) ||
        !jitanon__grow(&j->a, (void **)&jt->hot, &jt->hot_cap, jt->nfuncs + 1, sizeof *jt->hot) ||
        (j->opts->on_sample && !jitanon__grow(&j->a, (void **)&jt->ehs, &jt->ehs_cap, jt->nfuncs + 1, sizeof *jt->ehs)))
        return jitanon__inj_nomem(j, "functions");
    jt->hot[jt->nfuncs].late_until = 0;
    jt->hot[jt->nfuncs].hit = 0;
    f = &jt->funcs[jt->nfuncs++];
    f->pid = jd->pid;
    f->tid = r->load.pid == jd->pid ? r->load.tid : jd->tid;
    f->code_index = r->load.code_index;
    f->pgoff = pgoff;
    f->path = path;
    f->name = r->load.name;
    f->code_addr = r->load.code_addr;
    f->mapped_size = p->have_unwind ? p->unwind.unwind.mapped_size : 0;
    f->failed = 0;
    f->slotted = 0;
    f->claimed = 0;
    f->dump = (size_t)(jd - jt->dumps);
    f->region = SIZE_MAX;
    f->dbg = NULL, f->dbg_size = 0, f->dbg_nr = 0, f->dbg_run = 0;
    /* a loaded dump's DEBUG_INFO lives as long as the run: on_sample's lines come from it */
    if (p->have_debug && jd->dump && p->debug.debug.entries.data >= jd->dump->data &&
        p->debug.debug.entries.data < jd->dump->data + jd->dump->size) {
        f->dbg = p->debug.debug.entries.data;
        f->dbg_size = p->debug.debug.entries.size;
        f->dbg_nr = p->debug.debug.nr_entry;
    }
    if (jt->ehs) {
        jitanon__inj_eh *e = &jt->ehs[jt->nfuncs - 1];
        e->eh = NULL, e->size = 0, e->addr = 0;
        if (p->have_unwind && jd->dump && p->unwind.unwind.eh_frame.data >= jd->dump->data &&
            p->unwind.unwind.eh_frame.data < jd->dump->data + jd->dump->size) {
            /* where V8 and perf place it: ALIGN8(code_size) after the code (see [elf]) */
            e->eh = p->unwind.unwind.eh_frame.data;
            e->size = p->unwind.unwind.eh_frame.size;
            e->addr = r->load.code_addr + jitanon__align_up(r->load.code_size, 8);
        }
    }
    j->st->trim.loads++;
    return jitanon__inj_push_event(j, jd, jitanon__inj_time(j, jd, r->timestamp), r->load.code_addr,
                                   jitanon__inj_map_len(r->load.code_size, f->mapped_size), jt->nfuncs - 1, 0);
}

/* A MOVE maps the function's file again at a new address: find the latest LOAD of the
   same code_index in this dump. */
JITANON__PRIVATE jitanon_result jitanon__inj_move(jitanon__inj *j, jitanon__inj_dump *jd, const jitanon_jitdump_record *r)
{
    size_t i = j->jit.nfuncs, d = (size_t)(jd - j->jit.dumps);
    while (i > jd->first_func) {
        const jitanon__inj_func *f = &j->jit.funcs[--i];
        if (f->code_index == r->move.code_index && f->dump == d) {
            j->st->trim.moves++;
            return jitanon__inj_push_event(j, jd, jitanon__inj_time(j, jd, r->timestamp), r->move.new_code_addr,
                                           jitanon__inj_map_len(r->move.code_size, f->mapped_size), i, 1);
        }
    }
    return JITANON_OK; /* a MOVE without its LOAD: nothing to map */
}

/* Keeps `r` in `p` when it is UNWINDING_INFO (it describes the next LOAD): 1 kept, 0
   another record, -1 out of memory.  A streamed record lasts until the next read, so it
   is copied into w (a streaming per-process builder copies what it keeps); a loaded
   dump's records last as long as the dump, which a per-process builder needs, as it keeps
   every function's views. */
JITANON__PRIVATE int jitanon__inj_pend_take(const jitanon__inj_dump *jd, const jitanon_jitdump_record *r,
                                            jitanon__inj_pend *p, jitanon__inj_wait *w)
{
    if (r->id != JITANON_JITDUMP_CODE_UNWINDING_INFO) return 0;
    if (jd->dump) p->unwind = *r;
    else if (!jitanon__inj_keep(&w->unwind, r, jd->sum.header.big_endian, &p->unwind)) return -1;
    p->have_unwind = 1;
    return 1;
}

/* DEBUG_INFO records wait for the LOAD they describe (jitanon_jitdump_debug_fits), at
   most this many: one that no LOAD took by then goes, counted in stats.dumps.debug_unmatched. */
#define JITANON__INJ_DEBUG_WAITING 4096u

/* Reads the waiting copies [from, ndbg) of a streamed dump again (after their buffer moved). */
JITANON__PRIVATE void jitanon__inj_dbg_reread(jitanon__inj_wait *w, const jitanon__inj_dump *jd, size_t from)
{
    for (; from < w->ndbg; from++) {
        jitanon__inj_dbg *d = &w->dbg[from];
        uint64_t missing = 0;
        jitanon_jitdump_record r = d->rec;
        /* read and validated once already: cannot fail */
        (void)jitanon__jitdump_parse_record(w->debug.data + d->off, r.raw.size, r.offset, jd->sum.header.big_endian,
                                            UINT64_MAX, r.index, &d->rec, &missing, NULL);
    }
}

/* Drops waiting DEBUG_INFO `i`; a streamed dump's copies are packed when most of their
   buffer is dead. */
JITANON__PRIVATE void jitanon__inj_dbg_drop(jitanon__inj_wait *w, const jitanon__inj_dump *jd, size_t i)
{
    size_t k, live = 0;
    memmove(w->dbg + i, w->dbg + i + 1, (w->ndbg - i - 1) * sizeof *w->dbg);
    w->ndbg--;
    if (jd->dump) return;
    for (k = 0; k < w->ndbg; k++) live += w->dbg[k].rec.raw.size;
    if (w->debug.size <= 2 * live + 65536u && w->ndbg) return;
    for (k = live = 0; k < w->ndbg; k++) { /* offsets only grow: moving down is safe */
        memmove(w->debug.data + live, w->debug.data + w->dbg[k].off, w->dbg[k].rec.raw.size);
        w->dbg[k].off = live;
        live += w->dbg[k].rec.raw.size;
    }
    w->debug.size = live;
    jitanon__inj_dbg_reread(w, jd, 0);
}

/* Keeps `r` when it is DEBUG_INFO, for the LOAD that will take it: 1 kept, 0 another
   record, -1 out of memory. */
JITANON__PRIVATE int jitanon__inj_dbg_take(jitanon__inj *j, jitanon__inj_wait *w, const jitanon__inj_dump *jd,
                                           const jitanon_jitdump_record *r)
{
    const uint8_t *was;
    jitanon__inj_dbg *d;
    if (r->id != JITANON_JITDUMP_CODE_DEBUG_INFO) return 0;
    if (w->ndbg == JITANON__INJ_DEBUG_WAITING) {
        jitanon__inj_dbg_drop(w, jd, 0);
        if (w->count) j->st->dumps.debug_unmatched++;
    }
    if (!jitanon__grow(&j->a, (void **)&w->dbg, &w->dbg_cap, w->ndbg + 1, sizeof *w->dbg)) return -1;
    d = &w->dbg[w->ndbg];
    d->rec = *r;
    d->off = w->debug.size;
    d->recent = 1;
    if (jd->dump) {
        w->ndbg++;
        return 1;
    }
    was = w->debug.data;
    if (jitanon_membuf_write(&w->debug, r->raw.data, r->raw.size)) return -1;
    w->ndbg++;
    jitanon__inj_dbg_reread(w, jd, w->debug.data == was ? w->ndbg - 1 : 0);
    return 1;
}

/* The waiting DEBUG_INFO that LOAD `r` takes (jitanon_jitdump_debug_fits), put in `p`;
   its index (dropped once the LOAD is handled), or SIZE_MAX. */
JITANON__PRIVATE size_t jitanon__inj_dbg_pick(jitanon__inj_wait *w, const jitanon_jitdump_record *r, jitanon__inj_pend *p)
{
    size_t i = w->ndbg, at = SIZE_MAX;
    while (at == SIZE_MAX && i-- > 0)
        if (jitanon_jitdump_debug_fits(&w->dbg[i].rec, r) == JITANON_JITDUMP_DEBUG_SAME_ADDR) at = i;
    for (i = w->ndbg; at == SIZE_MAX && i-- > 0 && w->dbg[i].recent;)
        if (jitanon_jitdump_debug_fits(&w->dbg[i].rec, r)) at = i;
    for (i = 0; i < w->ndbg; i++) w->dbg[i].recent = 0;
    p->have_debug = at != SIZE_MAX;
    if (p->have_debug) p->debug = w->dbg[at].rec;
    return at;
}

/* Walks a dump's records, giving each LOAD (with its DEBUG_INFO and the UNWINDING_INFO
   before it) to `load`, stopping after `max_loads` LOADs, and with `moves` each MOVE to
   jitanon__inj_move.  The injector keeps no record table: it would be the largest thing
   in memory.  The loader or the scan validated the dump already. */
typedef jitanon_result (*jitanon__inj_load_fn)(jitanon__inj *, jitanon__elfout *, jitanon__inj_dump *,
                                               const jitanon_jitdump_record *, const jitanon__inj_pend *);

/* A dump's records reached perf time `t`: a followed dump that went on past samples
   counted after its end had not stopped. */
JITANON__PRIVATE void jitanon__inj_dump_time(jitanon__inj_dump *jd, uint64_t t)
{
    if (t <= jd->last_time) return;
    jd->last_time = t;
    if (jd->after && t >= jd->after_first) jd->after = 0;
}

/* The records `src` yields, until it has no more (*got: why - JITANON_END, JITANON_AGAIN at
   the end of what a live dump has written so far, or an error) or after max_loads LOADs.
   `pend` and `w` carry what waits for a LOAD from one call to the next.  `begun`
   (a followed dump's batch): the layout's begin comes with the first record, and
   *begun says whether it came (a read that finds nothing costs the layout nothing). */
JITANON__PRIVATE jitanon_result jitanon__inj_walk_src(jitanon__inj *j, jitanon__inj_dump *jd, jitanon__inj_src *src,
                                                      jitanon__inj_pend *pend, jitanon__inj_wait *w, size_t max_loads,
                                                      jitanon__inj_load_fn load, jitanon__elfout *o, int moves,
                                                      jitanon_result *got, int *begun)
{
    jitanon_jitdump_record r;
    size_t loads = 0;
    jitanon_result res = JITANON_OK;
    *got = JITANON_OK;
    while (res == JITANON_OK && loads < max_loads && (*got = jitanon__inj_src_next(src, &r)) == JITANON_OK) {
        int took;
        if (begun && !*begun) {
            *begun = 1;
            if (o->ops->begin && (res = o->ops->begin(j, o, jd)) != JITANON_OK) break;
        }
        took = jitanon__inj_pend_take(jd, &r, pend, w);
        if (!took) took = jitanon__inj_dbg_take(j, w, jd, &r);
        {
            uint64_t t = jitanon__inj_time(j, jd, r.timestamp);
            jitanon__inj_dump_time(jd, t);
            if (jd->follow && t > jd->follow->last_time) jd->follow->last_time = t;
        }
        if (took < 0) res = jitanon__inj_nomem(j, "debug or unwinding info");
        else if (!took && r.id == JITANON_JITDUMP_CODE_LOAD) {
            size_t debug = jitanon__inj_dbg_pick(w, &r, pend);
            loads++;
            res = load(j, o, jd, &r, pend);
            if (debug != SIZE_MAX) jitanon__inj_dbg_drop(w, jd, debug);
            pend->have_debug = pend->have_unwind = 0;
        } else if (!took && r.id == JITANON_JITDUMP_CODE_MOVE && moves) {
            res = jitanon__inj_move(j, jd, &r);
        }
    }
    return res;
}

/* The DEBUG_INFO still waiting when a walk ends: no LOAD took them (counted on the
   dump's first walk, the one with `moves`). */
JITANON__PRIVATE void jitanon__inj_wait_end(jitanon__inj *j, jitanon__inj_wait *w)
{
    if (w->count) j->st->dumps.debug_unmatched += w->ndbg;
    w->ndbg = 0;
    w->debug.size = 0;
}

JITANON__PRIVATE void jitanon__inj_wait_release(jitanon__inj *j, jitanon__inj_wait *w)
{
    jitanon_membuf_release(&w->debug);
    jitanon_membuf_release(&w->unwind);
    jitanon__free(&j->a, w->dbg, w->dbg_cap * sizeof *w->dbg);
    memset(w, 0, sizeof *w);
}

JITANON__PRIVATE jitanon_result jitanon__inj_walk(jitanon__inj *j, jitanon__inj_dump *jd, size_t max_loads,
                                                  jitanon__inj_load_fn load, jitanon__elfout *o, int moves)
{
    jitanon__inj_src src;
    jitanon__inj_pend pend;
    jitanon_result got, res = jitanon__inj_src_open(j, jd, &src);
    if (res != JITANON_OK) {
        jitanon__inj_src_close(&src);
        return JITANON__FAIL(j->err, res, 0, "cannot read the jitdump again");
    }
    memset(&pend, 0, sizeof pend);
    j->jit.wait.count = moves;
    res = jitanon__inj_walk_src(j, jd, &src, &pend, &j->jit.wait, max_loads, load, o, moves, &got, NULL);
    jitanon__inj_src_close(&src);
    jitanon__inj_wait_end(j, &j->jit.wait);
    return res;
}

JITANON__PRIVATE jitanon_elf_func jitanon__inj_fn_of(const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    const jitanon_jitdump_record *unwind = p->have_unwind ? &p->unwind : NULL;
    jitanon_elf_func fn;
    memset(&fn, 0, sizeof fn);
    fn.name = r->load.name;
    fn.code_addr = r->load.code_addr;
    fn.code = r->load.code;
    fn.debug = p->have_debug ? &p->debug : NULL;
    fn.unwind = unwind;
    fn.map_size = jitanon__inj_map_len(r->load.code_size, unwind ? unwind->unwind.mapped_size : 0);
    return fn;
}

/* -- ELF layouts: the implementations of jitanon__elfout ------------------------------------ */

/* Resolve only (no output): functions are known by address, nothing is written. */
JITANON__PRIVATE jitanon_result jitanon__eo_resolve_add(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                        const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    (void)o;
    return jitanon__inj_push_func(j, jd, r, p, 0, SIZE_MAX);
}

static const jitanon__elfout_ops jitanon__eo_resolve = {
    0, NULL, jitanon__eo_resolve_add, NULL, NULL, NULL, NULL
};

/* Per-function files.  Names repeat perf's (jitted-<pid>-<index>.so); a code_index a dump
   reuses gets a numbered suffix so that no earlier MMAP2 loses its file, and a second dump
   of the same process (an exec, a restarted JIT) a generation, so that it does not
   overwrite the files of the first. */
JITANON__PRIVATE jitanon_result jitanon__eo_func_name(jitanon__inj *j, jitanon__inj_dump *jd,
                                                      const jitanon_jitdump_record *r, char *name, size_t cap)
{
    size_t *used = jitanon__hmap_at(&jd->uses, &j->a, r->load.code_index, 0);
    uint64_t n;
    /* perf's name holds the load's pid; a dump from a container has its namespace pid
       (often 1 in every container), so its files are named after the recorded pid: two
       containers in one recording must not share file names */
    unsigned pid = (unsigned)(jd->sum.header.pid != jd->pid ? jd->pid : r->load.pid);
    if (!used) return jitanon__inj_nomem(j, "load index");
    n = (uint64_t)(*used)++;
    if (jd->generation)
        jitanon__fmt(name, cap, "jitted-%u.%u-%U-%U.so", pid, jd->generation, r->load.code_index, n);
    else if (n == 0) jitanon__fmt(name, cap, "jitted-%u-%U.so", pid, r->load.code_index);
    else jitanon__fmt(name, cap, "jitted-%u-%U-%U.so", pid, r->load.code_index, n);
    return JITANON_OK;
}

/* One function's file, into `elf`. */
JITANON__PRIVATE jitanon_result jitanon__eo_func_build(jitanon__inj *j, jitanon_membuf *elf, const jitanon__inj_dump *jd,
                                                       const jitanon_jitdump_record *r, const jitanon__inj_pend *p,
                                                       uint64_t *pgoff)
{
    jitanon_elf_func fn = jitanon__inj_fn_of(r, p);
    jitanon_elf_opts eo = jitanon__inj_elf_opts(j, &jd->sum);
    jitanon_sink sink;
    jitanon_elf_info info;
    jitanon_result res;
    elf->size = 0;
    elf->allocator = j->a;
    sink.write_fn = jitanon_membuf_write;
    sink.user = elf;
    res = jitanon__elf_write_one(sink, &jd->sum.header, &fn, &eo, &info, &j->sha_hw, j->err);
    if (res == JITANON_OK) *pgoff = info.text_offset;
    return res;
}

JITANON__PRIVATE jitanon_result jitanon__eo_func_begin(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    (void)j;
    o->u.fn.first_event = jd->count;
    return JITANON_OK;
}

/* Per-function files, written by the calling thread, or by writer threads while it
   builds the next ones.  The calling thread learns at once that a file could not be
   written and counts no function; a thread tells it late, so the function is counted
   and dropped at the end of the dump (jitanon__inj_drop_failed). */
JITANON__PRIVATE jitanon_result jitanon__eo_func_add(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                     const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    jitanon__inj_pool *pool = o->u.fn.pool;
    char name[96];
    uint64_t pgoff = 0;
    size_t path;
    jitanon_result res = jitanon__eo_func_name(j, jd, r, name, sizeof name);
    if (res == JITANON_OK) res = jitanon__eo_func_build(j, &o->u.fn.elf, jd, r, p, &pgoff);
    if (res != JITANON_OK) return res;
    if (!pool && !jitanon__inj_put_file(j, NULL, jd->dir, &o->u.fn.elf, name, SIZE_MAX))
        return JITANON_OK; /* logged; no mapping */
    if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
    res = jitanon__inj_push_func(j, jd, r, p, pgoff, path);
    if (res == JITANON_OK && pool) jitanon__inj_put_file(j, pool, jd->dir, &o->u.fn.elf, name, j->jit.nfuncs - 1);
    return res;
}

JITANON__PRIVATE void jitanon__eo_func_free(jitanon__inj *j, jitanon__elfout *o)
{
    jitanon__inj_threads_stop(j, o->u.fn.pool);
    jitanon_membuf_release(&o->u.fn.elf);
}

static const jitanon__elfout_ops jitanon__eo_direct = {
    0, jitanon__eo_func_begin, jitanon__eo_func_add, NULL, NULL, NULL, jitanon__eo_func_free
};

JITANON__PRIVATE jitanon_result jitanon__eo_threads_begin(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon__eo_func_begin(j, o, jd);
    o->u.fn.pool = jitanon__inj_threads(j, jd->dir);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__eo_threads_end(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    if (o->u.fn.pool) {
        jitanon__inj_threads_stop(j, o->u.fn.pool);
        o->u.fn.pool = NULL;
        jitanon__inj_drop_failed(j, jd, o->u.fn.first_event);
    }
    return JITANON_OK;
}

static const jitanon__elfout_ops jitanon__eo_threads = {
    0, jitanon__eo_threads_begin, jitanon__eo_func_add, jitanon__eo_threads_end,
    NULL, NULL, jitanon__eo_func_free
};

/* Sampled (JITANON_ELF_FILES_SAMPLED): every function gets its name and mapping now, at
   the pgoff every per-function file puts its code at; files are written at the end for
   the functions a sample resolved into. */
JITANON__PRIVATE jitanon_result jitanon__eo_sampled_begin(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon_elf_builder tb;
    jitanon_result res = jitanon_elf_builder_init(&tb, &jd->sum.header, &j->opts->elf, j->err);
    if (res != JITANON_OK) return res;
    jd->text_base = tb.text_base;
    jitanon_elf_builder_release(&tb);
    return jitanon__eo_func_begin(j, o, jd);
}

JITANON__PRIVATE jitanon_result jitanon__eo_sampled_add(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                        const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    char name[96];
    size_t path;
    jitanon_result res = jitanon__eo_func_name(j, jd, r, name, sizeof name);
    (void)o;
    if (res != JITANON_OK) return res;
    if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX)
        return jitanon__inj_nomem(j, "paths");
    return jitanon__inj_push_func(j, jd, r, p, jd->text_base, path);
}

/* A sample's word in anonymous memory: a claim there is taken back (region layout, file
   mode: jitanon__inj_claim). */
JITANON__PRIVATE void jitanon__inj_claim_hit(jitanon__inj *j, uint32_t pid, uint64_t ip);

/* What perf report will resolve `ip` to in the output is what the engine says now.
   Returns 1 when ip is inside a function past its first byte (so ip - 1 is that
   function too). */
JITANON__PRIVATE int jitanon__inj_hit(jitanon__inj *j, uint32_t pid, uint64_t ip)
{
    jitanon_range where;
    if (jitanon__trim_resolve_fast(j->maps.trim, pid, ip, &where) != JITANON_TRIM_JIT || where.id >= j->jit.nfuncs) {
        if (j->jit.nclaimed) jitanon__inj_claim_hit(j, pid, ip);
        return 0;
    }
    j->jit.hot[where.id].hit = 1;
    return where.start < ip;
}

#define JITANON__PERF_BRANCH_HW_INDEX (1ull << 17) /* branch_sample_type: hw_idx before the entries */
#define JITANON__PERF_MISC_MMAP_DATA (1u << 13) /* an MMAP (v1) of data, not code */

/* An address that may be a return address: the function it is in, or (a call that ends
   a function returns past it) the one before it. */
JITANON__PRIVATE void jitanon__inj_hit_ret(jitanon__inj *j, uint32_t pid, uint64_t ip)
{
    if (ip && !jitanon__inj_hit(j, pid, ip)) (void)jitanon__inj_hit(j, pid, ip - 1);
}

/* A word that may be an address in jitted code; most are not near any.  One with bits 48
   and up set is looked up without them too: on arm64 a return address that pointer
   authentication signed (pac-ret, in the frame records of a JIT with control-flow
   integrity, and in the link register once a function signed it) carries its code there,
   above the 48-bit user address, and unwinders strip it; x86-64's tags (LAM) sit there
   too.  The word as it is comes first: code above 2^48 (5-level page tables, arm64's
   52-bit addresses) has no room for a tag there.  A word that only looks like one costs
   at most one file more. */
JITANON__PRIVATE void jitanon__inj_hit_word(jitanon__inj *j, uint32_t pid, uint64_t w)
{
    if (w >= j->jit.code_lo && w - 1 <= j->jit.code_hi && w) jitanon__inj_hit_ret(j, pid, w);
    else if (w >> 48 && (w &= ((uint64_t)1 << 48) - 1) >= j->jit.code_lo && w - 1 <= j->jit.code_hi && w)
        jitanon__inj_hit_ret(j, pid, w);
}

/* Views of a sample's fields past its callchain that hold addresses: the data address,
   the branch stack (from, to, flags each), the user registers and the copied user stack
   (`step`: 4 for a 32-bit process, else 8).  The layout is the kernel's, in sample_type
   order (perf_event.h); the reader checked the fields up to the callchain, and this walks
   on with the cursor, stopping where a field does not fit: the fields before it are
   set, the rest stay empty.  Both the sampled files (jitanon__inj_sample_words) and
   holding back (jitanon__inj_undecided) read a sample through it. */
typedef struct jitanon__inj_swords {
    const uint8_t *addr;         /* 8 bytes, or NULL */
    const uint8_t *branch;       /* nbranch entries of 24 bytes */
    const uint8_t *regs;         /* nregs words of 8 bytes */
    const uint8_t *stack;        /* nstack bytes */
    size_t nbranch, nregs, nstack;
    unsigned step;
} jitanon__inj_swords;

JITANON__PRIVATE void jitanon__inj_sample_views(const jitanon__inj *j, const jitanon__inj_rec *r, jitanon__inj_swords *v)
{
    const jitanon_perf_attr *a = &j->in->attrs[r->attr];
    const uint64_t st = a->sample_type, wide = JITANON_PERF_SAMPLE_IDENTIFIER | JITANON_PERF_SAMPLE_IP |
                                               JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME;
    const uint8_t *raw = j->round.bytes.data + r->off;
    int big = j->in->big_endian;
    jitanon__cur c = jitanon__cur_make(raw + 8, r->size - 8, r->offset + 8, big);
    uint64_t n, regs = 0, branch_type = 0, abi;
    memset(v, 0, sizeof *v);
    v->step = 8;
    if (a->raw.size >= 80) branch_type = jitanon__rd64(a->raw.data + 72, big);
    if (a->raw.size >= 88) regs = jitanon__rd64(a->raw.data + 80, big);
    if (!jitanon__take(&c, 8 * (size_t)jitanon__popcount64(st & wide))) return;
    if ((st & JITANON_PERF_SAMPLE_ADDR) && c.left >= 8) v->addr = jitanon__take(&c, 8);
    n = jitanon__popcount64(st & (JITANON_PERF_SAMPLE_ID | JITANON_PERF_SAMPLE_STREAM_ID | JITANON_PERF_SAMPLE_CPU |
                                  JITANON_PERF_SAMPLE_PERIOD));
    if (!jitanon__take(&c, 8 * (size_t)n)) return;
    if ((st & JITANON_PERF_SAMPLE_READ) && !jitanon__pd_skip_read(&c, a->read_format)) return;
    if (st & JITANON_PERF_SAMPLE_CALLCHAIN) {
        if (c.left < 8 || (n = jitanon__get64(&c)) > c.left / 8 || !jitanon__take(&c, (size_t)n * 8)) return;
    }
    if (st & JITANON_PERF_SAMPLE_RAW) {
        if (c.left < 4 || (n = jitanon__get32(&c)) > c.left || !jitanon__take(&c, (size_t)n)) return;
    }
    if (st & JITANON_PERF_SAMPLE_BRANCH_STACK) {
        if (c.left < 8 || (n = jitanon__get64(&c)) > c.left / 24) return;
        if ((branch_type & JITANON__PERF_BRANCH_HW_INDEX) && !jitanon__take(&c, 8)) return;
        if (n > c.left / 24) return;
        v->branch = jitanon__take(&c, (size_t)n * 24);
        v->nbranch = (size_t)n;
    }
    abi = 2; /* PERF_SAMPLE_REGS_ABI_64, when there are no registers to tell */
    if (st & JITANON_PERF_SAMPLE_REGS_USER) {
        if (c.left < 8) return;
        if ((abi = jitanon__get64(&c)) != 0) {
            n = jitanon__popcount64(regs);
            if (n > c.left / 8) return;
            v->regs = jitanon__take(&c, (size_t)n * 8);
            v->nregs = (size_t)n;
        }
    }
    v->step = abi == 1 ? 4 : 8;
    if (st & JITANON_PERF_SAMPLE_STACK_USER) {
        if (c.left < 8 || (n = jitanon__get64(&c)) > c.left) return;
        v->stack = jitanon__take(&c, (size_t)n);
        v->nstack = v->stack ? (size_t)n : 0;
    }
}

/* The addresses of a sample past its callchain that perf or an unwinder resolves (see
   jitanon_elf_files): the data address, the branch stack's from and to, the user
   registers and every word of the copied user stack. */
JITANON__PRIVATE void jitanon__inj_sample_words(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_swords v;
    int big = j->in->big_endian;
    size_t i;
    jitanon__inj_sample_views(j, r, &v);
    if (v.addr) jitanon__inj_hit_ret(j, r->pid, jitanon__rd64(v.addr, big));
    for (i = 0; i < v.nbranch; i++) {
        jitanon__inj_hit_ret(j, r->pid, jitanon__rd64(v.branch + 24 * i, big));     /* from */
        jitanon__inj_hit_ret(j, r->pid, jitanon__rd64(v.branch + 24 * i + 8, big)); /* to */
    }
    for (i = 0; i < v.nregs; i++) jitanon__inj_hit_word(j, r->pid, jitanon__rd64(v.regs + 8 * i, big));
    /* Every 4-byte step: a 64-bit process keeps return addresses 8-aligned from the
       stack pointer, which is where the copy starts, but nothing makes an unwinder read
       only those; a 32-bit one keeps 4-byte words. */
    for (i = 0; i + v.step <= v.nstack; i += 4)
        jitanon__inj_hit_word(j, r->pid, v.step == 4 ? jitanon__rd32(v.stack + i, big) : jitanon__rd64(v.stack + i, big));
}

/* The sample's ip, its callchain and (see jitanon__inj_sample_words) its other
   addresses.  A callchain holds return addresses (jitanon__inj_hit_ret).  Entries from
   PERF_CONTEXT_MAX (-4095) up mark kernel/user sections and are no addresses. */
JITANON__PRIVATE void jitanon__eo_sampled_sample(jitanon__inj *j, jitanon__elfout *o, const jitanon__inj_rec *r)
{
    const uint64_t more = JITANON_PERF_SAMPLE_ADDR | JITANON_PERF_SAMPLE_BRANCH_STACK | JITANON_PERF_SAMPLE_REGS_USER |
                          JITANON_PERF_SAMPLE_STACK_USER;
    size_t i;
    (void)o;
    (void)jitanon__inj_hit(j, r->pid, r->start);
    if (r->chain_nr) {
        jitanon_bytes chain;
        chain.data = j->round.bytes.data + r->off + r->chain_off;
        chain.size = r->chain_nr * 8;
        for (i = 0; i < r->chain_nr; i++) {
            uint64_t ip = jitanon_perf_u64_at(chain, i, j->in->big_endian);
            if (ip >= (uint64_t)-4095) continue;
            jitanon__inj_hit_ret(j, r->pid, ip);
        }
    }
    if (r->attr < j->in->attr_count && (j->in->attrs[r->attr].sample_type & more)) jitanon__inj_sample_words(j, r);
}

/* The k-th LOAD of a dump is its k-th function: build and write its file if it was hit. */
JITANON__PRIVATE jitanon_result jitanon__eo_sampled_file(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                         const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    size_t f = jd->first_func + o->u.fn.nth++;
    const char *dir = jd->dir;
    uint64_t pgoff;
    jitanon_result res;
    if (!j->jit.hot[f].hit) return JITANON_OK;
    if ((res = jitanon__eo_func_build(j, &o->u.fn.elf, jd, r, p, &pgoff)) != JITANON_OK) return res;
    jitanon__inj_put_file(j, o->u.fn.pool, dir, &o->u.fn.elf, jitanon__inj_path(j, j->jit.funcs[f].path) + strlen(dir) + 1,
                          f); /* logged */
    return JITANON_OK;
}

/* Every sample was seen: write the files of the functions one resolved into, reading
   each dump once more. */
JITANON__PRIVATE jitanon_result jitanon__eo_sampled_finish(jitanon__inj *j, jitanon__elfout *o)
{
    size_t d, k;
    jitanon_result res = JITANON_OK;
    for (d = 0; d < j->jit.ndumps && res == JITANON_OK; d++) {
        jitanon__inj_dump *jd = &j->jit.dumps[d];
        int any = 0;
        for (k = 0; k < jd->nfuncs; k++) any |= j->jit.hot[jd->first_func + k].hit;
        if (!any) continue;
        o->u.fn.pool = jitanon__inj_threads(j, jd->dir);
        o->u.fn.nth = 0;
        res = jitanon__inj_walk(j, jd, jd->nfuncs, jitanon__eo_sampled_file, o, 0);
        jitanon__inj_threads_stop(j, o->u.fn.pool);
        o->u.fn.pool = NULL;
    }
    return res;
}

static const jitanon__elfout_ops jitanon__eo_sampled = {
    1, jitanon__eo_sampled_begin, jitanon__eo_sampled_add, NULL, jitanon__eo_sampled_sample,
    jitanon__eo_sampled_finish, jitanon__eo_func_free
};

/* Per-process files: one streaming builder collects every function of a dump, then one
   file is written. */

/* jitanon_elf_code_fn of a streamed per-process file: the k-th LOAD of the dump is the
   k-th function added. */
JITANON__PRIVATE int jitanon__eo_proc_code(void *user, size_t index, jitanon_bytes *code)
{
    jitanon__eo_proc *s = (jitanon__eo_proc *)user;
    jitanon_jitdump_record r;
    (void)index;
    if (!s->code_open) {
        s->code_open = 1;
        if (jitanon__inj_src_open(s->j, s->jd, &s->code_src) != JITANON_OK) return 1;
    }
    while (jitanon__inj_src_next(&s->code_src, &r) == JITANON_OK)
        if (r.id == JITANON_JITDUMP_CODE_LOAD) {
            *code = r.load.code;
            return 0;
        }
    return 1;
}

JITANON__PRIVATE void jitanon__eo_proc_free(jitanon__inj *j, jitanon__elfout *o)
{
    jitanon__eo_proc *s = &o->u.proc;
    (void)j;
    if (s->code_open) jitanon__inj_src_close(&s->code_src);
    s->code_open = 0;
    jitanon_elf_builder_release(&s->pb);
    memset(&s->pb, 0, sizeof s->pb);
    jitanon_membuf_release(&s->elf);
}

JITANON__PRIVATE jitanon_result jitanon__eo_proc_begin(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon__eo_proc *s = &o->u.proc;
    jitanon_elf_opts eo = jitanon__inj_elf_opts(j, &jd->sum);
    jitanon_result res;
    jitanon__eo_proc_free(j, o);
    if (jd->generation) jitanon__fmt(s->name, sizeof s->name, "jitted-%u.%u.so", (unsigned)jd->pid, jd->generation);
    else jitanon__fmt(s->name, sizeof s->name, "jitted-%u.so", (unsigned)jd->pid);
    if ((s->path = jitanon__inj_add_path(j, jd->dir, s->name)) == SIZE_MAX)
        return jitanon__inj_nomem(j, "paths");
    if ((res = jitanon_elf_builder_init(&s->pb, &jd->sum.header, &eo, j->err)) != JITANON_OK) return res;
    if (!jd->dump) { /* streamed: the code is read again as the file is written */
        s->j = j;
        s->jd = jd;
        jitanon_elf_builder_stream_code(&s->pb, jitanon__eo_proc_code, s);
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__eo_proc_add(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                     const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    jitanon_elf_func fn = jitanon__inj_fn_of(r, p);
    uint64_t pgoff = 0;
    jitanon_result res = jitanon_elf_builder_add(&o->u.proc.pb, &fn, &pgoff, j->err);
    if (res != JITANON_OK) return res;
    return jitanon__inj_push_func(j, jd, r, p, pgoff, o->u.proc.path);
}

/* What jitanon__os.write_atomic writes for a per-process file: the builder's bytes. */
typedef struct jitanon__eo_fill {
    jitanon_elf_builder *pb;
    jitanon_elf_info *info;
    jitanon_error *err;
} jitanon__eo_fill;

JITANON__PRIVATE jitanon_result jitanon__eo_proc_fill(void *ctx, jitanon_sink sink)
{
    jitanon__eo_fill *f = (jitanon__eo_fill *)ctx;
    return jitanon_elf_builder_finish(f->pb, sink, f->info, f->err);
}

/* A per-process file is as large as all the code of a dump: with the default I/O it is
   streamed into a temporary file and renamed into place (under the same rules as
   jitanon__inj_write_default) instead of being held in memory.  JITANON_ERR_WRITE: the
   file could not be written (logged); other errors are fatal. */
JITANON__PRIVATE jitanon_result jitanon__eo_proc_stream(jitanon__inj *j, jitanon__eo_proc *s, const char *dir)
{
    char path[4096];
    jitanon_elf_info info;
    jitanon__eo_fill fill;
    jitanon_result res;
    if (!(jitanon_features() & JITANON_FEATURE_POSIX)) {
        j->st->elf.refused++;
        jitanon__inj_log(j, "cannot write %s%s: built without POSIX file calls", s->name, NULL);
        return JITANON_ERR_WRITE;
    }
    fill.pb = &s->pb;
    fill.info = &info;
    fill.err = j->err;
    if (jitanon__fmt(path, sizeof path, "%s/%s", dir, s->name) >= sizeof path) res = JITANON_ERR_WRITE;
    else res = j->os->write_atomic(path, &j->a, jitanon__eo_proc_fill, &fill);
    if (res == JITANON_ERR_WRITE) {
        jitanon__inj_written(j, s->name, 0, 1, SIZE_MAX);
        return JITANON_ERR_WRITE;
    }
    if (res != JITANON_OK) return res;
    jitanon__inj_written(j, s->name, (size_t)info.file_size, 0, SIZE_MAX);
    jitanon__inj_cache_dir(j, dir);
    jitanon__inj_listed(j, dir, s->name, info.build_id,
                        jitanon__inj_cache_put(j->os, &j->bc, s->name, NULL, info.build_id));
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__eo_proc_end(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon__eo_proc *s = &o->u.proc;
    const char *dir = jd->dir;
    jitanon_result res;
    int written;
    if (j->io.write_elf == j->os->write_elf) {
        res = jitanon__eo_proc_stream(j, s, dir);
        written = res == JITANON_OK;
        if (res == JITANON_ERR_WRITE) res = JITANON_OK; /* logged */
    } else {
        jitanon_sink sink;
        s->elf.allocator = j->a;
        s->elf.size = 0;
        sink.write_fn = jitanon_membuf_write;
        sink.user = &s->elf;
        res = jitanon_elf_builder_finish(&s->pb, sink, NULL, j->err);
        written = res == JITANON_OK && jitanon__inj_put_file(j, NULL, dir, &s->elf, s->name, SIZE_MAX);
    }
    if (res == JITANON_OK && !written) jd->count = 0; /* no file: no mappings */
    jitanon__eo_proc_free(j, o);
    return res;
}

static const jitanon__elfout_ops jitanon__eo_process = {
    0, jitanon__eo_proc_begin, jitanon__eo_proc_add, jitanon__eo_proc_end, NULL, NULL,
    jitanon__eo_proc_free
};

/* Per-region files (JITANON_ELF_PER_REGION).  perf resolves a slice of any
   file by its pgoff, but hotspot's parser keys its address and symbol caches by path and
   `ip - base`: base is the mapping's start, unless the mapping inherits the start of the
   last pgoff-0 mapping of the same file that the process registered (no other file mapped
   since, and at a lower address); pgoff is not in the key.  Slices of one file, each at
   its own start, collide there (what --elf=process suffers).  So a region file mirrors its
   code's addresses - file offset = address - B, one B per file - and every function's
   MMAP2 has start - pgoff == B (which elfutils, under the parser, takes as the module's
   load address); when the parser would not hold the file's base as the process's last
   one, a one-byte pgoff-0 mapping of the file goes out before it and a one-byte //anon
   after it (jitanon__inj_frame, jitanon__inj_emit_framed), at JITANON__REGION_KEY: every
   slice then keys its addresses from that one address, the same for the whole file.  The
   key lies below the lowest address a process can map (vm.mmap_min_addr is 4 KiB or more)
   because the parser throws away every module it reported (and the debug info it read,
   libc's alone megabytes to inflate) whenever a mapping replaces one that starts inside a
   reported module: framing at B, which every file's module covers, did that at every
   frame (node compiling throughout: 527 flushes against 60 with per-function files).
   A file never holds two pieces of code at one address (neither perf nor hotspot forgets
   what an offset held), nor a hole wider than JITANON__REGION_GAP.  A dump (file mode)
   or a followed read of a live pipe is laid out at its end, knowing all its code, cut
   into runs where a hole passes the gap, with B outside the code of every function of
   the batch (looked for down to JITANON__REGION_REACH below).  A pipe's files are
   written then (its reader may open one as soon as a sample needs it), so code over
   earlier code of the batch goes to a file one generation higher; file mode's are
   written when the recording has been read (jitanon__eo_region_finish), and code over
   code takes the earlier code's place in its run's file when no sample hit that
   (jitanon__eo_region_slot).
   JITANON__REGION_GAP: a hole is written as zeros (perf archive tars files whole, sparse or
   not); 64 KiB is four of V8's code-space page headers apart yet keeps a run of pages in one
   file, and costs at most 64 KiB a split where a file costs four inodes and a base MMAP2
   each time another file comes between. */
#define JITANON__REGION_GAP ((uint64_t)64 << 10)
#define JITANON__REGION_KEY ((uint64_t)0x100)
#define JITANON__REGION_REACH ((uint64_t)1 << 20)
/* Whether region files are written when the recording has been read (every dump's
   records kept until then): a file read to a file.  A pipe's reader may open a file as
   soon as a sample needs it, so a pipe's and a followed read's are written at once. */
JITANON__PRIVATE int jitanon__eo_region_online(const jitanon__inj *j)
{
    return !j->jit.live && j->out.w && j->out.w->mode == JITANON_PERF_FILE;
}

JITANON__PRIVATE void jitanon__eo_region_free(jitanon__inj *j, jitanon__elfout *o)
{
    jitanon__eo_region *s = &o->u.reg;
    size_t i;
    jitanon_membuf_release(&s->arena);
    jitanon_membuf_release(&s->elf);
    jitanon__free(&j->a, s->places, s->places_cap * sizeof *s->places);
    jitanon__free(&j->a, s->order, s->order_cap * sizeof *s->order);
    for (i = 0; i < s->nocc; i++) jitanon_rangemap_release(&s->occ[i]);
    jitanon__free(&j->a, s->occ, s->occ_cap * sizeof *s->occ);
    jitanon__free(&j->a, s->pieces, s->pieces_cap * sizeof *s->pieces);
    jitanon__free(&j->a, s->fresh, s->fresh_cap * sizeof *s->fresh);
    memset(s, 0, sizeof *s);
}

JITANON__PRIVATE jitanon_result jitanon__eo_region_begin(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon__eo_region *s = &o->u.reg;
    jitanon_elf_builder tb;
    jitanon_result res = jitanon_elf_builder_init(&tb, &jd->sum.header, &j->opts->elf, j->err);
    if (res != JITANON_OK) return res;
    s->room = jd->text_base = tb.text_base;
    jitanon_elf_builder_release(&tb);
    s->arena.allocator = s->elf.allocator = j->a;
    if (!jitanon__eo_region_online(j)) { /* laid out at the batch's end; else every dump is kept to the end */
        s->arena.size = 0;
        s->nplaces = 0;
    }
    s->first_place = s->nplaces;
    s->first_event = jd->count;
    return JITANON_OK;
}

/* Copies a record's bytes into the arena: their offset, or SIZE_MAX when out of memory. */
JITANON__PRIVATE size_t jitanon__eo_region_keep(jitanon__eo_region *s, const jitanon_jitdump_record *r)
{
    size_t at = s->arena.size;
    return jitanon_membuf_write(&s->arena, r->raw.data, r->raw.size) ? SIZE_MAX : at;
}

/* Whether a sample of the recording copies user stacks (--call-graph dwarf): then perf
   unwinds them with the files' .eh_frame. */
JITANON__PRIVATE int jitanon__inj_stack_user(const jitanon__inj *j)
{
    size_t i;
    for (i = 0; i < j->in->attr_count; i++)
        if (j->in->attrs[i].sample_type & JITANON_PERF_SAMPLE_STACK_USER) return 1;
    return 0;
}

/* Every function is mapped now (its pgoff and file are set at the batch's end) - but, in
   a recording with user stacks, one with unwinding info, which gets a file of its own as
   in perf's layout: perf's unwinder (libunwind) reads .eh_frame_hdr through the process's
   mappings, at the sampled mapping's start - pgoff + the section's offset, and only a file
   of one function puts that inside the function's own mapping (its code, then the
   unwinding info the runtime keeps mapped after it, as the runtime has them); a region
   file's tables would lie past its code, in memory that maps something else.  Nothing
   else reads .eh_frame through memory (hotspot's unwinder reads it from the file). */
JITANON__PRIVATE jitanon_result jitanon__eo_region_add(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd,
                                                       const jitanon_jitdump_record *r, const jitanon__inj_pend *p)
{
    jitanon__eo_region *s = &o->u.reg;
    jitanon__eo_place *pl;
    jitanon_range under;
    jitanon_result res;
    size_t path = SIZE_MAX;
    int unwind;
    /* File mode: code inside a file's mapping (V8's embedded builtins, in node's
       executable) gets a file of its own, written only if a sample resolves into it: a
       region file's module there overlaps the executable's, and hotspot's parser then
       fails to report one of them ("??") and throws its modules away. */
    int own = jitanon__eo_region_online(j) && j->maps.trim &&
              jitanon__trim_resolve_fast(j->maps.trim, jd->pid, r->load.code_addr, &under) == JITANON_TRIM_FILE;
    if (p->have_unwind && p->unwind.unwind.eh_frame.size && !j->opts->elf.no_unwind && jitanon__inj_stack_user(j)) {
        char name[96];
        uint64_t pgoff = 0;
        if ((res = jitanon__eo_func_name(j, jd, r, name, sizeof name)) != JITANON_OK ||
            (res = jitanon__eo_func_build(j, &s->elf, jd, r, p, &pgoff)) != JITANON_OK)
            return res;
        if (!jitanon__inj_put_file(j, NULL, jd->dir, &s->elf, name, SIZE_MAX)) return JITANON_OK; /* logged; no mapping */
        if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
        return jitanon__inj_push_func(j, jd, r, p, pgoff, path);
    }
    if (!jitanon__grow(&j->a, (void **)&s->places, &s->places_cap, s->nplaces + 1, sizeof *s->places))
        return jitanon__inj_nomem(j, "region functions");
    pl = &s->places[s->nplaces];
    pl->load = jitanon__eo_region_keep(s, r);
    pl->load_len = (size_t)r->raw.size;
    pl->load_offset = r->offset;
    pl->debug = p->have_debug ? jitanon__eo_region_keep(s, &p->debug) : SIZE_MAX - 1;
    pl->debug_len = p->have_debug ? (size_t)p->debug.raw.size : 0;
    /* A region file keeps no unwinding tables in a recording without copied user stacks:
       nothing reads them there (perf unwinds frame pointers, hotspot's parser copied stacks
       only), and they would run its module past its code, over the next file's: node -g's
       tables ran to 27 KiB, and elfutils then reported one of the two files nowhere (102
       frames misnamed in hotspot on node's bench recording).  With user stacks, code with
       tables gets a file of its own (above). */
    unwind = p->have_unwind && (own || jitanon__inj_stack_user(j));
    pl->unwind = unwind ? jitanon__eo_region_keep(s, &p->unwind) : SIZE_MAX - 1;
    pl->unwind_len = unwind ? (size_t)p->unwind.raw.size : 0;
    if (pl->load == SIZE_MAX || pl->debug == SIZE_MAX || pl->unwind == SIZE_MAX)
        return jitanon__inj_nomem(j, "region code");
    if (pl->debug == SIZE_MAX - 1) pl->debug = SIZE_MAX;
    if (pl->unwind == SIZE_MAX - 1) pl->unwind = SIZE_MAX;
    if (own) {
        char name[96];
        if ((res = jitanon__eo_func_name(j, jd, r, name, sizeof name)) != JITANON_OK) return res;
        if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
    }
    if ((res = jitanon__inj_push_func(j, jd, r, p, own ? jd->text_base : 0, path)) != JITANON_OK) return res;
    pl->func = j->jit.nfuncs - 1;
    pl->dump = (size_t)(jd - j->jit.dumps);
    pl->room = s->room;
    pl->region = SIZE_MAX;
    pl->own = own;
    pl->addr = r->load.code_addr;
    pl->size = own ? jitanon__inj_map_len(r->load.code_size, j->jit.funcs[pl->func].mapped_size) : r->load.code_size;
    if (pl->size == 0) pl->size = 1; /* two empty functions at one address must not share it either */
    s->nplaces++;
    return JITANON_OK;
}

JITANON__PRIVATE int jitanon__eo_region_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__eo_place *p = (const jitanon__eo_place *)ctx;
    return p[a].gen < p[b].gen || (p[a].gen == p[b].gen && p[a].addr < p[b].addr);
}

/* B for a file whose code starts at a0: `room` below it, then lower until no function of
   the batch covers it (`seen` holds them all). 0 when a0 leaves no room. */
JITANON__PRIVATE int jitanon__eo_region_base(const jitanon_rangemap *seen, uint64_t a0, uint64_t room, uint64_t *base)
{
    uint64_t b;
    jitanon_rangemap_iter it;
    jitanon_range r;
    if (a0 <= room) return 0;
    b = a0 - room;
    for (;;) {
        jitanon_rangemap_iter_begin(&it, seen, b, 1);
        if (!jitanon_rangemap_iter_next(&it, &r)) break;
        if (r.start == 0 || a0 - (r.start - 1) > room + JITANON__REGION_REACH) {
            b = a0 - room; /* packed too densely: the base then covers a byte of code */
            break;
        }
        b = r.start - 1;
    }
    *base = b;
    return 1;
}

/* A record the arena holds again as a record (read and validated once: cannot fail). */
JITANON__PRIVATE void jitanon__eo_region_rec(const jitanon__eo_region *s, const jitanon__inj_dump *jd, size_t at,
                                             size_t len, uint64_t offset, jitanon_jitdump_record *out)
{
    uint64_t missing = 0;
    (void)jitanon__jitdump_parse_record((const uint8_t *)s->arena.data + at, len, offset, jd->sum.header.big_endian,
                                        UINT64_MAX, 0, out, &missing, NULL);
}

/* Builds the file of s->pieces[0, n) (one dump, address order, none overlapping), each
   at file offset = its address - base, into s->elf.  A piece that is not a whole function
   (what code mapped later over an unsampled one left of it) keeps the function's name
   over its bytes, without lines or unwinding rows: perf names a sample there as with the
   function's own file (the name, not the offset, is what moves). */
JITANON__PRIVATE jitanon_result jitanon__eo_region_build(jitanon__inj *j, jitanon__eo_region *s, jitanon__inj_dump *jd,
                                                         uint64_t base, size_t n)
{
    const jitanon__eo_place *pl = s->places;
    jitanon_elf_opts eo = jitanon__inj_elf_opts(j, &jd->sum);
    jitanon_elf_builder b;
    jitanon_sink sink;
    jitanon_result res;
    size_t i;
    if ((res = jitanon_elf_builder_init(&b, &jd->sum.header, &eo, j->err)) != JITANON_OK) return res;
    jitanon__elf_builder_sha(&b, &j->sha_hw);
    for (i = 0; i < n && res == JITANON_OK; i++) {
        const jitanon__eo_piece *c = &s->pieces[i];
        const jitanon__eo_place *p = &pl[c->place];
        jitanon_jitdump_record load;
        jitanon__inj_pend pend;
        jitanon_elf_func fn;
        uint64_t skip = c->addr - p->addr;
        memset(&pend, 0, sizeof pend);
        jitanon__eo_region_rec(s, jd, p->load, p->load_len, p->load_offset, &load);
        if ((pend.have_debug = p->debug != SIZE_MAX) != 0)
            jitanon__eo_region_rec(s, jd, p->debug, p->debug_len, 0, &pend.debug);
        if ((pend.have_unwind = p->unwind != SIZE_MAX) != 0)
            jitanon__eo_region_rec(s, jd, p->unwind, p->unwind_len, 0, &pend.unwind);
        fn = jitanon__inj_fn_of(&load, &pend);
        if (skip || c->len < p->size) { /* a piece */
            if (skip >= fn.code.size) continue; /* past the code (an empty function's byte) */
            fn.code.data += skip;
            fn.code.size = fn.code.size - skip < c->len ? fn.code.size - skip : c->len;
            fn.code_addr += skip;
            fn.debug = fn.unwind = NULL;
            fn.map_size = 0;
        }
        if (fn.map_size > c->len) fn.map_size = c->len; /* what later code left of its tail */
        fn.file_offset = c->addr - base;
        res = jitanon_elf_builder_add(&b, &fn, NULL, j->err);
    }
    s->elf.size = 0;
    sink.write_fn = jitanon_membuf_write;
    sink.user = &s->elf;
    if (res == JITANON_OK) res = jitanon_elf_builder_finish(&b, sink, NULL, j->err);
    jitanon_elf_builder_release(&b);
    return res;
}

/* A region file's name (the dump's next) into name[96]. */
JITANON__PRIVATE void jitanon__eo_region_name(jitanon__inj_dump *jd, char *name)
{
    if (jd->generation)
        jitanon__fmt(name, 96, "jitted-%u.%u-r%U.so", (unsigned)jd->pid, jd->generation, jd->regions++);
    else jitanon__fmt(name, 96, "jitted-%u-r%U.so", (unsigned)jd->pid, jd->regions++);
}

/* Fills region file jit.regions[nregions] (grown by the caller; it counts it too). */
JITANON__PRIVATE void jitanon__eo_region_new(jitanon__inj *j, uint64_t base, size_t path, size_t dump)
{
    jitanon__inj_region *g = &j->jit.regions[j->jit.nregions];
    g->base = base;
    g->key = base > JITANON__REGION_KEY ? JITANON__REGION_KEY : base;
    g->path = path;
    g->dump = dump;
    g->next = SIZE_MAX;
}

/* Places order[from, to) as whole pieces, for jitanon__eo_region_build. */
JITANON__PRIVATE int jitanon__eo_region_whole(jitanon__inj *j, jitanon__eo_region *s, size_t from, size_t to)
{
    size_t i;
    if (!jitanon__grow(&j->a, (void **)&s->pieces, &s->pieces_cap, to - from, sizeof *s->pieces)) return 0;
    for (i = from; i < to; i++) {
        s->pieces[i - from].place = s->order[i];
        s->pieces[i - from].addr = s->places[s->order[i]].addr;
        s->pieces[i - from].len = s->places[s->order[i]].size;
    }
    return 1;
}

/* The region file of places order[from, to) (one generation, address order): its B,
   name and functions; a pipe's is built and written now, file mode's when the recording
   has been read (jitanon__eo_region_finish).  *written: 0 when it could not be (logged). */
JITANON__PRIVATE jitanon_result jitanon__eo_region_file(jitanon__inj *j, jitanon__eo_region *s, jitanon__inj_dump *jd,
                                                        const jitanon_rangemap *seen, size_t from, size_t to, int *written)
{
    jitanon__eo_place *pl = s->places;
    jitanon_result res;
    char name[96];
    uint64_t base = 0;
    size_t i, path;
    int now = !jitanon__eo_region_online(j);
    *written = 0;
    if (!jitanon__eo_region_base(seen, pl[s->order[from]].addr, s->room, &base)) {
        j->st->elf.refused++;
        jitanon__inj_log(j, "jitted code near address 0 leaves no room for an ELF header: not named%s", "", NULL);
        return JITANON_OK;
    }
    if (now && !jitanon__eo_region_whole(j, s, from, to)) return jitanon__inj_nomem(j, "region pieces");
    if (now && (res = jitanon__eo_region_build(j, s, jd, base, to - from)) != JITANON_OK) return res;
    jitanon__eo_region_name(jd, name);
    if (now && !jitanon__inj_put_file(j, NULL, jd->dir, &s->elf, name, SIZE_MAX)) return JITANON_OK; /* logged */
    if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX ||
        !jitanon__grow(&j->a, (void **)&j->jit.regions, &j->jit.regions_cap, j->jit.nregions + 1, sizeof *j->jit.regions))
        return jitanon__inj_nomem(j, "regions");
    jitanon__eo_region_new(j, base, path, (size_t)(jd - j->jit.dumps));
    for (i = from; i < to; i++) {
        jitanon__inj_func *f = &j->jit.funcs[pl[s->order[i]].func];
        f->pgoff = pl[s->order[i]].addr - base;
        f->path = path;
        f->region = pl[s->order[i]].region = j->jit.nregions;
    }
    j->jit.nregions++;
    *written = 1;
    return JITANON_OK;
}

/* The batch's end: generations (code over earlier code of the batch goes one higher),
   then each generation's code in address order, cut into files where a hole passes
   JITANON__REGION_GAP.  File mode has no generations here: each run of code (all of it,
   over earlier code or not) gets a file, and where code over code goes is chosen when it
   is mapped (jitanon__eo_region_slot).  The batch is the dump's places from first_place on (file mode
   keeps every dump's until the end).  A function whose file could not be written is not
   mapped. */
JITANON__PRIVATE jitanon_result jitanon__eo_region_end(jitanon__inj *j, jitanon__elfout *o, jitanon__inj_dump *jd)
{
    jitanon__eo_region *s = &o->u.reg;
    jitanon__eo_place *pl = s->places;
    jitanon_rangemap seen;
    jitanon_result res = JITANON_OK;
    size_t i, from, first = s->first_place, n = s->nplaces - first;
    uint64_t end = 0;
    int failed = 0;
    if (n == 0) return JITANON_OK;
    jitanon_rangemap_init(&seen, &j->a);
    for (i = first; i < s->nplaces && res == JITANON_OK; i++) {
        jitanon_rangemap_iter it;
        jitanon_range r;
        uint64_t gen = 0;
        if (pl[i].own) continue; /* named already; written if hit */
        pl[i].fresh = 1;
        jitanon_rangemap_iter_begin(&it, &seen, pl[i].addr, pl[i].size);
        while (jitanon_rangemap_iter_next(&it, &r)) { /* file mode has no generations */
            pl[i].fresh = 0;
            if (!jitanon__eo_region_online(j) && r.id + 1 > gen) gen = r.id + 1;
        }
        pl[i].gen = gen;
        res = jitanon_rangemap_assign(&seen, pl[i].addr, pl[i].size, 1, gen, j->err);
        if (res == JITANON_ERR_INVALID_ARGUMENT) res = JITANON_OK; /* a wrapping range is never mapped */
    }
    if (res == JITANON_OK && (n > UINT32_MAX / 2 ||
                              !jitanon__grow(&j->a, (void **)&s->order, &s->order_cap, 2 * n, sizeof *s->order)))
        res = jitanon__inj_nomem(j, "region order");
    if (res == JITANON_OK) {
        size_t k = 0;
        for (i = first; i < s->nplaces; i++)
            if (!pl[i].own) s->order[k++] = (uint32_t)i;
        n = k;
        jitanon__msort(s->order, s->order + n, n, jitanon__eo_region_less, pl);
    }
    if (res == JITANON_OK && jitanon__eo_region_online(j)) { /* one generation: in address order */
        if (!jitanon__grow(&j->a, (void **)&s->fresh, &s->fresh_cap, s->nfresh + n, sizeof *s->fresh))
            res = jitanon__inj_nomem(j, "region order");
        jd->fresh_from = jd->fresh_to = s->nfresh;
        for (i = 0; res == JITANON_OK && i < n; i++)
            if (pl[s->order[i]].fresh) s->fresh[s->nfresh++] = s->order[i];
        jd->fresh_to = s->nfresh;
    }
    for (from = 0, i = 1; res == JITANON_OK && from < n; i++) {
        const jitanon__eo_place *a = &pl[s->order[i - 1]], *z = i < n ? &pl[s->order[i]] : NULL;
        int got = 0;
        if (i - 1 == from || a->addr + a->size > end) end = a->addr + a->size; /* the run's end so far */
        if (z && z->gen == a->gen && (z->addr <= end || z->addr - end <= JITANON__REGION_GAP)) continue;
        if ((res = jitanon__eo_region_file(j, s, jd, &seen, from, i, &got)) == JITANON_OK && !got) {
            size_t k;
            for (k = from; k < i; k++) j->jit.funcs[pl[s->order[k]].func].failed = 1;
            failed = 1;
        }
        from = i;
    }
    jitanon_rangemap_release(&seen);
    if (res == JITANON_OK && failed) jitanon__inj_drop_failed(j, jd, s->first_event);
    if (!jitanon__eo_region_online(j)) { /* written: the next batch starts afresh */
        s->arena.size = 0;
        s->nplaces = 0;
    }
    return res;
}

/* File mode: function `fi` (a region function, not moved) is mapped now, in time order,
   over [start, start + size): it takes the place of what its run's file holds there if no
   sample resolved into that, else the same place in the next file of the run (same B;
   made when first needed).  Code the GC freed is nearly always code no sample hit since
   (node's 8 s bench recording: 10,265 of 47,769 loads over earlier code, 17 of them over
   sampled code), and perf can no longer resolve into what the new code covers: every
   later sample there is the new code's.  So the file holds at each offset the one
   function any sample there names, and the run stays one module for hotspot's parser,
   where generations of files over one another made elfutils report one of two
   overlapping modules nowhere (435 frames misnamed on that recording).  What the new
   code leaves of an unsampled function stays there as a piece of it. */
JITANON__PRIVATE jitanon_result jitanon__eo_region_slot(jitanon__inj *j, jitanon__eo_region *s, size_t fi,
                                                        uint64_t start, uint64_t size)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t g = jt->funcs[fi].region;
    jitanon_result res;
    if (size == 0) size = 1; /* as its place */
    for (;;) {
        jitanon_rangemap_iter it;
        jitanon_range r;
        int busy = 0;
        if (g >= s->nocc) {
            size_t k;
            if (!jitanon__grow(&j->a, (void **)&s->occ, &s->occ_cap, jt->nregions, sizeof *s->occ))
                return jitanon__inj_nomem(j, "region files");
            for (k = s->nocc; k < jt->nregions; k++) jitanon_rangemap_init(&s->occ[k], &j->a);
            s->nocc = jt->nregions;
        }
        jitanon_rangemap_iter_begin(&it, &s->occ[g], start, size);
        while (!busy && jitanon_rangemap_iter_next(&it, &r)) busy = r.id < jt->nfuncs && jt->hot[r.id].hit;
        if (!busy) {
            res = jitanon_rangemap_assign(&s->occ[g], start, size, 1, fi, j->err);
            if (res == JITANON_ERR_INVALID_ARGUMENT) res = JITANON_OK; /* a wrapping range is never mapped */
            jt->funcs[fi].region = g;
            jt->funcs[fi].path = jt->regions[g].path;
            jt->funcs[fi].slotted = 1;
            return res;
        }
        if (jt->regions[g].next == SIZE_MAX) { /* the run's next file */
            jitanon__inj_dump *jd = &jt->dumps[jt->regions[g].dump];
            char name[96];
            size_t path;
            jitanon__eo_region_name(jd, name);
            if ((path = jitanon__inj_add_path(j, jd->dir, name)) == SIZE_MAX ||
                !jitanon__grow(&j->a, (void **)&jt->regions, &jt->regions_cap, jt->nregions + 1, sizeof *jt->regions))
                return jitanon__inj_nomem(j, "regions");
            jitanon__eo_region_new(j, jt->regions[g].base, path, jt->regions[g].dump);
            jt->regions[g].next = jt->nregions++;
        }
        g = jt->regions[g].next;
    }
}

/* A place with a file of its own (jitanon__eo_region_add), written at the end. */
JITANON__PRIVATE jitanon_result jitanon__eo_region_own(jitanon__inj *j, jitanon__eo_region *s, const jitanon__eo_place *p)
{
    jitanon__inj_dump *jd = &j->jit.dumps[p->dump];
    jitanon_jitdump_record load;
    jitanon__inj_pend pend;
    uint64_t pgoff;
    jitanon_result res;
    memset(&pend, 0, sizeof pend);
    jitanon__eo_region_rec(s, jd, p->load, p->load_len, p->load_offset, &load);
    if ((pend.have_debug = p->debug != SIZE_MAX) != 0) jitanon__eo_region_rec(s, jd, p->debug, p->debug_len, 0, &pend.debug);
    if ((pend.have_unwind = p->unwind != SIZE_MAX) != 0)
        jitanon__eo_region_rec(s, jd, p->unwind, p->unwind_len, 0, &pend.unwind);
    if ((res = jitanon__eo_func_build(j, &s->elf, jd, &load, &pend, &pgoff)) != JITANON_OK) return res;
    (void)jitanon__inj_put_file(j, NULL, jd->dir, &s->elf,
                                jitanon__inj_path(j, j->jit.funcs[p->func].path) + strlen(jd->dir) + 1, SIZE_MAX);
    return JITANON_OK; /* logged */
}

/* File mode, every sample seen: each file with the code that went to it. */
JITANON__PRIVATE jitanon_result jitanon__eo_region_finish(jitanon__inj *j, jitanon__elfout *o)
{
    jitanon__eo_region *s = &o->u.reg;
    const jitanon__eo_place *pl = s->places;
    jitanon_result res = JITANON_OK;
    size_t i, g, n = 0;
    if (!jitanon__eo_region_online(j) || !s->nplaces) return JITANON_OK;
    if (s->nplaces > UINT32_MAX / 2 ||
        !jitanon__grow(&j->a, (void **)&s->order, &s->order_cap, 2 * s->nplaces, sizeof *s->order))
        return jitanon__inj_nomem(j, "region order");
    for (i = 0; i < s->nplaces && res == JITANON_OK; i++) {
        if (pl[i].region != SIZE_MAX) s->order[n++] = (uint32_t)i;
        else if (pl[i].own && j->jit.hot[pl[i].func].hit) res = jitanon__eo_region_own(j, s, &pl[i]);
    }
    /* s->order is by function: a LOAD appends its function and then its place */
    for (g = 0; g < s->nocc && g < j->jit.nregions && res == JITANON_OK; g++) {
        const jitanon__inj_region *rg = &j->jit.regions[g];
        jitanon__inj_dump *jd = &j->jit.dumps[rg->dump];
        jitanon_rangemap_iter it;
        jitanon_range r;
        size_t k = 0;
        jitanon_rangemap_iter_begin_all(&it, &s->occ[g]);
        while (jitanon_rangemap_iter_next(&it, &r)) {
            size_t lo = 0, hi = n;
            while (lo < hi) { /* the function's place */
                size_t mid = lo + (hi - lo) / 2;
                if (pl[s->order[mid]].func < r.id) lo = mid + 1;
                else hi = mid;
            }
            if (lo == n || pl[s->order[lo]].func != r.id) continue;
            if (!jitanon__grow(&j->a, (void **)&s->pieces, &s->pieces_cap, k + 1, sizeof *s->pieces))
                return jitanon__inj_nomem(j, "region pieces");
            s->pieces[k].place = s->order[lo];
            s->pieces[k].addr = r.start;
            s->pieces[k++].len = r.len;
        }
        if (k && (res = jitanon__eo_region_build(j, s, jd, rg->base, k)) == JITANON_OK)
            (void)jitanon__inj_put_file(j, NULL, jd->dir, &s->elf, jitanon__inj_path(j, rg->path) + strlen(jd->dir) + 1,
                                        SIZE_MAX); /* logged: its MMAP2s are out */
    }
    return res;
}

static const jitanon__elfout_ops jitanon__eo_regions = {
    1, jitanon__eo_region_begin, jitanon__eo_region_add, jitanon__eo_region_end, jitanon__eo_sampled_sample,
    jitanon__eo_region_finish, jitanon__eo_region_free
};

/* The one layout a run uses, chosen once from the options (already checked). */
JITANON__PRIVATE const jitanon__elfout_ops *jitanon__elfout_pick(const jitanon__inj *j, int sampled)
{
    if (!j->out.w) return &jitanon__eo_resolve;
    if (j->opts->elf_layout == JITANON_ELF_PER_PROCESS) return &jitanon__eo_process;
    if (j->opts->elf_layout == JITANON_ELF_PER_REGION) return &jitanon__eo_regions;
    if (sampled) return &jitanon__eo_sampled;
    return JITANON__THREADS && j->opts->elf_threads ? &jitanon__eo_threads : &jitanon__eo_direct;
}

/* Late NAME: a LOAD that no earlier LOAD or MOVE of the dump overlaps becomes due
   `late_window` before its own time (never before its marker): until then nothing the
   dump describes was at its addresses.  Whether the claim holds - the range inside an
   anonymous mapping - is decided when it comes due (jitanon__inj_late_due).  `events`
   are in time order here. */
JITANON__PRIVATE jitanon_result jitanon__inj_backdate(jitanon__inj *j, jitanon__inj_dump *jd)
{
    jitanon_rangemap *seen = &j->jit.described;
    jitanon_result res = JITANON_OK;
    size_t i;
    jitanon_rangemap_release(seen);
    for (i = 0; i < jd->count && res == JITANON_OK; i++) {
        jitanon__inj_event *e = &jd->events[i];
        jitanon_rangemap_iter it;
        jitanon_range any;
        if (e->size == 0) continue;
        jitanon_rangemap_iter_begin(&it, seen, e->start, e->size);
        if (!e->is_move && !jitanon_rangemap_iter_next(&it, &any)) {
            uint64_t from = e->time > j->jit.late_window ? e->time - j->jit.late_window : 0;
            if (from < jd->marker_time) from = jd->marker_time;
            if (from < e->time) {
                e->late = 1;
                e->load_time = e->time;
                e->time = from;
            }
        }
        res = jitanon_rangemap_assign(seen, e->start, e->size, 1, 0, j->err);
        if (res == JITANON_ERR_INVALID_ARGUMENT) res = JITANON_OK; /* a wrapping range is never mapped */
    }
    jitanon_rangemap_release(seen);
    if (res == JITANON_OK && !jitanon__inj_sort_events(j, jd->events, jd->count)) res = jitanon__inj_nomem(j, "event sort");
    return res;
}

/* -- live pipes: following a dump while the JIT appends to it --------------------------------- */

/* How fresh an event must be (the clock now minus its time) for a round to wait for a
   dump whose last record is older, and how recently that dump must have grown: an older
   event, or a JIT that stopped writing, gains nothing from a wait. */
#define JITANON__FOLLOW_FRESH_NS 250000000u
#define JITANON__FOLLOW_ACTIVE_NS 100000000u
#define JITANON__FOLLOW_POLL_NS 1000000u

/* The dump is no longer followed: its stream is closed and its bookkeeping of names goes
   (no more LOADs will come). */
JITANON__PRIVATE void jitanon__inj_follow_end(jitanon__inj *j, jitanon__inj_dump *jd)
{
    jitanon__inj_follow *f = jd->follow;
    if (!f) return;
    jitanon__inj_src_close(&f->src);
    jitanon__inj_wait_end(j, &f->wait);
    jitanon__inj_wait_release(j, &f->wait);
    jitanon__free(&j->a, f, sizeof *f);
    jd->follow = NULL;
    jitanon__hmap_free(&jd->uses, &j->a);
}

/* Reads what the JIT appended since the last read, from where that stopped (never from
   the start again): its LOADs go to the layout as one batch (begin, add, end: the files
   are written before their mappings go out), their events join the pending ones.  An
   event is never dated before the last record decided, so the output stays in time
   order.  Applied events are freed first: memory holds only what is pending.  *more: the
   read found records.  A damaged record ends the following (the records before it
   count). */
JITANON__PRIVATE jitanon_result jitanon__inj_follow_read(jitanon__inj *j, size_t d, int *more)
{
    jitanon__inj_dump *jd = &j->jit.dumps[d];
    jitanon__inj_follow *f = jd->follow;
    jitanon__elfout *o = &j->elf;
    uint64_t records = f->src.st.next_index;
    jitanon_result got = JITANON_OK, res = JITANON_OK;
    size_t first, i;
    int begun = 0;
    if (jd->next) {
        memmove(jd->events, jd->events + jd->next, (jd->count - jd->next) * sizeof *jd->events);
        jd->count -= jd->next;
        jd->next = 0;
    }
    first = jd->count;
    res = jitanon__inj_walk_src(j, jd, &f->src, &f->pend, &f->wait, SIZE_MAX, o->ops->add, o, 1, &got, &begun);
    if (begun && o->ops->end) { /* also after a failure: writer threads stop */
        jitanon_result e = o->ops->end(j, o, jd);
        if (res == JITANON_OK) res = e;
    }
    *more = f->src.st.next_index > records;
    if (res != JITANON_OK) return res;
    for (i = first; i < jd->count; i++)
        if (jd->events[i].time < j->jit.decided) jd->events[i].time = jd->events[i].load_time = j->jit.decided;
    if (first < jd->count && !jitanon__inj_sort_events(j, jd->events, jd->count))
        return jitanon__inj_nomem(j, "event sort");
    if (*more) {
        f->grew_at = f->seen_at = jitanon_jitdump_now();
        f->seen_perf = j->round.last_time;
    }
    jd->read_until = f->last_time;
    if (got != JITANON_AGAIN && got != JITANON_OK && got != JITANON_END) {
        char what[512];
        uint64_t at = f->src.st.consumed;
        const char *path = jitanon__inj_path(j, jd->path);
        j->st->dumps.damaged++;
        jitanon__inj_follow_end(j, jd);
        if (j->jit.dump_opts.strict) {
            JITANON__FAIL(j->err, got, at, "jitdump %s is damaged at byte %U", path, at);
            jitanon__err_source(j->err, "jitdump", path);
            return got;
        }
        jitanon__fmt(what, sizeof what, "jitdump %s: a damaged record at byte %U: not followed further", path, at);
        jitanon__inj_log(j, "%s%s", what, NULL);
    }
    if (j->out.w && j->out.w->mode == JITANON_PERF_PIPE) return jitanon__inj_bids_flush(j);
    return JITANON_OK;
}

/* Starts following a dump a live pipe's marker named: its stream opened at the start and
   read as far as the JIT has written. */
JITANON__PRIVATE jitanon_result jitanon__inj_follow_start(jitanon__inj *j, jitanon__inj_dump *jd)
{
    jitanon__inj_follow *f = (jitanon__inj_follow *)jitanon__malloc(&j->a, sizeof *f);
    uint64_t size;
    int more;
    if (!f) return jitanon__inj_nomem(j, "followed dump");
    memset(f, 0, sizeof *f);
    f->wait.debug.allocator = f->wait.unwind.allocator = j->a;
    f->wait.count = 1; /* following is the dump's first walk */
    f->seen_at = jitanon_jitdump_now();
    f->seen_perf = j->round.last_time;
    jd->follow = f;
    if (jitanon__inj_src_path(j, jitanon__inj_path(j, jd->path), &f->src, &size, NULL) != JITANON_OK) {
        jitanon__inj_follow_end(j, jd);
        return JITANON__FAIL(j->err, JITANON_ERR_IO, 0, "cannot read the jitdump again");
    }
    j->st->follow.dumps++;
    return jitanon__inj_follow_read(j, (size_t)(jd - j->jit.dumps), &more);
}

/* Before a round is decided, every followed dump is read up to the round's last time
   `until`: read when the round is newer than the dump's last record (one read, usually
   finding nothing, when the JIT is idle).  A round waits - in polls of 1 ms, at most
   opts.follow_wait_us in all - only while an event is fresh (the clock now is less than
   JITANON__FOLLOW_FRESH_NS past it), newer than the dump's last record, and the dump
   grew in the last JITANON__FOLLOW_ACTIVE_NS: the JIT is writing and has not yet flushed
   what it compiled just before the event.  A dump whose process exited, or every dump
   when the input ends (`last`), is read to its end and no longer followed. */
JITANON__PRIVATE jitanon_result jitanon__inj_follow_all(jitanon__inj *j, uint64_t until, int last)
{
    uint32_t wait_us = j->opts->follow_wait_us ? j->opts->follow_wait_us : JITANON_FOLLOW_WAIT_DEFAULT_US;
    uint64_t cap = wait_us == JITANON_FOLLOW_WAIT_NONE ? 0 : (uint64_t)wait_us * 1000u;
    jitanon_result res = JITANON_OK;
    size_t d;
    j->jit.waited_round = 0;
    for (d = 0; d < j->jit.ndumps && res == JITANON_OK; d++) {
        jitanon__inj_dump *jd = &j->jit.dumps[d];
        jitanon__inj_follow *f = jd->follow;
        int more = 0, done;
        if (!f || (!last && !f->exited && until <= f->last_time)) continue;
        done = last || f->exited;
        res = jitanon__inj_follow_read(j, d, &more);
        j->st->follow.reads += (uint64_t)more;
        while (res == JITANON_OK && !done && jd->follow && until > f->last_time && j->jit.waited_round < cap &&
               !jd->sum.header.arch_timestamp) {
            uint64_t now = jitanon_jitdump_now(), t1;
            if (now < until || now - until >= JITANON__FOLLOW_FRESH_NS || now - f->grew_at >= JITANON__FOLLOW_ACTIVE_NS ||
                !j->os->sleep_ns(JITANON__FOLLOW_POLL_NS))
                break;
            t1 = jitanon_jitdump_now();
            j->jit.waited_round += t1 > now ? t1 - now : 0;
            j->st->follow.wait_ns += t1 > now ? t1 - now : 0;
            res = jitanon__inj_follow_read(j, d, &more);
            j->st->follow.reads += (uint64_t)more;
        }
        if (res == JITANON_OK && done && jd->follow) {
            jd->complete = f->exited;
            jitanon__inj_follow_end(j, jd);
        }
    }
    return res;
}

/* A followed dump's process exited: the next round reads it to the end. */
JITANON__PRIVATE void jitanon__inj_follow_exit(jitanon__inj *j, uint32_t pid)
{
    size_t d;
    for (d = 0; d < j->jit.ndumps; d++)
        if (j->jit.dumps[d].follow && j->jit.dumps[d].pid == pid) j->jit.dumps[d].follow->exited = 1;
}

/* A function the dump has that is not yet applied covers addr by `time` (its load is due). */
JITANON__PRIVATE int jitanon__inj_pending_at(const jitanon__inj_dump *jd, uint64_t addr, uint64_t time)
{
    size_t e;
    for (e = jd->next; e < jd->count; e++)
        if (jd->events[e].time <= time && addr - jd->events[e].start < jd->events[e].size) return 1;
    return 0;
}

/* Executable anonymous mappings of the rounds being held, read and not yet decided (the
   engine does not know them): jitanon__inj_hold collects the first JITANON__INJ_FRESH as
   it scans, since a runtime maps its code memory in the round of its first samples there
   (CPython's trampolines). */
#define JITANON__INJ_FRESH 8
typedef struct jitanon__inj_fresh {
    uint64_t start[JITANON__INJ_FRESH], len[JITANON__INJ_FRESH];
    uint32_t pid[JITANON__INJ_FRESH];
    size_t n;
} jitanon__inj_fresh;

JITANON__PRIVATE void jitanon__inj_fresh_add(const jitanon__inj *j, jitanon__inj_fresh *f, const jitanon__inj_rec *r)
{
    const uint8_t *raw = j->round.bytes.data + r->off;
    if ((r->type != JITANON_PERF_RECORD_MMAP2 && r->type != JITANON_PERF_RECORD_MMAP) || f->n == JITANON__INJ_FRESH ||
        (r->type == JITANON_PERF_RECORD_MMAP2 ? !(jitanon__rd32(raw + 64, j->in->big_endian) & 4u)
                                              : (r->misc & JITANON__PERF_MISC_MMAP_DATA) != 0) ||
        jitanon_trim_classify((const char *)raw + r->name_off, r->name_len) != JITANON_TRIM_ANON)
        return;
    f->start[f->n] = r->start;
    f->len[f->n] = r->len;
    f->pid[f->n++] = r->pid;
}

/* A word that may be a return address (of a callchain, a copied user stack, the user
   registers) is in anonymous code memory - known to the engine, or of a mapping being
   held - that no known function covers and no function of the dump due by the sample's
   time will (jitanon__inj_undecided).  Not memory no mapping covers: most words of a
   stack point nowhere near code. */
JITANON__PRIVATE int jitanon__inj_anon_ret(const jitanon__inj *j, const jitanon__inj_dump *jd, const jitanon__inj_rec *r,
                                           const jitanon__inj_fresh *f, uint64_t ip)
{
    jitanon_trim_kind kind;
    size_t i;
    if (!ip) return 0;
    kind = jitanon__trim_resolve_fast(j->maps.trim, r->pid, ip - 1, NULL);
    for (i = 0; kind == JITANON_TRIM_NONE && i < f->n; i++)
        if (f->pid[i] == r->pid && ip - 1 - f->start[i] < f->len[i]) kind = JITANON_TRIM_ANON;
    return kind == JITANON_TRIM_ANON && !jitanon__inj_pending_at(jd, ip - 1, r->time);
}

/* --call-graph dwarf (CPython's -X perf_jit): perf's unwinder finds the jitted frames in
   the copied user stack and the user registers, not in a callchain.  A word of either in
   anonymous code memory (jitanon__inj_anon_ret) holds the sample.  The stack in the
   steps its process keeps return addresses at from the stack pointer (8 bytes, 4 for a
   32-bit one): the sampled files' 4-byte steps would double the cost here, paid on
   every sample while a dump lags.  Stops at the first word that holds. */
JITANON__PRIVATE int jitanon__inj_undecided_words(const jitanon__inj *j, const jitanon__inj_dump *jd,
                                                  const jitanon__inj_rec *r, const jitanon__inj_fresh *f)
{
    jitanon__inj_swords v;
    int big = j->in->big_endian;
    size_t i;
    jitanon__inj_sample_views(j, r, &v);
    for (i = 0; i < v.nregs; i++)
        if (jitanon__inj_anon_ret(j, jd, r, f, jitanon__rd64(v.regs + 8 * i, big))) return 1;
    for (i = 0; i + v.step <= v.nstack; i += v.step)
        if (jitanon__inj_anon_ret(j, jd, r, f, v.step == 4 ? jitanon__rd32(v.stack + i, big) : jitanon__rd64(v.stack + i, big)))
            return 1;
    return 0;
}

/* Holding back (jitanon__inj_hold): a sample is not yet decidable when it ran in its
   process's JIT memory - anonymous code memory no known function covers, or memory no
   mapping decided so far covers - while that process's followed dump has not reached its
   time and may still grow (its process has not exited, the file grew within
   opts.follow_idle_ms of the clock and of the recording).  The same for a return address
   of its callchain in anonymous code memory (of a kernel-mode sample too: its user part),
   and for a word of its copied user stack or user registers when it has them
   (jitanon__inj_undecided_words).  The ip of a user-mode sample only: the kernel runs no
   jitted code. */
JITANON__PRIVATE int jitanon__inj_undecided(jitanon__inj *j, const jitanon__inj_rec *r, uint64_t now,
                                            const jitanon__inj_fresh *f)
{
    const jitanon__inj_dump *jd;
    const size_t *d;
    uint32_t mode = r->misc & JITANON_PERF_MISC_CPUMODE_MASK;
    jitanon_trim_kind kind;
    size_t e;
    if (r->type != JITANON_PERF_RECORD_SAMPLE || !(d = jitanon__hmap_find(&j->jit.latest, r->pid))) return 0;
    jd = &j->jit.dumps[*d];
    /* a sample before the marker: the dump describes nothing that early */
    if (!jd->follow || jd->follow->exited || jd->read_until >= r->time || r->time < jd->marker_time) return 0;
    /* stopped growing: by the clock, or by the recording's time (a recording piped from a
       file runs ahead of the clock) */
    if (now > jd->follow->seen_at && now - jd->follow->seen_at >= j->jit.idle_ns) return 0;
    if (j->round.last_time > jd->follow->seen_perf && j->round.last_time - jd->follow->seen_perf >= j->jit.idle_ns)
        return 0;
    kind = j->maps.trim ? jitanon__trim_resolve_fast(j->maps.trim, r->pid, r->start, NULL) : JITANON_TRIM_NONE;
    if ((mode == JITANON_PERF_MISC_USER || mode == 0) && kind != JITANON_TRIM_JIT && kind != JITANON_TRIM_FILE &&
        !jitanon__inj_pending_at(jd, r->start, r->time))
        return 1;
    /* the callchain's return addresses (perf names callers too): in anonymous code memory
       only, since a frame-pointer chain may hold stray words */
    for (e = 0; e < r->chain_nr && j->maps.trim; e++) {
        jitanon_bytes chain;
        uint64_t ip;
        chain.data = j->round.bytes.data + r->off + r->chain_off;
        chain.size = r->chain_nr * 8;
        ip = jitanon_perf_u64_at(chain, e, j->in->big_endian);
        if (ip >= (uint64_t)-4095 || ip == r->start) continue; /* context markers; the ip again */
        if (jitanon__inj_anon_ret(j, jd, r, f, ip)) return 1;
    }
    if (j->maps.trim && r->attr < j->in->attr_count &&
        (j->in->attrs[r->attr].sample_type & JITANON_PERF_SAMPLE_STACK_USER))
        return jitanon__inj_undecided_words(j, jd, r, f);
    return 0;
}

/* Counts a live pipe's sample left in JIT memory (as decided: anonymous memory no
   function covers) by why (stats.unnamed). */
JITANON__PRIVATE void jitanon__inj_live_unnamed(jitanon__inj *j, const jitanon__inj_rec *r)
{
    const jitanon__inj_dump *jd;
    const size_t *d;
    uint32_t mode = r->misc & JITANON_PERF_MISC_CPUMODE_MASK;
    if ((mode != JITANON_PERF_MISC_USER && mode != 0) || !j->maps.trim ||
        jitanon__trim_resolve_fast(j->maps.trim, r->pid, r->start, NULL) != JITANON_TRIM_ANON)
        return;
    d = jitanon__hmap_find(&j->jit.latest, r->pid);
    jd = d ? &j->jit.dumps[*d] : NULL;
    if (!jd) j->st->unnamed.no_dump++;
    else if (jd->complete || r->time <= jd->read_until) j->st->unnamed.not_in_dump++;
    else if (j->jit.forced) j->st->unnamed.past_bound++;
    else j->st->unnamed.stopped++;
}

/* Turns one dump into ELF files and its sorted jit events (a live pipe's dump: what is
   written of it so far, and the rest as it comes). */
JITANON__PRIVATE jitanon_result jitanon__inj_process_dump(jitanon__inj *j, jitanon__inj_dump *jd)
{
    jitanon__elfout *o = &j->elf;
    jitanon_result res = JITANON_OK;
    jd->first_func = j->jit.nfuncs;
    if (j->jit.live) return jitanon__inj_follow_start(j, jd);
    if (o->ops->begin) res = o->ops->begin(j, o, jd);
    if (res == JITANON_OK) res = jitanon__inj_walk(j, jd, SIZE_MAX, o->ops->add, o, 1);
    jd->nfuncs = j->jit.nfuncs - jd->first_func;
    if (res == JITANON_OK && o->ops->end) res = o->ops->end(j, o, jd);
    if (res == JITANON_OK && !jitanon__inj_sort_events(j, jd->events, jd->count))
        res = jitanon__inj_nomem(j, "event sort");
    if (res == JITANON_OK && j->jit.late) res = jitanon__inj_backdate(j, jd);
    jitanon__hmap_free(&jd->uses, &j->a); /* all its LOADs were named */
    jd->next = 0;
    return res;
}

/* -- markers ------------------------------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__inj_load_default(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                                          jitanon_jitdump **out, jitanon_error *err)
{
    jitanon_stream f;
    jitanon_result r;
    (void)user;
    *out = NULL; /* open_named fails with JITANON_ERR_FEATURE_DISABLED without stdio */
    if ((r = jitanon__os_default()->open_named(path, &f, err)) != JITANON_OK) return r;
    r = jitanon__jitdump_load_read(f.read_fn, f.user, opts, out, err);
    jitanon__stream_close(&f);
    return r;
}

/* Files are written from each function in order: with the default file I/O the dump is
   only scanned now and streamed again later (per-process files: once more as the file is
   written), so its code never sits in memory. */
JITANON__PRIVATE int jitanon__inj_streams(const jitanon__inj *j)
{
#ifndef JITANON_NO_STDIO
    return j->out.w && !j->opts->on_sample && (j->io.load_dump == jitanon__inj_load_default || j->io.open_dump);
#else
    (void)j;
    return 0;
#endif
}

/* Records a loaded dump holds (its valid prefix). */
JITANON__PRIVATE uint64_t jitanon__inj_dump_records(const jitanon_jitdump *d)
{
    uint64_t n = d->stats.unknown;
    unsigned i;
    for (i = 0; i < JITANON_JITDUMP_CODE_MAX; i++) n += d->stats.by_id[i];
    return n;
}

/* Loads or scans the dump at `path` into `jd`. */
JITANON__PRIVATE jitanon_result jitanon__inj_read_dump(jitanon__inj *j, const char *path, jitanon__inj_dump *jd,
                                                       jitanon_error *e)
{
    jitanon_result r;
#ifndef JITANON_NO_STDIO
    if (jitanon__inj_streams(j)) return jitanon__inj_scan(j, path, &jd->sum, e);
#endif
    jd->dump = NULL;
    r = j->io.load_dump(j->io.user, path, &j->jit.dump_opts, &jd->dump, e);
    if (r == JITANON_OK && !jd->dump) r = JITANON__FAIL(e, JITANON_ERR_IO, 0, "io.load_dump returned no dump");
    if (r != JITANON_OK) {
        jd->dump = NULL; /* not ours on failure */
        return r;
    }
    jd->sum.header = jd->dump->header;
    jd->sum.loads = jd->dump->stats.by_id[JITANON_JITDUMP_CODE_LOAD];
    jd->sum.tail_error = jd->dump->tail_error;
    { /* the injector loads dumps without a record table: walk the bytes */
        jitanon_elf_line_bias_scan bias;
        jitanon_jitdump_iter it;
        jitanon_jitdump_record rec;
        jitanon_elf_line_bias_scan_init(&bias, &jd->dump->header);
        if (jitanon_jitdump_iter_begin(&it, jd->dump->data, jd->dump->size, &j->jit.dump_opts, NULL) == JITANON_OK)
            while (jitanon_jitdump_iter_next(&it, &rec, NULL) == JITANON_OK) jitanon_elf_line_bias_scan_add(&bias, &rec);
        jd->sum.line_bias = jitanon__inj_line_bias(j, &bias);
    }
    jd->sum.valid_size = jd->dump->valid_size;
    jd->sum.size = jd->dump->size;
    jd->sum.records = jitanon__inj_dump_records(jd->dump);
    return JITANON_OK;
}

/* `v` in decimal, into buf (at least 11 bytes). */
JITANON__PRIVATE const char *jitanon__inj_u32(char *buf, uint32_t v)
{
    jitanon__fmt(buf, 11, "%u", (unsigned)v);
    return buf;
}

/* What the injector knows of a marker's process: the pids a dump of it may carry. */
typedef struct jitanon__inj_proc {
    uint32_t pid, nspid;   /* as recorded; in its own pid namespace (pid when not known) */
    uint32_t num[2];       /* the numbers in the marker's name (jitanon__marker_numbers) */
    unsigned nnum;
    int running, other_mnt; /* /proc shows it; in another mount namespace than ours */
    int reused;             /* /proc shows another process under its pid */
} jitanon__inj_proc;

/* The marker's process from /proc while it runs (a recording read later, or elsewhere,
   finds none: then only the recorded pid is known; a recording with NAMESPACES records,
   perf record --namespaces, tells a reused pid apart). */
JITANON__PRIVATE void jitanon__inj_proc_of(const jitanon__inj *j, jitanon__inj_proc *p, const jitanon__inj_rec *r,
                                          const jitanon_str *name)
{
    memset(p, 0, sizeof *p);
    p->pid = p->nspid = r->pid;
    p->nnum = jitanon__marker_numbers(name->data, name->length, p->num);
    if (j->io.find_process) {
        jitanon_inject_process q;
        uint64_t ino;
        const size_t *rec_ino = jitanon__hmap_find(&j->jit.mntns, r->pid);
        memset(&q, 0, sizeof q);
        q.nspid = r->pid;
        p->running = j->io.find_process(j->io.user, r->pid, &q) != 0;
        if (p->running) p->nspid = q.nspid, p->other_mnt = q.other_mnt != 0;
        ino = q.mnt_ns;
        /* the recording's NAMESPACES record names another mount namespace: the pid was
           reused, and what /proc shows is not the recorded process */
        if (p->running && rec_ino && ino && *rec_ino != (size_t)ino) {
            p->running = p->other_mnt = 0;
            p->nspid = r->pid;
            p->reused = 1;
        }
    }
}

/* 1 when `pid` (a dump header's, or a number of the marker's name) is the process's:
   its recorded pid or, while it runs, its pid in its own namespace; `named` also
   accepts the numbers of the marker's name (a dump the user copied into jitdump_dir). */
JITANON__PRIVATE int jitanon__inj_pid_ok(const jitanon__inj_proc *p, uint32_t pid, int named)
{
    if (pid == p->pid || (p->running && pid == p->nspid)) return 1;
    return named && ((p->nnum > 0 && pid == p->num[0]) || (p->nnum > 1 && pid == p->num[1]));
}

/* Reads the dump at `found` and checks its header's pid: a dump of another process is
   refused, with a warning.  A candidate that cannot be read is logged only when it is the
   `last` one (opts.jitdump_dir comes after the recorded path, as in 0.3). */
JITANON__PRIVATE int jitanon__inj_try_dump(jitanon__inj *j, const jitanon__inj_proc *p, int named, const char *found,
                                           jitanon__inj_dump *jd, jitanon_error *ep, const char *hint, int last)
{
    char msg[1024];
    jitanon_error e;
    if (jitanon__inj_read_dump(j, found, jd, &e) != JITANON_OK) {
        char detail[256];
        *ep = e;
        if (!j->io.log || !last) return 0;
        jitanon_format_error(detail, sizeof detail, &e);
        jitanon__fmt(msg, sizeof msg, "cannot read jitdump %s: %s%s", found, detail, hint ? hint : "");
        j->io.log(j->io.user, msg);
        return 0;
    }
    if (jitanon__inj_pid_ok(p, jd->sum.header.pid, named)) return 1;
    jitanon_jitdump_destroy(jd->dump);
    jd->dump = NULL;
    jitanon__fmt(msg, sizeof msg, "jitdump %s refused: its header names pid %u, not process %u (pid %u in its namespace)",
                 found, (unsigned)jd->sum.header.pid, (unsigned)p->pid, (unsigned)p->nspid);
    jitanon__clear_error(ep);
    ep->type = JITANON_ERR_IO;
    jitanon__inj_log(j, "%s%s", msg, NULL);
    return 0;
}

/* Loads the dump a marker names.  Where: a process in another mount namespace (a
   container) wrote it into its own tree, read through its root (/proc/PID/root, resolved
   inside it: jitanon__os_open_dump) while it runs, never from the host's path of that
   name; else the recorded path; then opts.jitdump_dir.  Which: the header's pid must be the process's (recorded, or in its
   namespace; in jitdump_dir also a number of the marker's name).  `found` gets the path
   that was read; *ns is 1 when it came through the process's root. */
JITANON__PRIVATE int jitanon__inj_open_dump(jitanon__inj *j, const jitanon_str *name, const jitanon__inj_proc *p,
                                            jitanon__inj_dump *jd, char *found, size_t cap, int *ns,
                                            jitanon_error *ep)
{
    size_t base = name->length;
    /* the recorded path names the container's file: the host's of that name is another one
       (a /tmp the container shares with the host is found through its root as well) */
    int inside = p->running && p->other_mnt && name->length && name->data[0] == '/';
    jitanon__clear_error(ep);
    *ns = 0;
    if (name->length + 32 >= cap) return 0;
    if (inside) {
        size_t n = jitanon__fmt(found, cap, "/proc/%u/root", (unsigned)p->pid);
        memcpy(found + n, name->data, name->length);
        found[n + name->length] = 0;
        if (jitanon__inj_try_dump(j, p, 0, found, jd, ep, " (inside the root of its process, another mount namespace)",
                                  !j->opts->jitdump_dir))
            return *ns = 1;
    } else {
        const char *hint = NULL;
        memcpy(found, name->data, name->length);
        found[name->length] = 0;
        if (!p->running && !j->opts->jitdump_dir)
            hint = "; it was moved or deleted (or lived in a container that has ended): give the directory it is "
                   "in now with --jitdump-dir";
        if (jitanon__inj_try_dump(j, p, 0, found, jd, ep, hint, !j->opts->jitdump_dir)) return 1;
    }
    if (!j->opts->jitdump_dir) return 0;
    while (base > 0 && name->data[base - 1] != '/') base--;
    if (jitanon__fmt(found, cap, "%s/", j->opts->jitdump_dir) + (name->length - base) >= cap) return 0;
    memcpy(found + strlen(found), name->data + base, name->length - base);
    found[strlen(j->opts->jitdump_dir) + 1 + (name->length - base)] = 0;
    return jitanon__inj_try_dump(j, p, 1, found, jd, ep, NULL, 1);
}

/* Registers a usable dump and processes it; its ELF files go next to `elf_near` (a path
   whose directory part is used) unless opts.elf_dir says where. */
JITANON__PRIVATE jitanon_result jitanon__inj_add_dump(jitanon__inj *j, jitanon__inj_dump *jd, const char *found,
                                                      const char *elf_near)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t dl = strlen(elf_near), *dumps_of_pid;
    jitanon_result res;
    if (!jitanon__grow(&j->a, (void **)&jt->dumps, &jt->dumps_cap, jt->ndumps + 1, sizeof *jt->dumps)) {
        jitanon_jitdump_destroy(jd->dump);
        return jitanon__inj_nomem(j, "dumps");
    }
    jt->dumps[jt->ndumps] = *jd;
    jd = &jt->dumps[jt->ndumps++];
    if (!(dumps_of_pid = jitanon__hmap_at(&jt->pids, &j->a, jd->pid, 0))) return jitanon__inj_nomem(j, "dumps");
    jd->generation = (unsigned)*dumps_of_pid;
    if ((jd->path = jitanon__inj_add_path(j, found, NULL)) == SIZE_MAX) return jitanon__inj_nomem(j, "paths");
    /* ELFs go next to the dump (perf's choice) unless the caller picked a directory.  A
       copy of its own: writer threads read it while the path pool grows. */
    while (dl > 0 && elf_near[dl - 1] != '/') dl--;
    if (j->opts->elf_dir) jd->dir = jitanon__inj_dup(j, j->opts->elf_dir, strlen(j->opts->elf_dir), &jd->dir_size);
    else if (dl == 0) jd->dir = jitanon__inj_dup(j, ".", 1, &jd->dir_size);
    else jd->dir = jitanon__inj_dup(j, elf_near, dl - 1 ? dl - 1 : 1, &jd->dir_size);
    if (!jd->dir) return jitanon__inj_nomem(j, "paths");
    if ((res = jitanon__inj_process_dump(j, jd)) != JITANON_OK) return res;
    jt->stop_pid = 0; /* the process's latest dump changed */
    if (j->out.w && j->out.w->mode == JITANON_PERF_PIPE && (res = jitanon__inj_bids_flush(j)) != JITANON_OK)
        return res;
    ++*jitanon__hmap_find(&jt->pids, jd->pid);
    if (jt->live) {
        size_t *latest = jitanon__hmap_at(&jt->latest, &j->a, jd->pid, 0);
        if (!latest) return jitanon__inj_nomem(j, "dumps");
        *latest = (size_t)(jd - jt->dumps);
    }
    return JITANON_OK;
}

/* A dump whose tail is cut short or damaged: its valid prefix is used; one line says
   where it ends and what was left out, and the counters add it up. */
JITANON__PRIVATE void jitanon__inj_damaged(jitanon__inj *j, const char *found, const jitanon__inj_summary *sum)
{
    char what[256];
    uint64_t ignored = sum->size > sum->valid_size ? sum->size - sum->valid_size : 0;
    j->st->dumps.damaged++;
    j->st->dumps.damaged_loads_kept += sum->loads;
    j->st->dumps.bytes_ignored += ignored;
    jitanon__fmt(what, sizeof what, "record %U at byte %U; %U CODE_LOAD records before it are used, %U bytes ignored",
                 sum->tail_error.record_index, sum->valid_size, sum->loads, ignored);
    if (!j->io.log) return;
    {
        char msg[512], detail[256];
        jitanon_format_error(detail, sizeof detail, &sum->tail_error);
        jitanon__fmt(msg, sizeof msg, "jitdump %s is damaged or cut short at %s (%s)", found, what, detail);
        j->io.log(j->io.user, msg);
    }
}

/* e_machine of a `uname -m` name as perf's HEADER_ARCH holds it; 0 when unknown. */
JITANON__PRIVATE uint32_t jitanon__inj_machine_of_arch(const uint8_t *p, size_t n)
{
    static const struct {
        const char *name;
        uint32_t machine;
    } arch[] = {{"x86_64", 62}, {"amd64", 62}, {"i386", 3}, {"i486", 3}, {"i586", 3}, {"i686", 3},
                {"aarch64", 183}, {"arm64", 183}, {"armv7l", 40}, {"armv6l", 40}, {"arm", 40},
                {"ppc64le", 21}, {"ppc64", 21}, {"ppc", 20}, {"s390x", 22}, {"s390", 22},
                {"riscv64", 243}, {"riscv32", 243}, {"loongarch64", 258}, {"mips64", 8}, {"mips", 8},
                {"sparc64", 43}};
    size_t i, len = 0;
    while (len < n && p[len]) len++;
    for (i = 0; i < sizeof arch / sizeof arch[0]; i++)
        if (strlen(arch[i].name) == len && !memcmp(arch[i].name, p, len)) return arch[i].machine;
    return 0;
}

/* A HEADER_ARCH section or record body: a perf string (u32 length, then NUL-padded bytes). */
JITANON__PRIVATE uint32_t jitanon__inj_arch_feature(const jitanon__inj *j, jitanon_bytes b)
{
    jitanon__cur c = jitanon__cur_make(b.data, b.size, 0, j->in->big_endian);
    const uint8_t *p = jitanon__take(&c, 4);
    uint32_t len = p ? jitanon__rd32(p, j->in->big_endian) : 0;
    p = p ? jitanon__take(&c, len < c.left ? (size_t)len : c.left) : NULL;
    return p ? jitanon__inj_machine_of_arch(p, len < b.size - 4 ? (size_t)len : b.size - 4) : 0;
}

/* The machine the recording ran on as HEADER_ARCH says (a pipe's record, or the file's
   section, read on first need); 0 when it does not. */
JITANON__PRIVATE uint32_t jitanon__inj_machine(jitanon__inj *j)
{
    jitanon_bytes b;
    if (!j->jit.machine && !j->jit.machine_asked && j->in->mode == JITANON_PERF_FILE) {
        jitanon_error ignored;
        j->jit.machine_asked = 1;
        if (!j->in->features_loaded && j->in->state_.seek_fn) (void)jitanon_perf_reader_load_features(j->in, &ignored);
        if (jitanon_perf_reader_feature(j->in, 6, &b)) j->jit.machine = jitanon__inj_arch_feature(j, b);
    }
    return j->jit.machine;
}

/* Whether a CPU of machine `cpu` runs code for `code` (a 64-bit CPU its 32-bit sibling's). */
JITANON__PRIVATE int jitanon__inj_machine_runs(uint32_t cpu, uint32_t code)
{
    return code == cpu || (cpu == 62 && code == 3) || (cpu == 183 && code == 40) || (cpu == 21 && code == 20);
}

/* A dump's e_machine that is 0 (CPython 3.13.0 writes 0) or one the recording could not
   run becomes the recording's (HEADER_ARCH; else, for 0, the host's), so its ELF files
   disassemble; said once per dump.  Without HEADER_ARCH any other e_machine stays: the
   recording may come from another machine than this one. */
JITANON__PRIVATE void jitanon__inj_fix_machine(jitanon__inj *j, jitanon_jitdump_header *h, const char *found)
{
    uint32_t m;
    char msg[512];
    if (j->opts->elf.machine) return; /* the caller's machine goes into the files anyway */
    m = jitanon__inj_machine(j);
    if (h->elf_mach && (!m || jitanon__inj_machine_runs(m, h->elf_mach))) return;
    if (!m) m = jitanon_jitdump_host_machine();
    if (!m) return;
    if (j->io.log) {
        jitanon__fmt(msg, sizeof msg, h->elf_mach ? "jitdump %s has e_machine %u, which the recording's machine does "
                     "not run: its ELF files say %u" : "jitdump %s has e_machine %u (none): its ELF files say %u",
                     found, h->elf_mach, m);
        j->io.log(j->io.user, msg);
    }
    h->elf_mach = m;
}

/* A usable dump consumes its marker (as perf does); an unusable one leaves the marker
   and its process exactly as recorded.  What the marker changes in time order (the
   trimming of its process's anonymous memory, the cpu of synthesized MMAP2s) is done
   when it is decided (jitanon__inj_decide): a live pipe reads its markers earlier, when
   their round comes (jitanon__inj_hold_markers). */
JITANON__PRIVATE jitanon_result jitanon__inj_marker(jitanon__inj *j, jitanon__inj_rec *r, const jitanon_str *name)
{
    char found[4096];
    jitanon__inj_dump jd;
    jitanon__inj_proc proc;
    jitanon_error e;
    jitanon_result res;
    int ns;
    j->st->dumps.markers++;
    memset(&jd, 0, sizeof jd);
    jd.pid = r->pid;
    jd.tid = r->tid;
    jd.marker_time = r->time;
    jitanon__inj_proc_of(j, &proc, r, name);
    if (proc.reused)
        jitanon__inj_log(j, "process %s now is another one (its mount namespace is not the one the recording's "
                         "NAMESPACES record names: the pid was reused): its root is not read%s",
                         jitanon__inj_u32(found, proc.pid), NULL);
    if (proc.running && !jitanon__inj_pid_ok(&proc, proc.num[0], 0) &&
        (proc.nnum < 2 || !jitanon__inj_pid_ok(&proc, proc.num[1], 0))) {
        char msg[512];
        size_t n = name->length < 256 ? name->length : 256;
        memcpy(found, name->data, n);
        found[n] = 0;
        jitanon__fmt(msg, sizeof msg, "jitdump marker %s refused: its name holds neither process %u nor its pid %u in "
                     "its namespace", found, (unsigned)proc.pid, (unsigned)proc.nspid);
        jitanon__inj_log(j, "%s%s", msg, NULL);
        j->st->dumps.failed++;
        return JITANON_OK;
    }
    if (!jitanon__inj_open_dump(j, name, &proc, &jd, found, sizeof found, &ns, &e)) {
        j->st->dumps.failed++;
        /* strict: a damaged dump fails the run rather than leaving its process unnamed */
        if (j->jit.dump_opts.strict && jitanon__jitdump_damage(e.type)) {
            jitanon__err_source(&e, "jitdump", found);
            if (j->err) *j->err = e;
            return e.type;
        }
        return JITANON_OK; /* its process is left as it was recorded */
    }
    if (jd.sum.loads == 0 && !j->jit.live) { /* a followed dump gets its loads later */
        jitanon__inj_log(j, "jitdump %s holds no CODE_LOAD records%s", found, NULL);
        jitanon_jitdump_destroy(jd.dump);
        j->st->dumps.failed++;
        return JITANON_OK;
    }
    if (jd.sum.tail_error.type != JITANON_OK) jitanon__inj_damaged(j, found, &jd.sum);
    jitanon__inj_fix_machine(j, &jd.sum.header, found);
    if ((res = jitanon__inj_check_clock(j, &jd, found, r->offset)) != JITANON_OK) {
        jitanon_jitdump_destroy(jd.dump);
        return res;
    }
    j->st->dumps.loaded++;
    r->action = JITANON__INJ_DROP;
    if (ns) { /* its ELF files are ours: on the host, never in the container's tree */
        char msg[1024], near[4096];
        size_t dl = name->length;
        j->st->dumps.in_namespace++;
        jitanon__fmt(msg, sizeof msg, "jitdump %s of process %u (pid %u in its namespace) read inside its root", found,
                     (unsigned)proc.pid, (unsigned)proc.nspid);
        jitanon__inj_log(j, "%s%s", msg, NULL);
        while (dl > 0 && name->data[dl - 1] != '/') dl--;
        memcpy(near, name->data, name->length); /* open_dump checked the length */
        near[dl ? dl - 1 : 0] = 0;
        if (!dl || !j->os->is_dir(near)) memcpy(near, "/tmp", 5);
        near[strlen(near) + 1] = 0;
        near[strlen(near)] = '/';
        return jitanon__inj_add_dump(j, &jd, found, near);
    }
    return jitanon__inj_add_dump(j, &jd, found, found);
}

/* -- decide: one round in time order ---------------------------------------------------------- */

JITANON__PRIVATE int jitanon__inj_is_mmap(uint32_t type)
{
    return type == JITANON_PERF_RECORD_MMAP || type == JITANON_PERF_RECORD_MMAP2;
}

/* The earliest pending jit event over all dumps (few dumps: a linear scan is enough). */
JITANON__PRIVATE jitanon__inj_event *jitanon__inj_next_event(jitanon__inj *j, size_t *which)
{
    jitanon__inj_event *best = NULL;
    size_t i;
    for (i = 0; i < j->jit.ndumps; i++) {
        jitanon__inj_dump *d = &j->jit.dumps[i];
        jitanon__inj_event *e = d->next < d->count ? &d->events[d->next] : NULL;
        if (e && (!best || e->time < best->time || (e->time == best->time && e->seq < best->seq))) {
            best = e;
            *which = i;
        }
    }
    return best;
}

JITANON__PRIVATE jitanon_trim_event jitanon__inj_trim_event(uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
                                                            uint64_t pgoff, jitanon_trim_kind kind, uint64_t id)
{
    jitanon_trim_event e;
    e.pid = pid;
    e.kind = kind;
    e.time = time;
    e.start = start;
    e.len = len;
    e.pgoff = pgoff;
    e.id = id;
    return e;
}

/* Claim e joins `early`'s bounds (jit.early_lo, early_hi, early_due); `first`: it is
   the only one, so the bounds start from it. */
JITANON__PRIVATE void jitanon__inj_early_widen(jitanon__inj_jit *jt, const jitanon__inj_event *e, int first)
{
    if (first || e->start < jt->early_lo) jt->early_lo = e->start;
    if (first || e->start + (e->size - 1) > jt->early_hi) jt->early_hi = e->start + (e->size - 1);
    if (first || e->load_time < jt->early_due) jt->early_due = e->load_time;
}

/* A name hotspot's parser registers as a file (not anonymous or special memory). */
JITANON__PRIVATE int jitanon__inj_file_name(jitanon_str name)
{
    const char *p = name.data;
    size_t n = name.length;
    return n && p[0] == '/' && !(n >= 6 && !memcmp(p, "//anon", 6)) && !(n >= 5 && !memcmp(p, "/dev/", 5)) &&
           !(n >= 7 && !memcmp(p, "/memfd:", 7)) && !(n >= 5 && !memcmp(p, "/SYSV", 5));
}

/* Another file is mapped into process `pid` (in time order): hotspot's parser forgets the
   base it held for it, so the next region function is framed again. */
JITANON__PRIVATE void jitanon__inj_region_forget(jitanon__inj *j, uint32_t pid)
{
    size_t *last = j->jit.nregions ? jitanon__hmap_find(&j->jit.region_last, pid) : NULL;
    if (last) *last = 0;
}

/* Whether the MMAP2 `s` (made now, in time order: the order hotspot's parser registers
   mappings in) is framed by its file's base (see jitanon__inj_emit_framed): a region
   function whose file's base the parser does not hold as the process's last one.  A
   frame's restore that maps a file makes it forget that base again; //anon does not. */
JITANON__PRIVATE jitanon_result jitanon__inj_frame(jitanon__inj *j, jitanon__inj_synth *s)
{
    const jitanon__inj_func *f = &j->jit.funcs[s->func];
    const jitanon__inj_region *g;
    size_t *last;
    s->frame = 0;
    s->restore = SIZE_MAX;
    if (f->region == SIZE_MAX) { /* a file of its own */
        jitanon__inj_region_forget(j, f->pid);
        return JITANON_OK;
    }
    g = &j->jit.regions[f->region];
    if (s->start - f->pgoff != g->base) return JITANON_OK; /* a MOVE's slice inherits, wrongly but harmlessly */
    if (!(last = jitanon__hmap_at(&j->jit.region_last, &j->a, f->pid, 0))) return jitanon__inj_nomem(j, "region bases");
    if (*last == f->region + 1) return JITANON_OK;
    s->frame = 1;
    *last = f->region + 1;
    if (g->key == g->base && j->maps.trim) { /* code below the key address: B is the key (see jitanon__eo_region_file) */
        jitanon_range where;
        jitanon_trim_kind kind = jitanon__trim_resolve_fast(j->maps.trim, f->pid, g->base, &where);
        if ((kind == JITANON_TRIM_ANON || kind == JITANON_TRIM_FILE) && where.id < j->maps.nidents) s->restore = where.id;
        if (kind == JITANON_TRIM_FILE) *last = 0;
    }
    return JITANON_OK;
}

/* -- region layout, file mode: claims --------------------------------------------------------

   Every load into a region file whose module hotspot's parser has reported makes it throw
   its modules away (and re-read the symbols and debug info of every file a frame hits
   after): node's 8 s bench recording, 1,368 such flushes, the parse 2.5 times as long as
   with per-function files.  So when a process maps anonymous memory (a JIT commits code
   space), the region functions its dumps will load inside it, and that no earlier code of
   their dump overlaps, are mapped at once, in one batch right after it (a claim each, one
   MMAP2 a run of them): the parser then registers their slices over memory nothing maps
   yet, before any sample can hit them, and nothing it holds is replaced.  The anonymous
   mapping's pieces leave the claims out, as they leave loaded code out.  The engine still
   learns each function at its load (what a sample resolves to is unchanged); the claims
   are what perf additionally sees, kept equal to it: a sample word the engine does not
   resolve to jitted code but that lies in a claim (code running before its load) takes
   the claim back first (jitanon__inj_unclaim: what the engine has there goes over it, at
   the sample's time), as do a file or another function mapped over part of it, a fork
   (perf copies the maps) and an exec; a load whose claim stands maps nothing more. */

/* The claims of process `pid` (made if `make`), or NULL. */
JITANON__PRIVATE jitanon_rangemap *jitanon__inj_claims(jitanon__inj *j, uint32_t pid, int make)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t *slot = jt->nclaims ? jitanon__hmap_find(&jt->claims_of, pid) : NULL;
    if (slot && *slot) return &jt->claims[*slot - 1];
    if (!make || !(slot = jitanon__hmap_at(&jt->claims_of, &j->a, pid, 0)) ||
        !jitanon__grow(&j->a, (void **)&jt->claims, &jt->claims_cap, jt->nclaims + 1, sizeof *jt->claims))
        return NULL;
    jitanon_rangemap_init(&jt->claims[jt->nclaims], &j->a);
    *slot = ++jt->nclaims;
    return &jt->claims[*slot - 1];
}

/* A synthesized MMAP2 of the round (its fields past `func` zeroed), or NULL. */
JITANON__PRIVATE jitanon__inj_synth *jitanon__inj_push_synth(jitanon__inj *j, uint64_t time, uint64_t seq, uint64_t start,
                                                            uint64_t size, size_t func)
{
    jitanon__inj_buf *rd = &j->round;
    jitanon__inj_synth *s;
    if (!jitanon__grow(&j->a, (void **)&rd->synth, &rd->synth_cap, rd->nsynth + 1, sizeof *s)) return NULL;
    s = &rd->synth[rd->nsynth++];
    memset(s, 0, sizeof *s);
    s->time = time;
    s->seq = seq;
    s->start = start;
    s->size = size;
    s->func = func;
    s->restore = SIZE_MAX;
    return s;
}

/* Claimed function `fi` leaves its process's claims; `back`: its mapping is taken back at
   `time` (seq `seq`), what the engine has at its range going over it.  It is mapped at
   its load then, as any function. */
JITANON__PRIVATE jitanon_result jitanon__inj_unclaim(jitanon__inj *j, size_t fi, uint64_t time, uint64_t seq, int back)
{
    jitanon__inj_func *f = &j->jit.funcs[fi];
    jitanon_rangemap *m = jitanon__inj_claims(j, f->pid, 0);
    jitanon_result res;
    if (!f->claimed || !m) return JITANON_OK;
    if (back) {
        jitanon_range where;
        jitanon_trim_kind kind = jitanon__trim_resolve_fast(j->maps.trim, f->pid, f->code_addr, &where);
        jitanon__inj_synth *s = jitanon__inj_push_synth(j, time, seq, f->code_addr, f->claim_len, fi);
        if (!s) return jitanon__inj_nomem(j, "synthesized mmaps");
        s->take_back = 1;
        if ((kind == JITANON_TRIM_ANON || kind == JITANON_TRIM_FILE) && where.id < j->maps.nidents) s->restore = where.id;
        if (kind == JITANON_TRIM_FILE) jitanon__inj_region_forget(j, f->pid);
        j->st->write.region_repairs++;
    }
    f->claimed = 0;
    j->jit.nclaimed--;
    res = jitanon_rangemap_erase(m, f->code_addr, f->claim_len, j->err);
    return res == JITANON_ERR_INVALID_ARGUMENT ? JITANON_OK : res;
}

/* Every claim of `pid` over [start, start + len) (all of them when len is 0) leaves (see
   jitanon__inj_unclaim). */
JITANON__PRIVATE jitanon_result jitanon__inj_unclaim_range(jitanon__inj *j, uint32_t pid, uint64_t start, uint64_t len,
                                                           uint64_t time, uint64_t seq, int back)
{
    jitanon_rangemap *m = j->jit.nclaimed ? jitanon__inj_claims(j, pid, 0) : NULL;
    jitanon_result res = JITANON_OK;
    jitanon_rangemap_iter it;
    jitanon_range c;
    if (!m) return JITANON_OK;
    for (;;) { /* one at a time: taking one back changes the map */
        if (len) jitanon_rangemap_iter_begin(&it, m, start, len);
        else jitanon_rangemap_iter_begin_all(&it, m);
        if (!jitanon_rangemap_iter_next(&it, &c) || c.id >= j->jit.nfuncs || !j->jit.funcs[c.id].claimed) break;
        if ((res = jitanon__inj_unclaim(j, (size_t)c.id, time, seq, back)) != JITANON_OK) break;
    }
    if (res == JITANON_OK && len == 0) jitanon_rangemap_release(m);
    return res;
}

/* The round's output of anonymous mapping `r` leaves out the claims of its process over
   it (as its pieces leave out loaded code). */
JITANON__PRIVATE jitanon_result jitanon__inj_claims_cut(jitanon__inj *j, jitanon__inj_rec *r, const jitanon_rangemap *m)
{
    jitanon__inj_buf *rd = &j->round;
    jitanon_rangemap_iter it;
    jitanon_range c;
    size_t i, n = r->action == JITANON__INJ_PIECES ? r->pieces : 1, first = rd->npieces;
    if (r->action == JITANON__INJ_DROP) return JITANON_OK;
    jitanon_rangemap_iter_begin(&it, m, r->start, r->len);
    if (!jitanon_rangemap_iter_next(&it, &c)) return JITANON_OK;
    for (i = 0; i < n; i++) {
        jitanon_trim_piece p;
        uint64_t at, end;
        if (r->action == JITANON__INJ_PIECES) p = rd->pieces[r->first_piece + i];
        else p.start = r->start, p.len = r->len, p.pgoff = r->pgoff;
        at = p.start;
        end = p.start + p.len;
        jitanon_rangemap_iter_begin(&it, m, p.start, p.len);
        for (;;) {
            int more = jitanon_rangemap_iter_next(&it, &c);
            uint64_t to = !more ? end : c.start > at ? (c.start < end ? c.start : end) : at;
            if (to > at) {
                if (!jitanon__grow(&j->a, (void **)&rd->pieces, &rd->pieces_cap, rd->npieces + 1, sizeof *rd->pieces))
                    return jitanon__inj_nomem(j, "pieces");
                rd->pieces[rd->npieces].start = at;
                rd->pieces[rd->npieces].len = to - at;
                rd->pieces[rd->npieces++].pgoff = p.pgoff + (at - p.start);
            }
            if (!more) break;
            at = c.start + c.len < end ? c.start + c.len : end;
            if (at < c.start) at = end; /* wrapped: nothing after it */
        }
    }
    r->first_piece = first;
    r->pieces = rd->npieces - first;
    r->action = r->pieces ? JITANON__INJ_PIECES : JITANON__INJ_DROP;
    return JITANON_OK;
}

/* Whether the output maps all of [start, start + len) of `pid` from region file `region`
   (at its B): the engine has only loaded code there, each function of that file, and no
   code of the run was ever moved (a MOVE's slice is at another B). */
JITANON__PRIVATE int jitanon__inj_same_file(const jitanon__inj *j, uint32_t pid, uint64_t start, uint64_t len, size_t region)
{
    const jitanon_rangemap *m = jitanon_trim_map(j->maps.trim, pid);
    jitanon_rangemap_iter it;
    jitanon_range p;
    uint64_t at = start;
    if (!m || !len || j->st->trim.moves) return 0;
    jitanon_rangemap_iter_begin(&it, m, start, len);
    while (jitanon_rangemap_iter_next(&it, &p)) {
        if (p.kind != JITANON_TRIM_JIT || p.id >= j->jit.nfuncs || j->jit.funcs[p.id].region != region || p.start > at)
            return 0;
        at = p.start + p.len;
    }
    return at - start >= len;
}

/* Whether the engine has nothing but anonymous memory over [start, start + len) of `pid`. */
JITANON__PRIVATE int jitanon__inj_only_anon(const jitanon__inj *j, uint32_t pid, uint64_t start, uint64_t len)
{
    const jitanon_rangemap *m = jitanon_trim_map(j->maps.trim, pid);
    jitanon_rangemap_iter it;
    jitanon_range p;
    if (!m) return 1;
    jitanon_rangemap_iter_begin(&it, m, start, len);
    while (jitanon_rangemap_iter_next(&it, &p))
        if (p.kind != JITANON_TRIM_ANON) return 0;
    return 1;
}

/* Anonymous mapping `r` of a process with dumps, before the engine learns it (and before
   late loads waiting for it are mapped, which then find their claims): the functions that
   will load inside it are claimed (above), in address order, a run of touching ones of
   one file in one MMAP2, a nanosecond after it (a sample at its very time is the engine's;
   each claim's function loads later). */
JITANON__PRIVATE jitanon_result jitanon__inj_claim(jitanon__inj *j, jitanon__inj_rec *r)
{
    jitanon__eo_region *s = &j->elf.u.reg;
    jitanon__inj_jit *jt = &j->jit;
    jitanon__inj_synth *run = NULL;
    jitanon_rangemap *m = NULL;
    jitanon_result res = JITANON_OK;
    size_t d, k, framed = 0;
    for (d = 0; d < jt->ndumps && res == JITANON_OK; d++) {
        const jitanon__inj_dump *jd = &jt->dumps[d];
        size_t lo = jd->fresh_from, hi = jd->fresh_to;
        if (jd->pid != r->pid || lo == hi) continue;
        while (lo < hi) { /* the first place ending past r's start */
            size_t mid = lo + (hi - lo) / 2;
            const jitanon__eo_place *q = &s->places[s->fresh[mid]];
            if (q->addr + q->size <= r->start) lo = mid + 1;
            else hi = mid;
        }
        for (k = lo; k < jd->fresh_to && res == JITANON_OK; k++) {
            const jitanon__eo_place *pl = &s->places[s->fresh[k]];
            jitanon__inj_func *f = &jt->funcs[pl->func];
            /* what its load maps (the unwinding tail the runtime keeps after the code too,
               as the engine has it then) */
            uint64_t len = jitanon__inj_map_len(pl->size, f->mapped_size);
            jitanon_rangemap_iter it;
            jitanon_range other;
            if (pl->addr - r->start >= r->len) break;
            if (m) jitanon_rangemap_iter_begin(&it, m, pl->addr, len);
            if (f->slotted || f->claimed || f->failed || f->region == SIZE_MAX || pl->size <= 1 ||
                len > r->len - (pl->addr - r->start) || !jitanon__inj_only_anon(j, r->pid, pl->addr, len) ||
                (m && jitanon_rangemap_iter_next(&it, &other))) /* in another's tail */
                continue;
            if (!m && !(m = jitanon__inj_claims(j, r->pid, 1))) return jitanon__inj_nomem(j, "claims");
            if ((res = jitanon__eo_region_slot(j, s, pl->func, pl->addr, len)) != JITANON_OK ||
                (res = jitanon_rangemap_assign(m, pl->addr, len, 1, pl->func, j->err)) != JITANON_OK)
                break;
            f->claimed = 1;
            f->claim_len = len;
            jt->nclaimed++;
            j->st->write.region_claims++;
            if (run && run->start + run->size == pl->addr && jt->funcs[run->func].region == f->region) {
                run->size += len;
                continue;
            }
            /* seq 0: before a load of the same time, which is pushed (and framed) after it */
            if (!(run = jitanon__inj_push_synth(j, r->time + 1, 0, pl->addr, len, pl->func)))
                return jitanon__inj_nomem(j, "synthesized mmaps");
            /* the batch's first is framed whatever the parser holds now: a record of r's
               time decided after r goes out before the batch */
            if (!framed++) jitanon__inj_region_forget(j, r->pid);
            if ((res = jitanon__inj_frame(j, run)) != JITANON_OK) break;
        }
    }
    return res;
}

/* A sample's word that the engine does not resolve to jitted code (jitanon__inj_hit): a
   claim there is taken back first. */
JITANON__PRIVATE void jitanon__inj_claim_hit(jitanon__inj *j, uint32_t pid, uint64_t ip)
{
    jitanon_rangemap *m;
    jitanon_range c;
    /* claims lie in the dumps' code (most words a sample names are native code) */
    if (ip < j->jit.code_lo || ip > j->jit.code_hi || !(m = jitanon__inj_claims(j, pid, 0))) return;
    if (jitanon_rangemap_lookup(m, ip, &c) && c.id < j->jit.nfuncs && j->jit.claim_res == JITANON_OK)
        j->jit.claim_res = jitanon__inj_unclaim(j, (size_t)c.id, j->jit.claim_time, j->jit.seq++, 1);
}

/* Maps the function of jit event `e` from `time` on: the engine learns it, and its MMAP2
   is synthesized with that time. */
JITANON__PRIVATE jitanon_result jitanon__inj_apply(jitanon__inj *j, const jitanon__inj_event *e, uint64_t time)
{
    jitanon__inj_func *f = &j->jit.funcs[e->func];
    jitanon__inj_synth *s;
    jitanon_result res = JITANON_OK;
    int claimed = f->claimed && !e->is_move;
    /* Its own claim stands for its mapping; one of another function under it is taken back
       first (what the engine had there goes over all of it, then this over its part). */
    if (claimed) res = jitanon__inj_unclaim(j, e->func, time, e->seq, 0);
    else if (j->jit.nclaimed) res = jitanon__inj_unclaim_range(j, f->pid, e->start, e->size, time, e->seq, 1);
    if (res != JITANON_OK) return res;
    if (f->region != SIZE_MAX && !f->slotted && !e->is_move && j->elf.ops == &jitanon__eo_regions &&
        jitanon__eo_region_online(j)) {
        if ((res = jitanon__eo_region_slot(j, &j->elf.u.reg, e->func, e->start, e->size)) != JITANON_OK) return res;
        /* code over code no sample hit, all of it mapped from this file already (at the
           same B): the file holds this code there now, and perf and hotspot's parser keep
           what they have (a new MMAP2 would make the parser throw its modules away) */
        if (!claimed && jitanon__inj_same_file(j, f->pid, e->start, e->size, f->region)) claimed = 1;
    }
    /* Sampled files ask the engine where samples land whatever anon_mode is (with ALL and
       KEEP it tells a superset: the anon mmaps it trims stay whole or go). */
    if (j->opts->anon_mode == JITANON_ANON_RANGE || j->elf.ops->needs_maps) {
        jitanon_trim_event te = jitanon__inj_trim_event(f->pid, time, e->start, e->size, 0, JITANON_TRIM_JIT, e->func);
        res = e->is_move ? jitanon_trim_move(j->maps.trim, &te, j->err) : jitanon_trim_load(j->maps.trim, &te, j->err);
    }
    if (res == JITANON_ERR_INVALID_ARGUMENT) return JITANON_OK; /* wrapping ranges: skip */
    if (res != JITANON_OK) return res;
    if (!claimed) {
        if (!(s = jitanon__inj_push_synth(j, time, e->seq, e->start, e->size, e->func)))
            return jitanon__inj_nomem(j, "synthesized mmaps");
        if ((res = jitanon__inj_frame(j, s)) != JITANON_OK) return res;
    }
    if (e->late && time < e->load_time) {
        jitanon__inj_jit *jt = &j->jit;
        size_t k, keep = 0;
        if (jt->nearly == jt->early_cap) { /* full: those whose load time passed go first */
            for (k = 0; k < jt->nearly; k++)
                if (jt->early[k].load_time > time) jt->early[keep++] = jt->early[k];
            jt->nearly = keep;
        }
        if (!jitanon__grow(&j->a, (void **)&jt->early, &jt->early_cap, jt->nearly + 1, sizeof *jt->early))
            return jitanon__inj_nomem(j, "late loads");
        jitanon__inj_early_widen(jt, e, jt->nearly == 0);
        jt->early[jt->nearly++] = *e;
        jt->hot[e->func].late_until = e->load_time;
        if (e->load_time > j->jit.late_horizon) j->jit.late_horizon = e->load_time;
        j->st->late.loads++;
    }
    return JITANON_OK;
}

/* -- late NAME: the claim of a load that came due before its own time -------------------- */

/* Queues a claim in `waiting`, in (load_time, seq) order. */
JITANON__PRIVATE jitanon_result jitanon__inj_late_park(jitanon__inj *j, const jitanon__inj_event *e)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t at;
    if (jt->whead * 2 >= jt->nwaiting && jt->whead) { /* the taken half goes */
        memmove(jt->waiting, jt->waiting + jt->whead, (jt->nwaiting - jt->whead) * sizeof *jt->waiting);
        jt->nwaiting -= jt->whead;
        jt->whead = 0;
    }
    if (!jitanon__grow(&j->a, (void **)&jt->waiting, &jt->waiting_cap, jt->nwaiting + 1, sizeof *jt->waiting))
        return jitanon__inj_nomem(j, "late loads");
    /* Windows open in load order (but for those clamped to the marker): nearly always an
       append. */
    at = jt->nwaiting;
    while (at > jt->whead && (jt->waiting[at - 1].load_time > e->load_time ||
                              (jt->waiting[at - 1].load_time == e->load_time && jt->waiting[at - 1].seq > e->seq)))
        at--;
    memmove(jt->waiting + at + 1, jt->waiting + at, (jt->nwaiting - at) * sizeof *jt->waiting);
    jt->waiting[at] = *e;
    jt->nwaiting++;
    return JITANON_OK;
}

/* Its window opened: mapped now when the range lies inside a trimmable mapping (the
   memory the JIT will put the function in), else it waits for one to appear over it
   (jitanon__inj_late_mapped) or for its own load. */
JITANON__PRIVATE jitanon_result jitanon__inj_late_due(jitanon__inj *j, const jitanon__inj_event *e)
{
    jitanon__inj_jit *jt = &j->jit;
    uint32_t pid = jt->funcs[e->func].pid;
    if (jitanon_trim_resolve(j->maps.trim, pid, e->start, NULL) == JITANON_TRIM_ANON &&
        jitanon_trim_resolve(j->maps.trim, pid, e->start + (e->size - 1), NULL) == JITANON_TRIM_ANON)
        return jitanon__inj_apply(j, e, e->time);
    return jitanon__inj_late_park(j, e);
}

/* A trimmable mapping of `r->pid` appears: the waiting claims it covers start now (in
   load order), before the engine trims the mapping around them; the rest stay, in order. */
JITANON__PRIVATE jitanon_result jitanon__inj_late_mapped(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t i, keep = jt->whead;
    jitanon_result res = JITANON_OK;
    for (i = jt->whead; i < jt->nwaiting; i++) {
        const jitanon__inj_event *e = &jt->waiting[i];
        /* the range first: it rules out nearly all, without reading the function */
        if (res == JITANON_OK && e->start >= r->start && e->start - r->start < r->len &&
            e->size <= r->len - (e->start - r->start) && e->load_time > r->time && jt->funcs[e->func].pid == r->pid) {
            jitanon__inj_event w = *e;
            res = jitanon__inj_apply(j, &w, r->time);
        } else if (keep++ != i) jt->waiting[keep - 1] = *e;
    }
    jt->nwaiting = keep;
    return res;
}

/* A mapping the engine does not trim (a file, as V8 maps the builtins of its executable
   into its code range) appears over claims mapped before their load times: perf would
   resolve their addresses to it, so each goes back to `waiting`, to be mapped again at
   its load time at the latest.  Claims whose load time has passed are dropped from the
   list on the way. */
JITANON__PRIVATE jitanon_result jitanon__inj_late_shadowed(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t i, keep = 0;
    jitanon_result res = JITANON_OK;
    for (i = 0; i < jt->nearly; i++) {
        jitanon__inj_event w = jt->early[i];
        jitanon__inj_func *f = &jt->funcs[w.func];
        if (w.load_time <= r->time) continue;
        if (res == JITANON_OK && f->pid == r->pid &&
            (w.start >= r->start ? w.start - r->start < r->len : r->start - w.start < w.size)) {
            jt->hot[w.func].late_until = 0;
            j->st->late.loads--;
            res = jitanon__inj_late_park(j, &w);
        } else jt->early[keep++] = w;
    }
    jt->nearly = keep;
    return res;
}

/* Applies every jit event up to `time` (all of them when `all`), waiting late claims at
   their own load times, in time order. */
JITANON__PRIVATE jitanon_result jitanon__inj_apply_until(jitanon__inj *j, uint64_t time, int all)
{
    jitanon__inj_jit *jt = &j->jit;
    size_t which = 0;
    jitanon_result res = JITANON_OK;
    while (res == JITANON_OK) {
        jitanon__inj_event *e = jitanon__inj_next_event(j, &which);
        if (jt->whead == jt->nwaiting) jt->whead = jt->nwaiting = 0;
        if (jt->whead < jt->nwaiting) {
            jitanon__inj_event w = jt->waiting[jt->whead];
            if ((all || w.load_time <= time) && (!e || w.load_time < e->time || (w.load_time == e->time && w.seq < e->seq))) {
                jt->whead++;
                res = jitanon__inj_apply(j, &w, w.load_time);
                continue;
            }
        }
        if (!e || !(all || e->time <= time)) {
            /* until then nothing is due, unless a record adds events (jitanon__inj_round) */
            jt->due = e ? e->time : UINT64_MAX;
            if (jt->whead < jt->nwaiting && jt->waiting[jt->whead].load_time < jt->due)
                jt->due = jt->waiting[jt->whead].load_time;
            break;
        }
        jt->dumps[which].next++;
        if (e->size == 0) continue;
        res = e->late ? jitanon__inj_late_due(j, e) : jitanon__inj_apply(j, e, e->time);
    }
    return res;
}

/* on_sample's frames: an MMAP2 that carries its file's build-id (perf record
   --buildid-mmap, the MISC_MMAP_BUILD_ID variant: size at byte 40, the id at 44) gives
   it to that mapping; the last one wins. */
JITANON__PRIVATE void jitanon__inj_sym_mmap_bid(jitanon__inj *j, const jitanon__inj_rec *r, size_t ident)
{
    const uint8_t *raw = j->round.bytes.data + r->off;
    size_t off = j->sym.mmap_bids.size, *slot;
    uint8_t size;
    if (r->size < 64) return;
    size = raw[40] <= 20 ? raw[40] : 20;
    if (jitanon_membuf_write(&j->sym.mmap_bids, &size, 1) || jitanon_membuf_write(&j->sym.mmap_bids, raw + 44, 20))
        return; /* out of memory: the recording's table may still know it */
    if ((slot = jitanon__hmap_at(&j->sym.mmap_bid, &j->a, ident, off)) != NULL) *slot = off;
}

/* Interns (name, pgoff - start): equal identities get equal map_ids, which lets the
   engine skip re-sending what an identical mapping already covers.  A hash collision
   between different identities just gets a fresh id (no skipping). */
JITANON__PRIVATE jitanon_result jitanon__inj_ident_of(jitanon__inj *j, const char *name, size_t name_len, uint64_t delta,
                                                      uint64_t *id)
{
    static const char nul = 0;
    jitanon__inj_maps *m = &j->maps;
    jitanon__inj_ident *e;
    size_t *slot;
    uint64_t h;
    uint8_t d[8];
    jitanon__wr64(d, delta, 0);
    h = jitanon__fnv1a(d, 8, jitanon__fnv1a(name, name_len, 0xcbf29ce484222325ull));
    if (!jitanon__grow(&j->a, (void **)&m->idents, &m->idents_cap, m->nidents + 1, sizeof *e) ||
        !(slot = jitanon__hmap_at(&m->index, &j->a, h, m->nidents)))
        return jitanon__inj_nomem(j, "mmap identities");
    if (*slot != m->nidents) {
        e = &m->idents[*slot];
        if (e->delta == delta && e->name_len == name_len && !memcmp(m->names.data + e->name_off, name, name_len)) {
            *id = *slot;
            return JITANON_OK;
        }
    }
    e = &m->idents[m->nidents];
    e->name_off = m->names.size;
    e->name_len = name_len;
    e->delta = delta;
    if (jitanon_membuf_write(&m->names, name, name_len) || jitanon_membuf_write(&m->names, &nul, 1))
        return jitanon__inj_nomem(j, "mmap names");
    *id = m->nidents++;
    return JITANON_OK;
}

/* Decides what one mmap record becomes. */
JITANON__PRIVATE jitanon_result jitanon__inj_decide_trim(jitanon__inj *j, jitanon__inj_rec *r, const char *name)
{
    jitanon__inj_buf *rd = &j->round;
    jitanon_trim_kind kind = jitanon_trim_classify(name, r->name_len);
    const size_t *dumps = kind == JITANON_TRIM_ANON ? jitanon__hmap_find(&j->jit.pids, r->pid) : NULL;
    const jitanon_trim_piece *p = NULL;
    size_t n = 0, i;
    uint64_t map_id = 0;
    jitanon_trim_event te;
    jitanon_result res;
    int dumped = dumps && *dumps;
    if (j->opts->anon_mode == JITANON_ANON_ALL && dumped) {
        r->action = JITANON__INJ_DROP;
        j->st->trim.dropped++;
        return JITANON_OK;
    }
    if (!j->maps.trim) return JITANON_OK; /* --anon=keep/all without a symbolizer: nothing to track */
    if (dumped && j->jit.whead < j->jit.nwaiting && (res = jitanon__inj_late_mapped(j, r)) != JITANON_OK) return res;
    if (kind != JITANON_TRIM_ANON && j->jit.nearly && (res = jitanon__inj_late_shadowed(j, r)) != JITANON_OK) return res;
    if ((res = jitanon__inj_ident_of(j, name, r->name_len, r->pgoff - r->start, &map_id)) != JITANON_OK) return res;
    if (j->opts->on_sample && r->type == JITANON_PERF_RECORD_MMAP2 && (r->misc & JITANON_PERF_MISC_MMAP_BUILD_ID))
        jitanon__inj_sym_mmap_bid(j, r, (size_t)map_id);
    te = jitanon__inj_trim_event(r->pid, r->time, r->start, r->len, r->pgoff, kind, map_id);
    res = jitanon_trim_mmap(j->maps.trim, &te, &p, &n, j->err);
    if (res == JITANON_ERR_INVALID_ARGUMENT) return JITANON_OK; /* a wrapping range: pass it on */
    if (res != JITANON_OK || !dumped) return res;
    if (n == 1 && p[0].start == r->start && p[0].len == r->len) {
        j->st->trim.kept++;
        return JITANON_OK;
    }
    if (n == 0) j->st->trim.dropped++;
    else j->st->trim.split++;
    j->st->trim.pieces += n;
    if (!jitanon__grow(&j->a, (void **)&rd->pieces, &rd->pieces_cap, rd->npieces + n, sizeof *rd->pieces))
        return jitanon__inj_nomem(j, "pieces");
    r->action = n ? JITANON__INJ_PIECES : JITANON__INJ_DROP;
    r->first_piece = rd->npieces;
    r->pieces = n;
    for (i = 0; i < n; i++) rd->pieces[rd->npieces++] = p[i];
    return JITANON_OK;
}

/* An mmap record: trimmed, and (region layout, file mode) anonymous memory claimed, any
   other mapping taking back the claims it lies over (jitanon__inj_claim). */
JITANON__PRIVATE jitanon_result jitanon__inj_decide_mmap(jitanon__inj *j, jitanon__inj_rec *r, const char *name)
{
    int claims = j->elf.ops == &jitanon__eo_regions && j->maps.trim && jitanon__eo_region_online(j) &&
                 j->opts->anon_mode == JITANON_ANON_RANGE;
    int anon = claims && jitanon_trim_classify(name, r->name_len) == JITANON_TRIM_ANON;
    const size_t *dumps = anon ? jitanon__hmap_find(&j->jit.pids, r->pid) : NULL;
    jitanon_rangemap *m;
    jitanon_result res = JITANON_OK;
    if (claims && !anon && j->jit.nclaimed)
        res = jitanon__inj_unclaim_range(j, r->pid, r->start, r->len ? r->len : 1, r->time, j->jit.seq++, 1);
    if (res == JITANON_OK && dumps && *dumps && r->len) res = jitanon__inj_claim(j, r);
    if (res == JITANON_OK) res = jitanon__inj_decide_trim(j, r, name);
    if (res == JITANON_OK && anon && j->jit.nclaimed && (m = jitanon__inj_claims(j, r->pid, 0)) != NULL)
        res = jitanon__inj_claims_cut(j, r, m);
    return res;
}

#define JITANON__PERF_RECORD_NAMESPACES 16 /* perf record --namespaces */
#define JITANON__PERF_NS_MNT 5             /* the mount namespace's index in it */

/* A NAMESPACES record (pid, tid, count, then {dev, inode} per namespace): the inode of
   the process's mount namespace, which tells whether the process /proc shows under that
   pid at injection time is still the one recorded (a pid is reused). */
JITANON__PRIVATE jitanon_result jitanon__inj_namespaces(jitanon__inj *j, const jitanon_perf_record *rec)
{
    jitanon__cur c = jitanon__cur_make(rec->raw.data, rec->raw.size, 0, rec->big_endian);
    uint64_t n, ino;
    uint32_t pid;
    size_t *slot;
    if (rec->raw.size < 24 + 16 * (JITANON__PERF_NS_MNT + 1)) return JITANON_OK; /* tells nothing */
    jitanon__take(&c, 8);
    pid = jitanon__get32(&c);
    jitanon__take(&c, 4);
    n = jitanon__get64(&c);
    jitanon__take(&c, 16 * JITANON__PERF_NS_MNT + 8); /* the namespaces before it, its dev */
    ino = jitanon__get64(&c);
    if (n <= JITANON__PERF_NS_MNT || ino == 0) return JITANON_OK;
    if (!(slot = jitanon__hmap_at(&j->jit.mntns, &j->a, pid, 0))) return jitanon__inj_nomem(j, "namespaces");
    *slot = (size_t)ino;
    return JITANON_OK;
}

/* -- perf_map ELF: a process's perf map as one symbols-only ELF ------------------------------ */

#define JITANON__PM_NONE (SIZE_MAX - 1) /* pm_pids: the process has no usable map */

JITANON__PRIVATE jitanon_result jitanon__inj_load_perfmap_default(void *user, const char *path,
                                                                  const jitanon_perfmap_opts *opts, jitanon_perfmap **out,
                                                                  jitanon_error *err)
{
#ifndef JITANON_NO_STDIO
    jitanon_stream f;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    jitanon__counted c;
    jitanon_result r = jitanon__os_default()->open_named(path, &f, err);
    (void)user;
    *out = NULL;
    if (r != JITANON_OK) return r;
    jitanon__counted_init(&c, &opts->allocator, opts->memory_limit, "memory_limit");
    r = jitanon__slurp(f.read_fn, f.user, &c, &buf, &len, &cap, err);
    jitanon__stream_close(&f);
    if (r == JITANON_OK) r = jitanon_perfmap_load_memory(buf, len, opts, out, err);
    jitanon__free(&opts->allocator, buf, cap);
    return r;
#else
    (void)user, (void)path, (void)opts;
    *out = NULL;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_STDIO: no map file is read");
#endif
}

/* The k-th place the map of `pid` may be: opts.jitdump_dir (the caller pointed there: on
   another machine a /tmp map of the same pid is some other process's), then /tmp.  *dir
   is that directory; it must outlive the run (the build-id cache code knows directories
   by address).  0 when there is no k-th. */
JITANON__PRIVATE int jitanon__inj_perfmap_path(const jitanon__inj *j, uint32_t pid, unsigned k, char *path, size_t cap,
                                              const char **dir)
{
    if (j->opts->jitdump_dir && k-- == 0) {
        *dir = j->opts->jitdump_dir;
        return jitanon__fmt(path, cap, "%s/perf-%u.map", *dir, (unsigned)pid) < cap;
    }
    if (k-- == 0) {
        *dir = "/tmp";
        return jitanon__fmt(path, cap, "/tmp/perf-%u.map", (unsigned)pid) < cap;
    }
    /* Hook (the namespace helper): the process's own /tmp seen through its root in its pid
       namespace, /proc/<pid>/root/tmp/perf-<nspid>.map, goes here as the next place. */
    return 0;
}

/* Writes the stub of map `m` (found in `map_dir`) and remembers its path; *path stays
   JITANON__PM_NONE when it cannot be written (told through io.log). */
JITANON__PRIVATE jitanon_result jitanon__inj_perfmap_stub(jitanon__inj *j, uint32_t pid, const jitanon_perfmap *m,
                                                          const char *map_dir, size_t *path)
{
    jitanon_jitdump_header h;
    jitanon_elf_opts eo = j->opts->elf;
    jitanon_elf_builder b;
    jitanon_membuf elf;
    jitanon_sink sink;
    const size_t *dumps = jitanon__hmap_find(&j->jit.pids, pid);
    const char *dir = j->opts->elf_dir ? j->opts->elf_dir : map_dir;
    char name[48];
    size_t i;
    jitanon_result res;
    memset(&h, 0, sizeof h);
    h.big_endian = j->in->big_endian;
    /* a map says nothing of the machine: its process's dump does, else the recording */
    h.elf_mach = jitanon__inj_machine(j);
    if (!h.elf_mach) h.elf_mach = jitanon_jitdump_host_machine();
    for (i = 0; dumps && *dumps && i < j->jit.ndumps; i++)
        if (j->jit.dumps[i].pid == pid) h.elf_mach = j->jit.dumps[i].sum.header.elf_mach;
    if (!eo.allocator.alloc_fn) eo.allocator = j->a;
    eo.symbols_only = eo.no_debug = eo.no_unwind = 1;
    eo.compress_debug = 0;
    if ((res = jitanon_elf_builder_init(&b, &h, &eo, j->err)) != JITANON_OK) return res;
    for (i = 0; i < m->count && res == JITANON_OK; i++) {
        jitanon_elf_func fn;
        jitanon_error e;
        memset(&fn, 0, sizeof fn);
        fn.name = m->entries[i].name;
        fn.code_addr = m->entries[i].start;
        fn.map_size = m->entries[i].size;
        res = jitanon_elf_builder_add(&b, &fn, NULL, &e);
        if (res == JITANON_OK) j->st->perf_map.entries++;
        /* inside the ELF header's addresses, or at the very top (past 4 GiB for ELF32):
           no code a sample can be in */
        else if (res == JITANON_ERR_INVALID_ARGUMENT || res == JITANON_ERR_LIMIT) res = JITANON_OK;
        else if (j->err) *j->err = e;
    }
    memset(&elf, 0, sizeof elf);
    elf.allocator = j->a;
    sink.write_fn = jitanon_membuf_write;
    sink.user = &elf;
    if (res == JITANON_OK) res = jitanon_elf_builder_finish(&b, sink, NULL, j->err);
    jitanon_elf_builder_release(&b);
    jitanon__fmt(name, sizeof name, "jitted-%u.map.so", (unsigned)pid);
    if (res == JITANON_OK && jitanon__inj_put_file(j, NULL, dir, &elf, name, SIZE_MAX) &&
        (*path = jitanon__inj_add_path(j, dir, name)) == SIZE_MAX)
        res = jitanon__inj_nomem(j, "paths");
    if (res == JITANON_OK && j->out.w->mode == JITANON_PERF_PIPE) res = jitanon__inj_bids_flush(j);
    jitanon_membuf_release(&elf);
    return res;
}

/* The stub of process `pid` (its pool path, or JITANON__PM_NONE), made the first time an
   executable anonymous mapping of it is seen: its map read, the stub written. */
JITANON__PRIVATE jitanon_result jitanon__inj_perfmap_of(jitanon__inj *j, uint32_t pid, size_t *path)
{
    jitanon_perfmap_opts po = j->opts->perfmap;
    const size_t *known = jitanon__hmap_find(&j->pm_pids, pid);
    size_t *slot;
    char found[4096];
    const char *dir = NULL;
    unsigned k;
    jitanon_result res = JITANON_OK;
    if (known) {
        *path = *known;
        return JITANON_OK;
    }
    *path = JITANON__PM_NONE;
    if (!po.allocator.alloc_fn) po.allocator = j->a;
    for (k = 0; jitanon__inj_perfmap_path(j, pid, k, found, sizeof found, &dir); k++) {
        jitanon_perfmap *m = NULL;
        jitanon_error e;
        jitanon_result r = j->io.load_perfmap(j->io.user, found, &po, &m, &e);
        if (r == JITANON_ERR_IO) continue; /* not there */
        if (r != JITANON_OK) {
            jitanon__inj_log(j, "cannot read perf map %s: %s", found, &e);
            break;
        }
        j->st->perf_map.maps++;
        j->st->perf_map.bad_lines += m->stats.bad_lines + m->stats.cut;
        if (m->stats.bad_lines || m->stats.cut) {
            char msg[800], why[256];
            if (m->stats.bad_lines)
                jitanon__fmt(msg, sizeof msg, "perf map %s: %U lines skipped (%s), the first at byte %U%s", found,
                             m->stats.bad_lines, jitanon__pm_reasons(why, &m->stats), m->stats.first_bad,
                             m->stats.cut ? "; the last line is cut short" : "");
            else jitanon__fmt(msg, sizeof msg, "perf map %s: the last line is cut short: skipped", found);
            jitanon__inj_log(j, "%s%s", msg, NULL);
        }
        res = jitanon__inj_perfmap_stub(j, pid, m, dir, path);
        jitanon_perfmap_destroy(m);
        break;
    }
    if (res == JITANON_OK && !(slot = jitanon__hmap_at(&j->pm_pids, &j->a, pid, *path))) res = jitanon__inj_nomem(j, "perf maps");
    return res;
}

/* Decide, after jitanon__inj_decide_mmap: what the output keeps of an executable
   anonymous mapping (the whole, or its pieces) names the process's stub instead. */
JITANON__PRIVATE jitanon_result jitanon__inj_perfmap_mark(jitanon__inj *j, jitanon__inj_rec *r, const char *name)
{
    const uint8_t *raw = j->round.bytes.data + r->off;
    int exec = r->type == JITANON_PERF_RECORD_MMAP2 ? (jitanon__rd32(raw + 64, j->in->big_endian) & 4u) != 0
                                                    : !(r->misc & JITANON__PERF_MISC_MMAP_DATA);
    size_t path;
    jitanon_result res;
    if (r->action == JITANON__INJ_DROP || !exec || jitanon_trim_classify(name, r->name_len) != JITANON_TRIM_ANON)
        return JITANON_OK;
    if ((res = jitanon__inj_perfmap_of(j, r->pid, &path)) != JITANON_OK || path == JITANON__PM_NONE) return res;
    r->stub = path + 1;
    j->st->perf_map.mmaps += r->action == JITANON__INJ_PIECES ? r->pieces : 1;
    return JITANON_OK;
}

/* Read: keeps the record's bytes and what the decisions need of it. */
JITANON__PRIVATE jitanon_result jitanon__inj_buffer(jitanon__inj *j, const jitanon_perf_record *rec)
{
    jitanon__inj_buf *rd = &j->round;
    jitanon__inj_rec *r;
    if ((rd->nrecs == rd->recs_cap &&
         !jitanon__grow(&j->a, (void **)&rd->recs, &rd->recs_cap, rd->nrecs + 1, sizeof *r)) ||
        jitanon__buf_put(&rd->bytes, rec->raw.data, rec->raw.size))
        return jitanon__inj_nomem(j, "round buffer");
    r = &rd->recs[rd->nrecs++];
    /* Every field by name rather than a memset: for 160 bytes a record the compilers
       choose `rep stos`, which cost 6% of a per-process run on its own. */
    r->off = rd->bytes.size - rec->raw.size;
    r->size = rec->raw.size;
    r->offset = rec->offset;
    r->type = rec->type;
    r->action = 0;
    r->misc = rec->misc;
    r->pid = r->tid = r->ppid = 0;
    r->cpu = rec->sid.cpu;
    r->start = r->len = r->pgoff = 0;
    r->name_off = r->name_len = r->chain_off = r->chain_nr = 0;
    r->first_piece = r->pieces = r->stub = r->attr = 0;
    r->marker_read = 0;
    r->decided = rec->type == JITANON_PERF_RECORD_FINISHED_ROUND;
    /* Records without a time (tool records) keep their place next to their neighbours. */
    if (rec->sid.present & JITANON_PERF_SAMPLE_TIME) rd->last_time = rec->sid.time;
    r->time = rd->last_time;
    if (r->time > rd->newest) rd->newest = r->time;
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
        r->attr = rec->attr_index;
        if (rec->sample.callchain_nr) {
            r->chain_off = (size_t)(rec->sample.callchain.data - rec->raw.data);
            r->chain_nr = (size_t)rec->sample.callchain_nr;
        }
    } else if (rec->type == JITANON_PERF_RECORD_FORK || rec->type == JITANON_PERF_RECORD_EXIT) {
        r->pid = rec->task.pid;
        r->ppid = rec->task.ppid;
        r->tid = rec->task.tid;
    } else if (rec->type == JITANON_PERF_RECORD_COMM) {
        r->pid = rec->comm.pid;
    } else if (rec->type == JITANON_PERF_RECORD_TIME_CONV) {
        j->jit.time_conv = rec->time_conv;
        j->jit.have_time_conv = 1;
    } else if (rec->type == JITANON__PERF_RECORD_NAMESPACES) {
        return jitanon__inj_namespaces(j, rec);
    }
    return JITANON_OK;
}

#define JITANON__PERF_MISC_COMM_EXEC (1u << 13)

/* What s->ip of process s->pid resolves to now: kind, name, start, code_index, pgoff.
   An address none of the process's mappings holds may be the kernel's or a module's:
   perf records those as mappings of pid -1. */
JITANON__PRIVATE void jitanon__inj_name(const jitanon__inj *j, jitanon_inject_sample *s)
{
    jitanon_range where;
    memset(&where, 0, sizeof where);
    s->where_pid_ = s->pid;
    s->kind = j->maps.trim ? jitanon__trim_resolve_fast(j->maps.trim, s->pid, s->ip, &where) : JITANON_TRIM_NONE;
    if (s->kind == JITANON_TRIM_NONE && j->maps.trim && s->pid != UINT32_MAX) {
        s->where_pid_ = UINT32_MAX;
        s->kind = jitanon__trim_resolve_fast(j->maps.trim, UINT32_MAX, s->ip, &where);
    }
    where.kind = (uint32_t)s->kind;
    s->where_ = where;
    s->name.data = NULL;
    s->name.length = 0;
    s->start = s->code_index = s->pgoff = 0;
    s->dump = NULL;
    if (s->kind == JITANON_TRIM_JIT && where.id < j->jit.nfuncs) {
        const jitanon__inj_func *f = &j->jit.funcs[where.id];
        s->name = f->name;
        s->start = f->code_addr;
        s->code_index = f->code_index;
        s->dump = f->dump < j->jit.ndumps ? j->jit.dumps[f->dump].dump : NULL;
    } else if (s->kind != JITANON_TRIM_NONE && where.id < j->maps.nidents) {
        s->name.data = (const char *)j->maps.names.data + j->maps.idents[where.id].name_off;
        s->name.length = j->maps.idents[where.id].name_len;
        s->start = where.start;
        s->pgoff = where.start + j->maps.idents[where.id].delta; /* delta = pgoff - start */
    }
}

/* on_sample and on_event get their own user pointer when one is set. */
JITANON__PRIVATE void *jitanon__inj_sample_user(const jitanon__inj *j)
{
    return j->opts->sample_user ? j->opts->sample_user : j->io.user;
}

/* A buffered record decoded once more for a consumer (it was decoded when read, so this
   cannot fail); false, and nothing told, if it somehow does. */
JITANON__PRIVATE int jitanon__inj_redecode(jitanon__inj *j, const jitanon__inj_rec *r, jitanon_perf_record *rec)
{
    memset(rec, 0, sizeof *rec);
    return jitanon__pd_decode_at(j->in, j->round.bytes.data + r->off, r->size, r->offset, rec, NULL) == JITANON_OK;
}

/* opts.on_event: the task and mapping records, as recorded. */
JITANON__PRIVATE void jitanon__inj_tell_event(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon_perf_record rec;
    if (r->type != JITANON_PERF_RECORD_COMM && r->type != JITANON_PERF_RECORD_FORK && r->type != JITANON_PERF_RECORD_EXIT &&
        !jitanon__inj_is_mmap(r->type))
        return;
    if (jitanon__inj_redecode(j, r, &rec)) j->opts->on_event(jitanon__inj_sample_user(j), &rec);
}

/* -- on_sample's threads: their names in time order (JITANON_SAMPLE_COMM) -- */

/* A COMM names its thread from now on; a FORK's new thread starts with its parent's
   name (perf's thread model: a thread is forked from its parent, then renamed). */
JITANON__PRIVATE void jitanon__inj_comm_note(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_sym *y = &j->sym;
    jitanon_perf_record rec;
    const size_t *from;
    size_t *slot, off = y->comms.size;
    static const char nul = 0;
    if (!jitanon__inj_redecode(j, r, &rec)) return;
    if (r->type == JITANON_PERF_RECORD_COMM) {
        if (jitanon_membuf_write(&y->comms, rec.comm.comm.data, rec.comm.comm.length) ||
            jitanon_membuf_write(&y->comms, &nul, 1))
            return; /* out of memory: the thread keeps its older name */
        if ((slot = jitanon__hmap_at(&y->comm, &j->a, rec.comm.tid, off)) != NULL) *slot = off;
    } else if ((from = jitanon__hmap_find(&y->comm, rec.task.ptid)) != NULL) {
        off = *from;
        if ((slot = jitanon__hmap_at(&y->comm, &j->a, rec.task.tid, off)) != NULL) *slot = off;
    }
}

JITANON__PRIVATE void jitanon__inj_comm_of(const jitanon__inj *j, uint32_t tid, jitanon_str *out)
{
    const size_t *at = jitanon__hmap_find(&j->sym.comm, tid);
    out->data = at ? (const char *)j->sym.comms.data + *at : NULL;
    out->length = at ? strlen(out->data) : 0;
}

JITANON__PRIVATE void jitanon__inj_resolve(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon_inject_sample s;
    jitanon_perf_record rec;
    memset(&s, 0, sizeof s);
    s.pid = r->pid;
    s.tid = r->tid;
    s.time = r->time;
    s.ip = r->start;
    jitanon__inj_name(j, &s);
    if (r->chain_nr) {
        s.callchain.data = j->round.bytes.data + r->off + r->chain_off;
        s.callchain.size = r->chain_nr * 8;
        s.callchain_nr = r->chain_nr;
    }
    s.big_endian = j->in->big_endian;
    s.ctx_ = j;
    s.rec_ = r;
    if (!jitanon__inj_redecode(j, r, &rec)) return;
    s.rec = &rec;
    s.cpumode = (uint16_t)(rec.misc & JITANON_PERF_MISC_CPUMODE_MASK);
    if (j->opts->sample_fields & JITANON_SAMPLE_COMM) jitanon__inj_comm_of(j, r->tid, &s.comm);
    j->opts->on_sample(jitanon__inj_sample_user(j), &s);
}

JITANON_API jitanon_trim_kind jitanon_inject_sample_resolve(const jitanon_inject_sample *s, uint64_t ip,
                                                            jitanon_inject_sample *out)
{
    JITANON_ASSERT(s && out && s->ctx_);
    *out = *s;
    out->ip = ip;
    jitanon__inj_name((const jitanon__inj *)s->ctx_, out);
    return out->kind;
}

/* -- on_sample's frames: a symbolizer's view, computed when asked ----------------------------- */

JITANON_API void jitanon_inject_opts_init(jitanon_inject_opts *opts)
{
    JITANON_ASSERT(opts);
    memset(opts, 0, sizeof *opts);
}

JITANON_API int jitanon_inject_find_process_proc(void *user, uint32_t pid, jitanon_inject_process *out)
{
    const jitanon__os *os = jitanon__os_default();
    int other = 0;
    (void)user;
    memset(out, 0, sizeof *out);
    out->nspid = pid;
    if (!os->proc_ns || !os->proc_ns(pid, &out->nspid, &other, &out->mnt_ns)) return 0;
    out->other_mnt = other;
    return 1;
}

/* The perf map of process `pid` (loaded the first time it is asked for, as the perf_map
   ELF option finds one), and its path in *path; NULL when it has none. */
JITANON__PRIVATE const jitanon_perfmap *jitanon__inj_sym_map(jitanon__inj *j, uint32_t pid, jitanon_str *path)
{
    jitanon__inj_sym *y = &j->sym;
    jitanon_perfmap_opts po = j->opts->perfmap;
    const size_t *known = jitanon__hmap_find(&y->maps, pid);
    size_t *slot, at = 0;
    char found[4096];
    const char *dir;
    unsigned k;
    if (!known) {
        if (!po.allocator.alloc_fn) po.allocator = j->a;
        for (k = 0; !at && jitanon__inj_perfmap_path(j, pid, k, found, sizeof found, &dir); k++) {
            jitanon_perfmap *m = NULL;
            jitanon_error e;
            size_t p;
            if (j->io.load_perfmap(j->io.user, found, &po, &m, &e) != JITANON_OK) continue;
            if (!jitanon__grow(&j->a, (void **)&y->pmaps, &y->pmaps_cap, y->npmaps + 1, sizeof *y->pmaps) ||
                !jitanon__grow(&j->a, (void **)&y->pmap_path, &y->paths_cap, y->npmaps + 1, sizeof *y->pmap_path) ||
                (p = jitanon__inj_add_path(j, found, NULL)) == SIZE_MAX) {
                jitanon_perfmap_destroy(m);
                break;
            }
            y->pmaps[y->npmaps] = m;
            y->pmap_path[y->npmaps] = p;
            at = ++y->npmaps;
        }
        /* out of memory: asked again next time */
        if (!(slot = jitanon__hmap_at(&y->maps, &j->a, pid, at))) return NULL;
        known = slot;
    }
    if (!*known) return NULL;
    path->data = (const char *)j->jit.paths.data + y->pmap_path[*known - 1];
    path->length = strlen(path->data);
    return y->pmaps[*known - 1];
}

/* The build-id the recording's table (HEADER_BUILD_ID, read the first time) gives the
   file `name`: entries of {header, pid, build_id[24] (its size at [20] when the header's
   misc says so), NUL-terminated name}, padded to 8.  The kernel's is "[kernel.kallsyms]". */
JITANON__PRIVATE void jitanon__inj_sym_bid(jitanon__inj *j, jitanon_str name, jitanon_bytes *out)
{
    jitanon__inj_sym *y = &j->sym;
    const size_t *at;
    int big = j->in->big_endian;
    out->data = NULL;
    out->size = 0;
    if (!y->bids_read) {
        jitanon__cur c;
        y->bids_read = 1;
        if (j->in->mode == JITANON_PERF_FILE && !j->in->features_loaded && j->in->state_.seek_fn) {
            jitanon_error ignored;
            (void)jitanon_perf_reader_load_features(j->in, &ignored);
        }
        if (!jitanon_perf_reader_feature(j->in, JITANON_PERF_FEAT_BUILD_ID, &y->bid_table)) return;
        c = jitanon__cur_make(y->bid_table.data, y->bid_table.size, 0, big);
        while (c.left >= 36) {
            const uint8_t *e = c.p;
            size_t size = jitanon__rd16(e + 6, big), n;
            const char *nm = (const char *)e + 36;
            size_t *slot;
            if (size < 36 || size > c.left) break;
            n = 0;
            while (n < size - 36 && nm[n]) n++;
            if ((slot = jitanon__hmap_at(&y->bids, &j->a, jitanon__fnv1a(nm, n, 0xcbf29ce484222325ull),
                                         (size_t)(e - y->bid_table.data))) == NULL)
                break;
            (void)jitanon__take(&c, size);
        }
    }
    if (name.length >= 17 && !memcmp(name.data, "[kernel.kallsyms]", 17)) name.length = 17;
    if ((at = jitanon__hmap_find(&y->bids, jitanon__fnv1a(name.data, name.length, 0xcbf29ce484222325ull))) != NULL) {
        const uint8_t *e = y->bid_table.data + *at;
        size_t size = jitanon__rd16(e + 6, big), n = 0;
        while (n < size - 36 && e[36 + n]) n++;
        if (n != name.length || memcmp(e + 36, name.data, n)) return; /* another name, same hash */
        out->data = e + 12;
        out->size = (jitanon__rd16(e + 4, big) & JITANON__PERF_MISC_BUILD_ID_SIZE) && e[32] <= 20 ? e[32] : 20;
    }
}

/* The same, remembered by mapping: a frame costs one lookup, not a hash of its path. */
JITANON__PRIVATE void jitanon__inj_sym_bid_of(jitanon__inj *j, size_t ident, jitanon_str name, jitanon_bytes *out)
{
    const size_t *known = jitanon__hmap_find(&j->sym.bid_ident, ident);
    size_t *slot;
    if (known) {
        /* (no entry: no pointer formed either, the table may be empty and NULL) */
        const uint8_t *e = *known ? j->sym.bid_table.data + (*known - 1) : NULL;
        out->data = e ? e + 12 : NULL;
        out->size = !e ? 0
                    : (jitanon__rd16(e + 4, j->in->big_endian) & JITANON__PERF_MISC_BUILD_ID_SIZE) && e[32] <= 20 ? e[32]
                                                                                                             : 20;
        return;
    }
    jitanon__inj_sym_bid(j, name, out);
    if ((slot = jitanon__hmap_at(&j->sym.bid_ident, &j->a, ident, 0)) != NULL && out->data)
        *slot = (size_t)(out->data - 12 - j->sym.bid_table.data) + 1;
}

/* An iterator over function f's DEBUG_INFO entries (a record in a loaded dump). */
JITANON__PRIVATE void jitanon__inj_dbg_begin(const jitanon__inj_func *f, int big, jitanon_jitdump_debug_iter *it)
{
    jitanon_jitdump_record rec;
    memset(&rec, 0, sizeof rec);
    rec.id = JITANON_JITDUMP_CODE_DEBUG_INFO;
    rec.big_endian = big;
    rec.debug.entries.data = f->dbg;
    rec.debug.entries.size = f->dbg_size;
    rec.debug.nr_entry = f->dbg_nr;
    jitanon_jitdump_debug_iter_begin(it, &rec);
}

/* The same, walking the record: what a lookup does when its index could not be built. */
JITANON__PRIVATE void jitanon__inj_sym_line_walk(const jitanon__inj_func *f, uint64_t bias, int big, uint64_t ip,
                                                jitanon_frame *out)
{
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry e;
    uint64_t best = 0;
    jitanon__inj_dbg_begin(f, big, &it);
    while (jitanon_jitdump_debug_iter_next(&it, &e)) {
        uint64_t at = e.addr >= bias ? e.addr - bias : 0;
        if (at <= ip && (!out->line || at >= best) && e.lineno > 0) {
            best = at;
            out->src_file = e.file;
            out->line = (uint32_t)e.lineno;
        }
    }
}

/* A stable sort keeps the entries at one address in the record's order, so the last one
   written wins, as in the function's ELF line table. */
JITANON__PRIVATE int jitanon__inj_line_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__inj_line *l = (const jitanon__inj_line *)ctx;
    return l[a].at < l[b].at;
}

/* Function `id`'s run of lines, built on first use: the index of its head, SIZE_MAX when
   memory ran out (the caller then walks the record, as before there was an index). */
JITANON__PRIVATE size_t jitanon__inj_line_run(jitanon__inj *j, size_t id, const jitanon__inj_func *f, uint64_t bias,
                                              int big)
{
    jitanon__inj_sym *y = &j->sym;
    jitanon_jitdump_debug_iter it;
    jitanon_jitdump_debug_entry e;
    size_t head = y->nlines, n = 0;
    /* (kept in the function, which the frame has read already: an array or hash beside
       it cost one more cache miss a frame, in any of 45,000 functions) */
    if (f->dbg_run) return f->dbg_run - 1;
    /* every entry takes 17 bytes or more of the record (validated when it was read) */
    if (f->dbg_nr > f->dbg_size || f->dbg_size > UINT32_MAX ||
        !jitanon__grow(&j->a, (void **)&y->lines, &y->lines_cap, head + 1 + (size_t)f->dbg_nr, sizeof *y->lines))
        return SIZE_MAX;
    jitanon__inj_dbg_begin(f, big, &it);
    while (n < f->dbg_nr && jitanon_jitdump_debug_iter_next(&it, &e)) {
        jitanon__inj_line *l = &y->lines[head + 1 + n];
        if (e.lineno <= 0) continue;
        l->at = e.addr >= bias ? e.addr - bias : 0;
        l->line = (uint32_t)e.lineno;
        l->file = e.file.length ? (uint32_t)((const uint8_t *)e.file.data - f->dbg) : 0;
        l->file_len = (uint32_t)e.file.length;
        l->pad = 0;
        n++;
    }
    y->lines[head].at = n;
    y->lines[head].line = y->lines[head].file = y->lines[head].file_len = y->lines[head].pad = 0;
    if (!jitanon__sort(&j->a, y->lines + head + 1, n, sizeof *y->lines, jitanon__inj_line_less)) return SIZE_MAX;
    j->jit.funcs[id].dbg_run = head + 1;
    y->nlines = head + 1 + n;
    return head;
}

/* JIT: the DEBUG_INFO entry at `ip` of function `id` (the last whose address is not
   above, less the dump's line bias: the line its ELF file gives for ip). */
JITANON__PRIVATE void jitanon__inj_sym_line(jitanon__inj *j, size_t id, uint64_t ip, jitanon_frame *out)
{
    const jitanon__inj_func *f = &j->jit.funcs[id];
    const jitanon__inj_line *l;
    uint64_t bias;
    size_t head, lo, hi;
    int big;
    if (!f->dbg || f->dump >= j->jit.ndumps || !j->jit.dumps[f->dump].dump) return;
    /* the address bias V8 and LLVM add (the dump's, as its ELF files remove it) */
    bias = j->jit.dumps[f->dump].sum.line_bias;
    if (bias == JITANON_ELF_LINE_BIAS_NONE) bias = 0;
    big = j->jit.dumps[f->dump].dump->header.big_endian;
    if ((head = jitanon__inj_line_run(j, id, f, bias, big)) == SIZE_MAX) {
        jitanon__inj_sym_line_walk(f, bias, big, ip, out);
        return;
    }
    l = j->sym.lines + head + 1;
    lo = 0, hi = (size_t)j->sym.lines[head].at; /* the first entry above ip is in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].at <= ip) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return;
    out->line = l[lo - 1].line;
    out->src_file.data = (const char *)f->dbg + l[lo - 1].file;
    out->src_file.length = l[lo - 1].file_len;
}

/* -- on_sample's unwound frames (JITANON_FRAME_WANT_UNWIND) -- */



JITANON__PRIVATE size_t jitanon__unw_read_default(void *user, const char *path, uint64_t offset, void *dst, size_t size)
{
    jitanon_stream f;
    jitanon_error e;
    uint8_t skip[4096];
    size_t got = 0;
    (void)user;
    if (!strcmp(path, "[vdso]")) { /* this process's own, in memory */
        const uint8_t *v = jitanon__os_default()->self_vdso ? (const uint8_t *)jitanon__os_default()->self_vdso(&got) : NULL;
        if (!v) return SIZE_MAX;
        if (offset >= got) return 0;
        if (size > got - offset) size = got - (size_t)offset;
        memcpy(dst, v + offset, size);
        return size;
    }
    if (jitanon__os_default()->open_named(path, &f, &e) != JITANON_OK) return SIZE_MAX;
    if (offset && jitanon__os_default()->seek && jitanon__os_default()->seek(&f, offset)) offset = 0;
    /* a stream that cannot seek reads from the start: what comes before `offset` is read
       and dropped (once per file: its headers, then its CFI near the end of its read-only
       part) */
    while (offset) {
        size_t n = f.read_fn(f.user, skip, offset < sizeof skip ? (size_t)offset : sizeof skip);
        if (n == 0 || n == SIZE_MAX) break;
        offset -= n;
    }
    while (!offset && got < size) {
        size_t n = f.read_fn(f.user, (uint8_t *)dst + got, size - got);
        if (n == 0 || n == SIZE_MAX) break;
        got += n;
    }
    jitanon__stream_close(&f);
    return offset ? 0 : got;
}

/* `size` bytes at `off` of the file, allocated; NULL when they cannot all be read. */
JITANON__PRIVATE uint8_t *jitanon__unw_take(jitanon__inj *j, const char *path, uint64_t off, size_t size)
{
    uint8_t *p;
    if (!size || size > JITANON__UNW_MAX_BYTES || !(p = (uint8_t *)jitanon__malloc(&j->a, size))) return NULL;
    if (j->io.read_file(j->io.user, path, off, p, size) == size) return p;
    jitanon__free(&j->a, p, size);
    return NULL;
}

/* The file offset of address `addr` of the file (its PT_LOADs), or UINT64_MAX. */
JITANON__PRIVATE uint64_t jitanon__unw_off(const jitanon__unw_file *f, uint64_t addr, uint64_t *seg_end)
{
    size_t i;
    for (i = 0; i < f->nloads; i++)
        if (addr >= f->load_addr[i] && addr - f->load_addr[i] < f->load_size[i]) {
            *seg_end = f->load_off[i] + f->load_size[i];
            return addr - f->load_addr[i] + f->load_off[i];
        }
    return UINT64_MAX;
}

/* Reads f's program headers, .eh_frame_hdr and .eh_frame (a 64-bit ELF file). */
JITANON__PRIVATE void jitanon__unw_load(jitanon__inj *j, jitanon__unw_file *f)
{
    uint8_t eh[64], *ph;
    jitanon__cur c;
    uint64_t phoff, hdr_off = 0, eh_ptr = 0, eh_off, seg_end = 0, count = 0;
    size_t phent, phnum, i;
    unsigned enc_ptr, enc_count, enc_table;
    if (j->io.read_file(j->io.user, f->path, 0, eh, sizeof eh) != sizeof eh || memcmp(eh, "\177ELF", 4) || eh[4] != 2 ||
        (eh[5] != 1 && eh[5] != 2))
        return;
    f->big = eh[5] == 2;
    phoff = jitanon__rd64(eh + 0x20, f->big);
    phent = jitanon__rd16(eh + 0x36, f->big), phnum = jitanon__rd16(eh + 0x38, f->big);
    if (phent < 56 || phnum > 256 || !(ph = jitanon__unw_take(j, f->path, phoff, phent * phnum))) return;
    for (i = 0; i < phnum; i++) {
        const uint8_t *p = ph + i * phent;
        uint32_t type = jitanon__rd32(p, f->big);
        if (type == 1 && f->nloads < JITANON__UNW_MAX_LOADS) { /* PT_LOAD */
            f->load_off[f->nloads] = jitanon__rd64(p + 8, f->big);
            f->load_addr[f->nloads] = jitanon__rd64(p + 16, f->big);
            f->load_size[f->nloads++] = jitanon__rd64(p + 32, f->big);
        } else if (type == 0x6474e550u) { /* PT_GNU_EH_FRAME: .eh_frame_hdr */
            hdr_off = jitanon__rd64(p + 8, f->big);
            f->hdr_addr = jitanon__rd64(p + 16, f->big);
            f->hdr_size = (size_t)(jitanon__rd64(p + 32, f->big) < JITANON__UNW_MAX_BYTES ? jitanon__rd64(p + 32, f->big) : 0);
        }
    }
    jitanon__free(&j->a, ph, phent * phnum);
    /* .eh_frame_hdr: version 1, the encodings of eh_frame_ptr, fde_count and the table */
    if (!f->hdr_size || !(f->hdr = jitanon__unw_take(j, f->path, hdr_off, f->hdr_size))) return;
    c = jitanon__cur_make(f->hdr, f->hdr_size, 0, f->big);
    if (c.left < 4 || f->hdr[0] != 1) return;
    enc_ptr = f->hdr[1], enc_count = f->hdr[2], enc_table = f->hdr[3];
    (void)jitanon__take(&c, 4);
    if (!jitanon__cfi_ptr(&c, enc_ptr, f->hdr_addr + c.off, f->hdr_addr, &eh_ptr)) return;
    if (enc_count != 0xff && enc_table == 0x3b && jitanon__cfi_ptr(&c, enc_count, f->hdr_addr + c.off, f->hdr_addr, &count) &&
        count <= c.left / 8) {
        f->table_at = (size_t)c.off;
        f->nfdes = (size_t)count;
    }
    /* .eh_frame: from its address to the end of its segment (its size is in no header a
       loaded file keeps; a terminator or the segment's end closes it) */
    if ((eh_off = jitanon__unw_off(f, eh_ptr, &seg_end)) == UINT64_MAX || seg_end - eh_off > JITANON__UNW_MAX_BYTES) return;
    f->eh_size = (size_t)(seg_end - eh_off);
    f->eh_addr = eh_ptr;
    if (!(f->eh = jitanon__unw_take(j, f->path, eh_off, f->eh_size))) return;
    f->ok = 1;
}

/* The CFI of the file `path` (read once). */
JITANON__PRIVATE const jitanon__unw_file *jitanon__unw_file_of(jitanon__inj *j, jitanon_str path)
{
    jitanon__inj_sym *y = &j->sym;
    uint64_t h = jitanon__fnv1a(path.data, path.length, 0xcbf29ce484222325ull);
    const size_t *at = jitanon__hmap_find(&y->unw_index, h);
    jitanon__unw_file *f;
    size_t *slot;
    for (; at; at = jitanon__hmap_find(&y->unw_index, ++h)) { /* (a hash shared: the next key) */
        f = &y->unw_files[*at];
        if (strlen(f->path) == path.length && !memcmp(f->path, path.data, path.length)) return f;
    }
    if (!jitanon__grow(&j->a, (void **)&y->unw_files, &y->unw_cap, y->nunw + 1, sizeof *y->unw_files) ||
        !(slot = jitanon__hmap_at(&y->unw_index, &j->a, h, y->nunw)))
        return NULL;
    f = &y->unw_files[y->nunw++];
    memset(f, 0, sizeof *f);
    if ((f->path = (char *)jitanon__malloc(&j->a, path.length + 1)) != NULL) {
        memcpy(f->path, path.data, path.length);
        f->path[path.length] = 0;
        jitanon__unw_load(j, f);
    }
    return f;
}

JITANON__PRIVATE void jitanon__unw_files_free(jitanon__inj *j)
{
    jitanon__inj_sym *y = &j->sym;
    size_t i;
    for (i = 0; i < y->nunw; i++) {
        jitanon__unw_file *f = &y->unw_files[i];
        if (f->path) jitanon__free(&j->a, f->path, strlen(f->path) + 1);
        jitanon__free(&j->a, f->eh, f->eh_size);
        jitanon__free(&j->a, f->hdr, f->hdr_size);
    }
    jitanon__free(&j->a, y->unw_files, y->unw_cap * sizeof *y->unw_files);
    jitanon__hmap_free(&y->unw_index, &j->a);
}

/* The FDE for pc (an address of the file) through .eh_frame_hdr's table, else a scan. */
JITANON__PRIVATE int jitanon__unw_file_fde(const jitanon__unw_file *f, uint64_t pc, jitanon__cfi_fde *fde)
{
    jitanon_error ignored;
    size_t lo = 0, hi = f->nfdes, next;
    int is_fde;
    if (!f->nfdes) return jitanon__cfi_find(f->eh, f->eh_size, f->eh_addr, f->big, pc, fde, &ignored) == JITANON_OK;
    while (lo < hi) { /* the last entry whose initial location is not above pc */
        size_t mid = lo + (hi - lo) / 2;
        uint64_t at = f->hdr_addr + (uint64_t)(int64_t)(int32_t)jitanon__rd32(f->hdr + f->table_at + 8 * mid, f->big);
        if (at <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return 0;
    {
        uint64_t addr = f->hdr_addr + (uint64_t)(int64_t)(int32_t)jitanon__rd32(f->hdr + f->table_at + 8 * (lo - 1) + 4, f->big);
        if (addr < f->eh_addr || addr - f->eh_addr >= f->eh_size) return 0;
        return jitanon__cfi_fde_read(f->eh, f->eh_size, f->eh_addr, (size_t)(addr - f->eh_addr), f->big, fde, &next,
                                     &is_fde, &ignored) == JITANON_OK &&
               is_fde && pc >= fde->pc && pc < fde->end;
    }
}

/* 8 bytes of the stack at addr, as perf reads them: from the copy when the word lies in
   it (and is not its last: perf's bound), else 0 when the process maps the address (perf
   then reads the mapping's file, which a stack or heap has not), else nothing. */
typedef struct jitanon__unw_mem {
    const jitanon__inj *j;
    const jitanon_inject_sample *s;
    const uint8_t *stack;
    size_t size;
    uint64_t sp;
    int big;
} jitanon__unw_mem;

JITANON__PRIVATE int jitanon__unw_read(const void *ctx, uint64_t addr, uint64_t *out)
{
    const jitanon__unw_mem *m = (const jitanon__unw_mem *)ctx;
    jitanon_range where;
    if (addr >= m->sp && addr - m->sp < m->size && m->size - (addr - m->sp) > 8) {
        *out = jitanon__rd64(m->stack + (addr - m->sp), m->big);
        return 1;
    }
    *out = 0;
    return m->j->maps.trim && jitanon__trim_resolve_fast(m->j->maps.trim, m->s->pid, addr, &where) != JITANON_TRIM_NONE;
}

/* A perf_regs.h register (bit of sample_regs_user) as a DWARF column: x86-64's AX BX CX DX
   SI DI BP SP IP ... R8-R15 are DWARF 0 3 2 1 4 5 6 7 16(return address) ... 8-15; arm64's
   x0-x30, sp, pc are 0-32 in both.  -1: not one the CFI uses. */
JITANON__PRIVATE int jitanon__unw_column(uint32_t machine, unsigned bit)
{
    static const signed char x86[24] = {0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
                                        8, 9, 10, 11, 12, 13, 14, 15};
    if (machine == 62) return bit < 24 ? x86[bit] : -1;
    return bit <= 32 ? (int)bit : -1;
}

/* Sets the iterator up for unwinding sample s: its user registers (64-bit ABI) in DWARF
   columns and its copied stack (the part the kernel filled: dyn_size).  0: s has none. */
JITANON__PRIVATE int jitanon__unw_begin(jitanon__inj *j, const jitanon_inject_sample *s, jitanon_inject_frame_iter *it)
{
    const jitanon__inj_rec *r = (const jitanon__inj_rec *)s->rec_;
    const jitanon_perf_attr *a;
    jitanon__inj_swords v;
    const uint8_t *end, *after;
    uint64_t mask, dyn;
    uint32_t machine;
    unsigned bit, pc;
    size_t k = 0;
    int big = j->in->big_endian;
    if (!r || r->attr >= j->in->attr_count) return 0;
    machine = jitanon__inj_machine(j);
    if (machine != 62 && machine != 183) return 0;
    a = &j->in->attrs[r->attr];
    /* perf shows a callchain only for an event that records one (perf record
       --call-graph dwarf asks for the kernel's part: PERF_SAMPLE_CALLCHAIN with
       exclude_callchain_user); registers and stack alone are unwound by no one */
    if (!(a->sample_type & JITANON_PERF_SAMPLE_CALLCHAIN)) return 0;
    jitanon__inj_sample_views(j, r, &v);
    if (!v.regs || !v.stack || v.step != 8 || a->raw.size < 88) return 0;
    mask = jitanon__rd64(a->raw.data + 80, big); /* sample_regs_user */
    memset(it->regs_, 0, sizeof it->regs_);
    for (bit = 0; bit < 64 && k < v.nregs; bit++) {
        int col;
        if (!(mask >> bit & 1)) continue;
        if ((col = jitanon__unw_column(machine, bit)) >= 0) {
            it->regs_[col] = jitanon__rd64(v.regs + 8 * k, big);
            it->known_ |= (uint64_t)1 << col;
        }
        k++;
    }
    /* dyn_size follows the copy: how much of it the kernel could fill */
    end = j->round.bytes.data + r->off + r->size;
    after = v.stack + v.nstack;
    dyn = (size_t)(end - after) >= 8 ? jitanon__rd64(after, big) : v.nstack;
    if (dyn == 0) return 0; /* the kernel copied no stack (it faulted): perf unwinds nothing, not even the ip */
    it->stack_ = v.stack;
    it->stack_size_ = (size_t)(dyn < v.nstack ? dyn : v.nstack);
    pc = machine == 62 ? 16u : 32u;
    if (!(it->known_ >> pc & 1) || !(it->known_ >> (machine == 62 ? 7 : 31) & 1)) return 0;
    it->pc_ = it->regs_[pc];
    it->stack_sp_ = it->regs_[machine == 62 ? 7 : 31];
    it->machine_ = machine;
    return 1;
}

/* The kernel's [vdso] has no file: perf record copies it into perf's build-id cache, at
   <cache>/[vdso]/<build-id>/vdso, and perf's unwinder reads its CFI there (the build-id is
   the recording's).  *path becomes that path (in buf); 0 when it cannot be named. */
JITANON__PRIVATE int jitanon__unw_vdso(jitanon__inj *j, size_t ident, jitanon_str *path, char *buf, size_t cap)
{
    jitanon_bytes bid;
    jitanon_error e;
    char dir[4096], hex[41];
    jitanon__inj_sym_bid_of(j, ident, *path, &bid);
    if (bid.size != 20 || jitanon_buildid_cache_dir(dir, sizeof dir, &e) != JITANON_OK) return 0;
    jitanon__bc_hex(bid.data, hex);
    jitanon__fmt(buf, cap, "%s/[vdso]/%s/vdso", dir, hex);
    path->data = buf;
    path->length = strlen(buf);
    return 1;
}

/* The rule row for the frame at it->pc_ (a return address less one but for the first):
   from its JIT function's UNWINDING_INFO, or its file's .eh_frame.  0: it has none. */
JITANON__PRIVATE int jitanon__unw_row(jitanon__inj *j, const jitanon_inject_sample *s, const jitanon_inject_frame_iter *it,
                                      jitanon__cfi_row *row, uint64_t *ra)
{
    jitanon__cfi_fde fde;
    jitanon_error ignored;
    jitanon_range where;
    jitanon_trim_kind k;
    uint64_t pc = it->pc_, eh_addr;
    char vdso[4200];
    if (!j->maps.trim) return 0;
    k = jitanon__trim_resolve_fast(j->maps.trim, s->pid, pc, &where);
    if (k == JITANON_TRIM_JIT && where.id < j->jit.nfuncs) {
        const jitanon__inj_func *f = &j->jit.funcs[where.id];
        const jitanon__inj_eh *e = j->jit.ehs ? &j->jit.ehs[where.id] : NULL;
        if (!e || !e->eh || f->dump >= j->jit.ndumps || !j->jit.dumps[f->dump].dump ||
            jitanon__cfi_find(e->eh, e->size, e->addr, j->jit.dumps[f->dump].dump->header.big_endian, pc, &fde,
                              &ignored) != JITANON_OK)
            return 0;
        eh_addr = e->addr;
    } else if (k == JITANON_TRIM_FILE && where.id < j->maps.nidents) {
        const jitanon__inj_ident *id = &j->maps.idents[where.id];
        jitanon_str path;
        const jitanon__unw_file *f;
        uint64_t off = pc + id->delta, seg_end = 0; /* delta = pgoff - start */
        size_t i;
        path.data = (const char *)j->maps.names.data + id->name_off;
        path.length = id->name_len;
        if (path.length == 6 && !memcmp(path.data, "[vdso]", 6) && !jitanon__unw_vdso(j, where.id, &path, vdso, sizeof vdso))
            return 0;
        if (!(f = jitanon__unw_file_of(j, path)) || !f->ok) return 0;
        (void)seg_end;
        for (i = 0; i < f->nloads && !(off >= f->load_off[i] && off - f->load_off[i] < f->load_size[i]); i++) {}
        if (i == f->nloads) return 0;
        pc = off - f->load_off[i] + f->load_addr[i]; /* the address in the file's own terms */
        if (!jitanon__unw_file_fde(f, pc, &fde)) return 0;
        eh_addr = f->eh_addr;
    } else return 0;
    if (jitanon__cfi_row_at(&fde, eh_addr, pc, row, &ignored) != JITANON_OK) return 0;
    *ra = fde.cie.ra;
    return 1;
}

/* perf's most frames a sample shows (kernel.perf_event_max_stack's default) */
#define JITANON__UNW_MAX_FRAMES 127u

/* The next unwound frame: the user ip first, then one step a call. */
JITANON__PRIVATE int jitanon__unw_next(jitanon_inject_frame_iter *it, jitanon_frame *out)
{
    const jitanon_inject_sample *s = it->sample_;
    jitanon__inj *j = (jitanon__inj *)(uintptr_t)s->ctx_;
    jitanon__cfi_row row;
    jitanon__unw_mem m;
    uint64_t ra;
    if (it->state_ == 3) {
        it->state_ = 4;
        it->next_ = 1;
        (void)jitanon_inject_frame_at(s, it->pc_, 0, it->want_, out);
        return 1;
    }
    it->state_ = 2;
    if (it->next_ >= JITANON__UNW_MAX_FRAMES || !jitanon__unw_row(j, s, it, &row, &ra)) return 0;
    m.j = j, m.s = s, m.stack = it->stack_, m.size = it->stack_size_, m.big = j->in->big_endian;
    m.sp = it->stack_sp_;
    {
        jitanon__cfi_regs r;
        memcpy(r.v, it->regs_, sizeof r.v);
        r.known = it->known_;
        if (jitanon__cfi_step(&row, ra, it->machine_ == 62 ? 7u : 31u, &r, jitanon__unw_read, &m) != 1) return 0;
        memcpy(it->regs_, r.v, sizeof r.v);
        it->known_ = r.known;
    }
    ra = it->regs_[ra];
    it->next_++;
    if (!ra) { /* read as 0 beyond the copy: perf shows the frame 0 - 1 */
        memset(out, 0, sizeof *out);
        out->ip = UINT64_MAX;
        return 1;
    }
    if (it->machine_ == 183) it->regs_[32] = ra, it->known_ |= (uint64_t)1 << 32;
    it->pc_ = ra - 1; /* the call, as perf looks a caller up */
    it->state_ = 4;
    (void)jitanon_inject_frame_at(s, it->pc_, 0, it->want_, out);
    return 1;
}

/* Anonymous memory perf names from the process's perf map (map.c's list, less the
   [anon: and /memfd: names it leaves alone). */
JITANON__PRIVATE int jitanon__inj_perfmap_named(jitanon_str n)
{
    return (n.length >= 6 && !memcmp(n.data, "//anon", 6)) || (n.length >= 9 && !memcmp(n.data, "/dev/zero", 9)) ||
           (n.length >= 14 && !memcmp(n.data, "/anon_hugepage", 14));
}

/* -- on_sample's native and kernel symbols (JITANON_FRAME_WANT_SYMBOL; [symbols]) -- */

/* A file's symbols, read once: `key` is the path read (in a container's root when its
   process is in one), a NUL, and the build-id the recording gives it. */
typedef struct jitanon__inj_symfile {
    char *key;
    size_t key_size;
    jitanon__sym_table t;
} jitanon__inj_symfile;

typedef struct jitanon__inj_symread {
    jitanon__inj *j;
    const char *path;
} jitanon__inj_symread;

JITANON__PRIVATE size_t jitanon__inj_symread_fn(void *user, uint64_t off, void *dst, size_t size)
{
    const jitanon__inj_symread *r = (const jitanon__inj_symread *)user;
    return r->j->io.read_file(r->j->io.user, r->path, off, dst, size);
}

/* A candidate file at `path`: 1 when it is ELF and, when the recording (or the mapped
   file) gives a build-id, has that one (perf refuses another, or none). */
JITANON__PRIVATE int jitanon__inj_sym_try(jitanon__inj *j, const char *path, jitanon__inj_symread *rd,
                                         jitanon__sym_file *f, const jitanon_bytes *bid)
{
    jitanon_error ignored;
    rd->j = j, rd->path = path;
    if (jitanon__sym_open(&j->a, jitanon__inj_symread_fn, rd, f, &ignored) != JITANON_OK) {
        jitanon__sym_file_free(&j->a, f);
        return 0;
    }
    if (bid->size && (f->build_id_size != bid->size || memcmp(f->build_id, bid->data, bid->size))) {
        jitanon__sym_file_free(&j->a, f);
        return 0;
    }
    return 1;
}

/* A copy of a candidate's path (buf is the next one's): its table is read from it later. */
JITANON__PRIVATE const char *jitanon__inj_sym_path(jitanon__inj *j, const char *buf)
{
    size_t len = strlen(buf);
    char *p = (char *)jitanon__malloc(&j->a, len + 1);
    if (p) memcpy(p, buf, len + 1);
    return p;
}

/* Where perf 6.1 looks for the symbols of the file at `path` (`root`: the first
   root_len bytes, a container's /proc/PID/root, else empty), in its order: the
   .gnu_debuglink target (next to the file, in .debug/ there, under /usr/lib/debug), the
   build-id cache (opts.buildid_cache), /usr/lib/debug by path, /usr/lib/debug/.build-id,
   the file itself.  The first with a .symtab gives the symbols, the first with a .dynsym
   the PLT and the placing (a debug file's PT_LOADs are the file's own). */
JITANON__PRIVATE void jitanon__inj_sym_load(jitanon__inj *j, const char *path, size_t root_len, jitanon_bytes bid,
                                           jitanon__sym_table *t)
{
    jitanon__sym_file own, cand, syms, rt;
    jitanon__inj_symread own_rd, cand_rd, syms_rd, rt_rd;
    char buf[4096 + 160], dirs[4096], hex[41], hex2[3];
    const char *rel = path + root_len; /* the path as the recording names it */
    size_t dir = strlen(path), k;
    int have_own, have_syms = 0, have_rt = 0;
    jitanon_error ignored;
    jitanon_bytes any;
    memset(&syms, 0, sizeof syms), memset(&rt, 0, sizeof rt);
    any.data = NULL, any.size = 0;
    while (dir > root_len && path[dir - 1] != '/') dir--;
    /* the file itself: its debuglink, and its build-id when the recording has none; for
       a [vdso] the recording names no build-id of, this process's own vdso (perf 6.1
       reads its own then, unchecked; one it has a build-id for is looked for in the
       build-id cache only) */
    have_own = (rel[0] == '/' || (!bid.size && !strcmp(rel, "[vdso]"))) &&
               jitanon__inj_sym_try(j, path, &own_rd, &own, &any);
    if (!bid.size && have_own && own.build_id_size) bid.data = own.build_id, bid.size = own.build_id_size;
    hex[0] = 0;
    if (bid.size == 20) jitanon__bc_hex(bid.data, hex);
    /* (the formatter has no %.*s: the pieces as strings of their own) */
    if (dir >= sizeof dirs) dir = root_len;
    memcpy(dirs, path, dir);
    dirs[dir] = 0;
    hex2[0] = hex[0], hex2[1] = hex[1], hex2[2] = 0;
    for (k = 0; k < 10 && !(have_syms && have_rt); k++) {
        const char *cache = j->opts->buildid_cache ? j->opts->buildid_cache->dir : NULL;
        int n = 0, self = 0, link = have_own && own.debuglink[0];
        switch (k) {
        case 0: if (link) n = (int)jitanon__fmt(buf, sizeof buf, "%s%s", dirs, own.debuglink); break;
        case 1: if (link) n = (int)jitanon__fmt(buf, sizeof buf, "%s.debug/%s", dirs, own.debuglink); break;
        case 2: if (link) n = (int)jitanon__fmt(buf, sizeof buf, "/usr/lib/debug%s%s", dirs + root_len, own.debuglink); break;
        case 3: if (hex[0] && cache) n = (int)jitanon__fmt(buf, sizeof buf, "%s/.build-id/%s/%s", cache, hex2, hex + 2); break;
        case 4: /* (perf record's copy of the vdso is called vdso there) */
            if (hex[0] && cache)
                n = (int)jitanon__fmt(buf, sizeof buf, "%s/.build-id/%s/%s/%s", cache, hex2, hex + 2,
                                      strcmp(rel, "[vdso]") ? "elf" : "vdso");
            break;
        case 5: if (hex[0] && cache) n = (int)jitanon__fmt(buf, sizeof buf, "%s/.build-id/%s/%s/debug", cache, hex2, hex + 2); break;
        case 6: if (rel[0] == '/') n = (int)jitanon__fmt(buf, sizeof buf, "/usr/lib/debug%s.debug", rel); break;
        case 7: if (rel[0] == '/') n = (int)jitanon__fmt(buf, sizeof buf, "/usr/lib/debug%s", rel); break;
        case 8: if (hex[0]) n = (int)jitanon__fmt(buf, sizeof buf, "/usr/lib/debug/.build-id/%s/%s.debug", hex2, hex + 2); break;
        default: self = 1; break;
        }
        if (self) {
            /* the file itself, checked as every other candidate */
            if (!have_own || (bid.size && (own.build_id_size != bid.size || memcmp(own.build_id, bid.data, bid.size))))
                continue;
            cand = own, cand_rd = own_rd, have_own = 0;
        } else if (n <= 0 || (size_t)n >= sizeof buf || !jitanon__inj_sym_try(j, buf, &cand_rd, &cand, &bid)) {
            continue;
        }
        if (!have_syms && cand.symtab) {
            syms = cand, syms_rd = cand_rd, have_syms = 1;
            if (!have_rt && cand.dynsym) rt = cand, rt_rd = cand_rd, have_rt = 2; /* the same file */
            syms_rd.path = self ? path : jitanon__inj_sym_path(j, buf);
            continue;
        }
        if (!have_rt && cand.dynsym) {
            rt = cand, rt_rd = cand_rd, have_rt = 1;
            rt_rd.path = self ? path : jitanon__inj_sym_path(j, buf);
            continue;
        }
        jitanon__sym_file_free(&j->a, &cand);
    }
    if (!have_syms && have_rt) syms = rt, syms_rd = rt_rd, have_syms = 1, have_rt = 2; /* a .dynsym alone */
    if (have_syms && syms_rd.path && (have_rt != 1 || rt_rd.path)) {
        syms.user = &syms_rd;
        if (have_rt == 1) rt.user = &rt_rd;
        if (jitanon__sym_build(&j->a, t, &syms, have_rt == 1 ? &rt : &syms, &ignored) != JITANON_OK && !t->n)
            jitanon__sym_table_free(&j->a, t);
    }
    if (have_syms && syms_rd.path && syms_rd.path != path) jitanon__free(&j->a, (void *)(uintptr_t)syms_rd.path, strlen(syms_rd.path) + 1);
    if (have_rt == 1 && rt_rd.path && rt_rd.path != path) jitanon__free(&j->a, (void *)(uintptr_t)rt_rd.path, strlen(rt_rd.path) + 1);
    if (have_syms) jitanon__sym_file_free(&j->a, &syms);
    if (have_rt == 1) jitanon__sym_file_free(&j->a, &rt);
    if (have_own) jitanon__sym_file_free(&j->a, &own);
}

/* The whole of a file that has no size (/proc/kallsyms), read from its start into one
   buffer, a larger one when it fills (each read at an offset of a /proc file makes the
   kernel write it out again up to there: a 5 MB kallsyms read in pieces cost a third of
   a node pass's names). */
JITANON__PRIVATE uint8_t *jitanon__inj_sym_slurp(jitanon__inj *j, const char *path, size_t *size, size_t *alloc)
{
    size_t cap = (size_t)16 << 20, got;
    for (; cap <= JITANON__SYM_MAX_BYTES; cap *= 2) {
        uint8_t *p = (uint8_t *)jitanon__malloc(&j->a, cap);
        if (!p) break;
        got = j->io.read_file(j->io.user, path, 0, p, cap);
        if (got && got < cap) {
            *size = got, *alloc = cap;
            return p;
        }
        jitanon__free(&j->a, p, cap);
        if (got != cap) break; /* (cannot be read, or empty) */
    }
    *size = *alloc = 0;
    return NULL;
}

/* The kernel's symbols, read once: /proc/kallsyms when the running kernel is the
   recording's (the build-id in /sys/kernel/notes), else the copy perf record left in its
   build-id cache, as perf 6.1 finds them. */
JITANON__PRIVATE jitanon__sym_table *jitanon__inj_kallsyms(jitanon__inj *j)
{
    jitanon__inj_sym *y = &j->sym;
    jitanon_bytes bid;
    jitanon_str kname;
    char path[4096 + 80];
    const char *use = "/proc/kallsyms";
    uint8_t *text;
    size_t size, alloc;
    if (y->kallsyms_read) return y->kallsyms.n ? &y->kallsyms : NULL;
    y->kallsyms_read = 1;
    kname.data = "[kernel.kallsyms]", kname.length = 17;
    jitanon__inj_sym_bid(j, kname, &bid);
    if (bid.size) {
        uint8_t notes[4096];
        jitanon__sym_file f;
        size_t got = j->io.read_file(j->io.user, "/sys/kernel/notes", 0, notes, sizeof notes);
        memset(&f, 0, sizeof f);
        f.big = j->in->big_endian;
        if (got != SIZE_MAX) jitanon__sym_notes(&f, notes, got);
        if (f.build_id_size != bid.size || memcmp(f.build_id, bid.data, bid.size)) {
            char hex[41];
            if (!j->opts->buildid_cache || bid.size != 20) return NULL;
            jitanon__bc_hex(bid.data, hex);
            if (jitanon__fmt(path, sizeof path, "%s/[kernel.kallsyms]/%s/kallsyms", j->opts->buildid_cache->dir, hex) >=
                sizeof path)
                return NULL;
            use = path;
        }
    }
    if (!(text = jitanon__inj_sym_slurp(j, use, &size, &alloc))) return NULL;
    {
        jitanon_error ignored;
        (void)jitanon__sym_kallsyms(&j->a, &y->kallsyms, text, size, &ignored);
        y->kallsyms.strings_size = alloc; /* (what it frees) */
    }
    return y->kallsyms.n ? &y->kallsyms : NULL;
}

/* 1 when process `pid` runs in another mount namespace (a container) now: its files are
   read through /proc/PID/root, as its jitdump is (io.find_process; asked once a pid). */
JITANON__PRIVATE int jitanon__inj_sym_inside(jitanon__inj *j, uint32_t pid)
{
    size_t *slot;
    if (!j->io.find_process) return 0;
    if ((slot = jitanon__hmap_find(&j->sym.sym_ns, pid)) != NULL) return *slot == 2;
    {
        jitanon_inject_process q;
        int inside;
        memset(&q, 0, sizeof q);
        q.nspid = pid;
        inside = j->io.find_process(j->io.user, pid, &q) && q.other_mnt;
        if ((slot = jitanon__hmap_at(&j->sym.sym_ns, &j->a, pid, 1)) != NULL) *slot = inside ? 2 : 1;
        return inside;
    }
}

/* The symbols of mapping `ident` (a file named `path` in process pid), loaded once per
   path and build-id (NULL: none). */
JITANON__PRIVATE jitanon__sym_table *jitanon__inj_sym_file(jitanon__inj *j, uint32_t pid, size_t ident, jitanon_str path,
                                                           jitanon_bytes bid)
{
    jitanon__inj_sym *y = &j->sym;
    int inside = path.length && path.data[0] == '/' && jitanon__inj_sym_inside(j, pid);
    uint64_t key = inside ? ((uint64_t)pid << 32 | (uint64_t)ident) | (uint64_t)1 << 63 : (uint64_t)ident;
    const size_t *at = jitanon__hmap_find(&y->sym_ident, key);
    char root[32];
    size_t root_len = 0, size, i;
    uint64_t h;
    jitanon__inj_symfile *f;
    size_t *slot;
    if (at) return *at ? &y->sym_files[*at - 1].t : NULL;
    if (inside) root_len = jitanon__fmt(root, sizeof root, "/proc/%u/root", (unsigned)pid);
    /* the key: root, path, NUL, build-id */
    size = root_len + path.length + 1 + bid.size;
    h = jitanon__fnv1a(root, root_len, 0xcbf29ce484222325ull);
    h = jitanon__fnv1a(path.data, path.length, h);
    h = jitanon__fnv1a(bid.data, bid.size, h);
    for (at = jitanon__hmap_find(&y->sym_index, h); at; at = jitanon__hmap_find(&y->sym_index, ++h)) {
        f = &y->sym_files[*at];
        if (f->key_size == size && !memcmp(f->key, root, root_len) && !memcmp(f->key + root_len, path.data, path.length) &&
            !memcmp(f->key + root_len + path.length + 1, bid.data, bid.size))
            break;
    }
    if (!at) {
        if (!jitanon__grow(&j->a, (void **)&y->sym_files, &y->sym_cap, y->nsym + 1, sizeof *y->sym_files) ||
            !(slot = jitanon__hmap_at(&y->sym_index, &j->a, h, y->nsym)))
            return NULL;
        f = &y->sym_files[y->nsym++];
        memset(f, 0, sizeof *f);
        if ((f->key = (char *)jitanon__malloc(&j->a, size)) != NULL) {
            f->key_size = size;
            memcpy(f->key, root, root_len);
            memcpy(f->key + root_len, path.data, path.length);
            f->key[root_len + path.length] = 0;
            if (bid.size) memcpy(f->key + root_len + path.length + 1, bid.data, bid.size);
            f->t.demangle = j->opts->demangle;
            f->t.demangle_user = jitanon__inj_sample_user(j);
            jitanon__inj_sym_load(j, f->key, root_len, bid, &f->t);
        }
        i = y->nsym - 1;
    } else i = *at;
    if ((slot = jitanon__hmap_at(&y->sym_ident, &j->a, key, 0)) != NULL) *slot = y->sym_files[i].t.n ? i + 1 : 0;
    return y->sym_files[i].t.n ? &y->sym_files[i].t : NULL;
}

JITANON__PRIVATE void jitanon__inj_sym_files_free(jitanon__inj *j)
{
    jitanon__inj_sym *y = &j->sym;
    size_t i;
    for (i = 0; i < y->nsym; i++) {
        jitanon__free(&j->a, y->sym_files[i].key, y->sym_files[i].key_size);
        jitanon__sym_table_free(&j->a, &y->sym_files[i].t);
    }
    jitanon__free(&j->a, y->sym_files, y->sym_cap * sizeof *y->sym_files);
    jitanon__hmap_free(&y->sym_index, &j->a);
    jitanon__hmap_free(&y->sym_ident, &j->a);
    jitanon__hmap_free(&y->sym_ns, &j->a);
    jitanon__sym_table_free(&j->a, &y->kallsyms);
}

/* A file or kernel frame's symbol (JITANON_FRAME_WANT_SYMBOL), as perf names it. */
JITANON__PRIVATE void jitanon__inj_sym_native(jitanon__inj *j, uint32_t pid, size_t ident, jitanon_bytes bid,
                                             jitanon_frame *out)
{
    jitanon__sym_table *t;
    jitanon__sym_ent *e;
    if (out->kind == JITANON_FRAME_KERNEL) {
        if (!(t = jitanon__inj_kallsyms(j)) || !(e = jitanon__sym_find(&j->a, t, out->ip))) return;
    } else {
        jitanon_str p = out->path;
        /* files, and the vdso: perf record's copy in the build-id cache, or this process's */
        if (!p.length || (p.data[0] != '/' && !(p.length == 6 && !memcmp(p.data, "[vdso]", 6))) ||
            jitanon__inj_perfmap_named(p) || (p.length >= 7 && !memcmp(p.data, "/memfd:", 7)))
            return;
        if (!(t = jitanon__inj_sym_file(j, pid, ident, p, bid)) ||
            !(e = jitanon__sym_find(&j->a, t, jitanon__sym_addr_of(t, out->offset))))
            return;
    }
    out->name = jitanon__sym_name(&j->a, t, e);
}

JITANON_API jitanon_frame_kind jitanon_inject_frame_at(const jitanon_inject_sample *s, uint64_t ip, int kernel,
                                                       unsigned want, jitanon_frame *out)
{
    jitanon__inj *j;
    jitanon_range where;
    jitanon_trim_kind k;
    JITANON_ASSERT(s && out && s->ctx_);
    /* the injector is the caller's own, not const: frames load what they need on demand */
    j = (jitanon__inj *)(uintptr_t)s->ctx_;
    memset(out, 0, sizeof *out);
    out->ip = ip;
    out->kernel = kernel != 0;
    if (ip == s->ip && s->where_pid_ == (kernel ? UINT32_MAX : s->pid)) { /* the sample's own lookup */
        where = s->where_;
        k = (jitanon_trim_kind)where.kind;
    } else if (ip == s->ip && s->where_pid_ == UINT32_MAX && !kernel) {
        k = JITANON_TRIM_NONE; /* the process's maps did not hold it */
    } else {
        k = j->maps.trim ? jitanon__trim_resolve_fast(j->maps.trim, kernel ? UINT32_MAX : s->pid, ip, &where)
                         : JITANON_TRIM_NONE;
    }
    if (k == JITANON_TRIM_JIT && where.id < j->jit.nfuncs) {
        const jitanon__inj_func *f = &j->jit.funcs[where.id];
        const jitanon__inj_dump *jd = f->dump < j->jit.ndumps ? &j->jit.dumps[f->dump] : NULL;
        out->kind = JITANON_FRAME_JIT;
        out->name = f->name;
        out->start = f->code_addr;
        out->offset = ip - f->code_addr;
        out->code_index = f->code_index;
        if (jd) {
            out->path.data = (const char *)j->jit.paths.data + jd->path;
            out->path.length = strlen(out->path.data);
        }
        if (want & JITANON_FRAME_WANT_LINE) jitanon__inj_sym_line(j, where.id, ip, out);
    } else if (k != JITANON_TRIM_NONE && where.id < j->maps.nidents) {
        const jitanon__inj_ident *id = &j->maps.idents[where.id];
        out->kind = kernel ? JITANON_FRAME_KERNEL : JITANON_FRAME_FILE;
        out->path.data = (const char *)j->maps.names.data + id->name_off;
        out->path.length = id->name_len;
        out->start = where.start;
        out->pgoff = where.start + id->delta; /* delta = pgoff - start */
        out->offset = ip - where.start + out->pgoff;
        if (!kernel && (want & JITANON_FRAME_WANT_PERF_MAP) && jitanon__inj_perfmap_named(out->path)) {
            jitanon_str mp;
            const jitanon_perfmap *m = jitanon__inj_sym_map(j, s->pid, &mp);
            const jitanon_perfmap_entry *e = m ? jitanon_perfmap_lookup(m, ip) : NULL;
            if (e) {
                out->kind = JITANON_FRAME_PERF_MAP;
                out->name = e->name;
                out->path = mp;
                out->start = e->start;
                out->pgoff = 0;
                out->offset = ip - e->start;
            }
        }
        if (out->kind != JITANON_FRAME_PERF_MAP && (want & (JITANON_FRAME_WANT_BUILD_ID | JITANON_FRAME_WANT_SYMBOL))) {
            const size_t *own = j->sym.mmap_bid.count ? jitanon__hmap_find(&j->sym.mmap_bid, where.id) : NULL;
            jitanon_bytes bid;
            if (own) {
                bid.data = j->sym.mmap_bids.data + *own + 1;
                bid.size = j->sym.mmap_bids.data[*own];
            } else jitanon__inj_sym_bid_of(j, where.id, out->path, &bid);
            if (want & JITANON_FRAME_WANT_BUILD_ID) out->build_id = bid;
            if (want & JITANON_FRAME_WANT_SYMBOL) jitanon__inj_sym_native(j, kernel ? UINT32_MAX : s->pid, where.id, bid, out);
        }
    }
    return out->kind;
}

JITANON_API void jitanon_inject_frame_iter_begin(jitanon_inject_frame_iter *it, const jitanon_inject_sample *s,
                                                 unsigned want)
{
    uint64_t i;
    JITANON_ASSERT(it && s);
    /* (not a memset: the unwinder's registers are set only for a sample it unwinds) */
    it->sample_ = s;
    it->next_ = 0;
    it->want_ = want;
    it->kernel_ = it->state_ = 0;
    it->known_ = it->pc_ = it->stack_sp_ = 0;
    it->stack_ = NULL;
    it->stack_size_ = 0;
    it->machine_ = 0;
    if ((want & JITANON_FRAME_WANT_UNWIND) && s->ctx_)
        (void)jitanon__unw_begin((jitanon__inj *)(uintptr_t)s->ctx_, s, it); /* sets machine_ */
    /* perf drops a chain with a context it does not know (a guest's, a JIT's -1) whole */
    for (i = 0; i < s->callchain_nr; i++) {
        uint64_t ip = jitanon_perf_u64_at(s->callchain, i, s->big_endian);
        if (ip >= JITANON_PERF_CONTEXT_MAX && ip != JITANON_PERF_CONTEXT_KERNEL && ip != JITANON_PERF_CONTEXT_HV &&
            ip != JITANON_PERF_CONTEXT_USER)
            it->state_ = 2;
    }
}

JITANON_API int jitanon_inject_frame_iter_next(jitanon_inject_frame_iter *it, jitanon_frame *out)
{
    const jitanon_inject_sample *s = it->sample_;
    if (it->state_ == 2) return 0;
    if (it->state_ >= 3) return jitanon__unw_next(it, out);
    if (!s->callchain_nr && it->machine_) { /* a user sample: its unwound frames */
        it->state_ = 3;
        return jitanon__unw_next(it, out);
    }
    if (!s->callchain_nr) { /* the sample's own ip, once */
        it->state_ = 2;
        (void)jitanon_inject_frame_at(s, s->ip, s->cpumode != JITANON_PERF_MISC_USER && s->cpumode != 5u /* guest user */,
                                      it->want_, out);
        return 1;
    }
    while (it->next_ < s->callchain_nr) {
        uint64_t ip = jitanon_perf_u64_at(s->callchain, it->next_++, s->big_endian);
        if (ip >= JITANON_PERF_CONTEXT_MAX) {
            it->kernel_ = ip != JITANON_PERF_CONTEXT_USER;
            if (!it->kernel_ && it->machine_) break; /* the user part: unwound instead, as perf does */
            continue;
        }
        (void)jitanon_inject_frame_at(s, ip, it->kernel_, it->want_, out);
        return 1;
    }
    if (it->machine_) { /* the kernel's frames were the chain's: the user's follow */
        it->state_ = 3;
        return jitanon__unw_next(it, out);
    }
    it->state_ = 2;
    return 0;
}

/* The claims whose load time has come by `time` leave `early` (none can name a sample
   from then on), and its bounds are made exact again. */
JITANON__PRIVATE void jitanon__inj_early_prune(jitanon__inj_jit *jt, uint64_t time)
{
    size_t k, keep = 0;
    for (k = 0; k < jt->nearly; k++) {
        const jitanon__inj_event *e = &jt->early[k];
        if (e->load_time <= time) continue;
        jitanon__inj_early_widen(jt, e, keep == 0);
        jt->early[keep++] = *e;
    }
    jt->nearly = keep;
}

/* Counts a sample that a late claim named.  Only a function in `early` can have a
   late_until past the sample: those are the few mapped in the last window, so a sample
   outside their span needs no lookup (with loads all through a recording, a lookup per
   sample for this count alone cost as much as the rest of a per-process run). */
JITANON__PRIVATE void jitanon__inj_late_sample(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_jit *jt = &j->jit;
    jitanon_range where;
    if (jt->nearly && r->time >= jt->early_due) jitanon__inj_early_prune(jt, r->time);
    if (!jt->nearly || r->start < jt->early_lo || r->start > jt->early_hi) return;
    if (jitanon__trim_resolve_fast(j->maps.trim, r->pid, r->start, &where) == JITANON_TRIM_JIT &&
        where.id < j->jit.nfuncs && j->jit.hot[where.id].late_until > r->time)
        j->st->late.samples++;
}

/* jitanon__inj_unnamed: how often a sample is looked at up to a dump's end (and after it
   until one is counted), and how many samples after it, in pages not seen so, make a dump
   stopped (a page sampled less often than that before can be missed, and code never
   described there counted) */
#define JITANON__INJ_LEARN_EVERY 8u
#define JITANON__INJ_STOPPED_MIN 8u

/* A sample in its process's anonymous memory where no function is.  Up to the last
   record of the process's latest dump its page is remembered: code a runtime never
   describes (an interpreter, stubs) is sampled there before and after.  After it, in a
   page not remembered, it is counted: the JIT stopped describing its code (a runtime
   killed, or exiting without flushing its dump) and nothing can name it. */
JITANON__PRIVATE void jitanon__inj_unnamed(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_jit *jt = &j->jit;
    jitanon__inj_dump *jd;
    jitanon_range where;
    if (jt->stop_pid != (uint64_t)r->pid + 1) { /* samples come in runs of a process */
        size_t i = jt->ndumps;
        while (i > 0 && jt->dumps[i - 1].pid != r->pid) i--;
        jt->stop_pid = (uint64_t)r->pid + 1;
        jt->stop_dump = i;
    }
    if (!jt->stop_dump) return;
    jd = &jt->dumps[jt->stop_dump - 1];
    /* every 8th sample is looked at up to the end, and after it until the first is counted
       (a lookup per sample cost a per-process run 30 to 45 ns a sample, +80%): a page
       sampled often is still found, and a runtime that goes on writing its dump pays
       little; once one is counted, every one is */
    if (!jd->last_time || ((r->time <= jd->last_time || !jd->after) && ++jd->learn % JITANON__INJ_LEARN_EVERY) ||
        jitanon__trim_resolve_fast(j->maps.trim, r->pid, r->start, &where) != JITANON_TRIM_ANON)
        return;
    if (r->time <= jd->last_time) { /* out of memory: the page is not remembered (a count too many at worst) */
        (void)jitanon__hmap_at(&jd->seen, &j->a, r->start >> 12, 1);
        return;
    }
    if (jitanon__hmap_find(&jd->seen, r->start >> 12)) return;
    if (!jd->after++) jd->after_first = r->time;
    jd->after_last = r->time;
}

/* At the end: each dump that stopped before its process's samples did is counted and
   said once. */
JITANON__PRIVATE void jitanon__inj_report_stopped(jitanon__inj *j)
{
    size_t i;
    for (i = 0; i < j->jit.ndumps; i++) {
        const jitanon__inj_dump *jd = &j->jit.dumps[i];
        char msg[768], t0[32], t1[32], t2[32];
        if (jd->after < JITANON__INJ_STOPPED_MIN) continue;
        j->st->dumps.stopped++;
        j->st->dumps.samples_after_end += jd->after;
        if (!j->io.log) continue;
        jitanon__fmt(msg, sizeof msg,
                     "jitdump %s: the JIT stopped describing its code at %s (its last record; perf script's time), "
                     "but process %u ran code in its JIT memory after that: %U samples from %s to %s stay unnamed "
                     "([JIT] tid or //anon). Usual cause: the runtime was killed, or exited without flushing its "
                     "jitdump",
                     jitanon__inj_path(j, jd->path), jitanon__inj_secs(t0, jd->last_time), (unsigned)jd->pid, jd->after,
                     jitanon__inj_secs(t1, jd->after_first), jitanon__inj_secs(t2, jd->after_last));
        j->io.log(j->io.user, msg);
    }
}

/* A process's main thread exited.  perf keeps the map while its other threads run (their
   samples come after, in the same microseconds); memory should still follow the live
   processes, not the length of a system-wide recording: the last 64 exited processes
   keep their maps, older ones are forgotten. */
JITANON__PRIVATE void jitanon__inj_exited(jitanon__inj *j, uint32_t pid)
{
    jitanon__inj_maps *m = &j->maps;
    const size_t cap = sizeof m->exited / sizeof m->exited[0];
    if (m->nexited == cap) {
        jitanon_trim_forget(m->trim, m->exited[m->exited_head]);
        m->exited_head = (m->exited_head + 1) % cap;
        m->nexited--;
    }
    m->exited[(m->exited_head + m->nexited++) % cap] = pid;
}

/* A new process took `pid`: the ring must not forget its fresh map later. */
JITANON__PRIVATE void jitanon__inj_unexit(jitanon__inj *j, uint32_t pid)
{
    jitanon__inj_maps *m = &j->maps;
    const size_t cap = sizeof m->exited / sizeof m->exited[0];
    size_t i, kept = 0;
    for (i = 0; i < m->nexited; i++) {
        uint32_t p = m->exited[(m->exited_head + i) % cap];
        if (p != pid) m->exited[(m->exited_head + kept++) % cap] = p;
    }
    m->nexited = kept;
}

/* Decide: replays one buffered record in time order. */
JITANON__PRIVATE jitanon_result jitanon__inj_decide(jitanon__inj *j, jitanon__inj_rec *r)
{
    jitanon_trim *trim = j->maps.trim;
    if (jitanon__inj_is_mmap(r->type)) {
        jitanon_str name;
        jitanon_result res;
        if (j->opts->on_event) jitanon__inj_tell_event(j, r);
        name.data = (const char *)j->round.bytes.data + r->off + r->name_off;
        name.length = r->name_len;
        /* a marker is mapped executable (perf flags a data mapping: perf record -d) */
        if (!(r->misc & JITANON__PERF_MISC_MMAP_DATA) && jitanon_jitdump_is_marker(name.data, name.length, NULL)) {
            res = r->marker_read ? JITANON_OK : jitanon__inj_marker(j, r, &name);
            j->jit.marker_cpu = r->cpu;
            if (res == JITANON_OK && r->action == JITANON__INJ_DROP && j->opts->anon_mode == JITANON_ANON_RANGE)
                res = jitanon_trim_set_jitdump(trim, r->pid, j->err);
            return res;
        }
        res = jitanon__inj_decide_mmap(j, r, name.data);
        if (res == JITANON_OK && j->opts->perf_map == JITANON_PERF_MAP_ELF && j->out.w)
            res = jitanon__inj_perfmap_mark(j, r, name.data);
        if (j->jit.nregions && (r->stub || jitanon__inj_file_name(name))) jitanon__inj_region_forget(j, r->pid);
        return res;
    }
    if (r->type == JITANON_PERF_RECORD_SAMPLE) {
        j->st->read.samples++;
        if (j->jit.live) jitanon__inj_live_unnamed(j, r);
        if (r->time < j->jit.late_horizon) jitanon__inj_late_sample(j, r); /* a late claim may name it */
        if (j->jit.ndumps && j->maps.trim) jitanon__inj_unnamed(j, r);
        if (j->opts->on_sample) jitanon__inj_resolve(j, r);
        j->jit.claim_time = r->time;
        if (j->elf.ops->sample) j->elf.ops->sample(j, &j->elf, r);
        if (j->jit.claim_res != JITANON_OK) return j->jit.claim_res;
    } else if (j->opts->on_event) jitanon__inj_tell_event(j, r);
    /* perf copies a process's maps at fork, and an exec keeps what the new image does not
       map over: claims go back first (jitanon__inj_claim); an exit ends them */
    if (j->jit.nclaimed && (r->type == JITANON_PERF_RECORD_FORK || r->type == JITANON_PERF_RECORD_EXIT ||
                            (r->type == JITANON_PERF_RECORD_COMM && (r->misc & JITANON__PERF_MISC_COMM_EXEC)))) {
        jitanon_result res = JITANON_OK;
        if (r->type == JITANON_PERF_RECORD_FORK && r->pid != r->ppid)
            res = jitanon__inj_unclaim_range(j, r->ppid, 0, 0, r->time, j->jit.seq++, 1);
        else if (r->type == JITANON_PERF_RECORD_COMM)
            res = jitanon__inj_unclaim_range(j, r->pid, 0, 0, r->time, j->jit.seq++, 1);
        else if (r->type == JITANON_PERF_RECORD_EXIT && r->pid == r->tid)
            res = jitanon__inj_unclaim_range(j, r->pid, 0, 0, r->time, 0, 0);
        if (res != JITANON_OK) return res;
    }
    if ((r->type == JITANON_PERF_RECORD_COMM || r->type == JITANON_PERF_RECORD_FORK) &&
        (j->opts->sample_fields & JITANON_SAMPLE_COMM))
        jitanon__inj_comm_note(j, r);
    /* perf's address maps: a new process starts from its parent's; exec starts afresh. */
    if (trim && r->type == JITANON_PERF_RECORD_FORK && r->pid != r->ppid) {
        jitanon__inj_unexit(j, r->pid);
        return jitanon_trim_fork(trim, r->ppid, r->pid, j->err);
    }
    /* An exec starts afresh; perf itself keeps the old maps where the new image maps
       nothing (a sample in execve still has the old libc's frames), and resolving only,
       with no output the trimming must keep right, samples follow perf. */
    if (trim && r->type == JITANON_PERF_RECORD_COMM && (r->misc & JITANON__PERF_MISC_COMM_EXEC) &&
        (j->out.w || !j->opts->on_sample))
        jitanon_trim_forget(trim, r->pid);
    if (r->type == JITANON_PERF_RECORD_EXIT && r->pid == r->tid && j->jit.live) jitanon__inj_follow_exit(j, r->pid);
    if (trim && r->type == JITANON_PERF_RECORD_EXIT && r->pid == r->tid) jitanon__inj_exited(j, r->pid);
    return JITANON_OK;
}

/* -- write: the round in file order ------------------------------------------------------------ */

/* Encodes and writes an MMAP2 we make, its trailer after the attr that records mmaps
   (attr bit 8, `mmap`). */
JITANON__PRIVATE jitanon_result jitanon__inj_encode_mmap2(jitanon__inj *j, const jitanon_perf_record *rec)
{
    jitanon__inj_out *o = &j->out;
    const jitanon_perf_attr *attr = NULL;
    size_t size = 0, i;
    jitanon_result res;
    for (i = 0; i < j->in->attr_count && !attr; i++)
        if (j->in->attrs[i].flags & (1u << 8)) attr = &j->in->attrs[i];
    if (!attr && j->in->attr_count) attr = &j->in->attrs[0];
    res = jitanon_perf_encode_mmap2(o->enc, o->enc_cap, &size, rec, attr, j->err);
    if (res == JITANON_ERR_LIMIT) {
        if (!jitanon__grow(&j->a, (void **)&o->enc, &o->enc_cap, size, 1)) return jitanon__inj_nomem(j, "mmap2");
        res = jitanon_perf_encode_mmap2(o->enc, o->enc_cap, &size, rec, attr, j->err);
    }
    if (res != JITANON_OK) return res;
    return jitanon_perf_writer_write(o->w, o->enc, size, j->err);
}

/* A function of a region file goes out between two more MMAP2s (see the region layout's
   comment at JITANON__REGION_GAP): first its file's base, a byte at the file's key
   address with pgoff 0, so that hotspot's parser registers the file's pgoff-0 mapping last
   and the function's mapping inherits the key; then, after it, //anon there (or, for code
   too low for the key, what perf had at B), which takes the base out of that parser's map
   again - it ignores a mapping it already holds whole, so a base still there would not
   count the next time, and a base left there would make it load the file at the key.
   Every slice is so framed, whatever came between in file or time order.  A MOVE maps
   the LOAD's code elsewhere (start - pgoff is not B) and gains nothing. */
JITANON__PRIVATE jitanon_result jitanon__inj_emit_framed(jitanon__inj *j, const jitanon__inj_synth *s,
                                                         jitanon_perf_record *rec)
{
    const jitanon__inj_func *f = &j->jit.funcs[s->func];
    const jitanon__inj_region *g = &j->jit.regions[f->region];
    jitanon_result res;
    if (!s->frame) return jitanon__inj_encode_mmap2(j, rec);
    rec->mmap.start = g->key;
    rec->mmap.len = 1;
    rec->mmap.pgoff = 0;
    if ((res = jitanon__inj_encode_mmap2(j, rec)) != JITANON_OK) return res;
    rec->mmap.start = s->start;
    rec->mmap.len = s->size;
    rec->mmap.pgoff = f->pgoff;
    if ((res = jitanon__inj_encode_mmap2(j, rec)) != JITANON_OK) return res;
    rec->mmap.start = g->key;
    rec->mmap.len = 1;
    if (s->restore != SIZE_MAX) {
        rec->mmap.filename.data = (const char *)j->maps.names.data + j->maps.idents[s->restore].name_off;
        rec->mmap.filename.length = j->maps.idents[s->restore].name_len;
        rec->mmap.pgoff = g->key + j->maps.idents[s->restore].delta; /* delta = pgoff - start */
    } else {
        rec->mmap.filename.data = "//anon";
        rec->mmap.filename.length = 6;
        rec->mmap.pgoff = g->key;
    }
    j->st->write.region_bases++;
    return jitanon__inj_encode_mmap2(j, rec);
}

JITANON__PRIVATE jitanon_result jitanon__inj_emit_synth(jitanon__inj *j, const jitanon__inj_synth *s)
{
    const jitanon__inj_func *f = &j->jit.funcs[s->func];
    jitanon_perf_record rec;
    jitanon_perf_mmap *m = &rec.mmap;
    memset(&rec, 0, sizeof rec);
    rec.misc = JITANON_PERF_MISC_USER;
    rec.big_endian = j->in->big_endian;
    rec.sid.time = s->time;
    rec.sid.cpu = j->jit.marker_cpu;
    m->pid = f->pid;
    m->tid = f->tid;
    m->start = s->start;
    m->len = s->size;
    m->pgoff = f->pgoff;
    m->prot = 5;  /* PROT_READ | PROT_EXEC */
    m->flags = 2; /* MAP_PRIVATE */
    m->filename.data = jitanon__inj_path(j, f->path);
    m->filename.length = strlen(m->filename.data);
    j->st->write.mmaps_synthesized++;
    if (s->take_back) { /* what the engine has there, over a claim (jitanon__inj_unclaim) */
        if (s->restore != SIZE_MAX) {
            m->filename.data = (const char *)j->maps.names.data + j->maps.idents[s->restore].name_off;
            m->filename.length = j->maps.idents[s->restore].name_len;
            m->pgoff = s->start + j->maps.idents[s->restore].delta; /* delta = pgoff - start */
        } else {
            m->filename.data = "//anon";
            m->filename.length = 6;
            m->pgoff = s->start;
        }
        return jitanon__inj_encode_mmap2(j, &rec);
    }
    if (f->region != SIZE_MAX) return jitanon__inj_emit_framed(j, s, &rec);
    return jitanon__inj_encode_mmap2(j, &rec);
}

/* Write: the record's pieces (or the whole mapping) as MMAP2s of its stub, pgoff = start
   (the stub's symbols sit at their runtime addresses). */
JITANON__PRIVATE jitanon_result jitanon__inj_emit_perfmap(jitanon__inj *j, const jitanon__inj_rec *r)
{
    const uint8_t *raw = j->round.bytes.data + r->off;
    int big = j->in->big_endian;
    jitanon_trim_piece whole;
    const jitanon_trim_piece *p = &whole;
    jitanon_perf_record rec;
    size_t n = 1, i;
    whole.start = r->start;
    whole.len = r->len;
    whole.pgoff = r->pgoff;
    if (r->action == JITANON__INJ_PIECES) {
        p = &j->round.pieces[r->first_piece];
        n = r->pieces;
    }
    memset(&rec, 0, sizeof rec);
    rec.misc = (uint16_t)(r->misc & JITANON_PERF_MISC_CPUMODE_MASK);
    rec.big_endian = big;
    rec.sid.time = r->time;
    rec.sid.cpu = r->cpu;
    rec.mmap.pid = r->pid;
    rec.mmap.tid = r->tid;
    rec.mmap.prot = r->type == JITANON_PERF_RECORD_MMAP2 ? jitanon__rd32(raw + 64, big) : 5u; /* R|X */
    rec.mmap.flags = r->type == JITANON_PERF_RECORD_MMAP2 ? jitanon__rd32(raw + 68, big) : 2u; /* MAP_PRIVATE */
    rec.mmap.filename.data = jitanon__inj_path(j, r->stub - 1);
    rec.mmap.filename.length = strlen(rec.mmap.filename.data);
    for (i = 0; i < n; i++) {
        jitanon_result res;
        rec.mmap.start = p[i].start;
        rec.mmap.len = p[i].len;
        rec.mmap.pgoff = p[i].start;
        if ((res = jitanon__inj_encode_mmap2(j, &rec)) != JITANON_OK) return res;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__inj_emit_rec(jitanon__inj *j, const jitanon__inj_rec *r)
{
    jitanon__inj_out *o = &j->out;
    const uint8_t *raw = j->round.bytes.data + r->off;
    jitanon_perf_record rec;
    size_t i;
    if (r->stub) return jitanon__inj_emit_perfmap(j, r);
    if (r->action == JITANON__INJ_PASS) return jitanon_perf_writer_write(o->w, raw, r->size, j->err);
    /* What jitanon_perf_rewrite_mmap reads of a record; the buffered round keeps no more. */
    memset(&rec, 0, sizeof rec);
    rec.type = r->type;
    rec.big_endian = j->in->big_endian;
    rec.raw.data = raw;
    rec.raw.size = r->size;
    rec.offset = r->offset;
    for (i = 0; r->action == JITANON__INJ_PIECES && i < r->pieces; i++) {
        const jitanon_trim_piece *p = &j->round.pieces[r->first_piece + i];
        size_t size = 0;
        jitanon_result res;
        rec.mmap.start = p->start;
        rec.mmap.len = p->len;
        rec.mmap.pgoff = p->pgoff;
        if (!jitanon__grow(&j->a, (void **)&o->enc, &o->enc_cap, r->size, 1)) return jitanon__inj_nomem(j, "pieces");
        res = jitanon_perf_rewrite_mmap(o->enc, o->enc_cap, &size, &rec, j->err);
        if (res == JITANON_OK) res = jitanon_perf_writer_write(o->w, o->enc, size, j->err);
        if (res != JITANON_OK) return res;
    }
    return JITANON_OK;
}

JITANON__PRIVATE int jitanon__inj_synth_less(const void *ctx, uint32_t a, uint32_t b)
{
    const jitanon__inj_synth *s = (const jitanon__inj_synth *)ctx;
    return s[a].time < s[b].time || (s[a].time == s[b].time && s[a].seq < s[b].seq);
}

/* Fills the round's order with 0..n-1 sorted by `less` (stable); order and its scratch
   half share one allocation. */
JITANON__PRIVATE int jitanon__inj_order(jitanon__inj *j, size_t n, jitanon__less_fn less, const void *ctx)
{
    jitanon__inj_buf *rd = &j->round;
    size_t i;
    if (n == 0) return 1; /* order may still be NULL, and NULL + 0 is undefined */
    if (n > UINT32_MAX / 2) return 0;
    if (!jitanon__grow(&j->a, (void **)&rd->order, &rd->order_cap, 2 * n, sizeof *rd->order)) return 0;
    for (i = 0; i < n; i++) rd->order[i] = (uint32_t)i;
    /* Rounds of one CPU, or written in order, need no sort: one comparison a record
       instead of the sort's passes. */
    for (i = 1; i < n && !less(ctx, (uint32_t)i, (uint32_t)(i - 1)); i++) {}
    if (i < n) jitanon__msort(rd->order, rd->order + n, n, less, ctx);
    return 1;
}

/* Writes the records [from, to) of the round, all passed through unchanged: they lie back
   to back in the round buffer, so they go out in one write, copied no further. */
JITANON__PRIVATE jitanon_result jitanon__inj_emit_run(jitanon__inj *j, size_t from, size_t to)
{
    const jitanon__inj_rec *a, *z;
    if (from == to) return JITANON_OK; /* before the pointers: recs may still be NULL */
    a = &j->round.recs[from];
    z = &j->round.recs[to - 1];
    return jitanon__pw_records(j->out.w, j->round.bytes.data + a->off, z->off + z->size - a->off, to - from, j->err);
}

/* How many of the first n buffered records are decided, from the first on. */
JITANON__PRIVATE size_t jitanon__inj_decided(const jitanon__inj_buf *rd, size_t n)
{
    size_t k;
    for (k = 0; k < n && rd->recs[k].decided; k++) {}
    return k;
}

/* Emits the decided records from the first on (`n` of them) in file order, each
   synthesized MMAP2 just before the first record that is not older than it; with all
   (`all`), those newer than every record after them.  *placed: how many MMAP2s went out,
   the first in time order (rd->order). */
JITANON__PRIVATE jitanon_result jitanon__inj_emit_round(jitanon__inj *j, size_t n, int all, size_t *placed)
{
    jitanon__inj_buf *rd = &j->round;
    size_t k, s = 0, run = 0; /* records [run, k) pass unchanged and are not written yet */
    jitanon_result res = JITANON_OK;
    *placed = 0;
    for (k = 0; k < n && res == JITANON_OK; k++) {
        const jitanon__inj_rec *r = &rd->recs[k];
        if (s < rd->nsynth && rd->synth[rd->order[s]].time <= r->time) {
            res = jitanon__inj_emit_run(j, run, k);
            run = k;
        }
        while (res == JITANON_OK && s < rd->nsynth && rd->synth[rd->order[s]].time <= r->time)
            res = jitanon__inj_emit_synth(j, &rd->synth[rd->order[s++]]);
        if (r->action == JITANON__INJ_PASS && !r->stub) continue;
        if (res == JITANON_OK) res = jitanon__inj_emit_run(j, run, k);
        if (res == JITANON_OK) res = jitanon__inj_emit_rec(j, r);
        run = k + 1;
    }
    if (res == JITANON_OK) res = jitanon__inj_emit_run(j, run, k);
    while (res == JITANON_OK && all && s < rd->nsynth) res = jitanon__inj_emit_synth(j, &rd->synth[rd->order[s++]]);
    *placed = s;
    return res;
}

/* The MMAP2s not placed yet (rd->order[placed..]) and the pieces of the decided records
   not written yet (from recs[0] on: jitanon__inj_unbuffer ran) move to the front, for
   the next round to write. */
JITANON__PRIVATE jitanon_result jitanon__inj_keep_waiting(jitanon__inj *j, size_t placed)
{
    jitanon__inj_buf *rd = &j->round;
    size_t k, m = rd->nsynth - placed;
    if (m) {
        if (!jitanon__grow(&j->a, (void **)&rd->synth2, &rd->synth2_cap, m, sizeof *rd->synth2))
            return jitanon__inj_nomem(j, "synthesized mmaps");
        for (k = 0; k < m; k++) rd->synth2[k] = rd->synth[rd->order[placed + k]];
        memcpy(rd->synth, rd->synth2, m * sizeof *rd->synth);
    }
    rd->nsynth = m;
    m = 0;
    for (k = 0; k < rd->nrecs && rd->recs[k].decided; k++) m += rd->recs[k].pieces;
    if (m) {
        if (!jitanon__grow(&j->a, (void **)&rd->pieces2, &rd->pieces2_cap, m, sizeof *rd->pieces2))
            return jitanon__inj_nomem(j, "trimmed mmaps");
        m = 0;
        for (k = 0; k < rd->nrecs && rd->recs[k].decided; k++) {
            jitanon__inj_rec *r = &rd->recs[k];
            if (r->pieces) memcpy(rd->pieces2 + m, rd->pieces + r->first_piece, r->pieces * sizeof *rd->pieces);
            r->first_piece = m;
            m += r->pieces;
        }
        memcpy(rd->pieces, rd->pieces2, m * sizeof *rd->pieces);
    }
    rd->npieces = m;
    return JITANON_OK;
}

/* The first n buffered records are gone (decided and written): what is held after them
   moves to the front of the buffer. */
JITANON__PRIVATE void jitanon__inj_unbuffer(jitanon__inj *j, size_t n)
{
    jitanon__inj_buf *rd = &j->round;
    size_t from = n < rd->nrecs ? rd->recs[n].off : rd->bytes.size, k;
    if (from > j->st->read.largest_round_bytes) j->st->read.largest_round_bytes = from;
    if (n < rd->nrecs) {
        memmove(rd->bytes.data, rd->bytes.data + from, rd->bytes.size - from);
        memmove(rd->recs, rd->recs + n, (rd->nrecs - n) * sizeof *rd->recs);
        for (k = 0; k < rd->nrecs - n; k++) rd->recs[k].off -= from;
    }
    rd->bytes.size -= from;
    rd->nrecs -= n;
    rd->exits_seen = rd->exits_seen > n ? rd->exits_seen - n : 0;
    for (k = 0; k < rd->nheld && rd->held[k].end <= n; k++) {}
    if (k) memmove(rd->held, rd->held + k, (rd->nheld - k) * sizeof *rd->held); /* held may be NULL */
    rd->nheld -= k;
    for (k = 0; k < rd->nheld; k++) rd->held[k].end -= n;
}

/* Decides the first n buffered records (whole rounds) not decided yet, up to time `limit`
   (perf's flush, jitanon__inj_buf.flush_at), in time order, applying jit events as time
   passes, then writes them as far as they are decided.  `last`: no more input, so every
   remaining jit event is due (and every record is decided). */
JITANON__PRIVATE jitanon_result jitanon__inj_round(jitanon__inj *j, size_t n, int last, uint64_t limit)
{
    jitanon__inj_buf *rd = &j->round;
    size_t k, total = rd->nrecs, done, placed = 0;
    uint64_t max_time = 0;
    jitanon_result res = JITANON_OK;
    rd->nrecs = n; /* what follows is held: the stages below see only these */
    if (last) limit = UINT64_MAX;
    if (!jitanon__inj_order(j, rd->nrecs, jitanon__inj_rec_less, rd->recs)) {
        rd->nrecs = total;
        return jitanon__inj_nomem(j, "sort");
    }
    if (j->jit.live) { /* what the followed dumps wrote up to the round's last event */
        res = jitanon__inj_follow_all(j, rd->nrecs ? rd->recs[rd->order[rd->nrecs - 1]].time : 0, last);
        j->jit.due = 0; /* what they wrote is due now, or later */
    }
    for (k = 0; k < rd->nrecs && res == JITANON_OK; k++) {
        jitanon__inj_rec *r = &rd->recs[rd->order[k]];
        if (r->time > limit) break; /* sorted: the rest waits for the next round */
        if (r->decided) continue;   /* in a round before, or a FINISHED_ROUND */
        r->decided = 1;
        if (r->time > max_time) max_time = r->time;
        if (j->jit.live && r->time > j->jit.decided) j->jit.decided = r->time;
        /* Most records are samples, which add no jit events: between two events they need
           no look at the queues.  Any other record may (a marker, a mapping over late
           claims), so the next record asks again. */
        if (r->time >= j->jit.due) res = jitanon__inj_apply_until(j, r->time, 0);
        if (r->type != JITANON_PERF_RECORD_SAMPLE) j->jit.due = 0;
        if (res == JITANON_OK) res = jitanon__inj_decide(j, r);
    }
    if (res == JITANON_OK) res = jitanon__inj_apply_until(j, max_time, last);
    done = jitanon__inj_decided(rd, n);
    placed = rd->nsynth; /* nothing written: nothing to place */
    if (res == JITANON_OK && j->out.w)
        res = jitanon__inj_order(j, rd->nsynth, jitanon__inj_synth_less, rd->synth)
                  ? jitanon__inj_emit_round(j, done, done == n, &placed)
                  : jitanon__inj_nomem(j, "sort");
    j->st->read.rounds++;
    rd->nrecs = total;
    jitanon__inj_unbuffer(j, done);
    if (res == JITANON_OK) res = jitanon__inj_keep_waiting(j, placed);
    if (j->io.progress) j->io.progress(j->io.user, j->bytes_done);
    return res;
}

/* -- the pipeline ------------------------------------------------------------------------------ */

/* Bytes the buffered records from recs[from] on take (their raw bytes and bookkeeping). */
JITANON__PRIVATE uint64_t jitanon__inj_held_bytes(const jitanon__inj_buf *rd, size_t from)
{
    size_t off = from < rd->nrecs ? rd->recs[from].off : rd->bytes.size;
    return (uint64_t)(rd->bytes.size - off) + (uint64_t)(rd->nrecs - from) * sizeof *rd->recs;
}

/* Decides the held rounds [0, k) (forced: let go by the bound), counting how long the
   oldest of them waited. */
JITANON__PRIVATE jitanon_result jitanon__inj_let_go(jitanon__inj *j, size_t k, int forced, uint64_t now)
{
    jitanon__inj_buf *rd = &j->round;
    if (!k) return JITANON_OK;
    if (now > rd->held[0].at && now - rd->held[0].at > j->st->hold.max_delay_ns)
        j->st->hold.max_delay_ns = now - rd->held[0].at;
    j->jit.forced = forced;
    /* let go by the bound: all of them, as a round cut for its size */
    return jitanon__inj_round(j, rd->held[k - 1].end, 0, forced ? UINT64_MAX : rd->held[k - 1].limit);
}

/* Live pipes: the markers of the round just read (from recs[from] on) are read at once,
   before the round is held or decided: their dumps are followed from here, so the samples
   of a marker's own round wait for its dump like later ones (CPython maps its trampolines
   and opens its dump right before its hot code runs: deciding that round first left up
   to 1% of a short run unnamed).  Their dumps' events still apply in time order;
   deciding such a marker only finishes it (jitanon__inj_decide). */
JITANON__PRIVATE jitanon_result jitanon__inj_hold_markers(jitanon__inj *j, size_t from)
{
    jitanon__inj_buf *rd = &j->round;
    jitanon_result res = JITANON_OK;
    size_t u;
    for (u = from; u < rd->nrecs && res == JITANON_OK; u++) {
        jitanon__inj_rec *r = &rd->recs[u];
        jitanon_str name;
        if (!jitanon__inj_is_mmap(r->type) || (r->misc & JITANON__PERF_MISC_MMAP_DATA) || r->marker_read) continue;
        name.data = (const char *)rd->bytes.data + r->off + r->name_off;
        name.length = r->name_len;
        if (!jitanon_jitdump_is_marker(name.data, name.length, NULL)) continue;
        r->marker_read = 1;
        res = jitanon__inj_marker(j, r, &name);
    }
    return res;
}

/* Live pipes: a round was read.  It joins the rounds held back, and every whole round
   before the first sample not yet decidable (jitanon__inj_undecided) is decided and
   written, in order, after the followed dumps were read again; so the output streams as
   soon as the dumps catch up.  An EXIT among them means that process's JIT wrote all it
   will: its dump is read to the end at once.  Past opts.hold_bytes the oldest rounds are
   decided with what is known until half of it is held (stats.hold.bound_hits). */
JITANON__PRIVATE jitanon_result jitanon__inj_hold(jitanon__inj *j, uint64_t limit)
{
    jitanon__inj_buf *rd = &j->round;
    uint64_t now = jitanon_jitdump_now(), held;
    jitanon__inj_fresh fresh;
    jitanon_result res;
    size_t k, m, u;
    if (rd->nheld && rd->held[rd->nheld - 1].end == rd->nrecs) return JITANON_OK; /* an empty round */
    if (!jitanon__grow(&j->a, (void **)&rd->held, &rd->held_cap, rd->nheld + 1, sizeof *rd->held))
        return jitanon__inj_nomem(j, "held rounds");
    if ((res = jitanon__inj_hold_markers(j, rd->nheld ? rd->held[rd->nheld - 1].end : 0)) != JITANON_OK) return res;
    rd->held[rd->nheld].end = rd->nrecs;
    rd->held[rd->nheld].limit = limit;
    rd->held[rd->nheld++].at = now;
    for (k = rd->exits_seen; k < rd->nrecs; k++)
        if (rd->recs[k].type == JITANON_PERF_RECORD_EXIT && rd->recs[k].pid == rd->recs[k].tid)
            jitanon__inj_follow_exit(j, rd->recs[k].pid);
    rd->exits_seen = rd->nrecs;
    if ((res = jitanon__inj_follow_all(j, rd->last_time, 0)) != JITANON_OK) return res;
    fresh.n = 0;
    for (u = 0; u < rd->nrecs && (rd->recs[u].decided || !jitanon__inj_undecided(j, &rd->recs[u], now, &fresh)); u++)
        jitanon__inj_fresh_add(j, &fresh, &rd->recs[u]);
    for (k = 0; k < rd->nheld && rd->held[k].end <= u; k++) {}
    held = jitanon__inj_held_bytes(rd, 0) + rd->nheld * sizeof *rd->held;
    if (held > j->st->hold.peak_bytes) j->st->hold.peak_bytes = held;
    m = k;
    if (held > j->jit.hold_bytes) {
        j->st->hold.bound_hits++;
        while (m < rd->nheld && jitanon__inj_held_bytes(rd, m ? rd->held[m - 1].end : 0) > j->jit.hold_bytes / 2) m++;
    }
    if (m < rd->nheld) j->st->hold.rounds++; /* the round just read waits */
    if ((res = jitanon__inj_let_go(j, k, 0, now)) != JITANON_OK) return res;
    return jitanon__inj_let_go(j, m - k, 1, now);
}

/* Read: buffers a round; attr and feature records, which become file sections when pipe
   turns into file, pass on at once, after whatever is buffered. */
JITANON__PRIVATE jitanon_result jitanon__inj_record(void *ctx, const jitanon_perf_record *rec)
{
    jitanon__inj *j = (jitanon__inj *)ctx;
    jitanon_result res;
    uint64_t limit = j->opts->max_round_bytes_ ? j->opts->max_round_bytes_ : (uint64_t)256 << 20, size, flush;
    j->st->read.records++;
    if (!rec->from_compressed) j->bytes_done = rec->offset + rec->raw.size;
    if (rec->type == JITANON_PERF_RECORD_HEADER_FEATURE && rec->feature.feat_id == 6)
        j->jit.machine = jitanon__inj_arch_feature(j, rec->feature.data); /* HEADER_ARCH of a pipe */
    if (rec->type == JITANON_PERF_RECORD_HEADER_ATTR || rec->type == JITANON_PERF_RECORD_HEADER_FEATURE) {
        j->jit.forced = j->jit.live; /* a header record mid-stream lets go of what is held */
        if (j->round.nrecs && (res = jitanon__inj_round(j, j->round.nrecs, 0, UINT64_MAX)) != JITANON_OK) return res;
        j->round.flush_at = j->round.newest;
        if (j->opts->on_event) j->opts->on_event(jitanon__inj_sample_user(j), rec);
        return j->out.w ? jitanon__pc_record(j->in, j->out.w, rec, j->err) : JITANON_OK;
    }
    if ((res = jitanon__inj_buffer(j, rec)) != JITANON_OK) return res;
    size = j->round.nheld ? jitanon__inj_held_bytes(&j->round, j->round.held[j->round.nheld - 1].end) : j->round.bytes.size;
    if (rec->type != JITANON_PERF_RECORD_FINISHED_ROUND && size < limit) return JITANON_OK;
    /* perf flushes up to the newest time before this round; a round cut for its size
       (perf would sort it whole) is decided whole */
    flush = rec->type == JITANON_PERF_RECORD_FINISHED_ROUND ? j->round.flush_at : UINT64_MAX;
    j->round.flush_at = j->round.newest;
    return j->jit.hold_bytes ? jitanon__inj_hold(j, flush) : jitanon__inj_round(j, j->round.nrecs, 0, flush);
}

/* The input ended: every jit event is due, then the layout writes what it kept back. */
JITANON__PRIVATE jitanon_result jitanon__inj_end(void *ctx)
{
    jitanon__inj *j = (jitanon__inj *)ctx;
    jitanon_result res;
    if (j->round.nheld) { /* what is still held is decided with all the dumps wrote */
        uint64_t now = jitanon_jitdump_now();
        if (now > j->round.held[0].at && now - j->round.held[0].at > j->st->hold.max_delay_ns)
            j->st->hold.max_delay_ns = now - j->round.held[0].at;
    }
    j->jit.forced = j->jit.live && !j->jit.hold_bytes;
    res = jitanon__inj_round(j, j->round.nrecs, 1, UINT64_MAX);
    if (res == JITANON_OK && j->st->unnamed.past_bound + j->st->unnamed.stopped) {
        char what[320];
        const jitanon_inject_stats *s = j->st;
        jitanon__fmt(what, sizeof what,
                     "live pipe: %U samples in JIT memory were decided before their jitdump reached them and stayed "
                     "unnamed: %U past the hold-back bound, %U after the JIT stopped writing (%U more not in their "
                     "dump, %U of processes without one)",
                     s->unnamed.past_bound + s->unnamed.stopped, s->unnamed.past_bound, s->unnamed.stopped,
                     s->unnamed.not_in_dump, s->unnamed.no_dump);
        jitanon__inj_log(j, "%s%s", what, NULL);
    }
    if (res == JITANON_OK) jitanon__inj_report_stopped(j);
    if (res == JITANON_OK && j->elf.ops->finish) res = j->elf.ops->finish(j, &j->elf);
    if (res == JITANON_OK) res = jitanon__inj_bids_flush(j);
    return res;
}

JITANON__PRIVATE void jitanon__inj_free(jitanon__inj *j)
{
    jitanon__inj_jit *jt = &j->jit;
    jitanon__inj_buf *rd = &j->round;
    size_t i;
    if (j->elf.ops && j->elf.ops->free) j->elf.ops->free(j, &j->elf);
    for (i = 0; i < jt->ndumps; i++) {
        jitanon__inj_follow_end(j, &jt->dumps[i]);
        jitanon__hmap_free(&jt->dumps[i].uses, &j->a);
        jitanon__hmap_free(&jt->dumps[i].seen, &j->a);
        jitanon__free(&j->a, jt->dumps[i].events, jt->dumps[i].cap * sizeof *jt->dumps[i].events);
        jitanon__free(&j->a, jt->dumps[i].dir, jt->dumps[i].dir_size);
        jitanon_jitdump_destroy(jt->dumps[i].dump);
    }
    jitanon__free(&j->a, jt->dumps, jt->dumps_cap * sizeof *jt->dumps);
    jitanon__free(&j->a, jt->funcs, jt->funcs_cap * sizeof *jt->funcs);
    jitanon__free(&j->a, jt->ehs, jt->ehs_cap * sizeof *jt->ehs);
    jitanon__free(&j->a, jt->hot, jt->hot_cap * sizeof *jt->hot);
    jitanon__free(&j->a, jt->regions, jt->regions_cap * sizeof *jt->regions);
    for (i = 0; i < jt->nclaims; i++) jitanon_rangemap_release(&jt->claims[i]);
    jitanon__free(&j->a, jt->claims, jt->claims_cap * sizeof *jt->claims);
    jitanon__hmap_free(&jt->claims_of, &j->a);
    jitanon__hmap_free(&jt->region_last, &j->a);
    jitanon__hmap_free(&jt->pids, &j->a);
    jitanon__hmap_free(&jt->latest, &j->a);
    jitanon__hmap_free(&jt->mntns, &j->a);
    jitanon__hmap_free(&j->pm_pids, &j->a);
    for (i = 0; i < j->sym.npmaps; i++) jitanon_perfmap_destroy(j->sym.pmaps[i]);
    jitanon__free(&j->a, j->sym.pmaps, j->sym.pmaps_cap * sizeof *j->sym.pmaps);
    jitanon__free(&j->a, j->sym.pmap_path, j->sym.paths_cap * sizeof *j->sym.pmap_path);
    jitanon__hmap_free(&j->sym.maps, &j->a);
    jitanon__hmap_free(&j->sym.bids, &j->a);
    jitanon__hmap_free(&j->sym.bid_ident, &j->a);
    jitanon__hmap_free(&j->sym.mmap_bid, &j->a);
    jitanon_membuf_release(&j->sym.mmap_bids);
    jitanon__hmap_free(&j->sym.comm, &j->a);
    jitanon_membuf_release(&j->sym.comms);
    jitanon__free(&j->a, j->sym.lines, j->sym.lines_cap * sizeof *j->sym.lines);
    jitanon__unw_files_free(j);
    jitanon__inj_sym_files_free(j);
    jitanon__free(&j->a, jt->waiting, jt->waiting_cap * sizeof *jt->waiting);
    jitanon__free(&j->a, jt->early, jt->early_cap * sizeof *jt->early);
    jitanon_rangemap_release(&jt->described);
    jitanon_membuf_release(&jt->paths);
    jitanon__inj_wait_release(j, &jt->wait);
    jitanon__free(&j->a, rd->recs, rd->recs_cap * sizeof *rd->recs);
    jitanon__free(&j->a, rd->order, rd->order_cap * sizeof *rd->order);
    jitanon__free(&j->a, rd->pieces, rd->pieces_cap * sizeof *rd->pieces);
    jitanon__free(&j->a, rd->synth, rd->synth_cap * sizeof *rd->synth);
    jitanon__free(&j->a, rd->synth2, rd->synth2_cap * sizeof *rd->synth2);
    jitanon__free(&j->a, rd->pieces2, rd->pieces2_cap * sizeof *rd->pieces2);
    jitanon__free(&j->a, rd->held, rd->held_cap * sizeof *rd->held);
    jitanon_membuf_release(&rd->bytes);
    jitanon__free(&j->a, j->maps.idents, j->maps.idents_cap * sizeof *j->maps.idents);
    jitanon__hmap_free(&j->maps.index, &j->a);
    jitanon_membuf_release(&j->maps.names);
    jitanon_trim_destroy(j->maps.trim);
    jitanon__free(&j->a, j->out.enc, j->out.enc_cap);
    jitanon_membuf_release(&j->bids);
    if (j->os) j->os->bc_close(&j->bc);
}

/* elf_files = SAMPLED (or AUTO) as far as this run can honour it (see jitanon_inject_opts). */
JITANON__PRIVATE jitanon_result jitanon__inj_sampled(jitanon__inj *j, int *sampled)
{
    *sampled = 0;
    if (!j->out.w || j->opts->elf_files == JITANON_ELF_FILES_ALL) return JITANON_OK;
    if (j->opts->elf_files == JITANON_ELF_FILES_AUTO) {
        *sampled = j->opts->elf_layout == JITANON_ELF_PER_FUNCTION && j->in->mode == JITANON_PERF_FILE &&
                   j->out.w->mode == JITANON_PERF_FILE;
        return JITANON_OK;
    }
    if (j->opts->elf_layout != JITANON_ELF_PER_FUNCTION)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0,
                             "elf_files = JITANON_ELF_FILES_SAMPLED chooses per-function files; it cannot combine "
                             "with elf_layout = JITANON_ELF_PER_%s",
                             j->opts->elf_layout == JITANON_ELF_PER_PROCESS ? "PROCESS" : "REGION");
    if (j->in->mode != JITANON_PERF_FILE || j->out.w->mode != JITANON_PERF_FILE) {
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_SAMPLED_PIPE,
                              "elf_files = SAMPLED needs file input and output (a pipe's reader may want a file "
                              "before the end): every function's file is written");
        return JITANON_OK;
    }
    *sampled = 1;
    return JITANON_OK;
}

/* Late NAME needs the whole dump before the samples and the anon mmaps it trims. */
JITANON__PRIVATE jitanon_result jitanon__inj_late_start(jitanon__inj *j)
{
    const jitanon_inject_opts *o = j->opts;
    jitanon_rangemap_init(&j->jit.described, &j->a);
    if ((unsigned)o->late > JITANON_LATE_KEEP)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0, "unknown late mode");
    if (o->late == JITANON_LATE_KEEP) return JITANON_OK;
    if (o->late == JITANON_LATE_AUTO && (o->anon_mode != JITANON_ANON_RANGE || j->in->mode != JITANON_PERF_FILE))
        return JITANON_OK;
    if (o->anon_mode != JITANON_ANON_RANGE)
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_LATE_ANON,
                              "late = NAME claims code in trimmed anonymous mappings, which anon_mode ALL and KEEP do "
                              "not trim: functions are mapped from their loads");
    else if (j->in->mode != JITANON_PERF_FILE)
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_LATE_PIPE,
                              "late = NAME needs each whole jitdump before the samples, which a pipe (a recording "
                              "still running) does not promise: functions are mapped from their loads");
    else {
        j->jit.late = 1;
        j->jit.late_window = o->late_window_ns ? o->late_window_ns : JITANON_LATE_WINDOW_DEFAULT_NS;
    }
    return JITANON_OK;
}

/* Checks the options against each other and sets up the stages. */
JITANON__PRIVATE jitanon_result jitanon__inj_start(jitanon__inj *j, const jitanon_inject_opts *opts,
                                                   jitanon_inject_opts *defaults)
{
    jitanon_result res;
    int sampled;
    if (!opts) {
        memset(defaults, 0, sizeof *defaults);
        opts = defaults;
    }
    if (JITANON__OPTS_BAD(opts)) return jitanon__opts_fail(j->err, "jitanon_inject_opts");
    /* Enums: a caller can still store any int in them. */
    if ((unsigned)opts->anon_mode > JITANON_ANON_KEEP || (unsigned)opts->elf_layout > JITANON_ELF_PER_REGION ||
        (unsigned)opts->elf_files > JITANON_ELF_FILES_ALL || (unsigned)opts->perf_map > JITANON_PERF_MAP_ELF)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0,
                             "unknown anon_mode, elf_layout, elf_files or perf_map");
    if (JITANON__OPTS_BAD(&opts->perfmap)) return jitanon__opts_fail(j->err, "jitanon_perfmap_opts");
    if (j->out.w && j->in->big_endian != j->out.w->big_endian)
        return JITANON__FAIL(j->err, JITANON_ERR_INVALID_ARGUMENT, 0, "the writer must use the input's byte order");
    j->opts = opts;
    j->a = opts->allocator;
    j->io = opts->io;
    if (!j->io.load_dump) j->io.load_dump = jitanon__inj_load_default;
    /* /proc is the default I/O's: an embedder's own never has it read behind its back */
    if (!j->io.find_process && !opts->io.load_dump && !opts->io.open_dump)
        j->io.find_process = jitanon_inject_find_process_proc;
    if (!j->io.write_elf) j->io.write_elf = j->os->write_elf;
    j->jit.paths.allocator = j->jit.wait.debug.allocator = j->jit.wait.unwind.allocator = j->a;
    if (!j->io.load_perfmap) j->io.load_perfmap = jitanon__inj_load_perfmap_default;
    if (!j->io.read_file) j->io.read_file = jitanon__unw_read_default;
    j->round.bytes.allocator = j->maps.names.allocator = j->bids.allocator = j->sym.comms.allocator = j->sym.mmap_bids.allocator = j->a;
    j->jit.dump_opts = opts->jitdump;
    j->jit.dump_opts.no_records_ = 1;
    if ((res = jitanon__inj_sampled(j, &sampled)) != JITANON_OK) return res;
    if ((res = jitanon__inj_late_start(j)) != JITANON_OK) return res;
    /* A pipe is a recording still running: its dumps are followed as they grow, when they
       are streamed (the default I/O, or io.open_dump) into per-function files. */
    j->jit.live = j->in->mode != JITANON_PERF_FILE && jitanon__inj_streams(j) && opts->elf_layout != JITANON_ELF_PER_PROCESS;
    if (j->jit.live && opts->hold_bytes != JITANON_HOLD_NONE)
        j->jit.hold_bytes = opts->hold_bytes ? opts->hold_bytes : JITANON_HOLD_DEFAULT_BYTES;
    j->jit.forced = j->jit.live && !j->jit.hold_bytes; /* nothing held: what is unnamed is the bound's */
    j->jit.idle_ns = (uint64_t)(opts->follow_idle_ms ? opts->follow_idle_ms : JITANON_FOLLOW_IDLE_DEFAULT_MS) * 1000000u;
    if (j->out.w && opts->elf_threads && opts->elf_layout != JITANON_ELF_PER_FUNCTION)
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_THREADS_UNUSED,
                              "elf_threads: per-process and per-region files are a few writes per dump; the "
                              "calling thread writes them");
    else if (j->out.w && opts->elf_threads && !j->io.thread_pool && !j->os->threads)
        jitanon__inj_fallback(j, JITANON_INJECT_FALLBACK_NO_THREADS,
                              "elf_threads: built without threads; the calling thread writes the ELF files");
    j->elf.ops = jitanon__elfout_pick(j, sampled);
    if (opts->anon_mode == JITANON_ANON_RANGE || opts->on_sample || j->elf.ops->needs_maps) {
        jitanon_trim_opts to;
        memset(&to, 0, sizeof to);
        to.allocator = j->a;
        if ((res = jitanon_trim_create(&to, &j->maps.trim, j->err)) != JITANON_OK) return res;
    }
    return JITANON_OK;
}

/* stats.trim: the injector counts what it mapped and decided itself (the engine does not
   see a run's anon_mode); the rest is the engine's. */
JITANON__PRIVATE void jitanon__inj_engine_stats(jitanon_trim_stats *st, const jitanon_trim_stats *engine)
{
    st->file_mmaps = engine->file_mmaps;
    st->untrimmed = engine->untrimmed;
    st->out_of_order = engine->out_of_order;
    st->processes = engine->processes;
    st->bytes_held = engine->bytes_held;
    st->peak_bytes = engine->peak_bytes;
}

JITANON_API jitanon_result jitanon_inject(jitanon_perf_reader *in, jitanon_perf_writer *out,
                                          const jitanon_inject_opts *opts, jitanon_inject_stats *stats,
                                          jitanon_error *err)
{
    jitanon__inj j;
    jitanon_inject_opts defaults;
    jitanon_inject_stats local;
    jitanon__perf_pass pass;
    jitanon_result res;
    JITANON_ASSERT(in);
    jitanon__clear_error(err);
    memset(&j, 0, sizeof j);
    j.bc.root = j.bc.base = j.bc.ids = -1; /* no fd: jitanon__inj_free closes what is open */
    j.os = jitanon__os_default();
    j.in = in;
    j.out.w = out;
    j.err = err;
    j.st = stats ? stats : &local;
    memset(j.st, 0, sizeof *j.st);
    pass.record = jitanon__inj_record;
    pass.end = jitanon__inj_end;
    pass.ctx = &j;
    res = jitanon__inj_start(&j, opts, &defaults);
    if (res == JITANON_OK) res = jitanon__perf_pump(in, out, &pass, err);
    j.st->write.records = out ? out->records : 0;
    j.st->read.warnings = in->warnings;
    j.st->read.bytes_ignored = in->bytes_ignored;
    if (j.maps.trim) jitanon__inj_engine_stats(&j.st->trim, jitanon_trim_get_stats(j.maps.trim));
    jitanon__inj_free(&j);
    return res;
}

/* Damage of the perf.data input has one channel: the reader's (warnings, damage,
   bytes_ignored), which jitanon_inject's caller owns.  jitanon_inject_file owns the
   reader itself, so it tells its caller through io.log, once, when everything (the
   features too) was read. */
JITANON__PRIVATE void jitanon__inj_input_damage(const jitanon_inject_opts *opts, const jitanon_perf_reader *in)
{
    char what[200], msg[512], detail[256];
    size_t n = 0;
    if (!in->warnings || !opts || !opts->io.log) return;
    what[0] = 0;
    if (in->warnings & JITANON_PERF_WARN_DATA_SIZE_ZERO)
        n += jitanon__fmt(what + n, sizeof what - n, "; data size 0: read to the end");
    if (in->warnings & JITANON_PERF_WARN_CUT)
        n += jitanon__fmt(what + n, sizeof what - n, "; ends inside a record: %U bytes ignored", in->bytes_ignored);
    if (in->warnings & JITANON_PERF_WARN_FEATURES)
        jitanon__fmt(what + n, sizeof what - n, "; feature sections treated as absent");
    jitanon_format_error(detail, sizeof detail, &in->damage);
    jitanon__fmt(msg, sizeof msg, "the perf.data input is damaged (%s); what could be read is used: %s", what + 2,
                 detail);
    opts->io.log(opts->io.user, msg);
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
    jitanon_result res = jitanon_inject(r, w, p->opts, p->stats, err);
    if (res == JITANON_OK) jitanon__inj_input_damage(p->opts, r);
    return res;
}

JITANON_API jitanon_result jitanon_inject_file(const char *in_path, const char *out_path, jitanon_perf_mode out_mode,
                                               const jitanon_inject_opts *opts, const jitanon_perf_opts *perf_opts,
                                               jitanon_inject_stats *stats, jitanon_error *err)
{
    jitanon__inj_pump p;
    p.opts = opts;
    p.stats = stats;
    return jitanon__pc_run(in_path, out_path, out_mode, perf_opts, jitanon__inj_pump_fn, &p, err);
}
#endif

/* == [posix] POSIX: the platform ==============================================================
   Every call into the operating system is in this section, behind the seam ([seam]: the
   public jitanon_stream, jitanon_inject_io, jitanon_thread_pool, and jitanon__os_default):
       jitanon_jitdump_now, jitanon__os_sleep_ns   CLOCK_MONOTONIC, nanosleep
       jitanon__os_write_all, jitanon__os_fd_sink   write(2) until done (a sink for an fd)
       jitanon__os_create_tmp   the one temporary-file scheme, "<dir>/.<name>.<pid>-<k>.tmp"
       jitanon_atomic_*         atomic output file (temporary file + rename)
       jitanon_jitdump_file_*   jit-<pid>.dump + its marker mmap
       jitanon__tp_*            jitanon_thread_pool's default (pthreads)
       jitanon__os_open_dump, jitanon__os_dump_open   the dump opener and its protections
                                (openat2 RESOLVE_IN_ROOT, the /proc/PID/root walk)
       jitanon__os_proc_ns, jitanon__os_is_dir   /proc and the host's tree
       jitanon__os_self_vdso    this process's vdso image (getauxval, /proc/self/maps)
       jitanon__inj_write_default, jitanon__inj_replaceable, jitanon__os_write_atomic
                                the ELF file writer and its replace check
       jitanon_buildid_cache_*, jitanon__bc_*   perf's build-id cache (~/.debug): config, walk, link
       jitanon__os_default      the table the core reaches all of it through
   Built without POSIX (JITANON_NO_POSIX, no unix, JITANON_NO_STDIO) each reports
   JITANON_ERR_FEATURE_DISABLED or does nothing, as its declaration says. */

JITANON_API uint64_t jitanon_jitdump_now(void)
{
#if JITANON__POSIX
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
    return 0;
#endif
}

/* Sleeps about `ns` (a live pipe's bounded wait for a dump to grow); 0 when it cannot. */
JITANON__PRIVATE int jitanon__os_sleep_ns(uint64_t ns)
{
#if JITANON__POSIX
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return nanosleep(&ts, NULL) == 0;
#else
    (void)ns;
    return 0;
#endif
}

#if JITANON__POSIX
/* jitanon__os.stdin_read: one read(2) of what the standard input has now (waits for a
   byte; 0 at its end). */
JITANON__PRIVATE size_t jitanon__os_stdin_read(void *user, void *dst, size_t size)
{
    ssize_t n;
    (void)user;
    do n = read(0, dst, size);
    while (n < 0 && errno == EINTR);
    return n < 0 ? SIZE_MAX : (size_t)n;
}

/* 0 when all bytes went out, 1 on an error or a write that makes no progress. */
JITANON__PRIVATE int jitanon__os_write_all(int fd, const void *data, size_t size)
{
    const uint8_t *p = (const uint8_t *)data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

/* A sink for a file descriptor carried in the user pointer's value ((void *)(intptr_t)fd),
   not behind it: the sink stays valid wherever the struct holding it is copied. */
JITANON__PRIVATE int jitanon__os_fd_sink(void *user, const void *data, size_t size)
{
    return jitanon__os_write_all((int)(intptr_t)user, data, size);
}

/* Creates a fresh file next to `path`, to be renamed over it: "<dir>/.<name>.<pid>-<k>.tmp"
   in the target's directory, so that rename() cannot cross a file system.  O_EXCL never
   opens what is there (nor follows a symlink planted under the name); a name in use only
   moves on to the next k.  *tmp (cap bytes) gets the name.  Allocates nothing: writer
   threads call it.  Returns the fd, or -1. */
JITANON__PRIVATE int jitanon__os_create_tmp_at(int at, char *tmp, size_t cap, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    unsigned k;
    if (dir >= cap) return -1;
    memcpy(tmp, path, dir);
    for (k = 0; k < 100; k++) {
        int fd;
        if (jitanon__fmt(tmp + dir, cap - dir, ".%s.%u-%u.tmp", path + dir, (unsigned)getpid(), k) >= cap - dir)
            return -1;
        fd = openat(at, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* The same, relative to the working directory (at = AT_FDCWD) or to a directory fd. */
JITANON__PRIVATE int jitanon__os_create_tmp(char *tmp, size_t cap, const char *path)
{
    return jitanon__os_create_tmp_at(AT_FDCWD, tmp, cap, path);
}
#endif

/* -- atomic output file -- */

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
#if JITANON__POSIX
#define JITANON__AF_BUF 65536u
#define JITANON__AF_TMP_EXTRA 32u /* ".", ".<pid>-<k>.tmp" */

JITANON__PRIVATE int jitanon__af_flush(jitanon_atomic_file *f)
{
    if (f->fd < 0 || f->failed || jitanon__os_write_all(f->fd, f->buf, f->buf_len)) f->failed = 1;
    f->buf_len = 0;
    return f->failed;
}

JITANON__PRIVATE int jitanon__af_write(void *file, const void *data, size_t size)
{
    jitanon_atomic_file *f = (jitanon_atomic_file *)file;
    if (size > f->buf_cap - f->buf_len && jitanon__af_flush(f)) return 1;
    if (size <= f->buf_cap - f->buf_len) {
        memcpy(f->buf + f->buf_len, data, size);
        f->buf_len += size;
        return f->failed;
    }
    if (f->fd < 0 || f->failed || jitanon__os_write_all(f->fd, data, size)) f->failed = 1;
    return f->failed;
}

JITANON_API int jitanon_atomic_pwrite(void *file, const void *data, size_t size, uint64_t offset)
{
    jitanon_atomic_file *f = (jitanon_atomic_file *)file;
    off_t end, at = (off_t)offset;
    /* lseek + write rather than pwrite: one call fewer to depend on. */
    if (jitanon__af_flush(f) || at < 0 || (uint64_t)at != offset || (end = lseek(f->fd, 0, SEEK_CUR)) < 0 ||
        lseek(f->fd, at, SEEK_SET) != at || jitanon__os_write_all(f->fd, data, size) ||
        lseek(f->fd, end, SEEK_SET) != end)
        f->failed = 1;
    return f->failed;
}

JITANON_API jitanon_sink jitanon_atomic_sink(jitanon_atomic_file *f)
{
    jitanon_sink s;
    s.write_fn = jitanon__af_write;
    s.user = f;
    return s;
}

JITANON__PRIVATE char *jitanon__af_strdup(const jitanon_allocator *a, const char *s, size_t extra, size_t *cap)
{
    size_t n = strlen(s);
    char *d;
    *cap = n + extra + 1;
    d = (char *)jitanon__malloc(a, *cap);
    if (d) memcpy(d, s, n + 1);
    return d;
}

JITANON_API jitanon_result jitanon_atomic_open(jitanon_atomic_file *f, const char *path,
                                               const jitanon_allocator *allocator, jitanon_error *err)
{
    jitanon_result res = JITANON_OK;
    struct stat st;
    JITANON_ASSERT(f && path);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    jitanon__clear_error(err);
    if (allocator) f->allocator = *allocator;
    f->path = jitanon__af_strdup(&f->allocator, path, 0, &f->path_cap_);
    f->tmp_path = jitanon__af_strdup(&f->allocator, path, JITANON__AF_TMP_EXTRA, &f->tmp_cap_);
    f->buf = (uint8_t *)jitanon__malloc(&f->allocator, JITANON__AF_BUF);
    f->buf_cap = f->buf ? JITANON__AF_BUF : 0;
    if (!f->path || !f->tmp_path || !f->buf)
        res = JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot copy the path");
    else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_); /* see jitanon_atomic_file */
        f->tmp_path = NULL;
        if ((f->fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            res = JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open %s for writing", f->path);
    } else if ((f->fd = jitanon__os_create_tmp(f->tmp_path, f->tmp_cap_, f->path)) < 0)
        res = JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot create a temporary file next to %s", f->path);
    if (res != JITANON_OK) {
        /* Nothing was created; tmp_path may even hold the target's name: never unlink it. */
        jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
        f->tmp_path = NULL;
        jitanon_atomic_abort(f);
    }
    return res;
}

JITANON_API void jitanon_atomic_abort(jitanon_atomic_file *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp_path) unlink(f->tmp_path);
    jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
    jitanon__free(&f->allocator, f->path, f->path_cap_);
    jitanon__free(&f->allocator, f->buf, f->buf_cap);
    f->tmp_path = f->path = NULL;
    f->buf = NULL;
    f->buf_len = f->buf_cap = 0;
}

JITANON_API jitanon_result jitanon_atomic_commit(jitanon_atomic_file *f, int do_fsync, jitanon_error *err)
{
    jitanon_result res = JITANON_OK;
    if (f->fd < 0 || jitanon__af_flush(f))
        res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "a write to the temporary file failed");
    else if (do_fsync && f->tmp_path && fsync(f->fd)) res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "fsync failed");
    if (f->fd >= 0 && close(f->fd) && res == JITANON_OK) res = JITANON__FAIL(err, JITANON_ERR_WRITE, 0, "close failed");
    f->fd = -1;
    if (res == JITANON_OK && f->tmp_path && rename(f->tmp_path, f->path))
        res = JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot rename the temporary file to %s", f->path);
    if (res == JITANON_OK) { /* renamed: nothing left to unlink */
        jitanon__free(&f->allocator, f->tmp_path, f->tmp_cap_);
        f->tmp_path = NULL;
    }
    jitanon_atomic_abort(f);
    return res;
}
#else /* JITANON_NO_POSIX on a unix: the API stays, opening reports the missing feature. */
JITANON__PRIVATE int jitanon__af_refuse(void *file, const void *data, size_t size)
{
    (void)file;
    (void)data;
    (void)size;
    return 1;
}

JITANON_API jitanon_result jitanon_atomic_open(jitanon_atomic_file *f, const char *path,
                                               const jitanon_allocator *allocator, jitanon_error *err)
{
    JITANON_ASSERT(f && path);
    (void)path;
    (void)allocator;
    memset(f, 0, sizeof *f);
    f->fd = -1;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_POSIX: no file output");
}

JITANON_API jitanon_sink jitanon_atomic_sink(jitanon_atomic_file *f)
{
    jitanon_sink s;
    s.write_fn = jitanon__af_refuse;
    s.user = f;
    return s;
}

JITANON_API int jitanon_atomic_pwrite(void *file, const void *data, size_t size, uint64_t offset)
{
    (void)offset;
    return jitanon__af_refuse(file, data, size);
}

JITANON_API jitanon_result jitanon_atomic_commit(jitanon_atomic_file *f, int do_fsync, jitanon_error *err)
{
    (void)f;
    (void)do_fsync;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_POSIX: no file output");
}

JITANON_API void jitanon_atomic_abort(jitanon_atomic_file *f) { (void)f; }
#endif
#endif

/* -- jitdump file for a JIT: jit-<pid>.dump and its marker mmap -- */

JITANON_API jitanon_result jitanon_jitdump_file_open(jitanon_jitdump_file *f, const char *dir, uint32_t elf_mach,
                                                     jitanon_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
#if JITANON__POSIX
    {
        jitanon_result r;
        char path[4096];
        jitanon_jitdump_header h;
        jitanon_sink sink;
        long page = sysconf(_SC_PAGESIZE);
        size_t n;
        memset(&h, 0, sizeof h);
        h.elf_mach = elf_mach ? elf_mach : jitanon_jitdump_host_machine();
        h.pid = (uint32_t)getpid();
        h.timestamp = jitanon_jitdump_now();
        h.big_endian = jitanon__host_big_endian();
        n = jitanon__fmt(path, sizeof path, "%s/jit-%u.dump", dir ? dir : ".", (unsigned)h.pid);
        if (n >= sizeof path) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "directory name too long");
        f->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
        if (f->fd < 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot create %s", path);
        sink.write_fn = jitanon__os_fd_sink;
        sink.user = (void *)(intptr_t)f->fd;
        if ((r = jitanon_jitdump_writer_init(&f->writer, sink, &h, err)) != JITANON_OK) return r;
        /* perf record only reports executable mappings: map the dump R+X so its MMAP
           event names the file (the marker perf inject looks for). */
        f->marker_size = page > 0 ? (size_t)page : 4096;
        f->marker = mmap(NULL, f->marker_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, f->fd, 0);
        if (f->marker == MAP_FAILED) {
            f->marker = NULL;
            return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot map the marker page of %s", path);
        }
        return JITANON_OK;
    }
#else
    return (void)dir, (void)elf_mach, JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built without POSIX");
#endif
}

JITANON_API jitanon_result jitanon_jitdump_file_close(jitanon_jitdump_file *f, jitanon_error *err)
{
    jitanon_result r = JITANON_OK;
    jitanon__clear_error(err);
#if JITANON__POSIX
    if (f->fd >= 0 && f->writer.sink.write_fn) {
        jitanon_jitdump_record close;
        memset(&close, 0, sizeof close);
        close.id = JITANON_JITDUMP_CODE_CLOSE;
        close.timestamp = jitanon_jitdump_now();
        r = jitanon_jitdump_write(&f->writer, &close, err);
    }
    if (f->marker) munmap(f->marker, f->marker_size);
    if (f->fd >= 0 && close(f->fd) != 0 && r == JITANON_OK) r = JITANON__FAIL(err, JITANON_ERR_IO, 0, "close failed");
#endif
    f->marker = NULL;
    f->fd = -1;
    return r;
}

/* -- threads: jitanon_thread_pool's default -- */

#if JITANON__THREADS
/* The only calls into pthreads.  Tasks are taken in order, so every task below the lowest
   one still running (or below the next to take) has finished. */
typedef struct jitanon__tp jitanon__tp;
typedef struct jitanon__tp_worker {
    jitanon__tp *t;
    pthread_t th;
    size_t busy; /* the task it runs; SIZE_MAX: none */
} jitanon__tp_worker;

struct jitanon__tp {
    pthread_mutex_t mu;
    pthread_cond_t more, done; /* a task became runnable or stop was set; a task finished */
    void (*task)(void *ctx, size_t index);
    void *ctx;
    jitanon_allocator a;
    size_t take, queued;       /* the next task to take; tasks below queued may run */
    size_t wait_end;           /* the waiting caller wants every task below this */
    int waiting, stop;
    unsigned n;                /* workers running */
    jitanon__tp_worker w[64];
};

JITANON__PRIVATE size_t jitanon__tp_finished(const jitanon__tp *t)
{
    size_t lo = t->take;
    unsigned i;
    for (i = 0; i < t->n; i++)
        if (t->w[i].busy < lo) lo = t->w[i].busy;
    return lo;
}

JITANON__PRIVATE void *jitanon__tp_work(void *arg)
{
    jitanon__tp_worker *w = (jitanon__tp_worker *)arg;
    jitanon__tp *t = w->t;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->take == t->queued && !t->stop) pthread_cond_wait(&t->more, &t->mu);
        if (t->take == t->queued) break;
        w->busy = t->take++;
        pthread_mutex_unlock(&t->mu);
        t->task(t->ctx, w->busy);
        pthread_mutex_lock(&t->mu);
        w->busy = SIZE_MAX;
        /* the waiting caller is woken once per batch, not once per task (a wake-up per
           file cost more than a third of the time) */
        if (t->waiting && jitanon__tp_finished(t) >= t->wait_end) pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

JITANON__PRIVATE int jitanon__tp_start(void *user, unsigned workers, void (*task)(void *ctx, size_t index), void *ctx,
                                       const jitanon_allocator *allocator, void **pool)
{
    jitanon__tp *t = (jitanon__tp *)jitanon__malloc(allocator, sizeof *t);
    unsigned i;
    (void)user;
    *pool = NULL;
    if (!t) return 0;
    memset(t, 0, sizeof *t);
    if (allocator) t->a = *allocator;
    t->task = task;
    t->ctx = ctx;
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        jitanon__free(&t->a, t, sizeof *t);
        return 0;
    }
    if (pthread_cond_init(&t->more, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        jitanon__free(&t->a, t, sizeof *t);
        return 0;
    }
    if (pthread_cond_init(&t->done, NULL) != 0) {
        pthread_cond_destroy(&t->more);
        pthread_mutex_destroy(&t->mu);
        jitanon__free(&t->a, t, sizeof *t);
        return 0;
    }
    for (i = 0; i < 64; i++) {
        t->w[i].t = t;
        t->w[i].busy = SIZE_MAX;
    }
    if (workers > 64) workers = 64;
    pthread_mutex_lock(&t->mu);
    for (i = 0; i < workers; i++) {
        if (pthread_create(&t->w[i].th, NULL, jitanon__tp_work, &t->w[i]) != 0) break;
        t->n = i + 1; /* fewer workers than asked for still work */
    }
    pthread_mutex_unlock(&t->mu);
    if (t->n == 0) {
        pthread_cond_destroy(&t->done);
        pthread_cond_destroy(&t->more);
        pthread_mutex_destroy(&t->mu);
        jitanon__free(&t->a, t, sizeof *t);
        return 0;
    }
    *pool = t;
    return 1;
}

JITANON__PRIVATE void jitanon__tp_run(void *user, void *pool, size_t first, size_t count)
{
    jitanon__tp *t = (jitanon__tp *)pool;
    (void)user;
    pthread_mutex_lock(&t->mu);
    if (first + count > t->queued) t->queued = first + count;
    if (count == 1) pthread_cond_signal(&t->more);
    else pthread_cond_broadcast(&t->more);
    pthread_mutex_unlock(&t->mu);
}

JITANON__PRIVATE void jitanon__tp_wait(void *user, void *pool, size_t end)
{
    jitanon__tp *t = (jitanon__tp *)pool;
    (void)user;
    pthread_mutex_lock(&t->mu);
    while (jitanon__tp_finished(t) < end) {
        t->wait_end = end;
        t->waiting = 1;
        pthread_cond_wait(&t->done, &t->mu);
        t->waiting = 0;
    }
    pthread_mutex_unlock(&t->mu);
}

JITANON__PRIVATE void jitanon__tp_stop(void *user, void *pool)
{
    jitanon__tp *t = (jitanon__tp *)pool;
    unsigned i;
    (void)user;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_broadcast(&t->more);
    pthread_mutex_unlock(&t->mu);
    for (i = 0; i < t->n; i++) pthread_join(t->w[i].th, NULL);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->more);
    pthread_mutex_destroy(&t->mu);
    jitanon__free(&t->a, t, sizeof *t);
}
#endif

/* -- the injector's default I/O: the file system -- */

#if JITANON__POSIX
/* What a non-regular file is, for the message that refuses it. */
JITANON__PRIVATE const char *jitanon__os_not_regular(mode_t mode)
{
    if (S_ISFIFO(mode)) return "refused: a FIFO, not a regular file (reading it could block forever)";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "refused: a device node, not a regular file";
    if (S_ISDIR(mode)) return "refused: a directory";
    return "refused: not a regular file";
}

/* S_ISVTX is XSI, hidden under plain POSIX.1-2008; the sticky bit is 01000 everywhere. */
#ifdef S_ISVTX
#define JITANON__STICKY S_ISVTX
#else
#define JITANON__STICKY 01000
#endif

/* The kernel's protected_symlinks rule, for the symlink `link` (lstat) that `path` names:
   in a sticky world-writable directory (/tmp) it is followed only when its owner is the
   directory's owner or the caller, so another user cannot point a file a recording names
   at one of ours.  NULL when it may be followed, else why not. */
JITANON__PRIVATE const char *jitanon__os_symlink_refused(const char *path, const struct stat *link)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    struct stat ds;
    if (n >= sizeof dir) return "refused: path too long";
    if (!slash) memcpy(dir, ".", 2);
    else if (n == 0) memcpy(dir, "/", 2);
    else {
        memcpy(dir, path, n);
        dir[n] = 0;
    }
    if (stat(dir, &ds) != 0) return "refused: cannot stat its directory";
    if ((ds.st_mode & JITANON__STICKY) && (ds.st_mode & S_IWOTH) && link->st_uid != ds.st_uid && link->st_uid != geteuid())
        return "refused: a symlink in a sticky world-writable directory whose owner is neither the directory's "
               "owner nor us (protected_symlinks)";
    return NULL;
}

/* -- dumps inside another process's root (containers) --
   A process in another mount namespace wrote its dump into its own tree, which the host
   sees under /proc/PID/root.  That tree belongs to whoever runs the container: any name
   in it may be a symlink, and an absolute one resolves against the host's root when the
   kernel walks /proc/PID/root/... for us.  So a path "/proc/<pid>/root/<rest>" is never
   walked that way: <rest> is resolved inside the root (openat2 RESOLVE_IN_ROOT, symlinks
   and ".." stay in it), or, without openat2, component by component with every symlink
   and ".." refused.  What it names is first opened as O_PATH (no open of a FIFO or a
   device happens), checked to be a regular file, and only then opened for reading
   through that same descriptor, so nothing can be swapped in between. */

/* The length of "/proc/<digits>/root" when `path` starts with it and a '/', else 0. */
JITANON__PRIVATE size_t jitanon__os_proc_root_len(const char *path)
{
    size_t i = 6;
    if (strncmp(path, "/proc/", 6) != 0) return 0;
    while (path[i] >= '0' && path[i] <= '9') i++;
    if (i == 6 || i > 16 || strncmp(path + i, "/root/", 6) != 0) return 0;
    return i + 5;
}

/* The last check of every dump opened: the descriptor decides; only a regular file is
   kept (and its size), anything else closed. */
JITANON__PRIVATE int jitanon__os_keep_regular(int fd, uint64_t *size, const char **why)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = jitanon__os_not_regular(st.st_mode);
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

#if defined(JITANON__O_PATH)
/* The regular file behind the O_PATH descriptor `pfd` (closed here), opened for reading. */
JITANON__PRIVATE int jitanon__os_reopen_regular(int pfd, uint64_t *size, const char **why)
{
    struct stat st;
    char self[64];
    int fd;
    if (fstat(pfd, &st) != 0) {
        *why = "cannot stat it";
        close(pfd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = S_ISLNK(st.st_mode) ? "refused: a symlink inside a process's root (it is not followed)"
                                   : jitanon__os_not_regular(st.st_mode);
        close(pfd);
        return -1;
    }
    jitanon__fmt(self, sizeof self, "/proc/self/fd/%u", (unsigned)pfd);
    fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    close(pfd);
    if (fd < 0) {
        *why = "cannot open it";
        return -1;
    }
    return jitanon__os_keep_regular(fd, size, why);
}

/* Without openat2: `rest` below the directory `rfd`, one component at a time, refusing
   every symlink and every "..".  An O_PATH descriptor of the last one, or -1 with *why. */
JITANON__PRIVATE int jitanon__os_walk_in_root(int rfd, const char *rest, const char **why)
{
    char comp[256];
    int dfd = rfd, fd = -1;
    while (*rest) {
        size_t n = 0;
        while (*rest == '/') rest++;
        while (rest[n] && rest[n] != '/') n++;
        if (n == 0) break;
        if (n >= sizeof comp) {
            *why = "a name in the path is too long";
            break;
        }
        memcpy(comp, rest, n);
        comp[n] = 0;
        rest += n;
        while (*rest == '/') rest++;
        if (n == 2 && comp[0] == '.' && comp[1] == '.') {
            *why = "refused: \"..\" in a path inside a process's root";
            break;
        }
        if (n == 1 && comp[0] == '.') continue;
        if (!*rest) { /* the dump itself: a symlink is opened as itself and refused */
            fd = openat(dfd, comp, JITANON__O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) *why = errno == ENOENT ? "no such file inside the process's root" : "cannot open it";
            break;
        }
        fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd != rfd) close(dfd);
        dfd = fd;
        fd = -1;
        if (dfd < 0) {
            *why = errno == ENOENT ? "no such file inside the process's root"
                   : errno == ELOOP || errno == ENOTDIR
                       ? "refused: a symlink on the way inside a process's root (no openat2 here to resolve it "
                         "inside that root)"
                       : "cannot open a directory on the way";
            return -1;
        }
    }
    if (dfd != rfd) close(dfd);
    return fd;
}

/* Opens "/proc/<pid>/root<rest>" (root_len: jitanon__os_proc_root_len) inside that root;
   walk: skip openat2 (the tests use it to run the fallback). */
JITANON__PRIVATE int jitanon__os_open_in_root(const char *path, size_t root_len, int walk, uint64_t *size,
                                              const char **why)
{
    char root[32];
    const char *rest = path + root_len;
    int rfd, pfd = -1;
    memcpy(root, path, root_len);
    root[root_len] = 0;
    rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) {
        *why = errno == ENOENT ? "its process has exited (its root is gone)" : "cannot open the process's root";
        return -1;
    }
#if JITANON__OPENAT2
    if (!walk) {
        /* struct open_how: flags, mode, resolve; RESOLVE_NO_MAGICLINKS 0x02, RESOLVE_IN_ROOT 0x10 */
        uint64_t how[3];
        how[0] = (uint64_t)(unsigned)(JITANON__O_PATH | O_NOFOLLOW | O_CLOEXEC);
        how[1] = 0;
        how[2] = 0x02 | 0x10;
        do pfd = (int)syscall(SYS_openat2, rfd, rest, how, sizeof how);
        while (pfd < 0 && (errno == EINTR || errno == EAGAIN));
        if (pfd < 0 && errno != ENOSYS && errno != EPERM && errno != E2BIG && errno != EINVAL) {
            *why = errno == ENOENT ? "no such file inside the process's root" : "cannot open it inside the process's root";
            close(rfd);
            return -1;
        }
        if (pfd < 0) walk = 1; /* no openat2 here (old kernel, seccomp) */
    }
#else
    walk = 1;
#endif
    if (walk) pfd = jitanon__os_walk_in_root(rfd, rest, why);
    close(rfd);
    return pfd < 0 ? -1 : jitanon__os_reopen_regular(pfd, size, why);
}
#endif

/* Process `pid` as /proc shows it: 1 when it runs.  *nspid: its pid in its own (innermost)
   pid namespace (the last NSpid field, Linux 4.1; `pid` when there is none); *other_mnt:
   1 when its mount namespace is not ours (its files are then only under its root);
   *mnt_ino: that namespace's inode (0 when unknown). */
JITANON__PRIVATE int jitanon__os_proc_ns(uint32_t pid, uint32_t *nspid, int *other_mnt, uint64_t *mnt_ino)
{
    char path[64], buf[4096];
    const char *p;
    size_t got = 0;
    struct stat a, b;
    int fd;
    *nspid = pid;
    *other_mnt = 0;
    *mnt_ino = 0;
    jitanon__fmt(path, sizeof path, "/proc/%u/status", (unsigned)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return 0;
    for (;;) {
        ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
        if (got == sizeof buf - 1) break;
    }
    close(fd);
    buf[got] = 0;
    if ((p = strstr(buf, "\nNSpid:")) != NULL) {
        uint64_t v = 0;
        int digits = 0;
        for (p += 7; *p && *p != '\n'; p++) {
            if (*p >= '0' && *p <= '9') {
                if (!digits) v = 0;
                v = v * 10 + (uint64_t)(*p - '0');
                digits = v <= UINT32_MAX;
                if (!digits) break;
            } else if (digits) {
                *nspid = (uint32_t)v; /* one field done; the last one wins */
                digits = 0;
            }
        }
        if (digits) *nspid = (uint32_t)v;
    }
    jitanon__fmt(path, sizeof path, "/proc/%u/ns/mnt", (unsigned)pid);
    if (stat(path, &a) == 0) *mnt_ino = (uint64_t)a.st_ino;
    if (*mnt_ino && stat("/proc/self/ns/mnt", &b) == 0) *other_mnt = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
    return 1;
}

/* 1 when `path` is a directory (following symlinks: the host's own tree). */
JITANON__PRIVATE int jitanon__os_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

#if defined(__linux__)
/* The [vdso] line of /proc/self/maps: 1 with its start and end.  (A line longer than the
   buffer is read on to its end: only a line's start is parsed.) */
JITANON__PRIVATE int jitanon__os_vdso_maps(uintptr_t *start, uintptr_t *end)
{
    char line[512];
    int at_start = 1, found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    while (!found && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        int whole = len && line[len - 1] == '\n';
        if (at_start && whole && len >= 8 && !memcmp(line + len - 8, " [vdso]\n", 8)) {
            uintptr_t v[2] = {0, 0};
            const char *c = line;
            int k;
            for (k = 0; k < 2; k++, c++) {
                for (; (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'); c++)
                    v[k] = v[k] << 4 | (uintptr_t)(*c <= '9' ? *c - '0' : *c - 'a' + 10);
                if (*c != (k ? ' ' : '-')) break;
            }
            if (k == 2 && v[0] < v[1]) *start = v[0], *end = v[1], found = 1;
        }
        at_start = whole;
    }
    fclose(f);
    return found;
}

/* jitanon__os.self_vdso: the image at getauxval(AT_SYSINFO_EHDR) (else the [vdso]
   mapping's start), as long as its ELF says (its program and section headers, its
   PT_LOADs' bytes), never past the mapping when /proc/self/maps gives its end.  The
   kernel wrote these headers: they are read in place, in the host's byte order. */
JITANON__PRIVATE const void *jitanon__os_self_vdso(size_t *size)
{
    uintptr_t start = 0, end = 0, lim;
    const uint8_t *p;
    uint64_t phoff, shoff, n = 0, k;
    unsigned phent, phnum, shent, shnum, is64;
    int mapped = jitanon__os_vdso_maps(&start, &end);
#if defined(JITANON__AUXV) && defined(AT_SYSINFO_EHDR)
    uintptr_t aux = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (aux && (!mapped || aux != start)) start = aux, mapped = 0; /* (bounded by its ELF only) */
#endif
    *size = 0;
    if (!start) return NULL;
    p = (const uint8_t *)start;
    lim = mapped ? end - start : (uintptr_t)1 << 20;
    if (lim < 64 || memcmp(p, "\177ELF", 4) || (p[4] != 1 && p[4] != 2)) return NULL;
    is64 = p[4] == 2;
    {
        uint16_t h[6];
        uint32_t o32[2];
        memcpy(h, p + (is64 ? 54 : 42), sizeof h); /* phentsize, phnum, shentsize, shnum */
        if (is64) memcpy(&phoff, p + 32, 8), memcpy(&shoff, p + 40, 8);
        else memcpy(o32, p + 28, 8), phoff = o32[0], shoff = o32[1];
        phent = h[0], phnum = h[1], shent = h[2], shnum = h[3];
    }
    if (phoff > lim || (uint64_t)phent * phnum > lim - phoff || phent < (is64 ? 56u : 32u)) return NULL;
    n = phoff + (uint64_t)phent * phnum;
    if (shoff && shoff <= lim && (uint64_t)shent * shnum <= lim - shoff && shoff + (uint64_t)shent * shnum > n)
        n = shoff + (uint64_t)shent * shnum;
    for (k = 0; k < phnum; k++) {
        const uint8_t *ph = p + phoff + k * phent;
        uint32_t type;
        uint64_t off, filesz;
        memcpy(&type, ph, 4);
        if (is64) memcpy(&off, ph + 8, 8), memcpy(&filesz, ph + 32, 8);
        else {
            uint32_t v[2];
            memcpy(&v[0], ph + 4, 4), memcpy(&v[1], ph + 16, 4);
            off = v[0], filesz = v[1];
        }
        if (type == 1 && off <= lim && filesz <= lim - off && off + filesz > n) n = off + filesz; /* PT_LOAD */
    }
    *size = (size_t)n;
    return p;
}
#define JITANON__OS_SELF_VDSO jitanon__os_self_vdso
#endif

/* Opens a jitdump that a recording names.  A recording can name any path, so: never
   block (O_NONBLOCK: a FIFO; O_NOCTTY: a terminal), never open what is not a regular
   file (lstat/stat before, fstat after: the descriptor decides), and follow a symlink
   only as the kernel's protected_symlinks rule would.  A last component that was no
   symlink at lstat is opened with O_NOFOLLOW, so a symlink planted in between fails; one
   that was is checked, and in a sticky directory nobody but its owner (who passed the
   check) can replace it before the open.  Returns the fd, or -1 with *why. */
JITANON__PRIVATE int jitanon__os_open_dump(const char *path, uint64_t *size, const char **why)
{
    struct stat st;
    int fd, follow;
    size_t root_len = jitanon__os_proc_root_len(path);
    if (root_len) {
#if defined(JITANON__O_PATH)
        return jitanon__os_open_in_root(path, root_len, 0, size, why);
#else
        *why = "refused: a path inside another process's root, which this build cannot resolve safely";
        return -1;
#endif
    }
    if (lstat(path, &st) != 0) {
        *why = errno == ENOENT ? "no such file" : "cannot stat it";
        return -1;
    }
    follow = S_ISLNK(st.st_mode);
    if (follow && (*why = jitanon__os_symlink_refused(path, &st)) != NULL) return -1;
    if (follow && stat(path, &st) != 0) {
        *why = "a dangling symlink";
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = jitanon__os_not_regular(st.st_mode);
        return -1;
    }
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        *why = errno == ELOOP ? "refused: it became a symlink while being opened" : "cannot open it";
        return -1;
    }
    return jitanon__os_keep_regular(fd, size, why);
}

/* A jitanon_read_fn over a file descriptor carried in the user pointer's value. */
JITANON__PRIVATE size_t jitanon__os_fd_read(void *user, void *dst, size_t size)
{
    for (;;) {
        ssize_t n = read((int)(intptr_t)user, dst, size);
        if (n >= 0) return (size_t)n;
        if (errno != EINTR) return SIZE_MAX;
    }
}
#endif

#if JITANON__POSIX
JITANON__PRIVATE int jitanon__os_fd_close(void *user) { return close((int)(intptr_t)user) != 0; }

/* jitanon__os.seek: a symbol table near the end of a 100 MB file is not read through */
JITANON__PRIVATE int jitanon__os_fd_seek(jitanon_stream *s, uint64_t off)
{
    return s->read_fn == jitanon__os_fd_read && off <= (uint64_t)INT64_MAX &&
           lseek((int)(intptr_t)s->user, (off_t)off, SEEK_SET) == (off_t)off;
}
#endif

/* jitanon__os.open_named: a descriptor opened with the checks above, or (without POSIX) an
   ISO C stream. */
JITANON__PRIVATE jitanon_result jitanon__os_dump_open(const char *path, jitanon_stream *s, jitanon_error *err)
{
    memset(s, 0, sizeof *s);
#if JITANON__POSIX
    {
        const char *why = NULL;
        int fd = jitanon__os_open_dump(path, &s->size, &why);
        if (fd < 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "%s", why);
        s->read_fn = jitanon__os_fd_read;
        s->close_fn = jitanon__os_fd_close;
        s->user = (void *)(intptr_t)fd;
    }
#elif !defined(JITANON_NO_STDIO)
    {
        FILE *file = fopen(path, "rb");
        if (!file) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open it");
        s->read_fn = jitanon__os_file_read;
        s->close_fn = jitanon__os_file_close;
        s->user = file;
    }
#else
    (void)path;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built with JITANON_NO_STDIO");
#endif
    return JITANON_OK;
}

#if JITANON__POSIX
/* An existing file may be replaced only when it is a regular file that is itself a jitted
   stub: an ET_DYN ELF (as we and perf write them, or one cut short by a crash) of
   reasonable size.  Never a symlink, a directory, or anything else someone keeps there.
   Reads in pieces on the stack: writer threads call this, and allocate nothing.  A file
   of another size cannot be identical: its first piece (the ELF header) is all it needs. */
JITANON__PRIVATE int jitanon__inj_replaceable(const char *path, const void *data, size_t size, int *identical)
{
    struct stat st;
    uint8_t buf[4096];
    size_t off = 0, total;
    int fd, ok = 1, same;
    *identical = 0;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    if (!S_ISREG(st.st_mode) || st.st_size < 18 || st.st_size > (off_t)(64 << 20)) return 0;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    total = (size_t)st.st_size;
    same = data && total == size;
    if (!same && total > sizeof buf) total = sizeof buf;
    while (ok && off < total) {
        size_t want = total - off < sizeof buf ? total - off : sizeof buf, got = 0;
        while (got < want) {
            ssize_t n = read(fd, buf + got, want - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        if (got < want) ok = 0;
        else if (off == 0) ok = !memcmp(buf, "\177ELF", 4) && jitanon__rd16(buf + 16, buf[5] == 2) == 3; /* ET_DYN */
        if (ok && same && memcmp(buf, (const uint8_t *)data + off, want) != 0) same = 0;
        off += want;
    }
    close(fd);
    *identical = ok && same;
    return ok;
}
#endif

/* The common case creates the file under its name at once (as perf does: three calls).
   Only when a file is in the way does it check that file and replace it atomically. */
JITANON__PRIVATE int jitanon__inj_write_default(void *user, const char *dir, const char *name, const void *data,
                                                size_t size)
{
#if JITANON__POSIX
    char path[4096], tmp[4200];
    int fd, identical;
    (void)user;
    if (jitanon__fmt(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return 1;
    fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        int bad = jitanon__os_write_all(fd, data, size) != 0;
        if (close(fd) != 0 || bad) {
            unlink(path);
            return 1;
        }
        return 0;
    }
    if (errno != EEXIST || !jitanon__inj_replaceable(path, data, size, &identical)) return 1;
    if (identical) return 0; /* deterministic output: the same file is already there */
    fd = jitanon__os_create_tmp(tmp, sizeof tmp, path);
    if (fd < 0) return 1;
    {
        int bad = jitanon__os_write_all(fd, data, size) != 0;
        if (close(fd) != 0 || bad || rename(tmp, path) != 0) {
            unlink(tmp);
            return 1;
        }
    }
    return 0;
#else
    return (void)user, (void)dir, (void)name, (void)data, (void)size, 1;
#endif
}

#if JITANON__POSIX
/* jitanon__os.write_atomic */
JITANON__PRIVATE jitanon_result jitanon__os_write_atomic(const char *path, const jitanon_allocator *a,
                                                         jitanon_result (*fill)(void *ctx, jitanon_sink sink), void *ctx)
{
    jitanon_atomic_file f;
    jitanon_error e;
    jitanon_result res;
    int identical;
    if (!jitanon__inj_replaceable(path, NULL, 0, &identical) || jitanon_atomic_open(&f, path, a, &e) != JITANON_OK)
        return JITANON_ERR_WRITE;
    res = fill(ctx, jitanon_atomic_sink(&f));
    if (res == JITANON_OK && jitanon_atomic_commit(&f, 0, &e) != JITANON_OK) res = JITANON_ERR_WRITE;
    jitanon_atomic_abort(&f);
    return res;
}
#endif

/* -- the build-id cache: perf's directory layout (see jitanon_buildid_cache) -- */

#if JITANON__POSIX
#define JITANON__BC 1
/* Opens directory `name` inside `at`, creating it when missing; never through a symlink
   (O_NOFOLLOW: a planted one fails with ELOOP or ENOTDIR).  *fresh in: `at` was just
   created, so `name` is not there yet (mkdir first, one call fewer); out: `name` was
   created now.  -1 with errno set. */
JITANON__PRIVATE int jitanon__bc_subdir(int at, const char *name, int *fresh)
{
    int fd = -1;
    if (!*fresh && ((fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 || errno != ENOENT))
        return fd;
    *fresh = mkdirat(at, name, 0755) == 0;
    if (!*fresh && errno != EEXIST) return -1;
    return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Walks (creating) the relative path `rel` below `root` one component at a time, so that
   every step is checked by jitanon__bc_subdir; "." and ".." are refused, so the walk
   cannot leave the cache.  Returns the last directory's fd, or -1. */
JITANON__PRIVATE int jitanon__bc_walk(int root, const char *rel)
{
    char part[256];
    int fd = root, fresh = 0;
    while (*rel) {
        size_t n = strcspn(rel, "/");
        int next;
        if (n >= sizeof part || (n == 1 && rel[0] == '.') || (n == 2 && rel[0] == '.' && rel[1] == '.')) {
            if (fd != root) close(fd);
            errno = n >= sizeof part ? ENAMETOOLONG : EINVAL;
            return -1;
        }
        if (n) {
            memcpy(part, rel, n);
            part[n] = 0;
            next = jitanon__bc_subdir(fd, part, &fresh);
            if (fd != root) close(fd);
            if (next < 0) return -1;
            fd = next;
        }
        rel += n + (rel[n] == '/');
    }
    return fd == root ? dup(root) : fd;
}

/* "elf" in directory d as a copy: of `data` when given, else of the file at src (never
   through a symlink), into a temporary name renamed into place.  0 or -1. */
JITANON__PRIVATE int jitanon__bc_copy(int d, const char *src, const void *data, size_t size)
{
    char tmp[64], buf[16384];
    int out = jitanon__os_create_tmp_at(d, tmp, sizeof tmp, "elf"), in = -1, bad = out < 0;
    if (!bad && data) bad = jitanon__os_write_all(out, data, size) != 0;
    else if (!bad) {
        ssize_t n;
        in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        bad = in < 0;
        while (!bad && ((n = read(in, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
            if (n > 0) bad = jitanon__os_write_all(out, buf, (size_t)n) != 0;
        if (!bad && n < 0) bad = 1;
        if (in >= 0) close(in);
    }
    if (out >= 0 && (close(out) != 0 || bad || renameat(d, tmp, d, "elf") != 0)) {
        unlinkat(d, tmp, 0);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* .build-id/<xx> for build-id `id` open in b->xx (jitanon__os.bc_ready), once per xx:
   called by the thread that prepared b, before it queues a file of that build-id. */
JITANON__PRIVATE void jitanon__bc_ready(jitanon__bc_dir *b, const uint8_t *id)
{
    char hex[41];
    int fresh = 0, fd;
    if (b->ids < 0 || b->xx[id[0]]) return;
    jitanon__bc_hex(id, hex);
    hex[2] = 0;
    fd = jitanon__bc_subdir(b->ids, hex, &fresh);
    b->xx[id[0]] = fd >= 0 ? fd + 1 : -1; /* not kept (out of fds, a planted link): each file tries */
}

/* Adds dir/name (build-id `id`; its bytes `data` when the caller has them) to the cache:
   <cache>/<real>/<name>/<hex>/elf as a hard link (a copy across file systems), then the
   .build-id/<xx>/<rest> symlink.  An entry already there is kept: build-ids are hashes
   of the contents.  Allocates nothing, writes nothing in b (writer threads call it).
   0 added, 1 already there, -1 failed (errno set).
   A new entry in a directory only we can change (b->owned) is made by relative paths
   (mkdir name, mkdir name/hex, link name/hex/elf): a name we have just created there is
   ours and cannot be swapped for a symlink; anything else is walked a component at a
   time without following symlinks.  With bc_ready's directory that is 5 system calls. */
JITANON__PRIVATE int jitanon__bc_put(const jitanon__bc_dir *b, const char *name, const void *data, size_t size,
                                    const uint8_t *id)
{
    char hex[41], rel[400], elf[404], src[4500], target[4600], got[4600], xx[3];
    const char *leaf = "elf";
    struct stat st;
    int d = -1, at, x, fresh = 0, rc = 0;
    jitanon__bc_hex(id, hex);
    if (jitanon__fmt(rel, sizeof rel, "%s/%s", name, hex) >= sizeof rel ||
        jitanon__fmt(elf, sizeof elf, "%s/elf", rel) >= sizeof elf ||
        jitanon__fmt(src, sizeof src, "%s/%s", b->dir, name) >= sizeof src ||
        jitanon__fmt(target, sizeof target, "../..%s/%s", b->real[1] ? b->real : "", rel) >= sizeof target) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (b->owned && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") && mkdirat(b->base, name, 0755) == 0) {
        if (mkdirat(b->base, rel, 0755) != 0) return -1;
        at = b->base;
        leaf = elf;
    } else if ((at = d = jitanon__bc_walk(b->base, rel)) < 0) {
        return -1;
    }
    if (linkat(AT_FDCWD, src, at, leaf, 0) != 0) {
        if (errno == EEXIST) rc = 1;
        else if (d < 0 && (d = jitanon__bc_walk(b->base, rel)) < 0) rc = -1;
        else {
            at = d;
            leaf = "elf";
            rc = jitanon__bc_copy(d, src, data, size);
        }
    }
    /* A link of a file swapped for a symlink since it was written, or something planted
       under the name, is no cached ELF. */
    if (rc >= 0 && (fstatat(at, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))) {
        if (rc == 0) unlinkat(at, leaf, 0);
        errno = EEXIST;
        rc = -1;
    }
    if (d >= 0) close(d);
    if (rc < 0) return -1;
    xx[0] = hex[0];
    xx[1] = hex[1];
    xx[2] = 0;
    if ((x = b->xx[id[0]] - 1) < 0 && (x = jitanon__bc_subdir(b->ids, xx, &fresh)) < 0) return -1; /* not kept open */
    if (symlinkat(target, x, hex + 2) != 0) {
        ssize_t n = errno == EEXIST ? readlinkat(x, hex + 2, got, sizeof got - 1) : -1;
        /* A link to another path of the same build-id names the same bytes: kept.  What
           is not a link stays too, but the file is not reachable by build-id. */
        if (n < 0) rc = -1;
    }
    if (b->xx[id[0]] <= 0) close(x);
    return rc;
}

JITANON__PRIVATE void jitanon__bc_close(jitanon__bc_dir *b)
{
    size_t k;
    if (b->base >= 0) close(b->base);
    if (b->ids >= 0) close(b->ids);
    for (k = 0; k < 256; k++) {
        if (b->xx[k] > 0) close(b->xx[k] - 1);
        b->xx[k] = 0;
    }
    b->base = b->ids = b->root = -1;
    b->owned = 0;
}

/* Prepares `b` for the ELF directory `dir` (a prepared `b` is closed first; a fresh one
   is all zero but for root, base and ids at -1): the cache
   mirrors its absolute path (relative to the working directory), with ".", ".." and
   repeated slashes resolved by name, so no component can climb out of the cache
   (realpath(3) would also resolve symlinks, but it is not in base POSIX; perf finds a
   file by its .build-id link either way).  The two directories every file of `dir` goes
   below are opened once, here.  0, or -1 (errno set). */
JITANON__PRIVATE int jitanon__bc_prepare(jitanon__bc_dir *b, int root, const char *dir)
{
    char abs[4096 * 2 + 2];
    size_t n = 0, i = 0;
    struct stat st;
    int fresh = 0;
    jitanon__bc_close(b);
    b->dir = dir;
    if (dir[0] != '/') {
        if (!getcwd(abs, 4096)) return -1;
        i = strlen(abs);
        abs[i++] = '/';
    }
    if (strlen(dir) >= 4096) return -1;
    memcpy(abs + i, dir, strlen(dir) + 1);
    for (i = 0; abs[i];) { /* components of abs into b->real */
        size_t k = strcspn(abs + i, "/");
        if (k == 2 && abs[i] == '.' && abs[i + 1] == '.') {
            while (n > 0 && b->real[--n] != '/') continue;
        } else if (k && !(k == 1 && abs[i] == '.')) {
            if (n + 1 + k >= sizeof b->real) return -1;
            b->real[n++] = '/';
            memcpy(b->real + n, abs + i, k);
            n += k;
        }
        i += k + (abs[i + k] == '/');
    }
    if (n == 0) b->real[n++] = '/';
    b->real[n] = 0;
    if ((b->base = jitanon__bc_walk(root, b->real + 1)) < 0 || (b->ids = jitanon__bc_subdir(root, ".build-id", &fresh)) < 0) {
        int e = errno;
        jitanon__bc_close(b);
        errno = e;
        return -1;
    }
    b->owned = fstat(b->base, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
    b->root = root;
    return 0;
}

/* Config names are case-insensitive (ASCII). */
JITANON__PRIVATE int jitanon__bc_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a, y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

/* `buildid.dir` from one perf config file (git-style: [section], key = value, # and ;
   comments, "quoted" values); 1 when found (the last one wins). */
JITANON__PRIVATE int jitanon__bc_config(const char *path, char *out, size_t cap)
{
    char line[4200], section[64];
    int found = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    section[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line, *key, *val, *end;
        int quoted = 0;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '[') {
            size_t n = strcspn(p + 1, "] \t\"");
            if (n >= sizeof section) n = sizeof section - 1;
            memcpy(section, p + 1, n);
            section[n] = 0;
            continue;
        }
        key = p;
        while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n') p++;
        end = p;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '=') continue;
        *end = 0;
        val = ++p;
        while (*val == ' ' || *val == '\t') val++;
        for (p = val, end = val; *p && *p != '\n' && *p != '\r'; p++) {
            if (*p == '"') quoted = !quoted;
            else if (!quoted && (*p == '#' || *p == ';')) break;
            else *end++ = *p;
        }
        while (end > val && (end[-1] == ' ' || end[-1] == '\t')) end--;
        *end = 0;
        if (jitanon__bc_ieq(section, "buildid") && jitanon__bc_ieq(key, "dir") && *val &&
            strlen(val) < cap) {
            memcpy(out, val, strlen(val) + 1);
            found = 1;
        }
    }
    fclose(f);
    return found;
}
#else
#define JITANON__BC 0
#endif

JITANON_API jitanon_result jitanon_buildid_cache_dir(char *out, size_t cap, jitanon_error *err)
{
#if JITANON__BC
    const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME"), *conf = getenv("PERF_CONFIG");
    char path[4200];
    JITANON_ASSERT(out && cap);
    out[0] = 0;
    if (env && *env) {
        if (strlen(env) >= cap) return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "PERF_BUILDID_DIR is too long");
        memcpy(out, env, strlen(env) + 1);
        return JITANON_OK;
    }
    if (conf) { /* perf reads this file alone */
        if (*conf && jitanon__bc_config(conf, out, cap)) return JITANON_OK;
    } else {
        int found = jitanon__bc_config("/etc/perfconfig", out, cap);
        if (home && *home && jitanon__fmt(path, sizeof path, "%s/.perfconfig", home) < sizeof path)
            found |= jitanon__bc_config(path, out, cap);
        if (found) return JITANON_OK;
    }
    if (!home || !*home) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "HOME is not set: no build-id cache");
    if (jitanon__fmt(out, cap, "%s/.debug", home) >= cap)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "the build-id cache path is too long");
    return JITANON_OK;
#else
    return (void)out, (void)cap, JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built without POSIX: no build-id cache");
#endif
}

JITANON_API jitanon_result jitanon_buildid_cache_open(jitanon_buildid_cache *c, const char *dir, jitanon_error *err)
{
    JITANON_ASSERT(c);
    memset(c, 0, sizeof *c);
    c->fd_ = -1;
#if JITANON__BC
    {
        jitanon_result res = JITANON_OK;
        size_t i, n;
        if (dir) {
            if (strlen(dir) >= sizeof c->dir) return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "cache path too long");
            memcpy(c->dir, dir, strlen(dir) + 1);
        } else if ((res = jitanon_buildid_cache_dir(c->dir, sizeof c->dir, err)) != JITANON_OK) {
            return res;
        }
        /* The cache directory itself is the user's choice (~/.debug may be a symlink):
           its path is followed; only what is below it is not. */
        n = strlen(c->dir);
        for (i = 1; i <= n; i++)
            if (c->dir[i] == '/' || c->dir[i] == 0) {
                char save = c->dir[i];
                c->dir[i] = 0;
                (void)mkdir(c->dir, 0755);
                c->dir[i] = save;
            }
        c->fd_ = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->fd_ < 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open the build-id cache %s", c->dir);
        return JITANON_OK;
    }
#else
    (void)dir;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built without POSIX: no build-id cache");
#endif
}

JITANON_API jitanon_result jitanon_buildid_cache_add(jitanon_buildid_cache *c, const char *path,
                                                     const uint8_t build_id[20], jitanon_error *err)
{
#if JITANON__BC
    jitanon__bc_dir b;
    char dir[4096];
    const char *slash, *name;
    size_t n;
    int bad;
    JITANON_ASSERT(c && path && build_id);
    slash = strrchr(path, '/');
    name = slash ? slash + 1 : path;
    n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (c->fd_ < 0) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "the build-id cache is not open");
    if (!*name || n >= sizeof dir) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "bad file path %s", path);
    memcpy(dir, slash ? path : ".", n);
    dir[n] = 0;
    memset(&b, 0, sizeof b);
    b.base = b.ids = -1;
    bad = jitanon__bc_prepare(&b, c->fd_, dir) != 0 || jitanon__bc_put(&b, name, NULL, 0, build_id) < 0;
    jitanon__bc_close(&b);
    if (bad) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot add %s to the build-id cache %s", path, c->dir);
    return JITANON_OK;
#else
    return (void)c, (void)path, (void)build_id, JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built without POSIX: no build-id cache");
#endif
}

JITANON_API void jitanon_buildid_cache_release(jitanon_buildid_cache *c)
{
    if (!c) return;
#if JITANON__BC
    if (c->fd_ >= 0) close(c->fd_);
#endif
    c->fd_ = -1;
}

/* -- the platform as the core sees it (jitanon__os) -- */

#if !JITANON__POSIX
JITANON__PRIVATE jitanon_result jitanon__os_never(const char *path, const jitanon_allocator *a,
                                                  jitanon_result (*fill)(void *ctx, jitanon_sink sink), void *ctx)
{
    (void)path, (void)a, (void)fill, (void)ctx;
    return JITANON_ERR_WRITE;
}

JITANON__PRIVATE int jitanon__os_no_dir(const char *path) { return (void)path, 0; }
JITANON__PRIVATE int jitanon__bc_none(jitanon__bc_dir *b, int root, const char *dir) { return (void)b, (void)root, (void)dir, -1; }
JITANON__PRIVATE void jitanon__bc_none_ready(jitanon__bc_dir *b, const uint8_t *id) { (void)b, (void)id; }
JITANON__PRIVATE int jitanon__bc_none_put(const jitanon__bc_dir *b, const char *name, const void *data, size_t size,
                                          const uint8_t *id)
{
    (void)b, (void)name, (void)data, (void)size, (void)id;
    return -1;
}

JITANON__PRIVATE void jitanon__bc_none_close(jitanon__bc_dir *b) { (void)b; }
#endif

JITANON__PRIVATE const jitanon__os *jitanon__os_default(void)
{
#if JITANON__THREADS
    static const jitanon_thread_pool threads = {jitanon__tp_start, jitanon__tp_run, jitanon__tp_wait, jitanon__tp_stop,
                                                NULL};
#define JITANON__OS_THREADS &threads
#else
#define JITANON__OS_THREADS NULL
#endif
#ifndef JITANON__OS_SELF_VDSO
#define JITANON__OS_SELF_VDSO NULL
#endif
#if JITANON__POSIX && defined(__linux__)
#define JITANON__OS_PROC_NS jitanon__os_proc_ns
#else
#define JITANON__OS_PROC_NS NULL
#endif
#if JITANON__POSIX
    static const jitanon__os os = {jitanon__os_dump_open, jitanon__inj_write_default, jitanon__os_write_atomic,
                                   jitanon__os_sleep_ns, JITANON__OS_PROC_NS, jitanon__os_is_dir, jitanon__bc_prepare,
                                   jitanon__bc_ready, jitanon__bc_put, jitanon__bc_close, JITANON__OS_THREADS,
                                   jitanon__os_stdin_read, jitanon__os_fd_seek, JITANON__OS_SELF_VDSO};
#else
    static const jitanon__os os = {jitanon__os_dump_open, jitanon__inj_write_default, jitanon__os_never,
                                   jitanon__os_sleep_ns, JITANON__OS_PROC_NS, jitanon__os_no_dir, jitanon__bc_none,
                                   jitanon__bc_none_ready, jitanon__bc_none_put, jitanon__bc_none_close,
                                   JITANON__OS_THREADS, NULL, NULL, NULL};
#endif
#undef JITANON__OS_THREADS
#undef JITANON__OS_SELF_VDSO
#undef JITANON__OS_PROC_NS
    return &os;
}

#endif /* JITANON_IMPLEMENTATION_INCLUDED */
#endif /* JITANON_IMPLEMENTATION */

/* == Older names ========================================================================
   Define JITANON_COMPAT_0_1 (0.1 names) or JITANON_COMPAT_0_2 (the V8-only names of the
   line bias; _0_1 keeps them too) to keep code written for those releases compiling while
   it moves to the new names (renames only; the revision history below lists the signature
   changes).  Types are typedefs, functions inline wrappers, constants enum constants or
   value macros (as the new ones are): no macro renames an identifier of the including
   program.  The field jitanon_elf_opts.v8_bias has no such form: write line_bias. */
#if (defined(JITANON_COMPAT_0_1) || defined(JITANON_COMPAT_0_2)) && \
    !defined(JITANON_COMPAT_INCLUDED)
#define JITANON_COMPAT_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif
#ifdef JITANON_COMPAT_0_1
typedef jitanon_jitdump_record_id jitanon_jit_record_id;
typedef jitanon_jitdump_record jitanon_jit_record;
typedef jitanon_jitdump_debug_entry jitanon_jit_debug_entry;
typedef jitanon_jitdump_debug_iter jitanon_jit_debug_iter;
typedef jitanon_inject_sample jitanon_sample_info;
enum jitanon__compat_0_1 {
    JITANON_JIT_CODE_LOAD = JITANON_JITDUMP_CODE_LOAD,
    JITANON_JIT_CODE_MOVE = JITANON_JITDUMP_CODE_MOVE,
    JITANON_JIT_CODE_DEBUG_INFO = JITANON_JITDUMP_CODE_DEBUG_INFO,
    JITANON_JIT_CODE_CLOSE = JITANON_JITDUMP_CODE_CLOSE,
    JITANON_JIT_CODE_UNWINDING_INFO = JITANON_JITDUMP_CODE_UNWINDING_INFO,
    JITANON_JIT_CODE_MAX = JITANON_JITDUMP_CODE_MAX,
    JITANON_JIT_WARN_VERSION2 = JITANON_JITDUMP_WARN_VERSION2,
    JITANON_JIT_WARN_HEADER_EXTRA = JITANON_JITDUMP_WARN_HEADER_EXTRA,
    JITANON_JIT_WARN_UNKNOWN_RECORD = JITANON_JITDUMP_WARN_UNKNOWN_RECORD
};
static inline const char *jitanon_jit_record_name(uint32_t id)
{
    return jitanon_jitdump_record_name(id);
}
static inline int jitanon_jit_debug_next(jitanon_jitdump_debug_iter *it,
                                         jitanon_jitdump_debug_entry *out)
{
    return jitanon_jitdump_debug_iter_next(it, out);
}
static inline uint64_t jitanon_jit_now(void) { return jitanon_jitdump_now(); }
static inline jitanon_result jitanon_jitdump_iter_init(jitanon_jitdump_iter *it, const void *data,
                                                       size_t size, const jitanon_jitdump_opts *o,
                                                       jitanon_error *err)
{
    return jitanon_jitdump_iter_begin(it, data, size, o, err);
}
static inline void jitanon_rangemap_iter_all(jitanon_rangemap_iter *it, const jitanon_rangemap *m)
{
    jitanon_rangemap_iter_begin_all(it, m);
}
static inline void jitanon_membuf_free(jitanon_membuf *b) { jitanon_membuf_release(b); }
static inline void jitanon_jitdump_stream_free(jitanon_jitdump_stream *s)
{
    jitanon_jitdump_stream_release(s);
}
static inline void jitanon_jitdump_free(jitanon_jitdump *dump) { jitanon_jitdump_destroy(dump); }
static inline void jitanon_perf_reader_free(jitanon_perf_reader *r)
{
    jitanon_perf_reader_release(r);
}
static inline void jitanon_perf_writer_free(jitanon_perf_writer *w)
{
    jitanon_perf_writer_release(w);
}
static inline void jitanon_rangemap_free(jitanon_rangemap *m) { jitanon_rangemap_release(m); }
static inline void jitanon_trim_free(jitanon_trim *t) { jitanon_trim_destroy(t); }
static inline void jitanon_elf_builder_free(jitanon_elf_builder *b)
{
    jitanon_elf_builder_release(b);
}
static inline int jitanon_is_jitdump_marker(const char *path, size_t len, uint32_t *pid)
{
    return jitanon_jitdump_is_marker(path, len, pid);
}
#endif /* JITANON_COMPAT_0_1 */
typedef jitanon_elf_line_bias jitanon_elf_v8_bias;
enum jitanon__compat_0_2 { JITANON_ELF_NOTE_V8_BIAS = JITANON_ELF_NOTE_LINE_BIAS };
#define JITANON_ELF_V8_BIAS_AUTO JITANON_ELF_LINE_BIAS_AUTO /* values, as the new names are */
#define JITANON_ELF_V8_BIAS_ON JITANON_ELF_LINE_BIAS_PERF
#define JITANON_ELF_V8_BIAS_OFF JITANON_ELF_LINE_BIAS_NONE
#ifdef __cplusplus
}
#endif
#endif /* JITANON_COMPAT_0_1 || JITANON_COMPAT_0_2 */

/* == Revision history ===================================================================

       0.5.0  Layering: a public API the tools live on, the platform behind one seam.
              Output bytes are unchanged (the same files, the same perf.data); the
              injector's record path costs ~44% fewer instructions per record (samples
              of a one-attr recording decoded on a short path, runs of unchanged records
              written with one call), and a sample's lookup misses the cache less.
              Added:
                jitanon_stream, jitanon_thread_pool, jitanon_inject_io.thread_pool (NULL:
                  pthreads); every OS call in one [posix] section behind one table
                jitanon_perf_encode, jitanon_perf_encode_attr; jitanon_perf_record.lost
                jitanon_jitdump_func_iter_begin/_next/_release, jitanon_jitdump_func,
                  JITANON_JITDUMP_DEBUG_WAITING, jitanon_elf_func_of
                jitanon_inject_opts.on_event, sample_user; jitanon_inject_sample.rec,
                  cpumode, pgoff, dump; JITANON_PERF_CONTEXT_*; kernel and module
                  addresses resolve to their mapping (were NONE)
                jitanon_perf_opts.memory_limit; jitanon_error.source
                jitanon_inject_opts.hold_bytes, follow_idle_ms (JITANON_HOLD_*,
                  JITANON_FOLLOW_IDLE_DEFAULT_MS), stats.hold, stats.unnamed: a live
                  pipe holds back samples its dump has not reached (issue #37); with
                  --call-graph dwarf also by the words of the copied user stack and
                  registers, in decided or held anonymous code memory (CPython 3.13's
                  -X perf_jit: 0.8% -> 98% named live)
                jitanon_frame, jitanon_inject_frame_at, jitanon_inject_frame_iter_begin/
                  _next: a sample's frames as perf script shows them (#34); sample.comm
                  (opts.sample_fields); jitanon_inject_io.find_process with
                  jitanon_inject_find_process_proc; jitanon_inject_opts_init;
                  JITANON_FRAME_WANT_UNWIND (in _ALL, now 15) with io.read_file: a
                  --call-graph dwarf sample's user frames unwound from its registers and
                  stack copy with the files' and the dumps' DWARF CFI ([unwind]); a JIT
                  frame's line from an index built once per function
                JITANON_FRAME_WANT_SYMBOL (in _ALL, now 31; issue #44): native and
                  kernel frames named as perf 6.1 names them ([symbols]: .symtab or
                  .dynsym, PLT slots, aliases, nested symbols through perf's tree,
                  debuglink, build-id cache, /usr/lib/debug, kallsyms by build-id);
                  jitanon_inject_opts.demangle
                JITANON_ELF_PER_REGION (--elf=region, issue #32): a file per run of a
                  process's code, offsets mirroring addresses, each function's MMAP2
                  framed by its file's base (stats.write.region_bases);
                  jitanon_elf_func.file_offset places a function at a given offset
                jitanon_perf_opts.follow: a file perf record is still writing, read as
                  it grows (JITANON_AGAIN; the size perf writes at the end ends it), for
                  a tool that tails its recording (jitanon-record, issue #36)
              Changed:
                an embedder's own io.load_dump/open_dump no longer has /proc read (set
                  io.find_process); resolving only, an exec keeps the old maps, as perf
                jitanon_inject_stats nested by stage: records_in -> read.records, samples
                  -> read.samples, rounds -> read.rounds, input_warnings ->
                  read.warnings, markers -> dumps.markers, dumps_loaded -> dumps.loaded,
                  dumps_namespace -> dumps.in_namespace, late_loads -> late.loads, loads
                  -> trim.loads, anon_kept -> trim.kept (stats.trim is a
                  jitanon_trim_stats), perf_maps -> perf_map.maps, elf_files ->
                  elf.files, buildid_entries -> buildid.entries, records_out ->
                  write.records, dumps_followed -> follow.dumps, ... (doc/upgrading.md: "Coming
                  from 0.4")
                private: jitanon_perf_reader.state_ (its internal fields), the test knobs
                  jitanon_trim_opts.reject_out_of_order_, jitanon_inject_opts.
                  max_round_bytes_, jitanon_jitdump_opts.no_records_
                JITANON_COMPAT_0_1/_0_2 no longer rename the field v8_bias (write
                  line_bias); the compat layers and this history moved to the end
                jitanon_jitdump_opts.memory_limit counts all the loader holds (the copy,
                  the dump, the record table); errors without an offset no longer say
                  "at byte 0"; recorded perf.data damage is one message, reported
                  through the reader only (jitanon_inject_file logs it once)
                a dump missing after its process exited: the message says moved,
                  deleted or a container, and --jitdump-dir (no library field name)
                arm64 (issue #35): jitanon_jitdump_host_machine(), and elf_mach 0 in
                  jitanon_jitdump_file_open writes it; stubs for arm64, ppc64 and
                  LoongArch have a 64 KiB-aligned PT_LOAD (was 4 KiB); the sampled-files
                  scan also looks up stack and register words without bits 48 and up
                  (arm64's pac-ret return addresses)
              Issue #33 (inputs as runtimes write them):
                jitanon_elf_line_bias_scan pairs a DEBUG_INFO with its LOAD as the
                  injector does (code address first): LLVM ORC JITLink's +0x40 is found in
                  functions shorter than it; its fields pend_min, pend_max, pending gave
                  way to private ones (JITANON_ELF_LINE_BIAS_WAITING)
                jitanon_inject_stats.dumps.stopped, samples_after_end: samples in a
                  process's //anon memory after its dump's last record that nothing
                  named; io.log says once a dump when its JIT stopped describing its code
                jitanon_perfmap_stats.skipped (form, no_name, nul, range): why lines were
                  skipped; Node 24's RegExp names holding newlines cost only their rest
                a dump flagged JITDUMP_FLAGS_ARCH_TIMESTAMP whose header time is
                  CLOCK_MONOTONIC (nearer its marker than read as TSC) is read as such
                  and said (stats.dumps.clock_fixed); perf refuses it
                jitanon_trim_classify: "/dev/zero" (shared anonymous memory, PHP's JIT
                  buffer) is trimmable as //anon, and names from a perf map as in perf
              Issue #42:
                perf map lines that share addresses (a trampoline under two names, code
                  replaced in place) resolve to what perf 6.1 names with the map (its
                  tree's answer, measured: of two at one START the first listed, of
                  three the middle; none where its lookup passes a line by), was the
                  later line; jitanon_perfmap_stats.overlapping counts the lines not
                  named over all their addresses
       0.4.0  Where users run it: live pipes, containers, the runtimes of today, profiles
              that leave the machine.  Output changes: per-function file output writes only
              the ELF files a sample, callchain, branch, data address or copied user-stack
              word can reach (JITANON_ELF_FILES_AUTO, the new default; ALL writes every one);
              a pipe output carries the file's event names (EVENT_UPDATE NAME records); a
              load dated early is mapped again at its own time when a non-trimmable mapping
              (Deno's remapped builtins) lands over it; DEBUG_INFO pairs with its LOAD by
              code address (LLVM JITLink writes a batch's debug records first); a dump
              header's e_machine 0 becomes the recording's (CPython 3.13).
              Added:
                live pipes: dumps followed as they grow; jitanon_inject_io.open_dump,
                  close_dump; jitanon_inject_opts.follow_wait_us (JITANON_FOLLOW_WAIT_*);
                  jitanon_inject_stats.dumps_followed, follow_reads, follow_wait_ns
                containers: a dump read through /proc/PID/root (resolved inside it), its
                  namespace pid accepted; stats.dumps_namespace; markers jit-<tid>-<pid>.dump
                  and JSC's jit-<tid>-<pid>-XXXXXX; a dump whose header pid is not the
                  process's is refused
                perf maps: the [perfmap] reader (jitanon_perfmap_*), opts.perf_map
                  (JITANON_PERF_MAP_ELF: a symbols-only stub the //anon left over names),
                  opts.perfmap, io.load_perfmap, jitanon_elf_opts.symbols_only, stats
                  perf_maps, perf_map_entries, perf_map_bad_lines, perf_map_mmaps
                JITANON_PERF_RECORD_EVENT_UPDATE, JITANON_PERF_EVENT_UPDATE_*,
                  jitanon_perf_record.event_update, jitanon_perf_writer.event_names
                jitanon_jitdump_debug_fits (JITANON_JITDUMP_DEBUG_SAME_ADDR, _IN_CODE);
                  stats.debug_unmatched
              Changed:
                JITANON_ELF_FILES_ALL is 2 (was 0; 0 is AUTO); FALLBACK_SAMPLED_ADDRESSES
                  is no longer set
                per-function files of a container's dump are named after the recorded pid
                "cannot open" errors name the OS reason
       0.3.0  Breadth: the recordings users have, the tools they open them in, the JITs
              they run, the damage real files carry.  Output changes: ELF stubs have a
              page-aligned PT_LOAD (p_align 0x1000, was 16: elfutils-based readers such as
              hotspot then place the symbols where perf does); the output's build-id
              table lists every ELF written; samples that ran in a function before its
              CODE_LOAD are named after it by default (file input).
              Added:
                late loads: jitanon_inject_opts.late (jitanon_late_mode: AUTO = 0, NAME,
                  KEEP), late_window_ns, JITANON_LATE_WINDOW_DEFAULT_NS;
                  jitanon_inject_stats.late_loads, late_samples;
                  JITANON_INJECT_FALLBACK_LATE_PIPE, _LATE_ANON
                perf's build-id cache (jitanon_buildid_cache_dir/_open/_add/_release),
                  filled through jitanon_inject_opts.buildid_cache; the output lists every
                  ELF file written in HEADER_BUILD_ID (pipe: as records before the MMAP2s);
                  jitanon_perf_writer_add_feature(BUILD_ID) again extends the table;
                  jitanon_inject_stats.buildid_entries, _cached, _cache_failed
                a zstd decoder (RFC 8878): perf record -z recordings are read by default;
                  jitanon_zstd_decompress, jitanon_perf_opts.max_zstd_window,
                  JITANON_NO_ZSTD, JITANON_FEATURE_ZSTD, JITANON_ERR_BAD_ZSTD
                damaged input: a loaded jitdump keeps the records before a damaged record
                  too, not only before a cut one (tail_error, valid_size;
                  jitanon_jitdump_opts.strict refuses); the perf.data reader reads data
                  size 0 to the end of the input, keeps the whole records of a cut input
                  and drops unreadable feature sections, and says so
                  (jitanon_perf_reader.warnings, damage, bytes_ignored,
                  jitanon_perf_warning; jitanon_perf_opts.strict refuses);
                  jitanon_inject_stats.dumps_damaged, damaged_loads_kept,
                  jitdump_bytes_ignored, input_warnings, input_bytes_ignored; the
                  injector's default I/O opens dumps without blocking and only as regular
                  files, symlinks only as protected_symlinks allows
                old layouts: the legacy PERFFILE header; perf 4.x's 12-byte
                  HEADER_TRACING_DATA; MMAP2 of the first layout (kernel 3.10, no
                  prot/flags): jitanon_perf_mmap.first_layout
                jitanon_inject_sample.callchain (with callchain_nr, big_endian) and
                  jitanon_inject_sample_resolve: a sample's callchain named in on_sample
                jitanon_elf_line_bias_scan_init/_add/_result
              Renamed (define JITANON_COMPAT_0_2 to keep the old names):
                jitanon_elf_opts.v8_bias, jitanon_elf_v8_bias, JITANON_ELF_V8_BIAS_AUTO/
                  _ON/_OFF -> line_bias, jitanon_elf_line_bias, JITANON_ELF_LINE_BIAS_AUTO/
                  _PERF/_NONE (the option may also be any number of bytes to subtract)
                JITANON_ELF_NOTE_V8_BIAS -> JITANON_ELF_NOTE_LINE_BIAS
              Changed:
                the line bias (V8, LLVM's PerfJITEventListener) is detected from the data
                  of each dump, not from V8's marker; on 32-bit ELFs it is 0x40 (what the
                  writers add), not 52
                out_mode JITANON_PERF_SAME_MODE with out_path "-" writes pipe mode
                  from any input (was refused for file input), as perf inject does
                a pipe writer leaves out the features perf cannot read from a pipe
                  (AUXTRACE index, DIR_FORMAT, empty sections; features_skipped)
                errors about a perf.data record point at its first byte and name it
                the injector keeps a process's map after its main thread exits (the
                  last 64 exited processes), as perf does for its other threads
       0.2.0  The API made consistent; the implementation reorganised (the injector is a
              pipeline with one ELF-output interface, one OS layer, one of each
              mechanism).  Output byte-identical to 0.1.0 but for the version in the ELF
              producer string.  Define JITANON_COMPAT_0_1 to keep the renamed 0.1 names.
              Renamed (0.1 -> 0.2):
                jitanon_jit_record, _record_id, _record_name -> jitanon_jitdump_record, ...
                jitanon_jit_debug_entry, _debug_iter -> jitanon_jitdump_debug_entry, ...
                jitanon_jit_debug_begin/_next -> jitanon_jitdump_debug_iter_begin/_next
                jitanon_jit_now -> jitanon_jitdump_now
                JITANON_JIT_CODE_*, JITANON_JIT_WARN_* -> JITANON_JITDUMP_CODE_*, _WARN_*
                jitanon_jitdump_iter_init -> jitanon_jitdump_iter_begin
                jitanon_rangemap_iter_all -> jitanon_rangemap_iter_begin_all
                jitanon_membuf_free, jitanon_jitdump_stream_free, jitanon_perf_reader_free,
                  jitanon_perf_writer_free, jitanon_rangemap_free,
                  jitanon_elf_builder_free -> ..._release
                jitanon_jitdump_free -> jitanon_jitdump_destroy
                jitanon_is_jitdump_marker -> jitanon_jitdump_is_marker
                jitanon_sample_info -> jitanon_inject_sample
              Changed:
                jitanon_trim_new(opts, err) -> jitanon_trim_create(opts, &t, err);
                  jitanon_trim_free -> jitanon_trim_destroy
                jitanon_trim_load/_move/_mmap(t, pid, time, start, ...) ->
                  (t, const jitanon_trim_event *, ...); a move no longer takes the old address
                jitanon_tsc_to_perf_time(cyc, 8 fields) ->
                  jitanon_perf_tsc_to_time(const jitanon_perf_time_conv *, cyc)
                jitanon_perf_encode_mmap2(buf, cap, &n, mmap, misc, time, cpu, attr, big,
                  err) -> (buf, cap, &n, const jitanon_perf_record *, attr, err)
                jitanon_perf_rewrite_mmap(buf, cap, &n, rec, start, len, pgoff, big, err)
                  -> (buf, cap, &n, rec, err): the new range is rec->mmap's
                jitanon_inject_file, jitanon_perf_copy_file: out_mode is a
                  jitanon_perf_mode (JITANON_PERF_SAME_MODE = the input's); others refused
                jitanon_jitdump_load_memory/_file(..., err) returning a pointer ->
                  (..., jitanon_jitdump **out, err) returning a jitanon_result; so does
                  jitanon_inject_io.load_dump
                jitanon_jitdump_writer_init(w, sink, elf_mach, pid, timestamp, flags, err)
                  -> (w, sink, const jitanon_jitdump_header *, err)
                jitanon_jitdump_write_load/_move/_unwinding_info/_close -> one
                  jitanon_jitdump_write(w, const jitanon_jitdump_record *, err) that writes
                  any record the reader returns (a read record round-trips byte for
                  byte); vma is written as given (0.1 set it to the code address)
                jitanon_jitdump_debug_iter_begin(it, rec, big_endian) -> (it, rec):
                  jitanon_jitdump_record.big_endian carries the byte order of its views
                jitanon_jitdump_file may be copied (its sink holds the fd, not &f->fd)
                jitanon_inject_opts.anon_mode, elf_layout, elf_files: their enum types
                jitanon_perf_record.big_endian: the byte order of its views
                jitanon_membuf: private fields added (zero-initialise it, as before)
                jitanon_jitdump_stream: read_fn, user, buf, buf_cap moved into a private
                  in_; buf_len and buf_pos became `pending` (their difference); it and
                  `consumed` are updated by every call
                jitanon_perf_record.time_conv: now of the named type
                  jitanon_perf_time_conv (same fields)
                SAMPLED files with the PER_PROCESS layout are refused
              Removed: the ELF reader (jitanon_elf_parse, _segment_at, _section_at,
                _find_section, _symbol_count, _symbol_at and 4 types; tests/elfread.h
                keeps it for the tests); SHA-1 (jitanon_sha1_*; now internal)
              Added: jitanon_features(), jitanon_inject_stats.fallbacks with
                jitanon_inject_fallback, jitanon_trim_event, jitanon_perf_time_conv
       0.1.0  jitdump reader and writer, perf.data reader and writer, ELF stubs with
              unwind tables and line tables, range-aware //anon trimming, injector
*/

/*
------------------------------------------------------------------------------
jitanon.h is available under the MIT License.

Copyright (c) 2026 the jitanon authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
