/* The files a run has finished writing, collected for the driver's end-of-run summary line. */
#include "io/written.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *g_list;
static size_t g_len, g_cap;

void hs_io_written_reset(void)
{
    free(g_list);
    g_list = NULL;
    g_len = g_cap = 0;
}

void hs_io_written_add(const char *path, int64_t records)
{
    if (!path || !*path) return;
    char item[64];
    if (records >= 0) snprintf(item, sizeof item, " (%lld record%s)", (long long)records, records == 1 ? "" : "s");
    else item[0] = '\0';
    size_t need = g_len + strlen(path) + strlen(item) + 3;
    if (need > g_cap) {
        size_t cap = need * 2;
        char *p = realloc(g_list, cap);
        if (!p) return; /* the summary is a courtesy: losing an entry is not an error */
        g_list = p;
        g_cap = cap;
    }
    g_len += (size_t)snprintf(g_list + g_len, g_cap - g_len, "%s%s%s", g_len ? ", " : "", path, item);
}

const char *hs_io_written_list(void) { return g_list ? g_list : ""; }
