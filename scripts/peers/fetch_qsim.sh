#!/usr/bin/env bash
# Exports the qsim sources that the GPU benchmark builds (apps/ and lib/) into .peers/qsim (gitignored; never committed).
# usage: scripts/peers/fetch_qsim.sh [QSIM_SOURCE]
#   QSIM_SOURCE: a git directory or a checkout of github.com/quantumlib/qsim (default: $QSIM_SRC, else the
#   local mirror /work/.mirror/quantumlib+qsim/repo, else a shallow clone from GitHub).
# The GPU machine has no network: run this here, then carry .peers/ to it (scripts/peers/run_peers.sh).
set -eu
cd "$(dirname "$0")/../.."
src=${1:-${QSIM_SRC:-/work/.mirror/quantumlib+qsim/repo}}
dst=.peers/qsim
rm -rf "$dst"
mkdir -p "$dst"
if [ -d "$src" ] && git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    git --git-dir="$src" archive --format=tar HEAD apps lib | tar -x -C "$dst"
    git --git-dir="$src" rev-parse HEAD >"$dst/COMMIT"
elif [ -d "$src/.git" ]; then
    git -C "$src" archive --format=tar HEAD apps lib | tar -x -C "$dst"
    git -C "$src" rev-parse HEAD >"$dst/COMMIT"
else
    tmp=$(mktemp -d)
    git clone -q --depth 1 https://github.com/quantumlib/qsim "$tmp/qsim"
    git -C "$tmp/qsim" archive --format=tar HEAD apps lib | tar -x -C "$dst"
    git -C "$tmp/qsim" rev-parse HEAD >"$dst/COMMIT"
    rm -rf "$tmp"
fi
echo "qsim $(cat "$dst/COMMIT") in $dst ($(du -sh "$dst" | cut -f1))"
