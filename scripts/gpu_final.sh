#!/usr/bin/env bash
# Final single-GPU batch: build, `make test-gpu`, scan diagnostics, heat and PINN benchmarks with the
# PyTorch peer (per-iteration timing), under $OUT.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
[ -d .debs ] && scripts/offline_deps.sh unpack >/dev/null
make -j"$(nproc)" CUDA=1 all tests build/tests/bench/bench_heat build/tests/bench/bench_pinn >"$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
t0=$SECONDS
make test-gpu >"$OUT/test-gpu.log" 2>&1
echo "test-gpu: $(tail -1 "$OUT/test-gpu.log" | tr -d '\n') ($((SECONDS - t0)) s)"
grep -E "^FAIL" "$OUT/test-gpu.log"
tar czf "$OUT/test-logs.tgz" build/test-logs 2>/dev/null
for impl in new old; do
    HS_SCAN_IMPL=$impl HS_TEST_DEVICE=cuda timeout 120 build/tests/unit/test_scan >"$OUT/scan_$impl.log" 2>&1
    echo "test_scan with HS_SCAN_IMPL=$impl: exit $?"
    grep -E "ERROR|FAILED|exceeds|error" "$OUT/scan_$impl.log" | head -6
done
export HS_BENCH_CSV="$OUT/final.csv" HS_BENCH_DEVICE=cuda
build/tests/bench/bench_heat | grep -v '^#'
timeout 100 python3 scripts/pinn_pytorch.py --device cuda --quick >"$OUT/pt.json" 2>"$OUT/pt.err"
echo "pytorch: $(cat "$OUT/pt.json")"
adam=$(python3 -c "import json;print(json.load(open('$OUT/pt.json'))['adam_s_per_iter'])" 2>/dev/null)
lbfgs=$(python3 -c "import json;print(json.load(open('$OUT/pt.json'))['lbfgs_s_per_iter'])" 2>/dev/null)
HS_PEER_PYTORCH_ADAM_S=${adam:-0} HS_PEER_PYTORCH_LBFGS_S=${lbfgs:-0} timeout 200 build/tests/bench/bench_pinn 2>&1 | tee "$OUT/pinn.log" | grep -v '^#'
