/* Unit tests of the agent's loading of the settings (agent/cfg.c):
 * the same settings, from the environment and from a block (what attach
 * hands to the agent), give the same agent_cfg; what is unset gets the
 * table's defaults; a malformed value its fallback; a torn block is
 * refused. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "tests/lib/tap.h"
#include "tests/unit/agent_test_stubs.h"

#include "agent/cfg.h"
#include "run/settings.h"

static struct agent_config pristine;

static void reset(void)
{
	memcpy(&agent_cfg, &pristine, sizeof(agent_cfg));
}

/* The settings of a run with every kind of value: lists with newlines,
 * sizes, a duration, the mode made by the rules, an fd, a clock. */
static const char *const settings[][2] = {
	{ "FXT_OUTPUT", "/tmp/fxt-settings-test.fxt" },
	{ "FXT_LIBC", "io,mem" },
	{ "FXT_SAMPLE", "77" },
	{ "FXT_BUFFER_SIZE", "4M" },
	{ "FXT_MAX_SIZE", "123456789" },
	{ "FXT_INCLUDE", "a\nb.c" },
	{ "FXT_EXCLUDE", "x|y" },
	{ "FXT_MODULE", "lib*" },
	{ "FXT_DEPTH", "7" },
	{ "FXT_MIN_DURATION", "2000" },
	{ "FXT_SNAPSHOT_IF", "main>1ms\nlibc.io>5ms" },
	{ "FXT_MAX_SNAPSHOTS", "3" },
	{ "FXT_PATCH", "." },
	{ "FXT_PATCH_MODULE", "libfoo*" },
	{ "FXT_PATCH_REPORT", "/tmp/fxt-patch" },
	{ "FXT_CHUNK_SIZE", "64k" },
	{ "FXT_CLOCK", "monotonic" },
	{ "FXT_ROOT_PID", "4242" },
	{ "FXT_LAUNCHER", "4241:99" },
	{ "FXT_STATUS_FD", "2" },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

/* agent_cfg with its strings compared, then freed and left out (the agent
 * keeps its own for the process's life). */
static void same_config(struct agent_config *a, struct agent_config *b, const char *what)
{
	char **sa[] = { &a->include, &a->exclude,	&a->modules,
			&a->patch,   &a->patch_modules, &a->patch_report };
	char **sb[] = { &b->include, &b->exclude,	&b->modules,
			&b->patch,   &b->patch_modules, &b->patch_report };
	bool strings = true;

	for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++) {
		if ((*sa[i] == NULL) != (*sb[i] == NULL) || (*sa[i] && strcmp(*sa[i], *sb[i]) != 0))
			strings = false;
		free(*sa[i]);
		free(*sb[i]);
		*sa[i] = *sb[i] = NULL;
	}
	ok(strings, "%s: the same strings", what);
	ok(memcmp(a, b, sizeof(*a)) == 0, "%s: the same agent_cfg", what);
}

static void test_env_and_block(void)
{
	static struct agent_config from_env, from_block;
	struct fxt_block b = { 0 };

	for (size_t i = 0; i < NSETTINGS; i++)
		setenv(settings[i][0], settings[i][1], 1);
	reset();
	agent_config_load();
	memcpy(&from_env, &agent_cfg, sizeof(agent_cfg));
	for (size_t i = 0; i < NSETTINGS; i++)
		unsetenv(settings[i][0]);

	/* What was loaded, so that two empty configurations cannot pass. */
	ok(from_env.mode == FXT_MODE_CIRCULAR && from_env.nsnap_rules == 2,
	   "env: the rules made the mode circular");
	ASSERT_EQ_U64(from_env.buffer_size, 4u << 20, "env: FXT_BUFFER_SIZE");
	ASSERT_EQ_U64(from_env.chunk_size, 64u << 10, "env: FXT_CHUNK_SIZE");
	ASSERT_EQ_U64(from_env.max_size, 123456789, "env: FXT_MAX_SIZE");
	ASSERT_EQ_U64(from_env.libc_groups, AGENT_G_IO | AGENT_G_MEM, "env: FXT_LIBC");
	ASSERT_EQ_U64(from_env.sample_hz, 77, "env: FXT_SAMPLE");
	ASSERT_EQ_U64(from_env.depth, 7, "env: FXT_DEPTH");
	ASSERT_EQ_U64(from_env.min_duration_ns, 2000, "env: FXT_MIN_DURATION");
	ASSERT_EQ_U64(from_env.max_snapshots, 3, "env: FXT_MAX_SNAPSHOTS");
	ASSERT_STR_EQ(from_env.include, "a\nb.c", "env: FXT_INCLUDE, two lines");
	ASSERT_STR_EQ(from_env.patch_report, "/tmp/fxt-patch", "env: FXT_PATCH_REPORT");
	ASSERT_STR_EQ(from_env.output, "/tmp/fxt-settings-test.fxt", "env: FXT_OUTPUT");
	ok(from_env.clock == AGENT_CLOCK_MONOTONIC, "env: FXT_CLOCK");
	ASSERT_EQ_I64(from_env.root_pid, 4242, "env: FXT_ROOT_PID");
	ASSERT_EQ_I64(from_env.launcher_pid, 4241, "env: FXT_LAUNCHER's pid");
	ASSERT_EQ_U64(from_env.launcher_start, 99, "env: FXT_LAUNCHER's start");
	ASSERT_EQ_I64(from_env.status_fd.fd, 2, "env: FXT_STATUS_FD");

	for (size_t i = 0; i < NSETTINGS; i++)
		if (fxt_block_sink(&b, settings[i][0], settings[i][1]) != 0)
			bail_out("fxt_block_sink");
	reset();
	ok(agent_config_load_block(b.buf, b.len) == 0, "block: loaded");
	memcpy(&from_block, &agent_cfg, sizeof(agent_cfg));
	same_config(&from_env, &from_block, "environment and block");

	/* A torn block: refused, agent_cfg untouched. */
	reset();
	ok(agent_config_load_block(b.buf, b.len - 1) == -EINVAL,
	   "a block without its final \\0: -EINVAL");
	ok(memcmp(&agent_cfg, &pristine, sizeof(agent_cfg)) == 0, "...and nothing loaded");
	free(b.buf);
}

