/* Unit tests of the agent's per-thread buffers and spool (agent/tbuf.c,
 * agent/spool.c): reserve and refill, drop accounting, chunk recycling,
 * the FXT_BUFFER_SIZE bound, the exit hook's PAIR.  Past 800 lines: one
 * buffer's cases share its helpers (the chunk chain read back). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "launcher/drain.h"
#include "tests/unit/agent_test_stubs.h"
#include "tests/unit/spool_test_walk.h"

#define EXIT		SPOOL_EXIT_BIT
#define PER_CHUNK(size) (((size)-SPOOL_CHUNK_HEADER_SIZE) / SPOOL_RECORD_SIZE)

struct chunk_info {
	uint64_t off, size;
	uint32_t serial, seq;
};

/* The spool file's chunk chain, in file order. */
static size_t read_chunks(struct chunk_info *v, size_t cap)
{
	struct spool_walk sw;
	size_t n = 0;

	if (spool_walk_open(&sw, agent.spool.path) < 0)
		return 0;
	while (n < cap && spool_walk_next(&sw)) {
		v[n].off = sw.off;
		v[n].size = sw.c.size;
		v[n].serial = sw.c.serial;
		v[n].seq = sw.c.seq;
		n++;
	}
	spool_walk_close(&sw);
	return n;
}

static int chunk_order(const void *a, const void *b)
{
	const struct chunk_info *x = a, *y = b;

	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The chain in each thread's order, as the converter reads it: owned
 * chunks by serial and seq, the later in the file of two with the same (a
 * staged chunk and its copy, spool/format.h). */
static size_t read_chunks_in_order(struct chunk_info *v, size_t cap)
{
	size_t n = read_chunks(v, cap), out = 0;

	qsort(v, n, sizeof(*v), chunk_order);
	for (size_t i = 0; i < n; i++)
		if (v[i].serial &&
		    (i + 1 == n || v[i + 1].serial != v[i].serial || v[i + 1].seq != v[i].seq))
			v[out++] = v[i];
	return out;
}

static uint64_t read_word(uint64_t off)
{
	uint64_t w = 0;
	int fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (pread(fd, &w, sizeof(w), (off_t)off) != (ssize_t)sizeof(w))
			w = ~0ull;
		close(fd);
	}
	return w;
}

