/* fxt-flame: flame graphs (SVG), differential flame graphs and folded
 * stacks from FXT archives. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/flame/flame.h"

enum mode { MODE_SVG, MODE_FOLDED, MODE_DIFF };

struct options {
	enum mode mode;
	enum flame_by by;
	const char *output; /* NULL = stdout */
	const char *title;
	unsigned width;
	bool normalize;
	unsigned max_depth;
	bool merge_recursion;
	bool samples;
	const char *paths[2];
	int npaths;
};

#define NAME "fxt-flame"

static const char help[] =
    "Usage: fxt-flame [OPTION]... ARCHIVE\n"
    "  or:  fxt-flame --diff [OPTION]... BASE NEW\n"
    "  or:  fxt-flame --folded [OPTION]... ARCHIVE\n"
    "Draw the calls of an FXT archive as a flame graph (SVG), or with --samples\n"
    "its stack samples.\n"
    "Archives are files, plain, gzip or zstd, or '-' for standard input (one of\n"
    "BASE and NEW at most).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE   write to FILE (default: standard output); FILE is\n"
    "                      only replaced once the whole graph was written\n"
    "  -b, --by KEY        all (default: every thread merged), process (a frame\n"
    "                      per process) or thread (per process, then thread)\n"
    "  -d, --diff          differential graph: frames sized by NEW, red where\n"
    "                      the frame's self time grew against BASE, blue where\n"
    "                      it shrank, saturated at +-100%; the root's hover\n"
    "                      tells what only BASE has\n"
    "  -n, --normalize     with --diff: scale BASE to NEW's total time first\n"
    "  -f, --folded        folded stacks instead: 'a;b;c SELF_NS' per path,\n"
    "                      sorted, for flamegraph.pl and speedscope\n"
    "  -t, --title TEXT    the graph's heading\n"
    "  -w, --width PX      the graph's width (100 to 100000, default 1200)\n"
    "  -D, --max-depth N   keep at most N function frames per stack (default\n"
    "                      1024; 0 = no limit): the slices deeper than that\n"
    "                      become one frame \"[deeper frames: N]\" (N slices)\n"
    "  -r, --merge-recursion\n"
    "                      a function calling itself directly stays one frame\n"
    "                      (its calls count every level, its total the\n"
    "                      outermost call's time)\n"
    "  -s, --samples       draw the stack samples (fxt-run --sample) instead of\n"
    "                      the calls: sampled time, an estimate of CPU time\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "Frame width is inclusive time, stacks are merged by path, children are\n"
    "ordered by name; hover shows times and calls, a click zooms (the root\n"
    "resets).  Folded lines with no self time are left out.  With --diff and\n"
    "--by process/thread, frames match by their labels, which hold pids.\n"
    "Calls and stack samples are never drawn together: a sampled frame is no\n"
    "call.  By default the graph is of the calls; an archive that has stack\n"
    "samples only gives an empty graph and a line on standard error saying\n"
    "so.  With --samples, frames are sized by sampled time and hover shows no\n"
    "calls; with --by thread a sample track is its thread's \"NAME (samples)\".\n"
    "Calls the tracer dropped, and another writer's full buffer (its provider\n"
    "event record), are said on standard error: \"N calls dropped\", \"a trace\n"
    "buffer filled up N times: records were likely dropped\".\n"
    "\n"
    "Memory: start-ordered complete events (parents first) and begin/end\n"
    "pairs stream, in memory proportional to the distinct paths.  Threads\n"
    "whose complete events come children first (exit-time flushers) are\n"
    "found in a first pass; their slices are kept (24 bytes each) and sorted,\n"
    "so memory grows with those threads' slices.  Standard input ('-') is\n"
    "copied to a temporary file for the two passes.  The depth limit bounds\n"
    "the graph and the folded output whatever the depth of the recursion\n"
    "(a 1,000,000-deep one is 1025 frames, or 1 with --merge-recursion).\n"
    "\n"
    "Exit status:\n"
    "  0   the graph was written\n"
    "  2   bad usage; or an archive cannot be read, is not an FXT archive or is\n"
    "      damaged; or the output cannot be written (an existing FILE is then\n"
    "      left as it was).  One line on standard error names the file and the\n"
    "      problem.\n";

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "by", required_argument, NULL, 'b' },
	{ "diff", no_argument, NULL, 'd' },
	{ "normalize", no_argument, NULL, 'n' },
	{ "folded", no_argument, NULL, 'f' },
	{ "title", required_argument, NULL, 't' },
	{ "width", required_argument, NULL, 'w' },
	{ "max-depth", required_argument, NULL, 'D' },
	{ "merge-recursion", no_argument, NULL, 'r' },
	{ "samples", no_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

static const struct tool_cli cli = { NAME, help, "o:b:dnft:w:D:rs", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct options *o)
{
	bool diff = false, folded = false;
	unsigned long v;
	char *end;
	int c, want;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "all") == 0)
				o->by = FLAME_BY_ALL;
			else if (strcmp(optarg, "process") == 0)
				o->by = FLAME_BY_PROCESS;
			else if (strcmp(optarg, "thread") == 0)
				o->by = FLAME_BY_THREAD;
			else
				return tool_usage_error(NAME, "--by: unknown key '%s'", optarg);
			break;
		case 'd':
			diff = true;
			break;
		case 'n':
			o->normalize = true;
			break;
		case 'f':
			folded = true;
			break;
		case 't':
			o->title = optarg;
			break;
		case 'w':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 100 || v > 100000)
				return tool_usage_error(
				    NAME, "--width: not a width in 100 .. 100000: '%s'", optarg);
			o->width = (unsigned)v;
			break;
		case 'D':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' || v > UINT_MAX)
				return tool_usage_error(NAME, "--max-depth: not a depth: '%s'",
							optarg);
			o->max_depth = (unsigned)v;
			break;
		case 'r':
			o->merge_recursion = true;
			break;
		case 's':
			o->samples = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	if (diff && folded)
		return tool_usage_error(NAME, "--diff and --folded do not go together");
	if (o->normalize && !diff)
		return tool_usage_error(NAME, "--normalize is for --diff");
	o->mode = diff ? MODE_DIFF : folded ? MODE_FOLDED : MODE_SVG;
	want = diff ? 2 : 1;
	if (argc - optind != want)
		return tool_usage_error(
		    NAME, "%s",
		    argc - optind < want
			? (diff ? "--diff needs BASE and NEW" : "missing ARCHIVE")
			: (diff ? "--diff reads two archives" : "only one ARCHIVE is read"));
	o->npaths = want;
	for (c = 0; c < want; c++)
		o->paths[c] = argv[optind + c];
	if (want == 2 && strcmp(o->paths[0], "-") == 0 && strcmp(o->paths[1], "-") == 0)
		return tool_usage_error(NAME, "only one of BASE and NEW can be standard input");
	return 0;
}

