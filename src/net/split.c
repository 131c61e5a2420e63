/* Propagation of interactions (Ashton's insplit, docs/net.md "Propagation"): an input
 * starts a new interaction on its thread; a message, a new thread and a forked child
 * belong to the interaction of the thread that sent or made them; a thread that receives a
 * message joins the message's interaction.
 *
 * Threads are walked each in its own time order; a receive waits until the sends it
 * matches have been walked, and a new thread's first event until its creator has got past
 * that time, so interactions flow along messages even when clocks disagree a little. If
 * everything is waiting (matches that contradict each other), the earliest waiting event
 * goes first and is counted in `forced`. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

int vgn_inputs_parse(const char *list, unsigned *mask, char *err, size_t errsize)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"instrumented", VGN_IN_INSTRUMENTED},
	             {"tty", VGN_IN_TTY},
	             {"stdin", VGN_IN_STDIN},
	             {"accept", VGN_IN_ACCEPT},
	             {"connect", VGN_IN_CONNECT},
	             {"all", VGN_IN_ALL}};
	*mask = 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned bit = 0;
		for (size_t i = 0; i < sizeof names / sizeof *names; i++)
			if (strlen(names[i].name) == n && !strncmp(names[i].name, p, n))
				bit = names[i].bit;
		if (!bit) {
			snprintf(err, errsize,
			         "unknown input kind '%.*s' (instrumented, tty, stdin, accept, "
			         "connect, all)",
			         (int)n, p);
			return -1;
		}
		*mask |= bit;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask) {
		snprintf(err, errsize, "empty list of input kinds");
		return -1;
	}
	return 0;
}

int vgn_per_parse(const char *name, unsigned *bits, char *err, size_t errsize)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"exchange", VGN_PER_EXCHANGE},
	             {"connection", VGN_PER_CONNECTION},
	             {"process", VGN_PER_PROCESS}};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(names[i].name, name)) {
			*bits = names[i].bit;
			return 0;
		}
	snprintf(err, errsize, "unknown unit '%s' (exchange, connection, process)", name);
	return -1;
}

struct walk {
	const struct vgn_set *s;
	struct vgn_split *sp;
	struct vgn_order ord;
	uint32_t *cursor;  /* per thread: position in its order */
	uint32_t *cur;     /* per thread: its current interaction */
	uint32_t *born_in; /* per thread: the interaction of its first event */
	bool *done;        /* per event */
	bool *conn_input;  /* per conn: the last receive on it was an unanswered input */
	/* Replies of servers that serve several connections in one thread (event loops):
	 * per accepted conn, the interaction of its latest request and the receive count
	 * of the thread when it began answering it; per thread, its receives so far. */
	uint32_t *pending, *answered_at, *recvs;
	/* per conn: the server's end (accepted here or before a fork, or first seen on I/O
	 * with the names of an accepted end: exec'd, passed over SCM_RIGHTS) */
	bool *server;
	/* What one input is (docs/net.md): per conn (and per process for `process`), the
	 * interaction its client's requests started, or VGN_NONE */
	unsigned per, per_accept; /* for `connect` inputs (a recorded client), `accept` ones */
	uint32_t *unit_conn, *unit_proc;
	uint32_t *conn_ev;    /* per conn: its vg.net.conn event */
	uint32_t *began;      /* per network: the event that began it (its input may move) */
	struct vgn_tmap iids; /* interaction id -> network */
	/* pipe name -> the only process holding it, or VGN_NONE - 1 if several did */
	struct vgn_tmap shared;
	size_t cap_inputs;
};

