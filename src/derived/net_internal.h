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

extern const struct vgq_derived_live vgd_net_live; /* net_live.c: Message */

#endif
