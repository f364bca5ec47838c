#!/usr/bin/env bash
# The Slurm job scripts on a real single-host cluster (scripts/slurm/local_cluster.sh): the heat example
# with 2 tasks through sbatch equals the same run under mpirun bitwise; OMP_NUM_THREADS follows
# --cpus-per-task; --help runs no srun; a GPU request only in the GPU script; a sweep as a job array
# (values reach the members, time steps scale as k n^2); the preemption path (USR1 to the batch
# shell, checkpoint, exit 3, requeue, restart) ends bitwise equal to the uninterrupted job; SIGTERM to
# the whole job checkpoints without a requeue, and a resubmission with HS_CHECKPOINT continues it.
# Exit 77 when Slurm cannot be installed or started here.
set -u
HS_BIN=$(realpath "${HS_BIN:-bin/hpcsim}")
ROOT=$(realpath "$(dirname "$0")/../..")
S=$ROOT/scripts/slurm
export HS_BIN
"$HS_BIN" --version | grep -q '+mpi' || { echo "SKIP  this build has no MPI (srun starts MPI ranks)"; exit 77; }
# the cluster's node has no GPUs: the Slurm path is tested in the CPU suite (make test), not in make test-gpu
[ "${HS_TEST_DEVICE:-cpu}" = cuda ] && { echo "SKIP  the local Slurm cluster runs the CPU suite only"; exit 77; }
started=0
"$S/local_cluster.sh" start >/dev/null 2>"${TMPDIR:-/tmp}/hs_slurm_start.$$"
rc=$?
if [ $rc != 0 ]; then
    msg=$(tail -1 "${TMPDIR:-/tmp}/hs_slurm_start.$$")
    rm -f "${TMPDIR:-/tmp}/hs_slurm_start.$$"
    [ $rc = 77 ] && { echo "SKIP  no local Slurm cluster: $msg"; exit 77; }
    echo "FAIL local_cluster.sh start: exit $rc: $msg"
    exit 1
fi
grep -q "up: node" "${TMPDIR:-/tmp}/hs_slurm_start.$$" && started=1
rm -f "${TMPDIR:-/tmp}/hs_slurm_start.$$"
eval "$("$S/local_cluster.sh" env)"
# sourced only here, after the cluster is up: the daemons start from the caller's folder, not the scratch one
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
on_exit() {
    scancel --name=hs-test >/dev/null 2>&1
    [ $started = 1 ] && [ "${HS_SLURM_KEEP:-0}" != 1 ] && "$S/local_cluster.sh" stop >/dev/null 2>&1
}

# wait_job ID [SECONDS]: until the job (all its array tasks) has left the queue
wait_job() {
    local t=0
    while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
        sleep 1
        t=$((t + 1))
        [ $t -ge "${2:-180}" ] && { echo "job $1 still queued after ${2:-180} s: $(squeue -h -j "$1")"; return 1; }
    done
}
cp "$ROOT/inputs/heat2d.ini" .

# 1. --help prints the usage and runs no srun (a recording srun first on PATH); GPUs only in the GPU script
mkdir fake
printf '#!/bin/sh\necho called >> %s/srun_called\n' "$WORK" > fake/srun
chmod +x fake/srun
for s in hpcsim_cpu hpcsim_gpu hpcsim_preemptible; do
    if PATH=$WORK/fake:$PATH "$S/$s.sbatch" --help >help.txt 2>&1 && grep -q "^usage: sbatch" help.txt && [ ! -e srun_called ]; then
        ok "$s.sbatch --help: usage, no srun"
    else
        bad "$s.sbatch --help: $(head -3 help.txt), srun called: $([ -e srun_called ] && echo yes || echo no)"
    fi
done
if grep -q '^#SBATCH --gpus' "$S/hpcsim_gpu.sbatch" && ! grep -q '^#SBATCH --gpu' "$S/hpcsim_cpu.sbatch" "$S/hpcsim_preemptible.sbatch" &&
    sbatch --test-only "$S/hpcsim_cpu.sbatch" heat2d.ini >/dev/null 2>&1 && ! sbatch --test-only "$S/hpcsim_gpu.sbatch" heat2d.ini >/dev/null 2>&1; then
    ok "sbatch accepts the CPU script and refuses the GPU script's request on a node without GPUs"
