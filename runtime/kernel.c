/* runtime/kernel.c: the kernel registry. Every kernels file exports one
 * table; ts_rt_kernels_init binds each entry to its schema of the op table
 * once, then every in-place or out= overload without an entry whose
 * out-of-place overload has one (ts_schema_variant) to an adapter
 * (adapt.c), and ts_rt_kernel_for finds a schema's kernel through a hash of
 * the schema's address. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* made from ir/ops.def's pointwise rows at first use (NULL: out of memory) */
extern const ts_rt_kernel_def *ts_rt_kernels_pointwise(void);
extern const ts_rt_kernel_def ts_rt_kernels_reduce[];
extern const ts_rt_kernel_def ts_rt_kernels_nn[];
extern const ts_rt_kernel_def ts_rt_kernels_shape[];
extern const ts_rt_kernel_def ts_rt_kernels_creation[];
extern const ts_rt_kernel_def ts_rt_kernels_scalar[];
extern const ts_rt_kernel_def ts_rt_kernels_list[];
extern const ts_rt_kernel_def ts_rt_kernels_str[];
extern const ts_rt_kernel_def ts_rt_kernels_dict[];
extern const ts_rt_kernel_def ts_rt_kernels_prim[];
extern const ts_rt_kernel_def ts_rt_kernels_rnn[];
extern const ts_rt_kernel_def ts_rt_kernels_packed[];
extern const ts_rt_kernel_def ts_rt_kernels_transformer[];
extern const ts_rt_kernel_def ts_rt_kernels_pool3d[];
extern const ts_rt_kernel_def ts_rt_kernels_upsample[];
extern const ts_rt_kernel_def ts_rt_kernels_index[];
extern const ts_rt_kernel_def ts_rt_kernels_layout[];
extern const ts_rt_kernel_def ts_rt_kernels_scan[];
extern const ts_rt_kernel_def ts_rt_kernels_gridsample[];
extern const ts_rt_kernel_def ts_rt_kernels_nnmisc[];
extern const ts_rt_kernel_def ts_rt_kernels_einsum[];
extern const ts_rt_kernel_def ts_rt_kernels_search[];
extern const ts_rt_kernel_def ts_rt_kernels_vision[];
extern const ts_rt_kernel_def ts_rt_kernels_complex[];
extern const ts_rt_kernel_def ts_rt_kernels_fft[];
extern const ts_rt_kernel_def ts_rt_kernels_random[];
extern const ts_rt_kernel_def ts_rt_kernels_loss[];
extern const ts_rt_kernel_def ts_rt_kernels_unpool[];
extern const ts_rt_kernel_def ts_rt_kernels_blas2[];
extern const ts_rt_kernel_def ts_rt_kernels_stats[];
extern const ts_rt_kernel_def ts_rt_kernels_special[];
extern const ts_rt_kernel_def ts_rt_kernels_linalg[];
extern const ts_rt_kernel_def ts_rt_kernels_histogram[];
extern const ts_rt_kernel_def ts_rt_kernels_views[];
extern const ts_rt_kernel_def ts_rt_kernels_shape2[];

static const ts_rt_kernel_def *ts_k_tables[] = {
    NULL /* pointwise */,   ts_rt_kernels_reduce, ts_rt_kernels_nn,   ts_rt_kernels_shape,
    ts_rt_kernels_creation, ts_rt_kernels_scalar, ts_rt_kernels_list, ts_rt_kernels_str,
    ts_rt_kernels_dict,     ts_rt_kernels_prim,   ts_rt_kernels_rnn,  ts_rt_kernels_transformer,
    ts_rt_kernels_index,    ts_rt_kernels_layout, ts_rt_kernels_scan,
    ts_rt_kernels_pool3d,   ts_rt_kernels_upsample, ts_rt_kernels_gridsample,
    ts_rt_kernels_nnmisc,   ts_rt_kernels_einsum, ts_rt_kernels_search,
    ts_rt_kernels_vision,
    ts_rt_kernels_complex,  ts_rt_kernels_fft,
    ts_rt_kernels_random,
    ts_rt_kernels_loss, ts_rt_kernels_unpool,
    ts_rt_kernels_blas2, ts_rt_kernels_stats,
    ts_rt_kernels_special,
    ts_rt_kernels_linalg, ts_rt_kernels_histogram,
    ts_rt_kernels_views, ts_rt_kernels_shape2,
    ts_rt_kernels_packed,
};
static const ts_rt_kernel_def ts_k_none[] = {{NULL, NULL}};

/* One slot of the schema -> kernel hash (open addressing, linear probing). */
typedef struct ts_k_slot {
  const ts_schema *schema;
  ts_rt_kernel_fn fn;
  const ts_schema *adapted_from; /* an adapter's base; NULL for a table entry */
  bool complex_ok;                /* takes complex tensors (ts_rt_kernel_complex_ok) */
} ts_k_slot;

