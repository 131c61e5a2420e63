/* Registers vigil's analyses as derived relations. */
#include "derived/derived.h"

void vgd_register_all(void)
{
	vgq_derived_register(&vgd_net_provider);
	vgq_derived_register(&vgd_check_provider);
	vgq_derived_register(&vgd_steps_provider);
	vgq_derived_register(&vgd_model_provider);
}
