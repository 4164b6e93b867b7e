/* The names of a run's files, next to its archive OUT (FXT_OUTPUT, the
 * root's archive): the one owner of them, for the agent (which creates
 * them) and fxt-run (which finds, converts and removes them).
 *
 *   OUT                    the root's archive (the merged one, under fxt-run)
 *   OUT's stem.PID[.N]EXT  the archive of process PID (image N, N > 1),
 *                          ".PID" inserted before the extension (".fxt.gz"
 *                          counts as one), or appended when there is none
 *   OUT.PID.spool          the spool of process PID's first image
 *   OUT.PID.N.spool        ... and of its image N (after N - 1 execs)
 *   OUT.ROOT.session       the session shared by the run's processes
 *                          (spool/session.h)
 *   OUT.LPID.run           fxt-run's control file (spool/launcher.h)
 *
 * The formatters use no malloc and no stdio: the agent calls them in fork
 * children. */
#ifndef FXT_SPOOL_NAMES_H
#define FXT_SPOOL_NAMES_H

#include <stddef.h>

/* Where run_archive_name() inserts ".PID": the length of `output` without
 * its extension. */
size_t run_archive_stem(const char *output);

/* The archive of process `pid` (n = 1), or of its image n > 1. */
void run_archive_name(char *buf, size_t cap, const char *output, long pid, unsigned n);

/* The spool of image `image` (1 = the first) of process `pid`. */
void run_spool_name(char *buf, size_t cap, const char *output, long pid, unsigned image);

#endif /* FXT_SPOOL_NAMES_H */
