/* One peer connection of vigild: its input framing, the protocol state, its subject. */
#ifndef VIGIL_COLLECTOR_CONN_H
#define VIGIL_COLLECTOR_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vigild.h"

struct vgd_conn {
	int fd;
	char peer[128];
	uint8_t *in; /* bytes received, not yet a whole frame */
	size_t in_len, in_cap;
	struct vgw_buf out; /* bytes to send */
	size_t out_sent;
	int hello_done, has_subject;
	int dead;          /* to be closed by the loop */
	uint64_t since_ns; /* accepted (CLOCK_MONOTONIC) */
	uint64_t last_ns;  /* the last byte received */
	struct vgd_subject subj;
	struct vgd_probes *probes; /* relay.c: its sensor table and the replies it owes */
	/* TLS (tls.c): NULL on the Unix socket and without --tls-cert. */
	void *ssl;
	int tls_state;      /* 1 handshake, 2 open */
	int tls_want_write; /* OpenSSL waits for the socket to take bytes */
	int tls_eof;
	char tls_cn[256]; /* the client certificate's common name, "" without one */
	char tls_err[256];
};

struct vgd_conn *vgd_conn_new(int fd, const char *peer);
/* Reads what the socket has and handles every whole frame: 0, or -1 when the peer is
 * to be disconnected (the reason logged). */
int vgd_conn_readable(struct vgd_conn *c);
int vgd_conn_writable(struct vgd_conn *c); /* flushes pending output: 0 or -1 */
int vgd_conn_wants_write(const struct vgd_conn *c);
/* The handshake and idle timeouts: 0, or -1 when the peer is to be disconnected. */
int vgd_conn_check_time(struct vgd_conn *c, uint64_t now_ns);
uint64_t vgd_now_ns(void);
/* how: VGD_BYE, VGD_KEEP (the subject lives on), VGD_VANISHED (its images are recovered). */
void vgd_conn_free(struct vgd_conn *c, int how);

/* tls.c: TLS on TCP connections. vgd_io_recv and vgd_io_send return bytes, 0 (recv: the
 * peer closed), -1 (errno; EAGAIN: would block) or -2 (a TLS failure, in c->tls_err). */
int vgd_tls_init(const char *cert, const char *key, const char *client_ca); /* 0 or -1 */
int vgd_tls_enabled(void);
int vgd_tls_start(struct vgd_conn *c); /* a new TCP connection: 0 or -1 */
ssize_t vgd_io_recv(struct vgd_conn *c, uint8_t *p, size_t n);
ssize_t vgd_io_send(struct vgd_conn *c, const uint8_t *p, size_t n);
int vgd_io_pending(const struct vgd_conn *c); /* bytes read but not yet returned */
void vgd_tls_free(struct vgd_conn *c);

/* service.c: the table of connections, so that a reconnecting subject replaces its old
 * one. The poll loop adds accepted sockets, closes slots (NULL until compacted) and
 * compacts the table once per round. */
void vgd_conn_table_add(int fd, const char *peer, int is_unix); /* limits, TLS start */
void vgd_conn_table_close(size_t i, int how);                   /* how: as vgd_conn_free */
void vgd_conn_table_compact(void);
void vgd_conn_table_free_all(void); /* each with VGD_KEEP */
struct vgd_conn *vgd_find_subject(const char *host, uint32_t pid, uint64_t start,
                                  const struct vgd_conn *except);
void vgd_drop_conn(struct vgd_conn *c); /* closes it now, orderly */
size_t vgd_conn_count(void);
struct vgd_conn *vgd_conn_at(size_t i); /* NULL for a closed slot */

/* relay.c: probes through the collector (docs/protocol.md "Probes"). */
void vgd_relay_subject_hello(struct vgd_conn *c); /* after WELCOME: patterns, `list 0` */
void vgd_relay_reply(struct vgd_conn *c, const char *line, size_t n);
void vgd_relay_note(struct vgd_conn *c, const char *line, size_t n);
void vgd_relay_control(struct vgd_conn *peer, const char *line, size_t n); /* kind 3 */
void vgd_relay_free(struct vgd_conn *c);
/* From the loop, at least once a second: a `list` that waited for subjects' tables long
 * enough is answered with what is known. */
void vgd_relay_tick(uint64_t now_ns);
/* --probes-file's rules replace the patterns in force (ownership passes); returns the
 * sensors switched where vigild knows their states. */
struct vgw_probe_rule;
long vgd_relay_replace(struct vgw_probe_rule *rules, size_t n);
/* probes_file.c: --probes-file FILE, re-read every --probes-period (docs/protocol.md). */
int vgd_probes_file_option(const char *path, const char *period); /* -1: said why */
void vgd_probes_file_tick(uint64_t now_ns);
int vgd_probes_file_wait_ms(uint64_t now_ns, int wait_ms); /* poll's timeout, shortened */

#endif
