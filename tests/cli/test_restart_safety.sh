#!/usr/bin/env bash
# Faults around restarts: hard kills (SIGKILL) at several steps then a restart equal bitwise to an
# uninterrupted run (NetCDF and HDF5, 1 and 2 ranks); checkpoints of other parameters or damaged
# ones refused; the signal hint reproduces the run; signals acted on at the next step; output
# paths checked before the run; non-finite states and oversized grids stopped with a clear error.
set -u
. "$(dirname "$0")/lib.sh"
# the fault hooks reach every rank
MPIRUN+=(-x HS_TEST_KILL_AT_STEP -x HS_TEST_SIGNAL_AT_STEP)
FORMATS=""
"$HS_BIN" --version | grep -q '+netcdf' && FORMATS="netcdf"
"$HS_BIN" --version | grep -q '+hdf5' && FORMATS="$FORMATS hdf5"

cat > base.ini <<EOF
[run]
solver = heat
device = $DEVICE
allow_shared_gpu = true
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
EOF

ext_of() { [ "$1" = netcdf ] && echo nc || echo h5; }
launch() { # ranks, args...
    local np=$1
    shift
    if [ "$np" = 1 ]; then "$HS_BIN" "$@"; else "${MPIRUN[@]}" -n "$np" "$HS_BIN" "$@"; fi
}

# 1. SIGKILL at several steps after the first checkpoint (just after it, between outputs, on an
#    output step, just before the next checkpoint, after several), then restart: bitwise equal.
RANKS=1
[ $HAVE_MPI = 1 ] && RANKS="1 2"
for fmt in $FORMATS; do
    e=$(ext_of "$fmt")
    for np in $RANKS; do
        launch "$np" run base.ini --quiet output.format="$fmt" output.path=ref checkpoint.path=ref.ck >/dev/null 2>&1 ||
            bad "$fmt np=$np: reference run failed"
        good=1
        for k in 21 33 35 39 61; do
            rm -f cut.* ck.h5
            HS_TEST_KILL_AT_STEP=$k launch "$np" run base.ini --quiet output.format="$fmt" output.path=cut checkpoint.path=ck.h5 >/dev/null 2>&1
            if [ -f "cut.$e" ] || [ ! -f ck.h5 ]; then good=0; bad "$fmt np=$np kill at $k: files $(ls | tr '\n' ' ')"; continue; fi
            if ! launch "$np" run base.ini --quiet output.format="$fmt" output.path=cut checkpoint.path=ck.h5 --restart ck.h5 >o 2>&1; then
                good=0; bad "$fmt np=$np kill at $k: restart failed: $(grep hpcsim o)"; continue
            fi
            for v in T time; do
                "$HS_BIN" compare "ref.$e" "cut.$e" $v >o 2>&1 || { good=0; bad "$fmt np=$np kill at $k: $v: $(cat o)"; }
            done
        done
        [ $good = 1 ] && ok "$fmt, $np rank(s): SIGKILL at steps 21 33 35 39 61, restart equals the uninterrupted run bitwise"
        rm -f ref.* cut.*
    done
done

# 2. a checkpoint of other parameters: state-defining keys refused (key and both values), the
#    end time may move
HS_TEST_SIGNAL_AT_STEP=20 "$HS_BIN" run base.ini --quiet output.path=s checkpoint.path=s.ck >/dev/null 2>&1
for change in "heat.n=24 40" "heat.scheme=crank_nicolson" "heat.dt=1e-6" "heat.sigma=0.2" "run.solver=pinn"; do
    key=${change%%=*}
    "$HS_BIN" run base.ini --quiet output.path=s2 "$change" --restart s.ck >o 2>e
    rc=$?
    if [ "$key" = run.solver ]; then want="written by solver 'heat'"; else want="$key: the checkpoint s.ck was made with $key = "; fi
    if [ $rc = 2 ] && grep -qF "$want" e && [ ! -e s2.nc ] && [ ! -e s2.nc.partial ] && [ ! -e s2.h5 ]; then
        ok "restart with $change refused: $(grep error e | cut -c1-120)"
    else bad "restart with $change: exit $rc: $(cat e)"; fi
done
if "$HS_BIN" run base.ini --quiet output.path=s3 heat.t_end=0.03 --restart s.ck >o 2>e && grep -q "heat.t_end changed from 0.02 to 0.03" e; then
    ok "restart with a later heat.t_end allowed and said in the log"
