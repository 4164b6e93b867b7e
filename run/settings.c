/* The settings table (run/settings.def) as data, and what is made of it:
 * fxt-run's checks of the options, the export of their values to the
 * agent (the environment, or a block), --help's lines. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/settings.h"
#include "run/names.h"
#include "run/recording.h"

#define FXT_ROW_ENV_AGENT(ID)	 FXT_ENV(ID)
#define FXT_ROW_ENV_INTERNAL(ID) FXT_ENV(ID)
#define FXT_ROW_ENV_RUN(ID)	 NULL
#define FXT_ROW_ENV_RUNENV(ID)	 FXT_ENV(ID)

const struct fxt_setting fxt_settings[FXT_S_COUNT] = {
#define X(ID, SHORT, OPT, ARG, TYPE, SCOPE, FIELD, DEF, OPTDEF, HELP, ENV_HELP)    \
	[FXT_S_##ID] = { FXT_ROW_ENV_##SCOPE(ID), OPT, SHORT,  ARG,  FXT_T_##TYPE, \
			 FXT_SC_##SCOPE,	  DEF, OPTDEF, HELP, ENV_HELP },
#include "run/settings.def"
#undef X
};

/* "  -o, --output=FILE" or "      --sample[=HZ]", padded to column 26,
 * then the first line; the further lines in column 26 (help2man reads
 * them as one paragraph). */
void fxt_settings_usage_options(FILE *f)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		const struct fxt_setting *s = &fxt_settings[i];
		char spelling[64];
		const char *h = s->help;

		if (s->opt == NULL)
			continue;
		snprintf(spelling, sizeof(spelling), "  %c%c%s--%s%s%s", s->short_opt ? '-' : ' ',
			 s->short_opt ? s->short_opt : ' ', s->short_opt ? ", " : "  ", s->opt,
			 s->arg && s->arg[0] != '[' ? "=" : "", s->arg ? s->arg : "");
		for (int first = 1;; first = 0) {
			size_t len = strcspn(h, "\n");

			if (first)
				fprintf(f, "%-25s %.*s\n", spelling, (int)len, h);
			else
				fprintf(f, "%26s%.*s\n", "", (int)len, h);
			if (h[len] == '\0')
				break;
			h += len + 1;
		}
	}
}

void fxt_settings_usage_env(FILE *f)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++)
		if (fxt_settings[i].env != NULL)
			fprintf(f, "  %-16s  %s\n", fxt_settings[i].env, fxt_settings[i].env_help);
}

bool fxt_setting_is_text(enum fxt_setting_type type)
{
	switch (type) {
	case FXT_T_LIBC:
	case FXT_T_REGEXES:
	case FXT_T_GLOBS:
	case FXT_T_RULES:
	case FXT_T_TEMPLATE:
	case FXT_T_PATH:
	case FXT_T_WORDS:
		return true;
	default:
		return false;
	}
}

