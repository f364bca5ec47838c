#!/usr/bin/env bash
# The binary end to end on malformed parameter files: exact "file:line: key: message", exit 2, nothing written.
set -u
. "$(dirname "$0")/lib.sh"   # captured stdout/stderr live in $CAP, outside the run directory $WORK

# expect NAME EXPECTED_STATUS EXPECTED_STDERR_LINE COMMAND...
expect() {
    local name=$1 want_rc=$2 want_msg=$3
    shift 3
    local before after
    before=$(ls -A | sort)
    "$@" >"$CAP/out.txt" 2>"$CAP/err.txt"
    local rc=$?
    after=$(ls -A | sort)
    local msg
    # our own lines only (mpirun adds its own report of the exit status)
    msg=$(grep '^hpcsim' "$CAP/err.txt")
    if [ "$rc" != "$want_rc" ]; then
        echo "FAIL $name: exit $rc, expected $want_rc; stderr: $msg"; fail=$((fail + 1)); return
    fi
    if [ -n "$want_msg" ] && [ "$msg" != "$want_msg" ]; then
        printf 'FAIL %s:\n  got:      %s\n  expected: %s\n' "$name" "$msg" "$want_msg"; fail=$((fail + 1)); return
    fi
    if [ "$before" != "$after" ]; then
        echo "FAIL $name: files appeared: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"; fail=$((fail + 1)); return
    fi
    echo "ok   $name"
    pass=$((pass + 1))
}
run() { "$@"; }

good=$'# a valid file\n[run]\nsolver = selftest\ndevice = cpu\n\n[selftest]\nn = 1000\n'
printf '%s' "$good" > good.ini
run expect "valid file checks" 0 "" "$HS_BIN" check good.ini
grep -q "n = 1000 .*# good.ini:7" "$CAP/out.txt" && echo "ok   check shows the source" && pass=$((pass+1)) || { echo "FAIL check source: $(cat "$CAP/out.txt")"; fail=$((fail+1)); }
grep -q "seed = 12345 .*# default" "$CAP/out.txt" && echo "ok   check shows defaults" && pass=$((pass+1)) || { echo "FAIL check default: $(cat "$CAP/out.txt")"; fail=$((fail+1)); }

printf '[run]\nsolver = selftest\ndevise = cpu\n' > typo.ini
run expect "misspelt key" 2 "hpcsim: error: typo.ini:3: run.devise: unknown key (did you mean run.device?)" "$HS_BIN" check typo.ini

printf '[run]\nsolver = selftest\n[selftest]\nfrobnicate = 3\n' > unknown.ini
run expect "unknown key" 2 "hpcsim: error: unknown.ini:4: selftest.frobnicate: unknown key" "$HS_BIN" check unknown.ini

printf '[run]\nsolver = selftest\n[selftest]\nn = many\n' > type.ini
run expect "wrong type" 2 "hpcsim: error: type.ini:4: selftest.n: expected an integer, got 'many'" "$HS_BIN" check type.ini

printf '[run]\nsolver = selftest\ndeterministic = maybe\n' > bool.ini
run expect "wrong boolean" 2 "hpcsim: error: bool.ini:3: run.deterministic: expected true or false, got 'maybe'" "$HS_BIN" check bool.ini

printf '[run]\nsolver = selftest\n[selftest]\nn = 0\n' > range.ini
run expect "out of range" 2 "hpcsim: error: range.ini:4: selftest.n: value 0 is out of range [1, 1000000000]" "$HS_BIN" check range.ini

printf '[run]\nsolver = selftest\ndevice = tpu\n' > enum.ini
run expect "bad choice" 2 "hpcsim: error: enum.ini:3: run.device: 'tpu' is not one of auto|cpu|cuda" "$HS_BIN" check enum.ini

printf '[run]\nsolver = selftest\n# comment\nsolver = selftest\n' > dup.ini
run expect "duplicate key" 2 "hpcsim: error: dup.ini:4: run.solver: duplicate key (first given at line 2)" "$HS_BIN" check dup.ini

printf '[run]\nsolver = selftest\n\n[slftest]\nn = 5\n' > section.ini
run expect "unknown section" 2 "hpcsim: error: section.ini:4: [slftest]: unknown section (did you mean [selftest]?)" "$HS_BIN" check section.ini

printf '[run]\nsolver = selftest\n[nonsense_section]\n' > section2.ini
run expect "unknown empty section" 2 "hpcsim: error: section2.ini:3: [nonsense_section]: unknown section" "$HS_BIN" check section2.ini

