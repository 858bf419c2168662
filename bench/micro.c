/* bench-micro: micro benchmarks of jitanon's pieces against their floors, plus two helpers
   for bench/run.sh.  Built by bench/run.sh: $CC -O2 -I. -o build/bench-micro bench/micro.c

   bench-micro run PERF.DATA JIT.DUMP SCRATCHDIR [REPEAT]
       perf.data scan (jitanon_perf_reader_next vs read() of the file, page cache warm),
       jitdump parse, ELF emission (memory; files vs empty files), trimming engine.
       Each number is the median of REPEAT runs (default 3).
   bench-micro scan PERF.DATA [REPEAT]
       only the perf.data scan.
   bench-micro floor SRCDIR DSTDIR [--atomic] [--cache CACHEDIR]
       creates, in DSTDIR, one file per *.so file of SRCDIR with the same size
       (open O_CREAT|O_EXCL, write, close; --atomic: a temporary name, then rename, as
       jitanon-inject writes its ELFs) and prints "files N bytes B seconds S".  --cache:
       also what a build-id cache entry costs, as perf lays it out: two directories, a
       hard link and a .build-id symlink per file (plain path calls, no checks).
   bench-micro symbolize PERF.DATA [REPEAT]
       a profiler's one pass (jitanon_inject with no writer and opts.on_sample): with
       nothing asked of the samples, then with every field (JITANON_SAMPLE_COMM, every
       frame with JITANON_FRAME_WANT_ALL: perf map, build-id, source line); CPU time,
       medians, and their ratio (issue #34: within 1.5x).
   bench-micro time OUTFILE CMD [ARGS...]
       runs CMD and writes "wall_s user_s sys_s maxrss_kb" to OUTFILE (a stand-in for
       /usr/bin/time -f '%e %U %S %M'); exits with CMD's status. */
#define _GNU_SOURCE
#define JITANON_IMPLEMENTATION
#include "jitanon.h"
#include "tools/symbols.h" /* the demangler the tools pass (with -DJITANON_CXA_DEMANGLE) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXREP 15

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, const jitanon_error *err)
{
    char msg[512] = "";
    if (err) jitanon_format_error(msg, sizeof msg, err);
    else snprintf(msg, sizeof msg, "%s", strerror(errno));
    fprintf(stderr, "bench-micro: %s: %s\n", what, msg);
    exit(1);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    struct stat st;
    uint8_t *p;
    size_t got = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) die(path, NULL);
    p = (uint8_t *)malloc((size_t)st.st_size + 1);
    if (!p) die("malloc", NULL);
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, p + got, (size_t)st.st_size - got);
        if (n <= 0) die(path, NULL);
        got += (size_t)n;
    }
    close(fd);
    *size = got;
    return p;
}

/* -- perf.data scan -------------------------------------------------------------------- */

static double scan_read(const char *path, uint64_t *bytes)
{
    static uint8_t buf[1 << 20];
    double t = now();
    ssize_t n;
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path, NULL);
    *bytes = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) *bytes += (uint64_t)n;
    close(fd);
    return now() - t;
}

static size_t fd_read(void *user, void *dst, size_t size)
{
    ssize_t n = read(*(int *)user, dst, size);
    return n < 0 ? SIZE_MAX : (size_t)n;
}

static int fd_seek(void *user, uint64_t off)
{
    return lseek(*(int *)user, (off_t)off, SEEK_SET) == (off_t)off ? 0 : 1;
}

/* mode 0: jitanon_perf_reader_open (stdio); 1: read()/lseek callbacks */
static double scan_jitanon(const char *path, int mode, uint64_t *records, uint64_t *samples)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    int fd = -1;
    double t = now();
    uint64_t ipsum = 0;
    if (mode == 0) res = jitanon_perf_reader_open(&r, path, NULL, &err);
    else {
        fd = open(path, O_RDONLY);
        if (fd < 0) die(path, NULL);
        res = jitanon_perf_reader_init(&r, fd_read, fd_seek, &fd, NULL, &err);
    }
    *records = *samples = 0;
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        ++*records;
        if (rec.type == JITANON_PERF_RECORD_SAMPLE) ++*samples, ipsum += rec.sample.ip;
    }
    if (res != JITANON_END) die("perf reader", &err);
    jitanon_perf_reader_release(&r);
    if (fd >= 0) close(fd);
    if (ipsum == 1) fprintf(stderr, " ");
    return now() - t;
}

