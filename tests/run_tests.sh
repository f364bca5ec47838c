#!/usr/bin/env bash
# Runs the quick suite: unit tests, MPI tests at 1, 2 and 4 ranks, CLI tests; ends with "N passed, N failed, N skipped".
# A test that exits 77 could not run its assertions here (a missing optional client): it counts as skipped.
set -u
BUILD=${BUILD:-build}
MPI=${MPI:-1}
LOGS=$BUILD/test-logs
mkdir -p "$LOGS"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export HS_BIN=${HS_BIN:-$([ "$BUILD" = build ] && echo bin/hpcsim || echo "$BUILD/bin/hpcsim")}
# each test's outcome, a line "PASS|FAIL|SKIP name": the CLI tests run two at a time (below), in
# subshells, so the counts come from this file and not from variables
RESULTS=$LOGS/results.txt
: >"$RESULTS"

# HS_TEST_ONLY (an extended regular expression) runs only the tests whose name matches, e.g.
# "twin|cfd" (names as printed: unit/test_x, mpi/test_y np=2, cli/test_z.sh).
run_one() { # name, command...
    local name=$1; shift
    if [ -n "${HS_TEST_ONLY:-}" ] && ! grep -Eq -- "$HS_TEST_ONLY" <<<"$name"; then return 0; fi
    local log="$LOGS/${name//\//_}.log"
    local t0=$SECONDS
    # Open MPI's session directory in a folder of the test's own: singletons and mpirun jobs that
    # start while another process on the machine tears down the shared /tmp/ompi.HOST.UID fail in
    # MPI_Init ("ompi_rte_init failed", seen with other work running beside the suite)
    local ompi_tmp
    ompi_tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-ompi.XXXXXX")
    chmod 1777 "$ompi_tmp" # like /tmp: a test may run hpcsim as another user (test_params.sh, unreadable file)
    OMPI_MCA_orte_tmpdir_base=$ompi_tmp timeout 900 "$@" >"$log" 2>&1
    local rc=$?
    rm -rf "$ompi_tmp"
    # the whole report in one write, so that two tests finishing together do not interleave
    local report
    if [ $rc -eq 0 ]; then
        echo "PASS $name" >>"$RESULTS"
        report=$(printf 'PASS  %-48s %4ds' "$name" $((SECONDS - t0)))
    elif [ $rc -eq 77 ]; then
        echo "SKIP $name" >>"$RESULTS"
        report=$(printf 'SKIP  %-48s %4ds  (%s)' "$name" $((SECONDS - t0)) "$(grep -m1 '^SKIP' "$log" | sed -E 's/^SKIP:? *//')")
    else
        echo "FAIL $name" >>"$RESULTS"
        report=$(printf 'FAIL  %-48s %4ds  (log: %s)\n%s' "$name" $((SECONDS - t0)) "$log" "$(tail -n 25 "$log" | sed 's/^/      | /')")
    fi
    printf '%s\n' "$report"
}

for t in "$BUILD"/tests/unit/test_*; do
    [ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"
done

MPIRUN=(mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -x HS_TEST_DEVICE)
for t in "$BUILD"/tests/mpi/test_*; do
    [ -x "$t" ] || continue
    if [ "$MPI" = 1 ]; then
        for np in 1 2 4; do
            run_one "mpi/$(basename "$t") np=$np" "${MPIRUN[@]}" -n $np "$t"
        done
    else
        run_one "mpi/$(basename "$t") np=1" "$t"
    fi
done

for t in "$BUILD"/tests/verify/test_*; do
    [ -x "$t" ] && run_one "verify/$(basename "$t")" "$t"
done

# The CLI scripts, HS_TEST_JOBS (default 2) at a time: most of their time is one process at a
# time (Python's imports, small runs, the Slurm test's waits on its queue), so two of them keep two
# cores busy (the suite took 15 of CI's 30 minutes one at a time).  The longest start first, so
# that the last minutes are not one long script alone; the wall-time limits test times its runs
# and runs by itself afterwards.
ALONE='test_walltime\.sh$'
LONGEST=(slurm analysis seismic output_grids check_equals_run restart_safety cfd_ns paraview output_h5netcdf quantum)
jobs_max=${HS_TEST_JOBS:-2}
pool=()
for t in "${LONGEST[@]}"; do [ -f "tests/cli/test_$t.sh" ] && pool+=("tests/cli/test_$t.sh"); done
for s in tests/cli/test_*.sh; do
    [[ " ${pool[*]} " == *" $s "* ]] || pool+=("$s")
done
alone=()
for s in "${pool[@]}"; do
    if grep -Eq "$ALONE" <<<"$s"; then alone+=("$s"); continue; fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
    run_one "cli/$(basename "$s")" bash "$s" &
done
wait
for s in "${alone[@]}"; do run_one "cli/$(basename "$s")" bash "$s"; done

pass=$(grep -c '^PASS ' "$RESULTS")
fail=$(grep -c '^FAIL ' "$RESULTS")
skip=$(grep -c '^SKIP ' "$RESULTS")
if [ "$fail" -gt 0 ]; then
    echo "failed: $(sed -n 's/^FAIL //p' "$RESULTS" | paste -sd' ')"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
