#!/usr/bin/env bash
# The seismic solver end to end: seismogram and snapshot files, decimated snapshots, a bitwise
# restart, NetCDF and raw model files alike, the salt example's model, 1 and 2 ranks, and the
# points-per-wavelength warning said alike by check and run.
set -u
. "$(dirname "$0")/lib.sh"
HAVE_NC=0
"$HS_BIN" --version | grep -q '+netcdf' && HAVE_NC=1
HAVE_PY=0
python3 -c "import netCDF4, numpy" 2>/dev/null && [ $HAVE_NC = 1 ] && HAVE_PY=1

cat > shot.ini <<EOF
[run]
solver = seismic
device = $DEVICE
allow_shared_gpu = true
[seismic]
ndim = 2
n = 91 61
spacing = 10
pml = 12
t_end = 0.4
precision = float64
f0 = 12
source_position = 447 213
receivers = line
receiver_start = 140.5 150.2
receiver_end = 760.3 330.9
receiver_count = 12
[output]
every_steps = 100
path = snap
EOF

# ---- a run writes the seismograms (station data and SEG-Y) and the snapshots
if "$HS_BIN" run shot.ini -q >run.log 2>&1 && [ -s seismograms.$EXT ] && [ -s seismograms.sgy ] && [ -s snap.$EXT ]; then
    ok "run writes seismograms.$EXT, seismograms.sgy and snap.$EXT"
else
    bad "run: $(tail -3 run.log)"
fi
grep -q "seismograms.sgy" run.log && ok "the summary names the SEG-Y file" || bad "summary: $(tail -1 run.log)"
# a SEG-Y rev 1 file: 3600 header bytes, then per trace 240 + 4 * samples
ns=$("$HS_BIN" compare seismograms.$EXT seismograms.$EXT p 2>/dev/null | sed -E 's/p: ([0-9]+) values.*/\1/')
size=$(stat -c %s seismograms.sgy)
if [ -n "$ns" ] && [ "$size" = $((3600 + 12 * 240 + 4 * ns)) ]; then ok "SEG-Y size: 3600 + 12 x 240 + 4 x $ns values"; else bad "SEG-Y size $size for $ns values"; fi

# ---- a wavelet centred far past the end is silent: a^2 tau^2 overflowed while exp(-a tau^2) was 0,
# and inf * 0 filled the field with NaN (delay = 1e300: exit 1 "p is -nan")
if "$HS_BIN" run shot.ini -q seismic.delay=1e300 output.path=late seismic.seismograms=latesg >late.log 2>&1 &&
    "$HS_BIN" summary latesg.$EXT >late.txt 2>&1 && grep -Eq '^  p +min 0 +max 0 ' late.txt; then
    ok "a wavelet centred at 1e300 s: a quiet run, seismograms of zeros"
else bad "delay = 1e300: $(grep -m1 -E 'error|^  p ' late.log late.txt)"; fi

# ---- a receiver line leaving the model through its end (given on the command line): the error names
# the end's key and the command line, whichever receiver is found outside first
# check_refuses WHAT OVERRIDE PATTERN: `check shot.ini OVERRIDE` exits 2 with an error matching PATTERN
check_refuses() {
    "$HS_BIN" check shot.ini "$2" >refuse.log 2>&1
    local rc=$?
    if [ $rc = 2 ] && grep -q "$3" refuse.log; then ok "$1"; else bad "$1: exit $rc: $(head -2 refuse.log)"; fi
}
check_refuses "a receiver line ending below the model: exit 2, the command line's receiver_end named" \
    seismic.receiver_end="760.3 1200" "error: command line (override 1): seismic.receiver_end: receiver [0-9]* .*outside the model: z must be in \[0, 600\] m"
check_refuses "a receiver line starting outside the model: exit 2, receiver_start named" \
    seismic.receiver_start="-50 150" "error: command line (override 1): seismic.receiver_start: receiver 1 "
# a line of one receiver sits at receiver_start: an end given with it was ignored without a word
check_refuses "a line of one receiver with an end: receiver_end named" \
    seismic.receiver_count=1 "error: shot.ini:[0-9]*: seismic.receiver_end: is set, but receiver_count = 1: a line of one receiver sits at receiver_start"
# the solver's own checks name the argument as the parser's do (its number among the overrides)
"$HS_BIN" check shot.ini seismic.receiver_count=5 seismic.receiver_end="760.3 1200" >refuse.log 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "error: command line (override 2): seismic.receiver_end: " refuse.log; then ok "the second override named as such: override 2"
else bad "second override: exit $rc: $(head -2 refuse.log)"; fi

# ---- the files read by real clients: CF essentials and cfchecks (check_output.py skips what is missing)
if [ $HAVE_NC = 1 ] && command -v python3 >/dev/null; then
    for f in seismograms.nc snap.nc; do
        if python3 "$ROOT/scripts/check_output.py" "$f" >check.txt 2>&1; then
            ok "check_output.py $f: $(grep '^ok' check.txt | sed 's/^ok *//' | tr '\n' ';' | cut -c1-110)"
        else
            bad "check_output.py $f: $(grep -v '^ok' check.txt | head -3)"
        fi
    done
    # depth is CF's vertical coordinate positive down (plots put the surface on top; it was axis Y)
    h=$(ncdump -h snap.nc)
    grep -q 'z:positive = "down"' <<<"$h" && grep -q 'z:axis = "Z"' <<<"$h" && ok "snapshots: z is the vertical axis, positive down" ||
        bad "snapshots' z: $(grep 'z:' <<<"$h" | tr '\n' ' ')"
fi

# ---- reciprocity at an elastic free surface: the x velocity at B from an x force at A equals the x
# velocity at A from the x force at B, with A on the surface row and between rows.  The surface
# points are the equations of half a cell: a force there counts twice (it came out at half
# strength: the ratio was 0.50 on the surface, 0.70 at 2.5 m, one spacing 5 m)
cat > recip.ini <<EOF
[run]
solver = seismic
device = $DEVICE
allow_shared_gpu = true
[seismic]
model = elastic
ndim = 2
n = 161 101
spacing = 5
t_end = 0.5
precision = float64
medium = layered
layer_depths = 100.3 233
layer_vp = 1800 3000 4000
layer_vs = 900 1700 2300
layer_rho = 1900 2300 2600
free_surface = true
source_type = force
force = 1 0
f0 = 12
receivers = file
segy = false
[output]
format = none
EOF
echo "B 520.7 143.3" > recB.txt
for za in 0 2.5; do
    echo "A 300 $za" > recA.txt
    "$HS_BIN" run recip.ini --quiet seismic.source_position="300 $za" seismic.receiver_file=recB.txt seismic.seismograms=AxB >/dev/null 2>&1
    "$HS_BIN" run recip.ini --quiet seismic.source_position="520.7 143.3" seismic.receiver_file=recA.txt seismic.seismograms=BxA >/dev/null 2>&1
    if "$HS_BIN" compare AxB.$EXT BxA.$EXT vx 0.03 >cmp.log 2>&1; then ok "free-surface reciprocity, x force at depth $za m: $(cut -d, -f3- cmp.log)"
    else bad "free-surface reciprocity, x force at depth $za m: $(cat cmp.log)"; fi
done

# ---- density contrasts: the time step follows the Gershgorin bound of the staggered operator, not
# vmax alone (an elastic model with 30 times the density above an interface blew up at step 1857 of
# 2578 at the default cfl; the variable-density acoustic step was 2.5 times smaller than needed at a
# tenfold contrast).  At cfl = 1, the bound itself, 3 s of propagation (thousands of steps) stay finite
cat > dens.ini <<EOF
[run]
solver = seismic
device = $DEVICE
allow_shared_gpu = true
[seismic]
model = elastic
ndim = 2
n = 61 61
spacing = 10
t_end = 3
cfl = 1
medium = layered
layer_depths = 300
layer_vp = 3000 3000
layer_vs = 1500 1500
layer_rho = 3000 100
source_position = 300 200
receiver_count = 2
receiver_start = 200 200
receiver_end = 400 200
segy = false
[output]
format = none
EOF
for case in "elastic 3000_100 4" "elastic 100_10000 4" "acoustic 3000_100 4" "acoustic 3000_100 8" "acoustic 100_1000 2"; do
    set -- $case
    extra=(seismic.model=$1 seismic.layer_rho="${2/_/ }" seismic.order=$3)
    [ $1 = acoustic ] && extra+=(seismic.density=variable seismic.source_type=explosive)
    if "$HS_BIN" run dens.ini -q "${extra[@]}" seismic.seismograms=dens >"$CAP/o" 2>&1; then
        ok "density contrast $2, $1 order $3, cfl 1: $(grep -o '[0-9]* steps of [^)]*)' "$CAP/o") stay finite"
    else bad "density contrast $2, $1 order $3: $(grep -m1 error "$CAP/o")"; fi
done

