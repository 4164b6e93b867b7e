/* fxt-export: converts an FXT archive for other viewers (Chrome JSON). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/export/export.h"

struct options {
	const char *output; /* NULL = stdout */
	const char *path;
	bool chrome;
	bool stats;
	bool no_samples;
};

#define NAME "fxt-export"

static const char help[] =
    "Usage: fxt-export --chrome [OPTION]... ARCHIVE\n"
    "Convert an FXT archive to Chrome trace-event JSON (chrome://tracing,\n"
    "Perfetto, speedscope), streaming: memory does not grow with the archive.\n"
    "ARCHIVE is a file, plain, gzip or zstd, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -c, --chrome        Chrome trace-event JSON (the only format so far)\n"
    "  -o, --output FILE   write to FILE (default: standard output); FILE is\n"
    "                      only replaced once the whole archive was converted:\n"
    "                      on an error an existing FILE is left as it was\n"
    "  -s, --stats         print the number of events of each kind on stderr\n"
    "  -S, --no-samples    leave the stack samples (fxt-run --sample) out\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "Slices become \"X\" (complete) or \"B\"/\"E\" events, instants \"i\", counters\n"
    "\"C\", async events \"b\"/\"n\"/\"e\", flows \"s\"/\"t\"/\"f\", log records \"i\"\n"
    "events named \"log\" (message in args), process and thread names \"M\"\n"
    "events.  Times are microseconds with nanosecond decimals; ids are hex\n"
    "strings.  Context switches and blobs are not exported.\n"
    "Stack samples are estimates of CPU time, not calls: their slices stay on\n"
    "their own track, \"NAME (samples)\" (tid: the thread's tid + 2^30), and\n"
    "get the category \"" EXPORT_SAMPLE_CATEGORY
    "\" after their own (\"libc.so.6," EXPORT_SAMPLE_CATEGORY "\"),\n"
    "so that a viewer or a query tells them from calls; --stats counts them\n"
    "apart (\"samples N\"); --no-samples leaves them and their tracks out.\n"
    "Calls the tracer dropped, and another writer's full buffer (its provider\n"
    "event record), are said on standard error: \"N calls dropped\", \"a trace\n"
    "buffer filled up N times: records were likely dropped\".\n"
    "\n"
    "Exit status:\n"
    "  0   the archive was converted\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged; or the output cannot be written (no partial output is left).\n"
    "      One line on standard error names the file and the problem.\n";

static const struct option longopts[] = {
	{ "chrome", no_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "stats", no_argument, NULL, 's' },
	{ "no-samples", no_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 },
};

static const struct tool_cli cli = { NAME, help, "co:sS", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'c':
			o->chrome = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 's':
			o->stats = true;
			break;
		case 'S':
			o->no_samples = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	if (!o->chrome)
		return tool_usage_error(NAME, "say which format: --chrome");
	return tool_archive_operand(NAME, argc, argv, &o->path);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct tool_input in = { 0 };
	struct export_stats st;
	struct tool_output out;
	char err[512], cerr[256];
	int rc, crc;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	in.path = o.path;
	if (tool_output_open(&out, o.output, err, sizeof(err)) < 0)
		return tool_error(NAME, "%s: %s", o.output, err);
	rc = export_chrome(&in, out.f, !o.no_samples, &st, err, sizeof(err));
	/* An unreadable archive or a failed write leaves no partial JSON. */
	crc = tool_output_close(&out, rc < 0, cerr, sizeof(cerr));
	if (rc == 0 && crc < 0) {
		snprintf(err, sizeof(err), "%s", cerr);
		rc = -EIO;
	}
	if (rc < 0)
		return tool_error(NAME, "%s: %s",
				  rc == -EIO ? (out.path ? out.path : "standard output") : o.path,
				  err);
	if (o.stats)
		fprintf(stderr,
			"slices %" PRIu64 ", samples %" PRIu64 ", instants %" PRIu64
			", counters %" PRIu64 ", async %" PRIu64 ", flows %" PRIu64
			", logs %" PRIu64 ", process names %" PRIu64 ", thread names %" PRIu64 "\n",
			st.slices, st.samples, st.instants, st.counters, st.async, st.flows,
			st.logs, st.processes, st.threads);
	tool_losses_say(stderr, NAME, o.path, &st.losses, "the export is partial",
			"the export may be partial");
	return TOOL_EXIT_OK;
}
