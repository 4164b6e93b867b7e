/* fxt-run's spare spool files (run/names.h, run_bell.spares in
 * run/control.h): a converted spool of a process that is gone kept as a
 * file the run's next processes take for their spool instead of creating
 * one (a new inode each, on some file systems most of a short process's
 * cost), cut and zeroed where the next process reads (SPOOL_SPARE_SIZE,
 * spool/format.h); new ones made after a scan, the stale ones of a killed
 * fxt-run removed.  Apart from spools.c, which converts the spools, since
 * the spare files are a life of their own of the same files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/drain.h"
#include "launcher/early.h"
#include "launcher/launcher.h"
#include "run/control.h"
#include "run/names.h"
#include "run/proc.h"
#include "spool/format.h"

/* At the run's end (spools_finish(): the root is gone), spare files kept
 * or made only for the few processes that may still start: every one
 * left is removed right after (spares_remove()), so a spool recycled then
 * was zeroed and renamed to be removed, and a spare file made then was an
 * inode made and freed for nothing. */
#define SPARES_FINISHING 4u

/* How many spare files are there now. */
static unsigned spares_there(const struct spools *r)
{
	return (unsigned)__builtin_popcountll(__atomic_load_n(&r->bell->spares, __ATOMIC_ACQUIRE));
}