static void bench_scan(const char *path, int rep)
{
    double tr[MAXREP], tj[MAXREP], tf[MAXREP], mr, mj, mf;
    uint64_t bytes = 0, records = 0, samples = 0;
    int i;
    scan_read(path, &bytes); /* warm the page cache */
    for (i = 0; i < rep; i++) {
        tr[i] = scan_read(path, &bytes);
        tj[i] = scan_jitanon(path, 0, &records, &samples);
        tf[i] = scan_jitanon(path, 1, &records, &samples);
    }
    mr = median(tr, rep), mj = median(tj, rep), mf = median(tf, rep);
    printf("perf.data scan     %.1f MB, %llu records (%llu samples)\n", (double)bytes / 1e6, (unsigned long long)records,
           (unsigned long long)samples);
    printf("  read() 1 MiB       %8.3f s  %8.0f MB/s                       (floor)\n", mr, (double)bytes / 1e6 / mr);
    printf("  reader, stdio      %8.3f s  %8.0f MB/s  %6.1f M records/s  %5.1fx floor\n", mj, (double)bytes / 1e6 / mj,
           (double)records / 1e6 / mj, mj / mr);
    printf("  reader, read()     %8.3f s  %8.0f MB/s  %6.1f M records/s  %5.1fx floor\n", mf, (double)bytes / 1e6 / mf,
           (double)records / 1e6 / mf, mf / mr);
}

/* -- jitdump parse ----------------------------------------------------------------------- */

static void bench_jitdump(const char *path, const uint8_t *data, size_t size, int rep)
{
    double ti[MAXREP], tl[MAXREP], tf[MAXREP], tr[MAXREP], m;
    uint64_t n = 0, dummy;
    int i;
    for (i = 0; i < rep; i++) {
        jitanon_jitdump_iter it;
        jitanon_jitdump_record rec;
        jitanon_error err;
        jitanon_jitdump *d;
        jitanon_result res;
        double t = now();
        n = 0;
        res = jitanon_jitdump_iter_begin(&it, data, size, NULL, &err);
        while (res == JITANON_OK && (res = jitanon_jitdump_iter_next(&it, &rec, &err)) == JITANON_OK) n++;
        if (res != JITANON_END) die("jitdump iter", &err);
        ti[i] = now() - t;
        t = now();
        if (jitanon_jitdump_load_memory(data, size, NULL, &d, &err) != JITANON_OK) die("jitdump load", &err);
        tl[i] = now() - t;
        jitanon_jitdump_destroy(d);
        t = now();
        if (jitanon_jitdump_load_file(path, NULL, &d, &err) != JITANON_OK) die("jitdump load_file", &err);
        tf[i] = now() - t;
        jitanon_jitdump_destroy(d);
        tr[i] = scan_read(path, &dummy);
    }
    printf("jitdump parse      %.1f MB, %llu records\n", (double)size / 1e6, (unsigned long long)n);
    m = median(tr, rep);
    printf("  read() 1 MiB       %8.3f s  %8.0f MB/s                       (floor)\n", m, (double)size / 1e6 / m);
    m = median(ti, rep);
    printf("  iter (in memory)   %8.3f s  %8.0f MB/s  %6.1f M records/s\n", m, (double)size / 1e6 / m, (double)n / 1e6 / m);
    m = median(tl, rep);
    printf("  load_memory        %8.3f s  %8.0f MB/s  (copy + index)\n", m, (double)size / 1e6 / m);
    m = median(tf, rep);
    printf("  load_file          %8.3f s  %8.0f MB/s\n", m, (double)size / 1e6 / m);
}

/* -- ELF emission ------------------------------------------------------------------------ */

typedef struct funcs {
    jitanon_jitdump *d;
    jitanon_elf_func *f;
    size_t n;
} funcs;

