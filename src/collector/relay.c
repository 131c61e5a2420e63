/* Probes through the collector (docs/protocol.md "Probes"): vigild keeps an ordered list
 * of patterns and, per subject, the table of its sensors (read with `list`, grown by NOTE
 * `registered`). A pattern from `vigil probes --collector` is evaluated once against
 * those tables and only the sensors whose state changes are pushed, by id (`probe ID
 * on|off`); C subjects also get the pattern itself, for sensors they register later.
 *
 * Replies come back in the order the CONTROL lines went out: each subject has a queue of
 * what it owes, so a `list` page is told from a `probe` answer. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "wire/probe_file.h"
#include "wire/probe_pattern.h"

enum owed { OWED_NOTHING, OWED_LIST };

struct entry {
	uint32_t id;
	char *name;
	int on; /* 1, 0; -1 unknown (announced by NOTE, not listed yet) */
};

struct vgd_probes {
	struct entry *v;
	size_t n, cap;
	uint8_t *owed; /* ring of what the subject's next replies answer */
	size_t head, len, cap_owed;
	int asked; /* its table was asked for: vigild only asks once probes are used */
};

struct pattern {
	int enable;
	struct vgw_probe_pattern p;
};
static struct pattern *pats;
static size_t npats;

/* `list` peers waiting for tables still being read (the first `vigil probes` after a
 * subject connects asks for its table: answering at once would show none), each until
 * its deadline; answered in vgd_relay_reply once no table is pending, or at the
 * deadline with what is known. */
#define LIST_WAIT_NS 2000000000ull
struct waiter {
	struct vgd_conn *peer;
	uint64_t until;
};
static struct waiter *waiters;
static size_t nwaiters;
static void list_all(struct vgd_conn *peer);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The state the patterns give a name (the last matching one wins), or -1: none. */
static int decided(const char *name)
{
	for (size_t i = npats; i-- > 0;)
		if (vgw_probe_pattern_match(&pats[i].p, name))
			return pats[i].enable;
	return -1;
}

static struct vgd_probes *probes_of(struct vgd_conn *c)
{
	if (!c->probes)
		c->probes = calloc(1, sizeof *c->probes);
	return c->probes;
}

static void send_control(struct vgd_conn *c, const char *line, enum owed what)
{
	struct vgd_probes *p = probes_of(c);
	if (!p)
		return;
	if (p->len == p->cap_owed) {
		size_t cap = p->cap_owed ? 2 * p->cap_owed : 16;
		uint8_t *o = malloc(cap);
		if (!o)
			return;
		for (size_t i = 0; i < p->len; i++)
			o[i] = p->owed[(p->head + i) % p->cap_owed];
		free(p->owed);
		p->owed = o;
		p->head = 0;
		p->cap_owed = cap;
	}
	p->owed[(p->head + p->len++) % p->cap_owed] = (uint8_t)what;
	vgw_put_line(&c->out, VGW_CONTROL, line);
}

static struct entry *entry_of(struct vgd_probes *p, uint32_t id, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].id == id)
			return &p->v[i];
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct entry *v = realloc(p->v, cap * sizeof *v);
		if (!v)
			return NULL;
		p->v = v;
		p->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return NULL;
	p->v[p->n] = (struct entry){id, copy, -1};
	return &p->v[p->n++];
}

/* Pushes the state `want` to one sensor if it differs; 1 if it was switched. */
static int push(struct vgd_conn *c, struct entry *e, int want)
{
	if (want < 0 || e->on == want)
		return 0;
	char line[64];
	snprintf(line, sizeof line, "probe %" PRIu32 " %s", e->id, want ? "on" : "off");
	send_control(c, line, OWED_NOTHING);
	e->on = want;
	return 1;
}

static int subject_conn(const struct vgd_conn *c)
{
	return c && !c->dead && c->has_subject && c->subj.kind != VGW_KIND_CONTROL;
}

