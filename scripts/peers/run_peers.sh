#!/usr/bin/env bash
# Builds qsim and cuStateVec from .peers/ on the GPU machine and times whole processes of hpcsim and the peers on the same circuits.
#
# usage (on the GPU machine, after `make CUDA=1 bin/hpcsim build/tests/bench/bench_quantum`, with .peers/ carried):
#   scripts/peers/run_peers.sh [QUBITS]          (default 30; OUT=folder for logs and peers.csv, default out/)
#   scripts/peers/run_peers.sh --unpack          (only unpack .peers/cuquantum.tar.xz into build/peers/: the
#                                                 project's tree, .debs, .peers/qsim and that file together
#                                                 exceed the device tool's 64 MiB carry, so one call carries
#                                                 the file and unpacks it, and a later call carries .peers/qsim)
# .peers/ is prepared here by scripts/peers/fetch_qsim.sh and scripts/peers/fetch_custatevec.sh (the GPU machine
# has no network); nothing of it is committed.  Circuits: bench_quantum --write-qasm (QFT, the supremacy-style
# random circuit, a QAOA layer), converted for qsim by scripts/peers/qasm_to_qsim.py.
# What it builds and writes goes to build/peers/ (PEERS_BUILD): outside .peers/, so that it stays on the GPU
# machine between calls that carry .peers/ again; bench_quantum finds the peers there (HS_BENCH_PEERS).
# Rows: every run is a whole process (start-up, parse, fusion, simulation, exit), best of REPS (default 2);
# ratio = peer time / hpcsim's time in the same precision (> 1: hpcsim is faster).  "sim" is the time the
# program reports for the simulation itself where it does (hpcsim: solver; qsim: simu time; cuStateVec: gates).
set -u
cd "$(dirname "$0")/../.."
n=${1:-30}
P=.peers
W=${PEERS_BUILD:-build/peers}
OUT=${OUT:-out}
REPS=${REPS:-2}
ARCH=${CUDA_ARCH:-90}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=$W/build
mkdir -p "$OUT" "$B" "$W/circuits" "$W/runs"
log=$OUT/peers.log
: >"$log"
say() { echo "$@" | tee -a "$log"; }

# ---- build the peers
CUSV=$W/cusv/cuquantum
# the repacked library (fetch_custatevec.sh: small enough to travel with qsim in one call), or the wheel
whl=$(ls $P/custatevec_cu13-*.whl 2>/dev/null | head -1)
if [ ! -f "$CUSV/lib/libcustatevec.so.1" ]; then
    mkdir -p "$W/cusv"
    if [ -f $P/cuquantum.tar.xz ]; then
        python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" $P/cuquantum.tar.xz "$W/cusv" ||
            say "cannot unpack $P/cuquantum.tar.xz"
    elif [ -n "$whl" ]; then
        python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$W/cusv" || say "cannot unpack $whl"
    fi
fi
[ -f "$CUSV/lib/libcustatevec.so.1" ] && ln -sf libcustatevec.so.1 "$CUSV/lib/libcustatevec.so"
if [ "$n" = --unpack ]; then
    [ -f "$CUSV/lib/libcustatevec.so.1" ] && say "cuStateVec unpacked in $CUSV" && exit 0
    say "cuStateVec not unpacked: no $P/cuquantum.tar.xz or wheel here"; exit 1
fi
NV=("$CUDA_HOME/bin/nvcc" -O3 -std=c++17 -gencode "arch=compute_$ARCH,code=sm_$ARCH" -Xcompiler -fopenmp)
if [ -d $P/qsim/apps ]; then
    [ -x $B/qsim_base_cuda ] || "${NV[@]}" $P/qsim/apps/qsim_base_cuda.cu -o $B/qsim_base_cuda >>"$log" 2>&1 ||
        say "qsim_base_cuda: build failed (see $log)"
    if [ -d "$CUSV" ] && [ ! -x $B/qsim_base_custatevec ]; then
        "${NV[@]}" -I"$CUSV/include" $P/qsim/apps/qsim_base_custatevec.cu -L"$CUSV/lib" -lcustatevec -lcublas \
            -Xlinker -rpath="$(cd "$CUSV/lib" && pwd)" -o $B/qsim_base_custatevec >>"$log" 2>&1 ||
            say "qsim_base_custatevec: build failed (see $log)"
    fi
else
    say "no $P/qsim (run scripts/peers/fetch_qsim.sh where there is network, and carry .peers/)"
