/* vigil record: runs an unmodified command with libvigil preloaded, so its processes
 * (fork and exec included) and threads are recorded into a CTF trace directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/collector_link.h"
#include "cli/send.h"
#include "cli/subject.h"
#include "cli/tls_link.h"
#include "commands.h"
#include "runtime/exe_static.h"
#include "runtime/util.h"
#include "trace/trace.h"
#include "usdt_plan.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil record [-o DIR] [--sensors PATTERN]... [--max-size SIZE]\n"
	    "                    [--packet-size SIZE] [--listen] [--to HOST:PORT|unix:PATH]\n"
	    "                    [--usdt PROVIDER:PROBE]... [--shared|--per-image] [--quiet]\n"
	    "                    -- COMMAND [ARGS]\n\n"
	    "Runs COMMAND with vigil's runtime preloaded and records its processes and\n"
	    "threads (and the sensors of programs linked with libvigil) into a CTF trace\n"
	    "directory that `vigil dump`, babeltrace2 and Trace Compass read.\n\n"
	    "options:\n"
	    "  -o, --output DIR     trace directory (default: vigil-trace-DATE-TIME); must be\n"
	    "                       new or empty\n"
	    "  -s, --sensors PAT    record only sensors whose name matches the glob PAT;\n"
	    "                       -PAT excludes; repeatable, the last match decides\n"
	    "                       (vigil's own vg.* sensors stay on unless excluded)\n"
	    "      --max-size SIZE  cap each process's trace at SIZE bytes (e.g. 64M); what\n"
	    "                       does not fit is counted in events_discarded\n"
	    "      --packet-size SZ first packet size of each thread's stream (default 4K;\n"
	    "                       then packets double up to 4M while the thread writes)\n"
	    "      --shared         every process into one directory with one metadata and a\n"
	    "                       few stream files handed from process to process (the\n"
	    "                       default; VIGIL_LAYOUT=shared, docs/trace-format.md): a\n"
	    "                       build or a script of many short processes takes a tenth\n"
	    "                       of the space. Not with --to or VIGIL_LISTENERS, which\n"
	    "                       record one directory per process image\n"
	    "      --per-image      one directory (metadata and stream files) per process\n"
	    "                       image (VIGIL_LAYOUT=image); the default when VIGIL_LAYOUT\n"
	    "                       says so\n"
	    "      --listen         let monitors attach while it runs (vigil watch --pid): each\n"
	    "                       process listens on @vigil-control.<pid>; only vigil's own\n"
	    "                       vg.* sensors record (unless --sensors says otherwise) and\n"
	    "                       entity flags start off (unless VIGIL_ENTITY_FLAGS is set),\n"
	    "                       so a query enables what it needs (vigil probes: every\n"
	    "                       entity of the sensors it switches on)\n"
	    "      --to ADDR        send the records to the collector vigild at HOST:PORT or\n"
	    "                       unix:PATH instead of writing DIR (docs/protocol.md); the\n"
	    "                       token, if any, comes from VIGIL_TO_TOKEN; TLS 1.3 when\n"
	    "                       VIGIL_TO_CA names the collector's CA (client certificate:\n"
	    "                       VIGIL_TO_CERT, VIGIL_TO_KEY; docs/security.md)\n"
	    "  -u, --usdt P:GLOB    arm the SDT probe sites (USDT) of PROVIDER whose probe\n"
	    "                       name matches GLOB ('postgresql:transaction__*'), in the\n"
	    "                       program and its libraries: each probe is a sensor\n"
	    "                       PROVIDER.PROBE with fields arg1.. (docs/usdt.md; vigil\n"
	    "                       usdt list shows the probes); repeatable. The program's\n"
	    "                       sites are entered by a jump into a trampoline where\n"
	    "                       their code allows it, else by a breakpoint\n"
	    "      --usdt-int3      every site by its breakpoint (int3) only\n"
	    "  -q, --quiet          no summary on stderr\n"
	    "  -h, --help           this help\n\n"
	    "Log messages (syslog, stderr through stdio, write(2) to fd 2) are counted into\n"
	    "behaviour models (logmodel-*.vgm, docs/logcapture.md) instead of being written:\n"
	    "only warnings and more severe messages, and stderr text without a level word,\n"
	    "are still written. VIGIL_LOG_PASS=all writes everything, =none nothing,\n"
	    "=info (etc.) sets the threshold; VIGIL_LOG=off leaves logging calls alone.\n\n"
	    "examples:\n"
	    "  vigil record -o run1 -- ./mailbox --seed 7\n"
	    "  vigil record -o run2 --sensors 'mailbox.*' --sensors '-mailbox.RunningOn.*' -- "
	    "./app\n"
	    "  vigil record --max-size 16M -- make -j2\n"
	    "  vigil record -o many -- sh -c 'for i in 1 2 3; do ls >/dev/null; done'\n"
	    "  vigil record --per-image -o each -- sh -c 'ls >/dev/null; ls >/dev/null'\n"
	    "  vigil record --usdt 'postgresql:transaction__*' -o pg -- postgres -D data\n"
	    "  vigil record --listen -o srv -- ./server &   then: vigil watch --pid PID ...\n"
	    "  vigil record --to 127.0.0.1:7878 -- ./mailbox --seed 7   (vigild -o DIR runs)\n"
	    "then: vigil dump run1, or babeltrace2 run1\n");
}

/* Is the directory empty? 1, 0, or -1 (errno) when it cannot be read. */
static int empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int empty = 1;
	for (struct dirent *e; empty && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

static int prepare_output(const char *dir, char *abs, size_t len)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "vigil record: %s exists and is not a directory\n", dir);
			return -1;
		}
		int empty = empty_dir(dir);
		if (empty < 0) {
			fprintf(stderr, "vigil record: cannot read %s: %s\n", dir, strerror(errno));
			return -1;
		}
		if (!empty) {
			fprintf(stderr,
			        "vigil record: %s is not empty; choose a new directory with -o\n",
			        dir);
			return -1;
		}
	} else if (vg__mkdir_p(dir) < 0) {
		fprintf(stderr, "vigil record: cannot create %s: %s%s\n", dir, strerror(errno),
		        errno == ENOENT ? " (its parent folder does not exist)" : "");
		return -1;
	}
	if (!realpath(dir, abs) || strlen(abs) >= len) {
		fprintf(stderr, "vigil record: cannot resolve %s\n", dir);
		return -1;
	}
	return 0;
}

