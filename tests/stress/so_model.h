/* tests/stress/so_model.h: a fixture compiled by the build's tsaot at test
 * time and opened with dlopen, its exported functions (include/tsaot.h)
 * found by name, and its example inputs read as DLTensors. Shared by the
 * programs of tests/stress/. */
#ifndef TS_SO_MODEL_H
#define TS_SO_MODEL_H

#include "runtime.h"
#include "so_load.h"

typedef struct so_model {
  ts_tool_so f; /* the library and its functions */
  char name[64];
  /* the fixture's example inputs */
  int nin;
  ts_rt_tensor *in_t[16];
  DLTensor in[16];
} so_model;

/* Compiles FIXTURE/model.pt with `tsaot` into WORK/NAME.so (with
 * --example FIXTURE/in*.npy when `example`, plus `extra` options), opens it
 * and reads the inputs. False with the reason on stderr. */
bool so_model_open(so_model *m, const char *tsaot, const char *fixture, const char *work, const char *name,
                   bool example, const char *extra);
/* Releases the model (the library stays loaded) and frees the inputs. */
void so_model_close(so_model *m);

#endif
