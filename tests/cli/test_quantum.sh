#!/usr/bin/env bash
# The quantum solver end to end: good runs write JSON (counts, amplitudes, reset honoured, VQE
# stopping reasons); bad OpenQASM (also non-finite parameters, over-long expansions, included
# directories), bad Pauli and graph files, bad parameters and registers too large for memory give
# one exact "file:line:column" message, exit 2, and write nothing.
set -u
. "$(dirname "$0")/lib.sh"
INPUTS=$ROOT/inputs

# expect NAME STATUS STDERR_LINE (exact; a leading ~ makes it an extended regex) COMMAND...
expect() {
    local name=$1 want_rc=$2 want_msg=$3
    shift 3
    local before after msg rc
    before=$(ls -A | sort)
    "$@" >"$CAP/out.txt" 2>"$CAP/err.txt"
    rc=$?
    after=$(ls -A | sort)
    msg=$(grep '^hpcsim' "$CAP/err.txt")
    if [ "$rc" != "$want_rc" ]; then bad "$name: exit $rc, expected $want_rc; stderr: $(cat "$CAP/err.txt")"; return; fi
    if [ "${want_msg:0:1}" = "~" ]; then
        if ! [[ "$msg" =~ ${want_msg:1} ]]; then printf 'FAIL %s:\n  got:      %s\n  expected: %s\n' "$name" "$msg" "${want_msg:1}"; fail=$((fail + 1)); return; fi
    elif [ -n "$want_msg" ] && [ "$msg" != "$want_msg" ]; then
        printf 'FAIL %s:\n  got:      %s\n  expected: %s\n' "$name" "$msg" "$want_msg"; fail=$((fail + 1)); return
    fi
    if [ "$want_rc" != 0 ] && [ "$before" != "$after" ]; then
        bad "$name: files appeared: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')"; return
    fi
    ok "$name"
}

ini() { # FILE.qasm [extra lines]
    printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\ncircuit = %s\n%s\n[output]\npath = out\n' "$1" "${2:-}"
}

# ---- good runs
cat > ghz.qasm <<'Q'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
creg c[3];
h q[0];
cx q[0], q[1];
cx q[1], q[2];
measure q -> c;
Q
ini ghz.qasm $'shots = 1000\nmarginal = 2' > ghz.ini
expect "GHZ runs" 0 "" "$HS_BIN" run ghz.ini --quiet
if [ -f out.json ] && grep -q '"000": ' out.json && grep -q '"111": ' out.json && ! grep -q '"001"' out.json; then
    ok "GHZ counts only 000 and 111"
else
    bad "GHZ counts: $(cat out.json 2>/dev/null | head -c 400)"
fi
if python3 - out.json <<'PY'
import json, sys, math
r = json.load(open(sys.argv[1]))
assert sum(r["counts"].values()) == 1000
a = r["amplitudes"]
assert abs(a[0][0] - 1 / math.sqrt(2)) < 1e-15 and abs(a[7][0] - 1 / math.sqrt(2)) < 1e-15
assert abs(r["marginal"]["probabilities"][1] - 0.5) < 1e-15
PY
then ok "GHZ JSON: amplitudes, marginal, 1000 shots"; else bad "GHZ JSON content"; fi
# the version and the resolved parameters, as in the NetCDF/HDF5 outputs (the JSON had neither)
if python3 - out.json "$("$HS_BIN" --version | head -1)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["source"] == sys.argv[2], (r.get("source"), sys.argv[2])
ini = r["hpcsim_parameters"]
assert "[quantum]" in ini and "\nshots = 1000\n" in ini and "\nmarginal = 2\n" in ini and "\nsolver = quantum\n" in ini, ini
PY
then ok "GHZ JSON: source and hpcsim_parameters"; else bad "GHZ JSON metadata: $(head -c 300 out.json)"; fi
mv out.json ghz1.json
"$HS_BIN" run ghz.ini --quiet >/dev/null 2>&1
if [ -f out.json ] && cmp -s <(grep -v seconds ghz1.json) <(grep -v seconds out.json); then ok "seeded run repeats exactly"; else bad "rerun differs"; fi
rm -f out.json ghz1.json

