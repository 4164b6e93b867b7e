/* fxt-view's timeline pane (a thread's slices as bars by depth under a
 * time axis; pan, zoom, the next or previous thread) and its thread list
 * (pick the thread the timeline shows). */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/view/view.h"

#define MARGIN 3 /* the depth's number, left of the bars */

static const struct timeline_thread *cur(const struct view *v)
{
	return timeline_nthreads(v->tl) ? timeline_thread(v->tl, v->thr) : NULL;
}

static void whole(struct view *v)
{
	v->t0 = calltree_start_ns(v->tree);
	v->t1 = calltree_end_ns(v->tree);
	if (v->t1 <= v->t0)
		v->t1 = v->t0 + 1;
	v->w0 = v->t0;
	v->w1 = v->t1;
}

void vtime_sync(struct view *v)
{
	if (v->t0 == v->w0 && v->t1 == v->w1)
		whole(v);
}

/* The start of column i of w over the window. */
static uint64_t col_ns(const struct view *v, int i, int w)
{
	return v->t0 + (uint64_t)((unsigned __int128)(v->t1 - v->t0) * (unsigned)i / (unsigned)w);
}

/* The time axis: the window's start from the first event, then each
 * mark as "+" its distance from the window's start (readable at any
 * zoom). */
static void axis(struct view *v, int y, int cols)
{
	uint64_t base = calltree_start_ns(v->tree);
	int w = cols - MARGIN;
	char lab[32], buf[40];

	view_put(y, 0, cols, "");
	for (int i = 0; i + 10 <= w; i += 20) {
		view_fmt_ns(lab, sizeof(lab), i ? col_ns(v, i, w) - v->t0 : v->t0 - base);
		snprintf(buf, sizeof(buf), "|%s%s", i ? "+" : "", lab);
		mvaddnstr(y, MARGIN + i, buf, w - i);
	}
}

static int bar_attr(struct view *v, const struct timeline_bar *b)
{
	bool hit = v->have_re && view_row_matches(v, b->row);

	if (!v->colour)
		return hit ? A_REVERSE | A_BOLD | A_UNDERLINE : A_REVERSE;
	if (hit)
		return COLOR_PAIR(COL_MATCH) | A_BOLD;
	if (b->n > 1)
		return COLOR_PAIR(COL_MERGED);
	return COLOR_PAIR(COL_BAR + b->row % VIEW_BAR_COLOURS);
}

/* One depth: runs of columns over the same bar, each with its name. */
static void depth_row(struct view *v, const struct timeline_thread *th, unsigned d, int y, int cols)
{
	int w = cols - MARGIN, i = 0;
	char num[16];

	snprintf(num, sizeof(num), "%2u", d + 1);
	view_put(y, 0, MARGIN, num);
	while (i < w) {
		const struct timeline_bar *b =
		    timeline_find(th, d, col_ns(v, i, w), col_ns(v, i + 1, w));
		const char *name;
		int j = i + 1, len;

		if (!b) {
			mvaddch(y, MARGIN + i, ' ');
			i++;
			continue;
		}
		while (j < w && timeline_find(th, d, col_ns(v, j, w), col_ns(v, j + 1, w)) == b)
			j++;
		name = calltree_row_name(v->tree, b->row);
		len = (int)strlen(name);
		attrset(bar_attr(v, b));
		for (int k = i; k < j; k++) {
			int c = k - i;
			char ch = b->n > 1 ? ':' : (j - i > 1 ? ' ' : '|');

			if (j - i > 1 && c - (b->n > 1) < len && !(b->n > 1 && c == 0))
				ch = name[c - (b->n > 1)];
			else if (b->n > 1 && c == 0 && j - i > 1)
				ch = '~';
			mvaddch(y, MARGIN + k, (unsigned char)ch);
		}
		attrset(A_NORMAL);
		i = j;
	}
}

