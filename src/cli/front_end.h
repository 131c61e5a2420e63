/* The front end's hand-off to vigil-full (front_end.c, src/cli/main.c). */
#ifndef VIGIL_CLI_FRONT_END_H
#define VIGIL_CLI_FRONT_END_H

/* main's argv, kept for a command that finds it must run in vigil-full after all (a query
 * over a postgresql:// store). */
extern char **vg_front_end_argv;

/* Runs vigil-full with argv in this process's place (execv: the same pid, signals and
 * descriptors). Returns only on failure, 2, after saying why in one line. */
int vg_run_full(char **argv);

/* The sensor description embedded in a program (embedded.h: read with libelf, which
 * loads zlib): vg_cli_embedded_model in vigil-full, NULL in the front end (main.c), which
 * runs vigil-full for `vigil relations PROGRAM` so that its start loads neither. */
struct vgl_model;
typedef struct vgl_model *vg_embedded_reader(const char *cmd, const char *program, int *found);
extern vg_embedded_reader *const vg_embedded_model;

/* vigil-full: key the relations cache by the front end's build (the vigil beside it), so
 * that `vigil store` and `vigil query` share one cache (relations/cache.h). */
void vg_full_share_cache(void);

#endif
