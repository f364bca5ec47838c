/* MPI for hpcsim: the real library or the single-rank stand-in, and MPI status translation. */
#ifndef HS_COMM_H
#define HS_COMM_H

#include "kernels/config.h"
#include "kernels/error.h"
#if HS_HAVE_MPI
#include <mpi.h>
#else
#include "kernels/mpiuni.h"
#endif

/* Turn an MPI status into an hs runtime error naming the call. */
int hs_mpi_fail(int status, const char *call, const char *file, int line);

#define HS_MPI_CHECK(call)                                                            \
    do {                                                                              \
        int hs_mpi_rc_ = (call);                                                      \
        if (hs_mpi_rc_ != MPI_SUCCESS) return hs_mpi_fail(hs_mpi_rc_, #call, __FILE__, __LINE__); \
    } while (0)

/* Global reductions of one or a few host values (collective over comm). */
int hs_allreduce_sum(MPI_Comm comm, double *values, int count);
int hs_allreduce_max(MPI_Comm comm, double *values, int count);
int hs_allreduce_min(MPI_Comm comm, double *values, int count);
int hs_allreduce_int_max(MPI_Comm comm, int *values, int count);

#endif
