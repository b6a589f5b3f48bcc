/* runtime/kernels/scalar.c (being written) */
#include "runtime.h"

const ts_rt_kernel_def ts_rt_kernels_scalar[] = {
    {NULL, NULL},
};
