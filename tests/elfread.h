/* tests/elfread.h: a bounded reader of any ELF32/ELF64 file of either byte order, for the
   unit tests and fuzzers that read back what the ELF builder wrote (jitanon itself never
   reads an ELF).  Include it after the implementation (JITANON_IMPLEMENTATION): it uses
   the internal cursor and byte-order helpers.  Every header is decoded with explicit byte
   order from a bounded cursor; parse checks all of them once, so the accessors only
   index. */
#ifndef JITANON_TEST_ELFREAD_H
#define JITANON_TEST_ELFREAD_H

typedef struct jitanon_test_elf_file {
    const uint8_t *data;
    size_t size;
    int is64, big_endian;
    uint32_t type, machine, flags;
    uint64_t entry, phoff, shoff;
    uint32_t phnum, shnum, shstrndx;
    jitanon_bytes build_id; /* descriptor of the first NT_GNU_BUILD_ID note; size 0 if none */
} jitanon_test_elf_file;

typedef struct jitanon_test_elf_segment {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
} jitanon_test_elf_segment;

typedef struct jitanon_test_elf_section {
    jitanon_str name;
    uint32_t type, link, info;
    uint64_t flags, addr, offset, size, addralign, entsize;
    jitanon_bytes data; /* the file bytes (empty for SHT_NOBITS) */
} jitanon_test_elf_section;

typedef struct jitanon_test_elf_symbol {
    jitanon_str name;
    uint64_t value, size;
    uint8_t info, other; /* type = info & 15, binding = info >> 4 */
    uint32_t shndx;
} jitanon_test_elf_symbol;

JITANON__PRIVATE jitanon_result jitanon_test_elf__bad(jitanon_error *err, uint64_t off, const char *what)
{
    return JITANON__FAIL(err, JITANON_ERR_BAD_HEADER, off, "ELF: %s", what);
}

/* The table at `off` with `n` entries of `entsize` bytes must lie inside the file. */
JITANON__PRIVATE int jitanon_test_elf__table_ok(const jitanon_test_elf_file *f, uint64_t off, uint64_t n, uint64_t entsize)
{
    uint64_t bytes;
    if (n && entsize > UINT64_MAX / n) return 0;
    bytes = n * entsize;
    return off <= f->size && bytes <= f->size - off;
}

JITANON__PRIVATE uint64_t jitanon_test_elf__getw(jitanon__cur *c, int is64)
{
    return is64 ? jitanon__get64(c) : jitanon__get32(c);
}

JITANON__PRIVATE void jitanon_test_elf__decode_phdr(const jitanon_test_elf_file *f, uint32_t i, jitanon_test_elf_segment *s)
{
    uint64_t entsize = jitanon__elf_phentsize(f->is64);
    jitanon__cur c = jitanon__cur_make(f->data + f->phoff + i * entsize, (size_t)entsize, f->phoff + i * entsize, f->big_endian);
    s->type = jitanon__get32(&c);
    if (f->is64) s->flags = jitanon__get32(&c);
    s->offset = jitanon_test_elf__getw(&c, f->is64);
    s->vaddr = jitanon_test_elf__getw(&c, f->is64);
    s->paddr = jitanon_test_elf__getw(&c, f->is64);
    s->filesz = jitanon_test_elf__getw(&c, f->is64);
    s->memsz = jitanon_test_elf__getw(&c, f->is64);
    if (!f->is64) s->flags = jitanon__get32(&c);
    s->align = jitanon_test_elf__getw(&c, f->is64);
}

