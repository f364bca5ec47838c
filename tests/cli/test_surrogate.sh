#!/usr/bin/env bash
# The surrogate end to end on inputs/surrogate_quick.ini: train (history, model file), a run stopped by
# a signal and restarted giving the same curve and weights bitwise, 2 ranks against 1, forecast
# files with the input's names and coordinates, evaluate's scores, and bad inputs (check and run both
# exit 2 with the same message and write nothing), CF packed data.
set -u
. "$(dirname "$0")/lib.sh"
# this script's own counters: passes silently, every word of a failure
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
if ! "$HS_BIN" --version | grep -q '+netcdf'; then echo "SKIP: the surrogate's test data are NetCDF (this build has none)"; exit 77; fi
command -v ncgen >/dev/null || { echo "SKIP: ncgen (netcdf-bin) is not installed"; exit 77; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

cp "$ROOT/inputs/surrogate_quick.ini" quick.ini
for i in 0 1 2 3; do "$ROOT/scripts/surrogate_testdata.sh" traj$i.nc 40 16 16 0.$i; done
Q=(quick.ini --quiet run.device=$DEVICE run.allow_shared_gpu=true surrogate.steps=24 output.every_steps=6 checkpoint.every_steps=12)

# ---- training: the history (5 records), the model file, a falling loss
if "$HS_BIN" train "${Q[@]}" output.path=full surrogate.model_path=full.h5 checkpoint.path=ckf.h5 >out.txt 2>err.txt; then
    grep -q "surrogate: 24 steps on 1 rank" out.txt && [ -f full.h5 ] && ok || bad "train: $(cat out.txt err.txt)"
    ncdump -h full.nc | grep -q "iteration = UNLIMITED ; // (5 currently)" && ok || bad "history records"
    ncdump -h full.nc | grep -q "double val_loss(iteration)" && ok || bad "history variables"
    python3 - <<'PY' 2>/dev/null && ok || { command -v python3 >/dev/null && python3 -c "import netCDF4" 2>/dev/null && bad "the loss did not fall"; }
import netCDF4
l = netCDF4.Dataset("full.nc")["loss"][:]
assert l[-1] < 0.6 * l[0], l
PY
else
    bad "train failed: $(cat err.txt)"
fi

# ---- stopped by SIGTERM after step 9 (checkpoint, exit 3), restarted: the same curve and weights bitwise
HS_TEST_SIGNAL_AT_STEP=9 "$HS_BIN" train "${Q[@]}" output.path=part surrogate.model_path=part.h5 checkpoint.path=ckp.h5 >/dev/null 2>err.txt
rc=$?
[ $rc = 3 ] && [ -f ckp.h5 ] && ok || bad "signal: exit $rc: $(cat err.txt)"
"$HS_BIN" train "${Q[@]}" output.path=part surrogate.model_path=part.h5 checkpoint.path=ckp.h5 --restart ckp.h5 >/dev/null 2>err.txt \
    || bad "restart: $(cat err.txt)"
for v in loss val_loss grad_norm learning_rate; do
    "$HS_BIN" compare full.nc part.nc $v >cmp.txt && ok || bad "restart: $v: $(cat cmp.txt)"
done
"$HS_BIN" compare full.h5 part.h5 params >cmp.txt && ok || bad "restart: weights: $(cat cmp.txt)"

# ---- 2 ranks, the same global batch: the same curve to round-off
if "$HS_BIN" --version | grep -q '+mpi' && command -v mpirun >/dev/null; then
    mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" train "${Q[@]}" output.path=np2 \
        surrogate.model_path=np2.h5 checkpoint.path=ck2.h5 >/dev/null 2>err.txt || bad "2 ranks: $(cat err.txt)"
    for v in loss val_loss; do "$HS_BIN" compare full.nc np2.nc $v 1e-6 >cmp.txt && ok || bad "2 ranks: $v: $(cat cmp.txt)"; done
fi

# ---- on the GPU: the CPU's curve (cuDNN against im2col + OpenBLAS: round-off, grown over 24 steps)
if [ "$DEVICE" = cuda ]; then
    "$HS_BIN" train "${Q[@]}" run.device=cpu output.path=cpu surrogate.model_path=cpu.h5 checkpoint.path=ckc.h5 >/dev/null 2>err.txt \
        || bad "cpu run: $(cat err.txt)"
    for v in loss val_loss; do "$HS_BIN" compare cpu.nc full.nc $v 1e-4 >cmp.txt && ok || bad "CPU vs GPU: $v: $(cat cmp.txt)"; done
fi

# ---- forecast: one CF file per initial time, with the input's variable names and coordinates
if "$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fc surrogate.initial_times="2.0 3.9" >out.txt 2>err.txt; then
    [ -f fc_0.nc ] && [ -f fc_1.nc ] && grep -q "2 forecasts of 4 frames" out.txt && ok || bad "forecast files: $(cat out.txt)"
    ncdump -h fc_1.nc | grep -q "double h(time, y, x)" && ncdump -h fc_1.nc | grep -q 'h:units = "m"' && ok || bad "forecast variables"
    "$HS_BIN" compare fc_0.nc traj3.nc x >/dev/null && "$HS_BIN" compare fc_0.nc traj3.nc y >/dev/null && ok || bad "forecast coordinates"
    # valid times 2.1 .. 2.4 after the initial time 2.0
    ncdump -v time fc_0.nc | grep -q "time = 2.1, 2.2, 2.3, 2.4" && ok || bad "forecast times: $(ncdump -v time fc_0.nc | tail -3)"
else
    bad "forecast failed: $(cat err.txt)"
fi
# ---- the same network spelled otherwise: variables with a comma, the kernel per layer (a model
# was refused because the keys' text differed: kernel = 3 against 3 3)
if "$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fcsp surrogate.initial_times=2.0 \
    surrogate.variables="h, u" surrogate.kernel="3 3" >out.txt 2>err.txt && "$HS_BIN" compare fcsp_0.nc fc_0.nc h 0 >/dev/null 2>&1; then
    ok
else bad "forecast with the architecture spelled otherwise: $(cat err.txt)"; fi

# ---- NetCDF-4 string attributes (as xarray writes them) read like character ones: the forecast's
# time and variable units (they came out as "1"); and the input's calendar is the forecast's (it was
# always "standard": 360-day times decoded to other dates)
ncdump traj3.nc | sed 's/^\t\ttime:units = /\t\tstring time:units = /; s/^\t\th:units = /\t\tstring h:units = /' |
    sed 's/^\t\ttime:standard_name = "time" ;/&\n\t\ttime:calendar = "360_day" ;/' | ncgen -k nc4 -o strattr.nc
if ncdump -h strattr.nc | grep -q 'string time:units' &&
    "$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fcstr surrogate.forecast_file=strattr.nc >/dev/null 2>err.txt; then
    h=$(ncdump -h fcstr_0.nc)
    grep -q 'time:units = "seconds since 2000-01-01 00:00:00"' <<<"$h" && grep -q 'h:units = "m"' <<<"$h" && ok || bad "string attributes: $(grep units <<<"$h")"
    grep -q 'time:calendar = "360_day"' <<<"$h" && ok || bad "calendar: $(grep calendar <<<"$h")"
else bad "string attributes: $(cat err.txt)"; fi

# ---- a forecast needs only its input frames: a file of k = 4 frames (the first four of traj3.nc)
# forecasts from its last frame exactly as the long file does from the same time
"$ROOT/scripts/surrogate_testdata.sh" short4.nc 4 16 16 0.3
if "$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fcs surrogate.forecast_file=short4.nc >out.txt 2>err.txt &&
    "$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fcl surrogate.initial_times=0.3 >/dev/null 2>>err.txt; then
    "$HS_BIN" compare fcs_0.nc fcl_0.nc h 0 >cmp.txt && "$HS_BIN" compare fcs_0.nc fcl_0.nc u 0 >>cmp.txt && ok || bad "short file: $(cat cmp.txt)"
    ncdump -v time fcs_0.nc | grep -q "time = 0.4, 0.5, 0.6, 0.7" && ok || bad "short file's forecast times: $(ncdump -v time fcs_0.nc | tail -3)"
else
    bad "forecast from a file of k frames failed: $(cat err.txt)"
fi

# ---- frames twice as far apart as the training's: refused, naming both intervals (the network steps
# by the interval it learnt: it forecast 0.2 s per frame from 0.1 s steps without a word)
ncdump short4.nc | sed 's/time = 0, 0.1, 0.2, 0.3 ;/time = 0, 0.2, 0.4, 0.6 ;/' | ncgen -o slow4.nc
"$HS_BIN" forecast "${Q[@]}" surrogate.model_path=full.h5 output.path=fslow surrogate.forecast_file=slow4.nc >out.txt 2>err.txt; rc=$?
if [ $rc = 2 ] && grep -q "slow4.nc: frames 0.2 s apart, but the model full.h5 was trained on frames 0.1 s apart" err.txt && ! ls fslow* >/dev/null 2>&1; then ok
else bad "forecast from frames of another interval: exit $rc: $(grep error err.txt)"; fi

# ---- one level of (time, level, y, x) variables: z@850 takes level 850 of the level coordinate.  Level
# 850 of these files holds the (time, y, x) fields of t0..t3, so training on it is training on those
# (bitwise); the outputs are named h850, u850 with the level in the long name
for i in 0 1 2 3; do
    LEVELS="1000 850 500" "$ROOT/scripts/surrogate_testdata.sh" lev$i.nc 40 16 16 "$(awk -v i=$i 'BEGIN { print 0.25 * i }')"
    "$ROOT/scripts/surrogate_testdata.sh" flat$i.nc 40 16 16 "$(awk -v i=$i 'BEGIN { print 0.25 * i + 0.25 }')"
done
L=("${Q[@]}" surrogate.steps=12)
if "$HS_BIN" train "${L[@]}" surrogate.files="flat0.nc flat1.nc flat2.nc flat3.nc" output.path=flat surrogate.model_path=flat.h5 \
        checkpoint.path=ckl3.h5 >/dev/null 2>err.txt &&
    "$HS_BIN" train "${L[@]}" surrogate.files="lev0.nc lev1.nc lev2.nc lev3.nc" surrogate.variables="h@850 u@850" output.path=lev \
        surrogate.model_path=lev.h5 checkpoint.path=ckl4.h5 >/dev/null 2>>err.txt; then
    "$HS_BIN" compare flat.nc lev.nc loss 0 >cmp.txt && "$HS_BIN" compare flat.h5 lev.h5 params 0 >>cmp.txt && ok || bad "levels: $(cat cmp.txt)"
    "$HS_BIN" forecast "${L[@]}" surrogate.files="lev0.nc lev3.nc" surrogate.variables="h@850 u@850" surrogate.model_path=lev.h5 \
        output.path=fclev >/dev/null 2>err.txt || bad "forecast of levels: $(cat err.txt)"
    ncdump -h fclev_0.nc | grep -q 'h850:long_name = "layer thickness at level 850 hPa"' && ncdump -h fclev_0.nc | grep -q "double u850(time, y, x)" \
        && ok || bad "level outputs: $(ncdump -h fclev_0.nc | grep 850)"
else
    bad "training on levels failed: $(cat err.txt)"
fi

# ---- evaluate: scores (NetCDF and CSV) and the example window
if "$HS_BIN" evaluate "${Q[@]}" surrogate.model_path=full.h5 output.path=scores >out.txt 2>err.txt; then
    [ "$(wc -l <scores.csv)" = 9 ] && [ -f scores.nc ] && [ -f scores_example.nc ] && ok || bad "evaluate files"
    ncdump -h scores.nc | grep -q "double rmse_persistence_h(lead_time)" && ok || bad "scores variables"
    ncdump -h scores_example.nc | grep -q "double u_forecast(time, y, x)" && ok || bad "example variables"
    grep -q "test windows; RMSE" out.txt && ok || bad "evaluate table"
else
    bad "evaluate failed: $(cat err.txt)"
fi
# evaluate on 2 ranks with its files on a full disk (40 kB tmpfs; root and MPI only): exit 1 naming
# the call; written collectively, the score file's close left the ranks in two different HDF5
# collectives until killed (137), so the files of rank 0's values are written by rank 0 alone
fullev=$(mktemp -d)
if "$HS_BIN" --version | grep -q '+mpi' && command -v mpirun >/dev/null && mount -t tmpfs -o size=40k tmpfs "$fullev" 2>/dev/null; then
    timeout -s KILL 60 mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" evaluate "${Q[@]}" \
        surrogate.model_path=full.h5 output.path="$fullev/sc" >out.txt 2>err.txt
    rc=$?
    [ $rc = 1 ] && grep -q "rank 0: error: NetCDF call .* failed on $fullev/sc" err.txt && [ ! -f "$fullev/sc.nc" ] && ok ||
        bad "evaluate on 2 ranks on a full disk: exit $rc, $(grep -m2 error err.txt)"
    umount "$fullev"
fi
rmdir "$fullev" 2>/dev/null
# an output.path that fits PATH.nc.partial but not PATH_example.nc.partial (244 + 19 > 255): check and
# run refuse it, nothing written (the run wrote the scores and failed at the example, exit 1)
long=$(printf 's%.0s' $(seq 240))
for cmd in check evaluate; do
    "$HS_BIN" $cmd "${Q[@]}" surrogate.mode=evaluate surrogate.model_path=full.h5 output.path=$long >/dev/null 2>err.txt
    rc=$?
    [ $rc = 2 ] && grep -q "output.path: the output file's file name" err.txt && ! ls ${long}* >/dev/null 2>&1 && ok ||
        bad "$cmd with a long output.path: exit $rc, $(head -2 err.txt), $(ls ${long}* 2>/dev/null | wc -l) files"
done
# the example window's times in the units of its own file (the test file counting from another day
# was labelled with the first file's units)
ncdump traj3.nc | sed 's/seconds since 2000-01-01 00:00:00/seconds since 2000-02-01 00:00:00/' | ncgen -k nc4 -o traj3feb.nc
if "$HS_BIN" evaluate "${Q[@]}" surrogate.model_path=full.h5 output.path=scfeb surrogate.files="traj0.nc traj1.nc traj2.nc traj3feb.nc" \
    >/dev/null 2>err.txt; then
    ncdump -h scfeb_example.nc | grep -q 'time:units = "seconds since 2000-02-01 00:00:00"' && ok ||
        bad "example time units: $(ncdump -h scfeb_example.nc | grep 'time:units')"
else bad "evaluate with a file of other time units: $(cat err.txt)"; fi

# ---- CF packed data (short, scale_factor, add_offset) read as the unpacked values: the untrained
# network's loss on the same windows agrees to the packing's resolution (1e-4)
PACK=1 "$ROOT/scripts/surrogate_testdata.sh" packed.nc 40 16 16 0.3
for f in traj3 packed; do
    "$HS_BIN" train "${Q[@]}" surrogate.files="$f.nc $f.nc" surrogate.steps=1 output.path=p_$f surrogate.model_path=p_$f.h5 \
        checkpoint.every_steps=0 >/dev/null 2>err.txt || bad "packed: $f: $(cat err.txt)"
done
"$HS_BIN" compare p_traj3.nc p_packed.nc loss 1e-3 >cmp.txt && "$HS_BIN" compare p_traj3.h5 p_packed.h5 mean 1e-4 >>cmp.txt && ok \
    || bad "packed data: $(cat cmp.txt)"

# ---- bad inputs: check and run exit 2 with the same "hpcsim: error:" line, and no file appears
mkdir -p bad
"$ROOT/scripts/surrogate_testdata.sh" bad/grid.nc 40 12 16 0
"$ROOT/scripts/surrogate_testdata.sh" bad/short.nc 6 16 16 0
"$ROOT/scripts/surrogate_testdata.sh" bad/short3.nc 3 16 16 0
"$ROOT/scripts/surrogate_testdata.sh" bad/nan.nc 40 16 16 0 7
head -c 3000 full.h5 > bad/cut.h5
head -c 5000 traj1.nc > bad/cutdata.nc
PACK=1 "$ROOT/scripts/surrogate_testdata.sh" bad/fill.nc 40 16 16 0 5
U_RECORDS=30 "$ROOT/scripts/surrogate_testdata.sh" bad/unwritten.nc 40 16 16 0
expect_input_error() { # NAME PATTERN COMMAND ARGS...
    local name=$1 pat=$2 cmd=$3
    shift 3
    local after m1 m2 rc1 rc2
    "$HS_BIN" check quick.ini "$@" >/dev/null 2>e1.txt
    rc1=$?
    "$HS_BIN" "$cmd" quick.ini "$@" >/dev/null 2>e2.txt
    rc2=$?
    after=$(find . -mindepth 1 -newer e1.txt ! -name e1.txt ! -name e2.txt | sort)
    m1=$(grep -m1 '^hpcsim: error:' e1.txt) m2=$(grep -m1 '^hpcsim: error:' e2.txt)
    if [ $rc1 != 2 ] || [ $rc2 != 2 ]; then bad "$name: exits $rc1 (check), $rc2 ($cmd): $(cat e2.txt)"; return; fi
    if [ "$m1" != "$m2" ]; then bad "$name: check said '$m1', $cmd '$m2'"; return; fi
    if ! grep -qF -- "$pat" e2.txt; then bad "$name: '$m2' lacks '$pat'"; return; fi
    if [ -n "$after" ]; then bad "$name: wrote $after"; return; fi
    ok
}
expect_input_error "variable missing" "traj0.nc: no variable 'v'" train surrogate.variables="h v"
# a data file that is missing or a folder: the key named (the message named the file alone)
expect_input_error "a missing data file" "surrogate.files: cannot open data file nothere.nc: No such file or directory" train \
    surrogate.files="traj0.nc nothere.nc"
expect_input_error "a data file that is a folder" "surrogate.files: data file bad is not a regular file (a directory)" train \
    surrogate.files="traj0.nc bad"
expect_input_error "mismatched grids" "bad/grid.nc: grid of 12 x 16 points" train surrogate.files="traj0.nc bad/grid.nc"
expect_input_error "too few time steps" "bad/short.nc: 6 time steps, fewer than one window needs" train surrogate.files="traj0.nc bad/short.nc"
expect_input_error "several levels, none named" "lev0.nc: variable 'h' has 3 levels along 'level': name one" train \
    surrogate.files="lev0.nc lev1.nc"
expect_input_error "a level the file lacks" "lev0.nc: variable 'h' has no level 700 along 'level' (it has 1000 850 500)" train \
    surrogate.files="lev0.nc lev1.nc" surrogate.variables="h@700 u@850"
expect_input_error "a level of a field without levels" "traj0.nc: variable 'h' has no level dimension" train surrogate.variables="h@850 u"
expect_input_error "a level that is not a number" "surrogate.variables: 'h@top' is not NAME or NAME@LEVEL" train surrogate.variables="h@top u"
expect_input_error "a truncated data file" "bad/cutdata.nc: an HDF5 (or NetCDF-4) file that cannot be opened: truncated or damaged" \
    train surrogate.files="traj0.nc bad/cutdata.nc"
# frames not equally spaced (a record missing: 1.4 follows 1.2), or another file's interval (0.2 s);
# the first's interval in other units (minutes) is the same interval
ncdump traj1.nc | sed 's/^\( time = .*\)1\.3, /\1/; s/^\( *\)1\.3, 1\.4/\11.35, 1.4/' > /dev/null
ncdump traj1.nc | sed 's/ 1\.3, / 1.35, /' | ncgen -k nc4 -o bad/gap.nc
ncdump traj1.nc | sed '/^ time = /,/;/ s/\([0-9.]*[0-9]\)\( *[,;]\)/\1e0@\2/g' | awk '{ while (match($0, /[0-9.]+e0@/)) { v = substr($0, RSTART, RLENGTH - 3) * 2; $0 = substr($0, 1, RSTART - 1) v substr($0, RSTART + RLENGTH) } print }' | ncgen -k nc4 -o bad/slow.nc
ncdump traj1.nc | sed '/^ time = /,/;/ s/\([0-9.]*[0-9]\)\( *[,;]\)/\1e0@\2/g' | awk '{ while (match($0, /[0-9.]+e0@/)) { v = substr($0, RSTART, RLENGTH - 3) / 60; $0 = substr($0, 1, RSTART - 1) sprintf("%.17g", v) substr($0, RSTART + RLENGTH) } print }' | sed 's/seconds since 2000/minutes since 2000/' | ncgen -k nc4 -o minutes.nc
expect_input_error "frames with a gap" "bad/gap.nc: the frames are not equally spaced: 'time' steps by 0.1 seconds since 2000-01-01 00:00:00 from time step 0 to 1 and by 0.15 from 12 to 13" \
    train surrogate.files="traj0.nc bad/gap.nc"
expect_input_error "a file of another interval" "bad/slow.nc: frames 0.2 seconds since 2000-01-01 00:00:00 apart, traj0.nc's 0.1 seconds" \
    train surrogate.files="traj0.nc bad/slow.nc"
"$HS_BIN" check quick.ini surrogate.files="traj0.nc minutes.nc" >"$CAP/o" 2>&1 && ok || bad "the same interval in minutes: $(grep error "$CAP/o")"
# a time axis that is not a CF time among CF ones: the intervals cannot be compared (it passed unchecked)
ncdump traj1.nc | sed 's/time:units = "seconds since 2000-01-01 00:00:00"/time:units = "1"/' | ncgen -k nc4 -o bad/unitless.nc
expect_input_error "a time axis in '1' among CF times" "bad/unitless.nc: its time axis 'time' is in '1' and traj0.nc's in 'seconds since 2000-01-01 00:00:00': the frame intervals cannot be compared" \
    train surrogate.files="traj0.nc bad/unitless.nc"
expect_input_error "NaN in the data" "bad/nan.nc: variable 'h' is nan at time step 7" train surrogate.files="traj0.nc bad/nan.nc"
expect_input_error "missing value" "bad/fill.nc: variable 'h' has a missing value at time step 5" train surrogate.files="traj0.nc bad/fill.nc"
# CF 2.5.1: every value of a missing_value vector marks missing data, and so does a value outside
# valid_min/valid_max/valid_range (only missing_value's first value was taken, and no valid range:
# -888 and 5 m trained as data)
ncdump traj1.nc | sed 's/^\t\th:units = "m" ;/&\n\t\th:missing_value = -999., -888. ;/; /^ h =/{n;s/^  1\.[0-9]*,/  -888,/}' | ncgen -k nc4 -o bad/missvec.nc
ncdump traj1.nc | sed 's/^\t\th:units = "m" ;/&\n\t\th:valid_range = 0., 3. ;/; /^ h =/{n;s/^  1\.[0-9]*,/  5,/}' | ncgen -k nc4 -o bad/range.nc
ncdump traj1.nc | sed 's/^\t\th:units = "m" ;/&\n\t\th:valid_max = 3. ;/; /^ h =/{n;s/^  1\.[0-9]*,/  5,/}' | ncgen -k nc4 -o bad/vmax.nc
expect_input_error "missing_value's second value" "bad/missvec.nc: variable 'h' has a missing value at time step 0, point (y 0, x 0)" \
    train surrogate.files="traj0.nc bad/missvec.nc"
expect_input_error "a value outside valid_range" "bad/range.nc: variable 'h' has a missing value at time step 0, point (y 0, x 0)" \
    train surrogate.files="traj0.nc bad/range.nc"
expect_input_error "a value above valid_max" "bad/vmax.nc: variable 'h' has a missing value at time step 0, point (y 0, x 0)" \
    train surrogate.files="traj0.nc bad/vmax.nc"
# records never written hold NetCDF's default fill (no _FillValue attribute): missing, not 9.97e36
expect_input_error "records never written" "bad/unwritten.nc: variable 'u' has a missing value at time step 30" train \
    surrogate.files="traj0.nc bad/unwritten.nc"
expect_input_error "corrupt model" "bad/cut.h5" evaluate surrogate.mode=evaluate surrogate.model_path=bad/cut.h5
expect_input_error "model of another architecture" "full.h5: the model was trained with surrogate.hidden = 8 8" forecast \
    surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.hidden="16 16"
expect_input_error "model of other variables' order" "full.h5: the model was trained with surrogate.variables = h u" forecast \
    surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.variables="u, h"
expect_input_error "model of other kernels" "full.h5: the model was trained with surrogate.kernel = 3" forecast \
    surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.kernel="3 5"
expect_input_error "model on another grid" "full.h5: the model was trained on a 16 x 16 grid" evaluate \
    surrogate.mode=evaluate surrogate.model_path=full.h5 surrogate.files="bad/grid.nc bad/grid.nc"
expect_input_error "a training checkpoint as model" "surrogate.model_path: ckf.h5: checkpoint was written by solver 'surrogate', not 'surrogate-model'" \
    forecast surrogate.mode=forecast surrogate.model_path=ckf.h5
printf 'junk' > junk.h5
expect_input_error "a model file that is no checkpoint" "surrogate.model_path: junk.h5: not an hpcsim checkpoint" \
    forecast surrogate.mode=forecast surrogate.model_path=junk.h5
# a model file that is missing or a folder: the key named (the message named the file alone, as a checkpoint)
expect_input_error "a missing model file" "surrogate.model_path: cannot open model file nomodel.h5: No such file or directory" \
    forecast surrogate.mode=forecast surrogate.model_path=nomodel.h5
expect_input_error "a model file that is a folder" "surrogate.model_path: model file bad is not a regular file (a directory)" \
    evaluate surrogate.mode=evaluate surrogate.model_path=bad
expect_input_error "forecast file shorter than the input frames" "bad/short3.nc: 3 time steps, fewer than a forecast starts from" \
    forecast surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.forecast_file=bad/short3.nc
# the same grid shape on other coordinates (the model's grid is its coordinates, as training's files)
ncdump traj2.nc | sed 's/^ x = 0.03125,/ x = 10.03125,/' | ncgen -k nc4 -o bad/shifted.nc
expect_input_error "forecast on other coordinates" "full.h5: the model was trained on other coordinates" forecast \
    surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.forecast_file=bad/shifted.nc
# a variable in other units: among the training files (a file of h in cm trained beside files in m,
# normalised with one mean) and against the model's (a model of h in m forecast cm as garbage)
ncdump traj2.nc | sed 's/^\t\th:units = "m" ;/\t\th:units = "cm" ;/' | ncgen -k nc4 -o bad/cm.nc
expect_input_error "a file of other units" "bad/cm.nc: variable 'h' is in 'cm', but in traj0.nc in 'm'" train \
    surrogate.files="traj0.nc bad/cm.nc"
expect_input_error "forecast from data in other units" "full.h5: the model was trained on 'h' in 'm', the data (bad/cm.nc) give it in 'cm'" \
    forecast surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.forecast_file=bad/cm.nc
expect_input_error "initial time not in the file" "surrogate.initial_times: 2.05 is not a time of" forecast \
    surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.initial_times=2.05
expect_input_error "restart with another architecture" "surrogate.hidden: the checkpoint ckf.h5 was made with surrogate.hidden = 8 8" \
    train run.restart=ckf.h5 surrogate.hidden="16 16"
expect_input_error "restart from a corrupt checkpoint" "bad/cut.h5" train run.restart=bad/cut.h5
# fewer steps than the checkpoint holds: nothing left to run (it wrote an empty output and a model, exit 0)
expect_input_error "restart with fewer steps than the checkpoint's" "surrogate.steps: 1 is before the checkpoint ckf.h5" \
    train run.restart=ckf.h5 surrogate.steps=1
expect_input_error "model path naming a data file (training replaced it)" "surrogate.model_path: traj0.nc is a data file of surrogate.files" \
    train surrogate.model_path=traj0.nc
expect_input_error "output path naming a data file" "output.path: the output file traj1.nc is a data file of the surrogate" \
    train output.path=traj1
expect_input_error "no training window" "surrogate.split: leaves no training window" train surrogate.split="0.04 0.06 0.9"
# what a run writes may not replace what it reads or another of its outputs (each of these did, exit 0)
expect_input_error "evaluate's scores onto the model (HDF5)" "output.path: the output file full.h5 is the model file" \
    evaluate surrogate.mode=evaluate surrogate.model_path=full.h5 output.path=full output.format=hdf5
cp traj2.nc fin_0.nc
expect_input_error "a forecast onto its own input" "output.path: the output file fin_0.nc is a data file" \
    forecast surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.forecast_file=fin_0.nc output.path=fin
rm -f fin_0.nc
expect_input_error "the model onto the training history" "output.path: the output file hist.nc is the model file" \
    train surrogate.model_path=hist.nc output.path=hist
expect_input_error "the model onto the checkpoint" "surrogate.model_path: same.h5 is also checkpoint.path" \
    train surrogate.model_path=same.h5 checkpoint.path=same.h5
# a field stored (y, x, time): the time axis must come first (it was read as y, and time as x)
awk 'BEGIN { nt = 40; n = 16
  print "netcdf yxt {\ndimensions:\n  y = " n " ;\n  x = " n " ;\n  time = " nt " ;\nvariables:"
  print "  double time(time) ;\n    time:units = \"seconds since 2000-01-01\" ;\n  double y(y) ;\n  double x(x) ;"
  print "  double h(y, x, time) ;\n  double u(y, x, time) ;\ndata:"
  printf "  time ="; for (t = 0; t < nt; t++) printf "%s %g", (t ? "," : ""), 0.1 * t; print " ;"
  printf "  y ="; for (j = 0; j < n; j++) printf "%s %g", (j ? "," : ""), j; print " ;"
  printf "  x ="; for (j = 0; j < n; j++) printf "%s %g", (j ? "," : ""), j; print " ;"
  for (v = 0; v < 2; v++) { printf "  %s =", v ? "u" : "h"; for (k = 0; k < n * n * nt; k++) printf "%s %g", (k ? "," : ""), sin(k + v); print " ;" }
  print "}" }' > bad/yxt.cdl && ncgen -k nc4 -o bad/yxt.nc bad/yxt.cdl
