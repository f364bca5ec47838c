#!/usr/bin/env bash
# The lbm CFD model end to end: the output's variables and series (read back with ncdump), 1/2/4 ranks equal bitwise (and CPU/GPU
# closely), a restart from an odd step continues bitwise, a mask file equals the analytic cylinder it was written from, the Mach
# warning, and bad inputs fail with exit 2.
set -u
. "$(dirname "$0")/lib.sh"

# A small cylinder channel (inlet, outlet, walls, Bouzidi links, fp32) and a 3D lid box with a
# periodic axis in fp16: every kernel path.
cat > cyl.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
model = lbm
n = 88 24
length = 2.2 0.6
t_end = 0.5
[lbm]
nu = 4e-3
u_ref = 0.3
u_lattice = 0.08
boundary = inlet outlet wall wall
obstacle = cylinder
obstacle_center = 0.5 0.29
obstacle_radius = 0.1
[output]
path = cyl
every_time = 0.1
EOF2
cat > box.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
model = lbm
ndim = 3
n = 12 10 8
length = 1.2 1 0.8
t_end = 0.3
[lbm]
nu = 0.01
u_ref = 1
u_lattice = 0.1
storage = fp16
collision = bgk
boundary = periodic periodic wall lid wall wall
[output]
path = box
every_time = 0.1
EOF2

# 1. runs, with the variables and series users rely on
for c in cyl box; do
    if "$HS_BIN" run $c.ini --quiet >"$CAP/o" 2>"$CAP/e"; then ok "$c runs ($(grep -m1 'steps of dt' "$CAP/o" | sed 's/^lbm: //'))"
    else bad "$c: $(cat "$CAP/e")"; fi
done
if [ $EXT = nc ] && command -v ncdump >/dev/null; then
    h=$(ncdump -h cyl.nc)
    missing=""
    for v in "u(time, y, x)" "v(time, y, x)" "p(time, y, x)" "solid(y, x)" "drag_coefficient(time)" "lift_coefficient(time)" "mach_max(time)"; do
        grep -qF "double $v" <<<"$h" || missing="$missing $v"
    done
    [ -z "$missing" ] && ok "cyl file has u, v, p, solid and the force and Mach series" || bad "cyl file lacks:$missing"
    h=$(ncdump -h box.nc)
    missing=""
    for v in "u(time, z, y, x)" "v(time, z, y, x)" "w(time, z, y, x)" "p(time, z, y, x)"; do grep -qF "double $v" <<<"$h" || missing="$missing $v"; done
    [ -z "$missing" ] && ok "box file has u, v, w, p" || bad "box file lacks:$missing"
    # the t = 0 record is the rest state the run starts from (it showed the first step's lid momentum,
    # u = U/3 on the lid's row, mach_max 0.058); the next record moves
    m=$(ncdump -v mach_max box.nc | sed -n '/^ mach_max =/,/;/p' | tr -d ' ;' | cut -d= -f2 | tr ',' '\n' | grep -E '^[-+0-9.eE]+$' | head -2 | tr '\n' ' ')
    awk -v m="$m" 'BEGIN { split(m, x, " "); exit !(x[1] == 0 && x[2] > 0.01) }' && ok "box t = 0 record at rest, then moving (mach_max $m)" || bad "box mach_max of the first records: $m"
    # the drag of the last record: positive, finite (the flow pushes the cylinder downstream)
    cd_last=$(ncdump -v drag_coefficient cyl.nc | sed -n '/^ drag_coefficient =/,/;/p' | tr -d ' ;' | cut -d= -f2 | tr ',' '\n' | grep -E '^[-+0-9.eE]+$' | tail -1)
    awk -v c="$cd_last" 'BEGIN { exit !(c > 0.5 && c < 100) }' && ok "cyl drag coefficient of the last record $cd_last" || bad "cyl drag coefficient '$cd_last'"
    # a cylinder on the floor of a closed box of fluid at rest feels no force: the exchange counts the
    # gauge pressure (it counted the lattice's background pressure on the faces the fluid reaches,
    # Cl = -62.5 at u_lattice 0.1, -250 at 0.05); each printed coefficient is 0 to 6 decimals
    for ul in 0.1 0.05; do
        "$HS_BIN" run --quiet cyl.ini cfd.n=16,16 cfd.length=1,1 cfd.t_end=0.3 lbm.boundary=walls lbm.obstacle_center=0.5,0 \
            lbm.obstacle_radius=0.2 lbm.cd_velocity=1 lbm.u_lattice=$ul lbm.u_ref=1 output.format=none >"$CAP/o" 2>&1
        grep -q "drag coefficient -\?0.000000, lift coefficient -\?0.000000" "$CAP/o" &&
            ok "a cylinder on the floor, fluid at rest, u_lattice $ul: no force" || bad "floor cylinder at rest, u_lattice $ul: $(grep -m1 'coefficient\|error' "$CAP/o")"
    done
    # a run of no steps closes with the rest state its t = 0 record holds (max |u| was F dt / 2 with a body force)
    "$HS_BIN" run --quiet cyl.ini cfd.n=16,16 cfd.length=1,1 cfd.t_end=0 lbm.boundary=walls lbm.obstacle=none \
        lbm.force=50,0 output.format=none >"$CAP/o" 2>&1
    grep -q "max |u| 0 m/s, density 1.000000..1.000000" "$CAP/o" && ok "lbm t_end = 0 with a force: closes at rest" ||
        bad "lbm t_end = 0 with a force: $(grep -m1 'max |u|\|error' "$CAP/o")"
    # a state that is no longer a fluid's ends the run, exit 1 (force 1e6 finished with density
    # -4e15, exit 0); a flow faster than the lattice allows is warned of with its Mach number
    "$HS_BIN" run --quiet cyl.ini cfd.n=16,16 cfd.length=1,1 cfd.t_end=0.1 lbm.boundary=walls lbm.obstacle=none lbm.u_ref=1 \
        lbm.nu=0.01 lbm.force=1e6,0 output.format=none >"$CAP/o" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "lbm: the state is no longer a fluid's at step" "$CAP/o" && ok "lbm force 1e6: exit 1, no longer a fluid" ||
        bad "lbm force 1e6: exit $rc: $(grep -m1 'error\|finished' "$CAP/o")"
    "$HS_BIN" run --quiet cyl.ini cfd.n=8,16 cfd.length=0.5,1 cfd.t_end=3 "lbm.boundary=periodic periodic wall wall" lbm.obstacle=none \
        lbm.u_ref=1 lbm.nu=0.1 lbm.u_lattice=0.05 lbm.force=8,0 output.format=none >"$CAP/o" 2>&1
    grep -q "warning: lbm: the flow reached max |u| .* lattice Mach 0\.[3-9]" "$CAP/o" && ok "lbm: the actual lattice Mach above 0.3 is warned of" ||
        bad "lbm fast channel: no Mach warning: $(grep -m2 'warning\|lbm:' "$CAP/o")"
    # CF essentials and cfchecks (check_output.py skips what is missing); output times not on the
    # lattice's steps: records at the first step past each
    for f in cyl.nc box.nc; do
        if python3 "$ROOT/scripts/check_output.py" "$f" >"$CAP/check" 2>&1; then
            ok "check_output.py $f: $(grep '^ok' "$CAP/check" | sed 's/^ok *//' | tr '\n' ';' | cut -c1-110)"
        else
            bad "check_output.py $f: $(grep -v '^ok' "$CAP/check" | head -3)"
        fi
    done
