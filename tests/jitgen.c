/* jitgen: writes a synthetic but realistic `perf record -k mono -e cpu-clock` perf.data
   plus the matching jitdump of a node-like JIT, for benchmarks and stress tests.

   jitgen [--samples N] [--loads M] [--pages P] [--chunk-pages C] [--anon page|load|chunk]
          [--pid PID] [--seed S] [--duration-ms T] [--debug-every K] [--unwind-every K]
          [--round R] [--line-bias B] [--quiet] DIR

   Writes DIR/perf.data (file mode, through jitanon's perf writer) and DIR/jit-PID.dump.
   The perf.data looks like what perf 6.1 records for `perf record -k mono -e cpu-clock
   node --perf-prof app.js`:
   - one attr: software cpu-clock, freq 4000, sample_type IP|TID|TIME|PERIOD,
     read_format ID|LOST, sample_id_all, mmap2, comm_exec, use_clockid, clockid 1 (MONOTONIC);
   - COMM/MMAP2 of the (fake) node binary and libc, FORK/COMM of two worker threads;
   - the marker MMAP2 of DIR/jit-PID.dump (absolute path, r-x, one page);
   - the code space is made of chunks of C pages (--chunk-pages, default 64 = V8's 256 KiB)
     separated by guard pages; functions are allocated one after the other (32-byte
     aligned, with an unlogged stub now and then); the //anon MMAP2s depend on --anon:
       page (default): a chunk is committed a page at a time (mprotect r-x), and each
         commit makes the kernel report one r-x //anon covering every committed page of
         the chunk: coalescing mmaps, timestamped after the earlier loads they cover;
       load: the same, but one before every load (a W^X JIT toggling protections);
       chunk: one rwx //anon per chunk when it is created (what node 20 does here).
     A huge --chunk-pages with --anon page is tinyjit's single growing region;
   - samples spread over jitted functions (skewed to hot ones and to recent ones), stubs
     (code between functions that has no LOAD record) and the binary;
   - FINISHED_ROUND every R records; EXIT at the end.
   The jitdump holds CODE_LOADs (100..2000 bytes, names as node 20 writes them), with a
   DEBUG_INFO before every K-th and an UNWINDING_INFO (V8's .eh_frame layout) before every
   K-th, then CODE_CLOSE.  --line-bias B adds B to every DEBUG_INFO address, as V8 and
   LLVM's PerfJITEventListener add 0x40 (the data is otherwise the same for a seed).  With --pages P the code space holds P/C chunks; code beyond it
   wraps around to the first chunk, as a moving GC reuses it.

   `--loads 45000 --samples 200000` is about the size of an 8 s node --perf-prof run.

   --arch arm64: a recording of an arm64 machine (HEADER_ARCH aarch64, dumps with e_machine
   183, functions of A64 words between stp x29, x30 / ret, V8's arm64 .eh_frame).
   --page-size B: the kernel's page size (commits, the marker mapping; 65536 for arm64
   kernels with 64 KiB pages).  --call-graph fp: samples carry a user callchain (on arm64
   with the link register in the user registers, as perf records it there); dwarf: the
   user registers of the arch (perf's mask) and 64 bytes of user stack holding return
   addresses.  --dump FILE: sample the functions of a real dump instead (its pid, machine
   and times; the dump is copied to DIR; an r-x //anon over its code before its first load
   and one more after its last, which the injector trims) - no functions are generated. */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PAGE (g->page)
#define CODE_BASE 0x3b5c00040000ull /* V8 puts its code space somewhere like this */
#define NODE_TEXT 0x55d0c0c00000ull
#define NODE_TEXT_LEN 0x2800000ull
#define LIBC_TEXT 0x7f3a51228000ull
#define LIBC_TEXT_LEN 0x155000ull
#define T0 1500000000000ull /* CLOCK_MONOTONIC of the start: 25 min of uptime (--dump: the dump's) */
#define PERIOD 250000ull    /* 4000 Hz */
#define STUB_SIZE 256u
#define STUB_EVERY 16u      /* every 16th allocation in the code space is a stub */
#define SAMPLE_TYPE (JITANON_PERF_SAMPLE_IP | JITANON_PERF_SAMPLE_TID | JITANON_PERF_SAMPLE_TIME | JITANON_PERF_SAMPLE_PERIOD)
#define STACK_SIZE 64u      /* --call-graph dwarf: bytes of user stack per sample */
#define CONTEXT_USER 0xfffffffffffffe00ull /* PERF_CONTEXT_USER, the callchain's user-mode marker */

/* What differs between the machines a recording can come from: HEADER_ARCH, the dumps'
   e_machine, the registers of --call-graph dwarf (PERF_REG_* bits, perf_regs.h of each
   arch: perf asks for these masks) and where ip, sp, the frame pointer and the return
   address sit among them (-1: not a register), the code a function starts and ends with. */
typedef struct arch_info {
    const char *name, *uname, *release;
    uint32_t machine;
    uint64_t regs;        /* --call-graph dwarf's sample_regs_user */
    int ip, sp, fp, lr;   /* their bits in regs */
    uint64_t fp_regs;     /* --call-graph fp's sample_regs_user (arm64: the link register) */
    unsigned insn;        /* instruction size and alignment of function sizes */
} arch_info;

static const arch_info arches[] = {
    /* AX..IP, FLAGS, CS, SS, R8..R15 (no DS..GS): perf's mask for x86-64 */
    {"x86_64", "x86_64", "6.1.0-jitgen-amd64", 62, 0xff0fffull, 8, 7, 6, -1, 0, 1},
    /* x0..x30 (x29 fp, x30 lr), sp, pc */
    {"arm64", "aarch64", "6.1.0-jitgen-arm64", 183, 0x1ffffffffull, 32, 31, 29, 30, 1ull << 30, 4},
};
enum { CG_NONE, CG_FP, CG_DWARF };

typedef struct opts {
    uint64_t samples, loads, pages, chunk_pages, seed, duration_ms, debug_every, unwind_every, round, line_bias;
    uint64_t debug_batch; /* > 1: LOADs held back and written after their batch's DEBUG_INFO (LLVM ORC JITLink) */
    uint64_t page_size;
    uint64_t fn_size;     /* > 0: every function this long (JITLink's are often shorter than the line bias) */
    int arch_flag;        /* JITDUMP_FLAGS_ARCH_TIMESTAMP set on CLOCK_MONOTONIC times (libxsmm#1093) */
    int anon; /* ANON_* */
    int call_graph; /* CG_* */
    const arch_info *arch;
    const char *dump; /* --dump: sample this dump's functions instead of generating some */
    uint32_t pid;
    int quiet;
    const char *dir;
} opts;

