/* Unit tests of the settings table (run/settings.def) and what fxt-run
 * makes of it: the table's rules (on the table, and on broken copies), the
 * options' checks, the export's text read back, the block attach hands to
 * the agent, the mode policy both sides share; the argspec file's lines
 * (run/argspec.h) fxt-run writes for --args/--retval. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/argspec.h"
#include "run/settings.h"
#include "run/recording.h"
#include "tests/lib/tap.h"

static void test_rules(void)
{
	struct fxt_setting copy[FXT_S_COUNT];
	char why[256] = "";

	ok(run_settings_check(fxt_settings, FXT_S_COUNT, why, sizeof(why)) == 0,
	   "the table keeps its rules %s", why);

	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_MODULE].opt = "mode";
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0 && strstr(why, "twice"),
	   "broken: two rows with one option: %s", why);
	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_KEEP_PARTS].short_opt = 'q';
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0,
	   "broken: two rows with one short option: %s", why);
	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_IMAGE].env = "FXT_EXEC_PID";
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0,
	   "broken: two rows with one variable: %s", why);
	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_DEPTH].help = "record calls at most N deep\n"
				 "12345678901234567890123456789012345678901234567890123X";
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0,
	   "broken: a help line of 54 columns: %s", why);
	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_CLOCK].env_help = "123456789012345678901234567890123456789012345678901234567";
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0,
	   "broken: an Environment line of 57 columns: %s", why);
	memcpy(copy, fxt_settings, sizeof(copy));
	copy[FXT_S_DEBUG].env_help = NULL;
	ok(run_settings_check(copy, FXT_S_COUNT, why, sizeof(why)) != 0,
	   "broken: a variable without its line: %s", why);
}

/* The options' checks say today's lines (launcher-options.sh asserts them
 * through fxt-run). */
