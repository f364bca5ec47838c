#!/usr/bin/env bash
# `hpcsim summary FILE`: the run's stop (finished, max_steps, signal, killed, failed), version, ranks and threads,
# timings and final diagnostics read back from NetCDF and HDF5 outputs, checked against the files read
# by other clients (ncdump, Python) and against what the test itself ran.
set -u
. "$(dirname "$0")/lib.sh"
HAVE_NC=0
"$HS_BIN" --version | grep -q '+netcdf' && HAVE_NC=1
HAVE_H5=0
"$HS_BIN" --version | grep -q '+hdf5' && HAVE_H5=1

cat > h.ini <<EOF
[run]
solver = heat
device = $DEVICE
allow_shared_gpu = true
[heat]
ndim = 2
n = 40 24
t_end = 0.01
initial = gaussian
sigma = 0.1
center = 0.4 0.5
T0 = 300
amplitude = 20
bc_ylo = periodic
bc_yhi = periodic
[output]
every_steps = 20
[checkpoint]
every_steps = 50
EOF

field() { sed -n "s/^  $1 *: //p" "$2" | head -1; } # the value of a summary line "  NAME : value"

# 1. a finished run: stop, step, records, version
t0=$(date +%s.%N)
OMP_NUM_THREADS=2 "$HS_BIN" run h.ini --quiet output.path=fin checkpoint.path=fin.ck >o1 2>e1 || bad "heat run: $(cat e1)"
t1=$(date +%s.%N)
steps=$(sed -n 's/^hpcsim: finished at step \([0-9]*\),.*/\1/p' o1)
"$HS_BIN" summary fin.$EXT >s1 2>&1 || bad "summary exit $?: $(cat s1)"
if [ "$(field stopped s1)" = "finished (reached the end time 0.01)" ] && [ -n "$steps" ] &&
    [ "$(field at s1)" = "step $steps, t = 0.01 of end time 0.01" ]; then
    ok "finished run: stop reason and step $steps"
else
    bad "finished run: '$(field stopped s1)' '$(field at s1)' (run said step $steps)"
fi
want_version=$("$HS_BIN" --version | head -1)
[ "$(field version s1)" = "$want_version" ] && ok "version: $want_version" || bad "version '$(field version s1)' != '$want_version'"
[ "$(field solver s1)" = heat ] && ok "solver: heat" || bad "solver '$(field solver s1)'"
if grep -q "^  n = 40 24$" s1 && grep -q "^  every_steps = 20$" s1; then ok "parameters printed"; else bad "parameters missing"; fi
nrec_expect=$(( (steps + 19) / 20 + 1 ))
[ $((steps % 20)) = 0 ] && nrec_expect=$((steps / 20 + 1))
if [ $HAVE_NC = 1 ] && command -v ncdump >/dev/null; then
    nrec_expect=$(ncdump -h fin.nc | sed -n 's/.*time = UNLIMITED ; \/\/ (\([0-9]*\) currently).*/\1/p')
fi
if field records s1 | grep -q "^$nrec_expect, time 0 \.\. 0.01 "; then ok "records: $nrec_expect, time 0 .. 0.01"
else bad "records '$(field records s1)', expected $nrec_expect"; fi
threads=$(CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2 "$HS_BIN" info |  # no GPU in view: info prints the CPU line with the thread count
     sed -n 's/.*, \([0-9]*\) OpenMP thread(s).*/\1/p' | head -1)
[ "$threads" = 1 ] && want_t="1 thread" || want_t="$threads threads"
if field run s1 | grep -q "1 rank x $want_t, device "; then ok "1 rank x $want_t (as hpcsim info says)"; else bad "run line '$(field run s1)', info says $threads threads"; fi
# timings: within what the test measured around the process, the parts within the whole
read -r wall loop out ck nck <<<"$(field timings s1 | sed 's/wall \([0-9.]*\) s: time loop \([0-9.]*\) s, output \([0-9.]*\) s, checkpoints \([0-9.]*\) s (\([0-9]*\) written)/\1 \2 \3 \4 \5/')"
if awk -v w="$wall" -v l="$loop" -v o="$out" -v c="$ck" -v a="$t0" -v b="$t1" \
    'BEGIN { exit !(w > 0 && w <= b - a && l <= w && o + c <= w) }' && [ "$nck" = $((steps / 50)) ]; then
    ok "timings: wall $wall s <= process $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s, loop $loop, output $out, $nck checkpoints"
