/* An SVG plot of an empirical CDF: a step line over time, with a log-scaled time axis
 * when the samples span two decades or more. Self-contained (no scripts, no fonts but
 * the generic sans-serif). */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "model/cdf.h"

enum { W = 760, H = 460, ML = 70, MR = 30, MT = 50, MB = 70 };

struct axis {
	double lo, hi;
	bool log;
};

static double xpos(const struct axis *a, double v)
{
	double f;
	if (a->log)
		f = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	else
		f = (v - a->lo) / (a->hi - a->lo);
	return ML + f * (W - ML - MR);
}

static double ypos(double f)
{
	return H - MB - f * (H - MT - MB);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if ((unsigned char)*s >= 0x20)
			putc(*s, f);
	}
}

static void tick(FILE *f, const struct axis *a, double v)
{
	char label[32];
	double x = xpos(a, v);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, MT,
	        x, H - MB);
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
	        x, H - MB + 18, vgm_format_ns(v, label, sizeof label));
}

int vgm_cdf_svg(FILE *f, const double *s, size_t n, const char *title, const char *xlabel)
{
	if (!n)
		return -1;
	struct axis a = {s[0], s[n - 1], false};
	if (a.lo > 0 && a.hi / a.lo >= 100) {
		a.log = true;
		a.lo = pow(10, floor(log10(a.lo)));
		a.hi = pow(10, ceil(log10(a.hi)));
	} else {
		/* nice linear ticks */
		double span = a.hi - a.lo;
		if (span <= 0)
			span = a.hi > 0 ? a.hi * 0.1 : 1;
		double step = pow(10, floor(log10(span / 5)));
		if (span / step > 10)
			step *= 2;
		if (span / step > 10)
			step *= 2.5;
		a.lo = floor(a.lo / step) * step;
		a.hi = ceil(a.hi / step) * step;
		if (a.hi <= a.lo)
			a.hi = a.lo + step;
	}
	fprintf(f,
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
	        W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">", W / 2);
	xml_text(f, title);
	fputs("</text>\n", f);
	/* y grid and labels */
	for (int i = 0; i <= 4; i++) {
		double y = ypos(i / 4.0);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
		        ML, y, W - MR, y);
		fprintf(
		    f,
		    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">%.2f</text>\n",
		    ML - 6, y + 4, i / 4.0);
	}
	/* x ticks */
	if (a.log) {
		for (double v = a.lo; v <= a.hi * 1.0001; v *= 10)
			tick(f, &a, v);
	} else {
		double step = (a.hi - a.lo) / 5;
		for (int i = 0; i <= 5; i++)
			tick(f, &a, a.lo + i * step);
	}
	fprintf(f,
	        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
	        "stroke=\"black\"/>\n",
	        ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">", W / 2,
	        H - 22);
	xml_text(f, xlabel);
	if (a.log)
		fputs(" (log scale)", f);
	fputs("</text>\n", f);
	fprintf(f,
	        "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\" "
	        "transform=\"rotate(-90 18 %d)\">fraction of walks</text>\n",
	        (MT + H - MB) / 2, (MT + H - MB) / 2);
	/* the step line, at most about 2000 points */
	fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"", f);
	size_t stride = n > 2000 ? n / 2000 : 1;
	double prev_y = ypos(0);
	for (size_t i = 0; i < n; i += stride) {
		double x = xpos(&a, s[i]);
		double y = ypos((double)(i + 1) / (double)n);
		fprintf(f, "%.1f,%.1f %.1f,%.1f ", x, prev_y, x, y);
		prev_y = y;
	}
	double xe = xpos(&a, s[n - 1]);
	fprintf(f, "%.1f,%.1f %.1f,%.1f\"/>\n", xe, prev_y, xe, ypos(1));
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
