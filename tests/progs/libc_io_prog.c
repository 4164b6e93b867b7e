/* A program that exercises the io and sleep wrappers, for
 * tests/e2e/libc-io.sh.  Built without -finstrument-functions: it stands
 * for an unmodified program.  Usage: libc_io_prog MODE [ARGS...]; what
 * each mode does is exact, so that the test can count slices.
 *
 *   writes N FILE    N write()s of 10 bytes to FILE (created), then close
 *   errors DIR       open of DIR/missing (ENOENT), read of a closed fd
 *                    (EBADF), close of it again (EBADF); prints what
 *                    each returned with errno, the same with or without
 *                    the agent
 *   sleeps           usleep(1000), nanosleep 1 ms, clock_nanosleep 1 ms,
 *                    sched_yield, sleep(0)
 *   stdio FILE       fopen "w", fwrite 3 items of 4 bytes, fflush,
 *                    fclose, fopen "r", fread, fclose; prints the bytes
 *   pipe N           one thread: pipe, then N rounds of write 5 bytes /
 *                    read 5 bytes
 *   pipe-threads N   pipe; a second thread writes N times 6 bytes, the
 *                    main thread reads 6 bytes at a time until EOF
 *   pipe-fork N      pipe, fork: the parent writes N times 7 bytes, the
 *                    child reads until EOF and prints the byte count
 *   pair-fork N      the same over a socketpair
 *   reuse FILE       a pipe used once, both ends closed; FILE opened (it
 *                    gets the pipe's fd number) and written to; then a new
 *                    pipe's write end dup2()ed onto FILE's fd and written
 *                    to, read back from the read end
 *   tcp N            a listening socket on 127.0.0.1; a forked child
 *                    connects and sends N times 5 bytes; the parent
 *                    accepts and recv()s 5 bytes at a time until EOF
 *   produce N        N write()s of one 8-byte line to stdout
 *   consume          read()s stdin in 8-byte reads until EOF; prints
 *                    the byte count to stdout
 *   echo TEXT        write(1, TEXT\n), writev(2, "err: " TEXT "\n"),
 *                    fwrite(TEXT "\n") to stdout
 *   chk FILE N       calls that _FORTIFY_SOURCE turns into their checked
 *                    entry points (flags and sizes not constant): open,
 *                    read, pread, fread of N bytes of FILE; a socketpair,
 *                    send 3 bytes, recv N; poll of 1 fd, timeout 0
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	return 2;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0:
		return "0";
	case ENOENT:
		return "ENOENT";
	case EBADF:
		return "EBADF";
	default:
		return "other";
	}
}

static int do_writes(int n, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return die("open");
	for (int i = 0; i < n; i++)
		if (write(fd, "0123456789", 10) != 10)
			return die("write");
	return close(fd) ? die("close") : 0;
}

static int do_errors(const char *dir)
{
	char path[4096];
	int fd, r;
	char c;

	snprintf(path, sizeof(path), "%s/missing", dir);
	errno = 0;
	fd = open(path, O_RDONLY);
	printf("open %d %s\n", fd, err_name(errno));
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || close(fd) != 0)
		return die("/dev/null");
	errno = 0;
	r = (int)read(fd, &c, 1);
	printf("read %d %s\n", r, err_name(errno));
	errno = 0;
	r = close(fd);
	printf("close %d %s\n", r, err_name(errno));
	return 0;
}

static int do_sleeps(void)
{
	struct timespec ms = { 0, 1000000 };

	if (usleep(1000) || nanosleep(&ms, NULL) ||
	    clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL) || sched_yield() || sleep(0))
		return die("sleep");
	return 0;
}

static int do_stdio(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "w");
	size_t n;

	if (!f || fwrite("abcdefghijkl", 4, 3, f) != 3 || fflush(f) || fclose(f))
		return die("fopen w");
	f = fopen(path, "r");
	if (!f)
		return die("fopen r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	printf("%zu %s\n", n, buf);
	return 0;
}

static int do_pipe(int n)
{
	int fds[2];
	char buf[8];

	if (pipe(fds))
		return die("pipe");
	for (int i = 0; i < n; i++)
		if (write(fds[1], "hello", 5) != 5 || read(fds[0], buf, sizeof(buf)) != 5)
			return die("pipe io");
	close(fds[0]);
	close(fds[1]);
	return 0;
}

struct writer {
	int fd, n;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (int i = 0; i < w->n; i++)
		if (write(w->fd, "thread", 6) != 6)
			return arg;
	close(w->fd);
	return NULL;
}

static int do_pipe_threads(int n)
{
	struct writer w;
	pthread_t th;
	char buf[6];
	long total = 0;
	ssize_t r;
	void *ret;
	int fds[2];

	if (pipe(fds))
		return die("pipe");
	w.fd = fds[1];
	w.n = n;
	if (pthread_create(&th, NULL, writer_main, &w))
		return die("pthread_create");
	while ((r = read(fds[0], buf, sizeof(buf))) > 0)
		total += r;
	if (pthread_join(th, &ret) || ret)
		return die("writer");
	printf("main read %ld\n", total);
	return r < 0;
}

/* Parent writes n times 7 bytes into fds[1]; the child reads fds[0]. */
static int fork_pair(int fds[2], int n)
{
	char buf[64];
	long total = 0;
	ssize_t r;
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		close(fds[1]);
		while ((r = read(fds[0], buf, 7)) > 0)
			total += r;
		printf("child read %ld\n", total);
		fflush(stdout);
		exit(r < 0);
	}
	close(fds[0]);
	for (int i = 0; i < n; i++)
		if (write(fds[1], "abcdefg", 7) != 7)
			return die("write");
	close(fds[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return die("child");
	return 0;
}

static int do_reuse(const char *path)
{
	int fds[2], fd;
	char buf[8];

	if (pipe(fds) || write(fds[1], "pipe", 4) != 4 || read(fds[0], buf, 4) != 4)
		return die("pipe");
	close(fds[0]);
	close(fds[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != fds[0])
		return die("fd reuse");
	if (write(fd, "file", 4) != 4 || pipe(fds))
		return die("file");
	if (dup2(fds[1], fd) != fd || write(fd, "dup2", 4) != 4 || read(fds[0], buf, 4) != 4)
		return die("dup2");
	return 0;
}

static int do_tcp(int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char buf[5];
	long total = 0;
	int ls, c, status;
	ssize_t r;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &len))
		return die("listen");
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		close(ls);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
			exit(1);
		for (int i = 0; i < n; i++)
			if (send(c, "hello", 5, 0) != 5)
				exit(1);
		exit(close(c) != 0);
	}
	c = accept(ls, NULL, NULL);
	if (c < 0)
		return die("accept");
	while ((r = recv(c, buf, sizeof(buf), 0)) > 0)
		total += r;
	close(c);
	close(ls);
	if (r < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return die("tcp");
	printf("received %ld\n", total);
	return 0;
}