else
    bad "timings '$(field timings s1)' (process $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s, $((steps / 50)) checkpoints expected)"
fi

# 2. the final field's min, max and mean against Python's reading of the same record
if python3 -c "import numpy, netCDF4, h5py" 2>/dev/null; then
    got=$(sed -n 's/^  T  *min \([^ ]*\)  max \([^ ]*\)  mean \([^ ]*\) K (\([0-9]*\) values)$/\1 \2 \3 \4/p' s1)
    if python3 - fin.$EXT "$got" <<'PY'; then ok "T at the last record: min/max/mean agree with numpy ($got)"; else bad "T statistics: $got"; fi
import sys, numpy as np
path, got = sys.argv[1], [float(x) for x in sys.argv[2].split()]
if path.endswith(".nc"):
    import netCDF4
    T = np.asarray(netCDF4.Dataset(path).variables["T"][-1], dtype=float)
else:
    import h5py
    T = np.asarray(h5py.File(path, "r")["T"][-1], dtype=float)
want = [T.min(), T.max(), T.mean(), T.size]
print("numpy:", want, "summary:", got)
sys.exit(0 if all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(got, want)) else 1)
PY
else
    echo "skip numpy comparison: numpy/netCDF4/h5py not installed"
fi

# 3. the same run written as HDF5: the same diagnostics (the other reader, the other writer)
if [ $HAVE_NC = 1 ] && [ $HAVE_H5 = 1 ]; then
    "$HS_BIN" run h.ini --quiet output.format=hdf5 output.path=fin5 checkpoint.path=fin5.ck >/dev/null 2>&1
    "$HS_BIN" summary fin5.h5 >s5 2>&1
    if diff <(sed -n '/^diagnostics/,/^parameters/p' s1) <(sed -n '/^diagnostics/,/^parameters/p' s5) >/dev/null &&
        [ "$(field stopped s5)" = "$(field stopped s1)" ] && [ "$(field at s5)" = "$(field at s1)" ]; then
        ok "HDF5 output: the same stop and diagnostics as NetCDF"
    else
        bad "HDF5 summary differs: $(diff <(sed -n '/^diag/,/^param/p' s1) <(sed -n '/^diag/,/^param/p' s5) | head)"
    fi
fi

# 4. run.max_steps, a signal, a hard kill
"$HS_BIN" run h.ini --quiet run.max_steps=30 output.path=ms checkpoint.path=ms.ck >/dev/null 2>&1
"$HS_BIN" summary ms.$EXT >s2 2>&1
[ "$(field stopped s2)" = "max_steps (stopped at run.max_steps = 30)" ] && field at s2 | grep -q "^step 30, " &&
    ok "max_steps: stopped at step 30" || bad "max_steps: '$(field stopped s2)' '$(field at s2)'"
HS_TEST_SIGNAL_AT_STEP=40 "$HS_BIN" run h.ini --quiet output.path=sig checkpoint.path=sig.ck >/dev/null 2>e3
"$HS_BIN" summary sig.$EXT.partial >s3 2>&1
sigstep=$(sed -n 's/.*stopped by signal 15 at step \([0-9]*\) .*/\1/p' e3)
[ "$(field stopped s3)" = "signal (by signal 15)" ] && [ -n "$sigstep" ] && field at s3 | grep -q "^step $sigstep, " &&
    ok "signal: by signal 15 at step $sigstep" || bad "signal: '$(field stopped s3)' '$(field at s3)' (run: $sigstep)"
(HS_TEST_KILL_AT_STEP=40 exec "$HS_BIN" run h.ini --quiet output.path=kil checkpoint.path=kil.ck >/dev/null 2>&1) 2>/dev/null
"$HS_BIN" summary kil.$EXT.partial >s4 2>&1
field stopped s4 | grep -q "^not recorded: the run never closed this file" && ok "killed run: not recorded, never closed" ||
    bad "killed: '$(field stopped s4)'"

