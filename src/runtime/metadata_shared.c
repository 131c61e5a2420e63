/* One metadata for every process image of a VIGIL_LAYOUT=shared recording
 * (docs/trace-format.md "Shared layout"): a build or a script runs thousands of short
 * processes that declare the same event types, and a metadata file per image was most of
 * their trace.
 *
 * The first image creates <out>/shared/metadata with the header. Every image declares
 * its event types under an exclusive flock on that file: a declaration whose text (all
 * but its id) is already there takes that id, any other is appended whole with the next
 * free id. Declarations are never rewritten, so an id once given keeps its meaning, and
 * readers (which need no lock) see complete declarations only, as a writer appends one
 * in a single write. The lock is the kernel's: a writer killed while holding it frees it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_SHARED_TEXT ((size_t)64 << 20) /* the reader's limit on a metadata file */

struct decl {
	char *key; /* the declaration without its id line */
	size_t len;
	uint16_t id;
};

static int shared_fd = -1;
static dev_t shared_dev;
static ino_t shared_ino;
static char *text; /* the file as read so far (it only grows) */
static size_t text_len, scanned;
static struct decl *decls;
static size_t ndecls, cap_decls;
static unsigned next_id;

/* The declaration `block` without its "\tid = N;\n" line (malloc'd), or NULL. */
static char *strip_id(const char *block, size_t len, size_t *key_len, unsigned *id)
{
	const char *line = memmem(block, len, "\n\tid = ", 7);
	if (!line)
		return NULL;
	line++;
	const char *eol = memchr(line, '\n', len - (size_t)(line - block));
	if (!eol)
		return NULL;
	if (id)
		*id = (unsigned)strtoul(line + 6, NULL, 10);
	size_t head = (size_t)(line - block), tail = len - (size_t)(eol + 1 - block);
	char *key = malloc(head + tail + 1);
	if (!key)
		return NULL;
	memcpy(key, block, head);
	memcpy(key + head, eol + 1, tail);
	key[head + tail] = 0;
	*key_len = head + tail;
	return key;
}

static int add_decl(const char *block, size_t len)
{
	unsigned id;
	size_t key_len;
	char *key = strip_id(block, len, &key_len, &id);
	if (!key)
		return -1;
	if (ndecls == cap_decls) {
		size_t cap = cap_decls ? cap_decls * 2 : 64;
		struct decl *p = realloc(decls, cap * sizeof *p);
		if (!p) {
			free(key);
			return -1;
		}
		decls = p;
		cap_decls = cap;
	}
	decls[ndecls++] = (struct decl){key, key_len, (uint16_t)id};
	if (id + 1 > next_id)
		next_id = id + 1;
	return 0;
}

/* Reads what other images appended since the last call and indexes its complete
 * declarations. */
