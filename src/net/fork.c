/* Forking servers (docs/net.md "Forking servers"): a server that accepts a connection and
 * forks a child to serve it (PostgreSQL's postmaster, Apache's prefork, inetd) does no
 * I/O on the connection itself, and the child is born in no interaction: the walk leaves
 * the accept and the child's start-up (the fork, loading, set-up until it reads the
 * connection) in no network, as if the request were in transit all that time. Both are
 * work the connection's input caused: here they join the network of the child's first
 * I/O on that connection that has one. The child keeps the accepted connection with its
 * names (and role `accept`; `inherited` after an exec, as inetd's services), so the
 * parent's accept is found by those names. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

static bool is_end(int kind)
{
	return kind == VGN_THREAD_END || kind == VGN_PROC_END;
}

static bool is_io(int kind)
{
	return kind == VGN_SEND || kind == VGN_RECV;
}

void vgn_split_forks(const struct vgn_set *s, struct vgn_split *sp, const uint32_t *order,
                     const uint32_t *first)
{
	/* the accepts of each process by the connection's names: the latest one */
	struct vgn_tmap acc;
	vgn_tmap_init(&acc);
	bool any = false;
	for (size_t i = 0; i < s->nevents; i++) {
		const struct vgn_event *e = &s->events[i];
		const struct vgn_conn *cn = e->conn != VGN_NONE ? &s->conns[e->conn] : NULL;
		if (e->kind != VGN_CONN || !cn || strcmp(cn->role, "accept"))
			continue;
		uint32_t p = s->threads[e->thread].proc;
		uint32_t old = vgn_tmap_get(&acc, p, (uintptr_t)cn->local, (uintptr_t)cn->remote);
		if (old == VGN_NONE || s->events[old].cts <= e->cts)
			vgn_tmap_put(&acc, p, (uintptr_t)cn->local, (uintptr_t)cn->remote,
			             (uint32_t)i);
		any = true;
	}
	for (size_t t = 0; any && t < s->nthreads; t++) {
		uint32_t c = sp->creator[t];
		if (c == VGN_NONE || first[t] == first[t + 1] ||
		    s->threads[c].proc == s->threads[t].proc)
			continue; /* not a forked process's first thread */
		uint32_t parent = s->threads[c].proc;
		int64_t born = s->events[order[first[t]]].cts;
		/* the child's first I/O on an accepted connection that is in a network */
		uint32_t k = first[t], acc_ev = VGN_NONE;
		for (; k < first[t + 1]; k++) {
			const struct vgn_event *e = &s->events[order[k]];
			if (!is_io(e->kind) || e->conn == VGN_NONE)
				continue;
			const struct vgn_conn *cn = &s->conns[e->conn];
			/* kept across the fork (accept), or exec'd (inherited: inetd) */
			if ((strcmp(cn->role, "accept") && strcmp(cn->role, "inherited")) ||
			    sp->net_of[order[k]] == VGN_NONE)
				continue;
			acc_ev =
			    vgn_tmap_get(&acc, parent, (uintptr_t)cn->local, (uintptr_t)cn->remote);
			if (acc_ev != VGN_NONE && s->events[acc_ev].cts <= born)
				break;
			acc_ev = VGN_NONE; /* its own accept, or one made after the fork */
		}
		if (acc_ev == VGN_NONE)
			continue;
		uint32_t n = sp->net_of[order[k]];
		sp->conn_vertex[acc_ev] = true;
		sp->net_of[acc_ev] = n;
		for (uint32_t j = first[t]; j < k; j++)
			if (sp->net_of[order[j]] == VGN_NONE)
				sp->net_of[order[j]] = n;
		/* It began in n now: its end belongs to n if it was still there (the walk's
		 * rule for a thread's end). */
		uint32_t j = first[t + 1];
		while (j > first[t] && is_end(s->events[order[j - 1]].kind))
			j--;
		uint32_t last = VGN_NONE;
		for (uint32_t q = j; q-- > first[t];)
			if (s->events[order[q]].kind != VGN_CONN &&
			    s->events[order[q]].kind != VGN_CLOSE) {
				last = order[q];
				break;
			}
		if (last != VGN_NONE && sp->net_of[last] == n)
			for (; j < first[t + 1]; j++)
				if (sp->net_of[order[j]] == VGN_NONE)
					sp->net_of[order[j]] = n;
	}
	vgn_tmap_free(&acc);
}
