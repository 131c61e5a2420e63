/* A cache of the jump path's plans per file (docs/usdt.md, "Plan cache"): planning a
 * large program (PostgreSQL: 0.9 s of CPU, most of it finding every branch target) is
 * done once per build of it. One text file per object in the cache directory
 * ($VIGIL_CACHE_DIR, else $XDG_CACHE_HOME/vigil, else ~/.cache/vigil; VIGIL_CACHE_DIR
 * set empty: no cache), named by the object's GNU build-id (else its device and inode),
 * holding every site's plan or refusal. A file whose size, modification time or build-id
 * differ is planned again; a cache file that does not
 * parse gives one line and is replaced. Plans read from it are checked against the
 * object's bytes by the planner, and again by the runtime before it patches anything. */
#ifndef VIGIL_CLI_USDT_PLAN_CACHE_H
#define VIGIL_CLI_USDT_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* One site: its plan `PC:HEX:INSNS` (ok), or why it has none. */
struct vg_plan_entry {
	uint64_t pc;
	int ok;
	char text[400];
};

struct vg_plan_set {
	struct vg_plan_entry *v;
	size_t n, cap;
};

/* Appends an entry; 0, or -1 (out of memory). */
int vg_plan_set_add(struct vg_plan_set *s, uint64_t pc, int ok, const char *text);
/* The entry of pc, or NULL. */
const struct vg_plan_entry *vg_plan_set_find(const struct vg_plan_set *s, uint64_t pc);
void vg_plan_set_free(struct vg_plan_set *s);

/* Who an object is to the cache: its build-id in hex ("" if none) and its stat. */
struct vg_plan_key {
	char build_id[81];
	struct stat st;
};

/* The cached plans of the object into out: 1 found, 0 none (or no cache, or the object
 * changed), -1 a cache file that does not parse (said in one line, naming `shown`). */
int vg_plan_cache_load(const struct vg_plan_key *k, const char *shown, struct vg_plan_set *out);
/* Writes the plans of the object (a new file renamed into place); failures are silent:
 * the cache is only an accelerator. */
void vg_plan_cache_store(const struct vg_plan_key *k, const struct vg_plan_set *plans);

#endif
