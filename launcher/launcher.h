/* fxt-run's own modules and what they share.  Private to launcher/.
 *
 *   fxt-run.c    main: the steps of a run in order; how fxt-run speaks
 *   options.c    the command line, --help, --version
 *   setup.c      before the program runs: the agent, the program, the
 *                archive's path, the environment the agent reads
 *   supervise.c  running the program: fork, exec, signals, and waking to
 *                convert spools while it runs
 *   spools.c     the run's spools: which are done, converting them
 *   status.c     the file the traced processes report their archives to
 *   parts.c      the run's per-process archives: collecting, ordering,
 *                merging them into one
 *   summary.c    what fxt-run says of archives: numbers, lines, hints
 *   kernel.c     fxt-run --kernel: the kernel's events, merged in
 *   recover.c    fxt-run --recover
 *   merge.c      merging archives into one (merge.h)
 */
#ifndef FXT_LAUNCHER_LAUNCHER_H
#define FXT_LAUNCHER_LAUNCHER_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fxt/counts.h"
#include "run/settings.h"
#include "run/recording.h"
#include "run/session.h"

/* fxt-run's exit statuses besides the program's own (see fxt-run.c):
 * its own failures, as a shell reports a usage error; a program that
 * cannot be executed, or found. */
#define EXIT_USAGE    2
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

/* ------------------------------------------------------------ fxt-run.c */

/* "fxt-run: " and the message on stderr, then exit(status). */
void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The path as the user named it: relative to the current directory when
 * it is inside it. */
const char *display_name(const char *path);

/* ------------------------------------------------------------ options.c */

struct options {
	const char *output; /* -o, as given */
	bool force;
	bool quiet;
	/* The settings given (run/settings.def), checked: fxt-run passes on
	 * those the agent reads (fxt_settings_export()). */
	struct fxt_values set;
	bool keep_parts;   /* --keep-parts: no merge */
	bool srcline;	   /* --srcline: a location on every slice */
	bool recover;	   /* --recover: argv are spools, not a program */
	bool patch_list;   /* --patch-list */
	char *patch_dir;   /* where the processes report what they patched */
	char *const *argv; /* PROGRAM [ARGS...] */
};

/* Parses the command line into *o, or dies (--help and --version exit 0). */
void options_parse(int argc, char **argv, struct options *o);

/* Frees what options_parse() allocated (the settings' strings). */
void options_free(struct options *o);

/* --recover takes its options anywhere among the paths: reads them from
 * o->argv into *o and returns the paths (malloc'd array), or dies. */
char **options_recover(struct options *o);

/* --------------------------------------------------------------- args.c */

/* Whether --args or --retval was given, or --snapshot-if tests a value. */
bool args_wanted(const struct options *o);

/* Without --patch, the values are read at the entries of the functions
 * of a program built with -finstrument-functions (patched for them, see
 * args.c): dies with one line when neither `program` nor one its command
 * line runs by exec (exec_chain()) was. */
void args_check_launch(const struct options *o, const char *program);

/* Writes the run's argspec file (run/argspec.h) into the report folder
 * `dir` for the functions --args and --retval name in `program`, in those
 * its command line o->argv runs by exec (a script's interpreter, env's
 * and sh -c's program), and in the libraries --patch-module names that
 * they load, saying what it must on the standard error; dies on a bad
 * pattern. */
void args_plan_launch(const struct options *o, const char *program, const char *dir);

/* The same for process `pid`, attached to: the modules it has mapped. */
void args_plan_attach(const struct options *o, long pid, const char *dir);

/* Whether the program at `path` ran while the values were planned for
 * others only (args_plan_launch()): its functions had none.  False for a
 * library, and when nothing was planned. */
bool args_unplanned(const char *path);

/* ------------------------------------------------------------- chain.c */

/* `program` (its path) run with argv, and the programs it executes in
 * turn as far as the files and the words say (a script's interpreter,
 * env's program, sh -c's), each once: the real paths (malloc'd) of those
 * that are ELF objects, into out (cap at most).  How many. */
size_t exec_chain(const char *program, char *const *argv, char **out, size_t cap);

/* -------------------------------------------------------------- setup.c */

/* The agent's absolute path (malloc'd), or death. */
char *find_agent(void);

/* PROG's path (malloc'd), found as a shell does, or NULL with *err
 * (ENOENT: none; EACCES: not executable; EISDIR...). */
