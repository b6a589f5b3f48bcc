/* frontend/pickle.c: a restricted unpickler for data.pkl and constants.pkl.
 *
 * It runs the opcodes torch.jit.save's Pickler (torch/csrc/jit/serialization/
 * pickler.cpp) emits, plus the rest of protocol 2 and the framing of
 * protocol 4, on a value stack with Python's MARK frames: an opcode never
 * reaches below the newest MARK. GLOBAL resolves only names on an allow-list
 * (those torch's own Unpickler accepts for TorchScript archives); REDUCE,
 * NEWOBJ and BUILD apply only what those names mean. Nothing is executed.
 *
 * Values live in the caller's arena. Each is a ts_pk_val, a ts_pv with some
 * bookkeeping behind it; two kinds exist only inside the VM (a GLOBAL and a
 * storage from BINPERSID) and may not end up in the result. When STOP is
 * reached the result is walked once, iteratively: it must hold no VM-only
 * value, no cycle, no duplicate dict key, and be nested at most max_depth
 * deep, so consumers may recurse over it safely. */
#include "pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* VM-only kinds, outside ts_pv_kind's range. */
#define TS_PK_GLOBAL ((ts_pv_kind)100)
#define TS_PK_STORAGE ((ts_pv_kind)101)

/* What an allow-listed GLOBAL stands for. */
typedef enum ts_pk_gid {
  TS_PKG_CLASS,             /* __torch__.*: NEWOBJ/REDUCE make an object */
  TS_PKG_REBUILD_TENSOR_V2, /* torch._utils._rebuild_tensor_v2 */
  TS_PKG_REBUILD_TENSOR,    /* torch._utils._rebuild_tensor (older files) */
  TS_PKG_REBUILD_PARAMETER, /* torch._utils._rebuild_parameter */
  TS_PKG_STORAGE_TYPE,      /* torch.FloatStorage ...: garg is the dtype */
  TS_PKG_ORDERED_DICT,      /* collections.OrderedDict */
  TS_PKG_COMPLEX,           /* builtins.complex */
  TS_PKG_RESTORE_TYPE_TAG,  /* torch.jit._pickle.restore_type_tag */
  TS_PKG_BUILD_LIST,        /* torch.jit._pickle.build_*list: garg is a ts_pk_elem */
  TS_PKG_DEVICE,            /* torch.device */
} ts_pk_gid;

/* Element kinds of the legacy build_*list globals. */
typedef enum ts_pk_elem { TS_PKE_INT, TS_PKE_FLOAT, TS_PKE_BOOL, TS_PKE_TENSOR } ts_pk_elem;

typedef struct ts_pk_val {
  ts_pv pv;        /* first: every ts_pv this file makes is a ts_pk_val */
  size_t off;      /* byte offset of the opcode that made it */
  uint32_t cap;    /* LIST: room in items; DICT: room in keys and vals */
  uint32_t height; /* final walk: longest path down from here */
  uint8_t color;   /* final walk: 0 unseen, 1 on the path, 2 done */
  uint8_t gid;     /* GLOBAL: ts_pk_gid */
  int8_t garg;     /* GLOBAL: dtype of a storage type, element of build_*list */
} ts_pk_val;

/* A GLOBAL keeps "module.name" in pv.u.obj.cls. A storage keeps its dtype,
 * key, bytes, byte count and device in pv.u.tensor, and its element count
 * in pv.u.tensor.storage_offset. */

typedef struct ts_pk_vm {
  ts_arena *arena;
  const uint8_t *p;
  size_t len, pos;
  size_t op; /* offset of the opcode being run: every message names it */
  const char *what;
  ts_fe_archive *ar;
  const char *storage_dir;
  ts_fe_pickle_limits lim;
  ts_diag *d;
  ts_pk_val **stack;
  size_t sp, scap;
  size_t *marks; /* stack heights at each open MARK */
  size_t nmarks, mcap;
  ts_pk_val **memo;
  size_t memo_cap, memo_count;
  uint64_t items; /* values pushed so far */
  bool failed;
} ts_pk_vm;

enum { TS_PK_MAX_RANK = 64, TS_PK_MAX_GLOBAL_NAME = 1024, TS_PK_MAX_KEY = 4096 };

/* ------------------------------------------------------------- messages */

/* Copies at most 64 bytes of `s` into `out` (cap >= 300) for a message:
 * bytes outside printable ASCII become \xNN, so hostile text cannot break
 * the one-line message. */
static const char *ts_pk_quote(char *out, size_t cap, const char *s, size_t n) {
  size_t o = 0, i = 0;
  for (; i < n && i < 64 && o + 5 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out[o++] = (char)c;
    } else {
      snprintf(out + o, cap - o, "\\x%02x", c);
      o += 4;
    }
  }
  if (i < n && o + 4 < cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = 0;
  return out;
}

/* Records the first error, as "<what>: byte <op>: <message>". */
static bool ts_pk_fail(ts_pk_vm *vm, const char *fmt, ...) TS_PRINTF(2, 3);
static bool ts_pk_fail(ts_pk_vm *vm, const char *fmt, ...) {
  if (vm->failed)
    return false;
  vm->failed = true;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *c = msg; *c; c++)
    if ((unsigned char)*c < 0x20)
      *c = '?'; /* one line, whatever went in */
  ts_diag_error(vm->d, "%s: byte %zu: %s", vm->what, vm->op, msg);
  return false;
}

static const char *ts_pk_opname(uint8_t op) {
  switch (op) {
  case 0x80: return "PROTO";
  case '.': return "STOP";
  case 'c': return "GLOBAL";
  case 'Q': return "BINPERSID";
  case 'R': return "REDUCE";
  case 'b': return "BUILD";
  case 0x81: return "NEWOBJ";
  case '(': return "MARK";
  case 't': return "TUPLE";
  case 0x85: return "TUPLE1";
  case 0x86: return "TUPLE2";
  case 0x87: return "TUPLE3";
  case ')': return "EMPTY_TUPLE";
  case ']': return "EMPTY_LIST";
  case '}': return "EMPTY_DICT";
  case 'a': return "APPEND";
  case 'e': return "APPENDS";
  case 's': return "SETITEM";
  case 'u': return "SETITEMS";
  case 'l': return "LIST";
  case 'd': return "DICT";
  case 'N': return "NONE";
  case 0x88: return "NEWTRUE";
  case 0x89: return "NEWFALSE";
  case 'J': return "BININT";
  case 'K': return "BININT1";
  case 'M': return "BININT2";
  case 0x8a: return "LONG1";
  case 'G': return "BINFLOAT";
  case 'X': return "BINUNICODE";
  case 0x8c: return "SHORT_BINUNICODE";
  case 0x8d: return "BINUNICODE8";
  case 'B': return "BINBYTES";
  case 'C': return "SHORT_BINBYTES";
  case 'q': return "BINPUT";
  case 'r': return "LONG_BINPUT";
  case 'h': return "BINGET";
  case 'j': return "LONG_BINGET";
  case 0x94: return "MEMOIZE";
  case '0': return "POP";
  case '1': return "POP_MARK";
  case '2': return "DUP";
  case 0x95: return "FRAME";
  default: return "?";
  }
}

/* The kind of a value with its article, for messages: "an int", "None". */
static const char *ts_pk_kind_name(const ts_pk_val *v) {
  if (v->pv.kind == TS_PK_GLOBAL)
    return "a GLOBAL";
  if (v->pv.kind == TS_PK_STORAGE)
    return "a storage";
  switch (v->pv.kind) {
  case TS_PV_NONE: return "None";
  case TS_PV_BOOL: return "a bool";
  case TS_PV_INT: return "an int";
  case TS_PV_FLOAT: return "a float";
  case TS_PV_COMPLEX: return "a complex";
  case TS_PV_STR: return "a str";
  case TS_PV_TUPLE: return "a tuple";
  case TS_PV_LIST: return "a list";
  case TS_PV_DICT: return "a dict";
  case TS_PV_OBJECT: return "an object";
  case TS_PV_TENSOR: return "a Tensor";
  case TS_PV_DEVICE: return "a device";
  }
  return "?";
}

/* ------------------------------------------------------- values, stack */

static ts_pk_val *ts_pk_new(ts_pk_vm *vm, ts_pv_kind k) {
  ts_pk_val *v = ts_arena_alloc(vm->arena, sizeof *v);
  if (!v) {
    ts_pk_fail(vm, "out of memory (arena limit)");
    return NULL;
  }
  v->pv.kind = k;
  v->off = vm->op;
  return v;
}

/* An arena array of n pointers (n may be 0: a non-NULL empty block). */
static void *ts_pk_array(ts_pk_vm *vm, void *old, size_t old_n, size_t n, size_t elem) {
  void *p = ts_arena_grow(vm->arena, old, old_n, n ? n : 1, elem);
  if (!p)
    ts_pk_fail(vm, "out of memory (arena limit)");
  return p;
}

