/* vigil send SPOOL: ships to a collector what a subject left in its spool (a process
 * killed with SIGKILL, or one whose VIGIL_TO_LINGER ran out), then removes it
 * (docs/protocol.md "Subjects"). Each process in the spool, (pid, process gen), resumes
 * its session with the secret kept beside its images (.session-PID-GEN); every packet
 * still whole in the spool is sent again (the collector skips what it stored already,
 * by packet_seq_num), those with holes punched were acknowledged and freed: skipped. The
 * connection ends without BYE, so the collector completes the images as `vigil recover`
 * would. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_io.h"
#include "cli/collector_link.h"
#include "cli/commands.h"
#include "cli/send.h"
#include "wire/tsdl_header.h"

#define HDR VGW_PACKET_HEADER_SIZE
#define MAX_IMAGES 4096

struct img {
	char name[256];
	char host[256], program[256];
	int pid;
	uint64_t gen;
	uint32_t key;
	int done; /* sent in a session */
};

static int usage(FILE *f)
{
	fprintf(f, "usage: vigil send [--to HOST:PORT|unix:PATH] SPOOL\n\n"
	           "Ships what a subject left in its spool directory (a process killed, or\n"
	           "one whose VIGIL_TO_LINGER ran out) to the collector vigild, then removes\n"
	           "it. --to defaults to $VIGIL_TO; a token comes from $VIGIL_TO_TOKEN; TLS 1.3\n"
	           "when $VIGIL_TO_CA names the collector's CA (client certificate:\n"
	           "$VIGIL_TO_CERT, $VIGIL_TO_KEY; docs/security.md).\n\n"
	           "example:\n"
	           "  vigil send --to 127.0.0.1:7878 /dev/shm/vigil-spool-0-4242\n");
	return f == stdout ? 0 : 2;
}

static char *read_file(const char *path, size_t *len)
{
	return vgb_read_file(path, 16 << 20, VGB_READ_REGULAR | VGB_READ_NOFOLLOW, len);
}

/* `\tKEY = "text";` or `\tKEY = 123;` of the metadata's env block. */
static int env_text(const char *tsdl, const char *key, char *out, size_t n)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\t%s = \"", key);
	const char *p = strstr(tsdl, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	size_t i = 0;
	while (*p && *p != '"' && i + 1 < n)
		out[i++] = *p++;
	out[i] = 0;
	return 0;
}

static int env_num(const char *tsdl, const char *key, uint64_t *v)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\t%s = ", key);
	const char *p = strstr(tsdl, pat);
	if (!p)
		return -1;
	*v = strtoull(p + strlen(pat), NULL, 10);
	return 0;
}

static int load_secret(const char *spool, int pid, uint64_t gen, uint8_t *secret)
{
	char path[PATH_MAX], hex[2 * VGW_SECRET_LEN + 8];
	snprintf(path, sizeof path, "%s/.session-%d-%" PRIu64, spool, pid, gen);
	size_t len;
	char *t = read_file(path, &len);
	if (!t)
		return 0;
	snprintf(hex, sizeof hex, "%s", t);
	free(t);
	for (int i = 0; i < VGW_SECRET_LEN; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return 0;
		secret[i] = (uint8_t)v;
	}
	return 1;
}