static void collect(funcs *fs, const uint8_t *data, size_t size)
{
    const jitanon_jitdump_record *debug = NULL, *unwind = NULL;
    jitanon_error err;
    size_t i;
    if (jitanon_jitdump_load_memory(data, size, NULL, &fs->d, &err) != JITANON_OK) die("jitdump load", &err);
    fs->f = (jitanon_elf_func *)calloc(fs->d->record_count + 1, sizeof *fs->f);
    if (!fs->f) die("calloc", NULL);
    fs->n = 0;
    for (i = 0; i < fs->d->record_count; i++) {
        const jitanon_jitdump_record *r = &fs->d->records[i];
        if (r->id == JITANON_JITDUMP_CODE_DEBUG_INFO) debug = r;
        if (r->id == JITANON_JITDUMP_CODE_UNWINDING_INFO) unwind = r;
        if (r->id != JITANON_JITDUMP_CODE_LOAD) continue;
        fs->f[fs->n].name = r->load.name;
        fs->f[fs->n].code_addr = r->load.code_addr;
        fs->f[fs->n].code = r->load.code;
        fs->f[fs->n].debug = debug && debug->debug.code_addr == r->load.code_addr ? debug : NULL;
        fs->f[fs->n].unwind = unwind;
        debug = unwind = NULL;
        fs->n++;
    }
}

/* Creates path (which must not exist yet) with size bytes of data: open, write (none
   for an empty file), close, as a plain writer of one file per function would. */
static void create_file(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0) die(path, NULL);
}

static void bench_elf(const funcs *fs, const char *scratch, int rep)
{
    double tm[MAXREP], tp[MAXREP], tw[MAXREP], te[MAXREP], m, me;
    uint64_t bytes = 0, pbytes = 0;
    char path[4096];
    int i;
    size_t k;
    jitanon_membuf mb;
    jitanon_sink sink;
    jitanon_error err;
    memset(&mb, 0, sizeof mb);
    sink.write_fn = jitanon_membuf_write;
    sink.user = &mb;
    for (i = 0; i < rep; i++) {
        jitanon_elf_builder b;
        double t = now();
        bytes = 0;
        for (k = 0; k < fs->n; k++) {
            mb.size = 0;
            if (jitanon_elf_write_function(sink, &fs->d->header, &fs->f[k], NULL, NULL, &err) != JITANON_OK)
                die("elf write", &err);
            bytes += mb.size;
        }
        tm[i] = now() - t;
        t = now();
        mb.size = 0;
        if (jitanon_elf_builder_init(&b, &fs->d->header, NULL, &err) != JITANON_OK) die("elf init", &err);
        for (k = 0; k < fs->n; k++)
            if (jitanon_elf_builder_add(&b, &fs->f[k], NULL, &err) != JITANON_OK) die("elf add", &err);
        if (jitanon_elf_builder_finish(&b, sink, NULL, &err) != JITANON_OK) die("elf finish", &err);
        jitanon_elf_builder_release(&b);
        pbytes = mb.size;
        tp[i] = now() - t;
        /* to files: one ELF per function, plain open/write/close */
        snprintf(path, sizeof path, "%s/elf%d", scratch, i);
        if (mkdir(path, 0755) != 0) die(path, NULL);
        t = now();
        for (k = 0; k < fs->n; k++) {
            mb.size = 0;
            if (jitanon_elf_write_function(sink, &fs->d->header, &fs->f[k], NULL, NULL, &err) != JITANON_OK)
                die("elf write", &err);
            snprintf(path, sizeof path, "%s/elf%d/jitted-%u-%zu.so", scratch, i, (unsigned)fs->d->header.pid, k);
            create_file(path, mb.data, mb.size);
        }
        tw[i] = now() - t;
        snprintf(path, sizeof path, "%s/empty%d", scratch, i);
        if (mkdir(path, 0755) != 0) die(path, NULL);
        t = now();
        for (k = 0; k < fs->n; k++) {
            snprintf(path, sizeof path, "%s/empty%d/jitted-%u-%zu.so", scratch, i, (unsigned)fs->d->header.pid, k);
            create_file(path, NULL, 0);
        }
        te[i] = now() - t;
    }
    jitanon_membuf_release(&mb);
    printf("ELF emission       %zu functions\n", fs->n);
    m = median(tm, rep);
    printf("  per function, mem  %8.3f s  %8.0f functions/s  %6.0f MB/s\n", m, (double)fs->n / m, (double)bytes / 1e6 / m);
    m = median(tp, rep);
    printf("  one file, mem      %8.3f s  %8.0f functions/s  %6.0f MB/s\n", m, (double)fs->n / m, (double)pbytes / 1e6 / m);
    me = median(te, rep);
    printf("  empty files        %8.3f s  %8.0f files/s                   (floor)\n", me, (double)fs->n / me);
    m = median(tw, rep);
    printf("  per function, files%8.3f s  %8.0f functions/s  %5.1fx floor\n", m, (double)fs->n / m, m / me);
}