/* What the runtime accepts for VIGIL_MAX_SIZE (vg__parse_size, as src/runtime/config.c): 0, or
 * a size of at least 4K. Checked here so that the user reads about the option they typed. */
static bool size_ok(const char *text)
{
	uint64_t v;
	return !strcmp(text, "0") || (vg__parse_size(text, &v) == 0 && v >= 4096);
}

/* Can COMMAND be run (a path, or found on PATH)? Said before any folder is made. Its
 * path goes to full. */
static bool runnable(const char *cmd, char *full, size_t fullsize)
{
	snprintf(full, fullsize, "%s", cmd);
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		if (snprintf(full, fullsize, "%.*s/%s", len ? (int)len : 1, len ? p : ".", cmd) <
		        (int)fullsize &&
		    access(full, X_OK) == 0) {
			struct stat st;
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
				return true;
		}
		p += len + (p[len] == ':');
	}
	return false;
}

static int plan_append(const char *plan, void *arg)
{
	FILE *f = arg;
	return fprintf(f, "%s%s", ftell(f) ? ";" : "", plan) < 0 ? -1 : 0;
}

/* The jump path's plans of the program's sites (src/cli/usdt_plan.c), for the runtime in
 * VIGIL_USDT_PLAN; sites without one stay on the int3 path. */
static void plan_usdt(const char *exe, const char *patterns)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	int n = vg_usdt_plan_file(exe, exe, patterns, plan_append, f);
	fclose(f);
	if (n > 0 && len < (100u << 10)) /* an environment string's limit is 128 KiB */
		setenv("VIGIL_USDT_PLAN", text, 1);
	free(text);
}

