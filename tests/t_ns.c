/* Jitdump markers by what they are (the names runtimes write, the header's pid) and dumps
   inside another process's root (containers): resolved inside that root, never through
   a symlink to a host file. */

#include <sys/stat.h>
#include <unistd.h>

/* A pid no process has (above the kernel's largest pid_max, 2^22). */
#define NS_GONE 0x7ffffff0u

static void test_ns_marker_names(void)
{
    static const struct {
        const char *name;
        int ok;
        uint32_t pid;
    } c[] = {
        {"jit-1.dump", 1, 1},
        {"/some/dir/jit-4242.dump", 1, 4242},
        {"jit-9445-9444.dump", 1, 9444},              /* JavaScriptCore (Bun), with a directory */
        {"/tmp/jit-10849-10847-2OetbU", 1, 10847},    /* JavaScriptCore's mkstemp name, no suffix */
        {"jit-4294967295.dump", 1, 4294967295u},
        {"jit-4294967296.dump", 0, 0},
        {"jit-.dump", 0, 0},
        {"jit--1.dump", 0, 0},
        {"jit-1-.dump", 0, 0},
        {"jit-1--2.dump", 0, 0},
        {"jit-1-2-3.dump", 0, 0},
        {"jit-1-2-abcdef.dump", 0, 0},
        {"jit-1-abcdef", 0, 0},                       /* mkstemp: tid and pid */
        {"jit-1-2-abcde", 0, 0},
        {"jit-1-2-abc!ef", 0, 0},
        {"jit-1-2-abcdefg", 0, 0},
        {"jit-1-2", 0, 0},
        {"jit-12.dumpx", 0, 0},
        {"xjit-1.dump", 0, 0},
        {"jit-1.dump/x", 0, 0},
        {"jit-0x10.dump", 0, 0},
    };
    size_t i;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        uint32_t pid = 0;
        int ok = jitanon_jitdump_is_marker(c[i].name, strlen(c[i].name), &pid);
        if (ok != c[i].ok || (ok && pid != c[i].pid)) printf("  marker name %s: %d pid %u\n", c[i].name, ok, pid);
        JT_CHECK(ok == c[i].ok);
        if (ok) JT_CHECK_EQ_U(pid, c[i].pid);
    }
    JT_CHECK_EQ_U(jitanon__os_proc_root_len("/proc/12/root/tmp/jit-1.dump"), 13);
    JT_CHECK_EQ_U(jitanon__os_proc_root_len("/proc/12/root"), 0);
    JT_CHECK_EQ_U(jitanon__os_proc_root_len("/proc/self/root/tmp/jit-1.dump"), 0);
    JT_CHECK_EQ_U(jitanon__os_proc_root_len("/proc//root/x"), 0);
    JT_CHECK_EQ_U(jitanon__os_proc_root_len("/tmp/jit-1.dump"), 0);
}

static void test_ns_proc(void)
{
    uint32_t nspid = 0;
    uint64_t ino = 0;
    int other = 1;
    JT_CHECK(jitanon__os_proc_ns((uint32_t)getpid(), &nspid, &other, &ino) == 1);
    JT_CHECK(ino != 0);
    JT_CHECK_EQ_U(nspid, (uint32_t)getpid()); /* the innermost NSpid is the one we see */
    JT_CHECK(other == 0);
    JT_CHECK(jitanon__os_proc_ns(NS_GONE, &nspid, &other, &ino) == 0);
    JT_CHECK_EQ_U(nspid, NS_GONE);
}

/* Writes a one-function dump whose header names `pid` to `path`. */
static int ns_write_dump(const char *path, uint32_t pid)
{
    static const uint8_t code[16] = {0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3};
    jitanon_jitdump_writer w;
    jitanon_membuf b;
    jitanon_error err;
    FILE *f;
    int ok;
    memset(&b, 0, sizeof b);
    ok = jdrec_begin(&w, jdrec_sink(&b), 62, pid, 10, 0, &err) == JITANON_OK &&
         jdrec_write(&w, jdrec_load(40, pid, pid, 0x10000, code, sizeof code, 0, "nsfn"), &err) == JITANON_OK;
    f = ok ? fopen(path, "wb") : NULL;
    ok = f && fwrite(b.data, 1, b.size, f) == b.size;
    if (f && fclose(f) != 0) ok = 0;
    jitanon_membuf_release(&b);
    return ok;
}

/* Opens "<root><rest>" inside <root> as a dump under /proc/PID/root would be (walk: the
   fallback without openat2); 1 when it opened. */
