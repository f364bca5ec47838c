#!/usr/bin/env bash
# make demo: runs inputs/heat2d.ini into demo/, draws its final field as a PNG, says where both are.
set -eu
BIN=${1:-bin/hpcsim}
cd "$(dirname "$0")/.."
mkdir -p demo
"$BIN" run inputs/heat2d.ini output.path=demo/heat2d
out=demo/heat2d.nc
[ -f "$out" ] || out=demo/heat2d.h5
if python3 -c "import matplotlib, numpy" 2>/dev/null && { [ "${out##*.}" = h5 ] && python3 -c "import h5py" 2>/dev/null || python3 -c "import netCDF4" 2>/dev/null; }; then
    python3 scripts/analysis/plot_field.py "$out" --var T --time -1 --out demo/heat2d.png
    echo "demo: output $out, picture of the final field demo/heat2d.png"
else
    echo "demo: output $out (no picture: install matplotlib and netCDF4/h5py, e.g. with 'make deps')"
fi