/* -- trimming engine --------------------------------------------------------------------- */

typedef struct event {
    uint64_t time, start, len, pgoff;
    int is_mmap;
} event;

static int cmp_event(const void *a, const void *b)
{
    const event *x = (const event *)a, *y = (const event *)b;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* The events an injector feeds the engine for the benchmark input: the jitdump's loads and
   the perf.data's //anon mmaps of the same process, in time order. */
static void bench_trim(const char *perf_path, const funcs *fs, int rep)
{
    jitanon_perf_reader r;
    jitanon_perf_record rec;
    jitanon_error err;
    jitanon_result res;
    event *ev = NULL;
    size_t n = 0, cap = 0, k, i, nm = 0;
    uint32_t pid = fs->d->header.pid;
    double tt[MAXREP], m;
    uint64_t pieces = 0;
    res = jitanon_perf_reader_open(&r, perf_path, NULL, &err);
    while (res == JITANON_OK && (res = jitanon_perf_reader_next(&r, &rec, &err)) == JITANON_OK) {
        if (rec.type != JITANON_PERF_RECORD_MMAP2 || rec.mmap.pid != pid ||
            jitanon_trim_classify(rec.mmap.filename.data, rec.mmap.filename.length) != JITANON_TRIM_ANON)
            continue;
        if (n == cap && !(ev = (event *)realloc(ev, (cap = cap * 2 + 1024) * sizeof *ev))) die("realloc", NULL);
        ev[n].time = rec.sid.time, ev[n].start = rec.mmap.start, ev[n].len = rec.mmap.len, ev[n].pgoff = rec.mmap.pgoff;
        ev[n++].is_mmap = 1;
        nm++;
    }
    if (res != JITANON_END) die("perf reader", &err);
    jitanon_perf_reader_release(&r);
    for (k = 0, i = 0; k < fs->d->record_count; k++) {
        const jitanon_jitdump_record *j = &fs->d->records[k];
        if (j->id != JITANON_JITDUMP_CODE_LOAD) continue;
        if (n == cap && !(ev = (event *)realloc(ev, (cap = cap * 2 + 1024) * sizeof *ev))) die("realloc", NULL);
        ev[n].time = j->timestamp, ev[n].start = j->load.code_addr, ev[n].len = j->load.code_size, ev[n].pgoff = i++;
        ev[n++].is_mmap = 0;
    }
    qsort(ev, n, sizeof *ev, cmp_event);
    for (i = 0; i < (size_t)rep; i++) {
        jitanon_trim *t = NULL;
        double t0 = now();
        if (jitanon_trim_create(NULL, &t, &err) != JITANON_OK || jitanon_trim_set_jitdump(t, pid, &err) != JITANON_OK)
            die("trim", &err);
        pieces = 0;
        for (k = 0; k < n; k++) {
            size_t cnt = 0;
            jitanon_trim_event te;
            te.pid = pid, te.time = ev[k].time, te.start = ev[k].start, te.len = ev[k].len;
            if (ev[k].is_mmap) {
                te.kind = JITANON_TRIM_ANON, te.pgoff = ev[k].pgoff, te.id = k;
                res = jitanon_trim_mmap(t, &te, NULL, &cnt, &err);
            } else {
                te.kind = JITANON_TRIM_JIT, te.pgoff = 0, te.id = ev[k].pgoff; /* pgoff holds the function's number */
                res = jitanon_trim_load(t, &te, &err);
            }
            if (res != JITANON_OK) die("trim event", &err);
            pieces += cnt;
        }
        tt[i] = now() - t0;
        jitanon_trim_destroy(t);
    }
    free(ev);
    m = median(tt, rep);
    printf("trimming engine    %zu events (%zu loads, %zu //anon mmaps -> %llu pieces)\n", n, n - nm, nm,
           (unsigned long long)pieces);
    printf("  trim               %8.3f s  %8.2f M events/s  %6.2f M pieces/s\n", m, (double)n / 1e6 / m,
           (double)pieces / 1e6 / m);
}

/* -- helpers for run.sh ------------------------------------------------------------------ */

/* mkdir -p of path (its components, each may exist) */
static void mkdirs(char *path)
{
    char *p;
    for (p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0755) != 0 && errno != EEXIST) die(path, NULL);
            *p = '/';
        }
    if (mkdir(path, 0755) != 0 && errno != EEXIST) die(path, NULL);
}

