/* vigil recover: repairs the end of a trace whose subject was killed, so that strict
 * CTF readers (babeltrace2) accept it. The work is vgt_recover_dir's; this prints. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "trace/trace.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: vigil recover [--dry-run] TRACE\n\n"
	        "Repairs the end of a trace whose subject was killed, so that strict CTF readers\n"
	        "such as babeltrace2 accept it: removes zero-filled space after a stream's last\n"
	        "packet, shrinks a last packet that claims bytes past the end of its file, and\n"
	        "cuts a metadata file after its last complete declaration. No completed event is\n"
	        "ever removed. Damage inside a stream is reported and left as it is.\n\n"
	        "options:\n"
	        "  -n, --dry-run  print what would change, change nothing\n"
	        "  -h, --help     this help\n\n"
	        "exit status: 0 the trace is now whole, 1 damage was left, 2 usage error or\n"
	        "unreadable trace.\n\n"
	        "examples:\n"
	        "  vigil recover run1                  repair in place\n"
	        "  vigil recover --dry-run run1        see what would change\n"
	        "  vigil recover run1 && babeltrace2 run1\n");
}

static void print_line(void *ctx, const char *line)
{
	(void)ctx;
	printf("%s\n", line);
}

int vg_cmd_recover(int argc, char **argv)
{
	static const struct option longopts[] = {{"dry-run", no_argument, NULL, 'n'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	bool dry = false;
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, "nh", longopts, NULL)) != -1;) {
		if (c == 'n') {
			dry = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr,
			        "vigil recover: unknown option '%s' (see 'vigil recover --help')\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "vigil recover: %s (see 'vigil recover --help')\n",
		        optind >= argc ? "no trace given" : "one trace at a time");
		return 2;
	}
	const char *path = argv[optind];
	struct vgt_recover_result res;
	char err[512];
	if (vgt_recover_dir(path, dry, print_line, NULL, &res, err, sizeof err) < 0) {
		fprintf(stderr, "vigil recover: %s\n", err);
		return 2;
	}
	printf("vigil recover: %s: %u image%s, %u stream%s; %u change%s%s; %u problem%s left\n",
	       path, res.images, res.images == 1 ? "" : "s", res.streams,
	       res.streams == 1 ? "" : "s", res.changes, res.changes == 1 ? "" : "s",
	       dry && res.changes ? " (dry run: none made)" : "", res.unrepaired,
	       res.unrepaired == 1 ? "" : "s");
	fflush(stdout);
	return res.unrepaired ? 1 : 0;
}
