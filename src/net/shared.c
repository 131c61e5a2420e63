/* Channels with several writers or readers (docs/net.md "Shared pipes and sockets"): a
 * pipe, or one direction of a socket, written through more than one connection record
 * (forked processes that inherited it, an exec'd image, a descriptor copied with fcntl)
 * or read through more than one. Each record counts its own offsets, which say nothing of
 * where its bytes stand among the others', so such a channel is matched in time order:
 * a pipe or stream socket is one FIFO, whose writes (up to PIPE_BUF, atomic) and reads
 * each happen at one instant inside their call. Sends are sorted by the time their call
 * began, receives by the time theirs returned, and the k-th byte sent is the k-th byte
 * received. Each estimate errs on the safe side (a send's call begins before its bytes
 * enter, a receive's returns after they left), so the k-th smallest send time is at most
 * the instant the k-th byte entered and the k-th smallest receive time at least the
 * instant it left: on one host no pair dates a receive before its send, as long as every
 * writer and reader was recorded. Where one was not, pairs that would are refused
 * (vgn__add_pair) and counted. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

struct chan {
	uint32_t shost, rhost; /* host of its senders / receivers; VGN_NONE - 1 if mixed */
	uint32_t nsconns, nrconns;
	bool shared;
};

struct item {
	uint32_t chan, ev;
};

static const struct vgn_set *item_set;
static int by_chan_time(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	if (x->chan != y->chan)
		return x->chan < y->chan ? -1 : 1;
	const struct vgn_event *e = &item_set->events[x->ev], *f = &item_set->events[y->ev];
	if (e->ts != f->ts)
		return e->ts < f->ts ? -1 : 1;
	if (e->conn != f->conn)
		return e->conn < f->conn ? -1 : 1;
	return e->off < f->off ? -1 : e->off > f->off;
}

static void side(struct chan *ch, uint32_t host, bool send)
{
	uint32_t *h = send ? &ch->shost : &ch->rhost;
	uint32_t *n = send ? &ch->nsconns : &ch->nrconns;
	*h = *n == 0 || *h == host ? host : VGN_NONE - 1;
	(*n)++;
}

/* One channel's sends and receives, each in time order: the k-th byte sent is the k-th
 * byte received. */
static void replay(struct vgn_set *s, size_t *cap, const struct item *snd, size_t ns,
                   const struct item *rcv, size_t nr)
{
	size_t j = 0;
	uint64_t gs = 0, gr = 0; /* where sends[j] and the current receive begin */
	for (size_t i = 0; i < nr; i++) {
		const struct vgn_event *r = &s->events[rcv[i].ev];
		uint64_t ro = gr, re = gr + r->len;
		while (j < ns && gs + s->events[snd[j].ev].len <= ro)
			gs += s->events[snd[j++].ev].len;
		uint64_t g = gs;
		for (size_t k = j; k < ns && g < re; k++) {
			uint64_t len = s->events[snd[k].ev].len;
			uint64_t lo = g > ro ? g : ro, hi = g + len < re ? g + len : re;
			if (hi > lo)
				vgn__add_pair(s, cap, snd[k].ev, rcv[i].ev, hi - lo, false, lo - g,
				              lo - ro);
			g += len;
		}
		gr = re;
	}
}

