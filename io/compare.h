/* Comparing a variable of two output files (the `hpcsim compare` command and the tests). */
#ifndef HS_COMPARE_H
#define HS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

typedef struct hs_compare_result {
    int64_t count;        /* values compared */
    int64_t differing;    /* values not bitwise equal */
    double max_abs;       /* max |a - b| */
    double max_rel;       /* max |a - b| / max |b| over the variable */
    double ref_max;       /* max |b| */
    char note[2048];      /* where the two files' coordinates of the variable differ (same shape, other
                           * domain: the values were compared point by point without a word), or "" */
} hs_compare_result;

/* Read variable `name` from both files (NetCDF or HDF5) and compare them value by value; with
 * last_record, only the last record (index along the first dimension) of each.  Files or
 * variables that cannot be read, or shapes that differ, are input errors.  JSON result files (the
 * quantum solver's; a file whose text starts with '{' or '[') are read with hs_json_numbers: name
 * is a key path ("probabilities", "expectation.value"), last_record takes the last element of the
 * array there, and the two must hold as many numbers.  Not collective. */
int hs_compare_files(const char *a, const char *b, const char *name, int last_record, hs_compare_result *res);

/* One variable's verdict: whether it agrees (bitwise for rtol 0, else max |a-b| within rtol of
 * max |b|), printed as "NAME: N values, D not bitwise equal, max |a-b| = A (R of max |b|):
 * agree|DIFFER", then "NAME: note: ..." where the coordinates differ.  Returns 1 when it agrees. */
int hs_compare_report(FILE *out, const char *name, const hs_compare_result *r, double rtol);

/* Compare every numeric variable of two NetCDF or HDF5 files (hs_compare_files on each; with
 * last_record, the last record of the variables along the record dimension and the whole of the
 * others): one line per variable to `out` ("NAME: N values, ... agree" or "DIFFER"), one per
 * variable found in only one file ("NAME: only in A"), and a summary.  A variable agrees when
 * bitwise equal (rtol 0) or within rtol relative to max |B|.  *ndiffer counts the variables that
 * differ, differ in shape or are in one file only.  Files that cannot be read are input errors.
 * Not collective. */
int hs_compare_all(const char *a, const char *b, int last_record, double rtol, FILE *out, int *ndiffer);

#endif
