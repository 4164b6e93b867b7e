/* A process's spool file made, at its first chunk: a spare file of
 * fxt-run's taken (launcher/spares.c makes them) or a new file created,
 * its header written and its first chunk mapped with it.  Apart from
 * spool.c (the file's life under its lock) since this is what a forked
 * child runs at its first record, and what it costs is most of what a
 * short process costs under fxt-run: each page of code or data it touches
 * faults in again in the child, and each call of the C library's too
 * (agent/sys.h).  The other side of the same files is fxt-run's
 * launcher/spares.c. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "agent/log.h"
#include "agent/spool.h"
#include "agent/spool_make.h"
#include "agent/sys.h"
#include "agent/ticks.h"
#include "run/control.h"
#include "run/names.h"
#include "run/proc.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Wakes fxt-run for a pass over the spools when the spare files run low
 * (`left`: the bits of those still there, fewer than RUN_SPARES_LOW): its
 * pass converts the spools
 * of the processes that are gone and makes them spare files again
 * (launcher/spares.c).  Without it fxt-run looked every 50 ms, while a
 * fork loop started some 80 processes: once the 64 slots were taken, one
 * in six made its spool file (a new inode: on ext4 without a journal,
 * hundreds of microseconds), and at the next pass fxt-run removed as many
 * converted spools for want of a free slot.  SIGCHLD is the signal
 * fxt-run waits for (launcher/supervise.c: blocked in all its threads,
 * taken by sigtimedwait()); sent only while the control file says OPEN,
 * that is while fxt-run supervises the program (elsewhere its default is
 * to be ignored). */
static AGENT_FORK_CODE void spares_low(const struct run_bell *b, uint64_t left)
{
	if ((unsigned)__builtin_popcountll(left) < RUN_SPARES_LOW && agent_cfg.launcher_pid > 0 &&
	    run_bell_state(b) == RUN_CTL_OPEN)
		(void)agent_sys(SYS_kill, agent_cfg.launcher_pid, SIGCHLD, 0, 0, 0);
}

/* A spare spool file of fxt-run's (run/names.h) renamed to ours, open in
 * *fd with its status in *st; false if none was there (or it was not
 * fit: it is removed).  A new file costs a new inode, which on some file
 * systems is most of a short process's cost: ext4 without a journal, its
 * inodes freed recently being many, looks at each of them in turn
 * (hundreds of microseconds a file, measured); a spare one is a
 * converted spool's, emptied.  Only fxt-run's own, empty, regular files,
 * ours to write. */
