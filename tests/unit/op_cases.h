/* tests/unit/op_cases.h: reading the op-level cases of tests/fixtures/ops/
 * (cases.txt and the arrays of arrays.bin, written by
 * tests/fixtures/make_op_cases.py): lines into tokens, tokens into values,
 * stored arrays into tensors and their views. One reader for test_ops.c,
 * which runs the cases through the kernels, and test_pass_shapes.c, which
 * checks the shape rules against them, so that both read a case alike. */
#ifndef TS_TEST_OP_CASES_H
#define TS_TEST_OP_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "npy.h"

#define OC_MAX_TOKS 4096

/* The arrays file and the state of the case being read. */
typedef struct oc_env {
  ts_rt_ctx *c;
  uint8_t *blob; /* arrays.bin, owned (see oc_open) */
  size_t blob_len;
  double atol, rtol; /* the case's "tol" line */
  ts_buf why;        /* what differed or could not be read, for the failure message */
} oc_env;

/* A line split into space-separated tokens. */
typedef struct oc_toks {
  char *t[OC_MAX_TOKS];
  int n, i;
} oc_toks;

/* Splits line (in place) into tk's tokens; oc_next hands them out in turn
 * (NULL after the last). */
void oc_split(char *line, oc_toks *tk);
const char *oc_next(oc_toks *tk);

/* Fails the case's parse (a broken manifest, not a kernel bug): "manifest:
 * what" into e->why, and false. */
bool oc_bad(oc_env *e, const char *what);

/* Hex-coded bytes ("_" for none) appended to b; false if s is not hex. */
bool oc_unhex(const char *s, ts_buf *b);

/* value = "n" | "u" | "i" INT | "f" FLOAT | "b" 0|1 | "s" HEX | "dev" NAME
 *       | "t" OFF:LEN MODS | "L" KIND N value* | "U" N value*
 *       | "D" KIND KIND N (value value)*
 * read from tk into *out (a new reference; on failure what was built so far,
 * to release). A top-level tensor's stored array before its views goes to
 * *base (if not NULL) and whether its values are not to be compared (the
 * "noval" mod) to *noval (if not NULL). */
bool oc_value(oc_env *e, oc_toks *tk, ts_iv *out, ts_rt_tensor **base, bool *noval);

/* Reads a whole file (malloc'd, with a NUL after its len bytes) or NULL. */
uint8_t *oc_slurp(const char *path, size_t *len);

/* Reads DIR/arrays.bin into e->blob and returns the text of DIR/cases.txt
 * (malloc'd), or NULL with errno set and nothing read. */
char *oc_open(oc_env *e, const char *dir);

/* Frees e's arrays and e->why. */
void oc_close(oc_env *e);

/* The case folders under ROOT: ROOT itself, then, in name order, each of its
 * subfolders with a cases.txt (a group of cases made by its own script,
 * tests/fixtures/make_op_cases_GROUP.py). */
typedef struct oc_dirs {
  char **v;
  int n;
} oc_dirs;
bool oc_dirs_list(const char *root, oc_dirs *out);
void oc_dirs_free(oc_dirs *d);

#endif
