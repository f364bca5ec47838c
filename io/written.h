/* The files a run writes: each written whole or not at all, and the finished ones collected for the
 * driver's end-of-run summary line. */
#ifndef HS_WRITTEN_H
#define HS_WRITTEN_H

#include <stdint.h>
#include <stdio.h>

/* Forget the list (start of a run). */
void hs_io_written_reset(void);
/* Note a finished file; records < 0 when the file has no record axis.  Called by the writers on
 * the rank that writes the file.  Not thread-safe (the writers run on one thread). */
void hs_io_written_add(const char *path, int64_t records);
/* "a.nc (10 records), b.json" ("" when none); valid until the next add or reset. */
const char *hs_io_written_list(void);

/* A file written whole or not at all (a result, a table, a VTU piece, a .pvd, an XDMF or SEG-Y
 * file): hs_io_whole_open opens PATH.partial; hs_io_whole_commit checks the stream, closes it and
 * renames it to PATH, or on any failure removes it and returns the error naming PATH and the
 * failing call's cause (a full disk often shows only at fclose); hs_io_whole_discard removes it
 * after an error elsewhere.  `what` prefixes the messages ("SEG-Y", "VTU").  PATH (the caller's
 * string) must stay valid until the commit or discard.  A file is never left half-written under
 * its final name. */
typedef struct hs_io_whole {
    FILE *f;
    const char *path, *what;
    char *partial;
} hs_io_whole;
int hs_io_whole_open(hs_io_whole *w, const char *what, const char *path, const char *mode);
int hs_io_whole_commit(hs_io_whole *w, int ok);
void hs_io_whole_discard(hs_io_whole *w);

/* After a library's call failed on PATH (NetCDF says only "HDF error", HDF5 "file write failed",
 * MPI-IO's open no reason at all): writes " (the file system holding PATH is mounted read-only)"
 * or " (the file system holding PATH has only N kB free: is it full?)" into buf when the file
 * system of PATH's folder is read-only or has under 16 MiB free (for root, counting the reserved
 * blocks), else "". */
void hs_io_fs_note(const char *path, char *buf, size_t len);
/* A buffer that holds any note (a path of up to PATH_MAX and the words around it). */
#define HS_IO_FS_NOTE_MAX 4400

#endif
