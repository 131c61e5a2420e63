/* Colours of the display: names, "#rrggbb", the default palette, mixing. Private. */
#ifndef VIGIL_DISPLAY_COLOUR_H
#define VIGIL_DISPLAY_COLOUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "red", "steelblue", "#f80", "#ff8800" (case-insensitive) into 0xRRGGBB. */
bool vgd_colour_parse(const char *text, uint32_t *rgb);
/* The i-th colour of a categorical palette (Tableau 10, then repeated). */
uint32_t vgd_palette(size_t i);
/* a + (b - a) * t per channel, t in [0, 1]. */
uint32_t vgd_colour_mix(uint32_t a, uint32_t b, double t);

#endif
