#!/usr/bin/env bash
# Two-GPU batch (nvidia-h200-x2): weak scaling of the heat step, the quantum register 1 -> 2 GPUs,
# the MPI suites with one GPU per rank, and the scan/sort variants; results under $OUT.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
[ -d .debs ] && scripts/offline_deps.sh unpack >/dev/null
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
make -j"$(nproc)" CUDA=1 all tests build/tests/bench/bench_heat build/tests/bench/bench_quantum \
    build/tests/bench/bench_reduce >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -x HS_TEST_DEVICE -x HS_BENCH_DEVICE -x HS_BENCH_CSV -x NCCL_NVLS_ENABLE)
export HS_TEST_DEVICE=cuda HS_BENCH_DEVICE=cuda HS_BENCH_CSV="$OUT/x2.csv"
{
    for t in build/tests/mpi/test_*; do
        "${MPIRUN[@]}" -n 2 "$t" >/dev/null 2>&1 && echo "PASS $(basename "$t") on 2 GPUs" || echo "FAIL $(basename "$t") on 2 GPUs"
    done
    build/tests/unit/test_scan >/dev/null 2>&1 && echo "PASS test_scan (cuda)" || echo "FAIL test_scan (cuda)"
    build/tests/unit/test_sort >/dev/null 2>&1 && echo "PASS test_sort (cuda)" || echo "FAIL test_sort (cuda)"
} 2>&1 | tee "$OUT/tests.txt"
echo "== heat weak scaling"
build/tests/bench/bench_heat | grep -v '^#'
"${MPIRUN[@]}" -n 2 build/tests/bench/bench_heat | grep -v '^#'
echo "== quantum 32 qubits, 1 and 2 GPUs; 33 qubits on 2"
export HS_BENCH_SKIP_LARGEST=1 HS_BENCH_C128_ONLY=1 HS_BENCH_FUSION=4
Q=(-x HS_BENCH_SKIP_LARGEST -x HS_BENCH_C128_ONLY -x HS_BENCH_FUSION)
timeout 150 build/tests/bench/bench_quantum 32 2>&1 | grep -v '^#'
timeout 150 "${MPIRUN[@]}" "${Q[@]}" -n 2 build/tests/bench/bench_quantum 32 2>&1 | grep -v '^#'
timeout 150 "${MPIRUN[@]}" "${Q[@]}" -n 2 build/tests/bench/bench_quantum 33 2>&1 | grep -v '^#' | grep -v "QFT\|random"
echo "== scan/sort variants"
timeout 200 build/tests/bench/bench_reduce 2>&1 | grep -E "scan|sort" | grep -v '^#'
