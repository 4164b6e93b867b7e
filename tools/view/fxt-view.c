/* fxt-view: an archive in the terminal (ncurses): the call tree with
 * folding (vtree.c), a thread's timeline and the thread list (vtime.c),
 * the replay list (vlist.c); this file starts the pass over the archive
 * (the call tree, and through calltree_opts.also the timeline, on a
 * thread of its own: vload.c), shows the first screen while it reads on,
 * and runs the frame: the header of panes, the status line, help, search,
 * the keys every pane shares, resizing. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/front/common.h"
#include "tools/profile/profile.h"
#include "tools/view/view.h"

#define NAME "fxt-view"

static const char help[] =
    "Usage: fxt-view [OPTION]... ARCHIVE\n"
    "Show an FXT archive in the terminal: the call tree, with folding; a\n"
    "thread's timeline, zoomable; the list of calls as fxt-replay prints them;\n"
    "search by function name.\n"
    "ARCHIVE is a file, plain, gzip or zstd ('-' for standard input: then without\n"
    "the replay list, which reads the archive again).\n"
    "\n"
    "Options:\n"
    "  -b, --by KEY        one call tree (function, the default), one per\n"
    "                      process or one per thread\n"
    "  -p, --pid PID       only the calls of process PID\n"
    "  -t, --tid TID       only the calls of thread TID\n"
    "      --load-only     read the archive as the view does, print what it\n"
    "                      holds and how long that took, and exit (no\n"
    "                      terminal needed; for benchmarks and scripts)\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "\n"
    "Panes (the header names them; 1-4 or Tab to switch):\n"
    "  1 tree       calls, total, self, share and the call path, as fxt-tree\n"
    "               prints them.  Up/Down move, Enter or Space folds or\n"
    "               unfolds, Right unfolds, Left folds or goes to the caller,\n"
    "               + unfolds all, - folds all, t shows the function on the\n"
    "               timeline of the thread where it takes the most time.\n"
    "  2 timeline   a thread's calls as bars, one line per depth, under a time\n"
    "               axis (from the first event).  Left/Right pan, + or z zoom\n"
    "               in, - or Z zoom out, 0 the whole trace, Up/Down the\n"
    "               previous or next thread, PgUp/PgDn the depths shown, Enter\n"
    "               the thread list.  A bar \"~:::\" stands for several calls\n"
    "               merged (a thread with very many calls is held at a coarser\n"
    "               resolution, said in the pane's first line).\n"
    "  3 threads    the threads: slices, busy time (of top-level calls),\n"
    "               depth; Enter shows one on the timeline, over its calls.\n"
    "  4 replay     every call as fxt-replay --time-order prints it (all the\n"
    "               threads by time), read as it is scrolled.  It opens after\n"
    "               one pass over the archive; a second one, in the\n"
    "               background, makes an index (at most 32 MiB; its progress\n"
    "               on the status line), from which End, going back and a\n"
    "               search past the lines held read a short stretch (of a\n"
    "               gzip or zstd archive, from the member or frame before\n"
    "               it).  A search reads between keys; Esc stops it.  End\n"
    "               pressed before the index is complete goes there once it\n"
    "               is (the status line says \"then End\"; Esc stays): the\n"
    "               last calls' nesting and numbers need the whole archive\n"
    "               read (a compressed one decoded) from its start.  : is\n"
    "               kept too when pressed before the list's first pass ends.\n"
    "Everywhere: / searches a function name (POSIX ERE), n and N go to the\n"
    "next and previous match, ? shows the keys, q quits.  In the timeline and\n"
    "the replay list, : goes to a time, as fxt-replay --since takes it: a count\n"
    "is a timestamp (ns), a number with a unit (1.2s, 300ms, 5us) a time from\n"
    "the first event; the timeline's window starts there, the list selects the\n"
    "first call that starts then or later (from the index's mark before it).\n"
    "The status line names the archive, its records and slices, and the\n"
    "records the tracer dropped, when it did, the kernel's lost events\n"
    "(fxt-run --kernel), and \"BUFFER FULL Nx\" when another writer's trace says\n"
    "a buffer filled up N times (records were likely dropped); where it does\n"
    "not fit the terminal, the name is cut or left out first, then the\n"
    "records, the drops said in short, the pane's words last (their key hint\n"
    "kept).  Colours are used when the terminal has them.\n"
    "The view is shown at once (a large or compressed archive takes a while to\n"
    "read): until the archive is read through, the tree, the timeline and the\n"
    "thread list show what was read so far, the tree's heading says so and the\n"
    "status line says \"reading\"; keys work meanwhile.\n"
    "\n"
    "Exit status:\n"
    "  0   quit with q\n"
    "  2   bad usage; or ARCHIVE cannot be read, is not an FXT archive or is\n"
    "      damaged; or standard input or output is not a terminal.  One line\n"
    "      on standard error names the problem.\n";

enum { OPT_LOAD_ONLY = 256 };

/* clang-format off */
static const struct option longopts[] = {
	{ "by", required_argument, NULL, 'b' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "load-only", no_argument, NULL, OPT_LOAD_ONLY },
	{ NULL, 0, NULL, 0 },
};
/* clang-format on */

