/* The profile's tables: rows (found by category and name, cached by the
 * address of the name's bytes), threads (by pid and tid), each thread's map
 * of the rows it has open frames of, the stack-sample tracks and the drop
 * counts; creating and
 * freeing a profile, and reading its rows.  The engine (profile.c) calls
 * in here when its inlined fast paths miss. */
#include "config.h"

#include "tools/profile/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

#include "common/hash.h"
#include "tools/front/common.h"
#include "tools/profile/profile-int.h"

/* ----------------------------------------------------- active row map */

int profile__act_init(struct actmap *m)
{
	m->keys = calloc(16, sizeof(*m->keys));
	m->vals = calloc(16, sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -ENOMEM;
	m->mask = 15;
	m->n = 0;
	return 0;
}

static inline uint32_t act_slot(uint32_t row, uint32_t mask)
{
	return (uint32_t)fxt__hash_u64(row) & mask;
}

static int act_rehash(struct actmap *m)
{
	uint32_t ncap = (m->mask + 1) * 2, i, j;
	uint32_t *nk = calloc(ncap, sizeof(*nk)), *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i <= m->mask; i++) {
		if (!m->keys[i])
			continue;
		for (j = act_slot(m->keys[i] - 1, ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->mask = ncap - 1;
	return 0;
}

int64_t profile__act_find(struct actmap *m, uint32_t row)
{
	uint32_t i;

	for (i = act_slot(row, m->mask); m->keys[i]; i = (i + 1) & m->mask)
		if (m->keys[i] == row + 1)
			return i;
	if ((m->n + 1) * 2 > m->mask + 1) {
		if (act_rehash(m) < 0)
			return -ENOMEM;
		for (i = act_slot(row, m->mask); m->keys[i]; i = (i + 1) & m->mask)
			;
	}
	m->keys[i] = row + 1;
	m->vals[i] = 0;
	m->n++;
	return i;
}

bool profile__act_mapped(struct thread *t, uint32_t row)
{
	uint32_t i;

	for (i = act_slot(row, t->act.mask); t->act.keys[i]; i = (i + 1) & t->act.mask)
		if (t->act.keys[i] == row + 1)
			return t->act.vals[i] != 0;
	return false;
}

/* ---------------------------------------------------------------- rows */

static uint64_t row_hash(uint64_t pid, uint64_t tid, const struct fxt_string *cat,
			 const struct fxt_string *name)
{
	uint64_t h = fxt__hash_word(fxt__hash_word(FXT__HASH_SEED, pid), tid);

	h = fxt__hash_more(h, cat->data, cat->len);
	return fxt__hash_mix(fxt__hash_more(h, name->data, name->len));
}

static int rowtab_resize(struct profile *p)
{
	size_t ncap = p->rowmask ? (p->rowmask + 1) * 2 : 1024, i, j;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < p->nrows; i++) {
		for (j = p->keys[i].hash & (ncap - 1); nt[j]; j = (j + 1) & (ncap - 1))
			;
		nt[j] = (uint32_t)i + 1;
	}
	free(p->rowtab);
	p->rowtab = nt;
	p->rowmask = ncap - 1;
	return 0;
}

static int row_new(struct profile *p, uint64_t h, uint64_t pid, uint64_t tid,
		   const struct fxt_string *cat, const struct fxt_string *name, size_t slot)
{
	struct profile_row *r;
	char *s;

	if (p->nrows >= UINT32_MAX - 1)
		return -ENOMEM;
	if (GROW(p->rows, p->caprows, p->nrows + 1) < 0)
		return -ENOMEM;
	{
		size_t cap = p->caprows;
		void *nk = realloc(p->keys, cap * sizeof(*p->keys));
		if (!nk)
			return -ENOMEM;
		p->keys = nk;
	}
	if (p->opts.percentiles && p->capdurs < p->caprows) {
		struct pctl *nd = realloc(p->durs, p->caprows * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		memset(nd + p->capdurs, 0, (p->caprows - p->capdurs) * sizeof(*nd));
		p->durs = nd;
		p->capdurs = p->caprows;
	}
	s = malloc((size_t)cat->len + name->len + 2);
	if (!s)
		return -ENOMEM;
	memcpy(s, cat->data, cat->len);
	s[cat->len] = 0;
	memcpy(s + cat->len + 1, name->data, name->len);
	s[cat->len + 1 + name->len] = 0;

	r = &p->rows[p->nrows];
	memset(r, 0, sizeof(*r));
	r->category = s;
	r->name = s + cat->len + 1;
	r->pid = pid;
	r->tid = tid;
	r->sampled = (tid & FXT_SAMPLE_KOID_BIT) != 0;
	r->min_ns = UINT64_MAX;
	p->keys[p->nrows] = (struct rowkey){ h, cat->len, name->len, UINT32_MAX, 0, 0, 0 };
	/* Hooked functions' categories are their modules; libc calls'
	 * "libc.*", fxtrace's own "fxt*". */
	p->keys[p->nrows].hook =
	    strncmp(r->category, "libc.", 5) != 0 && strncmp(r->category, "fxt", 3) != 0;
	p->rowtab[slot] = (uint32_t)++p->nrows;
	return 0;
}

int64_t profile__row_get(struct profile *p, uint64_t pid, uint64_t tid,
			 const struct fxt_string *cat, const struct fxt_string *name)
{
	uint64_t h;
	size_t i;

	switch (p->opts.by) {
	case PROFILE_BY_FUNCTION:
		pid = 0;
		/* fall through */
	case PROFILE_BY_PROCESS:
		tid &= FXT_SAMPLE_KOID_BIT; /* samples: rows of their own */
		break;
	case PROFILE_BY_THREAD:
		break;
	}
	h = row_hash(pid, tid, cat, name);
	for (i = h & p->rowmask; p->rowtab[i]; i = (i + 1) & p->rowmask) {
		uint32_t k = p->rowtab[i] - 1;
		const struct rowkey *rk = &p->keys[k];
		const struct profile_row *r = &p->rows[k];

		if (rk->hash == h && rk->cat_len == cat->len && rk->name_len == name->len &&
		    r->pid == pid && r->tid == tid && memcmp(r->name, name->data, name->len) == 0 &&
		    memcmp(r->category, cat->data, cat->len) == 0)
			return k;
	}
	if (row_new(p, h, pid, tid, cat, name, i) < 0)
		return -ENOMEM;
	if ((p->nrows * 2 > p->rowmask + 1) && rowtab_resize(p) < 0)
		return -ENOMEM;
	return (int64_t)p->nrows - 1;
}

static inline __attribute__((always_inline)) bool same_bytes(const char *a, const char *b,
							     size_t len)
{
	uint64_t x, y;

	for (; len >= 8; a += 8, b += 8, len -= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	while (len--)
		if (*a++ != *b++)
			return false;
	return true;
}

int64_t profile__row_lookup(struct profile *p, uint64_t pid, uint64_t tid,
			    const struct fxt_string *cat, const struct fxt_string *name)
{
	uint64_t h = fxt__hash_word((uintptr_t)name->data ^ name->len, (uintptr_t)cat->data);
	struct lookaside *l;
	int64_t row;

	if (p->opts.by != PROFILE_BY_FUNCTION)
		h = fxt__hash_word(fxt__hash_word(h, pid), tid);
	l = &p->look[h & (LOOKASIDE - 1)];
	if (l->row && l->name == name->data && l->cat == cat->data && l->name_len == name->len &&
	    l->cat_len == cat->len && l->pid == pid && l->tid == tid) {
		const struct profile_row *r = &p->rows[l->row - 1];
		if (same_bytes(r->name, name->data, name->len) &&
		    same_bytes(r->category, cat->data, cat->len))
			return l->row - 1;
	}
	row = profile__row_get(p, pid, tid, cat, name);
	if (row >= 0)
		*l = (struct lookaside){ name->data, cat->data, name->len,	  cat->len,
					 pid,	     tid,	(uint32_t)row + 1 };
	return row;
}

/* ------------------------------------------------------------- threads */

static int thrtab_resize(struct profile *p)
{
	size_t ncap = p->thrmask ? (p->thrmask + 1) * 2 : 64, i, j;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < p->nthreads; i++) {
		uint64_t h = fxt__hash_pair(p->threads[i].pid, p->threads[i].tid);
		for (j = h & (ncap - 1); nt[j]; j = (j + 1) & (ncap - 1))
			;
		nt[j] = (uint32_t)i + 1;
	}
	free(p->thrtab);
	p->thrtab = nt;
	p->thrmask = ncap - 1;
	return 0;
}

struct thread *profile__thread_lookup(struct profile *p, uint64_t pid, uint64_t tid)
{
	struct thread *t;
	uint64_t h;
	size_t i;

	h = fxt__hash_pair(pid, tid);
	for (i = h & p->thrmask; p->thrtab[i]; i = (i + 1) & p->thrmask) {
		t = &p->threads[p->thrtab[i] - 1];
		if (t->pid == pid && t->tid == tid) {
			p->last_thread = p->thrtab[i] - 1;
			return t;
		}
	}
	if (GROW(p->threads, p->capthreads, p->nthreads + 1) < 0)
		return NULL;
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->idx = (uint32_t)p->nthreads + 1;
	/* Not a sample track's: its slices are samples, not hooked calls. */
	for (size_t k = 0; !(tid & FXT_SAMPLE_KOID_BIT) && k < p->ncosts; k++) {
		if (p->costs[k].pid == pid) {
			t->pair_ns = p->costs[k].pair_ns;
			t->inside_ns = p->costs[k].inside_ns;
		}
	}
	if (profile__act_init(&t->act) < 0) {
		free(t->act.keys);
		free(t->act.vals);
		return NULL;
	}
	p->thrtab[i] = (uint32_t)++p->nthreads;
	p->last_thread = p->nthreads - 1;
	if (p->nthreads * 2 > p->thrmask + 1 && thrtab_resize(p) < 0)
		return NULL;
	return &p->threads[p->last_thread];
}

void profile__thread_release(struct thread *t)
{
	free(t->f);
	free(t->openv);
	free(t->openrow);
	free(t->led);
	free(t->lf);
	free(t->act.keys);
	free(t->act.vals);
}

/* ------------------------------------------------------------ a profile */

int profile_new(struct profile **pp, const struct profile_opts *opts)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (opts)
		p->opts = *opts;
	p->strgen = 1;
	p->start_ns = UINT64_MAX;
	p->exact_max = p->opts.exact_max ? p->opts.exact_max : PROFILE_EXACT_MAX;
	/* A non-NULL durs is what the engine tests. */
	if (p->opts.percentiles && !(p->durs = calloc(1, sizeof(*p->durs)))) {
		profile_free(p);
		return -ENOMEM;
	}
	p->capdurs = p->opts.percentiles;
	if (rowtab_resize(p) < 0 || thrtab_resize(p) < 0) {
		profile_free(p);
		return -ENOMEM;
	}
	*pp = p;
	return 0;
}

void profile_free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nrows; i++)
		free((char *)p->rows[i].category);
	for (i = 0; p->durs && i < p->capdurs; i++)
		pctl_free(&p->durs[i]);
	free(p->durs);
	for (i = 0; i < p->nthreads; i++)
		profile__thread_release(&p->threads[i]);
	free(p->drop_thr);
	free(p->unsampled);
	free(p->costs);
	for (i = 0; i < p->ntracks; i++)
		free(p->tracks[i].name);
	free(p->tracks);
	tool_srcloc_free(&p->locs);
	sched_free(&p->sched);
	free(p->rows);
	free(p->keys);
	free(p->rowtab);
	free(p->threads);
	free(p->thrtab);
	free(p);
}

