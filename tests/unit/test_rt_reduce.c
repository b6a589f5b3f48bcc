/* tests/unit/test_rt_reduce.c: the reduction kernels (kernels/reduce.c):
 * several dims with keepdim over a transposed (non-contiguous) input, dtype
 * rules (int sums widen to int64, mean of ints fails), max/min with
 * indices, any/all, std/var with corrections, norm, logsumexp, cumsum,
 * cumprod, sort/argsort/topk with ties (in the order PyTorch's unstable
 * algorithms give them), empty tensors, float64 and float16.
 *
 * Expected values come from PyTorch 1.13 (/usr/bin/python3, torch). Inputs
 * are made by seq() below, which is this Python function:
 *
 *   def seq(*shape, dt=torch.float32, m=37, mod=17, off=8, div=4.0):
 *       n = math.prod(shape)
 *       return torch.tensor([((i*m)%mod-off)/div for i in range(n)],
 *                           dtype=torch.float64).reshape(shape).to(dt)
 *
 * and each expected array names the expression it is the result of.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tensor_ops.h"
#include "test.h"

static ts_rt_ctx C;

/* clang-format off */
/* torch.sum(seq(3,4,5).transpose(0,2), (0,2), keepdim=True) -> float32 */
static const int64_t S_sum_k[] = {1, 4, 1};
static const double E_sum_k[] = {-3.5, 1.75, -1.5, -0.5};
/* torch.mean(seq(3,4,5).transpose(0,2), (-1,0)) -> float32 */
static const int64_t S_mean_d[] = {4};
static const double E_mean_d[] = {-0.23333333432674408, 0.11666666716337204, -0.10000000149011612, -0.03333333507180214};
/* torch.sum(seq(2,3,div=1).int(), 1) -> int64 */
static const int64_t S_sum_i32[] = {2};
static const double E_sum_i32[] = {-15.0, 12.0};
/* torch.prod(seq(3,4,5).transpose(0,2), 1, keepdim=True) -> float32 */
static const int64_t S_prod_k[] = {5, 1, 3};
static const double E_prod_k[] = {-3.28125, -0.05859375, -5.25, 6.5625, -0.0, -5.25, 1.5, 0.41015625, 0.41015625, -0.05859375, -5.25, 0.0, -0.0, -5.25, -0.05859375};
/* torch.max(seq(3,4,5).transpose(0,2), 1)[0] -> float32 */
static const int64_t S_maxd_v[] = {5, 3};
static const double E_maxd_v[] = {1.75, 0.25, 2.0, 2.0, 1.0, 1.75, -0.5, 1.75, -0.25, 0.25, 2.0, 0.5, 1.0, 1.75, 1.25};
/* torch.max(seq(3,4,5).transpose(0,2), 1)[1] -> int64 */
static const int64_t S_maxd_i[] = {5, 3};
static const double E_maxd_i[] = {1.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 3.0, 0.0};
/* torch.min(seq(3,4,5).transpose(0,2), 0, True)[0] -> float32 */
static const int64_t S_mind_v[] = {1, 4, 3};
static const double E_mind_v[] = {-2.0, -1.75, -1.75, -1.75, -1.5, -1.5, -1.5, -2.0, -2.0, -2.0, -1.25, -1.75};
/* torch.min(seq(3,4,5).transpose(0,2), 0, True)[1] -> int64 */
static const int64_t S_mind_i[] = {1, 4, 3};
static const double E_mind_i[] = {0.0, 3.0, 0.0, 1.0, 4.0, 1.0, 2.0, 4.0, 1.0, 2.0, 0.0, 2.0};
/* torch.amax(seq(3,4,5).transpose(0,2), (0,1)) -> float32 */
static const int64_t S_amax[] = {3};
static const double E_amax[] = {2.0, 2.0, 2.0};
/* torch.argmax(seq(3,4,5).transpose(0,2)) -> int64 */
static const int64_t S_argmax_all[] = {0};
static const double E_argmax_all[] = {5.0};
/* torch.argmin(seq(3,4,5).transpose(0,2), 2, True) -> int64 */
static const int64_t S_argmin_d[] = {5, 4, 1};
static const double E_argmin_d[] = {0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0};
/* torch.any(seq(3,4,5).transpose(0,2) > 1.5, 1) -> bool */
static const int64_t S_any_d[] = {5, 3};
static const double E_any_d[] = {1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0};
/* torch.all(seq(3,4,5).transpose(0,2) > -1.5, 0) -> bool */
static const int64_t S_all_d[] = {4, 3};
static const double E_all_d[] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
/* torch.std(seq(3,4,5).transpose(0,2), (0,1), True, True) -> float32 */
static const int64_t S_std_d[] = {1, 1, 3};
static const double E_std_d[] = {1.2692595720291138, 1.2391635179519653, 1.2391635179519653};
/* torch.var(seq(3,4,5).transpose(0,2), (2,), correction=0) -> float32 */
static const int64_t S_var_c[] = {5, 4};
static const double E_var_c[] = {1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 2.6666667461395264, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824, 1.0138888359069824};
/* torch.std(seq(3,4,5).transpose(0,2)) -> float32 */
static const int64_t S_std_all[] = {0};
static const double E_std_all[] = {1.2373298406600952};
/* torch.norm(seq(3,4,5).transpose(0,2), 2, (0,2)) -> float32 */
static const int64_t S_norm2[] = {4};
static const double E_norm2[] = {4.582575798034668, 4.789310932159424, 4.886205196380615, 4.769696235656738};
/* torch.norm(seq(3,4,5).transpose(0,2), 1, 1, True) -> float32 */
static const int64_t S_norm1[] = {5, 1, 3};
static const double E_norm1[] = {5.75, 2.5, 6.25, 6.5, 2.0, 6.25, 5.0, 4.0, 4.0, 2.5, 6.25, 2.0, 2.0, 6.25, 2.5};
/* torch.norm(seq(3,4,5).transpose(0,2), float('inf'), (0,)) -> float32 */
static const int64_t S_norminf[] = {4, 3};
static const double E_norminf[] = {2.0, 1.75, 1.75, 1.75, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.75, 1.75};
/* torch.logsumexp(seq(3,4,5).transpose(0,2), (0,1)) -> float32 */
static const int64_t S_lse[] = {3};
static const double E_lse[] = {3.5250778198242188, 3.7538464069366455, 3.5336427688598633};
/* torch.cumsum(seq(2,3,div=1).int(), 1) -> int64 */
static const int64_t S_cumsum_i[] = {2, 3};
static const double E_cumsum_i[] = {-8.0, -13.0, -15.0, 1.0, 5.0, 12.0};
/* torch.cumprod(seq(3,4,5).transpose(0,2), 0) -> float32 */
static const int64_t S_cumprod[] = {5, 4, 3};
static const double E_cumprod[] = {-2.0, 0.25, -1.75, 1.75, -0.25, 2.0, 1.25, -0.75, 1.5, 0.75, -1.25, 1.0, 2.5, 0.25, 1.75, -3.0625, -0.125, -3.0, 2.5, -0.0, -3.0, 1.125, 0.625, 1.75, -1.25, 0.4375, -0.4375, 3.0625, -0.15625, 2.25, -3.75, -0.0, 3.75, -2.25, 0.15625, -3.0625, -0.3125, -0.765625, -0.21875, -0.765625, -0.3125, 0.0, 2.8125, -0.0, -1.875, 2.8125, 0.15625, 3.0625, -0.3125, 0.765625, -0.2734375, -0.3828125, 0.46875, 0.0, 0.0, 0.0, -0.46875, -1.40625, 0.2734375, -0.765625};
/* torch.topk(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), 3)[0] -> float32 */
static const int64_t S_topk_v[] = {3};
static const double E_topk_v[] = {3.0, 3.0, 3.0};
/* torch.topk(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), 3)[1] -> int64 */
static const int64_t S_topk_i[] = {3};
static const double E_topk_i[] = {1.0, 5.0, 3.0};
/* torch.topk(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), 3, largest=False)[0] -> float32 */
static const int64_t S_topks_v[] = {3};
static const double E_topks_v[] = {0.0, 1.0, 1.0};
/* torch.topk(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), 3, largest=False)[1] -> int64 */
static const int64_t S_topks_i[] = {3};
static const double E_topks_i[] = {6.0, 4.0, 0.0};
/* torch.sort(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), descending=True, stable=True)[0] -> float32 */
static const int64_t S_sortd_v[] = {7};
static const double E_sortd_v[] = {3.0, 3.0, 3.0, 2.0, 1.0, 1.0, 0.0};
/* torch.sort(torch.tensor([1.,3.,2.,3.,1.,3.,0.]), descending=True, stable=True)[1] -> int64 */
static const int64_t S_sortd_i[] = {7};
static const double E_sortd_i[] = {1.0, 3.0, 5.0, 2.0, 0.0, 4.0, 6.0};
/* torch.sort(torch.tensor([1.,3.,2.,3.,1.,3.,0.]))[1] -> int64 */
static const int64_t S_sort_i[] = {7};
static const double E_sort_i[] = {6.0, 0.0, 4.0, 2.0, 1.0, 3.0, 5.0};
/* torch.argsort(seq(3,4).t(), 0) -> int64 */
static const int64_t S_argsort[] = {4, 3};
static const double E_argsort[] = {0.0, 2.0, 0.0, 1.0, 3.0, 1.0, 2.0, 0.0, 2.0, 3.0, 1.0, 3.0};
/* torch.sum(torch.zeros(0,3), 0) -> float32 */
static const int64_t S_sum_empty[] = {3};
static const double E_sum_empty[] = {0.0, 0.0, 0.0};
/* torch.prod(torch.zeros(0,3)) -> float32 */
static const int64_t S_prod_empty[] = {0};
static const double E_prod_empty[] = {1.0};
/* torch.mean(torch.zeros(0,3), 0) -> float32 */
static const int64_t S_mean_empty[] = {3};
static const double E_mean_empty[] = {NAN, NAN, NAN};
/* torch.var(seq(3,4,dt=torch.float64), 1) -> float64 */
static const int64_t S_var_f64[] = {3};
static const double E_var_f64[] = {0.9375, 2.7083333333333335, 0.9375};
/* torch.sum(seq(3,5,dt=torch.float16), 0) -> float16 */
static const int64_t S_sum_f16[] = {5};
static const double E_sum_f16[] = {1.0, -1.0, -3.0, -0.75, 1.5};
/* torch.sum(seq(3,5) > 0) -> int64 */
static const int64_t S_sum_bool[] = {0};
static const double E_sum_bool[] = {6.0};
/* torch.sort(torch.tensor([((i*37)%17)//4 for i in range(300)]).float())[1] -> int64 */
static const int64_t S_bigsort_i[] = {300};
static const double E_bigsort_i[] = {239.0, 108.0, 221.0, 222.0, 103.0, 102.0, 227.0, 97.0, 91.0, 233.0, 86.0, 85.0, 238.0, 216.0, 80.0, 244.0, 74.0, 69.0, 68.0, 250.0, 63.0, 255.0, 256.0, 57.0, 261.0, 52.0, 193.0, 171.0, 170.0, 176.0, 165.0, 182.0, 159.0, 154.0, 153.0, 187.0, 188.0, 0.0, 148.0, 1.0, 142.0, 137.0, 136.0, 199.0, 131.0, 204.0, 205.0, 125.0, 210.0, 120.0, 119.0, 114.0, 295.0, 273.0, 17.0, 272.0, 289.0, 40.0, 18.0, 290.0, 35.0, 34.0, 12.0, 284.0, 267.0, 46.0, 51.0, 29.0, 6.0, 23.0, 278.0, 211.0, 217.0, 110.0, 132.0, 25.0, 115.0, 19.0, 212.0, 127.0, 126.0, 285.0, 206.0, 109.0, 24.0, 121.0, 7.0, 172.0, 2.0, 177.0, 166.0, 297.0, 178.0, 296.0, 161.0, 160.0, 183.0, 155.0, 200.0, 8.0, 291.0, 149.0, 189.0, 13.0, 144.0, 143.0, 194.0, 195.0, 138.0, 41.0, 58.0, 234.0, 87.0, 36.0, 47.0, 64.0, 81.0, 240.0, 280.0, 59.0, 76.0, 75.0, 42.0, 245.0, 246.0, 70.0, 251.0, 268.0, 98.0, 53.0, 279.0, 262.0, 104.0, 30.0, 223.0, 92.0, 274.0, 228.0, 257.0, 229.0, 263.0, 93.0, 253.0, 184.0, 258.0, 298.0, 173.0, 264.0, 185.0, 241.0, 252.0, 179.0, 150.0, 202.0, 219.0, 218.0, 281.0, 213.0, 224.0, 275.0, 207.0, 230.0, 286.0, 269.0, 235.0, 201.0, 236.0, 287.0, 270.0, 196.0, 190.0, 247.0, 292.0, 99.0, 139.0, 26.0, 31.0, 134.0, 133.0, 94.0, 32.0, 128.0, 60.0, 37.0, 77.0, 122.0, 117.0, 116.0, 43.0, 100.0, 48.0, 111.0, 49.0, 54.0, 105.0, 66.0, 3.0, 168.0, 167.0, 9.0, 71.0, 162.0, 82.0, 83.0, 156.0, 14.0, 151.0, 65.0, 145.0, 88.0, 20.0, 15.0, 55.0, 67.0, 61.0, 248.0, 259.0, 72.0, 73.0, 254.0, 56.0, 260.0, 38.0, 282.0, 299.0, 4.0, 5.0, 294.0, 293.0, 10.0, 288.0, 16.0, 21.0, 22.0, 50.0, 27.0, 277.0, 276.0, 33.0, 84.0, 271.0, 39.0, 44.0, 265.0, 141.0, 214.0, 118.0, 209.0, 243.0, 123.0, 124.0, 129.0, 203.0, 135.0, 197.0, 140.0, 208.0, 192.0, 191.0, 146.0, 152.0, 186.0, 157.0, 158.0, 180.0, 163.0, 175.0, 174.0, 95.0, 242.0, 78.0, 237.0, 169.0, 89.0, 90.0, 231.0, 226.0, 225.0, 101.0, 106.0, 112.0, 220.0, 107.0, 45.0, 130.0, 266.0, 164.0, 79.0, 113.0, 181.0, 249.0, 11.0, 147.0, 62.0, 232.0, 215.0, 283.0, 96.0, 198.0, 28.0};
/* torch.sort(torch.tensor([((i*37)%17)//4 for i in range(300)]).float(), descending=True)[1] -> int64 */
static const int64_t S_bigsortd_i[] = {300};
static const double E_bigsortd_i[] = {130.0, 62.0, 232.0, 215.0, 45.0, 198.0, 79.0, 249.0, 181.0, 28.0, 266.0, 96.0, 164.0, 283.0, 147.0, 11.0, 113.0, 141.0, 84.0, 118.0, 78.0, 197.0, 140.0, 73.0, 72.0, 203.0, 135.0, 208.0, 209.0, 67.0, 214.0, 123.0, 124.0, 129.0, 61.0, 220.0, 225.0, 95.0, 152.0, 157.0, 107.0, 106.0, 158.0, 163.0, 112.0, 101.0, 169.0, 192.0, 174.0, 175.0, 180.0, 90.0, 89.0, 146.0, 186.0, 191.0, 260.0, 248.0, 39.0, 288.0, 10.0, 254.0, 33.0, 282.0, 259.0, 38.0, 16.0, 27.0, 265.0, 277.0, 276.0, 22.0, 271.0, 21.0, 55.0, 50.0, 294.0, 231.0, 293.0, 4.0, 237.0, 299.0, 5.0, 226.0, 44.0, 242.0, 243.0, 56.0, 162.0, 133.0, 275.0, 298.0, 156.0, 281.0, 134.0, 151.0, 139.0, 286.0, 287.0, 150.0, 145.0, 292.0, 196.0, 224.0, 219.0, 230.0, 218.0, 235.0, 213.0, 236.0, 241.0, 207.0, 202.0, 201.0, 247.0, 167.0, 252.0, 253.0, 190.0, 185.0, 184.0, 258.0, 264.0, 179.0, 269.0, 270.0, 173.0, 168.0, 48.0, 111.0, 26.0, 105.0, 31.0, 32.0, 37.0, 100.0, 99.0, 43.0, 94.0, 128.0, 49.0, 88.0, 54.0, 60.0, 65.0, 83.0, 82.0, 66.0, 77.0, 71.0, 20.0, 9.0, 117.0, 116.0, 3.0, 122.0, 14.0, 15.0, 229.0, 75.0, 228.0, 8.0, 291.0, 58.0, 223.0, 59.0, 7.0, 217.0, 64.0, 296.0, 297.0, 212.0, 211.0, 70.0, 206.0, 2.0, 127.0, 24.0, 251.0, 268.0, 25.0, 274.0, 263.0, 262.0, 30.0, 19.0, 279.0, 257.0, 36.0, 53.0, 280.0, 41.0, 246.0, 245.0, 42.0, 240.0, 47.0, 13.0, 285.0, 234.0, 149.0, 87.0, 183.0, 143.0, 144.0, 115.0, 178.0, 177.0, 93.0, 172.0, 92.0, 110.0, 98.0, 166.0, 200.0, 104.0, 155.0, 109.0, 161.0, 160.0, 121.0, 126.0, 194.0, 138.0, 76.0, 132.0, 189.0, 195.0, 81.0, 295.0, 0.0, 6.0, 125.0, 267.0, 153.0, 154.0, 272.0, 29.0, 131.0, 261.0, 108.0, 1.0, 278.0, 284.0, 119.0, 12.0, 142.0, 137.0, 289.0, 290.0, 250.0, 23.0, 17.0, 18.0, 114.0, 136.0, 148.0, 273.0, 120.0, 188.0, 227.0, 182.0, 57.0, 222.0, 221.0, 86.0, 85.0, 63.0, 187.0, 216.0, 91.0, 193.0, 210.0, 68.0, 69.0, 80.0, 205.0, 204.0, 74.0, 199.0, 170.0, 256.0, 255.0, 34.0, 35.0, 103.0, 102.0, 40.0, 165.0, 244.0, 159.0, 171.0, 46.0, 239.0, 238.0, 97.0, 176.0, 233.0, 51.0, 52.0};
/* torch.topk(torch.tensor([((i*37)%17)//4 for i in range(200)]).float(), 2)[1] -> int64 */
static const int64_t S_bigtopk2_i[] = {2};
static const double E_bigtopk2_i[] = {28.0, 11.0};
/* torch.topk(torch.tensor([((i*37)%17)//4 for i in range(200)]).float(), 2, largest=False)[1] -> int64 */
static const int64_t S_bigtopk2s_i[] = {2};
static const double E_bigtopk2s_i[] = {0.0, 1.0};
/* torch.topk(torch.tensor([((i*37)%17)//4 for i in range(200)]).float(), 40)[1] -> int64 */
static const int64_t S_bigtopk40_i[] = {40};
static const double E_bigtopk40_i[] = {164.0, 130.0, 79.0, 198.0, 181.0, 45.0, 113.0, 96.0, 11.0, 147.0, 62.0, 28.0, 50.0, 55.0, 129.0, 44.0, 95.0, 146.0, 39.0, 38.0, 174.0, 107.0, 106.0, 90.0, 89.0, 141.0, 118.0, 56.0, 186.0, 140.0, 169.0, 61.0, 180.0, 84.0, 67.0, 78.0, 72.0, 73.0, 135.0, 4.0};
/* clang-format on */

