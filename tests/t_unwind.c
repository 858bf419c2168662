/* [unwind]: the DWARF CFI interpreter on .eh_frame bytes built by hand (a gcc-style CIE
   and FDE: prologue, frame pointer, an epilogue wrapped in remember/restore_state), the
   expressions of a PLT stub's CFA, one frame up over a fake stack, and damaged CFI
   reported with its offset. */

/* (the bytes are built in a zt_frame, t_zstd.c's buffer, with zt_put) */
typedef zt_frame cfi_bytes;

static void cfi_u8s(cfi_bytes *c, const char *hex) /* "0c 07 08": bytes */
{
    while (*hex) {
        unsigned v;
        if (*hex == ' ') {
            hex++;
            continue;
        }
        sscanf(hex, "%2x", &v);
        c->b[c->n++] = (uint8_t)v;
        hex += 2;
    }
}

/* Closes the entry that starts at `at` (its length field): pads to 4 with nops. */
static void cfi_close(cfi_bytes *c, size_t at)
{
    while ((c->n - at) % 4) c->b[c->n++] = 0;
    jitanon__wr32(c->b + at, (uint64_t)(c->n - at - 4), 0);
}

#define CFI_EH_ADDR 0x2000u
#define CFI_FN 0x1000u

/* A CIE (zR, pcrel|sdata4; `cie` hex: version 1, "zR", code and data factors, return
   address column, augmentation, initial instructions) and one FDE for [fn, fn + range)
   with `ins` (hex) as its instructions, the .eh_frame being at address eh_addr.
   Returns the FDE's offset. */
static size_t cfi_build_at(cfi_bytes *c, uint64_t eh_addr, uint64_t fn, uint32_t range, const char *cie_hex,
                           const char *ins)
{
    size_t cie = c->n, fde;
    uint8_t w[4] = {0, 0, 0, 0};
    int64_t rel;
    zt_put(c, w, 4);
    zt_put(c, w, 4); /* CIE id 0 */
    cfi_u8s(c, cie_hex);
    cfi_close(c, cie);
    fde = c->n;
    zt_put(c, w, 4);
    jitanon__wr32(w, (uint64_t)(c->n - cie), 0); /* CIE pointer: back to the CIE */
    zt_put(c, w, 4);
    rel = (int64_t)fn - (int64_t)(eh_addr + c->n); /* pcrel pc_begin */
    jitanon__wr32(w, (uint64_t)rel, 0);
    zt_put(c, w, 4);
    jitanon__wr32(w, range, 0); /* pc_range */
    zt_put(c, w, 4);
    cfi_u8s(c, "00"); /* augmentation data: none */
    cfi_u8s(c, ins);
    cfi_close(c, fde);
    return fde;
}

/* x86-64's (code 1, data -8, return address 16; CFA = rsp + 8, return address at CFA - 8)
   and arm64's (code 4, data -8, return address x30; CFA = sp) */
static const char cfi_cie_x86[] = "01 7a 52 00 01 78 10 01 1b 0c 07 08 90 01";
static const char cfi_cie_arm64[] = "01 7a 52 00 04 78 1e 01 1b 0c 1f 00";

static size_t cfi_build(cfi_bytes *c, const char *ins)
{
    memset(c, 0, sizeof *c); /* always a fresh .eh_frame */
    return cfi_build_at(c, CFI_EH_ADDR, CFI_FN, 0x40, cfi_cie_x86, ins);
}

/* gcc's push rbp; mov rbp, rsp; ...; an epilogue at 0x1024 (leave-free: the CFA back
   on rsp for one instruction), then the body again */
static const char cfi_prologue[] = "41 0e 10 86 02 43 0d 06 03 20 00 0a 0c 07 08 41 0b";

static jitanon_result cfi_row(const cfi_bytes *c, uint64_t pc, jitanon__cfi_row *row, jitanon_error *err)
{
    jitanon__cfi_fde fde;
    jitanon_result r = jitanon__cfi_find(c->b, c->n, CFI_EH_ADDR, 0, pc, &fde, err);
    if (r != JITANON_OK) return r;
    JT_CHECK_EQ_U(fde.pc, CFI_FN);
    JT_CHECK_EQ_U(fde.end, CFI_FN + 0x40);
    JT_CHECK_EQ_U(fde.cie.ra, 16);
    return jitanon__cfi_row_at(&fde, CFI_EH_ADDR, pc, row, err);
}

