/* A spool file -> its archive (see convert.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/batch.h"
#include "convert/pipeline.h"
#include "spool/clock.h"
#include "run/names.h"
#include "run/recording.h"
#include "run/session.h"
#include "convert/convert.h"
#include "symbolizer/runcache.h"
#include "symbolizer/signature.h"

/* The first page of the header holds its fixed part and the first modules;
 * the rest is read only as far as the module list goes (most processes
 * list a few modules: 60 KiB less copied a conversion). */
#define HEADER_FIRST 4096u
_Static_assert(HEADER_FIRST >= SPOOL_HEADER_FIXED && HEADER_FIRST <= SPOOL_HEADER_SIZE,
	       "the first read holds the fixed header");

int convert_read_header(int fd, struct spool_header **out)
{
	struct spool_header *h = malloc(SPOOL_HEADER_SIZE);
	size_t need;
	ssize_t got;
	char last;

	if (!h)
		return -ENOMEM;
	got = pread(fd, h, HEADER_FIRST, 0);
	if (got < 0) {
		int err = -errno;
		free(h);
		return err;
	}
	if ((size_t)got < HEADER_FIRST || !spool_header_ok(h)) {
		free(h);
		return -EBADMSG;
	}
	need = SPOOL_HEADER_FIXED + h->nmodules * sizeof(h->modules[0]);
	/* The rest of the module list, and the header's last byte: the file
	 * holds the whole header. */
	if ((need > HEADER_FIRST &&
	     pread(fd, (char *)h + HEADER_FIRST, need - HEADER_FIRST, HEADER_FIRST) !=
		 (ssize_t)(need - HEADER_FIRST)) ||
	    pread(fd, &last, 1, SPOOL_HEADER_SIZE - 1) != 1) {
		free(h);
		return -EBADMSG;
	}
	h->program[sizeof(h->program) - 1] = '\0';
	for (uint32_t i = 0; i < h->nmodules; i++)
		h->modules[i].path[SPOOL_MODULE_PATH - 1] = '\0';
	*out = h;
	return 0;
}

/* The seal's thread table, as the pipeline takes it (malloc'd, or NULL
 * with *n = 0 when there is none).  0, -ENOMEM, or -EBADMSG for a seal
 * that does not fit the file. */
static int read_seal(int fd, const struct spool_header *h, uint64_t file_size,
		     struct spool_seal *seal, struct conv_thread **out, size_t *n)
{
	struct spool_seal_thread *st = NULL;
	struct conv_thread *v = NULL;
	uint64_t bytes;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (h->seal_off < SPOOL_HEADER_SIZE || h->seal_off > file_size ||
	    file_size - h->seal_off < sizeof(*seal) ||
	    pread(fd, seal, sizeof(*seal), (off_t)h->seal_off) != (ssize_t)sizeof(*seal) ||
	    !spool_seal_ok(seal, h->seal_off, file_size))
		return -EBADMSG;
	if (!seal->nthreads)
		return 0;
	bytes = seal->nthreads * sizeof(*st);
	st = malloc(bytes);
	v = calloc(seal->nthreads, sizeof(*v));
	if (!st || !v) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(fd, st, bytes, (off_t)(h->seal_off + sizeof(*seal))) != (ssize_t)bytes) {
		err = -EBADMSG;
		goto out;
	}
	for (uint64_t i = 0; i < seal->nthreads; i++) {
		v[i].serial = st[i].serial;
		v[i].tid = st[i].tid;
		memcpy(v[i].name, st[i].name, sizeof(v[i].name));
		v[i].name[sizeof(v[i].name) - 1] = '\0';
		v[i].dropped = st[i].dropped;
		v[i].overwritten = st[i].overwritten;
		v[i].first_drop_ts = st[i].first_drop_ts;
		v[i].stop_ts = st[i].stop_ts;
		v[i].end_ts = st[i].end_ts;
		v[i].drop_cause = st[i].drop_cause;
	}
	*out = v;
	*n = seal->nthreads;
	v = NULL;
out:
	free(st);
	free(v);
	return err;
}