/* Decodes section header i without its name. */
JITANON__PRIVATE void jitanon_test_elf__decode_shdr(const jitanon_test_elf_file *f, uint32_t i, jitanon_test_elf_section *s, uint32_t *name)
{
    uint64_t entsize = jitanon__elf_shentsize(f->is64);
    jitanon__cur c = jitanon__cur_make(f->data + f->shoff + i * entsize, (size_t)entsize, f->shoff + i * entsize, f->big_endian);
    memset(s, 0, sizeof *s);
    *name = jitanon__get32(&c);
    s->type = jitanon__get32(&c);
    s->flags = jitanon_test_elf__getw(&c, f->is64);
    s->addr = jitanon_test_elf__getw(&c, f->is64);
    s->offset = jitanon_test_elf__getw(&c, f->is64);
    s->size = jitanon_test_elf__getw(&c, f->is64);
    s->link = jitanon__get32(&c);
    s->info = jitanon__get32(&c);
    s->addralign = jitanon_test_elf__getw(&c, f->is64);
    s->entsize = jitanon_test_elf__getw(&c, f->is64);
    if (s->type != JITANON__SHT_NOBITS && jitanon_test_elf__table_ok(f, s->offset, 1, s->size)) {
        s->data.data = f->data + s->offset;
        s->data.size = (size_t)s->size;
    }
}

/* Section i fully decoded and checked: bytes inside the file, name inside .shstrtab. */
JITANON__PRIVATE jitanon_result jitanon_test_elf__load_shdr(const jitanon_test_elf_file *f, uint32_t i, jitanon_test_elf_section *s,
                                                       jitanon_error *err)
{
    uint32_t name, strname;
    uint64_t at = f->shoff + (uint64_t)i * jitanon__elf_shentsize(f->is64);
    jitanon_test_elf_section strs;
    jitanon__cur c;
    jitanon_test_elf__decode_shdr(f, i, s, &name);
    if (s->type != JITANON__SHT_NOBITS && i != 0 && !jitanon_test_elf__table_ok(f, s->offset, 1, s->size))
        return jitanon_test_elf__bad(err, at, "section data lies outside the file");
    s->name.data = "";
    if (f->shstrndx == 0) return JITANON_OK;
    jitanon_test_elf__decode_shdr(f, f->shstrndx, &strs, &strname);
    if (strs.type == JITANON__SHT_NOBITS || !jitanon_test_elf__table_ok(f, strs.offset, 1, strs.size))
        return jitanon_test_elf__bad(err, at, "section name table lies outside the file");
    if (name >= strs.size) return jitanon_test_elf__bad(err, at, "section name offset is past .shstrtab");
    c = jitanon__cur_make(f->data + strs.offset + name, (size_t)(strs.size - name), strs.offset + name, 0);
    if (!jitanon__take_cstr(&c, &s->name)) return jitanon_test_elf__bad(err, at, "section name is not NUL-terminated");
    return JITANON_OK;
}

