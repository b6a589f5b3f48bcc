/* tests/unit/test_rt_nn.c: the nn kernels (kernels/nn.c, conv.c, pool.c,
 * norm.c): matmul in every rank combination, linear, addmm, baddbmm,
 * convolution (groups, stride, padding, dilation, depthwise, 'same', 1x1,
 * 1-d, float64, transposed), batch/layer/group/instance norm, pooling (ceil_mode,
 * padding, adaptive with non-divisible sizes), softmax, padding modes,
 * embedding, upsampling, dropout, and PyTorch's error messages.
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
/* F.conv2d(seq(1,4,5,5), seq(6,2,3,3,m=11,mod=7,off=3), seq(6,m=5,mod=3,off=1), stride=2, padding=1, groups=2) */
static const int64_t S_conv_g2[] = {1, 6, 3, 3};
static const double E_conv_g2[] = {-2.4375, -0.625, 2.125, 2.4375, 1.9375, -1.4375, 0.375, -3.375, 0.3125, -1.625, -1.125, -0.5625, 2.625, -2.4375, 3.0, 2.8125, -0.375, 0.6875, -0.25, 0.6875, 0.375, -1.0, -1.4375, 1.0, -1.625, 2.3125, -1.0, -0.25, -1.25, -1.4375, -3.375, 1.875, -2.125, 2.0625, 4.25, -0.5, 1.8125, -0.1875, -0.6875, -3.0, -0.6875, 0.375, 0.5, -1.8125, 2.9375, -0.8125, 3.1875, 0.625, -0.75, 5.1875, -0.5, -0.9375, -3.375, -0.9375};
/* F.conv2d(seq(2,3,6,7), seq(4,3,3,2,m=11,mod=7,off=3), None, stride=(1,2), padding=(2,1), dilation=(2,1)) */
static const int64_t S_conv_dil[] = {2, 4, 6, 4};
static const double E_conv_dil[] = {-1.3125, 1.75, -0.375, -1.4375, -0.0625, 0.6875, 0.6875, -1.4375, 0.875, -3.0625, 1.5, -2.4375, -1.5625, -0.375, 2.0625, 0.25, 0.25, -1.375, 4.1875, -4.0625, 0.0, -0.5, -1.3125, -1.0625, 3.625, 0.25, 3.0, 1.5, -1.625, 1.375, -1.1875, -0.5625, -3.3125, -0.4375, -0.8125, -0.125, -0.125, 3.5625, 1.0625, -2.5, -1.375, -0.1875, -1.5, 2.5, 0.6875, -1.0625, -1.3125, -0.5, 1.125, 0.0625, -1.9375, 1.375, 0.3125, -0.5625, -0.4375, 0.75, 0.375, 1.75, -3.5625, 1.75, 1.75, -0.375, -0.375, 1.75, -0.375, 1.0, -0.1875, 0.75, 0.5, 0.5625, 0.4375, 1.375, -1.375, -1.0, -0.75, -0.5, 0.5, -1.1875, 1.1875, 2.5, -0.3125, -2.1875, 2.4375, -2.5, 1.0, -3.0, -0.5, -0.125, 2.375, 1.75, 1.125, -0.5625, -1.875, -0.4375, 0.0, 1.5, -0.0625, 0.6875, 0.6875, -1.4375, 1.1875, -1.4375, 0.6875, -1.4375, -1.5625, -0.375, 2.0625, 0.25, -0.8125, -0.875, 2.625, -3.4375, 0.0, -0.5, -1.3125, -1.0625, -0.25, 2.5, -1.5, -0.1875, -1.625, 1.375, -1.1875, -0.5625, -2.625, -0.6875, -3.25, 1.625, -0.125, 3.5625, 1.0625, -2.5, -0.125, 0.125, -1.3125, 2.5625, 0.6875, -1.0625, -1.3125, -0.5, 1.6875, -4.0625, 4.1875, -1.375, 0.3125, -0.5625, -0.4375, 0.75, 0.5625, 0.9375, -1.0625, 1.1875, 1.75, -0.375, -0.375, 1.75, 1.0, 0.6875, 1.75, 0.6875, 0.5, 0.5625, 0.4375, 1.375, -0.75, 1.1875, -1.0625, 0.9375, 0.5, -1.1875, 1.1875, 2.5, 0.25, -1.375, 4.1875, -4.0625, 1.0, -3.0, -0.5, -0.125, 1.25, 2.5625, -1.3125, 0.125, -1.875, -0.4375, 0.0, 1.5, -1.875, 1.625, -3.25, -0.6875};
/* F.conv2d(seq(1,3,5,5), seq(6,1,3,3,m=11,mod=7,off=3), seq(6,m=5,mod=3,off=1), stride=2, padding=1, groups=3) */
static const int64_t S_conv_dw[] = {1, 6, 3, 3};
static const double E_conv_dw[] = {-2.4375, 0.125, -0.75, 2.0625, 2.9375, 0.0625, -0.125, -2.5, -0.0625, -0.5625, -0.9375, 0.125, 0.4375, 3.5, 0.0, -0.5, 0.875, -0.6875, -0.125, -0.125, -0.625, -0.9375, 0.4375, -2.25, -0.0625, 1.0, 1.0, -0.5, -1.5, -0.875, 0.5625, -1.4375, 2.0, 2.1875, 0.4375, -0.8125, 0.75, -1.4375, 1.25, 0.625, 3.0625, 1.125, 0.25, -0.625, -1.375, -1.5625, -0.6875, 0.1875, 0.8125, -0.4375, 0.5, 1.0, -1.8125, 0.625};
/* F.conv2d(seq(1,2,5,5), seq(3,2,4,4,m=11,mod=7,off=3), None, padding='same') */
static const int64_t S_conv_same[] = {1, 3, 5, 5};
static const double E_conv_same[] = {-4.5625, 2.4375, 3.125, -4.875, 1.875, 1.8125, 2.625, 4.375, -1.125, -0.875, 4.875, -3.5, 1.4375, 3.625, -3.8125, -0.1875, 5.0, -3.6875, 1.375, -0.1875, -5.0, 3.9375, 1.9375, -0.0625, 0.3125, 0.0625, 2.8125, -3.875, 0.0, 0.5625, -7.1875, 1.6875, 0.4375, -3.9375, 3.0625, 4.5, -3.5, 3.75, -3.125, 1.75, 3.875, -3.4375, 1.5, 2.3125, -2.375, 1.5625, 4.0, -3.625, 0.5, -1.125, 1.1875, -4.6875, 0.9375, 1.375, -3.8125, 1.3125, 1.625, -2.625, 1.125, 0.4375, -8.125, 4.8125, -0.5, -1.125, 1.625, 2.25, -1.375, 3.625, -1.5625, -0.1875, 1.125, -5.125, 3.9375, 2.8125, -1.25};
/* F.conv2d(seq(1,3,4,4), seq(5,3,1,1,m=11,mod=7,off=3), seq(5,m=5,mod=3,off=1)) */
static const int64_t S_conv_1x1[] = {1, 5, 4, 4};
static const double E_conv_1x1[] = {1.25, -0.5625, 0.8125, 0.0625, -0.6875, -1.4375, 1.0, -0.8125, 0.5625, -0.1875, -0.9375, -1.6875, 0.75, -1.0625, 0.3125, -0.4375, -0.5625, 1.25, -1.1875, -0.4375, 0.3125, 1.0625, -0.3125, 1.5, -0.9375, -0.1875, 0.5625, 1.3125, -0.0625, 1.75, -0.6875, 0.0625, -0.9375, 1.875, 0.4375, 0.0625, -0.3125, -0.6875, -1.0625, 1.75, 0.3125, -0.0625, -0.4375, -0.8125, -1.1875, 1.625, 0.1875, -0.1875, 1.3125, -1.0, -0.125, -0.3125, -0.5, -0.6875, 1.25, -1.0625, -0.1875, -0.375, -0.5625, -0.75, 1.1875, -1.125, -0.25, -0.4375, -1.8125, -1.8125, 1.375, 1.375, 1.375, 1.375, -1.8125, -1.8125, 1.375, 1.375, 1.375, 1.375, -1.8125, -1.8125, 1.375, 1.375};
/* F.conv1d(seq(2,2,7), seq(3,2,3,m=11,mod=7,off=3), seq(3,m=5,mod=3,off=1), stride=2, padding=1) */
static const int64_t S_conv1d[] = {2, 3, 4};
static const double E_conv1d[] = {-0.0625, 1.125, -2.0625, -2.5625, 1.0, 0.75, 0.6875, 1.9375, 1.3125, -0.8125, -2.5625, 1.3125, 0.4375, 1.125, 1.125, 0.125, 0.5, -2.875, 1.3125, 0.4375, -0.1875, 2.875, -1.0, -0.875};
/* F.conv2d(seq(1,2,4,4,dt=torch.float64), seq(2,2,3,3,m=11,mod=7,off=3,dt=torch.float64), None, padding=1) */
static const int64_t S_conv_f64[] = {1, 2, 4, 4};
static const double E_conv_f64[] = {1.125, -0.3125, -1.875, 0.8125, 2.375, -2.3125, 3.6875, -0.5, -0.9375, 1.5, 0.0625, -0.9375, 0.1875, 1.4375, -1.9375, -0.8125, 1.6875, -2.375, 3.8125, 1.5, -3.25, 0.8125, 0.625, 0.5, 1.0, 2.1875, -5.4375, 0.1875, 1.875, 0.125, 1.3125, 0.8125};
/* F.batch_norm(seq(2,3,2,2), seq(3,m=5,mod=3,off=-2), seq(3,m=5,mod=3,off=-1), seq(3,m=7,mod=5,off=-2), seq(3,m=5,mod=3,off=1), False, 0.1, 1e-5) */
static const int64_t S_bn_eval[] = {2, 3, 2, 2};
static const double E_bn_eval[] = {-2.7499499320983887, -1.999964952468872, -1.2499799728393555, -0.49999499320983887, 0.25, 1.1160197257995605, -2.925405502319336, -2.0593857765197754, -2.1212990283966064, -0.5303248167037964, 1.0606493949890137, 2.6516237258911133, -2.249959945678711, -1.4999749660491943, -0.7499899864196777, -5.0067901611328125e-06, 0.8273464441299438, -3.214078664779663, -2.3480589389801025, -1.4820393323898315, -1.0606496334075928, 0.5303246974945068, 2.1212990283966064, -5.303247451782227};
/* F.batch_norm(seq(2,3,2,2), None, None, None, None, True, 0.1, 1e-5) */
static const int64_t S_bn_train[] = {2, 3, 2, 2};
static const double E_bn_train[] = {-1.571418285369873, -0.7142810225486755, 0.14285624027252197, 0.9999935030937195, 0.9188553094863892, 1.4567217826843262, -1.0533218383789062, -0.5154553651809692, -0.7456941604614258, -0.08285492658615112, 0.5799843072891235, 1.2428234815597534, -0.9999934434890747, -0.1428561806678772, 0.7142810821533203, 1.571418285369873, 1.277432918548584, -1.2326107025146484, -0.6947442293167114, -0.15687772631645203, -0.3038013279438019, 0.3590378761291504, 1.0218770503997803, -2.0713725090026855};
/* F.layer_norm(seq(2,3,4), (3,4), seq(3,4,m=5,mod=3,off=-2), seq(3,4,m=7,mod=5,off=2), 1e-5) */
static const int64_t S_ln[] = {2, 3, 4};
static const double E_ln[] = {-1.2770262956619263, -0.9712828397750854, 0.20861513912677765, -0.15287169814109802, 1.0270262956619263, 0.51984703540802, -0.6798980236053467, -0.27702629566192627, -0.3956924080848694, 0.44425657391548157, 0.4712828993797302, 1.1655395030975342, -1.0257997512817383, -0.4409933090209961, 0.6272096037864685, 0.14010947942733765, 1.6408250331878662, -1.594002604484558, -0.4240320324897766, 0.26254206895828247, 0.029861152172088623, 0.7418771982192993, 1.0943604707717896, -0.9413511157035828};
/* F.group_norm(seq(2,4,3), 2, seq(4,m=5,mod=3,off=-2), seq(4,m=7,mod=5,off=2), 1e-5) */
static const int64_t S_gn[] = {2, 4, 3};
static const double E_gn[] = {-1.2319228649139404, -0.9391537308692932, -0.646384596824646, 0.2927691340446472, 0.8783074617385864, 1.4638457298278809, -0.5978842973709106, -0.15873056650161743, 0.2804231345653534, -0.10361543297767639, 0.18915371596813202, 0.48192286491394043, -0.9773944616317749, -0.6704980134963989, -0.36360156536102295, 0.8865897059440613, 1.5003825426101685, -1.3639841079711914, -0.21609169244766235, 0.2442529797554016, 0.7045976519584656, 0.19329485297203064, 0.5001912713050842, -0.9319920539855957};
/* F.instance_norm(seq(2,3,4)) */
static const int64_t S_inorm[] = {2, 3, 4};
static const double E_inorm[] = {-1.341631293296814, -0.447210431098938, 0.447210431098938, 1.341631293296814, 0.7016446590423584, 1.2278780937194824, -1.2278780937194824, -0.7016446590423584, -1.341631293296814, -0.447210431098938, 0.447210431098938, 1.341631293296814, -1.341631293296814, -0.447210431098938, 0.447210431098938, 1.341631293296814, 1.5822242498397827, -1.1027623414993286, -0.5274080634117126, 0.04794618487358093, -0.04794618487358093, 0.5274080634117126, 1.1027623414993286, -1.5822242498397827};
/* F.max_pool2d(seq(1,2,5,5), 2, 2, 0, 1, True) */
static const int64_t S_maxpool_ceil[] = {1, 2, 3, 3};
static const double E_maxpool_ceil[] = {1.75, 0.25, 1.0, 2.0, -0.75, 0.0, 1.0, 1.75, -1.0, 0.5, 2.0, -1.5, -0.5, 1.0, 1.75, 2.0, 0.0, 0.75};
/* F.max_pool2d(seq(1,1,5,6), 3, 2, 1, 2, False) */
static const int64_t S_maxpool_pad[] = {1, 1, 2, 2};
static const double E_maxpool_pad[] = {1.0, 2.0, 1.0, 2.0};
/* F.avg_pool2d(seq(1,2,5,5), 2, 2, 0, True, True) */
static const int64_t S_avgpool_ceil[] = {1, 2, 3, 3};
static const double E_avgpool_ceil[] = {-0.8125, -0.375, 0.75, 1.375, -1.375, -0.25, 0.625, 0.0, -1.0, -0.125, 1.375, -1.75, -1.125, 0.375, 1.5, 0.25, -0.375, 0.75};
/* F.avg_pool2d(seq(1,1,5,6), 3, 2, 1, True, False) */
static const int64_t S_avgpool_nopad[] = {1, 1, 3, 4};
static const double E_avgpool_nopad[] = {-1.5, -0.375, 1.125, 1.875, -1.125, 0.0, 0.5555555820465088, -0.5833333134651184, -0.75, 0.375, 0.4583333432674408, -1.625};
/* F.avg_pool2d(seq(1,1,4,4), 2, 1, 1, False, True, 3) */
static const int64_t S_avgpool_div[] = {1, 1, 5, 5};
static const double E_avgpool_div[] = {-0.6666666865348816, -1.0833333730697632, -0.5833333134651184, -0.0833333358168602, 0.0833333358168602, -0.3333333432674408, -0.1666666716337204, -0.5833333134651184, -1.0, -0.25, 0.25, 1.0, 0.5833333134651184, 0.1666666716337204, 0.3333333432674408, -0.5833333134651184, -0.6666666865348816, 0.3333333432674408, 1.3333333730697632, 0.9166666865348816, -0.5, -0.75, -0.25, 0.25, 0.25};
/* F.adaptive_avg_pool2d(seq(1,2,5,7), (3,4)) */
static const int64_t S_aap[] = {1, 2, 3, 4};
static const double E_aap[] = {-1.125, 0.0, 0.7916666865348816, -0.5625, 0.375, 0.0833333358168602, -0.3055555522441864, -0.125, 0.8125, -0.5416666865348816, 0.25, 0.3125, -0.375, 0.75, 0.125, -0.875, 0.4166666567325592, -0.1111111119389534, -0.02777777798473835, 0.625, -0.5625, -0.5, 0.2916666567325592, 0.0};
/* F.adaptive_max_pool2d(seq(1,2,5,7), (3,4), True) */
static const int64_t S_amp[] = {1, 2, 3, 4};
static const double E_amp[] = {-0.25, 1.25, 2.0, 1.75, 1.75, 1.75, 2.0, 1.25, 2.0, 1.75, 1.5, 1.5, 0.5, 2.0, 2.0, 0.0, 1.75, 2.0, 2.0, 2.0, 1.75, 0.75, 1.5, 2.0};
/* F.max_pool1d(seq(1,2,7), 3, 2, 1, 1, True) */
static const int64_t S_maxpool1d[] = {1, 2, 4};
static const double E_maxpool1d[] = {-1.25, 0.25, 1.75, 1.75, -0.25, 1.25, 2.0, -0.75};
/* F.avg_pool1d(seq(1,2,7), 3, 2, 1, False, True) */
static const int64_t S_avgpool1d[] = {1, 2, 4};
static const double E_avgpool1d[] = {-1.0833333730697632, -0.5, 1.0, 0.0, -0.4166666567325592, 0.5, 0.5833333134651184, -0.75};
/* F.adaptive_avg_pool1d(seq(1,2,7), 3) */
static const int64_t S_aap1[] = {1, 2, 3};
static const double E_aap1[] = {-1.25, 0.25, 0.3333333432674408, -0.25, 1.25, -0.0833333358168602};
/* torch.mm(seq(3,2).t(), seq(3,4)) */
static const int64_t S_mm_t[] = {2, 4};
static const double E_mm_t[] = {3.25, 2.125, 3.125, 2.0, 2.3125, 2.875, 2.375, 2.9375};
/* torch.matmul(seq(2,3), seq(3)) */
static const int64_t S_mv[] = {2};
static const double E_mv[] = {5.8125, -2.625};
/* torch.matmul(seq(3), seq(3,2)) */
static const int64_t S_vm[] = {2};
static const double E_vm[] = {4.125, 1.3125};
/* torch.matmul(seq(3), seq(3,m=5,mod=3,off=1)) */
static const int64_t S_dot[] = {0};
static const double E_dot[] = {0.1875};
/* torch.matmul(seq(2,2,3), seq(3)) */
static const int64_t S_m3v[] = {2, 2};
static const double E_m3v[] = {5.8125, -2.625, 4.875, -3.5625};
/* torch.matmul(seq(2,2,3), seq(3,4)) */
static const int64_t S_m3m[] = {2, 2, 4};
static const double E_m3m[] = {2.875, 0.0625, 2.5625, -0.25, 0.0625, 2.3125, 0.3125, 2.5625, 2.5625, 0.3125, 2.3125, 0.0625, -0.25, 2.5625, 0.0625, 2.875};
/* torch.matmul(seq(2,3), seq(2,3,4)) */
static const int64_t S_m2m3[] = {2, 2, 4};
static const double E_m2m3[] = {2.875, 0.0625, 2.5625, -0.25, 0.0625, 2.3125, 0.3125, 2.5625, 1.0, 3.5, 0.6875, 0.0, 1.5625, -0.4375, 1.8125, -3.375};
/* torch.matmul(seq(3), seq(2,3,2)) */
static const int64_t S_vm3[] = {2, 2};
static const double E_vm3[] = {4.125, 1.3125, 3.1875, 0.375};
/* torch.matmul(seq(2,1,2,3), seq(3,3,2)) */
static const int64_t S_bcast[] = {2, 3, 2, 2};
static const double E_bcast[] = {4.125, 1.3125, 0.75, 3.0, 3.1875, 0.375, 1.5, 3.75, 2.25, 1.5625, 2.25, -2.9375, 3.75, 1.5, 0.375, 3.1875, 3.0, 0.75, 1.3125, 4.125, 2.25, 1.0625, 2.25, -3.4375};
/* torch.mm(seq(2,3,div=1).long(), seq(3,2,div=1).long()) */
static const int64_t S_mm_i64[] = {2, 2};
static const double E_mm_i64[] = {66.0, 21.0, 12.0, 48.0};
/* F.linear(seq(2,2,3), seq(4,3,m=11,mod=7,off=3), seq(4,m=5,mod=3,off=1)) */
static const int64_t S_linear3[] = {2, 2, 4};
static const double E_linear3[] = {1.1875, -0.8125, 0.8125, 0.25, -1.0625, 1.4375, -0.3125, -0.3125, 0.9375, -0.5625, 0.6875, 0.1875, -1.3125, 1.6875, -0.4375, -0.375};
/* torch.addmm(seq(2), seq(2,3), seq(3,2), beta=0.5, alpha=2) */
static const int64_t S_addmm[] = {2, 2};
static const double E_addmm[] = {7.25, 2.0, 0.5, 5.375};
/* torch.baddbmm(seq(2,2,2), seq(2,2,3), seq(2,3,2), beta=2, alpha=0.5) */
static const int64_t S_baddbmm[] = {2, 2, 2};
static const double E_baddbmm[] = {-1.9375, -1.84375, -0.625, 2.0, 3.5, 3.875, -2.84375, 0.0625};
/* torch.softmax(seq(2,3,4), 1) */
static const int64_t S_smax1[] = {2, 3, 4};
static const double E_smax1[] = {0.03725763037800789, 0.03725763037800789, 0.14202311635017395, 0.14202311635017395, 0.7483395338058472, 0.7483395338058472, 0.04069029912352562, 0.04069029912352562, 0.21440288424491882, 0.21440288424491882, 0.8172865509986877, 0.8172865509986877, 0.03725763037800789, 0.14202311635017395, 0.14202311635017395, 0.7306791543960571, 0.7483395338058472, 0.04069029912352562, 0.04069029912352562, 0.2093430906534195, 0.21440288424491882, 0.8172865509986877, 0.8172865509986877, 0.05997779592871666};
/* torch.log_softmax(seq(2,3,4), -1) */
static const int64_t S_lsmax[] = {2, 3, 4};
static const double E_lsmax[] = {-2.8382842540740967, -2.0882842540740967, -1.3382842540740967, -0.5882842540740967, -1.1988385915756226, -0.44883862137794495, -3.948838710784912, -3.198838710784912, -2.8382842540740967, -2.0882842540740967, -1.3382842540740967, -0.5882842540740967, -2.8382842540740967, -2.0882842540740967, -1.3382842540740967, -0.5882842540740967, -0.20657552778720856, -3.706575632095337, -2.956575632095337, -2.206575632095337, -2.0456292629241943, -1.2956292629241943, -0.5456293225288391, -4.045629501342773};
/* torch.softmax(seq(3,4,dt=torch.float64), 0) */
static const int64_t S_smax_f64[] = {3, 4};
static const double E_smax_f64[] = {0.03725763036009143, 0.03725763036009143, 0.14202311267846235, 0.14202311267846235, 0.7483395102680942, 0.7483395102680942, 0.040690303047394745, 0.040690303047394745, 0.21440285937181444, 0.21440285937181444, 0.8172865842741428, 0.8172865842741428};
/* F.pad(seq(2,3), (1,2,-1,1), value=0.5) */
static const int64_t S_pad_c[] = {2, 6};
static const double E_pad_c[] = {0.5, 0.25, 1.0, 1.75, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
/* F.pad(seq(1,2,4), (2,3), mode='reflect') */
static const int64_t S_pad_reflect[] = {1, 2, 9};
static const double E_pad_reflect[] = {-0.5, -1.25, -2.0, -1.25, -0.5, 0.25, -0.5, -1.25, -2.0, -1.75, 1.75, 1.0, 1.75, -1.75, -1.0, -1.75, 1.75, 1.0};
/* F.pad(seq(1,2,3), (1,2,2,0), mode='replicate') */
static const int64_t S_pad_repl2[] = {1, 4, 6};
static const double E_pad_repl2[] = {-2.0, -2.0, -1.25, -0.5, -0.5, -0.5, -2.0, -2.0, -1.25, -0.5, -0.5, -0.5, -2.0, -2.0, -1.25, -0.5, -0.5, -0.5, 0.25, 0.25, 1.0, 1.75, 1.75, 1.75};
/* F.pad(seq(1,1,2,3), (1,2,1,0), mode='circular') */
static const int64_t S_pad_circ[] = {1, 1, 3, 6};
static const double E_pad_circ[] = {1.75, 0.25, 1.0, 1.75, 0.25, 1.0, -0.5, -2.0, -1.25, -0.5, -2.0, -1.25, 1.75, 0.25, 1.0, 1.75, 0.25, 1.0};
/* F.embedding(torch.tensor([[2,0],[1,2]]), seq(3,2)) */
static const int64_t S_emb[] = {2, 2, 2};
static const double E_emb[] = {1.0, 1.75, -2.0, -1.25, -0.5, 0.25, 1.0, 1.75};
/* F.interpolate(seq(1,1,2,3), size=(3,5), mode='nearest') */
static const int64_t S_up_near[] = {1, 1, 3, 5};
static const double E_up_near[] = {-2.0, -2.0, -1.25, -1.25, -0.5, -2.0, -2.0, -1.25, -1.25, -0.5, 0.25, 0.25, 1.0, 1.0, 1.75};
/* F.interpolate(seq(1,1,2,3), size=(3,5), mode='bilinear', align_corners=False) */
static const int64_t S_up_bil[] = {1, 1, 3, 5};
static const double E_up_bil[] = {-2.0, -1.6999999284744263, -1.25, -0.7999999523162842, -0.5, -0.875, -0.574999988079071, -0.12499995529651642, 0.3250000476837158, 0.625, 0.25, 0.550000011920929, 1.0, 1.4499999284744263, 1.75};
/* F.interpolate(seq(1,1,2,3), scale_factor=2.0, mode='bilinear', align_corners=True) */
static const int64_t S_up_bil_ac[] = {1, 1, 4, 6};
static const double E_up_bil_ac[] = {-2.0, -1.7000000476837158, -1.399999976158142, -1.0999999046325684, -0.7999999523162842, -0.5, -1.2499998807907104, -0.949999988079071, -0.6499999165534973, -0.34999987483024597, -0.04999992251396179, 0.2500000596046448, -0.4999999403953552, -0.19999997317790985, 0.10000006854534149, 0.40000006556510925, 0.7000000476837158, 1.0000001192092896, 0.25, 0.550000011920929, 0.8500000238418579, 1.149999976158142, 1.4500000476837158, 1.7500001192092896};
/* F.conv_transpose2d(seq(1,4,3,3), seq(4,3,3,3,m=11,mod=7,off=3), seq(6,m=5,mod=3,off=1), stride=2, padding=1, output_padding=1, groups=2) */
static const int64_t S_convt[] = {1, 6, 6, 6};
static const double E_convt[] = {0.5, -3.125, 0.6875, -2.75, 0.875, -1.125, 2.4375, -1.4375, 1.5, -2.0, 0.5625, -2.75, -1.0625, 1.1875, -0.875, 1.5625, -0.6875, 1.0625, -1.4375, 2.1875, -2.375, 1.625, -0.125, -0.1875, 0.5625, -3.0, 0.75, -0.5, -1.1875, 0.0625, 1.0625, -0.125, 0.5, -3.125, -0.0625, 1.1875, 0.625, 0.5, 1.1875, 0.3125, 1.75, 0.625, 2.25, -3.75, 2.0625, -4.125, 1.875, -1.4375, -0.875, 1.0, -0.3125, 0.8125, 0.25, -1.0625, -1.5, 3.625, -1.6875, 2.1875, 0.25, 0.1875, 0.8125, 0.4375, 1.375, 1.3125, -1.25, 0.4375, 1.3125, -2.375, 1.125, 0.4375, -0.125, 1.125, -0.875, 2.0625, -1.25, 1.3125, -1.625, 0.75, 1.3125, -4.625, 1.875, -3.5, 2.4375, -0.875, 1.1875, -1.25, 0.8125, -2.0, 0.4375, -0.875, -2.3125, 3.0, -1.75, 2.0, -0.125, -0.1875, -1.0, 1.8125, -1.375, 1.0625, 1.4375, -0.375, 0.8125, -2.75, 1.0, -0.25, -0.9375, 0.3125, 0.6875, -3.125, 0.5, -0.3125, -0.75, 0.625, -2.0625, 2.375, -1.125, -2.375, 0.875, -0.0625, -0.9375, 1.0625, -1.125, -0.375, 0.8125, -1.5, 1.8125, -0.1875, -0.4375, 1.4375, -2.6875, -0.0625, 0.625, -0.0625, -0.625, 1.6875, -0.8125, 0.625, -1.375, -0.0625, 0.0625, -2.5, 0.4375, -1.1875, 1.1875, -2.25, 1.375, 0.25, -0.5625, 0.8125, 2.0, -1.5, 1.0625, -2.0625, -0.9375, 2.5, -0.375, 2.0625, -0.1875, 0.3125, 1.0625, -1.25, -1.875, 2.125, 0.375, 0.5, 2.625, -1.3125, 1.25, 0.0, -0.6875, 1.4375, -0.5, 0.9375, 1.0, -2.625, 0.4375, 0.75, -0.125, 1.3125, 0.9375, 0.0625, 1.5, 0.9375, -1.125, -0.1875, 1.8125, -4.375, 1.625, 0.5625, -1.75, 1.6875, -0.5625, 0.5625, 0.0, -2.8125, 0.5625, 1.3125, -1.9375, 1.9375, 0.0, -1.625, 1.9375, -2.0, 1.125, 1.0625, -1.5, 0.875, -0.9375, -0.375, 0.875, 0.1875, -0.375, 1.9375, -0.5625, 0.875};
/* F.conv_transpose2d(seq(2,2,3,4), seq(2,2,2,3,m=11,mod=7,off=3), None, stride=(1,2), padding=(0,1), dilation=(2,1)) */
static const int64_t S_convt_dil[] = {2, 2, 5, 7};
static const double E_convt_dil[] = {-0.5, 2.5, -0.3125, 1.5625, -0.125, 0.625, 0.0625, 0.25, -4.4375, 0.4375, 1.0, -0.4375, 2.1875, -0.25, 1.1875, -2.75, 0.8125, -2.1875, 0.4375, -4.8125, 0.0625, -1.0, 1.875, 0.5625, -0.875, 1.0625, -2.5625, 0.5, -0.0625, 0.4375, -0.625, 1.9375, -1.1875, 2.375, 0.375, 0.375, -0.3125, 0.375, -0.3125, 0.375, -0.3125, 0.375, 0.375, 0.75, -2.8125, 0.75, 0.375, -0.3125, 0.375, -1.0, 2.125, -0.4375, 0.625, 0.125, 0.1875, -2.5, 0.875, -0.375, 0.375, 2.375, -1.1875, 1.9375, -0.625, -0.0625, -1.0625, 0.5, -2.5625, 1.0625, -0.875, 0.5625, -0.25, 1.25, -0.0625, 0.3125, 0.125, -0.625, 0.3125, 0.5, 0.6875, -0.375, 1.875, -0.1875, 0.9375, 0.0, 0.6875, -2.0, 0.3125, -1.4375, -1.125, 4.4375, -1.5, 0.375, -0.375, 0.875, -2.0625, 0.3125, -0.5625, -0.25, -0.8125, 2.4375, -1.375, 0.75, 1.25, -3.0625, 0.6875, 0.375, -0.3125, 0.375, -0.3125, 0.375, -0.3125, 0.375, -2.8125, 0.75, 0.375, -0.3125, 0.375, -0.3125, 0.375, -0.25, 0.125, 0.3125, -0.3125, 0.875, -2.875, 1.4375, 0.5625, 1.875, -1.0, 1.4375, -0.4375, -0.0625, 0.125, 0.6875, -3.0625, 1.25, 0.75, -1.375, 2.4375, -0.8125};
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
#define SEQP(p, ...) ts_iv_tensor(seqt(TS_DT_FLOAT32, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), p))
#define SEQD(dt, p, ...) ts_iv_tensor(seqt(dt, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), p))
static const seqp W = {11, 7, 3, 4.0}; /* m=11,mod=7,off=3 */
static const seqp B = {5, 3, 1, 4.0};  /* m=5,mod=3,off=1 */

/* An int list IValue. */
static ts_iv ilist(int n, const int64_t *v) {
  ts_rt_list *l = ts_rt_list_new(&C, NULL, (uint32_t)n);
  for (int i = 0; i < n; i++) ts_rt_list_append(&C, l, ts_iv_int(v[i]));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}
#define IL(...) ilist(NDIM(__VA_ARGS__), SZ(__VA_ARGS__))
static ts_iv flist2(double a, double b) {
  ts_rt_list *l = ts_rt_list_new(&C, NULL, 2);
  ts_rt_list_append(&C, l, ts_iv_double(a));
  ts_rt_list_append(&C, l, ts_iv_double(b));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}
static ts_iv STR(const char *s) { return (ts_iv){.u.s = ts_rt_str_new(&C, s, strlen(s)), .tag = TS_IV_STR}; }
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
static void expect(const char *schema, ts_iv *in, uint32_t n, ts_dtype dt, const int64_t *sizes, int32_t nd,
                   const double *want, size_t nwant, int line) {
  ts_iv out[2];
  uint32_t nout = strstr(schema, "adaptive_max_pool2d") ? 2 : 1;
  if (!run(schema, in, n, out, nout)) {
    fprintf(stderr, "line %d: %s failed: %s\n", line, schema, C.err.data ? C.err.data : "");
    TS_CHECK(!"kernel failed");
    return;
  }
  if (TS_CHECK(out[0].tag == TS_IV_TENSOR)) same(out[0].u.t, dt, sizes, nd, want, nwant, 1e-5, line);
  for (uint32_t i = 0; i < nout; i++) ts_iv_release(out[i]);
}

#define EXPECT(schema, ins, dt, name)                                                                                  \
  expect(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), dt, S_##name,                                            \
         (int32_t)(sizeof S_##name / sizeof(int64_t)) - (S_##name[0] == 0 && sizeof S_##name == sizeof(int64_t)),      \
         E_##name, sizeof E_##name / sizeof(double), __LINE__)

/* Runs schema, expecting the error message msg. */
static void expect_err(const char *schema, ts_iv *in, uint32_t n, const char *msg, int line) {
  ts_iv out[2];
  if (run(schema, in, n, out, strstr(schema, "max.dim") ? 2 : 1)) {
    fprintf(stderr, "line %d: %s succeeded, expected an error\n", line, schema);
    TS_CHECK(!"expected an error");
    ts_iv_release(out[0]);
    return;
  }
  if (!TS_CHECK_STREQ(C.err.data, msg)) fprintf(stderr, "  (line %d)\n", line);
}
#define EXPECT_ERR(schema, ins, msg) expect_err(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), msg, __LINE__)

static void test_conv(void) {
  ts_iv a[] = {SEQ(1, 4, 5, 5), SEQP(W, 6, 2, 3, 3), SEQP(B, 6), IL(2, 2), IL(1, 1), IL(1, 1), I(2)};
  EXPECT("aten::conv2d", a, TS_DT_FLOAT32, conv_g2);
  ts_iv b[] = {SEQ(2, 3, 6, 7), SEQP(W, 4, 3, 3, 2), NONE, IL(1, 2), IL(2, 1), IL(2, 1), BO(false), IL(0, 0), I(1),
               BO(false), BO(false), BO(true), BO(true)};
  EXPECT("aten::_convolution", b, TS_DT_FLOAT32, conv_dil);
  ts_iv c[] = {SEQ(1, 3, 5, 5), SEQP(W, 6, 1, 3, 3), SEQP(B, 6), IL(2, 2), IL(1, 1), IL(1, 1), I(3)};
  EXPECT("aten::conv2d", c, TS_DT_FLOAT32, conv_dw);
  ts_iv d[] = {SEQ(1, 2, 5, 5), SEQP(W, 3, 2, 4, 4), NONE, IL(1, 1), STR("same"), IL(1, 1), I(1)};
  EXPECT("aten::conv2d.padding", d, TS_DT_FLOAT32, conv_same);
  ts_iv e[] = {SEQ(1, 3, 4, 4), SEQP(W, 5, 3, 1, 1), SEQP(B, 5), IL(1, 1), IL(0, 0), IL(1, 1), I(1)};
  EXPECT("aten::conv2d", e, TS_DT_FLOAT32, conv_1x1);
  ts_iv f[] = {SEQ(2, 2, 7), SEQP(W, 3, 2, 3), SEQP(B, 3), IL(2), IL(1), IL(1), I(1)};
  EXPECT("aten::conv1d", f, TS_DT_FLOAT32, conv1d);
  ts_iv g[] = {SEQD(TS_DT_FLOAT64, D, 1, 2, 4, 4), SEQD(TS_DT_FLOAT64, W, 2, 2, 3, 3), NONE, IL(1, 1), IL(1, 1),
               IL(1, 1), BO(false), IL(0, 0), I(1)};
  EXPECT("aten::convolution", g, TS_DT_FLOAT64, conv_f64);
  /* transposed, through _convolution as scripted conv_transpose2d gives it */
  ts_iv t1[] = {
      SEQ(1, 4, 3, 3), SEQP(W, 4, 3, 3, 3), SEQP(B, 6), IL(2, 2), IL(1, 1), IL(1, 1), BO(true), IL(1, 1), I(2),
      BO(false),       BO(false),           BO(true),   BO(true)};
  EXPECT("aten::_convolution", t1, TS_DT_FLOAT32, convt);
  ts_iv t2[] = {SEQ(2, 2, 3, 4), SEQP(W, 2, 2, 2, 3), NONE, IL(1, 2), IL(0, 1), IL(2, 1), BO(true), IL(0, 0), I(1)};
  EXPECT("aten::convolution", t2, TS_DT_FLOAT32, convt_dil);
  /* F.conv2d(torch.ones(1,4,8,8),torch.ones(8,3,3,3)) */
  ts_iv e1[] = {SEQ(1, 4, 8, 8), SEQ(8, 3, 3, 3), NONE, IL(1, 1), IL(0, 0), IL(1, 1), I(1)};
  EXPECT_ERR("aten::conv2d", e1,
             "Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 4, 8, 8] to have 3 channels, but got 4 "
             "channels instead");
  /* F.conv2d(torch.ones(1,3,2,2),torch.ones(8,3,3,3)) */
  ts_iv e2[] = {SEQ(1, 3, 2, 2), SEQ(8, 3, 3, 3), NONE, IL(1, 1), IL(0, 0), IL(1, 1), I(1)};
  EXPECT_ERR("aten::conv2d", e2,
             "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater "
             "than actual input size");
  ts_iv e3[] = {SEQ(1, 3, 8, 8), SEQ(8, 3, 3, 3), NONE, IL(2, 2), STR("same"), IL(1, 1), I(1)};
  EXPECT_ERR("aten::conv2d.padding", e3, "padding='same' is not supported for strided convolutions");
  ts_iv e4[] = {SEQD(TS_DT_FLOAT16, D, 1, 3, 4, 4), SEQD(TS_DT_FLOAT16, D, 2, 3, 3, 3), NONE, IL(1, 1), IL(0, 0),
                IL(1, 1), I(1)};
  EXPECT_ERR("aten::conv2d", e4, "\"slow_conv2d_cpu\" not implemented for 'Half'");
}

static void test_norm(void) {
  seqp p1 = {5, 3, -2, 4.0}, p2 = {5, 3, -1, 4.0}, p3 = {7, 5, -2, 4.0}, p4 = {5, 3, 1, 4.0}, p5 = {7, 5, 2, 4.0};
  /* F.batch_norm's order is (input, running_mean, running_var, weight, bias) */
  ts_iv a[] = {SEQ(2, 3, 2, 2), SEQP(p3, 3), SEQP(p4, 3), SEQP(p1, 3), SEQP(p2, 3),
               BO(false),       F(0.1),      F(1e-5),     BO(true)};
  EXPECT("aten::batch_norm", a, TS_DT_FLOAT32, bn_eval);
  ts_iv b[] = {SEQ(2, 3, 2, 2), NONE, NONE, NONE, NONE, BO(true), F(0.1), F(1e-5), BO(true)};
  EXPECT("aten::batch_norm", b, TS_DT_FLOAT32, bn_train);
  ts_iv c[] = {SEQ(2, 3, 4), IL(3, 4), SEQP(p1, 3, 4), SEQP(p5, 3, 4), F(1e-5), BO(true)};
  EXPECT("aten::layer_norm", c, TS_DT_FLOAT32, ln);
  ts_iv d[] = {SEQ(2, 4, 3), I(2), SEQP(p1, 4), SEQP(p5, 4), F(1e-5), BO(true)};
  EXPECT("aten::group_norm", d, TS_DT_FLOAT32, gn);
  ts_iv e[] = {SEQ(2, 3, 4), NONE, NONE, NONE, NONE, BO(true), F(0.1), F(1e-5), BO(true)};
  EXPECT("aten::instance_norm", e, TS_DT_FLOAT32, inorm);
  /* F.layer_norm(torch.ones(2,4),(3,)) */
  ts_iv e1[] = {SEQ(2, 4), IL(3), NONE, NONE, F(1e-5), BO(true)};
  EXPECT_ERR("aten::layer_norm", e1,
             "Given normalized_shape=[3], expected input with shape [*, 3], but got input of size[2, 4]");
  ts_iv e2[] = {SEQ(2, 4, 3), I(3), NONE, NONE, F(1e-5), BO(true)};
  EXPECT_ERR("aten::group_norm", e2,
             "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 4, 3] "
             "and num_groups=3");
}

static void test_pool(void) {
  ts_iv a[] = {SEQ(1, 2, 5, 5), IL(2, 2), IL(2, 2), IL(0, 0), IL(1, 1), BO(true)};
  EXPECT("aten::max_pool2d", a, TS_DT_FLOAT32, maxpool_ceil);
  ts_iv b[] = {SEQ(1, 1, 5, 6), IL(3, 3), IL(2, 2), IL(1, 1), IL(2, 2), BO(false)};
  EXPECT("aten::max_pool2d", b, TS_DT_FLOAT32, maxpool_pad);
  ts_iv c[] = {SEQ(1, 2, 5, 5), IL(2, 2), IL(2, 2), IL(0, 0), BO(true), BO(true), NONE};
  EXPECT("aten::avg_pool2d", c, TS_DT_FLOAT32, avgpool_ceil);
  ts_iv d[] = {SEQ(1, 1, 5, 6), IL(3, 3), IL(2, 2), IL(1, 1), BO(true), BO(false), NONE};
  EXPECT("aten::avg_pool2d", d, TS_DT_FLOAT32, avgpool_nopad);
  ts_iv e[] = {SEQ(1, 1, 4, 4), IL(2, 2), IL(1, 1), IL(1, 1), BO(false), BO(true), I(3)};
  EXPECT("aten::avg_pool2d", e, TS_DT_FLOAT32, avgpool_div);
  ts_iv f[] = {SEQ(1, 2, 5, 7), IL(3, 4)};
  EXPECT("aten::adaptive_avg_pool2d", f, TS_DT_FLOAT32, aap);
  ts_iv g[] = {SEQ(1, 2, 5, 7), IL(3, 4)};
  EXPECT("aten::adaptive_max_pool2d", g, TS_DT_FLOAT32, amp);
  ts_iv h[] = {SEQ(1, 2, 7), IL(3), IL(2), IL(1), IL(1), BO(true)};
  EXPECT("aten::max_pool1d", h, TS_DT_FLOAT32, maxpool1d);
  ts_iv i[] = {SEQ(1, 2, 7), IL(3), IL(2), IL(1), BO(false), BO(true)};
  EXPECT("aten::avg_pool1d", i, TS_DT_FLOAT32, avgpool1d);
  ts_iv j[] = {SEQ(1, 2, 7), IL(3)};
  EXPECT("aten::adaptive_avg_pool1d", j, TS_DT_FLOAT32, aap1);
  /* F.max_pool2d(torch.ones(1,1,4,4),3,padding=2) */
  ts_iv e1[] = {SEQ(1, 1, 4, 4), IL(3, 3), IL(), IL(2, 2), IL(1, 1), BO(false)};
  EXPECT_ERR("aten::max_pool2d", e1, "pad should be at most half of kernel size, but got pad=2 and kernel_size=3");
  /* F.max_pool2d(torch.ones(1,1,1,1),3) */
  ts_iv e2[] = {SEQ(1, 1, 1, 1), IL(3, 3), IL(), IL(0, 0), IL(1, 1), BO(false)};
  EXPECT_ERR("aten::max_pool2d", e2,
             "Given input size: (1x1x1). Calculated output size: (1x0x0). Output size is too small");
}

static void test_matmul(void) {
  /* torch.mm(seq(3,2).t(), seq(3,4)): a transposed view goes to BLAS as is */
  ts_rt_tensor *a = seqt(TS_DT_FLOAT32, 2, SZ(3, 2), D);
  ts_rt_tensor *at = ts_rt_transpose(&C, a, 0, 1);
  ts_rt_tensor_release(a);
  ts_iv m1[] = {ts_iv_tensor(at), SEQ(3, 4)};
  EXPECT("aten::mm", m1, TS_DT_FLOAT32, mm_t);
  ts_iv m2[] = {SEQ(2, 3), SEQ(3)};
  EXPECT("aten::matmul", m2, TS_DT_FLOAT32, mv);
  ts_iv m3[] = {SEQ(3), SEQ(3, 2)};
  EXPECT("aten::matmul", m3, TS_DT_FLOAT32, vm);
  ts_iv m4[] = {SEQ(3), SEQP(B, 3)};
  EXPECT("aten::matmul", m4, TS_DT_FLOAT32, dot);
  ts_iv m5[] = {SEQ(2, 2, 3), SEQ(3)};
  EXPECT("aten::matmul", m5, TS_DT_FLOAT32, m3v);
  ts_iv m6[] = {SEQ(2, 2, 3), SEQ(3, 4)};
  EXPECT("aten::matmul", m6, TS_DT_FLOAT32, m3m);
  ts_iv m7[] = {SEQ(2, 3), SEQ(2, 3, 4)};
  EXPECT("aten::matmul", m7, TS_DT_FLOAT32, m2m3);
  ts_iv m8[] = {SEQ(3), SEQ(2, 3, 2)};
  EXPECT("aten::matmul", m8, TS_DT_FLOAT32, vm3);
  ts_iv m9[] = {SEQ(2, 1, 2, 3), SEQ(3, 3, 2)};
  EXPECT("aten::matmul", m9, TS_DT_FLOAT32, bcast);
  seqp pi = {37, 17, 8, 1.0};
  ts_iv m10[] = {SEQD(TS_DT_INT64, pi, 2, 3), SEQD(TS_DT_INT64, pi, 3, 2)};
  EXPECT("aten::mm", m10, TS_DT_INT64, mm_i64);
  ts_iv l1[] = {SEQ(2, 2, 3), SEQP(W, 4, 3), SEQP(B, 4)};
  EXPECT("aten::linear", l1, TS_DT_FLOAT32, linear3);
  ts_iv l2[] = {SEQ(2), SEQ(2, 3), SEQ(3, 2), F(0.5), I(2)};
  EXPECT("aten::addmm", l2, TS_DT_FLOAT32, addmm);
  ts_iv l3[] = {SEQ(2, 2, 2), SEQ(2, 2, 3), SEQ(2, 3, 2), I(2), F(0.5)};
  EXPECT("aten::baddbmm", l3, TS_DT_FLOAT32, baddbmm);
  /* torch.mm(torch.ones(2,3),torch.ones(4,5)) */
  ts_iv e1[] = {SEQ(2, 3), SEQ(4, 5)};
  EXPECT_ERR("aten::mm", e1, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  ts_iv e2[] = {SEQD(TS_DT_FLOAT16, D, 2, 3), SEQD(TS_DT_FLOAT16, D, 3, 2)};
  EXPECT_ERR("aten::mm", e2, "\"addmm_impl_cpu_\" not implemented for 'Half'");
  ts_iv e3[] = {SEQ(2, 3), SEQ(2, 3, 4, 5)};
  /* torch.matmul(torch.ones(2,3),torch.ones(2,3,4,5)) */
  EXPECT_ERR("aten::matmul", e3, "mat1 and mat2 shapes cannot be multiplied (30x4 and 3x2)");
  /* torch.matmul(torch.ones(2,2,3),torch.ones(2,4,5)) */
  ts_iv e5[] = {SEQ(2, 2, 3), SEQ(2, 4, 5)};
  EXPECT_ERR("aten::matmul", e5,
             "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  ts_iv e4[] = {SEQ(3), SEQ(4)};
  EXPECT_ERR("aten::matmul", e4,
             "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
             "and 4 elements respectively");
}

static void test_misc(void) {
  ts_iv a[] = {SEQ(2, 3, 4), I(1), NONE};
  EXPECT("aten::softmax.int", a, TS_DT_FLOAT32, smax1);
  ts_iv b[] = {SEQ(2, 3, 4), I(-1), NONE};
  EXPECT("aten::log_softmax.int", b, TS_DT_FLOAT32, lsmax);
  ts_iv c[] = {SEQD(TS_DT_FLOAT64, D, 3, 4), I(0), NONE};
  EXPECT("aten::softmax.int", c, TS_DT_FLOAT64, smax_f64);
  ts_iv d[] = {SEQ(2, 3), IL(1, 2, -1, 1), STR("constant"), F(0.5)};
  EXPECT("aten::pad", d, TS_DT_FLOAT32, pad_c);
  ts_iv e[] = {SEQ(1, 2, 4), IL(2, 3), STR("reflect"), NONE};
  EXPECT("aten::pad", e, TS_DT_FLOAT32, pad_reflect);
  ts_iv f[] = {SEQ(1, 2, 3), IL(1, 2, 2, 0), STR("replicate"), NONE};
  EXPECT("aten::pad", f, TS_DT_FLOAT32, pad_repl2);
  ts_iv g[] = {SEQ(1, 1, 2, 3), IL(1, 2, 1, 0), STR("circular"), NONE};
  EXPECT("aten::pad", g, TS_DT_FLOAT32, pad_circ);
  ts_rt_tensor *ix = ts_rt_tensor_new(&C, TS_DT_INT64, 2, SZ(2, 2), false);
  int64_t *ip = ts_rt_tensor_data(ix);
  ip[0] = 2, ip[1] = 0, ip[2] = 1, ip[3] = 2;
  ts_iv h[] = {SEQ(3, 2), ts_iv_tensor(ix), I(-1), BO(false), BO(false)};
  EXPECT("aten::embedding", h, TS_DT_FLOAT32, emb);
  ts_iv i[] = {SEQ(1, 1, 2, 3), IL(3, 5), NONE, NONE};
  EXPECT("aten::upsample_nearest2d", i, TS_DT_FLOAT32, up_near);
  ts_iv j[] = {SEQ(1, 1, 2, 3), IL(3, 5), BO(false), NONE, NONE};
  EXPECT("aten::upsample_bilinear2d", j, TS_DT_FLOAT32, up_bil);
  ts_iv k[] = {SEQ(1, 1, 2, 3), NONE, BO(true), flist2(2.0, 2.0)};
  EXPECT("aten::upsample_bilinear2d.vec", k, TS_DT_FLOAT32, up_bil_ac);
  /* dropout in eval returns its input itself:
   * x=torch.ones(3); torch.ops.aten.dropout(x,0.5,False) is x -> True */
  ts_rt_tensor *x = seqt(TS_DT_FLOAT32, 1, SZ(3), D);
  ts_rt_tensor_retain(x);
  ts_iv dr[] = {ts_iv_tensor(x), F(0.5), BO(false)}, out;
  if (TS_CHECK(run("aten::dropout", dr, 3, &out, 1))) {
    TS_CHECK(out.u.t == x);
    ts_iv_release(out);
  }
  ts_rt_tensor_release(x);
  ts_iv e1[] = {SEQ(1, 1, 3), IL(3, 3), STR("reflect"), NONE};
  EXPECT_ERR("aten::pad", e1,
             "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, "
             "3) at dimension 2 of input [1, 1, 3]");
  ts_rt_tensor *fx = ts_rt_tensor_new(&C, TS_DT_INT64, 1, SZ(1), false);
  ((int64_t *)ts_rt_tensor_data(fx))[0] = 5;
  ts_iv e2[] = {SEQ(2, 2), ts_iv_tensor(fx), I(-1), BO(false), BO(false)};
  EXPECT_ERR("aten::embedding", e2, "index out of range in self");
}

int main(void) {
  ts_rt_ctx_init(&C, 4);
  ts_diag d;
  memset(&d, 0, sizeof d);
  if (!TS_CHECK(ts_rt_kernels_init(&d))) {
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return ts_test_finish();
  }
  ts_diag_free(&d);
  test_conv();
  test_norm();
  test_pool();
  test_matmul();
  test_misc();
  ts_rt_ctx_free(&C);
  return ts_test_finish();
}
