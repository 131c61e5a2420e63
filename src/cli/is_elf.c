/* vg_cli_is_elf (embedded.h): by its first bytes, without libelf, so that the front end can
 * tell a program from a trace without loading libelf (front_end.h). */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/embedded.h"

bool vg_cli_is_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	char magic[4];
	bool elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, magic, 4) == 4 &&
	           !memcmp(magic, ELFMAG, SELFMAG);
	close(fd);
	return elf;
}