static bool ts_pk_push(ts_pk_vm *vm, ts_pk_val *v) {
  if (!v)
    return false;
  if (vm->items >= vm->lim.max_items)
    return ts_pk_fail(vm, "more than %llu values (limit)", (unsigned long long)vm->lim.max_items);
  vm->items++;
  if (vm->sp == vm->scap) {
    size_t cap = vm->scap ? vm->scap * 2 : 256;
    ts_pk_val **s = cap <= SIZE_MAX / sizeof *s ? realloc(vm->stack, cap * sizeof *s) : NULL;
    if (!s)
      return ts_pk_fail(vm, "out of memory for the stack");
    vm->stack = s;
    vm->scap = cap;
  }
  vm->stack[vm->sp++] = v;
  return true;
}

/* Values above the newest MARK: what the current opcode may use. */
static size_t ts_pk_frame(const ts_pk_vm *vm) { return vm->sp - (vm->nmarks ? vm->marks[vm->nmarks - 1] : 0); }

static bool ts_pk_need(ts_pk_vm *vm, size_t n, uint8_t op) {
  size_t have = ts_pk_frame(vm);
  if (have >= n)
    return true;
  return ts_pk_fail(vm, "stack underflow: %s needs %zu value%s, %zu above the %s", ts_pk_opname(op), n,
                    n == 1 ? "" : "s", have, vm->nmarks ? "last MARK" : "bottom");
}

static ts_pk_val *ts_pk_pop(ts_pk_vm *vm) { return vm->stack[--vm->sp]; }

/* The newest MARK's stack height, removed; false if there is none. */
static bool ts_pk_pop_mark(ts_pk_vm *vm, uint8_t op, size_t *m) {
  if (!vm->nmarks)
    return ts_pk_fail(vm, "%s without a MARK", ts_pk_opname(op));
  *m = vm->marks[--vm->nmarks];
  return true;
}

static const uint8_t *ts_pk_take(ts_pk_vm *vm, size_t n, uint8_t op) {
  if (vm->len - vm->pos < n) {
    ts_pk_fail(vm, "truncated %s argument: %zu bytes needed, %zu left", ts_pk_opname(op), n, vm->len - vm->pos);
    return NULL;
  }
  const uint8_t *r = vm->p + vm->pos;
  vm->pos += n;
  return r;
}

static uint64_t ts_pk_le(const uint8_t *b, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | b[i];
  return v;
}

static ts_pk_val *ts_pk_str(ts_pk_vm *vm, const char *s, size_t n) {
  ts_pk_val *v = ts_pk_new(vm, TS_PV_STR);
  if (!v)
    return NULL;
  char *c = ts_arena_strndup(vm->arena, s, n);
  if (!c) {
    ts_pk_fail(vm, "out of memory (arena limit)");
    return NULL;
  }
  v->pv.u.str.s = c;
  v->pv.u.str.len = n;
  return v;
}

static ts_pk_val *ts_pk_int(ts_pk_vm *vm, int64_t i) {
  ts_pk_val *v = ts_pk_new(vm, TS_PV_INT);
  if (v)
    v->pv.u.i = i;
  return v;
}

/* A tuple (or list) holding a copy of `n` stack values. */
static ts_pk_val *ts_pk_seq(ts_pk_vm *vm, ts_pv_kind k, ts_pk_val *const *items, size_t n) {
  if (n >= UINT32_MAX) {
    ts_pk_fail(vm, "%zu items in one container", n);
    return NULL;
  }
  ts_pk_val *v = ts_pk_new(vm, k);
  if (!v)
    return NULL;
  ts_pv **a = ts_pk_array(vm, NULL, 0, n, sizeof *a);
  if (!a)
    return NULL;
  for (size_t i = 0; i < n; i++)
    a[i] = &items[i]->pv;
  v->pv.u.seq.items = a;
  v->pv.u.seq.n = (uint32_t)n;
  v->cap = (uint32_t)(n ? n : 1);
  return v;
}

/* Appends `n` values to a list, growing it by doubling. */
static bool ts_pk_list_add(ts_pk_vm *vm, ts_pk_val *list, ts_pk_val *const *items, size_t n) {
  size_t have = list->pv.u.seq.n;
  if (n >= UINT32_MAX - have)
    return ts_pk_fail(vm, "too many items in one list");
  size_t need = have + n;
  if (need > list->cap) {
    size_t cap = (size_t)list->cap * 2;
    if (cap < need)
      cap = need;
    if (cap >= UINT32_MAX)
      cap = UINT32_MAX - 1;
    ts_pv **a = ts_pk_array(vm, list->pv.u.seq.items, have, cap, sizeof *a);
    if (!a)
      return false;
    list->pv.u.seq.items = a;
    list->cap = (uint32_t)cap;
  }
  for (size_t i = 0; i < n; i++)
    list->pv.u.seq.items[have + i] = &items[i]->pv;
  list->pv.u.seq.n = (uint32_t)need;
  return true;
}

/* Dict keys are what TorchScript dicts may be keyed by. */
static bool ts_pk_key_ok(ts_pk_vm *vm, const ts_pk_val *k) {
  switch (k->pv.kind) {
  case TS_PV_STR:
  case TS_PV_INT:
  case TS_PV_BOOL:
  case TS_PV_FLOAT:
  case TS_PV_COMPLEX:
  case TS_PV_TENSOR:
  case TS_PV_DEVICE:
    return true;
  default:
    return ts_pk_fail(vm, "%s cannot be a dict key", ts_pk_kind_name(k));
  }
}

/* Adds key/value pairs (kv[0], kv[1], kv[2], ...) to a dict. Duplicate keys
 * are found once the whole value is read (see ts_pk_check). */
static bool ts_pk_dict_add(ts_pk_vm *vm, ts_pk_val *dict, ts_pk_val *const *kv, size_t npairs) {
  size_t have = dict->pv.u.dict.n;
  if (npairs >= UINT32_MAX - have)
    return ts_pk_fail(vm, "too many items in one dict");
  for (size_t i = 0; i < npairs; i++)
    if (!ts_pk_key_ok(vm, kv[2 * i]))
      return false;
  size_t need = have + npairs;
  if (need > dict->cap) {
    size_t cap = (size_t)dict->cap * 2;
    if (cap < need)
      cap = need;
    if (cap >= UINT32_MAX)
      cap = UINT32_MAX - 1;
    ts_pv **k = ts_pk_array(vm, dict->pv.u.dict.keys, have, cap, sizeof *k);
    ts_pv **v = k ? ts_pk_array(vm, dict->pv.u.dict.vals, have, cap, sizeof *v) : NULL;
    if (!v)
      return false;
    dict->pv.u.dict.keys = k;
    dict->pv.u.dict.vals = v;
    dict->cap = (uint32_t)cap;
  }
  for (size_t i = 0; i < npairs; i++) {
    dict->pv.u.dict.keys[have + i] = &kv[2 * i]->pv;
    dict->pv.u.dict.vals[have + i] = &kv[2 * i + 1]->pv;
  }
  dict->pv.u.dict.n = (uint32_t)need;
  return true;
}

static ts_pk_val *ts_pk_dict(ts_pk_vm *vm) {
  ts_pk_val *v = ts_pk_new(vm, TS_PV_DICT);
  if (!v)
    return NULL;
  v->pv.u.dict.keys = ts_pk_array(vm, NULL, 0, 0, sizeof(ts_pv *));
  v->pv.u.dict.vals = ts_pk_array(vm, NULL, 0, 0, sizeof(ts_pv *));
  v->cap = 1;
  return v->pv.u.dict.vals ? v : NULL;
}

/* ----------------------------------------------------------------- memo */

static bool ts_pk_memo_put(ts_pk_vm *vm, uint64_t idx, uint8_t op) {
  if (!ts_pk_need(vm, 1, op))
    return false;
  if (idx >= vm->lim.max_memo)
    return ts_pk_fail(vm, "memo index %llu over the limit of %u", (unsigned long long)idx, vm->lim.max_memo);
  if (idx >= vm->memo_cap) {
    size_t cap = vm->memo_cap ? vm->memo_cap * 2 : 64;
    if (cap <= idx)
      cap = (size_t)idx + 1;
    if (cap > vm->lim.max_memo)
      cap = vm->lim.max_memo;
    ts_pk_val **m = cap <= SIZE_MAX / sizeof *m ? realloc(vm->memo, cap * sizeof *m) : NULL;
    if (!m)
      return ts_pk_fail(vm, "out of memory for the memo");
    memset(m + vm->memo_cap, 0, (cap - vm->memo_cap) * sizeof *m);
    vm->memo = m;
    vm->memo_cap = cap;
  }
  if (!vm->memo[idx])
    vm->memo_count++;
  vm->memo[idx] = vm->stack[vm->sp - 1];
  return true;
}

static bool ts_pk_memo_get(ts_pk_vm *vm, uint64_t idx) {
  if (idx >= vm->memo_cap || !vm->memo[idx])
    return ts_pk_fail(vm, "memo slot %llu is not set", (unsigned long long)idx);
  return ts_pk_push(vm, vm->memo[idx]);
}

/* --------------------------------------------------------------- GLOBAL */

