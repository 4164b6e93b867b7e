/* Agent settings: every FXT_* environment variable, read once.
 *
 * Private to agent/.  agent/settings.c parses the environment in the
 * constructor (before main) into one `struct agent_config`, which is
 * read-only afterwards; nothing else in the agent calls getenv().
 *
 * The variables, for fxt-run and for people running
 *   LD_PRELOAD=libfxt-agent.so FXT_OUTPUT=/tmp/x.fxt ./prog
 * by hand:
 *
 * FXT_OUTPUT       Archive path of the traced process.  Default:
 *                  "PROGRAM.fxt" in the working directory at start-up,
 *                  PROGRAM being the executable's short name.  A relative
 *                  path is made absolute at start-up, so a later chdir()
 *                  does not move the archive.  A path ending in ".gz" is
 *                  written gzip-compressed.
 *                  Only the root process writes exactly FXT_OUTPUT.  Every
 *                  other process (fork children, processes spawned by the
 *                  root, the new image after an execve) writes
 *                  "OUT.PID.fxt": FXT_OUTPUT with ".PID" inserted before
 *                  the extension (before ".fxt.gz" for a gzip path; appended
 *                  when there is no extension).  Those names are created
 *                  exclusively: if the name exists already (a second image of
 *                  the same pid after execve, or a stale file), ".PID.2",
 *                  ".PID.3" ... are tried.  A process that recorded no event
 *                  at all and is not the root writes no archive.
 *                  Next to the archive, while the process runs, lives its
 *                  spool "OUT.PID.spool" (raw records, MAP_SHARED; OUT is
 *                  FXT_OUTPUT as given); it is unlinked once the archive is
 *                  written.  A process killed before its flush leaves it
 *                  behind (see agent/spool.h for the layout).  The agent
 *                  holds no file descriptor between chunk grants: programs
 *                  that close every fd do not disturb it, nor see one of
 *                  ours.
 *                  The archive is written at exit (an atexit handler
 *                  registered by the agent's constructor, so it runs after
 *                  the program's own atexit handlers and destructors), and
 *                  before execve/execv/execvp/execvpe/execl/execlp/execle
 *                  (after which, if exec fails, the image is not traced
 *                  further).  _exit(), a fatal signal or SIGKILL write no
 *                  archive.
 *
 * FXT_ROOT_PID     Pid of the root process (the one that writes exactly
 *                  FXT_OUTPUT).  fxt-run may set it to the pid of the
 *                  program it executes; when it is unset, the first process
 *                  that loads the agent is the root, and the agent sets
 *                  FXT_ROOT_PID in its own environment so that every
 *                  descendant (fork, posix_spawn, system, exec) sees it.
 *
 * FXT_EXEC_PID     Internal: the exec wrappers add it to the new image's
 *                  environment (= the pid that called exec) so that the new
 *                  image knows it is not the first image of that pid.  (So
 *                  an exec'd program sees FXT_EXEC_PID and FXT_ROOT_PID in
 *                  its environment, as it sees LD_PRELOAD.)
 *
 * FXT_IMAGE        Internal, with FXT_EXEC_PID: the new image's number for
 *                  that pid (2 after the first exec, 3 after the second...);
 *                  its spool is "OUT.PID.N.spool", so that it never
 *                  overwrites the spool the image before it sealed.
 *
 * FXT_LAUNCHER     PID:START: set by fxt-run to its own pid and start time
 *                  (field 22 of /proc/PID/stat).  While that process runs,
 *                  a traced process only seals its spool at exit (and
 *                  before exec): fxt-run converts it into the archive,
 *                  outside the traced process (spool/format.h, the owner
 *                  protocol).  Without it, or once fxt-run is gone (a
 *                  daemon that outlives the run, a killed fxt-run), the
 *                  process converts its own spool at exit.
 *
 * FXT_BUFFER_SIZE  Bytes of trace buffer the process keeps mapped at once,
 *                  over all threads (default 64M).  Each thread writes into
 *                  one chunk (FXT_CHUNK_SIZE) at a time; full chunks are
 *                  unmapped (the kernel writes them back to the spool), so
 *                  long runs do not grow RSS.  When threads * chunk size
 *                  would exceed this, new chunks are halved, down to 64 KiB
 *                  (a floor that is always granted, so the bound is exceeded
 *                  only beyond FXT_BUFFER_SIZE / 64K threads).
 *
 * FXT_CHUNK_SIZE   Bytes per chunk (default 1M, minimum 4K, maximum 1G,
 *                  rounded up to the page size).  Small values are for
 *                  tests; larger ones cost a little less per call.
 *
 * FXT_MAX_SIZE     Bound on the trace: the bytes of spool the process may
 *                  fill (default 1G; 0 = unlimited).  The archive is smaller
 *                  than the spool (24 bytes per call in the archive, 32 in
 *                  the spool).  When a thread needs a chunk past the bound
 *                  it stops recording for good; from then on each call it
 *                  makes is counted as one dropped record (a "record" is a
 *                  call: an enter hook; its exit hook is not counted again).
 *                  Frames open on that thread when it started dropping are
 *                  closed at that moment.  So, per thread,
 *                     slices in the archive + dropped records = calls made.
 *                  Calls that could not be recorded for other reasons are
 *                  counted the same way: a signal handler's hook that
 *                  finds the chunk full while the interrupted hook holds
 *                  its last slot (it may not replace the chunk; with 1 MiB
 *                  chunks this is rare), hooks run after the thread's
 *                  buffer was retired at thread exit, spool failures.
 *                  Signal handlers are otherwise traced like any code.
 *                  (libc calls a thread makes after its buffer was retired
 *                  -- its TLS destructors, libc's own thread exit -- are
 *                  neither recorded nor counted.)
 *                  A process with drops gets the FXT provider event "buffer
 *                  full" (metadata type 3, event 0) and, on each thread that
 *                  dropped, an instant event named "fxt: N records dropped"
 *                  (category "fxt") at the time it started dropping.
 *
 * FXT_CLOCK        "tsc" (default on x86-64 when CPUID reports an invariant
 *                  TSC) or "monotonic" (clock_gettime(CLOCK_MONOTONIC),
 *                  1 tick = 1 ns).  Anything else, or "tsc" without an
 *                  invariant TSC, means "monotonic".
 *
 * FXT_DEBUG        Set and not "0": the agent logs what it does to stderr
 *                  (lines prefixed "fxtrace[PID]:").  Unset: the agent never
 *                  writes to the program's stdout or stderr, except one
 *                  line prefixed "fxtrace:" when the trace is lost (the
 *                  archive cannot be written).
 *
 * FXT_STATUS_FD    FD or FD:DEV:INO: a file descriptor number (inherited
 *                  from fxt-run), with the device and inode numbers (st_dev,
 *                  st_ino, decimal) of the file it refers to.  Given those,
 *                  the fd is used only if it refers to that file when the
 *                  agent starts: the program may have closed it and opened
 *                  a file of its own on the same number.  At
 *                  flush, each traced process writes one line to it, with a
 *                  single write(2) (so lines of concurrent processes do not
 *                  mix; keep them under PIPE_BUF):
 *                    fxtrace pid=PID events=N threads=N dropped=N
 *                    bytes=N output=PATH\n
 *                  events = duration events written, dropped = dropped
 *                  records (see FXT_MAX_SIZE), bytes = uncompressed archive
 *                  size.  The agent writes only if the fd still refers to
 *                  the file it referred to at start-up (device and inode),
 *                  and never closes it.  Processes that write no archive
 *                  write no line.
 *
 * FXT_LIBC         The groups of libc calls to record (agent/libc.h): a
 *                  comma-separated list of io, mem, thread, sync, proc,
 *                  sleep, log, or "all", "none", "default".  Default (unset):
 *                  io,thread,proc,sleep,log: every group but mem and sync,
 *                  whose calls are frequent and cheap enough that recording
 *                  them would dominate a program's run time.  An unknown
 *                  name means the default (logged with FXT_DEBUG; fxt-run
 *                  refuses it before starting the program).
 *
 * FXT_SAMPLE       Stack sampling rate in Hz of each thread's CPU time
 *                  (agent/sample.h); 0 or unset = no sampling.  At most
 *                  10000.
 *
 * Category of slices: the basename of the module (executable or shared
 * library) that contains the function, e.g. "prog" or "libfoo.so.1".
 */
