/* Command-line parsing: every option takes a value, as `--name VALUE` or `--name=VALUE`. */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: mailbox [OPTIONS]\n\n"
	    "The mailbox system of the relational-monitoring literature as a real program:\n"
	    "processors (threads) run processes (tasks) that send messages to mailboxes and\n"
	    "block on receive from empty ones. The logical run is the same for the same\n"
	    "options, however the threads interleave; --truth writes what happened in it.\n\n"
	    "options:\n"
	    "  --processors N   worker threads, named A, B, ...           (default 2, max %d)\n"
	    "  --processes N    processes, named P1, P2, ...              (default 4, max %d)\n"
	    "  --mailboxes N    mailboxes, named M1, M2, ...              (default 3, max %d)\n"
	    "  --messages N     messages sent during the run              (default 20, max %d)\n"
	    "  --quantum N      operations a process runs before yielding (default 4)\n"
	    "  --seed S         seed of the scripts, 0..2^63-1            (default 1)\n"
	    "  --pace US        each processor sleeps US microseconds after each step: a\n"
	    "                   slow run to attach a monitor to (default 0, max %d)\n"
	    "  --truth FILE     write the ground truth of the run as JSON to FILE\n"
	    "  --help           this text\n\n"
	    "examples:\n"
	    "  mailbox                                        a small run\n"
	    "  mailbox --processors 4 --processes 12 --messages 500 --seed 7\n"
	    "  mailbox --seed 3 --truth truth.json            with its ground truth\n"
	    "  vigil record -o run1 -- mailbox --seed 3       record it, then: vigil dump run1\n"
	    "  vigil record --listen -- mailbox --messages 100000 --pace 100 &\n"
	    "                                                 then: vigil watch --pid ...\n",
	    MB_MAX_PROCESSORS, MB_MAX_PROCESSES, MB_MAX_MAILBOXES, MB_MAX_MESSAGES, MB_MAX_PACE_US);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int parse_count(const char *name, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v < min || v > max) {
		fprintf(stderr, "mailbox: %s: expected an integer from %u to %u, got '%s'\n", name,
		        min, max, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static const char *const option_names[] = {"--processors", "--processes", "--mailboxes",
                                           "--messages",   "--quantum",   "--seed",
                                           "--pace",       "--truth"};

static int known_option(const char *arg, int name_len)
{
	for (size_t i = 0; i < sizeof option_names / sizeof *option_names; i++)
		if (strlen(option_names[i]) == (size_t)name_len &&
		    !strncmp(arg, option_names[i], (size_t)name_len))
			return 1;
	fprintf(stderr, "mailbox: unknown option '%.*s' (see mailbox --help)\n", name_len, arg);
	return 0;
}

/* `name` is one of option_names. */
static int set_option(struct mb_options *o, const char *name, const char *value)
{
	if (!strcmp(name, "--processors"))
		return parse_count(name, value, 1, MB_MAX_PROCESSORS, &o->processors);
	if (!strcmp(name, "--processes"))
		return parse_count(name, value, 1, MB_MAX_PROCESSES, &o->processes);
	if (!strcmp(name, "--mailboxes"))
		return parse_count(name, value, 1, MB_MAX_MAILBOXES, &o->mailboxes);
	if (!strcmp(name, "--messages"))
		return parse_count(name, value, 0, MB_MAX_MESSAGES, &o->messages);
	if (!strcmp(name, "--quantum"))
		return parse_count(name, value, 1, MB_MAX_QUANTUM, &o->quantum);
	if (!strcmp(name, "--seed")) {
		if (!parse_u64(value, &o->seed) && o->seed <= MB_MAX_SEED)
			return 0;
		fprintf(stderr, "mailbox: --seed: expected an integer from 0 to %llu, got '%s'\n",
		        (unsigned long long)MB_MAX_SEED, value);
		return -1;
	}
	if (!strcmp(name, "--pace"))
		return parse_count(name, value, 0, MB_MAX_PACE_US, &o->pace_us);
	if (!strcmp(name, "--truth")) {
		if (*value) {
			o->truth_path = value;
			return 0;
		}
		fprintf(stderr, "mailbox: --truth: expected a file name\n");
		return -1;
	}
	return -1; /* not reached: the name is known */
}

enum mb_parse_result mb_options_parse(struct mb_options *o, int argc, char **argv)
{
	*o = (struct mb_options){.processors = 2,
	                         .processes = 4,
	                         .mailboxes = 3,
	                         .messages = 20,
	                         .quantum = 4,
	                         .seed = 1};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			return MB_PARSE_HELP;
		}
		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "mailbox: unexpected argument '%s' (see mailbox --help)\n",
			        arg);
			return MB_PARSE_ERROR;
		}
		const char *value;
		const char *eq = strchr(arg, '=');
		int name_len = eq ? (int)(eq - arg) : (int)strlen(arg);
		if (!known_option(arg, name_len))
			return MB_PARSE_ERROR;
		if (eq) {
			value = eq + 1;
		} else {
			if (i + 1 >= argc) {
				fprintf(stderr, "mailbox: %s needs a value (see mailbox --help)\n",
				        arg);
				return MB_PARSE_ERROR;
			}
			value = argv[++i];
		}
		char name[16]; /* longer than every known name */
		snprintf(name, sizeof name, "%.*s", name_len, arg);
		if (set_option(o, name, value))
			return MB_PARSE_ERROR;
	}
	/* Every message goes from a sender to a different receiver process. */
	if (o->messages > 0 && o->processes < 2) {
		fprintf(stderr,
		        "mailbox: --messages %u needs at least 2 processes (a sender and "
		        "a receiver)\n",
		        o->messages);
		return MB_PARSE_ERROR;
	}
	return MB_PARSE_RUN;
}
