#!/usr/bin/env bash
# One batch on a GPU machine: build with CUDA, `make test-gpu`, `make bench`, logs under $OUT (or out/).
# usage: scripts/gpu_session.sh [build] [test] [bench] [validate] ...   (default: build test bench)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0   # never NVLink multicast on shared machines
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test bench)
[ -d .debs ] && scripts/offline_deps.sh unpack >/dev/null
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpus.txt"
for s in "${stages[@]}"; do
    t0=$SECONDS
    case $s in
    build) make -j"$(nproc)" CUDA=1 all tests $(ls tests/bench/bench_*.c | grep -v bench_util | sed 's|tests/|build/tests/|; s|\.c$||') \
               >"$OUT/build.log" 2>&1; rc=$? ;;
    test) make test-gpu >"$OUT/test-gpu.log" 2>&1; rc=$?; tail -3 "$OUT/test-gpu.log" ;;
    bench) HS_BENCH_CSV="$OUT/bench.csv" BUILD=build scripts/run_bench.sh >"$OUT/bench.log" 2>&1; rc=$?; grep -v '^#' "$OUT/bench.log" | head -80 ;;
    validate) make validate >"$OUT/validate.log" 2>&1; rc=$? ;;
    *) echo "unknown stage $s"; rc=2 ;;
    esac
    echo "stage $s: exit $rc in $((SECONDS - t0)) s"
done