else bad "restart with a later t_end: $(cat e)"; fi
# an implicit run that stopped on its CG iteration cap is restarted with a higher cap (the cap steers
# the solve, it does not define the state); the tolerance defines it and stays refused
HS_TEST_SIGNAL_AT_STEP=4 "$HS_BIN" run base.ini --quiet heat.scheme=crank_nicolson output.path=cn checkpoint.path=cn.ck >/dev/null 2>&1
if "$HS_BIN" run base.ini --quiet heat.scheme=crank_nicolson heat.pcg_max_iter=20000 output.path=cn2 --restart cn.ck >o 2>e &&
   grep -q "heat.pcg_max_iter changed from 10000 to 20000" e; then ok "restart with a higher heat.pcg_max_iter allowed and said in the log"
else bad "restart with a higher heat.pcg_max_iter: $(cat e)"; fi
"$HS_BIN" run base.ini --quiet heat.scheme=crank_nicolson heat.pcg_rtol=1e-3 output.path=cn3 --restart cn.ck >o 2>e; rc=$?
if [ $rc = 2 ] && grep -qF "heat.pcg_rtol: the checkpoint cn.ck was made with heat.pcg_rtol = " e; then ok "restart with another heat.pcg_rtol refused"
else bad "restart with another heat.pcg_rtol: exit $rc: $(cat e)"; fi

# 2b. a restart into another run's output file (same grid, another heat.k) is refused by check and
#    run alike (exit 2, output.path, both run identities), the file untouched; into its own run's
#    file and into a new file it goes on (the file keeps the run's hpcsim_run_id)
for fmt in $FORMATS; do
    e=$(ext_of $fmt)
    "$HS_BIN" run base.ini --quiet output.format=$fmt output.path=own checkpoint.path=own.ck run.max_steps=30 >/dev/null 2>&1
    "$HS_BIN" run base.ini --quiet output.format=$fmt output.path=other heat.k=2 run.max_steps=30 >/dev/null 2>&1
    sum0=$(cksum <other.$e)
    for cmd in check run; do
        "$HS_BIN" $cmd base.ini --quiet output.format=$fmt output.path=other --restart own.ck >o 2>e; rc=$?
        if [ $rc = 2 ] && grep -q "output.path: other.$e belongs to another run (hpcsim_run_id [0-9a-f]\{16\}), not to the run of the checkpoint own.ck ([0-9a-f]\{16\})" e &&
           [ "$(cksum <other.$e)" = "$sum0" ] && [ ! -e other.$e.partial ]; then ok "$fmt: $cmd of a restart into another run's file refused, file untouched"
        else bad "$fmt: $cmd of a restart into another run's file: exit $rc: $(grep error e)"; fi
    done
    "$HS_BIN" run base.ini --quiet output.format=$fmt output.path=own --restart own.ck >o 2>e; rc1=$?
    "$HS_BIN" run base.ini --quiet output.format=$fmt output.path=new --restart own.ck >o 2>e; rc2=$?
    id_of() { python3 -c "import sys, h5py; a = h5py.File(sys.argv[1], 'r').attrs['hpcsim_run_id']; print(a.decode() if isinstance(a, bytes) else a)" "$1" 2>/dev/null; }
    ido=$(id_of own.$e); idn=$(id_of new.$e)
    if [ $rc1 = 0 ] && [ $rc2 = 0 ] && { ! python3 -c "import h5py" 2>/dev/null || { [ -n "$ido" ] && [ "$ido" = "$idn" ]; }; }; then
        ok "$fmt: a restart continues its own file and starts a new one (run id '${ido:-not read}' kept)"
    else bad "$fmt: restart into own/new file: exit $rc1/$rc2, ids '$ido' '$idn': $(grep error e)"; fi
    rm -f own.* other.* new.*
done

# 2b'. a restart whose output file was cut short (a full disk, a copy interrupted) is refused by check
#    and run alike, exit 2, the file untouched (run failed as a runtime error, exit 1)
HS_TEST_SIGNAL_AT_STEP=20 "$HS_BIN" run base.ini --quiet output.path=cutp checkpoint.path=cutp.ck >/dev/null 2>&1
if [ -f cutp.nc.partial ] || [ -f cutp.h5.partial ]; then
    f=$(ls cutp.*.partial | head -1); truncate -s 3000 "$f"; sum0=$(cksum <"$f")
    for cmd in check run; do
        "$HS_BIN" $cmd base.ini --quiet output.path=cutp checkpoint.path=cutp.ck --restart cutp.ck >o 2>e; rc=$?
        [ $rc = 2 ] && grep -q "output.path: $f cannot be continued" e && [ "$(cksum <"$f")" = "$sum0" ] && ok "$cmd: a cut-short output file to continue is refused" ||
            bad "$cmd: cut-short output: exit $rc: $(grep error e)"
    done
