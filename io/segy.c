/* SEG-Y rev 1 writer (see io/segy.h for the layout): textual, binary and trace headers, big-endian IEEE floats. */
#include "io/segy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/written.h"
#include "kernels/error.h"
#include "kernels/version.h"

/* ASCII to EBCDIC (code page 037) for the printable characters 0x20..0x7e; anything else is a blank. */
static unsigned char ebcdic(unsigned char c)
{
    static const unsigned char tab[95] = {
        0x40, 0x5a, 0x7f, 0x7b, 0x5b, 0x6c, 0x50, 0x7d, 0x4d, 0x5d, 0x5c, 0x4e, 0x6b, 0x60, 0x4b, 0x61, /*  !"#$%&'()*+,-./ */
        0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0x7a, 0x5e, 0x4c, 0x7e, 0x6e, 0x6f, /* 0-9:;<=>? */
        0x7c, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, /* @A-O */
        0xd7, 0xd8, 0xd9, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xba, 0xe0, 0xbb, 0xb0, 0x6d, /* P-Z[\]^_ */
        0x79, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, /* `a-o */
        0x97, 0x98, 0x99, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xc0, 0x4f, 0xd0, 0xa1,       /* p-z{|}~ */
    };
    return c >= 0x20 && c <= 0x7e ? tab[c - 0x20] : 0x40;
}

static void put16(unsigned char *b, int byte, int v) /* byte: 1-based position as in the standard */
{
    unsigned u = (unsigned)(v & 0xffff);
    b[byte - 1] = (unsigned char)(u >> 8);
    b[byte] = (unsigned char)u;
}

static void put32(unsigned char *b, int byte, int64_t v)
{
    uint32_t u = (uint32_t)(int32_t)v;
    for (int i = 0; i < 4; i++) b[byte - 1 + i] = (unsigned char)(u >> (24 - 8 * i));
}

int hs_segy_interval_us(double dt)
{
    double us = dt * 1e6, r = floor(us + 0.5);
    if (!(r >= 1 && r <= 65535) || fabs(us - r) > 1e-6 * us) return -1;
    return (int)r;
}

/* The finest scale 10^k (k = 0..4) at which every |value| * 10^k fits in a 32-bit integer. */
static int coordinate_digits(const hs_segy_desc *d)
{
    double m = fmax(fabs(d->source[0]), fmax(fabs(d->source[1]), fabs(d->source[2])));
    for (int64_t r = 0; r < d->ntraces; r++)
        m = fmax(m, fmax(fabs(d->rx[r]), fmax(d->ry ? fabs(d->ry[r]) : 0, fabs(d->rz[r]))));
    int k = 4;
    while (k > 0 && m * pow(10, k) >= 2147483647.0) k--;
    return k;
}

