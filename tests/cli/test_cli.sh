#!/usr/bin/env bash
# The command line itself: --help of every command, options before or after the file, overrides
# anywhere, '--', unknown options (exit 2 with a hint), one "hpcsim: error:" prefix per message.
set -u
. "$(dirname "$0")/lib.sh"

# runs COMMAND..., leaving stdout in $CAP/out, stderr in $CAP/err and the status in $rc
try() { "$@" >"$CAP/out" 2>"$CAP/err"; rc=$?; }

# help NAME COMMAND...: exit 0, a usage line that names the command on stdout, nothing on stderr
help_ok() {
    local name=$1
    shift
    try "$HS_BIN" "$@"
    if [ $rc = 0 ] && grep -q "^usage: hpcsim $name" "$CAP/out" && [ ! -s "$CAP/err" ]; then ok "hpcsim $* (exit 0, usage of '$name')"
    else bad "hpcsim $*: exit $rc; stdout: $(head -c 200 "$CAP/out"); stderr: $(head -c 200 "$CAP/err")"; fi
}

# usage_err NAME EXPECTED_STDERR COMMAND...: exit 2 and exactly that one line on stderr
usage_err() {
    local name=$1 want=$2
    shift 2
    try "$HS_BIN" "$@"
    if [ $rc = 2 ] && [ "$(cat "$CAP/err")" = "$want" ]; then ok "$name"
    else printf 'FAIL %s: exit %s\n  got:      %s\n  expected: %s\n' "$name" "$rc" "$(cat "$CAP/err")" "$want"; fail=$((fail + 1)); fi
}

for cmd in info check run params summary compare help; do
    help_ok $cmd $cmd --help
    help_ok $cmd $cmd -h
    help_ok $cmd help $cmd
done
help_ok "\[--help" --help
help_ok "\[--help" help
grep -q -- "--restart CHECKPOINT" <("$HS_BIN" run --help) && ok "run --help names --restart" || bad "run --help lacks --restart"
grep -q -- "--quiet" <("$HS_BIN" run --help) && ok "run --help names --quiet" || bad "run --help lacks --quiet"
grep -q -- "--last" <("$HS_BIN" compare --help) && ok "compare --help names --last" || bad "compare --help lacks --last"

printf '[run]\nsolver = selftest\ndevice = cpu\n[selftest]\nn = 1000\n' > good.ini
# check_n NAME WANT_N COMMAND...: the run is valid and selftest.n resolves to WANT_N
check_n() {
    local name=$1 want=$2
    shift 2
    try "$HS_BIN" "$@"
    if [ $rc = 0 ] && grep -q "^n = $want " "$CAP/out"; then ok "$name"
    else bad "$name: exit $rc; $(grep -E '^n =|hpcsim' "$CAP/out" "$CAP/err" | head -3)"; fi
}
check_n "override after the file" 5 check good.ini selftest.n=5
check_n "override before the file" 6 check selftest.n=6 good.ini
check_n "overrides on both sides, the last wins" 8 check selftest.n=7 good.ini selftest.n=8
check_n "'--' then the file" 9 check -- good.ini selftest.n=9
check_n "an override after '--'" 1000 check good.ini -- run.seed=3
try "$HS_BIN" check good.ini -- --help
[ $rc = 2 ] && grep -q "(override 1): '--help': expected section.key=value" "$CAP/err" && ok "'--' ends the options" ||
    bad "'--' does not end the options: exit $rc: $(cat "$CAP/err")"

for args in "--quiet good.ini" "good.ini --quiet" "-q good.ini selftest.n=2000" "selftest.n=2000 --quiet good.ini"; do
    # shellcheck disable=SC2086
    try "$HS_BIN" run $args
    [ $rc = 0 ] && ok "run $args" || bad "run $args: exit $rc: $(cat "$CAP/err")"
done
# --restart before and after the file reaches the parameters (selftest refuses checkpoints: exit 2, the key named)
for args in "--restart ck.h5 good.ini" "good.ini --restart ck.h5" "good.ini --restart=ck.h5" "-r ck.h5 good.ini"; do
    # shellcheck disable=SC2086
    try "$HS_BIN" run $args
    [ $rc = 2 ] && grep -q "run.restart: solver selftest cannot restart" "$CAP/err" && ok "run $args sets run.restart" ||
        bad "run $args: exit $rc: $(cat "$CAP/err")"
