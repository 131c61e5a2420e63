/* vigil send: shipping spools to the collector (docs/protocol.md "Subjects"). */
#ifndef VIGIL_CLI_SEND_H
#define VIGIL_CLI_SEND_H

/* Ships, and removes, every spool of this user in /dev/shm and /tmp none of whose
 * processes still runs (`vigil record --to` at its start). One line per spool. */
void vg_send_leftovers(const char *to);

#endif
