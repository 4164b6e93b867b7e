/* Writing into a batch (struct convert_batch, convert.h): convert_spool()'s
 * side.  Private to convert/. */
#ifndef FXT_CONVERT_BATCH_H
#define FXT_CONVERT_BATCH_H

#include <stddef.h>
#include <stdint.h>

struct convert_batch;

/* Writes a whole archive's bytes (`data`, as the converter wrote them:
 * starting with the batch's head) after the batch's end, and sets *end to
 * where they end in it; not committed yet.  0, -EINVAL (not an archive
 * that starts as the batch's does), or -errno (the batch is cut back). */
int convert_batch_append(struct convert_batch *b, const void *data, size_t len, uint64_t *end);

/* The archive written up to `end`, of process `pid`'s image `image`, is
 * whole: the batch's length (and its copy that outlives fxt-run) moves
 * there.  After a convert_batch_append() that returned 0. */
void convert_batch_commit(struct convert_batch *b, uint64_t end, uint32_t pid, uint32_t image);

#endif /* FXT_CONVERT_BATCH_H */
