/* fxt-view's call tree pane: calltree.h's nodes, folded and unfolded, one
 * line each (calls, total, self, share, the indented name); search over
 * every node, depth first, unfolding the path to a match. */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/view/view.h"

/* The single group of a tree by function is not a line: its children are
 * the roots. */
static bool hidden_group(const struct view *v, const struct calltree_node *n)
{
	const uint32_t *g;

	return n->row == CALLTREE_GROUP && calltree_groups(v->tree, &g) == 1 && !n->pid && !n->tid;
}

/* Appends the nodes below x (x too unless hidden) to *out, depth first;
 * only through unfolded nodes when `folded`; not the nodes the pass added
 * since the last vtree_sync(). */
static void walk(struct view *v, uint32_t x, bool folded, uint32_t **out, size_t *n, size_t *cap)
{
	uint32_t *stack = NULL;
	size_t ns = 0, caps = 0;

	if (x >= v->nopen || TOOL_GROW(stack, caps, 1) < 0)
		return;
	stack[ns++] = x;
	while (ns) {
		const struct calltree_node *nd;
		uint32_t y = stack[--ns], c;
		size_t k = 0;

		nd = calltree_node(v->tree, y);
		if (!hidden_group(v, nd)) {
			if (TOOL_GROW(*out, *cap, *n + 1) < 0)
				break;
			(*out)[(*n)++] = y;
			if (folded && !v->open[y])
				continue;
		}
		/* children pushed in reverse, so that the first comes out first */
		for (c = nd->first_child; c != CALLTREE_NONE;
		     c = calltree_node(v->tree, c)->next_sibling)
			k += c < v->nopen;
		if (TOOL_GROW(stack, caps, ns + k) < 0)
			break;
		ns += k;
		k = ns; /* the first child on top: popped first */
		for (c = nd->first_child; c != CALLTREE_NONE;
		     c = calltree_node(v->tree, c)->next_sibling)
			if (c < v->nopen)
				stack[--k] = c;
	}
	free(stack);
}

static void rebuild(struct view *v)
{
	const uint32_t *g;
	size_t ng = calltree_groups(v->tree, &g);
	uint32_t keep = v->nvis ? v->vis[v->tsel] : CALLTREE_NONE;

	v->nvis = 0;
	for (size_t i = 0; i < ng; i++)
		walk(v, g[i], true, &v->vis, &v->nvis, &v->capvis);
	v->tsel = 0;
	for (size_t i = 0; keep != CALLTREE_NONE && i < v->nvis; i++)
		if (v->vis[i] == keep)
			v->tsel = i;
}

void vtree_sync(struct view *v, bool end)
{
	size_t n = calltree_nnodes(v->tree);

	if (n > v->nopen) {
		uint8_t *o = realloc(v->open, n);

		if (!o) {
			snprintf(v->msg, sizeof(v->msg), "out of memory: %zu paths not shown",
				 n - v->nopen);
			return;
		}
		v->open = o;
		for (size_t i = v->nopen; i < n; i++)
			o[i] = calltree_node(v->tree, (uint32_t)i)->depth <= 1;
		v->nopen = n;
	} else if (!end) {
		return;
	}
	v->order_ok = false;
	rebuild(v);
}

/* Every node, depth first, in v->order (for the search). */
static void make_order(struct view *v)
{
	const uint32_t *g;
	size_t ng = calltree_groups(v->tree, &g);

	if (v->order_ok)
		return;
	v->norder = 0;
	for (size_t i = 0; i < ng; i++)
		walk(v, g[i], false, &v->order, &v->norder, &v->caporder);
	v->order_ok = true;
}

uint32_t vtree_selected(const struct view *v)
{
	return v->nvis ? v->vis[v->tsel] : CALLTREE_NONE;
}

static void put_line(struct view *v, int y, int cols, uint32_t x, bool sel)
{
	const struct calltree_node *n = calltree_node(v->tree, x);
	uint64_t all = calltree_total_ns(v->tree);
	char tot[32], self[32], line[512], share[16];
	int w;

	if (n->row == CALLTREE_GROUP) {
		snprintf(line, sizeof(line), "%s %" PRIu64 "  %" PRIu64 " calls",
			 n->tid ? "thread" : "process", n->tid ? n->tid : n->pid, n->calls);
	} else {
		bool kids = n->first_child != CALLTREE_NONE;
		unsigned depth = n->depth ? n->depth - 1 : 0;

		view_fmt_ns(tot, sizeof(tot), n->total_ns);
		view_fmt_ns(self, sizeof(self), n->self_ns);
		snprintf(share, sizeof(share), "%.1f%%",
			 all ? 100.0 * (double)n->total_ns / (double)all : 0);
		w = snprintf(line, sizeof(line), "%8" PRIu64 " %11s %11s %6s  %*s%s %s%s", n->calls,
			     tot, self, share, (int)(2 * (depth > 30 ? 30 : depth)), "",
			     !kids	  ? " "
			     : v->open[x] ? "-"
					  : "+",
			     calltree_name(v->tree, n), n->recursive ? " [recursive]" : "");
		if (n->open && w > 0 && (size_t)w < sizeof(line))
			snprintf(line + w, sizeof(line) - (size_t)w, " [%" PRIu64 " open]",
				 n->open);
	}
	if (sel)
		attron(A_REVERSE);
	else if (n->row != CALLTREE_GROUP && v->have_re && view_row_matches(v, n->row))
		attron(v->colour ? COLOR_PAIR(COL_MATCH) : A_BOLD);
	view_put(y, 0, cols, line);
	attrset(A_NORMAL);
}

