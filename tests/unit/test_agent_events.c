/* Unit tests of the tagged records' encoders (agent/events.h, agent/libc/libc.h)
 * and of their multi-slot reservation (agent_ev_begin, agent_tbuf_slow_n):
 * a record's slots are always consecutive in one chunk, whatever the chunk
 * size, and drops are counted exactly. */
#include <config.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/unit/agent_test_stubs.h"
#include "tests/unit/spool_test_walk.h"

#include "agent/events.h"
#include "agent/got.h"
#include "agent/libc/libc.h"

/* What libc.c's attach (START .attached, STOP) calls, in files this test
 * does not link: never reached here. */
struct agent_got_count agent_got_bind(agent_got_want *want, bool start)
{
	(void)want;
	(void)start;
	return (struct agent_got_count){ 0 };
}

struct agent_got_count agent_got_restore(void)
{
	return (struct agent_got_count){ 0 };
}

void agent_mem_attached(void)
{
}

bool agent_log_wrapped(const char *name)
{
	(void)name;
	return false;
}

/* Checks named after their expressions. */
#define EQ(a, b)    ASSERT_EQ_I64(a, b, "%s == %s", #a, #b)
#define EQU(a, b)   ASSERT_EQ_U64(a, b, "%s == %s", #a, #b)
#define CHECK(c)    ok(c, "%s", #c)
#define STREQ(a, b) ASSERT_STR_EQ(a, b, "%s is %s", #a, #b)

/* ------------------------------------------------------------ encoders */

static void test_data_round_trip(void)
{
	char in[64], out[64];
	int ok = 1;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 37 + 1);
	in[5] = '\0'; /* NULs are data like any byte */
	for (size_t len = 0; len <= 40; len++) {
		uint64_t slots[2 * 8];

		memset(slots, 0xa5, sizeof(slots));
		memset(out, 0, sizeof(out));
		ev_put_data(slots, in, len);
		for (unsigned s = 0; s < ev_data_slots(len); s++)
			if (ev_tag(slots[2 * s + 1]) != EV_TAG_DATA)
				ok = 0;
		ev_get_data(slots, out, len);
		if (memcmp(in, out, len) != 0)
			ok = 0;
	}
	CHECK(ok);
	EQ(ev_data_slots(0), 0);
	EQ(ev_data_slots(1), 1);
	EQ(ev_data_slots(14), 1);
	EQ(ev_data_slots(15), 2);
}

static void test_payloads(void)
{
	EQ(ev_payload_int(ev_int_payload(-1)), -1);
	EQ(ev_payload_int(ev_int_payload(0)), 0);
	EQ(ev_payload_int(ev_int_payload(4096)), 4096);
	EQ(ev_payload_int(ev_int_payload((1ll << 46) - 1)), (1ll << 46) - 1);
	EQ(ev_payload_int(ev_int_payload(-(1ll << 46) + 1)), -(1ll << 46) + 1);
	EQ(ev_int_payload(1ll << 46), EV_RESULT_SPILLED);
	EQ(ev_int_payload(-(1ll << 46)), EV_RESULT_SPILLED);
	EQ(ev_int_payload(INT64_MIN), EV_RESULT_SPILLED);
	EQ(ev_ptr_payload(0x7ffff7a00000ull), 0x7ffff7a00000ull);
	EQ(ev_ptr_payload(1ull << 47), EV_RESULT_SPILLED);
	EQ(ev_ptr_payload(EV_RESULT_SPILLED), EV_RESULT_SPILLED);
	/* A CALL's identity keeps tag and function, drops the payload. */
	EQ((EV_CALL_ADDR(7) | 0x1234) & EV_CALL_ADDR_MASK, EV_CALL_ADDR(7));
	EQ(ev_call_fn(EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_COUNT - 1) | 5), AGENT_FN_COUNT - 1);
	EQ(ev_tag(EV_CALL_ADDR(3)), EV_TAG_CALL);
	CHECK(AGENT_FN_COUNT <= EV_FN_MASK + 1);
	CHECK(AGENT_KEY_COUNT <= 256);
	/* Code addresses never look tagged. */
	EQ(ev_tag(0x7fffffffffffull), EV_TAG_NONE);
	/* Counter deltas are 48-bit two's complement. */
	EQ(ev_counter_delta(ev_tag_bits(EV_TAG_COUNTER) | (1ull << 48) |
			    ((uint64_t)-4096 & EV_DELTA_MASK)),
	   -4096);
	EQ(ev_fork_flow_id(100, 200) >> 60, EV_FLOWID_FORK);
	CHECK(ev_fork_flow_id(100, 200) != ev_fork_flow_id(200, 100));
	EQ(ev_flow_id(EV_FLOWID_LOCAL, 5, 9), (1ull << 60) | (5ull << 32) | 9);
}

