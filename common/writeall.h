/* Writing a whole buffer to a file descriptor, through short writes and
 * EINTR: fxt-run's messages and attach files, the symbolizer's kept
 * source lines (symbolizer/loccache.c).  (A spool's chunks, at an offset,
 * are spool_write_all()'s, spool/stage.h.)
 */
#ifndef FXT_COMMON_WRITEALL_H
#define FXT_COMMON_WRITEALL_H

#include <stddef.h>

/* Writes all len bytes of buf to fd (again after EINTR or a short write):
 * 0, or -errno (-EIO for a write of nothing). */
int fxt_write_all(int fd, const void *buf, size_t len);

#endif /* FXT_COMMON_WRITEALL_H */
