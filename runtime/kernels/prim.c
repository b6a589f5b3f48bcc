/* runtime/kernels/prim.c: the prim builtins with schemas and the small
 * aten ops around them: printing, exceptions and warnings, casts the
 * compiler inserts, tuple and module-container indexing, device and tensor
 * property queries, and the autograd/autocast state (always off: the
 * runtime only does inference). */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "runtime.h"
#include "tensor_ops.h"

/* print(a, b, ...): str() of each argument joined by spaces, then a
 * newline, appended to ctx->out. */
/* The end of a line written to ctx->out from len on: a fixed buffer (a
 * compiled model's, TS_AOT_CTX_TEXT bytes a run) that filled drops the
 * line and goes on, as its text is documented to be cut off; only a buffer
 * that could not grow is out of memory. */
static bool pr_out_done(ts_rt_ctx *c, size_t len, bool failed) {
  if (!c->out.failed || failed)
    return true;
  if (!c->out.fixed)
    return ts_rt_oom(c);
  c->out.len = len;
  if (c->out.cap)
    c->out.data[len] = 0;
  c->out.failed = false;
  return true;
}

static bool pr_print(ts_rt_ctx *c, ts_rt_call *call) {
  size_t len = c->out.len;
  bool failed = c->out.failed;
  for (uint32_t i = 0; i < call->nin; i++) {
    if (i > 0) ts_buf_putc(&c->out, ' ');
    ts_iv_str(&c->out, call->in[i]);
  }
  ts_buf_putc(&c->out, '\n');
  return pr_out_done(c, len, failed);
}

/* Exception classes a program names, as static strings: ctx->exc_class
 * must outlive the kernel's borrowed arguments. */
static const char *const pr_classes[] = {
    "builtins.Exception", "builtins.RuntimeError", "builtins.ValueError", "builtins.TypeError",
    "builtins.AssertionError", "builtins.KeyError", "builtins.IndexError", "builtins.NotImplementedError",
    "builtins.ZeroDivisionError", "builtins.AttributeError", "builtins.StopIteration", "builtins.LookupError",
    "builtins.ArithmeticError", "builtins.OverflowError", "builtins.ImportError", "builtins.OSError",
    "builtins.UserWarning", "torch.jit.Error",
};

/* A stable pointer to `cls`: the graph's constant when the node has one,
 * else a known class name, else "builtins.Exception". */
static const char *pr_class_name(const ts_rt_call *call, const ts_rt_str *cls) {
  const ts_node *n = call->node;
  if (n && n->ninputs > 1 && n->inputs[1]->node) {
    const ts_attr *a = ts_node_attr(n->inputs[1]->node, "value");
    if (a && a->kind == TS_ATTR_STR && a->len == cls->len && memcmp(a->u.s, cls->data, cls->len) == 0) return a->u.s;
  }
  for (size_t i = 0; i < sizeof pr_classes / sizeof pr_classes[0]; i++)
    if (strlen(pr_classes[i]) == cls->len && memcmp(pr_classes[i], cls->data, cls->len) == 0) return pr_classes[i];
  return "builtins.Exception";
}

/* raise Cls(msg): the message exactly as given; the interpreter adds the
 * location. */
static bool pr_raise(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *msg = NULL, *cls = NULL;
  if (!ts_rt_arg_str(c, call, 0, &msg)) return false;
  if (call->nin > 1 && call->in[1].tag != TS_IV_NONE && !ts_rt_arg_str(c, call, 1, &cls)) return false;
  if (c->failed) return false;
  ts_rt_fail(c, "%s", msg->data);
  c->exc_class = cls ? pr_class_name(call, cls) : NULL;
  return false;
}

/* warnings.warn(msg): one line "UserWarning: msg" in ctx->out (PyTorch
 * prints the warning through Python's warnings module, on stderr). */
