#!/usr/bin/env bash
# The shallow_water CFD model end to end: 1/2/4 ranks agree bitwise (and CPU/GPU closely), a restart
# continues bitwise, the output carries h, u, v, vorticity and the conserved-quantity series (mass
# conserved to round-off, read back with ncdump), and bad inputs fail with exit 2.
set -u
. "$(dirname "$0")/lib.sh"

# A periodic jet over a random bottom with hyperviscosity (adaptive dt), and a cyclone in a beta
# channel over a seamount with viscosity (fixed dt): every kernel path, both boundary kinds.
cat > jet.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
model = shallow_water
n = 48 32
length = 1.5 1
t_end = 0.4
[shallow_water]
case = jet
f0 = 5
jet_width = 0.07
perturbation = 0.05
topography = random
topo_height = 0.2
nu4 = 1e-7
[output]
path = jet
every_time = 0.1
EOF2
cat > vortex.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
model = shallow_water
n = 40 36
t_end = 0.3
dt = 0.004
[shallow_water]
case = vortex
y_boundary = walls
f0 = 8
beta = 10
topography = bump
nu = 2e-4
[output]
path = vortex
every_time = 0.1
EOF2

# 1. runs, with the variables and series users rely on; mass conserved to round-off
for c in jet vortex; do
    if "$HS_BIN" run $c.ini --quiet >"$CAP/o" 2>"$CAP/e"; then ok "$c runs ($(grep -m1 'relative change' "$CAP/o" | sed 's/.*: mass/mass/'))"
    else bad "$c: $(cat "$CAP/e")"; fi
done
if [ $EXT = nc ] && command -v ncdump >/dev/null; then
    h=$(ncdump -h jet.nc)
    missing=""
    for v in "h(time, y, x)" "u(time, y, x)" "v(time, y, x)" "vorticity(time, y, x)" "b(y, x)" "mass(time)" "energy(time)" \
        "potential_enstrophy(time)" "cfl(time)"; do
        grep -qF "double $v" <<<"$h" || missing="$missing $v"
    done
    [ -z "$missing" ] && ok "jet file has h, u, v, vorticity, b and the series" || bad "jet file lacks:$missing"
    grep -qF 'time:long_name = "time in the units of the inputs' <<<"$h" && ok "jet time axis says its unit is the inputs'" || bad "jet time long_name: $(grep 'time:long_name' <<<"$h")"
    for c in jet vortex; do
        m=$(ncdump -p 17 -v mass $c.nc | sed -n '/^ mass =/,/;/p' | tr -d ' ;' | cut -d= -f2 | tr ',' '\n' | grep -E '^[-+0-9.eE]+$')
        rel=$(awk 'NR == 1 { a = $1 } { b = $1 } END { d = (b - a) / a; printf "%.3e", d < 0 ? -d : d }' <<<"$m")
        awk -v r="$rel" 'BEGIN { exit !(r <= 1e-13) }' && ok "$c: mass in the file conserved to $rel (<= 1e-13)" || bad "$c: mass changed by $rel"
    done
fi
# output.every_steps with the vortex's fixed step: the record times are n dt, not a running sum of dt
if python3 -c "import h5py, numpy" 2>/dev/null; then
    "$HS_BIN" run vortex.ini --quiet output.every_time=0 output.every_steps=5 output.path=steps >"$CAP/o" 2>"$CAP/e" ||
        bad "every_steps run: $(cat "$CAP/e")"
    if records_at_steps steps.$EXT 0.004 5 0.3 >"$CAP/o" 2>&1; then ok "every_steps = 5 with dt = 0.004: record times are n dt exactly ($(cat "$CAP/o"))"
    else bad "every_steps record times are not n dt: $(cat "$CAP/o")"; fi
    # the cfl series is dt over the stable step with dt the step size, also where the record follows a
    # step shortened to land on it (every_time = 0.01 with dt = 0.004: 0.004, 0.004, 0.002), as its
    # long_name says: at t = 0.02 it equals that of the run above, whose step 5 lands there with full
    # steps (the states differ by RK4's error; half of it would be the shortened step's)
    "$HS_BIN" run vortex.ini --quiet cfd.t_end=0.02 output.every_time=0.01 output.path=land >"$CAP/o" 2>"$CAP/e" ||
        bad "landing run: $(cat "$CAP/e")"
    if python3 - land.$EXT steps.$EXT >"$CAP/o" 2>&1 <<'PY'