else bad "no partial output after the signal stop"; fi
rm -f cutp.*

# 2c. a run stopped at run.max_steps (its final record off the output cadence) and restarted from
#    its last checkpoint equals the uninterrupted run bitwise, record for record: the restart drops
#    the off-cadence record (it kept it: one record more), by steps and by simulated time
for cad in "output.every_steps=5" "output.every_time=0.0013"; do
    "$HS_BIN" run base.ini --quiet $cad output.path=whole checkpoint.every_steps=0 >/dev/null 2>&1
    "$HS_BIN" run base.ini --quiet $cad output.path=cut checkpoint.path=cut.ck checkpoint.every_steps=13 run.max_steps=26 >/dev/null 2>&1
    "$HS_BIN" run base.ini --quiet $cad output.path=cut --restart cut.ck >o 2>e; rc=$?
    ew=$(ls whole.* | grep -v xmf | head -1); ec=${ew/whole/cut}
    if [ $rc = 0 ] && "$HS_BIN" compare --all "$ew" "$ec" >cmp 2>&1 && grep -q "0 differ" cmp; then ok "stop at run.max_steps = 26 ($cad), restart: equals the whole run bitwise ($(grep '^time:' cmp | cut -d, -f1))"
    else bad "stop at max_steps then restart ($cad): exit $rc: $(grep -E 'differ|^time|error' cmp e | head -5)"; fi
    rm -f whole.* cut.*
done
# ... and from a checkpoint that falls short of a record time by less than 1e-9 of the interval
#    (100 steps of 0.1 - 5e-11 fall 5e-11 short of each record time, reached by a 101st step): the
#    restart took the record at 0.3 as written and skipped it (5 records, step 504 of 505)
cat > sliver.ini <<EOF
[run]
solver = heat
device = $DEVICE
[heat]
ndim = 1
n = 8
t_end = 0.5
dt = 0.0009999999995
scheme = backward_euler
initial = sine
mode = 1
T0 = 0
[output]
every_time = 0.1
EOF
"$HS_BIN" run sliver.ini --quiet output.path=whole >/dev/null 2>&1
"$HS_BIN" run sliver.ini --quiet output.path=cut checkpoint.path=cut.ck checkpoint.every_steps=302 run.max_steps=302 >/dev/null 2>&1
"$HS_BIN" run sliver.ini --quiet output.path=cut --restart cut.ck >o 2>e; rc=$?
ew=$(ls whole.* | grep -v xmf | head -1); ec=${ew/whole/cut}
if [ $rc = 0 ] && "$HS_BIN" compare --all "$ew" "$ec" >cmp 2>&1 && grep -q "0 differ" cmp &&
    grep -q '^time: 6 values' cmp && grep -q 'finished at step 505,' o; then
    ok "checkpoint 5e-11 short of the record at 0.3: the restart writes it (6 records, step 505) and equals the whole run bitwise"
else bad "checkpoint just short of a record time, restart: exit $rc: $(grep -E 'differ|^time|error|finished' cmp e o | head -5)"; fi
rm -f whole.* cut.* sliver.ini

# 2d. an input file whose contents changed since the checkpoint (same name): refused by check and
#    run (exit 2, the key, both hashes); the same contents restart (the checkpoint keeps each input
#    file's FNV-1a hash; the run continued a state made from the old conductivity, exit 0)
if python3 -c "import h5py, numpy" 2>/dev/null; then
    python3 -c "import h5py, numpy; h5py.File('kin.h5', 'w')['k'] = 1 + numpy.arange(24 * 40).reshape(24, 40) / 960.0"
    KF=(heat.conductivity=file heat.k_file=kin.h5 heat.k_variable=k)
    "$HS_BIN" run base.ini --quiet "${KF[@]}" output.path=kf checkpoint.path=kf.ck run.max_steps=20 >/dev/null 2>&1
    "$HS_BIN" check base.ini --quiet "${KF[@]}" output.path=kf2 --restart kf.ck >o 2>e && ok "same conductivity file: the restart checks" || bad "same k file: $(grep error e)"
    python3 -c "import h5py; f = h5py.File('kin.h5', 'r+'); f['k'][3, 5] = 2.5; f.close()"
    for cmd in check run; do
        "$HS_BIN" $cmd base.ini --quiet "${KF[@]}" output.path=kf3 --restart kf.ck >o 2>e; rc=$?
        if [ $rc = 2 ] && grep -q "heat.k_file: the file kin.h5 is not the one the checkpoint kf.ck was made from (its contents changed: FNV-1a [0-9a-f]* then, [0-9a-f]* now)" e &&
            ! ls kf3.* >/dev/null 2>&1; then ok "$cmd: a conductivity file changed since the checkpoint is refused"
        else bad "$cmd: changed k file: exit $rc: $(grep error e)"; fi
    done
    rm -f kin.h5 kf.* kf2.* kf3.*
