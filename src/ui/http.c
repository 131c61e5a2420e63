/* The HTTP server (libmicrohttpd, one internal polling thread): /api/... to api.c, every
 * other GET path to a file of the built page. Loopback unless --bind says otherwise; a
 * path that could leave the page's folder is refused (403), as is a Host header that is
 * not this server's own when it listens on loopback (a web page elsewhere cannot reach it
 * through DNS rebinding). SIGINT or SIGTERM stops it cleanly. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "ui/ui.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_Result;
#else
typedef enum MHD_Result MHD_Result;
#endif

struct server {
	struct vgu_app *app;
	char root[PATH_MAX]; /* the page's folder, resolved */
	bool loopback;
	unsigned port;
};

static const char *arg_lookup(void *ctx, const char *key)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

static const char *content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {{".html", "text/html; charset=utf-8"},
	             {".js", "text/javascript; charset=utf-8"},
	             {".css", "text/css; charset=utf-8"},
	             {".json", "application/json"},
	             {".png", "image/png"},
	             {".svg", "image/svg+xml"},
	             {".map", "application/json"}};
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof *types; i++)
		if (!strcmp(dot, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

/* A path of the page: no "..", no backslash or NUL, resolved inside the root. */
static void static_file(struct server *s, const char *url, struct vgu_reply *r)
{
	if (strstr(url, "..") || strchr(url, '\\') || url[0] != '/')
		return vgu_reply_error(r, 403, "refused: the path leaves the page's folder");
	char path[PATH_MAX], real[PATH_MAX];
	/* the analysis views (models, networks) have their own page */
	const char *home = s->app->models || s->app->nets ? "/analysis.html" : "/index.html";
	if (snprintf(path, sizeof path, "%s%s", s->root, !strcmp(url, "/") ? home : url) >=
	    (int)sizeof path)
		return vgu_reply_error(r, 414, "path too long");
	if (!realpath(path, real))
		return vgu_reply_error(r, 404, "no such file");
	size_t rl = strlen(s->root);
	if (strncmp(real, s->root, rl) || (real[rl] && real[rl] != '/'))
		return vgu_reply_error(r, 403, "refused: the path leaves the page's folder");
	struct stat st;
	FILE *f = fopen(real, "rb");
	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		if (f)
			fclose(f);
		return vgu_reply_error(r, 404, "no such file");
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!buf || n != (size_t)st.st_size) {
		free(buf);
		return vgu_reply_error(r, 500, "cannot read the file");
	}
	r->status = 200;
	r->body = buf;
	r->len = n;
	r->type = content_type(real);
}

/* On loopback, Host must name this server (127.0.0.1, localhost or [::1], this port). */
static bool host_ok(struct server *s, struct MHD_Connection *c)
{
	if (!s->loopback)
		return true;
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	if (!h)
		return true; /* HTTP/1.0 */
	static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(names[i]);
		if (!strncmp(h, names[i], n) &&
		    (!h[n] || (h[n] == ':' && (unsigned)atoi(h + n + 1) == s->port)))
			return true;
	}
	return false;
}

static MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *upload, size_t *upload_size, void **state)
{
	(void)version;
	(void)upload;
	struct server *s = cls;
	static int first_call;
	if (!*state) { /* headers only so far: answer once the request is complete */
		*state = &first_call;
		return MHD_YES;
	}
	struct vgu_reply r = {0};
	if (*upload_size) {
		*upload_size = 0;
		vgu_reply_error(&r, 413, "request bodies are not accepted (use GET arguments)");
	} else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		vgu_reply_error(&r, 405, "method %.20s not allowed (GET only)", method);
	} else if (!host_ok(s, c)) {
		vgu_reply_error(&r, 403, "refused: Host is not this server");
	} else if (!strncmp(url, "/api/", 5)) {
		vgu_api(s->app, url, arg_lookup, c, &r);
	} else {
		static_file(s, url, &r);
	}
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    r.len, r.body ? r.body : (char *)"",
	    r.body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, "Content-Type", r.type ? r.type : "text/plain");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (r.disposition)
		MHD_add_response_header(resp, "Content-Disposition", r.disposition);
	MHD_Result ret = MHD_queue_response(c, r.status ? r.status : 500, resp);
	MHD_destroy_response(resp);
	return ret;
}

int vgu_serve(struct vgu_app *a, const char *bind, unsigned port)
{
	struct server s = {.app = a};
	if (!realpath(a->assets, s.root)) {
		fprintf(stderr, "vigil ui: the page's folder %s: %s (make build makes it)\n",
		        a->assets, strerror(errno));
		return 2;
	}
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
	if (!bind)
		bind = "127.0.0.1";
	if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		s.loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
	} else if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		s.loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
		flags |= MHD_USE_IPv6;
	} else {
		fprintf(stderr, "vigil ui: --bind: '%s' is not an IPv4 or IPv6 address\n", bind);
		return 2;
	}
	/* SIGINT and SIGTERM are waited for here; the server's thread inherits the mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct MHD_Daemon *d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, &s,
	                                        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	                                        MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr,
		        "vigil ui: cannot listen on %s port %u (in use, or not an address "
		        "of this machine)\n",
		        bind, port);
		return 2;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	s.port = info ? info->port : port;
	bool six = strchr(bind, ':') != NULL;
	char what[64];
	if (a->live)
		snprintf(what, sizeof what, "live run of the subject");
	else if (a->models)
		snprintf(what, sizeof what, "model workbench");
	else if (a->nets)
		snprintf(what, sizeof what, "network browser");
	else
		snprintf(what, sizeof what, "%zu events, %zu rows", a->tl.nevents, a->tl.nrows);
	fprintf(stderr, "vigil ui: %s; serving http://%s%s%s:%u/ (Ctrl-C stops)\n", what,
	        six ? "[" : "", bind, six ? "]" : "", s.port);
	if (!s.loopback)
		fprintf(stderr,
		        "vigil ui: warning: %s is not loopback: anyone who reaches it reads "
		        "the trace (no authentication)\n",
		        bind);
	int sig;
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	fprintf(stderr, "vigil ui: stopped\n");
	return 0;
}