static bool pr_warn(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *msg = NULL;
  if (!ts_rt_arg_str(c, call, 0, &msg)) return false;
  size_t len = c->out.len;
  bool failed = c->out.failed;
  ts_buf_puts(&c->out, "UserWarning: ");
  ts_buf_putn(&c->out, msg->data, msg->len);
  ts_buf_putc(&c->out, '\n');
  return pr_out_done(c, len, failed);
}

/* unchecked_cast / unchecked_unwrap_optional: the input itself. */
static bool pr_identity(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

static bool pr_tuple_index(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t i = 0;
  if (!ts_rt_arg_check(c, call, 0) || !ts_rt_arg_int(c, call, 1, &i)) return false;
  if (call->in[0].tag != TS_IV_TUPLE) return ts_rt_arg_bad(c, call, 0, "Tuple");
  const ts_rt_tuple *t = call->in[0].u.tup;
  int64_t k = i < 0 ? i + (int64_t)t->n : i;
  if (k < 0 || k >= (int64_t)t->n) return ts_rt_fail(c, "Tuple index out of range");
  ts_iv_retain(t->items[k]);
  call->out[0] = t->items[k];
  return true;
}

/* TupleUnpack: the tuple's items, as many as the node has outputs. */
static bool pr_tuple_unpack(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  if (call->in[0].tag != TS_IV_TUPLE) return ts_rt_arg_bad(c, call, 0, "Tuple");
  const ts_rt_tuple *t = call->in[0].u.tup;
  if (t->n != call->nout)
    return ts_rt_fail(c, "Expected a tuple of %u elements, but got %u", (unsigned)call->nout, (unsigned)t->n);
  for (uint32_t k = 0; k < t->n; k++) {
    ts_iv_retain(t->items[k]);
    call->out[k] = t->items[k];
  }
  return true;
}

/* ModuleContainerIndex: the attribute of a ModuleList (named by the index)
 * or ModuleDict (named by the key) object. */
static bool pr_container_attr(ts_rt_ctx *c, ts_rt_call *call, const char *name) {
  const ts_rt_object *o = call->in[0].u.obj;
  int32_t k = ts_rt_class_attr_index(o->cls, name);
  if (k < 0 || (uint32_t)k >= o->n) return ts_rt_fail(c, "KeyError: %s", name);
  ts_iv_retain(o->attrs[k]);
  call->out[0] = o->attrs[k];
  return true;
}

static bool pr_container_list(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t i = 0;
  if (!ts_rt_arg_check(c, call, 0) || !ts_rt_arg_int(c, call, 1, &i)) return false;
  if (call->in[0].tag != TS_IV_OBJECT) return ts_rt_arg_bad(c, call, 0, "Object");
  char name[32];
  snprintf(name, sizeof name, "%lld", (long long)i);
  return pr_container_attr(c, call, name);
}

static bool pr_container_dict(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *key = NULL;
  if (!ts_rt_arg_check(c, call, 0) || !ts_rt_arg_str(c, call, 1, &key)) return false;
  if (call->in[0].tag != TS_IV_OBJECT) return ts_rt_arg_bad(c, call, 0, "Object");
  return pr_container_attr(c, call, key->data);
}

/* ------------------------------------------------------- tensor properties */

static bool pr_device(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_device(t->device);
  return true;
}

static bool pr_dtype(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_int(t->dtype);
  return true;
}

static bool pr_is_cuda(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_bool(t->device.type == TS_DEV_CUDA);
  return true;
}

static bool pr_is_cpu(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_bool(t->device.type == TS_DEV_CPU);
  return true;
}

/* is_nested: true for the nested tensors the transformer kernels make. */
static bool pr_is_nested(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_bool(ts_rt_tensor_is_nested(t));
  return true;
}

/* is_leaf: no tensor has a grad_fn at inference. */
static bool pr_true_tensor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_bool(true);
  return true;
}

/* layout: torch.strided (0) for every tensor the runtime holds. */
static bool pr_layout(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_int(0);
  return true;
}

static bool pr_requires_grad(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  call->out[0] = ts_iv_bool(t->requires_grad);
  return true;
}

