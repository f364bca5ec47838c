#!/usr/bin/env bash
# Remakes the figures of docs/img/ from small runs of the example inputs, drawn with scripts/analysis/.
# usage: scripts/docs_figures.sh [BIN]   (BIN: the hpcsim binary, default bin/hpcsim; runs in a scratch folder)
set -eu
ROOT=$(realpath "$(dirname "$0")/..")
H=$(realpath "${1:-$ROOT/bin/hpcsim}")
I=$ROOT/inputs
A=$ROOT/scripts/analysis
D=$ROOT/docs/img
mkdir -p "$D"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
cp -r "$I"/meshes "$I"/*.qasm "$I"/*.pauli .
q() { "$H" run "$@" --quiet >/dev/null; }
# heat: the example at 32^2, and the self-convergence of the sine mode on 8^2 .. 64^2
q "$I/heat2d.ini" heat.n=32,32 output.path=heat
python3 "$A/plot_field.py" heat.nc -o "$D/heat_field.png"
for n in 8 16 32 64; do
    q "$I/heat2d.ini" heat.n=$n,$n heat.conductivity=constant heat.source=none heat.initial=sine output.path=conv$n
done
python3 "$A/convergence.py" conv8.nc conv16.nc conv32.nc conv64.nc --markdown -o "$D/heat_convergence.png"
# navier_stokes: the cavity at Re 100 on 33^2 cells against Ghia
q "$I/cavity_re100.ini" cfd.n=33 cfd.t_end=20 output.every_time=5 output.path=cavity
python3 "$A/cavity_ghia.py" cavity.nc -o "$D/cavity_re100_ghia.png" | tail -2
# spectral and shallow water: diagnostics
q "$I/taylor_green_spectral.ini" output.path=tg
python3 "$A/plot_diagnostics.py" tg.nc --log -o "$D/spectral_taylor_green_diagnostics.png" >/dev/null
q "$I/sw_vortex.ini" cfd.n=64 output.path=swv
python3 "$A/plot_diagnostics.py" swv.nc -o "$D/shallow_water_vortex_diagnostics.png" >/dev/null
python3 "$A/plot_field.py" swv.nc --var vorticity -o "$D/shallow_water_vortex_vorticity.png"
# seismic: a shot in a homogeneous medium
q "$I/seismic_salt.ini" seismic.medium=constant seismic.model_file=none seismic.density=constant seismic.n=101,51 \
    seismic.spacing=30 seismic.t_end=1.0 seismic.pml=10 seismic.receiver_count=21 seismic.source_position=1500,30 \
    seismic.receiver_start=300,30 seismic.receiver_end=2700,30 seismic.segy=false output.every_time=0.25
python3 "$A/plot_seismograms.py" salt_shot.nc --trace-normalize -o "$D/seismic_wiggle.png" | tail -1
# quantum: GHZ counts
q "$I/qc_ghz.ini" output.path=ghz
python3 "$A/quantum_counts.py" ghz.json -o "$D/quantum_ghz_counts.png"
# fem: Poisson on the square
q "$I/fem_poisson_square.ini" output.path=fem
python3 "$A/plot_field.py" fem.nc -o "$D/fem_poisson_square.png"
# surrogate: the quick case on synthetic trajectories
for i in 0 1 2 3; do "$ROOT/scripts/surrogate_testdata.sh" traj$i.nc 24 16 16 0.$i >/dev/null; done
"$H" train "$I/surrogate_quick.ini" --quiet >/dev/null
"$H" evaluate "$I/surrogate_quick.ini" --quiet output.path=scores >/dev/null
python3 "$A/surrogate_skill.py" scores.nc --leads 1,4 -o "$D/surrogate_skill.png" --example-out "$D/surrogate_example.png" >/dev/null
# pinn: the quick example (about 2 minutes on 2 CPU cores)
q "$I/pinn_quick.ini"
python3 "$ROOT/scripts/plot_pinn.py" pinn_quick.nc -o "$D/pinn_quick.png"
python3 "$A/plot_diagnostics.py" pinn_quick_history.nc --log -o "$D/pinn_quick_history.png" >/dev/null
echo "docs_figures.sh: figures in $D"
