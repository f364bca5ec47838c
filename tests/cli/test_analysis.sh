#!/usr/bin/env bash
# scripts/analysis/: every tool answers --help and makes a PNG that shows data (pixel variance, coloured
# or dark pixels) from small runs of the example inputs; numbers they print are checked against
# independent references (the heat scheme's order 2, the seismic medium's vp from the picks' moveout,
# the shots, every point of Ghia's tables, a frame per record, evaluate's CSV).
# Exit 77 without numpy, xarray, matplotlib and netCDF4.
set -u
. "$(dirname "$0")/lib.sh"
A=$ROOT/scripts/analysis
I=$ROOT/inputs
python3 -c "import numpy, xarray, matplotlib, netCDF4" 2>/dev/null ||
    { echo "SKIP  numpy, xarray, matplotlib or netCDF4 missing (make deps)"; exit 77; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
run() { "$HS_BIN" run "$@" --quiet run.device=$DEVICE run.allow_shared_gpu=true >>runs.log 2>&1 || bad "hpcsim run $*: $(tail -2 runs.log)"; }

# png_shows_data PNG: a PNG at least 200x150 whose pixels vary (std > 0.05) and of which more than
# 0.5% are coloured (data in a colour map or a coloured line) or more than 2% dark (black wiggles)
png_shows_data() {
    python3 - "$1" <<'PY'
import sys
import matplotlib.image as mpimg
import numpy as np
img = mpimg.imread(sys.argv[1])[..., :3]
h, w = img.shape[:2]
std = float(img.std())
coloured = float(((img.max(axis=2) - img.min(axis=2)) > 0.15).mean())
dark = float((img.max(axis=2) < 0.35).mean())
print(f"{w}x{h}, std {std:.3f}, coloured {100 * coloured:.1f}%, dark {100 * dark:.1f}%")
sys.exit(0 if w >= 200 and h >= 150 and std > 0.05 and (coloured > 0.005 or dark > 0.02) else 1)
PY
}
check_png() { # NAME PNG
    if [ -s "$2" ] && png_shows_data "$2" >png.txt 2>&1; then ok "$1: $2 shows data ($(cat png.txt))"
    else bad "$1: $2: $(cat png.txt 2>/dev/null)"; fi
}

# --help of every tool: usage, exit 0, nothing run
for t in "$A"/*.py; do
    name=$(basename "$t")
    [ "$name" = hsio.py ] && continue
    if python3 "$t" --help >h.txt 2>&1 && grep -q "^usage:" h.txt; then ok "$name --help"; else bad "$name --help: $(head -3 h.txt)"; fi
done

# 1. heat: a field at a time (NetCDF and HDF5), an animation
run "$I/heat2d.ini" heat.n=32,32 output.path=heat
run "$I/heat2d.ini" heat.n=32,32 output.path=heat5 output.format=hdf5
python3 "$A/plot_field.py" heat.$EXT --time 5 --out heat_t5.png >out.txt 2>&1 || bad "plot_field.py: $(cat out.txt)"
check_png "plot_field.py" heat_t5.png
if python3 -c "import h5py" 2>/dev/null && "$HS_BIN" --version | grep -q '+hdf5'; then
    python3 "$A/plot_field.py" heat5.h5 --time 5 --out heat5_t5.png >out.txt 2>&1 || bad "plot_field.py on HDF5: $(cat out.txt)"
    check_png "plot_field.py (HDF5)" heat5_t5.png
    # a truncated file and a directory: a clear message and exit 2 (they ended in a traceback)
    head -c $(( $(wc -c < heat5.h5) / 2 )) heat5.h5 > cut5.h5
    python3 "$A/plot_field.py" cut5.h5 --out cut.png >out.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "truncated or damaged" out.txt && ! grep -q Traceback out.txt && ok "plot_field.py on a truncated file: exit 2, no traceback" || bad "plot_field.py on a truncated file: exit $rc: $(tail -2 out.txt)"
    python3 "$A/plot_field.py" . --out cut.png >out.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "a directory" out.txt && ok "plot_field.py on a directory: exit 2" || bad "plot_field.py on a directory: exit $rc: $(tail -2 out.txt)"
fi
python3 "$A/animate.py" heat.$EXT --out heat.gif --png heat_frames.png >out.txt 2>&1 || bad "animate.py: $(cat out.txt)"
check_png "animate.py" heat_frames.png
frames=$(python3 -c "from PIL import Image; im = Image.open('heat.gif'); print(getattr(im, 'n_frames', 1))" 2>/dev/null)
nrec=$(python3 -c "import netCDF4, sys; print(len(netCDF4.Dataset(sys.argv[1]).dimensions['time']))" heat.$EXT 2>/dev/null)
[ -n "$frames" ] && [ "$frames" = "$nrec" ] && ok "animate.py: heat.gif has a frame per record ($frames)" ||
    bad "animate.py: $frames frames for $nrec records"
if command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null; then
    python3 "$A/animate.py" heat.$EXT --out heat.mp4 --png heat_frames2.png >out.txt 2>&1 || bad "animate.py to MP4: $(cat out.txt)"
    mp4frames=$(ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 heat.mp4 2>/dev/null)
    [ "$mp4frames" = "$nrec" ] && ok "animate.py: heat.mp4 (ffmpeg) has a frame per record ($mp4frames)" ||
        bad "animate.py MP4: '$mp4frames' frames for $nrec records"
else
    echo "skip the MP4 animation: no ffmpeg"
fi

# bad arguments are refused before any drawing, with a message and no traceback: --fps 0 (a
# division by zero), an animation that is no .gif or .mp4 (the writer's ValueError), an unknown
# colour map, --at nan (took record 0), a PNG that cannot be written (exit 1)
for args in "animate.py heat.$EXT --fps 0:fps 0" "animate.py heat.$EXT --out heat.avi:out heat.avi" \
    "plot_field.py heat.$EXT --cmap nosuch:cmap nosuch" "animate.py heat.$EXT --cmap nosuch:cmap nosuch" \
    "plot_field.py heat.$EXT --at nan:at nan"; do
    cmd=${args%%:*}
    # shellcheck disable=SC2086
    python3 "$A"/$cmd >out.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q -- "--${args##*:}: " out.txt && ! grep -q Traceback out.txt && ok "${cmd%% *} ${cmd#* * }: exit 2" ||
        bad "${cmd}: exit $rc: $(tail -1 out.txt)"
done
python3 "$A/plot_field.py" heat.$EXT --out /proc/hs-none/x.png >out.txt 2>&1; rc=$?
[ $rc = 1 ] && grep -q "cannot write /proc/hs-none/x.png" out.txt && ! grep -q Traceback out.txt &&
    ok "plot_field.py to an unwritable place: exit 1, a message" || bad "plot_field.py unwritable --out: exit $rc: $(tail -1 out.txt)"

# 2. the cavity: diagnostics against time, centre lines against Ghia (a short, coarse run: the
#    check is that the profiles are drawn and the table read, not the steady state)
run "$I/cavity_re100.ini" cfd.n=17 cfd.t_end=3 output.every_time=0.5 output.path=cavity
python3 "$A/plot_diagnostics.py" cavity.$EXT --log --out cav_diag.png >diag.txt 2>&1 || bad "plot_diagnostics.py: $(cat diag.txt)"
python3 "$A/plot_diagnostics.py" cavity.$EXT --log --relative --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--log and --relative: give one" out.txt && ok "plot_diagnostics.py --log --relative: exit 2" || bad "plot_diagnostics.py --log --relative: exit $rc: $(tail -1 out.txt)"
check_png "plot_diagnostics.py" cav_diag.png
grep -q "kinetic_energy = " diag.txt && ok "plot_diagnostics.py prints the last kinetic energy" || bad "diagnostics: $(cat diag.txt)"
# plot_field.py's arguments: a series named as a field, a slice of a 2-D field: a message, exit 2
# (they ended in a traceback, or the slice was ignored)
python3 "$A/plot_field.py" cavity.$EXT --var kinetic_energy --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "kinetic_energy is a time series" out.txt && ok "plot_field.py --var of a series: exit 2" || bad "plot_field.py --var of a series: exit $rc: $(tail -1 out.txt)"
python3 "$A/animate.py" cavity.$EXT --var kinetic_energy --out x.gif >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "kinetic_energy is a time series" out.txt && ok "animate.py --var of a series: exit 2" || bad "animate.py --var of a series: exit $rc: $(tail -1 out.txt)"
python3 "$A/plot_field.py" cavity.$EXT --var x_bnds --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "x_bnds describes the grid's cells" out.txt && ok "plot_field.py --var x_bnds: exit 2" || bad "plot_field.py --var x_bnds: exit $rc: $(tail -1 out.txt)"
# plot_pinn.py on files that are none of the PINN's, and missing: a message, exit 2, nothing written
for args in "missing.nc" "cavity.$EXT"; do
    rm -f pp.png; python3 "$ROOT/scripts/plot_pinn.py" $args -o pp.png >out.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "plot_pinn.py: error:" out.txt && ! grep -q Traceback out.txt && [ ! -f pp.png ] &&
        ok "plot_pinn.py $args: exit 2" || bad "plot_pinn.py $args: exit $rc: $(tail -1 out.txt)"
done
python3 "$A/plot_field.py" cavity.$EXT --slice z=3 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "nothing to cut" out.txt && ok "plot_field.py --slice of a 2-D field: exit 2" || bad "plot_field.py --slice on 2-D: exit $rc: $(tail -1 out.txt)"
python3 "$A/cavity_ghia.py" cavity.$EXT --out cav_ghia.png >ghia.txt 2>&1 || bad "cavity_ghia.py: $(cat ghia.txt)"
check_png "cavity_ghia.py" cav_ghia.png
npts=$(grep -c "^[uv](" ghia.txt)
want=$(grep -c "^[uv] " "$ROOT/tests/data/ghia1982_cavity.txt")
[ "$npts" = "$want" ] && ok "cavity_ghia.py compares all $want points of Ghia's tables" || bad "cavity_ghia.py: $npts of $want points"
# at Re 1000 the spectral reference joins: every row carries its value, and ours minus it
python3 "$A/cavity_ghia.py" cavity.$EXT --re 1000 --out cav_bp.png >bp.txt 2>&1 || bad "cavity_ghia.py --re 1000: $(cat bp.txt)"
if python3 - bp.txt "$ROOT/tests/data/botella1998_cavity_re1000.txt" <<'PY'; then ok "cavity_ghia.py --re 1000: Botella & Peyret's value and our difference from it on all 34 rows"; else bad "cavity_ghia.py --re 1000: $(head -5 bp.txt)"; fi
import sys
ref = {(w[0], float(w[1])): float(w[2]) for w in (l.split() for l in open(sys.argv[2])) if len(w) >= 3 and w[0] in "uv"}
rows = [l.split() for l in open(sys.argv[1]) if l[:2] in ("u(", "v(")]
assert len(rows) == 34, len(rows)
for w in rows:
    # name (3 words: "u(y), x = 0.5" is 4), position, Ghia, ours, diff, B&P, diff
    pos, ours, bp, d = float(w[4]), float(w[6]), float(w[8]), float(w[9])
    assert abs(bp - ref[(w[0][0], pos)]) < 1e-7, (w, ref[(w[0][0], pos)])
    assert abs((ours - bp) - d) < 2e-5, w
assert any("against Botella & Peyret: largest difference" in l for l in open(sys.argv[1]))
PY

# 3. seismograms: wiggles of the receivers (a small homogeneous 2-D shot)
run "$I/seismic_salt.ini" seismic.medium=constant seismic.model_file=none seismic.density=constant seismic.n=101,51 \
    seismic.spacing=30 seismic.t_end=1.0 seismic.pml=10 seismic.receiver_count=21 seismic.source_position=1500,30 \
    seismic.receiver_start=300,30 seismic.receiver_end=2700,30 seismic.segy=false output.path=shot_snap
python3 "$A/plot_seismograms.py" salt_shot.$EXT --trace-normalize --out wiggle.png >picks.txt 2>&1 || bad "plot_seismograms.py: $(cat picks.txt)"
check_png "plot_seismograms.py" wiggle.png
python3 "$A/plot_seismograms.py" salt_shot.$EXT --every 0 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--every 0: give at least 1" out.txt && ok "plot_seismograms.py --every 0: exit 2" || bad "plot_seismograms.py --every 0: exit $rc: $(tail -1 out.txt)"
# its picks: the direct wave's moveout beyond 300 m offset is 1 / vp (vp = 2000 m/s, the default medium)
if python3 - picks.txt <<'PY' >v.txt 2>&1; then ok "plot_seismograms.py picks: direct wave at $(cat v.txt) m/s (vp 2000)"; else bad "picks: $(cat v.txt picks.txt)"; fi
import sys
import numpy as np
rows = [l.split() for l in open(sys.argv[1]) if l.split() and l.split()[0].replace(".", "").isdigit()]
x, t = np.array([float(r[0]) for r in rows]), np.array([float(r[1]) for r in rows])
off = np.abs(x - 1500)
m = off > 300
slope = np.polyfit(off[m], t[m], 1)[0]
print(f"{1 / slope:.0f}")
sys.exit(0 if abs(1 / slope - 2000) < 0.05 * 2000 else 1)
PY

# files of other solvers: a 1-D heat field (time x cells) is no seismogram, shallow water's u and v
# are no cavity (both were drawn, exit 0)
run "$I/heat2d.ini" heat.ndim=1 heat.n=32 heat.length=1 heat.center=0.3 heat.source_center=0.7 output.path=heat1d
python3 "$A/plot_seismograms.py" heat1d.$EXT --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "no time x station variable in heat1d.$EXT" out.txt && ok "plot_seismograms.py on a 1-D heat file: exit 2" ||
    bad "plot_seismograms.py on a heat file: exit $rc: $(tail -1 out.txt)"
run "$I/sw_lake.ini" cfd.n=16 cfd.t_end=0.1 output.path=swl
python3 "$A/cavity_ghia.py" swl.$EXT --re 100 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "output of cfd shallow_water, not of a lid-driven cavity" out.txt && ok "cavity_ghia.py on shallow water: exit 2" ||
    bad "cavity_ghia.py on shallow water: exit $rc: $(tail -1 out.txt)"

# the lattice Boltzmann cavity: Re from lbm.u_ref L / lbm.nu (it asked for --re of a file that said
# Re 100), and a --re against the file's said
run "$I/lbm_cavity_re100.ini" cfd.n=24 cfd.t_end=2 output.every_time=1 output.path=lbmcav
python3 "$A/cavity_ghia.py" lbmcav.$EXT --out lbm_ghia.png >out.txt 2>&1; rc=$?
[ $rc = 0 ] && grep -q "Re 100\|Re = 100\|largest difference" out.txt && ok "cavity_ghia.py on an lbm cavity takes Re from its parameters" ||
    bad "cavity_ghia.py on lbm: exit $rc: $(tail -2 out.txt)"
python3 "$A/cavity_ghia.py" lbmcav.$EXT --re 1000 --out lbm_ghia.png >out.txt 2>&1; rc=$?
[ $rc = 0 ] && grep -q "warning: --re 1000 against a file whose parameters give Re = 100" out.txt && ok "cavity_ghia.py --re against the file's Re: warned" ||
    bad "cavity_ghia.py --re 1000 on Re 100: exit $rc: $(tail -2 out.txt)"

# 4. convergence of the heat scheme (sine start, constant k, no source) on 8^2 .. 64^2 cells:
#    the observed order of the explicit second-order scheme is 2
for n in 8 16 32 64; do
    run "$I/heat2d.ini" heat.n=$n,$n heat.conductivity=constant heat.source=none heat.initial=sine output.path=conv$n
done
python3 "$A/convergence.py" conv8.$EXT conv16.$EXT conv32.$EXT conv64.$EXT --out conv.png >conv.txt 2>&1 || bad "convergence.py: $(cat conv.txt)"
check_png "convergence.py" conv.png
# a level over another domain (twice the length): refused, not an order of -0.09
run "$I/heat2d.ini" heat.n=16,16 heat.length=2,2 heat.conductivity=constant heat.source=none heat.initial=sine output.path=conv16L
python3 "$A/convergence.py" conv8.$EXT conv16L.$EXT conv32.$EXT --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "cover different domains" out.txt && ok "convergence.py on levels of different domains: exit 2" ||
    bad "convergence.py on different domains: exit $rc: $(tail -1 out.txt)"
if awk '/^(16x16|32x32) / { n++; if ($NF < 1.8 || $NF > 2.2) bad = 1 } END { exit !(n == 2 && !bad) }' conv.txt; then
    ok "convergence.py: observed orders $(awk '/^(16x16|32x32) / { printf "%s ", $NF }' conv.txt)(second-order scheme: 2)"
else
    bad "convergence.py orders: $(cat conv.txt)"
fi

# spectral point values (Taylor-Green, exact to round-off on any grid): --restrict fourier finds the
# levels equal to round-off; the default cell average reported a difference of its own error (~1e-2)
for n in 12 24 48; do
    run "$I/taylor_green_spectral.ini" cfd.n="$n $n" cfd.t_end=0.1 output.path=tgs$n
done
python3 "$A/convergence.py" tgs12.$EXT tgs24.$EXT tgs48.$EXT --var u --restrict fourier --out tgs.png >tgs.txt 2>&1 || bad "convergence.py fourier: $(cat tgs.txt)"
if awk '/^(12x12|24x24) / { n++; if (!($3 < 1e-12)) bad = 1 } END { exit !(n == 2 && !bad) }' tgs.txt; then
    ok "convergence.py --restrict fourier: spectral levels agree to $(awk '/^24x24 / { print $3 }' tgs.txt)"
else bad "convergence.py --restrict fourier: $(cat tgs.txt)"; fi
python3 "$A/convergence.py" tgs12.$EXT tgs24.$EXT tgs48.$EXT --var u --restrict inject --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "not points of the finer grid" out.txt && ok "convergence.py --restrict inject on grids that nest no points: exit 2" ||
    bad "convergence.py inject: exit $rc $(tail -1 out.txt)"

# --time beyond the records: a message and exit 2 (numpy's IndexError was a traceback)
python3 "$A/convergence.py" conv8.$EXT conv16.$EXT conv32.$EXT --time 99 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "time 99: conv8.$EXT has records 0 .. " out.txt && ! grep -q Traceback out.txt &&
    ok "convergence.py --time 99: exit 2, the records named" || bad "convergence.py --time 99: exit $rc: $(tail -1 out.txt)"
python3 "$A/cavity_ghia.py" cavity.$EXT --time -99 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "time -99: cavity.$EXT has records 0 .. " out.txt && ! grep -q Traceback out.txt &&
    ok "cavity_ghia.py --time -99: exit 2, the records named" || bad "cavity_ghia.py --time -99: exit $rc: $(tail -1 out.txt)"
python3 "$A/cavity_ghia.py" cavity.$EXT --ghia heat.$EXT --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "ghia heat.$EXT: " out.txt && ! grep -q Traceback out.txt &&
    ok "cavity_ghia.py --ghia of a file that is no table: exit 2" || bad "cavity_ghia.py --ghia junk: exit $rc: $(tail -1 out.txt)"

# 5. quantum counts (the GHZ example: two outcomes, 4096 shots)
cp "$I"/qc_ghz.qasm "$I"/qc_ghz_zz.pauli .
run "$I/qc_ghz.ini" quantum.circuit=qc_ghz.qasm quantum.observable=qc_ghz_zz.pauli output.path=ghz
python3 "$A/quantum_counts.py" ghz.json --out ghz.png >q.txt 2>&1 || bad "quantum_counts.py: $(cat q.txt)"
check_png "quantum_counts.py" ghz.png
grep -q "^shots 4096, 2 distinct outcomes of 32" q.txt && ok "quantum_counts.py: 4096 shots, 2 outcomes of 32" || bad "quantum_counts.py: $(cat q.txt)"
# a reader that closes the pipe first (| head -c 0 exits before the script prints): quiet, status 141
# as a Unix tool's SIGPIPE, where it printed a BrokenPipeError traceback
python3 "$A/quantum_counts.py" ghz.json --out ghz_pipe.png 2>pipe_err.txt | head -c 0; rc=${PIPESTATUS[0]}
[ "$rc" = 141 ] && ! grep -q Traceback pipe_err.txt && ok "quantum_counts.py | head: quiet, exit 141" ||
    bad "quantum_counts.py | head: exit $rc: $(tail -2 pipe_err.txt)"

# --top 0 (empty axes, exit 0), a NetCDF file (a UTF-8 codec error) and counts that are no numbers (a
# TypeError traceback): a message, exit 2
python3 "$A/quantum_counts.py" ghz.json --top 0 --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--top 0: give at least 1" out.txt && ok "quantum_counts.py --top 0: exit 2" || bad "quantum_counts.py --top 0: exit $rc: $(tail -1 out.txt)"
python3 "$A/quantum_counts.py" heat.$EXT --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "not a JSON file" out.txt && ok "quantum_counts.py on an output file: exit 2, not JSON" || bad "quantum_counts.py on heat.$EXT: exit $rc: $(tail -1 out.txt)"
echo '{"counts": {"00": "many", "11": 3}}' > badcounts.json
python3 "$A/quantum_counts.py" badcounts.json --out x.png >out.txt 2>&1; rc=$?
[ $rc = 2 ] && ! grep -q Traceback out.txt && ok "quantum_counts.py with counts that are no numbers: exit 2" || bad "quantum_counts.py bad counts: exit $rc: $(tail -1 out.txt)"

# 6. surrogate skill against lead time (a very short training on the synthetic trajectories)
if command -v ncgen >/dev/null; then
    for i in 0 1 2 3; do "$ROOT/scripts/surrogate_testdata.sh" traj$i.nc 24 16 16 0.$i >/dev/null; done
    "$HS_BIN" train "$I/surrogate_quick.ini" --quiet surrogate.steps=10 checkpoint.every_steps=0 run.device=$DEVICE >>runs.log 2>&1 ||
        bad "surrogate training: $(tail -2 runs.log)"
    "$HS_BIN" evaluate "$I/surrogate_quick.ini" --quiet output.path=scores run.device=$DEVICE >>runs.log 2>&1 ||
        bad "surrogate evaluation: $(tail -2 runs.log)"
    python3 "$A/surrogate_skill.py" scores.$EXT --leads 1,4 >s.txt 2>&1 || bad "surrogate_skill.py: $(cat s.txt)"
    check_png "surrogate_skill.py" scores_skill.png
    check_png "surrogate_skill.py (example)" scores_example.png
    # --leads outside the example's, or no numbers: a message, exit 2 (dropped without a word, or a traceback)
    for l in 0 1,99 abc; do
        python3 "$A/surrogate_skill.py" scores.$EXT --leads $l --out sk_bad.png >out.txt 2>&1; rc=$?
        [ $rc = 2 ] && grep -q -- "--leads $l: " out.txt && [ ! -f sk_bad.png ] && ok "surrogate_skill.py --leads $l: exit 2" ||
            bad "surrogate_skill.py --leads $l: exit $rc: $(tail -1 out.txt)"
    done
    # the printed RMSE equals the CSV that evaluate wrote
    if python3 - scores.csv s.txt <<'PY'; then ok "surrogate_skill.py: its table equals evaluate's CSV"; else bad "surrogate_skill.py table: $(head -5 s.txt)"; fi
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
printed = [l.split() for l in open(sys.argv[2]) if l[:1].isalpha() and len(l.split()) == 7 and l.split()[0] != "variable"]
assert len(printed) == len(rows), (len(printed), len(rows))
for r, p in zip(rows, printed):
    assert p[0] == r["variable"] and abs(float(p[2]) - float(r["rmse_model"])) <= 1e-4 * float(r["rmse_model"]), (p, r)
PY
else
    echo "skip surrogate_skill.py: ncgen (netcdf-bin) missing to write the training data"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
