/* Patching a running program (agent/patch/live.c) on hand-written x86-64
 * functions in pages of the test's own: the jump lands in the stub; a
 * thread that meets the int3 of an entry being patched is sent to the stub;
 * traps that are not at a patch site (or at one forgotten) go to the
 * program's own SIGTRAP handler; a write that fails leaves every byte as
 * it was; a thread calling a function while it is patched sees the old
 * function, then the stub, never anything else; a thread that stays
 * inside an entry's displaced instructions keeps them (the entry is left
 * unpatched); a thread that runs and blocks every signal, which cannot
 * be asked where it is, leaves every entry as it was. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/patch/patch.h"
#include "agent/cfg.h"
#include "tests/lib/tap.h"

struct agent_config agent_cfg; /* agent_dbg() reads it */

static uint8_t *page; /* the functions, read and execute */
static int mem = -1;  /* /proc/self/mem, to write them */

static void put(uint64_t at, const void *bytes, size_t n)
{
	if (pwrite(mem, bytes, n, (off_t)at) != (ssize_t)n)
		abort();
}

/* At `at`: `mov $v,%eax` (5 bytes) then `ret`, or a stub that does it. */
static void mov_ret(uint64_t at, int32_t v)
{
	uint8_t b[6] = { 0xb8, 0, 0, 0, 0, 0xc3 };
	memcpy(b + 1, &v, 4);
	put(at, b, sizeof(b));
}

static int call(uint64_t at)
{
	int (*fn)(void);
	*(void **)&fn = (void *)(uintptr_t)at;
	return fn();
}

static struct agent_patch_site site_of(uint64_t at, uint64_t stub)
{
	struct agent_patch_site s = { .site = at, .stub = stub, .len = 5 };
	memcpy(s.orig, (const void *)(uintptr_t)at, 5);
	return s;
}

static volatile sig_atomic_t theirs;
static void their_trap(int sig)
{
	(void)sig;
	theirs++;
}

/* A thread calling the function at `spin_at` until it returns 2. */
static uint64_t spin_at;
static void *spinner(void *arg)
{
	long n = 0;
	(void)arg;
	while (call(__atomic_load_n(&spin_at, __ATOMIC_ACQUIRE)) != 2)
		n++;
	return (void *)n;
}

/* A thread calling the function at `inside_at` with `inside_flag`: it
 * spins in the entry's displaced instructions until the flag is set. */
static uint64_t inside_at;
static volatile char inside_flag, inside_started;
static void *insider(void *arg)
{
	int (*fn)(volatile char *);
	(void)arg;
	*(void **)&fn = (void *)(uintptr_t)inside_at;
	inside_started = 1;
	return (void *)(long)fn(&inside_flag);
}

/* A thread that blocks every signal and spins (in its own code) until
 * set. */
static volatile char blocker_stop;
static void *blocker(void *arg)
{
	sigset_t all;
	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	inside_started = 1;
	while (!blocker_stop)
		;
	return NULL;
}

