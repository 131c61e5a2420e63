/* vigild: the collector (docs/protocol.md). The command line, the listeners and one poll
 * loop over a TCP listener, a Unix socket listener and every peer; SIGTERM/SIGINT stop it
 * in order. The loop calls into the service (service.c: options, log, connection table),
 * never the other way round. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "metrics.h"

static int stop_pipe[2] = {-1, -1};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigild -o DIR [--listen HOST:PORT] [--socket PATH | --no-socket]\n"
	    "              [--token-file FILE] [--control-token-file FILE] [--max-frame BYTES]\n"
	    "              [--ready FILE] [--quiet]\n"
	    "              [--store postgresql://...] [--sync] [--max-connections N]\n"
	    "              [--handshake-timeout S] [--idle-timeout S] [--insecure]\n"
	    "              [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]\n"
	    "              [--quota-per-subject SIZE] [--subject-tokens FILE]\n"
	    "              [--metrics HOST:PORT] [--probes-file FILE [--probes-period P]]\n"
	    "\n"
	    "The vigil collector: receives the records of many processes (C programs run\n"
	    "with VIGIL_TO or `vigil record --to`, Python and Java writers made by `vigil gen`)\n"
	    "and keeps them in one CTF trace per host, DIR/<host>/, that every vigil command\n"
	    "reads. Protocol: docs/protocol.md.\n"
	    "\n"
	    "  -o, --out DIR        where the traces go (created)\n"
	    "  --listen HOST:PORT   TCP address (default 127.0.0.1:7878; port 0: any free one)\n"
	    "  --socket PATH        Unix socket (default $XDG_RUNTIME_DIR/vigild.sock or\n"
	    "                       /tmp/vigild-$UID.sock); --no-socket: none\n"
	    "  --token-file FILE    refuse peers whose HELLO carries another token than the\n"
	    "                       first line of FILE (or $VIGILD_TOKEN; never on the\n"
	    "                       command line, where ps shows it)\n"
	    "  --control-token-file FILE  `vigil probes --collector` needs this token (or\n"
	    "                       $VIGILD_CONTROL_TOKEN), subjects' tokens do not serve\n"
	    "  --max-frame BYTES    longest frame accepted (default 16777216)\n"
	    "  --ready FILE         once listening, write {\"pid\":..,\"port\":..,\"socket\":..}\n"
	    "  --store URL          also write every completed image's relations into\n"
	    "                       PostgreSQL (docs/store.md): at BYE, or 10 s after its\n"
	    "                       subject vanished\n"
	    "  --sync               fsync the trace and state files before each ACK (an\n"
	    "                       acknowledged packet survives a machine crash; slower);\n"
	    "                       default: written (survives a collector crash)\n"
	    "  --max-connections N  connections at once; more are closed at once (1024)\n"
	    "  --handshake-timeout S  a peer that has not sent HELLO within S s is\n"
	    "                       disconnected (10); frames before HELLO: at most 64 KiB\n"
	    "  --idle-timeout S     disconnect a peer silent for S s (default 0: never; a\n"
	    "                       quiet subject is normal, and reconnects by itself)\n"
	    "  --tls-cert FILE, --tls-key FILE  TLS 1.3 on the TCP listener (PEM; plain\n"
	    "                       peers there are refused; the Unix socket stays plain)\n"
	    "  --tls-client-ca FILE require a client certificate signed by this CA; a\n"
	    "                       subject's certificate (common name) names the one host\n"
	    "                       whose sessions it may write (docs/security.md)\n"
	    "  --subject-tokens FILE  lines HOST TOKEN: a subject's token opens sessions of\n"
	    "                       its own host only; hosts not listed are refused\n"
	    "  --quota-per-subject SIZE  bytes of trace one subject process may store (K, M,\n"
	    "                       G); packets past it are not stored, their events counted\n"
	    "                       as discarded in the trace (default: none)\n"
	    "  --metrics HOST:PORT  Prometheus metrics over HTTP, GET /metrics only (port 0:\n"
	    "                       any free one, written to --ready as metrics_port):\n"
	    "                       subjects connected, bytes, packets and records received,\n"
	    "                       events discarded, connection errors, store backlog,\n"
	    "                       per-host lag\n"
	    "                       (docs/export.md)\n"
	    "  --probes-file FILE   the subjects' pattern file: lines `enable PATTERN` or\n"
	    "                       `disable PATTERN`, re-read every --probes-period (250ms,\n"
	    "                       2s; default 1s) and applied as `vigil probes --collector`\n"
	    "                       would when it changed and reads whole (docs/protocol.md)\n"
	    "  --insecure           allow a --listen address beyond loopback without a token\n"
	    "                       or TLS\n"
	    "  --quiet              log only problems\n"
	    "\n"
	    "examples:\n"
	    "  vigild -o traces &\n"
	    "  vigil record --to 127.0.0.1:7878 -- ./build/bin/mailbox\n"
	    "  vigil dump traces/$(hostname)\n"
	    "  vigild -o traces --metrics 127.0.0.1:9187 &   then: curl 127.0.0.1:9187/metrics\n"
	    "  vigild -o /srv/vigil --listen 0.0.0.0:7878 --token-file /etc/vigil/token\n"
	    "  vigild -o traces --probes-file traces.probes --probes-period 250ms &\n"
	    "  VIGIL_TO=unix:/tmp/vigild-$UID.sock VIGIL_TO_TOKEN=s3cret ./my_server\n");
}

static void on_signal(int sig)
{
	(void)sig;
	int e = errno;
	if (write(stop_pipe[1], "x", 1) < 0) {
	}
	errno = e;
}

static int parse_size(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < 64 || v > (1ull << 30))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --subject-tokens FILE: "HOST TOKEN" per line; blank lines and # comments skipped. */
static int read_subject_tokens(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "vigild: --subject-tokens %s: %s\n", path, strerror(errno));
		return -1;
	}
	char line[1024];
	unsigned no = 0;
	while (fgets(line, sizeof line, f)) {
		no++;
		char host[VGD_NAME_MAX + 2], tok[512], extra[2];
		char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		int n = sscanf(p, "%201s %511s %1s", host, tok, extra);
		size_t i = vgd_opt.n_subject_tokens;
		char **h = realloc(vgd_opt.subject_hosts, (i + 1) * sizeof *h);
		if (h)
			vgd_opt.subject_hosts = h;
		char **t = realloc(vgd_opt.subject_tokens, (i + 1) * sizeof *t);
		if (t)
			vgd_opt.subject_tokens = t;
		if (n != 2 || !vgd_safe_name(host, strlen(host)) || !h || !t) {
			fprintf(stderr, "vigild: --subject-tokens %s:%u: expected HOST TOKEN\n",
			        path, no);
			fclose(f);
			return -1;
		}
		h[i] = strdup(host);
		t[i] = strdup(tok);
		vgd_opt.n_subject_tokens++;
	}
	fclose(f);
	if (!vgd_opt.n_subject_tokens) {
		fprintf(stderr, "vigild: --subject-tokens %s: no HOST TOKEN line\n", path);
		return -1;
	}
	return 0;
}

