/* -- ELF emitter and reader ---------------------------------------------------------------

   Written from the System V gABI (ELF), the DWARF 4 specification (line programs, CIE/FDE),
   the LSB description of .eh_frame_hdr and FIPS 180-4 (SHA-1).  The layout contract with
   perf and V8 is described next to the API. */

#ifdef JITANON_USE_ZLIB
#include <zlib.h>
#endif

#define JITANON__EM_SPARC 2u
#define JITANON__EM_386 3u
#define JITANON__EM_PPC 20u
#define JITANON__EM_ARM 40u
#define JITANON__EM_X86_64 62u
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
#define JITANON__PT_NOTE 4u
#define JITANON__PT_GNU_EH_FRAME 0x6474e550u
#define JITANON__NT_GNU_BUILD_ID 3u
#define JITANON__ELF_MAX_PHDRS 3u
#define JITANON__ELF_MAX_SECTIONS 12u
#define JITANON__ELF_MAX_CIES 8u
#define JITANON__V8_MARKER 0xDEADBEEFu

/* -- SHA-1 (FIPS 180-4, section 6.1) -- */

JITANON__PRIVATE uint32_t jitanon__rol32(uint32_t x, unsigned n) { return (x << n) | (x >> (32u - n)); }

JITANON__PRIVATE void jitanon__sha1_block(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    unsigned i;
    for (i = 0; i < 16; i++) w[i] = jitanon__rd32(p + 4 * i, 1);
    for (; i < 80; i++) w[i] = jitanon__rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (i = 0; i < 80; i++) {
        uint32_t f, k, t;
        if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999u;
        else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1u;
        else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDCu;
        else f = b ^ c ^ d, k = 0xCA62C1D6u;
        t = jitanon__rol32(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = jitanon__rol32(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

JITANON_API void jitanon_sha1_init(jitanon_sha1 *s)
{
    memset(s, 0, sizeof *s);
    s->h[0] = 0x67452301u;
    s->h[1] = 0xEFCDAB89u;
    s->h[2] = 0x98BADCFEu;
    s->h[3] = 0x10325476u;
    s->h[4] = 0xC3D2E1F0u;
}

JITANON_API void jitanon_sha1_update(jitanon_sha1 *s, const void *data, size_t size)
{
    const uint8_t *p = (const uint8_t *)data;
    s->total += size;
    while (size) {
        size_t n = 64 - s->used;
        if (s->used == 0 && size >= 64) { /* whole blocks straight from the input */
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
            jitanon__sha1_block(s->h, s->block);
            s->used = 0;
        }
    }
}

JITANON_API void jitanon_sha1_final(jitanon_sha1 *s, uint8_t digest[20])
{
    uint8_t pad[72];
    uint64_t bits = s->total * 8;
    size_t n = (s->used < 56 ? 56 : 120) - s->used, i;
    memset(pad, 0, sizeof pad);
    pad[0] = 0x80;
    jitanon__wr64(pad + n, bits, 1);
    jitanon_sha1_update(s, pad, n + 8);
    for (i = 0; i < 5; i++) jitanon__wr32(digest + 4 * i, s->h[i], 1);
}

/* -- Output buffers: appends never fail individually; `failed` is checked once. -- */

typedef struct jitanon__ebuf {
    uint8_t *p;
    size_t len, cap;
    const jitanon_allocator *a;
    int failed;
} jitanon__ebuf;

JITANON__PRIVATE void jitanon__eb_bytes(jitanon__ebuf *b, const void *data, size_t n)
{
    if (b->failed) return;
    if (n > SIZE_MAX - b->len || !jitanon__grow(b->a, (void **)&b->p, &b->cap, b->len + n, 1)) {
        b->failed = 1;
        return;
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
}

JITANON__PRIVATE void jitanon__eb_u8(jitanon__ebuf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    jitanon__eb_bytes(b, &x, 1);
}

JITANON__PRIVATE void jitanon__eb_u16(jitanon__ebuf *b, uint64_t v, int big)
{
    uint8_t x[2];
    jitanon__wr16(x, v, big);
    jitanon__eb_bytes(b, x, 2);
}

JITANON__PRIVATE void jitanon__eb_u32(jitanon__ebuf *b, uint64_t v, int big)
{
    uint8_t x[4];
    jitanon__wr32(x, v, big);
    jitanon__eb_bytes(b, x, 4);
}

JITANON__PRIVATE void jitanon__eb_u64(jitanon__ebuf *b, uint64_t v, int big)
{
    uint8_t x[8];
    jitanon__wr64(x, v, big);
    jitanon__eb_bytes(b, x, 8);
}

/* An address or offset field: 8 bytes in ELF64, 4 in ELF32. */
JITANON__PRIVATE void jitanon__eb_word(jitanon__ebuf *b, uint64_t v, int is64, int big)
{
    if (is64) jitanon__eb_u64(b, v, big);
    else jitanon__eb_u32(b, v, big);
}

JITANON__PRIVATE void jitanon__eb_str(jitanon__ebuf *b, const char *s, size_t n)
{
    jitanon__eb_bytes(b, s, n);
    jitanon__eb_u8(b, 0);
}

JITANON__PRIVATE void jitanon__eb_uleb(jitanon__ebuf *b, uint64_t v)
{
    do {
        unsigned byte = (unsigned)(v & 0x7f);
        v >>= 7;
        jitanon__eb_u8(b, v ? byte | 0x80u : byte);
    } while (v);
}

JITANON__PRIVATE void jitanon__eb_sleb(jitanon__ebuf *b, int64_t v)
{
    for (;;) {
        unsigned byte = (unsigned)((uint64_t)v & 0x7f);
        int done;
        v = v < 0 ? -((-(v + 1)) >> 7) - 1 : v >> 7; /* arithmetic shift without relying on it */
        done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        jitanon__eb_u8(b, done ? byte : byte | 0x80u);
        if (done) return;
    }
}

JITANON__PRIVATE void jitanon__eb_free(jitanon__ebuf *b)
{
    jitanon__free(b->a, b->p, b->cap);
    b->p = NULL;
    b->len = b->cap = 0;
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

/* e_machine of the machine this library was compiled for, or 0 if unknown. */
JITANON__PRIVATE uint32_t jitanon__elf_host_machine(void)
{
#if defined(__x86_64__) || defined(_M_X64)
    return JITANON__EM_X86_64;
#elif defined(__aarch64__) || defined(_M_ARM64)
    return 183u;
#elif defined(__riscv)
    return 243u;
#elif defined(__powerpc64__)
    return 21u;
#elif defined(__s390x__)
    return 22u;
#elif defined(__loongarch64)
    return 258u;
#else
    return 0;
#endif
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
        if (!jitanon__opts_ok(opts->begin_zero_, opts->end_zero_))
            return JITANON__FAIL(err, JITANON_ERR_BAD_OPTIONS, 0, "jitanon_elf_opts not zero-initialised");
        b->opts = *opts;
    }
    if (b->opts.compress_debug && !JITANON__HAS_ZLIB)
        return JITANON__FAIL(err, JITANON_ERR_FEATURE_DISABLED, 0, "compress_debug needs JITANON_USE_ZLIB");
    if (b->opts.v8_bias > JITANON_ELF_V8_BIAS_OFF || (b->opts.elf_class && b->opts.elf_class != 32 && b->opts.elf_class != 64))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "bad v8_bias or elf_class option");
    b->machine = b->opts.machine ? b->opts.machine : header->elf_mach;
    if (b->machine > 0xffffu)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 12, "e_machine %u does not fit 16 bits", (unsigned)b->machine);
    b->elf_class = b->opts.elf_class ? b->opts.elf_class : jitanon__elf_class_of(b->machine);
    b->big_endian = header->big_endian;
    is64 = jitanon__elf_is64(b);
    /* Room for every program header we may write, so pgoffs are known at add time. */
    b->text_base = jitanon__align_up(jitanon__elf_ehsize(is64) + JITANON__ELF_MAX_PHDRS * jitanon__elf_phentsize(is64), 16);
    b->text_end = b->text_base;
    if (b->opts.v8_bias == JITANON_ELF_V8_BIAS_ON ||
        (b->opts.v8_bias == JITANON_ELF_V8_BIAS_AUTO && header->pad1 == JITANON__V8_MARKER)) {
        b->bias = jitanon__elf_ehsize(is64); /* V8's kElfHeaderSize */
        b->notes |= JITANON_ELF_NOTE_V8_BIAS;
    }
    return JITANON_OK;
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
    if (fn->debug && fn->debug->id != JITANON_JIT_CODE_DEBUG_INFO)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "debug is not a DEBUG_INFO record");
    if (fn->unwind && fn->unwind->id != JITANON_JIT_CODE_UNWINDING_INFO)
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "unwind is not an UNWINDING_INFO record");
    return JITANON_OK;
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
    /* An empty function still takes a byte of address space so no two share an address. */
    if (!jitanon__add_u64(off, fn->code.size ? fn->code.size : 1, &end) || end > ((uint64_t)1 << 48) ||
        (!jitanon__elf_is64(b) && end > UINT32_MAX / 2))
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "too much code for one ELF file");
    if (!jitanon__grow(&b->opts.allocator, (void **)&b->funcs, &b->cap, b->count + 1, sizeof *b->funcs))
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot grow the function table");
    e = &b->funcs[b->count++];
    memset(e, 0, sizeof *e);
    e->name = fn->name;
    e->code_addr = fn->code_addr;
    e->offset = off;
    e->code = fn->code;
    if (fn->debug && !b->opts.no_debug) {
        e->debug_entries = fn->debug->debug.entries;
        e->debug_count = fn->debug->debug.nr_entry;
    }
    if (fn->unwind && !b->opts.no_unwind) e->eh_frame = fn->unwind->unwind.eh_frame;
    if (jitanon__elf_looks_erlang(fn->name)) b->notes |= JITANON_ELF_NOTE_ERLANG;
    b->text_end = end;
    if (pgoff) *pgoff = off;
    return JITANON_OK;
}

