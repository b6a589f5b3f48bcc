/* tools/tool_util.h: what the command-line tools share: reading files and
 * turning --input/--example arguments into the input types that
 * specialization (passes/shape_prop.c) takes. */
#ifndef TSAOT_TOOL_UTIL_H
#define TSAOT_TOOL_UTIL_H

#include "passes.h"

/* All of `path` ("-": standard input) in a malloc'd, NUL-terminated buffer;
 * NULL after printing "PROG: error: ..." to stderr. At most `max` bytes. */
char *ts_tool_read_file(const char *prog, const char *path, size_t max, size_t *len);

/* One type per input of `g` for ts_pass_env.input_types: `specs[k]` stands
 * for the k-th input after a leading input of class type (self), and is
 * either a .npy file (its dtype and sizes: an example input) or a spec text
 * ("f32[1,3,224,224]", passes/spec.c). A 0-d .npy given for an int, float
 * or bool parameter is a number, not a tensor: its entry stays NULL. Types
 * live in g's arena; the array is malloc'd (free it). NULL with the reason
 * in d (more specs than inputs, an unreadable file, a bad spec). */
const ts_type **ts_tool_input_types(ts_graph *g, const char *const *specs, uint32_t nspecs, ts_diag *d);

#endif
