/* Each thread's events in time order (FXT_READER_TIME_ORDER, reader.h):
 * the one owner of the order in which fxtrace's tools see a thread's
 * events, and so of how they pair begins with ends.
 *
 * The FXT spec does not make file order time order.  Perfetto (and Tracy)
 * sort a thread's events by timestamp, equal ones in file order, before
 * they pair begins with ends and bind flows to slices; magic-trace writes
 * the begins of the frames open at its start, at time 0, at the end of
 * its file.  A reader that pairs in file order pairs those differently.
 *
 * Only the events that come out of order are moved.  A first pass at open
 * (over the same bytes: memory, a regular file mapped, or a pipe's bytes
 * copied into an unlinked temporary file first) follows each thread's
 * latest timestamp so far; a duration begin or end before it is "late",
 * and a copy of it is held (its strings and arguments with it).  That
 * pass is two: skim() reads each event's header, time and thread in place
 * (every other record decoded, so the thread table is the decoder's) and
 * says whether any begin or end is late and where the last one is; only
 * then does first_pass() decode, up to there, to copy them.  On a file in
 * time order without the mark the skim is the whole cost: about a third
 * of a decoding pass, the memory read of the bytes.  Plain bytes in
 * memory (a file mapped here) of 32 MiB or more are skimmed in two halves
 * at once on two CPUs, the second from a place past the middle where
 * records seem to start, its threads as keys resolved against the first
 * half's table when they meet (skim()); a thread of its own unmaps the
 * pages after, and on a large file not split maps them ahead of the skim
 * (prefault_start()), the kernel's part of that read.  Where no such
 * thread runs (a file under 64 MiB, one CPU, a marked one), the reader
 * takes the pass's map of the file (r->premap) rather than map it again.
 * Those are what is paired by order: complete events carry both their
 * times, and the tools nest them by their intervals in any order (writers
 * often give them children first: moving those would hold half of them);
 * flows are paired by id.  The reader's
 * own pass then skips each late event where the file has it, and gives it
 * just before the first event of its thread that is later than it: the
 * events of a thread that are not late are in time order, so begins and
 * ends come as a stable sort by time.  Memory: a copy per late event (at most
 * ORDER_MAX_LATE; later ones stay where they are, which fxt_reader_late()
 * says) and a slot per thread with one.  Without late events the reader's
 * pass costs one branch a record.
 *
 * Giving a late event before event E: E is decoded (it must be, to know
 * its time), then the reader steps back to E's offset, still in its
 * window, and gives the copy; the next call decodes E again.  Event
 * records change no table, so decoding one twice is harmless.
 *
 * An archive that starts with fxtrace's mark (FXT_TIME_ORDERED_MARK, a
 * string record right after the magic record: fxt_writer_time_ordered())
 * says each thread's events are in time order: no pass at open, the
 * reader's own follows each thread's latest time (check_order()).  Were
 * a begin or end late after all (another archive appended: the claim
 * ends at a second magic record), it is paired in file order and said
 * once.
 *
 * A thread is (provider, pid, tid), and times are compared in the
 * provider's ticks.  Clones (fxt_reader_clone_at()) share the held
 * copies, and where each was given (the offset of the event it came
 * before, noted by the reader that gave it first): a clone at offset o
 * gives what a reader that came to o gives, the late events given before
 * an event at o or after (those given before an event ahead of o are not
 * given again, wherever the file has them).  A late event no reader gave
 * yet is taken as given when it is ahead of o in the file.
 *
 * One file past 800 lines: the passes at open, the reader's side and the
 * clones share the late events' copies and the thread slots, which
 * nothing outside this file sees.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/hash.h"
#include "fxt/reader_int.h"

/* The late events held at most (a copy is about 1 KB). */
#define ORDER_MAX_LATE 65536u

struct order_thread {
	uint32_t provider;
	uint64_t pid, tid;
	uint64_t max_ts;   /* first pass: the latest time so far */
	uint64_t first_be; /* a part skim's (struct skim), else unused */
	size_t first, n;   /* its late events: by_thread[first .. first + n) */
};

struct fxt__order {
	unsigned refs;
	struct fxt_record **late; /* the copies, in file order */
	size_t nlate, cap;
	uint64_t left; /* late events past ORDER_MAX_LATE, not moved */
	struct order_thread *t;
	size_t nt, tcap;
	size_t *slots; /* open addressing on the thread: index + 1, 0 empty */
	size_t nslots;
	size_t *by_thread; /* indices of `late`, by thread, then time, then offset */
	/* Where each late event is given: the offset of the event it comes
	 * before, ORDER_UNGIVEN until a reader gave it (the same for every
	 * reader that gives it: they share it, clones on other threads too). */
	uint64_t *given_at;
};

#define ORDER_UNGIVEN UINT64_MAX

/* ------------------------------------------------------------ threads */

static uint64_t thread_hash(uint32_t provider, uint64_t pid, uint64_t tid)
{
	return fxt__hash_mix(fxt__hash_word(fxt__hash_pair(pid, tid), provider));
}

