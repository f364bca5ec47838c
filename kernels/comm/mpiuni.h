/* Single-process stand-in for the subset of MPI that hpcsim uses, for builds with MPI=0
 * (the idea of PETSc's mpiuni): one rank, collectives are copies, sends to self are matched. */
#ifndef HS_MPIUNI_H
#define HS_MPIUNI_H

#include <stddef.h>
#include <string.h>
#include <time.h>

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef struct { int MPI_SOURCE, MPI_TAG, MPI_ERROR; } MPI_Status;

#define MPI_COMM_WORLD 1
#define MPI_COMM_SELF 2
#define MPI_COMM_NULL 0
#define MPI_SUCCESS 0
#define MPI_MAX_ERROR_STRING 64
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_REQUEST_NULL 0
#define MPI_PROC_NULL (-2)
#define MPI_ANY_SOURCE (-1)
#define MPI_IN_PLACE ((void *)1)
#define MPI_UNDEFINED (-32766)
#define MPI_COMM_TYPE_SHARED 1
#define MPI_INFO_NULL 0
#define MPI_THREAD_FUNNELED 1
/* Datatype values are their sizes in bytes, which is all a single rank needs. */
#define MPI_CHAR 1
#define MPI_BYTE 1
#define MPI_INT 4
#define MPI_UNSIGNED 4
#define MPI_UINT16_T 2
#define MPI_FLOAT 4
#define MPI_LONG_LONG 8
#define MPI_INT64_T 8
#define MPI_UINT64_T 8
#define MPI_UNSIGNED_LONG_LONG 8
#define MPI_DOUBLE 8
#define MPI_C_DOUBLE_COMPLEX 16
#define MPI_C_FLOAT_COMPLEX 8
#define MPI_DOUBLE_INT 16
#define MPI_SUM 1
#define MPI_MIN 2
#define MPI_MAX 3
#define MPI_LAND 4
#define MPI_LOR 5
#define MPI_MAXLOC 6
#define MPI_MINLOC 7

static inline int hs_mpiuni_size(MPI_Datatype t) { return (int)t; }
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Initialized(int *flag);
int MPI_Finalized(int *flag);
int MPI_Finalize(void);
int MPI_Abort(MPI_Comm comm, int code);
int MPI_Error_string(int code, char *s, int *len);
int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st);
int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *r);
int MPI_Waitall(int n, MPI_Request *r, MPI_Status *st);
int MPI_Wait(MPI_Request *r, MPI_Status *st);

static inline int MPI_Comm_rank(MPI_Comm c, int *r) { (void)c; *r = 0; return 0; }
static inline int MPI_Comm_size(MPI_Comm c, int *s) { (void)c; *s = 1; return 0; }
static inline int MPI_Comm_dup(MPI_Comm c, MPI_Comm *n) { *n = c; return 0; }
static inline int MPI_Comm_free(MPI_Comm *c) { *c = MPI_COMM_NULL; return 0; }
static inline int MPI_Comm_split_type(MPI_Comm c, int type, int key, int info, MPI_Comm *n)
{ (void)type; (void)key; (void)info; *n = c; return 0; }
static inline int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *n)
{ (void)color; (void)key; *n = c; return 0; }
static inline int MPI_Barrier(MPI_Comm c) { (void)c; return 0; }
static inline double MPI_Wtime(void)
{ struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static inline int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{ (void)b; (void)n; (void)t; (void)root; (void)c; return 0; }
static inline int MPI_Allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{ (void)op; (void)c; if (in != MPI_IN_PLACE) memmove(out, in, (size_t)n * hs_mpiuni_size(t)); return 0; }
static inline int MPI_Iallreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r)
{ *r = 0; return MPI_Allreduce(in, out, n, t, op, c); }
static inline int MPI_Reduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{ (void)root; return MPI_Allreduce(in, out, n, t, op, c); }
static inline int MPI_Allgather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm c)
{ (void)m; (void)u; (void)c; if (in != MPI_IN_PLACE) memmove(out, in, (size_t)n * hs_mpiuni_size(t)); return 0; }
static inline int MPI_Gather(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, int root, MPI_Comm c)
{ (void)root; return MPI_Allgather(in, n, t, out, m, u, c); }
static inline int MPI_Alltoall(const void *in, int n, MPI_Datatype t, void *out, int m, MPI_Datatype u, MPI_Comm c)
{ (void)m; (void)u; (void)c; if (in != MPI_IN_PLACE) memmove(out, in, (size_t)n * hs_mpiuni_size(t)); return 0; }
static inline int MPI_Alltoallv(const void *in, const int *sc, const int *sd, MPI_Datatype t, void *out,
                                const int *rc, const int *rd, MPI_Datatype u, MPI_Comm c)
{ (void)rc; (void)u; (void)c; memmove((char *)out + (size_t)rd[0] * hs_mpiuni_size(t),
      (const char *)in + (size_t)sd[0] * hs_mpiuni_size(t), (size_t)sc[0] * hs_mpiuni_size(t)); return 0; }
static inline int MPI_Gatherv(const void *in, int n, MPI_Datatype t, void *out, const int *rc, const int *rd,
                              MPI_Datatype u, int root, MPI_Comm c)
{ (void)rc; (void)u; (void)root; (void)c; memmove((char *)out + (size_t)rd[0] * hs_mpiuni_size(t), in, (size_t)n * hs_mpiuni_size(t)); return 0; }
static inline int MPI_Dims_create(int nnodes, int ndims, int *dims)
{ for (int i = 0; i < ndims; i++) if (dims[i] == 0) dims[i] = 1; (void)nnodes; return 0; }
static inline int MPI_Cart_create(MPI_Comm c, int nd, const int *dims, const int *per, int reorder, MPI_Comm *n)
{ (void)nd; (void)dims; (void)per; (void)reorder; *n = c; return 0; }
static inline int MPI_Cart_coords(MPI_Comm c, int rank, int nd, int *coords)
{ (void)c; (void)rank; for (int i = 0; i < nd; i++) coords[i] = 0; return 0; }
int MPI_Cart_shift(MPI_Comm c, int dir, int disp, int *src, int *dst);
/* Periodicity is remembered by the stand-in cart so that shifts can answer MPI_PROC_NULL. */
void hs_mpiuni_set_periodic(int ndims, const int *periodic);

#endif
