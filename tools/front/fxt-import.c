/* fxt-import: another tracer's file -> an FXT archive (import/import.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "import/import.h"
#include "tools/front/common.h"

#define NAME "fxt-import"

/* Exit statuses: the input is the problem (1), or the call or the output
 * (TOOL_EXIT_ERROR, 2). */
#define EXIT_BAD_INPUT 1

struct options {
	const char *input;
	const char *output;
	bool quiet;
};

static const char help[] =
    "Usage: fxt-import [OPTION]... FILE [-o OUT.fxt]\n"
    "Convert another tracer's recording into an FXT archive that Perfetto and\n"
    "the fxt tools read.  The format is found from the file's magic number,\n"
    "never from its name:\n"
    "  trace-cmd trace.dat, versions 6 and 7, plain or compressed (read with\n"
    "    libtracecmd"
#ifndef HAVE_LIBTRACECMD
    "; NOT IN THIS BUILD: configure found no libtracecmd"
#endif
    "): sched_switch becomes context switches (CPU\n"
    "    tracks in Perfetto), wake-ups an instant, a \"runnable\" slice and a\n"
    "    flow to the thread's next \"running\" slice; trace_marker writes log\n"
    "    records and \"print\" instants; kernel_stack the stack, named from the\n"
    "    file's kallsyms; every other event an instant with its fields as\n"
    "    arguments.  Each buffer (instance) is a provider of its own.\n"
    "  Darwin ktrace V3 (magic 0x55aa0300): DBG_FUNC_START/END pairs become\n"
    "    slices on their thread, other kdebug events instants (class,\n"
    "    subclass, code, arg1..arg4, cpu); thread names from the thread map.\n"
    "Timestamps stay on the file's clock, in nanoseconds; the provider's name\n"
    "says which clock (\"[clock=mono]\"), for fxt-merge.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT    the archive to write (default: FILE.fxt); written\n"
    "                      whole or not at all; .gz or .zst compresses it\n"
    "  -q, --quiet         do not print the summary line\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "To line a kernel trace up with a program's, record it on CLOCK_MONOTONIC,\n"
    "the clock of fxt-run's archives, then merge the two:\n"
    "  trace-cmd record -C mono -e sched -o trace.dat &  fxt-run -o app.fxt -- ./app\n"
    "  fxt-import trace.dat -o kernel.fxt && fxt-merge kernel.fxt app.fxt -o both.fxt\n"
    "\n"
    "Exit status:\n"
    "  0   the archive was written\n"
    "  1   FILE is of no known format, truncated or damaged: one line names\n"
    "      the file and the byte offset of the problem; nothing is written\n"
    "  2   bad usage, or the output cannot be written\n";

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static const struct tool_cli cli = { NAME, help, "o:q", longopts };

static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	if (optind != argc - 1)
		return tool_usage_error(
		    NAME, "%s", optind == argc ? "missing FILE" : "only one FILE is imported");
	o->input = argv[optind];
	return 0;
}

static const char *format_name(enum import_format f)
{
	return f == IMPORT_TRACEDAT ? "trace-cmd trace.dat" : "ktrace";
}

/* Writes the archive of ic's input to fd once.  `mark`: with fxtrace's
 * mark of time order after the magic record.  0 or -errno with ic->err
 * set; *output_failed when the output is the problem. */
static int import_once(struct import_ctx *ic, int fd, unsigned wflags, enum import_format fmt,
		       const char *output, bool mark, bool *output_failed)
{
	int rc = fxt_writer_open_fd(&ic->w, fd, wflags);

	if (rc < 0) {
		*output_failed = true;
		snprintf(ic->err, sizeof(ic->err), "%s: %s", output, strerror(-rc));
		return rc;
	}
	rc = fxt_writer_magic(ic->w);
	if (rc == 0 && mark)
		rc = fxt_writer_time_ordered(ic->w);
	if (rc == 0)
		rc = fmt == IMPORT_TRACEDAT ? import_tracedat(ic) : import_ktrace(ic);
	int crc = fxt_writer_close(ic->w);
	ic->w = NULL;
	if (rc == 0 && crc < 0) {
		rc = crc;
		*output_failed = true;
		snprintf(ic->err, sizeof(ic->err), "%s: %s", output, strerror(-crc));
	}
	return rc;
}

/* Writes the archive of ic's input to fd, marked as in time order per
 * thread (import.h): when an event came out of order, the output is
 * written again from where it started, without the mark.  An output that
 * cannot be written again (a pipe) gets no mark.  0 or -errno, as
 * import_once(). */
static int import_to(struct import_ctx *ic, int fd, unsigned wflags, enum import_format fmt,
		     const char *output, bool *output_failed)
{
	off_t start = lseek(fd, 0, SEEK_CUR);
	struct stat st;
	bool mark = start >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	int rc = import_once(ic, fd, wflags, fmt, output, mark, output_failed);

	if (rc == 0 && mark && ic->st.unordered) {
		if (ftruncate(fd, start) != 0 || lseek(fd, start, SEEK_SET) < 0) {
			rc = -errno;
			*output_failed = true;
			snprintf(ic->err, sizeof(ic->err), "%s: %s", output, strerror(-rc));
			return rc;
		}
		if (lseek(ic->fd, 0, SEEK_SET) < 0)
			return import_fail(ic, -errno, 0, "%s", strerror(errno));
		memset(&ic->st, 0, sizeof(ic->st));
		ic->next_provider = 1;
		rc = import_once(ic, fd, wflags, fmt, output, false, output_failed);
	}
	return rc;
}