static int ns_open(const char *root, const char *rest, int walk, const char **why)
{
    char path[512];
    uint64_t size = 0;
    int fd;
    *why = NULL;
    sprintf(path, "%s%s", root, rest);
    fd = jitanon__os_open_in_root(path, strlen(root), walk, &size, why);
    if (fd >= 0) close(fd);
    return fd >= 0;
}

/* A container's tree is its owner's: a FIFO, a device, absolute and relative symlinks to
   a host file, a symlinked directory and ".." are refused (or stay inside the root),
   with openat2 and with the walk; nothing of the host is read through them. */
static void test_ns_hostile_root(void)
{
    char base[] = "build/nsroot-XXXXXX", root[256], host[256], p[512], abs_host[4096], cwd[2048];
    struct stat st;
    int walk;
    if (!getcwd(cwd, sizeof cwd) || !mkdtemp(base)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(root, "%s/root", base);
    sprintf(host, "%s/host", base);
    JT_CHECK(mkdir(root, 0755) == 0 && mkdir(host, 0755) == 0);
    sprintf(p, "%s/tmp", root);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/secret.dump", host); /* a host file only its owner may read */
    JT_CHECK(ns_write_dump(p, 5));
    JT_CHECK(chmod(p, 0600) == 0);
    sprintf(abs_host, "%s/%s", cwd, p);
    sprintf(p, "%s/tmp/jit-5.dump", root);
    JT_CHECK(ns_write_dump(p, 5));
    sprintf(p, "%s/tmp/jit-6.dump", root);
    JT_CHECK(mkfifo(p, 0600) == 0);
    sprintf(p, "%s/tmp/jit-7.dump", root);
    JT_CHECK(symlink(abs_host, p) == 0);
    sprintf(p, "%s/tmp/jit-8.dump", root);
    {
        char rel[4096];
        size_t i;
        rel[0] = 0;
        for (i = 0; i < 40; i++) strcat(rel, "../");
        strcat(rel, abs_host + 1);
        JT_CHECK(symlink(rel, p) == 0);
    }
    sprintf(p, "%s/hostdir", root); /* a symlinked directory: to the host's, and into the root */
    sprintf(abs_host, "%s/%s", cwd, host);
    JT_CHECK(symlink(abs_host, p) == 0);
    sprintf(p, "%s/host/jit-5.dump", base);
    JT_CHECK(ns_write_dump(p, 5));
    sprintf(p, "%s/tmplink", root);
    JT_CHECK(symlink("/tmp", p) == 0);
    for (walk = 0; walk <= 1; walk++) {
        const char *why;
        JT_CHECK(ns_open(root, "/tmp/jit-5.dump", walk, &why));
        JT_CHECK(!ns_open(root, "/tmp/jit-6.dump", walk, &why) && why && strstr(why, "FIFO"));
        JT_CHECK(!ns_open(root, "/tmp/jit-7.dump", walk, &why) && why && strstr(why, "symlink"));
        JT_CHECK(!ns_open(root, "/tmp/jit-8.dump", walk, &why) && why && strstr(why, "symlink"));
        JT_CHECK(!ns_open(root, "/hostdir/jit-5.dump", walk, &why) && why);
        JT_CHECK(!ns_open(root, "/tmp/../../host/jit-5.dump", walk, &why) && why);
        JT_CHECK(!ns_open(root, "/tmp/nosuch.dump", walk, &why) && why && strstr(why, "no such file"));
        if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode)) /* a device node */
            JT_CHECK(!ns_open("/dev", "/null", walk, &why) && why && strstr(why, "device"));
        /* a symlinked directory that stays inside the root: openat2 resolves it there, the
           walk refuses every symlink */
        JT_CHECK(ns_open(root, "/tmplink/jit-5.dump", walk, &why) == (JITANON__OPENAT2 && !walk));
        if (walk) JT_CHECK(why && strstr(why, "symlink"));
    }
    sprintf(p, "rm -rf '%s'", base);
    JT_CHECK(system(p) == 0);
}

/* -- the injector: which dump a marker's process gets ------------------------------------ */

/* A recording of process `pid` whose marker (misc: MMAP_DATA or not) names `marker`,
   after a NAMESPACES record (perf record --namespaces) that gives its mount namespace's
   inode `mnt` (0: none). */
