/* fxt-waits: who made each thread wait, and for how long.  The command
 * line and the three outputs (text, CSV, JSON) of the waits the engine
 * (waits.c) found: aggregated per waiter function, call, releaser and its
 * function (default), per pair of threads (--by pair), or each wait in
 * time order (--detail). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/waits/waits.h"

#define NAME	   "fxt-waits"
#define DROPPED_SO "the waits are partial"
#define FULL_SO	   "the waits may be partial"

enum by { BY_WAIT, BY_PAIR };

struct options {
	enum by by;
	bool detail;
	enum tool_format format;
	size_t top; /* 0 = all */
	struct tool_pick pick;
	const char *path;
};

static const char help[] =
    "Usage: fxt-waits [OPTION]... ARCHIVE\n"
    "Who made each thread wait, and for how long: the blocking calls of an FXT\n"
    "archive (fxt-run --libc=all, or --libc=sync,thread,io,proc) that another\n"
    "thread or process ended, with who ended them, worst first.\n"
    "ARCHIVE is a file, plain, gzip or zstd, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -b, --by KEY        rows per wait (default: the waiting thread and\n"
    "                      function, the call, the releasing thread and its\n"
    "                      function) or per pair (waiting thread, releasing\n"
    "                      thread)\n"
    "  -d, --detail        each wait in time order instead\n"
    "  -t, --tid LIST      only waits of these threads (tids, comma-separated)\n"
    "  -p, --pid LIST      only waits of these processes\n"
    "  -n, --top N         print the first N rows only (of the released waits\n"
    "                      and of those with no releaser each; --detail: waits)\n"
    "  -F, --format FMT    text (default), csv or json\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "A wait is a blocking call whose slice ends a flow that another thread or\n"
    "process began: a mutex, rwlock or semaphore acquisition that had to wait\n"
    "(its argument \"waited\") and the unlock or post that let it through, a\n"
    "condition wait and its signal or broadcast, a pipe or socket read and the\n"
    "write it read.  A join's releaser is the thread of its process that ended\n"
    "last before it returned, a wait for a child's (waitpid, wait, wait4) the\n"
    "child it returned; when that had ended before the call began, or no\n"
    "child came (WNOHANG), the call did not wait and is left out.  The\n"
    "waiter is the thread and the function that called the blocking call (its\n"
    "argument \"caller\", else the slice around it); the releaser is the\n"
    "thread, the call that released (\"(thread end)\", \"(exit)\") and the\n"
    "function it was in; with --detail, also \"busy in F\": its innermost\n"
    "slice open from the wait's start to the release (what it was doing\n"
    "meanwhile), \"-\" when none was.\n"
    "Threads are shown NAME[TID] (the archive's thread names); a releaser in\n"
    "another process is \"NAME[TID] of process PID\".\n"
    "\n"
    "Blocking calls that waited but whose releaser was not found (a timed wait\n"
    "that timed out, a releaser that was not traced) are counted apart, under\n"
    "\"# waits with no releaser\" (csv: empty releaser columns; json:\n"
    "\"unreleased\").  fxt-run pairs a lock's or a semaphore's release with the\n"
    "acquisition it ended within one process only: a semaphore in shared\n"
    "memory posted by another process (PostgreSQL's) has no releaser here.\n"
    "\n"
    "Runnable time: when the archive holds the kernel's scheduling (context\n"
    "switches: fxt-run --kernel, or a trace.dat with sched_switch imported with\n"
    "fxt-import and merged with fxt-merge), a released wait's runnable time is\n"
    "from its release to the waiter's next switch-in, the rest of it blocked\n"
    "time; the header says for how many waits the trace had the waiter's\n"
    "switch-in; otherwise it says that runnable time is not known.  Then each\n"
    "thread with calls (every thread, in an imported trace alone) gets its time\n"
    "running, runnable (waiting for a CPU), blocked and unrecorded (next to a\n"
    "switch the kernel did not record), after the waits (\"# thread states\n"
    "...\"; json: \"thread_states\", with running_ns, runnable_ns, blocked_ns,\n"
    "unrecorded_ns).\n"
    "csv columns: waiter_pid,waiter_tid,waiter_thread,function,call,count,\n"
    "total_ns,max_ns,runnable_ns,releaser_pid,releaser_tid,releaser_thread,\n"
    "release,releaser_function (--by pair: no function, call, release and\n"
    "releaser_function; --detail: start_ns (from the archive's first time),\n"
    "duration_ns instead of count, total_ns, max_ns, then release_ns and busy).\n"
    "Calls the tracer dropped are said in the header, \"# N calls dropped\";\n"
    "another writer's full buffer (its provider event record), \"# a trace\n"
    "buffer filled up N times: records were likely dropped\" (with csv and\n"
    "json, both on standard error).\n"
    "With more than one CPU, the archive is read on a second thread while the\n"
    "first follows the stacks and the waits (the same output); FXT_THREADS=0\n"
    "in the environment keeps to one.\n"
    "\n"
    "Exit status:\n"
    "  0   the waits were written\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged; or the output cannot be written.  One line on standard\n"
    "      error names the file and the problem.\n";