: > empty.ini
run expect "empty file" 2 "hpcsim: error: empty.ini:1: empty parameter file: expected at least '[run]' and 'solver = NAME'" "$HS_BIN" check empty.ini

printf '# only a comment\n\n' > comments.ini
run expect "comments only" 2 "hpcsim: error: comments.ini:2: empty parameter file: expected at least '[run]' and 'solver = NAME'" "$HS_BIN" check comments.ini

printf '[run]\nsolver = selftest\n\x00\x01\x02\xff\xfe binary\n' > garbage.ini
run expect "binary garbage" 2 "hpcsim: error: garbage.ini:3: binary data (byte 0x00): not a text parameter file" "$HS_BIN" check garbage.ini

head -c 4096 "$HS_BIN" > elf.ini
run expect "an executable as parameters" 2 "hpcsim: error: elf.ini:1: binary data (byte 0x7f): not a text parameter file" "$HS_BIN" check elf.ini

# an endless binary stream: getline read all of /dev/zero (forever, its buffer growing) before the
# first byte was judged; the first NUL stops the reader now, and pipes stay readable
run expect "an endless binary stream" 2 "hpcsim: error: /dev/zero:1: binary data (byte 0x00): not a text parameter file" timeout 30 "$HS_BIN" check /dev/zero
run expect "parameters from a pipe" 0 "" "$HS_BIN" check <(printf '%s' "$good")

printf '[run]\nsolver = selftest\nthis line has no equals sign\n' > syntax.ini
run expect "syntax error" 2 "hpcsim: error: syntax.ini:3: syntax error: expected '[section]', 'key = value' or a # comment" "$HS_BIN" check syntax.ini

printf '[run]\ndevice = cpu\n' > missing_key.ini
run expect "missing required key" 2 "hpcsim: error: missing_key.ini: run.solver: required key is missing (which solver runs (see hpcsim --help))" "$HS_BIN" check missing_key.ini

printf '[run]\nsolver = heatwave\n' > solver.ini
run expect "unknown solver" 2 "hpcsim: error: solver.ini:2: run.solver: unknown solver 'heatwave' (known: selftest, heat, quantum, pinn, cfd, surrogate, seismic, fem)" "$HS_BIN" check solver.ini

printf 'solver = selftest\n' > nosection.ini
run expect "key outside section" 2 "hpcsim: error: nosection.ini:1: solver: key outside any [section]" "$HS_BIN" check nosection.ini

run expect "missing file" 2 "hpcsim: error: nonexistent.ini: cannot open parameter file: No such file or directory" "$HS_BIN" check nonexistent.ini

mkdir adir
run expect "directory as file" 2 "hpcsim: error: adir: cannot read parameter file: is a directory" "$HS_BIN" check adir

printf '%s' "$good" > secret.ini
chmod 000 secret.ini
if [ "$(id -u)" = 0 ]; then
    # root reads anything: drop to an unprivileged user to see the real permission error
    if command -v setpriv >/dev/null; then
        chmod 755 "$WORK"
        run expect "unreadable file" 2 "hpcsim: error: secret.ini: cannot open parameter file: Permission denied" \
            setpriv --reuid=65534 --regid=65534 --clear-groups "$HS_BIN" check secret.ini
    else
        echo "FAIL unreadable file: running as root without setpriv"; fail=$((fail + 1))
    fi
else
    run expect "unreadable file" 2 "hpcsim: error: secret.ini: cannot open parameter file: Permission denied" "$HS_BIN" check secret.ini
fi
rm -f secret.ini

run expect "override of unknown key" 2 "hpcsim: error: command line (override 1): run.sovler: unknown key (did you mean run.solver?)" \
    "$HS_BIN" check good.ini run.sovler=selftest
run expect "override of unknown section" 2 "hpcsim: error: command line (override 2): weather.dt: unknown section 'weather'" \
    "$HS_BIN" check good.ini selftest.n=5 weather.dt=1
run expect "override out of range" 2 "hpcsim: error: command line (override 1): selftest.n: value -3 is out of range [1, 1000000000]" \
    "$HS_BIN" check good.ini selftest.n=-3
run expect "override numbered among the typed ones (-q stands for one)" 2 "hpcsim: error: command line (override 1): selftest.n: value -3 is out of range [1, 1000000000]" \
    "$HS_BIN" check -q good.ini selftest.n=-3
run expect "an option's override named by the option" 2 "hpcsim: error: command line (--restart): run.restart: solver selftest cannot restart from checkpoints" \
    "$HS_BIN" check good.ini --restart nothing.h5 -q
run expect "malformed override" 2 "hpcsim: error: command line (override 1): 'solver': expected section.key=value" \
    "$HS_BIN" check good.ini solver
