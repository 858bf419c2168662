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
       jitanon_perf_reader_free(&r);
       if (res != JITANON_END) report(&err);   // err.offset = byte offset of the problem

   Memory does not grow with the file: the reader keeps one buffer as large as the largest
   record (records are at most 65535 bytes, except AUXTRACE and HEADER_TRACING_DATA whose
   trailing payload is capped by opts.max_payload), plus the attrs, their id arrays and,
   once loaded, the feature sections (capped by opts.max_header_bytes). */

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
    JITANON_PERF_RECORD_TIME_CONV = 79,
    JITANON_PERF_RECORD_HEADER_FEATURE = 80,
    JITANON_PERF_RECORD_COMPRESSED = 81,
    JITANON_PERF_RECORD_FINISHED_INIT = 82,
    JITANON_PERF_RECORD_COMPRESSED2 = 83
};

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

typedef enum jitanon_perf_mode { JITANON_PERF_FILE = 1, JITANON_PERF_PIPE = 2 } jitanon_perf_mode;

/* Optional seek source: position the read callback at absolute byte `offset`; return 0 on
   success.  Without one the input is read strictly forward (a pipe). */
typedef int (*jitanon_seek_fn)(void *user, uint64_t offset);

/* Optional decompressor for PERF_RECORD_COMPRESSED / COMPRESSED2 (perf record -z, zstd):
   append the raw record bytes that `src` (one record's compressed payload, in input order)
   decodes to, with jitanon_membuf_write(out, ...).  Return 0 on success.  perf keeps one
   zstd stream for the whole file, so keep your decoder state in `user`.  A record may
   straddle two compressed payloads; the reader handles that. */
typedef int (*jitanon_decompress_fn)(void *user, const void *src, size_t size, jitanon_membuf *out);

typedef struct jitanon_perf_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    uint64_t max_payload;      /* AUXTRACE / HEADER_TRACING_DATA payload cap; 0 = 64 MiB */
    uint64_t max_header_bytes; /* attrs + ids + feature sections kept; 0 = 64 MiB */
    jitanon_decompress_fn decompress; /* NULL: compressed input is JITANON_ERR_COMPRESSED */
    void *decompress_user;
    uint32_t end_zero_;
} jitanon_perf_opts;

/* One event attribute with the fields an injector needs.  `raw` holds the attr.size bytes
   exactly as in the input (input byte order); `ids` are decoded to host values.  Both are
   owned by the reader (or writer) and live until its _free. */
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
} jitanon_perf_mmap;

/* One record.  Views point into the reader's buffer and stay valid until the next _next
   call; only the member selected by `type` is meaningful. */
typedef struct jitanon_perf_record {
    uint32_t type;
    uint16_t misc, size;  /* the header; size excludes a trailing payload */
    jitanon_bytes raw;    /* the whole record, trailing payload included: copy this */
    uint64_t offset;      /* in the input; for decompressed records: of the COMPRESSED record */
    uint64_t index;       /* 0-based record number */
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
    struct {
        uint64_t time_shift, time_mult, time_zero;
        int extended; /* header.size holds the fields below */
        uint64_t time_cycles, time_mask;
        uint8_t cap_user_time_zero, cap_user_time_short;
    } time_conv;
    struct {
        uint64_t nr;
        int has_vm; /* the machine_pid/vcpu array follows the entries */
        jitanon_bytes entries; /* nr x {id, idx, cpu, tid} u64s */
    } id_index;
    struct {
        uint64_t feat_id;
        jitanon_bytes data;
    } feature; /* HEADER_FEATURE */
} jitanon_perf_record;

/* Counters kept while reading. */
typedef struct jitanon_perf_stats {
    uint64_t records, by_type[128]; /* types >= 128 are counted in records only */
    uint64_t compressed_records;    /* COMPRESSED/COMPRESSED2 decoded through opts.decompress */
    uint64_t first_time, last_time; /* over records that carry a time */
} jitanon_perf_stats;

typedef struct jitanon__perf_idmap {
    uint64_t id;
    size_t attr;
} jitanon__perf_idmap;

typedef struct jitanon__perf_feat {
    uint32_t bit;
    uint64_t offset, size; /* in the input */
    size_t mem_off;        /* in feat_mem_, once loaded */
} jitanon__perf_feat;

