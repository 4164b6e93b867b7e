/* The spool file: chunk grants, recycling, header (see spool.h), and
 * keeping it writable when the process changes user (a held descriptor,
 * fxt-run's doorbell mapped ahead).  One job, the file's whole life in
 * the process, under one lock: one file past 800 lines.  Its making, at
 * the first chunk (what a forked child runs), is spool_make.c's. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agent/ticks.h"
#include "agent/cfg.h"
#include "agent/log.h"
#include "agent/mode.h"
#include "agent/spool.h"
#include "agent/spool_make.h"
#include "agent/sys.h"
#include "agent/tbuf.h"
#include "run/control.h"
#include "run/names.h"
#include "run/proc.h"
#include "spool/stage.h"

/* The spool lock, taken as agent code (busy): the system calls made under
 * it are wrapped ones, which must record nothing (recording could need a
 * chunk, and so this lock).  Counted here rather than trusted to the
 * callers': a fork child made in a signal handler counts from 0 under the
 * code the handler interrupted (agent/lifecycle.c). */
static void lock(struct spool *sp)
{
	agent_tls.busy++;
	pthread_mutex_lock(&sp->lock);
}

static void unlock(struct spool *sp)
{
	pthread_mutex_unlock(&sp->lock);
	agent_busy_leave(&agent_tls);
}

/* `src` into dst[cap], cut to fit: a loop of our own rather than
 * snprintf() or the agent's formatter, whose code and tables a fork child
 * would fault in for this one copy. */