JITANON_API void jitanon_elf_builder_free(jitanon_elf_builder *b)
{
    if (!b) return;
    jitanon__free(&b->opts.allocator, b->funcs, b->cap * sizeof *b->funcs);
    b->funcs = NULL;
    b->count = b->cap = 0;
}

/* -- Finishing: everything a file needs besides the code, built in memory. -- */

typedef struct jitanon__elf_sec {
    uint32_t name, type, link, info;
    uint64_t flags, off, size, align, entsize, addr;
    const jitanon__ebuf *data; /* NULL for .text, written from the function views */
} jitanon__elf_sec;

typedef struct jitanon__elf_row {
    uint64_t off;
    uint32_t line, col, file;
} jitanon__elf_row;

typedef struct jitanon__elfw {
    jitanon_elf_builder *b;
    const jitanon_allocator *a;
    int is64, big;
    jitanon__ebuf eh, hdr, note, sym, str, abbrev, info, line, prog, shstr, head, shdrs;
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
    jitanon__ebuf *bufs[] = {&w->eh, &w->hdr, &w->note, &w->sym, &w->str, &w->abbrev,
                             &w->info, &w->line, &w->prog, &w->shstr, &w->head, &w->shdrs};
    size_t i;
    for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++) jitanon__eb_free(bufs[i]);
    jitanon__free(w->a, w->tab, w->tab_cap * 2 * sizeof *w->tab);
    jitanon__free(w->a, w->files, w->file_cap * sizeof *w->files);
    jitanon__free(w->a, w->hash, w->hash_cap * sizeof *w->hash);
    jitanon__free(w->a, w->rows, w->row_cap * sizeof *w->rows);
}

JITANON__PRIVATE void jitanon__elfw_init(jitanon__elfw *w, jitanon_elf_builder *b)
{
    jitanon__ebuf *bufs[] = {&w->eh, &w->hdr, &w->note, &w->sym, &w->str, &w->abbrev,
                             &w->info, &w->line, &w->prog, &w->shstr, &w->head, &w->shdrs};
    size_t i;
    memset(w, 0, sizeof *w);
    w->b = b;
    w->a = &b->opts.allocator;
    w->is64 = jitanon__elf_is64(b);
    w->big = b->big_endian;
    w->text_idx = 1; /* .text is always the first section; symbols need it early */
    for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++) bufs[i]->a = w->a;
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
    uint8_t *p = w->eh.p + at + 8;
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
    size_t ncie = 0, start = w->eh.len, tab_start = w->tab_n, k;
    int64_t delta = (int64_t)(e->offset + jitanon__align_up(e->code.size, 8)) - (int64_t)(w->eh_off + start);
    while (c.left >= 4) {
        uint64_t pos = c.off;
        uint32_t len = jitanon__get32(&c), id;
        const uint8_t *body;
        if (len == 0) break; /* terminator; one is written at the very end */
        if (len < 4 || len > c.left || !(body = jitanon__take(&c, len))) goto drop;
        id = jitanon__rd32(body, w->big);
        jitanon__eb_bytes(&w->eh, body - 4, (size_t)len + 4);
        if (w->eh.failed) return 0;
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
    w->eh.len = start;
    w->tab_n = tab_start;
    w->b->notes |= JITANON_ELF_NOTE_UNWIND_DROPPED;
    return 0;
}

