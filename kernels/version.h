/* Version, git hash and build features of this build (for --version, info and file metadata). */
#ifndef HS_VERSION_H
#define HS_VERSION_H

const char *hs_version(void);
const char *hs_git_hash(void);
const char *hs_features(void);
/* "hpcsim VERSION (git HASH)", the `source` attribute of output files. */
const char *hs_source_attribute(void);

#endif
