/* Run-time patching of a running program (see patch.h): the jumps written
 * at the entries of a library's functions after dlopen(), when other
 * threads may be running.
 *
 * At start-up the process has one thread and the patcher simply makes the
 * text writable for a moment.  After dlopen() it cannot: another thread
 * may run any code of the program at any time, so the text must stay
 * executable, and a thread must never fetch an entry half rewritten (the
 * 5-byte jump is not one store).  So, as the kernel does when it patches
 * itself, each entry is rewritten in three steps, every core being made
 * to forget what it had fetched after each (membarrier SYNC_CORE):
 *
 *   1. an int3 at the patch site: a thread that gets there traps, and the
 *      SIGTRAP handler below sends it to the function's stub, which does
 *      what the finished patch will do;
 *   2. the jump's other four bytes (and nops over the rest of the
 *      displaced instructions): no thread reads them, the int3 stops it;
 *   3. the jump's first byte.
 *
 * The text is written through /proc/self/mem, which leaves the pages'
 * protection alone: no page is ever writable and executable.
 *
 * Between steps 1 and 2 no thread may stand inside a site's displaced
 * bytes after its first (one preempted after `push %rbp` would resume in
 * the middle of the jump): attached (fxt-run -p), every thread may be
 * running the very functions patched.  So after step 1 every other thread
 * says where it is (settle(): /proc for one asleep in the kernel, a
 * real-time signal of ours, a probe, for one that runs), until none is
 * inside a site; the int3s keep new ones out, so that set only shrinks.
 * A site where one stays (300 ms) gets its first byte back and is left
 * unpatched (said on stderr); a thread that runs and blocks the probe
 * (or runs a call of fxt-run's, traced, for 300 ms) cannot be asked: the
 * whole call takes its int3s back (-EBUSY).  Not
 * SIGTRAP as the probe: a SIGTRAP pending makes the kernel drop the one of
 * an int3 the thread then meets, and it would resume after the int3.
 *
 * What this does not cover: a thread interrupted inside a site's bytes by
 * a signal whose handler of the program's still runs (what it reports is
 * the handler's place, not the interrupted one); and a thread that blocks
 * SIGTRAP and reaches an int3, which the kernel kills.
 *
 * The SIGTRAP handler stays installed once installed (a thread may have
 * trapped and not yet been given its signal when the patch ends), but
 * for a detach (agent_patch_live_end()); traps that are not at a patch
 * site go to the handler the program had, except those of an int3 of ours
 * taken back meanwhile: the thread goes back to the instruction.
 *
 * This file is past 800 lines: the three steps, the SIGTRAP handler and
 * the settling between steps 1 and 2 (its probes, their handler and
 * slots) share the tables of sites and the handlers' state, which no
 * other file should see. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/membarrier.h>
#endif

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/patch/patch.h"

#if defined(__x86_64__)

/* The sites of one call of agent_patch_live(), sorted, for the handler.
 * Never freed (the handler may be reading it); `dead` once the library
 * is unloaded. */
struct agent_live_sites {
	struct agent_live_sites *next;
	bool dead;
	size_t n;
	struct agent_patch_site v[];
};

static struct agent_live_sites *tables;
static struct sigaction prev_trap, prev_probe;
static int probe_sig;  /* the signal of the probes (settle()), once installed */
static bool probe_out; /* a probe not answered may still come: probe_sig stays ours */
static bool trap_installed;
static unsigned long traps; /* threads sent to a stub by an int3, for FXT_DEBUG */

/* ------------------------------------------------ where the threads stand
 *
 * Between steps 1 and 2 (agent_patch_live()), every other thread of the
 * process says where it is: a thread asleep in the kernel through
 * /proc/self/task/TID/syscall (its last field is the address it will
 * resume at), one that runs through a probe (probe_sig, a real-time
 * signal the program leaves alone, sent by rt_tgsigqueueinfo() with
 * SI_QUEUE and PROBE_MAGIC in its value), whose handler writes its
 * context's RIP in the thread's slot.  The program's action is put back
 * after, unless a probe is still on its way (then at the next call, or
 * the detach: agent_patch_live_end()). */

#define PROBE_MAGIC 0x667874ull /* "fxt", the value's top 24 bits */

/* The slots of the threads asked, by index (the value's low 24 bits), of
 * probe number probe_gen (bits 24..39).  Never freed: a probe may be
 * answered late (a thread that blocked the probe a moment); a larger table
 * replaces it and the old one stays. */
