/* OpenQASM 2.0 reader: source text to a circuit (qelib1.inc built in), errors as file:line:column. */
#ifndef HS_QASM_H
#define HS_QASM_H

#include "solvers/quantum/circuit.h"

/* The most operations a parsed circuit may have after gate expansion and register broadcast.  The
 * count is made before anything is built (user gates are counted per definition), so a small file
 * of nested gates that would expand past it is refused at once; about 220 bytes per operation
 * (4 GiB at the limit). */
#define HS_QASM_MAX_OPERATIONS (1 << 24)

/* Parse the program in `path`.  Supported: OPENQASM 2.0; include (qelib1.inc is built in; other
 * files are read relative to the including file); qreg/creg; gate definitions with parameters;
 * every qelib1.inc gate plus U and CX; measure; reset; barrier; if (creg == n); parameter
 * expressions with + - * / ^, unary minus, pi, and sin cos tan exp ln sqrt asin acos atan, each
 * value (also every intermediate one) a finite double.  Source files must be regular files of at
 * most 64 MiB of text.  Errors are input errors "path:line:column: message" naming the offending
 * token.  Not collective. */
int hs_qasm_parse_file(const char *path, hs_circuit **c);
/* The same for text in memory; `name` stands for the file in messages. */
int hs_qasm_parse_string(const char *name, const char *text, hs_circuit **c);

#endif