# ---- receiver files: a comment longer than any buffer is one line (a 5000-character comment was
# read in pieces, its tail taken for receivers: exit 1); a name used twice, counting the names of
# unnamed receivers (R and their number), is refused by check as by run before any step
{ printf 'A 300 250 # %s 310 250\n' "$(head -c 5000 /dev/zero | tr '\0' x)"; echo "B 320 250"; } > longrec.txt
if "$HS_BIN" run shot.ini seismic.receivers=file seismic.receiver_file=longrec.txt seismic.t_end=0.01 output.format=none \
    seismic.seismograms=longsg >"$CAP/o" 2>&1 && grep -q " 2 receivers" "$CAP/o"; then
    ok "a receiver file with a 5000-character comment: 2 receivers"
else bad "long comment line: $(grep -m1 -E 'error|receivers' "$CAP/o")"; fi
# a CR that no LF follows ends a line, as in parameter files (a bare-CR file was one line: its first
# comment hid every receiver, "lists no receivers"): the same seismograms as the file with LF ends,
# and an error names its line
printf '# survey\rA 300 250\rB 320 250\r' > crrec.txt
printf '# survey\nA 300 250\nB 320 250\n' > lfrec.txt
"$HS_BIN" run shot.ini -q seismic.receivers=file seismic.receiver_file=lfrec.txt seismic.t_end=0.05 output.format=none seismic.seismograms=lfsg >/dev/null 2>&1
if "$HS_BIN" run shot.ini -q seismic.receivers=file seismic.receiver_file=crrec.txt seismic.t_end=0.05 output.format=none \
    seismic.seismograms=crsg >"$CAP/o" 2>&1 && "$HS_BIN" compare lfsg.$EXT crsg.$EXT p 0 >cmp.log 2>&1; then
    ok "a receiver file with bare-CR line ends: the seismograms of its LF twin"
else bad "bare-CR receiver file: $(cat "$CAP/o" cmp.log | grep -m1 -E 'error|differ|values')"; fi
printf 'A 300 250\rB 320 250\rC 330\r' > crbad.txt
"$HS_BIN" check shot.ini seismic.receivers=file seismic.receiver_file=crbad.txt >"$CAP/o" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "crbad.txt:3: coordinate 'C' is not a number" "$CAP/o" &&
    ok "a bare-CR receiver file's bad line is named by its number" || bad "bare-CR bad line: exit $rc: $(grep -m1 error "$CAP/o")"
printf 'R00002 300 250\n310 250\n' > duprec.txt
for cmd in check run; do
    "$HS_BIN" $cmd shot.ini seismic.receivers=file seismic.receiver_file=duprec.txt output.path=dupsnap seismic.seismograms=dupsg >"$CAP/o" 2>&1
    rc=$?
    if [ $rc = 2 ] && grep -q "duprec.txt:2: receiver name 'R00002' is used twice (line 1" "$CAP/o" && ! ls dupsnap* dupsg* >/dev/null 2>&1; then
        ok "$cmd: an unnamed receiver's name given to another: exit 2, nothing written"
    else bad "$cmd, duplicate receiver name: exit $rc: $(grep -m1 error "$CAP/o")"; fi
done

# ---- an elastic model file with a fluid region (vs = 0 in the top rows): the points per wavelength
# take the slowest wave there, the fluid's P (it was refused as "0 points per minimum wavelength")
if python3 -c "import numpy" 2>/dev/null; then
    python3 -c "
import numpy as np
vp = np.full((61, 91), 2000, '<f4'); vs = np.full((61, 91), 1100, '<f4'); vp[:15] = 900; vs[:15] = 0
vp.tofile('fl_vp.raw'); vs.tofile('fl_vs.raw')"
    if "$HS_BIN" run shot.ini seismic.model=elastic seismic.medium=file seismic.model_file=fl_vp.raw seismic.vs_file=fl_vs.raw \
        seismic.model_format=raw_float32 seismic.t_end=0.05 output.format=none seismic.seismograms=flsg >"$CAP/o" 2>&1 &&
        grep -q "P (where vs = 0) speed 900" "$CAP/o"; then ok "elastic model with a fluid layer runs: $(grep -o '[0-9.]* points per minimum wavelength (P[^,]*' "$CAP/o" | head -1)"
    else bad "elastic model with a fluid layer: $(grep -m1 -E 'error|points per' "$CAP/o")"; fi
    # the same water over rock as layers (a layer of vs = 0 was refused, the file's fluid points not):
    # the same seismograms bitwise; every layer fluid is refused (that is the acoustic model)
    rho=$("$HS_BIN" check shot.ini | sed -n 's/^rho = \([0-9.e+]*\) .*/\1/p')
    if "$HS_BIN" run shot.ini seismic.model=elastic seismic.medium=layered seismic.layer_depths=145 "seismic.layer_vp=900 2000" \
        "seismic.layer_vs=0 1100" "seismic.layer_rho=$rho $rho" seismic.t_end=0.05 output.format=none seismic.seismograms=flly >"$CAP/o" 2>&1 &&
        "$HS_BIN" compare flsg.$EXT flly.$EXT vz 0 >"$CAP/c" 2>&1; then ok "a fluid layer (layer_vs = 0) gives the fluid file model's seismograms bitwise"
    else bad "fluid layer: $(grep -m1 error "$CAP/o") $(tail -1 "$CAP/c")"; fi
    "$HS_BIN" check shot.ini seismic.model=elastic seismic.medium=layered seismic.layer_depths=145 "seismic.layer_vp=900 2000" \
        "seismic.layer_vs=0 0" >"$CAP/o" 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "seismic.layer_vs: every layer is a fluid (vs = 0): use seismic.model = acoustic" "$CAP/o" && ok "every layer fluid: refused" ||
        bad "all-fluid layers: exit $rc: $(grep -m1 error "$CAP/o")"
else echo "skip the fluid layer case: no numpy"; fi

# ---- snapshots decimated in space: every 3rd point of the full-resolution snapshot
"$HS_BIN" run shot.ini -q seismic.snapshot_stride=3 output.path=snap3 seismic.seismograms=none >/dev/null 2>&1
cat > decim.py <<'PY'
import netCDF4, numpy as np, sys
a = netCDF4.Dataset("snap.nc"); b = netCDF4.Dataset("snap3.nc")
pa, pb = a["p"][:], b["p"][:]
ok = pb.shape == (pa.shape[0], 21, 31) and np.array_equal(np.asarray(pa[:, ::3, ::3], np.float32), np.asarray(pb, np.float32))
ok = ok and np.allclose(b["x"][:], np.arange(31) * 30.0) and np.allclose(b["z"][:], np.arange(21) * 30.0)
ok = ok and b["vp"].shape == (21, 31)
sys.exit(0 if ok else 1)
PY
if [ $HAVE_PY = 1 ]; then
    if python3 decim.py; then ok "snapshot_stride = 3 keeps every 3rd point (31 x 21) of the full snapshots"; else bad "decimated snapshots"; fi
else
    echo "skip decimated snapshots (no python3 netCDF4)"
fi

# ---- a restart continues bitwise: stop at step 150 with a checkpoint, continue, compare
"$HS_BIN" run shot.ini -q output.format=none seismic.seismograms=full >/dev/null 2>&1
"$HS_BIN" run shot.ini -q output.format=none seismic.seismograms=part checkpoint.every_steps=150 checkpoint.path=ck.h5 \
    run.max_steps=150 >/dev/null 2>&1
if "$HS_BIN" run shot.ini -q output.format=none seismic.seismograms=part --restart ck.h5 >restart.log 2>&1 &&
    "$HS_BIN" compare full.$EXT part.$EXT p 0 >cmp.log 2>&1; then
    ok "restart from step 150: seismograms bitwise equal to the uninterrupted run"
else
    bad "restart: $(cat restart.log cmp.log | tail -3)"
fi

# ---- elastic snapshots: each velocity on its own staggered points (vx on x_half = x + h/2, vz on
# z_half; they were labelled at the points, half a spacing off: tests/verify/test_seismic_elastic.c
# checks the values against the exact solution), at the record's time; writing them changes no
# trace; a stop and restart continues the file bitwise (its extra grids too); 2 ranks write the same
E=(-q seismic.model=elastic seismic.vs=1200 seismic.source_type=force "seismic.force=1 1" seismic.free_surface=true
   seismic.source_position="447 100" output.every_steps=40)
"$HS_BIN" run shot.ini "${E[@]}" output.format=none seismic.seismograms=el0 >/dev/null 2>&1
"$HS_BIN" run shot.ini "${E[@]}" output.path=elsnap seismic.seismograms=el1 >/dev/null 2>&1
"$HS_BIN" compare el0.$EXT el1.$EXT vx >/dev/null 2>&1 && "$HS_BIN" compare el0.$EXT el1.$EXT vz >/dev/null 2>&1 &&
    ok "elastic: the seismograms with snapshots every 40 steps are bitwise those without" || bad "elastic: snapshots change the seismograms"
