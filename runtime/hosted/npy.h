/* runtime/hosted/npy.h: NumPy .npy files (format 1.0-3.0), for tsaot-run and the
 * tests: little-endian <f4 <f8 <f2 <i8 <i4 <i2 |i1 |u1 |b1 (and '=' / '|'
 * byte orders meaning the same), C or Fortran order, any rank up to
 * TS_RT_MAX_DIMS. The header is untrusted input: lengths, shapes and the
 * product of the shape are checked against the bytes present. */
#ifndef TS_RT_NPY_H
#define TS_RT_NPY_H

#include "runtime.h"

/* A new contiguous tensor with the array's contents. NULL with an error in c
 * naming `name` and the cause ("in0.npy: unsupported dtype '<c8'"). */
ts_rt_tensor *ts_rt_npy_parse(ts_rt_ctx *c, const void *bytes, size_t len, const char *name);
ts_rt_tensor *ts_rt_npy_read(ts_rt_ctx *c, const char *path);
/* Writes any tensor (any strides) as a C-order .npy (version 1.0). bfloat16,
 * which NumPy lacks, is refused. */
bool ts_rt_npy_write(ts_rt_ctx *c, const char *path, const ts_rt_tensor *t);

#endif