/* ---------------------------------------------- sample tracks and drops */

int profile__see_kobj(struct profile *p, const struct fxt_record *rec)
{
	static const char suffix[] = FXT_SAMPLE_TRACK_SUFFIX;
	const struct fxt_string *name = &rec->u.kobj.name;
	const size_t slen = sizeof(suffix) - 1;
	uint64_t koid = rec->u.kobj.koid;
	char *copy;
	size_t i;
	int rc = tool_srcloc_see(&p->locs, rec);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (rec->u.kobj.obj_type != FXT_OBJ_THREAD || !(koid & FXT_SAMPLE_KOID_BIT) ||
	    name->len <= slen || memcmp(name->data + name->len - slen, suffix, slen) != 0)
		return 0;
	copy = strndup(name->data, name->len);
	if (!copy)
		return -ENOMEM;
	for (i = 0; i < p->ntracks && p->tracks[i].koid != koid; i++)
		;
	if (i == p->ntracks) {
		if (GROW(p->tracks, p->captracks, p->ntracks + 1) < 0) {
			free(copy);
			return -ENOMEM;
		}
		p->tracks[p->ntracks++].koid = koid;
	} else {
		free(p->tracks[i].name);
	}
	p->tracks[i].name = copy;
	return 0;
}

int profile__see_hook_cost(struct profile *p, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	double pair = 0, inside = 0;

	if (!p->opts.subtract_overhead)
		return 0;
	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		if (a->type != FXT_ARG_DOUBLE || !(a->v.d > -1e9 && a->v.d < 1e9))
			continue;
		if (a->name.len == strlen(FXT_HOOK_ARG_PAIR) &&
		    !memcmp(a->name.data, FXT_HOOK_ARG_PAIR, a->name.len))
			pair = a->v.d;
		else if (a->name.len == strlen(FXT_HOOK_ARG_INSIDE) &&
			 !memcmp(a->name.data, FXT_HOOK_ARG_INSIDE, a->name.len))
			inside = a->v.d;
	}
	if (GROW(p->costs, p->capcosts, p->ncosts + 1) < 0)
		return -ENOMEM;
	p->costs[p->ncosts++] = (struct hook_cost){ ev->pid, pair, inside };
	/* Threads of the process met before it. */
	for (size_t k = 0; k < p->nthreads; k++) {
		if (p->threads[k].pid == ev->pid && !(p->threads[k].tid & FXT_SAMPLE_KOID_BIT)) {
			p->threads[k].pair_ns = pair;
			p->threads[k].inside_ns = inside;
		}
	}
	return 0;
}