run expect "override applies" 0 "" "$HS_BIN" check good.ini selftest.n=77
run expect "unknown command" 2 "hpcsim: error: unknown command 'frobnicate' (see 'hpcsim --help')" "$HS_BIN" frobnicate
run expect "run without file" 2 "hpcsim: error: 'run' needs a parameter file (see 'hpcsim run --help')" "$HS_BIN" run
run expect "run bad file creates nothing" 2 "hpcsim: error: typo.ini:3: run.devise: unknown key (did you mean run.device?)" "$HS_BIN" run typo.ini

run expect "--version" 0 "" "$HS_BIN" --version
run expect "--help" 0 "" "$HS_BIN" --help
run expect "info" 0 "" "$HS_BIN" info
run expect "selftest runs" 0 "" "$HS_BIN" run good.ini
if ! "$HS_BIN" info | grep -q "GPU 0:"; then
    # a CUDA build on a machine without a GPU: a runtime failure, exit 1, the message says why; a
    # build without CUDA: the key's input error (test_cli.sh)
    "$HS_BIN" run good.ini run.device=cuda >"$CAP/out.txt" 2>"$CAP/err.txt"
    rc=$?
    if "$HS_BIN" --version | grep -q '+cuda'; then want_rc=1 want="device = cuda requested but"
    else want_rc=2 want="run.device: cuda: this build has no CUDA backend"; fi
    if [ $rc = $want_rc ] && grep -q "$want" "$CAP/err.txt"; then
        echo "ok   cuda requested without a GPU: exit $rc ($want)"; pass=$((pass + 1))
    else
        echo "FAIL cuda without GPU: exit $rc: $(cat "$CAP/err.txt")"; fail=$((fail + 1))
    fi
fi

# Non-finite and overflowing numbers are input errors at file:line with the key.
printf '[run]\nsolver = selftest\n[heat]\ncfl = nan\n' > nan.ini
run expect "nan refused" 2 "hpcsim: error: nan.ini:4: heat.cfl: value nan is not a finite number" "$HS_BIN" check nan.ini
run expect "inf refused (override)" 2 "hpcsim: error: command line (override 1): heat.t_end: value inf is not a finite number" \
    "$HS_BIN" check good.ini heat.t_end=inf
printf '[run]\nsolver = selftest\n[heat]\nt_end = 1e400\n' > overflow.ini
run expect "real overflow refused" 2 "hpcsim: error: overflow.ini:4: heat.t_end: value 1e400 overflows a double (magnitude above 1.8e308)" \
    "$HS_BIN" check overflow.ini
printf '[run]\nsolver = selftest\n[selftest]\nn = 99999999999999999999\n' > intover.ini
run expect "integer overflow refused" 2 "hpcsim: error: intover.ini:4: selftest.n: value 99999999999999999999 is outside the 64-bit integer range" \
    "$HS_BIN" check intover.ini
printf '[run]\nsolver = selftest\n[heat]\nlength = 1 -nan\n' > listnan.ini
run expect "nan in a list refused" 2 "hpcsim: error: listnan.ini:4: heat.length: list value -nan is not a finite number" \
    "$HS_BIN" check listnan.ini
# a list's empty element (a comma with nothing before or after it) is a typo, not a shorter list
# ("4," was read as 4, "1,,2" as 1 2); blanks around a single comma are fine
printf '[run]\nsolver = selftest\n[heat]\nlength = 1,,2\n' > listempty.ini
run expect "empty list element refused" 2 "hpcsim: error: listempty.ini:4: heat.length: '1,,2' has an empty element (a comma with no number before or after it)" \
    "$HS_BIN" check listempty.ini
run expect "trailing comma refused (override)" 2 "hpcsim: error: command line (override 1): heat.n: '40,' has an empty element (a comma with no number before or after it)" \
    "$HS_BIN" check good.ini heat.n=40,
printf '[run]\nsolver = heat\n[heat]\nlength = 1 , 2\n' > listblank.ini
run expect "a comma between blanks accepted" 0 "" "$HS_BIN" check listblank.ini
# another solver's section: the run would ignore it (it ran without a word); a leftover of the file
# under a solver switched on the command line passes
printf '[run]\nsolver = heat\n[heat]\nn = 8 8\n[quantum]\nshots = 5\n' > foreign.ini
run expect "another solver's section refused" 2 "hpcsim: error: foreign.ini:6: quantum.shots: is not used with run.solver = heat" \
    "$HS_BIN" check foreign.ini