/* The thread's slot, created if `add`; NULL when absent or out of memory. */
static struct order_thread *thread_of(struct fxt__order *o, uint32_t provider, uint64_t pid,
				      uint64_t tid, bool add)
{
	size_t i, mask;

	if (o->nslots) {
		mask = o->nslots - 1;
		for (i = (size_t)thread_hash(provider, pid, tid) & mask; o->slots[i];
		     i = (i + 1) & mask) {
			struct order_thread *t = &o->t[o->slots[i] - 1];
			if (t->provider == provider && t->pid == pid && t->tid == tid)
				return t;
		}
	}
	if (!add)
		return NULL;
	if ((o->nt + 1) * 2 > o->nslots) {
		size_t n = o->nslots ? 2 * o->nslots : 64;
		size_t *s = calloc(n, sizeof(*s));
		if (!s)
			return NULL;
		free(o->slots);
		o->slots = s;
		o->nslots = n;
		for (size_t k = 0; k < o->nt; k++) {
			for (i = (size_t)thread_hash(o->t[k].provider, o->t[k].pid, o->t[k].tid) &
				 (n - 1);
			     s[i]; i = (i + 1) & (n - 1))
				;
			s[i] = k + 1;
		}
	}
	if (fxt__grow((void **)&o->t, &o->tcap, o->nt + 1, sizeof(*o->t)) < 0)
		return NULL;
	mask = o->nslots - 1;
	for (i = (size_t)thread_hash(provider, pid, tid) & mask; o->slots[i]; i = (i + 1) & mask)
		;
	o->t[o->nt] = (struct order_thread){ provider, pid, tid, 0, UINT64_MAX, 0, 0 };
	o->slots[i] = ++o->nt;
	return &o->t[o->nt - 1];
}

/* ------------------------------------------------------------ copies */

static size_t str_room(struct fxt_string s)
{
	return s.len;
}

static void str_copy(struct fxt_string *s, char **at)
{
	if (s->len)
		memcpy(*at, s->data, s->len);
	s->data = *at;
	*at += s->len;
}

/* A copy of event `rec` whose strings live with it; NULL when out of
 * memory.  Its string refs say "inline": a consumer's cache keyed on a
 * table index must not take them for the table's entries now. */
static struct fxt_record *event_copy(const struct fxt_record *rec)
{
	size_t room = str_room(rec->u.event.category) + str_room(rec->u.event.name);
	struct fxt_record *c;
	char *at;

	for (unsigned i = 0; i < rec->nargs; i++) {
		room += str_room(rec->args[i].name);
		if (rec->args[i].type == FXT_ARG_STRING)
			room += str_room(rec->args[i].v.s);
	}
	c = malloc(sizeof(*c) + room);
	if (!c)
		return NULL;
	*c = *rec;
	at = (char *)(c + 1);
	str_copy(&c->u.event.category, &at);
	str_copy(&c->u.event.name, &at);
	for (unsigned i = 0; i < c->nargs; i++) {
		str_copy(&c->args[i].name, &at);
		if (c->args[i].type == FXT_ARG_STRING)
			str_copy(&c->args[i].v.s, &at);
	}
	c->u.event.category_ref =
	    c->u.event.category.len ? FXT_STRREF_INLINE(c->u.event.category.len) : FXT_STRREF_EMPTY;
	c->u.event.name_ref =
	    c->u.event.name.len ? FXT_STRREF_INLINE(c->u.event.name.len) : FXT_STRREF_EMPTY;
	return c;
}

static void order_free(struct fxt__order *o)
{
	for (size_t i = 0; i < o->nlate; i++)
		free(o->late[i]);
	free(o->late);
	free(o->t);
	free(o->slots);
	free(o->by_thread);
	free(o->given_at);
	free(o);
}

void fxt__order_put(struct fxt__order *o)
{
	if (o && --o->refs == 0)
		order_free(o);
}

static int by_time(const void *a, const void *b, void *ctx)
{
	const struct fxt__order *o = ctx;
	const struct fxt_record *x = o->late[*(const size_t *)a];
	const struct fxt_record *y = o->late[*(const size_t *)b];

	if (x->u.event.ts != y->u.event.ts)
		return x->u.event.ts < y->u.event.ts ? -1 : 1;
	return x->offset < y->offset ? -1 : 1;
}

/* Whether an event is one that is paired by its order: a duration begin
 * or end.  Complete events carry both their times (the tools nest them by
 * their intervals, in any order: writers often give them children first);
 * flows are paired by id. */
static bool pairs(const struct fxt_record *rec)
{
	return rec->u.event.type == FXT_EVENT_DURATION_BEGIN ||
	       rec->u.event.type == FXT_EVENT_DURATION_END;
}

/* The first pass over the reader `scan` (fresh, at the start of the same
 * bytes), up to the event at offset `last` (the last one skim() found
 * late): *out is NULL when no event is late.  0 or -ENOMEM; damage ends
 * the pass where it is (the reader's own pass reports it). */
