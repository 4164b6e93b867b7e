/* The status file: where a traced process that converts its own spool
 * (fxt-run was closing, or gone) reports the archive it wrote, one line
 * each (FXT_STATUS_FD, run/settings.def), and fxt-run reads them back. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "run/names.h"

/* One line of FXT_STATUS_FD:
 *   fxtrace pid=PID events=N threads=N dropped=N bytes=N output=PATH
 * Only the pid and the path are used: the numbers of the summary are the
 * archive's own, read back from it (rare: only processes that converted
 * their own spool report), with its threads and process, which the
 * merged archive's counts need (launcher.h). */
struct status_line {
	long pid;
	char *output; /* points into the status buffer */
};

/* Opens the file the traced processes report to (FXT_STATUS_FD): a
 * nameless file in /tmp, in append mode so that the single write(2) of
 * each process lands whole.  Close-on-exec: the program does not inherit
 * it (it would see a descriptor it did not open, and its own files would
 * get other numbers); a process that reports opens it anew as
 * /proc/OURPID/fd/FD (agent/seal.c).  A file, not a pipe: nothing has to
 * drain it while the program runs.  Returns fd or -errno. */
int status_open(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	fd = open(tmp, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* Older kernels and some file systems lack O_TMPFILE. */
		snprintf(path, sizeof(path), "%s/fxt-run.XXXXXX", tmp);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd < 0)
			return -errno;
		unlink(path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_APPEND) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Reads the whole status file into a NUL-terminated buffer (malloc'd). */
static char *status_read(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	for (;;) {
		if (len + 1 == cap) {
			char *nb = realloc(buf, 2 * cap);
			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = pread(fd, buf + len, cap - 1 - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* Parses one report line in place.  Returns 0 or -EINVAL. */
static int status_parse(char *line, struct status_line *sl)
{
	static const char *const keys[] = { "pid=", "events=", "threads=", "dropped=", "bytes=" };
	uint64_t v[5];
	char *p = line, *end;

	memset(sl, 0, sizeof(*sl));
	if (strncmp(p, "fxtrace ", 8) != 0)
		return -EINVAL;
	p += 8;
	for (size_t i = 0; i < 5; i++) {
		size_t kl = strlen(keys[i]);
		if (strncmp(p, keys[i], kl) != 0)
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p + kl, &end, 10);
		if (errno != 0 || end == p + kl || *end != ' ')
			return -EINVAL;
		p = end + 1;
	}
	if (strncmp(p, "output=", 7) != 0 || p[7] == '\0')
		return -EINVAL;
	sl->pid = (long)v[0];
	sl->output = p + 7;
	return 0;
}

/* Adds the archive each process reported on the status file. */
void status_collect(struct parts *ps, const char *out, int status_fd, bool quiet)
{
	char *buf = status_read(status_fd);

	for (char *line = buf, *next; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		struct status_line sl;
		if (status_parse(line, &sl) != 0)
			continue;
		const char *slash = strrchr(sl.output, '/');
		long pid;
		unsigned image = 0;
		if (strcmp(sl.output, out) != 0 &&
		    !run_archive_parse(out, slash != NULL ? slash + 1 : sl.output, &pid, &image))
			image = UINT_MAX; /* not a name of ours: last of its pid */
		struct part *pt = parts_add(ps, sl.output, sl.pid, image);
		if (pt != NULL && !quiet) {
			archive_stats_free(&pt->st);
			archive_stats(sl.output, &pt->st);
		}
	}
	free(buf);
}
