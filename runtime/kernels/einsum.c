/* runtime/kernels/einsum.c: aten::einsum as PyTorch 1.13 computes it on
 * the CPU (ATen's Linear.cpp): the equation parsed with its checks and
 * messages; each operand's repeated subscripts taken as diagonals (views),
 * its dims permuted to one layout (the output's dims first, the summed ones
 * after, missing ones as size 1); then the operands contracted left to
 * right, the product taking the pair's place: a dim no other operand has
 * is summed out as soon as possible, and a pair's shared summed dims go
 * through one bmm (sumproduct_pair: the
 * pair's batch, left-only, summed and right-only dims flattened into
 * [batch, m, k] @ [batch, k, n]), so the heavy work is a GEMM. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

enum {
  ES_LABELS = 52,   /* A-Z then a-z */
  ES_ELL = 52,      /* the ellipsis among an operand's labels */
  ES_MAX_OPS = 64,  /* operands */
  ES_MAX_LABELS = TS_RT_MAX_DIMS + 1,
};

static int es_label(unsigned char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  return -1;
}

/* *slot = t, releasing what it held; false if t is NULL. */
static bool es_set(ts_rt_tensor **slot, ts_rt_tensor *t) {
  if (*slot) ts_rt_tensor_release(*slot);
  *slot = t;
  return t != NULL;
}

/* t summed over dim d, kept as size 1, in PyTorch's sum dtype. */
static ts_rt_tensor *es_sum(ts_rt_ctx *c, const ts_rt_tensor *t, int64_t d) {
  return ts_rt_sum(c, t, &d, 1, true, TS_DT_NONE);
}

/* sumproduct_pair(left, right, sum_dims, keepdim=true): left * right
 * summed over the dims in sum (both of rank nd; size 1 there after), by
 * one bmm. */
static ts_rt_tensor *es_sumproduct(ts_rt_ctx *c, const ts_rt_tensor *left_, const ts_rt_tensor *right_,
                                   const bool *sum, int32_t nd) {
  bool any = false;
  for (int32_t i = 0; i < nd; i++) any |= sum[i];
  if (!any) return ts_rt_binary_op(c, TS_PW_mul, left_, right_);
  ts_rt_tensor *left = NULL, *right = NULL, *out = NULL;
  ts_rt_tensor_retain((ts_rt_tensor *)left_);
  ts_rt_tensor_retain((ts_rt_tensor *)right_);
  left = (ts_rt_tensor *)left_;
  right = (ts_rt_tensor *)right_;
  int64_t lro[TS_RT_MAX_DIMS], lo[TS_RT_MAX_DIMS], ro[TS_RT_MAX_DIMS], sd[TS_RT_MAX_DIMS];
  int32_t nlro = 0, nlo = 0, nro = 0, nsd = 0;
  int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  for (int32_t i = 0; i < nd; i++) {
    bool sl = left->sizes[i] > 1, sr = right->sizes[i] > 1;
    if (sum[i]) {
      sd[nsd++] = i;
      if (sl && sr) {
        sum_size *= left->sizes[i];
      } else if (sl) {
        if (!es_set(&left, es_sum(c, left, i))) goto done;
      } else if (sr) {
        if (!es_set(&right, es_sum(c, right, i))) goto done;
      }
    } else if (sl && sr) {
      lro[nlro++] = i, lro_size *= left->sizes[i];
    } else if (sl) {
      lo[nlo++] = i, lo_size *= left->sizes[i];
    } else {
      ro[nro++] = i, ro_size *= right->sizes[i];
    }
  }
  int64_t lperm[TS_RT_MAX_DIMS], rperm[TS_RT_MAX_DIMS], operm[TS_RT_MAX_DIMS], osz[TS_RT_MAX_DIMS];
  int32_t k = 0;
  for (int32_t i = 0; i < nlro; i++) lperm[k] = rperm[k] = lro[i], osz[k++] = left->sizes[lro[i]];
  for (int32_t i = 0; i < nlo; i++) lperm[k] = lo[i], osz[k++] = left->sizes[lo[i]];
  for (int32_t i = 0; i < nsd; i++) lperm[k] = sd[i], osz[k++] = 1;
  for (int32_t i = 0; i < nro; i++) lperm[k] = ro[i], osz[k++] = right->sizes[ro[i]];
  k = nlro;
  for (int32_t i = 0; i < nsd; i++) rperm[k++] = sd[i];
  for (int32_t i = 0; i < nro; i++) rperm[k++] = ro[i];
  for (int32_t i = 0; i < nlo; i++) rperm[k++] = lo[i];
  k = 0;
  for (int32_t i = 0; i < nlro; i++) operm[lro[i]] = k++;
  for (int32_t i = 0; i < nlo; i++) operm[lo[i]] = k++;
  for (int32_t i = 0; i < nsd; i++) operm[sd[i]] = k++;
  for (int32_t i = 0; i < nro; i++) operm[ro[i]] = k++;
  int64_t l3[3] = {lro_size, lo_size, sum_size}, r3[3] = {lro_size, sum_size, ro_size};
  if (!es_set(&left, ts_rt_permute(c, left, lperm)) || !es_set(&left, ts_rt_reshape(c, left, 3, l3)) ||
      !es_set(&right, ts_rt_permute(c, right, rperm)) || !es_set(&right, ts_rt_reshape(c, right, 3, r3)))
    goto done;
  ts_rt_tensor *r = ts_rt_bmm(c, left, right);
  if (!r) goto done;
  ts_rt_tensor *v = ts_rt_view(c, r, nd, osz);
  ts_rt_tensor_release(r);
  if (!v) goto done;
  out = ts_rt_permute(c, v, operm);
  ts_rt_tensor_release(v);
done:
  es_set(&left, NULL);
  es_set(&right, NULL);
  return out;
}

