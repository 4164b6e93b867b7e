/* Every thread's calls in time order (callmerge.h): a cursor and a call
 * stream per thread, their items merged by a heap on time. */
#include "config.h"

#include "tools/calls/callmerge.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/format.h>

#include "tools/front/thrmap.h"
#include "tools/front/common.h"

/* An item a thread's stream gave, its strings copied into the thread's
 * arena (offsets: the arena may move while the stream gives more). */
struct qitem {
	struct callstream_item it;
	struct fxt_arg_value args[2 * FXT_MAX_ARGS];
	size_t cat, name, aname[2 * FXT_MAX_ARGS], aval[2 * FXT_MAX_ARGS];
};

/* A copy of a cursor's string and thread tables, shared by the marks
 * made while the tables did not change (callmerge_mark()). */
struct tabs {
	struct fxt_reader *r;
	size_t refs, bytes;
	uint64_t gen;
	size_t *live; /* the merge's count of the bytes of its tables' copies */
};

struct mthread {
	uint64_t pid, tid;
	uint64_t first_off, last_off; /* where the reader gave them (fxt_reader_record_pos()) */
	struct fxt_reader *origin;    /* at the first record: what cursors copy */
	struct fxt_reader *r;	      /* the cursor */
	struct callstream *cs;
	bool done;
	struct qitem *q; /* items given, q[qhead .. nq) not taken yet */
	size_t qhead, nq, capq;
	char *arena; /* their strings; emptied with the queue */
	size_t narena, caparena;
	uint64_t gen;	    /* records read that may change the tables */
	struct tabs *tabs;  /* the copy of the tables the last mark took */
	uint64_t ntaken;    /* items the merge took from it since the rewind */
	struct tsnap *snap; /* its part of the last mark */
};

/* A thread's part of a mark: its cursor's place and tables, its stream,
 * the items it gave that the merge has not taken.  A thread's state
 * follows from the number of items taken from it (`key`), so marks made
 * while it took none share one. */
struct tsnap {
	size_t refs, bytes;
	size_t *live; /* the merge's count of its marks' shared bytes */
	uint64_t key;
	bool done;
	struct tabs *tabs;
	uint64_t off;
	struct callstream *cs;
	struct qitem *q;
	size_t nq;
	char *arena;
	size_t narena;
};

struct callmerge_mark {
	size_t nthr, bytes;
	struct tsnap *t[];
};

struct callmerge {
	void *map;
	size_t len;
	bool borrowed;		 /* the map is another merge's (callmerge_fork()) */
	size_t tabs_live;	 /* the bytes its marks share: tables' copies, threads' parts */
	struct fxt_reader *scan; /* the first pass's, whose tables origins copy */
	struct thrmap tm;
	struct mthread *thr;
	size_t nthr, capthr;
	uint32_t *heap; /* threads with items, by their next item's time */
	size_t nheap;
	int64_t taken; /* the thread whose item was given last, -1: none */
	uint64_t start_ns, end_ns;
	bool seen;
	struct tool_losses losses;  /* the first pass's count */
	struct callstream_item out; /* the item given, its pointers set */
	struct fxt_arg_value outargs[2 * FXT_MAX_ARGS];
};

/* ------------------------------------------------------------- items */

static int put(struct mthread *t, const struct fxt_string *s, size_t *off)
{
	if (TOOL_GROW(t->arena, t->caparena, t->narena + s->len + 1) < 0)
		return -ENOMEM;
	memcpy(t->arena + t->narena, s->data, s->len);
	*off = t->narena;
	t->narena += s->len;
	return 0;
}

static int on_item(void *ctx, const struct callstream_item *it)
{
	struct mthread *t = ctx;
	struct qitem *q;

	if (t->qhead == t->nq)
		t->qhead = t->nq = t->narena = 0;
	if (TOOL_GROW(t->q, t->capq, t->nq + 1) < 0)
		return -ENOMEM;
	q = &t->q[t->nq];
	q->it = *it;
	if (q->it.nargs > 2 * FXT_MAX_ARGS)
		q->it.nargs = 2 * FXT_MAX_ARGS;
	if (put(t, &it->category, &q->cat) < 0 || put(t, &it->name, &q->name) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < q->it.nargs; i++) {
		q->args[i] = it->args[i];
		if (put(t, &it->args[i].name, &q->aname[i]) < 0 ||
		    (it->args[i].type == FXT_ARG_STRING &&
		     put(t, &it->args[i].v.s, &q->aval[i]) < 0))
			return -ENOMEM;
	}
	t->nq++;
	return 0;
}

