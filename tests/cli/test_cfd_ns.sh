#!/usr/bin/env bash
# The navier_stokes CFD model end to end: 1/2/4 ranks (and CPU/GPU) agree, a restart continues
# bitwise, the output carries the CF names and diagnostics, and bad inputs fail with exit 2.
set -u
. "$(dirname "$0")/lib.sh"

# A small cavity with temperature (every kernel: TVD momentum and scalar, buoyancy, walls, lid), a
# channel with inflow and outflow (the custom face boundaries, the tridiagonal pressure dimension),
# and a channel with outflows at x = 2 and y = 1 (Dirichlet pressure on two dimensions: the
# multigrid pressure solve, on any split of the ranks).
cat > cav.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
n = 24 20
length = 1.2 1
t_end = 0.3
cfl = 0.8
[navier_stokes]
re = 200
wall_velocity_yhi = 1 0
[output]
path = cav
every_time = 0.1
EOF2
cat > chan.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
n = 32 12
length = 3 1
t_end = 0.5
[navier_stokes]
re = 30
bc_xlo = inflow
bc_xhi = outflow
[output]
path = chan
every_time = 0.25
EOF2
cat > out2.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
n = 32 16
length = 2 1
t_end = 0.3
[navier_stokes]
re = 50
bc_xlo = inflow
bc_xhi = outflow
bc_yhi = outflow
[output]
path = out2
every_time = 0.15
EOF2
cat > hot.ini <<EOF2
[run]
solver = cfd
device = $DEVICE
[cfd]
n = 16 16 8
ndim = 3
t_end = 0.004
[navier_stokes]
temperature = true
ra = 1e4
T_bc_xlo = fixed
T_xlo = 0.5
T_bc_xhi = fixed
T_xhi = -0.5
bc_zlo = periodic
bc_zhi = periodic
[output]
path = hot
every_time = 0.002
EOF2

# 1. runs, with the variables and series users rely on
for c in cav chan out2 hot; do
    if "$HS_BIN" run $c.ini --quiet >"$CAP/o" 2>"$CAP/e"; then ok "$c runs ($(grep -m1 'pressure solve' "$CAP/o" | sed 's/.*pressure solve: //'))"
    else bad "$c: $(cat "$CAP/e")"; fi
done
# a fast lid over a fluid at rest: the first step counts the lid's speed (it took CFL 34 and blew up
# when only the field's velocity was counted: the velocity not finite at step 19)
printf '[run]\nsolver = cfd\n[cfd]\nmodel = navier_stokes\nn = 32\nt_end = 20\ncfl = 0.5\n[navier_stokes]\nre = 10000\nwall_velocity_yhi = 1 0\n[output]\nformat = none\n' > lid_fast.ini
if "$HS_BIN" run lid_fast.ini --quiet >"$CAP/o" 2>"$CAP/e"; then ok "a cavity at rest under a fast lid stays stable from its first step ($(grep -m1 -o 'CFL [0-9.e+-]*' "$CAP/o"))"
else bad "cavity at Re 1e4 on 32^2: $(grep hpcsim "$CAP/e")"; fi
grep -q "multigrid CG" < <("$HS_BIN" run out2.ini --quiet output.format=none 2>&1) && ok "outflows on two dimensions take the multigrid" ||
    bad "out2 does not report the multigrid"
grep -q "direct (transforms)" < <("$HS_BIN" run chan.ini --quiet output.format=none 2>&1) && ok "one outflow keeps the transform solver" ||
    bad "chan does not report the transform solver"
# one step of 1e-300: the right-hand side's norm overflows; the residual is said unmeasured (it printed nan)
"$HS_BIN" run chan.ini --quiet output.format=none cfd.t_end=1e-300 >"$CAP/o" 2>&1
if grep -q "its residual was not measured: the last right-hand side's norm overflows doubles" "$CAP/o" && ! grep -qi "nan" "$CAP/o"; then
    ok "a step of 1e-300: the pressure residual is said unmeasured, no nan printed"
else bad "a step of 1e-300: $(grep -i 'residual\|error' "$CAP/o" | head -2)"; fi
# the multigrid on a case the transforms also take: the same flow to the solves' tolerance
"$HS_BIN" run cav.ini --quiet output.path=cav_mg navier_stokes.pressure_solver=mg navier_stokes.pressure_rtol=1e-12 >/dev/null 2>&1
for v in u v; do
    if "$HS_BIN" compare cav.$EXT cav_mg.$EXT $v 1e-9 >"$CAP/o"; then ok "cavity $v with mg equals fft within 1e-9 ($(cut -d, -f2 "$CAP/o"))"
    else bad "cavity $v mg against fft: $(cat "$CAP/o")"; fi