done
# a checkpoint that is missing, a folder or no checkpoint is the key's error, located where
# run.restart came from (the message named the checkpoint alone: "nock.h5: cannot read the checkpoint")
printf '[run]\nsolver = heat\n[heat]\nn = 8\nt_end = 0.001\n' > heat.ini
printf '[run]\nsolver = heat\nrestart = nock.h5\n[heat]\nn = 8\nt_end = 0.001\n' > heatr.ini
mkdir -p ckdir
printf 'junk' > junk.h5
for cmd in check run; do
    for c in "--restart nock.h5|command line (--restart): run.restart: cannot open checkpoint nock.h5: No such file or directory" \
             "run.restart=ckdir|command line (override 1): run.restart: checkpoint ckdir is not a regular file (a directory)" \
             "--restart junk.h5|command line (--restart): run.restart: junk.h5: not an hpcsim checkpoint (neither HDF5 nor our binary format)"; do
        # shellcheck disable=SC2086
        try "$HS_BIN" $cmd heat.ini ${c%%|*} output.path=nockout --quiet
        [ $rc = 2 ] && grep -qxF "hpcsim: error: ${c#*|}" "$CAP/err" && ! ls nockout* >/dev/null 2>&1 &&
            ok "$cmd ${c%%|*}: exit 2, run.restart named" || bad "$cmd ${c%%|*}: exit $rc: $(cat "$CAP/err")"
    done
    try "$HS_BIN" $cmd heatr.ini output.path=nockout --quiet
    [ $rc = 2 ] && grep -qxF "hpcsim: error: heatr.ini:3: run.restart: cannot open checkpoint nock.h5: No such file or directory" "$CAP/err" &&
        ok "$cmd: a missing checkpoint named in the file: its line and key" || bad "$cmd heatr.ini: exit $rc: $(cat "$CAP/err")"
done

usage_err "unknown option" "hpcsim: error: unknown option '--frobnicate' (see 'hpcsim run --help')" run good.ini --frobnicate
usage_err "unknown option before the file" "hpcsim: error: unknown option '--frobnicate' (see 'hpcsim check --help')" check --frobnicate good.ini
usage_err "unknown short option" "hpcsim: error: unknown option '-z' (see 'hpcsim run --help')" run -z good.ini
usage_err "another command's option" "hpcsim: error: '--quiet' is not an option of this command (see 'hpcsim info --help')" info --quiet
# (--restart=none: check now opens a named checkpoint, as run does; selftest cannot restart)
check_n "check takes run's options" 1000 check --quiet good.ini --restart=none
usage_err "option without its value" "hpcsim: error: option '--restart' needs a value (see 'hpcsim run --help')" run good.ini --restart
usage_err "unknown option before the command" "hpcsim: error: unknown option '--frobnicate' (see 'hpcsim --help')" --frobnicate
usage_err "unknown command" "hpcsim: error: unknown command 'frobnicate' (see 'hpcsim --help')" frobnicate
usage_err "help of an unknown command" "hpcsim: error: unknown command 'frobnicate' (see 'hpcsim --help')" help frobnicate
usage_err "run without a file" "hpcsim: error: 'run' needs a parameter file (see 'hpcsim run --help')" run --quiet
usage_err "info with an argument" "hpcsim: error: 'info' takes no arguments, got 'x' (see 'hpcsim info --help')" info x
usage_err "compare with too few arguments" \
    "hpcsim: error: 'compare' needs two files and a variable name (see 'hpcsim compare --help')" compare a.nc b.nc
usage_err "compare with a bad RTOL" "hpcsim: error: RTOL must be a finite number >= 0, got 'nan' (see 'hpcsim compare --help')" \
    compare a.nc b.nc T nan
# RTOL reads as parameter files' reals: '1e400' and 'inf' made every pair of files agree (exit 0),
# '0x1' was 1 and '' was 0
for r in 1e400 inf 0x1 ""; do
    usage_err "compare with RTOL '$r'" "hpcsim: error: RTOL must be a finite number >= 0, got '$r' (see 'hpcsim compare --help')" \
        compare a.nc b.nc T "$r"
    usage_err "compare --all with RTOL '$r'" "hpcsim: error: RTOL must be a finite number >= 0, got '$r' (see 'hpcsim compare --help')" \
        compare --all a.nc b.nc "$r"
done

