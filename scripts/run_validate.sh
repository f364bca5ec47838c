#!/usr/bin/env bash
# Long verification runs (not part of the quick suite): large self-checks and the verification
# programs in their long mode; prints each table and ends with "N passed, N failed".
set -u
BUILD=${BUILD:-build}
BIN=$([ "$BUILD" = build ] && echo bin/hpcsim || echo "$BUILD/bin/hpcsim")
export HS_TEST_VALIDATE=1
pass=0
fail=0
step() { # name, command...
    local name=$1; shift
    echo "== $name"
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $name"; fi
}
step "kernel self-check, n = 5e7" "$BIN" run inputs/selftest.ini selftest.n=50000000
if "$BIN" --version | grep -q '+mpi'; then
    for np in 2 4; do
        step "kernel self-check on $np ranks" mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n $np \
            "$BIN" run inputs/selftest.ini selftest.n=2000000 run.allow_shared_gpu=true
    done
fi
for t in "$BUILD"/tests/verify/test_*; do
    [ -x "$t" ] && step "$(basename "$t")" "$t"
done
step "pinn Burgers, published setup: relative L2 error <= 1e-3" scripts/pinn_validate.sh
step "surrogate on held-out shallow-water jets: RMSE >= 30% below persistence, below climatology" env HS_BIN="$BIN" scripts/surrogate_validate.sh
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
