#!/usr/bin/env bash
# Writes small CF NetCDF trajectories for the surrogate's tests and examples (ncgen from an awk-made CDL):
#   scripts/surrogate_testdata.sh OUT.nc NT NY NX PHASE [NAN_AT]
# Two fields on a periodic unit square, frames every 0.1 s, advected and turning with time:
#   h = 1 + 0.5 sin(2 pi (x - 0.3 t)) cos(2 pi (y + 0.1 t) + PHASE) + 0.2 sin(4 pi (x + y) - 0.7 t + 2 PHASE)
#   u = cos(2 pi (x - 0.3 t) + PHASE) sin(2 pi y)
# NAN_AT (a frame index) puts a NaN into h at that frame (bad-input tests).  PACK=1 in the
# environment stores h and u as CF packed shorts (scale_factor 1e-4, add_offset 1 and 0, _FillValue
# -32768), and NAN_AT then puts the fill value there (a missing value).  LEVELS="1000 850 500" in the
# environment writes h and u as (time, level, y, x) with that level coordinate (hPa), level l taking
# PHASE + 0.25 l: level l is then the (time, y, x) file of that phase.  U_RECORDS=N writes only the
# first N records of u (the rest hold NetCDF's default fill, CDL's "_": records a run never wrote).
set -eu
out=$1 nt=$2 ny=$3 nx=$4 phase=$5 nan_at=${6:--1}
command -v ncgen >/dev/null || { echo "SKIP: ncgen (netcdf-bin) is not installed" >&2; exit 77; }
cdl=$(mktemp)
trap 'rm -f "$cdl"' EXIT
awk -v nt="$nt" -v ny="$ny" -v nx="$nx" -v ph0="$phase" -v nan_at="$nan_at" -v pack="${PACK:-0}" -v levels="${LEVELS:-}" \
    -v urec="${U_RECORDS:-$nt}" 'BEGIN {
  pi = 3.14159265358979323846
  nl = split(levels, lev, " "); ld = nl ? "level, " : ""
  print "netcdf traj {\ndimensions:\n  time = UNLIMITED ;" (nl ? "\n  level = " nl " ;" : "") "\n  y = " ny " ;\n  x = " nx " ;"
  print "variables:\n  double time(time) ;\n    time:units = \"seconds since 2000-01-01 00:00:00\" ;\n    time:standard_name = \"time\" ;"
  if (nl) print "  double level(level) ;\n    level:units = \"hPa\" ;"
  print "  double y(y) ;\n    y:units = \"m\" ;\n  double x(x) ;\n    x:units = \"m\" ;"
  type = pack ? "short" : "double"
  print "  " type " h(time, " ld "y, x) ;\n    h:units = \"m\" ;\n    h:long_name = \"layer thickness\" ;"
  if (pack) print "    h:scale_factor = 0.0001 ;\n    h:add_offset = 1. ;\n    h:_FillValue = -32768s ;"
  print "  " type " u(time, " ld "y, x) ;\n    u:units = \"m s-1\" ;\n    u:long_name = \"velocity in x\" ;"
  if (pack) print "    u:scale_factor = 0.0001 ;\n    u:add_offset = 0. ;\n    u:_FillValue = -32768s ;"
  print "  :Conventions = \"CF-1.8\" ;\ndata:"
  printf "  time ="; for (t = 0; t < nt; t++) printf "%s %.10g", (t ? "," : ""), 0.1 * t; print " ;"
  if (nl) { printf "  level ="; for (l = 1; l <= nl; l++) printf "%s %s", (l > 1 ? "," : ""), lev[l]; print " ;" }
  printf "  y ="; for (j = 0; j < ny; j++) printf "%s %.10g", (j ? "," : ""), (j + 0.5) / ny; print " ;"
  printf "  x ="; for (i = 0; i < nx; i++) printf "%s %.10g", (i ? "," : ""), (i + 0.5) / nx; print " ;"
  for (v = 0; v < 2; v++) {
    printf "  %s =", (v ? "u" : "h"); n = 0
    for (t = 0; t < nt; t++) for (l = 1; l <= (nl ? nl : 1); l++) for (j = 0; j < ny; j++) for (i = 0; i < nx; i++) {
      x = (i + 0.5) / nx; y = (j + 0.5) / ny; tt = 0.1 * t; ph = ph0 + 0.25 * (l - 1)
      if (v == 0) val = 1 + 0.5 * sin(2 * pi * (x - 0.3 * tt)) * cos(2 * pi * (y + 0.1 * tt) + ph) + 0.2 * sin(4 * pi * (x + y) - 0.7 * tt + 2 * ph)
      else val = cos(2 * pi * (x - 0.3 * tt) + ph) * sin(2 * pi * y)
      s = sprintf("%.9g", val)
      if (pack) { q = (val - (v == 0 ? 1 : 0)) / 0.0001; s = sprintf("%d", q < 0 ? int(q - 0.5) : int(q + 0.5)) }
      if (v == 0 && t == nan_at && j == int(ny / 2) && i == 1) s = pack ? "-32768" : "NaN"
      if (v == 1 && t >= urec) s = "_"
      printf "%s %s", (n++ ? "," : ""), s
    }
    print " ;"
  }
  print "}"
}' > "$cdl"
ncgen -k nc4 -o "$out" "$cdl"
