/* A subject for stdio on followed descriptors (docs/net.md, "stdio"): writes and reads a
 * pipe through stdio only, recorded through `vigil record`'s preload; the test knows the
 * byte counts each step moves. Built with _FORTIFY_SOURCE=2 so that the fortified entry
 * points (__printf_chk, __fgets_chk, ...) are the ones called, as in Debian's programs.
 * Prints the descriptors it used as one JSON object. Run: stdio_subject [prompt].
 * `prompt` (on a terminal): a prompt without a newline, flushed by reading stdin. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "stdio_subject: %s: %s\n", what, strerror(errno));
	exit(2);
}

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if (!(x))                                                                          \
			die(#x);                                                                   \
	} while (0)

/* A line-buffered stdout is flushed when a line-buffered stdin is read (glibc). */
static int prompt(void)
{
	char line[64];
	printf("name? ");
	if (!fgets(line, sizeof line, stdin))
		return 2;
	printf("hi %s", line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "prompt"))
		return prompt();
	int p[2], q[2], s[2], t[2];
	CHECK(pipe(p) == 0 && pipe(q) == 0 && pipe(s) == 0 && pipe(t) == 0);
	FILE *w = fdopen(p[1], "w"), *r = fdopen(p[0], "r");
	CHECK(w && r);
	/* Buffered: nothing reaches the pipe until the flush, then 7+3+1+5 = 16 bytes. */
	CHECK(fprintf(w, "%d-%s\n", 42, "abc") == 7);
	CHECK(fputs("xyz", w) >= 0);
	CHECK(fputc('!', w) == '!');
	CHECK(fwrite("12345", 1, 5, w) == 5);
	CHECK(fflush(w) == 0);
	/* The header's inline putc_unlocked fills the buffer without a call; __overflow
	 * flushes it when full (a 4096-byte pipe buffer: 5000 bytes are one flush of 4096
	 * in __overflow and 904 at the fflush). */
	for (int i = 0; i < 5000; i++)
		putc_unlocked('a' + i % 26, w);
	CHECK(fflush(w) == 0);
	CHECK(puts("") >= 0 || 1); /* stdout: the report's stream, not checked */
	/* A write larger than the buffer: partly straight to the descriptor. */
	static char big[10000];
	memset(big, 'b', sizeof big);
	big[sizeof big - 1] = '\n';
	CHECK(fwrite(big, 1, sizeof big, w) == sizeof big);
	CHECK(fclose(w) == 0); /* 16 + 5000 + 10000 = 15016 bytes in all */

	/* Reads: the first refill reads what the buffer holds; the rest come in later ones. */
	char line[64], buf[20000];
	CHECK(fgets(line, sizeof line, r) && !strcmp(line, "42-abc\n"));
	CHECK(getc(r) == 'x');
	CHECK(fread(buf, 1, 8, r) == 8); /* "yz!12345" */
	size_t n = fread(buf, 1, 5000, r);
	CHECK(n == 5000);
	char *l = NULL;
	size_t cap = 0;
	CHECK(getline(&l, &cap, r) == 10000);
	free(l);
	CHECK(getc(r) == EOF);
	fclose(r);

	/* scanf consumes an unknown count: its refill is recorded as unfollowed. */
	FILE *sw = fdopen(s[1], "w"), *sr = fdopen(s[0], "r");
	CHECK(sw && sr);
	fprintf(sw, "17 18\n");
	fclose(sw);
	int a = 0, b = 0;
	CHECK(fscanf(sr, "%d %d", &a, &b) == 2 && a == 17 && b == 18);
	fclose(sr);

	/* freopen flushes the stream and closes its descriptor inside libc: the 2 bytes
	 * are sent, the pipe's end is closed; what follows goes to /dev/null. */
	FILE *x = fdopen(t[1], "w");
	CHECK(x && fprintf(x, "ab") == 2);
	CHECK(freopen("/dev/null", "w", x) == x);
	CHECK(fprintf(x, "zz") == 2);
	fclose(x);
	CHECK(read(t[0], buf, sizeof buf) == 2 && !memcmp(buf, "ab", 2));
	close(t[0]);

	/* A child leaves 3 bytes pending at exit: exit flushes them (recorded), and
	 * dprintf writes straight to the descriptor. */
	fflush(stdout);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(q[0]);
		CHECK(dprintf(q[1], "%s", "dp") == 2);
		FILE *x = fdopen(q[1], "w");
		CHECK(x && fprintf(x, "bye") == 3);
		exit(0);
	}
	close(q[1]);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(read(q[0], buf, sizeof buf) == 5 && !memcmp(buf, "dpbye", 5));
	close(q[0]);
	printf("{\"r\": %d, \"w\": %d, \"q_r\": %d, \"q_w\": %d, \"s_r\": %d, \"s_w\": %d, "
	       "\"t_r\": %d, \"t_w\": %d}\n",
	       p[0], p[1], q[0], q[1], s[0], s[1], t[0], t[1]);
	return 0;
}
