/* TLS 1.3 to the collector for the CLI (tls_link.h). Why a relay, not TLS in the
 * runtime: libvigil.so lives inside unmodified programs and depends on libc and
 * pthreads only; loading libssl into them could clash with their own OpenSSL and would
 * put a handshake on their exit path. So TLS lives in the vigil process that talks
 * TCP across machines, and the subjects talk to it over a private Unix socket. */
#define _GNU_SOURCE
#include "cli/tls_link.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/collector_link.h"

#define BUF (64u << 10)

static SSL_CTX *ctx;
static char ctx_err[512];
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;

int vg_tls_wanted(const char *addr)
{
	const char *ca = getenv("VIGIL_TO_CA");
	return ca && *ca && strncmp(addr, "unix:", 5) != 0;
}

static const char *last_reason(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	return r ? r : "connection closed";
}

static void make_ctx(void)
{
	const char *ca = getenv("VIGIL_TO_CA"), *cert = getenv("VIGIL_TO_CERT"),
	           *key = getenv("VIGIL_TO_KEY");
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	if (!c) {
		snprintf(ctx_err, sizeof ctx_err, "TLS: %s", last_reason());
		return;
	}
	SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION);
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (SSL_CTX_load_verify_locations(c, ca, NULL) != 1) {
		snprintf(ctx_err, sizeof ctx_err, "VIGIL_TO_CA %s: cannot load it: %s", ca,
		         last_reason());
	} else if ((cert && *cert) != (key && *key)) {
		snprintf(ctx_err, sizeof ctx_err,
		         "VIGIL_TO_CERT and VIGIL_TO_KEY go together (a client certificate)");
	} else if (cert && *cert && SSL_CTX_use_certificate_chain_file(c, cert) != 1) {
		snprintf(ctx_err, sizeof ctx_err, "VIGIL_TO_CERT %s: cannot load it: %s", cert,
		         last_reason());
	} else if (key && *key && SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) != 1) {
		snprintf(ctx_err, sizeof ctx_err, "VIGIL_TO_KEY %s: cannot load it: %s", key,
		         last_reason());
	} else if (key && *key && SSL_CTX_check_private_key(c) != 1) {
		snprintf(ctx_err, sizeof ctx_err, "VIGIL_TO_KEY %s does not match VIGIL_TO_CERT",
		         key);
	} else {
		ctx = c;
		return;
	}
	ERR_clear_error();
	SSL_CTX_free(c);
}

/* TCP, then the handshake (bounded by 5 s each way): the SSL, or NULL with err. */
static SSL *tls_connect(const char *addr, char *err, size_t errsize)
{
	pthread_once(&ctx_once, make_ctx);
	if (!ctx) {
		snprintf(err, errsize, "%s", ctx_err);
		return NULL;
	}
	int fd = vg_cli_dial_plain(addr, err, errsize);
	if (fd < 0)
		return NULL;
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	char host[256];
	const char *colon = strrchr(addr, ':');
	snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	SSL *ssl = SSL_new(ctx);
	if (!ssl || SSL_set_fd(ssl, fd) != 1) {
		snprintf(err, errsize, "TLS: %s", last_reason());
		goto fail;
	}
	/* The certificate must name what we dialled: an IP address or a DNS name. */
	X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
	if (X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1) {
		SSL_set_tlsext_host_name(ssl, host);
		SSL_set1_host(ssl, host);
	}
	if (SSL_connect(ssl) != 1) {
		long v = SSL_get_verify_result(ssl);
		if (v != X509_V_OK)
			snprintf(
			    err, errsize,
			    "TLS: the collector's certificate is not trusted: %s (VIGIL_TO_CA)",
			    X509_verify_cert_error_string(v));
		else
			snprintf(err, errsize, "TLS handshake failed: %s%s", last_reason(),
			         ERR_peek_last_error() ? "" : " (is it a TLS port?)");
		goto fail;
	}
	ERR_clear_error();
	return ssl;
fail:
	ERR_clear_error();
	if (ssl)
		SSL_free(ssl);
	close(fd);
	return NULL;
}

/* One line on stderr per distinct reason: a subject reconnecting in a loop would repeat it. */
static void say_once(const char *addr, const char *reason)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	static char last[512];
	pthread_mutex_lock(&m);
	if (strncmp(last, reason, sizeof last - 1)) {
		snprintf(last, sizeof last, "%.*s", (int)sizeof last - 1, reason);
		fprintf(stderr, "vigil: collector %s: %s\n", addr, reason);
	}
	pthread_mutex_unlock(&m);
}

struct pump {
	int plain;
	SSL *ssl;
	char addr[256];
};

/* Carries bytes both ways between a plain socket and a TLS connection until either
 * ends; every call is non-blocking, and poll waits when none made progress. */
