#!/usr/bin/env bash
# scripts/peers/qasm_to_qsim.py checked against qsim itself: qsim's CPU build runs the exported circuit and prints the amplitudes hpcsim computes (SKIP 77 without qsim's sources in .peers/).
set -u
. "$(dirname "$0")/lib.sh"
QSIM=${QSIM_SRC_DIR:-$ROOT/.peers/qsim}
if [ ! -f "$QSIM/apps/qsim_base.cc" ]; then
    echo "SKIP: no qsim sources in $QSIM (scripts/peers/fetch_qsim.sh exports them)"
    exit 77
fi
for tool in python3 g++; do
    command -v $tool >/dev/null || { echo "SKIP: $tool is missing"; exit 77; }
done

if ! g++ -O1 -fopenmp -std=c++17 "$QSIM/apps/qsim_base.cc" -o qsim_base >build.log 2>&1; then
    tail -5 build.log
    echo "FAIL qsim's CPU simulator does not build"
    exit 1
fi

# every gate the exporter maps, on 10 qubits, with controls and targets both ways round
cat >c.qasm <<'QASM'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[10];
h q[0]; h q[1]; h q[2]; h q[3]; h q[4]; h q[5]; h q[6]; h q[7]; h q[8]; h q[9];
sx q[0]; ry(pi/2) q[1]; t q[2]; rx(0.3) q[3]; rz(-1.1) q[4]; s q[5]; x q[6]; y q[7]; z q[8]; ry(0.7) q[9];
cz q[0], q[1]; cz q[2], q[3]; cx q[4], q[5]; cx q[7], q[6]; cp(0.9) q[8], q[9];
rzz(0.4) q[1], q[2]; rzz(-0.8) q[5], q[9]; swap q[3], q[8];
t q[0]; sx q[1]; ry(pi/2) q[2]; sx q[3]; t q[4]; h q[5]; rx(2.1) q[6]; rz(0.25) q[7]; sx q[8]; t q[9];
cz q[1], q[6]; cx q[9], q[0]; cp(-0.35) q[3], q[7]; swap q[2], q[4];
sx q[0]; t q[1]; sx q[2]; ry(pi/2) q[3]; sx q[4]; t q[5]; ry(pi/2) q[6]; h q[7]; t q[8]; rx(-0.6) q[9];
QASM
python3 "$ROOT/scripts/peers/qasm_to_qsim.py" c.qasm >c.qsim || { echo "FAIL export"; exit 1; }
head -1 c.qsim | grep -qx 10 && ok "exported: 10 qubits, $(($(wc -l <c.qsim) - 1)) gates" || bad "qubit count line"
./qsim_base -c c.qsim -f 2 -v 0 >qsim.txt 2>&1 || { cat qsim.txt; echo "FAIL qsim run"; exit 1; }
printf '[run]\nsolver = quantum\ndevice = cpu\n[quantum]\ncircuit = c.qasm\nshots = 0\n[output]\npath = h\n' >h.ini
"$HS_BIN" run h.ini --quiet >/dev/null 2>&1 || { echo "FAIL hpcsim run"; exit 1; }
# qsim prints the first 8 amplitudes as "bits: re im |a|^2" (complex64, 8 digits)
if python3 - <<'PY'
import json, sys
ours = json.load(open("h.json"))["amplitudes"]
theirs = [list(map(float, l.split()[1:3])) for l in open("qsim.txt") if l[:3].strip("01") == "" and ":" in l[:4]]
assert len(theirs) == 8, theirs
err = max(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in zip(ours, theirs))
big = max(abs(a[0]) + abs(a[1]) for a in ours[:8])
print(f"first 8 amplitudes: largest difference {err:.2g} (largest amplitude {big:.3f})")
sys.exit(0 if err < 2e-7 and big > 1e-3 else 1)
PY
then ok "qsim and hpcsim agree on the exported circuit (2e-7)"; else bad "qsim's amplitudes differ from hpcsim's"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