static bool ts_pk_ident_ok(const char *s, size_t n, bool dots) {
  if (n == 0 || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c == '.' && dots && s[i - 1] != '.')
      ok = true;
    if (!ok)
      return false;
  }
  return true;
}

#define TS_PK_IS(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), (lit), (n)) == 0)

/* Resolves "module name" against the allow-list; NULL (and the reason) for
 * anything else. */
static ts_pk_val *ts_pk_global(ts_pk_vm *vm, const char *mod, size_t ml, const char *name, size_t nl) {
  char q1[300], q2[300];
  if (!ts_pk_ident_ok(mod, ml, true) || !ts_pk_ident_ok(name, nl, false)) {
    ts_pk_fail(vm, "GLOBAL '%s %s' is not a valid name", ts_pk_quote(q1, sizeof q1, mod, ml),
               ts_pk_quote(q2, sizeof q2, name, nl));
    return NULL;
  }
  int gid = -1, garg = 0;
  const char *unsupported = NULL;
  if (TS_PK_IS(mod, ml, "__torch__") || (ml > 10 && memcmp(mod, "__torch__.", 10) == 0)) {
    gid = TS_PKG_CLASS;
  } else if (TS_PK_IS(mod, ml, "torch._utils")) {
    if (TS_PK_IS(name, nl, "_rebuild_tensor_v2"))
      gid = TS_PKG_REBUILD_TENSOR_V2;
    else if (TS_PK_IS(name, nl, "_rebuild_tensor"))
      gid = TS_PKG_REBUILD_TENSOR;
    else if (TS_PK_IS(name, nl, "_rebuild_parameter"))
      gid = TS_PKG_REBUILD_PARAMETER;
    else if (TS_PK_IS(name, nl, "_rebuild_qtensor"))
      unsupported = "quantized tensors are not supported";
    else if (TS_PK_IS(name, nl, "_rebuild_sparse_tensor") || TS_PK_IS(name, nl, "_rebuild_sparse_csr_tensor"))
      unsupported = "sparse tensors are not supported";
  } else if (TS_PK_IS(mod, ml, "torch._tensor")) {
    if (TS_PK_IS(name, nl, "_rebuild_from_type_v2"))
      unsupported = "tensor subclasses are not supported";
  } else if (TS_PK_IS(mod, ml, "torch")) {
    if (TS_PK_IS(name, nl, "device")) {
      gid = TS_PKG_DEVICE;
    } else if (nl > 7 && memcmp(name + nl - 7, "Storage", 7) == 0) {
      ts_dtype dt = ts_dtype_from_name(name, nl - 7);
      if (dt == TS_DT_QINT8 || dt == TS_DT_QUINT8 || dt == TS_DT_QINT32) {
        unsupported = "quantized tensors are not supported";
      } else if (dt != TS_DT_NONE) {
        gid = TS_PKG_STORAGE_TYPE;
        garg = dt;
      }
    } else if (TS_PK_IS(name, nl, "per_tensor_affine") || TS_PK_IS(name, nl, "per_channel_affine") ||
               TS_PK_IS(name, nl, "per_tensor_symmetric") || TS_PK_IS(name, nl, "per_channel_symmetric") ||
               TS_PK_IS(name, nl, "per_channel_affine_float_qparams")) {
      unsupported = "quantized tensors are not supported";
    }
  } else if (TS_PK_IS(mod, ml, "collections")) {
    if (TS_PK_IS(name, nl, "OrderedDict"))
      gid = TS_PKG_ORDERED_DICT;
  } else if (TS_PK_IS(mod, ml, "builtins")) {
    if (TS_PK_IS(name, nl, "complex"))
      gid = TS_PKG_COMPLEX;
  } else if (TS_PK_IS(mod, ml, "torch.jit._pickle")) {
    gid = TS_PKG_BUILD_LIST;
    if (TS_PK_IS(name, nl, "restore_type_tag"))
      gid = TS_PKG_RESTORE_TYPE_TAG;
    else if (TS_PK_IS(name, nl, "build_intlist"))
      garg = TS_PKE_INT;
    else if (TS_PK_IS(name, nl, "build_doublelist") || TS_PK_IS(name, nl, "build_floatlist"))
      garg = TS_PKE_FLOAT;
    else if (TS_PK_IS(name, nl, "build_boollist"))
      garg = TS_PKE_BOOL;
    else if (TS_PK_IS(name, nl, "build_tensorlist"))
      garg = TS_PKE_TENSOR;
    else if (TS_PK_IS(name, nl, "build_tensor_from_id"))
      gid = -1, unsupported = "tensor tables (build_tensor_from_id) are not supported";
    else
      gid = -1;
  } else if (TS_PK_IS(mod, ml, "torch.distributed.rpc")) {
    if (TS_PK_IS(name, nl, "rref"))
      unsupported = "RRef values are not supported";
  }
  if (gid < 0) {
    if (unsupported)
      ts_pk_fail(vm, "%s (GLOBAL '%.*s %.*s')", unsupported, (int)ml, mod, (int)nl, name);
    else
      ts_pk_fail(vm, "GLOBAL '%.*s %.*s' is not allowed", (int)ml, mod, (int)nl, name);
    return NULL;
  }
  ts_pk_val *v = ts_pk_new(vm, TS_PK_GLOBAL);
  if (!v)
    return NULL;
  char *q = ts_arena_alloc(vm->arena, ml + nl + 2);
  if (!q) {
    ts_pk_fail(vm, "out of memory (arena limit)");
    return NULL;
  }
  memcpy(q, mod, ml);
  q[ml] = '.';
  memcpy(q + ml + 1, name, nl);
  v->pv.u.obj.cls = q;
  v->gid = (uint8_t)gid;
  v->garg = (int8_t)garg;
  return v;
}

/* GLOBAL's argument: "module\nname\n". */
static bool ts_pk_op_global(ts_pk_vm *vm) {
  const char *line[2];
  size_t n[2];
  for (int i = 0; i < 2; i++) {
    size_t left = vm->len - vm->pos;
    size_t scan = left < TS_PK_MAX_GLOBAL_NAME + 1 ? left : TS_PK_MAX_GLOBAL_NAME + 1;
    const uint8_t *nl = memchr(vm->p + vm->pos, '\n', scan);
    if (!nl)
      return ts_pk_fail(vm, scan == left ? "truncated GLOBAL argument: no newline" : "GLOBAL name over %d bytes",
                        TS_PK_MAX_GLOBAL_NAME);
    line[i] = (const char *)vm->p + vm->pos;
    n[i] = (size_t)(nl - (vm->p + vm->pos));
    vm->pos += n[i] + 1;
  }
  return ts_pk_push(vm, ts_pk_global(vm, line[0], n[0], line[1], n[1]));
}

/* ------------------------------------------------------------- tensors */

/* BINPERSID's id: ('storage', <storage type>, key, location, numel). The
 * storage's bytes are the archive entry storage_dir + key. */