/* --to: a private spool in memory for the subject's streams until they are shipped. */
static int make_spool(char *dir, size_t len)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, len, "%s/vigil-spool-XXXXXX", base);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "vigil record: cannot create a spool in %s: %s\n", base,
		        strerror(errno));
		return -1;
	}
	return 0;
}

static pid_t child;
static void forward_signal(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* Each --sensors pattern that matched no event type of the recording, said once: a
 * pattern that silently excludes nothing (`-mailbox.RunningOn` where the events are
 * mailbox.RunningOn.begin and .end) is a mistake the trace would otherwise hide. */
static void unmatched_patterns(const struct vgt_trace *t, const char *sensors)
{
	for (const char *p = sensors; p && *p;) {
		size_t len = strcspn(p, ",");
		char pat[256];
		const char *g = p[0] == '-' ? p + 1 : p;
		size_t glen = p[0] == '-' ? len - 1 : len;
		if (len && glen < sizeof pat) {
			memcpy(pat, g, glen);
			pat[glen] = 0;
			bool hit = false;
			for (size_t i = 0; !hit && i < vgt_image_count(t); i++) {
				const struct vgt_image *im = vgt_image_at(t, i);
				for (size_t k = 0; !hit && k < im->ntypes; k++)
					hit = fnmatch(pat, im->types[k]->name, 0) == 0;
			}
			if (!hit)
				fprintf(stderr,
				        "vigil record: --sensors %.*s matched no sensor of the "
				        "recording "
				        "(the events of a sensor NAME are NAME, or NAME.begin and "
				        "NAME.end)\n",
				        (int)len, p);
		}
		p += len + (p[len] == ',');
	}
}

static void summarize(const char *dir, const char *sensors)
{
	char err[512];
	struct vgt_recover_result rr;
	if (vgt_recover_dir(dir, false, NULL, NULL, &rr, err, sizeof err) == 0 && rr.changes)
		fprintf(stderr,
		        "vigil record: repaired %u stream end(s) left by killed processes\n",
		        rr.changes);
	const char *paths[] = {dir};
	struct vgt_trace *t = vgt_open(paths, 1, err, sizeof err);
	if (!t) {
		fprintf(stderr, "vigil record: nothing was recorded in %s (%s)\n", dir, err);
		return;
	}
	uint64_t events = 0, discarded = 0;
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		struct vgt_cursor *c = vgt_cursor_open(t, i);
		while (c && vgt_cursor_next(c))
			;
		vgt_cursor_close(c);
		const struct vgt_stream *s = vgt_stream_at(t, i);
		events += s->stats.events;
		discarded += s->stats.events_discarded;
	}
	fprintf(stderr,
	        "vigil record: %" PRIu64 " event%s from %zu process image%s, %zu thread%s in %s\n",
	        events, events == 1 ? "" : "s", vgt_image_count(t),
	        vgt_image_count(t) == 1 ? "" : "s", vgt_stream_count(t),
	        vgt_stream_count(t) == 1 ? "" : "s", dir);
	if (discarded)
		fprintf(
		    stderr,
		    "vigil record: %" PRIu64
		    " events were discarded (size cap, full disk, or nested in a signal handler)\n",
		    discarded);
	if (vgt_damage_total(t))
		fprintf(stderr, "vigil record: %" PRIu64 " damaged place(s): see `vigil dump %s`\n",
		        vgt_damage_total(t), dir);
	unmatched_patterns(t, sensors);
	vgt_close(t);
}

/* The trace layout (docs/trace-format.md): shared unless --per-image, VIGIL_LAYOUT, --to or
 * VIGIL_LISTENERS say otherwise; an explicit --shared that cannot be had is said. */
static void choose_layout(int layout, const char *to)
{
	const char *env = getenv("VIGIL_LAYOUT"), *listeners = getenv("VIGIL_LISTENERS");
	const char *against = to ? "--to (each process image is shipped as a directory of its own)"
	                      : listeners && *listeners
	                          ? "VIGIL_LISTENERS (each listener's copy is a directory per "
	                            "process image)"
	                          : NULL;
	if (layout == 'P' || (!layout && env && *env && !against)) {
		if (layout == 'P')
			setenv("VIGIL_LAYOUT", "image", 1);
		return; /* the runtime says a VIGIL_LAYOUT it does not know */
	}
	if (against) {
		if (layout == 'S' || (env && !strcmp(env, "shared")))
			fprintf(stderr,
			        "vigil record: note: no shared layout with %s; one directory "
			        "per process image\n",
			        against);
		setenv("VIGIL_LAYOUT", "image", 1);
		return;
	}
	setenv("VIGIL_LAYOUT", "shared", 1);
}