void vtime_draw(struct view *v, int top, int rows, int cols)
{
	const struct timeline_thread *th = cur(v);
	char line[256], a[32], b[32], res[32];

	if (rows < 3)
		return;
	if (!th) {
		view_put(top, 0, cols, "no slices: nothing to draw");
		for (int i = 1; i < rows; i++)
			view_put(top + i, 0, cols, "");
		return;
	}
	view_fmt_ns(a, sizeof(a), v->t0 - calltree_start_ns(v->tree));
	view_fmt_ns(b, sizeof(b), v->t1 - v->t0);
	if (th->res_ns)
		view_fmt_ns(res, sizeof(res), th->res_ns);
	snprintf(line, sizeof(line),
		 "thread %" PRIu64 " (pid %" PRIu64 ") %zu/%zu  from %s, %s wide%s%s", th->tid,
		 th->pid, v->thr + 1, timeline_nthreads(v->tl), a, b,
		 th->res_ns ? ", merged under " : "", th->res_ns ? res : "");
	attron(A_BOLD);
	view_put(top, 0, cols, line);
	attroff(A_BOLD);
	axis(v, top + 1, cols);
	if (v->dtop >= th->ndepth)
		v->dtop = th->ndepth ? th->ndepth - 1 : 0;
	for (int i = 2; i < rows; i++) {
		unsigned d = v->dtop + (unsigned)(i - 2);

		if (d < th->ndepth)
			depth_row(v, th, d, top + i, cols);
		else
			view_put(top + i, 0, cols,
				 d == th->ndepth && th->too_deep ? "   (deeper calls not drawn)"
								 : "");
	}
}

/* Keeps a window of width w around mid inside the trace. */
static void place(struct view *v, uint64_t mid, uint64_t w)
{
	uint64_t lo = calltree_start_ns(v->tree), hi = calltree_end_ns(v->tree);

	if (hi > lo && w > hi - lo)
		w = hi - lo;
	if (!w)
		w = 1;
	v->t0 = mid > lo + w / 2 ? mid - w / 2 : lo;
	if (hi > lo && v->t0 + w > hi)
		v->t0 = hi - w;
	v->t1 = v->t0 + w;
}

void vtime_goto(struct view *v, const struct callstream_when *w)
{
	uint64_t ts = callstream_when_ns(w, calltree_start_ns(v->tree)), wd = v->t1 - v->t0;

	if (ts > calltree_end_ns(v->tree))
		snprintf(v->msg, sizeof(v->msg), "past the trace's end: its last window");
	place(v, ts > UINT64_MAX - wd / 2 ? UINT64_MAX : ts + wd / 2, wd);
}

static void zoom(struct view *v, bool in)
{
	uint64_t w = v->t1 - v->t0;

	place(v, v->t0 + w / 2, in ? w / 2 : w * 2);
}

static void pan(struct view *v, bool right)
{
	uint64_t w = v->t1 - v->t0, step = w / 4 ? w / 4 : 1, lo = calltree_start_ns(v->tree),
		 hi = calltree_end_ns(v->tree);

	if (right) {
		if (v->t1 + step > hi)
			step = hi > v->t1 ? hi - v->t1 : 0;
		v->t0 += step;
		v->t1 += step;
	} else {
		if (v->t0 < lo + step)
			step = v->t0 > lo ? v->t0 - lo : 0;
		v->t0 -= step;
		v->t1 -= step;
	}
}

bool vtime_key(struct view *v, int key, int rows, int cols)
{
	size_t n = timeline_nthreads(v->tl);
	const struct timeline_thread *th = cur(v);

	(void)cols;
	switch (key) {
	case KEY_LEFT:
	case 'h':
		pan(v, false);
		return true;
	case KEY_RIGHT:
	case 'l':
		pan(v, true);
		return true;
	case '+':
	case '=':
	case 'z':
		zoom(v, true);
		return true;
	case '-':
	case 'Z':
		zoom(v, false);
		return true;
	case '0':
	case KEY_HOME:
		whole(v);
		return true;
	case KEY_UP:
	case 'k':
		if (v->thr)
			v->thr--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (v->thr + 1 < n)
			v->thr++;
		return true;
	case KEY_PPAGE:
		v->dtop = v->dtop > (unsigned)rows / 2 ? v->dtop - (unsigned)rows / 2 : 0;
		return true;
	case KEY_NPAGE:
		if (th && v->dtop + (unsigned)rows / 2 < th->ndepth)
			v->dtop += (unsigned)rows / 2;
		return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
		v->lsel = v->thr;
		v->pane = PANE_THREADS;
		return true;
	}
	return false;
}

/* ----------------------------------------------------------- jumping */

static bool row_is(void *ctx, uint32_t row)
{
	return row == *(const uint32_t *)ctx;
}

static bool row_hit(void *ctx, uint32_t row)
{
	return view_row_matches(ctx, row);
}

/* Shows bar b of depth d: the window centred on it, twice its width
 * (the current width when that is narrower and holds it). */
static void show(struct view *v, const struct timeline_bar *b, unsigned d, bool keep_width)
{
	uint64_t w = (b->end - b->start) * 2, mid = b->start + (b->end - b->start) / 2;

	if (keep_width || w < 1000)
		w = keep_width ? v->t1 - v->t0 : 1000;
	place(v, mid, w);
	v->dtop = d > 2 ? d - 2 : 0;
}

