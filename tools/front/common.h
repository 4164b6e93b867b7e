/* Pieces every archive-reading tool shares: the command-line conventions
 * (--help, --version, usage errors, exit statuses), opening an archive
 * named on the command line, streaming its records with one-line error
 * messages, writing the output, and parsing the option values several
 * tools take. */
#ifndef FXT_TOOLS_COMMON_H
#define FXT_TOOLS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <getopt.h>

#include <fxt/reader.h>

/* ------------------------------------------------------------ command line */

/* The exit statuses of every fxt-* tool (fxt-run has its program's). */
enum {
	TOOL_EXIT_OK = 0,
	/* Done, and the answer is no: fxt-dump found the archive damaged or
	 * invalid, fxt-diff --fail-above found a slowdown above it. */
	TOOL_EXIT_FOUND = 1,
	/* Bad usage, an input that cannot be read or is not an FXT archive,
	 * an output that cannot be written: one line on standard error. */
	TOOL_EXIT_ERROR = 2,
};

/* A tool's command line as tool_getopt() reads it. */
struct tool_cli {
	const char *name;	       /* "fxt-report" */
	const char *help;	       /* the whole --help text */
	const char *shortopts;	       /* its own option letters, as getopt_long()
					  takes them; '+' first: stop at the
					  first operand; '-' first: operands
					  come back in order as option 1 */
	const struct option *longopts; /* its own, NULL-terminated */
};

/* getopt_long() over the tool's options plus -h/--help and -V/--version,
 * with the conventions every tool shares: --help prints the help on
 * standard output and exits 0; --version prints "NAME (fxtrace) VERSION"
 * and exits 0; an unknown option or a missing value is a usage error
 * (tool_usage_error()) and returns '?'.  Otherwise returns what
 * getopt_long() returns: an option's value, -1 after the last option. */
int tool_getopt(int argc, char **argv, const struct tool_cli *cli);

/* Prints "NAME: MESSAGE" and "Try 'NAME --help'." on standard error.
 * Returns TOOL_EXIT_ERROR, for `return tool_usage_error(...)`. */