# fused and unfused, complex128 and complex64 agree
cat > qft.qasm <<'Q'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[4];
x q[0]; x q[2];
h q[3]; cp(pi/2) q[2], q[3]; cp(pi/4) q[1], q[3]; cp(pi/8) q[0], q[3];
h q[2]; cp(pi/2) q[1], q[2]; cp(pi/4) q[0], q[2];
h q[1]; cp(pi/2) q[0], q[1];
h q[0];
swap q[0], q[3]; swap q[1], q[2];
Q
ini qft.qasm 'shots = 0' > qft.ini
"$HS_BIN" run qft.ini --quiet quantum.fusion=0 output.path=f0 >/dev/null 2>&1
"$HS_BIN" run qft.ini --quiet quantum.fusion=4 output.path=f4 >/dev/null 2>&1
"$HS_BIN" run qft.ini --quiet quantum.precision=complex64 output.path=c64 >/dev/null 2>&1
if python3 - <<'PY'
import json, cmath, math
f0, f4, c64 = (json.load(open(p + ".json"))["amplitudes"] for p in ("f0", "f4", "c64"))
for y in range(16):
    want = cmath.exp(2j * math.pi * 5 * y / 16) / 4
    assert abs(complex(*f0[y]) - want) < 1e-14 and abs(complex(*f4[y]) - complex(*f0[y])) < 1e-12
    assert abs(complex(*c64[y]) - want) < 1e-6
PY
then ok "QFT: fused = unfused (1e-12), complex64 (1e-6), exact phases"; else bad "QFT amplitudes"; fi
rm -f f0.json f4.json c64.json

# output.format: the results are JSON; a gridded format asked for is refused (it was ignored and the
# JSON written), none writes no result file
rm -f out.json
expect "output.format = none: no result file" 0 "" "$HS_BIN" run ghz.ini --quiet output.format=none
[ ! -e out.json ] && ok "output.format = none wrote no out.json" || bad "output.format = none wrote out.json"
expect "output.format = netcdf refused" 2 \
    "hpcsim: error: command line (override 1): output.format: the quantum solver writes its results as JSON (out.json); the formats are for gridded output (auto or none: no result file)" \
    "$HS_BIN" check ghz.ini output.format=netcdf

# ---- bad inputs: exact message, exit 2, nothing written
# bad_qasm STEM QASM NAME MESSAGE [check|run]: STEM.qasm (QASM with \n escapes) in a case of its own, refused with MESSAGE
bad_qasm() {
    printf '%b' "$2" > "$1.qasm"
    ini "$1.qasm" > "$1.ini"
    expect "$3" 2 "$4" "$HS_BIN" "${5:-run}" "$1.ini"
}
bad_qasm syntax 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2]\nh q[0];\n' "QASM syntax error" \
    "hpcsim: error: syntax.qasm:4:1: expected ';' (at 'h')"
bad_qasm undef 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\nh q[0];\n  toffoli q[0], q[1];\n' "undefined gate" \
    "hpcsim: error: undef.qasm:5:3: undefined gate (at 'toffoli')"
bad_qasm noinc 'OPENQASM 2.0;\nqreg q[2];\nh q[0];\n' "qelib1 gate without include" \
    "hpcsim: error: noinc.qasm:3:1: undefined gate (it is in qelib1.inc: add 'include \"qelib1.inc\";') (at 'h')"

printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[3];\ncreg c[3];\ncx q[0], q[7];\n' > range.qasm
ini range.qasm > range.ini
expect "qubit index out of range" 2 "hpcsim: error: range.qasm:5:12: index out of range for qreg q[3] (at '7')" "$HS_BIN" run range.ini

printf 'OPENQASM 2.0;\nqreg q[20];\nqreg r[26];\n' > big.qasm
ini big.qasm > big.ini
expect "register too large for memory" 2 \
    "~^hpcsim: error: big.qasm:2: a register of 46 qubits needs 1.049e\+06 GiB per rank \(complex128, 1 rank\) but only [0-9.e+]+ GiB is available on this node$" \
    "$HS_BIN" run big.ini

# VQE holds three registers: the figure is theirs together and the message says so (it said "a register")
printf '1.0 Z0 Z39\n' > wide.pauli
printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = vqe\nhamiltonian = wide.pauli\n' > vwide.ini
expect "three VQE registers too large for memory" 2 \
    "~^hpcsim: error: wide.pauli: 3 registers of 40 qubits \(the state, its adjoint and a derivative\) need 4.915e\+04 GiB per rank \(complex128, 1 rank\) but only [0-9.e+]+ GiB is available on this node$" \
    "$HS_BIN" check vwide.ini

