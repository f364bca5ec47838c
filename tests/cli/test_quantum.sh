#!/usr/bin/env bash
# The quantum solver end to end: good runs write JSON (counts, amplitudes); bad OpenQASM, bad
# parameters and registers too large for memory give one exact "file:line:column" message, exit 2,
# and write nothing.
set -u
HS_BIN=$(realpath "${HS_BIN:-bin/hpcsim}")
WORK=$(mktemp -d)
CAP=$(mktemp -d)
trap 'rm -rf "$WORK" "$CAP"' EXIT
cd "$WORK"
pass=0
fail=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

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

# ---- bad inputs: exact message, exit 2, nothing written
printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2]\nh q[0];\n' > syntax.qasm
ini syntax.qasm > syntax.ini
expect "QASM syntax error" 2 "hpcsim: error: syntax.qasm:4:1: expected ';' (at 'h')" "$HS_BIN" run syntax.ini

printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\nh q[0];\n  toffoli q[0], q[1];\n' > undef.qasm
ini undef.qasm > undef.ini
expect "undefined gate" 2 "hpcsim: error: undef.qasm:5:3: undefined gate (at 'toffoli')" "$HS_BIN" run undef.ini

printf 'OPENQASM 2.0;\nqreg q[2];\nh q[0];\n' > noinc.qasm
ini noinc.qasm > noinc.ini
expect "qelib1 gate without include" 2 "hpcsim: error: noinc.qasm:3:1: undefined gate (it is in qelib1.inc: add 'include \"qelib1.inc\";') (at 'h')" "$HS_BIN" run noinc.ini

printf 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[3];\ncreg c[3];\ncx q[0], q[7];\n' > range.qasm
ini range.qasm > range.ini
expect "qubit index out of range" 2 "hpcsim: error: range.qasm:5:12: index out of range for qreg q[3] (at '7')" "$HS_BIN" run range.ini

printf 'OPENQASM 2.0;\nqreg q[20];\nqreg r[26];\n' > big.qasm
ini big.qasm > big.ini
expect "register too large for memory" 2 \
    "~^hpcsim: error: big.qasm:2: a register of 46 qubits needs 1.049e\+06 GiB per rank \(complex128, 1 rank\) but only [0-9.e+]+ GiB is available on this node$" \
    "$HS_BIN" run big.ini

printf 'OPENQASM 2.0;\nqreg q[51];\n' > huge.qasm
ini huge.qasm > huge.ini
expect "register over the simulator's limit" 2 "hpcsim: error: huge.qasm:2:8: register too large: 51 qubits in all; at most 50 can be simulated (at '51')" "$HS_BIN" run huge.ini

ini missing.qasm > missing.ini
expect "missing circuit file" 2 "hpcsim: error: missing.qasm: cannot open OpenQASM file: No such file or directory" "$HS_BIN" run missing.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n' > nocirc.ini
expect "no circuit given" 2 "hpcsim: error: nocirc.ini: quantum.circuit: mode = circuit needs an OpenQASM file (default value)" "$HS_BIN" run nocirc.ini

ini ghz.qasm 'marginal = 0, 5' > marg.ini
expect "marginal qubit outside the register" 2 "hpcsim: error: marg.ini:6: quantum.marginal: qubit 5 is outside the 3-qubit register" "$HS_BIN" run marg.ini

printf '0.5 ZZ\n1.0 X0 Q1\n' > obs.pauli
ini ghz.qasm 'observable = obs.pauli' > obs.ini
expect "bad Pauli-sum file" 2 "hpcsim: error: obs.pauli:2:8: expected a factor like X0 or Z12, got 'Q1'" "$HS_BIN" run obs.ini

ini ghz.qasm 'fusion = 9' > fus.ini
expect "fusion out of range" 2 "hpcsim: error: fus.ini:6: quantum.fusion: value 9 is out of range [0, 5]" "$HS_BIN" check fus.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = vqe\nhamiltonian = nothere.pauli\n' > vqe.ini
expect "missing Hamiltonian" 2 "hpcsim: error: nothere.pauli: cannot open Pauli-sum file: No such file or directory" "$HS_BIN" run vqe.ini

printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\nmode = qaoa\ngraph = g.txt\n' > qaoa.ini
printf '4\n0 1\n1 4\n' > g.txt
expect "bad graph edge" 2 "hpcsim: error: g.txt:3:1: expected an edge 'i j [weight]' with 0 <= i != j < n, got '1 4'" "$HS_BIN" run qaoa.ini

# Under MPI: every rank parses, rank 0 reports once, exit 2.
if command -v mpirun >/dev/null && "$HS_BIN" --version | grep -q '+mpi'; then
    expect "MPI: QASM error reported once" 2 "hpcsim: error: syntax.qasm:4:1: expected ';' (at 'h')" \
        mpirun --oversubscribe --allow-run-as-root -n 2 "$HS_BIN" run syntax.ini
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