static uint32_t new_net(struct walk *w, uint32_t ev)
{
	struct vgn_split *sp = w->sp;
	size_t cap = w->cap_inputs;
	VGN_GROW(sp->inputs, w->cap_inputs, sp->nnets + 1);
	VGN_GROW(w->began, cap, sp->nnets + 1);
	sp->inputs[sp->nnets] = w->began[sp->nnets] = ev;
	const struct vgn_event *e = &w->s->events[ev];
	if ((e->iid_hi || e->iid_lo) && vgn_tmap_get(&w->iids, e->iid_hi, e->iid_lo, 0) == VGN_NONE)
		vgn_tmap_put(&w->iids, e->iid_hi, e->iid_lo, 0, (uint32_t)sp->nnets);
	return (uint32_t)sp->nnets++;
}

/* Creators: a thread's creator is the only other thread of its process alive when it
 * began (not ended: docs/net.md "Network numbers"); a process's first thread was made by the only
 * thread alive then in the parent process (ppid on the same host). Anything ambiguous: unknown (the
 * recording does not say which thread called pthread_create or fork). */
static void find_creators(struct walk *w)
{
	const struct vgn_set *s = w->s;
	const struct vgn_order *o = &w->ord;
	size_t nt = s->nthreads;
	int64_t *first = vgb_xcalloc(nt ? nt : 1, sizeof *first);
	int64_t *last = vgb_xcalloc(nt ? nt : 1, sizeof *last);
	/* A thread is alive from its first event until its end, or its process's: a
	 * thread whose end is not recorded (yet) is alive to the end of the trace, so that
	 * a prefix of the trace finds the creators the whole trace finds (number.c). */
	int64_t *proc_end = vgb_xcalloc(s->nprocs + 1, sizeof *proc_end);
	for (size_t p = 0; p < s->nprocs; p++)
		proc_end[p] = INT64_MAX;
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VGN_PROC_END) {
			uint32_t p = s->threads[s->events[i].thread].proc;
			if (s->events[i].ts < proc_end[p])
				proc_end[p] = s->events[i].ts;
		}
	for (size_t t = 0; t < nt; t++) {
		first[t] = INT64_MAX;
		last[t] = INT64_MIN;
		w->sp->creator[t] = VGN_NONE;
		if (o->first[t] < o->first[t + 1]) {
			first[t] = s->events[o->order[o->first[t]]].ts;
			last[t] = proc_end[s->threads[t].proc];
			for (uint32_t k = o->first[t]; k < o->first[t + 1]; k++)
				if (s->events[o->order[k]].kind == VGN_THREAD_END &&
				    s->events[o->order[k]].ts < last[t])
					last[t] = s->events[o->order[k]].ts;
		}
	}
	free(proc_end);
	/* threads by process */
	size_t np = s->nprocs;
	uint32_t *pfirst = vgb_xcalloc(np + 1, sizeof *pfirst),
	         *pth = vgb_xcalloc(nt ? nt : 1, sizeof *pth);
	for (size_t t = 0; t < nt; t++)
		pfirst[s->threads[t].proc + 1]++;
	for (size_t p = 0; p < np; p++)
		pfirst[p + 1] += pfirst[p];
	uint32_t *fill = vgb_xcalloc(np + 1, sizeof *fill);
	for (size_t t = 0; t < nt; t++) {
		uint32_t p = s->threads[t].proc;
		pth[pfirst[p] + fill[p]++] = (uint32_t)t;
	}
	for (size_t t = 0; t < nt; t++) {
		if (first[t] == INT64_MAX)
			continue;
		uint32_t p = s->threads[t].proc, cand = VGN_NONE;
		int n = 0;
		bool earlier = false; /* another thread of the process began before */
		for (uint32_t k = pfirst[p]; k < pfirst[p + 1]; k++) {
			uint32_t u = pth[k];
			if (u == t || first[u] == INT64_MAX)
				continue;
			if (first[u] < first[t] || (first[u] == first[t] && u < t)) {
				earlier = true;
				if (last[u] >= first[t]) {
					cand = u;
					n++;
				}
			}
		}
		if (earlier) {
			if (n == 1)
				w->sp->creator[t] = cand;
			continue;
		}
		/* the process's first thread: its parent process's only live thread */
		const struct vgn_proc *pr = &s->procs[p];
		if (pr->ppid <= 0)
			continue;
		for (size_t q = 0; q < np; q++) {
			if (q == p || s->procs[q].host != pr->host || s->procs[q].pid != pr->ppid)
				continue;
			for (uint32_t k = pfirst[q]; k < pfirst[q + 1]; k++) {
				uint32_t u = pth[k];
				if (first[u] <= first[t] && last[u] >= first[t]) {
					cand = u;
					n++;
				}
			}
		}
		if (n == 1)
			w->sp->creator[t] = cand;
	}
	free(first);
	free(last);
	free(pfirst);
	free(pth);
	free(fill);
}