static const struct tool_cli cli = { NAME, help, "b:p:t:", longopts };

struct options {
	struct calltree_opts t;
	bool load_only;
	const char *path;
};

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
		case OPT_LOAD_ONLY:
			o->load_only = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	return tool_archive_operand(NAME, argc, argv, &o->path);
}

/* ------------------------------------------------------------ helpers */

void view_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	tool_fmt_ns(buf, len, (double)ns);
}

void view_put(int y, int x, int w, const char *s)
{
	int n = 0;

	if (w <= 0)
		return;
	move(y, x);
	for (; s[n] && n < w; n++)
		addch((unsigned char)s[n] < 0x20 ? '?' : (unsigned char)s[n]);
	for (; n < w; n++)
		addch(' ');
}

bool view_row_matches(struct view *v, uint32_t row)
{
	if (!v->have_re)
		return false;
	if (row >= v->nrows) {
		size_t n = (size_t)row + 1 + 256;
		uint8_t *m = realloc(v->rowmatch, n);

		if (!m)
			return false;
		memset(m + v->nrows, 0, n - v->nrows);
		v->rowmatch = m;
		v->nrows = n;
	}
	if (!v->rowmatch[row])
		v->rowmatch[row] =
		    regexec(&v->re, calltree_row_name(v->tree, row), 0, NULL, 0) == 0 ? 1 : 2;
	return v->rowmatch[row] == 1;
}

double view_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --------------------------------------------------------------- load */

/* The first screen comes when the pass ends or after this long (s); a
 * small archive is shown whole at once, a bad one said before the
 * terminal is taken. */
#define VIEW_FIRST_S 0.3

/* Starts the pass and waits for it (until it ends with --load-only, or
 * when it reads standard input, which the terminal's keys come from). */
static int load(struct view *v, const struct options *o)
{
	const char *err;
	int rc = vload_start(v, &o->t);

	if (rc < 0)
		return tool_error(NAME, "%s", strerror(-rc));
	vload_wait(v, o->load_only || strcmp(o->path, "-") == 0 ? -1 : VIEW_FIRST_S);
	if ((rc = vload_result(v, &err)) < 0)
		return tool_error(NAME, "%s: %s", o->path, err);
	return 0;
}

/* What the view holds, and the cost of drawing the busiest thread whole
 * (every column of every depth at 80 and 1000 columns). */
