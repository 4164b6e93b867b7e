/* fxt-run: runs a program with the fxtrace agent preloaded and reports
 * the archive it wrote.
 *
 *	fxt-run [options] [--] PROGRAM [ARGS...]
 *
 * It is a small trace manager in the manner of a shell: it finds the agent,
 * passes the options to it through FXT_* environment variables (the agent
 * reads them, see agent/settings.h), prepends the agent to LD_PRELOAD, runs
 * the program with the terminal untouched, and exits with the program's
 * status (128 + signal if it was killed).  Each traced process reports its
 * archive on FXT_STATUS_FD (a file fxt-run opens for it); fxt-run prints
 * one summary line per archive from those reports, and reads an archive
 * with the reader library when its process did not report (it closed the
 * status fd: child archives are then found in the output directory).  A
 * file without the FXT magic record is no archive.  When a process dies
 * without writing its archive (SIGKILL, abort(), _exit() ...), or its agent
 * cannot write it (RLIMIT_FSIZE, RLIMIT_NOFILE, a full disk), it leaves its
 * spool: fxt-run turns it into the archive with the agent's own flusher
 * (launcher/recover.h) and says "recovered from spool".  Programs the agent
 * cannot enter (static, set-user-ID) run with a warning.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "agent/settings.h"
#include "launcher/recover.h"

#ifndef FXT_PKGLIBDIR
#define FXT_PKGLIBDIR "/usr/local/lib/fxtrace"
#endif

#define AGENT_NAME "libfxt-agent.so"

/* The variables the agent reads (agent/settings.h documents them). */
#define ENV_AGENT	"FXT_AGENT"
#define ENV_OUTPUT	"FXT_OUTPUT"
#define ENV_BUFFER_SIZE "FXT_BUFFER_SIZE"
#define ENV_MAX_SIZE	"FXT_MAX_SIZE"
#define ENV_STATUS_FD	"FXT_STATUS_FD"
#define ENV_ROOT_PID	"FXT_ROOT_PID"

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
	char *const *argv; /* PROGRAM [ARGS...] */
};

/* What the summary says about one archive. */
struct archive_stats {
	uint64_t bytes;	   /* on disk */
	uint64_t events;   /* duration event records */
	uint64_t threads;  /* distinct threads with events */
	uint64_t dropped;  /* calls not recorded (FXT_MAX_SIZE) */
	const char *error; /* damage found by the reader, or NULL */
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
	      "Run PROGRAM (built with -finstrument-functions) under the fxtrace agent and\n"
	      "write its calls to a Fuchsia Trace Format archive.\n"
	      "\n"
	      "  -o, --output FILE      archive to write (default: PROGRAM.fxt, in the\n"
	      "                         current directory; not '-': it must be a file);\n"
	      "                         forked children write FILE's name with .PID\n"
	      "                         before .fxt\n"
	      "  -f, --force            overwrite FILE if it exists\n"
	      "      --buffer-size SIZE per-thread buffer size\n"
	      "      --max-size SIZE    stop recording (and count drops) past SIZE bytes\n"
	      "                         of trace; 0 means no limit\n"
	      "  -q, --quiet            do not print the summary\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show the version and exit\n"
	      "\n"
	      "SIZE is a number of bytes with an optional suffix k, M or G (powers of 1024).\n"
	      "The agent is $FXT_AGENT if set, else " AGENT_NAME " next to fxt-run\n"
	      "(or in its .libs/), else the one installed in " FXT_PKGLIBDIR ".\n"
	      "If PROGRAM dies before its archive is written (_exit, abort, a signal,\n"
	      "SIGKILL), fxt-run recovers the archive from the spool it left.\n"
	      "Exit status: PROGRAM's, or 128+N if signal N killed it; 127 if PROGRAM\n"
	      "is not found, 126 if it cannot be executed, 2 on fxt-run's own errors.\n",
	      f);
}

/* ------------------------------------------------------------- options */