/* Asks a subject for its table (and gives a C subject the patterns) once. */
static void ask_table(struct vgd_conn *c)
{
	struct vgd_probes *p = probes_of(c);
	if (!p || p->asked)
		return;
	p->asked = 1;
	char line[1100];
	if (c->subj.kind == VGW_KIND_C) /* its own patterns, for what it registers later */
		for (size_t i = 0; i < npats; i++) {
			snprintf(line, sizeof line, "pattern %s %s",
			         pats[i].enable ? "enable" : "disable", pats[i].p.text);
			send_control(c, line, OWED_NOTHING);
		}
	send_control(c, "list 0", OWED_LIST);
}

/* A subject that connects while patterns exist is brought up to date at once; the others
 * are asked for their tables only when `vigil probes` is used, so a collector nobody
 * switches probes through sends its subjects nothing but acknowledgements. */
/* `usdt enable|disable PROVIDER:GLOB` lines given so far, in order (at most 64, a line
 * given again moves last): each C subject gets them as it connects, as every connected
 * one got them when they came (its runtime arms its own sites, docs/usdt.md). */
#define MAX_USDT 64
static char *usdt_lines[MAX_USDT];
static size_t nusdt;

static void usdt_remember(const char *line)
{
	size_t i = 0;
	while (i < nusdt && strcmp(usdt_lines[i], line + 0))
		i++;
	/* the opposite verb for the same pattern replaces it too */
	const char *pat = strchr(line + 5, ' ');
	for (size_t k = 0; k < nusdt && i == nusdt; k++)
		if (pat && !strcmp(strchr(usdt_lines[k] + 5, ' '), pat))
			i = k;
	if (i < nusdt) {
		free(usdt_lines[i]);
		memmove(&usdt_lines[i], &usdt_lines[i + 1], (nusdt - i - 1) * sizeof *usdt_lines);
		nusdt--;
	}
	if (nusdt == MAX_USDT) {
		free(usdt_lines[0]);
		memmove(&usdt_lines[0], &usdt_lines[1], (nusdt - 1) * sizeof *usdt_lines);
		nusdt--;
	}
	char *copy = strdup(line);
	if (copy)
		usdt_lines[nusdt++] = copy;
}

static int usdt_subject(const struct vgd_conn *c)
{
	return subject_conn(c) && c->subj.kind == VGW_KIND_C;
}

void vgd_relay_subject_hello(struct vgd_conn *c)
{
	if (subject_conn(c) && npats)
		ask_table(c);
	for (size_t i = 0; i < nusdt && usdt_subject(c); i++)
		send_control(c, usdt_lines[i], OWED_NOTHING);
}

static void ask_all_tables(void)
{
	for (size_t i = 0; i < vgd_conn_count(); i++)
		if (subject_conn(vgd_conn_at(i)))
			ask_table(vgd_conn_at(i));
}

/* `ok NOW TOTAL ID:NAME:ON ...`: one page of the table; asks for the next one, or, at
 * the end, brings every listed sensor to what the patterns say. */
static void on_list(struct vgd_conn *c, char *line)
{
	struct vgd_probes *p = probes_of(c);
	char *save = NULL, *tok = strtok_r(line, " ", &save);
	if (!p || !tok || strcmp(tok, "ok"))
		return;
	strtok_r(NULL, " ", &save); /* NOW */
	char *total_s = strtok_r(NULL, " ", &save);
	uint64_t total = total_s ? strtoull(total_s, NULL, 10) : 0;
	long last = -1;
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *colon1 = strchr(tok, ':'), *colon2 = strrchr(tok, ':');
		if (!colon1 || colon1 == colon2)
			continue;
		*colon1 = *colon2 = 0;
		struct entry *e = entry_of(p, (uint32_t)strtoul(tok, NULL, 10), colon1 + 1);
		if (e)
			e->on = atoi(colon2 + 1) ? 1 : 0;
		last = strtol(tok, NULL, 10);
	}
	if (last >= 0 && (uint64_t)last + 1 < total) {
		char next[48];
		snprintf(next, sizeof next, "list %ld", last + 1);
		send_control(c, next, OWED_LIST);
		return;
	}
	for (size_t i = 0; i < p->n; i++)
		push(c, &p->v[i], decided(p->v[i].name));
}

