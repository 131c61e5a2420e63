/* The monitor's end of the control channel (docs/control.md): `vigil watch` listens on a
 * Unix socket, each subject process image connects and says hello, and the monitor sends
 * it commands (sensor, entities, entity, trigger, go, ping), one answer line each. */
#ifndef VIGIL_CLI_CONTROL_LINK_H
#define VIGIL_CLI_CONTROL_LINK_H

#include <stddef.h>
#include <stdint.h>

struct vgc_server;
struct vgc_subject;

/* Unlinks `path`, binds and listens there. NULL with the reason in err. */
struct vgc_server *vgc_listen(const char *path, char *err, size_t errsize);
int vgc_server_fd(const struct vgc_server *s); /* readable: a subject is connecting */
/* Accepts one pending connection and reads its hello (bounded wait, 5 s). */
struct vgc_subject *vgc_accept(struct vgc_server *s, char *err, size_t errsize);
/* Attaches to a running process that listens (VIGIL_CONTROL=listen: the abstract socket
 * `vigil-control.<pid>`) and reads its hello; NULL with the reason in err (not listening,
 * another monitor attached, another user). */
struct vgc_subject *vgc_attach(int pid, char *err, size_t errsize);
int vgc_subject_pid(const struct vgc_subject *c);
const char *vgc_subject_image(const struct vgc_subject *c); /* its trace directory */
int64_t vgc_subject_hello_ns(const struct vgc_subject *c);  /* now= of its hello */
int vgc_subject_fd(const struct vgc_subject *c); /* readable with nothing asked: it is gone */
/* Sends one command line (no newline) and waits for its answer line (bounded, 5 s).
 * Returns 0 with `*now_ns` (and `*count` if given, else -1) on `ok`; -1 with the
 * subject's error message or the I/O error in err. */
int vgc_command(struct vgc_subject *c, const char *line, int64_t *now_ns, long *count, char *err,
                size_t errsize);
void vgc_subject_close(struct vgc_subject *c); /* the subject sees "monitor gone" */
void vgc_server_close(struct vgc_server *s);   /* also unlinks the path */

#endif