struct probe_slot {
	long tid;
	uint64_t rip;
	uint32_t seen;	 /* probe_gen once rip is written, by the handler */
	bool sent, done; /* for the patcher: asked; known out of every site */
	size_t at;	 /* for the patcher: 1 + the site it was last seen in */
};
static struct probe_slot *probe_v;
static uint32_t probe_n, probe_cap, probe_gen;

static void answer(uint64_t value, uint64_t rip)
{
	struct probe_slot *v = __atomic_load_n(&probe_v, __ATOMIC_ACQUIRE);
	uint32_t gen = (value >> 24) & 0xffff, slot = value & 0xffffff;

	if (v && gen == __atomic_load_n(&probe_gen, __ATOMIC_ACQUIRE) &&
	    slot < __atomic_load_n(&probe_n, __ATOMIC_ACQUIRE)) {
		v[slot].rip = rip;
		__atomic_store_n(&v[slot].seen, gen, __ATOMIC_RELEASE);
	}
}

static uint64_t find_stub(uint64_t site)
{
	for (struct agent_live_sites *t = __atomic_load_n(&tables, __ATOMIC_ACQUIRE); t;
	     t = t->next) {
		size_t lo = 0, hi = t->n;
		if (__atomic_load_n(&t->dead, __ATOMIC_ACQUIRE) || !t->n || site < t->v[0].site ||
		    site > t->v[t->n - 1].site)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->v[mid].site < site)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < t->n && t->v[lo].site == site)
			return t->v[lo].stub;
	}
	return 0;
}

/* Whether `site` is a site of ours, of any call, taken back or not. */
static bool is_ours(uint64_t site)
{
	for (struct agent_live_sites *t = __atomic_load_n(&tables, __ATOMIC_ACQUIRE); t;
	     t = t->next)
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].site == site)
				return true;
	return false;
}

/* A signal that is not ours: its action as the program set it. */
static void forward(const struct sigaction *prev, int sig, siginfo_t *si, void *ctx)
{
	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, si, ctx);
	} else if (prev->sa_handler == SIG_DFL) {
		/* Its default action, on the same thread (blocked until this
		 * handler returns). */
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	}
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	/* int3 reports SI_KERNEL, the address after it in RIP. */
	if (si && si->si_code == SI_KERNEL) {
		uint64_t site = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
		uint64_t stub = find_stub(site);
		if (stub) {
			__atomic_add_fetch(&traps, 1, __ATOMIC_RELAXED);
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)stub;
			errno = saved;
			return;
		}
		/* An int3 of ours written back (detach) after this thread
		 * trapped on it: the instruction is whole again. */
		if (is_ours(site) && *(const volatile uint8_t *)(uintptr_t)site != 0xcc) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)site;
			errno = saved;
			return;
		}
	}
	/* Not ours: what the program asked for. */
	forward(&prev_trap, sig, si, ctx);
	errno = saved;
}

/* The probes' handler (settle()): the others go where the program said. */
static void on_probe(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	if (si && si->si_code == SI_QUEUE && si->si_pid == getpid() &&
	    (uint64_t)(uintptr_t)si->si_value.sival_ptr >> 40 == PROBE_MAGIC)
		answer((uint64_t)(uintptr_t)si->si_value.sival_ptr,
		       (uint64_t)uc->uc_mcontext.gregs[REG_RIP]);
	else
		forward(&prev_probe, sig, si, ctx);
	errno = saved;
}

/* The signal of the probes, chosen once: the highest real-time signal
 * whose action is the default (the program does not use it), 0 until
 * then or if none is. */
static int install_probe(void)
{
	struct sigaction sa, cur;

	if (probe_sig)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_probe;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int sig = SIGRTMAX; sig > SIGRTMIN; sig--)
		if (sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_handler == SIG_DFL && sigaction(sig, &sa, &prev_probe) == 0) {
			probe_sig = sig;
			return 0;
		}
	return -EBUSY;
}

static int install_trap(void)
{
	struct sigaction sa;

	if (trap_installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &prev_trap) != 0)
		return -errno;
	trap_installed = true;
	return 0;
}

static bool one_thread(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *t = strstr(buf, "\nThreads:");
	return t && strtol(t + 9, NULL, 10) == 1;
}

/* Makes every thread's core serialize before it runs user code again, or
 * says it cannot (0 when there is no other thread to care about). */