HS_TEST_SIGNAL_AT_STEP=150 "$HS_BIN" run shot.ini "${E[@]}" output.path=elpart seismic.seismograms=el2 checkpoint.path=elck.h5 >/dev/null 2>&1
rc=$?
"$HS_BIN" run shot.ini "${E[@]}" output.path=elpart seismic.seismograms=el2 checkpoint.path=elck.h5 --restart elck.h5 >/dev/null 2>&1
if [ $rc = 3 ] && "$HS_BIN" compare --all elsnap.$EXT elpart.$EXT >"$CAP/o" 2>&1 && "$HS_BIN" compare el1.$EXT el2.$EXT vz >/dev/null 2>&1; then
    ok "elastic snapshots stopped at step 150 and restarted: the file (x_half, z_half and all) bitwise the uninterrupted one"
else
    bad "elastic snapshot restart: exit $rc, $(grep -v agree "$CAP/o" | head -2)"
fi
if [ $HAVE_MPI = 1 ]; then
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${E[@]}" output.path=elmpi seismic.seismograms=el3 >/dev/null 2>&1
    "$HS_BIN" compare --all elsnap.$EXT elmpi.$EXT >"$CAP/o" 2>&1 && ok "elastic snapshots on 2 ranks: bitwise the 1-rank file" ||
        bad "elastic snapshots on 2 ranks: $(grep -v agree "$CAP/o" | head -2)"
fi
# the memory check counts the elastic snapshots' buffers: the velocities at the record's time,
# computed on the side at each record (saved velocities and CPML memory on the device, the written
# arrays on the host); its figure was the same with snapshots as without, so check passed runs whose
# records could not get them.  On the CPU path (the two memories add up), with the check's figures
# shown by HS_TEST_MEMORY_BYTES=1: snapshots add at least 2 device copies and 2 host arrays of the
# points (32 bytes a point in float64), at most the copies of the allocation (halo 4) with 25 % row
# padding, the host arrays and the CPML memory of the 4 derivatives on every point within pml + 5 of
# a face, with the writer's gather on rank 0 (the grid and a block in float32, the coordinates) and,
# where the build writes NetCDF through rank 0 (no +netcdf_parallel), the library's cache of 16 MiB
# for each of the 4 variables and a record's copy.  With what the run without snapshots needs
# available (its figure, rounded to a byte, plus one), check passes it and refuses the one with
# snapshots.
M=(seismic.model=elastic seismic.vs=1200 "seismic.n=200 100" run.device=cpu)
need() { HS_TEST_MEMORY_BYTES=1 "$HS_BIN" check shot.ini "${M[@]}" "$@" 2>&1 |
    sed -nE 's/.*seismic.n: the run needs .* GB \(([0-9]+) bytes\) of host memory on the busiest rank.*/\1/p'; }
none=$(need output.format=none)
if python3 - "$none" "$(need)" "$("$HS_BIN" --version)" >"$CAP/o" 2>&1 <<'PY'
import sys
none, snap, features = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
n0, n1, hw, pml, margin = 200, 100, 4, 12, 5
pts, alloc = n0 * n1, (n0 + 2 * hw) * (n1 + 2 * hw)
slab = pts - (n0 - 2 * (pml + margin)) * (n1 - 2 * (pml + margin))
lo, hi = (2 * 8 + 2 * 8) * pts, 2 * 8 * 1.25 * alloc + 2 * 8 * pts + 4 * 8 * slab
hi += 2 * 4 * pts + 4 * 8 * (n0 + n1 + 4)
if "+netcdf " in features + " " and "+netcdf_parallel" not in features:
    hi += 4 * 16 * 2**20 + 4 * pts
print(f"{snap - none} bytes more with snapshots on 200 x 100 ({lo} to {hi:.0f} expected)")
sys.exit(0 if lo <= snap - none <= hi else 1)
PY
then ok "memory check: elastic snapshots counted, $(cat "$CAP/o")"; else bad "memory check with elastic snapshots: $(cat "$CAP/o")"; fi
HS_TEST_MEMORY_BYTES=$((none + 1)) "$HS_BIN" check shot.ini "${M[@]}" output.format=none >"$CAP/o" 2>&1
rc_none=$?
HS_TEST_MEMORY_BYTES=$((none + 1)) "$HS_BIN" check shot.ini "${M[@]}" >"$CAP/o" 2>&1
rc_snap=$?
if [ $rc_none = 0 ] && [ $rc_snap = 2 ] && grep -q "error: command line (override 3): seismic.n: the run needs .* of host memory on the busiest rank, .* are available; use more ranks or a smaller grid" "$CAP/o"; then
    ok "memory check: $((none + 1)) bytes available pass the run without snapshots and refuse it with them (exit 2)"
else bad "memory check at the snapshot-less figure: exit $rc_none without snapshots, $rc_snap with: $(grep error "$CAP/o")"; fi
if [ $HAVE_NC = 1 ] && [ $EXT = nc ]; then
    h=$(ncdump -h elsnap.nc)
    if grep -q "float vx(time, z, x_half)" <<<"$h" && grep -q "float vz(time, z_half, x)" <<<"$h" && grep -q 'z_half:positive = "down"' <<<"$h" &&
        grep -q "x_half:c_grid_axis_shift = 0.5" <<<"$h" && [ "$(ncdump -v x_half elsnap.nc | sed -nE 's/^ x_half = ([0-9.]+), ([0-9.]+),.*/\1 \2/p')" = "5 15" ]; then
        ok "elastic snapshots: vx(time, z, x_half), vz(time, z_half, x), x_half = 5, 15, ... m"
    else
        bad "elastic snapshot layout: $(grep -E 'vx\(|vz\(' <<<"$h" | tr '\n' ' ')"
    fi
    if command -v python3 >/dev/null; then
        python3 "$ROOT/scripts/check_output.py" elsnap.nc >check.txt 2>&1 && ok "check_output.py elsnap.nc: $(grep '^ok' check.txt | sed 's/^ok *//' | tr '\n' ';' | cut -c1-110)" ||
            bad "check_output.py elsnap.nc: $(grep -v '^ok' check.txt | head -3)"
    fi
fi

# ---- a packed NetCDF model (CF: int16 values times scale_factor plus add_offset) reads as its
# unpacked speeds (it was read packed: 1000 m/s for 2000): the same seismograms as the constant model
if [ $HAVE_PY = 1 ]; then
    python3 -c "
import netCDF4, numpy as np
with netCDF4.Dataset('packed.nc', 'w') as f:
    f.createDimension('z', 61); f.createDimension('x', 91)
    v = f.createVariable('vp', 'i2', ('z', 'x')); v.set_auto_maskandscale(False)
    v.scale_factor = 4.0; v.add_offset = 1000.0; v[:] = np.full((61, 91), 250, 'i2')"
    "$HS_BIN" run shot.ini -q output.format=none seismic.vp=2000 seismic.seismograms=const >/dev/null 2>&1
    if "$HS_BIN" run shot.ini -q output.format=none seismic.medium=file seismic.model_file=packed.nc seismic.seismograms=packedsg >"$CAP/o" 2>&1 &&
        "$HS_BIN" compare const.$EXT packedsg.$EXT p 0 >cmp.log 2>&1; then ok "packed NetCDF model (int16, scale_factor, add_offset): seismograms bitwise those of vp = 2000"
    else bad "packed NetCDF model: $(cat "$CAP/o" cmp.log | grep -m2 -E 'error|differ|values')"; fi
    # bytes under _Unsigned = "true" (NetCDF-3 has no unsigned types): stored -56 is 200, times 10
    python3 -c "
import netCDF4, numpy as np
with netCDF4.Dataset('packed_u.nc', 'w', format='NETCDF3_CLASSIC') as f:
    f.createDimension('z', 61); f.createDimension('x', 91)
    v = f.createVariable('vp', 'i1', ('z', 'x')); v.set_auto_maskandscale(False)
    v._Unsigned = 'true'; v.scale_factor = 10.0; v[:] = np.full((61, 91), -56, 'i1')"
    if "$HS_BIN" run shot.ini -q output.format=none seismic.medium=file seismic.model_file=packed_u.nc seismic.seismograms=packedu >"$CAP/o" 2>&1 &&
        "$HS_BIN" compare const.$EXT packedu.$EXT p 0 >cmp.log 2>&1; then ok "unsigned packed bytes (_Unsigned = true): seismograms bitwise those of vp = 2000"
    else bad "unsigned packed model: $(cat "$CAP/o" cmp.log | grep -m2 -E 'error|differ|values')"; fi
    # a model whose file names its axes: stored (x, z) on a square grid it was read transposed (exit 0);
    # a coordinate stepping 5 m on a 10 m grid ran on the 10 m grid; (z, x) with 10 m coordinates reads
    python3 -c "
import netCDF4, numpy as np
for name, dims, step in [('m_xz.nc', ('x', 'z'), 10.0), ('m_zx.nc', ('z', 'x'), 10.0), ('m_5m.nc', ('z', 'x'), 5.0)]:
    with netCDF4.Dataset(name, 'w') as f:
        for dn in dims:
            f.createDimension(dn, 61); c = f.createVariable(dn, 'f8', (dn,)); c[:] = np.arange(61) * step; c.units = 'm'
        v = f.createVariable('vp', 'f4', dims); a = 1500 + 20 * np.arange(61)
        v[:] = np.tile(a[:, None], (1, 61)) if dims[0] == 'z' else np.tile(a[None, :], (61, 1))
