/* Cavity centre-line references for the CFD verification tests (Ghia, Ghia & Shin 1982; Botella & Peyret 1998 at Re 1000): the table readers and the profile interpolation. */
#ifndef HS_GHIA_REF_H
#define HS_GHIA_REF_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* The "u" or "v" rows of a centre-line table file (tests/data/): "table position v_1 ... v_ncols";
 * column (0-based) of each row into val, the position into pos; with mark, flag[i] says whether the
 * row carries that text after its values.  At most 40 rows. */
static inline int cavity_table_read(const char *path, char which, int ncols, int column, double *pos, double *val, const char *mark,
                                    int *flag)
{
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[256];
    int n = 0;
    while (n < 40 && fgets(line, sizeof line, f)) {
        char t;
        double x, a[3];
        int got = sscanf(line, " %c %lf %lf %lf %lf", &t, &x, &a[0], &a[1], &a[2]);
        if (line[0] == '#' || got < 2 + ncols || t != which) continue;
        pos[n] = x;
        if (flag) flag[n] = mark && strstr(line, mark) != NULL;
        val[n++] = a[column];
    }
    fclose(f);
    return n;
}

/* Ghia's table column for one Reynolds number (column 0, 1, 2: Re 100, 400, 1000): positions and
 * values of the "u" or "v" rows, and whether the entry is marked as a known misprint of the
 * published table ("*RE" after the values, RE the column's Reynolds number: reported, not
 * asserted; misprint may be NULL).  The tests run from the project root. */
static inline int ghia_read(char which, int column, double *pos, double *val, int *misprint)
{
    static const char *const marks[3] = {"*100", "*400", "*1000"};
    return cavity_table_read("tests/data/ghia1982_cavity.txt", which, 3, column, pos, val, marks[column], misprint);
}

/* Botella & Peyret's Re 1000 spectral values at Ghia's points (tests/data/botella1998_cavity_re1000.txt),
 * in the order of Ghia's table. */
static inline int botella_read(char which, double *pos, double *val)
{
    return cavity_table_read("tests/data/botella1998_cavity_re1000.txt", which, 1, 0, pos, val, NULL, NULL);
}

/* Linear interpolation in a profile given at the n cell centres of [0, 1] plus the two wall values. */
static inline double ghia_profile_at(const double *vals, int n, double wall_lo, double wall_hi, double x)
{
    double h = 1.0 / n, s = x / h - 0.5;
    if (s <= 0) return wall_lo + (vals[0] - wall_lo) * (x / (0.5 * h));
    if (s >= n - 1) return vals[n - 1] + (wall_hi - vals[n - 1]) * ((x - (n - 0.5) * h) / (0.5 * h));
    int i = (int)floor(s);
    double w = s - i;
    return vals[i] * (1 - w) + vals[i + 1] * w;
}

#endif
