/* Merging per-process archives into one (see merge.h). */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <fxt/format.h>
#include <fxt/writer.h>

#include "launcher/merge.h"

/* gzread() reads a plain file as it is, so one path serves both kinds. */
#define IN_BUFFER_BYTES (256u << 10)

/* Bytes read from a part at once. */
#define COPY_BLOCK_BYTES (1u << 20)

/* A record larger than this (only a large record, type 15, can be) ends
 * the part: it is no record the agent writes, and holding it whole is what
 * keeps a truncated one out of the output. */
#define MAX_COPY_BYTES (64ull << 20)

/* Reads exactly len bytes unless the part ends first.  Returns the bytes
 * read (< len at the end of the data or of a truncated gzip stream), or
 * -errno on an I/O error. */
static long long read_full(gzFile in, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		size_t want = len - got;
		if (want > (1u << 30))
			want = 1u << 30; /* gzread() takes an unsigned, returns an int */
		int n = gzread(in, (char *)buf + got, (unsigned)want);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n < 0) {
			int zerr;
			gzerror(in, &zerr);
			/* A damaged or cut gzip stream is a truncated part; only
			 * the file system's errors fail the merge. */
			if (zerr == Z_ERRNO)
				return errno != 0 ? -errno : -EIO;
		}
		break;
	}
	return (long long)got;
}

/* Copies the records of the archive at `path` after its magic record,
 * reading it in blocks and writing the whole records of each block at
 * once.  *buf (of *cap bytes, a multiple of 8) is a scratch buffer the
 * caller keeps, grown when a record is larger.  Returns 0 or -errno (the
 * writer's or the file system's). */
static int copy_part(struct fxt_writer *w, const char *path, uint64_t **buf, size_t *cap,
		     struct merge_part_result *res)
{
	size_t have = 0; /* bytes in *buf */
	bool eof = false;
	int fd, err = 0;

	memset(res, 0, sizeof(*res));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		res->not_an_archive = true; /* gone: nothing to merge */
		return 0;
	}
	if (fd < 0)
		return -errno;
	gzFile in = gzdopen(fd, "rb");
	if (in == NULL) {
		close(fd);
		return -ENOMEM;
	}
	gzbuffer(in, IN_BUFFER_BYTES);

	long long n = read_full(in, *buf, FXT_WORD_SIZE);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	if (n != FXT_WORD_SIZE || le64toh((*buf)[0]) != FXT_MAGIC_RECORD) {
		res->not_an_archive = true;
		goto out;
	}
	while (!eof) {
		/* Fill the buffer after the part of a record kept from the
		 * last block. */
		n = read_full(in, (char *)*buf + have, *cap - have);
		if (n < 0) {
			err = (int)n;
			break;
		}
		have += (size_t)n;
		eof = have < *cap;

		/* The whole records at its start. */
		size_t pos = 0, need = 0;
		while (have - pos >= FXT_WORD_SIZE) {
			uint64_t h = le64toh((*buf)[pos / FXT_WORD_SIZE]);
			uint64_t words = fxt_header_type(h) == FXT_RECORD_LARGE
					     ? fxt_large_header_size(h)
					     : fxt_header_size(h);
			if (words == 0 || words > MAX_COPY_BYTES / FXT_WORD_SIZE) {
				eof = true; /* no way to the next record */
				break;
			}
			if (words * FXT_WORD_SIZE > have - pos) {
				need = (size_t)words * FXT_WORD_SIZE;
				break;
			}
			pos += (size_t)words * FXT_WORD_SIZE;
			res->records++;
		}
		if (pos != 0) {
			err = fxt_writer_words(w, *buf, pos / FXT_WORD_SIZE);
			if (err < 0)
				break;
			res->bytes += pos;
		}
		/* What is left, a record begun, goes to the buffer's start. */
		have -= pos;
		memmove(*buf, (char *)*buf + pos, have);
		if (need > *cap && !eof) {
			size_t ncap = *cap;
			while (ncap < need)
				ncap *= 2;
			uint64_t *nb = realloc(*buf, ncap);
			if (nb == NULL) {
				err = -ENOMEM;
				break;
			}
			*buf = nb;
			*cap = ncap;
		}
	}
	/* Bytes that are no whole record: the part was cut (or damaged). */
	if (err == 0 && have != 0)
		res->truncated = true;
out:
	gzclose_r(in); /* closes fd */
	return err;
}

/* The permissions the agent's archives get (created 0644, less the umask:
 * fxt_writer_open_path()), for the temporary file mkstemp() makes 0600. */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0644 & ~mask;
}

int merge_archives(const char *out, const char *const *parts, size_t nparts,
		   struct merge_part_result *res)
{
	struct fxt_writer *w;
	size_t cap = COPY_BLOCK_BYTES, ncopied = 0;
	uint64_t *buf;
	char *tmp;
	int fd, err;

	/* A hidden name in out's directory (rename(2) does not cross file
	 * systems) that no process of the run can take for its archive or
	 * spool name. */
	const char *slash = strrchr(out, '/');
	int dirlen = slash != NULL ? (int)(slash - out) + 1 : 0;
	if (asprintf(&tmp, "%.*s.%s.merge.XXXXXX", dirlen, out, out + dirlen) < 0)
		return -ENOMEM;
	buf = malloc(cap);
	if (buf == NULL) {
		err = -ENOMEM;
		goto out_mem;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_mem;
	}
	if (fchmod(fd, new_file_mode()) != 0) {
		err = -errno;
		goto out_file;
	}
	size_t len = strlen(out);
	bool gz = len >= 3 && strcmp(out + len - 3, ".gz") == 0;
	err = fxt_writer_open_fd(&w, fd, gz ? FXT_WRITER_GZIP : 0);
	if (err < 0)
		goto out_file;

	err = fxt_writer_magic(w);
	for (size_t i = 0; i < nparts && err == 0; i++) {
		struct merge_part_result r;
		err = copy_part(w, parts[i], &buf, &cap, &r);
		if (res != NULL)
			res[i] = r;
		ncopied += !r.not_an_archive;
	}
	if (err == 0 && ncopied == 0)
		err = -ENODATA;
	/* Closed even after an error, to free it; it leaves fd open. */
	int cerr = fxt_writer_close(w);
	if (err == 0)
		err = cerr;
	if (close(fd) != 0 && err == 0)
		err = -errno;
	fd = -1;
	if (err == 0 && rename(tmp, out) != 0)
		err = -errno;
out_file:
	if (fd >= 0)
		close(fd);
	if (err != 0)
		unlink(tmp);
out_mem:
	free(buf);
	free(tmp);
	return err;
}
