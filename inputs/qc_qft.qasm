// Quantum Fourier transform of the basis state |5> on 4 qubits (qubit 0 least significant):
// QFT|x> = sum_y exp(2 pi i x y / 16) |y> / 4, so every probability is 1/16.
OPENQASM 2.0;
include "qelib1.inc";
gate qft4 a, b, c, d {
  h d; cp(pi/2) c, d; cp(pi/4) b, d; cp(pi/8) a, d;
  h c; cp(pi/2) b, c; cp(pi/4) a, c;
  h b; cp(pi/2) a, b;
  h a;
  swap a, d; swap b, c;
}
qreg q[4];
x q[0];
x q[2];
qft4 q[0], q[1], q[2], q[3];
