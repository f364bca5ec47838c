// The QAOA demo builds its circuit from inputs/maxcut_6.graph; this file shows the p = 1 layer for
// one edge (0,1) with gamma = 0.5, beta = 0.3 as OpenQASM, for reference.
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
h q;
rzz(-0.5) q[0], q[1];
rx(0.6) q[0];
rx(0.6) q[1];
