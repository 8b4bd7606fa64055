// ZS_HD marks functions that both the CPU reference path and GPU kernels call.
#pragma once

#if defined(__CUDACC__)
#define ZS_HD __host__ __device__
#else
#define ZS_HD
#endif
