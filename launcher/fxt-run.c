/* fxt-run: runs a program with the fxtrace agent preloaded and reports
 * the archive it wrote.
 *
 *	fxt-run [options] [--] PROGRAM [ARGS...]
 *
 * It is a small trace manager in the manner of a shell: it finds the agent,
 * passes the options to it through FXT_* environment variables (the agent
 * reads them, see spool/env.h), prepends the agent to LD_PRELOAD, runs
 * the program with the terminal untouched, and exits with the program's
 * status (128 + signal if it was killed).  Programs the agent cannot enter
 * (static, set-user-ID) run with a warning.
 *
 * Every traced process records into a spool of its own and seals it at
 * exit (spool/format.h); fxt-run converts each spool into that process's
 * archive (convert/convert.h) as soon as the process is done -- sealed,
 * or gone whatever killed it -- while the program runs, with one symbol
 * cache for the whole run (symbolizer/runcache.h): the root's archive is
 * OUT, the others' OUT.PID.fxt.  A process that converted its own (fxt-run
 * was closing) reports it on FXT_STATUS_FD, or is found in the output
 * directory.  Then fxt-run leaves one archive: it merges them all into OUT
 * (launcher/merge.h), the root's first, the others by pid, removes the
 * parts, and prints one summary line that counts them.  A process still
 * running then (a daemon) is not waited for: it converts its own spool at
 * its exit.  --keep-parts leaves the per-process archives, one summary
 * line each.  fxt-run --recover converts spools left behind later.
 *
 * FXT_RUN_DEBUG set: fxt-run says how many symbols its cache answered.
 *
 * Errors follow the shell: a program that cannot be found exits 127, one
 * that cannot be executed 126; fxt-run's own errors (options, agent, output
 * path) exit 2, before anything runs.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/convert.h"
#include "convert/recon.h"
#include "launcher/merge.h"
#include "spool/env.h"
#include "spool/format.h"
#include "spool/launcher.h"
#include "spool/names.h"
#include "spool/proc.h"
#include "spool/recording.h"
#include "spool/session.h"
#include "symbolizer/runcache.h"

#ifndef FXT_PKGLIBDIR
#define FXT_PKGLIBDIR "/usr/local/lib/fxtrace"
#endif

#define AGENT_NAME "libfxt-agent.so"

/* --sample without a rate. */
#define DEFAULT_SAMPLE_HZ 1000u

/* fxt-run's own failures, as a shell reports a usage error. */
#define EXIT_USAGE    2
#define EXIT_NOEXEC   126
#define EXIT_NOTFOUND 127

extern char **environ;

struct options {
	const char *output; /* -o, as given */
	bool force;
	bool quiet;
	const char *buffer_size; /* as given; validated, passed on in bytes */
	const char *max_size;
	uint64_t buffer_bytes, max_bytes;
	const char *libc;   /* --libc, validated, passed on as given */
	unsigned sample_hz; /* --sample, 0 = not given */
	bool keep_parts;    /* --keep-parts: no merge */
	bool recover;	    /* --recover: argv are spools, not a program */
	char *const *argv;  /* PROGRAM [ARGS...] */
};

/* What the summary says about one archive. */
struct archive_stats {
	uint64_t bytes;				/* on disk */
	uint64_t events;			/* duration event records */
	uint64_t threads;			/* distinct threads with events */
	uint64_t dropped;			/* calls not recorded (FXT_MAX_SIZE) */
	uint64_t deep;				/* slices nested deeper than Perfetto shows */
	uint64_t max_depth, deep_pid, deep_tid; /* the deepest of those */
	const char *error;			/* damage found by the reader, or NULL */
};

/* One line of FXT_STATUS_FD:
 *   fxtrace pid=PID events=N threads=N dropped=N bytes=N output=PATH */
struct status_line {
	long pid;
	struct archive_stats st;
	char *output; /* points into the status buffer */
};