char *program_path(const char *prog, int *err);

/* PROGRAM's path (malloc'd), found as a shell does, or death. */
char *find_program(const char *prog);

/* Warns when the loader will not preload the agent into the program. */
void warn_untraceable(const char *path, const char *name);

/* The archive's absolute path (malloc'd), checked writable, or death;
 * -o expanded as a template with v (run/names.h) unless v is NULL. */
struct run_template_values;
char *output_path(const struct options *o, const struct run_template_values *v);

/* Sets what the traced processes read (run/settings.def) but the archive's
 * name (the program's process sets it: struct launch) and preloads the
 * agent; status_fd (-1: none) is where they report.  Dies on failure. */
void setup_env(const struct options *o, const char *agent, int status_fd);

/* What setup_env() sets, but the agent, to any sink (an attach writes it
 * into a settings block, run/attach.h).  Dies on failure. */
void setup_export(const struct options *o, int status_fd, fxt_setting_sink_fn *sink, void *ctx);

/* ----------------------------------------------------------- patchrep.c */

/* A new folder for the patch reports (malloc'd), or death; removed at exit
 * unless patch_report_collect() was. */
char *patch_report_dir(void);

/* Reads the reports into memory and removes them and the folder: once the
 * program is done, so that nothing is left in TMPDIR whatever ends
 * fxt-run while it converts (a signal).  Once; patch_report_finish() calls
 * it if not done. */
void patch_report_collect(const char *dir);

/* Prints what the processes patched (each program once; with `list`, each
 * function), of the reports collected.  `what`: the option that asked for
 * patching ("--patch"), named when nothing was. */
void patch_report_finish(const char *dir, bool list, bool quiet, const char *what);

/* -------------------------------------------------------------- summary.c */

/* What the summary says about one archive.  Its numbers are what the
 * archive holds, as `fxt-dump --stats` counts them (fxt/counts.h: event
 * records, threads and processes with events, calls its drop instants
 * count), whether the converter counted them as it wrote the archive or
 * archive_stats() read them back; the counts of several archives add up
 * to the merged archive's (fxt__counts_add()). */
struct archive_stats {
	uint64_t bytes;				/* on disk */
	struct fxt__counts n;			/* owned: archive_stats_free() */
	uint64_t calls;				/* slices of instrumented functions; when not
						 * known, the events */
	uint64_t deep;				/* slices nested deeper than Perfetto shows */
	uint64_t max_depth, deep_pid, deep_tid; /* the deepest of those */
	const char *error;			/* damage found by the reader, or NULL */
};

/* Reads the archive at path.  Returns 0 or -errno (st->error then says
 * what the reader found, if it got that far); archive_stats_free() it
 * either way. */
int archive_stats(const char *path, struct archive_stats *st);
void archive_stats_free(struct archive_stats *st);

/* Whether path is an archive: it starts with the magic record. */
bool is_archive(const char *path);

/* The pid of the process whose archive path is (its first provider's
 * id, merge.h), or 0. */
long archive_first_pid(const char *path);

/* One summary line: "wrote WHAT DISPLAY (numbers)", `note` (if not NULL)
 * after the numbers.  An empty `what` means the root's archive. */
void summary_line(const char *what, const char *display, const struct archive_stats *st,
		  const char *note);

/* Adds one archive's deep nesting to `sum`'s. */
void summary_add_deep(struct archive_stats *sum, const struct archive_stats *st);

/* The hint after the summary lines, when they say something is amiss. */
void summary_hint(const char *prog);

/* The mode the run recorded in: what the summary's drop hint names. */
void summary_mode(enum fxt_mode mode);

/* A process's filters matched these functions (its spool header). */
void summary_filters(uint32_t included, uint32_t excluded);

/* Warns when --include or --exclude matched no function in any process
 * (o: the options as given). */
void summary_filter_hint(const struct options *o);

/* ------------------------------------------------------------- kernel.c */

/* --kernel=GROUPS: checks the permission and the groups, creates the
 * tracing instance (removing those of killed fxt-runs), or dies (exit 2).
 * Its clock and buffer size are set in a thread meanwhile:
 * kernel_stream() or kernel_follow(), whichever comes first, waits for it
 * (and dies, exit 2, if the clock could not be set).  Before the program
 * runs. */
void kernel_open(const char *groups);
/* Records the events of `pid` (all its threads) and its children from
 * now on. */
