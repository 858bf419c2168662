/* -- ELF emission and reading ----------------------------------------------------------

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
       ---- one PT_LOAD (R+X) covers text_base .. end of the note ----
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

/* How to treat V8's habit of adding its ELF header size (0x40) to debug-entry addresses
   (it assumes perf's pre-2020 layout).  AUTO recognises V8 by pad1 == 0xDEADBEEF. */
typedef enum jitanon_elf_v8_bias {
    JITANON_ELF_V8_BIAS_AUTO = 0,
    JITANON_ELF_V8_BIAS_ON = 1, /* always subtract the ELF header size */
    JITANON_ELF_V8_BIAS_OFF = 2 /* never */
} jitanon_elf_v8_bias;

/* Things the writer noticed and worked around (jitanon_elf_info.notes). */
enum {
    JITANON_ELF_NOTE_V8_BIAS = 1u << 0,         /* debug addresses had V8's +0x40 removed */
    JITANON_ELF_NOTE_ERLANG = 1u << 1,          /* BEAM dump: it writes EM_X86_64 whatever the host */
    JITANON_ELF_NOTE_MACHINE_FROM_HOST = 1u << 2, /* ...so e_machine was taken from the host instead */
    JITANON_ELF_NOTE_DEBUG_CLIPPED = 1u << 3,   /* debug entries outside the code were moved or dropped */
    JITANON_ELF_NOTE_UNWIND_DROPPED = 1u << 4,  /* unwinding info we cannot rebase was left out */
    JITANON_ELF_NOTE_DEBUG_COMPRESSED = 1u << 5 /* debug sections are SHF_COMPRESSED (zlib) */
};

typedef struct jitanon_elf_opts {
    uint32_t begin_zero_;
    jitanon_allocator allocator;
    uint32_t v8_bias;    /* jitanon_elf_v8_bias */
    uint32_t machine;    /* e_machine to write; 0 = the dump's elf_mach (see NOTE_ERLANG) */
    uint32_t elf_class;  /* 0 = from the machine, else 32 or 64 */
    int compress_debug;  /* zlib-compress .debug_*; needs JITANON_USE_ZLIB, else
                            jitanon_elf_builder_init fails with JITANON_ERR_FEATURE_DISABLED */
    int no_debug;        /* leave out .debug_* even when DEBUG_INFO is given */
    int no_unwind;       /* leave out .eh_frame / .eh_frame_hdr */
    uint32_t end_zero_;
} jitanon_elf_opts;

/* One jitted function.  Every view (and the records' views) must stay valid until
   jitanon_elf_builder_finish: the builder keeps views, never copies of the code. */
typedef struct jitanon_elf_func {
    jitanon_str name;
    uint64_t code_addr;
    jitanon_bytes code;
    const jitanon_jit_record *debug;  /* a CODE_DEBUG_INFO record for it, or NULL */
    const jitanon_jit_record *unwind; /* a CODE_UNWINDING_INFO record for it, or NULL */
} jitanon_elf_func;

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

/* Per-function data the builder keeps (views plus a few numbers). */
typedef struct jitanon__elf_entry {
    jitanon_str name;
    uint64_t code_addr, offset;
    jitanon_bytes code, debug_entries, eh_frame;
    uint64_t debug_count;
} jitanon__elf_entry;

/* Collects functions, then writes one ELF.  Caller-owned; free with
   jitanon_elf_builder_free (also after a failure). */
typedef struct jitanon_elf_builder {
    jitanon_elf_opts opts;
    uint32_t machine, elf_class, notes;
    int big_endian, have_opts;
    uint64_t bias, text_base, text_end;
    jitanon__elf_entry *funcs;
    size_t count, cap;
} jitanon_elf_builder;

/* Starts a file for code described by `header` (machine, class, byte order, V8 detection).
   opts may be NULL.  Fails with JITANON_ERR_BAD_OPTIONS / _FEATURE_DISABLED / _INVALID_ARGUMENT. */
JITANON_API jitanon_result jitanon_elf_builder_init(jitanon_elf_builder *b, const jitanon_jitdump_header *header,
                                                    const jitanon_elf_opts *opts, jitanon_error *err);
/* Adds a function; *pgoff (may be NULL) receives its file offset = address in the file =
   the MMAP2 pgoff.  Functions are laid out in the order added. */
