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
       jitanon_jit_record rec;
       jitanon_error err;
       jitanon_result r = jitanon_jitdump_iter_init(&it, data, size, NULL, &err);
       while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, &err)) == JITANON_OK)
           if (rec.id == JITANON_JIT_CODE_LOAD) use(rec.load.code_addr, rec.load.name);
       if (r != JITANON_END) report(&err);   // err.offset is the byte offset of the problem

   Configuration macros (define before including the implementation):
       JITANON_STATIC            make every public function static to the including file
       JITANON_API               override the linkage of public functions (default: extern)
       JITANON_MALLOC/REALLOC/FREE  default allocator (all three or none; default libc)
       JITANON_ASSERT(x)         internal invariant / API misuse checks (default: assert)
       JITANON_NO_STDIO          remove the path- and FILE-based convenience functions
       JITANON_USE_ZLIB          compress debug sections (needs -lz); otherwise disabled
       JITANON_MAX_RECORD_SIZE   largest jitdump record accepted (default 256 MiB)
       JITANON_CONFIG_HEADER     a header included first, to hold the above
       JITANON_ERROR_LOCATION    record the implementation's function/line in errors

   Errors: every fallible call returns a jitanon_result and fills an optional
   jitanon_error (code, byte offset in the input, record index, message).  Malformed
   input never asserts, crashes or leaks; it yields a typed error.

   Thread safety: there is no global or static mutable state.  Distinct objects may be
   used from distinct threads at the same time.

   Revision history:
       0.1.0  jitdump reader, skeleton
*/
#ifndef JITANON_H_INCLUDED
#define JITANON_H_INCLUDED

#ifdef JITANON_CONFIG_HEADER
#include JITANON_CONFIG_HEADER
#endif

#include <stddef.h>
#include <stdint.h>

#define JITANON_VERSION_MAJOR 0
#define JITANON_VERSION_MINOR 1
#define JITANON_VERSION_PATCH 0
#define JITANON_VERSION_STRING "0.1.0"
#define jitanon_pack_version(major, minor, patch) \
    ((uint32_t)(major) * 1000000u + (uint32_t)(minor) * 1000u + (uint32_t)(patch))
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
    X(ERR_INVALID_ARGUMENT, "invalid argument")

#define JITANON__ENUM_ITEM(name, desc) JITANON_##name,
typedef enum jitanon_result {
    JITANON__RESULTS(JITANON__ENUM_ITEM)
    JITANON_RESULT_COUNT
} jitanon_result;
#undef JITANON__ENUM_ITEM

typedef struct jitanon_error {
    jitanon_result type;     /* JITANON_OK when nothing went wrong */
    const char *description; /* static text for `type` */
    uint64_t offset;         /* byte offset in the input where the problem is */
    uint64_t record_index;   /* 0-based index of the record involved, if any */
    uint32_t record_type;    /* type/id of that record, if any */
    char info[128];          /* detail, always NUL-terminated */
    const char *func;        /* implementation location (JITANON_ERROR_LOCATION only) */
    int line;
} jitanon_error;

/* Static description of a result code; never NULL. */
JITANON_API const char *jitanon_result_string(jitanon_result r);

/* Formats `err` as one line ("truncated at byte 123 (record 4): ...") into dst (always
   NUL-terminated when n > 0).  Returns the length the full text needs, like snprintf. */
JITANON_API size_t jitanon_format_error(char *dst, size_t n, const jitanon_error *err);

/* The version of the implementation (JITANON_VERSION when header and implementation match). */
JITANON_API uint32_t jitanon_version(void);

/* -- Memory, views, I/O callbacks ------------------------------------------------- */

/* Runtime allocator.  Any NULL function falls back to JITANON_MALLOC/REALLOC/FREE.
   Sizes are passed back so arena or counting allocators need no headers. */
typedef struct jitanon_allocator {
    void *(*alloc_fn)(void *user, size_t size);
    void *(*realloc_fn)(void *user, void *ptr, size_t old_size, size_t new_size);
    void (*free_fn)(void *user, void *ptr, size_t size);
    void *user;
} jitanon_allocator;

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

/* A growable memory buffer usable as a sink (jitanon_membuf_write).  Free with
   jitanon_membuf_free. */
typedef struct jitanon_membuf {
    uint8_t *data;
    size_t size, capacity;
    jitanon_allocator allocator;
    size_t max_size; /* 0 = unlimited; writing beyond fails */
} jitanon_membuf;

JITANON_API int jitanon_membuf_write(void *membuf, const void *data, size_t size);
JITANON_API void jitanon_membuf_free(jitanon_membuf *b);

/* -- jitdump reader ---------------------------------------------------------------- */

/* Record ids (jitdump specification, tools/perf/Documentation/jitdump-specification.txt). */
typedef enum jitanon_jit_record_id {
    JITANON_JIT_CODE_LOAD = 0,
    JITANON_JIT_CODE_MOVE = 1,
    JITANON_JIT_CODE_DEBUG_INFO = 2,
    JITANON_JIT_CODE_CLOSE = 3,
    JITANON_JIT_CODE_UNWINDING_INFO = 4,
    JITANON_JIT_CODE_MAX = 5 /* first id we do not know; such records are skipped */
} jitanon_jit_record_id;

#define JITANON_JITDUMP_MAGIC 0x4A695444u /* "JiTD" as a u32 in the writer's order */
#define JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP 1ull

/* Things a dump did that we accept but a writer should not do. */
enum {
    JITANON_JIT_WARN_VERSION2 = 1u << 0,      /* header version 2 (old Mono) */
    JITANON_JIT_WARN_HEADER_EXTRA = 1u << 1,  /* header larger than 40 bytes; extra skipped */
    JITANON_JIT_WARN_UNKNOWN_RECORD = 1u << 2 /* records with an unknown id were skipped */
};

typedef struct jitanon_jitdump_header {
    uint32_t magic, version, total_size, elf_mach, pad1, pid;
    uint64_t timestamp, flags;
    int big_endian;     /* the dump was written big-endian */
    int arch_timestamp; /* JITDUMP_FLAGS_ARCH_TIMESTAMP: record times are raw TSC */
} jitanon_jitdump_header;

/* One debug-info entry.  `file` is resolved: the 0xFF 0x00 "same as the previous
   entry" marker yields the previous entry's name. */
typedef struct jitanon_jit_debug_entry {
    uint64_t addr;
    int32_t lineno, discrim;
    jitanon_str file;
} jitanon_jit_debug_entry;

/* One record.  Only the member selected by `id` is meaningful.  Views point into the
   input and live as long as it does (for a stream: until the next _next call). */
typedef struct jitanon_jit_record {
    uint32_t id, total_size;
    uint64_t timestamp;
    uint64_t offset; /* byte offset of the record in the dump */
    uint64_t index;  /* 0-based record number */
    jitanon_bytes raw;
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
        jitanon_bytes entries; /* validated: walk with jitanon_jit_debug_next */
    } debug;
    struct {
        uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
        /* As perf and V8 write it: .eh_frame first, then .eh_frame_hdr (the
           specification says the opposite; no writer does that). */
        jitanon_bytes eh_frame, eh_frame_hdr;
    } unwind;
} jitanon_jit_record;

