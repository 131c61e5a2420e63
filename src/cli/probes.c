/* vigil probes: switch a running process's sensors on and off by pattern (adaptive
 * monitoring; docs/control.md "Probes", docs/protocol.md "Probes").
 *
 * The pattern is matched here, once, against the sensor table the subject lists (`list
 * FROM`, paged); only the sensors whose state changes are pushed, by id (`probe ID
 * on|off`), so the subject never matches strings for a switch. The pattern is given to
 * the subject first (`pattern enable|disable P`): it applies it to the sensors that
 * register from then on, after this command has exited. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bad_option.h"
#include "cli/control_link.h"
#include "cli/probes.h"
#include "commands.h"
#include "usdt_plan.h"

#define WAIT_MS 5000

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil probes --pid PID [--json] enable|disable PATTERN\n"
	    "       vigil probes --pid PID [--json] list [PATTERN]\n"
	    "       vigil probes --pid PID [--json] reset\n"
	    "       vigil probes --collector HOST:PORT ...   (through vigild)\n\n"
	    "Switches the sensors of a running process on or off, while it runs. The\n"
	    "process must listen for monitors (vigil record --listen, or VIGIL_CONTROL=listen\n"
	    "with VIGIL_OUT). A PATTERN is an fnmatch glob on sensor names ('mailbox.*'), or\n"
	    "a POSIX extended regular expression after '%%' ('%%^mailbox\\.(Send|Wait)',\n"
	    "unanchored unless you anchor it).\n\n"
	    "enable/disable matches the pattern here against the process's sensor table and\n"
	    "switches the sensors whose state changes, by id; the process keeps the pattern\n"
	    "and applies it to sensors registered later. The switches outlive this command\n"
	    "(and any vigil watch that attaches and leaves). A probe state replaces what\n"
	    "VIGIL_SENSORS decided for the sensor; vigil watch's requests add on top.\n"
	    "Later patterns win over earlier ones; giving a pattern again moves it last.\n"
	    "list shows each sensor's probe state (optionally only those PATTERN names).\n"
	    "usdt:PROVIDER:GLOB arms (enable) or disarms (disable) the SDT probe sites of\n"
	    "the process's loaded objects whose probe matches, raising or lowering their\n"
	    "semaphores; each probe records as the sensor PROVIDER.PROBE (docs/usdt.md).\n"
	    "With --pid, the sites are first planned for the jump path (a trampoline, with\n"
	    "capstone); through --collector each subject arms them with a breakpoint.\n"
	    "reset forgets the patterns and puts every sensor back as configured.\n\n"
	    "options:\n"
	    "  --pid PID              the process (up to 8 monitors may attach at once)\n"
	    "  --collector ADDR       every subject of a vigild collector at HOST:PORT or\n"
	    "                         unix:PATH (docs/protocol.md; VIGIL_TO_TOKEN: its token;\n"
	    "                         VIGIL_TO_CA: TLS, docs/security.md)\n"
	    "  --json                 one JSON object on stdout\n"
	    "  -h, --help             this help\n\n"
	    "exit status: 0 done; 1 the process could not be reached or refused; 2 bad\n"
	    "usage or a bad pattern.\n\n"
	    "examples:\n"
	    "  vigil record --listen -o srv -- ./mailbox --messages 100000 --pace 1000 &\n"
	    "  vigil probes --pid $! enable 'mailbox.*'\n"
	    "  vigil probes --pid $! disable '%%\\.(Wait|Poll)$'\n"
	    "  vigil probes --pid $! list --json | jq '.sensors[] | select(.on) | .name'\n"
	    "  vigil probes --pid $! reset\n"
	    "  vigil probes --pid $! enable 'usdt:postgresql:lock__*'   # SDT probe sites\n"
	    "  vigil probes --collector 127.0.0.1:7878 enable 'mailbox.Send*'   # every subject\n");
}

/* ---- one command, its raw answer line (vgc_command parses only `ok NOW [N]`) ---- */