printf 'OPENQASM 2.0;\nqreg q[51];\n' > huge.qasm
ini huge.qasm > huge.ini
expect "register over the simulator's limit" 2 "hpcsim: error: huge.qasm:2:8: register too large: 51 qubits in all; at most 50 can be simulated (at '51')" "$HS_BIN" run huge.ini

ini missing.qasm > missing.ini
expect "missing circuit file" 2 "hpcsim: error: missing.ini:5: quantum.circuit: cannot open OpenQASM file missing.qasm: No such file or directory" "$HS_BIN" run missing.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n' > nocirc.ini
expect "no circuit given" 2 "hpcsim: error: nocirc.ini: quantum.circuit: mode = circuit needs an OpenQASM file (default value)" "$HS_BIN" run nocirc.ini

ini ghz.qasm 'marginal = 0, 5' > marg.ini
expect "marginal qubit outside the register" 2 "hpcsim: error: marg.ini:6: quantum.marginal: qubit 5 is outside the 3-qubit register" "$HS_BIN" run marg.ini

printf '0.5 ZZ\n1.0 X0 Q1\n' > obs.pauli
ini ghz.qasm 'observable = obs.pauli' > obs.ini
expect "bad Pauli-sum file" 2 "hpcsim: error: obs.pauli:2:8: expected a factor like X0 or Z12, got 'Q1'" "$HS_BIN" run obs.ini

ini ghz.qasm 'fusion = 9' > fus.ini
expect "fusion out of range" 2 "hpcsim: error: fus.ini:6: quantum.fusion: '9' is not one of 0|1|2|3|4|5|6|auto" "$HS_BIN" check fus.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = vqe\nhamiltonian = nothere.pauli\n' > vqe.ini
expect "missing Hamiltonian" 2 "hpcsim: error: vqe.ini:6: quantum.hamiltonian: cannot open Pauli-sum file nothere.pauli: No such file or directory" "$HS_BIN" run vqe.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = qaoa\ngraph = g.txt\n' > qaoa.ini
printf '4\n0 1\n1 4\n' > g.txt
expect "bad graph edge" 2 "hpcsim: error: g.txt:3:3: expected a vertex number 0..3, got '4'" "$HS_BIN" run qaoa.ini

# ---- `if` on a wide classical register: the value was read as an int capped at 1e9, so
# if(c==2147483648) on a 40-bit register was "expected an integer", and a value that did not fit a
# 30-bit register said the same.  By hand: q[0] = 1 measured into c[31] (40 bits) and into c[63],
# c[62], c[0] (64 bits, 2^63 + 2^62 + 1, past a double's 53 exact bits) makes each condition true,
# so x q[1] runs and c[0] (40 bits) or c[1] (64 bits) records it.
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[40];\nx q[0];\nmeasure q[0] -> c[31];\nif (c == 2147483648) x q[1];\nmeasure q[1] -> c[0];\n' > if40.qasm
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[64];\nx q[0];\nmeasure q[0] -> c[63];\nmeasure q[0] -> c[62];\nmeasure q[0] -> c[0];\nif (c == 13835058055282163713) x q[1];\nif (c == 13835058055282163712) x q[0];\nmeasure q[1] -> c[1];\nmeasure q[0] -> c[0];\n' > if64.qasm
ini if40.qasm 'shots = 10' > if40.ini
ini if64.qasm 'shots = 10' > if64.ini
expect "if on a 40-bit register, value 2^31" 0 "" "$HS_BIN" run if40.ini --quiet output.path=if40
expect "if on a 64-bit register, value over 2^53" 0 "" "$HS_BIN" run if64.ini --quiet output.path=if64
if python3 - <<'PY'
import json
assert json.load(open("if40.json"))["counts"] == {"0" * 8 + "1" + "0" * 30 + "1": 10}
assert json.load(open("if64.json"))["counts"] == {"1" * 2 + "0" * 60 + "11": 10}
PY
then ok "if on 40- and 64-bit registers: the conditions hold exactly"; else bad "wide if counts: $(head -c 300 if40.json if64.json)"; fi
rm -f if40.json if64.json
bad_qasm if30 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[30];\nif (c == 1073741824) x q[0];\n' \
    "if value too large for its register" "hpcsim: error: if30.qasm:5:10: value does not fit the register (at '1073741824')"