fi
if [ -d "$CUSV" ] && [ ! -x $B/custatevec_bench ]; then
    cc -O2 -std=c11 -D_GNU_SOURCE scripts/peers/custatevec_bench.c -I"$CUDA_HOME/include" -I"$CUSV/include" \
        -L"$CUSV/lib" -L"$CUDA_HOME/lib64" -Wl,-rpath,"$(cd "$CUSV/lib" && pwd)" -lcustatevec -lcudart -lm \
        -o $B/custatevec_bench >>"$log" 2>&1 || say "custatevec_bench: build failed (see $log)"
fi

# ---- circuits
build/tests/bench/bench_quantum --write-qasm $W/circuits "$n" >>"$log" 2>&1 || { say "bench_quantum --write-qasm failed"; exit 1; }
for c in qft supremacy qaoa; do
    python3 scripts/peers/qasm_to_qsim.py $W/circuits/${c}_$n.qasm >$W/circuits/${c}_$n.qsim || say "export of $c failed"
done

# ---- timing: best whole-process time of REPS runs; the program's own simulation time from its output
best_wall=0 best_sim=
timed() { # name, then the command; output appended to the log
    local w s t0 t1 o
    best_wall=0 best_sim=
    for ((r = 0; r < REPS; r++)); do
        o=$(mktemp)
        t0=$(date +%s.%N)
        "$@" >"$o" 2>&1
        local rc=$?
        t1=$(date +%s.%N)
        { echo "### $*  (exit $rc)"; cat "$o"; } >>"$log"
        if [ $rc -ne 0 ]; then rm -f "$o"; best_wall=0; return 1; fi
        w=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        s=$(sed -n -e 's/.*simu time is \([0-9.eE+-]*\) seconds.*/\1/p' -e 's/.*, gates \([0-9.]*\) s .*/\1/p' \
                  -e 's/^quantum: .* on [0-9]* ranks\{0,1\}, \([0-9.eE+-]*\) s$/\1/p' "$o" | tail -1)
        rm -f "$o"
        if [ "$best_wall" = 0 ] || awk -v a="$w" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then best_wall=$w best_sim=$s; fi
    done
}
ini() { # circuit file, precision, fusion, output name
    cat >"$W/runs/$4.ini" <<EOT
[run]
solver = quantum
device = cuda
[quantum]
circuit = $(pwd)/$1
precision = $2
fusion = $3
shots = 0
amplitudes_max_qubits = 0
[output]
path = $(pwd)/$W/runs/$4
EOT
    echo "$W/runs/$4.ini"
}

csv=$OUT/peers.csv
echo "circuit,qubits,program,precision,whole_s,sim_s,ratio_peer_over_hpcsim" >"$csv"
printf "%-10s %-34s %-5s %9s %9s %8s\n" circuit program prec whole_s sim_s ratio | tee -a "$log"
for c in qft supremacy qaoa; do
    q=$W/circuits/${c}_$n.qasm
    qs=$W/circuits/${c}_$n.qsim
    declare -A ours=()
    row() { # program, precision, reference precision for the ratio ('' for ours)
        local ratio=-
        if [ "$best_wall" != 0 ] && [ -n "$3" ] && [ -n "${ours[$3]:-}" ]; then
            ratio=$(awk -v a="$best_wall" -v b="${ours[$3]}" 'BEGIN { printf "%.3f", a / b }')
        fi
        local w=$best_wall
        [ "$w" = 0 ] && w=failed
        printf "%-10s %-34s %-5s %9s %9s %8s\n" "$c" "$1" "$2" "$w" "${best_sim:--}" "$ratio" | tee -a "$log"
        echo "$c,$n,$1,$2,$w,${best_sim:-},$ratio" >>"$csv"
    }
    for prec in complex64 complex128; do
        short=c64; [ $prec = complex128 ] && short=c128
        timed bin/hpcsim run "$(ini "$q" $prec auto ${c}_$short)"
        [ "$best_wall" != 0 ] && ours[$short]=$best_wall
        row "hpcsim (fusion auto)" $short ""
    done
    timed bin/hpcsim run "$(ini "$q" complex64 4 ${c}_c64_f4)"
    row "hpcsim (fusion <= 4)" c64 c64
    for f in 4 5; do
        if [ -x $B/qsim_base_cuda ]; then timed $B/qsim_base_cuda -c "$qs" -f $f -v 1; row "qsim CUDA (fusion $f)" c64 c64; fi
    done
    if [ -x $B/qsim_base_custatevec ]; then timed $B/qsim_base_custatevec -c "$qs" -f 4 -v 1; row "qsim on cuStateVec (fusion 4)" c64 c64; fi
    if [ -x $B/custatevec_bench ]; then
        timed $B/custatevec_bench "$qs" c64; row "cuStateVec (gate by gate)" c64 c64
        timed $B/custatevec_bench "$qs" c128; row "cuStateVec (gate by gate)" c128 c128
    fi
    unset -f row
done
say "table: $csv; every run's output: $log"