/* Insertion sort: FDEs arrive in address order almost always. */
JITANON__PRIVATE void jitanon__elf_sort_tab(uint64_t *t, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) {
        uint64_t pc = t[2 * i], fde = t[2 * i + 1];
        for (j = i; j > 0 && t[2 * (j - 1)] > pc; j--) {
            t[2 * j] = t[2 * (j - 1)];
            t[2 * j + 1] = t[2 * (j - 1) + 1];
        }
        t[2 * j] = pc;
        t[2 * j + 1] = fde;
    }
}

/* .eh_frame_hdr (LSB): version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table
   datarel|sdata4 - the same encodings V8 uses, so a single V8 function comes out as it
   went in. */
JITANON__PRIVATE int jitanon__elf_eh_hdr(jitanon__elfw *w)
{
    size_t i;
    jitanon__elf_sort_tab(w->tab, w->tab_n);
    jitanon__eb_u8(&w->hdr, 1);
    jitanon__eb_u8(&w->hdr, 0x1b);
    jitanon__eb_u8(&w->hdr, 0x03);
    jitanon__eb_u8(&w->hdr, 0x3b);
    jitanon__eb_u32(&w->hdr, (uint64_t)((int64_t)w->eh_off - (int64_t)(w->hdr_off + 4)), w->big);
    jitanon__eb_u32(&w->hdr, w->tab_n, w->big);
    for (i = 0; i < 2 * w->tab_n; i++) {
        int64_t rel = (int64_t)w->tab[i] - (int64_t)w->hdr_off;
        if (rel < INT32_MIN || rel > INT32_MAX) return 0;
        jitanon__eb_u32(&w->hdr, (uint64_t)rel, w->big);
    }
    return !w->hdr.failed;
}

JITANON__PRIVATE jitanon_result jitanon__elf_unwind(jitanon__elfw *w, jitanon_error *err)
{
    size_t i;
    w->eh_off = jitanon__align_up(w->b->text_base + w->text_size, 8);
    for (i = 0; i < w->b->count; i++)
        if (w->b->funcs[i].eh_frame.size) jitanon__elf_eh_func(w, &w->b->funcs[i]);
    if (w->eh.failed || w->tab_failed) return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build .eh_frame");
    if (w->tab_n == 0) { /* nothing usable: no unwind sections at all */
        w->eh.len = 0;
        w->hdr_off = w->eh_off;
        return JITANON_OK;
    }
    jitanon__eb_u32(&w->eh, 0, w->big); /* terminator */
    w->hdr_off = jitanon__align_up(w->eh_off + w->eh.len, 4);
    if (!jitanon__elf_eh_hdr(w))
        return JITANON__FAIL(err, w->hdr.failed ? JITANON_ERR_NOMEM : JITANON_ERR_LIMIT, 0, "cannot build .eh_frame_hdr");
    w->out.fdes = w->tab_n;
    return w->eh.failed ? JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build .eh_frame") : JITANON_OK;
}

/* -- Build-id: SHA-1 over tagged, length-prefixed (name, address, code) of every function,
   so it is deterministic and differs whenever any function differs. -- */

JITANON__PRIVATE void jitanon__sha1_u64(jitanon_sha1 *s, uint64_t v)
{
    uint8_t b[8];
    jitanon__wr64(b, v, 0);
    jitanon_sha1_update(s, b, 8);
}

JITANON__PRIVATE void jitanon__elf_build_id(jitanon__elfw *w)
{
    jitanon_sha1 s;
    size_t i;
    jitanon_sha1_init(&s);
    jitanon_sha1_update(&s, "jitanon-elf-1", 14);
    jitanon__sha1_u64(&s, w->b->machine);
    jitanon__sha1_u64(&s, w->b->count);
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        jitanon_sha1_update(&s, "F", 1);
        jitanon__sha1_u64(&s, e->name.length);
        if (e->name.length) jitanon_sha1_update(&s, e->name.data, e->name.length);
        jitanon__sha1_u64(&s, e->code_addr);
        jitanon__sha1_u64(&s, e->code.size);
        if (e->code.size) jitanon_sha1_update(&s, e->code.data, e->code.size);
    }
    jitanon_sha1_final(&s, w->out.build_id);
    jitanon__eb_u32(&w->note, 4, w->big);
    jitanon__eb_u32(&w->note, 20, w->big);
    jitanon__eb_u32(&w->note, JITANON__NT_GNU_BUILD_ID, w->big);
    jitanon__eb_bytes(&w->note, "GNU", 4);
    jitanon__eb_bytes(&w->note, w->out.build_id, 20);
}

/* -- .symtab / .strtab: entry 0, then one LOCAL FUNC per function (sh_info = count + 1). -- */

JITANON__PRIVATE void jitanon__elf_symbol(jitanon__elfw *w, uint64_t name, uint64_t value, uint64_t size, unsigned info,
                                          uint64_t shndx)
{
    jitanon__ebuf *b = &w->sym;
    jitanon__eb_u32(b, name, w->big);
    if (w->is64) {
        jitanon__eb_u8(b, info);
        jitanon__eb_u8(b, 0);
        jitanon__eb_u16(b, shndx, w->big);
        jitanon__eb_u64(b, value, w->big);
        jitanon__eb_u64(b, size, w->big);
    } else {
        jitanon__eb_u32(b, value, w->big);
        jitanon__eb_u32(b, size, w->big);
        jitanon__eb_u8(b, info);
        jitanon__eb_u8(b, 0);
        jitanon__eb_u16(b, shndx, w->big);
    }
}

JITANON__PRIVATE void jitanon__elf_symbols(jitanon__elfw *w)
{
    size_t i;
    jitanon__eb_u8(&w->str, 0);
    jitanon__elf_symbol(w, 0, 0, 0, 0, 0);
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        uint64_t name = w->str.len;
        jitanon__eb_str(&w->str, e->name.data, e->name.length);
        jitanon__elf_symbol(w, name, e->offset, e->code.size, 0x02 /* STB_LOCAL, STT_FUNC */, w->text_idx);
    }
}

