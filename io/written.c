/* The files a run writes: whole or not at all, and the list of those finished for the summary line. */
#include "io/written.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "kernels/error.h"

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

int hs_io_whole_open(hs_io_whole *w, const char *what, const char *path, const char *mode)
{
    w->f = NULL, w->path = path, w->what = what;
    size_t len = strlen(path) + sizeof ".partial";
    if (!(w->partial = malloc(len))) return HS_FAIL(HS_ERR_RUNTIME, "%s: out of host memory for %s", what, path);
    snprintf(w->partial, len, "%s.partial", path);
    w->f = fopen(w->partial, mode);
    if (w->f) return HS_OK;
    int rc = HS_FAIL(HS_ERR_RUNTIME, "%s: cannot create %s: %s", what, w->partial, strerror(errno));
    free(w->partial);
    w->partial = NULL;
    return rc;
}

int hs_io_whole_commit(hs_io_whole *w, int ok)
{
    if (!w->f) return HS_FAIL(HS_ERR_RUNTIME, "%s: %s was not opened", w->what, w->path);
    int err = ok && !ferror(w->f) ? 0 : errno ? errno : EIO;
    if (fclose(w->f) != 0 && !err) err = errno ? errno : EIO;
    w->f = NULL;
    if (!err && rename(w->partial, w->path) != 0) err = errno;
    if (err) remove(w->partial);
    free(w->partial);
    w->partial = NULL;
    return err ? HS_FAIL(HS_ERR_RUNTIME, "%s: writing %s failed: %s", w->what, w->path, strerror(err)) : HS_OK;
}

void hs_io_whole_discard(hs_io_whole *w)
{
    if (!w->f) return;
    fclose(w->f);
    w->f = NULL;
    remove(w->partial);
    free(w->partial);
    w->partial = NULL;
}

void hs_io_fs_note(const char *path, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = '\0';
    if (!path || !*path) return;
    /* the folder, not the file: a failed create leaves no file to ask about */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0) return;
    if (fs.f_flag & ST_RDONLY) {
        snprintf(buf, len, " (the file system holding %s is mounted read-only)", path);
        return;
    }
    const double blocks = geteuid() == 0 ? (double)fs.f_bfree : (double)fs.f_bavail;
    const double free_bytes = blocks * (double)(fs.f_frsize ? fs.f_frsize : fs.f_bsize);
    if (free_bytes >= 16.0 * 1024 * 1024) return;
    if (free_bytes < 1024) snprintf(buf, len, " (the file system holding %s has only %.0f bytes free: is it full?)", path, free_bytes);
    else snprintf(buf, len, " (the file system holding %s has only %.0f kB free: is it full?)", path, free_bytes / 1024);
}