# compare: --last takes the last record of record variables only (a coordinate was cut to its last
# value and a change at its start passed); equal bits agree under any tolerance (two files with a
# NaN at one place differed at 1e-3); a text variable is an input error (it failed as a reader
# error, exit 1, which reads as "differ")
if command -v ncgen >/dev/null && "$HS_BIN" --version | grep -q '+netcdf'; then
    cdl() { printf 'netcdf c {\ndimensions:\n time = UNLIMITED ;\n x = 3 ;\n n = 4 ;\nvariables:\n double time(time) ;\n double x(x) ;\n double T(time, x) ;\n char name(n) ;\ndata:\n time = 0, %s ;\n x = %s, 1, 2 ;\n T = 1, 2, 3, 4, %s, 6 ;\n name = "abcd" ;\n}\n' "${3:-1}" "$1" "$2"; }
    cdl 0 5 | ncgen -o c1.nc; cdl -1 5 | ncgen -o c2.nc; cdl 0 NaN | ncgen -o c3.nc; cdl 0 NaN | ncgen -o c4.nc; cdl 0 5 2 | ncgen -o c5.nc
    "$HS_BIN" compare c1.nc c2.nc x --last >"$CAP/out" 2>&1; r1=$?
    "$HS_BIN" compare c1.nc c2.nc T --last >/dev/null 2>&1; r2=$?
    [ $r1 = 1 ] && [ $r2 = 0 ] && ok "compare --last: a coordinate compared whole, a record variable at its last record" ||
        bad "compare --last: x exit $r1 ($(cat "$CAP/out")), T exit $r2"
    "$HS_BIN" compare c3.nc c4.nc T 1e-3 >"$CAP/out" 2>&1 && ok "compare: NaN at the same place agrees under a tolerance" ||
        bad "compare NaN: $(cat "$CAP/out")"
    "$HS_BIN" compare c1.nc c3.nc T 1e-3 >/dev/null 2>&1; [ $? = 1 ] && ok "compare: NaN against a number differs" || bad "compare: NaN against 5 agreed"
    # packed values are compared as their readers see them (CF: unpacked, the fill missing): the stored
    # integers were compared, so a packed field and the same field unpacked differed
    printf 'netcdf p {\ndimensions:\n x = 4 ;\nvariables:\n short v(x) ;\n  v:scale_factor = 0.5 ;\n  v:add_offset = 10. ;\n  v:_FillValue = -1s ;\ndata:\n v = 0, 2, -1, 4 ;\n}\n' | ncgen -o packed.nc
    printf 'netcdf u {\ndimensions:\n x = 4 ;\nvariables:\n double v(x) ;\ndata:\n v = 10, 11, NaN, 12 ;\n}\n' | ncgen -o unpacked.nc
    "$HS_BIN" compare packed.nc unpacked.nc v >"$CAP/out" 2>&1 && ok "compare: a packed field agrees with the same field unpacked" ||
        bad "compare packed vs unpacked: $(cat "$CAP/out")"
    # _Unsigned bytes: the fill and valid_range are unsigned like the data (NUG; netCDF4-python masks so):
    # valid_range (10, -56) is 10..200; it was compared signed, so 0 and 5 passed and 100 was missing
    printf 'netcdf b {\ndimensions:\n x = 8 ;\nvariables:\n byte v(x) ;\n  v:_Unsigned = "true" ;\n  v:valid_range = 10b, -56b ;\n  v:_FillValue = -1b ;\n  v:scale_factor = 0.5 ;\ndata:\n v = 0, 5, 10, 100, -56, -55, -6, -1 ;\n}\n' | ncgen -o ubyte.nc
    printf 'netcdf u {\ndimensions:\n x = 8 ;\nvariables:\n double v(x) ;\ndata:\n v = NaN, NaN, 5, 50, 100, NaN, NaN, NaN ;\n}\n' | ncgen -o ubyte_ref.nc
    "$HS_BIN" compare ubyte.nc ubyte_ref.nc v >"$CAP/out" 2>&1 && ok "compare: _Unsigned bytes with a fill and valid_range read as unsigned" ||
        bad "compare _Unsigned valid_range: $(cat "$CAP/out")"
    # more missing values than the reader keeps, or a valid_range that is not two numbers: refused (the
    # values cut off would pass as data)
    printf 'netcdf a {\ndimensions:\n x = 4 ;\nvariables:\n double v(x) ;\n  v:missing_value = 1., 2., 3., 4., 5., 6., 7., 8., 9. ;\ndata:\n v = 0, 2, 10, 4 ;\n}\n' | ncgen -o mv9.nc
    printf 'netcdf a {\ndimensions:\n x = 4 ;\nvariables:\n double v(x) ;\n  v:valid_range = 1. ;\ndata:\n v = 0, 2, 10, 4 ;\n}\n' | ncgen -o vr1.nc
    "$HS_BIN" compare mv9.nc mv9.nc v >"$CAP/out" 2>&1; r1=$?
    grep -q "missing_value has more than 8 values" "$CAP/out" || r1=x
    "$HS_BIN" compare vr1.nc vr1.nc v >"$CAP/out" 2>&1; r2=$?
    grep -q "valid_range must be two numbers" "$CAP/out" || r2=x
    [ "$r1 $r2" = "2 2" ] && ok "nine missing values and a one-number valid_range: exit 2 naming them" || bad "missing_value/valid_range: $r1 $r2"
    # --last of two files whose last records are of different times (runs stopped at different steps)
    "$HS_BIN" compare c1.nc c5.nc T --last >"$CAP/out" 2>&1; r=$?
    [ $r = 2 ] && grep -q "the last record is at 2 here and at 1 in c1.nc" "$CAP/out" && ok "compare --last of records at different times: exit 2" ||
        bad "compare --last, different times: exit $r $(cat "$CAP/out")"
    "$HS_BIN" compare c1.nc c2.nc name >"$CAP/out" 2>&1; r=$?
    [ $r = 2 ] && grep -q "name: a text variable" "$CAP/out" && ok "compare of a text variable: exit 2" || bad "compare text: exit $r $(cat "$CAP/out")"
    # a classic file shorter than its header says (an interrupted copy) is an input error: the
    # netCDF library read the missing bytes as zeros. Cut 8 bytes (the last double of T, or the
    # padding and part of x when x comes last) from each classic kind: CDF-1, CDF-2, CDF-5
    for kind in 1 2 5; do
        cdl 0 5 | ncgen -k $kind -o whole$kind.nc
        head -c -8 whole$kind.nc > cut$kind.nc
        "$HS_BIN" compare whole$kind.nc whole$kind.nc T >/dev/null 2>&1; r0=$?
        "$HS_BIN" compare cut$kind.nc whole$kind.nc T >"$CAP/out" 2>&1; r=$?
        [ $r0 = 0 ] && [ $r = 2 ] && grep -q "cut$kind.nc: a truncated NetCDF file: its header places data up to byte" "$CAP/out" &&
            ok "a truncated CDF-$kind file: exit 2 naming it" || bad "truncated CDF-$kind: whole exit $r0, cut exit $r: $(cat "$CAP/out")"
    done
