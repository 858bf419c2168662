/* pipeshapes_fixture: rewrites a real perf.data recording (file mode, `perf record -g -e
   cpu-clock` of a workload, little-endian) through jitanon's writer into the layout of a
   recording this machine cannot make (no hardware PMU), for tests/oracle/pipeshapes.sh:

       pipeshapes_fixture lbr IN OUT   LBR call stacks (perf record --call-graph lbr)
       pipeshapes_fixture lbr-nohw IN OUT   the same without the hw_idx word (perf < 5.7)
       pipeshapes_fixture lbr-empty IN OUT  lbr with every 4th user sample's stack empty
                                            (nr 0, as right after the LBR was cleared)
       pipeshapes_fixture pt IN OUT    an Intel PT trace (perf record -e intel_pt//u)

   lbr: the attr becomes cycles with PERF_SAMPLE_BRANCH_STACK and branch_sample_type
   USER|CALL_STACK|NO_FLAGS|NO_CYCLES|HW_INDEX, as perf 6.1 records it; every SAMPLE gets
   a branch stack after its callchain whose entries' `from` are the callchain's user return
   addresses (what the LBR call stack holds), and the features BRANCH_STACK (empty) and
   CPU_PMU_CAPS (branches=32) are added.
   pt: the attr becomes an intel_pt event (PMU type 11, tsc on, no samples of its own) with
   the input's tracking bits; its SAMPLEs are dropped.  An AUXTRACE_INFO record (TSC =
   perf time: shift 0, mult 1), an ITRACE_START, and at four sample times an AUX record and
   an AUXTRACE record carrying PT packets (PSB, TSC, MODE.Exec 64-bit, PSBEND, TIP.PGE to
   the sample's ip, TIP.PGD) are added, every second trace enabling at an address no
   mapping holds (so perf prints the decoder's error for it); the HEADER_AUXTRACE index
   points at the AUXTRACE records and PMU_MAPPINGS gains intel_pt.  perf script decodes it
   with the workload's binaries on this machine.
   The input must have one attr, sample_type within IP|TID|TIME|CPU|PERIOD|CALLCHAIN. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_IP 0x1ull
#define ST_TID 0x2ull
#define ST_TIME 0x4ull
#define ST_CPU 0x80ull
#define ST_PERIOD 0x100ull
#define ST_CALLCHAIN 0x20ull
#define ST_BRANCH_STACK 0x800ull
#define ST_IDENTIFIER 0x10000ull
#define FEAT_EVENT_DESC 12u
#define FEAT_BRANCH_STACK 15u
#define FEAT_PMU_MAPPINGS 16u
#define FEAT_AUXTRACE 18u
#define FEAT_CPU_PMU_CAPS 28u
#define CONTEXT_USER 0xfffffffffffffe00ull
#define PT_PMU_TYPE 11u
#define PT_BUFFERS 4

typedef struct fx {
    jitanon_perf_reader r;
    jitanon_perf_writer w;
    jitanon_error err;
    uint8_t attr[512];
    uint32_t asize;
    uint64_t st;
    int hw_idx, late;
    unsigned empty_every, n_user; /* lbr-empty: every 4th user sample's stack is empty */
    char *path;
    jitanon_membuf held; /* pt-late: the AUXTRACE records, written last */
} fx;

static int fail(const char *what, const jitanon_error *err)
{
    fprintf(stderr, "pipeshapes_fixture: %s%s%s\n", what, err ? ": " : "", err ? err->info : "");
    return 1;
}

static void put64(uint8_t *p, uint64_t v) { jitanon__wr64(p, v, 0); }
static void put32(uint8_t *p, uint32_t v) { jitanon__wr32(p, v, 0); }

static void hdr(uint8_t *p, uint32_t type, uint16_t misc, size_t size)
{
    put32(p, type);
    jitanon__wr16(p + 4, misc, 0);
    jitanon__wr16(p + 6, (uint16_t)size, 0);
}