static void test_parse(void)
{
	static const struct {
		enum fxt_setting_id id;
		const char *arg, *why; /* why NULL: accepted */
	} cases[] = {
		{ FXT_S_MAX_SIZE, "1G", NULL },
		{ FXT_S_MAX_SIZE, "0", NULL },
		{ FXT_S_BUFFER_SIZE, "0", "--buffer-size: invalid size '0'" },
		{ FXT_S_MAX_SIZE, "12x", "--max-size: invalid size '12x'" },
		{ FXT_S_SAMPLE, "0", "--sample: invalid rate '0' (1 to 10000 samples per second)" },
		{ FXT_S_SAMPLE, NULL, NULL },
		{ FXT_S_MODE, "ring", "--mode: unknown mode 'ring' (modes: " FXT_MODE_NAMES ")" },
		{ FXT_S_LIBC, "io,bogus",
		  "--libc: unknown group 'bogus' (groups: io, mem, thread, sync, proc, sleep, log; "
		  "or all, none, default)" },
		{ FXT_S_INCLUDE, "", "--include: invalid pattern ''" },
		{ FXT_S_MODULE, "", "--module: invalid glob ''" },
		{ FXT_S_DEPTH, "1000001", "--depth: invalid depth '1000001' (1 to 1000000)" },
		{ FXT_S_MAX_SNAPSHOTS, "-1", "--max-snapshots: not a count in 1..1000000: '-1'" },
		{ FXT_S_OUTPUT, "-",
		  "-o -: cannot write the archive to standard output; give a file name" },
		{ FXT_S_OUTPUT, "run-%p.fxt", NULL },
		{ FXT_S_DEBUG_ROOT, "/usr/lib", NULL },
		{ FXT_S_DEBUG_ROOT, "dbg", "--debug-root: 'dbg' is not an absolute path" },
		{ FXT_S_DEBUG_ROOT, "/proc/self/status",
		  "--debug-root: '/proc/self/status' is not a folder" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fxt_values v = { 0 };
		char why[512] = "";
		int rc = fxt_setting_parse(cases[i].id, cases[i].arg, &v, why, sizeof(why));

		if (cases[i].why == NULL)
			ok(rc == 0 && v.given[cases[i].id], "%s=%s: accepted %s",
			   fxt_settings[cases[i].id].opt, cases[i].arg ? cases[i].arg : "(none)",
			   why);
		else
			ASSERT_STR_EQ(rc == 0 ? "(accepted)" : why, cases[i].why, "%s=%s: refused",
				      fxt_settings[cases[i].id].opt, cases[i].arg);
		fxt_values_free(&v);
	}
}

static int collect(void *ctx, const char *env, const char *value)
{
	return fxt_block_sink(ctx, env, value);
}

/* Every option the agent reads, given, exported (as the agent gets it),
 * and read back by the option's own check: the same value. */
static void test_round_trips(void)
{
	static const struct {
		enum fxt_setting_id id;
		const char *arg;
	} given[] = {
		{ FXT_S_LIBC, "io,mem" },	   { FXT_S_SAMPLE, "77" },
		{ FXT_S_MODE, "oneshot" },	   { FXT_S_BUFFER_SIZE, "4M" },
		{ FXT_S_MAX_SIZE, "0" },	   { FXT_S_INCLUDE, "a" },
		{ FXT_S_INCLUDE, "b.c" },	   { FXT_S_EXCLUDE, "x|y" },
		{ FXT_S_MODULE, "lib*" },	   { FXT_S_DEPTH, "7" },
		{ FXT_S_MIN_DURATION, "2us" },	   { FXT_S_SNAPSHOT_IF, "main>1ms" },
		{ FXT_S_MAX_SNAPSHOTS, "3" },	   { FXT_S_PATCH, "." },
		{ FXT_S_PATCH_MODULE, "libfoo*" }, { FXT_S_DEBUG_ROOT, "/usr/lib" },
	};
	struct fxt_values v = { 0 }, back = { 0 };
	struct fxt_block b = { 0 };
	char why[512] = "";
	size_t agent_rows = 0;

	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (fxt_setting_parse(given[i].id, given[i].arg, &v, why, sizeof(why)) != 0)
			bail_out(why);
	ok(fxt_settings_export(&v, collect, &b) == 0, "exported into a block");
	ok(fxt_block_valid(b.buf, b.len), "the block ends with \\0\\0");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_INCLUDE"), "a\nb.c",
		      "a list keeps its newline");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_MODE"), "oneshot", "the mode by name");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_MODULE"), "lib*",
		      "FXT_MODULE is not FXT_MODE");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_MIN_DURATION"), "2000", "durations in ns");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_BUFFER_SIZE"), "4194304", "sizes in bytes");
	ok(fxt_block_get(b.buf, b.len, "FXT_CLOCK") == NULL, "what was not given is not there");
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		const struct fxt_setting *row = &fxt_settings[i];
		const char *text;

		if (row->scope != FXT_SC_AGENT)
			continue;
		agent_rows++;
		text = fxt_block_get(b.buf, b.len, row->env);
		ok(text != NULL, "%s exported", row->env);
		if (text == NULL)
			continue;
		if (fxt_setting_is_text(row->type) && strchr(text, '\n')) {
			ASSERT_STR_EQ(text, v.v[i].s, "%s: the list as given", row->env);
			continue;
		}
		if (fxt_setting_parse((enum fxt_setting_id)i, text, &back, why, sizeof(why)) != 0) {
			ok(0, "%s=%s read back: %s", row->env, text, why);
			continue;
		}
		if (fxt_setting_is_text(row->type))
			ASSERT_STR_EQ(back.v[i].s, v.v[i].s, "%s read back", row->env);
		else
			ASSERT_EQ_U64(back.v[i].u, v.v[i].u, "%s read back", row->env);
	}
	ok(agent_rows >= 14, "the rows the agent reads from options: %zu", agent_rows);
	fxt_values_free(&v);
	fxt_values_free(&back);
	free(b.buf);
}

static void test_blocks(void)
{
	struct fxt_block b = { 0 };
	static const char torn[] = { 'F', 'X', 'T', '_', 'A', '=', '1', '\0',
				     'F', 'X', 'T', '_', 'B', '=', '2' };
	static const char one_nul[] = "FXT_A=1"; /* sizeof: one '\0', not two */

	ok(fxt_block_sink(&b, "FXT_A", "") == 0 && fxt_block_sink(&b, "FXT_B", "x=y") == 0,
	   "an empty value and one with '='");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_A"), "", "the empty value");
	ASSERT_STR_EQ(fxt_block_get(b.buf, b.len, "FXT_B"), "x=y", "the value with '='");
	ok(fxt_block_sink(&b, "FXT_C=", "1") == -EINVAL, "a name with '=' is refused");
	ok(fxt_block_get(b.buf, b.len - 1, "FXT_A") == NULL,
	   "a block cut before its final \\0 is refused");
	ok(!fxt_block_valid(torn, sizeof(torn)), "a block cut in an entry is refused");
	ok(fxt_block_get(torn, sizeof(torn), "FXT_B") == NULL, "...and read nothing from");
	ok(!fxt_block_valid(one_nul, sizeof(one_nul)), "an entry without the final \\0");
	ok(fxt_block_valid("", 1), "the empty block: one \\0");
	free(b.buf);
}