static int load_only(struct view *v)
{
	const struct timeline_thread *big = NULL;
	uint64_t dthreads, dropped = calltree_dropped(v->tree, &dthreads), found = 0;
	double t0, per80 = 0, per1000;
	char lost[160]; /* tool_kernel_lost() */

	view_lock(v); /* the window on the whole trace */
	for (size_t i = 0; i < timeline_nthreads(v->tl); i++)
		if (!big || timeline_thread(v->tl, i)->nbars > big->nbars)
			big = timeline_thread(v->tl, i);
	t0 = view_now_s();
	for (int w = 80, pass = 0; pass < 2; pass++, w = 1000) {
		for (unsigned d = 0; big && d < big->ndepth; d++)
			for (int c = 0; c < w; c++)
				found += timeline_find(big, d,
						       v->t0 + (v->t1 - v->t0) * (uint64_t)c /
								   (uint64_t)w,
						       v->t0 + (v->t1 - v->t0) * (uint64_t)(c + 1) /
								   (uint64_t)w) != NULL;
		if (pass == 0) {
			per80 = (view_now_s() - t0) * 1e3;
			t0 = view_now_s();
		}
	}
	per1000 = (view_now_s() - t0) * 1e3;
	printf("%s: %" PRIu64 " records, %" PRIu64 " slices, %zu call paths, %zu thread%s, %" PRIu64
	       " timeline bars\n",
	       v->path, calltree_nrecords(v->tree), calltree_nslices(v->tree),
	       calltree_nnodes(v->tree), timeline_nthreads(v->tl),
	       timeline_nthreads(v->tl) == 1 ? "" : "s", timeline_nbars(v->tl));
	if (dropped)
		printf("%" PRIu64 " records dropped (on %" PRIu64 " thread%s)\n", dropped, dthreads,
		       dthreads == 1 ? "" : "s");
	if (calltree_kernel_lost(v->tree))
		printf("%s\n", tool_kernel_lost(lost, sizeof(lost), calltree_kernel_lost(v->tree),
						"the calls are whole"));
	if (calltree_buffer_full(v->tree)) {
		char full[128];

		printf("%s\n", tool_buffer_full(full, sizeof(full), calltree_buffer_full(v->tree),
						"the calls may be partial"));
	}
	printf(
	    "loaded in %.3f s; the busiest thread's timeline drawn whole: %.2f ms at 80 columns, "
	    "%.2f ms at 1000 (%" PRIu64 " cells)\n",
	    vload_seconds(v), per80, per1000, found);
	view_unlock(v);
	return tool_flush_stdout(NAME);
}

/* -------------------------------------------------------------- frame */

static const char *const pane_names[NPANES] = { "1 tree", "2 timeline", "3 threads", "4 replay" };

static void header(struct view *v, int cols)
{
	int x = 0;

	attrset(v->colour ? COLOR_PAIR(COL_HEAD) : A_REVERSE);
	view_put(0, 0, cols, "");
	mvaddnstr(0, 0, " fxt view ", cols);
	x = 10;
	for (int i = 0; i < NPANES && x < cols; i++) {
		int n = (int)strlen(pane_names[i]) + 2;

		if ((enum view_pane)i == v->pane)
			attron(A_BOLD | A_UNDERLINE);
		mvaddnstr(0, x, " ", cols - x);
		mvaddnstr(0, x + 1, pane_names[i], cols - x - 1);
		attroff(A_BOLD | A_UNDERLINE);
		x += n;
	}
	if (x + 18 < cols)
		mvaddnstr(0, cols - 18, "? help   q quit ", 16);
	attrset(A_NORMAL);
}

/* What the status line says, made shorter step by step until it fits
 * the terminal's `cols` (fxt view in 80 columns or fewer while the pass
 * reads a big archive: the name, the records, "reading", the drops and
 * the pane's words, whose end often is a key's hint, "(Esc: stay)").  */
struct status_parts {
	const char *name; /* the archive's file name */
	uint64_t records, dropped, dthreads, lost, full;
	double reading; /* seconds the pass has read; < 0: done */
	const char *pane;
};

/* The line at `level`: 0 as it is meant; each level one step shorter than
 * the one before, the least wanted part first, the pane's hint last:
 * 1 "N rec", "reading 3s"; 2 the name cut to 15 characters; 3 no name;
 * 4 no records; 5 "reading"; 6 the drops in short (never left out); 7 the
 * pane's words before its hint "(...)" cut to 12 characters. */