static void test_tables(void)
{
	unsigned m = 0;

	STREQ(agent_fn_lookup(AGENT_FN_read)->name, "read");
	STREQ(agent_fn_lookup(AGENT_FN_read)->category, "libc.io");
	STREQ(agent_fn_lookup(AGENT_FN_pthread_mutex_lock)->category, "libc.sync");
	STREQ(agent_fn_lookup(AGENT_FN_THREAD_LIFE)->name, "thread");
	STREQ(agent_fn_lookup(AGENT_FN_FORK_CHILD)->name, "fork (child)");
	EQ(agent_fn_lookup(AGENT_FN_malloc)->res, AGENT_RES_PTR);
	CHECK(agent_fn_lookup(AGENT_FN_COUNT) == NULL);
	STREQ(agent_key_name(AGENT_KEY_FD), "fd");
	STREQ(agent_key_name(AGENT_KEY_CALLER), "caller");
	CHECK(agent_key_name(0) == NULL);
	CHECK(agent_key_name(AGENT_KEY_COUNT) == NULL);

	EQ(run_libc_parse("io,mem", &m), 0);
	EQ(m, AGENT_G_IO | AGENT_G_MEM);
	EQ(run_libc_parse("all", &m), 0);
	EQ(m, AGENT_G_ALL);
	EQ(run_libc_parse("none", &m), 0);
	EQ(m, 0);
	EQ(run_libc_parse("", &m), 0);
	EQ(m, 0);
	EQ(run_libc_parse("default,sync", &m), 0);
	EQ(m, AGENT_G_DEFAULT | AGENT_G_SYNC);
	EQ(run_libc_parse("io,bogus", &m), -1);
	EQ(run_libc_parse("i", &m), -1);
	STREQ(run_libc_group_name(AGENT_G_SLEEP), "sleep");
}

/* ------------------------------------------------------------ spool */

struct rec {
	uint64_t off; /* file offset of the first slot */
	unsigned n;
};

/* Reads the spool back: every non-zero slot, grouped into records by the
 * tag of their second word (a CALL head followed by ARG slots). */
static size_t read_records(struct rec *v, size_t cap, int *straddles)
{
	struct spool_walk sw;
	size_t n = 0;

	*straddles = 0;
	if (spool_walk_open(&sw, agent.spool.path) < 0)
		return 0;
	while (spool_walk_next(&sw)) {
		size_t ns;
		uint64_t *w = spool_chunk_slots(sw.fd, sw.off, sw.c.size, &ns);
		for (size_t i = 0; w && i < ns; i++) {
			uint64_t p = sw.off + SPOOL_CHUNK_HEADER_SIZE + 16 * i;
			if (!w[2 * i + 1])
				continue;
			if (ev_tag(w[2 * i + 1]) == EV_TAG_CALL) {
				if (n < cap)
					v[n] = (struct rec){ p, 1 };
				n++;
			} else if (ev_tag(w[2 * i + 1]) == EV_TAG_ARG && n && n <= cap &&
				   v[n - 1].off + 16 * v[n - 1].n == p) {
				v[n - 1].n++;
			} else {
				(*straddles)++; /* an ARG not right after its head */
			}
		}
		free(w);
	}
	spool_walk_close(&sw);
	return n;
}

/* Five-slot records in 4 KiB chunks (252 slots: not a multiple of 5):
 * each record stays whole in one chunk. */
