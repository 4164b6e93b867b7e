/* fxt-tree: the aggregated call tree of an archive (calltree.h), as an
 * indented tree with calls, total, self and share per call path, or CSV or
 * JSON; --focus prints a function's callers (inverted) and its callees. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/calls/calltree.h"
#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/profile/profile.h"

#define NAME "fxt-tree"

struct options {
	struct calltree_opts t;
	const char *focus;
	size_t depth; /* 0: all */
	double min_share;
	enum tool_format format;
	const char *path;
};

static const char help[] =
    "Usage: fxt-tree [OPTION]... ARCHIVE\n"
    "Print the call tree of an FXT archive: one line per call path, with its\n"
    "calls, total and self time and its share of the traced time.\n"
    "ARCHIVE is a file, plain, gzip or zstd, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -b, --by KEY        one tree (function, the default), one per process\n"
    "                      or one per thread\n"
    "  -p, --pid LIST      only the calls of these processes (comma-separated)\n"
    "  -t, --tid LIST      only the calls of these threads (comma-separated)\n"
    "  -f, --focus NAME    the function NAME (exactly): its callers above, as\n"
    "                      an inverted tree, then its callees below\n"
    "  -d, --depth N       print N levels of calls (1: the top-level calls)\n"
    "  -m, --min-share PCT leave out call paths under PCT percent of the\n"
    "                      traced time (e.g. 0.5%), and what they called\n"
    "  -F, --format FMT    text (default), csv or json\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "A call path is a function with the chain of calls that led to it, on the\n"
    "threads' stacks rebuilt from the archive's duration slices (begin/end\n"
    "pairs and complete events; libc calls are calls like the others).\n"
    "Columns: calls on that path; total = inclusive time; self = exclusive\n"
    "time; share = total as a percentage of the traced time, the sum of the\n"
    "top-level calls' durations of the threads shown.  Children are sorted by\n"
    "total, then name.  The tree is drawn with box-drawing characters in a\n"
    "UTF-8 locale, with ASCII ('|', '+-', '`-') otherwise.\n"
    "Recursion is folded: a function calling itself, directly or through\n"
    "other functions, is one line marked \"[recursive]\" whose calls and self\n"
    "time count every frame and whose total counts the outermost frame of each\n"
    "nest only; what the inner frames called is below it.\n"
    "Frames never closed are counted to the end of the trace, \"[N open]\".\n"
    "Calls the tracer dropped (its size limit) are said in the header, \"# N\n"
    "calls dropped\" (on standard error with csv and json); events the kernel\n"
    "lost (fxt-run --kernel), \"# N kernel events lost\"; another writer's\n"
    "full buffer (its provider event record), \"# a trace buffer filled up N\n"
    "times: records were likely dropped\" (on standard error with csv and json).\n"
    "--focus NAME: \"# callers of NAME\": NAME at the root, the functions that\n"
    "called it below, their callers below them, each line with the numbers of\n"
    "NAME's calls made through that chain; then \"# callees of NAME\": NAME's\n"
    "calls merged over every path, with what they called below.\n"
    "csv: view,depth,[pid,][tid,]calls,total_ns,self_ns,share,recursive,open,\n"
    "category,name,path (view is tree, callers or callees; share in percent;\n"
    "path the names from the root, ';' between them); json: {\"slices\",\n"
    "\"total_ns\", \"by\", and \"tree\" or \"callers\" and \"callees\": nested\n"
    "nodes with \"children\"}.  Times are integer ns in csv and json.\n"
    "With more than one CPU, the archive is read on a second thread while\n"
    "the first rebuilds the stacks and walks the call paths (the same tree);\n"
    "FXT_THREADS=0 in the environment keeps to one.\n"
    "\n"
    "Exit status:\n"
    "  0   the tree was written\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged; or no call of the --focus function; or the output cannot\n"
    "      be written.  One line on standard error names the problem.\n";

/* clang-format off */
static const struct option longopts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "focus", required_argument, NULL, 'f' },
	{ "depth", required_argument, NULL, 'd' },
	{ "min-share", required_argument, NULL, 'm' },
	{ "format", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "b:p:t:f:d:m:F:", longopts };

