/* -- Injection: perf.data in -> perf.data out + ELF files ----------------------------------

   What `perf inject --jit` does, with range-aware //anon handling:
   - a marker mmap (basename `jit-<digits>.dump`) makes the injector load that jitdump
     (from the recorded path, else from opts.jitdump_dir) and write ELF files for its
     functions (one per function, or one per process);
   - every CODE_LOAD / CODE_MOVE becomes a synthesized MMAP2 into that ELF, placed in
     timestamp order (before the first input record that is not older), so the output
     keeps its FINISHED_ROUND records and stays valid for perf's round-based sorting;
   - a trimmable mmap (`//anon`, `[anon:`, `/memfd:`) of a process with a jitdump is
     replaced by its parts that do not cover live jitted code (jitanon_trim), so stubs and
     code without a load record keep their `[JIT] tid` / perf-<pid>.map names;
   - every other record passes through unchanged.

   Decisions follow timestamps, not file position: the injector buffers one round (the
   records between two FINISHED_ROUNDs, which perf guarantees need no reordering across)
   and replays it in time order.  Memory is bounded by the jitdumps plus one round. */

typedef enum jitanon_anon_mode {
    JITANON_ANON_RANGE = 0, /* trim trimmable mmaps to what does not cover live jit code */
    JITANON_ANON_ALL = 1,   /* drop them whole once the process has a jitdump (perf's way) */
    JITANON_ANON_KEEP = 2   /* strip nothing */
} jitanon_anon_mode;

typedef enum jitanon_elf_layout {
    JITANON_ELF_PER_FUNCTION = 0, /* jitted-<pid>-<code_index>.so, as perf writes them */
    JITANON_ELF_PER_PROCESS = 1   /* one jitted-<pid>.so holding every function */
} jitanon_elf_layout;

/* Where jitdumps come from and where ELF files go.  The defaults (all NULL) read dumps
   with jitanon_jitdump_load_file and write ELFs atomically with POSIX calls; tests and
   fuzzers plug in memory versions so nothing touches the disk. */
typedef struct jitanon_inject_io {
    /* Loads the dump at `path` (already checked to be named jit-<digits>.dump); NULL on
       failure, with err filled.  Free with jitanon_jitdump_free. */
    jitanon_jitdump *(*load_dump)(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                  jitanon_error *err);
    /* Stores one complete ELF file called `name` (digits, '-', ".so" only) in directory
       `dir`.  Return 0 on success. */
    int (*write_elf)(void *user, const char *dir, const char *name, const void *data, size_t size);
    /* Receives warnings (a dump that cannot be read, a refused file, ...). */
    void (*log)(void *user, const char *message);
    /* Called now and then with input bytes consumed so far. */
    void (*progress)(void *user, uint64_t bytes_done);
    void *user;
} jitanon_inject_io;

/* What a sample resolves to, in time order, after the injection decisions: the answer
   perf report will give for the output (see jitanon_inject_opts.on_sample). */
typedef struct jitanon_sample_info {
    uint32_t pid, tid;
    uint64_t time, ip;
    jitanon_trim_kind kind;  /* JIT: a jitdump function; ANON/FILE: an mmap; NONE */
    jitanon_str name;        /* the function's name, or the mmap's file name */
    uint64_t start;          /* where that function or mapping piece starts */
    uint64_t code_index;     /* JIT only */
} jitanon_sample_info;

typedef struct jitanon_inject_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    uint32_t anon_mode;       /* jitanon_anon_mode */
    uint32_t elf_layout;      /* jitanon_elf_layout */
    const char *elf_dir;      /* where ELF files go; NULL = next to each jitdump, as perf does */
    const char *jitdump_dir;  /* searched for jit-<pid>.dump when the recorded path fails */
    uint64_t max_round_bytes; /* a round larger than this is processed in parts; 0 = 256 MiB */
    jitanon_elf_opts elf;     /* passed to the ELF writer (allocator: ours when unset) */
    jitanon_jitdump_opts jitdump; /* passed to the jitdump loader */
    jitanon_inject_io io;
    /* Called for every SAMPLE with its resolution (user = io.user).  With out == NULL in
       jitanon_inject, nothing is written and no ELF is built: a profiler's symbolizer, the
       way samply reads jitdumps. */
    void (*on_sample)(void *user, const jitanon_sample_info *sample);
    uint32_t end_zero_;
} jitanon_inject_opts;

typedef struct jitanon_inject_stats {
    uint64_t records_in, records_out, samples;
    uint64_t markers, dumps_loaded, dumps_failed;
    uint64_t loads, moves, mmaps_synthesized;
    uint64_t anon_kept, anon_split, anon_dropped, anon_pieces; /* trimmable mmaps of jitdump processes */
    uint64_t elf_files, elf_bytes, elf_refused;
    uint64_t rounds, largest_round_bytes;
} jitanon_inject_stats;

/* Reads every record `in` has not read yet and writes the injected stream to `out`
   (attrs, features, records; then jitanon_perf_writer_finish).  `out` must use the
   input's byte order.  stats may be NULL.  A fatal problem (malformed input, a clock that
   does not match the jitdumps, a write failure) returns an error; a dump that cannot be
   read only leaves its process untouched and is reported through io.log.  `out` may be
   NULL to only resolve samples (opts.on_sample). */
JITANON_API jitanon_result jitanon_inject(jitanon_perf_reader *in, jitanon_perf_writer *out,
                                          const jitanon_inject_opts *opts, jitanon_inject_stats *stats,
                                          jitanon_error *err);

#if !defined(JITANON_NO_STDIO) && defined(__unix__)
/* jitanon_inject from a path ("-" = stdin) to a path ("-" = stdout, pipe mode), the output
   written atomically (temporary file + rename).  out_mode 0 keeps the input's mode.
   Needs POSIX for file output. */
JITANON_API jitanon_result jitanon_inject_file(const char *in_path, const char *out_path, int out_mode,
                                               const jitanon_inject_opts *opts, const jitanon_perf_opts *perf_opts,
                                               jitanon_inject_stats *stats, jitanon_error *err);
#endif

/* 1 when the basename of `path` is jit-<digits>.dump (what perf and we accept as a
   marker); *pid (may be NULL) gets the digits' value. */
JITANON_API int jitanon_is_jitdump_marker(const char *path, size_t len, uint32_t *pid);

/* TSC -> perf time, for dumps written with JITDUMP_FLAGS_ARCH_TIMESTAMP, from the
   PERF_RECORD_TIME_CONV fields (perf-format.md §5.11). */
JITANON_API uint64_t jitanon_tsc_to_perf_time(uint64_t cyc, uint64_t time_shift, uint64_t time_mult,
                                              uint64_t time_zero, int extended, uint64_t time_cycles,
                                              uint64_t time_mask, int cap_user_time_zero, int cap_user_time_short);
