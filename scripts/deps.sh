#!/usr/bin/env bash
# Installs the Debian packages hpcsim builds and tests with (as root), or prints the apt-get line.
set -u
PKGS=(build-essential pkg-config openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools libnetcdf-dev
      netcdf-bin libfftw3-dev libopenblas-dev libcmocka-dev libcjson-dev python3
      libudunits2-0 libxml2-utils libmetis-dev)
# The MPI-parallel flavours of HDF5 and NetCDF beside the serial ones (they have their own include
# and library folders: /usr/include/hdf5/openmpi, /usr/lib/<arch>/netcdf/mpi), since Open MPI is
# installed: with them the build writes output collectively (output.parallel = auto), so that CI
# exercises that path; the serial path stays tested with output.parallel = off.
PKGS+=(libhdf5-openmpi-dev libnetcdf-mpi-dev)
# Python clients for the output checks (scripts/check_output.py; h5netcdf reads the HDF5 output as
# netCDF-4 in tests/cli/test_output_h5netcdf.sh; segyio reads the seismic solver's
# SEG-Y back in tests/cli/test_seismic_segy.sh); optional, never fails the build.
if command -v python3 >/dev/null && ! python3 -c "import netCDF4, xarray, h5py, h5netcdf, cfchecker, matplotlib, segyio" 2>/dev/null; then
    timeout 300 python3 -m pip install --quiet --retries 0 --timeout 15 netCDF4 xarray h5py h5netcdf cfchecker matplotlib segyio >/dev/null 2>&1 ||
        echo "deps: pip could not install netCDF4 xarray h5py h5netcdf cfchecker segyio (no network?); output checks will skip them" >&2
fi
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
if command -v dpkg-query >/dev/null; then
    for p in "${PKGS[@]}"; do have_pkg "$p" || missing+=("$p"); done
fi
# Offline-unpacked libraries (scripts/offline_deps.sh) stand in for missing -dev packages.
if [ -f .deps/usr/include/cmocka.h ]; then missing=("${missing[@]/libcmocka-dev}"); fi
if [ -f .deps/usr/include/cjson/cJSON.h ]; then missing=("${missing[@]/libcjson-dev}"); fi
read -r -a missing <<<"${missing[*]}"
# Optional clients for the output tests (tests/cli/test_paraview.sh renders the XDMF with pvpython
# under xvfb-run; tests/cli/test_cf.sh reads the NetCDF files with CDO).  Installed when possible, in
# their own apt-get call, and never a failure: without them those checks say "skipped".  gmsh meshes
# the .geo files of the finite-element tests (tests/unit/test_fem.c refines them where it is present).
# slurm-wlm and munge make the local single-host Slurm cluster of tests/cli/test_slurm.sh
# (scripts/slurm/local_cluster.sh); ffmpeg lets scripts/analysis/animate.py write MP4.
OPTIONAL=(paraview python3-paraview xvfb xauth cdo gmsh slurm-wlm munge ffmpeg)
optional_missing=()
if command -v dpkg-query >/dev/null; then
    for p in "${OPTIONAL[@]}"; do have_pkg "$p" || optional_missing+=("$p"); done
fi
install_optional() {
    [ ${#optional_missing[@]} -gt 0 ] || return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "deps: installing optional ${optional_missing[*]}"
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${optional_missing[@]}" \
            >/dev/null 2>&1 || echo "deps: optional ${optional_missing[*]} not installed; their checks will be skipped" >&2
    else
        echo "deps: optional (ParaView and CDO checks): sudo apt-get install ${optional_missing[*]}"
    fi
    return 0
}
if [ ${#missing[@]} -eq 0 ]; then
    if [ ${#optional_missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq >/dev/null 2>&1 || true
    fi
    install_optional
    echo "deps: all build and test packages are installed"
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
        install_optional
        exit 0
    fi
    echo "deps: apt-get failed (no network?); continuing with what is installed" >&2
    exit 0
fi
echo "deps: missing packages; install them with:"
echo "  sudo apt-get install ${missing[*]}"