# 5. ranks; a scalar series (shallow water's energy) against Python
if [ $HAVE_MPI = 1 ]; then
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run h.ini --quiet output.path=two checkpoint.path=two.ck >/dev/null 2>&1
    "$HS_BIN" summary two.$EXT >s6 2>&1
    field run s6 | grep -q "2 ranks x 1 thread, device " && ok "2 ranks x 1 thread" || bad "2-rank run line '$(field run s6)'"
    if "$HS_BIN" compare two.$EXT fin.$EXT T 1e-12 >/dev/null &&
        diff <(sed -n '/^diagnostics/,/^parameters/p' s1) <(sed -n '/^diagnostics/,/^parameters/p' s6) >/dev/null; then
        ok "2 ranks: the same diagnostics as 1 rank"
    else
        bad "2-rank diagnostics: $(sed -n '/^diag/,/^param/p' s6 | head -3)"
    fi
fi
cat > sw.ini <<EOF
[run]
solver = cfd
device = $DEVICE
[cfd]
model = shallow_water
n = 24
t_end = 0.5
[shallow_water]
case = lake_at_rest
f0 = 3
topography = random
topo_height = 0.5
[output]
every_time = 0.25
EOF
"$HS_BIN" run sw.ini --quiet output.path=sw >/dev/null 2>e7 || bad "shallow water run: $(cat e7)"
"$HS_BIN" summary sw.$EXT >s7 2>&1
mass=$(sed -n 's/^  energy  *\([^ ]*\) .*/\1/p' s7)
if python3 -c "import numpy, netCDF4, h5py" 2>/dev/null && [ -n "$mass" ]; then
    if python3 - sw.$EXT "$mass" <<'PY'; then ok "series: last energy $mass as Python reads it"; else bad "energy $mass"; fi
import sys
path, got = sys.argv[1], float(sys.argv[2])
if path.endswith(".nc"):
    import netCDF4
    m = float(netCDF4.Dataset(path).variables["energy"][-1])
else:
    import h5py
    m = float(h5py.File(path, "r")["energy"][-1])
print("python:", m, "summary:", got)
sys.exit(0 if abs(m - got) <= 1e-11 * abs(m) else 1)
PY
elif [ -n "$mass" ]; then ok "series: energy $mass printed (no Python to compare)"
else bad "no energy series in the summary: $(sed -n '/^diag/,/^param/p' s7)"; fi

# 5b. a run whose state stopped being finite (exit 1, the file closed under its name): the file says
#     "failed" and where, and offers no restart (it said "a file written before hpcsim recorded its
#     runs", and collect.py counted such a member as running or killed)
"$HS_BIN" run h.ini --quiet heat.initial=constant heat.T0=300 heat.source=constant heat.Q=1e10 heat.k=1e-300 \
    heat.t_end=1e300 output.every_steps=1 checkpoint.every_steps=0 output.path=blow >/dev/null 2>eb
rc=$?
"$HS_BIN" summary blow.$EXT >sb 2>&1
if [ $rc = 1 ] && field stopped sb | grep -q "^failed (the solution is no longer finite at step 2, t = " &&
    field at sb | grep -q "^step 2, t = " && ! grep -q "continue from the checkpoint" sb; then
    ok "non-finite run: summary says failed at step 2, no restart offered"
else bad "non-finite run: exit $rc, '$(field stopped sb)' $(grep continue sb)"; fi

# 6. bad input: a missing file, a file that is no output
"$HS_BIN" summary nothere.nc >/dev/null 2>e8
[ $? = 2 ] && grep -q "nothere.nc" e8 && ok "missing file: exit 2" || bad "missing file: $(cat e8)"
echo "not a file of ours" > junk.nc
"$HS_BIN" summary junk.nc >/dev/null 2>e9
[ $? = 2 ] && ok "not an output file: exit 2" || bad "junk file: $(cat e9)"
"$HS_BIN" summary >/dev/null 2>e10
[ $? = 2 ] && ok "no file: usage error, exit 2" || bad "no argument: $(cat e10)"

# 7. a dimensionless time (the CFD models) is reported in the unit its long_name states, not in the
# CF units attribute's seconds that only the tools need
"$HS_BIN" run "$ROOT/inputs/cavity_re100.ini" --quiet output.path=dimless cfd.t_end=0.02 >/dev/null 2>e11
"$HS_BIN" summary dimless.$EXT >s11 2>&1
field records s11 | grep -q "(in units of L/U)$" &&
    ok "dimensionless time: records say 'in units of L/U'" || bad "dimensionless time: '$(field records s11)' $(cat e11)"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