void kernel_follow(pid_t pid);
/* Takes SIGTERM and SIGHUP back (their handler removes the instance),
 * after code that set its own. */
void kernel_signals(void);
/* Moves the events out of the kernel's buffer while the program runs,
 * into files next to OUT (deleted already).  Nothing without --kernel. */
void kernel_stream(const char *out);
/* The program is done: the recording ends, the rest of the kernel's
 * buffer is read, and the instance starts going (in a process of its own:
 * removing it takes the kernel 60-160 ms here; fxt-run does not wait for
 * it).  Nothing without --kernel; kernel_finish() calls it if not done. */
void kernel_stop(const char *out);
/* Then: its events into OUT (kept apart as
 * OUT-without-.fxt.kernel.fxt with `keep`), the threads of the processes
 * in `ps` on the agent's, the instance removed, one summary line.  0 or
 * -errno (said).  Nothing without --kernel. */
struct parts;
int kernel_finish(const char *out, const struct parts *ps, bool keep, bool quiet);
/* Once the parts are known, before they are merged into OUT: the
 * kernel's events are written meanwhile, in a thread (kernel_finish()
 * appends them, or does it all when this was not called).  Nothing
 * without --kernel. */
void kernel_prepare(const char *out, const struct parts *ps, bool keep);

/* -------------------------------------------------------------- parts.c */

/* One traced process's archive of this run. */
struct part {
	char *path;	/* absolute */
	long pid;	/* its process */
	unsigned image; /* 0: OUT; N: OUT.PID.fxt (1) or OUT.PID.N.fxt */
	bool running;	/* its process was still running: not merged */
	bool recovered; /* from its process's spool, which it did not seal */
	bool left;	/* --recover: an archive the killed run had left */
	/* Recovered: how its process ended, as far as is known.  The status
	 * it gave _exit() (the spool's header says), and the root's wait
	 * status (fxt-run waited for it); -1: not known. */
	int exit_status;
	int wait_status;
	struct archive_stats st; /* bytes: on disk */
	const char *note;	 /* after its summary line's numbers, or NULL */
	/* len != 0: the part is that range of its file, an archive in a
	 * batch (convert/convert.h, struct convert_batch_member), copied from
	 * there by the merge; several parts name that file. */
	uint64_t off, len;
	uint32_t provider; /* with len: the archive's provider (its pid) */
};

/* The archives of the run: reported on the status file, converted from a
 * spool, or found in the output directory. */
struct parts {
	struct part *v;
	size_t n, cap;
};

/* A sorted list of file names (malloc'd). */
struct name_list {
	char **v;
	size_t n, cap;
};

/* A line per snapshot --snapshot-if wrote (their names). */
void summary_snapshots(const struct name_list *snaps);

struct part *parts_find(const struct parts *ps, const char *path);

/* The part at `path`, added if new (zeroed but for its names).  NULL when
 * out of memory: the archive is then neither summarised nor merged, and
 * stays where its process wrote it. */
struct part *parts_add(struct parts *ps, const char *path, long pid, unsigned image);

/* A part that is a range of the file at `path` (struct part.off), added
 * whatever parts name that file.  NULL when out of memory. */
struct part *parts_add_range(struct parts *ps, const char *path, long pid, unsigned image,
			     uint64_t off, uint64_t len);

/* The root's wait status: what its recovered archives' lines say of how
 * it ended. */
void parts_set_wait_status(struct parts *ps, long root, int status);

/* Whether OUT is known, or (unless out_only) the root reported an archive. */
bool parts_have_root(const struct parts *ps, pid_t root, bool out_only);

/* The root's archive that neither a report nor a spool gave: reads what
 * is at out.  Returns whether there is no file at all. */
bool parts_find_root(struct parts *ps, const char *prog, const char *out, pid_t root, bool quiet);

/* The names of the archives of other processes in OUT's directory (`dir`)
 * before the program ran: none of them is this run's. */
void parts_list_old(struct name_list *l, const char *out, const char *dir);

/* Adds the archives the run's processes wrote without a report. */
void parts_collect_unreported(struct parts *ps, const char *out, const char *dir, time_t since,
			      const struct name_list *old, bool quiet);

/* Sorts them as the merged archive and the summary list them: the root's
 * first, then its later images, then the others by pid and image. */
void parts_sort(struct parts *ps, long root);

