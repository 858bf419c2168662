/* libFuzzer harness: jitdump -> ELF -> our ELF reader.

   The input is a jitdump.  For every CODE_LOAD (with the DEBUG_INFO and UNWINDING_INFO
   records that came after the previous LOAD, as perf pairs them) one ELF is written into
   memory, and one per-process ELF holds every function; the writer options (V8 bias,
   ELF class, no_debug, no_unwind) are picked from a hash of the input.  Each file is read
   back with jitanon_test_elf_parse (tests/elfread.h) and must keep the invariants of src/elf.api.h:

   - .text file offset == symbol st_value == the pgoff the builder returned, the PT_LOAD
     that covers the code has p_vaddr == p_offset, and the code bytes are there unchanged;
   - symbol size == code size, symbol name == the load's name, one symbol per function;
   - the build-id note matches jitanon_elf_info, and the per-process file is byte-identical
     when built again with the code streamed (jitanon_elf_builder_stream_code; or a typed
     error when the code source is made to fail).

   The raw input itself also goes through jitanon_test_elf_parse and every accessor.  Nothing
   is written anywhere. */
#define JITANON_MAX_RECORD_SIZE (1u << 20)
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "../tests/elfread.h"
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_MAX_PER_FUNCTION 32u /* per-function files per input */
#define FUZZ_MAX_FUNCS 2048u      /* functions in the per-process file */
#define FUZZ_OUT_CAP ((size_t)32 << 20)

#define FUZZ_NAME "fuzz_elf"
#include "fuzz_common.h"

static int is_typed_error(jitanon_result r) { return r > JITANON_AGAIN && r < JITANON_RESULT_COUNT; }

/* Walks every accessor of a parsed file; returns the index of .symtab (0 = none). */
static uint32_t walk(const jitanon_test_elf_file *f)
{
    uint32_t i, symtab = 0;
    jitanon_error err;
    jitanon_test_elf_section s;
    fuzz_view(f->build_id.data, f->build_id.size, f->data, f->size);
    for (i = 0; i < f->phnum; i++) {
        jitanon_test_elf_segment g;
        CHECK(jitanon_test_elf_segment_at(f, i, &g, &err) == JITANON_OK);
    }
    {
        jitanon_test_elf_segment g;
        CHECK(jitanon_test_elf_segment_at(f, f->phnum, &g, &err) != JITANON_OK);
    }
    for (i = 0; i < f->shnum; i++) {
        uint64_t k, n;
        CHECK(jitanon_test_elf_section_at(f, i, &s, &err) == JITANON_OK);
        fuzz_view(s.data.data, s.data.size, f->data, f->size);
        fuzz_view(s.name.data, s.name.length, f->data, f->size);
        n = jitanon_test_elf_symbol_count(f, &s);
        if (n && !symtab && s.type == 2) symtab = i;
        for (k = 0; k < n && k < 4096; k++) {
            jitanon_test_elf_symbol sym;
            jitanon_result r = jitanon_test_elf_symbol_at(f, &s, k, &sym, &err);
            CHECK(r == JITANON_OK || r == JITANON_ERR_BAD_RECORD);
            if (r == JITANON_OK) fuzz_view(sym.name.data, sym.name.length, f->data, f->size);
        }
        {
            jitanon_test_elf_symbol sym;
            CHECK(jitanon_test_elf_symbol_at(f, &s, n, &sym, &err) != JITANON_OK);
        }
    }
    if (jitanon_test_elf_find_section(f, ".text", &s)) fuzz_view(s.data.data, s.data.size, f->data, f->size);
    (void)jitanon_test_elf_find_section(f, "", NULL);
    return symtab;
}

typedef struct placed {
    const jitanon_jitdump_record *load;
    uint64_t pgoff;
} placed;

