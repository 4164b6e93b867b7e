/* fxt-flame: flame graphs (SVG), differential flame graphs and folded
 * stacks from FXT archives. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common.h"
#include "tools/flame.h"

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
	const char *paths[2];
	int npaths;
};

static void usage(FILE *f)
{
	fputs("Usage: fxt-flame [OPTION]... ARCHIVE\n"
	      "       fxt-flame --diff [OPTION]... BASE NEW\n"
	      "       fxt-flame --folded [OPTION]... ARCHIVE\n"
	      "Draw the duration slices of an FXT archive as a flame graph (SVG).\n"
	      "\n"
	      "  -o, --output FILE   write to FILE (default: standard output)\n"
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
	      "  -w, --width PX      the graph's width (default 1200)\n"
	      "  -D, --max-depth N   keep at most N function frames per stack (default\n"
	      "                      1024; 0 = no limit): the slices deeper than that\n"
	      "                      become one frame \"[deeper frames: N]\" (N slices)\n"
	      "  -r, --merge-recursion\n"
	      "                      a function calling itself directly stays one frame\n"
	      "                      (its calls count every level, its total the\n"
	      "                      outermost call's time)\n"
	      "  -h, --help          this help\n"
	      "\n"
	      "Frame width is inclusive time, stacks are merged by path, children are\n"
	      "ordered by name; hover shows times and calls, a click zooms (the root\n"
	      "resets).  Folded lines with no self time are left out.  With --diff and\n"
	      "--by process/thread, frames match by their labels, which hold pids.\n"
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
	      "Exit status: 0 on success, 2 on bad usage or an unreadable archive.\n",
	      f);
}

static int parse_args(int argc, char **argv, struct options *o)
{
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool diff = false, folded = false;
	unsigned long v;
	char *end;
	int c, want;

	while ((c = getopt_long(argc, argv, "o:b:dnft:w:D:rh", longopts, NULL)) != -1) {
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
			else {
				fprintf(stderr, "fxt-flame: --by: unknown key '%s'\n", optarg);
				return -EINVAL;
			}
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
			if (errno || *end || end == optarg || v < 100 || v > 100000) {
				fprintf(stderr,
					"fxt-flame: --width: not a width in 100 .. 100000: '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->width = (unsigned)v;
			break;
		case 'D':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' || v > UINT_MAX) {
				fprintf(stderr, "fxt-flame: --max-depth: not a depth: '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->max_depth = (unsigned)v;
			break;
		case 'r':
			o->merge_recursion = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fputs("Try 'fxt-flame --help'.\n", stderr);
			return -EINVAL;
		}
	}
	if (diff && folded) {
		fputs("fxt-flame: --diff and --folded do not go together\n", stderr);
		return -EINVAL;
	}
	if (o->normalize && !diff) {
		fputs("fxt-flame: --normalize is for --diff\n", stderr);
		return -EINVAL;
	}
	o->mode = diff ? MODE_DIFF : folded ? MODE_FOLDED : MODE_SVG;
	want = diff ? 2 : 1;
	if (argc - optind != want) {
		fprintf(stderr, "fxt-flame: %s\nTry 'fxt-flame --help'.\n",
			argc - optind < want
			    ? (diff ? "--diff needs BASE and NEW" : "missing ARCHIVE")
			    : (diff ? "--diff reads two archives" : "only one ARCHIVE is read"));
		return -EINVAL;
	}
	o->npaths = want;
	for (c = 0; c < want; c++)
		o->paths[c] = argv[optind + c];
	if (want == 2 && strcmp(o->paths[0], "-") == 0 && strcmp(o->paths[1], "-") == 0) {
		fputs("fxt-flame: only one of BASE and NEW can be standard input\n", stderr);
		return -EINVAL;
	}
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
		fprintf(stderr, "fxt-flame: %s\n", strerror(-rc));
		return NULL;
	}
	flame_set_limits(f, o->max_depth, o->merge_recursion);
	rc = flame_load(f, &in, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "fxt-flame: %s: %s\n", path, err);
		flame_free(f);
		return NULL;
	}
	return f;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = MODE_SVG, .max_depth = FLAME_DEFAULT_MAX_DEPTH };
	struct flame *f[2] = { NULL, NULL };
	struct flame_svg_opts so = { 0 };
	struct tool_output out;
	char subtitle[1024], err[256];
	int rc, crc, i, status = 2;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	for (i = 0; i < o.npaths; i++)
		if (!(f[i] = load(&o, o.paths[i])))
			goto out;

	/* The output is opened only once the inputs are known good, so a bad
	 * archive does not leave an empty file behind. */
	if (tool_output_open(&out, o.output, err, sizeof(err)) < 0) {
		fprintf(stderr, "fxt-flame: %s: %s\n", o.output, err);
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
		fprintf(stderr, "fxt-flame: %s: %s\n", out.path ? out.path : "standard output",
			err);
		goto out;
	}
	status = 0;
out:
	flame_free(f[0]);
	flame_free(f[1]);
	return status;
}
