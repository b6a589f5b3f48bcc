/* tests/unit/test_pickle.c: the restricted unpickler (frontend/pickle.c).
 *
 * Pickles are hand-written byte strings. In C a hex escape swallows every hex
 * digit after it ("\x01a" is one byte), so each escape that is followed by an
 * opcode or text ends its string literal: "K\x01" "a". Tensors are read over
 * the storages of tests/fixtures/small_mlp/model.pt (data/0: 512 floats,
 * fc1.weight). Then every real fixture must load, and every hostile archive
 * of tests/fixtures/hostile must fail with a one-line reason. */
#include "pickle.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX TSAOT_SOURCE_DIR "/tests/fixtures/"
#define HOSTILE FIX "hostile/"

static ts_arena A;
static ts_diag D;
static ts_fe_archive *MLP; /* small_mlp/model.pt */

static bool one_line(const ts_diag *d) {
  const char *t = d->text.data;
  if (d->errors != 1 || !t)
    return false;
  const char *nl = strchr(t, '\n');
  return strncmp(t, "error: ", 7) == 0 && nl && nl[1] == 0;
}

static const ts_pv *up_n(const char *b, size_t n, ts_fe_archive *ar, const ts_fe_pickle_limits *lim) {
  ts_diag_free(&D);
  const ts_pv *v = ts_fe_unpickle(&A, (const uint8_t *)b, n, "t.pkl", ar, "data/", lim, &D);
  if (v && D.errors)
    fprintf(stderr, "  unexpected message with a result: %s", D.text.data);
  return v;
}

/* Unpickles a string literal (no archive); NULL and the reason on stderr. */
#define UP(lit) up_show(__LINE__, lit, sizeof(lit) - 1, NULL, NULL)
#define UP_AR(lit) up_show(__LINE__, lit, sizeof(lit) - 1, MLP, NULL)
static const ts_pv *up_show(int line, const char *b, size_t n, ts_fe_archive *ar, const ts_fe_pickle_limits *lim) {
  const ts_pv *v = up_n(b, n, ar, lim);
  if (!v)
    fprintf(stderr, "test_pickle.c:%d: unpickle failed: %s", line, D.text.data ? D.text.data : "(no message)\n");
  return v;
}

/* Expects failure at byte `off` with a message containing `why`. */
#define FAILS(lit, off, why) fails(__LINE__, lit, sizeof(lit) - 1, NULL, NULL, off, why)
#define FAILS_AR(lit, off, why) fails(__LINE__, lit, sizeof(lit) - 1, MLP, NULL, off, why)
#define FAILS_LIM(lit, lim, off, why) fails(__LINE__, lit, sizeof(lit) - 1, NULL, lim, off, why)
static bool fails(int line, const char *b, size_t n, ts_fe_archive *ar, const ts_fe_pickle_limits *lim, long off,
                  const char *why) {
  const ts_pv *v = up_n(b, n, ar, lim);
  char at[64];
  snprintf(at, sizeof at, "error: t.pkl: byte %ld: ", off);
  const char *t = D.text.data ? D.text.data : "";
  bool ok = !v && one_line(&D) && strncmp(t, at, strlen(at)) == 0 && strstr(t, why);
  if (!ok)
    fprintf(stderr, "test_pickle.c:%d: expected \"%s...%s\", got: %s%s", line, at, why, v ? "a value " : "",
            *t ? t : "(no message)\n");
  return TS_CHECK(ok);
}

/* Expects failure at the opcode just before the final '.' (a REDUCE or a
 * BINPERSID, mostly). */
#define FAILS_R(lit, why) fails(__LINE__, lit, sizeof(lit) - 1, NULL, NULL, (long)sizeof(lit) - 3, why)
#define FAILS_AR_R(lit, why) fails(__LINE__, lit, sizeof(lit) - 1, MLP, NULL, (long)sizeof(lit) - 3, why)

/* Appends a string literal's bytes (NUL bytes included) to p[n...]. */
#define ADD(p, n, lit) (memcpy((p) + (n), (lit), sizeof(lit) - 1), (n) += sizeof(lit) - 1)

static ts_buf OUT;
static const char *show(const ts_pv *v, int depth) {
  ts_buf_free(&OUT);
  ts_buf_puts(&OUT, "");
  ts_pv_print(&OUT, v, depth);
  return OUT.data;
}

#define SHOWS(lit, text) TS_CHECK_STREQ(show(UP(lit), 8), text)

/* ------------------------------------------------------------- scalars */

static void test_scalars(void) {
  const ts_pv *v;
  v = UP("\x80\x02N.");
  TS_CHECK(v && v->kind == TS_PV_NONE);
  v = UP("\x80\x02\x88.");
  TS_CHECK(v && v->kind == TS_PV_BOOL && v->u.b);
  v = UP("\x80\x02\x89.");
  TS_CHECK(v && v->kind == TS_PV_BOOL && !v->u.b);
  v = UP("\x80\x02K\xff.");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == 255);
  v = UP("\x80\x02M\x01\x02.");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == 0x0201);
  v = UP("\x80\x02M\xff\xff.");
  TS_CHECK(v && v->u.i == 65535);
  v = UP("\x80\x02J\xfe\xff\xff\xff.");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == -2);
  v = UP("\x80\x02J\x00\x00\x00\x80.");
  TS_CHECK(v && v->u.i == INT32_MIN);
  /* LONG1: little-endian two's complement, 0 to 8 bytes */
  v = UP("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80.");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == INT64_MIN);
  v = UP("\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.");
  TS_CHECK(v && v->u.i == INT64_MAX);
  v = UP("\x80\x02\x8a\x01\x80.");
  TS_CHECK(v && v->u.i == -128);
  v = UP("\x80\x02\x8a\x02\x00\x80.");
  TS_CHECK(v && v->u.i == -32768);
  v = UP("\x80\x02\x8a\x03\xff\xff\x7f.");
  TS_CHECK(v && v->u.i == 0x7fffff);
  v = UP("\x80\x02\x8a\x05\x00\x00\x00\x00\x01.");
  TS_CHECK(v && v->u.i == (int64_t)1 << 32);
  v = UP("\x80\x02\x8a\x00.");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == 0);
  /* BINFLOAT is big-endian */
  v = UP("\x80\x02G\x3f\xf8\x00\x00\x00\x00\x00\x00.");
  TS_CHECK(v && v->kind == TS_PV_FLOAT && v->u.f == 1.5);
  v = UP("\x80\x02G\x40\x09\x21\xfb\x54\x44\x2d\x18.");
  TS_CHECK(v && v->u.f == 3.141592653589793);
  v = UP("\x80\x02G\x7f\xf8\x00\x00\x00\x00\x00\x00.");
  TS_CHECK(v && isnan(v->u.f));

  /* strings (bytes alike): NUL-terminated, may hold NUL */
  v = UP("\x80\x02X\x03\x00\x00\x00" "a\x00" "b.");
  TS_CHECK(v && v->kind == TS_PV_STR && v->u.str.len == 3 && memcmp(v->u.str.s, "a\0b", 4) == 0);
  v = UP("\x80\x02X\x00\x00\x00\x00.");
  TS_CHECK(v && v->kind == TS_PV_STR && v->u.str.len == 0 && v->u.str.s && v->u.str.s[0] == 0);
  v = UP("\x80\x02\x8c\x02hi.");
  TS_CHECK(v && v->kind == TS_PV_STR && v->u.str.len == 2 && strcmp(v->u.str.s, "hi") == 0);
  v = UP("\x80\x04\x8d\x02\x00\x00\x00\x00\x00\x00\x00hi.");
  TS_CHECK(v && v->kind == TS_PV_STR && strcmp(v->u.str.s, "hi") == 0);
  v = UP("\x80\x02" "B\x03\x00\x00\x00" "xyz.");
  TS_CHECK(v && v->kind == TS_PV_STR && strcmp(v->u.str.s, "xyz") == 0);
  v = UP("\x80\x02" "C\x01" "z.");
  TS_CHECK(v && v->kind == TS_PV_STR && strcmp(v->u.str.s, "z") == 0);
  /* protocol 4 framing is accepted and ignored; no PROTO at all is fine */
  v = UP("\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00" "K\x07" ".");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == 7);
  v = UP("K\x07" ".");
  TS_CHECK(v && v->u.i == 7);
  v = UP("\x80\x02N.trailing bytes are not read");
  TS_CHECK(v && v->kind == TS_PV_NONE);
}

/* ---------------------------------------------------------- containers */