struct link {
	struct vgc_subject *c;
	char buf[2048];
	size_t len;
	char err[512];
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends `line`, reads its answer into `ans`; 0 on `ok ...`, -1 (err set) otherwise. */
static int request(struct link *l, const char *line, char *ans, size_t anssize)
{
	int fd = vgc_subject_fd(l->c);
	char out[1100];
	int n = snprintf(out, sizeof out, "%s\n", line);
	for (int off = 0; off < n;) {
		ssize_t w = send(fd, out + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(l->err, sizeof l->err, "send: %s", strerror(errno));
			return -1;
		}
		off += (int)w;
	}
	int64_t deadline = mono_ms() + WAIT_MS;
	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		if (nl) {
			size_t k = (size_t)(nl - l->buf);
			snprintf(ans, anssize, "%.*s", (int)k, l->buf);
			l->len -= k + 1;
			memmove(l->buf, nl + 1, l->len);
			if (!strncmp(ans, "ok ", 3))
				return 0;
			snprintf(l->err, sizeof l->err, "%s",
			         strncmp(ans, "error ", 6) ? ans : ans + 6);
			return -1;
		}
		int64_t left = deadline - mono_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || l->len == sizeof l->buf) {
			snprintf(l->err, sizeof l->err, "%s",
			         r == 0 ? "no answer within 5 s" : "bad answer");
			return -1;
		}
		ssize_t got = read(fd, l->buf + l->len, sizeof l->buf - l->len);
		if (got <= 0) {
			if (got < 0 && errno == EINTR)
				continue;
			snprintf(l->err, sizeof l->err, "connection closed");
			return -1;
		}
		l->len += (size_t)got;
	}
}

/* `ok NOW [N]`: NOW, and N (or -1). */
static uint64_t ok_now(const char *ans, long *count)
{
	char *end;
	uint64_t now = strtoull(ans + 3, &end, 10);
	if (count)
		*count = *end == ' ' ? strtol(end + 1, NULL, 10) : -1;
	return now;
}

/* ---- the subject's sensor table ---- */

struct sensor {
	uint64_t id;
	char *name;
	int on;
};
struct table {
	struct sensor *s;
	size_t n, cap;
	uint64_t total; /* as the last page said */
};

static int table_add(struct table *t, const char *entry)
{
	const char *c1 = strchr(entry, ':'), *c2 = strrchr(entry, ':');
	if (!c1 || c1 == c2 || (strcmp(c2, ":0") && strcmp(c2, ":1")))
		return -1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sensor *p = realloc(t->s, cap * sizeof *p);
		if (!p)
			return -1;
		t->s = p;
		t->cap = cap;
	}
	struct sensor *s = &t->s[t->n];
	s->id = strtoull(entry, NULL, 10);
	s->name = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
	s->on = c2[1] == '1';
	if (!s->name)
		return -1;
	t->n++;
	return 0;
}

/* Reads the whole table, page by page (`list FROM`). */
static int table_read(struct link *l, struct table *t)
{
	uint64_t from = 0;
	for (;;) {
		char line[64], ans[1100];
		snprintf(line, sizeof line, "list %" PRIu64, from);
		if (request(l, line, ans, sizeof ans) < 0)
			return -1;
		char *save = NULL;
		strtok_r(ans, " ", &save);  /* ok */
		strtok_r(NULL, " ", &save); /* now */
		char *total = strtok_r(NULL, " ", &save);
		if (!total) {
			snprintf(l->err, sizeof l->err, "bad list answer");
			return -1;
		}
		t->total = strtoull(total, NULL, 10);
		size_t before = t->n;
		for (char *e; (e = strtok_r(NULL, " ", &save));)
			if (table_add(t, e) < 0) {
				snprintf(l->err, sizeof l->err, "bad list entry '%.200s'", e);
				return -1;
			}
		if (t->n == before) /* nothing more from `from` on */
			return 0;
		from = t->s[t->n - 1].id + 1;
		if (from >= t->total)
			return 0;
	}
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i].name);
	free(t->s);
}

/* ---- the verbs ---- */

static int fail(struct link *l, int pid)
{
	fprintf(stderr, "vigil probes: process %d: %s\n", pid, l->err);
	return 1;
}

