/* A program for the attach tests (attach-*.sh): it does what a
 * process being attached to may be doing, and says what it saw.
 *
 *   attach_target [--spin|--serve] [--timer] [--usr1] [--reader] [--busy N] [--workers N]
 *                 [--zombie] [--prof] [--block-prof] [--block-segv] [--exit-on-start]
 *
 * Prints "ready" once set up, then:
 *   - main reads a line from standard input (blocked in read(2)), unless
 *     --spin: then it computes in its own code until the file named by
 *     $ATTACH_TARGET_STOP exists;
 *   - --serve: main reads lines until the end of its input, and for each
 *     "call N" calls work() N times and says "done N" (calls an attach
 *     can count exactly: it knows which lines came while it recorded);
 *     "threads N" starts N threads that spin in spin() for 200 ms each,
 *     joins them and says "joined N";
 *     "churn N": N threads, four at a time, each calling work() 20000
 *     times and ending, joined; says "churned N" (threads that end while
 *     sampled, each with a buffer of its calls to let go of);
 *     "spawn N": a child calls work() N times, says "child N" and waits;
 *     "reap": that child calls work() N times more and exits, and main
 *     says "reaped STATUS"; "forkexec PROG ARG": a child calls work() 5
 *     times and runs PROG ARG, main says "execed PID" and never waits for
 *     it; "trap": whether SIGTRAP's action is main's own handler ("trap:
 *     own", else "trap: other");
 *     "io N" opens /dev/null, writes 8 bytes to it N times with write(2),
 *     closes it and says "done io N" (C library calls to count);
 *     "thread N" does the same in a new thread, joined ("done thread N");
 *     "fork N" does the same in a child it forks and waits for ("done fork
 *     N" when the child exited 0);
 *     "dlopen LIB FILE" loads LIB and calls its probe(FILE) (the library
 *     tests/progs/inject_probe.c), and says "done dlopen";
 *     "exec PATH" runs PATH (no arguments) in its place, with execv(3);
 *   - --zombie: a child that exits at once and is never waited for ("zombie
 *     PID" printed before "ready");
 *   - --reader: a second thread blocks in read(2) on a pipe that main
 *     writes "data" to once its own read returned;
 *   - --timer: SIGALRM every millisecond (SA_RESTART), counted;
 *   - --usr1: each --workers thread gets SIGUSR1 every millisecond, sent
 *     to it alone (a timer of its own, SIGEV_THREAD_ID), and the longest
 *     time between two of them on a worker while the agent starts an
 *     attach (a thread named "fxt-starter" is there) is said at the end
 *     ("usr1 gap: N ms"): a thread whose signals were held meanwhile
 *     (blocked) shows;
 *   - --workers N: N threads call work() (a function patched and
 *     unpatched under them) until main is done, and "workers: N" is said
 *     if each called it and its results are right;
 *   - --busy N: N threads allocate, free and print into memory (the C
 *     library's locks taken all the time) until main is done;
 *   - --prof: its own SIGPROF handler, and ITIMER_PROF every millisecond
 *     of CPU time, counted;
 *   - --block-prof: the --busy threads block SIGPROF;
 *   - --block-segv: main blocks SIGSEGV (a thread no call can be made
 *     in: with no other thread, nothing for fxt-run -p to borrow);
 *   - --exit-on-start: a thread watches the process's threads and, as
 *     soon as one is named "fxt-starter" (the agent starting an attach)
 *     or "fxt-watchdog" (started last by the start), exits the process
 *     with exit(5): a process that ends while the agent starts;
 * and its own SIGSEGV and SIGTRAP handlers say "handler" and exit 3: an
 * injected call's return (a fault at address 0) must never reach them.
 * A read(2) that fails (EINTR included) is said and exits 4.  At the end:
 * "read: LINE", "reader: data", "alarms: yes", "profs: yes" as they apply
 * (and, with $ATTACH_TARGET_COUNT set, "spins: N", the calls of spin());
 * exit 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static volatile int done;
static volatile sig_atomic_t alarms, profs;
static int do_usr1;
static long usr1_gap_max;		  /* ns, the longest of any worker */
static __thread long usr1_last, usr1_gap; /* ns, this worker's */
static int block_prof;

static void on_fault(int sig)
{
	static const char msg[] = "handler\n";

	(void)sig;
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(3);
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void on_prof(int sig)
{
	(void)sig;
	profs++;
}

/* read(2) until a newline or the end, failing loudly on any error. */
static size_t read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, 1);

		if (r < 0) {
			printf("read failed: %s\n", strerror(errno));
			fflush(stdout);
			_exit(4);
		}
		if (r == 0 || buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return n;
}