/* Walks the entries of a CODE_DEBUG_INFO record.  Zero-initialise, then call
   jitanon_jit_debug_next until it returns 0.  Entries were validated when the record was
   read, so this cannot fail. */
typedef struct jitanon_jit_debug_iter {
    const uint8_t *p;
    size_t left;
    uint64_t remaining;
    int big_endian, started;
    jitanon_str prev_file;
} jitanon_jit_debug_iter;

JITANON_API void jitanon_jit_debug_begin(jitanon_jit_debug_iter *it, const jitanon_jit_record *rec,
                                         int big_endian);
JITANON_API int jitanon_jit_debug_next(jitanon_jit_debug_iter *it, jitanon_jit_debug_entry *out);

typedef struct jitanon_jitdump_opts {
    uint32_t begin_zero_;
    uint64_t max_record_size; /* 0 = JITANON_MAX_RECORD_SIZE */
    jitanon_allocator allocator;
    size_t memory_limit; /* bytes the loader may allocate; 0 = unlimited */
    uint32_t end_zero_;
} jitanon_jitdump_opts;

/* Counters kept while reading. */
typedef struct jitanon_jitdump_stats {
    uint64_t by_id[JITANON_JIT_CODE_MAX]; /* records per known id */
    uint64_t unknown;                     /* records with an unknown id (skipped) */
    uint64_t code_bytes;                  /* sum of CODE_LOAD code sizes */
    uint64_t first_time, last_time;       /* record timestamp range */
    uint32_t warnings;                    /* JITANON_JIT_WARN_* */
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

JITANON_API jitanon_result jitanon_jitdump_iter_init(jitanon_jitdump_iter *it, const void *data,
                                                     size_t size, const jitanon_jitdump_opts *opts,
                                                     jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_iter_next(jitanon_jitdump_iter *it,
                                                     jitanon_jit_record *rec, jitanon_error *err);

/* Streaming reader over a read callback, for a dump that may still be being written.
   An incomplete trailing record gives JITANON_AGAIN: call _next again later and it resumes.
   Memory grows only to the largest record.  Free with jitanon_jitdump_stream_free. */
typedef struct jitanon_jitdump_stream {
    jitanon_jitdump_header header;
    jitanon_jitdump_stats stats;
    int have_header;
    jitanon_read_fn read_fn;
    void *user;
    jitanon_allocator allocator;
    uint64_t max_record_size, consumed, next_index;
    uint8_t *buf;
    size_t buf_len, buf_cap, buf_pos;
} jitanon_jitdump_stream;

JITANON_API jitanon_result jitanon_jitdump_stream_init(jitanon_jitdump_stream *s, jitanon_read_fn read_fn,
                                                       void *user, const jitanon_jitdump_opts *opts,
                                                       jitanon_error *err);
/* Returns JITANON_OK (record valid until the next call), JITANON_AGAIN (need more data;
   also returned before the header is complete), or an error. */
JITANON_API jitanon_result jitanon_jitdump_stream_next(jitanon_jitdump_stream *s, jitanon_jit_record *rec,
                                                       jitanon_error *err);
JITANON_API void jitanon_jitdump_stream_free(jitanon_jitdump_stream *s);

/* A whole dump, loaded.  `records` are views into `data`. */
typedef struct jitanon_jitdump {
    jitanon_jitdump_header header;
    jitanon_jitdump_stats stats;
    uint8_t *data;
    size_t size;
    jitanon_jit_record *records;
    size_t record_count;
    /* A truncated tail is not an error for a loaded dump (the JIT may still be running
       or may have crashed): the records before it are kept and this is set. */
    jitanon_error tail_error;
    jitanon_allocator allocator;
    size_t alloc_size_, records_cap_;
} jitanon_jitdump;

/* Copies `data` and parses every record.  Returns NULL on error (err says why). */
JITANON_API jitanon_jitdump *jitanon_jitdump_load_memory(const void *data, size_t size,
                                                         const jitanon_jitdump_opts *opts,
                                                         jitanon_error *err);
#ifndef JITANON_NO_STDIO
JITANON_API jitanon_jitdump *jitanon_jitdump_load_file(const char *path, const jitanon_jitdump_opts *opts,
                                                       jitanon_error *err);
#endif
/* NULL-safe. */
JITANON_API void jitanon_jitdump_free(jitanon_jitdump *dump);

/* Short name of a record id ("LOAD", "MOVE", ...; "UNKNOWN" otherwise). */
JITANON_API const char *jitanon_jit_record_name(uint32_t id);

/* -- jitdump writer ---------------------------------------------------------------- */

/* For JIT authors (and tests): writes a jitdump through a sink.  Records are written in
   the host byte order unless big_endian says otherwise.  Each call writes one whole
   record with a single sink call, so a reader never sees half a record from us. */
typedef struct jitanon_jitdump_writer {
    jitanon_sink sink;
    int big_endian;
    uint64_t bytes_written;
} jitanon_jitdump_writer;

/* Starts a dump: writes the 40-byte header.  Zero the writer first; set w->big_endian
   beforehand to write a big-endian dump (tests do).  flags: JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP
   or 0 (then timestamps must be CLOCK_MONOTONIC nanoseconds). */
JITANON_API jitanon_result jitanon_jitdump_writer_init(jitanon_jitdump_writer *w, jitanon_sink sink,
                                                       uint32_t elf_mach, uint32_t pid, uint64_t timestamp,
                                                       uint64_t flags, jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_write_load(jitanon_jitdump_writer *w, uint64_t timestamp, uint32_t pid,
                                                     uint32_t tid, uint64_t code_addr, const void *code,
                                                     uint64_t code_size, uint64_t code_index, const char *name,
                                                     size_t name_len, jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_write_move(jitanon_jitdump_writer *w, uint64_t timestamp, uint32_t pid,
                                                     uint32_t tid, uint64_t old_code_addr, uint64_t new_code_addr,
                                                     uint64_t code_size, uint64_t code_index, jitanon_error *err);
/* Entries' `file` names must not contain NUL.  An entry whose file equals the previous
   one is written with the compact 0xFF 0x00 marker. */
JITANON_API jitanon_result jitanon_jitdump_write_debug_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                           uint64_t code_addr,
                                                           const jitanon_jit_debug_entry *entries,
                                                           size_t count, jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_write_unwinding_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                               const void *eh_frame, uint64_t eh_frame_size,
                                                               const void *eh_frame_hdr, uint64_t eh_frame_hdr_size,
                                                               uint64_t mapped_size, jitanon_error *err);
JITANON_API jitanon_result jitanon_jitdump_write_close(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                      jitanon_error *err);

/* For a JIT: creates DIR/jit-<pid>.dump (DIR NULL means the current directory), writes
   the header, and maps the file's first page PROT_READ|PROT_EXEC so that `perf record`
   notes the marker mmap.  Write records with the jitanon_jitdump_write_* functions on
   `f->writer`, timestamps from jitanon_jit_now().  Needs POSIX (see JITANON__POSIX);
   otherwise returns JITANON_ERR_FEATURE_DISABLED. */
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
JITANON_API uint64_t jitanon_jit_now(void);

/* -- perf.data, address ranges, ELF, injection (fragments inlined at release) ----------- */
#include "src/perfdata.api.h"
#include "src/trim.api.h"
#include "src/elf.api.h"
#include "src/inject.api.h"

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

/* -- Configuration defaults ------------------------------------------------------- */

#if defined(JITANON_MALLOC) || defined(JITANON_REALLOC) || defined(JITANON_FREE)
#if !defined(JITANON_MALLOC) || !defined(JITANON_REALLOC) || !defined(JITANON_FREE)
#error "define all of JITANON_MALLOC, JITANON_REALLOC and JITANON_FREE, or none"
#endif
#else
#include <stdlib.h>
#define JITANON_MALLOC(size) malloc(size)
#define JITANON_REALLOC(ptr, size) realloc(ptr, size)
#define JITANON_FREE(ptr) free(ptr)
#endif

#ifndef JITANON_ASSERT
#include <assert.h>
#define JITANON_ASSERT(x) assert(x)
#endif

#ifndef JITANON_MAX_RECORD_SIZE
#define JITANON_MAX_RECORD_SIZE (256u * 1024u * 1024u)
#endif

#ifdef JITANON_USE_ZLIB
#define JITANON__HAS_ZLIB 1
#else
#define JITANON__HAS_ZLIB 0
#endif

#include <string.h>
#include <stdarg.h>
#ifndef JITANON_NO_STDIO
#include <stdio.h>
#endif

/* POSIX file and memory calls (atomic output, the jitdump marker mmap, CLOCK_MONOTONIC)
   exist only when the including file asked for POSIX (e.g. -D_GNU_SOURCE, -std=gnu99, or
   #define _POSIX_C_SOURCE 200809L before any include).  Otherwise the functions that need
   them return JITANON_ERR_FEATURE_DISABLED. */
#if !defined(JITANON_NO_STDIO) && !defined(JITANON_NO_POSIX) && defined(__unix__) && \
    defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200809L
#define JITANON__POSIX 1
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#else
#define JITANON__POSIX 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define JITANON__PRIVATE static __attribute__((unused))
#else
#define JITANON__PRIVATE static
#endif

/* -- Errors ------------------------------------------------------------------------ */

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

JITANON_API size_t jitanon_format_error(char *dst, size_t n, const jitanon_error *err)
{
    if (!err) return jitanon__fmt(dst, n, "no error");
    if (err->type == JITANON_OK) return jitanon__fmt(dst, n, "ok");
    if (err->record_index || err->record_type)
        return jitanon__fmt(dst, n, "%s at byte %U (record %U, type %u): %s",
                            jitanon_result_string(err->type), err->offset, err->record_index,
                            (unsigned)err->record_type, err->info);
    return jitanon__fmt(dst, n, "%s at byte %U: %s", jitanon_result_string(err->type), err->offset,
                        err->info);
}

/* -- Allocation ----------------------------------------------------------------------- */

JITANON__PRIVATE void *jitanon__malloc(const jitanon_allocator *a, size_t size)
{
    if (size == 0) size = 1;
    if (a && a->alloc_fn) return a->alloc_fn(a->user, size);
    return JITANON_MALLOC(size);
}

JITANON__PRIVATE void *jitanon__realloc(const jitanon_allocator *a, void *ptr, size_t old_size, size_t new_size)
{
    if (new_size == 0) new_size = 1;
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
    if (a && a->free_fn) a->free_fn(a->user, ptr, size);
    else JITANON_FREE(ptr);
    (void)size;
}

/* -- Checked arithmetic ----------------------------------------------------------------- */

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

/* -- Byte order ------------------------------------------------------------------------- */

/* Formats are read and written with explicit byte shifts: no casts of input bytes to
   structs, no alignment requirement, same code on every host. */
JITANON__PRIVATE uint16_t jitanon__rd16(const uint8_t *p, int big)
{
    return big ? (uint16_t)((unsigned)p[0] << 8 | p[1]) : (uint16_t)((unsigned)p[1] << 8 | p[0]);
}

JITANON__PRIVATE uint32_t jitanon__rd32(const uint8_t *p, int big)
{
    if (big) return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

JITANON__PRIVATE uint64_t jitanon__rd64(const uint8_t *p, int big)
{
    uint64_t hi = jitanon__rd32(p + (big ? 0 : 4), big), lo = jitanon__rd32(p + (big ? 4 : 0), big);
    return hi << 32 | lo;
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

/* -- The cursor ----------------------------------------------------------------------- */

/* Every reader goes through this: `left` is what remains, every take compares against it
   (never `pos + n > size`, which can wrap), and `off` is the absolute input offset of `p`
   for error messages. */
typedef struct jitanon__cur {
    const uint8_t *p;
    size_t left;
    uint64_t off;
    int big;
} jitanon__cur;

JITANON__PRIVATE jitanon__cur jitanon__cur_make(const void *p, size_t n, uint64_t off, int big)
{
    jitanon__cur c;
    c.p = (const uint8_t *)p;
    c.left = n;
    c.off = off;
    c.big = big;
    return c;
}

JITANON__PRIVATE const uint8_t *jitanon__take(jitanon__cur *c, size_t n)
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
JITANON__PRIVATE uint16_t jitanon__get16(jitanon__cur *c)
{
    const uint8_t *p = jitanon__take(c, 2);
    JITANON_ASSERT(p);
    return p ? jitanon__rd16(p, c->big) : 0;
}

JITANON__PRIVATE uint32_t jitanon__get32(jitanon__cur *c)
{
    const uint8_t *p = jitanon__take(c, 4);
    JITANON_ASSERT(p);
    return p ? jitanon__rd32(p, c->big) : 0;
}

JITANON__PRIVATE uint64_t jitanon__get64(jitanon__cur *c)
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

/* -- Sinks ----------------------------------------------------------------------------- */

JITANON_API int jitanon_membuf_write(void *membuf, const void *data, size_t size)
{
    jitanon_membuf *b = (jitanon_membuf *)membuf;
    size_t need;
    if (b->size > SIZE_MAX - size) return 1;
    need = b->size + size;
    if (b->max_size && need > b->max_size) return 1;
    if (need > b->capacity && !jitanon__grow(&b->allocator, (void **)&b->data, &b->capacity, need, 1)) return 1;
    if (size) memcpy(b->data + b->size, data, size);
    b->size = need;
    return 0;
}

JITANON_API void jitanon_membuf_free(jitanon_membuf *b)
{
    if (!b) return;
    jitanon__free(&b->allocator, b->data, b->capacity);
    b->data = NULL;
    b->size = b->capacity = 0;
}

JITANON__PRIVATE int jitanon__opts_ok(uint32_t begin, uint32_t end) { return begin == 0 && end == 0; }

/* -- jitdump reader ------------------------------------------------------------------- */

#define JITANON__JIT_HEADER_SIZE 40u
#define JITANON__JIT_PREFIX_SIZE 16u
#define JITANON__JIT_LOAD_FIXED 56u
#define JITANON__JIT_MOVE_SIZE 64u
#define JITANON__JIT_DEBUG_FIXED 32u
#define JITANON__JIT_DEBUG_ENTRY_FIXED 16u
#define JITANON__JIT_UNWIND_FIXED 40u

JITANON_API const char *jitanon_jit_record_name(uint32_t id)
{
    static const char *const names[] = {"LOAD", "MOVE", "DEBUG_INFO", "CLOSE", "UNWINDING_INFO"};
    return id < JITANON_JIT_CODE_MAX ? names[id] : "UNKNOWN";
}

JITANON__PRIVATE uint64_t jitanon__jit_max_record(const jitanon_jitdump_opts *opts)
{
    return opts && opts->max_record_size ? opts->max_record_size : (uint64_t)JITANON_MAX_RECORD_SIZE;
}

/* Parses the 40-byte header at `p` (n bytes available).  Returns JITANON_AGAIN when fewer
   than 40 bytes are there yet; the caller decides whether that means truncation. */
JITANON__PRIVATE jitanon_result jitanon__jit_parse_header(const uint8_t *p, size_t n, jitanon_jitdump_header *h,
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
    if (n < JITANON__JIT_HEADER_SIZE) return JITANON_AGAIN;
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
    if (h->total_size < JITANON__JIT_HEADER_SIZE)
        return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, 8, "header total_size %u is below 40",
                             (unsigned)h->total_size);
    if (h->flags & ~JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP)
        return JITANON__FAIL(err, JITANON_ERR_BAD_FLAGS, 32,
                             "unknown jitdump flag bits %X (only bit 0, ARCH_TIMESTAMP, is defined)",
                             h->flags & ~JITANON_JITDUMP_FLAGS_ARCH_TIMESTAMP);
    return JITANON_OK;
}

JITANON__PRIVATE uint32_t jitanon__jit_header_warnings(const jitanon_jitdump_header *h)
{
    uint32_t w = 0;
    if (h->version == 2) w |= JITANON_JIT_WARN_VERSION2;
    if (h->total_size > JITANON__JIT_HEADER_SIZE) w |= JITANON_JIT_WARN_HEADER_EXTRA;
    return w;
}

JITANON__PRIVATE jitanon_result jitanon__jit_bad(jitanon_error *err, uint64_t off, const jitanon_jit_record *rec,
                                       const char *what)
{
    jitanon_result r = JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, off, "%s record (total_size %u): %s",
                                     jitanon_jit_record_name(rec->id), (unsigned)rec->total_size, what);
    if (err) {
        err->record_index = rec->index;
        err->record_type = rec->id;
    }
    return r;
}

/* Entries are walked once here so that every later walk (jitanon_jit_debug_next) is safe. */
JITANON__PRIVATE jitanon_result jitanon__jit_check_debug(jitanon__cur *c, jitanon_jit_record *rec, jitanon_error *err)
{
    uint64_t i;
    rec->debug.code_addr = jitanon__get64(c);
    rec->debug.nr_entry = jitanon__get64(c);
    rec->debug.entries.data = c->p;
    rec->debug.entries.size = c->left;
    /* Each entry takes at least 17 bytes: reject impossible counts before looping. */
    if (rec->debug.nr_entry > c->left / (JITANON__JIT_DEBUG_ENTRY_FIXED + 1))
        return jitanon__jit_bad(err, c->off - 8, rec, "nr_entry does not fit in the record");
    for (i = 0; i < rec->debug.nr_entry; i++) {
        jitanon_str name;
        uint64_t at = c->off;
        jitanon__take(c, JITANON__JIT_DEBUG_ENTRY_FIXED);
        if (c->left == 0 || !jitanon__take_cstr(c, &name))
            return jitanon__jit_bad(err, at, rec, "debug entry file name runs past the record");
        if (c->left < JITANON__JIT_DEBUG_ENTRY_FIXED + 1 && i + 1 < rec->debug.nr_entry)
            return jitanon__jit_bad(err, c->off, rec, "debug entries run past the record");
    }
    return JITANON_OK;
}

/* Parses one record whose prefix says `total_size` and whose bytes [p, p+total) are all
   present.  Every variable-length field is bounded by the record itself. */
JITANON__PRIVATE jitanon_result jitanon__jit_parse_body(const uint8_t *p, uint64_t off, int big, jitanon_jit_record *rec,
                                              jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(p, rec->total_size, off, big);
    jitanon__take(&c, JITANON__JIT_PREFIX_SIZE);
    switch (rec->id) {
    case JITANON_JIT_CODE_LOAD:
        if (rec->total_size < JITANON__JIT_LOAD_FIXED + 1)
            return jitanon__jit_bad(err, off, rec, "shorter than the 56-byte fixed part plus a name");
        rec->load.pid = jitanon__get32(&c);
        rec->load.tid = jitanon__get32(&c);
        rec->load.vma = jitanon__get64(&c);
        rec->load.code_addr = jitanon__get64(&c);
        rec->load.code_size = jitanon__get64(&c);
        rec->load.code_index = jitanon__get64(&c);
        if (!jitanon__take_cstr(&c, &rec->load.name))
            return jitanon__jit_bad(err, off + JITANON__JIT_LOAD_FIXED, rec, "function name is not NUL-terminated");
        /* The code follows the name (specification); trailing padding is tolerated. */
        if (rec->load.code_size > c.left)
            return jitanon__jit_bad(err, off + 40, rec, "code_size is larger than the record");
        rec->load.code.data = c.p;
        rec->load.code.size = (size_t)rec->load.code_size;
        break;
    case JITANON_JIT_CODE_MOVE:
        if (rec->total_size < JITANON__JIT_MOVE_SIZE)
            return jitanon__jit_bad(err, off, rec, "shorter than 64 bytes");
        rec->move.pid = jitanon__get32(&c);
        rec->move.tid = jitanon__get32(&c);
        rec->move.vma = jitanon__get64(&c);
        rec->move.old_code_addr = jitanon__get64(&c);
        rec->move.new_code_addr = jitanon__get64(&c);
        rec->move.code_size = jitanon__get64(&c);
        rec->move.code_index = jitanon__get64(&c);
        break;
    case JITANON_JIT_CODE_DEBUG_INFO:
        if (rec->total_size < JITANON__JIT_DEBUG_FIXED)
            return jitanon__jit_bad(err, off, rec, "shorter than 32 bytes");
        return jitanon__jit_check_debug(&c, rec, err);
    case JITANON_JIT_CODE_UNWINDING_INFO: {
        uint64_t eh_size;
        if (rec->total_size < JITANON__JIT_UNWIND_FIXED)
            return jitanon__jit_bad(err, off, rec, "shorter than 40 bytes");
        rec->unwind.unwinding_size = jitanon__get64(&c);
        rec->unwind.eh_frame_hdr_size = jitanon__get64(&c);
        rec->unwind.mapped_size = jitanon__get64(&c);
        if (rec->unwind.unwinding_size > c.left)
            return jitanon__jit_bad(err, off + 16, rec, "unwinding_size is larger than the record");
        if (rec->unwind.eh_frame_hdr_size > rec->unwind.unwinding_size)
            return jitanon__jit_bad(err, off + 24, rec, "eh_frame_hdr_size is larger than unwinding_size");
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
JITANON__PRIVATE jitanon_result jitanon__jit_parse_record(const uint8_t *p, size_t avail, uint64_t off, int big,
                                                uint64_t max_record, uint64_t index, jitanon_jit_record *rec,
                                                uint64_t *missing, jitanon_error *err)
{
    memset(rec, 0, sizeof *rec);
    rec->offset = off;
    rec->index = index;
    if (avail < JITANON__JIT_PREFIX_SIZE) {
        *missing = JITANON__JIT_PREFIX_SIZE - avail;
        return JITANON_AGAIN;
    }
    rec->id = jitanon__rd32(p, big);
    rec->total_size = jitanon__rd32(p + 4, big);
    rec->timestamp = jitanon__rd64(p + 8, big);
    if (rec->total_size < JITANON__JIT_PREFIX_SIZE)
        return jitanon__jit_bad(err, off + 4, rec, "total_size is below the 16-byte prefix");
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
    return jitanon__jit_parse_body(p, off, big, rec, err);
}

JITANON__PRIVATE void jitanon__jit_count(jitanon_jitdump_stats *st, const jitanon_jit_record *rec)
{
    if (rec->id < JITANON_JIT_CODE_MAX) st->by_id[rec->id]++;
    else {
        st->unknown++;
        st->warnings |= JITANON_JIT_WARN_UNKNOWN_RECORD;
    }
    if (rec->id == JITANON_JIT_CODE_LOAD) st->code_bytes += rec->load.code_size;
    if (rec->index == 0 || rec->timestamp < st->first_time) st->first_time = rec->timestamp;
    if (rec->index == 0 || rec->timestamp > st->last_time) st->last_time = rec->timestamp;
}

JITANON__PRIVATE jitanon_result jitanon__jit_truncated(jitanon_error *err, uint64_t off, uint64_t missing, uint64_t index)
{
    jitanon_result r = JITANON__FAIL(err, JITANON_ERR_TRUNCATED, off,
                                     "record %U is cut short: %U byte(s) missing", index, missing);
    if (err) err->record_index = index;
    return r;
}

JITANON_API jitanon_result jitanon_jitdump_iter_init(jitanon_jitdump_iter *it, const void *data, size_t size,
                                                     const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    jitanon_result r;
    JITANON_ASSERT(it);
    memset(it, 0, sizeof *it);
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_jitdump_opts not zero-initialised");
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    it->data = (const uint8_t *)data;
    it->size = size;
    it->max_record_size = jitanon__jit_max_record(opts);
    r = jitanon__jit_parse_header(it->data, size, &it->header, err);
    if (r == JITANON_AGAIN)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, 0, "jitdump header needs 40 bytes, have %U",
                             (uint64_t)size);
    if (r != JITANON_OK) return r;
    if (it->header.total_size > size)
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, size, "header total_size %u is beyond the end (%U bytes)",
                             (unsigned)it->header.total_size, (uint64_t)size);
    it->stats.warnings = jitanon__jit_header_warnings(&it->header);
    it->pos = it->header.total_size;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_iter_next(jitanon_jitdump_iter *it, jitanon_jit_record *rec,
                                                     jitanon_error *err)
{
    jitanon_result r;
    uint64_t missing = 0;
    JITANON_ASSERT(it && rec);
    if (it->pos >= it->size) return JITANON_END;
    r = jitanon__jit_parse_record(it->data + it->pos, it->size - it->pos, it->pos, it->header.big_endian,
                                  it->max_record_size, it->next_index, rec, &missing, err);
    if (r == JITANON_AGAIN) {
        it->missing = missing;
        return jitanon__jit_truncated(err, it->pos, missing, it->next_index);
    }
    if (r != JITANON_OK) return r;
    it->pos += rec->total_size;
    it->next_index++;
    jitanon__jit_count(&it->stats, rec);
    return JITANON_OK;
}

JITANON_API void jitanon_jit_debug_begin(jitanon_jit_debug_iter *it, const jitanon_jit_record *rec, int big_endian)
{
    memset(it, 0, sizeof *it);
    if (rec->id != JITANON_JIT_CODE_DEBUG_INFO) return;
    it->p = rec->debug.entries.data;
    it->left = rec->debug.entries.size;
    it->remaining = rec->debug.nr_entry;
    it->big_endian = big_endian;
}

JITANON_API int jitanon_jit_debug_next(jitanon_jit_debug_iter *it, jitanon_jit_debug_entry *out)
{
    jitanon__cur c;
    jitanon_str name;
    if (it->remaining == 0) return 0;
    c = jitanon__cur_make(it->p, it->left, 0, it->big_endian);
    if (c.left < JITANON__JIT_DEBUG_ENTRY_FIXED + 1) return 0; /* only if misused: validated earlier */
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

/* Streaming: keep unconsumed bytes in buf[buf_pos, buf_len); read more only when a record
   is incomplete, so memory is bounded by the largest record. */
JITANON__PRIVATE jitanon_result jitanon__jit_fill(jitanon_jitdump_stream *s, size_t need, jitanon_error *err)
{
    while (s->buf_len - s->buf_pos < need) {
        size_t got, want;
        if (s->buf_pos) {
            memmove(s->buf, s->buf + s->buf_pos, s->buf_len - s->buf_pos);
            s->buf_len -= s->buf_pos;
            s->buf_pos = 0;
        }
        if (need > s->buf_cap && !jitanon__grow(&s->allocator, (void **)&s->buf, &s->buf_cap, need < 4096 ? 4096 : need, 1))
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, s->consumed, "cannot buffer a %U-byte record", (uint64_t)need);
        want = s->buf_cap - s->buf_len;
        got = s->read_fn(s->user, s->buf + s->buf_len, want);
        if (got == SIZE_MAX) return JITANON__FAIL(err, JITANON_ERR_IO, s->consumed + s->buf_len, "read failed");
        if (got == 0) return JITANON_AGAIN;
        if (got > want) return JITANON__FAIL(err, JITANON_ERR_IO, s->consumed, "read callback returned too much");
        s->buf_len += got;
    }
    return JITANON_OK;
}

JITANON__PRIVATE void jitanon__jit_consume(jitanon_jitdump_stream *s, size_t n)
{
    s->buf_pos += n;
    s->consumed += n;
}

JITANON_API jitanon_result jitanon_jitdump_stream_init(jitanon_jitdump_stream *s, jitanon_read_fn read_fn, void *user,
                                                       const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    JITANON_ASSERT(s && read_fn);
    memset(s, 0, sizeof *s);
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
        return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_jitdump_opts not zero-initialised");
    s->read_fn = read_fn;
    s->user = user;
    s->max_record_size = jitanon__jit_max_record(opts);
    if (opts) s->allocator = opts->allocator;
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__jit_stream_header(jitanon_jitdump_stream *s, jitanon_error *err)
{
    jitanon_result r = jitanon__jit_fill(s, JITANON__JIT_HEADER_SIZE, err);
    if (r == JITANON_AGAIN && s->buf_len - s->buf_pos >= 4) {
        /* Reject a wrong magic early rather than waiting for 40 bytes forever. */
        jitanon_jitdump_header h;
        jitanon_result m = jitanon__jit_parse_header(s->buf + s->buf_pos, s->buf_len - s->buf_pos, &h, err);
        if (m != JITANON_AGAIN && m != JITANON_OK) return m;
    }
    if (r != JITANON_OK) return r;
    r = jitanon__jit_parse_header(s->buf + s->buf_pos, s->buf_len - s->buf_pos, &s->header, err);
    if (r != JITANON_OK) return r;
    if (s->header.total_size > s->max_record_size)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 8, "header total_size %u exceeds the limit",
                             (unsigned)s->header.total_size);
    r = jitanon__jit_fill(s, s->header.total_size, err);
    if (r != JITANON_OK) return r;
    jitanon__jit_consume(s, s->header.total_size);
    s->stats.warnings = jitanon__jit_header_warnings(&s->header);
    s->have_header = 1;
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_jitdump_stream_next(jitanon_jitdump_stream *s, jitanon_jit_record *rec,
                                                       jitanon_error *err)
{
    jitanon_result r;
    uint64_t missing = 0;
    JITANON_ASSERT(s && rec);
    if (!s->have_header && (r = jitanon__jit_stream_header(s, err)) != JITANON_OK) return r;
    for (;;) {
        r = jitanon__jit_parse_record(s->buf + s->buf_pos, s->buf_len - s->buf_pos, s->consumed,
                                      s->header.big_endian, s->max_record_size, s->next_index, rec, &missing, err);
        if (r != JITANON_AGAIN) break;
        r = jitanon__jit_fill(s, (size_t)(s->buf_len - s->buf_pos + missing), err);
        if (r != JITANON_OK) return r;
    }
    if (r != JITANON_OK) return r;
    jitanon__jit_consume(s, rec->total_size);
    s->next_index++;
    jitanon__jit_count(&s->stats, rec);
    return JITANON_OK;
}

JITANON_API void jitanon_jitdump_stream_free(jitanon_jitdump_stream *s)
{
    if (!s) return;
    jitanon__free(&s->allocator, s->buf, s->buf_cap);
    s->buf = NULL;
    s->buf_cap = s->buf_len = s->buf_pos = 0;
}

/* Takes ownership of `data` (allocated with opts' allocator, `cap` bytes). */
JITANON__PRIVATE jitanon_jitdump *jitanon__jit_load_owned(uint8_t *data, size_t size, size_t cap,
                                                const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    jitanon_allocator a;
    jitanon_jitdump *d;
    jitanon_jitdump_iter it;
    jitanon_jit_record rec;
    jitanon_result r;
    int header_ok;
    memset(&a, 0, sizeof a);
    if (opts) a = opts->allocator;
    d = (jitanon_jitdump *)jitanon__malloc(&a, sizeof *d);
    if (!d) {
        jitanon__free(&a, data, cap);
        JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot allocate the dump");
        return NULL;
    }
    memset(d, 0, sizeof *d);
    d->allocator = a;
    d->data = data;
    d->size = size;
    d->alloc_size_ = cap;
    r = jitanon_jitdump_iter_init(&it, data, size, opts, err);
    header_ok = r == JITANON_OK;
    while (r == JITANON_OK && (r = jitanon_jitdump_iter_next(&it, &rec, err)) == JITANON_OK) {
        size_t bytes;
        if (opts && opts->memory_limit &&
            (!jitanon__mul_size(d->record_count + 1, sizeof rec, &bytes) || bytes > opts->memory_limit - cap ||
             cap > opts->memory_limit)) {
            r = JITANON__FAIL(err, JITANON_ERR_LIMIT, rec.offset, "memory_limit reached after %U records",
                              (uint64_t)d->record_count);
            break;
        }
        if (!jitanon__grow(&a, (void **)&d->records, &d->records_cap_, d->record_count + 1, sizeof rec)) {
            r = JITANON__FAIL(err, JITANON_ERR_NOMEM, rec.offset, "cannot grow the record table");
            break;
        }
        d->records[d->record_count++] = rec;
    }
    d->header = it.header;
    d->stats = it.stats;
    /* A cut after a complete header is what a crashed or still-running JIT leaves:
       keep every record before it and say where the tail broke off. */
    if (r == JITANON_ERR_TRUNCATED && header_ok) {
        if (err) {
            d->tail_error = *err;
            jitanon__clear_error(err);
        }
        r = JITANON_END;
    }
    if (r != JITANON_END) {
        jitanon_jitdump_free(d);
        return NULL;
    }
    return d;
}

JITANON_API void jitanon_jitdump_free(jitanon_jitdump *d)
{
    jitanon_allocator a;
    if (!d) return;
    a = d->allocator;
    jitanon__free(&a, d->records, d->records_cap_ * sizeof *d->records);
    jitanon__free(&a, d->data, d->alloc_size_);
    jitanon__free(&a, d, sizeof *d);
}

JITANON_API jitanon_jitdump *jitanon_jitdump_load_memory(const void *data, size_t size,
                                                         const jitanon_jitdump_opts *opts, jitanon_error *err)
{
    uint8_t *copy;
    const jitanon_allocator *a = opts ? &opts->allocator : NULL;
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_)) {
        JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_jitdump_opts not zero-initialised");
        return NULL;
    }
    if (!data && size) {
        JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
        return NULL;
    }
    if (opts && opts->memory_limit && size > opts->memory_limit) {
        JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "dump of %U bytes exceeds memory_limit", (uint64_t)size);
        return NULL;
    }
    copy = (uint8_t *)jitanon__malloc(a, size);
    if (!copy) {
        JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot copy %U bytes", (uint64_t)size);
        return NULL;
    }
    if (size) memcpy(copy, data, size);
    return jitanon__jit_load_owned(copy, size, size ? size : 1, opts, err);
}

#ifndef JITANON_NO_STDIO
/* Reads a whole stream (a file, a FIFO or stdin) into memory. */
JITANON__PRIVATE jitanon_result jitanon__slurp(FILE *f, const jitanon_allocator *a, size_t limit, uint8_t **out,
                                     size_t *size, size_t *cap, jitanon_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0, bcap = 0;
    for (;;) {
        size_t got;
        if (len == bcap && !jitanon__grow(a, (void **)&buf, &bcap, len + 65536, 1)) {
            jitanon__free(a, buf, bcap);
            return JITANON__FAIL(err, JITANON_ERR_NOMEM, len, "cannot buffer the file");
        }
        got = fread(buf + len, 1, bcap - len, f);
        len += got;
        if (limit && len > limit) {
            jitanon__free(a, buf, bcap);
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, limit, "file exceeds memory_limit");
        }
        if (got == 0) break;
    }
    if (ferror(f)) {
        jitanon__free(a, buf, bcap);
        return JITANON__FAIL(err, JITANON_ERR_IO, len, "read error");
    }
    *out = buf;
    *size = len;
    *cap = bcap;
    return JITANON_OK;
}

JITANON_API jitanon_jitdump *jitanon_jitdump_load_file(const char *path, const jitanon_jitdump_opts *opts,
                                                       jitanon_error *err)
{
    FILE *f;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    jitanon_result r;
    jitanon__clear_error(err);
    if (opts && !jitanon__opts_ok(opts->begin_zero_, opts->end_zero_)) {
        JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_jitdump_opts not zero-initialised");
        return NULL;
    }
    f = fopen(path, "rb");
    if (!f) {
        JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot open %s", path);
        return NULL;
    }
    r = jitanon__slurp(f, opts ? &opts->allocator : NULL, opts ? opts->memory_limit : 0, &buf, &len, &cap, err);
    fclose(f);
    if (r != JITANON_OK) return NULL;
    return jitanon__jit_load_owned(buf, len, cap, opts, err);
}
#endif

/* -- jitdump writer ------------------------------------------------------------------- */

JITANON__PRIVATE jitanon_result jitanon__sink_put(jitanon_sink sink, const void *data, size_t size, uint64_t *counter,
                                                  jitanon_error *err)
{
    if (sink.write_fn(sink.user, data, size))
        return JITANON__FAIL(err, JITANON_ERR_WRITE, counter ? *counter : 0, "sink refused %U bytes", (uint64_t)size);
    if (counter) *counter += size;
    return JITANON_OK;
}

/* Records are assembled in a small stack buffer and flushed in pieces only when they are
   larger, so typical records cost one sink call. */
typedef struct jitanon__jw {
    jitanon_jitdump_writer *w;
    uint8_t buf[512];
    size_t len;
    jitanon_result r;
    jitanon_error *err;
} jitanon__jw;

JITANON__PRIVATE void jitanon__jw_flush(jitanon__jw *j)
{
    if (j->r == JITANON_OK && j->len)
        j->r = jitanon__sink_put(j->w->sink, j->buf, j->len, &j->w->bytes_written, j->err);
    j->len = 0;
}

JITANON__PRIVATE void jitanon__jw_bytes(jitanon__jw *j, const void *data, size_t n)
{
    if (n > sizeof j->buf - j->len) {
        jitanon__jw_flush(j);
        if (n > sizeof j->buf) {
            if (j->r == JITANON_OK) j->r = jitanon__sink_put(j->w->sink, data, n, &j->w->bytes_written, j->err);
            return;
        }
    }
    if (n) memcpy(j->buf + j->len, data, n);
    j->len += n;
}

JITANON__PRIVATE void jitanon__jw_u32(jitanon__jw *j, uint64_t v)
{
    uint8_t b[4];
    jitanon__wr32(b, v, j->w->big_endian);
    jitanon__jw_bytes(j, b, 4);
}

JITANON__PRIVATE void jitanon__jw_u64(jitanon__jw *j, uint64_t v)
{
    uint8_t b[8];
    jitanon__wr64(b, v, j->w->big_endian);
    jitanon__jw_bytes(j, b, 8);
}

JITANON__PRIVATE jitanon_result jitanon__jw_begin(jitanon__jw *j, jitanon_jitdump_writer *w, uint32_t id, uint64_t size,
                                                  uint64_t timestamp, jitanon_error *err)
{
    j->w = w;
    j->len = 0;
    j->r = JITANON_OK;
    j->err = err;
    jitanon__clear_error(err);
    if (size > UINT32_MAX)
        return j->r = JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "record of %U bytes is too large", size);
    jitanon__jw_u32(j, id);
    jitanon__jw_u32(j, size);
    jitanon__jw_u64(j, timestamp);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__jw_end(jitanon__jw *j)
{
    jitanon__jw_flush(j);
    return j->r;
}

JITANON_API jitanon_result jitanon_jitdump_writer_init(jitanon_jitdump_writer *w, jitanon_sink sink, uint32_t elf_mach,
                                                       uint32_t pid, uint64_t timestamp, uint64_t flags,
                                                       jitanon_error *err)
{
    jitanon__jw j;
    int big = w->big_endian; /* the one field a caller may preset */
    memset(w, 0, sizeof *w);
    w->sink = sink;
    w->big_endian = big;
    j.w = w;
    j.len = 0;
    j.r = JITANON_OK;
    j.err = err;
    jitanon__clear_error(err);
    jitanon__jw_u32(&j, JITANON_JITDUMP_MAGIC);
    jitanon__jw_u32(&j, 1);
    jitanon__jw_u32(&j, JITANON__JIT_HEADER_SIZE);
    jitanon__jw_u32(&j, elf_mach);
    jitanon__jw_u32(&j, 0);
    jitanon__jw_u32(&j, pid);
    jitanon__jw_u64(&j, timestamp);
    jitanon__jw_u64(&j, flags);
    return jitanon__jw_end(&j);
}

JITANON_API jitanon_result jitanon_jitdump_write_load(jitanon_jitdump_writer *w, uint64_t timestamp, uint32_t pid,
                                                     uint32_t tid, uint64_t code_addr, const void *code,
                                                     uint64_t code_size, uint64_t code_index, const char *name,
                                                     size_t name_len, jitanon_error *err)
{
    jitanon__jw j;
    uint64_t size = (uint64_t)JITANON__JIT_LOAD_FIXED + name_len + 1;
    const uint8_t nul = 0;
    if (!jitanon__add_u64(size, code_size, &size) || code_size > SIZE_MAX)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "code_size too large");
    if (jitanon__jw_begin(&j, w, JITANON_JIT_CODE_LOAD, size, timestamp, err) != JITANON_OK) return j.r;
    jitanon__jw_u32(&j, pid);
    jitanon__jw_u32(&j, tid);
    jitanon__jw_u64(&j, code_addr); /* vma: writers put the code address here */
    jitanon__jw_u64(&j, code_addr);
    jitanon__jw_u64(&j, code_size);
    jitanon__jw_u64(&j, code_index);
    jitanon__jw_bytes(&j, name, name_len);
    jitanon__jw_bytes(&j, &nul, 1);
    jitanon__jw_bytes(&j, code, (size_t)code_size);
    return jitanon__jw_end(&j);
}

JITANON_API jitanon_result jitanon_jitdump_write_move(jitanon_jitdump_writer *w, uint64_t timestamp, uint32_t pid,
                                                     uint32_t tid, uint64_t old_code_addr, uint64_t new_code_addr,
                                                     uint64_t code_size, uint64_t code_index, jitanon_error *err)
{
    jitanon__jw j;
    if (jitanon__jw_begin(&j, w, JITANON_JIT_CODE_MOVE, JITANON__JIT_MOVE_SIZE, timestamp, err) != JITANON_OK) return j.r;
    jitanon__jw_u32(&j, pid);
    jitanon__jw_u32(&j, tid);
    jitanon__jw_u64(&j, new_code_addr);
    jitanon__jw_u64(&j, old_code_addr);
    jitanon__jw_u64(&j, new_code_addr);
    jitanon__jw_u64(&j, code_size);
    jitanon__jw_u64(&j, code_index);
    return jitanon__jw_end(&j);
}

JITANON__PRIVATE int jitanon__same_str(jitanon_str a, jitanon_str b)
{
    return a.length == b.length && (a.length == 0 || memcmp(a.data, b.data, a.length) == 0);
}

JITANON_API jitanon_result jitanon_jitdump_write_debug_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                           uint64_t code_addr, const jitanon_jit_debug_entry *entries,
                                                           size_t count, jitanon_error *err)
{
    jitanon__jw j;
    uint64_t size = JITANON__JIT_DEBUG_FIXED;
    size_t i;
    static const uint8_t same_file[2] = {0xFF, 0x00};
    for (i = 0; i < count; i++) {
        int same = i > 0 && jitanon__same_str(entries[i].file, entries[i - 1].file);
        if (!jitanon__add_u64(size, JITANON__JIT_DEBUG_ENTRY_FIXED + (same ? 2 : entries[i].file.length + 1), &size))
            return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "debug info too large");
    }
    if (jitanon__jw_begin(&j, w, JITANON_JIT_CODE_DEBUG_INFO, size, timestamp, err) != JITANON_OK) return j.r;
    jitanon__jw_u64(&j, code_addr);
    jitanon__jw_u64(&j, count);
    for (i = 0; i < count; i++) {
        const uint8_t nul = 0;
        jitanon__jw_u64(&j, entries[i].addr);
        jitanon__jw_u32(&j, (uint32_t)entries[i].lineno);
        jitanon__jw_u32(&j, (uint32_t)entries[i].discrim);
        if (i > 0 && jitanon__same_str(entries[i].file, entries[i - 1].file)) {
            jitanon__jw_bytes(&j, same_file, 2);
        } else {
            jitanon__jw_bytes(&j, entries[i].file.data, entries[i].file.length);
            jitanon__jw_bytes(&j, &nul, 1);
        }
    }
    return jitanon__jw_end(&j);
}