done
if [ $EXT = nc ] && command -v ncdump >/dev/null; then
    grep -qF "double pressure_iterations(time)" < <(ncdump -h out2.$EXT) && ok "multigrid run has the pressure_iterations series" ||
        bad "out2 lacks pressure_iterations"
    h=$(ncdump -h cav.nc)
    missing=""
    for v in "u(time, y, x)" "v(time, y, x)" "p(time, y, x)" "vorticity(time, y, x)" "kinetic_energy(time)" "enstrophy(time)" "divergence_max(time)" "cfl(time)"; do
        grep -qF "double $v" <<<"$h" || missing="$missing $v"
    done
    [ -z "$missing" ] && ok "cavity file has u, v, p, vorticity and the diagnostic series" || bad "cavity file lacks:$missing"
    # the model is dimensionless: its time axis says in what (it read "time", in "seconds since")
    grep -qF 'time:long_name = "time in units of L/U' <<<"$h" && ok "cavity time axis says its unit is L/U" || bad "cavity time long_name: $(grep 'time:long_name' <<<"$h")"
    grep -qF "double T(time, z, y, x)" < <(ncdump -h hot.nc) && grep -qF "double nusselt(time)" < <(ncdump -h hot.nc) &&
        ok "3D heated file has T and nusselt" || bad "3D heated file lacks T or nusselt"
    # the Nusselt number is in units of the conduction flux |T_xlo - T_xhi| / L_x: the same flow with
    # twice the temperature difference (half the Rayleigh number), in a box twice as long (Ra / 8 for
    # the same L_x^3 Ra), or with the hot wall on the right reports the same Nu (it reported 2x, 1/2x, -1x)
    nulast() { ncdump -v nusselt "$1" | sed -n '/^ nusselt =/,/;/p' | tr -d ' ;}\n' | sed 's/.*=//' | tr ',' '\n' | tail -1; }
    grep -v "^bc_z\|^ndim\|^n = " hot.ini | sed 's/^\[cfd\]/[cfd]\nn = 24/' > hot2.ini
    hc=(hot2.ini --quiet cfd.t_end=0.05 output.every_time=0.05)
    "$HS_BIN" run "${hc[@]}" output.path=nu0 >/dev/null 2>&1
    "$HS_BIN" run "${hc[@]}" output.path=nu1 navier_stokes.T_xlo=1 navier_stokes.T_xhi=-1 navier_stokes.ra=5e3 >/dev/null 2>&1
    "$HS_BIN" run "${hc[@]}" output.path=nu2 cfd.length=2 navier_stokes.ra=1250 cfd.t_end=0.2 output.every_time=0.2 >/dev/null 2>&1
    "$HS_BIN" run "${hc[@]}" output.path=nu3 navier_stokes.T_xlo=-0.5 navier_stokes.T_xhi=0.5 >/dev/null 2>&1
    n0=$(nulast nu0.nc) n1=$(nulast nu1.nc) n2=$(nulast nu2.nc) n3=$(nulast nu3.nc)
    awk -v a="$n0" -v b="$n1" -v c="$n2" -v d="$n3" 'BEGIN { exit !(a + 0 > 1 && (a - b)^2 < 1e-16 && (a - c)^2 < 1e-12 && (a - d)^2 < 1e-16) }' &&
        ok "Nusselt number in conduction units: $n0, $n1 (2 dT), $n2 (2 L), $n3 (hot wall at x = L)" || bad "Nusselt $n0 $n1 $n2 $n3"
    # a parabolic inflow is parabolic across walled axes only: across a periodic y it is uniform (it
    # was 0.22 .. 1.49 .. 0.22 across the periodic axis)
    printf '[run]\nsolver = cfd\n[cfd]\nn = 32 16\nlength = 2 1\nt_end = 0\n[navier_stokes]\nre = 10\nbc_xlo = inflow\nbc_xhi = outflow\nbc_ylo = periodic\nbc_yhi = periodic\ninflow_profile = parabolic\ninitial = poiseuille\n[output]\npath = chp\n' > chp.ini
    uvals=$("$HS_BIN" run chp.ini --quiet >/dev/null 2>&1 && ncdump -v u chp.nc | sed -n '/^ u =/,/;/p' | tr -d ' ;u=\n' | tr ',' '\n' | sort -u | tr '\n' ' ')
    [ "$uvals" = "1 " ] && ok "parabolic inflow across a periodic axis: uniform (u = 1 everywhere at t = 0)" || bad "periodic parabolic inflow: u values '$uvals'"
    div=$(ncdump -v divergence_max cav.nc | sed -n '/^ divergence_max =/,/;/p' | tr -d ' ;' | cut -d= -f2 | tr ',' '\n' | sort -g | tail -1)
    awk -v d="$div" 'BEGIN { exit !(d < 1e-10) }' && ok "projected velocity is divergence-free (max |div u| $div)" || bad "divergence $div"
fi