static void die(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("fxt-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

static void usage(FILE *f)
{
	fputs("Usage: fxt-run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "       fxt-run --recover [-o FILE] [-f] SPOOL|DIR...\n"
	      "Run PROGRAM (built with -finstrument-functions) under the fxtrace agent and\n"
	      "write its calls to a Fuchsia Trace Format archive.\n"
	      "\n"
	      "  -o, --output FILE      archive to write (default: PROGRAM.fxt, in the\n"
	      "                         current directory; not '-': it must be a file;\n"
	      "                         FILE.gz is written compressed)\n"
	      "  -f, --force            overwrite FILE if it exists\n"
	      "      --libc=LIST        libc calls to record, a comma-separated list of\n"
	      "                         groups: io, mem, thread, sync, proc, sleep, log;\n"
	      "                         or all, none, default (= io,thread,proc,sleep,log)\n"
	      "      --sample[=HZ]      also sample each thread's stack HZ times per second\n"
	      "                         of its CPU time (1 to 10000; default 1000)\n"
	      "      --keep-parts       leave one archive per process (FILE for PROGRAM,\n"
	      "                         FILE's name with .PID before .fxt for the others)\n"
	      "                         instead of merging them all into FILE\n"
	      "      --buffer-size SIZE trace buffer size of each process\n"
	      "      --max-size SIZE    stop recording (and count drops) past SIZE bytes\n"
	      "                         of trace; 0 means no limit\n"
	      "      --recover          turn spools left behind (fxt-run killed, a crash\n"
	      "                         of the session) into one archive: SPOOL files, or\n"
	      "                         every *.spool in DIR; FILE defaults to the archive\n"
	      "                         name the spools were written for\n"
	      "  -q, --quiet            do not print the summary\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show the version and exit\n"
	      "\n"
	      "SIZE is a number of bytes with an optional suffix k, M or G (powers of 1024).\n"
	      "The agent is $FXT_AGENT if set, else " AGENT_NAME " next to fxt-run\n"
	      "(or in its .libs/), else the one installed in " FXT_PKGLIBDIR ".\n"
	      "Every traced process (PROGRAM, its children, the programs they run) writes\n"
	      "an archive; when PROGRAM exits, fxt-run merges those of the processes that\n"
	      "are done into FILE, one FXT provider per process, PROGRAM's first.  A\n"
	      "process still running then keeps its own archive, written when it exits.\n"
	      "If a process dies before its archive is written (_exit, abort, a signal,\n"
	      "SIGKILL), fxt-run recovers the archive from the spool it left; if fxt-run\n"
	      "itself is killed, `fxt-run --recover DIR` does it later.\n"
	      "Exit status: PROGRAM's, or 128+N if signal N killed it; 127 if PROGRAM\n"
	      "is not found, 126 if it cannot be executed, 2 on fxt-run's own errors.\n",
	      f);
}

/* ------------------------------------------------------------- options */

/* Dies unless every group of the --libc list is known, naming the first
 * unknown one.  The agent parses the list itself (FXT_LIBC), with the same
 * function: it gets it as given. */
static void check_libc(const char *list)
{
	unsigned groups;

	if (agent_libc_parse(list, &groups) == 0)
		return;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		char *one = strndup(p, len);
		if (one == NULL)
			die(EXIT_USAGE, "out of memory");
		if (agent_libc_parse(one, &groups) != 0)
			die(EXIT_USAGE,
			    "--libc: unknown group '%s' (groups: io, mem, thread, sync, proc, "
			    "sleep, log; or all, none, default)",
			    one);
		free(one);
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	die(EXIT_USAGE, "--libc: invalid list '%s'", list); /* not reached */
}

/* The rate of --sample=HZ: a decimal number from 1 to AGENT_MAX_SAMPLE_HZ,
 * or death. */
static unsigned parse_sample(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (v == 0 || errno != 0 || *end != '\0' || v > AGENT_MAX_SAMPLE_HZ)
		die(EXIT_USAGE, "--sample: invalid rate '%s' (1 to %u samples per second)", s,
		    AGENT_MAX_SAMPLE_HZ);
	return (unsigned)v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_BUFFER_SIZE = 256,
		OPT_MAX_SIZE,
		OPT_LIBC,
		OPT_SAMPLE,
		OPT_KEEP_PARTS,
		OPT_RECOVER
	};
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "libc", required_argument, NULL, OPT_LIBC },
		{ "sample", optional_argument, NULL, OPT_SAMPLE },
		{ "keep-parts", no_argument, NULL, OPT_KEEP_PARTS },
		{ "recover", no_argument, NULL, OPT_RECOVER },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	/* '+': stop at PROGRAM, whose own options are not ours.  ':': we
	 * print the errors ourselves, on one line. */
	while ((c = getopt_long(argc, argv, "+:o:fqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (optarg[0] == '\0')
				die(EXIT_USAGE, "-o: empty file name");
			/* The agent writes archives with seeks and renames of
			 * its own, and several processes may write: a file. */
			if (strcmp(optarg, "-") == 0)
				die(EXIT_USAGE,
				    "-o -: cannot write the archive to standard output; "
				    "give a file name");
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_BUFFER_SIZE:
			if (fxt__parse_size(optarg, &o->buffer_bytes) != 0 || o->buffer_bytes == 0)
				die(EXIT_USAGE, "--buffer-size: invalid size '%s'", optarg);
			o->buffer_size = optarg;
			break;
		case OPT_MAX_SIZE:
			if (fxt__parse_size(optarg, &o->max_bytes) != 0)
				die(EXIT_USAGE, "--max-size: invalid size '%s'", optarg);
			o->max_size = optarg;
			break;
		case OPT_LIBC:
			check_libc(optarg);
			o->libc = optarg;
			break;
		case OPT_SAMPLE:
			o->sample_hz = optarg != NULL ? parse_sample(optarg) : DEFAULT_SAMPLE_HZ;
			break;
		case OPT_KEEP_PARTS:
			o->keep_parts = true;
			break;
		case OPT_RECOVER:
			o->recover = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("fxt-run (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		case ':':
			die(EXIT_USAGE, "option '%s' needs an argument (see --help)",
			    argv[optind - 1]);
		default:
			if (optopt != 0)
				die(EXIT_USAGE, "unknown option '-%c' (see --help)", optopt);
			die(EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die(EXIT_USAGE, o->recover ? "--recover: no spool or directory given (see --help)"
					   : "no program to run (see --help)");
	o->argv = argv + optind;
}

/* ---------------------------------------------------------- the agent */

static bool is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory holding our own executable, in buf.  Returns 0 or -errno. */
static int self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (slash == NULL)
		return -EINVAL;
	*slash = '\0';
	return 0;
}

/* Finds the agent and returns its absolute path (malloc'd), or dies. */
static char *find_agent(void)
{
	const char *env = getenv(FXT_ENV_AGENT);
	char dir[PATH_MAX], cand[PATH_MAX + 64];

	if (env != NULL && env[0] != '\0') {
		char *abs = realpath(env, NULL);
		if (abs == NULL || !is_regular_file(abs))
			die(EXIT_USAGE, "%s=%s: %s", FXT_ENV_AGENT, env,
			    abs == NULL ? strerror(errno) : "not a regular file");
		return abs;
	}

	if (self_dir(dir, sizeof(dir)) == 0) {
		/* Installed side by side, or in the libtool build tree, where
		 * the shared object lives in .libs/. */
		static const char *const subdirs[] = { "", "/.libs" };
		for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
			snprintf(cand, sizeof(cand), "%s%s/%s", dir, subdirs[i], AGENT_NAME);
			if (is_regular_file(cand))
				return realpath(cand, NULL);
		}
	}
	snprintf(cand, sizeof(cand), "%s/%s", FXT_PKGLIBDIR, AGENT_NAME);
	if (is_regular_file(cand))
		return realpath(cand, NULL);
	die(EXIT_USAGE, "cannot find the agent %s (next to fxt-run, in %s, or set %s)", AGENT_NAME,
	    FXT_PKGLIBDIR, FXT_ENV_AGENT);
}

/* --------------------------------------------------------- the program */

/* Resolves PROGRAM as a shell does: a name with a slash is a path, any
 * other name is searched in $PATH.  Returns the path (malloc'd), or dies
 * with 127 (not found) or 126 (found but not executable). */
static char *find_program(const char *prog)
{
	if (strchr(prog, '/') != NULL) {
		struct stat st;
		if (stat(prog, &st) != 0) {
			int err = errno;
			die(err == ENOENT || err == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC, "%s: %s",
			    prog, strerror(err));
		}
		if (S_ISDIR(st.st_mode))
			die(EXIT_NOEXEC, "%s: Is a directory", prog);
		if (access(prog, X_OK) != 0)
			die(EXIT_NOEXEC, "%s: %s", prog, strerror(errno));
		return strdup(prog);
	}

	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	bool denied = false;
	size_t plen = strlen(prog);
	for (const char *p = path;; p++) {
		const char *colon = strchrnul(p, ':');
		size_t dlen = (size_t)(colon - p);
		/* An empty element means the current directory. */
		char *cand = malloc(dlen + plen + 3);
		if (cand == NULL)
			die(EXIT_USAGE, "out of memory");
		if (dlen == 0)
			sprintf(cand, "./%s", prog);
		else
			sprintf(cand, "%.*s/%s", (int)dlen, p, prog);

		struct stat st;
		if (stat(cand, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			denied = true;
		}
		free(cand);
		if (*colon == '\0')
			break;
		p = colon;
	}
	if (denied)
		die(EXIT_NOEXEC, "%s: Permission denied", prog);
	die(EXIT_NOTFOUND, "%s: command not found", prog);
}

/* The loader ignores LD_PRELOAD in a program that has none (static and
 * static-PIE executables: no PT_INTERP) and in a secure-mode one (set-user-
 * or set-group-ID to someone else): say so before it runs untraced.
 * Scripts and unreadable files are not checked. */
static void warn_untraceable(const char *path, const char *name)
{
	struct stat st;
	unsigned char ident[EI_NIDENT];
	bool interp = false;
	int fd;

	if (stat(path, &st) != 0)
		return;
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		fprintf(stderr,
			"fxt-run: warning: %s is set-%s-ID: the loader ignores LD_PRELOAD, so it "
			"runs untraced\n",
			name, (st.st_mode & S_ISUID) && st.st_uid != geteuid() ? "user" : "group");
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) != 0 ||
	    ident[EI_CLASS] != (__ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32)) {
		close(fd);
		return;
	}
	ElfW(Ehdr) eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    eh.e_phentsize != sizeof(ElfW(Phdr))) {
		close(fd);
		return;
	}
	for (unsigned i = 0; i < eh.e_phnum && !interp; i++) {
		ElfW(Phdr) ph;
		off_t off = (off_t)eh.e_phoff + (off_t)i * (off_t)sizeof(ph);
		if (pread(fd, &ph, sizeof(ph), off) != (ssize_t)sizeof(ph))
			break;
		interp = ph.p_type == PT_INTERP;
	}
	close(fd);
	if (!interp)
		fprintf(stderr,
			"fxt-run: warning: %s is statically linked: LD_PRELOAD cannot load the "
			"agent into it, so it runs untraced\n",
			name);
}

/* ------------------------------------------------------------- output */

/* The archive's absolute path (malloc'd): -o, or PROGRAM's basename plus
 * ".fxt" in the current directory.  Absolute because the program may
 * change directory before the agent writes.  Dies if the file exists
 * (without --force) or its directory is not writable. */
static char *output_path(const struct options *o)
{
	char cwd[PATH_MAX], *path;
	const char *name = o->output;
	char *owned = NULL;

	if (name == NULL) {
		const char *base = strrchr(o->argv[0], '/');
		base = base != NULL ? base + 1 : o->argv[0];
		if (asprintf(&owned, "%s.fxt", base) < 0)
			die(EXIT_USAGE, "out of memory");
		name = owned;
	}
	if (name[0] == '/') {
		path = strdup(name);
	} else {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			die(EXIT_USAGE, "cannot get the current directory: %s", strerror(errno));
		if (asprintf(&path, "%s/%s", cwd, name) < 0)
			path = NULL;
	}
	if (path == NULL)
		die(EXIT_USAGE, "out of memory");

	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			die(EXIT_USAGE, "%s: Is a directory", name);
		if (!o->force)
			die(EXIT_USAGE,
			    "%s exists; use -f to overwrite it or -o to choose another name", name);
	} else if (errno != ENOENT) {
		die(EXIT_USAGE, "%s: %s", name, strerror(errno));
	}

	char *dir = strdup(path);
	if (dir == NULL)
		die(EXIT_USAGE, "out of memory");
	*strrchr(dir, '/') = '\0';
	const char *d = dir[0] != '\0' ? dir : "/";
	if (stat(d, &st) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(ENOTDIR));
	/* A real file, as the agent and we will create them: access(2)
	 * says yes to root in /proc, where nothing can be created. */
	char *probe;
	if (asprintf(&probe, "%s/.fxt-run.%ld.probe", d[1] != '\0' ? d : "", (long)getpid()) < 0)
		die(EXIT_USAGE, "out of memory");
	int pfd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (pfd < 0)
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(errno));
	close(pfd);
	unlink(probe);
	free(probe);
	/* The directory without "." or ".." or links: every name of the run
	 * (the agent's, ours) is then spelled one way. */
	char *real = realpath(d, NULL);
	if (real != NULL) {
		char *canon;
		if (asprintf(&canon, "%s/%s", strcmp(real, "/") != 0 ? real : "",
			     strrchr(path, '/') + 1) >= 0) {
			free(path);
			path = canon;
		}
		free(real);
	}
	free(dir);
	free(owned);
	return path;
}