/* The head item of thread t into m->out, its pointers into t's arena. */
static const struct callstream_item *give(struct callmerge *m, const struct mthread *t)
{
	const struct qitem *q = &t->q[t->qhead];

	m->out = q->it;
	m->out.category.data = t->arena + q->cat;
	m->out.name.data = t->arena + q->name;
	for (unsigned i = 0; i < q->it.nargs; i++) {
		m->outargs[i] = q->args[i];
		m->outargs[i].name.data = t->arena + q->aname[i];
		if (q->args[i].type == FXT_ARG_STRING)
			m->outargs[i].v.s.data = t->arena + q->aval[i];
	}
	m->out.args = m->outargs;
	return &m->out;
}

/* ------------------------------------------------------------ cursors */

static void tabs_drop(struct tabs *tb)
{
	if (!tb || --tb->refs)
		return;
	*tb->live -= tb->bytes;
	fxt_reader_free(tb->r);
	free(tb);
}

static void snap_drop(struct tsnap *sn)
{
	if (!sn || --sn->refs)
		return;
	*sn->live -= sn->bytes;
	tabs_drop(sn->tabs);
	callstream_free(sn->cs);
	free(sn->q);
	free(sn->arena);
	free(sn);
}

static void cursor_close(struct mthread *t)
{
	fxt_reader_free(t->r);
	callstream_free(t->cs);
	t->r = NULL;
	t->cs = NULL;
	t->qhead = t->nq = t->narena = 0;
}

static int cursor_open(struct mthread *t)
{
	int rc;

	cursor_close(t);
	t->done = false;
	t->ntaken = 0;
	snap_drop(t->snap);
	t->snap = NULL;
	tabs_drop(t->tabs); /* the copy was of another place's tables */
	t->tabs = NULL;
	rc = fxt_reader_clone_at(t->origin, t->first_off, &t->r);
	if (rc == 0)
		rc = callstream_new(&t->cs, on_item, t);
	return rc;
}

/* The pid and tid of an event or log record; false for other records. */
static bool owner(const struct fxt_record *rec, uint64_t *pid, uint64_t *tid)
{
	if (rec->type == FXT_RECORD_EVENT) {
		*pid = rec->u.event.pid;
		*tid = rec->u.event.tid;
		return true;
	}
	if (rec->type == FXT_RECORD_LOG) {
		*pid = rec->u.log.pid;
		*tid = rec->u.log.tid;
		return true;
	}
	return false;
}

/* Whether t's cursor gave a late event and reads the event it came
 * before next (fxt_reader_record_pos()): a mark there would give that
 * late event again when resumed. */
static bool between(const struct mthread *t)
{
	return fxt_reader_record_pos(t->r) == fxt_reader_offset(t->r);
}

/* Reads t's records until its stream gives an item, and on past a late
 * event given before the next record, or until its last record was read
 * (then the stream is finished, the cursor let go). */