/* Is a table asked for and not read to its end yet (a `list` reply owed)? */
static int table_pending(const struct vgd_conn *c)
{
	const struct vgd_probes *p = c->probes;
	if (!subject_conn(c) || !p || !p->asked)
		return 0;
	for (size_t i = 0; i < p->len; i++)
		if (p->owed[(p->head + i) % p->cap_owed] == OWED_LIST)
			return 1;
	return 0;
}

static int any_table_pending(void)
{
	for (size_t i = 0; i < vgd_conn_count(); i++)
		if (vgd_conn_at(i) && table_pending(vgd_conn_at(i)))
			return 1;
	return 0;
}

/* Answers the waiting `list`s whose deadline passed (all of them when `all`). */
static void answer_waiters(int all, uint64_t now)
{
	size_t j = 0;
	for (size_t i = 0; i < nwaiters; i++) {
		if (all || now >= waiters[i].until)
			list_all(waiters[i].peer);
		else
			waiters[j++] = waiters[i];
	}
	nwaiters = j;
}

void vgd_relay_tick(uint64_t now)
{
	if (nwaiters)
		answer_waiters(!any_table_pending(), now);
}

void vgd_relay_reply(struct vgd_conn *c, const char *text, size_t n)
{
	struct vgd_probes *p = probes_of(c);
	if (!p || !p->len) {
		vgd_log("%s: a REPLY nobody asked for", c->peer);
		return;
	}
	uint8_t what = p->owed[p->head];
	p->head = (p->head + 1) % p->cap_owed;
	p->len--;
	char *line = strndup(text, n);
	if (!line)
		return;
	if (!strncmp(line, "error", 5))
		vgd_log("%s: %s", c->peer, line);
	else if (what == OWED_LIST)
		on_list(c, line);
	free(line);
	if (nwaiters && !any_table_pending())
		answer_waiters(1, 0);
}

/* NOTE `registered ID NAME`: a sensor the subject registered after its HELLO. */
void vgd_relay_note(struct vgd_conn *c, const char *text, size_t n)
{
	char line[1100];
	snprintf(line, sizeof line, "%.*s", (int)(n < 1099 ? n : 1099), text);
	char name[1024];
	unsigned id;
	if (sscanf(line, "registered %u %1023s", &id, name) != 2)
		return;
	struct vgd_probes *p = c->probes;
	if (!p || !p->asked) /* no probes used yet: the table is read when they are */
		return;
	struct entry *e = entry_of(p, id, name);
	if (!e)
		return;
	int want = decided(name);
	if (want >= 0 && c->subj.kind != VGW_KIND_C) {
		push(c, e, want);
	} else {
		/* A C subject applied its patterns at registration: learn what it decided. */
		snprintf(line, sizeof line, "list %u", id);
		send_control(c, line, OWED_LIST);
	}
}

void vgd_relay_free(struct vgd_conn *c)
{
	size_t j = 0; /* a waiting peer that goes away: nobody to answer */
	for (size_t i = 0; i < nwaiters; i++)
		if (waiters[i].peer != c)
			waiters[j++] = waiters[i];
	nwaiters = j;
	if (nwaiters && !any_table_pending()) /* a subject gone while read: answer now */
		answer_waiters(1, 0);
	struct vgd_probes *p = c->probes;
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	free(p->owed);
	free(p);
	c->probes = NULL;
}

/* ---- the control peer (vigil probes --collector) ---- */

static void reply(struct vgd_conn *c, const char *line)
{
	vgw_put_line(&c->out, VGW_REPLY, line);
}

static int add_pattern(int enable, const char *text, char *err, size_t errsize)
{
	struct pattern p = {.enable = enable};
	char why[300];
	if (vgw_probe_pattern_compile(&p.p, text, why, sizeof why) < 0) {
		snprintf(err, errsize, "error %s", why);
		return -1;
	}
	/* A pattern given again moves last. */
	for (size_t i = 0; i < npats; i++)
		if (!strcmp(pats[i].p.text, text)) {
			vgw_probe_pattern_free(&pats[i].p);
			memmove(&pats[i], &pats[i + 1], (npats - i - 1) * sizeof *pats);
			npats--;
			break;
		}
	struct pattern *v = realloc(pats, (npats + 1) * sizeof *v);
	if (!v) {
		vgw_probe_pattern_free(&p.p);
		snprintf(err, errsize, "error out of memory");
		return -1;
	}
	pats = v;
	pats[npats++] = p;
	return 0;
}

