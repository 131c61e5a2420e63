/* Sends in flight when the process ends (docs/net.md "At the end of a process").
 *
 * A send is dated before its call and recorded after it returns. A thread that sent and
 * was preempted at the call's return (the receiver it woke runs first: the usual case
 * on a loaded machine) may still be waiting to record when another thread ends the
 * process: exit_group then kills it, and its peer's trace holds bytes received that no
 * send covers (a server stopped once its client had its last reply). So each recording
 * thread says, in a word of its own, that it is between the stamp and the record, and
 * the process's end waits for the threads that say so and are runnable (not blocked in
 * the call: a send into a full socket, a read, sleep), at most END_WAIT_NS.
 *
 * The word is set by vg__net_stamp and cleared when the call's bytes are recorded or
 * found to be none (vg__io_done); a path that leaves it set costs at most one wait, and
 * only if that thread is running when the process ends. libc only; the slots are a
 * fixed table (threads beyond SLOTS are not waited for). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SLOTS 1024
#define END_WAIT_NS 500000000ull /* 0.5 s: far longer than any preemption */

/* The words live in the table, not in the threads' TLS: a thread's end frees its TLS
 * while the process's end may be reading. A thread without a slot has no word. */
static struct {
	_Atomic uint32_t tid;  /* 0: free */
	_Atomic uint32_t open; /* between a send's stamp and its record */
} slots[SLOTS];
/* The only TLS here, zero-initialized (no padding before libvigil's other TLS):
 * libvigil's initial-exec TLS must stay small (dlopen takes it from glibc's static TLS
 * surplus: logmodel.postgres). */
__thread _Atomic uint32_t *vg__io_word __attribute__((tls_model("initial-exec")));

static int my_slot(void) /* 1 + the calling thread's slot, or 0 */
{
	return !vg__io_word
	           ? 0
	           : (int)((char *)vg__io_word - (char *)&slots[0].open) / (int)sizeof slots[0] + 1;
}

void vg__io_flight_join(void)
{
	uint32_t tid = vg__thread_tid();
	for (int i = 0; i < SLOTS; i++) {
		uint32_t free_tid = 0;
		if (atomic_load_explicit(&slots[i].tid, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&slots[i].tid, &free_tid, tid)) {
			atomic_store_explicit(&slots[i].open, 0, memory_order_relaxed);
			vg__io_word = &slots[i].open;
			return;
		}
	}
}

void vg__io_flight_leave(void)
{
	int slot = my_slot();
	if (!slot)
		return;
	vg__io_word = NULL;
	atomic_store(&slots[slot - 1].tid, 0);
}

/* The child has the forking thread only. */
void vg__io_flight_after_fork(void)
{
	int slot = my_slot();
	for (int i = 0; i < SLOTS; i++)
		if (i + 1 != slot)
			atomic_store_explicit(&slots[i].tid, 0, memory_order_relaxed);
	if (slot)
		atomic_store_explicit(&slots[slot - 1].tid, vg__thread_tid(), memory_order_relaxed);
}

/* Is thread tid of this process runnable (R) or in a short uninterruptible wait (D, a
 * page of its stream file)? Raw system calls: no interposer sees them. */
static int runnable(uint32_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%u/stat", tid);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone */
	ssize_t n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *paren = strrchr(buf, ')'); /* "tid (comm) S ..." */
	return paren && paren[1] == ' ' && (paren[2] == 'R' || paren[2] == 'D');
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void vg__io_flight_wait(void)
{
	uint32_t self = vg__thread_tid();
	uint64_t until = mono_ns() + END_WAIT_NS;
	for (;;) {
		int waiting = 0;
		for (int i = 0; i < SLOTS && !waiting; i++) {
			uint32_t tid = atomic_load_explicit(&slots[i].tid, memory_order_acquire);
			if (tid && tid != self &&
			    atomic_load_explicit(&slots[i].open, memory_order_acquire) &&
			    runnable(tid))
				waiting = 1;
		}
		if (!waiting || mono_ns() >= until)
			return;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
}