/* -- DWARF 4: .debug_line with a real file table, .debug_info with a compile unit and one
   subprogram per function, .debug_abbrev.  Row address = text offset + (entry.addr -
   bias - code_addr).  A row before the function start (BEAM writes the line in effect at
   entry that way) moves to the start; rows at or past the end are dropped. -- */

#define JITANON__DW_LINE_BASE (-5)
#define JITANON__DW_LINE_RANGE 14
#define JITANON__DW_OPCODE_BASE 13

JITANON__PRIVATE uint32_t jitanon__elf_hash_str(jitanon_str s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t i;
    for (i = 0; i < s.length; i++) h = (h ^ (uint8_t)s.data[i]) * 16777619u;
    return h;
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

/* Stable insertion sort by offset: JITs emit rows in order almost always. */
JITANON__PRIVATE void jitanon__elf_sort_rows(jitanon__elf_row *rows, size_t n)
{
    size_t i, j;
    for (i = 1; i < n; i++) {
        jitanon__elf_row r = rows[i];
        for (j = i; j > 0 && rows[j - 1].off > r.off; j--) rows[j] = rows[j - 1];
        rows[j] = r;
    }
}

/* Collects a function's rows into w->rows, sorted by offset.  Slot 0 is reserved for the
   row in effect at entry (the latest one before the start).  Returns the count, or
   SIZE_MAX on allocation failure. */
JITANON__PRIVATE size_t jitanon__elf_rows(jitanon__elfw *w, const jitanon__elf_entry *e)
{
    jitanon_jit_record rec;
    jitanon_jit_debug_iter it;
    jitanon_jit_debug_entry d;
    jitanon__elf_row r, pre;
    size_t n = 1;
    uint64_t start = e->code_addr + w->b->bias, pre_addr = 0;
    int have_pre = 0;
    memset(&rec, 0, sizeof rec);
    memset(&pre, 0, sizeof pre);
    rec.id = JITANON_JIT_CODE_DEBUG_INFO;
    rec.debug.entries = e->debug_entries;
    rec.debug.nr_entry = e->debug_count;
    jitanon_jit_debug_begin(&it, &rec, w->big);
    while (jitanon_jit_debug_next(&it, &d)) {
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
    jitanon__elf_sort_rows(w->rows, n);
    return n;
}

JITANON__PRIVATE void jitanon__elf_set_address(jitanon__elfw *w, uint64_t addr)
{
    jitanon__eb_u8(&w->prog, 0);
    jitanon__eb_uleb(&w->prog, w->is64 ? 9 : 5);
    jitanon__eb_u8(&w->prog, 2); /* DW_LNE_set_address */
    jitanon__eb_word(&w->prog, addr, w->is64, w->big);
}

/* One row: a special opcode when the deltas fit, else advance_line/advance_pc/copy. */
JITANON__PRIVATE void jitanon__elf_row_op(jitanon__ebuf *p, int64_t dline, uint64_t dpc)
{
    if (dline >= JITANON__DW_LINE_BASE && dline < JITANON__DW_LINE_BASE + JITANON__DW_LINE_RANGE && dpc < 256) {
        uint64_t op = (uint64_t)(dline - JITANON__DW_LINE_BASE) + JITANON__DW_LINE_RANGE * dpc + JITANON__DW_OPCODE_BASE;
        if (op <= 255) {
            jitanon__eb_u8(p, (unsigned)op);
            return;
        }
    }
    if (dline) {
        jitanon__eb_u8(p, 3); /* DW_LNS_advance_line */
        jitanon__eb_sleb(p, dline);
    }
    if (dpc) {
        jitanon__eb_u8(p, 2); /* DW_LNS_advance_pc */
        jitanon__eb_uleb(p, dpc);
    }
    jitanon__eb_u8(p, 1); /* DW_LNS_copy */
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
            jitanon__eb_u8(&w->prog, 4); /* DW_LNS_set_file */
            jitanon__eb_uleb(&w->prog, r->file);
            file = r->file;
        }
        if (r->col != col) {
            jitanon__eb_u8(&w->prog, 5); /* DW_LNS_set_column */
            jitanon__eb_uleb(&w->prog, r->col);
            col = r->col;
        }
        jitanon__elf_row_op(&w->prog, (int64_t)r->line - (int64_t)line, e->offset + r->off - pc);
        pc = e->offset + r->off;
        line = r->line;
    }
    if (e->offset + e->code.size > pc) {
        jitanon__eb_u8(&w->prog, 2);
        jitanon__eb_uleb(&w->prog, e->offset + e->code.size - pc);
    }
    jitanon__eb_u8(&w->prog, 0);
    jitanon__eb_uleb(&w->prog, 1);
    jitanon__eb_u8(&w->prog, 1); /* DW_LNE_end_sequence */
    w->out.line_rows += n;
}