static int first_pass(struct fxt_reader *scan, uint64_t last, struct fxt__order **out)
{
	struct fxt__order *o = calloc(1, sizeof(*o));
	struct fxt_record rec;
	size_t *fill = NULL;
	int err = 0;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	o->refs = 1;
	while (!err && fxt_reader_next(scan, &rec) > 0) {
		struct order_thread *t;

		if (rec.offset > last)
			break;
		if (rec.type != FXT_RECORD_EVENT)
			continue;
		t = thread_of(o, rec.provider_id, rec.u.event.pid, rec.u.event.tid, true);
		if (!t) {
			err = -ENOMEM;
		} else if (rec.u.event.ts >= t->max_ts) {
			t->max_ts = rec.u.event.ts;
		} else if (!pairs(&rec)) {
			/* Not moved. */
		} else if (o->nlate == ORDER_MAX_LATE) {
			o->left++;
		} else {
			if (fxt__grow((void **)&o->late, &o->cap, o->nlate + 1, sizeof(*o->late)) <
			    0)
				err = -ENOMEM;
			else if (!(o->late[o->nlate] = event_copy(&rec)))
				err = -ENOMEM;
			else
				o->nlate++, t->n++;
		}
	}
	if (!err && o->nlate) {
		/* Group by thread (counting sort), then by time within each. */
		o->by_thread = malloc(o->nlate * sizeof(*o->by_thread));
		o->given_at = malloc(o->nlate * sizeof(*o->given_at));
		fill = calloc(o->nt, sizeof(*fill));
		if (!o->by_thread || !o->given_at || !fill) {
			err = -ENOMEM;
		} else {
			size_t at = 0;
			for (size_t i = 0; i < o->nlate; i++)
				o->given_at[i] = ORDER_UNGIVEN;
			for (size_t k = 0; k < o->nt; k++) {
				o->t[k].first = fill[k] = at;
				at += o->t[k].n;
			}
			for (size_t i = 0; i < o->nlate; i++) {
				const struct fxt_record *l = o->late[i];
				struct order_thread *t = thread_of(
				    o, l->provider_id, l->u.event.pid, l->u.event.tid, false);
				o->by_thread[fill[t - o->t]++] = i;
			}
			for (size_t k = 0; k < o->nt; k++)
				qsort_r(o->by_thread + o->t[k].first, o->t[k].n, sizeof(size_t),
					by_time, o);
		}
	}
	free(fill);
	if (err || !o->nlate) {
		order_free(o);
		return err;
	}
	*out = o;
	return 0;
}

/* A skim's state: the threads seen and each one's latest time (the last
 * event's thread's in li, lmax), what was found.  A part skim (the second
 * half of a split file, skim_part()) starts where the thread table and
 * the provider are not known: its threads are keys, (0, pid, tid) for a
 * thread it knows (inline, or by a thread record of its own), (1, ref, 0)
 * for a ref into the table as it stood at its start; each key also keeps
 * the time of its first begin or end not late within the part (first_be,
 * lfirst), which is late in the whole file when the first half left its
 * thread's latest time after it. */
struct skim {
	struct fxt__order *o;
	size_t li; /* the last event's thread, in o->t (SIZE_MAX: none yet) */
	uint32_t lprov;
	uint64_t lpid, ltid, lmax, lfirst;
	int found;
	uint64_t last;
	bool ended;	  /* at the reader's end, or stopped by damage or a read error */
	bool part, abort; /* a part skim; stopped at a provider record (no use) */
	uint64_t base;	  /* a part's offset in the stream */
};

/* The switch to another thread: the last one's latest time (and first
 * begin or end) kept in its slot, thread (prov, pid, tid)'s taken.  0 or
 * -ENOMEM. */
static inline int skim_thread(struct skim *s, uint32_t prov, uint64_t pid, uint64_t tid)
{
	struct order_thread *t = thread_of(s->o, prov, pid, tid, true);

	if (!t)
		return -ENOMEM;
	if (s->li != SIZE_MAX) {
		s->o->t[s->li].max_ts = s->lmax;
		s->o->t[s->li].first_be = s->lfirst;
	}
	s->li = (size_t)(t - s->o->t);
	s->lmax = t->max_ts;
	s->lfirst = t->first_be;
	s->lprov = prov, s->lpid = pid, s->ltid = tid;
	return 0;
}

static bool is_be(unsigned etype)
{
	return etype == FXT_EVENT_DURATION_BEGIN || etype == FXT_EVENT_DURATION_END;
}

/* skim_run()'s look at one event of the thread it keeps in locals: a begin
 * or end before its latest time is late (found, *last its offset). */
#define SKIM_EVENT(part, ts, etype, off)                                    \
	do {                                                                \
		if ((ts) >= lmax) {                                         \
			lmax = (ts);                                        \
			if ((part) && lfirst == UINT64_MAX && is_be(etype)) \
				lfirst = (ts);                              \
		} else if (is_be(etype)) {                                  \
			s->found = 1, s->last = (off);                      \
		}                                                           \
	} while (0)

/* Skims the reader `scan` (skim()'s way) into s from where it is, up to
 * stream offset `stop` (a record at or after it is not read: the reader
 * is left at the first record at or after `stop`) or its end (s->ended).
 * `part`: a part skim (struct skim).  0 or -ENOMEM. */