static void test_cfi_rows(void)
{
    static const struct {
        uint64_t pc, cfa_reg;
        int64_t cfa_off;
        int rbp_how;
    } want[] = {
        {0x1000, 7, 8, JITANON__CFI_SAME},    {0x1001, 7, 16, JITANON__CFI_OFFSET}, {0x1003, 7, 16, JITANON__CFI_OFFSET},
        {0x1004, 6, 16, JITANON__CFI_OFFSET}, {0x1023, 6, 16, JITANON__CFI_OFFSET}, {0x1024, 7, 8, JITANON__CFI_OFFSET},
        {0x1025, 6, 16, JITANON__CFI_OFFSET}, {0x103f, 6, 16, JITANON__CFI_OFFSET},
    };
    cfi_bytes c;
    jitanon__cfi_row row;
    jitanon__cfi_fde fde;
    jitanon_error err;
    size_t i;
    (void)cfi_build(&c, cfi_prologue);
    for (i = 0; i < sizeof want / sizeof want[0]; i++) {
        JT_CHECK_EQ_U(cfi_row(&c, want[i].pc, &row, &err), JITANON_OK);
        JT_CHECK_EQ_U(row.cfa_reg, want[i].cfa_reg);
        JT_CHECK_EQ_U(row.cfa_off, want[i].cfa_off);
        JT_CHECK_EQ_U(row.how[6], want[i].rbp_how);
        JT_CHECK_EQ_U(row.how[16], JITANON__CFI_OFFSET);
        JT_CHECK_EQ_U(row.arg[16], -8);
        if (want[i].rbp_how == JITANON__CFI_OFFSET) JT_CHECK_EQ_U(row.arg[6], -16);
    }
    /* outside every FDE */
    JT_CHECK_EQ_U(jitanon__cfi_find(c.b, c.n, CFI_EH_ADDR, 0, 0x1040, &fde, &err), JITANON_END);
    JT_CHECK_EQ_U(jitanon__cfi_find(c.b, c.n, CFI_EH_ADDR, 0, 0xfff, &fde, &err), JITANON_END);
}

/* A fake stack: 8-byte words from `base`; the last word readable. */
typedef struct cfi_stack {
    uint64_t base, w[16];
} cfi_stack;

/* An empty fake stack at `base`. */
static void cfi_stack_at(cfi_stack *st, uint64_t base)
{
    memset(st, 0, sizeof *st);
    st->base = base;
}

static int cfi_stack_read(const void *ctx, uint64_t addr, uint64_t *out)
{
    const cfi_stack *s = (const cfi_stack *)ctx;
    if (addr < s->base || (addr - s->base) % 8 || (addr - s->base) / 8 >= 16) return 0;
    *out = s->w[(addr - s->base) / 8];
    return 1;
}

static void test_cfi_step(void)
{
    cfi_bytes c;
    jitanon__cfi_row row;
    jitanon__cfi_regs r;
    jitanon_error err;
    cfi_stack st;
    memset(&r, 0, sizeof r);
    (void)cfi_build(&c, cfi_prologue);
    /* in the body: rsp = base, rbp = base + 0x20 holds the caller's rbp, then the return address */
    cfi_stack_at(&st, 0x7ff000);
    st.w[4] = 0xaaaa, st.w[5] = 0x5555;
    r.v[7] = st.base, r.v[6] = st.base + 0x20, r.v[3] = 77, r.v[16] = 0x1010;
    r.known = (1u << 7) | (1u << 6) | (1u << 3) | (1u << 16);
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), 1);
    JT_CHECK_EQ_U(r.v[16], 0x5555);     /* the return address */
    JT_CHECK_EQ_U(r.v[6], 0xaaaa);      /* rbp restored */
    JT_CHECK_EQ_U(r.v[7], st.base + 0x30); /* rsp = the CFA */
    JT_CHECK_EQ_U(r.v[3], 77);          /* rbx: same value */
    /* at the first instruction: the return address on top of the stack */
    memset(&r, 0, sizeof r);
    st.w[0] = 0x4444;
    r.v[7] = st.base, r.v[16] = 0x1000, r.known = (1u << 7) | (1u << 16);
    JT_CHECK_EQ_U(cfi_row(&c, 0x1000, &row, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), 1);
    JT_CHECK_EQ_U(r.v[16], 0x4444);
    JT_CHECK_EQ_U(r.v[7], st.base + 8);
    /* the return address beyond the stack: cannot step; the CFA register unknown: neither */
    r.v[7] = st.base + 8 * 16, r.known = (1u << 7) | (1u << 16);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), -1);
    r.known = 1u << 16;
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), -1);
    /* DW_CFA_undefined r16 (the outermost frame, as _start's CFI says): the end */
    (void)cfi_build(&c, "07 10");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1008, &row, &err), JITANON_OK);
    r.v[7] = st.base, r.known = (1u << 7) | (1u << 16);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), 0);
}