struct convert_early {
	int fd;
	dev_t dev;
	ino_t ino;
	struct spool_header *h;
	struct fxt_symcache *cache;
	struct fxt_symview *view;
	struct fxt_symview_module *mods;
	struct conv_input in;
	unsigned flags; /* the archive's compression */
	struct conv_early *e;
};

void convert_early_free(struct convert_early *ce)
{
	if (!ce)
		return;
	conv_early_free(ce->e);
	fxt_symview_close(ce->view);
	fxt_symcache_free(ce->cache);
	free(ce->mods);
	free(ce->h);
	if (ce->fd >= 0)
		close(ce->fd);
	free(ce);
}

/* A function's signature (--args, --retval), from the process's own
 * symbolizer: the run's cache keeps names only. */
static const struct fxt_signature *view_signature(void *view, uint64_t addr)
{
	struct fxt_sym *sym = fxt_symview_sym(view);
	const struct fxt_signature *sig;

	return sym && fxt_sym_signature(sym, addr, &sig) == 0 ? sig : NULL;
}

int convert_early_open(const char *spool_path, const char *archive_path, bool srcline,
		       struct convert_early **out)
{
	struct convert_early *ce = calloc(1, sizeof(*ce));
	const char *slash = strrchr(archive_path, '/');
	char *dir = NULL;
	struct spool_header *h;
	struct stat sb;
	int err;

	*out = NULL;
	if (!ce)
		return -ENOMEM;
	ce->fd = open(spool_path, O_RDONLY | O_CLOEXEC);
	if (ce->fd < 0 || fstat(ce->fd, &sb) != 0) {
		err = -errno;
		goto fail;
	}
	ce->dev = sb.st_dev;
	ce->ino = sb.st_ino;
	err = convert_read_header(ce->fd, &ce->h);
	if (err < 0)
		goto fail;
	h = ce->h;
	/* What only the whole spool can give, or no stream of chunks. */
	if (h->mode != FXT_MODE_STREAM || h->snapshot || h->sample_hz ||
	    __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == SPOOL_SEALED) {
		err = -EOPNOTSUPP;
		goto fail;
	}
	ce->cache = fxt_symcache_new();
	ce->mods = calloc(h->nmodules ? h->nmodules : 1, sizeof(*ce->mods));
	for (uint32_t i = 0; ce->mods && i < h->nmodules; i++) {
		ce->mods[i].path = h->modules[i].path;
		ce->mods[i].bias = h->modules[i].bias;
	}
	if (!ce->cache || !ce->mods ||
	    fxt_symview_open(&ce->view, ce->cache, ce->mods, h->nmodules) < 0) {
		err = -ENOMEM;
		goto fail;
	}
	ce->in.pid = h->pid;
	ce->in.process_name = h->program;
	ce->in.spool_fd = ce->fd;
	ce->in.libc_groups = h->libc_groups;
	ce->in.min_duration_ns = h->min_duration_ns;
	ce->in.loc_args = srcline;
	ce->in.ticks_per_second = spool_clock_rate(h);
	ce->in.base_ticks = h->start_ticks;
	ce->in.base_ns = h->start_ns;
	ce->in.lookup = fxt_symview_lookup;
	ce->in.loc_later = fxt_symview_loc;
	ce->in.lookup_ctx = ce->view;
	ce->in.signature = view_signature;
	ce->in.signature_ctx = ce->view;
	if (fxt_symview_range_of(ce->view, "libfxt-agent.so", &ce->in.agent_lo, &ce->in.agent_hi) <
	    0)
		ce->in.agent_lo = ce->in.agent_hi = 0;
	dir = slash ? strndup(archive_path,
			      slash == archive_path ? 1 : (size_t)(slash - archive_path))
		    : strdup(".");
	if (!dir) {
		err = -ENOMEM;
		goto fail;
	}
	ce->flags = fxt_writer_path_flags(archive_path);
	err = conv_early_new(&ce->e, &ce->in, dir, ce->flags);
	free(dir);
	if (err < 0)
		goto fail;
	*out = ce;
	return 0;
fail:
	convert_early_free(ce);
	return err;
}