/* A perf string: u32 length (with the NUL, padded to 64), then the bytes. */
static void put_string(jitanon_membuf *m, const char *s)
{
    static const uint8_t zero[64];
    uint8_t b[4];
    size_t len = strlen(s) + 1, padded = (len + 63) / 64 * 64;
    put32(b, (uint32_t)padded);
    jitanon_membuf_write(m, b, 4);
    jitanon_membuf_write(m, s, len - 1);
    jitanon_membuf_write(m, zero, padded - len + 1);
}

static jitanon_result add_attr(fx *f)
{
    jitanon_perf_attr a = f->r.attrs[0];
    a.raw.data = f->attr;
    a.raw.size = f->asize;
    return jitanon_perf_writer_add_attr(&f->w, &a, &f->err);
}

/* EVENT_DESC of the one attr: {nr 1, attr size, attr, nr_ids, name (a perf string), ids}. */
static jitanon_result event_desc(fx *f, const char *name)
{
    jitanon_membuf m = {0};
    const jitanon_perf_attr *a = &f->r.attrs[0];
    uint8_t b[8];
    size_t i;
    jitanon_result res;
    put32(b, 1);
    put32(b + 4, f->asize);
    jitanon_membuf_write(&m, b, 8);
    jitanon_membuf_write(&m, f->attr, f->asize);
    put32(b, (uint32_t)a->id_count);
    jitanon_membuf_write(&m, b, 4);
    put_string(&m, name);
    for (i = 0; i < a->id_count; i++) {
        put64(b, a->ids[i]);
        jitanon_membuf_write(&m, b, 8);
    }
    res = jitanon_perf_writer_add_feature(&f->w, FEAT_EVENT_DESC, m.data, m.size, &f->err);
    jitanon_membuf_release(&m);
    return res;
}

/* The input's features but the two the shape replaces; EVENT_DESC names the new attr. */
static jitanon_result copy_features(fx *f, unsigned skip, const char *name)
{
    size_t i;
    jitanon_result res = JITANON_OK;
    for (i = 0; res == JITANON_OK && i < f->r.state_->feat_count; i++) {
        jitanon_bytes b;
        unsigned bit = f->r.state_->feats[i].bit;
        if (bit == skip || bit == FEAT_EVENT_DESC || !jitanon_perf_reader_feature(&f->r, bit, &b)) continue;
        res = jitanon_perf_writer_add_feature(&f->w, bit, b.data, b.size, &f->err);
    }
    return res == JITANON_OK ? event_desc(f, name) : res;
}

/* ---- lbr ---- */

/* The callchain keeps its kernel part and PERF_CONTEXT_USER; the user part (the sample's
   ip, then return addresses) goes into the branch stack as the LBR call stack holds it:
   entry k is the call from frame k+1 into frame k, so entry 0's `to` is the ip and every
   `from` a return address (the outermost frame's entry calls from the ip's own frame).
   A sample without user frames keeps its callchain and an empty stack. */
static jitanon_result lbr_sample(fx *f, const jitanon_perf_record *rec)
{
    uint8_t out[65536];
    jitanon_bytes cc = rec->sample.callchain;
    size_t nr = (size_t)rec->sample.callchain_nr, i, user = nr, n = 0, head, tail, size, keep = nr;
    const uint8_t *end = cc.data + cc.size;
    for (i = 0; i < nr; i++)
        if (jitanon_perf_u64_at(cc, i, 0) == CONTEXT_USER) user = i;
    if (user + 1 < nr) {
        n = nr - user - 1;
        keep = user + 1;
        if (f->empty_every && ++f->n_user % f->empty_every == 0) n = 0; /* the LBR was just cleared */
    }
    head = (size_t)(cc.data - rec->raw.data);
    tail = (size_t)(rec->raw.data + rec->raw.size - end);
    size = head + 8 * keep + (f->hw_idx ? 16 : 8) + 24 * n + tail;
    if (size > 65535) return JITANON__FAIL(&f->err, JITANON_ERR_LIMIT, rec->offset, "sample too large");
    memcpy(out, rec->raw.data, head);
    put64(out + head - 8, keep);
    memcpy(out + head, cc.data, 8 * keep);
    head += 8 * keep;
    put64(out + head, n);
    if (f->hw_idx) put64(out + head + 8, n ? n - 1 : 0); /* hw_idx: the top of the stack */
    head += f->hw_idx ? 16 : 8;
    for (i = 0; i < n; i++) {
        uint8_t *e = out + head + 24 * i;
        uint64_t to = jitanon_perf_u64_at(cc, user + 1 + i, 0);
        put64(e, i + 1 < n ? jitanon_perf_u64_at(cc, user + 2 + i, 0) : to);
        put64(e + 8, to);
        put64(e + 16, 0);
    }
    memcpy(out + head + 24 * n, end, tail);
    jitanon__wr16(out + 6, (uint16_t)size, 0);
    return jitanon_perf_writer_write(&f->w, out, size, &f->err);
}