fi

# an output time far below the lattice step (output.every_time 1e-10 s, dt about 1e-3 s): the step
# cannot shorten to land on it, so a record at every step (0 steps to the first record's time ended
# the run: "made no progress", exit 1)
"$HS_BIN" run box.ini --quiet cfd.t_end=0.05 output.every_time=1e-10 output.path=tiny >"$CAP/o" 2>&1; rc=$?
steps=$(sed -n 's/.*finished at step \([0-9]*\),.*/\1/p' "$CAP/o")
recs=$("$HS_BIN" summary tiny.$EXT 2>/dev/null | sed -n 's/^ *records *: *\([0-9]*\),.*/\1/p')
if [ $rc = 0 ] && [ -n "$steps" ] && [ "$recs" = $((steps + 1)) ]; then ok "output.every_time far below dt: a record at each of the $steps steps and t = 0"
else bad "output.every_time far below dt: exit $rc, $steps steps, '$recs' records: $(grep -m2 'error\|finished' "$CAP/o")"; fi

# 2. the same on 1, 2 and 4 ranks, in several splits: bitwise (redundant ghost rings replay the neighbours' updates)
if [ $HAVE_MPI = 1 ]; then
    for c in cyl box; do
        for run in "2 2 1 1" "4 4 1 1" "4 2 2 1"; do
            set -- $run
            np=$1 procs="$2 $3"
            [ $c = box ] && procs="$2 1 $3"
            out=${c}_np${np}_${2}x$3
            if ! "${MPIRUN[@]}" -n $np "$HS_BIN" run $c.ini --quiet run.allow_shared_gpu=true "cfd.procs=$procs" output.path=$out >"$CAP/o" 2>"$CAP/e"; then
                bad "$c on $np ranks ($procs): $(grep hpcsim "$CAP/e")"
                continue
            fi
            for v in u v p; do
                if ! "$HS_BIN" compare $c.$EXT $out.$EXT $v >"$CAP/o"; then bad "$c $v: $np ranks ($procs) differ: $(cat "$CAP/o")"; continue 2; fi
            done
            ok "$c: $np ranks (procs $procs) equal 1 rank bitwise in u, v, p"
        done
    done