typedef struct fn {
    uint64_t start, size, load_time;
    uint64_t chunk;
    uint32_t cycle; /* how often the code space had wrapped when it was placed */
} fn;

enum { ANON_PAGE, ANON_LOAD, ANON_CHUNK };

typedef struct gen {
    opts o;
    uint64_t rng, page, t0;
    char dir[PATH_MAX], marker[PATH_MAX + 32];
    /* perf.data */
    jitanon_atomic_file af;
    jitanon_perf_writer pw;
    jitanon_perf_attr attr, enc_attr; /* enc_attr: without REGS_USER|STACK_USER (appended here) */
    uint8_t attr_raw[128], enc_raw[128];
    uint64_t ids[2];
    uint64_t since_round, records, first_sample, last_sample;
    /* jitdump */
    FILE *jf;
    jitanon_jitdump_writer jw;
    jitanon_jitdump_writer hw; /* --debug-batch: the held records, encoded after a header */
    jitanon_membuf held;
    uint64_t nheld;
    /* code space */
    fn *fns;
    uint64_t nfns, first_live, cursor, committed, chunk, nchunks, chunk_bytes, stub_count;
    int new_chunk, grew;
    uint64_t *stubs; /* start of each stub (only those of the first cycle are sampled) */
    uint32_t cycle;
    jitanon_error err;
} gen;

static uint64_t rnd(gen *g)
{
    /* xorshift64* */
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    return g->rng * 0x2545F4914F6CDD1Dull;
}

static double rndf(gen *g) { return (double)(rnd(g) >> 11) * (1.0 / 9007199254740992.0); }

static uint64_t rndn(gen *g, uint64_t n) { return n ? rnd(g) % n : 0; }

static void die(gen *g, const char *what)
{
    char msg[512];
    jitanon_format_error(msg, sizeof msg, &g->err);
    fprintf(stderr, "jitgen: %s: %s\n", what, msg);
    if (g->af.fd >= 0) jitanon_atomic_abort(&g->af);
    exit(1);
}

/* Little-endian bytes of what is not a perf record (feature sections, .eh_frame). */
static void le32(uint8_t *p, uint64_t v)
{
    int i;
    for (i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}

static void le64(uint8_t *p, uint64_t v)
{
    le32(p, v & 0xffffffffu);
    le32(p + 4, v >> 32);
}

static void write_rec(gen *g, const jitanon_perf_record *rec)
{
    uint8_t r[PATH_MAX + 256];
    size_t size;
    if (jitanon_perf_encode(r, sizeof r, &size, rec, &g->enc_attr, &g->err) != JITANON_OK) die(g, "encode");
    if (jitanon_perf_writer_write(&g->pw, r, size, &g->err) != JITANON_OK) die(g, "perf.data write");
    g->records++;
}

/* One record (little-endian, cpu 0, the trailer TID and TIME), and a FINISHED_ROUND
   every --round records. */
static void put(gen *g, jitanon_perf_record *rec, uint32_t type, uint16_t misc, uint64_t time)
{
    rec->type = type;
    rec->misc = misc;
    rec->sid.time = time;
    write_rec(g, rec);
    if (++g->since_round >= g->o.round) {
        jitanon_perf_record fr;
        memset(&fr, 0, sizeof fr);
        fr.type = JITANON_PERF_RECORD_FINISHED_ROUND;
        write_rec(g, &fr);
        g->since_round = 0;
    }
}

static void rec_comm(gen *g, uint32_t pid, uint32_t tid, const char *comm, int exec, uint64_t time)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.comm.pid = pid;
    rec.comm.tid = tid;
    rec.comm.comm.data = comm;
    rec.comm.comm.length = strlen(comm);
    put(g, &rec, JITANON_PERF_RECORD_COMM, (uint16_t)(JITANON_PERF_MISC_USER | (exec ? 1u << 13 : 0)), time);
}

static void rec_task(gen *g, uint32_t type, uint32_t pid, uint32_t tid, uint64_t time)
{
    jitanon_perf_record rec;
    memset(&rec, 0, sizeof rec);
    rec.task.pid = rec.task.ppid = pid;
    rec.task.tid = tid;
    rec.task.ptid = type == JITANON_PERF_RECORD_FORK ? pid : tid;
    rec.task.time = time;
    put(g, &rec, type, 0, time);
}

static void rec_mmap2(gen *g, uint64_t start, uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino,
                      uint32_t prot, const char *name, uint64_t time)
{
    jitanon_perf_record rec;
    jitanon_perf_mmap *m = &rec.mmap;
    memset(&rec, 0, sizeof rec);
    m->pid = m->tid = g->o.pid;
    m->start = start, m->len = len, m->pgoff = pgoff, m->maj = maj, m->min = min, m->ino = ino;
    m->prot = prot, m->flags = 2; /* PROT_READ | PROT_EXEC (| PROT_WRITE), MAP_PRIVATE */
    m->filename.data = name, m->filename.length = strlen(name);
    put(g, &rec, JITANON_PERF_RECORD_MMAP2, JITANON_PERF_MISC_USER, time);
}

static uint64_t sample_ip(gen *g);

/* A return address into a function sampled as a caller: past its first instruction. */
static uint64_t ret_addr(gen *g)
{
    uint64_t ip = sample_ip(g), a = g->o.arch->insn;
    return (ip / a) * a + a;
}

/* The user registers and stack of --call-graph dwarf, appended to a sample encoded
   without them (the encoder writes the fields up to the callchain): PERF_SAMPLE_REGS_ABI_64
   and the registers in bit order, then the stack's size, its bytes and dyn_size.  The
   stack holds the frame record of the caller's caller (saved fp, return address) and the
   return address of the one above it: arm64 keeps the caller's return address in the
   link register, x86-64 on top of the stack. */