static jitanon_result lbr(fx *f)
{
    jitanon_perf_record rec;
    jitanon_membuf caps = {0};
    uint8_t b[4];
    jitanon_result res;
    uint64_t flags;
    put32(f->attr, 0);     /* PERF_TYPE_HARDWARE */
    put64(f->attr + 8, 0); /* cycles */
    put64(f->attr + 24, f->st | ST_BRANCH_STACK);
    flags = jitanon__rd64(f->attr + 40, 0);
    flags |= 2ull << 15; /* precise_ip 2: cycles:P as recorded */
    put64(f->attr + 40, flags);
    /* USER | CALL_STACK | NO_FLAGS | NO_CYCLES | HW_INDEX */
    put64(f->attr + 72, 1ull << 0 | 1ull << 11 | 1ull << 14 | 1ull << 15 | (f->hw_idx ? 1ull << 17 : 0));
    if ((res = add_attr(f)) != JITANON_OK) return res;
    if ((res = copy_features(f, FEAT_CPU_PMU_CAPS, "cycles:P")) != JITANON_OK) return res;
    if ((res = jitanon_perf_writer_add_feature(&f->w, FEAT_BRANCH_STACK, NULL, 0, &f->err)) != JITANON_OK) return res;
    put32(b, 3);
    jitanon_membuf_write(&caps, b, 4);
    put_string(&caps, "branches");
    put_string(&caps, "32");
    put_string(&caps, "max_precise");
    put_string(&caps, "3");
    put_string(&caps, "pmu_name");
    put_string(&caps, "skylake");
    res = jitanon_perf_writer_add_feature(&f->w, FEAT_CPU_PMU_CAPS, caps.data, caps.size, &f->err);
    jitanon_membuf_release(&caps);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&f->r, &rec, &f->err)) == JITANON_OK)
        res = rec.type == JITANON_PERF_RECORD_SAMPLE ? lbr_sample(f, &rec)
                                                     : jitanon_perf_writer_write(&f->w, rec.raw.data, rec.raw.size, &f->err);
    return res;
}

/* ---- pt ---- */

typedef struct pt_at {
    uint64_t time, ip;
    uint32_t pid, tid;
} pt_at;

/* PT packets: PSB, TSC, MODE.Exec (64-bit), PSBEND, TIP.PGE (ip, 8 bytes), TIP.PGD. */
static size_t pt_packets(uint8_t *p, uint64_t tsc, uint64_t ip)
{
    size_t n = 0, i;
    for (i = 0; i < 8; i++) {
        p[n++] = 0x02;
        p[n++] = 0x82;
    }
    p[n++] = 0x19;
    for (i = 0; i < 7; i++) p[n++] = (uint8_t)(tsc >> 8 * i);
    p[n++] = 0x99;
    p[n++] = 0x01;
    p[n++] = 0x02;
    p[n++] = 0x23;
    p[n++] = 0xd1; /* TIP.PGE, IPBytes 110: the full 8-byte ip */
    for (i = 0; i < 8; i++) p[n++] = (uint8_t)(ip >> 8 * i);
    p[n++] = 0x01; /* TIP.PGD, ip suppressed */
    while (n % 8) p[n++] = 0; /* PAD */
    return n;
}