fi

# Every error message carries the prefix once.
for args in "frobnicate" "run" "run good.ini --frobnicate" "check nonexistent.ini" "check good.ini selftest.n=0"; do
    # shellcheck disable=SC2086
    try "$HS_BIN" $args
    n=$(grep -o "hpcsim:" "$CAP/err" | wc -l)
    [ "$n" = 1 ] && ok "one 'hpcsim:' prefix: $args" || bad "prefix count $n for '$args': $(cat "$CAP/err")"
done

# Under MPI the help and a usage error are printed once (rank 0), and the job exits 0 / 2.
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    MPIRUN=(mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2)
    try "${MPIRUN[@]}" "$HS_BIN" run --help
    [ $rc = 0 ] && [ "$(grep -c '^usage: hpcsim run' "$CAP/out")" = 1 ] && ok "MPI: run --help printed once" ||
        bad "MPI: run --help: exit $rc, $(grep -c '^usage' "$CAP/out") usage lines"
    try "${MPIRUN[@]}" "$HS_BIN" check good.ini --frobnicate
    [ $rc = 2 ] && [ "$(grep -c '^hpcsim: error:' "$CAP/err")" = 1 ] && ok "MPI: a usage error printed once, exit 2" ||
        bad "MPI: usage error: exit $rc: $(grep hpcsim "$CAP/err")"
fi

# Counts of one say "1 rank", not "1 ranks" (the pinn summary line).
printf '[run]\nsolver = pinn\ndevice = cpu\n[pinn]\ndepth = 2\nwidth = 4\nn_collocation = 50\nn_boundary = 10\nadam_iterations = 3\nlbfgs_iterations = 0\nhistory_path = hist\n[output]\npath = pinn\n' > pinn.ini
try "$HS_BIN" run pinn.ini
if [ $rc != 0 ]; then bad "pinn run for the rank count: exit $rc: $(cat "$CAP/err")"
elif grep -q "1 ranks" "$CAP/out"; then bad "'1 ranks' in: $(grep '1 ranks' "$CAP/out")"
elif grep -q ", 1 rank:" "$CAP/out"; then ok "'1 rank' in the pinn summary"
else bad "no rank count in the pinn summary: $(grep '^pinn:' "$CAP/out" | head -2)"; fi