static pthread_once_t ts_k_once = PTHREAD_ONCE_INIT;
static bool ts_k_ok;
static ts_buf ts_k_errors; /* one message per line, replayed into each caller's diag */
static ts_k_slot *ts_k_slots;
static size_t ts_k_cap; /* a power of two; 0 if nothing is bound */
static const ts_rt_kernel_def **ts_k_all;
static uint32_t ts_k_nall;
static uint32_t ts_k_nadapted;

static size_t ts_k_hash(const ts_schema *s) {
  uintptr_t x = (uintptr_t)s;
  x ^= x >> 17;
  x *= (uintptr_t)0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  return (size_t)x;
}

static ts_k_slot *ts_k_find_slot(const ts_schema *s) {
  if (!ts_k_cap)
    return NULL;
  size_t mask = ts_k_cap - 1;
  for (size_t i = ts_k_hash(s) & mask;; i = (i + 1) & mask)
    if (ts_k_slots[i].schema == s || !ts_k_slots[i].schema)
      return &ts_k_slots[i];
}

/* The schema an entry's name ("aten::add.Tensor") names, or NULL. */
static const ts_schema *ts_k_resolve(const char *name) {
  const char *colons = strstr(name, "::");
  const char *dot = strchr(colons ? colons + 2 : name, '.');
  size_t len = dot ? (size_t)(dot - name) : strlen(name);
  ts_kind k = ts_kind_lookup(name, len);
  if (k == TS_K_OTHER)
    return NULL;
  return ts_op_find_overload(k, dot ? dot + 1 : "");
}

/* Every schema without a kernel that is the in-place or out= form of one
 * with a table entry gets an adapter. */
static void ts_k_bind_adapters(void) {
  for (int k = 0; k < TS_K_COUNT; k++) {
    uint32_t m = 0;
    const ts_schema *const *all = ts_op_schemas((ts_kind)k, &m);
    for (uint32_t i = 0; i < m; i++) {
      ts_k_slot *slot = ts_k_find_slot(all[i]);
      if (slot->schema)
        continue;
      ts_variant v = ts_schema_variant(all[i]);
      if (v.kind == TS_VARIANT_NONE)
        continue;
      ts_k_slot *base = ts_k_find_slot(v.base);
      if (!base->schema || base->adapted_from)
        continue;
      ts_rt_kernel_fn fn = ts_rt_adapt_make(all[i], v, base->fn);
      if (!fn) {
        ts_buf_printf(&ts_k_errors, "more in-place and out= forms to adapt than TS_RT_ADAPT_SLOTS (%d): '%s%s%s' has none\n",
                      TS_RT_ADAPT_SLOTS, all[i]->name, all[i]->overload[0] ? "." : "", all[i]->overload);
        ts_k_ok = false;
        return;
      }
      slot->schema = all[i];
      slot->fn = fn;
      slot->adapted_from = v.base;
      slot->complex_ok = base->complex_ok;
      ts_k_nadapted++;
    }
  }
}