bad_qasm if65 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[64];\nif (c == 18446744073709551616) x q[0];\n' \
    "if value over 64 bits" "hpcsim: error: if65.qasm:5:10: value does not fit in 64 bits (at '18446744073709551616')" check

# ---- reset is honoured on every path (issue 13, item 7).  References by hand: x then reset leaves
# |00>, so every shot reads 00 and the amplitudes are (1, 0, 0, 0); after h, cx, reset q[0] the
# state is |0> or |1> on q[1] with probability 1/2 each and q[0] = 0 (keys "00" and "10").
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nx q[0];\nreset q[0];\nmeasure q -> c;\n' > reset.qasm
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\nx q[0];\nreset q[0];\n' > reset_nom.qasm
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nh q[0];\ncx q[0], q[1];\nreset q[0];\nmeasure q -> c;\n' > reset_ent.qasm
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nreset q;\nx q[1];\nmeasure q -> c;\n' > reset_first.qasm
ini reset.qasm 'shots = 1000' > reset.ini
ini reset_nom.qasm 'shots = 0' > reset_nom.ini
ini reset_ent.qasm 'shots = 2000' > reset_ent.ini
ini reset_first.qasm 'shots = 500' > reset_first.ini
for fus in 0 4; do
    "$HS_BIN" run reset.ini --quiet quantum.fusion=$fus output.path=r$fus >/dev/null 2>&1
    "$HS_BIN" run reset_nom.ini --quiet quantum.fusion=$fus output.path=n$fus >/dev/null 2>&1
    "$HS_BIN" run reset_ent.ini --quiet quantum.fusion=$fus output.path=e$fus >/dev/null 2>&1
    "$HS_BIN" run reset_first.ini --quiet quantum.fusion=$fus output.path=f$fus >/dev/null 2>&1
    if python3 - $fus <<'PY'
import json, sys
f = sys.argv[1]
r = json.load(open("r%s.json" % f))
assert r["counts"] == {"00": 1000}, r["counts"]
assert r["amplitudes"] == [[1, 0], [0, 0], [0, 0], [0, 0]], r["amplitudes"]
n = json.load(open("n%s.json" % f))
assert n["amplitudes"] == [[1, 0], [0, 0], [0, 0], [0, 0]], n["amplitudes"]
e = json.load(open("e%s.json" % f))["counts"]
assert set(e) == {"00", "10"} and abs(e["00"] - 1000) < 100, e   # 4.5 sigma of Binomial(2000, 1/2)
assert json.load(open("f%s.json" % f))["counts"] == {"10": 500}
PY
    then ok "reset honoured (fusion $fus): x;reset -> 00 and |00>, entangled reset -> 00/10, leading reset"; else bad "reset (fusion $fus)"; fi
    rm -f r$fus.json n$fus.json e$fus.json f$fus.json
done
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[7];\ncreg c[7];\nx q[6];\nx q[0];\nreset q[6];\nmeasure q -> c;\n' > reset7.qasm
    ini reset7.qasm 'shots = 100' > reset7.ini
    mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" run reset7.ini --quiet output.path=r7 >/dev/null 2>r7.err
    if python3 -c 'import json; r = json.load(open("r7.json")); assert r["distributed"] and r["counts"] == {"0000001": 100}, r["counts"]' &&
        ! grep -q "held whole" r7.err; then
        ok "MPI: reset of a global qubit"; else bad "MPI reset: $(head -c 300 r7.json 2>/dev/null) $(cat r7.err)"; fi
    # 3 ranks cannot split the state: it is held whole on each, and check and run say so once
    for cmd in check run; do
        mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 3 "$HS_BIN" $cmd reset7.ini --quiet output.path=r7 >/dev/null 2>r7.err
        if [ "$(grep -c "^hpcsim: note: quantum: the state of 7 qubits is held whole on each of the 3 ranks" r7.err)" = 1 ]; then
            ok "MPI $cmd on 3 ranks: the state held whole on each, said once"; else bad "3 ranks ($cmd): $(cat r7.err)"; fi
    done
    python3 -c 'import json; r = json.load(open("r7.json")); assert not r["distributed"] and r["counts"] == {"0000001": 100}, r' &&
        ok "MPI: 3 ranks give the replicated run's counts" || bad "3 ranks: $(head -c 300 r7.json 2>/dev/null)"
    rm -f r7.json r7.err
