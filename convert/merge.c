/* Merging archives into one (see merge.h). */
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

#include "convert/merge.h"

/* The providers of one part and how far each moves. */
struct shifts {
	merge_shift_fn *fn;
	void *ctx;
	size_t part;
	struct shift {
		uint32_t id;
		int64_t ns;
		uint64_t tps; /* ticks per second: 10^9 until an initialization */
	} * v;
	size_t n, cap;
	struct shift *cur; /* the provider whose records come now */
};

static struct shift *shift_of(struct shifts *sh, uint32_t id, bool add)
{
	for (size_t i = 0; i < sh->n; i++)
		if (sh->v[i].id == id)
			return &sh->v[i];
	if (!add)
		return NULL;
	if (sh->n == sh->cap) {
		size_t ncap = sh->cap ? 2 * sh->cap : 8;
		struct shift *nv = realloc(sh->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return NULL;
		sh->v = nv;
		sh->cap = ncap;
	}
	sh->v[sh->n] = (struct shift){ id, 0, 1000000000u };
	return &sh->v[sh->n++];
}

/* Moves the timestamp at *ts by d ticks; true if it had to stop at 0. */
static bool move_ts(uint64_t *ts, __int128 d)
{
	__int128 t = (__int128)*ts + d;

	*ts = t < 0 ? 0 : (uint64_t)t;
	return t < 0;
}

/* Whether the merged archive's threads are each in time order, as the
 * readers take a thread (fxt/order.c: (provider, pid, tid), its events
 * against its latest event time so far), followed record by record as
 * the parts are copied, each part marked as in time order itself: a
 * provider that comes again in a later part (the images of one process,
 * each an archive of fxt-run's under its pid) keeps it only if no event
 * there is before that provider's latest event time of the parts before.
 * Per provider, not per thread: a thread is one provider's. */
struct order_track {
	bool ok;
	size_t part; /* the part being copied */
	struct order_provider {
		uint32_t id;
		size_t part;	/* the last part it came in */
		uint64_t floor; /* its latest time in the parts before that */
		uint64_t max;	/* its latest time so far */
	} * v;
	size_t n, cap;
	struct order_provider *cur; /* NULL: none yet in this part */
};

/* Part `part` begins: none of its providers is known in it yet. */
static void order_part(struct order_track *ot, size_t part)
{
	ot->part = part;
	ot->cur = NULL;
}

/* Record `w` (nwords, as written) of the part being copied. */
static void order_record(struct order_track *ot, const uint64_t *w, uint64_t nwords)
{
	unsigned type = fxt_header_type(w[0]);

	if (!ot->ok)
		return;
	if (type == FXT_RECORD_METADATA) {
		unsigned mtype = (unsigned)fxt_bits(w[0], 16, 19);
		uint32_t id = (uint32_t)fxt_bits(w[0], 20, 51);
		size_t i = 0;

		if (mtype != FXT_METADATA_PROVIDER_INFO && mtype != FXT_METADATA_PROVIDER_SECTION)
			return;
		while (i < ot->n && ot->v[i].id != id)
			i++;
		if (i == ot->n) {
			if (ot->n == ot->cap) {
				size_t ncap = ot->cap ? 2 * ot->cap : 16;
				struct order_provider *nv = realloc(ot->v, ncap * sizeof(*nv));
				if (nv == NULL) {
					ot->ok = false; /* not known: not marked */
					return;
				}
				ot->v = nv;
				ot->cap = ncap;
			}
			ot->v[ot->n++] = (struct order_provider){ id, ot->part, 0, 0 };
		}
		ot->cur = &ot->v[i];
		if (ot->cur->part != ot->part) {
			ot->cur->part = ot->part;
			ot->cur->floor = ot->cur->max;
		}
		return;
	}
	if (type != FXT_RECORD_EVENT || nwords < 2)
		return;
	if (ot->cur == NULL || w[1] < ot->cur->floor)
		ot->ok = false; /* (no provider: the one before this part's would own it) */
	else if (w[1] > ot->cur->max)
		ot->cur->max = w[1];
}

/* Follows the provider context through metadata and initialization
 * records, and moves a timed record's timestamp (word 1) in `w`, a copy of
 * the record.  Returns 0 or -errno. */
static int shift_record(struct shifts *sh, uint64_t *w, uint64_t nwords,
			struct merge_part_result *res)
{
	unsigned type = fxt_header_type(w[0]);