static void test_records_never_straddle(void)
{
	struct tstate t = { 0 };
	static struct rec v[2048];
	size_t n;
	int straddles, whole = 1;

	test_agent_reset(4096, 1 << 20, 0);
	for (unsigned i = 0; i < 1000; i++) {
		uint64_t *p = agent_ev_begin(&t, 5, i + 1, true);
		if (p) {
			p[0] = i + 1;
			p[1] = EV_CALL_ADDR(AGENT_FN_read) | i;
			for (unsigned k = 1; k < 5; k++) {
				p[2 * k] = k;
				p[2 * k + 1] = ev_arg_w1(AGENT_KEY_FD, EV_ARG_I64);
			}
		}
		agent_ev_end(&t);
	}
	EQ(t.busy, 0);
	agent_tbuf_retire(&t);
	n = read_records(v, 2048, &straddles);
	EQ(n, 1000);
	EQ(straddles, 0);
	for (size_t i = 0; i < n && i < 2048; i++)
		if (v[i].n != 5)
			whole = 0;
	CHECK(whole);
	EQ(t.tb->dropped, 0);
}

/* Past FXT_MAX_SIZE, records are dropped: counted when asked (calls), not
 * otherwise (their exits, arguments). */
static void test_drops_counted(void)
{
	struct tstate t = { 0 };
	const unsigned per_chunk = (4096 - SPOOL_CHUNK_HEADER_SIZE) / 16 / 3; /* 84 */
	unsigned written = 0;

	test_agent_reset(4096, 1 << 20, 2 * 4096);
	for (unsigned i = 0; i < 500; i++) {
		uint64_t *p = agent_ev_begin(&t, 3, i + 1, i % 2 == 0);
		if (p) {
			for (unsigned k = 0; k < 3; k++) {
				p[2 * k] = i;
				p[2 * k + 1] = ev_arg_w1(AGENT_KEY_FD, EV_ARG_I64);
			}
			written++;
		}
		agent_ev_end(&t);
	}
	EQ(written, 2 * per_chunk);
	/* Of the 500 - 168 dropped, the even ones count. */
	EQ(t.tb->dropped, (500 - 2 * per_chunk) / 2);
	EQ(t.busy, 0);
}

/* The helpers of libc.h write the documented words. */
static void test_wrap_encoding(void)
{
	struct tstate t = { 0 };
	const struct wrap_arg args[] = { WARG(FD, I64, -3), WARG(NBYTES, U64, 10) };
	uint64_t w[32];
	int fd;

	test_agent_reset(4096, 1 << 20, 0);
	CHECK(wrap_call_begin(&t, AGENT_FN_read, (void *)0x401234, args, 2));
	wrap_call_end(&t, AGENT_FN_read, ev_int_payload(-1), -1, EBADF, NULL, 0);
	wrap_call_end(&t, AGENT_FN_lseek, ev_int_payload(1ll << 50), 1ll << 50, 0, NULL, 0);
	wrap_str(&t, AGENT_KEY_PATH, "/etc/passwd", 4);
	wrap_flow(&t, EV_FLOW_END, 77, true);
	wrap_sync(&t, EV_SYNC_UNLOCK, (void *)0x1000);
	agent_tbuf_retire(&t);

	fd = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	EQ(pread(fd, w, sizeof(w), SPOOL_HEADER_SIZE + SPOOL_CHUNK_HEADER_SIZE),
	   (ssize_t)sizeof(w));
	close(fd);
	/* enter: caller in the payload, then the two arguments */
	EQU(w[1], EV_CALL_ADDR(AGENT_FN_read) | 0x401234);
	EQU(w[2], (uint64_t)-3);
	EQU(w[3], ev_arg_w1(AGENT_KEY_FD, EV_ARG_I64));
	EQU(w[4], 10);
	EQU(w[5], ev_arg_w1(AGENT_KEY_NBYTES, EV_ARG_U64));
	/* exit: errno, then the exit slot with -1 in the payload */
	EQU(w[6], EBADF);
	EQU(w[7], ev_arg_w1(AGENT_KEY_ERRNO, EV_ARG_ERRNO));
	CHECK(w[8] >= w[0]);
	EQU(w[9], EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_read) | EV_PAYLOAD_MASK);
	/* a result too large for the payload is spilled into an ARG */
	EQU(w[10], 1ull << 50);
	EQU(w[11], ev_arg_w1(AGENT_KEY_RESULT, EV_ARG_I64));
	EQU(w[13], EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_lseek) | EV_RESULT_SPILLED);
	/* a string cut at 4 bytes: head, then one DATA slot */
	EQU(w[14], 4);
	EQU(w[15], ev_tag_bits(EV_TAG_STR) | EV_STR_TRUNCATED | AGENT_KEY_PATH);
	EQ(ev_tag(w[17]), EV_TAG_DATA);
	{
		char s[5] = { 0 };
		ev_get_data(&w[16], s, 4);
		STREQ(s, "/etc");
	}
	EQU(w[18], 77);
	EQU(w[19], ev_tag_bits(EV_TAG_FLOW) | EV_FLOW_AT_END | (2ull << 8));
	EQU(w[20], 0x1000);
	EQU(w[21], ev_tag_bits(EV_TAG_SYNC) | EV_SYNC_UNLOCK);
	EQU(w[23], 0); /* nothing after */
}

