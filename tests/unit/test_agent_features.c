/* Unit tests of the agent's feature table walker (agent/feature.h): begin
 * events reach the active rows forwards, end events backwards; a row whose
 * on() says no gets nothing; the want mask says exactly which events some
 * active row handles; CONFIGURE runs once.  The rows are the test's own. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "tests/lib/tap.h"

#include "agent/feature.h"

#define EQ(a, b)    ASSERT_EQ_I64(a, b, "%s == %s", #a, #b)
#define CHECK(c)    ok(c, "%s", #c)
#define STREQ(a, b) ASSERT_STR_EQ(a, b, "%s is %s", #a, #b)

/* What the handlers saw: one letter per call, in order. */
static char seen[64];
static const struct agent_event *seen_arg;

static void saw(char c, const struct agent_event *ev)
{
	size_t n = strlen(seen);

	if (n + 1 < sizeof(seen)) {
		seen[n] = c;
		seen[n + 1] = '\0';
	}
	seen_arg = ev;
}

static bool a_on = true, b_on = true, c_on = true;
static bool a_wants(void)
{
	return a_on;
}
static bool b_wants(void)
{
	return b_on;
}
static bool c_wants(void)
{
	return c_on;
}
static void a_ev(const struct agent_event *ev)
{
	saw('a', ev);
}
static void b_ev(const struct agent_event *ev)
{
	saw('b', ev);
}
static void c_ev(const struct agent_event *ev)
{
	saw('c', ev);
}

/* a and c handle everything; b all but DLCLOSED and THREAD_START. */
#define ALL(fn)                                                                                    \
	{                                                                                          \
		[AGENT_EV_CONFIGURE] = fn, [AGENT_EV_START] = fn, [AGENT_EV_THREAD_START] = fn,    \
		[AGENT_EV_MODULE_LOADED] = fn, [AGENT_EV_DLOPENED] = fn,                           \
		[AGENT_EV_FORK_CHILD] = fn, [AGENT_EV_THREAD_UNWIND] = fn,                         \
		[AGENT_EV_THREAD_END] = fn, [AGENT_EV_THREAD_GONE] = fn, [AGENT_EV_DLCLOSED] = fn, \
		[AGENT_EV_EXEC] = fn, [AGENT_EV_STOP] = fn, [AGENT_EV_BEFORE_SEAL] = fn,           \
		[AGENT_EV_SELF_CONVERT] = fn                                                       \
	}
static const struct agent_feature row_a = { "a", a_wants, ALL(a_ev) };
static struct agent_feature row_b = { "b", b_wants, ALL(b_ev) };
static const struct agent_feature row_c = { "c", c_wants, ALL(c_ev) };
static const struct agent_feature *const abc[] = { &row_a, &row_b, &row_c, NULL };

/* The agent's own rows, for the link and the table's order. */
#define STUB_ROW(n)                                            \
	static void n##_start(const struct agent_event *ev)    \
	{                                                      \
		saw(#n[0], ev);                                \
	}                                                      \
	const struct agent_feature agent_feature_##n = { #n,   \
							 NULL, \
							 { [AGENT_EV_START] = n##_start } };
AGENT_FEATURES(STUB_ROW)

static void reset(const struct agent_feature *const *v)
{
	agent__features_set(v);
	seen[0] = '\0';
	seen_arg = NULL;
}

static void test_order(void)
{
	struct agent_event arg = { .module = { "/lib/x.so", 1, 2, 3 } };

	reset(abc);
	agent_features_emit(AGENT_EV_START, NULL);
	STREQ(seen, ""); /* nothing before CONFIGURE */
	EQ(agent_features_configure(), 0);
	STREQ(seen, "abc");
	seen[0] = '\0';
	agent_features_emit(AGENT_EV_MODULE_LOADED, &arg);
	STREQ(seen, "abc"); /* a begin event: forwards */
	CHECK(seen_arg == &arg);
	for (unsigned ev = 0; ev < AGENT_EV_COUNT; ev++) {
		seen[0] = '\0';
		agent_features_emit(ev, NULL);
		if (!ok(strcmp(seen, AGENT_EV_IS_END(ev) ? "cba" : "abc") == 0,
			"event %u (%s) walks %s: %s", ev, AGENT_EV_IS_END(ev) ? "end" : "begin",
			AGENT_EV_IS_END(ev) ? "backwards" : "forwards", seen))
			break;
	}
	CHECK(AGENT_EV_IS_END(AGENT_EV_THREAD_END) && AGENT_EV_IS_END(AGENT_EV_BEFORE_SEAL) &&
	      AGENT_EV_IS_END(AGENT_EV_DLCLOSED) && AGENT_EV_IS_END(AGENT_EV_STOP) &&
	      !AGENT_EV_IS_END(AGENT_EV_FORK_CHILD) && !AGENT_EV_IS_END(AGENT_EV_THREAD_START));
}

static void test_inactive(void)
{
	b_on = false;
	reset(abc);
	EQ(agent_features_configure(), 0);
	STREQ(seen, "ac"); /* not even CONFIGURE */
	seen[0] = '\0';
	agent_features_emit(AGENT_EV_FORK_CHILD, NULL);
	agent_features_emit(AGENT_EV_BEFORE_SEAL, NULL);
	STREQ(seen, "acca");
	b_on = true;
}

static void test_want(void)
{
	row_b.at[AGENT_EV_EXEC] = NULL;
	a_on = c_on = false;
	reset(abc);
	for (unsigned ev = 0; ev < AGENT_EV_COUNT; ev++)
		if (!ok(!agent_features_want(ev), "before CONFIGURE, no event %u", ev))
			break;
	EQ(agent_features_configure(), 0);
	/* Only b is on, and it does not handle EXEC: a's and c's rows
	 * (inactive) do not count. */
	CHECK(!agent_features_want(AGENT_EV_EXEC));
	CHECK(agent_features_want(AGENT_EV_START));
	CHECK(agent_features_want(AGENT_EV_THREAD_END));
	seen[0] = '\0';
	agent_features_emit(AGENT_EV_EXEC, NULL);
	STREQ(seen, "");
	row_b.at[AGENT_EV_EXEC] = b_ev;
	a_on = c_on = true;
}

static void test_once(void)
{
	reset(abc);
	EQ(agent_features_configure(), 0);
	EQ(agent_features_configure(), -EALREADY);
	STREQ(seen, "abc"); /* one CONFIGURE */
}

static void test_agent_table(void)
{
	reset(NULL);
	EQ(agent_features_configure(), 0);
	STREQ(seen, ""); /* no row handles CONFIGURE */
	CHECK(!agent_features_want(AGENT_EV_CONFIGURE));
	agent_features_emit(AGENT_EV_START, NULL);
	STREQ(seen, "kpls"); /* keep, patch, libc, sample */
}

int main(void)
{
	test_order();
	test_inactive();
	test_want();
	test_once();
	test_agent_table();
	done_testing();
	return exit_status();
}
