#!/usr/bin/env bash
# Downloads the cuStateVec wheel (custatevec-cu13 from PyPI: libcustatevec.so and its header) into .peers/ (gitignored)
# and repacks its cuquantum/ folder as .peers/cuquantum.tar.xz (xz -9e: 58.5 MB against the wheel's 59.9), which with
# the project's tree, .peers/qsim and .debs stays under the device tool's 64 MiB carry (the wheel does not).
# usage: scripts/peers/fetch_custatevec.sh      (here, with network; the GPU machine unpacks it, run_peers.sh)
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .peers
ls .peers/custatevec_cu13-*.whl >/dev/null 2>&1 || pip download --quiet --no-deps custatevec-cu13 -d .peers/
ls -la .peers/custatevec_cu13-*.whl
if [ ! -f .peers/cuquantum.tar.xz ]; then
    tmp=$(mktemp -d)
    whl=$(ls .peers/custatevec_cu13-*.whl | head -1)
    python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$tmp"
    tar -C "$tmp" -cf - cuquantum | xz -9e -T1 >.peers/cuquantum.tar.xz.part && mv .peers/cuquantum.tar.xz.part .peers/cuquantum.tar.xz
    rm -rf "$tmp"
fi
ls -la .peers/cuquantum.tar.xz