AGENT_FORK_CODE void spool_copy_str(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* The page size, asked once (spool_init()): a fork child has it from its
 * parent rather than faulting in sysconf()'s code and data. */
AGENT_FORK_CODE uint64_t spool_page_size(void)
{
	static uint64_t size;

	if (!size) {
		long pgl = sysconf(_SC_PAGESIZE);
		size = pgl > 0 ? (uint64_t)pgl : 4096;
	}
	return size;
}

/* spool_init() but for the binding of trylock, which a fork child
 * (spool_forget()) has from its parent.  No call into the C library: in a
 * fork child each function's first page faults in again. */
static AGENT_FORK_CODE void reset(struct spool *sp, const char *path, uint64_t chunk_size,
				  uint64_t buffer_size, uint64_t max_size)
{
	memset(sp, 0, offsetof(struct spool, nmods));
	sp->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	spool_copy_str(sp->path, sizeof(sp->path), path);
	sp->chunk_size = chunk_size;
	sp->buffer_size = buffer_size;
	sp->max_size = max_size;
	sp->end = SPOOL_HEADER_SIZE;
	sp->held = -1;
}

void spool_init(struct spool *sp, const char *path, uint64_t chunk_size, uint64_t buffer_size,
		uint64_t max_size)
{
	reset(sp, path, chunk_size, buffer_size, max_size);
	(void)spool_page_size();
	/* Bound now, with the sync wrapper's real function behind it: the
	 * only call of it is spool_mark_exit()'s, at a child's _exit(), which
	 * else bound it and looked the real one up (dlsym) in every child. */
	if (pthread_mutex_trylock(&sp->lock) == 0)
		pthread_mutex_unlock(&sp->lock);
}

/* Whether `fd` is the spool's file. */
static bool is_spool(const struct spool *sp, int fd)
{
	struct stat st;

	return agent_sys_fstat(fd, &st) == 0 && st.st_dev == sp->dev && st.st_ino == sp->ino;
}

/* A copy of the held descriptor (spool_hold()), or -1 if none holds the
 * spool any more (the program closed it, or reused its number: it is then
 * the program's, and only forgotten). */
static int dup_held(struct spool *sp)
{
	int held = __atomic_load_n(&sp->held, __ATOMIC_ACQUIRE), fd;

	if (held < 0)
		return -1;
	fd = fcntl(held, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0 && is_spool(sp, fd))
		return fd;
	if (fd >= 0)
		close(fd);
	__atomic_compare_exchange_n(&sp->held, &held, -1, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
	return -1;
}

/* Opens the spool again, making sure it is still our file.  The agent
 * holds no descriptor between grants, unless the process changed user
 * (spool_hold()): a program that closes every fd, or checks that it has no
 * unexpected one open, never meets ours.  Called with the lock held (or,
 * spool_stage_take(), once the spool exists); the caller closes the fd. */
static int open_checked(struct spool *sp, int flags)
{
	int fd = dup_held(sp);

	if (fd >= 0)
		return fd;
	fd = open(sp->path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (is_spool(sp, fd))
		return fd;
	/* Someone replaced the file: give up rather than write into theirs. */
	close(fd);
	return -ESTALE;
}

/* Closes the held descriptor, if it is still ours. */
static AGENT_FORK_CODE void drop_held(struct spool *sp)
{
	int held = __atomic_exchange_n(&sp->held, -1, __ATOMIC_ACQ_REL);

	if (held >= 0 && is_spool(sp, held))
		close(held);
}

static void header_sync_modules(struct spool *sp)
{
	if (!sp->hdr)
		return;
	memcpy(sp->hdr->modules, sp->mods, sp->nmods * sizeof(sp->mods[0]));
	sp->hdr->nmodules = sp->nmods;
}

static void *map_chunk(int fd, uint64_t off, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED)
		return NULL;
	spool_populate(p, size);
	return p;
}

/* The size of the next new chunk: the configured size while the threads'
 * mapped chunks stay within FXT_BUFFER_SIZE (stream mode: the other modes
 * bound each thread's buffer, spool_chunk_get()'s cap), else halved down
 * to the floor.  A thread's first chunks are smaller (the floor, then a
 * quarter): most processes of a pipeline or a build live a few
 * milliseconds and record a few KiB, and each byte of a chunk is zeroed
 * and faulted in up front.  In a process other than the root (a fork
 * child, an exec'd image), in stream mode, a first chunk is smaller still
 * (AGENT_FIRST_CHUNK_SIZE): writing a forked child's 64 KiB took more of
 * its time than its records.  The root keeps the floor: a program that
 * forbids its spool to grow (RLIMIT_FSIZE) keeps what its main thread
 * records there. */
static AGENT_FORK_CODE uint64_t next_size(const struct spool *sp, uint32_t seq)
{
	uint64_t size = sp->chunk_size;

	if (seq == 0 && size > AGENT_FLOOR_CHUNK_SIZE)
		size = sp->small_first && agent_mode_stream() ? AGENT_FIRST_CHUNK_SIZE
							      : AGENT_FLOOR_CHUNK_SIZE;
	else if (seq == 1 && size / 4 > AGENT_FLOOR_CHUNK_SIZE)
		size /= 4;

	while (agent_mode_stream() && size > AGENT_FLOOR_CHUNK_SIZE &&
	       sp->mapped + size > sp->buffer_size)
		size /= 2;
	return size;
}

/* Whether a chunk of `size` bytes holds enough records to be worth one. */
static bool chunk_worth(uint64_t size)
{
	return size >= spool_page_size() && size >= SPOOL_CHUNK_HEADER_SIZE + SPOOL_RECORD_SIZE * 8;
}

/* The size of a new chunk (at the spool's end) for a thread's chunk
 * `seq`, within `cap` (0: none) and max_size, in *size; or -ENOSPC when
 * what is left is too little for one. */
static AGENT_FORK_CODE int new_size(const struct spool *sp, uint32_t seq, uint64_t cap,
				    uint64_t *size)
{
	uint64_t s = next_size(sp, seq);

	if (cap && s > cap) {
		/* The rest of the thread's buffer. */
		s = cap / spool_page_size() * spool_page_size();
		if (!chunk_worth(s))
			return -ENOSPC;
	}
	if (sp->max_size && sp->granted + s > sp->max_size) {
		/* The last bytes under the bound: a smaller chunk, down to one
		 * page, so that a bound below one chunk keeps the first
		 * max_size bytes rather than nothing. */
		uint64_t left = sp->max_size > sp->granted ? sp->max_size - sp->granted : 0;

		s = left / spool_page_size() * spool_page_size();
		if (!chunk_worth(s))
			return -ENOSPC;
	}
	*size = s;
	return 0;
}

/* Under the lock: 0 when the spool can take records, created on first
 * use (its descriptor then in *keep, if not NULL: else *keep is -1; and
 * with `first`, the first chunk made with it: spool_make()); else why not
 * (-ESHUTDOWN once closed, or the error that failed it, kept so that it
 * is said once). */
static AGENT_FORK_CODE int usable(struct spool *sp, int *keep, uint64_t first, void **chunk)
{
	int err;

	*chunk = NULL;
	if (keep)
		*keep = -1;
	if (sp->closed || sp->failed)
		return sp->closed ? -ESHUTDOWN : sp->failed;
	if (sp->hdr)
		return 0;
	err = spool_make(sp, keep, first, chunk);
	if (err < 0) {
		sp->failed = err;
		agent_dbg("cannot create spool %s: %s", sp->path, strerror(-err));
	}
	return err;
}

AGENT_FORK_CODE int spool_chunk_get(struct spool *sp, uint32_t serial, uint64_t tid, uint32_t seq,
				    uint64_t cap, struct spool_map *out)
{
	uint64_t off, size = 0;
	struct spool_chunk *c;
	void *p;
	int fd = -1, err = 0;

	lock(sp);
	/* The process's first chunk is made with its spool, in the same
	 * write and mapping (spool_make()). */
	if (!sp->hdr && !sp->closed && !sp->failed && new_size(sp, seq, cap, &size) < 0)
		size = 0;
	err = usable(sp, &fd, size, &p);
	if (err < 0)
		goto out;
	if (fd < 0)
		fd = open_checked(sp, O_RDWR);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	if (p) {
		off = SPOOL_HEADER_SIZE;
		sp->end += size;
		sp->granted += size;
	} else if (sp->nfree && (!cap || sp->free_list[sp->nfree - 1].size <= cap)) {
		/* A recycled tail: already in the file and counted in granted. */
		sp->nfree--;
		off = sp->free_list[sp->nfree].off;
		size = sp->free_list[sp->nfree].size;
	} else {
		err = new_size(sp, seq, cap, &size);
		if (err < 0)
			goto out;
		off = sp->end;
		err = spool_extend(fd, off, size);
		if (err < 0) {
			/* Leave no partial chunk behind the chain's end. */
			if (ftruncate(fd, (off_t)off) < 0)
				agent_dbg("spool truncation failed: %s", strerror(errno));
			goto out;
		}
		sp->end += size;
		sp->granted += size;
	}
	if (!p)
		p = map_chunk(fd, off, size);
	if (!p) {
		err = -errno;
		/* Keep the space for someone else. */
		if (sp->nfree < sizeof(sp->free_list) / sizeof(sp->free_list[0])) {
			sp->free_list[sp->nfree].off = off;
			sp->free_list[sp->nfree].size = size;
			sp->nfree++;
		}
		goto out;
	}
	sp->mapped += size;
	sp->hdr->last_ns = agent_mono_ns();
	sp->hdr->last_ticks = agent_ticks();
	c = p;
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->serial = serial;
	c->seq = seq;
	c->tid = tid;
	__atomic_store_n(&c->magic, SPOOL_CHUNK_MAGIC, __ATOMIC_RELEASE);
	out->base = p;
	out->off = off;
	out->size = size;
out:
	if (fd >= 0)
		agent_sys(SYS_close, fd, 0, 0, 0, 0);
	unlock(sp);
	return err;
}

void spool_chunk_name(struct spool *sp, const struct spool_map *m, uint64_t *name_off)
{
	struct spool_chunk *c = m->base;
	char name[sizeof(c->name)] = "";

	lock(sp);
	/* Not prctl(): the agent wraps prctl (wrap_thread.c), and its first
	 * call would resolve the real one, with dlsym, under our lock. */
	if (agent_sys(SYS_prctl, PR_GET_NAME, (long)name, 0, 0, 0) != 0)
		name[0] = '\0';
	name[sizeof(name) - 1] = '\0';
	memcpy(c->name, name, sizeof(name));
	*name_off = m->off;
	unlock(sp);
}

int spool_chunk_rename(struct spool *sp, const uint64_t *name_off, const char *name)
{
	char buf[sizeof(((struct spool_chunk *)0)->name)] = "";
	ssize_t n;
	int fd, err = 0;

	strncpy(buf, name, sizeof(buf) - 1);
	lock(sp);
	if (sp->closed || sp->failed || !sp->hdr || !*name_off)
		goto out;
	fd = open_checked(sp, O_RDWR);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	n = pwrite(fd, buf, sizeof(buf), (off_t)(*name_off + offsetof(struct spool_chunk, name)));
	if (n != (ssize_t)sizeof(buf))
		err = n < 0 ? -errno : -EIO;
	close(fd);
out:
	unlock(sp);
	return err;
}

/* The drain doorbell of the fxt-run that converts us, mapped at the first
 * use; NULL without one.  Called with the lock held. */
AGENT_FORK_CODE struct run_bell *spool_bell(struct spool *sp)
{
	char ctl[PATH_MAX + 64];

	if (agent_cfg.launcher_pid > 0 &&
	    (!sp->bell_tried || sp->bell_lpid != agent_cfg.launcher_pid)) {
		sp->bell_tried = true;
		sp->bell_lpid = agent_cfg.launcher_pid;
		run_ctl_path(ctl, sizeof(ctl), agent_cfg.output, agent_cfg.launcher_pid);
		/* Read without the lock by refill() (agent/tbuf.c). */
		__atomic_store_n(&sp->bell, run_bell_map(ctl), __ATOMIC_RELEASE);
	}
	return sp->bell;
}

int spool_hold(struct spool *sp)
{
	void *chunk;
	int fd, err = 0;

	lock(sp);
	err = usable(sp, NULL, 0, &chunk);
	if (err < 0)
		goto out;
	spool_bell(sp);
	if (__atomic_load_n(&sp->held, __ATOMIC_ACQUIRE) >= 0) {
		fd = dup_held(sp);
		if (fd >= 0) {
			close(fd);
			goto out;
		}
	}
	fd = open_checked(sp, O_RDWR);
	if (fd < 0)
		err = fd;
	else
		__atomic_store_n(&sp->held, fd, __ATOMIC_RELEASE);
out:
	unlock(sp);
	return err;
}

int spool_launcher_state(struct spool *sp)
{
	char ctl[PATH_MAX + 64];
	struct run_bell *b;

	lock(sp);
	b = spool_bell(sp);
	unlock(sp);
	if (b)
		return run_bell_state(b);
	run_ctl_path(ctl, sizeof(ctl), agent_cfg.output, agent_cfg.launcher_pid);
	return run_ctl_get(ctl);
}

#define EXT4_MAGIC 0xEF53 /* statfs f_type of ext2, ext3 and ext4 alike */

/* Under the lock: reserves the place of a staged chunk's copy, `size`
 * bytes at `off` of the spool open as `fd` (its end): the file extended
 * over it, and a chunk header without owner (readers skip it) at its
 * start.  On ext4 its blocks are allocated at once (fallocate(), one
 * extent): a buffered write into new space reserves each 4 KiB block one
 * at a time (delayed allocation), which was a third of the copy's system
 * time (372 MB in 512 KiB writes: 0.113 -> 0.083 s); elsewhere (tmpfs
 * would zero the pages) and where that fails (no space) the place is a
 * hole, as it was.  0 or -errno; on failure the file may end past `off`. */
static int reserve_copy(struct spool *sp, int fd, uint64_t off, uint64_t size)
{
	struct spool_chunk dest;

	if (!sp->fs_known) {
		struct statfs sf;

		sp->fs_known = true;
		sp->fs_alloc = fstatfs(fd, &sf) == 0 && sf.f_type == EXT4_MAGIC;
	}
	if (!sp->fs_alloc || fallocate(fd, 0, (off_t)off, (off_t)size) != 0) {
		if (ftruncate(fd, (off_t)(off + size)) != 0)
			return -errno;
	}
	memset(&dest, 0, sizeof(dest));
	dest.magic = SPOOL_CHUNK_MAGIC;
	dest.size = size;
	if (pwrite(fd, &dest, sizeof(dest), (off_t)off) != (ssize_t)sizeof(dest))
		return errno ? -errno : -EIO;
	return 0;
}

int spool_stage_full(struct spool *sp, struct spool_map *m)
{
	struct spool_chunk *c = m->base;
	struct run_bell *b;
	uint64_t off;
	int fd, err;

	lock(sp);
	if (sp->closed || sp->failed) {
		err = sp->closed ? -ESHUTDOWN : sp->failed;
		goto out;
	}
	if (sp->max_size && sp->granted + m->size > sp->max_size) {
		err = -ENOSPC; /* spool_chunk_get() grants what is left */
		goto out;
	}
	fd = open_checked(sp, O_RDWR);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	/* The copy's place: a chunk without owner (readers skip it) until
	 * the copy is whole. */
	off = sp->end;
	err = reserve_copy(sp, fd, off, m->size);
	if (err < 0) {
		if (ftruncate(fd, (off_t)off) < 0)
			agent_dbg("spool truncation failed: %s", strerror(errno));
		close(fd);
		goto out;
	}
	close(fd);
	sp->end += m->size;
	sp->granted += m->size;
	sp->hdr->last_ns = agent_mono_ns();
	sp->hdr->last_ticks = agent_ticks();
	c->dest = off;
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == CHUNK_PLAIN) {
		/* Staged from now on: linked where the drain thread looks. */
		c->next_staged = sp->hdr->first_staged;
		__atomic_store_n(&sp->hdr->first_staged, m->off, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&c->state, CHUNK_FULL, __ATOMIC_RELEASE);
	b = spool_bell(sp);
	unlock(sp);
	if (b)
		run_bell_ring(b);
	return 0;
out:
	unlock(sp);
	return err;
}

/* How long a thread waits for the drain thread to finish copying the
 * chunk it needs next, before it takes a fresh one instead. */
#define TAKE_WAIT_NS (20u * 1000 * 1000)

int spool_stage_take(struct spool *sp, struct spool_map *m, uint32_t seq)
{
	struct spool_chunk *c = m->base;
	uint64_t *first = (uint64_t *)((char *)m->base + SPOOL_CHUNK_HEADER_SIZE);
	uint64_t deadline = 0;
	int fd, err;

	for (;;) {
		uint32_t state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);

		if (state == CHUNK_COPIED)
			break;
		if (state == CHUNK_FULL && spool_chunk_claim(c, CHUNK_FULL, CHUNK_COPYING)) {
			/* Not copied yet: copy it ourselves.  dev and ino are
			 * fixed once the spool exists: no lock needed. */
			fd = open_checked(sp, O_RDWR);
			err = fd < 0 ? fd : spool_stage_copy(fd, c, m->off, m->base);
			if (fd >= 0)
				close(fd);
			__atomic_store_n(&c->state, err < 0 ? CHUNK_FULL : CHUNK_COPIED,
					 __ATOMIC_RELEASE);
			if (err < 0)
				return err;
			break;
		}
		if (state != CHUNK_COPYING)
			return -EINVAL;
		/* The drain thread is at it: a copy takes well under a
		 * millisecond, unless it was stopped or killed meanwhile. */
		if (!deadline)
			deadline = agent_mono_ns() + TAKE_WAIT_NS;
		else if (agent_mono_ns() > deadline)
			return -EBUSY;
		sched_yield();
	}
	/* Empty first (the records end at the first zero slot), then the new
	 * seq, then the rest of the old records, so that no moment of a
	 * killed process shows old records under the new seq: until the seq
	 * changes, readers take the copy (the later of the two). */
	__atomic_store_n(&first[1], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&first[0], 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&c->seq, seq, __ATOMIC_RELEASE);
	c->dest = 0;
	__atomic_store_n(&c->state, CHUNK_FILLING, __ATOMIC_RELEASE);
	memset(first + 2, 0, m->size - SPOOL_CHUNK_HEADER_SIZE - SPOOL_RECORD_SIZE);
	return 0;
}

uint64_t spool_ring_reuse(struct spool *sp, struct spool_map *m, uint32_t seq, uint64_t overwritten)
{
	struct spool_chunk *c = m->base;
	uint64_t *p = (uint64_t *)((char *)m->base + SPOOL_CHUNK_HEADER_SIZE);
	uint64_t n = (m->size - SPOOL_CHUNK_HEADER_SIZE) / SPOOL_RECORD_SIZE, calls = 0;

	/* The calls it held: hook enters, PAIRs, libc calls' enters and ONCE
	 * records. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t w1 = p[2 * i + 1];
		unsigned tag = ev_tag(w1);
		calls += w1 && !(w1 & SPOOL_EXIT_BIT) &&
			 (tag == EV_TAG_NONE || tag == EV_TAG_CALL || tag == EV_TAG_HOOKV ||
			  tag == EV_TAG_ONCE || ev_is_pair(w1));
		i += ev_raw_slots(w1); /* RAW slots: payload */
	}
	/* Emptied before the new seq, so that no moment of a killed process
	 * shows old records under it (a reader skips zero slots). */
	memset(p, 0, n * SPOOL_RECORD_SIZE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->overwritten = overwritten + calls;
	c->state = CHUNK_PLAIN;
	__atomic_store_n(&c->seq, seq, __ATOMIC_RELEASE);
	lock(sp);
	if (sp->hdr) {
		sp->hdr->last_ns = agent_mono_ns();
		sp->hdr->last_ticks = agent_ticks();
	}
	unlock(sp);
	return calls;
}

void spool_chunk_put(struct spool *sp, struct spool_map *m, uint64_t used, bool recycle)
{
	uint64_t pg = spool_page_size();
	uint64_t keep = (used + pg - 1) / pg * pg;

	if (!m->base)
		return;
	lock(sp);
	if (recycle && !sp->closed && keep + SPOOL_RECYCLE_MIN <= m->size &&
	    sp->nfree < sizeof(sp->free_list) / sizeof(sp->free_list[0])) {
		struct spool_chunk *c = m->base;
		struct spool_chunk *tail = (void *)((char *)m->base + keep);
		/* The tail is zeros (never written): stamp it as an unowned
		 * chunk first, then shrink ours, so that a reader walking the
		 * chain always sees a consistent one. */
		memset(tail, 0, sizeof(*tail));
		tail->size = m->size - keep;
		tail->serial = 0; /* no owner yet: no records */
		__atomic_store_n(&tail->magic, SPOOL_CHUNK_MAGIC, __ATOMIC_RELEASE);
		__atomic_store_n(&c->size, keep, __ATOMIC_RELEASE);
		sp->free_list[sp->nfree].off = m->off + keep;
		sp->free_list[sp->nfree].size = m->size - keep;
		sp->nfree++;
	}
	sp->mapped -= m->size;
	unlock(sp);
	agent_unmap(m->base, m->size);
	m->base = NULL;
}

int spool_add_module(struct spool *sp, const char *path, uint64_t bias, uint64_t base)
{
	int ret = 1;

	lock(sp);
	for (unsigned i = 0; i < sp->nmods; i++) {
		if (sp->mods[i].bias == bias &&
		    strncmp(sp->mods[i].path, path, sizeof(sp->mods[i].path)) == 0) {
			ret = 0;
			goto out;
		}
	}
	if (sp->nmods >= SPOOL_MAX_MODULES) {
		ret = -ENOSPC;
		goto out;
	}
	sp->mods[sp->nmods].bias = bias;
	sp->mods[sp->nmods].base = base;
	snprintf(sp->mods[sp->nmods].path, sizeof(sp->mods[0].path), "%s", path);
	sp->nmods++;
	header_sync_modules(sp);
out:
	unlock(sp);
	return ret;
}

void spool_set_filter_counts(struct spool *sp, uint32_t included, uint32_t excluded)
{
	lock(sp);
	sp->filter_inc = included;
	sp->filter_exc = excluded;
	if (sp->hdr) {
		sp->hdr->filter_included = included;
		sp->hdr->filter_excluded = excluded;
	}
	unlock(sp);
}

void spool_note_cause(struct spool *sp, uint32_t cause)
{
	struct spool_header *h = __atomic_load_n(&sp->hdr, __ATOMIC_ACQUIRE);
	uint32_t none = 0;

	if (!cause)
		return;
	/* Both: a header being created meanwhile copies sp's. */
	__atomic_compare_exchange_n(&sp->drop_cause, &none, cause, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	none = 0;
	if (h)
		__atomic_compare_exchange_n(&h->drop_cause, &none, cause, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
}

void spool_note_waited(struct spool *sp)
{
	struct spool_header *h = __atomic_load_n(&sp->hdr, __ATOMIC_ACQUIRE);

	/* Both: a header being created meanwhile copies sp's.  Read
	 * first: a store at each wait would move the line between cores. */
	if (!__atomic_load_n(&sp->waited, __ATOMIC_RELAXED))
		__atomic_store_n(&sp->waited, 1, __ATOMIC_RELAXED);
	if (h && !__atomic_load_n(&h->waited, __ATOMIC_RELAXED))
		__atomic_store_n(&h->waited, 1, __ATOMIC_RELAXED);
}

uint64_t spool_close_grants(struct spool *sp)
{
	uint64_t end;

	lock(sp);
	sp->closed = true;
	end = sp->hdr ? sp->end : 0;
	unlock(sp);
	return end;
}

int spool_seal(struct spool *sp, const struct spool_seal *seal,
	       const struct spool_seal_thread *threads)
{
	struct iovec iov[2];
	uint64_t off, want;
	ssize_t got;
	int fd, err = 0;

	lock(sp);
	if (!sp->hdr && !sp->failed) {
		void *chunk;

		err = spool_make(sp, NULL, 0, &chunk); /* nothing recorded: a spool all the same */
		if (err < 0) {
			sp->failed = err;
			goto out;
		}
	}
	if (!sp->hdr) {
		err = -EIO;
		goto out;
	}
	fd = open_checked(sp, O_RDWR);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	off = sp->end;
	iov[0].iov_base = (void *)seal;
	iov[0].iov_len = sizeof(*seal);
	iov[1].iov_base = (void *)threads;
	iov[1].iov_len = seal->nthreads * sizeof(*threads);
	want = iov[0].iov_len + iov[1].iov_len;
	do
		got = pwritev(fd, iov, seal->nthreads ? 2 : 1, (off_t)off);
	while (got < 0 && errno == EINTR);
	if (got < 0 || (uint64_t)got != want) {
		err = got < 0 ? -errno : -ENOSPC;
		/* No half trailer: the spool stays as a killed process's. */
		if (ftruncate(fd, (off_t)off) < 0)
			agent_dbg("spool truncation failed: %s", strerror(errno));
	}
	close(fd);
	if (err)
		goto out;
	sp->hdr->seal_off = off;
	/* Sequentially consistent: the owner is read after this (format.h). */
	__atomic_store_n(&sp->hdr->state, SPOOL_SEALED, __ATOMIC_SEQ_CST);
out:
	unlock(sp);
	return err;
}

int spool_fd(struct spool *sp)
{
	int fd;

	lock(sp);
	fd = sp->hdr ? open_checked(sp, O_RDONLY) : -ENOENT;
	unlock(sp);
	return fd;
}

AGENT_FORK_CODE void spool_mark_exit(struct spool *sp, int status)
{
	/* Under the lock, which the header's unmapping takes: another thread
	 * sealing at this moment must not unmap it under our store.  Held
	 * by this very thread (a handler that interrupted a grant) or by
	 * another for long: no mark, and the summary says less. */
	for (int i = 0; i < 64; i++) {
		if (pthread_mutex_trylock(&sp->lock) == 0) {
			if (sp->hdr && !sp->closed)
				__atomic_store_n(&sp->hdr->exited,
						 SPOOL_EXITED | ((uint32_t)status & 0xffu),
						 __ATOMIC_RELEASE);
			pthread_mutex_unlock(&sp->lock);
			return;
		}
		sched_yield();
	}
}

int spool_destroy(struct spool *sp)
{
	int err = 0;

	lock(sp);
	if (sp->hdr) {
		if (unlink(sp->path) != 0 && errno != ENOENT) {
			err = -errno;
			goto out;
		}
		agent_unmap(sp->hdr, SPOOL_HEADER_SIZE);
		sp->hdr = NULL;
	}
	drop_held(sp);
	sp->closed = true;
	sp->bell_lpid = 0; /* a fork child, or a next window, maps it again */
out:
	unlock(sp);
	return err;
}

void spool_release(struct spool *sp)
{
	lock(sp);
	if (sp->hdr) {
		agent_unmap(sp->hdr, SPOOL_HEADER_SIZE);
		sp->hdr = NULL;
	}
	/* fxt-run's control file, which it removes at its end: anonymous
	 * memory in its place (a refill may still ring the bell), so that a
	 * process attached to, which runs on, keeps no mapping of it. */
	if (sp->bell && mmap((char *)sp->bell - RUN_BELL_OFF, RUN_CTL_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		agent_dbg("cannot let go of fxt-run's control file: %s", strerror(errno));
	sp->bell_lpid = 0; /* a fork child, or a next window, maps it again */
	drop_held(sp);
	sp->closed = true;
	unlock(sp);
}

AGENT_FORK_CODE void spool_forget(struct spool *sp, const char *path)
{
	unsigned nmods = sp->nmods;
	struct run_bell *b = sp->bell;
	long lpid = sp->bell_lpid;
	bool tried = sp->bell_tried;

	drop_held(sp);
	if (sp->hdr)
		agent_unmap(sp->hdr, SPOOL_HEADER_SIZE);
	reset(sp, path, sp->chunk_size, sp->buffer_size, sp->max_size);
	/* The module list stays valid: the child has the same mappings; so
	 * does the doorbell (shared), while it is the same fxt-run's. */
	sp->nmods = nmods;
	sp->bell = b;
	sp->bell_lpid = lpid;
	sp->bell_tried = tried;
}