/* clang-format off */
static const struct option longopts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "detail", no_argument, NULL, 'd' },
	{ "tid", required_argument, NULL, 't' },
	{ "pid", required_argument, NULL, 'p' },
	{ "top", required_argument, NULL, 'n' },
	{ "format", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "b:dt:p:n:F:", longopts };

/* Returns 0 or TOOL_EXIT_ERROR (said). */
static int parse_args(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'b':
			if (strcmp(optarg, "wait") == 0)
				o->by = BY_WAIT;
			else if (strcmp(optarg, "pair") == 0)
				o->by = BY_PAIR;
			else
				return tool_usage_error(NAME, "--by: unknown key '%s'", optarg);
			break;
		case 'd':
			o->detail = true;
			break;
		case 't':
		case 'p':
			if (tool_pick_option(NAME, c == 'p' ? "pid" : "tid", optarg, &o->pick))
				return TOOL_EXIT_ERROR;
			break;
		case 'n':
			if (tool_parse_count(optarg, &o->top) < 0 || o->top == 0)
				return tool_usage_error(NAME, "--top: not a positive count: '%s'",
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
	if (optind == argc)
		return tool_usage_error(NAME, "no ARCHIVE given");
	if (optind + 1 != argc)
		return tool_usage_error(NAME, "one ARCHIVE only");
	if (o->detail && o->by != BY_WAIT)
		return tool_usage_error(NAME, "--detail lists each wait: no --by with it");
	o->path = argv[optind];
	return 0;
}

/* ------------------------------------------------------------- aggregation */

/* One row: waits with the same key. */
struct row {
	const struct waits_item *first; /* its key's fields */
	uint64_t count, total, max, ntimed;
	int64_t runnable; /* summed; -1: none known */
	bool released;
};

static enum by row_by;

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* The order of the keys (released first, then the key's fields). */
static int cmp_key(const struct waits_item *x, const struct waits_item *y)
{
	int c = (x->via == WAITS_VIA_NONE) - (y->via == WAITS_VIA_NONE);

	if (!c)
		c = cmp_u64(x->pid, y->pid);
	if (!c)
		c = cmp_u64(x->tid, y->tid);
	if (!c)
		c = cmp_u64(x->rpid, y->rpid);
	if (!c)
		c = cmp_u64(x->rtid, y->rtid);
	if (row_by == BY_PAIR)
		return c;
	if (!c)
		c = cmp_str(x->func, y->func);
	if (!c)
		c = cmp_str(x->call, y->call);
	if (!c)
		c = cmp_str(x->rcall, y->rcall);
	if (!c)
		c = cmp_str(x->rfunc, y->rfunc);
	return c;
}

static int cmp_item_key(const void *a, const void *b)
{
	return cmp_key(*(const struct waits_item *const *)a, *(const struct waits_item *const *)b);
}

/* Worst first; ties in key order, so the output does not depend on qsort. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = (!x->released) - (!y->released);

	if (!c)
		c = cmp_u64(y->total, x->total);
	return c ? c : cmp_key(x->first, y->first);
}

static bool selected(const struct options *o, const struct waits_item *it)
{
	return tool_picked(&o->pick, it->pid, it->tid);
}

/* The rows of the selected waits, worst first.  Returns their count, or
 * -ENOMEM. */
static ssize_t aggregate(const struct waits *w, const struct options *o, struct row **out)
{
	const struct waits_item **v = malloc((w->nitems ? w->nitems : 1) * sizeof(*v));
	struct row *rows = calloc(w->nitems ? w->nitems : 1, sizeof(*rows));
	size_t n = 0, nrows = 0;

	if (!v || !rows) {
		free(v);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->nitems; i++)
		if (selected(o, &w->items[i]))
			v[n++] = &w->items[i];
	row_by = o->by;
	qsort(v, n, sizeof(*v), cmp_item_key);
	for (size_t i = 0; i < n; i++) {
		const struct waits_item *it = v[i];
		uint64_t d = it->end - it->start;
		struct row *r;

		if (!nrows || cmp_key(rows[nrows - 1].first, it) != 0) {
			r = &rows[nrows++];
			r->first = it;
			r->runnable = -1;
			r->released = it->via != WAITS_VIA_NONE;
		}
		r = &rows[nrows - 1];
		r->count++;
		r->total += d;
		if (d > r->max)
			r->max = d;
		r->ntimed += it->timed_out;
		if (it->runnable >= 0)
			r->runnable = (r->runnable < 0 ? 0 : r->runnable) + it->runnable;
	}
	free(v);
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	*out = rows;
	return (ssize_t)nrows;
}

/* ------------------------------------------------------------------ text */

static void put_ns(FILE *f, uint64_t ns)
{
	char b[32];

	tool_fmt_ns(b, sizeof(b), (double)ns);
	fputs(b, f);
}

/* NAME[TID], or [TID] for a thread without a name. */
static void put_thread(FILE *f, const struct waits *w, uint64_t pid, uint64_t tid)
{
	const char *name = waits_thread_name(w, pid, tid);

	if (name)
		tool_put_text_str(f, name);
	fprintf(f, "[%" PRIu64 "]", tid);
}

static void put_releaser(FILE *f, const struct waits *w, const struct waits_item *it)
{
	put_thread(f, w, it->rpid, it->rtid);
	if (it->rpid != it->pid)
		fprintf(f, " of process %" PRIu64, it->rpid);
}

/* The header's lines that say records were lost: calls the tracer
 * dropped, another writer's full buffers (csv and json: tool_losses_say()
 * on standard error, with the same words). */
static void drop_lines(FILE *f, const struct waits *w)
{
	char full[128]; /* tool_buffer_full() */

	if (w->losses.dropped)
		fprintf(f, "# %" PRIu64 " calls dropped: " DROPPED_SO "\n", w->losses.dropped);
	if (w->losses.buffer_full)
		fprintf(f, "# %s\n",
			tool_buffer_full(full, sizeof(full), w->losses.buffer_full, FULL_SO));
}

/* The header's line on runnable time: not known, or known for how many
 * of the selected released waits (the kernel's trace may not cover them). */
static void runnable_line(FILE *f, const struct waits *w, const struct options *o)
{
	char lost[160]; /* tool_kernel_lost() */
	uint64_t released = 0, known = 0;

	if (!w->sched) {
		fputs("# runnable time is not known: the archive has no scheduling (context "
		      "switches)\n",
		      f);
		return;
	}
	for (size_t i = 0; i < w->nitems; i++) {
		const struct waits_item *it = &w->items[i];

		if (!selected(o, it) || it->via == WAITS_VIA_NONE)
			continue;
		released++;
		known += it->runnable >= 0;
	}
	fprintf(f,
		"# runnable time (from the release to the waiter's next switch-in) known for "
		"%" PRIu64 " of %" PRIu64 " released waits\n",
		known, released);
	if (w->kernel_lost)
		fprintf(f, "# %s\n",
			tool_kernel_lost(lost, sizeof(lost), w->kernel_lost,
					 "runnable times and thread states are partial"));
}

static void text_header(FILE *f, const struct waits *w, const struct row *rows, size_t nrows,
			const struct options *o)
{
	uint64_t n[2] = { 0, 0 }, t[2] = { 0, 0 };

	for (size_t i = 0; i < nrows; i++) {
		n[!rows[i].released] += rows[i].count;
		t[!rows[i].released] += rows[i].total;
	}
	fprintf(f, "# %" PRIu64 " wait%s released by another thread or process, ", n[0],
		n[0] == 1 ? "" : "s");
	put_ns(f, t[0]);
	fprintf(f, " in all; %" PRIu64 " with no releaser found, ", n[1]);
	put_ns(f, t[1]);
	fputc('\n', f);
	runnable_line(f, w, o);
	drop_lines(f, w);
}

static void text_row(FILE *f, const struct waits *w, const struct row *r, enum by by)
{
	const struct waits_item *it = r->first;

	put_thread(f, w, it->pid, it->tid);
	if (by == BY_WAIT) {
		fputc('/', f);
		tool_put_text_str(f, it->func);
	}
	fputs(" waited ", f);
	put_ns(f, r->total);
	if (by == BY_WAIT) {
		fputs(" in ", f);
		tool_put_text_str(f, it->call);
	}
	fprintf(f, ", %" PRIu64 " time%s", r->count, r->count == 1 ? "" : "s");
	if (r->count > 1) {
		fputs(" (max ", f);
		put_ns(f, r->max);
		fputc(')', f);
	}
	if (r->released) {
		fputs(", for ", f);
		put_releaser(f, w, it);
		if (by == BY_WAIT) {
			fputs(" in ", f);
			tool_put_text_str(f, it->rfunc);
			if (it->via != WAITS_VIA_FLOW) {
				fputc(' ', f);
				tool_put_text_str(f, it->rcall);
			}
		}
	} else {
		fputs(", releaser not found", f);
		if (r->ntimed)
			fprintf(f, " (%" PRIu64 " timed out)", r->ntimed);
	}
	if (r->runnable >= 0) {
		fputs("; runnable ", f);
		put_ns(f, (uint64_t)r->runnable);
	}
	fputc('\n', f);
}

/* The threads' states (from the context switches), after the waits. */
static void text_states(FILE *f, const struct waits *w)
{
	for (size_t i = 0; i < w->nstates; i++) {
		if (i == 0)
			sched_put_text_head(f, "# ");
		sched_put_text(f, &w->states[i],
			       waits_thread_name(w, w->states[i].pid, w->states[i].tid));
	}
}

static void text_rows(FILE *f, const struct waits *w, const struct row *rows, size_t nrows,
		      const struct options *o)
{
	size_t shown = 0;
	bool apart = false;

	text_header(f, w, rows, nrows, o);
	for (size_t i = 0; i < nrows; i++) {
		if (!rows[i].released && !apart) {
			fputs("# waits with no releaser (timed out, or the releaser was not "
			      "traced):\n",
			      f);
			apart = true;
			shown = 0;
		}
		if (o->top && shown++ >= o->top)
			continue;
		text_row(f, w, &rows[i], o->by);
	}
}

static void text_detail(FILE *f, const struct waits *w, const struct options *o)
{
	size_t shown = 0;

	runnable_line(f, w, o);
	drop_lines(f, w);
	for (size_t i = 0; i < w->nitems; i++) {
		const struct waits_item *it = &w->items[i];

		if (!selected(o, it) || (o->top && shown++ >= o->top))
			continue;
		fputc('+', f);
		put_ns(f, it->start - w->start_ns);
		fputc(' ', f);
		put_thread(f, w, it->pid, it->tid);
		fputc('/', f);
		tool_put_text_str(f, it->func);
		fputs(" waited ", f);
		put_ns(f, it->end - it->start);
		fputs(" in ", f);
		tool_put_text_str(f, it->call);
		if (it->via == WAITS_VIA_NONE) {
			fputs(", releaser not found", f);
			if (it->timed_out)
				fputs(" (timed out)", f);
			fputc('\n', f);
			continue;
		}
		fputs(", for ", f);
		put_releaser(f, w, it);
		fputs(" in ", f);
		tool_put_text_str(f, it->rfunc);
		fputs(" (", f);
		tool_put_text_str(f, it->rcall);
		fputs(" at +", f);
		put_ns(f, it->rts - w->start_ns);
		fputs("), busy in ", f);
		tool_put_text_str(f,
				  it->since ? it->since : "- (nothing open since the wait began)");
		if (it->runnable >= 0) {
			fputs("; runnable ", f);
			put_ns(f, (uint64_t)it->runnable);
		}
		fputc('\n', f);
	}
}

/* ------------------------------------------------------------- csv, json */

static void csv_thread(FILE *f, const struct waits *w, uint64_t pid, uint64_t tid)
{
	const char *name = waits_thread_name(w, pid, tid);

	fprintf(f, "%" PRIu64 ",%" PRIu64 ",", pid, tid);
	tool_put_csv_str(f, name ? name : "");
}

static void csv_str(FILE *f, const char *s)
{
	fputc(',', f);
	tool_put_csv_str(f, s ? s : "");
}

static void csv_out(FILE *f, const struct waits *w, const struct row *rows, size_t nrows,
		    const struct options *o)
{
	if (o->detail) {
		fputs("start_ns,duration_ns,waiter_pid,waiter_tid,waiter_thread,function,call,"
		      "runnable_ns,releaser_pid,releaser_tid,releaser_thread,release,"
		      "releaser_function,release_ns,busy\n",
		      f);
		for (size_t i = 0, shown = 0; i < w->nitems; i++) {
			const struct waits_item *it = &w->items[i];

			if (!selected(o, it) || (o->top && shown++ >= o->top))
				continue;
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",", it->start - w->start_ns,
				it->end - it->start);
			csv_thread(f, w, it->pid, it->tid);
			csv_str(f, it->func);
			csv_str(f, it->call);
			fputc(',', f);
			if (it->runnable >= 0)
				fprintf(f, "%" PRId64, it->runnable);
			if (it->via == WAITS_VIA_NONE) {
				fputs(",,,,,,,\n", f);
				continue;
			}
			fputc(',', f);
			csv_thread(f, w, it->rpid, it->rtid);
			csv_str(f, it->rcall);
			csv_str(f, it->rfunc);
			fprintf(f, ",%" PRIu64, it->rts - w->start_ns);
			csv_str(f, it->since);
			fputc('\n', f);
		}
		return;
	}
	fputs(o->by == BY_PAIR ? "waiter_pid,waiter_tid,waiter_thread,count,total_ns,max_ns,"
				 "runnable_ns,releaser_pid,releaser_tid,releaser_thread\n"
			       : "waiter_pid,waiter_tid,waiter_thread,function,call,count,total_ns,"
				 "max_ns,runnable_ns,releaser_pid,releaser_tid,releaser_thread,"
				 "release,releaser_function\n",
	      f);
	for (size_t i = 0, shown = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const struct waits_item *it = r->first;

		if (i && rows[i - 1].released && !r->released)
			shown = 0; /* --top: of each section */
		if (o->top && shown++ >= o->top)
			continue;
		csv_thread(f, w, it->pid, it->tid);
		if (o->by == BY_WAIT) {
			csv_str(f, it->func);
			csv_str(f, it->call);
		}
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->count, r->total, r->max);
		if (r->runnable >= 0)
			fprintf(f, "%" PRId64, r->runnable);
		if (!r->released) {
			fputs(o->by == BY_PAIR ? ",,,\n" : ",,,,,\n", f);
			continue;
		}
		fputc(',', f);
		csv_thread(f, w, it->rpid, it->rtid);
		if (o->by == BY_WAIT) {
			csv_str(f, it->rcall);
			csv_str(f, it->rfunc);
		}
		fputc('\n', f);
	}
}

