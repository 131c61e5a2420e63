/* vigil usdt list BINARY|PID: the SDT probe sites (USDT) of an executable, a shared
 * library, or every object a process has mapped (docs/usdt.md). The notes are read by
 * src/common/sdt.c, the reader the runtime arms the sites with. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bad_option.h"
#include "commands.h"
#include "common/sdt.h"
#include "format_opt.h"
#include "usdt_plan.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vigil usdt list [--format text|json] BINARY|PID\n"
	    "       vigil usdt plan BINARY PROVIDER:PROBE\n\n"
	    "Lists the statically defined tracing probes (SystemTap SDT notes, USDT) of an\n"
	    "executable or shared library, or of every object mapped by a running process:\n"
	    "provider, probe, site address, semaphore and each argument's operand as the\n"
	    "note gives it (size, signedness, register, memory, constant). Stripped files\n"
	    "keep their notes. Such probes become sensors with `vigil record --usdt`.\n"
	    "`plan` prints how each matching site would be entered by a jump into a\n"
	    "trampoline (the displaced instructions, decoded with capstone, one site a\n"
	    "line: DEV:INO:PC:BYTES:INSTRUCTIONS), or on stderr why a site keeps its\n"
	    "breakpoint (docs/usdt.md, \"The jump path\"). Plans are cached per file\n"
	    "(its build-id) in $VIGIL_CACHE_DIR, else $XDG_CACHE_HOME/vigil or\n"
	    "~/.cache/vigil; VIGIL_CACHE_DIR= (empty) keeps none (docs/usdt.md,\n"
	    "\"Plan cache\").\n\n"
	    "options:\n"
	    "  --format text|json  a table (default) or one JSON object (--json)\n"
	    "  -h, --help          this help\n\n"
	    "exit status: 0 listed (also when there are no probes); 1 a file could not be\n"
	    "read or holds a malformed note (what was read before it is listed); 2 bad usage.\n\n"
	    "examples:\n"
	    "  vigil usdt list /usr/lib/postgresql/15/bin/postgres\n"
	    "  vigil usdt list --format json /lib/x86_64-linux-gnu/libc.so.6 | jq "
	    "'.objects[0].probes | length'\n"
	    "  vigil usdt list $$                     # every object this shell has mapped\n"
	    "  vigil usdt plan /usr/lib/postgresql/15/bin/postgres 'postgresql:transaction__*'\n");
}

/* ---- one object ---- */

static const char *loc_name(const struct vg_sdt_arg *a)
{
	return a->loc == VG_SDT_LOC_REG   ? "register"
	       : a->loc == VG_SDT_LOC_MEM ? "memory"
	                                  : "constant";
}

static json_t *arg_json(const struct vg_sdt_arg *a, uint64_t bias)
{
	json_t *o = json_pack("{s:s%,s:i,s:b,s:s}", "spec", a->text, (size_t)a->text_len, "size",
	                      a->size, "signed", a->is_signed, "kind", loc_name(a));
	if (a->loc == VG_SDT_LOC_CONST)
		json_object_set_new(o, "value", json_integer(a->value));
	if (a->loc == VG_SDT_LOC_REG || (a->loc == VG_SDT_LOC_MEM && a->reg.reg >= 0)) {
		json_object_set_new(o, a->loc == VG_SDT_LOC_REG ? "register" : "base",
		                    json_string(vg_sdt_reg_name(a->reg.reg)));
		json_object_set_new(o, "register_bytes", json_integer(a->reg.width));
		if (a->reg.shift)
			json_object_set_new(o, "register_shift", json_integer(a->reg.shift));
	}
	if (a->loc == VG_SDT_LOC_MEM) {
		if (a->index.reg >= 0) {
			json_object_set_new(o, "index", json_string(vg_sdt_reg_name(a->index.reg)));
			json_object_set_new(o, "scale", json_integer(a->scale));
		}
		if (a->relocate) {
			char hex[32];
			snprintf(hex, sizeof hex, "0x%" PRIx64, (uint64_t)a->value + bias);
			json_object_set_new(o, "address", json_string(hex));
		} else {
			json_object_set_new(o, "offset", json_integer(a->value));
		}
	}
	return o;
}

static void hex(json_t *o, const char *key, uint64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "0x%" PRIx64, v);
	json_object_set_new(o, key, json_string(s));
}

struct target {
	int pid;       /* 0: a file */
	uint64_t bias; /* where the object is loaded (pid), else 0 */
	int mem;       /* /proc/PID/mem, for semaphore values, or -1 */
};