int vg_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, 0, 'o'},
	                                     {"sensors", required_argument, 0, 's'},
	                                     {"max-size", required_argument, 0, 'm'},
	                                     {"packet-size", required_argument, 0, 'p'},
	                                     {"listen", no_argument, 0, 'l'},
	                                     {"quiet", no_argument, 0, 'q'},
	                                     {"to", required_argument, 0, 't'},
	                                     {"usdt", required_argument, 0, 'u'},
	                                     {"usdt-int3", no_argument, 0, 'I'},
	                                     {"shared", no_argument, 0, 'S'},
	                                     {"per-image", no_argument, 0, 'P'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	const char *out = NULL, *to = NULL;
	char sensors[4096] = "", usdt[4096] = "";
	int quiet = 0, listen = 0, usdt_int3 = 0, layout = 0; /* 'S', 'P' or 0: the default */
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:s:u:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'I':
			usdt_int3 = 1;
			break;
		case 'S':
		case 'P':
			layout = c;
			break;
		case 's':
			if (strlen(sensors) + strlen(optarg) + 2 > sizeof sensors) {
				fprintf(stderr, "vigil record: too many --sensors patterns\n");
				return 2;
			}
			if (sensors[0])
				strcat(sensors, ",");
			strcat(sensors, optarg);
			break;
		case 'u':
			if (!strchr(optarg, ':') || strchr(optarg, ',') || optarg[0] == ':' ||
			    !strchr(optarg, ':')[1]) {
				fprintf(
				    stderr,
				    "vigil record: --usdt %s: expected PROVIDER:PROBE (globs, no "
				    "comma), e.g. 'postgresql:transaction__*'\n",
				    optarg);
				return 2;
			}
			if (strlen(usdt) + strlen(optarg) + 2 > sizeof usdt) {
				fprintf(stderr, "vigil record: too many --usdt patterns\n");
				return 2;
			}
			if (usdt[0])
				strcat(usdt, ",");
			strcat(usdt, optarg);
			break;
		case 'm':
			if (!size_ok(optarg)) {
				fprintf(
				    stderr,
				    "vigil record: --max-size %s: not a size of at least 4K (64M, "
				    "2G), or 0 for no cap\n",
				    optarg);
				return 2;
			}
			setenv("VIGIL_MAX_SIZE", optarg, 1);
			break;
		case 'p':
			setenv("VIGIL_PACKET_SIZE", optarg, 1);
			break;
		case 'l':
			listen = 1;
			break;
		case 't':
			to = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "vigil record: see 'vigil record --help'\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
		        "vigil record: no command to run (vigil record [-o DIR] -- COMMAND)\n");
		return 2;
	}
	char defname[64];
	if (!out) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(defname, sizeof defname, "vigil-trace-%Y%m%d-%H%M%S", &tm);
		out = defname;
	}
	char lib[PATH_MAX], dir[PATH_MAX];
	if (to && out != defname) {
		fprintf(stderr, "vigil record: -o and --to exclude each other\n");
		return 2;
	}
	char why[160];
	if (to && vg_cli_check_addr(to, why, sizeof why) < 0) {
		fprintf(stderr, "vigil record: --to %s: %s\n", to, why);
		return 2;
	}
	choose_layout(layout, to);
	char exe[PATH_MAX];
	if (!runnable(argv[optind], exe, sizeof exe)) {
		fprintf(stderr, "vigil record: cannot run %s: %s\n", argv[optind],
		        strchr(argv[optind], '/') ? strerror(errno) : "not found on PATH");
		return 127;
	}
	if (to) /* what earlier runs could not ship, before this one adds to it */
		vg_send_leftovers(to);
	if (vg_cli_find_runtime("record", lib, sizeof lib) < 0 ||
	    (to ? make_spool(dir, sizeof dir) : prepare_output(out, dir, sizeof dir)) < 0)
		return 2;

	vg_cli_export_clock();
	char relay[PATH_MAX + 16];
	int relayed = 0;
	if (to && vg_tls_wanted(to)) { /* TLS lives here, not in the subjects (tls_link.c) */
		char err[512];
		if (vg_tls_relay_start(to, relay, sizeof relay, err, sizeof err) < 0) {
			fprintf(stderr, "vigil record: collector %s: %s\n", to, err);
			rmdir(dir);
			return 2;
		}
		relayed = 1;
	}
	if (to) { /* the runtime records into the spool and ships it (docs/protocol.md) */
		setenv("VIGIL_TO", relayed ? relay : to, 1);
		if (relayed) /* the session files name the collector, for leftovers */
			setenv("VIGIL_TO_ORIGIN", to, 1);
		else
			unsetenv("VIGIL_TO_ORIGIN");
		setenv("VIGIL_SPOOL", dir, 1);
		unsetenv("VIGIL_OUT");
	} else {
		setenv("VIGIL_OUT", dir, 1);
	}
	if (sensors[0])
		setenv("VIGIL_SENSORS", sensors, 1);
	unsetenv("VIGIL_USDT_PLAN");
	unsetenv("VIGIL_USDT_PLANNER");
	if (usdt[0]) {
		setenv("VIGIL_USDT", usdt, 1);
		if (!usdt_int3)
			plan_usdt(exe, usdt);
	}
	/* the runtime asks us (`vigil usdt plan`) for the plans of objects we did not plan:
	 * libraries, those loaded later, sites switched on through a collector */
	char self[PATH_MAX];
	ssize_t self_len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (!usdt_int3 && self_len > 0) {
		self[self_len] = 0;
		setenv("VIGIL_USDT_PLANNER", self, 1);
	}
	if (listen) { /* docs/control.md, "Attaching" */
		setenv("VIGIL_CONTROL", "listen", 1);
		if (!sensors[0])
			setenv("VIGIL_SENSORS", "vg.*", 1);
		setenv("VIGIL_ENTITY_FLAGS", "off", 0); /* the user's own setting stays */
	}
	unsetenv("VIGIL_PROC");
	unsetenv("VIGIL_OUT_TEMPORARY"); /* the trace stays where vigil record says */
	if (vg_cli_set_preload(lib) < 0) {
		fprintf(stderr, "vigil record: out of memory\n");
		return 2;
	}

	if (vg_exe_is_static(argv[optind]))
		fprintf(stderr,
		        "vigil record: %s is statically linked: no preload reaches it, nothing of "
		        "it is recorded (docs/net.md)\n",
		        argv[optind]);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "vigil record: cannot fork: %s\n", strerror(errno));
		return 2;
	}
	if (child == 0) {
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "vigil record: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	struct sigaction sa = {0};
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Ctrl-C reaches the subject through the terminal; vigil stays to finish up. */
	signal(SIGINT, SIG_IGN);
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "vigil record: lost the subject: %s\n", strerror(errno));
			return 2;
		}
	if (relayed) /* descendants still sending get their linger's worth */
		vg_tls_relay_stop(5000);
	if (to) {
		if (!quiet && WIFSIGNALED(status))
			fprintf(stderr, "vigil record: %s was killed by signal %d\n", argv[optind],
			        WTERMSIG(status));
		/* Each process removes what the collector acknowledged; what is left was not. */
		if (rmdir(dir) < 0)
			fprintf(
			    stderr,
			    "vigil record: not everything was acknowledged by the collector at %s; "
			    "the rest stays in %s\n",
			    to, dir);
		else if (!quiet)
			fprintf(stderr, "vigil record: sent to the collector at %s\n", to);
	} else if (!quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "vigil record: %s was killed by signal %d\n", argv[optind],
			        WTERMSIG(status));
		summarize(dir, sensors);
	} else {
		struct vgt_recover_result rr;
		char err[256];
		vgt_recover_dir(dir, false, NULL, NULL, &rr, err, sizeof err);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