/* --------------------------------------------------------- environment */

/* Sets NAME=VALUE in our environment, which the child inherits. */
static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		die(EXIT_USAGE, "setenv %s: %s", name, strerror(errno));
}

static void set_env_u64(const char *name, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	set_env(name, buf);
}

/* Puts the agent first in LD_PRELOAD, keeping what the user preloads. */
static void prepend_preload(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (old == NULL || old[0] == '\0') {
		set_env("LD_PRELOAD", agent);
		return;
	}
	if (asprintf(&v, "%s:%s", agent, old) < 0)
		die(EXIT_USAGE, "out of memory");
	set_env("LD_PRELOAD", v);
	free(v);
}

/* ------------------------------------------------------------- running */

struct run;
static void scan_spools(struct run *r, bool final);
static void run_set_root(struct run *r, long root);

/* How often the spools are looked at while the program runs. */
#define SCAN_INTERVAL_NS (50 * 1000 * 1000)

/* Forks and execs the program; returns its wait status.  While it runs we
 * ignore SIGINT and SIGQUIT, as a shell does: the terminal sends them to
 * the whole foreground group, the program decides, and we report.  And we
 * convert the spools of the processes that are done, waking at SIGCHLD
 * (blocked here, so that sigtimedwait() takes it) or every interval. */
