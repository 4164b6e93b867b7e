/* fxt-replay: every call of an archive in time order, nested, with its
 * duration, thread, arguments and return value, the instants and log
 * lines in line; streamed (callstream.h), so that the first line comes at
 * once on any archive and a closed pipe ends it quietly. */
#include "config.h"

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/calls/callmerge.h"
#include "tools/calls/callstream.h"
#include "tools/front/common.h"

#define NAME "fxt-replay"

struct options {
	struct tool_pick pick;
	struct callstream_when since, until;
	size_t depth; /* 0: all */
	const char *match;
	bool time_order;
	const char *path;
};

static const char help[] =
    "Usage: fxt-replay [OPTION]... ARCHIVE\n"
    "Print every call of an FXT archive in time order, nested, with its\n"
    "duration, thread, arguments and return value; instants and log lines in\n"
    "line.  Starts printing at once: the archive is read as it is printed.\n"
    "ARCHIVE is a file, plain, gzip or zstd, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -p, --pid LIST      only the calls of these processes (comma-separated)\n"
    "  -t, --tid LIST      only the calls of these threads (comma-separated)\n"
    "  -s, --since TIME    only what happens at TIME or later\n"
    "  -u, --until TIME    only what happens at TIME or earlier\n"
    "  -d, --depth N       only the calls N levels deep or less (1: the\n"
    "                      top-level calls)\n"
    "  -m, --match RE      only the calls (instants, log lines) whose name\n"
    "                      matches RE (POSIX ERE)\n"
    "  -T, --time-order    every thread's calls merged in time order (a plain\n"
    "                      archive file: read once before the first line)\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "TIME: a number with a unit (ns, us, ms or s: \"1.2s\", \"350ms\") is relative\n"
    "to the first event of the archive; a bare number is an absolute\n"
    "timestamp in ns, as fxt-dump prints them.\n"
    "Each line: the time since the first event (s), the duration, the thread\n"
    "(tid), then the call, indented two spaces per level of nesting up to 64\n"
    "levels; deeper, the indentation stays at 64 levels and the line says its\n"
    "level first, \"[d=100000] name() {\" (so that a deep recursion does not\n"
    "print gigabytes of blanks).  A call with children opens with \"name() {\"\n"
    "and closes with \"} /* name */\" at its end (with its duration); a call\n"
    "without children is one line.  Arguments\n"
    "(fxt-run --args, libc calls' arguments) go in the parentheses, a return\n"
    "value (\"retval\", a libc call's \"result\") after \" = \".  \"! name\" is an\n"
    "instant event, \"# text\" a log line.\n"
    "Calls the tracer dropped, and another writer's full buffer (its provider\n"
    "event record), are said on standard error at the end: \"N calls dropped\",\n"
    "\"a trace buffer filled up N times: records were likely dropped\".\n"
    "Order: the archive's, each thread's events sorted by time first, as Perfetto\n"
    "pairs them (a first pass finds the few a file has out of time order: none in\n"
    "fxt-run's); fxt-run writes a thread's calls together, so the threads come one\n"
    "after the other.  Standard input that is a pipe is read in file order, as it\n"
    "comes.\n"
    "With --time-order the threads' lines are merged by time (each thread's\n"
    "nesting kept): the archive is read once first to find where each thread's\n"
    "calls are (about 0.5 s per 700 MB), then each thread is read from there;\n"
    "plain, gzip or zstd (a thread of a compressed one is decoded from the\n"
    "gzip member or zstd frame before it), not standard input; an archive\n"
    "damaged anywhere is\n"
    "refused, not read up to the damage.  A call never closed ends with \"} /* name */ [open]\", "
    "counted to the last\n"
    "timestamp.  A closed output (`fxt replay app.fxt | head`) ends it quietly.\n"
    "\n"
    "Exit status:\n"
    "  0   the calls were written (or the reader of the output left)\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged (what came before the damage was printed); or the output\n"
    "      cannot be written.  One line on standard error names the problem.\n";

/* clang-format off */
static const struct option longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "since", required_argument, NULL, 's' },
	{ "until", required_argument, NULL, 'u' },
	{ "depth", required_argument, NULL, 'd' },
	{ "match", required_argument, NULL, 'm' },
	{ "time-order", no_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "p:t:s:u:d:m:T", longopts };

static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'p':
		case 't':
			if (tool_pick_option(NAME, c == 'p' ? "pid" : "tid", optarg, &o->pick))
				return TOOL_EXIT_ERROR;
			break;
		case 's':
		case 'u':
			if (callstream_parse_when(optarg, c == 's' ? &o->since : &o->until) < 0)
				return tool_usage_error(
				    NAME, "--%s: not a time (ns, or a number with a unit): '%s'",
				    c == 's' ? "since" : "until", optarg);
			break;
		case 'd':
			if (tool_parse_count(optarg, &o->depth) < 0 || !o->depth)
				return tool_usage_error(NAME, "--depth: not a count above 0: '%s'",
							optarg);
			break;
		case 'm':
			o->match = optarg;
			break;
		case 'T':
			o->time_order = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	return tool_archive_operand(NAME, argc, argv, &o->path);
}