/* Checks one of our files holding `n` functions at the given offsets. */
static void check_ours(const jitanon_membuf *out, const jitanon_elf_info *info, const placed *fn, size_t n)
{
    jitanon_test_elf_file f;
    jitanon_test_elf_section text, symtab;
    jitanon_error err;
    uint32_t i, sidx;
    size_t k;
    int have_text;
    CHECK(jitanon_test_elf_parse(&f, out->data, out->size, &err) == JITANON_OK);
    CHECK(info->file_size == out->size);
    CHECK(info->functions == n);
    CHECK(f.is64 == (info->elf_class == 64));
    CHECK(f.big_endian == info->big_endian);
    CHECK(f.machine == info->machine);
    CHECK(f.build_id.size == 20 && memcmp(f.build_id.data, info->build_id, 20) == 0);
    sidx = walk(&f);
    CHECK(sidx != 0);
    CHECK(jitanon_test_elf_section_at(&f, sidx, &symtab, &err) == JITANON_OK);
    CHECK(jitanon_test_elf_symbol_count(&f, &symtab) == n + 1);
    have_text = jitanon_test_elf_find_section(&f, ".text", &text) != 0;
    CHECK(have_text);
    CHECK(text.offset == info->text_offset && text.addr == text.offset);
    CHECK(n == 0 || fn[0].pgoff == info->text_offset);
    for (k = 0; k < n; k++) {
        const jitanon_jitdump_record *ld = fn[k].load;
        uint64_t pg = fn[k].pgoff, size = ld->load.code.size;
        jitanon_test_elf_symbol sym;
        int covered = 0;
        CHECK(pg % 16 == 0);
        CHECK(k == 0 || pg >= fn[k - 1].pgoff + (fn[k - 1].load->load.code.size ? fn[k - 1].load->load.code.size : 1));
        CHECK(pg >= text.offset && pg - text.offset <= text.size && size <= text.size - (pg - text.offset));
        CHECK(pg + size <= info->text_end);
        CHECK(memcmp(out->data + pg, ld->load.code.data, (size_t)size) == 0 || size == 0);
        CHECK(jitanon_test_elf_symbol_at(&f, &symtab, k + 1, &sym, &err) == JITANON_OK);
        CHECK(sym.value == pg && sym.size == size && (sym.info & 15) == 2);
        CHECK(sym.name.length == ld->load.name.length &&
              (sym.name.length == 0 || memcmp(sym.name.data, ld->load.name.data, sym.name.length) == 0));
        for (i = 0; i < f.phnum; i++) {
            jitanon_test_elf_segment g;
            CHECK(jitanon_test_elf_segment_at(&f, i, &g, &err) == JITANON_OK);
            if (g.type != 1) continue;
            CHECK(g.vaddr == g.offset);
            if (g.offset <= pg && pg - g.offset <= g.filesz && size <= g.filesz - (pg - g.offset)) covered = 1;
        }
        CHECK(covered);
    }
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void elf_options(jitanon_elf_opts *o, uint64_t h)
{
    static const uint32_t classes[3] = {0, 32, 64};
    static const uint32_t biases[3] = {JITANON_ELF_LINE_BIAS_AUTO, JITANON_ELF_LINE_BIAS_PERF, JITANON_ELF_LINE_BIAS_NONE};
    memset(o, 0, sizeof *o);
    o->line_bias = biases[h % 3];
    o->elf_class = classes[(h >> 2) % 3];
    o->no_debug = (h >> 4 & 7) == 0;
    o->no_unwind = (h >> 7 & 7) == 0;
    if ((h >> 10 & 7) == 0) o->machine = (uint32_t)(h >> 13 & 0xff);
}

/* The code of a streamed build, from the loaded dump; fails at function `fail_at`. */
typedef struct code_src {
    const jitanon_elf_func *fns;
    size_t next, fail_at;
} code_src;

static int code_again(void *user, size_t index, jitanon_bytes *code)
{
    code_src *c = (code_src *)user;
    CHECK(index == c->next);
    c->next++;
    if (index == c->fail_at) return 1;
    *code = c->fns[index].code;
    return 0;
}

static jitanon_result build(const jitanon_jitdump *d, const jitanon_elf_opts *o, const jitanon_elf_func *fns,
                            placed *pl, size_t n, jitanon_membuf *out, jitanon_elf_info *info, code_src *stream)
{
    jitanon_elf_builder b;
    jitanon_sink sink;
    jitanon_error err;
    jitanon_result r;
    size_t i;
    sink = fuzz_sink(out, FUZZ_OUT_CAP);
    memset(info, 0, sizeof *info);
    r = jitanon_elf_builder_init(&b, &d->header, o, &err);
    if (r == JITANON_OK && stream) jitanon_elf_builder_stream_code(&b, code_again, stream);
    for (i = 0; r == JITANON_OK && i < n; i++) r = jitanon_elf_builder_add(&b, &fns[i], &pl[i].pgoff, &err);
    if (r == JITANON_OK) r = jitanon_elf_builder_finish(&b, sink, info, &err);
    jitanon_elf_builder_release(&b);
    CHECK(r == JITANON_OK || is_typed_error(r));
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jitanon_jitdump_opts jo;
    jitanon_jitdump *d;
    jitanon_error err;
    jitanon_test_elf_file raw;
    jitanon_elf_opts o;
    jitanon_elf_func *fns;
    placed *pl;
    const jitanon_jitdump_record *debug = NULL, *unwind = NULL;
    size_t i, n = 0;
    uint64_t h = fnv(data, size);

    if (jitanon_test_elf_parse(&raw, data, size, &err) == JITANON_OK) (void)walk(&raw);

    memset(&jo, 0, sizeof jo);
    jo.memory_limit = 64u << 20;
    jo.max_record_size = 1u << 20;
    if (jitanon_jitdump_load_memory(data, size, &jo, &d, &err) != JITANON_OK) return 0;
    fns = (jitanon_elf_func *)calloc(FUZZ_MAX_FUNCS, sizeof *fns);
    pl = (placed *)calloc(FUZZ_MAX_FUNCS, sizeof *pl);
    CHECK(fns && pl);
    for (i = 0; i < d->record_count && n < FUZZ_MAX_FUNCS; i++) {
        const jitanon_jitdump_record *rec = &d->records[i];
        if (rec->id == JITANON_JITDUMP_CODE_DEBUG_INFO) debug = rec;
        if (rec->id == JITANON_JITDUMP_CODE_UNWINDING_INFO) unwind = rec;
        if (rec->id != JITANON_JITDUMP_CODE_LOAD) continue;
        CHECK(rec->load.code.size == rec->load.code_size);
        fns[n].name = rec->load.name;
        fns[n].code_addr = rec->load.code_addr;
        fns[n].code = rec->load.code;
        fns[n].debug = debug;
        fns[n].unwind = unwind;
        pl[n].load = rec;
        n++;
        debug = unwind = NULL;
    }

    /* One file per function (the first few). */
    elf_options(&o, h);
    for (i = 0; i < n && i < FUZZ_MAX_PER_FUNCTION; i++) {
        jitanon_membuf out;
        jitanon_elf_info info;
        if (build(d, &o, &fns[i], &pl[i], 1, &out, &info, NULL) == JITANON_OK) check_ours(&out, &info, &pl[i], 1);
        jitanon_membuf_release(&out);
    }

    /* One file for the process, built twice: the output must be deterministic. */
    elf_options(&o, h >> 20);
    if (n) {
        jitanon_membuf out, again;
        jitanon_elf_info info, info2;
        if (build(d, &o, fns, pl, n, &out, &info, NULL) == JITANON_OK) {
            code_src src;
            jitanon_result r;
            check_ours(&out, &info, pl, n);
            src.fns = fns;
            src.next = 0;
            src.fail_at = h >> 40 & 1 ? (size_t)(h >> 41) % n : (size_t)-1;
            r = build(d, &o, fns, pl, n, &again, &info2, &src);
            if (src.fail_at == (size_t)-1) {
                CHECK(r == JITANON_OK && src.next == n);
                CHECK(again.size == out.size && memcmp(again.data, out.data, out.size) == 0);
            } else CHECK(r == JITANON_ERR_IO);
            jitanon_membuf_release(&again);
        }
        jitanon_membuf_release(&out);
    }
    free(fns);
    free(pl);
    jitanon_jitdump_destroy(d);
    return 0;
}