/* The packets of one stream file still whole in the spool, each as a PACKET frame. */
static int send_stream(int fd, const char *dir, const char *name, uint32_t key, uint64_t *seq,
                       unsigned *sent)
{
	char path[PATH_MAX + 256];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return 0;
	int sfd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (sfd < 0 || fstat(sfd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		if (sfd >= 0)
			close(sfd);
		return 0;
	}
	uint64_t size = (uint64_t)sb.st_size, off = 0;
	uint8_t h[HDR];
	int rc = 0;
	while (off + HDR <= size && pread(sfd, h, HDR, (off_t)off) == HDR) {
		uint32_t magic;
		uint64_t psize;
		memcpy(&magic, h, 4);
		memcpy(&psize, h + VGW_PKT_PACKET_SIZE, 8);
		psize /= 8;
		if (magic != VGW_CTF_MAGIC || psize < HDR || psize > size - off)
			break; /* the end, or a tail cut by the kill */
		off_t hole = lseek(sfd, (off_t)off, SEEK_HOLE);
		int punched = hole >= 0 && (uint64_t)hole < off + psize;
		if (!punched && psize <= VGW_MAX_FRAME_DEFAULT - 1024) {
			uint8_t *pk = malloc(psize);
			rc = pk && pread(sfd, pk, psize, (off_t)off) == (ssize_t)psize ? 0 : -1;
			if (rc == 0) {
				struct vgw_buf b = {0};
				vgw_begin(&b, VGW_PACKET);
				vgw_u32(&b, key);
				vgw_cstr(&b, name);
				vgw_u64(&b, ++*seq);
				vgw_bytes(&b, pk, psize);
				vgw_end(&b);
				rc = b.failed ? -1 : vg_cli_send_all(fd, &b);
				vgw_buf_free(&b);
				(*sent)++;
			}
			free(pk);
			if (rc < 0)
				break;
		}
		off += psize;
	}
	close(sfd);
	return rc;
}

static void remove_image(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char p[PATH_MAX + 256];
	while ((de = readdir(d)))
		if (!strcmp(de->d_name, "metadata") || !strncmp(de->d_name, "stream", 6)) {
			if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p)
				unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

/* One process of the spool: HELLO (with its secret), METADATA and PACKETs of each of its
 * images, then the acknowledgement of the last. 0, or -1 with err. */
static int send_session(const char *to, const char *spool, struct img *im, size_t n, size_t first,
                        unsigned *packets, char *err, size_t errsize)
{
	int fd = vg_cli_dial(to, err, errsize);
	if (fd < 0)
		return -1;
	uint8_t secret[VGW_SECRET_LEN];
	int has = load_secret(spool, im[first].pid, im[first].gen, secret);
	const char *token = getenv("VIGIL_TO_TOKEN");
	struct vgw_buf b = {0};
	vgw_put_hello(&b, token ? token : "", im[first].host, (uint32_t)im[first].pid,
	              im[first].gen, im[first].program, VGW_KIND_C, has ? secret : NULL,
	              has ? VGW_SECRET_LEN : 0);
	int rc = b.failed ? -1 : vg_cli_send_all(fd, &b);
	vgw_buf_free(&b);
	uint8_t *payload = NULL;
	uint32_t len;
	struct vgw_frame f;
	if (rc < 0 || vg_cli_read_frame(fd, VGW_WELCOME, &payload, &len) < 0 ||
	    vgw_decode(VGW_WELCOME, payload, len, &f, NULL, 0) < 0) {
		snprintf(err, errsize,
		         "no WELCOME for process %d (refused: see the collector's log)",
		         im[first].pid);
		free(payload);
		close(fd);
		return -1;
	}
	uint64_t seq = f.u.welcome.acked, start_seq = seq;
	free(payload);
	for (size_t i = first; i < n && rc == 0; i++) {
		if (im[i].pid != im[first].pid || im[i].gen != im[first].gen)
			continue;
		im[i].done = 1;
		char dir[PATH_MAX + 256], mpath[PATH_MAX + 272];
		snprintf(dir, sizeof dir, "%s/%s", spool, im[i].name);
		snprintf(mpath, sizeof mpath, "%s/metadata", dir);
		size_t mlen;
		char *tsdl = read_file(mpath, &mlen);
		if (!tsdl)
			continue;
		b = (struct vgw_buf){0};
		vgw_begin(&b, VGW_METADATA);
		vgw_u32(&b, im[i].key);
		vgw_cstr(&b, im[i].name);
		vgw_bytes(&b, tsdl, mlen);
		vgw_end(&b);
		free(tsdl);
		rc = b.failed ? -1 : vg_cli_send_all(fd, &b);
		vgw_buf_free(&b);
		DIR *d = opendir(dir);
		struct dirent *de;
		while (rc == 0 && d && (de = readdir(d)))
			if (!strncmp(de->d_name, "stream", 6))
				rc = send_stream(fd, dir, de->d_name, im[i].key, &seq, packets);
		if (d)
			closedir(d);
	}
	/* Every frame acknowledged, or the collector said why not (its log). */
	uint64_t acked = start_seq;
	while (rc == 0 && acked < seq) {
		if (vg_cli_read_frame(fd, VGW_ACK, &payload, &len) < 0 ||
		    vgw_decode(VGW_ACK, payload, len, &f, NULL, 0) < 0)
			rc = -1;
		else
			acked = f.u.ack.seq;
		free(payload);
		payload = NULL;
	}
	close(fd); /* no BYE: the collector completes the images like vigil recover */
	if (rc < 0)
		snprintf(err, errsize,
		         "process %d: the collector acknowledged %" PRIu64 " of %" PRIu64
		         " packets (see its log)",
		         im[first].pid, acked - start_seq, seq - start_seq);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct img *)a)->name, ((const struct img *)b)->name);
}

/* Reads the images of SPOOL; n of them, or 0. */
static size_t read_images(const char *spool, struct img *im)
{
	DIR *d = opendir(spool);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while (n < MAX_IMAGES && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof im->name)
			continue;
		char mpath[PATH_MAX + 272];
		snprintf(mpath, sizeof mpath, "%s/%s/metadata", spool, de->d_name);
		size_t len;
		char *tsdl = read_file(mpath, &len);
		if (!tsdl)
			continue;
		struct img *x = &im[n];
		uint64_t pid, key;
		if (env_text(tsdl, "hostname", x->host, sizeof x->host) == 0 &&
		    env_text(tsdl, "procname", x->program, sizeof x->program) == 0 &&
		    env_num(tsdl, "vpid", &pid) == 0 &&
		    env_num(tsdl, "vigil_process_gen", &x->gen) == 0 &&
		    env_num(tsdl, "vigil_image", &key) == 0) {
			snprintf(x->name, sizeof x->name, "%s", de->d_name);
			x->pid = (int)pid;
			x->key = (uint32_t)key;
			x->done = 0;
			n++;
		}
		free(tsdl);
	}
	closedir(d);
	qsort(im, n, sizeof *im, by_name);
	return n;
}

