#!/usr/bin/env bash
# One batch on the GPU machine: stages run in order, each logged under $OUT (or out/) with its exit
# status and time.  Stages: build | test | test:REGEX (HS_TEST_ONLY) | bench | bench:"a b" (HS_BENCH_ONLY)
# | validate | validate:REGEX (verify programs only, HS_TEST_VALIDATE=1) | profile:BENCH (ncu on one bench: NCU_KERNEL a regex of kernel names, NCU_SKIP launches skipped, NCU_COUNT profiled).
# usage: scripts/gpu_session.sh build test:twin bench:"cfd_ns heat"     (default: build test bench)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # never NVLink multicast on shared machines
[ -d .debs ] && scripts/offline_deps.sh unpack >/dev/null
# cuDNN: the toolkit's, else the PyTorch wheel's (nvidia-cudnn) on machines that have only that
if [ -z "${CUDNN_HOME:-}" ] && ! ls /usr/local/cuda/include/cudnn.h /usr/include/cudnn.h >/dev/null 2>&1; then
    d=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null) && [ -f "$d/include/cudnn.h" ] && export CUDNN_HOME=$d
fi
export CUDNN_HOME=${CUDNN_HOME:-}
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/gpus.txt"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test bench)
BENCH_BINS=$(ls tests/bench/bench_*.c | grep -v bench_util | sed 's|tests/|build/tests/|; s|\.c$||')
for s in "${stages[@]}"; do
    t0=$SECONDS
    arg=${s#*:}; [ "$arg" = "$s" ] && arg=
    log="$OUT/$(echo "${s%%:*}" | tr -c 'a-z0-9_\n' _).log"
    case ${s%%:*} in
    build) make -j"$(nproc)" CUDA=1 all tests $BENCH_BINS >"$OUT/build.log" 2>&1; rc=$?; [ $rc -ne 0 ] && tail -30 "$OUT/build.log" ;;
    test) HS_TEST_ONLY="$arg" HS_TEST_DEVICE=cuda BUILD=build tests/run_tests.sh >>"$log" 2>&1; rc=$?
          grep -E "^(FAIL|SKIP)|passed," "$log" | tail -40 ;;
    bench) HS_BENCH_ONLY="$arg" HS_BENCH_CSV="$OUT/bench${arg:+_$(echo $arg | tr -c 'a-z0-9\n' _)}.csv" BUILD=build \
               scripts/run_bench.sh >>"$log" 2>&1; rc=$?; grep -v '^#' "$log" | tail -60 ;;
    validate) if [ -z "$arg" ]; then make validate >>"$log" 2>&1; rc=$?
              else rc=0; for t in build/tests/verify/test_*; do grep -Eq -- "$arg" <<<"$t" || continue
                  HS_TEST_VALIDATE=1 HS_TEST_DEVICE=cuda "$t" >>"$log" 2>&1 || rc=1; done; fi
              grep -E "PASSED|FAILED|SKIPPED|Ghia|Nusselt|validate" "$log" | tail -30 ;;
    profile) HS_BENCH_DEVICE=cuda ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats -k "regex:${NCU_KERNEL:-.}" --launch-skip ${NCU_SKIP:-0} --launch-count ${NCU_COUNT:-6} \
               "build/tests/bench/bench_$arg" >"$OUT/ncu_$arg.txt" 2>&1; rc=$?; grep -E "Kernel|ns_kernel|Duration|Memory Throughput|DRAM Through|Compute \(SM\)|Achieved Occ|Registers" "$OUT/ncu_$arg.txt" | head -60 ;;
    *) echo "unknown stage $s"; rc=2 ;;
    esac
    echo "stage $s: exit $rc in $((SECONDS - t0)) s"
done