fi

# ---- non-finite input is an input error (item 8)
for e in '0/0' '1e400' 'ln(0)' '2^5000'; do
    printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nrx(%s) q[0];\n' "$e" > nf.qasm
    ini nf.qasm > nf.ini
    expect "gate parameter $e" 2 "~^hpcsim: error: nf.qasm:4:4: ('1e400' overflows a double|parameter 1 of 'rx' is not a finite number)" "$HS_BIN" run nf.ini
done
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\ngate g(a) r { rx(pi/a) r; }\nqreg q[1];\ng(0) q[0];\n' > nfg.qasm
ini nfg.qasm > nfg.ini
expect "gate-body parameter 1/0" 2 "hpcsim: error: nfg.qasm:5:1: parameter 1 of 'rx' in the body of gate 'g' is not a finite number ('/' gives inf) (at 'g')" "$HS_BIN" run nfg.ini
# ---- expressions nested past 1000 levels are an input error: the recursive parser (nested '(' or
# signs) and the evaluator (a chain of 300,000 '+1') overflowed the stack and crashed; 1000 levels run
rep() { local i; for ((i = 0; i < $2; i++)); do printf '%s' "$1"; done; }
for d in "paren $(rep '(' 100000)1$(rep ')' 100000) 1004 (" "sign $(rep - 100000)1 1004 -" "chain 1$(rep +1 300000) 2003 +"; do
    read -r what e col at <<<"$d"
    printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nrx(%s) q[0];\n' "$e" > deep.qasm
    ini deep.qasm > deep.ini
    expect "deep expression ($what)" 2 "hpcsim: error: deep.qasm:4:$col: expression nested too deeply: at most 1000 levels of parentheses, signs and operators (at '$at')" "$HS_BIN" run deep.ini
done
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\ngate g(a) r { rx(%s) r; }\nqreg q[1];\ng(1) q[0];\n' "$(rep '(' 999)a$(rep ')' 999)+$(rep 'a+' 998)a" > deep.qasm
ini deep.qasm 'shots = 0' > deep.ini
expect "expressions 999 and 1000 levels deep" 0 "" "$HS_BIN" run deep.ini
rm -f out.json
printf '0.5 ZZ\nnan XX\n' > nan.pauli
ini ghz.qasm 'observable = nan.pauli' > nan.ini
expect "Pauli coefficient nan" 2 "hpcsim: error: nan.pauli:2:1: expected a finite coefficient, got 'nan'" "$HS_BIN" run nan.ini
printf '0.5 ZZ\ninf XX\n' > inf.pauli
printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = vqe\nhamiltonian = inf.pauli\n' > vinf.ini
expect "Hamiltonian coefficient inf" 2 "hpcsim: error: inf.pauli:2:1: expected a finite coefficient, got 'inf'" "$HS_BIN" run vinf.ini

# a file key that the mode does not read is refused (it was ignored: no expectation value, and a
# misspelt path never opened)
ini ghz.qasm 'hamiltonian = obs.pauli' > wmode.ini
expect "hamiltonian in circuit mode" 2 "hpcsim: error: wmode.ini:6: quantum.hamiltonian: is read by mode = vqe only, and this is mode = circuit (mode = circuit takes quantum.observable, mode = qaoa quantum.graph)" "$HS_BIN" run wmode.ini
expect "observable in qaoa mode" 2 "hpcsim: error: command line (override 1): quantum.observable: is read by mode = circuit only, and this is mode = qaoa (the energy of quantum.hamiltonian or the cut of quantum.graph is what it reports)" "$HS_BIN" check qaoa.ini quantum.observable=nothere.pauli

