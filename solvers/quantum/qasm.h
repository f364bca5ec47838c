/* OpenQASM 2.0 reader: source text to a circuit (qelib1.inc built in), errors as file:line:column. */
#ifndef HS_QASM_H
#define HS_QASM_H

#include "solvers/quantum/circuit.h"

/* Parse the program in `path`.  Supported: OPENQASM 2.0; include (qelib1.inc is built in; other
 * files are read relative to the including file); qreg/creg; gate definitions with parameters;
 * every qelib1.inc gate plus U and CX; measure; reset; barrier; if (creg == n); parameter
 * expressions with + - * / ^, unary minus, pi, and sin cos tan exp ln sqrt asin acos atan.
 * Errors are input errors "path:line:column: message" naming the offending token.  Not collective. */
int hs_qasm_parse_file(const char *path, hs_circuit **c);
/* The same for text in memory; `name` stands for the file in messages. */
int hs_qasm_parse_string(const char *name, const char *text, hs_circuit **c);

#endif