static void *reader(void *arg)
{
	char buf[64];

	(void)arg;
	read_line(pipefd[0], buf, sizeof(buf));
	printf("reader: %s\n", buf);
	return NULL;
}

/* Whether a thread named `name` ("fxt-starter\n": the agent starting an
 * attach) is there. */
static bool thread_there(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool there = false;

	while (d && !there && (e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		fd = open(path, O_RDONLY);
		if (fd >= 0 && read(fd, comm, sizeof(comm) - 1) > 0 && strcmp(comm, name) == 0)
			there = true;
		if (fd >= 0)
			close(fd);
	}
	if (d)
		closedir(d);
	return there;
}

/* --exit-on-start: exit(5) once a thread named "fxt-starter" is there,
 * looked for without a pause; or "fxt-watchdog", which the starter starts
 * last: on a loaded machine this thread may not run at all while the
 * starter lives, and the process, missing it, would run on and not end
 * (attach-ended.sh failed so 3 runs in 12 under load). */
static void *exit_on_start(void *arg)
{
	(void)arg;
	for (;;)
		if (thread_there("fxt-starter\n") || thread_there("fxt-watchdog\n"))
			exit(5);
	return NULL;
}

/* --usr1: whether the agent starts an attach, looked at every millisecond. */
static volatile sig_atomic_t starting;

static void *watch_start(void *arg)
{
	(void)arg;
	while (!done) {
		starting = thread_there("fxt-starter\n");
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return NULL;
}

static void *busy(void *arg)
{
	unsigned long n = 0;
	char line[64];

	(void)arg;
	if (block_prof) {
		sigset_t prof;

		sigemptyset(&prof);
		sigaddset(&prof, SIGPROF);
		pthread_sigmask(SIG_BLOCK, &prof, NULL);
	}
	while (!done) {
		char *p = malloc(16 + n % 4000);

		snprintf(line, sizeof(line), "%lu", n++);
		if (p)
			p[0] = line[0];
		free(p);
	}
	return (void *)n;
}

/* Work in the program's own code, kept out of line (a function to patch)
 * and not folded away: its calls are counted. */
static volatile unsigned long spins;

__attribute__((noinline, noipa)) unsigned long spin(unsigned long x);
__attribute__((noinline, noipa)) unsigned long spin(unsigned long x)
{
	unsigned i;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	spins++;
	return x;
}

/* The threads of "threads N": 200 ms of spin() each. */
static void *spinner(void *arg)
{
	struct timespec t0, now;
	unsigned long x = 1;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = spin(x);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000000000L + now.tv_nsec - t0.tv_nsec < 200000000L);
	return (void *)x;
}

/* The function --serve calls on demand. */
__attribute__((noinline, noipa)) unsigned long work(unsigned long x);
__attribute__((noinline, noipa)) unsigned long work(unsigned long x)
{
	return x * 2654435761ul + 1;
}

/* The threads of "churn N": calls of work(), then the end. */
static void *churner(void *arg)
{
	unsigned long x = 1, i;

	(void)arg;
	for (i = 0; i < 20000; i++)
		x = work(x);
	return (void *)x;
}

/* "spawn N": the child, which works N times, waits for a byte on `go`,
 * and works N times more. */
static void spawned(unsigned long n, int go)
{
	unsigned long x = 0, i;
	char c;

	for (i = 0; i < n; i++)
		x = work(x);
	printf("child %lu\n", n);
	fflush(stdout);
	(void)!read(go, &c, 1);
	for (i = 0; i < n; i++)
		x = work(x);
	_exit(x ? 0 : 1);
}

/* N writes of 8 bytes to /dev/null: how many were made. */
static unsigned long null_writes(unsigned long n)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	unsigned long i;

	for (i = 0; fd >= 0 && i < n; i++)
		if (write(fd, "fxtrace\n", 8) != 8)
			break;
	if (fd >= 0)
		close(fd);
	return i;
}