/* The parsed equation. */
typedef struct es_eq {
  uint32_t nops;
  int8_t labels[ES_MAX_OPS][ES_MAX_LABELS];
  int32_t nlabels[ES_MAX_OPS]; /* ellipsis included */
  int64_t label_count[ES_LABELS];
  int64_t perm_index[ES_LABELS]; /* a label's dim in the common layout; -1: none */
  int64_t ell_num_dim, ell_index, out_size, nperm;
} es_eq;

static bool es_parse(ts_rt_ctx *c, const char *eq, size_t len, ts_rt_tensor *const *ops, uint32_t nops, es_eq *e) {
  memset(e, 0, sizeof *e);
  e->nops = nops;
  size_t arrow = len;
  for (size_t i = 0; i + 1 < len; i++)
    if (eq[i] == '-' && eq[i + 1] == '>') {
      arrow = i;
      break;
    }
  uint32_t cur = 0;
  bool found_ell = false;
  for (size_t i = 0; i < arrow; i++) {
    unsigned char ch = (unsigned char)eq[i];
    int lab;
    switch (ch) {
    case ' ':
      continue;
    case '.':
      if (found_ell)
        return ts_rt_fail(c, "einsum(): found '.' for operand %u for which an ellipsis was already found",
                          (unsigned)cur);
      if (!(i + 2 < arrow && eq[i + 1] == '.' && eq[i + 2] == '.'))
        return ts_rt_fail(c, "einsum(): found '.' for operand %u that is not part of any ellipsis", (unsigned)cur);
      i += 2;
      lab = ES_ELL;
      found_ell = true;
      break;
    case ',':
      cur++;
      if (cur >= nops) return ts_rt_fail(c, "einsum(): fewer operands were provided than specified in the equation");
      found_ell = false;
      continue;
    default:
      lab = es_label(ch);
      if (lab < 0)
        return ts_rt_fail(c, "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be "
                          "in [a-zA-Z]", i);
    }
    /* more labels than an operand can have dims fail the count check below */
    if (e->nlabels[cur] < ES_MAX_LABELS) e->labels[cur][e->nlabels[cur]] = (int8_t)lab;
    e->nlabels[cur]++;
  }
  if (cur + 1 != nops) return ts_rt_fail(c, "einsum(): more operands were provided than specified in the equation");
  for (uint32_t i = 0; i < nops; i++) {
    int64_t ndims = ops[i]->ndim, nl = e->nlabels[i];
    bool has_ell = false;
    int32_t stored = e->nlabels[i] < ES_MAX_LABELS ? e->nlabels[i] : ES_MAX_LABELS;
    for (int32_t k = 0; k < stored; k++) {
      if (e->labels[i][k] == ES_ELL) {
        nl--;
        has_ell = true;
        if (ndims - nl > e->ell_num_dim) e->ell_num_dim = ndims - nl;
      } else {
        e->label_count[e->labels[i][k]]++;
      }
    }
    if (has_ell ? nl > ndims : nl != ndims)
      return ts_rt_fail(c, "einsum(): the number of subscripts in the equation (%lld) %s the number of dimensions "
                        "(%lld) for operand %u%s", (long long)nl, has_ell ? "is more than" : "does not match",
                        (long long)ndims, (unsigned)i, has_ell ? "" : " and no ellipsis was given");
  }
  for (int l = 0; l < ES_LABELS; l++) e->perm_index[l] = -1;
  int64_t perm = 0;
  found_ell = false;
  if (arrow == len) {
    /* implicit output: the ellipsis' dims, then the labels seen once */
    perm = e->ell_num_dim;
    found_ell = true;
    for (int l = 0; l < ES_LABELS; l++)
      if (e->label_count[l] == 1) e->perm_index[l] = perm++;
  } else {
    for (size_t i = arrow + 2; i < len; i++) {
      unsigned char ch = (unsigned char)eq[i];
      if (ch == ' ') continue;
      if (ch == '.') {
        if (found_ell)
          return ts_rt_fail(c, "einsum(): found '.' for output but an ellipsis (...) was already found");
        if (!(i + 2 < len && eq[i + 1] == '.' && eq[i + 2] == '.'))
          return ts_rt_fail(c, "einsum(): found '.' for output that is not part of any ellipsis (...)");
        i += 2;
        e->ell_index = perm;
        perm += e->ell_num_dim;
        found_ell = true;
        continue;
      }
      int lab = es_label(ch);
      if (lab < 0)
        return ts_rt_fail(c, "einsum(): invalid subscript given at index %zu in the equation string, subscripts must be "
                          "in [a-zA-Z]", i);
      if (!(e->label_count[lab] > 0 && e->perm_index[lab] == -1))
        return ts_rt_fail(c, "einsum(): output subscript %c %s", ch,
                          e->perm_index[lab] > -1 ? "appears more than once in the output"
                                                  : "does not appear in the equation for any input operand");
      e->perm_index[lab] = perm++;
    }
  }
  e->out_size = perm;
  if (!found_ell) {
    /* an ellipsis left out of the output is summed */
    e->ell_index = perm;
    perm += e->ell_num_dim;
  }
  for (int l = 0; l < ES_LABELS; l++)
    if (e->label_count[l] > 0 && e->perm_index[l] == -1) e->perm_index[l] = perm++;
  e->nperm = perm;
  if (perm > TS_RT_MAX_DIMS) return ts_rt_fail(c, "einsum(): %lld dims, at most %d supported", (long long)perm,
                                               TS_RT_MAX_DIMS);
  return true;
}