/* Nothing set: the table's defaults (run/settings.def), which are the
 * constants the agent always had. */
static void test_defaults(void)
{
	reset();
	ok(agent_config_load_block("", 1) == 0, "the empty block");
	ASSERT_EQ_U64(agent_cfg.max_size, AGENT_DEFAULT_MAX_SIZE, "FXT_MAX_SIZE's default");
	ASSERT_EQ_U64(agent_cfg.chunk_size, AGENT_DEFAULT_CHUNK_SIZE, "FXT_CHUNK_SIZE's default");
	ASSERT_EQ_U64(agent_cfg.buffer_size, FXT_DEFAULT_BUFFER_STREAM,
		      "FXT_BUFFER_SIZE's default (stream)");
	ASSERT_EQ_U64(agent_cfg.libc_groups, AGENT_G_DEFAULT, "FXT_LIBC's default");
	ASSERT_EQ_U64(agent_cfg.max_snapshots, FXT_DEFAULT_MAX_SNAPSHOTS,
		      "FXT_MAX_SNAPSHOTS's default");
	ok(agent_cfg.mode == FXT_MODE_STREAM && agent_cfg.sample_hz == 0 && agent_cfg.depth == 0 &&
	       agent_cfg.min_duration_ns == 0 && !agent_cfg.debug && agent_cfg.status_fd.fd == -1 &&
	       agent_cfg.clock == AGENT_CLOCK_AUTO && agent_cfg.image == 1 &&
	       agent_cfg.include == NULL && agent_cfg.patch == NULL,
	   "the other defaults: stream, no sampling, no bound, no fd, the clock chosen");
}

/* A malformed value: its default, or the type's fallback. */
static void test_malformed(void)
{
	static const char block[] = "FXT_MODE=bogus\0FXT_CHUNK_SIZE=12x\0FXT_LIBC=nope\0"
				    "FXT_SAMPLE=99999\0FXT_MAX_SIZE=zz\0FXT_DEPTH=-3\0"
				    "FXT_MAX_SNAPSHOTS=0\0FXT_BUFFER_SIZE=1Q\0";

	reset();
	ok(agent_config_load_block(block, sizeof(block)) == 0, "malformed: loaded");
	ok(agent_cfg.mode == FXT_MODE_STREAM, "FXT_MODE=bogus: stream");
	ASSERT_EQ_U64(agent_cfg.chunk_size, AGENT_DEFAULT_CHUNK_SIZE, "FXT_CHUNK_SIZE=12x: 1M");
	ASSERT_EQ_U64(agent_cfg.libc_groups, AGENT_G_DEFAULT, "FXT_LIBC=nope: the default");
	ASSERT_EQ_U64(agent_cfg.sample_hz, 0, "FXT_SAMPLE=99999: not sampling");
	ASSERT_EQ_U64(agent_cfg.max_size, AGENT_DEFAULT_MAX_SIZE, "FXT_MAX_SIZE=zz: 1G");
	ASSERT_EQ_U64(agent_cfg.depth, 0, "FXT_DEPTH=-3: no bound");
	ASSERT_EQ_U64(agent_cfg.max_snapshots, 0, "FXT_MAX_SNAPSHOTS=0: no snapshots");
	ASSERT_EQ_U64(agent_cfg.buffer_size, FXT_DEFAULT_BUFFER_STREAM,
		      "FXT_BUFFER_SIZE=1Q: the mode's default");
}

int main(void)
{
	memcpy(&pristine, &agent_cfg, sizeof(agent_cfg));
	test_env_and_block();
	test_defaults();
	test_malformed();
	done_testing();
	return exit_status();
}