static int catch_up(void)
{
	struct stat s;
	if (fstat(shared_fd, &s) < 0)
		return -1;
	size_t size = (size_t)s.st_size;
	if (size > MAX_SHARED_TEXT) {
		errno = EFBIG;
		return -1;
	}
	/* What follows the last complete declaration is read again: it may have been an
	 * append in progress, or a cut tail another image has since replaced. */
	text_len = scanned;
	if (size > text_len) {
		char *p = realloc(text, size + 1);
		if (!p)
			return -1;
		text = p;
		while (text_len < size) {
			ssize_t n =
			    pread(shared_fd, text + text_len, size - text_len, (off_t)text_len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			text_len += (size_t)n;
		}
		text[text_len] = 0;
	}
	while (text) { /* NULL: nothing read yet (the first image, an empty file) */
		char *start = memmem(text + scanned, text_len - scanned, "event {\n", 8);
		if (!start)
			break;
		char *end = memmem(start, text_len - (size_t)(start - text), "\n};\n\n", 5);
		if (!end)
			break; /* being written, or cut: see repair_tail */
		end += 5;
		if (add_decl(start, (size_t)(end - start)) < 0)
			return -1;
		scanned = (size_t)(end - text);
	}
	return 0;
}

/* A declaration cut by a full disk would swallow the next one appended: the file goes
 * back to its last complete declaration first (under the lock, so nobody writes). */
static int repair_tail(void)
{
	size_t keep = scanned;
	if (!keep) { /* header only: it ends with the stream declaration */
		char *h = text ? memmem(text, text_len, "\n};\n\n", 5) : NULL;
		char *last = h;
		while (h) {
			last = h;
			h = memmem(h + 5, text_len - (size_t)(h + 5 - text), "\n};\n\n", 5);
		}
		keep = last ? (size_t)(last + 5 - text) : 0;
	}
	if (keep >= text_len)
		return 0;
	if (ftruncate(shared_fd, (off_t)keep) < 0)
		return -1;
	text_len = keep;
	return 0;
}

static int lock(void)
{
	while (flock(shared_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static void unlock(void)
{
	int saved = errno;
	flock(shared_fd, LOCK_UN);
	errno = saved;
}

/* Keeps fd as shared_fd, moved high where the subject does not expect its next open's
 * number; where it cannot move (RLIMIT_NOFILE lowered) it serves one call only. */
static void hold(int fd)
{
	shared_fd = vg__high_fd(fd);
	if (shared_fd >= 512)
		vg__own_fd_add(&shared_fd);
}

static void done(void)
{
	if (shared_fd >= 0 && shared_fd < 512) {
		close(shared_fd); /* unlocked already */
		shared_fd = -1;
	}
}

/* The descriptor, still this file (the subject may have closed ours with a raw
 * syscall): reopened by name in the shared directory otherwise. */
static int usable_fd(void)
{
	struct stat s;
	if (shared_fd >= 0 && fstat(shared_fd, &s) == 0 && s.st_dev == shared_dev &&
	    s.st_ino == shared_ino)
		return 0;
	vg__own_fd_release(&shared_fd, 1);
	int fd = vg__image_open("metadata", O_RDWR | O_APPEND, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &s) < 0 || s.st_dev != shared_dev || s.st_ino != shared_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	hold(fd);
	return 0;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The trace's uuid, which every packet header repeats. */
static int take_uuid(void)
{
	const char *trace = text ? strstr(text, "\ntrace {") : NULL;
	const char *u = trace ? strstr(trace, "\tuuid = \"") : NULL;
	if (!u || strlen(u + 9) < 37 || u[9 + 36] != '"') {
		errno = EPROTO;
		return -1;
	}
	u += 9;
	uint8_t raw[16];
	for (int i = 0, j = 0; i < 16; i++) {
		if (u[j] == '-')
			j++;
		int a = hex(u[j]), b = hex(u[j + 1]);
		if (a < 0 || b < 0) {
			errno = EPROTO;
			return -1;
		}
		raw[i] = (uint8_t)(a << 4 | b);
		j += 2;
	}
	memcpy(vg__rt.uuid, raw, 16);
	memcpy(vg__rt.uuid_text, u, 36);
	vg__rt.uuid_text[36] = 0;
	return 0;
}

int vg__shared_start(void)
{
	vg__own_fd_release(&shared_fd, 0);
	int fd =
	    vg__image_open_id("metadata", O_RDWR | O_CREAT | O_APPEND, &shared_dev, &shared_ino);
	if (fd < 0)
		return -1;
	hold(fd);
	if (lock() < 0) {
		done();
		return -1;
	}
	int rc = catch_up();
	if (rc == 0 && text_len == 0) { /* the first image: the header is ours to write */
		size_t len;
		char *header = vg__metadata_header(&len);
		rc = header ? vg__write_all(shared_fd, header, len) : -1;
		free(header);
		if (rc == 0)
			rc = catch_up();
	}
	if (rc == 0)
		rc = take_uuid();
	unlock();
	done();
	return rc;
}

static int id_taken(unsigned id)
{
	for (size_t i = 0; i < ndecls; i++)
		if (decls[i].id == id)
			return 1;
	return 0;
}

int vg__shared_declare(const vg_type_desc *d, uint16_t *id)
{
	/* *id is the id the registry would give it alone: taken when still free, so that
	 * busy sensors keep ids the compact event header holds (VG_COMPACT_IDS) */
	unsigned preferred = *id;
	char *mine;
	size_t len, key_len;
	if (vg__metadata_type_text(d, 0, &mine, &len) < 0)
		return -1;
	char *key = strip_id(mine, len, &key_len, NULL);
	free(mine);
	if (!key || usable_fd() < 0 || lock() < 0) {
		done();
		free(key);
		return -1;
	}
	int rc = catch_up();
	size_t i = 0;
	while (rc == 0 && i < ndecls &&
	       (decls[i].len != key_len || memcmp(decls[i].key, key, key_len)))
		i++;
	if (rc == 0 && i == ndecls) { /* new here: appended with its id, else the next */
		rc = -1;
		unsigned fresh =
		    preferred < VG_MAX_TYPES && !id_taken(preferred) ? preferred : next_id;
		if (fresh < VG_MAX_TYPES && repair_tail() == 0 &&
		    vg__metadata_type_text(d, (uint16_t)fresh, &mine, &len) == 0) {
			if (vg__fsize_allows((uint64_t)text_len + len))
				rc = vg__write_all(shared_fd, mine, len);
			free(mine);
		}
		if (rc == 0)
			rc = catch_up();
		while (rc == 0 && i < ndecls &&
		       (decls[i].len != key_len || memcmp(decls[i].key, key, key_len)))
			i++;
		if (rc == 0 && i == ndecls)
			rc = -1;
	}
	if (rc == 0)
		*id = decls[i].id;
	unlock();
	done();
	free(key);
	return rc;
}