/* The sample_id trailer of the input's attr (TID and TIME at most, in that order). */
static size_t trailer(const fx *f, uint8_t *p, const pt_at *a)
{
    size_t n = 0;
    if (f->st & ST_TID) {
        put32(p, a->pid);
        put32(p + 4, a->tid);
        n += 8;
    }
    if (f->st & ST_TIME) {
        put64(p + n, a->time);
        n += 8;
    }
    if (f->st & ST_CPU) {
        put64(p + n, 0);
        n += 8;
    }
    put64(p + n, f->r.attrs[0].ids[0]); /* IDENTIFIER */
    return n + 8;
}

/* A kernel record of the input with IDENTIFIER appended to its sample_id trailer. */
static jitanon_result pt_copy(fx *f, const jitanon_perf_record *rec)
{
    uint8_t out[65536 + 8];
    if (rec->type >= 64 || rec->raw.size + 8 > 65535)
        return jitanon_perf_writer_write(&f->w, rec->raw.data, rec->raw.size, &f->err);
    memcpy(out, rec->raw.data, rec->raw.size);
    put64(out + rec->raw.size, f->r.attrs[0].ids[0]);
    jitanon__wr16(out + 6, (uint16_t)(rec->raw.size + 8), 0);
    return jitanon_perf_writer_write(&f->w, out, rec->raw.size + 8, &f->err);
}

static jitanon_result pt_auxtrace(fx *f, const uint8_t *rec, size_t size, jitanon_membuf *index)
{
    uint8_t e[16];
    put64(e, f->w.bytes_written);
    put64(e + 8, 48);
    jitanon_membuf_write(index, e, 16);
    return jitanon_perf_writer_write(&f->w, rec, size, &f->err);
}

static jitanon_result pt_write_buffer(fx *f, const pt_at *a, uint64_t aux_off, jitanon_membuf *index)
{
    uint8_t rec[256], data[64];
    size_t n = pt_packets(data, a->time, a->ip), t;
    jitanon_result res;
    /* AUX: {offset, size, flags} + trailer */
    put64(rec + 8, aux_off);
    put64(rec + 16, n);
    put64(rec + 24, 0);
    t = trailer(f, rec + 32, a);
    hdr(rec, 11, 0, 32 + t);
    if ((res = jitanon_perf_writer_write(&f->w, rec, 32 + t, &f->err)) != JITANON_OK) return res;
    /* AUXTRACE: {size, offset, reference, idx, tid, cpu, reserved}, then the data */
    hdr(rec, 71, 0, 48);
    put64(rec + 8, n);
    put64(rec + 16, aux_off);
    put64(rec + 24, 0x1000 + aux_off);
    put32(rec + 32, 0);
    put32(rec + 36, a->tid);
    put32(rec + 40, (uint32_t)-1);
    put32(rec + 44, 0);
    memcpy(rec + 48, data, n);
    if (f->late) { /* written at the end, as perf record writes a buffer that never filled */
        jitanon_membuf_write(&f->held, rec, 48 + n);
        return JITANON_OK;
    }
    return pt_auxtrace(f, rec, 48 + n, index);
}

/* AUXTRACE_INFO of type INTEL_PT (1): 17 private words, TSC = perf time (shift 0, mult 1,
   zero 0), tsc, noretcomp, mtc and cyc at their config bits, per-thread buffers. */
static jitanon_result pt_info(fx *f)
{
    static const uint64_t priv[17] = {PT_PMU_TYPE, 0, 1, 0, 1, 0x400, 0x800, 0, 0, 0, 0x200, 0xc000, 0, 0, 0x2, 0, 0};
    uint8_t rec[16 + 8 * 17];
    size_t i;
    hdr(rec, 70, 0, sizeof rec);
    put32(rec + 8, 1);
    put32(rec + 12, 0);
    for (i = 0; i < 17; i++) put64(rec + 16 + 8 * i, priv[i]);
    return jitanon_perf_writer_write(&f->w, rec, sizeof rec, &f->err);
}

