/* tests/unit/test.h: the checks of the unit tests. A failed check prints
 * file:line, the expression and the values, and the test goes on; main ends
 * with `return ts_test_finish();`, which prints the tally and gives exit
 * status 1 if anything failed. Each check is an expression that yields
 * whether it passed, so a test can stop early: `if (!TS_CHECK(s)) return;`.
 *
 * Header only: the counters are per translation unit, and a test program is
 * one file. */
#ifndef TS_TEST_H
#define TS_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int ts_test_passed, ts_test_failed;

static inline bool ts_test_check(bool ok, const char *file, int line, const char *expr) {
  if (ok) {
    ts_test_passed++;
    return true;
  }
  ts_test_failed++;
  fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
  return false;
}

static inline bool ts_test_streq(const char *a, const char *b, const char *file, int line, const char *ea,
                                 const char *eb) {
  bool ok = a && b ? strcmp(a, b) == 0 : a == b;
  if (ok) {
    ts_test_passed++;
    return true;
  }
  ts_test_failed++;
  fprintf(stderr, "%s:%d: check failed: %s == %s\n  left:  %s%s%s\n  right: %s%s%s\n", file, line, ea, eb,
          a ? "\"" : "", a ? a : "NULL", a ? "\"" : "", b ? "\"" : "", b ? b : "NULL", b ? "\"" : "");
  return false;
}

static inline bool ts_test_inteq(long long a, long long b, const char *file, int line, const char *ea,
                                 const char *eb) {
  if (a == b) {
    ts_test_passed++;
    return true;
  }
  ts_test_failed++;
  fprintf(stderr, "%s:%d: check failed: %s == %s\n  left:  %lld\n  right: %lld\n", file, line, ea, eb, a, b);
  return false;
}

/* `text` (an error message) contains `want`; prints the text when not */
static inline bool ts_test_has(const char *text, const char *want, const char *file, int line, const char *et) {
  if (text && strstr(text, want)) {
    ts_test_passed++;
    return true;
  }
  ts_test_failed++;
  fprintf(stderr, "%s:%d: check failed: \"%s\" in %s\n  %s: %s\n", file, line, want, et, et, text ? text : "NULL");
  return false;
}

#define TS_CHECK(cond) ts_test_check((cond) ? true : false, __FILE__, __LINE__, #cond)
#define TS_CHECK_HAS(text, want) ts_test_has((text), (want), __FILE__, __LINE__, #text)
/* NULL equals only NULL */
#define TS_CHECK_STREQ(a, b) ts_test_streq((a), (b), __FILE__, __LINE__, #a, #b)
#define TS_CHECK_INTEQ(a, b) ts_test_inteq((long long)(a), (long long)(b), __FILE__, __LINE__, #a, #b)

/* Prints "N passed, M failed" and returns main's exit status. */
static inline int ts_test_finish(void) {
  printf("%d passed, %d failed\n", ts_test_passed, ts_test_failed);
  return ts_test_failed ? 1 : 0;
}

#endif
