/* Unit tests of tools/front/sched.c (the threads' states from the
 * kernel's context switches): crafted switch records, among them the
 * switches a kernel leaves out of its record (a sandbox's agent thread
 * whose switch-outs it never records: the thread after it on that CPU has
 * no switch-in). */
#include "config.h"

#include <string.h>

#include <fxt/format.h>
#include <fxt/reader.h>

#include "tests/lib/tap.h"
#include "tools/front/sched.h"

#define PID 100
#define A   101 /* the program's threads */
#define B   102
#define N   7 /* another process's thread (pid 1) */
#define R   FXT_THREAD_RUNNING
#define S   FXT_THREAD_BLOCKED

/* A switch on `cpu` at `ms` (1e6 ns) from out (state) to in; a tid of
 * N is pid 1's, 0 the CPU's idle. */
static void sw(struct sched *s, unsigned cpu, uint64_t ms, uint64_t out, unsigned state,
	       uint64_t in)
{
	struct fxt_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = FXT_RECORD_CONTEXT_SWITCH;
	rec.u.cswitch.cpu = cpu;
	rec.u.cswitch.out_state = state;
	rec.u.cswitch.ts = ms * 1000000;
	rec.u.cswitch.out_pid = out == N ? 1 : out ? PID : 0;
	rec.u.cswitch.out_tid = out;
	rec.u.cswitch.in_pid = in == N ? 1 : in ? PID : 0;
	rec.u.cswitch.in_tid = in;
	if (sched_add_record(s, &rec, rec.u.cswitch.ts) < 0)
		bail_out("sched_add_record");
}

/* Thread tid's times in ms: "RUNNING RUNNABLE BLOCKED UNRECORDED". */
static const char *times(const struct sched *s, uint64_t tid)
{
	static char buf[96];
	const struct sched_thread *t = sched_find(s, tid == N ? 1 : PID, tid);

	if (t == NULL)
		return "none";
	snprintf(buf, sizeof(buf), "%g %g %g %g", (double)t->ns[SCHED_RUNNING] / 1e6,
		 (double)t->ns[SCHED_RUNNABLE] / 1e6, (double)t->ns[SCHED_BLOCKED] / 1e6,
		 (double)t->ns[SCHED_UNRECORDED] / 1e6);
	return buf;
}

/* Every switch recorded: states as they were. */
static void test_recorded(void)
{
	struct sched s = { 0 };

	sw(&s, 0, 0, 0, R, A);	/* A runs 10 */
	sw(&s, 0, 10, A, R, B); /* preempted by B: A runnable 5 */
	sw(&s, 0, 15, B, S, A); /* B asleep 15; A runs 5 */
	sw(&s, 0, 20, A, S, 0);
	sw(&s, 1, 30, 0, R, B);
	sw(&s, 1, 40, B, S, 0);
	sched_finish(&s, 40 * 1000000ull);
	ASSERT_STR_EQ(times(&s, A), "15 5 20 0", "A: every switch recorded");
	ASSERT_STR_EQ(times(&s, B), "15 0 15 0", "B: every switch recorded");
	ok(s.unrecorded == 0, "no switch unrecorded");
	sched_free(&s);
}

/* The spinner of tests/progs/kernel_states on a kernel that records
 * nothing of pid 1's thread N: preempted by N at 10 (recorded, N's
 * switch-in), N gives the CPU back at some moment (not recorded), A spins
 * until 40.  Its 30 ms after 10 are not "runnable": not known. */
static void test_unrecorded_switch_in(void)
{
	struct sched s = { 0 };

	sw(&s, 0, 0, 0, R, A);
	sw(&s, 0, 10, A, R, N);
	/* N -> A at ~12: not recorded */
	sw(&s, 0, 40, A, S, 0);
	sched_finish(&s, 50 * 1000000ull);
	ASSERT_STR_EQ(times(&s, A), "10 0 10 30",
		      "A: running 10, then 30 ms unrecorded (not 30 runnable), blocked");
	ASSERT_STR_EQ(times(&s, N), "0 0 0 30", "N: its run unrecorded, not running to the end");
	ok(s.unrecorded == 1, "one switch unrecorded");
	sched_free(&s);
}

/* A asleep from 5, woken at 20; CPU 0 has N from 15, then A at a moment
 * not recorded: A is unrecorded from 20 (the later of its wake-up and
 * N's switch-in) to its switch-out at 30. */
static void test_unrecorded_after_wakeup(void)
{
	struct sched s = { 0 };

	sw(&s, 0, 0, 0, R, A);
	sw(&s, 0, 5, A, S, 0);	/* A asleep */
	sw(&s, 0, 15, 0, R, N); /* N on CPU 0 */
	sw(&s, 1, 18, 0, R, B); /* B on CPU 1 */
	struct fxt_record w;
	memset(&w, 0, sizeof(w));
	w.type = FXT_RECORD_EVENT;
	w.u.event.type = FXT_EVENT_INSTANT;
	w.u.event.category = (struct fxt_string){ "sched", 5 };
	w.u.event.name = (struct fxt_string){ "sched_waking", 12 };
	w.u.event.pid = PID;
	w.u.event.tid = A;
	if (sched_add_record(&s, &w, 20 * 1000000) < 0) /* B wakes A at 20 */
		bail_out("sched_add_record");
	sw(&s, 0, 30, A, S, 0); /* A ran on CPU 0, its switch-in not recorded */
	sw(&s, 1, 40, B, S, 0);
	sched_finish(&s, 40 * 1000000ull);
	ASSERT_STR_EQ(times(&s, A), "5 0 25 10",
		      "A: blocked until its wake-up, then unrecorded until its switch-out");
	ok(s.unrecorded == 1, "one switch unrecorded");
	sched_free(&s);
}

/* A thread switched in on CPU 1 while running on CPU 0 since 10: its
 * leaving CPU 0 was not recorded; its time between is not known. */
static void test_in_while_running(void)
{
	struct sched s = { 0 };

	sw(&s, 0, 10, 0, R, N);
	sw(&s, 1, 25, 0, R, N);
	sw(&s, 1, 30, N, S, 0);
	sched_finish(&s, 30 * 1000000ull);
	ASSERT_STR_EQ(times(&s, N), "5 0 0 15", "N: 15 ms unrecorded, then running 5");
	sched_free(&s);
}

int main(void)
{
	test_recorded();
	test_unrecorded_switch_in();
	test_unrecorded_after_wakeup();
	test_in_while_running();
	done_testing();
	return exit_status();
}
