#!/usr/bin/env bash
# `hpcsim check` rejects every input that `hpcsim run` rejects: each case of tests/data/bad_inputs.txt
# (the bad inputs of the CLI suite) runs through both; both must exit 2, print the same
# "hpcsim: error:" line and leave no file behind (in the case's folder or the fixtures').
set -u
. "$(dirname "$0")/lib.sh"
CORPUS=$ROOT/tests/data/bad_inputs.txt

# ---- shared fixtures: a heat case, a checkpoint of it at step 20, damaged copies, paths in the way
FIX=$WORK/fix
mkdir -p "$FIX/adir.nc" "$FIX/adir.h5" "$FIX/segydir_vz.sgy"
cat > "$FIX/base.ini" <<INI
[run]
solver = heat
device = cpu
[heat]
ndim = 2
n = 40 24
t_end = 0.02
initial = gaussian
sigma = 0.1
center = 0.4 0.5
bc_ylo = periodic
bc_yhi = periodic
[output]
every_steps = 5
[checkpoint]
every_steps = 20
INI
(cd "$FIX" && "$HS_BIN" run base.ini --quiet run.max_steps=20 output.path=made checkpoint.path=ck.h5 >/dev/null 2>&1)
rm -f "$FIX"/made.*
if [ ! -s "$FIX/ck.h5" ]; then echo "FAIL could not write the fixture checkpoint"; exit 1; fi
head -c $(($(stat -c %s "$FIX/ck.h5") * 2 / 3)) "$FIX/ck.h5" > "$FIX/cut.h5"
have_step=0
if python3 -c "import h5py" 2>/dev/null && "$HS_BIN" --version | grep -q '+hdf5'; then
    python3 - "$FIX" <<'PY' && have_step=1
import h5py, shutil, sys
d = sys.argv[1]
shutil.copy(d + "/ck.h5", d + "/step.h5")
with h5py.File(d + "/step.h5", "r+") as f:
    f.attrs["step"] = f.attrs["step"] + 1
PY
fi
touch "$FIX/keep.nc" "$FIX/keep.h5"
fix_before=$(cd "$FIX" && find . | sort)

# ---- one case: its files in an empty folder, then check and run
run_case() { # name, args (shell words), files written into the folder are already there
    local name=$1 args=$2 dir=$3
    local before
    before=$(cd "$dir" && find . | sort)
    local -a words
    eval "words=($args)"
    local cmd rc_check rc_run msg_check msg_run
    for cmd in check run; do
        (cd "$dir" && "$HS_BIN" "$cmd" "${words[@]}" >"$WORK/out.$cmd" 2>"$WORK/err.$cmd")
        eval "rc_$cmd=$?"
        # the free memory a message quotes moves between the two runs: compare without it
        eval "msg_$cmd=\$(grep -m1 '^hpcsim: error:' \"\$WORK/err.$cmd\" | sed -E 's/[0-9.e+]+ GB \\([0-9]+ bytes\\) are available/N GB available/; s/only [0-9.e+]+ GiB is available/only N GiB is available/')"
        local after
        after=$(cd "$dir" && find . | sort)
        if [ "$before" != "$after" ]; then
            bad "$name: '$cmd' left files: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"
            return
        fi
        if [ "$(cd "$FIX" && find . | sort)" != "$fix_before" ]; then bad "$name: '$cmd' changed the fixtures"; return; fi
    done
    # shellcheck disable=SC2154
    if [ "$rc_run" != 2 ]; then bad "$name: run exited $rc_run, not 2: $(cat "$WORK/err.run")"; return; fi
    if [ "$rc_check" != 2 ]; then bad "$name: check exited $rc_check, not 2 (run: $msg_run)"; return; fi
    if [ -z "$msg_run" ] || [ "$msg_check" != "$msg_run" ]; then
        bad "$name: different messages"
        printf '  check: %s\n  run:   %s\n' "$msg_check" "$msg_run"
        return
    fi
    ok "$name: $(echo "$msg_run" | cut -c1-110)"
}

# ---- read the corpus: "== NAME", "-- FILE" (contents follow), "$ ARGS"
name="" file="" args="" n=0 dir=""
start_case() {
    n=$((n + 1))
    dir=$WORK/case$n
    mkdir -p "$dir"
    file=""
}
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    "== "*) name=${line#== }; start_case ;;
    "-- "*) file=$dir/${line#-- }; : > "$file" ;;
    "\$ "*)
        args=${line#\$ }
        if [[ "$args" == *'$FIX/step.h5'* ]] && [ $have_step = 0 ]; then
            echo "skip $name: h5py or HDF5 missing"
        else
            run_case "$name" "$args" "$dir"
        fi
        file="" ;;
    "#"* | "") [ -n "$file" ] && printf '%s\n' "$line" >> "$file" ;;
    *) [ -n "$file" ] && printf '%s\n' "$line" >> "$file" ;;
    esac
done < "$CORPUS"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
