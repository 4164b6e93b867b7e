/* Merging per-process archives into one (see merge.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "launcher/merge.h"

/* Copies the records of the archive at `path` after its magic record, as
 * the reader frames them (fxt/reader.h, FXT_READER_RAW): plain or gzip, up
 * to its last whole record.  Returns 0 or -errno (the writer's or the file
 * system's); damage in the part only ends it (res->truncated). */
static int copy_part(struct fxt_writer *w, const char *path, struct merge_part_result *res)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	int rc, err = 0;

	memset(res, 0, sizeof(*res));
	rc = fxt_reader_open_path(&r, path, FXT_READER_RAW);
	if (rc == -ENOENT) {
		res->not_an_archive = true; /* gone: nothing to merge */
		return 0;
	}
	if (rc < 0)
		return rc;
	rc = fxt_reader_next(r, &rec);
	if (rc <= 0 || !fxt_reader_saw_magic(r)) {
		err = rc < 0 ? -fxt_reader_errno(r) : 0;
		res->not_an_archive = err == 0;
		goto out;
	}
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		err = fxt_writer_words(w, fxt_reader_record_bytes(r), (size_t)rec.nwords);
		if (err < 0)
			goto out;
		res->records++;
		res->bytes += rec.nwords * FXT_WORD_SIZE;
	}
	/* A read error fails the merge; bytes that are no whole record (the
	 * part was cut, or damaged) only end the part. */
	if (rc < 0) {
		err = -fxt_reader_errno(r);
		res->truncated = err == 0;
	}
out:
	fxt_reader_free(r);
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
	size_t ncopied = 0;
	char *tmp;
	int fd, err;

	/* A hidden name in out's directory (rename(2) does not cross file
	 * systems) that no process of the run can take for its archive or
	 * spool name. */
	const char *slash = strrchr(out, '/');
	int dirlen = slash != NULL ? (int)(slash - out) + 1 : 0;
	if (asprintf(&tmp, "%.*s.%s.merge.XXXXXX", dirlen, out, out + dirlen) < 0)
		return -ENOMEM;
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
		err = copy_part(w, parts[i], &r);
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
	free(tmp);
	return err;
}