else
    echo "skip rank-count comparison: no MPI in this build"
fi

# 3. CPU and GPU (fused multiply-adds on the GPU; fp32 and fp16 storage round their sums)
if [ "$DEVICE" = cuda ]; then
    for c in cyl box; do
        tol=1e-4
        [ $c = box ] && tol=2e-2
        "$HS_BIN" run $c.ini --quiet run.device=cpu output.path=${c}_cpu >/dev/null 2>&1
        # both components against the flow's speed scale (the largest |u|): in the lid box v stays
        # ~1/40 of u, and fp16 storage rounds it at the scale of u, not of v
        "$HS_BIN" compare ${c}_cpu.$EXT $c.$EXT u 0 >"$CAP/ou"
        "$HS_BIN" compare ${c}_cpu.$EXT $c.$EXT v 0 >"$CAP/ov"
        # compare's line: "u: N values, M not bitwise equal, max |a-b| = A (R of max |b|): VERDICT",
        # so max |b| = A / R
        scale=$(sed -n 's/.*max |a-b| = \([^ ]*\) (\([^ ]*\) of max |b|).*/\1 \2/p' "$CAP/ou" | awk '{print ($2 > 0 ? $1 / $2 : 0)}')
        worst=$(cat "$CAP/ou" "$CAP/ov" | sed -n 's/.*max |a-b| = \([^ ]*\) .*/\1/p' | awk '{if ($1 + 0 > m) m = $1 + 0} END {print m + 0}')
        if awk -v w="$worst" -v s="$scale" -v t="$tol" 'BEGIN {exit !(w == 0 || (s > 0 && w <= t * s))}'; then
            ok "$c: CPU and GPU agree in u, v: largest difference $worst, $(awk -v w="$worst" -v s="$scale" 'BEGIN {printf "%.2g", w / s}') of the largest speed $scale (tolerance $tol)"
        else
            bad "$c CPU vs GPU: largest difference $worst against the largest speed $scale (tolerance $tol): $(cat "$CAP/ou" "$CAP/ov")"
        fi
    done
fi

# 4. a restart continues bitwise from an odd step (between the two halves of the AA pair), on 1 and 2 ranks
for np in 1 2; do
    [ $np = 2 ] && [ $HAVE_MPI = 0 ] && continue
    pre=()
    [ $np = 2 ] && pre=("${MPIRUN[@]}" -n 2)
    rm -f ck*
    "${pre[@]}" "$HS_BIN" run cyl.ini --quiet run.allow_shared_gpu=true output.path=part$np checkpoint.every_steps=7 checkpoint.path=ck \
        run.max_steps=10 >/dev/null 2>&1
    ck=$(ls ck* 2>/dev/null | head -1)
    if [ -n "$ck" ] && "${pre[@]}" "$HS_BIN" run cyl.ini --quiet run.allow_shared_gpu=true output.path=part$np run.restart="$ck" >"$CAP/o" 2>"$CAP/e"; then
        good=1
        for v in u v p drag_coefficient; do "$HS_BIN" compare cyl.$EXT part$np.$EXT $v >"$CAP/o" || good=0; done
        [ $good = 1 ] && ok "restart on $np rank(s) from $ck (step 7) is bitwise (every record)" || bad "restart on $np rank(s) differs: $(cat "$CAP/o")"
    else
        bad "restart on $np rank(s): checkpoint '$ck': $(cat "$CAP/e" 2>/dev/null)"
    fi
done

# 5. a mask file: the `solid` variable of a run with half-way links, read back as the obstacle,
# gives the same flow bitwise as the analytic cylinder
"$HS_BIN" run cyl.ini --quiet lbm.interpolation=halfway output.path=half >/dev/null 2>&1
if "$HS_BIN" run cyl.ini --quiet lbm.obstacle=file lbm.mask_file=half.$EXT lbm.mask_variable=solid lbm.cd_length=0.2 \
    output.path=masked >"$CAP/o" 2>"$CAP/e"; then
    good=1
    for v in u v p drag_coefficient; do "$HS_BIN" compare half.$EXT masked.$EXT $v >"$CAP/o" || { good=0; break; }; done
    [ $good = 1 ] && ok "a mask file ($EXT) of the cylinder gives the analytic cylinder's flow and drag bitwise" || bad "mask file: $(cat "$CAP/o")"
else
    bad "mask file run: $(cat "$CAP/e")"
