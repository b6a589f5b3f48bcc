/* tests/unit/cg_jit.h: runs a generated ts_cg_module in the test process
 * through ORC's LLJIT (LLVM's C API), for the codegen unit tests.
 *
 *   ts_test_jit *j = ts_test_jit_new(&m, &err);   // m is consumed
 *   float (*f)(float);
 *   void *p = ts_test_jit_lookup(j, "f");          // external linkage only
 *   memcpy(&f, &p, sizeof f);
 *   ts_test_jit_free(j);
 *
 * The module's own target machine compiles it to an object file, and the
 * JIT links that object: what runs is exactly the code the module's CPU
 * and features give (a module for x86-64-v2 runs SSE code on an AVX-512
 * host), never code the JIT would pick for the host. In two steps, to look
 * at the code before running it (or instead, where the host cannot):
 *
 *   LLVMMemoryBufferRef obj = ts_test_jit_compile(&m, &err);  // m consumed
 *   const uint8_t *code = ts_test_obj_function(obj, "f", &size);
 *   ts_test_jit *j = ts_test_jit_load(obj, &err);             // obj taken
 *
 * Symbols the object needs resolve against the process (libm, libc, shared
 * libraries); functions linked statically into the test program are not in
 * its dynamic symbol table: give their addresses with ts_test_jit_define
 * before the first lookup.
 *
 * Header only, static inline functions: include it in one test program. */
#ifndef TS_TEST_CG_JIT_H
#define TS_TEST_CG_JIT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Object.h>
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

/* Module m compiled by its own target machine into an object file (m is
 * disposed here, success or not). NULL with the reason in *err (to free)
 * on failure. */
static inline LLVMMemoryBufferRef ts_test_jit_compile(ts_cg_module *m, char **err) {
  if (err)
    *err = NULL;
  LLVMMemoryBufferRef obj = NULL;
  char *msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(m->tm, m->mod, LLVMObjectFile, &msg, &obj)) {
    ts_test_jit_set_err(err, msg ? msg : "cannot emit the object");
    obj = NULL;
  }
  LLVMDisposeMessage(msg);
  ts_cg_module_dispose(m);
  return obj;
}

/* A JIT holding object obj (taken, success or not). NULL with the reason
 * in *err (to free) on failure. */
static inline ts_test_jit *ts_test_jit_load(LLVMMemoryBufferRef obj, char **err) {
  if (err)
    *err = NULL;
  ts_test_jit *j = calloc(1, sizeof *j);
  if (!obj || !j) {
    ts_test_jit_set_err(err, "out of memory");
    if (obj)
      LLVMDisposeMemoryBuffer(obj);
    free(j);
    return NULL;
  }
  /* the host's JIT target machine builder: the JIT compiles nothing */
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, NULL);
  if (e) {
    j->jit = NULL;
    ts_test_jit_error(e, "LLJIT", err);
    LLVMDisposeMemoryBuffer(obj);
    goto fail;
  }
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
  if (e) {
    ts_test_jit_error(e, "process symbols", err);
    LLVMDisposeMemoryBuffer(obj);
    goto fail;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  LLVMOrcJITDylibAddGenerator(jd, gen);
  e = LLVMOrcLLJITAddObjectFile(j->jit, jd, obj); /* takes obj */
  if (e) {
    ts_test_jit_error(e, "adding the object", err);
    goto fail;
  }
  return j;
fail:
  ts_test_jit_free(j);
  return NULL;
}

/* A JIT holding module m (disposed here, success or not), compiled by the
 * module's target machine. NULL with the reason in *err (to free) on
 * failure. */
static inline ts_test_jit *ts_test_jit_new(ts_cg_module *m, char **err) {
  LLVMMemoryBufferRef obj = ts_test_jit_compile(m, err);
  return obj ? ts_test_jit_load(obj, err) : NULL;
}

/* The machine code of function `name` in object obj, as the object holds
 * it (before relocation), and its size in *size; NULL where the object has
 * no such symbol. The bytes live as long as obj. */
static inline const uint8_t *ts_test_obj_function(LLVMMemoryBufferRef obj, const char *name, uint64_t *size) {
  *size = 0;
  char *msg = NULL;
  LLVMBinaryRef bin = LLVMCreateBinary(obj, NULL, &msg); /* obj stays ours */
  LLVMDisposeMessage(msg);
  if (!bin)
    return NULL;
  const uint8_t *code = NULL;
  LLVMSymbolIteratorRef sym = LLVMObjectFileCopySymbolIterator(bin);
  LLVMSectionIteratorRef sec = LLVMObjectFileCopySectionIterator(bin);
  for (; sym && sec && !LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym); LLVMMoveToNextSymbol(sym)) {
    const char *sn = LLVMGetSymbolName(sym);
    if (!sn || strcmp(sn, name) != 0)
      continue;
    LLVMMoveToContainingSection(sec, sym);
    if (LLVMObjectFileIsSectionIteratorAtEnd(bin, sec))
      break;
    uint64_t off = LLVMGetSymbolAddress(sym) - LLVMGetSectionAddress(sec);
    if (off + LLVMGetSymbolSize(sym) <= LLVMGetSectionSize(sec)) {
      code = (const uint8_t *)LLVMGetSectionContents(sec) + off;
      *size = LLVMGetSymbolSize(sym);
    }
    break;
  }
  if (sec)
    LLVMDisposeSectionIterator(sec);
  if (sym)
    LLVMDisposeSymbolIterator(sym);
  LLVMDisposeBinary(bin);
  return code;
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