static void *null_writer(void *arg)
{
	unsigned long *n = arg;

	*n = null_writes(*n);
	return NULL;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* --usr1: the time since the worker's last SIGUSR1, counted when the
 * agent started an attach at either of the two. */
static __thread bool usr1_last_starting;

static void on_usr1(int sig)
{
	long t = now_ns();
	bool st = starting;

	(void)sig;
	if (usr1_last && (st || usr1_last_starting) && t - usr1_last > usr1_gap)
		usr1_gap = t - usr1_last;
	usr1_last = t;
	usr1_last_starting = st;
}

/* --workers: work() in a loop, its results checked against the same
 * computation inline (a call gone wrong through a patch would show). */
static void *worker(void *arg)
{
	unsigned long x = 1, y = 1, n = 0;
	struct sigevent se = { 0 };
	timer_t tm;
	bool timer = false;

	(void)arg;
	if (do_usr1) {
		se.sigev_notify = SIGEV_THREAD_ID;
		se.sigev_signo = SIGUSR1;
		se._sigev_un._tid = gettid();
		timer = timer_create(CLOCK_MONOTONIC, &se, &tm) == 0 &&
			timer_settime(tm, 0, &(struct itimerspec){ { 0, 1000000 }, { 0, 1000000 } },
				      NULL) == 0;
		if (!timer)
			return NULL;
	}
	while (!done) {
		x = work(x);
		y = y * 2654435761ul + 1;
		if (x != y)
			return NULL;
		/* A breath now and then: 64 of them must not starve the
		 * machine's other work (tests run side by side). */
		if (++n % 20000 == 0)
			usleep(1000);
	}
	if (timer) {
		timer_delete(tm);
		for (long m = __atomic_load_n(&usr1_gap_max, __ATOMIC_RELAXED);
		     usr1_gap > m &&
		     !__atomic_compare_exchange_n(&usr1_gap_max, &m, usr1_gap, false,
						  __ATOMIC_RELAXED, __ATOMIC_RELAXED);)
			;
	}
	return (void *)n;
}

static void serve(void)
{
	char buf[4096], prog[128], arg[128];
	unsigned long x = 0;
	pid_t child = -1;
	int go[2] = { -1, -1 };

	while (read_line(0, buf, sizeof(buf)) > 0) {
		unsigned long n = 0, i;

		if (sscanf(buf, "spawn %lu", &n) == 1 && child < 0 && pipe(go) == 0) {
			fflush(stdout);
			child = fork();
			if (child == 0) {
				close(go[1]);
				spawned(n, go[0]);
			}
			close(go[0]);
			continue; /* the child says it worked */
		}
		if (strcmp(buf, "reap") == 0 && child > 0) {
			int st = 0;

			(void)!write(go[1], "x", 1);
			close(go[1]);
			waitpid(child, &st, 0);
			child = -1;
			printf("reaped %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "forkexec %127s %127s", prog, arg) == 2) {
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				for (i = 0; i < 5; i++)
					x = work(x);
				execlp(prog, prog, arg, (char *)NULL);
				_exit(127);
			}
			printf("execed %d\n", (int)pid);
			fflush(stdout);
			continue;
		}
		if (strcmp(buf, "trap") == 0) {
			struct sigaction sa;

			sigaction(SIGTRAP, NULL, &sa);
			printf("trap: %s\n", sa.sa_handler == on_fault ? "own" : "other");
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "fork %lu", &n) == 1) {
			int status = -1;
			pid_t pid = fork();

			if (pid == 0)
				_exit(null_writes(n) == n ? 0 : 1);
			if (pid > 0)
				waitpid(pid, &status, 0);
			printf("%s %lu\n", status == 0 ? "done fork" : "fork failed", n);
			fflush(stdout);
			continue;
		}
		if (strncmp(buf, "dlopen ", 7) == 0) {
			char *file = strchr(buf + 7, ' ');
			void *h;
			long (*probe)(const char *);

			if (file)
				*file++ = '\0';
			h = file ? dlopen(buf + 7, RTLD_NOW) : NULL;
			*(void **)&probe = h ? dlsym(h, "probe") : NULL;
			printf("%s\n", probe && probe(file) > 0 ? "done dlopen" : "dlopen failed");
			fflush(stdout);
			continue;
		}
		if (strncmp(buf, "exec ", 5) == 0) {
			char *const args[] = { buf + 5, NULL };

			fflush(stdout);
			execv(buf + 5, args);
			printf("exec failed: %s\n", strerror(errno));
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "io %lu", &n) == 1) {
			printf("done io %lu\n", null_writes(n));
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "thread %lu", &n) == 1) {
			pthread_t th;

			if (pthread_create(&th, NULL, null_writer, &n) == 0)
				pthread_join(th, NULL);
			printf("done thread %lu\n", n);
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "churn %lu", &n) == 1) {
			pthread_t th[4];
			unsigned long k, m;

			for (i = 0; i < n; i += m) {
				m = n - i < 4 ? n - i : 4;
				for (k = 0; k < m; k++)
					if (pthread_create(&th[k], NULL, churner, NULL) != 0)
						exit(1);
				for (k = 0; k < m; k++)
					pthread_join(th[k], NULL);
			}
			printf("churned %lu\n", n);
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "threads %lu", &n) == 1) {
			pthread_t th[16];

			n %= 17;
			for (i = 0; i < n; i++)
				if (pthread_create(&th[i], NULL, spinner, NULL) != 0)
					exit(1);
			for (i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			printf("joined %lu\n", n);
			fflush(stdout);
			continue;
		}
		if (sscanf(buf, "call %lu", &n) != 1)
			continue;
		for (i = 0; i < n; i++)
			x = work(x);
		printf("done %lu\n", n);
		fflush(stdout);
	}
	printf("served: %s\n", x ? "yes" : "nothing");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	int i, do_spin = 0, do_serve = 0, do_timer = 0, do_reader = 0, do_zombie = 0, nbusy = 0,
	       nworkers = 0, good = 0;
	int do_prof = 0, block_segv = 0;
	pthread_t th, busy_th[64], worker_th[64];
	char buf[64];

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--spin") == 0)
			do_spin = 1;
		else if (strcmp(argv[i], "--serve") == 0)
			do_serve = 1;
		else if (strcmp(argv[i], "--zombie") == 0)
			do_zombie = 1;
		else if (strcmp(argv[i], "--timer") == 0)
			do_timer = 1;
		else if (strcmp(argv[i], "--usr1") == 0)
			do_usr1 = 1;
		else if (strcmp(argv[i], "--reader") == 0)
			do_reader = 1;
		else if (strcmp(argv[i], "--prof") == 0)
			do_prof = 1;
		else if (strcmp(argv[i], "--block-prof") == 0)
			block_prof = 1;
		else if (strcmp(argv[i], "--block-segv") == 0)
			block_segv = 1;
		else if (strcmp(argv[i], "--exit-on-start") == 0) {
			if (pthread_create(&th, NULL, exit_on_start, NULL) != 0)
				return 1;
		} else if (strcmp(argv[i], "--busy") == 0 && i + 1 < argc)
			nbusy = atoi(argv[++i]) % 65;
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			nworkers = atoi(argv[++i]) % 65;
		else {
			fprintf(
			    stderr,
			    "usage: %s [--spin|--serve] [--timer] [--usr1] [--reader] [--busy N] "
			    "[--workers N] [--zombie] [--prof] [--block-prof] "
			    "[--block-segv] [--exit-on-start]\n",
			    argv[0]);
			return 2;
		}
	}
	sa.sa_handler = on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	if (do_timer) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	if (do_prof) {
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPROF, &sa, NULL);
		setitimer(ITIMER_PROF, &it, NULL);
	}
	if (do_reader && (pipe(pipefd) != 0 || pthread_create(&th, NULL, reader, NULL) != 0))
		return 1;
	for (i = 0; i < nbusy; i++)
		if (pthread_create(&busy_th[i], NULL, busy, NULL) != 0)
			return 1;
	if (do_usr1) {
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
		if (pthread_create(&th, NULL, watch_start, NULL) != 0)
			return 1;
	}
	for (i = 0; i < nworkers; i++)
		if (pthread_create(&worker_th[i], NULL, worker, NULL) != 0)
			return 1;
	if (do_zombie) {
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		printf("zombie %d\n", (int)child);
	}
	if (block_segv) {
		sigset_t segv;

		sigemptyset(&segv);
		sigaddset(&segv, SIGSEGV);
		pthread_sigmask(SIG_BLOCK, &segv, NULL);
	}
	printf("ready\n");
	fflush(stdout);
	if (do_spin) {
		const char *stop = getenv("ATTACH_TARGET_STOP");
		unsigned long x = 1;

		while (!stop || access(stop, F_OK) != 0)
			x = spin(x);
		printf("spun: %s\n", x || spins ? "yes" : "no");
		if (getenv("ATTACH_TARGET_COUNT"))
			printf("spins: %lu\n", spins);
	} else if (do_serve) {
		serve();
	} else {
		read_line(0, buf, sizeof(buf));
		printf("read: %s\n", buf);
	}
	fflush(stdout);
	if (do_reader) {
		(void)!write(pipefd[1], "data\n", 5);
		pthread_join(th, NULL);
	}
	done = 1;
	for (i = 0; i < nbusy; i++) {
		void *n;

		pthread_join(busy_th[i], &n);
		if (!n)
			printf("busy thread %d did nothing\n", i);
	}
	if (nbusy)
		printf("busy: %d\n", nbusy);
	for (i = 0; i < nworkers; i++) {
		void *n;

		pthread_join(worker_th[i], &n);
		good += n != NULL;
	}
	if (nworkers)
		printf("workers: %d\n", good);
	if (do_usr1)
		printf("usr1 gap: %ld ms\n", usr1_gap_max / 1000000);
	if (do_timer) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_REAL, &off, NULL);
		printf("alarms: %s\n", alarms > 0 ? "yes" : "no");
	}
	if (do_prof) {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };

		setitimer(ITIMER_PROF, &off, NULL);
		printf("profs: %s\n", profs > 0 ? "yes" : "no");
	}
	return 0;
}