static void test_containers(void) {
  const ts_pv *v;
  v = UP("\x80\x02).");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 0 && v->u.seq.type_tag == NULL);
  v = UP("\x80\x02K\x01" "\x85.");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 1 && v->u.seq.items[0]->u.i == 1);
  v = UP("\x80\x02K\x01" "K\x02" "\x86.");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 2 && v->u.seq.items[1]->u.i == 2);
  v = UP("\x80\x02K\x01" "K\x02" "K\x03" "\x87.");
  TS_CHECK(v && v->u.seq.n == 3 && v->u.seq.items[2]->u.i == 3);
  v = UP("\x80\x02(K\x01" "K\x02" "K\x03" "K\x04" "t.");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 4 && v->u.seq.items[3]->u.i == 4);
  v = UP("\x80\x02(t.");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 0);

  v = UP("\x80\x02].");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 0);
  v = UP("\x80\x02]K\x01" "a.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 1 && v->u.seq.items[0]->u.i == 1);
  v = UP("\x80\x02](K\x01" "K\x02" "e(K\x03" "e(e.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 3 && v->u.seq.items[2]->u.i == 3);
  v = UP("\x80\x02(K\x01" "K\x02" "l.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 2);
  /* a list grows one APPEND at a time */
  {
    char p[2 + 1 + 300 * 3 + 1];
    size_t n = 0;
    p[n++] = (char)0x80;
    p[n++] = 2;
    p[n++] = ']';
    for (int i = 0; i < 300; i++) {
      p[n++] = 'K';
      p[n++] = (char)(i & 0xff);
      p[n++] = 'a';
    }
    p[n++] = '.';
    v = up_show(__LINE__, p, n, NULL, NULL);
    TS_CHECK(v && v->u.seq.n == 300 && v->u.seq.items[299]->u.i == (299 & 0xff));
  }

  v = UP("\x80\x02}.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 0 && v->u.dict.type_tag == NULL);
  v = UP("\x80\x02}K\x01" "K\x02" "s.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 1 && v->u.dict.keys[0]->u.i == 1 &&
           v->u.dict.vals[0]->u.i == 2);
  /* keys keep the order they were written in */
  v = UP("\x80\x02}(X\x01\x00\x00\x00" "zK\x01" "X\x01\x00\x00\x00" "aK\x02" "uK\x05" "K\x06" "s.");
  TS_CHECK(v && v->u.dict.n == 3 && strcmp(v->u.dict.keys[0]->u.str.s, "z") == 0 &&
           strcmp(v->u.dict.keys[1]->u.str.s, "a") == 0 && v->u.dict.keys[2]->u.i == 5);
  v = UP("\x80\x02(K\x01" "K\x02" "K\x03" "K\x04" "d.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 2 && v->u.dict.vals[1]->u.i == 4);
  /* keys of every kind TorchScript dicts take; equal floats/ints of other
   * kinds are different keys */
  v = UP("\x80\x02}(K\x01" "N\x88" "NG\x3f\xf0\x00\x00\x00\x00\x00\x00" "NX\x01\x00\x00\x00" "1Nu.");
  TS_CHECK(v && v->u.dict.n == 4);

  /* nested, with a shared value (memo) */
  v = UP("\x80\x02](K\x01" "K\x02" "eq\x00" "h\x00" "\x86.");
  TS_CHECK(v && v->kind == TS_PV_TUPLE && v->u.seq.n == 2 && v->u.seq.items[0] == v->u.seq.items[1] &&
           v->u.seq.items[0]->kind == TS_PV_LIST);
}

/* ---------------------------------------------------------- memo, stack */

static void test_memo_stack(void) {
  const ts_pv *v;
  v = UP("\x80\x02K\x07" "q\x03" "0h\x03" ".");
  TS_CHECK(v && v->kind == TS_PV_INT && v->u.i == 7);
  v = UP("\x80\x02K\x07" "r\x00\x01\x00\x00" "0j\x00\x01\x00\x00" ".");
  TS_CHECK(v && v->u.i == 7);
  /* MEMOIZE stores at the number of slots set so far */
  v = UP("\x80\x04K\x05" "\x94K\x06" "\x94" "00h\x01" "h\x00" "\x86.");
  TS_CHECK(v && v->u.seq.n == 2 && v->u.seq.items[0]->u.i == 6 && v->u.seq.items[1]->u.i == 5);
  /* BINPUT over a set slot replaces it */
  v = UP("\x80\x02K\x01" "q\x00" "0K\x02" "q\x00" "0h\x00" ".");
  TS_CHECK(v && v->u.i == 2);
  /* DUP pushes the same value */
  v = UP("\x80\x02]2\x86.");
  TS_CHECK(v && v->u.seq.n == 2 && v->u.seq.items[0] == v->u.seq.items[1]);
  v = UP("\x80\x02K\x01" "K\x02" "0.");
  TS_CHECK(v && v->u.i == 1);
  v = UP("\x80\x02K\x01" "(K\x02" "K\x03" "1.");
  TS_CHECK(v && v->u.i == 1);
  /* POP with nothing above the MARK pops the MARK (as Python does) */
  v = UP("\x80\x02K\x01" "(0.");
  TS_CHECK(v && v->u.i == 1);
}

/* -------------------------------------------------------------- objects */

static void test_objects(void) {
  const ts_pv *v = UP("\x80\x02" "c__torch__.m\nNet\nq\x00" ")\x81}(X\x01\x00\x00\x00" "aK\x01" "X\x03\x00\x00\x00"
                      "subh\x00" ")\x81}b" "ub.");
  if (TS_CHECK(v && v->kind == TS_PV_OBJECT)) {
    TS_CHECK_STREQ(v->u.obj.cls, "__torch__.m.Net");
    const ts_pv *a = ts_pv_object_attr(v, "a");
    TS_CHECK(a && a->kind == TS_PV_INT && a->u.i == 1);
    const ts_pv *sub = ts_pv_object_attr(v, "sub");
    TS_CHECK(sub && sub->kind == TS_PV_OBJECT && strcmp(sub->u.obj.cls, "__torch__.m.Net") == 0);
    TS_CHECK(sub && sub->u.obj.state && sub->u.obj.state->kind == TS_PV_DICT && sub->u.obj.state->u.dict.n == 0);
    TS_CHECK(ts_pv_object_attr(v, "b") == NULL);
    TS_CHECK(ts_pv_object_attr(v, "su") == NULL);
    TS_CHECK(ts_pv_object_attr(v->u.obj.state, "a") == NULL); /* not an object */
    TS_CHECK(ts_pv_object_attr(NULL, "a") == NULL);
    TS_CHECK_STREQ(show(v, 8), "__torch__.m.Net{a: 1, sub: __torch__.m.Net{}}");
  }
  /* the root module is in "__torch__" itself */
  v = UP("\x80\x02" "c__torch__\nPlaceholderModule\n)\x81}(X\x08\x00\x00\x00" "training\x88" "ub.");
  TS_CHECK(v && v->kind == TS_PV_OBJECT && strcmp(v->u.obj.cls, "__torch__.PlaceholderModule") == 0);
  /* an object without BUILD, and one with a __getstate__ state */
  v = UP("\x80\x02" "c__torch__.m\nNet\n)\x81.");
  TS_CHECK(v && v->kind == TS_PV_OBJECT && v->u.obj.state == NULL);
  TS_CHECK(ts_pv_object_attr(v, "a") == NULL);
  v = UP("\x80\x02" "c__torch__.m\nPacked\n)\x81K\x01" "K\x02" "\x86" "b.");
  TS_CHECK(v && v->kind == TS_PV_OBJECT && v->u.obj.state && v->u.obj.state->kind == TS_PV_TUPLE);
  TS_CHECK(ts_pv_object_attr(v, "a") == NULL);
  TS_CHECK_STREQ(show(v, 8), "__torch__.m.Packed((1, 2))");
  /* an enum: REDUCE of the class over its value */
  v = UP("\x80\x02" "c__torch__.m\nColor\nK\x02" "R.");
  TS_CHECK(v && v->kind == TS_PV_OBJECT && strcmp(v->u.obj.cls, "__torch__.m.Color") == 0 && v->u.obj.state &&
           v->u.obj.state->u.i == 2);
  TS_CHECK_STREQ(show(v, 8), "__torch__.m.Color(2)");
}

/* ---------------------------------------------------- the other globals */

static void test_globals(void) {
  const ts_pv *v;
  v = UP("\x80\x02" "ccollections\nOrderedDict\n)R.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 0);
  v = UP("\x80\x02" "ccollections\nOrderedDict\n)R(K\x01" "K\x02" "u.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 1);
  v = UP("\x80\x02" "cbuiltins\ncomplex\nG\x3f\xf8\x00\x00\x00\x00\x00\x00" "K\x02" "\x86R.");
  TS_CHECK(v && v->kind == TS_PV_COMPLEX && v->u.c.re == 1.5 && v->u.c.im == 2.0);
  v = UP("\x80\x02" "ctorch\ndevice\nX\x06\x00\x00\x00" "cuda:1" "\x85R.");
  TS_CHECK(v && v->kind == TS_PV_DEVICE && v->u.device.type == TS_DEV_CUDA && v->u.device.index == 1);
  v = UP("\x80\x02" "ctorch\ndevice\nX\x03\x00\x00\x00" "cpu" "\x85R.");
  TS_CHECK(v && v->kind == TS_PV_DEVICE && v->u.device.type == TS_DEV_CPU && v->u.device.index == -1);

  /* type tags */
  v = UP("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\nq\x00" "](K\x01" "K\x02" "e"
         "X\x09\x00\x00\x00" "List[int]" "\x86R.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 2 && v->u.seq.type_tag &&
           strcmp(v->u.seq.type_tag, "List[int]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n}(X\x01\x00\x00\x00" "aK\x01" "u"
         "X\x0e\x00\x00\x00" "Dict[str, int]" "\x86R.");
  TS_CHECK(v && v->kind == TS_PV_DICT && v->u.dict.n == 1 && v->u.dict.type_tag &&
           strcmp(v->u.dict.type_tag, "Dict[str, int]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n(](K\x01" "K\x02" "etR.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 2 && strcmp(v->u.seq.type_tag, "List[int]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nbuild_doublelist\n(](G\x3f\xf8\x00\x00\x00\x00\x00\x00" "etR.");
  TS_CHECK(v && v->kind == TS_PV_LIST && strcmp(v->u.seq.type_tag, "List[float]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nbuild_floatlist\n(]tR.");
  TS_CHECK(v && v->kind == TS_PV_LIST && strcmp(v->u.seq.type_tag, "List[float]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nbuild_boollist\n(](\x88\x89" "etR.");
  TS_CHECK(v && v->kind == TS_PV_LIST && v->u.seq.n == 2 && strcmp(v->u.seq.type_tag, "List[bool]") == 0);
  v = UP("\x80\x02" "ctorch.jit._pickle\nbuild_tensorlist\n(]tR.");
  TS_CHECK(v && v->kind == TS_PV_LIST && strcmp(v->u.seq.type_tag, "List[Tensor]") == 0);
  /* restore_type_tag's tag wins over the legacy one */
  v = UP("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n" "ctorch.jit._pickle\nbuild_intlist\n(](K\x01"
         "etRX\x09\x00\x00\x00" "List[Any]" "\x86R.");
  TS_CHECK(v && v->kind == TS_PV_LIST && strcmp(v->u.seq.type_tag, "List[Any]") == 0);
}

/* ------------------------------------------------------------- tensors */

/* Persistent ids over small_mlp's storages: data/0 holds 512 floats. */
#define PID(type, key, numel) "(X\x07\x00\x00\x00" "storagectorch\n" type "\n" key "X\x03\x00\x00\x00" "cpu" numel "tQ"
#define KEY0 "X\x01\x00\x00\x00" "0"
#define F512 PID("FloatStorage", KEY0, "M\x00\x02")
#define V2 "ctorch._utils\n_rebuild_tensor_v2\n("
#define HOOKS "ccollections\nOrderedDict\n)R"
/* _rebuild_tensor_v2(F512, offset, sizes, strides, False, OrderedDict()) */
#define T(offset, sizes, strides) "\x80\x02" V2 F512 offset "(" sizes "t(" strides "t\x89" HOOKS "tR."

static const uint8_t *storage0(void) {
  size_t len = 0;
  const uint8_t *p = ts_fe_archive_read(MLP, "data/0", &len, NULL);
  TS_CHECK(p && len == 2048);
  return p;
}

static void test_tensors(void) {
  const uint8_t *s0 = storage0();
  float w10;
  memcpy(&w10, s0 + 4 * 16, 4); /* fc1.weight[1, 0] */
  TS_CHECK(fabsf(w10 - 0.1317422091960907f) < 1e-7f);

  /* fc1.weight as torch wrote it */
  const ts_pv *v = UP_AR(T("K\x00", "K\x20" "K\x10", "K\x10" "K\x01"));
  if (TS_CHECK(v && v->kind == TS_PV_TENSOR)) {
    const ts_tconst *t = &v->u.tensor.t;
    TS_CHECK_INTEQ(t->dtype, TS_DT_FLOAT32);
    TS_CHECK_INTEQ(t->rank, 2);
    TS_CHECK(t->sizes[0] == 32 && t->sizes[1] == 16 && t->strides[0] == 16 && t->strides[1] == 1);
    TS_CHECK(t->data == s0);
    TS_CHECK(t->repr == NULL);
    TS_CHECK_INTEQ(v->u.tensor.storage_offset, 0);
    TS_CHECK_STREQ(v->u.tensor.storage_key, "0");
    TS_CHECK(v->u.tensor.storage == s0 && v->u.tensor.storage_bytes == 2048);
    TS_CHECK(!v->u.tensor.requires_grad);
    TS_CHECK(v->u.tensor.device.type == TS_DEV_CPU);
    TS_CHECK_INTEQ(ts_tconst_numel(t), 512);
    TS_CHECK_STREQ(show(v, 8), "Tensor[Float, [32, 16]]");
  }
  /* a view: offset 5, a transposed 3x2 */
  v = UP_AR(T("K\x05", "K\x03" "K\x02", "K\x01" "K\x03"));
  if (TS_CHECK(v && v->kind == TS_PV_TENSOR)) {
    TS_CHECK(v->u.tensor.t.data == s0 + 20);
    TS_CHECK(v->u.tensor.storage_offset == 5 && v->u.tensor.t.strides[0] == 1 && v->u.tensor.t.strides[1] == 3);
  }
  /* the last element exactly at the end of the storage */
  TS_CHECK(UP_AR(T("K\xfe", "K\x02" "K\x02", "M\x00\x01" "K\x01")) != NULL); /* 254 + 256 + 1 = 511 */
  TS_CHECK(UP_AR(T("M\xff\x01", "K\x01", "K\x01")) != NULL);                  /* offset 511 */
  TS_CHECK(UP_AR(T("K\x00", "M\x00\x02", "K\x01")) != NULL);                  /* all 512 */
  /* expanded (stride 0), size-1 dims with any stride, rank 0, empty */
  v = UP_AR(T("K\x00", "M\xe8\x03" "K\x01", "K\x00" "J\x00\x00\x00\x40"));
  TS_CHECK(v && v->u.tensor.t.sizes[0] == 1000 && v->u.tensor.t.data == s0);
  v = UP_AR(T("K\x03", "", ""));
  TS_CHECK(v && v->u.tensor.t.rank == 0 && v->u.tensor.t.sizes && v->u.tensor.t.data == s0 + 12);
  v = UP_AR(T("M\x10\x27", "K\x00" "K\x05", "K\x05" "K\x01"));
  TS_CHECK(v && v->kind == TS_PV_TENSOR && v->u.tensor.t.data == NULL && v->u.tensor.storage_offset == 10000);
  /* requires_grad, _rebuild_parameter, the old _rebuild_tensor */
  v = UP_AR("\x80\x02" V2 F512 "K\x00" "(K\x02" "t(K\x01" "t\x88" HOOKS "tR.");
  TS_CHECK(v && v->kind == TS_PV_TENSOR && v->u.tensor.requires_grad);
  v = UP_AR("\x80\x02" "ctorch._utils\n_rebuild_parameter\n(" V2 F512 "K\x00" "(K\x02" "t(K\x01" "t\x89" HOOKS
            "tR\x88" HOOKS "tR.");
  TS_CHECK(v && v->kind == TS_PV_TENSOR && v->u.tensor.requires_grad && v->u.tensor.t.sizes[0] == 2);
  v = UP_AR("\x80\x02" "ctorch._utils\n_rebuild_tensor\n(" F512 "K\x04" "(K\x02" "t(K\x01" "ttR.");
  TS_CHECK(v && v->kind == TS_PV_TENSOR && !v->u.tensor.requires_grad && v->u.tensor.t.data == s0 + 16);
  /* 7 arguments: math bits, all clear */
  v = UP_AR("\x80\x02" V2 F512 "K\x00" "(K\x02" "t(K\x01" "t\x89" HOOKS "}(X\x04\x00\x00\x00" "conj\x89" "u"
            "tR.");
  TS_CHECK(v && v->kind == TS_PV_TENSOR);
  /* one storage shared by two tensors through the memo, as torch writes it */
  v = UP_AR("\x80\x02" V2 F512 "q\x01" "K\x00" "(K\x02" "t(K\x01" "t\x89" HOOKS "tR" V2 "h\x01" "K\x02"
            "(K\x02" "t(K\x01" "t\x89" HOOKS "tR\x86.");
  TS_CHECK(v && v->u.seq.n == 2 && v->u.seq.items[1]->u.tensor.t.data == s0 + 8);
  /* other dtypes: element size and numbering; an empty storage needs no entry */
  v = UP_AR("\x80\x02" V2 PID("LongStorage", KEY0, "M\x00\x01") "K\x03" "(K\x02" "t(K\x01" "t\x89" HOOKS "tR.");
  TS_CHECK(v && v->u.tensor.t.dtype == TS_DT_INT64 && v->u.tensor.t.data == s0 + 24 &&
           v->u.tensor.storage_bytes == 2048);
  static const struct {
    const char *type;
    ts_dtype dt;
  } types[] = {{"FloatStorage", TS_DT_FLOAT32},   {"DoubleStorage", TS_DT_FLOAT64},
               {"HalfStorage", TS_DT_FLOAT16},    {"BFloat16Storage", TS_DT_BFLOAT16},
               {"LongStorage", TS_DT_INT64},      {"IntStorage", TS_DT_INT32},
               {"ShortStorage", TS_DT_INT16},     {"CharStorage", TS_DT_INT8},
               {"ByteStorage", TS_DT_UINT8},      {"BoolStorage", TS_DT_BOOL},
               {"ComplexFloatStorage", TS_DT_COMPLEX64}, {"ComplexDoubleStorage", TS_DT_COMPLEX128},
               {"ComplexHalfStorage", TS_DT_COMPLEX32}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    /* numel 0: no entry is read, so no archive is needed */
    char p[512];
    size_t n = 0;
    ADD(p, n, "\x80\x02" V2 "(X\x07\x00\x00\x00" "storagectorch\n");
    memcpy(p + n, types[i].type, strlen(types[i].type));
    n += strlen(types[i].type);
    ADD(p, n, "\nX\x04\x00\x00\x00" "noneX\x03\x00\x00\x00" "cpuK\x00" "tQK\x00" "(K\x00" "t(K\x01" "t\x89" HOOKS "tR.");
    v = up_show(__LINE__, p, n, NULL, NULL);
    TS_CHECK(v && v->kind == TS_PV_TENSOR && v->u.tensor.t.dtype == types[i].dt && v->u.tensor.t.data == NULL &&
             v->u.tensor.storage == NULL);
  }
  /* the location is the tensor's device */
  v = UP_AR("\x80\x02" V2 "(X\x07\x00\x00\x00" "storagectorch\nFloatStorage\n" KEY0 "X\x06\x00\x00\x00" "cuda:1"
            "K\x02" "tQK\x00" "(K\x02" "t(K\x01" "t\x89" HOOKS "tR.");
  TS_CHECK(v && v->u.tensor.device.type == TS_DEV_CUDA && v->u.tensor.device.index == 1);
  TS_CHECK_STREQ(show(v, 8), "Tensor[Float, [2], cuda:1]");
}

static void test_tensor_errors(void) {
  /* bounds: one element past the storage, in every way */
  FAILS_AR_R(T("K\x00", "M\x01\x02", "K\x01"), "the tensor's last element (index 512) lies outside its storage");
  FAILS_AR_R(T("M\x00\x02", "K\x01", "K\x01"), "(index 512) lies outside its storage '0' of 512 elements");
  FAILS_AR_R(T("K\x00", "K\x02" "K\x02", "M\xff\x01" "K\x01"), "(index 512)");
  FAILS_AR_R(T("K\x01", "K\x02" "M\x00\x01", "M\x00\x01" "K\x01"), "(index 512)");
  /* negative, overflowing and malformed views */
  FAILS_AR_R(T("K\x00", "K\x04", "J\xff\xff\xff\xff"), "negative stride -1 in dimension 0");
  FAILS_AR_R(T("K\x00", "K\x01" "J\xfe\xff\xff\xff", "K\x01" "K\x01"), "negative size -2 in dimension 1");
  FAILS_AR_R(T("J\xff\xff\xff\xff", "K\x01", "K\x01"), "storage offset must be an int >= 0");
  FAILS_AR_R(T("K\x00", "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40" "K\x04", "K\x00" "K\x00"),
             "a tensor's sizes overflow int64 (dimension 1)");
  FAILS_AR_R(T("K\x01", "K\x02", "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f"), "extent overflows int64");
  FAILS_AR_R(T("K\x00", "K\x02", "K\x01" "K\x01"), "a tensor with 1 sizes and 2 strides");
  FAILS_AR_R(T("K\x00", "N", "K\x01"), "a tensor's sizes must hold ints, found None");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "N(K\x01" "t\x89" HOOKS "tR.", "a tensor's sizes must be a tuple, found None");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(K\x01" "tN\x89" HOOKS "tR.", "a tensor's strides must be a tuple");
  {
    char p[1024];
    size_t n = 0;
    ADD(p, n, "\x80\x02" V2 F512 "K\x00" "(");
    for (int i = 0; i < 65; i++)
      ADD(p, n, "K\x01");
    ADD(p, n, "t(t\x89" HOOKS "tR.");
    TS_CHECK(fails(__LINE__, p, n, MLP, NULL, (long)n - 2, "a tensor of rank 65 (limit 64)"));
  }
  /* the arguments */
  FAILS_AR_R("\x80\x02" V2 "K\x00" "K\x00" "(t(t\x89" HOOKS "tR.",
             "a tensor's first argument must be a storage (from BINPERSID), found an int");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(tK\x01" HOOKS "tR.", "requires_grad must be a bool, found an int");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(t\x89" "K\x01" "tR.", "backward hooks must be an OrderedDict, found an int");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(t\x89" "tR.", "_rebuild_tensor_v2 takes 6 or 7 arguments, found 5");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(t\x89" HOOKS "}(X\x03\x00\x00\x00" "neg\x88" "utR.",
             "tensors with the 'neg' bit set are not supported");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(t\x89" HOOKS "NtR.", "metadata must be a dict");
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(t(t\x89" HOOKS "}(K\x01" "\x88" "utR.", "metadata must map str to bool");
  FAILS_R("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\nNR.", "REDUCE of 'torch._utils._rebuild_tensor_v2' needs a tuple");
  FAILS_R("\x80\x02" "ctorch._utils\n_rebuild_parameter\n(NNNtR.", "_rebuild_parameter takes (Tensor, bool, hooks)");
  FAILS_R("\x80\x02" "ctorch._utils\n_rebuild_parameter\n(NNtR.", "'torch._utils._rebuild_parameter' takes 3 arguments");
  FAILS_R("\x80\x02" "ctorch._utils\n_rebuild_tensor\n(NNNNNtR.", "_rebuild_tensor takes 4 arguments, found 5");

  /* persistent ids */
  FAILS_R("\x80\x02K\x01" "Q.", "a persistent id must be a 5-tuple");
  FAILS_R("\x80\x02(NNNNNtQ.", "unknown persistent id None");
  FAILS_R("\x80\x02(X\x03\x00\x00\x00" "fooNNNNtQ.", "unknown persistent id 'foo'");
  FAILS_R("\x80\x02(X\x07\x00\x00\x00" "storageNNNNtQ.",
          "storage type must be a GLOBAL like 'torch FloatStorage', found None");
  FAILS_R("\x80\x02(X\x07\x00\x00\x00" "storage" "ccollections\nOrderedDict\nNNNtQ.",
          "found GLOBAL collections.OrderedDict");
  FAILS_R("\x80\x02" PID("FloatStorage", "X\x00\x00\x00\x00", "K\x01") ".", "key must be a non-empty string");
  FAILS_R("\x80\x02" PID("FloatStorage", "X\x02\x00\x00\x00" "a\x00", "K\x01") ".", "without NUL bytes");
  FAILS_R("\x80\x02" PID("FloatStorage", "N", "K\x01") ".", "key must be");
  FAILS_R("\x80\x02(X\x07\x00\x00\x00" "storagectorch\nFloatStorage\n" KEY0 "K\x00" "K\x01" "tQ.",
          "location must be a string, found an int");
  FAILS_R("\x80\x02(X\x07\x00\x00\x00" "storagectorch\nFloatStorage\n" KEY0 "X\x03\x00\x00\x00" "gpuK\x01" "tQ.",
          "unknown device 'gpu' for storage '0'");
  FAILS_R("\x80\x02" PID("FloatStorage", KEY0, "J\xff\xff\xff\xff") ".", "element count must be an int >= 0");
  FAILS_R("\x80\x02" PID("FloatStorage", KEY0, "N") ".", "element count must be an int");
  FAILS_R("\x80\x02" PID("FloatStorage", KEY0, "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40") ".",
          "storage '0' of 4611686018427387904 Float elements overflows");
  FAILS_R("\x80\x02" PID("FloatStorage", KEY0, "K\x01") ".", "storage '0': no archive to read it from");
  FAILS_AR_R("\x80\x02" PID("FloatStorage", "X\x01\x00\x00\x00" "9", "K\x01") ".",
             "storage 'data/9': no entry 'archive/data/9'");
  FAILS_AR_R("\x80\x02" PID("FloatStorage", KEY0, "M\x01\x02") ".",
             "storage 'data/0' holds 2048 bytes, 2052 expected (513 Float elements)");
  FAILS_AR_R("\x80\x02" PID("DoubleStorage", KEY0, "M\x01\x01") ".", "holds 2048 bytes, 2056 expected");
  /* a storage that never became a tensor: reported where BINPERSID made it */
  FAILS_AR_R("\x80\x02" F512 ".", "a storage is left as a value");
  FAILS_AR("\x80\x02" F512 "\x85.", 53, "a storage is left as a value");
  /* BUILD only sets an object's state */
  FAILS_AR_R("\x80\x02" V2 F512 "K\x00" "(K\x01" "t(K\x01" "t\x89" HOOKS "tR}b.",
             "BUILD on a Tensor (only __torch__ objects take a state)");
}

/* -------------------------------------------------------------- errors */

static void test_errors(void) {
  /* the stream */
  FAILS("", 0, "unexpected end of data (no STOP)");
  FAILS("\x80\x02N", 3, "unexpected end of data (no STOP)");
  FAILS("\x80\x02\xfe.", 2, "unknown opcode 0xfe");
  FAILS("\x80\x02N\x00.", 3, "unknown opcode 0x00");
  FAILS("\x80\x02" "S'a'\n.", 2, "unknown opcode 0x53"); /* text STRING: not protocol 2 */
  FAILS("\x80\x06N.", 0, "unsupported pickle protocol 6");
  FAILS("\x80", 0, "truncated PROTO argument: 1 bytes needed, 0 left");
  FAILS("\x80\x02J\x01\x00", 2, "truncated BININT argument: 4 bytes needed, 2 left");
  FAILS("\x80\x02K", 2, "truncated BININT1 argument");
  FAILS("\x80\x02M\x01", 2, "truncated BININT2 argument");
  FAILS("\x80\x02G\x00\x00", 2, "truncated BINFLOAT argument: 8 bytes needed, 2 left");
  FAILS("\x80\x02\x8a", 2, "truncated LONG1 argument");
  FAILS("\x80\x02\x8a\x04\x01\x02", 2, "truncated LONG1 argument: 4 bytes needed, 2 left");
  FAILS("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00.", 2, "LONG1 of 9 bytes does not fit in 64 bits");
  FAILS("\x80\x02X\x05\x00\x00\x00" "ab.", 2, "BINUNICODE of 5 bytes, 3 left");
  FAILS("\x80\x02X\x05\x00", 2, "truncated BINUNICODE argument");
  FAILS("\x80\x02\x8c\x09" "ab", 2, "SHORT_BINUNICODE of 9 bytes, 2 left");
  FAILS("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff" "ab", 2, "BINUNICODE8 of 18446744073709551615 bytes, 2 left");
  FAILS("\x80\x02" "B\xff\xff\xff\xff" "ab", 2, "BINBYTES of 4294967295 bytes");
  FAILS("\x80\x02" "C\x03", 2, "SHORT_BINBYTES of 3 bytes, 0 left");
  FAILS("\x80\x02q", 2, "truncated BINPUT argument");
  FAILS("\x80\x02Nr\x00\x00", 3, "truncated LONG_BINPUT argument");
  FAILS("\x80\x02h", 2, "truncated BINGET argument");
  FAILS("\x80\x02j\x00", 2, "truncated LONG_BINGET argument");
  FAILS("\x80\x04\x95\x01\x00", 2, "truncated FRAME argument");
  FAILS("\x80\x02NN.", 4, "STOP with 2 values on the stack and 0 open MARKs (1 and 0 expected)");
  FAILS("\x80\x02.", 2, "STOP with 0 values");
  FAILS("\x80\x02N(.", 4, "STOP with 1 value on the stack and 1 open MARK");

  /* the stack and its MARKs */
  FAILS("\x80\x02t.", 2, "TUPLE without a MARK");
  FAILS("\x80\x02l.", 2, "LIST without a MARK");
  FAILS("\x80\x02" "d.", 2, "DICT without a MARK");
  FAILS("\x80\x02]" "e.", 3, "APPENDS without a MARK");
  FAILS("\x80\x02}u.", 3, "SETITEMS without a MARK");
  FAILS("\x80\x02" "1.", 2, "POP_MARK without a MARK");
  FAILS("\x80\x02\x85.", 2, "stack underflow: TUPLE1 needs 1 value, 0 above the bottom");
  FAILS("\x80\x02N\x86.", 3, "stack underflow: TUPLE2 needs 2 values, 1 above the bottom");
  FAILS("\x80\x02NN\x87.", 4, "TUPLE3 needs 3 values");
  FAILS("\x80\x02N(\x85.", 4, "stack underflow: TUPLE1 needs 1 value, 0 above the last MARK");
  FAILS("\x80\x02" "0.", 2, "stack underflow: POP needs 1 value");
  FAILS("\x80\x02" "2.", 2, "stack underflow: DUP needs 1 value");
  FAILS("\x80\x02R.", 2, "REDUCE needs 2 values");
  FAILS("\x80\x02N\x81.", 3, "NEWOBJ needs 2 values");
  FAILS("\x80\x02N" "b.", 3, "BUILD needs 2 values");
  FAILS("\x80\x02" "a.", 2, "APPEND needs 2 values");
  FAILS("\x80\x02}N" "s.", 4, "SETITEM needs 3 values");
  FAILS("\x80\x02Q.", 2, "BINPERSID needs 1 value");
  FAILS("\x80\x02q\x00.", 2, "BINPUT needs 1 value");
  FAILS("\x80\x02(\x94.", 3, "MEMOIZE needs 1 value");

  /* containers */
  FAILS("\x80\x02NK\x01" "a.", 5, "APPEND to None");
  FAILS("\x80\x02(K\x01" "e.", 5, "APPENDS needs a list below its MARK");
  FAILS("\x80\x02N(K\x01" "e.", 6, "APPENDS to None");
  FAILS("\x80\x02}(K\x01" "u.", 6, "SETITEMS with an odd number of items (1)");
  FAILS("\x80\x02(K\x01" "d.", 5, "DICT with an odd number of items (1)");
  FAILS("\x80\x02N(K\x01" "K\x02" "u.", 8, "SETITEMS on None");
  FAILS("\x80\x02(K\x01" "K\x02" "u.", 7, "SETITEMS needs a dict below its MARK");
  FAILS("\x80\x02NK\x01" "K\x02" "s.", 7, "SETITEM on None");
  FAILS("\x80\x02}]K\x01" "s.", 6, "a list cannot be a dict key");
  FAILS("\x80\x02(NK\x01" "d.", 6, "None cannot be a dict key");
  FAILS("\x80\x02}(K\x01" "K\x02" "K\x01" "K\x03" "u.", 2, "duplicate dict key 1");
  FAILS("\x80\x02}(X\x01\x00\x00\x00" "aK\x01" "X\x01\x00\x00\x00" "bK\x01" "X\x01\x00\x00\x00" "aK\x02" "u.", 2,
        "duplicate dict key 'a'");
  FAILS("\x80\x02(\x88K\x01" "\x88K\x02" "d.", 9, "duplicate dict key (a bool)");
  /* cycles: a list in itself, a dict holding itself through a tuple */
  FAILS("\x80\x02]q\x00" "h\x00" "a.", 2, "a list contains itself (a cycle)");
  FAILS("\x80\x02}q\x00" "K\x01" "h\x00" "\x85s.", 2, "a dict contains itself (a cycle)");
  FAILS("\x80\x02" "c__torch__.m\nA\n)\x81q\x00" "h\x00" "b.", 18, "an object contains itself");

  /* the memo */
  FAILS("\x80\x02h\x00.", 2, "memo slot 0 is not set");
  FAILS("\x80\x02Nq\x00" "h\x05.", 5, "memo slot 5 is not set");
  FAILS("\x80\x02Nq\x05" "h\x04.", 5, "memo slot 4 is not set");
  FAILS("\x80\x02j\xff\xff\xff\xff.", 2, "memo slot 4294967295 is not set");
  FAILS("\x80\x02Nr\x80\x96\x98\x00.", 3, "memo index 10000000 over the limit of 10000000");

  /* GLOBAL */
  FAILS("\x80\x02" "cos\nsystem\n(X\x02\x00\x00\x00" "lstR.", 2, "GLOBAL 'os system' is not allowed");
  FAILS("\x80\x02" "cbuiltins\neval\n.", 2, "GLOBAL 'builtins eval' is not allowed");
  FAILS("\x80\x02" "cposix\nsystem\n.", 2, "GLOBAL 'posix system' is not allowed");
  FAILS("\x80\x02" "ctorch\nload\n.", 2, "GLOBAL 'torch load' is not allowed");
  FAILS("\x80\x02" "ctorch\nTensor\n.", 2, "GLOBAL 'torch Tensor' is not allowed");
  FAILS("\x80\x02" "ctorch\nUntypedStorage\n.", 2, "GLOBAL 'torch UntypedStorage' is not allowed");
  FAILS("\x80\x02" "ctorch.storage\nTypedStorage\n.", 2, "GLOBAL 'torch.storage TypedStorage' is not allowed");
  FAILS("\x80\x02" "c__main__\nTensorID\n.", 2, "GLOBAL '__main__ TensorID' is not allowed");
  FAILS("\x80\x02" "c__torch__x\nA\n.", 2, "GLOBAL '__torch__x A' is not allowed");
  FAILS("\x80\x02" "ccollections\ndefaultdict\n.", 2, "GLOBAL 'collections defaultdict' is not allowed");
  FAILS("\x80\x02" "cbuiltins\nset\n.", 2, "GLOBAL 'builtins set' is not allowed");
  FAILS("\x80\x02" "ctorch.jit._pickle\nbuild_whatever\n.", 2, "GLOBAL 'torch.jit._pickle build_whatever' is not allowed");
  FAILS("\x80\x02" "ctorch._utils\n_rebuild_qtensor\n.", 2,
        "quantized tensors are not supported (GLOBAL 'torch._utils _rebuild_qtensor')");
  FAILS("\x80\x02" "ctorch\nQInt8Storage\n.", 2, "quantized tensors are not supported");
  FAILS("\x80\x02" "ctorch\nper_tensor_affine\n.", 2, "quantized tensors are not supported");
  FAILS("\x80\x02" "ctorch._utils\n_rebuild_sparse_tensor\n.", 2, "sparse tensors are not supported");
  FAILS("\x80\x02" "ctorch._tensor\n_rebuild_from_type_v2\n.", 2, "tensor subclasses are not supported");
  FAILS("\x80\x02" "ctorch.jit._pickle\nbuild_tensor_from_id\n.", 2, "tensor tables (build_tensor_from_id)");
  FAILS("\x80\x02" "ctorch.distributed.rpc\nrref\n.", 2, "RRef values are not supported");
  FAILS("\x80\x02" "cos system\nx\n.", 2, "GLOBAL 'os system x' is not a valid name");
  FAILS("\x80\x02" "c__torch__..m\nA\n.", 2, "is not a valid name");
  FAILS("\x80\x02" "c__torch__.\nA\n.", 2, "is not a valid name");
  FAILS("\x80\x02" "c__torch__\nA.B\n.", 2, "is not a valid name");
  FAILS("\x80\x02" "c\nA\n.", 2, "GLOBAL ' A' is not a valid name");
  FAILS("\x80\x02" "cos\x01\nsystem\n.", 2, "GLOBAL 'os\\x01 system' is not a valid name");
  FAILS("\x80\x02" "cos\nsys", 2, "truncated GLOBAL argument: no newline");
  FAILS("\x80\x02" "cos", 2, "truncated GLOBAL argument: no newline");
  {
    char p[1200];
    size_t n = 0;
    p[n++] = (char)0x80;
    p[n++] = 2;
    p[n++] = 'c';
    for (int i = 0; i < 1100; i++)
      p[n++] = 'x';
    p[n++] = '\n';
    TS_CHECK(fails(__LINE__, p, n, NULL, NULL, 2, "GLOBAL name over 1024 bytes"));
  }
  FAILS("\x80\x02" "ctorch\ndevice\n.", 2, "GLOBAL 'torch.device' is left as a value (it was never called)");
  FAILS("\x80\x02" "ctorch\ndevice\n\x85.", 2, "GLOBAL 'torch.device' is left as a value");

  /* what the globals take */
  FAILS_R("\x80\x02N)R.", "REDUCE needs a GLOBAL to call, found None");
  FAILS_R("\x80\x02" "ccollections\nOrderedDict\nN\x85R.", "'collections.OrderedDict' takes 0 arguments, found 1");
  FAILS_R("\x80\x02" "ccollections\nOrderedDict\nNR.",
          "REDUCE of 'collections.OrderedDict' needs a tuple of arguments, found None");
  FAILS_R("\x80\x02" "ccollections\nOrderedDict\n)\x81.",
          "NEWOBJ needs a __torch__ class, found GLOBAL collections.OrderedDict");
  FAILS_R("\x80\x02N)\x81.", "NEWOBJ needs a __torch__ class, found None");
  FAILS_R("\x80\x02" "ctorch\nFloatStorage\n)R.", "'torch.FloatStorage' cannot be called");
  FAILS_R("\x80\x02" "cbuiltins\ncomplex\nX\x01\x00\x00\x00" "aK\x01" "\x86R.", "complex() takes two numbers, found a str");
  FAILS_R("\x80\x02" "cbuiltins\ncomplex\nK\x01" "\x85R.", "'builtins.complex' takes 2 arguments, found 1");
  FAILS_R("\x80\x02" "ctorch\ndevice\nX\x03\x00\x00\x00" "gpu\x85R.", "unknown device 'gpu'");
  FAILS_R("\x80\x02" "ctorch\ndevice\nX\x04\x00\x00\x00" "cpu\n\x85R.", "unknown device 'cpu\\x0a'");
  FAILS_R("\x80\x02" "ctorch\ndevice\nK\x01" "\x85R.", "torch.device needs a string, found an int");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n)X\x03\x00\x00\x00" "Foo\x86R.",
          "restore_type_tag 'Foo' on a tuple (only lists and dicts take a type tag)");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n]K\x01" "\x86R.", "type string without NUL bytes");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n]X\x02\x00\x00\x00" "a\x00" "\x86R.", "without NUL bytes");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n(](G\x3f\xf8\x00\x00\x00\x00\x00\x00" "etR.",
          "'torch.jit._pickle.build_intlist': item 0 is a float");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n(NtR.",
          "'torch.jit._pickle.build_intlist' needs a list, found None");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nbuild_tensorlist\n(](K\x01" "etR.", "item 0 is an int");
  FAILS_R("\x80\x02" "ctorch.jit._pickle\nbuild_intlist\n(]]tR.", "'torch.jit._pickle.build_intlist' takes 1 argument, found 2");

  /* BUILD */
  FAILS("\x80\x02N}b.", 4, "BUILD on None (only __torch__ objects take a state)");
  FAILS("\x80\x02" "c__torch__\nA\n)\x81}b}b.", 20, "BUILD on a '__torch__.A' object that has its state already");
  FAILS("\x80\x02" "c__torch__\nA\nK\x01" "R}b.", 19, "has its state already");
}

/* ------------------------------------------------------------- limits */

static void test_limits(void) {
  ts_fe_pickle_limits lim = {.max_depth = 2, .max_items = 100, .max_memo = 10};
  FAILS_LIM("\x80\x02(((.", &lim, 4, "MARKs nested deeper than 2 (limit)");
  TS_CHECK(up_n("\x80\x02((tt.", 7, NULL, &lim) != NULL);
  /* values nested: reported at the value that goes too deep */
  FAILS_LIM("\x80\x02N\x85\x85.", &lim, 2, "values nested deeper than 2 (limit)");
  TS_CHECK(up_n("\x80\x02N\x85.", 5, NULL, &lim) != NULL);
  /* an object's state is one level down */
  lim.max_depth = 1;
  FAILS_LIM("\x80\x02" "c__torch__\nA\n)\x81}b.", &lim, 17, "values nested deeper than 1");
  lim.max_depth = 2;
  TS_CHECK(up_n("\x80\x02" "c__torch__\nA\n)\x81}b.", 20, NULL, &lim) != NULL);
  /* a shared value is measured along every path, and visited once */
  lim.max_depth = 3;
  TS_CHECK(up_n("\x80\x02]q\x00" "h\x00" "\x86.", 9, NULL, &lim) != NULL);
  FAILS_LIM("\x80\x02]q\x00" "h\x00" "\x86\x85\x85.", &lim, 2, "values nested deeper than 3");

  lim.max_items = 3;
  FAILS_LIM("\x80\x02NNNN", &lim, 5, "more than 3 values (limit)");
  FAILS_LIM("\x80\x02Nq\x00" "h\x00" "h\x00" "h\x00" ".", &lim, 9, "more than 3 values");

  lim.max_items = 100;
  FAILS_LIM("\x80\x02Nr\x0a\x00\x00\x00.", &lim, 3, "memo index 10 over the limit of 10");
  TS_CHECK(up_n("\x80\x02Nr\x09\x00\x00\x00.", 9, NULL, &lim) != NULL);

  /* the default depth: 1000 */
  {
    size_t n = 2 + 1001 + 1;
    char *p = malloc(n + 1);
    p[0] = (char)0x80;
    p[1] = 2;
    p[2] = 'N';
    memset(p + 3, 0x85, 999);
    p[1002] = '.';
    TS_CHECK(up_n(p, 1003, NULL, NULL) != NULL);
    p[1002] = (char)0x85;
    p[1003] = '.';
    TS_CHECK(fails(__LINE__, p, 1004, NULL, NULL, 2, "values nested deeper than 1000"));
    free(p);
  }

  /* the arena's limit */
  ts_arena small;
  ts_arena_init(&small, 4096);
  ts_diag d = {0};
  char p[4096];
  size_t n = 0;
  p[n++] = (char)0x80;
  p[n++] = 2;
  p[n++] = ']';
  for (int i = 0; i < 1000; i++) {
    p[n++] = 'N';
    p[n++] = 'a';
  }
  p[n++] = '.';
  TS_CHECK(ts_fe_unpickle(&small, (const uint8_t *)p, n, "t.pkl", NULL, NULL, NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && strstr(d.text.data, "out of memory (arena limit)"));
  ts_diag_free(&d);
  ts_arena_release(&small);

  /* NULL sink and NULL `what` */
  TS_CHECK(ts_fe_unpickle(&A, (const uint8_t *)"\xfe", 1, NULL, NULL, NULL, NULL, NULL) == NULL);
  TS_CHECK(ts_fe_unpickle(&A, (const uint8_t *)"\xfe", 1, NULL, NULL, NULL, NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && strncmp(d.text.data, "error: pickle: byte 0: unknown opcode 0xfe", 42) == 0);
  ts_diag_free(&d);
  TS_CHECK(ts_fe_unpickle(&A, NULL, 0, "t.pkl", NULL, NULL, NULL, NULL) == NULL);
}

/* ---------------------------------------------------------------- print */

static void test_print(void) {
  SHOWS("\x80\x02(K\x01" "G\x40\x04\x00\x00\x00\x00\x00\x00" "X\x01\x00\x00\x00" "s](N\x88" "e}K\x01" "\x89s"
        "\x8a\x01\xff" "t.",
        "(1, 2.5, \"s\", [None, True], {1: False}, -1)");
  SHOWS("\x80\x02K\x01" "\x85.", "(1,)");
  SHOWS("\x80\x02).", "()");
  SHOWS("\x80\x02X\x03\x00\x00\x00" "a\n\"" ".", "\"a\\n\\\"\"");
  SHOWS("\x80\x02G\x3f\xf0\x00\x00\x00\x00\x00\x00" ".", "1.");
  SHOWS("\x80\x02" "cbuiltins\ncomplex\nG\x3f\xf8\x00\x00\x00\x00\x00\x00" "K\x02" "\x86R.", "complex(1.5, 2.)");
  SHOWS("\x80\x02" "ctorch\ndevice\nX\x06\x00\x00\x00" "cuda:0" "\x85R.", "device(\"cuda:0\")");
  /* long and deep values are cut */
  {
    char p[256];
    size_t n = 0;
    p[n++] = (char)0x80;
    p[n++] = 2;
    p[n++] = '(';
    for (int i = 0; i < 20; i++) {
      p[n++] = 'K';
      p[n++] = (char)i;
    }
    p[n++] = 'l';
    p[n++] = '.';
    TS_CHECK_STREQ(show(up_show(__LINE__, p, n, NULL, NULL), 8),
                   "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...]");
  }
  const ts_pv *v = UP("\x80\x02]]]K\x01" "a" "a" "a.");
  TS_CHECK_STREQ(show(v, 8), "[[[1]]]");
  TS_CHECK_STREQ(show(v, 2), "[[[...]]]");
  TS_CHECK_STREQ(show(v, 1), "[[...]]");
  TS_CHECK_STREQ(show(v, 0), "[...]");
  v = UP("\x80\x02" "c__torch__.m\nNet\n)\x81}(X\x01\x00\x00\x00" "a]K\x01" "au" "b.");
  TS_CHECK_STREQ(show(v, 0), "__torch__.m.Net{...}");
  TS_CHECK_STREQ(show(v, 1), "__torch__.m.Net{a: [...]}");
  TS_CHECK_STREQ(show(v, 2), "__torch__.m.Net{a: [1]}");
  TS_CHECK_STREQ(show(NULL, 2), "<null>");
  /* a value shared 2^30 ways prints within the budget */
  {
    char p[64];
    size_t n = 0;
    p[n++] = (char)0x80;
    p[n++] = 2;
    p[n++] = 'N';
    for (int i = 0; i < 30; i++)
      p[n++] = '2', p[n++] = (char)0x86;
    p[n++] = '.';
    ts_fe_pickle_limits lim = {.max_depth = 100, .max_items = 1000, .max_memo = 10};
    v = up_n(p, n, NULL, &lim);
    TS_CHECK(v != NULL);
    const char *s = show(v, 100);
    TS_CHECK(s && strlen(s) < 2000000 && strstr(s, "..."));
  }
}

/* ------------------------------------------------------ real archives */

typedef struct loaded {
  ts_fe_archive *ar;
  const ts_pv *data, *constants;
} loaded;

/* Opens `path` and unpickles data.pkl (storages under data/) and
 * constants.pkl (under constants/) into A; the reason in D on failure. */
static bool load(const char *path, loaded *l) {
  memset(l, 0, sizeof *l);
  ts_diag_free(&D);
  l->ar = ts_fe_archive_open(path, NULL, &D);
  if (!l->ar)
    return false;
  static const char *const pkl[2] = {"data.pkl", "constants.pkl"}, *const dir[2] = {"data/", "constants/"};
  for (int k = 0; k < 2; k++) {
    size_t n = 0;
    const uint8_t *b = ts_fe_archive_read(l->ar, pkl[k], &n, &D);
    char what[600];
    snprintf(what, sizeof what, "%s: %s", path, pkl[k]);
    const ts_pv *v = b ? ts_fe_unpickle(&A, b, n, what, l->ar, dir[k], NULL, &D) : NULL;
    if (!v)
      return false;
    *(k ? &l->constants : &l->data) = v;
  }
  return true;
}

static const ts_pv *attr(const ts_pv *obj, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *s = strtok(buf, "."); s && obj; s = strtok(NULL, "."))
    obj = ts_pv_object_attr(obj, s);
  return obj;
}

static bool shape(const ts_pv *t, int rank, const int64_t *sizes, ts_dtype dt) {
  if (!t || t->kind != TS_PV_TENSOR || t->u.tensor.t.rank != rank || t->u.tensor.t.dtype != dt)
    return false;
  for (int i = 0; i < rank; i++)
    if (t->u.tensor.t.sizes[i] != sizes[i])
      return false;
  return true;
}

static float f32(const ts_pv *t, size_t i) {
  float f = NAN;
  if (t && t->kind == TS_PV_TENSOR && t->u.tensor.t.data)
    memcpy(&f, (const uint8_t *)t->u.tensor.t.data + 4 * i, 4);
  return f;
}

static void test_fixtures(void) {
  static const char *const names[] = {"if_add", "lstm_cell", "loops", "small_mlp", "tiny_cnn", "tiny_cnn_traced"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char path[512];
    snprintf(path, sizeof path, FIX "%s/model.pt", names[i]);
    loaded l;
    if (!TS_CHECK(load(path, &l)))
      fprintf(stderr, "  %s: %s", path, D.text.data ? D.text.data : "");
    if (l.data) {
      TS_CHECK(l.data->kind == TS_PV_OBJECT && strncmp(l.data->u.obj.cls, "__torch__.", 10) == 0);
      const ts_pv *tr = ts_pv_object_attr(l.data, "training");
      TS_CHECK(tr && tr->kind == TS_PV_BOOL);
    }
    TS_CHECK(l.constants && l.constants->kind == TS_PV_TUPLE);

    if (strcmp(names[i], "tiny_cnn") == 0 && l.data) {
      const ts_pv *w = attr(l.data, "conv.weight");
      TS_CHECK(shape(w, 4, (const int64_t[]){8, 3, 3, 3}, TS_DT_FLOAT32));
      if (w && w->kind == TS_PV_TENSOR) {
        const int64_t *st = w->u.tensor.t.strides;
        TS_CHECK(st[0] == 27 && st[1] == 9 && st[2] == 3 && st[3] == 1);
        TS_CHECK(w->u.tensor.requires_grad);
        TS_CHECK(fabsf(f32(w, 0) - 0.12711401283740997f) < 1e-7f);
        TS_CHECK(fabsf(f32(w, 2) - 0.1568351536989212f) < 1e-7f);
      }
      const ts_pv *nbt = attr(l.data, "bn.num_batches_tracked");
      TS_CHECK(shape(nbt, 0, NULL, TS_DT_INT64) && !nbt->u.tensor.requires_grad);
      if (nbt && nbt->u.tensor.t.data) {
        int64_t x;
        memcpy(&x, nbt->u.tensor.t.data, 8);
        TS_CHECK_INTEQ(x, 0);
      }
      const ts_pv *rv = attr(l.data, "bn.running_var");
      TS_CHECK(shape(rv, 1, (const int64_t[]){8}, TS_DT_FLOAT32));
      TS_CHECK(fabsf(f32(rv, 1) - 1.2811522483825684f) < 1e-6f);
      const ts_pv *pad = attr(l.data, "conv._reversed_padding_repeated_twice");
      TS_CHECK(pad && pad->kind == TS_PV_LIST && pad->u.seq.n == 4 && pad->u.seq.type_tag &&
               strcmp(pad->u.seq.type_tag, "List[int]") == 0 && pad->u.seq.items[3]->u.i == 1);
      /* the weight and bias of conv share no storage; bias is data/1 */
      const ts_pv *b = attr(l.data, "conv.bias");
      TS_CHECK(b && b->kind == TS_PV_TENSOR && strcmp(b->u.tensor.storage_key, "1") == 0);
      ts_buf o = {0};
      ts_pv_print(&o, attr(l.data, "bn"), 2);
      TS_CHECK(o.data && strstr(o.data, "__torch__.torch.nn.modules.batchnorm.BatchNorm2d{weight: Tensor[Float, [8]]"));
      ts_buf_free(&o);
    }
    if (strcmp(names[i], "tiny_cnn_traced") == 0 && l.data) {
      TS_CHECK_STREQ(l.data->u.obj.cls, "__torch__.fixture_models.___torch_mangle_5.TinyCNN");
      const ts_pv *rm = attr(l.data, "bn.running_mean");
      TS_CHECK(shape(rm, 1, (const int64_t[]){8}, TS_DT_FLOAT32));
      TS_CHECK(fabsf(f32(rm, 0) - 0.04483354091644287f) < 1e-7f);
      TS_CHECK(fabsf(f32(rm, 1) - 0.00982046127319336f) < 1e-7f);
    }
    if (strcmp(names[i], "small_mlp") == 0 && l.data) {
      static const struct {
        const char *name;
        int rank;
        int64_t sizes[2];
      } params[] = {{"fc1.weight", 2, {32, 16}}, {"fc1.bias", 1, {32}}, {"norm.weight", 1, {32}},
                    {"norm.bias", 1, {32}},      {"fc2.weight", 2, {8, 32}}, {"fc2.bias", 1, {8}}};
      for (size_t k = 0; k < sizeof params / sizeof *params; k++)
        TS_CHECK(shape(attr(l.data, params[k].name), params[k].rank, params[k].sizes, TS_DT_FLOAT32));
      const ts_pv *w = attr(l.data, "fc1.weight");
      TS_CHECK(fabsf(f32(w, 0) - 0.0298193097114563f) < 1e-7f);
      TS_CHECK(fabsf(f32(w, 1) - 0.02954620122909546f) < 1e-7f);
      TS_CHECK(fabsf(f32(w, 16) - 0.1317422091960907f) < 1e-7f);
    }
    if (strcmp(names[i], "lstm_cell") == 0 && l.data)
      TS_CHECK_STREQ(l.data->u.obj.cls, "__torch__.PlaceholderModule");
    ts_fe_archive_close(l.ar);
  }
}

/* Every hostile archive fails, through open, read of data.pkl and unpickle,
 * with one line naming the file and the cause; ok_* files load. */
static void test_hostile(void) {
  static const struct {
    const char *file;
    const char *why;
  } cases[] = {
      {"absolute_entry", "entry '/archive/x' is not under a top folder"},
      {"bad_central_directory", "not a zip archive"},
      {"bad_local_header", "broken zip archive: Zip archive inconsistent"},
      {"bitflip_central_crc", "broken zip archive: Zip archive inconsistent"},
      {"bitflip_central_offset", "not a zip archive"},
      {"bitflip_central_size", "broken zip archive: Zip archive inconsistent"},
      {"bitflip_data_pkl", "data.pkl: CRC error"},
      {"bitflip_local_method", "broken zip archive: Zip archive inconsistent"},
      {"bitflip_local_signature", "not a zip archive"},
      {"bitflip_local_size", "broken zip archive: Zip archive inconsistent"},
      {"crc_mismatch", "data.pkl: CRC error"},
      {"cycle", "data.pkl: byte 2: a list contains itself (a cycle)"},
      {"deep_nesting", "data.pkl: byte 2002: MARKs nested deeper than 1000 (limit)"},
      {"deep_tuple", "data.pkl: byte 99002: values nested deeper than 1000 (limit)"},
      {"dotdot_entry", "has a '..' component"},
      {"duplicate_entry", "two entries have the same name"},
      {"empty_archive", "the archive is empty"},
      {"lie_unread_crc", "entry 'archive/code/__torch__/fixture_models.py.debug_pkl': its central directory record "
                         "says CRC 305419896, its data descriptor 1588057580"},
      {"lie_unread_deflated", "fixture_models.py.debug_pkl': it claims 2147483648 bytes, more than deflate makes of"},
      {"lie_unread_descriptor", "debug_pkl': its central directory record says size 493, its data descriptor 1493"},
      {"lie_unread_size", "debug_pkl': its central directory record says size 4294967294, its data descriptor 493"},
      {"lie_unread_stored", "debug_pkl': it is stored, yet its size is 1073741824 and its data 493 bytes"},
      {"lie_version_size", "entry 'archive/version': its central directory record says size 4294967294, its data "
                           "descriptor 2"},
      {"global_builtins_eval", "data.pkl: byte 2: GLOBAL 'builtins eval' is not allowed"},
      {"global_os_system", "data.pkl: byte 2: GLOBAL 'os system' is not allowed"},
      {"global_posix_system", "data.pkl: byte 2: GLOBAL 'posix system' is not allowed"},
      {"memo_unset", "data.pkl: byte 5: memo slot 5 is not set"},
      {"negative_stride", "data.pkl: byte 187: negative stride -1 in dimension 0"},
      {"no_data_pkl", "no data.pkl under 'archive/'"},
      {"overlapping_entries", "entries 'archive/extra' (bytes 1209 to 1299) and 'archive/inner' (from byte 1252) overlap"},
      {"size_lie_long", "data.pkl: short read: 91 of 191 bytes"},
      {"size_lie_short", "data.pkl: the entry is longer than its recorded size"},
      {"size_overflow", "data.pkl: byte 216: a tensor's sizes overflow int64"},
      {"storage_entry_short", "data.pkl: byte 144: storage 'data/0' holds 16 bytes, 400 expected"},
      {"storage_missing", "data.pkl: byte 144: storage 'data/7': no entry 'archive/data/7'"},
      {"storage_short", "data.pkl: byte 184: the tensor's last element (index 9) lies outside its storage"},
      {"truncated_pickle", "data.pkl: byte 40: BINUNICODE of 8 bytes, 5 left"},
      {"truncated_zip", "not a zip archive"},
      {"two_top_folders", "entries under two top folders ('archive' and 'other')"},
      {"unknown_opcode", "data.pkl: byte 3: unknown opcode 0xfe"},
      {"version_data_newer", "archive/.data/version: serialization format version 11 is newer than torch.jit.load "
                             "reads (versions 1 to 10, as PyTorch 1.13)"},
      {"version_garbage", "archive/version: 'three' is not a version number"},
      {"version_missing", "no version record ('archive/version' or 'archive/.data/version')"},
      {"version_negative", "archive/version: serialization format version -1 is newer than torch.jit.load reads"},
      {"version_overflow", "archive/version: '18446744073709551616' is not a version number (out of range)"},
      {"version_too_new", "archive/version: serialization format version 11 is newer than torch.jit.load reads"},
      {"version_too_old", "archive/version: serialization format version 0 is older than torch.jit.load reads"},
      {"zip_bomb", "data.pkl: compression ratio over 1000"},
  };
  size_t ncases = sizeof cases / sizeof *cases;
  for (size_t i = 0; i < ncases; i++) {
    char path[512];
    snprintf(path, sizeof path, HOSTILE "%s.pt", cases[i].file);
    loaded l;
    bool ok = load(path, &l);
    if (!(TS_CHECK(!ok) && TS_CHECK(one_line(&D)) && TS_CHECK(strstr(D.text.data, path)) &&
          TS_CHECK(strstr(D.text.data, cases[i].why))))
      fprintf(stderr, "  %s: got: %s", cases[i].file, D.text.data ? D.text.data : "(nothing)\n");
    ts_fe_archive_close(l.ar);
  }

  loaded l;
  if (TS_CHECK(load(HOSTILE "ok_folder_entries.pt", &l))) {
    const ts_pv *w = ts_pv_object_attr(l.data, "w");
    TS_CHECK(shape(w, 1, (const int64_t[]){2}, TS_DT_FLOAT32));
    TS_CHECK(f32(w, 0) == 2.0f && w->u.tensor.t.strides[0] == 2 && f32(w, 2) == 4.0f);
  }
  ts_fe_archive_close(l.ar);

  /* the other ok_* files load too */
  static const char *const oks[] = {"ok_torch_descriptors", "ok_version_data", "ok_version_lenient",
                                    "ok_zip64_descriptors"};
  for (size_t i = 0; i < sizeof oks / sizeof *oks; i++) {
    char path[512];
    snprintf(path, sizeof path, HOSTILE "%s.pt", oks[i]);
    if (!TS_CHECK(load(path, &l)))
      fprintf(stderr, "  %s: %s", oks[i], D.text.data ? D.text.data : "(nothing)\n");
    ts_fe_archive_close(l.ar);
  }

  /* every file in hostile/ is one of the cases above */
  DIR *dir = opendir(HOSTILE);
  if (TS_CHECK(dir != NULL)) {
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dir))) {
      size_t n = strlen(e->d_name);
      if (n < 4 || strcmp(e->d_name + n - 3, ".pt") != 0)
        continue;
      files++;
      bool known = strncmp(e->d_name, "ok_", 3) == 0;
      for (size_t i = 0; i < ncases && !known; i++)
        known = strlen(cases[i].file) == n - 3 && strncmp(cases[i].file, e->d_name, n - 3) == 0;
      if (!TS_CHECK(known))
        fprintf(stderr, "  hostile/%s has no case in test_pickle.c\n", e->d_name);
    }
    closedir(dir);
    TS_CHECK_INTEQ(files, ncases + 1 + sizeof oks / sizeof *oks);
  }
}

int main(void) {
  ts_arena_init(&A, 0);
  ts_diag d = {0};
  MLP = ts_fe_archive_open(FIX "small_mlp/model.pt", NULL, &d);
  if (!TS_CHECK(MLP != NULL)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    return ts_test_finish();
  }
  test_scalars();
  test_containers();
  test_memo_stack();
  test_objects();
  test_globals();
  test_tensors();
  test_tensor_errors();
  test_errors();
  test_limits();
  test_print();
  test_fixtures();
  test_hostile();
  ts_fe_archive_close(MLP);
  ts_diag_free(&D);
  ts_diag_free(&d);
  ts_buf_free(&OUT);
  ts_arena_release(&A);
  return ts_test_finish();
}