fi

# 3. a damaged HDF5 checkpoint (a value changed, the step changed, truncated) is refused with exit 2
if python3 -c "import h5py, numpy" 2>/dev/null && "$HS_BIN" --version | grep -q '+hdf5'; then
    python3 - <<'EOF'
import h5py, shutil
shutil.copy("s.ck", "flip.ck")
with h5py.File("flip.ck", "r+") as f:
    a = f["T"][...]; a[7] = a[7] * (1 + 2**-52) if a[7] != 0 else 1e-300; f["T"][...] = a
shutil.copy("s.ck", "step.ck")
with h5py.File("step.ck", "r+") as f:
    f.attrs["step"] = f.attrs["step"] + 1
data = open("s.ck", "rb").read()
open("cut.ck", "wb").write(data[: len(data) * 2 // 3])
EOF
    for f in flip step cut; do
        "$HS_BIN" run base.ini --quiet output.path=d_$f --restart $f.ck >o 2>e
        rc=$?
        if [ $rc = 2 ] && grep -q "$f.ck: .*checkpoint is damaged" e && ! ls d_$f* >/dev/null 2>&1; then ok "damaged checkpoint ($f) refused: $(grep error e | cut -c1-100)"
        else bad "damaged checkpoint $f: exit $rc: $(cat e)"; fi
    done
else
    echo "skip damaged-HDF5-checkpoint cases: h5py or HDF5 missing"
fi
# 3b. one byte flipped (XOR 0x10) every 97 bytes of an HDF5 checkpoint, metadata included: check and
# run each exit 0 (a byte nothing reads) or 2 (damage, the file named), never 1 with HDF5's raw
# message ("H5Aexists failed ... incorrect metadata checksum" ended 52 of 152 such files with exit 1);
# what check refuses, run refuses alike (damaged array data is run's alone: check reads no arrays)
if "$HS_BIN" --version | grep -q '+hdf5' && [ "$(head -c 8 s.ck | od -An -c | tr -d ' ')" = '211HDF\r\n032\n' ]; then
    size=$(stat -c %s s.ck) worst="" n=0
    for ((off = 0; off < size; off += 97)); do
        cp s.ck byte.ck
        b=$(od -An -tu1 -j $off -N1 s.ck | tr -d ' ')
        printf "$(printf '\\%03o' $((b ^ 16)))" | dd of=byte.ck bs=1 seek=$off conv=notrunc 2>/dev/null
        "$HS_BIN" check base.ini --restart byte.ck >o 2>ec; rcc=$?
        "$HS_BIN" run base.ini --quiet output.path=d_byte --restart byte.ck >o 2>e; rc=$?
        rm -f d_byte*
        n=$((n + 1))
        if [ $rcc = 1 ] || [ $rc = 1 ] || { [ $rcc = 2 ] && [ $rc != 2 ]; } ||
            { [ $rcc = 2 ] && ! grep -q "byte.ck: .*checkpoint is damaged\|byte.ck: " ec; }; then
            worst="offset $off: check $rcc, run $rc: $(grep -m1 error ec e | cut -c1-160)"; break
        fi
    done
    [ -z "$worst" ] && ok "$n HDF5 checkpoints with a byte flipped: check and run exit 0 or 2, never 1" || bad "flipped byte: $worst"
fi

# 4. the hint printed on a signal stop reproduces the run (file, every override, --restart)
"$HS_BIN" run base.ini --quiet output.path=h_ref heat.sigma=0.07 "heat.center=0.3 0.6" checkpoint.path=h_ref.ck >/dev/null 2>&1
HS_TEST_SIGNAL_AT_STEP=30 "$HS_BIN" run base.ini --quiet output.path=h heat.sigma=0.07 "heat.center=0.3 0.6" checkpoint.path=h.ck >o 2>e
hint=$(sed -n 's/.*continue with: //p' e)
if [ -n "$hint" ] && eval "$hint" >o 2>e2; then
    ext=nc; [ -f h.h5 ] && ext=h5
    "$HS_BIN" compare h_ref.$ext h.$ext T >o 2>&1 && ok "following the restart hint reproduces the run bitwise" || bad "hint run differs: $(cat o)"
else bad "restart hint '$hint': $(cat e e2 2>/dev/null)"; fi

# 5. a signal is acted on at the next step boundary, not at the next output or 100th step
HS_TEST_SIGNAL_AT_STEP=7 "$HS_BIN" run base.ini --quiet output.every_steps=0 checkpoint.every_steps=0 heat.t_end=1 \
    output.path=sig checkpoint.path=sig.ck >o 2>e
rc=$?
if [ $rc = 3 ] && grep -q "stopped by signal 15 at step 7 " e; then ok "signal at step 7 stops at step 7"
else bad "signal at step 7: exit $rc: $(cat e)"; fi
if [ $HAVE_MPI = 1 ]; then
    HS_TEST_SIGNAL_AT_STEP=7 "${MPIRUN[@]}" -n 2 "$HS_BIN" run base.ini --quiet output.every_steps=0 checkpoint.every_steps=0 \
        heat.t_end=1 output.path=sig2 checkpoint.path=sig2.ck >o 2>e
    rc=$?
    if [ $rc = 3 ] && grep -qE "stopped by signal 15 at step (7|8) " e; then ok "2 ranks: a signal at step 7 stops by step 8"
    else bad "2 ranks, signal at step 7: exit $rc: $(cat e)"; fi
fi

# 6. output paths: refused before the run (exit 2, the key named, nothing written)
mkdir -p adir.nc adir.h5 sub
expect_input_error() { # name, message part, args...
    local name=$1 want=$2
    shift 2
    rm -rf sub/*
    (cd sub && "$HS_BIN" "$@" >../o 2>../e)
    local rc=$?
    if [ $rc = 2 ] && grep -qF -- "$want" e && [ -z "$(ls -A sub)" ]; then ok "$name"
    else bad "$name: exit $rc, files '$(ls -A sub)': $(cat e)"; fi
}
for cmd in run check; do
    expect_input_error "$cmd: output in a missing directory" "output.path: cannot write output file /nonexistent/x" \
        $cmd ../base.ini output.path=/nonexistent/x
    # a directory whose permission bits allow root but where no file can be created (check passed
    # as root: access() says yes for /proc, and the run failed at the file's creation, exit 1)
    expect_input_error "$cmd: output in a directory where nothing can be created" "output.path: cannot write output file /proc/x" \
        $cmd ../base.ini output.path=/proc/x
    expect_input_error "$cmd: a directory where the output goes" "output.path: output file $WORK/adir" \
        $cmd ../base.ini output.path="$WORK/adir"
    expect_input_error "$cmd: checkpoint path equal to the output file" "checkpoint.path: out.$EXT is also the output file" \
        $cmd ../base.ini output.path=out checkpoint.path=out.$EXT
    # beside NetCDF output rk.nc a checkpoint rk.h5 is no clash (it was refused as "also the output file")
    if "$HS_BIN" --version | grep -q '+netcdf'; then
        (cd sub && "$HS_BIN" $cmd ../base.ini output.path=rk output.format=netcdf checkpoint.path=rk.h5 >../o 2>&1) && rm -f sub/rk.* &&
            ok "$cmd: checkpoint rk.h5 beside NetCDF output rk.nc" || bad "$cmd: rk.h5 beside rk.nc: $(cat o)"
        # output.overwrite = false minds the files of the format written (ex.nc refused HDF5 output ex.h5)
        if "$HS_BIN" --version | grep -q '+hdf5'; then
            touch sub/ex.nc
            (cd sub && "$HS_BIN" $cmd ../base.ini output.path=ex output.format=hdf5 output.overwrite=false >../o 2>&1) && rm -f sub/ex.* &&
                ok "$cmd: ex.nc does not stop HDF5 output ex.h5 under output.overwrite = false" || bad "$cmd: ex.nc, HDF5 output: $(cat o)"
            rm -f sub/ex.*
        fi
    fi
    expect_input_error "$cmd: checkpoint in a file's place as directory" "checkpoint.path: cannot write checkpoint" \
        $cmd ../base.ini checkpoint.path="$WORK/base.ini/ck.h5"
    # a named pipe where the checkpoint goes: the run renamed its file over it (as root, over
    # /dev/zero and /dev/null alike)
    [ -p "$WORK/fifo" ] || mkfifo "$WORK/fifo"
    expect_input_error "$cmd: a checkpoint path that is a named pipe" "checkpoint.path: checkpoint $WORK/fifo exists and is not a regular file" \
        $cmd ../base.ini checkpoint.path="$WORK/fifo"
    [ -p "$WORK/fifo" ] && ok "$cmd: the named pipe is still one" || bad "$cmd: the named pipe was replaced"
    # a path longer than the run's buffer (check passed it, run refused it)
    expect_input_error "$cmd: an output path over 8188 characters" "output.path: is longer than 8188 characters" \
        $cmd ../base.ini output.path="$(printf 'x%.0s' $(seq 8189))"
    # file names longer than the file system holds with the run's suffixes (check passed them, the
    # run's first write failed: exit 1); the suffixes are 11 or 12 characters ('.nc' or '.xmf', then '.partial')
    expect_input_error "$cmd: an output file name longer than the file system holds" \
        "output.path: the output file's file name, with the 1" \
        $cmd ../base.ini output.path="$(printf 'x%.0s' $(seq 250))"
    expect_input_error "$cmd: a checkpoint name longer than the file system holds" \
        "checkpoint.path: the checkpoint's file name, with the 8 characters the run adds to it" \
        $cmd ../base.ini checkpoint.path="$(printf 'c%.0s' $(seq 252))"
done
touch sub/keep.$EXT
(cd sub && "$HS_BIN" run ../base.ini --quiet output.path=keep output.overwrite=false >../o 2>../e)
rc=$?
if [ $rc = 2 ] && grep -q "output.overwrite: keep.$EXT exists" e && [ ! -s sub/keep.$EXT ]; then ok "output.overwrite = false refuses an existing file"
else bad "overwrite=false: exit $rc $(cat e)"; fi

# 7. a state that stops being finite: exit 1, the step, variable and time named, the file kept
"$HS_BIN" run base.ini --quiet heat.initial=constant heat.T0=300 heat.source=constant heat.Q=1e10 heat.k=1e-300 \
    heat.t_end=1e300 output.every_steps=1 checkpoint.every_steps=0 output.path=blow >o 2>e
rc=$?
ext=nc; [ -f blow.h5 ] && ext=h5
if [ $rc = 1 ] && grep -qE "T is -?(inf|nan)" e && grep -q "no longer finite at step [0-9]*, t = " e && [ -f blow.$ext ]; then
    ok "non-finite state: exit 1 naming T, step and time; blow.$ext kept"
else bad "non-finite state: exit $rc, files $(ls blow* 2>/dev/null): $(cat e)"; fi

# 8. a grid that cannot fit: exit 2 naming the key and the bytes, before allocating
"$HS_BIN" run base.ini --quiet heat.ndim=3 "heat.n=1000000 1000000 1000000" heat.center=0.5 heat.bc_zlo=periodic heat.bc_zhi=periodic output.path=huge >o 2>e
rc=$?
if [ $rc = 2 ] && grep -qE "heat.n: the grid needs .* bytes\) of (host|GPU) memory .* bytes\) are" e && ! ls huge* >/dev/null 2>&1; then
    ok "oversized grid refused: $(cut -c1-110 e)"
else bad "oversized grid: exit $rc: $(cat e)"; fi

# 9. physical parameters whose combination leaves the doubles: exit 2 with file:line and key
for combo in "heat.k=1e300 heat.rho=1e-300:heat.k:" "heat.rho=1e300 heat.cp=1e300:heat.cp:" \
    "heat.initial=gaussian heat.sigma=1e-300:heat.sigma:" "heat.length=1e-300:heat.length:"; do
    args=${combo%%:*}
    rest=${combo#*:}
    key=${rest%%:*}
    # shellcheck disable=SC2086
    "$HS_BIN" run base.ini --quiet $args output.path=combo >o 2>e
    rc=$?
    if [ $rc = 2 ] && grep -q "$key" e && ! ls combo* >/dev/null 2>&1; then ok "$args refused ($key)"; else bad "$args: exit $rc: $(cat e)"; fi
done

# 10. output.time_units in hours: the records hold model time in hours (they held seconds under an
# hours label); a run stopped and restarted finds its records in hours and matches the whole run
for fmt in $FORMATS; do
    ext=$([ $fmt = netcdf ] && echo nc || echo h5)
    TU=(output.format=$fmt "output.time_units=hours since 2000-01-01 00:00:00")
    "$HS_BIN" run base.ini --quiet "${TU[@]}" output.path=hwhole >o 2>&1 &&
        "$HS_BIN" run base.ini --quiet "${TU[@]}" output.path=hpart checkpoint.path=hck run.max_steps=23 checkpoint.every_steps=10 >o 2>&1
    ckf=$(ls hck* 2>/dev/null | head -1)
    "$HS_BIN" run base.ini --quiet "${TU[@]}" output.path=hpart checkpoint.path=hck --restart "$ckf" >>o 2>&1
    "$HS_BIN" run base.ini --quiet output.format=$fmt output.path=swhole >>o 2>&1
    if "$HS_BIN" compare hwhole.$ext hpart.$ext T 0 >c1 2>&1 && "$HS_BIN" compare hwhole.$ext hpart.$ext time 0 >c2 2>&1 &&
        "$HS_BIN" compare hwhole.$ext swhole.$ext T 0 >c3 2>&1 && python3 - hwhole.$ext swhole.$ext <<'PY' 2>>o
import sys
try:
    import netCDF4
    t = [netCDF4.Dataset(f)["time"][:] for f in sys.argv[1:]]
except ImportError:
    try:
        import h5py
    except ImportError:  # the values unchecked here; the restart still compared
        print("time values not read: python3 has neither netCDF4 nor h5py", file=sys.stderr)
        sys.exit(0)
    t = [h5py.File(f, "r")["time"][:] for f in sys.argv[1:]]
assert len(t[0]) == len(t[1]) > 2 and all(abs(a * 3600 - b) <= 1e-12 * abs(b) for a, b in zip(t[0], t[1])), (t[0][:3], t[1][:3])
PY
    then ok "$fmt: time in hours (1/3600 of the seconds run's), a restart equal to the whole run"
    else bad "$fmt time in hours: $(tail -3 o; cat c1 c2 c3 2>/dev/null | tail -2)"; fi
    rm -f hwhole.* hpart.* hck* swhole.*
done

# 11. a full disk (a file-size limit, its signal ignored: writes fail with EFBIG) while the output
# grows: exit 1 naming the failing call, on 1 rank and on 2 (collective files); HDF5 and NetCDF-4
# crashed in their own shutdown at MPI_Finalize (exit 139), and 2 ranks hung in two different
# collectives until killed.  Every call a message names is a library call (H5..., nc_...): the
# close after the failed write read "NetCDF call rc failed", a variable's name
for fmt in $FORMATS; do
    for np in 1 2; do
        rm -f full.*
        launch=(); [ $np = 2 ] && launch=("${MPIRUN[@]}" --mca btl self,tcp -np 2)
        timeout -s KILL 120 "${launch[@]}" bash -c "trap '' XFSZ; ulimit -f 150; exec \"$HS_BIN\" run base.ini --quiet 'heat.n=64 64' output.format=$fmt output.path=full" >o 2>&1
        rc=$?
        if [ $rc = 1 ] && grep -qE "^hpcsim: (rank 0: )?error: (HDF5|NetCDF) call .* failed on full\.(nc|h5)\.partial" o &&
            ! grep -E "(HDF5|NetCDF) call " o | grep -vqE "(HDF5|NetCDF) call (H5|nc_)[A-Za-z0-9_]+[ (]"; then
            ok "$fmt, $np rank(s), disk full: exit 1 naming the call"
        else bad "$fmt, $np rank(s), disk full: exit $rc: $(grep -m2 -E 'error|fault' o)"; fi
    done
done
rm -f full.*

# 12. a file system that is really full (a 200 kB tmpfs; root only): the libraries' own words are
# "NetCDF: HDF error" and "file write failed", so the message adds the file system's free space;
# a singleton ends without Open MPI's MPI_ABORT banner (no other rank to stop)
full=$(mktemp -d)
if mount -t tmpfs -o size=200k tmpfs "$full" 2>/dev/null; then
    for fmt in $FORMATS; do
        rm -f "$full"/*
        timeout -s KILL 120 "$HS_BIN" run base.ini --quiet 'heat.n=128 128' output.format=$fmt output.path="$full/f" >o 2>&1
        rc=$?
        if [ $rc = 1 ] && grep -qE "^hpcsim: error: (HDF5|NetCDF) call .* failed on $full/f\.(nc|h5)\.partial: .* \(the file system holding $full/f\.(nc|h5)\.partial has only [0-9]+ (bytes|kB) free: is it full\?\)" o &&
            ! grep -q MPI_ABORT o; then
            ok "$fmt on a full file system: exit 1, the message names the free space, no MPI_ABORT banner (a singleton)"
        else bad "$fmt on a full file system: exit $rc: $(grep -m2 -E 'error|fault' o)"; fi
    done
    # 2 ranks, a collective file, the disk full while the file is created (40 kB): the failing rank
    # ends the job (the other rank waited inside the library's collective create, exit 137)
    for fmt in $FORMATS; do
        [ "${HAVE_MPI:-0}" = 1 ] || { echo "skip  2 ranks on a full disk (no MPI in this build)"; break; }
        rm -f "$full"/*
        umount "$full" && mount -t tmpfs -o size=40k tmpfs "$full"
        timeout -s KILL 60 "${MPIRUN[@]}" -n 2 "$HS_BIN" run base.ini --quiet 'heat.n=128 128' output.format=$fmt output.path="$full/f" >o 2>&1
        rc=$?
        if [ $rc = 1 ] && grep -qE "^hpcsim: rank [01]: error: (HDF5|NetCDF) call .* failed on $full/f\.(nc|h5)\.partial" o &&
            [ ! -f "$full/f.nc" ] && [ ! -f "$full/f.h5" ]; then
            ok "$fmt, 2 ranks, disk full while creating the file: exit 1 naming the call, no rank waits"
        else bad "$fmt, 2 ranks, disk full while creating the file: exit $rc: $(grep -m2 -E 'error|fault' o)"; fi
    done
    umount "$full"
else
    echo "skip  a full tmpfs (mounting one needs root)"
fi
rmdir "$full" 2>/dev/null

# 13. a checkpoint that cannot be renamed into place (a folder created at its path after the run's
# checks): exit 1 naming both names and the reason, the temporary file removed (it was left, unsaid)
rm -rf od o.*; mkdir od
"$HS_BIN" run base.ini --quiet 'heat.n=256 256' heat.t_end=1000 run.max_steps=6000 checkpoint.every_steps=3000 \
    checkpoint.path=od/ck output.path=o output.every_steps=1000 >o13 2>&1 &
pid=$!
for i in $(seq 1000); do [ -e o.$EXT.partial ] && break; sleep 0.01; done
mkdir od/ck && touch od/ck/x
wait $pid
rc=$?
if [ $rc = 1 ] && grep -q "renaming od/ck.tmp to od/ck failed: Is a directory (od/ck.tmp removed, od/ck untouched)" o13 &&
    [ ! -e od/ck.tmp ] && [ -f od/ck/x ]; then
    ok "a checkpoint that cannot be renamed: exit 1, the reason named, its temporary file removed"
else bad "checkpoint rename failing: exit $rc, $(grep error o13), $(ls od)"; fi
rm -rf od o.* o13

# 14. the output folder turned read-only mid-run (a read-only bind mount over it; root only): the
# next checkpoint's create fails, exit 1, and the message says why (HDF5's H5Fcreate gave no reason)
mkdir od
"$HS_BIN" run base.ini --quiet 'heat.n=256 256' heat.t_end=1000 run.max_steps=6000 checkpoint.every_steps=3000 \
    checkpoint.path=od/ck output.path=od/o output.every_steps=1000 >o14 2>&1 &
pid=$!
for i in $(seq 1000); do [ -e od/o.$EXT.partial ] && break; sleep 0.01; done
if mount --bind od od 2>/dev/null; then
    mount -o remount,bind,ro od
    wait $pid
    rc=$?
    umount od
    if [ $rc = 1 ] && grep -qE "error: .*od/ck.* (is mounted read-only|Read-only file system)" o14 && [ -f od/o.$EXT.partial ]; then
        ok "the output folder turned read-only: exit 1, the message says so, the records kept as .partial"
    else bad "read-only folder mid-run: exit $rc, $(grep error o14)"; fi
else
    wait $pid
    echo "skip  a folder turned read-only (bind mounts need root)"
fi
rm -rf od o14

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
