#!/usr/bin/env bash
# Collective and gathered output write the same files: the same content at 1, 2 and 4 ranks by either path (hpcsim compare, ncdump, h5dump, the .xmf), and the heat solver's output and restart at 4 ranks.
set -u
BUILD=${BUILD:-build}
GEN=$(realpath "$BUILD/tests/mpi/test_output_paths" 2>/dev/null)
. "$(dirname "$0")/lib.sh"
if [ ! -x "$GEN" ]; then
    echo "SKIP $BUILD/tests/mpi/test_output_paths is not built (make tests)"
    exit 77
fi
if [ $HAVE_MPI = 0 ]; then
    echo "SKIP no MPI build (or no mpirun): there is one rank and one path"
    exit 77
fi
features=$("$HS_BIN" --version)
echo "notice: $(echo "$features" | grep -o -e '[+-]hdf5_parallel' -e '[+-]netcdf_parallel' | tr '\n' ' ')(+: output.parallel = auto writes collectively)"

# a dump without what differs by design: the file name in h5dump's first line, time stamps in history
# and the run record, the run's measured times and rate (hpcsim_wall_time ...: hpcsim summary's), its
# identity (hpcsim_run_id, drawn per run), and the file addresses that h5dump prints in the dimension
# scales' object references (DATASET 1234 "/x": storage detail, where parallel HDF5's early allocation
# puts the objects; the names they reference are kept; h5dump -w 0 so that their digits do not
# move its line breaks)
MEASURED='hpcsim_(wall_time|loop_time|output_time|checkpoint_time|rate|run_id)'
dump() {
    case "$1" in
    *.nc) ncdump "$1" | sed 1d ;;
    *.h5) h5dump -w 0 "$1" | sed 1d | sed -E 's/DATASET [0-9]+ /DATASET /g' ;;
    *) cat "$1" ;;
    esac | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g' |
        awk -v re="ATTRIBUTE \"$MEASURED\"" '$0 ~ re { m = 1 } m && /\(0\):/ { sub(/\(0\): .*/, "(0): MEASURED"); m = 0 } { print }' |
        sed -E "s/(:$MEASURED = ).*;/\1MEASURED ;/"
}

# 1. the same files written at 1, 2 and 4 ranks, collectively (auto) and through rank 0 (off)
for np in 1 2 4; do
    mkdir -p np$np
    if HS_KEEP_OUTPUT=$WORK/np$np "${MPIRUN[@]}" -n $np "$GEN" >gen$np.log 2>&1; then
        ok "test_output_paths at $np ranks (both paths, checked against the exact fields)"
    else
        bad "test_output_paths at $np ranks: $(tail -5 gen$np.log)"
    fi
done
shopt -s nullglob
ref=(np1/off/*.nc np1/off/*.h5)
shopt -u nullglob
[ ${#ref[@]} -gt 0 ] || bad "no reference files in np1/off"
vars="T q m mask energy time x y z x_bnds z_bnds cell_area"
for f in "${ref[@]}"; do
    name=$(basename "$f")
    for other in np1/auto np2/off np2/auto np4/off np4/auto; do
        g=$other/$name
        nbad=0
        for v in $vars; do
            "$HS_BIN" compare "$f" "$g" $v >cmp.txt 2>&1 || { nbad=$((nbad + 1)); echo "     $v: $(cat cmp.txt)"; }
        done
        if [ $nbad = 0 ]; then ok "$g: every variable bitwise equal to np1/off/$name (hpcsim compare)"; else bad "$g: $nbad variables differ"; fi
        tool=ncdump
        [ "${name##*.}" = h5 ] && tool=h5dump
        if command -v $tool >/dev/null; then
            if diff <(dump "$f") <(dump "$g") >dump.diff; then ok "$g: $tool output (attributes, coordinates, data) equals the reference's"
            else bad "$g: $tool output differs: $(head -6 dump.diff)"; fi
        fi
        x=${g%.h5}.xmf
        if [ "${name##*.}" = h5 ]; then
            if cmp -s "${f%.h5}.xmf" "$x"; then ok "$x equals the reference's"; else bad "$x differs from ${f%.h5}.xmf"; fi
        fi
    done
done

# 2. the heat solver at 4 ranks (a 3-D decomposition): output.parallel = auto and off give the
#    same file, and a run stopped by a signal and restarted equals the uninterrupted one bitwise
cat >run.ini <<EOF
[run]
solver = heat
device = $DEVICE
allow_shared_gpu = true
[heat]
ndim = 3
n = 20 18 14
length = 1 1 1
t_end = 0.02
initial = gaussian
sigma = 0.15
T0 = 300
amplitude = 20
[output]
format = $FMT
every_steps = 10
deflate = 1
[checkpoint]
every_steps = 20
EOF
for fmt in $FMT hdf5; do
    ext=nc
    [ $fmt = hdf5 ] && ext=h5
    for mode in auto off; do # in folders of their own, so that the file and checkpoint names are the same
        mkdir -p $mode
        (cd $mode && "${MPIRUN[@]}" -n 4 "$HS_BIN" run ../run.ini --quiet output.format=$fmt output.parallel=$mode \
            output.path=heat checkpoint.path=ck.h5 >../o.txt 2>../e.txt) || bad "heat at 4 ranks, $fmt, output.parallel=$mode: $(grep hpcsim e.txt)"
    done
    # the dumps differ only where the runs' command lines and parameters name the path
    same() { dump "$1" | grep -v STRSIZE | sed -E 's/parallel( = |=)(auto|off)/parallel\1X/g'; }
    if "$HS_BIN" compare auto/heat.$ext off/heat.$ext T >cmp.txt && "$HS_BIN" compare auto/heat.$ext off/heat.$ext time >>cmp.txt &&
        diff <(same auto/heat.$ext) <(same off/heat.$ext) >dump.diff; then
        ok "heat $fmt at 4 ranks: output.parallel=auto and off write the same file (T, time bitwise; full dump)"
    else
        bad "heat $fmt at 4 ranks: the paths differ: $(cat cmp.txt; head -6 dump.diff)"
    fi
    HS_TEST_SIGNAL_AT_STEP=30 "${MPIRUN[@]}" -x HS_TEST_SIGNAL_AT_STEP -n 4 "$HS_BIN" run run.ini --quiet output.format=$fmt \
        output.path=split checkpoint.path=stop.h5 >o.txt 2>e.txt
    rc=$?
    if [ $rc = 3 ] && [ -f split.$ext.partial ]; then
        "${MPIRUN[@]}" -n 4 "$HS_BIN" run run.ini --quiet output.format=$fmt output.path=split checkpoint.path=stop2.h5 \
            --restart stop.h5 >o.txt 2>e.txt || bad "heat $fmt restart at 4 ranks: $(grep hpcsim e.txt)"
        if "$HS_BIN" compare auto/heat.$ext split.$ext T >cmp.txt && "$HS_BIN" compare auto/heat.$ext split.$ext time >>cmp.txt; then
            ok "heat $fmt at 4 ranks: stopped at step 30, resumed collectively, equals the uninterrupted file bitwise"
        else
            bad "heat $fmt restart at 4 ranks differs: $(cat cmp.txt)"
        fi
    else
        bad "heat $fmt at 4 ranks: the signal stop gave exit $rc: $(grep hpcsim e.txt)"
    fi
    rm -rf auto off split.* stop*.h5
    [ $FMT = hdf5 ] && break
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
