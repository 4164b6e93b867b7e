/* The end state (include/fxt/endstate.h): written at the end of a plain
 * archive of three threads (nested complete events, begin/end pairs,
 * arguments, instants, log lines and their copies, summaries, the
 * writer's tables forgotten between threads as fxt-run does) from the
 * places its writer's caller hands it (fxt_writer_end_place(): before a
 * thread's top-level calls, main the call open there, as fxt-run's
 * converter places a thread before a drain of its recon), read back; the
 * archive's last items from it (callmerge_end_items()) are the last items
 * of the merge from the start, the same lines, numbered from the end (the
 * writer does not count them); none for a compressed archive (not yet),
 * without the flag, without the mark of time order, or when a thread with
 * records has no place; and a damaged or cut trailer or state (bytes of
 * the last 4 KiB flipped: each of the last 200, then every 61st; cuts of
 * the end) is refused or read safely, never a crash. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/endstate.h>
#include <fxt/format.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/calls/callmerge.h"
#include "tools/calls/callstream.h"

#define PID 7

struct gen {
	struct fxt_writer *w;
	uint64_t rng, now, tid;
	int rc;
};

static uint64_t rnd(struct gen *g, uint64_t n)
{
	g->rng = g->rng * 6364136223846793005u + 1442695040888963407u;
	return (g->rng >> 33) % n;
}

static void ev(struct gen *g, enum fxt_event_type type, const char *cat, const char *name,
	       uint64_t ts, uint64_t end, int64_t arg)
{
	struct fxt_event e = { 0 };
	struct fxt_arg a[1];

	if (g->rc)
		return;
	e.type = type;
	e.ts = ts;
	e.extra = end;
	e.thread = fxt_writer_thread(g->w, PID, g->tid);
	e.category = fxt_writer_cstring(g->w, cat);
	e.name = fxt_writer_cstring(g->w, name);
	if (arg) {
		a[0].type = FXT_ARG_INT64;
		a[0].name = fxt_writer_cstring(g->w, "retval");
		a[0].v.i64 = arg;
		e.args = a;
		e.nargs = 1;
	}
	g->rc = fxt_writer_event(g->w, &e);
}

static const char *const names[] = { "parse", "eval", "emit", "hash", "alloc", "io" };

/* A call at g->now: complete events in start order (children after
 * their parent), now and then a begin/end pair, instants and log lines. */
static void call(struct gen *g, unsigned depth)
{
	uint64_t start = g->now, kids = depth < 6 ? rnd(g, 4) : 0;
	const char *name = names[rnd(g, 6)];
	bool pair = rnd(g, 16) == 0;
	uint64_t end;

	g->now += 1 + rnd(g, 5);
	if (pair) {
		ev(g, FXT_EVENT_DURATION_BEGIN, "app", name, start, 0, 0);
		for (uint64_t k = 0; k < kids; k++)
			call(g, depth + 1);
		g->now += 2;
		ev(g, FXT_EVENT_DURATION_END, "app", name, g->now, 0, rnd(g, 2) ? 42 : 0);
		g->now++;
		return;
	}
	/* the complete event comes first: its end is worked out ahead */
	int64_t arg = rnd(g, 4) ? 0 : 7;
	struct gen ahead = *g;
	struct fxt_writer *w = g->w;

	ahead.w = NULL;
	ahead.rc = 1; /* nothing written */
	for (uint64_t k = 0; k < kids; k++)
		call(&ahead, depth + 1);
	end = ahead.now + 1;
	ev(g, FXT_EVENT_DURATION_COMPLETE, "app", name, start, end, arg);
	for (uint64_t k = 0; k < kids; k++)
		call(g, depth + 1);
	switch (rnd(g, 12)) {
	case 0:
		ev(g, FXT_EVENT_INSTANT, "app", "tick", g->now, 0, 0);
		break;
	case 1:
		if (!g->rc)
			g->rc =
			    fxt_writer_log(w, g->now, fxt_writer_thread(w, PID, g->tid), "line", 4);
		ev(g, FXT_EVENT_INSTANT, "log", "line", g->now, 0, 0);
		break;
	case 2:
		ev(g, FXT_EVENT_INSTANT, FXT_SHORT_CATEGORY, "short", g->now, 0, 0);
		break;
	}
	g->now = end + 1;
}

/* rnd() is the same ahead and written: the ahead pass draws what the
 * written pass draws, so both make the same calls.  With places, each
 * thread's but thread `skip`'s (3: none left out). */
