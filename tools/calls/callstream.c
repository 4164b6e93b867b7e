/* The calls of an archive as a stream (callstream.h): one call held back
 * to learn whether it has children, per-thread stacks of the calls that
 * do. */
#include "config.h"

#include "tools/calls/callstream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>

#include "run/recording.h"
#include "tools/front/thrmap.h"
#include "tools/front/common.h"
#include "tools/front/escape.h"
#include "tools/profile/profile.h"

/* A call with children, or a complete event whose children may still come
 * after another thread's events (then not braced: no EXIT is due). */
struct cframe {
	uint64_t start, end;
	uint32_t str; /* its category then name, in the thread's arena */
	uint32_t cat_len, name_len;
	uint8_t has_end; /* a complete event's (a begin's: at its end event) */
	uint8_t braced;	 /* an ENTER was given: an EXIT is due */
};

struct cthread {
	uint64_t pid, tid;
	struct cframe *f;
	size_t nf, capf;
	char *arena; /* the names of the braced frames, stacked */
	size_t narena, caparena;
};

/* The call held back: a copy of its record's strings and arguments. */
struct pending {
	bool set;
	bool begin; /* a begin event (else a complete one) */
	uint32_t thr;
	uint64_t ts, end;
	unsigned depth;
	uint32_t cat_len, name_len;
	unsigned nargs;
	struct fxt_arg_value args[2 * FXT_MAX_ARGS];
	/* category, name, then the string values of args; offsets in args
	 * are fixed into pointers when the call is given out. */
	char *buf;
	size_t nbuf, capbuf;
	size_t arg_off[2 * FXT_MAX_ARGS];
};

struct callstream {
	callstream_fn fn;
	void *ctx;
	struct thrmap tm;
	struct cthread *thr;
	size_t nthr, capthr;
	uint32_t cur; /* + 1: the thread of the last item; 0 = none */
	struct pending p;
	bool seen;
	uint64_t start_ns, last_ns;
};

int callstream_new(struct callstream **out, callstream_fn fn, void *ctx)
{
	struct callstream *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	cs->fn = fn;
	cs->ctx = ctx;
	*out = cs;
	return 0;
}

void callstream_free(struct callstream *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->nthr; i++) {
		free(cs->thr[i].f);
		free(cs->thr[i].arena);
	}
	free(cs->thr);
	thrmap_free(&cs->tm);
	free(cs->p.buf);
	free(cs);
}

static int64_t thread_get(struct callstream *cs, uint64_t pid, uint64_t tid);

int callstream_clone(const struct callstream *cs, callstream_fn fn, void *ctx,
		     struct callstream **out)
{
	struct callstream *c;
	int rc = callstream_new(&c, fn, ctx);

	if (rc < 0)
		return rc;
	c->cur = cs->cur;
	c->seen = cs->seen;
	c->start_ns = cs->start_ns;
	c->last_ns = cs->last_ns;
	c->p = cs->p;
	c->p.buf = NULL;
	c->p.capbuf = 0;
	if (cs->p.nbuf && TOOL_GROW(c->p.buf, c->p.capbuf, cs->p.nbuf) < 0)
		goto fail;
	if (cs->p.nbuf)
		memcpy(c->p.buf, cs->p.buf, cs->p.nbuf);
	for (size_t i = 0; i < cs->nthr; i++) {
		const struct cthread *t = &cs->thr[i];
		struct cthread *d;
		int64_t k = thread_get(c, t->pid, t->tid);

		if (k < 0)
			goto fail;
		d = &c->thr[k];
		if (t->nf && TOOL_GROW(d->f, d->capf, t->nf) < 0)
			goto fail;
		if (t->narena && TOOL_GROW(d->arena, d->caparena, t->narena) < 0)
			goto fail;
		if (t->nf)
			memcpy(d->f, t->f, t->nf * sizeof(*t->f));
		if (t->narena)
			memcpy(d->arena, t->arena, t->narena);
		d->nf = t->nf;
		d->narena = t->narena;
	}
	*out = c;
	return 0;
fail:
	callstream_free(c);
	return -ENOMEM;
}

size_t callstream_bytes(const struct callstream *cs)
{
	size_t n = sizeof(*cs) + cs->p.capbuf + cs->capthr * sizeof(*cs->thr) +
		   (cs->tm.e ? (size_t)cs->tm.mask + 1 : 0) * sizeof(*cs->tm.e);

	for (size_t i = 0; i < cs->nthr; i++)
		n += cs->thr[i].capf * sizeof(*cs->thr[i].f) + cs->thr[i].caparena;
	return n;
}

