/* Choosing the thread of another process that calls are made in
 * (inject.h): one blocked in a system call (it holds no lock of the C
 * library), else one caught outside the C library, the dynamic loader
 * and the unwinder, never one that blocks SIGSEGV; what /proc says of each
 * thread decides which are tried first. */
#include <config.h>

#if defined(__x86_64__)

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "launcher/attach/inject_int.h"
#include "launcher/attach/why.h"

/* A safe point is hunted for in rounds over the threads, about this far
 * apart (each gap a little different, so that a program doing the same
 * thing over and over is not stopped at the same point of it each time),
 * for HUNT_MS at least and HUNT_ROUNDS rounds at least (a round takes
 * longer on a loaded machine).  A thread can be at one a few times in a
 * hundred stops only: a C++ program throwing all the time spends four
 * fifths of its time in the unwinder and the C library (tests/e2e/
 * patch.sh); 20 rounds missed it one attach in ten under load. */
#define HUNT_MS	    2000
#define HUNT_ROUNDS 200
#define HUNT_GAP_US 1000

/* Whether a thread stopped at pc may hold a lock our calls would need:
 * when pc is in the C library, the dynamic loader or the unwinder (their
 * locks: malloc's arenas, stdio's, the loader's, the unwinder's). */
static bool locks_maybe_held(struct inject *in, uint64_t pc)
{
	static const char *const lockers[] = { "libc.so", "ld-linux", "libpthread.so", "libdl.so",
					       "libgcc_s.so" };
	const char *m = fxt_sym_lookup(in->sym, pc)->module;
	size_t i;

	for (i = 0; i < sizeof(lockers) / sizeof(*lockers); i++)
		if (strncmp(m, lockers[i], strlen(lockers[i])) == 0)
			return true;
	return false;
}

/* The system call a blocked thread is in (its /proc/PID/task/TID/syscall):
 * its number, -1 when blocked outside one, -2 when running or unknown. */
static long task_syscall(pid_t pid, pid_t tid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -2;
	buf[n] = '\0';
	if (buf[0] == '-')
		return -1;
	if (buf[0] < '0' || buf[0] > '9')
		return -2;
	return strtol(buf, NULL, 10);
}

/* Which threads to try first, from what /proc says each is doing: 0
 * blocked in a system call, 1 waiting on a futex (a lock or a condition:
 * it may hold another lock), 2 running. */
static unsigned preference(long nr)
{
	return nr < 0 ? 2 : nr == SYS_futex ? 1 : 0;
}

/* System calls the C library makes while it holds a lock our calls need:
 * malloc's (mmap, munmap, mprotect, madvise, brk ...) or the loader's
 * (openat, read, fstat, mmap, close ... of a library being loaded). */
static bool under_locks(long long nr)
{
	switch (nr) {
	case SYS_mmap:
	case SYS_munmap:
	case SYS_mprotect:
	case SYS_mremap:
	case SYS_madvise:
	case SYS_brk:
	case SYS_open:
	case SYS_openat:
	case SYS_read:
	case SYS_pread64:
	case SYS_close:
	case SYS_fstat:
	case SYS_newfstatat:
	case SYS_lseek:
	case SYS_futex:
#ifdef SYS_statx
	case SYS_statx:
#endif
		return true;
	default:
		return false;
	}
}

/* Whether a thread stopped with registers r is at a safe point: blocked
 * in a system call (interrupted by our stop: it was waiting for input,
 * time, a child or a condition, not in the middle of work under a lock),
 * just back from one the C library makes under no lock of ours, or
 * outside the code whose locks we need. */
