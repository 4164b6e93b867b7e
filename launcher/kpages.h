/* fxt-run --kernel's pages (kpages.c): each CPU's pages of the kernel's
 * ring buffer moved out while the program runs, into a file of its own
 * next to the archive, deleted already, and read back in time order a page
 * per CPU at a time.  Private to launcher/kernel.c, which owns the tracing
 * instance and the signals. */
#ifndef FXT_LAUNCHER_KPAGES_H
#define FXT_LAUNCHER_KPAGES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct tracefs_instance;
struct tep_handle;

/* Opens each CPU's trace_pipe_raw of `inst` and a file for its pages next
 * to `out`.  0 or -errno (said).  Call it with fatal signals held off
 * (the raw fds are kpages_release_in_signal()'s once it returns). */
int kpages_open(struct tracefs_instance *inst, const char *out);
bool kpages_is_open(void);

/* Starts fn(arg) in a thread that takes no signal (they stay with
 * fxt-run's main thread: kernel.c's handler); true if it runs.  The
 * reader's, and kernel.c's threads. */
/* A file next to `out` for fxt-run's use, deleted already (O_TMPFILE, else
 * a name with `n` in it removed at once): -1 (errno) or an fd. */
int kpages_file(const char *out, int n);

bool kthread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Starts the reader thread: every 100 ms, and when a CPU's buffer is half
 * full, each CPU's full pages to its file.  kpages_stop() stops it
 * (nothing when it does not run). */
void kpages_start(void);
void kpages_stop(void);

/* Tracing off, the reader stopped: every page left, the partial ones too,
 * to the files.  0 or -errno (said). */
int kpages_drain(void);

/* What the kernel dropped (each CPU's stats: overrun, dropped events). */
uint64_t kpages_lost(struct tracefs_instance *inst);

/* Closes the files of the instance (the reader stopped), so that it can
 * be removed; _in_signal: only the fds, async-signal-safe. */
void kpages_release(void);
void kpages_release_in_signal(void);

/* Every CPU's events to fn(arg, record), merged by time (fn's nonzero
 * stops it: -EIO).  0 or -errno. */
struct tep_record;
int kpages_each(struct tep_handle *tep, int (*fn)(void *arg, struct tep_record *rec), void *arg);

/* Closes everything (kpages_release() included). */
void kpages_close(void);

#endif /* FXT_LAUNCHER_KPAGES_H */