int tool_usage_error(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* After the options (optind): the one ARCHIVE operand in *path.  Returns
 * 0, or TOOL_EXIT_ERROR after a usage error ("missing ARCHIVE", "only one
 * ARCHIVE is read"). */
int tool_archive_operand(const char *name, int argc, char **argv, const char **path);

/* Prints "NAME: MESSAGE" on standard error.  Returns TOOL_EXIT_ERROR. */
int tool_error(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flushes standard output; on a write error says so (tool_error()).
 * Returns 0, or TOOL_EXIT_ERROR after a write error. */
int tool_flush_stdout(const char *name);

/* -------------------------------------------------------------- archives */

/* If PATH is an fxtrace spool file (the agent's raw per-process records,
 * agent/spool.h: magic "FXTSPOOL", pid at offset 16, program[256] at 48),
 * writes "is an fxtrace spool (raw records of process PID, PROGRAM), not an
 * archive; turn it into one with: fxt-run --recover PATH" to msg and
 * returns true.  False for anything else, or a file that cannot be read. */
bool tool_is_spool(const char *path, char *msg, size_t msglen);

/* Opens PATH ("-" is standard input) for reading.  Returns 0, or a negative
 * errno with the errno text in err; a directory is refused with EISDIR up
 * front, since reading one would only fail later with a vaguer error, and
 * a spool file with -EMEDIUMTYPE and tool_is_spool()'s message. */
int tool_open_archive(struct fxt_reader **r, const char *path, unsigned flags, char *err,
		      size_t errlen);

/* Called for every record, in archive order; a negative return stops the
 * reading. */
typedef int (*tool_record_fn)(void *ctx, struct fxt_reader *r, const struct fxt_record *rec);

/* Feeds every record of r to fn (a plain event, fxt_reader_next_plain()'s,
 * with offset, nwords and provider_id 0; fn may ask r about the clock,
 * not about where it is).  Returns 0 once the archive ended cleanly
 * after at least one record, else a negative errno with a one-line reason
 * in err:
 *   fn's error, as its errno text;
 *   -EINVAL "not an FXT archive (...)" when the first record is not the
 *     magic record or the first read fails;
 *   -EINVAL "<reader's reason> at byte N" for damage or truncation, even
 *     when records came before it (a partial profile would mislead);
 *   -ENODATA "empty file, not an FXT archive".
 * r is left open: the caller frees it. */
int tool_read_records(struct fxt_reader *r, tool_record_fn fn, void *ctx, char *err, size_t errlen);

/* The checks and messages of tool_read_records(), for a loop of its own
 * (the profile engine's, which inlines its per-record work): after the
 * first record, tool_read_first() (not an archive without the magic
 * record); after the loop, tool_read_end() with fxt_reader_next()'s last
 * return and the records read (damage, an empty file).  Each returns 0 or
 * -errno with err set. */
int tool_read_first(struct fxt_reader *r, char *err, size_t errlen);
int tool_read_end(struct fxt_reader *r, int rc, uint64_t n, char *err, size_t errlen);

/* An archive to read: a path ("-" is standard input), or bytes in memory
 * (mem non-NULL; path then only names it). */
struct tool_input {
	const char *path;
	const void *mem;
	size_t len;
	/* Standard input that is not a file is streamed in file order, its
	 * first records given before it ends (fxt-replay), not copied to be
	 * read twice for the time order. */
	bool stream;
};

/* Streams the records of in to fn: tool_open_input(), then
 * tool_read_records(), whose return and messages it shares. */
int tool_read_input(const struct tool_input *in, tool_record_fn fn, void *ctx, char *err,
		    size_t errlen);

/* Opens in for reading, in *r: tool_open_archive() (or the memory).  Each
 * thread's events come in time order (FXT_READER_TIME_ORDER), as Perfetto
 * pairs them, but with in->stream from a pipe.  For a loop of its own
 * (fxt-waits'); 0 or -errno with err set. */
int tool_open_input(const struct tool_input *in, struct fxt_reader **r, char *err, size_t errlen);

/* Where a tool writes: standard output, or a file named with -o. */
struct tool_output {
	FILE *f;
	const char *path; /* NULL for standard output */
	char *tmp;	  /* the temporary file being written, renamed to path at close */
	unsigned mode;	  /* permissions the finished file gets */
};

/* Opens path for writing; NULL or "-" is standard output.  A regular file
 * (or a new one) is written as a temporary file in the same directory and
 * only renamed over path when tool_output_close() succeeds, so a failed run
 * leaves neither a partial output nor a clobbered old file.  Anything else
 * (a device, a pipe, /dev/stdout) is written directly.  Returns 0, or a
 * negative errno with the errno text in err. */
int tool_output_open(struct tool_output *o, const char *path, char *err, size_t errlen);

/* Flushes and closes o.  Returns 0, or a negative errno (the first write
 * error) with its text in err.  With discard, or on an error, the
 * temporary file is removed and path is left as it was. */
int tool_output_close(struct tool_output *o, bool discard, char *err, size_t errlen);

/* Makes room for `need` elements of `elem` bytes in *v, whose capacity is
 * *cap, doubling from 16.  Returns 0 or -ENOMEM (*v is then unchanged). */
int tool_grow(void **v, size_t *cap, size_t need, size_t elem);
#define TOOL_GROW(v, cap, need) \
	((need) <= (cap) ? 0 : tool_grow((void **)&(v), &(cap), (need), sizeof(*(v))))

/* A duration for people: "812 ns", "1.250 us", "3.000 ms", "2.500 s". */
void tool_fmt_ns(char *buf, size_t len, double ns);

/* The one phrase for the kernel's lost events (the instants "fxt: N
 * kernel events lost", fxt_kernel_lost_in_name()): "N kernel events lost
 * (the kernel's ring buffer was full): SO", SO what it means for the
 * tool's output ("thread states are partial").  Returns buf. */
const char *tool_kernel_lost(char *buf, size_t len, uint64_t n, const char *so);

/* The one phrase for another writer's full buffer (the FXT provider event
 * record "buffer full", FXT_PROVIDER_EVENT_BUFFER_FULL): "a trace buffer
 * filled up N time(s): records were likely dropped, SO", SO what it means
 * for the tool's output ("totals may be partial").  Returns buf. */
const char *tool_buffer_full(char *buf, size_t len, uint64_t n, const char *so);

/* What a tool that reads records itself (not through profile.h) counts
 * of the records lost: the calls the tracer dropped (the instants "fxt: N
 * records dropped", fxt_dropped_in_name()) and another writer's "buffer
 * full" provider events.  A zeroed struct counts none. */
struct tool_losses {
	uint64_t dropped, buffer_full;
};

/* Counts one record in *l. */
void tool_losses_record(struct tool_losses *l, const struct fxt_record *rec);

/* One line on f per kind of loss in *l: "TOOL: PATH: N calls dropped: SO"
 * and "TOOL: PATH: " tool_buffer_full(SO_MAY); nothing when none. */
void tool_losses_say(FILE *f, const char *tool, const char *path, const struct tool_losses *l,
		     const char *so, const char *so_may);

/* Output formats of fxt-report and fxt-diff. */
enum tool_format { TOOL_FMT_TEXT, TOOL_FMT_CSV, TOOL_FMT_JSON };

/* "text", "csv" or "json".  Returns 0 or -EINVAL. */
int tool_parse_format(const char *s, enum tool_format *out);

/* A count in decimal digits only (no sign, no blanks, not empty) that fits
 * *out.  Returns 0 or -EINVAL (-ERANGE when too large). */
int tool_parse_count(const char *s, size_t *out);

/* A comma-separated list of ids (tids, pids), each a count
 * (tool_parse_count()), appended to *ids (of *n, realloc'd).  Returns 0,
 * -EINVAL (an empty or bad element) or -ENOMEM. */
int tool_parse_ids(const char *s, uint64_t **ids, size_t *n);

/* True if id is one of ids[0 .. n), or n is 0 (no selection). */
bool tool_id_selected(const uint64_t *ids, size_t n, uint64_t id);

/* The threads a tool's --pid/--tid chose: comma-separated lists of ids,
 * each option repeatable; none chosen: all. */
struct tool_pick {
	uint64_t *pids, *tids;
	size_t npids, ntids;
};

/* Takes --pid's value (opt "pid") or --tid's ("tid") into p.  Returns 0,
 * or TOOL_EXIT_ERROR after an error naming the tool (said: a usage error
 * for a bad list). */
int tool_pick_option(const char *name, const char *opt, const char *arg, struct tool_pick *p);

/* Whether p chooses the thread (pid, tid). */
static inline bool tool_picked(const struct tool_pick *p, uint64_t pid, uint64_t tid)
{
	if (!p->npids && !p->ntids) /* every thread: no call per slice */
		return true;
	return tool_id_selected(p->pids, p->npids, pid) && tool_id_selected(p->tids, p->ntids, tid);
}

/* Whether p chooses some threads only. */
static inline bool tool_picks(const struct tool_pick *p)
{
	return p->npids || p->ntids;
}

/* Frees p's lists. */
void tool_pick_free(struct tool_pick *p);

#endif /* FXT_TOOLS_COMMON_H */