/* Lists one mapped ELF file; 0, or 1 after a line on stderr. */
static int list_object(const char *path, const uint8_t *data, size_t size, struct target *t,
                       json_t *objects, bool json, size_t *nprobes)
{
	struct vg_sdt_file f;
	char err[256];
	if (t->pid && (size < 4 || memcmp(data, "\177ELF", 4)))
		return 0; /* a mapped data file (locale archive, cache): no probes */
	if (vg_sdt_open(&f, data, size, err, sizeof err) < 0) {
		fprintf(stderr, "vigil usdt: %s: %s\n", path, err);
		return 1;
	}
	if (t->pid && f.is_dyn)
		t->bias -= f.first_load_vaddr; /* the mapping's start is the first segment's page */
	else if (t->pid)
		t->bias = 0;
	json_t *probes = json_array();
	size_t cursor = 0, n = 0;
	struct vg_sdt_probe p;
	int rc = 0, r;
	while ((r = vg_sdt_next(&f, &cursor, &p, err, sizeof err)) == 1) {
		n++;
		json_t *o = json_pack("{s:s,s:s,s:s}", "provider", p.provider, "name", p.name,
		                      "args_spec", p.args);
		hex(o, "pc", p.pc);
		uint8_t op;
		if (t->pid)
			hex(o, "address", p.pc + t->bias);
		/* a breakpoint (or vigil's jump, docs/usdt.md) where the note's nop should be:
		 * some tool has the site armed */
		if (t->mem >= 0 && pread(t->mem, &op, 1, (off_t)(p.pc + t->bias)) == 1) {
			json_object_set_new(o, "armed", json_boolean(op == 0xcc || op == 0xe9));
			if (op == 0xcc || op == 0xe9)
				json_object_set_new(o, "entry",
				                    json_string(op == 0xcc ? "int3" : "jump"));
		}
		if (p.semaphore) {
			hex(o, "semaphore", p.semaphore);
			uint16_t v;
			if (t->mem >= 0 &&
			    pread(t->mem, &v, 2, (off_t)(p.semaphore + t->bias)) == 2)
				json_object_set_new(o, "semaphore_value", json_integer(v));
		}
		json_t *args = json_array();
		for (unsigned i = 0; i < p.nargs; i++)
			json_array_append_new(args, arg_json(&p.arg[i], t->bias));
		json_object_set_new(o, "args", args);
		if (p.arg_error)
			json_object_set_new(o, "error",
			                    json_sprintf("argument %u (%.*s): %s", p.arg_bad,
			                                 (int)p.arg[p.arg_bad - 1].text_len,
			                                 p.arg[p.arg_bad - 1].text, p.arg_error));
		if (!json) {
			printf("%-12s %-34s 0x%-10" PRIx64, p.provider, p.name, p.pc + t->bias);
			if (p.semaphore)
				printf(" sem 0x%-10" PRIx64, p.semaphore + t->bias);
			else
				printf(" %-14s", "");
			printf(" %s\n", p.args[0] ? p.args : "(no arguments)");
			if (p.arg_error)
				printf("%12s  ! %s\n", "",
				       json_string_value(json_object_get(o, "error")));
		}
		json_array_append_new(probes, o);
	}
	if (r < 0) {
		fprintf(stderr, "vigil usdt: %s: %s\n", path, err);
		rc = 1;
	}
	*nprobes += n;
	if (!f.notes && !t->pid)
		fprintf(stderr, "vigil usdt: %s: no SDT probes (no .note.stapsdt section)\n", path);
	if (n || !t->pid) {
		json_t *obj = json_pack("{s:s,s:s,s:I,s:o}", "path", path, "type",
		                        f.is_dyn ? "shared" : "executable", "count", (json_int_t)n,
		                        "probes", probes);
		if (t->pid)
			hex(obj, "bias", t->bias);
		json_array_append_new(objects, obj);
		if (!json && t->pid)
			printf("# %s: %zu probe sites\n", path, n);
	} else {
		json_decref(probes);
	}
	return rc;
}

/* Maps a regular file and lists it; 0 or 1. */
static int list_file(const char *path, struct target *t, json_t *objects, bool json,
                     size_t *nprobes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "vigil usdt: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		fprintf(stderr, "vigil usdt: %s: %s\n", path,
		        S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
		close(fd);
		return 1;
	}
	void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		fprintf(stderr, "vigil usdt: %s: %s\n", path, strerror(errno));
		return 1;
	}
	int rc = list_object(path, data, (size_t)st.st_size, t, objects, json, nprobes);
	munmap(data, (size_t)st.st_size);
	return rc;
}

/* Every file-backed object of /proc/PID/maps, once, with the start of its first
 * mapping (file offset 0) as where it is loaded. */
