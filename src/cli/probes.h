/* vigil probes: the pattern form shared by the --pid and --collector paths. */
#ifndef VIGIL_CLI_PROBES_H
#define VIGIL_CLI_PROBES_H

#include <regex.h>

struct pattern {
	const char *text;
	int is_regex;
	regex_t re;
};

/* 0, or -1 after one line on stderr (empty, too long, spaces, a bad regex). */
int pattern_compile(struct pattern *p, const char *text);
int pattern_match(const struct pattern *p, const char *name);

/* --collector HOST:PORT|unix:PATH: the verb through vigild (docs/protocol.md "Probes"),
 * which matches the pattern against every subject's table. Exit status. */
int probes_collector(const char *addr, const char *verb, const struct pattern *p, int json);

#endif
