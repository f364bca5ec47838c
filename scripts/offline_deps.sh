#!/usr/bin/env bash
# Brings cmocka (the unit tests' framework) and cJSON (JSON reading) to a machine without network
# (the GPU machine): `fetch` downloads the Debian packages into .debs/ here, `unpack` (there)
# extracts them into .deps/, which the Makefile uses.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(libcmocka0 libcmocka-dev libcjson1 libcjson-dev)
case "${1:-}" in
fetch)
    mkdir -p .debs
    (cd .debs && apt-get download "${PKGS[@]}")
    ls .debs
    ;;
unpack)
    mkdir -p .deps
    if pkg-config --exists cmocka libcjson 2>/dev/null; then echo "offline_deps: cmocka and cJSON already installed"; exit 0; fi
    for f in .debs/*.deb; do dpkg -x "$f" .deps; done
    # the -dev packages' .so links are relative to their own folder, which dpkg -x keeps
    echo "offline_deps: unpacked $(ls .debs | wc -l) packages into .deps/"
    ;;
*)
    echo "usage: scripts/offline_deps.sh fetch | unpack" >&2
    exit 2
    ;;
esac