/* Streaming reader.  Public fields are read-only. */
typedef struct jitanon_perf_reader {
    jitanon_perf_mode mode;
    int big_endian;                  /* the input's byte order */
    uint64_t features[4];            /* feature bitmap (pipe: HEADER_FEATURE ids seen) */
    uint64_t data_offset, data_size; /* file mode: the data section (size 0, as left by a
                                        killed perf record, gives no records, as in perf) */
    jitanon_perf_attr *attrs;
    size_t attr_count;
    int features_loaded;             /* jitanon_perf_reader_load_features succeeded */
    jitanon_perf_stats stats;
    /* internal */
    jitanon_read_fn read_fn_;
    jitanon_seek_fn seek_fn_;
    void *user_;
    void *file_; /* FILE * opened by jitanon_perf_reader_open */
    jitanon_allocator allocator_;
    uint64_t max_payload_, max_header_bytes_, header_bytes_;
    jitanon_decompress_fn decompress_;
    void *decompress_user_;
    uint8_t *buf_;
    size_t buf_cap_, buf_len_, buf_pos_;
    uint64_t buf_off_; /* input offset of buf_[buf_pos_] */
    int eof_, done_;
    jitanon_membuf dbuf_; /* decompressed bytes not yet delivered */
    size_t dpos_;
    uint64_t doff_;       /* offset of the COMPRESSED record they came from */
    size_t attr_cap_;
    jitanon__perf_idmap *idmap_;
    size_t idmap_len_, idmap_cap_;
    jitanon__perf_feat *feats_;
    size_t feat_count_;
    uint8_t *feat_mem_;
    size_t feat_mem_size_;
    uint64_t next_index_;
} jitanon_perf_reader;

/* Starts reading through callbacks: detects the mode and byte order and reads the file
   header, attrs and ids (file mode) or the pipe header.  seek_fn may be NULL; then a file
   whose attrs or ids lie after the data gives JITANON_ERR_UNSUPPORTED.  Always call
   jitanon_perf_reader_free afterwards, even on error. */
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
   Compressed records give JITANON_ERR_COMPRESSED unless opts.decompress is set; then the
   records inside are delivered instead (from_compressed = 1). */
JITANON_API jitanon_result jitanon_perf_reader_next(jitanon_perf_reader *r, jitanon_perf_record *rec,
                                                    jitanon_error *err);
/* File mode: loads every feature section.  Seekable input: any time (it seeks away and
   back, so the views of the last record become invalid).  Forward-only input: only after
   _next returned JITANON_END (else JITANON_ERR_UNSUPPORTED).  Pipe mode: no-op (features
   arrive as HEADER_FEATURE records).  NOTE: the bitmap of a foreign-order file is read as
   u64 words; perf's fallback for files from 32-bit hosts (u32 words) is not attempted. */
JITANON_API jitanon_result jitanon_perf_reader_load_features(jitanon_perf_reader *r, jitanon_error *err);
/* A loaded feature section (view valid until _free); returns 0 when absent or not loaded. */
JITANON_API int jitanon_perf_reader_feature(const jitanon_perf_reader *r, unsigned bit, jitanon_bytes *out);
/* NULL-safe; closes a file opened by _open. */
JITANON_API void jitanon_perf_reader_free(jitanon_perf_reader *r);

/* "MMAP", "SAMPLE", "HEADER_ATTR", ...; "UNKNOWN" otherwise. */
JITANON_API const char *jitanon_perf_record_name(uint32_t type);
/* The i-th u64 of a view (callchain entries, id_index entries) in the given byte order;
   0 when i is out of range. */
JITANON_API uint64_t jitanon_perf_u64_at(jitanon_bytes b, size_t i, int big_endian);

/* -- perf.data writer ------------------------------------------------------------------

   Writes records in `big_endian` order, which must be the order of the records and attrs
   you pass in (the copy path uses the input's order, so every record is copied verbatim).
   File mode layout: 104-byte header | id arrays | attrs | data | feature table | feature
   payloads; the header is written last through pwrite_fn, so file mode needs one.
   Pipe mode: 16-byte header, then attrs as HEADER_ATTR and features as HEADER_FEATURE
   (TRACING_DATA as HEADER_TRACING_DATA, BUILD_ID as HEADER_BUILD_ID records), as perf
   expects from `perf record -o -`. */

/* Positioned write: write all `size` bytes at absolute `offset`; return 0 on success. */
typedef int (*jitanon_pwrite_fn)(void *user, const void *data, size_t size, uint64_t offset);

typedef struct jitanon_perf_feature {
    uint32_t bit;
    jitanon_bytes data; /* owned by the writer */
} jitanon_perf_feature;

typedef struct jitanon_perf_writer {
    jitanon_perf_mode mode;
    int big_endian;
    uint64_t bytes_written; /* also the current output offset */
    uint64_t records, data_offset, data_size;
    uint32_t features_skipped; /* pipe mode: features too large for one record */
    /* internal */
    jitanon_sink sink_;
    jitanon_pwrite_fn pwrite_fn_;
    jitanon_allocator allocator_;
    uint64_t max_header_bytes_, header_bytes_, attrs_offset_, attr_size_;
    int started_, finished_;
    jitanon_perf_attr *attrs_;
    size_t attr_count_, attr_cap_;
    jitanon_perf_feature *feats_;
    size_t feat_count_, feat_cap_;
} jitanon_perf_writer;