/* Parses SIZE ("4096", "64k", "1M", "2G"; a trailing "B" or "iB" is
 * allowed).  Returns 0 or -EINVAL / -ERANGE. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0)
		return -ERANGE;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (shift != 0 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (shift != 0 && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_BUFFER_SIZE = 256, OPT_MAX_SIZE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
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
			if (parse_size(optarg, &o->buffer_bytes) != 0 || o->buffer_bytes == 0)
				die(EXIT_USAGE, "--buffer-size: invalid size '%s'", optarg);
			o->buffer_size = optarg;
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &o->max_bytes) != 0)
				die(EXIT_USAGE, "--max-size: invalid size '%s'", optarg);
			o->max_size = optarg;
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
		die(EXIT_USAGE, "no program to run (see --help)");
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
	const char *env = getenv(ENV_AGENT);
	char dir[PATH_MAX], cand[PATH_MAX + 64];

	if (env != NULL && env[0] != '\0') {
		char *abs = realpath(env, NULL);
		if (abs == NULL || !is_regular_file(abs))
			die(EXIT_USAGE, "%s=%s: %s", ENV_AGENT, env,
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
	    FXT_PKGLIBDIR, ENV_AGENT);
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
	if (access(d, W_OK | X_OK) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(errno));
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

/* Forks and execs the program; returns its wait status.  While it runs we
 * ignore SIGINT and SIGQUIT, as a shell does: the terminal sends them to
 * the whole foreground group, the program decides, and we report. */
static int run(const char *path, char *const argv[], pid_t *child)
{
	struct sigaction ign, old_int, old_quit;
	int status;

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
		/* It is the root process, the one that writes exactly
		 * FXT_OUTPUT, even if it forks before the agent starts. */
		char buf[24];
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		setenv(ENV_ROOT_PID, buf, 1);
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
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			die(EXIT_USAGE, "waitpid: %s", strerror(errno));
	}
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

/* ------------------------------------------------------------- summary */

/* At most this many child archives get a line of their own. */
#define MAX_CHILD_LINES 8

/* The archives summarised so far (absolute paths), so that the scan of the
 * output directory names only the others.  Best effort: a path it cannot
 * hold (out of memory) may be named twice. */
struct path_set {
	char **v;
	size_t n, cap;
};

static void path_set_add(struct path_set *s, const char *path)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 16;
		char **nv = realloc(s->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return;
		s->v = nv;
		s->cap = ncap;
	}
	if ((s->v[s->n] = strdup(path)) != NULL)
		s->n++;
}

static bool path_set_has(const struct path_set *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], path) == 0)
			return true;
	return false;
}

static void path_set_free(struct path_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* Prints a line per archive its process reported.  Returns whether the
 * root process reported. */
static bool report(const char *out, pid_t root, int status_fd, struct path_set *seen)
{
	char *buf = status_fd >= 0 ? status_read(status_fd) : NULL;
	bool root_seen = false;
	unsigned nchildren = 0;
	uint64_t more_events = 0;
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
		path_set_add(seen, sl.output);
		if (sl.pid == (long)root || strcmp(sl.output, out) == 0) {
			print_summary("", display_name(sl.output), &sl.st, NULL);
			root_seen = true;
		} else if (nchildren++ < MAX_CHILD_LINES) {
			print_summary("child archive ", display_name(sl.output), &sl.st, NULL);
		} else {
			more_events += sl.st.events;
		}
	}
	if (nchildren > MAX_CHILD_LINES)
		fprintf(stderr, "fxt-run: and %u more child archives (%" PRIu64 " events)\n",
			nchildren - MAX_CHILD_LINES, more_events);
	free(buf);
	return root_seen;
}

/* The root process neither reported nor left a spool: it replaced itself
 * with an uninstrumented image, or its archive or spool could not be
 * written.  Reads what is there.  A file at out that is no archive (no
 * magic record: the agent failed or died writing it) is this run's (out
 * did not exist, or -f removed it, before the program ran): it goes. */
static void report_missing(const char *prog, const char *out)
{
	struct archive_stats st;
	int rc = archive_stats(out, &st);
	if (rc == 0 || st.error != NULL) {
		print_summary("", display_name(out), &st, NULL);
		return;
	}
	if (rc == -ENODATA) {
		bool removed = unlink(out) == 0;
		fprintf(stderr,
			"fxt-run: %s: the trace is lost: %s is not an archive (%s)%s, and there "
			"is no spool to recover it from\n",
			prog, display_name(out), st.bytes != 0 ? "truncated" : "empty",
			removed ? "; removed it" : "");
		return;
	}
	if (rc != -ENOENT) {
		fprintf(stderr, "fxt-run: cannot read %s: %s\n", display_name(out), strerror(-rc));
		return;
	}

	fprintf(stderr, "fxt-run: %s wrote no archive (%s)\n", prog, display_name(out));
}