/* 64M, 2G, 4096: at least 4 KiB (a packet's header must fit). */
static int parse_quota(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == s || *end || *s == '-' || v > (1ull << 50) || (v << shift) < 4096)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* The first line of FILE, without its newline. */
static int read_token(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "vigild: --token-file %s: %s\n", path, strerror(errno));
		return -1;
	}
	int ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	buf[ok ? strcspn(buf, "\r\n") : 0] = 0;
	if (!buf[0]) {
		fprintf(stderr, "vigild: --token-file %s: no token in its first line\n", path);
		return -1;
	}
	return 0;
}

/* HOST:PORT names a loopback address (127.0.0.0/8, ::1, localhost). */
static int loopback(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
	return (n >= 4 && !strncmp(addr, "127.", 4)) || (n == 5 && !strncmp(addr, "[::1]", 5)) ||
	       (n == 9 && !strncmp(addr, "localhost", 9));
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int listen_tcp(const char *addr, int *port)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof host) {
		fprintf(stderr, "vigild: --listen %s: expected HOST:PORT\n", addr);
		return -1;
	}
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	if (host[0] == '[') { /* [::1]:7878 */
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
	                         .ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res;
	int rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (rc) {
		fprintf(stderr, "vigild: --listen %s: %s\n", addr, gai_strerror(rc));
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 512) < 0) {
		fprintf(stderr, "vigild: --listen %s: %s\n", addr, strerror(errno));
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(res);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		fprintf(stderr, "vigild: --socket %s: path too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct stat sb;
	if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode))
		unlink(path); /* left by a collector that did not stop in order */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 512) < 0) {
		fprintf(stderr, "vigild: --socket %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void accept_all(int lfd, int is_unix)
{
	static unsigned unix_count;
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		char peer[96];
		if (is_unix) {
			snprintf(peer, sizeof peer, "unix#%u", ++unix_count);
			/* Zero configuration on the Unix socket: only our own user and root. */
			struct ucred cr = {0};
			socklen_t crl = sizeof cr;
			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) < 0 ||
			    (cr.uid != 0 && cr.uid != geteuid())) {
				vgd_log("%s: uid %u (pid %d) is neither root nor vigild's user; "
				        "refused",
				        peer, (unsigned)cr.uid, (int)cr.pid);
				close(fd);
				continue;
			}
		} else {
			char h[64] = "?";
			int port = 0;
			if (ss.ss_family == AF_INET) {
				inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, h,
				          sizeof h);
				port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			} else if (ss.ss_family == AF_INET6) {
				inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, h,
				          sizeof h);
				port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
			}
			snprintf(peer, sizeof peer, "%s:%d", h, port);
		}
		vgd_conn_table_add(fd, peer, is_unix);
	}
}

