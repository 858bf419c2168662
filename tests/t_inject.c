/* Tests for the inject section. */
static void suite_inject(void) {}
