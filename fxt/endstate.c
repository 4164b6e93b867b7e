/* The end state (include/fxt/endstate.h), the writer's side: the places
 * its caller hands it, each thread's last two, and the state made from
 * them at the archive's end (the reader's side: endstate_read.c).
 *
 * The writer follows no record: the caller (fxt-run's converter, which
 * keeps each thread's open calls anyway) says, now and then, where a
 * thread stands before the next record written (its calls with children
 * open there, the call held back, the latest time of its items before);
 * the writer adds its string and thread tables as they are then, and the
 * offset.  The state gives, for each thread, the place before its last
 * (a reader decodes from there), or its last when it has one only.  The
 * items before a place are not counted (the state's count says
 * FXT_END_ITEMS_UNKNOWN): the reader numbers the last items once its own
 * index is complete. */
#include "config.h"

#include "fxt/endstate_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/endstate.h>
#include <fxt/format.h>

#include "common/grow.h"
#include "fxt/writer_int.h"

struct es_snap {
	unsigned char *buf;
	size_t len, cap;
};

struct es_thr {
	uint64_t pid, tid;
	uint64_t first_ns, last_ns, last_off;
	bool ended;
	struct es_snap cur, prev;
};

struct fxt__es {
	bool bad;
	bool head_set;
	uint64_t head_end;
	struct es_thr *thr;
	size_t nthr, capthr;
};

