/* Version, git hash and build features of this build, in one object so that commits rebuild only it. */
#include "kernels/version.h"

#include "kernels/config.h"

const char *hs_version(void) { return HS_VERSION; }
const char *hs_git_hash(void) { return HS_GIT_HASH; }
const char *hs_features(void) { return HS_FEATURES; }
const char *hs_source_attribute(void) { return "hpcsim " HS_VERSION " (git " HS_GIT_HASH ")"; }