else
    bad "GPU request: cpu script $(sbatch --test-only "$S/hpcsim_cpu.sbatch" heat2d.ini 2>&1 | tail -1); gpu script $(sbatch --test-only "$S/hpcsim_gpu.sbatch" heat2d.ini 2>&1 | tail -1)"
fi

# 2. OMP_NUM_THREADS from --cpus-per-task
jid=$(sbatch --parsable --job-name=hs-test --ntasks-per-node=1 --cpus-per-task=2 --output=info-%j.out "$S/hpcsim_cpu.sbatch" info)
wait_job "$jid" 60
if grep -q ", 2 OpenMP thread(s)" info-"$jid".out; then ok "--cpus-per-task=2: the rank runs 2 OpenMP threads"
else bad "threads: $(cat info-"$jid".out)"; fi

# 3. the heat example with 2 tasks through sbatch (run 12 times as long as the file says, so that
#    test 5 can interrupt it: at 4 times, 0.8 s on CI's machine, the job had ended before the signal
#    came), against the same run under mpirun
LONG=heat.t_end=0.24
jid=$(sbatch --parsable --job-name=hs-test --ntasks-per-node=2 --output=heat-%j.out "$S/hpcsim_cpu.sbatch" heat2d.ini $LONG output.path=slurm)
wait_job "$jid" 240
mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" run heat2d.ini $LONG --quiet output.path=direct >/dev/null 2>&1 ||
    bad "the mpirun reference run failed"
if grep -q "hpcsim: finished at step [0-9]*, t = 0.24" heat-"$jid".out && "$HS_BIN" compare direct."$EXT" slurm."$EXT" T >c 2>&1 &&
    "$HS_BIN" compare direct."$EXT" slurm."$EXT" time >>c 2>&1 && "$HS_BIN" summary slurm."$EXT" | grep -q "2 ranks x 1 thread"; then
    ok "heat example, 2 tasks via sbatch: finished at t = 0.24, equal to mpirun -n 2 bitwise, 2 ranks x 1 thread"
else
    bad "heat example via sbatch: $(tail -3 heat-"$jid".out) / $(cat c 2>/dev/null)"
fi

# 4. a sweep as a job array: heat.k x heat.n; each member's parameters, its steps (explicit scheme:
#    dt ~ dx^2 / k, so steps ~ k n^2), and the peak falling as k grows
cat > sw.ini <<EOF
[run]
solver = heat
device = cpu
[heat]
ndim = 2
n = 32 32
t_end = 0.01
initial = gaussian
sigma = 0.1
center = 0.5 0.5
[output]
path = heat
every_steps = 20
EOF
if "$S/sweep.py" sw.ini swp heat.k=0.5:2:3:log "heat.n=16 16;32 32" --name hs-test >sweep.txt 2>&1; then
    jid=$(sbatch --parsable swp/sweep.sbatch)
    wait_job "$jid" 120
    python3 "$S/collect.py" swp --csv swp.csv >table.txt 2>&1
    crc=$?
    if [ $crc = 0 ] && python3 - swp.csv <<'PY'; then ok "sweep: 6 members as a job array; k and n reached them, steps ~ k n^2, peak falls with k ($(tr '\n' ' ' <sweep.txt | cut -c1-60))"; else bad "sweep table: $(cat table.txt)"; fi
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 6, rows
for r in rows:
    assert r["state"] == "finished", r
by = {(float(r["heat.k"]), int(r["heat.n"].split()[0])): r for r in rows}
assert sorted(by) == [(0.5, 16), (0.5, 32), (1.0, 16), (1.0, 32), (2.0, 16), (2.0, 32)], sorted(by)
# steps = ceil(t_end / dt) with dt = c dx^2 / k: steps = ceil(C k n^2), C from the largest member
C = int(by[(2.0, 32)]["step"]) / (2.0 * 32 ** 2)
for (k, n), r in by.items():
    want = C * k * n * n
    assert abs(int(r["step"]) - want) < 1, (k, n, r["step"], want)
for n in (16, 32):
    peaks = [float(by[(k, n)]["T_max"]) for k in (0.5, 1.0, 2.0)]
    assert peaks[0] > peaks[1] > peaks[2], peaks
print("ok")
PY
    # the members' own files say the swept values
    if grep -q "^  k = 2$" <("$HS_BIN" summary swp/member_005/heat."$EXT") && grep -q "^  n = 32 32$" <("$HS_BIN" summary swp/member_005/heat."$EXT"); then
        ok "member 5's file holds heat.k = 2, heat.n = 32 32"
    else bad "member 5's parameters: $(cat swp/member_005/overrides)"; fi