#ifndef FXT_AGENT_SETTINGS_H
#define FXT_AGENT_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "spool/recording.h"

#define AGENT_DEFAULT_BUFFER_SIZE (64ull << 20)
#define AGENT_DEFAULT_CHUNK_SIZE  (1ull << 20)
#define AGENT_MIN_CHUNK_SIZE	  (4ull << 10)
#define AGENT_FLOOR_CHUNK_SIZE	  (64ull << 10)
#define AGENT_DEFAULT_MAX_SIZE	  (1ull << 30)

enum agent_clock {
	AGENT_CLOCK_AUTO,
	AGENT_CLOCK_TSC,
	AGENT_CLOCK_MONOTONIC,
};

struct agent_config {
	char output[PATH_MAX]; /* absolute archive path (root's name) */
	uint64_t buffer_size;  /* FXT_BUFFER_SIZE */
	uint64_t chunk_size;   /* FXT_CHUNK_SIZE, page multiple */
	uint64_t max_size;     /* FXT_MAX_SIZE, 0 = unlimited */
	enum agent_clock clock;
	bool debug;
	int status_fd;	   /* -1 = none */
	long root_pid;	   /* FXT_ROOT_PID, 0 = unset */
	long exec_pid;	   /* FXT_EXEC_PID, 0 = unset */
	unsigned image;	   /* FXT_IMAGE when exec_pid is this pid, else 1 */
	long launcher_pid; /* FXT_LAUNCHER, 0 = no fxt-run */
	uint64_t launcher_start;
	unsigned libc_groups; /* FXT_LIBC: AGENT_G_* bits */
	unsigned sample_hz;   /* FXT_SAMPLE, 0 = off */
};

/* The settings; valid after agent_config_load(). */
extern struct agent_config agent_cfg;

/* Reads every FXT_* variable into agent_cfg.  Never fails: malformed values
 * fall back to the defaults (and are logged with FXT_DEBUG). */
void agent_config_load(void);

#endif /* FXT_AGENT_SETTINGS_H */
