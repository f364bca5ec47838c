/* Gridded input files (seismic models, heat conductivity, LBM masks): their named axes and coordinate steps against the grid they feed. */
#ifndef HS_GRID_INPUT_H
#define HS_GRID_INPUT_H

#include <stdint.h>

#include "io/output.h"
#include "io/params.h"

/* Variable `var` of the open file `path`, the `what` file ("model", "conductivity"), feeds a grid of ndim
 * dimensions whose axes, x fastest, are named by the letters of `axes` ("xz", "xyz"), with n[d]
 * points h[d] metres apart along axis d, stored slowest first.  Where the file names a dimension's
 * axis (its coordinate variable's CF `axis`, or the dimension's name x, y, z or depth), the order
 * must be the grid's, else an input error on `key` (a square field stored (x, z) would be read
 * transposed); where a dimension has a coordinate variable of n[d] numbers (units m, km, cm or mm, in UDUNITS spellings; other units are read as m), it
 * must step by h[d] to 1e-6 relative, else an input error on `step_key` (a file of another grid
 * with the same count would be read onto this one).  A file that names nothing passes.  Not
 * collective. */
/* The axis a file's dimension stands for: its coordinate variable's CF `axis` (X, Y, Z), else its
 * name (x, y, z, X, Y, Z, depth), as 'x', 'y' or 'z'; 0 when it says nothing.  Not collective. */
char hs_grid_input_dim_axis(hs_reader *r, const char *dim);

int hs_grid_input_check_axes(const hs_params *p, hs_reader *r, const char *path, const char *what, const char *var,
                             int ndim, const char *axes, const int64_t n[], const double h[], const char *key,
                             const char *step_key);

#endif
