#!/usr/bin/env bash
# Every file the project writes (heat NetCDF/HDF5 2D and 3D, PINN fields and history, shallow water with its static bottom) passes cfchecks offline and check_output.py, and reads in ncdump, xarray and CDO without warnings.
# Skips (exit 77) without cfchecks.  The CF standard-name table comes from tests/data (no network).
set -u
. "$(dirname "$0")/lib.sh"
if ! command -v cfchecks >/dev/null; then
    echo "SKIP: cfchecks not installed (python3 -m pip install cfchecker; make deps does)"
    exit 77
fi
if ! python3 -c "import netCDF4" 2>/dev/null; then
    echo "SKIP: python3 has no netCDF4, which cfchecks needs"
    exit 77
fi
run() { # name, args...
    local name=$1
    shift
    if "$HS_BIN" run "$@" --quiet run.device=$DEVICE >"$name.log" 2>&1; then return 0; fi
    bad "$name run failed: $(tail -3 "$name.log")"
    return 1
}

formats=()
"$HS_BIN" --version | grep -q '+netcdf' && formats+=(netcdf)
"$HS_BIN" --version | grep -q '+hdf5' && formats+=(hdf5)
PINN=(pinn.depth=2 pinn.width=8 pinn.n_collocation=200 pinn.n_boundary=50 pinn.eval_nx=32 pinn.eval_nt=12
      pinn.adam_iterations=20 pinn.lbfgs_iterations=10 pinn.history_every=10)
files=()
for fmt in "${formats[@]}"; do
    ext=$([ $fmt = netcdf ] && echo nc || echo h5)
    run heat2d_$fmt "$ROOT/inputs/heat2d.ini" output.format=$fmt output.path=heat2d "heat.n=24 16" heat.t_end=0.004 &&
        files+=(heat2d.$ext)
    run heat3d_$fmt "$ROOT/inputs/heat3d.ini" output.format=$fmt output.path=heat3d "heat.n=10 8 6" heat.t_end=0.004 &&
        files+=(heat3d.$ext)
    run pinn_$fmt "$ROOT/inputs/pinn_quick.ini" "${PINN[@]}" output.format=$fmt output.path=pinn \
        pinn.history_path=pinn_history && files+=(pinn.$ext pinn_history.$ext)
    run sw_$fmt "$ROOT/inputs/sw_lake.ini" output.format=$fmt output.path=sw "cfd.n=16 12" cfd.t_end=0.05 && files+=(sw.$ext)
    # an x-z section: z is vertical (positive down), so no horizontal cell area (CDO crashed on one)
    run seis_$fmt "$ROOT/inputs/seismic_salt.ini" output.format=$fmt output.path=seis "seismic.n=81 61" seismic.medium=constant \
        seismic.t_end=0.05 seismic.free_surface=false "seismic.source_position=400 300" seismic.receivers=line \
        "seismic.receiver_start=200 100" "seismic.receiver_end=600 100" seismic.receiver_count=5 seismic.seismograms=none \
        output.every_time=0.025 && files+=(seis.$ext)
done
[ ${#files[@]} -gt 0 ] || { echo "SKIP: this build writes no NetCDF or HDF5"; exit 77; }

# check_output.py: the CF essentials, h5py and the XDMF references, and cfchecks on every .nc
for f in "${files[@]}"; do
    if python3 "$ROOT/scripts/check_output.py" "$f" >check.txt 2>&1 && ! grep -q '^notice' check.txt; then
        ok "check_output.py $f: $(grep '^ok' check.txt | sed 's/^ok *//' | tr '\n' ';' | cut -c1-150)"
    else
        bad "check_output.py $f:"
        sed 's/^/     /' check.txt
    fi
done

ncfiles=()
for f in "${files[@]}"; do [[ $f == *.nc ]] && ncfiles+=("$f"); done
for f in "${ncfiles[@]}"; do
    # the claimed version is one the checker validates (no relabelling)
    conv=$(python3 -c "import netCDF4, sys; print(netCDF4.Dataset(sys.argv[1]).Conventions)" "$f")
    if python3 -c "import sys; from cfchecker import cfchecks as c; sys.exit(0 if sys.argv[1] in [str(v) for v in c.cfVersions] else 1)" "$conv"; then
        ok "$f claims $conv, which cfchecks knows"
    else
        bad "$f claims $conv, which this cfchecks does not validate"
    fi
    if command -v ncdump >/dev/null; then
        if ncdump -h "$f" >hdr.txt 2>err.txt && [ ! -s err.txt ]; then ok "ncdump -h $f"; else bad "ncdump -h $f: $(cat err.txt)"; fi
    fi
    if python3 -c "import xarray" 2>/dev/null; then
        if python3 -W error -c "import xarray, sys; xarray.open_dataset(sys.argv[1]).load()" "$f" >xr.txt 2>&1; then
            ok "xarray opens $f without warnings"
        else
            bad "xarray on $f: $(tail -3 xr.txt)"
        fi
    fi
done
# the iteration axis is a counter, not time
for f in "${ncfiles[@]}"; do
    [[ $f == pinn* ]] || continue
    if ncdump -h "$f" | grep -q 'iteration = UNLIMITED' && ! ncdump -h "$f" | grep -q 'iteration:calendar\|iteration:units = ".* since '; then
        ok "$f: record axis 'iteration' without calendar or time units"
    else
        bad "$f: record axis: $(ncdump -h "$f" | grep -i 'unlimited\|calendar')"
    fi
done

# CDO: the heat files (physical grids in m) with no warning, field means weighted by cell_area.  The
# PINN files are left out: CDO takes any unlimited dimension for time and reports "Unsupported
# TIMEUNIT: 1" for an iteration axis, which CF requires to carry units.
if command -v cdo >/dev/null; then
    for f in "${ncfiles[@]}"; do
        [[ $f == heat* || $f == seis* ]] || continue
        # an x-z section has no horizontal area to weigh a field mean by: its time mean instead
        op=fldmean; [[ $f == seis* ]] && op=timmean
        if cdo -s sinfon "$f" >cdo.txt 2>&1 && cdo $op "$f" mean_$f >>cdo.txt 2>&1 && ! grep -qi 'warn\|error\|unsupported' cdo.txt; then
            ok "cdo sinfon and $op $f without warnings"
        else
            bad "cdo on $f:"
            sed 's/^/     /' cdo.txt | head -8
        fi
    done
else
    echo "notice: cdo not installed (Debian cdo; make deps tries it); CDO checks left out"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