/* run_mode_resolve(): snapshot rules make the mode circular unless
 * another was given; no rules, the mode as it is. */
static void test_mode_policy(void)
{
	static const struct {
		bool given;
		enum fxt_mode mode;
		bool rules;
		enum fxt_mode want;
		bool why;
	} cases[] = {
		{ false, FXT_MODE_STREAM, false, FXT_MODE_STREAM, false },
		{ true, FXT_MODE_ONESHOT, false, FXT_MODE_ONESHOT, false },
		{ false, FXT_MODE_STREAM, true, FXT_MODE_CIRCULAR, false },
		{ true, FXT_MODE_CIRCULAR, true, FXT_MODE_CIRCULAR, false },
		{ true, FXT_MODE_STREAM, true, FXT_MODE_STREAM, true },
		{ true, FXT_MODE_ONESHOT, true, FXT_MODE_ONESHOT, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = "unset";
		enum fxt_mode m =
		    run_mode_resolve(cases[i].given, cases[i].mode, cases[i].rules, &why);

		ok(m == cases[i].want && (why != NULL) == cases[i].why,
		   "mode %s%s, rules %d: %s (%s)", cases[i].given ? "given " : "",
		   run_mode_name(cases[i].mode), cases[i].rules, run_mode_name(m),
		   why ? why : "no reason");
	}
	ASSERT_EQ_U64(run_mode_default_buffer(FXT_MODE_STREAM), FXT_DEFAULT_BUFFER_STREAM,
		      "stream's buffer: the process's");
	ASSERT_EQ_U64(run_mode_default_buffer(FXT_MODE_ONESHOT), FXT_DEFAULT_BUFFER_THREAD,
		      "oneshot's: a thread's");
	ASSERT_EQ_U64(run_mode_default_buffer(FXT_MODE_CIRCULAR), FXT_DEFAULT_BUFFER_THREAD,
		      "circular's: a thread's");
}

/* An argspec line as fxt-run writes it, read back as the agent reads it;
 * FXT_CAP_HOOKED goes with registers, never alone. */
static void test_argspec(void)
{
	const struct fxt_argspec_cond test = { 2, FXT_REG_RAX, 4, true };
	struct fxt_argspec_cond cond, incl;
	const char *module, *symbol;
	char line[256];
	uint32_t caps;
	int n;

	n = run_argspec_format(line, sizeof(line), "app", "parse",
			       FXT_CAP_GPR(0) | FXT_CAP_STR(0) | FXT_CAP_RAX | FXT_CAP_HOOKED, &test, NULL);
	ok(n > 0 && strcmp(line, "app\tparse\t0x2100041\t2:16:4:1\n") == 0, "written: %s", line);
	line[n - 1] = '\0';
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == 0 &&
		   strcmp(module, "app") == 0 && strcmp(symbol, "parse") == 0 &&
		   caps == (FXT_CAP_GPR(0) | FXT_CAP_STR(0) | FXT_CAP_RAX | FXT_CAP_HOOKED) &&
		   cond.rule == 2 && cond.reg == FXT_REG_RAX && cond.width == 4 && cond.is_signed,
	   "read back, FXT_CAP_HOOKED with its registers");
	snprintf(line, sizeof(line), "app\tparse\t%#x", FXT_CAP_HOOKED);
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == -EINVAL,
	   "FXT_CAP_HOOKED alone: nothing to read, refused");
	snprintf(line, sizeof(line), "app\tparse\t%#x", FXT_CAP_RAX | (FXT_CAP_HOOKED << 1));
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == -EINVAL,
	   "a bit no one knows: refused");
}

int main(void)
{
	test_rules();
	test_parse();
	test_round_trips();
	test_blocks();
	test_mode_policy();
	test_argspec();
	done_testing();
	return exit_status();
}
