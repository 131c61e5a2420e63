/* vigil: the command-line front door. Dispatches to one subcommand per file. Built twice
 * (src/cli/CMakeLists.txt): as vigil-full with every command, and as the front end vigil
 * (VIGIL_FRONT_END) with the commands that read traces and answer queries; the front end
 * runs vigil-full in its place for the others (front_end.c), so those commands' libraries
 * (TLS, PostgreSQL, HTTP server, disassembler) are never loaded by a query. */
#include "commands.h"
#include "embedded.h"
#include "front_end.h"

#include <stdio.h>
#include <string.h>

#include "vigil/vigil.h"
#ifdef VIGIL_HAVE_DERIVED
#include "derived/derived.h"
#endif

/* A command the front end leaves to vigil-full: not linked into it. */
#ifdef VIGIL_FRONT_END
#define FULL(run) NULL
#else
#define FULL(run) run
#endif

/* A program's embedded sensor description (libelf): read by vigil-full only. */
vg_embedded_reader *const vg_embedded_model = FULL(vg_cli_embedded_model);

struct command {
	const char *name;
	int (*run)(int argc, char **argv); /* NULL: vigil-full runs it */
	const char *summary;
};

static const struct command commands[] = {
    {"record", FULL(vg_cmd_record), "run a program and record it into a CTF trace"},
    {"dump", vg_cmd_dump, "print every event of a trace, merged in time order"},
    {"recover", vg_cmd_recover, "repair the end of a trace whose subject was killed"},
    {"gen", vg_cmd_gen, "generate sensor code (C, Python, Java) from a .vgl file"},
    {"relations", vg_cmd_relations, "list the historical relations of a trace"},
    {"query", vg_cmd_query, "answer TQuel queries over the relations of a trace"},
    {"explain", vg_cmd_explain, "show the algebra of TQuel queries, before and after optimization"},
    {"watch", FULL(vg_cmd_watch),
     "run a program with only the sensors a TQuel query needs; print its answer live"},
    {"model", vg_cmd_model, "merge log models, recordings and traces into a behaviour model"},
    {"diff", vg_cmd_diff, "rank the differences between two models or two query results"},
    {"cdf", vg_cmd_cdf, "distribution of the time from one event to others in a model"},
    {"check", vg_cmd_check, "verify the sequencing rules of consistent partial reporting"},
    {"net", vg_cmd_net, "interaction networks: split traces per input, report, render"},
    {"clock", vg_cmd_clock, "each host's clock offset against a reference, from messages"},
    {"probes", FULL(vg_cmd_probes), "switch a running process's sensors on and off by pattern"},
    {"report", FULL(vg_cmd_report),
     "change what a running process reports (categories, threads, ...)"},
    {"send", FULL(vg_cmd_send), "ship what a killed subject left in its spool to the collector"},
    {"store", FULL(vg_cmd_store), "write the relations of traces into PostgreSQL tables"},
    {"ui", FULL(vg_cmd_ui), "a web page over a trace: timeline, TQuel workbench, JSON API"},
    {"display", vg_cmd_display, "check a .vgd display; draw its scene at an instant (SVG, JSON)"},
    {"export", FULL(vg_cmd_export), "write a trace for Perfetto UI or chrome://tracing"},
    {"usdt", FULL(vg_cmd_usdt), "list the SDT probe sites (USDT) of a program, library or process"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: vigil [--version] [--help] COMMAND [ARGS]\n\n"
	           "vigil records what a system does as a historical database of typed events.\n\n"
	           "commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nexamples:\n"
	           "  vigil record -o run1 -- ./server --port 8080   record a program\n"
	           "  vigil dump run1                                print its events\n"
	           "  vigil dump --json run1 | jq .name              JSON lines for scripts\n"
	           "  vigil query run1 -f resumed.tq                 ask it a TQuel question\n"
	           "  vigil watch --sensors app.vgl -f q.tq -- ./app ask while it runs\n"
	           "  vigil model run1 -o run1.vgm                   its behaviour model\n"
	           "  vigil diff base.vgm run1.vgm                   what changed, ranked\n"
	           "  vigil cdf run1.vgm --from A --to B             time from A to B\n"
	           "  vigil check run1                               verify its consistency\n"
	           "  vigil net split hostA hostB -o nets            one network per input\n"
	           "  vigil export run1 --format perfetto -o r.pftrace  for Perfetto UI\n"
	           "  vigil COMMAND --help                           help on one command\n");
}

int main(int argc, char **argv)
{
	vg_front_end_argv = argv;
#ifndef VIGIL_FRONT_END
	vg_full_share_cache();
#endif
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("vigil %s\n", VG_VERSION);
		return 0;
	}
#ifdef VIGIL_HAVE_DERIVED
	vgd_register_all(); /* Network, Message, Violation...: built when a query names one */
#endif
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run ? commands[i].run(argc - 1, argv + 1)
			                       : vg_run_full(argv);
	fprintf(stderr, "vigil: unknown command '%s' (see 'vigil --help')\n", argv[1]);
	return 2;
}
