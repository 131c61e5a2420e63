/* A command's connection to the collector vigild (docs/protocol.md). */
#ifndef VIGIL_CLI_COLLECTOR_LINK_H
#define VIGIL_CLI_COLLECTOR_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

/* Is addr HOST:PORT (port 1 to 65535) or unix:PATH? 0, or -1 with the reason in err. */
int vg_cli_check_addr(const char *addr, char *err, size_t errsize);
/* HOST:PORT or unix:PATH: a connected socket, or -1 with the reason in err. With
 * VIGIL_TO_CA set, HOST:PORT is dialled over TLS 1.3 (tls_link.h) and the socket
 * returned carries plain frames. */
int vg_cli_dial(const char *addr, char *err, size_t errsize);
int vg_cli_dial_plain(const char *addr, char *err, size_t errsize); /* never TLS */
int vg_cli_send_all(int fd, const struct vgw_buf *b);               /* 0 or -1 */
/* The next frame of type `want` (others are skipped; each read waits at most 5 s): its
 * payload in *buf (malloc'd) and *len, 0; or -1. */
int vg_cli_read_frame(int fd, uint8_t want, uint8_t **buf, uint32_t *len);

#endif