/* the cache entry of dst/name: <cache>/<abs dst>/<name>/<hex>/elf and the .build-id link
   (the directories down to <cache>/<abs dst> and .build-id exist already) */
static void floor_cache(const char *cache, const char *absdst, const char *name, const char *path, uint64_t k)
{
    char hex[41], dir[8192], link_[8300], target[8300];
    snprintf(hex, sizeof hex, "%016llx%024llx", (unsigned long long)(k * 0x9e3779b97f4a7c15ull), (unsigned long long)k);
    snprintf(dir, sizeof dir, "%s%s/%s", cache, absdst, name);
    if (mkdir(dir, 0755) != 0) die(dir, NULL);
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/%s", hex);
    if (mkdir(dir, 0755) != 0) die(dir, NULL);
    snprintf(link_, sizeof link_, "%s/elf", dir);
    if (link(path, link_) != 0) die(link_, NULL);
    snprintf(link_, sizeof link_, "%s/.build-id/%.2s", cache, hex);
    if (mkdir(link_, 0755) != 0 && errno != EEXIST) die(link_, NULL);
    snprintf(link_ + strlen(link_), sizeof link_ - strlen(link_), "/%s", hex + 2);
    snprintf(target, sizeof target, "../..%s/%s/%s", absdst, name, hex);
    if (symlink(target, link_) != 0) die(link_, NULL);
}

static int floor_cmd(const char *src, const char *dst, int atomic, const char *cache)
{
    char absdst[4096];
    DIR *d = opendir(src);
    struct dirent *e;
    char path[4096], tmp[4096];
    static uint8_t zero[1 << 16];
    uint64_t files = 0, bytes = 0;
    double t;
    size_t nsz = 0, capsz = 0, k;
    struct { char name[256]; size_t size; } *list = NULL;
    if (!d) die(src, NULL);
    while ((e = readdir(d))) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", src, e->d_name);
        size_t len = strlen(e->d_name);
        if (len < 4 || len >= 256 || strcmp(e->d_name + len - 3, ".so") != 0) continue;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (nsz == capsz && !(list = realloc(list, (capsz = capsz * 2 + 1024) * sizeof *list))) die("realloc", NULL);
        snprintf(list[nsz].name, sizeof list[nsz].name, "%s", e->d_name);
        list[nsz++].size = (size_t)st.st_size;
    }
    closedir(d);
    if (mkdir(dst, 0755) != 0 && errno != EEXIST) die(dst, NULL);
    if (!realpath(dst, absdst)) die(dst, NULL);
    if (cache) {
        snprintf(path, sizeof path, "%s%s", cache, absdst);
        mkdirs(path);
        snprintf(path, sizeof path, "%s/.build-id", cache);
        mkdirs(path);
    }
    t = now();
    for (k = 0; k < nsz; k++) {
        size_t left = list[k].size;
        int fd;
        snprintf(path, sizeof path, "%s/%s", dst, list[k].name);
        snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dst, list[k].name);
        fd = open(atomic ? tmp : path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) die(path, NULL);
        while (left) {
            size_t c = left < sizeof zero ? left : sizeof zero;
            if (write(fd, zero, c) != (ssize_t)c) die(path, NULL);
            left -= c;
        }
        if (close(fd) != 0 || (atomic && rename(tmp, path) != 0)) die(path, NULL);
        if (cache) floor_cache(cache, absdst, list[k].name, path, k);
        files++;
        bytes += list[k].size;
    }
    t = now() - t;
    free(list);
    printf("files %llu bytes %llu seconds %.3f\n", (unsigned long long)files, (unsigned long long)bytes, t);
    return 0;
}

/* -- a profiler's one pass: nothing asked vs every field -------------------------------- */

typedef struct symb {
    uint64_t samples, frames, lines, sum;
    int all;
} symb;

