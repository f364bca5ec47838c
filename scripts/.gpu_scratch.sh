#!/usr/bin/env bash
# scratch (untracked): session 19 call 1
set -u
OUT=${OUT:-out}; mkdir -p $OUT
scripts/gpu_session.sh build "test:seismic_twin|seismic_mpi|cfd_ns" > $OUT/session.txt 2>&1
cat $OUT/session.txt | tail -20
for t in 1 0; do echo "== NS_TILED=$t"; HS_NS_TILED=$t timeout 100 build/tests/bench/bench_cfd_ns 2>&1 | grep -v '^#' | tail -6; done
for t in 1 0; do echo "== EL_TILED=$t"; HS_SEIS_EL_TILED=$t HS_BENCH_SEISMIC_PARTS=elastic,elastic_nopml timeout 100 build/tests/bench/bench_seismic 2>&1 | grep -v '^#' | tail -6; done
echo "== ncu ns"
timeout 100 ncu --clock-control none --section SpeedOfLight -k "regex:ns_momentum" --launch-skip 2 --launch-count 2 build/tests/bench/bench_cfd_ns > $OUT/ncu_ns.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Through|Memory Through|Compute \(SM\)" $OUT/ncu_ns.txt | cut -c1-200 | head -20
echo "== ncu elastic"
HS_BENCH_SEISMIC_PARTS=elastic timeout 150 ncu --clock-control none --section SpeedOfLight -k "regex:seis_el|el_tiled" --launch-skip 40 --launch-count 30 build/tests/bench/bench_seismic > $OUT/ncu_el.txt 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Through" $OUT/ncu_el.txt | cut -c1-160 | paste - - - | head -40
mkdir -p $OUT/logs; cp build/test-logs/* $OUT/logs/ 2>/dev/null
