/* The scene as a standalone SVG document (vigil display render -o FILE.svg): the same
 * drawing as ui/src/display/render.js makes from the scene's JSON. Flashing icons blink by
 * SMIL animation, so a browser shows them blinking from the file alone. */
#include <math.h>
#include <string.h>

#include "display/scene.h"

static void text_escaped(FILE *out, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, out);
		}
}

/* Where the label of an icon goes: (x, y) of its baseline and the text anchor. Mirrors
 * labelPlace() of render.js. */
static void label_place(const struct vgd_icon *ic, double *x, double *y, const char **anchor)
{
	double w = ic->w * ic->scale / 2, h = ic->h * ic->scale / 2;
	*x = ic->x;
	*y = ic->y + 4;
	*anchor = "middle";
	switch (ic->label_at) {
	case VGD_TOP:
		*y = ic->y - h - 4;
		break;
	case VGD_BOTTOM:
		*y = ic->y + h + 13;
		break;
	case VGD_LEFT:
		*x = ic->x - w - 4;
		*anchor = "end";
		break;
	case VGD_RIGHT:
		*x = ic->x + w + 4;
		*anchor = "start";
		break;
	case VGD_TOP_LEFT:
	case VGD_TOP_RIGHT:
	case VGD_BOTTOM_LEFT:
	case VGD_BOTTOM_RIGHT: {
		bool left = ic->label_at == VGD_TOP_LEFT || ic->label_at == VGD_BOTTOM_LEFT;
		bool top = ic->label_at == VGD_TOP_LEFT || ic->label_at == VGD_TOP_RIGHT;
		*x = left ? ic->x - w + 4 : ic->x + w - 4;
		*y = top ? ic->y - h + 13 : ic->y + h - 4;
		*anchor = left ? "start" : "end";
		break;
	}
	default:
		break;
	}
}

static void shape(FILE *out, const struct vgd_icon *ic, enum vgd_shape s, unsigned sides,
                  const char *fill, const char *stroke)
{
	double w = ic->w / 2, h = ic->h / 2;
	switch (s) {
	case VGD_POINT:
		fprintf(out, "<circle r=\"3\" fill=\"%s\"/>", stroke);
		break;
	case VGD_CIRCLE:
	case VGD_OVAL:
		fprintf(out, "<ellipse rx=\"%.2f\" ry=\"%.2f\" fill=\"%s\" stroke=\"%s\"/>", w, h,
		        fill, stroke);
		break;
	case VGD_RECTANGLE:
		fprintf(out,
		        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" rx=\"4\" "
		        "fill=\"%s\" stroke=\"%s\"/>",
		        -w, -h, 2 * w, 2 * h, fill, stroke);
		break;
	case VGD_POLYGON:
		fputs("<polygon points=\"", out);
		for (unsigned i = 0; i < sides; i++) {
			double a = -M_PI / 2 + 2 * M_PI * i / sides;
			fprintf(out, "%s%.2f,%.2f", i ? " " : "", w * cos(a), h * sin(a));
		}
		fprintf(out, "\" fill=\"%s\" stroke=\"%s\"/>", fill, stroke);
		break;
	case VGD_LINE:
		fprintf(out,
		        "<line x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"0\" stroke=\"%s\" "
		        "stroke-width=\"2\"/>",
		        -w, w, stroke);
		break;
	case VGD_POINTER:
		fprintf(
		    out,
		    "<line x1=\"%.2f\" y1=\"0\" x2=\"%.2f\" y2=\"0\" stroke=\"%s\" "
		    "stroke-width=\"2\"/><polygon points=\"%.2f,0 %.2f,-5 %.2f,5\" fill=\"%s\"/>",
		    -w, w - 8, stroke, w, w - 9, w - 9, stroke);
		break;
	case VGD_CURVE:
		fprintf(out,
		        "<path d=\"M %.2f 0 Q 0 %.2f %.2f 0\" fill=\"none\" stroke=\"%s\" "
		        "stroke-width=\"2\"/>",
		        -w, -2 * h, w, stroke);
		break;
	case VGD_TEXT:
		break;
	}
}

