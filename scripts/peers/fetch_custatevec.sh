#!/usr/bin/env bash
# Downloads the cuStateVec wheel (custatevec-cu13 from PyPI: libcustatevec.so and its header) into .peers/ (gitignored).
# usage: scripts/peers/fetch_custatevec.sh      (here, with network; the GPU machine unpacks it, run_peers.sh)
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .peers
ls .peers/custatevec_cu13-*.whl >/dev/null 2>&1 || pip download --quiet --no-deps custatevec-cu13 -d .peers/
ls -la .peers/custatevec_cu13-*.whl