static inline __attribute__((always_inline)) int skim_run(struct fxt_reader *scan, struct skim *s,
							  uint64_t stop, const bool part)
{
	struct fxt_record rec;
	uint64_t lmax = s->lmax, lfirst = s->lfirst;
	int rc;

	for (;;) {
		uint64_t off, ts, pid, tid;
		uint32_t prov;
		unsigned etype;

		if (__builtin_expect(scan->started && !scan->skip_left, 1)) {
			/* The events held whole in the window, in a loop of their
			 * own: the one thread, the table and the provider stay
			 * the same until a record that is no event. */
			const uint8_t *p = scan->win + scan->pos, *end = scan->win + scan->end;
			const struct thread_entry *tab = scan->cur->threads;
			size_t ln = 0, lb = 0; /* the last event's size, in words and bytes */
			unsigned lref = 256;   /* and its thread ref (none yet) */

			if (stop - scan->win_off < scan->end)
				end = scan->win + (stop - scan->win_off);
			prov = part ? 0 : scan->cur->id;
			while (end - p >= 8) {
				uint64_t h = fxt__load64(p);
				unsigned n = fxt_header_size(h),
					 ref = (unsigned)fxt_bits(h, 24, 31);

				if (fxt_header_type(h) != FXT_RECORD_EVENT ||
				    n < (ref == FXT_THREADREF_INLINE ? 4u : 2u) ||
				    (size_t)(end - p) < (size_t)n * 8)
					break;
				ts = fxt__load64(p + 8);
				/* the last event's ref: its thread (the table stays) */
				if (__builtin_expect(ref != lref || ref == FXT_THREADREF_INLINE,
						     0)) {
					lref = ref;
					if (ref == FXT_THREADREF_INLINE) {
						pid = fxt__load64(p + 16);
						tid = fxt__load64(p + 24);
						if (part)
							prov = 0;
					} else if (tab && tab[ref].set) {
						pid = tab[ref].pid;
						tid = tab[ref].tid;
						if (part)
							prov = 0;
					} else if (part) {
						prov = 1, pid = ref,
						tid = 0; /* the table at the start's */
					} else {
						pid = tid = 0; /* as the decoder resolves it */
					}
					if (s->li == SIZE_MAX || prov != s->lprov ||
					    pid != s->lpid || tid != s->ltid) {
						s->lmax = lmax, s->lfirst = lfirst;
						if (skim_thread(s, prov, pid, tid) < 0)
							return -ENOMEM;
						lmax = s->lmax, lfirst = s->lfirst;
					}
				}
				SKIM_EVENT(part, ts, (unsigned)fxt_bits(h, 16, 19),
					   s->base + scan->win_off + (uint64_t)(p - scan->win));
				/* The next header's address from a predicted branch
				 * where the size is the last event's, not from this
				 * load (a chain of dependent loads was the loop's
				 * bound): the asm keeps the branch a branch. */
				if (__builtin_expect(n == ln, 1)) {
					p += lb;
					__asm__ volatile("" ::"r"(p));
				} else {
					ln = n, lb = (size_t)n * 8;
					p += lb;
				}
			}
			scan->pos = (size_t)(p - scan->win);
		}
		if (scan->win_off + scan->pos >= stop && !scan->skip_left)
			break;
		/* Any other record, or an event not held whole: decoded. */
		rc = fxt__next_record(scan, &rec);
		if (rc < 0)
			s->found = 1, s->last = UINT64_MAX;
		if (rc <= 0) {
			s->ended = true;
			break;
		}
		if (rec.type != FXT_RECORD_EVENT) {
			if (part && rec.type == FXT_RECORD_METADATA &&
			    (rec.u.meta.type == FXT_METADATA_PROVIDER_INFO ||
			     rec.u.meta.type == FXT_METADATA_PROVIDER_SECTION)) {
				s->abort = true;
				break;
			}
			continue;
		}
		off = s->base + rec.offset;
		ts = rec.u.event.ts;
		pid = rec.u.event.pid;
		tid = rec.u.event.tid;
		etype = rec.u.event.type;
		prov = rec.provider_id;
		if (part) {
			unsigned ref = (unsigned)fxt_bits(fxt__load64(scan->rec_bytes), 24, 31);

			prov = 0;
			if (ref != FXT_THREADREF_INLINE &&
			    !(scan->cur->threads && scan->cur->threads[ref].set))
				prov = 1, pid = ref, tid = 0;
		}
		if (s->li == SIZE_MAX || prov != s->lprov || pid != s->lpid || tid != s->ltid) {
			s->lmax = lmax, s->lfirst = lfirst;
			if (skim_thread(s, prov, pid, tid) < 0)
				return -ENOMEM;
			lmax = s->lmax, lfirst = s->lfirst;
		}
		SKIM_EVENT(part, ts, etype, off);
	}
	s->lmax = lmax, s->lfirst = lfirst;
	if (s->li != SIZE_MAX) {
		s->o->t[s->li].max_ts = lmax;
		s->o->t[s->li].first_be = lfirst;
	}
	return 0;
}

static int skim_start(struct skim *s, uint64_t base, bool part)
{
	*s = (struct skim){ .li = SIZE_MAX, .base = base, .part = part };
	return (s->o = calloc(1, sizeof(*s->o))) ? 0 : -ENOMEM;
}

/* ------------------------------------------------------ the skim split */

/* A file of this size or more is skimmed in two halves, on two CPUs. */
#define SPLIT_MIN (32u << 20)
/* Records in a row that must look whole from a place for the second half
 * to start there, and how far past the middle a place is looked for. */
#define SPLIT_RECS 64
#define SPLIT_SCAN (1u << 20)

/* Whether a record plausibly starts at p (at most `left` bytes): a record
 * type, a size, and for an event a type and its thread and time words;
 * its size in bytes, or 0. */
static size_t plausible(const uint8_t *p, size_t left)
{
	uint64_t h;
	unsigned type, n;

	if (left < 8)
		return 0;
	h = fxt__load64(p);
	type = fxt_header_type(h);
	n = fxt_header_size(h);
	if (type > FXT_RECORD_LOG || n == 0 || (size_t)n * 8 > left)
		return 0;
	if (type == FXT_RECORD_EVENT &&
	    (fxt_bits(h, 16, 19) > FXT_EVENT_FLOW_END ||
	     n < (fxt_bits(h, 24, 31) == FXT_THREADREF_INLINE ? 4u : 2u)))
		return 0;
	return (size_t)n * 8;
}