/* prim::data (Tensor.data): a view of the same storage without
 * requires_grad. */
static bool pr_data(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  ts_rt_tensor *v = ts_rt_tensor_view(c, t, t->offset, t->ndim, t->sizes, t->strides);
  if (!v) return false;
  v->requires_grad = false;
  call->out[0] = ts_iv_tensor(v);
  return true;
}

/* ------------------------------------------------------- state and devices */

static bool pr_false(ts_rt_ctx *c, ts_rt_call *call) {
  (void)c;
  call->out[0] = ts_iv_bool(false);
  return true;
}

/* torch.set_grad_enabled(b): nothing to do at inference. */
static bool pr_set_grad_enabled(ts_rt_ctx *c, ts_rt_call *call) {
  bool b = false;
  return ts_rt_arg_bool(c, call, 0, &b);
}

static bool pr_device_eq(ts_rt_ctx *c, ts_rt_call *call, bool negate) {
  if (!ts_rt_arg_check(c, call, 1)) return false;
  if (call->in[0].tag != TS_IV_DEVICE) return ts_rt_arg_bad(c, call, 0, "Device");
  if (call->in[1].tag != TS_IV_DEVICE) return ts_rt_arg_bad(c, call, 1, "Device");
  ts_device a = call->in[0].u.dev, b = call->in[1].u.dev;
  bool eq = a.type == b.type && a.index == b.index;
  call->out[0] = ts_iv_bool(eq != negate);
  return true;
}

static bool pr_device_eq_op(ts_rt_ctx *c, ts_rt_call *call) { return pr_device_eq(c, call, false); }
static bool pr_device_ne_op(ts_rt_ctx *c, ts_rt_call *call) { return pr_device_eq(c, call, true); }

/* device.type: the device's type name ("cpu", "cuda", "meta"). */
static bool pr_device_type(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  if (call->in[0].tag != TS_IV_DEVICE) return ts_rt_arg_bad(c, call, 0, "Device");
  int t = call->in[0].u.dev.type;
  const char *name = t == TS_DEV_CUDA ? "cuda" : t == TS_DEV_META ? "meta" : "cpu";
  ts_rt_str *s = ts_rt_str_new(c, name, strlen(name));
  if (!s) return false;
  call->out[0] = (ts_iv){.u.s = s, .tag = TS_IV_STR};
  return true;
}

/* torch.device("cuda:0"). */
static bool pr_device_from_str(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  ts_device d;
  if (!ts_device_parse(s->data, s->len, &d))
    return ts_rt_fail(c, "Expected one of cpu, cuda, meta device type at start of device string: %s", s->data);
  call->out[0] = ts_iv_device(d);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_prim[] = {
    {"prim::Print", pr_print},
    {"prim::RaiseException", pr_raise},
    {"aten::warn", pr_warn},
    {"prim::unchecked_cast", pr_identity},
    {"prim::unchecked_unwrap_optional", pr_identity},
    {"prim::TupleIndex", pr_tuple_index},
    {"prim::TupleUnpack", pr_tuple_unpack},
    {"prim::ModuleContainerIndex.list", pr_container_list},
    {"prim::ModuleContainerIndex.dict", pr_container_dict},
    {"prim::device", pr_device},
    {"prim::dtype", pr_dtype},
    {"prim::is_cuda", pr_is_cuda},
    {"prim::is_cpu", pr_is_cpu},
    {"prim::is_nested", pr_is_nested},
    {"prim::layout", pr_layout},
    {"prim::requires_grad", pr_requires_grad},
    {"prim::data", pr_data},
    {"aten::is_leaf", pr_true_tensor},
    {"aten::is_grad_enabled", pr_false},
    {"aten::is_autocast_enabled", pr_false},
    {"aten::set_grad_enabled", pr_set_grad_enabled},
    {"aten::eq.device", pr_device_eq_op},
    {"aten::ne.device", pr_device_ne_op},
    {"aten::device", pr_device_from_str},
    {"prim::type", pr_device_type},
    {NULL, NULL},
};
