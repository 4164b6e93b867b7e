/* fxt-view's replay list: the items of every thread in time order
 * (callmerge.h; archive order for a gzip archive: callstream.h), as
 * fxt-replay prints them, read from the archive as the list is scrolled.  Bounded: a window of
 * VLIST_KEEP lines around what is shown is held; scrolling back before
 * it reads the archive again from its start (counting, not formatting,
 * the items before the window).  End and a search past the window first
 * count (and match) items without formatting them, then read again to
 * the place found: two passes at most, never a line formatted that is
 * not held. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/calls/callmerge.h"
#include "tools/calls/callstream.h"
#include "tools/front/common.h"
#include "tools/view/view.h"

#define VLIST_KEEP 4096

struct vline {
	char *text;  /* the line, without its newline */
	char *name;  /* the call's name, NUL-terminated, for the search */
};

struct vlist {
	const char *path;
	bool opened;
	/* The merge's pass runs on a thread of its own from the start, so
	 * that the view answers keys meanwhile: `ready` is set (release)
	 * when pm, prc and perr are final. */
	pthread_t worker;
	bool started;
	atomic_bool ready;
	struct callmerge *pm;
	int prc;
	char perr[256];
	struct callmerge *m;	/* time order; else archive order: */
	struct fxt_reader *r;
	struct callstream *cs;
	const char *order;	/* what the header says of the order */
	bool eof;
	char err[256];
	uint64_t seen;	   /* items given by the stream so far */
	uint64_t base;	   /* the index of line[0] */
	uint64_t skip_to;  /* items before it are counted only */
	/* counting: items are only counted, and with `find` matched: the
	 * first match from find_from on (or with back, the last before it)
	 * goes to found */
	bool counting, back;
	const regex_t *find;
	uint64_t find_from, found;
	char *name;
	size_t capname;
	struct vline *line;
	size_t n;
	uint64_t top, sel; /* indices of items */
};

static void drop_lines(struct vlist *l, size_t k)
{
	for (size_t i = 0; i < k && i < l->n; i++) {
		free(l->line[i].text);
		free(l->line[i].name);
	}
	if (k > l->n)
		k = l->n;
	memmove(l->line, l->line + k, (l->n - k) * sizeof(*l->line));
	l->n -= k;
	l->base += k;
}