expect_input_error "time not the first dimension" "bad/yxt.nc: variable 'h' is (y, x, time): its time dimension 'time' is not the first" \
    train surrogate.files="bad/yxt.nc bad/yxt.nc bad/yxt.nc bad/yxt.nc"
# a (time, x, y) file (xarray's transpose keeps the names) among (time, y, x) ones, and a forecast
# from it: on this square grid of equal x and y coordinates both passed, trained and forecast transposed
ncdump traj2.nc | sed 's/^\tdouble \([hu]\)(time, y, x) ;/\tdouble \1(time, x, y) ;/' | ncgen -k nc4 -o bad/xy.nc
expect_input_error "fields stored (time, x, y) among (time, y, x)" "bad/xy.nc: variable 'h' is (time, x, y), but in traj0.nc on (time, y, x): the spatial dimensions are swapped" \
    train surrogate.files="traj0.nc traj1.nc bad/xy.nc traj3.nc"
expect_input_error "a forecast from (time, x, y) fields" "full.h5: the model was trained on fields (time, y, x), the data (bad/xy.nc) are (time, x, y)" \
    forecast surrogate.mode=forecast surrogate.model_path=full.h5 surrogate.forecast_file=bad/xy.nc
# a first file that names (y, x) without axis attributes, and one whose dimensions have other names
# but coordinates with CF axes stored the other way round: the names' axes count (not compared before)
ncdump traj0.nc | sed '/:axis = /d' | ncgen -k nc4 -o bad/noaxis.nc
ncdump traj2.nc | perl -pe 's/\by\b/p/g; s/\bx\b/q/g; s/:axis = "[XY]" ;\n//; s/^(\s*)double p\(p\) ;\n/$1double p(p) ;\n$1\tp:axis = "X" ;\n/; s/^(\s*)double q\(q\) ;\n/$1double q(q) ;\n$1\tq:axis = "Y" ;\n/' |
    ncgen -k nc4 -o bad/pq.nc