	if (type == FXT_RECORD_METADATA) {
		unsigned mtype = (unsigned)fxt_bits(w[0], 16, 19);
		uint32_t id = (uint32_t)fxt_bits(w[0], 20, 51);
		if (mtype == FXT_METADATA_PROVIDER_INFO) {
			size_t len = (size_t)fxt_bits(w[0], 52, 59);
			if (len > (nwords - 1) * 8)
				len = (size_t)(nwords - 1) * 8;
			sh->cur = shift_of(sh, id, true);
			if (sh->cur == NULL)
				return -ENOMEM;
			sh->cur->tps = 1000000000u;
			return sh->fn(sh->ctx, sh->part, (const char *)(w + 1), len, &sh->cur->ns);
		}
		if (mtype == FXT_METADATA_PROVIDER_SECTION)
			sh->cur = shift_of(sh, id, false);
		return 0;
	}
	if (sh->cur == NULL || nwords < 2)
		return 0;
	if (type == FXT_RECORD_INITIALIZATION) {
		sh->cur->tps = w[1] ? w[1] : 1000000000u;
		return 0;
	}
	if (sh->cur->ns == 0 || (type != FXT_RECORD_EVENT && type != FXT_RECORD_CONTEXT_SWITCH &&
				 type != FXT_RECORD_LOG))
		return 0;
	__int128 d = (__int128)sh->cur->ns * (__int128)sh->cur->tps / 1000000000;
	res->clamped += move_ts(&w[1], d);
	/* A complete event's end is its last word: it moves with its start. */
	if (type == FXT_RECORD_EVENT && nwords > 2 &&
	    fxt_bits(w[0], 16, 19) == FXT_EVENT_DURATION_COMPLETE)
		res->clamped += move_ts(&w[nwords - 1], d);
	return 0;
}

/* Copies the records of the archive at `path` after its magic record, as
 * the reader frames them (fxt/reader.h, FXT_READER_RAW): plain or compressed, up
 * to its last whole record, but its mark of time order if skip_mark; moved
 * in time when sh is not NULL.  Returns 0
 * or -errno (the writer's, the file system's or the shift's); damage in
 * the part only ends it (res->truncated). */
static int copy_part(struct fxt_writer *w, const char *path, struct shifts *sh, bool skip_mark,
		     struct order_track *ot, struct merge_part_result *res)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	uint64_t *copy = NULL;
	size_t ccap = 0;
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
	/* Its mark of time order: the merged archive has its own, or none. */
	rc = skip_mark ? fxt_reader_next(r, &rec) : 1;
	while (rc > 0 && (rc = fxt_reader_next(r, &rec)) > 0) {
		const void *bytes = fxt_reader_record_bytes(r);
		if (sh != NULL && rec.type != FXT_RECORD_LARGE) {
			if (rec.nwords > ccap) {
				uint64_t *nc = realloc(copy, (size_t)rec.nwords * sizeof(*nc));
				if (nc == NULL) {
					err = -ENOMEM;
					goto out;
				}
				copy = nc;
				ccap = (size_t)rec.nwords;
			}
			memcpy(copy, bytes, (size_t)rec.nwords * FXT_WORD_SIZE);
			err = shift_record(sh, copy, rec.nwords, res);
			if (err < 0)
				goto out;
			bytes = copy;
		}
		if (rec.type != FXT_RECORD_LARGE)
			order_record(ot, bytes, rec.nwords);
		err = fxt_writer_words(w, bytes, (size_t)rec.nwords);
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
	free(copy);
	fxt_reader_free(r);
	return err;
}

/* Whether the archive at `path` starts with the mark of time order
 * (*marked), then its first provider's info (*id): 0 when both, 1 when
 * not, -ENOENT when it is gone, another -errno when it cannot be read. */
static int first_provider(const char *path, bool *marked, uint32_t *id)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	int rc = fxt_reader_open_path(&r, path, 0);

	*marked = false;
	*id = 0;
	if (rc < 0)
		return rc;
	*marked = fxt_reader_starts_time_ordered(r);
	rc = *marked && fxt_reader_next(r, &rec) > 0 && rec.type == FXT_RECORD_METADATA &&
	     rec.u.meta.type == FXT_METADATA_PROVIDER_INFO;
	if (rc)
		*id = rec.u.meta.provider_id;
	fxt_reader_free(r);
	return rc ? 0 : 1;
}

/* Whether every part there is starts with the mark that its threads'
 * events are in time order (FXT_TIME_ORDERED_MARK), then its provider:
 * then so may the merged ones be (a thread is its provider's, moved by
 * one shift; a part gone counts for nothing), which struct order_track
 * follows as the parts are copied.  With `distinct` (a merged archive
 * whose mark cannot be undone once written: compressed), only if their
 * first providers are each another, as that cannot be followed: the same
 * process twice (one archive given twice) is not marked, its second
 * part's events would be late.  marked[i]: whether part i has the mark
 * (copy_part() leaves it out: the merged archive has its own, or none).
 * A range (ranges[i].len) is one provider's records, in time order. */
