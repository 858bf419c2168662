/* Tests for the elf section. */
static void suite_elf(void) {}