static void icon(FILE *out, const struct vgd_scene *sc, const struct vgd_icon *ic)
{
	char id[256], parent[256] = "", fill[8], stroke[8];
	vgd_icon_id(ic, id, sizeof id);
	if (ic->parent >= 0)
		vgd_icon_id(&sc->icons[ic->parent], parent, sizeof parent);
	snprintf(fill, sizeof fill, "#%06x", vgd_icon_fill(ic) & 0xffffff);
	snprintf(stroke, sizeof stroke, "#%06x", ic->colour & 0xffffff);
	fputs("<g class=\"icon", out);
	if (ic->flash)
		fputs(" flash", out);
	if (ic->past)
		fputs(" past", out);
	fputs("\" data-id=\"", out);
	text_escaped(out, id);
	fprintf(out, "\" data-relation=\"");
	text_escaped(out, ic->show->r->name);
	fputs("\" data-parent=\"", out);
	text_escaped(out, parent);
	fprintf(out, "\" opacity=\"%.2f\">", ic->opacity);
	if (ic->flash)
		fputs("<animate attributeName=\"opacity\" values=\"1;0.15;1\" dur=\"0.8s\" "
		      "repeatCount=\"indefinite\"/>",
		      out);
	fprintf(out, "<g transform=\"translate(%.2f %.2f) rotate(%.2f) scale(%.3f)\">", ic->x,
	        ic->y, ic->rotation, ic->scale);
	if (ic->bar || ic->mark)
		shape(out, ic, ic->bar ? VGD_RECTANGLE : VGD_POINT, 0, fill, stroke);
	else
		for (size_t i = 0; i < ic->show->nshapes; i++)
			shape(out, ic, ic->show->shapes[i], ic->show->sides[i], fill, stroke);
	fputs("</g>", out);
	if (ic->label[0]) {
		double x, y;
		const char *anchor;
		label_place(ic, &x, &y, &anchor);
		bool dark = ic->label_at == VGD_CENTER && ic->intensity > 0.6;
		fprintf(out,
		        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" fill=\"%s\" "
		        "font-size=\"12\">",
		        x, y, anchor, dark ? "#ffffff" : "#000000");
		text_escaped(out, ic->label);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

static void link_svg(FILE *out, const struct vgd_scene *sc, const struct vgd_link *l)
{
	char a[256], b[256];
	vgd_icon_id(&sc->icons[l->from], a, sizeof a);
	vgd_icon_id(&sc->icons[l->to], b, sizeof b);
	fputs("<g class=\"link", out);
	if (l->past)
		fputs(" past", out);
	fputs("\" data-relation=\"", out);
	text_escaped(out, l->show->r->name);
	fputs("\" data-from=\"", out);
	text_escaped(out, a);
	fputs("\" data-to=\"", out);
	text_escaped(out, b);
	fprintf(out, "\" opacity=\"%.2f\">", l->opacity);
	double dx = l->x2 - l->x1, dy = l->y2 - l->y1, len = hypot(dx, dy);
	double ux = len > 0 ? dx / len : 1, uy = len > 0 ? dy / len : 0;
	double mx = (l->x1 + l->x2) / 2, my = (l->y1 + l->y2) / 2;
	if (l->show->link == VGD_CURVE) { /* bowed to the left of its direction */
		mx += uy * len * 0.2;
		my -= ux * len * 0.2;
		fprintf(out, "<path d=\"M %.2f %.2f Q %.2f %.2f %.2f %.2f\" fill=\"none\" ", l->x1,
		        l->y1, mx, my, l->x2, l->y2);
	} else {
		fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" ", l->x1, l->y1,
		        l->x2, l->y2);
	}
	fprintf(out, "stroke=\"#%06x\" stroke-width=\"%.2f\"/>", l->colour & 0xffffff, l->width);
	if (l->show->link != VGD_LINE) {
		/* the head, along the last direction of the stroke */
		double hx = l->x2 - (l->show->link == VGD_CURVE ? mx : l->x1);
		double hy = l->y2 - (l->show->link == VGD_CURVE ? my : l->y1);
		double hl = hypot(hx, hy);
		hx = hl > 0 ? hx / hl : 1;
		hy = hl > 0 ? hy / hl : 0;
		double size = 8 + 2 * l->width;
		fprintf(out, "<polygon points=\"%.2f,%.2f %.2f,%.2f %.2f,%.2f\" fill=\"#%06x\"/>",
		        l->x2, l->y2, l->x2 - hx * size - hy * size / 2,
		        l->y2 - hy * size + hx * size / 2, l->x2 - hx * size + hy * size / 2,
		        l->y2 - hy * size - hx * size / 2, l->colour & 0xffffff);
	}
	if (l->label[0]) {
		/* the middle of the stroke: of a quadratic curve, (P0 + 2C + P2) / 4 */
		double lx = l->show->link == VGD_CURVE ? (l->x1 + 2 * mx + l->x2) / 4 : mx;
		double ly = l->show->link == VGD_CURVE ? (l->y1 + 2 * my + l->y2) / 4 : my;
		fprintf(out, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"11\">",
		        lx, ly - 4);
		text_escaped(out, l->label);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

int vgd_scene_svg(const struct vgd_display *d, int64_t at, FILE *out)
{
	at = vgd_clamp_at(d, at);
	struct vgd_scene *sc = vgd_scene_build(d, at);
	double W = d->f->width, H = d->f->height;
	fprintf(out,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
	        W, H, W, H);
	if (d->f->time == VGD_T_AXIS) { /* the ruler; mirrors drawAxis() of render.js */
		fprintf(out,
		        "<g class=\"axis\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
		        "stroke=\"#000000\"/>",
		        sc->x0, sc->ruler_y, sc->x1, sc->ruler_y);
		for (int k = 0; k <= 4; k++) {
			int64_t t = sc->t0 + (sc->at - sc->t0) * k / 4;
			double x = vgd_axis_x(sc, t);
			char text[64];
			vgd_clock_text(t - d->first, text, sizeof text);
			fprintf(out,
			        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
			        "stroke=\"#000000\"/><text x=\"%.2f\" y=\"%.2f\" "
			        "text-anchor=\"middle\" font-size=\"11\">%s</text>",
			        x, sc->ruler_y, x, sc->ruler_y + 5, x, sc->ruler_y + 17, text);
		}
		fputs("</g>\n", out);
	}
	for (size_t i = 0; i < sc->nicons; i++)
		icon(out, sc, &sc->icons[i]);
	for (size_t i = 0; i < sc->nlinks; i++)
		link_svg(out, sc, &sc->links[i]);
	if (d->f->clock) {
		char text[64];
		vgd_clock_text(at - d->first, text, sizeof text);
		int p = d->f->clock_at;
		const char *anchor =
		    p == VGD_LEFT || p == VGD_TOP_LEFT || p == VGD_BOTTOM_LEFT      ? "start"
		    : p == VGD_RIGHT || p == VGD_TOP_RIGHT || p == VGD_BOTTOM_RIGHT ? "end"
		                                                                    : "middle";
		fprintf(out,
		        "<text class=\"clock\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" "
		        "dominant-baseline=\"middle\" font-family=\"monospace\" "
		        "font-size=\"16\">%s</text>\n",
		        sc->clock_x, sc->clock_y, anchor, text);
	}
	fputs("</svg>\n", out);
	vgd_scene_free(sc);
	return ferror(out) ? -1 : 0;
}
