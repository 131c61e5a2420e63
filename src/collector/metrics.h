/* vigild --metrics ADDR: Prometheus text exposition over HTTP (libmicrohttpd), GET
 * /metrics only (docs/export.md). The counters are bumped by the poll loop and the store
 * thread with relaxed atomics and read by the HTTP thread. */
#ifndef VIGIL_COLLECTOR_METRICS_H
#define VIGIL_COLLECTOR_METRICS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

struct vgd_metrics {
	_Atomic uint64_t subjects_connected; /* gauge */
	_Atomic uint64_t connections_open;   /* gauge */
	_Atomic uint64_t connections_total;
	_Atomic uint64_t bytes_received;
	_Atomic uint64_t packets_received;  /* CTF packets of C subjects */
	_Atomic uint64_t records_received;  /* records of Python and Java subjects */
	_Atomic uint64_t events_discarded;  /* not stored: quota, full disk */
	_Atomic uint64_t connection_errors; /* peers disconnected for an error */
	_Atomic uint64_t store_backlog;     /* gauge: images waiting for --store */
};
extern struct vgd_metrics vgd_metrics;

#define VGD_COUNT(field, n) atomic_fetch_add_explicit(&vgd_metrics.field, (n), memory_order_relaxed)
#define VGD_UNCOUNT(field, n)                                                                      \
	atomic_fetch_sub_explicit(&vgd_metrics.field, (n), memory_order_relaxed)

/* host_lag.c: per-host lag. A data frame from host was stored whose newest event is at
 * newest_event_ns (ns since the epoch, on the host's clock). At most VGD_MAX_LAG_HOSTS
 * hosts are shown (the first ones to send). */
#define VGD_MAX_LAG_HOSTS 1024
void vgd_metrics_host_data(const char *host, int64_t newest_event_ns);
/* Writes the per-host gauges (HELP, TYPE, one line per host) to f. */
void vgd_metrics_host_lines(FILE *f);

/* Starts serving on HOST:PORT (port 0: any free one); 0 with *port set, or -1 after one
 * line on stderr. */
int vgd_metrics_start(const char *addr, int *port);
void vgd_metrics_stop(void);
int vgd_metrics_available(void);

#endif
