/* The names of a run's files, next to its archive OUT (FXT_OUTPUT, the
 * root's archive): the one owner of them, for the agent (which creates
 * them) and fxt-run (which finds, converts and removes them).
 *
 *   OUT                    the root's archive (the merged one, under fxt-run)
 *   OUT's stem.PID[.N]EXT  the archive of process PID (image N, N > 1),
 *                          ".PID" inserted before the extension (".fxt.gz",
 *                          ".fxt.zst" count as one), or appended when there is none
 *   OUT.PID.spool          the spool of process PID's first image
 *   OUT.PID.N.spool        ... and of its image N (after N - 1 execs)
 *   OUT.ROOT.session       the session shared by the run's processes
 *                          (run/session.h)
 *   OUT.LPID.run           fxt-run's control file (run/control.h)
 *   OUT's stem.snapN EXT   snapshot N of the run (fxt-run --snapshot-if),
 *                          ".snapN" inserted as ".PID" is
 *   OUT.snapN.spool        ... its spool, until it is converted
 *   OUT.LPID.spare.K       a spare spool file of fxt-run's (pid LPID):
 *                          a converted spool's inode, empty, which the
 *                          next process takes for its spool by renaming
 *                          it (K < RUN_SPARE_SLOTS; run_spare_name())
 *
 * OUT itself may be a template (fxt-run -o, FXT_OUTPUT): run_output_expand()
 * makes the name, once per run, from
 *   %p  the root process's pid       %t  the run's start, UTC, YYYYmmdd-HHMMSS
 *   %n  the program's name           %h  the host's name
 *   %%  a '%'
 * and the name is passed on to the run's processes escaped
 * (run_output_escape()), so that every one of them expands it to itself.
 *
 * Both ways: the formatters make the names, the parsers read them back
 * (fxt-run, which finds a run's files in OUT's directory).  None uses
 * malloc or stdio: the agent calls the formatters in fork children. */
#ifndef FXT_RUN_NAMES_H
#define FXT_RUN_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* The values of a template's escapes. */
struct run_template_values {
	long pid;	     /* %p */
	long long start;     /* %t: seconds since the Epoch */
	const char *program; /* %n: a name without '/' */
	const char *host;    /* %h */
};

/* Expands the template `tmpl` into buf (NUL-terminated).  Returns 0,
 * -EINVAL for a '%' followed by anything else than the escapes above (at
 * *bad, which may be NULL: the offending character, or 0 at the end of
 * the template), -ENAMETOOLONG when buf is too small. */
int run_output_expand(char *buf, size_t cap, const char *tmpl, const struct run_template_values *v,
		      char *bad);

/* `name` with each '%' doubled, a template that expands to `name`.
 * Returns 0 or -ENAMETOOLONG. */
int run_output_escape(char *buf, size_t cap, const char *name);

/* The files named after OUT and one pid: OUT.PID + suffix. */
#define RUN_SESSION_SUFFIX ".session" /* PID: the root's (run/session.h) */
#define RUN_CONTROL_SUFFIX ".run"     /* PID: fxt-run's (run/control.h) */

/* Where run_archive_name() inserts ".PID": the length of `output` without
 * its extension. */
size_t run_archive_stem(const char *output);

/* The archive of process `pid` (n = 1), or of its image n > 1. */
void run_archive_name(char *buf, size_t cap, const char *output, long pid, unsigned n);

/* The spool of image `image` (1 = the first) of process `pid`. */
void run_spool_name(char *buf, size_t cap, const char *output, long pid, unsigned image);

/* OUT.PID + suffix (RUN_SESSION_SUFFIX, RUN_CONTROL_SUFFIX). */
void run_pid_file_name(char *buf, size_t cap, const char *output, long pid, const char *suffix);

/* Spare spool files, slot < RUN_SPARE_SLOTS: which are there is said by
 * the bits of run_bell.spares (run/control.h). */
#define RUN_SPARE_SLOTS 64u
void run_spare_name(char *buf, size_t cap, const char *output, long launcher_pid, unsigned slot);

/* Snapshot n's archive (`spool` false) or spool (true). */
void run_snapshot_name(char *buf, size_t cap, const char *output, unsigned n, bool spool);

/* The parsers take a file's basename, `name`, and say whether it is that
 * file of the run of `output`, and of which process.  Numbers are decimal
 * digits that fit an unsigned int. */

/* An archive of a process other than the root, run_archive_name()'s
 * STEM.PID[.N]EXT: sets *pid and *n (1 without ".N"). */
bool run_archive_parse(const char *output, const char *name, long *pid, unsigned *n);

/* A spool, run_spool_name()'s OUT.PID[.N].spool: sets *pid and *image (1
 * without ".N"). */
bool run_spool_parse(const char *output, const char *name, long *pid, unsigned *image);

/* OUT.PID + suffix: sets *pid. */
bool run_pid_file_parse(const char *output, const char *name, const char *suffix, long *pid);

/* A snapshot's archive, run_snapshot_name()'s STEM.snapN EXT: sets *n. */
bool run_snapshot_parse(const char *output, const char *name, unsigned *n);

/* A snapshot's spool, OUT.snapN.spool: sets *n. */
bool run_snapshot_spool_parse(const char *output, const char *name, unsigned *n);

/* A spare spool file, run_spare_name()'s OUT.LPID.spare.K: sets
 * *launcher_pid. */
bool run_spare_parse(const char *output, const char *name, long *launcher_pid);

/* The other way, for a spool found alone (fxt-run --recover): the length
 * of OUT in the path `spool`, which ends in ".spool" after OUT and at most
 * two ".DIGITS" (PID, N), taken as PID and N when there are, or ".snapN"
 * (a snapshot's); 0 when it does not end in ".spool". */
size_t run_spool_output(const char *spool);

/* The same for a file named after OUT and a pid, run_pid_file_name()'s
 * OUT.PID + suffix (a session, fxt-run's control file): the length of OUT
 * in `path`, and the pid in *pid; 0 when it is no such name. */
size_t run_pid_file_output(const char *path, const char *suffix, long *pid);

#endif /* FXT_RUN_NAMES_H */