static struct flame *load(const struct options *o, const char *path)
{
	struct tool_input in = { .path = path };
	struct flame *f;
	char err[512];
	int rc;

	rc = flame_new(&f, o->by);
	if (rc < 0) {
		tool_error(NAME, "%s", strerror(-rc));
		return NULL;
	}
	flame_set_limits(f, o->max_depth, o->merge_recursion);
	flame_set_samples(f, o->samples);
	rc = flame_load(f, &in, err, sizeof(err));
	if (rc < 0) {
		tool_error(NAME, "%s: %s", path, err);
		flame_free(f);
		return NULL;
	}
	/* Nothing of the kind drawn, but some of the other: say why. */
	if (flame_nnodes(f) <= 1 && flame_left_out(f))
		fprintf(stderr,
			o->samples ? NAME ": %s: no stack samples, only calls (drawn without "
					  "--samples)\n"
				   : NAME ": %s: no calls, only stack samples (fxt-run --sample): "
					  "--samples draws them\n",
			path);
	return f;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = MODE_SVG, .max_depth = FLAME_DEFAULT_MAX_DEPTH };
	struct flame *f[2] = { NULL, NULL };
	struct flame_svg_opts so = { 0 };
	struct tool_output out;
	char subtitle[1024], err[256];
	int rc, crc, i, status = TOOL_EXIT_ERROR;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	for (i = 0; i < o.npaths; i++)
		if (!(f[i] = load(&o, o.paths[i])))
			goto out;

	/* The output is opened only once the inputs are known good, so a bad
	 * archive does not leave an empty file behind. */
	if (tool_output_open(&out, o.output, err, sizeof(err)) < 0) {
		tool_error(NAME, "%s: %s", o.output, err);
		goto out;
	}
	if (o.mode == MODE_FOLDED) {
		rc = flame_write_folded(f[0], out.f);
	} else {
		if (o.mode == MODE_DIFF) {
			snprintf(subtitle, sizeof(subtitle), "%s -> %s%s", o.paths[0], o.paths[1],
				 o.normalize ? " (normalized)" : "");
			so.base = f[0];
			so.normalize = o.normalize;
		} else {
			snprintf(subtitle, sizeof(subtitle), "%s", o.paths[0]);
		}
		so.title = o.title;
		so.subtitle = subtitle;
		so.width = o.width;
		rc = flame_write_svg(o.mode == MODE_DIFF ? f[1] : f[0], &so, out.f);
	}
	/* A failed write leaves no partial graph behind. */
	crc = tool_output_close(&out, rc < 0, err, sizeof(err));
	if (rc < 0 || crc < 0) {
		if (rc < 0)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		tool_error(NAME, "%s: %s", out.path ? out.path : "standard output", err);
		goto out;
	}
	/* Said once the graph is written: an error is one line alone. */
	for (i = 0; i < o.npaths; i++)
		tool_losses_say(stderr, NAME, o.paths[i], flame_losses(f[i]),
				"the flame graph is partial", "the flame graph may be partial");
	status = TOOL_EXIT_OK;
out:
	flame_free(f[0]);
	flame_free(f[1]);
	return status;
}