/* "0.5", "0.5%": a percentage in [0, 100]. */
static int parse_share(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || (*s < '0' || *s > '9'))
		return -EINVAL;
	v = strtod(s, &end);
	if (*end == '%')
		end++;
	if (*end || !(v >= 0 && v <= 100))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'b':
			if (profile_by_parse(optarg, &o->t.by) < 0)
				return tool_usage_error(NAME, "--by: unknown key '%s'", optarg);
			break;
		case 'p':
		case 't':
			if (tool_pick_option(NAME, c == 'p' ? "pid" : "tid", optarg, &o->t.pick))
				return TOOL_EXIT_ERROR;
			break;
		case 'f':
			if (!*optarg)
				return tool_usage_error(NAME, "--focus: no function name");
			o->focus = optarg;
			break;
		case 'd':
			if (tool_parse_count(optarg, &o->depth) < 0 || !o->depth)
				return tool_usage_error(NAME, "--depth: not a count above 0: '%s'",
							optarg);
			break;
		case 'm':
			if (parse_share(optarg, &o->min_share) < 0)
				return tool_usage_error(
				    NAME, "--min-share: not a percentage from 0 to 100: '%s'",
				    optarg);
			break;
		case 'F':
			if (tool_parse_format(optarg, &o->format) < 0)
				return tool_usage_error(NAME, "--format: unknown format '%s'",
							optarg);
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	return tool_archive_operand(NAME, argc, argv, &o->path);
}

/* ------------------------------------------------------------- printing */

struct printer {
	const struct options *o;
	const struct calltree *t;
	const char *view; /* "tree", "callers", "callees" */
	double all_ns;	  /* what share is a share of */
	bool utf8;
	/* Text: the glyphs before a node's name, one level's worth per
	 * ancestor; csv: the path (names and ';'). */
	char *pre;
	size_t npre, cappre;
	int err;
};

static double share_of(const struct printer *pr, const struct calltree_node *n)
{
	return pr->all_ns > 0 ? 100.0 * (double)n->total_ns / pr->all_ns : 0;
}

static bool shown(const struct printer *pr, const struct calltree_node *n)
{
	if (pr->o->depth && n->depth > pr->o->depth)
		return false;
	return pr->o->min_share <= 0 || share_of(pr, n) >= pr->o->min_share;
}

static uint32_t next_shown(const struct printer *pr, uint32_t c)
{
	while (c != CALLTREE_NONE && !shown(pr, calltree_node(pr->t, c)))
		c = calltree_node(pr->t, c)->next_sibling;
	return c;
}

static int pre_put(struct printer *pr, const char *s, size_t n)
{
	if (TOOL_GROW(pr->pre, pr->cappre, pr->npre + n + 1) < 0)
		return -ENOMEM;
	memcpy(pr->pre + pr->npre, s, n);
	pr->npre += n;
	pr->pre[pr->npre] = 0;
	return 0;
}

static void text_line(struct printer *pr, const struct calltree_node *n, const char *glyph)
{
	char tot[32], self[32];

	tool_fmt_ns(tot, sizeof(tot), (double)n->total_ns);
	tool_fmt_ns(self, sizeof(self), (double)n->self_ns);
	printf("%10" PRIu64 " %12s %12s %6.2f%%  %s%s", n->calls, tot, self, share_of(pr, n),
	       pr->pre ? pr->pre : "", glyph);
	if (n->row == CALLTREE_GROUP) {
		if (pr->o->t.by == PROFILE_BY_THREAD)
			printf("pid %" PRIu64 " tid %" PRIu64, n->pid, n->tid);
		else
			printf("pid %" PRIu64, n->pid);
	} else {
		tool_put_text_str(stdout, calltree_name(pr->t, n));
	}
	if (n->recursive)
		fputs(" [recursive]", stdout);
	if (n->open)
		printf(" [%" PRIu64 " open]", n->open);
	putchar('\n');
}

/* Text: node i (shown), then its children; last: no shown sibling after
 * it; top: a root of the printed tree (no glyph). */
static void text_node(struct printer *pr, uint32_t i, bool last, bool top)
{
	const struct calltree_node *n = calltree_node(pr->t, i);
	static const char *const g_utf8[4] = { "├─ ", "└─ ", "│  ", "   " };
	static const char *const g_ascii[4] = { "+- ", "`- ", "|  ", "   " };
	const char *const *g = pr->utf8 ? g_utf8 : g_ascii;
	size_t mark = pr->npre;
	uint32_t c;

	text_line(pr, n, top ? "" : g[last ? 1 : 0]);
	if (!top && pre_put(pr, g[last ? 3 : 2], strlen(g[last ? 3 : 2])) < 0) {
		pr->err = -ENOMEM;
		return;
	}
	for (c = next_shown(pr, n->first_child); c != CALLTREE_NONE && !pr->err;) {
		uint32_t next = next_shown(pr, calltree_node(pr->t, c)->next_sibling);

		text_node(pr, c, next == CALLTREE_NONE, false);
		c = next;
	}
	pr->npre = mark;
	if (pr->pre)
		pr->pre[mark] = 0;
}

