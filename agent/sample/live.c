/* Stack sampling in a process attached to (see live.h): the tasks of
 * /proc/self/task, their masks and pending signals, the timers started on
 * them and the table that keeps them until the detach. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/sample/live.h"
#include "run/attach.h"

/* glibc before 2.35 does not name the field. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The kernel's id of a task's scheduler CPU-time clock, what
 * pthread_getcpuclockid() gives for a thread we have no pthread_t of:
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) of include/linux/posix-timers.h,
 * ~tid << 3 | CPUCLOCK_PERTHREAD_MASK (4) | CPUCLOCK_SCHED (2).  Without
 * the per-thread bit it would be the clock of process `tid`. */
#define THREAD_CPUCLOCK(tid) ((clockid_t)((~(unsigned)(tid) << 3) | 6u))

/* SIGPROF's bit in the masks of /proc/PID/task/TID/status. */
#define PROF_BIT (1ull << (SIGPROF - 1))

/* The timers started, each deleted at the detach by whichever thread runs
 * it.  Written at the attach and the detach only, under the lock. */
static struct {
	pthread_mutex_t lock;
	timer_t *v;
	unsigned n, cap;
} table = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

/* The loader's code, [lo, hi). */
static uint64_t loader_lo, loader_hi;

/* Calls fn(tid, arg) for each task of the process; false if the list
 * could not be read. */
static bool each_task(void (*fn)(long tid, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return false;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (tid > 0 && *end == '\0')
			fn(tid, arg);
	}
	closedir(d);
	return true;
}

/* Whether task tid is one of the agent's own threads (run/attach.h). */
static bool agents_own(long tid)
{
	char comm[32];

	agent_thread_comm((uint64_t)tid, comm, sizeof(comm));
	return strncmp(comm, FXT_ATTACH_THREAD_PREFIX, strlen(FXT_ATTACH_THREAD_PREFIX)) == 0;
}

/* Whether task tid of the program blocks SIGPROF.  The agent blocks every
 * signal of a thread that called a wrapper or a patched function bound
 * already, which then waits for this start to end (agent_init_waiter():
 * a lua loop's fwrite(), and nothing was sampled, 1 attach in 4 at a load
 * of 14); it lists itself a moment after it blocked them, as the thread
 * fxt-run borrowed unblocks them a moment after the pthread_create() that
 * made the starter: a mask that blocks it is read again, for at most
 * 200 ms, before it counts. */
static bool blocks_prof(long tid)
{
	for (int i = 0; i < 20; i++) {
		if (!(agent_task_field(tid, "SigBlk", 16) & PROF_BIT) || agent_init_waiter(tid))
			return false;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	return true;
}

static void find_blocker(long tid, void *arg)
{
	long *who = arg;

	/* Ours (the starter running this) block every signal. */
	if (!*who && !agents_own(tid) && blocks_prof(tid))
		*who = tid;
}

long agent_sample_live_blocker(void)
{
	long who = 0;

	each_task(find_blocker, &who);
	return who;
}

static void find_pending(long tid, void *arg)
{
	bool *pending = arg;

	if (!*pending &&
	    ((agent_task_field(tid, "SigPnd", 16) | agent_task_field(tid, "ShdPnd", 16)) &
	     PROF_BIT))
		*pending = true;
}

bool agent_sample_live_prof_pending(void)
{
	bool pending = false;

	each_task(find_pending, &pending);
	return pending;
}

static void find_tracer(long tid, void *arg)
{
	bool *traced = arg;

	if (!*traced && agent_task_field(tid, "TracerPid", 10) != 0)
		*traced = true;
}

bool agent_sample_live_traced(void)
{
	bool traced = false;

	each_task(find_tracer, &traced);
	return traced;
}

/* dl_iterate_phdr(): the loader's (loaded at AT_BASE) executable segment. */
static int find_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_addr != *(uint64_t *)arg)
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			loader_lo = info->dlpi_addr + ph->p_vaddr;
			loader_hi = loader_lo + ph->p_memsz;
		}
	}
	return 1;
}

bool agent_sample_live_in_loader(uint64_t pc)
{
	return pc - loader_lo < loader_hi - loader_lo;
}

struct start {
	const struct timespec *period;
	const void *cookie;
	unsigned sampled;
};

static void start_one(long tid, void *arg)
{
	struct start *s = arg;
	struct sigevent sev;
	struct itimerspec its;
	timer_t t;

	if (agents_own(tid))
		return; /* the starter, the watchdog: not the program's */

	if (table.n == table.cap) {
		unsigned cap = table.cap ? 2 * table.cap : 64;
		timer_t *v = realloc(table.v, cap * sizeof(*v));

		if (!v) {
			agent_dbg("task %ld not sampled: out of memory", tid);
			return;
		}
		table.v = v;
		table.cap = cap;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = (void *)s->cookie;
	sev.sigev_notify_thread_id = (pid_t)tid;
	if (timer_create(THREAD_CPUCLOCK(tid), &sev, &t) != 0) {
		/* EINVAL: the task ended since it was listed. */
		if (errno != EINVAL)
			agent_dbg("timer_create for task %ld: %s: not sampled", tid,
				  strerror(errno));
		return;
	}
	its.it_interval = *s->period;
	its.it_value = *s->period;
	if (timer_settime(t, 0, &its, NULL) != 0) {
		timer_delete(t);
		return;
	}
	table.v[table.n++] = t;
	s->sampled++;
}

unsigned agent_sample_live_start(const struct timespec *period, const void *cookie)
{
	struct start s = { period, cookie, 0 };
	uint64_t base = getauxval(AT_BASE);

	if (base)
		dl_iterate_phdr(find_loader, &base);
	pthread_mutex_lock(&table.lock);
	if (!each_task(start_one, &s))
		agent_dbg("cannot list /proc/self/task: %s: no thread sampled", strerror(errno));
	pthread_mutex_unlock(&table.lock);
	return s.sampled;
}

bool agent_sample_live_add(long tid, const struct timespec *period, const void *cookie)
{
	struct start s = { period, cookie, 0 };

	pthread_mutex_lock(&table.lock);
	start_one(tid, &s);
	pthread_mutex_unlock(&table.lock);
	return s.sampled != 0;
}

unsigned agent_sample_live_delete(void)
{
	unsigned n;

	pthread_mutex_lock(&table.lock);
	n = table.n;
	for (unsigned i = 0; i < table.n; i++)
		timer_delete(table.v[i]);
	table.n = 0;
	pthread_mutex_unlock(&table.lock);
	return n;
}