/* Ships SPOOL and removes it: 0; 1 with one line on stderr (WHO: ...). */
static int ship(const char *who, const char *to, const char *spool, struct img *im, size_t n)
{
	unsigned packets = 0, procs = 0;
	char err[512];
	for (size_t i = 0; i < n; i++) {
		if (im[i].done)
			continue;
		if (send_session(to, spool, im, n, i, &packets, err, sizeof err) < 0) {
			fprintf(stderr, "%s: %s: %s; %s is kept\n", who, to, err, spool);
			return 1;
		}
		procs++;
	}
	for (size_t i = 0; i < n; i++) {
		char dir[PATH_MAX + 256], sp[PATH_MAX + 64];
		snprintf(dir, sizeof dir, "%s/%s", spool, im[i].name);
		remove_image(dir);
		snprintf(sp, sizeof sp, "%s/.session-%d-%" PRIu64, spool, im[i].pid, im[i].gen);
		unlink(sp);
	}
	rmdir(spool); /* when nothing else is left in it */
	fprintf(stderr,
	        "%s: %u packets of %zu image(s) of %u process(es) acknowledged by %s; "
	        "removed from %s\n",
	        who, packets, n, procs, to, spool);
	return 0;
}

/* A process of the spool still runs: /proc/PID/stat's start time is its gen. */
static int alive(int pid, uint64_t gen)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* after the command name */
	unsigned long long start = 0;
	/* fields 3..22 after ") ": state is field 3, starttime field 22 */
	for (int field = 2; p && *p && field < 22; p++)
		if (*p == ' ' && ++field == 22)
			start = strtoull(p + 1, NULL, 10);
	return start == gen;
}

/* The process's session file names the collector it was sending to (`to=ADDR`). */
static int bound_for(const char *spool, const struct img *x, const char *to)
{
	char path[PATH_MAX + 64], want[PATH_MAX + 8];
	snprintf(path, sizeof path, "%s/.session-%d-%" PRIu64, spool, x->pid, x->gen);
	snprintf(want, sizeof want, "\nto=%s\n", to);
	size_t len;
	char *t = read_file(path, &len);
	int ok = t && strstr(t, want) != NULL;
	free(t);
	return ok;
}

void vg_send_leftovers(const char *to)
{
	static const char *const bases[] = {"/dev/shm", "/tmp"};
	struct img *im = calloc(MAX_IMAGES, sizeof *im);
	for (size_t b = 0; im && b < 2; b++) {
		DIR *d = opendir(bases[b]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char spool[PATH_MAX];
			struct stat sb;
			if (strncmp(de->d_name, "vigil-spool-", 12) ||
			    snprintf(spool, sizeof spool, "%s/%s", bases[b], de->d_name) >=
			        (int)sizeof spool ||
			    lstat(spool, &sb) < 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid())
				continue;
			size_t n = read_images(spool, im), keep = 0;
			for (size_t i = 0; i < n; i++)
				keep +=
				    alive(im[i].pid, im[i].gen) || !bound_for(spool, &im[i], to);
			if (n && !keep)
				ship("vigil record: a spool left by an earlier run", to, spool, im,
				     n);
		}
		if (d)
			closedir(d);
	}
	free(im);
}

int vg_cmd_send(int argc, char **argv)
{
	const char *to = getenv("VIGIL_TO"), *spool = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return usage(stdout);
		if (!strcmp(argv[i], "--to") && i + 1 < argc)
			to = argv[++i];
		else if (argv[i][0] != '-' && !spool)
			spool = argv[i];
		else {
			fprintf(stderr,
			        "vigil send: unexpected argument %s (see vigil send --help)\n",
			        argv[i]);
			return 2;
		}
	}
	if (!spool || !to || !*to) {
		fprintf(stderr, "vigil send: %s (see vigil send --help)\n",
		        spool ? "no collector: --to HOST:PORT or VIGIL_TO" : "SPOOL is required");
		return 2;
	}
	struct img *im = calloc(MAX_IMAGES, sizeof *im);
	size_t n = im ? read_images(spool, im) : 0;
	if (!n) {
		fprintf(stderr,
		        "vigil send: %s: no process image (a directory with metadata) in it\n",
		        spool);
		free(im);
		return 1;
	}
	int rc = ship("vigil send", to, spool, im, n);
	free(im);
	return rc;
}
