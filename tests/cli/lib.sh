# The common start of the CLI test scripts (sourced): the binary, the device, a scratch folder left on exit, ok/bad counters, mpirun, the output format (output.format) and its extension.
HS_BIN=$(realpath "${HS_BIN:-bin/hpcsim}")
ROOT=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../..")
DEVICE=${HS_TEST_DEVICE:-cpu}
WORK=$(mktemp -d)
CAP=$(mktemp -d)
# on_exit: a script that has more to clean up on exit redefines it (it runs first, then the folders go)
on_exit() { :; }
trap 'on_exit; rm -rf "$WORK" "$CAP"' EXIT
cd "$WORK"
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
MPIRUN=(mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1)
HAVE_MPI=0
command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi' && HAVE_MPI=1
EXT=nc
"$HS_BIN" --version | grep -q '+netcdf' || EXT=h5
FMT=netcdf
[ $EXT = nc ] || FMT=hdf5
