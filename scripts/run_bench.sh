#!/usr/bin/env bash
# Runs every benchmark program; the table goes to stdout, the rows to $BUILD/bench.csv.
set -u
BUILD=${BUILD:-build}
export HS_BENCH_CSV=${HS_BENCH_CSV:-$BUILD/bench.csv}
echo "kernel,size,precision,time_s,GB_per_s,GFLOP_per_s,fraction_of_limit,limit,peer,peer_time_s,peer_ratio" > "$HS_BENCH_CSV"
status=0
# HS_BENCH_ONLY="blas heat" runs a subset; HS_BENCH_TIMEOUT bounds each program (s).
for b in "$BUILD"/tests/bench/bench_*; do
    [ -x "$b" ] || continue
    name=$(basename "$b")
    name=${name#bench_}
    if [ -n "${HS_BENCH_ONLY:-}" ] && ! grep -qw "$name" <<<"$HS_BENCH_ONLY"; then continue; fi
    echo "== bench_$name"
    timeout "${HS_BENCH_TIMEOUT:-600}" "$b" || { echo "benchmark bench_$name failed or timed out"; status=1; }
done
echo "CSV written to $HS_BENCH_CSV"
exit $status
