#!/usr/bin/env bash
# Runs every benchmark program; the table goes to stdout, the rows to $BUILD/bench.csv.
set -u
BUILD=${BUILD:-build}
export HS_BENCH_CSV=${HS_BENCH_CSV:-$BUILD/bench.csv}
echo "kernel,size,precision,time_s,GB_per_s,GFLOP_per_s,fraction_of_limit,limit,peer,peer_time_s,peer_ratio" > "$HS_BENCH_CSV"
status=0
for b in "$BUILD"/tests/bench/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || { echo "benchmark $(basename "$b") failed"; status=1; }
done
echo "CSV written to $HS_BENCH_CSV"
exit $status
