/* codegen/nvptx.c: `--device cuda`: fusion groups as NVPTX kernels, one PTX
 * module, embedded in the object for the runtime (runtime/hosted/cuda.h).
 *
 * The kernels are fusion.c's lowering (ts_cg_fusion_kernel_gpu): the same
 * plan and per-element IR as on the CPU, math.c's polynomials for the
 * float32 transcendentals (plain IR, fine for any target), in a
 * grid-stride loop over the output's elements. What the CPU code takes
 * from the C library (tanf, atan2, float64 exp ...) is renamed to CUDA's
 * libdevice (__nv_tanf ...), which is linked in with LLVMLinkModules2 and
 * internalized only when a kernel needs it; NVVMReflect (run by the NVPTX
 * target's pipeline) resolves its __nvvm_reflect("__CUDA_FTZ") to 0.
 *
 * LLVM 16 knows sm_20 .. sm_90 and PTX ISA up to 7.8. Each architecture
 * gets the lowest PTX ISA version it needs (what nvcc does: the widest
 * range of drivers loads it). sm_90a (Hopper's arch-specific features,
 * which we do not use) is sm_90 code under `.version 8.0` and
 * `.target sm_90a`, the lowest ISA ptxas takes for it. */
#include "aot.h"
#include "codegen.h"
#include "cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>

#define NV_TRIPLE "nvptx64-nvidia-cuda"
#define NV_LIBDEVICE "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"

/* the layouts ts_cg_cuda_embed writes as LLVM structs, on LP64 hosts */
_Static_assert(sizeof(ts_rt_cuda_kernel) == 56 && sizeof(ts_rt_cuda_image) == 40 && sizeof(void *) == 8,
               "runtime/hosted/cuda.h's layout changed: update ts_cg_cuda_embed");

/* ----------------------------------------------------- geometry, arches */

ts_cg_gpu_kernel ts_cg_gpu_geometry(int64_t nelems) {
  ts_cg_gpu_kernel k = {.nelems = nelems < 0 ? 0 : nelems};
  k.block = k.nelems < 32768 ? 128u : 256u;
  int64_t g = (k.nelems + k.block - 1) / k.block;
  k.grid = g < 1 ? 1u : g > (int64_t)TS_CG_GPU_MAX_GRID ? TS_CG_GPU_MAX_GRID : (uint32_t)g;
  /* the loop's last index plus one stride: below 2^31 in i32 */
  int64_t stride = (int64_t)k.grid * k.block;
  k.index64 = k.nelems > INT32_MAX - stride;
  return k;
}

