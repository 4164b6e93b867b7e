/* The environment contract between fxt-run and the agent: every FXT_*
 * variable, its name and what it means.  The one list of them.
 *
 * fxt-run sets them for the program it runs (and reads FXT_AGENT and
 * FXT_RUN_DEBUG itself); the agent reads them once, in its constructor
 * (agent/settings.c); people running
 *   LD_PRELOAD=libfxt-agent.so FXT_OUTPUT=/tmp/x.fxt ./prog
 * set them by hand.  Each name is a macro, FXT_ENV_<name>; FXT_ENV_LIST()
 * gives every variable with a one-line summary, which `fxt-run --help`
 * prints (and so `man fxt-run`, made from it).  Sizes are spelled as
 * fxt__parse_size() reads them (spool/recording.h): "64M", "1GiB", "4096".
 *
 * FXT_OUTPUT       Archive path of the root process.  Default:
 *                  "PROGRAM.fxt" in the working directory at start-up,
 *                  PROGRAM being the executable's short name.  A relative
 *                  path is made absolute at start-up, so a later chdir()
 *                  does not move the archive.  A path ending in ".gz" is
 *                  written gzip-compressed.  It is a template
 *                  (spool/names.h: %p, %t, %n, %h, %%): the root process
 *                  expands it and sets FXT_OUTPUT to the result, escaped,
 *                  for its descendants; fxt-run passes it expanded and
 *                  escaped ('%' doubled).
 *                  Only the root process's first image writes exactly
 *                  FXT_OUTPUT.  Every other process (fork children,
 *                  processes spawned by the root, the new image after an
 *                  execve) gets "OUT.PID.fxt": FXT_OUTPUT with ".PID"
 *                  inserted before the extension (before ".fxt.gz" for a
 *                  gzip path; appended when there is no extension).  Those
 *                  names are created exclusively: if the name exists
 *                  already (a later image of the same pid, or a stale
 *                  file), ".PID.2", ".PID.3" ... are tried.  Every name of
 *                  a run is in spool/names.h.
 *                  While the process runs, it records into its spool
 *                  "OUT.PID.spool" next to the archive (OUT.PID.N.spool for
 *                  its image N; the layout is spool/format.h).  At exit
 *                  (an atexit handler registered by the agent's
 *                  constructor, so it runs after the program's own atexit
 *                  handlers and destructors), and before execve and the
 *                  rest of the exec family, it seals the spool; then
 *                  fxt-run converts it into the archive (FXT_LAUNCHER), or
 *                  the process does (without fxt-run) and removes the
 *                  spool.  A process killed before it sealed (_exit(), a
 *                  fatal signal, SIGKILL) leaves its spool, which fxt-run,
 *                  or later `fxt-run --recover`, converts all the same.
 *                  The agent holds no file descriptor between chunk
 *                  grants: programs that close every fd do not disturb it,
 *                  nor see one of ours.
 *
 * FXT_ROOT_PID     Pid of the root process (the one that writes exactly
 *                  FXT_OUTPUT).  fxt-run sets it to the pid of the program
 *                  it executes; when it is unset, the first process that
 *                  loads the agent is the root, and the agent sets
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
 *                  protocol; spool/launcher.h).  Without it, or once
 *                  fxt-run is gone (a daemon that outlives the run, a
 *                  killed fxt-run), the process converts its own spool at
 *                  exit.
 *
 * FXT_MODE         The recording mode (spool/recording.h; fxt-run --mode):
 *                  "stream" (default), "oneshot" or "circular".  Anything
 *                  else means stream (logged with FXT_DEBUG; fxt-run
 *                  --mode refuses it before starting the program).
 *                  stream: every call, until FXT_MAX_SIZE.
 *                  oneshot: each thread records its first FXT_BUFFER_SIZE
 *                  bytes of records, then stops; its later calls are
 *                  counted as dropped records, as past FXT_MAX_SIZE.
 *                  circular: each thread keeps its newest FXT_BUFFER_SIZE
 *                  bytes of records (a flight recorder): its chunks stay
 *                  mapped as a ring, and when the ring is full the oldest
 *                  chunk is emptied and filled again.  The calls it held
 *                  are counted as overwritten records; the archive gets an
 *                  instant event "fxt: N records overwritten" (category
 *                  "fxt") on the thread where its kept records begin.
 *                  Frames open at that point start there.  FXT_MAX_SIZE
 *                  still bounds the spool (threads * FXT_BUFFER_SIZE).
 *
 * FXT_BUFFER_SIZE  Bytes of trace buffer.  Stream mode: what the process
 *                  keeps mapped at once, over all threads (default 64M;
 *                  fxt-run --buffer-size).  Each thread writes into one
 *                  chunk (FXT_CHUNK_SIZE) at a time; full chunks are
 *                  unmapped (the kernel writes them back to the spool), so
 *                  long runs do not grow RSS.  When threads * chunk size
 *                  would exceed this, new chunks are halved, down to 64
 *                  KiB (a floor that is always granted, so the bound is
 *                  exceeded only beyond FXT_BUFFER_SIZE / 64K threads).
 *                  Oneshot and circular modes: each thread's buffer
 *                  (default 16M), mapped for the thread's life, so that
 *                  the process maps at most threads * FXT_BUFFER_SIZE.
 *
 * FXT_CHUNK_SIZE   Bytes per chunk (default 1M, minimum 4K, maximum 1G,
 *                  rounded up to the page size).  Small values are for
 *                  tests; larger ones cost a little less per call.
 *
 * FXT_MAX_SIZE     Bound on the trace: the bytes of spool the process may
 *                  fill (default 1G; 0 = unlimited; fxt-run --max-size).
 *                  The archive is smaller than the spool (24 bytes per call
 *                  in the archive, 32 in the spool).  When a thread needs a
 *                  chunk past the bound it stops recording for good; from
 *                  then on each call it makes is counted as one dropped
 *                  record (a "record" is a call: an enter hook; its exit
 *                  hook is not counted again).  Frames open on that thread
 *                  when it started dropping are closed at that moment.  So,
 *                  per thread,
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
 * FXT_INCLUDE      Filters (agent/filter.h; fxt-run --include, --exclude,
 * FXT_EXCLUDE      --module, --depth): which calls the hooks record.
 * FXT_MODULE       FXT_INCLUDE and FXT_EXCLUDE: POSIX extended regular
 * FXT_DEPTH        expressions, one a line, matched against the names of
 *                  the functions of instrumented modules (demangled, when
 *                  the process has libstdc++), once per function when its
 *                  module is loaded.  With FXT_INCLUDE only calls of
 *                  matching functions and of what they call are recorded;
 *                  with FXT_EXCLUDE, neither matching functions nor what
 *                  they call.  FXT_MODULE: globs, one a line, of module
 *                  file names ("libfoo.so*", the executable's name): only
 *                  functions of matching modules are recorded (what they
 *                  call in other modules is not, unless it matches too).
 *                  FXT_DEPTH: calls nested at most this deep among those
 *                  that pass the other filters (0: no bound).  Calls
 *                  filtered out are neither recorded nor counted as
 *                  dropped.  A pattern that is not a regular expression
 *                  disables the filters (logged with FXT_DEBUG; fxt-run
 *                  refuses it before running).  libc calls and samples are
 *                  not filtered.
 *
 * FXT_MIN_DURATION The converter writes no slice for a call shorter than
 *                  this (fxt__parse_duration(): "10us", "1ms"; 0 or unset:
 *                  every call): it counts such calls per function and
 *                  thread, with their total and self time, in a summary
 *                  the tools add back (so fxt-report's totals stay exact;
 *                  convert/flush.h).
 *
 * FXT_SNAPSHOT_IF  Rules, one a line, "NAME>DURATION" (fxt__snapshot_rule_parse(),
 *                  spool/recording.h): in the circular mode, each time a
 *                  call of a function NAME names (a name or a glob on the
 *                  symbol, C++ names demangled) or of a libc group
 *                  ("libc.io") ends after more than DURATION, the process
 *                  copies its flight recorder into a snapshot,
 *                  "OUT's stem.snapN.spool" (spool/names.h), N counting the
 *                  run's snapshots from 1 (agent/snapshot.h); fxt-run
 *                  converts it into "OUT's stem.snapN.EXT" while the
 *                  program goes on.  FXT_MAX_SNAPSHOTS bounds N (default
 *                  10).
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
 *                  a file of its own on the same number.  A process that
 *                  converts its own spool writes one line to it, with a
 *                  single write(2) (so lines of concurrent processes do not
 *                  mix; keep them under PIPE_BUF):
 *                    fxtrace pid=PID events=N threads=N dropped=N
 *                    bytes=N output=PATH\n
 *                  events = slices written, dropped = dropped records (see
 *                  FXT_MAX_SIZE), bytes = uncompressed archive size.  The
 *                  agent writes only if the fd still refers to the file it
 *                  referred to at start-up (device and inode), and never
 *                  closes it.  Processes that write no archive write no
 *                  line.
 *
 * FXT_LIBC         The groups of libc calls to record (spool/recording.h):
 *                  a comma-separated list of io, mem, thread, sync, proc,
 *                  sleep, log, or "all", "none", "default".  Default
 *                  (unset): io,thread,proc,sleep,log: every group but mem
 *                  and sync, whose calls are frequent and cheap enough that
 *                  recording them would dominate a program's run time.  An
 *                  unknown name means the default (logged with FXT_DEBUG;
 *                  fxt-run --libc refuses it before starting the program).
 *
 * FXT_SAMPLE       Stack sampling rate in Hz of each thread's CPU time; 0
 *                  or unset = no sampling.  At most 10000 (fxt-run
 *                  --sample=HZ).
 *
 * FXT_AGENT        Read by fxt-run: the agent to preload, instead of
 *                  libfxt-agent.so next to fxt-run (or in its .libs/) or
 *                  the installed one.
 *
 * FXT_RUN_DEBUG    Read by fxt-run: set, it says how many symbols its
 *                  cache answered for the run's conversions, and how
 *                  many chunks its drain thread copied.
 */
