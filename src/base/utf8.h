/* UTF-8 validation, one rule for every room that writes text: RFC 3629 (no overlong
 * forms, no UTF-16 surrogates, nothing past U+10FFFF). The runtime's log capture keeps an
 * inline copy of the same rule (src/runtime/logcap.h): it may not link this room. */
#ifndef VIGIL_BASE_UTF8_H
#define VIGIL_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the valid UTF-8 character at s within len bytes, its code point in *cp
 * (when cp is not NULL); 0 if there is none (len 0, invalid or cut short). */
size_t vgb_utf8_decode(const void *s, size_t len, uint32_t *cp);

static inline size_t vgb_utf8_len(const void *s, size_t len)
{
	return vgb_utf8_decode(s, len, NULL);
}

#endif