static bool all_time_ordered(const char *const *parts, size_t nparts,
			     const struct merge_range *ranges, bool distinct, bool *marked)
{
	uint32_t *ids = calloc(nparts ? nparts : 1, sizeof(*ids));
	size_t seen = 0;
	bool all = ids != NULL;

	for (size_t i = 0; i < nparts; i++) {
		uint32_t id = 0;
		int rc;

		marked[i] = false;
		if (ranges && ranges[i].len) {
			/* Of our converter's: in time order, its one provider. */
			id = ranges[i].provider;
		} else {
			rc = first_provider(parts[i], &marked[i], &id);
			if (rc == -ENOENT)
				continue;
			if (rc != 0)
				all = false;
		}
		for (size_t k = 0; all && distinct && k < seen; k++)
			all = ids[k] != id;
		if (all)
			ids[seen++] = id;
	}
	free(ids);
	return all && seen > 0;
}

/* The files the ranges are read from, held open (a few batches, their
 * archives interleaved in the merged order). */
#define RANGE_FILES 8
struct range_src {
	const char *path[RANGE_FILES];
	int fd[RANGE_FILES];
	unsigned next; /* the slot to take next */
};

/* The descriptor of `path`, opened if needed; -errno. */
static int range_fd(struct range_src *src, const char *path)
{
	unsigned k;

	for (k = 0; k < RANGE_FILES; k++)
		if (src->fd[k] >= 0 && strcmp(src->path[k], path) == 0)
			return src->fd[k];
	k = src->next++ % RANGE_FILES;
	if (src->fd[k] >= 0)
		close(src->fd[k]);
	src->path[k] = path;
	src->fd[k] = open(path, O_RDONLY | O_CLOEXEC);
	return src->fd[k] >= 0 ? src->fd[k] : -errno;
}

/* Copies the records of a range of the file at `path` (off, len: whole
 * records of our converter's, committed), as they are. */
static int copy_range(struct fxt_writer *w, struct range_src *src, const char *path,
		      const struct merge_range *rg, struct order_track *ot,
		      struct merge_part_result *res)
{
	uint64_t *buf = NULL;
	int err = 0, fd;

	memset(res, 0, sizeof(*res));
	if (rg->len % FXT_WORD_SIZE)
		return -EINVAL;
	fd = range_fd(src, path);

	if (fd < 0)
		return fd;
	buf = malloc(rg->len);
	if (!buf) {
		err = -ENOMEM;
	} else if (pread(fd, buf, rg->len, (off_t)rg->off) != (ssize_t)rg->len) {
		err = -EIO;
	} else {
		size_t nw = (size_t)(rg->len / FXT_WORD_SIZE);
		for (size_t k = 0, n; ot->ok && k < nw; k += n) {
			unsigned type = fxt_header_type(buf[k]);
			n = type == FXT_RECORD_LARGE ? (size_t)fxt_large_header_size(buf[k])
						     : fxt_header_size(buf[k]);
			if (n == 0 || n > nw - k)
				ot->ok = false; /* not whole records after all */
			else if (type != FXT_RECORD_LARGE)
				order_record(ot, buf + k, n);
		}
		err = fxt_writer_words(w, buf, nw);
		res->bytes = rg->len;
	}
	free(buf);
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

static int unmark(int fd);

int merge_archives(const char *out, const char *const *parts, size_t nparts,
		   struct merge_part_result *res)
{
	return merge_archives_shifted(out, parts, nparts, NULL, NULL, res);
}

int merge_archives_shifted(const char *out, const char *const *parts, size_t nparts,
			   merge_shift_fn *shift, void *ctx, struct merge_part_result *res)
{
	return merge_archives_ranges(out, parts, nparts, NULL, shift, ctx, res);
}

int merge_archives_ranges(const char *out, const char *const *parts, size_t nparts,
			  const struct merge_range *ranges, merge_shift_fn *shift, void *ctx,
			  struct merge_part_result *res)
{
	struct shifts sh = { .fn = shift, .ctx = ctx };
	struct range_src src = { .next = 0 };
	struct order_track ot = { .ok = false };
	bool compressed = fxt_writer_path_flags(out) != 0, marked_out = false;
	struct fxt_writer *w;
	bool *marked = NULL;
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
	err = fxt_writer_open_fd(&w, fd, fxt_writer_path_flags(out));
	if (err < 0)
		goto out_file;