static int run(const char *path, char *const argv[], pid_t *child, struct run *r)
{
	struct sigaction ign, old_int, old_quit;
	sigset_t chld, old_mask;
	int status;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		die(EXIT_USAGE, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* The program gets the dispositions we were given. */
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		/* It is the root process, the one that writes exactly
		 * FXT_OUTPUT, even if it forks before the agent starts. */
		char buf[24];
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		setenv(FXT_ENV_ROOT_PID, buf, 1);
		execve(path, argv, environ);
		int err = errno;
		if (err == ENOEXEC) {
			/* A script without "#!": a shell runs it with sh. */
			size_t n = 0;
			while (argv[n] != NULL)
				n++;
			char **sh_argv = calloc(n + 2, sizeof(*sh_argv));
			if (sh_argv != NULL) {
				sh_argv[0] = (char *)"sh";
				sh_argv[1] = (char *)path;
				for (size_t i = 1; i <= n; i++)
					sh_argv[i + 1] = argv[i];
				execve("/bin/sh", sh_argv, environ);
				err = errno;
			}
		}
		fprintf(stderr, "fxt-run: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}

	*child = pid;
	run_set_root(r, (long)pid);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die(EXIT_USAGE, "waitpid: %s", strerror(errno));
		scan_spools(r, false);
		struct timespec ts = { 0, SCAN_INTERVAL_NS };
		sigtimedwait(&chld, NULL, &ts);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return status;
}

/* --------------------------------------------------------- the summary */

/* A set of thread ids (open addressing, grows at half full). */
struct tid_set {
	uint64_t *slots; /* 0 = empty; a tid of 0 is stored as UINT64_MAX */
	size_t cap, n;
};

/* Fibonacci hashing: the product's high bits mix all of the tid's bits. */
static size_t tid_hash(uint64_t tid, size_t cap)
{
	return (size_t)((tid * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int tid_set_add(struct tid_set *s, uint64_t tid)
{
	if (tid == 0)
		tid = UINT64_MAX;
	if (2 * (s->n + 1) > s->cap) {
		size_t ncap = s->cap != 0 ? 2 * s->cap : 64;
		uint64_t *ns = calloc(ncap, sizeof(*ns));
		if (ns == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			uint64_t v = s->slots[i];
			if (v == 0)
				continue;
			size_t j = tid_hash(v, ncap);
			while (ns[j] != 0)
				j = (j + 1) & (ncap - 1);
			ns[j] = v;
		}
		free(s->slots);
		s->slots = ns;
		s->cap = ncap;
	}
	size_t j = tid_hash(tid, s->cap);
	while (s->slots[j] != 0) {
		if (s->slots[j] == tid)
			return 0;
		j = (j + 1) & (s->cap - 1);
	}
	s->slots[j] = tid;
	s->n++;
	return 0;
}

/* Reads the archive at path.  Returns 0 or -errno (st->error then says
 * what the reader found, if it got that far). */
static int archive_stats(const char *path, struct archive_stats *st)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	struct tid_set tids = { 0 };
	struct stat sb;
	int rc;

	memset(st, 0, sizeof(*st));
	if (stat(path, &sb) != 0)
		return -errno;
	st->bytes = (uint64_t)sb.st_size;
	rc = fxt_reader_open_path(&r, path, 0);
	if (rc < 0)
		return rc;
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		if (rec.type != FXT_RECORD_EVENT)
			continue;
		switch (rec.u.event.type) {
		case FXT_EVENT_INSTANT:
			st->dropped +=
			    fxt_dropped_in_name(rec.u.event.name.data, rec.u.event.name.len);
			continue;
		case FXT_EVENT_DURATION_BEGIN:
		case FXT_EVENT_DURATION_END:
		case FXT_EVENT_DURATION_COMPLETE:
			break; /* events = duration events, as the agent counts them */
		default:
			continue;
		}
		st->events++;
		if (tid_set_add(&tids, rec.u.event.tid) != 0) {
			rc = -ENOMEM;
			break;
		}
	}
	/* No magic record first: empty, truncated before its first record,
	 * or not an archive at all; nothing a trace viewer can read. */
	bool magic = fxt_reader_saw_magic(r);
	if (rc < 0 && rc != -ENOMEM && magic)
		st->error = "damaged archive";
	st->threads = tids.n;
	free(tids.slots);
	fxt_reader_free(r);
	if (!magic)
		return -ENODATA;
	return rc < 0 ? (rc == -1 ? -EBADMSG : rc) : 0;
}

/* Whether path is an archive: it starts with the magic record (a process
 * that failed or died while writing it may leave an empty file). */
static bool is_archive(const char *path)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	bool magic;

	if (fxt_reader_open_path(&r, path, 0) < 0)
		return false;
	(void)fxt_reader_next(r, &rec);
	magic = fxt_reader_saw_magic(r);
	fxt_reader_free(r);
	return magic;
}

static void format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	v /= 1024.0;
	while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* What the summary lines said, for the final hint. */
static struct {
	bool root; /* the root's archive was summarised */
	uint64_t events;
} summarised;

/* `note`, if not NULL, follows the numbers ("recovered from spool").  An
 * empty `what` means the root's archive. */
static void print_summary(const char *what, const char *display, const struct archive_stats *st,
			  const char *note)
{
	char size[32];

	summarised.root |= what[0] == '\0';
	summarised.events += st->events + st->dropped;
	format_size(st->bytes, size, sizeof(size));
	fprintf(stderr,
		"fxt-run: wrote %s%s (%s, %" PRIu64 " event%s, %" PRIu64 " thread%s, %" PRIu64
		" dropped%s)%s%s%s%s\n",
		what, display, size, st->events, st->events == 1 ? "" : "s", st->threads,
		st->threads == 1 ? "" : "s", st->dropped,
		st->dropped != 0 ? ": raise --max-size to keep them" : "",
		st->error != NULL ? "; " : "", st->error != NULL ? st->error : "",
		note != NULL ? "; " : "", note != NULL ? note : "");
	if (st->deep != 0)
		fprintf(stderr,
			"fxt-run: warning: %" PRIu64 " slice%s nest deeper than %u levels (%" PRIu64
			" deep on pid %" PRIu64 " tid %" PRIu64
			"): Perfetto does not show them (its "
			"stat slice_max_depth_exceeded); fxt-report counts them, fxt-flame "
			"--max-depth draws them bounded\n",
			st->deep, st->deep == 1 ? "" : "s", RECON_SHOWN_DEPTH, st->max_depth,
			st->deep_pid, st->deep_tid);
}

/* Adds one archive's deep nesting to `sum`'s. */
static void add_deep(struct archive_stats *sum, const struct archive_stats *st)
{
	sum->deep += st->deep;
	if (st->max_depth > sum->max_depth) {
		sum->max_depth = st->max_depth;
		sum->deep_pid = st->deep_pid;
		sum->deep_tid = st->deep_tid;
	}
}

/* The path as the user named it: relative to the current directory when
 * it is inside it. */
static const char *display_name(const char *path)
{
	static char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return path;
	size_t n = strlen(cwd);
	if (strncmp(path, cwd, n) == 0 && path[n] == '/')
		return path + n + 1;
	return path;
}

/* ------------------------------------------------------ status reports */

/* Opens the file the traced processes report to (FXT_STATUS_FD): a
 * nameless file in /tmp, in append mode so that the single write(2) of
 * each process lands whole, and inherited by the program.  A file, not a
 * pipe: a descendant that outlives the program may hold it open, and
 * nothing has to drain it while the program runs.  Returns fd or -errno. */
static int status_open(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	fd = open(tmp, O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		/* Older kernels and some file systems lack O_TMPFILE. */
		snprintf(path, sizeof(path), "%s/fxt-run.XXXXXX", tmp);
		fd = mkstemp(path);
		if (fd < 0)
			return -errno;
		unlink(path);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_APPEND) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Reads the whole status file into a NUL-terminated buffer (malloc'd). */
static char *status_read(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	for (;;) {
		if (len + 1 == cap) {
			char *nb = realloc(buf, 2 * cap);
			if (nb == NULL)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = pread(fd, buf + len, cap - 1 - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* Parses one report line in place.  Returns 0 or -EINVAL. */
static int status_parse(char *line, struct status_line *sl)
{
	static const char *const keys[] = { "pid=", "events=", "threads=", "dropped=", "bytes=" };
	uint64_t v[5];
	char *p = line, *end;

	memset(sl, 0, sizeof(*sl));
	if (strncmp(p, "fxtrace ", 8) != 0)
		return -EINVAL;
	p += 8;
	for (size_t i = 0; i < 5; i++) {
		size_t kl = strlen(keys[i]);
		if (strncmp(p, keys[i], kl) != 0)
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p + kl, &end, 10);
		if (errno != 0 || end == p + kl || *end != ' ')
			return -EINVAL;
		p = end + 1;
	}
	if (strncmp(p, "output=", 7) != 0 || p[7] == '\0')
		return -EINVAL;
	sl->pid = (long)v[0];
	sl->st.events = v[1];
	sl->st.threads = v[2];
	sl->st.dropped = v[3];
	sl->st.bytes = v[4];
	sl->output = p + 7;
	return 0;
}

/* --------------------------------------------------------------- parts */

/* One traced process's archive of this run. */
struct part {
	char *path;		 /* absolute */
	long pid;		 /* its process */
	unsigned image;		 /* 0: OUT; N: OUT.PID.fxt (1) or OUT.PID.N.fxt */
	bool running;		 /* its process was still running: not merged */
	bool recovered;		 /* from its process's spool */
	struct archive_stats st; /* bytes: on disk */
	const char *note;	 /* after its summary line's numbers, or NULL */
};

/* The archives of the run: reported on the status file, recovered from a
 * spool, or found in the output directory. */
struct parts {
	struct part *v;
	size_t n, cap;
};

/* The names of the archives of other processes in OUT's directory before
 * the program ran: none of them is this run's, since the agent creates
 * those names exclusively (a taken name makes it try ".PID.2"...).  So a
 * part a --keep-parts run left is never merged into the next run's OUT,
 * however close in time the two runs are. */
struct name_list {
	char **v;
	size_t n;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists them, sorted.  Best effort: a directory that cannot be read, or no
 * memory, gives a shorter list (the time check still applies). */
static void list_old_parts(struct name_list *l, const char *out, const char *dir)
{
	size_t cap = 0;
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");

	memset(l, 0, sizeof(*l));
	if (d == NULL)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		long pid;
		unsigned image;
		if (!run_archive_parse(out, de->d_name, &pid, &image))
			continue;
		if (l->n == cap) {
			size_t ncap = cap != 0 ? 2 * cap : 16;
			char **nv = realloc(l->v, ncap * sizeof(*nv));
			if (nv == NULL)
				break;
			l->v = nv;
			cap = ncap;
		}
		if ((l->v[l->n] = strdup(de->d_name)) == NULL)
			break;
		l->n++;
	}
	closedir(d);
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_name);
}

static bool name_list_has(const struct name_list *l, const char *name)
{
	return l->n != 0 && bsearch(&name, l->v, l->n, sizeof(*l->v), cmp_name) != NULL;
}

static void name_list_free(struct name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static struct part *parts_find(const struct parts *ps, const char *path)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].path, path) == 0)
			return &ps->v[i];
	return NULL;
}

/* The part at `path`, added if new (zeroed but for its names).  NULL when
 * out of memory: the archive is then neither summarised nor merged, and
 * stays where its process wrote it. */
static struct part *parts_add(struct parts *ps, const char *path, long pid, unsigned image)
{
	struct part *pt = parts_find(ps, path);

	if (pt != NULL)
		return pt;
	if (ps->n == ps->cap) {
		size_t ncap = ps->cap != 0 ? 2 * ps->cap : 16;
		struct part *nv = realloc(ps->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return NULL;
		ps->v = nv;
		ps->cap = ncap;
	}
	pt = &ps->v[ps->n];
	memset(pt, 0, sizeof(*pt));
	pt->path = strdup(path);
	if (pt->path == NULL)
		return NULL;
	pt->pid = pid;
	pt->image = image;
	ps->n++;
	return pt;
}

/* Whether OUT is known, or (unless out_only) the root reported an archive. */
static bool parts_have_root(const struct parts *ps, pid_t root, bool out_only)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].image == 0 || (!out_only && ps->v[i].pid == (long)root))
			return true;
	return false;
}

static void parts_free(struct parts *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i].path);
	free(ps->v);
}

/* Adds the archive each process reported on the status file. */
static void collect_reports(struct parts *ps, const char *out, int status_fd)
{
	char *buf = status_read(status_fd);
	struct stat sb;

	for (char *line = buf, *next; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		struct status_line sl;
		if (status_parse(line, &sl) != 0)
			continue;
		/* Sizes on disk: a gzip archive is smaller than its bytes. */
		if (stat(sl.output, &sb) == 0)
			sl.st.bytes = (uint64_t)sb.st_size;
		const char *slash = strrchr(sl.output, '/');
		long pid;
		unsigned image = 0;
		if (strcmp(sl.output, out) != 0 &&
		    !run_archive_parse(out, slash != NULL ? slash + 1 : sl.output, &pid, &image))
			image = UINT_MAX; /* not a name of ours: last of its pid */
		struct part *pt = parts_add(ps, sl.output, sl.pid, image);
		if (pt != NULL)
			pt->st = sl.st;
	}
	free(buf);
}