static void csv_node(struct printer *pr, uint32_t i, const struct calltree_node *group)
{
	const struct calltree_node *n = calltree_node(pr->t, i);
	const char *name = calltree_name(pr->t, n);
	size_t mark = pr->npre;

	if ((pr->npre && pre_put(pr, ";", 1) < 0) || pre_put(pr, name, strlen(name)) < 0) {
		pr->err = -ENOMEM;
		return;
	}
	printf("%s,%" PRIu32 ",", pr->view, n->depth);
	if (pr->o->t.by != PROFILE_BY_FUNCTION)
		printf("%" PRIu64 ",", group->pid);
	if (pr->o->t.by == PROFILE_BY_THREAD)
		printf("%" PRIu64 ",", group->tid);
	printf("%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%d,%" PRIu64 ",", n->calls, n->total_ns,
	       n->self_ns, share_of(pr, n), n->recursive, n->open);
	tool_put_csv_str(stdout, calltree_category(pr->t, n));
	putchar(',');
	tool_put_csv_str(stdout, name);
	putchar(',');
	tool_put_csv_str(stdout, pr->pre);
	putchar('\n');
	for (uint32_t c = next_shown(pr, n->first_child); c != CALLTREE_NONE && !pr->err;
	     c = next_shown(pr, calltree_node(pr->t, c)->next_sibling))
		csv_node(pr, c, group);
	pr->npre = mark;
	pr->pre[mark] = 0;
}

