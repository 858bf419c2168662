/* Code written for jitanon 0.1 that only uses renamed names still builds with
   JITANON_COMPAT_0_1 (tests/compile_matrix.sh builds it; it is not run).  The V8 bias
   names it uses are also kept by JITANON_COMPAT_0_2; the field v8_bias is not (no macro
   renames an identifier of the including program), so it sets line_bias. */
#define JITANON_COMPAT_0_1
#define JITANON_IMPLEMENTATION
#include "jitanon.h"

int main(void)
{
    jitanon_jitdump_iter it;
    jitanon_jit_record rec;
    jitanon_membuf buf = {0};
    jitanon_rangemap map;
    jitanon_rangemap_iter mi;
    jitanon_range range;
    jitanon_elf_opts eo;
    jitanon_elf_v8_bias bias = JITANON_ELF_V8_BIAS_ON;
    static const unsigned char none[1] = {0};
    int n = 0;
    if (jitanon_jitdump_iter_init(&it, none, 0, NULL, NULL) == JITANON_OK)
        while (jitanon_jitdump_iter_next(&it, &rec, NULL) == JITANON_OK) n += rec.id == JITANON_JIT_CODE_LOAD;
    jitanon_rangemap_init(&map, NULL);
    jitanon_rangemap_iter_all(&mi, &map);
    while (jitanon_rangemap_iter_next(&mi, &range)) n++;
    jitanon_rangemap_free(&map);
    jitanon_membuf_free(&buf);
    jitanon_jitdump_free(NULL);
    jitanon_trim_free(NULL);
    n += jitanon_is_jitdump_marker("jit-1.dump", 10, NULL);
    n += (int)(jitanon_jit_now() & 1);
    n += (int)jitanon_jit_record_name(JITANON_JIT_CODE_MOVE)[0];
    memset(&eo, 0, sizeof eo);
    eo.line_bias = bias;
    n += (int)(eo.line_bias == JITANON_ELF_V8_BIAS_OFF) + (int)(JITANON_ELF_NOTE_V8_BIAS & 0) + (int)JITANON_ELF_V8_BIAS_AUTO;
    return n == -1;
}