int profile__see_short(struct profile *p, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	struct fxt_string module = { "", 0 };
	uint64_t calls = 0, sum = 0, total = 0, self = 0, min = 0, max = 0, child = 0;
	struct profile_row *r;
	int64_t row;

	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];
		const struct {
			const char *name;
			uint64_t *v;
		} keys[] = { { FXT_SHORT_ARG_CALLS, &calls }, { FXT_SHORT_ARG_SUM, &sum },
			     { FXT_SHORT_ARG_TOTAL, &total }, { FXT_SHORT_ARG_SELF, &self },
			     { FXT_SHORT_ARG_MIN, &min },     { FXT_SHORT_ARG_MAX, &max },
			     { FXT_SHORT_ARG_CHILD, &child } };

		if (a->type == FXT_ARG_STRING && a->name.len == strlen(FXT_SHORT_ARG_MODULE) &&
		    !memcmp(a->name.data, FXT_SHORT_ARG_MODULE, a->name.len)) {
			module = a->v.s;
			continue;
		}
		if (a->type != FXT_ARG_UINT64)
			continue;
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (a->name.len == strlen(keys[k].name) &&
			    !memcmp(a->name.data, keys[k].name, a->name.len))
				*keys[k].v = a->v.u;
	}
	row = profile__row_lookup(p, ev->pid, ev->tid, &module, &ev->name);
	if (row < 0)
		return (int)row;
	r = &p->rows[row];
	if (calls) {
		if (!r->calls || min < r->min_ns)
			r->min_ns = min;
		if (max > r->max_ns)
			r->max_ns = max;
		if (!r->short_calls || min < r->short_min_ns)
			r->short_min_ns = min;
		if (max > r->short_max_ns)
			r->short_max_ns = max;
	}
	r->short_calls += calls;
	r->calls += calls;
	r->sum_ns += sum;
	r->total_ns += total;
	r->self_ns += self;
	r->left_out_child_ns += child;
	return 0;
}

