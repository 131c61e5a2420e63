/* The process image: start of the runtime, the image's trace directory and identity,
 * process begin and end, and what a fork child must redo. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "usdt.h"

struct vg_runtime vg__rt = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
/* "VIGIL_PROC=pid:gen:image:fd", fixed width, given to putenv and updated in place: it
 * tells an exec'd image which process it continues (and the descriptor of the trace root
 * it inherits, files.c), and a child who its parent was. */
static char proc_env[80];
static int inherited_out_fd = -1;
/* "VIGIL_CLOCK=..." for descendants: they reuse this calibration instead of redoing it
 * (20 ms each) and convert time exactly as this process does. */
static char clock_env[160];

int vg_recording(void)
{
	return vg__rt.recording;
}
const char *vg_trace_dir(void)
{
	/* A spool is emptied as the collector acknowledges it, and a monitor's working copy
	 * is removed once it has answered: neither is where the trace stays. */
	if (!vg__rt.recording || vg__rt.cfg.to || vg__rt.cfg.out_temporary)
		return NULL;
	return vg__rt.dir;
}

/* The process's start time in clock ticks since boot: with the pid, a unique identity. */
static uint64_t process_start_ticks(void)
{
	char buf[1024];
	if (vg__read_small_file("/proc/self/stat", buf, sizeof buf) <= 0)
		return 0;
	const char *p = strrchr(buf, ')'); /* the name may contain anything but ends here */
	if (!p)
		return 0;
	/* Field 22 is starttime; after ')' come fields 3, 4, ... */
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

static void read_identity(void)
{
	vg__rt.pid = getpid();
	vg__rt.ppid = getppid();
	vg__rt.process_gen = process_start_ticks();
	if (vg__read_small_file("/proc/self/comm", vg__rt.procname, sizeof vg__rt.procname) <= 0)
		snprintf(vg__rt.procname, sizeof vg__rt.procname, "pid%d", (int)vg__rt.pid);
	/* The host every process of the trace belongs to (docs/net.md): VIGIL_HOST names
	 * simulated hosts (network namespaces of one machine). */
	const char *host = getenv("VIGIL_HOST");
	if (host && *host)
		snprintf(vg__rt.hostname, sizeof vg__rt.hostname, "%s", host);
	else if (gethostname(vg__rt.hostname, sizeof vg__rt.hostname) < 0)
		strcpy(vg__rt.hostname, "localhost");
	vg__rt.hostname[sizeof vg__rt.hostname - 1] = 0;
}

/* VIGIL_CLOCK_SKEW_NS=N (a test aid, docs/net.md): this host's clock reads N ns ahead.
 * It shifts the metadata's clock offset, and the clock gets a uuid of its own (the boot
 * id with the skew mixed into its last group): a reader gives all images of one clock
 * uuid the first image's offset, and a skewed host must not borrow an unskewed one's.
 * Every image of the process tree reads the same variable, so all carry the same skew. */
static void apply_clock_skew(void)
{
	const char *v = getenv("VIGIL_CLOCK_SKEW_NS");
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	long long skew = strtoll(v, &end, 10);
	if (errno || *end || skew < -(1000000000LL * 86400 * 365) ||
	    skew > 1000000000LL * 86400 * 365) {
		vg__warn("VIGIL_CLOCK_SKEW_NS=%s is not a number of nanoseconds (within a year); "
		         "ignored",
		         v);
		return;
	}
	if (!skew)
		return;
	vg__rt.realtime_offset_ns += skew;
	char *group = vg__rt.clock_uuid + 24; /* the last 12 hex digits */
	if (strlen(vg__rt.clock_uuid) != 36)
		return;
	uint64_t x = strtoull(group, NULL, 16);
	uint64_t h = (uint64_t)skew * 0x9e3779b97f4a7c15ull;
	x ^= ((h ^ (h >> 29)) & 0xffffffffffffull) | 1; /* never the boot id's own value */
	snprintf(group, 13, "%012llx", (unsigned long long)x);
}

const char *vg__proc_env(void)
{
	return proc_env;
}

static void update_proc_env(void)
{
	snprintf(proc_env, sizeof proc_env, "VIGIL_PROC=%010d:%020" PRIu64 ":%010u:%010d",
	         (int)vg__rt.pid, vg__rt.process_gen, vg__rt.image, vg__files_out_number());
}

/* Learns from VIGIL_PROC whether this image continues a process (exec) or which
 * process started it. */
static void read_lineage(void)
{
	const char *v = getenv("VIGIL_PROC");
	int pid;
	uint64_t gen;
	unsigned image;
	int fd = -1;
	vg__rt.image = 0;
	vg__rt.parent_gen = 0;
	if (!v || sscanf(v, "%d:%" SCNu64 ":%u:%d", &pid, &gen, &image, &fd) < 3)
		return;
	if (pid == (int)vg__rt.pid && gen == vg__rt.process_gen) {
		vg__rt.image = image + 1;
		inherited_out_fd = fd;
	} else if (pid == (int)vg__rt.ppid)
		vg__rt.parent_gen = gen;
}

/* Makes <out>/<procname>-<pid>-<n>, the first n that is free (or opens <out>/shared:
 * -2 when only that fails). */
static int make_image_dir(int shared)
{
	if (inherited_out_fd >= 0) { /* an exec'd image: the root its process held */
		vg__files_adopt_out(inherited_out_fd);
		inherited_out_fd = -1;
	}
	if (vg__out_fd() < 0 && vg__rt.cfg.spool_private)
		mkdir(vg__rt.cfg.out, 0700); /* the default spool: this user's only */
	if (vg__out_fd() < 0 && vg__mkdir_p(vg__rt.cfg.out) < 0) {
		vg__warn(
		    "%s: cannot create trace directory %s: %s%s; not recording",
		    vg__rt.cfg.to ? "VIGIL_SPOOL" : "VIGIL_OUT", vg__rt.cfg.out, strerror(errno),
		    errno == ENOENT ? " (its parent folder does not exist: create it first)" : "");
		return -1;
	}
	/* Absolute, so that a subject that changes directory keeps writing in the same
	 * place, and its children (which inherit VIGIL_OUT) too. */
	char abs[PATH_MAX];
	if (vg__rt.cfg.out[0] != '/' && realpath(vg__rt.cfg.out, abs) &&
	    strlen(abs) < sizeof vg__rt.cfg.out) {
		strcpy(vg__rt.cfg.out, abs);
		setenv("VIGIL_OUT", abs, 1);
	}
	/* Kept open: children and exec'd images of a subject that chroots or drops its
	 * privileges still make their directories here (files.c). */
	if (vg__files_open_out() < 0) {
		vg__warn("cannot open trace directory %s: %s; not recording", vg__rt.cfg.out,
		         strerror(errno));
		return -1;
	}
	char name[64];
	size_t j = 0;
	for (const char *p = vg__rt.procname; *p && j < 32; p++)
		name[j++] = (*p == '/' || *p == ' ' || (unsigned char)*p < 0x20) ? '_' : *p;
	name[j] = 0;
	snprintf(vg__rt.label, sizeof vg__rt.label, "%s-%d-%" PRIu64 "-%u", name, (int)vg__rt.pid,
	         vg__rt.process_gen, vg__rt.image);
	if (shared) { /* one directory for every image of the recording */
		snprintf(vg__rt.dir, sizeof vg__rt.dir, "%s/shared", vg__rt.cfg.out);
		if ((mkdirat(vg__out_fd(), "shared", 0777) == 0 || errno == EEXIST) &&
		    vg__files_open_image() == 0)
			return 0;
		return -2; /* the root is usable: a directory of its own will do */
	}
	for (unsigned n = 0; n < 1000; n++) {
		snprintf(vg__rt.dir, sizeof vg__rt.dir, "%s/%s-%d-%u", vg__rt.cfg.out, name,
		         (int)vg__rt.pid, n);
		if (mkdirat(vg__out_fd(), vg__image_name(), 0777) == 0)
			return vg__files_open_image();
		if (errno != EEXIST)
			break;
	}
	vg__warn("cannot create %s: %s; not recording", vg__rt.dir, strerror(errno));
	return -1;
}

static void read_clock_uuid(void)
{
	if (vg__read_small_file("/proc/sys/kernel/random/boot_id", vg__rt.clock_uuid,
	                        sizeof vg__rt.clock_uuid) != 36) {
		uint8_t raw[16];
		vg__random_uuid(raw, vg__rt.clock_uuid);
	}
}

static atomic_int process_begun;
static unsigned process_reported; /* its begin was: its end will be (rule 3); a mask */

/* Records vg.process.begin once per new process, before its first thread's begin. */
void vg__process_begin_once(void)
{
	if (vg__rt.image > 0) { /* begun in an earlier image of the process */
		/* Those whose filter reported its begin then: asked again (a filter changed
		 * at run time before the exec is not known here). Not 1 for all: with
		 * VIGIL_REPORT=activity the end would be reported without its begin. */
		process_reported = vg__wanted(vg__builtin(VG_B_PROCESS_BEGIN), NULL);
		/* An exec: the process is now called what the new program is called. */
		if (!atomic_exchange(&process_begun, 1))
			vg__process_renamed(vg__rt.procname);
		return;
	}
	if (atomic_exchange(&process_begun, 1))
		return;
	char exe[PATH_MAX];
	ssize_t n = vg__readlink_proc("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	vg_value v[5];
	v[0].u = (uint64_t)vg__rt.pid;
	v[1].u = vg__rt.process_gen;
	v[2].u = (uint64_t)vg__rt.ppid;
	v[3].s = vg__rt.procname;
	v[4].s = exe;
	process_reported = vg__wanted(vg__builtin(VG_B_PROCESS_BEGIN), NULL);
	if (process_reported)
		vg__emit_decided(vg__builtin(VG_B_PROCESS_BEGIN), v);
}

/* What the process calls itself changed (a title, its main thread's name, an exec):
 * recorded while its begin is (rule 3: an entity unreported stays so). */
void vg__process_renamed(const char *name)
{
	if (!vg__rt.recording || !process_reported || getpid() != vg__rt.pid)
		return;
	vg_sensor *s = vg__builtin(VG_B_PROCESS_NAME);
	if (!vg__wanted(s, NULL))
		return;
	vg_value v[3];
	v[0].u = (uint64_t)vg__rt.pid;
	v[1].u = vg__rt.process_gen;
	v[2].s = name;
	vg__emit_decided(s, v);
}

/* VIGIL_LAYOUT=shared: the recording's shared directory and metadata. An image that
 * cannot use them (another user's files after a privilege drop) gets its own. */
static int start_shared(void)
{
	vg__rt.shared = 1;
	vg__rt.packet_header = VGW_PACKET_HEADER_SIZE_SHARED;
	int rc = make_image_dir(1);
	if (rc == 0 && vg__metadata_write_all() == 0)
		return 0;
	vg__metadata_close();
	vg__rt.shared = 0;
	vg__rt.packet_header = VGW_PACKET_HEADER_SIZE;
	vg__random_uuid(vg__rt.uuid, vg__rt.uuid_text);
	return rc == -1 ? -1 : -2; /* -1: the root is not usable (said), not recording */
}

/* Starts recording this image into its own directory (or the shared one); on any
 * failure, not recording. */
void vg__process_start_image(int after_fork)
{
	vg__rt.recording = 0;
	if (!vg__rt.cfg.out[0])
		return;
	vg__random_uuid(vg__rt.uuid, vg__rt.uuid_text);
	atomic_store(&vg__rt.bytes_used, 0);
	vg__rt.shared = 0;
	vg__rt.packet_header = VGW_PACKET_HEADER_SIZE;
	int shared = vg__rt.cfg.shared && !vg__rt.cfg.to ? start_shared() : -2; /* not a spool */
	if (shared == -1)
		return;
	if (shared == 0) {
		vg__rt.recording = 1;
		vg__registry_redeclare();
		if (after_fork)
			vg__registry_reset_after_fork();
		update_proc_env();
		return;
	}
	if (make_image_dir(0) < 0)
		return;
	vg__rt.recording = 1;
	if (vg__metadata_write_all() < 0) {
		vg__warn("cannot write %s/metadata: %s; not recording", vg__rt.dir,
		         strerror(errno));
		vg__rt.recording = 0;
	}
	if (after_fork)
		vg__registry_reset_after_fork();
	if (vg__rt.recording)
		vg__listen_image_start(); /* a fork child's image in each listener */
	update_proc_env();
}

static atomic_int process_ended;

/* Records the calling thread's end and the process's end, once. */
void vg__process_end(int status)
{
	if (!vg__rt.recording || atomic_exchange(&process_ended, 1))
		return;
	vg__io_flight_wait(); /* sends other threads made and have not recorded yet */
	vg__logcap_process_end();
	vg_value v[3];
	v[0].u = (uint64_t)vg__rt.pid;
	v[1].u = vg__rt.process_gen;
	v[2].i = status;
	vg__title_check(); /* its last title */
	vg__stream_thread_end_event();
	unsigned wanted = vg__wanted(vg__builtin(VG_B_PROCESS_END), NULL);
	unsigned report = vg__tracking ? process_reported : wanted;
	vg__listen_decide(report);
	if (report)
		vg__emit_decided(vg__builtin(VG_B_PROCESS_END), v);
	vg__stream_adopt_unstreamed_loss(); /* so the trace counts every loss */
	vg_thread_flush();
	vg__listen_flush_all(); /* the listeners' buffers of every thread */
	vg__send_finish();      /* VIGIL_TO: ship what is left */
	uint64_t lost = vg_events_discarded();
	if (lost)
		vg__warn("%" PRIu64 " events of this process were not recorded (size cap, full "
		         "disk or nesting); see events_discarded in %s",
		         lost, vg__rt.dir);
}

static void on_process_exit(int status, void *arg)
{
	(void)arg;
	vg__process_end(status);
}

static void atfork_prepare(void)
{
	vg__title_check(); /* a server names itself, then forks its workers (nginx) */
	pthread_mutex_lock(&vg__rt.lock);
}
static void atfork_parent(void)
{
	pthread_mutex_unlock(&vg__rt.lock);
}
static void atfork_child(void)
{
	pthread_mutex_init(&vg__rt.lock, NULL);
	vg__worker_forget_after_fork();
	vg__files_after_fork(); /* before the parent's streams are forgotten */
	vg__stream_forget_after_fork();
	vg__thread_table_after_fork();
	vg__io_flight_after_fork();
	if (!vg__rt.cfg.out[0])
		return;
	uint64_t parent_gen = vg__rt.process_gen;
	read_identity();
	vg__rt.parent_gen = parent_gen;
	vg__rt.image = 0;
	atomic_store(&vg__rt.discarded, 0);
	atomic_store(&vg__rt.discarded_unstreamed, 0); /* the parent's, counted there */
	atomic_store(&process_begun, 0);
	process_reported = 0;
	atomic_store(&process_ended, 0);
	vg__process_start_image(1);
	vg__report_after_fork();
	vg__report_window_after_fork();
	vg__track_after_fork();
	vg__track_call_after_fork();
	vg__listen_after_fork();
	vg__net_after_fork();
	vg__title_after_fork();
	if (vg__rt.recording)
		vg__stream_thread_start();
	vg__send_after_fork();    /* VIGIL_TO: its own sender */
	vg__control_after_fork(); /* its own connection to the monitor, if any */
	vg__probes_file_after_fork();
	vg__logcap_after_fork();
}

static void init(void)
{
	vg__config_read(&vg__rt.cfg);
	vg__hooks_init();
	const char *clock_setting = getenv("VIGIL_CLOCK");
	if (!clock_setting || vgw_clock_import(clock_setting) < 0) {
		if (clock_setting && strcmp(clock_setting, "mono"))
			vg__warn("VIGIL_CLOCK=%s is not a usable clock mapping; calibrating",
			         clock_setting);
		vgw_clock_init();
		if (clock_setting && !strcmp(clock_setting, "mono"))
			vg__clock.use_tsc = 0;
	}
	vg__rt.realtime_offset_ns = vgw_clock_realtime_offset_ns();
	read_identity();
	read_clock_uuid();
	apply_clock_skew();
	read_lineage();
	if (vg__rt.cfg.out[0]) {
		/* Built-in types first so that the metadata holds them from the start. */
		vg__rt.recording = 1;
		vg__registry_init();
		vg__process_start_image(0);
		if (!vg__rt.recording)
			vg__registry_reset_after_fork();
	} else {
		vg__registry_init();
	}
	vg__logcap_init();
	vg__report_init();
	if (!vg__rt.recording) {
		vg__control_start(); /* only says that VIGIL_CONTROL is ignored */
		return;
	}
	vg__title_init();
	putenv(proc_env);
	memcpy(clock_env, "VIGIL_CLOCK=", 12);
	if (vgw_clock_export(clock_env + 12, sizeof clock_env - 12) == 0)
		putenv(clock_env);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	on_exit(on_process_exit, NULL);
	vg__stream_thread_start();
	vg__send_start();         /* VIGIL_TO */
	vg__report_window_init(); /* VIGIL_REPORT_WINDOW: the windows' thread */
	vg__usdt_init();          /* VIGIL_USDT: probe sites armed before main */
	/* Last: the monitor's first requests are in place before main runs. */
	vg__control_start();
	vg__probes_file_start();
}

void vg__ensure_init(void)
{
	pthread_once(&init_once, init);
}

__attribute__((constructor)) static void vg__constructor(void)
{
	vg__ensure_init();
}