static AGENT_FORK_CODE bool take_spare(struct spool *sp, int *fd, struct stat *st)
{
	char spare[sizeof(sp->path) + 48];
	struct run_bell *b = spool_bell(sp);
	uint64_t have;
	unsigned slot;

	if (!b)
		return false;
	/* Read by a write (an add of 0): in a fork child the doorbell's page
	 * (a shared file mapping, not copied at fork) then faults in once,
	 * writable, rather than for the read and again for the write. */
	have = __atomic_fetch_add(&b->spares, 0, __ATOMIC_ACQUIRE);
	do {
		if (!have) {
			spares_low(b, 0);
			return false;
		}
		slot = (unsigned)__builtin_ctzll(have);
	} while (!__atomic_compare_exchange_n(&b->spares, &have, have & ~(1ull << slot), false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	spares_low(b, have & ~(1ull << slot));
	/* Slot `slot` is ours: nobody else renames it. */
	run_spare_name(spare, sizeof(spare), agent_cfg.output, agent_cfg.launcher_pid, slot);
	/* Made directly (agent/sys.h): a forked child of a process that never
	 * renamed a file (or asked its user) bound renameat2() and geteuid()
	 * lazily, each time, in the loader. */
	if (agent_sys(SYS_renameat2, AT_FDCWD, (long)spare, AT_FDCWD, (long)sp->path,
		      RENAME_NOREPLACE) != 0)
		return false; /* left for fxt-run to remove */
	*fd = (int)agent_sys(SYS_openat, AT_FDCWD, (long)sp->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW,
			     0, 0);
	if (*fd >= 0 && agent_sys_fstat(*fd, st) == 0 && S_ISREG(st->st_mode) &&
	    (st->st_size == 0 || st->st_size == SPOOL_SPARE_SIZE) && st->st_nlink == 1 &&
	    st->st_uid == (uid_t)agent_sys(SYS_geteuid, 0, 0, 0, 0, 0))
		return true;
	if (*fd >= 0)
		agent_sys(SYS_close, *fd, 0, 0, 0, 0);
	unlink(sp->path);
	return false;
}

/* Zeros for the writes that extend the file (spool_extend(), spool_make()). */
static const char zeros[64 << 10];

/* Fills up to `max` entries of iov with `zeros`, for at most `size` bytes;
 * returns the entries used, their bytes in *bytes. */
static int zero_iov(struct iovec *iov, int max, uint64_t size, uint64_t *bytes)
{
	int n = 0;

	*bytes = 0;
	while (n < max && size) {
		uint64_t len = size < sizeof(zeros) ? size : sizeof(zeros);

		iov[n].iov_base = (void *)zeros;
		iov[n++].iov_len = len;
		*bytes += len;
		size -= len;
	}
	return n;
}

/* Writes the bytes of iov[0..n) at `off`, all of them (a short write goes
 * on where it stopped; iov is changed).  0 or -errno. */
static int pwrite_all(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		ssize_t got = pwritev(fd, iov, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		off += (uint64_t)got;
		while (n > 0 && (size_t)got >= iov->iov_len) {
			got -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + got;
			iov->iov_len -= (size_t)got;
		}
	}
	return 0;
}

/* Extends the file by writing zeros rather than ftruncate(): the pages then
 * come into the page cache through the write path, and pre-faulting the
 * mapping finds them there.  Faulting in holes of a sparse file instead
 * goes through read-ahead and page_mkwrite per page, about three times the
 * CPU time per chunk on ext4 (measured; see the agent's notes). */
int spool_extend(int fd, uint64_t off, uint64_t size)
{
	struct iovec iov[16];

	while (size) {
		uint64_t len;
		int n = zero_iov(iov, 16, size, &len), err = pwrite_all(fd, iov, n, off);

		if (err < 0)
			return err;
		off += len;
		size -= len;
	}
	return 0;
}

/* Pre-faults a mapping for writing, so the hot path does not take a page
 * fault per page.  MADV_POPULATE_WRITE (Linux 5.14) does it in one call;
 * older kernels say EINVAL and each page is touched instead. */
AGENT_FORK_CODE void spool_populate(void *p, uint64_t size)
{
	if (agent_sys(SYS_madvise, (long)p, (long)size, MADV_POPULATE_WRITE, 0, 0) != 0) {
		for (uint64_t i = 0; i < size; i += spool_page_size())
			((volatile char *)p)[i] = 0;
	}
}

/* Creates the file and its header; its descriptor in *keep if not NULL
 * (the first grant's: no second open), else closed.  With `first` (not 0),
 * the first chunk's `first` bytes follow the header, mapped with it: *chunk
 * is then their mapping (else NULL), to be stamped by the caller.  A
 * forked child's spool is so made by two writes (the header's first
 * page, built in memory, and the chunk's zeros) and one mapping: no
 * ftruncate() (an inode update: more than the child's records cost), no
 * fault in a hole, no page of the header's unused end.  Its magic is
 * stored last, through the mapping: a reader seeing it sees a complete
 * header.  Called with the lock held. */
AGENT_FORK_CODE int spool_make(struct spool *sp, int *keep, uint64_t first, void **chunk)
{
	struct spool_header h;
	struct iovec iov[4];
	struct stat st;
	uint64_t zbytes, hbytes, msize = sp->nmods * sizeof(sp->mods[0]);
	uint32_t none = 0;
	void *p;
	int fd, n, err;

	_Static_assert(sizeof(h) == SPOOL_HEADER_FIXED, "the header's fixed part");
	_Static_assert(SPOOL_HEADER_SIZE + AGENT_FLOOR_CHUNK_SIZE <= SPOOL_UNBORN_MAX,
		       "a first chunk is at most the floor (next_size())");
	_Static_assert(SPOOL_SPARE_SIZE == SPOOL_HEADER_SIZE + AGENT_FIRST_CHUNK_SIZE,
		       "a spare file holds a forked child's first chunk");
	*chunk = NULL;
	bool spare = take_spare(sp, &fd, &st);
	/* A spare file of zeros with room for this very chunk: nothing to
	 * write, the header stored through the mapping (spool/format.h,
	 * "Creation").  With room for another, emptied first. */
	bool ready = spare && st.st_size == SPOOL_SPARE_SIZE &&
		     first == SPOOL_SPARE_SIZE - SPOOL_HEADER_SIZE;

	if (spare && !ready && st.st_size && ftruncate(fd, 0) != 0)
		goto fail_file;
	if (!spare) {
		fd = open(sp->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0)
			goto fail_file;
	}
	memset(&h, 0, sizeof(h));
	h.version = SPOOL_VERSION;
	h.header_size = SPOOL_HEADER_SIZE;
	h.pid = (uint64_t)agent_sys(SYS_getpid, 0, 0, 0, 0, 0);
	agent_clock_start(&h.start_ticks, &h.start_ns);
	h.clock_tsc = agent_clock_tsc;
	h.libc_groups = agent_cfg.libc_groups;
	h.mode = agent_cfg.mode;
	h.buffer_size = agent_cfg.buffer_size;
	h.filter_included = sp->filter_inc;
	h.filter_excluded = sp->filter_exc;
	h.min_duration_ns = agent_cfg.min_duration_ns;
	h.sample_hz = agent_cfg.sample_hz;
	h.drop_cause = __atomic_load_n(&sp->drop_cause, __ATOMIC_RELAXED);
	h.waited = __atomic_load_n(&sp->waited, __ATOMIC_RELAXED);
	h.root_pid = (uint64_t)agent_cfg.root_pid;
	h.image = agent_cfg.image ? agent_cfg.image : 1;
	/* Under fxt-run, which fills it in when it first sees the spool
	 * (reading /proc/self/stat was a tenth of a forked child's time). */
	if (!agent_cfg.launcher_pid) {
		char state;
		uint64_t t;
		if (run_proc_stat_read(0, &state, &t) == 0)
			h.start_time = t;
	}
	spool_copy_str(h.program, sizeof(h.program), agent_cfg.program);
	h.nmodules = sp->nmods;
	/* The header's pages that hold something, the rest a hole (never
	 * touched: no page of it is ever made); then the chunk, written. */
	hbytes =
	    (sizeof(h) + msize + spool_page_size() - 1) / spool_page_size() * spool_page_size();
	if (hbytes > SPOOL_HEADER_SIZE)
		hbytes = SPOOL_HEADER_SIZE;
	iov[0].iov_base = &h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = sp->mods;
	iov[1].iov_len = msize;
	n = 2 + zero_iov(iov + 2, 2, hbytes - sizeof(h) - msize, &zbytes);
	err = ready ? 0 : pwrite_all(fd, iov, n, 0);
	if (!err && !ready && first && spool_extend(fd, SPOOL_HEADER_SIZE, first) < 0)
		first = 0; /* the usual grant says why (no room, say) */
	/* The whole header, and not what was written of a chunk. */
	if (!err && !first && ftruncate(fd, SPOOL_HEADER_SIZE) != 0)
		err = -errno;
	if (err < 0) {
		errno = -err;
		goto fail_file;
	}
	p = agent_sys_mmap(NULL, SPOOL_HEADER_SIZE + first, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0);
	if (p == MAP_FAILED)
		goto fail_file;
	/* A small first chunk (a process other than the root: a fork child,
	 * an exec'd image) is pre-faulted in its first page only: such a
	 * process records a few hundred bytes, and each page pre-faulted is a
	 * page_mkwrite (ext4: the inode's times updated, its block looked
	 * up) whether it is written or not; MADV_POPULATE_WRITE of the 16
	 * KiB was 4% of a forked child's time.  The rest faults in if it is
	 * written, as a thread's stack does. */
	if (first)
		spool_populate((char *)p + SPOOL_HEADER_SIZE,
			       first <= AGENT_FIRST_CHUNK_SIZE ? spool_page_size() : first);
	if (ready) {
		/* Its magic 0 (h is), stored below. */
		agent_copy(p, &h, sizeof(h));
		agent_copy((char *)p + sizeof(h), sp->mods, msize);
	}
	sp->dev = st.st_dev;
	sp->ino = st.st_ino;
	__atomic_store_n(&sp->hdr, (struct spool_header *)p, __ATOMIC_RELEASE);
	/* A cause noted while the header was being written (no lock). */
	__atomic_compare_exchange_n(&sp->hdr->drop_cause, &none,
				    __atomic_load_n(&sp->drop_cause, __ATOMIC_RELAXED), false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	/* The magic last: a reader seeing it sees a complete header. */
	__atomic_store_n(&sp->hdr->magic, SPOOL_MAGIC, __ATOMIC_RELEASE);
	sp->end = SPOOL_HEADER_SIZE;
	if (first)
		*chunk = (char *)p + SPOOL_HEADER_SIZE;
	if (keep)
		*keep = fd;
	else
		agent_sys(SYS_close, fd, 0, 0, 0, 0);
	agent_dbg("spool %s created%s", sp->path, spare ? " from a spare file of fxt-run's" : "");
	return 0;

fail_file:
	err = -errno;
	close(fd);
	unlink(sp->path);
	return err;
}
