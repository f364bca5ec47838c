/* A run's summary read back from its output file (the `hpcsim summary` command). */
#ifndef HS_SUMMARY_H
#define HS_SUMMARY_H

#include <stdio.h>

/* Print to `out` what a NetCDF or HDF5 output file of hpcsim says about the run that made it:
 * title, version (the `source` attribute), the command lines (`history`), where and why the run
 * stopped (finished, run.max_steps, run.walltime or a signal; from the hpcsim_stop_* attributes
 * the driver writes when it closes or suspends the file), its timings (wall time, time loop,
 * output, checkpoints, rate), ranks, threads and device, the records (count and time span), the
 * diagnostics at the last record (each scalar time series' last value; min, max and mean of each
 * time-dependent field, _FillValue points left out) and the resolved parameters.  A file the run
 * never closed (PATH.partial of a killed run) says so.  A file that cannot be read is an input
 * error.  Not collective. */
int hs_summary_print(const char *path, FILE *out);

#endif