static bool ready(const struct walk *w, uint32_t t, uint32_t ev)
{
	const struct vgn_set *s = w->s;
	const struct vgn_split *sp = w->sp;
	if (s->events[ev].kind == VGN_RECV)
		for (uint32_t k = sp->msg_first[ev]; k < sp->msg_first[ev + 1]; k++)
			if (!w->done[s->msgs[sp->pair[k]].send])
				return false;
	uint32_t c = sp->creator[t];
	if (c != VGN_NONE && w->cursor[t] == w->ord.first[t]) {
		uint32_t pc = w->cursor[c];
		if (pc < w->ord.first[c + 1] && s->events[w->ord.order[pc]].ts <= s->events[ev].ts)
			return false;
	}
	return true;
}

/* Did thread t start interaction n itself, by a request (a `connect` input)? Then it is
 * the client of n, reading n's replies, not serving it. */
static bool client_of(const struct walk *w, uint32_t t, uint32_t n)
{
	const struct vgn_event *in = &w->s->events[w->sp->inputs[n]];
	return (in->kind == VGN_SEND || in->kind == VGN_CONN) && in->thread == t;
}

/* May event x of thread t join a network begun later? If it is in none, or it is a
 * connection's opening or closing (not a vertex) while the thread was a client that had
 * read its reply. */
static bool movable(const struct walk *w, uint32_t t, uint32_t x)
{
	uint32_t n = w->sp->net_of[x];
	int k = w->s->events[x].kind;
	return n == VGN_NONE || ((k == VGN_CONN || k == VGN_CLOSE) && client_of(w, t, n));
}

/* Per connection (or process), a client's input is the connect its connection began with
 * rather than its first request: the server may accept (and fork) before the client
 * sends. Only when the thread did nothing in any network since the connect. */
static void input_at_connect(struct walk *w, uint32_t t, uint32_t conn, uint32_t n)
{
	const struct vgn_set *s = w->s;
	struct vgn_split *sp = w->sp;
	uint32_t cv = w->conn_ev[conn], j = w->cursor[t];
	if (cv == VGN_NONE || s->events[cv].thread != t)
		return;
	while (j > w->ord.first[t] && w->ord.order[j - 1] != cv)
		if (!movable(w, t, w->ord.order[--j]))
			return;
	if (j == w->ord.first[t] || !movable(w, t, cv))
		return;
	for (j--; j < w->cursor[t]; j++)
		sp->net_of[w->ord.order[j]] = n;
	sp->inputs[n] = cv;
	sp->conn_vertex[cv] = true;
}