/* One card's text, cut at the 76 columns that follow "Cnn ". */
static void card(char cards[40][77], int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void card(char cards[40][77], int *n, const char *fmt, ...)
{
    if (*n >= 39) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    buf[76] = '\0';
    memcpy(cards[(*n)++], buf, 77);
}

static void text_header(const hs_segy_desc *d, int us, unsigned char *out)
{
    char cards[40][77]; /* 80 columns less "Cnn " */
    int n = 0;
#define CARD(...) card(cards, &n, __VA_ARGS__)
    CARD("SEG-Y REV 1 WRITTEN BY HPCSIM %s (GIT %s)", hs_version(), hs_git_hash());
    CARD("SEISMOGRAMS OF ONE SHOT: %lld TRACES (ONE PER RECEIVER), %lld SAMPLES OF %d US", (long long)d->ntraces,
         (long long)d->nsamples, us);
    CARD("SAMPLE FORMAT 5: 4-BYTE IEEE FLOATING POINT, BIG-ENDIAN");
    CARD("SOURCE X Y Z (M): %.3f %.3f %.3f", d->source[0], d->source[1], d->source[2]);
    CARD("COORDINATES IN METRES; Z IS DEPTH BELOW THE SURFACE, POSITIVE DOWN");
    CARD("TRACE HEADER: SOURCE X/Y 73-80, GROUP X/Y 81-88, THEIR SCALAR 71-72");
    CARD("GROUP ELEVATION 41-44 = -DEPTH, SOURCE DEPTH 49-52, THEIR SCALAR 69-70");
    CARD("SCALARS: NEGATIVE = DIVISOR; OFFSET 37-40 IN WHOLE METRES");
    for (int i = 0; d->text && d->text[i]; i++) CARD("%s", d->text[i]);
#undef CARD
    while (n < 39) cards[n++][0] = '\0';
    snprintf(cards[39], sizeof cards[39], "END TEXTUAL HEADER");
    for (int c = 0; c < 40; c++) {
        char line[96];
        /* a card holds at most 76 characters, so "Cnn " and it fit the line whole */
        const int len = snprintf(line, sizeof line, "C%2d %s", c + 1, cards[c]);
        for (int i = 0; i < 80; i++) {
            unsigned char ch = i < len ? (unsigned char)line[i] : ' ';
            if (ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 'a' + 'A');
            out[c * 80 + i] = ebcdic(ch);
        }
    }
}

static void binary_header(const hs_segy_desc *d, int us, unsigned char *b)
{
    memset(b, 0, 400);
    /* positions are the standard's byte numbers minus 3200 */
    put32(b, 1, 1);                       /* 3201 job identification number */
    put32(b, 5, 1);                       /* 3205 line number */
    put32(b, 9, 1);                       /* 3209 reel number */
    put16(b, 13, (int)d->ntraces);        /* 3213 data traces per ensemble */
    put16(b, 17, us);                     /* 3217 sample interval (us) */
    put16(b, 19, us);                     /* 3219 original sample interval */
    put16(b, 21, (int)d->nsamples);       /* 3221 samples per data trace */
    put16(b, 23, (int)d->nsamples);       /* 3223 original samples per trace */
    put16(b, 25, 5);                      /* 3225 format: IEEE float */
    put16(b, 27, 1);                      /* 3227 ensemble fold */
    put16(b, 29, 1);                      /* 3229 sorting: as recorded */
    put16(b, 55, 1);                      /* 3255 measurement system: metres */
    put16(b, 301, 0x0100);                /* 3501 SEG-Y revision 1.0 */
    put16(b, 303, 1);                     /* 3503 fixed-length traces */
    put16(b, 305, 0);                     /* 3505 extended textual headers */
}

static void trace_header(const hs_segy_desc *d, int64_t r, int us, int digits, unsigned char *h)
{
    memset(h, 0, 240);
    double s = pow(10, digits);
    double rx = d->rx[r], ry = d->ry ? d->ry[r] : 0, rz = d->rz[r];
    /* the offset of seismic processing: horizontal, and on a 2D line signed (receiver x - source x,
     * negative behind the source); the depths have fields of their own */
    double off = d->ry ? sqrt((rx - d->source[0]) * (rx - d->source[0]) + (ry - d->source[1]) * (ry - d->source[1]))
                       : rx - d->source[0];
    put32(h, 1, r + 1);                                   /* trace sequence number within line */
    put32(h, 5, r + 1);                                   /* within file */
    put32(h, 9, d->shot);                                 /* original field record number */
    put32(h, 13, r + 1);                                  /* trace number within the field record */
    put32(h, 17, d->shot);                                /* energy source point number */
    put32(h, 21, r + 1);                                  /* ensemble (CDP) number */
    put32(h, 25, 1);                                      /* trace number within the ensemble */
    put16(h, 29, 1);                                      /* trace identification: seismic data */
    put16(h, 35, 1);                                      /* data use: production */
    put32(h, 37, (int64_t)llround(off));                  /* source-receiver offset (m) */
    put32(h, 41, (int64_t)llround(-rz * s));              /* receiver group elevation */
    put32(h, 49, (int64_t)llround(d->source[2] * s));     /* source depth below surface */
    put16(h, 69, digits ? -(int)llround(s) : 1);          /* scalar for elevations and depths */
    put16(h, 71, digits ? -(int)llround(s) : 1);          /* scalar for coordinates */
    put32(h, 73, (int64_t)llround(d->source[0] * s));     /* source x */
    put32(h, 77, (int64_t)llround(d->source[1] * s));     /* source y */
    put32(h, 81, (int64_t)llround(rx * s));               /* group x */
    put32(h, 85, (int64_t)llround(ry * s));               /* group y */
    put16(h, 89, 1);                                      /* coordinate units: length */
    put16(h, 115, (int)d->nsamples);                      /* samples in this trace */
    put16(h, 117, us);                                    /* sample interval (us) */
    put32(h, 181, (int64_t)llround(0.5 * (d->source[0] + rx) * s)); /* CDP x: the midpoint */
    put32(h, 185, (int64_t)llround(0.5 * (d->source[1] + ry) * s)); /* CDP y */
}

int hs_segy_write(const hs_segy_desc *d, const double *data)
{
    int us = hs_segy_interval_us(d->dt);
    if (us < 0)
        return HS_FAIL(HS_ERR_RUNTIME, "SEG-Y %s: sample interval %g s is not a whole number of microseconds in 1..65535",
                       d->path, d->dt);
    if (d->ntraces < 1 || d->ntraces > 65535 || d->nsamples < 1 || d->nsamples > 65535)
        return HS_FAIL(HS_ERR_RUNTIME, "SEG-Y %s: %lld traces of %lld samples (each must be in 1..65535)", d->path,
                       (long long)d->ntraces, (long long)d->nsamples);
    hs_io_whole file;
    HS_CHECK(hs_io_whole_open(&file, "SEG-Y", d->path, "wb"));
    FILE *f = file.f;
    unsigned char text[3200], bin[400], th[240];
    text_header(d, us, text);
    binary_header(d, us, bin);
    int digits = coordinate_digits(d);
    unsigned char *samples = malloc((size_t)d->nsamples * 4);
    int ok = samples && fwrite(text, 1, 3200, f) == 3200 && fwrite(bin, 1, 400, f) == 400;
    for (int64_t r = 0; ok && r < d->ntraces; r++) {
        trace_header(d, r, us, digits, th);
        for (int64_t t = 0; t < d->nsamples; t++) {
            float v = (float)data[t * d->ntraces + r];
            uint32_t u;
            memcpy(&u, &v, 4);
            for (int i = 0; i < 4; i++) samples[4 * t + i] = (unsigned char)(u >> (24 - 8 * i));
        }
        ok = fwrite(th, 1, 240, f) == 240 && fwrite(samples, 4, (size_t)d->nsamples, f) == (size_t)d->nsamples;
    }
    free(samples);
    HS_CHECK(hs_io_whole_commit(&file, ok));
    hs_io_written_add(d->path, -1);
    return HS_OK;
}