static size_t regs_stack(gen *g, uint8_t *p, uint64_t ip, const uint64_t ret[3])
{
    const arch_info *a = g->o.arch;
    const uint64_t sp = 0x7ffc9e5a1000ull - 16 * rndn(g, 64);
    uint64_t stack[STACK_SIZE / 8], bit;
    size_t n = 0, k;
    for (k = 0; k < STACK_SIZE / 8; k++) stack[k] = rndn(g, 1000);
    stack[2] = sp + 48; /* the frame record at sp + 16: saved fp, return address */
    stack[3] = ret[1];
    stack[7] = ret[2];
    if (a->lr < 0) stack[0] = ret[0];
    le64(p + n, 2), n += 8;
    for (bit = 0; bit < 64; bit++) {
        int b = (int)bit;
        uint64_t v = rndn(g, 1u << 16);
        if (!(a->regs >> bit & 1)) continue;
        if (b == a->ip) v = ip;
        else if (b == a->sp) v = sp;
        else if (b == a->fp) v = sp + 16;
        else if (b == a->lr) v = ret[0];
        le64(p + n, v), n += 8;
    }
    le64(p + n, STACK_SIZE), n += 8;
    for (k = 0; k < STACK_SIZE / 8; k++) le64(p + n, stack[k]), n += 8;
    le64(p + n, STACK_SIZE), n += 8;
    return n;
}

/* --call-graph fp: user marker, ip, the callers' return addresses.  On arm64 a leaf has
   not saved the link register yet, so the frame-pointer walk misses its caller, and perf
   records the link register beside the chain (fp_regs) to put it back. */
static void rec_sample(gen *g, uint32_t tid, uint64_t ip, uint64_t time)
{
    jitanon_perf_record rec;
    uint8_t r[1024], chain[6 * 8];
    uint64_t ret[3];
    size_t size, n = 0, k;
    memset(&rec, 0, sizeof rec);
    rec.type = JITANON_PERF_RECORD_SAMPLE;
    rec.misc = JITANON_PERF_MISC_USER;
    rec.sample.ip = ip;
    rec.sid.pid = g->o.pid;
    rec.sid.tid = tid;
    rec.sid.time = time;
    rec.sample.period = PERIOD;
    if (!g->first_sample) g->first_sample = time;
    g->last_sample = time;
    if (g->o.call_graph == CG_NONE) {
        put(g, &rec, JITANON_PERF_RECORD_SAMPLE, JITANON_PERF_MISC_USER, time);
        return;
    }
    for (k = 0; k < 3; k++) ret[k] = ret_addr(g);
    if (g->o.call_graph == CG_FP) {
        le64(chain, CONTEXT_USER);
        le64(chain + 8, ip);
        for (k = g->o.arch->lr < 0 ? 0 : 1, n = 2; k < 3; k++) le64(chain + 8 * n++, ret[k]);
        rec.sample.callchain_nr = n;
        rec.sample.callchain.data = chain;
        rec.sample.callchain.size = n * 8;
    }
    if (jitanon_perf_encode(r, sizeof r - 512, &size, &rec, &g->enc_attr, &g->err) != JITANON_OK) die(g, "encode");
    if (g->o.call_graph == CG_DWARF) size += regs_stack(g, r + size, ip, ret);
    else if (g->o.arch->fp_regs) le64(r + size, 2), le64(r + size + 8, ret[0]), size += 16;
    r[6] = (uint8_t)size, r[7] = (uint8_t)(size >> 8); /* header.size */
    if (jitanon_perf_writer_write(&g->pw, r, size, &g->err) != JITANON_OK) die(g, "perf.data write");
    g->records++;
    if (++g->since_round >= g->o.round) {
        memset(&rec, 0, sizeof rec);
        rec.type = JITANON_PERF_RECORD_FINISHED_ROUND;
        write_rec(g, &rec);
        g->since_round = 0;
    }
}

/* perf_event_attr as perf 6.1 writes it for -e cpu-clock -k mono (128 bytes). */
static void make_attr(gen *g)
{
    uint64_t flags = 0;
    flags |= 1ull << 0;  /* disabled */
    flags |= 1ull << 1;  /* inherit */
    flags |= 1ull << 8;  /* mmap */
    flags |= 1ull << 9;  /* comm */
    flags |= 1ull << 10; /* freq */
    flags |= 1ull << 12; /* enable_on_exec */
    flags |= 1ull << 13; /* task */
    flags |= 1ull << 18; /* sample_id_all */
    flags |= 1ull << 20; /* exclude_guest */
    flags |= 1ull << 23; /* mmap2 */
    flags |= 1ull << 24; /* comm_exec */
    flags |= 1ull << 25; /* use_clockid */
    flags |= 1ull << 29; /* ksymbol */
    flags |= 1ull << 30; /* bpf_event */
    memset(&g->attr, 0, sizeof g->attr);
    g->attr.type = 1; /* PERF_TYPE_SOFTWARE, config 0: PERF_COUNT_SW_CPU_CLOCK */
    g->attr.size = 128;
    g->attr.sample_type = SAMPLE_TYPE;
    g->attr.read_format = (1ull << 2) | (1ull << 4); /* ID | LOST */
    g->attr.flags = flags;
    g->attr.clockid = 1; /* CLOCK_MONOTONIC */
    if (g->o.call_graph == CG_FP) g->attr.sample_type |= JITANON_PERF_SAMPLE_CALLCHAIN;
    g->enc_attr = g->attr;
    if (jitanon_perf_encode_attr(g->enc_raw, sizeof g->enc_raw, &g->enc_attr, 4000, 0, &g->err) != JITANON_OK)
        die(g, "attr");
    if (g->o.call_graph == CG_DWARF || (g->o.call_graph == CG_FP && g->o.arch->fp_regs))
        g->attr.sample_type |= JITANON_PERF_SAMPLE_REGS_USER;
    if (g->o.call_graph == CG_DWARF) g->attr.sample_type |= JITANON_PERF_SAMPLE_STACK_USER;
    if (jitanon_perf_encode_attr(g->attr_raw, sizeof g->attr_raw, &g->attr, 4000, 0, &g->err) != JITANON_OK)
        die(g, "attr");
    /* sample_regs_user (byte 80) and sample_stack_user (88), which the encoder leaves 0 */
    if (g->o.call_graph == CG_DWARF) le64(g->attr_raw + 80, g->o.arch->regs), le32(g->attr_raw + 88, STACK_SIZE);
    else if (g->o.call_graph == CG_FP) le64(g->attr_raw + 80, g->o.arch->fp_regs);
    g->ids[0] = 4711;
    g->ids[1] = 4712;
    g->attr.ids = g->enc_attr.ids = g->ids;
    g->attr.id_count = g->enc_attr.id_count = 2;
}

