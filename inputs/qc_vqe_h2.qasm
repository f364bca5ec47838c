// Reference state for the H2 VQE demo: the Hartree-Fock determinant in the parity-reduced
// 2-qubit encoding is |01>; the VQE ansatz itself is built by the solver (hardware-efficient).
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
x q[0];