static ts_pk_val *ts_pk_storage(ts_pk_vm *vm, const ts_pk_val *pid) {
  char q[300];
  if (pid->pv.kind != TS_PV_TUPLE || pid->pv.u.seq.n != 5) {
    ts_pk_fail(vm, "a persistent id must be a 5-tuple ('storage', type, key, location, numel), found %s",
               ts_pk_kind_name(pid));
    return NULL;
  }
  ts_pk_val *const *a = (ts_pk_val *const *)pid->pv.u.seq.items;
  if (a[0]->pv.kind != TS_PV_STR || !TS_PK_IS(a[0]->pv.u.str.s, a[0]->pv.u.str.len, "storage")) {
    ts_pk_fail(vm, "unknown persistent id %s%s%s", a[0]->pv.kind == TS_PV_STR ? "'" : "",
               a[0]->pv.kind == TS_PV_STR ? ts_pk_quote(q, sizeof q, a[0]->pv.u.str.s, a[0]->pv.u.str.len)
                                          : ts_pk_kind_name(a[0]),
               a[0]->pv.kind == TS_PV_STR ? "'" : "");
    return NULL;
  }
  if (a[1]->pv.kind != TS_PK_GLOBAL || a[1]->gid != TS_PKG_STORAGE_TYPE) {
    ts_pk_fail(vm, "a persistent id's storage type must be a GLOBAL like 'torch FloatStorage', found %s%s",
               a[1]->pv.kind == TS_PK_GLOBAL ? "GLOBAL " : "",
               a[1]->pv.kind == TS_PK_GLOBAL ? a[1]->pv.u.obj.cls : ts_pk_kind_name(a[1]));
    return NULL;
  }
  const ts_pv *key = &a[2]->pv, *loc = &a[3]->pv;
  if (key->kind != TS_PV_STR || key->u.str.len == 0 || key->u.str.len > TS_PK_MAX_KEY ||
      memchr(key->u.str.s, 0, key->u.str.len)) {
    ts_pk_fail(vm, "a persistent id's key must be a non-empty string without NUL bytes");
    return NULL;
  }
  if (loc->kind != TS_PV_STR) {
    ts_pk_fail(vm, "a persistent id's location must be a string, found %s", ts_pk_kind_name(a[3]));
    return NULL;
  }
  ts_device dev;
  if (!ts_device_parse(loc->u.str.s, loc->u.str.len, &dev)) {
    ts_pk_fail(vm, "unknown device '%s' for storage '%s'", ts_pk_quote(q, sizeof q, loc->u.str.s, loc->u.str.len),
               key->u.str.s);
    return NULL;
  }
  if (a[4]->pv.kind != TS_PV_INT || a[4]->pv.u.i < 0) {
    ts_pk_fail(vm, "a persistent id's element count must be an int >= 0");
    return NULL;
  }
  ts_dtype dt = (ts_dtype)a[1]->garg;
  int64_t numel = a[4]->pv.u.i;
  uint64_t bytes;
  if (__builtin_mul_overflow((uint64_t)numel, (uint64_t)ts_dtype_size(dt), &bytes) || bytes > SIZE_MAX) {
    ts_pk_fail(vm, "storage '%s' of %lld %s elements overflows", key->u.str.s, (long long)numel, ts_dtype_name(dt));
    return NULL;
  }
  const uint8_t *data = NULL;
  const char *dir = vm->storage_dir ? vm->storage_dir : "";
  /* Like torch, an empty storage needs no entry. */
  if (numel > 0) {
    if (!vm->ar) {
      ts_pk_fail(vm, "storage '%s': no archive to read it from", key->u.str.s);
      return NULL;
    }
    size_t dl = strlen(dir);
    char *name = malloc(dl + key->u.str.len + 1);
    if (!name) {
      ts_pk_fail(vm, "out of memory");
      return NULL;
    }
    memcpy(name, dir, dl);
    memcpy(name + dl, key->u.str.s, key->u.str.len + 1);
    ts_diag sub = {0};
    size_t have = 0;
    data = ts_fe_archive_read(vm->ar, name, &have, &sub);
    if (!data) {
      /* archive messages are "error: <text>\n": keep the text, on this line */
      const char *t = sub.text.data ? sub.text.data : "";
      if (strncmp(t, "error: ", 7) == 0)
        t += 7;
      const char *an = ts_fe_archive_display_name(vm->ar);
      size_t anl = strlen(an);
      if (strncmp(t, an, anl) == 0 && strncmp(t + anl, ": ", 2) == 0)
        t += anl + 2;
      size_t tl = strcspn(t, "\n");
      ts_pk_fail(vm, "storage '%s': %.*s", ts_pk_quote(q, sizeof q, name, strlen(name)), (int)(tl < 400 ? tl : 400),
                 t);
    } else if (have < bytes) {
      ts_pk_fail(vm, "storage '%s' holds %zu bytes, %llu expected (%lld %s elements)",
                 ts_pk_quote(q, sizeof q, name, strlen(name)), have, (unsigned long long)bytes, (long long)numel,
                 ts_dtype_name(dt));
      data = NULL;
    }
    ts_diag_free(&sub);
    free(name);
    if (!data)
      return NULL;
  }
  ts_pk_val *s = ts_pk_new(vm, TS_PK_STORAGE);
  if (!s)
    return NULL;
  s->pv.u.tensor.t.dtype = (int8_t)dt;
  s->pv.u.tensor.storage_key = key->u.str.s;
  s->pv.u.tensor.storage = data;
  s->pv.u.tensor.storage_bytes = (size_t)bytes;
  s->pv.u.tensor.storage_offset = numel;
  s->pv.u.tensor.device = dev;
  return s;
}

/* Reads a tuple of ints (sizes or strides) into an arena array of `n`. */
static int64_t *ts_pk_int_tuple(ts_pk_vm *vm, const ts_pk_val *t, const char *what, uint32_t *n) {
  if (t->pv.kind != TS_PV_TUPLE) {
    ts_pk_fail(vm, "a tensor's %s must be a tuple, found %s", what, ts_pk_kind_name(t));
    return NULL;
  }
  if (t->pv.u.seq.n > TS_PK_MAX_RANK) {
    ts_pk_fail(vm, "a tensor of rank %u (limit %d)", t->pv.u.seq.n, TS_PK_MAX_RANK);
    return NULL;
  }
  *n = t->pv.u.seq.n;
  int64_t *r = ts_pk_array(vm, NULL, 0, *n, sizeof *r);
  if (!r)
    return NULL;
  for (uint32_t i = 0; i < *n; i++) {
    const ts_pv *e = t->pv.u.seq.items[i];
    if (e->kind != TS_PV_INT) {
      ts_pk_fail(vm, "a tensor's %s must hold ints, found %s", what, ts_pk_kind_name((const ts_pk_val *)e));
      return NULL;
    }
    if (e->u.i < 0) {
      ts_pk_fail(vm, "negative %s %lld in dimension %u", strcmp(what, "sizes") == 0 ? "size" : "stride",
                 (long long)e->u.i, i);
      return NULL;
    }
    r[i] = e->u.i;
  }
  return r;
}

/* A tensor over a storage: the view (offset, sizes, strides) must lie within
 * the storage's elements. */
static ts_pk_val *ts_pk_tensor(ts_pk_vm *vm, const ts_pk_val *st, const ts_pk_val *off, const ts_pk_val *size,
                               const ts_pk_val *stride, bool requires_grad) {
  if (st->pv.kind != TS_PK_STORAGE) {
    ts_pk_fail(vm, "a tensor's first argument must be a storage (from BINPERSID), found %s", ts_pk_kind_name(st));
    return NULL;
  }
  if (off->pv.kind != TS_PV_INT || off->pv.u.i < 0) {
    ts_pk_fail(vm, "a tensor's storage offset must be an int >= 0");
    return NULL;
  }
  uint32_t rank, nstrides;
  int64_t *sizes = ts_pk_int_tuple(vm, size, "sizes", &rank);
  int64_t *strides = sizes ? ts_pk_int_tuple(vm, stride, "strides", &nstrides) : NULL;
  if (!strides)
    return NULL;
  if (rank != nstrides) {
    ts_pk_fail(vm, "a tensor with %u sizes and %u strides", rank, nstrides);
    return NULL;
  }
  int64_t numel = 1;
  bool empty = false;
  for (uint32_t i = 0; i < rank; i++) {
    if (sizes[i] == 0)
      empty = true;
    else if (__builtin_mul_overflow(numel, sizes[i], &numel)) {
      ts_pk_fail(vm, "a tensor's sizes overflow int64 (dimension %u)", i);
      return NULL;
    }
  }
  if (empty)
    numel = 0;
  int64_t offset = off->pv.u.i, storage_numel = st->pv.u.tensor.storage_offset;
  ts_dtype dt = (ts_dtype)st->pv.u.tensor.t.dtype;
  if (numel > 0) {
    int64_t last = offset;
    for (uint32_t i = 0; i < rank; i++) {
      int64_t span;
      if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last)) {
        ts_pk_fail(vm, "a tensor's extent overflows int64 (dimension %u)", i);
        return NULL;
      }
    }
    if (last >= storage_numel) {
      ts_pk_fail(vm,
                 "the tensor's last element (index %lld) lies outside its storage '%s' of %lld elements "
                 "(offset %lld, rank %u)",
                 (long long)last, st->pv.u.tensor.storage_key, (long long)storage_numel, (long long)offset, rank);
      return NULL;
    }
  }
  ts_pk_val *t = ts_pk_new(vm, TS_PV_TENSOR);
  if (!t)
    return NULL;
  t->pv.u.tensor = st->pv.u.tensor;
  t->pv.u.tensor.t.dtype = (int8_t)dt;
  t->pv.u.tensor.t.rank = (int32_t)rank;
  t->pv.u.tensor.t.sizes = sizes;
  t->pv.u.tensor.t.strides = strides;
  t->pv.u.tensor.t.data = numel > 0 ? st->pv.u.tensor.storage + (size_t)offset * ts_dtype_size(dt) : NULL;
  t->pv.u.tensor.t.repr = NULL;
  t->pv.u.tensor.storage_offset = offset;
  t->pv.u.tensor.requires_grad = requires_grad;
  return t;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) and _rebuild_tensor(storage, offset, size,
 * stride). */
