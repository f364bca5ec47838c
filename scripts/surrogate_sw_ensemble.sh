#!/usr/bin/env bash
# Writes an ensemble of shallow-water jet runs (inputs/sw_jet.ini) for the surrogate: N members whose
# initial perturbations differ (shallow_water.seed = 1..N), each DIR/member_S.nc, on a grid of CELLS.
#   scripts/surrogate_sw_ensemble.sh [DIR [N [CELLS]]]      defaults: sw_jet_ens 10 "128 64"
# Extra arguments after CELLS are passed to every run (mpirun is not used: run members in parallel
# yourself if you like, e.g. with xargs -P).
set -eu
DIR=${1:-sw_jet_ens} N=${2:-10} CELLS=${3:-128 64}
shift $(($# < 3 ? $# : 3))
BIN=${HS_BIN:-bin/hpcsim}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if ! "$BIN" params | grep -q '^\[shallow_water\]'; then
    echo "this hpcsim has no shallow-water model ([cfd] model = shallow_water); build the branch that has it" >&2
    exit 77
fi
mkdir -p "$DIR"
for s in $(seq 1 "$N"); do
    echo "member $s of $N"
    "$BIN" run "$ROOT/inputs/sw_jet.ini" --quiet shallow_water.seed="$s" cfd.n="$CELLS" output.path="$DIR/member_$s" \
        checkpoint.on_signal=false "$@"
done