	for (unsigned k = 0; k < RANGE_FILES; k++)
		src.fd[k] = -1;
	err = fxt_writer_magic(w);
	marked = calloc(nparts ? nparts : 1, sizeof(*marked));
	if (marked == NULL)
		err = -ENOMEM;
	else if (err == 0 && all_time_ordered(parts, nparts, ranges, compressed, marked)) {
		err = fxt_writer_time_ordered(w);
		ot.ok = marked_out = true;
	}
	for (size_t i = 0; i < nparts && err == 0; i++) {
		struct merge_part_result r;
		sh.part = i;
		sh.n = 0;
		sh.cur = NULL;
		order_part(&ot, i);
		if (ranges && ranges[i].len)
			err = copy_range(w, &src, parts[i], &ranges[i], &ot, &r);
		else
			err = copy_part(w, parts[i], shift ? &sh : NULL, marked[i], &ot, &r);
		if (res != NULL)
			res[i] = r;
		ncopied += !r.not_an_archive;
	}
	for (unsigned k = 0; k < RANGE_FILES; k++)
		if (src.fd[k] >= 0)
			close(src.fd[k]);
	if (err == 0 && ncopied == 0)
		err = -ENODATA;
	/* Closed even after an error, to free it; it leaves fd open. */
	int cerr = fxt_writer_close(w);
	if (err == 0)
		err = cerr;
	/* Marked, but a provider's events came again before its latest. */
	if (err == 0 && marked_out && !ot.ok)
		err = unmark(fd);
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
	free(sh.v);
	free(ot.v);
	free(marked);
	return err;
}

int merge_append_begin(struct merge_append *a, const char *out)
{
	bool marked;
	unsigned char head[8];
	uint64_t magic = FXT_MAGIC_RECORD;
	struct stat sb;
	int err;

	a->w = NULL;
	a->fd = -1;
	if (fxt_writer_path_flags(out) != 0)
		return -ENOTSUP;
	a->ordered = first_provider(out, &marked, &a->provider) == 0;
	a->fd = open(out, O_RDWR | O_CLOEXEC);
	if (a->fd < 0)
		return -errno;
	if (fstat(a->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		err = S_ISREG(sb.st_mode) ? -errno : -ENOTSUP;
		goto fail;
	}
	a->size = (uint64_t)sb.st_size;
	/* The magic record, as a reader finds it (little-endian words). */
	if (pread(a->fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    a->size % FXT_WORD_SIZE != 0) {
		err = -ENOTSUP;
		goto fail;
	}
	for (int i = 0; i < 8; i++)
		if (head[i] != (unsigned char)(magic >> (8 * i))) {
			err = -ENOTSUP;
			goto fail;
		}
	if (lseek(a->fd, 0, SEEK_END) < 0) {
		err = -errno;
		goto fail;
	}
	err = fxt_writer_open_fd(&a->w, a->fd, 0);
	if (err == 0)
		return 0;
fail:
	close(a->fd);
	a->fd = -1;
	return err;
}

/* Undoes out's mark of time order, if it has one: the mark's string
 * record (right after the magic record) says another string of the same
 * length, so that no record moves. */
static int unmark(int fd)
{
	static const char mark[] = FXT_TIME_ORDERED_MARK, other[] = "fxtrace.time-ordered.no";
	unsigned char rec[8 + (sizeof(mark) + 7) / 8 * 8];
	uint64_t h = 0;

	_Static_assert(sizeof(other) == sizeof(mark), "the same length");
	if (pread(fd, rec, sizeof(rec), 8) != (ssize_t)sizeof(rec))
		return 0; /* too short to hold it */
	for (int i = 7; i >= 0; i--)
		h = h << 8 | rec[i];
	if (fxt_header_type(h) != FXT_RECORD_STRING || fxt_header_size(h) != sizeof(rec) / 8 ||
	    fxt_bits(h, 32, 46) != sizeof(mark) - 1 || memcmp(rec + 8, mark, sizeof(mark) - 1) != 0)
		return 0;
	return pwrite(fd, other, sizeof(other) - 1, 16) == (ssize_t)sizeof(other) - 1 ? 0 : -errno;
}

int merge_append_end(struct merge_append *a, int err, bool part_ordered, uint32_t part_provider)
{
	int cerr = a->w ? fxt_writer_close(a->w) : 0;

	a->w = NULL;
	if (err == 0)
		err = cerr;
	/* The mark stays as merge_archives() would write it
	 * (all_time_ordered()): out's and the part's threads each in time
	 * order, under providers of their own. */
	if (err == 0 && !(a->ordered && part_ordered && part_provider != a->provider))
		err = unmark(a->fd);
	if (err != 0 && ftruncate(a->fd, (off_t)a->size) != 0 && err == 0)
		err = -errno;
	if (close(a->fd) != 0 && err == 0)
		err = -errno;
	a->fd = -1;
	return err;
}