/* Zeros over [off, off + len) of fd: 0 or -errno. */
static int write_zeros(int fd, uint64_t off, size_t len)
{
	static const char zeros[SPOOL_SPARE_SIZE - SPOOL_HEADER_SIZE];

	while (len) {
		ssize_t n =
		    pwrite(fd, zeros, len < sizeof(zeros) ? len : sizeof(zeros), (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Makes the file open at `fd` a spare spool file of SPOOL_SPARE_SIZE bytes
 * (spool/format.h): a converted spool's first bytes overwritten, the rest
 * cut off, rather than the file emptied, so that neither fxt-run frees the
 * blocks nor the process that takes it allocates them again, and that
 * process writes nothing to make its spool.  Zeros over the header's
 * first page (its fixed part, the magic first, and the first modules: the
 * rest of the module list is read only up to the count the next process
 * writes) and over the first chunk's room (records end at a zero slot).
 * Through the descriptor the file was created or converted with: a path
 * opened again costs fxt-run a lookup, an open and a close a process.
 * 0 or -errno. */
static int spare_zero(int fd, bool created)
{
	int err = 0;

	_Static_assert(SPOOL_HEADER_FIXED <= 4096, "the header's fixed part in its first page");
	/* Cut (or, were it shorter, grown: zeros below anyway) without a
	 * stat first. */
	if (!created && ftruncate(fd, SPOOL_SPARE_SIZE) != 0)
		err = -errno;
	if (!err)
		err = write_zeros(fd, 0, 4096);
	if (!err)
		err = write_zeros(fd, SPOOL_HEADER_SIZE, SPOOL_SPARE_SIZE - SPOOL_HEADER_SIZE);
	return err;
}

/* The spare spool file of a free slot: renames `from` there (NULL: creates
 * one) and says that it is there.  0 or -errno (-ENOSPC: no slot free). */
static int spare_put(struct spools *r, const char *from)
{
	uint64_t have = __atomic_load_n(&r->bell->spares, __ATOMIC_ACQUIRE);
	char spare[PATH_MAX + 64];

	for (unsigned slot = 0; slot < RUN_SPARE_SLOTS; slot++) {
		int fd;

		if (have & (1ull << slot))
			continue;
		run_spare_name(spare, sizeof(spare), r->out, r->lpid, slot);
		/* Not there, or taken and not renamed yet: then it fails. */
		if (from) {
			if (renameat2(AT_FDCWD, from, AT_FDCWD, spare, RENAME_NOREPLACE) != 0) {
				if (errno == EEXIST)
					continue;
				return -errno;
			}
		} else {
			int err;

			fd = open(spare, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (fd < 0) {
				if (errno == EEXIST)
					continue;
				return -errno;
			}
			err = spare_zero(fd, true);
			close(fd);
			if (err < 0) {
				unlink(spare);
				return err;
			}
		}
		r->spares_made |= 1ull << slot;
		__atomic_or_fetch(&r->bell->spares, 1ull << slot, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

/* convert_opts.recycle: keeps a converted spool, emptied, as a spare spool
 * file.  Only that of a process no thread of which runs (run_proc_alive()):
 * one sealed before exec, or exiting, may still write into its chunks; a
 * process's forks keep mappings of its chunks, never written.  The drain thread lets go of it
 * first.  0, or -errno: the spool is removed. */
int spares_recycle(void *ctx, const char *path, int fd)
{
	struct spools *r = ctx;
	struct stat sb;
	int own = -1, err;

	if (!r->spares || !r->bell || !r->cur_dead ||
	    (r->finishing && spares_there(r) >= SPARES_FINISHING))
		return -EBUSY;
	/* Every slot taken: not zeroed to be removed all the same (a main
	 * fxt-run ended runs of bench/forkloop 500 with all 64 slots full). */
	if (spares_there(r) >= RUN_SPARE_SLOTS)
		return -ENOSPC;
	/* The early converter may read it through a mapping: never cut. */
	if (early_holds(r->early, path))
		return -EBUSY;
	/* At the end, emptying a large one costs what making a spare does
	 * not (its pages freed now): removed, its pages freed after the run
	 * (spools_keep_removed()). */
	if ((r->finishing || r->cur_last) && (fd >= 0 ? fstat(fd, &sb) : stat(path, &sb)) == 0 &&
	    (uint64_t)sb.st_size >= REMOVED_KEEP_MIN)
		return -EFBIG;
	if (r->drain)
		drain_let_go(r->drain, path);
	if (fd < 0 && (fd = own = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	err = spare_zero(fd, false);
	if (own >= 0)
		close(own);
	return err < 0 ? err : spare_put(r, path);
}

/* After a scan that converted `r->converted` spools while the program
 * runs (it starts processes): spare spool files for as many and 4 more,
 * made here rather than by the processes, on their way, and at most half
 * the slots.  Not twice as many, nor up to every slot: the spools
 * converted at the next scans, recycled, then found every slot taken and
 * were removed, while a scan that converted more made new files again (a
 * file made and a file removed each cost an inode, on ext4 without a
 * journal hundreds of microseconds: the fork loop of bench/forks.sh made
 * 70-250 spare files and removed as many spools).  At the run's end,
 * SPARES_FINISHING at most, and none once no process of the run is
 * seen running (spools_scan(): a file made then would only be removed
 * right after, by spares_remove()). */
void spares_fill(struct spools *r)
{
	unsigned want = r->finishing ? SPARES_FINISHING : r->converted + 4;

	/* Enough that the processes to come wake fxt-run (RUN_SPARES_LOW)
	 * before they run out, its pass then turning the spools of those
	 * gone into spare files again: made once, kept through the run. */
	if (!r->finishing && want < 2 * RUN_SPARES_LOW)
		want = 2 * RUN_SPARES_LOW;

	if (want > RUN_SPARE_SLOTS / 2)
		want = RUN_SPARE_SLOTS / 2;
	while (spares_there(r) < want && spare_put(r, NULL) == 0)
		;
}

/* Removes `name`, in OUT's directory, if it is the spare spool file of an
 * fxt-run that is gone (killed before it removed its own). */
void spares_stale(struct spools *r, const char *name)
{
	char path[PATH_MAX + 64];
	long lpid;

	if (run_spare_parse(r->out, name, &lpid) && lpid != r->lpid && !run_proc_alive(lpid, 0) &&
	    (size_t)snprintf(path, sizeof(path), "%s/%s", r->dir, name) < sizeof(path))
		unlink(path);
}

/* Removes the spare spool files left (those of the slots ever used: not
 * an unlink() of each of the RUN_SPARE_SLOTS names at every run's end),
 * and says none is there. */
void spares_remove(struct spools *r)
{
	char spare[PATH_MAX + 64];

	if (!r->bell || !r->spares_made)
		return;
	__atomic_store_n(&r->bell->spares, 0, __ATOMIC_RELEASE);
	for (unsigned slot = 0; slot < RUN_SPARE_SLOTS; slot++) {
		if (!(r->spares_made & (1ull << slot)))
			continue;
		run_spare_name(spare, sizeof(spare), r->out, r->lpid, slot);
		unlink(spare);
	}
}