static void status_line(char *line, size_t len, const struct status_parts *p, int level)
{
	char name[24], recs[32], reading[32], dropped[64], lost[40], full[40], pane[160];
	const char *part[7], *hint = strrchr(p->pane, '(');
	size_t np = 0, at = 0, n = strlen(p->pane);

	if (level < 2) {
		part[np++] = p->name;
	} else if (level < 3) {
		snprintf(name, sizeof(name), strlen(p->name) > 16 ? "%.15s~" : "%s", p->name);
		part[np++] = name;
	}
	if (level < 4) {
		snprintf(recs, sizeof(recs), "%" PRIu64 " %s", p->records,
			 level >= 1 ? "rec" : "records");
		part[np++] = recs;
	}
	if (p->reading >= 0) {
		if (level >= 5)
			snprintf(reading, sizeof(reading), "reading");
		else
			snprintf(reading, sizeof(reading),
				 level >= 1 ? "reading %.0fs" : "reading, %.0f s", p->reading);
		part[np++] = reading;
	}
	if (p->dropped) {
		if (level >= 6)
			snprintf(dropped, sizeof(dropped), "%" PRIu64 " DROPPED", p->dropped);
		else
			snprintf(dropped, sizeof(dropped), "%" PRIu64 " DROPPED (%" PRIu64 " thr)",
				 p->dropped, p->dthreads);
		part[np++] = dropped;
	}
	if (p->lost) {
		snprintf(lost, sizeof(lost),
			 level >= 6 ? "%" PRIu64 " LOST" : "%" PRIu64 " KERNEL LOST", p->lost);
		part[np++] = lost;
	}
	if (p->full) {
		snprintf(full, sizeof(full),
			 level >= 6 ? "FULL %" PRIu64 "x" : "BUFFER FULL %" PRIu64 "x", p->full);
		part[np++] = full;
	}
	if (level >= 7 && hint && n && p->pane[n - 1] == ')' && (size_t)(hint - p->pane) > 13)
		snprintf(pane, sizeof(pane), "%.12s~ %s", p->pane, hint);
	else
		snprintf(pane, sizeof(pane), "%s", p->pane);
	if (pane[0])
		part[np++] = pane;
	line[0] = '\0';
	for (size_t i = 0; i < np && at < len; i++)
		at += (size_t)snprintf(line + at, len - at, "%s%s", i ? " | " : "", part[i]);
}

static void status(struct view *v, int y, int cols)
{
	const char *base = strrchr(v->path, '/');
	char line[512], pane[160] = "";
	struct status_parts p;
	int level;

	switch (v->pane) {
	case PANE_TREE:
		vtree_status(v, pane, sizeof(pane));
		break;
	case PANE_TIME:
	case PANE_THREADS:
		vtime_status(v, pane, sizeof(pane));
		break;
	case PANE_LIST:
		vlist_status(v, pane, sizeof(pane));
		break;
	default:
		break;
	}
	p.name = base ? base + 1 : v->path;
	p.records = calltree_nrecords(v->tree);
	p.dropped = calltree_dropped(v->tree, &p.dthreads);
	p.lost = calltree_kernel_lost(v->tree);
	p.full = calltree_buffer_full(v->tree);
	p.reading = vload_busy(v) ? vload_seconds(v) : -1;
	p.pane = *v->msg ? v->msg : pane;
	for (level = 0; level < 7; level++) {
		status_line(line, sizeof(line), &p, level);
		if ((int)strlen(line) <= cols)
			break;
	}
	if (level == 7)
		status_line(line, sizeof(line), &p, level);
	attrset(v->colour ? COLOR_PAIR(COL_STATUS) : A_REVERSE);
	view_put(y, 0, cols, line);
	attrset(A_NORMAL);
}

static const char *const keys_help[] = {
	"fxt view: keys (any key returns)",
	"",
	"  1 2 3 4, Tab    the tree, timeline, threads, replay list",
	"  /  n  N         search a function name (regex); next; previous",
	"  :               go to a time (timeline, replay): 1.2s from the start, or ns",
	"  q               quit        ?  this help       Ctrl-L  redraw",
	"",
	"tree      Up/Down j/k move   PgUp/PgDn   Home/End",
	"          Enter/Space fold or unfold   Right unfold   Left fold, caller",
	"          + unfold all   - fold all   t the function on a timeline",
	"timeline  Left/Right pan   + z zoom in   - Z zoom out   0 whole trace",
	"          Up/Down thread   PgUp/PgDn depths   Enter thread list",
	"threads   Up/Down   Enter show on the timeline",
	"replay    Up/Down PgUp/PgDn Home End   Esc stops a search",
	"          in time order, all threads",
	"",
	"Bars \"~:::\" on the timeline are several calls merged.",
};

