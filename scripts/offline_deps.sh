#!/usr/bin/env bash
# Brings libinih and cmocka to a machine without network (the GPU machine): `fetch` downloads the
# Debian packages into .debs/ here, `unpack` (there) extracts them into .deps/, which the Makefile uses.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(libinih1 libinih-dev libcmocka0 libcmocka-dev)
case "${1:-}" in
fetch)
    mkdir -p .debs
    (cd .debs && apt-get download "${PKGS[@]}")
    ls .debs
    ;;
unpack)
    mkdir -p .deps
    need=0
    pkg-config --exists inih 2>/dev/null || need=1
    pkg-config --exists cmocka 2>/dev/null || need=1
    if [ $need = 0 ]; then echo "offline_deps: inih and cmocka already installed"; exit 0; fi
    for f in .debs/*.deb; do dpkg -x "$f" .deps; done
    # the -dev packages' .so links are relative to their own folder, which dpkg -x keeps
    echo "offline_deps: unpacked $(ls .debs | wc -l) packages into .deps/"
    ;;
*)
    echo "usage: scripts/offline_deps.sh fetch | unpack" >&2
    exit 2
    ;;
esac
