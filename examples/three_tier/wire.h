/* The three-tier example's messages and its only contact with vigil.
 *
 * Every message is a fixed header (payload length, a W3C traceparent slot) and a
 * payload. The instrumented build (TT_VIGIL, linked with libvigil) fills the slot with
 * vg_msg_send and joins it with vg_msg_recv; the plain build leaves it blank and makes no
 * vigil call at all: `vigil record` follows it through its sockets alone. The protocol is
 * the same in both. */
#ifndef TT_WIRE_H
#define TT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TT_TP_LEN 55 /* VG_TRACEPARENT_LEN */
#define TT_MAX_PAYLOAD 4096

struct tt_msg {
	uint32_t len;           /* payload bytes */
	char tp[TT_TP_LEN + 1]; /* traceparent, or blank */
	char payload[TT_MAX_PAYLOAD];
};

#ifdef TT_VIGIL
#include "vigil/net.h"
#define TT_BEGIN(what) vg_interaction_begin(what)
#define TT_SENT(m, to) vg_msg_send((m)->tp, (to), (m)->len)
#define TT_RECEIVED(m) vg_msg_recv((m)->tp, (m)->len)
#define TT_INSTRUMENTED 1
#else
#define TT_BEGIN(what) ((void)(what))
#define TT_SENT(m, to) ((void)(m), (void)(to))
#define TT_RECEIVED(m) ((void)(m))
#define TT_INSTRUMENTED 0
#endif

/* Sends m (header + payload) on fd: 0, or -1 when the connection is gone. */
int tt_send(int fd, struct tt_msg *m, const char *to);
/* Receives one message: 0, or -1 at the end of the connection (or a bad header). */
int tt_recv(int fd, struct tt_msg *m);

/* Sockets on loopback. */
int tt_listen(int *port); /* port 0: any; the port chosen is written back */
int tt_connect(int port);

/* The tiers (tiers.c); each returns the exit status. */
struct tt_options {
	int port, back_port, front_port;
	int threads, requests, pool;
	int work_us;
};
int tt_back(const struct tt_options *o);
int tt_front(const struct tt_options *o);
int tt_client(const struct tt_options *o);

#endif