/* Operand i in the common layout (a view): diagonals for repeated labels,
 * size-1 dims for labels it lacks, dims permuted; each label's size
 * checked against the earlier operands' (label_size, ell_size: 1 until a
 * size other than 1 is seen) and dim_counts[d] counting the operands whose
 * dim d is not 1. */
static ts_rt_tensor *es_permuted(ts_rt_ctx *c, const es_eq *e, uint32_t i, const ts_rt_tensor *op,
                                 int64_t *label_size, int64_t *ell_size, int64_t *dim_counts) {
  int64_t sz[TS_RT_MAX_DIMS], st[TS_RT_MAX_DIMS], perm_shape[TS_RT_MAX_DIMS];
  int32_t nd = 0, src = 0;
  for (int64_t k = 0; k < e->nperm; k++) perm_shape[k] = -1;
  for (int32_t k = 0; k < e->nlabels[i]; k++) {
    int lab = e->labels[i][k];
    if (lab == ES_ELL) {
      /* the ellipsis' dims, right-aligned among ell_num_dim */
      int64_t have = op->ndim - (e->nlabels[i] - 1);
      for (int64_t j = e->ell_num_dim - have; j < e->ell_num_dim; j++, src++) {
        int64_t s = op->sizes[src];
        if (s != 1) {
          if (ell_size[j] != 1 && ell_size[j] != s)
            return ts_rt_fail(c, "einsum(): dimension %d covered by ellipsis in operand %uhas size %lld which does "
                              "not broadcast with previously seen ellipsis with size %lld for the respective dimension",
                              (int)nd, (unsigned)i, (long long)s, (long long)ell_size[j]),
                   NULL;
          ell_size[j] = s;
          dim_counts[e->ell_index + j]++;
        }
        perm_shape[e->ell_index + j] = nd;
        sz[nd] = s, st[nd++] = op->strides[src];
      }
    } else if (perm_shape[e->perm_index[lab]] == -1) {
      int64_t s = op->sizes[src];
      if (s != 1) {
        if (label_size[lab] != 1 && label_size[lab] != s)
          return ts_rt_fail(c, "einsum(): subscript %c has size %lld for operand %u which does not broadcast with "
                            "previously seen size %lld", lab < 26 ? 'A' + lab : 'a' + lab - 26, (long long)s,
                            (unsigned)i, (long long)label_size[lab]),
                 NULL;
        label_size[lab] = s;
        dim_counts[e->perm_index[lab]]++;
      }
      perm_shape[e->perm_index[lab]] = nd;
      sz[nd] = s, st[nd++] = op->strides[src++];
    } else {
      int64_t d = perm_shape[e->perm_index[lab]];
      if (op->sizes[src] != sz[d])
        return ts_rt_fail(c, "einsum(): subscript %c is repeated for operand %u but the sizes don't match, %lld != "
                          "%lld", lab < 26 ? 'A' + lab : 'a' + lab - 26, (unsigned)i, (long long)op->sizes[src],
                          (long long)sz[d]),
               NULL;
      st[d] += op->strides[src++]; /* the diagonal, where the first one was */
    }
  }
  for (int64_t k = 0; k < e->nperm; k++)
    if (perm_shape[k] == -1) sz[nd] = 1, st[nd] = 0, perm_shape[k] = nd++;
  int64_t psz[TS_RT_MAX_DIMS], pst[TS_RT_MAX_DIMS];
  for (int64_t k = 0; k < e->nperm; k++) psz[k] = sz[perm_shape[k]], pst[k] = st[perm_shape[k]];
  return ts_rt_tensor_view(c, op, op->offset, (int32_t)e->nperm, psz, pst);
}

