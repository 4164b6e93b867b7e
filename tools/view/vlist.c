/* fxt-view's replay list: the items of every thread in time order
 * (callmerge.h, plain, gzip or zstd; archive order, callstream.h, were
 * the merge refused the archive), as
 * fxt-replay prints them, read from the archive as the list is scrolled.
 * Bounded: a window of VLIST_KEEP lines around what is shown is held.
 *
 * In time order, a thread of its own reads the archive once after the
 * merge's first pass and keeps an index (vindex.c): a mark of the merge
 * (callmerge_mark()) every `step` items, at most VLIST_INDEX_BYTES of
 * them (past that, every other mark goes and the step doubles).  Going
 * anywhere (End, back before the window, a match) resumes the merge at
 * the nearest mark before the place and reads at most a step of items,
 * counting them, then the window's lines.  End before the index is
 * complete waits for it without holding the keys (the status line says
 * how far it is).  A search past the lines held runs on a fork of the
 * merge, a slice of ~30 ms between keys, from the mark before the place
 * (backward: the stretches between marks, the nearest first), skipping
 * the stretches where no matching name occurs once the index is
 * complete; Esc stops it.
 *
 * In archive order there is no index: scrolling back before the
 * window reads the archive again from its start, and End and a search
 * past the window first count (and match) items without formatting them,
 * then read again to the place found: two passes at most, the keys held
 * meanwhile. */
#include "config.h"

#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/front/common.h"
#include "tools/view/view.h"
#include "tools/view/vlist.h"

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
		if ((l->back || i >= l->find_from) &&
		    TOOL_GROW(l->name, l->capname, it->name.len + 1) == 0) {
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
 * merged (-EMEDIUMTYPE), the list is in archive order. */
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
		rc = tool_open_archive(&l->r, l->path, FXT_READER_TIME_ORDER, l->err,
				       sizeof(l->err));
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
	l->step = VLIST_FIRST_STEP;
	pthread_mutex_init(&l->lock, NULL);
	if (strcmp(path, "-") == 0) {
		snprintf(l->err, sizeof(l->err),
			 "the replay list reads the archive again: not from standard input");
		l->eof = l->opened = true;
	} else if (pthread_create(&l->worker, NULL, vindex_worker, l) == 0) {
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
	atomic_store(&l->stop, true);
	if (l->started)
		pthread_join(l->worker, NULL); /* one pass at most, or a step of the index */
	vindex_free(l);
	pthread_mutex_destroy(&l->lock);
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

/* Holds the lines from `from` on, from the nearest mark before it, if it
 * is behind the lines held or past them by more than a step (time order
 * only); false when nothing was done. */
static bool jump(struct vlist *l, uint64_t from)
{
	uint64_t end = l->base + l->n;
	int64_t at;

	if (!l->m || (from >= l->base && from <= end + VLIST_KEEP))
		return false;
	if (from > end) {
		bool closer;

		pthread_mutex_lock(&l->lock);
		closer = vindex_mark_before(l, from) && vindex_mark_before(l, from)->item > end;
		pthread_mutex_unlock(&l->lock);
		if (!closer) { /* read on, counting up to it */
			drop_lines(l, l->n);
			l->skip_to = from;
			return true;
		}
	}
	drop_lines(l, l->n);
	at = vindex_resume_before(l, l->m, from);
	if (at < 0) {
		snprintf(l->err, sizeof(l->err), "%s", strerror((int)-at));
		l->eof = true;
		return true;
	}
	l->eof = false;
	l->seen = l->base = (uint64_t)at;
	l->skip_to = from;
	return true;
}

/* Reads until item `want` is held, or the end. */
static void fill(struct vlist *l, uint64_t want)
{
	uint64_t from = want > VLIST_KEEP / 2 ? want - VLIST_KEEP / 2 : 0;
	int rc;

	if (!l->opened)
		restart(l, 0);
	else if ((want < l->base || want > l->base + l->n + VLIST_KEEP) && !jump(l, from) &&
		 want < l->base)
		restart(l, from);
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

/* Holds the lines around item i (from the nearest mark, else read again
 * from the start). */
static void seek(struct vlist *l, uint64_t i)
{
	uint64_t from = i > VLIST_KEEP / 2 ? i - VLIST_KEEP / 2 : 0;

	if (!jump(l, from) && (from < l->base || (!l->m && from > l->base + l->n)))
		restart(l, from);
	fill(l, i);
}

/* Whether End and searches go by the index (time order, not failed). */
static bool by_index(const struct vlist *l)
{
	return l->m && !atomic_load(&l->idx_failed);
}

static void go_end(struct vlist *l)
{
	uint64_t n = l->total;

	seek(l, n ? n - 1 : 0);
	l->sel = n ? n - 1 : 0;
}

/* End in archive order: the items counted, then read again up to the
 * last (two passes at most, the keys held). */
static void end_scan(struct vlist *l)
{
	uint64_t n = l->eof ? l->base + l->n : scan(l, NULL, 0, false);

	if (!l->eof || n > l->base + l->n || n < l->base)
		seek(l, n ? n - 1 : 0);
	l->sel = n ? n - 1 : 0;
}

/* An End pressed while the list could not go there, once it can. */
static void end_now(struct vlist *l)
{
	l->want_end = false;
	if (by_index(l))
		go_end(l);
	else
		end_scan(l);
	l->end_waited = view_now_s() - l->want_end_s;
}

double vlist_end_waited(struct vlist *l)
{
	double s = l ? l->end_waited : 0;

	if (l)
		l->end_waited = 0;
	return s;
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

	if (vlist_busy(l)) {
		/* End is kept for when the list can go there (vlist_tick()) */
		if (key == KEY_END || key == 'G') {
			l->want_end = true;
			l->want_end_s = view_now_s();
			l->want_go = false;
		} else if (key == KEY_HOME || key == 'g' || key == 27) {
			l->want_end = l->want_go = false;
		}
		return key == KEY_UP || key == KEY_DOWN || key == KEY_PPAGE || key == KEY_NPAGE ||
		       key == KEY_HOME || key == KEY_END || key == 'j' || key == 'k' ||
		       key == 'g' || key == 'G' || key == 27;
	}

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
	case 27: /* Escape */
		if (l->searching || l->want_end)
			snprintf(v->msg, sizeof(v->msg), "%s stopped",
				 !l->searching ? "going to the end"
				 : l->sgo      ? "going to the time"
					       : "search");
		l->searching = l->want_end = false;
		return true;
	case KEY_END:
	case 'G':
		if (by_index(l)) {
			if (atomic_load_explicit(&l->indexed, memory_order_acquire)) {
				go_end(l);
			} else { /* vlist_tick() goes there */
				l->want_end = true;
				l->want_end_s = view_now_s();
			}
			return true;
		}
		end_scan(l);
		return true;
	}
	return false;
}

bool vlist_tick(struct view *v)
{
	struct vlist *l = v->list;
	uint64_t i;

	if (!l)
		return false;
	/* End pressed while the merge's pass or the index ran */
	if ((l->want_end || l->want_go) && !vlist_busy(l) && !l->opened)
		fill(l, 0); /* the order known (the merge, or archive order) */
	if (l->want_go && !vlist_busy(l)) {
		l->want_go = false;
		vlist_goto(v, &l->want_w);
	}
	if (l->want_end && !vlist_busy(l) &&
	    (!by_index(l) || atomic_load_explicit(&l->indexed, memory_order_acquire)))
		end_now(l);
	if (!l->searching)
		return false;
	i = vindex_search_slice(l);
	if (i == UINT64_MAX)
		return true;
	l->searching = false;
	if (i == UINT64_MAX - 1 && l->sgo && l->sidx) {
		snprintf(v->msg, sizeof(v->msg), "no call at that time or later: the last one");
		i = l->sidx - 1;
	} else if (i == UINT64_MAX - 1) {
		snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/",
			 l->sback ? "earlier" : "later", v->pattern);
		return false;
	}
	seek(l, i);
	l->sel = i;
	return false;
}

int vlist_wait_ms(const struct vlist *l)
{
	if (!l)
		return -1;
	if (l->searching)
		return 0;
	if (vlist_busy(l) || l->want_end ||
	    (l->started && !atomic_load(&l->indexed) && !atomic_load(&l->idx_failed)))
		return 250;
	return -1;
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
			if (i < end &&
			    regexec(&v->re, l->line[i - l->base].name, 0, NULL, 0) == 0) {
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
		snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/",
			 backward ? "earlier" : "later", v->pattern);
		return;
	}
	if (by_index(l)) {
		if (!vindex_search_start(l, &v->re, backward, backward ? l->base : end) && !*l->err)
			snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/",
				 backward ? "earlier" : "later", v->pattern);
		return;
	}
	/* then the archive, counting: before the lines held, or after */
	i = scan(l, &v->re, backward ? l->base : end, backward);
	seek(l, i == UINT64_MAX ? l->sel : i);
	if (i == UINT64_MAX) {
		snprintf(v->msg, sizeof(v->msg), "no %s call matches /%s/",
			 backward ? "earlier" : "later", v->pattern);
		return;
	}
	l->sel = i;
}

