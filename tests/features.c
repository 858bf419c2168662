/* Built by tests/compile_matrix.sh in strict (-std=c99 -pedantic) and gnu modes: prints
   what the build has and whether the OS calls work, so the script can check that a strict
   build gets the same features as a gnu one.  argv[1]: an empty directory to write in. */
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    char path[4096];
    jitanon_jitdump_file jf;
    jitanon_atomic_file af;
    jitanon_error err;
    int dump, atomic;
    if (argc != 2 || jitanon__fmt(path, sizeof path, "%s/out", argv[1]) >= sizeof path) return 2;
    dump = jitanon_jitdump_file_open(&jf, argv[1], 62, &err) == JITANON_OK;
    dump = jitanon_jitdump_file_close(&jf, &err) == JITANON_OK && dump;
    atomic = jitanon_atomic_open(&af, path, NULL, &err) == JITANON_OK;
    if (atomic) {
        jitanon_sink s = jitanon_atomic_sink(&af);
        atomic = s.write_fn(s.user, "ok\n", 3) == 0 && jitanon_atomic_commit(&af, 1, &err) == JITANON_OK;
    }
    jitanon_atomic_abort(&af);
    printf("features %u, jitdump file %d, atomic output %d, clock %d\n", jitanon_features(), dump, atomic,
           jitanon_jitdump_now() != 0);
    { /* the zstd decoder on a one-byte raw-block frame; JITANON_NO_ZSTD: refused as disabled */
        static const uint8_t frame[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 1, 9, 0, 0, 'z'};
        jitanon_membuf out = {NULL, 0, 0, {NULL, NULL, NULL, NULL}, 0, 0, {NULL, NULL}};
        jitanon_result r = jitanon_zstd_decompress(frame, sizeof frame, &out, 0, &err);
        printf("zstd %d\n", r == JITANON_OK && out.size == 1 && out.data[0] == 'z' ? 1 : r == JITANON_ERR_FEATURE_DISABLED ? 0 : -1);
        jitanon_membuf_release(&out);
    }
    return 0;
}