expect_input_error "dimensions named (y, x) against (p, q) with axes X, Y" "bad/pq.nc: variable 'h' is (time, p, q), but in bad/noaxis.nc on (time, y, x): the spatial dimensions are swapped" \
    train surrogate.files="bad/noaxis.nc traj1.nc bad/pq.nc traj3.nc"
# plain HDF5 from h5py (no dimension scales; str attributes are UTF-8): the units attribute failed to
# read (exit 1), and the `time` dataset beside the unnamed dimensions was not read (frames counted
# 0, 1, 2 ..., so duplicated times trained)
if python3 -c "import h5py" 2>/dev/null && "$HS_BIN" --version | grep -q '+hdf5'; then
    python3 - <<'PY'
import h5py, numpy as np
with h5py.File("traj0.nc", "r") as src:
    h, u, t = src["h"][:], src["u"][:], src["time"][:]
for name, tt in (("plain_ok", t), ("bad/plain_dup", np.where(np.arange(len(t)) == 5, t[4], t))):
    with h5py.File(name + ".h5", "w") as f:
        f["h"], f["u"], f["time"] = h, u, tt
        f["time"].attrs["units"] = "seconds since 2000-01-01 00:00:00"
PY
    "$HS_BIN" check quick.ini surrogate.files="plain_ok.h5 plain_ok.h5 plain_ok.h5 plain_ok.h5" >/dev/null 2>e.txt && ok ||
        bad "an h5py file with UTF-8 attributes: $(cat e.txt)"
    expect_input_error "h5py file whose time dataset repeats a time" "bad/plain_dup.h5: the time coordinate 'time' does not increase at step 5" \
        train surrogate.files="plain_ok.h5 plain_ok.h5 bad/plain_dup.h5 plain_ok.h5"
else
    echo "skip h5py files: no h5py in python3 or no HDF5 in this build"
fi
# our own HDF5 output reads with its named dimensions and coordinates (NetCDF opened it too, with
# phony_dim_N dimensions and none: a .nc and an .h5 of one case were "on different grids")
for f in netcdf hdf5; do
    "$HS_BIN" run "$ROOT/inputs/sw_jet.ini" --quiet cfd.n="32 16" cfd.t_end=2 output.every_time=0.1 output.path=swd_$f \
        output.format=$f >/dev/null 2>&1
done
if [ -f swd_hdf5.h5 ] && "$HS_BIN" check quick.ini surrogate.files="swd_netcdf.nc swd_hdf5.h5 swd_netcdf.nc swd_hdf5.h5" surrogate.variables="h u" \
    >/dev/null 2>e.txt; then ok; else bad "an hpcsim HDF5 output beside its NetCDF twin: $(cat e.txt)"; fi
"$HS_BIN" train "$ROOT/inputs/heat2d.ini" >/dev/null 2>e.txt
[ $? = 2 ] && grep -q "'hpcsim train' runs the surrogate" e.txt && ok || bad "train of a heat file: $(cat e.txt)"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