static int build(const char *path, unsigned flags, bool mark, const uint64_t *calls, bool places,
		 unsigned skip)
{
	struct gen g = { .rng = 1 };
	int rc;

	if ((rc = fxt_writer_open_path(&g.w, path, flags)) < 0)
		return rc;
	g.rc = fxt_writer_magic(g.w);
	if (!g.rc && mark)
		g.rc = fxt_writer_time_ordered(g.w);
	if (!g.rc)
		g.rc = fxt_writer_provider(g.w, PID, "test");
	if (!g.rc)
		g.rc = fxt_writer_initialization(g.w, 1000000000);
	fxt_writer_end_head(g.w);
	for (unsigned t = 0; t < 3 && !g.rc; t++) {
		uint64_t first, next;

		fxt_writer_forget(g.w);
		g.tid = 100 + t;
		g.now = first = 1000 + 3 * t;
		if (places && t != skip)
			g.rc = fxt_writer_end_place(g.w, PID, g.tid, NULL, 0, false, 0, 0);
		next = fxt_writer_bytes(g.w) + 64 * 1024;
		ev(&g, FXT_EVENT_DURATION_BEGIN, "app", "main", g.now++, 0, 0);
		for (uint64_t i = 0; i < calls[t] && !g.rc; i++) {
			/* main open before a top-level call, no item before later
			 * than its start */
			struct fxt_end_frame f = { .begin = true,
						   .ts = first,
						   .category = "app",
						   .category_len = 3,
						   .name = "main",
						   .name_len = 4 };

			if (places && t != skip && fxt_writer_bytes(g.w) >= next) {
				g.rc = fxt_writer_end_place(g.w, PID, g.tid, &f, 1, false, g.now,
							    g.now);
				next = fxt_writer_bytes(g.w) + 64 * 1024;
			}
			call(&g, 1);
		}
		if (t != 1) /* thread 101's main is left open */
			ev(&g, FXT_EVENT_DURATION_END, "app", "main", g.now++, 0, 0);
		if (!g.rc)
			g.rc = fxt_writer_end_thread(g.w, PID, g.tid, first, g.now,
						     fxt_writer_bytes(g.w) - 8);
	}
	rc = g.rc;
	if (rc) {
		fxt_writer_free(g.w);
		return rc;
	}
	return fxt_writer_close(g.w);
}

/* ------------------------------------------------------------ the lines */

struct lines {
	char **s;
	uint64_t *index;
	size_t n, cap;
	uint64_t start;
};

static int keep(void *ctx, uint64_t index, const struct callstream_item *it)
{
	struct lines *l = ctx;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	callstream_print(f, it, l->start);
	fclose(f);
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->s = realloc(l->s, l->cap * sizeof(*l->s));
		l->index = realloc(l->index, l->cap * sizeof(*l->index));
		if (!l->s || !l->index)
			bail_out("realloc");
	}
	l->s[l->n] = buf;
	l->index[l->n++] = index;
	return 0;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i]);
	free(l->s);
	free(l->index);
	memset(l, 0, sizeof(*l));
}

/* Every item of the merge from the start (log copies left out). */
static void all_items(const char *path, struct lines *l)
{
	const struct callstream_item *it;
	struct callmerge *m;
	char err[256] = "";
	uint64_t i = 0;

	if (callmerge_open(&m, path, err, sizeof(err)) < 0)
		bail_out(err);
	l->start = callmerge_start_ns(m);
	while (callmerge_next(m, &it) == 1)
		if (!callstream_log_copy(it) && keep(l, i++, it) < 0)
			bail_out("keep");
	callmerge_free(m);
}

static char dir[] = "/tmp/test_endstate.XXXXXX";

static void path_of(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static int copy_file(const char *from, const char *to, size_t cut, long flip)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	unsigned char *d;
	long n;

	if (!a || !b || fseek(a, 0, SEEK_END) || (n = ftell(a)) < 0 || fseek(a, 0, SEEK_SET))
		bail_out("copy");
	d = malloc((size_t)n + 1);
	if (!d || fread(d, 1, (size_t)n, a) != (size_t)n)
		bail_out("copy");
	if (flip >= 0 && flip < n)
		d[flip] ^= 0x5a;
	if (cut > (size_t)n)
		cut = (size_t)n;
	fwrite(d, 1, (size_t)n - cut, b);
	free(d);
	fclose(a);
	return fclose(b);
}