JITANON_API jitanon_result jitanon_elf_builder_add(jitanon_elf_builder *b, const jitanon_elf_func *fn,
                                                   uint64_t *pgoff, jitanon_error *err);
/* Writes the file through `sink` (front to back, no seeking).  info may be NULL.  The
   output depends only on the inputs: the same functions give a byte-identical file. */
JITANON_API jitanon_result jitanon_elf_builder_finish(jitanon_elf_builder *b, jitanon_sink sink,
                                                      jitanon_elf_info *info, jitanon_error *err);
/* NULL-safe. */
JITANON_API void jitanon_elf_builder_free(jitanon_elf_builder *b);

/* One function, one file: init + add + finish + free. */
JITANON_API jitanon_result jitanon_elf_write_function(jitanon_sink sink, const jitanon_jitdump_header *header,
                                                      const jitanon_elf_func *fn, const jitanon_elf_opts *opts,
                                                      jitanon_elf_info *info, jitanon_error *err);

/* SHA-1 (FIPS 180-4), used for build-ids; exposed for tests and embedders. */
typedef struct jitanon_sha1 {
    uint32_t h[5];
    uint8_t block[64];
    size_t used;
    uint64_t total;
} jitanon_sha1;
JITANON_API void jitanon_sha1_init(jitanon_sha1 *s);
JITANON_API void jitanon_sha1_update(jitanon_sha1 *s, const void *data, size_t size);
JITANON_API void jitanon_sha1_final(jitanon_sha1 *s, uint8_t digest[20]);

/* -- ELF reader: bounded reads of any ELF32/ELF64 file of either byte order. -- */

typedef struct jitanon_elf_file {
    const uint8_t *data;
    size_t size;
    int is64, big_endian;
    uint32_t type, machine, flags;
    uint64_t entry, phoff, shoff;
    uint32_t phnum, shnum, shstrndx;
    jitanon_bytes build_id; /* descriptor of the first NT_GNU_BUILD_ID note; size 0 if none */
} jitanon_elf_file;

typedef struct jitanon_elf_segment {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
} jitanon_elf_segment;

typedef struct jitanon_elf_section {
    jitanon_str name;
    uint32_t type, link, info;
    uint64_t flags, addr, offset, size, addralign, entsize;
    jitanon_bytes data; /* the file bytes (empty for SHT_NOBITS) */
} jitanon_elf_section;

typedef struct jitanon_elf_symbol {
    jitanon_str name;
    uint64_t value, size;
    uint8_t info, other; /* type = info & 15, binding = info >> 4 */
    uint32_t shndx;
} jitanon_elf_symbol;

/* Checks the ELF header, every program and section header, every section's bytes and
   name, and every note in SHT_NOTE sections, so the accessors below cannot fail on a
   parsed file except for an index out of range.  Allocates nothing; views point into
   `data`.  Extended section numbering (e_shnum 0) is JITANON_ERR_UNSUPPORTED. */
JITANON_API jitanon_result jitanon_elf_parse(jitanon_elf_file *f, const void *data, size_t size,
                                             jitanon_error *err);
JITANON_API jitanon_result jitanon_elf_segment_at(const jitanon_elf_file *f, uint32_t index,
                                                  jitanon_elf_segment *out, jitanon_error *err);
JITANON_API jitanon_result jitanon_elf_section_at(const jitanon_elf_file *f, uint32_t index,
                                                  jitanon_elf_section *out, jitanon_error *err);
/* Index of the first section called `name`, or 0 when there is none. */
JITANON_API uint32_t jitanon_elf_find_section(const jitanon_elf_file *f, const char *name, jitanon_elf_section *out);
/* Number of entries of a SHT_SYMTAB/SHT_DYNSYM section (0 for anything else). */
JITANON_API uint64_t jitanon_elf_symbol_count(const jitanon_elf_file *f, const jitanon_elf_section *symtab);
/* Symbol `index` of `symtab`; its name comes from the section sh_link names.
   Fails with JITANON_ERR_BAD_RECORD on a bad name offset or link. */
JITANON_API jitanon_result jitanon_elf_symbol_at(const jitanon_elf_file *f, const jitanon_elf_section *symtab,
                                                 uint64_t index, jitanon_elf_symbol *out, jitanon_error *err);
