/* Unit tests of the early conversion (conv_early_new(), convert/early.c):
 * a spool's threads converted chunk by chunk before its end, then the
 * archive's conversion going on from there, must write the very bytes the
 * archive's conversion writes alone from the same spool.  Each scenario
 * (threads whose chunks interleave, a part converted early, or too little
 * to be worth it, drops at the end and midway, a chunk still staged, one
 * staged at a step and copied by the next,
 * --min-duration, a recovered spool without thread table, more threads
 * than are converted early, libc calls of the mem and sync groups with
 * the heap counter) converts its spool both ways and compares. */
#include <config.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/pipeline.h"
#include "run/recording.h"
#include "spool/libc_table.h"
#include "tests/unit/convert_test_archive.h"

/* `n` rounds of calls on each of the threads in turn, nested 1 to 4
 * deep, so that frames stay open across chunks. */
static void calls(struct test_thread **t, size_t nt, unsigned n)
{
	static const uint64_t fn[] = { A, B, C };

	for (unsigned i = 0; i < n; i++)
		for (size_t k = 0; k < nt; k++) {
			unsigned depth = 1 + (i + (unsigned)k) % 4;

			for (unsigned d = 0; d < depth; d++)
				test_hook(t[k], fn[(i + d) % 3]);
			for (unsigned d = depth; d-- > 0;)
				test_hook(t[k], fn[(i + d) % 3] | EXIT);
		}
}

/* `n` rounds of libc calls on each of the threads in turn, inside a
 * function: a malloc with its heap counter's delta and a mutex unlock
 * (ONCE records), a free and its delta. */
static void libc_calls(struct test_thread **t, size_t nt, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (size_t k = 0; k < nt; k++) {
			uint64_t m[4] = { test_ticks(), ev_once_w1(AGENT_FN_malloc, 0), 64 + i,
					  ev_once_arg_w1(AGENT_FN_malloc, 0x10000 + 64 * i) };
			uint64_t u[4] = { test_ticks(),
					  ev_once_w1(AGENT_FN_pthread_mutex_unlock, 0), 0x5000,
					  ev_once_arg_w1(AGENT_FN_pthread_mutex_unlock, 0) };
			uint64_t f[4] = { test_ticks(), ev_once_w1(AGENT_FN_free, 0),
					  0x10000 + 64 * i, ev_once_arg_w1(AGENT_FN_free, 0) };
			uint64_t up[2] = { m[0], ev_counter_w1(EV_COUNTER_HEAP, 64 + i) };
			uint64_t down[2] = { f[0],
					     ev_counter_w1(EV_COUNTER_HEAP, -(int64_t)(64 + i)) };

			test_hook(t[k], A);
			test_record(t[k], m, 2);
			test_record(t[k], up, 1);
			test_record(t[k], u, 2);
			test_record(t[k], f, 2);
			test_record(t[k], down, 1);
			test_hook(t[k], A | EXIT);
		}
}

/* Takes the padding records (FXT_METADATA_PADDING) out of the archive
 * `a` of *len bytes; how many there were. */
static unsigned unpad(unsigned char *a, size_t *len)
{
	size_t at = 0, to = 0;
	unsigned pads = 0;

	while (at + 8 <= *len) {
		uint64_t h, words;

		memcpy(&h, a + at, 8);
		words =
		    fxt_bits(h, 0, 3) == FXT_RECORD_LARGE ? fxt_bits(h, 4, 35) : fxt_bits(h, 4, 15);
		if (!words || words > (*len - at) / 8)
			break; /* damage: left as it is, for the comparison */
		if (fxt_bits(h, 0, 3) == FXT_RECORD_METADATA &&
		    fxt_bits(h, 16, 19) == FXT_METADATA_PADDING) {
			pads++;
		} else {
			memmove(a + to, a + at, words * 8);
			to += words * 8;
		}
		at += words * 8;
	}
	memmove(a + to, a + at, *len - at);
	*len = to + (*len - at);
	return pads;
}

/* Converts the test spool as it is, alone and after an early conversion
 * of `steps` steps of `step` chunks, and checks that both archives are
 * the same bytes (but for the padding after the opening records where
 * the first thread's early file became the archive: `moved`, when it is
 * known whether it did); the early one fed at least `min_fed` chunks. */
static void same_both(struct conv_opts o, unsigned steps, unsigned step, uint64_t min_fed,
		      int moved, const char *what)
{
	void *late = NULL, *early = NULL;
	size_t late_len = 0, early_len = 0;
	uint64_t fed = 0;
	struct archive a;
	struct conv_stats st;

	o.keep = &late;
	o.keep_len = &late_len;
	convert_ok(&a, &o, &st, what);
	free(a.ev);
	o.keep = &early;
	o.keep_len = &early_len;
	o.early = steps;
	o.early_step = step;
	o.early_fed = &fed;
	convert_ok(&a, &o, &st, what);
	free(a.ev);
	ok(fed >= min_fed, "%s: %llu chunks converted early", what, (unsigned long long)fed);
	{
		unsigned pads = early ? unpad(early, &early_len) : 0;

		ok(moved < 0 || (moved ? pads >= 1 : pads == 0),
		   "%s: the first thread's file %s the archive (%u padding records)", what,
		   pads ? "became" : "appended to", pads);
	}
	ok(late && early && late_len == early_len && memcmp(late, early, late_len) == 0,
	   "%s: the same archive, %zu bytes", what, late_len);
	if (late_len != early_len)
		diag("  %zu bytes converted early", early_len);
	free(late);
	free(early);
}