static ts_pk_val *ts_pk_rebuild_tensor(ts_pk_vm *vm, const ts_pk_val *args, bool v2) {
  uint32_t n = args->pv.u.seq.n;
  if (v2 ? n != 6 && n != 7 : n != 4) {
    ts_pk_fail(vm, "%s takes %s arguments, found %u", v2 ? "_rebuild_tensor_v2" : "_rebuild_tensor",
               v2 ? "6 or 7" : "4", n);
    return NULL;
  }
  ts_pk_val *const *a = (ts_pk_val *const *)args->pv.u.seq.items;
  bool rg = false;
  if (v2) {
    if (a[4]->pv.kind != TS_PV_BOOL) {
      ts_pk_fail(vm, "a tensor's requires_grad must be a bool, found %s", ts_pk_kind_name(a[4]));
      return NULL;
    }
    rg = a[4]->pv.u.b;
    if (a[5]->pv.kind != TS_PV_DICT && a[5]->pv.kind != TS_PV_NONE) {
      ts_pk_fail(vm, "a tensor's backward hooks must be an OrderedDict, found %s", ts_pk_kind_name(a[5]));
      return NULL;
    }
    if (n == 7) {
      /* metadata: the math bits {"conj": bool, "neg": bool}; set bits would
       * change what the bytes mean, and are not supported. */
      const ts_pv *md = &a[6]->pv;
      if (md->kind != TS_PV_DICT) {
        ts_pk_fail(vm, "a tensor's metadata must be a dict, found %s", ts_pk_kind_name(a[6]));
        return NULL;
      }
      for (uint32_t i = 0; i < md->u.dict.n; i++) {
        const ts_pv *k = md->u.dict.keys[i], *v = md->u.dict.vals[i];
        if (k->kind != TS_PV_STR || v->kind != TS_PV_BOOL) {
          ts_pk_fail(vm, "a tensor's metadata must map str to bool");
          return NULL;
        }
        if (v->u.b) {
          char q[300];
          ts_pk_fail(vm, "tensors with the '%s' bit set are not supported",
                     ts_pk_quote(q, sizeof q, k->u.str.s, k->u.str.len));
          return NULL;
        }
      }
    }
  }
  return ts_pk_tensor(vm, a[0], a[1], a[2], a[3], rg);
}

/* ---------------------------------------------------------------- REDUCE */

static bool ts_pk_args_tuple(ts_pk_vm *vm, const ts_pk_val *fn, const ts_pk_val *args, uint32_t n) {
  if (args->pv.kind != TS_PV_TUPLE)
    return ts_pk_fail(vm, "REDUCE of '%s' needs a tuple of arguments, found %s", fn->pv.u.obj.cls,
                      ts_pk_kind_name(args));
  if (n != UINT32_MAX && args->pv.u.seq.n != n)
    return ts_pk_fail(vm, "'%s' takes %u argument%s, found %u", fn->pv.u.obj.cls, n, n == 1 ? "" : "s",
                      args->pv.u.seq.n);
  return true;
}

static const char *const ts_pk_elem_tags[] = {"List[int]", "List[float]", "List[bool]", "List[Tensor]"};

/* Applies an allow-listed global to its arguments. */
static ts_pk_val *ts_pk_call(ts_pk_vm *vm, ts_pk_val *fn, ts_pk_val *args) {
  char q[300];
  ts_pk_val *const *a = args->pv.kind == TS_PV_TUPLE ? (ts_pk_val *const *)args->pv.u.seq.items : NULL;
  switch ((ts_pk_gid)fn->gid) {
  case TS_PKG_CLASS: {
    /* An enum (its value) or a class reduced from its state: keep both as
     * an object holding the argument. */
    ts_pk_val *o = ts_pk_new(vm, TS_PV_OBJECT);
    if (o) {
      o->pv.u.obj.cls = fn->pv.u.obj.cls;
      o->pv.u.obj.state = &args->pv;
    }
    return o;
  }
  case TS_PKG_REBUILD_TENSOR_V2:
  case TS_PKG_REBUILD_TENSOR:
    if (!ts_pk_args_tuple(vm, fn, args, UINT32_MAX))
      return NULL;
    return ts_pk_rebuild_tensor(vm, args, fn->gid == TS_PKG_REBUILD_TENSOR_V2);
  case TS_PKG_REBUILD_PARAMETER: {
    if (!ts_pk_args_tuple(vm, fn, args, 3))
      return NULL;
    if (a[0]->pv.kind != TS_PV_TENSOR || a[1]->pv.kind != TS_PV_BOOL) {
      ts_pk_fail(vm, "_rebuild_parameter takes (Tensor, bool, hooks), found (%s, %s, ...)", ts_pk_kind_name(a[0]),
                 ts_pk_kind_name(a[1]));
      return NULL;
    }
    ts_pk_val *t = ts_pk_new(vm, TS_PV_TENSOR);
    if (t) {
      t->pv.u.tensor = a[0]->pv.u.tensor;
      t->pv.u.tensor.requires_grad = a[1]->pv.u.b;
    }
    return t;
  }
  case TS_PKG_STORAGE_TYPE:
    ts_pk_fail(vm, "'%s' cannot be called (storage types only name a persistent id's dtype)", fn->pv.u.obj.cls);
    return NULL;
  case TS_PKG_ORDERED_DICT:
    if (!ts_pk_args_tuple(vm, fn, args, 0))
      return NULL;
    return ts_pk_dict(vm);
  case TS_PKG_COMPLEX: {
    if (!ts_pk_args_tuple(vm, fn, args, 2))
      return NULL;
    double part[2];
    for (int i = 0; i < 2; i++) {
      if (a[i]->pv.kind == TS_PV_FLOAT)
        part[i] = a[i]->pv.u.f;
      else if (a[i]->pv.kind == TS_PV_INT)
        part[i] = (double)a[i]->pv.u.i;
      else {
        ts_pk_fail(vm, "complex() takes two numbers, found %s", ts_pk_kind_name(a[i]));
        return NULL;
      }
    }
    ts_pk_val *c = ts_pk_new(vm, TS_PV_COMPLEX);
    if (c) {
      c->pv.u.c.re = part[0];
      c->pv.u.c.im = part[1];
    }
    return c;
  }
  case TS_PKG_RESTORE_TYPE_TAG: {
    if (!ts_pk_args_tuple(vm, fn, args, 2))
      return NULL;
    ts_pk_val *obj = a[0];
    const ts_pv *tag = &a[1]->pv;
    if (tag->kind != TS_PV_STR || tag->u.str.len == 0 || memchr(tag->u.str.s, 0, tag->u.str.len)) {
      ts_pk_fail(vm, "restore_type_tag needs a type string without NUL bytes");
      return NULL;
    }
    if (obj->pv.kind == TS_PV_LIST) {
      obj->pv.u.seq.type_tag = tag->u.str.s;
    } else if (obj->pv.kind == TS_PV_DICT) {
      obj->pv.u.dict.type_tag = tag->u.str.s;
    } else {
      ts_pk_fail(vm, "restore_type_tag '%s' on %s (only lists and dicts take a type tag)",
                 ts_pk_quote(q, sizeof q, tag->u.str.s, tag->u.str.len), ts_pk_kind_name(obj));
      return NULL;
    }
    return obj;
  }
  case TS_PKG_BUILD_LIST: {
    if (!ts_pk_args_tuple(vm, fn, args, 1))
      return NULL;
    ts_pk_val *list = a[0];
    if (list->pv.kind != TS_PV_LIST) {
      ts_pk_fail(vm, "'%s' needs a list, found %s", fn->pv.u.obj.cls, ts_pk_kind_name(list));
      return NULL;
    }
    static const ts_pv_kind want[] = {TS_PV_INT, TS_PV_FLOAT, TS_PV_BOOL, TS_PV_TENSOR};
    for (uint32_t i = 0; i < list->pv.u.seq.n; i++)
      if (list->pv.u.seq.items[i]->kind != want[fn->garg]) {
        ts_pk_fail(vm, "'%s': item %u is %s", fn->pv.u.obj.cls, i,
                   ts_pk_kind_name((const ts_pk_val *)list->pv.u.seq.items[i]));
        return NULL;
      }
    if (!list->pv.u.seq.type_tag)
      list->pv.u.seq.type_tag = ts_pk_elem_tags[fn->garg];
    return list;
  }
  case TS_PKG_DEVICE: {
    if (!ts_pk_args_tuple(vm, fn, args, 1))
      return NULL;
    const ts_pv *s = &a[0]->pv;
    ts_device dev;
    if (s->kind != TS_PV_STR) {
      ts_pk_fail(vm, "torch.device needs a string, found %s", ts_pk_kind_name(a[0]));
      return NULL;
    }
    if (!ts_device_parse(s->u.str.s, s->u.str.len, &dev)) {
      ts_pk_fail(vm, "unknown device '%s'", ts_pk_quote(q, sizeof q, s->u.str.s, s->u.str.len));
      return NULL;
    }
    ts_pk_val *v = ts_pk_new(vm, TS_PV_DEVICE);
    if (v)
      v->pv.u.device = dev;
    return v;
  }
  }
  ts_pk_fail(vm, "internal error: unknown global");
  return NULL;
}

/* ------------------------------------------------------ the final check */