with netCDF4.Dataset('m_5m.nc') as g, netCDF4.Dataset('m_nan.nc', 'w') as f:
    for dn in ('z', 'x'):
        f.createDimension(dn, 61); c = f.createVariable(dn, 'f8', (dn,)); c[:] = np.arange(61) * 10.0
    f['z'][7] = np.nan; f.createVariable('vp', 'f4', ('z', 'x'))[:] = g['vp'][:]
# heights (CF positive = up), the bottom row first: it ran upside down (the fast rows at the surface)
with netCDF4.Dataset('m_zx.nc') as g, netCDF4.Dataset('m_up.nc', 'w') as f:
    for dn in ('z', 'x'):
        f.createDimension(dn, 61); c = f.createVariable(dn, 'f8', (dn,)); c[:] = np.arange(61) * 10.0; c.units = 'm'
    f['z'][:] = -600 + np.arange(61) * 10.0; f['z'].positive = 'up'; f.createVariable('vp', 'f4', ('z', 'x'))[:] = g['vp'][::-1]"
    SQ=(seismic.medium=file seismic.n="61 61" seismic.source_position="300 300" seismic.receiver_start="200 200" seismic.receiver_end="400 400"
        seismic.t_end=0.05 output.format=none seismic.seismograms=sq)
    for m in "m_xz.nc:seismic.model_file: variable 'vp' in 'm_xz.nc' has dimensions (x, z): the model is read (z, x), x fastest" \
             "m_5m.nc:seismic.spacing: the model file 'm_5m.nc' steps its coordinate 'z' by 5 m (from index 0 to 1); the grid's spacing there is 10 m" \
             "m_nan.nc:seismic.spacing: the model file 'm_nan.nc' steps its coordinate 'z' by nan m (from index 6 to 7)" \
             "m_up.nc:seismic.model_file: variable 'vp' in 'm_up.nc': its vertical coordinate 'z' is a height (positive = \"up\")"; do
        for cmd in check run; do
            "$HS_BIN" $cmd shot.ini -q "${SQ[@]}" seismic.model_file=${m%%:*} >"$CAP/o" 2>&1; rc=$?
            [ $rc = 2 ] && grep -qF "${m#*:}" "$CAP/o" && ! ls sq.* >/dev/null 2>&1 && ok "$cmd: model ${m%%:*} refused" || bad "$cmd: model ${m%%:*}: exit $rc: $(grep -m1 error "$CAP/o")"
        done
    done
    "$HS_BIN" run shot.ini -q "${SQ[@]}" seismic.model_file=m_zx.nc >"$CAP/o" 2>&1 && ok "model stored (z, x) with 10 m coordinates: runs" || bad "model (z, x): $(grep -m1 error "$CAP/o")"
    rm -f sq.*
fi

# ---- a receiver file's 3 numbers in a 2D run are a 3D survey's x y z, not receiver '300' at (0, 250)
# (read so, in the absorbing layer, exit 0); a t_end beyond what the steps can count (1e17 s: the
# count overflowed to 0 steps, no seismograms, exit 0); a sample interval above SEG-Y's names
# record_every when it was given (it blamed dt, 'not a whole number')
# A NUL in a receiver file (strtok took it for the line's end: the receiver was dropped without a
# word); checkpoints written over the seismograms or the SEG-Y file (accepted: the restart then found
# no checkpoint); a grid far beyond memory (its model's extents visited 1e12 points for hours before
# the memory check)
printf '300 0 250\n400 0 250\n' > rec3.txt
printf 'A 300 250\n\000 320 250\nC 330 250\n' > recnul.txt
mkdir -p adir
for c in "seismic.receivers=file seismic.receiver_file=rec3.txt|seismic.receiver_file: rec3.txt:1: 3 numbers where a 2D run reads '[name] x z'" \
         "seismic.receivers=file seismic.receiver_file=recnul.txt|seismic.receiver_file: recnul.txt:2: binary data (byte 0x00)" \
         "checkpoint.every_steps=10 checkpoint.path=neversg.$EXT|checkpoint.path: neversg.$EXT is also the seismogram file" \
         "checkpoint.every_steps=10 checkpoint.path=neversg.sgy|checkpoint.path: neversg.sgy is also the SEG-Y file" \
         "seismic.n=1000000|seismic.n: the run (its wavefields alone) needs" \
         "seismic.receivers=file seismic.receiver_file=adir|seismic.receiver_file: receiver file adir is not a regular file (a directory)" \
         "seismic.medium=file seismic.model_file=adir seismic.model_format=raw_float32|seismic.model_file: model file adir is not a regular file (a directory)" \
         "seismic.medium=file seismic.model_file=nope.raw seismic.model_format=raw_float32|seismic.model_file: cannot open model file nope.raw: No such file or directory" \
         "seismic.t_end=1e17|seismic.t_end: 1e+17 s takes" \
         "seismic.vp=1e300|seismic.vp: the model's fastest wave (1e+300 m/s) allows a step of 0 s" \
         "seismic.record_every=1000|seismic.record_every: the sample interval dt x record_every ="; do
    for cmd in check run; do
        # shellcheck disable=SC2086
        "$HS_BIN" $cmd shot.ini -q ${c%%|*} output.path=never seismic.seismograms=neversg >"$CAP/o" 2>&1; rc=$?
        [ $rc = 2 ] && grep -qF "${c#*|}" "$CAP/o" && ! ls never* >/dev/null 2>&1 && ok "$cmd ${c%%|*}: refused" || bad "$cmd ${c%%|*}: exit $rc: $(grep -m1 error "$CAP/o")"
    done
done
# ---- keys the run would ignore are bad input (each ran without a word, exit 0): the anomaly's shape
# without an anomaly, observed seismograms and the adjoint's slots in a forward run, vs (and the other
# S-wave keys) for the acoustic model, vp beside a layered model, any density key for the
# constant-density acoustic model, density for the elastic model, cfl beside a given dt,
# pml_reflection without layers, segy without seismograms, snapshot_stride without snapshots; a
# leftover of the file under a setting switched on the command line passes
for c in "seismic.anomaly_dvp=100|seismic.anomaly_dvp: is not used with seismic.anomaly = none" \
         "seismic.observed=obs.nc|seismic.observed: is not used with seismic.mode = forward" \
         "seismic.snapshots=4|seismic.snapshots: is not used with seismic.mode = forward" \
         "seismic.vs=1500|seismic.vs: is not used with seismic.model = acoustic" \
         "seismic.layer_vs=1000|seismic.layer_vs: is not used with seismic.model = acoustic" \
         "seismic.medium=layered seismic.vp=2500|seismic.vp: is not used with seismic.medium = layered" \
         "seismic.rho=1000|seismic.rho: is not used with seismic.density = constant" \
         "seismic.model=elastic seismic.density=variable|seismic.density: is not used with seismic.model = elastic" \
         "seismic.dt=0.001 seismic.cfl=0.5|seismic.cfl: is not used with seismic.dt = 0.001" \
         "seismic.pml=0 seismic.pml_reflection=0.001|seismic.pml_reflection: is not used with seismic.pml = 0" \
         "seismic.seismograms=none seismic.segy=false|seismic.segy: is not used with seismic.seismograms = none" \
         "output.format=none seismic.snapshot_stride=2|seismic.snapshot_stride: is not used with output.format = none"; do
    for cmd in check run; do
        # shellcheck disable=SC2086
        "$HS_BIN" $cmd shot.ini -q output.path=never seismic.seismograms=neversg ${c%%|*} >"$CAP/o" 2>&1; rc=$?
        [ $rc = 2 ] && grep -qF "${c#*|}" "$CAP/o" && ! ls never* >/dev/null 2>&1 && ok "$cmd ${c%%|*}: refused (not used)" ||
            bad "$cmd ${c%%|*}: exit $rc: $(grep -m1 error "$CAP/o")"
    done
done
sed 's/^\[seismic\]$/[seismic]\nanomaly = disc\nanomaly_dvp = 120\nanomaly_center = 450 300/' shot.ini >anom.ini
if "$HS_BIN" check anom.ini seismic.anomaly=none >"$CAP/o" 2>&1 && ! "$HS_BIN" check anom.ini seismic.anomaly=none seismic.anomaly_radius=50 >/dev/null 2>&1; then
    ok "the anomaly's keys in the file under anomaly = none on the command line pass (a leftover), one on the command line does not"
else
    bad "anomaly leftovers: $(grep -m1 error "$CAP/o")"