/* ------------------------------------------------------------ recovery */

static bool newer_than(const char *path, time_t since)
{
	struct stat sb;
	return stat(path, &sb) == 0 && sb.st_mtime >= since;
}

/* Turns one dead process's spool into its archive: the root's (when it did
 * not report) at OUT, any other process's at OUT.PID.fxt, created
 * exclusively as the agent does (.PID.2 ... when taken).  Removes the spool
 * when the archive is written.  Returns 0 or -errno. */
static int recover_one(const char *spool, const char *out, long pid, bool is_root, bool quiet,
		       struct path_set *seen)
{
	struct recover_result res;
	struct archive_stats st;
	char path[PATH_MAX + 64];
	struct stat sb;
	int rc;

	if (is_root) {
		snprintf(path, sizeof(path), "%s", out);
		rc = recover_spool(spool, path, 0, &res);
	} else {
		rc = -EEXIST;
		for (unsigned n = 1; n <= 100 && rc == -EEXIST; n++) {
			agent_pid_output(path, sizeof(path), out, pid, n);
			rc = recover_spool(spool, path, 1, &res);
		}
	}
	if (rc < 0)
		return rc;
	path_set_add(seen, path);
	if (unlink(spool) != 0 && !quiet)
		fprintf(stderr, "fxt-run: cannot remove %s: %s\n", display_name(spool),
			strerror(errno));
	if (quiet)
		return 0;
	memset(&st, 0, sizeof(st));
	if (stat(path, &sb) == 0)
		st.bytes = (uint64_t)sb.st_size;
	st.events = res.events;
	st.threads = res.threads;
	print_summary(is_root ? "" : "child archive ", display_name(path), &st,
		      "recovered from spool");
	return 0;
}

/* A traced process that dies without flushing (SIGKILL, abort(), _exit(),
 * a fatal signal) leaves its spool, OUT.PID.spool next to the archive (OUT
 * is FXT_OUTPUT, which fxt-run sets), with its raw records.  Every such
 * spool created since `since` is turned into an archive: the root's into
 * OUT, the others' into OUT.PID.fxt like the archives they would have
 * written.  A process that is still running (e.g. a daemon the program
 * left behind) owns its spool and writes its archive when it exits: its
 * spool is only named.  Returns whether the root's archive was recovered. */
static bool recover_spools(const char *out, pid_t root, bool root_seen, time_t since, bool quiet,
			   struct path_set *seen)
{
	bool root_recovered = false;
	char *dir = strdup(out);
	if (dir == NULL)
		return false;
	char *slash = strrchr(dir, '/'); /* out is absolute */
	*slash = '\0';
	const char *base = slash + 1;
	size_t blen = strlen(base);
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");
	if (d == NULL) {
		free(dir);
		return false;
	}

	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		/* BASE "." DIGITS ".spool" */
		const char *n = de->d_name;
		size_t len = strlen(n);
		if (len <= blen + 7 || strncmp(n, base, blen) != 0 || n[blen] != '.' ||
		    strcmp(n + len - 6, ".spool") != 0)
			continue;
		size_t i = blen + 1;
		while (n[i] >= '0' && n[i] <= '9')
			i++;
		if (i == blen + 1 || i != len - 6)
			continue;
		long pid = strtol(n + blen + 1, NULL, 10);

		char *path;
		struct stat sb;
		if (asprintf(&path, "%s/%s", dir, n) < 0)
			break;
		if (stat(path, &sb) != 0 || sb.st_mtime < since) {
			free(path);
			continue;
		}
		if (pid != (long)root && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
			if (!quiet)
				fprintf(stderr,
					"fxt-run: process %ld is still running; it writes its "
					"archive when it exits (its records are in %s)\n",
					pid, display_name(path));
			free(path);
			continue;
		}
		/* The root's archive is OUT unless the root wrote it already
		 * (it reported, or OUT is new: a first image flushed before
		 * an exec and this spool is a later image's). */
		bool is_root =
		    pid == (long)root && !root_seen && !(newer_than(out, since) && is_archive(out));
		int rc = recover_one(path, out, pid, is_root, quiet, seen);
		if (rc == 0)
			root_recovered |= is_root;
		else if (!quiet)
			fprintf(stderr,
				"fxt-run: process %ld died without writing its archive, which "
				"cannot be recovered (%s); its raw records are in %s\n",
				pid, strerror(-rc), display_name(path));
		free(path);
	}
	closedir(d);
	free(dir);
	return root_recovered;
}