static const struct {
  const char *arch, *ptx;
} nv_arches[] = {
    {"sm_70", "+ptx60"}, {"sm_72", "+ptx61"}, {"sm_75", "+ptx63"}, {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"},
    {"sm_87", "+ptx74"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"}, {"sm_90a", "+ptx78"},
};

const char *ts_cg_gpu_arch_ptx(const char *arch) {
  for (size_t i = 0; arch && i < sizeof nv_arches / sizeof nv_arches[0]; i++)
    if (!strcmp(arch, nv_arches[i].arch))
      return nv_arches[i].ptx;
  return NULL;
}

/* ------------------------------------------------------------ compiling */

/* The NVPTX target, registered once (module.c registers the native one). */
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void nv_init_llvm(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

void ts_cg_cuda_ptx_free(ts_cg_cuda_ptx *p) {
  if (!p)
    return;
  for (uint32_t i = 0; i < p->nk; i++)
    free(p->k[i].kinds);
  free(p->k);
  ts_buf_free(&p->ptx);
  ts_buf_free(&p->notes);
  memset(p, 0, sizeof *p);
}

/* The elements of a fusion group's output 0; -1 when its type is not
 * complete or the count overflows. */
static int64_t nv_group_nelems(const ts_node *n) {
  const ts_type *t = n->noutputs ? n->outputs[0]->type : NULL;
  if (!t || t->kind != TS_TY_TENSOR || !t->tensor || t->tensor->rank < 0 || (t->tensor->rank && !t->tensor->sizes))
    return -1;
  int64_t e = 1;
  for (int32_t i = 0; i < t->tensor->rank; i++) {
    int64_t s = t->tensor->sizes[i];
    if (s < 0 || __builtin_mul_overflow(e, s, &e))
      return -1;
  }
  return e;
}

typedef struct nv_cx {
  ts_cg_module *m;
  ts_cg_cuda_ptx *out;
  uint32_t cap;
  ts_diag *d;
  bool failed;
} nv_cx;

/* Marks fn a kernel: !nvvm.annotations = !{!{ptr @fn, !"kernel", i32 1}}. */
static void nv_mark_kernel(ts_cg_module *m, LLVMValueRef fn) {
  LLVMValueRef ops[3] = {fn, LLVMMDStringInContext(m->ctx, "kernel", 6), LLVMConstInt(m->t_i32, 1, 0)};
  LLVMAddNamedMetadataOperand(m->mod, "nvvm.annotations", LLVMMDNodeInContext(m->ctx, ops, 3));
}

/* One group, node number num: a kernel, or a note why it stays on the CPU. */
static void nv_group(nv_cx *c, const ts_node *n, uint32_t num) {
  ts_cg_cuda_ptx *o = c->out;
  o->ngroups++;
  int64_t ne = nv_group_nelems(n);
  if (ne < 0) {
    ts_buf_printf(&o->notes, "fusion group (node %u) stays on the CPU: its output has no static size\n", num);
    return;
  }
  if (o->nk == c->cap) {
    uint32_t cap = c->cap ? c->cap * 2 : 8;
    ts_cg_cuda_kfn *k = realloc(o->k, cap * sizeof *k);
    if (!k) {
      ts_diag_error(c->d, "out of memory");
      c->failed = true;
      return;
    }
    o->k = k;
    c->cap = cap;
  }
  ts_cg_cuda_kfn *k = &o->k[o->nk];
  memset(k, 0, sizeof *k);
  snprintf(k->name, sizeof k->name, "tsaot_fg%u", num);
  k->group = num;
  k->geom = ts_cg_gpu_geometry(ne);
  k->nparams = n->ninputs + n->noutputs;
  k->kinds = calloc(k->nparams ? k->nparams : 1, 1);
  if (!k->kinds) {
    ts_diag_error(c->d, "out of memory");
    c->failed = true;
    return;
  }
  ts_diag why = {0};
  why.max_errors = 1;
  LLVMValueRef fn = ts_cg_fusion_kernel_gpu(c->m, n, k->name, &k->geom, k->kinds, &why);
  if (!fn) {
    ts_buf_printf(&o->notes, "fusion group (node %u) stays on the CPU: %s", num, why.text.data ? why.text.data : "?\n");
    free(k->kinds);
    k->kinds = NULL;
  } else {
    nv_mark_kernel(c->m, fn);
    o->nk++;
  }
  ts_diag_free(&why);
}

/* The nodes of g by entry.c's numbering (the kernel table's `group`, which
 * the runtime matches against the node it runs); NULL when out of memory. */
static ts_node **nv_number(ts_graph *g, uint32_t *nn) {
  *nn = ts_rt_aot_number_nodes(g, NULL);
  ts_node **nodes = calloc(*nn + 1, sizeof *nodes);
  if (nodes)
    ts_rt_aot_number_nodes(g, nodes);
  return nodes;
}

static void nv_walk(nv_cx *c, ts_graph *g) {
  uint32_t nn;
  ts_node **nodes = nv_number(g, &nn);
  if (!nodes) {
    ts_diag_error(c->d, "out of memory");
    c->failed = true;
    return;
  }
  for (uint32_t k = 0; k < nn && !c->failed; k++)
    if (ts_node_is(nodes[k], TS_K_prim_FusionGroup))
      nv_group(c, nodes[k], k);
  free(nodes);
}

/* Whether `name` is one of the kernels made (they stay external). */
static bool nv_is_kernel(const ts_cg_cuda_ptx *p, const char *name) {
  for (uint32_t i = 0; i < p->nk; i++)
    if (!strcmp(p->k[i].name, name))
      return true;
  return false;
}

/* The C library's functions the kernels call become libdevice's
 * (__nv_tanf, __nv_exp ...), linked in and internalized; *linked says
 * whether any were. */
static bool nv_link_libdevice(ts_cg_module *m, const ts_cg_cuda_options *o, const ts_cg_cuda_ptx *p, bool *linked,
                              ts_diag *d) {
  *linked = false;
  uint32_t nextern = 0;
  char first[64] = "";
  for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *nm = LLVMGetValueName2(f, &len);
    if (!LLVMIsDeclaration(f) || LLVMGetIntrinsicID(f) || !strncmp(nm, "__nv_", 5))
      continue;
    char buf[64];
    snprintf(buf, sizeof buf, "__nv_%s", nm);
    if (!nextern)
      snprintf(first, sizeof first, "%s", nm);
    nextern++;
    LLVMSetValueName2(f, buf, strlen(buf));
  }
  if (!nextern)
    return true;
  const char *path = o->libdevice ? o->libdevice : getenv("TSAOT_LIBDEVICE");
  if (!path || !*path)
    path = NV_LIBDEVICE;
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
    ts_diag_error(d, "%s: %s: the kernels call %s (and %u more), which come from CUDA's libdevice (set "
                  "TSAOT_LIBDEVICE to libdevice.10.bc)", path, msg ? msg : "cannot read", first, nextern - 1);
    LLVMDisposeMessage(msg);
    return false;
  }
  LLVMModuleRef lib = NULL;
  bool bad = LLVMParseBitcodeInContext2(m->ctx, buf, &lib);
  LLVMDisposeMemoryBuffer(buf);
  if (bad || !lib) {
    ts_diag_error(d, "%s: not an LLVM bitcode file", path);
    return false;
  }
  /* the same triple and layout: the linker warns (on stderr) otherwise */
  LLVMSetTarget(lib, NV_TRIPLE);
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(m->mod));
  if (LLVMLinkModules2(m->mod, lib)) { /* takes lib */
    ts_diag_error(d, "%s: linking libdevice failed", path);
    return false;
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m->mod); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    if (!LLVMIsDeclaration(f) && !nv_is_kernel(p, LLVMGetValueName2(f, &len)))
      LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  for (LLVMValueRef gv = LLVMGetFirstGlobal(m->mod); gv; gv = LLVMGetNextGlobal(gv))
    if (!LLVMIsDeclaration(gv))
      LLVMSetLinkage(gv, LLVMInternalLinkage);
  *linked = true;
  /* drop what no kernel calls before the optimizer sees it */
  return ts_cg_module_run_passes(m, "globaldce", NULL, d);
}