static void visit(struct walk *w, uint32_t t, uint32_t ev, unsigned mask)
{
	const struct vgn_set *s = w->s;
	struct vgn_split *sp = w->sp;
	const struct vgn_event *e = &s->events[ev];
	bool first = w->cursor[t] == w->ord.first[t];
	uint32_t reply = VGN_NONE;
	if (first) { /* the thread's first event */
		uint32_t c = sp->creator[t];
		if (c != VGN_NONE) {
			/* the creator's interaction when it made this thread (it may have run
			 * ahead since): that of its last event at or before this one */
			uint32_t lo = w->ord.first[c], hi = w->ord.first[c + 1];
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (s->events[w->ord.order[mid]].cts <= e->cts)
					lo = mid + 1;
				else
					hi = mid;
			}
			w->cur[t] =
			    lo > w->ord.first[c] ? sp->net_of[w->ord.order[lo - 1]] : VGN_NONE;
		} else if (e->iid_hi || e->iid_lo)
			w->cur[t] = vgn_tmap_get(&w->iids, e->iid_hi, e->iid_lo, 0);
	}
	const struct vgn_conn *cn = vgn_event_conn(s, ev);
	switch (e->kind) {
	case VGN_INPUT:
		if (mask & VGN_IN_INSTRUMENTED)
			w->cur[t] = new_net(w, ev);
		break;
	case VGN_SEND:
		if (e->conn != VGN_NONE)
			w->conn_input[e->conn] = false;
		/* A reply: a send on an accepted connection whose latest request is not yet
		 * answered (no other receive by this thread since it began answering) belongs
		 * to that request's interaction, whatever the thread read in between. */
		if (cn && w->server[e->conn] && w->pending[e->conn] != VGN_NONE &&
		    (w->answered_at[e->conn] == VGN_NONE ||
		     w->answered_at[e->conn] == w->recvs[t])) {
			reply = w->pending[e->conn];
			w->answered_at[e->conn] = w->recvs[t];
		}
		/* A client's request: a thread that serves no interaction (none, or one it
		 * started itself by an earlier request and whose reply it has read) sends on a
		 * connection its process opened. A server's call to another server is part of
		 * the interaction it serves. */
		if ((mask & VGN_IN_CONNECT) && cn && !strcmp(cn->role, "connect") &&
		    (w->cur[t] == VGN_NONE || client_of(w, t, w->cur[t])) &&
		    !(e->iid_hi || e->iid_lo)) {
			/* per connection or process run: a request after the first on the
			 * same connection (process) goes on with the first's interaction */
			uint32_t *unit = w->per == VGN_PER_CONNECTION ? &w->unit_conn[e->conn]
			                 : w->per == VGN_PER_PROCESS
			                     ? &w->unit_proc[s->threads[t].proc]
			                     : NULL;
			if (unit && *unit != VGN_NONE) {
				w->cur[t] = *unit;
				break;
			}
			w->cur[t] = new_net(w, ev);
			if (unit) {
				*unit = w->cur[t];
				input_at_connect(w, t, e->conn, w->cur[t]);
			}
			sp->net_of[ev] = w->cur[t];
			if (first)
				w->born_in[t] = w->cur[t];
			w->done[ev] = true;
			w->cursor[t]++;
			return;
		}
		break;
	case VGN_RECV:
		/* a pipe on fd 0 that no other recorded process held (its writer was not
		 * recorded: `printf ... | vigil record -- prog`) is stdin too */
		if (cn && !strcmp(cn->kind, "tty") && (mask & VGN_IN_TTY) && e->partial) {
			/* part of a line still being typed: no input yet, the line's end is */
			w->cur[t] = VGN_NONE;
		} else if (cn &&
		           ((!strcmp(cn->kind, "tty") && (mask & VGN_IN_TTY)) ||
		            (!strcmp(cn->kind, "stdin") && (mask & VGN_IN_STDIN)) ||
		            (e->fd == 0 && !strcmp(cn->kind, "pipe") && (mask & VGN_IN_STDIN) &&
		             sp->msg_first[ev] == sp->msg_first[ev + 1] &&
		             vgn_tmap_get(&w->shared, (uintptr_t)cn->local, 0, 0) == cn->proc))) {
			w->cur[t] = new_net(w, ev);
		} else if (sp->msg_first[ev] < sp->msg_first[ev + 1]) {
			/* joins the interaction of the earliest send it matches */
			uint32_t best = VGN_NONE;
			for (uint32_t k = sp->msg_first[ev]; k < sp->msg_first[ev + 1]; k++) {
				uint32_t snd = s->msgs[sp->pair[k]].send;
				if (best == VGN_NONE || s->events[snd].cts < s->events[best].cts)
					best = snd;
			}
			w->cur[t] = sp->net_of[best];
		} else if (cn && w->server[e->conn] && (mask & VGN_IN_ACCEPT)) {
			/* bytes from a peer nobody recorded: a request from outside; the rest of
			 * it (more receives before this side answers) is the same input, and
			 * per connection (or process) everything the connection carries */
			if (w->per_accept != VGN_PER_EXCHANGE && w->unit_conn[e->conn] != VGN_NONE)
				w->cur[t] = w->unit_conn[e->conn];
			else if (!w->conn_input[e->conn])
				w->cur[t] = w->unit_conn[e->conn] = new_net(w, ev);
			w->conn_input[e->conn] = true;
		} else if (e->msg && (e->iid_hi || e->iid_lo)) {
			uint32_t n = vgn_tmap_get(&w->iids, e->iid_hi, e->iid_lo, 0);
			if (n != VGN_NONE)
				w->cur[t] = n;
		}
		break;
	default:
		break;
	}
	/* An instrumented program's own interaction id is the truth (it also follows work
	 * handed between threads, vg_interaction_set), except where a receive was matched:
	 * bytes read before the program parsed the traceparent carry the previous id. */
	if ((mask & VGN_IN_INSTRUMENTED) && (e->iid_hi || e->iid_lo) &&
	    !(e->kind == VGN_RECV && sp->msg_first[ev] < sp->msg_first[ev + 1]) &&
	    e->kind != VGN_INPUT) {
		uint32_t n = vgn_tmap_get(&w->iids, e->iid_hi, e->iid_lo, 0);
		if (n != VGN_NONE)
			w->cur[t] = n;
	}
	sp->net_of[ev] = reply != VGN_NONE ? reply : w->cur[t];
	if (first)
		w->born_in[t] = w->cur[t];
	if (e->kind == VGN_RECV) {
		w->recvs[t]++;
		if (cn && w->server[e->conn]) {
			w->pending[e->conn] = w->cur[t];
			w->answered_at[e->conn] = VGN_NONE;
		}
	}
	/* A thread's or process's end belongs to an interaction only if the thread began
	 * in it: a server's exit is not part of the last request it served. */
	if ((e->kind == VGN_THREAD_END || e->kind == VGN_PROC_END) && w->born_in[t] != w->cur[t])
		sp->net_of[ev] = VGN_NONE;
	w->done[ev] = true;
	w->cursor[t]++;
}

