/* The seismic solver's adjoint: the gradient of the seismogram misfit w.r.t. vp with checkpointing, and L-BFGS full-waveform inversion. */
#include "kernels/error.h"
#include "solvers/seismic/seismic_state.h"

double hs_seis_adjoint_memory(const hs_seis *s) { (void)s; return 0; }
int hs_seis_adjoint_check(hs_seis *s, const hs_params *p) { (void)s; return hs_params_error(p, "seismic.mode", "not built yet"); }
int hs_seis_adjoint_create(hs_seis *s, const hs_params *p) { (void)s; (void)p; return HS_OK; }
int hs_seis_adjoint_run(hs_seis *s) { (void)s; return HS_OK; }
int hs_seis_adjoint_define_vars(hs_seis *s, hs_writer *w) { (void)s; (void)w; return HS_OK; }
int hs_seis_adjoint_write(hs_seis *s, hs_writer *w) { (void)s; (void)w; return HS_OK; }
int hs_seis_adjoint_finish(hs_seis *s) { (void)s; return HS_OK; }
void hs_seis_adjoint_destroy(hs_seis *s) { (void)s; }
