/* Text inside SVG and other XML outputs, written one way: markup characters escaped,
 * control characters as spaces, bytes that are not UTF-8 as '?'. */
#ifndef VIGIL_COMMON_XML_TEXT_H
#define VIGIL_COMMON_XML_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes at most `max` characters of s (then an ellipsis) as XML text or attribute value. */
void vg_xml_text(FILE *f, const char *s, size_t max);

#endif
