/* Test helper, preloaded (LD_PRELOAD): the peak of the bytes a process holds from malloc, calloc,
 * realloc and the aligned allocators (usable sizes), written at exit to $HS_MALLOC_PEAK.PID, so that
 * tests/cli/test_memory_estimates.sh measures what a run allocates independently of the program's
 * own figures (resident memory also holds what the C library keeps of freed blocks). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t), *(*real_calloc)(size_t, size_t), *(*real_realloc)(void *, size_t);
static void *(*real_aligned_alloc)(size_t, size_t), *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void (*real_free)(void *);
static _Atomic long long live, peak;

/* dlsym may allocate before the real allocators are known: from a static arena, never freed */
static _Alignas(64) char arena[1 << 16];
static _Atomic size_t arena_used;
static _Atomic int resolving;

static void *from_arena(size_t n)
{
    size_t at = atomic_fetch_add(&arena_used, (n + 63) & ~(size_t)63);
    return at + n <= sizeof arena ? arena + at : NULL;
}
static int in_arena(const void *p) { return (const char *)p >= arena && (const char *)p < arena + sizeof arena; }

static void resolve(void)
{
    if (real_free || atomic_exchange(&resolving, 1)) return;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_free = dlsym(RTLD_NEXT, "free");
}

static void held(void *p)
{
    if (!p || in_arena(p)) return;
    long long n = (long long)malloc_usable_size(p), now = atomic_fetch_add(&live, n) + n, top = atomic_load(&peak);
    while (now > top && !atomic_compare_exchange_weak(&peak, &top, now)) {}
}

static void released(void *p)
{
    if (p && !in_arena(p)) atomic_fetch_sub(&live, (long long)malloc_usable_size(p));
}

void *malloc(size_t n)
{
    resolve();
    if (!real_malloc) return from_arena(n);
    void *p = real_malloc(n);
    held(p);
    return p;
}

void *calloc(size_t a, size_t b)
{
    resolve();
    if (!real_calloc) return from_arena(a * b); /* static: zero already */
    void *p = real_calloc(a, b);
    held(p);
    return p;
}

void *realloc(void *q, size_t n)
{
    resolve();
    if (in_arena(q)) {
        void *p = malloc(n);
        if (p) memcpy(p, q, n < (size_t)(arena + sizeof arena - (char *)q) ? n : (size_t)(arena + sizeof arena - (char *)q));
        return p;
    }
    released(q);
    void *p = real_realloc(q, n);
    held(p ? p : (n ? q : NULL)); /* a failed realloc keeps q */
    return p;
}

void free(void *p)
{
    if (!p || in_arena(p)) return;
    resolve();
    released(p);
    real_free(p);
}

void *aligned_alloc(size_t a, size_t n)
{
    resolve();
    void *p = real_aligned_alloc(a, n);
    held(p);
    return p;
}

void *memalign(size_t a, size_t n)
{
    resolve();
    void *p = real_memalign(a, n);
    held(p);
    return p;
}

int posix_memalign(void **out, size_t a, size_t n)
{
    resolve();
    int rc = real_posix_memalign(out, a, n);
    if (rc == 0) held(*out);
    return rc;
}

__attribute__((destructor)) static void report(void)
{
    const char *stem = getenv("HS_MALLOC_PEAK");
    if (!stem) return;
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", stem, (int)getpid());
    FILE *f = fopen(name, "w");
    if (!f) return;
    fprintf(f, "%lld\n", (long long)atomic_load(&peak));
    fclose(f);
}