/* perf's header string: u32 length (with the NUL, padded to 64), then the bytes. */
static void feat_string(gen *g, unsigned bit, const char *s)
{
    uint8_t b[4 + 128];
    size_t n = strlen(s) + 1, padded = (n + 63) & ~(size_t)63;
    memset(b, 0, sizeof b);
    le32(b, padded);
    memcpy(b + 4, s, n - 1);
    if (jitanon_perf_writer_add_feature(&g->pw, bit, b, 4 + padded, &g->err) != JITANON_OK) die(g, "feature");
}

static void add_features(gen *g)
{
    uint8_t b[16];
    feat_string(g, 3, "jitgen");              /* HOSTNAME */
    feat_string(g, 4, g->o.arch->release);  /* OSRELEASE */
    feat_string(g, 5, "6.1.jitgen");        /* VERSION */
    feat_string(g, 6, g->o.arch->uname);    /* ARCH */
    le32(b, 2);                   /* NRCPUS: available, online */
    le32(b + 4, 2);
    if (jitanon_perf_writer_add_feature(&g->pw, 7, b, 8, &g->err) != JITANON_OK) die(g, "feature");
    le64(b, g->first_sample); /* SAMPLE_TIME: first, last */
    le64(b + 8, g->last_sample);
    if (jitanon_perf_writer_add_feature(&g->pw, 21, b, 16, &g->err) != JITANON_OK) die(g, "feature");
    le64(b, 1); /* CLOCKID: resolution in ns */
    if (jitanon_perf_writer_add_feature(&g->pw, 23, b, 8, &g->err) != JITANON_OK) die(g, "feature");
}

/* -- jitdump ------------------------------------------------------------------------------ */

static int jf_write(void *user, const void *data, size_t size)
{
    return fwrite(data, 1, size, (FILE *)user) != size;
}

/* V8's unwinding info for one function: CIE "zR" (pcrel|sdata4 FDE pointers), one FDE
   whose pc_begin points ALIGN8(code_size) back from the .eh_frame start (V8 assumes the
   code sits there), a terminator, then the 20-byte .eh_frame_hdr with one table entry. */
static size_t v8_unwind(uint8_t *out, uint64_t code_size, const arch_info *a)
{
    /* x86-64: code/data alignment 1/-8, return address 16 (rip), CFA rsp+8, rip at cfa-8 */
    static const uint8_t cie_x86[24] = {0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
                                        0x0c, 7, 8, 0x90, 1, 0, 0};
    /* arm64, as V8 writes it: alignment 4/-8, return address 30 (x30), CFA x29+0, x30 unchanged */
    static const uint8_t cie_a64[24] = {0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 4, 0x78, 30, 1, 0x1b,
                                        0x0c, 29, 0, 0x08, 30, 0, 0};
    uint8_t *fde = out + 24;
    uint32_t a8 = (uint32_t)((code_size + 7) & ~(uint64_t)7), eh = 24 + 24 + 4;
    memcpy(out, a->machine == 183 ? cie_a64 : cie_x86, 24);
    le32(fde, 20);                             /* length */
    le32(fde + 4, 28);                         /* back to the CIE */
    le32(fde + 8, (uint64_t)-(int64_t)(a8 + 32)); /* pc_begin, pc-relative */
    le32(fde + 12, code_size);                 /* pc_range */
    fde[16] = 0;                                           /* augmentation length */
    memset(fde + 17, 0, 7);                                /* DW_CFA_nop */
    if (a->machine == 183) { /* after stp x29, x30, [sp, #-16]!; mov x29, sp */
        fde[17] = 0x42;                                    /* DW_CFA_advance_loc 2 (8 bytes) */
        fde[18] = 0x11, fde[19] = 30, fde[20] = 0x7f;      /* DW_CFA_offset_extended_sf x30, cfa+8 */
        fde[21] = 0x80 | 29, fde[22] = 0;                  /* DW_CFA_offset x29, cfa+0 */
    } else {
        fde[17] = 0x41;                                    /* DW_CFA_advance_loc 1 */
        fde[18] = 0x0e;                                    /* DW_CFA_def_cfa_offset 16 */
        fde[19] = 16;
    }
    memset(fde + 24, 0, 4);                                /* terminator */
    out[eh] = 1;                                           /* version */
    out[eh + 1] = 0x1b;                                    /* eh_frame_ptr: pcrel|sdata4 */
    out[eh + 2] = 0x03;                                    /* fde_count: udata4 */
    out[eh + 3] = 0x3b;                                    /* table: datarel|sdata4 */
    le32(out + eh + 4, (uint64_t)-(int64_t)(eh + 4));
    le32(out + eh + 8, 1);
    le32(out + eh + 12, (uint64_t)-(int64_t)(a8 + eh));
    le32(out + eh + 16, (uint64_t)-(int64_t)(eh - 24));
    return eh + 20;
}

static const char *const js_words[] = {"get", "set", "parse", "render", "update", "handle", "build", "read",
                                       "write", "emit", "next", "resolve", "map", "filter", "reduce", "visit",
                                       "compile", "encode", "decode", "hash", "merge", "split", "tick", "flush"};
static const char *const js_nouns[] = {"Token", "Node", "Buffer", "Request", "Stream", "Module", "Cache", "Tree",
                                       "State", "Value", "Scope", "Frame", "Chunk", "Queue", "Entry", "Path"};
static const char *const builtins[] = {"ArrayPrototypePush", "StringPrototypeIndexOf", "CallFunction_ReceiverIsAny",
                                       "KeyedLoadIC_Megamorphic", "StringAdd_CheckNone", "ObjectAssign",
                                       "InterpreterEntryTrampoline", "ArrayMap", "JSConstructStubGeneric",
                                       "RecordWriteSaveFP", "GrowFastElements", "MapPrototypeGet"};