typedef struct seqp {
  int m, mod, off;
  double div;
} seqp;
static const seqp D = {37, 17, 8, 4.0};

/* seq() of the Python above: a contiguous tensor of dtype dt. */
static ts_rt_tensor *seqt(ts_dtype dt, int32_t nd, const int64_t *sizes, seqp p) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, dt, nd, sizes, false);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < n; i++)
    ts_rt_store_f64((char *)ts_rt_tensor_data(t) + i * (int64_t)es, dt, (double)((i * p.m) % p.mod - p.off) / p.div);
  return t;
}

#define SZ(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int32_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
/* a float32 seq() tensor IValue with default parameters / given ones */
#define SEQ(...) ts_iv_tensor(seqt(TS_DT_FLOAT32, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), D))
#define SEQD(dt, p, ...) ts_iv_tensor(seqt(dt, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), p))

/* An int list IValue. */
static ts_iv ilist(int n, const int64_t *v) {
  ts_rt_list *l = ts_rt_list_new(&C, NULL, (uint32_t)n);
  for (int i = 0; i < n; i++) ts_rt_list_append(&C, l, ts_iv_int(v[i]));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}
#define IL(...) ilist(NDIM(__VA_ARGS__), SZ(__VA_ARGS__))
#define NONE ts_iv_none()
#define I(x) ts_iv_int(x)
#define F(x) ts_iv_double(x)
#define BO(x) ts_iv_bool(x)

