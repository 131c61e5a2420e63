/* vigil report --pid PID: changes a running process's reporting (docs/consistency.md
 * "From outside") through its control channel: the categories, the threads, the
 * sensors reported, and suspending or resuming the whole process, as VIGIL_REPORT* and
 * the vg_report_* functions do from inside. Each change is one `report ...` command;
 * the settings are the process's and outlive this command's connection. */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/control_link.h"

#define MAX_CHANGES 32

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil report --pid PID [--categories LIST] [--threads GLOBS | --all-threads]\n"
	    "                    [--sensors-on GLOBS] [--sensors-off GLOBS]\n"
	    "                    [--suspend | --resume] [--window on:D,every:P|off]\n"
	    "                    [--listener N ...] [--json]\n\n"
	    "Changes what a running process reports (docs/consistency.md), through its control\n"
	    "channel: the process listens for monitors (vigil record --listen, or\n"
	    "VIGIL_CONTROL=listen). The changes are applied in the order given, each one\n"
	    "consistently (what is reported after it still obeys the sequencing rules), and\n"
	    "stay after this command has detached: they are the process's settings, as if\n"
	    "it had called vg_report_categories, vg_report_threads, vg_report_sensors,\n"
	    "vg_report_suspend or vg_report_resume itself.\n\n"
	    "options:\n"
	    "  --pid PID            the process (or the vigil record running it)\n"
	    "  --categories LIST    report only these categories (entity, activity) and kinds\n"
	    "                       (types, objects, execution, synchronization), or all, none\n"
	    "                       (VIGIL_REPORT; a list without kinds means every kind)\n"
	    "  --threads GLOBS      report only threads whose names match (VIGIL_REPORT_THREADS:\n"
	    "                       comma-separated globs, -GLOB leaves out; the last match\n"
	    "                       decides)\n"
	    "  --all-threads        report every thread again\n"
	    "  --sensors-on GLOBS   switch reporting of these sensors on (vg_report_sensors; a\n"
	    "  --sensors-off GLOBS  counter: two offs need two ons)\n"
	    "  --suspend, --resume  suspend or resume reporting process-wide (they nest)\n"
	    "  --window on:D,every:P  report only during D of every P from now on (e.g.\n"
	    "                       on:50ms,every:1s; VIGIL_REPORT_WINDOW); off: no windows\n"
	    "  --listener N         the options after it change listener N's filter\n"
	    "                       (VIGIL_LISTENERS; 0, the default: the main output):\n"
	    "                       --categories, --threads, --all-threads, --suspend, --resume,\n"
	    "                       and --sensors-on GLOBS (its sensor globs, replaced)\n"
	    "  --json               one JSON object on stdout: {pid, changes: [{command, count,\n"
	    "                       at_ns}]}\n\n"
	    "examples:\n"
	    "  vigil record --listen -o srv -- ./mailbox --messages 100000 --pace 1000 &\n"
	    "  vigil report --pid $! --categories entity        only lifetimes from now on\n"
	    "  vigil report --pid $! --threads 'processor-*' --categories all\n"
	    "  vigil report --pid $! --sensors-off 'mailbox.Waiting*'\n"
	    "  vigil report --pid $! --categories synchronization   lifetimes and locks\n"
	    "  vigil report --pid $! --suspend --json\n"
	    "  vigil report --pid $! --resume --all-threads\n"
	    "  vigil report --pid $! --window on:50ms,every:1s   50 ms of every second\n"
	    "  vigil report --pid $! --window off\n\n"
	    "exit status: 0 every change applied; 1 the process refused one (the ones before it\n"
	    "stay applied); 2 a usage error or a failed attach.\n");
}

/* The control lines, in the order the options were given. */
struct changes {
	char *line[MAX_CHANGES];
	int n;
};

/* The listener the next options are for (--listener N): "" or "listener N ". */
static char listener_prefix[32];

static int add(struct changes *ch, const char *fmt, const char *arg)
{
	if (ch->n == MAX_CHANGES) {
		fprintf(stderr, "vigil report: at most %d changes at once\n", MAX_CHANGES);
		return -1;
	}
	if (arg && (!*arg || strchr(arg, ' ') || strchr(arg, '\n'))) {
		fprintf(stderr, "vigil report: '%s': a list has no spaces (comma-separated)\n",
		        arg);
		return -1;
	}
	char *body;
	if (asprintf(&body, fmt, arg ? arg : "") < 0)
		return -1;
	/* "report X" becomes "report listener N X" */
	int rc = asprintf(&ch->line[ch->n], "report %s%s", listener_prefix, body + 7);
	free(body);
	if (rc < 0)
		return -1;
	ch->n++;
	return 0;
}

