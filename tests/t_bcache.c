/* perf's build-id cache, the way the injector fills it (jitanon__bc_*): the short path for
   new entries (relative paths in a directory only we can change, .build-id/<xx> kept
   open) must give the same paths, links and bytes as the component-by-component walk,
   with writer threads as without, and never follow what is planted in the cache.
   (Uses dm_write_file of tests/t_damage.c.) */
#if JITANON__POSIX

/* What the cache means, one line per entry: path, link target, size, type, mode.  A
   directory's size is left out ("-"): it counts the slots its entries took, which depends
   on the order they were created in, and writer threads decide that order. */
static int tbc_list(const char *dir, const char *file)
{
    char cmd[9000];
    sprintf(cmd, "cd '%s' && find . \\( -type d -printf '%%P %%l - %%y %%m\\n' \\) -o -printf '%%P %%l %%s %%y %%m\\n' | sort > '%s'",
            dir, file);
    return system(cmd);
}

static int tbc_same_file(const char *a, const char *b)
{
    char cmd[9000];
    sprintf(cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

/* Files elfs/f<k>.so, each with its own build-id, into cache <top>/<cache> through a
   prepared bc_dir (readied as the injector does when `ready`); base not ours alone when
   `shared` (group-writable: the walk).  Returns how many bc_put calls said 0. */
static unsigned tbc_fill(const char *top, const char *cache, int ready, int shared, int again)
{
    jitanon_buildid_cache c;
    jitanon__bc_dir b;
    jitanon_error err;
    char p[2048], elfs[2048];
    unsigned k, added = 0;
    sprintf(p, "%s/%s", top, cache);
    sprintf(elfs, "%s/elfs", top);
    JT_CHECK(jitanon_buildid_cache_open(&c, p, &err) == JITANON_OK);
    memset(&b, 0, sizeof b);
    b.root = b.base = b.ids = -1;
    JT_CHECK(jitanon__bc_prepare(&b, c.fd_, elfs) == 0);
    if (shared && !again) { /* a fresh base is ours alone; made group-writable, it is not */
        JT_CHECK(b.owned);
        JT_CHECK(fchmod(b.base, 0775) == 0);
        JT_CHECK(jitanon__bc_prepare(&b, c.fd_, elfs) == 0);
    }
    JT_CHECK(b.owned == !shared);
    for (k = 0; k < 300; k++) {
        uint8_t id[20];
        char name[32];
        int rc;
        size_t i;
        for (i = 0; i < 20; i++) id[i] = (uint8_t)(k * 37 + i * 11 + (i == 0 ? k / 7 : 0));
        sprintf(name, "f%u.so", k);
        if (ready) jitanon__bc_ready(&b, id);
        rc = jitanon__bc_put(&b, name, NULL, 0, id);
        JT_CHECK(rc == (again ? 1 : 0));
        added += rc == 0;
    }
    jitanon__bc_close(&b);
    jitanon_buildid_cache_release(&c);
    return added;
}

static void test_buildid_cache_short_path_layout(void)
{
    char dir[] = "build/tbc-XXXXXX", p[2048], q[2048], cmd[9000];
    unsigned k;
    struct stat a, b;
    if (!mkdtemp(dir)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(p, "%s/elfs", dir);
    JT_CHECK(mkdir(p, 0755) == 0);
    for (k = 0; k < 300; k++) {
        char data[64];
        int n = sprintf(data, "\177ELF file %u", k);
        sprintf(p, "%s/elfs/f%u.so", dir, k);
        dm_write_file(p, data, (size_t)n);
    }
    JT_CHECK_EQ_U(tbc_fill(dir, "walk", 0, 1, 0), 300);  /* component by component */
    JT_CHECK_EQ_U(tbc_fill(dir, "short", 1, 0, 0), 300); /* relative paths, xx kept open */
    JT_CHECK_EQ_U(tbc_fill(dir, "plain", 0, 0, 0), 300); /* relative paths, xx opened per file */
    JT_CHECK_EQ_U(tbc_fill(dir, "short", 1, 0, 1), 0);   /* again: every entry there */
    JT_CHECK_EQ_U(tbc_fill(dir, "walk", 1, 1, 1), 0);
    /* the listings, mode bits aside (the walk's base was made group-writable) */
    for (k = 0; k < 3; k++) {
        static const char *names[3] = {"walk", "short", "plain"};
        char cwd[512];
        JT_CHECK(getcwd(cwd, sizeof cwd) != NULL);
        sprintf(p, "%s/%s", dir, names[k]);
        sprintf(q, "%s/%s/%s.txt", cwd, dir, names[k]);
        JT_CHECK(tbc_list(p, q) == 0);
    }
    sprintf(cmd, "cd %s && sed -i 's/ 775$/ 755/' walk.txt && cmp -s walk.txt short.txt && cmp -s walk.txt plain.txt", dir);
    JT_CHECK(system(cmd) == 0);
    sprintf(cmd, "test $(grep -c '/elf  [0-9]* f ' %s/short.txt) = 300 && test $(grep -c '^\\.build-id/../[0-9a-f]* \\.\\./\\.\\./' %s/short.txt) = 300", dir, dir);
    JT_CHECK(system(cmd) == 0);
    /* a hard link of the file, not a copy */
    {
        char cwd[512], hex[41];
        uint8_t id[20];
        size_t i;
        JT_CHECK(getcwd(cwd, sizeof cwd) != NULL);
        for (i = 0; i < 20; i++) id[i] = (uint8_t)(5 * 37 + i * 11 + (i == 0 ? 5 / 7 : 0));
        jitanon__bc_hex(id, hex);
        sprintf(p, "%s/elfs/f5.so", dir);
        sprintf(q, "%s/short%s/%s/elfs/f5.so/%s/elf", dir, cwd, dir, hex);
        JT_CHECK(stat(p, &a) == 0 && lstat(q, &b) == 0 && S_ISREG(b.st_mode) && a.st_ino == b.st_ino);
        sprintf(p, "%s/walk%s/%s/elfs/f5.so/%s/elf", dir, cwd, dir, hex);
        JT_CHECK(tbc_same_file(p, q));
    }
    sprintf(cmd, "rm -rf %s", dir);
    JT_CHECK(system(cmd) == 0);
}

/* What is planted in the cache is not followed on the short path either: a symlink for
   the file's directory, for its build-id directory, for "elf", for .build-id/<xx>. */
static void test_buildid_cache_short_path_planted(void)
{
    static const uint8_t stub[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    char dir[] = "build/tbp-XXXXXX", p[2048], q[2048], cwd[512], base[1024], elfs[64], hex[41], cmd[9000];
    jitanon_buildid_cache c;
    jitanon__bc_dir b;
    jitanon_error err;
    uint8_t id[20];
    struct stat st;
    size_t i;
    if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    sprintf(p, "%s/elfs", dir);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/outside", dir);
    JT_CHECK(mkdir(p, 0755) == 0);
    for (i = 0; i < 4; i++) {
        sprintf(p, "%s/elfs/f%u.so", dir, (unsigned)i);
        dm_write_file(p, stub, sizeof stub);
    }
    sprintf(p, "%s/cache", dir);
    JT_CHECK(jitanon_buildid_cache_open(&c, p, &err) == JITANON_OK);
    memset(&b, 0, sizeof b);
    b.root = b.base = b.ids = -1;
    sprintf(elfs, "%s/elfs", dir); /* b keeps the pointer */
    JT_CHECK(jitanon__bc_prepare(&b, c.fd_, elfs) == 0 && b.owned);
    sprintf(base, "%s/cache%s/%s/elfs", dir, cwd, dir);
    for (i = 0; i < 20; i++) id[i] = (uint8_t)(0x40 + i);
    jitanon__bc_hex(id, hex);
    /* f0.so: its directory in the cache is a symlink */
    sprintf(p, "%s/f0.so", base);
    sprintf(q, "%s/%s/outside", cwd, dir);
    JT_CHECK(symlink(q, p) == 0);
    jitanon__bc_ready(&b, id);
    JT_CHECK(jitanon__bc_put(&b, "f0.so", NULL, 0, id) < 0);
    /* f1.so: its directory is real, <hex> in it is a symlink */
    sprintf(p, "%s/f1.so", base);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/f1.so/%s", base, hex);
    JT_CHECK(symlink(q, p) == 0);
    JT_CHECK(jitanon__bc_put(&b, "f1.so", NULL, 0, id) < 0);
    /* f2.so: <hex>/elf is a symlink: kept as it is, refused */
    sprintf(p, "%s/f2.so", base);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/f2.so/%s", base, hex);
    JT_CHECK(mkdir(p, 0755) == 0);
    sprintf(p, "%s/f2.so/%s/elf", base, hex);
    sprintf(q, "%s/%s/outside/x", cwd, dir);
    JT_CHECK(symlink(q, p) == 0);
    JT_CHECK(jitanon__bc_put(&b, "f2.so", NULL, 0, id) < 0);
    JT_CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
    /* f3.so: .build-id/<xx> is a symlink: not kept open, and each file of it gets no link */
    id[0] = 0xee;
    jitanon__bc_hex(id, hex);
    sprintf(p, "%s/cache/.build-id/ee", dir);
    sprintf(q, "%s/%s/outside", cwd, dir);
    JT_CHECK(symlink(q, p) == 0);
    jitanon__bc_ready(&b, id);
    JT_CHECK(b.xx[0xee] == -1);
    JT_CHECK(jitanon__bc_put(&b, "f3.so", NULL, 0, id) < 0);
    JT_CHECK(jitanon__bc_put(&b, "f3.so", NULL, 0, id) < 0); /* its elf is there now, the link still refused */
    /* and an entry that is fine still goes in, through the kept-open .build-id/40 */
    id[0] = 0x40;
    id[19] ^= 1;
    JT_CHECK(b.xx[0x40] > 0);
    JT_CHECK(jitanon__bc_put(&b, "f3.so", NULL, 0, id) == 0);
    jitanon__bc_close(&b);
    jitanon_buildid_cache_release(&c);
    sprintf(p, "%s/outside", dir);
    JT_CHECK(rmdir(p) == 0); /* nothing was written through any of the links */
    sprintf(cmd, "rm -rf %s", dir);
    JT_CHECK(system(cmd) == 0);
}

/* The injector with its own file writer and writer threads (the short path, xx readied by
   the calling thread) fills the cache exactly as the calling thread alone does. */
static void test_inject_buildid_cache_threads(void)
{
    static tt_io io[2];
    jitanon_membuf perf, out[2];
    jitanon_inject_stats st[2];
    jitanon_buildid_cache c[2];
    jitanon_inject_opts o;
    jitanon_error err;
    char dir[] = "build/tbt-XXXXXX", q[2048], elf[1024], cwd[512], cmd[9000];
    size_t k;
    if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd)) {
        jt_skip("cannot create a directory under build/");
        return;
    }
    memset(io, 0, sizeof io);
    memset(out, 0, sizeof out);
    memset(&perf, 0, sizeof perf);
    tt_scenario(&io[0].base.dump, &perf);
    sprintf(elf, "%s/%s/elf", cwd, dir);
    JT_CHECK(mkdir(elf, 0755) == 0);
    for (k = 0; k < 2; k++) {
        if (k) jitanon_membuf_write(&io[k].base.dump, io[0].base.dump.data, io[0].base.dump.size);
        io[k].base.give_dump = 1;
        sprintf(q, "%s/cache%u", dir, (unsigned)k);
        JT_CHECK(jitanon_buildid_cache_open(&c[k], q, &err) == JITANON_OK);
        ti_opts(&o, JITANON_ELF_PER_FUNCTION, &io[k], NULL);
        o.elf_files = JITANON_ELF_FILES_ALL;
        o.elf_threads = k == 0 ? 3 : 0;
        o.elf_dir = elf;
        o.io.log = tt_log;
        o.buildid_cache = &c[k];
        io[k].caller = pthread_self();
        JT_CHECK(ti_run(&perf, &o, JITANON_PERF_FILE, &out[k], &st[k], &err) == JITANON_OK);
        JT_CHECK(st[k].elf.files > 100);
        JT_CHECK_EQ_U(st[k].buildid.cached, st[k].elf.files);
        JT_CHECK_EQ_U(st[k].buildid.cache_failed, 0);
        jitanon_buildid_cache_release(&c[k]);
        sprintf(q, "%s/%s/cache%u.txt", cwd, dir, (unsigned)k);
        sprintf(elf + strlen(elf) - 3, "cache%u", (unsigned)k); /* <top>/cache<k> */
        JT_CHECK(tbc_list(elf, q) == 0);
        sprintf(elf + strlen(elf) - 6, "elf");
    }
    JT_CHECK(out[1].size == out[0].size && !memcmp(out[1].data, out[0].data, out[0].size));
    sprintf(cmd, "cd %s && cmp -s cache0.txt cache1.txt && test $(grep -c '^\\.build-id/../' cache0.txt) = %u",
             dir, (unsigned)st[0].elf.files);
    JT_CHECK(system(cmd) == 0);
    for (k = 0; k < 2; k++) {
        jitanon_membuf_release(&out[k]);
        jitanon_membuf_release(&io[k].log);
        jitanon_membuf_release(&io[k].base.dump);
    }
    jitanon_membuf_release(&perf);
    sprintf(cmd, "rm -rf %s", dir);
    JT_CHECK(system(cmd) == 0);
}
#endif

static void suite_bcache(void)
{
#if JITANON__POSIX
    JT_RUN(test_buildid_cache_short_path_layout);
    JT_RUN(test_buildid_cache_short_path_planted);
    JT_RUN(test_inject_buildid_cache_threads);
#endif
}
JT_SUITE(bcache)
#undef JT_SUITES
#define JT_SUITES jt_suites_bcache