/* A decimal number in 1..max, digits only. */
static int parse_bounded(const char *s, unsigned long max, uint64_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (v == 0 || errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Appends `s` to the list *list, one item a line. */
static int append_line(char **list, const char *s)
{
	size_t old = *list ? strlen(*list) : 0;
	char *v = realloc(*list, old + strlen(s) + 2);

	if (v == NULL)
		return -1;
	if (old)
		v[old++] = '\n';
	strcpy(v + old, s);
	*list = v;
	return 0;
}

/* -o's escapes (run/names.h), checked before anything runs. */
static int check_template(const char *tmpl, char *why, size_t cap)
{
	struct run_template_values v = { 1, 0, "p", "h" };
	char buf[PATH_MAX], bad = 0;

	if (tmpl[0] == '\0') {
		snprintf(why, cap, "-o: empty file name");
		return -1;
	}
	/* The agent writes archives with seeks and renames of its own, and
	 * several processes may write: a file. */
	if (strcmp(tmpl, "-") == 0) {
		snprintf(why, cap,
			 "-o -: cannot write the archive to standard output; give a file name");
		return -1;
	}
	if (run_output_expand(buf, sizeof(buf), tmpl, &v, &bad) != -EINVAL)
		return 0;
	if (bad)
		snprintf(why, cap,
			 "-o %s: unknown escape '%%%c' (%%p pid, %%t time, %%n program, %%h host, "
			 "%%%% a '%%')",
			 tmpl, bad);
	else
		snprintf(why, cap, "-o %s: a '%%' at the end (write %%%% for a '%%')", tmpl);
	return -1;
}

/* --libc: every group known; else the first unknown one. */
static int check_libc(const char *opt, const char *list, char *why, size_t cap)
{
	unsigned groups;

	if (run_libc_parse(list, &groups) == 0)
		return 0;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		char one[64];

		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		if (len >= sizeof(one) || run_libc_parse(one, &groups) != 0) {
			snprintf(why, cap,
				 "--%s: unknown group '%.*s' (groups: io, mem, thread, sync, proc, "
				 "sleep, log; or all, none, default)",
				 opt, (int)len, p);
			return -1;
		}
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	snprintf(why, cap, "--%s: invalid list '%s'", opt, list);
	return -1;
}

/* A POSIX extended regular expression (as the agent compiles it,
 * agent/keep/filter.c) without a newline (the list separator). */
static int check_regex(const char *opt, const char *re, char *why, size_t cap)
{
	regex_t r;
	char msg[128];
	int rc;

	if (re[0] == '\0' || strchr(re, '\n')) {
		snprintf(why, cap, "--%s: invalid pattern '%s'", opt, re);
		return -1;
	}
	rc = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r, msg, sizeof(msg));
		snprintf(why, cap, "--%s: '%s' is not a regular expression: %s", opt, re, msg);
		return -1;
	}
	regfree(&r);
	return 0;
}

/* --include: a pattern, which may end in a test of an argument
 * ("lookup@arg1==42", run/recording.h), to the list so far; --exclude: a
 * pattern without one. */
static int check_filter(const char *opt, const char *a, const char *list, char *why, size_t cap)
{
	struct fxt_snapshot_rule r;
	size_t pos = 0;
	const char *what = NULL;
	unsigned tests = 1;
	int rc = strchr(a, '\n') ? 0 : run_include_test_parse(a, strlen(a), &r, &pos, &what);

	if (rc < 0) {
		snprintf(why, cap, "--%s: '%s': at column %zu, %s expected", opt, a, pos + 1, what);
		return -1;
	}
	if (rc == 0)
		return check_regex(opt, a, why, cap);
	if (strcmp(opt, "include") != 0) {
		snprintf(why, cap, "--%s: '%s': only --include takes a test of an argument", opt,
			 a);
		return -1;
	}
	for (const char *l = list; l && *l;) {
		size_t len = strcspn(l, "\n");
		struct fxt_snapshot_rule o;

		tests += run_include_test_parse(l, len, &o, &pos, &what) == 1;
		l += len + (l[len] == '\n');
	}
	if (tests > FXT_MAX_INCLUDE_TESTS) {
		snprintf(why, cap, "--%s: at most %u patterns with a test", opt,
			 FXT_MAX_INCLUDE_TESTS);
		return -1;
	}
	return check_regex(opt, r.name, why, cap);
}

/* --snapshot-if: "NAME>DURATION" (run/recording.h), to the list so far. */
static int check_rule(const char *opt, const char *rule, const char *list, char *why, size_t cap)
{
	struct fxt_snapshot_rule r;
	unsigned n = 1;

	for (const char *p = list; p && *p; p++)
		n += *p == '\n';
	if (n > FXT_MAX_SNAPSHOT_RULES) {
		snprintf(why, cap, "--%s: at most %u rules", opt, FXT_MAX_SNAPSHOT_RULES);
		return -1;
	}
	size_t pos = 0;
	const char *what = NULL;

	if (strchr(rule, '\n') != NULL ||
	    run_snapshot_rule_parse_at(rule, strlen(rule), &r, &pos, &what) != 0) {
		if (what)
			snprintf(why, cap, "--%s: '%s': at column %zu, %s expected", opt, rule,
				 pos + 1, what);
		else
			snprintf(why, cap,
				 "--%s: '%s' is not NAME>DURATION (a function's name or glob, "
				 "or libc.GROUP; a duration such as 10ms) nor NAME@retval<0 or "
				 "NAME@arg2>=4096",
				 opt, rule);
		return -1;
	}
	return 0;
}

/* The option's own checks, type by type (the agent's, from the
 * environment, are more lenient: agent/cfg.c). */