import sys, h5py
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
ln = a["cfl"].attrs["long_name"]
ln = ln.decode() if isinstance(ln, bytes) else str(ln)
ta, tb = a["time"][:], b["time"][:]
ca, cb = a["cfl"][2], b["cfl"][1]
rel = abs(ca / cb - 1)
print(f"t = {float(ta[2])!r} and {float(tb[1])!r}: cfl {ca:.9f} and {cb:.9f} (relative {rel:.1e}); long_name '{ln}'")
sys.exit(0 if ta[2] == tb[1] == 0.02 and rel < 1e-6 and ln.endswith("step size (a step shortened to land on an output time counts at full length)") else 1)
PY
    then ok "cfl after a shortened step is the step size's, as its long_name says ($(cat "$CAP/o"))"
    else bad "cfl series: $(cat "$CAP/o")"; fi
fi

# 2. the same on 1, 2 and 4 ranks, in several splits: bitwise (the update is pointwise; halos are copies)
if [ $HAVE_MPI = 1 ]; then
    for c in jet vortex; do
        "$HS_BIN" run $c.ini --quiet output.path=${c}_np1 >/dev/null 2>&1
        for run in "2 1 2" "4 4 1" "4 2 2"; do
            set -- $run
            np=$1 procs="$2 $3"
            out=${c}_np${np}_${2}x$3
            if ! "${MPIRUN[@]}" -n $np "$HS_BIN" run $c.ini --quiet run.allow_shared_gpu=true "cfd.procs=$procs" output.path=$out >"$CAP/o" 2>"$CAP/e"; then
                bad "$c on $np ranks ($procs): $(grep hpcsim "$CAP/e")"
                continue
            fi
            for v in h u v vorticity; do
                if ! "$HS_BIN" compare ${c}_np1.$EXT $out.$EXT $v >"$CAP/o"; then bad "$c $v: $np ranks ($procs) differ: $(cat "$CAP/o")"; continue 2; fi
            done
            ok "$c: $np ranks (procs $procs) equal 1 rank bitwise in h, u, v, vorticity"
        done
    done
else
    echo "skip rank-count comparison: no MPI in this build"
fi

# 3. CPU and GPU (fused multiply-adds on the GPU: round-off, not bitwise)
if [ "$DEVICE" = cuda ]; then
    for c in jet vortex; do
        "$HS_BIN" run $c.ini --quiet run.device=cpu output.path=${c}_cpu >/dev/null 2>&1
        good=1
        for v in h u v; do "$HS_BIN" compare ${c}_cpu.$EXT $c.$EXT $v 1e-11 >"$CAP/o" || { good=0; break; }; done
        [ $good = 1 ] && ok "$c: CPU and GPU agree within 1e-11 in h, u, v ($(cut -d, -f2 "$CAP/o"))" || bad "$c CPU vs GPU: $(cat "$CAP/o")"
    done
fi

