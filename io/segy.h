/* SEG-Y rev 1 writer: seismograms of one shot as IEEE-float traces with source/receiver geometry. */
#ifndef HS_SEGY_H
#define HS_SEGY_H

#include <stdint.h>

/* What the file holds: one shot (field record) of `ntraces` receivers, `nsamples` samples each at
 * interval dt (s).  Coordinates are in metres, z is depth below the surface (positive down).
 *
 * File layout (SEG-Y revision 1, SEG Technical Standards Committee 2002; all binary values
 * big-endian):
 *  - 3200-byte textual header: 40 cards of 80 EBCDIC characters, "C 1 ..." to "C40 END TEXTUAL
 *    HEADER", saying what made the file, the geometry and the units, plus `text` lines (if any).
 *  - 400-byte binary header: job id 1 (3201), line 1 (3205), reel 1 (3209), traces per ensemble
 *    (3213), sample interval in microseconds (3217 and 3219), samples per trace (3221 and 3223),
 *    format code 5 = 4-byte IEEE float (3225), ensemble fold 1 (3227), sorting code 1 = as recorded
 *    (3229), measurement system 1 = metres (3255), revision 0x0100 (3501), fixed-length traces 1
 *    (3503), no extended textual headers (3505).
 *  - per trace a 240-byte header, then nsamples IEEE floats: trace sequence numbers in line and in
 *    file (1-4, 5-8: 1..ntraces), field record `shot` (9-12), trace number in the record (13-16),
 *    energy source point `shot` (17-20), ensemble number (21-24: the trace number), trace number in
 *    the ensemble 1 (25-28), trace identification 1 = seismic data (29-30), data use 1 = production
 *    (35-36), source-receiver offset (37-40, whole metres: horizontal, in 2D signed receiver x -
 *    source x), receiver group elevation = -depth
 *    (41-44), source depth below surface (49-52), scalar for those (69-70), scalar for coordinates
 *    (71-72), source x/y (73-76, 77-80), group x/y (81-84, 85-88), coordinate units 1 = length
 *    (89-90), number of samples (115-116), sample interval in microseconds (117-118), CDP x/y
 *    (181-184, 185-188: the source-receiver midpoint).
 *  Coordinates and depths are stored as integers with the SEG-Y scalar convention (a negative
 *  scalar -s divides by s): the writer takes the finest of 1, 1/10, ..., 1/10000 m at which every
 *  value fits in 32 bits.  The sample interval must be a whole number of microseconds between 1
 *  and 65535 (the 16-bit field); see hs_segy_interval_us. */
typedef struct hs_segy_desc {
    const char *path;          /* the file (written to PATH.partial, then renamed) */
    int64_t ntraces;           /* >= 1 */
    int64_t nsamples;          /* 1 .. 65535 */
    double dt;                 /* sample interval (s) */
    int shot;                  /* field record / source point number (>= 1) */
    double source[3];          /* source x, y, z */
    const double *rx, *ry, *rz; /* receiver coordinates, ntraces each; ry may be NULL (2D: y = 0) */
    const char *const *text;   /* extra lines for the textual header (NULL-terminated; NULL: none) */
} hs_segy_desc;

/* The sample interval dt (s) in whole microseconds, or -1 when dt is not (to 1e-6 relative) a whole
 * number of microseconds in 1 .. 65535. */
int hs_segy_interval_us(double dt);

/* Write the file.  data holds the samples time-major: data[t * ntraces + r] (the layout of the
 * station data), converted to 4-byte IEEE floats.  Failures are runtime errors naming the file; a
 * failed write leaves no file under the final name.  Not collective (call it on one rank). */
int hs_segy_write(const hs_segy_desc *d, const double *data);

#endif