static int parse(int argc, char **argv, int *pid, int *json, struct changes *ch)
{
	enum {
		CATS = 256,
		THREADS,
		ALL_THREADS,
		ON,
		OFF,
		SUSPEND,
		RESUME,
		WINDOW,
		JSON,
		PID,
		LISTENER
	};
	static const struct option opts[] = {{"pid", required_argument, 0, PID},
	                                     {"categories", required_argument, 0, CATS},
	                                     {"threads", required_argument, 0, THREADS},
	                                     {"all-threads", no_argument, 0, ALL_THREADS},
	                                     {"sensors-on", required_argument, 0, ON},
	                                     {"sensors-off", required_argument, 0, OFF},
	                                     {"suspend", no_argument, 0, SUSPEND},
	                                     {"resume", no_argument, 0, RESUME},
	                                     {"window", required_argument, 0, WINDOW},
	                                     {"json", no_argument, 0, JSON},
	                                     {"listener", required_argument, 0, LISTENER},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	optind = 1;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1;) {
		int rc = 0;
		switch (c) {
		case PID: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 0x3fffffff) {
				fprintf(stderr, "vigil report: --pid '%s': expected a process id\n",
				        optarg);
				return -1;
			}
			*pid = (int)v;
			break;
		}
		case CATS:
			rc = add(ch, "report categories %s", optarg);
			break;
		case THREADS:
			rc = add(ch, "report threads %s", optarg);
			break;
		case ALL_THREADS:
			rc = add(ch, "report threads", NULL);
			break;
		case ON:
			rc = add(ch,
			         listener_prefix[0] ? "report sensors %s" : "report sensors on %s",
			         optarg);
			break;
		case OFF:
			if (listener_prefix[0]) {
				fprintf(stderr,
				        "vigil report: --sensors-off: a listener's sensors are "
				        "given whole (--sensors-on 'GLOBS,-GLOB')\n");
				return -1;
			}
			rc = add(ch, "report sensors off %s", optarg);
			break;
		case LISTENER: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 0 || v > 7) {
				fprintf(stderr, "vigil report: --listener '%s': expected 0 to 7\n",
				        optarg);
				return -1;
			}
			if (v)
				snprintf(listener_prefix, sizeof listener_prefix, "listener %ld ",
				         v);
			else
				listener_prefix[0] = 0;
			break;
		}
		case SUSPEND:
			rc = add(ch, "report suspend", NULL);
			break;
		case RESUME:
			rc = add(ch, "report resume", NULL);
			break;
		case WINDOW:
			rc = add(ch, "report window %s", optarg);
			break;
		case JSON:
			*json = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "vigil report: %s needs a value (see --help)\n",
			        argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "vigil report: unknown option '%s' (see --help)\n",
			        argv[optind - 1]);
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "vigil report: unexpected argument '%s' (see --help)\n",
		        argv[optind]);
		return -1;
	}
	if (!*pid) {
		fprintf(stderr, "vigil report: --pid PID is required (see --help)\n");
		return -1;
	}
	if (!ch->n) {
		fprintf(stderr, "vigil report: nothing to change (give --categories, --threads, "
		                "--sensors-on, --sensors-off, --suspend, --resume or --window)\n");
		return -1;
	}
	return 0;
}

int vg_cmd_report(int argc, char **argv)
{
	int pid = 0, json = 0;
	struct changes ch = {.n = 0};
	int rc = parse(argc, argv, &pid, &json, &ch);
	if (rc) {
		for (int i = 0; i < ch.n; i++)
			free(ch.line[i]);
		return rc < 0 ? 2 : 0;
	}
	char err[512];
	struct vgc_subject *c = vgc_attach(pid, err, sizeof err);
	if (!c) {
		fprintf(stderr, "vigil report: %s\n", err);
		for (int i = 0; i < ch.n; i++)
			free(ch.line[i]);
		return 2;
	}
	rc = 0;
	json_t *changes = json_array();
	for (int i = 0; i < ch.n && !rc; i++) {
		int64_t at;
		long count = -1;
		if (vgc_command(c, ch.line[i], &at, &count, err, sizeof err) < 0) {
			fprintf(stderr, "vigil report: process %d refused '%s': %s\n",
			        vgc_subject_pid(c), ch.line[i], err);
			rc = 1;
			break;
		}
		if (count >= 0)
			fprintf(stderr, "vigil report: process %d: %s (%ld sensor(s) now)\n",
			        vgc_subject_pid(c), ch.line[i] + 7, count);
		else
			fprintf(stderr, "vigil report: process %d: %s\n", vgc_subject_pid(c),
			        ch.line[i] + 7);
		json_array_append_new(changes,
		                      json_pack("{s:s, s:I, s:I}", "command", ch.line[i], "count",
		                                (json_int_t)count, "at_ns", (json_int_t)at));
	}
	if (json) {
		json_t *o = json_pack("{s:i, s:o}", "pid", vgc_subject_pid(c), "changes", changes);
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		json_decref(changes);
	}
	vgc_subject_close(c);
	for (int i = 0; i < ch.n; i++)
		free(ch.line[i]);
	return rc;
}
