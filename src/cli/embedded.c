/* Reading the sensor description embedded in a program (embedded.h): the ELF notes of
 * owner "vigil" (type 1: the main file, 2: an import), each "NAME\0TEXT", read with
 * elfutils' libelf, whatever the ELF class and byte order. A program built from several
 * generated sources has several main notes: the first is used and the others named. */
#define _GNU_SOURCE
#include "cli/embedded.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOTE_MAIN 1
#define NOTE_IMPORT 2
#define MAX_FILES 256

/* `name` as exec finds it: itself when it has a slash, else the first in PATH. */
static bool resolve(const char *name, char *out, size_t len)
{
	if (strchr(name, '/'))
		return snprintf(out, len, "%s", name) < (int)len;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		const char *end = strchrnul(p, ':');
		int n = snprintf(out, len, "%.*s/%s", (int)(end - p), end == p ? "." : p, name);
		struct stat st;
		if (n > 0 && (size_t)n < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* The notes' files into files[] (pointing into the ELF data); returns how many, the
 * main file first. *extra: further main files. */
static size_t collect(Elf *e, struct vgl_text *files, size_t cap, size_t *extra)
{
	size_t n = 0;
	bool have_main = false;
	*extra = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		for (Elf_Data *d = NULL; (d = elf_getdata(scn, d));) {
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off, next;
			while (off < d->d_size &&
			       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				off = next;
				const char *base = d->d_buf;
				if (nh.n_namesz != 6 || memcmp(base + name_off, "vigil", 6) ||
				    (nh.n_type != NOTE_MAIN && nh.n_type != NOTE_IMPORT))
					continue;
				const char *desc = base + desc_off;
				const char *nul = memchr(desc, 0, nh.n_descsz);
				if (!nul || nul == desc)
					continue; /* not NAME\0TEXT: not ours */
				struct vgl_text t = {desc, nul + 1,
				                     nh.n_descsz - (size_t)(nul + 1 - desc)};
				bool dup = false; /* one source compiled into two objects */
				for (size_t i = 0; i < n && !dup; i++)
					dup = !strcmp(files[i].name, t.name) &&
					      files[i].len == t.len &&
					      !memcmp(files[i].text, t.text, t.len);
				if (dup || n == cap)
					continue;
				if (nh.n_type == NOTE_MAIN && have_main) {
					(*extra)++;
					continue;
				}
				files[n++] = t;
				if (nh.n_type == NOTE_MAIN) { /* the main file goes first */
					have_main = true;
					struct vgl_text tmp = files[0];
					files[0] = files[n - 1];
					files[n - 1] = tmp;
				}
			}
		}
	}
	return have_main ? n : 0;
}

struct vgl_model *vg_cli_embedded_model(const char *cmd, const char *program, int *found)
{
	*found = 0;
	char path[PATH_MAX];
	if (!resolve(program, path, sizeof path) || !vg_cli_is_elf(path))
		return NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	struct vgl_model *m = NULL;
	struct vgl_text *files = calloc(MAX_FILES, sizeof *files);
	size_t extra = 0, n = e && files ? collect(e, files, MAX_FILES, &extra) : 0;
	if (n) {
		*found = 1;
		if (extra)
			fprintf(
			    stderr,
			    "vigil %s: %s: %zu more sensor descriptions embedded; using %s's (give "
			    "--sensors to choose)\n",
			    cmd, program, extra, files[0].name);
		char *buf = NULL;
		size_t len = 0;
		FILE *errs = open_memstream(&buf, &len);
		int nerr = 0;
		m = vgl_load_texts(files, n, errs ? errs : stderr, &nerr);
		if (errs) {
			fclose(errs);
			for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
				nl = strchr(line, '\n');
				fprintf(stderr, "vigil %s: %s: %.*s\n", cmd, program,
				        (int)(nl ? nl - line : (ptrdiff_t)strlen(line)), line);
				if (!nl)
					break;
			}
			free(buf);
		}
	}
	free(files);
	if (e)
		elf_end(e);
	close(fd);
	return m;
}
