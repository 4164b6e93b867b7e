/* What lifecycle.c and seal.c provide to the agent's modules, for unit
 * tests that compile those modules without them (no constructor, no libc
 * wrappers).
 * Private to the agent tests. */
#ifndef FXT_TESTS_AGENT_TEST_STUBS_H
#define FXT_TESTS_AGENT_TEST_STUBS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cfg.h"
#include "agent/keep/snapshot.h"
#include "run/names.h"

struct agent agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int agent_ensure_init(void)
{
	return 0;
}

void agent_seal(void)
{
}

/* No fork here: the state is always the process's. */
bool agent_check_process(void)
{
	return true;
}

/* Snapshots (snapshot.c, which needs seal.c): no rule. */
unsigned agent_snap_libc;

void agent_snapshot_libc_begin(struct tstate *t, unsigned fn)
{
	(void)t;
	(void)fn;
}

void agent_snapshot_libc_end(struct tstate *t, unsigned fn)
{
	(void)t;
	(void)fn;
}

void agent_spool_path(char *buf, size_t cap, const char *output, long pid, unsigned image)
{
	run_spool_name(buf, cap, output, pid, image);
}

static char test_dir[] = "/tmp/fxt-agent-test.XXXXXX";

/* A fresh agent with a spool in a private temporary directory. */
static inline void test_agent_reset(uint64_t chunk, uint64_t buffer, uint64_t max)
{
	static int made;
	char path[512];

	if (!made) {
		if (!mkdtemp(test_dir)) {
			perror("mkdtemp");
			exit(99);
		}
		made = 1;
	}
	if (agent.spool.hdr)
		spool_destroy(&agent.spool);
	agent.threads = NULL;
	agent.next_serial = 0;
	agent.lost = 0;
	agent_cfg.chunk_size = chunk;
	agent_cfg.buffer_size = buffer;
	agent_cfg.max_size = max;
	snprintf(path, sizeof(path), "%s/spool", test_dir);
	spool_init(&agent.spool, path, chunk, buffer, max);
	memset(agent.spool.mods, 0, sizeof(agent.spool.mods));
	agent.spool.nmods = 0;
}

/* Removes the spool and its directory: every test that resets calls it. */
static inline void test_agent_cleanup(void)
{
	char path[512];

	if (agent.spool.hdr)
		spool_destroy(&agent.spool);
	snprintf(path, sizeof(path), "%s/spool", test_dir);
	unlink(path);
	rmdir(test_dir);
}

#endif /* FXT_TESTS_AGENT_TEST_STUBS_H */
