/* HS_HD marks a function that the CPU and CUDA twins share verbatim, so that both compute alike. */
#ifndef HS_HD_H
#define HS_HD_H

#ifdef __CUDACC__
#define HS_HD __host__ __device__ __forceinline__
#else
#define HS_HD static inline
#endif

#endif
