/* The launcher's control file: how a traced process knows whether fxt-run
 * will convert its spool.  fxt-run creates "OUT.LPID.run" (LPID: its own
 * pid) holding one byte, RUN_CTL_OPEN, before it starts the program; when
 * the program has exited it writes RUN_CTL_CLOSING, and only then makes
 * its last pass over the spools; at the very end it removes the file.
 *
 * A process seals its spool first, then reads this file (spool/format.h):
 * OPEN, with fxt-run alive, means fxt-run's last pass comes after the
 * seal, so fxt-run converts it; CLOSING, no file, or fxt-run gone means
 * the process converts its own.  Both sides claim the spool by compare
 * and swap of its owner, so it is converted once.
 *
 * The file is RUN_CTL_SIZE bytes: after the state byte, at
 * RUN_BELL_OFF, the drain doorbell and the spare spools (struct run_bell). */
#ifndef FXT_RUN_CONTROL_H
#define FXT_RUN_CONTROL_H

#include <stddef.h>
#include <stdint.h>

enum run_ctl_state {
	RUN_CTL_OPEN = 'o',
	RUN_CTL_CLOSING = 'c',
};

#define RUN_CTL_SIZE 4096u
#define RUN_BELL_OFF 64u
/* fxt-run's batches at most: OUT's stem.LPID.K (run_archive_name(), K from 1). */
#define RUN_BATCHES 8u

/* How a traced process tells fxt-run's drain thread that a staged chunk is
 * full (spool/format.h): it adds one to `word`, and wakes the thread (a
 * futex on the shared mapping) when `waiters` says that it sleeps. */
struct run_bell {
	uint32_t word;
	uint32_t waiters;
	/* Bit k: fxt-run's spare spool file k is there (run/names.h,
	 * run_spare_name()).  fxt-run sets it once the file is in place; a
	 * process clears it (compare and swap) to take that file. */
	uint64_t spares;
	/* fxt-run's batches (convert/convert.h, struct convert_batch): how
	 * much of batch k is whole, for a --recover after fxt-run was killed
	 * (the batch is cut there).  0: no batch k. */
	uint64_t batch_len[RUN_BATCHES];
};

/* Under this many spare spool files left, a process that takes one (or
 * finds none) wakes fxt-run for a pass (agent/spool_make.c), and fxt-run
 * keeps twice as many while processes come (launcher/spares.c). */
#define RUN_SPARES_LOW 8u

/* "OUT.LPID.run". */
void run_ctl_path(char *buf, size_t cap, const char *output, long launcher_pid);

/* Writes `state` into the control file, creating it: 0 or -errno. */
int run_ctl_set(const char *path, enum run_ctl_state state);

/* The state in the control file: RUN_CTL_OPEN, RUN_CTL_CLOSING, or
 * -errno (-ENOENT: fxt-run is done). */
int run_ctl_get(const char *path);

/* The doorbell of the control file at `path`, mapped shared (the
 * mapping holds no descriptor), or NULL. */
struct run_bell *run_bell_map(const char *path);

/* The state of the control file whose doorbell `b` is (mapped from its
 * first byte): as run_ctl_get() reads it.  Inline: a fork child reads it
 * (agent/spool_make.c), and each page of code it runs faults in again. */
static inline int run_bell_state(const struct run_bell *b)
{
	const char *ctl = (const char *)b - RUN_BELL_OFF;

	return __atomic_load_n(ctl, __ATOMIC_ACQUIRE) == RUN_CTL_OPEN ? RUN_CTL_OPEN
								      : RUN_CTL_CLOSING;
}

/* Rings it: no system call unless the drain thread sleeps. */
void run_bell_ring(struct run_bell *b);

#endif /* FXT_RUN_CONTROL_H */
