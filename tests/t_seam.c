/* tests/t_seam.c: the platform seam (with POSIX threads: it reuses t_inject.c's scenario).
   The writer threads are tasks of a jitanon_thread_pool (io.thread_pool): an in-memory
   pool (tests/memio.h) that runs them on the calling thread, in order or newest first,
   gives the output of the calling thread writing every file; a pool that cannot start is
   the NO_THREADS fallback, with the same output.  A jitanon_stream over memory loads a
   dump as its bytes do. */

#if JITANON__THREADS
static void test_seam_thread_pool(void)
{
    enum { RUNS = 4 };
    static tt_io io[RUNS];
    memio_pool mp[RUNS];
    jitanon_thread_pool tp[RUNS];
    jitanon_membuf perf, out[RUNS];
    jitanon_inject_stats st[RUNS];
    size_t k;
    memset(io, 0, sizeof io);
    memset(out, 0, sizeof out);
    memset(mp, 0, sizeof mp);
    mp[2].reverse = 1; /* tasks run newest first */
    mp[3].refuse = 1;  /* no worker starts */
    for (k = 0; k < RUNS; k++) tp[k] = memio_pool_make(&mp[k]);
    tt_scenario(&io[0].base.dump, &perf);
    for (k = 1; k < RUNS; k++) jitanon_membuf_write(&io[k].base.dump, io[0].base.dump.data, io[0].base.dump.size);
    for (k = 0; k < RUNS; k++) {
        io[k].base.give_dump = 1;
        pthread_mutex_init(&io[k].mu, NULL);
        io[k].pool = &tp[k];
        tt_run(&perf, k ? 4 : 0, &io[k], &out[k], &st[k]);
        pthread_mutex_destroy(&io[k].mu);
    }
    JT_CHECK(st[0].elf.files > 0 && st[0].elf.refused > 0);
    JT_CHECK_EQ_U(mp[0].started, 0); /* elf_threads 0: the pool is never asked */
    JT_CHECK(mp[1].started > 0 && mp[1].stopped == mp[1].started && mp[2].stopped == mp[2].started);
    JT_CHECK_EQ_U(mp[3].started, 0);
    JT_CHECK(st[3].fallbacks & JITANON_INJECT_FALLBACK_NO_THREADS);
    for (k = 1; k < RUNS; k++) {
        JT_CHECK(out[k].size == out[0].size && !memcmp(out[k].data, out[0].data, out[0].size));
        JT_CHECK(io[k].nfiles == io[0].nfiles && !memcmp(io[k].files, io[0].files, io[0].nfiles * sizeof io[0].files[0]));
        JT_CHECK_EQ_U(st[k].elf.files, st[0].elf.files);
        JT_CHECK_EQ_U(st[k].elf.refused, st[0].elf.refused);
        JT_CHECK_EQ_U(st[k].trim.loads, st[0].trim.loads);
        JT_CHECK_EQ_U(st[k].trim.moves, st[0].trim.moves);
    }
    /* logs in the same order, whichever order the tasks ran in (the fallback adds a line) */
    JT_CHECK(io[1].log.size == io[0].log.size && !memcmp(io[1].log.data, io[0].log.data, io[0].log.size));
    JT_CHECK(io[2].log.size == io[0].log.size && !memcmp(io[2].log.data, io[0].log.data, io[0].log.size));
    for (k = 0; k < RUNS; k++) {
        jitanon_membuf_release(&out[k]);
        jitanon_membuf_release(&io[k].log);
        jitanon_membuf_release(&io[k].base.dump);
    }
    jitanon_membuf_release(&perf);
}

/* A dump read through a jitanon_stream over memory loads as from the bytes themselves. */
static void test_seam_stream(void)
{
    jitanon_membuf d, perf;
    jitanon_jitdump *a = NULL, *b = NULL;
    jitanon_error err;
    jitanon_stream s;
    memin m;
    memset(&d, 0, sizeof d);
    tt_scenario(&d, &perf);
    m = memin_make(d.data, d.size, 0, 1);
    s = memin_stream(&m);
    JT_CHECK_EQ_U(s.size, d.size);
    JT_CHECK(jitanon__jitdump_load_read(s.read_fn, s.user, NULL, &a, &err) == JITANON_OK);
    JT_CHECK(jitanon__stream_close(&s) == 0 && s.read_fn == NULL);
    JT_CHECK(jitanon_jitdump_load_memory(d.data, d.size, NULL, &b, &err) == JITANON_OK);
    JT_CHECK(a && b && a->size == b->size && !memcmp(a->data, b->data, b->size) && a->record_count == b->record_count);
    jitanon_jitdump_destroy(a);
    jitanon_jitdump_destroy(b);
    jitanon_membuf_release(&d);
    jitanon_membuf_release(&perf);
}
#endif

static void suite_seam(void)
{
#if JITANON__THREADS
    JT_RUN(test_seam_thread_pool);
    JT_RUN(test_seam_stream);
#endif
}
JT_SUITE(seam)
#undef JT_SUITES
#define JT_SUITES jt_suites_seam
