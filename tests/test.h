/* A minimal test harness: checks count, never abort, so one run reports every failure.
   The runner's last line is "N passed, M failed". */
#ifndef JITANON_TEST_H
#define JITANON_TEST_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef struct jt_state {
    int passed, failed, cur_failed;
    const char *filter; /* build/test_main NAME: the tests whose name has NAME in it, or suite NAME */
    const char *suite;  /* the suite running */
} jt_state;
extern jt_state jt;

#define JT_CHECK(cond)                                                             \
    do {                                                                           \
        if (!(cond)) {                                                             \
            jt.cur_failed++;                                                       \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                          \
    } while (0)

#define JT_CHECK_EQ_U(a, b)                                                        \
    do {                                                                           \
        unsigned long long jt_a_ = (unsigned long long)(a), jt_b_ = (unsigned long long)(b); \
        if (jt_a_ != jt_b_) {                                                      \
            jt.cur_failed++;                                                       \
            fprintf(stderr, "  %s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, #b, \
                    jt_a_, jt_b_);                                                 \
        }                                                                          \
    } while (0)

/* Runs one test function and prints PASS/FAIL (or SKIP when the test calls jt_skip). */
#define JT_RUN(fn) jt_run(#fn, fn)
void jt_run(const char *name, void (*fn)(void));
/* Marks the running test skipped with a reason (printed); returns nothing. */
void jt_skip(const char *reason);

/* Suites.  tests/suites.h includes every tests/t_NAME.c, one line each (the only list of
   them), and each of those files ends with its suite, registered by the lines after it:
       static void suite_NAME(void)
       {
           JT_RUN(test_NAME_first);
           ...
       }
       JT_SUITE(NAME)
       #undef JT_SUITES
       #define JT_SUITES jt_suites_NAME
   JT_SUITES() runs every suite registered so far, in the order tests/suites.h includes
   them; JT_SUITE(NAME) defines jt_suites_NAME, which runs those and then suite_NAME. */
void jt_suite(const char *name, void (*fn)(void));
#define JT_SUITE(name)                                                             \
    static void jt_suites_##name(void)                                             \
    {                                                                              \
        JT_SUITES();                                                               \
        jt_suite(#name, suite_##name);                                             \
    }
#endif