# A run whose end is far out of reach (t_end 1e12 s in steps of 0.0035 s, stopped by max_steps)
# prints an ETA of ~1e8 s or more: the progress line stays one short line with the ETA in %.3g form
# (a 300-digit ETA, from t_end = 1e300, once overflowed the line's buffer: a segfault at the first
# progress line; t_end that far beyond the step is now refused as bad input, the bounded line stays).
printf '[run]\nsolver = heat\ndevice = cpu\nmax_steps = 400000\nprogress_interval = 0.1\n[heat]\nn = 8 8\nt_end = 1e12\n[output]\nformat = none\n' > eta.ini
try "$HS_BIN" run eta.ini
eta=$(grep -m1 -o 'ETA [^ ]* s' "$CAP/err")
if [ $rc = 0 ] && grep -q 'e+' <<<"$eta" && [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$CAP/err")" -lt 120 ]; then ok "progress line with a huge ETA ($eta), exit 0"
else bad "progress line with a huge ETA: exit $rc, longest line $(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$CAP/err"): $(tail -c 300 "$CAP/err")"; fi

# An MPI singleton (no launcher) of an Open MPI 4 build starts with hpcsim's start-up defaults:
# in-node transports and hwloc's GPU plugins left out (their driver and NVML start made MPI_Init
# 0.2-0.35 s on the H200 machine); a value the user set is kept, HS_MPI_SINGLETON_DEFAULTS=0 turns
# them off, and a launched rank never gets them.
if [ "${HAVE_MPI:-0}" = 1 ] && mpirun --version 2>/dev/null | grep -q 'Open MPI) 4\.'; then
    try env -u HWLOC_COMPONENTS "$HS_BIN" info
    if [ $rc = 0 ] && grep -q '^MPI start-up: [0-9.]* s (a singleton: .*HWLOC_COMPONENTS=-cuda,-nvml,' "$CAP/out"; then ok "singleton start-up defaults (info: $(grep -o '^MPI start-up: [0-9.]* s' "$CAP/out"))"
    else bad "singleton start-up defaults: exit $rc: $(grep -i 'MPI' "$CAP/out")"; fi
    try env HWLOC_COMPONENTS=-gl "$HS_BIN" info
    if [ $rc = 0 ] && grep -q '(a singleton: .*HWLOC_COMPONENTS=-gl;' "$CAP/out"; then ok "the user's HWLOC_COMPONENTS is kept"
    else bad "the user's HWLOC_COMPONENTS: exit $rc: $(grep -i 'MPI start' "$CAP/out")"; fi
    try env HS_MPI_SINGLETON_DEFAULTS=0 "$HS_BIN" info
    if [ $rc = 0 ] && grep -q '^MPI start-up: [0-9.]* s$' "$CAP/out"; then ok "HS_MPI_SINGLETON_DEFAULTS=0 keeps Open MPI's own"
    else bad "HS_MPI_SINGLETON_DEFAULTS=0: exit $rc: $(grep -i 'MPI start' "$CAP/out")"; fi
    "${MPIRUN[@]}" -np 1 "$HS_BIN" info >"$CAP/out" 2>"$CAP/err"; rc=$?
    if [ $rc = 0 ] && grep -q '^MPI start-up: [0-9.]* s$' "$CAP/out"; then ok "a launched rank gets no singleton defaults"
    else bad "launched rank: exit $rc: $(grep -i 'MPI start' "$CAP/out") $(head -c 300 "$CAP/err")"; fi
fi