static void draw_help(int rows, int cols)
{
	size_t n = sizeof(keys_help) / sizeof(keys_help[0]);

	for (int i = 0; i < rows; i++)
		view_put(i, 0, cols, (size_t)i < n ? keys_help[i] : "");
}

static void draw(struct view *v, bool helping)
{
	int rows = LINES, cols = COLS;

	erase();
	if (helping) {
		draw_help(rows, cols);
	} else if (rows >= 4 && cols >= 20) {
		header(v, cols);
		switch (v->pane) {
		case PANE_TREE:
			vtree_draw(v, 1, rows - 2, cols);
			break;
		case PANE_TIME:
			vtime_draw(v, 1, rows - 2, cols);
			break;
		case PANE_THREADS:
			vthreads_draw(v, 1, rows - 2, cols);
			break;
		case PANE_LIST:
			vlist_draw(v, 1, rows - 2, cols);
			break;
		default:
			break;
		}
		status(v, rows - 1, cols);
	} else {
		view_put(0, 0, cols, "terminal too small");
	}
	refresh();
}

/* read_line()'s typing, on the last line. */
static int read_keys(const char *lead, char *buf, size_t cap)
{
	size_t n = 0, w = strlen(lead);
	int key;

	buf[0] = 0;
	timeout(-1);
	for (;;) {
		attrset(A_NORMAL);
		view_put(LINES - 1, 0, COLS, lead);
		mvaddnstr(LINES - 1, (int)w, buf, COLS - (int)w - 1);
		refresh();
		key = getch();
		if (key == '\n' || key == '\r' || key == KEY_ENTER)
			return (int)n;
		if (key == 27)
			return -1;
		if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n)
			buf[--n] = 0;
		else if (key >= 0x20 && key < 0x7f && n + 1 < cap)
			buf[n++] = (char)key, buf[n] = 0;
	}
}

/* Reads a line after `lead` on the last line into buf (cap bytes): its
 * length, or -1 when cancelled (Escape).  The pass reads on meanwhile
 * (the frame's lock given back while keys are typed). */
static int read_line(struct view *v, const char *lead, char *buf, size_t cap)
{
	int n;

	view_unlock(v);
	n = read_keys(lead, buf, cap);
	view_lock(v);
	return n;
}

/* Reads a pattern on the last line; false when cancelled (Escape). */
static bool prompt(struct view *v)
{
	char buf[sizeof(v->pattern)];
	int key, n = read_line(v, "/", buf, sizeof(buf));

	if (n < 0)
		return false;
	if (!n)
		return v->have_re; /* an empty pattern: the last one again */
	if (v->have_re)
		regfree(&v->re);
	v->have_re = false;
	if (v->nrows)
		memset(v->rowmatch, 0, v->nrows);
	if ((key = regcomp(&v->re, buf, REG_EXTENDED | REG_NOSUB)) != 0) {
		char msg[128];

		regerror(key, &v->re, msg, sizeof(msg));
		snprintf(v->msg, sizeof(v->msg), "/%.100s/: %.100s", buf, msg);
		return false;
	}
	memcpy(v->pattern, buf, sizeof(buf));
	v->have_re = true;
	return true;
}

static void search(struct view *v, bool backward)
{
	if (!v->have_re) {
		snprintf(v->msg, sizeof(v->msg), "no search yet: / and a function name");
		return;
	}
	switch (v->pane) {
	case PANE_TREE:
		vtree_search(v, backward);
		break;
	case PANE_TIME:
	case PANE_THREADS:
		v->pane = PANE_TIME;
		vtime_search(v, backward);
		break;
	case PANE_LIST:
		vlist_search(v, backward);
		break;
	default:
		break;
	}
}