# Rayleigh-Benard at Ra 1e4 (above the onset, 1708): a uniform start stays symmetric and conductive,
# navier_stokes.T_perturbation seeds the convection (there was no way to); the noise is drawn by
# global cell, so 2 ranks start from, and keep, the same field
printf '[run]\nsolver = cfd\ndevice = %s\n[cfd]\nn = 64 32\nlength = 2 1\nt_end = 0.3\ncfl = 0.8\n[navier_stokes]\ntemperature = true\nra = 1e4\nbc_xlo = periodic\nbc_xhi = periodic\nT_bc_ylo = fixed\nT_ylo = 0.5\nT_bc_yhi = fixed\nT_yhi = -0.5\n[output]\npath = rb\nevery_time = 0.3\n' "$DEVICE" > rb.ini
"$HS_BIN" run rb.ini --quiet output.path=rb_quiet >/dev/null 2>&1 && "$HS_BIN" run rb.ini --quiet navier_stokes.T_perturbation=1e-3 >/dev/null 2>&1 ||
    bad "Rayleigh-Benard runs failed"
if [ $EXT = nc ] && command -v ncdump >/dev/null; then
    ke() { ncdump -v kinetic_energy "$1" | sed -n '/^ kinetic_energy =/,/;/p' | tr -d ' ;' | cut -d= -f2 | tr ',' '\n' | grep -E '^[-+0-9.eE]+$' | tail -1; }
    k0=$(ke rb_quiet.nc) k1=$(ke rb.nc)
    awk -v a="$k0" -v b="$k1" 'BEGIN { exit !(a < 1e-20 && b > 1e-3) }' && ok "Rayleigh-Benard: conductive from a uniform start (KE $k0), convecting from T_perturbation 1e-3 (KE $k1)" ||
        bad "Rayleigh-Benard kinetic energies: uniform start $k0, perturbed $k1"
fi
if [ $HAVE_MPI = 1 ]; then
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run rb.ini --quiet run.allow_shared_gpu=true navier_stokes.T_perturbation=1e-3 output.path=rb_np2 >"$CAP/o" 2>&1 &&
        "$HS_BIN" compare rb.$EXT rb_np2.$EXT T 1e-11 >"$CAP/o" && ok "Rayleigh-Benard perturbed: 2 ranks equal 1 rank in T ($(cut -d, -f2 "$CAP/o"))" ||
        bad "Rayleigh-Benard perturbed on 2 ranks: $(cat "$CAP/o")"
fi