int convert_early_step(struct convert_early *ce, unsigned max_chunks)
{
	uint32_t waited = 0;

	/* An acquisition waited: the sync pairing needs the whole spool,
	 * and what is converted now would go to waste (early_fits()). */
	if ((ce->in.libc_groups & AGENT_G_SYNC) &&
	    (pread(ce->fd, &waited, sizeof(waited), offsetof(struct spool_header, waited)) !=
		 (ssize_t)sizeof(waited) ||
	     waited))
		return -ECANCELED;
	return conv_early_step(ce->e, max_chunks);
}

void convert_early_yield(struct convert_early *ce, const uint32_t *flag)
{
	conv_early_yield(ce->e, flag);
}

uint64_t convert_early_fed(const struct convert_early *ce)
{
	return conv_early_fed(ce->e);
}

/* Whether the conversion of `in`, the spool open as `fd` with header `h`,
 * can go on from the early conversion `ce`: the same file, modules and
 * time base, and nothing it could not have known. */
static bool early_fits(const struct convert_early *ce, int fd, const struct spool_header *h,
		       const struct conv_input *in, uint64_t seal_rate, const char *archive_path)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && sb.st_dev == ce->dev && sb.st_ino == ce->ino &&
	       h->pid == ce->h->pid && h->nmodules == ce->h->nmodules &&
	       memcmp(h->modules, ce->h->modules, h->nmodules * sizeof(h->modules[0])) == 0 &&
	       in->base_ticks == ce->in.base_ticks && in->base_ns == ce->in.base_ns &&
	       (seal_rate == 0 || seal_rate == ce->in.ticks_per_second) &&
	       in->libc_groups == ce->in.libc_groups && !in->sample_hz &&
	       in->min_duration_ns == ce->in.min_duration_ns && in->loc_args == ce->in.loc_args &&
	       !in->npipe_writes && !in->snapshot &&
	       (!(in->libc_groups & AGENT_G_SYNC) || in->no_waits) &&
	       fxt_writer_path_flags(archive_path) == ce->flags;
}

int convert_partial_name(const char *archive_path, char **out)
{
	const char *slash = strrchr(archive_path, '/');
	size_t dir = slash ? (size_t)(slash - archive_path) + 1 : 0;

	*out = malloc(strlen(archive_path) + sizeof(CONVERT_PARTIAL_PREFIX));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, archive_path, dir);
	strcpy(*out + dir, CONVERT_PARTIAL_PREFIX);
	strcat(*out, archive_path + dir);
	return 0;
}

/* The mark a consuming conversion leaves in the spool's header
 * (spool_header.archive_ino): the archive's inode and size, or zeros to
 * take it back.  0 or -errno. */
_Static_assert(offsetof(struct spool_header, archive_size) ==
		   offsetof(struct spool_header, archive_ino) + sizeof(uint64_t),
	       "the mark is one write");
static int mark_spool(int fd, uint64_t ino, uint64_t size)
{
	const uint64_t mark[2] = { ino, size };
	ssize_t n = pwrite(fd, mark, sizeof(mark), offsetof(struct spool_header, archive_ino));

	return n == (ssize_t)sizeof(mark) ? 0 : n < 0 ? -errno : -EIO;
}

/* The spool at `fd` (opened for writing), about to be removed: marks it
 * with the archive written at tmp, whole, before that gets its name. */
static int mark_archive(int fd, const char *tmp)
{
	struct stat sb;

	if (stat(tmp, &sb) != 0)
		return -errno;
	return mark_spool(fd, (uint64_t)sb.st_ino, (uint64_t)sb.st_size);
}

/* convert_spool() into o->batch: the archive made in memory, written at
 * the batch's end, the spool marked with where it ends (when `marks`),
 * then committed; the spool goes (or is recycled) as after a conversion
 * into a file of its own. */
static int convert_to_batch(const struct convert_opts *o, int fd, bool marks,
			    const char *spool_path, const struct conv_input *in, uint32_t image,
			    struct conv_stats *st, struct convert_result *res)
{
	struct convert_batch *b = o->batch;
	struct fxt_writer *w;
	const void *data;
	uint64_t end = 0;
	size_t len = 0;
	int err = fxt_writer_open_mem(&w, 0);

