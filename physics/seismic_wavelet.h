/* Seismic source wavelets (Ricker, Gaussian derivative): values, time derivative and integral, and their band limit. */
#ifndef HS_SEISMIC_WAVELET_H
#define HS_SEISMIC_WAVELET_H

/* In the order of seismic.wavelet's choices (hs_params_enum). */
enum { HS_WAVELET_RICKER = 0, HS_WAVELET_GAUSSIAN_DERIVATIVE = 1 };
#define HS_WAVELET_CHOICES "ricker|gaussian_derivative"

/* A source time function s(t) with peak frequency f0 (Hz: the maximum of its amplitude spectrum),
 * centred at t = delay (s), of peak magnitude `amplitude`:
 *   Ricker:               s = A (1 - 2 a tau^2) exp(-a tau^2),            a = pi^2 f0^2
 *   Gaussian derivative:  s = -A sqrt(2 a e) tau exp(-a tau^2),          a = 2 pi^2 f0^2
 * (tau = t - delay), the second and first time derivatives of a Gaussian, scaled to |s| <= A.
 * The wavelet is switched on at t = 0: s(t) = 0 for t < 0, as the solver injects it from step 0
 * on, so that references convolve the same function. */
typedef struct hs_wavelet {
    int kind;          /* HS_WAVELET_* */
    double f0;         /* peak frequency (Hz), > 0 */
    double delay;      /* centre time (s) */
    double amplitude;  /* peak magnitude */
} hs_wavelet;

/* s(t). */
double hs_wavelet_value(const hs_wavelet *w, double t);
/* ds/dt (t); 0 for t < 0. */
double hs_wavelet_derivative(const hs_wavelet *w, double t);
/* The integral of s from 0 (where it is switched on) to t, in closed form; 0 for t < 0. */
double hs_wavelet_integral(const hs_wavelet *w, double t);
/* The highest frequency of the wavelet: above it the amplitude spectrum stays below 1% of its peak
 * (Ricker 2.76 f0, Gaussian derivative 3.14 f0).  The solver's points-per-wavelength count uses it. */
double hs_wavelet_fmax(const hs_wavelet *w);
/* The default delay: 1.5 / f0 (the wavelet's value at t = 0 is below 1e-8 of its peak). */
double hs_wavelet_default_delay(double f0);

#endif