static int refill(struct mthread *t)
{
	struct fxt_record rec;
	uint64_t pid, tid;
	int rc;

	while (!t->done && (t->qhead == t->nq || between(t))) {
		rc = fxt_reader_next(t->r, &rec);
		if (rc == 1 && fxt_reader_record_pos(t->r) <= t->last_off) {
			if (rec.type != FXT_RECORD_EVENT && rec.type != FXT_RECORD_LOG)
				t->gen++;
			if (owner(&rec, &pid, &tid) && pid == t->pid && tid == t->tid &&
			    (rc = callstream_add_record(t->cs, t->r, &rec)) < 0)
				return rc;
			continue;
		}
		/* The first pass read it all: an end here is the thread's. */
		rc = callstream_finish(t->cs);
		t->done = true;
		fxt_reader_free(t->r);
		t->r = NULL;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --------------------------------------------------------------- heap */

static bool before(const struct callmerge *m, uint32_t a, uint32_t b)
{
	const struct mthread *x = &m->thr[a], *y = &m->thr[b];
	uint64_t tx = x->q[x->qhead].it.ts_ns, ty = y->q[y->qhead].it.ts_ns;

	return tx != ty ? tx < ty : a < b;
}

static void heap_push(struct callmerge *m, uint32_t t)
{
	size_t i = m->nheap++;

	m->heap[i] = t;
	while (i && before(m, m->heap[i], m->heap[(i - 1) / 2])) {
		uint32_t x = m->heap[i];

		m->heap[i] = m->heap[(i - 1) / 2];
		m->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static void heap_pop(struct callmerge *m)
{
	size_t i = 0;

	m->heap[0] = m->heap[--m->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		uint32_t x;

		if (l < m->nheap && before(m, m->heap[l], m->heap[s]))
			s = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[s]))
			s = r;
		if (s == i)
			break;
		x = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = x;
		i = s;
	}
}

/* ------------------------------------------------------------- public */

int callmerge_rewind(struct callmerge *m)
{
	int rc;

	m->nheap = 0;
	m->taken = -1;
	for (size_t i = 0; i < m->nthr; i++) {
		if ((rc = cursor_open(&m->thr[i])) < 0 || (rc = refill(&m->thr[i])) < 0)
			return rc;
		if (m->thr[i].qhead < m->thr[i].nq)
			heap_push(m, (uint32_t)i);
	}
	return 0;
}

int callmerge_next(struct callmerge *m, const struct callstream_item **it)
{
	struct mthread *t;
	int rc;

	if (m->taken >= 0) {
		t = &m->thr[m->taken];
		t->qhead++;
		t->ntaken++;
		heap_pop(m);
		if ((rc = refill(t)) < 0)
			return rc;
		if (t->qhead < t->nq)
			heap_push(m, (uint32_t)m->taken);
		m->taken = -1;
	}
	if (!m->nheap)
		return 0;
	t = &m->thr[m->heap[0]];
	m->taken = m->heap[0];
	*it = give(m, t);
	return 1;
}

/* -------------------------------------------------------------- marks */

void callmerge_mark_free(struct callmerge_mark *mk)
{
	if (!mk)
		return;
	for (size_t i = 0; i < mk->nthr; i++)
		snap_drop(mk->t[i]);
	free(mk);
}

size_t callmerge_mark_bytes(const struct callmerge_mark *mk)
{
	return mk->bytes;
}

size_t callmerge_shared_bytes(const struct callmerge *m)
{
	return m->tabs_live;
}

/* The tables of t's cursor as they are: the copy the last mark took if
 * no record that may change them was read since, else a new one. */
static int tabs_now(struct callmerge *m, struct mthread *t)
{
	struct tabs *tb;

	if (t->tabs && t->tabs->gen == t->gen)
		return 0;
	tb = calloc(1, sizeof(*tb));
	if (!tb || fxt_reader_clone_at(t->r, fxt_reader_offset(t->r), &tb->r) < 0) {
		free(tb);
		return -ENOMEM;
	}
	tb->refs = 1;
	tb->gen = t->gen;
	tb->bytes = fxt_reader_tables_bytes(tb->r) + sizeof(*tb);
	tb->live = &m->tabs_live;
	m->tabs_live += tb->bytes;
	tabs_drop(t->tabs);
	t->tabs = tb;
	return 0;
}

/* Thread i's part of a mark now: the last one if it took no item since,
 * else a new one. */
static int snap_now(struct callmerge *m, size_t i)
{
	struct mthread *t = &m->thr[i];
	/* the item given last is taken */
	size_t from = t->qhead + (m->taken == (int64_t)i);
	uint64_t key = t->ntaken + (m->taken == (int64_t)i);
	struct tsnap *sn;

	if (t->snap && t->snap->key == key)
		return 0;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return -ENOMEM;
	sn->refs = 1;
	sn->key = key;
	sn->live = &m->tabs_live;
	sn->bytes = sizeof(*sn);
	m->tabs_live += sn->bytes;
	sn->done = t->done;
	if (!t->done) {
		if (tabs_now(m, t) < 0 || callstream_clone(t->cs, NULL, NULL, &sn->cs) < 0)
			goto fail;
		sn->tabs = t->tabs;
		sn->tabs->refs++;
		sn->off = fxt_reader_offset(t->r);
		sn->bytes += callstream_bytes(sn->cs);
		m->tabs_live += callstream_bytes(sn->cs);
	}
	if (from < t->nq) {
		sn->nq = t->nq - from;
		sn->narena = t->narena;
		sn->q = malloc(sn->nq * sizeof(*sn->q));
		sn->arena = malloc(sn->narena + 1);
		if (!sn->q || !sn->arena)
			goto fail;
		memcpy(sn->q, t->q + from, sn->nq * sizeof(*sn->q));
		memcpy(sn->arena, t->arena, sn->narena);
		sn->bytes += sn->nq * sizeof(*sn->q) + sn->narena + 1;
		m->tabs_live += sn->nq * sizeof(*sn->q) + sn->narena + 1;
	}
	snap_drop(t->snap);
	t->snap = sn;
	return 0;
fail:
	snap_drop(sn);
	return -ENOMEM;
}

int callmerge_mark(struct callmerge *m, struct callmerge_mark **out)
{
	struct callmerge_mark *mk = calloc(1, sizeof(*mk) + m->nthr * sizeof(mk->t[0]));

	if (!mk)
		return -ENOMEM;
	mk->nthr = m->nthr;
	mk->bytes = sizeof(*mk) + m->nthr * sizeof(mk->t[0]);
	for (size_t i = 0; i < m->nthr; i++) {
		if (snap_now(m, i) < 0) {
			callmerge_mark_free(mk);
			return -ENOMEM;
		}
		mk->t[i] = m->thr[i].snap;
		mk->t[i]->refs++;
	}
	*out = mk;
	return 0;
}

int callmerge_resume(struct callmerge *m, const struct callmerge_mark *mk)
{
	int rc;

	if (mk->nthr != m->nthr)
		return -EINVAL;
	m->nheap = 0;
	m->taken = -1;
	for (size_t i = 0; i < m->nthr; i++) {
		struct mthread *t = &m->thr[i];
		const struct tsnap *tm = mk->t[i];

		cursor_close(t);
		/* its own parts and copies were of other places (this merge's
		 * marks, this thread's) */
		snap_drop(t->snap);
		t->snap = NULL;
		tabs_drop(t->tabs);
		t->tabs = NULL;
		t->ntaken = tm->key;
		t->done = tm->done;
		if (!t->done && ((rc = fxt_reader_clone_at(tm->tabs->r, tm->off, &t->r)) < 0 ||
				 (rc = callstream_clone(tm->cs, on_item, t, &t->cs)) < 0))
			return rc;
		if (tm->nq) {
			if (TOOL_GROW(t->q, t->capq, tm->nq) < 0 ||
			    TOOL_GROW(t->arena, t->caparena, tm->narena + 1) < 0)
				return -ENOMEM;
			memcpy(t->q, tm->q, tm->nq * sizeof(*t->q));
			memcpy(t->arena, tm->arena, tm->narena);
			t->nq = tm->nq;
			t->narena = tm->narena;
		}
	}
	for (size_t i = 0; i < m->nthr; i++) {
		if ((rc = refill(&m->thr[i])) < 0)
			return rc;
		if (m->thr[i].qhead < m->thr[i].nq)
			heap_push(m, (uint32_t)i);
	}
	return 0;
}

int callmerge_fork(const struct callmerge *m, struct callmerge **out)
{
	struct callmerge *f = calloc(1, sizeof(*f));
	int rc = -ENOMEM;

	if (!f)
		return -ENOMEM;
	f->map = m->map;
	f->len = m->len;
	f->borrowed = true;
	f->taken = -1;
	f->start_ns = m->start_ns;
	f->end_ns = m->end_ns;
	f->seen = m->seen;
	if (!(f->thr = calloc(m->nthr + 1, sizeof(*f->thr))) ||
	    !(f->heap = calloc(m->nthr + 1, sizeof(*f->heap))))
		goto fail;
	f->capthr = m->nthr + 1;
	for (size_t i = 0; i < m->nthr; i++) {
		const struct mthread *t = &m->thr[i];

		f->thr[i] = (struct mthread){ .pid = t->pid,
					      .tid = t->tid,
					      .first_off = t->first_off,
					      .last_off = t->last_off };
		f->nthr++;
		if ((rc = fxt_reader_clone_at(t->origin, t->first_off, &f->thr[i].origin)) < 0)
			goto fail;
	}
	if ((rc = callmerge_rewind(f)) < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	callmerge_free(f);
	return rc;
}

const struct tool_losses *callmerge_losses(const struct callmerge *m)
{
	return &m->losses;
}

uint64_t callmerge_start_ns(const struct callmerge *m)
{
	return m->start_ns;
}

uint64_t callmerge_end_ns(const struct callmerge *m)
{
	return m->end_ns;
}

size_t callmerge_nthreads(const struct callmerge *m)
{
	return m->nthr;
}

void callmerge_free(struct callmerge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nthr; i++) {
		cursor_close(&m->thr[i]);
		snap_drop(m->thr[i].snap);
		tabs_drop(m->thr[i].tabs);
		fxt_reader_free(m->thr[i].origin);
		free(m->thr[i].q);
		free(m->thr[i].arena);
	}
	free(m->thr);
	free(m->heap);
	thrmap_free(&m->tm);
	fxt_reader_free(m->scan);
	if (m->map && !m->borrowed)
		munmap(m->map, m->len);
	free(m);
}

/* The first pass: each thread's first and last record, a reader copied
 * at its first; the start time. */
static int first_pass(struct callmerge *m, char *err, size_t errlen)
{
	struct fxt_record rec;
	uint64_t n = 0, pid, tid, ts, pos;
	int rc;

	while ((rc = fxt_reader_next(m->scan, &rec)) == 1) {
		struct mthread *t;
		bool fresh;
		int64_t i;

		if (n++ == 0 && (rc = tool_read_first(m->scan, err, errlen)) < 0)
			return rc;
		tool_losses_record(&m->losses, &rec);
		if (!callstream_takes(&rec) || !owner(&rec, &pid, &tid))
			continue;
		ts = rec.type == FXT_RECORD_LOG ? rec.u.log.ts : rec.u.event.ts;
		ts = fxt_reader_ticks_to_ns(m->scan, ts);
		if (!m->seen || ts < m->start_ns)
			m->start_ns = ts;
		if (ts > m->end_ns)
			m->end_ns = ts;
		m->seen = true;
		i = thrmap_get(&m->tm, pid, tid, (uint32_t)m->nthr, &fresh);
		if (i < 0)
			return (int)i;
		/* Where the reader gave it: a late event comes before its
		 * offset (FXT_READER_TIME_ORDER). */
		pos = fxt_reader_record_pos(m->scan);
		if (!fresh) {
			m->thr[i].last_off = pos;
			continue;
		}
		if (TOOL_GROW(m->thr, m->capthr, m->nthr + 1) < 0)
			return -ENOMEM;
		t = &m->thr[m->nthr++];
		*t = (struct mthread){ .pid = pid, .tid = tid, .first_off = pos, .last_off = pos };
		if ((rc = fxt_reader_clone_at(m->scan, pos, &t->origin)) < 0)
			return rc;
	}
	return tool_read_end(m->scan, rc, n, err, errlen);
}

int callmerge_open(struct callmerge **out, const char *path, char *err, size_t errlen)
{
	struct callmerge *m = calloc(1, sizeof(*m));
	unsigned char magic[4] = { 0 };
	bool packed;
	struct stat st;
	int fd = -1, rc;

	if (!m)
		return -ENOMEM;
	m->taken = -1;
	if (strcmp(path, "-") == 0) {
		snprintf(err, errlen, "time order reads an archive file again: not standard input");
		rc = -EMEDIUMTYPE;
		goto fail;
	}
	/* tool_open_archive()'s checks and messages (a directory, a spool) */
	if ((rc = tool_open_archive(&m->scan, path, 0, err, errlen)) < 0)
		goto fail;
	fxt_reader_free(m->scan);
	m->scan = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		goto fail;
	}
	/* gzip or zstd: read through the descriptor, the cursors decode from
	 * the member or frame before their place (fxt_reader_clone_at()) */
	packed = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
		 ((magic[0] == 0x1f && magic[1] == 0x8b) ||
		  (magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd));
	m->len = (size_t)st.st_size;
	if (!packed && m->len &&
	    (m->map = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		m->map = NULL;
		rc = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		goto fail;
	}
	rc = packed ? fxt_reader_open_fd(&m->scan, fd, FXT_READER_TIME_ORDER)
		    : fxt_reader_open_mem(&m->scan, m->len ? m->map : "", m->len,
					  FXT_READER_TIME_ORDER);
	if (rc == 0)
		rc = first_pass(m, err, errlen);
	if (rc == 0 && !(m->heap = calloc(m->nthr + 1, sizeof(*m->heap))))
		rc = -ENOMEM;
	if (rc == 0)
		rc = callmerge_rewind(m);
	if (rc < 0)
		goto fail;
	close(fd);
	*out = m;
	return 0;
fail:
	if (!*err)
		snprintf(err, errlen, "%s", strerror(-rc));
	if (fd >= 0)
		close(fd);
	callmerge_free(m);
	return rc;
}