int main(void)
{
	plan(14);

	long pg = sysconf(_SC_PAGESIZE);
	page =
	    mmap(NULL, 4 * (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (page == MAP_FAILED || mem < 0) {
		skip(10, "no executable page, or no /proc/self/mem");
		return exit_status();
	}
	uint64_t base = (uint64_t)(uintptr_t)page;
	uint64_t f = base, stubs = base + (uint64_t)pg;

	/* The program's own handler, there before the agent's. */
	signal(SIGTRAP, their_trap);

	/* f returns 1; its stub returns 2. */
	mov_ret(f, 1);
	mov_ret(stubs, 2);
	struct agent_patch_site s = site_of(f, stubs);
	ok(call(f) == 1, "before: f returns 1");
	struct agent_live_sites *live;
	ok(agent_patch_live(&s, 1, &live) == 0 && live && page[0] == 0xe9 && call(f) == 2,
	   "patched: a jmp at the entry, to the stub");

	/* As a thread sees it between the first step and the last. */
	put(f, (const uint8_t[]){ 0xcc }, 1);
	ok(call(f) == 2 && theirs == 0, "an int3 at the site: the thread goes to the stub");

	/* Traps that are not the agent's go to the program's handler. */
	raise(SIGTRAP);
	ok(theirs == 1, "raise(SIGTRAP): the program's handler");
	uint64_t g = base + 64;
	put(g, (const uint8_t[]){ 0xcc }, 1);
	mov_ret(g + 1, 3);
	ok(call(g) == 3 && theirs == 2, "an int3 elsewhere: the program's handler, then on");

	/* Forgotten (its library unloaded): no longer the agent's. */
	agent_patch_live_forget(live);
	put(f, (const uint8_t[]){ 0xcc, 0x90, 0x90, 0x90, 0x90 }, 5);
	mov_ret(f + 5, 4);
	ok(call(f) == 4 && theirs == 3, "forgotten: its int3 is the program's");

	/* A write that fails (the second site is not mapped): nothing changes. */
	uint64_t h = base + 128;
	mov_ret(h, 1);
	uint8_t before[6];
	memcpy(before, page + 128, 6);
	munmap(page + 3 * pg, (size_t)pg);
	struct agent_patch_site two[2] = {
		site_of(h, stubs), { .site = base + 3 * (uint64_t)pg, .stub = stubs, .len = 5 }
	};
	struct agent_live_sites *none;
	int err = agent_patch_live(two, 2, &none);
	ok(err < 0 && !none && memcmp(before, page + 128, 6) == 0 && call(h) == 1,
	   "a site that cannot be written: an error (%d), the others as they were", err);

	/* Threads calling functions while they are patched, 100 times: each
	 * sees 1 until it sees 2, and never crashes. */
	int bad = 0;
	long calls = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t fn = base + 256 + 16 * (uint64_t)i, stub = stubs + 64 + 16 * (uint64_t)i;
		pthread_t t;
		void *n;
		mov_ret(fn, 1);
		mov_ret(stub, 2);
		__atomic_store_n(&spin_at, fn, __ATOMIC_RELEASE);
		if (pthread_create(&t, NULL, spinner, NULL) != 0)
			abort();
		usleep(100);
		struct agent_patch_site v = site_of(fn, stub);
		if (agent_patch_live(&v, 1, &live) != 0)
			bad++;
		pthread_join(t, &n);
		calls += (long)n;
	}
	ok(bad == 0, "100 functions patched while a thread called them (%ld calls before)", calls);
	ok(theirs == 3, "... no trap reached the program's handler");

	/* A thread inside an entry's displaced bytes (a nop, then
	 * `1: cmpb $0,(%rdi); je 1b`, 6 bytes), which it does not leave
	 * while patched: the entry is left as it was, and the thread goes on. */
	static const uint8_t spin[] = { 0x90, 0x80, 0x3f, 0x00, 0x74, 0xfb,   /* displaced */
					0xb8, 0x05, 0x00, 0x00, 0x00, 0xc3 }; /* mov $5; ret */
	uint64_t in = base + 2048, in_stub = stubs + 2048;
	put(in, spin, sizeof(spin));
	mov_ret(in_stub, 2);
	inside_at = in;
	pthread_t th;
	void *ret = NULL;
	if (pthread_create(&th, NULL, insider, NULL) != 0)
		abort();
	while (!inside_started)
		;
	usleep(2000);
	struct agent_patch_site sv = { .site = in, .stub = in_stub, .len = 6 };
	memcpy(sv.orig, spin, 6);
	err = agent_patch_live(&sv, 1, &live);
	inside_flag = 1;
	pthread_join(th, &ret);
	ok(err == 0 && memcmp(page + 2048, spin, sizeof(spin)) == 0 && (long)ret == 5,
	   "a thread inside the displaced bytes: the entry left as it was, the thread "
	   "returns (%d, %ld)",
	   err, (long)ret);

	/* A thread that runs and blocks every signal: nothing patched. */
	uint64_t b = base + 2112;
	mov_ret(b, 1);
	inside_started = 0;
	if (pthread_create(&th, NULL, blocker, NULL) != 0)
		abort();
	while (!inside_started)
		;
	struct agent_patch_site bv = site_of(b, stubs);
	err = agent_patch_live(&bv, 1, &none);
	blocker_stop = 1;
	pthread_join(th, NULL);
	ok(err == -EBUSY && !none && page[2112] == 0xb8 && call(b) == 1,
	   "a running thread that blocks every signal: -EBUSY, the entry as it was (%d)", err);
	ok(theirs == 3, "... and no probe reached the program's handler");
	struct sigaction rt;
	sigaction(SIGRTMAX, NULL, &rt);
	ok(!(rt.sa_flags & SA_SIGINFO) && rt.sa_handler == SIG_DFL,
	   "the probes' signal has its default action again");

	struct sigaction now;
	sigaction(SIGTRAP, NULL, &now);
	ok((now.sa_flags & SA_SIGINFO) && now.sa_sigaction != NULL,
	   "the agent's handler stays, for traps still on their way");
	return exit_status();
}