fi
# a mask with a missing value (NaN) or of text is bad input naming the key, exit 2 (NaN was taken for
# fluid without a word; a char mask failed as a runtime error, exit 1)
if command -v ncgen >/dev/null && "$HS_BIN" --version | grep -q '+netcdf'; then
    vals="0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NaN"
    printf 'netcdf m {\ndimensions:\n y = 4 ;\n x = 8 ;\nvariables:\n double mask(y, x) ;\ndata:\n mask = %s ;\n}\n' "$vals" | ncgen -o nanmask.nc
    printf 'netcdf m {\ndimensions:\n y = 4 ;\n x = 8 ;\nvariables:\n char mask(y, x) ;\ndata:\n mask = "00000000", "00011000", "00011000", "00000000" ;\n}\n' | ncgen -o charmask.nc
    for m in "nanmask.nc:has a missing value (NaN or _FillValue) at cell (x 7, y 3, z 0)" "charmask.nc:cannot be read as numbers"; do
        "$HS_BIN" check cyl.ini cfd.n=8,4 cfd.length=0.2,0.1 lbm.obstacle=file lbm.mask_file=${m%%:*} >"$CAP/o" 2>&1
        rc=$?
        [ $rc = 2 ] && grep -qF "${m#*:}" "$CAP/o" && ok "mask ${m%%:*}: exit 2" || bad "mask ${m%%:*}: exit $rc: $(head -c 300 "$CAP/o")"
    done
    # a square mask stored (x, y) ran transposed, and one whose coordinates step by twice the cell ran
    # on this grid (the shape alone was checked): refused, as heat's and seismic's files are
    zeros=$(printf '0, %.0s' $(seq 63))0
    printf 'netcdf m {\ndimensions:\n x = 8 ;\n y = 8 ;\nvariables:\n double mask(x, y) ;\ndata:\n mask = %s ;\n}\n' "$zeros" | ncgen -o xymask.nc
    printf 'netcdf m {\ndimensions:\n y = 8 ;\n x = 8 ;\nvariables:\n double x(x) ;\n  x:units = "m" ;\n double mask(y, x) ;\ndata:\n x = 0.025, 0.075, 0.125, 0.175, 0.225, 0.275, 0.325, 0.375 ;\n mask = %s ;\n}\n' "$zeros" | ncgen -o stepmask.nc
    for m in "xymask.nc:has dimensions (x, y): the mask is read (y, x)" "stepmask.nc:steps its coordinate 'x' by 0.05 m (from index 0 to 1); the grid's spacing there is 0.025 m"; do
        "$HS_BIN" check cyl.ini cfd.n=8,8 cfd.length=0.2,0.2 lbm.obstacle=file lbm.mask_file=${m%%:*} >"$CAP/o" 2>&1
        rc=$?
        [ $rc = 2 ] && grep -qF "${m#*:}" "$CAP/o" && ok "mask ${m%%:*}: exit 2" || bad "mask ${m%%:*}: exit $rc: $(head -c 300 "$CAP/o")"
    done
    # coordinates in cm that step by the cell (2.5 cm = 0.025 m): the same obstacle as in m (they
    # were read as metres and refused, "steps ... by 2.5 m"); units it does not know are quoted
    one=$(printf '0, %.0s' $(seq 27))1$(printf ', 0%.0s' $(seq 36))
    for u in m:0.025 cm:2.5 furlong:2.5; do
        x=$(awk -v h="${u#*:}" 'BEGIN { for (i = 0; i < 8; i++) printf "%s%.17g", i ? ", " : "", (i + 0.5) * h }')
        printf 'netcdf m {\ndimensions:\n y = 8 ;\n x = 8 ;\nvariables:\n double x(x) ;\n  x:units = "%s" ;\n double y(y) ;\n  y:units = "%s" ;\n double mask(y, x) ;\ndata:\n x = %s ;\n y = %s ;\n mask = %s ;\n}\n' \
            "${u%%:*}" "${u%%:*}" "$x" "$x" "$one" | ncgen -o munit_${u%%:*}.nc
    done
    mrun=(cyl.ini --quiet cfd.n=8,8 cfd.length=0.2,0.2 lbm.boundary=walls lbm.obstacle=file cfd.t_end=0.02)
    if "$HS_BIN" run "${mrun[@]}" lbm.mask_file=munit_m.nc output.path=unit_m >/dev/null 2>&1 &&
        "$HS_BIN" run "${mrun[@]}" lbm.mask_file=munit_cm.nc output.path=unit_cm >"$CAP/o" 2>"$CAP/e" &&
        "$HS_BIN" compare unit_m.$EXT unit_cm.$EXT p >"$CAP/o"; then ok "a mask with coordinates in cm is the same obstacle as in m"
    else bad "mask in cm: $(cat "$CAP/e" "$CAP/o" | head -c 300)"; fi
    "$HS_BIN" check "${mrun[@]}" lbm.mask_file=munit_furlong.nc >"$CAP/o" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -qF "steps its coordinate 'y' by 2.5 m (from index 0 to 1, units 'furlong' read as m)" "$CAP/o" &&
        ok "mask coordinates in units it does not know: refused, quoting them" || bad "mask in furlongs: exit $rc: $(head -c 300 "$CAP/o")"
