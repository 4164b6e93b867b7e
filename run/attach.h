/* Attaching (fxt-run -p): what fxt-run calls in the agent it loaded into a
 * process already running (launcher/attach/, agent/lifecycle.c).
 *
 * fxt-run borrows a thread of the process, dlopen()s the agent there (whose
 * constructor then stays dormant: the agent sees it came after the C
 * library), writes the settings it would have exported as a block
 * ("NAME=VALUE\0...\0\0", run/settings.h) to a file of its own, and calls
 * FXT_ATTACH_START with that file's path; to detach, FXT_ATTACH_STOP.  Both
 * return 0 or a negative errno, which fxt-run reads back as the call's
 * result. */
#ifndef FXT_RUN_ATTACH_H
#define FXT_RUN_ATTACH_H

#define FXT_ATTACH_START "fxt_attach_start"
#define FXT_ATTACH_STOP	 "fxt_attach_stop"
/* The name (comm) of the agent's own thread while attached, which watches
 * fxt-run: not one of the program's. */
#define FXT_ATTACH_WATCHDOG_NAME "fxt-watchdog"

/* Starts recording with the settings of the block in file `path`: a
 * regular file, not a link, that only root or the process's user could
 * have written.  -EALREADY: the agent was preloaded or started already;
 * -EPERM: the file is not fit; -EINVAL: a malformed block. */
int fxt_attach_start(const char *path);

/* Stops recording: what the features did at the start undone (patched
 * entries written back), the spool sealed.  -EINVAL: not started;
 * -EALREADY: stopped already. */
int fxt_attach_stop(void);

#endif /* FXT_RUN_ATTACH_H */