static void clear_patterns(void)
{
	for (size_t i = 0; i < npats; i++)
		vgw_probe_pattern_free(&pats[i].p);
	npats = 0;
}

/* --probes-file (probes_file.c): the file's rules replace the patterns in force, those
 * `vigil probes --collector` gave too, as `pattern reset` and then each rule in order
 * would leave them. A C subject is told the same (it resets its probes to their
 * configured states, then applies the rules itself, also for sensors it registers later;
 * only the added rules when the file grew at its end) and lists its table again; other
 * subjects get each listed sensor's new state by id (a sensor no rule names any more
 * keeps its state: vigild does not know their configured states).
 * Ownership of the rules' compiled patterns passes here. Returns the sensors switched in
 * subjects whose states vigild knows. */
long vgd_relay_replace(struct vgw_probe_rule *rules, size_t n)
{
	/* The old rules followed by new ones (lines added at the end, the usual change): a
	 * C subject only needs the new ones, and no sensor blinks off through a reset. */
	size_t kept = npats <= n ? npats : 0;
	for (size_t i = 0; i < kept; i++)
		if (pats[i].enable != rules[i].enable || strcmp(pats[i].p.text, rules[i].p.text))
			kept = 0;
	clear_patterns();
	struct pattern *v = n ? realloc(pats, n * sizeof *v) : pats;
	if (n && !v) {
		vgw_probe_rules_free(rules, n);
		vgd_log("--probes-file: out of memory; no patterns in force");
		return 0;
	}
	pats = v;
	for (size_t i = 0; i < n; i++)
		pats[i] = (struct pattern){.enable = rules[i].enable, .p = rules[i].p};
	npats = n;
	free(rules);
	long switched = 0;
	char fwd[1100];
	for (size_t i = 0; i < vgd_conn_count(); i++) {
		struct vgd_conn *c = vgd_conn_at(i);
		if (!subject_conn(c))
			continue;
		struct vgd_probes *p = c->probes;
		if (!p || !p->asked) { /* not asked yet: its table and the patterns now */
			if (npats)
				ask_table(c);
			continue;
		}
		if (c->subj.kind == VGW_KIND_C) {
			if (!kept)
				send_control(c, "pattern reset", OWED_NOTHING);
			for (size_t k = kept; k < npats; k++) {
				snprintf(fwd, sizeof fwd, "pattern %s %s",
				         pats[k].enable ? "enable" : "disable", pats[k].p.text);
				send_control(c, fwd, OWED_NOTHING);
			}
			send_control(c, "list 0", OWED_LIST); /* learns what the subject decided */
			continue;
		}
		for (size_t k = 0; k < p->n; k++)
			switched += push(c, &p->v[k], decided(p->v[k].name));
	}
	return switched;
}

/* `list`: every subject's table, `ok NOW N HOST:PID:ID:NAME:ON ...`. */
static void list_all(struct vgd_conn *peer)
{
	struct vgw_buf b = {0};
	size_t n = 0;
	for (size_t i = 0; i < vgd_conn_count(); i++) {
		struct vgd_conn *c = vgd_conn_at(i);
		if (!subject_conn(c) || !c->probes)
			continue;
		for (size_t k = 0; k < c->probes->n; k++) {
			const struct entry *e = &c->probes->v[k];
			char item[1400];
			int len = snprintf(item, sizeof item, " %s:%" PRIu32 ":%" PRIu32 ":%s:%d",
			                   c->subj.host, c->subj.pid, e->id, e->name, e->on > 0);
			if (len > 0 && (size_t)len < sizeof item) {
				vgw_raw(&b, item, (size_t)len);
				n++;
			}
		}
	}
	char head[64];
	int hl = snprintf(head, sizeof head, "ok %" PRIu64 " %zu", now_ns(), n);
	char *line = malloc((size_t)hl + b.len + 1);
	if (!line || b.failed) {
		reply(peer, "error out of memory");
	} else {
		memcpy(line, head, (size_t)hl);
		if (b.len) /* b.p is NULL while no subject's table is known */
			memcpy(line + hl, b.p, b.len);
		line[hl + (int)b.len] = 0;
		reply(peer, line);
	}
	free(line);
	vgw_buf_free(&b);
}

