/* tests/unit/test_cg_levels.c: the portable default target (codegen/module.c)
 * and fused kernels built once per x86-64 level (codegen/fusion.c's
 * ts_cg_fusion_kernels).
 *
 *   - which targets get copies: no cpu on x86-64 (three: x86-64-v2, v3,
 *     v4), not "native", a named cpu, --features alone or a 32-bit x86
 *     triple (one);
 *   - one copy for a named CPU: the kernel's own name, no target-cpu;
 *   - the three copies of a float32 group with math.c's transcendentals:
 *     named NAME.v2/.v3/.v4, each with its target-cpu, math.c's functions
 *     inlined into every one (no call left), vectorised 4, 8 and 16 lanes
 *     wide;
 *   - run through the JIT, each copy this CPU can run (ts_rt_cpu_level)
 *     against the same formulas in double precision. */
#include "cg_jit.h"
#include "codegen.h"
#include "runtime.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_targets(void) {
  struct {
    const char *triple, *cpu, *features;
    uint32_t nlevels;
  } cases[] = {
      {NULL, NULL, NULL, TS_CG_LEVELS},
      {"x86_64-unknown-linux-gnu", NULL, NULL, TS_CG_LEVELS},
      {NULL, "native", NULL, 1},
      {NULL, "x86-64-v3", NULL, 1},
      {NULL, NULL, "+avx2,+fma", 1},
      {"i686-pc-linux-gnu", NULL, NULL, 1}, /* x86, not x86-64: no levels */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_cg_module m;
    ts_diag d = {0};
    ts_cg_target_opts o = {cases[i].triple, cases[i].cpu, cases[i].features, 2};
    if (!TS_CHECK(ts_cg_module_init(&m, "t", &o, &d))) {
      fprintf(stderr, "case %zu: %s\n", i, d.text.data ? d.text.data : "");
      ts_diag_free(&d);
      continue;
    }
    if (!TS_CHECK_INTEQ(m.nlevels, cases[i].nlevels))
      fprintf(stderr, "case %zu\n", i);
    if (m.nlevels == TS_CG_LEVELS) {
      TS_CHECK_STREQ(ts_cg_module_level_cpu(&m, 0), "x86-64-v2");
      TS_CHECK_STREQ(ts_cg_module_level_cpu(&m, 1), "x86-64-v3");
      TS_CHECK_STREQ(ts_cg_module_level_cpu(&m, 2), "x86-64-v4");
      /* the module itself: the first level's CPU */
      char *cpu = LLVMGetTargetMachineCPU(m.tm);
      TS_CHECK_STREQ(cpu, "x86-64-v2");
      LLVMDisposeMessage(cpu);
    } else {
      TS_CHECK(ts_cg_module_level_cpu(&m, 0) == NULL);
    }
    ts_cg_module_dispose(&m);
    ts_diag_free(&d);
  }
}

#define ROWS 7
#define COLS 301 /* a vector tail at every width */
#define N (ROWS * COLS)

static const char *group_text =
    "graph(%a : Float(7, 301), %b : Float(7, 301)):\n"
    "  %o : Float(7, 301) = prim::FusionGroup_0(%a, %b)\n  return (%o)\n"
    "with prim::FusionGroup_0 = graph(%a : Float(7, 301), %b : Float(7, 301)):\n"
    "  %none : str = prim::Constant[value=\"none\"]()\n"
    "  %k1 : int = prim::Constant[value=1]()\n"
    "  %g : Float(7, 301) = aten::gelu(%a, %none)\n"
    "  %t : Float(7, 301) = aten::tanh(%b)\n"
    "  %s : Float(7, 301) = aten::sigmoid(%a)\n"
    "  %e : Float(7, 301) = aten::exp(%t)\n"
    "  %x : Float(7, 301) = aten::mul(%g, %e)\n"
    "  %o : Float(7, 301) = aten::add(%x, %s, %k1)\n  return (%o)\n";

static double want_at(double a, double b) {
  double g = a * 0.5 * (1.0 + erf(a / sqrt(2.0)));
  return g * exp(tanh(b)) + 1.0 / (1.0 + exp(-a));
}

/* Whether f calls anything but an intrinsic. */
static bool calls_non_intrinsic(LLVMValueRef f) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall)
        continue;
      LLVMValueRef callee = LLVMGetCalledValue(i);
      if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee))
        return true;
    }
  return false;
}

/* codegen.h's ts_cg_kargs */
typedef struct kargs {
  void **ptrs;
  const int64_t *strides;
  int64_t contig;
} kargs;
typedef void (*kernel_fn)(const kargs *, int64_t, int64_t);