void vlist_goto(struct view *v, const struct callstream_when *w)
{
	struct vlist *l = v->list;

	if (vlist_busy(l)) { /* vlist_tick() goes there */
		l->want_go = true;
		l->want_end = false;
		l->want_w = *w;
		return;
	}
	if (!by_index(l)) {
		snprintf(v->msg, sizeof(v->msg), "going to a time needs the list in time order%s",
			 l->m ? " (its index failed)" : ", not the archive's");
		return;
	}
	vindex_goto_start(l, callstream_when_ns(w, callmerge_start_ns(l->m)));
}

void vlist_status(struct view *v, char *buf, size_t len)
{
	struct vlist *l = v->list;

	if (vlist_busy(l)) {
		snprintf(buf, len, "reading for time order%s",
			 l->want_end  ? ", then End (Esc: stay)"
			 : l->want_go ? ", then : (Esc: stay)"
				      : "");
		return;
	}
	if (l->searching) {
		uint64_t t0 = callmerge_start_ns(l->m), span = callmerge_end_ns(l->m) - t0 + 1;
		unsigned pc = l->sback
				  ? (unsigned)(100 - (unsigned __int128)l->slo * 100 / l->sfrom)
				  : (unsigned)((unsigned __int128)(l->sts > t0 ? l->sts - t0 : 0) *
					       100 / span);

		if (l->sgo)
			snprintf(buf, len, "going to the time: %u%% (Esc stops)", pc);
		else
			snprintf(buf, len, "searching /%s/%s: %u%% (Esc stops)", v->pattern,
				 l->sback ? " backward" : "", pc);
		return;
	}
	if (by_index(l) && atomic_load_explicit(&l->indexed, memory_order_acquire))
		snprintf(buf, len, "item %" PRIu64 " of %" PRIu64, l->sel + 1, l->total);
	else if (by_index(l))
		snprintf(buf, len, "item %" PRIu64 ", indexing %u%%%s", l->sel + 1,
			 atomic_load(&l->progress) / 10,
			 l->want_end ? ", then End (Esc: stay)" : "");
	else
		snprintf(buf, len, "item %" PRIu64 "%s", l->sel + 1, l->eof ? "" : " (reading on)");
}