/* Per conn: is it a server's end? Accepted (a fork child keeps the role), or first seen
 * on I/O (an exec'd server, a descriptor passed over SCM_RIGHTS) with the names of an
 * end accepted on the same host. */
static bool *server_ends(const struct vgn_set *s)
{
	bool *server = vgb_xcalloc(s->nconns + 1, sizeof *server);
	struct vgn_tmap acc;
	vgn_tmap_init(&acc);
	for (size_t c = 0; c < s->nconns; c++) {
		const struct vgn_conn *cn = &s->conns[c];
		server[c] = !strcmp(cn->role, "accept");
		if (server[c])
			vgn_tmap_put(&acc, s->procs[cn->proc].host, (uintptr_t)cn->local,
			             (uintptr_t)cn->remote, 1);
	}
	for (size_t c = 0; c < s->nconns; c++) {
		const struct vgn_conn *cn = &s->conns[c];
		if (!strcmp(cn->role, "inherited") && cn->local[0] &&
		    vgn_tmap_get(&acc, s->procs[cn->proc].host, (uintptr_t)cn->local,
		                 (uintptr_t)cn->remote) != VGN_NONE)
			server[c] = true;
	}
	vgn_tmap_free(&acc);
	return server;
}

static void build_msg_index(const struct vgn_set *s, struct vgn_split *sp)
{
	sp->msg_first = vgb_xcalloc(s->nevents + 1, sizeof *sp->msg_first);
	sp->pair = vgb_xcalloc(2 * s->nmsgs + 1, sizeof *sp->pair);
	for (size_t i = 0; i < s->nmsgs; i++) {
		sp->msg_first[s->msgs[i].send + 1]++;
		sp->msg_first[s->msgs[i].recv + 1]++;
	}
	for (size_t e = 0; e < s->nevents; e++)
		sp->msg_first[e + 1] += sp->msg_first[e];
	uint32_t *fill = vgb_xcalloc(s->nevents + 1, sizeof *fill);
	for (size_t i = 0; i < s->nmsgs; i++) {
		uint32_t a = s->msgs[i].send, b = s->msgs[i].recv;
		sp->pair[sp->msg_first[a] + fill[a]++] = (uint32_t)i;
		sp->pair[sp->msg_first[b] + fill[b]++] = (uint32_t)i;
	}
	free(fill);
}