#ifndef FXT_SPOOL_ENV_H
#define FXT_SPOOL_ENV_H

#define FXT_ENV_OUTPUT	      "FXT_OUTPUT"
#define FXT_ENV_ROOT_PID      "FXT_ROOT_PID"
#define FXT_ENV_EXEC_PID      "FXT_EXEC_PID"
#define FXT_ENV_IMAGE	      "FXT_IMAGE"
#define FXT_ENV_LAUNCHER      "FXT_LAUNCHER"
#define FXT_ENV_MODE	      "FXT_MODE"
#define FXT_ENV_BUFFER_SIZE   "FXT_BUFFER_SIZE"
#define FXT_ENV_CHUNK_SIZE    "FXT_CHUNK_SIZE"
#define FXT_ENV_MAX_SIZE      "FXT_MAX_SIZE"
#define FXT_ENV_CLOCK	      "FXT_CLOCK"
#define FXT_ENV_DEBUG	      "FXT_DEBUG"
#define FXT_ENV_STATUS_FD     "FXT_STATUS_FD"
#define FXT_ENV_LIBC	      "FXT_LIBC"
#define FXT_ENV_SAMPLE	      "FXT_SAMPLE"
#define FXT_ENV_INCLUDE	      "FXT_INCLUDE"
#define FXT_ENV_EXCLUDE	      "FXT_EXCLUDE"
#define FXT_ENV_MODULE	      "FXT_MODULE"
#define FXT_ENV_DEPTH	      "FXT_DEPTH"
#define FXT_ENV_MIN_DURATION  "FXT_MIN_DURATION"
#define FXT_ENV_SNAPSHOT_IF   "FXT_SNAPSHOT_IF"
#define FXT_ENV_MAX_SNAPSHOTS "FXT_MAX_SNAPSHOTS"
#define FXT_ENV_PATCH	      "FXT_PATCH"
#define FXT_ENV_PATCH_MODULE  "FXT_PATCH_MODULE"
#define FXT_ENV_PATCH_REPORT  "FXT_PATCH_REPORT"
#define FXT_ENV_AGENT	      "FXT_AGENT"
#define FXT_ENV_RUN_DEBUG     "FXT_RUN_DEBUG"

