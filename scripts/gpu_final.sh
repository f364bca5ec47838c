#!/usr/bin/env bash
# Single-GPU batch: build, the kernel benchmarks (heat, sparse, reductions/scans/sorts) while the GPU
# is cool, `make test-gpu`, then the PINN benchmark with its PyTorch peer; results under $OUT.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
[ -d .debs ] && scripts/offline_deps.sh unpack >/dev/null
make -j"$(nproc)" CUDA=1 all tests >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
HS_BENCH_ONLY="${HS_BENCH_ONLY:-heat sparse reduce}" HS_BENCH_TIMEOUT=200 HS_BENCH_CSV="$OUT/bench.csv" \
    make CUDA=1 bench >"$OUT/bench.txt" 2>&1
grep -E "^(#|kernel|heat|spmv|cg_|pcg_|dcsr|reduce|argmax|norm2|scan|sort)" "$OUT/bench.txt"
t0=$SECONDS
make CUDA=1 test-gpu >"$OUT/test-gpu.log" 2>&1
echo "test-gpu: $(tail -1 "$OUT/test-gpu.log" | tr -d '\n') ($((SECONDS - t0)) s)"
grep -E "^FAIL" "$OUT/test-gpu.log"
tar czf "$OUT/test-logs.tgz" build/test-logs 2>/dev/null
[ "${HS_GPU_PINN:-0}" = 1 ] || exit 0
make CUDA=1 build/tests/bench/bench_pinn >>"$OUT/build.log" 2>&1
timeout 100 python3 scripts/pinn_pytorch.py --device cuda --quick >"$OUT/pt.json" 2>"$OUT/pt.err"
echo "pytorch: $(cat "$OUT/pt.json")"
adam=$(python3 -c "import json;print(json.load(open('$OUT/pt.json'))['adam_s_per_iter'])" 2>/dev/null)
lbfgs=$(python3 -c "import json;print(json.load(open('$OUT/pt.json'))['lbfgs_s_per_iter'])" 2>/dev/null)
HS_BENCH_DEVICE=cuda HS_PEER_PYTORCH_ADAM_S=${adam:-0} HS_PEER_PYTORCH_LBFGS_S=${lbfgs:-0} timeout 200 \
    build/tests/bench/bench_pinn 2>&1 | tee "$OUT/pinn.log" | grep -v '^#'
