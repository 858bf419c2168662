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

/* A CIE (zR, pcrel|sdata4, code 1, data -8, return address 16; CFA = rsp + 8, return
   address at CFA - 8) and one FDE for [0x1000, 0x1040) with `ins` (hex) as its
   instructions.  Returns the FDE's offset. */
static size_t cfi_build(cfi_bytes *c, const char *ins)
{
    size_t cie = c->n, fde;
    uint8_t w[4] = {0, 0, 0, 0};
    int32_t rel;
    zt_put(c, w, 4);
    zt_put(c, w, 4);                    /* CIE id 0 */
    cfi_u8s(c, "01 7a 52 00 01 78 10 01 1b"); /* version 1, "zR", 1, -8, 16, aug 1: enc 0x1b */
    cfi_u8s(c, "0c 07 08 90 01");       /* def_cfa r7 8; offset r16 at cfa-8 */
    cfi_close(c, cie);
    fde = c->n;
    zt_put(c, w, 4);
    jitanon__wr32(w, (uint64_t)(c->n - cie), 0); /* CIE pointer: back to the CIE */
    zt_put(c, w, 4);
    rel = (int32_t)CFI_FN - (int32_t)(CFI_EH_ADDR + c->n); /* pcrel pc_begin */
    jitanon__wr32(w, (uint32_t)rel, 0);
    zt_put(c, w, 4);
    jitanon__wr32(w, 0x40, 0); /* pc_range */
    zt_put(c, w, 4);
    cfi_u8s(c, "00"); /* augmentation data: none */
    cfi_u8s(c, ins);
    cfi_close(c, fde);
    return fde;
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
    memset(&c, 0, sizeof c);
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
    memset(&c, 0, sizeof c);
    memset(&r, 0, sizeof r);
    memset(&st, 0, sizeof st);
    (void)cfi_build(&c, cfi_prologue);
    /* in the body: rsp = base, rbp = base + 0x20 holds the caller's rbp, then the return address */
    st.base = 0x7ff000;
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
    memset(&c, 0, sizeof c);
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
    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    (void)cfi_build(&c, "0f 0b 77 08 80 00 3f 1a 3b 2a 33 24 22 10 03 02 73 10");
    st.base = 0x7ff000;
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
    memset(&c, 0, sizeof c);
    (void)cfi_build(&c, "0f 03 98 00 00");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1005, &row, &err), JITANON_OK);
    JT_CHECK_EQ_U(jitanon__cfi_step(&row, 16, 7, &r, cfi_stack_read, &st), -1);
    /* a branch back onto itself stops at the step bound: DW_OP_lit1, bra -3 */
    memset(&c, 0, sizeof c);
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
    memset(&c, 0, sizeof c);
    fde_at = cfi_build(&c, cfi_prologue);
    /* every cut: an error or not found, nothing else */
    for (cut = 0; cut < c.n; cut++) {
        jitanon_result r = jitanon__cfi_find(c.b, cut, CFI_EH_ADDR, 0, 0x1010, &fde, &err);
        JT_CHECK(r == JITANON_END || r == JITANON_ERR_TRUNCATED || r == JITANON_ERR_BAD_RECORD);
        if (r == JITANON_ERR_TRUNCATED) JT_CHECK(err.offset <= cut);
    }
    /* restore_state with nothing remembered, at the FDE's first instruction */
    memset(&c, 0, sizeof c);
    fde_at = cfi_build(&c, "0b");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, fde_at + 17);
    /* remember_state nested past the bound */
    memset(&c, 0, sizeof c);
    (void)cfi_build(&c, "0a 0a 0a 0a 0a 0a 0a 0a 0a");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_LIMIT);
    /* an opcode DWARF does not define */
    memset(&c, 0, sizeof c);
    (void)cfi_build(&c, "41 3f");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_UNSUPPORTED);
    /* an operand cut by the FDE's end (def_cfa with one uleb) */
    memset(&c, 0, sizeof c);
    (void)cfi_build(&c, "0c 87");
    JT_CHECK_EQ_U(cfi_row(&c, 0x1010, &row, &err), JITANON_ERR_TRUNCATED);
    /* a CIE pointer before the section */
    memset(&c, 0, sizeof c);
    fde_at = cfi_build(&c, "00");
    jitanon__wr32(c.b + fde_at + 4, 0x1000, 0);
    JT_CHECK_EQ_U(jitanon__cfi_find(c.b, c.n, CFI_EH_ADDR, 0, 0x1010, &fde, &err), JITANON_ERR_BAD_RECORD);
    JT_CHECK_EQ_U(err.offset, fde_at + 4);
}

static void suite_unwind(void)
{
    JT_RUN(test_cfi_rows);
    JT_RUN(test_cfi_step);
    JT_RUN(test_cfi_expressions);
    JT_RUN(test_cfi_damage);
}