void vtree_draw(struct view *v, int top, int rows, int cols)
{
	if (rows < 2)
		return;
	attron(A_BOLD);
	/* While the pass reads, said in full where it fits (69 columns). */
	view_put(top, 0, cols,
		 !vload_busy(v) ? "   calls       total        self  share  call path"
		 : cols >= 69
		     ? "   calls       total        self  share  (reading: the totals so far)"
		     : "   calls       total        self  share  (so far)");
	attroff(A_BOLD);
	top++;
	rows--;
	if (v->tsel < v->ttop)
		v->ttop = v->tsel;
	if (v->tsel >= v->ttop + (size_t)rows)
		v->ttop = v->tsel - (size_t)rows + 1;
	for (int i = 0; i < rows; i++) {
		size_t k = v->ttop + (size_t)i;

		if (k < v->nvis)
			put_line(v, top + i, cols, v->vis[k], k == v->tsel);
		else
			view_put(top + i, 0, cols, "");
	}
}

static void set_all(struct view *v, bool open)
{
	for (size_t i = 0; i < v->nopen; i++)
		v->open[i] = open || calltree_node(v->tree, (uint32_t)i)->row == CALLTREE_GROUP;
	rebuild(v);
}

bool vtree_key(struct view *v, int key, int rows)
{
	uint32_t x = vtree_selected(v);
	const struct calltree_node *n = x == CALLTREE_NONE ? NULL : calltree_node(v->tree, x);
	size_t page = rows > 2 ? (size_t)rows - 2 : 1;

	switch (key) {
	case KEY_UP:
	case 'k':
		if (v->tsel)
			v->tsel--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (v->tsel + 1 < v->nvis)
			v->tsel++;
		return true;
	case KEY_PPAGE:
		v->tsel = v->tsel > page ? v->tsel - page : 0;
		return true;
	case KEY_NPAGE:
		v->tsel = v->tsel + page < v->nvis ? v->tsel + page : (v->nvis ? v->nvis - 1 : 0);
		return true;
	case KEY_HOME:
	case 'g':
		v->tsel = 0;
		return true;
	case KEY_END:
	case 'G':
		v->tsel = v->nvis ? v->nvis - 1 : 0;
		return true;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case ' ':
		if (n && n->first_child != CALLTREE_NONE) {
			v->open[x] = !v->open[x];
			rebuild(v);
		}
		return true;
	case KEY_RIGHT:
	case 'l':
		if (n && n->first_child != CALLTREE_NONE) {
			if (!v->open[x]) {
				v->open[x] = 1;
				rebuild(v);
			} else if (v->tsel + 1 < v->nvis) {
				v->tsel++;
			}
		}
		return true;
	case KEY_LEFT:
	case 'h':
		if (n && n->first_child != CALLTREE_NONE && v->open[x]) {
			v->open[x] = 0;
			rebuild(v);
		} else if (n && n->parent != CALLTREE_NONE) {
			for (size_t i = v->tsel; i-- > 0;)
				if (v->vis[i] == n->parent) {
					v->tsel = i;
					break;
				}
		}
		return true;
	case '+':
		set_all(v, true);
		return true;
	case '-':
		set_all(v, false);
		return true;
	case 't':
		if (n && n->row != CALLTREE_GROUP && !vtime_jump_row(v, n->row))
			snprintf(v->msg, sizeof(v->msg), "no slice of %s on the timeline",
				 calltree_name(v->tree, n));
		return true;
	}
	return false;
}

void vtree_search(struct view *v, bool backward)
{
	uint32_t cur = vtree_selected(v);
	size_t at = 0, k;

	make_order(v);
	if (!v->norder)
		return;
	for (size_t i = 0; i < v->norder; i++)
		if (v->order[i] == cur)
			at = i;
	for (size_t step = 1; step <= v->norder; step++) {
		const struct calltree_node *n;

		k = backward ? (at + v->norder - step % v->norder) % v->norder
			     : (at + step) % v->norder;
		n = calltree_node(v->tree, v->order[k]);
		if (n->row == CALLTREE_GROUP || !view_row_matches(v, n->row))
			continue;
		for (uint32_t a = n->parent; a != CALLTREE_NONE;
		     a = calltree_node(v->tree, a)->parent)
			v->open[a] = 1;
		v->nvis = 0; /* select the match, not the old line */
		rebuild(v);
		for (size_t i = 0; i < v->nvis; i++)
			if (v->vis[i] == v->order[k])
				v->tsel = i;
		if ((backward && k > at) || (!backward && k < at))
			snprintf(v->msg, sizeof(v->msg), "search wrapped");
		return;
	}
	snprintf(v->msg, sizeof(v->msg), "no function matches /%s/", v->pattern);
}

void vtree_status(struct view *v, char *buf, size_t len)
{
	snprintf(buf, len, "line %zu/%zu, %zu paths", v->nvis ? v->tsel + 1 : 0, v->nvis,
		 calltree_nnodes(v->tree));
}