/* Merges the parts whose processes are done into OUT, removes them and
 * says so in one line.  0, or -errno when the merge failed (the parts
 * are then as their processes left them). */
int parts_merge(struct parts *ps, const char *out, bool quiet);

/* One summary line per part (--keep-parts, or when merging failed). */
void parts_print(const struct parts *ps);

void parts_free(struct parts *ps);

/* 0 or -ENOMEM. */
int name_list_add(struct name_list *l, const char *name);
/* Sorts the names from index `from` on. */
void name_list_sort(struct name_list *l, size_t from);
void name_list_free(struct name_list *l);

/* ------------------------------------------------------------- status.c */

/* Opens the file the traced processes report to (FXT_STATUS_FD).
 * Returns the fd or -errno. */
int status_open(void);

/* Adds the archive each process reported on the status file; reads its
 * numbers back from it unless `quiet`. */
void status_collect(struct parts *ps, const char *out, int status_fd, bool quiet);

/* ------------------------------------------------------------- spools.c */

struct session_write;
struct fxt_symcache;
struct convert_batch;
struct early;
struct spool_kept;

/* The run's spools, converted as their processes are done with them. */
struct spools {
	const char *out; /* OUT, absolute */
	char *dir;	 /* OUT's directory ("" for "/") */
	long root;	 /* the root's pid; 0: any (--recover) */
	time_t since;	 /* spools older than the run are not its */
	bool quiet;
	bool recover; /* --recover: claim whatever the owner says */
	bool srcline; /* --srcline (convert_opts.srcline) */
	/* fxt-run -p: a process that no longer has the agent (it exec'd,
	 * which nothing interposes there) is done with its spool. */
	bool attached;
	/* fxt-run -p: the processes other than the root whose spools were
	 * converted while they still ran (spools_say_execs()). */
	struct spools_proc {
		long pid;
		uint64_t start_time;
		bool said;
	} * procs;
	size_t nprocs;
	struct parts *ps;
	char session[PATH_MAX + 64];
	/* The session's pipe writes, loaded once per pass over the spools
	 * (a pass's conversions share them; the log only grows). */
	struct session_write *writes;
	size_t nwrites;
	bool writes_loaded;
	uint64_t writes_mark; /* the log's mark they were loaded at (run_session_log_mark()) */
	char writes_of[PATH_MAX + 64]; /* the session they are of */
	struct session sess;	       /* the session file, mapped once there */
	char sess_of[PATH_MAX + 64];   /* its path */
	struct fxt_symcache *syms;     /* one for the whole run */
	/* The spools of live processes, open, from one pass to the next
	 * (spools.c). */
	struct spool_kept *kept;
	size_t nkept, capkept;
	/* fxt-run launching: converted spools of dead processes are kept,
	 * emptied, as spare spool files (run_spare_name()) that the run's
	 * next processes take (no new inode each); the drain thread lets go
	 * of one first.  The spares left are removed at the end. */
	bool spares;
	struct drain *drain;
	/* fxt-run's early converter (launcher/early.h), or NULL: each
	 * conversion takes what it did of its spool. */
	struct early *early;
	struct run_bell *bell; /* the control file's: which spares are there */
	uint64_t spares_made;  /* the slots a spare file was put in (removed at the end) */
	unsigned converted;    /* spools converted by the scan under way */
	bool cur_dead;	       /* the process of the spool being converted is gone */
	bool cur_last;	       /* it is the root's, gone or sealed: the run ends */
	unsigned running;      /* spools of live processes seen by the last scan */
	/* fxt-run launching (not --keep-parts), a plain OUT: the short
	 * processes (not the root) are converted into batches (struct
	 * convert_batch: no file of their own), batch k named OUT's
	 * stem.LPID.K, its length in the control file.  A batch holds each
	 * process once: a pid's next image goes to the next batch. */
	bool batching;
	struct convert_batch *batches; /* RUN_BATCHES of them, fd -1 until made */
	unsigned nbatches;
	long lpid; /* our pid: the batches' names */
	/* Snapshots converted (fxt-run --snapshot-if): their archives. */
	struct name_list snapshots;
	/* Large spools removed by spools_finish(), or the root's once it is
	 * gone (convert_opts.keep_removed):
	 * their descriptors, closed by spools_free() in a child of its own,
	 * so that freeing their pages does not hold up fxt-run's exit (those
	 * removed while the program runs are closed at once: the disk space
	 * is not held for the run). */
	bool finishing;
	int *removed;
	size_t nremoved;
};

