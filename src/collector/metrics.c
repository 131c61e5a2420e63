/* vigild --metrics: the Prometheus text format, version 0.0.4 (metrics.h). */
#define _GNU_SOURCE
#include "metrics.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct vgd_metrics vgd_metrics;

#ifndef VIGILD_METRICS
int vgd_metrics_available(void)
{
	return 0;
}
int vgd_metrics_start(const char *addr, int *port)
{
	(void)addr;
	(void)port;
	fprintf(stderr, "vigild: --metrics: this vigild was built without libmicrohttpd\n");
	return -1;
}
void vgd_metrics_stop(void) {}
#else
#include <microhttpd.h>

#if MHD_VERSION < 0x00097002
typedef int MHD_Result;
#else
typedef enum MHD_Result MHD_Result;
#endif

static struct MHD_Daemon *daemon_;

int vgd_metrics_available(void)
{
	return 1;
}

struct metric {
	const char *name, *type, *help;
	_Atomic uint64_t *v;
};

static char *exposition(void)
{
	const struct metric ms[] = {
	    {"vigild_subjects_connected", "gauge", "Subjects connected now.",
	     &vgd_metrics.subjects_connected},
	    {"vigild_connections_open", "gauge", "Connections open now (subjects, relays, probes).",
	     &vgd_metrics.connections_open},
	    {"vigild_connections_total", "counter", "Connections accepted.",
	     &vgd_metrics.connections_total},
	    {"vigild_bytes_received_total", "counter", "Bytes received from peers.",
	     &vgd_metrics.bytes_received},
	    {"vigild_packets_received_total", "counter", "CTF packets received from C subjects.",
	     &vgd_metrics.packets_received},
	    {"vigild_records_received_total", "counter",
	     "Records received from Python and Java subjects.", &vgd_metrics.records_received},
	    {"vigild_events_discarded_total", "counter",
	     "Events not stored (quota per subject, full disk), counted in the trace.",
	     &vgd_metrics.events_discarded},
	    {"vigild_connection_errors_total", "counter",
	     "Peers disconnected for an error (bad frame, token, timeout, I/O).",
	     &vgd_metrics.connection_errors},
	    {"vigild_store_backlog", "gauge", "Process images waiting to be stored (--store).",
	     &vgd_metrics.store_backlog},
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", ms[i].name, ms[i].help,
		        ms[i].name, ms[i].type, ms[i].name,
		        atomic_load_explicit(ms[i].v, memory_order_relaxed));
	vgd_metrics_host_lines(f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body,
                        bool owned, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(body), body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload, size_t *upload_size, void **state)
{
	(void)cls;
	(void)version;
	(void)upload;
	if (!*state) { /* the first call only has the headers */
		*state = c;
		return MHD_YES;
	}
	if (*upload_size) { /* a body is never wanted: ignored, then refused */
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/metrics"))
		return reply(c, 404, "text/plain", "not found: vigild serves GET /metrics only\n",
		             false, NULL);
	if (strcmp(method, "GET"))
		return reply(c, 405, "text/plain", "method not allowed: GET only\n", false, "GET");
	char *body = exposition();
	if (!body)
		return reply(c, 500, "text/plain", "out of memory\n", false, NULL);
	return reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", body, true, NULL);
}

int vgd_metrics_start(const char *addr, int *port)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host || !colon[1]) {
		fprintf(stderr, "vigild: --metrics %s: expected HOST:PORT\n", addr);
		return -1;
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	if (host[0] == '[') { /* [::1]:9100 */
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
	                         .ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST};
	struct addrinfo *res;
	int rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (rc) {
		fprintf(stderr, "vigild: --metrics %s: %s\n", addr, gai_strerror(rc));
		return -1;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
	if (res->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	daemon_ = MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR,
	                           res->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	                           MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
	freeaddrinfo(res);
	if (!daemon_) {
		fprintf(stderr,
		        "vigild: --metrics %s: cannot listen (in use, or not an address of "
		        "this machine)\n",
		        addr);
		return -1;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
	*port = info ? info->port : 0;
	return 0;
}

void vgd_metrics_stop(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
#endif