static void pump(struct pump *p)
{
	int tfd = SSL_get_fd(p->ssl);
	fcntl(tfd, F_SETFL, fcntl(tfd, F_GETFL) | O_NONBLOCK);
	fcntl(p->plain, F_SETFL, fcntl(p->plain, F_GETFL) | O_NONBLOCK);
	uint8_t *up = malloc(BUF), *dn = malloc(BUF);
	size_t up_len = 0, up_off = 0, dn_len = 0, dn_off = 0;
	int plain_eof = 0, tls_eof = 0, w_wants = 0, r_wants = 0;
	const char *why = NULL;
	while (up && dn && !why) {
		int progress = 0;
		if (up_len == up_off && !plain_eof) {
			ssize_t n = recv(p->plain, up, BUF, 0);
			if (n > 0) {
				up_len = (size_t)n;
				up_off = 0;
				progress = 1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				plain_eof = 1;
				progress = 1;
			}
		}
		if (up_off < up_len) {
			size_t done = 0;
			int r = SSL_write_ex(p->ssl, up + up_off, up_len - up_off, &done);
			w_wants = 0;
			if (r == 1) {
				up_off += done;
				progress = 1;
			} else {
				int e = SSL_get_error(p->ssl, r);
				if (e == SSL_ERROR_WANT_WRITE)
					w_wants = POLLOUT;
				else if (e == SSL_ERROR_WANT_READ)
					w_wants = POLLIN;
				else
					why = last_reason();
			}
		}
		if (plain_eof && up_off == up_len) { /* the subject closed: pass it on */
			SSL_shutdown(p->ssl);
			break;
		}
		if (dn_off == dn_len && !tls_eof && !why) {
			size_t got = 0;
			int r = SSL_read_ex(p->ssl, dn, BUF, &got);
			r_wants = 0;
			if (r == 1) {
				dn_len = got;
				dn_off = 0;
				progress = 1;
			} else {
				int e = SSL_get_error(p->ssl, r);
				if (e == SSL_ERROR_WANT_READ)
					r_wants = POLLIN;
				else if (e == SSL_ERROR_WANT_WRITE)
					r_wants = POLLOUT;
				else if (e == SSL_ERROR_ZERO_RETURN)
					tls_eof = progress = 1;
				else if (e == SSL_ERROR_SYSCALL && !ERR_peek_error())
					tls_eof = progress = 1; /* closed without close_notify */
				else
					why = last_reason();
			}
		}
		if (dn_off < dn_len) {
			ssize_t n = send(p->plain, dn + dn_off, dn_len - dn_off, MSG_NOSIGNAL);
			if (n > 0) {
				dn_off += (size_t)n;
				progress = 1;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				break;
			}
		}
		if (tls_eof && dn_off == dn_len)
			break; /* the collector closed: so does the subject's socket */
		if (progress || why)
			continue;
		struct pollfd pf[2] = {{p->plain,
		                        (short)((up_off == up_len && !plain_eof ? POLLIN : 0) |
		                                (dn_off < dn_len ? POLLOUT : 0)),
		                        0},
		                       {tfd, (short)(w_wants | r_wants), 0}};
		if (poll(pf, 2, 1000) < 0 && errno != EINTR)
			break;
	}
	if (why)
		say_once(p->addr, why);
	ERR_clear_error();
	free(up);
	free(dn);
	SSL_free(p->ssl);
	close(tfd);
	close(p->plain);
	free(p);
}

/* vg_tls_dial's pumps: at exit, those whose caller closed its end get to finish (the
 * last frames, close_notify, their memory freed), 2 s at most. */
static pthread_mutex_t pumps_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pumps_c = PTHREAD_COND_INITIALIZER;
static unsigned pumps;

static void *pump_thread(void *arg)
{
	pump(arg);
	/* This thread's OpenSSL state (its random generators, error queue) is freed now, not
	 * by a thread-exit destructor that may still run when the process exits (LeakSanitizer
	 * then saw it unreachable). */
	OPENSSL_thread_stop();
	pthread_mutex_lock(&pumps_m);
	pumps--;
	pthread_cond_broadcast(&pumps_c);
	pthread_mutex_unlock(&pumps_m);
	return NULL;
}

static void wait_pumps(void)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&pumps_m);
	while (pumps && pthread_cond_timedwait(&pumps_c, &pumps_m, &until) == 0) {
	}
	pthread_mutex_unlock(&pumps_m);
}

static int start_pump(int plain, SSL *ssl, const char *addr, void *(*fn)(void *))
{
	struct pump *p = calloc(1, sizeof *p);
	if (!p)
		return -1;
	p->plain = plain;
	p->ssl = ssl;
	snprintf(p->addr, sizeof p->addr, "%s", addr);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int rc = pthread_create(&t, &at, fn, p);
	pthread_attr_destroy(&at);
	if (rc) {
		free(p);
		return -1;
	}
	return 0;
}

