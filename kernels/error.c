/* The error path: message buffer, traces and the single process exit. */
#include "kernels/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_ERRBUF 8192
static char g_message[HS_ERRBUF];
static int g_code = HS_OK;
static int g_rank = 0, g_size = 1;
static hs_exit_handler g_handler = NULL;
static void (*g_finalize)(int) = NULL;
static int g_abort_at_exit = 0;

static void append(const char *fmt, va_list ap)
{
    size_t used = strlen(g_message);
    if (used < HS_ERRBUF - 1) vsnprintf(g_message + used, HS_ERRBUF - used, fmt, ap);
}

static void append_f(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(fmt, ap);
    va_end(ap);
}

int hs_error_raise(int code, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (g_code != HS_OK) append_f("\n  then: "); /* keep the first failure first */
    g_code = g_code ? g_code : code;
    va_start(ap, fmt);
    append(fmt, ap);
    va_end(ap);
    if (code != HS_ERR_INPUT && file) append_f(" [%s:%d]", file, line);
    return code;
}

int hs_input_error(const char *source, int line, const char *key, const char *fmt, ...)
{
    va_list ap;
    if (g_code != HS_OK) append_f("\n");
    g_code = g_code ? g_code : HS_ERR_INPUT;
    if (source && line > 0)
        append_f("%s:%d: ", source, line);
    else if (source)
        append_f("%s: ", source);
    if (key) append_f("%s: ", key);
    va_start(ap, fmt);
    append(fmt, ap);
    va_end(ap);
    return HS_ERR_INPUT;
}

int hs_error_trace(int code, const char *file, int line, const char *call)
{
    /* Input errors are for users: their message already names file, line and key. */
    if (code != HS_ERR_INPUT && code != HS_ERR_SIGNAL) append_f("\n  from %s:%d (%s)", file, line, call);
    if (g_code == HS_OK) g_code = code;
    return code;
}

const char *hs_error_message(void) { return g_message; }

void hs_error_clear(void)
{
    g_message[0] = '\0';
    g_code = HS_OK;
}

void hs_error_set_exit_handler(hs_exit_handler handler) { g_handler = handler; }
void hs_error_set_rank(int rank, int size) { g_rank = rank; g_size = size; }
void hs_error_set_finalizer(void (*finalize)(int)) { g_finalize = finalize; }

void hs_error_abort_at_exit(void) { g_abort_at_exit = 1; }

void hs_exit(int code)
{
    if (g_handler) g_handler(code, g_message);
    if (code != HS_OK && g_message[0]) {
        if (code == HS_ERR_INPUT || code == HS_ERR_SIGNAL) {
            if (g_rank == 0) fprintf(stderr, "hpcsim: error: %s\n", g_message);
        } else if (g_size > 1) {
            fprintf(stderr, "hpcsim: rank %d: error: %s\n", g_rank, g_message);
        } else {
            fprintf(stderr, "hpcsim: error: %s\n", g_message);
        }
    }
    fflush(stdout);
    fflush(stderr);
    /* A runtime failure may leave other ranks inside a collective: abort them.  Input errors and
     * signals are seen by every rank alike, so a clean finalize is safe. */
    if (g_finalize) g_finalize(code == HS_ERR_RUNTIME && (g_size > 1 || g_abort_at_exit) ? code : 0);
    exit(code);
}
