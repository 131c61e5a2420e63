/* The libvigil an ABI 0 sensor was linked against, as far as the linker needs it: the
 * symbols of ABI 0's inline path, under libvigil's SONAME. Never loaded: abi0_subject's
 * run path finds today's libvigil.so.0 first, as an old program finds an upgraded one. */
#include "vigil.h"

__thread struct vg_thread vg__tls __attribute__((tls_model("initial-exec")));
struct vg_clock vg__clock;
_Atomic uint32_t vg__report_off;

uint64_t vg__clock_fallback(void)
{
	return 0;
}

uint8_t *vg__event_begin_slow(vg_sensor *s, uint32_t payload)
{
	(void)s;
	(void)payload;
	return NULL;
}

vg_sensor *vg_sensor_register(const vg_type_desc *desc)
{
	(void)desc;
	return NULL;
}
