/* Opening the inputs (issue #26, the front door's errors): a perf.data or a jitdump that
   cannot be opened is reported with the OS's reason, not only as an input/output error. */

static void test_open_names_os_reason(void)
{
    jitanon_perf_reader r;
    jitanon_jitdump *d = NULL;
    jitanon_error err;
    char msg[512];
    JT_CHECK(jitanon_perf_reader_open(&r, "/nonexistent-dir-jt/perf.data", NULL, &err) == JITANON_ERR_IO);
    jitanon_format_error(msg, sizeof msg, &err);
    JT_CHECK(strstr(msg, "cannot open /nonexistent-dir-jt/perf.data: ") != NULL);
    JT_CHECK(strstr(msg, strerror(ENOENT)) != NULL);
    jitanon_perf_reader_release(&r);
    JT_CHECK(jitanon_jitdump_load_file("/nonexistent-dir-jt/jit-1.dump", NULL, &d, &err) == JITANON_ERR_IO);
    JT_CHECK(d == NULL);
    JT_CHECK(strstr(err.info, strerror(ENOENT)) != NULL);
}

static void suite_open(void)
{
    JT_RUN(test_open_names_os_reason);
}
JT_SUITE(open)
#undef JT_SUITES
#define JT_SUITES jt_suites_open
