/* TLS 1.3 to the collector (docs/security.md "TLS"). The runtime in a subject speaks
 * plain frames to a Unix socket of `vigil record --to`, whose relay carries each
 * connection over TLS; `vigil send` and `vigil probes --collector` dial TLS themselves.
 * Configured by the environment: VIGIL_TO_CA (the CA file that signed the collector's
 * certificate: turns TLS on for HOST:PORT), VIGIL_TO_CERT and VIGIL_TO_KEY (a client
 * certificate, for a collector that requires one). */
#ifndef VIGIL_CLI_TLS_LINK_H
#define VIGIL_CLI_TLS_LINK_H

#include <stddef.h>

/* 1 when ADDR is HOST:PORT and VIGIL_TO_CA is set. */
int vg_tls_wanted(const char *addr);
/* Connects to HOST:PORT, completes a TLS 1.3 handshake verifying the collector's
 * certificate (chain to VIGIL_TO_CA, name or IP address = HOST), and returns one end
 * of a socket pair whose other end a detached thread carries over TLS: plain frames for
 * the caller. -1 with the reason in err. */
int vg_tls_dial(const char *addr, char *err, size_t errsize);

/* vigil record --to: a relay on a private Unix socket; *path gets `unix:PATH` for the
 * subjects' VIGIL_TO. Each connection to it is carried over TLS to ADDR. 0 or -1 (err). */
int vg_tls_relay_start(const char *addr, char *path, size_t pathsize, char *err, size_t errsize);
/* Stops accepting, waits until the relayed connections ended (at most wait_ms), removes
 * the socket. */
void vg_tls_relay_stop(unsigned wait_ms);

#endif