/* ------------------------------------------------------------- printing */

struct replay {
	const struct options *o;
	struct callstream *cs;
	struct callmerge *m; /* --time-order */
	regex_t re;
	bool have_re;
	char *name; /* a NUL-terminated copy for regexec() */
	size_t capname;
	bool closed;		   /* the output's reader left */
	struct tool_losses losses; /* read in the archive's order */
};

/* What relative times start from. */
static uint64_t start_ns(const struct replay *rp)
{
	uint64_t start = 0;

	if (rp->m)
		return callmerge_start_ns(rp->m);
	callstream_start_ns(rp->cs, &start);
	return start;
}

static bool wanted(struct replay *rp, const struct callstream_item *it)
{
	const struct options *o = rp->o;
	uint64_t start, ts = it->ts_ns, rel;

	if (!tool_picked(&o->pick, it->pid, it->tid))
		return false;
	if (o->depth && it->depth >= o->depth)
		return false;
	if (o->since.set || o->until.set) {
		start = start_ns(rp);
		rel = ts >= start ? ts - start : 0;
		if (o->since.set && (o->since.relative ? rel : ts) < o->since.ns)
			return false;
		if (o->until.set && (o->until.relative ? rel : ts) > o->until.ns)
			return false;
		if (o->since.set && o->since.relative && ts < start)
			return false;
	}
	if (rp->have_re) {
		if (TOOL_GROW(rp->name, rp->capname, (size_t)it->name.len + 1) < 0)
			return true; /* shown rather than lost */
		memcpy(rp->name, it->name.data, it->name.len);
		rp->name[it->name.len] = 0;
		if (regexec(&rp->re, rp->name, 0, NULL, 0) != 0)
			return false;
	}
	return true;
}

static int on_item(void *ctx, const struct callstream_item *it)
{
	struct replay *rp = ctx;

	if (callstream_log_copy(it) || !wanted(rp, it))
		return 0;
	callstream_print(stdout, it, start_ns(rp));
	if (ferror(stdout)) {
		if (errno == EPIPE)
			rp->closed = true;
		return -(errno ? errno : EIO);
	}
	return 0;
}

static int on_record(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	struct replay *rp = ctx;

	tool_losses_record(&rp->losses, rec);
	return callstream_add_record(rp->cs, r, rec);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct replay rp = { .o = &o };
	struct tool_input in = { 0 };
	char err[512] = "";
	int rc, status = TOOL_EXIT_ERROR;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	if (o.match) {
		char msg[256];

		rc = regcomp(&rp.re, o.match, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &rp.re, msg, sizeof(msg));
			return tool_usage_error(NAME, "--match '%s': %s", o.match, msg);
		}
		rp.have_re = true;
	}
	/* A reader that leaves (`| head`) is a write error EPIPE, not a
	 * signal: the end of the job, said by no message. */
	signal(SIGPIPE, SIG_IGN);
	if (o.time_order) {
		rc = callmerge_open(&rp.m, o.path, err, sizeof(err));
		while (rc == 0) {
			const struct callstream_item *it;

			rc = callmerge_next(rp.m, &it);
			rc = rc == 1 ? on_item(&rp, it) : rc < 0 ? rc : 1;
		}
		if (rc == 1)
			rc = 0;
	} else {
		rc = callstream_new(&rp.cs, on_item, &rp);
		if (rc < 0) {
			tool_error(NAME, "%s", strerror(-rc));
			goto out;
		}
		in.path = o.path;
		in.stream = true;
		rc = tool_read_input(&in, on_record, &rp, err, sizeof(err));
		if (rc == 0)
			rc = callstream_finish(rp.cs);
	}
	if (rp.closed) {
		status = TOOL_EXIT_OK;
		goto out;
	}
	fflush(stdout);
	if (rp.closed || (ferror(stdout) && errno == EPIPE)) {
		status = TOOL_EXIT_OK;
		goto out;
	}
	if (rc < 0) {
		if (!*err)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		tool_error(NAME, "%s: %s", o.path, err);
		goto out;
	}
	if (tool_flush_stdout(NAME) == 0) {
		status = TOOL_EXIT_OK;
		tool_losses_say(stderr, NAME, o.path, rp.m ? callmerge_losses(rp.m) : &rp.losses,
				"the replay is partial", "the replay may be partial");
	}
out:
	if (rp.have_re)
		regfree(&rp.re);
	free(rp.name);
	callstream_free(rp.cs);
	callmerge_free(rp.m);
	tool_pick_free(&o.pick);
	return status;
}
