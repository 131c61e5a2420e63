/* Helpers shared by the files of src/net (not part of its interface). */
#ifndef VIGIL_NET_INTERNAL_H
#define VIGIL_NET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"

/* Out of memory in an analysis command: one line and exit status 2. */
#include "base/alloc.h" /* vgb_xcalloc, vgb_xrealloc */
#include "base/intern.h"

struct json_t;
/* A JSON string of text from a trace (bytes that are not UTF-8 become '?'). */
struct json_t *vgn_json_text(const char *s);

/* Grows *arr (element size `size`) so that it holds at least need elements. */
#define VGN_GROW(arr, cap, need)                                                                   \
	do {                                                                                       \
		if ((need) > (cap)) {                                                              \
			size_t c_ = (cap) ? (cap)*2 : 16;                                          \
			while (c_ < (need))                                                        \
				c_ *= 2;                                                           \
			(arr) = vgb_xrealloc((arr), c_, sizeof *(arr));                            \
			(cap) = c_;                                                                \
		}                                                                                  \
	} while (0)

/* Per-thread event lists in time order (set.c): thread t's events are
 * order[first[t] .. first[t+1]). */
struct vgn_order {
	uint32_t *order, *first;
};
void vgn_order_build(const struct vgn_set *s, struct vgn_order *o, int corrected);
void vgn_order_free(struct vgn_order *o);

/* Matching (match.c, shared.c): adds the pair (send, recv) of `bytes` overlapping bytes,
 * beginning at send_at within the send and recv_at within the receive, unless both are
 * on one host and the receive is dated before the send (refused and counted). */
void vgn__add_pair(struct vgn_set *s, size_t *cap, uint32_t snd, uint32_t rcv, uint64_t bytes,
                   bool explicit_id, uint64_t send_at, uint64_t recv_at);
/* Channels (a pipe, a direction of a socket) written or read through several connection
 * records: matched in time order (docs/net.md "Shared pipes and sockets"). Marks the
 * connections it matched in recv_done (as receivers) and send_done (as senders). */
void vgn__match_shared(struct vgn_set *s, size_t *cap, bool *send_done, bool *recv_done);

/* Numbers the split's networks in the order of the events that began them (began[n] for
 * network n as the walk made it): time, then host, process, thread and place in its
 * stream (number.c). */
void vgn_split_number(const struct vgn_set *s, struct vgn_split *sp, const uint32_t *began);

#endif
