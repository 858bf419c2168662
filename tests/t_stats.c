/* jitanon_inject_stats by stage (issue #27): each count in one place, stats.trim the
   injector's decisions beside its trimming engine's own counters. */

/* The t_inject.c scenario (one process, one dump, three //anon mmaps, four samples)
   injected with anon_mode `mode`, every file written. */
static void su_run(ti_case *c, jitanon_anon_mode mode)
{
    ti_case_begin(c, 1, JITANON_PERF_FILE, 1);
    c->o.anon_mode = mode;
    c->o.late = JITANON_LATE_KEEP;
    c->o.elf_files = JITANON_ELF_FILES_ALL;
    JT_CHECK(ti_case_run(c, JITANON_PERF_FILE) == JITANON_OK);
    JT_CHECK_EQ_U(c->st.read.samples, 4);
    JT_CHECK_EQ_U(c->st.dumps.markers, 1);
    JT_CHECK_EQ_U(c->st.dumps.loaded, 1);
}

/* RANGE: the stages' counts, and the engine's own fields beside the injector's. */
static void test_stats_range(void)
{
    ti_case c;
    su_run(&c, JITANON_ANON_RANGE);
    JT_CHECK(c.st.read.records > 0 && c.st.read.rounds > 0);
    JT_CHECK_EQ_U(c.st.write.records, c.n);
    JT_CHECK_EQ_U(c.st.elf.files, 4);
    JT_CHECK_EQ_U(c.st.elf.files, c.io.elf_files);
    JT_CHECK(c.st.trim.loads >= 4);
    /* the three //anon mmaps: t=30 hides no code yet (kept), t=50 and t=80 keep one new page
       each; pieces counts those of the split ones */
    JT_CHECK_EQ_U(c.st.trim.kept, 1);
    JT_CHECK_EQ_U(c.st.trim.split, 2);
    JT_CHECK_EQ_U(c.st.trim.dropped, 0);
    JT_CHECK_EQ_U(c.st.trim.pieces, 2);
    JT_CHECK(c.st.trim.processes >= 1 && c.st.trim.peak_bytes > 0);
    JT_CHECK(c.st.trim.bytes_held <= c.st.trim.peak_bytes);
    JT_CHECK_EQ_U(c.st.trim.untrimmed, 0);
    JT_CHECK_EQ_U(c.st.fallbacks, 0);
    ti_case_end(&c);
}

/* ALL drops the dump's //anon mmaps without asking the engine: stats.trim.dropped says so. */
static void test_stats_all(void)
{
    ti_case c;
    su_run(&c, JITANON_ANON_ALL);
    JT_CHECK_EQ_U(c.st.trim.dropped, 3);
    JT_CHECK_EQ_U(c.st.trim.kept + c.st.trim.split + c.st.trim.pieces, 0);
    ti_case_end(&c);
}

static void suite_stats(void)
{
    JT_RUN(test_stats_range);
    JT_RUN(test_stats_all);
}
JT_SUITE(stats)
#undef JT_SUITES
#define JT_SUITES jt_suites_stats