static int sync_cores(bool registered)
{
	if (!registered)
		return 0;
	return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0
		   ? 0
		   : -errno;
}

static int poke(int fd, uint64_t at, const void *buf, size_t len)
{
	ssize_t n = pwrite(fd, buf, len, (off_t)at);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EIO;
}

/* What one step writes at each site (agent_patch_live(), unlive). */
enum step {
	STEP_INT3,	/* 0xcc over the first byte */
	STEP_JMP_TAIL,	/* the jump's displacement, nops after it */
	STEP_JMP_HEAD,	/* 0xe9, the jump's first byte */
	STEP_ORIG_TAIL, /* the original bytes after the first */
	STEP_ORIG_HEAD, /* the original first byte */
};

/* The bytes step `st` writes at site v, from offset *from, in buf:
 * their number. */
static size_t step_bytes(const struct agent_patch_site *v, enum step st, uint8_t *buf, size_t *from)
{
	int32_t rel;

	*from = st == STEP_JMP_TAIL || st == STEP_ORIG_TAIL;
	switch (st) {
	case STEP_INT3:
		buf[0] = 0xcc;
		return 1;
	case STEP_JMP_HEAD:
		buf[0] = 0xe9;
		return 1;
	case STEP_ORIG_HEAD:
		buf[0] = v->orig[0];
		return 1;
	case STEP_JMP_TAIL:
		rel = (int32_t)(v->stub - (v->site + 5));
		memcpy(buf, &rel, 4);
		memset(buf + 4, 0x90, v->len - 5);
		return v->len - 1;
	case STEP_ORIG_TAIL:
		memcpy(buf, v->orig + 1, v->len - 1);
		return v->len - 1;
	}
	return 0;
}

/* One step at every site of v[0..n) (sorted), in few system calls: the
 * sites less than a page apart share one read and one write of the text
 * between them, whose other bytes are written back as they were (only we
 * change text; its pages are replaced whole, each at once, as a write of
 * one site replaces its page).  0, or -errno with *done the sites before
 * the batch that failed (each of those written). */
static int poke_step(int fd, const struct agent_patch_site *v, size_t n, enum step st, size_t *done)
{
	enum { SPAN_MAX = 64 << 10 };
	static uint8_t span[SPAN_MAX];
	size_t i = 0;

	*done = 0;
	while (i < n) {
		uint64_t lo = v[i].site, hi = v[i].site + v[i].len;
		size_t j = i + 1, from;
		uint8_t bytes[PATCH_SITE_MAX];
		ssize_t r;

		for (; j < n && v[j].site < hi + 4096 && v[j].site + v[j].len - lo <= SPAN_MAX; j++)
			hi = v[j].site + v[j].len;
		r = pread(fd, span, hi - lo, (off_t)lo);
		if (r != (ssize_t)(hi - lo))
			return r < 0 ? -errno : -EIO;
		for (size_t k = i; k < j; k++) {
			size_t len = step_bytes(&v[k], st, bytes, &from);
			memcpy(span + (v[k].site - lo) + from, bytes, len);
		}
		int err = poke(fd, lo, span, hi - lo);
		if (err < 0)
			return err;
		*done = i = j;
	}
	return 0;
}

/* The index of the site of v[0..n) (sorted) whose displaced bytes after
 * the first hold `pc`, or n. */
static size_t site_inside(const struct agent_patch_site *v, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the first site above pc */
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].site <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc > v[lo - 1].site && pc < v[lo - 1].site + v[lo - 1].len)
		return lo - 1;
	return n;
}

/* Where task tid sleeps in the kernel, from /proc/self/task/TID/syscall
 * (its last field): 1 with *pc; 0: it runs (or that cannot be read); -1:
 * it is gone. */
static int asleep_at(long tid, uint64_t *pc)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (strncmp(buf, "running", 7) == 0 || !(p = strrchr(buf, ' ')))
		return 0;
	*pc = strtoull(p + 1, NULL, 16);
	return 1;
}

/* Whether task tid may not be sent a probe (signal sig) now: it blocks
 * it, or it is traced (fxt-run running a call in it: a signal would be
 * held there, then queued again after, maybe once the action is the
 * program's again).  From its status in /proc. */
static bool unaskable(long tid, int sig)
{
	return (agent_task_field(tid, "SigBlk", 16) & (1ull << (sig - 1))) ||
	       agent_task_field(tid, "TracerPid", 10) != 0;
}

