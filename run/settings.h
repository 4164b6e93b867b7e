/* The settings of a run, as rows (run/settings.def, the one list of them):
 * their ids, FXT_* names and types, and what fxt-run and the agent do with
 * the rows.  Compiled into fxt-run and into the agent. */
#ifndef FXT_RUN_SETTINGS_H
#define FXT_RUN_SETTINGS_H

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
 * agent takes a variable leniently (agent/settings.c). */
enum fxt_setting_type {
	FXT_T_FLAG,	 /* an option without argument; for RUNENV, set or not */
	FXT_T_BOOL,	 /* set and not "0" */
	FXT_T_SIZE,	 /* bytes, fxt__parse_size() */
	FXT_T_SIZE_NZ,	 /* the same, not 0 as an option */
	FXT_T_DURATION,	 /* nanoseconds, fxt__parse_duration() */
	FXT_T_COUNT,	 /* 1 to 1000000 */
	FXT_T_RATE,	 /* Hz, 1 to AGENT_MAX_SAMPLE_HZ (the agent: 0 too) */
	FXT_T_DEPTH,	 /* 1 to 1000000 (the agent: 0 too, no bound) */
	FXT_T_MODE,	 /* enum fxt_mode by name */
	FXT_T_LIBC,	 /* libc groups, agent_libc_parse() */
	FXT_T_REGEXES,	 /* POSIX EREs, one a line; the option repeats */
	FXT_T_GLOBS,	 /* globs, one a line; the option repeats */
	FXT_T_RULES,	 /* NAME>DURATION, one a line; the option repeats */
	FXT_T_TEMPLATE,	 /* a run's output name (spool/names.h) */
	FXT_T_PID,	 /* a pid, 0: none */
	FXT_T_IMAGE,	 /* an image number */
	FXT_T_LAUNCHER,	 /* PID:START */
	FXT_T_STATUS_FD, /* FD or FD:DEV:INO */
	FXT_T_CLOCK,	 /* tsc or monotonic */
	FXT_T_PATH,	 /* a path, as it is */
};

enum fxt_setting_scope {
	FXT_SC_AGENT,	 /* an option; fxt-run exports it, the agent loads it */
	FXT_SC_INTERNAL, /* the agent loads it; set by fxt-run's or the agent's code */
	FXT_SC_RUN,	 /* an option of fxt-run only */
	FXT_SC_RUNENV,	 /* read by fxt-run from its environment */
};

/* One row of run/settings.def. */
struct fxt_setting {
	const char *env;      /* "FXT_MAX_SIZE"; NULL for RUN rows */
	const char *opt;      /* "max-size"; NULL: no option */
	char short_opt;	      /* 'o', or 0 */
	const char *arg;      /* "SIZE"; "[=HZ]": optional; NULL: no argument */
	enum fxt_setting_type type;
	enum fxt_setting_scope scope;
	const char *def;      /* the agent's default, spelled as a user would */
	const char *optdef;   /* the option's value without its argument */
	const char *help;     /* --help's lines, at most 50 columns each */
	const char *env_help; /* the Environment line, at most 56 columns */
};

extern const struct fxt_setting fxt_settings[FXT_S_COUNT];

/* --help's option lines, every row with an option, in the table's order. */
void fxt_settings_usage_options(FILE *f);

/* --help's Environment lines, every row with a variable. */
void fxt_settings_usage_env(FILE *f);

#endif /* FXT_RUN_SETTINGS_H */