JITANON__PRIVATE void jitanon__elf_line_header(jitanon__elfw *w)
{
    static const uint8_t std_lengths[JITANON__DW_OPCODE_BASE - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
    jitanon__ebuf *b = &w->line;
    size_t i, hlen_at, body_at;
    jitanon__eb_u32(b, 0, w->big); /* unit_length, patched */
    jitanon__eb_u16(b, 4, w->big);
    hlen_at = b->len;
    jitanon__eb_u32(b, 0, w->big); /* header_length, patched */
    jitanon__eb_u8(b, 1);          /* minimum_instruction_length */
    jitanon__eb_u8(b, 1);          /* maximum_operations_per_instruction */
    jitanon__eb_u8(b, 1);          /* default_is_stmt */
    jitanon__eb_u8(b, (unsigned)(JITANON__DW_LINE_BASE + 256));
    jitanon__eb_u8(b, JITANON__DW_LINE_RANGE);
    jitanon__eb_u8(b, JITANON__DW_OPCODE_BASE);
    jitanon__eb_bytes(b, std_lengths, sizeof std_lengths);
    jitanon__eb_u8(b, 0); /* no include directories: names are kept whole */
    for (i = 0; i < w->file_n; i++) {
        jitanon__eb_str(b, w->files[i].data, w->files[i].length);
        jitanon__eb_u8(b, 0); /* directory 0, mtime 0, length 0 */
        jitanon__eb_u8(b, 0);
        jitanon__eb_u8(b, 0);
    }
    jitanon__eb_u8(b, 0);
    body_at = b->len;
    jitanon__eb_bytes(b, w->prog.p, w->prog.len);
    if (b->failed) return;
    jitanon__wr32(b->p + hlen_at, body_at - hlen_at - 4, w->big);
    jitanon__wr32(b->p, b->len - 4, w->big);
}

JITANON__PRIVATE void jitanon__elf_abbrev(jitanon__elfw *w)
{
    unsigned high_form = w->is64 ? 0x07u : 0x06u; /* DW_FORM_data8 / data4: a length (DWARF 4) */
    const uint8_t a[] = {1, 0x11, 1, /* compile_unit, children */
                         0x25, 0x08, 0x03, 0x08, 0x11, 0x01, 0x12, (uint8_t)high_form, 0x10, 0x17, 0, 0,
                         2, 0x2e, 0, /* subprogram, no children */
                         0x03, 0x08, 0x11, 0x01, 0x12, (uint8_t)high_form, 0, 0, 0};
    jitanon__eb_bytes(&w->abbrev, a, sizeof a);
}

JITANON__PRIVATE void jitanon__elf_debug_info(jitanon__elfw *w)
{
    jitanon__ebuf *b = &w->info;
    size_t i;
    jitanon__eb_u32(b, 0, w->big); /* unit_length, patched */
    jitanon__eb_u16(b, 4, w->big);
    jitanon__eb_u32(b, 0, w->big); /* .debug_abbrev offset */
    jitanon__eb_u8(b, w->is64 ? 8 : 4);
    jitanon__eb_uleb(b, 1);
    jitanon__eb_str(b, "jitanon " JITANON_VERSION_STRING, strlen("jitanon " JITANON_VERSION_STRING));
    jitanon__eb_str(b, "jitted code", 11);
    jitanon__eb_word(b, w->b->text_base, w->is64, w->big);
    jitanon__eb_word(b, w->text_size, w->is64, w->big);
    jitanon__eb_u32(b, 0, w->big); /* DW_AT_stmt_list */
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        if (!e->code.size) continue;
        jitanon__eb_uleb(b, 2);
        jitanon__eb_str(b, e->name.data, e->name.length);
        jitanon__eb_word(b, e->offset, w->is64, w->big);
        jitanon__eb_word(b, e->code.size, w->is64, w->big);
    }
    jitanon__eb_u8(b, 0);
    if (!b->failed) jitanon__wr32(b->p, b->len - 4, w->big);
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
    jitanon__elf_debug_info(w);
    if (w->prog.failed || w->line.failed || w->abbrev.failed || w->info.failed)
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot build debug sections");
    if (w->line.len > UINT32_MAX - 16 || w->info.len > UINT32_MAX - 16)
        return JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "debug sections exceed 32-bit DWARF");
    *have = 1;
    return JITANON_OK;
}

#ifdef JITANON_USE_ZLIB
/* Replaces `b` by an Elf_Chdr (ELFCOMPRESS_ZLIB) and the zlib stream of its contents. */
JITANON__PRIVATE jitanon_result jitanon__elf_deflate(jitanon__elfw *w, jitanon__ebuf *b, jitanon_error *err)
{
    jitanon__ebuf out;
    uLongf zlen = compressBound((uLong)b->len);
    memset(&out, 0, sizeof out);
    out.a = w->a;
    jitanon__eb_u32(&out, 1, w->big); /* ELFCOMPRESS_ZLIB */
    if (w->is64) jitanon__eb_u32(&out, 0, w->big);
    jitanon__eb_word(&out, b->len, w->is64, w->big);
    jitanon__eb_word(&out, 1, w->is64, w->big);
    if (!out.failed && !jitanon__grow(w->a, (void **)&out.p, &out.cap, out.len + zlen, 1)) out.failed = 1;
    if (out.failed) {
        jitanon__eb_free(&out);
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "cannot allocate the compressed section");
    }
    if ((uLong)b->len != b->len || compress2(out.p + out.len, &zlen, b->p, (uLong)b->len, Z_DEFAULT_COMPRESSION) != Z_OK) {
        jitanon__eb_free(&out);
        return JITANON__FAIL(err, JITANON_ERR_NOMEM, 0, "zlib compress2 failed");
    }
    out.len += zlen;
    jitanon__eb_free(b);
    *b = out;
    return JITANON_OK;
}
#endif

/* -- Section table and layout -- */

JITANON__PRIVATE uint32_t jitanon__elf_add_sec(jitanon__elfw *w, const char *name, uint32_t type, uint64_t flags,
                                              uint64_t align, const jitanon__ebuf *data)
{
    jitanon__elf_sec *s = &w->sec[++w->nsec];
    JITANON_ASSERT(w->nsec < JITANON__ELF_MAX_SECTIONS);
    memset(s, 0, sizeof *s);
    s->name = (uint32_t)w->shstr.len;
    jitanon__eb_str(&w->shstr, name, strlen(name));
    s->type = type;
    s->flags = flags;
    s->align = align;
    s->data = data;
    s->size = data ? data->len : 0;
    return w->nsec;
}

/* Allocated sections first (fixed addresses), then the rest packed after them. */
JITANON__PRIVATE void jitanon__elf_sections(jitanon__elfw *w, int have_debug)
{
    uint64_t dflags = w->b->opts.compress_debug ? JITANON__SHF_COMPRESSED : 0, dalign = dflags ? (w->is64 ? 8u : 4u) : 1u;
    uint32_t i, sym;
    jitanon__eb_u8(&w->shstr, 0);
    jitanon__elf_add_sec(w, ".text", JITANON__SHT_PROGBITS, JITANON__SHF_ALLOC | JITANON__SHF_EXECINSTR, 16, NULL);
    w->sec[w->text_idx].size = w->text_size;
    w->sec[w->text_idx].off = w->b->text_base;
    if (w->eh.len) {
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
        w->sec[i].size = w->sec[i].data->len; /* .shstrtab grew while it was being added */
        w->sec[i].off = jitanon__align_up(w->pos, w->sec[i].align);
        w->pos = w->sec[i].off + w->sec[i].size;
    }
    w->shoff = jitanon__align_up(w->pos, 8);
}

JITANON__PRIVATE void jitanon__elf_shdr(jitanon__elfw *w, const jitanon__elf_sec *s)
{
    jitanon__ebuf *b = &w->shdrs;
    jitanon__eb_u32(b, s->name, w->big);
    jitanon__eb_u32(b, s->type, w->big);
    jitanon__eb_word(b, s->flags, w->is64, w->big);
    jitanon__eb_word(b, s->addr, w->is64, w->big);
    jitanon__eb_word(b, s->off, w->is64, w->big);
    jitanon__eb_word(b, s->size, w->is64, w->big);
    jitanon__eb_u32(b, s->link, w->big);
    jitanon__eb_u32(b, s->info, w->big);
    jitanon__eb_word(b, s->align, w->is64, w->big);
    jitanon__eb_word(b, s->entsize, w->is64, w->big);
}

