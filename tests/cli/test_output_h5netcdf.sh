#!/usr/bin/env bash
# The HDF5 output is a netCDF-4 file: xarray (engine="h5netcdf") shows the dimensions, coordinates, values and attributes of the NetCDF output of the same run (heat 2-D and 3-D at 1, 2 and 4 ranks by either path, restarts that append, shallow water, Navier-Stokes with faces, LBM, spectral, seismic snapshots and seismograms, FEM, PINN), coordinates equal to the cell centres of the parameter file's grid.
# Skips (exit 77) without HDF5 in the build or h5netcdf/xarray/h5py in python3; without NetCDF (the GPU machine) the .h5 files are checked against the grid alone.
set -u
. "$(dirname "$0")/lib.sh"
if ! "$HS_BIN" --version | grep -q '+hdf5'; then
    echo "SKIP this build writes no HDF5"
    exit 77
fi
if ! python3 -c "import h5netcdf, h5py, xarray" 2>/dev/null; then
    echo "SKIP python3 has no h5netcdf, h5py or xarray (python3 -m pip install h5netcdf h5py xarray)"
    exit 77
fi
NC=0
"$HS_BIN" --version | grep -q '+netcdf' && python3 -c "import netCDF4" 2>/dev/null && NC=1
[ $NC = 1 ] || echo "notice: no NetCDF in this build (or no netCDF4 in python3): the .h5 files are checked against the grid only"
SAME=$ROOT/tests/cli/h5netcdf_same.py
launch() { # np args...: hpcsim on np ranks (mpirun when there is MPI)
    local np=$1
    shift
    if [ $HAVE_MPI = 1 ]; then "${MPIRUN[@]}" -x HS_TEST_SIGNAL_AT_STEP -n "$np" "$HS_BIN" "$@"; else "$HS_BIN" "$@"; fi
}
# both NAME.h5 and NAME.nc of one run: run NAME NP ARGS... (output.path=NAME added)
run() {
    local name=$1 np=$2
    shift 2
    local fmts=(hdf5)
    [ $NC = 1 ] && fmts+=(netcdf)
    for fmt in "${fmts[@]}"; do
        launch "$np" run "$@" --quiet run.device=$DEVICE run.allow_shared_gpu=true output.format=$fmt output.path=$name \
            >"$name.$fmt.log" 2>&1 || { bad "$name ($fmt, $np ranks) failed: $(tail -3 "$name.$fmt.log")"; return 1; }
    done
}
# same H5 [NC] [h5netcdf_same.py options]: the .h5 against the .nc (when this build writes NetCDF) and the
# grid, queued: same_all runs every queued comparison in one Python process at the end (each file
# compared is written once and kept until then)
: >same_jobs.txt
same() {
    local h5=$1 nc=$2
    shift 2
    [ $NC = 1 ] || nc=
    printf '%q ' "$h5" $nc "$@" >>same_jobs.txt
    echo >>same_jobs.txt
}
same_all() {
    python3 "$SAME" --batch same_jobs.txt >same.txt 2>&1
    local n=0 status rest
    while read -r status rest; do
        case $status in
        ok) ok "$rest"; n=$((n + 1)) ;;
        FAIL) bad "$rest"; n=$((n + 1)) ;;
        esac
    done <same.txt
    [ "$n" = "$(grep -c . same_jobs.txt)" ] || bad "h5netcdf_same.py --batch answered $n of $(grep -c . same_jobs.txt) jobs: $(tail -3 same.txt)"
}
# dims_ok FILE: check_output.py's netCDF-4 checks (every axis attached to the one scale its dimensions name)
dims_ok() {
    if python3 "$ROOT/scripts/check_output.py" --no-cfchecks "$1" >check.txt 2>&1; then
        ok "check_output.py $1: $(grep 'netCDF-4' check.txt | sed 's/^ok *//')"
    else
        bad "check_output.py $1: $(grep -v '^ok' check.txt | head -4)"
    fi
}

# 1. heat 2-D and 3-D on one rank: the same Dataset as the NetCDF file, on the cell centres
HEAT2=("$ROOT/inputs/heat2d.ini" "heat.n=24 16" "heat.length=2 1" heat.t_end=0.01)
HEAT3=("$ROOT/inputs/heat3d.ini" "heat.n=10 8 6" "heat.length=1 0.8 0.6" heat.t_end=0.004 heat.scheme=explicit heat.dt=0)
run heat2 1 "${HEAT2[@]}" && same heat2.h5 heat2.nc --grid "2 1" "24 16" && dims_ok heat2.h5
run heat3 1 "${HEAT3[@]}" && same heat3.h5 heat3.nc --grid "1 0.8 0.6" "10 8 6"

# 2. the same at 2 and 4 ranks, collectively (auto: parallel HDF5 where built) and through rank 0 (off)
if [ $HAVE_MPI = 1 ]; then
    for np in 2 4; do
        for par in auto off; do
            launch $np run "${HEAT3[@]}" --quiet run.device=$DEVICE run.allow_shared_gpu=true output.format=hdf5 output.parallel=$par \
                output.path=heat3_${np}_$par >h.log 2>&1 || bad "heat 3-D at $np ranks, output.parallel=$par: $(tail -3 h.log)"
            same heat3_${np}_$par.h5 heat3.nc --grid "1 0.8 0.6" "10 8 6"
        done
    done
else
    echo "notice: no MPI build (or no mpirun): the 2- and 4-rank files left out"
fi