static int ts_pk_key_cmp(const void *pa, const void *pb) {
  const ts_pv *x = *(const ts_pv *const *)pa, *y = *(const ts_pv *const *)pb;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  uint64_t bx, by;
  switch (x->kind) {
  case TS_PV_STR: {
    size_t n = x->u.str.len < y->u.str.len ? x->u.str.len : y->u.str.len;
    int c = memcmp(x->u.str.s, y->u.str.s, n);
    if (c)
      return c;
    return (x->u.str.len > y->u.str.len) - (x->u.str.len < y->u.str.len);
  }
  case TS_PV_INT:
    return (x->u.i > y->u.i) - (x->u.i < y->u.i);
  case TS_PV_BOOL:
    return (int)x->u.b - (int)y->u.b;
  case TS_PV_FLOAT:
    memcpy(&bx, &x->u.f, 8);
    memcpy(&by, &y->u.f, 8);
    return (bx > by) - (bx < by);
  case TS_PV_COMPLEX:
    memcpy(&bx, &x->u.c.re, 8);
    memcpy(&by, &y->u.c.re, 8);
    if (bx != by)
      return bx < by ? -1 : 1;
    memcpy(&bx, &x->u.c.im, 8);
    memcpy(&by, &y->u.c.im, 8);
    return (bx > by) - (bx < by);
  case TS_PV_DEVICE:
    if (x->u.device.type != y->u.device.type)
      return x->u.device.type < y->u.device.type ? -1 : 1;
    return (x->u.device.index > y->u.device.index) - (x->u.device.index < y->u.device.index);
  default: /* tensors are keys by identity */
    return ((uintptr_t)x > (uintptr_t)y) - ((uintptr_t)x < (uintptr_t)y);
  }
}

static bool ts_pk_dict_unique(ts_pk_vm *vm, const ts_pk_val *dict) {
  uint32_t n = dict->pv.u.dict.n;
  if (n < 2)
    return true;
  const ts_pv **k = malloc((size_t)n * sizeof *k);
  if (!k)
    return ts_pk_fail(vm, "out of memory");
  memcpy(k, dict->pv.u.dict.keys, (size_t)n * sizeof *k);
  qsort(k, n, sizeof *k, ts_pk_key_cmp);
  bool ok = true;
  for (uint32_t i = 1; i < n && ok; i++)
    if (ts_pk_key_cmp(&k[i - 1], &k[i]) == 0) {
      char q[300];
      vm->op = dict->off;
      if (k[i]->kind == TS_PV_STR)
        ts_pk_fail(vm, "duplicate dict key '%s'", ts_pk_quote(q, sizeof q, k[i]->u.str.s, k[i]->u.str.len));
      else if (k[i]->kind == TS_PV_INT)
        ts_pk_fail(vm, "duplicate dict key %lld", (long long)k[i]->u.i);
      else
        ts_pk_fail(vm, "duplicate dict key (%s)", ts_pk_kind_name((const ts_pk_val *)k[i]));
      ok = false;
    }
  free(k);
  return ok;
}

/* The i-th value directly inside `v`, or NULL past the last. */
static ts_pk_val *ts_pk_child(const ts_pk_val *v, uint32_t i) {
  switch (v->pv.kind) {
  case TS_PV_TUPLE:
  case TS_PV_LIST:
    return i < v->pv.u.seq.n ? (ts_pk_val *)v->pv.u.seq.items[i] : NULL;
  case TS_PV_DICT:
    if (i < v->pv.u.dict.n)
      return (ts_pk_val *)v->pv.u.dict.keys[i];
    i -= v->pv.u.dict.n;
    return i < v->pv.u.dict.n ? (ts_pk_val *)v->pv.u.dict.vals[i] : NULL;
  case TS_PV_OBJECT:
    return i == 0 ? (ts_pk_val *)v->pv.u.obj.state : NULL;
  default:
    return NULL;
  }
}

/* Walks the result once (depth first, iteratively): VM-only values, cycles,
 * nesting over max_depth and duplicate dict keys are errors, reported at the
 * offset of the opcode that made the value concerned. */
static bool ts_pk_check(ts_pk_vm *vm, ts_pk_val *root) {
  typedef struct {
    ts_pk_val *v;
    uint32_t next;
  } frame;
  size_t cap = (size_t)vm->lim.max_depth + 1;
  frame *st = malloc(cap * sizeof *st);
  if (!st)
    return ts_pk_fail(vm, "out of memory");
  size_t n = 0;
  bool ok = true;
  ts_pk_val *enter = root;
  while (ok) {
    if (enter) {
      if (enter->pv.kind == TS_PK_GLOBAL || enter->pv.kind == TS_PK_STORAGE) {
        vm->op = enter->off;
        ok = enter->pv.kind == TS_PK_GLOBAL
                 ? ts_pk_fail(vm, "GLOBAL '%s' is left as a value (it was never called)", enter->pv.u.obj.cls)
                 : ts_pk_fail(vm, "a storage is left as a value (it was never made a tensor)");
        break;
      }
      if (n >= vm->lim.max_depth) {
        vm->op = enter->off;
        ok = ts_pk_fail(vm, "values nested deeper than %u (limit)", vm->lim.max_depth);
        break;
      }
      enter->color = 1;
      enter->height = 1;
      st[n].v = enter;
      st[n].next = 0;
      n++;
      enter = NULL;
    }
    if (!n)
      break;
    frame *f = &st[n - 1];
    ts_pk_val *c = ts_pk_child(f->v, f->next);
    if (c) {
      f->next++;
      if (c->color == 1) {
        vm->op = c->off;
        ok = ts_pk_fail(vm, "%s contains itself (a cycle)", ts_pk_kind_name(c));
      } else if (c->color == 2) {
        if (c->height + 1 > f->v->height)
          f->v->height = c->height + 1;
      } else {
        enter = c;
      }
      continue;
    }
    ts_pk_val *done = f->v;
    done->color = 2;
    if (done->pv.kind == TS_PV_DICT && !ts_pk_dict_unique(vm, done)) {
      ok = false;
      break;
    }
    n--;
    if (n && done->height + 1 > st[n - 1].v->height)
      st[n - 1].v->height = done->height + 1;
  }
  free(st);
  return ok;
}

/* ------------------------------------------------------------------ run */