# ---- graph and Pauli readers (item 9)
printf '4\n0 1 nan\n' > g.txt
expect "graph weight nan" 2 "hpcsim: error: g.txt:2:5: expected a finite edge weight, got 'nan'" "$HS_BIN" run qaoa.ini
printf '4\n0 1\n4294967297 2\n' > g.txt
expect "graph vertex past 2^32" 2 "hpcsim: error: g.txt:3:1: expected a vertex number 0..3, got '4294967297'" "$HS_BIN" run qaoa.ini
printf '4\n0 1 abc\n' > g.txt
expect "graph weight abc" 2 "hpcsim: error: g.txt:2:5: expected a finite edge weight, got 'abc'" "$HS_BIN" run qaoa.ini
printf '4\n0 1 2 junk\n' > g.txt
expect "graph trailing junk" 2 "hpcsim: error: g.txt:2:7: unexpected text after the edge: 'junk'" "$HS_BIN" run qaoa.ini
# a comment of 5000 characters whose tail looks like a term: <Z0 Z1> = 1 on GHZ, so 0.5 (1.5 if the
# tail "1.0 III" were read as a term)
{ printf '#'; head -c 4094 /dev/zero | tr '\0' c; printf ' 1.0 III\n0.5 Z0 Z1\n'; } > long.pauli
ini ghz.qasm $'shots = 0\nobservable = long.pauli' > long.ini
"$HS_BIN" run long.ini --quiet >/dev/null 2>&1
if python3 -c 'import json; v = json.load(open("out.json"))["expectation"]["value"]; assert abs(v - 0.5) < 1e-14, v'; then
    ok "Pauli file: a 4100-character comment stays a comment"; else bad "long comment: $(grep -o '"value":[^}]*' out.json)"; fi
rm -f out.json

# a term written for more qubits than the circuit has is refused at its line, identities included
# ("I7" and "IIIIIZ" on 3 qubits were accepted: only non-identity factors were counted)
printf '0.5 ZZ\n0.25 I7 Z0\n' > wide.pauli
ini ghz.qasm 'observable = wide.pauli' > wide.ini
expect "Pauli identity factor beyond the register" 2 "hpcsim: error: wide.pauli:2:6: the term names qubit 7 but the circuit has 3 qubits (quantum.observable)" "$HS_BIN" run wide.ini
printf '0.5 ZZ\n0.25 IIIIIZ\n' > wide.pauli
expect "Pauli string longer than the register" 2 "hpcsim: error: wide.pauli:2:6: the term names qubit 5 but the circuit has 3 qubits (quantum.observable)" "$HS_BIN" check wide.ini

# ---- gate expansion is counted before it is built (item 10)
{ printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\ngate g0 a { x a; }\n'
  for k in $(seq 1 30); do printf 'gate g%d a { g%d a; g%d a; }\n' $k $((k - 1)) $((k - 1)); done
  printf 'qreg q[1];\ng30 q[0];\n'; } > nest.qasm
ini nest.qasm > nest.ini
start=$(date +%s)
expect "30 nested doubling gates refused" 2 "hpcsim: error: nest.qasm:35:1: gate 'g30' expands to 1073741824 operations; a circuit may have at most 16777216 (at 'g30')" \
    timeout 60 "$HS_BIN" run nest.ini
[ $(( $(date +%s) - start )) -le 5 ] && ok "expansion refused within 5 s" || bad "expansion refusal took $(( $(date +%s) - start )) s"

# ---- include of a directory (item 11)
mkdir -p incdir
printf 'OPENQASM 2.0;\ninclude "incdir";\nqreg q[1];\n' > incd.qasm
ini incd.qasm > incd.ini
expect "include of a directory" 2 "hpcsim: error: incd.qasm:2:9: include file is not a regular file (at '\"incdir\"')" "$HS_BIN" run incd.ini
ini incdir > cdir.ini
expect "circuit file is a directory" 2 "hpcsim: error: cdir.ini:5: quantum.circuit: OpenQASM file incdir is not a regular file (a directory)" "$HS_BIN" run cdir.ini
rmdir incdir

# ---- an unterminated /* comment is an error: it swallowed the rest of the file, and the run wrote
# the state of an empty circuit with exit 0
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\n/* a note\nh q[0];\ncx q[0], q[1];\n' > cmt.qasm
ini cmt.qasm > cmt.ini
expect "unterminated comment" 2 "hpcsim: error: cmt.qasm:4:1: unterminated comment: '/*' without its '*/'" "$HS_BIN" run cmt.ini