/* Connections and closes are not vertices, but for the accepts of forking servers. */
static bool structural(const struct vgn_split *sp, int kind, uint32_t ev)
{
	return (kind != VGN_CONN && kind != VGN_CLOSE) || (sp->conn_vertex && sp->conn_vertex[ev]);
}

/* Buckets by network, and the runs (segments) of each thread in one network. */
static void build_buckets(struct walk *w)
{
	const struct vgn_set *s = w->s;
	struct vgn_split *sp = w->sp;
	sp->first = vgb_xcalloc(sp->nnets + 2, sizeof *sp->first);
	sp->segment = vgb_xcalloc(s->nevents + 1, sizeof *sp->segment);
	size_t n = 0;
	uint32_t seg = 0;
	for (size_t t = 0; t < s->nthreads; t++) {
		uint32_t last = VGN_NONE - 1;
		seg++;
		for (uint32_t k = w->ord.first[t]; k < w->ord.first[t + 1]; k++) {
			uint32_t ev = w->ord.order[k];
			if (!structural(sp, s->events[ev].kind, ev)) {
				sp->segment[ev] = seg;
				continue;
			}
			if (sp->net_of[ev] != last)
				seg++;
			last = sp->net_of[ev];
			sp->segment[ev] = seg;
			if (last != VGN_NONE) {
				sp->first[last + 1]++;
				n++;
			} else {
				sp->outside++;
			}
		}
	}
	for (size_t i = 0; i < sp->nnets; i++)
		sp->first[i + 1] += sp->first[i];
	sp->events = vgb_xcalloc(n + 1, sizeof *sp->events);
	uint32_t *fill = vgb_xcalloc(sp->nnets + 1, sizeof *fill);
	for (size_t t = 0; t < s->nthreads; t++)
		for (uint32_t k = w->ord.first[t]; k < w->ord.first[t + 1]; k++) {
			uint32_t ev = w->ord.order[k], net = sp->net_of[ev];
			if (net != VGN_NONE && structural(sp, s->events[ev].kind, ev))
				sp->events[sp->first[net] + fill[net]++] = ev;
		}
	free(fill);
}