static size_t fn_name(gen *g, uint64_t i, char *out, size_t cap)
{
    uint64_t r = rnd(g), kind = r % 100;
    const char *w = js_words[(r >> 8) % (sizeof js_words / sizeof *js_words)];
    const char *n = js_nouns[(r >> 16) % (sizeof js_nouns / sizeof *js_nouns)];
    unsigned mod = (unsigned)((r >> 24) % 400), line = (unsigned)((r >> 33) % 3000 + 1), col = (unsigned)((r >> 45) % 80 + 1);
    int len;
    if (kind < 4)
        len = snprintf(out, cap, "Builtin:%s", builtins[(r >> 8) % (sizeof builtins / sizeof *builtins)]);
    else if (kind < 6)
        len = snprintf(out, cap, "RegExp:^(?:%s|%s)\\d+$", w, n);
    else if (kind < 8)
        len = snprintf(out, cap, "Handler:%s%s", w, n);
    else
        len = snprintf(out, cap, "JS:%c%s%s%llu file:///srv/app/node_modules/pkg%u/lib/%s.js:%u:%u",
                       kind < 30 ? '*' : kind < 40 ? '^' : '~', w, n, (unsigned long long)i, mod / 10, n, line, col);
    return len < 0 ? 0 : (size_t)len < cap ? (size_t)len : cap - 1;
}

/* Log-uniform 100..2000 bytes, as V8's functions mostly are (or --fn-size). */
static uint64_t fn_size(gen *g)
{
    double lo = 4.605170186, hi = 7.600902460; /* ln 100, ln 2000 */
    double x = lo + (hi - lo) * rndf(g);
    double e = 1.0, t = 1.0; /* exp(x) without libm: the series converges fast enough here */
    uint64_t s, k;
    if (g->o.fn_size) return g->o.fn_size;
    for (k = 1; k < 48; k++) t *= x / (double)k, e += t;
    s = (uint64_t)e;
    return s < 100 ? 100 : s > 2000 ? 2000 : s;
}

static uint64_t chunk_base(const gen *g) { return CODE_BASE + g->chunk * (g->chunk_bytes + PAGE); }

/* Places the next allocation (a function or a stub) in the code space. */
static uint64_t place(gen *g, uint64_t size)
{
    uint64_t start;
    if (g->cursor + size > g->chunk_bytes) {
        if (++g->chunk >= g->nchunks) {
            g->chunk = 0;
            g->cycle++;
        }
        g->cursor = g->committed = 0;
        g->new_chunk = 1;
    }
    start = chunk_base(g) + g->cursor;
    g->cursor = (g->cursor + size + 31) & ~(uint64_t)31;
    if (g->cursor > g->chunk_bytes) g->cursor = g->chunk_bytes;
    if (g->cursor > g->committed) {
        g->committed = (g->cursor + PAGE - 1) & ~(uint64_t)(PAGE - 1);
        g->grew = 1;
    }
    /* functions in a chunk being reused are no longer sampled */
    while (g->first_live < g->nfns && (g->fns[g->first_live].cycle + 1 < g->cycle ||
                                       (g->fns[g->first_live].cycle < g->cycle && g->fns[g->first_live].chunk <= g->chunk)))
        g->first_live++;
    return start;
}

/* --debug-batch: the batch's held UNWINDING_INFO and LOAD records, after its DEBUG_INFO. */
static void flush_held(gen *g)
{
    if (g->held.size > 40 && fwrite(g->held.data + 40, 1, g->held.size - 40, g->jf) != g->held.size - 40)
        die(g, "jitdump batch");
    if (g->held.size > 40) g->held.size = 40;
    g->nheld = 0;
}

static void write_function(gen *g, uint64_t i, uint64_t time, uint8_t *code)
{
    jitanon_jitdump_writer *lw = g->o.debug_batch > 1 ? &g->hw : &g->jw;
    char name[256];
    size_t name_len = fn_name(g, i, name, sizeof name), k;
    uint64_t size = fn_size(g) / g->o.arch->insn * g->o.arch->insn, start;
    jitanon_jitdump_record rec;
    if (g->nfns % (STUB_EVERY - 1) == STUB_EVERY - 2 && g->cycle == 0) {
        g->stubs[g->stub_count++] = place(g, STUB_SIZE);
    }
    start = place(g, size);
    {
        uint64_t base = chunk_base(g);
        if (g->o.anon == ANON_CHUNK ? g->new_chunk : g->o.anon == ANON_LOAD || g->grew || g->new_chunk)
            rec_mmap2(g, base, g->o.anon == ANON_CHUNK ? g->chunk_bytes : g->committed, base, 0, 0, 0,
                      g->o.anon == ANON_CHUNK ? 7 : 5, "//anon", time - 900);
        g->grew = g->new_chunk = 0;
    }
    for (k = 0; k < size; k++) code[k] = (uint8_t)rnd(g);
    if (g->o.arch->machine == 183) {
        le32(code, 0xa9bf7bfd);            /* stp x29, x30, [sp, #-16]! */
        le32(code + 4, 0x910003fd);        /* mov x29, sp */
        le32(code + size - 4, 0xd65f03c0); /* ret */
    } else {
        code[0] = 0x55; /* push rbp */
        code[size - 1] = 0xc3;
    }
    if (g->o.debug_every && i % g->o.debug_every == 0) {
        jitanon_jitdump_debug_entry e[8];
        char file[96];
        size_t rows = 2 + (size_t)rndn(g, 6), r;
        if (rows > size) rows = (size_t)size; /* one row a byte at most: all inside the function */
        uint64_t off = 0;
        snprintf(file, sizeof file, "/srv/app/node_modules/pkg%u/lib/mod%u.js", (unsigned)rndn(g, 40),
                 (unsigned)rndn(g, 20));
        for (r = 0; r < rows; r++) {
            e[r].addr = start + off + g->o.line_bias;
            e[r].lineno = (int32_t)(10 + r * 3 + rndn(g, 3));
            e[r].discrim = 0;
            e[r].file.data = file;
            e[r].file.length = strlen(file);
            off += 1 + rndn(g, size / rows);
            if (off >= size) off = size - 1;
        }
        if (jitanon_jitdump_write_debug_info(&g->jw, time - 300, start, e, rows, &g->err) != JITANON_OK)
            die(g, "jitdump debug info");
    }
    if (g->o.unwind_every && i % g->o.unwind_every == 0) {
        uint8_t u[128];
        size_t n = v8_unwind(u, size, g->o.arch);
        memset(&rec, 0, sizeof rec);
        rec.id = JITANON_JITDUMP_CODE_UNWINDING_INFO;
        rec.timestamp = time - 200;
        rec.unwind.unwinding_size = n;
        rec.unwind.eh_frame_hdr_size = 20;
        rec.unwind.mapped_size = (n + 7) & ~(size_t)7;
        rec.unwind.eh_frame.data = u;
        rec.unwind.eh_frame.size = n - 20;
        rec.unwind.eh_frame_hdr.data = u + n - 20;
        rec.unwind.eh_frame_hdr.size = 20;
        if (jitanon_jitdump_write(lw, &rec, &g->err) != JITANON_OK) die(g, "jitdump unwinding info");
    }
    memset(&rec, 0, sizeof rec);
    rec.id = JITANON_JITDUMP_CODE_LOAD;
    rec.timestamp = time;
    rec.load.pid = rec.load.tid = g->o.pid;
    rec.load.vma = rec.load.code_addr = start;
    rec.load.code_size = size;
    rec.load.code.size = (size_t)size;
    rec.load.code.data = code;
    rec.load.code_index = i;
    rec.load.name.data = name;
    rec.load.name.length = name_len;
    if (jitanon_jitdump_write(lw, &rec, &g->err) != JITANON_OK) die(g, "jitdump load");
    if (g->o.debug_batch > 1 && ++g->nheld == g->o.debug_batch) flush_held(g);
    g->fns[g->nfns].start = start;
    g->fns[g->nfns].size = size;
    g->fns[g->nfns].load_time = time;
    g->fns[g->nfns].cycle = g->cycle;
    g->fns[g->nfns].chunk = g->chunk;
    g->nfns++;
}

