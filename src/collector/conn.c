/* A peer of vigild: framing (uint32 length, uint8 type), the order of frames, and the
 * acknowledgement after each batch of stored frames (docs/protocol.md). */
#define _GNU_SOURCE
#include "conn.h"
#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (256u << 10)
#define OUT_LIMIT (1u << 20) /* a peer that reads none of its ACKs is dropped */
#define PRE_CHUNK 4096u      /* read size before HELLO: unauthenticated peers cost little */

static uint64_t next_session;

uint64_t vgd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct vgd_conn *vgd_conn_new(int fd, const char *peer)
{
	struct vgd_conn *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->fd = fd;
	VGD_COUNT(connections_open, 1);
	VGD_COUNT(connections_total, 1);
	c->since_ns = c->last_ns = vgd_now_ns();
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	if (!next_session)
		next_session = (uint64_t)time(NULL) << 20;
	return c;
}

void vgd_conn_free(struct vgd_conn *c, int how)
{
	VGD_UNCOUNT(connections_open, 1);
	if (c->has_subject) {
		VGD_UNCOUNT(subjects_connected, 1);
		vgd_subject_close(&c->subj, how);
	}
	vgd_relay_free(c);
	vgd_tls_free(c);
	close(c->fd);
	free(c->in);
	vgw_buf_free(&c->out);
	free(c);
}

static int drop(struct vgd_conn *c, const char *reason)
{
	VGD_COUNT(connection_errors, 1);
	vgd_log("%s: %s", c->peer, reason);
	return -1;
}

/* Constant time in the bytes compared: the time a wrong token takes tells nothing of how
 * much of it was right (only whether its length was). */
static int same_token(struct vgw_str given, const char *token)
{
	size_t n = strlen(token);
	unsigned char d = given.n != n;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(token[i] ^ (i < given.n ? given.p[i] : 0));
	return d == 0;
}

static int on_hello(struct vgd_conn *c, const struct vgw_frame *f)
{
	char err[300];
	if (f->u.hello.version < 1 || f->u.hello.version > VGW_VERSION) {
		snprintf(err, sizeof err, "HELLO: protocol version %u, this collector speaks 1..%d",
		         f->u.hello.version, VGW_VERSION);
		return drop(c, err);
	}
	/* Roles: probes switch sensors in every subject, so with a control token only it
	 * admits a control peer; subjects' tokens do not. */
	const char *need = f->u.hello.kind == VGW_KIND_CONTROL && vgd_opt.control_token
	                       ? vgd_opt.control_token
	                       : vgd_opt.token;
	/* Per-subject tokens: a subject's token opens sessions of its own host only. */
	if (f->u.hello.kind != VGW_KIND_CONTROL && vgd_opt.n_subject_tokens) {
		need = NULL;
		for (size_t i = 0; i < vgd_opt.n_subject_tokens && !need; i++)
			if (strlen(vgd_opt.subject_hosts[i]) == f->u.hello.host.n &&
			    !memcmp(vgd_opt.subject_hosts[i], f->u.hello.host.p, f->u.hello.host.n))
				need = vgd_opt.subject_tokens[i];
		if (!need)
			return drop(c,
			            "HELLO: a host without a token in --subject-tokens; refused");
	} else if (vgd_opt.n_subject_tokens && !need) {
		/* no subject's token may switch probes: control needs a token of its own */
		return drop(c, "HELLO: a control peer, and no --control-token-file; refused");
	}
	if (need && !same_token(f->u.hello.token, need))
		return drop(c, f->u.hello.kind == VGW_KIND_CONTROL
		                   ? "HELLO: wrong control token; refused"
		                   : "HELLO: wrong token; refused");
	c->hello_done = 1;
	uint64_t acked = 0;
	if (f->u.hello.kind != VGW_KIND_CONTROL) {
		char host[VGD_NAME_MAX + 1];
		size_t hn = f->u.hello.host.n <= VGD_NAME_MAX ? f->u.hello.host.n : VGD_NAME_MAX;
		memcpy(host, f->u.hello.host.p, hn);
		host[hn] = 0;
		/* A client certificate is a subject credential for one host: its sessions. */
		if (c->tls_cn[0] && (f->u.hello.host.n != strlen(c->tls_cn) ||
		                     memcmp(f->u.hello.host.p, c->tls_cn, f->u.hello.host.n))) {
			snprintf(err, sizeof err,
			         "HELLO: host %s, but the client certificate is for %s; refused",
			         host, c->tls_cn);
			return drop(c, err);
		}
		/* A subject that reconnects before its old connection was seen to die: only
		 * with the session's secret (a foreign HELLO leaves the subject alone). */
		struct vgd_conn *old = vgd_find_subject(host, f->u.hello.pid, f->u.hello.start, c);
		if (old && !vgd_subject_may_resume(&old->subj, f)) {
			snprintf(err, sizeof err,
			         "HELLO: resumes the session of %s/%" PRIu32
			         " without its secret; refused",
			         old->subj.host, old->subj.pid);
			return drop(c, err);
		}
		if (old)
			vgd_drop_conn(old);
		if (vgd_subject_open(&c->subj, f, err, sizeof err) < 0) {
			vgd_subject_close(&c->subj, VGD_KEEP);
			return drop(c, err);
		}
		c->has_subject = 1;
		VGD_COUNT(subjects_connected, 1);
		acked = c->subj.acked;
		size_t pl = strlen(c->peer);
		snprintf(c->peer + pl, sizeof c->peer - pl, " %.60s/%" PRIu32, c->subj.host,
		         c->subj.pid);
		if (!vgd_opt.quiet)
			vgd_log("%s: subject %s (%s), acked %" PRIu64, c->peer, c->subj.program,
			        f->u.hello.kind == VGW_KIND_C ? "C" : "records", acked);
	}
	if (f->u.hello.version >= 2)
		vgw_put_welcome(&c->out, ++next_session, acked, c->subj.secret,
		                c->has_subject && c->subj.has_secret ? VGW_SECRET_LEN : 0);
	else
		vgw_put_welcome(&c->out, ++next_session, acked, NULL, 0);
	vgd_relay_subject_hello(c);
	return 0;
}

