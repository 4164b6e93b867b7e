/* The agent's configuration: every FXT_* variable the agent reads, loaded once.
 *
 * Private to agent/.  agent/cfg.c loads the rows of the settings
 * table (run/settings.def: the variables, their names, types, defaults and
 * what they mean, the contract between fxt-run and the agent) in the
 * constructor (before main), from the environment, or from a block handed
 * to the agent (attach), into one `struct agent_config`, which is
 * read-only afterwards; nothing else in the agent calls getenv().  A row's
 * F(member) is its field here; its type says how it is read.
 *
 * Category of slices: the basename of the module (executable or shared
 * library) that contains the function, e.g. "prog" or "libfoo.so.1".
 */
#ifndef FXT_AGENT_CFG_H
#define FXT_AGENT_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "run/recording.h"

#define AGENT_DEFAULT_CHUNK_SIZE (1ull << 20)
/* The least per-thread buffer of the oneshot and circular modes. */
#define AGENT_MIN_THREAD_BUFFER (16ull << 10)
#define AGENT_MIN_CHUNK_SIZE	(4ull << 10)
#define AGENT_FLOOR_CHUNK_SIZE	(64ull << 10)
/* A thread's first chunk in a process other than the run's root, in
 * stream mode, with chunks larger than the floor (agent/spool.c,
 * next_size()): most short processes record a few KiB, and each page of a
 * chunk is written and faulted in up front. */
#define AGENT_FIRST_CHUNK_SIZE (16ull << 10)
#define AGENT_DEFAULT_MAX_SIZE	(1ull << 30)

enum agent_clock {
	AGENT_CLOCK_AUTO,
	AGENT_CLOCK_TSC,
	AGENT_CLOCK_MONOTONIC,
};

/* FXT_STATUS_FD: fxt-run's status file, as fd number `fd` of fxt-run
 * (FXT_LAUNCHER's pid), reached as /proc/PID/fd/FD when a process has an
 * archive to report; with its identity (st_dev, st_ino) when given. */
struct agent_status_ref {
	int fd; /* -1 = none */
	bool identified;
	unsigned long long dev, ino;
};

struct agent_config {
	/* The program's name as it was executed: argv[0]'s basename, read
	 * before main() (a server may retitle itself for ps over its argv
	 * later: setproctitle).  A fork child keeps it; an exec reads anew. */
	char program[256];
	char output[PATH_MAX]; /* absolute archive path (root's name) */
	bool output_template;  /* FXT_OUTPUT held a '%' */
	enum fxt_mode mode;    /* FXT_MODE */
	uint64_t buffer_size;  /* FXT_BUFFER_SIZE: per process (stream), or thread */
	uint64_t chunk_size;   /* FXT_CHUNK_SIZE, page multiple */
	uint64_t max_size;     /* FXT_MAX_SIZE, 0 = unlimited */
	enum agent_clock clock;
	bool debug;
	/* FXT_STATUS_FD; .fd -1 = none */
	struct agent_status_ref status_fd;
	long root_pid;	   /* FXT_ROOT_PID, 0 = unset */
	long exec_pid;	   /* FXT_EXEC_PID, 0 = unset */
	unsigned image;	   /* FXT_IMAGE when exec_pid is this pid, else 1 */
	long launcher_pid; /* FXT_LAUNCHER, 0 = no fxt-run */
	uint64_t launcher_start;
	unsigned libc_groups; /* FXT_LIBC: AGENT_G_* bits */
	unsigned sample_hz;   /* FXT_SAMPLE, 0 = off */
	/* The filters (agent/keep/filter.h): patterns and globs one a line, as
	 * given (copies: the program may change its environment). */
	char *include;		  /* FXT_INCLUDE */
	char *exclude;		  /* FXT_EXCLUDE */
	char *modules;		  /* FXT_MODULE */
	unsigned depth;		  /* FXT_DEPTH, 0 = no bound */
	uint64_t min_duration_ns; /* FXT_MIN_DURATION, for the converter */
	/* FXT_SNAPSHOT_IF (agent/keep/snapshot.h), only in the circular mode;
	 * FXT_MAX_SNAPSHOTS. */
	struct fxt_snapshot_rule snap_rules[FXT_MAX_SNAPSHOT_RULES];
	unsigned nsnap_rules;
	unsigned max_snapshots;
	/* Run-time patching (agent/patch/patch.h): FXT_PATCH's patterns, one a
	 * line; FXT_PATCH_MODULE, the libraries' globs; FXT_PATCH_REPORT, the
	 * folder of the patch reports. */
	char *patch;
	char *patch_modules; /* FXT_PATCH_MODULE: globs one a line */
	char *patch_report;
	/* FXT_DEBUG_ROOT: where separate debug files are (NULL: the default,
	 * common/debugpath.h). */
	char *debug_root;
};

/* The settings; valid after agent_config_load(). */
extern struct agent_config agent_cfg;

/* The text of variable `env` (FXT_MODE...) from a source, or NULL. */
typedef const char *agent_settings_get_fn(void *ctx, const char *env);

/* Loads every row the agent reads (run/settings.def) into agent_cfg, from
 * get.  Never fails: malformed values fall back to the defaults (and are
 * logged with FXT_DEBUG).  Once, before anything records. */
void agent_config_load_from(agent_settings_get_fn *get, void *ctx);

/* The same from the environment (the preloaded agent). */
void agent_config_load(void);

/* The same from a block "NAME=VALUE\0...NAME=VALUE\0\0" of len bytes (what
 * fxt_settings_export() gives through fxt_block_sink(): what attach hands
 * to the agent).  0, or -EINVAL for a block without its final "\0\0". */
int agent_config_load_block(const char *block, size_t len);

/* The run's first process, with FXT_OUTPUT a template: passes on the name
 * it made of it, escaped (run/names.h), to the processes it starts. */
void agent_output_export(void);

#endif /* FXT_AGENT_CFG_H */