# Ranks of one node share its CPUs: without OMP_NUM_THREADS each of N unbound ranks runs at most
# CPUs/N threads (each used to start a team of every CPU: 4 ranks on 2 cores ran 8 spinning threads,
# a 0.7 s QAOA run took 400 s); a value the user set is kept and, when ranks x threads exceed the
# CPUs, warned of once.
if [ "${HAVE_MPI:-0}" = 1 ]; then
    ncpu=$(nproc --all)
    for np in 2 4; do
        env -u OMP_NUM_THREADS mpirun --oversubscribe --allow-run-as-root -np $np "$HS_BIN" info >"$CAP/out" 2>"$CAP/err"; rc=$?
        share=$(( ncpu / np )); [ $share -lt 1 ] && share=1
        teams=$(sed -n 's/.*, \([0-9]*\) OpenMP thread(s).*/\1/p' "$CAP/out" | sort -u | paste -sd,)
        if [ $rc = 0 ] && [ -n "$teams" ] && awk -v t="$teams" -v s=$share 'BEGIN { n = split(t, a, ","); for (i = 1; i <= n; i++) if (a[i] > s) exit 1 }'; then
            ok "$np ranks on $ncpu CPUs without OMP_NUM_THREADS: $teams thread(s) each (at most $share)"
        else bad "$np ranks on $ncpu CPUs: exit $rc, teams '$teams' (at most $share expected): $(head -c 300 "$CAP/err")"; fi
    done
    want=$(( ncpu + 1 ))
    mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=$want -np 2 "$HS_BIN" info >"$CAP/out" 2>"$CAP/err"; rc=$?
    teams=$(sed -n 's/.*, \([0-9]*\) OpenMP thread(s).*/\1/p' "$CAP/out" | sort -u | paste -sd,)
    nwarn=$(grep -c "warning: 2 ranks x OMP_NUM_THREADS=$want threads on a node of $ncpu CPUs" "$CAP/err")
    if [ $rc = 0 ] && [ "$teams" = "$want" ] && [ "$nwarn" = 1 ]; then ok "OMP_NUM_THREADS=$want kept on 2 ranks, oversubscription warned of once"
    else bad "OMP_NUM_THREADS=$want on 2 ranks: exit $rc, teams '$teams', $nwarn warning(s): $(head -c 300 "$CAP/err")"; fi
    # one thread per rank has nothing to shrink: more ranks than CPUs are not the threads' doing
    # (the warning advised "OMP_NUM_THREADS=1 would not" to runs that set OMP_NUM_THREADS=1)
    mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -np $(( ncpu + 1 )) "$HS_BIN" info >"$CAP/out" 2>"$CAP/err"; rc=$?
    if [ $rc = 0 ] && ! grep -q "OMP_NUM_THREADS=1 threads" "$CAP/err"; then ok "OMP_NUM_THREADS=1 on $(( ncpu + 1 )) ranks: no thread warning"
    else bad "OMP_NUM_THREADS=1 on $(( ncpu + 1 )) ranks: exit $rc: $(head -c 300 "$CAP/err")"; fi
fi

# HS_TIMELINE=1: the run's stages on stderr, in order, with non-decreasing times since the process
# started (the device's stages, where a GPU is used, come between); nothing of it without the variable
try env HS_TIMELINE=1 "$HS_BIN" run good.ini output.format=none
want="main|MPI ready|solver create|solver created|time loop done|solver finished|solver destroyed|MPI finalized, returning from main"
got=$(sed -n 's/^hpcsim timeline: [0-9.]* s //p' "$CAP/err" | grep -v -E '^(CUDA driver|device context)' | paste -sd'|')
if [ $rc = 0 ] && [ "$got" = "$want" ] &&
    sed -n 's/^hpcsim timeline: \([0-9.]*\) s .*/\1/p' "$CAP/err" | awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { exit bad }'; then
    ok "HS_TIMELINE=1 prints the stages in order ($(grep -c '^hpcsim timeline:' "$CAP/err") lines)"
else bad "HS_TIMELINE=1: exit $rc, stages '$got'"; fi
try "$HS_BIN" run good.ini output.format=none
if [ $rc = 0 ] && ! grep -q 'timeline' "$CAP/err"; then ok "no timeline without HS_TIMELINE"
else bad "timeline lines without HS_TIMELINE (exit $rc)"; fi

# run.device = cuda in a build without CUDA: known from the file and the build alone, so the key's
# error (exit 2, file:line), from check as from run (it was a runtime failure, exit 1, no key)
if ! "$HS_BIN" --version | grep -q '+cuda'; then
    printf '[run]\nsolver = heat\ndevice = cuda\n' > nocuda.ini
    for cmd in check run; do
        try "$HS_BIN" $cmd nocuda.ini
        [ $rc = 2 ] && grep -q "nocuda.ini:3: run.device: cuda: this build has no CUDA backend" "$CAP/err" &&
            ok "$cmd: device = cuda without CUDA is the key's error" || bad "$cmd device = cuda: exit $rc: $(cat "$CAP/err")"
    done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
