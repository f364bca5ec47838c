/* Build features as compile-time constants (the Makefile passes -DHS_HAVE_X=0|1). */
#ifndef HS_CONFIG_H
#define HS_CONFIG_H
#ifndef HS_HAVE_CUDA
#define HS_HAVE_CUDA 0
#endif
#ifndef HS_HAVE_MPI
#define HS_HAVE_MPI 0
#endif
#ifndef HS_HAVE_OPENMP
#define HS_HAVE_OPENMP 0
#endif
#ifndef HS_HAVE_HDF5
#define HS_HAVE_HDF5 0
#endif
#ifndef HS_HAVE_NETCDF
#define HS_HAVE_NETCDF 0
#endif
#ifndef HS_HAVE_HDF5_PARALLEL
#define HS_HAVE_HDF5_PARALLEL 0
#endif
#ifndef HS_HAVE_NETCDF_PARALLEL
#define HS_HAVE_NETCDF_PARALLEL 0
#endif
#ifndef HS_HAVE_FFTW
#define HS_HAVE_FFTW 0
#endif
#ifndef HS_HAVE_METIS
#define HS_HAVE_METIS 0
#endif
#ifndef HS_HAVE_OPENBLAS
#define HS_HAVE_OPENBLAS 0
#endif
#ifndef HS_HAVE_NCCL
#define HS_HAVE_NCCL 0
#endif
#ifndef HS_HAVE_CUDNN
#define HS_HAVE_CUDNN 0
#endif
#ifndef HS_HAVE_CJSON
#define HS_HAVE_CJSON 0
#endif
#ifndef HS_VERSION
#define HS_VERSION "0.0.0"
#endif
#ifndef HS_FEATURES
#define HS_FEATURES ""
#endif
#endif