int profile__see_drops(struct profile *p, uint64_t pid, uint64_t tid, uint64_t ts_ns,
		       const struct fxt_string *name)
{
	uint64_t n = fxt_dropped_in_name(name->data, name->len);
	uint64_t o = fxt_overwritten_in_name(name->data, name->len);
	const size_t plen = sizeof(FXT_UNSAMPLED_PREFIX) - 1;
	size_t i;

	if (name->len > plen && memcmp(name->data, FXT_UNSAMPLED_PREFIX, plen) == 0) {
		struct profile_unsampled *u;
		size_t len = name->len - plen;

		if (GROW(p->unsampled, p->capunsampled, p->nunsampled + 1) < 0)
			return -ENOMEM;
		u = &p->unsampled[p->nunsampled++];
		u->pid = pid;
		u->tid = tid;
		u->ts_ns = ts_ns;
		if (len >= sizeof(u->reason))
			len = sizeof(u->reason) - 1;
		memcpy(u->reason, name->data + plen, len);
		u->reason[len] = '\0';
		return 0;
	}

	p->overwritten = o > UINT64_MAX - p->overwritten ? UINT64_MAX : p->overwritten + o;
	p->kernel_lost += fxt_kernel_lost_in_name(name->data, name->len);
	if (!n)
		return 0;
	p->dropped = n > UINT64_MAX - p->dropped ? UINT64_MAX : p->dropped + n;
	for (i = 0; i < p->ndrop_thr; i++)
		if (p->drop_thr[i].pid == pid && p->drop_thr[i].tid == tid)
			return 0;
	if (GROW(p->drop_thr, p->capdrop_thr, p->ndrop_thr + 1) < 0)
		return -ENOMEM;
	p->drop_thr[p->ndrop_thr++] = (struct drop_thread){ pid, tid };
	return 0;
}

