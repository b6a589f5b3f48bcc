/* frontend/pickle.h: a restricted unpickler for data.pkl and constants.pkl.
 *
 * It reads the protocol-2 opcodes torch.jit.save emits and builds a tree of
 * ts_pv values. Nothing is ever executed: GLOBAL resolves only names on an
 * allow-list, and REDUCE/NEWOBJ/BUILD apply only what those names mean
 * (rebuild a tensor, make an OrderedDict, make a __torch__ object, ...).
 * Every error names the byte offset of the opcode that failed. */
#ifndef TSAOT_FRONTEND_PICKLE_H
#define TSAOT_FRONTEND_PICKLE_H

#include "archive.h"

typedef enum ts_pv_kind {
  TS_PV_NONE,
  TS_PV_BOOL,
  TS_PV_INT,
  TS_PV_FLOAT,
  TS_PV_COMPLEX, /* builtins.complex(re, im) */
  TS_PV_STR,     /* bytes, may hold NUL; always NUL-terminated */
  TS_PV_TUPLE,
  TS_PV_LIST,
  TS_PV_DICT,    /* keys in insertion order (OrderedDict and dict alike) */
  TS_PV_OBJECT,  /* a __torch__ class instance */
  TS_PV_TENSOR,
  TS_PV_DEVICE,  /* torch.device("cuda:0") */
} ts_pv_kind;

typedef struct ts_pv ts_pv;

struct ts_pv {
  ts_pv_kind kind;
  union {
    bool b;
    int64_t i;
    double f;
    struct {
      double re, im;
    } c;
    struct {
      const char *s;
      size_t len;
    } str;
    struct {
      ts_pv **items;
      uint32_t n;
      const char *type_tag; /* "List[int]" from torch.jit._pickle.restore_type_tag, else NULL */
    } seq; /* TUPLE, LIST */
    struct {
      ts_pv **keys, **vals;
      uint32_t n;
      const char *type_tag; /* "Dict[str, int]", else NULL */
    } dict;
    struct {
      const char *cls; /* qualified class name: "__torch__.m.Net" */
      /* What BUILD gave: for ordinary objects a DICT of attribute name ->
       * value, in the order they were written; for classes with
       * __setstate__, whatever __getstate__ returned. NULL if no BUILD. */
      ts_pv *state;
    } obj;
    struct {
      /* dtype (from the storage type), rank, sizes, strides and data (the
       * first element: storage bytes + storage_offset * element size, or
       * NULL when numel is 0). Bounds were checked against the storage. */
      ts_tconst t;
      int64_t storage_offset; /* in elements */
      const char *storage_key;  /* "0": the entry is <storage_dir><key> */
      const uint8_t *storage;   /* the storage's first byte */
      size_t storage_bytes;
      bool requires_grad;
      ts_device device;         /* from the persistent id's location */
    } tensor;
    ts_device device;
  } u;
};

typedef struct ts_fe_pickle_limits {
  uint32_t max_depth;   /* nesting of MARK / containers */
  uint64_t max_items;   /* values created, all kinds together */
  uint32_t max_memo;    /* memo slots */
} ts_fe_pickle_limits;

/* Unpickles `bytes` into values allocated in `arena`. `what` names the
 * pickle in messages ("model.pt: data.pkl: byte 123: unknown opcode 0xfe").
 * Tensor storages are read from the archive entry `storage_dir` + key
 * ("data/0" for data.pkl, "constants/0" for constants.pkl). `lim` NULL:
 * defaults (depth 1000, 10M items, 10M memo slots). NULL and a one-line
 * reason in `d` on error. Tensor data points into the archive's cached
 * bytes: the archive must outlive the values. */
ts_pv *ts_fe_unpickle(ts_arena *arena, const uint8_t *bytes, size_t len, const char *what, ts_fe_archive *ar,
                      const char *storage_dir, const ts_fe_pickle_limits *lim, ts_diag *d);

/* Writes a value for people: 1, 2.5, "s", (a, b), [..], {k: v},
 * __torch__.m.Net{...} (attributes by name), Tensor[Float, [2, 3]]. Deep or
 * long values are shortened with "...". */
void ts_pv_print(ts_buf *b, const ts_pv *v, int max_depth);

/* The attribute `name` of an object whose state is a dict, or NULL. */
const ts_pv *ts_pv_object_attr(const ts_pv *obj, const char *name);

#endif