/* Runs a kernel on in[0..n) (released after); nout results into out. */
static bool run(const char *schema, ts_iv *in, uint32_t n, ts_iv *out, uint32_t nout) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(schema);
  if (!TS_CHECK(fn != NULL)) {
    fprintf(stderr, "  no kernel for %s\n", schema);
    for (uint32_t i = 0; i < n; i++) ts_iv_release(in[i]);
    return false;
  }
  for (uint32_t i = 0; i < nout; i++) out[i] = ts_iv_none();
  ts_rt_call call = {in, n, out, nout, NULL};
  ts_rt_clear_error(&C);
  bool ok = fn(&C, &call);
  for (uint32_t i = 0; i < n; i++) ts_iv_release(in[i]);
  return ok;
}

/* Checks t's dtype, shape and values (relative tolerance tol, absolute
 * 1e-6). */
static bool same(const ts_rt_tensor *t, ts_dtype dt, const int64_t *sizes, int32_t nd, const double *want, size_t nwant,
                 double tol, int line) {
  if (!TS_CHECK(t->dtype == dt) || !TS_CHECK(t->ndim == nd)) {
    fprintf(stderr, "line %d: dtype %d ndim %d\n", line, t->dtype, t->ndim);
    return false;
  }
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) {
    if (!TS_CHECK(t->sizes[i] == sizes[i])) {
      fprintf(stderr, "line %d: size %d is %lld, want %lld\n", line, i, (long long)t->sizes[i], (long long)sizes[i]);
      return false;
    }
    n *= sizes[i];
  }
  if (!TS_CHECK((size_t)n == nwant || (n == 0 && nwant == 1))) return false;
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  size_t es = ts_dtype_size(dt);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = t->offset;
    for (int32_t i = 0; i < nd; i++) off += idx[i] * t->strides[i];
    double v = ts_rt_load_f64((char *)t->storage->data + off * (int64_t)es, dt);
    bool eq = (isnan(v) && isnan(want[k])) || v == want[k] || fabs(v - want[k]) <= tol * fabs(want[k]) + 1e-6;
    if (!TS_CHECK(eq)) {
      fprintf(stderr, "line %d: element %lld is %.10g, want %.10g\n", line, (long long)k, v, want[k]);
      return false;
    }
    for (int32_t i = nd - 1; i >= 0; i--) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
  }
  return true;
}