int vgn_split_run(const struct vgn_set *s, unsigned mask, struct vgn_split *sp)
{
	memset(sp, 0, sizeof *sp);
	struct walk w = {.s = s, .sp = sp};
	vgn_order_build(s, &w.ord, 1);
	size_t nt = s->nthreads ? s->nthreads : 1;
	sp->net_of = vgb_xcalloc(s->nevents + 1, sizeof *sp->net_of);
	sp->creator = vgb_xcalloc(nt, sizeof *sp->creator);
	w.cursor = vgb_xcalloc(nt, sizeof *w.cursor);
	w.cur = vgb_xcalloc(nt, sizeof *w.cur);
	w.born_in = vgb_xcalloc(nt, sizeof *w.born_in);
	w.done = vgb_xcalloc(s->nevents + 1, sizeof *w.done);
	w.conn_input = vgb_xcalloc(s->nconns + 1, sizeof *w.conn_input);
	w.pending = vgb_xcalloc(s->nconns + 1, sizeof *w.pending);
	w.answered_at = vgb_xcalloc(s->nconns + 1, sizeof *w.answered_at);
	w.recvs = vgb_xcalloc(nt, sizeof *w.recvs);
	/* default: a recorded client's connection is one input; a request from a client
	 * not recorded is one (its connection and process are not seen) */
	w.per = mask & VGN_PER_MASK ? mask & VGN_PER_MASK : VGN_PER_CONNECTION;
	w.per_accept = mask & VGN_PER_MASK ? mask & VGN_PER_MASK : VGN_PER_EXCHANGE;
	w.unit_conn = vgb_xcalloc(s->nconns + 1, sizeof *w.unit_conn);
	w.unit_proc = vgb_xcalloc(s->nprocs + 1, sizeof *w.unit_proc);
	for (size_t c = 0; c <= s->nconns; c++)
		w.pending[c] = w.answered_at[c] = w.unit_conn[c] = VGN_NONE;
	for (size_t p = 0; p <= s->nprocs; p++)
		w.unit_proc[p] = VGN_NONE;
	w.server = server_ends(s);
	sp->conn_vertex = vgb_xcalloc(s->nevents + 1, sizeof *sp->conn_vertex);
	w.conn_ev = vgb_xcalloc(s->nconns + 1, sizeof *w.conn_ev);
	for (size_t c = 0; c <= s->nconns; c++)
		w.conn_ev[c] = VGN_NONE;
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VGN_CONN && s->events[i].conn != VGN_NONE)
			w.conn_ev[s->events[i].conn] = (uint32_t)i;
	vgn_tmap_init(&w.iids);
	vgn_tmap_init(&w.shared);
	for (size_t c = 0; c < s->nconns; c++) {
		uint64_t k = (uintptr_t)s->conns[c].local;
		uint32_t p = vgn_tmap_get(&w.shared, k, 0, 0);
		if (p == VGN_NONE)
			vgn_tmap_put(&w.shared, k, 0, 0, s->conns[c].proc);
		else if (p != s->conns[c].proc)
			vgn_tmap_put(&w.shared, k, 0, 0, VGN_NONE - 1);
	}
	build_msg_index(s, sp);
	find_creators(&w);
	for (size_t t = 0; t < s->nthreads; t++) {
		w.cursor[t] = w.ord.first[t];
		w.cur[t] = VGN_NONE;
	}
	/* A work list of threads that may advance: a send wakes the threads that receive it,
	 * a thread's progress wakes the threads it made. */
	uint32_t *queue = vgb_xcalloc(nt, sizeof *queue);
	bool *queued = vgb_xcalloc(nt, sizeof *queued);
	uint32_t *kfirst = vgb_xcalloc(nt + 1, sizeof *kfirst),
	         *kids = vgb_xcalloc(nt, sizeof *kids);
	for (size_t t = 0; t < s->nthreads; t++)
		if (sp->creator[t] != VGN_NONE)
			kfirst[sp->creator[t] + 1]++;
	for (size_t t = 0; t < s->nthreads; t++)
		kfirst[t + 1] += kfirst[t];
	uint32_t *kfill = vgb_xcalloc(nt, sizeof *kfill);
	for (size_t t = 0; t < s->nthreads; t++)
		if (sp->creator[t] != VGN_NONE)
			kids[kfirst[sp->creator[t]] + kfill[sp->creator[t]]++] = (uint32_t)t;
	free(kfill);
	size_t qh = 0, qn = 0; /* ring */
