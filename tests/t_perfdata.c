/* Tests for the perfdata section. */
static void suite_perfdata(void) {}