else
    bad "sweep.py: $(cat sweep.txt)"
fi
if ! "$S/sweep.py" sw.ini bad heat.kk=1,2 >bad.txt 2>&1 && grep -q "heat.kk" bad.txt && [ ! -e bad ]; then
    ok "sweep.py refuses a misspelt key with hpcsim check's message and writes nothing"
else bad "sweep.py with a bad key: $(cat bad.txt)"; fi
# impossible job geometry and environment numbers: refused before anything is written or run (an
# array of --ntasks=0 was written; HS_MAX_REQUEUES=abc turned the requeue limit off)
for opt in "--ntasks 0" "--cpus-per-task -1" "--max-parallel 0"; do
    # shellcheck disable=SC2086
    if ! "$S/sweep.py" sw.ini geo heat.k=1,2 $opt >bad.txt 2>&1 && grep -q -- "${opt%% *} ${opt#* }: give at least 1" bad.txt && [ ! -e geo ]; then
        ok "sweep.py $opt refused, nothing written"
    else bad "sweep.py $opt: $(cat bad.txt)"; fi
done
for args in "run|'run' needs a parameter file" "nope.ini|nope.ini: no such parameter file"; do
    env SLURM_JOB_ID=999999 bash "$S/hpcsim_cpu.sbatch" ${args%%|*} >bad.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "${args#*|}" bad.txt && ok "hpcsim_cpu.sbatch ${args%%|*}: exit 2 before srun" || bad "cpu sbatch ${args%%|*}: exit $rc: $(cat bad.txt)"
done
for env in HS_MAX_REQUEUES=abc HS_WALLTIME_MARGIN=-5000; do
    env SLURM_JOB_ID=999999 "$env" bash "$S/hpcsim_preemptible.sbatch" sw.ini >bad.txt 2>&1; rc=$?
    [ $rc = 2 ] && grep -q "${env%%=*}=${env#*=}: give a whole number" bad.txt && ok "hpcsim_preemptible.sbatch with $env: exit 2" ||
        bad "preemptible with $env: exit $rc: $(cat bad.txt)"
done
# an absolute output path the members share: they would overwrite one file (collect.py then read one
# member's results for all): refused, nothing written; a folder name with a space is quoted in the
# #SBATCH lines (it broke sbatch: "Invalid directive")
if ! "$S/sweep.py" sw.ini absd heat.k=1,2 --set output.path="$PWD/shared/out" >bad.txt 2>&1 && grep -q "absolute and the same for members 0 and 1" bad.txt &&
    [ ! -e absd ]; then ok "sweep.py refuses an absolute output.path shared by the members"
else bad "sweep.py with a shared absolute output.path: $(cat bad.txt)"; fi
if "$S/sweep.py" sw.ini "sp ace" heat.k=1,2 >sp.txt 2>&1 && grep -q '^#SBATCH --output="'"$PWD"'/sp ace/member_' "sp ace/sweep.sbatch" &&
    grep -q '^#SBATCH --job-name="sweep-sp ace"' "sp ace/sweep.sbatch"; then ok "sweep.py quotes a folder with a space in its #SBATCH lines"
else bad "sweep.py folder with a space: $(cat sp.txt; grep SBATCH "sp ace/sweep.sbatch" 2>/dev/null)"; fi

