#!/usr/bin/env bash
# A real single-host Slurm cluster on this machine (munge, slurmctld, slurmd) for tests and trying the job scripts.
#
# usage: scripts/slurm/local_cluster.sh [start|stop|status|env|--help]
#   start   install slurm-wlm and munge with apt-get when missing (as root), write slurm.conf and
#           cgroup.conf for this host into $HS_SLURM_DIR, start munged, slurmctld and slurmd, and wait
#           until the node is idle (the default command; a cluster already up is reused)
#   stop    stop the daemons this script started (by their pid files), cancelling the jobs first
#   status  sinfo and squeue of the local cluster
#   env     print the line that points Slurm's commands at it: eval "$(scripts/slurm/local_cluster.sh env)"
#
# The configuration: one node named after this host with the CPUs, sockets, cores and memory that
# `slurmd -C` finds (no GPUs), one partition `local`, ProctrackType=proctrack/linuxproc and
# TaskPlugin=task/none (no cgroups needed: works in containers), select/cons_tres by core, srun's MPI
# default pmix where the plugin exists, requeue allowed, SlurmUser root.  Everything lives in
# $HS_SLURM_DIR (default /var/tmp/hpcsim-slurm): conf, state, spool, logs, pid files; a requeued
# job may start again after 10 s (AuthInfo=cred_expire=10; Slurm's default is 120 s) and the
# scheduler looks at the queue every second (sched_interval, bf_interval: a requeued job waited up
# to 30 s more for the backfill pass otherwise); the commands find the configuration through
# SLURM_CONF (see `env`).
#
# Exit status: 0 up, 77 when Slurm cannot be installed or started here (tests then skip), 1 on
# other failures.
set -u
DIR=${HS_SLURM_DIR:-/var/tmp/hpcsim-slurm}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
cmd=${1:-start}

say() { echo "local_cluster: $*" >&2; }
unavailable() { say "$*"; exit 77; }

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

node_state() { sinfo -h -N -o '%T' 2>/dev/null | head -1; }

install_slurm() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null &&
        command -v sbatch >/dev/null; then
        return 0
    fi
    [ "$(id -u)" = 0 ] || unavailable "slurm-wlm and munge are not installed and this is not root: sudo apt-get install slurm-wlm munge"
    command -v apt-get >/dev/null || unavailable "no apt-get to install slurm-wlm and munge"
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed (no network?)"
    timeout 900 apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
        unavailable "apt-get install slurm-wlm munge failed (no network?)"
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null ||
        unavailable "slurm-wlm installed without slurmctld/slurmd/munged"
}

write_config() {
    mkdir -p "$DIR"/{state,spool,log,run}
    local node host
    host=$(hostname -s)
    # the node as slurmd sees it: CPUs, boards, sockets, cores, threads, memory
    node=$(slurmd -C 2>/dev/null | sed -n 's/^NodeName=[^ ]* //p' | head -1)
    [ -n "$node" ] || node="CPUs=$(nproc)"
    # leave a little memory to the system, as a real node would
    local mem
    mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
    [ -n "$mem" ] && node=$(sed "s/RealMemory=$mem/RealMemory=$((mem * 9 / 10))/" <<<"$node")
    local mpi=none
    for f in /usr/lib/*/slurm-wlm/mpi_pmix.so /usr/lib/slurm/mpi_pmix.so /usr/lib64/slurm/mpi_pmix.so; do
        [ -e "$f" ] && mpi=pmix
    done
    cat > "$CONF.tmp" <<EOF
# Written by scripts/slurm/local_cluster.sh: a single-host cluster for hpcsim's tests.
ClusterName=hpcsim-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# a requeued job waits cred_expire seconds before it may start again (default 120)
AuthInfo=cred_expire=10
CryptoType=crypto/munge
SlurmctldPort=${HS_SLURM_CTLD_PORT:-6817}
SlurmdPort=${HS_SLURM_D_PORT:-6818}
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=$mpi
ReturnToService=2
JobRequeue=1
KillWait=30
MinJobAge=300
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000,sched_interval=1,bf_interval=1
InactiveLimit=0
Waittime=0
NodeName=$host $node State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    if [ -f "$CONF" ] && cmp -s "$CONF.tmp" "$CONF"; then rm -f "$CONF.tmp"; else mv "$CONF.tmp" "$CONF"; fi
    # no cgroup plugin is configured (proctrack/linuxproc, task/none); slurmd still reads this file
    cat > "$DIR/cgroup.conf" <<EOF
# Written by scripts/slurm/local_cluster.sh: no cgroup plugins are used (proctrack/linuxproc, task/none).
CgroupPlugin=autodetect
IgnoreSystemd=yes
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

start_munge() {
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
    if [ ! -s /etc/munge/munge.key ]; then
        if command -v mungekey >/dev/null; then mungekey --create >/dev/null 2>&1
        else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null; fi
        chown munge:munge /etc/munge/munge.key 2>/dev/null
        chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
    chmod 755 /run/munge
    if id munge >/dev/null 2>&1 && command -v runuser >/dev/null; then
        runuser -u munge -- munged >/dev/null 2>&1 || munged --force >/dev/null 2>&1
    else
        munged --force >/dev/null 2>&1
    fi
    for _ in $(seq 50); do
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    unavailable "munged did not start (see /var/log/munge/munged.log)"
}

start() {
    install_slurm
    local before=""
    [ -f "$CONF" ] && before=$(cat "$CONF")
    write_config
    if pid_alive "$DIR/run/slurmctld.pid" && pid_alive "$DIR/run/slurmd.pid"; then
        if [ "$before" != "$(cat "$CONF")" ]; then
            say "the configuration changed: restarting the daemons"
            stop_daemons
        else
            case "$(node_state)" in idle*|mix*|alloc*) say "already up ($(node_state))"; return 0 ;; esac
        fi
    fi
    start_munge
    pid_alive "$DIR/run/slurmctld.pid" || slurmctld -f "$CONF" >/dev/null 2>&1 ||
        unavailable "slurmctld did not start: $(tail -3 "$DIR/log/slurmctld.log" 2>/dev/null)"
    pid_alive "$DIR/run/slurmd.pid" || slurmd -f "$CONF" >/dev/null 2>&1 ||
        unavailable "slurmd did not start: $(tail -3 "$DIR/log/slurmd.log" 2>/dev/null)"
    local state=""
    for _ in $(seq 120); do
        state=$(node_state)
        case "$state" in
            idle*|mix*|alloc*) say "up: node $(hostname -s) $state ($(sinfo -h -o '%c CPUs, %m MB'))"; return 0 ;;
            down*|drain*) scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 ;;
        esac
        sleep 0.5
    done
    unavailable "the node did not become idle (state '$state'); logs in $DIR/log"
}

stop() {
    if pid_alive "$DIR/run/slurmctld.pid"; then scancel --user="$(id -un)" >/dev/null 2>&1; sleep 1; fi
    stop_daemons
    say "stopped (munged is left running: other programs may use it)"
}

stop_daemons() {
    for d in slurmd slurmctld; do
        if pid_alive "$DIR/run/$d.pid"; then
            kill "$(cat "$DIR/run/$d.pid")"
            for _ in $(seq 50); do pid_alive "$DIR/run/$d.pid" || break; sleep 0.2; done
        fi
    done
}

case "$cmd" in
    start) start ;;
    stop) stop ;;
    status) sinfo; squeue ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
esac
