/* vigil ui: the local web application over a trace (docs/ui.md; src/ui). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"

#ifndef VIGIL_HAVE_UI
int vg_cmd_ui(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "vigil ui: this vigil was built without libmicrohttpd (make deps installs "
	                "libmicrohttpd-dev)\n");
	return 2;
}
#else
#include "ui/ui.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil ui TRACE... [--port N] [--bind ADDR] [--tick DURATION]\n"
	        "                [--display D.vgd]\n"
	        "       vigil ui --export DIR [--display D.vgd] TRACE...\n"
	        "       vigil ui --watch [--sensors APP.vgl] "
	        "(-f Q.tq | -e 'STATEMENTS') [--every DUR]\n"
	        "                [--display D.vgd] [--port N] [--bind ADDR] -- PROGRAM [ARGS]\n"
	        "       vigil ui BASE.vgm OTHER.vgm | --models BASE OTHER    model workbench\n"
	        "       vigil ui NETS_DIR | --nets TRACE...                  network browser\n\n"
	        "Serves a web page over the trace's relations, from this process: a timeline\n"
	        "(one row per thread of each process, interval, state and entity relations as\n"
	        "bars), a TQuel workbench (the answers and errors of vigil query, explain,\n"
	        "downloads as CSV, JSON lines or SQLite) and a JSON API (docs/ui.md). The URL\n"
	        "is printed on stderr; Ctrl-C stops the server.\n\n"
	        "options:\n"
	        "  --port N        TCP port (default 8080; 0: any free port, printed)\n"
	        "  --bind ADDR     address to listen on (default 127.0.0.1; anything else lets\n"
	        "                  whoever reaches it read the trace)\n"
	        "  --tick DUR      the base tick of Clock in queries (default 1s)\n"
	        "  --display FILE  a display specification (.vgd, docs/display.md), played as a\n"
	        "                  movie in the Display tab (its errors: on stderr and there);\n"
	        "                  with --watch while PROGRAM runs (its sensors enabled too),\n"
	        "                  with --export in the static copy\n"
	        "  --export DIR    write the page and the trace's data into DIR (a new or empty\n"
	        "                  folder) instead of serving: DIR/index.html opens from disk\n"
	        "  --assets DIR    the built page (default: ../ui beside this vigil binary)\n"
	        "  --watch         live: run PROGRAM as vigil watch does (only the sensors the\n"
	        "                  query needs, from --sensors or the description PROGRAM\n"
	        "                  carries), show its answers as they come;\n"
	        "                  when it has ended, its trace opens in the timeline\n"
	        "  --sensors, -f, -e, --every   as for vigil watch (docs/watch.md)\n"
	        "  --models        the model workbench over two inputs of vigil model (model\n"
	        "                  files, recordings, traces), as vigil diff compares them; two\n"
	        "                  model files alone open it too; a trace also opens as a\n"
	        "                  timeline, linked from its transitions and events\n"
	        "  --nets          the network browser over traces split as vigil net split\n"
	        "                  does; a folder written by vigil net split alone opens it too;\n"
	        "                  the traces (or those of its index.json) open as the timeline,\n"
	        "                  linked from each network and message\n\n"
	        "examples:\n"
	        "  vigil ui run1                     then open the URL it prints\n"
	        "  vigil ui run1 --port 0 --bind ::1\n"
	        "  vigil ui run1 --display examples/mailbox/mailbox.vgd   the mailbox movie\n"
	        "  vigil ui base.vgm slow.vgm        vigil diff's reports, graph and CDFs\n"
	        "  vigil ui nets                     the networks of vigil net split -o nets\n"
	        "  vigil ui --export run1-page run1  && xdg-open run1-page/index.html\n"
	        "  vigil ui --export movie --display examples/mailbox/mailbox.vgd run1\n"
	        "  vigil ui --watch --sensors examples/mailbox/mailbox.vgl -f resumed.tq -- \\\n"
	        "      mailbox --seed 2 --messages 100000 --pace 200\n"
	        "  vigil ui --watch --sensors examples/mailbox/mailbox.vgl -f resumed.tq \\\n"
	        "      --display examples/mailbox/mailbox.vgd -- mailbox --seed 2 --pace 200\n");
}

/* ../ui beside the executable (build/bin/vigil -> build/ui). */
static char *default_assets(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return strdup("ui");
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	char *p;
	return asprintf(&p, "%s/../ui", exe) < 0 ? NULL : p;
}

/* A folder written by vigil net split: its index.json. */
static bool is_nets_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof path, "%s/index.json", dir);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* Which view the arguments alone ask for: two arguments of which a regular file (models)
 * open the model workbench, one folder of vigil net split the network browser; traces
 * (folders) the timeline. */
static void analysis_view(char **args, int n, bool *models, bool *nets)
{
	struct stat a, b;
	bool rega = !stat(args[0], &a) && S_ISREG(a.st_mode),
	     regb = !stat(args[1 % n], &b) && S_ISREG(b.st_mode);
	if (n == 2 && (rega || regb)) /* one missing model: said when it is read */
		*models = true;
	else if (n == 1 && !stat(args[0], &a) && S_ISDIR(a.st_mode) && is_nets_dir(args[0]))
		*nets = true;
}