/* Runs opcodes until STOP; the result is the one value left. */
static ts_pk_val *ts_pk_run(ts_pk_vm *vm) {
  for (;;) {
    vm->op = vm->pos;
    if (vm->pos >= vm->len) {
      ts_pk_fail(vm, "unexpected end of data (no STOP)");
      return NULL;
    }
    uint8_t op = vm->p[vm->pos++];
    const uint8_t *b;
    bool ok = true;
    size_t m = 0;
    switch (op) {
    case 0x80: /* PROTO */
      if (!(b = ts_pk_take(vm, 1, op)))
        return NULL;
      if (b[0] > 5)
        ok = ts_pk_fail(vm, "unsupported pickle protocol %u", b[0]);
      break;
    case 0x95: /* FRAME: protocol 4 framing, nothing to do */
      ok = ts_pk_take(vm, 8, op) != NULL;
      break;
    case '.': { /* STOP */
      if (vm->nmarks || vm->sp != 1) {
        ts_pk_fail(vm, "STOP with %zu value%s on the stack and %zu open MARK%s (1 and 0 expected)", vm->sp,
                   vm->sp == 1 ? "" : "s", vm->nmarks, vm->nmarks == 1 ? "" : "s");
        return NULL;
      }
      ts_pk_val *root = vm->stack[0];
      return ts_pk_check(vm, root) ? root : NULL;
    }
    case 'c':
      ok = ts_pk_op_global(vm);
      break;
    case 'Q': { /* BINPERSID */
      if (!ts_pk_need(vm, 1, op))
        return NULL;
      ts_pk_val *pid = ts_pk_pop(vm);
      ok = ts_pk_push(vm, ts_pk_storage(vm, pid));
      break;
    }
    case 'R': { /* REDUCE */
      if (!ts_pk_need(vm, 2, op))
        return NULL;
      ts_pk_val *args = ts_pk_pop(vm), *fn = ts_pk_pop(vm);
      if (fn->pv.kind != TS_PK_GLOBAL)
        ok = ts_pk_fail(vm, "REDUCE needs a GLOBAL to call, found %s", ts_pk_kind_name(fn));
      else
        ok = ts_pk_push(vm, ts_pk_call(vm, fn, args));
      break;
    }
    case 0x81: { /* NEWOBJ */
      if (!ts_pk_need(vm, 2, op))
        return NULL;
      ts_pk_val *args = ts_pk_pop(vm), *cls = ts_pk_pop(vm);
      if (cls->pv.kind != TS_PK_GLOBAL || cls->gid != TS_PKG_CLASS) {
        ok = ts_pk_fail(vm, "NEWOBJ needs a __torch__ class, found %s%s",
                        cls->pv.kind == TS_PK_GLOBAL ? "GLOBAL " : "",
                        cls->pv.kind == TS_PK_GLOBAL ? cls->pv.u.obj.cls : ts_pk_kind_name(cls));
      } else if (args->pv.kind != TS_PV_TUPLE) {
        ok = ts_pk_fail(vm, "NEWOBJ of '%s' takes an empty tuple, found %s", cls->pv.u.obj.cls,
                        ts_pk_kind_name(args));
      } else if (args->pv.u.seq.n != 0) {
        ok = ts_pk_fail(vm, "NEWOBJ of '%s' takes an empty tuple, found %u arguments", cls->pv.u.obj.cls,
                        args->pv.u.seq.n);
      } else {
        ts_pk_val *o = ts_pk_new(vm, TS_PV_OBJECT);
        if (o)
          o->pv.u.obj.cls = cls->pv.u.obj.cls;
        ok = ts_pk_push(vm, o);
      }
      break;
    }
    case 'b': { /* BUILD */
      if (!ts_pk_need(vm, 2, op))
        return NULL;
      ts_pk_val *state = ts_pk_pop(vm), *obj = vm->stack[vm->sp - 1];
      if (obj->pv.kind != TS_PV_OBJECT)
        ok = ts_pk_fail(vm, "BUILD on %s (only __torch__ objects take a state)", ts_pk_kind_name(obj));
      else if (obj->pv.u.obj.state)
        ok = ts_pk_fail(vm, "BUILD on a '%s' object that has its state already", obj->pv.u.obj.cls);
      else
        obj->pv.u.obj.state = &state->pv;
      break;
    }
    case '(': /* MARK */
      if (vm->nmarks >= vm->lim.max_depth) {
        ok = ts_pk_fail(vm, "MARKs nested deeper than %u (limit)", vm->lim.max_depth);
        break;
      }
      if (vm->nmarks == vm->mcap) {
        size_t cap = vm->mcap ? vm->mcap * 2 : 64;
        size_t *mk = realloc(vm->marks, cap * sizeof *mk);
        if (!mk) {
          ok = ts_pk_fail(vm, "out of memory for MARKs");
          break;
        }
        vm->marks = mk;
        vm->mcap = cap;
      }
      vm->marks[vm->nmarks++] = vm->sp;
      break;
    case 't': /* TUPLE */
    case 'l': /* LIST */
      if (!ts_pk_pop_mark(vm, op, &m))
        return NULL;
      {
        ts_pk_val *v = ts_pk_seq(vm, op == 't' ? TS_PV_TUPLE : TS_PV_LIST, vm->stack + m, vm->sp - m);
        vm->sp = m;
        ok = ts_pk_push(vm, v);
      }
      break;
    case ')': /* EMPTY_TUPLE */
    case ']': /* EMPTY_LIST */
      ok = ts_pk_push(vm, ts_pk_seq(vm, op == ')' ? TS_PV_TUPLE : TS_PV_LIST, NULL, 0));
      break;
    case 0x85: /* TUPLE1 */
    case 0x86: /* TUPLE2 */
    case 0x87: { /* TUPLE3 */
      size_t k = (size_t)(op - 0x84);
      if (!ts_pk_need(vm, k, op))
        return NULL;
      ts_pk_val *v = ts_pk_seq(vm, TS_PV_TUPLE, vm->stack + vm->sp - k, k);
      vm->sp -= k;
      ok = ts_pk_push(vm, v);
      break;
    }
    case '}': /* EMPTY_DICT */
      ok = ts_pk_push(vm, ts_pk_dict(vm));
      break;
    case 'd': { /* DICT */
      if (!ts_pk_pop_mark(vm, op, &m))
        return NULL;
      if ((vm->sp - m) % 2)
        return ts_pk_fail(vm, "DICT with an odd number of items (%zu)", vm->sp - m), NULL;
      ts_pk_val *dict = ts_pk_dict(vm);
      ok = dict && ts_pk_dict_add(vm, dict, vm->stack + m, (vm->sp - m) / 2);
      vm->sp = m;
      ok = ok && ts_pk_push(vm, dict);
      break;
    }
    case 'a': { /* APPEND */
      if (!ts_pk_need(vm, 2, op))
        return NULL;
      ts_pk_val *x = ts_pk_pop(vm), *list = vm->stack[vm->sp - 1];
      if (list->pv.kind != TS_PV_LIST)
        ok = ts_pk_fail(vm, "APPEND to %s", ts_pk_kind_name(list));
      else
        ok = ts_pk_list_add(vm, list, &x, 1);
      break;
    }
    case 'e':   /* APPENDS */
    case 'u': { /* SETITEMS */
      if (!ts_pk_pop_mark(vm, op, &m))
        return NULL;
      size_t below = vm->nmarks ? vm->marks[vm->nmarks - 1] : 0;
      if (m <= below)
        return ts_pk_fail(vm, "%s needs a %s below its MARK", ts_pk_opname(op), op == 'e' ? "list" : "dict"), NULL;
      ts_pk_val *c = vm->stack[m - 1];
      size_t k = vm->sp - m;
      if (op == 'e') {
        if (c->pv.kind != TS_PV_LIST)
          ok = ts_pk_fail(vm, "APPENDS to %s", ts_pk_kind_name(c));
        else
          ok = ts_pk_list_add(vm, c, vm->stack + m, k);
      } else if (c->pv.kind != TS_PV_DICT) {
        ok = ts_pk_fail(vm, "SETITEMS on %s", ts_pk_kind_name(c));
      } else if (k % 2) {
        ok = ts_pk_fail(vm, "SETITEMS with an odd number of items (%zu)", k);
      } else {
        ok = ts_pk_dict_add(vm, c, vm->stack + m, k / 2);
      }
      vm->sp = m;
      break;
    }
    case 's': { /* SETITEM */
      if (!ts_pk_need(vm, 3, op))
        return NULL;
      ts_pk_val *c = vm->stack[vm->sp - 3];
      if (c->pv.kind != TS_PV_DICT)
        ok = ts_pk_fail(vm, "SETITEM on %s", ts_pk_kind_name(c));
      else
        ok = ts_pk_dict_add(vm, c, vm->stack + vm->sp - 2, 1);
      vm->sp -= 2;
      break;
    }
    case 'N':
      ok = ts_pk_push(vm, ts_pk_new(vm, TS_PV_NONE));
      break;
    case 0x88: /* NEWTRUE */
    case 0x89: { /* NEWFALSE */
      ts_pk_val *v = ts_pk_new(vm, TS_PV_BOOL);
      if (v)
        v->pv.u.b = op == 0x88;
      ok = ts_pk_push(vm, v);
      break;
    }
    case 'J': /* BININT */
      if (!(b = ts_pk_take(vm, 4, op)))
        return NULL;
      ok = ts_pk_push(vm, ts_pk_int(vm, (int32_t)(uint32_t)ts_pk_le(b, 4)));
      break;
    case 'K': /* BININT1 */
      if (!(b = ts_pk_take(vm, 1, op)))
        return NULL;
      ok = ts_pk_push(vm, ts_pk_int(vm, b[0]));
      break;
    case 'M': /* BININT2 */
      if (!(b = ts_pk_take(vm, 2, op)))
        return NULL;
      ok = ts_pk_push(vm, ts_pk_int(vm, (int64_t)ts_pk_le(b, 2)));
      break;
    case 0x8a: { /* LONG1: little-endian two's complement of n bytes */
      if (!(b = ts_pk_take(vm, 1, op)))
        return NULL;
      unsigned n = b[0];
      if (n > 8)
        return ts_pk_fail(vm, "LONG1 of %u bytes does not fit in 64 bits", n), NULL;
      if (!(b = ts_pk_take(vm, n, op)))
        return NULL;
      uint64_t u = n ? ts_pk_le(b, (int)n) : 0;
      if (n && n < 8 && (b[n - 1] & 0x80))
        u |= ~(uint64_t)0 << (8 * n);
      int64_t i;
      memcpy(&i, &u, sizeof i);
      ok = ts_pk_push(vm, ts_pk_int(vm, i));
      break;
    }
    case 'G': { /* BINFLOAT: big-endian IEEE double */
      if (!(b = ts_pk_take(vm, 8, op)))
        return NULL;
      uint64_t u = 0;
      for (int i = 0; i < 8; i++)
        u = u << 8 | b[i];
      ts_pk_val *v = ts_pk_new(vm, TS_PV_FLOAT);
      if (v)
        memcpy(&v->pv.u.f, &u, sizeof u);
      ok = ts_pk_push(vm, v);
      break;
    }
    case 'X':    /* BINUNICODE */
    case 'B':    /* BINBYTES */
    case 0x8c:   /* SHORT_BINUNICODE */
    case 'C':    /* SHORT_BINBYTES */
    case 0x8d: { /* BINUNICODE8 */
      int lw = op == 0x8c || op == 'C' ? 1 : op == 0x8d ? 8 : 4;
      if (!(b = ts_pk_take(vm, (size_t)lw, op)))
        return NULL;
      uint64_t n = ts_pk_le(b, lw);
      if (n > vm->len - vm->pos)
        return ts_pk_fail(vm, "%s of %llu bytes, %zu left", ts_pk_opname(op), (unsigned long long)n,
                          vm->len - vm->pos),
               NULL;
      b = ts_pk_take(vm, (size_t)n, op);
      ok = ts_pk_push(vm, ts_pk_str(vm, (const char *)b, (size_t)n));
      break;
    }
    case 'q': /* BINPUT */
      if (!(b = ts_pk_take(vm, 1, op)))
        return NULL;
      ok = ts_pk_memo_put(vm, b[0], op);
      break;
    case 'r': /* LONG_BINPUT */
      if (!(b = ts_pk_take(vm, 4, op)))
        return NULL;
      ok = ts_pk_memo_put(vm, ts_pk_le(b, 4), op);
      break;
    case 0x94: /* MEMOIZE */
      ok = ts_pk_memo_put(vm, vm->memo_count, op);
      break;
    case 'h': /* BINGET */
      if (!(b = ts_pk_take(vm, 1, op)))
        return NULL;
      ok = ts_pk_memo_get(vm, b[0]);
      break;
    case 'j': /* LONG_BINGET */
      if (!(b = ts_pk_take(vm, 4, op)))
        return NULL;
      ok = ts_pk_memo_get(vm, ts_pk_le(b, 4));
      break;
    case '0': /* POP: a value, or the MARK when none is above it (as Python) */
      if (ts_pk_frame(vm))
        vm->sp--;
      else if (vm->nmarks)
        vm->nmarks--;
      else
        ok = ts_pk_need(vm, 1, op);
      break;
    case '1': /* POP_MARK */
      if (!ts_pk_pop_mark(vm, op, &m))
        return NULL;
      vm->sp = m;
      break;
    case '2': /* DUP */
      if (!ts_pk_need(vm, 1, op))
        return NULL;
      ok = ts_pk_push(vm, vm->stack[vm->sp - 1]);
      break;
    default:
      ts_pk_fail(vm, "unknown opcode 0x%02x", op);
      return NULL;
    }
    if (!ok || vm->failed)
      return NULL;
  }
}