int fxt__es_new(struct fxt__es **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fxt__es_free(struct fxt__es *es)
{
	if (!es)
		return;
	for (size_t i = 0; i < es->nthr; i++) {
		free(es->thr[i].cur.buf);
		free(es->thr[i].prev.buf);
	}
	free(es->thr);
	free(es);
}

void fxt__es_spoil(struct fxt__es *es)
{
	es->bad = true;
}

void fxt__es_head(struct fxt__es *es, uint64_t off)
{
	if (!es->head_set) {
		es->head_end = off;
		es->head_set = true;
	}
}

static struct es_thr *thread_of(struct fxt__es *es, uint64_t pid, uint64_t tid)
{
	/* places are rare (a few a thread): a search is enough */
	for (size_t i = es->nthr; i-- > 0;)
		if (es->thr[i].pid == pid && es->thr[i].tid == tid)
			return &es->thr[i];
	if (fxt__grow((void **)&es->thr, &es->capthr, es->nthr + 1, sizeof(*es->thr)) < 0) {
		es->bad = true;
		return NULL;
	}
	memset(&es->thr[es->nthr], 0, sizeof(es->thr[0]));
	es->thr[es->nthr].pid = pid;
	es->thr[es->nthr].tid = tid;
	return &es->thr[es->nthr++];
}

/* ------------------------------------------------------ serialization */

static int put(struct es_snap *s, const void *p, size_t n)
{
	if (fxt__grow((void **)&s->buf, &s->cap, s->len + n, 1) < 0)
		return -ENOMEM;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

static int put64(struct es_snap *s, uint64_t v)
{
	return put(s, &v, 8);
}

static int put_str(struct es_snap *s, const char *p, uint32_t len)
{
	return put(s, &len, 4) < 0 ? -ENOMEM : put(s, p, len);
}

/* The writer's tables now: its strings (in index order), its threads. */
static int put_tables(struct es_snap *s, const struct fxt_writer *w)
{
	const struct strtab *st = &w->cur->st;
	const struct thrtab *tt = &w->cur->tt;
	uint64_t n = 0;

	for (uint32_t i = 1; i < st->cap; i++)
		n += st->ent[i].data != NULL;
	if (put64(s, n) < 0)
		return -ENOMEM;
	for (uint32_t i = 1; i < st->cap; i++)
		if (st->ent[i].data &&
		    (put64(s, i) < 0 || put_str(s, st->ent[i].data, st->ent[i].len) < 0))
			return -ENOMEM;
	n = 0;
	for (unsigned i = 1; i < THREAD_SLOTS; i++)
		n += tt->ent[i].gen != 0;
	if (put64(s, n) < 0)
		return -ENOMEM;
	for (unsigned i = 1; i < THREAD_SLOTS; i++)
		if (tt->ent[i].gen && (put64(s, i) < 0 || put64(s, tt->ent[i].pid) < 0 ||
				       put64(s, tt->ent[i].tid) < 0))
			return -ENOMEM;
	return 0;
}

int fxt__es_place(struct fxt__es *es, const struct fxt_writer *w, uint64_t pid, uint64_t tid,
		  uint64_t at, const struct fxt_end_frame *f, size_t n, bool held, uint64_t max_ts,
		  uint64_t last_ns)
{
	struct es_snap s = { 0 };
	struct es_thr *t;

	if (es->bad)
		return 0;
	if (!(t = thread_of(es, pid, tid)))
		return -ENOMEM;
	if (put64(&s, pid) < 0 || put64(&s, tid) < 0 || put64(&s, at) < 0 || put64(&s, 0) < 0 ||
	    put64(&s, max_ts != 0) < 0 || put64(&s, max_ts) < 0 || put64(&s, last_ns) < 0 ||
	    put64(&s, held) < 0 || put64(&s, n) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (put64(&s, f[i].begin) < 0 || put64(&s, f[i].ts) < 0 ||
		    put64(&s, f[i].end) < 0 || put_str(&s, f[i].category, f[i].category_len) < 0 ||
		    put_str(&s, f[i].name, f[i].name_len) < 0)
			goto nomem;
	if (put_tables(&s, w) < 0)
		goto nomem;
	free(t->prev.buf);
	t->prev = t->cur;
	t->cur = s;
	return 0;
nomem:
	free(s.buf);
	es->bad = true;
	return -ENOMEM;
}

int fxt__es_thread_end(struct fxt__es *es, uint64_t pid, uint64_t tid, uint64_t first_ns,
		       uint64_t last_ns, uint64_t last_off)
{
	struct es_thr *t;

	if (es->bad)
		return 0;
	if (!(t = thread_of(es, pid, tid)))
		return -ENOMEM;
	if (!t->ended || first_ns < t->first_ns)
		t->first_ns = first_ns;
	if (!t->ended || last_ns > t->last_ns)
		t->last_ns = last_ns;
	if (!t->ended || last_off > t->last_off)
		t->last_off = last_off;
	t->ended = true;
	return 0;
}

/* A place's offset (its third word) moved by shift. */
static void snap_shift(struct es_snap *sn, uint64_t shift)
{
	uint64_t at;

	if (sn->len >= 24) {
		memcpy(&at, sn->buf + 16, 8);
		at += shift;
		memcpy(sn->buf + 16, &at, 8);
	}
}

int fxt__es_adopt(struct fxt__es *es, struct fxt__es *from, uint64_t shift)
{
	int rc = 0;

	if (from->bad)
		es->bad = true;
	for (size_t i = 0; i < from->nthr && !es->bad; i++) {
		struct es_thr *f = &from->thr[i], *t = thread_of(es, f->pid, f->tid);

		if (!t) {
			rc = -ENOMEM;
			break;
		}
		if (f->cur.buf) {
			snap_shift(&f->cur, shift);
			snap_shift(&f->prev, shift);
			free(t->cur.buf);
			free(t->prev.buf);
			t->cur = f->cur;
			t->prev = f->prev;
			f->cur = f->prev = (struct es_snap){ 0 };
		}
		if (f->ended)
			fxt__es_thread_end(es, f->pid, f->tid, f->first_ns, f->last_ns,
					   f->last_off + shift);
	}
	fxt__es_free(from);
	return rc;
}

int fxt__es_payload(struct fxt__es *es, uint64_t tps, unsigned char **out, size_t *len)
{
	struct es_snap s = { 0 };
	uint64_t start = UINT64_MAX, end = 0;
	size_t n = 0;

	if (es->bad || !es->head_set || tps != 1000000000u)
		return -ENOENT;
	for (size_t i = 0; i < es->nthr; i++) {
		struct es_thr *t = &es->thr[i];

		if (!t->ended) /* no records of its own */
			continue;
		if (!t->cur.buf) /* records, no place: no state */
			return -ENOENT;
		n++;
		if (t->first_ns < start)
			start = t->first_ns;
		if (t->last_ns > end)
			end = t->last_ns;
	}
	if (!n)
		return -ENOENT;
	if (put64(&s, FXT_END_STATE_MAGIC) < 0 || put64(&s, tps) < 0 ||
	    put64(&s, es->head_end) < 0 || put64(&s, start) < 0 || put64(&s, end) < 0 ||
	    put64(&s, FXT_END_ITEMS_UNKNOWN) < 0 || put64(&s, n) < 0)
		goto nomem;
	for (size_t i = 0; i < es->nthr; i++) {
		struct es_thr *t = &es->thr[i];
		struct es_snap *sn = t->prev.buf ? &t->prev : &t->cur;

		if (!t->ended)
			continue;
		if (put64(&s, t->last_off) < 0 || put64(&s, sn->len) < 0 ||
		    put(&s, sn->buf, sn->len) < 0)
			goto nomem;
	}
	if (put64(&s, fxt_end_check(s.buf, s.len)) < 0)
		goto nomem;
	*out = s.buf;
	*len = s.len;
	return 0;
nomem:
	free(s.buf);
	return -ENOMEM;
}

void fxt__es_trailer(uint64_t *w, uint64_t state_off, uint64_t state_len, uint64_t zoff,
		     uint64_t zlen)
{
	w[0] = FXT_END_MAGIC;
	w[1] = state_off;
	w[2] = state_len;
	w[3] = zoff;
	w[4] = zlen;
	w[5] = fxt_end_check(w, 40);
}
