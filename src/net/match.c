/* Matching sends to receives (docs/net.md "Matching"): explicit messages by their `msg`
 * id; bytes on connections by endpoints (a send on local L, remote R against a receive on
 * local R, remote L) and overlapping byte ranges [off, off+len). One pair per overlap: a
 * send read in two pieces makes two pairs, two sends read at once make two pairs. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

void vgn__add_pair(struct vgn_set *s, size_t *cap, uint32_t snd, uint32_t rcv, uint64_t bytes,
                   bool explicit_id, uint64_t send_at, uint64_t recv_at)
{
	/* On one host (one clock) a receive dated before its send cannot be its receive: a
	 * send is dated before its bytes left, a receive after they arrived (docs/net.md). */
	if (s->events[rcv].ts < s->events[snd].ts &&
	    vgn_event_host(s, snd) == vgn_event_host(s, rcv)) {
		s->refused++;
		return;
	}
	VGN_GROW(s->msgs, *cap, s->nmsgs + 1);
	s->msgs[s->nmsgs++] = (struct vgn_msg){snd, rcv, bytes, explicit_id, send_at, recv_at};
	s->nmatch[snd]++;
	s->nmatch[rcv]++;
}

static void match_explicit(struct vgn_set *s, size_t *cap)
{
	struct vgn_tmap ids;
	vgn_tmap_init(&ids);
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VGN_SEND && s->events[i].msg &&
		    vgn_tmap_get(&ids, s->events[i].msg, 0, 0) == VGN_NONE)
			vgn_tmap_put(&ids, s->events[i].msg, 0, 0, (uint32_t)i);
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *r = &s->events[i];
		if (r->kind != VGN_RECV || !r->msg)
			continue;
		uint32_t snd = vgn_tmap_get(&ids, r->msg, 0, 0);
		if (snd != VGN_NONE) {
			uint64_t l = s->events[snd].len < r->len ? s->events[snd].len : r->len;
			vgn__add_pair(s, cap, snd, (uint32_t)i, l, true, 0, 0);
		}
	}
	vgn_tmap_free(&ids);
}

/* Events of one connection, sends and receives apart, sorted by offset. */
struct conn_events {
	uint32_t *sends, *recvs;
	size_t nsends, nrecvs;
};

