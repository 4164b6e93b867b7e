/* The launcher's control file (see launcher.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run/control.h"
#include "run/names.h"

void run_ctl_path(char *buf, size_t cap, const char *output, long launcher_pid)
{
	run_pid_file_name(buf, cap, output, launcher_pid, RUN_CONTROL_SUFFIX);
}

int run_ctl_set(const char *path, enum run_ctl_state state)
{
	char c = (char)state;
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	struct stat st;

	if (fd < 0)
		return -errno;
	/* Room for the doorbell (a mapping past the end would fault). */
	if (fstat(fd, &st) == 0 && st.st_size < (off_t)RUN_CTL_SIZE &&
	    ftruncate(fd, RUN_CTL_SIZE) != 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	do
		n = pwrite(fd, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

int run_ctl_get(const char *path)
{
	char c = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	do
		n = pread(fd, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != 1)
		return n < 0 ? -errno : -EIO;
	return c == RUN_CTL_OPEN ? RUN_CTL_OPEN : RUN_CTL_CLOSING;
}

struct run_bell *run_bell_map(const char *path)
{
	struct stat st;
	void *p = MAP_FAILED;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)RUN_CTL_SIZE)
		p = mmap(NULL, RUN_CTL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : (struct run_bell *)((char *)p + RUN_BELL_OFF);
}

void run_bell_ring(struct run_bell *b)
{
	__atomic_add_fetch(&b->word, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &b->word, FUTEX_WAKE, 1, NULL, NULL, 0);
}
