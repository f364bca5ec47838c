#!/usr/bin/env bash
# run.walltime: the run checkpoints and exits 3 before the limit (measured by the driver, no signal),
# every rank stops at the same step (a collective decision), and the restart ends bitwise where an
# uninterrupted run ends.
set -u
. "$(dirname "$0")/lib.sh"

# A heat case far too long to finish (t_end = 100: millions of steps): only the wall time stops it.
cat > w.ini <<EOF
[run]
solver = heat
device = $DEVICE
allow_shared_gpu = true
[heat]
ndim = 2
n = 48 40
t_end = 100
initial = gaussian
sigma = 0.1
center = 0.4 0.5
bc_ylo = periodic
bc_yhi = periodic
source = gaussian
Q = 100
source_center = 0.6 0.5
[output]
every_steps = 25
EOF

# the step a stopped run reached, from its summary line
stop_step() { sed -n 's/.*stopped before run.walltime at step \([0-9]*\),.*/\1/p' "$1" | head -1; }

# 1. one rank, the real clock: a 2 s limit with 0.6 s reserve (closing took up to 0.36 s on a
#    loaded 2-core machine: with 0.3 s the run once ended at 2.06 s)
t0=$(date +%s.%N)
"$HS_BIN" run w.ini --quiet run.walltime=00:00:02 run.walltime_reserve=0.6 output.path=cut checkpoint.path=cut.ck >o1 2>e1
rc=$?
t1=$(date +%s.%N)
k=$(stop_step o1)
wall=$(sed -n 's/.*wall time \([0-9.]*\) s$/\1/p' o1)
if [ $rc = 3 ] && [ -s cut.ck ] && [ -f cut.$EXT.partial ] && [ ! -f cut.$EXT ] && [ -n "$k" ] && [ "$k" -gt 0 ] &&
    grep -q "stopped before run.walltime = 00:00:02 at step $k" e1; then
    ok "walltime 00:00:02: exit 3 at step $k with a checkpoint, output left as .partial"
else
    bad "walltime stop: exit $rc, step '$k', files $(ls | tr '\n' ' '), out: $(cat o1) err: $(cat e1)"
fi
# before the limit: the driver's own clock (from the run's start) and the whole process (MPI start
# and finalize included, which the reserve is for) both
if [ -n "$wall" ] && awk -v w="$wall" -v a="$t0" -v b="$t1" 'BEGIN { exit !(w > 0 && w < 2.0 && b - a < 2.0 + 3.0) }'; then
    ok "stopped before the limit: run wall time $wall s < 2 s (process $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s)"
else
    bad "wall time $wall s (process $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s) for a 2 s limit"
fi
if "$HS_BIN" summary cut.$EXT.partial >s1 2>&1 && grep -q "stopped      : walltime (before run.walltime = 00:00:02)" s1 &&
    grep -q "at           : step $k," s1 && grep -q "continue from the checkpoint: hpcsim run ... --restart cut.ck$" s1; then
    ok "summary of the stopped file: walltime at step $k, continue from cut.ck"
else
    bad "summary of the stopped file: $(head -12 s1)"
fi

# 2. the restart runs on to step k + 40; an uninterrupted run to the same step: bitwise equal
if [ -n "$k" ]; then
    end=$((k + 40))
    "$HS_BIN" run w.ini --quiet run.max_steps=$end output.path=cut checkpoint.path=cut2.ck --restart cut.ck >o2 2>e2 ||
        bad "restart: $(cat e2)"
    "$HS_BIN" run w.ini --quiet run.max_steps=$end output.path=whole >o3 2>e3 || bad "uninterrupted run: $(cat e3)"
    if "$HS_BIN" compare whole.$EXT cut.$EXT T >c 2>&1 && "$HS_BIN" compare whole.$EXT cut.$EXT time >>c 2>&1; then
        ok "restart after the walltime stop equals the uninterrupted run to step $end bitwise"
    else
        bad "restart after the walltime stop differs: $(cat c)"
    fi
    if "$HS_BIN" summary cut.$EXT >s2 2>&1 && grep -q "restarted    : from cut.ck at step $k$" s2 &&
        grep -q "stopped      : max_steps" s2; then
        ok "summary of the restarted file: from cut.ck at step $k, stopped at run.max_steps"
    else
        bad "summary after the restart: $(head -12 s2)"
    fi
fi

# 3. checkpoint.on_signal = false: the wall-time stop still writes its checkpoint
"$HS_BIN" run w.ini --quiet run.walltime=00:00:01 run.walltime_reserve=0.2 checkpoint.on_signal=false output.path=nosig \
    checkpoint.path=nosig.ck >o4 2>e4
rc=$?
if [ $rc = 3 ] && [ -s nosig.ck ]; then ok "walltime with checkpoint.on_signal = false: exit 3 with a checkpoint"
else bad "walltime without on_signal: exit $rc: $(cat e4)"; fi

# 4. two ranks, one of which alone finds the time running out (its clock put an hour ahead by the
#    test hook): both stop at the same step with one checkpoint; a decision that was not collective
#    would hang (timeout) or leave ranks at different steps
if [ $HAVE_MPI = 1 ]; then
    for r in 1 0; do
        HS_TEST_WALLTIME_SKEW=$r:3600 timeout 120 "${MPIRUN[@]}" -x HS_TEST_WALLTIME_SKEW -n 2 "$HS_BIN" run w.ini --quiet \
            run.walltime=01:00:00 output.path=two$r checkpoint.path=two$r.ck >o5 2>e5
        rc=$?
        k2=$(stop_step o5)
        if [ $rc = 3 ] && [ -s two$r.ck ] && [ -n "$k2" ] && [ "$(grep -c 'stopped before run.walltime' o5)" = 1 ]; then
            ok "2 ranks, only rank $r's clock late: both stop at step $k2, exit 3"
        else
            bad "2 ranks, rank $r late: exit $rc, step '$k2': $(cat o5 e5 | grep hpcsim)"
            continue
        fi
        end=$((k2 + 30))
        "${MPIRUN[@]}" -n 2 "$HS_BIN" run w.ini --quiet run.max_steps=$end output.path=two$r checkpoint.path=two$r.b \
            --restart two$r.ck >o6 2>e6 || bad "2-rank restart: $(grep hpcsim e6)"
        [ -f whole2_$end.$EXT ] || "${MPIRUN[@]}" -n 2 "$HS_BIN" run w.ini --quiet run.max_steps=$end output.path=whole2_$end \
            >o7 2>e7 || bad "2-rank uninterrupted run: $(grep hpcsim e7)"
        if "$HS_BIN" compare whole2_$end.$EXT two$r.$EXT T >c 2>&1 && "$HS_BIN" compare whole2_$end.$EXT two$r.$EXT time >>c 2>&1; then
            ok "2 ranks: the restart equals the uninterrupted 2-rank run to step $end bitwise"
        else
            bad "2 ranks: restart differs: $(cat c)"
        fi
    done
else
    echo "skip the two-rank cases: no MPI in this build"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
