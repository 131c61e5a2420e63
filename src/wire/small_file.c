/* One read of a small kernel file (wire/small_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "wire/small_file.h"

int vgw_read_small_fd(int fd, char *buf, size_t len)
{
	if (fd < 0)
		return -1;
	ssize_t n;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	return (int)n;
}

int vgw_read_small_file(const char *path, char *buf, size_t len)
{
	return vgw_read_small_fd(open(path, O_RDONLY | O_CLOEXEC), buf, len);
}