static void test_copies(void) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", group_text, strlen(group_text), &d);
  if (!TS_CHECK(g != NULL) || !TS_CHECK(ts_graph_verify(g, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  ts_node *grp = ts_block_first(g->block);
  ts_cg_module m;
  ts_cg_target_opts o = {NULL, NULL, NULL, 3};
  if (!TS_CHECK(ts_cg_module_init(&m, "levels", &o, &d)) || !TS_CHECK_INTEQ(m.nlevels, TS_CG_LEVELS)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  LLVMValueRef k[TS_CG_LEVELS] = {0};
  uint32_t nk = ts_cg_fusion_kernels(&m, grp, "k", k, &d);
  ts_graph_free(g);
  if (!TS_CHECK_INTEQ(nk, TS_CG_LEVELS)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_cg_module_dispose(&m);
    return;
  }
  static const char *names[TS_CG_LEVELS] = {"k.v2", "k.v3", "k.v4"};
  static const char *cpus[TS_CG_LEVELS] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
  for (int i = 0; i < TS_CG_LEVELS; i++) {
    size_t len = 0;
    TS_CHECK_STREQ(LLVMGetValueName2(k[i], &len), names[i]);
    LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(k[i], LLVMAttributeFunctionIndex, "target-cpu", 10);
    unsigned alen = 0;
    const char *v = a ? LLVMGetStringAttributeValue(a, &alen) : NULL;
    if (TS_CHECK(v != NULL))
      TS_CHECK(alen == strlen(cpus[i]) && memcmp(v, cpus[i], alen) == 0);
    LLVMSetLinkage(k[i], LLVMExternalLinkage);
  }
  if (!TS_CHECK(ts_cg_module_optimize(&m, &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);

  /* each copy: everything inlined, vectors of its level's width */
  static const char *widest[TS_CG_LEVELS] = {"<4 x float>", "<8 x float>", "<16 x float>"};
  for (int i = 0; i < TS_CG_LEVELS; i++) {
    LLVMValueRef f = LLVMGetNamedFunction(m.mod, names[i]);
    char *ir = f ? LLVMPrintValueToString(f) : NULL;
    if (!TS_CHECK(ir))
      continue;
    if (!TS_CHECK(!calls_non_intrinsic(f)))
      fprintf(stderr, "%s still calls something: a math function was not inlined\n", names[i]);
    if (!TS_CHECK(strstr(ir, widest[i]) != NULL))
      fprintf(stderr, "%s has no %s\n", names[i], widest[i]);
    for (int j = i + 1; j < TS_CG_LEVELS; j++)
      if (!TS_CHECK(strstr(ir, widest[j]) == NULL))
        fprintf(stderr, "%s has %s, wider than its level\n", names[i], widest[j]);
    LLVMDisposeMessage(ir);
  }

  /* run the copies this CPU runs */
  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (!TS_CHECK(j)) {
    fprintf(stderr, "JIT: %s\n", err ? err : "");
    free(err);
    return;
  }
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *out = malloc(N * sizeof *out);
  if (!TS_CHECK(a && b && out)) {
    free(a);
    free(b);
    free(out);
    ts_test_jit_free(j);
    return;
  }
  for (int i = 0; i < N; i++) {
    a[i] = -6.0f + 12.0f * (float)i / (float)(N - 1);
    b[i] = 3.0f * sinf((float)i * 0.37f);
  }
  int level = ts_rt_cpu_level();
  printf("this CPU: %s\n", ts_rt_cpu_level_name(level));
  for (int i = 0; i < TS_CG_LEVELS; i++) {
    if (i + 2 > level) {
      printf("  %s: not run (this CPU lacks %s)\n", names[i], cpus[i]);
      continue;
    }
    void *p = ts_test_jit_lookup(j, names[i]);
    if (!TS_CHECK(p != NULL))
      continue;
    kernel_fn fn;
    memcpy(&fn, &p, sizeof fn);
    void *ptrs[3] = {a, b, out};
    int64_t strides[6] = {COLS, 1, COLS, 1, COLS, 1};
    kargs ka = {ptrs, strides, 1};
    for (int e = 0; e < N; e++)
      out[e] = NAN;
    fn(&ka, 0, N);
    int bad = 0;
    for (int e = 0; e < N; e++) {
      double w = want_at(a[e], b[e]);
      if (!(fabs(out[e] - w) <= 1e-5 + 1e-5 * fabs(w)) && bad++ < 3)
        fprintf(stderr, "%s element %d: got %.9g, expected %.9g\n", names[i], e, out[e], w);
    }
    TS_CHECK_INTEQ(bad, 0);
    printf("  %s: ran, %d of %d elements off\n", names[i], bad, N);
  }
  free(a);
  free(b);
  free(out);
  ts_test_jit_free(j);
}

/* One copy (a named CPU): the kernel keeps its name and the module's CPU. */
static void test_one_copy(void) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", group_text, strlen(group_text), &d);
  ts_cg_module m;
  ts_cg_target_opts o = {NULL, "x86-64-v3", NULL, 2};
  if (!TS_CHECK(g != NULL) || !TS_CHECK(ts_cg_module_init(&m, "one", &o, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  LLVMValueRef k[TS_CG_LEVELS] = {0};
  if (TS_CHECK_INTEQ(ts_cg_fusion_kernels(&m, ts_block_first(g->block), "k", k, &d), 1)) {
    size_t len = 0;
    TS_CHECK_STREQ(LLVMGetValueName2(k[0], &len), "k");
    TS_CHECK(LLVMGetStringAttributeAtIndex(k[0], LLVMAttributeFunctionIndex, "target-cpu", 10) == NULL);
  } else {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  }
  ts_graph_free(g);
  ts_diag_free(&d);
  ts_cg_module_dispose(&m);
}

int main(void) {
  ts_diag d = {0};
  if (!TS_CHECK(ts_rt_kernels_init(&d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return ts_test_finish();
  }
  test_targets();
  test_copies();
  test_one_copy();
  return ts_test_finish();
}
