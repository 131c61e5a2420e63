/* vigil: interaction identity for instrumented programs (docs/net.md).
 *
 * An interaction is everything one input caused. Each thread carries its current
 * interaction (a 128-bit id, W3C Trace Context's trace-id; zero: none); new threads and
 * forked children inherit it. A program marks its inputs and its messages:
 *
 *     vg_interaction_begin("keypress");   // a user input: a new interaction
 *     char tp[VG_TRACEPARENT_LEN + 1];
 *     vg_msg_send(tp, "front", len);      // records the send, fills tp: carry it along
 *     vg_msg_recv(tp_from_message, len);  // the receiving thread joins the interaction
 *
 * These work whether or not the process records (VIGIL_OUT): the identity is always
 * kept and carried, so that recorded peers can follow it; events are written only while
 * recording.
 */
#ifndef VIGIL_NET_H
#define VIGIL_NET_H

#include <stdint.h>

#include "vigil/vigil.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "00-<32 hex trace-id>-<16 hex parent-id>-01": 55 characters (and a NUL). */
#define VG_TRACEPARENT_LEN 55

typedef struct vg_iid {
	uint64_t hi, lo; /* the trace-id's first and last 8 bytes, big-endian as text */
} vg_iid;

/* A user input: starts a new interaction on the calling thread (records vg.net.input
 * with `what`) and returns it. */
VG_API vg_iid vg_interaction_begin(const char *what);

/* A message leaves: records vg.net.send (fd -1, the message's fresh parent-id in `msg`)
 * and writes into `tp` the traceparent to carry inside the message. `to` names the
 * destination for the reader of the program (not recorded). With no current interaction
 * the trace-id is all zeros ("no interaction"; flags 00). */
VG_API void vg_msg_send(char tp[VG_TRACEPARENT_LEN + 1], const char *to, uint64_t len);

/* A message arrives carrying `tp`: the calling thread joins its interaction and
 * vg.net.recv is recorded. A string from another tracer is accepted as is. Returns 0, or
 * -1 when `tp` is malformed (then nothing changes; counted in vg_net_malformed). */
VG_API int vg_msg_recv(const char *tp, uint64_t len);

/* The calling thread's current interaction, for programs that move work between
 * threads themselves (a queue of requests served by a pool): get it where the work is
 * queued, set it where it is picked up. */
VG_API vg_iid vg_interaction_get(void);
VG_API void vg_interaction_set(vg_iid iid);

/* Writes "00-<iid>-<parent>-01" (flags 00 when iid is zero) and a NUL into tp. */
VG_API void vg_traceparent_format(char tp[VG_TRACEPARENT_LEN + 1], vg_iid iid, uint64_t parent);
/* Parses a W3C traceparent (version 00 exactly; later versions may append "-..."):
 * 0 and the ids, or -1 when malformed. An all-zero trace-id parses as "no interaction"
 * (what vg_msg_send writes without one); an all-zero parent-id is malformed. */
VG_API int vg_traceparent_parse(const char *tp, vg_iid *iid, uint64_t *parent);

/* Malformed traceparents given to vg_msg_recv in this process so far. */
VG_API uint64_t vg_net_malformed(void);

#ifdef __cplusplus
}
#endif
#endif
