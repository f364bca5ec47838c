#!/usr/bin/env bash
# `make install` into a temporary prefix, then build and run a program against the installed
# headers and library through pkg-config (the way another C/MPI code embeds hpcsim).
set -u
ROOT=$(realpath "$(dirname "$0")/../..")
if [ "${BUILD:-build}" != build ]; then
    # other build directories (make asan) have flags that `make install` would not repeat; exit 77 so
    # that the runner counts it skipped (exit 0 made it a PASS that had checked nothing)
    echo "SKIP  the install test runs on the default build only (BUILD=$BUILD)"; exit 77
fi
PREFIX=$(mktemp -d)
trap 'rm -rf "$PREFIX"' EXIT
# every core: where the sources are newer than the build (a fresh copy of the tree), install rebuilds
make -C "$ROOT" -j"$(nproc 2>/dev/null || echo 2)" --no-print-directory install PREFIX="$PREFIX" >"$PREFIX/install.log" 2>&1 ||
    { echo "FAIL make install: $(tail -5 "$PREFIX/install.log")"; echo "0 passed, 1 failed"; exit 1; }
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
CC=$(command -v mpicc || echo gcc)
if ! $CC -fopenmp $(pkg-config --cflags hpcsim) "$ROOT/tests/cli/embed_ghz.c" -o "$PREFIX/embed" \
        $(pkg-config --static --libs hpcsim) 2>"$PREFIX/cc.log"; then
    echo "FAIL compile against the installed library: $(head -5 "$PREFIX/cc.log")"; echo "0 passed, 1 failed"; exit 1
fi
if out=$("$PREFIX/embed") && [ -x "$PREFIX/bin/hpcsim" ] && "$PREFIX/bin/hpcsim" --version >/dev/null; then
    echo "ok   installed binary runs; embedded GHZ: $out"; echo "1 passed, 0 failed"
else
    echo "FAIL embedded program: $out"; echo "0 passed, 1 failed"; exit 1
fi