# 3. restarts that append to the file: a run stopped by a signal after a checkpoint and resumed
#    (1 rank, and 2 collectively) has the uninterrupted file's dimensions, coordinates and values,
#    and every dimension scale lists each dataset axis attached to it once; so does a resume of a
#    file with no dimension scales (as hpcsim wrote them before: stripped here with h5py)
strip_scales() {
    python3 - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    for ds in [d for d in f.values() if isinstance(d, h5py.Dataset)]:
        if not h5py.h5ds.is_scale(ds.id):
            for i in range(ds.ndim):
                for s in list(ds.dims[i].values()):
                    ds.dims[i].detach_scale(s)
    for name in list(f):
        d = f[name]
        if isinstance(d, h5py.Dataset) and h5py.h5ds.is_scale(d.id):
            if d.attrs["NAME"].startswith(b"This is a netCDF dimension"):
                del f[name]
            else:
                for a in ("CLASS", "NAME", "REFERENCE_LIST"):
                    if a in d.attrs:
                        del d.attrs[a]
PY
}
once_each() {
    python3 - "$1" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for name, d in f.items():
        if isinstance(d, h5py.Dataset) and h5py.h5ds.is_scale(d.id) and "REFERENCE_LIST" in d.attrs:
            refs = [(f[r].name, int(i)) for r, i in d.attrs["REFERENCE_LIST"]]
            if len(refs) != len(set(refs)):
                sys.exit(f"{name} lists {refs}")
PY
}
restart_case() { # name np strip(0|1)
    local name=$1 np=$2 strip=$3
    HS_TEST_SIGNAL_AT_STEP=6 launch $np run "${HEAT2[@]}" --quiet run.device=$DEVICE run.allow_shared_gpu=true output.format=hdf5 \
        output.path=$name checkpoint.every_steps=4 checkpoint.path=$name.ck.h5 >r.log 2>&1
    local rc=$?
    if [ $rc != 3 ] || [ ! -f $name.h5.partial ]; then
        bad "$name: the signal stop gave exit $rc: $(tail -3 r.log)"
        return
    fi
    if [ "$strip" = 1 ] && ! strip_scales $name.h5.partial; then bad "$name: stripping the scales failed"; return; fi
    if launch $np run "${HEAT2[@]}" --quiet run.device=$DEVICE run.allow_shared_gpu=true output.format=hdf5 output.path=$name \
        checkpoint.path=$name.ck2.h5 --restart $name.ck.h5 >r.log 2>&1; then
        dims_ok $name.h5
        if once_each $name.h5 >once.txt 2>&1; then ok "$name.h5: every scale lists each attached axis once"; else bad "$name.h5: $(cat once.txt)"; fi
        # a file resumed from the old layout keeps its old attributes (units on the bounds): values only
        if [ "$strip" = 1 ]; then
            for v in T time x y; do
                "$HS_BIN" compare heat2.h5 $name.h5 $v >cmp.txt 2>&1 || bad "$name.h5 $v: $(cat cmp.txt)"
            done
            same $name.h5 "" --grid "2 1" "24 16"
        else
            same $name.h5 heat2.nc --grid "2 1" "24 16"
        fi
    else
        bad "$name: the restart failed: $(tail -3 r.log)"
    fi
}
restart_case resumed 1 0
restart_case resumed_old 1 1
if [ $HAVE_MPI = 1 ]; then
    restart_case resumed2 2 0
    restart_case resumed2_old 2 1
fi

# 4. every solver that writes fields, and the series and station files
run sw 1 "$ROOT/inputs/sw_lake.ini" "cfd.n=16 12" cfd.t_end=0.05 && same sw.h5 sw.nc && dims_ok sw.h5
run cav 1 "$ROOT/inputs/cavity_re100.ini" "cfd.n=24 16" cfd.t_end=0.2 output.every_time=0.1 navier_stokes.write_faces=true &&
    same cav.h5 cav.nc --grid "1 1" "24 16" && dims_ok cav.h5
run lbm 1 "$ROOT/inputs/lbm_cavity_re100.ini" "cfd.n=16 16" cfd.t_end=0.2 && same lbm.h5 lbm.nc && dims_ok lbm.h5
run spec 1 "$ROOT/inputs/taylor_green_spectral.ini" "cfd.n=16 16" cfd.t_end=0.05 && same spec.h5 spec.nc && dims_ok spec.h5
run seis 1 "$ROOT/inputs/seismic_salt.ini" "seismic.n=81 61" seismic.medium=constant seismic.t_end=0.05 seismic.free_surface=false \
    "seismic.source_position=400 300" seismic.receivers=line "seismic.receiver_start=200 100" "seismic.receiver_end=600 100" \
    seismic.receiver_count=5 seismic.seismograms=seis_rec seismic.segy=false output.every_time=0.025 &&
    same seis.h5 seis.nc && same seis_rec.h5 seis_rec.nc && dims_ok seis_rec.h5
cp -r "$ROOT/inputs/meshes" .
sed "s|^mesh = |mesh = $WORK/|" "$ROOT/inputs/fem_poisson_square.ini" >sq.ini
run fem 1 sq.ini && same fem.h5 fem.nc && dims_ok fem.h5
run pinn 1 "$ROOT/inputs/pinn_quick.ini" pinn.depth=2 pinn.width=8 pinn.n_collocation=200 pinn.n_boundary=50 pinn.eval_nx=32 \
    pinn.eval_nt=12 pinn.adam_iterations=20 pinn.lbfgs_iterations=10 pinn.history_every=10 pinn.history_path=pinn_history &&
    same pinn.h5 pinn.nc && same pinn_history.h5 pinn_history.nc --measured wall_time && dims_ok pinn_history.h5

same_all
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