static int check(const struct fxt_setting *row, const char *a, union fxt_value *val, char *why,
		 size_t cap)
{
	const char *opt = row->opt;
	enum fxt_mode mode;

	switch (row->type) {
	case FXT_T_FLAG:
		val->u = 1;
		return 0;
	case FXT_T_SIZE:
	case FXT_T_SIZE_NZ:
		if (run_parse_size(a, &val->u) == 0 && (val->u != 0 || row->type == FXT_T_SIZE))
			return 0;
		snprintf(why, cap, "--%s: invalid size '%s'", opt, a);
		return -1;
	case FXT_T_DURATION:
		if (run_parse_duration(a, &val->u) == 0)
			return 0;
		snprintf(why, cap,
			 "--%s: invalid duration '%s' (a number and ns, us, ms or s: 10us)", opt,
			 a);
		return -1;
	case FXT_T_SECONDS:
		if (run_parse_seconds(a, &val->u) == 0)
			return 0;
		snprintf(why, cap,
			 "--%s: invalid duration '%s' (seconds, or a number and ms, us or ns: "
			 "10, 2.5s, 500ms)",
			 opt, a);
		return -1;
	case FXT_T_COUNT:
		if (a[0] != '-' && parse_bounded(a, 1000000, &val->u) == 0)
			return 0;
		snprintf(why, cap, "--%s: not a count in 1..1000000: '%s'", opt, a);
		return -1;
	case FXT_T_RATE:
		if (parse_bounded(a, AGENT_MAX_SAMPLE_HZ, &val->u) == 0)
			return 0;
		snprintf(why, cap, "--%s: invalid rate '%s' (1 to %u samples per second)", opt, a,
			 AGENT_MAX_SAMPLE_HZ);
		return -1;
	case FXT_T_DEPTH:
		if (parse_bounded(a, 1000000, &val->u) == 0)
			return 0;
		snprintf(why, cap, "--%s: invalid depth '%s' (1 to 1000000)", opt, a);
		return -1;
	case FXT_T_MODE:
		if (run_mode_parse(a, &mode) == 0) {
			val->u = mode;
			return 0;
		}
		snprintf(why, cap, "--%s: unknown mode '%s' (modes: " FXT_MODE_NAMES ")", opt, a);
		return -1;
	case FXT_T_LIBC:
		return check_libc(opt, a, why, cap);
	case FXT_T_REGEXES:
		if (strcmp(opt, "include") == 0 || strcmp(opt, "exclude") == 0)
			return check_filter(opt, a, val->s, why, cap);
		return check_regex(opt, a, why, cap);
	case FXT_T_GLOBS:
		if (a[0] != '\0' && !strchr(a, '\n'))
			return 0;
		snprintf(why, cap, "--%s: invalid glob '%s'", opt, a);
		return -1;
	case FXT_T_RULES:
		return check_rule(opt, a, val->s, why, cap);
	case FXT_T_TEMPLATE:
		return check_template(a, why, cap);
	case FXT_T_PID:
		if (a[0] != '-' && parse_bounded(a, 1u << 22, &val->u) == 0)
			return 0;
		snprintf(why, cap, "--%s: not a process id: '%s'", opt, a);
		return -1;
	case FXT_T_WORDS:
		if (a[0] != '\0' && !strchr(a, '\n'))
			return 0;
		snprintf(why, cap, "--%s: empty, or more than one line", opt);
		return -1;
	case FXT_T_PATH: {
		/* A folder, absolute: the program may change folders. */
		struct stat st;
		if (a[0] == '/' && !strchr(a, '\n') && stat(a, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		snprintf(why, cap, "--%s: '%s' is not %s", opt, a,
			 a[0] != '/' ? "an absolute path" : "a folder");
		return -1;
	}
	default: /* no option of these types */
		snprintf(why, cap, "%s: not an option", row->env);
		return -1;
	}
}

int fxt_setting_parse(enum fxt_setting_id id, const char *arg, struct fxt_values *v, char *why,
		      size_t cap)
{
	const struct fxt_setting *row = &fxt_settings[id];
	union fxt_value *val = &v->v[id];
	bool list =
	    row->type == FXT_T_REGEXES || row->type == FXT_T_GLOBS || row->type == FXT_T_RULES;
	char *copy;

	if (arg == NULL)
		arg = row->optdef;
	if (check(row, arg ? arg : "", val, why, cap) != 0)
		return -1;
	if (list) {
		if (append_line(&val->s, arg) != 0)
			goto oom;
	} else if (fxt_setting_is_text(row->type)) {
		copy = strdup(arg);
		if (copy == NULL)
			goto oom;
		free(val->s);
		val->s = copy;
	}
	v->given[id] = true;
	return 0;
oom:
	snprintf(why, cap, "out of memory");
	return -1;
}

void fxt_values_free(struct fxt_values *v)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++)
		if (fxt_setting_is_text(fxt_settings[i].type)) {
			free(v->v[i].s);
			v->v[i].s = NULL;
		}
}