/* Walks the notes of one SHT_NOTE section; remembers the first GNU build-id. */
JITANON__PRIVATE jitanon_result jitanon_test_elf__notes(jitanon_test_elf_file *f, const jitanon_test_elf_section *s, jitanon_error *err)
{
    uint64_t align = s->addralign == 8 ? 8 : 4;
    jitanon__cur c = jitanon__cur_make(s->data.data, s->data.size, s->offset, f->big_endian);
    while (c.left) {
        uint32_t namesz, descsz, type;
        const uint8_t *name, *desc;
        uint64_t at = c.off;
        if (c.left < 12) return jitanon_test_elf__bad(err, at, "truncated note header");
        namesz = jitanon__get32(&c);
        descsz = jitanon__get32(&c);
        type = jitanon__get32(&c);
        if (!(name = jitanon__take(&c, namesz)) || !jitanon__take(&c, (size_t)(jitanon__align_up(namesz, align) - namesz)))
            return jitanon_test_elf__bad(err, at, "note name runs past its section");
        if (!(desc = jitanon__take(&c, descsz)))
            return jitanon_test_elf__bad(err, at, "note descriptor runs past its section");
        if (!jitanon__take(&c, c.left < jitanon__align_up(descsz, align) - descsz ? c.left : (size_t)(jitanon__align_up(descsz, align) - descsz)))
            return jitanon_test_elf__bad(err, at, "note padding");
        if (type == JITANON__NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 && !f->build_id.size) {
            f->build_id.data = desc;
            f->build_id.size = descsz;
        }
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon_test_elf__ident(jitanon_test_elf_file *f, jitanon_error *err)
{
    const uint8_t *p = f->data;
    if (f->size < 16 || memcmp(p, "\177ELF", 4) != 0)
        return JITANON__FAIL(err, f->size < 4 ? JITANON_ERR_TRUNCATED : JITANON_ERR_BAD_MAGIC, 0, "not an ELF file");
    if ((p[4] != 1 && p[4] != 2) || (p[5] != 1 && p[5] != 2))
        return jitanon_test_elf__bad(err, 4, "unknown EI_CLASS or EI_DATA");
    if (p[6] != 1) return JITANON__FAIL(err, JITANON_ERR_BAD_VERSION, 6, "ELF: EI_VERSION is not 1");
    f->is64 = p[4] == 2;
    f->big_endian = p[5] == 2;
    if (f->size < jitanon__elf_ehsize(f->is64))
        return JITANON__FAIL(err, JITANON_ERR_TRUNCATED, f->size, "ELF header needs %U bytes", jitanon__elf_ehsize(f->is64));
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon_test_elf__ehdr(jitanon_test_elf_file *f, jitanon_error *err)
{
    jitanon__cur c = jitanon__cur_make(f->data + 16, (size_t)jitanon__elf_ehsize(f->is64) - 16, 16, f->big_endian);
    uint32_t phentsize, shentsize;
    f->type = jitanon__get16(&c);
    f->machine = jitanon__get16(&c);
    jitanon__get32(&c); /* e_version */
    f->entry = jitanon_test_elf__getw(&c, f->is64);
    f->phoff = jitanon_test_elf__getw(&c, f->is64);
    f->shoff = jitanon_test_elf__getw(&c, f->is64);
    f->flags = jitanon__get32(&c);
    jitanon__get16(&c); /* e_ehsize */
    phentsize = jitanon__get16(&c);
    f->phnum = jitanon__get16(&c);
    shentsize = jitanon__get16(&c);
    f->shnum = jitanon__get16(&c);
    f->shstrndx = jitanon__get16(&c);
    if (f->phnum && phentsize != jitanon__elf_phentsize(f->is64)) return jitanon_test_elf__bad(err, 54, "unexpected e_phentsize");
    if (f->shnum && shentsize != jitanon__elf_shentsize(f->is64)) return jitanon_test_elf__bad(err, 58, "unexpected e_shentsize");
    if (!f->phnum) f->phoff = 0;
    if (!f->shnum && f->shoff)
        return JITANON__FAIL(err, JITANON_ERR_UNSUPPORTED, 0, "ELF: extended section numbering (e_shnum 0)");
    if (!f->shnum) f->shstrndx = 0;
    if (!jitanon_test_elf__table_ok(f, f->phoff, f->phnum, phentsize)) return jitanon_test_elf__bad(err, f->phoff, "program headers lie outside the file");
    if (!jitanon_test_elf__table_ok(f, f->shoff, f->shnum, shentsize)) return jitanon_test_elf__bad(err, f->shoff, "section headers lie outside the file");
    if (f->shstrndx && f->shstrndx >= f->shnum) return jitanon_test_elf__bad(err, 62, "e_shstrndx is out of range");
    return JITANON_OK;
}

/* Checks the ELF header, every program and section header, every section's bytes and
   name, and every note in SHT_NOTE sections, so the accessors below cannot fail on a
   parsed file except for an index out of range.  Allocates nothing; views point into
   `data`.  Extended section numbering (e_shnum 0) is JITANON_ERR_UNSUPPORTED. */
JITANON__PRIVATE jitanon_result jitanon_test_elf_parse(jitanon_test_elf_file *f, const void *data, size_t size, jitanon_error *err)
{
    jitanon_result r;
    uint32_t i;
    JITANON_ASSERT(f);
    memset(f, 0, sizeof *f);
    jitanon__clear_error(err);
    if (!data && size) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "NULL data");
    f->data = (const uint8_t *)data;
    f->size = size;
    if ((r = jitanon_test_elf__ident(f, err)) != JITANON_OK || (r = jitanon_test_elf__ehdr(f, err)) != JITANON_OK) return r;
    for (i = 0; i < f->shnum; i++) {
        jitanon_test_elf_section s;
        if ((r = jitanon_test_elf__load_shdr(f, i, &s, err)) != JITANON_OK) return r;
        if (s.type == JITANON__SHT_NOTE && (r = jitanon_test_elf__notes(f, &s, err)) != JITANON_OK) return r;
    }
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon_test_elf_segment_at(const jitanon_test_elf_file *f, uint32_t index, jitanon_test_elf_segment *out,
                                                  jitanon_error *err)
{
    if (index >= f->phnum) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "segment %u does not exist", (unsigned)index);
    jitanon_test_elf__decode_phdr(f, index, out);
    return JITANON_OK;
}

JITANON__PRIVATE jitanon_result jitanon_test_elf_section_at(const jitanon_test_elf_file *f, uint32_t index, jitanon_test_elf_section *out,
                                                  jitanon_error *err)
{
    if (index >= f->shnum) return JITANON__FAIL(err, JITANON_ERR_INVALID_ARGUMENT, 0, "section %u does not exist", (unsigned)index);
    return jitanon_test_elf__load_shdr(f, index, out, err);
}

/* Index of the first section called `name`, or 0 when there is none. */
JITANON__PRIVATE uint32_t jitanon_test_elf_find_section(const jitanon_test_elf_file *f, const char *name, jitanon_test_elf_section *out)
{
    uint32_t i;
    jitanon_test_elf_section s;
    size_t n = strlen(name);
    for (i = 1; i < f->shnum; i++) {
        if (jitanon_test_elf__load_shdr(f, i, &s, NULL) != JITANON_OK) continue;
        if (s.name.length == n && memcmp(s.name.data, name, n) == 0) {
            if (out) *out = s;
            return i;
        }
    }
    return 0;
}

/* Number of entries of a SHT_SYMTAB/SHT_DYNSYM section (0 for anything else). */
JITANON__PRIVATE uint64_t jitanon_test_elf_symbol_count(const jitanon_test_elf_file *f, const jitanon_test_elf_section *symtab)
{
    uint64_t entsize = f->is64 ? 24 : 16;
    if (symtab->type != JITANON__SHT_SYMTAB && symtab->type != JITANON__SHT_DYNSYM) return 0;
    return symtab->data.size / entsize;
}

/* Symbol `index` of `symtab`; its name comes from the section sh_link names.
   Fails with JITANON_ERR_BAD_RECORD on a bad name offset or link. */
JITANON__PRIVATE jitanon_result jitanon_test_elf_symbol_at(const jitanon_test_elf_file *f, const jitanon_test_elf_section *symtab,
                                                 uint64_t index, jitanon_test_elf_symbol *out, jitanon_error *err)
{
    uint64_t entsize = f->is64 ? 24 : 16, at;
    uint32_t name;
    jitanon_test_elf_section strs;
    jitanon__cur c;
    jitanon_result r;
    if (index >= jitanon_test_elf_symbol_count(f, symtab))
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
    if (symtab->link == 0 || (r = jitanon_test_elf_section_at(f, symtab->link, &strs, err)) != JITANON_OK || strs.type != JITANON__SHT_STRTAB)
        return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol table sh_link is not a string table");
    if (name >= strs.data.size) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol name offset is past its table");
    c = jitanon__cur_make(strs.data.data + name, strs.data.size - name, strs.offset + name, 0);
    if (!jitanon__take_cstr(&c, &out->name)) return JITANON__FAIL(err, JITANON_ERR_BAD_RECORD, at, "ELF: symbol name is not NUL-terminated");
    return JITANON_OK;
}

#endif