/* Runs schema and compares its first output with E_name (shape S_name). */
static void expect(const char *schema, ts_iv *in, uint32_t n, uint32_t which, ts_dtype dt, const int64_t *sizes,
                   int32_t nd, const double *want, size_t nwant, int line) {
  ts_iv out[2];
  uint32_t nout = strstr(schema, ".dim") && (strstr(schema, "max") || strstr(schema, "min")) ? 2 : 1;
  if (strstr(schema, "topk") || strstr(schema, "sort") == schema + 6) nout = 2;
  if (!run(schema, in, n, out, nout)) {
    fprintf(stderr, "line %d: %s failed: %s\n", line, schema, C.err.data ? C.err.data : "");
    TS_CHECK(!"kernel failed");
    return;
  }
  if (TS_CHECK(out[which].tag == TS_IV_TENSOR)) same(out[which].u.t, dt, sizes, nd, want, nwant, 1e-5, line);
  for (uint32_t i = 0; i < nout; i++) ts_iv_release(out[i]);
}

#define EXPECT(schema, ins, dt, name) EXPECT_OUT(schema, ins, 0, dt, name)
#define EXPECT_OUT(schema, ins, which, dt, name)                                                                       \
  expect(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), which, dt, S_##name,                                     \
         (int32_t)(sizeof S_##name / sizeof(int64_t)) - (S_##name[0] == 0 && sizeof S_##name == sizeof(int64_t)),      \
         E_##name, sizeof E_##name / sizeof(double), __LINE__)

/* Runs schema, expecting the error message msg. */
static void expect_err(const char *schema, ts_iv *in, uint32_t n, const char *msg, int line) {
  ts_iv out[2];
  uint32_t nout = strstr(schema, "max.dim") ? 2 : 1;
  if (run(schema, in, n, out, nout)) {
    fprintf(stderr, "line %d: %s succeeded, expected an error\n", line, schema);
    TS_CHECK(!"expected an error");
    for (uint32_t i = 0; i < nout; i++) ts_iv_release(out[i]);
    return;
  }
  if (!TS_CHECK_STREQ(C.err.data, msg)) fprintf(stderr, "  (line %d)\n", line);
}
#define EXPECT_ERR(schema, ins, msg) expect_err(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), msg, __LINE__)


/* seq(3,4,5).transpose(0,2), or (pred >= 0) a bool tensor of
 * seq(...) > thr (pred 1) / seq(...) > -thr... as the Python says. */
static ts_iv TR(ts_dtype dt, int pred, double thr) {
  ts_rt_tensor *s = seqt(TS_DT_FLOAT32, 3, SZ(3, 4, 5), D);
  if (pred) {
    ts_rt_tensor *b = ts_rt_tensor_new(&C, TS_DT_BOOL, 3, SZ(3, 4, 5), false);
    for (int64_t i = 0; i < 60; i++) ((bool *)ts_rt_tensor_data(b))[i] = ((float *)ts_rt_tensor_data(s))[i] > thr;
    ts_rt_tensor_release(s);
    s = b;
  } else if (dt != TS_DT_FLOAT32) {
    ts_rt_tensor *b = ts_rt_tensor_to_dtype(&C, s, dt);
    ts_rt_tensor_release(s);
    s = b;
  }
  ts_rt_tensor *t = ts_rt_transpose(&C, s, 0, 2);
  ts_rt_tensor_release(s);
  return ts_iv_tensor(t);
}
#define T3 TR(TS_DT_FLOAT32, 0, 0)

/* torch.tensor(v) for a short float list */
static ts_iv vec(int n, const double *v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, (int64_t[]){n}, false);
  for (int i = 0; i < n; i++) ((float *)ts_rt_tensor_data(t))[i] = (float)v[i];
  return ts_iv_tensor(t);
}
#define TIES vec(7, (const double[]){1, 3, 2, 3, 1, 3, 0})