static void symb_sample(void *user, const jitanon_inject_sample *s)
{
    symb *b = (symb *)user;
    jitanon_inject_frame_iter it;
    jitanon_frame f;
    b->samples++;
    b->sum += s->ip;
    if (!b->all) return;
    b->sum += s->comm.length;
    jitanon_inject_frame_iter_begin(&it, s, JITANON_FRAME_WANT_ALL);
    while (jitanon_inject_frame_iter_next(&it, &f)) {
        b->frames++;
        b->lines += f.line != 0;
        b->sum += f.name.length + f.build_id.size + f.line;
    }
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double symb_pass(const char *path, int all, symb *b)
{
    jitanon_inject_opts o;
    jitanon_error err;
    double t = cpu_now();
    memset(b, 0, sizeof *b);
    b->all = all;
    jitanon_inject_opts_init(&o);
    o.on_sample = symb_sample;
    o.sample_user = b;
    o.sample_fields = all ? JITANON_SAMPLE_COMM : 0;
    if (all) sy_set_demangle(&o); /* every field: C++ names demangled, as the tools print them */
    if (jitanon_symbolize_file(path, &o, NULL, NULL, &err) != JITANON_OK) die(path, &err);
    return cpu_now() - t;
}

static void bench_symbolize(const char *path, int rep)
{
    double tn[MAXREP], ta[MAXREP], mn, ma;
    symb bn, ba;
    int i;
    (void)symb_pass(path, 0, &bn); /* warm the page cache (the recording and its dumps) */
    for (i = 0; i < rep; i++) {
        tn[i] = symb_pass(path, 0, &bn);
        ta[i] = symb_pass(path, 1, &ba);
    }
    mn = median(tn, rep), ma = median(ta, rep);
    printf("one pass, %llu samples (CPU time, medians of %d, side by side)\n", (unsigned long long)bn.samples, rep);
    printf("  nothing asked      %8.3f s\n", mn);
    printf("  every field        %8.3f s  %llu frames, %llu with a line  %5.2fx\n", ma,
           (unsigned long long)ba.frames, (unsigned long long)ba.lines, ma / mn);
}

static int time_cmd(const char *out, char **argv)
{
    struct rusage ru;
    int status = 0;
    double t = now();
    FILE *f;
    pid_t pid = fork();
    if (pid < 0) die("fork", NULL);
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid) die("wait4", NULL);
    t = now() - t;
    f = fopen(out, "w");
    if (!f) die(out, NULL);
    fprintf(f, "%.2f %.2f %.2f %ld\n", t, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6,
            (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6, ru.ru_maxrss);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "run")) {
        size_t size;
        uint8_t *dump = slurp(argv[3], &size);
        int rep = argc >= 6 ? atoi(argv[5]) : 3;
        funcs fs;
        if (rep < 1) rep = 1;
        if (rep > MAXREP) rep = MAXREP;
        bench_scan(argv[2], rep);
        bench_jitdump(argv[3], dump, size, rep);
        collect(&fs, dump, size);
        bench_elf(&fs, argv[4], rep);
        bench_trim(argv[2], &fs, rep);
        jitanon_jitdump_destroy(fs.d);
        free(fs.f);
        free(dump);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "scan")) {
        int rep = argc >= 4 ? atoi(argv[3]) : 3;
        bench_scan(argv[2], rep < 1 ? 1 : rep > MAXREP ? MAXREP : rep);
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "floor")) {
        const char *cache = NULL;
        int atomic = 0, i;
        for (i = 4; i < argc; i++)
            if (!strcmp(argv[i], "--atomic")) atomic = 1;
            else if (!strcmp(argv[i], "--cache") && i + 1 < argc) cache = argv[++i];
        return floor_cmd(argv[2], argv[3], atomic, cache);
    }
    if (argc >= 3 && !strcmp(argv[1], "symbolize")) {
        int rep = argc >= 4 ? atoi(argv[3]) : 3;
        bench_symbolize(argv[2], rep < 1 ? 1 : rep > MAXREP ? MAXREP : rep);
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "time")) return time_cmd(argv[2], argv + 3);
    fprintf(stderr, "usage: bench-micro run PERF.DATA JIT.DUMP SCRATCHDIR [REPEAT]\n"
                    "       bench-micro scan PERF.DATA [REPEAT]\n"
                    "       bench-micro symbolize PERF.DATA [REPEAT]\n"
                    "       bench-micro floor SRCDIR DSTDIR [--atomic] [--cache CACHEDIR]\n"
                    "       bench-micro time OUTFILE CMD [ARGS...]\n");
    return 2;
}
