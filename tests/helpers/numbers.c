/* numbers: reads back the numbered calls of tests/progs/numbered from an
 * archive, for the tests of the recording modes (tests/e2e/modes.sh).
 *
 *	numbers ARCHIVE
 *
 * A number is a slice "num" and the digit slices d0 .. d9 inside it, in
 * order.  Per thread that has any, sorted by tid, one line:
 *
 *	NUMBERS FIRST LAST GAPS
 *
 * NUMBERS whole numbers read (a "num" whose start was overwritten, with the
 * argument start_overwritten, is not whole: its first digits may be gone;
 * nor is the thread's last one when it ends where the thread's first "fxt:
 * N records dropped" instant is, or after: its last digits may be gone),
 * FIRST and LAST the first and last of them, GAPS how many times a number
 * is not the one before it plus one.  Then one line
 *
 *	calls KEPT OPEN OVERWRITTEN DROPPED
 *
 * KEPT the slices whose start was recorded (all of the archive's slices,
 * complete events and begin/end pairs, but those with the argument
 * start_overwritten, OPEN of them), OVERWRITTEN and DROPPED the
 * sums of the "fxt: N records overwritten|dropped" instants.  So, for a
 * thread that made C calls: KEPT + OVERWRITTEN + DROPPED = C over the
 * archive.  Exit status 1 when the archive cannot be read.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

struct thread {
	uint64_t tid;
	uint64_t num_end; /* the open number's end; 0: none */
	bool whole;	  /* the open number's start was recorded */
	uint64_t value;
	uint64_t drop_ts; /* the thread's first drop instant; 0: none */
	bool have_digit;
	uint64_t count, first, last, gaps;
};

static struct thread *threads;
static size_t nthreads;

static struct thread *thread_of(uint64_t tid)
{
	for (size_t i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	threads = realloc(threads, (nthreads + 1) * sizeof(*threads));
	if (!threads) {
		fputs("numbers: out of memory\n", stderr);
		exit(1);
	}
	memset(&threads[nthreads], 0, sizeof(threads[0]));
	threads[nthreads].tid = tid;
	return &threads[nthreads++];
}

/* The open number is done: counted if whole. */
static void close_number(struct thread *t)
{
	if (t->num_end && t->whole && t->have_digit) {
		if (t->count && t->value != t->last + 1)
			t->gaps++;
		if (!t->count)
			t->first = t->value;
		t->last = t->value;
		t->count++;
	}
	t->num_end = 0;
}

static bool is(const struct fxt_string *s, const char *want)
{
	return s->len == strlen(want) && memcmp(s->data, want, s->len) == 0;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int main(int argc, char **argv)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	uint64_t kept = 0, open = 0, overwritten = 0, dropped = 0;
	int rc;

	if (argc != 2) {
		fputs("usage: numbers ARCHIVE\n", stderr);
		return 2;
	}
	if (fxt_reader_open_path(&r, argv[1], 0) < 0) {
		fprintf(stderr, "numbers: cannot open %s\n", argv[1]);
		return 1;
	}
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		const struct fxt_string *name = &rec.u.event.name;
		bool cut = false;
		struct thread *t;

		if (rec.type != FXT_RECORD_EVENT)
			continue;
		if (rec.u.event.type == FXT_EVENT_INSTANT) {
			uint64_t d = fxt_dropped_in_name(name->data, name->len);
			overwritten += fxt_overwritten_in_name(name->data, name->len);
			dropped += d;
			t = thread_of(rec.u.event.tid);
			if (d && !t->drop_ts)
				t->drop_ts = rec.u.event.ts ? rec.u.event.ts : 1;
			continue;
		}
		/* A slice is a complete event or a begin/end pair, whose
		 * arguments come with the end (convert/recon.h). */
		if (rec.u.event.type != FXT_EVENT_DURATION_COMPLETE &&
		    rec.u.event.type != FXT_EVENT_DURATION_END)
			continue;
		for (unsigned i = 0; i < rec.nargs; i++)
			cut |= is(&rec.args[i].name, "start_overwritten");
		kept += !cut;
		open += cut;
		if (rec.u.event.type != FXT_EVENT_DURATION_COMPLETE)
			continue;
		/* Complete events come parents first: a number, then its
		 * digits inside it. */
		t = thread_of(rec.u.event.tid);
		if (is(name, "num")) {
			close_number(t);
			t->num_end = rec.u.event.extra;
			t->whole = !cut;
			t->value = 0;
			t->have_digit = false;
		} else if (name->len == 2 && name->data[0] == 'd' && name->data[1] >= '0' &&
			   name->data[1] <= '9' && t->num_end && rec.u.event.ts <= t->num_end) {
			t->value = t->value * 10 + (uint64_t)(name->data[1] - '0');
			t->have_digit = true;
		}
	}
	fxt_reader_free(r);
	if (rc < 0) {
		fprintf(stderr, "numbers: %s: damaged archive\n", argv[1]);
		return 1;
	}
	qsort(threads, nthreads, sizeof(*threads), cmp_tid);
	for (size_t i = 0; i < nthreads; i++) {
		if (threads[i].drop_ts && threads[i].num_end >= threads[i].drop_ts)
			threads[i].whole = false; /* cut where the thread stopped */
		close_number(&threads[i]);
		if (threads[i].count)
			printf("%llu %llu %llu %llu\n", (unsigned long long)threads[i].count,
			       (unsigned long long)threads[i].first,
			       (unsigned long long)threads[i].last,
			       (unsigned long long)threads[i].gaps);
	}
	printf("calls %llu %llu %llu %llu\n", (unsigned long long)kept, (unsigned long long)open,
	       (unsigned long long)overwritten, (unsigned long long)dropped);
	free(threads);
	return 0;
}