static uint64_t sample_ip(gen *g)
{
    uint64_t r = rndn(g, 100), live = g->nfns - g->first_live, idx;
    const fn *f;
    if (live == 0 || r >= 85) {
        if (r % 3 == 0) return LIBC_TEXT + rndn(g, LIBC_TEXT_LEN);
        return NODE_TEXT + rndn(g, NODE_TEXT_LEN);
    }
    if (r >= 77 && g->stub_count && g->cycle == 0)
        return g->stubs[rndn(g, g->stub_count)] + rndn(g, STUB_SIZE);
    if (r < 35) { /* hot set: a few dozen functions get a third of the samples */
        idx = g->first_live + rndn(g, live < 64 ? live : 64);
    } else if (r < 55) { /* recently compiled */
        idx = g->nfns - 1 - rndn(g, live < 2000 ? live : 2000);
    } else { /* anything, skewed to the old and hot */
        double u = rndf(g);
        idx = g->first_live + (uint64_t)((double)live * u * u);
        if (idx >= g->nfns) idx = g->nfns - 1;
    }
    f = &g->fns[idx];
    return f->start + rndn(g, f->size) / g->o.arch->insn * g->o.arch->insn;
}

/* --dump: the dump's bytes, its functions as the code space's (none is a stub), its pid
   and machine as the recording's, the times of its first and last load. */
static uint8_t *load_dump(gen *g, size_t *size, uint64_t *first, uint64_t *last)
{
    FILE *f = fopen(g->o.dump, "rb");
    uint8_t *d = NULL;
    long n;
    size_t k;
    jitanon_jitdump_iter it;
    jitanon_jitdump_record r;
    jitanon_result res;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(d = (uint8_t *)malloc((size_t)n + 1)) || fread(d, 1, (size_t)n, f) != (size_t)n) {
        perror(g->o.dump);
        exit(1);
    }
    fclose(f);
    *size = (size_t)n;
    if (jitanon_jitdump_iter_begin(&it, d, *size, NULL, &g->err) != JITANON_OK) die(g, g->o.dump);
    for (k = 0; k < sizeof arches / sizeof *arches; k++)
        if (arches[k].machine == it.header.elf_mach) g->o.arch = &arches[k];
    g->o.pid = it.header.pid;
    *first = UINT64_MAX, *last = 0;
    while ((res = jitanon_jitdump_iter_next(&it, &r, &g->err)) == JITANON_OK) {
        fn *fp;
        if (r.id != JITANON_JITDUMP_CODE_LOAD || !r.load.code_size) continue;
        if (!(g->nfns & (g->nfns + 1))) { /* 0, 1, 3, 7 ...: double */
            g->fns = (fn *)realloc(g->fns, 2 * (g->nfns + 1) * sizeof *g->fns);
            if (!g->fns) die(g, "out of memory");
        }
        fp = &g->fns[g->nfns++];
        memset(fp, 0, sizeof *fp);
        fp->start = r.load.code_addr, fp->size = r.load.code_size, fp->load_time = r.timestamp;
        if (r.timestamp < *first) *first = r.timestamp;
        if (r.timestamp > *last) *last = r.timestamp;
    }
    if (res != JITANON_END) die(g, g->o.dump);
    if (!g->nfns) fprintf(stderr, "jitgen: %s has no loads\n", g->o.dump), exit(1);
    return d;
}

static int by_start(const void *a, const void *b)
{
    const fn *x = (const fn *)a, *y = (const fn *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* --dump: an r-x //anon over each cluster of the dump's code (functions less than 1 MiB
   apart) before its first load, and the same once more after its last load, as a JIT
   changing the protection of its whole code space: the coalesced mapping to trim. */
static void dump_anons(gen *g, uint64_t before, uint64_t after)
{
    fn *s = (fn *)malloc(g->nfns * sizeof *s);
    uint64_t i, lo = 0, hi = 0, pass;
    if (!s) die(g, "out of memory");
    memcpy(s, g->fns, g->nfns * sizeof *s);
    qsort(s, g->nfns, sizeof *s, by_start);
    for (pass = 0; pass < 2; pass++) {
        lo = s[0].start & ~(PAGE - 1), hi = s[0].start + s[0].size;
        for (i = 1; i <= g->nfns; i++) {
            if (i < g->nfns && s[i].start <= hi + (1u << 20)) {
                if (s[i].start + s[i].size > hi) hi = s[i].start + s[i].size;
                continue;
            }
            hi = (hi + PAGE - 1) & ~(PAGE - 1);
            rec_mmap2(g, lo, hi - lo, lo, 0, 0, 0, 5, "//anon", pass ? after : before);
            if (i < g->nfns) lo = s[i].start & ~(PAGE - 1), hi = s[i].start + s[i].size;
        }
    }
    free(s);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;
    errno = 0;
    x = strtoull(s, &end, 0);
    if (errno || end == s || *end) return 0;
    *v = x;
    return 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jitgen [--samples N] [--loads M] [--pages P] [--chunk-pages C] [--anon page|load|chunk]\n"
               "              [--pid PID] [--seed S] [--duration-ms T] [--debug-every K] [--unwind-every K]\n"
               "              [--round R] [--line-bias B] [--debug-batch K] [--arch x86_64|arm64]\n"
               "              [--page-size B] [--call-graph fp|dwarf] [--dump FILE] [--fn-size N] [--arch-flag]\n"
               "              [--quiet] DIR\n"
               "--debug-batch K: the DEBUG_INFO of K functions, then their loads (as LLVM ORC JITLink writes)\n"
               "--fn-size N: every function N bytes (2..2000; default log-uniform 100..2000)\n"
               "--arch-flag: the dump's header says TSC times (JITDUMP_FLAGS_ARCH_TIMESTAMP); they stay CLOCK_MONOTONIC\n"
               "writes DIR/perf.data and DIR/jit-PID.dump\n");
}

