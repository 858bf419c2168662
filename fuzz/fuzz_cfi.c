/* libFuzzer harness: the DWARF CFI interpreter ([unwind]).  Input: u64 pc, then an
   .eh_frame placed at address 0x10000.  The FDE found must hold pc; its rule row is
   applied to registers that are all known, with the input itself as the stack (at
   0x7f0000): every step answers -1, 0 or 1, a step that moved the stack pointer sets
   it to the CFA, and nothing reads outside the input (ASan). */
#define JITANON_IMPLEMENTATION
#define FUZZ_NAME "fuzz_cfi"
#include "jitanon.h"
#include "fuzz_common.h"
#include <string.h>

#define EH_ADDR 0x10000u
#define STACK 0x7f0000u

typedef struct stack_view {
    const uint8_t *p;
    size_t n;
} stack_view;

static int read_stack(const void *ctx, uint64_t addr, uint64_t *out)
{
    const stack_view *s = (const stack_view *)ctx;
    if (addr < STACK || addr - STACK >= s->n || s->n - (addr - STACK) < 8) return 0;
    *out = jitanon__rd64(s->p + (addr - STACK), 0);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jitanon__cfi_fde fde;
    jitanon__cfi_row row;
    jitanon__cfi_regs r;
    jitanon_error err;
    jitanon_result res;
    stack_view st;
    uint64_t pc;
    unsigned i;
    int k;
    if (size < 8) return 0;
    pc = jitanon__rd64(data, 0);
    res = jitanon__cfi_find(data + 8, size - 8, EH_ADDR, 0, pc, &fde, &err);
    CHECK(res == JITANON_OK || res == JITANON_END || res == JITANON_ERR_TRUNCATED || res == JITANON_ERR_BAD_RECORD ||
          res == JITANON_ERR_UNSUPPORTED);
    if (res != JITANON_OK) return 0;
    CHECK(pc >= fde.pc && pc < fde.end);
    res = jitanon__cfi_row_at(&fde, EH_ADDR, pc, &row, &err);
    CHECK(res == JITANON_OK || res == JITANON_ERR_TRUNCATED || res == JITANON_ERR_BAD_RECORD ||
          res == JITANON_ERR_UNSUPPORTED || res == JITANON_ERR_LIMIT);
    if (res != JITANON_OK) return 0;
    for (i = 0; i < JITANON__CFI_NREGS; i++) r.v[i] = STACK + 8u * i;
    r.known = ((uint64_t)1 << JITANON__CFI_NREGS) - 1;
    st.p = data, st.n = size;
    k = jitanon__cfi_step(&row, fde.cie.ra < JITANON__CFI_NREGS ? fde.cie.ra : 16, 7, &r, read_stack, &st);
    CHECK(k == -1 || k == 0 || k == 1);
    if (k == 1) CHECK(r.known >> 7 & 1);
    return 0;
}
