/* One peer connection of vigild: its input framing, the protocol state, its subject. */
#ifndef VIGIL_COLLECTOR_CONN_H
#define VIGIL_COLLECTOR_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "vigild.h"

struct vgd_conn {
	int fd;
	char peer[128];
	uint8_t *in; /* bytes received, not yet a whole frame */
	size_t in_len, in_cap;
	struct vgf_buf out; /* bytes to send */
	size_t out_sent;
	int hello_done, has_subject;
	int dead;          /* to be closed by the loop */
	uint64_t since_ns; /* accepted (CLOCK_MONOTONIC) */
	uint64_t last_ns;  /* the last byte received */
	struct vgd_subject subj;
	struct vgd_probes *probes; /* relay.c: its sensor table and the replies it owes */
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

/* main.c: the connections, so that a reconnecting subject replaces its old one. */
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

#endif
