/* MPI status translation and small host-side collectives. */
#include <stdio.h>
#include "kernels/comm.h"

int hs_mpi_fail(int status, const char *call, const char *file, int line)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(status, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", status);
    return hs_error_raise(HS_ERR_RUNTIME, file, line, "MPI call %s failed: %s", call, text);
}

int hs_allreduce_sum(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, comm)); return HS_OK; }
int hs_allreduce_max(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, comm)); return HS_OK; }
int hs_allreduce_min(MPI_Comm comm, double *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MIN, comm)); return HS_OK; }
int hs_allreduce_int_max(MPI_Comm comm, int *v, int n)
{ HS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MAX, comm)); return HS_OK; }