# a non-ASCII character is named whole, with its code point (the message quoted its first byte
# alone, not UTF-8); a leading UTF-8 byte-order mark is skipped, as in parameter files
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\nh\xc2\xa0q[0];\n' > nbsp.qasm
ini nbsp.qasm > nbsp.ini
expect "non-ASCII character in OpenQASM" 2 "hpcsim: error: nbsp.qasm:4:2: non-ASCII character '$(printf '\xc2\xa0')' (U+00A0): OpenQASM 2 is ASCII outside comments and strings" "$HS_BIN" run nbsp.ini
printf '\xef\xbb\xbfOPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\nx q[0];\n' > bom.qasm
ini bom.qasm 'shots = 0' > bom.ini
"$HS_BIN" run bom.ini --quiet >/dev/null 2>&1
if python3 -c 'import json; assert json.load(open("out.json"))["amplitudes"] == [[0, 0], [1, 0]]'; then
    ok "OpenQASM file with a byte-order mark"; else bad "byte-order mark: $(head -c 200 out.json 2>/dev/null)"; fi
rm -f out.json
# a bare CR ends a line (classic Mac files): the whole file was line 1 and '// c' hid every line after it
printf 'OPENQASM 2.0;\rinclude "qelib1.inc";\r// c\rqreg q[2];\rh q[0];\rcx q[0],q[3];\r' > cr.qasm
ini cr.qasm > cr.ini
expect "bare-CR OpenQASM: the error at its line" 2 "hpcsim: error: cr.qasm:6:11: index out of range for qreg q[2] (at '3')" "$HS_BIN" run cr.ini
printf 'OPENQASM 2.0;\r\ninclude "qelib1.inc";\r// c\rqreg q[1];\rx q[0];\r' > cr1.qasm
ini cr1.qasm 'shots = 0' > cr1.ini
"$HS_BIN" run cr1.ini --quiet >/dev/null 2>&1
if python3 -c 'import json; assert json.load(open("out.json"))["amplitudes"] == [[0, 0], [1, 0]]'; then
    ok "OpenQASM with bare-CR and CRLF line ends and a // comment runs every line"; else bad "bare CR: $(head -c 200 out.json 2>/dev/null)"; fi
rm -f out.json

# ---- VQE convergence is reported by the criterion that stopped the optimiser (item 13)
"$HS_BIN" run "$INPUTS/qc_vqe_h2.ini" --quiet output.path="$WORK/vqe" >/dev/null 2>&1
"$HS_BIN" run "$INPUTS/qc_vqe_h2.ini" --quiet output.path="$WORK/vqe2" quantum.max_iter=2 >/dev/null 2>&1
if python3 - <<'PY'
import json
r = json.load(open("vqe.json"))
assert abs(r["energy"] - -1.857275030202) < 1e-11 and abs(r["error"]) < 1e-12, r["error"]
assert r["converged"] is True, (r["converged"], r.get("stopping_reason"))
assert r["stopping_reason"] in ("gradient_tolerance", "energy_change", "energy_roundoff"), r["stopping_reason"]
s = json.load(open("vqe2.json"))
assert s["converged"] is False and s["stopping_reason"] in ("iteration_limit", "evaluation_limit"), (s["converged"], s.get("stopping_reason"))
assert s["gradient_max_abs"] > 1e-6
PY
then ok "VQE H2: converged with its stopping reason; max_iter = 2 is not converged"; else bad "VQE convergence report: $(grep -o '"converged[^,]*,[^,]*' vqe.json vqe2.json)"; fi
rm -f vqe.json vqe2.json

# Under MPI: every rank parses, rank 0 reports once, exit 2.
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    expect "MPI: QASM error reported once" 2 "hpcsim: error: syntax.qasm:4:1: expected ';' (at 'h')" \
        mpirun --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS=1 -n 2 "$HS_BIN" run syntax.ini
fi

# ---- a long VQE stops on SIGTERM and before run.walltime: the optimiser is asked after every
# iteration (the whole optimisation is one step: it ran on to its iteration limit, exit 0, and a
# 26-qubit one ignored SIGTERM); the results so far are written, stopping_reason interrupted, exit 3
for i in $(seq 0 14); do echo "0.$((i % 7 + 2)) X$i X$((i + 1))"; echo "-0.$((i % 5 + 1)) Z$i"; done > h16.pauli
cat > vqe16.ini <<EOF
[run]
solver = quantum
device = $DEVICE
[quantum]
mode = vqe
hamiltonian = h16.pauli
ansatz_layers = 4
check_gradient = false
max_iter = 100000
EOF
"$HS_BIN" run vqe16.ini --quiet output.path=vsig >o 2>e &
pid=$!
sleep 3
kill -TERM $pid
start=$(date +%s)
wait $pid
rc=$?
took=$(($(date +%s) - start))
if [ $rc = 3 ] && [ $took -le 20 ] && grep -q '"stopping_reason": *"interrupted"' vsig.json && grep -q "stopped by signal 15" e; then
    ok "VQE on SIGTERM: exit 3 within ${took} s, results written (interrupted)"
