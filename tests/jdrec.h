/* tests/jdrec.h: jitdump headers and records filled the way a JIT fills them (vma = the
   code address), for jitanon_jitdump_writer_init and jitanon_jitdump_write in the unit
   tests and the fuzz seed generator (include it after jitanon.h). */
#ifndef JITANON_TEST_JDREC_H
#define JITANON_TEST_JDREC_H

static inline jitanon_jitdump_header jdrec_header(uint32_t elf_mach, uint32_t pid, uint64_t timestamp, int big_endian)
{
    jitanon_jitdump_header h;
    memset(&h, 0, sizeof h);
    h.elf_mach = elf_mach;
    h.pid = pid;
    h.timestamp = timestamp;
    h.big_endian = big_endian;
    return h;
}

static inline jitanon_jitdump_record jdrec_make(uint32_t id, uint64_t timestamp)
{
    jitanon_jitdump_record r;
    memset(&r, 0, sizeof r);
    r.id = id;
    r.timestamp = timestamp;
    return r;
}

static inline jitanon_jitdump_record jdrec_load(uint64_t timestamp, uint32_t pid, uint32_t tid, uint64_t addr,
                                                const void *code, size_t size, uint64_t index, const char *name)
{
    jitanon_jitdump_record r = jdrec_make(JITANON_JITDUMP_CODE_LOAD, timestamp);
    r.load.pid = pid;
    r.load.tid = tid;
    r.load.vma = r.load.code_addr = addr;
    r.load.code.data = (const uint8_t *)code;
    r.load.code.size = size;
    r.load.code_size = size;
    r.load.code_index = index;
    r.load.name.data = name;
    r.load.name.length = strlen(name);
    return r;
}

static inline jitanon_jitdump_record jdrec_move(uint64_t timestamp, uint32_t pid, uint32_t tid, uint64_t old_addr,
                                                uint64_t new_addr, uint64_t size, uint64_t index)
{
    jitanon_jitdump_record r = jdrec_make(JITANON_JITDUMP_CODE_MOVE, timestamp);
    r.move.pid = pid;
    r.move.tid = tid;
    r.move.vma = r.move.new_code_addr = new_addr;
    r.move.old_code_addr = old_addr;
    r.move.code_size = size;
    r.move.code_index = index;
    return r;
}

static inline jitanon_jitdump_record jdrec_unwind(uint64_t timestamp, const void *eh_frame, size_t eh_frame_size,
                                                  const void *hdr, size_t hdr_size, uint64_t mapped_size)
{
    jitanon_jitdump_record r = jdrec_make(JITANON_JITDUMP_CODE_UNWINDING_INFO, timestamp);
    r.unwind.eh_frame.data = (const uint8_t *)eh_frame;
    r.unwind.eh_frame.size = eh_frame_size;
    r.unwind.eh_frame_hdr.data = (const uint8_t *)hdr;
    r.unwind.eh_frame_hdr.size = hdr_size;
    r.unwind.unwinding_size = (uint64_t)eh_frame_size + hdr_size;
    r.unwind.eh_frame_hdr_size = hdr_size;
    r.unwind.mapped_size = mapped_size;
    return r;
}

/* A sink appending to b. */
static inline jitanon_sink jdrec_sink(jitanon_membuf *b)
{
    jitanon_sink s;
    s.write_fn = jitanon_membuf_write;
    s.user = b;
    return s;
}

/* Starts a dump with the header jdrec_header makes. */
static inline jitanon_result jdrec_begin(jitanon_jitdump_writer *w, jitanon_sink sink, uint32_t elf_mach, uint32_t pid,
                                         uint64_t timestamp, int big_endian, jitanon_error *err)
{
    jitanon_jitdump_header h = jdrec_header(elf_mach, pid, timestamp, big_endian);
    return jitanon_jitdump_writer_init(w, sink, &h, err);
}

/* Writes one record made by the functions above. */
static inline jitanon_result jdrec_write(jitanon_jitdump_writer *w, jitanon_jitdump_record r, jitanon_error *err)
{
    return jitanon_jitdump_write(w, &r, err);
}

#endif
