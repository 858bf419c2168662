/* Runs a libFuzzer harness without libFuzzer: every file argument, and every file inside a
   directory argument, is passed once to LLVMFuzzerTestOneInput.  `make test` uses this to
   replay fuzz/corpus and fuzz/regressions under ASan+UBSan with any compiler.
   A missing directory is not an error (a harness may have no regressions yet). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) {
        perror(path);
        return 1;
    }
    do {
        if (len == cap) {
            uint8_t *n = (uint8_t *)realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!n) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = n;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    d = opendir(path);
    if (!d) return 1;
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rc |= run_path(sub, count);
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int i, rc = 0, count = 0;
    for (i = 1; i < argc; i++) rc |= run_path(argv[i], &count);
    fprintf(stderr, "replayed %d input(s)\n", count);
    return rc;
}
