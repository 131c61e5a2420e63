/* Replays a fuzz target's kept inputs without libFuzzer: a main linked with the target's
 * LLVMFuzzerTestOneInput (and LLVMFuzzerInitialize where it has one), built by gcc in the
 * normal and the sanitizer build, so every seed, every crash input kept among them, is a
 * regression test there too. Each argument is a file or a folder of files (read in name
 * order). Exit 0 after all were run, 1 on an unreadable argument or no input at all; a
 * target that finds a bug aborts (or the sanitizer stops the run), naming the input. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long replayed;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	int bad = !buf || ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "fuzz replay: %s: cannot read\n", path);
		free(buf);
		return -1;
	}
	/* Exactly the input's bytes, as libFuzzer gives them: reads past it are caught. */
	uint8_t *data = malloc(n ? n : 1);
	memcpy(data, buf, n);
	free(buf);
	fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	replayed++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char full[4096];
		struct stat st;
		snprintf(full, sizeof full, "%s/%s", path, names[i]);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && replay_file(full) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-FOLDER...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "fuzz replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if ((S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i])) < 0) {
			rc = 1;
		}
	}
	if (!replayed) {
		fprintf(stderr, "fuzz replay: no input\n");
		return 1;
	}
	printf("fuzz replay: %lu inputs, no failure\n", replayed);
	return rc;
}