# 4. a restart continues bitwise (adaptive dt included), on 1 and on 2 ranks
"$HS_BIN" run jet.ini --quiet output.path=full >/dev/null 2>&1
for np in 1 2; do
    [ $np = 2 ] && [ $HAVE_MPI = 0 ] && continue
    pre=()
    [ $np = 2 ] && pre=("${MPIRUN[@]}" -n 2)
    rm -f ck*
    "${pre[@]}" "$HS_BIN" run jet.ini --quiet run.allow_shared_gpu=true output.path=part$np checkpoint.every_steps=7 checkpoint.path=ck \
        run.max_steps=16 >/dev/null 2>&1
    ck=$(ls ck* 2>/dev/null | head -1)
    if [ -n "$ck" ] && "${pre[@]}" "$HS_BIN" run jet.ini --quiet run.allow_shared_gpu=true output.path=part$np run.restart="$ck" >"$CAP/o" 2>"$CAP/e"; then
        good=1
        for v in h u v time; do "$HS_BIN" compare full.$EXT part$np.$EXT $v >"$CAP/o" || good=0; done
        [ $good = 1 ] && ok "restart on $np rank(s) from $ck is bitwise (every record and its time)" || bad "restart on $np rank(s) differs: $(cat "$CAP/o")"
    else
        bad "restart on $np rank(s): checkpoint '$ck': $(cat "$CAP/e" 2>/dev/null)"
    fi
done

