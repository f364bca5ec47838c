/* Single-process stand-in for MPI (MPI=0 builds): message matching for sends to self. */
#include "kernels/config.h"
#if !HS_HAVE_MPI
#include "kernels/comm/mpiuni.h"

#include <stdio.h>
#include <stdlib.h>

#define MAXPEND 256
typedef struct { const void *sbuf; void *rbuf; size_t bytes; int tag; int is_send; int used; } pending;
static pending g_pend[MAXPEND];
static int g_init, g_final;
static int g_periodic[3];

int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; g_init = 1; return 0; }
int MPI_Init_thread(int *argc, char ***argv, int req, int *prov) { *prov = req; return MPI_Init(argc, argv); }
int MPI_Initialized(int *flag) { *flag = g_init; return 0; }
int MPI_Finalized(int *flag) { *flag = g_final; return 0; }
int MPI_Finalize(void) { g_final = 1; return 0; }
int MPI_Abort(MPI_Comm c, int code) { (void)c; exit(code); }
int MPI_Error_string(int code, char *s, int *len) { *len = snprintf(s, MPI_MAX_ERROR_STRING, "mpiuni error %d", code); return 0; }

/* Match a send with an earlier receive of the same tag or queue it (and the converse). */
static int post(const void *sbuf, void *rbuf, size_t bytes, int tag, int is_send)
{
    for (int i = 0; i < MAXPEND; i++) {
        pending *p = &g_pend[i];
        if (p->used && p->is_send != is_send && p->tag == tag) {
            if (is_send) memcpy(p->rbuf, sbuf, bytes < p->bytes ? bytes : p->bytes);
            else memcpy(rbuf, p->sbuf, bytes < p->bytes ? bytes : p->bytes);
            p->used = 0;
            return 0;
        }
    }
    for (int i = 0; i < MAXPEND; i++) {
        if (!g_pend[i].used) {
            g_pend[i] = (pending){sbuf, rbuf, bytes, tag, is_send, 1};
            return 0;
        }
    }
    return 1;
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r)
{ (void)c; *r = 0; return dest == MPI_PROC_NULL ? 0 : post(b, NULL, (size_t)n * t, tag, 1); }
int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r)
{ (void)c; *r = 0; return src == MPI_PROC_NULL ? 0 : post(NULL, b, (size_t)n * t, tag, 0); }
int MPI_Send(const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c)
{ MPI_Request r; return MPI_Isend(b, n, t, dest, tag, c, &r); }
int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st)
{ (void)st; MPI_Request r; return MPI_Irecv(b, n, t, src, tag, c, &r); }
int MPI_Waitall(int n, MPI_Request *r, MPI_Status *st) { (void)n; (void)r; (void)st; return 0; }
int MPI_Wait(MPI_Request *r, MPI_Status *st) { (void)r; (void)st; return 0; }

void hs_mpiuni_set_periodic(int ndims, const int *periodic)
{ for (int i = 0; i < ndims && i < 3; i++) g_periodic[i] = periodic[i]; }
int MPI_Cart_shift(MPI_Comm c, int dir, int disp, int *src, int *dst)
{
    (void)c; (void)disp;
    *src = *dst = (dir < 3 && g_periodic[dir]) ? 0 : MPI_PROC_NULL;
    return 0;
}
#endif