/* Handles one frame; *stored is set when a data frame was written. */
static int on_frame(struct vgd_conn *c, uint8_t type, const uint8_t *payload, uint32_t len,
                    int *stored)
{
	struct vgw_frame f;
	char err[300];
	if (vgw_decode(type, payload, len, &f, err, sizeof err) < 0)
		return drop(c, err);
	if (!c->hello_done) {
		if (type != VGW_HELLO) {
			snprintf(err, sizeof err, "%s before HELLO", vgw_type_name(type));
			return drop(c, err);
		}
		return on_hello(c, &f);
	}
	int data =
	    type == VGW_METADATA || type == VGW_PACKET || type == VGW_SCHEMA || type == VGW_RECORDS;
	if (type == VGW_BYE)
		return 1;
	if (data && !c->has_subject) {
		snprintf(err, sizeof err, "%s from a control-only peer", vgw_type_name(type));
		return drop(c, err);
	}
	int rc = 0;
	switch (type) {
	case VGW_METADATA:
		rc = vgd_metadata(&c->subj, &f, err, sizeof err);
		break;
	case VGW_PACKET:
		rc = vgd_packet(&c->subj, &f, err, sizeof err);
		if (rc == 0)
			VGD_COUNT(packets_received, 1);
		*stored = 1;
		break;
	case VGW_SCHEMA:
		rc = vgd_schema(&c->subj, payload, len, &f, err, sizeof err);
		break;
	case VGW_RECORDS:
		rc = vgd_records(&c->subj, &f, err, sizeof err);
		*stored = 1;
		break;
	case VGW_REPLY:
	case VGW_NOTE:
		if (!c->has_subject)
			break;
		if (type == VGW_REPLY)
			vgd_relay_reply(c, (const char *)f.u.line.line.p, f.u.line.line.n);
		else
			vgd_relay_note(c, (const char *)f.u.line.line.p, f.u.line.line.n);
		break;
	case VGW_CONTROL:
		if (c->has_subject) {
			snprintf(err, sizeof err, "CONTROL from a subject: out of order");
			return drop(c, err);
		}
		vgd_relay_control(c, (const char *)f.u.line.line.p, f.u.line.line.n);
		break;
	default:
		snprintf(err, sizeof err, "%s: out of order (not sent by subjects)",
		         vgw_type_name(type));
		return drop(c, err);
	}
	return rc < 0 ? drop(c, err) : 0;
}

int vgd_conn_check_time(struct vgd_conn *c, uint64_t now)
{
	char err[96];
	if (!c->hello_done && now - c->since_ns > vgd_opt.handshake_timeout * 1000000000ull) {
		snprintf(err, sizeof err, "no HELLO within %u s (--handshake-timeout)",
		         vgd_opt.handshake_timeout);
		return drop(c, err);
	}
	if (c->hello_done && vgd_opt.idle_timeout &&
	    now - c->last_ns > vgd_opt.idle_timeout * 1000000000ull) {
		snprintf(err, sizeof err, "idle for %u s (--idle-timeout)", vgd_opt.idle_timeout);
		return drop(c, err);
	}
	return 0;
}