/* The PTX text; sm_90a's header rewritten (see the top of the file). */
static bool nv_emit(ts_cg_module *m, bool sm90a, ts_buf *out, ts_diag *d) {
  char *err = NULL;
  LLVMMemoryBufferRef mb = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(m->tm, m->mod, LLVMAssemblyFile, &err, &mb)) {
    ts_diag_error(d, "LLVM: emitting PTX: %s", err ? err : "failed");
    LLVMDisposeMessage(err);
    return false;
  }
  const char *s = LLVMGetBufferStart(mb);
  size_t n = LLVMGetBufferSize(mb);
  bool ok = true;
  if (sm90a) {
    const char *v = strstr(s, ".version 7.8\n"), *t = strstr(s, ".target sm_90\n");
    if (!v || !t || t < v) {
      ts_diag_error(d, "LLVM: the PTX for sm_90 lacks its .version/.target lines");
      ok = false;
    } else {
      ts_buf_putn(out, s, (size_t)(v - s));
      ts_buf_puts(out, ".version 8.0\n");
      v += strlen(".version 7.8\n");
      ts_buf_putn(out, v, (size_t)(t - v));
      ts_buf_puts(out, ".target sm_90a\n");
      t += strlen(".target sm_90\n");
      ts_buf_putn(out, t, n - (size_t)(t - s));
    }
  } else {
    ts_buf_putn(out, s, n);
  }
  LLVMDisposeMemoryBuffer(mb);
  if (ok && out->failed) {
    ts_diag_error(d, "out of memory");
    ok = false;
  }
  return ok;
}

bool ts_cg_cuda_compile(const ts_graph *g, const ts_cg_cuda_options *o, ts_cg_cuda_ptx *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  const char *arch = o && o->arch ? o->arch : "sm_80";
  const char *ptxv = ts_cg_gpu_arch_ptx(arch);
  if (!ptxv) {
    ts_diag_error(d, "--gpu-arch %s: expected one of sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, "
                  "sm_90a", arch);
    return false;
  }
  bool sm90a = !strcmp(arch, "sm_90a");
  pthread_once(&nv_once, nv_init_llvm);
  ts_cg_target_opts t = {.triple = NV_TRIPLE, .cpu = sm90a ? "sm_90" : arch, .features = ptxv,
                         .opt_level = o ? o->opt_level : 3};
  ts_cg_module m;
  if (!ts_cg_module_init(&m, "tsaot_cuda", &t, d))
    return false;
  nv_cx c = {.m = &m, .out = out, .d = d};
  nv_walk(&c, (ts_graph *)g); /* numbering only reads */
  bool ok = !c.failed && nv_link_libdevice(&m, o ? o : &(ts_cg_cuda_options){0}, out, &out->libdevice, d) &&
            ts_cg_module_optimize(&m, d) && nv_emit(&m, sm90a, &out->ptx, d);
  ts_cg_module_dispose(&m);
  if (!ok)
    ts_cg_cuda_ptx_free(out);
  return ok;
}

