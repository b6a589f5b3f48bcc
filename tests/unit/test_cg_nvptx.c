/* tests/unit/test_cg_nvptx.c: --device cuda without a GPU (codegen/nvptx.c,
 * fusion.c's GPU form).
 *
 *   - the launch geometry rule and the 32/64-bit index choice at their
 *     boundaries; the architectures accepted;
 *   - a GPU kernel built for the host (fusion.c calls tsaot_gpu_tid_x ...
 *     instead of NVPTX's special registers off NVPTX) and run here over a
 *     grid smaller than the element count, in i32 and i64: broadcast
 *     operands, a scalar by value and a bool output against C arithmetic;
 *   - the PTX of ts_cg_cuda_compile: a .visible .entry per group, global
 *     loads and stores, 64-bit compares exactly where the sizes need them,
 *     libdevice linked for the C library's functions (or the clear error
 *     without it);
 *   - the embedded image (NAME_cuda) read back through the JIT with
 *     runtime/hosted/cuda.h's layout. */
#include "cg_jit.h"
#include "codegen.h"
#include "cuda.h"
#include "runtime.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
  else if (!TS_CHECK(ts_graph_verify(g, &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

static ts_node *find_group(ts_graph *g) {
  for (ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next)
    if (ts_node_is(n, TS_K_prim_FusionGroup))
      return n;
  return NULL;
}

/* ---------------------------------------------------------- geometry */

static void test_geometry(void) {
  ts_cg_gpu_kernel k = ts_cg_gpu_geometry(0);
  TS_CHECK_INTEQ(k.grid, 1); /* a launch needs one block even for nothing */
  TS_CHECK_INTEQ(k.block, 128);
  TS_CHECK(!k.index64);
  k = ts_cg_gpu_geometry(1000);
  TS_CHECK_INTEQ(k.block, 128);
  TS_CHECK_INTEQ(k.grid, 8); /* ceil(1000 / 128) */
  k = ts_cg_gpu_geometry(32767);
  TS_CHECK_INTEQ(k.block, 128);
  k = ts_cg_gpu_geometry(32768);
  TS_CHECK_INTEQ(k.block, 256);
  TS_CHECK_INTEQ(k.grid, 128);
  k = ts_cg_gpu_geometry(1 << 20);
  TS_CHECK_INTEQ(k.grid, 4096);
  TS_CHECK(!k.index64);
  /* the grid is capped, the loop strides over the rest */
  int64_t stride = (int64_t)TS_CG_GPU_MAX_GRID * 256;
  k = ts_cg_gpu_geometry(1000000000);
  TS_CHECK_INTEQ(k.grid, TS_CG_GPU_MAX_GRID);
  TS_CHECK(!k.index64);
  /* i32 while the last index plus one stride stays below 2^31 */
  k = ts_cg_gpu_geometry(2147483647 - stride);
  TS_CHECK(!k.index64);
  k = ts_cg_gpu_geometry(2147483647 - stride + 1);
  TS_CHECK(k.index64);
  k = ts_cg_gpu_geometry((int64_t)3 << 32);
  TS_CHECK(k.index64);
  TS_CHECK_INTEQ(k.grid, TS_CG_GPU_MAX_GRID);

  TS_CHECK_STREQ(ts_cg_gpu_arch_ptx("sm_80"), "+ptx70");
  TS_CHECK_STREQ(ts_cg_gpu_arch_ptx("sm_90"), "+ptx78");
  TS_CHECK(ts_cg_gpu_arch_ptx("sm_70") != NULL);
  TS_CHECK(ts_cg_gpu_arch_ptx("sm_90a") != NULL);
  TS_CHECK(ts_cg_gpu_arch_ptx("sm_60") == NULL);
  TS_CHECK(ts_cg_gpu_arch_ptx("sm_100") == NULL);
  TS_CHECK(ts_cg_gpu_arch_ptx("compute_80") == NULL);
  TS_CHECK(ts_cg_gpu_arch_ptx(NULL) == NULL);
}

/* --------------------------------------------- a GPU kernel on the host */

/* o = a * b * s + c, o2 = a * b > c over a: (2, 3, 4), b: (3, 1), c: (4) */
static const char bcast_text[] =
    "graph(%a : Float(2, 3, 4), %b : Float(3, 1), %c : Float(4), %s : float):\n"
    "  %o : Float(2, 3, 4), %o2 : Bool(2, 3, 4) = prim::FusionGroup_0(%a, %b, %c, %s)\n"
    "  return (%o, %o2)\n"
    "with prim::FusionGroup_0 = graph(%a : Float(2, 3, 4), %b : Float(3, 1), %c : Float(4), %s : float):\n"
    "  %k1 : int = prim::Constant[value=1]()\n"
    "  %t : Float(2, 3, 4) = aten::mul(%a, %b)\n"
    "  %u : Float(2, 3, 4) = aten::mul(%t, %s)\n"
    "  %o : Float(2, 3, 4) = aten::add(%u, %c, %k1)\n"
    "  %o2 : Bool(2, 3, 4) = aten::gt(%t, %c)\n"
    "  return (%o, %o2)\n";

/* the emulated special registers of the thread being run */
static int32_t emu_tid, emu_ntid, emu_ctaid, emu_nctaid;
static int32_t emu_tid_x(void) { return emu_tid; }
static int32_t emu_ntid_x(void) { return emu_ntid; }
static int32_t emu_ctaid_x(void) { return emu_ctaid; }
static int32_t emu_nctaid_x(void) { return emu_nctaid; }

typedef void (*bcast_fn)(const float *a, const float *b, const float *c, double s, float *o, uint8_t *o2);

static void run_grid(bcast_fn f, uint32_t grid, uint32_t block, const float *a, const float *b, const float *c,
                     double s, float *o, uint8_t *o2) {
  emu_ntid = (int32_t)block;
  emu_nctaid = (int32_t)grid;
  for (uint32_t g = 0; g < grid; g++)
    for (uint32_t t = 0; t < block; t++) {
      emu_ctaid = (int32_t)g;
      emu_tid = (int32_t)t;
      f(a, b, c, s, o, o2);
    }
}

static void test_host_kernel(void) {
  ts_graph *g = parse(bcast_text);
  ts_node *grp = g ? find_group(g) : NULL;
  if (!TS_CHECK(grp != NULL)) {
    ts_graph_free(g);
    return;
  }
  ts_cg_module m;
  ts_diag d = {0};
  ts_cg_target_opts to = {NULL, NULL, NULL, 2};
  if (!TS_CHECK(ts_cg_module_init(&m, "gpu_host", &to, &d))) {
    ts_graph_free(g);
    ts_diag_free(&d);
    return;
  }
  /* a grid of 2 x 4 threads over 24 elements: each thread strides 3 times */
  ts_cg_gpu_kernel k32 = {.nelems = 24, .block = 4, .grid = 2, .index64 = false};
  ts_cg_gpu_kernel k64 = k32;
  k64.index64 = true;
  uint8_t kinds[6] = {9, 9, 9, 9, 9, 9};
  LLVMValueRef f32 = ts_cg_fusion_kernel_gpu(&m, grp, "k32", &k32, kinds, &d);
  LLVMValueRef f64 = ts_cg_fusion_kernel_gpu(&m, grp, "k64", &k64, NULL, &d);
  TS_CHECK(f32 && f64);
  if (d.text.data)
    fprintf(stderr, "%s", d.text.data);
  TS_CHECK_INTEQ(kinds[0], TS_RT_CUDA_PARAM_TENSOR);
  TS_CHECK_INTEQ(kinds[2], TS_RT_CUDA_PARAM_TENSOR);
  TS_CHECK_INTEQ(kinds[3], TS_RT_CUDA_PARAM_F64);
  TS_CHECK_INTEQ(kinds[4], TS_RT_CUDA_PARAM_TENSOR);
  TS_CHECK_INTEQ(kinds[5], TS_RT_CUDA_PARAM_TENSOR);
  if (!f32 || !f64 || !TS_CHECK(ts_cg_module_optimize(&m, &d))) {
    ts_cg_module_dispose(&m);
    ts_graph_free(g);
    ts_diag_free(&d);
    return;
  }
  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (!TS_CHECK(j != NULL)) {
    fprintf(stderr, "%s\n", err ? err : "");
    free(err);
    ts_graph_free(g);
    ts_diag_free(&d);
    return;
  }
  TS_CHECK(ts_test_jit_define(j, "tsaot_gpu_tid_x", (void *)(uintptr_t)emu_tid_x) &&
           ts_test_jit_define(j, "tsaot_gpu_ntid_x", (void *)(uintptr_t)emu_ntid_x) &&
           ts_test_jit_define(j, "tsaot_gpu_ctaid_x", (void *)(uintptr_t)emu_ctaid_x) &&
           ts_test_jit_define(j, "tsaot_gpu_nctaid_x", (void *)(uintptr_t)emu_nctaid_x));
  float a[24], b[3], c[4];
  for (int i = 0; i < 24; i++)
    a[i] = (float)(i % 7) * 0.75f - 2.0f;
  for (int i = 0; i < 3; i++)
    b[i] = 1.5f - (float)i;
  for (int i = 0; i < 4; i++)
    c[i] = (float)i * 0.5f - 0.25f;
  double s = 0.3;
  const char *names[2] = {"k32", "k64"};
  for (int v = 0; v < 2; v++) {
    void *p = ts_test_jit_lookup(j, names[v]);
    if (!TS_CHECK(p != NULL))
      continue;
    bcast_fn f;
    memcpy(&f, &p, sizeof f);
    float o[24];
    uint8_t o2[24];
    memset(o, 0xff, sizeof o);
    memset(o2, 7, sizeof o2);
    run_grid(f, 2, 4, a, b, c, s, o, o2);
    int bad = 0;
    for (int i = 0; i < 24; i++) {
      /* PyTorch: float tensor * Python float computes in float */
      volatile float t = a[i] * b[(i / 4) % 3];
      volatile float u = t * (float)s;
      float want = u + c[i % 4];
      bad += memcmp(&o[i], &want, sizeof want) != 0;
      bad += o2[i] != (t > c[i % 4]);
    }
    TS_CHECK_INTEQ(bad, 0);
  }
  ts_test_jit_free(j);
  ts_graph_free(g);
  ts_diag_free(&d);
}

/* ----------------------------------------------------------------- PTX */

static bool has_line(const char *text, const char *start, const char *part) {
  size_t n = strlen(start);
  for (const char *l = text; l && *l;) {
    while (*l == ' ' || *l == '\t')
      l++;
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    if (len >= n && !memcmp(l, start, n)) {
      char buf[256];
      snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), l);
      if (strstr(buf, part))
        return true;
    }
    l = e ? e + 1 : NULL;
  }
  return false;
}

static void test_ptx(void) {
  ts_graph *g = parse(bcast_text);
  if (!g)
    return;
  ts_diag d = {0};
  ts_cg_cuda_options o = {.arch = "sm_90", .opt_level = 3};
  ts_cg_cuda_ptx p;
  if (!TS_CHECK(ts_cg_cuda_compile(g, &o, &p, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  } else {
    TS_CHECK(strstr(p.ptx.data, ".version 7.8\n") != NULL);
    TS_CHECK(strstr(p.ptx.data, ".target sm_90\n") != NULL);
    TS_CHECK(strstr(p.ptx.data, ".visible .entry tsaot_fg0(") != NULL);
    TS_CHECK(has_line(p.ptx.data, "ld.global", ".f32"));
    TS_CHECK(has_line(p.ptx.data, "st.global", ".f32"));
    TS_CHECK(has_line(p.ptx.data, "st.global", ".u8"));
    TS_CHECK(!has_line(p.ptx.data, "setp.", "64")); /* 24 elements: i32 */
    TS_CHECK(!p.libdevice);
    TS_CHECK_INTEQ(p.nk, 1);
    TS_CHECK_INTEQ(p.ngroups, 1);
    if (p.nk == 1) {
      TS_CHECK_STREQ(p.k[0].name, "tsaot_fg0");
      TS_CHECK_INTEQ(p.k[0].geom.nelems, 24);
      TS_CHECK_INTEQ(p.k[0].geom.grid, 1);
      TS_CHECK_INTEQ(p.k[0].nparams, 6);
      TS_CHECK_INTEQ(p.k[0].kinds[3], TS_RT_CUDA_PARAM_F64);
    }
  }
  ts_cg_cuda_ptx_free(&p);
  o.arch = "sm_60";
  ts_diag_free(&d);
  TS_CHECK(!ts_cg_cuda_compile(g, &o, &p, &d));
  TS_CHECK(d.text.data && strstr(d.text.data, "--gpu-arch sm_60: expected one of sm_70"));
  ts_diag_free(&d);
  ts_graph_free(g);

  /* 3 * 2^30 elements (never allocated): 64-bit indices; a group the GPU
   * lowering refuses stays a note */
  g = parse("graph(%a : Float(3, 1073741824), %x : Half(4)):\n"
            "  %o : Float(3, 1073741824) = prim::FusionGroup_0(%a)\n"
            "  %h : Half(4) = prim::FusionGroup_1(%x)\n"
            "  return (%o, %h)\n"
            "with prim::FusionGroup_0 = graph(%a : Float(3, 1073741824)):\n"
            "  %o : Float(3, 1073741824) = aten::relu(%a)\n"
            "  return (%o)\n"
            "with prim::FusionGroup_1 = graph(%x : Half(4)):\n"
            "  %h : Half(4) = aten::relu(%x)\n"
            "  return (%h)\n");
  if (g) {
    o.arch = "sm_80";
    if (TS_CHECK(ts_cg_cuda_compile(g, &o, &p, &d))) {
      TS_CHECK(strstr(p.ptx.data, ".target sm_80\n") != NULL);
      TS_CHECK(strstr(p.ptx.data, ".version 7.0\n") != NULL);
      TS_CHECK(has_line(p.ptx.data, "setp.", "64"));
      TS_CHECK_INTEQ(p.nk, 1);
      TS_CHECK_INTEQ(p.ngroups, 2);
      TS_CHECK(p.nk == 1 && p.k[0].geom.index64);
      TS_CHECK(p.notes.data && strstr(p.notes.data, "fusion group (node 1) stays on the CPU"));
    } else {
      fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    }
    ts_cg_cuda_ptx_free(&p);
    ts_diag_free(&d);
    ts_graph_free(g);
  }
}

/* tan calls the C library on the CPU: libdevice's __nv_tanf on the GPU */
static void test_libdevice(void) {
  ts_graph *g = parse("graph(%a : Float(8)):\n"
                      "  %o : Float(8) = prim::FusionGroup_0(%a)\n"
                      "  return (%o)\n"
                      "with prim::FusionGroup_0 = graph(%a : Float(8)):\n"
                      "  %o : Float(8) = aten::tan(%a)\n"
                      "  return (%o)\n");
  if (!g)
    return;
  ts_diag d = {0};
  ts_cg_cuda_ptx p;
  ts_cg_cuda_options o = {.arch = "sm_90", .libdevice = "/nonexistent/libdevice.10.bc", .opt_level = 2};
  TS_CHECK(!ts_cg_cuda_compile(g, &o, &p, &d));
  TS_CHECK(d.text.data && strstr(d.text.data, "/nonexistent/libdevice.10.bc") && strstr(d.text.data, "tanf") &&
           strstr(d.text.data, "TSAOT_LIBDEVICE"));
  ts_diag_free(&d);
  const char *lib = getenv("TSAOT_LIBDEVICE");
  o.libdevice = lib && *lib ? lib : "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  if (access(o.libdevice, R_OK) != 0) {
    printf("skipped: linking libdevice: %s not found (no CUDA toolkit here)\n", o.libdevice);
  } else if (TS_CHECK(ts_cg_cuda_compile(g, &o, &p, &d))) {
    TS_CHECK(p.libdevice);
    /* linked and internalized: nothing left to resolve, no libdevice
     * function exported */
    TS_CHECK(strstr(p.ptx.data, ".extern") == NULL);
    TS_CHECK(!has_line(p.ptx.data, ".visible .func", ""));
    TS_CHECK(strstr(p.ptx.data, ".visible .entry tsaot_fg0(") != NULL);
    ts_cg_cuda_ptx_free(&p);
  } else {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  }
  ts_diag_free(&d);
  ts_graph_free(g);
}

/* ------------------------------------------------------- the embedding */

static void test_embed(void) {
  ts_graph *g = parse(bcast_text);
  if (!g)
    return;
  ts_diag d = {0};
  ts_cg_cuda_options o = {.arch = "sm_86", .opt_level = 2};
  ts_cg_cuda_ptx p;
  ts_cg_module m;
  ts_cg_target_opts to = {NULL, NULL, NULL, 1};
  if (!TS_CHECK(ts_cg_cuda_compile(g, &o, &p, &d)) || !TS_CHECK(ts_cg_module_init(&m, "embed", &to, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  TS_CHECK(ts_cg_cuda_embed(&m, "mdl", "sm_86", &p, &d));
  TS_CHECK(!ts_cg_cuda_embed(&m, "mdl", "sm_86", &p, &d)); /* defined already */
  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (TS_CHECK(j != NULL)) {
    const ts_rt_cuda_image *im = ts_test_jit_lookup(j, "mdl_cuda");
    if (TS_CHECK(im != NULL)) {
      ts_buf why = {0};
      TS_CHECK(ts_rt_cuda_image_check(im, &why));
      TS_CHECK_INTEQ(im->version, TS_RT_CUDA_IMAGE_VERSION);
      TS_CHECK_INTEQ(im->nkernels, 1);
      TS_CHECK_STREQ(im->arch, "sm_86");
      TS_CHECK_INTEQ(im->ptx_len, p.ptx.len);
      TS_CHECK_STREQ(im->ptx, p.ptx.data);
      const ts_rt_cuda_kernel *k = im->kernels;
      TS_CHECK_STREQ(k->name, "tsaot_fg0");
      TS_CHECK_INTEQ(k->nelems, 24);
      TS_CHECK_INTEQ(k->block, p.k[0].geom.block);
      TS_CHECK_INTEQ(k->grid, 1);
      TS_CHECK_INTEQ(k->index64, 0);
      TS_CHECK_INTEQ(k->nparams, 6);
      TS_CHECK(k->nparams == 6 && !memcmp(k->param_kinds, p.k[0].kinds, 6));
      /* a hostile copy: the PTX's length off by one */
      ts_rt_cuda_image bad = *im;
      bad.ptx_len--;
      TS_CHECK(!ts_rt_cuda_image_check(&bad, &why));
      bad = *im;
      bad.version = 99;
      TS_CHECK(!ts_rt_cuda_image_check(&bad, &why));
      ts_buf_free(&why);
    }
    ts_test_jit_free(j);
  } else {
    fprintf(stderr, "%s\n", err ? err : "");
    free(err);
  }
  ts_cg_cuda_ptx_free(&p);
  ts_diag_free(&d);
  ts_graph_free(g);
}

int main(void) {
  test_geometry();
  test_host_kernel();
  test_ptx();
  test_libdevice();
  test_embed();
  return ts_test_finish();
}