/* Where the second half of mem[0, len) starts: from the first offset past
 * the middle from which SPLIT_RECS records in a row look whole, the end of
 * those (0: none within SPLIT_SCAN).  Only a guess: a walk from the wrong
 * word soon falls in step with the records (a size field leads it onto a
 * record's start, and from there it follows the file's own chain), so the
 * records it walked first are left to the first half, whose skim, reaching
 * the place, tells whether a record starts there. */
static size_t split_point(const uint8_t *mem, size_t len)
{
	size_t from = (len / 2) & ~(size_t)7;

	for (size_t g = from; g < len && g - from < SPLIT_SCAN; g += 8) {
		size_t at = g, k = 0, n;

		while (k < SPLIT_RECS && (n = plausible(mem + at, len - at)) != 0)
			at += n, k++;
		if (k == SPLIT_RECS && at < len)
			return at;
	}
	return 0;
}

/* Whether the reader `scan` (fresh) is skimmed in two halves: plain
 * bytes in memory (not compressed ones), large, two CPUs. */
static bool split_wanted(const struct fxt_reader *scan)
{
	return scan->src == SRC_MEM && scan->codec == CODEC_NONE && scan->end >= SPLIT_MIN &&
	       sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

struct skim_part {
	const uint8_t *mem;
	size_t len; /* mem[0, len): the part, at stream offset s.base */
	struct skim s;
	int err;
};

static void *skim_part(void *arg)
{
	struct skim_part *sp = arg;
	struct fxt_reader *scan = NULL;

	sp->err = fxt_reader_open_mem(&scan, sp->mem, sp->len, 0);
	if (!sp->err)
		sp->err = skim_run(scan, &sp->s, UINT64_MAX, true);
	fxt_reader_free(scan);
	return NULL;
}

/* The second half's skim joined to the first's (a, its reader `scan` at
 * the second half's start): false when it is no use (a provider record in
 * it, or two of its keys are one thread: the first half goes on). */
static bool skim_join(struct skim *a, const struct fxt_reader *scan, const struct skim *b)
{
	const struct thread_entry *tab = scan->cur->threads;
	struct fxt__order *seen;
	bool ok = !b->abort;
	int found = 0;

	if (!ok || !(seen = calloc(1, sizeof(*seen))))
		return false;
	for (size_t k = 0; ok && k < b->o->nt; k++) {
		const struct order_thread *bt = &b->o->t[k];
		uint64_t pid = bt->pid, tid = bt->tid;
		struct order_thread *t;
		size_t nt = seen->nt;

		if (bt->provider == 1) { /* a ref into the table at the start */
			pid = tab && tab[bt->pid].set ? tab[bt->pid].pid : 0;
			tid = tab && tab[bt->pid].set ? tab[bt->pid].tid : 0;
		}
		if (!thread_of(seen, scan->cur->id, pid, tid, true) || seen->nt == nt) {
			ok = false; /* out of memory, or a thread under two keys */
			break;
		}
		t = thread_of(a->o, scan->cur->id, pid, tid, false);
		if (t && bt->first_be < t->max_ts)
			found = 1; /* late in the whole file; where, not known here */
	}
	order_free(seen);
	if (!ok)
		return false;
	if (b->found || found) {
		a->found = 1;
		a->last = found ? UINT64_MAX : b->last;
	}
	a->ended = true;
	return true;
}

/* Whether first_pass() is needed: a pass over the reader `scan` (fresh,
 * at the start of the same bytes) that
 * decodes every record but events, whose header, time and thread it reads
 * in place (the thread table is the decoder's, kept by the thread records
 * it decodes).  Returns 1 with *last at or after the offset of the last
 * begin or end late on its thread (as first_pass() would see it), 0 when
 * none is, or -ENOMEM.
 *
 * It sees the events that first_pass() sees (an event the decoder would
 * stop at for damage in its strings or arguments counts here, and what
 * follows it): more events can only make more of them late, so "none"
 * is exact.  Damage that stops it, or a read error, says 1: first_pass()
 * then decides, as it did before the skim.
 *
 * Bytes in memory of SPLIT_MIN or more, with two CPUs, are skimmed in two
 * halves at once: the second from a place past the middle where records
 * seem to start (split_point()), on a thread of its own, while this one
 * skims up to there; if a record starts there, the halves are joined
 * (skim_join()), else this one goes on.  A begin or end late only against
 * the first half's times sets *last to the end (first_pass() then decodes
 * the whole file: it finds the same ones). */
static int skim(struct fxt_reader *scan, uint64_t *last)
{
	struct skim a;
	struct skim_part *sp = NULL;
	uint64_t stop = UINT64_MAX;
	pthread_t th;
	int err;

	if ((err = skim_start(&a, 0, false)) < 0)
		return err;
	if (split_wanted(scan) && (sp = calloc(1, sizeof(*sp))) != NULL) {
		size_t g = split_point(scan->win, scan->end);

		if (!g || skim_start(&sp->s, g, true) < 0 ||
		    (sp->mem = scan->win + g, sp->len = scan->end - g,
		     pthread_create(&th, NULL, skim_part, sp) != 0)) {
			if (sp->s.o)
				order_free(sp->s.o);
			free(sp);
			sp = NULL;
		} else {
			stop = g;
		}
	}
	err = skim_run(scan, &a, stop, false);
	if (sp) {
		pthread_join(th, NULL);
		if (!err && !a.ended &&
		    (scan->win_off + scan->pos != stop || sp->err || !skim_join(&a, scan, &sp->s)))
			err = skim_run(scan, &a, UINT64_MAX, false); /* the rest, here */
		order_free(sp->s.o);
		free(sp);
	}
	order_free(a.o);
	if (err)
		return err;
	*last = a.last;
	return a.found;
}

/* ----------------------------------------------------- the reader's side */

/* Sets r up to give order `o` (a reference taken) from stream offset
 * `from` on, as a reader that came to `from` would: a late event counts
 * as given when it was given before an event ahead of `from` (which every
 * late event ahead of `from` in the file was, and one further on in the
 * file may have been: magic-trace's begins at the end of its file are
 * given before their thread's first event).  Where it was given is known
 * once a reader gave it; one that none did yet counts as given when it
 * is ahead of `from`. */
static int order_attach(struct fxt_reader *r, struct fxt__order *o, uint64_t from)
{
	r->order_done = calloc(o->nlate, 1);
	r->order_cur = calloc(o->nt, sizeof(*r->order_cur));
	if (!r->order_done || !r->order_cur)
		return -ENOMEM;
	o->refs++;
	r->order = o;
	for (size_t i = 0; i < o->nlate; i++) {
		uint64_t at = __atomic_load_n(&o->given_at[i], __ATOMIC_RELAXED);

		r->order_done[i] = at == ORDER_UNGIVEN ? o->late[i]->offset < from : at < from;
		r->order_next += o->late[i]->offset < from;
	}
	return 0;
}

int fxt__order_clone(const struct fxt_reader *r, struct fxt_reader *c, uint64_t offset)
{
	c->late_left = r->late_left;
	c->marked = r->marked;
	c->check_said = r->check_said;
	c->check_past = r->check_past;
	if (r->check) {
		/* Its own latest times, from `offset` on. */
		if (!(c->check = calloc(1, sizeof(*c->check))))
			return -ENOMEM;
		c->check->refs = 1;
	}
	return r->order ? order_attach(c, r->order, offset) : 0;
}

/* A copy of what is left to read of `fd` (a pipe, a terminal) in an
 * unlinked file of $TMPDIR (else /tmp), at its start: a descriptor, or
 * -errno. */
static int copy_input(int fd)
{
	const char *dir = getenv("TMPDIR");
	char path[4096], *buf = malloc(1u << 16);
	int out = -1, err = 0;

	if (!buf)
		return -ENOMEM;
	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/fxt-input-XXXXXX", dir);
	out = mkostemp(path, O_CLOEXEC);
	if (out < 0) {
		free(buf);
		return -errno;
	}
	unlink(path);
	for (;;) {
		ssize_t got = read(fd, buf, 1u << 16), put = 0;
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got < 0 ? -errno : 0;
			break;
		}
		while (put < got) {
			ssize_t n = write(out, buf + put, (size_t)(got - put));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err = n < 0 ? -errno : -EIO;
				break;
			}
			put += n;
		}
		if (err)
			break;
	}
	free(buf);
	if (!err && lseek(out, 0, SEEK_SET) < 0)
		err = -errno;
	if (err) {
		close(out);
		return err;
	}
	return out;
}

