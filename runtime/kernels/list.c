/* runtime/kernels/list.c (being written) */
#include "runtime.h"

const ts_rt_kernel_def ts_rt_kernels_list[] = {
    {NULL, NULL},
};
