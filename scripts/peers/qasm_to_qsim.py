#!/usr/bin/env python3
"""Converts an OpenQASM 2.0 circuit of the gates the benchmarks use into qsim's circuit format.

usage: scripts/peers/qasm_to_qsim.py IN.qasm > OUT.qsim

qsim's format: the number of qubits on the first line, then "time gate qubits... params" per gate,
times non-decreasing and no qubit twice in one time.  Qubit q of the qreg is qsim qubit q; one qreg.
Gates: h x y z s t sx (x_1_2) rx ry rz cx cz cp swap (sw) rzz (cx, rz, cx) id; qsim's rx/ry/rz are
exp(-i t P / 2) and its cp diag(1, 1, 1, e^(i t)), as in qelib1.inc.  Anything else is an error.
"""
import math
import re
import sys

NAMES = {"h": "h", "x": "x", "y": "y", "z": "z", "s": "s", "t": "t", "sx": "x_1_2",
         "rx": "rx", "ry": "ry", "rz": "rz", "cx": "cx", "CX": "cx", "cz": "cz", "cp": "cp",
         "cu1": "cp", "swap": "sw"}
STMT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^)]*)\))?\s*(.*)$")
QARG = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*(\d+)\s*\]\s*$")


def angle(text):
    """A parameter expression of numbers, pi and + - * / ( )."""
    if not re.fullmatch(r"[0-9eE.+\-*/() pi]*", text):
        raise ValueError(f"unsupported parameter '{text}'")
    return float(eval(text, {"__builtins__": {}}, {"pi": math.pi}))


def convert(src):
    nq, reg, ops = None, None, []
    for raw in re.sub(r"//[^\n]*", "", src).split(";"):
        line = raw.strip()
        if not line or line.startswith(("OPENQASM", "include", "barrier", "creg")):
            continue
        if line.startswith("qreg"):
            m = re.fullmatch(r"qreg\s+([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*(\d+)\s*\]", line)
            if not m or nq is not None:
                raise ValueError(f"one qreg expected: '{line}'")
            reg, nq = m.group(1), int(m.group(2))
            continue
        m = STMT.match(line)
        if not m:
            raise ValueError(f"cannot read '{line}'")
        name, params, args = m.group(1), m.group(2), m.group(3)
        qs = []
        for a in args.split(","):
            qa = QARG.match(a)
            if not qa or qa.group(1) != reg:
                raise ValueError(f"qubit argument '{a}' in '{line}'")
            qs.append(int(qa.group(2)))
        ps = [angle(p) for p in params.split(",")] if params else []
        if name == "id":
            continue
        if name == "rzz":
            ops += [("cx", qs, []), ("rz", [qs[1]], ps), ("cx", qs, [])]
        elif name in NAMES:
            ops.append((NAMES[name], qs, ps))
        else:
            raise ValueError(f"gate '{name}' has no qsim equivalent here")
    if nq is None:
        raise ValueError("no qreg")
    # times: each gate one step after the last gate on any of its qubits (as soon as possible)
    last = [-1] * nq
    timed = []
    for k, (g, qs, ps) in enumerate(ops):
        t = 1 + max(last[q] for q in qs)
        for q in qs:
            last[q] = t
        timed.append((t, k, g, qs, ps))
    timed.sort()
    out = [str(nq)]
    for t, _, g, qs, ps in timed:
        out.append(" ".join([str(t), g] + [str(q) for q in qs] + [repr(p) for p in ps]))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        with open(sys.argv[1]) as f:
            sys.stdout.write(convert(f.read()))
    except (OSError, ValueError) as e:
        sys.exit(f"qasm_to_qsim: {sys.argv[1]}: {e}")