/* ':': reads a time and goes there in the timeline or the replay list. */
static void go_time(struct view *v)
{
	struct callstream_when w;
	char buf[64];

	if (v->pane != PANE_TIME && v->pane != PANE_THREADS && v->pane != PANE_LIST) {
		snprintf(v->msg, sizeof(v->msg),
			 ": goes to a time in the timeline (2) or the list (4)");
		return;
	}
	if (read_line(v, "go to time (1.2s from the start, or ns): ", buf, sizeof(buf)) <= 0)
		return;
	if (callstream_parse_when(buf, &w) < 0) {
		snprintf(v->msg, sizeof(v->msg), "not a time (ns, or a number with a unit): '%s'",
			 buf);
		return;
	}
	if (v->pane == PANE_LIST) {
		vlist_goto(v, &w);
		return;
	}
	v->pane = PANE_TIME;
	vtime_goto(v, &w);
}

static void colours(struct view *v)
{
	static const short bg[VIEW_BAR_COLOURS] = { COLOR_GREEN,   COLOR_CYAN, COLOR_YELLOW,
						    COLOR_MAGENTA, COLOR_BLUE, COLOR_WHITE };

	v->colour = has_colors() && start_color() == OK;
	if (!v->colour)
		return;
	use_default_colors();
	for (int i = 0; i < VIEW_BAR_COLOURS; i++)
		init_pair((short)(COL_BAR + i), bg[i] == COLOR_BLUE ? COLOR_WHITE : COLOR_BLACK,
			  bg[i]);
	init_pair(COL_HEAD, COLOR_BLACK, COLOR_CYAN);
	init_pair(COL_STATUS, COLOR_BLACK, COLOR_WHITE);
	init_pair(COL_MATCH, COLOR_WHITE, COLOR_RED);
	init_pair(COL_MERGED, COLOR_WHITE, COLOR_BLACK);
}

/* How long the frame may wait for a key: while the pass or the list
 * reads, it wakes to redraw.  Taken before the screen is drawn: a pass
 * or index (own threads) that ends after the screen said it reads must
 * still wake the frame (else: "indexing 87%" until a key). */
static int wait_ms(const struct view *v)
{
	int ms = vlist_wait_ms(v->list);

	return vload_busy(v) && (ms < 0 || ms > 250) ? 250 : ms;
}

/* FXT_VIEW_DRAW_PAUSE=FILE (for tests): after each screen, the frame
 * waits while FILE exists before it waits for a key (the pass and the
 * list read on meanwhile), so that a test can end them between the two. */
static void draw_pause(const char *file)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (file && *file && access(file, F_OK) == 0)
		nanosleep(&ts, NULL);
}

/* FXT_VIEW_KEYLOG=FILE: the time of the first screen (from the start of
 * the process), of the pass, and of each key (from getch() to the screen
 * drawn after it, the wait for the pass's lock included), in ms; and of
 * an End the list could not do at once ("end": from the key to the end
 * drawn); for benchmarks of the view's latency. */
struct keylog {
	FILE *f;
	int key; /* ERR: none pending */
	double at;
	bool loaded;
};

static void keylog_note(struct view *v, struct keylog *k, double started)
{
	double waited;

	if (!k->f)
		return;
	if (started > 0)
		fprintf(k->f, "screen %.1f ms\n", (view_now_s() - started) * 1e3);
	if (k->key != ERR)
		fprintf(k->f, "key %s %.2f ms\n", keyname(k->key) ? keyname(k->key) : "?",
			(view_now_s() - k->at) * 1e3);
	k->key = ERR;
	if ((waited = vlist_end_waited(v->list)) > 0)
		fprintf(k->f, "end %.2f ms\n", waited * 1e3);
	if (!k->loaded && !vload_busy(v)) {
		k->loaded = true;
		fprintf(k->f, "pass %.1f ms\n", vload_seconds(v) * 1e3);
	}
	fflush(k->f);
}

