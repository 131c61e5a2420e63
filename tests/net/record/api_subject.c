/* The instrumented API of include/vigil/net.h, linked with libvigil: traceparent format
 * and parse, a thread and a forked child inheriting the interaction, a message carried
 * from one thread to another through a pipe, malformed strings. Prints one JSON object
 * with what it saw; net_record_test.py checks it against the recorded events. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vigil/net.h"

static int msg_pipe[2];
static char thread_iid[40], receiver_iid[40];

static void iid_text(char *out, vg_iid iid)
{
	snprintf(out, 40, "%016" PRIx64 "%016" PRIx64, iid.hi, iid.lo);
}

static void *child_thread(void *arg)
{
	(void)arg;
	iid_text(thread_iid, vg_interaction_get());
	return NULL;
}

/* Joins the interaction of the message it reads. */
static void *receiver(void *arg)
{
	(void)arg;
	char tp[VG_TRACEPARENT_LEN + 1];
	size_t got = 0;
	while (got < VG_TRACEPARENT_LEN) {
		ssize_t r = read(msg_pipe[0], tp + got, VG_TRACEPARENT_LEN - got);
		if (r <= 0)
			exit(3);
		got += (size_t)r;
	}
	tp[VG_TRACEPARENT_LEN] = 0;
	if (vg_msg_recv(tp, 100) != 0)
		exit(4);
	iid_text(receiver_iid, vg_interaction_get());
	return NULL;
}

static const char *const bad[] = {
    "",
    "00-0123456789abcdef0123456789abcdef-0123456789abcdef-01x", /* v00 is exactly 55 */
    "00-0123456789ABCDEF0123456789abcdef-0123456789abcdef-01",  /* uppercase */
    "00-0123456789abcdef0123456789abcdef-0000000000000000-01",  /* zero parent */
    "ff-0123456789abcdef0123456789abcdef-0123456789abcdef-01",  /* version ff */
    "00-0123456789abcdef0123456789abcdef_0123456789abcdef-01",  /* separator */
    "00-0123456789abcdef0123456789abcd-0123456789abcdef-01",    /* short trace-id */
    "garbage",
};

int main(void)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	char tp[VG_TRACEPARENT_LEN + 1], text[40];
	printf("{");

	/* Round trip, another tracer's string, a later version with more fields. */
	vg_iid x = {0x0123456789abcdefull, 0xfedcba9876543210ull}, y;
	uint64_t parent;
	vg_traceparent_format(tp, x, 0x1122334455667788ull);
	int rc = vg_traceparent_parse(tp, &y, &parent);
	printf("\"format\": \"%s\", \"roundtrip\": %d", tp,
	       rc == 0 && y.hi == x.hi && y.lo == x.lo && parent == 0x1122334455667788ull);
	rc = vg_traceparent_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &y,
	                          &parent);
	printf(", \"w3c\": [%d, \"%016" PRIx64 "%016" PRIx64 "\", \"%016" PRIx64 "\"]", rc, y.hi,
	       y.lo, parent);
	rc = vg_traceparent_parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what",
	                          &y, &parent);
	printf(", \"future_version\": %d", rc);
	int malformed_ok = 1;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		malformed_ok &= vg_traceparent_parse(bad[i], &y, &parent) == -1;
	malformed_ok &= vg_traceparent_parse(NULL, &y, &parent) == -1;
	printf(", \"malformed_rejected\": %d", malformed_ok);
	/* vg_msg_recv ignores malformed strings and counts them; the thread's interaction
	 * is unchanged. */
	for (size_t i = 0; i < 3; i++)
		vg_msg_recv(bad[i], 1);
	printf(", \"malformed_counted\": %" PRIu64, vg_net_malformed());
	vg_iid none = vg_interaction_get();
	printf(", \"none_before\": %d", none.hi == 0 && none.lo == 0);

	/* No interaction: the trace-id is zeros, flags 00. */
	vg_msg_send(tp, "nobody", 1);
	printf(", \"send_without\": \"%.35s\"", tp);

	vg_iid iid = vg_interaction_begin("request");
	iid_text(text, iid);
	printf(", \"iid\": \"%s\"", text);

	pthread_t th;
	pthread_create(&th, NULL, child_thread, NULL);
	pthread_join(th, NULL);
	printf(", \"thread_iid\": \"%s\"", thread_iid);

	int fp[2];
	if (pipe(fp) != 0)
		return 2;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char t[40];
		iid_text(t, vg_interaction_get());
		ssize_t unused = write(fp[1], t, 32);
		(void)unused;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	char child[40] = {0};
	ssize_t n = read(fp[0], child, 32);
	printf(", \"fork_iid\": \"%s\"", n == 32 ? child : "");

	/* A message to a thread with no interaction: it joins ours. */
	if (pipe(msg_pipe) != 0)
		return 2;
	vg_interaction_set((vg_iid){0, 0});
	pthread_create(&th, NULL, receiver, NULL); /* created without an interaction */
	vg_interaction_set(iid);
	vg_msg_send(tp, "receiver", 100);
	if (write(msg_pipe[1], tp, VG_TRACEPARENT_LEN) != VG_TRACEPARENT_LEN)
		return 2;
	pthread_join(th, NULL);
	vg_traceparent_parse(tp, &y, &parent);
	printf(", \"sent_parent\": \"%016" PRIx64 "\", \"receiver_iid\": \"%s\"", parent,
	       receiver_iid);

	/* Distinct ids: no repeats among many. */
	int distinct = 1;
	uint64_t prev = 0;
	for (int i = 0; i < 1000; i++) {
		vg_msg_send(tp, "x", 0);
		vg_traceparent_parse(tp, &y, &parent);
		distinct &= parent != prev && parent != 0;
		prev = parent;
	}
	printf(", \"distinct\": %d}\n", distinct);
	return 0;
}