#define PUSH(th)                                                                                   \
	do {                                                                                       \
		if (!queued[th]) {                                                                 \
			queued[th] = true;                                                         \
			queue[(qh + qn++) % nt] = (th);                                            \
		}                                                                                  \
	} while (0)
	for (uint32_t t = 0; t < s->nthreads; t++)
		PUSH(t);
	size_t left = s->nevents;
	while (left) {
		while (qn) {
			uint32_t t = queue[qh];
			qh = (qh + 1) % nt;
			qn--;
			queued[t] = false;
			bool moved = false;
			while (w.cursor[t] < w.ord.first[t + 1]) {
				uint32_t ev = w.ord.order[w.cursor[t]];
				if (!ready(&w, t, ev))
					break;
				visit(&w, t, ev, mask);
				left--;
				moved = true;
				if (s->events[ev].kind == VGN_SEND)
					for (uint32_t k = sp->msg_first[ev];
					     k < sp->msg_first[ev + 1]; k++)
						PUSH(s->events[s->msgs[sp->pair[k]].recv].thread);
			}
			if (moved)
				for (uint32_t k = kfirst[t]; k < kfirst[t + 1]; k++)
					PUSH(kids[k]);
		}
		if (!left)
			break;
		/* everything waits: the earliest waiting event goes first */
		uint32_t bt = VGN_NONE, bev = 0;
		for (uint32_t t = 0; t < s->nthreads; t++)
			if (w.cursor[t] < w.ord.first[t + 1]) {
				uint32_t ev = w.ord.order[w.cursor[t]];
				if (bt == VGN_NONE || s->events[ev].cts < s->events[bev].cts) {
					bt = t;
					bev = ev;
				}
			}
		/* a receive whose send was not walked yet joins that send's thread's
		 * interaction as it is now: the best guess there is */
		for (uint32_t k = sp->msg_first[bev]; k < sp->msg_first[bev + 1]; k++) {
			uint32_t snd = s->msgs[sp->pair[k]].send;
			if (!w.done[snd])
				sp->net_of[snd] = w.cur[s->events[snd].thread];
		}
		visit(&w, bt, bev, mask);
		left--;
		sp->forced++;
		for (uint32_t t = 0; t < s->nthreads; t++)
			PUSH(t);
	}
#undef PUSH
	vgn_split_number(s, sp, w.began);
	free(w.began);
	free(queue);
	free(queued);
	free(kfirst);
	free(kids);
	vgn_split_forks(s, sp, w.ord.order, w.ord.first);
	build_buckets(&w);
	sp->thread_first = vgb_xcalloc(nt, sizeof *sp->thread_first);
	for (size_t t = 0; t < s->nthreads; t++)
		sp->thread_first[t] =
		    w.ord.first[t] < w.ord.first[t + 1] ? w.ord.order[w.ord.first[t]] : VGN_NONE;
	vgn_tmap_free(&w.iids);
	vgn_tmap_free(&w.shared);
	vgn_order_free(&w.ord);
	free(w.cursor);
	free(w.cur);
	free(w.born_in);
	free(w.done);
	free(w.conn_input);
	free(w.pending);
	free(w.answered_at);
	free(w.recvs);
	free(w.server);
	free(w.unit_conn);
	free(w.unit_proc);
	free(w.conn_ev);
	return 0;
}

void vgn_split_free(struct vgn_split *sp)
{
	free(sp->inputs);
	free(sp->net_of);
	free(sp->creator);
	free(sp->thread_first);
	free(sp->first);
	free(sp->events);
	free(sp->segment);
	free(sp->msg_first);
	free(sp->pair);
	free(sp->conn_vertex);
	memset(sp, 0, sizeof *sp);
}

const char *vgn_input_kind(const struct vgn_set *s, uint32_t ev)
{
	const struct vgn_event *e = &s->events[ev];
	if (e->kind == VGN_INPUT)
		return "instrumented";
	if (e->kind == VGN_SEND || e->kind == VGN_CONN)
		return "connect";
	const struct vgn_conn *cn = vgn_event_conn(s, ev);
	if (cn && (!strcmp(cn->kind, "tty") || !strcmp(cn->kind, "stdin")))
		return cn->kind;
	if (cn && e->kind == VGN_RECV && e->fd == 0 && !strcmp(cn->kind, "pipe"))
		return "stdin"; /* from a writer not recorded */
	return "accept";
}