ts_pv *ts_fe_unpickle(ts_arena *arena, const uint8_t *bytes, size_t len, const char *what, ts_fe_archive *ar,
                      const char *storage_dir, const ts_fe_pickle_limits *lim, ts_diag *d) {
  ts_pk_vm vm = {0};
  vm.arena = arena;
  vm.p = bytes;
  vm.len = bytes ? len : 0;
  vm.what = what ? what : "pickle";
  vm.ar = ar;
  vm.storage_dir = storage_dir;
  vm.d = d;
  if (lim) {
    vm.lim = *lim;
  } else {
    vm.lim.max_depth = 1000;
    vm.lim.max_items = 10000000;
    vm.lim.max_memo = 10000000;
  }
  /* The stack exists from the start: "(t" slices it while it is empty. */
  vm.scap = 256;
  vm.stack = malloc(vm.scap * sizeof *vm.stack);
  if (!vm.stack) {
    ts_pk_fail(&vm, "out of memory for the stack");
    return NULL;
  }
  ts_pk_val *root = ts_pk_run(&vm);
  free(vm.stack);
  free(vm.marks);
  free(vm.memo);
  return root && !vm.failed ? &root->pv : NULL;
}

/* ---------------------------------------------------------------- print */

enum { TS_PK_PRINT_ITEMS = 16, TS_PK_PRINT_STR = 200 };

typedef struct ts_pk_printer {
  ts_buf *b;
  long budget; /* values left to print: shared values print every time */
  int max_depth;
} ts_pk_printer;

static void ts_pk_print(ts_pk_printer *p, const ts_pv *v, int depth);

static void ts_pk_print_items(ts_pk_printer *p, ts_pv *const *items, uint32_t n, int depth) {
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      ts_buf_puts(p->b, ", ");
    if (i == TS_PK_PRINT_ITEMS || p->budget <= 0) {
      ts_buf_puts(p->b, "...");
      return;
    }
    ts_pk_print(p, items[i], depth + 1);
  }
}

static void ts_pk_print_dict(ts_pk_printer *p, const ts_pv *v, int depth, bool attrs) {
  for (uint32_t i = 0; i < v->u.dict.n; i++) {
    if (i)
      ts_buf_puts(p->b, ", ");
    if (i == TS_PK_PRINT_ITEMS || p->budget <= 0) {
      ts_buf_puts(p->b, "...");
      return;
    }
    const ts_pv *k = v->u.dict.keys[i];
    if (attrs && k->kind == TS_PV_STR)
      ts_buf_putn(p->b, k->u.str.s, k->u.str.len < TS_PK_PRINT_STR ? k->u.str.len : TS_PK_PRINT_STR);
    else
      ts_pk_print(p, k, depth + 1);
    ts_buf_puts(p->b, ": ");
    ts_pk_print(p, v->u.dict.vals[i], depth + 1);
  }
}

static void ts_pk_print(ts_pk_printer *p, const ts_pv *v, int depth) {
  ts_buf *b = p->b;
  if (!v) {
    ts_buf_puts(b, "<null>");
    return;
  }
  p->budget--;
  bool deep = depth >= p->max_depth;
  switch (v->kind) {
  case TS_PV_NONE:
    ts_buf_puts(b, "None");
    return;
  case TS_PV_BOOL:
    ts_buf_puts(b, v->u.b ? "True" : "False");
    return;
  case TS_PV_INT:
    ts_buf_printf(b, "%lld", (long long)v->u.i);
    return;
  case TS_PV_FLOAT:
    ts_buf_put_double(b, v->u.f);
    return;
  case TS_PV_COMPLEX:
    ts_buf_puts(b, "complex(");
    ts_buf_put_double(b, v->u.c.re);
    ts_buf_puts(b, ", ");
    ts_buf_put_double(b, v->u.c.im);
    ts_buf_putc(b, ')');
    return;
  case TS_PV_STR:
    ts_buf_put_quoted(b, v->u.str.s, v->u.str.len < TS_PK_PRINT_STR ? v->u.str.len : TS_PK_PRINT_STR);
    if (v->u.str.len > TS_PK_PRINT_STR)
      ts_buf_puts(b, "...");
    return;
  case TS_PV_TUPLE:
    ts_buf_putc(b, '(');
    if (deep && v->u.seq.n)
      ts_buf_puts(b, "...");
    else
      ts_pk_print_items(p, v->u.seq.items, v->u.seq.n, depth);
    ts_buf_puts(b, v->u.seq.n == 1 && !deep ? ",)" : ")");
    return;
  case TS_PV_LIST:
    ts_buf_putc(b, '[');
    if (deep && v->u.seq.n)
      ts_buf_puts(b, "...");
    else
      ts_pk_print_items(p, v->u.seq.items, v->u.seq.n, depth);
    ts_buf_putc(b, ']');
    return;
  case TS_PV_DICT:
    ts_buf_putc(b, '{');
    if (deep && v->u.dict.n)
      ts_buf_puts(b, "...");
    else
      ts_pk_print_dict(p, v, depth, false);
    ts_buf_putc(b, '}');
    return;
  case TS_PV_OBJECT: {
    ts_buf_puts(b, v->u.obj.cls ? v->u.obj.cls : "<object>");
    const ts_pv *s = v->u.obj.state;
    if (s && s->kind == TS_PV_DICT) {
      ts_buf_putc(b, '{');
      if (deep && s->u.dict.n)
        ts_buf_puts(b, "...");
      else
        ts_pk_print_dict(p, s, depth, true);
      ts_buf_putc(b, '}');
    } else if (s) {
      ts_buf_putc(b, '(');
      if (deep)
        ts_buf_puts(b, "...");
      else
        ts_pk_print(p, s, depth + 1);
      ts_buf_putc(b, ')');
    } else {
      ts_buf_puts(b, "{}");
    }
    return;
  }
  case TS_PV_TENSOR: {
    const char *dn = ts_dtype_name((ts_dtype)v->u.tensor.t.dtype);
    ts_buf_printf(b, "Tensor[%s, [", dn ? dn : "?");
    for (int32_t i = 0; i < v->u.tensor.t.rank; i++)
      ts_buf_printf(b, i ? ", %lld" : "%lld", (long long)v->u.tensor.t.sizes[i]);
    ts_buf_putc(b, ']');
    if (v->u.tensor.device.type != TS_DEV_CPU) {
      ts_buf_puts(b, ", ");
      ts_device_print(b, v->u.tensor.device);
    }
    ts_buf_putc(b, ']');
    return;
  }
  case TS_PV_DEVICE:
    ts_buf_puts(b, "device(\"");
    ts_device_print(b, v->u.device);
    ts_buf_puts(b, "\")");
    return;
  }
  ts_buf_puts(b, "<?>");
}

void ts_pv_print(ts_buf *b, const ts_pv *v, int max_depth) {
  ts_pk_printer p = {b, 100000, max_depth < 0 ? 0 : max_depth};
  ts_pk_print(&p, v, 0);
}

const ts_pv *ts_pv_object_attr(const ts_pv *obj, const char *name) {
  if (!obj || !name || obj->kind != TS_PV_OBJECT)
    return NULL;
  const ts_pv *s = obj->u.obj.state;
  if (!s || s->kind != TS_PV_DICT)
    return NULL;
  size_t n = strlen(name);
  for (uint32_t i = 0; i < s->u.dict.n; i++) {
    const ts_pv *k = s->u.dict.keys[i];
    if (k->kind == TS_PV_STR && k->u.str.len == n && memcmp(k->u.str.s, name, n) == 0)
      return s->u.dict.vals[i];
  }
  return NULL;
}