bool callstream_start_ns(const struct callstream *cs, uint64_t *ns)
{
	*ns = cs->start_ns;
	return cs->seen;
}

static int64_t thread_get(struct callstream *cs, uint64_t pid, uint64_t tid)
{
	bool fresh;
	int64_t i = thrmap_get(&cs->tm, pid, tid, (uint32_t)cs->nthr, &fresh);

	if (i < 0 || !fresh)
		return i;
	if (TOOL_GROW(cs->thr, cs->capthr, cs->nthr + 1) < 0)
		return -ENOMEM;
	cs->thr[cs->nthr] = (struct cthread){ .pid = pid, .tid = tid };
	return (int64_t)cs->nthr++;
}

/* ------------------------------------------------------------- frames */

static int push(struct cthread *t, uint64_t start, uint64_t end, bool has_end, bool braced,
		const char *cat, uint32_t cat_len, const char *name, uint32_t name_len)
{
	struct cframe *f;

	if (TOOL_GROW(t->f, t->capf, t->nf + 1) < 0)
		return -ENOMEM;
	f = &t->f[t->nf];
	*f = (struct cframe){ start, end, (uint32_t)t->narena, 0, 0, has_end, braced };
	if (braced) {
		if (t->narena + cat_len + name_len > UINT32_MAX ||
		    TOOL_GROW(t->arena, t->caparena, t->narena + cat_len + name_len + 1) < 0)
			return -ENOMEM;
		memcpy(t->arena + t->narena, cat, cat_len);
		memcpy(t->arena + t->narena + cat_len, name, name_len);
		t->narena += cat_len + name_len;
		f->cat_len = cat_len;
		f->name_len = name_len;
	}
	t->nf++;
	return 0;
}

/* Gives the EXIT of the top frame if one is due. */
static int exit_top(struct callstream *cs, struct cthread *t, uint64_t end, bool open,
		    const struct fxt_record *end_rec)
{
	struct cframe *f = &t->f[t->nf - 1];
	struct callstream_item it;

	if (!f->braced)
		return 0;
	f->braced = 0;
	it = (struct callstream_item){
		.kind = CALLSTREAM_EXIT,
		.pid = t->pid,
		.tid = t->tid,
		.ts_ns = end,
		.dur_ns = end > f->start ? end - f->start : 0,
		.has_dur = true,
		.open = open,
		.depth = (unsigned)t->nf - 1,
		.category = { t->arena + f->str, f->cat_len },
		.name = { t->arena + f->str + f->cat_len, f->name_len },
	};
	if (end_rec) {
		it.nargs = end_rec->nargs;
		it.args = end_rec->args;
	}
	return cs->fn(cs->ctx, &it);
}

static int pop(struct callstream *cs, struct cthread *t, uint64_t end, bool open,
	       const struct fxt_record *end_rec)
{
	int rc = exit_top(cs, t, end, open, end_rec);

	t->nf--;
	t->narena = t->f[t->nf].str;
	return rc;
}

/* Pops the complete frames of t over by ts. */
static int retire(struct callstream *cs, struct cthread *t, uint64_t ts)
{
	int rc;

	while (t->nf && t->f[t->nf - 1].has_end && t->f[t->nf - 1].end <= ts)
		if ((rc = pop(cs, t, t->f[t->nf - 1].end, false, NULL)) < 0)
			return rc;
	return 0;
}

/* Another thread comes: the braced complete frames of t get their EXIT
 * now (they stay, not braced, for the depth of what may follow). */