bool vtime_jump_row(struct view *v, uint32_t row)
{
	size_t best = SIZE_MAX;
	uint64_t most = 0;
	const struct timeline_bar *b;
	unsigned d;

	for (size_t i = 0; i < timeline_nthreads(v->tl); i++) {
		const struct timeline_thread *th = timeline_thread(v->tl, i);
		uint64_t sum = 0;

		for (unsigned k = 0; k < th->ndepth; k++)
			for (size_t j = 0; j < th->lv[k].n; j++)
				if (th->lv[k].b[j].row == row)
					sum += th->lv[k].b[j].end - th->lv[k].b[j].start + 1;
		if (sum > most) {
			most = sum;
			best = i;
		}
	}
	if (best == SIZE_MAX)
		return false;
	v->thr = best;
	b = timeline_search(timeline_thread(v->tl, best), 0, false, row_is, &row, &d);
	if (b)
		show(v, b, d, false);
	v->pane = PANE_TIME;
	return true;
}

void vtime_search(struct view *v, bool backward)
{
	const struct timeline_thread *th = cur(v);
	uint64_t mid = v->t0 + (v->t1 - v->t0) / 2;
	const struct timeline_bar *b;
	unsigned d;

	if (!th)
		return;
	b = timeline_search(th, backward ? mid : mid + 1, backward, row_hit, v, &d);
	if (!b) {
		snprintf(v->msg, sizeof(v->msg), "no %s bar of this thread matches /%s/%s",
			 backward ? "earlier" : "later", v->pattern,
			 th->res_ns ? " (a merged bar goes by its longest call)" : "");
		return;
	}
	show(v, b, d, true);
}

void vtime_status(struct view *v, char *buf, size_t len)
{
	const struct timeline_thread *th = cur(v);

	snprintf(buf, len, "%" PRIu64 " slices on this thread, %zu bars held", th ? th->slices : 0,
		 (size_t)timeline_nbars(v->tl));
}

/* ------------------------------------------------------- thread list */

void vthreads_draw(struct view *v, int top, int rows, int cols)
{
	size_t n = timeline_nthreads(v->tl);
	char line[256], busy[32];

	if (rows < 2)
		return;
	attron(A_BOLD);
	view_put(top, 0, cols,
		 "       pid        tid      slices        busy  depth  (Enter: its timeline)");
	attroff(A_BOLD);
	if (v->lsel < v->ltop)
		v->ltop = v->lsel;
	if (v->lsel >= v->ltop + (size_t)rows - 1)
		v->ltop = v->lsel - (size_t)rows + 2;
	for (int i = 1; i < rows; i++) {
		size_t k = v->ltop + (size_t)i - 1;
		const struct timeline_thread *th;

		if (k >= n) {
			view_put(top + i, 0, cols, "");
			continue;
		}
		th = timeline_thread(v->tl, k);
		view_fmt_ns(busy, sizeof(busy), th->busy_ns);
		snprintf(line, sizeof(line), "%10" PRIu64 " %10" PRIu64 " %11" PRIu64 " %11s  %5u",
			 th->pid, th->tid, th->slices, busy, th->ndepth);
		if (k == v->lsel)
			attron(A_REVERSE);
		view_put(top + i, 0, cols, line);
		attrset(A_NORMAL);
	}
}

bool vthreads_key(struct view *v, int key, int rows)
{
	size_t n = timeline_nthreads(v->tl), page = rows > 2 ? (size_t)rows - 2 : 1;

	switch (key) {
	case KEY_UP:
	case 'k':
		if (v->lsel)
			v->lsel--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (v->lsel + 1 < n)
			v->lsel++;
		return true;
	case KEY_PPAGE:
		v->lsel = v->lsel > page ? v->lsel - page : 0;
		return true;
	case KEY_NPAGE:
		v->lsel = v->lsel + page < n ? v->lsel + page : (n ? n - 1 : 0);
		return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case ' ':
		if (n) {
			const struct timeline_thread *th = timeline_thread(v->tl, v->lsel);

			v->thr = v->lsel;
			v->pane = PANE_TIME;
			v->dtop = 0;
			/* its calls' span, with a margin */
			if (th->last_ns > th->first_ns)
				place(v, th->first_ns + (th->last_ns - th->first_ns) / 2,
				      (th->last_ns - th->first_ns) / 8 * 9 + 1);
		}
		return true;
	}
	return false;
}