/* torch.tensor([((i*37)%17)//4 for i in range(n)]).float() */
static ts_iv tiesn(int n) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, (int64_t[]){n}, false);
  for (int i = 0; i < n; i++) ((float *)ts_rt_tensor_data(t))[i] = (float)(((i * 37) % 17) / 4);
  return ts_iv_tensor(t);
}

static void test_reduce(void) {
  ts_iv a[] = {T3, IL(0, 2), BO(true), NONE};
  EXPECT("aten::sum.dim_IntList", a, TS_DT_FLOAT32, sum_k);
  ts_iv b[] = {T3, IL(-1, 0), BO(false), NONE};
  EXPECT("aten::mean.dim", b, TS_DT_FLOAT32, mean_d);
  seqp pi = {37, 17, 8, 1.0};
  ts_iv c[] = {SEQD(TS_DT_INT32, pi, 2, 3), IL(1), BO(false), NONE};
  EXPECT("aten::sum.dim_IntList", c, TS_DT_INT64, sum_i32);
  ts_iv d[] = {T3, I(1), BO(true), NONE};
  EXPECT("aten::prod.dim_int", d, TS_DT_FLOAT32, prod_k);
  ts_iv e1[] = {T3, I(1), BO(false)};
  EXPECT_OUT("aten::max.dim", e1, 0, TS_DT_FLOAT32, maxd_v);
  ts_iv e2[] = {T3, I(1), BO(false)};
  EXPECT_OUT("aten::max.dim", e2, 1, TS_DT_INT64, maxd_i);
  ts_iv e3[] = {T3, I(0), BO(true)};
  EXPECT_OUT("aten::min.dim", e3, 0, TS_DT_FLOAT32, mind_v);
  ts_iv e4[] = {T3, I(0), BO(true)};
  EXPECT_OUT("aten::min.dim", e4, 1, TS_DT_INT64, mind_i);
  ts_iv f[] = {T3, IL(0, 1), BO(false)};
  EXPECT("aten::amax", f, TS_DT_FLOAT32, amax);
  ts_iv g[] = {T3, NONE, BO(false)};
  EXPECT("aten::argmax", g, TS_DT_INT64, argmax_all);
  ts_iv h[] = {T3, I(2), BO(true)};
  EXPECT("aten::argmin", h, TS_DT_INT64, argmin_d);
  ts_iv i1[] = {TR(TS_DT_BOOL, 1, 1.5), I(1), BO(false)};
  EXPECT("aten::any.dim", i1, TS_DT_BOOL, any_d);
  ts_iv i2[] = {TR(TS_DT_BOOL, 1, -1.5), I(0), BO(false)};
  EXPECT("aten::all.dim", i2, TS_DT_BOOL, all_d);
  ts_iv j1[] = {T3, IL(0, 1), BO(true), BO(true)};
  EXPECT("aten::std.dim", j1, TS_DT_FLOAT32, std_d);
  ts_iv j2[] = {T3, IL(2), I(0), BO(false)};
  EXPECT("aten::var.correction", j2, TS_DT_FLOAT32, var_c);
  ts_iv j3[] = {T3, BO(true)};
  EXPECT("aten::std", j3, TS_DT_FLOAT32, std_all);
  ts_iv k1[] = {T3, I(2), IL(0, 2), BO(false)};
  EXPECT("aten::norm.ScalarOpt_dim", k1, TS_DT_FLOAT32, norm2);
  ts_iv k2[] = {T3, I(1), IL(1), BO(true)};
  EXPECT("aten::norm.ScalarOpt_dim", k2, TS_DT_FLOAT32, norm1);
  ts_iv k3[] = {T3, F(INFINITY), IL(0), BO(false)};
  EXPECT("aten::norm.ScalarOpt_dim", k3, TS_DT_FLOAT32, norminf);
  ts_iv l[] = {T3, IL(0, 1), BO(false)};
  EXPECT("aten::logsumexp", l, TS_DT_FLOAT32, lse);
  ts_iv m1[] = {SEQD(TS_DT_INT32, pi, 2, 3), I(1), NONE};
  EXPECT("aten::cumsum", m1, TS_DT_INT64, cumsum_i);
  ts_iv m2[] = {T3, I(0), NONE};
  EXPECT("aten::cumprod", m2, TS_DT_FLOAT32, cumprod);
  ts_iv n1[] = {SEQD(TS_DT_FLOAT64, D, 3, 4), IL(1), BO(true), BO(false)};
  EXPECT("aten::var.dim", n1, TS_DT_FLOAT64, var_f64);
  ts_iv n2[] = {SEQD(TS_DT_FLOAT16, D, 3, 5), IL(0), BO(false), NONE};
  EXPECT("aten::sum.dim_IntList", n2, TS_DT_FLOAT16, sum_f16);
  ts_rt_tensor *sb = seqt(TS_DT_FLOAT32, 2, SZ(3, 5), D), *bb = ts_rt_tensor_new(&C, TS_DT_BOOL, 2, SZ(3, 5), false);
  for (int64_t i = 0; i < 15; i++) ((bool *)ts_rt_tensor_data(bb))[i] = ((float *)ts_rt_tensor_data(sb))[i] > 0;
  ts_rt_tensor_release(sb);
  ts_iv n3[] = {ts_iv_tensor(bb), NONE};
  EXPECT("aten::sum", n3, TS_DT_INT64, sum_bool);
}