/* The root process neither reported nor left a spool: it replaced itself
 * with an uninstrumented image, or its archive or spool could not be
 * written.  Reads what is there.  A file at out that is no archive (no
 * magic record: the agent failed or died writing it) is this run's (out
 * did not exist, or -f removed it, before the program ran): it goes.
 * Returns whether there is no file at all (said once the other archives
 * are known). */
static bool find_root(struct parts *ps, const char *prog, const char *out, pid_t root, bool quiet)
{
	struct archive_stats st;
	int rc;

	/* Under -q no numbers are printed: only the magic record is read. */
	if (quiet) {
		memset(&st, 0, sizeof(st));
		rc = is_archive(out) ? 0 : access(out, F_OK) == 0 ? -ENODATA : -errno;
	} else {
		rc = archive_stats(out, &st);
	}
	if (rc == 0 || st.error != NULL) {
		struct part *pt = parts_add(ps, out, (long)root, 0);
		if (pt != NULL)
			pt->st = st;
		return false;
	}
	if (rc == -ENODATA) {
		bool removed = unlink(out) == 0;
		if (!quiet)
			fprintf(stderr,
				"fxt-run: %s: the trace is lost: %s is not an archive (%s)%s, and "
				"there is no spool to recover it from\n",
				prog, display_name(out), st.bytes != 0 ? "truncated" : "empty",
				removed ? "; removed it" : "");
		return false;
	}
	if (rc != -ENOENT && !quiet)
		fprintf(stderr, "fxt-run: cannot read %s: %s\n", display_name(out), strerror(-rc));
	return rc == -ENOENT;
}

/* ------------------------------------------------------------ spools */

/* Every traced process records into its spool, OUT.PID.spool (image N of
 * a pid after N - 1 execs: OUT.PID.N.spool; spool/format.h), and seals
 * it at exit and before exec.  fxt-run converts each spool of the run
 * (the root pid in its header is ours) into that process's archive as
 * soon as it is sealed or its process is gone, whatever killed it, while
 * the program runs: a long build does not pile up spools.  When the
 * program is done, the spools of processes still running are left to
 * them (the owner protocol of spool/format.h): such a process converts
 * its own at exit. */
struct run {
	const char *out; /* OUT, absolute */
	char *dir;	 /* OUT's directory ("" for "/") */
	long root;	 /* the root's pid; 0: any (--recover) */
	time_t since;	 /* spools older than the run are not its */
	bool quiet;
	bool recover; /* --recover: claim whatever the owner says */
	struct parts *ps;
	char session[PATH_MAX + 64];
	/* The session's pipe writes, loaded once per pass over the spools
	 * (a pass's conversions share them; the log only grows). */
	struct session_write *writes;
	size_t nwrites;
	bool writes_loaded;
	char writes_of[PATH_MAX + 64]; /* the session they are of */
	struct fxt_symcache *syms;     /* one for the whole run */
	unsigned running;	       /* spools of live processes seen by the last scan */
};

/* The spool's header page, mapped shared: the owner protocol needs its
 * atomics on the very memory the process sees. */
struct spool_view {
	struct spool_header *h;
	size_t len;
};

/* 0, -errno, -EBADMSG (no spool of this version) or -EAGAIN (being
 * created: the magic comes last). */
static int spool_view_open(const char *path, struct spool_view *v)
{
	struct stat sb;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	int err = 0;

	v->h = NULL;
	v->len = 4096;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		err = -EBADMSG;
	} else if ((uint64_t)sb.st_size < v->len) {
		err = sb.st_size == 0 ? -EAGAIN : -EBADMSG;
	} else {
		void *p = mmap(NULL, v->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			err = -errno;
		else
			v->h = p;
	}
	close(fd);
	if (err)
		return err;
	if (__atomic_load_n(&v->h->magic, __ATOMIC_ACQUIRE) != SPOOL_MAGIC) {
		err = v->h->magic == 0 ? -EAGAIN : -EBADMSG;
	} else if (v->h->version != SPOOL_VERSION || v->h->header_size != SPOOL_HEADER_SIZE) {
		err = -EBADMSG;
	}
	if (err) {
		munmap(v->h, v->len);
		v->h = NULL;
	}
	return err;
}

/* Whether the spool at `path` was never born: its process died while
 * creating it, before the magic that comes last (spool.c), so before any
 * chunk.  Such a spool holds no record: it is removed.  A spool being
 * created by a live process is not; one whose header does not even name
 * its process yet is taken for unborn only when `any_pid` (--recover: the
 * run is over). */
static bool spool_unborn(const char *path, bool any_pid)
{
	struct spool_header h;
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	bool unborn;

	if (fd < 0)
		return false;
	unborn = fstat(fd, &sb) == 0 && (uint64_t)sb.st_size <= SPOOL_HEADER_SIZE &&
		 ((sb.st_size == 0 && any_pid) ||
		  (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == 0 &&
		   (h.pid != 0 ? !proc_alive((long)h.pid, h.start_time) : any_pid)));
	close(fd);
	return unborn;
}

static void spool_view_close(struct spool_view *v)
{
	if (v->h)
		munmap(v->h, v->len);
	v->h = NULL;
}

/* Converts one claimed spool into its process's archive: image 1 of the
 * root's pid at OUT, any other at OUT.PID[.N].fxt, created exclusively as
 * the agent names them.  Removes the spool once the archive is written. */
/* The session's pipe writes for a conversion, loaded once per pass over
 * the spools (the log only grows), and again when --recover moves on to
 * another run's session. */
static void run_writes(struct run *r, struct convert_opts *o)
{
	if (!r->writes_loaded || strcmp(r->writes_of, r->session) != 0) {
		free(r->writes);
		r->writes = NULL;
		r->nwrites = 0;
		if (session_load_writes(r->session, &r->writes, &r->nwrites) != 0) {
			r->writes = NULL;
			r->nwrites = 0;
		}
		r->writes_loaded = true;
		snprintf(r->writes_of, sizeof(r->writes_of), "%s", r->session);
	}
	o->writes = r->writes;
	o->nwrites = r->nwrites;
	o->writes_loaded = true;
}

static int convert_one(struct run *r, const char *spool, long pid, long root, unsigned image)
{
	bool is_root = pid == root && image == 1;
	struct convert_opts o = { .session = r->session, .cache = r->syms };
	struct convert_result res;
	char path[PATH_MAX + 64];
	unsigned n = 0;
	struct stat sb;
	int rc;

	run_writes(r, &o);
	/* The root's first image is OUT; its later images follow OUT, named
	 * from .ROOT; the others' start at .PID. */
	rc = convert_spool_named(spool, r->out, pid,
				 is_root       ? 0
				 : pid == root ? image - 1
					       : image,
				 &o, &res, path, sizeof(path), &n);
	if (rc < 0)
		return rc;
	if (unlink(spool) != 0 && !r->quiet)
		fprintf(stderr, "fxt-run: cannot remove %s: %s\n", display_name(spool),
			strerror(errno));
	struct part *pt = parts_add(r->ps, path, pid, is_root ? 0 : n);
	if (pt != NULL) {
		pt->st.bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : res.bytes;
		pt->st.events = res.events;
		pt->st.threads = res.threads;
		pt->st.dropped = res.dropped;
		pt->st.deep = res.deep;
		pt->st.max_depth = res.max_depth;
		pt->st.deep_pid = (uint64_t)pid;
		pt->st.deep_tid = res.deep_tid;
		pt->recovered = !res.sealed;
		pt->note = res.sealed ? NULL : "recovered from spool";
	}
	return 0;
}

/* Looks at one spool of the run and converts it if its process is done
 * with it.  At the end (`final`), the spool of a live process is left to
 * that process.  Returns false while its process still runs. */
