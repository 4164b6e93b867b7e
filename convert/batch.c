/* A batch: many processes' archives in one file (see convert.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "convert/batch.h"
#include "convert/convert.h"

/* Writes all len bytes at off: 0 or -errno. */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* What every archive the converter writes starts with, as the writer
 * writes it: the magic record and the mark of time order (conv_archive()). */
static int batch_head(void **data, size_t *len)
{
	struct fxt_writer *w;
	const void *d;
	int err = fxt_writer_open_mem(&w, 0);

	if (err < 0)
		return err;
	err = fxt_writer_magic(w);
	if (!err)
		err = fxt_writer_time_ordered(w);
	if (!err)
		err = fxt_writer_flush(w);
	d = fxt_writer_mem_data(w, len);
	*data = !err && d ? malloc(*len) : NULL;
	if (!err && !*data)
		err = -ENOMEM;
	if (!err)
		memcpy(*data, d, *len);
	fxt_writer_free(w);
	return err;
}

int convert_batch_open(struct convert_batch *b, const char *path, uint64_t *committed)
{
	char *tmp = NULL;
	struct stat sb;
	void *head = NULL;
	size_t len = 0;
	int err;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	err = batch_head(&head, &len);
	if (!err)
		err = convert_partial_name(path, &tmp);
	if (err < 0)
		goto fail;
	/* Its head written under the partial name, then named: a batch is an
	 * archive from the start (a killed fxt-run leaves no empty one). */
	unlink(tmp); /* a stale one, from a creation killed halfway */
	b->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (b->fd < 0 || fstat(b->fd, &sb) != 0) {
		err = -errno;
		goto fail;
	}
	err = pwrite_all(b->fd, head, len, 0);
	if (!err && link(tmp, path) != 0)
		err = -errno;
	unlink(tmp);
	if (err < 0)
		goto fail;
	b->ino = (uint64_t)sb.st_ino;
	b->head = head;
	b->prefix = len;
	b->len = len;
	b->committed = committed;
	if (committed)
		__atomic_store_n(committed, b->len, __ATOMIC_RELEASE);
	free(tmp);
	return 0;
fail:
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free(head);
	free(tmp);
	return err;
}

bool convert_batch_has(const struct convert_batch *b, uint32_t pid)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].pid == pid)
			return true;
	return false;
}

void convert_batch_close(struct convert_batch *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free(b->head);
	free(b->v);
	b->head = NULL;
	b->v = NULL;
	b->n = b->cap = 0;
}

int convert_batch_append(struct convert_batch *b, const void *data, size_t len, uint64_t *end)
{
	int err;

	if (len <= b->prefix || memcmp(data, b->head, b->prefix) != 0)
		return -EINVAL;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct convert_batch_member *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	err = pwrite_all(b->fd, (const char *)data + b->prefix, len - b->prefix, b->len);
	if (err < 0) {
		/* Nothing of it stays: the batch ends where it did. */
		if (ftruncate(b->fd, (off_t)b->len) != 0)
			return -errno;
		return err;
	}
	*end = b->len + (len - b->prefix);
	return 0;
}

void convert_batch_commit(struct convert_batch *b, uint64_t end, uint32_t pid, uint32_t image)
{
	/* Room made by convert_batch_append(). */
	b->v[b->n++] = (struct convert_batch_member){ pid, image, b->len, end };
	b->len = end;
	if (b->committed)
		__atomic_store_n(b->committed, end, __ATOMIC_RELEASE);
}

int convert_batch_settle(const char *path, uint64_t committed)
{
	struct stat sb;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) != 0)
		err = -errno;
	else if (committed != 0 && (uint64_t)sb.st_size > committed &&
		 ftruncate(fd, (off_t)committed) != 0)
		err = -errno;
	close(fd);
	return err;
}

int convert_batch_read(const char *path, uint32_t image, struct convert_batch_member **out,
		       size_t *n)
{
	struct convert_batch_member *v = NULL;
	struct fxt_reader *r;
	struct fxt_record rec;
	size_t cap = 0, k = 0;
	uint64_t end = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	err = fxt_reader_open_path(&r, path, FXT_READER_RAW);
	if (err < 0)
		return err;
	/* Up to its last whole record: a cut or damage ends it. */
	while (fxt_reader_next(r, &rec) > 0) {
		const uint64_t *w = fxt_reader_record_bytes(r);

		if (rec.type == FXT_RECORD_METADATA && w &&
		    fxt_bits(w[0], 16, 19) == FXT_METADATA_PROVIDER_INFO) {
			if (k == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				struct convert_batch_member *nv = realloc(v, ncap * sizeof(*nv));
				if (!nv) {
					err = -ENOMEM;
					break;
				}
				v = nv;
				cap = ncap;
			}
			if (k)
				v[k - 1].end = rec.offset;
			v[k++] = (struct convert_batch_member){ (uint32_t)fxt_bits(w[0], 20, 51),
								image, rec.offset, 0 };
		}
		end = rec.offset + rec.nwords * FXT_WORD_SIZE;
	}
	fxt_reader_free(r);
	if (err < 0 || !k) {
		free(v);
		return err < 0 ? err : -EBADMSG;
	}
	v[k - 1].end = end;
	*out = v;
	*n = k;
	return 0;
}