/* A fresh reader, in file order, at the start of the bytes to read
 * (memory `mem`, else `fd` from offset `at`). */
static int scan_open(struct fxt_reader **scan, const void *mem, size_t len, int fd, off_t at)
{
	if (mem)
		return fxt_reader_open_mem(scan, mem, len, 0);
	if (lseek(fd, at, SEEK_SET) < 0)
		return -errno;
	return fxt_reader_open_fd(scan, fd, 0);
}

/* The skim's pages made present ahead of it, on another CPU: on a file
 * in the page cache, a third of a lone skim's time was the kernel's,
 * mapping the pages as it touched them (faults), and more unmapping them
 * after; a thread of its own does both beside the skim's reading.
 * MADV_POPULATE_READ (Linux 5.14) a chunk at a time, else a read of each
 * page; it stops when the pass is over, then unmaps the file's mapping
 * (the pass's own: not a caller's memory, which it might read after the
 * caller let it go) and ends: fxt__order_open() does not wait. */
#define PREFAULT_MIN   (64u << 20) /* less is read before a thread starts */
#define PREFAULT_CHUNK (4u << 20)

struct prefault {
	const char *base;
	size_t len;
	bool sweep;  /* false: the skim is split, each half maps its own pages */
	bool stop;   /* the pass is over (atomic: the loop reads it unlocked) */
	void *unmap; /* then: the mapping to remove, unmap_len bytes */
	size_t unmap_len;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *prefault_run(void *arg)
{
	struct prefault *pf = arg;
	long page = sysconf(_SC_PAGESIZE);
	const char *base = (const char *)((uintptr_t)pf->base & ~(uintptr_t)(page - 1));
	size_t len = pf->sweep ? pf->len + (size_t)(pf->base - base) : 0;
	bool touch = false;

	for (size_t at = 0; at < len && !__atomic_load_n(&pf->stop, __ATOMIC_RELAXED);
	     at += PREFAULT_CHUNK) {
		size_t n = len - at < PREFAULT_CHUNK ? len - at : PREFAULT_CHUNK;
#ifdef MADV_POPULATE_READ
		if (!touch && madvise((void *)(base + at), n, MADV_POPULATE_READ) == 0)
			continue;
		if (!touch && errno != EINVAL)
			break; /* an error reading the file: the skim says it */
#endif
		touch = true;
		for (size_t k = 0; k < n; k += (size_t)page)
			(void)*(const volatile char *)(base + at + k);
	}
	pthread_mutex_lock(&pf->mu);
	while (!__atomic_load_n(&pf->stop, __ATOMIC_RELAXED))
		pthread_cond_wait(&pf->cv, &pf->mu);
	pthread_mutex_unlock(&pf->mu);
	if (pf->unmap)
		munmap(pf->unmap, pf->unmap_len);
	pthread_mutex_destroy(&pf->mu);
	pthread_cond_destroy(&pf->cv);
	free(pf);
	return NULL;
}

/* A thread over mem[0, len) when it is large and there is a CPU for it;
 * NULL when none.  When the skim is split (split_wanted()), its halves
 * take the CPUs and map their own pages (the faults' mapping around each
 * costs less CPU than MADV_POPULATE_READ's page by page: 55 against 80 ms
 * for 724 MB here), and the thread only unmaps them after. */
static struct prefault *prefault_start(const void *mem, size_t len, const struct fxt_reader *scan)
{
	struct prefault *pf;
	pthread_t th;

