/* Registers vigil's analyses as derived relations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived/derived.h"

void vgd_register_all(void)
{
	/* VIGIL_DERIVED=off: none registered, so that `make bench` can time a query naming no
	 * derived relation with and without the lazy path in one build (bench/derived_bench.py) */
	const char *env = getenv("VIGIL_DERIVED");
	if (env && !strcmp(env, "off"))
		return;
	if (env && *env && strcmp(env, "on"))
		fprintf(stderr, "vigil: VIGIL_DERIVED='%s' is not on or off: on\n", env);
	vgq_derived_register(&vgd_net_provider);
	vgq_derived_register(&vgd_check_provider);
	vgq_derived_register(&vgd_steps_provider);
	vgq_derived_register(&vgd_model_provider);
}