else bad "VQE on SIGTERM: exit $rc after ${took} s: $(cat e | head -3)"; fi
if [ $HAVE_MPI = 1 ]; then
    start=$(date +%s)
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run vqe16.ini --quiet output.path=vwall run.allow_shared_gpu=true run.walltime=00:00:04 run.walltime_reserve=1 >o 2>e
    rc=$?
    took=$(($(date +%s) - start))
    if [ $rc = 3 ] && [ $took -le 30 ] && grep -q '"stopping_reason": *"interrupted"' vwall.json && grep -q "stopped before run.walltime" e; then
        ok "VQE on 2 ranks before run.walltime: exit 3 after ${took} s, results written"
    else bad "VQE on 2 ranks, run.walltime: exit $rc after ${took} s: $(cat e | head -3)"; fi
fi

# ---- QAOA's most likely cut is the same string on 1, 2 and 4 ranks: a cut and its complement are
# equally likely, and round-off picked between them by the rank count (001110 on 4, 010101 on 1 and 2)
if [ $HAVE_MPI = 1 ]; then
    cuts=""
    for np in 1 2 4; do
        "${MPIRUN[@]}" -n $np "$HS_BIN" run "$ROOT/inputs/qc_qaoa_maxcut.ini" --quiet run.device=$DEVICE run.allow_shared_gpu=true \
            output.path=qaoa$np >/dev/null 2>&1
        cuts="$cuts $(grep -o '"most_likely_cut": *"[01]*"' qaoa$np.json | grep -o '[01]*"$' | tr -d '"')"
    done
    set -- $cuts
    [ $# = 3 ] && [ "$1" = "$2" ] && [ "$2" = "$3" ] && ok "QAOA most likely cut on 1, 2, 4 ranks: $1" || bad "QAOA most likely cut by rank count:$cuts"
fi

# Hamiltonian and graph files with a UTF-8 byte-order mark, bare-CR (classic Mac) or CRLF line ends
# read as their LF twins, as parameter files and circuits are (they were refused: "expected a
# coefficient, got '\xef\xbb\xbf1.0'", "unexpected text after the vertex count"): the same energy
grep -v '^#' "$ROOT/inputs/maxcut_6.graph" > lf.graph
grep -v '^#' "$ROOT/inputs/h2_sto3g_parity_0735.pauli" > lf.pauli
for kind in graph pauli; do
    energies=""
    for ends in lf bom cr crlf; do
        case $ends in
        lf) cp lf.$kind e.$kind ;;
        bom) { printf '\357\273\277'; cat lf.$kind; } > e.$kind ;;
        cr) tr '\n' '\r' < lf.$kind > e.$kind ;;
        crlf) sed 's/$/\r/' lf.$kind > e.$kind ;;
        esac
        if [ $kind = graph ]; then set -- quantum.mode=qaoa quantum.graph=e.graph quantum.qaoa_layers=2
        else set -- quantum.mode=vqe quantum.hamiltonian=e.pauli "quantum.circuit=$ROOT/inputs/qc_vqe_h2.qasm" quantum.ansatz_layers=1; fi
        printf '[run]\nsolver = quantum\nseed = 7\n' > ends.ini
        "$HS_BIN" run ends.ini "$@" quantum.optimizer=lbfgs output.path=ends_$ends >/dev/null 2>"$CAP/e"
        energies="$energies $(grep -o '"energy": [-0-9.e+]*' ends_$ends.json 2>/dev/null | head -1 | cut -d' ' -f2)"
    done
    set -- $energies
    [ $# = 4 ] && [ "$1" = "$2" ] && [ "$1" = "$3" ] && [ "$1" = "$4" ] &&
        ok "$kind file with LF, BOM, CR and CRLF line ends: the same energy $1" || bad "$kind file line ends: energies '$energies': $(cat "$CAP/e")"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
