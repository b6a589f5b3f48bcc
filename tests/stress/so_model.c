/* tests/stress/so_model.c: see so_model.h. */
#include "so_model.h"

#include "aot.h"
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool so_model_open(so_model *m, const char *tsaot, const char *fixture, const char *work, const char *name,
                   bool example, const char *extra) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  char path[1024], examples[4096] = "";
  size_t used = 0;
  for (int i = 0; i < 16; i++) {
    snprintf(path, sizeof path, "%s/in%d.npy", fixture, i);
    if (access(path, R_OK) != 0)
      break;
    m->in_t[i] = ts_rt_npy_read(&ctx, path);
    if (!m->in_t[i] || !ts_rt_tensor_to_dl(m->in_t[i], &m->in[i])) {
      fprintf(stderr, "so_model: %s: %s\n", path, ctx.err.data ? ctx.err.data : "unreadable");
      ts_rt_ctx_free(&ctx);
      return false;
    }
    m->nin = i + 1;
    used += (size_t)snprintf(examples + used, sizeof examples - used, " %s", path);
  }
  ts_rt_ctx_free(&ctx);
  char so[1024], cmd[8192];
  snprintf(so, sizeof so, "%s/%s.so", work, name);
  snprintf(cmd, sizeof cmd, "'%s' '%s/model.pt' %s%s -o '%s' --name %s %s", tsaot, fixture,
           example && m->nin ? "--example" : "", example ? examples : "", so, name, extra ? extra : "");
  if (system(cmd) != 0) {
    fprintf(stderr, "so_model: failed: %s\n", cmd);
    return false;
  }
  char why[1024];
  if (!ts_tool_so_open(&m->f, so, why, sizeof why)) {
    fprintf(stderr, "so_model: %s\n", why);
    return false;
  }
  return true;
}

/* The library stays loaded: its runtime's process-wide tables (the op
 * table, the kernel registry) live as long as the process, and a dlclose
 * would leave them unreachable, which LeakSanitizer reports. */
void so_model_close(so_model *m) {
  if (m->f.h && m->f.release)
    m->f.release();
  for (int i = 0; i < m->nin; i++)
    ts_rt_tensor_release(m->in_t[i]);
  memset(m, 0, sizeof *m);
}