static bool safe_stop(struct inject *in, const struct user_regs_struct *r)
{
	long long nr = (long long)r->orig_rax, rv = (long long)r->rax;

	if (nr >= 0) {
		/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND,
		 * -ERESTART_RESTARTBLOCK (the kernel's, not in errno.h),
		 * or -EINTR: the call was blocked when we stopped it. */
		if ((rv <= -512 && rv >= -516) || rv == -EINTR)
			return true;
		if (!under_locks(nr))
			return true;
	}
	return !locks_maybe_held(in, r->rip);
}

int inject__sigblk(pid_t pid, pid_t tid, uint64_t *mask)
{
	char path[64], text[4096], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	p = strstr(text, "\nSigBlk:");
	if (!p)
		return -EINVAL;
	*mask = strtoull(p + 8, NULL, 16);
	return 0;
}

/* Whether the thread blocks SIGSEGV (its /proc/PID/task/TID/status).
 * Such a thread (the agent's watchdog blocks every signal) never runs a
 * call: the fault at 0 that ends it, taken while SIGSEGV is blocked,
 * makes the kernel reset the process's SIGSEGV action to the default,
 * and the program's handler would be gone. */
static bool blocks_segv(pid_t pid, pid_t tid)
{
	uint64_t mask;

	return inject__sigblk(pid, tid, &mask) == 0 && (mask >> (SIGSEGV - 1) & 1);
}

struct cand {
	pid_t tid;
	unsigned fit;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->fit != y->fit)
		return x->fit < y->fit ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int list_threads(struct inject *in, struct cand **out, size_t *n)
{
	char path[64];
	struct cand *v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)in->pid);
	dir = opendir(path);
	if (!dir)
		return -errno == -ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0 || blocks_segv(in->pid, (pid_t)tid))
			continue;
		if (k == cap) {
			struct cand *p = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!p) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = p;
		}
		v[k].tid = (pid_t)tid;
		v[k].fit = preference(task_syscall(in->pid, (pid_t)tid));
		k++;
	}
	closedir(dir);
	if (k > 1) /* v is NULL when none was listed */
		qsort(v, k, sizeof(*v), cand_cmp);
	*out = v;
	*n = k;
	return 0;
}

/* Stops the thread and keeps it if it is at a safe point: 1 kept, 0 let
 * go, < 0 an error. */
static int try_thread(struct inject *in, pid_t tid, char *why, size_t cap)
{
	struct user_regs_struct r;
	int err = inject__seize(in, tid, why, cap);

	if (err)
		return err;
	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r) < 0)
		return attach_fail(why, cap, -errno, "thread %d: %s", (int)in->tid,
				   strerror(errno));
	/* SIGSEGV unblocked now that it cannot change (list_threads() read
	 * the mask while the thread ran: pthread_create() blocks every signal
	 * around clone(), a new thread until it starts). */
	if (safe_stop(in, &r) && !blocks_segv(in->pid, in->tid))
		return 1;
	inject__release(in);
	return 0;
}

int inject__borrow_thread(struct inject *in, char *why, size_t cap)
{
	struct cand *v = NULL;
	size_t n = 0, i;
	struct timespec t0, now;
	unsigned t;
	int err = list_threads(in, &v, &n);

	if (err)
		return attach_fail(why, cap, err, "process %d: %s", (int)in->pid,
				   err == -ESRCH ? "no such process" : strerror(-err));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = 0;; t++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (t >= HUNT_ROUNDS &&
		    (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
			HUNT_MS)
			break;
		for (i = 0; i < n; i++) {
			err = try_thread(in, v[i].tid, why, cap);
			if (err == -ESRCH && kill(in->pid, 0) == 0)
				continue; /* the thread ended */
			if (err) {
				err = err > 0 ? 0 : err;
				goto out;
			}
		}
		usleep(HUNT_GAP_US / 2 + (t * 7919u) % HUNT_GAP_US);
		/* None to try: each blocked SIGSEGV, maybe only for a while
		 * (around a pthread_create()). */
		if (n == 0) {
			free(v);
			v = NULL;
			if ((err = list_threads(in, &v, &n)) != 0)
				return attach_fail(why, cap, err, "process %d: %s", (int)in->pid,
						   err == -ESRCH ? "no such process"
								 : strerror(-err));
		}
	}
	if (n == 0)
		err = attach_fail(why, cap, -EBUSY,
				  "no thread of process %d can take a call: each blocks SIGSEGV",
				  (int)in->pid);
	else
		err = attach_fail(
		    why, cap, -EBUSY,
		    "no thread of process %d was at a safe point (all were inside the C library "
		    "or the loader): try again",
		    (int)in->pid);
out:
	free(v);
	return err;
}

#endif /* __x86_64__ */
