/* One error path for all of hpcsim: status codes, propagation with file:line, and the single exit. */
#ifndef HS_ERROR_H
#define HS_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes double as process exit codes. */
enum {
    HS_OK = 0,
    HS_ERR_RUNTIME = 1, /* CUDA, MPI, I/O or numerical failure */
    HS_ERR_INPUT = 2,   /* bad parameters, bad usage, bad input file */
    HS_ERR_SIGNAL = 3   /* stopped early (a signal, run.walltime) after writing a checkpoint */
};

/* Record a new error (the first message wins; later ones are appended as a trace) and return code.
 * `where` is the failing call or subject; for input errors use hs_input_error instead. */
int hs_error_raise(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record an input error in the form "source:line: key: message" (line <= 0 omits the line,
 * key NULL omits the key, source NULL omits source and line: usage errors, whose only source is
 * the command line).  The exit path adds "hpcsim: error: " in front, so no message starts with
 * "hpcsim".  Returns HS_ERR_INPUT. */
int hs_input_error(const char *source, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Append "  from FILE:LINE (call)" to the pending error and pass the code on. */
int hs_error_trace(int code, const char *file, int line, const char *call);

/* The pending message ("" when none), and clearing it (tests). */
const char *hs_error_message(void);
void hs_error_clear(void);

/* Propagate a failure from a call that returns an hs status. */
#define HS_CHECK(call)                                                                  \
    do {                                                                                \
        int hs_check_rc_ = (call);                                                      \
        if (hs_check_rc_ != HS_OK) return hs_error_trace(hs_check_rc_, __FILE__, __LINE__, #call); \
    } while (0)

/* Raise a runtime or input error at this location. */
#define HS_FAIL(code, ...) hs_error_raise((code), __FILE__, __LINE__, __VA_ARGS__)

/* Exit handler: prints the pending error once and ends the process (finalizing or aborting MPI).
 * Tests may install their own (e.g. to longjmp back) with hs_error_set_exit_handler. */
typedef void (*hs_exit_handler)(int code, const char *message);
void hs_error_set_exit_handler(hs_exit_handler handler);

/* Finish the process with `code`.  Input errors are printed by rank 0 only, runtime errors by
 * the failing rank with its number.  Collective in the sense that every rank should call it for
 * input errors; a runtime error on one rank aborts the job. */
void hs_exit(int code) __attribute__((noreturn));

/* Set by the context so the exit path knows the rank and how to shut MPI down. */
void hs_error_set_rank(int rank, int size);
void hs_error_set_finalizer(void (*finalize)(int abort_code));
/* A library was left in a state its own shutdown crashes in (HDF5 after a failed file close): the
 * process ends by aborting MPI even on one rank, which runs no library shutdown. */
void hs_error_abort_at_exit(void);

#ifdef __cplusplus
}
#endif
#endif