# 4b. collect.py reports what happened, not the older news: member 0 stopped at max_steps, then ran
#     again and was killed (its .partial is newer than its file: it was reported as the older run);
#     member 1's job failed on bad input before any output (its log has hpcsim's error: it was
#     "missing", like a member that never ran); member 2 never ran (runs by hand: no queue needed)
if "$S/sweep.py" sw.ini col heat.t_end=100,0.01,0.01 --name hs-test >col.txt 2>&1; then
    (cd col/member_000 && "$HS_BIN" run ../../sw.ini heat.t_end=100 run.max_steps=5 --quiet >/dev/null 2>&1)
    sleep 1.1 # a newer modification time on coarse file systems
    (cd col/member_000 && exec "$HS_BIN" run ../../sw.ini heat.t_end=100 --quiet >/dev/null 2>&1) &
    runpid=$!
    for _ in $(seq 100); do [ -e col/member_000/heat."$EXT".partial ] && break; sleep 0.1; done
    sleep 0.3
    kill -KILL $runpid 2>/dev/null
    wait $runpid 2>/dev/null
    (cd col/member_001 && "$HS_BIN" run ../../sw.ini heat.t_end=0.01 heat.k=-1 --quiet >job-9_1.out 2>&1)
    python3 "$S/collect.py" col --csv col.csv >ctab.txt 2>&1
    crc=$?
    if [ $crc = 1 ] && python3 - col.csv <<'PY'; then ok "collect.py: a killed rerun beside an older file, a job with no output, a member not run"; else bad "collect.py states: exit $crc $(cat ctab.txt)"; fi
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
assert [x["state"] for x in r] == ["running/killed", "failed: no output", "missing"], [x["state"] for x in r]
assert "heat.k" in r[1]["error"], r[1]
PY
    # no hpcsim to read the files with: a message, exit 2 (a FileNotFoundError traceback)
    env -u HS_BIN PATH=/usr/bin:/bin python3 "$S/collect.py" col --hpcsim "$WORK/no-hpcsim" >ctab.txt 2>&1
    crc=$?
    if [ $crc = 2 ] && grep -q "no hpcsim binary" ctab.txt && ! grep -q Traceback ctab.txt; then ok "collect.py without an hpcsim binary: exit 2"
    else bad "collect.py without hpcsim: exit $crc: $(tail -1 ctab.txt)"; fi
else bad "sweep.py for collect: $(cat col.txt)"; fi

# 5. preemption: USR1 to the batch shell (as --signal=B:USR1 does) while the run is in its time
#    loop; the trap forwards it, hpcsim checkpoints and exits 3, the job requeues itself and the
#    second start continues from the checkpoint to the end: the file equals job 3's bitwise
jid=$(sbatch --parsable --job-name=hs-test --ntasks-per-node=2 --output=pre-%j.out "$S/hpcsim_preemptible.sbatch" heat2d.ini $LONG output.path=pre)
for _ in $(seq 600); do [ -e pre."$EXT".partial ] && break; sleep 0.1; done
sleep 0.2
scancel --signal=USR1 --batch "$jid" 2>/dev/null
wait_job "$jid" 240
log=$(cat pre-"$jid".out)
if grep -q "caught SIGUSR1: forwarding" <<<"$log" && grep -q "stopped by signal 10" <<<"$log" &&
    grep -q "hpcsim exited with status 3" <<<"$log" && grep -q "requeueing" <<<"$log" &&
    grep -q "(start 2): requeued: continuing from hpcsim-$jid.ckpt" <<<"$log" && grep -q "hpcsim exited with status 0" <<<"$log"; then
    ok "preemption: USR1 forwarded, checkpoint, exit 3, requeued, continued from the checkpoint"
else
    bad "preemption log: $log"
fi
if [ -f pre."$EXT" ] && "$HS_BIN" compare slurm."$EXT" pre."$EXT" T >c 2>&1 && "$HS_BIN" compare slurm."$EXT" pre."$EXT" time >>c 2>&1 &&
    "$HS_BIN" summary pre."$EXT" | grep -q "restarted    : from hpcsim-$jid.ckpt"; then
    ok "the preempted and requeued job's output equals the uninterrupted job's bitwise"
else
    bad "preempted output: $(ls) $(cat c 2>/dev/null)"
fi

# 6. SIGTERM to the whole job (scancel --full: the batch shell and srun too, as a preemption or the
#    time limit sends it): the shell survives it and srun, in a session of its own, does not kill the
#    ranks, so hpcsim checkpoints and exits 3; no requeue (a cancelled job must stay cancelled); the
#    log names the checkpoint, and a new submission with HS_CHECKPOINT continues it to the file job 3
#    wrote, bitwise (the shell died, srun killed the ranks before the checkpoint, and a new job
#    started from scratch)
jid=$(sbatch --parsable --job-name=hs-test --ntasks-per-node=2 --output=term-%j.out "$S/hpcsim_preemptible.sbatch" heat2d.ini $LONG output.path=term)
for _ in $(seq 600); do [ -e term."$EXT".partial ] && break; sleep 0.1; done
sleep 0.2
scancel --full --signal=TERM "$jid" 2>/dev/null
wait_job "$jid" 120
log=$(cat term-"$jid".out)
ck=$(sed -n 's/.*to continue: submit again with HS_CHECKPOINT=\([^ ]*\) .*/\1/p' term-"$jid".out | head -1)
if grep -q "hpcsim exited with status 3" <<<"$log" && grep -q "not requeueing" <<<"$log" && ! grep -q "(start 2)" <<<"$log" &&
    [ "$ck" = "$WORK/hpcsim-$jid.ckpt" ] && [ -f "$ck" ] && [ -f term."$EXT".partial ]; then
    ok "SIGTERM to the whole job: checkpoint, exit 3, not requeued, the log names HS_CHECKPOINT=$(basename "$ck")"