static void json_kv(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	if (s)
		tool_put_json_str(f, s);
	else
		fputs("null", f);
}

static void json_thread(FILE *f, const struct waits *w, const char *pre, uint64_t pid, uint64_t tid)
{
	char key[32];

	fprintf(f, "\"%spid\":%" PRIu64 ",\"%stid\":%" PRIu64, pre, pid, pre, tid);
	snprintf(key, sizeof(key), "%sthread", pre);
	json_kv(f, key, waits_thread_name(w, pid, tid));
}

/* The fields of one wait or row after its waiter's; r NULL: a wait. */
static void json_fields(FILE *f, const struct waits *w, const struct waits_item *it,
			const struct row *r, enum by by)
{
	if (by == BY_WAIT) {
		json_kv(f, "function", it->func);
		json_kv(f, "call", it->call);
	}
	if (r)
		fprintf(f, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64,
			r->count, r->total, r->max);
	else
		fprintf(f, ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64,
			it->start - w->start_ns, it->end - it->start);
	int64_t run = r ? r->runnable : it->runnable;
	if (run >= 0)
		fprintf(f, ",\"runnable_ns\":%" PRId64, run);
	else
		fputs(",\"runnable_ns\":null", f);
	if (r ? !r->released : it->via == WAITS_VIA_NONE) {
		fprintf(f, ",\"timed_out\":%" PRIu64, r ? r->ntimed : (uint64_t)it->timed_out);
		return;
	}
	fputc(',', f);
	json_thread(f, w, "releaser_", it->rpid, it->rtid);
	if (by == BY_WAIT) {
		json_kv(f, "release", it->rcall);
		json_kv(f, "releaser_function", it->rfunc);
	}
	if (!r) {
		fprintf(f, ",\"release_ns\":%" PRIu64, it->rts - w->start_ns);
		json_kv(f, "busy", it->since);
	}
}