	if (!mem || len < PREFAULT_MIN || sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    !(pf = calloc(1, sizeof(*pf))))
		return NULL;
	pf->base = mem;
	pf->len = len;
	pf->sweep = !split_wanted(scan);
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	if (pthread_create(&th, NULL, prefault_run, pf) != 0) {
		pthread_mutex_destroy(&pf->mu);
		pthread_cond_destroy(&pf->cv);
		free(pf);
		return NULL;
	}
	pthread_detach(th);
	return pf;
}

/* The pass is over: pf (when not NULL) stops and ends, removing the
 * mapping `map` (len bytes) on its way.  Returns whether it takes it. */
static bool prefault_stop(struct prefault *pf, void *map, size_t len)
{
	if (!pf)
		return false;
	pthread_mutex_lock(&pf->mu);
	if (map != MAP_FAILED) {
		pf->unmap = map;
		pf->unmap_len = len;
	}
	__atomic_store_n(&pf->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	return map != MAP_FAILED;
}

int fxt__order_open(struct fxt_reader *r, const void *mem, size_t len, int fd)
{
	struct fxt_reader *scan = NULL;
	struct fxt__order *o = NULL;
	struct prefault *pf = NULL;
	void *map = MAP_FAILED;
	size_t maplen = 0;
	uint64_t last = 0;
	struct stat st;
	off_t at = 0;
	int err;

	if (!mem) {
		/* What cannot be read twice is read once, into a file. */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		    (at = lseek(fd, 0, SEEK_CUR)) < 0) {
			if ((r->copy_fd = copy_input(fd)) < 0) {
				err = r->copy_fd;
				r->copy_fd = -1;
				return err;
			}
			fd = r->copy_fd;
			at = 0;
			if (fstat(fd, &st) != 0)
				st.st_size = 0;
		}
		/* A file's bytes are read in place, mapped, not copied into
		 * a window (the second pass, when there is one, too). */
		if (st.st_size > at && (uint64_t)st.st_size <= SIZE_MAX)
			map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			maplen = (size_t)st.st_size;
			madvise(map, maplen, MADV_SEQUENTIAL);
			mem = (const char *)map + at;
			len = maplen - (size_t)at;
		}
	}
	err = scan_open(&scan, mem, len, fd, at);
	if (!err && fxt_reader_starts_time_ordered(scan)) {
		/* fxtrace's mark: no pass; the reader's own checks. */
		r->marked = true;
		if (!(r->check = calloc(1, sizeof(*r->check))))
			err = -ENOMEM;
		else
			r->check->refs = 1;
	} else if (!err) {
		fxt_reader_free(scan);
		err = scan_open(&scan, mem, len, fd, at);
		if (!err &&
		    map != MAP_FAILED) /* its own: the thread may read it until it unmaps it */
			pf = prefault_start(mem, len, scan);
		if (!err)
			err = skim(scan, &last);
	}
	if (err == 1) {
		/* Some are late: copies of them, decoded. */
		fxt_reader_free(scan);
		err = scan_open(&scan, mem, len, fd, at);
		if (!err)
			err = first_pass(scan, last, &o);
	}
	fxt_reader_free(scan); /* not the descriptor: it is not its own */
	if (prefault_stop(pf, map, maplen)) {
		; /* its thread unmaps it */
	} else if (map != MAP_FAILED && !err) {
		/* No thread reads it: the source's map (fxt/source.c's
		 * map_file()), not made again, the pass's pages mapped. */
		r->premap = map;
		r->premap_size = maplen;
	} else if (map != MAP_FAILED) {
		munmap(map, maplen);
	} else if (!mem && lseek(fd, at, SEEK_SET) < 0 && !err) {
		err = -errno;
	}
	if (!err && o) {
		r->late_left = o->left;
		err = order_attach(r, o, 0);
	}
	fxt__order_put(o); /* r keeps its own reference */
	return err;
}

/* The late event of r's thread `t` to give before an event at `ts` (at
 * offset `off`), or NULL; marks it given, and notes where. */
static const struct fxt_record *due(struct fxt_reader *r, const struct order_thread *t, uint64_t ts,
				    uint64_t off)
{
	const struct fxt__order *o = r->order;
	size_t k = (size_t)(t - o->t), *cur = &r->order_cur[k];

	while (*cur < t->n && r->order_done[o->by_thread[t->first + *cur]])
		++*cur;
	if (*cur == t->n)
		return NULL;
	size_t i = o->by_thread[t->first + *cur];
	if (o->late[i]->u.event.ts >= ts)
		return NULL;
	r->order_done[i] = 1;
	++*cur;
	if (__atomic_load_n(&o->given_at[i], __ATOMIC_RELAXED) == ORDER_UNGIVEN)
		__atomic_store_n(&o->given_at[i], off, __ATOMIC_RELAXED);
	return o->late[i];
}