/* Every variable above with one line (at most 56 characters) for
 * `fxt-run --help`: X(NAME, SUMMARY).  In --help's order: first those the
 * options set, as the options come, then the agent's own, then fxt-run's. */
#define FXT_ENV_LIST(X)                                                                \
	X(FXT_ENV_OUTPUT, "the root process's archive (-o; default PROGRAM.fxt)")      \
	X(FXT_ENV_LIBC, "libc groups to record (--libc)")                              \
	X(FXT_ENV_SAMPLE, "stack samples per second of CPU time (--sample)")           \
	X(FXT_ENV_MODE, "stream, oneshot or circular (--mode)")                        \
	X(FXT_ENV_BUFFER_SIZE, "trace buffer: per process, or thread (--buffer-size)") \
	X(FXT_ENV_MAX_SIZE, "bound on each process's trace (--max-size)")              \
	X(FXT_ENV_INCLUDE, "record only these functions' calls (--include)")           \
	X(FXT_ENV_EXCLUDE, "record none of these functions' calls (--exclude)")        \
	X(FXT_ENV_MODULE, "record only these modules' functions (--module)")           \
	X(FXT_ENV_DEPTH, "record calls at most this deep (--depth)")                   \
	X(FXT_ENV_MIN_DURATION, "no slices for shorter calls (--min-duration)")        \
	X(FXT_ENV_SNAPSHOT_IF, "snapshot the flight recorder on slow calls")           \
	X(FXT_ENV_MAX_SNAPSHOTS, "at most this many snapshots a run (default 10)")     \
	X(FXT_ENV_PATCH, "patch these functions' entries (--patch)")                   \
	X(FXT_ENV_PATCH_MODULE, "patch these libraries' functions too (--patch-module)") \
	X(FXT_ENV_CHUNK_SIZE, "bytes per buffer chunk (default 1M)")                   \
	X(FXT_ENV_CLOCK, "tsc or monotonic (default: tsc when invariant)")             \
	X(FXT_ENV_DEBUG, "set and not 0: the agent logs to stderr")                    \
	X(FXT_ENV_ROOT_PID, "pid of the root process (set by fxt-run)")                \
	X(FXT_ENV_EXEC_PID, "internal: the pid that called exec")                      \
	X(FXT_ENV_IMAGE, "internal: which image of that pid this is")                  \
	X(FXT_ENV_LAUNCHER, "PID:START of the fxt-run that converts (set by it)")      \
	X(FXT_ENV_STATUS_FD, "where processes report their archives (set by fxt-run)") \
	X(FXT_ENV_PATCH_REPORT, "internal: where each process says what it patched")   \
	X(FXT_ENV_AGENT, "the agent fxt-run preloads")                                 \
	X(FXT_ENV_RUN_DEBUG, "set: fxt-run reports its symbol cache, drain thread")

#endif /* FXT_SPOOL_ENV_H */