static void register_wait(void)
{
	atexit(wait_pumps);
}

int vg_tls_dial(const char *addr, char *err, size_t errsize)
{
	SSL *ssl = tls_connect(addr, err, errsize);
	if (!ssl)
		return -1;
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_wait);
	int sv[2];
	pthread_mutex_lock(&pumps_m);
	pumps++;
	pthread_mutex_unlock(&pumps_m);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    start_pump(sv[1], ssl, addr, pump_thread) < 0) {
		snprintf(err, errsize, "%s", strerror(errno));
		pthread_mutex_lock(&pumps_m);
		pumps--;
		pthread_mutex_unlock(&pumps_m);
		close(SSL_get_fd(ssl));
		SSL_free(ssl);
		return -1;
	}
	return sv[0];
}

/* ---- vigil record --to's relay ---- */

static struct {
	int lfd, stop[2];
	pthread_t th;
	char dir[PATH_MAX], sock[PATH_MAX + 8], addr[256];
	unsigned active;
	pthread_mutex_t m;
	pthread_cond_t c;
} R = {.lfd = -1, .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};

static void relay_done(void)
{
	pthread_mutex_lock(&R.m);
	R.active--;
	pthread_cond_broadcast(&R.c);
	pthread_mutex_unlock(&R.m);
}

static void *relay_conn(void *arg)
{
	struct pump *p = arg;
	char err[512];
	p->ssl = tls_connect(p->addr, err, sizeof err);
	if (p->ssl) {
		pump(p);
	} else {
		say_once(p->addr, err); /* the subject keeps its data and retries */
		close(p->plain);
		free(p);
	}
	OPENSSL_thread_stop(); /* as in pump_thread */
	relay_done();
	return NULL;
}

static void *relay_accept(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pf[2] = {{R.lfd, POLLIN, 0}, {R.stop[0], POLLIN, 0}};
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		int fd = accept4(R.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&R.m);
		R.active++;
		pthread_mutex_unlock(&R.m);
		if (start_pump(fd, NULL, R.addr, relay_conn) < 0) {
			close(fd);
			relay_done();
		}
	}
	return NULL;
}

int vg_tls_relay_start(const char *addr, char *path, size_t pathsize, char *err, size_t errsize)
{
	/* A first handshake now: a collector whose certificate is not trusted is a
	 * configuration error to report before the command runs. */
	SSL *ssl = tls_connect(addr, err, errsize);
	if (!ssl && (strstr(err, "TLS") || strstr(err, "VIGIL_TO")))
		return -1;
	if (ssl) {
		SSL_shutdown(ssl);
		close(SSL_get_fd(ssl));
		SSL_free(ssl);
	}
	const char *base = getenv("XDG_RUNTIME_DIR");
	if (!base || !*base || access(base, W_OK) != 0)
		base = "/tmp";
	snprintf(R.dir, sizeof R.dir, "%s/vigil-relay-XXXXXX", base);
	if (!mkdtemp(R.dir)) {
		snprintf(err, errsize, "cannot create %s: %s", R.dir, strerror(errno));
		return -1;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(R.sock, sizeof R.sock, "%s/s", R.dir);
	if (strlen(R.sock) >= sizeof sa.sun_path) {
		snprintf(err, errsize, "relay socket path too long: %s", R.sock);
		rmdir(R.dir);
		return -1;
	}
	strcpy(sa.sun_path, R.sock);
	snprintf(R.addr, sizeof R.addr, "%s", addr);
	R.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (R.lfd < 0 || bind(R.lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    listen(R.lfd, 128) < 0 || pipe2(R.stop, O_CLOEXEC) < 0 ||
	    pthread_create(&R.th, NULL, relay_accept, NULL) != 0) {
		snprintf(err, errsize, "relay socket %s: %s", R.sock, strerror(errno));
		if (R.lfd >= 0)
			close(R.lfd);
		unlink(R.sock);
		rmdir(R.dir);
		return -1;
	}
	snprintf(path, pathsize, "unix:%s", R.sock);
	return 0;
}

void vg_tls_relay_stop(unsigned wait_ms)
{
	if (R.lfd < 0)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&R.m);
	while (R.active && pthread_cond_timedwait(&R.c, &R.m, &until) == 0) {
	}
	pthread_mutex_unlock(&R.m);
	if (write(R.stop[1], "x", 1) < 0) {
	}
	pthread_join(R.th, NULL);
	close(R.lfd);
	R.lfd = -1;
	unlink(R.sock);
	rmdir(R.dir);
}