/* The tasks of the process but the calling one, in probe_v (a new table
 * if it is too small) for probe number probe_gen: 0 or -errno. */
static int list_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long self = syscall(SYS_gettid);
	uint32_t n = 0;

	if (!d)
		return -errno;
	__atomic_store_n(&probe_n, 0, __ATOMIC_RELEASE);
	probe_gen = (probe_gen + 1) & 0xffff;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (tid <= 0 || *end || tid == self)
			continue;
		if (n == probe_cap) {
			/* The old table stays: a late answer may write there. */
			uint32_t cap = probe_cap ? 2 * probe_cap : 64;
			struct probe_slot *v = calloc(cap, sizeof(*v));
			if (!v || cap > 0xffffff) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			if (n)
				memcpy(v, probe_v, n * sizeof(*v));
			__atomic_store_n(&probe_v, v, __ATOMIC_RELEASE);
			probe_cap = cap;
		}
		probe_v[n++] = (struct probe_slot){ .tid = tid };
	}
	closedir(d);
	__atomic_store_n(&probe_n, n, __ATOMIC_RELEASE);
	return 0;
}

/* Whether a probe sent and not answered may still come (its thread
 * lives, 20 ms after): then probe_sig keeps our handler for good. */
static void probes_count_out(void)
{
	/* Those sent last are most likely answered in a moment. */
	for (int ms = 0; ms < 20; ms++) {
		uint32_t i = 0;
		while (i < probe_n &&
		       (!probe_v[i].sent ||
			__atomic_load_n(&probe_v[i].seen, __ATOMIC_ACQUIRE) == probe_gen))
			i++;
		if (i == probe_n)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	for (uint32_t i = 0; i < probe_n; i++)
		if (probe_v[i].sent &&
		    __atomic_load_n(&probe_v[i].seen, __ATOMIC_ACQUIRE) != probe_gen &&
		    syscall(SYS_tgkill, getpid(), probe_v[i].tid, 0) == 0)
			probe_out = true;
}

/* After step 1 (every int3 written, the cores serialized): waits until no
 * other thread stands strictly inside a site's displaced bytes, where step
 * 2 would leave it in the middle of the jump.  No thread enters them any
 * more (it traps on the int3 first), and the displaced instructions make
 * no system call: a thread there leaves as soon as it runs.  busy[i] is
 * set for the sites of v[0..n) where one stays (300 ms): the number of
 * those; -EBUSY: a thread could not be placed (it runs, and blocks the
 * probe), or no signal is free for the probes; another -errno. */
static int settle(const struct agent_patch_site *v, size_t n, bool *busy)
{
	enum { ROUNDS = 300 };
	pid_t pid = getpid();
	int err = list_tasks(), left = 0, unknown = 0;

	if (err < 0)
		return err;
	if (probe_n && (err = install_probe()) < 0)
		return err;
	for (int round = 0; round < ROUNDS; round++) {
		unknown = 0;
		for (uint32_t i = 0; i < probe_n; i++) {
			struct probe_slot *s = &probe_v[i];
			uint64_t pc;
			int at;

			if (s->done)
				continue;
			if (s->sent && __atomic_load_n(&s->seen, __ATOMIC_ACQUIRE) == probe_gen) {
				pc = s->rip;
				s->sent = false;
				__atomic_store_n(&s->seen, 0, __ATOMIC_RELAXED);
			} else if ((at = asleep_at(s->tid, &pc)) < 0) {
				s->done = true; /* gone */
				continue;
			} else if (at == 0) {
				siginfo_t si;

				unknown++;
				if (s->sent)
					continue; /* its answer to come */
				if (unaskable(s->tid, probe_sig))
					continue; /* asleep in a moment, we hope */
				memset(&si, 0, sizeof(si));
				si.si_signo = probe_sig;
				si.si_code = SI_QUEUE;
				si.si_pid = pid;
				si.si_uid = getuid();
				si.si_value.sival_ptr =
				    (void *)(uintptr_t)(PROBE_MAGIC << 40 |
							(uint64_t)probe_gen << 24 | i);
				if (syscall(SYS_rt_tgsigqueueinfo, pid, s->tid, probe_sig, &si) ==
				    0)
					s->sent = true;
				else if (errno == ESRCH) {
					s->done = true;
					unknown--;
				}
				continue;
			}
			if ((s->at = site_inside(v, n, pc) + 1) > n)
				s->done = true;
			else
				unknown++; /* asked again */
		}
		if (!unknown) {
			probes_count_out();
			return 0;
		}
		if (round < ROUNDS - 1)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	probes_count_out();
	/* What stays: the sites threads stand in (a thread seen in one is
	 * there or out of every site: it cannot enter another without its
	 * int3), or a thread not placed. */
	for (uint32_t i = 0; i < probe_n; i++) {
		struct probe_slot *s = &probe_v[i];

		if (s->done)
			continue;
		if (!s->at) {
			agent_dbg("FXT_PATCH: task %ld could not be placed", s->tid);
			return -EBUSY;
		}
		if (!busy[s->at - 1]) {
			busy[s->at - 1] = true;
			left++;
		}
	}
	return left;
}

static void probes_end(void);

/* Whether this process registered for membarrier SYNC_CORE (once). */
static bool registered;

int agent_patch_live(const struct agent_patch_site *v, size_t n, struct agent_live_sites **sites)
{
	struct agent_live_sites *t;
	const uint8_t jmp = 0xe9;
	int fd, err;

	*sites = NULL;
	if (!n)
		return 0;
	if (!registered &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
		registered = true;
	if (!registered && !one_thread())
		return -ENOTSUP;
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t = malloc(sizeof(*t) + n * sizeof(t->v[0]));
	if (!t) {
		close(fd);
		return -ENOMEM;
	}
	t->dead = false;
	t->n = n;
	memcpy(t->v, v, n * sizeof(*v));
	if ((err = install_trap()) < 0) {
		free(t);
		close(fd);
		return err;
	}
	t->next = tables;
	__atomic_store_n(&tables, t, __ATOMIC_RELEASE);

	/* 1: the int3s.  An int3 that is written leads to the stub, which is
	 * complete: if a write fails, what was written is taken back (a
	 * failed batch's sites too: their bytes as they were). */
	size_t done = 0, k;
	if ((err = poke_step(fd, v, n, STEP_INT3, &done)) < 0) {
		done = done < n ? done + 1 : n;
		while (done < n && v[done].site < v[done - 1].site + 4096)
			done++;
		goto undo;
	}
	if ((err = sync_cores(registered)) < 0)
		goto undo;
	/* Then no thread may stand inside the displaced bytes after a site's
	 * first (see settle()): a site where one stays gets its first byte
	 * back and keeps its code (a thread that trapped on its int3 still
	 * goes to the stub, by the table). */
	bool *busy = calloc(n, sizeof(*busy));
	struct agent_patch_site *w = malloc(n * sizeof(*w));
	size_t m = 0;
	if (!busy || !w) {
		free(busy);
		free(w);
		err = -ENOMEM;
		goto undo;
	}
	int left = settle(v, n, busy);
	probes_end();
	if (left < 0) {
		free(busy);
		free(w);
		err = left;
		goto undo;
	}
	for (size_t i = 0; i < n; i++)
		if (!busy[i])
			w[m++] = v[i];
		else if (poke(fd, v[i].site, v[i].orig, 1) < 0)
			agent_dbg("FXT_PATCH: %p keeps its int3", (void *)(uintptr_t)v[i].site);
	free(busy);
	if (left) {
		sync_cores(registered);
		agent_err("FXT_PATCH: %d function%s left unpatched: a thread stood inside %s "
			  "first instructions",
			  left, left == 1 ? "" : "s", left == 1 ? "its" : "their");
	}
	/* 2: the rest of each jump, nops after it. */
	if ((err = poke_step(fd, w, m, STEP_JMP_TAIL, &k)) < 0) {
		free(w);
		goto undo;
	}
	sync_cores(registered);
	/* 3: the jumps' first bytes.  A site whose write failed keeps its
	 * int3, which leads to the stub as well (through a signal). */
	if (poke_step(fd, w, m, STEP_JMP_HEAD, &k) < 0)
		for (size_t i = k; i < m; i++)
			if (poke(fd, w[i].site, &jmp, 1) < 0)
				agent_dbg("FXT_PATCH: %p keeps its int3",
					  (void *)(uintptr_t)w[i].site);
	sync_cores(registered);
	close(fd);
	free(w);
	agent_dbg("FXT_PATCH: %zu entries patched while running (%lu int3 traps so far)", m,
		  __atomic_load_n(&traps, __ATOMIC_RELAXED));
	*sites = t;
	return 0;
undo:
	/* The sites that have their int3 get their bytes back, the first
	 * last. */
	if (poke_step(fd, v, done, STEP_ORIG_TAIL, &k) < 0)
		for (size_t i = k; i < done; i++)
			poke(fd, v[i].site + 1, v[i].orig + 1, v[i].len - 1);
	sync_cores(registered);
	if (poke_step(fd, v, done, STEP_ORIG_HEAD, &k) < 0)
		for (size_t i = k; i < done; i++)
			poke(fd, v[i].site, v[i].orig, 1);
	sync_cores(registered);
	close(fd);
	return err;
}

int agent_patch_unlive(struct agent_live_sites *t)
{
	int fd, err = 0;

	if (__atomic_load_n(&t->dead, __ATOMIC_ACQUIRE))
		return 0;
	if (!registered && !one_thread())
		return -ENOTSUP;
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* 1: an int3 over each jump's first byte: a thread that gets there
	 * goes to the stub (the handler still knows the site), as the jump
	 * took it. */
	size_t k;
	err = poke_step(fd, t->v, t->n, STEP_INT3, &k);
	sync_cores(registered);
	/* 2: the original bytes after the first, where no thread reads; 3:
	 * the first.  A site whose int3 was not written keeps its jump. */
	if (!err) {
		if (poke_step(fd, t->v, t->n, STEP_ORIG_TAIL, &k) < 0)
			for (size_t i = k; i < t->n; i++)
				poke(fd, t->v[i].site + 1, t->v[i].orig + 1, t->v[i].len - 1);
		sync_cores(registered);
		if (poke_step(fd, t->v, t->n, STEP_ORIG_HEAD, &k) < 0)
			for (size_t i = k; i < t->n; i++)
				if (poke(fd, t->v[i].site, t->v[i].orig, 1) < 0)
					agent_dbg("FXT_PATCH: %p keeps its int3",
						  (void *)(uintptr_t)t->v[i].site);
		sync_cores(registered);
	}
	close(fd);
	agent_dbg("FXT_PATCH: %zu entries written back (%lu int3 traps so far)", t->n,
		  __atomic_load_n(&traps, __ATOMIC_RELAXED));
	return err;
}

void agent_patch_live_forget(struct agent_live_sites *sites)
{
	if (sites)
		__atomic_store_n(&sites->dead, true, __ATOMIC_RELEASE);
}

/* Whether some thread of this process has signal sig pending: SIGTRAP,
 * one that trapped on an int3 and was not given its signal yet (preempted
 * in between); a probe not answered yet.  True when it cannot tell. */
static bool sig_pending(int sig)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool pending = d == NULL;

	while (d && !pending && (e = readdir(d))) {
		char path[300], buf[2048], *p;
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		for (unsigned k = 0; k < 2; k++)
			if ((p = strstr(buf, k ? "\nShdPnd:" : "\nSigPnd:")) &&
			    (strtoull(p + 8, NULL, 16) & (1ull << (sig - 1))))
				pending = true;
	}
	if (d)
		closedir(d);
	return pending;
}

/* The probes' signal: the program's action again once none is on its way
 * (one pending keeps ours until the next call; one not answered, held by
 * a tracer maybe, for good). */
static void probes_end(void)
{
	struct sigaction cur;

	if (probe_sig && !probe_out && !sig_pending(probe_sig)) {
		if (sigaction(probe_sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == on_probe)
			sigaction(probe_sig, &prev_probe, NULL);
		probe_sig = 0;
	}
}

int agent_patch_live_end(void)
{
	struct sigaction cur;

	probes_end();
	if (!trap_installed)
		return 0;
	/* Every site is written back, and each core serialized since: a
	 * thread can trap on none of ours any more, but one that did may
	 * not have run its handler yet. */
	for (int i = 0; sig_pending(SIGTRAP); i++) {
		struct timespec ms = { 0, 1000000 };

		if (i == 100) {
			agent_dbg("FXT_PATCH: a thread has a SIGTRAP pending: the handler stays");
			return -EBUSY;
		}
		nanosleep(&ms, NULL);
	}
	/* The program's action again, unless it set one of its own since. */
	if (sigaction(SIGTRAP, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_trap)
		sigaction(SIGTRAP, &prev_trap, NULL);
	trap_installed = false;
	return 0;
}

#endif /* __x86_64__ */
