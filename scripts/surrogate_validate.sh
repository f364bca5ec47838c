#!/usr/bin/env bash
# `make validate`'s surrogate case: on held-out shallow-water jets (inputs/surrogate_sw_jet.ini, the
# ensemble of scripts/surrogate_sw_ensemble.sh), the trained surrogate's RMSE must beat persistence by
# at least 30% at every lead time and variable, and beat climatology.  Prints the scores and writes
# the plots (scripts/analysis/surrogate_skill.py) into $OUT (default build/surrogate_validate).  Meant for a GPU:
# the training takes minutes there and hours on a CPU.  SURR_NP=N trains on N ranks.
set -u
BIN=${HS_BIN:-bin/hpcsim}
BIN=$(realpath "$BIN")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-build/surrogate_validate}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
if ! "$BIN" params | grep -q '^\[shallow_water\]'; then
    echo "SKIP: this hpcsim has no shallow-water model ([cfd] model = shallow_water): the surrogate's validation needs its jets"
    exit 0
fi
cd "$OUT"
if ! ls sw_jet_ens/member_10.* >/dev/null 2>&1; then
    HS_BIN=$BIN "$ROOT/scripts/surrogate_sw_ensemble.sh" sw_jet_ens 10 "128 64" || exit 1
fi
# the members are .nc, or .h5 where the build has no NetCDF (the GPU machine): name them as written
FILES=$(for s in $(seq 1 10); do ls sw_jet_ens/member_$s.nc sw_jet_ens/member_$s.h5 2>/dev/null | head -1; done | tr '\n' ' ')
NP=${SURR_NP:-1}
LAUNCH=()
[ "$NP" -gt 1 ] && LAUNCH=(mpirun --oversubscribe --allow-run-as-root -n "$NP")
# SURR_WALLTIME=hh:mm:ss stops the training there with a checkpoint (exit 3); run the script again
# to continue it from that checkpoint (for machines that lend time in slices)
WALL=()
[ -n "${SURR_WALLTIME:-}" ] && WALL=(run.walltime="$SURR_WALLTIME")
# SURR_PRECISION=bf16|f16 trains (and evaluates) in mixed precision instead of the file's f32
PREC=()
[ -n "${SURR_PRECISION:-}" ] && PREC=(surrogate.precision="$SURR_PRECISION")
RESTART=()
[ -f train.interrupted ] && [ -f sw_jet_surrogate_ck.h5 ] && RESTART=(--restart sw_jet_surrogate_ck.h5) && echo "continuing the training from sw_jet_surrogate_ck.h5"
"${LAUNCH[@]}" "$BIN" train "$ROOT/inputs/surrogate_sw_jet.ini" surrogate.files="$FILES" run.allow_shared_gpu=true \
    checkpoint.on_signal=false "${PREC[@]}" "${WALL[@]}" "${RESTART[@]}"
rc=$?
if [ $rc = 3 ]; then
    touch train.interrupted
    echo "training stopped at run.walltime with a checkpoint: run this script again to continue it"
    exit 3
fi
[ $rc = 0 ] || exit 1
rm -f train.interrupted
"$BIN" evaluate "$ROOT/inputs/surrogate_sw_jet.ini" surrogate.files="$FILES" "${PREC[@]}" output.path=sw_jet_scores || exit 1
python3 "$ROOT/scripts/analysis/surrogate_skill.py" "$(ls sw_jet_scores.nc sw_jet_scores.h5 2>/dev/null | head -1)" --example-var vorticity || echo "(no plots: matplotlib missing?)"
# every variable and lead: model <= 0.7 persistence, and model < climatology
awk -F, 'NR > 1 {
    n++
    if ($4 > 0.7 * $5) { bad++; printf "  %s lead %d: RMSE %.4g, persistence %.4g (only %.0f%% better)\n", $1, $2, $4, $5, 100 * (1 - $4 / $5) }
    if ($4 >= $6) { bad++; printf "  %s lead %d: RMSE %.4g is not below climatology %.4g\n", $1, $2, $4, $6 }
    if (worst == "" || 1 - $4 / $5 < worst) worst = 1 - $4 / $5
} END {
    printf "surrogate on the held-out jet: %d variable-lead pairs, the smallest RMSE gain over persistence %.1f%% (need >= 30%%)\n", n, 100 * worst
    exit bad > 0
}' sw_jet_scores.csv