/* ------------------------------------------------------------- accessors */

const struct sched *profile_sched(const struct profile *p)
{
	return p->sched.nswitch ? &p->sched : NULL;
}

size_t profile_unsampled(const struct profile *p, const struct profile_unsampled **v)
{
	*v = p->unsampled;
	return p->nunsampled;
}

size_t profile_nrows(const struct profile *p)
{
	return p->nrows;
}

const struct profile_row *profile_row(const struct profile *p, size_t i)
{
	return i < p->nrows ? &p->rows[i] : NULL;
}

const struct profile_row *profile_find(const struct profile *p, const char *category,
				       const char *name, uint64_t pid, uint64_t tid)
{
	size_t i;

	for (i = 0; i < p->nrows; i++) {
		const struct profile_row *r = &p->rows[i];
		if (!r->sampled && strcmp(r->name, name) == 0 &&
		    (!category || strcmp(r->category, category) == 0) && r->pid == pid &&
		    r->tid == tid)
			return r;
	}
	return NULL;
}

uint64_t profile_start_ns(const struct profile *p)
{
	return p->start_ns <= p->end_ns ? p->start_ns : 0;
}

uint64_t profile_end_ns(const struct profile *p)
{
	return p->end_ns;
}

uint64_t profile_nrecords(const struct profile *p)
{
	return p->nrecords;
}

uint64_t profile_nslices(const struct profile *p)
{
	return p->nslices - p->nsampled;
}

uint64_t profile_nsampled(const struct profile *p, uint64_t *ntracks)
{
	if (ntracks)
		*ntracks = p->nsample_tracks;
	return p->nsampled;
}

const struct profile_anomalies *profile_anomalies(const struct profile *p)
{
	return &p->anom;
}

size_t profile_hook_cost(const struct profile *p, double *pair_ns, double *inside_ns)
{
	double pair = 0, inside = 0;

	for (size_t k = 0; k < p->ncosts; k++) {
		pair += p->costs[k].pair_ns / (double)p->ncosts;
		inside += p->costs[k].inside_ns / (double)p->ncosts;
	}
	if (pair_ns)
		*pair_ns = pair;
	if (inside_ns)
		*inside_ns = inside;
	return p->ncosts;
}

uint64_t profile_kernel_lost(const struct profile *p)
{
	return p->kernel_lost;
}

uint64_t profile_buffer_full(const struct profile *p)
{
	return p->buffer_full;
}

uint64_t profile_overwritten(const struct profile *p)
{
	return p->overwritten;
}

uint64_t profile_dropped(const struct profile *p, uint64_t *nthreads)
{
	if (nthreads)
		*nthreads = p->ndrop_thr;
	return p->dropped;
}

/* ------------------------------------------------ percentiles, histograms */

static const struct profile *order_p; /* qsort has no context argument */