int vg_cmd_ui(int argc, char **argv)
{
	static const struct option options[] = {{"port", required_argument, NULL, 'p'},
	                                        {"bind", required_argument, NULL, 'b'},
	                                        {"tick", required_argument, NULL, 't'},
	                                        {"display", required_argument, NULL, 'd'},
	                                        {"export", required_argument, NULL, 'x'},
	                                        {"assets", required_argument, NULL, 'a'},
	                                        {"watch", no_argument, NULL, 'w'},
	                                        {"sensors", required_argument, NULL, 's'},
	                                        {"file", required_argument, NULL, 'f'},
	                                        {"execute", required_argument, NULL, 'e'},
	                                        {"every", required_argument, NULL, 'E'},
	                                        {"models", no_argument, NULL, 'M'},
	                                        {"nets", no_argument, NULL, 'N'},
	                                        {"help", no_argument, NULL, 'h'},
	                                        {0}};
	const char *bind = NULL, *export_dir = NULL, *assets = NULL, *display = NULL;
	const char *sensors = NULL, *qfile = NULL, *qtext = NULL, *every = NULL;
	bool watch = false, models = false, nets = false;
	unsigned port = 8080;
	int64_t tick = 1000000000;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":hf:e:", options, NULL)) != -1) {
		switch (c) {
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > 65535) {
				fprintf(stderr, "vigil ui: --port: '%s' is not a port (0..65535)\n",
				        optarg);
				return 2;
			}
			port = (unsigned)v;
			break;
		}
		case 'b':
			bind = optarg;
			break;
		case 't':
			if (vgt_parse_duration(optarg, &tick) < 0 || tick < 1) {
				fprintf(
				    stderr,
				    "vigil ui: --tick: '%s' is not a positive duration (e.g. 1s, "
				    "10ms)\n",
				    optarg);
				return 2;
			}
			break;
		case 'd': /* loaded once the trace is open (a missing file: an error) */
			display = optarg;
			break;
		case 'x':
			export_dir = optarg;
			break;
		case 'a':
			assets = optarg;
			break;
		case 'w':
			watch = true;
			break;
		case 's':
			sensors = optarg;
			break;
		case 'f':
			qfile = optarg;
			break;
		case 'e':
			qtext = optarg;
			break;
		case 'E':
			every = optarg;
			break;
		case 'M':
			models = true;
			break;
		case 'N':
			nets = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "vigil ui: %s needs a value (see --help)\n",
			        argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "vigil ui: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	char *own_assets = NULL;
	if (!assets)
		assets = own_assets = default_assets();
	struct vgu_app app = {.tick_ns = tick, .assets = assets, .display = display};
	int rc = 2;
	if (watch && (models || nets)) {
		fprintf(stderr, "vigil ui: --models and --nets go without --watch\n");
		free(own_assets);
		return 2;
	}
	if (watch) {
		/* what vigil watch needs; it checks the rest itself (its errors on stderr) */
		if ((!qfile == !qtext) || export_dir || optind < 2 ||
		    strcmp(argv[optind - 1], "--") || optind >= argc) {
			fprintf(stderr, "vigil ui: --watch needs one of -f/-e, and -- "
			                "PROGRAM (no --export; see --help)\n");
			free(own_assets);
			return 2;
		}
		/* blocked before any thread or child starts: the server's sigwait takes them */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		/* a display with errors is shown as such; vigil watch runs without it */
		bool show = vgu_display_check_model(&app, sensors);
		if (vgu_live_start(&app, sensors, qfile, qtext, every, show ? display : NULL,
		                   argv + optind) == 0) {
			rc = vgu_serve(&app, bind, port);
			vgu_live_stop(&app);
		} else {
			vgu_display_close(&app);
		}
		free(own_assets);
		return rc;
	}
	if (sensors || qfile || qtext || every) {
		fprintf(stderr, "vigil ui: --sensors, -f, -e and --every go with --watch\n");
		free(own_assets);
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr,
		        "vigil ui: no trace given (usage: vigil ui TRACE...; see --help)\n");
		free(own_assets);
		return 2;
	}
	int nargs = argc - optind;
	if (!models && !nets && !watch)
		analysis_view(argv + optind, nargs, &models, &nets);
	if (models || nets) {
		if (watch || display || export_dir || (models && nets) || (models && nargs != 2)) {
			fprintf(
			    stderr, "vigil ui: %s\n",
			    models && nets ? "--models and --nets go alone"
			    : models && nargs != 2
			        ? "the model workbench needs BASE and OTHER (two models or traces)"
			        : "the analysis views go without --watch, --display and --export");
			free(own_assets);
			return 2;
		}
		struct stat st;
		bool dir = nargs == 1 && !stat(argv[optind], &st) && S_ISDIR(st.st_mode) &&
		           is_nets_dir(argv[optind]);
		const char *const *traces = (const char *const *)argv + optind;
		int opened = models ? vgu_models_open(&app, argv[optind], argv[optind + 1])
		             : dir  ? vgu_nets_open_dir(&app, argv[optind])
		                    : vgu_nets_open_traces(&app, traces, (size_t)nargs);
		/* the networks' traces as the timeline too: a network's jump lands there */
		if (opened == 0 && nets)
			opened = vgu_nets_open_timeline(&app, dir ? NULL : traces, (size_t)nargs);
		if (opened == 0)
			rc = vgu_serve(&app, bind, port);
		if (app.trace) /* before the networks: its paths are theirs */
			vgu_app_close(&app);
		vgu_models_close(&app);
		vgu_nets_close(&app);
		free(own_assets);
		return rc == 0 ? 0 : 2;
	}
	if (vgu_app_open(&app, (const char *const *)argv + optind, (size_t)(argc - optind)) == 0) {
		if (export_dir) {
			app.exporting = true;
			vgu_display_open(&app);
			rc = vgu_export(&app, export_dir, NULL, 0);
			vgu_display_close(&app);
		} else {
			vgu_display_open(&app);
			rc = vgu_serve(&app, bind, port);
			vgu_display_close(&app);
		}
		vgu_app_close(&app);
	}
	free(own_assets);
	return rc;
}
#endif