fi
# the same mask as raw bytes
if python3 - half.$EXT <<'PY' 2>/dev/null; then
import sys
name = sys.argv[1]
try:
    import netCDF4
    m = netCDF4.Dataset(name)["solid"][:]
except Exception:
    import h5py
    m = h5py.File(name, "r")["solid"][:]
open("mask.raw", "wb").write(bytes(int(v != 0) for v in m.ravel()))
PY
    if "$HS_BIN" run cyl.ini --quiet lbm.obstacle=file lbm.mask_file=mask.raw lbm.mask_format=u8 lbm.cd_length=0.2 output.path=raw >"$CAP/o" 2>"$CAP/e" &&
        "$HS_BIN" compare half.$EXT raw.$EXT u >"$CAP/o"; then ok "a raw u8 mask gives the same flow bitwise"
    else bad "raw mask: $(cat "$CAP/e" "$CAP/o")"; fi
    # as h5py writes a numpy bool array (an HDF5 enum FALSE/TRUE of int8): the NetCDF library hid it
    # ("no variable 'mask'"); read through HDF5 it is the same obstacle
    if python3 - half.$EXT <<'PY' 2>/dev/null; then
import sys, h5py, numpy
try:
    import netCDF4
    m = numpy.asarray(netCDF4.Dataset(sys.argv[1])["solid"][:])
except Exception:
    m = h5py.File(sys.argv[1], "r")["solid"][:]
with h5py.File("boolmask.h5", "w") as f:
    f["mask"] = m != 0
PY
        if "$HS_BIN" run cyl.ini --quiet lbm.obstacle=file lbm.mask_file=boolmask.h5 lbm.cd_length=0.2 output.path=boolm >"$CAP/o" 2>"$CAP/e" &&
            "$HS_BIN" compare half.$EXT boolm.$EXT u >"$CAP/o"; then ok "an h5py bool mask (HDF5 enum) gives the same flow bitwise"
        else bad "bool mask: $(cat "$CAP/e" "$CAP/o")"; fi
    fi
else
    echo "skip raw mask: no netCDF4/h5py in python3"
fi

# 6. the lattice Mach number above 0.3: a warning with the figure, and the run goes on
if "$HS_BIN" run cyl.ini --quiet lbm.u_lattice=0.2 cfd.t_end=0.05 output.format=none >"$CAP/o" 2>"$CAP/e" &&
    grep -qF "warning: lbm: lattice Mach number 0.346" "$CAP/e"; then ok "lattice Mach 0.346 warned: $(grep -m1 warning "$CAP/e" | cut -c1-80)..."
else bad "Mach warning: $(cat "$CAP/e")"; fi

# 6b. a grid that cannot resolve the Reynolds number (nu 1e-6 on 24 cells across: a run at tau near
# 1/2 finished with max |u| 2.7 times the lid's speed without a word) and a step count beyond any
# run's reach: warnings with the estimate, exit 0 from check; the case itself warns of nothing
"$HS_BIN" check cyl.ini lbm.nu=1e-6 >"$CAP/o" 2>"$CAP/e"; rc=$?
[ $rc = 0 ] && grep -qE "warning: lbm: Reynolds number 1.8e\+05 .* get 0.0[0-9]+ cells; resolving them needs about [0-9]+ cells per unit length \(40 now\)" "$CAP/e" &&
    ok "under-resolved Reynolds number warned: $(grep -m1 warning "$CAP/e" | cut -c1-90)..." || bad "Reynolds warning: exit $rc: $(cat "$CAP/e")"
"$HS_BIN" check cyl.ini lbm.u_lattice=1e-5 cfd.t_end=1000 >"$CAP/o" 2>"$CAP/e"; rc=$?
[ $rc = 0 ] && grep -qE "warning: lbm: 1.2e\+09 steps of dt = .* raise lbm.u_lattice" "$CAP/e" &&
    ok "a step count beyond reach warned: $(grep -m1 steps "$CAP/e" | cut -c1-90)..." || bad "step-count warning: exit $rc: $(cat "$CAP/e")"