/* ------------------------------------------------------------ emulation */

bool ts_cg_cuda_emulate(ts_cg_module *m, ts_graph *g, const char *name, const ts_cg_cuda_ptx *p, ts_diag *d) {
  if (!p->nk)
    return true;
  uint32_t nn;
  ts_node **nodes = nv_number(g, &nn);
  if (!nodes) {
    ts_diag_error(d, "out of memory");
    return false;
  }
  LLVMTypeRef aty = LLVMArrayType(m->t_i32, 4);
  LLVMValueRef sreg = LLVMGetNamedGlobal(m->mod, TS_CG_GPU_EMU_SREG);
  if (!sreg) {
    sreg = LLVMAddGlobal(m->mod, aty, TS_CG_GPU_EMU_SREG);
    LLVMSetInitializer(sreg, LLVMConstNull(aty));
    LLVMSetLinkage(sreg, LLVMInternalLinkage);
    LLVMSetThreadLocal(sreg, 1); /* a stand-in driver may launch from several threads */
  }
  LLVMBuilderRef B = LLVMCreateBuilderInContext(m->ctx);
  bool ok = true;
  char body[160], wrap[160];
  for (uint32_t i = 0; i < p->nk && ok; i++) {
    const ts_cg_cuda_kfn *k = &p->k[i];
    if (k->group >= nn || !ts_node_is(nodes[k->group], TS_K_prim_FusionGroup)) {
      ts_diag_error(d, "internal error: kernel %s names node %u, not a fusion group", k->name, k->group);
      ok = false;
      break;
    }
    snprintf(body, sizeof body, "%s.emu.%s.body", name, k->name);
    snprintf(wrap, sizeof wrap, "%s.emu.%s", name, k->name);
    LLVMValueRef fn = ts_cg_fusion_kernel_gpu(m, nodes[k->group], body, &k->geom, NULL, d);
    if (!fn) {
      ok = false;
      break;
    }
    LLVMSetLinkage(fn, LLVMPrivateLinkage);
    /* void wrap(void **args, const uint32_t *sreg): sreg copied, then the
     * kernel called with *(T *)args[j] for each parameter */
    LLVMTypeRef wps[2] = {m->t_ptr, m->t_ptr};
    LLVMValueRef w = LLVMAddFunction(m->mod, wrap, LLVMFunctionType(m->t_void, wps, 2, 0));
    LLVMSetLinkage(w, LLVMPrivateLinkage);
    LLVMPositionBuilderAtEnd(B, LLVMAppendBasicBlockInContext(m->ctx, w, ""));
    LLVMValueRef regs = LLVMBuildLoad2(B, aty, LLVMGetParam(w, 1), "");
    LLVMBuildStore(B, regs, sreg);
    uint32_t np = LLVMCountParams(fn);
    LLVMValueRef *av = calloc(np ? np : 1, sizeof *av);
    LLVMTypeRef *pt = calloc(np ? np : 1, sizeof *pt);
    if (!av || !pt) {
      free(av);
      free(pt);
      ts_diag_error(d, "out of memory");
      ok = false;
      break;
    }
    LLVMGetParamTypes(LLVMGlobalGetValueType(fn), pt);
    for (uint32_t j = 0; j < np; j++) {
      LLVMValueRef slot = LLVMBuildInBoundsGEP2(B, m->t_ptr, LLVMGetParam(w, 0),
                                                &(LLVMValueRef){LLVMConstInt(m->t_i64, j, 0)}, 1, "");
      av[j] = LLVMBuildLoad2(B, pt[j], LLVMBuildLoad2(B, m->t_ptr, slot, ""), "");
    }
    LLVMBuildCall2(B, LLVMGlobalGetValueType(fn), fn, av, np, "");
    LLVMBuildRetVoid(B);
    free(av);
    free(pt);
  }
  LLVMDisposeBuilder(B);
  free(nodes);
  return ok;
}

/* ------------------------------------------------------------ embedding */

/* A private constant string (NUL-terminated); its address. */
static LLVMValueRef nv_cstr(ts_cg_module *m, const char *gname, const char *s, size_t n) {
  LLVMValueRef gv = ts_cg_module_const(m, gname, LLVMConstStringInContext(m->ctx, s, (unsigned)n, 0), 0);
  LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
  return gv;
}