fi
# an anomaly that changes no grid point's vp ran as the model without it, exit 0: a disc of 0 m/s,
# one centred outside the model, one narrower than the spacing between the points around its centre;
# a disc that lowers vp below vs sqrt(4/3) names anomaly_dvp (it named seismic.vs, "default value")
for c in "seismic.anomaly_dvp=0|seismic.anomaly_dvp: a disc of 0 m/s changes nothing" \
         "seismic.anomaly_center=5000,300|seismic.anomaly_center: the disc (centre 5000 300 m, radius 100 m) holds no grid point (its centre is outside the model)" \
         "seismic.anomaly_center=455,305 seismic.anomaly_radius=7|seismic.anomaly_radius: the disc (centre 455 305 m, radius 7 m) holds no grid point (its radius is below" \
         "seismic.model=elastic seismic.anomaly_dvp=-1000|seismic.anomaly_dvp: vs = 1000 against vp ="; do
    for cmd in check run; do
        # shellcheck disable=SC2086
        "$HS_BIN" $cmd anom.ini -q output.path=never seismic.seismograms=neversg seismic.anomaly=disc ${c%%|*} >"$CAP/o" 2>&1; rc=$?
        [ $rc = 2 ] && grep -qF "${c#*|}" "$CAP/o" && ! ls never* >/dev/null 2>&1 && ok "$cmd anomaly ${c%%|*}: refused" ||
            bad "$cmd anomaly ${c%%|*}: exit $rc: $(grep -m1 error "$CAP/o")"
    done
done
"$HS_BIN" check anom.ini -q seismic.anomaly_center=455,305 seismic.anomaly_radius=7.1 >"$CAP/o" 2>&1 &&
    ok "an anomaly reaching one grid point is accepted" || bad "anomaly of radius 7.1 at 5 m from 4 points: $(grep -m1 error "$CAP/o")"
# a density beside a model file that has its own
if "$HS_BIN" check "$ROOT/inputs/seismic_salt.ini" seismic.rho=1000 >"$CAP/o" 2>&1; then bad "seismic.rho beside the salt model's own density: accepted"
else grep -qF "seismic.rho: is not used: the model file" "$CAP/o" && ok "seismic.rho beside a model file with its own density: refused" ||
    bad "seismic.rho beside the salt model: $(grep -m1 error "$CAP/o")"; fi
# a zero moment tensor radiates nothing (all-zero traces, exit 0), as a zero force
for cmd in check run; do
    "$HS_BIN" $cmd shot.ini -q seismic.model=elastic seismic.vs=1200 seismic.source_type=moment "seismic.moment=0 0 0" output.path=never \
        seismic.seismograms=neversg >"$CAP/o" 2>&1; rc=$?
    [ $rc = 2 ] && grep -qF "seismic.moment: the moment tensor must not be zero" "$CAP/o" && ! ls never* >/dev/null 2>&1 && ok "$cmd: zero moment tensor refused" ||
        bad "$cmd: zero moment: exit $rc: $(grep -m1 error "$CAP/o")"
done
# a pressure source on an acoustic free surface, where p = 0, radiates nothing (all-zero traces, exit
# 0): refused, by check as by run; hydrophones there record p = 0 (the image method's zero): said
for cmd in check run; do
    "$HS_BIN" $cmd shot.ini -q seismic.free_surface=true "seismic.source_position=447 0" output.path=never \
        seismic.seismograms=neversg >"$CAP/o" 2>&1; rc=$?
    [ $rc = 2 ] && grep -qF "seismic.source_position: the source z = 0 m lies on the free surface" "$CAP/o" && ! ls never* >/dev/null 2>&1 &&
        ok "$cmd: an acoustic source on the free surface refused" || bad "$cmd: source on the free surface: exit $rc: $(grep -m1 error "$CAP/o")"
done
"$HS_BIN" check shot.ini -q seismic.free_surface=true "seismic.receiver_start=140.5 0" "seismic.receiver_end=760.3 0" >"$CAP/o" 2>&1
[ "$(grep -c "warning: seismic: 12 of 12 receivers lie on the free surface (z = 0), the first R00001" "$CAP/o")" = 1 ] &&
    ok "receivers on an acoustic free surface are warned of" || bad "receivers on the free surface: $(grep -i warning "$CAP/o")"
# receivers in the absorbing layer are said (one recorded 0.62 of the true peak), once, with the count
"$HS_BIN" check shot.ini -q "seismic.receiver_start=50 100" >"$CAP/o" 2>&1
[ "$(grep -c "warning: seismic: 2 of 12 receivers lie in the CPML layer (the 12 points next to each absorbing face), the first R00001" "$CAP/o")" = 1 ] && ok "a receiver in the CPML layer is warned of" ||
    bad "receiver in the CPML: $(grep -i warning "$CAP/o")"
# an elastic run with t_end = 0 writes its one quiet sample (it wrote nothing and left a previous run's
# seismograms under its names)
rm -f el0*
if "$HS_BIN" run shot.ini -q seismic.model=elastic seismic.vs=1200 seismic.f0=5 seismic.t_end=0 output.format=none seismic.seismograms=el0 >"$CAP/o" 2>&1 &&
    ls el0.$EXT el0_vx.sgy el0_vz.sgy >/dev/null 2>&1; then ok "elastic t_end = 0: one-sample seismograms written"
else bad "elastic t_end = 0: $(ls el0* 2>&1) $(grep -m1 error "$CAP/o")"; fi

# ---- 1 and 2 ranks: the same seismograms (receivers straddling ranks sum their parts: round-off)
if [ $HAVE_MPI = 1 ]; then
    if "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini -q output.format=none seismic.seismograms=two >mpi.log 2>&1 &&
        "$HS_BIN" compare full.$EXT two.$EXT p 1e-12 >cmp.log 2>&1; then
        ok "2 ranks agree with 1 to 1e-12 ($(sed -E 's/.*\(([^ ]*) of max \|b\|\).*/\1/' cmp.log))"
    else
        bad "2 ranks: $(cat mpi.log cmp.log | tail -3)"
    fi
    # a bad medium seen by one rank only (the lower layer, on the second of 1 x 2 ranks): every rank
    # stops with rank 0's message, exit 2 (one rank used to return alone and the other wait forever)
    cat > badlayer.ini <<'EOI'
[run]
solver = seismic
[seismic]
model = elastic
ndim = 2
n = 101 101
spacing = 10
t_end = 0.05
medium = layered
layer_depths = 800
layer_vp = 2000 3000
layer_vs = 1000 2700
layer_rho = 2000 2300
source_position = 500 300
receiver_count = 3
receiver_start = 300 300
receiver_end = 700 300
procs = 1 2
[output]
path = badlayer
EOI
    timeout 60 "${MPIRUN[@]}" -n 2 "$HS_BIN" run badlayer.ini >bl.log 2>&1
    rc=$?
    if [ $rc = 2 ] && grep -q "badlayer.ini:12: seismic.layer_vs: vs = 2700 against vp = 3000 at grid point (0, 80, 0)" bl.log &&
        ! ls badlayer.* 2>/dev/null | grep -qv '\.ini$'; then
        ok "a bad layer on one rank of two: exit 2 with its file:line:key message, nothing written"
    else
        bad "bad layer on one rank: exit $rc: $(head -3 bl.log)"
    fi
fi

# ---- model files: the salt model from NetCDF, and the same samples as raw float32, run alike
if [ $HAVE_PY = 1 ]; then
    cp "$ROOT/inputs/seismic_salt.nc" .
    python3 -c "
import netCDF4, numpy as np
f = netCDF4.Dataset('seismic_salt.nc')
for v in ('vp', 'rho'):
    np.asarray(f[v][:], '<f4').tofile(v + '.bin')
"
    common=(seismic.n="301 151" seismic.medium=file seismic.density=variable seismic.order=4 seismic.t_end=0.1 seismic.free_surface=true
            seismic.source_position="1000 20" seismic.receiver_start="300 10" seismic.receiver_end="2700 10"
            seismic.receiver_count=25 seismic.f0=10 seismic.precision=float32 output.format=none)
    "$HS_BIN" run shot.ini -q "${common[@]}" seismic.model_file=seismic_salt.nc seismic.seismograms=nc_model >/dev/null 2>&1
    "$HS_BIN" run shot.ini -q "${common[@]}" seismic.model_file=vp.bin seismic.rho_file=rho.bin seismic.model_format=raw_float32 \
        seismic.seismograms=raw_model >raw.log 2>&1
    if "$HS_BIN" compare nc_model.nc raw_model.nc p 0 >cmp.log 2>&1; then
        ok "the salt model as NetCDF and as raw float32 gives bitwise the same seismograms"
    else
        bad "model files: $(cat raw.log cmp.log | tail -3)"
    fi
    if python3 -c "import h5py" 2>/dev/null && "$HS_BIN" --version | grep -q '+hdf5'; then
        python3 -c "
import h5py, netCDF4, numpy as np
f = netCDF4.Dataset('seismic_salt.nc')
with h5py.File('salt.h5', 'w') as h:
    for v in ('vp', 'rho'):
        h[v] = np.asarray(f[v][:], 'f4')