/* Starts a writer.  Pipe mode writes the 16-byte header now.  File mode needs pwrite_fn
   (the same sink's positioned write; it is called once, for the header at offset 0).
   opts may be NULL; only allocator and max_header_bytes are used. */
JITANON_API jitanon_result jitanon_perf_writer_init(jitanon_perf_writer *w, jitanon_perf_mode mode, int big_endian,
                                                    jitanon_sink sink, jitanon_pwrite_fn pwrite_fn,
                                                    const jitanon_perf_opts *opts, jitanon_error *err);
/* Adds an attr (raw bytes and ids are copied).  File mode: before the first record only.
   Pipe mode: writes a HEADER_ATTR record now. */
JITANON_API jitanon_result jitanon_perf_writer_add_attr(jitanon_perf_writer *w, const jitanon_perf_attr *attr,
                                                        jitanon_error *err);
/* Adds a feature section (copied).  File mode: written by _finish.  Pipe mode: written now. */
JITANON_API jitanon_result jitanon_perf_writer_add_feature(jitanon_perf_writer *w, unsigned bit, const void *data,
                                                           size_t size, jitanon_error *err);
/* Writes one record: `size` bytes including any trailing payload (rec.raw). */
JITANON_API jitanon_result jitanon_perf_writer_write(jitanon_perf_writer *w, const void *record, size_t size,
                                                     jitanon_error *err);
/* File mode: writes the feature table and sections and the header.  Pipe mode: nothing
   to do.  The writer cannot be used afterwards except for _free. */
JITANON_API jitanon_result jitanon_perf_writer_finish(jitanon_perf_writer *w, jitanon_error *err);
/* NULL-safe; frees the copies of attrs and features. */
JITANON_API void jitanon_perf_writer_free(jitanon_perf_writer *w);

/* Copies everything `r` has not read yet to `w`, unchanged: attrs, features and records
   (HEADER_ATTR/HEADER_FEATURE records are turned into file sections when converting pipe
   to file, and synthesized when converting file to pipe).  Calls _finish.  With
   opts.decompress set, compressed records come out decompressed and the COMPRESSED
   feature is dropped.  A forward-only file-mode input converted to pipe gets its
   HEADER_FEATURE records at the end (they are not known earlier). */
JITANON_API jitanon_result jitanon_perf_copy(jitanon_perf_reader *r, jitanon_perf_writer *w, jitanon_error *err);

/* Encodes a synthesized MMAP2 record (misc: cpumode, e.g. JITANON_PERF_MISC_USER; the
   build-id variant when m->has_build_id) with a complete sample_id trailer for `attr`:
   pid/tid from m, `time`, `cpu`, and the attr's first id as ID, STREAM_ID and IDENTIFIER,
   each only when attr->sample_type asks for it and attr->sample_id_all is set.  attr may be
   NULL (no trailer).  *out_size gets the record size; when it exceeds `cap`, nothing is
   written and JITANON_ERR_LIMIT is returned (call with buf NULL, cap 0 to measure). */
JITANON_API jitanon_result jitanon_perf_encode_mmap2(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_mmap *m, uint16_t misc, uint64_t time,
                                                     uint32_t cpu, const jitanon_perf_attr *attr, int big_endian,
                                                     jitanon_error *err);
/* Copies an MMAP or MMAP2 record (same type, every other byte including the trailer kept)
   with new start, len and pgoff, e.g. a trimmed piece.  Same size rules as above. */
JITANON_API jitanon_result jitanon_perf_rewrite_mmap(void *buf, size_t cap, size_t *out_size,
                                                     const jitanon_perf_record *rec, uint64_t start, uint64_t len,
                                                     uint64_t pgoff, int big_endian, jitanon_error *err);

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* Atomic output file: a temporary file (O_CREAT|O_EXCL, mode 0644) next to `path`, renamed
   over `path` only by _commit; _abort (or a failed _commit) unlinks it. */
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
                                               const jitanon_allocator *allocator, jitanon_error *err);
/* Sink and positioned write for the writer (user = the jitanon_atomic_file). */
JITANON_API jitanon_sink jitanon_atomic_sink(jitanon_atomic_file *f);
JITANON_API int jitanon_atomic_pwrite(void *file, const void *data, size_t size, uint64_t offset);
/* do_fsync: flush to disk before the rename (only when the platform declares fsync). */
JITANON_API jitanon_result jitanon_atomic_commit(jitanon_atomic_file *f, int do_fsync, jitanon_error *err);
/* NULL-safe, idempotent: removes the temporary file if it still exists. */
JITANON_API void jitanon_atomic_abort(jitanon_atomic_file *f);

/* Copies perf.data `in_path` ("-" = stdin) to `out_path` ("-" = stdout, pipe mode only)
   atomically.  out_mode 0 keeps the input's mode. */
JITANON_API jitanon_result jitanon_perf_copy_file(const char *in_path, const char *out_path, int out_mode,
                                                  const jitanon_perf_opts *opts, jitanon_error *err);
#endif