/* What the child of import_isolated() reports. */
struct child_result {
	int rc;
	bool output_failed;
	struct import_stats st;
	char err[512];
};

/* import_to() in a child process.  libtracecmd trusts the files it reads:
 * a truncated or damaged trace.dat can crash it (seen: v6 files cut inside
 * their CPU data), and that must cost an error line, not fxt-import. */
static int import_isolated(struct import_ctx *ic, int fd, unsigned wflags, enum import_format fmt,
			   const char *output, bool *output_failed)
{
	struct child_result res;
	int pfd[2], status;
	pid_t pid;

	fflush(NULL);
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return import_fail(ic, -errno, 0, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return import_fail(ic, -errno, 0, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* What it says goes through the pipe; what the library or a
		 * sanitizer would print about a crash is the parent's one line. */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDERR_FILENO);
			close(null);
		}
		close(pfd[0]);
		memset(&res, 0, sizeof(res));
		res.rc = import_to(ic, fd, wflags, fmt, output, &res.output_failed);
		res.st = ic->st;
		memcpy(res.err, ic->err, sizeof(res.err));
		ssize_t w = write(pfd[1], &res, sizeof(res)); /* < PIPE_BUF: whole */
		_exit(w == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(pfd[1]);
	memset(&res, 0, sizeof(res));
	size_t got = 0;
	while (got < sizeof(res)) {
		ssize_t r = read(pfd[0], (char *)&res + got, sizeof(res) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(res)) {
		struct stat st;
		uint64_t size = fstat(ic->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
		if (WIFSIGNALED(status))
			return import_fail(ic, -EINVAL, size,
					   "libtracecmd crashed reading it (signal %d): the file "
					   "is truncated or damaged",
					   WTERMSIG(status));
		return import_fail(ic, -EIO, 0, "the import process failed (status %d)", status);
	}
	ic->st = res.st;
	memcpy(ic->err, res.err, sizeof(ic->err));
	ic->err[sizeof(ic->err) - 1] = '\0';
	*output_failed = res.output_failed;
	return res.rc;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct import_ctx ic;
	struct tool_output out;
	unsigned char head[16];
	char *defout = NULL, err[512];
	enum import_format fmt;
	ssize_t n;
	bool output_failed = false;
	int rc;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	memset(&ic, 0, sizeof(ic));
	ic.path = o.input;
	ic.next_provider = 1;
	ic.fd = open(o.input, O_RDONLY | O_CLOEXEC);
	if (ic.fd < 0)
		return tool_error(NAME, "%s: %s", o.input, strerror(errno)), EXIT_BAD_INPUT;
	do
		n = pread(ic.fd, head, sizeof(head), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = tool_error(NAME, "%s: %s", o.input, strerror(errno));
		close(ic.fd);
		return EXIT_BAD_INPUT;
	}
	fmt = import_sniff(head, (size_t)n);
	if (fmt == IMPORT_UNKNOWN && n >= 4 && head[2] == 0xaa && head[3] == 0x55) {
		tool_error(NAME, "%s: offset 0: a ktrace file of version %u: only V3 is read",
			   o.input, head[1]);
		close(ic.fd);
		return EXIT_BAD_INPUT;
	}
	if (fmt == IMPORT_UNKNOWN || fmt == IMPORT_FXT) {
		tool_error(NAME, "%s: offset 0: %s", o.input,
			   fmt == IMPORT_FXT
			       ? "already an FXT archive (fxt-merge combines archives)"
			   : n == 0 ? "an empty file"
				    : "not a trace.dat or ktrace file (unknown magic number)");
		close(ic.fd);
		return EXIT_BAD_INPUT;
	}
	if (o.output == NULL) {
		if (asprintf(&defout, "%s.fxt", o.input) < 0) {
			close(ic.fd);
			return tool_error(NAME, "out of memory");
		}
		o.output = defout;
	}
	if (tool_output_open(&out, o.output, err, sizeof(err)) < 0) {
		close(ic.fd);
		free(defout);
		return tool_error(NAME, "%s: %s", o.output, err);
	}
	unsigned wflags = fxt_writer_path_flags(o.output);
	if (fmt == IMPORT_TRACEDAT)
		rc = import_isolated(&ic, fileno(out.f), wflags, fmt, o.output, &output_failed);
	else
		rc = import_to(&ic, fileno(out.f), wflags, fmt, o.output, &output_failed);
	close(ic.fd);
	/* A failed import leaves no partial archive (nor clobbers an old one). */
	int crc = tool_output_close(&out, rc < 0, err, sizeof(err));
	if (rc == 0 && crc < 0) {
		rc = crc;
		output_failed = true;
		snprintf(ic.err, sizeof(ic.err), "%.200s: %.250s", o.output, err);
	}
	if (rc < 0) {
		tool_error(NAME, "%s", ic.err[0] ? ic.err : strerror(-rc));
		free(defout);
		return output_failed ? TOOL_EXIT_ERROR : EXIT_BAD_INPUT;
	}
	if (!o.quiet)
		fprintf(stderr,
			NAME ": %s (%s, clock %s): %" PRIu64 " events -> %" PRIu64
			     " records, %" PRIu64 " threads, %u provider%s, %" PRIu64
			     " events lost, %" PRIu64 " skipped -> %s\n",
			o.input, format_name(fmt), ic.st.clock[0] ? ic.st.clock : "?", ic.st.events,
			ic.st.records, ic.st.threads, ic.st.providers,
			ic.st.providers == 1 ? "" : "s", ic.st.lost, ic.st.skipped, o.output);
	free(defout);
	return TOOL_EXIT_OK;
}
