/* Attaching (fxt-run -p): what fxt-run calls in the agent it loaded into a
 * process already running (launcher/attach/, agent/lifecycle.c).
 *
 * fxt-run borrows a thread of the process, dlopen()s the agent there (whose
 * constructor then stays dormant: the agent sees it came after the C
 * library), writes the settings it would have exported as a block
 * ("NAME=VALUE\0...\0\0", run/settings.h) to a file of its own, and calls
 * FXT_ATTACH_START with that file's path; to detach, FXT_ATTACH_STOP.
 * The start does its work (patching thousands of functions may take a
 * tenth of a second) on a thread of the agent's, so that the thread
 * borrowed is given back at once: it returns where fxt-run reads how that
 * went (struct fxt_attach_status).  The stop returns 0 or a negative
 * errno, which fxt-run reads back as the call's result. */
#ifndef FXT_RUN_ATTACH_H
#define FXT_RUN_ATTACH_H

#define FXT_ATTACH_START "fxt_attach_start"
#define FXT_ATTACH_STOP	 "fxt_attach_stop"
/* The names (comm) of the agent's own threads while attached: the one that
 * watches fxt-run, and the one that starts recording.  Neither is one of
 * the program's: their names begin with FXT_ATTACH_THREAD_PREFIX. */
#define FXT_ATTACH_THREAD_PREFIX "fxt-"
#define FXT_ATTACH_WATCHDOG_NAME "fxt-watchdog"
#define FXT_ATTACH_STARTER_NAME	 "fxt-starter"
#define FXT_ATTACH_RESTORER_NAME "fxt-restorer" /* gives SIGPROF back (sample) */

/* How a start went, in the process's memory (fxt-run reads it with
 * process_vm_readv()): FXT_ATTACH_STARTING until the starter thread is
 * done, then FXT_ATTACH_RECORDING or a negative errno. */
#define FXT_ATTACH_STARTING  1
#define FXT_ATTACH_RECORDING 2
struct fxt_attach_status {
	int state;
};

/* Starts recording with the settings of the block in file `path`: a
 * regular file, not a link, that only root or the process's user could
 * have written.  The block is read, and the start goes on in a thread of
 * the agent's; returns the address of its status (> 0), or at once
 * -EALREADY: the agent was preloaded (recorded since its start); -EBUSY:
 * recording for another attach; -EPERM: the file is not fit; -EINVAL: a
 * malformed block; another -errno. */
long fxt_attach_start(const char *path);

/* Stops recording: what the features did at the start undone (patched
 * entries written back), the spool sealed.  -EINVAL: not started;
 * -EALREADY: stopped already. */
int fxt_attach_stop(void);

#endif /* FXT_RUN_ATTACH_H */