JITANON_API jitanon_result jitanon_jitdump_write_unwinding_info(jitanon_jitdump_writer *w, uint64_t timestamp,
                                                               const void *eh_frame, uint64_t eh_frame_size,
                                                               const void *eh_frame_hdr, uint64_t eh_frame_hdr_size,
                                                               uint64_t mapped_size, jitanon_error *err)
{
    jitanon__jw j;
    uint64_t unwinding_size, size;
    if (!jitanon__add_u64(eh_frame_size, eh_frame_hdr_size, &unwinding_size) ||
        !jitanon__add_u64(unwinding_size, JITANON__JIT_UNWIND_FIXED, &size) || unwinding_size > SIZE_MAX)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, w->bytes_written, "unwinding info too large");
    if (jitanon__jw_begin(&j, w, JITANON_JIT_CODE_UNWINDING_INFO, size, timestamp, err) != JITANON_OK) return j.r;
    jitanon__jw_u64(&j, unwinding_size);
    jitanon__jw_u64(&j, eh_frame_hdr_size);
    jitanon__jw_u64(&j, mapped_size);
    jitanon__jw_bytes(&j, eh_frame, (size_t)eh_frame_size);
    jitanon__jw_bytes(&j, eh_frame_hdr, (size_t)eh_frame_hdr_size);
    return jitanon__jw_end(&j);
}

