/* tests/unit/cg_jit.h: runs a generated ts_cg_module in the test process
 * through ORC's LLJIT (LLVM's C API), for the codegen unit tests.
 *
 *   ts_test_jit *j = ts_test_jit_new(&m, &err);   // m is consumed
 *   float (*f)(float);
 *   void *p = ts_test_jit_lookup(j, "f");          // external linkage only
 *   memcpy(&f, &p, sizeof f);
 *   ts_test_jit_free(j);
 *
 * The module is moved into the JIT's own context as bitcode (a
 * ts_cg_module owns its LLVMContext, which a ThreadSafeContext cannot
 * adopt through the C API); the JIT compiles with the module's target
 * machine. Symbols the module declares resolve against the process
 * (libm, libc, shared libraries); functions linked statically into the test
 * program are not in its dynamic symbol table: give their addresses with
 * ts_test_jit_define before the first lookup.
 *
 * Header only, static inline functions: include it in one test program. */
#ifndef TS_TEST_CG_JIT_H
#define TS_TEST_CG_JIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "codegen.h"

typedef struct ts_test_jit {
  LLVMOrcLLJITRef jit;
} ts_test_jit;

/* Sets *err (if err) to a malloc'ed copy of the error's text and consumes e. */
static inline void ts_test_jit_error(LLVMErrorRef e, const char *what, char **err) {
  char *msg = LLVMGetErrorMessage(e);
  if (err) {
    size_t n = strlen(what) + strlen(msg ? msg : "") + 3;
    *err = malloc(n);
    if (*err) {
      strcpy(*err, what);
      strcat(*err, ": ");
      strcat(*err, msg ? msg : "");
    }
  }
  LLVMDisposeErrorMessage(msg);
}

static inline void ts_test_jit_set_err(char **err, const char *what) {
  if (err) {
    *err = malloc(strlen(what) + 1);
    if (*err)
      strcpy(*err, what);
  }
}

static inline void ts_test_jit_free(ts_test_jit *j) {
  if (!j)
    return;
  if (j->jit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
    if (e)
      LLVMConsumeError(e);
  }
  free(j);
}

/* A JIT holding module m (disposed here, success or not). NULL with the
 * reason in *err (to free) on failure. */
static inline ts_test_jit *ts_test_jit_new(ts_cg_module *m, char **err) {
  if (err)
    *err = NULL;
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(m->mod);
  LLVMTargetMachineRef tm = m->tm;
  m->tm = NULL; /* the JIT's target machine builder takes it */
  ts_cg_module_dispose(m);
  ts_test_jit *j = calloc(1, sizeof *j);
  if (!bc || !j) {
    ts_test_jit_set_err(err, "out of memory");
    if (bc)
      LLVMDisposeMemoryBuffer(bc);
    if (tm)
      LLVMDisposeTargetMachine(tm);
    free(j);
    return NULL;
  }

  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  if (tm)
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, jb); /* consumes jb */
  if (e) {
    j->jit = NULL;
    ts_test_jit_error(e, "LLJIT", err);
    goto fail;
  }

  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
  if (e) {
    ts_test_jit_error(e, "process symbols", err);
    goto fail;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  LLVMOrcJITDylibAddGenerator(jd, gen);

  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMModuleRef mod = NULL;
  if (LLVMParseBitcodeInContext2(LLVMOrcThreadSafeContextGetContext(tsc), bc, &mod)) {
    LLVMOrcDisposeThreadSafeContext(tsc);
    ts_test_jit_set_err(err, "cannot read the module's bitcode back");
    goto fail;
  }
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps it alive */
  e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
  if (e) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    ts_test_jit_error(e, "adding the module", err);
    goto fail;
  }
  LLVMDisposeMemoryBuffer(bc);
  return j;
fail:
  LLVMDisposeMemoryBuffer(bc);
  ts_test_jit_free(j);
  return NULL;
}

/* Makes `name` (as the module declares it) resolve to addr; before the
 * first lookup that needs it. */
static inline bool ts_test_jit_define(ts_test_jit *j, const char *name, void *addr) {
  LLVMOrcCSymbolMapPair p;
  p.Name = LLVMOrcLLJITMangleAndIntern(j->jit, name);
  p.Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr;
  p.Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
  p.Sym.Flags.TargetFlags = 0;
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(&p, 1);
  LLVMErrorRef e = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(j->jit), mu);
  if (e) {
    LLVMOrcDisposeMaterializationUnit(mu);
    LLVMConsumeError(e);
    return false;
  }
  return true;
}

/* The address of an external symbol of the module (compiling it on first
 * use), NULL if it is not there or does not compile. */
static inline void *ts_test_jit_lookup(ts_test_jit *j, const char *name) {
  LLVMOrcExecutorAddress addr = 0;
  LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, name);
  if (e) {
    LLVMConsumeError(e);
    return NULL;
  }
  return (void *)(uintptr_t)addr;
}

#endif