"
        "$HS_BIN" run shot.ini -q "${common[@]}" seismic.model_file=salt.h5 seismic.seismograms=h5_model >h5.log 2>&1
        if "$HS_BIN" compare nc_model.nc h5_model.nc p 0 >cmp.log 2>&1; then
            ok "the salt model as a plain HDF5 file (h5py) gives bitwise the same seismograms"
        else
            bad "HDF5 model: $(cat h5.log cmp.log | tail -3)"
        fi
    fi
else
    echo "skip model files (no python3 netCDF4)"
fi

# ---- too few points per wavelength: a warning with the number, the same from check and run
"$HS_BIN" check shot.ini seismic.f0=30 >check.out 2>check.err
rc_check=$?
"$HS_BIN" run shot.ini -q seismic.f0=30 output.format=none seismic.seismograms=none >run.out 2>run.err
rc_run=$?
w_check=$(grep -m1 "warning: seismic" check.err)
w_run=$(grep -m1 "warning: seismic" run.err)
if [ $rc_check = 0 ] && [ $rc_run = 0 ] && [ -n "$w_check" ] && [ "$w_check" = "$w_run" ] &&
    grep -q "2.41 points per minimum wavelength" <<<"$w_check"; then
    ok "f0 = 30 Hz: the same warning from check and run ($(sed -E 's/.*seismic: //' <<<"$w_check" | cut -c1-60)...)"
else
    bad "ppw warning: check $rc_check '$w_check', run $rc_run '$w_run'"
fi

# ---- the adjoint modes end to end: observed seismograms from a faster disc, the gradient field of the
# background model, and three L-BFGS iterations that lower the misfit
adj=(seismic.n="71 61" seismic.pml=12 seismic.dt=0.001 seismic.t_end=0.5 seismic.source_position="350 160"
     seismic.receiver_start="150 450" seismic.receiver_end="550 450" seismic.receiver_count=9 seismic.f0=10)
"$HS_BIN" run shot.ini -q "${adj[@]}" output.format=none seismic.anomaly=disc seismic.anomaly_center="350 300" \
    seismic.anomaly_radius=90 seismic.anomaly_dvp=150 seismic.seismograms=observed >/dev/null 2>&1
if "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=observed.$EXT seismic.seismograms=syn \
    output.path=grad seismic.snapshots=6 >grad.log 2>&1 && [ -s grad.$EXT ] && grep -q "seismic: misfit" grad.log; then
    ok "mode = gradient writes the gradient field ($(grep -m1 'seismic: misfit' grad.log | cut -c10-90)...)"
else
    bad "gradient: $(tail -3 grad.log)"
fi
if [ $HAVE_PY = 1 ]; then
    python3 -c "
import netCDF4, numpy as np, sys
f = netCDF4.Dataset('grad.nc'); g = np.asarray(f['gradient'][:]); vp = np.asarray(f['vp'][:])
# increasing vp inside the disc lowers the misfit: the gradient is negative there, zero in the CPML
sys.exit(0 if g.shape == (61, 71) and g[30, 35] < 0 and g[0, 0] == 0 and g[30, 2] == 0 and vp[30, 35] == 2000 else 1)
" && ok "the gradient is negative inside the faster disc and zero in the CPML" || bad "gradient field values"
fi
# the seismograms' file failing at the end (a full disk): exit 1, and the wavefield output is kept
# as .partial, not closed as finished (it said "finished" beside exit 1); needs a small tmpfs (root)
full=$(mktemp -d)
if [ $EXT = nc ] && mount -t tmpfs -o size=200k tmpfs "$full" 2>/dev/null; then
    dd if=/dev/zero of="$full/fill" bs=1k count=150 2>/dev/null
    "$HS_BIN" run shot.ini -q seismic.seismograms="$full/sg" output.path=fullrun >/dev/null 2>"$CAP/e"
    rc=$?
    if [ $rc = 1 ] && [ -f fullrun.$EXT.partial ] && [ ! -f fullrun.$EXT ] && grep -q "kept in .*fullrun.$EXT.partial" "$CAP/e"; then
        ok "seismograms on a full disk: exit 1, the wavefield file kept as .partial"
    else bad "seismograms on a full disk: exit $rc, $(ls fullrun* 2>&1 | tr '\n' ' ') $(grep error "$CAP/e" | head -2)"; fi
    umount "$full"
else
    echo "skip  seismograms on a full disk (no tmpfs mount here)"
fi
rmdir "$full" 2>/dev/null
# the inversion's modelling is a forward run's: started from the model that made the observed
# seismograms (same dt), its misfit is 0 and its seismograms are that run's, bitwise (its CPML was
# built for 1.5 x the fastest speed, the time step's allowance: the start's misfit was 4.4e-9, not 0)
"$HS_BIN" run shot.ini -q "${adj[@]}" output.format=none seismic.seismograms=observed_bg >/dev/null 2>&1
if "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=fwi seismic.fwi_iterations=1 seismic.observed=observed_bg.$EXT \
    seismic.seismograms=crime_sg output.path=crime >crime.log 2>&1 && grep -q "fwi start: misfit 0.000000e+00" crime.log &&
    grep -q "misfit 0.000000e+00 -> 0.000000e+00" crime.log && "$HS_BIN" compare observed_bg.$EXT crime_sg.$EXT p 2>&1 | grep -q " 0 not bitwise equal"; then
    ok "fwi from the true model: misfit 0 and the forward run's seismograms, bitwise"
else
    bad "fwi from the true model: $(grep -E 'misfit|error' crime.log | head -3 | tr '\n' ' ')"
fi
# observed seismograms written with output.time_units = minutes hold their times in minutes: the
# misfit is the one against the same seismograms in seconds (the file was refused, its samples read
# as seconds: "sampled every 1.66667e-05 s")
"$HS_BIN" run shot.ini -q "${adj[@]}" output.format=none seismic.anomaly=disc seismic.anomaly_center="350 300" \
    seismic.anomaly_radius=90 seismic.anomaly_dvp=150 seismic.seismograms=observed_min \
    output.time_units="minutes since 2000-01-01" >/dev/null 2>&1
if "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=observed_min.$EXT seismic.seismograms=syn_min \
    output.format=none >gradmin.log 2>&1 && [ -n "$(sed -nE 's/^seismic: misfit ([^;]*);.*/\1/p' grad.log)" ] &&
    [ "$(sed -nE 's/^seismic: misfit ([^;]*);.*/\1/p' gradmin.log)" = "$(sed -nE 's/^seismic: misfit ([^;]*);.*/\1/p' grad.log)" ]; then
    ok "observed seismograms timed in minutes: the misfit of the same seismograms in seconds"
else
    bad "observed in minutes: $(tail -2 gradmin.log) against $(grep -m1 'seismic: misfit' grad.log | cut -c1-40)"
fi
# observed seismograms with a NaN: an input error from check as from run, nothing written
if [ $EXT = nc ] && [ $HAVE_PY = 1 ] && python3 -c "import netCDF4" 2>/dev/null; then
    cp observed.nc obsnan.nc
    python3 -c "
import netCDF4
d = netCDF4.Dataset('obsnan.nc', 'a'); p = d['p']; a = p[:]; a[40, 2] = float('nan'); p[:] = a; d.close()"
    mkdir -p nanrun
    for cmd in check run; do
        (cd nanrun && "$HS_BIN" $cmd ../shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=../obsnan.nc seismic.seismograms=syn \
            output.path=grad >/dev/null 2>err.log)
        rc=$?
        if [ $rc = 2 ] && grep -q "obsnan.nc' holds p = nan at sample 40, receiver 3" nanrun/err.log && [ -z "$(ls nanrun | grep -v '^err.log$')" ]; then
            ok "$cmd: a NaN in the observed seismograms: exit 2, nothing written"
        else bad "$cmd with a NaN observed: exit $rc, $(cat nanrun/err.log), files $(ls nanrun)"; fi
    done
fi
if "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=fwi seismic.fwi_iterations=3 seismic.observed=observed.$EXT \
    seismic.seismograms=inverted output.path=fwi >fwi.log 2>&1; then
    start=$(sed -nE 's/.*fwi start: misfit ([^ ]*).*/\1/p' fwi.log)
    last=$(sed -nE 's/.*fwi iteration 3: misfit ([^ ]*).*/\1/p' fwi.log)
    if [ -n "$start" ] && [ -n "$last" ] && python3 -c "import sys; sys.exit(0 if $last < 0.1 * $start else 1)"; then
        ok "mode = fwi: 3 L-BFGS iterations lower the misfit from $start to $last"
    else
        bad "fwi misfit: $(grep fwi fwi.log | tr '\n' ' ')"
    fi
else
    bad "fwi: $(tail -3 fwi.log)"
fi