int fxt_settings_export(const struct fxt_values *v, fxt_setting_sink_fn *sink, void *ctx)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		const struct fxt_setting *row = &fxt_settings[i];
		char num[24];
		const char *text = num;
		int rc;

		if (row->scope != FXT_SC_AGENT || !v->given[i])
			continue;
		if (fxt_setting_is_text(row->type))
			text = v->v[i].s;
		else if (row->type == FXT_T_MODE)
			text = run_mode_name((unsigned)v->v[i].u);
		else
			snprintf(num, sizeof(num), "%llu", (unsigned long long)v->v[i].u);
		rc = sink(ctx, row->env, text);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int fxt_block_sink(void *block, const char *env, const char *value)
{
	struct fxt_block *b = block;
	size_t n = strlen(env), m = strlen(value), need;
	char *buf;

	if (strchr(env, '=') != NULL || n + m + 3 < n)
		return -EINVAL;
	need = (b->len ? b->len : 1) + n + 1 + m + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < need)
			cap *= 2;
		buf = realloc(b->buf, cap);
		if (buf == NULL)
			return -ENOMEM;
		b->buf = buf;
		b->cap = cap;
	}
	/* Over the final '\0', which comes again after the value. */
	buf = b->buf + (b->len ? b->len - 1 : 0);
	memcpy(buf, env, n);
	buf[n] = '=';
	memcpy(buf + n + 1, value, m + 1);
	buf[n + 1 + m + 1] = '\0';
	b->len = need;
	return 0;
}

bool fxt_block_valid(const char *block, size_t len)
{
	return block != NULL && len >= 1 && block[len - 1] == '\0' &&
	       (len == 1 || (len >= 3 && block[len - 2] == '\0'));
}

const char *fxt_block_get(const char *block, size_t len, const char *env)
{
	size_t n = strlen(env);

	if (!fxt_block_valid(block, len))
		return NULL;
	/* Each entry ends with a '\0' before the final one: bounded by len. */
	for (size_t i = 0; i + 1 < len;) {
		size_t e = strlen(block + i);

		if (e > n && memcmp(block + i, env, n) == 0 && block[i + n] == '=')
			return block + i + n + 1;
		i += e + 1;
	}
	return NULL;
}

/* Columns of the longest line of s. */
static size_t widest(const char *s)
{
	size_t w = 0;

	while (s && *s) {
		size_t len = strcspn(s, "\n");
		w = len > w ? len : w;
		s += len + (s[len] == '\n');
	}
	return w;
}

int run_settings_check(const struct fxt_setting *v, size_t n, char *why, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		const struct fxt_setting *a = &v[i];
		const char *name = a->opt ? a->opt : a->env ? a->env : "?";

		if (a->opt && (a->help == NULL || widest(a->help) > 53)) {
			snprintf(why, cap, "--%s: help lines of 1 to 53 columns", name);
			return -1;
		}
		if (a->env && (a->env_help == NULL || strlen(a->env_help) > 56)) {
			snprintf(why, cap, "%s: an Environment line of 1 to 56 columns", a->env);
			return -1;
		}
		if (!a->opt && !a->env) {
			snprintf(why, cap, "row %zu: neither an option nor a variable", i);
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			const struct fxt_setting *b = &v[j];

			if ((a->opt && b->opt && strcmp(a->opt, b->opt) == 0) ||
			    (a->short_opt && a->short_opt == b->short_opt) ||
			    (a->env && b->env && strcmp(a->env, b->env) == 0)) {
				snprintf(why, cap, "%s: given twice", name);
				return -1;
			}
		}
	}
	return 0;
}
