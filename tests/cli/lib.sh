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

# records_on_grid FILE STEP T_END: the file's time records are k * STEP for k = 0 .. T_END / STEP, each
# within 2 ulp, the last exactly T_END (output.every_time's landing); prints what it found
records_on_grid() {
    python3 - "$@" <<'PY'
import sys, h5py, numpy as np
name, step, t_end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
t = h5py.File(name, "r")["time"][:]
n = int(round(t_end / step)) + 1
want = np.arange(n) * step
err = np.abs(t - want) / np.spacing(np.maximum(want, step)) if len(t) == n else None
print("%d records, worst %s ulp, last %r" % (len(t), "-" if err is None else "%.0f" % err.max(), float(t[-1])))
sys.exit(0 if err is not None and err.max() <= 2 and t[-1] == t_end else 1)
PY
}

# records_at_steps FILE DT EVERY T_END: with a fixed step DT and a record every EVERY steps up to T_END
# (a whole number of records), record k is at step k EVERY and its time is (k EVERY) * DT exactly,
# the product rounded once (a running sum of DT drifts: 0.010000000000000002 for 10 steps of 0.001),
# the last exactly T_END; prints what it found
records_at_steps() {
    python3 - "$@" <<'PY'
import sys, h5py, numpy as np
name, dt, every, t_end = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
t = h5py.File(name, "r")["time"][:]
n = int(round(t_end / (every * dt))) + 1
want = (np.arange(n, dtype=np.float64) * every) * dt
want[-1] = t_end
bad = [k for k in range(min(n, len(t))) if t[k] != want[k]]
first = "none" if not bad else "record %d at %r, not %r" % (bad[0], float(t[bad[0]]), float(want[bad[0]]))
print("%d records (%d expected), %d off n dt, first: %s" % (len(t), n, len(bad), first))
sys.exit(0 if len(t) == n and not bad else 1)
PY
}