static int run(struct view *v, double started)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);
	bool helping = false, done = false;
	const char *kl = getenv("FXT_VIEW_KEYLOG"), *err, *pause = getenv("FXT_VIEW_DRAW_PAUSE");
	struct keylog klog = { kl && *kl ? fopen(kl, "a") : NULL, ERR, 0, false };
	int rc = 0;

	if (!scr) {
		if (klog.f)
			fclose(klog.f);
		return tool_error(NAME, "cannot use the terminal (TERM=%s)",
				  getenv("TERM") ? getenv("TERM") : "");
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(50); /* Esc stops a search: not a second later */
	curs_set(0);
	colours(v);
	view_lock(v);
	while (!done) {
		int key, ms, body = LINES - 2;

		if (vload_result(v, &err) < 0)
			break;
		/* The list reads the archive on threads of its own: from the
		 * tree's end, or sooner when it is asked for (the tree's pass
		 * first: it is what the first screen shows) */
		if (!v->list && (!vload_busy(v) || v->pane == PANE_LIST) &&
		    (rc = vlist_new(&v->list, v->path)) < 0)
			break;
		vlist_tick(v);
		ms = wait_ms(v); /* before the screen: see wait_ms() */
		draw(v, helping);
		keylog_note(v, &klog, started);
		started = 0;
		view_unlock(v);
		draw_pause(pause);
		timeout(ms);
		key = getch();
		klog.at = view_now_s();
		view_lock(v);
		if (key != ERR && key != KEY_RESIZE)
			klog.key = key;
		if (helping) { /* a timeout or a resize redraws it: a key closes it */
			helping = key == ERR || key == KEY_RESIZE;
			continue;
		}
		v->msg[0] = 0;
		if (key == KEY_RESIZE || key == ERR)
			continue;
		if (v->pane == PANE_TREE && vtree_key(v, key, body))
			continue;
		if (v->pane == PANE_TIME && vtime_key(v, key, body, COLS))
			continue;
		if (v->pane == PANE_THREADS && vthreads_key(v, key, body))
			continue;
		if (v->pane == PANE_LIST && vlist_key(v, key, body))
			continue;
		switch (key) {
		case 'q':
			done = true;
			break;
		case '?':
			helping = true;
			break;
		case '1':
		case '2':
		case '3':
		case '4':
			v->pane = (enum view_pane)(key - '1');
			break;
		case '\t':
			v->pane = (enum view_pane)((v->pane + 1) % NPANES);
			break;
		case KEY_BTAB:
			v->pane = (enum view_pane)((v->pane + NPANES - 1) % NPANES);
			break;
		case '/':
			if (prompt(v))
				search(v, false);
			break;
		case 'n':
		case 'N':
			search(v, key == 'N');
			break;
		case ':':
			go_time(v);
			break;
		case 12: /* Ctrl-L */
			clearok(curscr, TRUE);
			break;
		}
	}
	view_unlock(v);
	endwin();
	delscreen(scr);
	if (klog.f)
		fclose(klog.f);
	/* the pass found damage past the first screen */
	if (vload_result(v, &err) < 0)
		return tool_error(NAME, "%s: %s", v->path, err);
	if (rc < 0)
		return tool_error(NAME, "%s", strerror(-rc));
	return TOOL_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	/* static: the pass may run on it past main's return (q while it reads) */
	static struct view v;
	double started = view_now_s();
	int status;

	setlocale(LC_ALL, "");
	if (parse_args(argc, argv, &o))
		return TOOL_EXIT_ERROR;
	v.path = o.path;
	if (!o.load_only && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
		return tool_error(NAME,
				  "standard %s is not a terminal: fxt-view is interactive "
				  "(fxt-tree and fxt-replay print text)",
				  isatty(STDOUT_FILENO) ? "input" : "output");
	status = load(&v, &o);
	if (status == 0 && o.load_only)
		status = load_only(&v);
	else if (status == 0)
		status = run(&v, started);
	if (v.have_re)
		regfree(&v.re);
	vlist_free(v.list);
	free(v.rowmatch);
	free(v.open);
	free(v.vis);
	free(v.order);
	/* q before the pass ended: the pass ends with the process, on the
	 * tree and the timeline */
	if (vload_free(&v)) {
		calltree_free(v.tree);
		timeline_free(v.tl);
	}
	return status;
}
