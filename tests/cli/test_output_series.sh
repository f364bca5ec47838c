#!/usr/bin/env bash
# Series and station files through real clients: check_output.py (cfchecks offline on .nc), ncdump,
# netCDF4/h5py reading the values back, and the station file written at 2 and 4 ranks equal to the 1-rank file (hpcsim compare).
set -u
BUILD=${BUILD:-build}
. "$(dirname "$0")/lib.sh"
cd "$ROOT"   # $BUILD is relative to the repository; the checks below go back to $WORK
GEN=$BUILD/tests/unit/test_output_series
GEN_MPI=$(realpath "$BUILD/tests/mpi/test_output_series_mpi" 2>/dev/null)
if [ ! -x "$GEN" ]; then
    echo "SKIP: $GEN is not built (make tests)"
    exit 77
fi
if ! HS_TEST_KEEP_OUTPUT=$WORK "$GEN" >"$WORK/gen.log" 2>&1; then
    cat "$WORK/gen.log"
    echo "FAIL: $GEN did not produce the sample files"
    exit 1
fi
cd "$WORK"
shopt -s nullglob
files=(*.nc *.h5)
shopt -u nullglob
[ -e "${files[0]}" ] || { echo "SKIP: this build writes no NetCDF or HDF5"; exit 77; }
for f in "${files[@]}"; do
    [ -e "$f" ] || continue
    if python3 "$ROOT/scripts/check_output.py" "$f" >check.txt 2>&1; then
        ok "check_output.py $f: $(grep '^ok' check.txt | sed 's/^ok *//' | tr '\n' ';' | cut -c1-160)"
    else
        bad "check_output.py $f:"
        sed 's/^/     /' check.txt
    fi
done
if [ -f stations.nc ] && command -v ncdump >/dev/null; then
    ncdump -h stations.nc >hdr.txt
    for want in ':featureType = "timeSeries"' 'station_name:cf_role = "timeseries_id"' 'double vz(time, station)' \
        'vz:coordinates = "station_x station_y station_z station_name"'; do
        if grep -qF -- "$want" hdr.txt; then ok "ncdump stations.nc: $want"; else bad "ncdump stations.nc: '$want' missing"; fi
    done
    ncdump -h grid_series.nc >hdr2.txt
    if grep -qF 'double energy(time)' hdr2.txt && grep -qF 'double T(time, y, x)' hdr2.txt; then
        ok "ncdump grid_series.nc: energy(time) beside T(time, y, x)"
    else
        bad "ncdump grid_series.nc: $(grep -E 'energy|T\(' hdr2.txt)"
    fi
fi
if python3 -c "import netCDF4" 2>/dev/null && [ -f stations.nc ]; then
    if python3 - <<'PY' >py.txt 2>&1; then ok "netCDF4 reads the series and station values"; else bad "netCDF4: $(tail -3 py.txt)"; fi
import netCDF4
with netCDF4.Dataset("series.nc") as d:
    assert list(d["energy"][:]) == [1.5 + 0.25 * r for r in range(5)], d["energy"][:]
with netCDF4.Dataset("stations.nc") as d:
    names = [n for n in netCDF4.chartostring(d["station_name"][:])]
    assert names == ["R1", "R2", "south_gauge"], names
    v = d["vz"][:]
    assert v.shape == (4, 3) and all(v[t, s] == 100.0 * t + s + 0.5 for t in range(4) for s in range(3))
PY
fi
if python3 -c "import h5py" 2>/dev/null && [ -f stations.h5 ]; then
    if python3 - <<'PY' >py.txt 2>&1; then ok "h5py reads the series and station values"; else bad "h5py: $(tail -3 py.txt)"; fi
import h5py
with h5py.File("grid_series.h5", "r") as f:
    assert list(f["mass"][:]) == [10.0 - 0.125 * r * r for r in range(3)]
    assert f["mass"].attrs["dimensions"] == b"time" or f["mass"].attrs["dimensions"] == "time"
with h5py.File("stations.h5", "r") as f:
    assert [n.decode() for n in f["station_name"][:]] == ["R1", "R2", "south_gauge"]
    v = f["vz"][:]
    assert v.shape == (4, 3) and all(v[t, s] == 100.0 * t + s + 0.5 for t in range(4) for s in range(3))
PY
fi
# the receivers file written by 2 and 4 ranks (each its own receivers) equals the 1-rank file
if [ -x "$GEN_MPI" ] && [ $HAVE_MPI = 1 ]; then
    for np in 1 2 4; do
        mkdir -p np$np
        HS_TEST_KEEP_OUTPUT=$WORK/np$np "${MPIRUN[@]}" -n $np "$GEN_MPI" \
            >mpi$np.log 2>&1 || bad "test_output_series_mpi at $np ranks: $(tail -3 mpi$np.log)"
    done
    for np in 2 4; do
        for f in np1/receivers_np.*; do
            [ -e "$f" ] || continue
            b=np$np/$(basename "$f")
            for v in vx receiver_x receiver_y time; do
                if "$HS_BIN" compare "$f" "$b" $v >cmp.txt 2>&1; then ok "$b $v equals the 1-rank file"; else bad "$b $v: $(cat cmp.txt)"; fi
            done
            [ "${f##*.}" = nc ] && command -v ncdump >/dev/null && {
                if diff <(ncdump "$f" | grep -v -e history -e '^netcdf') <(ncdump "$b" | grep -v -e history -e '^netcdf') >/dev/null; then
                    ok "ncdump of $b equals the 1-rank file's"
                else
                    bad "ncdump of $b differs from the 1-rank file's"
                fi
            }
        done
    done
else
    echo "notice: no MPI build (or test_output_series_mpi, mpirun missing): rank-count comparison left out"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