/* t summed over the dims where which[] is set, kept as size 1. */
static ts_rt_tensor *es_sum_keep(ts_rt_ctx *c, const ts_rt_tensor *t, const bool *which, int32_t nd) {
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  for (int32_t d = 0; d < nd; d++)
    if (which[d]) dims[n++] = d;
  return ts_rt_sum(c, t, dims, n, true, TS_DT_NONE);
}

static bool es_k_einsum(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *eqs = NULL;
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_str(c, call, 0, &eqs) || !ts_rt_arg_list(c, call, 1, &l)) return false;
  if (call->nin > 2 && call->in[2].tag != TS_IV_NONE)
    return ts_rt_fail(c, "einsum(): a contraction path (path=) is not supported; contracting left to right needs "
                      "path=None");
  if (l->n == 0) return ts_rt_fail(c, "einsum(): must provide at least one operand");
  if (l->n > ES_MAX_OPS) return ts_rt_fail(c, "einsum(): %u operands, at most %d supported", (unsigned)l->n, ES_MAX_OPS);
  ts_rt_tensor *ops[ES_MAX_OPS];
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "einsum(): expected List[Tensor]");
    ops[k] = l->items[k].u.t;
  }
  uint32_t nops = l->n;
  es_eq *e = ts_rt_calloc(1, sizeof *e);
  if (!e) return ts_rt_oom(c);
  /* the operands still to contract, in order (perm[first..nops)) */
  ts_rt_tensor *perm[ES_MAX_OPS] = {0}, *result = NULL;
  bool ok = false;
  if (!es_parse(c, eqs->data, eqs->len, ops, nops, e)) goto done;
  int64_t label_size[ES_LABELS], ell_size[TS_RT_MAX_DIMS], dim_counts[TS_RT_MAX_DIMS] = {0};
  for (int k = 0; k < ES_LABELS; k++) label_size[k] = 1;
  for (int k = 0; k < TS_RT_MAX_DIMS; k++) ell_size[k] = 1;
  for (uint32_t i = 0; i < nops; i++)
    if (!(perm[i] = es_permuted(c, e, i, ops[i], label_size, ell_size, dim_counts))) goto done;
  int32_t np = (int32_t)e->nperm, od = (int32_t)e->out_size;
  if (nops > 1) {
    /* an empty dim anywhere: zeros of the output's size (the bmm's
     * reshapes cannot flatten an empty operand) */
    bool empty = false;
    int64_t osz[TS_RT_MAX_DIMS];
    for (int32_t d = 0; d < np; d++) {
      int64_t bs = 1;
      for (uint32_t i = 0; i < nops; i++)
        if (perm[i]->sizes[d] != 1) bs = perm[i]->sizes[d];
      if (bs == 0) empty = true;
      if (d < od) osz[d] = bs;
    }
    if (empty) {
      result = ts_rt_tensor_new(c, (ts_dtype)perm[0]->dtype, od, osz, true);
      ok = result != NULL;
      goto done;
    }
  }
  /* contract the first two, the product first again, until one is left;
   * a dim is summed once no other operand has it */
  uint32_t first = 0;
  while (nops - first > 1) {
    ts_rt_tensor *a = perm[first], *b = perm[first + 1];
    perm[first] = perm[first + 1] = NULL;
    bool sum[TS_RT_MAX_DIMS] = {0}, asum[TS_RT_MAX_DIMS] = {0}, bsum[TS_RT_MAX_DIMS] = {0};
    bool any_a = false, any_b = false;
    for (int32_t d = od; d < np; d++) {
      if (a->sizes[d] != 1 && b->sizes[d] != 1) {
        if (--dim_counts[d] == 1) sum[d] = true, dim_counts[d] = 0;
      } else if (dim_counts[d] == 1) {
        if (a->sizes[d] != 1) asum[d] = any_a = true, dim_counts[d] = 0;
        else if (b->sizes[d] != 1) bsum[d] = any_b = true, dim_counts[d] = 0;
      }
    }
    bool okp = (!any_a || es_set(&a, es_sum_keep(c, a, asum, np))) && (!any_b || es_set(&b, es_sum_keep(c, b, bsum, np)));
    ts_rt_tensor *r = okp ? es_sumproduct(c, a, b, sum, np) : NULL;
    if (a) ts_rt_tensor_release(a);
    if (b) ts_rt_tensor_release(b);
    if (!r) goto done;
    perm[++first] = r;
  }
  result = perm[first];
  perm[first] = NULL;
  if (np > od) {
    if (nops > 1) {
      /* every contraction dim is 1 now: a view without them */
      ts_rt_tensor *v = ts_rt_tensor_view(c, result, result->offset, od, result->sizes, result->strides);
      if (!es_set(&result, v)) goto done;
    } else {
      int64_t dims[TS_RT_MAX_DIMS];
      for (int32_t d = od; d < np; d++) dims[d - od] = d;
      if (!es_set(&result, ts_rt_sum(c, result, dims, (uint32_t)(np - od), false, TS_DT_NONE))) goto done;
    }
  }
  ok = true;
done:
  for (uint32_t i = 0; i < nops; i++)
    if (perm[i]) ts_rt_tensor_release(perm[i]);
  ts_rt_free(e);
  if (!ok) {
    if (result) ts_rt_tensor_release(result);
    return false;
  }
  call->out[0] = ts_iv_tensor(result);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_einsum[] = {
    {"aten::einsum", es_k_einsum},
    {NULL, NULL},
};
