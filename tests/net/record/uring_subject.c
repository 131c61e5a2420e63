/* A subject for io_uring (docs/net.md, "Not followed, and counted"): 4 writes of 3
 * bytes to a pipe submitted through liburing (its own system calls: nothing a preload
 * sees), read back with read(2); the ring is left open at exit. Prints its descriptors
 * and the bytes read as one JSON object. Run: uring_subject. */
#include <liburing.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	struct io_uring ring;
	int p[2];
	if (pipe(p) || io_uring_queue_init(8, &ring, 0)) {
		fprintf(stderr, "uring_subject: no io_uring\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		io_uring_prep_write(io_uring_get_sqe(&ring), p[1], "abc", 3, 0);
	if (io_uring_submit_and_wait(&ring, 4) != 4)
		return 2;
	char buf[16];
	ssize_t n = read(p[0], buf, sizeof buf);
	printf("{\"r\": %d, \"w\": %d, \"ring\": %d, \"read\": %zd}\n", p[0], p[1], ring.ring_fd,
	       n);
	return 0;
}