static int do_switch(struct link *l, int pid, int enable, const struct vgw_probe_pattern *p,
                     int json)
{
	char line[1100], ans[1100];
	snprintf(line, sizeof line, "pattern %s %s", enable ? "enable" : "disable", p->text);
	/* First the subject keeps it: a sensor registering from now on follows it there;
	 * the ones registered before are in the table read next. */
	if (request(l, line, ans, sizeof ans) < 0)
		return fail(l, pid);
	uint64_t since = ok_now(ans, NULL), at = since;
	struct table t = {0};
	if (table_read(l, &t) < 0) {
		table_free(&t);
		return fail(l, pid);
	}
	json_t *changed = json_array();
	size_t matched = 0, nchanged = 0;
	for (size_t i = 0; i < t.n; i++) {
		struct sensor *s = &t.s[i];
		if (!vgw_probe_pattern_match(p, s->name))
			continue;
		matched++;
		if (s->on == enable)
			continue;
		snprintf(line, sizeof line, "probe %" PRIu64 " %s", s->id, enable ? "on" : "off");
		if (request(l, line, ans, sizeof ans) < 0) {
			json_decref(changed);
			table_free(&t);
			return fail(l, pid);
		}
		at = ok_now(ans, NULL);
		nchanged++;
		json_array_append_new(
		    changed, json_pack("{s:I,s:s}", "id", (json_int_t)s->id, "name", s->name));
		if (!json)
			printf("%-3s %6" PRIu64 "  %s\n", enable ? "on" : "off", s->id, s->name);
	}
	if (json) {
		json_t *o =
		    json_pack("{s:i,s:s,s:s,s:I,s:I,s:o,s:I,s:I}", "pid", pid, "action",
		              enable ? "enable" : "disable", "pattern", p->text, "sensors",
		              (json_int_t)t.n, "matched", (json_int_t)matched, "changed", changed,
		              "since_ns", (json_int_t)since, "at_ns", (json_int_t)at);
		char *text = json_dumps(o, JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(o);
	} else {
		json_decref(changed);
		printf("process %d: %zu of %zu sensors match '%s', %zu switched %s; sensors "
		       "registered later follow the pattern\n",
		       pid, matched, t.n, p->text, nchanged, enable ? "on" : "off");
	}
	table_free(&t);
	return 0;
}

static int send_plan(const char *plan, void *arg)
{
	struct link *l = arg;
	char line[600], ans[1100];
	snprintf(line, sizeof line, "usdt plan %s", plan);
	return request(l, line, ans, sizeof ans);
}

/* The jump path's plans (usdt_plan.c) of the matching sites of every object the process
 * has mapped executable, sent before `usdt enable`; a site without one is armed with its
 * int3 only. -1: the link failed. */
static int send_plans(struct link *l, int pid, const char *patterns)
{
	char maps[64];
	snprintf(maps, sizeof maps, "/proc/%d/maps", pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return 0;
	char line[PATH_MAX + 128], done[64][256];
	size_t ndone = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		char perms[8], *path = strchr(line, '/');
		if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x' || !path)
			continue;
		path[strcspn(path, "\n")] = 0;
		size_t k = 0;
		while (k < ndone && strcmp(done[k], path))
			k++;
		if (k < ndone || strlen(path) >= sizeof done[0] || ndone == 64)
			continue;
		snprintf(done[ndone++], sizeof done[0], "%s", path);
		char root[PATH_MAX + 64];
		snprintf(root, sizeof root, "/proc/%d/root%s", pid, path);
		if (vg_usdt_plan_file(root, path, patterns, send_plan, l) < 0)
			rc = -1;
	}
	fclose(f);
	return l->err[0] ? -1 : rc;
}

/* `usdt:PROVIDER:GLOB`: the process arms or disarms the matching probe sites of its
 * loaded objects itself (docs/usdt.md); since_ns/at_ns bracket the switch. */
static int do_usdt(struct link *l, int pid, int enable, const char *text, int json)
{
	char line[1100], ans[1100];
	long sites = 0;
	if (enable && send_plans(l, vgc_subject_pid(l->c), text) < 0)
		return fail(l, pid);
	if (request(l, "ping", ans, sizeof ans) < 0)
		return fail(l, pid);
	uint64_t since = ok_now(ans, NULL);
	snprintf(line, sizeof line, "usdt %s %s", enable ? "enable" : "disable", text);
	if (request(l, line, ans, sizeof ans) < 0)
		return fail(l, pid);
	uint64_t at = ok_now(ans, &sites);
	if (json)
		printf("{\"pid\":%d,\"action\":\"%s\",\"usdt\":\"%s\",\"sites\":%ld,"
		       "\"since_ns\":%" PRIu64 ",\"at_ns\":%" PRIu64 "}\n",
		       pid, enable ? "enable" : "disable", text, sites, since, at);
	else
		printf("process %d: %ld probe sites matching '%s' %s\n", pid, sites, text,
		       enable ? "armed" : "disarmed");
	return 0;
}

static int do_list(struct link *l, int pid, const struct vgw_probe_pattern *p, int json)
{
	struct table t = {0};
	char ans[1100];
	long matches = -1;
	if (table_read(l, &t) < 0 || request(l, "pattern matches", ans, sizeof ans) < 0) {
		table_free(&t);
		return fail(l, pid);
	}
	ok_now(ans, &matches);
	json_t *arr = json_array();
	size_t on = 0;
	for (size_t i = 0; i < t.n; i++) {
		struct sensor *s = &t.s[i];
		if (p && !vgw_probe_pattern_match(p, s->name))
			continue;
		on += s->on;
		if (json)
			json_array_append_new(arr,
			                      json_pack("{s:I,s:s,s:b}", "id", (json_int_t)s->id,
			                                "name", s->name, "on", s->on));
		else
			printf("%-3s %6" PRIu64 "  %s\n", s->on ? "on" : "off", s->id, s->name);
	}
	if (json) {
		json_t *o = json_pack("{s:i,s:I,s:I,s:o}", "pid", pid, "total", (json_int_t)t.n,
		                      "pattern_matches", (json_int_t)matches, "sensors", arr);
		char *text = json_dumps(o, JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(o);
	} else {
		json_decref(arr);
		fprintf(stderr, "process %d: %zu sensors, %zu on\n", pid, t.n, on);
	}
	table_free(&t);
	return 0;
}

static int do_reset(struct link *l, int pid, int json)
{
	char ans[1100];
	long n = 0;
	if (request(l, "pattern reset", ans, sizeof ans) < 0)
		return fail(l, pid);
	uint64_t at = ok_now(ans, &n);
	if (json)
		printf("{\"pid\":%d,\"action\":\"reset\",\"switched\":%ld,\"at_ns\":%" PRIu64 "}\n",
		       pid, n, at);
	else
		printf("process %d: patterns forgotten, %ld sensors back as configured\n", pid, n);
	return 0;
}

int vg_cmd_probes(int argc, char **argv)
{
	static const struct option opts[] = {{"pid", required_argument, 0, 'p'},
	                                     {"collector", required_argument, 0, 'c'},
	                                     {"json", no_argument, 0, 'j'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	long pid = 0;
	const char *collector = NULL;
	int json = 0;
	opterr = 0;
	for (int o; (o = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
		switch (o) {
		case 'p': {
			char *end;
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > 0x7fffffff) {
				fprintf(stderr, "vigil probes: --pid %s: not a process id\n",
				        optarg);
				return 2;
			}
			break;
		}
		case 'c':
			collector = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("probes", argv);
		}
	}
	int nargs = argc - optind;
	const char *verb = nargs > 0 ? argv[optind] : NULL;
	const char *text = nargs > 1 ? argv[optind + 1] : NULL;
	int need = !verb                                                 ? -1
	           : !strcmp(verb, "enable") || !strcmp(verb, "disable") ? 2
	           : !strcmp(verb, "list")                               ? (nargs == 2 ? 2 : 1)
	           : !strcmp(verb, "reset")                              ? 1
	                                                                 : -1;
	if (!verb) {
		fprintf(stderr, "vigil probes: expected enable, disable, list or reset (see 'vigil "
		                "probes --help')\n");
		return 2;
	}
	if (need < 0 || nargs != need) {
		if (need < 0)
			fprintf(
			    stderr,
			    "vigil probes: unknown action '%s' (expected enable, disable, list or "
			    "reset; see 'vigil probes --help')\n",
			    verb);
		else
			fprintf(stderr,
			        "vigil probes: %s: wrong number of arguments (see 'vigil probes "
			        "--help')\n",
			        verb);
		return 2;
	}
	if (!!pid + !!collector != 1) {
		fprintf(stderr, "vigil probes: give exactly one of --pid PID and --collector "
		                "HOST:PORT\n");
		return 2;
	}
	struct vgw_probe_pattern pat;
	char why[256];
	if (text && vgw_probe_pattern_compile(&pat, text, why, sizeof why) < 0) {
		fprintf(stderr, "vigil probes: %s\n", why);
		return 2;
	}
	int usdt = text && !strncmp(text, "usdt:", 5) && strcmp(verb, "list");
	if (usdt && (strchr(text, '"') || strchr(text, '\\') || strchr(text, ' '))) {
		fprintf(stderr, "vigil probes: %s: %s\n", text,
		        "quotes, backslashes and spaces cannot name a probe");
		vgw_probe_pattern_free(&pat);
		return 2;
	}
	if (collector) { /* vigild evaluates the pattern against every subject's table */
		int rc = probes_collector(collector, verb, text ? &pat : NULL, json);
		if (text)
			vgw_probe_pattern_free(&pat);
		return rc;
	}
	struct link l = {0};
	l.c = vgc_attach((int)pid, l.err, sizeof l.err);
	if (!l.c) {
		fprintf(stderr, "vigil probes: %s\n", l.err);
		return 1;
	}
	int rc = usdt                     ? do_usdt(&l, (int)pid, verb[0] == 'e', text + 5, json)
	         : !strcmp(verb, "list")  ? do_list(&l, (int)pid, text ? &pat : NULL, json)
	         : !strcmp(verb, "reset") ? do_reset(&l, (int)pid, json)
	                                  : do_switch(&l, (int)pid, verb[0] == 'e', &pat, json);
	vgc_subject_close(l.c);
	if (text)
		vgw_probe_pattern_free(&pat);
	return rc;
}
