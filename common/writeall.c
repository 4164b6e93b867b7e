/* Writing a whole buffer to a file descriptor (writeall.h). */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "common/writeall.h"

int fxt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}