int main(void)
{
	static const uint64_t calls[3] = { 300, 3000, 40 };
	char p[256], q[256];
	struct fxt_end_state *st = NULL, *x;
	struct lines all = { 0 }, tail = { 0 };
	int rc;

	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	path_of(p, sizeof(p), "a.fxt");
	rc = build(p, FXT_WRITER_END_STATE, true, calls, true, 3);
	ok(rc == 0, "a.fxt written (%d)", rc);
	rc = fxt_end_state_load(p, &st);
	ok(rc == 0 && st, "its end state read (%d)", rc);
	if (!st)
		bail_out("no state");
	ASSERT_EQ_U64(st->nthreads, 3, "three threads");
	ok(st->items == FXT_END_ITEMS_UNKNOWN, "the items not counted");
	ok(st->threads[1].at > 256 * 1024 && st->threads[1].nframes == 1 && !st->threads[1].held &&
	       st->threads[1].any_before,
	   "the big thread's place is past its start, main open there (at %" PRIu64 ")",
	   st->threads[1].at);
	ok(st->threads[2].at > 0 && st->threads[2].nframes == 0 && !st->threads[2].any_before,
	   "the small thread's place is its start");

	all_items(p, &all);
	ASSERT_EQ_U64(st->start_ns, all.start, "the archive's first time");
	tail.start = all.start;
	rc = callmerge_end_items(p, st, 500, keep, &tail);
	ok(rc == 500 && tail.n == 500, "500 last items from the state (%d)", rc);
	bool same = tail.n && tail.n <= all.n;
	for (size_t i = 0; same && i < tail.n; i++) {
		size_t j = all.n - tail.n + i;

		/* numbered from the end: the last is FXT_END_ITEMS_UNKNOWN - 1 */
		same = FXT_END_ITEMS_UNKNOWN - tail.index[i] == all.n - j &&
		       strcmp(tail.s[i], all.s[j]) == 0;
		if (!same)
			diag("item %zu: %" PRIu64 " %s vs %zu %s", i, tail.index[i], tail.s[i], j,
			     all.s[j]);
	}
	ok(same, "they are the merge's last items, in its order from the end");
	lines_free(&tail);

	/* none: compressed (not yet), without the flag, without the mark,
	 * a thread with records and no place */
	path_of(q, sizeof(q), "a.fxt.gz");
	ok(build(q, FXT_WRITER_END_STATE, true, calls, true, 3) == 0 &&
	       fxt_end_state_load(q, &x) == -ENOENT && !x,
	   "no state in a compressed archive (not yet)");
	path_of(q, sizeof(q), "b.fxt");
	ok(build(q, 0, true, calls, true, 3) == 0 && fxt_end_state_load(q, &x) == -ENOENT && !x,
	   "no state without FXT_WRITER_END_STATE");
	ok(build(q, FXT_WRITER_END_STATE, false, calls, true, 3) == 0 &&
	       fxt_end_state_load(q, &x) == -ENOENT && !x,
	   "none without the mark of time order");
	ok(build(q, FXT_WRITER_END_STATE, true, calls, true, 1) == 0 &&
	       fxt_end_state_load(q, &x) == -ENOENT && !x,
	   "none when a thread has no place");

	/* damage: every byte of the last 4 KiB flipped, and cuts */
	{
		unsigned crashes = 0, loaded = 0, refused = 0;
		long size;
		FILE *f = fopen(p, "rb");

		if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0)
			bail_out("size");
		fclose(f);
		for (long at = 1; at <= 4096; at += (at < 200 ? 1 : 61)) {
			copy_file(p, q, 0, size - at);
			rc = fxt_end_state_load(q, &x);
			if (rc == 0) {
				loaded++;
				tail.start = all.start;
				callmerge_end_items(q, x, 50, keep, &tail);
				lines_free(&tail);
				fxt_end_state_free(x);
			} else {
				refused++;
			}
		}
		for (size_t cut = 1; cut < 600; cut += 11) {
			copy_file(p, q, cut, -1);
			rc = fxt_end_state_load(q, &x);
			crashes += rc == 0; /* a cut trailer never checks */
			fxt_end_state_free(x);
		}
		ok(crashes == 0, "a cut archive has no state");
		ok(refused > 0, "damaged trailers and states refused (%u refused, %u read)",
		   refused, loaded);
	}
	/* a state's payload, junk, parsed */
	{
		static const unsigned char junk[64] = { 1, 2, 3 };

		ok(fxt_end_state_parse(junk, sizeof(junk), &x) == -ENOENT && !x, "junk refused");
	}

	lines_free(&all);
	fxt_end_state_free(st);
	unlink(p);
	path_of(q, sizeof(q), "a.fxt.gz");
	unlink(q);
	path_of(q, sizeof(q), "b.fxt");
	unlink(q);
	rmdir(dir);
	done_testing();
	return exit_status();
}