int vgd_conn_readable(struct vgd_conn *c)
{
	/* Before HELLO a peer is unknown: small reads, small frames (VGD_HELLO_MAX). */
	size_t chunk = c->hello_done ? READ_CHUNK : PRE_CHUNK;
	uint32_t max_frame = c->hello_done ? vgd_opt.max_frame : VGD_HELLO_MAX;
	if (c->in_cap - c->in_len < chunk) {
		size_t cap = c->in_len + chunk;
		uint8_t *p = realloc(c->in, cap);
		if (!p)
			return drop(c, "out of memory");
		c->in = p;
		c->in_cap = cap;
	}
	ssize_t n = vgd_io_recv(c, c->in + c->in_len, chunk);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n == 0 && !c->hello_done && !c->in_len && c->tls_state == 2) {
		/* `vigil record --to` checks the certificate before its command runs */
		if (!vgd_opt.quiet)
			vgd_log("%s: closed after the TLS handshake", c->peer);
		return -1;
	}
	if (n <= 0) {
		if (n < 0 || c->in_len || !c->hello_done)
			return drop(c, n == -2 ? c->tls_err
			               : n < 0 ? strerror(errno)
			                       : "connection closed");
		if (!vgd_opt.quiet)
			vgd_log("%s: connection closed without BYE", c->peer);
		return -1;
	}
	c->in_len += (size_t)n;
	VGD_COUNT(bytes_received, (uint64_t)n);
	c->last_ns = vgd_now_ns();
	size_t off = 0;
	int stored = 0, rc = 0;
	while (c->in_len - off >= VGW_HEADER) {
		uint32_t plen;
		uint8_t type;
		max_frame = c->hello_done ? vgd_opt.max_frame : VGD_HELLO_MAX;
		if (vgw_header(c->in + off, max_frame, &plen, &type) < 0) {
			char err[96];
			snprintf(err, sizeof err, "frame length outside 1..%u bytes (%s)",
			         max_frame, c->hello_done ? "--max-frame" : "before HELLO");
			return drop(c, err);
		}
		if (c->in_len - off - VGW_HEADER < plen) {
			/* Room for the whole frame before the next read. */
			size_t want = VGW_HEADER + (size_t)plen + chunk;
			if (c->in_cap - off < want) {
				memmove(c->in, c->in + off, c->in_len - off);
				c->in_len -= off;
				off = 0;
				uint8_t *p = realloc(c->in, want);
				if (!p)
					return drop(c, "out of memory");
				c->in = p;
				c->in_cap = want;
			}
			break;
		}
		rc = on_frame(c, type, c->in + off + VGW_HEADER, plen, &stored);
		off += VGW_HEADER + plen;
		if (rc != 0)
			break;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	if (rc < 0)
		return -1;
	/* Acknowledged once written: the state file first, so a restart answers the same. */
	if (stored) {
		if (vgd_subject_save(&c->subj) < 0)
			return drop(c, "cannot write the subject's state file");
		vgw_put_ack(&c->out, c->subj.acked);
	}
	if (rc == 1) { /* BYE */
		if (!vgd_opt.quiet)
			vgd_log("%s: BYE", c->peer);
		vgd_conn_writable(c);
		c->dead = 2;
		return 0;
	}
	if (c->out.failed)
		return drop(c, "out of memory");
	return vgd_conn_writable(c);
}

int vgd_conn_wants_write(const struct vgd_conn *c)
{
	return c->out.len > c->out_sent || c->tls_want_write;
}

int vgd_conn_writable(struct vgd_conn *c)
{
	if (c->tls_state == 1) /* the handshake waited for room to write */
		return vgd_conn_readable(c);
	while (c->out.len > c->out_sent) {
		ssize_t n = vgd_io_send(c, c->out.p + c->out_sent, c->out.len - c->out_sent);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n <= 0)
			return drop(c, n == -2 ? c->tls_err
			               : n < 0 ? strerror(errno)
			                       : "send failed");
		c->out_sent += (size_t)n;
	}
	if (c->out_sent == c->out.len) {
		c->out.len = c->out_sent = 0;
	} else if (c->out.len - c->out_sent > OUT_LIMIT) {
		return drop(c, "does not read its acknowledgements");
	}
	return 0;
}
