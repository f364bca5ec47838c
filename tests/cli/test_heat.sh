#!/usr/bin/env bash
# The heat solver end to end: restart after SIGTERM is bitwise exact, 1/2/4 ranks (and CPU/GPU)
# agree, the NetCDF/HDF5 outputs open in real clients, and bad inputs fail with exit 2.
set -u
. "$(dirname "$0")/lib.sh"

# A 3D problem with every feature that touches the decomposition: layered k, a Gaussian source,
# Dirichlet and Neumann walls, a periodic dimension.
cat > run3d.ini <<EOF2
[run]
solver = heat
device = $DEVICE
allow_shared_gpu = true
[heat]
ndim = 3
n = 24 20 16
length = 1.2 1 0.8
t_end = 0.03
conductivity = layered
layer_bounds = 0.4
layer_k = 1 0.5
initial = gaussian
sigma = 0.1
center = 0.6 0.5 0.4
T0 = 300
amplitude = 20
bc_xlo = dirichlet
value_xlo = 300
bc_xhi = neumann
value_xhi = 1.5
bc_ylo = periodic
bc_yhi = periodic
bc_zlo = dirichlet
value_zlo = 290
bc_zhi = neumann
source = gaussian
Q = 500
source_center = 0.3 0.5 0.5
[output]
format = $FMT
every_steps = 10
[checkpoint]
every_steps = 20
path = ck.h5
EOF2

# 1. uninterrupted run
"$HS_BIN" run run3d.ini --quiet output.path=full >"$CAP/o" 2>"$CAP/e" && [ -f full.$EXT ] && ok "uninterrupted run" || bad "uninterrupted run: $(cat "$CAP/e")"

# 2. the same run stopped by SIGTERM (raised by the run itself at step 50, through the real handler)
HS_TEST_SIGNAL_AT_STEP=50 "$HS_BIN" run run3d.ini --quiet output.path=split checkpoint.path=stop.h5 >"$CAP/o" 2>"$CAP/e"
rc=$?
if [ $rc = 3 ] && [ -f stop.h5 ] && [ ! -f split.$EXT ] && [ -f split.$EXT.partial ] && grep -q "stopped by signal" "$CAP/e"; then
    ok "SIGTERM: checkpoint written, exit 3, output left as .partial"
else
    bad "SIGTERM stop: exit $rc, files: $(ls | tr '\n' ' '), stderr: $(cat "$CAP/e")"
fi
# 3. restart and compare with the uninterrupted run, bitwise
"$HS_BIN" run run3d.ini --quiet output.path=split checkpoint.path=stop2.h5 --restart stop.h5 >"$CAP/o" 2>"$CAP/e" || bad "restart: $(cat "$CAP/e")"
if "$HS_BIN" compare full.$EXT split.$EXT T >"$CAP/o" && "$HS_BIN" compare full.$EXT split.$EXT time >>"$CAP/o"; then
    ok "restarted run equals the uninterrupted one bitwise ($(head -1 "$CAP/o" | cut -c1-60))"
else
    bad "restart differs: $(cat "$CAP/o")"
fi

# 4. a real signal from outside, once the run is in its time loop (its output file exists): still
#    exit 3 and a usable checkpoint.  No fixed sleep: the signal goes when the file appears.
"$HS_BIN" run run3d.ini --quiet heat.t_end=1000 output.every_steps=1 output.path=ext checkpoint.path=kill.h5 >/dev/null 2>"$CAP/k" &
pid=$!
for _ in $(seq 600); do [ -e ext.$EXT.partial ] && break; sleep 0.1; done
kill -TERM $pid 2>/dev/null
wait $pid
rc=$?
if [ $rc = 3 ] && [ -f kill.h5 ]; then ok "external SIGTERM: exit 3 with checkpoint"; else bad "external SIGTERM: exit $rc: $(cat "$CAP/k")"; fi
rm -f kill.h5 ext.*

