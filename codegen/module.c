/* codegen/module.c: one LLVM module being generated, its context and target
 * machine; verification and LLVM's optimisation pipeline over it.
 *
 * The default target is portable (codegen.h, ts_cg_target_opts): the module
 * for x86-64-v2, the fused kernels once per level, each copy a function
 * with its own "target-cpu" (ts_cg_module_set_level), in a table the
 * runtime indexes by the CPU's level (runtime/cpu.c, detected once). Not
 * ifuncs: those need a resolver run by glibc (its dynamic loader, or a
 * static program's start-up code), which a bare-metal program lacks; the
 * table costs a kernel call one indexed load, nothing next to the call
 * through ts_rt_parallel_for.
 *
 * Only native targets (the one LLVMInitializeNativeTarget registers) can be
 * named by a triple; cross-compiling to another architecture would need
 * LLVMInitializeAll* and is not offered. A CPU name the target does not
 * know cannot be detected through the C API: LLVM warns on stderr and uses
 * a generic CPU ("native" names the host's CPU and features). */
#include "codegen.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

static pthread_once_t ts_cgm_once = PTHREAD_ONCE_INIT;
static bool ts_cgm_init_ok;

static void ts_cgm_init_llvm(void) {
  /* each returns 1 on failure */
  ts_cgm_init_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter() &&
                   !LLVMInitializeNativeAsmParser();
}

/* The CPUs of the default's kernel copies, by level index (x86-64 psABI
 * levels; runtime/cpu.c detects the same ones). */
static const char *const ts_cgm_levels[TS_CG_LEVELS] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};

/* Whether the triple names 64-bit x86 ("x86_64-pc-linux-gnu", "amd64-..."). */
static bool ts_cgm_is_x86_64(const char *triple) {
  size_t n = strcspn(triple, "-");
  return (n == 6 && memcmp(triple, "x86_64", 6) == 0) || (n == 5 && memcmp(triple, "amd64", 5) == 0);
}

static LLVMCodeGenOptLevel ts_cgm_cg_level(int opt) {
  switch (opt) {
  case 0:
    return LLVMCodeGenLevelNone;
  case 1:
    return LLVMCodeGenLevelLess;
  case 2:
    return LLVMCodeGenLevelDefault;
  default:
    return LLVMCodeGenLevelAggressive;
  }
}

bool ts_cg_module_init(ts_cg_module *m, const char *name, const ts_cg_target_opts *o, ts_diag *d) {
  memset(m, 0, sizeof *m);
  pthread_once(&ts_cgm_once, ts_cgm_init_llvm);
  if (!ts_cgm_init_ok) {
    ts_diag_error(d, "LLVM: the native target could not be initialised");
    return false;
  }
  int opt = o ? o->opt_level : 2;
  if (opt < 0 || opt > 3) {
    ts_diag_error(d, "optimisation level %d: expected 0 to 3", opt);
    return false;
  }
  bool native = o && o->cpu && strcmp(o->cpu, "native") == 0;
  bool own_features = o && o->features && *o->features;
  char *triple = o && o->triple ? NULL : LLVMGetDefaultTargetTriple();
  const char *t = o && o->triple ? o->triple : triple;
  /* no --cpu: x86-64-v2 (SSE4.2 and POPCNT: Intel since Nehalem, AMD since
   * Bulldozer), each fused kernel also built for v3 and v4 unless
   * --features says what to build for; another architecture gets its
   * generic CPU */
  bool portable = !(o && o->cpu) && t && ts_cgm_is_x86_64(t);
  /* a named CPU brings its own features: the host's would widen x86-64-v2 to AVX-512 */
  bool host_features = native && !own_features;
  char *cpu = native ? LLVMGetHostCPUName() : NULL;
  char *features = host_features ? LLVMGetHostCPUFeatures() : NULL;
  const char *c = native ? cpu : o && o->cpu ? o->cpu : portable ? ts_cgm_levels[0] : "generic";
  const char *f = host_features ? features : own_features ? o->features : "";
  bool ok = false;

  LLVMTargetRef target = NULL;
  char *err = NULL;
  if (!t || !c || !f) {
    ts_diag_error(d, "LLVM: out of memory");
    goto out;
  }
  if (LLVMGetTargetFromTriple(t, &target, &err)) {
    ts_diag_error(d, "target triple '%s': %s", t, err ? err : "unknown target");
    goto out;
  }
  m->tm = LLVMCreateTargetMachine(target, t, c, f, ts_cgm_cg_level(opt), LLVMRelocPIC, LLVMCodeModelDefault);
  if (!m->tm) {
    ts_diag_error(d, "LLVM: cannot create a target machine for '%s' (cpu '%s')", t, c);
    goto out;
  }
  m->ctx = LLVMContextCreate();
  m->mod = m->ctx ? LLVMModuleCreateWithNameInContext(name ? name : "tsaot", m->ctx) : NULL;
  m->td = LLVMCreateTargetDataLayout(m->tm);
  if (!m->ctx || !m->mod || !m->td) {
    ts_diag_error(d, "LLVM: out of memory");
    goto out;
  }
  char *layout = LLVMCopyStringRepOfTargetData(m->td);
  LLVMSetDataLayout(m->mod, layout ? layout : "");
  LLVMDisposeMessage(layout);
  LLVMSetTarget(m->mod, t);
  m->opt_level = opt;
  m->nlevels = portable && !own_features ? TS_CG_LEVELS : 1;
  m->t_void = LLVMVoidTypeInContext(m->ctx);
  m->t_i1 = LLVMInt1TypeInContext(m->ctx);
  m->t_i8 = LLVMInt8TypeInContext(m->ctx);
  m->t_i16 = LLVMInt16TypeInContext(m->ctx);
  m->t_i32 = LLVMInt32TypeInContext(m->ctx);
  m->t_i64 = LLVMInt64TypeInContext(m->ctx);
  m->t_f16 = LLVMHalfTypeInContext(m->ctx);
  m->t_f32 = LLVMFloatTypeInContext(m->ctx);
  m->t_f64 = LLVMDoubleTypeInContext(m->ctx);
  m->t_ptr = LLVMPointerTypeInContext(m->ctx, 0);
  ok = true;
out:
  if (err)
    LLVMDisposeMessage(err);
  if (triple)
    LLVMDisposeMessage(triple);
  if (cpu)
    LLVMDisposeMessage(cpu);
  if (features)
    LLVMDisposeMessage(features);
  if (!ok)
    ts_cg_module_dispose(m);
  return ok;
}