static void json_out(FILE *f, const struct waits *w, const struct row *rows, size_t nrows,
		     const struct options *o)
{
	const char *sep = "";

	fprintf(f, "{\"runnable_known\":%s,\"kernel_lost\":%" PRIu64, w->sched ? "true" : "false",
		w->kernel_lost);
	if (w->sched) {
		fputs(",\"thread_states\":[", f);
		for (size_t i = 0; i < w->nstates; i++) {
			fprintf(f, "%s{", i ? "," : "");
			json_thread(f, w, "", w->states[i].pid, w->states[i].tid);
			fputc(',', f);
			sched_put_json(f, &w->states[i]);
			fputc('}', f);
		}
		fputc(']', f);
	}
	if (o->detail) {
		fputs(",\"waits\":[", f);
		for (size_t i = 0, shown = 0; i < w->nitems; i++) {
			const struct waits_item *it = &w->items[i];

			if (!selected(o, it) || (o->top && shown++ >= o->top))
				continue;
			fprintf(f, "%s{", sep);
			json_thread(f, w, "", it->pid, it->tid);
			json_fields(f, w, it, NULL, BY_WAIT);
			fputc('}', f);
			sep = ",";
		}
		fputs("]}\n", f);
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t shown = 0;

		fprintf(f, ",\"%s\":[", pass ? "unreleased" : "rows");
		sep = "";
		for (size_t i = 0; i < nrows; i++) {
			const struct row *r = &rows[i];

			if (r->released == pass || (o->top && shown++ >= o->top))
				continue;
			fprintf(f, "%s{", sep);
			json_thread(f, w, "", r->first->pid, r->first->tid);
			json_fields(f, w, r->first, r, o->by);
			fputc('}', f);
			sep = ",";
		}
		fputc(']', f);
	}
	fputs("}\n", f);
}