# a line search that finds no decrease (a vp step of 1e9 m/s: every trial held at the speed limits)
# ends the inversion on a rejected trial: the model, the seismograms and the misfit it reports are the
# best accepted iterate's, not the trial's (they were the trial's: misfit 5.3e-3 against 1.9e-4)
if "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=fwi seismic.fwi_iterations=2 seismic.fwi_vp_step=1e9 seismic.observed=observed.$EXT \
    seismic.seismograms=lsfail_sg output.path=lsfail >lsfail.log 2>&1 && grep -q "line search found no decrease" lsfail.log; then
    best=$(sed -nE 's/.*fwi iteration 1: misfit ([^ ]*).*/\1/p' lsfail.log)
    final=$(sed -nE 's/^seismic: final misfit (.*)$/\1/p' lsfail.log)
    # the written vp as a model: its misfit is the best one (to the fp32 rounding of vp)
    "$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=observed.$EXT seismic.seismograms=none output.format=none \
        seismic.medium=file seismic.model_file=lsfail.$EXT >lsvp.log 2>&1
    again=$(sed -nE 's/^seismic: final misfit (.*)$/\1/p' lsvp.log)
    if [ -n "$best" ] && [ -n "$final" ] && [ -n "$again" ] &&
        awk -v b="$best" -v f="$final" -v g="$again" 'BEGIN { exit !((f - b < 1e-6 * b && b - f < 1e-6 * b) && (g - b < 1e-4 * b && b - g < 1e-4 * b)) }'; then
        ok "fwi ending on a rejected trial: final misfit $final, the best iterate's ($best); its written vp gives $again"
    else
        bad "fwi after a failed line search: best $best, final $final, written vp's misfit $again"
    fi
    if [ $HAVE_PY = 1 ]; then
        python3 - "$best" <<'PY' && ok "fwi ending on a rejected trial: the written seismograms' misfit is the best iterate's" || bad "fwi seismograms after a failed line search"
import sys, netCDF4, numpy as np
p = np.asarray(netCDF4.Dataset('lsfail_sg.nc')['p'][:], dtype=float)
o = np.asarray(netCDF4.Dataset('observed.nc')['p'][:], dtype=float)
J = 0.5 * ((p - o) ** 2).sum()
print(J, sys.argv[1])
sys.exit(0 if abs(J - float(sys.argv[1])) <= 1e-6 * J else 1)  # the best as printed: 7 digits
PY
    fi
else
    bad "fwi with a failing line search: $(tail -3 lsfail.log)"
fi

# ---- signals in the adjoint modes (they ran on to the end after SIGTERM, exit 0, and took
# checkpoint.every_steps without writing a checkpoint).  mode = fwi stops at an iteration boundary:
# a signal inside an iteration (HS_TEST_SIGNAL_AT_POLL: the N-th check, one per wave step of the
# sweeps) abandons it; the checkpoint and the file's last record hold the model after the iteration
# before (the same vp as a run of that many iterations), exit 3; the restart repeats the abandoned
# iteration and ends bitwise where the uninterrupted run ends.  mode = gradient cannot stop
# part-way: exit 1, nothing written; its checkpoint keys are bad input.
F=(-q "${adj[@]}" seismic.mode=fwi seismic.observed=observed.$EXT)
"$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiU_sg output.path=fwiU >/dev/null 2>&1
"$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=2 seismic.seismograms=none output.path=fwi2 >/dev/null 2>&1
# same_fwi STEM: STEM.EXT and STEM_sg.EXT / .sgy are bitwise the uninterrupted run's
same_fwi() {
    "$HS_BIN" compare --all fwiU.$EXT "$1.$EXT" >"$CAP/cmp" 2>&1 && "$HS_BIN" compare fwiU_sg.$EXT "$1_sg.$EXT" p >>"$CAP/cmp" 2>&1 &&
        cmp -s fwiU_sg.sgy "$1_sg.sgy"
}
HS_TEST_SIGNAL_AT_POLL=5200 "$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiS_sg output.path=fwiS \
    checkpoint.path=fwiS.ck >fwiS.log 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "fwi iteration 3 stopped by signal 15 in the forward sweep" fwiS.log && [ -s fwiS.ck ] && [ -s fwiS.$EXT.partial ] &&
    ! ls fwiS_sg.* >/dev/null 2>&1 && "$HS_BIN" compare fwi2.$EXT fwiS.$EXT.partial vp >"$CAP/cmp" 2>&1; then
    ok "fwi: SIGTERM inside iteration 3: exit 3, a checkpoint, and the file's vp is the model after iteration 2 (a 2-iteration run's, bitwise)"
else
    bad "fwi stopped inside an iteration: exit $rc, $(grep -E 'stopped|error' fwiS.log | head -2), $(cat "$CAP/cmp" 2>/dev/null | tail -1)"
fi
if [ $HAVE_NC = 1 ] && [ $EXT = nc ]; then
    it=$(ncdump -v iteration fwiS.nc.partial | sed -nE 's/^ iteration = (.*) ;$/\1/p')
    [ "$it" = "0, 2" ] && ok "fwi stopped: the file's records are iterations 0 and 2 (the stop's own)" || bad "fwi stopped: records '$it'"
fi
"$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiS_sg output.path=fwiS checkpoint.path=fwiS.ck \
    --restart fwiS.ck >fwiR.log 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "fwi iteration 3: misfit" fwiR.log && ! grep -q "fwi iteration [12]:" fwiR.log && same_fwi fwiS; then
    ok "fwi restarted from it: iteration 3 again, and the file and seismograms are bitwise the uninterrupted run's"
else
    bad "fwi restart: exit $rc, $(grep -E 'error|differ' fwiR.log "$CAP/cmp" | head -2)"
fi
HS_TEST_SIGNAL_AT_STEP=1 "$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiB_sg output.path=fwiB \
    checkpoint.path=fwiB.ck >/dev/null 2>&1
rc=$?
"$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiB_sg output.path=fwiB checkpoint.path=fwiB.ck \
    --restart fwiB.ck >/dev/null 2>&1
[ $rc = 3 ] && same_fwi fwiB && ok "fwi: SIGTERM after iteration 1: exit 3, the restart bitwise the uninterrupted run" ||
    bad "fwi stopped at an iteration boundary: exit $rc, $(tail -1 "$CAP/cmp")"
