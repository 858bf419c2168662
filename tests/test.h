/* A minimal test harness: checks count, never abort, so one run reports every failure.
   The runner's last line is "N passed, M failed". */
#ifndef JITANON_TEST_H
#define JITANON_TEST_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

typedef struct jt_state {
    int passed, failed, cur_failed;
    const char *filter;
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
#endif