static bool consider_spool(struct run *r, const char *path, bool final)
{
	struct spool_view v;
	int rc = spool_view_open(path, &v);

	if (rc == -EAGAIN && spool_unborn(path, r->recover)) {
		unlink(path);
		return true;
	}
	if (rc == -EAGAIN || rc == -ENOENT)
		return rc == -ENOENT || final; /* being created, or gone */
	if (rc < 0 || v.h == NULL) {
		if (final && !r->quiet)
			fprintf(stderr, "fxt-run: %s is not a spool this fxt-run can read (%s)\n",
				display_name(path), strerror(rc < 0 ? -rc : EINVAL));
		return true;
	}
	struct spool_header *h = v.h;
	long pid = (long)h->pid;
	unsigned image = h->image ? h->image : 1;
	long root = r->root ? r->root : (long)h->root_pid;
	if (r->root && (long)h->root_pid != r->root) {
		spool_view_close(&v);
		return true; /* another run's */
	}
	if (r->recover)
		session_path(r->session, sizeof(r->session), r->out, root);
	uint32_t owner = __atomic_load_n(&h->owner, __ATOMIC_SEQ_CST);
	bool sealed = __atomic_load_n(&h->state, __ATOMIC_SEQ_CST) == SPOOL_SEALED;
	bool alive = proc_alive(pid, h->start_time);
	bool mine = false;

	if (!sealed && alive) {
		/* Its process converts it at its exit, fxt-run being done. */
		spool_view_close(&v);
		if (final && !r->quiet)
			fprintf(stderr,
				"fxt-run: process %ld is still running; it writes its archive "
				"when it exits (its records are in %s)\n",
				pid, display_name(path));
		return false;
	}
	if (owner == SPOOL_OWNER_SELF && alive) {
		spool_view_close(&v);
		return true; /* converting its own */
	}
	mine = spool_claim(h, SPOOL_OWNER_NONE, SPOOL_OWNER_LAUNCHER) ||
	       ((r->recover || final) && owner != SPOOL_OWNER_NONE);
	spool_view_close(&v);
	if (!mine)
		return true;
	rc = convert_one(r, path, pid, root, image);
	if (rc < 0 && !r->quiet)
		fprintf(stderr,
			"fxt-run: the records of process %ld cannot be converted (%s); they "
			"stay in %s (try: fxt-run --recover %s)\n",
			pid, strerror(-rc), display_name(path), display_name(path));
	return true;
}

/* One pass over OUT's directory: converts every spool of the run whose
 * process is done; r->running counts the others. */
static void scan_spools(struct run *r, bool final)
{
	DIR *d = opendir(r->dir[0] != '\0' ? r->dir : "/");
	struct dirent *de;

	r->running = 0;
	r->writes_loaded = false; /* reloaded at the pass's first conversion */
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *path;
		struct stat sb;
		long pid;
		unsigned image;

		if (!run_spool_parse(r->out, de->d_name, &pid, &image))
			continue;
		if (asprintf(&path, "%s/%s", r->dir, de->d_name) < 0)
			break;
		if (stat(path, &sb) == 0 && (r->recover || sb.st_mtime >= r->since) &&
		    !consider_spool(r, path, final))
			r->running++;
		free(path);
	}
	closedir(d);
}

static void run_set_root(struct run *r, long root)
{
	r->root = root;
	session_path(r->session, sizeof(r->session), r->out, root);
}

static int run_init(struct run *r, struct parts *ps, const char *out, long root, time_t since,
		    bool quiet)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->dir = strdup(out);
	if (r->dir == NULL)
		return -ENOMEM;
	*strrchr(r->dir, '/') = '\0'; /* out is absolute */
	r->since = since;
	r->quiet = quiet;
	r->ps = ps;
	r->syms = fxt_symcache_new(); /* NULL: each conversion makes its own */
	run_set_root(r, root);
	return 0;
}

/* FXT_RUN_DEBUG set: how the run's symbol cache did, on stderr. */
static void run_debug(const struct run *r)
{
	uint64_t hits, misses;

	if (getenv(FXT_ENV_RUN_DEBUG) == NULL || r->syms == NULL)
		return;
	fxt_symcache_counts(r->syms, &hits, &misses);
	fprintf(stderr,
		"fxt-run: symbols: %" PRIu64 " from the run's cache, %" PRIu64 " looked up\n", hits,
		misses);
}

/* The end of the run: every spool whose process is done is converted;
 * processes that are exiting get a moment (a SIGKILLed process with a
 * large spool takes a while to go); the rest are left to themselves. */
static void finish_spools(struct run *r, const char *ctl)
{
	scan_spools(r, false);
	for (int i = 0; i < 25 && r->running != 0; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		scan_spools(r, false);
	}
	/* From now on a process that seals converts its own spool; the last
	 * pass sees every spool sealed before (spool/launcher.h). */
	int err = ctl != NULL ? launcher_ctl_set(ctl, LAUNCHER_CLOSING) : 0;
	if (err != 0 && !r->quiet)
		fprintf(stderr, "fxt-run: cannot write %s: %s\n", display_name(ctl),
			strerror(-err));
	scan_spools(r, true);
}

static bool newer_than(const char *path, time_t since)
{
	struct stat sb;
	return stat(path, &sb) == 0 && sb.st_mtime >= since;
}

/* The processes that closed the status fd (daemons, programs that close
 * every fd above 2), and every process under -q, write their archives
 * without a report.  Every archive of a process other than the root in
 * OUT's directory written since `since`, not there before the run (`old`)
 * and not known yet is added; its
 * numbers are read unless `quiet`.  One whose process is still running
 * may be half written: it is marked so. */
static void collect_unreported(struct parts *ps, const char *out, const char *dir, time_t since,
			       const struct name_list *old, bool quiet)
{
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");
	if (d == NULL)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		long pid;
		unsigned image;
		char *path;

		if (!run_archive_parse(out, de->d_name, &pid, &image) ||
		    name_list_has(old, de->d_name))
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			break;
		if (parts_find(ps, path) != NULL || !newer_than(path, since) || !is_archive(path)) {
			free(path);
			continue;
		}
		struct archive_stats st = { 0 };
		int rc = quiet ? 0 : archive_stats(path, &st);
		if (rc == 0 || st.error != NULL) {
			struct part *pt = parts_add(ps, path, pid, image);
			if (pt != NULL) {
				if (!quiet)
					pt->st = st;
				pt->note = "its process did not report it";
				pt->running = proc_alive(pid, 0);
			}
		}
		free(path);
	}
	closedir(d);
}

/* ------------------------------------------------------------- summary */

/* At most this many child archives get a line of their own. */
#define MAX_CHILD_LINES 8

/* The root's archive first, then its later images', then the others by
 * pid and image: the order of the merged archive and of the summary.  ctx
 * points to the root's pid. */