static int on_item(void *ctx, const struct callstream_item *it)
{
	struct vlist *l = ctx;
	char buf[1024];
	uint64_t start;
	FILE *f;
	size_t len;

	if (callstream_log_copy(it))
		return 0;
	if (l->counting) {
		uint64_t i = l->seen++;

		if (!l->find)
			return 0;
		if (l->back && i >= l->find_from)
			return -ECANCELED;
		if ((l->back || i >= l->find_from) && TOOL_GROW(l->name, l->capname, it->name.len + 1) == 0) {
			memcpy(l->name, it->name.data, it->name.len);
			l->name[it->name.len] = 0;
			if (regexec(l->find, l->name, 0, NULL, 0) == 0) {
				l->found = i;
				if (!l->back)
					return -ECANCELED;
			}
		}
		return 0;
	}
	if (l->seen++ < l->skip_to) {
		l->base = l->seen;
		return 0;
	}
	if (l->n == VLIST_KEEP)
		drop_lines(l, VLIST_KEEP / 4);
	if (l->m)
		start = callmerge_start_ns(l->m);
	else
		callstream_start_ns(l->cs, &start);
	f = fmemopen(buf, sizeof(buf), "w");
	if (!f)
		return -ENOMEM;
	callstream_print(f, it, start);
	fclose(f);
	buf[sizeof(buf) - 1] = 0;
	len = strcspn(buf, "\n");
	buf[len] = 0;
	l->line[l->n].text = strdup(buf);
	l->line[l->n].name = strndup(it->name.data, it->name.len);
	if (!l->line[l->n].text || !l->line[l->n].name) {
		free(l->line[l->n].text);
		free(l->line[l->n].name);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static void close_stream(struct vlist *l)
{
	fxt_reader_free(l->r);
	callstream_free(l->cs);
	l->r = NULL;
	l->cs = NULL;
}

/* Reads the archive again from its start; the items before `from` are
 * counted, not kept.  The first time, the threads' cursors are made
 * (callmerge.h: one pass over the archive), or when the archive cannot be
 * mapped (gzip), the list is in archive order. */
static int restart(struct vlist *l, uint64_t from)
{
	int rc = 0;

	close_stream(l);
	drop_lines(l, l->n);
	l->eof = false;
	l->seen = l->base = 0;
	l->skip_to = from;
	if (!l->opened) {
		l->opened = true;
		l->order = "time order";
		if (l->started)
			pthread_join(l->worker, NULL);
		l->started = false;
		l->m = l->pm;
		rc = l->prc;
		snprintf(l->err, sizeof(l->err), "%s", rc < 0 ? l->perr : "");
		if (rc == -EMEDIUMTYPE) {
			l->order = "archive order: time order within a thread";
			*l->err = 0;
			rc = 0;
		}
	} else if (l->m) {
		rc = callmerge_rewind(l->m);
	}
	if (rc == 0 && !l->m) {
		rc = tool_open_archive(&l->r, l->path, FXT_READER_TIME_ORDER, l->err, sizeof(l->err));
		if (rc == 0)
			rc = callstream_new(&l->cs, on_item, l);
	}
	if (rc < 0) {
		if (!*l->err)
			snprintf(l->err, sizeof(l->err), "%s", strerror(-rc));
		l->eof = true;
	}
	return rc;
}

static void *merge_pass(void *arg)
{
	struct vlist *l = arg;

	l->prc = callmerge_open(&l->pm, l->path, l->perr, sizeof(l->perr));
	atomic_store_explicit(&l->ready, true, memory_order_release);
	return NULL;
}

bool vlist_busy(const struct vlist *l)
{
	return l->started && !atomic_load_explicit(&l->ready, memory_order_acquire);
}

int vlist_new(struct vlist **out, const char *path)
{
	struct vlist *l = calloc(1, sizeof(*l));

	if (!l || !(l->line = calloc(VLIST_KEEP, sizeof(*l->line)))) {
		free(l);
		return -ENOMEM;
	}
	l->path = path;
	l->order = "time order";
	if (strcmp(path, "-") == 0) {
		snprintf(l->err, sizeof(l->err),
			 "the replay list reads the archive again: not from standard input");
		l->eof = l->opened = true;
	} else if (pthread_create(&l->worker, NULL, merge_pass, l) == 0) {
		l->started = true;
	} else {
		l->prc = -EAGAIN;
		snprintf(l->perr, sizeof(l->perr), "cannot start a thread to read the archive");
		atomic_store(&l->ready, true);
	}
	*out = l;
	return 0;
}

void vlist_free(struct vlist *l)
{
	if (!l)
		return;
	if (l->started)
		pthread_join(l->worker, NULL); /* one pass at most */
	if (l->pm != l->m)
		callmerge_free(l->pm);
	close_stream(l);
	callmerge_free(l->m);
	drop_lines(l, l->n);
	free(l->line);
	free(l->name);
	free(l);
}

/* Gives on_item() what the next record (or the merge's next item) makes.
 * Returns 1, 0 at the end, or a negative errno (on_item()'s -ECANCELED
 * when a search found its match). */
static int pull(struct vlist *l)
{
	struct fxt_record rec;
	int rc;

	if (l->m) {
		const struct callstream_item *it;

		rc = callmerge_next(l->m, &it);
		return rc == 1 ? ((rc = on_item(l, it)) < 0 ? rc : 1) : rc;
	}
	rc = fxt_reader_next(l->r, &rec);
	if (rc == 1)
		return (rc = callstream_add_record(l->cs, l->r, &rec)) < 0 ? rc : 1;
	if (rc < 0) {
		uint64_t off = 0;
		const char *why = fxt_reader_error(l->r, &off);

		snprintf(l->err, sizeof(l->err), "%s at byte %" PRIu64, why ? why : "read error",
			 off);
	}
	rc = callstream_finish(l->cs);
	return rc < 0 ? rc : 0;
}

/* Reads until item `want` is held, or the end. */
static void fill(struct vlist *l, uint64_t want)
{
	int rc;

	if (want < l->base || !l->opened)
		restart(l, want > VLIST_KEEP / 2 && want < l->base ? want - VLIST_KEEP / 2 : 0);
	while (!l->eof && l->base + l->n <= want) {
		rc = pull(l);
		if (rc < 0 && !*l->err)
			snprintf(l->err, sizeof(l->err), "%s", strerror(-rc));
		if (rc <= 0)
			l->eof = true;
	}
}

/* Reads the whole archive (or up to the match) counting items: their
 * number, or with find the match (UINT64_MAX: none).  The stream is left
 * to restart(). */
static uint64_t scan(struct vlist *l, const regex_t *find, uint64_t from, bool back)
{
	restart(l, 0);
	l->counting = true;
	l->find = find;
	l->find_from = from;
	l->back = back;
	l->found = UINT64_MAX;
	while (!l->eof && pull(l) > 0)
		;
	l->counting = false;
	l->find = NULL;
	return find ? l->found : l->seen;
}

/* Holds the lines around item i (read again from the start). */
static void seek(struct vlist *l, uint64_t i)
{
	restart(l, i > VLIST_KEEP / 2 ? i - VLIST_KEEP / 2 : 0);
	fill(l, i);
}

/* Item i, or NULL past the end. */
static const struct vline *item(struct vlist *l, uint64_t i)
{
	fill(l, i);
	return i >= l->base && i < l->base + l->n ? &l->line[i - l->base] : NULL;
}

void vlist_draw(struct view *v, int top, int rows, int cols)
{
	struct vlist *l = v->list;
	char head[160];

	if (rows < 2)
		return;
	if (vlist_busy(l)) {
		view_put(top, 0, cols, "reading the archive once to merge the threads by time...");
		for (int i = 1; i < rows; i++)
			view_put(top + i, 0, cols, "");
		return;
	}
	fill(l, 0); /* opens the stream: its order is known then */
	snprintf(head, sizeof(head), "%16s %12s %7s | call (%s)", "time (s)", "duration", "tid",
		 l->order);
	attron(A_BOLD);
	view_put(top, 0, cols, head);
	attroff(A_BOLD);
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + (uint64_t)rows - 1)
		l->top = l->sel - (uint64_t)rows + 2;
	/* The window first, so that scrolling back restarts at most once. */
	item(l, l->top);
	item(l, l->top + (uint64_t)rows);
	for (int i = 1; i < rows; i++) {
		const struct vline *ln = item(l, l->top + (uint64_t)i - 1);

		if (!ln) {
			view_put(top + i, 0, cols, i == 1 && *l->err ? l->err : "");
			continue;
		}
		if (l->top + (uint64_t)i - 1 == l->sel)
			attron(A_REVERSE);
		else if (v->have_re && regexec(&v->re, ln->name, 0, NULL, 0) == 0)
			attron(v->colour ? COLOR_PAIR(COL_MATCH) : A_BOLD);
		view_put(top + i, 0, cols, ln->text);
		attrset(A_NORMAL);
	}
}

bool vlist_key(struct view *v, int key, int rows)
{
	struct vlist *l = v->list;
	uint64_t page = rows > 2 ? (uint64_t)rows - 2 : 1;

	if (vlist_busy(l))
		return key == KEY_UP || key == KEY_DOWN || key == KEY_PPAGE || key == KEY_NPAGE ||
		       key == KEY_HOME || key == KEY_END || key == 'j' || key == 'k' || key == 'g' ||
		       key == 'G';

	switch (key) {
	case KEY_UP:
	case 'k':
		if (l->sel)
			l->sel--;
		return true;
	case KEY_DOWN:
	case 'j':
		if (item(l, l->sel + 1))
			l->sel++;
		return true;
	case KEY_PPAGE:
		l->sel = l->sel > page ? l->sel - page : 0;
		return true;
	case KEY_NPAGE:
		for (uint64_t k = 0; k < page && item(l, l->sel + 1); k++)
			l->sel++;
		return true;
	case KEY_HOME:
	case 'g':
		l->sel = 0;
		return true;
	case KEY_END:
	case 'G': {
		uint64_t n = l->eof ? l->base + l->n : scan(l, NULL, 0, false);

		if (!l->eof || n > l->base + l->n || n < l->base)
			seek(l, n ? n - 1 : 0);
		l->sel = n ? n - 1 : 0;
		return true;
	}
	}
	return false;
}

void vlist_search(struct view *v, bool backward)
{
	struct vlist *l = v->list;
	uint64_t i, end = l->base + l->n;

	if (vlist_busy(l)) {
		snprintf(v->msg, sizeof(v->msg), "the list is not read yet");
		return;
	}
	/* the lines held first */
	if (backward) {
		for (i = l->sel; i-- > l->base;)
			if (i < end && regexec(&v->re, l->line[i - l->base].name, 0, NULL, 0) == 0) {
				l->sel = i;
				return;
			}
	} else {
		for (i = l->sel + 1; i < end; i++)
			if (regexec(&v->re, l->line[i - l->base].name, 0, NULL, 0) == 0) {
				l->sel = i;
				return;
			}
	}
	if (backward ? l->base == 0 : (l->eof && !l->counting)) {
		snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/", backward ? "earlier" : "later",
			 v->pattern);
		return;
	}
	/* then the archive, counting: before the lines held, or after */
	i = scan(l, &v->re, backward ? l->base : end, backward);
	seek(l, i == UINT64_MAX ? l->sel : i);
	if (i == UINT64_MAX) {
		snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/", backward ? "earlier" : "later",
			 v->pattern);
		return;
	}
	l->sel = i;
}

void vlist_status(struct view *v, char *buf, size_t len)
{
	struct vlist *l = v->list;

	if (vlist_busy(l)) {
		snprintf(buf, len, "reading the archive for time order");
		return;
	}
	snprintf(buf, len, "item %" PRIu64 "%s", l->sel + 1, l->eof ? "" : " (reading on)");
}
