#!/usr/bin/env bash
# Output files through real clients: `ncdump -h` shows the CF attributes, h5dump reads the HDF5 file, check_output.py passes.
set -u
BUILD=${BUILD:-build}
. "$(dirname "$0")/lib.sh"
cd "$ROOT"   # $BUILD is relative to the repository; the checks below go back to $WORK
GEN=$BUILD/tests/unit/test_output
if [ ! -x "$GEN" ]; then
    echo "notice: $GEN is not built (make tests); nothing to inspect, skipped"
    exit 0
fi
# the unit test leaves sample.nc / sample.h5 (+ sample.xmf) here: 8 x 6 x 4 grid, 3 records
if ! HS_TEST_KEEP_OUTPUT=$WORK "$GEN" >"$WORK/gen.log" 2>&1; then
    cat "$WORK/gen.log"
    echo "FAIL: $GEN did not produce the sample files"
    exit 1
fi
contains() { # name, haystack file, fixed string
    if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: '$3' not found"; fi
}

cd "$WORK"
files=()
if [ -f sample.nc ]; then
    files+=(sample.nc)
    if command -v ncdump >/dev/null; then
        if ncdump -h sample.nc >hdr.txt 2>err.txt; then ok "ncdump -h reads sample.nc"; else bad "ncdump -h: $(cat err.txt)"; fi
        contains "Conventions" hdr.txt ':Conventions = "CF-1.8" ;'
        contains "x bounds" hdr.txt 'x:bounds = "x_bnds" ;'
        contains "bounds variable" hdr.txt 'double x_bnds(x, bnds) ;'
        contains "source names hpcsim" hdr.txt ':source = "hpcsim '
        contains "history" hdr.txt ':history = "'
        contains "parameters" hdr.txt ':hpcsim_parameters = "[run]\nsolver = test\n" ;'
        contains "unlimited time" hdr.txt 'time = UNLIMITED ; // (3 currently)'
        contains "dimension order" hdr.txt 'double T(time, z, y, x) ;'
        contains "time units" hdr.txt 'time:units = "seconds since 2000-01-01 00:00:00" ;'
        contains "time calendar" hdr.txt 'time:calendar = "standard" ;'
        contains "x axis" hdr.txt 'x:axis = "X" ;'
        contains "z axis" hdr.txt 'z:axis = "Z" ;'
        contains "x units" hdr.txt 'x:units = "m" ;'
        contains "variable units" hdr.txt 'T:units = "K" ;'
        contains "standard_name" hdr.txt 'T:standard_name = "air_temperature" ;'
        if ncdump -s -h sample.nc | grep -qF 'T:_ChunkSizes = 1, 4, 6, 8 ;'; then ok "one record per chunk"; else bad "chunking of T"; fi
        if ncdump sample.nc >/dev/null 2>err.txt; then ok "ncdump reads all data"; else bad "ncdump: $(cat err.txt)"; fi
    else
        echo "notice: ncdump not installed; NetCDF header checks skipped"
    fi
else
    echo "notice: this build has no NetCDF (no sample.nc); NetCDF checks skipped"
fi

if [ -f sample.h5 ]; then
    files+=(sample.h5)
    if command -v h5dump >/dev/null; then
        if h5dump -H sample.h5 >h5.txt 2>err.txt; then ok "h5dump -H reads sample.h5"; else bad "h5dump: $(cat err.txt)"; fi
        contains "dataset T" h5.txt 'DATASET "T"'
        contains "T shape" h5.txt 'DATASPACE  SIMPLE { ( 3, 4, 6, 8 ) / ( H5S_UNLIMITED, 4, 6, 8 ) }'
        contains "Conventions attribute" h5.txt 'ATTRIBUTE "Conventions"'
        if h5dump -d /T -s 2,3,5,7 -c 1,1,1,1 sample.h5 >/dev/null 2>err.txt; then ok "h5dump reads a hyperslab"; else bad "h5dump -d: $(cat err.txt)"; fi
    else
        echo "notice: h5dump not installed; HDF5 checks skipped"
    fi
    if [ -f sample.xmf ]; then ok "XDMF companion written"; else bad "sample.xmf missing"; fi
    if command -v xmllint >/dev/null; then
        if xmllint --noout sample.xmf 2>err.txt; then ok "xmllint: sample.xmf well-formed"; else bad "xmllint: $(cat err.txt)"; fi
    fi
else
    echo "notice: this build has no HDF5 (no sample.h5); HDF5 checks skipped"
fi

if [ ${#files[@]} -gt 0 ] && command -v python3 >/dev/null; then
    if python3 "$ROOT/scripts/check_output.py" --records 3 --var T --var q --var mask "${files[@]}" >check.txt 2>&1; then
        ok "check_output.py: $(grep -c '^ok' check.txt) checks, $(grep -c '^notice' check.txt) notices"
        grep '^notice' check.txt | sed 's/^/     /'
    else
        bad "check_output.py:"
        sed 's/^/     /' check.txt
    fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
