/* tools/so_load.c: see so_load.h. */
#include "so_load.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static void *ts_so_sym(const ts_tool_so *so, const char *fn) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s_%s", so->name, fn);
  return dlsym(so->h, buf);
}

bool ts_tool_so_open(ts_tool_so *so, const char *path, char *why, size_t whylen) {
  memset(so, 0, sizeof *so);
  char full[PATH_MAX];
  if ((size_t)snprintf(full, sizeof full, "%s%s", strchr(path, '/') ? "" : "./", path) >= sizeof full) {
    snprintf(why, whylen, "%s: path too long", path);
    return false;
  }
  if (!(so->h = dlopen(full, RTLD_NOW | RTLD_LOCAL))) {
    const char *e = dlerror();
    snprintf(why, whylen, "%s", e ? e : path);
    return false;
  }
  if (!(so->name = dlsym(so->h, "tsaot_model_name"))) {
    snprintf(why, whylen, "%s: not a model compiled by tsaot (it exports no tsaot_model_name)", path);
    return false;
  }
  /* POSIX: function pointers from dlsym through a void * */
  *(void **)&so->init = ts_so_sym(so, "init");
  *(void **)&so->release = ts_so_sym(so, "release");
  *(void **)&so->num_inputs = ts_so_sym(so, "num_inputs");
  *(void **)&so->num_outputs = ts_so_sym(so, "num_outputs");
  *(void **)&so->input_spec = ts_so_sym(so, "input_spec");
  *(void **)&so->output_spec = ts_so_sym(so, "output_spec");
  *(void **)&so->arena_size = ts_so_sym(so, "arena_size");
  *(void **)&so->set_threads = ts_so_sym(so, "set_threads");
  *(void **)&so->run = ts_so_sym(so, "run");
  *(void **)&so->run_static = ts_so_sym(so, "run_static");
  *(void **)&so->last_error = ts_so_sym(so, "last_error");
  *(void **)&so->last_bailout = ts_so_sym(so, "last_bailout");
  *(void **)&so->profile = ts_so_sym(so, "profile");
  *(void **)&so->profile_rows = ts_so_sym(so, "profile_rows");
  *(void **)&so->set_device = ts_so_sym(so, "set_device");
  *(void **)&so->device_stats = ts_so_sym(so, "device_stats");
  so->info = ts_so_sym(so, "tsaot_info");
  *(void **)&so->signature = ts_so_sym(so, "signature");
  if (!so->set_device || !so->device_stats || !so->init || !so->release || !so->num_inputs || !so->num_outputs ||
      !so->input_spec || !so->output_spec || !so->arena_size || !so->set_threads || !so->run || !so->run_static ||
      !so->last_error || !so->last_bailout || !so->profile || !so->profile_rows) {
    snprintf(why, whylen, "%s: the model '%s' lacks functions of include/tsaot.h", path, so->name);
    return false;
  }
  return true;
}
