/* Temporal constants of TQuel: "now", "beginning", "forever" and dates, written as
 * strings in valid and when clauses. A date is UTC unless it carries an offset:
 *   2026-11-27   2026-11-27 03:20   2026-11-27T03:20:05.25Z   2026-11-27 04:20:05+01:00
 * and becomes nanoseconds since the Unix epoch, the clock of vigil's traces. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tquel/parser.h"

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at *p into *v; false when fewer are there. */
static bool digits(const char **p, int n, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return false;
		*v = *v * 10 + (unsigned)(**p - '0');
	}
	return true;
}

static bool is_leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool parse_date(const char *s, int64_t *ns)
{
	static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = s;
	unsigned y, mo, d, h = 0, mi = 0, sec = 0;
	uint64_t frac = 0;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y)))
		return false;
	if (*p == ' ' || *p == 'T') {
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || h > 23 || mi > 59)
			return false;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &sec) || sec > 59)
				return false;
			if (*p == '.') {
				p++;
				int n = 0;
				for (; isdigit((unsigned char)*p); p++, n++)
					if (n < 9)
						frac = frac * 10 + (uint64_t)(*p - '0');
				if (n == 0)
					return false;
				for (; n < 9; n++)
					frac *= 10;
			}
		}
	}
	int64_t offset = 0; /* seconds east of UTC */
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;
		unsigned oh, om;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
			return false;
		offset = sign * (int64_t)(oh * 3600 + om * 60);
	}
	if (*p)
		return false;
	/* years 1678 to 2261 fit in signed 64-bit nanoseconds */
	if (y < 1678 || y > 2261)
		return false;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
	*ns = secs * 1000000000 + (int64_t)frac;
	return true;
}

bool tquel_time_constant(const char *s, enum tquel_tconst *which, int64_t *ns, char *why,
                         size_t whysize)
{
	static const char *const names[] = {
	    [TQ_NOW] = "now", [TQ_BEGINNING] = "beginning", [TQ_FOREVER] = "forever"};
	for (int k = TQ_NOW; k <= TQ_FOREVER; k++)
		if (!strcasecmp(s, names[k])) {
			*which = (enum tquel_tconst)k;
			*ns = 0;
			return true;
		}
	*which = TQ_DATE;
	if (parse_date(s, ns))
		return true;
	snprintf(why, whysize,
	         "a temporal constant is \"now\", \"beginning\", \"forever\" or a date and time "
	         "like \"2026-11-27 03:20:05.25\" (UTC, or with Z or +01:00), not \"%.40s\"",
	         s);
	return false;
}