static void default_socket(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg && *xdg)
		snprintf(buf, len, "%s/vigild.sock", xdg);
	else
		snprintf(buf, len, "/tmp/vigild-%u.sock", (unsigned)getuid());
}

int main(int argc, char **argv)
{
	vgd_opt.listen = "127.0.0.1:7878";
	vgd_opt.max_frame = VGW_MAX_FRAME_DEFAULT;
	vgd_opt.max_conns = 1024;
	vgd_opt.handshake_timeout = 10;
	char sockbuf[256], token[512], control_token[512];
	const char *tls_cert = NULL, *tls_key = NULL, *tls_ca = NULL, *metrics = NULL;
	const char *probes_file = NULL, *probes_period = NULL;
	int insecure = 0;
	default_socket(sockbuf, sizeof sockbuf);
	const char *env_token = getenv("VIGILD_TOKEN");
	if (env_token && *env_token) {
		snprintf(token, sizeof token, "%s", env_token);
		vgd_opt.token = token;
	}
	const char *env_ctl = getenv("VIGILD_CONTROL_TOKEN");
	if (env_ctl && *env_ctl) {
		snprintf(control_token, sizeof control_token, "%s", env_ctl);
		vgd_opt.control_token = control_token;
	}
	vgd_opt.socket = sockbuf;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--quiet")) {
			vgd_opt.quiet = 1;
		} else if (!strcmp(a, "--sync")) {
			vgd_opt.sync = 1;
		} else if (!strcmp(a, "--insecure")) {
			insecure = 1;
		} else if (!strcmp(a, "--no-socket")) {
			vgd_opt.socket = "";
		} else if (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--listen") ||
		           !strcmp(a, "--socket") || !strcmp(a, "--token") ||
		           !strcmp(a, "--token-file") || !strcmp(a, "--max-frame") ||
		           !strcmp(a, "--ready") || !strcmp(a, "--store") ||
		           !strcmp(a, "--max-connections") || !strcmp(a, "--handshake-timeout") ||
		           !strcmp(a, "--idle-timeout") || !strcmp(a, "--control-token-file") ||
		           !strcmp(a, "--tls-cert") || !strcmp(a, "--tls-key") ||
		           !strcmp(a, "--tls-client-ca") || !strcmp(a, "--quota-per-subject") ||
		           !strcmp(a, "--subject-tokens") || !strcmp(a, "--metrics") ||
		           !strcmp(a, "--probes-file") || !strcmp(a, "--probes-period")) {
			if (!v) {
				fprintf(stderr, "vigild: %s needs a value (see vigild --help)\n",
				        a);
				return 2;
			}
			i++;
			if (a[1] == 'o' || !strcmp(a, "--out"))
				vgd_opt.out = v;
			else if (!strcmp(a, "--listen"))
				vgd_opt.listen = v;
			else if (!strcmp(a, "--metrics"))
				metrics = v;
			else if (!strcmp(a, "--probes-file"))
				probes_file = v;
			else if (!strcmp(a, "--probes-period"))
				probes_period = v;
			else if (!strcmp(a, "--tls-cert"))
				tls_cert = v;
			else if (!strcmp(a, "--tls-key"))
				tls_key = v;
			else if (!strcmp(a, "--tls-client-ca"))
				tls_ca = v;
			else if (!strcmp(a, "--subject-tokens")) {
				if (read_subject_tokens(v) < 0)
					return 2;
			} else if (!strcmp(a, "--quota-per-subject")) {
				if (parse_quota(v, &vgd_opt.quota) < 0) {
					fprintf(stderr,
					        "vigild: --quota-per-subject %s: expected a size "
					        "like 512K, 64M or 2G (at least 4K)\n",
					        v);
					return 2;
				}
			} else if (!strcmp(a, "--socket"))
				vgd_opt.socket = v;
			else if (!strcmp(a, "--token")) {
				fprintf(stderr, "vigild: --token: a token on the command line is "
				                "visible to every user (ps); use --token-file FILE "
				                "or VIGILD_TOKEN\n");
				return 2;
			} else if (!strcmp(a, "--token-file")) {
				if (read_token(v, token, sizeof token) < 0)
					return 2;
				vgd_opt.token = token;
			} else if (!strcmp(a, "--control-token-file")) {
				if (read_token(v, control_token, sizeof control_token) < 0)
					return 2;
				vgd_opt.control_token = control_token;
			} else if (!strcmp(a, "--ready"))
				vgd_opt.ready = v;
			else if (!strcmp(a, "--store"))
				vgd_opt.store = v;
			else if (!strcmp(a, "--max-connections") ||
			         !strcmp(a, "--handshake-timeout") ||
			         !strcmp(a, "--idle-timeout")) {
				unsigned *dst = a[2] == 'm'   ? &vgd_opt.max_conns
				                : a[2] == 'h' ? &vgd_opt.handshake_timeout
				                              : &vgd_opt.idle_timeout;
				if (parse_uint(v, a[2] == 'i' ? 0 : 1, 1000000, dst) < 0) {
					fprintf(stderr,
					        "vigild: %s %s: expected a number, %d..1000000\n",
					        a, v, a[2] == 'i' ? 0 : 1);
					return 2;
				}
			} else if (parse_size(v, &vgd_opt.max_frame) < 0) {
				fprintf(stderr,
				        "vigild: --max-frame %s: expected bytes, 64..2^30\n", v);
				return 2;
			}
		} else {
			fprintf(stderr, "vigild: unknown argument %s (see vigild --help)\n", a);
			return 2;
		}
	}
	if (vgd_opt.store && !vgd_store_available()) {
		fprintf(stderr,
		        "vigild: --store: this vigild was built without libpq (libpq-dev)\n");
		return 2;
	}
	if (vgd_opt.store && strncmp(vgd_opt.store, "postgresql://", 13) &&
	    strncmp(vgd_opt.store, "postgres://", 11)) {
		fprintf(stderr, "vigild: --store %s: not a postgresql:// URL\n", vgd_opt.store);
		return 2;
	}
	if (!vgd_opt.out) {
		fprintf(stderr, "vigild: -o DIR is required (see vigild --help)\n");
		return 2;
	}
	if (vgd_probes_file_option(probes_file, probes_period) < 0)
		return 2;
	char state[PATH_MAX];
	snprintf(state, sizeof state, "%s/.vigild", vgd_opt.out);
	if ((mkdir(vgd_opt.out, 0777) < 0 && errno != EEXIST) ||
	    (mkdir(state, 0777) < 0 && errno != EEXIST)) {
		fprintf(stderr, "vigild: cannot create %s: %s\n", state, strerror(errno));
		return 1;
	}
	if (!tls_cert != !tls_key || (tls_ca && !tls_cert)) {
		fprintf(stderr, "vigild: --tls-cert and --tls-key go together (and "
		                "--tls-client-ca needs them)\n");
		return 2;
	}
	if (tls_cert && vgd_tls_init(tls_cert, tls_key, tls_ca) < 0)
		return 2;
	/* Beyond loopback anyone on the network could write traces and switch probes. */
	if (!vgd_opt.token && !vgd_opt.n_subject_tokens && !tls_cert && !insecure &&
	    !loopback(vgd_opt.listen)) {
		fprintf(stderr,
		        "vigild: --listen %s is not a loopback address: give a token "
		        "(--token-file or VIGILD_TOKEN), TLS (--tls-cert, --tls-key), or "
		        "--insecure (docs/security.md)\n",
		        vgd_opt.listen);
		return 2;
	}
	int port = 0;
	int tfd = listen_tcp(vgd_opt.listen, &port);
	if (tfd < 0)
		return 1;
	int ufd = vgd_opt.socket[0] ? listen_unix(vgd_opt.socket) : -1;
	if (vgd_opt.socket[0] && ufd < 0)
		return 1;
	int metrics_port = -1;
	if (metrics && vgd_metrics_start(metrics, &metrics_port) < 0)
		return 1;
	fcntl(tfd, F_SETFL, O_NONBLOCK);
	if (ufd >= 0)
		fcntl(ufd, F_SETFL, O_NONBLOCK);
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return 1;
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit: EFBIG, counted like a full disk */
	if (vgd_opt.ready) {
		char buf[512];
		int n = snprintf(
		    buf, sizeof buf,
		    "{\"pid\": %d, \"port\": %d, \"socket\": \"%s\", \"metrics_port\": %d}\n",
		    (int)getpid(), port, vgd_opt.socket, metrics_port);
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s.tmp", vgd_opt.ready);
		FILE *f = fopen(tmp, "w");
		if (!f || fwrite(buf, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0 ||
		    rename(tmp, vgd_opt.ready) < 0) {
			fprintf(stderr, "vigild: --ready %s: %s\n", vgd_opt.ready, strerror(errno));
			return 1;
		}
	}
	if (!vgd_opt.quiet)
		vgd_log("listening on %s (port %d%s)%s%s, writing %s", vgd_opt.listen, port,
		        !tls_cert ? ""
		        : tls_ca  ? ", TLS 1.3, client certificates required"
		                  : ", TLS 1.3",
		        ufd >= 0 ? " and " : "", ufd >= 0 ? vgd_opt.socket : "", vgd_opt.out);
	if (metrics && !vgd_opt.quiet)
		vgd_log("metrics on %s (port %d): GET /metrics", metrics, metrics_port);
	struct pollfd *pfds = NULL;
	size_t pcap = 0;
	int running = 1;
	while (running) {
		vgd_conn_table_compact();
		size_t nconns = vgd_conn_count();
		if (pcap < nconns + 3) {
			pcap = (nconns + 3) * 2;
			struct pollfd *p = realloc(pfds, pcap * sizeof *p);
			if (!p) {
				vgd_log("out of memory");
				break;
			}
			pfds = p;
		}
		pfds[0] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
		pfds[1] = (struct pollfd){.fd = tfd, .events = POLLIN};
		pfds[2] = (struct pollfd){.fd = ufd, .events = POLLIN};
		for (size_t i = 0; i < nconns; i++)
			pfds[3 + i] = (struct pollfd){
			    .fd = vgd_conn_at(i)->fd,
			    .events =
			        (short)(POLLIN |
			                (vgd_conn_wants_write(vgd_conn_at(i)) ? POLLOUT : 0))};
		size_t polled = nconns;
		/* TLS may hold bytes already read from a socket: no waiting for those. */
		int pending = 0;
		for (size_t i = 0; i < nconns; i++)
			pending |= vgd_io_pending(vgd_conn_at(i));
		int n = poll(pfds, 3 + polled,
		             pending ? 0 : vgd_probes_file_wait_ms(vgd_now_ns(), 1000));
		if (n < 0 && errno != EINTR) {
			vgd_log("poll: %s", strerror(errno));
			break;
		}
		vgd_store_tick(0);
		uint64_t now = vgd_now_ns();
		vgd_relay_tick(now);
		vgd_probes_file_tick(now);
		for (size_t i = 0; i < polled; i++) {
			struct vgd_conn *c = vgd_conn_at(i);
			if (c && !c->dead && vgd_conn_check_time(c, now) < 0) {
				vgd_conn_table_close(i, VGD_VANISHED);
				pfds[3 + i].revents = 0;
			}
		}
		for (size_t i = 0; i < polled; i++)
			if (vgd_conn_at(i) && vgd_io_pending(vgd_conn_at(i)))
				pfds[3 + i].revents |= POLLIN;
		if (n < 0 || (n == 0 && !pending))
			continue;
		if (pfds[0].revents)
			running = 0;
		for (size_t i = 0; i < polled; i++) {
			struct vgd_conn *c = vgd_conn_at(i);
			short re = pfds[3 + i].revents;
			if (!c || !re)
				continue;
			int rc = 0;
			if (re & POLLOUT)
				rc = vgd_conn_writable(c);
			if (rc == 0 && (re & (POLLIN | POLLHUP | POLLERR)))
				rc = vgd_conn_readable(c);
			if (rc < 0 || c->dead) {
				vgd_conn_table_close(i, c->dead == 2 ? VGD_BYE : VGD_VANISHED);
			}
		}
		if (pfds[1].revents)
			accept_all(tfd, 0);
		if (ufd >= 0 && pfds[2].revents)
			accept_all(ufd, 1);
	}
	/* Orderly stop: everything received was written and acknowledged as it came; the
	 * subjects reconnect to the next collector. */
	vgd_conn_table_free_all();
	free(pfds);
	vgd_store_finish();
	vgd_metrics_stop();
	close(tfd);
	if (ufd >= 0) {
		close(ufd);
		unlink(vgd_opt.socket);
	}
	if (!vgd_opt.quiet)
		vgd_log("stopped");
	return 0;
}