# 2. the same on 1, 2 and 4 ranks (the pressure solve's transposes move whole lines, the
# multigrid's cycle is the same on any split: round-off only)
if [ $HAVE_MPI = 1 ]; then
    for c in cav chan out2 hot; do
        for np in 1 2 4; do
            "${MPIRUN[@]}" -n $np "$HS_BIN" run $c.ini --quiet run.allow_shared_gpu=true output.path=${c}_np$np >"$CAP/o" 2>"$CAP/e" || bad "$c on $np ranks: $(grep hpcsim "$CAP/e")"
        done
        for np in 2 4; do
            for v in u v p; do
                if "$HS_BIN" compare ${c}_np1.$EXT ${c}_np$np.$EXT $v 1e-11 >"$CAP/o"; then :; else bad "$c $v: $np ranks differ: $(cat "$CAP/o")"; continue 2; fi
            done
            ok "$c: $np ranks equal 1 rank within 1e-11 in u, v, p"
        done
    done
    # a split the transforms cannot take (x over the ranks): the multigrid, equal to one rank
    for pr in "2 1" "2 2"; do
        np=$(( ${pr% *} * ${pr#* } ))
        "${MPIRUN[@]}" -n $np "$HS_BIN" run cav.ini --quiet run.allow_shared_gpu=true "cfd.procs=$pr" output.path=cav_x$np \
            navier_stokes.pressure_rtol=1e-12 >"$CAP/o" 2>"$CAP/e" || bad "cav split $pr: $(grep hpcsim "$CAP/e")"
        if "$HS_BIN" compare cav.$EXT cav_x$np.$EXT u 1e-9 >"$CAP/o"; then ok "cavity split $pr (multigrid) equals 1 rank (transforms) within 1e-9"
        else bad "cavity split $pr: $(cat "$CAP/o")"; fi
    done
else
    echo "skip rank-count comparison: no MPI in this build"
fi

# 3. CPU and GPU
if [ "$DEVICE" = cuda ]; then
    # and a 3D channel with two outflows (multigrid) whose sides are no multiple of the momentum kernel's blocks
    sed -e 's/^n = .*/n = 20 12 10/' -e 's/^length = .*/length = 2 1 1/' -e 's/^path = .*/path = out3/' -e 's/^\[cfd\]/[cfd]\nndim = 3/' \
        -e 's/^t_end = .*/t_end = 0.05/' -e 's/^every_time = .*/every_time = 0.025/' -e 's/^re = .*/re = 50\npressure_rtol = 1e-12/' out2.ini >out3.ini
    "$HS_BIN" run out3.ini --quiet >/dev/null 2>"$CAP/e" || bad "out3: $(cat "$CAP/e")"
    # and a 3D cavity with a lid moving along x and z, more than one block along x and y and several
    # chunks of planes of the fused momentum kernel (32 x 8 points a block)
    sed -e 's/^n = .*/n = 40 12 35/' -e 's/^length = .*/length = 1.2 1 1/' -e 's/^path = .*/path = cav3/' -e 's/^\[cfd\]/[cfd]\nndim = 3/' \
        -e 's/^t_end = .*/t_end = 0.05/' -e 's/^every_time = .*/every_time = 0.025/' -e 's/^wall_velocity_yhi = .*/wall_velocity_yhi = 1 0 0.4/' cav.ini >cav3.ini
    "$HS_BIN" run cav3.ini --quiet >/dev/null 2>"$CAP/e" || bad "cav3: $(cat "$CAP/e")"
    # and the plane solve's other mixed-dimension forms: the DCT-IV with the fused column kernel (y
    # of 16), the extension of an odd x flowing the other way, and of a y flowing along y (64 with
    # the fused kernel)
    sed -e 's/^n = .*/n = 64 16/' -e 's/^path = .*/path = chan4/' chan.ini >chan4.ini
    sed -e 's/^n = .*/n = 33 16/' -e 's/^bc_xlo = .*/bc_xlo = outflow/' -e 's/^bc_xhi = .*/bc_xhi = inflow/' -e 's/^path = .*/path = chanx/' chan.ini >chanx.ini
    sed -e 's/^n = .*/n = 12 32/' -e 's/^length = .*/length = 1 3/' -e 's/^bc_xlo = .*/bc_ylo = inflow/' -e 's/^bc_xhi = .*/bc_yhi = outflow/' \
        -e 's/^path = .*/path = chany/' chan.ini >chany.ini
    for c in chan4 chanx chany; do "$HS_BIN" run $c.ini --quiet >/dev/null 2>"$CAP/e" || bad "$c: $(cat "$CAP/e")"; done
    for c in cav chan out2 hot out3 cav3 chan4 chanx chany; do
        "$HS_BIN" run $c.ini --quiet run.device=cpu output.path=${c}_cpu >/dev/null 2>&1
        vars="u v"; grep -q "ndim = 3" $c.ini && vars="u v w"
        for v in $vars; do
            if "$HS_BIN" compare ${c}_cpu.$EXT $c.$EXT $v 1e-10 >"$CAP/o"; then ok "$c: CPU and GPU agree in $v within 1e-10 ($(cut -d, -f2 "$CAP/o"))"
            else bad "$c CPU vs GPU in $v: $(cat "$CAP/o")"; fi
        done
    done
fi

# 4. a restart continues bitwise (adaptive dt included; the multigrid starts from the checkpointed potential)
for c in cav out2; do
    rm -f ck*
    "$HS_BIN" run $c.ini --quiet output.path=full >/dev/null 2>&1
    "$HS_BIN" run $c.ini --quiet output.path=part checkpoint.every_steps=5 checkpoint.path=ck run.max_steps=12 >/dev/null 2>&1
    ck=$(ls ck* 2>/dev/null | head -1)
    if [ -n "$ck" ] && "$HS_BIN" run $c.ini --quiet output.path=part run.restart="$ck" >"$CAP/o" 2>"$CAP/e"; then
        if "$HS_BIN" compare full.$EXT part.$EXT u --last >"$CAP/o" && "$HS_BIN" compare full.$EXT part.$EXT p --last >>"$CAP/o" &&
            "$HS_BIN" compare full.$EXT part.$EXT time >>"$CAP/o"; then
            ok "$c: restart from $ck is bitwise"
        else bad "$c: restart differs: $(cat "$CAP/o")"; fi
    else
        bad "$c: restart: checkpoint '$ck': $(cat "$CAP/e" 2>/dev/null)"
    fi
done

# 4b. output.every_time lands the records on the requested times with a fixed step (the shared
# hs_cfd_step_toward): 2000 steps of 0.001, a record every 0.1, one step per call (signals watched).
# 100 steps of 0.001 from t = 1 fall 1.1e-14 short of 1.1 and nothing snapped it: records at
# 1.099999999999989 ... 1.99999999999989, none at t_end = 2.  Each must be k/10 within 2 ulp.
if python3 -c "import h5py, numpy" 2>/dev/null; then
    printf '[run]\nsolver = cfd\ndevice = %s\n[cfd]\nn = 8\nlength = 6.283185307179586\nt_end = 2\ndt = 0.001\n[navier_stokes]\nre = 100\ninitial = taylor_green\nbc_xlo = periodic\nbc_xhi = periodic\nbc_ylo = periodic\nbc_yhi = periodic\n[output]\nformat = %s\npath = every\nevery_time = 0.1\n' "$DEVICE" "$FMT" > every.ini
    "$HS_BIN" run every.ini --quiet >"$CAP/o" 2>"$CAP/e" || bad "every_time run: $(cat "$CAP/e")"
    if records_on_grid every.$EXT 0.1 2 >"$CAP/o" 2>&1; then ok "every_time = 0.1 with dt = 0.001 to t = 2: records at k/10 within 2 ulp, the last at t_end ($(cat "$CAP/o"))"
    else bad "every_time records off the requested times: $(cat "$CAP/o")"; fi
    # output.every_steps with a fixed step: the record times are n dt, not a running sum of dt
    "$HS_BIN" run every.ini --quiet cfd.t_end=0.5 output.every_time=0 output.every_steps=5 output.path=steps >"$CAP/o" 2>"$CAP/e" ||
        bad "every_steps run: $(cat "$CAP/e")"
    if records_at_steps steps.$EXT 0.001 5 0.5 >"$CAP/o" 2>&1; then ok "every_steps = 5 with dt = 0.001: record times are n dt exactly ($(cat "$CAP/o"))"
    else bad "every_steps record times are not n dt: $(cat "$CAP/o")"; fi
    # the cfl series: the CFL number of the step size dt at the recorded state, also where a step
    # was shortened to land on the record (dt = 0.003, every_time = 0.01: each record follows a step
    # of 0.001), as its long_name says (it said "of the last step"): each record's against
    # dt sum_d max|u_d|/dx_d from the face velocities written with it
    "$HS_BIN" run every.ini --quiet cfd.dt=0.003 cfd.t_end=0.05 output.every_time=0.01 navier_stokes.write_faces=true \
        output.path=cfl >"$CAP/o" 2>"$CAP/e" || bad "cfl run: $(cat "$CAP/e")"
    if python3 - cfl.$EXT >"$CAP/o" 2>&1 <<'PY'
import sys, h5py, numpy as np
d = h5py.File(sys.argv[1], "r")
dx, dy = d["x"][1] - d["x"][0], d["y"][1] - d["y"][0]
uf = np.abs(d["u_face"][:]).max(axis=(1, 2))
vf = np.abs(d["v_face"][:]).max(axis=(1, 2))
want, cfl = 0.003 * (uf / dx + vf / dy), d["cfl"][:]
ln = d["cfl"].attrs["long_name"]
ln = ln.decode() if isinstance(ln, bytes) else str(ln)
err = np.abs(cfl / want - 1).max()
print(f"{len(cfl)} records, cfl within {err:.1e} of dt sum max|u_d|/dx_d; long_name '{ln}'")
sys.exit(0 if len(cfl) == 6 and err < 1e-12 and ln.endswith("step size dt (a step shortened to land on an output time counts at full length)") else 1)
PY
    then ok "cfl is the step size's at each record after a shortened step, as its long_name says ($(cat "$CAP/o"))"
    else bad "cfl series: $(cat "$CAP/o")"; fi
fi

# 5. bad input: exit 2, the key named, nothing written (the cases are in tests/data/bad_inputs.txt
# for the check-equals-run test; here the messages)
expect_fail() { # name, expected message fragment, ini text
    local name=$1 want=$2
    mkdir -p "$CAP/empty" && rm -rf "$CAP/empty"/* && printf '%b' "$3" > "$CAP/empty/case.ini"
    (cd "$CAP/empty" && "$HS_BIN" run case.ini >"$CAP/o" 2>"$CAP/e")
    local rc=$? files
    files=$(ls -A "$CAP/empty" | grep -v '^case.ini$')
    if [ $rc = 2 ] && grep -qF "$want" "$CAP/e" && [ -z "$files" ]; then ok "$name"; else
        bad "$name: exit $rc, files '$files'"; printf '  got:      %s\n  expected: %s\n' "$(cat "$CAP/e")" "$want"; fi
}
H='[run]\nsolver = cfd\n[cfd]\n'
expect_fail "T_perturbation without temperature" "navier_stokes.T_perturbation: is used only with navier_stokes.temperature = true" \
    "[run]\nsolver = cfd\n[cfd]\nn = 8\n[navier_stokes]\nT_perturbation = 0.1\n"
expect_fail "unstable step names the stable one" "case.ini:5: cfd.dt: 0.5 is unstable here: with velocities up to 1 and nu = 0.01 the stable step is about" \
    "${H}n = 32\ndt = 0.5\n[navier_stokes]\nwall_velocity_yhi = 1 0\n"
expect_fail "lid on an all-periodic box" "case.ini:10: navier_stokes.wall_velocity_yhi: is set, but face yhi is periodic, not a wall" \
    "${H}n = 16\n[navier_stokes]\nbc_ylo = periodic\nbc_yhi = periodic\nbc_xlo = periodic\nbc_xhi = periodic\nwall_velocity_yhi = 1 0\n"
expect_fail "inflow without outflow" "case.ini:6: navier_stokes.bc_xlo: an inflow needs an outflow somewhere" \
    "${H}n = 16\n[navier_stokes]\nbc_xlo = inflow\n"
expect_fail "x split refused by the transform solver" "cfd.procs: navier_stokes with the transform pressure solver splits only the last dimension" \
    "${H}n = 16\nprocs = 2 1\n[navier_stokes]\npressure_solver = fft\n"
expect_fail "two outflow dimensions refused by the transform solver" "case.ini:9: navier_stokes.pressure_solver: fft (the transform solver) takes an outflow" \
    "${H}n = 16\n[navier_stokes]\nbc_xlo = inflow\nbc_xhi = outflow\nbc_yhi = outflow\npressure_solver = fft\n"
# keys a run would ignore
expect_fail "an inflow speed without an inflow face" "case.ini:6: navier_stokes.inflow_speed: is set, but no face is an inflow" \
    "${H}n = 16\n[navier_stokes]\ninflow_speed = 2\nwall_velocity_yhi = 1 0\n"
expect_fail "a pressure tolerance where auto takes the transform solver" "case.ini:6: navier_stokes.pressure_rtol: is set, but pressure_solver = auto takes the transform solver" \
    "${H}n = 16\n[navier_stokes]\npressure_rtol = 1e-9\nwall_velocity_yhi = 1 0\n"
expect_fail "a wall temperature on an adiabatic face" "case.ini:9: navier_stokes.T_xhi: is set, but navier_stokes.T_bc_xhi is not fixed" \
    "${H}n = 16\n[navier_stokes]\ntemperature = true\nT_bc_xlo = fixed\nT_xlo = 0.5\nT_xhi = -0.5\n"
# an inflow brings its fluid in at T_<face>: an adiabatic inflow was ignored (T = 0 came in unasked)
expect_fail "an adiabatic inflow face" "case.ini:11: navier_stokes.T_bc_xlo: is adiabatic, but face xlo is an inflow: its fluid comes in at navier_stokes.T_xlo" \
    "${H}n = 24 8\nlength = 3 1\nt_end = 1\n[navier_stokes]\ntemperature = true\nbc_xlo = inflow\nbc_xhi = outflow\nT_bc_xlo = adiabatic\n"
# the face the user wrote is named (bc_xlo = periodic alone named bc_xhi, a default, with no line)
expect_fail "periodic on one face" "case.ini:6: navier_stokes.bc_xlo: a periodic dimension must be periodic on both faces (bc_xhi is wall)" \
    "${H}n = 16\n[navier_stokes]\nbc_xlo = periodic\n"
# the adaptive step's keys beside a fixed cfd.dt (both ran at the given step without a word)
expect_fail "cfl beside a fixed step" "case.ini:6: cfd.cfl: is not used with cfd.dt = 0.001" \
    "${H}n = 16\ndt = 0.001\ncfl = 0.3\n[navier_stokes]\nwall_velocity_yhi = 1 0\n"
expect_fail "dt_every beside a fixed step" "case.ini:8: navier_stokes.dt_every: is not used with cfd.dt = 0.001" \
    "${H}n = 16\ndt = 0.001\n[navier_stokes]\nwall_velocity_yhi = 1 0\ndt_every = 5\n"
# an inflow of given temperature: T_<face> without T_bc (the inflow holds it), and the run brings it in
printf "${H}n = 24 8\nlength = 3 1\nt_end = 0.5\n[navier_stokes]\ntemperature = true\nra = 10\nbc_xlo = inflow\nbc_xhi = outflow\nT_xlo = 1\nT_bc_ylo = fixed\nT_ylo = 1\nT_bc_yhi = fixed\nT_yhi = 1\n[output]\npath = tin\nformat = netcdf\n" > tin.ini
if [ $EXT = nc ] && "$HS_BIN" run tin.ini --quiet >"$CAP/o" 2>"$CAP/e"; then
    if python3 - <<'PY'
import netCDF4, numpy as np, sys
T = np.asarray(netCDF4.Dataset("tin.nc")["T"][:])
sys.exit(0 if abs(T.min() - 1) < 1e-9 and abs(T.max() - 1) < 1e-9 else 1)
PY
    then ok "an inflow at T_xlo = 1 between walls at 1 keeps T = 1 everywhere"; else bad "inflow temperature: T not 1: $(python3 -c "import netCDF4; T = netCDF4.Dataset('tin.nc')['T'][:]; print(T.min(), T.max())")"; fi
    # no Nusselt number where none is defined (it printed 0.000000 whenever temperature was on)
    if grep -q "Nusselt" "$CAP/o"; then bad "a Nusselt line without a heated x wall pair: $(grep Nusselt "$CAP/o")"; else ok "no Nusselt line without a heated x wall pair"; fi
elif [ $EXT = nc ]; then bad "inflow temperature run: $(cat "$CAP/e")"; fi
# nor where the x faces are an inflow and an outflow of fixed temperatures, not walls (the inflow's
# conduction was printed and written as "the average Nusselt number at x = 0": 2.05)
printf "${H}n = 24 12\nlength = 2 1\nt_end = 0.05\n[navier_stokes]\ntemperature = true\nra = 100\nbc_xlo = inflow\nbc_xhi = outflow\nT_bc_xlo = fixed\nT_xlo = 1\nT_bc_xhi = fixed\nT_xhi = 0\n[output]\npath = nuin\nformat = netcdf\n" > nuin.ini
if [ $EXT = nc ] && "$HS_BIN" run nuin.ini --quiet >"$CAP/o" 2>"$CAP/e"; then
    if grep -q "Nusselt" "$CAP/o" || grep -q "nusselt" < <(ncdump -h nuin.nc); then bad "a Nusselt number for an inflow and an outflow at x: $(grep Nusselt "$CAP/o")"
    else ok "no Nusselt number where the x faces are an inflow and an outflow"; fi
elif [ $EXT = nc ]; then bad "inflow/outflow temperature run: $(cat "$CAP/e")"; fi
# initial = poiseuille starts from the inflow face's profile (the sampled parabola's mean divided
# out, as at the face): interior faces equal the inflow face, no cross-flow (it had 2.9e-3)
printf "${H}n = 8 16\nlength = 1 2\nt_end = 0\n[navier_stokes]\nre = 20\nbc_ylo = inflow\nbc_yhi = outflow\ninitial = poiseuille\nwrite_faces = true\n[output]\npath = p0\nformat = netcdf\n" > p0.ini
if [ $EXT = nc ] && "$HS_BIN" run p0.ini --quiet >/dev/null 2>"$CAP/e"; then
    got=$(python3 -c "
import netCDF4, numpy as np
d = netCDF4.Dataset('p0.nc'); v = np.asarray(d['v_face'][0]); u = np.asarray(d['u_face'][0])
print('%.3e %.3e' % (abs(v - v[0]).max(), abs(u).max()))")
    read -r dv du <<<"$got"
    awk -v a="$dv" -v b="$du" 'BEGIN { exit !(a < 1e-12 && b < 1e-12) }' && ok "poiseuille start equals the inflow profile (max |v - v_inflow| $dv, max |u| $du)" ||
        bad "poiseuille start: max |v - v_inflow| $dv, max |u| $du"
elif [ $EXT = nc ]; then bad "poiseuille start run: $(cat "$CAP/e")"; fi
# the t = 0 record's pressure is the start's (it was 0): Taylor-Green's p = (cos 2x + cos 2y)/4 to the
# scheme's error, as at the next record
printf "${H}n = 32\nlength = 6.283185307179586\nt_end = 0.2\n[navier_stokes]\nre = 100\nadvection = central\ninitial = taylor_green\nbc_xlo = periodic\nbc_xhi = periodic\nbc_ylo = periodic\nbc_yhi = periodic\n[output]\npath = tgp\nformat = netcdf\nevery_time = 0.2\n" > tgp.ini
if [ $EXT = nc ] && "$HS_BIN" run tgp.ini --quiet >/dev/null 2>"$CAP/e"; then
    got=$(python3 -c "
import netCDF4, numpy as np
d = netCDF4.Dataset('tgp.nc'); X, Y = np.meshgrid(d['x'][:], d['y'][:])
for k, t in enumerate(d['time'][:]):
    p = np.asarray(d['p'][k]); e = (np.cos(2 * X) + np.cos(2 * Y)) / 4 * np.exp(-4 * 0.01 * t)
    print('%.3e' % abs(p - p.mean() - e).max(), end=' ')")
    read -r e0 e1 <<<"$got"
    awk -v a="$e0" -v b="$e1" 'BEGIN { exit !(a < 6e-3 && a < 2 * b) }' && ok "Taylor-Green pressure at t = 0 within $e0 of the exact (t = 0.2: $e1)" ||
        bad "Taylor-Green pressure error at t = 0: $e0 (t = 0.2: $e1)"
elif [ $EXT = nc ]; then bad "Taylor-Green pressure run: $(cat "$CAP/e")"; fi
# a steady state ends the run early: the file's stop detail says so (it said the planned end, 50)
printf "${H}n = 16\nt_end = 50\n[navier_stokes]\nre = 10\nwall_velocity_yhi = 1 0\nsteady_tol = 1e-4\n[output]\npath = st\nevery_time = 1\n" > st.ini
if "$HS_BIN" run st.ini --quiet >"$CAP/o" 2>"$CAP/e" && "$HS_BIN" summary st.$EXT >"$CAP/s" 2>&1; then
    grep -q "the model stopped at t = 2\.[0-9]* by its own rule (steady state: |d(kinetic energy)/dt| / kinetic energy below navier_stokes.steady_tol)" "$CAP/s" && ok "steady stop said in the file ($(grep -o 'the model stopped at t = [0-9.]*' "$CAP/s"))" ||
        bad "steady stop detail: $(grep -i -E 'stop|end' "$CAP/s" | head -3)"
else bad "steady run: $(cat "$CAP/e")"; fi
printf "${H}n = 16\n[navier_stokes]\nre = 1e5\nwall_velocity_yhi = 1 0\n" > warn.ini
"$HS_BIN" check warn.ini >"$CAP/o" 2>"$CAP/e" && grep -q "warning: navier_stokes: boundary layers" "$CAP/e" &&
    ok "under-resolved Re warns with the estimate ($(grep -o 'needs about [0-9]* cells' "$CAP/e"))" || bad "no resolution warning: $(cat "$CAP/e")"
# the boundary layers lie across the axes that end at walls: a channel periodic in a coarse x with
# layers of 0.1 resolved by 6.4 cells in y is not warned about (it was, from dx = 1: "0.1 cells")
printf "${H}n = 8 64\nlength = 8 1\n[navier_stokes]\nre = 100\nbc_xlo = periodic\nbc_xhi = periodic\nforce = 1 0\n" > chan.ini
if "$HS_BIN" check chan.ini >"$CAP/o" 2>"$CAP/e"; then
    grep -q "boundary layers" "$CAP/e" && bad "resolved channel warned: $(grep warning "$CAP/e")" || ok "a channel coarse along its periodic axis only is not warned about"
else bad "channel check: $(cat "$CAP/e")"; fi
# an adaptive step below the resolution of the time at t_end: the run could never end (a lid at
# 1e20 stepped 3e-22 a step until killed; then the driver stopped it with exit 1, after the output
# file was begun, and an inflow or a force of 1e300 wrote a file of NaN).  An input error in check
# and run alike naming the key that makes the velocity so large, as in the spectral and
# shallow-water models.  Expected step from the CFL rule alone: cfl * dx / (2 U) = 0.5 * (1/16) /
# (2e20) ~ 1.6e-22, far below 1 * 2.2e-16
for c in "wall_velocity_yhi = 1e20 0|case.ini:8: navier_stokes.wall_velocity_yhi: the adaptive step is about 1.56e-22 (velocities up to about 1e+20" \
    "bc_xlo = inflow\nbc_xhi = outflow\ninflow_speed = 1e300|case.ini:10: navier_stokes.inflow_speed: the adaptive step is about" \
    "force = 1e300 0|case.ini:8: navier_stokes.force: the adaptive step is about" \
    "temperature = true\nT_bc_xlo = fixed\nT_xlo = 1e300\nT_bc_xhi = fixed|case.ini:10: navier_stokes.T_xlo: the adaptive step is about"; do
    keys=${c%%|*} want=${c#*|}
    key=$(sed 's/^case.ini:[0-9]*: \([^:]*\):.*/\1/' <<<"$want")
    mkdir -p "$CAP/fast" && rm -rf "$CAP/fast"/*
    printf "${H}n = 16\nt_end = 1\ncfl = 0.5\n[navier_stokes]\n${keys}\n[output]\npath = fast\n" > "$CAP/fast/case.ini"
    good=1
    for verb in check run; do
        (cd "$CAP/fast" && timeout 60 "$HS_BIN" $verb case.ini --quiet >"$CAP/o" 2>"$CAP/e")
        rc=$?
        { [ $rc = 2 ] && grep -qF "$want" "$CAP/e" && grep -qF "below the resolution of the time near cfd.t_end = 1: the run could never end" "$CAP/e" &&
            [ -z "$(ls -A "$CAP/fast" | grep -v '^case.ini$')" ]; } || { good=0; bad "step below the time's resolution ($verb, $key): exit $rc $(grep -m1 error "$CAP/e")"; }
    done
    [ $good = 1 ] && ok "a step below the time's resolution ($key): exit 2 from check and run naming the key, nothing written"
done

# a buoyant start: a mixed-convection channel at Ra 1e5 whose inflow brings fluid in at T_xlo = 0
# (its T_bc left out, as allowed) under a layer started at the bottom wall's 1.  The step was that of
# the fluid at rest, kept for dt_every = 10 steps while the buoyancy accelerated the fluid by ~7e4:
# the velocity passed its stability limit within them and the run failed ("the step fell to 1e-17").
# The step now counts the velocity the forces add before it is recomputed; the temperature stays
# within the held values 0 and 1 (the TVD scalar is bounded)
printf "${H}n = 64 16\nlength = 4 1\nt_end = 0.05\n[navier_stokes]\ntemperature = true\nra = 1e5\npr = 0.71\nbc_xlo = inflow\nbc_xhi = outflow\ninflow_speed = 1\nT_bc_ylo = fixed\nT_ylo = 1\n[output]\npath = mixc\nformat = netcdf\nevery_time = 0.05\n" > mixc.ini
if [ $EXT = nc ] && "$HS_BIN" run mixc.ini --quiet >"$CAP/o" 2>"$CAP/e"; then
    got=$(python3 -c "
import netCDF4, numpy as np
d = netCDF4.Dataset('mixc.nc'); T = np.asarray(d['T'][-1]); print('%.6f %.6f %.4g' % (T.min(), T.max(), d['kinetic_energy'][-1]))")
    read -r tmin tmax ke <<<"$got"
    awk -v a="$tmin" -v b="$tmax" -v k="$ke" 'BEGIN { exit !(a >= -1e-9 && b <= 1 + 1e-9 && k > 0 && k < 1e6) }' &&
        ok "buoyant start against an inflow of another temperature: stable, T in [$tmin, $tmax], kinetic energy $ke" ||
        bad "buoyant start: T in [$tmin, $tmax], kinetic energy $ke"
elif [ $EXT = nc ]; then bad "buoyant start (mixed convection, Ra 1e5): $(grep -m1 error "$CAP/e")"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