/* PMU_MAPPINGS {u32 count, count x {u32 type, string name}} with intel_pt appended. */
static jitanon_result pt_pmus(fx *f)
{
    jitanon_membuf m = {0};
    jitanon_bytes b;
    uint8_t n[4];
    jitanon_result res;
    if (!jitanon_perf_reader_feature(&f->r, FEAT_PMU_MAPPINGS, &b) || b.size < 4) {
        put32(n, 1);
        jitanon_membuf_write(&m, n, 4);
    } else {
        jitanon_membuf_write(&m, b.data, b.size);
        put32(m.data, jitanon__rd32(b.data, 0) + 1);
    }
    put32(n, PT_PMU_TYPE);
    jitanon_membuf_write(&m, n, 4);
    put_string(&m, "intel_pt");
    res = jitanon_perf_writer_add_feature(&f->w, FEAT_PMU_MAPPINGS, m.data, m.size, &f->err);
    jitanon_membuf_release(&m);
    return res;
}

static jitanon_result pt(fx *f)
{
    jitanon_perf_record rec;
    jitanon_membuf index = {0};
    uint64_t n_user = 0, k = 0, every, aux_off = 0, flags, nbuf = 0;
    jitanon_result res;
    /* the user-mode samples the buffers go at: every n-th */
    while ((res = jitanon_perf_reader_next(&f->r, &rec, &f->err)) == JITANON_OK)
        if (rec.type == JITANON_PERF_RECORD_SAMPLE && (rec.misc & 7) == 2) n_user++;
    if (res != JITANON_END) return res;
    if (n_user < PT_BUFFERS) return JITANON__FAIL(&f->err, JITANON_ERR_UNSUPPORTED, 0, "too few user-mode samples");
    every = n_user / PT_BUFFERS;
    /* read it again: the reader cannot rewind */
    {
        char *path = f->path;
        jitanon_perf_reader_release(&f->r);
        if ((res = jitanon_perf_reader_open(&f->r, path, NULL, &f->err)) != JITANON_OK) return res;
        if ((res = jitanon_perf_reader_load_features(&f->r, &f->err)) != JITANON_OK) return res;
    }
    put32(f->attr, PT_PMU_TYPE);
    put64(f->attr + 8, 0x300e601); /* pt, mtc, tsc, branch, mtc_period 3, psb_period 3 */
    put64(f->attr + 16, 1);        /* sample_period */
    /* IDENTIFIER: perf finds the attr of every record by it once it adds the events it
       synthesizes from the trace (instructions, ptwrite, cbr...); perf record sets it
       for the dummy tracking event beside intel_pt anyway */
    put64(f->attr + 24, (f->st & ~ST_CALLCHAIN) | ST_IDENTIFIER);
    flags = jitanon__rd64(f->attr + 40, 0);
    flags &= ~(1ull << 10); /* freq */
    flags |= 1ull << 5;     /* exclude_kernel: intel_pt//u */
    put64(f->attr + 40, flags);
    if ((res = add_attr(f)) != JITANON_OK) return res;
    if ((res = copy_features(f, FEAT_PMU_MAPPINGS, "intel_pt//u")) != JITANON_OK) return res;
    if ((res = pt_pmus(f)) != JITANON_OK) return res;
    if ((res = pt_info(f)) != JITANON_OK) return res;
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&f->r, &rec, &f->err)) == JITANON_OK) {
        if (rec.type != JITANON_PERF_RECORD_SAMPLE) {
            res = pt_copy(f, &rec);
            if (res == JITANON_OK && rec.type == JITANON_PERF_RECORD_COMM && (rec.misc & 0x2000) && !nbuf) {
                uint8_t it[64];
                pt_at a;
                size_t t;
                a.pid = rec.comm.pid;
                a.tid = rec.comm.tid;
                a.time = rec.sid.time;
                a.ip = 0;
                put32(it + 8, a.pid);
                put32(it + 12, a.tid);
                t = trailer(f, it + 16, &a);
                hdr(it, 12, 0, 16 + t); /* ITRACE_START after the exec */
                res = jitanon_perf_writer_write(&f->w, it, 16 + t, &f->err);
            }
        } else if ((rec.misc & 7) == 2 && k++ % every == 0 && nbuf < PT_BUFFERS) {
            pt_at a;
            a.pid = rec.sid.pid;
            a.tid = rec.sid.tid;
            a.time = rec.sid.time;
            a.ip = nbuf % 2 ? 0x1000 : rec.sample.ip; /* 0x1000: no mapping, a decoder error */
            res = pt_write_buffer(f, &a, aux_off, &index);
            aux_off += 64;
            nbuf++;
        }
    }
    for (k = 0; res == JITANON_END && k + 48 <= f->held.size; k += 48 + jitanon__rd64(f->held.data + k + 8, 0))
        if (pt_auxtrace(f, f->held.data + k, 48 + (size_t)jitanon__rd64(f->held.data + k + 8, 0), &index) != JITANON_OK)
            res = JITANON_ERR_WRITE;
    if (res == JITANON_END) {
        jitanon_membuf hidx = {0};
        uint8_t b8[8];
        put64(b8, nbuf);
        jitanon_membuf_write(&hidx, b8, 8);
        jitanon_membuf_write(&hidx, index.data, index.size);
        res = jitanon_perf_writer_add_feature(&f->w, FEAT_AUXTRACE, hidx.data, hidx.size, &f->err);
        jitanon_membuf_release(&hidx);
        if (res == JITANON_OK) res = JITANON_END;
    }
    jitanon_membuf_release(&index);
    return res;
}