static int list_pid(int pid, json_t *objects, bool json, size_t *nprobes, size_t *nobjects)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *maps = fopen(path, "re");
	if (!maps) {
		fprintf(stderr, "vigil usdt: process %d: %s\n", pid, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "/proc/%d/mem", pid);
	struct target t = {.pid = pid, .mem = open(path, O_RDONLY | O_CLOEXEC)};
	char line[4096 + 128], seen[64][512];
	size_t nseen = 0;
	int rc = 0;
	while (fgets(line, sizeof line, maps)) {
		unsigned long start, offset;
		int name_at = 0;
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &start, &offset, &name_at) < 2 ||
		    !name_at)
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		if (name[0] != '/' || offset != 0 || strstr(name, " (deleted)"))
			continue;
		size_t i = 0;
		while (i < nseen && strcmp(seen[i], name))
			i++;
		if (i < nseen || strlen(name) >= sizeof seen[0])
			continue;
		if (nseen < sizeof seen / sizeof *seen)
			strcpy(seen[nseen++], name);
		/* read it where the process sees it (its mount namespace, a chroot) */
		char real[600];
		snprintf(real, sizeof real, "/proc/%d/root%s", pid, name);
		t.bias = start;
		(*nobjects)++;
		struct stat st;
		if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
			continue; /* a device or socket mapping, not an ELF object */
		json_t *objs = json_array();
		rc |= list_file(real, &t, objs, json, nprobes);
		/* name the object as the process does */
		for (size_t k = 0; k < json_array_size(objs); k++) {
			json_t *o = json_array_get(objs, k);
			json_object_set_new(o, "path", json_string(name));
			json_array_append(objects, o);
		}
		json_decref(objs);
	}
	fclose(maps);
	if (t.mem >= 0)
		close(t.mem);
	return rc;
}

static int parse_pid(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return !errno && !*end && v > 0 && v <= 0x7fffffff && s[0] != '0' ? (int)v : 0;
}

static int print_plan(const char *text, void *arg)
{
	(void)arg;
	printf("%s\n", text);
	return 0;
}

/* vigil usdt plan BINARY P:GLOB: the jump path's plans of the matching sites, one a line
 * (VIGIL_USDT_PLAN takes them joined by ';'), refusals on stderr. */
static int plan(const char *binary, const char *patterns)
{
	struct stat st;
	char magic[4] = "";
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "vigil usdt: %s: %s\n", binary, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	ssize_t got = S_ISREG(st.st_mode) ? read(fd, magic, 4) : -1;
	close(fd);
	if (got != 4 || memcmp(magic, "\177ELF", 4)) {
		fprintf(stderr, "vigil usdt: %s: %s\n", binary,
		        S_ISREG(st.st_mode) ? "not an ELF file" : "not a regular file");
		return 1;
	}
	int n = vg_usdt_plan_file(binary, binary, patterns, print_plan, NULL);
	fprintf(stderr, "vigil usdt: %s: %d sites planned for the jump path\n", binary, n);
	return 0;
}

int vg_cmd_usdt(int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, 0, 'f'},
	                                     {"json", no_argument, 0, 'j'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	bool json = false;
	opterr = 0;
	for (int o; (o = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
		switch (o) {
		case 'f':
			if (vg_cli_format("usdt", optarg, &json))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return vg_cli_bad_option("usdt", argv);
		}
	}
	if (argc - optind == 3 && !strcmp(argv[optind], "plan"))
		return plan(argv[optind + 1], argv[optind + 2]);
	if (argc - optind != 2 || strcmp(argv[optind], "list")) {
		fprintf(stderr, "vigil usdt: expected 'list BINARY|PID' or 'plan BINARY "
		                "PROVIDER:PROBE' (see 'vigil usdt --help')\n");
		return 2;
	}
	const char *what = argv[optind + 1];
	int pid = parse_pid(what);
	json_t *objects = json_array();
	size_t nprobes = 0, nobjects = 0;
	int rc;
	if (pid && access(what, F_OK) < 0) {
		rc = list_pid(pid, objects, json, &nprobes, &nobjects);
		if (!rc)
			fprintf(stderr,
			        "vigil usdt: process %d: %zu probe sites in %zu of %zu mapped "
			        "objects\n",
			        pid, nprobes, json_array_size(objects), nobjects);
	} else {
		struct target t = {.mem = -1};
		rc = list_file(what, &t, objects, json, &nprobes);
		if (!json && nprobes)
			fprintf(stderr, "vigil usdt: %s: %zu probe sites\n", what, nprobes);
	}
	if (json) {
		json_t *doc =
		    json_pack("{s:o,s:I}", "objects", objects, "count", (json_int_t)nprobes);
		if (pid)
			json_object_set_new(doc, "pid", json_integer(pid));
		char *text = json_dumps(doc, JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(doc);
	} else {
		json_decref(objects);
	}
	return rc;
}