static const struct vgn_set *off_set;
static int by_off(const void *a, const void *b)
{
	const struct vgn_event *x = &off_set->events[*(const uint32_t *)a];
	const struct vgn_event *y = &off_set->events[*(const uint32_t *)b];
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static uint64_t pair_key(const char *a, const char *b)
{
	/* interned: pointer identity is string identity */
	return ((uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b) << 2;
}

/* A unix endpoint named by its inode ("unix:123"), not by a path ("unix:/run/x.sock",
 * "unix:@abstract"): which end it is does not depend on how the process came by it
 * (accept, fork, exec, SCM_RIGHTS), only on what the kernel could say of its peer. */
static bool unix_inode(const char *name)
{
	if (strncmp(name, "unix:", 5) || !name[5])
		return false;
	for (const char *p = name + 5; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static void sweep(struct vgn_set *s, size_t *cap, const struct conn_events *snd,
                  const struct conn_events *rcv)
{
	size_t j = 0;
	for (size_t i = 0; i < rcv->nrecvs; i++) {
		const struct vgn_event *r = &s->events[rcv->recvs[i]];
		uint64_t ro = r->off, re = r->off + r->len;
		while (j < snd->nsends &&
		       s->events[snd->sends[j]].off + s->events[snd->sends[j]].len <= ro)
			j++;
		for (size_t k = j; k < snd->nsends; k++) {
			const struct vgn_event *e = &s->events[snd->sends[k]];
			if (e->off >= re)
				break;
			uint64_t lo = e->off > ro ? e->off : ro;
			uint64_t hi = e->off + e->len < re ? e->off + e->len : re;
			if (hi > lo)
				vgn__add_pair(s, cap, snd->sends[k], rcv->recvs[i], hi - lo, false,
				              lo - e->off, lo - ro);
		}
	}
}

static void match_bytes(struct vgn_set *s, size_t *cap)
{
	size_t nc = s->nconns;
	bool *send_done = vgb_xcalloc(nc + 1, sizeof *send_done);
	bool *recv_done = vgb_xcalloc(nc + 1, sizeof *recv_done);
	vgn__match_shared(s, cap, send_done, recv_done);
	/* A terminal's two directions have one name: what is written to it goes to the
	 * terminal, what is read from it comes from the terminal; never matched. */
	const char *tty_kind = vgn_intern(s, "tty");
	for (size_t c = 0; c < nc; c++)
		if (s->conns[c].kind == tty_kind)
			send_done[c] = recv_done[c] = true;
	struct conn_events *ce = vgb_xcalloc(nc ? nc : 1, sizeof *ce);
	size_t *ns = vgb_xcalloc(nc ? nc : 1, sizeof *ns),
	       *nr = vgb_xcalloc(nc ? nc : 1, sizeof *nr);
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		if (e->conn == VGN_NONE || e->msg)
			continue;
		if (e->kind == VGN_SEND)
			ns[e->conn]++;
		else if (e->kind == VGN_RECV)
			nr[e->conn]++;
	}
	for (size_t c = 0; c < nc; c++) {
		ce[c].sends = vgb_xcalloc(ns[c] ? ns[c] : 1, sizeof(uint32_t));
		ce[c].recvs = vgb_xcalloc(nr[c] ? nr[c] : 1, sizeof(uint32_t));
	}
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		if (e->conn == VGN_NONE || e->msg)
			continue;
		struct conn_events *x = &ce[e->conn];
		if (e->kind == VGN_SEND)
			x->sends[x->nsends++] = (uint32_t)i;
		else if (e->kind == VGN_RECV)
			x->recvs[x->nrecvs++] = (uint32_t)i;
	}
	off_set = s;
	for (size_t c = 0; c < nc; c++) {
		qsort(ce[c].sends, ce[c].nsends, sizeof(uint32_t), by_off);
		qsort(ce[c].recvs, ce[c].nrecvs, sizeof(uint32_t), by_off);
	}
	/* Connections with sends, chained by (local, remote), and for unix sockets also by
	 * local alone and remote alone: a connecting end names the path it connected to,
	 * not the accepting end's inode (docs/net.md), so only one name pairs them: the
	 * inode that one end has as local and the other as remote. */
	struct vgn_tmap heads;
	vgn_tmap_init(&heads);
	uint32_t *next = vgb_xcalloc(3 * nc + 1, sizeof *next);
	const char *unix_kind = vgn_intern(s, "unix");
	for (size_t c = 0; c < nc; c++) {
		if (!ce[c].nsends || send_done[c])
			continue;
		const struct vgn_conn *sc = &s->conns[c];
		uint64_t keys[3] = {pair_key(sc->local, sc->remote), pair_key(sc->local, NULL) ^ 1,
		                    pair_key(NULL, sc->remote) ^ 2};
		for (int k = 0; k < (sc->kind == unix_kind ? 3 : 1); k++) {
			next[3 * c + (size_t)k] = vgn_tmap_get(&heads, keys[k], 0, 0);
			vgn_tmap_put(&heads, keys[k], 0, 0, (uint32_t)(3 * c + (size_t)k));
		}
	}
	int64_t *span_lo = vgb_xcalloc(nc + 1, sizeof *span_lo);
	int64_t *span_hi = vgb_xcalloc(nc + 1, sizeof *span_hi);
	for (size_t c = 0; c < nc; c++) {
		span_lo[c] = INT64_MAX;
		span_hi[c] = INT64_MIN;
		for (int d = 0; d < 2; d++) {
			const uint32_t *evs = d ? ce[c].recvs : ce[c].sends;
			size_t n = d ? ce[c].nrecvs : ce[c].nsends;
			for (size_t i = 0; i < n; i++) {
				int64_t t = s->events[evs[i]].ts;
				span_lo[c] = t < span_lo[c] ? t : span_lo[c];
				span_hi[c] = t > span_hi[c] ? t : span_hi[c];
			}
		}
	}
	uint32_t *cand = vgb_xcalloc(nc + 1, sizeof *cand);
	struct conn_events merged = {vgb_xcalloc(1, sizeof(uint32_t)), NULL, 0, 0};
	size_t merged_cap = 1;
	const int64_t slack = 1000000000; /* 1 s: clocks of other hosts not corrected yet */
	for (size_t c = 0; c < nc; c++) {
		if (!ce[c].nrecvs || recv_done[c])
			continue;
		const struct vgn_conn *rc = &s->conns[c];
		/* The sending ends: remote and local swapped (unix: the one name known to
		 * both). Of those, the ones in use while this one was (a forked child goes on
		 * with its parent's connection); if none was, the closest in time (a port
		 * reused later). */
		uint64_t key = pair_key(rc->remote, rc->local);
		int which = 0;
		if (rc->kind == unix_kind && unix_inode(rc->remote)) {
			/* it names its peer's inode (accepted, socketpair, or judged on first
			 * I/O by sock_diag): the peer's ends are those whose local is that */
			key = pair_key(rc->remote, NULL) ^ 1;
			which = 1;
		} else if (rc->kind == unix_kind) {
			/* it names a path (a connecting end): the peer's ends name its inode */
			key = pair_key(NULL, rc->local) ^ 2;
			which = 2;
		}
		size_t ncand = 0;
		uint32_t best = VGN_NONE;
		uint64_t best_d = UINT64_MAX;
		for (uint32_t x = vgn_tmap_get(&heads, key, 0, 0); x != VGN_NONE; x = next[x]) {
			uint32_t sc_i = x / 3;
			const struct vgn_conn *sc = &s->conns[sc_i];
			if ((int)(x % 3) != which || sc_i == c)
				continue;
			if (which == 0 && (sc->local != rc->remote || sc->remote != rc->local))
				continue;
			if (which == 1 && sc->local != rc->remote)
				continue;
			if (which == 2 && sc->remote != rc->local)
				continue;
			if (span_lo[sc_i] <= span_hi[c] + slack &&
			    span_lo[c] <= span_hi[sc_i] + slack)
				cand[ncand++] = sc_i;
			int64_t d = span_lo[sc_i] - span_lo[c];
			uint64_t ad = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
			if (ad < best_d) {
				best_d = ad;
				best = sc_i;
			}
		}
		if (!ncand && best != VGN_NONE)
			cand[ncand++] = best;
		if (ncand == 1) {
			sweep(s, cap, &ce[cand[0]], &ce[c]);
			continue;
		}
		merged.nsends = 0;
		for (size_t k = 0; k < ncand; k++) {
			VGN_GROW(merged.sends, merged_cap, merged.nsends + ce[cand[k]].nsends);
			memcpy(merged.sends + merged.nsends, ce[cand[k]].sends,
			       ce[cand[k]].nsends * sizeof(uint32_t));
			merged.nsends += ce[cand[k]].nsends;
		}
		qsort(merged.sends, merged.nsends, sizeof(uint32_t), by_off);
		sweep(s, cap, &merged, &ce[c]);
	}
	free(merged.sends);
	free(cand);
	free(span_lo);
	free(span_hi);
	vgn_tmap_free(&heads);
	for (size_t c = 0; c < nc; c++) {
		free(ce[c].sends);
		free(ce[c].recvs);
	}
	free(next);
	free(send_done);
	free(recv_done);
	free(ce);
	free(ns);
	free(nr);
}

int vgn_match(struct vgn_set *s, struct vgn_match_stats *st)
{
	free(s->msgs);
	free(s->nmatch);
	s->msgs = NULL;
	s->nmsgs = 0;
	s->refused = s->shared_channels = 0;
	s->nmatch = vgb_xcalloc(s->nevents ? s->nevents : 1, sizeof *s->nmatch);
	size_t cap = 0;
	match_explicit(s, &cap);
	match_bytes(s, &cap);
	if (st) {
		memset(st, 0, sizeof *st);
		for (size_t i = 0; i < s->nevents; i++) {
			if (s->events[i].kind == VGN_SEND) {
				st->sends++;
				st->matched_sends += s->nmatch[i] > 0;
			} else if (s->events[i].kind == VGN_RECV) {
				st->recvs++;
				st->matched_recvs += s->nmatch[i] > 0;
			}
		}
		st->pairs = s->nmsgs;
		st->refused = s->refused;
		st->shared_channels = s->shared_channels;
		for (size_t i = 0; i < s->nmsgs; i++)
			st->cross_host_pairs += vgn_event_host(s, s->msgs[i].send) !=
			                        vgn_event_host(s, s->msgs[i].recv);
	}
	return 0;
}
