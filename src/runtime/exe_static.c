/* exe_static.h: an ELF executable without PT_INTERP is statically linked. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exe_static.h"

static int path_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	int is_static = 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum == 0 || eh.e_phnum > 256)
		goto out; /* (32-bit programs: not judged) */
	Elf64_Phdr ph[256];
	size_t len = (size_t)eh.e_phnum * sizeof *ph;
	if (pread(fd, ph, len, (off_t)eh.e_phoff) != (ssize_t)len)
		goto out;
	int interp = 0, dynamic = 0;
	for (int i = 0; i < eh.e_phnum; i++) {
		interp |= ph[i].p_type == PT_INTERP;
		dynamic |= ph[i].p_type == PT_DYNAMIC;
	}
	/* A shared library run directly has neither... but a static-pie has PT_DYNAMIC and
	 * no interpreter too: ET_EXEC without PT_INTERP, or ET_DYN without PT_INTERP that is
	 * not a library (has an entry point), is static. */
	is_static = !interp && (eh.e_type == ET_EXEC || (dynamic && eh.e_entry != 0));
out:
	close(fd);
	return is_static;
}

int vg_exe_is_static(const char *file)
{
	int saved = errno, r = 0;
	if (!file || !*file) {
		r = 0;
	} else if (strchr(file, '/')) {
		r = path_is_static(file);
	} else {
		const char *path = getenv("PATH");
		if (!path)
			path = "/usr/local/bin:/usr/bin:/bin";
		char buf[4096];
		for (const char *p = path; *p;) {
			const char *e = strchr(p, ':');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			if (snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", file) <
			        (int)sizeof buf &&
			    access(buf, X_OK) == 0) {
				r = path_is_static(buf);
				break;
			}
			if (!e)
				break;
			p = e + 1;
		}
	}
	errno = saved;
	return r;
}