int main(int argc, char **argv)
{
    static fx f;
    jitanon_atomic_file out;
    jitanon_result res;
    int is_pt;
    if (argc != 4 || (strcmp(argv[1], "lbr") && strcmp(argv[1], "lbr-nohw") && strcmp(argv[1], "lbr-empty") &&
                      strcmp(argv[1], "pt") && strcmp(argv[1], "pt-late"))) {
        fprintf(stderr, "usage: pipeshapes_fixture lbr|lbr-nohw|lbr-empty|pt|pt-late IN OUT\n");
        return 2;
    }
    is_pt = argv[1][0] == 'p';
    f.path = argv[2];
    f.hw_idx = strcmp(argv[1], "lbr-nohw") != 0;
    f.empty_every = strcmp(argv[1], "lbr-empty") == 0 ? 4 : 0;
    f.late = strcmp(argv[1], "pt-late") == 0;
    if (jitanon_perf_reader_open(&f.r, argv[2], NULL, &f.err) != JITANON_OK || f.r.mode != JITANON_PERF_FILE ||
        f.r.big_endian || f.r.attr_count != 1 || jitanon_perf_reader_load_features(&f.r, &f.err) != JITANON_OK)
        return fail("cannot read the input (a little-endian perf.data file with one attr)", &f.err);
    f.st = f.r.attrs[0].sample_type;
    f.asize = (uint32_t)f.r.attrs[0].raw.size;
    if ((f.st & ~(ST_IP | ST_TID | ST_TIME | ST_CPU | ST_PERIOD | ST_CALLCHAIN)) || !(f.st & ST_CALLCHAIN) ||
        f.asize < 96 || f.asize > sizeof f.attr)
        return fail("the input's sample_type is not IP|TID|TIME|CPU|PERIOD|CALLCHAIN (perf record -g)", NULL);
    memcpy(f.attr, f.r.attrs[0].raw.data, f.asize);
    if (jitanon_atomic_open(&out, argv[3], NULL, &f.err) != JITANON_OK) return fail("cannot create the output", &f.err);
    res = jitanon_perf_writer_init(&f.w, JITANON_PERF_FILE, 0, jitanon_atomic_sink(&out), jitanon_atomic_pwrite, NULL, &f.err);
    if (res == JITANON_OK) res = is_pt ? pt(&f) : lbr(&f);
    if (res == JITANON_END) res = JITANON_OK;
    if (res == JITANON_OK) res = jitanon_perf_writer_finish(&f.w, &f.err);
    if (res == JITANON_OK) res = jitanon_atomic_commit(&out, 0, &f.err);
    else jitanon_atomic_abort(&out);
    jitanon_perf_writer_release(&f.w);
    jitanon_perf_reader_release(&f.r);
    jitanon_membuf_release(&f.held);
    return res == JITANON_OK ? 0 : fail("writing the output", &f.err);
}
