#!/usr/bin/env bash
# make validate step: train the published Burgers PINN (inputs/pinn_burgers.ini) and require a
# relative L2 error <= 1e-3 on the 256 x 100 reference grid; prints the error and the wall time.
# Extra arguments are passed to hpcsim as overrides (e.g. run.device=cpu).
set -u
BUILD=${BUILD:-build}
BIN=$([ "$BUILD" = build ] && echo bin/hpcsim || echo "$BUILD/bin/hpcsim")
dir=$(mktemp -d)
log="$dir/pinn.log"
"$BIN" run inputs/pinn_burgers.ini output.path="$dir/pinn_burgers" pinn.history_path="$dir/pinn_burgers_history" \
    run.quiet=true "$@" | tee "$log" || exit 1
err=$(sed -n 's/.*relative L2 error \([0-9.eE+-]*\),.*/\1/p' "$log" | tail -1)
[ -n "$err" ] || { echo "pinn_validate: no error reported"; exit 1; }
if awk -v e="$err" 'BEGIN { exit !(e <= 1e-3) }'; then
    echo "pinn_validate: relative L2 error $err <= 1e-3 (paper: 6.7e-4); outputs in $dir"
else
    echo "pinn_validate: relative L2 error $err > 1e-3; outputs in $dir"
    exit 1
fi