JITANON__PRIVATE void jitanon__elf_phdr(jitanon__elfw *w, uint32_t type, uint32_t flags, uint64_t off, uint64_t size,
                                        uint64_t align)
{
    jitanon__ebuf *b = &w->head;
    jitanon__eb_u32(b, type, w->big);
    if (w->is64) jitanon__eb_u32(b, flags, w->big);
    jitanon__eb_word(b, off, w->is64, w->big);
    jitanon__eb_word(b, off, w->is64, w->big); /* p_vaddr == p_offset */
    jitanon__eb_word(b, off, w->is64, w->big);
    jitanon__eb_word(b, size, w->is64, w->big);
    jitanon__eb_word(b, size, w->is64, w->big);
    if (!w->is64) jitanon__eb_u32(b, flags, w->big);
    jitanon__eb_word(b, align, w->is64, w->big);
}

JITANON__PRIVATE void jitanon__elf_header(jitanon__elfw *w)
{
    jitanon__ebuf *b = &w->head;
    uint8_t ident[16];
    unsigned phnum = w->eh.len ? 3u : 2u;
    memset(ident, 0, sizeof ident);
    memcpy(ident, "\177ELF", 4);
    ident[4] = w->is64 ? 2 : 1;  /* EI_CLASS */
    ident[5] = w->big ? 2 : 1;   /* EI_DATA */
    ident[6] = 1;                /* EI_VERSION; OSABI 0 = System V */
    jitanon__eb_bytes(b, ident, 16);
    jitanon__eb_u16(b, 3, w->big); /* ET_DYN */
    jitanon__eb_u16(b, w->out.machine, w->big);
    jitanon__eb_u32(b, 1, w->big);
    jitanon__eb_word(b, w->b->text_base, w->is64, w->big);
    jitanon__eb_word(b, jitanon__elf_ehsize(w->is64), w->is64, w->big);
    jitanon__eb_word(b, w->shoff, w->is64, w->big);
    jitanon__eb_u32(b, 0, w->big); /* e_flags */
    jitanon__eb_u16(b, jitanon__elf_ehsize(w->is64), w->big);
    jitanon__eb_u16(b, jitanon__elf_phentsize(w->is64), w->big);
    jitanon__eb_u16(b, phnum, w->big);
    jitanon__eb_u16(b, jitanon__elf_shentsize(w->is64), w->big);
    jitanon__eb_u16(b, w->nsec + 1, w->big);
    jitanon__eb_u16(b, w->nsec, w->big); /* .shstrtab is last */
    /* One PT_LOAD (R+X) over text, unwind tables and the note; then the note and unwind table. */
    jitanon__elf_phdr(w, JITANON__PT_LOAD, 5, w->b->text_base, w->load_end - w->b->text_base, 16);
    jitanon__elf_phdr(w, JITANON__PT_NOTE, 4, w->note_off, w->note.len, 4);
    if (w->eh.len) jitanon__elf_phdr(w, JITANON__PT_GNU_EH_FRAME, 4, w->hdr_off, w->hdr.len, 4);
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
    if ((r = jitanon__elf_put(w, sink, w->head.p, w->head.len, err)) != JITANON_OK) return r;
    for (i = 0; i < w->b->count; i++) {
        const jitanon__elf_entry *e = &w->b->funcs[i];
        if ((r = jitanon__elf_pad_to(w, sink, e->offset, err)) != JITANON_OK ||
            (r = jitanon__elf_put(w, sink, e->code.data, e->code.size, err)) != JITANON_OK)
            return r;
    }
    for (i = w->text_idx + 1; i <= w->nsec; i++) {
        const jitanon__elf_sec *s = &w->sec[i];
        if ((r = jitanon__elf_pad_to(w, sink, s->off, err)) != JITANON_OK ||
            (r = jitanon__elf_put(w, sink, s->data->p, s->data->len, err)) != JITANON_OK)
            return r;
    }
    if ((r = jitanon__elf_pad_to(w, sink, w->shoff, err)) != JITANON_OK) return r;
    return jitanon__elf_put(w, sink, w->shdrs.p, w->shdrs.len, err);
}

JITANON__PRIVATE void jitanon__elf_pick_machine(jitanon__elfw *w)
{
    jitanon_elf_builder *b = w->b;
    uint32_t host = jitanon__elf_host_machine();
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
    if (b->count) {
        const jitanon__elf_entry *last = &b->funcs[b->count - 1];
        w->text_size = last->offset + last->code.size - b->text_base;
    }
    if ((r = jitanon__elf_unwind(w, err)) != JITANON_OK) return r;
    w->note_off = jitanon__align_up(w->eh.len ? w->hdr_off + w->hdr.len : w->b->text_base + w->text_size, 4);
    jitanon__elf_build_id(w);
    w->load_end = w->note_off + w->note.len;
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
    if (w->note.failed || w->sym.failed || w->str.failed || w->shstr.failed || w->shdrs.failed || w->head.failed)
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
    jitanon__elfw_init(&w, b);
    r = jitanon__elf_build(&w, err);
    if (r == JITANON_OK && w.head.len > b->text_base) r = JITANON__FAIL(err, JITANON_ERR_LIMIT, 0, "headers overflow");
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

JITANON_API jitanon_result jitanon_elf_write_function(jitanon_sink sink, const jitanon_jitdump_header *header,
                                                      const jitanon_elf_func *fn, const jitanon_elf_opts *opts,
                                                      jitanon_elf_info *info, jitanon_error *err)
{
    jitanon_elf_builder b;
    jitanon_result r = jitanon_elf_builder_init(&b, header, opts, err);
    if (r == JITANON_OK) r = jitanon_elf_builder_add(&b, fn, NULL, err);
    if (r == JITANON_OK) r = jitanon_elf_builder_finish(&b, sink, info, err);
    jitanon_elf_builder_free(&b);
    return r;
}

/* -- ELF reader ------------------------------------------------------------------------------
   Every header is decoded with explicit byte order from a bounded cursor; parse checks all
   of them once, so the accessors only index. -- */

JITANON__PRIVATE jitanon_result jitanon__elf_bad(jitanon_error *err, uint64_t off, const char *what)
{
    return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off, "ELF: %s", what);
}

