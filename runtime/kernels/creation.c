/* runtime/kernels/creation.c (being written) */
#include "runtime.h"

const ts_rt_kernel_def ts_rt_kernels_creation[] = {
    {NULL, NULL},
};
