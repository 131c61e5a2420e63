/* The pattern file's reader (src/common/probe_file.c), compiled into libvigil for
 * VIGIL_PROBES_FILE (probes_file.c): one source for the subject and vigild; hidden like
 * the rest of the runtime (-fvisibility=hidden). */
#include "common/probe_file.c"
