/* What the stored (net.c) and the live (net_live.c) network relations share. */
#ifndef VIGIL_DERIVED_NET_INTERNAL_H
#define VIGIL_DERIVED_NET_INTERNAL_H

#include "net/net.h"
#include "relations/derived.h"

struct rels {
	struct vgq_derived_ctx *c;
	const struct vgn_set *s;
	struct vgq_relation *net, *msg, *run, *wait;
};

/* Whether the trace declares vg.net.* events. */
bool vgd_net_has_events(const struct vgt_trace *t);
/* Makes Network, Message, NetRunning and NetWaiting (no tuples) in r->c. */
void vgd_net_schema(struct rels *r);
/* The set's thread of each graph thread of network n (malloc'ed), NULL on no memory. */
uint32_t *vgd_net_set_threads(const struct vgn_set *s, const struct vgn_split *sp, size_t n,
                              const struct vgn_graph *g);
/* A Message tuple for message edge x of g (its valid time), and its values (network n). */
size_t vgd_net_append_message(struct vgq_relation *m, const struct vgn_graph *g,
                              const struct vgn_gedge *x);
void vgd_net_fill_message(struct rels *r, struct vgq_relation *m, size_t t, size_t n,
                          const struct vgn_graph *g, const struct vgn_gedge *x,
                          const uint32_t *thr);

/* Network's tuple of network n (its graph g and g's stats). */
void vgd_net_add_network(struct rels *r, const struct vgn_split *sp, size_t n,
                         const struct vgn_graph *g, const struct vgn_stats *st);
/* Per vertex of g: received a message from another thread of g (malloc'ed; NULL on no
 * memory): the thread edge into it is NetWaiting, else NetRunning. */
bool *vgd_net_waited(const struct vgn_graph *g);
/* A NetRunning or NetWaiting tuple (rel) for thread edge x of g, network n; its index. */
size_t vgd_net_fill_thread_edge(struct rels *r, struct vgq_relation *rel, size_t n,
                                const struct vgn_graph *g, const struct vgn_gedge *x,
                                const uint32_t *thr);

/* The same tuples made from the set (r->s) without a graph, as the graph's would be (the
 * live path, net_live.c): the Message of matched pair x in network n (both its events
 * vertices of n), and the NetRunning/NetWaiting tuple (rel) of thread edge a -> b. */
size_t vgd_net_message_of_pair(struct rels *r, struct vgq_relation *m, size_t n,
                               const struct vgn_msg *x);
size_t vgd_net_run_of_events(struct rels *r, struct vgq_relation *rel, size_t n, uint32_t a,
                             uint32_t b);

extern const struct vgq_derived_live vgd_net_live; /* net_live.c */

#endif