int main(int argc, char **argv)
{
    gen *g = (gen *)calloc(1, sizeof(gen));
    uint64_t v, s, l, dur, t_end, t_samples, pid64 = 0, first = 0, last = 0;
    uint8_t *code, *dump = NULL;
    size_t dump_size = 0;
    char path[PATH_MAX + 32];
    int i;
    if (!g) return fprintf(stderr, "jitgen: out of memory\n"), 1;
    g->af.fd = -1;
    g->o.samples = 200000;
    g->o.loads = 45000;
    g->o.seed = 1;
    g->o.duration_ms = 8000;
    g->o.chunk_pages = 64;
    g->o.anon = ANON_PAGE;
    g->o.debug_every = 3;
    g->o.unwind_every = 4;
    g->o.round = 4000;
    g->o.pid = 31337;
    g->o.arch = &arches[0];
    g->o.page_size = 4096;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t *dst = NULL;
        if (!strcmp(a, "--samples")) dst = &g->o.samples;
        else if (!strcmp(a, "--loads")) dst = &g->o.loads;
        else if (!strcmp(a, "--pages")) dst = &g->o.pages;
        else if (!strcmp(a, "--seed")) dst = &g->o.seed;
        else if (!strcmp(a, "--duration-ms")) dst = &g->o.duration_ms;
        else if (!strcmp(a, "--chunk-pages")) dst = &g->o.chunk_pages;
        else if (!strcmp(a, "--anon") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "page")) g->o.anon = ANON_PAGE;
            else if (!strcmp(m, "load")) g->o.anon = ANON_LOAD;
            else if (!strcmp(m, "chunk")) g->o.anon = ANON_CHUNK;
            else return fprintf(stderr, "jitgen: --anon takes page, load or chunk\n"), 2;
            continue;
        }
        else if (!strcmp(a, "--arch") && i + 1 < argc) {
            const char *m = argv[++i];
            size_t k;
            for (k = 0; k < sizeof arches / sizeof *arches && strcmp(m, arches[k].name); k++) {}
            if (k == sizeof arches / sizeof *arches) return fprintf(stderr, "jitgen: --arch takes x86_64 or arm64\n"), 2;
            g->o.arch = &arches[k];
            continue;
        }
        else if (!strcmp(a, "--call-graph") && i + 1 < argc) {
            const char *m = argv[++i];
            if (!strcmp(m, "fp")) g->o.call_graph = CG_FP;
            else if (!strcmp(m, "dwarf")) g->o.call_graph = CG_DWARF;
            else return fprintf(stderr, "jitgen: --call-graph takes fp or dwarf\n"), 2;
            continue;
        }
        else if (!strcmp(a, "--dump") && i + 1 < argc) { g->o.dump = argv[++i]; continue; }
        else if (!strcmp(a, "--page-size")) dst = &g->o.page_size;
        else if (!strcmp(a, "--debug-every")) dst = &g->o.debug_every;
        else if (!strcmp(a, "--unwind-every")) dst = &g->o.unwind_every;
        else if (!strcmp(a, "--round")) dst = &g->o.round;
        else if (!strcmp(a, "--line-bias")) dst = &g->o.line_bias;
        else if (!strcmp(a, "--debug-batch")) dst = &g->o.debug_batch;
        else if (!strcmp(a, "--fn-size")) dst = &g->o.fn_size;
        else if (!strcmp(a, "--pid")) dst = &pid64;
        else if (!strcmp(a, "--quiet")) { g->o.quiet = 1; continue; }
        else if (!strcmp(a, "--arch-flag")) { g->o.arch_flag = 1; continue; }
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout), 0;
        else if (a[0] != '-' && !g->o.dir) { g->o.dir = a; continue; }
        else return usage(stderr), 2;
        if (i + 1 >= argc || !parse_u64(argv[++i], dst)) return fprintf(stderr, "jitgen: bad value for %s\n", a), 2;
    }
    if (pid64) g->o.pid = (uint32_t)pid64;
    if (!g->o.dir || g->o.chunk_pages < 1 || g->o.chunk_pages > (1ull << 24) || !g->o.round || !g->o.duration_ms || !g->o.pid || pid64 > 4194304 ||
        g->o.fn_size == 1 || g->o.fn_size > 2000)
        return usage(stderr), 2;
    if (g->o.page_size < 4096 || g->o.page_size > (1u << 20) || (g->o.page_size & (g->o.page_size - 1)))
        return fprintf(stderr, "jitgen: --page-size takes a power of two from 4096 to 1 MiB\n"), 2;
    g->page = g->o.page_size;
    g->t0 = T0;
    if (g->o.dump) { /* the dump's functions, pid and machine; the process starts 30 ms before its first load */
        dump = load_dump(g, &dump_size, &first, &last);
        g->o.loads = 0;
        g->t0 = first - 30000000;
    }
    if (mkdir(g->o.dir, 0755) != 0 && errno != EEXIST) return perror(g->o.dir), 1;
    if (!realpath(g->o.dir, g->dir)) return perror(g->o.dir), 1;
    g->rng = g->o.seed * 0x9E3779B97F4A7C15ull + 1;
    snprintf(g->marker, sizeof g->marker, "%s/jit-%u.dump", g->dir, (unsigned)g->o.pid);

    /* code space: room for every function and stub, or --pages */
    g->chunk_bytes = g->o.chunk_pages * PAGE;
    g->nchunks = g->o.pages ? (g->o.pages + g->o.chunk_pages - 1) / g->o.chunk_pages : UINT64_MAX;
    g->chunk = UINT64_MAX; /* the first allocation opens chunk 0 */
    g->cursor = g->chunk_bytes;
    if (!dump) g->fns = (fn *)calloc(g->o.loads + 1, sizeof(fn));
    g->stubs = (uint64_t *)calloc(g->o.loads / (STUB_EVERY - 1) + 2, sizeof(uint64_t));
    code = (uint8_t *)malloc(4096);
    if (!g->fns || !g->stubs || !code) return fprintf(stderr, "jitgen: out of memory\n"), 1;

    /* outputs */
    g->jf = fopen(g->marker, "wb");
    if (!g->jf) return perror(g->marker), 1;
    setvbuf(g->jf, NULL, _IOFBF, 1 << 20);
    if (!dump) {
        jitanon_sink js;
        jitanon_jitdump_header h;
        js.write_fn = jf_write;
        js.user = g->jf;
        memset(&h, 0, sizeof h); /* little-endian, CLOCK_MONOTONIC times */
        h.elf_mach = g->o.arch->machine;
        h.pid = g->o.pid;
        h.timestamp = g->t0 + 20000000;
        h.arch_timestamp = g->o.arch_flag;
        if (jitanon_jitdump_writer_init(&g->jw, js, &h, &g->err) != JITANON_OK) die(g, "jitdump header");
        js.write_fn = jitanon_membuf_write;
        js.user = &g->held;
        if (g->o.debug_batch > 1 && jitanon_jitdump_writer_init(&g->hw, js, &h, &g->err) != JITANON_OK)
            die(g, "jitdump header");
    }
    snprintf(path, sizeof path, "%s/perf.data", g->dir);
    if (jitanon_atomic_open(&g->af, path, NULL, &g->err) != JITANON_OK) die(g, path);
    if (jitanon_perf_writer_init(&g->pw, JITANON_PERF_FILE, 0, jitanon_atomic_sink(&g->af), jitanon_atomic_pwrite, NULL,
                                 &g->err) != JITANON_OK)
        die(g, "perf writer");
    make_attr(g);
    if (jitanon_perf_writer_add_attr(&g->pw, &g->attr, &g->err) != JITANON_OK) die(g, "attr");

    /* process start: exec, binary and libc, worker threads, the jitdump marker */
    rec_comm(g, g->o.pid, g->o.pid, "node", 1, g->t0);
    rec_mmap2(g, NODE_TEXT, NODE_TEXT_LEN, 0xa00000, 259, 1, 1835231,  5, "/opt/jitgen/bin/node", g->t0 + 1000);
    rec_mmap2(g, LIBC_TEXT, LIBC_TEXT_LEN, 0x28000, 259, 1, 1577001,  5, "/opt/jitgen/lib/libc.so.6", g->t0 + 900000);
    for (v = 1; v <= 2; v++) {
        rec_task(g, JITANON_PERF_RECORD_FORK, g->o.pid, g->o.pid + (uint32_t)v, g->t0 + 5000000 + v * 1000);
        rec_comm(g, g->o.pid, g->o.pid + (uint32_t)v, v == 1 ? "V8 DefaultWorke" : "libuv-worker", 0,
                 g->t0 + 5000000 + v * 1000 + 500);
    }
    rec_mmap2(g, 0x7f3a52400000ull, PAGE, 0, 259, 1, 2101, 5, g->marker, g->t0 + 20000000);

    /* loads front-loaded (startup compiles a lot), samples evenly at 4 kHz-ish; --dump:
       the samples after its last load */
    dur = g->o.duration_ms * 1000000ull;
    t_samples = dump ? last + 1000000 : g->t0 + 30000000;
    t_end = t_samples + dur;
    if (dump) dump_anons(g, g->t0 + 21000000, last + 500000);
    for (s = 0, l = 0; s < g->o.samples || l < g->o.loads;) {
        uint64_t ts = s < g->o.samples ? t_samples + dur * s / g->o.samples + rndn(g, 1000) : UINT64_MAX;
        uint64_t tl = UINT64_MAX;
        if (l < g->o.loads) {
            double x = (double)(l + 1) / (double)g->o.loads;
            tl = g->t0 + 25000000 + (uint64_t)((double)dur * (0.6 * x * x + 0.4 * x)) + 2000;
        }
        if (tl <= ts) {
            write_function(g, l, tl, code);
            l++;
        } else {
            uint32_t tid = g->o.pid + (rndn(g, 10) == 0 ? 1u : 0u);
            rec_sample(g, tid, sample_ip(g), ts);
            s++;
        }
    }
    rec_task(g, JITANON_PERF_RECORD_EXIT, g->o.pid, g->o.pid, t_end + 1000);
    if (dump) {
        if (fwrite(dump, 1, dump_size, g->jf) != dump_size) return perror(g->marker), 1;
        g->jw.bytes_written = dump_size;
        g->o.loads = g->nfns;
    } else {
        jitanon_jitdump_record close;
        memset(&close, 0, sizeof close);
        flush_held(g);
        close.id = JITANON_JITDUMP_CODE_CLOSE;
        close.timestamp = t_end;
        if (jitanon_jitdump_write(&g->jw, &close, &g->err) != JITANON_OK) die(g, "jitdump close");
    }
    if (fclose(g->jf) != 0) return perror(g->marker), 1;
    add_features(g);
    if (jitanon_perf_writer_finish(&g->pw, &g->err) != JITANON_OK) die(g, "perf.data finish");
    if (jitanon_atomic_commit(&g->af, 0, &g->err) != JITANON_OK) die(g, "perf.data commit");
    if (!g->o.quiet)
        fprintf(stderr, "jitgen: %s/perf.data: %llu records (%llu samples), %llu bytes; %s: %llu loads, %llu bytes\n",
                g->dir, (unsigned long long)g->records, (unsigned long long)g->o.samples,
                (unsigned long long)g->pw.bytes_written, g->marker, (unsigned long long)g->o.loads,
                (unsigned long long)g->jw.bytes_written);
    jitanon_perf_writer_release(&g->pw);
    free(code);
    free(dump);
    jitanon_membuf_release(&g->held);
    free(g->fns);
    free(g->stubs);
    free(g);
    return 0;
}