else
    bad "SIGTERM to the whole job: $log"
fi
jid2=$(HS_CHECKPOINT=$ck sbatch --parsable --job-name=hs-test --ntasks-per-node=2 --output=term2-%j.out "$S/hpcsim_preemptible.sbatch" heat2d.ini $LONG output.path=term)
wait_job "$jid2" 240
if grep -q "(start 1): continuing from $ck (HS_CHECKPOINT)" term2-"$jid2".out && grep -q "hpcsim exited with status 0" term2-"$jid2".out &&
    "$HS_BIN" compare slurm."$EXT" term."$EXT" T >c 2>&1 && "$HS_BIN" compare slurm."$EXT" term."$EXT" time >>c 2>&1; then
    ok "resubmitted with HS_CHECKPOINT: continued from the checkpoint, output equal to the uninterrupted job's bitwise"
else
    bad "resubmission with HS_CHECKPOINT: $(cat term2-"$jid2".out) $(cat c 2>/dev/null)"
fi

# 7. a sweep's tasks checkpoint and requeue one by one (sweep.sbatch runs each member through
#    hpcsim_preemptible.sbatch): three members (heat.Q), each as long as job 3 on one rank, two at a
#    time on the node's two cores. Task 1 gets SIGTERM (scancel --full, as in 6): checkpoint, exit 3,
#    not requeued, the log names its HS_CHECKPOINT and --array=1; task 2 (the last: its SLURM_JOB_ID
#    is the array job's, which `scontrol requeue` takes as every task) gets USR1 in its time loop:
#    checkpoint, requeue of task 2 alone (Restarts=1), restart from member_002's own checkpoint; task 0
#    runs once, untouched (Restarts=0). Tasks 1 and 2 end bitwise equal to uninterrupted runs of their
#    members, task 1 after a resubmission of itself alone with HS_CHECKPOINT; HS_CHECKPOINT with the
#    whole array (one checkpoint for three tasks) is refused
for q in 1500 2000; do
    mkdir "ref$q"
    (cd "ref$q" && OMP_NUM_THREADS=1 exec "$HS_BIN" run ../heat2d.ini $LONG heat.Q=$q --quiet >/dev/null 2>&1) &