void vgd_relay_control(struct vgd_conn *peer, const char *text, size_t n)
{
	char *line = strndup(text, n);
	char err[400];
	if (!line) {
		reply(peer, "error out of memory");
		return;
	}
	char *sp = strchr(line, ' ');
	char *arg = sp ? sp + 1 : NULL;
	ask_all_tables(); /* those not asked yet answer later: `list` shows them then */
	/* Replies go in order: a `list` of this peer still waiting is answered first. */
	size_t j = 0;
	for (size_t i = 0; i < nwaiters; i++)
		if (waiters[i].peer == peer)
			list_all(peer);
		else
			waiters[j++] = waiters[i];
	nwaiters = j;
	if (!strcmp(line, "list")) {
		struct waiter *w =
		    any_table_pending() ? realloc(waiters, (nwaiters + 1) * sizeof *waiters) : NULL;
		if (w) {
			waiters = w;
			waiters[nwaiters++] = (struct waiter){peer, vgd_now_ns() + LIST_WAIT_NS};
		} else {
			list_all(peer);
		}
	} else if (!strcmp(line, "pattern reset")) {
		clear_patterns();
		for (size_t i = 0; i < vgd_conn_count(); i++) {
			struct vgd_conn *c = vgd_conn_at(i);
			if (subject_conn(c) && c->subj.kind == VGW_KIND_C) {
				send_control(c, "pattern reset", OWED_NOTHING);
				send_control(c, "list 0",
				             OWED_LIST); /* states back as configured */
			}
		}
		snprintf(err, sizeof err, "ok %" PRIu64 " 0", now_ns());
		reply(peer, err);
	} else if (sp && !strncmp(line, "pattern ", 8) &&
	           (!strncmp(arg, "enable ", 7) || !strncmp(arg, "disable ", 8))) {
		int enable = arg[0] == 'e';
		const char *text_p = arg + (enable ? 7 : 8);
		if (add_pattern(enable, text_p, err, sizeof err) < 0) {
			reply(peer, err);
		} else {
			const struct pattern *p = &pats[npats - 1];
			long switched = 0;
			char fwd[1100];
			snprintf(fwd, sizeof fwd, "pattern %s %s", enable ? "enable" : "disable",
			         text_p);
			for (size_t i = 0; i < vgd_conn_count(); i++) {
				struct vgd_conn *c = vgd_conn_at(i);
				if (!subject_conn(c))
					continue;
				if (c->subj.kind == VGW_KIND_C)
					send_control(c, fwd, OWED_NOTHING);
				for (size_t k = 0; c->probes && k < c->probes->n; k++)
					if (vgw_probe_pattern_match(&p->p, c->probes->v[k].name))
						switched += push(c, &c->probes->v[k], enable);
			}
			snprintf(err, sizeof err, "ok %" PRIu64 " %ld", now_ns(), switched);
			reply(peer, err);
		}
	} else if (sp && !strncmp(line, "usdt ", 5) &&
	           (!strncmp(arg, "enable ", 7) || !strncmp(arg, "disable ", 8)) &&
	           strchr(strchr(arg, ' ') + 1, ':') && !strchr(strchr(arg, ' ') + 1, ' ')) {
		/* probe sites: each C subject arms its own (its answer counts sites; the reply
		 * here counts the subjects told) */
		usdt_remember(line);
		long told = 0;
		for (size_t i = 0; i < vgd_conn_count(); i++)
			if (usdt_subject(vgd_conn_at(i))) {
				send_control(vgd_conn_at(i), line, OWED_NOTHING);
				told++;
			}
		snprintf(err, sizeof err, "ok %" PRIu64 " %ld", now_ns(), told);
		reply(peer, err);
	} else {
		reply(peer, "error unknown command (expected list, pattern enable|disable "
		            "PATTERN, pattern reset or usdt enable|disable PROVIDER:GLOB)");
	}
	free(line);
}
