/* fxt-view's state, shared by its panes: the call tree (vtree.c), the
 * timeline and the thread list (vtime.c), the replay list (vlist.c), and
 * the frame around them (fxt-view.c: the header, the status line, help,
 * the keys every pane shares).  Private to tools/view/.
 *
 * Each pane draws the lines [top, top + rows) of the screen and takes the
 * keys the frame does not; drawing goes through ncurses only here, so
 * that the engines below (calltree, timeline, callstream) stay testable
 * without a terminal. */
#ifndef FXT_TOOLS_VIEW_VIEW_H
#define FXT_TOOLS_VIEW_VIEW_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/calls/callstream.h"
#include "tools/calls/calltree.h"
#include "tools/view/timeline.h"

enum view_pane { PANE_TREE, PANE_TIME, PANE_THREADS, PANE_LIST, NPANES };

/* Colour pairs (only with has_colors()). */
enum { COL_BAR = 1, /* 1..6: bars by function */
       COL_HEAD = 7,
       COL_STATUS,
       COL_MATCH,
       COL_MERGED };
#define VIEW_BAR_COLOURS 6

struct vlist;
struct vload;

struct view {
	const char *path;
	struct calltree *tree;
	struct timeline *tl;
	struct vload *load; /* the pass that fills tree and tl (vload.c) */
	bool colour;
	enum view_pane pane;
	char msg[256]; /* a one-off message on the status line */

	/* search: the last pattern, and per profile row whether it matches
	 * (0 unknown, 1 yes, 2 no) */
	regex_t re;
	bool have_re;
	char pattern[128];
	uint8_t *rowmatch;
	size_t nrows;

	/* tree pane */
	uint8_t *open;	 /* per node: unfolded */
	size_t nopen;	 /* the nodes `open` covers (the others not shown yet) */
	uint32_t *vis;	 /* the nodes shown, in order */
	size_t nvis, capvis;
	uint32_t *order; /* every node, depth first (search order) */
	size_t norder, caporder;
	bool order_ok;	 /* order holds every node of nopen */
	size_t tsel, ttop;

	/* timeline pane */
	size_t thr;	    /* the thread shown */
	uint64_t t0, t1;    /* the window (ns) */
	uint64_t w0, w1;    /* the window whole() set last */
	unsigned dtop;	    /* first depth shown */
	size_t lsel, ltop;  /* thread list */

	/* replay list */
	struct vlist *list;
};

/* Whether the profile row's function matches the search (cached). */
bool view_row_matches(struct view *v, uint32_t row);

/* The pass over the archive (vload.c): the tree and the timeline filled
 * on a thread of its own, which hands them to the frame between two
 * slices.  The frame holds them between view_lock() and view_unlock()
 * (every pane's drawing and keys run so; a wait for a key not);
 * view_lock() also catches up with what the pass added (vtree_sync(),
 * vtime_sync()).  vload_wait() waits until the pass ends or `s` seconds
 * (s < 0: until it ends) and tells whether it ended; vload_result() its
 * result once ended (0 before), err the one-line reason; vload_free()
 * false (nothing freed: the tree and timeline neither) while it runs. */
int vload_start(struct view *v, const struct calltree_opts *o);
bool vload_wait(struct view *v, double s);
bool vload_busy(const struct view *v);
double vload_seconds(const struct view *v);
int vload_result(const struct view *v, const char **err);
bool vload_free(struct view *v);
void view_lock(struct view *v);
void view_unlock(struct view *v);

/* The status line's own text for a pane (its position), and drawing.
 * vtree_sync() takes in the nodes the pass added (and with `end`, the
 * tree's final order); vtime_sync() keeps the timeline's window on the
 * whole trace, while it is, as the pass reads on. */
void vtree_sync(struct view *v, bool end);
void vtree_draw(struct view *v, int top, int rows, int cols);
bool vtree_key(struct view *v, int key, int rows);
void vtree_search(struct view *v, bool backward);
void vtree_status(struct view *v, char *buf, size_t len);
uint32_t vtree_selected(const struct view *v);

void vtime_sync(struct view *v);
void vtime_draw(struct view *v, int top, int rows, int cols);
bool vtime_key(struct view *v, int key, int rows, int cols);
void vtime_search(struct view *v, bool backward);
void vtime_status(struct view *v, char *buf, size_t len);
/* Shows the thread where the function of profile row `row` takes the
 * most time, its window on that function's first bar; false if none. */
bool vtime_jump_row(struct view *v, uint32_t row);
void vthreads_draw(struct view *v, int top, int rows, int cols);
bool vthreads_key(struct view *v, int key, int rows);

/* The list starts reading the archive on a thread of its own at once (the
 * merge by time's pass); vlist_busy() while it does.  The frame makes it
 * when the tree's pass has ended, or sooner when the list is shown. */
int vlist_new(struct vlist **l, const char *path);
bool vlist_busy(const struct vlist *l);
/* The list's work between keys: End waiting for the index, a slice of a
 * search (VLIST_SLICE_S); true while a search goes on.  vlist_wait_ms():
 * how long the frame may wait for a key (-1: no work left). */
bool vlist_tick(struct view *v);
int vlist_wait_ms(const struct vlist *l);
/* An End pressed before the list could go there, once it went: the
 * seconds from the key (FXT_VIEW_KEYLOG's "end" line), once; else 0. */
double vlist_end_waited(struct vlist *l);
void vlist_free(struct vlist *l);
void vlist_draw(struct view *v, int top, int rows, int cols);
bool vlist_key(struct view *v, int key, int rows);
void vlist_search(struct view *v, bool backward);
void vlist_status(struct view *v, char *buf, size_t len);
/* ':' in the panes: the list selects the first call at the time or
 * later (a search of its own, in slices); the timeline's window starts
 * there (its width kept). */
void vlist_goto(struct view *v, const struct callstream_when *w);
void vtime_goto(struct view *v, const struct callstream_when *w);

/* CLOCK_MONOTONIC in seconds. */
double view_now_s(void);

/* Formats ns as tool_fmt_ns() does. */
void view_fmt_ns(char *buf, size_t len, uint64_t ns);

/* Draws s at (y, x), at most w cells, the rest up to w with blanks. */
void view_put(int y, int x, int w, const char *s);

#endif /* FXT_TOOLS_VIEW_VIEW_H */