static void ns_perf(jitanon_membuf *perf, uint32_t pid, const char *marker, uint32_t misc, uint64_t mnt)
{
    ti_gen g;
    uint8_t raw[128], buf[512];
    jitanon_perf_record rec;
    size_t size = 0;
    jitanon_error err;
    memset(perf, 0, sizeof *perf);
    ti_gen_begin(&g, raw, 1, perf, JITANON_PERF_FILE);
    if (mnt) { /* header, pid, tid, 7 x {dev, inode}, sample_id (tid, time, cpu, identifier) */
        uint8_t ns[24 + 7 * 16 + 32];
        unsigned k;
        memset(ns, 0, sizeof ns);
        jitanon__wr32(ns, 16, 0);
        jitanon__wr16(ns + 6, sizeof ns, 0);
        jitanon__wr32(ns + 8, pid, 0);
        jitanon__wr32(ns + 12, pid, 0);
        jitanon__wr64(ns + 16, 7, 0);
        for (k = 0; k < 7; k++) jitanon__wr64(ns + 24 + k * 16 + 8, k == 5 ? mnt : 4026531830u + k, 0);
        jitanon__wr32(ns + 136, pid, 0);
        jitanon__wr32(ns + 140, pid, 0);
        jitanon__wr64(ns + 144, 40, 0);
        jitanon__wr64(ns + 160, TI_ID, 0);
        JT_CHECK(jitanon_perf_writer_write(&g.w, ns, sizeof ns, &err) == JITANON_OK);
    }
    memset(&rec, 0, sizeof rec);
    rec.misc = (uint16_t)(JITANON_PERF_MISC_USER | misc);
    rec.sid.time = 50;
    rec.mmap.pid = rec.mmap.tid = pid;
    rec.mmap.start = 0x7000;
    rec.mmap.len = 0x1000;
    rec.mmap.prot = misc ? 1 : 5;
    rec.mmap.flags = 2;
    rec.mmap.filename.data = marker;
    rec.mmap.filename.length = strlen(marker);
    JT_CHECK(jitanon_perf_encode_mmap2(buf, sizeof buf, &size, &rec, &g.attr, &err) == JITANON_OK);
    JT_CHECK(jitanon_perf_writer_write(&g.w, buf, size, &err) == JITANON_OK);
    ti_round(&g);
    ti_sample(&g, 60, 0x10004);
    ti_round(&g);
    jitanon_perf_writer_finish(&g.w, NULL);
    jitanon_perf_writer_release(&g.w);
}

/* Injects a recording of `pid` whose marker names `marker`; the stats and the log. */
static void ns_inject_mnt(uint32_t pid, const char *marker, uint32_t misc, uint64_t mnt, const char *dump_dir,
                          const char *elf_dir, jitanon_inject_stats *st, jt_log *log)
{
    jitanon_membuf perf, out;
    jitanon_inject_opts o;
    jitanon_error err;
    ns_perf(&perf, pid, marker, misc, mnt);
    memset(&o, 0, sizeof o);
    memset(log, 0, sizeof *log);
    memset(&out, 0, sizeof out);
    o.elf_dir = elf_dir;
    o.jitdump_dir = dump_dir;
    o.io.log = jt_log_fn;
    o.io.user = log;
    JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out, st, &err) == JITANON_OK);
    jitanon_membuf_release(&out);
    jitanon_membuf_release(&perf);
}

static void ns_inject(uint32_t pid, const char *marker, uint32_t misc, const char *dump_dir, const char *elf_dir,
                      jitanon_inject_stats *st, jt_log *log)
{
    ns_inject_mnt(pid, marker, misc, 0, dump_dir, elf_dir, st, log);
}

/* Writes a dump whose header names hdr_pid at p, then injects a recording of pid with p
   as its marker (no dump directory, ELFs in elf_dir). */
static void ns_dump_inject(uint32_t pid, const char *p, uint32_t hdr_pid, const char *elf_dir,
                           jitanon_inject_stats *st, jt_log *log)
{
    JT_CHECK(ns_write_dump(p, hdr_pid));
    ns_inject(pid, p, 0, NULL, elf_dir, st, log);
}