static void ts_k_init_once(void) {
  ts_diag od = {0};
  ts_k_ok = ts_ops_init(&od);
  if (!ts_k_ok)
    ts_buf_printf(&ts_k_errors, "the op table does not parse: %s\n", od.text.data ? od.text.data : "");
  ts_diag_free(&od);
  ts_k_tables[0] = ts_rt_kernels_pointwise();
  if (!ts_k_tables[0]) {
    ts_k_tables[0] = ts_k_none;
    ts_k_ok = false;
    ts_buf_puts(&ts_k_errors, "out of memory making the pointwise kernels\n");
  }
  size_t n = 0;
  for (size_t t = 0; t < sizeof ts_k_tables / sizeof ts_k_tables[0]; t++)
    for (const ts_rt_kernel_def *e = ts_k_tables[t]; e->schema; e++)
      n++;
  /* room for adapters too: at most one per schema of the op table */
  size_t nschemas = 0;
  for (int k = 0; k < TS_K_COUNT; k++) {
    uint32_t m = 0;
    ts_op_schemas((ts_kind)k, &m);
    nschemas += m;
  }
  size_t cap = 16;
  while (cap < 2 * (n + nschemas))
    cap *= 2;
  ts_k_slots = calloc(cap, sizeof *ts_k_slots);
  ts_k_all = calloc(n ? n : 1, sizeof *ts_k_all);
  if (!ts_k_slots || !ts_k_all) {
    free(ts_k_slots);
    free(ts_k_all);
    ts_k_slots = NULL;
    ts_k_all = NULL;
    ts_k_ok = false;
    ts_buf_puts(&ts_k_errors, "out of memory\n");
    return;
  }
  ts_k_cap = cap;
  for (size_t t = 0; t < sizeof ts_k_tables / sizeof ts_k_tables[0]; t++) {
    for (const ts_rt_kernel_def *e = ts_k_tables[t]; e->schema; e++) {
      const ts_schema *s = ts_k_resolve(e->schema);
      if (!s) {
        ts_buf_printf(&ts_k_errors, "kernel for '%s': no such schema in the op table\n", e->schema);
        ts_k_ok = false;
        continue;
      }
      if (!e->fn) {
        ts_buf_printf(&ts_k_errors, "kernel for '%s': no function\n", e->schema);
        ts_k_ok = false;
        continue;
      }
      ts_k_slot *slot = ts_k_find_slot(s);
      if (slot->schema) {
        ts_buf_printf(&ts_k_errors, "two kernels for '%s'\n", e->schema);
        ts_k_ok = false;
        continue;
      }
      slot->schema = s;
      slot->fn = e->fn;
      /* the pointwise table (t 0) hands complex operands to complex.c */
      slot->complex_ok = t == 0 || ts_k_tables[t] == ts_rt_kernels_complex || ts_k_tables[t] == ts_rt_kernels_fft ||
                         ts_k_tables[t] == ts_rt_kernels_prim || ts_k_tables[t] == ts_rt_kernels_list ||
                         ts_k_tables[t] == ts_rt_kernels_dict || ts_k_tables[t] == ts_rt_kernels_str;
      ts_k_all[ts_k_nall++] = e;
    }
  }
  /* kernels of other files that take complex tensors as they are: those
   * that move elements without reading them as numbers, and linalg.c's
   * that call LAPACK's complex routines */
  for (const char *const *g = ts_rt_complex_generic; *g; g++) {
    const ts_schema *sc = ts_k_resolve(*g);
    if (!sc) {
      ts_buf_printf(&ts_k_errors, "complex-capable kernel '%s': no such schema in the op table\n", *g);
      ts_k_ok = false;
      continue;
    }
    ts_k_slot *slot = ts_k_find_slot(sc);
    if (slot && slot->schema)
      slot->complex_ok = true;
  }
  /* complex.c's wrappers in front of other files' kernels */
  for (const ts_rt_cx_alt *a = ts_rt_cx_alts; a->schema; a++) {
    const ts_schema *sc = ts_k_resolve(a->schema);
    ts_k_slot *slot = sc ? ts_k_find_slot(sc) : NULL;
    if (!slot || !slot->schema) {
      ts_buf_printf(&ts_k_errors, "complex form of '%s': no such schema or no kernel for it\n", a->schema);
      ts_k_ok = false;
      continue;
    }
    *a->real = slot->fn;
    slot->fn = a->wrap;
    slot->complex_ok = true;
  }
  ts_k_bind_adapters();
}

bool ts_rt_kernels_init(ts_diag *d) {
  pthread_once(&ts_k_once, ts_k_init_once);
  if (d && ts_k_errors.data) {
    const char *p = ts_k_errors.data;
    while (*p) {
      const char *nl = strchr(p, '\n');
      size_t len = nl ? (size_t)(nl - p) : strlen(p);
      ts_diag_error(d, "%.*s", (int)len, p);
      p += len + (nl ? 1 : 0);
    }
  }
  return ts_k_ok;
}

bool ts_rt_kernel_complex_ok(const ts_schema *s) {
  if (!s)
    return false;
  pthread_once(&ts_k_once, ts_k_init_once);
  ts_k_slot *slot = ts_k_find_slot(s);
  return slot && slot->schema && slot->complex_ok;
}

ts_rt_kernel_fn ts_rt_kernel_for(const ts_schema *s) {
  if (!s)
    return NULL;
  pthread_once(&ts_k_once, ts_k_init_once);
  ts_k_slot *slot = ts_k_find_slot(s);
  return slot && slot->schema ? slot->fn : NULL;
}

const ts_schema *ts_rt_kernel_adapted_from(const ts_schema *s) {
  if (!s)
    return NULL;
  pthread_once(&ts_k_once, ts_k_init_once);
  ts_k_slot *slot = ts_k_find_slot(s);
  return slot && slot->schema ? slot->adapted_from : NULL;
}

uint32_t ts_rt_kernels_adapted(void) {
  pthread_once(&ts_k_once, ts_k_init_once);
  return ts_k_nadapted;
}

ts_rt_kernel_fn ts_rt_kernel_by_name(const char *schema_name) {
  if (!schema_name)
    return NULL;
  pthread_once(&ts_k_once, ts_k_init_once);
  return ts_rt_kernel_for(ts_k_resolve(schema_name));
}

const ts_rt_kernel_def *const *ts_rt_kernels_all(uint32_t *n) {
  pthread_once(&ts_k_once, ts_k_init_once);
  if (n)
    *n = ts_k_nall;
  return ts_k_all;
}