/* A PLT entry's CFA (binutils' x86-64 .plt): rsp + 8, plus 8 once rip & 15 >= 11 (the
   entry has pushed its index): DW_OP_breg7 8, breg16 0, lit15, and, lit11, ge, lit3,
   shl, plus; and a register saved at an expression's address (DW_CFA_expression). */
static void test_cfi_expressions(void)
{
    cfi_bytes c;
    jitanon__cfi_row row;
    jitanon__cfi_regs r;
    jitanon_error err;
    cfi_stack st;
    (void)cfi_build(&c, "0f 0b 77 08 80 00 3f 1a 3b 2a 33 24 22 10 03 02 73 10");
    cfi_stack_at(&st, 0x7ff000);
    st.w[0] = 0x1111, st.w[1] = 0x2222, st.w[2] = 0x3333;
    memset(&r, 0, sizeof r);
    r.v[7] = st.base, r.v[16] = 0x1005, r.v[3] = st.base, r.known = (1u << 7) | (1u << 16) | (1u << 3);
    JT_CHECK_EQ_U(cfi_row(&c, 0x1005, &row, &err), JITANON_OK);
    JT_CHECK(row.cfa_expr && row.how[3] == JITANON__CFI_EXPR);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), 1);
    JT_CHECK_EQ_U(r.v[7], st.base + 8); /* rip & 15 = 5: CFA = rsp + 8 */
    JT_CHECK_EQ_U(r.v[16], 0x1111);
    JT_CHECK_EQ_U(r.v[3], 0x3333); /* rbx saved at rbx + 16 (breg3 16) */
    memset(&r, 0, sizeof r);
    r.v[7] = st.base, r.v[16] = 0x100b, r.v[3] = st.base, r.known = (1u << 7) | (1u << 16) | (1u << 3);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), 1);
    JT_CHECK_EQ_U(r.v[7], st.base + 16); /* rip & 15 = 11: CFA = rsp + 16 */
    JT_CHECK_EQ_U(r.v[16], 0x2222);
    /* an operation CFI never uses (DW_OP_call2): the CFA cannot be computed */
    (void)cfi_build(&c, "0f 03 98 00 00");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1005, &row, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), -1);
    /* a branch back onto itself stops at the step bound: DW_OP_lit1, bra -3 */
    (void)cfi_build(&c, "0f 04 31 28 fc ff");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1005, &row, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), -1);
}

/* Damaged CFI: an error with its offset, never a read past the bytes. */
static void test_cfi_damage(void)
{
    cfi_bytes c;
    jitanon__cfi_row row;
    jitanon__cfi_fde fde;
    jitanon_error err;
    size_t fde_at, cut;
    fde_at = cfi_build(&c, cfi_prologue);
    /* every cut: an error or not found, nothing else */
    for (cut = 0; cut < c.n; cut++) {
        jitanon_result r = jitanon__cfi_find(c.b, cut, CFI_EH_ADDR, 0, 0x1010, &fde, &err);
        JT_CHECK(r == JITANON_END || r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_RECORD);
        if (r == JITANON_ERR_TRUNCATED) JT_CHECK(err.offset <= cut);
    }
    /* restore_state with nothing remembered, at the FDE's first instruction */
    fde_at = cfi_build(&c, "0b");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, fde_at + 17);
    /* remember_state nested past the bound */
    (void)cfi_build(&c, "0a 0a 0a 0a 0a 0a 0a 0a 0a");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_LIMIT);
    /* an opcode DWARF does not define */
    (void)cfi_build(&c, "41 3f");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_UNSUPPORTED);
    /* an operand cut by the FDE's end (def_cfa with one uleb) */
    (void)cfi_build(&c, "0c 87");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_TRUNCATED);
    /* a CIE pointer before the section */
    fde_at = cfi_build(&c, "00");
    jitanon__wr32(c.b + fde_at + 4, 0x1000, 0);
    JT_CHECK_EQ_U(jitanon__cfi_find(c.b, c.n, CFI_EH_ADDR, 0, 0x1010, &fde, &err), JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, fde_at + 4);
}

/* -- the frame iterator's unwound frames, end to end in memory ----------------------------- */