/* Before early step `i`: chunk 6 staged (CHUNK_FULL) in the spool's file
 * at the first step, copied (CHUNK_PLAIN again) from the second on. */
static void staged_first(int fd, unsigned i)
{
	uint64_t off = SPOOL_HEADER_SIZE;
	uint32_t state = i ? CHUNK_PLAIN : CHUNK_FULL;

	if (i > 1)
		return;
	for (size_t k = 0; k < 6; k++)
		off += test_spool.chunks[k].c->size;
	if (pwrite(fd, &state, sizeof(state), (off_t)(off + offsetof(struct spool_chunk, state))) !=
	    (ssize_t)sizeof(state))
		abort();
}

static void scenarios(void)
{
	struct test_thread t1 = { 0 }, t2 = { 0 }, t3 = { 0 };
	struct test_thread *t[] = { &t1, &t2, &t3 };
	const struct conv_opts now = { .now = ~0ull >> 2 };

	/* Three threads, their chunks interleaved; frames open at the end. */
	test_spool_reset(4096, 0);
	t1.tid = 4242;
	t2.tid = 11;
	t3.tid = 12;
	calls(t, 3, 400);
	test_hook(&t1, A); /* never exits */
	test_retire(&t3);
	same_both(now, 100, 1000, 20, 1, "threads");
	/* A small one is copied: no padding, the same bytes. */
	same_both((struct conv_opts){ .now = ~0ull >> 2, .early_copy_small = true }, 100, 1000, 20,
		  0, "threads, copied");
	/* Some chunks only: the rest at the end (a thread with less than
	 * half of its records converted early is converted whole). */
	same_both(now, 1, 16, 16, -1, "partly");
	same_both(now, 2, 2, 4, -1, "a little");
	/* Nothing whole yet. */
	same_both(now, 0, 0, 0, 0, "none early");

	/* A recovered spool: threads known from their chunks alone. */
	same_both((struct conv_opts){ .now = ~0ull >> 2, .recovered = true }, 100, 1000, 20, 1,
		  "recovered");

	/* A chunk still staged (in place, not copied yet): its thread's
	 * early conversion stops before it, the others' go on. */
	test_spool.chunks[6].c->state = CHUNK_FULL;
	same_both(now, 100, 1000, 10, -1, "staged");

	/* --min-duration: calls left out, summed per thread. */
	test_spool.chunks[6].c->state = CHUNK_PLAIN;
	/* Staged at the first step, copied by the second: a header that may
	 * still change is read again at each step, and its thread goes on
	 * (as many chunks early as with none staged). */
	same_both((struct conv_opts){ .now = ~0ull >> 2, .early_file = staged_first }, 100, 1000,
		  21, 1, "staged, then copied");
	same_both((struct conv_opts){ .now = ~0ull >> 2, .min_ns = 3 }, 100, 1000, 20, 1,
		  "min duration");

	/* Drops at the end (a size bound): the instant after every record. */
	memset(&t1, 0, sizeof(t1));
	memset(&t2, 0, sizeof(t2));
	test_spool_reset(4096, 24 * 4096);
	t1.tid = 4242;
	t2.tid = 11;
	calls(t, 2, 400);
	same_both(now, 100, 1000, 10, -1, "drops at the end");

	/* Drops midway: the instant among records converted early, so that
	 * thread is converted again from its start. */
	memset(&t1, 0, sizeof(t1));
	memset(&t2, 0, sizeof(t2));
	test_spool_reset(4096, 0);
	t1.tid = 4242;
	t2.tid = 11;
	calls(t, 2, 100);
	t2.dropped = 5;
	t2.first_drop_ts = test_ticks();
	calls(t, 2, 100);
	same_both(now, 100, 1000, 5, -1, "drops midway");

	/* More threads than are converted early (EARLY_MAX_THREADS): the
	 * others at the end only. */
	struct test_thread many[24], *pm[24];
	memset(many, 0, sizeof(many));
	for (size_t i = 0; i < 24; i++) {
		many[i].tid = i ? 100 + i : 4242;
		pm[i] = &many[i];
	}
	test_spool_reset(4096, 0);
	calls(pm, 24, 200);
	same_both(now, 1000, 1000, 16, 1, "many threads");

	/* --libc=mem,sync, no acquisition that waited: the heap counter's
	 * deltas of the chunks converted early in the archive's counter. */
	memset(&t1, 0, sizeof(t1));
	memset(&t2, 0, sizeof(t2));
	test_spool_reset(4096, 0);
	t1.tid = 4242;
	t2.tid = 11;
	libc_calls(t, 2, 300);
	same_both((struct conv_opts){ .now = ~0ull >> 2,
				      .groups = AGENT_G_MEM | AGENT_G_SYNC,
				      .no_waits = true },
		  100, 1000, 20, 1, "mem and sync");
	test_spool_cleanup();
}

int main(void)
{
	plan(91);
	scenarios();
	return exit_status();
}