static void test_sort(void) {
  ts_iv a1[] = {TIES, I(3), I(-1), BO(true), BO(true)};
  EXPECT_OUT("aten::topk", a1, 0, TS_DT_FLOAT32, topk_v);
  ts_iv a2[] = {TIES, I(3), I(-1), BO(true), BO(true)};
  EXPECT_OUT("aten::topk", a2, 1, TS_DT_INT64, topk_i);
  ts_iv a3[] = {TIES, I(3), I(-1), BO(false), BO(true)};
  EXPECT_OUT("aten::topk", a3, 0, TS_DT_FLOAT32, topks_v);
  ts_iv a4[] = {TIES, I(3), I(-1), BO(false), BO(true)};
  EXPECT_OUT("aten::topk", a4, 1, TS_DT_INT64, topks_i);
  ts_iv b1[] = {TIES, BO(true), I(-1), BO(true)};
  EXPECT_OUT("aten::sort.stable", b1, 0, TS_DT_FLOAT32, sortd_v);
  ts_iv b2[] = {TIES, BO(true), I(-1), BO(true)};
  EXPECT_OUT("aten::sort.stable", b2, 1, TS_DT_INT64, sortd_i);
  ts_iv b3[] = {TIES, I(-1), BO(false)};
  EXPECT_OUT("aten::sort", b3, 1, TS_DT_INT64, sort_i);
  ts_rt_tensor *s = seqt(TS_DT_FLOAT32, 2, SZ(3, 4), D), *st = ts_rt_transpose(&C, s, 0, 1);
  ts_rt_tensor_release(s);
  ts_iv c[] = {ts_iv_tensor(st), I(0), BO(false)};
  EXPECT("aten::argsort", c, TS_DT_INT64, argsort);
  ts_iv d1[] = {tiesn(300), I(-1), BO(false)};
  EXPECT_OUT("aten::sort", d1, 1, TS_DT_INT64, bigsort_i);
  ts_iv d2[] = {tiesn(300), I(-1), BO(true)};
  EXPECT_OUT("aten::sort", d2, 1, TS_DT_INT64, bigsortd_i);
  ts_iv d3[] = {tiesn(200), I(2), I(-1), BO(true), BO(true)};
  EXPECT_OUT("aten::topk", d3, 1, TS_DT_INT64, bigtopk2_i);
  ts_iv d4[] = {tiesn(200), I(2), I(-1), BO(false), BO(true)};
  EXPECT_OUT("aten::topk", d4, 1, TS_DT_INT64, bigtopk2s_i);
  ts_iv d5[] = {tiesn(200), I(40), I(-1), BO(true), BO(true)};
  EXPECT_OUT("aten::topk", d5, 1, TS_DT_INT64, bigtopk40_i);
  ts_iv e1[] = {TIES, I(8), I(-1), BO(true), BO(true)};
  EXPECT_ERR("aten::topk", e1, "selected index k out of range");
}