static int part_cmp(const void *a, const void *b, void *ctx)
{
	const struct part *x = a, *y = b;
	long root = *(const long *)ctx;
	int xr = x->image == 0 ? 0 : x->pid == root ? 1 : 2;
	int yr = y->image == 0 ? 0 : y->pid == root ? 1 : 2;

	if (xr != yr)
		return xr - yr;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* One line per archive (--keep-parts, or when merging failed). */
static void print_parts(const struct parts *ps)
{
	unsigned nchildren = 0;
	uint64_t more_events = 0;

	for (size_t i = 0; i < ps->n; i++) {
		const struct part *pt = &ps->v[i];
		if (pt->image == 0)
			print_summary("", display_name(pt->path), &pt->st, pt->note);
		else if (nchildren++ < MAX_CHILD_LINES)
			print_summary("child archive ", display_name(pt->path), &pt->st, pt->note);
		else
			more_events += pt->st.events;
	}
	if (nchildren > MAX_CHILD_LINES)
		fprintf(stderr, "fxt-run: and %u more child archives (%" PRIu64 " events)\n",
			nchildren - MAX_CHILD_LINES, more_events);
}

/* Merges the archives of the processes that are done into OUT, removes
 * them, and says so in one line (or prints the only archive's line).
 * Returns 0, or -errno when the merge failed: the archives are then as
 * their processes left them. */
static int merge_parts(struct parts *ps, const char *out, bool quiet)
{
	const char **paths = calloc(ps->n + 1, sizeof(*paths));
	const struct part **merged = calloc(ps->n + 1, sizeof(*merged));
	struct merge_part_result *res = calloc(ps->n + 1, sizeof(*res));
	size_t n = 0, nprocs = 0, nrecovered = 0, ntruncated = 0;
	const struct part *only = NULL;
	struct archive_stats sum;
	int err = 0;

	if (paths == NULL || merged == NULL || res == NULL) {
		err = -ENOMEM;
		goto out;
	}
	memset(&sum, 0, sizeof(sum));
	for (size_t i = 0; i < ps->n; i++) {
		const struct part *pt = &ps->v[i];
		if (pt->running) {
			if (!quiet)
				fprintf(stderr,
					"fxt-run: process %ld is still running: its archive %s is "
					"left apart\n",
					pt->pid, display_name(pt->path));
			continue;
		}
		/* Sorted: a process's images are neighbours. */
		nprocs += only == NULL || pt->pid != only->pid;
		merged[n] = pt;
		paths[n++] = pt->path;
		only = pt;
		sum.events += pt->st.events;
		sum.threads += pt->st.threads;
		sum.dropped += pt->st.dropped;
		add_deep(&sum, &pt->st);
		nrecovered += pt->recovered;
	}
	if (n == 0)
		goto out;
	/* The root's archive alone is the archive: nothing to rewrite. */
	if (n == 1 && strcmp(paths[0], out) == 0 && only->st.error == NULL) {
		if (!quiet)
			print_summary("", display_name(out), &only->st, only->note);
		goto out;
	}
	err = merge_archives(out, paths, n, res);
	if (err < 0) {
		if (!quiet)
			fprintf(stderr, "fxt-run: cannot merge the archives into %s: %s\n",
				display_name(out), strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ntruncated += res[i].truncated;
		/* What the reader found beyond a cut is still in OUT. */
		if (merged[i]->st.error != NULL && !res[i].truncated)
			sum.error = merged[i]->st.error;
		if (res[i].not_an_archive)
			continue; /* not merged: left as it is */
		if (strcmp(paths[i], out) != 0 && unlink(paths[i]) != 0 && !quiet)
			fprintf(stderr, "fxt-run: cannot remove %s: %s\n", display_name(paths[i]),
				strerror(errno));
	}
	if (!quiet) {
		struct stat sb;
		char note[160];
		int len =
		    snprintf(note, sizeof(note), "%zu process%s", nprocs, nprocs == 1 ? "" : "es");
		if (n != nprocs)
			len += snprintf(note + len, sizeof(note) - (size_t)len, ", %zu images", n);
		if (nrecovered != 0)
			len += snprintf(note + len, sizeof(note) - (size_t)len,
					", %zu recovered from spool", nrecovered);
		if (ntruncated != 0)
			snprintf(note + len, sizeof(note) - (size_t)len,
				 ", %zu truncated (their last records are lost)", ntruncated);
		if (stat(out, &sb) == 0)
			sum.bytes = (uint64_t)sb.st_size;
		print_summary("", display_name(out), &sum, note);
	}
out:
	free(paths);
	free(merged);
	free(res);
	return err;
}

static void add_spool(struct name_list *l, size_t *cap, const char *path)
{
	if (l->n == *cap) {
		size_t ncap = *cap != 0 ? 2 * *cap : 16;
		char **nv = realloc(l->v, ncap * sizeof(*nv));
		if (nv == NULL)
			die(EXIT_USAGE, "out of memory");
		l->v = nv;
		*cap = ncap;
	}
	if ((l->v[l->n++] = strdup(path)) == NULL)
		die(EXIT_USAGE, "out of memory");
}

/* fxt-run --recover [-o OUT] [-f] SPOOL|DIR...: every spool given, or
 * found in a directory given, becomes its process's archive, and they
 * are merged into OUT as a run would have merged them.  Exit status 0
 * when something was recovered, 1 when nothing could be, 2 on usage
 * errors. */
/* --recover takes its options anywhere among the paths. */
static char **recover_args(struct options *o)
{
	size_t n = 0, j = 0;
	char **paths;
	bool opts = true;

	while (o->argv[n] != NULL)
		n++;
	paths = calloc(n + 1, sizeof(*paths));
	if (paths == NULL)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char *a = o->argv[i];
		if (opts && strcmp(a, "--") == 0) {
			opts = false;
		} else if (opts && (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
			if (i + 1 == n)
				die(EXIT_USAGE, "option '%s' needs an argument (see --help)", a);
			o->output = o->argv[++i];
		} else if (opts && strncmp(a, "--output=", 9) == 0) {
			o->output = a + 9;
		} else if (opts && (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0)) {
			o->force = true;
		} else if (opts && (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)) {
			o->quiet = true;
		} else if (opts && strcmp(a, "--keep-parts") == 0) {
			o->keep_parts = true;
		} else if (opts && a[0] == '-' && a[1] != '\0') {
			die(EXIT_USAGE, "--recover: unknown option '%s' (see --help)", a);
		} else {
			paths[j++] = a;
		}
	}
	if (j == 0)
		die(EXIT_USAGE, "--recover: no spool or directory given (see --help)");
	if (o->output != NULL && o->output[0] == '\0')
		die(EXIT_USAGE, "-o: empty file name");
	return paths;
}

/* After --recover of a directory: the archives its processes wrote
 * themselves (fxt-run was gone) join the merge, and the files of runs
 * whose processes are all gone (session, control file) go. */
static void recover_dir_rest(struct parts *ps, const char *given, const char *out)
{
	/* Absolute, as the parts converted here are named. */
	char *dir = realpath(given, NULL);
	DIR *d = dir != NULL ? opendir(dir) : NULL;
	const size_t plen = strlen(CONVERT_PARTIAL_PREFIX);
	const char *base = strrchr(out, '/') + 1; /* out is absolute */
	struct dirent *de;

	if (d == NULL) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		char *path;
		long pid;
		unsigned image;

		if (asprintf(&path, "%s/%s", dir, n) < 0)
			break;
		if (run_archive_parse(out, n, &pid, &image) && is_archive(path) &&
		    parts_find(ps, path) == NULL) {
			struct part *pt = parts_add(ps, path, pid, image);
			struct stat sb;
			if (pt != NULL) {
				pt->note = "written by its process";
				if (stat(path, &sb) == 0)
					pt->st.bytes = (uint64_t)sb.st_size;
				archive_stats(path, &pt->st);
			}
		} else if (strncmp(n, CONVERT_PARTIAL_PREFIX, plen) == 0 &&
			   (strcmp(n + plen, base) == 0 ||
			    run_archive_parse(out, n + plen, &pid, &image))) {
			unlink(path); /* a conversion killed halfway: its spool is here */
		} else if (run_pid_file_parse(out, n, RUN_SESSION_SUFFIX, &pid) ||
			   run_pid_file_parse(out, n, RUN_CONTROL_SUFFIX, &pid)) {
			/* The session (PID: the root) or fxt-run's control file
			 * of a run whose process is gone. */
			if (pid > 0 && !proc_alive(pid, 0))
				unlink(path);
		}
		free(path);
	}
	closedir(d);
	free(dir);
}

static int recover_main(const struct options *given)
{
	struct options opts = *given;
	const struct options *o = &opts;
	char **args = recover_args(&opts);
	struct name_list spools = { 0 };
	size_t cap = 0;

	for (char *const *a = args; *a != NULL; a++) {
		struct stat sb;
		if (stat(*a, &sb) != 0)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		if (!S_ISDIR(sb.st_mode)) {
			add_spool(&spools, &cap, *a);
			continue;
		}
		DIR *d = opendir(*a);
		if (d == NULL)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		struct dirent *de;
		size_t before = spools.n;
		while ((de = readdir(d)) != NULL) {
			char *p;
			size_t len = strlen(de->d_name);
			if (len < 7 || strcmp(de->d_name + len - 6, ".spool") != 0)
				continue;
			if (asprintf(&p, "%s/%s", *a, de->d_name) < 0)
				die(EXIT_USAGE, "out of memory");
			add_spool(&spools, &cap, p);
			free(p);
		}
		closedir(d);
		if (spools.n > 1)
			qsort(spools.v + before, spools.n - before, sizeof(*spools.v), cmp_name);
		if (spools.n == before)
			die(EXIT_USAGE, "--recover: no spool (*.spool) in %s", *a);
	}

	/* OUT: -o, else the name the spools were written for. */
	struct options oo = *o;
	char *derived = NULL;
	if (oo.output == NULL) {
		for (size_t i = 0; i < spools.n; i++) {
			size_t len = run_spool_output(spools.v[i]);
			char *one = len != 0 ? strndup(spools.v[i], len) : NULL;
			if (len == 0)
				die(EXIT_USAGE,
				    "--recover: %s is not named OUT.PID.spool; give the archive's "
				    "name with -o",
				    spools.v[i]);
			if (derived != NULL && strcmp(one, derived) != 0)
				die(EXIT_USAGE,
				    "--recover: spools of several runs (%s, %s); recover them one "
				    "run at a time, or merge them with -o FILE",
				    derived, one);
			free(derived);
			derived = one;
		}
		oo.output = derived;
	}
	static char *no_argv[] = { (char *)"spool", NULL };
	oo.argv = no_argv;
	char *out = output_path(&oo);
	if (oo.force && unlink(out) != 0 && errno != ENOENT)
		die(EXIT_USAGE, "cannot remove %s: %s", display_name(out), strerror(errno));

	struct parts parts = { 0 };
	struct run r;
	if (run_init(&r, &parts, out, 0, 0, o->quiet) != 0)
		die(EXIT_USAGE, "out of memory");
	r.recover = true;
	size_t bad = 0;
	for (size_t i = 0; i < spools.n; i++) {
		struct spool_view v;
		int rc = spool_view_open(spools.v[i], &v);
		if (rc == -EAGAIN && spool_unborn(spools.v[i], true)) {
			unlink(spools.v[i]); /* no record in it */
			continue;
		}
		if (rc < 0) {
			bad++;
			fprintf(stderr, "fxt-run: %s: %s\n", spools.v[i],
				rc == -EBADMSG || rc == -EAGAIN
				    ? "not an fxtrace spool (or of another version)"
				    : strerror(-rc));
			continue;
		}
		spool_view_close(&v);
		consider_spool(&r, spools.v[i], true);
	}
	for (char *const *a = args; *a != NULL; a++) {
		struct stat sb;
		if (stat(*a, &sb) == 0 && S_ISDIR(sb.st_mode))
			recover_dir_rest(&parts, *a, out);
	}
	long root = 0;
	for (size_t i = 0; i < parts.n; i++)
		if (parts.v[i].image == 0)
			root = parts.v[i].pid;
	if (parts.n > 1)
		qsort_r(parts.v, parts.n, sizeof(*parts.v), part_cmp, &root);
	int code = parts.n != 0 ? 0 : 1;
	if (parts.n == 0 && bad < spools.n) /* else each said why */
		fprintf(stderr, "fxt-run: --recover: nothing recovered; %s not written\n",
			display_name(out));
	else if (o->keep_parts || merge_parts(&parts, out, o->quiet) != 0) {
		if (!o->quiet)
			print_parts(&parts);
	}
	parts_free(&parts);
	free(r.writes);
	run_debug(&r);
	fxt_symcache_free(r.syms);
	free(r.dir);
	free(out);
	free(derived);
	free(args);
	name_list_free(&spools);
	return code;
}

int main(int argc, char **argv)
{
	struct options o;

	parse_options(argc, argv, &o);
	if (o.recover)
		return recover_main(&o);
	char *agent = find_agent();
	char *program = find_program(o.argv[0]);
	char *out = output_path(&o);

	/* With --force the old archive goes first, so that a run that writes
	 * nothing is not reported with the old one's numbers. */
	if (o.force && unlink(out) != 0 && errno != ENOENT)
		die(EXIT_USAGE, "cannot remove %s: %s", display_name(out), strerror(errno));

	int status_fd = -1;
	if (!o.quiet) {
		status_fd = status_open();
		if (status_fd < 0)
			die(EXIT_USAGE, "cannot create a status file: %s", strerror(-status_fd));
		/* With the file's identity: a process that closes the fd and
		 * opens a file of its own on that number passes the number on
		 * to its children, whose agents must not write into that file. */
		struct stat sb;
		char id[80];
		if (fstat(status_fd, &sb) != 0)
			die(EXIT_USAGE, "cannot stat the status file: %s", strerror(errno));
		snprintf(id, sizeof(id), "%d:%ju:%ju", status_fd, (uintmax_t)sb.st_dev,
			 (uintmax_t)sb.st_ino);
		set_env(FXT_ENV_STATUS_FD, id);
	}
	set_env(FXT_ENV_OUTPUT, out);
	if (o.buffer_size != NULL)
		set_env_u64(FXT_ENV_BUFFER_SIZE, o.buffer_bytes);
	if (o.max_size != NULL)
		set_env_u64(FXT_ENV_MAX_SIZE, o.max_bytes);
	if (o.libc != NULL)
		set_env(FXT_ENV_LIBC, o.libc);
	if (o.sample_hz != 0)
		set_env_u64(FXT_ENV_SAMPLE, o.sample_hz);
	prepend_preload(agent);
	{
		/* Who converts the spools: we, while we run (FXT_LAUNCHER). */
		char id[64], st;
		uint64_t t = 0;
		if (proc_stat_read(0, &st, &t) != 0)
			t = 0;
		snprintf(id, sizeof(id), "%ld:%" PRIu64, (long)getpid(), t);
		set_env(FXT_ENV_LAUNCHER, id);
	}
	char ctl[PATH_MAX + 64];
	launcher_ctl_path(ctl, sizeof(ctl), out, (long)getpid());
	int cerr = launcher_ctl_set(ctl, LAUNCHER_OPEN);
	if (cerr != 0)
		die(EXIT_USAGE, "cannot create %s: %s", display_name(ctl), strerror(-cerr));

	if (!o.quiet)
		warn_untraceable(program, o.argv[0]);

	pid_t root;
	time_t start = time(NULL);
	struct parts parts = { 0 };
	struct run r;
	if (run_init(&r, &parts, out, 0, start, o.quiet) != 0)
		die(EXIT_USAGE, "out of memory");
	struct name_list old_parts;
	list_old_parts(&old_parts, out, r.dir);
	int status = run(program, o.argv, &root, &r);
	int code = WIFEXITED(status)	 ? WEXITSTATUS(status)
		   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					 : EXIT_USAGE;

	if (!o.quiet && WIFSIGNALED(status))
		fprintf(stderr, "fxt-run: %s: killed by signal %d (%s)\n", o.argv[0],
			WTERMSIG(status), strsignal(WTERMSIG(status)));

	/* Every archive of the run: converted, reported, or found. */
	finish_spools(&r, ctl);
	if (status_fd >= 0)
		collect_reports(&parts, out, status_fd);
	bool no_root = !parts_have_root(&parts, root, true) &&
		       find_root(&parts, o.argv[0], out, root, o.quiet);
	collect_unreported(&parts, out, r.dir, start, &old_parts, o.quiet);
	/* Not traced (an uninstrumented image it exec'd), nothing recorded
	 * and no exit(): e.g. a shell that only starts the traced programs. */
	if (no_root && !o.quiet) {
		if (parts.n == 0 || o.keep_parts)
			fprintf(stderr, "fxt-run: %s wrote no archive (%s)\n", o.argv[0],
				display_name(out));
		else
			fprintf(stderr, "fxt-run: %s wrote no archive of its own\n", o.argv[0]);
	}
	long root_pid = (long)root;
	if (parts.n > 1)
		qsort_r(parts.v, parts.n, sizeof(*parts.v), part_cmp, &root_pid);

	if (o.keep_parts || merge_parts(&parts, out, o.quiet) != 0) {
		if (!o.quiet)
			print_parts(&parts);
	}
	if (!o.quiet) {
		if (summarised.root && summarised.events == 0)
			fprintf(stderr,
				"fxt-run: no instrumented calls: was %s built with "
				"-finstrument-functions?\n",
				o.argv[0]);
		close(status_fd);
	}

	/* The session file the traced processes shared (spool/session.h): the
	 * run is over, and a later run gets a root pid of its own. */
	char session[PATH_MAX + 64];
	session_path(session, sizeof(session), out, (long)root);
	unlink(session);

	unlink(ctl);
	parts_free(&parts);
	free(r.writes);
	run_debug(&r);
	fxt_symcache_free(r.syms);
	free(r.dir);
	name_list_free(&old_parts);
	free(out);
	free(program);
	free(agent);
	return code;
}