void ts_cg_module_dispose(ts_cg_module *m) {
  if (!m)
    return;
  if (m->mod)
    LLVMDisposeModule(m->mod);
  if (m->ctx)
    LLVMContextDispose(m->ctx);
  if (m->td)
    LLVMDisposeTargetData(m->td);
  if (m->tm)
    LLVMDisposeTargetMachine(m->tm);
  memset(m, 0, sizeof *m);
}

bool ts_cg_module_optimize(ts_cg_module *m, ts_diag *d) {
  char *msg = NULL;
  if (LLVMVerifyModule(m->mod, LLVMReturnStatusAction, &msg)) {
    ts_diag_error(d, "LLVM: the generated module is invalid: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    return false;
  }
  LLVMDisposeMessage(msg);
  if (m->opt_level == 0)
    return true;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* what clang turns on at -O2 and above */
  LLVMPassBuilderOptionsSetLoopVectorization(po, m->opt_level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, m->opt_level >= 2);
  LLVMPassBuilderOptionsSetLoopInterleaving(po, m->opt_level >= 2);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, true);
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", m->opt_level);
  return ts_cg_module_run_passes(m, pipeline, po, d);
}

bool ts_cg_module_run_passes(ts_cg_module *m, const char *pipeline, LLVMPassBuilderOptionsRef po, ts_diag *d) {
  if (!po)
    po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(m->mod, pipeline, m->tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *em = LLVMGetErrorMessage(e);
    ts_diag_error(d, "LLVM: %s: %s", pipeline, em ? em : "");
    LLVMDisposeErrorMessage(em);
    return false;
  }
  return true;
}

const char *ts_cg_module_level_cpu(const ts_cg_module *m, uint32_t level) {
  return m->nlevels == TS_CG_LEVELS && level < TS_CG_LEVELS ? ts_cgm_levels[level] : NULL;
}

void ts_cg_module_set_level(ts_cg_module *m, LLVMValueRef fn, uint32_t level) {
  const char *cpu = ts_cg_module_level_cpu(m, level);
  if (!cpu)
    return;
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(m->ctx, "target-cpu", 10, cpu, (unsigned)strlen(cpu)));
  if (level == TS_CG_LEVELS - 1)
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(m->ctx, "prefer-vector-width", 19, "512", 3));
}

LLVMValueRef ts_cg_module_extern(ts_cg_module *m, const char *name, LLVMTypeRef fnty) {
  LLVMValueRef f = LLVMGetNamedFunction(m->mod, name);
  if (f)
    return f;
  f = LLVMAddFunction(m->mod, name, fnty);
  LLVMSetLinkage(f, LLVMExternalLinkage);
  return f;
}

LLVMValueRef ts_cg_module_const(ts_cg_module *m, const char *name, LLVMValueRef init, unsigned align) {
  LLVMValueRef gv = LLVMAddGlobal(m->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(gv, init);
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMPrivateLinkage);
  if (align)
    LLVMSetAlignment(gv, align);
  return gv;
}