JITANON_API jitanon_result jitanon_jitdump_write_close(jitanon_jitdump_writer *w, uint64_t timestamp, jitanon_error *err)
{
    jitanon__jw j;
    if (jitanon__jw_begin(&j, w, JITANON_JIT_CODE_CLOSE, JITANON__JIT_PREFIX_SIZE, timestamp, err) != JITANON_OK) return j.r;
    return jitanon__jw_end(&j);
}

JITANON_API uint64_t jitanon_jit_now(void)
{
#if JITANON__POSIX
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
    return 0;
#endif
}

#if JITANON__POSIX
/* write(2) until done: a sink for file descriptors. */
JITANON__PRIVATE int jitanon__fd_write(void *user, const void *data, size_t size)
{
    int fd = *(const int *)user;
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
#endif

JITANON_API jitanon_result jitanon_jitdump_file_open(jitanon_jitdump_file *f, const char *dir, uint32_t elf_mach,
                                                     jitanon_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
#if JITANON__POSIX
    {
        char path[4096];
        uint32_t pid = (uint32_t)getpid();
        jitanon_sink sink;
        long page = sysconf(_SC_PAGESIZE);
        size_t n = jitanon__fmt(path, sizeof path, "%s/jit-%u.dump", dir ? dir : ".", (unsigned)pid);
        if (n >= sizeof path) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "directory name too long");
        f->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
        if (f->fd < 0) return JITANON__FAIL(err, JITANON_ERR_IO, 0, "cannot create %s", path);
        sink.write_fn = jitanon__fd_write;
        sink.user = &f->fd;
        f->writer.big_endian = jitanon__host_big_endian();
        if (jitanon_jitdump_writer_init(&f->writer, sink, elf_mach, pid, jitanon_jit_now(), 0, err) != JITANON_OK)
            return err ? err->type : JITANON_ERR_WRITE;
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
    (void)dir;
    (void)elf_mach;
    return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "built without POSIX");
#endif
}

JITANON_API jitanon_result jitanon_jitdump_file_close(jitanon_jitdump_file *f, jitanon_error *err)
{
    jitanon_result r = JITANON_OK;
    jitanon__clear_error(err);
#if JITANON__POSIX
    if (f->fd >= 0 && f->writer.sink.write_fn) r = jitanon_jitdump_write_close(&f->writer, jitanon_jit_now(), err);
    if (f->marker) munmap(f->marker, f->marker_size);
    if (f->fd >= 0 && close(f->fd) != 0 && r == JITANON_OK) r = JITANON__FAIL(err, JITANON_ERR_IO, 0, "close failed");
#endif
    f->marker = NULL;
    f->fd = -1;
    return r;
}

#include "src/perfdata.impl.h"
#include "src/trim.impl.h"
#include "src/elf.impl.h"
#include "src/inject.impl.h"

#endif /* JITANON_IMPLEMENTATION_INCLUDED */
#endif /* JITANON_IMPLEMENTATION */

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