void vgn__match_shared(struct vgn_set *s, size_t *cap, bool *send_done, bool *recv_done)
{
	size_t nc = s->nconns;
	const char *kinds[] = {vgn_intern(s, "pipe"), vgn_intern(s, "tcp"), vgn_intern(s, "unix")};
	uint8_t *dir = vgb_xcalloc(nc + 1, sizeof *dir); /* 1: sends, 2: receives */
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		if (e->conn != VGN_NONE && !e->msg && (e->kind == VGN_SEND || e->kind == VGN_RECV))
			dir[e->conn] |= e->kind == VGN_SEND ? 1 : 2;
	}
	/* channels by name: a send on (L, R) and a receive on (R, L); a pipe's name is one
	 * host's (its device and inode) */
	struct vgn_tmap map;
	vgn_tmap_init(&map);
	struct chan *ch = NULL;
	size_t nch = 0, capch = 0;
	uint32_t *schan = vgb_xcalloc(nc + 1, sizeof *schan),
	         *rchan = vgb_xcalloc(nc + 1, sizeof *rchan);
	for (size_t c = 0; c < nc; c++) {
		const struct vgn_conn *cn = &s->conns[c];
		schan[c] = rchan[c] = VGN_NONE;
		if (cn->kind != kinds[0] && cn->kind != kinds[1] && cn->kind != kinds[2])
			continue;
		uint32_t host = s->procs[cn->proc].host;
		uint64_t tag = cn->kind == kinds[0] ? (uint64_t)host + 1 : 0;
		for (int d = 1; d <= 2; d++) {
			if (!(dir[c] & d))
				continue;
			const char *a = d == 1 ? cn->local : cn->remote,
			           *b = d == 1 ? cn->remote : cn->local;
			uint32_t k = vgn_tmap_get(&map, (uintptr_t)a, (uintptr_t)b, tag);
			if (k == VGN_NONE) {
				VGN_GROW(ch, capch, nch + 1);
				memset(&ch[nch], 0, sizeof *ch);
				k = (uint32_t)nch++;
				vgn_tmap_put(&map, (uintptr_t)a, (uintptr_t)b, tag, k);
			}
			side(&ch[k], host, d == 1);
			(d == 1 ? schan : rchan)[c] = k;
		}
	}
	vgn_tmap_free(&map);
	for (size_t k = 0; k < nch; k++) {
		struct chan *x = &ch[k];
		x->shared = (x->nsconns > 1 || x->nrconns > 1) && x->nsconns && x->nrconns &&
		            x->shost != VGN_NONE - 1 && x->rhost != VGN_NONE - 1;
		s->shared_channels += x->shared;
	}
	size_t nsi = 0, nri = 0;
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		if (e->conn == VGN_NONE || e->msg)
			continue;
		if (e->kind == VGN_SEND && schan[e->conn] != VGN_NONE && ch[schan[e->conn]].shared)
			nsi++;
		else if (e->kind == VGN_RECV && rchan[e->conn] != VGN_NONE &&
		         ch[rchan[e->conn]].shared)
			nri++;
	}
	struct item *si = vgb_xcalloc(nsi + 1, sizeof *si), *ri = vgb_xcalloc(nri + 1, sizeof *ri);
	nsi = nri = 0;
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		if (e->conn == VGN_NONE || e->msg)
			continue;
		if (e->kind == VGN_SEND && schan[e->conn] != VGN_NONE &&
		    ch[schan[e->conn]].shared) {
			si[nsi++] = (struct item){schan[e->conn], (uint32_t)i};
			send_done[e->conn] = true;
		} else if (e->kind == VGN_RECV && rchan[e->conn] != VGN_NONE &&
		           ch[rchan[e->conn]].shared) {
			ri[nri++] = (struct item){rchan[e->conn], (uint32_t)i};
			recv_done[e->conn] = true;
		}
	}
	item_set = s;
	qsort(si, nsi, sizeof *si, by_chan_time);
	qsort(ri, nri, sizeof *ri, by_chan_time);
	for (size_t a = 0, b = 0; b < nri;) {
		uint32_t k = ri[b].chan;
		size_t b2 = b, a2;
		while (b2 < nri && ri[b2].chan == k)
			b2++;
		while (a < nsi && si[a].chan < k)
			a++;
		for (a2 = a; a2 < nsi && si[a2].chan == k; a2++)
			;
		replay(s, cap, si + a, a2 - a, ri + b, b2 - b);
		a = a2;
		b = b2;
	}
	free(si);
	free(ri);
	free(schan);
	free(rchan);
	free(ch);
	free(dir);
}
