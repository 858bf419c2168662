static void suite_core(void) {}