/* A recording as perf record --call-graph dwarf makes it (kernel callchain, user registers
   and 64 bytes of stack), of x86-64 or arm64 (HEADER_ARCH): a library /usr/lib/libfake.so
   (an ELF served by io.read_file: PT_LOAD, PT_GNU_EH_FRAME, .eh_frame_hdr's table and
   .eh_frame) whose function's frame holds a return address into a jitted function whose
   UNWINDING_INFO says it is the outermost. */
typedef struct unw_world {
    uint8_t elf[0x3000];
    int arm64;
    unsigned samples;
    char line[4][256];
} unw_world;

static size_t unw_read_file(void *user, const char *path, uint64_t off, void *dst, size_t size)
{
    unw_world *w = (unw_world *)user;
    if (strcmp(path, "/usr/lib/libfake.so") != 0) return SIZE_MAX;
    if (off >= sizeof w->elf) return 0;
    if (size > sizeof w->elf - off) size = sizeof w->elf - (size_t)off;
    memcpy(dst, w->elf + off, size);
    return size;
}

static jitanon_result unw_load_dump(void *user, const char *path, const jitanon_jitdump_opts *opts,
                                    jitanon_jitdump **out, jitanon_error *err)
{
    unw_world *w = (unw_world *)user;
    static const uint8_t code[0x100] = {0xc3};
    jitanon_jitdump_writer jw;
    jitanon_membuf m;
    jitanon_jitdump_header h;
    cfi_bytes eh;
    jitanon_result res;
    (void)path;
    memset(&m, 0, sizeof m);
    memset(&jw, 0, sizeof jw);
    memset(&eh, 0, sizeof eh);
    /* the JIT's .eh_frame sits ALIGN8(code_size) after its code: 0x10100 */
    (void)cfi_build_at(&eh, 0x10100, 0x10000, 0x100, w->arm64 ? cfi_cie_arm64 : cfi_cie_x86, w->arm64 ? "07 1e" : "07 10");
    h = jdrec_header(w->arm64 ? 183 : 62, TI_PID, 1, 0);
    JT_CHECK_EQ_U(jitanon_jitdump_writer_init(&jw, jdrec_sink(&m), &h, err), JITANON_OK);
    JT_CHECK_EQ_U(jdrec_write(&jw, jdrec_unwind(30, eh.b, eh.n, NULL, 0, (eh.n + 7) & ~(size_t)7), err), JITANON_OK);
    JT_CHECK_EQ_U(jdrec_write(&jw, jdrec_load(31, TI_PID, TI_PID, 0x10000, code, sizeof code, 0, "f0"), err), JITANON_OK);
    res = jitanon_jitdump_load_memory(m.data, m.size, opts, out, err);
    jitanon_membuf_release(&m);
    return res;
}

static void unw_on_sample(void *user, const jitanon_inject_sample *s)
{
    unw_world *w = (unw_world *)user;
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    size_t n = 0;
    char *out;
    if (w->samples >= 4) return;
    out = w->line[w->samples++];
    out[0] = 0;
    jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_UNWIND);
    while (jitanon_inject_frame_iter_next(&it, &f) && n < 200)
        n += (size_t)snprintf(out + n, 256 - n, "%d:%.*s:%llx ", (int)f.kind, (int)(f.kind == JITANON_FRAME_JIT ? f.name.length : f.path.length),
                              f.kind == JITANON_FRAME_JIT ? f.name.data : f.path.data, (unsigned long long)f.ip);
}

/* libfake.so: its function at 0x1000 (gcc's frame on rbp, or arm64's on x29) */
static void unw_build_elf(unw_world *w)
{
    cfi_bytes eh;
    uint8_t *e = w->elf, *ph = e + 64, *hdr = e + 0x1f00;
    size_t fde;
    memset(e, 0, sizeof w->elf);
    memset(&eh, 0, sizeof eh);
    fde = cfi_build_at(&eh, 0x2000, 0x1000, 0x40, w->arm64 ? cfi_cie_arm64 : cfi_cie_x86,
                       w->arm64 ? "0c 1d 10 9e 01 9d 02" : "0c 06 10 86 02");
    memcpy(e + 0x2000, eh.b, eh.n);
    memcpy(e, "\177ELF\2\1\1", 7);
    jitanon__wr64(e + 0x20, 64, 0); /* e_phoff */
    jitanon__wr16(e + 0x36, 56, 0);
    jitanon__wr16(e + 0x38, 2, 0);
    jitanon__wr32(ph, 1, 0); /* PT_LOAD: everything, at address = offset */
    jitanon__wr64(ph + 32, sizeof w->elf, 0);
    jitanon__wr32(ph + 56, 0x6474e550u, 0); /* PT_GNU_EH_FRAME */
    jitanon__wr64(ph + 56 + 8, 0x1f00, 0);
    jitanon__wr64(ph + 56 + 16, 0x1f00, 0);
    jitanon__wr64(ph + 56 + 32, 20, 0);
    hdr[0] = 1, hdr[1] = 0x1b, hdr[2] = 0x03, hdr[3] = 0x3b; /* eh_frame_ptr pcrel, count udata4, table datarel */
    jitanon__wr32(hdr + 4, (uint64_t)(0x2000 - (0x1f00 + 4)), 0);
    jitanon__wr32(hdr + 8, 1, 0);
    jitanon__wr32(hdr + 12, (uint64_t)(0x1000 - 0x1f00), 0);
    jitanon__wr32(hdr + 16, (uint64_t)(0x2000 + fde - 0x1f00), 0);
}

