/* The early conversion: a process's threads converted while it runs (see
 * conv_early_new(), convert/pipeline.h). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "convert/thread.h"
#include "spool/format.h"

/* Threads of a spool converted early at most: each holds some 800 KiB
 * (its writer's buffer, a read block, its reconstruction) until the end,
 * where the archive's conversion holds one thread at a time. */
#define EARLY_MAX_THREADS 16
/* Where a thread's events start in its file: the room before them takes
 * the archive's opening records when its events are the archive's first
 * (conv_early_finish(): the file becomes the archive, nothing is copied).
 * A hole until then; 64 KiB hold the opening records of some 900 threads.
 * What the opening records leave of it becomes padding records, which a
 * file's events cannot be moved over without copying them (or, where the
 * file system can take whole blocks out of a file, without writing the
 * whole file back to disk and out of the page cache first): the events of
 * a file up to CONV_EARLY_COPY_MAX (8 MiB: some 3 ms at the 0.4 ms a MB that
 * fib(33)'s 274 MB took, bench/README.md) are copied instead,
 * so that padding is only in an archive past that, under 1% of it. */
#define EARLY_FRONT (64u << 10)
/* The spool is mapped in windows of this many bytes, from its start: its
 * chunks read where they are (early_map()). */
#define EARLY_MAP_STEP (256ull << 20)

/* A thread converted early: its state and the file its events go to. */
struct early_thread {
	struct thread_state *t; /* NULL: not begun (or handed over) */
	struct fxt_writer *w;
	int fd; /* an unnamed file (O_TMPFILE) next to the archive */
	uint64_t tid;
	uint64_t copy_max; /* the conversion's (conv_early_copy_max()) */
	/* Its first chunk came past EARLY_MAX_THREADS: at the end only. */
	bool never;
};

/* A chunk of the spool as the early conversion last saw it.  Its header
 * is final once it says CHUNK_PLAIN with an owner and a seq below one its
 * thread had already (read after that one): its thread has gone on, so it
 * is neither filled nor staged again (a staged chunk leaves CHUNK_PLAIN
 * before its thread stamps a later seq; a copy is stamped whole; a tail
 * without owner may still be taken).  From then on it is not read again. */
struct early_chunk {
	uint64_t off, size;
	uint64_t tid;	      /* once final */
	uint32_t serial, seq; /* once final */
	bool final;
	bool done; /* fed, a copy of one fed, or never to be fed early */
};

struct conv_early {
	struct conv_input in;
	struct conv_stats st; /* pl.st: unused but for its pointers */
	struct pipeline pl;
	char *dir;		/* where the threads' files go */
	unsigned flags;		/* their compression: the archive's (fxt_writer_path_flags()) */
	struct early_thread *v; /* by serial */
	size_t nv;
	uint32_t *max_seq; /* by serial: the highest seq seen in a chunk */
	struct early_chunk *chunks;
	size_t nchunks, cap;
	/* The chunks not done, by index in file order: those whose header
	 * is not final are read again at each step, the final ones not. */
	size_t *open;
	size_t nopen, capopen;
	uint64_t walked;       /* the chunk chain is known up to here */
	uint64_t fed;	       /* chunks fed */
	size_t nthreads;       /* threads begun */
	uint64_t copy_max;     /* conv_early_copy_max() */
	const uint32_t *yield; /* set: no further chunk this step (conv_early_yield()) */
	int err;	       /* sticky: nothing more is fed */
};

int conv_early_new(struct conv_early **out, const struct conv_input *in, const char *dir,
		   unsigned flags)
{
	struct conv_early *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e || !(e->dir = strdup(dir))) {
		free(e);
		return -ENOMEM;
	}
	e->flags = flags & (FXT_WRITER_GZIP | FXT_WRITER_ZSTD);
	e->in = *in;
	e->in.early = NULL;
	e->in.threads = NULL;
	e->in.nthreads = 0;
	e->in.pipe_writes = NULL;
	e->in.npipe_writes = 0;
	e->in.spool_map = NULL; /* early_map()'s */
	e->in.spool_map_len = 0;
	conv_pipeline_init(&e->pl, NULL, &e->in, &e->st);
	e->walked = SPOOL_HEADER_SIZE;
	e->copy_max = CONV_EARLY_COPY_MAX;
	*out = e;
	return 0;
}

static void early_thread_free(struct early_thread *et)
{
	conv_thread_free(et->t);
	et->t = NULL;
	if (et->w)
		fxt_writer_free(et->w);
	et->w = NULL;
	if (et->fd >= 0)
		close(et->fd);
	et->fd = -1;
}

