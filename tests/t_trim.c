/* Tests for the trim section. */
static void suite_trim(void) {}