/* The table at `off` with `n` entries of `entsize` bytes must lie inside the file. */
JITANON__PRIVATE int jitanon__elf_table_ok(const jitanon_elf_file *f, uint64_t off, uint64_t n, uint64_t entsize)
{
    uint64_t bytes;
    if (n && entsize > UINT64_MAX / n) return 0;
    bytes = n * entsize;
    return off <= f->size && bytes <= f->size - off;
}

JITANON__PRIVATE uint64_t jitanon__elf_getw(jitanon__cur *c, int is64)
{
    return is64 ? jitanon__get64(c) : jitanon__get32(c);
}

JITANON__PRIVATE void jitanon__elf_decode_phdr(const jitanon_elf_file *f, uint32_t i, jitanon_elf_segment *s)
{
    uint64_t entsize = jitanon__elf_phentsize(f->is64);
    jitanon__cur c = jitanon__cur_make(f->data + f->phoff + i * entsize, (size_t)entsize, f->phoff + i * entsize, f->big_endian);
    s->type = jitanon__get32(&c);
    if (f->is64) s->flags = jitanon__get32(&c);
    s->offset = jitanon__elf_getw(&c, f->is64);
    s->vaddr = jitanon__elf_getw(&c, f->is64);
    s->paddr = jitanon__elf_getw(&c, f->is64);
    s->filesz = jitanon__elf_getw(&c, f->is64);
    s->memsz = jitanon__elf_getw(&c, f->is64);
    if (!f->is64) s->flags = jitanon__get32(&c);
    s->align = jitanon__elf_getw(&c, f->is64);
}

/* Decodes section header i without its name. */
JITANON__PRIVATE void jitanon__elf_decode_shdr(const jitanon_elf_file *f, uint32_t i, jitanon_elf_section *s, uint32_t *name)
{
    uint64_t entsize = jitanon__elf_shentsize(f->is64);
    jitanon__cur c = jitanon__cur_make(f->data + f->shoff + i * entsize, (size_t)entsize, f->shoff + i * entsize, f->big_endian);
    memset(s, 0, sizeof *s);
    *name = jitanon__get32(&c);
    s->type = jitanon__get32(&c);
    s->flags = jitanon__elf_getw(&c, f->is64);
    s->addr = jitanon__elf_getw(&c, f->is64);
    s->offset = jitanon__elf_getw(&c, f->is64);
    s->size = jitanon__elf_getw(&c, f->is64);
    s->link = jitanon__get32(&c);
    s->info = jitanon__get32(&c);
    s->addralign = jitanon__elf_getw(&c, f->is64);
    s->entsize = jitanon__elf_getw(&c, f->is64);
    if (s->type != JITANON__SHT_NOBITS && jitanon__elf_table_ok(f, s->offset, 1, s->size)) {
        s->data.data = f->data + s->offset;
        s->data.size = (size_t)s->size;
    }
}

/* Section i fully decoded and checked: bytes inside the file, name inside .shstrtab. */
JITANON__PRIVATE jitanon_result jitanon__elf_load_shdr(const jitanon_elf_file *f, uint32_t i, jitanon_elf_section *s,
                                                       jitanon_error *err)
{
    uint32_t name, strname;
    uint64_t at = f->shoff + (uint64_t)i * jitanon__elf_shentsize(f->is64);
    jitanon_elf_section strs;
    jitanon__cur c;
    jitanon__elf_decode_shdr(f, i, s, &name);
    if (s->type != JITANON__SHT_NOBITS && i != 0 && !jitanon__elf_table_ok(f, s->offset, 1, s->size))
        return jitanon__elf_bad(err, at, "section data lies outside the file");
    s->name.data = "";
    if (f->shstrndx == 0) return JITANON_OK;
    jitanon__elf_decode_shdr(f, f->shstrndx, &strs, &strname);
    if (strs.type == JITANON__SHT_NOBITS || !jitanon__elf_table_ok(f, strs.offset, 1, strs.size))
        return jitanon__elf_bad(err, at, "section name table lies outside the file");
    if (name >= strs.size) return jitanon__elf_bad(err, at, "section name offset is past .shstrtab");
    c = jitanon__cur_make(f->data + strs.offset + name, (size_t)(strs.size - name), strs.offset + name, 0);
    if (!jitanon__take_cstr(&c, &s->name)) return jitanon__elf_bad(err, at, "section name is not NUL-terminated");
    return JITANON_OK;
}

