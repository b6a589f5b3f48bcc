/* tools/so_load.h: opening a library that `tsaot -o M.so` wrote, with
 * dlopen, and finding the functions of include/tsaot.h in it. Shared by
 * tsaot-run, tsaot-bench and the programs of tests/stress/. */
#ifndef TSAOT_SO_LOAD_H
#define TSAOT_SO_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "tsaot.h"

typedef struct ts_tool_so {
  void *h;          /* the dlopen handle; never closed (the runtime inside
                       keeps process-wide tables) */
  const char *name; /* the model's NAME, from its tsaot_model_name */
  int (*init)(void);
  void (*release)(void);
  int (*num_inputs)(void);
  int (*num_outputs)(void);
  int (*input_spec)(int, tsaot_spec *);
  int (*output_spec)(int, tsaot_spec *);
  size_t (*arena_size)(void);
  void (*set_threads)(int);
  int (*run)(const DLTensor *, int, DLManagedTensor **, int, int *);
  int (*run_static)(const DLTensor *, int, DLTensor *, int, void *, size_t);
  const char *(*last_error)(void);
  int (*last_bailout)(void);
  int (*profile)(int);
  int (*profile_rows)(tsaot_profile_row *, int);
  int (*set_device)(const char *);
  int (*device_stats)(tsaot_device_stats *);
  /* optional, NULL where the library lacks them: what tsaot embedded for
   * tsaot-dump --summary (NAME_tsaot_info), and forward's argument names
   * and types (NAME_signature, "name: type" a line) */
  const char *info;
  const char *(*signature)(void);
} ts_tool_so;

/* Opens the library at `path` (a name without a slash is a file in the
 * current folder, not one on the library path) and finds every function;
 * does not call init. False with the reason in why[whylen]. */
bool ts_tool_so_open(ts_tool_so *so, const char *path, char *why, size_t whylen);

#endif