bool ts_cg_cuda_embed(ts_cg_module *m, const char *name, const char *arch, const ts_cg_cuda_ptx *p, ts_diag *d) {
  if (!p->ptx.data || p->ptx.len > UINT32_MAX - 1) {
    ts_diag_error(d, "--device cuda: no PTX to embed");
    return false;
  }
  char gname[160];
  snprintf(gname, sizeof gname, "%s_cuda", name);
  if (LLVMGetNamedGlobal(m->mod, gname)) {
    ts_diag_error(d, "--device cuda: %s is defined already", gname);
    return false;
  }
  /* ts_rt_cuda_kernel: name, param_kinds, nelems, group, block, grid, index64, nparams, reserved, emu */
  LLVMTypeRef kf[10] = {m->t_ptr, m->t_ptr, m->t_i64, m->t_i32, m->t_i32,
                        m->t_i32, m->t_i32, m->t_i32, m->t_i32, m->t_ptr};
  LLVMTypeRef kty = LLVMStructTypeInContext(m->ctx, kf, 10, 0);
  LLVMValueRef *rows = calloc(p->nk ? p->nk : 1, sizeof *rows);
  if (!rows) {
    ts_diag_error(d, "out of memory");
    return false;
  }
  for (uint32_t i = 0; i < p->nk; i++) {
    const ts_cg_cuda_kfn *k = &p->k[i];
    snprintf(gname, sizeof gname, "%s.cuda.k%u.name", name, i);
    LLVMValueRef kn = nv_cstr(m, gname, k->name, strlen(k->name) + 1);
    snprintf(gname, sizeof gname, "%s.cuda.k%u.kinds", name, i);
    LLVMValueRef kk = nv_cstr(m, gname, (const char *)k->kinds, k->nparams ? k->nparams : 1);
    snprintf(gname, sizeof gname, "%s.emu.%s", name, k->name);
    LLVMValueRef emu = LLVMGetNamedFunction(m->mod, gname);
    LLVMValueRef f[10] = {kn,
                         kk,
                         LLVMConstInt(m->t_i64, (unsigned long long)k->geom.nelems, 0),
                         LLVMConstInt(m->t_i32, k->group, 0),
                         LLVMConstInt(m->t_i32, k->geom.block, 0),
                         LLVMConstInt(m->t_i32, k->geom.grid, 0),
                         LLVMConstInt(m->t_i32, k->geom.index64, 0),
                         LLVMConstInt(m->t_i32, k->nparams, 0),
                         LLVMConstInt(m->t_i32, 0, 0),
                         emu ? emu : LLVMConstNull(m->t_ptr)};
    rows[i] = LLVMConstStructInContext(m->ctx, f, 10, 0);
  }
  LLVMValueRef tinit = LLVMConstArray(kty, rows, p->nk);
  free(rows);
  snprintf(gname, sizeof gname, "%s.cuda.kernels", name);
  LLVMValueRef table = ts_cg_module_const(m, gname, tinit, 0);
  snprintf(gname, sizeof gname, "%s.cuda.ptx", name);
  LLVMValueRef ptx = nv_cstr(m, gname, p->ptx.data, p->ptx.len + 1);
  snprintf(gname, sizeof gname, "%s.cuda.arch", name);
  LLVMValueRef ar = nv_cstr(m, gname, arch, strlen(arch) + 1);
  /* ts_rt_cuda_image: version, nkernels, arch, ptx, ptx_len, kernels */
  LLVMValueRef imv[6] = {LLVMConstInt(m->t_i32, TS_RT_CUDA_IMAGE_VERSION, 0), LLVMConstInt(m->t_i32, p->nk, 0), ar, ptx,
                         LLVMConstInt(m->t_i64, p->ptx.len, 0), table};
  LLVMValueRef init = LLVMConstStructInContext(m->ctx, imv, 6, 0);
  snprintf(gname, sizeof gname, "%s_cuda", name);
  LLVMValueRef im = ts_cg_module_const(m, gname, init, 0);
  LLVMSetLinkage(im, LLVMExternalLinkage);
  /* what NAME_set_device hands the runtime (entry.c makes the slot; a
   * module without a model, in the unit tests, has none) */
  snprintf(gname, sizeof gname, "%s.cuda_image", name);
  LLVMValueRef slot = LLVMGetNamedGlobal(m->mod, gname);
  if (slot)
    LLVMSetInitializer(slot, im);
  return true;
}