static int do_produce(int n)
{
	for (int i = 0; i < n; i++)
		if (write(1, "line %d\n", 8) != 8)
			return die("write");
	return 0;
}

static int do_consume(void)
{
	char buf[8];
	long total = 0;
	ssize_t r;

	while ((r = read(0, buf, sizeof(buf))) > 0)
		total += r;
	if (r < 0)
		return die("read");
	printf("consumed %ld\n", total);
	return 0;
}

static int do_echo(const char *text)
{
	static char prefix[] = "err: ", nl[] = "\n";
	char line[256];
	struct iovec iov[3] = { { prefix, 5 }, { (void *)text, strlen(text) }, { nl, 1 } };
	int n = snprintf(line, sizeof(line), "%s\n", text);

	if (write(1, line, (size_t)n) != n || writev(2, iov, 3) < 0 ||
	    fwrite(line, 1, (size_t)n, stdout) != (size_t)n)
		return die("echo");
	return 0;
}

static int do_chk(const char *path, size_t n)
{
	volatile int flags = O_RDONLY;
	volatile nfds_t nfds = 1;
	volatile size_t vn;
	struct pollfd pfd[1] = { { 0, POLLIN, 0 } };
	char buf[16];
	int fd, sv[2];
	FILE *f;

	if (n > sizeof(buf))
		return 2;
	/* Hidden from the compiler: a size it cannot check at build time. */
	vn = n;
	n = vn;
	fd = open(path, flags);
	if (fd < 0)
		return die("open");
	if (read(fd, buf, n) != (ssize_t)n || pread(fd, buf, n, 0) != (ssize_t)n)
		return die("read");
	f = fdopen(fd, "r");
	if (!f || fread(buf, 1, n, f) != n || fclose(f))
		return die("fread");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || send(sv[0], "abc", 3, 0) != 3 ||
	    recv(sv[1], buf, n, 0) != 3)
		return die("socketpair");
	pfd[0].fd = sv[1];
	if (poll(pfd, nfds, 0) != 0)
		return die("poll");
	close(sv[0]);
	close(sv[1]);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	int fds[2];

	if (!strcmp(mode, "writes") && argc == 4)
		return do_writes(n, argv[3]);
	if (!strcmp(mode, "errors") && argc == 3)
		return do_errors(argv[2]);
	if (!strcmp(mode, "sleeps"))
		return do_sleeps();
	if (!strcmp(mode, "stdio") && argc == 3)
		return do_stdio(argv[2]);
	if (!strcmp(mode, "pipe"))
		return do_pipe(n);
	if (!strcmp(mode, "pipe-threads"))
		return do_pipe_threads(n);
	if (!strcmp(mode, "pipe-fork"))
		return pipe(fds) ? die("pipe") : fork_pair(fds, n);
	if (!strcmp(mode, "pair-fork"))
		return socketpair(AF_UNIX, SOCK_STREAM, 0, fds) ? die("socketpair")
								: fork_pair(fds, n);
	if (!strcmp(mode, "reuse") && argc == 3)
		return do_reuse(argv[2]);
	if (!strcmp(mode, "tcp"))
		return do_tcp(n);
	if (!strcmp(mode, "produce"))
		return do_produce(n);
	if (!strcmp(mode, "consume"))
		return do_consume();
	if (!strcmp(mode, "echo") && argc == 3)
		return do_echo(argv[2]);
	if (!strcmp(mode, "chk") && argc == 4)
		return do_chk(argv[2], (size_t)atoi(argv[3]));
	fprintf(stderr, "usage: libc_io_prog MODE [ARGS...]\n");
	return 2;
}
