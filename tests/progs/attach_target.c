/* A program for the attach tests (attach-*.sh): it does what a
 * process being attached to may be doing, and says what it saw.
 *
 *   attach_target [--spin|--serve] [--timer] [--reader] [--busy N] [--zombie]
 *                 [--prof] [--block-prof]
 *
 * Prints "ready" once set up, then:
 *   - main reads a line from standard input (blocked in read(2)), unless
 *     --spin: then it computes in its own code until the file named by
 *     $ATTACH_TARGET_STOP exists;
 *   - --serve: main reads lines until the end of its input, and for each
 *     "call N" calls work() N times and says "done N" (calls an attach
 *     can count exactly: it knows which lines came while it recorded),
 *     and for each "threads N" starts N threads that spin in spin() for
 *     200 ms each, joins them and says "joined N";
 *   - --zombie: a child that exits at once and is never waited for ("zombie
 *     PID" printed before "ready");
 *   - --reader: a second thread blocks in read(2) on a pipe that main
 *     writes "data" to once its own read returned;
 *   - --timer: SIGALRM every millisecond (SA_RESTART), counted;
 *   - --busy N: N threads allocate, free and print into memory (the C
 *     library's locks taken all the time) until main is done;
 *   - --prof: its own SIGPROF handler, and ITIMER_PROF every millisecond
 *     of CPU time, counted;
 *   - --block-prof: the --busy threads block SIGPROF;
 * and its own SIGSEGV and SIGTRAP handlers say "handler" and exit 3: an
 * injected call's return (a fault at address 0) must never reach them.
 * A read(2) that fails (EINTR included) is said and exits 4.  At the end:
 * "read: LINE", "reader: data", "alarms: yes", "profs: yes" as they apply
 * (and, with $ATTACH_TARGET_COUNT set, "spins: N", the calls of spin());
 * exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int pipefd[2];
static volatile int done;
static volatile sig_atomic_t alarms, profs;
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

static void serve(void)
{
	char buf[64];
	unsigned long x = 0;

	while (read_line(0, buf, sizeof(buf)) > 0) {
		unsigned long n = 0, i;

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
	int i, do_spin = 0, do_serve = 0, do_timer = 0, do_reader = 0, do_zombie = 0, nbusy = 0;
	int do_prof = 0;
	pthread_t th, busy_th[64];
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
		else if (strcmp(argv[i], "--reader") == 0)
			do_reader = 1;
		else if (strcmp(argv[i], "--prof") == 0)
			do_prof = 1;
		else if (strcmp(argv[i], "--block-prof") == 0)
			block_prof = 1;
		else if (strcmp(argv[i], "--busy") == 0 && i + 1 < argc)
			nbusy = atoi(argv[++i]) % 65;
		else {
			fprintf(stderr,
				"usage: %s [--spin|--serve] [--timer] [--reader] [--busy N] "
				"[--zombie] [--prof] [--block-prof]\n",
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
	if (do_zombie) {
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		printf("zombie %d\n", (int)child);
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
