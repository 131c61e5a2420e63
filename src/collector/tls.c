/* vigild's TLS 1.3 on its TCP listener (docs/security.md "TLS"): --tls-cert, --tls-key,
 * and --tls-client-ca to require client certificates. Non-blocking: the handshake is
 * driven by the poll loop like any read, within --handshake-timeout. The Unix socket
 * stays plain (its peers' uid is their credential). */
#define _GNU_SOURCE
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "conn.h"

static SSL_CTX *ctx;

static const char *reason(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	return r ? r : "connection closed";
}

int vgd_tls_init(const char *cert, const char *key, const char *client_ca)
{
	ctx = SSL_CTX_new(TLS_server_method());
	const char *what = "TLS";
	if (!ctx)
		goto fail;
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	/* RELEASE_BUFFERS: an idle connection holds no record buffers (connection cap x
	 * per-connection memory is what peers can make vigild hold). */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
	                          SSL_MODE_RELEASE_BUFFERS);
	what = "--tls-cert";
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
		goto fail;
	what = "--tls-key";
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1)
		goto fail;
	if (client_ca) {
		what = "--tls-client-ca";
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(client_ca);
		if (!names || SSL_CTX_load_verify_locations(ctx, client_ca, NULL) != 1)
			goto fail;
		SSL_CTX_set_client_CA_list(ctx, names);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	}
	return 0;
fail:
	fprintf(stderr, "vigild: %s %s: %s\n", what,
	        !strcmp(what, "--tls-cert")  ? cert
	        : !strcmp(what, "--tls-key") ? key
	        : client_ca                  ? client_ca
	                                     : "",
	        reason());
	ERR_clear_error();
	return -1;
}

int vgd_tls_enabled(void)
{
	return ctx != NULL;
}

int vgd_tls_start(struct vgd_conn *c)
{
	SSL *ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, c->fd) != 1) {
		SSL_free(ssl);
		return -1;
	}
	c->ssl = ssl;
	c->tls_state = 1;
	return 0;
}

/* The client certificate's common name, the subject's credential (vigild.h). */
static void peer_name(struct vgd_conn *c)
{
	X509 *x = SSL_get1_peer_certificate(c->ssl);
	if (!x)
		return;
	X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, c->tls_cn,
	                          sizeof c->tls_cn);
	X509_free(x);
}

/* One SSL call's outcome: 1 go on, 0 would block (errno EAGAIN), -1 failed (c->tls_err). */
static int outcome(struct vgd_conn *c, int r)
{
	int e = SSL_get_error(c->ssl, r);
	c->tls_want_write = 0;
	if (e == SSL_ERROR_WANT_READ) {
		errno = EAGAIN;
		return 0;
	}
	if (e == SSL_ERROR_WANT_WRITE) {
		c->tls_want_write = 1;
		errno = EAGAIN;
		return 0;
	}
	if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && !ERR_peek_error())) {
		snprintf(c->tls_err, sizeof c->tls_err, "connection closed");
		c->tls_eof = 1;
	} else {
		long v = SSL_get_verify_result(c->ssl);
		snprintf(c->tls_err, sizeof c->tls_err, "TLS%s: %s%s%s; refused",
		         c->tls_state == 1 ? " handshake" : "", reason(),
		         v != X509_V_OK ? ": " : "",
		         v != X509_V_OK ? X509_verify_cert_error_string(v) : "");
	}
	ERR_clear_error();
	return -1;
}

ssize_t vgd_io_recv(struct vgd_conn *c, uint8_t *p, size_t n)
{
	if (!c->ssl)
		return recv(c->fd, p, n, MSG_DONTWAIT);
	if (c->tls_state == 1) {
		int r = SSL_accept(c->ssl);
		if (r != 1) {
			int o = outcome(c, r);
			return o == 0 ? -1 : (c->tls_eof ? 0 : -2);
		}
		c->tls_state = 2;
		peer_name(c);
	}
	/* Records come whole: read on while OpenSSL has bytes or the socket does. */
	size_t got = 0;
	while (got < n) {
		size_t k = 0;
		int r = SSL_read_ex(c->ssl, p + got, n - got, &k);
		if (r == 1) {
			got += k;
			continue;
		}
		int o = outcome(c, r);
		if (got)
			break; /* an error shows again at the next call */
		return o == 0 ? -1 : (c->tls_eof ? 0 : -2);
	}
	return (ssize_t)got;
}

ssize_t vgd_io_send(struct vgd_conn *c, const uint8_t *p, size_t n)
{
	if (!c->ssl)
		return send(c->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (c->tls_state != 2) {
		errno = EAGAIN;
		return -1;
	}
	size_t k = 0;
	int r = SSL_write_ex(c->ssl, p, n, &k);
	if (r == 1)
		return (ssize_t)k;
	return outcome(c, r) == 0 ? -1 : -2;
}

int vgd_io_pending(const struct vgd_conn *c)
{
	return c->ssl && c->tls_state == 2 && SSL_has_pending(c->ssl);
}

void vgd_tls_free(struct vgd_conn *c)
{
	if (c->ssl) {
		if (c->tls_state == 2 && !c->tls_eof)
			SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
		ERR_clear_error();
		c->ssl = NULL;
	}
}