# 5. bad input: exit 2, the key named, nothing written; check says the same as run (the cases are
# also in tests/data/bad_inputs.txt for test_check_equals_run.sh)
expect_fail() { # name, expected message fragment, ini text
    local name=$1 want=$2
    mkdir -p "$CAP/empty" && rm -rf "$CAP/empty"/* && printf '%b' "$3" > "$CAP/empty/case.ini"
    (cd "$CAP/empty" && "$HS_BIN" check case.ini >"$CAP/o" 2>"$CAP/ec")
    local rcc=$?
    (cd "$CAP/empty" && "$HS_BIN" run case.ini >"$CAP/o" 2>"$CAP/e")
    local rc=$? files
    files=$(ls -A "$CAP/empty" | grep -v '^case.ini$')
    if [ $rc = 2 ] && [ $rcc = 2 ] && grep -qF "$want" "$CAP/e" && grep -qF "$want" "$CAP/ec" && [ -z "$files" ]; then ok "$name"; else
        bad "$name: run exit $rc, check exit $rcc, files '$files'"; printf '  got:      %s\n  expected: %s\n' "$(cat "$CAP/e")" "$want"; fi
}
H='[run]\nsolver = cfd\n[cfd]\nmodel = shallow_water\n'
expect_fail "unstable step names the stable one from the wave speed" \
    "case.ini:6: cfd.dt: 0.05 is unstable here: gravity waves of speed sqrt(g h) = 1.008 (h up to 1.016), flow up to 0.3 and |f| up to 1 give a stable RK4 step of about 0.01372" \
    "${H}n = 64\ndt = 0.05\n"
# an adaptive step above RK4's limit (cfl = 1.5 passed check and the run blew up at step 20, exit 1)
expect_fail "cfl above the stable limit" "case.ini:6: cfd.cfl: 1.5 is above the shallow-water model's stable limit 1" \
    "${H}n = 32\ncfl = 1.5\nt_end = 5\n"
expect_fail "beta-plane on a periodic y refused" "case.ini:7: shallow_water.beta: a beta-plane needs walls in y" \
    "${H}n = 32\n[shallow_water]\nbeta = 2\n"
expect_fail "lake at rest over a flat bottom" "case.ini:7: shallow_water.case: lake_at_rest is a flat surface over an uneven bottom" \
    "${H}n = 32\n[shallow_water]\ncase = lake_at_rest\n"
expect_fail "bottom through the surface" "case.ini:9: shallow_water.topo_height: 1.5 reaches the surface of a layer 1 deep" \
    "${H}n = 32\n[shallow_water]\ncase = lake_at_rest\ntopography = bump\ntopo_height = 1.5\n"
expect_fail "wave in a channel" "case.ini:8: shallow_water.case: wave is a plane inertia-gravity wave of the doubly periodic f-plane" \
    "${H}n = 32\n[shallow_water]\ny_boundary = walls\ncase = wave\n"
expect_fail "anticyclone without balance" "case.ini:9: shallow_water.vortex_amplitude: an anticyclone of 0.5 has no gradient-wind balance" \
    "${H}n = 32\n[shallow_water]\ncase = vortex\nf0 = 2\nvortex_amplitude = 0.5\n"
# on a beta-plane the limit is that of the smallest |f| near the vortex, and the message says which f
# (it printed the beta-reduced limit under the label f0^2 R^2 / (4 g H)): f = 2 - 3 x 4 x 0.08 = 1.04
expect_fail "anticyclone on a beta-plane names its f" "the largest is f^2 R^2 / (4 g H) = 0.001731 with f = 1.04, the smallest |f0 + beta y|" \
    "${H}n = 32\n[shallow_water]\ny_boundary = walls\ncase = vortex\nf0 = 2\nbeta = 4\nvortex_amplitude = 0.005\n"
# one cell across a periodic x on one rank: the advice is a larger grid (it said "use fewer ranks")
expect_fail "one cell across a periodic x on one rank" "case.ini:5: cfd.n: grid 1 x 4 cannot be split 1 x 1 over 1 rank: 1 cells over 1 rank in dimension 0 leave 1 on some rank, fewer than the 2 needed; a periodic dimension needs at least 2 cell(s): use a larger grid" \
    "${H}n = 1 4\n"
# a cell so large that 1/dx^2 underflows ran with the diffusion term at 0 (cfd.length = 1e300): refused, as a
# cell too small for doubles is
expect_fail "a cell too large for doubles" "case.ini:6: cfd.length: cell size 6.25e+298 in dimension 0 is too large for doubles (1/dx^2 underflows)" \
    "${H}n = 16\nlength = 1e300 1\n"
expect_fail "3D refused" "case.ini:5: cfd.ndim: shallow_water is two-dimensional" "${H}ndim = 3\nn = 16\n"
expect_fail "another case's key" "case.ini:8: shallow_water.jet_speed: is set, but case = wave (the key belongs to case = jet)" \
    "${H}n = 32\n[shallow_water]\ncase = wave\njet_speed = 0.5\n"
expect_fail "a bump's key on a random bottom" "case.ini:9: shallow_water.topo_width: is set, but topography = random" \
    "${H}n = 32\n[shallow_water]\ntopography = random\ntopo_height = 0.1\ntopo_width = 0.2\n"
expect_fail "perturbation waves beyond two cells each" "case.ini:7: shallow_water.perturbation_modes: 100 waves across 48 cells in x: at most 24" \
    "${H}n = 48\n[shallow_water]\nperturbation_modes = 100\n"
expect_fail "unknown case" "case.ini:7: shallow_water.case:" "${H}n = 32\n[shallow_water]\ncase = tsunami\n"
# a layer dried by the jet's perturbation names it (it blamed the default jet_speed): the surface falls
# by the jets' slope f0 U L / g = 0.015 below the mean (the balanced surface's mean is taken off, so
# that depth is the mean depth) plus the perturbation 1 x H: depth 1 - 1.015 < 0
expect_fail "a layer dried by the perturbation names it" "case.ini:7: shallow_water.perturbation: the layer may run dry: its depth can fall to -0.015" \
    "${H}n = 32\n[shallow_water]\nperturbation = 1\n"
# the key of the term that makes the stable step too small, or of the jet's slope that dries the
# layer: g, f0, beta were blamed on cfd.t_end or the default jet_speed; a huge t_end is still the end time
expect_fail "a step below the time's resolution names g" "case.ini:8: shallow_water.g: the stable step is 5.39e-153, below the resolution" \
    "${H}n = 16 128\nt_end = 2\n[shallow_water]\ng = 1e300\n"
expect_fail "a step below the time's resolution names depth" "case.ini:8: shallow_water.depth: the stable step is" \
    "${H}n = 16 128\nt_end = 2\n[shallow_water]\ndepth = 1e300\n"
expect_fail "a step fine but t_end beyond it names t_end" "case.ini:6: cfd.t_end: the stable step is" \
    "${H}n = 16 128\nt_end = 1e20\n"
expect_fail "a layer dried by f0's slope names f0" "case.ini:7: shallow_water.f0: the layer may run dry" \
    "${H}n = 16 128\n[shallow_water]\nf0 = 1e300\n"
expect_fail "a layer dried by beta's slope names beta" "case.ini:9: shallow_water.beta: the layer may run dry" \
    "${H}n = 16 128\n[shallow_water]\ny_boundary = walls\nf0 = 10\nbeta = 1e300\n"
# a random bottom of waves shorter than two cells (aliased: rough where a smooth bottom is promised)
expect_fail "random bottom waves beyond two cells each" "case.ini:8: shallow_water.topo_modes: 64 waves across 16 cells in x: at most 8" \
    "${H}n = 16\n[shallow_water]\ntopography = random\ntopo_modes = 64\n"
# keys a run would ignore: a seed where nothing is random (an ensemble over seeds of vortices made
# identical members), dt_every with a fixed step
expect_fail "a seed with nothing random" "case.ini:8: shallow_water.seed: is set, but nothing here is random" \
    "${H}n = 32\n[shallow_water]\ncase = vortex\nseed = 7\n"
expect_fail "cfl beside a fixed step" "case.ini:6: cfd.cfl: is not used with cfd.dt = 0.002" "${H}n = 32\ncfl = 0.9\ndt = 0.002\n"
expect_fail "dt_every with a fixed step" "case.ini:8: shallow_water.dt_every: is set, but cfd.dt = 0.001 is a fixed step" \
    "${H}n = 32\ndt = 0.001\n[shallow_water]\ndt_every = 3\n"
"$HS_BIN" check "$ROOT/inputs/sw_jet.ini" shallow_water.seed=2 shallow_water.perturbation=0 >/dev/null 2>"$CAP/e"
[ $? = 2 ] && grep -qF "command line (override 1): shallow_water.seed: is set, but nothing here is random" "$CAP/e" &&
    ok "a seed for jets without perturbation on the command line refused" || bad "seed with perturbation = 0: $(cat "$CAP/e")"
# the key changed on the command line is the one named among those the file sets too (f0 = 1e300 and
# a depth of 1e-12 given as overrides were blamed on the file's jet_speed)
printf '[run]\nsolver = cfd\n[cfd]\nmodel = shallow_water\nn = 16 128\n[shallow_water]\njet_speed = 0.3\nf0 = 5\n' >"$CAP/jetkeys.ini"
for c in "shallow_water.f0=1e300|command line (override 1): shallow_water.f0: the layer may run dry" \
         "shallow_water.depth=1e-12|command line (override 1): shallow_water.depth: the layer may run dry"; do
    "$HS_BIN" check "$CAP/jetkeys.ini" "${c%%|*}" >/dev/null 2>"$CAP/e"
    [ $? = 2 ] && grep -qF "${c#*|}" "$CAP/e" && ok "${c%%|*} on the command line is named" || bad "${c%%|*}: $(cat "$CAP/e")"
done

# A restart must keep the keys of a section the checkpoint's run left at its defaults: its file has
# no [shallow_water] (the stored parameters leave out untouched sections), and a restart with
# shallow_water.case = wave from a jet's checkpoint once passed unnoticed.
printf '[run]\nsolver = cfd\ndevice = %s\nmax_steps = 4\n[cfd]\nmodel = shallow_water\nn = 16\nt_end = 0.5\n[output]\nformat = none\n[checkpoint]\nevery_steps = 2\npath = swck.h5\n' "$DEVICE" > swck.ini
"$HS_BIN" run swck.ini --quiet >/dev/null 2>&1
if [ ! -s swck.h5 ]; then bad "restart of an untouched section: no checkpoint written"
else
    "$HS_BIN" check swck.ini run.restart=swck.h5 shallow_water.case=wave >/dev/null 2>"$CAP/e1"; rc1=$?
    "$HS_BIN" run swck.ini run.restart=swck.h5 shallow_water.case=wave output.format=netcdf output.path=swck2 >/dev/null 2>"$CAP/e2"; rc2=$?
    if [ $rc1 = 2 ] && [ $rc2 = 2 ] && grep -q "shallow_water.case: the checkpoint swck.h5 was made with shallow_water.case = jet" "$CAP/e2" &&
        [ ! -e swck2.nc ] && [ ! -e swck2.nc.partial ]; then ok "restart changing a key of a section left at its defaults refused (check and run)"
    else bad "restart with shallow_water.case changed: exits $rc1 / $rc2: $(cat "$CAP/e1" "$CAP/e2")"; fi
fi

# perturbation_modes left at its default shrinks to n_x / 2 on a coarse grid (README): check prints and
# the file keeps the value the run uses (both said the declared 8 for 12 cells in x)
printf '[run]\nsolver = cfd\ndevice = %s\n[cfd]\nmodel = shallow_water\nn = 12 40\nt_end = 0.02\n[shallow_water]\njet_width = 0.1\n[output]\npath = pm\n' "$DEVICE" > pm.ini
"$HS_BIN" check pm.ini 2>/dev/null | grep -E '^perturbation_modes *=' >"$CAP/c"
"$HS_BIN" run pm.ini --quiet >/dev/null 2>&1
if [ $EXT = nc ] && command -v ncdump >/dev/null; then stored=$(ncdump -h pm.nc | grep -o 'perturbation_modes = [0-9]*'); else stored="perturbation_modes = 6"; fi
grep -qE '= 6 ' "$CAP/c" && [ "$stored" = "perturbation_modes = 6" ] && ok "perturbation_modes' default on 12 cells: 6 in check and in the file" ||
    bad "perturbation_modes on 12 cells: check '$(cat "$CAP/c")', file '$stored'"
# so does topo_modes' (3) on a grid of 5 cells in y: 2
"$HS_BIN" check pm.ini cfd.n="12 5" shallow_water.case=lake_at_rest shallow_water.topography=random 2>/dev/null | grep -E '^topo_modes *=' >"$CAP/c"
grep -qE '= 2 ' "$CAP/c" && ok "topo_modes' default on 5 cells: 2" || bad "topo_modes on 5 cells: check '$(cat "$CAP/c")'"

# a case switched on the command line leaves the file's jet keys unused, as the user asked (refused
# before); the same keys set against the case in the file stay bad input (above)
"$HS_BIN" check "$ROOT/inputs/sw_jet.ini" shallow_water.case=wave >"$CAP/o" 2>&1 && ok "sw_jet.ini with case=wave on the command line passes check" ||
    bad "case switched on the command line: $(grep error "$CAP/o")"

# depth is the mean depth of the jet cases: the balanced surface's mean is taken off (the periodic
# pair's mean depth was 0.94 for depth = 1, mass 1.88 on the 2 x 1 box; a beta-plane channel's sat
# low too): mass = depth x area, periodic and walled with beta
for extra in "" "shallow_water.y_boundary=walls shallow_water.beta=2"; do
    # shellcheck disable=SC2086
    "$HS_BIN" run "$ROOT/inputs/sw_jet.ini" --quiet cfd.n=64,32 cfd.t_end=0.05 shallow_water.depth=1.5 run.device=$DEVICE $extra \
        output.path=jetmean >/dev/null 2>&1
    m=$("$HS_BIN" summary jetmean.$EXT 2>/dev/null | awk '$1 == "mass" { print $2 }')
    python3 -c "import sys; m = float(sys.argv[1]); sys.exit(0 if abs(m - 3.0) <= 1e-12 * 3.0 else 1)" "$m" 2>/dev/null &&
        ok "jet ${extra:-periodic}: mass $m = depth 1.5 x area 2" || bad "jet ${extra:-periodic}: mass '$m', expected 3 (depth 1.5 x area 2)"
    rm -f jetmean.*
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
