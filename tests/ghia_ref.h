/* Cavity centre-line references for the CFD verification tests (Ghia, Ghia & Shin 1982; Botella & Peyret 1998 at Re 1000): the table readers and the profile interpolation. */
#ifndef HS_GHIA_REF_H
#define HS_GHIA_REF_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* Ghia's table column for one Reynolds number (column 0, 1, 2: Re 100, 400, 1000): positions and
 * values of the "u" or "v" rows, and whether the entry is marked as a known misprint of the
 * published table ("*RE" after the values, RE the column's Reynolds number: reported, not
 * asserted; misprint may be NULL).  At most 40 rows. */
static inline int ghia_read(char which, int column, double *pos, double *val, int *misprint)
{
    static const char *const marks[3] = {"*100", "*400", "*1000"};
    const char *path = "tests/data/ghia1982_cavity.txt"; /* the tests run from the project root */
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[256];
    int n = 0;
    while (n < 40 && fgets(line, sizeof line, f)) {
        char t;
        double x, a[3];
        if (line[0] == '#' || sscanf(line, " %c %lf %lf %lf %lf", &t, &x, &a[0], &a[1], &a[2]) != 5 || t != which) continue;
        pos[n] = x;
        if (misprint) misprint[n] = strstr(line, marks[column]) != NULL;
        val[n++] = a[column];
    }
    fclose(f);
    return n;
}

/* Botella & Peyret's Re 1000 spectral values at Ghia's points (tests/data/botella1998_cavity_re1000.txt):
 * positions and values of the "u" or "v" rows, in the order of Ghia's table.  At most 40 rows. */
static inline int botella_read(char which, double *pos, double *val)
{
    const char *path = "tests/data/botella1998_cavity_re1000.txt";
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    char line[256];
    int n = 0;
    while (n < 40 && fgets(line, sizeof line, f)) {
        char t;
        double x, a;
        if (line[0] == '#' || sscanf(line, " %c %lf %lf", &t, &x, &a) != 3 || t != which) continue;
        pos[n] = x;
        val[n++] = a;
    }
    fclose(f);
    return n;
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