int main(int argc, char **argv)
{
	char lost[160]; /* tool_kernel_lost() */
	struct options o = { 0 };
	struct waits w;
	struct row *rows = NULL;
	ssize_t nrows = 0;
	char err[512];
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		goto out;
	struct tool_input in = { .path = o.path };
	if (waits_load(&w, &in, err, sizeof(err)) < 0) {
		rc = tool_error(NAME, "%s: %s", o.path, err);
		waits_free(&w);
		goto out;
	}
	if (o.format != TOOL_FMT_TEXT) /* csv and json: rows only */
		tool_losses_say(stderr, NAME, o.path, &w.losses, DROPPED_SO, FULL_SO);
	if (!o.detail && (nrows = aggregate(&w, &o, &rows)) < 0) {
		rc = tool_error(NAME, "%s", strerror(ENOMEM));
	} else if (o.format == TOOL_FMT_CSV) {
		if (w.kernel_lost) /* csv has rows only */
			fprintf(stderr, NAME ": %s: %s\n", o.path,
				tool_kernel_lost(lost, sizeof(lost), w.kernel_lost,
						 "runnable times are partial"));
		csv_out(stdout, &w, rows, (size_t)nrows, &o);
	} else if (o.format == TOOL_FMT_JSON) {
		json_out(stdout, &w, rows, (size_t)nrows, &o);
	} else if (o.detail) {
		text_detail(stdout, &w, &o);
		text_states(stdout, &w);
	} else {
		text_rows(stdout, &w, rows, (size_t)nrows, &o);
		text_states(stdout, &w);
	}
	free(rows);
	waits_free(&w);
	if (!rc)
		rc = tool_flush_stdout(NAME);
out:
	tool_pick_free(&o.pick);
	return rc;
}