/* Whether process `pid` has the agent mapped (false if it cannot tell):
 * a process attached to that ran another program has not. */
bool proc_has_agent(long pid);

/* fxt-run -p, at the end: says which of the processes it followed ran
 * another program (not followed), when that was not said already. */
void spools_say_execs(struct spools *r);

/* 0 or -ENOMEM. */
int spools_init(struct spools *r, struct parts *ps, const char *out, long root, time_t since,
		bool quiet);
void spools_set_root(struct spools *r, long root);

/* One pass over OUT's directory: converts every spool of the run whose
 * process is done.  `final`: the last pass. */
void spools_scan(struct spools *r, bool final);

/* The end of the run: the last passes, around writing CLOSING into the
 * control file `ctl` (NULL: none). */
void spools_finish(struct spools *r, const char *ctl);

/* --recover of one spool: converts it (or removes it when it holds no
 * record).  0, or -errno when it is no spool this fxt-run can read
 * (-EBADMSG, -EAGAIN: not a spool, or of another version). */
int spools_recover(struct spools *r, const char *path);

/* Frees them (FXT_RUN_DEBUG: says how the symbol cache did), and lets
 * go of the spools removed at the end (spools_release_removed()). */
void spools_free(struct spools *r);

/* ------------------------------------------------------------- spares.c */

/* convert_opts.recycle (ctx: the spools): keeps a converted spool of a
 * process that is gone (cur_dead) as a spare spool file, through `fd`
 * (the conversion's descriptor of it, open for writing) or, if -1, one of
 * its own.  0, or -errno: the spool is removed. */
int spares_recycle(void *ctx, const char *path, int fd);
/* After a scan that converted r->converted spools: new spare files. */
void spares_fill(struct spools *r);
/* Removes `name`, in OUT's directory, if it is the spare spool file of an
 * fxt-run that is gone. */
void spares_stale(struct spools *r, const char *name);
/* Removes the spare spool files left, and says none is there. */
void spares_remove(struct spools *r);

/* ------------------------------------------------------------ removed.c */

/* A spool this large removed at the end of the run has its pages freed
 * after the run (freeing fib(33)'s 365 MB took 0.16-0.24 s here); a
 * smaller one at once. */
#define REMOVED_KEEP_MIN (16u << 20)

/* convert_opts.keep_removed (ctx: the spools): keeps the descriptor of a
 * spool of REMOVED_KEEP_MIN or more just removed by spools_finish()'s
 * passes, or the root's once it is gone or sealed (cur_last).  0, or -errno: the
 * caller closes it. */
int spools_keep_removed(void *ctx, int fd);
/* Closes the descriptors kept, in a child of its own. */
void spools_release_removed(struct spools *r);

/* ---------------------------------------------------------- supervise.c */

/* The program's process, forked but held before its exec until
 * launch_go() gives it the archive's name: the name may hold its pid
 * (fxt-run -o 'run-%p.fxt'), and everything named after the archive is
 * made before it runs. */
struct launch {
	pid_t pid;
	int go_fd; /* the pipe the name goes through; -1 once sent */
	struct sigaction old_int, old_quit;
	sigset_t old_mask;
	sigset_t fwd; /* the signals passed on to the program */
};

/* Forks the program's process (or dies), which waits for launch_go(): if
 * fxt-run exits before, it exits too, having run nothing.  From here to
 * supervise(), SIGINT and SIGQUIT are ignored, and SIGCHLD, SIGTERM and
 * SIGHUP blocked (supervise() passes the last two on to the program). */
void launch_start(struct launch *l, const char *path, char *const argv[]);

/* Lets the program run with FXT_OUTPUT = out (an absolute path). */
void launch_go(struct launch *l, const char *out);

/* Waits for the program, converting spools while it runs; returns its
 * wait status. */
int supervise(struct launch *l, struct spools *r);

/* Removes an earlier run's snapshots of `out` (with force), or dies
 * naming the first. */
void clear_snapshots(const char *out, bool force);

/* ------------------------------------------------------------ recover.c */

/* fxt-run --recover: the exit status. */
int recover_main(const struct options *o);

/* ------------------------------------------------------------ attach/attach.c */

/* fxt-run -p PID: attach, record, detach; the exit status. */
int attach_main(const struct options *o);

#endif /* FXT_LAUNCHER_LAUNCHER_H */
