/* vigil_derived: the providers of vigil's derived relations (docs/tquel.md "Derived
 * relations"), registered with the relations layer (relations/derived.h). */
#ifndef VIGIL_DERIVED_DERIVED_H
#define VIGIL_DERIVED_DERIVED_H

#include "relations/derived.h"

/* Registers every provider: call once before binding queries (idempotent). */
void vgd_register_all(void);

extern const struct vgq_derived_provider vgd_net_provider;   /* net.c */
extern const struct vgq_derived_provider vgd_check_provider; /* check.c */
extern const struct vgq_derived_provider vgd_steps_provider; /* model.c: LogEvent... */
extern const struct vgq_derived_provider vgd_model_provider; /* model.c: ModelEvent... */

#endif