static uint64_t file_size(void)
{
	struct stat st;

	return stat(agent.spool.path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Records go to the chunk in order; a full chunk is replaced by the next,
 * numbered in sequence; every record lands in the file. */
static void test_refill(void)
{
	const uint64_t chunk = 4096, per = PER_CHUNK(chunk), n = 1000;
	struct tstate t = { 0 };
	struct chunk_info c[16];
	size_t nc;
	int in_order = 1;

	test_agent_reset(chunk, 1 << 20, 0);
	for (uint64_t i = 0; i < n; i++)
		agent_record(&t, 0x1000 + i);
	ok(t.tb != NULL, "refill: thread buffer created on first hook");
	ASSERT_EQ_U64(t.tb->seq, (n + per - 1) / per, "refill: chunks taken");
	ASSERT_EQ_U64(t.tb->dropped, 0, "refill: nothing dropped");
	ASSERT_EQ_U64(agent.spool.mapped, chunk, "refill: only the current chunk is mapped");
	ASSERT_EQ_U64(file_size(), SPOOL_HEADER_SIZE + 4 * chunk, "refill: spool size");
	nc = read_chunks(c, 16);
	ASSERT_EQ_U64(nc, 4, "refill: four chunks in the chain");
	for (size_t k = 0; k < nc; k++)
		in_order &= c[k].serial == t.tb->serial && c[k].seq == k && c[k].size == chunk;
	ok(in_order, "refill: chunks owned by the thread, in sequence");
	/* Record i is at chunk i / per, slot i % per. */
	for (uint64_t i = 0; i < n; i += 97) {
		uint64_t off = SPOOL_HEADER_SIZE + (i / per) * chunk + SPOOL_CHUNK_HEADER_SIZE +
			       (i % per) * SPOOL_RECORD_SIZE;
		in_order &= read_word(off + 8) == 0x1000 + i;
	}
	ok(in_order, "refill: records at their slots");
	ASSERT_EQ_U64(read_word(SPOOL_HEADER_SIZE + 3 * chunk + SPOOL_CHUNK_HEADER_SIZE +
				(n - 3 * per) * SPOOL_RECORD_SIZE + 8),
		      0, "refill: the slot after the last record is zero");
}

/* Reads chunk `c`'s records in order: checks that they continue the
 * sequence 0x1000 + *next and that only zero slots follow them. */
static bool chunk_continues(int fd, const struct chunk_info *c, uint64_t *next)
{
	size_t n;
	uint64_t *rec = spool_chunk_slots(fd, c->off, c->size, &n);
	bool ended = false, ok = rec != NULL;

	for (size_t i = 0; rec && i < n; i++) {
		if (!rec[2 * i + 1])
			ended = true;
		else if (ended || rec[2 * i + 1] != 0x1000 + *next)
			ok = false;
		else
			++*next;
	}
	free(rec);
	return ok;
}

/* Without fxt-run's drain thread, a thread past its first chunks recycles
 * its chunk in place: one mapping at one offset, each full chunk copied to
 * the end of the spool under its own seq, the mapping emptied and
 * re-stamped.  Read in order, the chunks hold every record once, and no
 * stale record survives. */
static void test_reuse(void)
{
	const uint64_t chunk = 64 << 10, n = 8 * 4031 + 100;
	struct tstate t = { 0 };
	struct chunk_info c[32];
	uint64_t next = 0, staging = 0;
	bool one_place = true, in_seq = true;
	size_t nc;
	int fd;

	test_agent_reset(chunk, 1 << 30, 0);
	for (uint64_t i = 0; i < n; i++) {
		agent_record(&t, 0x1000 + i);
		if (t.tb->seq == 3)
			staging = t.tb->map.off;
		else if (t.tb->seq > 3)
			one_place &= t.tb->map.off == staging;
	}
	ok(one_place && staging, "reuse: the thread keeps one chunk from its third on");
	ASSERT_EQ_U64(t.tb->seq, 9, "reuse: nine chunks in the thread's sequence");
	ASSERT_EQ_U64(agent.spool.mapped, chunk, "reuse: one chunk mapped");
	ASSERT_EQ_U64(file_size(), SPOOL_HEADER_SIZE + 9 * chunk,
		      "reuse: the spool grows by one chunk per chunk filled");
	ASSERT_EQ_U64(agent.spool.granted, 9 * chunk, "reuse: copies count in the budget");
	nc = read_chunks_in_order(c, 32);
	ASSERT_EQ_U64(nc, 9, "reuse: nine chunks, one per seq");
	fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	for (size_t k = 0; k < nc; k++)
		in_seq &= c[k].seq == k && chunk_continues(fd, &c[k], &next);
	close(fd);
	ok(in_seq, "reuse: records in order, nothing stale after them");
	ASSERT_EQ_U64(next, n, "reuse: every record once");
	ASSERT_EQ_U64(t.tb->dropped, 0, "reuse: nothing dropped");
}

/* Under fxt-run, with a drain thread (its passes run here between hooks):
 * the thread fills two staged chunks in turn, and the drain thread copies
 * each full one while the other fills.  `late`: it never passes (stopped,
 * or the machine is busy): the thread leaves its full chunks to it while
 * it has spares (TBUF_SPARES fresh chunks), then copies each chunk itself
 * as it fills it, while it is in the cache, and stays in it.  `stuck`: it
 * took a spare and never finished (killed): the thread goes on in two
 * other chunks in turn, the stuck one left as it is. */
static void test_staged(bool late, bool stuck)
{
	static struct run_bell bell;
	const uint64_t chunk = 64 << 10, n = 12 * 4031 + 50;
	const char *what = stuck ? "staged, stuck" : late ? "staged, late" : "staged";
	struct tstate t = { 0 };
	struct chunk_info c[64];
	struct drain d;
	uint64_t next = 0, places[3] = { 0 }, late_place = 0, stuck_place = 0;
	bool two_places = true, in_seq = true;
	size_t nc;
	int fd;

	memset(&d, 0, sizeof(d));
	test_agent_reset(chunk, 1 << 30, 0);
	agent.spool.bell = &bell;
	agent.spool.bell_tried = true;
	for (uint64_t i = 0; i < n; i++) {
		agent_record(&t, 0x1000 + i);
		if (t.tb->seq >= 3 && t.tb->seq <= 4)
			places[t.tb->seq - 2] = t.tb->map.off;
		if (t.tb->seq > 4 && !late && !stuck)
			two_places &= t.tb->map.off == places[1 + (t.tb->seq + 1) % 2];
		else if (late && t.tb->seq == 3 + TBUF_SPARES)
			late_place = t.tb->map.off;
		else if (late && t.tb->seq > 3 + TBUF_SPARES)
			two_places &= t.tb->map.off == late_place;
		else if (stuck && t.tb->seq > 7)
			two_places &= t.tb->map.off != stuck_place;
		if (stuck && t.tb->seq == 6 && !stuck_place && t.tb->spare[0].base &&
		    ((struct spool_chunk *)t.tb->spare[0].base)->state == CHUNK_COPIED) {
			((struct spool_chunk *)t.tb->spare[0].base)->state = CHUNK_COPYING;
			stuck_place = t.tb->spare[0].off;
		}
		if (!late && i % 1000 == 0) {
			if (!d.n) /* watched once it has staged chunks */
				drain_watch(&d, agent.spool.path);
			drain_pass(&d);
		}
	}
	if (!late && !stuck) {
		ok(two_places && places[1] && places[2] && places[1] != places[2],
		   "%s: two chunks in turn from the third on", what);
		ASSERT_EQ_U64(d.copied, t.tb->seq - 4,
			      "%s: the drain thread copied every chunk but the last full one",
			      what);
		ASSERT_EQ_U64(agent.spool.mapped, 2 * chunk, "%s: two chunks mapped", what);
	} else if (late) {
		ok(two_places && late_place, "%s: the thread stays in its chunk, copying it", what);
		ASSERT_EQ_U64(d.copied, 0, "%s: the drain thread copied nothing", what);
		ASSERT_EQ_U64(agent.spool.mapped, (1 + TBUF_SPARES) * chunk,
			      "%s: the chunk and its spares mapped", what);
	} else {
		ok(two_places && stuck_place, "%s: the stuck chunk is not taken again", what);
		ok(d.copied > 0, "%s: the drain thread copied the others", what);
		ASSERT_EQ_U64(agent.spool.mapped, 3 * chunk,
			      "%s: two chunks in turn and the stuck one mapped", what);
	}
	nc = read_chunks_in_order(c, 64);
	ASSERT_EQ_U64(nc, t.tb->seq, "%s: one chunk per seq", what);
	fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	for (size_t k = 0; k < nc; k++)
		in_seq &= c[k].seq == k && chunk_continues(fd, &c[k], &next);
	close(fd);
	ok(in_seq, "%s: records in order, nothing stale after them", what);
	ASSERT_EQ_U64(next, n, "%s: every record once", what);
	ASSERT_EQ_U64(t.tb->dropped, 0, "%s: nothing dropped", what);
	drain_forget_all(&d);
	agent.spool.bell = NULL;
}

/* A copy that would pass FXT_MAX_SIZE is not made: the thread takes the
 * smaller chunk the rest of the budget allows, then stops; every record
 * is in the spool or counted, and the budget is kept. */
static void test_reuse_bound(void)
{
	const uint64_t chunk = 64 << 10, max = 5 * chunk + 8192, calls = 30000;
	struct tstate t = { 0 };
	struct chunk_info c[32];
	uint64_t next = 0;
	bool in_seq = true;
	size_t nc;
	int fd;

	test_agent_reset(chunk, 1 << 30, max);
	for (uint64_t i = 0; i < calls; i++)
		agent_record(&t, 0x1000 + i);
	ASSERT_EQ_U64(t.tb->state, TBUF_STOPPED, "reuse bound: stopped");
	ok(agent.spool.granted <= max, "reuse bound: %llu bytes granted of %llu",
	   (unsigned long long)agent.spool.granted, (unsigned long long)max);
	nc = read_chunks_in_order(c, 32);
	fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	for (size_t k = 0; k < nc; k++)
		in_seq &= c[k].seq == k && chunk_continues(fd, &c[k], &next);
	close(fd);
	ok(in_seq, "reuse bound: records in order");
	ok(next > 5 * 4031, "reuse bound: the last 8 KiB were used too (%llu records)",
	   (unsigned long long)next);
	ASSERT_EQ_U64(next + t.tb->dropped, calls, "reuse bound: recorded + dropped = calls");
}

/* Past FXT_MAX_SIZE a thread stops; each call (enter) is counted once,
 * exits are not, and the stop time is set. */
static void test_drops(void)
{
	const uint64_t chunk = 4096, per = PER_CHUNK(chunk), calls = 1000;
	struct tstate t = { 0 };

	test_agent_reset(chunk, 1 << 20, 3 * chunk);
	/* One outer frame left open, then pairs: 1 + 2 * k records fit. */
	agent_record(&t, 0xa);
	for (uint64_t i = 0; i < calls; i++) {
		agent_record(&t, 0xb);
		agent_record(&t, 0xb | EXIT);
	}
	agent_record(&t, 0xa | EXIT);
	/* 3 * per slots: the outer enter and (3 * per - 1) / 2 full pairs; when
	 * 3 * per - 1 is odd the next enter also fits and its exit is lost. */
	uint64_t fit_enters = 1 + (3 * per - 1 + 1) / 2;
	ASSERT_EQ_U64(t.tb->dropped, 1 + calls - fit_enters, "drops: exact count of calls");
	ASSERT_EQ_U64(t.tb->state, TBUF_STOPPED, "drops: thread stopped");
	/* With 3 * per - 1 odd the hook that found no room was an exit (not
	 * counted), and the first counted drop is the enter after it; else it
	 * was an enter, the first drop. */
	if ((3 * per - 1) % 2)
		ok(t.tb->stop_ts != 0 && t.tb->first_drop_ts > t.tb->stop_ts,
		   "drops: stopped at an exit, first drop after");
	else
		ok(t.tb->stop_ts != 0 && t.tb->first_drop_ts == t.tb->stop_ts,
		   "drops: stopped at an enter, its first drop");
	ASSERT_EQ_U64(agent.spool.granted, 3 * chunk, "drops: budget used exactly");
	ASSERT_EQ_U64(agent.spool.mapped, 0, "drops: no chunk mapped after stopping");
	ok(t.end == NULL, "drops: hooks go to the slow path");

	/* A second thread finds the budget spent: all its calls drop. */
	struct tstate u = { 0 };
	for (int i = 0; i < 10; i++) {
		agent_record(&u, 0xc);
		agent_record(&u, 0xc | EXIT);
	}
	ASSERT_EQ_U64(u.tb->dropped, 10, "drops: second thread drops every call");
	ASSERT_EQ_U64(u.tb->seq, 0, "drops: second thread got no chunk");
}

/* A hook nested in an interrupted one (busy already counted) records
 * normally while the chunk has room; when it is full, it drops (it may not
 * replace the chunk under the interrupted hook) and the next hook that is
 * not nested refills. */
static void test_nested(void)
{
	const uint64_t per = PER_CHUNK(4096);
	struct tstate t = { 0 };
	uint64_t *pos;

	test_agent_reset(4096, 1 << 20, 0);
	agent_record(&t, 0xa);
	pos = t.pos;
	t.busy = 1;
	agent_record(&t, 0xb);
	agent_record(&t, 0xb | EXIT);
	t.busy = 0;
	ASSERT_EQ_U64(t.tb->dropped, 0, "nested: nothing dropped while there is room");
	ok(t.pos == pos + 4 && pos[1] == 0xb && pos[3] == (0xb | EXIT),
	   "nested: both records written in order");
	for (uint64_t i = 3; i < per; i++)
		agent_record(&t, 0xc);
	ok(t.pos == t.end, "nested: chunk exactly full");
	t.busy = 1;
	agent_record(&t, 0xd);
	agent_record(&t, 0xd | EXIT);
	t.busy = 0;
	ASSERT_EQ_U64(t.tb->dropped, 1, "nested: full chunk, one call dropped");
	ASSERT_EQ_U64(t.tb->seq, 1, "nested: no refill under an interrupted hook");
	ASSERT_EQ_U64(t.tb->state, TBUF_RECORDING, "nested: thread keeps recording");
	agent_record(&t, 0xa | EXIT);
	ASSERT_EQ_U64(t.tb->seq, 2, "nested: the next hook refills");
	ok(t.pos[-1] == (0xa | EXIT), "nested: and writes its record");
}

/* Real signals: a handler records while the thread is inside hooks,
 * refills included (tiny chunks).  Every call is either in the spool or
 * counted as dropped, the records form pairs, and nothing is torn. */
static struct tstate sig_ts;
static volatile sig_atomic_t sig_calls;
static bool sig_pairs; /* exits by agent_record_exit(): PAIRs */

static void sig_exit(uint64_t fn)
{
	if (sig_pairs)
		agent_record_exit(&sig_ts, fn);
	else
		agent_record(&sig_ts, fn | EXIT);
}

static void on_alarm(int sig)
{
	(void)sig;
	agent_record(&sig_ts, 0xb0);
	agent_record(&sig_ts, 0xc0);
	sig_exit(0xc0);
	sig_exit(0xb0);
	sig_calls++;
}

/* With 4 KiB chunks (no reserve) a handler's calls may be dropped, and are
 * counted; with 64 KiB chunks the reserve takes them: `strict` asks for no
 * drop at all. */
static void test_signals(uint64_t chunk, bool strict)
{
	const uint64_t n = 400000;
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct sigaction sa;
	struct chunk_info c[4096];
	size_t nc;
	uint64_t cnt[4] = { 0 }, other = 0, holes = 0, depth = 0, bad_nest = 0, pairs = 0;
	int fd;

	memset(&sig_ts, 0, sizeof(sig_ts));
	sig_calls = 0;
	test_agent_reset(chunk, 1 << 30, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (uint64_t i = 0; i < n; i++) {
		agent_record(&sig_ts, 0xa0);
		sig_exit(0xa0);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);

	nc = read_chunks_in_order(c, 4096);
	fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	for (size_t k = 0; k < nc; k++) {
		size_t ns;
		uint64_t *rec = spool_chunk_slots(fd, c[k].off, c[k].size, &ns);
		for (size_t i = 0; rec && i < ns; i++) {
			if (!rec[2 * i + 1]) {
				holes++;
				continue;
			}
			if (ev_is_pair(rec[2 * i + 1])) {
				uint64_t fn = ev_pair_fn(rec[2 * i + 1]);
				pairs++;
				if (fn >= 0xa0 && fn <= 0xc0 && !(fn & 0xf))
					cnt[(fn - 0xa0) >> 4]++;
				else
					other++;
				continue;
			}
			switch (rec[2 * i + 1]) {
			case 0xa0:
				cnt[0]++;
				depth++;
				break;
			case 0xb0:
				cnt[1]++;
				depth++;
				break;
			case 0xc0:
				cnt[2]++;
				depth++;
				break;
			case 0xa0 | EXIT:
			case 0xb0 | EXIT:
			case 0xc0 | EXIT:
				if (!depth)
					bad_nest++;
				else
					depth--;
				break;
			default:
				other++;
				break;
			}
		}
		free(rec);
	}
	close(fd);
	diag("%llu-byte chunks: %d signals, %llu nested drops, %zu chunks",
	     (unsigned long long)chunk, (int)sig_calls, (unsigned long long)sig_ts.tb->dropped, nc);
	if (sig_pairs)
		ok(pairs > n / 2, "signals: leaves as PAIRs (%llu)", (unsigned long long)pairs);
	if (strict)
		ASSERT_EQ_U64(sig_ts.tb->dropped, 0,
			      "signals: the reserve took every handler call");
	ok(sig_calls > 10, "signals: the handler ran (%d times)", (int)sig_calls);
	ASSERT_EQ_U64(cnt[0] + cnt[1] + cnt[2] + sig_ts.tb->dropped, n + 2 * (uint64_t)sig_calls,
		      "signals: recorded + dropped = calls");
	ASSERT_EQ_U64(other, 0, "signals: no torn record");
	ASSERT_EQ_U64(bad_nest, 0, "signals: no exit before its enter");
}

/* The exit hook's PAIR (spool/records.h): a leaf's enter slot becomes the
 * call's one slot; an exit with anything between it and its enter, in
 * another chunk, too long, of a function a PAIR cannot hold, is the plain
 * exit record.  With the TSC clock (the exit hook's PAIR path); skipped
 * where there is none. */
#define FN 0x401000ull
#if !defined(__x86_64__)
#define __rdtsc() 0ull /* (not run) */
#endif
static void test_pair(void)
{
	struct tstate t = { 0 };
	uint64_t *pos, w0;
	bool tsc = agent_clock_tsc;

#if !defined(__x86_64__)
	skip(18, "pair: no TSC path");
	return;
#endif
	agent_clock_tsc = true;
	test_agent_reset(4096, 1 << 20, 0);
	agent_record(&t, 0xa0);
	pos = t.pos;
	agent_record(&t, FN);
	w0 = pos[0] = __rdtsc(); /* a preemption since would make it long */
	agent_record_exit(&t, FN);
	ok(t.pos == pos + 2 && ev_is_pair(pos[1]) && ev_pair_fn(pos[1]) == FN && pos[0] == w0,
	   "pair: a leaf takes its enter's slot, the enter's time kept");
	ok(ev_pair_dur(pos[1]) <= EV_PAIR_DUR_MAX, "pair: its duration");
	/* The outer call's exit follows a PAIR, not its enter: plain. */
	agent_record_exit(&t, 0xa0);
	ok(t.pos == pos + 4 && pos[3] == (0xa0 | EXIT), "pair: a caller's exit is plain");
	/* Something between (a signal handler's call, made while the leaf
	 * ran): its own PAIR, the leaf's exit plain. */
	pos = t.pos;
	agent_record(&t, FN);
	agent_record(&t, FN + 16);
	t.pos[-2] = __rdtsc();
	agent_record_exit(&t, FN + 16);
	agent_record_exit(&t, FN);
	ok(t.pos == pos + 6 && pos[1] == FN && ev_pair_fn(pos[3]) == FN + 16 && ev_is_pair(pos[3]),
	   "pair: a handler's leaf between: its PAIR ...");
	ok(t.pos[-1] == (FN | EXIT) && t.pos[-2] >= pos[0], "pair: ... and the plain exit");
	/* Another function's enter just before: plain. */
	agent_record(&t, FN);
	agent_record_exit(&t, FN + 16);
	ok(t.pos[-1] == ((FN + 16) | EXIT) && t.pos[-3] == FN, "pair: another's enter: plain");
	/* Too long (the enter's time moved back past EV_PAIR_DUR_MAX ticks),
	 * or later than the exit (a clock gone back): plain. */
	agent_record(&t, FN);
	t.pos[-2] -= EV_PAIR_DUR_MAX + 100000;
	agent_record_exit(&t, FN);
	ok(t.pos[-1] == (FN | EXIT) && t.pos[-3] == FN, "pair: a long call: plain");
	agent_record(&t, FN);
	t.pos[-2] += 1ull << 40;
	agent_record_exit(&t, FN);
	ok(t.pos[-1] == (FN | EXIT) && t.pos[-3] == FN, "pair: an exit before its enter: plain");
	/* Functions a PAIR cannot hold: past its greatest, below its least. */
	agent_record(&t, EV_PAIR_FN_MAX + 1);
	agent_record_exit(&t, EV_PAIR_FN_MAX + 1);
	ok(t.pos[-1] == ((EV_PAIR_FN_MAX + 1) | EXIT), "pair: fn past the greatest: plain");
	agent_record(&t, EV_PAIR_FN_MIN - 1);
	agent_record_exit(&t, EV_PAIR_FN_MIN - 1);
	ok(t.pos[-1] == ((EV_PAIR_FN_MIN - 1) | EXIT), "pair: fn below the least: plain");
	/* The enter as the chunk's last slot, its exit there too: a PAIR. */
	while (t.pos + 2 < t.end)
		agent_record(&t, 0xc0);
	agent_record(&t, FN);
	ok(t.pos == t.end, "pair: the enter is the chunk's last slot");
	t.pos[-2] = __rdtsc();
	agent_record_exit(&t, FN);
	ok(t.pos == t.end && ev_is_pair(t.pos[-1]), "pair: its exit, a PAIR in place");
	/* A chunk boundary between: the enter went to the old chunk's
	 * reserve, the exit finds the new chunk empty: plain, the header
	 * (its last word before the first slot) untouched. */
	{
		struct tstate v = { 0 };
		struct spool_chunk *c;
		uint32_t state;

		test_agent_reset(64 << 10, 1 << 20, 0);
		agent_record(&v, 0xc0);
		while (v.pos < v.end)
			agent_record(&v, 0xc0);
		agent_record(&v, FN);
		c = v.tb->map.base;
		state = c->state;
		ok(v.tb->seq == 2 && v.pos == (uint64_t *)((char *)c + SPOOL_CHUNK_HEADER_SIZE),
		   "pair: the enter in the reserve, the new chunk empty");
		agent_record_exit(&v, FN);
		ok(v.pos == (uint64_t *)((char *)c + SPOOL_CHUNK_HEADER_SIZE) + 2 &&
		       v.pos[-1] == (FN | EXIT) && c->magic == SPOOL_CHUNK_MAGIC &&
		       c->state == state,
		   "pair: its exit at the first slot, plain; the header untouched");
	}
	/* No chunk yet (pos and end NULL): the slow path, plain. */
	memset(&t, 0, sizeof(t));
	agent_record_exit(&t, FN);
	ok(t.tb && t.pos[-1] == (FN | EXIT), "pair: a thread's first hook an exit: plain");
	/* The encoding's edges. */
	ok(ev_pair_fits(FN, EV_PAIR_DUR_MAX) && !ev_pair_fits(FN, EV_PAIR_DUR_MAX + 1) &&
	       ev_pair_fits(EV_PAIR_FN_MAX, 0) && !ev_pair_fits(EV_PAIR_FN_MAX + 1, 0) &&
	       ev_pair_fits(EV_PAIR_FN_MIN, 0) && !ev_pair_fits(EV_PAIR_FN_MIN - 1, 0) &&
	       !ev_pair_fits(0, 0) && !ev_pair_fits(FN, ~0ull) && !ev_pair_fits(FN, 1ull << 32) &&
	       !ev_pair_fits(~0ull, 0),
	   "pair: what fits");
	ok(ev_pair_dur(ev_pair_w1(EV_PAIR_FN_MAX, EV_PAIR_DUR_MAX)) == EV_PAIR_DUR_MAX &&
	       ev_pair_fn(ev_pair_w1(EV_PAIR_FN_MAX, EV_PAIR_DUR_MAX)) == EV_PAIR_FN_MAX &&
	       ev_pair_fn(ev_pair_w1(EV_PAIR_FN_MIN, 0)) == EV_PAIR_FN_MIN &&
	       !(ev_pair_w1(EV_PAIR_FN_MAX, EV_PAIR_DUR_MAX) & EXIT) &&
	       ev_tag(ev_pair_w1(EV_PAIR_FN_MIN, 0)) >= 64,
	   "pair: longest, highest and lowest fn round trip; no exit bit; tag 64 up");
	ok(!ev_is_pair(EV_CALL_ADDR(5) | EXIT) && !ev_is_pair(ev_tag_bits(EV_TAG_ONCE_ARG)) &&
	       !ev_is_pair(FN | EXIT) && !ev_is_pair(0),
	   "pair: no other record reads as one");
	agent_clock_tsc = tsc;
}

/* Chunks of 64 KiB and more stop `end` 1/64 short of the chunk: nested
 * hooks past it are recorded in that reserve, in order; the interrupted
 * hook then fills its own reserve slot and refills; a nested hook that
 * finds the reserve used up is dropped and counted. */
static void test_reserve(void)
{
	const uint64_t chunk = 64 << 10, reserve = chunk / 64;
	const uint64_t per = (chunk - reserve - SPOOL_CHUNK_HEADER_SIZE) / SPOOL_RECORD_SIZE;
	struct tstate t = { 0 };
	uint64_t slot0 = SPOOL_HEADER_SIZE + SPOOL_CHUNK_HEADER_SIZE + per * SPOOL_RECORD_SIZE;
	uint64_t *end;

	test_agent_reset(chunk, 1 << 20, 0);
	for (uint64_t i = 0; i < per; i++)
		agent_record(&t, 0x1000 + i);
	ASSERT_EQ_U64((uint64_t)((char *)t.end - (char *)t.tb->map.base), chunk - reserve,
		      "reserve: end is 1/64 short of the chunk's end");
	ok(t.pos == t.end, "reserve: chunk full up to the reserve");
	ASSERT_EQ_U64(t.tb->seq, 1, "reserve: one chunk so far");
	t.busy = 1;
	agent_record(&t, 0xd);
	agent_record(&t, 0xd | EXIT);
	t.busy = 0;
	ASSERT_EQ_U64(t.tb->dropped, 0, "reserve: nested calls not dropped");
	ASSERT_EQ_U64(t.tb->seq, 1, "reserve: no refill under the interrupted hook");
	agent_record(&t, 0xe);
	ASSERT_EQ_U64(t.tb->seq, 2, "reserve: the next outer hook refills");
	ASSERT_EQ_U64(read_word(slot0 + 8), 0xd, "reserve: nested enter in the first reserve slot");
	ASSERT_EQ_U64(read_word(slot0 + 24), 0xd | EXIT, "reserve: nested exit next");
	ASSERT_EQ_U64(read_word(slot0 + 40), 0xe, "reserve: the outer hook's record after them");
	ASSERT_EQ_U64(read_word(slot0 + 56), 0, "reserve: then the chunk ends (a zero slot)");
	ok(t.pos == (uint64_t *)((char *)t.tb->map.base + SPOOL_CHUNK_HEADER_SIZE),
	   "reserve: the new chunk is empty");
	/* Fill the new chunk, then more nested calls than the reserve holds. */
	for (uint64_t i = 0; i < per; i++)
		agent_record(&t, 0x2000);
	end = t.end;
	t.busy = 1;
	for (uint64_t i = 0; i < reserve / SPOOL_RECORD_SIZE + 3; i++)
		agent_record(&t, 0xf);
	t.busy = 0;
	ASSERT_EQ_U64(t.tb->dropped, 3, "reserve: calls past the reserve dropped, counted");
	ok(t.end == end && t.tb->seq == 2, "reserve: still no refill");
	agent_record(&t, 0xf | EXIT);
	ASSERT_EQ_U64(t.tb->seq, 3, "reserve: refilled after the overflow");
	ok(t.pos == (uint64_t *)((char *)t.tb->map.base + SPOOL_CHUNK_HEADER_SIZE) + 2,
	   "reserve: the outer record went to the new chunk");
}

/* A retiring thread gives the unused tail of its chunk to the next. */
static void test_recycle(void)
{
	const uint64_t chunk = 64 << 10;
	struct tstate a = { 0 }, b = { 0 }, c = { 0 };
	struct chunk_info v[8];
	size_t n;
	long pg = sysconf(_SC_PAGESIZE);

	test_agent_reset(chunk, 1 << 20, 0);
	for (int i = 0; i < 10; i++)
		agent_record(&a, 0x100 + (uint64_t)i);
	agent_tbuf_retire(&a);
	ASSERT_EQ_U64(a.tb->state, TBUF_RETIRED, "recycle: A retired");
	ok(a.tb->end_ts != 0, "recycle: A's end time set");
	ok(a.tb->name[0] != '\0', "recycle: A's name read at exit");
	ASSERT_EQ_U64(agent.spool.nfree, 1, "recycle: one free tail");
	agent_record(&b, 0x200);
	ASSERT_EQ_U64(b.tb->map.off, SPOOL_HEADER_SIZE + (uint64_t)pg,
		      "recycle: B's chunk is A's tail");
	ASSERT_EQ_U64(b.tb->map.size, chunk - (uint64_t)pg, "recycle: tail size");
	ASSERT_EQ_U64(file_size(), SPOOL_HEADER_SIZE + chunk, "recycle: spool did not grow");
	n = read_chunks(v, 8);
	ASSERT_EQ_U64(n, 2, "recycle: chain has two chunks");
	ok(n == 2 && v[0].serial == a.tb->serial && v[0].size == (uint64_t)pg &&
	       v[1].serial == b.tb->serial && v[1].off == v[0].off + v[0].size,
	   "recycle: chain is A (one page), then B");
	ASSERT_EQ_U64(read_word(SPOOL_HEADER_SIZE + SPOOL_CHUNK_HEADER_SIZE + 9 * 16 + 8), 0x109,
		      "recycle: A's records intact");
	/* Tails are recycled again: C takes B's. */
	agent_tbuf_retire(&b);
	agent_record(&c, 0x300);
	ASSERT_EQ_U64(c.tb->map.off, SPOOL_HEADER_SIZE + 2 * (uint64_t)pg,
		      "recycle: C takes B's tail");
	/* Retiring twice is harmless; hooks after retirement count as drops. */
	agent_tbuf_retire(&a);
	agent_record(&a, 0x101);
	ASSERT_EQ_U64(a.tb->dropped, 1, "recycle: a hook after retirement is a drop");
}

/* A thread's first chunk is the floor (short-lived processes zero and
 * fault in little), its later ones full size; past FXT_BUFFER_SIZE of
 * mapped chunks, new chunks are halved down to the floor.  Each thread
 * here records past its first chunk (5000 records: a 64 KiB chunk holds
 * under 4096), one after the other.  In a process other than the root,
 * a first chunk is smaller still, with the floor's reserve for signal
 * handlers. */
static void test_buffer_bound(void)
{
	struct tstate t[4] = { { 0 } }, child = { 0 };

	test_agent_reset(256 << 10, 512 << 10, 0);
	agent.spool.small_first = true;
	agent_record(&child, 0x10);
	ASSERT_EQ_U64(child.tb->map.size, AGENT_FIRST_CHUNK_SIZE,
		      "bound: a child process's first chunk is AGENT_FIRST_CHUNK_SIZE");
	ASSERT_EQ_U64(
	    (uint64_t)((char *)child.tb->map.base + child.tb->map.size - (char *)child.end),
	    AGENT_FLOOR_CHUNK_SIZE / 64, "bound: ... with the floor's reserve");
	test_agent_reset(256 << 10, 512 << 10, 0);
	agent_record(&t[0], 0x10);
	ASSERT_EQ_U64(t[0].tb->map.size, AGENT_FLOOR_CHUNK_SIZE,
		      "bound: the root's first chunk is the floor");
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5000; j++)
			agent_record(&t[i], 0x10 + (uint64_t)j);
	ASSERT_EQ_U64(t[0].tb->map.size, 256 << 10, "bound: first thread's second chunk full size");
	ASSERT_EQ_U64(t[1].tb->map.size, 256 << 10, "bound: second thread's full size");
	ASSERT_EQ_U64(t[2].tb->map.size, AGENT_FLOOR_CHUNK_SIZE, "bound: third at the floor");
	ASSERT_EQ_U64(t[3].tb->map.size, AGENT_FLOOR_CHUNK_SIZE, "bound: fourth at the floor");
}

/* The spool header carries what recovery needs. */
static void test_header(void)
{
	struct tstate t = { 0 };

	test_agent_reset(4096, 1 << 20, 0);
	ASSERT_EQ_I64(spool_add_module(&agent.spool, "/lib/a.so", 0x1000, 0x1000), 1,
		      "header: module added");
	ASSERT_EQ_I64(spool_add_module(&agent.spool, "/lib/a.so", 0x1000, 0x1000), 0,
		      "header: duplicate ignored");
	agent_record(&t, 0x10);
	ok(agent.spool.hdr != NULL, "header: mapped");
	ASSERT_EQ_U64(agent.spool.hdr->magic, SPOOL_MAGIC, "header: magic");
	ASSERT_EQ_U64(agent.spool.hdr->pid, (uint64_t)getpid(), "header: pid");
	ASSERT_EQ_U64(agent.spool.hdr->nmodules, 1, "header: module count");
	ASSERT_STR_EQ(agent.spool.hdr->modules[0].path, "/lib/a.so", "header: module path");
	spool_add_module(&agent.spool, "/lib/b.so", 0x2000, 0x2000);
	ASSERT_EQ_U64(agent.spool.hdr->nmodules, 2, "header: updated after a later dlopen");
}

static int count_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* The agent holds no descriptor between refills, so a program that closes
 * every fd (or counts them) neither breaks it nor sees one. */
static void test_no_fd_held(void)
{
	struct tstate t = { 0 };
	int before = count_fds();

	test_agent_reset(4096, 1 << 20, 0);
	agent_record(&t, 0x10);
	ASSERT_EQ_I64(count_fds(), before, "fds: none held after the spool is created");
	for (uint64_t i = 0; i < 2 * PER_CHUNK(4096); i++)
		agent_record(&t, 0x10);
	ASSERT_EQ_U64(t.tb->dropped, 0, "fds: nothing dropped");
	ASSERT_EQ_U64(t.tb->seq, 3, "fds: refills went on");
	ASSERT_EQ_I64(count_fds(), before, "fds: none held after refills");
}

int main(void)
{
	plan(144);
	test_refill();
	test_reuse();
	test_staged(false, false);
	test_staged(true, false);
	test_staged(false, true);
	test_reuse_bound();
	test_drops();
	test_nested();
	test_signals(4096, false);
	test_signals(64 << 10, true);
#if defined(__x86_64__)
	bool tsc = agent_clock_tsc;
	agent_clock_tsc = true;
	sig_pairs = true;
	test_signals(4096, false);
	test_signals(64 << 10, true);
	sig_pairs = false;
	agent_clock_tsc = tsc;
#else
	skip(2 * 5 + 1, "signals with PAIRs: no TSC path");
#endif
	test_pair();
	test_reserve();
	test_recycle();
	test_buffer_bound();
	test_header();
	test_no_fd_held();
	test_agent_cleanup();
	return exit_status();
}