	if (err < 0)
		return err;
	err = conv_archive(w, in, st);
	if (!err)
		err = fxt_writer_flush(w);
	data = fxt_writer_mem_data(w, &len);
	res->bytes = len;
	if (!err)
		err = data ? convert_batch_append(b, data, len, &end) : -EIO;
	fxt_writer_free(w);
	if (!err && marks)
		err = mark_spool(fd, b->ino, end);
	if (err < 0) {
		/* Not committed: the batch ends where it did. */
		if (end && ftruncate(b->fd, (off_t)b->len) != 0)
			err = -errno;
		return err;
	}
	convert_batch_commit(b, end, (uint32_t)in->pid, image);
	if (o->consume &&
	    !(o->recycle && o->recycle(o->recycle_ctx, spool_path, marks ? fd : -1) == 0))
		unlink(spool_path);
	return 0;
}

/* Copies the file open as `from` to a new file `path` of mode `mode`. */
static int copy_to(int from, const char *path, mode_t mode)
{
	struct stat sb;
	int to, err = 0;
	uint64_t done = 0;

	if (fstat(from, &sb) != 0)
		return -errno;
	to = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (to < 0)
		return -errno;
	while (!err && done < (uint64_t)sb.st_size) {
		loff_t in = (loff_t)done;
		ssize_t n = copy_file_range(from, &in, to, NULL, (size_t)sb.st_size - done, 0);

		if (n > 0)
			done += (uint64_t)n;
		else if (n == 0 || errno != EINTR)
			err = n < 0 ? -errno : -EIO;
	}
	if (close(to) != 0 && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

/* The archive moved from the file `tmp` that its writer opened to the
 * unnamed file of an early thread (fxt_writer_move_to_fd()): that file
 * takes tmp's name and mode (tmp held nothing).  0 (also when it did not
 * move) or -errno. */
static int name_moved(struct fxt_writer *w, const char *tmp)
{
	int fd = fxt_writer_fd(w), err;
	struct stat named, sb;
	char proc[64];

	if (fd < 0)
		return 0;
	if (stat(tmp, &named) != 0 || fstat(fd, &sb) != 0)
		return -errno;
	if (named.st_dev == sb.st_dev && named.st_ino == sb.st_ino)
		return 0;
	err = fxt_writer_flush(w);
	if (err)
		return err;
	if (fchmod(fd, named.st_mode & 07777) != 0 || unlink(tmp) != 0)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0 ||
	    linkat(fd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0)
		return 0;
	/* No /proc, and no right to link a descriptor: a copy. */
	return copy_to(fd, tmp, named.st_mode & 07777);
}

int convert_spool(const char *spool_path, const char *archive_path, const struct convert_opts *o,
		  struct convert_result *res)
{
	struct session_write *writes = NULL;
	struct conv_thread *threads = NULL;
	size_t nwrites = 0, nthreads = 0;
	struct spool_header *h = NULL;
	char *tmp = NULL;
	struct fxt_symcache *cache, *own_cache = NULL;
	struct fxt_symview *view = NULL;
	struct fxt_symview_module *mods = NULL;
	struct fxt_writer *w = NULL;
	struct spool_seal seal;
	struct conv_input in;
	struct conv_stats st;
	struct stat sb;
	bool marks = false; /* consumed: its header says where it went */
	void *map = MAP_FAILED;
	int fd = -1, err;

	memset(res, 0, sizeof(*res));
	memset(&st, 0, sizeof(st));
	if (o && o->spool_fd && *o->spool_fd >= 0)
		fd = *o->spool_fd; /* the caller's: not closed here */
	else if (o && o->consume)
		marks = (fd = open(spool_path, O_RDWR | O_CLOEXEC)) >= 0;
	if (fd < 0)
		fd = open(spool_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	marks = marks || (o && o->spool_fd && fd == *o->spool_fd && o->consume);
	if (fstat(fd, &sb) != 0) {
		err = -errno;
		goto out_fd;
	}
	err = convert_read_header(fd, &h);
	if (err < 0)
		goto out_fd;

	memset(&in, 0, sizeof(in));
	in.pid = h->pid;
	in.process_name = h->program;
	in.spool_fd = fd;
	in.libc_groups = h->libc_groups;
	in.sample_hz = h->sample_hz;
	in.no_waits = !__atomic_load_n(&h->waited, __ATOMIC_RELAXED);
	in.min_duration_ns = h->min_duration_ns;
	in.snapshot = h->snapshot ? h : NULL;
	in.loc_args = o && o->srcline;
	res->sealed = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == SPOOL_SEALED;
	if (res->sealed) {
		err = read_seal(fd, h, (uint64_t)sb.st_size, &seal, &threads, &nthreads);
		if (err < 0)
			goto out_header;
		/* 0: measured here rather than in the process, which need not
		 * wait for a precise rate at its exit; and now is the point
		 * farthest from its start, the most precise (spool/clock.h). */
		in.ticks_per_second =
		    seal.ticks_per_second ? seal.ticks_per_second : spool_clock_rate(h);
		in.base_ticks = seal.base_ticks;
		in.base_ns = seal.base_ns;
		in.now_ts = seal.now_ts;
		in.lost = seal.lost;
		in.lost_cause = SPOOL_CAUSE_NO_BUFFER;
		in.hook_pair_ticks = seal.hook_pair_ticks;
		in.hook_inside_ticks = seal.hook_inside_ticks;
		in.refill_ticks = seal.refill_ticks;
		in.hook_stub_ticks = seal.hook_stub_ticks;
		in.threads = threads;
		in.nthreads = nthreads;
		in.spool_end = h->seal_off;
	} else {
		in.ticks_per_second = spool_clock_rate(h);
		in.base_ticks = h->start_ticks;
		in.base_ns = h->start_ns;
		in.now_ts = 0; /* open frames close after their thread's last record */
		in.spool_end = (uint64_t)sb.st_size;
		/* The drops the process had counted, as far as it published
		 * them (spool/format.h): at least these were lost; their
		 * instant at the last chunk granted, where a process past its
		 * size limit started dropping. */
		in.lost = __atomic_load_n(&h->dropped_floor, __ATOMIC_RELAXED);
		in.lost_cause = h->drop_cause;
		in.lost_ts = h->last_ticks;
	}
	/* A sealed spool's chunks no longer change, nor does its size: read
	 * where they are (fib(33)'s 365 MB: some 90 ms mapped, 280 ms with
	 * pread's copies, on a busy machine).  Not a killed process's: what
	 * is mapped must stay in the file (a SIGBUS past its end). */
	if (res->sealed && in.spool_end) {
		map = mmap(NULL, (size_t)in.spool_end, PROT_READ, MAP_SHARED, fd, 0);
		if (map != MAP_FAILED) {
			in.spool_map = map;
			in.spool_map_len = in.spool_end;
		}
	}

	/* Symbols: through the run's cache, or one of our own. */
	cache = o && o->cache ? o->cache : (own_cache = fxt_symcache_new());
	mods = calloc(h->nmodules ? h->nmodules : 1, sizeof(*mods));
	for (uint32_t i = 0; mods && i < h->nmodules; i++) {
		mods[i].path = h->modules[i].path;
		mods[i].bias = h->modules[i].bias;
	}
	if (!cache || !mods || fxt_symview_open(&view, cache, mods, h->nmodules) < 0) {
		err = -ENOMEM;
		goto out_threads;
	}
	in.lookup = fxt_symview_lookup;
	in.loc_later = fxt_symview_loc;
	in.lookup_ctx = view;
	in.signature = view_signature;
	in.signature_ctx = view;
	if (fxt_symview_range_of(view, "libfxt-agent.so", &in.agent_lo, &in.agent_hi) < 0)
		in.agent_lo = in.agent_hi = 0;
	/* No session (none given, or nothing was piped): no pipe flows. */
	if (o && o->writes_loaded) {
		in.pipe_writes = o->writes;
		in.npipe_writes = o->nwrites;
	} else if (o && o->session && run_session_load_writes(o->session, &writes, &nwrites) == 0) {
		in.pipe_writes = writes;
		in.npipe_writes = nwrites;
	}

	/* Written under a temporary name, then put in place: a conversion
	 * killed halfway leaves no half archive under the archive's name
	 * (its spool is still there to convert again). */
	if (o && o->early &&
	    early_fits(o->early, fd, h, &in, res->sealed ? seal.ticks_per_second : 0,
		       archive_path)) {
		in.early = o->early->e;
		in.ticks_per_second = o->early->in.ticks_per_second;
	}
	if (o && o->batch) {
		err = convert_to_batch(o, fd, marks, spool_path, &in, h->image ? h->image : 1, &st,
				       res);
		if (err < 0)
			goto out_sym;
		goto done;
	}
	err = convert_partial_name(archive_path, &tmp);
	if (err < 0)
		goto out_sym;
	if (o && o->no_clobber && access(archive_path, F_OK) == 0) {
		err = -EEXIST;
		goto out_sym;
	}
	unsigned flags = FXT_WRITER_NO_CLOBBER | (o && o->serial ? FXT_WRITER_SERIAL : 0);
	err = fxt_writer_open_path(&w, tmp, flags);
	if (err == -EEXIST) {
		unlink(tmp); /* a stale one, from a conversion killed halfway */
		err = fxt_writer_open_path(&w, tmp, flags);
	}
	if (err < 0)
		goto out_sym;
	/* Plain: its buffers written by a thread of their own (compressed,
	 * the writer has its workers already). */
	if (!(flags & FXT_WRITER_SERIAL))
		fxt_writer_compress_parallel(w);
	err = conv_archive(w, &in, &st);
	if (!err)
		err = name_moved(w, tmp);
	res->bytes = fxt_writer_bytes(w);
	{
		int cerr = fxt_writer_close(w);
		if (!err)
			err = cerr;
	}
	/* The spool goes once the archive has its name; a converter killed
	 * between the two leaves both, and the mark says that they are one
	 * (convert_spool_named()). */
	if (!err && marks)
		err = mark_archive(fd, tmp);
	if (!err && o && o->no_clobber)
		err = link(tmp, archive_path) == 0 ? 0 : -errno;
	else if (!err)
		err = rename(tmp, archive_path) == 0 ? 0 : -errno;
	if (err < 0 && marks)
		mark_spool(fd, 0, 0); /* not this archive: tmp goes */
	if (!err && o && o->consume &&
	    !(o->recycle && o->recycle(o->recycle_ctx, spool_path, marks ? fd : -1) == 0)) {
		unlink(spool_path);
		if (o->keep_removed && fd >= 0 && o->keep_removed(o->recycle_ctx, fd) == 0) {
			if (o->spool_fd && *o->spool_fd == fd)
				*o->spool_fd = -1; /* kept: no longer the caller's */
			fd = -1;
		}
	}
	if (err < 0 || (o && o->no_clobber))
		unlink(tmp);
	if (err < 0)
		goto out_sym;
done:
	res->pid = h->pid;
	res->root_pid = h->root_pid;
	res->image = h->image ? h->image : 1;
	{
		uint32_t ex = __atomic_load_n(&h->exited, __ATOMIC_ACQUIRE);
		res->exit_status = !res->sealed && (ex & SPOOL_EXITED) ? (int)(ex & 0xffu) : -1;
	}
	res->filter_included = h->filter_included;
	res->filter_excluded = h->filter_excluded;
	res->events = st.counts.events;
	res->threads = fxt__counts_threads(&st.counts);
	res->dropped = st.counts.dropped;
	/* Every slice is a hook's frame or a libc call's. */
	res->calls = st.events > st.libc_calls ? st.events - st.libc_calls : 0;
	res->records = st.records;
	res->deep = st.deep;
	res->max_depth = st.max_depth;
	res->deep_tid = st.deep_tid;
	res->counts = st.counts;
	memset(&st.counts, 0, sizeof(st.counts));
out_sym:
	fxt__counts_free(&st.counts);
	free(tmp);
	free(writes);
out_threads:
	fxt_symview_close(view);
	fxt_symcache_free(own_cache);
	free(mods);
	free(threads);
out_header:
	if (map != MAP_FAILED)
		munmap(map, (size_t)in.spool_end);
	free(h);
out_fd:
	if (fd >= 0 && !(o && o->spool_fd && *o->spool_fd == fd))
		close(fd);
	return err;
}

void convert_result_free(struct convert_result *res)
{
	fxt__counts_free(&res->counts);
}

/* Whether `path` is the archive the spool's mark names. */
static bool marked_archive(const struct spool_header *h, const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       (uint64_t)sb.st_ino == h->archive_ino && (uint64_t)sb.st_size == h->archive_size;
}

/* Whether the spool's mark names a batch (struct convert_batch) in
 * output's directory that holds its archive (whole, up to the mark): its
 * name into path. */
static bool in_batch(const struct spool_header *h, const char *output, char *path, size_t cap)
{
	const char *slash = strrchr(output, '/');
	char dir[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (!slash || (size_t)(slash - output) >= sizeof(dir))
		return false;
	memcpy(dir, output, (size_t)(slash - output));
	dir[slash - output] = '\0';
	d = opendir(dir[0] ? dir : "/");
	while (d && !found && (de = readdir(d)) != NULL) {
		struct stat sb;
		unsigned n;
		long pid;

		if (!run_archive_parse(output, de->d_name, &pid, &n))
			continue;
		snprintf(path, cap, "%s/%s", dir, de->d_name);
		found = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
			(uint64_t)sb.st_ino == h->archive_ino &&
			(uint64_t)sb.st_size >= h->archive_size;
	}
	if (d)
		closedir(d);
	return found;
}

/* A spool converted already, by a converter killed after the archive got
 * its name and before it removed the spool: its archive, under one of the
 * names convert_spool_named() gives (n == 0: output; else from n on), and
 * in a batch that holds it (in_batch()), and
 * what its header says in res (nothing from the records).  1 (its name in
 * path, its N in *used), or 0: not converted, or that archive is gone. */
static int converted_before(const char *spool_path, int spool_fd, const char *output, long pid,
			    unsigned n, struct convert_result *res, char *path, size_t cap,
			    unsigned *used)
{
	struct spool_header h;
	int fd = spool_fd >= 0 ? spool_fd : open(spool_path, O_RDONLY | O_CLOEXEC);
	bool found = false, ok;

	if (fd < 0)
		return 0;
	ok = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && spool_header_ok(&h) &&
	     h.archive_ino != 0;
	if (fd != spool_fd)
		close(fd);
	if (!ok)
		return 0;
	if (n == 0) {
		snprintf(path, cap, "%s", output);
		found = marked_archive(&h, path);
	}
	for (unsigned tries = 0; n != 0 && tries < 100; tries++, n++) {
		run_archive_name(path, cap, output, pid, n);
		if ((found = marked_archive(&h, path)))
			break;
	}
	if (!found)
		found = in_batch(&h, output, path, cap);
	if (!found)
		return 0;
	memset(res, 0, sizeof(*res));
	res->converted_before = true;
	res->pid = h.pid;
	res->root_pid = h.root_pid;
	res->image = h.image ? h.image : 1;
	res->sealed = h.state == SPOOL_SEALED;
	res->exit_status = !res->sealed && (h.exited & SPOOL_EXITED) ? (int)(h.exited & 0xffu) : -1;
	res->filter_included = h.filter_included;
	res->filter_excluded = h.filter_excluded;
	if (used)
		*used = n;
	return 1;
}

int convert_spool_named(const char *spool_path, const char *output, long pid, unsigned n,
			struct convert_opts *o, struct convert_result *res, char *path, size_t cap,
			unsigned *used)
{
	int err = -EEXIST;

	/* One conversion per spool: the archive of an earlier one is it. */
	if (converted_before(spool_path, o->spool_fd ? *o->spool_fd : -1, output, pid, n, res, path,
			     cap, used)) {
		if (o->consume)
			unlink(spool_path);
		return 0;
	}
	if (n == 0) {
		snprintf(path, cap, "%s", output);
		o->no_clobber = false;
		err = convert_spool(spool_path, path, o, res);
	} else {
		o->no_clobber = true;
		for (unsigned tries = 0; tries < 100 && err == -EEXIST; tries++, n++) {
			run_archive_name(path, cap, output, pid, n);
			err = convert_spool(spool_path, path, o, res);
		}
		n--;
	}
	if (used)
		*used = n;
	return err;
}