done
wait
if "$S/sweep.py" heat2d.ini swr heat.Q=1000,1500,2000 --set $LONG --name hs-test >sweep.txt 2>&1; then
    arr=$(sbatch --parsable swr/sweep.sbatch)
    m1=swr/member_001 m2=swr/member_002
    for _ in $(seq 600); do [ -e "$m1/heat2d.$EXT.partial" ] && break; sleep 0.1; done
    sleep 0.2
    scancel --full --signal=TERM "${arr}_1" 2>/dev/null
    for _ in $(seq 600); do [ -e "$m2/heat2d.$EXT.partial" ] && break; sleep 0.1; done
    sleep 0.2
    scancel --signal=USR1 --batch "${arr}_2" 2>/dev/null
    wait_job "$arr" 240
    restarts() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p'; }
    r0=$(restarts "${arr}_0") r1=$(restarts "${arr}_1") r2=$(restarts "${arr}_2")
    id2=$(scontrol show job "${arr}_2" 2>/dev/null | sed -n 's/^JobId=\([0-9]*\) .*/\1/p')
    log0=$(cat swr/member_000/job-"${arr}"_0.out) log1=$(cat "$m1"/job-"${arr}"_1.out) log2=$(cat "$m2"/job-"${arr}"_2.out)
    if [ "$r0" = 0 ] && grep -q "job ${arr}_0 (start 1): hpcsim exited with status 0" <<<"$log0" && ! grep -q "caught\|start 2" <<<"$log0" &&
        [ -f "swr/member_000/heat2d.$EXT" ]; then
        ok "sweep task 0 untouched: one start, exit 0, Restarts=0"
    else
        bad "sweep task 0 (Restarts=$r0): $log0"
    fi
    if [ "$r2" = 1 ] && grep -q "job ${arr}_2 (start 1): caught SIGUSR1" <<<"$log2" && grep -q "stopped by signal 10" <<<"$log2" &&
        grep -q "job ${arr}_2 (start 1): checkpoint in hpcsim-${arr}_2.ckpt: requeueing" <<<"$log2" &&
        grep -q "job ${arr}_2 (start 2): requeued: continuing from hpcsim-${arr}_2.ckpt" <<<"$log2" &&
        grep -q "job ${arr}_2 (start 2): hpcsim exited with status 0" <<<"$log2" &&
        "$HS_BIN" compare --all "ref2000/heat2d.$EXT" "$m2/heat2d.$EXT" >c 2>&1 &&
        "$HS_BIN" summary "$m2/heat2d.$EXT" | grep -q "restarted    : from hpcsim-${arr}_2.ckpt"; then
        note=
        [ "$id2" = "$arr" ] && note=" (its job id is the array's, $arr)"
        ok "sweep task 2$note: USR1, checkpoint, requeued alone (Restarts=1), continued from its own checkpoint, bitwise equal to the uninterrupted member"
    else
        bad "sweep task 2 (Restarts=$r2): $log2 $(cat c 2>/dev/null)"
    fi
    ck=$(sed -n 's/.*to continue: submit again with HS_CHECKPOINT=\([^ ]*\) --array=1 .*/\1/p' "$m1"/job-"${arr}"_1.out | head -1)
    if [ "$r1" = 0 ] && grep -q "job ${arr}_1 (start 1): hpcsim exited with status 3" <<<"$log1" && grep -q "not requeueing" <<<"$log1" &&
        [ "$ck" = "$WORK/$m1/hpcsim-${arr}_1.ckpt" ] && [ -f "$ck" ]; then
        ok "sweep task 1: SIGTERM, checkpoint, exit 3, not requeued, the log names HS_CHECKPOINT=$(basename "$ck") --array=1"
    else
        bad "sweep task 1 (Restarts=$r1): $log1"
    fi
    # one checkpoint for every task of the array: refused before any run
    bad_arr=$(HS_CHECKPOINT=$ck sbatch --parsable swr/sweep.sbatch)
    wait_job "$bad_arr" 60
    if grep -q "names one checkpoint and array job $bad_arr has 3 tasks" "$m1"/job-"${bad_arr}"_1.out && ! grep -q "hpcsim exited" "$m1"/job-"${bad_arr}"_1.out; then
        ok "HS_CHECKPOINT with the whole array is refused (one checkpoint, 3 tasks)"
    else
        bad "HS_CHECKPOINT with the whole array: $(cat "$m1"/job-"${bad_arr}"_1.out)"
    fi
    again=$(HS_CHECKPOINT=$ck sbatch --parsable --array=1 swr/sweep.sbatch)
    wait_job "$again" 240
    if grep -q "job ${again}_1 (start 1): continuing from $ck (HS_CHECKPOINT)" "$m1"/job-"${again}"_1.out &&
        grep -q "hpcsim exited with status 0" "$m1"/job-"${again}"_1.out && "$HS_BIN" compare --all "ref1500/heat2d.$EXT" "$m1/heat2d.$EXT" >c 2>&1 &&
        python3 "$S/collect.py" swr >table.txt 2>&1; then
        ok "sweep task 1 resubmitted alone with HS_CHECKPOINT: continued, bitwise equal to the uninterrupted member; collect.py: 3 finished"
    else
        bad "sweep task 1 resubmitted: $(cat "$m1"/job-"${again}"_1.out) $(cat c table.txt 2>/dev/null)"
    fi
else
    bad "sweep.py for the requeue sweep: $(cat sweep.txt)"
fi
# a time limit that the checkpoint signal's lead (300 s) fills: every start would be signalled at once
if ! "$S/sweep.py" heat2d.ini short heat.Q=1000,2000 --time 00:06:00 >bad.txt 2>&1 && grep -q "not longer than the checkpoint signal's lead (300 s)" bad.txt &&
    [ ! -e short ] && "$S/sweep.py" heat2d.ini short heat.Q=1000,2000 --time 00:06:00 --sbatch=--signal=B:USR1@60 >/dev/null 2>&1; then
    ok "sweep.py refuses --time 00:06:00 against a 300 s signal lead, accepts it with --signal=B:USR1@60"
else
    bad "sweep.py short --time: $(cat bad.txt)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