# 5. 1, 2 and 4 ranks give the same field (explicit: the same cell arithmetic; CN: CG to 1e-14)
if [ $HAVE_MPI = 1 ]; then
    for scheme in explicit crank_nicolson; do
        extra=""
        [ $scheme = crank_nicolson ] && extra="heat.dt=0.003 heat.pcg_rtol=1e-14"
        for np in 1 2 4; do
            "${MPIRUN[@]}" -n $np "$HS_BIN" run run3d.ini --quiet heat.scheme=$scheme $extra output.path=np$np \
                checkpoint.every_steps=0 >"$CAP/o" 2>"$CAP/e" || bad "$scheme on $np ranks: $(grep hpcsim "$CAP/e")"
        done
        for np in 2 4; do
            if "$HS_BIN" compare np1.$EXT np$np.$EXT T 1e-12 >"$CAP/o"; then ok "$scheme: $np ranks equal 1 rank within 1e-12 ($(cut -d, -f2 "$CAP/o" | head -1))"
            else bad "$scheme: $np ranks differ: $(cat "$CAP/o")"; fi
        done
        rm -f np*.$EXT
    done
else
    echo "skip rank-count comparison: no MPI in this build"
fi

# 6. the CPU and the GPU give the same field
if [ "$DEVICE" = cuda ]; then
    "$HS_BIN" run run3d.ini --quiet run.device=cpu output.path=oncpu checkpoint.every_steps=0 >/dev/null 2>&1
    "$HS_BIN" run run3d.ini --quiet run.device=cuda output.path=ongpu checkpoint.every_steps=0 >/dev/null 2>&1
    if "$HS_BIN" compare oncpu.$EXT ongpu.$EXT T 1e-12 >"$CAP/o"; then ok "CPU and GPU agree within 1e-12 ($(cut -d, -f2 "$CAP/o"))"; else bad "CPU vs GPU: $(cat "$CAP/o")"; fi
    # constant k takes the GPU's fast 7-point kernels: each variant against the CPU, on rows left
    # dense (24 cells), padded to aligned rows with an even count (126: 16-byte vectors) and with
    # an odd count (125: scalar)
    fastk="heat.conductivity=constant heat.k=0.7 checkpoint.every_steps=0 heat.t_end=0.004"
    for grid in "24 20 16" "126 10 9" "125 10 9"; do
        g=${grid// /x}
        "$HS_BIN" run run3d.ini --quiet run.device=cpu $fastk "heat.n=$grid" output.path=fastcpu_$g >/dev/null 2>&1
        for variant in cell zc vec2; do
            "$HS_BIN" run run3d.ini --quiet run.device=cuda heat.gpu_kernel=$variant $fastk "heat.n=$grid" \
                output.path=fast_${variant}_$g >/dev/null 2>&1
            if "$HS_BIN" compare fastcpu_$g.$EXT fast_${variant}_$g.$EXT T 1e-12 >"$CAP/o"; then
                ok "7-point GPU kernel '$variant' on $grid agrees with the CPU within 1e-12"
            else bad "7-point GPU kernel $variant on $grid: $(cat "$CAP/o")"; fi
        done
    done
fi

# 7. the output opens in real clients
if [ $FMT = netcdf ] && command -v ncdump >/dev/null; then
    h=$(ncdump -h full.nc)
    for want in ':Conventions = "CF-1.8"' 'x:bounds = "x_bnds"' 'T:cell_measures = "area: cell_area"' ':title = ' ':source = "hpcsim ' ':history = ' ':hpcsim_parameters = ' 'T:units = "K"' 'x:axis = "X"' 'time:units = "seconds since'; do
        if ! grep -qF "$want" <<<"$h"; then bad "ncdump -h lacks $want"; continue 2; fi
    done
    ok "ncdump -h shows the CF attributes"
fi
if python3 -c "import netCDF4, xarray, h5py" 2>/dev/null; then
    "$HS_BIN" run run3d.ini --quiet output.format=hdf5 output.path=viz checkpoint.every_steps=0 >/dev/null 2>&1
    if python3 "$ROOT/scripts/check_output.py" full.$EXT viz.h5 viz.xmf >"$CAP/o" 2>&1; then ok "check_output.py: xarray/cfchecks/h5py/XDMF ($(tail -1 "$CAP/o"))"
    else bad "check_output.py: $(tail -5 "$CAP/o")"; fi
    if python3 -c "import matplotlib" 2>/dev/null; then
        python3 "$ROOT/scripts/analysis/plot_field.py" full.$EXT --var T --time 2 --out t2.png >/dev/null 2>&1 && [ -s t2.png ] &&
            ok "plot_field.py makes a PNG" || bad "plot_field.py failed"
    fi
else
    echo "skip Python client checks: netCDF4/xarray/h5py not installed"
fi

# 7b. output.every_time lands the records on the requested times: 2000 steps of 0.001 with a record
# every 0.1, one step per call to the solver (signals watched, the default).  The sum of 100 steps
# falls 6e-16 short of 0.1 and nothing snapped it: records at 0.0999999999999994 ... 1.99999999999989,
# none at t_end = 2.  Each record time must be k/10 to within 2 ulp, the last exactly 2.
if python3 -c "import h5py, numpy" 2>/dev/null; then
    cat > every.ini <<EOF2
[run]
solver = heat
device = $DEVICE
[heat]
ndim = 1
n = 8
t_end = 2
dt = 0.001
initial = sine
mode = 1
[output]
format = $FMT
path = every
every_time = 0.1
EOF2
    "$HS_BIN" run every.ini --quiet >"$CAP/o" 2>"$CAP/e" || bad "every_time run: $(cat "$CAP/e")"
    if records_on_grid every.$EXT 0.1 2 >"$CAP/o" 2>&1; then ok "every_time = 0.1 over 2000 steps: records at k/10 within 2 ulp, the last at t_end = 2 ($(cat "$CAP/o"))"
    else bad "every_time records off the requested times: $(cat "$CAP/o")"; fi
    # 7c. output.every_steps with a fixed step: the record times are n dt, not a running sum (the
    # sum wrote 0.010000000000000002, 0.015000000000000006, ... for every 5 steps of 0.001, drifting
    # further each record); test 3 compares the times of a restarted run with these
    "$HS_BIN" run every.ini --quiet output.every_time=0 output.every_steps=5 output.path=steps >"$CAP/o" 2>"$CAP/e" ||
        bad "every_steps run: $(cat "$CAP/e")"
    if records_at_steps steps.$EXT 0.001 5 2 >"$CAP/o" 2>&1; then ok "every_steps = 5 with dt = 0.001: record times are n dt exactly ($(cat "$CAP/o"))"
    else bad "every_steps record times are not n dt: $(cat "$CAP/o")"; fi
fi

# 8. bad inputs: exact message, exit 2, nothing written
expect_fail() { # name, expected message, args...
    local name=$1 want=$2
    shift 2
    mkdir -p "$CAP/empty" && cd "$CAP/empty" && rm -rf ./*
    "$@" >"$CAP/o" 2>"$CAP/e"
    local rc=$? got
    got=$(grep '^hpcsim' "$CAP/e")
    local files
    files=$(ls -A)
    cd "$WORK"
    if [ $rc = 2 ] && [ "$got" = "$want" ] && [ -z "$files" ]; then ok "$name"; else
        bad "$name: exit $rc, files '$files'"; printf '  got:      %s\n  expected: %s\n' "$got" "$want"; fi
}
printf '[run]\nsolver = heat\n[heat]\nn = 10\nprocs = 3 1\n' > split.ini
if [ $HAVE_MPI = 1 ]; then
    expect_fail "grid that does not divide as requested" \
        "hpcsim: error: $WORK/split.ini:5: heat.procs: grid 10 x 10 cannot be split 3 x 1 over 2 ranks: 3 x 1 = 3 != 2; 1 x 2 would work" \
        "${MPIRUN[@]}" -n 2 "$HS_BIN" run "$WORK/split.ini"
fi
printf '[run]\nsolver = heat\n[heat]\nn = 10\ndt = 1\n' > unstable.ini
expect_fail "unstable explicit time step" \
    "hpcsim: error: $WORK/unstable.ini:5: heat.dt: 1 s is unstable for the explicit scheme: the limit of this grid and conductivity is 0.0025 s (use dt = 0 for an automatic step, or an implicit scheme)" \
    "$HS_BIN" run "$WORK/unstable.ini"
# keys the configuration would not use ran without a word; a file's leftovers under a setting
# switched on the command line pass
printf '[run]\nsolver = heat\n[heat]\nn = 8\nt_end = 0\nconductivity = constant\nlayer_k = 1 2\n' > unused.ini
expect_fail "layer_k with a constant k" "hpcsim: error: $WORK/unused.ini:7: heat.layer_k: is not used with heat.conductivity = constant" \
    "$HS_BIN" run "$WORK/unused.ini"
printf '[run]\nsolver = heat\n[heat]\nn = 8\nt_end = 0\nconductivity = layered\nlayer_bounds = 0.5\nlayer_k = 1 2\n[output]\nformat = none\n' > switched.ini
expect_fail "a z wall in 2D" "hpcsim: error: command line (override 1): heat.bc_zlo: is not used with heat.ndim = 2" \
    "$HS_BIN" run "$WORK/switched.ini" heat.bc_zlo=neumann
expect_fail "a layer interface outside the domain" "hpcsim: error: command line (override 1): heat.layer_bounds: interface 1.5 m lies outside the domain, (0, 1) m along y" \
    "$HS_BIN" run "$WORK/switched.ini" heat.layer_bounds=1.5
"$HS_BIN" run "$WORK/switched.ini" --quiet heat.conductivity=constant >"$CAP/o" 2>&1 && ok "a file's layer keys under conductivity = constant set on the command line pass" ||
    bad "switched conductivity on the command line: $(cat "$CAP/o")"
printf '[run]\nsolver = heat\n[heat]\nn = 8\nconductivity = file\nk_file = nosuch.nc\n' > nok.ini
expect_fail "missing conductivity file" \
    "hpcsim: error: $WORK/nok.ini:6: heat.k_file: cannot open conductivity file 'nosuch.nc'" \
    "$HS_BIN" run "$WORK/nok.ini"
if command -v ncgen >/dev/null && [ $FMT = netcdf ]; then
    printf 'netcdf k { dimensions: y = 6 ; x = 8 ; variables: double k(y, x) ; data: k = %s ; }\n' \
        "$(python3 -c 'print(", ".join(["1.5"]*48))')" > k.cdl
    ncgen -4 -o "$WORK/k68.nc" k.cdl
    printf '[run]\nsolver = heat\n[heat]\nn = 8\nconductivity = file\nk_file = %s\n' "$WORK/k68.nc" > shape.ini
    expect_fail "conductivity file of the wrong shape" \
        "hpcsim: error: $WORK/shape.ini:6: heat.k_file: variable 'k' in '$WORK/k68.nc' has shape 6 x 8; the grid needs 8 x 8 (slowest first)" \
        "$HS_BIN" run "$WORK/shape.ini"
    # a conductivity of 1e308 in one cell meets the range checks a constant k meets (it passed check
    # and the run went to -inf, exit 1)
    printf 'netcdf k { dimensions: y = 8 ; x = 8 ; variables: double k(y, x) ; data: k = %s ; }\n' \
        "$(python3 -c 'print(", ".join(["1.5"]*63 + ["1e308"]))')" | ncgen -4 -o "$WORK/kbig.nc"
    printf '[run]\nsolver = heat\n[heat]\nn = 8\nconductivity = file\nk_file = %s\n' "$WORK/kbig.nc" > kbig.ini
    expect_fail "a conductivity file with k = 1e308" \
        "hpcsim: error: $WORK/kbig.ini:6: heat.k_file: diffusivity 1e+308 / (rho cp) over cells of 0.125 leaves the range of doubles (k / (rho cp dx^2))" \
        "$HS_BIN" run "$WORK/kbig.ini"
    # and the right shape works: a uniform file gives the constant-k answer
    printf '[run]\nsolver = heat\n[heat]\nn = 8 6\nt_end = 0.001\nconductivity = file\nk_file = %s\n[output]\npath = fromfile\n' "$WORK/k68.nc" > kfile.ini
    printf '[run]\nsolver = heat\n[heat]\nn = 8 6\nt_end = 0.001\nk = 1.5\n[output]\npath = constk\n' > constk.ini
    "$HS_BIN" run kfile.ini --quiet >/dev/null 2>&1 && "$HS_BIN" run constk.ini --quiet >/dev/null 2>&1 &&
        "$HS_BIN" compare constk.nc fromfile.nc T 1e-13 >"$CAP/o" && ok "conductivity from a file" || bad "k from file: $(cat "$CAP/o")"
    # a relative input path is also looked up beside the parameter file
    mkdir -p elsewhere
    printf '[run]\nsolver = heat\n[heat]\nn = 8 6\nt_end = 0.001\nconductivity = file\nk_file = k68.nc\n[output]\npath = %s/rel\n' "$WORK" > relk.ini
    (cd elsewhere && "$HS_BIN" run ../relk.ini --quiet >/dev/null 2>"$CAP/e") &&
        "$HS_BIN" compare constk.nc rel.nc T 1e-13 >"$CAP/o" && ok "input file found beside the parameter file" ||
        bad "relative k_file: $(cat "$CAP/e" "$CAP/o")"
    # a square k stored (x, y) ran transposed, and a file of another grid's spacing with the same
    # cell counts ran on this one, both exit 0; a file whose axes say nothing is still read
    printf 'netcdf k { dimensions: x = 4 ; y = 4 ; variables: double x(x) ; x:axis = "X" ; double k(x, y) ; data: x = 0.125, 0.375, 0.625, 0.875 ; k = %s ; }\n' \
        "$(python3 -c 'print(", ".join(str(1 + i // 4) for i in range(16)))')" > kxy.cdl
    ncgen -4 -o "$WORK/kxy.nc" kxy.cdl
    printf '[run]\nsolver = heat\n[heat]\nn = 4\nconductivity = file\nk_file = %s\n' "$WORK/kxy.nc" > kxy.ini
    expect_fail "conductivity file stored (x, y)" \
        "hpcsim: error: $WORK/kxy.ini:6: heat.k_file: variable 'k' in '$WORK/kxy.nc' has dimensions (x, y): the conductivity is read (y, x), x fastest (store it so, e.g. ncpdq -a y,x)" \
        "$HS_BIN" run "$WORK/kxy.ini"
    printf 'netcdf k { dimensions: y = 4 ; x = 4 ; variables: double x(x) ; double k(y, x) ; data: x = 1, 3, 5, 7 ; k = %s ; }\n' \
        "$(python3 -c 'print(", ".join(["2"]*16))')" > kdx.cdl
    ncgen -4 -o "$WORK/kdx.nc" kdx.cdl
    printf '[run]\nsolver = heat\n[heat]\nn = 4\nconductivity = file\nk_file = %s\n' "$WORK/kdx.nc" > kdx.ini
    expect_fail "conductivity file of another spacing" \
        "hpcsim: error: $WORK/kdx.ini:6: heat.k_file: the conductivity file '$WORK/kdx.nc' steps its coordinate 'x' by 2 m (from index 0 to 1); the grid's spacing there is 0.25 m" \
        "$HS_BIN" run "$WORK/kdx.ini"
    printf 'netcdf k { dimensions: a = 4 ; b = 4 ; variables: double k(a, b) ; data: k = %s ; }\n' \
        "$(python3 -c 'print(", ".join(["2"]*16))')" > kab.cdl
    ncgen -4 -o "$WORK/kab.nc" kab.cdl
    "$HS_BIN" check kxy.ini heat.k_file="$WORK/kab.nc" >/dev/null 2>"$CAP/e" && ok "conductivity file with unnamed axes accepted" ||
        bad "unnamed axes: $(cat "$CAP/e")"
else
    echo "skip conductivity-file shape test: no ncgen / NetCDF in this build"
fi

# An implicit run whose field decays towards zero (below 1e-300 over 400 steps), and one whose
# conductivity (1e100) makes the step's matrix 1e96 times the identity: CG's products of such
# vectors fell below the smallest double ("r.z = 0 <= 0: not positive definite", exit 1) though
# check passed them; held in scaled units they run to the end (hs_pcg_solve; test_pcg's
# test_extreme_scales checks the solutions)
printf '[run]\nsolver = heat\n[heat]\nndim = 2\nn = 8 8\nscheme = backward_euler\ndt = 1\nt_end = 400\n[output]\npath = decay\nformat = hdf5\n' >decay.ini
for c in "|decay to zero" "heat.k=1e100 heat.dt=1e-4 heat.t_end=0.001|conductivity 1e100"; do
    # shellcheck disable=SC2086
    if "$HS_BIN" run decay.ini --quiet ${c%%|*} >"$CAP/o" 2>"$CAP/e" && grep -q "finished at step" "$CAP/o" && [ -f decay.h5 ]; then
        ok "backward Euler, ${c#*|}: runs to the end ($(grep -m1 'CG iterations' "$CAP/o" | sed 's/.*(//; s/)//'))"
    else bad "backward Euler, ${c#*|}: $(grep -m1 error "$CAP/e")"; fi
    rm -f decay.h5 decay.xmf
done

# a sine mode beyond what the cells carry (it aliased, and the error against the exact mode read
# 4e85); on a periodic axis the limit is n/2
printf '[run]\nsolver = heat\n[heat]\nn = 8 8\nmode = 9 1\nt_end = 0.001\n' > alias.ini
"$HS_BIN" check alias.ini >"$CAP/o" 2>"$CAP/e"; rc=$?
[ $rc = 2 ] && grep -q "alias.ini:5: heat.mode: mode 9 along dimension 0 is more than 8 cells carry (at most 8" "$CAP/e" &&
    ok "sine mode 9 on 8 cells refused" || bad "aliased mode: exit $rc: $(cat "$CAP/e")"
"$HS_BIN" check alias.ini heat.mode="5 1" heat.bc_xlo=periodic heat.bc_xhi=periodic >"$CAP/o" 2>"$CAP/e"; rc=$?
[ $rc = 2 ] && grep -q "heat.mode: mode 5 along dimension 0 is more than 8 cells carry (at most 4, n/2 on a periodic axis)" "$CAP/e" &&
    ok "periodic mode 5 on 8 cells refused" || bad "periodic aliased mode: exit $rc: $(cat "$CAP/e")"
"$HS_BIN" check alias.ini heat.mode="8 1" >/dev/null 2>"$CAP/e" && ok "mode 8 on 8 cells between walls accepted" || bad "mode 8: $(cat "$CAP/e")"

# compare on two grids of one shape over other domains: the values are of other points, and it says so
# (it reported DIFFER alone)
printf '[run]\nsolver = heat\n[heat]\nn = 8 8\nt_end = 0.001\n' > dom.ini
"$HS_BIN" run dom.ini --quiet output.path=dom1 >/dev/null 2>&1 && "$HS_BIN" run dom.ini --quiet heat.length=2,2 output.path=dom2 >/dev/null 2>&1
"$HS_BIN" compare dom1.$EXT dom2.$EXT T >"$CAP/o" 2>&1
grep -q "T: note: the coordinates y differ (0.0625 .. 0.9375 in dom1.$EXT, 0.125 .. 1.875 in dom2.$EXT)" "$CAP/o" &&
    ok "compare notes coordinates that differ" || bad "compare over other domains: $(cat "$CAP/o")"
"$HS_BIN" compare dom1.$EXT dom1.$EXT T >"$CAP/o" 2>&1
! grep -q "note:" "$CAP/o" && ok "compare of a file with itself has no note" || bad "compare self: $(cat "$CAP/o")"

# a run that blows up stops at its next checkpoint with exit 1 and keeps the last good one (it wrote
# checkpoints of an Inf/NaN field until an output record found it, and a restart took them)
cp "$ROOT/inputs/heat2d.ini" blow.ini
B=(heat.n="32 32" heat.Q=1e300 heat.rho=1e-8 heat.layer_k="1e-300 1e-300" heat.dt=0.002 output.every_time=50 checkpoint.path=blow_ck.h5)
"$HS_BIN" run blow.ini --quiet "${B[@]}" heat.t_end=100 checkpoint.every_steps=100 output.path=blow >/dev/null 2>"$CAP/e"
rc=$?
if [ $rc = 1 ] && grep -q "at step 1000 (t = 2) the state 'T' holds a NaN or an infinity" "$CAP/e" && [ -f blow_ck.h5 ] && [ ! -f blow_ck.h5.tmp ] &&
    "$HS_BIN" run blow.ini --quiet "${B[@]}" heat.t_end=1.8 output.path=blow2 --restart blow_ck.h5 >/dev/null 2>"$CAP/e2"; then
    ok "a blown-up run stops at its checkpoint (exit 1); the last good one (step 900) restarts"
else bad "blow-up and checkpoints: exit $rc, $(grep error "$CAP/e"; cat "$CAP/e2" 2>/dev/null | head -2)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