bool fxt_reader_starts_time_ordered(struct fxt_reader *r)
{
	static const char mark[] = FXT_TIME_ORDERED_MARK;
	struct fxt_record rec;

	if (fxt__next_record(r, &rec) <= 0 || !r->saw_magic || fxt__next_record(r, &rec) <= 0 ||
	    rec.type != FXT_RECORD_STRING)
		return false;
	return rec.u.string.str.len == sizeof(mark) - 1 &&
	       memcmp(rec.u.string.str.data, mark, sizeof(mark) - 1) == 0;
}

bool fxt_reader_time_ordered(const struct fxt_reader *r)
{
	return r->marked;
}

/* A marked archive's record `rec`, as the reader gives it: a begin or end
 * before its thread's latest time is counted as late, left where it is
 * (paired in file order) and said once; a second magic record ends the
 * claim of the mark. */
void fxt__check_order(struct fxt_reader *r, const struct fxt_record *rec)
{
	struct fxt__order *c = r->check;
	struct order_thread *t;

	if (rec->type == FXT_RECORD_METADATA) {
		if (rec->u.meta.type == FXT_METADATA_TRACE_INFO &&
		    rec->u.meta.trace_info_type == FXT_TRACE_INFO_MAGIC && rec->offset > 0)
			r->check_past = true;
		return;
	}
	if (rec->type != FXT_RECORD_EVENT)
		return;
	t = r->check_t < c->nt ? &c->t[r->check_t] : NULL;
	if (!t || t->provider != rec->provider_id || t->pid != rec->u.event.pid ||
	    t->tid != rec->u.event.tid) {
		t = thread_of(c, rec->provider_id, rec->u.event.pid, rec->u.event.tid, true);
		if (!t) {
			/* Out of memory: no more checks. */
			fxt__order_put(c);
			r->check = NULL;
			r->check_max = NULL;
			return;
		}
		r->check_t = (size_t)(t - c->t);
		/* For decode.c's plain events (thread_of() may have moved
		 * every thread: only here). */
		r->check_max = &t->max_ts;
		r->check_prov = t->provider;
		r->check_pid = t->pid;
		r->check_tid = t->tid;
	}
	if (rec->u.event.ts >= t->max_ts) {
		t->max_ts = rec->u.event.ts;
		return;
	}
	if (!pairs(rec))
		return;
	r->late_left++;
	if (!r->check_said) {
		r->check_said = true;
		if (r->check_past)
			fxt__diag(r, FXT_DIAG_INFO, rec->offset,
				  "duration %s out of time order on its thread after a second "
				  "magic record, which the time-order mark at the start does not "
				  "cover: paired in file order",
				  rec->u.event.type == FXT_EVENT_DURATION_BEGIN ? "begin" : "end");
		else
			fxt__diag(r, FXT_DIAG_WARNING, rec->offset,
				  "duration %s out of time order on its thread although the "
				  "archive says it is in order: paired in file order",
				  rec->u.event.type == FXT_EVENT_DURATION_BEGIN ? "begin" : "end");
	}
}

int fxt_reader_next(struct fxt_reader *r, struct fxt_record *rec)
{
	const struct fxt__order *o = r->order;

	for (;;) {
		int rc = fxt__next_record(r, rec);
		const struct order_thread *t;
		const struct fxt_record *l;

		r->order_again = false;
		r->rec_pos = rec->offset;
		if (__builtin_expect(!o, 1)) {
			if (__builtin_expect(r->check != NULL, 0) && rc > 0)
				fxt__check_order(r, rec);
			return rc;
		}
		if (rc <= 0 || rec->type != FXT_RECORD_EVENT)
			return rc;
		/* One of the late events, where the file has it: given already,
		 * unless a clone started after where it belonged. */
		while (r->order_next < o->nlate && o->late[r->order_next]->offset < rec->offset)
			r->order_next++;
		if (r->order_next < o->nlate && o->late[r->order_next]->offset == rec->offset) {
			size_t i = r->order_next++;
			if (r->order_done[i])
				continue;
			r->order_done[i] = 1;
			return rc;
		}
		t = thread_of((struct fxt__order *)o, rec->provider_id, rec->u.event.pid,
			      rec->u.event.tid, false);
		if (!t || !t->n || !(l = due(r, t, rec->u.event.ts, rec->offset)))
			return rc;
		/* Back to this event's start (the window still holds it), and
		 * the late one first; its diagnostics were said. */
		r->pos -= (size_t)rec->nwords * 8;
		r->rec_bytes = NULL;
		r->order_again = true;
		*rec = *l;
		return 1;
	}
}

size_t fxt_reader_next_plain(struct fxt_reader *r, struct fxt_plain *ev, size_t n)
{
	if (r->order || r->failed || r->skip_left || !r->started || (r->flags & FXT_READER_RAW))
		return 0;
	return fxt__next_plain(r, ev, n);
}

uint64_t fxt_reader_record_pos(const struct fxt_reader *r)
{
	return r->rec_pos;
}

uint64_t fxt_reader_late(const struct fxt_reader *r, bool *sorted)
{
	if (sorted)
		*sorted = !r->late_left;
	return (r->order ? r->order->nlate : 0) + r->late_left;
}