/* A SAMPLE with its callchain, then the user registers (ABI 64) and `dyn` bytes of the
   64-byte stack copy appended as the kernel lays them out. */
static void unw_sample(ti_gen *g, const jitanon_perf_attr *enc, unw_world *w, uint64_t time, uint16_t misc,
                       const uint64_t *chain, size_t n, uint64_t dyn)
{
    static const uint64_t sp = 0x7ff000;
    jitanon_perf_record rec;
    jitanon_error err;
    uint8_t buf[1024], raw[4 * 8];
    size_t size = 0, k;
    unsigned nregs = w->arm64 ? 33 : 9, i;
    memset(&rec, 0, sizeof rec);
    for (k = 0; k < n; k++) jitanon__wr64(raw + 8 * k, chain[k], 0);
    rec.type = JITANON_PERF_RECORD_SAMPLE;
    rec.misc = misc;
    rec.sample.ip = n ? chain[1] : 0x501010;
    rec.sid.pid = rec.sid.tid = TI_PID;
    rec.sid.time = time;
    rec.sample.period = 1;
    rec.sample.callchain.data = raw, rec.sample.callchain.size = 8 * n, rec.sample.callchain_nr = n;
    JT_CHECK_EQ_U(jitanon_perf_encode(buf, sizeof buf, &size, &rec, enc, &err), JITANON_OK);
    jitanon__wr64(buf + size, 2, 0), size += 8; /* PERF_SAMPLE_REGS_ABI_64 */
    for (i = 0; i < nregs; i++) {
        uint64_t v = 1000 + i;
        if (w->arm64 ? i == 31 : i == 7) v = sp;
        if (w->arm64 ? i == 29 : i == 6) v = sp + 0x20; /* the frame pointer */
        if (w->arm64 ? i == 32 : i == 8) v = 0x501010;  /* the pc in libfake's function */
        jitanon__wr64(buf + size, v, 0), size += 8;
    }
    jitanon__wr64(buf + size, 64, 0), size += 8;
    for (k = 0; k < 8; k++) jitanon__wr64(buf + size + 8 * k, k == 4 ? 0x7ff100 : k == 5 ? 0x10021 : 0, 0);
    size += 64;
    jitanon__wr64(buf + size, dyn, 0), size += 8;
    jitanon__wr16(buf + 6, size, 0);
    JT_CHECK_EQ_U(jitanon_perf_writer_write(&g->w, buf, size, &err), JITANON_OK);
}