/* Whether name is "STEM.PID[.N]EXT", a child's archive name (see
 * agent_pid_output()); stem and ext are the parts of OUT's basename. */
static bool child_archive_name(const char *name, const char *stem, size_t stem_len, const char *ext)
{
	const char *p = name + stem_len;

	if (strncmp(name, stem, stem_len) != 0)
		return false;
	for (int part = 0; part < 2; part++) {
		if (part == 1 && strcmp(p, ext) == 0)
			return true;
		if (*p++ != '.' || *p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return strcmp(p, ext) == 0;
}

/* The processes that closed the status fd (daemons, programs that close
 * every fd above 2) write their archives without a report.  Every child
 * archive in OUT's directory written since `since` and not yet named is
 * named now. */
static void report_unreported(const char *out, time_t since, const struct path_set *seen)
{
	const char *slash = strrchr(out, '/'); /* out is absolute */
	size_t stem = agent_output_stem(out);
	char *dir = strndup(out, (size_t)(slash - out));
	const char *base = slash + 1, *ext = out + stem;
	size_t base_stem = stem - (size_t)(base - out);
	unsigned nchildren = 0;
	uint64_t more_events = 0;

	if (dir == NULL)
		return;
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");
	if (d == NULL) {
		free(dir);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct archive_stats st;
		char *path;

		if (!child_archive_name(de->d_name, base, base_stem, ext))
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			break;
		if (path_set_has(seen, path) || !newer_than(path, since) || !is_archive(path)) {
			free(path);
			continue;
		}
		int rc = archive_stats(path, &st);
		if (rc == 0 || st.error != NULL) {
			if (nchildren++ < MAX_CHILD_LINES)
				print_summary("child archive ", display_name(path), &st,
					      "its process did not report it");
			else
				more_events += st.events;
		}
		free(path);
	}
	if (nchildren > MAX_CHILD_LINES)
		fprintf(stderr, "fxt-run: and %u more child archives (%" PRIu64 " events)\n",
			nchildren - MAX_CHILD_LINES, more_events);
	closedir(d);
	free(dir);
}

int main(int argc, char **argv)
{
	struct options o;

	parse_options(argc, argv, &o);
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
		set_env(ENV_STATUS_FD, id);
	}
	set_env(ENV_OUTPUT, out);
	if (o.buffer_size != NULL)
		set_env_u64(ENV_BUFFER_SIZE, o.buffer_bytes);
	if (o.max_size != NULL)
		set_env_u64(ENV_MAX_SIZE, o.max_bytes);
	prepend_preload(agent);

	if (!o.quiet)
		warn_untraceable(program, o.argv[0]);

	pid_t root;
	time_t start = time(NULL);
	int status = run(program, o.argv, &root);
	int code = WIFEXITED(status)	 ? WEXITSTATUS(status)
		   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					 : EXIT_USAGE;

	if (!o.quiet) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "fxt-run: %s: killed by signal %d (%s)\n", o.argv[0],
				WTERMSIG(status), strsignal(WTERMSIG(status)));
	}
	struct path_set seen = { 0 };
	bool root_seen = !o.quiet && report(out, root, status_fd, &seen);
	bool root_recovered = recover_spools(out, root, root_seen, start, o.quiet, &seen);
	if (!o.quiet) {
		if (!root_seen && !root_recovered)
			report_missing(o.argv[0], out);
		report_unreported(out, start, &seen);
		if (summarised.root && summarised.events == 0)
			fprintf(stderr,
				"fxt-run: no instrumented calls: was %s built with "
				"-finstrument-functions?\n",
				o.argv[0]);
		close(status_fd);
	}
	path_set_free(&seen);
	free(out);
	free(program);
	free(agent);
	return code;
}