mkdir -p gstop
(cd gstop && HS_TEST_SIGNAL_AT_POLL=700 "$HS_BIN" run ../shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=../observed.$EXT \
    output.path=g seismic.seismograms=gs >../gstop.log 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q "mode = gradient stopped by signal 15 in the reverse sweep at step 300 of 500: .*nothing was written" gstop.log &&
    [ -z "$(ls gstop)" ]; then
    ok "gradient: SIGTERM in the reverse sweep: exit 1, the reason said, nothing written"
else
    bad "gradient stopped: exit $rc, $(grep error gstop.log), files: $(ls gstop)"
fi
for cmd in check run; do
    (cd gstop && "$HS_BIN" $cmd ../shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=../observed.$EXT checkpoint.every_steps=100 \
        output.path=g seismic.seismograms=gs >../gstop.log 2>&1)
    rc=$?
    [ $rc = 2 ] && grep -q "checkpoint.every_steps: is not used with seismic.mode = gradient" gstop.log && [ -z "$(ls gstop)" ] &&
        ok "$cmd: checkpoint.every_steps with mode = gradient: exit 2" || bad "$cmd gradient with checkpoint.every_steps: exit $rc, $(grep error gstop.log)"
done
if [ $HAVE_MPI = 1 ]; then
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiM_sg output.path=fwiM >/dev/null 2>&1
    "${MPIRUN[@]}" -n 2 -x HS_TEST_SIGNAL_AT_POLL=3700 "$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiN_sg \
        output.path=fwiN checkpoint.path=fwiN.ck >/dev/null 2>&1
    rc=$?
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${F[@]}" seismic.fwi_iterations=3 seismic.seismograms=fwiN_sg output.path=fwiN \
        checkpoint.path=fwiN.ck --restart fwiN.ck >/dev/null 2>&1
    [ $rc = 3 ] && "$HS_BIN" compare --all fwiM.$EXT fwiN.$EXT >/dev/null 2>&1 && "$HS_BIN" compare fwiM_sg.$EXT fwiN_sg.$EXT p >/dev/null 2>&1 &&
        ok "fwi on 2 ranks stopped inside an iteration and restarted: bitwise the uninterrupted 2-rank run" || bad "fwi 2 ranks stop/restart: exit $rc"
fi

# ---- record times are the steps' n dt, each product rounded once: the snapshots of two shots on one
# time axis (the second shot's were s dt + N dt, 4 of its 25 records an ulp off) and the seismograms
# sampled every 5 steps (they were (k dt) 5, 8 of 41 samples off)
if python3 -c "import h5py, numpy" 2>/dev/null && [ $HAVE_NC = 1 ]; then
    "$HS_BIN" run shot.ini -q seismic.dt=0.002 seismic.shot_count=2 "seismic.shot_step=-150 40" seismic.record_every=5 \
        output.every_steps=8 output.path=tsnap seismic.seismograms=tsg >t.log 2>&1 || bad "record-time run: $(tail -2 t.log)"
    for f in "tsnap.nc 0.002 8 0.8" "tsg_shot1.nc 0.002 5 0.4" "tsg_shot2.nc 0.002 5 0.4"; do
        set -- $f
        if records_at_steps "$@" >"$CAP/o" 2>&1; then ok "$1: times are n dt exactly ($(cat "$CAP/o"))"
        else bad "$1: times are not n dt: $(cat "$CAP/o")"; fi
    done
else echo "skip record times: no h5py/numpy in python3 or no NetCDF"; fi

# ---- several shots one after another: shot k's seismograms equal a one-shot run at its position
# (bitwise), in files NAME_shotK with the shot's number in the SEG-Y headers; a run stopped inside
# the second shot continues bitwise; 2 ranks give the same seismograms
S=(-q output.format=none seismic.shot_count=3 "seismic.shot_step=-150 40" seismic.seismograms=shots)
if "$HS_BIN" run shot.ini "${S[@]}" >shots.log 2>&1 && [ -s shots_shot3.$EXT ] && [ -s shots_shot3.sgy ]; then
    ok "three shots: files shots_shot1..3"
    "$HS_BIN" run shot.ini -q output.format=none "seismic.source_position=147 293" seismic.seismograms=one3 >/dev/null 2>&1
    "$HS_BIN" compare shots_shot3.$EXT one3.$EXT p 0 >cmp.log 2>&1 && ok "shot 3 equals a one-shot run at (147, 293)" \
        || bad "shot 3: $(cat cmp.log)"
    "$HS_BIN" compare shots_shot1.$EXT full.$EXT p 0 >cmp.log 2>&1 && ok "shot 1 equals the one-shot run" || bad "shot 1: $(cat cmp.log)"
    if [ $HAVE_PY = 1 ] && python3 -c "import segyio" 2>/dev/null; then
        python3 - <<'PY' >py.log 2>&1 && ok "SEG-Y: shot 2's field record 2, source x 297" || bad "SEG-Y shot headers: $(cat py.log)"
import segyio
with segyio.open("shots_shot2.sgy", ignore_geometry=True) as f:
    h = f.header[0]
    assert h[segyio.TraceField.FieldRecord] == 2, h[segyio.TraceField.FieldRecord]
    sc = h[segyio.TraceField.SourceGroupScalar]
    scale = (1.0 / -sc if sc < 0 else sc) if sc else 1.0
    x = h[segyio.TraceField.SourceX] * scale
    assert abs(x - 297) <= 0.5 * scale + 1e-9, x
PY
    fi
    # a folder where shot 2's file goes: refused before anything runs, from check as from run
    mkdir -p dirshot && mkdir -p dirshot/s_shot2.$EXT
    for cmd in check run; do
        "$HS_BIN" $cmd shot.ini "${S[@]}" seismic.seismograms=dirshot/s >/dev/null 2>err.log
        rc=$?
        if [ $rc = 2 ] && grep -q "seismic.seismograms: seismogram file dirshot/s_shot2.$EXT is a directory" err.log && [ -z "$(ls dirshot | grep -v '^s_shot2')" ]; then
            ok "$cmd: shot 2's seismogram file is a folder: exit 2, nothing written"
        else bad "$cmd with a folder as shot 2's file: exit $rc, $(cat err.log), files $(ls dirshot)"; fi
    done
    HS_TEST_SIGNAL_AT_STEP=300 "$HS_BIN" run shot.ini "${S[@]}" seismic.seismograms=shotsr checkpoint.path=cks.h5 >/dev/null 2>&1
    rc=$?
    if [ $rc = 3 ] && "$HS_BIN" run shot.ini "${S[@]}" seismic.seismograms=shotsr checkpoint.path=cks.h5 --restart cks.h5 >/dev/null 2>err.log; then
        same=1
        for k in 1 2 3; do "$HS_BIN" compare shots_shot$k.$EXT shotsr_shot$k.$EXT p 0 >/dev/null 2>&1 || same=0; done
        [ $same = 1 ] && ok "three shots stopped in the second and restarted: bitwise" || bad "multi-shot restart differs"
    else
        bad "multi-shot stop/restart: exit $rc, $(cat err.log)"
    fi
    if [ $HAVE_MPI = 1 ]; then
        "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${S[@]}" seismic.seismograms=shots2 >/dev/null 2>&1
        same=1
        for k in 1 2 3; do "$HS_BIN" compare shots_shot$k.$EXT shots2_shot$k.$EXT p 1e-12 >/dev/null 2>&1 || same=0; done
        [ $same = 1 ] && ok "three shots on 2 ranks: the same seismograms" || bad "multi-shot on 2 ranks differs"
        # two shot groups of one rank each: shots 1 and 3 on one rank, 2 and 4 on the other, each
        # bitwise the one-rank run's; a stop inside the second shot of each group restarts bitwise
        G=(-q output.format=none seismic.shot_count=4 "seismic.shot_step=-100 30" seismic.shot_groups=2)
        "$HS_BIN" run shot.ini -q output.format=none seismic.shot_count=4 "seismic.shot_step=-100 30" seismic.seismograms=g1 >/dev/null 2>&1
        "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${G[@]}" seismic.seismograms=g2 >/dev/null 2>err.log
        same=1
        for k in 1 2 3 4; do "$HS_BIN" compare g1_shot$k.$EXT g2_shot$k.$EXT p 0 >/dev/null 2>&1 || same=0; done
        [ $same = 1 ] && ok "four shots in two groups of one rank: each shot bitwise the one-rank run's" || bad "shot groups: $(cat err.log)"
        "${MPIRUN[@]}" -n 2 -x HS_TEST_SIGNAL_AT_STEP=300 "$HS_BIN" run shot.ini "${G[@]}" seismic.seismograms=gr checkpoint.path=ckg.h5 \
            >/dev/null 2>&1
        "${MPIRUN[@]}" -n 2 "$HS_BIN" run shot.ini "${G[@]}" seismic.seismograms=gr checkpoint.path=ckg.h5 --restart ckg.h5 >/dev/null 2>err.log
        same=1
        for k in 1 2 3 4; do "$HS_BIN" compare g1_shot$k.$EXT gr_shot$k.$EXT p 0 >/dev/null 2>&1 || same=0; done
        [ $same = 1 ] && ok "shot groups stopped and restarted: bitwise" || bad "shot groups restart: $(cat err.log)"
    fi
else
    bad "three shots: $(tail -3 shots.log)"
fi

# ---- the gradient over several shots is the sum of the shots' gradients, the misfit the sum of theirs
# (the misfits as printed, 10 digits; the gradients to 1e-6 of the largest: one field accumulates
# both shots' 500 steps, whose terms cancel to a much smaller sum, so the order of the additions shows
# at about 1e-7)
two=(seismic.shot_count=2 "seismic.shot_step=-100 0")
"$HS_BIN" run shot.ini -q "${adj[@]}" "${two[@]}" output.format=none seismic.anomaly=disc seismic.anomaly_center="350 300" \
    seismic.anomaly_radius=90 seismic.anomaly_dvp=150 seismic.seismograms=obs2 >/dev/null 2>&1
"$HS_BIN" run shot.ini "${adj[@]}" "${two[@]}" seismic.mode=gradient seismic.observed=obs2.$EXT seismic.seismograms=none \
    output.path=g12 >g12.log 2>&1 || bad "two-shot gradient: $(tail -2 g12.log)"
"$HS_BIN" run shot.ini "${adj[@]}" seismic.mode=gradient seismic.observed=obs2_shot1.$EXT seismic.seismograms=none \
    output.path=ga >ga.log 2>&1
"$HS_BIN" run shot.ini "${adj[@]}" seismic.source_position="250 160" seismic.mode=gradient seismic.observed=obs2_shot2.$EXT \
    seismic.seismograms=none output.path=gb >gb.log 2>&1
J12=$(grep -m1 "seismic: misfit" g12.log | awk '{print $3}' | tr -d ';')
Ja=$(grep -m1 "seismic: misfit" ga.log | awk '{print $3}' | tr -d ';')
Jb=$(grep -m1 "seismic: misfit" gb.log | awk '{print $3}' | tr -d ';')
if [ -n "$J12" ] && [ -n "$Ja" ] && [ -n "$Jb" ] && awk -v s="$J12" -v a="$Ja" -v b="$Jb" 'BEGIN { exit !(s > 0 && (s - a - b) ^ 2 <= (1e-9 * s) ^ 2) }'; then
    ok "two shots: misfit $J12 = $Ja + $Jb"
else
    bad "two-shot misfit '$J12' against '$Ja' + '$Jb'"
fi
if [ $HAVE_PY = 1 ]; then
    python3 - "$EXT" <<'PY' >py.log 2>&1 && ok "two shots: the gradient is the sum of the shots' (to 1e-6)" || bad "two-shot gradient: $(cat py.log)"
import sys, netCDF4, numpy as np
g = lambda f: np.asarray(netCDF4.Dataset(f)["gradient"][:], dtype=float)
s, a, b = g("g12.nc"), g("ga.nc"), g("gb.nc")
err = np.abs(s - a - b).max() / np.abs(s).max()
assert np.abs(a).max() > 0 and np.abs(b).max() > 0 and err <= 1e-6, err
print(err)
PY
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
