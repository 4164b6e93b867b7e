/* The settings of a run, as rows (run/settings.def, the one list of them):
 * their ids, FXT_* names and types, and what fxt-run and the agent do with
 * the rows.  Compiled into fxt-run and into the agent. */
#ifndef FXT_RUN_SETTINGS_H
#define FXT_RUN_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The variable of row ID: a literal, so FXT_ENV(STATUS_FD) "=%s" works. */
#define FXT_ENV(ID) "FXT_" #ID

enum fxt_setting_id {
#define X(ID, ...) FXT_S_##ID,
#include "run/settings.def"
#undef X
	FXT_S_COUNT
};

/* How a value is read: fxt-run checks an option's argument strictly, the
 * agent takes a variable leniently (agent/cfg.c). */
enum fxt_setting_type {
	FXT_T_FLAG,	 /* an option without argument; for RUNENV, set or not */
	FXT_T_BOOL,	 /* set and not "0" */
	FXT_T_SIZE,	 /* bytes, run_parse_size() */
	FXT_T_SIZE_NZ,	 /* the same, not 0 as an option */
	FXT_T_DURATION,	 /* nanoseconds, run_parse_duration() */
	FXT_T_SECONDS,	 /* the same, a bare number in seconds (a window: --duration 10) */
	FXT_T_COUNT,	 /* 1 to 1000000 */
	FXT_T_RATE,	 /* Hz, 1 to AGENT_MAX_SAMPLE_HZ (the agent: 0 too) */
	FXT_T_DEPTH,	 /* 1 to 1000000 (the agent: 0 too, no bound) */
	FXT_T_MODE,	 /* enum fxt_mode by name */
	FXT_T_LIBC,	 /* libc groups, run_libc_parse() */
	FXT_T_REGEXES,	 /* POSIX EREs, one a line; the option repeats */
	FXT_T_GLOBS,	 /* globs, one a line; the option repeats */
	FXT_T_RULES,	 /* NAME>DURATION, one a line; the option repeats */
	FXT_T_TEMPLATE,	 /* a run's output name (run/names.h) */
	FXT_T_PID,	 /* a pid, 0: none */
	FXT_T_IMAGE,	 /* an image number */
	FXT_T_LAUNCHER,	 /* PID:START */
	FXT_T_STATUS_FD, /* FD or FD:DEV:INO */
	FXT_T_CLOCK,	 /* tsc or monotonic */
	FXT_T_PATH,	 /* a path, as it is */
	FXT_T_WORDS,	 /* words, comma-separated, checked by their user */
};

enum fxt_setting_scope {
	FXT_SC_AGENT,	 /* an option; fxt-run exports it, the agent loads it */
	FXT_SC_INTERNAL, /* the agent loads it; set by fxt-run's or the agent's code */
	FXT_SC_RUN,	 /* an option of fxt-run only */
	FXT_SC_RUNENV,	 /* read by fxt-run from its environment */
};

/* One row of run/settings.def. */
struct fxt_setting {
	const char *env; /* "FXT_MAX_SIZE"; NULL for RUN rows */
	const char *opt; /* "max-size"; NULL: no option */
	char short_opt;	 /* 'o', or 0 */
	const char *arg; /* "SIZE"; "[=HZ]": optional; NULL: no argument */
	enum fxt_setting_type type;
	enum fxt_setting_scope scope;
	const char *def;      /* the agent's default, spelled as a user would */
	const char *optdef;   /* the option's value without its argument */
	const char *help;     /* --help's lines, at most 53 columns each */
	const char *env_help; /* the Environment line, at most 56 columns */
};

extern const struct fxt_setting fxt_settings[FXT_S_COUNT];

/* A value as fxt-run holds it: a number (sizes in bytes, durations in ns,
 * the mode, a flag), or a malloc'd string (lists one item a line, libc
 * groups as given, paths) for the types that fxt_setting_is_text(). */
union fxt_value {
	uint64_t u;
	char *s;
};

/* The settings given on fxt-run's command line. */
struct fxt_values {
	bool given[FXT_S_COUNT];
	union fxt_value v[FXT_S_COUNT];
};

bool fxt_setting_is_text(enum fxt_setting_type type);

/* Checks the argument of row `id`'s option and stores it into *v (a list
 * grows by one line).  0, or -1 with the whole error line in why
 * ("--max-size: invalid size '12x'"). */
int fxt_setting_parse(enum fxt_setting_id id, const char *arg, struct fxt_values *v, char *why,
		      size_t cap);

/* The strings of *v. */
void fxt_values_free(struct fxt_values *v);

/* Receives one variable of an export; 0 or -errno. */
typedef int fxt_setting_sink_fn(void *ctx, const char *env, const char *value);

/* Passes every AGENT row given in *v to sink, as the agent reads it: sizes
 * and durations in bytes and ns, the mode by name, lists one item a line.
 * 0, or the sink's first error. */
int fxt_settings_export(const struct fxt_values *v, fxt_setting_sink_fn *sink, void *ctx);

/* A block of settings, "NAME=VALUE\0...NAME=VALUE\0\0": what attach hands
 * to the agent (agent_config_load_block()).  Empty: {NULL, 0, 0}. */
struct fxt_block {
	char *buf;
	size_t len, cap; /* len: with the final '\0' */
};

/* A sink appending to the struct fxt_block *block; 0 or -ENOMEM, -EINVAL
 * (a name with '=', a value too long). */
int fxt_block_sink(void *block, const char *env, const char *value);

/* The value of `env` in a block of `len` bytes, or NULL; never reads past
 * len.  The block must end with "\0\0" (or be "\0"): see
 * fxt_block_valid(). */
const char *fxt_block_get(const char *block, size_t len, const char *env);
bool fxt_block_valid(const char *block, size_t len);

/* The table's rules, for unit tests: no two rows with one option, short
 * option or variable; help lines of at most 53 columns, Environment lines
 * of 56; an option's row has a help, a variable's its line.  0, or -1 with
 * the first broken rule in why. */
int run_settings_check(const struct fxt_setting *v, size_t n, char *why, size_t cap);

/* --help's option lines, every row with an option, in the table's order. */
void fxt_settings_usage_options(FILE *f);

/* --help's Environment lines, every row with a variable. */
void fxt_settings_usage_env(FILE *f);

#endif /* FXT_RUN_SETTINGS_H */