void conv_early_free(struct conv_early *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nv; i++)
		early_thread_free(&e->v[i]);
	free(e->v);
	free(e->max_seq);
	free(e->chunks);
	free(e->open);
	conv_names_free(&e->pl.em.names);
	if (e->in.spool_map)
		munmap((void *)(uintptr_t)e->in.spool_map, (size_t)e->in.spool_map_len);
	free(e->dir);
	free(e);
}

uint64_t conv_early_fed(const struct conv_early *e)
{
	return e->fed;
}

void conv_early_copy_max(struct conv_early *e, uint64_t bytes)
{
	e->copy_max = bytes;
}

/* The seq of the thread's next chunk to feed. */
static uint32_t et_next(const struct early_thread *et)
{
	return et->t ? et->t->next_seq : 0;
}

/* Room for serial `s` in e->v and e->max_seq. */
static int early_room(struct conv_early *e, uint32_t s)
{
	size_t n = e->nv;

	if (s < n)
		return 0;
	while (n <= s)
		n = n ? 2 * n : 16;
	struct early_thread *v = realloc(e->v, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	e->v = v;
	uint32_t *m = realloc(e->max_seq, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	e->max_seq = m;
	for (size_t i = e->nv; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].fd = -1;
		m[i] = 0;
	}
	e->nv = n;
	return 0;
}

/* Follows the chunk chain past what is known, as far as it is written. */
static int early_walk(struct conv_early *e)
{
	struct stat sb;

	if (fstat(e->in.spool_fd, &sb) != 0)
		return -errno;
	while (e->walked + SPOOL_CHUNK_HEADER_SIZE <= (uint64_t)sb.st_size) {
		struct spool_chunk c;

		if (pread(e->in.spool_fd, &c, sizeof(c), (off_t)e->walked) != (ssize_t)sizeof(c) ||
		    !spool_chunk_ok(&c, e->walked, (uint64_t)sb.st_size))
			break; /* not written yet */
		if (fxt__grow((void **)&e->chunks, &e->cap, e->nchunks + 1, sizeof(*e->chunks)) < 0)
			return -ENOMEM;
		if (fxt__grow((void **)&e->open, &e->capopen, e->nopen + 1, sizeof(*e->open)) < 0)
			return -ENOMEM;
		e->open[e->nopen++] = e->nchunks;
		e->chunks[e->nchunks++] = (struct early_chunk){ .off = e->walked, .size = c.size };
		e->walked += c.size;
	}
	return 0;
}

/* The header of the chunk at `off` (one of e->chunks) as it is now: from
 * the mapping where it reaches it (no system call), else by pread.  0 or
 * -EIO. */
static int early_header(const struct conv_early *e, uint64_t off, struct spool_chunk *c)
{
	if (e->in.spool_map && off + sizeof(*c) <= e->walked &&
	    off + sizeof(*c) <= e->in.spool_map_len) {
		memcpy(c, (const char *)e->in.spool_map + off, sizeof(*c));
		/* Read before the records it vouches for, as pread's were. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		return 0;
	}
	return pread(e->in.spool_fd, c, sizeof(*c), (off_t)off) == (ssize_t)sizeof(*c) ? 0 : -EIO;
}

/* Whether chunk `k`'s header is final (struct early_chunk), read again
 * after max_seq (what it says then holds from now on); keeps what it says
 * if so.  1, 0 (not yet) or -errno. */
static int early_settle(struct conv_early *e, struct early_chunk *k)
{
	struct spool_chunk c;

	if (k->final)
		return 1;
	if (early_header(e, k->off, &c) < 0)
		return -EIO;
	if (!c.serial || c.size != k->size || c.state != CHUNK_PLAIN)
		return 0;
	if (early_room(e, c.serial) < 0)
		return -ENOMEM;
	if (c.seq >= e->max_seq[c.serial])
		return 0;
	k->serial = c.serial;
	k->seq = c.seq;
	k->tid = c.tid;
	k->final = true;
	return 1;
}

/* Feeds chunk `k` if it is whole and its thread's next: its header is
 * final (early_settle()), so it is full and never changes again (a
 * staged chunk is read in its copy).  1: fed, 0: not (yet), or -errno. */
static int early_feed(struct conv_early *e, struct early_chunk *k)
{
	struct early_thread *et;
	struct chunk_ref ref;
	int err = early_settle(e, k);

	if (err <= 0)
		return err;
	et = &e->v[k->serial];
	if (et->never || k->seq < et_next(et)) {
		k->done = true; /* a copy of one fed, or at the end only */
		return 0;
	}
	if (k->seq != et_next(et))
		return 0;
	if (!et->t) {
		/* Not from its start, or too many: at the end only. */
		if (k->seq != 0)
			return 0;
		if (e->nthreads >= EARLY_MAX_THREADS) {
			et->never = true;
			k->done = true;
			return 0;
		}
		e->nthreads++;
		et->fd = open(e->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (et->fd < 0 || lseek(et->fd, EARLY_FRONT, SEEK_SET) < 0)
			return -errno;
		/* Compressed as the archive is, here (at the early
		 * converter's priority): whole members or frames that the
		 * archive's take as they are. */
		err = fxt_writer_open_fd(&et->w, et->fd, e->flags | FXT_WRITER_SERIAL);
		if (err < 0)
			return err;
		et->tid = k->tid;
		err = conv_thread_open(&e->pl, et->w, k->serial, k->tid, &et->t);
		if (err < 0)
			return err;
		et->t->d.st = &et->t->own;
		et->t->em.st = &et->t->own;
		et->t->d.heap = &et->t->own_heap;
	}
	memset(&ref, 0, sizeof(ref));
	ref.off = k->off;
	ref.size = k->size;
	ref.serial = k->serial;
	ref.seq = k->seq;
	ref.tid = k->tid;
	err = conv_replay_chunk(&et->t->d, &ref, et->t->buf, &et->t->mark_ts);
	if (err < 0)
		return err;
	et->t->next_seq++;
	k->done = true;
	e->fed++;
	return 1;
}

/* The chunks known so far mapped, so that they are read where they are,
 * as a sealed spool's are (convert_spool()), not copied by pread (a third
 * of this thread's CPU: bench/README.md, "The tail after the exit").  The
 * window reaches past the file's end, where nothing is read: only whole
 * chunks are.  Nothing may cut the file meanwhile (a SIGBUS): fxt-run
 * recycles no spool the thread may read (early_holds(),
 * launcher/early.h); the process cuts only what is past its chunks.
 * Without a mapping, read with pread. */
static void early_map(struct conv_early *e)
{
	uint64_t len = (e->walked + EARLY_MAP_STEP - 1) / EARLY_MAP_STEP * EARLY_MAP_STEP;
	void *map;

	if (e->walked <= e->in.spool_map_len || len > SIZE_MAX)
		return;
	if (e->in.spool_map)
		munmap((void *)(uintptr_t)e->in.spool_map, (size_t)e->in.spool_map_len);
	map = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, e->in.spool_fd, 0);
	e->in.spool_map = map == MAP_FAILED ? NULL : map;
	e->in.spool_map_len = map == MAP_FAILED ? 0 : len;
}

void conv_early_yield(struct conv_early *e, const uint32_t *flag)
{
	e->yield = flag;
}

/* Whether the step should end before its next chunk (conv_early_yield()). */
static bool early_yields(const struct conv_early *e)
{
	return e->yield && __atomic_load_n(e->yield, __ATOMIC_ACQUIRE);
}

int conv_early_step(struct conv_early *e, unsigned max_chunks)
{
	unsigned fed = 0;
	size_t n = 0;
	int err;

	if (e->err)
		return e->err;
	err = early_walk(e);
	if (!err)
		early_map(e);
	/* Each thread's highest seq so far (a chunk below it is full), from
	 * the headers not final: the new ones, and the few that may change
	 * (staged chunks, tails without owner, threads' newest chunks).  A
	 * final header is below its thread's highest already. */
	for (size_t j = 0; j < e->nopen && !err; j++) {
		const struct early_chunk *k = &e->chunks[e->open[j]];
		struct spool_chunk c;

		if (k->final)
			continue;
		if (early_header(e, k->off, &c) < 0)
			err = -EIO;
		else if (c.serial && (err = early_room(e, c.serial)) == 0 &&
			 c.seq > e->max_seq[c.serial])
			e->max_seq[c.serial] = c.seq;
	}
	/* In the file's order, as long as some thread can go on. */
	for (bool again = true; again && !err && fed < max_chunks;) {
		again = false;
		for (size_t j = 0; j < e->nopen && !err && fed < max_chunks; j++) {
			struct early_chunk *k = &e->chunks[e->open[j]];
			int r;

			if (k->done)
				continue;
			if (fed && early_yields(e)) {
				again = false;
				break;
			}
			r = early_feed(e, k);
			if (r < 0)
				err = r;
			else if (r > 0) {
				fed++;
				again = true;
			}
		}
	}
	/* The chunks done leave the list. */
	for (size_t j = 0; j < e->nopen; j++)
		if (!e->chunks[e->open[j]].done)
			e->open[n++] = e->open[j];
	e->nopen = n;
	if (err < 0)
		e->err = err;
	return err < 0 ? err : (int)fed;
}

/* Adds what a thread's replay counted early to the conversion's. */
static void conv_stats_add(struct conv_stats *st, const struct conv_stats *o)
{
	st->records += o->records;
	st->libc_calls += o->libc_calls;
	st->fn_args += o->fn_args;
	st->fn_args_orphan += o->fn_args_orphan;
	st->flows += o->flows;
	st->log_lines += o->log_lines;
	st->samples += o->samples;
}

/* Thread `th`'s early conversion, handed over to the archive's if it
 * can go on from there as the archive's own would (the same records fed,
 * the drop mark not among them), else NULL (and it is dropped: the
 * archive's conversion does the thread from its start). */
struct early_thread *conv_early_take(struct conv_early *e, struct pipeline *pl,
				     const struct conv_thread *th, const struct chunk_ref *chunks,
				     size_t n, bool first)
{
	struct early_thread *et = th->serial < e->nv ? &e->v[th->serial] : NULL;
	uint64_t done = 0, left = 0;

	if (!et || !et->t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		*(chunks[i].seq < et->t->next_seq ? &done : &left) += chunks[i].size;
	/* Its records before the drop mark only (conv_replay_chunk() did not
	 * look for it); last_ts is past every record fed.  And worth it:
	 * appending the thread's file costs about what writing its events
	 * in place does, some half of converting them (fib(33), perf), so
	 * less than half of it done early is a loss; but the archive's first
	 * thread's file becomes the archive, uncopied (conv_early_finish(),
	 * past copy_max), so any of it done early is a gain, compressed too (its last chunks
	 * are compressed with a worker a core, as the archive's writer
	 * does). */
	if (e->err || et->tid != th->tid || !n || chunks[0].seq != 0 ||
	    conv_drop_mark(pl->in, th) <= et->t->r.last_ts || (!first && done < left)) {
		early_thread_free(et);
		return NULL;
	}
	et->copy_max = e->copy_max;
	return et;
}

/* The rest of an early thread: its chunks from its next seq on, its end,
 * then its file: the archive itself when its events are the archive's
 * first (the opening records go in front of them), else appended. */
int conv_early_finish(struct pipeline *pl, struct early_thread *et, const struct conv_thread *th,
		      const struct chunk_ref *chunks, size_t n, bool first)
{
	struct thread_state *t = et->t;
	uint64_t bytes;
	off_t end;
	int err = 0, moved = -ENOTSUP;

	conv_stats_add(pl->st, &t->own);
	err = conv_heap_take(&pl->heap, &t->own_heap);
	t->d.st = pl->st;
	t->em.st = pl->st;
	t->d.heap = &pl->heap;
	t->d.in = pl->in; /* the archive's: this spool, its end */
	conv_thread_drops(t, pl->in, th);
	/* Compressed on the early converter's thread alone until now; the
	 * rest as the archive's writer compresses. */
	err = fxt_writer_compress_parallel(et->w);
	for (size_t i = 0; i < n && !err; i++)
		if (chunks[i].seq >= t->next_seq)
			err = conv_replay_chunk(&t->d, &chunks[i], t->buf, &t->mark_ts);
	et->t = NULL;
	err = conv_thread_close(pl, t, th, err);
	bytes = fxt_writer_bytes(et->w);
	/* Whole gzip members or zstd frames when compressed. */
	if (!err)
		err = fxt_writer_finish(et->w);
	if (!err && (end = lseek(et->fd, 0, SEEK_CUR)) < (off_t)EARLY_FRONT)
		err = end < 0 ? -errno : -EIO;
	if (!err && first && (uint64_t)end - EARLY_FRONT > et->copy_max)
		moved = fxt_writer_move_to_fd(pl->em.w, et->fd, EARLY_FRONT,
					      (uint64_t)end - EARLY_FRONT, bytes);
	/* Not the first, no more than copy_max bytes, or it could not be
	 * moved (in memory, more opening records than the room): copied. */
	if (!err && moved != 0)
		err = moved == -ENOTSUP || moved == -EAGAIN || moved == -ENOSPC
			  ? fxt_writer_append_fd(pl->em.w, et->fd, EARLY_FRONT,
						 (uint64_t)end - EARLY_FRONT, bytes)
			  : moved;
	early_thread_free(et);
	return err;
}
