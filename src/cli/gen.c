/* vigil gen: checks a sensor description (.vgl) and generates the code of its sensors
 * for C, Python, Java or Perl. The work is src/lang's; this parses options and reports. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lang/lang.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: vigil gen FILE.vgl --lang c|python|java|perl -o DIR\n"
	       "       vigil gen FILE.vgl --check\n\n"
	       "Checks a sensor description (docs/language.md) and its imports, then writes the\n"
	       "code of its sensors and records for one language into DIR (created if missing).\n"
	       "Every error is reported as FILE:LINE:COL: error: MESSAGE with the source line and\n"
	       "a caret; nothing is written if there is any.\n\n"
	       "options:\n"
	       "  -l, --lang LANG   c, python, java or perl (may be given\n"
	       "                    several times)\n"
	       "  -o, --output DIR  where the generated files go\n"
	       "  -c, --check       only check the file, write nothing\n"
	       "  -h, --help        this help\n\n"
	       "exit status: 0 done, 1 the file has errors (or the code could not be written),\n"
	       "2 usage error.\n\n"
	       "examples:\n"
	       "  vigil gen mailbox.vgl --check                    check only\n"
	       "  vigil gen mailbox.vgl --lang c -o gen/           C header for the sensors\n"
	       "  vigil gen mailbox.vgl -l python -l java -o gen/  readers and writers\n");
}

struct lang {
	const char *name;
	int (*gen)(const struct vgl_model *m, const char *outdir, char *err, size_t errsize);
};

static const struct lang langs[] = {
    {"c", vgl_gen_c},
    {"python", vgl_gen_python},
    {"java", vgl_gen_java},
    {"perl", vgl_gen_perl},
};
#define NLANGS (sizeof langs / sizeof *langs)

static int usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "vigil gen: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, " (see 'vigil gen --help')\n");
	return 2;
}

int vg_cmd_gen(int argc, char **argv)
{
	static const struct option longopts[] = {{"lang", required_argument, NULL, 'l'},
	                                         {"output", required_argument, NULL, 'o'},
	                                         {"check", no_argument, NULL, 'c'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	bool check_only = false, wanted[NLANGS] = {false};
	const char *outdir = NULL;
	optind = 0;
	opterr = 0;
	for (int c; (c = getopt_long(argc, argv, ":l:o:ch", longopts, NULL)) != -1;) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		} else if (c == 'c') {
			check_only = true;
		} else if (c == 'o') {
			outdir = optarg;
		} else if (c == 'l') {
			size_t k = 0;
			while (k < NLANGS && strcmp(optarg, langs[k].name))
				k++;
			if (k == NLANGS)
				return usage_error(
				    "unknown language '%s' (c, python, java or perl)", optarg);
			wanted[k] = true;
		} else if (c == ':') {
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		} else {
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("no .vgl file given%s", "");
	if (argc - optind > 1)
		return usage_error("one .vgl file at a time, got also '%s'", argv[optind + 1]);
	size_t nwanted = 0;
	for (size_t k = 0; k < NLANGS; k++)
		nwanted += wanted[k];
	if (!check_only && !nwanted)
		return usage_error("no language given: --lang c|python|java, or --check%s", "");
	if (!check_only && !outdir)
		return usage_error("no output directory given: -o DIR%s", "");
	if (outdir && !*outdir)
		return usage_error("empty output directory%s", "");

	const char *path = argv[optind];
	int nerrors = 0;
	struct vgl_model *m = vgl_load(path, stderr, &nerrors);
	if (!m) {
		fprintf(stderr, "vigil gen: %s: %d error%s\n", path, nerrors,
		        nerrors == 1 ? "" : "s");
		return 1;
	}
	int status = 0;
	if (check_only) {
		printf("vigil gen: %s: ok (%zu record%s, %zu sensor%s)\n", path, m->nrecords,
		       m->nrecords == 1 ? "" : "s", m->nsensors, m->nsensors == 1 ? "" : "s");
	} else {
		for (size_t k = 0; k < NLANGS && !status; k++) {
			if (!wanted[k])
				continue;
			char err[512] = "";
			if (langs[k].gen(m, outdir, err, sizeof err) < 0) {
				fprintf(stderr, "vigil gen: %s: %s\n", langs[k].name,
				        *err ? err : "generation failed");
				status = 1;
			} else {
				printf("vigil gen: %s -> %s (%s)\n", path, outdir, langs[k].name);
			}
		}
	}
	vgl_free(m);
	return status;
}