static int leave(struct callstream *cs, struct cthread *t)
{
	int rc;

	for (size_t i = t->nf; i-- > 0;) {
		struct cframe *f = &t->f[i];
		size_t keep = t->nf;

		if (!f->has_end || !f->braced)
			continue;
		t->nf = i + 1; /* exit_top() gives the top frame's */
		rc = exit_top(cs, t, f->end, false, NULL);
		t->nf = keep;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ pending */

static int hold_str(struct pending *p, const struct fxt_string *s, size_t *off)
{
	if (TOOL_GROW(p->buf, p->capbuf, p->nbuf + s->len + 1) < 0)
		return -ENOMEM;
	memcpy(p->buf + p->nbuf, s->data, s->len);
	*off = p->nbuf;
	p->nbuf += s->len;
	return 0;
}

/* Appends the record's arguments to the pending call's. */
static int hold_args(struct pending *p, const struct fxt_record *rec)
{
	for (unsigned i = 0; i < rec->nargs && p->nargs < 2 * FXT_MAX_ARGS; i++) {
		struct fxt_arg_value *a = &p->args[p->nargs];
		size_t off;

		*a = rec->args[i];
		if (hold_str(p, &a->name, &off) < 0)
			return -ENOMEM;
		p->arg_off[p->nargs] = off;
		if (a->type == FXT_ARG_STRING) {
			size_t voff;

			if (hold_str(p, &a->v.s, &voff) < 0)
				return -ENOMEM;
			/* the value's offset, after the name's */
			a->v.s.data = (const char *)(uintptr_t)voff;
		}
		p->nargs++;
	}
	return 0;
}

static int hold(struct callstream *cs, uint32_t ti, const struct fxt_record *rec, uint64_t ts,
		uint64_t end, unsigned depth)
{
	struct pending *p = &cs->p;
	size_t off;

	p->set = true;
	p->begin = rec->u.event.type == FXT_EVENT_DURATION_BEGIN;
	p->thr = ti;
	p->ts = ts;
	p->end = end;
	p->depth = depth;
	p->nbuf = 0;
	p->nargs = 0;
	if (hold_str(p, &rec->u.event.category, &off) < 0 ||
	    hold_str(p, &rec->u.event.name, &off) < 0)
		return -ENOMEM;
	p->cat_len = rec->u.event.category.len;
	p->name_len = rec->u.event.name.len;
	return hold_args(p, rec);
}

/* Gives out the pending call as `kind`, with the end record's arguments
 * too for a begin/end pair made one CALL. */
static int give(struct callstream *cs, enum callstream_kind kind, uint64_t end, bool has_dur)
{
	struct pending *p = &cs->p;
	struct cthread *t = &cs->thr[p->thr];
	struct callstream_item it = {
		.kind = kind,
		.pid = t->pid,
		.tid = t->tid,
		.ts_ns = p->ts,
		.dur_ns = has_dur && end > p->ts ? end - p->ts : 0,
		.has_dur = has_dur,
		.depth = p->depth,
		.category = { p->buf, p->cat_len },
		.name = { p->buf + p->cat_len, p->name_len },
		.nargs = p->nargs,
		.args = p->args,
	};

	for (unsigned i = 0; i < p->nargs; i++) {
		struct fxt_arg_value *a = &p->args[i];

		a->name.data = p->buf + p->arg_off[i];
		if (a->type == FXT_ARG_STRING)
			a->v.s.data = p->buf + (uintptr_t)a->v.s.data;
	}
	p->set = false;
	return cs->fn(cs->ctx, &it);
}

/* The pending call, now that a record of thread ti at ts comes (ti < 0:
 * the end of the archive).  `end_rec`: that record is an end event of
 * the same thread; returns 1 when it ended the pending call (consumed). */
static int resolve(struct callstream *cs, int64_t ti, uint64_t ts, const struct fxt_record *end_rec)
{
	struct pending *p = &cs->p;
	struct cthread *t;
	bool inside;
	int rc;

	if (!p->set)
		return 0;
	t = &cs->thr[p->thr];
	if (p->begin) {
		if (ti == p->thr && end_rec) {
			rc = hold_args(p, end_rec);
			if (rc == 0)
				rc = give(cs, CALLSTREAM_CALL, ts > p->ts ? ts : p->ts, true);
			return rc < 0 ? rc : 1;
		}
		rc = push(t, p->ts, 0, false, true, p->buf, p->cat_len, p->buf + p->cat_len,
			  p->name_len);
		return rc < 0 ? rc : give(cs, CALLSTREAM_ENTER, 0, false);
	}
	inside = ti == p->thr && ts < p->end;
	if (inside || ti != p->thr) {
		/* Its children come now, or may come after other threads'. */
		rc = push(t, p->ts, p->end, true, inside, p->buf, p->cat_len, p->buf + p->cat_len,
			  p->name_len);
		if (rc < 0)
			return rc;
	}
	return give(cs, inside ? CALLSTREAM_ENTER : CALLSTREAM_CALL, p->end, true);
}

/* -------------------------------------------------------------- records */

static int simple(struct callstream *cs, struct cthread *t, enum callstream_kind kind, uint64_t ts,
		  const struct fxt_string *cat, const struct fxt_string *name,
		  const struct fxt_record *rec)
{
	struct callstream_item it = {
		.kind = kind,
		.pid = t->pid,
		.tid = t->tid,
		.ts_ns = ts,
		.depth = (unsigned)t->nf,
		.category = *cat,
		.name = *name,
		.nargs = rec->nargs,
		.args = rec->args,
	};

	return cs->fn(cs->ctx, &it);
}

bool callstream_takes(const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;

	if (rec->type == FXT_RECORD_LOG)
		return true;
	if (rec->type != FXT_RECORD_EVENT)
		return false;
	switch (ev->type) {
	case FXT_EVENT_INSTANT:
		return !(ev->category.len == sizeof(FXT_SHORT_CATEGORY) - 1 &&
			 memcmp(ev->category.data, FXT_SHORT_CATEGORY, ev->category.len) == 0);
	case FXT_EVENT_DURATION_BEGIN:
	case FXT_EVENT_DURATION_END:
	case FXT_EVENT_DURATION_COMPLETE:
		return true;
	default:
		return false;
	}
}

int callstream_add_record(struct callstream *cs, struct fxt_reader *r, const struct fxt_record *rec)
{
	static const struct fxt_string no_cat = { "", 0 };
	const typeof(rec->u.event) *ev = &rec->u.event;
	uint64_t pid, tid, ts, end = 0;
	struct cthread *t;
	int64_t ti;
	int rc;

	if (!callstream_takes(rec))
		return 0;
	if (rec->type == FXT_RECORD_LOG) {
		pid = rec->u.log.pid;
		tid = rec->u.log.tid;
		ts = fxt_reader_ticks_to_ns(r, rec->u.log.ts);
	} else {
		pid = ev->pid;
		tid = ev->tid;
		ts = fxt_reader_ticks_to_ns(r, ev->ts);
		if (ev->type == FXT_EVENT_DURATION_COMPLETE) {
			end = fxt_reader_ticks_to_ns(r, ev->extra);
			if (end < ts)
				end = ts;
		}
	}
	if (!cs->seen) {
		cs->start_ns = ts;
		cs->seen = true;
	}
	if (ts > cs->last_ns)
		cs->last_ns = ts;
	if (end > cs->last_ns)
		cs->last_ns = end;

	ti = thread_get(cs, pid, tid);
	if (ti < 0)
		return (int)ti;
	rc = resolve(cs, ti, ts,
		     rec->type == FXT_RECORD_EVENT && ev->type == FXT_EVENT_DURATION_END ? rec
											 : NULL);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (cs->cur && cs->cur - 1 != (uint32_t)ti && (rc = leave(cs, &cs->thr[cs->cur - 1])) < 0)
		return rc;
	cs->cur = (uint32_t)ti + 1;
	t = &cs->thr[ti];
	if ((rc = retire(cs, t, ts)) < 0)
		return rc;
	if (rec->type == FXT_RECORD_LOG)
		return simple(cs, t, CALLSTREAM_LOG, ts, &no_cat, &rec->u.log.msg, rec);
	switch (ev->type) {
	case FXT_EVENT_INSTANT:
		return simple(cs, t, CALLSTREAM_INSTANT, ts, &ev->category, &ev->name, rec);
	case FXT_EVENT_DURATION_END:
		/* Complete frames still open above the begin: closed with it. */
		while (t->nf && t->f[t->nf - 1].has_end)
			if ((rc = pop(cs, t, t->f[t->nf - 1].end, false, NULL)) < 0)
				return rc;
		return t->nf ? pop(cs, t, ts, false, rec) : 0;
	default:
		return hold(cs, (uint32_t)ti, rec, ts, end, (unsigned)t->nf);
	}
}

int callstream_finish(struct callstream *cs)
{
	int rc = resolve(cs, -1, 0, NULL);

	for (size_t i = 0; rc >= 0 && i < cs->nthr; i++) {
		struct cthread *t = &cs->thr[i];

		while (rc >= 0 && t->nf) {
			struct cframe *f = &t->f[t->nf - 1];

			rc = pop(cs, t, f->has_end ? f->end : cs->last_ns, !f->has_end, NULL);
		}
	}
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------ printing */

static bool is_named(const struct fxt_string *s, const char *name)
{
	size_t n = strlen(name);

	return s->len == n && memcmp(s->data, name, n) == 0;
}

bool callstream_log_copy(const struct callstream_item *it)
{
	return it->kind == CALLSTREAM_INSTANT && is_named(&it->category, "log");
}

/* The return value among a call's arguments ("retval" of fxt-run
 * --retval, "result" of a libc call). */
static bool is_ret(const struct fxt_arg_value *a)
{
	return is_named(&a->name, "retval") || is_named(&a->name, "result");
}

static void put_value(FILE *f, const struct fxt_arg_value *a)
{
	switch (a->type) {
	case FXT_ARG_INT32:
	case FXT_ARG_INT64:
		fprintf(f, "%" PRId64, a->v.i);
		break;
	case FXT_ARG_UINT32:
	case FXT_ARG_UINT64:
	case FXT_ARG_KOID:
		fprintf(f, "%" PRIu64, a->v.u);
		break;
	case FXT_ARG_POINTER:
		fprintf(f, "0x%" PRIx64, a->v.u);
		break;
	case FXT_ARG_DOUBLE:
		fprintf(f, "%g", a->v.d);
		break;
	case FXT_ARG_STRING:
		putc('"', f);
		tool_put_text_mem(f, a->v.s.data, a->v.s.len);
		putc('"', f);
		break;
	case FXT_ARG_BOOL:
		fputs(a->v.b ? "true" : "false", f);
		break;
	default:
		fputs("null", f);
		break;
	}
}

/* "(a=1, b=2)" then " = RET" when the call has one. */
static void put_args(FILE *f, const struct callstream_item *it, bool parens)
{
	const struct fxt_arg_value *ret = NULL;
	bool first = true;

	if (parens)
		putc('(', f);
	for (unsigned i = 0; i < it->nargs; i++) {
		const struct fxt_arg_value *a = &it->args[i];

		if (is_ret(a)) {
			ret = a;
			continue;
		}
		if (!parens && first)
			putc(' ', f);
		if (!first)
			fputs(", ", f);
		first = false;
		tool_put_text_mem(f, a->name.data, a->name.len);
		putc('=', f);
		put_value(f, a);
	}
	if (parens)
		putc(')', f);
	if (ret) {
		fputs(" = ", f);
		put_value(f, ret);
	}
}

void callstream_print(FILE *f, const struct callstream_item *it, uint64_t start_ns)
{
	uint64_t ts = it->ts_ns >= start_ns ? it->ts_ns - start_ns : 0;
	char dur[32] = "";

	if (it->has_dur)
		tool_fmt_ns(dur, sizeof(dur), (double)it->dur_ns);
	fprintf(f, "%6" PRIu64 ".%09" PRIu64 " %12s %7" PRIu64 " | %*s", ts / 1000000000,
		ts % 1000000000, dur, it->tid,
		(int)(2 * (it->depth < CALLSTREAM_INDENT_MAX ? it->depth : CALLSTREAM_INDENT_MAX)),
		"");
	/* Deeper: the indentation held, the level said (as --depth counts). */
	if (it->depth >= CALLSTREAM_INDENT_MAX)
		fprintf(f, "[d=%" PRIu64 "] ", (uint64_t)it->depth + 1);
	switch (it->kind) {
	case CALLSTREAM_CALL:
	case CALLSTREAM_ENTER:
		tool_put_text_mem(f, it->name.data, it->name.len);
		put_args(f, it, true);
		if (it->kind == CALLSTREAM_ENTER)
			fputs(" {", f);
		break;
	case CALLSTREAM_EXIT:
		fputs("} /* ", f);
		tool_put_text_mem(f, it->name.data, it->name.len);
		fputs(" */", f);
		put_args(f, it, false);
		if (it->open)
			fputs(" [open]", f);
		break;
	case CALLSTREAM_INSTANT:
		fputs("! ", f);
		tool_put_text_mem(f, it->name.data, it->name.len);
		put_args(f, it, false);
		break;
	case CALLSTREAM_LOG:
		fputs("# ", f);
		tool_put_text_mem(f, it->name.data,
				  it->name.len -
				      (it->name.len && it->name.data[it->name.len - 1] == '\n'));
		break;
	}
	putc('\n', f);
}

int callstream_parse_when(const char *s, struct callstream_when *w)
{
	size_t n;

	*w = (struct callstream_when){ .set = true };
	if (tool_parse_count(s, &n) == 0) {
		w->ns = n;
		return 0;
	}
	w->relative = true;
	return run_parse_duration(s, &w->ns);
}

uint64_t callstream_when_ns(const struct callstream_when *w, uint64_t start_ns)
{
	if (!w->relative)
		return w->ns;
	return w->ns > UINT64_MAX - start_ns ? UINT64_MAX : start_ns + w->ns;
}