/* Walks the notes of one SHT_NOTE section; remembers the first GNU build-id. */
JITANON__PRIVATE jitanon_result jitanon__elf_notes(jitanon_elf_file *f, const jitanon_elf_section *s, jitanon_error *err)
{
    uint64_t align = s->addralign == 8 ? 8 : 4;
    jitanon__cur c = jitanon__cur_make(s->data.data, s->data.size, s->offset, f->big_endian);
    while (c.left) {
        uint32_t namesz, descsz, type;
        const uint8_t *name, *desc;
        uint64_t at = c.off;
        if (c.left < 12) return jitanon__elf_bad(err, at, "truncated note header");
        namesz = jitanon__get32(&c);
        descsz = jitanon__get32(&c);
        type = jitanon__get32(&c);
        if (!(name = jitanon__take(&c, namesz)) || !jitanon__take(&c, (size_t)(jitanon__align_up(namesz, align) - namesz)))
            return jitanon__elf_bad(err, at, "note name runs past its section");
        if (!(desc = jitanon__take(&c, descsz)))
            return jitanon__elf_bad(err, at, "note descriptor runs past its section");
        if (!jitanon__take(&c, c.left < jitanon__align_up(descsz, align) - descsz ? c.left : (size_t)(jitanon__align_up(descsz, align) - descsz)))
            return jitanon__elf_bad(err, at, "note padding");
        if (type == JITANON__NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 && !f->build_id.size) {
            f->build_id.data = desc;
            f->build_id.size = descsz;
        }
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__elf_ident(jitanon_elf_file *f, jitanon_error *err)
{
    const uint8_t *p = f->data;
    if (f->size < 16 || memcmp(p, "\177ELF", 4) != 0)
        return JITANON__FAIL(err, f->size < 4 ? JITANON_ERR_TRUNCATED : JITANON_ERR_BAD_MAGIC, 0, "not an ELF file");
    if ((p[4] != 1 && p[4] != 2) || (p[5] != 1 && p[5] != 2))
        return jitanon__elf_bad(err, 4, "unknown EI_CLASS or EI_DATA");
    if (p[6] != 1) return JITANON__FAIL(err, JITANON_ERR_BAD_VERSION, 6, "ELF: EI_VERSION is not 1");
    f->is64 = p[4] == 2;
    f->big_endian = p[5] == 2;
    if (f->size < jitanon__elf_ehsize(f->is64))
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, f->size, "ELF header needs %U bytes", jitanon__elf_ehsize(f->is64));
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon__elf_ehdr(jitanon_elf_file *f, jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(f->data + 16, (size_t)jitanon__elf_ehsize(f->is64) - 16, 16, f->big_endian);
    uint32_t phentsize, shentsize;
    f->type = jitanon__get16(&c);
    f->machine = jitanon__get16(&c);
    jitanon__get32(&c); /* e_version */
    f->entry = jitanon__elf_getw(&c, f->is64);
    f->phoff = jitanon__elf_getw(&c, f->is64);
    f->shoff = jitanon__elf_getw(&c, f->is64);
    f->flags = jitanon__get32(&c);
    jitanon__get16(&c); /* e_ehsize */
    phentsize = jitanon__get16(&c);
    f->phnum = jitanon__get16(&c);
    shentsize = jitanon__get16(&c);
    f->shnum = jitanon__get16(&c);
    f->shstrndx = jitanon__get16(&c);
    if (f->phnum && phentsize != jitanon__elf_phentsize(f->is64)) return jitanon__elf_bad(err, 54, "unexpected e_phentsize");
    if (f->shnum && shentsize != jitanon__elf_shentsize(f->is64)) return jitanon__elf_bad(err, 58, "unexpected e_shentsize");
    if (!f->phnum) f->phoff = 0;
    if (!f->shnum && f->shoff)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, 0, "ELF: extended section numbering (e_shnum 0)");
    if (!f->shnum) f->shstrndx = 0;
    if (!jitanon__elf_table_ok(f, f->phoff, f->phnum, phentsize)) return jitanon__elf_bad(err, f->phoff, "program headers lie outside the file");
    if (!jitanon__elf_table_ok(f, f->shoff, f->shnum, shentsize)) return jitanon__elf_bad(err, f->shoff, "section headers lie outside the file");
    if (f->shstrndx && f->shstrndx >= f->shnum) return jitanon__elf_bad(err, 62, "e_shstrndx is out of range");
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_elf_parse(jitanon_elf_file *f, const void *data, size_t size, jitanon_error *err)
{
    jitanon_result r;
    uint32_t i;
    JITANON_ASSERT(f);
    memset(f, 0, sizeof *f);
    jitanon__clear_error(err);
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    f->data = (const uint8_t *)data;
    f->size = size;
    if ((r = jitanon__elf_ident(f, err)) != JITANON_OK || (r = jitanon__elf_ehdr(f, err)) != JITANON_OK) return r;
    for (i = 0; i < f->shnum; i++) {
        jitanon_elf_section s;
        if ((r = jitanon__elf_load_shdr(f, i, &s, err)) != JITANON_OK) return r;
        if (s.type == JITANON__SHT_NOTE && (r = jitanon__elf_notes(f, &s, err)) != JITANON_OK) return r;
    }
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_elf_segment_at(const jitanon_elf_file *f, uint32_t index, jitanon_elf_segment *out,
                                                  jitanon_error *err)
{
    if (index >= f->phnum) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "segment %u does not exist", (unsigned)index);
    jitanon__elf_decode_phdr(f, index, out);
    return JITANON_OK;
}

JITANON_API jitanon_result jitanon_elf_section_at(const jitanon_elf_file *f, uint32_t index, jitanon_elf_section *out,
                                                  jitanon_error *err)
{
    if (index >= f->shnum) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "section %u does not exist", (unsigned)index);
    return jitanon__elf_load_shdr(f, index, out, err);
}

JITANON_API uint32_t jitanon_elf_find_section(const jitanon_elf_file *f, const char *name, jitanon_elf_section *out)
{
    uint32_t i;
    jitanon_elf_section s;
    size_t n = strlen(name);
    for (i = 1; i < f->shnum; i++) {
        if (jitanon__elf_load_shdr(f, i, &s, NULL) != JITANON_OK) continue;
        if (s.name.length == n && memcmp(s.name.data, name, n) == 0) {
            if (out) *out = s;
            return i;
        }
    }
    return 0;
}

JITANON_API uint64_t jitanon_elf_symbol_count(const jitanon_elf_file *f, const jitanon_elf_section *symtab)
{
    uint64_t entsize = f->is64 ? 24 : 16;
    if (symtab->type != JITANON__SHT_SYMTAB && symtab->type != JITANON__SHT_DYNSYM) return 0;
    return symtab->data.size / entsize;
}

JITANON_API jitanon_result jitanon_elf_symbol_at(const jitanon_elf_file *f, const jitanon_elf_section *symtab,
                                                 uint64_t index, jitanon_elf_symbol *out, jitanon_error *err)
{
    uint64_t entsize = f->is64 ? 24 : 16, at;
    uint32_t name;
    jitanon_elf_section strs;
    jitanon__cur c;
    jitanon_result r;
    if (index >= jitanon_elf_symbol_count(f, symtab))
        return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "symbol %U does not exist", index);
    at = symtab->offset + index * entsize;
    c = jitanon__cur_make(symtab->data.data + index * entsize, (size_t)entsize, at, f->big_endian);
    memset(out, 0, sizeof *out);
    name = jitanon__get32(&c);
    if (!f->is64) {
        out->value = jitanon__get32(&c);
        out->size = jitanon__get32(&c);
    }
    out->info = *jitanon__take(&c, 1);
    out->other = *jitanon__take(&c, 1);
    out->shndx = jitanon__get16(&c);
    if (f->is64) {
        out->value = jitanon__get64(&c);
        out->size = jitanon__get64(&c);
    }
    out->name.data = "";
    if (name == 0) return JITANON_OK;
    if (symtab->link == 0 || (r = jitanon_elf_section_at(f, symtab->link, &strs, err)) != JITANON_OK || strs.type != JITANON__SHT_STRTAB)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol table sh_link is not a string table");
    if (name >= strs.data.size) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol name offset is past its table");
    c = jitanon__cur_make(strs.data.data + name, strs.data.size - name, strs.offset + name, 0);
    if (!jitanon__take_cstr(&c, &out->name)) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol name is not NUL-terminated");
    return JITANON_OK;
}