/* wrap_call_once(): a ONCE record (two slots) for the calls
 * agent_fn_once() names, when nothing needs more; the full form else. */
static void test_wrap_once(void)
{
	struct tstate t = { 0 };
	const struct wrap_arg size[] = { WARG(SIZE, U64, 64) };
	const struct wrap_arg mutex[] = { WARG(MUTEX, PTR, 0xabc0) };
	const struct wrap_arg fd[] = { WARG(FD, I64, 3) };
	uint64_t w[40];
	int f;

	test_agent_reset(4096, 1 << 20, 0);
	wrap_call_once(&t, AGENT_FN_malloc, (void *)0x401234, 100, size, 1, 0, NULL,
		       ev_ptr_payload(0x5000), 0x5000, 0);
	wrap_call_once(&t, AGENT_FN_pthread_mutex_unlock, (void *)0x401240, 200, mutex, 1,
		       EV_SYNC_UNLOCK, (void *)0xabc0, ev_int_payload(0), 0, 0);
	/* Failed with an errno, a result too large, a function not named:
	 * the full form. */
	wrap_call_once(&t, AGENT_FN_malloc, (void *)0x401234, 300, size, 1, 0, NULL,
		       ev_ptr_payload(0), 0, ENOMEM);
	wrap_call_once(&t, AGENT_FN_malloc, (void *)0x401234, 400, size, 1, 0, NULL,
		       ev_ptr_payload(1ull << 50), (int64_t)(1ull << 50), 0);
	wrap_call_once(&t, AGENT_FN_close, (void *)0x401234, 500, fd, 1, 0, NULL, ev_int_payload(0),
		       0, 0);
	agent_tbuf_retire(&t);

	f = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	CHECK(f >= 0);
	EQ(pread(f, w, sizeof(w), SPOOL_HEADER_SIZE + SPOOL_CHUNK_HEADER_SIZE), (ssize_t)sizeof(w));
	close(f);
	EQU(w[0], 100);
	EQU(w[1], ev_once_w1(AGENT_FN_malloc, 0x401234));
	EQU(w[2], 64);
	EQU(w[3], ev_once_arg_w1(AGENT_FN_malloc, 0x5000));
	EQU(w[4], 200);
	EQU(w[5], ev_once_w1(AGENT_FN_pthread_mutex_unlock, 0x401240));
	EQU(w[6], 0xabc0);
	EQU(w[7], ev_once_arg_w1(AGENT_FN_pthread_mutex_unlock, 0));
	/* malloc failed: enter, size, errno, exit */
	EQU(w[9], EV_CALL_ADDR(AGENT_FN_malloc) | 0x401234);
	EQU(w[11], ev_arg_w1(AGENT_KEY_SIZE, EV_ARG_U64));
	EQU(w[12], ENOMEM);
	EQU(w[15], EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_malloc));
	/* spilled: enter, size, result, exit */
	EQU(w[17], EV_CALL_ADDR(AGENT_FN_malloc) | 0x401234);
	EQU(w[20], 1ull << 50);
	EQU(w[23], EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_malloc) | EV_RESULT_SPILLED);
	/* close: enter, fd, exit */
	EQU(w[25], EV_CALL_ADDR(AGENT_FN_close) | 0x401234);
	EQU(w[27], ev_arg_w1(AGENT_KEY_FD, EV_ARG_I64));
	EQU(w[29], EV_EXIT_BIT | EV_CALL_ADDR(AGENT_FN_close));
	EQU(w[31], 0); /* nothing after */
}

int main(void)
{
	test_data_round_trip();
	test_payloads();
	test_tables();
	test_records_never_straddle();
	test_drops_counted();
	test_wrap_encoding();
	test_wrap_once();
	test_agent_cleanup();
	done_testing();
	return exit_status();
}