static void json_node(struct printer *pr, uint32_t i)
{
	const struct calltree_node *n = calltree_node(pr->t, i);
	bool first = true;

	if (n->row == CALLTREE_GROUP) {
		printf("{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64, n->pid, n->tid);
	} else {
		fputs("{\"name\":", stdout);
		tool_put_json_str(stdout, calltree_name(pr->t, n));
		fputs(",\"category\":", stdout);
		tool_put_json_str(stdout, calltree_category(pr->t, n));
	}
	printf(",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
	       ",\"share\":%.6f,\"recursive\":%s,\"open\":%" PRIu64 ",\"children\":[",
	       n->calls, n->total_ns, n->self_ns, share_of(pr, n) / 100, n->recursive ? "true" : "false",
	       n->open);
	for (uint32_t c = next_shown(pr, n->first_child); c != CALLTREE_NONE;
	     c = next_shown(pr, calltree_node(pr->t, c)->next_sibling)) {
		if (!first)
			putchar(',');
		first = false;
		json_node(pr, c);
	}
	fputs("]}", stdout);
}

/* One view: the groups' trees (the group line only when grouped). */
static void print_view(struct printer *pr)
{
	const uint32_t *groups;
	size_t ng = calltree_groups(pr->t, &groups);
	bool grouped = pr->o->t.by != PROFILE_BY_FUNCTION && !strcmp(pr->view, "tree");
	bool first = true;

	if (pr->o->format == TOOL_FMT_JSON)
		printf("\"%s\":[", pr->view);
	for (size_t k = 0; k < ng && !pr->err; k++) {
		const struct calltree_node *g = calltree_node(pr->t, groups[k]);

		if (pr->o->format == TOOL_FMT_JSON) {
			if (!first)
				putchar(',');
			first = false;
			json_node(pr, groups[k]);
			continue;
		}
		if (pr->o->format == TOOL_FMT_TEXT && grouped) {
			text_node(pr, groups[k], true, true);
			continue;
		}
		for (uint32_t c = next_shown(pr, g->first_child); c != CALLTREE_NONE && !pr->err;) {
			uint32_t next = next_shown(pr, calltree_node(pr->t, c)->next_sibling);

			if (pr->o->format == TOOL_FMT_CSV)
				csv_node(pr, c, g);
			else
				text_node(pr, c, next == CALLTREE_NONE, true);
			c = next;
		}
	}
	if (pr->o->format == TOOL_FMT_JSON)
		putchar(']');
}

static void text_head(const char *what)
{
	if (what)
		printf("# %s\n", what);
	printf("%10s %12s %12s %7s  %s\n", "calls", "total", "self", "share", "call path");
}

int main(int argc, char **argv)
{
	char lost[160]; /* tool_kernel_lost() */
	char full[128]; /* tool_buffer_full() */
	struct options o = { .format = TOOL_FMT_TEXT };
	struct calltree *t = NULL, *callers = NULL, *callees = NULL;
	struct printer pr = { 0 };
	char err[512] = "", tot[32];
	uint64_t dropped, dthreads;
	static const char *const by_names[] = { "function", "process", "thread" };
	int rc, status = TOOL_EXIT_ERROR;

	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	setlocale(LC_CTYPE, "");
	pr.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	pr.o = &o;
	rc = calltree_new(&t, &o.t);
	if (rc < 0) {
		tool_error(NAME, "%s", strerror(-rc));
		return TOOL_EXIT_ERROR;
	}
	rc = calltree_load(t, o.path, err, sizeof(err));
	if (rc < 0) {
		tool_error(NAME, "%s: %s", o.path, err);
		goto out;
	}
	if (o.focus) {
		rc = calltree_focus(t, o.focus, &callers, &callees);
		if (rc == -ENOENT) {
			tool_error(NAME, "%s: no call of a function named '%s'", o.path, o.focus);
			goto out;
		}
		if (rc < 0) {
			tool_error(NAME, "%s", strerror(-rc));
			goto out;
		}
	}
	pr.all_ns = (double)calltree_total_ns(t);
	tool_fmt_ns(tot, sizeof(tot), pr.all_ns);
	dropped = calltree_dropped(t, &dthreads);
	if (o.format == TOOL_FMT_TEXT) {
		printf("# %" PRIu64 " calls, traced time %s (the top-level calls'%s)\n",
		       calltree_nslices(t), tot,
		       tool_picks(&o.t.pick) ? " of the threads chosen" : "");
		if (dropped)
			printf("# %" PRIu64 " calls dropped: the tree is partial (on %" PRIu64
			       " thread%s)\n",
			       dropped, dthreads, dthreads == 1 ? "" : "s");
		if (calltree_kernel_lost(t))
			printf("# %s\n",
			       tool_kernel_lost(lost, sizeof(lost), calltree_kernel_lost(t),
						"the calls are whole"));
		if (calltree_buffer_full(t))
			printf("# %s\n",
			       tool_buffer_full(full, sizeof(full), calltree_buffer_full(t),
						"the tree may be partial"));
	} else {
		/* CSV and JSON have rows only: the warnings go to standard error. */
		if (dropped)
			fprintf(stderr,
				NAME ": %s: %" PRIu64 " calls dropped: the tree is partial\n",
				o.path, dropped);
		if (calltree_buffer_full(t))
			fprintf(stderr, NAME ": %s: %s\n", o.path,
				tool_buffer_full(full, sizeof(full), calltree_buffer_full(t),
						 "the tree may be partial"));
	}
	if (o.format == TOOL_FMT_CSV)
		printf("view,depth,%s%scalls,total_ns,self_ns,share,recursive,open,category,name,"
		       "path\n",
		       o.t.by != PROFILE_BY_FUNCTION ? "pid," : "",
		       o.t.by == PROFILE_BY_THREAD ? "tid," : "");
	else if (o.format == TOOL_FMT_JSON)
		printf("{\"slices\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"by\":\"%s\",",
		       calltree_nslices(t), calltree_total_ns(t), by_names[o.t.by]);
	if (!o.focus) {
		pr.t = t;
		pr.view = "tree";
		if (o.format == TOOL_FMT_TEXT)
			text_head(NULL);
		print_view(&pr);
	} else {
		char what[600];

		pr.t = callers;
		pr.view = "callers";
		snprintf(what, sizeof(what), "callers of %s (below each function: the functions that called it)",
			 o.focus);
		if (o.format == TOOL_FMT_TEXT)
			text_head(what);
		print_view(&pr);
		if (o.format == TOOL_FMT_JSON)
			putchar(',');
		else if (o.format == TOOL_FMT_TEXT)
			putchar('\n');
		pr.t = callees;
		pr.view = "callees";
		snprintf(what, sizeof(what), "callees of %s", o.focus);
		if (o.format == TOOL_FMT_TEXT)
			text_head(what);
		print_view(&pr);
	}
	if (o.format == TOOL_FMT_JSON)
		puts("}");
	if (pr.err) {
		tool_error(NAME, "%s", strerror(-pr.err));
		goto out;
	}
	if (tool_flush_stdout(NAME) == 0)
		status = TOOL_EXIT_OK;
out:
	free(pr.pre);
	calltree_free(callers);
	calltree_free(callees);
	calltree_free(t);
	tool_pick_free(&o.t.pick);
	return status;
}
