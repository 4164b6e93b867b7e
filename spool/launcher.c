/* The launcher's control file (see launcher.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "spool/launcher.h"
#include "spool/names.h"

void launcher_ctl_path(char *buf, size_t cap, const char *output, long launcher_pid)
{
	run_pid_file_name(buf, cap, output, launcher_pid, RUN_CONTROL_SUFFIX);
}

int launcher_ctl_set(const char *path, enum launcher_state state)
{
	char c = (char)state;
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	do
		n = pwrite(fd, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

int launcher_ctl_get(const char *path)
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
	return c == LAUNCHER_OPEN ? LAUNCHER_OPEN : LAUNCHER_CLOSING;
}
