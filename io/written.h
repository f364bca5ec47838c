/* The files a run has finished writing, collected for the driver's end-of-run summary line. */
#ifndef HS_WRITTEN_H
#define HS_WRITTEN_H

#include <stdint.h>

/* Forget the list (start of a run). */
void hs_io_written_reset(void);
/* Note a finished file; records < 0 when the file has no record axis.  Called by the writers on
 * the rank that writes the file.  Not thread-safe (the writers run on one thread). */
void hs_io_written_add(const char *path, int64_t records);
/* "a.nc (10 records), b.json" ("" when none); valid until the next add or reset. */
const char *hs_io_written_list(void);

#endif