static void test_ns_inject_pids(void)
{
    char dir[] = "build/nsinj-XXXXXX", p[512], m[512];
    uint32_t me = (uint32_t)getpid();
    jitanon_inject_stats st;
    jt_log log;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    /* the header's pid is the process's: loaded; another pid under a name that holds it: refused */
    sprintf(p, "%s/jit-%u.dump", dir, NS_GONE);
    ns_dump_inject(NS_GONE, p, NS_GONE, dir, &st, &log);
    JT_CHECK_EQ_U(st.dumps.loaded, 1);
    JT_CHECK_EQ_U(st.dumps.in_namespace, 0);
    ns_dump_inject(NS_GONE, p, 4242, dir, &st, &log);
    JT_CHECK(st.dumps.loaded == 0 && st.dumps.failed == 1 && st.dumps.markers == 1);
    JT_CHECK(strstr(log.text, "refused: its header names pid 4242") != NULL);
    /* JavaScriptCore's two names */
    sprintf(p, "%s/jit-17-%u.dump", dir, NS_GONE);
    ns_dump_inject(NS_GONE, p, NS_GONE, dir, &st, &log);
    JT_CHECK_EQ_U(st.dumps.loaded, 1);
    sprintf(p, "%s/jit-17-%u-Ab3xYz", dir, NS_GONE);
    ns_dump_inject(NS_GONE, p, NS_GONE, dir, &st, &log);
    JT_CHECK_EQ_U(st.dumps.loaded, 1);
    /* a data mapping (perf record -d) of such a file is no marker */
    ns_inject(NS_GONE, p, 1u << 13, NULL, dir, &st, &log);
    JT_CHECK(st.dumps.markers == 0 && st.dumps.loaded == 0);
    /* a running process: a name that holds neither its pid nor its namespace pid is refused
       before anything is opened; its own pid in the header is loaded */
    sprintf(p, "%s/jit-%u.dump", dir, me + 1);
    ns_dump_inject(me, p, me + 1, dir, &st, &log);
    JT_CHECK(st.dumps.markers == 1 && st.dumps.loaded == 0 && st.dumps.failed == 1);
    JT_CHECK(strstr(log.text, "its name holds neither process") != NULL);
    sprintf(p, "%s/jit-%u.dump", dir, me);
    ns_dump_inject(me, p, me, dir, &st, &log);
    JT_CHECK_EQ_U(st.dumps.loaded, 1);
    /* an exited process in a container: its dump is gone with it; one message names the
       case and --jitdump-dir, which then finds a copy whose header carries the pid of the
       marker's name (the namespace pid) */
    sprintf(m, "/nonexistent-ns-test/jit-3.dump");
    ns_inject(NS_GONE, m, 0, NULL, dir, &st, &log);
    JT_CHECK(st.dumps.failed == 1 && log.lines == 1);
    JT_CHECK(strstr(log.text, "container") && strstr(log.text, "--jitdump-dir"));
    sprintf(p, "%s/jit-3.dump", dir);
    JT_CHECK(ns_write_dump(p, 3));
    ns_inject(NS_GONE, m, 0, dir, dir, &st, &log);
    JT_CHECK_EQ_U(st.dumps.loaded, 1);
    JT_CHECK(ns_write_dump(p, 4)); /* neither pid */
    ns_inject(NS_GONE, m, 0, dir, dir, &st, &log);
    JT_CHECK(st.dumps.loaded == 0 && strstr(log.text, "refused: its header names pid 4"));
    sprintf(p, "rm -rf '%s'", dir);
    JT_CHECK(system(p) == 0);
}

/* perf record --namespaces: a NAMESPACES record tells whether the process /proc shows
   under the recorded pid is still the recorded one.  The same mount namespace: nothing
   said; another: the pid was reused, said once, its root not read. */
static void test_ns_reused_pid(void)
{
    char dir[] = "build/nsreuse-XXXXXX", p[512];
    uint32_t me = (uint32_t)getpid();
    struct stat mine;
    jitanon_inject_stats st;
    jt_log log;
    if (stat("/proc/self/ns/mnt", &mine) != 0) {
        jt_skip("no /proc/self/ns/mnt");
        return;
    }
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(p, "%s/jit-%u.dump", dir, me);
    JT_CHECK(ns_write_dump(p, me));
    ns_inject_mnt(me, p, 0, (uint64_t)mine.st_ino, NULL, dir, &st, &log);
    JT_CHECK(st.dumps.loaded == 1 && log.lines == 0);
    ns_inject_mnt(me, p, 0, (uint64_t)mine.st_ino + 1, NULL, dir, &st, &log);
    JT_CHECK(st.dumps.loaded == 1 && log.lines == 1 && strstr(log.text, "the pid was reused"));
    sprintf(p, "rm -rf '%s'", dir);
    JT_CHECK(system(p) == 0);
}

static void suite_ns(void)
{
    JT_RUN(test_ns_marker_names);
    JT_RUN(test_ns_proc);
    JT_RUN(test_ns_hostile_root);
    JT_RUN(test_ns_inject_pids);
    JT_RUN(test_ns_reused_pid);
}
JT_SUITE(ns)
#undef JT_SUITES
#define JT_SUITES jt_suites_ns
