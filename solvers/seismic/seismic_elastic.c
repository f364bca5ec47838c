/* The seismic solver's elastic model: velocity-stress staggered grid (Virieux 1986, Levander 1988) with CPML and stress-imaging free surface. */
#include "kernels/error.h"
#include "solvers/seismic/seismic_state.h"

int hs_seis_elastic_build(hs_seis *s) { (void)s; return HS_FAIL(HS_ERR_RUNTIME, "seismic: the elastic model is not built yet"); }
int hs_seis_elastic_sources(hs_seis *s) { (void)s; return HS_FAIL(HS_ERR_RUNTIME, "seismic: the elastic model is not built yet"); }
int hs_seis_elastic_step(hs_seis *s) { (void)s; return HS_FAIL(HS_ERR_RUNTIME, "seismic: the elastic model is not built yet"); }
int hs_seis_elastic_image(hs_seis *s) { (void)s; return HS_OK; }