static void unw_run(unw_world *w)
{
    const uint64_t K = JITANON_PERF_CONTEXT_KERNEL;
    const uint64_t kchain[] = {K, 0xffffffff81000100ull};
    uint8_t raw[128], arch[12];
    jitanon_perf_attr enc;
    jitanon_membuf perf;
    jitanon_inject_opts o;
    jitanon_error err;
    ti_gen g;
    memset(&perf, 0, sizeof perf);
    unw_build_elf(w);
    ti_gen_begin(&g, raw, 1, &perf, JITANON_PERF_FILE);
    jitanon_perf_writer_release(&g.w);
    memset(&perf, 0, sizeof perf);
    g.attr.sample_type |= JITANON_PERF_SAMPLE_CALLCHAIN;
    enc = g.attr; /* what the encoder writes: up to the callchain */
    g.attr.sample_type |= JITANON_PERF_SAMPLE_REGS_USER | JITANON_PERF_SAMPLE_STACK_USER;
    JT_CHECK_EQ_U(jitanon_perf_encode_attr(raw, sizeof raw, &g.attr, 4000, 0, &err), JITANON_OK);
    jitanon__wr64(raw + 80, w->arm64 ? 0x1ffffffffull : 0x1ffu, 0); /* sample_regs_user */
    jitanon__wr32(raw + 88, 64, 0);                                  /* sample_stack_user */
    JT_CHECK_EQ_U(jitanon_perf_writer_init(&g.w, JITANON_PERF_FILE, 0, jdrec_sink(&perf), membuf_pwrite, NULL, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon_perf_writer_add_attr(&g.w, &g.attr, &err), JITANON_OK);
    memset(arch, 0, sizeof arch);
    jitanon__wr32(arch, 8, 0);
    memcpy(arch + 4, w->arm64 ? "aarch64" : "x86_64", w->arm64 ? 7 : 6);
    JT_CHECK_EQ_U(jitanon_perf_writer_add_feature(&g.w, 6, arch, sizeof arch, &err), JITANON_OK); /* HEADER_ARCH */
    api_mmap(&g, UINT32_MAX, 1, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
    ti_mmap(&g, 10, 0x500000, 0x3000, 0, "/usr/lib/libfake.so");
    ti_mmap(&g, 11, 0x7000, 0x1000, 0, "/some/dir/jit-100.dump");
    ti_mmap(&g, 12, 0x10000, 0x1000, 0x10000, "//anon");
    ti_mmap(&g, 13, 0x7f0000, 0x10000, 0, "[stack]");
    unw_sample(&g, &enc, w, 60, JITANON_PERF_MISC_USER, NULL, 0, 64);      /* libfake, then the JIT's f0 */
    unw_sample(&g, &enc, w, 61, 1 /* PERF_RECORD_MISC_KERNEL */, kchain, 2, 64);  /* the kernel's frame first */
    unw_sample(&g, &enc, w, 62, JITANON_PERF_MISC_USER, NULL, 0, 40);      /* return address past the copy */
    unw_sample(&g, &enc, w, 63, 1, kchain, 2, 0);                          /* the kernel copied no stack */
    ti_round(&g);
    ti_gen_end(&g);
    jitanon_inject_opts_init(&o);
    o.on_sample = unw_on_sample;
    o.io.user = w;
    o.io.load_dump = unw_load_dump;
    o.io.read_file = unw_read_file;
    JT_CHECK_EQ_U(ti_run_no_output(&perf, &o, NULL, &err), JITANON_OK);
    jitanon_membuf_release(&perf);
}

static void test_unwind_frames(void)
{
    int arm64;
    for (arm64 = 0; arm64 < 2; arm64++) {
        unw_world *w = (unw_world *)calloc(1, sizeof *w);
        JT_CHECK(w != NULL);
        if (!w) return;
        w->arm64 = arm64;
        unw_run(w);
        JT_CHECK_EQ_U(w->samples, 4);
        /* the user ip, then the caller at its return address less one, then the end the
           JIT's CFI says (its return address undefined) */
        JT_CHECK(!strcmp(w->line[0], "3:/usr/lib/libfake.so:501010 1:f0:10020 "));
        JT_CHECK(!strcmp(w->line[1], "4:[kernel.kallsyms]_text:ffffffff81000100 3:/usr/lib/libfake.so:501010 1:f0:10020 "));
        /* the return address's word is past what the kernel filled (dyn_size 40) and the
           process maps it ([stack]): read as 0, as perf reads it, the frame ~0 */
        JT_CHECK(!strcmp(w->line[2], "3:/usr/lib/libfake.so:501010 0::ffffffffffffffff "));
        /* dyn_size 0 (the copy faulted, as in a syscall CPython made): perf unwinds no
           user frame, not even the ip; the kernel's part alone */
        JT_CHECK(!strcmp(w->line[3], "4:[kernel.kallsyms]_text:ffffffff81000100 "));
        if (jt.cur_failed)
            fprintf(stderr, "  %s: %s | %s | %s | %s\n", arm64 ? "arm64" : "x86-64", w->line[0], w->line[1], w->line[2],
                    w->line[3]);
        free(w);
    }
}

static void suite_unwind(void)
{
    JT_RUN(test_cfi_rows);
    JT_RUN(test_cfi_step);
    JT_RUN(test_cfi_expressions);
    JT_RUN(test_cfi_damage);
    JT_RUN(test_unwind_frames);
}
JT_SUITE(unwind)
#undef JT_SUITES
#define JT_SUITES jt_suites_unwind