printf '[run]\nsolver = heat\n[heat]\nn = 8 8\n[lbm]\ntau = 0.6\n' > foreign2.ini
run expect "a CFD model's section in a heat run refused" 2 "hpcsim: error: foreign2.ini:6: lbm.tau: is not used with run.solver = heat" \
    "$HS_BIN" check foreign2.ini
run expect "the file's section left under a solver switched on the command line passes" 0 "" \
    "$HS_BIN" check foreign.ini run.solver=selftest

# Syntax the reader must refuse at its line, not skip.
printf '[run]\nsolver = selftest\n[selftest\nn = 5\n' > unterminated.ini
run expect "unterminated section" 2 "hpcsim: error: unterminated.ini:3: syntax error: section header without its closing ']'" \
    "$HS_BIN" check unterminated.ini
printf '[run] junk\nsolver = selftest\n' > headerjunk.ini
run expect "text after a section header" 2 "hpcsim: error: headerjunk.ini:1: syntax error: text after the section header's closing ']'" \
    "$HS_BIN" check headerjunk.ini
printf '[run]\nsolver = selftest\n = cpu\n' > nokey.ini
run expect "value without a key" 2 "hpcsim: error: nokey.ini:3: syntax error: '= value' without a key" "$HS_BIN" check nokey.ini
printf '[run]\nsolver: selftest\n' > colon.ini
run expect "line without '='" 2 "hpcsim: error: colon.ini:2: syntax error: expected '[section]', 'key = value' or a # comment" \
    "$HS_BIN" check colon.ini

# output.time_units whose reference date is not in CF's standard calendar (the calendar the files
# declare): "days since 2001-02-29" and "days since 2000-02-30" were written into every file, which
# cftime refused as "invalid day number" and xarray as "unable to decode time units".  check and run alike: exit 2 at
# the key's line, nothing written.
tu_ini() { printf '[run]\nsolver = heat\ndevice = cpu\n[heat]\nndim = 2\nn = 8 8\nt_end = 0.001\n[output]\npath = tu\ntime_units = %s\n' "$1" > tu.ini; }
greg="(CF's standard calendar: Gregorian leap years from 1582-10-15, Julian ones before)"
for cmd in check run; do
    tu_ini "days since 2001-02-29"
    run expect "time_units 2001-02-29 ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'days since 2001-02-29' is not a valid reference time: day 29 is not 1..28 in February 2001 $greg" \
        "$HS_BIN" $cmd tu.ini
    tu_ini "days since 2000-02-30 00:00:00"
    run expect "time_units 2000-02-30 ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'days since 2000-02-30 00:00:00' is not a valid reference time: day 30 is not 1..29 in February 2000 $greg" \
        "$HS_BIN" $cmd tu.ini
    tu_ini "days since 1900-02-29"
    run expect "time_units 1900-02-29, a century ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'days since 1900-02-29' is not a valid reference time: day 29 is not 1..28 in February 1900 $greg" \
        "$HS_BIN" $cmd tu.ini
    tu_ini "seconds since 2000-06-31 12:00"
    run expect "time_units June 31 ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'seconds since 2000-06-31 12:00' is not a valid reference time: day 31 is not 1..30 in June 2000 $greg" \
        "$HS_BIN" $cmd tu.ini
    tu_ini "seconds since 2016-12-31 23:59:60"
    run expect "time_units leap second ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'seconds since 2016-12-31 23:59:60' is not a valid reference time: second 60 is not 0..59 (CF's standard calendar has no leap seconds)" \
        "$HS_BIN" $cmd tu.ini
    tu_ini "days since 1582-10-10"
    run expect "time_units in the Julian-Gregorian gap ($cmd)" 2 \
        "hpcsim: error: tu.ini:10: output.time_units: 'days since 1582-10-10' is not a valid reference time: 1582-10-10 is not in CF's standard calendar (Julian 1582-10-04 is followed by Gregorian 1582-10-15)" \
        "$HS_BIN" $cmd tu.ini
done
run expect "time_units 2001-02-29 (override)" 2 \
    "hpcsim: error: command line (override 1): output.time_units: 'days since 2001-02-29' is not a valid reference time: day 29 is not 1..28 in February 2001 $greg" \
    "$HS_BIN" check good.ini "output.time_units=days since 2001-02-29"
# the days the calendar has run and are written as given (so "nothing written" above is not vacuous)
for date in 2000-02-29 1500-02-29; do
    tu_ini "days since $date"
    "$HS_BIN" run tu.ini >"$CAP/o" 2>&1
    rc=$?
    [ $rc = 0 ] && [ -s tu.$EXT ] && grep -q "days since $date" tu.$EXT && ok "time_units $date runs and is written" ||
        bad "time_units $date: exit $rc: $(grep -m1 hpcsim "$CAP/o")"
    rm -f tu.$EXT tu.xmf checkpoint.h5