static void test_empty_and_errors(void) {
  ts_rt_tensor *z = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 2, SZ(0, 3), true);
  ts_rt_tensor_retain(z);
  ts_rt_tensor_retain(z);
  ts_rt_tensor_retain(z);
  ts_rt_tensor_retain(z);
  ts_rt_tensor_retain(z);
  ts_iv a[] = {ts_iv_tensor(z), IL(0), BO(false), NONE};
  EXPECT("aten::sum.dim_IntList", a, TS_DT_FLOAT32, sum_empty);
  ts_iv b[] = {ts_iv_tensor(z), NONE};
  EXPECT("aten::prod", b, TS_DT_FLOAT32, prod_empty);
  ts_iv c[] = {ts_iv_tensor(z), IL(0), BO(false), NONE};
  EXPECT("aten::mean.dim", c, TS_DT_FLOAT32, mean_empty);
  /* torch.max(torch.ones(0,3)) */
  ts_iv d[] = {ts_iv_tensor(z)};
  EXPECT_ERR("aten::max", d,
             "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
             "'dim' argument.");
  /* torch.max(torch.ones(0,3),0) */
  ts_iv e[] = {ts_iv_tensor(z), I(0), BO(false)};
  EXPECT_ERR("aten::max.dim", e, "max(): Expected reduction dim 0 to have non-zero size.");
  /* torch.argmax(torch.ones(0,3)) */
  ts_iv f[] = {ts_iv_tensor(z), NONE, BO(false)};
  EXPECT_ERR("aten::argmax", f, "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  seqp pi = {37, 17, 8, 1.0};
  ts_iv g[] = {SEQD(TS_DT_INT64, pi, 3), NONE};
  EXPECT_ERR("aten::mean", g,
             "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
             "Got: Long");
  ts_iv h[] = {SEQD(TS_DT_INT64, pi, 3), BO(true)};
  EXPECT_ERR("aten::std", h, "std and var only support floating point and complex dtypes");
  ts_iv i[] = {SEQ(2, 3), IL(0, 0), BO(false), NONE};
  EXPECT_ERR("aten::sum.dim_IntList", i, "dim 0 appears multiple times in the list of dims");
}

int main(void) {
  ts_rt_ctx_init(&C, 4);
  ts_diag dg;
  memset(&dg, 0, sizeof dg);
  if (!TS_CHECK(ts_rt_kernels_init(&dg))) {
    fprintf(stderr, "%s\n", dg.text.data ? dg.text.data : "");
    ts_diag_free(&dg);
    return ts_test_finish();
  }
  ts_diag_free(&dg);
  test_reduce();
  test_sort();
  test_empty_and_errors();
  ts_rt_ctx_free(&C);
  return ts_test_finish();
}
