/* vigil probes --collector: the same verbs through vigild, which keeps every subject's
 * sensor table and pushes only the switches (docs/protocol.md "Probes"). This end is a
 * control-only peer: HELLO kind 3, then one CONTROL line per verb, answered by one REPLY. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/collector_link.h"
#include "cli/probes.h"
#include "wire/frame.h"

#define WAIT_MS 5000

/* Sends one CONTROL line and returns its REPLY (malloc'd, NUL-terminated), or NULL. */
static char *request(int fd, const char *line)
{
	struct vgw_buf b = {0};
	vgw_put_line(&b, VGW_CONTROL, line);
	int rc = b.failed ? -1 : vg_cli_send_all(fd, &b);
	vgw_buf_free(&b);
	uint8_t *payload;
	uint32_t len;
	if (rc < 0 || vg_cli_read_frame(fd, VGW_REPLY, &payload, &len) < 0)
		return NULL;
	struct vgw_frame f;
	char err[200];
	char *out = NULL;
	if (vgw_decode(VGW_REPLY, payload, len, &f, err, sizeof err) == 0)
		out = strndup(f.u.line.line.p, f.u.line.line.n);
	free(payload);
	return out;
}

/* `ok NOW N HOST:PID:ID:NAME:ON ...`, filtered by p. */
static int print_list(char *ans, const char *addr, const struct vgw_probe_pattern *p, int json)
{
	char *save = NULL;
	strtok_r(ans, " ", &save);  /* ok */
	strtok_r(NULL, " ", &save); /* NOW */
	strtok_r(NULL, " ", &save); /* N */
	json_t *arr = json_array();
	size_t shown = 0, on = 0;
	for (char *tok; (tok = strtok_r(NULL, " ", &save));) {
		/* HOST:PID:ID:NAME:ON; a name may hold ':', so ON is after the last one */
		char *f[4] = {tok, 0, 0, 0};
		int k = 1;
		for (char *c = tok; *c && k < 4; c++)
			if (*c == ':')
				*c = 0, f[k++] = c + 1;
		char *last = k == 4 ? strrchr(f[3], ':') : NULL;
		if (!last)
			continue;
		*last = 0;
		const char *name = f[3];
		int is_on = atoi(last + 1) != 0;
		if (p && !vgw_probe_pattern_match(p, name))
			continue;
		shown++;
		on += is_on;
		if (json)
			json_array_append_new(arr,
			                      json_pack("{s:s,s:I,s:I,s:s,s:b}", "host", f[0],
			                                "pid", (json_int_t)strtoll(f[1], NULL, 10),
			                                "id", (json_int_t)strtoll(f[2], NULL, 10),
			                                "name", name, "on", is_on));
		else
			printf("%-3s %-16s %7s %6s  %s\n", is_on ? "on" : "off", f[0], f[1], f[2],
			       name);
	}
	if (json) {
		json_t *o = json_pack("{s:s,s:I,s:o}", "collector", addr, "total",
		                      (json_int_t)shown, "sensors", arr);
		char *text = json_dumps(o, JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(o);
	} else {
		json_decref(arr);
		fprintf(stderr, "collector %s: %zu sensors, %zu on\n", addr, shown, on);
	}
	return 0;
}

int probes_collector(const char *addr, const char *verb, const struct vgw_probe_pattern *p,
                     int json)
{
	char err[300];
	/* A malformed address is a usage error (2), an unreachable collector a failure (1). */
	if (vg_cli_check_addr(addr, err, sizeof err) < 0) {
		fprintf(stderr, "vigil probes: --collector %s: %s\n", addr, err);
		return 2;
	}
	int fd = vg_cli_dial(addr, err, sizeof err);
	if (fd < 0) {
		fprintf(stderr, "vigil probes: --collector %s: %s\n", addr, err);
		return 1;
	}
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	struct vgw_buf b = {0};
	vgw_put_hello(&b, getenv("VIGIL_TO_TOKEN") ? getenv("VIGIL_TO_TOKEN") : "", host,
	              (uint32_t)getpid(), 0, "vigil probes", VGW_KIND_CONTROL, NULL, 0);
	int rc = b.failed ? -1 : vg_cli_send_all(fd, &b);
	vgw_buf_free(&b);
	uint8_t *payload = NULL;
	uint32_t len;
	if (rc < 0 || vg_cli_read_frame(fd, VGW_WELCOME, &payload, &len) < 0) {
		fprintf(stderr, "vigil probes: --collector %s: no WELCOME (a wrong token?)\n",
		        addr);
		close(fd);
		return 1;
	}
	free(payload);
	char line[1100];
	if (!strcmp(verb, "list"))
		snprintf(line, sizeof line, "list");
	else if (!strcmp(verb, "reset"))
		snprintf(line, sizeof line, "pattern reset");
	else if (!strncmp(p->text, "usdt:", 5)) /* each subject arms its own sites */
		snprintf(line, sizeof line, "usdt %s %s", verb, p->text + 5);
	else
		snprintf(line, sizeof line, "pattern %s %s", verb, p->text);
	char *ans = request(fd, line);
	close(fd);
	if (!ans) {
		fprintf(stderr, "vigil probes: --collector %s: no answer\n", addr);
		return 1;
	}
	if (strncmp(ans, "ok ", 3)) {
		fprintf(stderr, "vigil probes: --collector %s: %s\n", addr, ans);
		free(ans);
		return 1;
	}
	if (!strcmp(verb, "list")) {
		rc = print_list(ans, addr, p, json);
	} else {
		unsigned long long at = 0;
		long n = 0;
		sscanf(ans, "ok %llu %ld", &at, &n);
		int usdt = p && !strncmp(p->text, "usdt:", 5);
		if (json && usdt)
			printf("{\"collector\":\"%s\",\"action\":\"%s\",\"usdt\":\"%s\","
			       "\"subjects\":%ld,\"at_ns\":%llu}\n",
			       addr, verb, p->text + 5, n, at);
		else if (json)
			printf("{\"collector\":\"%s\",\"action\":\"%s\",\"switched\":%ld,\"at_ns\":"
			       "%llu}\n",
			       addr, verb, n, at);
		else if (usdt)
			printf(
			    "collector %s: %s: sent to %ld subject(s), each %s its matching probe "
			    "sites (and subjects that connect later)\n",
			    addr, p->text, n, verb[0] == 'e' ? "arms" : "disarms");
		else
			printf("collector %s: %s: %ld sensor(s) switched now\n", addr,
			       p ? p->text : "reset", n);
		rc = 0;
	}
	free(ans);
	return rc;
}