done
rm -f tu.ini

# Lines of any length: a 10000-character comment and value, and a ~4 KiB output path that is written.
a10k=$(head -c 10000 /dev/zero | tr '\0' a)
printf '[run]\nsolver = selftest\n# %s\n[output]\npath = %s\n' "$a10k" "$a10k" > longline.ini
run expect "10000-character lines" 0 "" "$HS_BIN" check longline.ini
grep -q "^path = $a10k  *# longline.ini:5\$" "$CAP/out.txt" && { echo "ok   check prints the 10000-character value whole"; pass=$((pass + 1)); } ||
    { echo "FAIL check of a 10000-character value: $(head -c 300 "$CAP/out.txt")"; fail=$((fail + 1)); }
b200=$(head -c 200 /dev/zero | tr '\0' d)
deep=""
while [ ${#deep} -lt 3870 ]; do deep="$deep$b200/"; done
deep=${deep}$(head -c $((4080 - ${#deep})) /dev/zero | tr '\0' e)   # output.path: 4080 characters
mkdir -p "$(dirname "$deep")"
printf '[run]\nsolver = heat\ndevice = cpu\n[heat]\nndim = 2\nn = 8 8\nt_end = 0.001\n[output]\npath = %s\n' "$deep" > deep.ini
"$HS_BIN" run deep.ini checkpoint.every_steps=0 >"$CAP/out.txt" 2>"$CAP/err.txt"
rc=$?
if [ $rc = 0 ] && { [ -s "$deep.nc" ] || [ -s "$deep.h5" ]; }; then
    echo "ok   a 4080-character output path is written"; pass=$((pass + 1))
else
    echo "FAIL 4080-character output path: exit $rc: $(grep hpcsim "$CAP/err.txt" | head -c 300)"; fail=$((fail + 1))
fi
rm -rf "$b200"

# Under MPI, every rank sees the error but only rank 0 prints it; the job exits 2.
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    run expect "MPI: reported once, exit 2" 2 "hpcsim: error: typo.ini:3: run.devise: unknown key (did you mean run.device?)" \
        mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" check typo.ini
fi

# a '#' or ';' inside a value's double quotes is text (`path = "o # x"` became `"o`, a file named
# with its quote); an opening quote never closed is a syntax error at its line
printf '[run]\nsolver = selftest\n[output]\npath = "o # not; a comment"  # a comment\n' > quoted.ini
"$HS_BIN" check quoted.ini >"$CAP/o" 2>&1
grep -q '^path = o # not; a comment ' "$CAP/o" && ok "a quoted value keeps its '#' and ';'" || bad "quoted '#': $(grep -m1 '^path' "$CAP/o")"
printf '[run]\nsolver = selftest\n[output]\npath = "o\n' > unclosed.ini
"$HS_BIN" check unclosed.ini >"$CAP/o" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "unclosed.ini:4: output.path: syntax error: the value's opening double quote is not closed" "$CAP/o" &&
    ok "an unclosed quote: exit 2 at its line" || bad "unclosed quote: exit $rc: $(cat "$CAP/o" | head -2)"

# a file with bare-CR line ends (classic Mac) reads as its lines: it was one line, refused as "text
# after the section header's closing ']'"; errors name the right line
printf '[run]\rsolver = selftest\r[output]\rpath = crout\r' > cr.ini
"$HS_BIN" check cr.ini >"$CAP/o" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^path = crout  *# cr.ini:4$' "$CAP/o" && ok "bare-CR line ends: each is a line" || bad "bare CR: exit $rc: $(grep -m1 -E 'error|^path' "$CAP/o")"
printf '[run]\r\nsolver = selftest\r[output]\rpath = crout\rbogus = 1\r' > cr2.ini
"$HS_BIN" check cr2.ini >"$CAP/o" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "cr2.ini:5: output.bogus" "$CAP/o" && ok "mixed CRLF and bare CR: an unknown key at its line, exit 2" || bad "bare CR error line: exit $rc: $(head -2 "$CAP/o")"

# a message naming a deep path keeps its cause (cut at 1024 bytes, "No such file or directory" was lost)
deep=$(printf 'd%.0s' $(seq 50)); deep="$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep/$deep"
"$HS_BIN" check quoted.ini "output.path=$deep/o" >"$CAP/o" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "No such file or directory$" "$CAP/o" && ok "a deep missing directory: the message ends with its cause" ||
    bad "deep path: exit $rc, message ends '$(tail -c 80 "$CAP/o")'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