"$HS_BIN" check cyl.ini >"$CAP/o" 2>"$CAP/e"; rc=$?
[ $rc = 0 ] && ! grep -q warning "$CAP/e" && ok "the resolved cylinder case warns of nothing" || bad "cylinder case: exit $rc: $(cat "$CAP/e")"

# 7. bad input: exit 2, the key named, nothing written; check says the same as run (the cases are
# also in tests/data/bad_inputs.txt for test_check_equals_run.sh)
expect_fail() { # name, expected message fragment, ini text, extra file name and contents
    local name=$1 want=$2
    mkdir -p "$CAP/empty" && rm -rf "$CAP/empty"/* && printf '%b' "$3" > "$CAP/empty/case.ini"
    [ $# -ge 5 ] && printf '%b' "$5" > "$CAP/empty/$4"
    (cd "$CAP/empty" && "$HS_BIN" check case.ini >"$CAP/o" 2>"$CAP/ec")
    local rcc=$?
    (cd "$CAP/empty" && "$HS_BIN" run case.ini >"$CAP/o" 2>"$CAP/e")
    local rc=$? files
    files=$(ls -A "$CAP/empty" | grep -v "^case.ini$" | grep -v "^${4:-case.ini}$")
    if [ $rc = 2 ] && [ $rcc = 2 ] && grep -qF "$want" "$CAP/e" && grep -qF "$want" "$CAP/ec" && [ -z "$files" ]; then ok "$name"; else
        bad "$name: run exit $rc, check exit $rcc, files '$files'"; printf '  got:      %s\n  expected: %s\n' "$(cat "$CAP/e")" "$want"; fi
}
H='[run]\nsolver = cfd\n[cfd]\nmodel = lbm\n'
expect_fail "tau = 0.5 refused" "case.ini:7: lbm.tau: tau = 0.5 is unstable: the relaxation time must exceed 1/2" "${H}n = 16\n[lbm]\ntau = 0.5\n"
expect_fail "tau below 0.5 refused" "case.ini:7: lbm.tau: tau = 0.3 is unstable" "${H}n = 16\n[lbm]\ntau = 0.3\n"
expect_fail "viscosity too small for the grid" "case.ini:7: lbm.nu: the relaxation time 1/2 + 3 nu dt/dx^2 = 0.5 is not above 1/2" \
    "${H}n = 16\n[lbm]\nnu = 1e-30\n"
expect_fail "an inlet without an outlet" "case.ini:8: lbm.boundary: an inlet needs an outlet somewhere" \
    "${H}n = 16 8\nlength = 2 1\n[lbm]\nboundary = inlet wall wall wall\n"
expect_fail "tau and u_lattice both given" "case.ini:8: lbm.u_lattice: is set, but lbm.tau fixes the time step" \
    "${H}n = 16\n[lbm]\ntau = 0.7\nu_lattice = 0.05\n"
expect_fail "supersonic lattice velocity" "case.ini:7: lbm.u_lattice: the lattice Mach number u_ref dt/dx sqrt(3) = 1.21 is supersonic" \
    "${H}n = 16\n[lbm]\nu_lattice = 0.7\n"
expect_fail "raw mask of the wrong size" "case.ini:9: lbm.mask_file: 'mask.raw' has 17 bytes; the grid of 8 x 4 x 1 cells needs 32" \
    "${H}n = 8 4\nlength = 1 0.5\n[lbm]\nobstacle = file\nmask_file = mask.raw\nmask_format = u8\n" mask.raw "0000000000000000\n"
expect_fail "a missing raw mask" "case.ini:9: lbm.mask_file: cannot open mask file nomask.raw: No such file or directory" \
    "${H}n = 8 4\nlength = 1 0.5\n[lbm]\nobstacle = file\nmask_file = nomask.raw\nmask_format = u8\n"
expect_fail "a sphere in 2D" "case.ini:7: lbm.obstacle: a sphere needs cfd.ndim = 3" "${H}n = 16\n[lbm]\nobstacle = sphere\n"
# keys this configuration would ignore though the user meant them: a mask file beside a cylinder
# (it ran the cylinder, exit 0), trt_magic under bgk
expect_fail "a mask file beside a cylinder" "case.ini:8: lbm.mask_file: is used only with lbm.obstacle = file (this run has obstacle = cylinder)" \
    "${H}n = 16\n[lbm]\nobstacle = cylinder\nmask_file = mask.raw\n" mask.raw "0000000000000000\n"
expect_fail "trt_magic under bgk" "case.ini:8: lbm.trt_magic: is used only with lbm.collision = trt (this run has bgk)" \
    "${H}n = 16\n[lbm]\ncollision = bgk\ntrt_magic = 0.25\n"
# the same for an obstacle's, an inlet's and a lid's keys where there is none (each ran without a word;
# mask8x4: a valid raw mask, one solid cell, as printf %b writes it)
mask8x4=""; for i in $(seq 31); do mask8x4="$mask8x4\\0000"; done; mask8x4="$mask8x4\\0001"
expect_fail "an obstacle radius without an obstacle" "case.ini:7: lbm.obstacle_radius: is used only with lbm.obstacle = cylinder or sphere (this run has obstacle = none)" \
    "${H}n = 16\n[lbm]\nobstacle_radius = 0.2\n"
expect_fail "an obstacle centre beside a mask file" "case.ini:11: lbm.obstacle_center: is used only with lbm.obstacle = cylinder or sphere (this run has obstacle = file)" \
    "${H}n = 8 4\nlength = 1 0.5\n[lbm]\nobstacle = file\nmask_file = mask.raw\nmask_format = u8\nobstacle_center = 0.3 0.2\n" mask.raw "$mask8x4"
expect_fail "Bouzidi links asked of a mask file" "case.ini:11: lbm.interpolation: bouzidi needs the exact wall of a cylinder or sphere" \
    "${H}n = 8 4\nlength = 1 0.5\n[lbm]\nobstacle = file\nmask_file = mask.raw\nmask_format = u8\ninterpolation = bouzidi\n" mask.raw "$mask8x4"
expect_fail "a drag reference without an obstacle" "case.ini:8: lbm.cd_length: is used only with an obstacle (this run has lbm.obstacle = none)" \
    "${H}n = 16\n[lbm]\nboundary = wall wall wall lid\ncd_length = 0.2\n"
expect_fail "an inlet profile without an inlet" "case.ini:8: lbm.inlet_profile: is used only with an inlet face (lbm.boundary = wall wall wall lid has none)" \
    "${H}n = 16\n[lbm]\nboundary = wall wall wall lid\ninlet_profile = uniform\n"
expect_fail "a ramp without an inlet or a lid" "case.ini:8: lbm.ramp_time: ramps the inlet's and the lid's speeds, and lbm.boundary = periodic periodic wall wall has neither" \
    "${H}n = 16\n[lbm]\nboundary = periodic periodic wall wall\nramp_time = 1\nforce = 0.1\n"
# a z coordinate of the centre in 2D (dropped without a word; a third force component is refused)
expect_fail "an obstacle centre with 3 coordinates in 2D" "case.ini:8: lbm.obstacle_center: 3 coordinates for 2 dimensions" \
    "${H}n = 16\n[lbm]\nobstacle = cylinder\nobstacle_center = 0.5 0.4 0.3\n"
expect_fail "periodic on one side" "lbm.boundary: the x faces are periodic on one side only" "${H}n = 16\n[lbm]\nboundary = periodic wall wall wall\n"
expect_fail "face kind misspelt" "lbm.boundary: 'lidd' is not a face kind" "${H}n = 16\n[lbm]\nboundary = wall wall wall lidd\n"
expect_fail "cells not square" "cfd.length: the lattice needs square cells" "${H}n = 16 8\nlength = 1 1\n"
expect_fail "a fixed time step refused" "cfd.dt: the lbm model's time step follows from the lattice" "${H}n = 16\ndt = 0.01\n"

# face kinds separated by commas, as the other list keys take them
mkdir -p "$CAP/comma" && printf '%b' "${H}n = 16 8\nlength = 2 1\n[lbm]\nboundary = inlet,outlet, wall,wall\n" > "$CAP/comma/case.ini"
(cd "$CAP/comma" && "$HS_BIN" check case.ini >"$CAP/o" 2>"$CAP/e") && ok "face kinds separated by commas" || bad "commas in lbm.boundary: $(cat "$CAP/e")"
# a long list is counted whole (it was read through a 256-byte copy: 80 kinds counted as 51)
(cd "$CAP/comma" && "$HS_BIN" check case.ini "lbm.boundary=$(printf 'wall %.0s' $(seq 80))" >"$CAP/o" 2>"$CAP/e"); rc=$?
[ $rc = 2 ] && grep -q "lbm.boundary: 80 face kinds for 2 dimensions" "$CAP/e" && ok "a list of 80 face kinds counted whole" ||
    bad "80 face kinds: exit $rc: $(cat "$CAP/e")"

# a run that goes unstable reports it without any output file (fmin and fmax had dropped the NaN:
# "max |u| 0, density 1", finished, exit 0)
mkdir -p "$CAP/nan" && printf '%b' "${H}n = 48 16\nlength = 3 1\nt_end = 10\n[lbm]\nnu = 1e-6\nboundary = inlet outlet wall wall\n[output]\nformat = none\n" > "$CAP/nan/case.ini"
(cd "$CAP/nan" && "$HS_BIN" run case.ini --quiet >"$CAP/o" 2>"$CAP/e"); rc=$?
if [ $rc = 1 ] && grep -qE "lbm: the state is (not finite|no longer a fluid's) at step" "$CAP/e"; then ok "an unstable run without output exits 1 naming the step"
else bad "unstable run without output: exit $rc, $(cat "$CAP/e")"; fi

# drag is the force along the flow, whichever way it goes: the same channel mirrored (flow towards -x)
# had drag -4.69 for +4.69, and turned to run along y it reported the cross-stream force as drag
DR=("$ROOT/inputs/lbm_cylinder_re20.ini" --quiet cfd.t_end=0.5 lbm.ramp_time=0.2 output.every_time=0.25)
"$HS_BIN" run "${DR[@]}" cfd.n="110 20" cfd.length="2.2 0.4" output.path=dpx >/dev/null 2>"$CAP/e1"
"$HS_BIN" run "${DR[@]}" cfd.n="110 20" cfd.length="2.2 0.4" lbm.boundary="outlet inlet wall wall" lbm.obstacle_center="2.0 0.2" output.path=dmx >/dev/null 2>"$CAP/e2"
"$HS_BIN" run "${DR[@]}" cfd.n="20 110" cfd.length="0.4 2.2" lbm.boundary="wall wall inlet outlet" lbm.obstacle_center="0.2 0.2" output.path=dpy >/dev/null 2>"$CAP/e3"
cd_of() { "$HS_BIN" summary "$1" 2>/dev/null | awk '$1 == "drag_coefficient" { print $2 }'; }
cpx=$(cd_of dpx.$EXT); cmx=$(cd_of dmx.$EXT); cpy=$(cd_of dpy.$EXT)
if awk -v a="$cpx" -v b="$cmx" -v c="$cpy" 'BEGIN { d1 = a - b; d2 = a - c; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2; exit !(a > 1 && d1 < 1e-4 * a && d2 < 1e-4 * a) }'; then
    ok "drag along the flow: +x $cpx, -x $cmx, +y $cpy"
else bad "drag by flow direction: +x '$cpx', -x '$cmx', +y '$cpy' $(cat "$CAP/e1" "$CAP/e2" "$CAP/e3" | head -3)"; fi

# a body across a periodic face has its part beyond the face on the other side: a periodic array of
# cylinders drawn centred on x = 0 (or on the far face, or a period away) is the one centred mid-way,
# moved by half the period (the half beyond the face was cut off: 38 solid cells of 76, drag 0.402
# for 0.366); a cylinder that, wrapped, covers every cell is refused
PC=(--quiet "${H}n = 32 16\nlength = 2 1\nt_end = 1\n[lbm]\nnu = 0.01\nstorage = fp64\nboundary = periodic periodic wall wall\nforce = 0.1 0\nobstacle = cylinder\nobstacle_radius = 0.3\n[output]\nevery_time = 1\n")
mkdir -p "$CAP/pc" && printf '%b' "${PC[1]}" > "$CAP/pc/case.ini"
for c in "1 mid" "0 low" "2 high" "-1 image"; do
    set -- $c
    (cd "$CAP/pc" && "$HS_BIN" run case.ini --quiet lbm.obstacle_center="$1 0.5" output.path=pc_$2 >/dev/null 2>"$CAP/e") || bad "periodic cylinder at x = $1: $(cat "$CAP/e")"
done
u_of() { "$HS_BIN" summary "$1" 2>/dev/null | awk '$1 == "drag_coefficient" { d = $2 } $1 == "u" { m = $7 } END { print d, m }'; }
ref=$(u_of "$CAP/pc/pc_mid.$EXT")
same=1
for s in low high image; do [ "$(u_of "$CAP/pc/pc_$s.$EXT")" = "$ref" ] || same=0; done
[ -n "$ref" ] && [ $same = 1 ] && ok "a cylinder across a periodic face equals the one mid-way (drag, mean u: $ref)" ||
    bad "periodic cylinder: mid '$ref', on x = 0 '$(u_of "$CAP/pc/pc_low.$EXT")', x = 2 '$(u_of "$CAP/pc/pc_high.$EXT")', x = -1 '$(u_of "$CAP/pc/pc_image.$EXT")'"
(cd "$CAP/pc" && "$HS_BIN" check case.ini lbm.obstacle_center="0 0.5" lbm.obstacle_radius=1.2 >/dev/null 2>"$CAP/e"); rc=$?
[ $rc = 2 ] && grep -q "lbm.obstacle_radius: the cylinder of radius 1.2 covers every cell" "$CAP/e" && ok "a wrapped cylinder covering every cell is refused" ||
    bad "wrapped cylinder covering every cell: exit $rc, $(cat "$CAP/e")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