static int cmp_held(const void *a, const void *b)
{
	uint64_t x = order_p->durs[*(const uint32_t *)a].n,
		 y = order_p->durs[*(const uint32_t *)b].n;

	return (x < y) - (x > y);
}

static int pctl_shed(struct profile *p)
{
	uint32_t *idx = malloc((p->nrows + 1) * sizeof(*idx));
	size_t n = 0, i;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < p->nrows; i++)
		if (!p->durs[i].sk && p->durs[i].n)
			idx[n++] = (uint32_t)i;
	order_p = p;
	qsort(idx, n, sizeof(*idx), cmp_held);
	for (i = 0; i < n && p->held > p->exact_max / 2; i++) {
		struct pctl *d = &p->durs[idx[i]];
		size_t held = d->n;

		if (pctl_to_sketch(d) < 0) {
			free(idx);
			return -ENOMEM;
		}
		p->held -= held;
		p->nsketched++;
	}
	free(idx);
	return 0;
}

int profile__pctl_keep(struct profile *p, uint32_t row, uint64_t dur)
{
	struct pctl *d = &p->durs[row];

	if (!d->sk && p->held >= p->exact_max && pctl_shed(p) < 0)
		return -ENOMEM;
	if (pctl_add(d, dur) < 0)
		return -ENOMEM;
	if (!d->sk)
		p->held++;
	return 0;
}

int profile_quantiles(struct profile *p, const struct profile_row *r, const uint32_t *ppm, size_t m,
		      struct profile_q *out)
{
	size_t row = (size_t)(r - p->rows), i, nw = 0;
	struct pctl *d;
	uint64_t written, all, rank[8], v[8];
	int approx;

	if (!p->durs || row >= p->nrows || !r->calls || m > 8)
		return -EINVAL;
	d = &p->durs[row];
	written = pctl_count(d);
	all = written + r->short_calls;
	for (i = 0; i < m; i++) {
		uint64_t k = pctl_rank(ppm[i], all);

		if (ppm[i] >= 1000000) {
			out[i] = (struct profile_q){ r->max_ns, PROFILE_Q_EXACT };
		} else if (k <= r->short_calls || !written) {
			out[i] = (struct profile_q){ r->short_max_ns, PROFILE_Q_BOUND };
		} else {
			out[i].kind = PROFILE_Q_EXACT;
			rank[nw++] = k - r->short_calls;
		}
	}
	if (!nw)
		return 0;
	approx = pctl_at_ranks(d, rank, nw, v);
	if (approx < 0)
		return approx;
	for (i = 0, nw = 0; i < m; i++) {
		if (out[i].kind != PROFILE_Q_EXACT || ppm[i] >= 1000000)
			continue;
		out[i].ns = v[nw++];
		if (approx) {
			/* Within the row's exact bounds, still within the error. */
			out[i].ns = out[i].ns < r->min_ns ? r->min_ns : out[i].ns;
			out[i].ns = out[i].ns > r->max_ns ? r->max_ns : out[i].ns;
			out[i].kind = PROFILE_Q_APPROX;
		}
	}
	return 0;
}

int profile_histogram(const struct profile *p, const struct profile_row *r, uint64_t *hist)
{
	const struct pctl *d = profile_durations(p, r);

	if (!d)
		return -EINVAL;
	pctl_histogram(d, hist);
	return 0;
}

const struct pctl *profile_durations(const struct profile *p, const struct profile_row *r)
{
	size_t row = (size_t)(r - p->rows);

	return p->durs && row < p->nrows ? &p->durs[row] : NULL;
}

size_t profile_nsketched(const struct profile *p)
{
	return p->nsketched;
}

void profile__set_tps(struct profile *p, uint64_t tps)
{
	if (tps == p->tps && p->conv.b)
		return;
	p->tps = tps;
	p->ns_per_tick = tps && tps < (UINT64_C(1) << 59)
			     ? (double)NS_PER_S / (double)tps
			     : 0; /* to_ns() falls back to the reader */
	tickconv_set(&p->conv, tps);
}

void profile_set_slice_fn(struct profile *p, profile_slice_fn fn, void *ctx)
{
	p->opts.on_slice = fn;
	p->opts.ctx = ctx;
}

void profile_read_here(struct profile *p)
{
	p->read_here = true;
}
