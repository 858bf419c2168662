static void suite_jitdump(void) {}
