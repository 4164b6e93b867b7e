/* The agent's configuration: every row of the settings table it loads
 * (run/settings.def), read once (see cfg.h): from the environment, or
 * from a block of them.  A walk over the rows loads each into its field of
 * agent_cfg, by its type; derive() then does what is not one row's. */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/cfg.h"
#include "run/recording.h"
#include "agent/log.h"
#include "agent/mode.h"
#include "run/settings.h"
#include "run/names.h"

/* What a setting that is not given leaves: a block loaded for a new attach
 * window starts from it, not from the last window's settings. */
#define AGENT_CFG_INIT                                                                            \
	{                                                                                         \
		.buffer_size = FXT_DEFAULT_BUFFER_STREAM, .chunk_size = AGENT_DEFAULT_CHUNK_SIZE, \
		.max_size = AGENT_DEFAULT_MAX_SIZE, .status_fd = { .fd = -1 },                    \
	}

struct agent_config agent_cfg = AGENT_CFG_INIT;

static long parse_long(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		return 0;
	return v;
}

/* FXT_STATUS_FD: "FD" or "FD:DEV:INO", a descriptor of fxt-run's own
 * (the program does not inherit it: it would see a descriptor it did not
 * open), and the identity of the file it refers to, which the seal checks
 * when it reopens it (report_status()).  Anything else leaves *r
 * without an fd. */
static void parse_status_fd(const char *s, struct agent_status_ref *r)
{
	unsigned long long fd, dev = 0, ino = 0;
	bool identified = false;
	char *end;

	r->fd = -1;
	if (!s || *s < '0' || *s > '9')
		return;
	errno = 0;
	fd = strtoull(s, &end, 10);
	if (*end == ':') {
		identified = true;
		dev = strtoull(end + 1, &end, 10);
		if (*end != ':')
			return;
		ino = strtoull(end + 1, &end, 10);
	}
	if (errno || *end || fd >= 1u << 20)
		return;
	r->fd = (int)fd;
	r->identified = identified;
	r->dev = dev;
	r->ino = ino;
}

/* The executable's short name, for the default output and the process
 * name (agent_cfg.program): /proc/self/comm would be cut at 15 bytes, so
 * argv[0]'s, which glibc's program_invocation_short_name points into: a
 * copy, taken before the program may write its title over argv.  Without
 * argv[0], the executable file's name. */
static void load_program(void)
{
	extern char *program_invocation_short_name;
	const char *p = program_invocation_short_name;
	char exe[PATH_MAX];
	size_t len;
	ssize_t n;

	if (!p || !*p) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		p = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	}
	if (!*p)
		p = "program";
	len = strnlen(p, sizeof(agent_cfg.program) - 1);
	memcpy(agent_cfg.program, p, len);
	agent_cfg.program[len] = '\0';
}

/* FXT_OUTPUT, a template (run/names.h): fxt-run gives every process
 * the name escaped, as does the first process of a run without it, once
 * it expanded it (agent_output_export()); so every process of a run
 * comes to the same name.  Unset: PROGRAM.fxt.  Made absolute against
 * the current directory. */
static void load_output(const char *s)
{
	char name[PATH_MAX], cwd[PATH_MAX], host[256], bad = 0;
	struct run_template_values v;
	size_t n;

	if (!s || !*s) {
		snprintf(name, sizeof(name), "%s", agent_cfg.program);
		n = strlen(name);
		if (n + 5 < sizeof(name))
			memcpy(name + n, ".fxt", 5);
	} else if (!strchr(s, '%')) {
		snprintf(name, sizeof(name), "%s", s);
	} else {
		agent_cfg.output_template = true;
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		v.pid = (long)getpid();
		v.start = (long long)time(NULL);
		v.program = agent_cfg.program;
		v.host = host;
		if (run_output_expand(name, sizeof(name), s, &v, &bad) != 0) {
			agent_err("%s: %s; the name is taken as it is", FXT_ENV(OUTPUT),
				  bad ? "an unknown %-escape" : "too long once expanded");
			snprintf(name, sizeof(name), "%s", s);
		}
	}
	if (name[0] == '/') {
		snprintf(agent_cfg.output, sizeof(agent_cfg.output), "%s", name);
		return;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	n = (size_t)snprintf(agent_cfg.output, sizeof(agent_cfg.output), "%s/%s", cwd, name);
	if (n >= sizeof(agent_cfg.output))
		snprintf(agent_cfg.output, sizeof(agent_cfg.output), "%s", name);
}

void agent_output_export(void)
{
	char escaped[2 * PATH_MAX + 1];

	if (agent_cfg.output_template &&
	    run_output_escape(escaped, sizeof(escaped), agent_cfg.output) == 0)
		setenv(FXT_ENV(OUTPUT), escaped, 1);
}

/* FXT_SNAPSHOT_IF, with FXT_MAX_SNAPSHOTS loaded: the rules, which make
 * the mode circular unless FXT_MODE chose another (they are then
 * ignored): run_mode_resolve(). */
static void load_snapshot_rules(const char *s, bool mode_given)
{
	const char *why;

	while (s && *s && agent_cfg.nsnap_rules < FXT_MAX_SNAPSHOT_RULES) {
		size_t len = strcspn(s, "\n");
		struct fxt_snapshot_rule *r = &agent_cfg.snap_rules[agent_cfg.nsnap_rules];

		if (len && run_snapshot_rule_parse(s, len, r) == 0)
			agent_cfg.nsnap_rules++;
		else if (len)
			agent_dbg(FXT_ENV(SNAPSHOT_IF) ": a rule is not NAME>DURATION; left out");
		s += len + (s[len] == '\n');
	}
	if (!agent_cfg.max_snapshots)
		agent_cfg.nsnap_rules = 0;
	agent_cfg.mode =
	    run_mode_resolve(mode_given, agent_cfg.mode, agent_cfg.nsnap_rules != 0, &why);
	if (why) {
		agent_dbg(FXT_ENV(SNAPSHOT_IF) ": %s; no snapshots", why);
		agent_cfg.nsnap_rules = 0;
	}
}

/* FXT_LAUNCHER: "PID:START". */
static void parse_launcher(const char *s)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	char *end;
	long pid;
	unsigned long long start;

	if (!colon)
		return;
	errno = 0;
	pid = strtol(s, &end, 10);
	if (errno || end != colon || pid <= 0)
		return;
	start = strtoull(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1)
		return;
	agent_cfg.launcher_pid = pid;
	agent_cfg.launcher_start = start;
}

/* ---------------------------------------------------- loading the rows */

/* Each type's loader: the text of row `id` (set, perhaps empty) into its
 * field, as leniently as the agent always read it; a malformed value keeps
 * the default (or the type's fallback) and is logged.  False when the
 * field was left as it was. */
typedef bool load_fn(enum fxt_setting_id id, const char *s, void *field);

static bool load_bool(enum fxt_setting_id id, const char *s, void *field)
{
	(void)id;
	*(bool *)field = *s && strcmp(s, "0") != 0;
	return true;
}

static bool load_size(enum fxt_setting_id id, const char *s, void *field)
{
	uint64_t v;

	if (run_parse_size(s, &v) < 0) {
		if (fxt_settings[id].def == NULL)
			agent_dbg("%s=%s is not a size; using the default", fxt_settings[id].env,
				  s);
		else
			agent_dbg("%s=%s is not a size; using %llu", fxt_settings[id].env, s,
				  (unsigned long long)*(uint64_t *)field);
		return false;
	}
	*(uint64_t *)field = v;
	return true;
}

static bool load_duration(enum fxt_setting_id id, const char *s, void *field)
{
	if (*s && run_parse_duration(s, (uint64_t *)field) < 0) {
		agent_dbg("%s=%s: not a duration; every call kept", fxt_settings[id].env, s);
		*(uint64_t *)field = 0;
	}
	return true;
}

/* 1 to 1000000; else 0: FXT_MAX_SNAPSHOTS's type, whose 0 is no
 * snapshot. */
static bool load_count(enum fxt_setting_id id, const char *s, void *field)
{
	long v = *s ? parse_long(s) : parse_long(fxt_settings[id].def);

	*(unsigned *)field = v > 0 && v <= 1000000 ? (unsigned)v : 0;
	if (*s && !*(unsigned *)field)
		agent_dbg("%s=%s: not a count in 1..1000000; no snapshots", fxt_settings[id].env,
			  s);
	return true;
}

static bool load_rate(enum fxt_setting_id id, const char *s, void *field)
{
	long hz;

	if (!*s)
		return false;
	hz = parse_long(s);
	if (hz < 0 || hz > (long)AGENT_MAX_SAMPLE_HZ) {
		agent_dbg("%s=%s: not a rate in 0..%u Hz; not sampling", fxt_settings[id].env, s,
			  AGENT_MAX_SAMPLE_HZ);
		return false;
	}
	*(unsigned *)field = (unsigned)hz;
	return true;
}

static bool load_depth(enum fxt_setting_id id, const char *s, void *field)
{
	long d;

	if (!*s)
		return false;
	d = parse_long(s);
	if (d < 0 || d > 1000000) {
		agent_dbg("%s=%s: not a depth; no bound", fxt_settings[id].env, s);
		return false;
	}
	*(unsigned *)field = (unsigned)d;
	return true;
}

static bool load_mode(enum fxt_setting_id id, const char *s, void *field)
{
	if (run_mode_parse(s, (enum fxt_mode *)field) < 0) {
		agent_dbg("%s=%s: not a mode (" FXT_MODE_NAMES "); using stream",
			  fxt_settings[id].env, s);
		*(enum fxt_mode *)field = FXT_MODE_STREAM;
	}
	return true;
}

static bool load_libc(enum fxt_setting_id id, const char *s, void *field)
{
	if (run_libc_parse(s, (unsigned *)field) < 0) {
		agent_dbg("%s=%s: unknown group; using the default", fxt_settings[id].env, s);
		*(unsigned *)field = AGENT_G_DEFAULT;
	}
	return true;
}

/* A copy, when not empty (the program may change its environment). */
static bool load_text(enum fxt_setting_id id, const char *s, void *field)
{
	(void)id;
	if (!*s)
		return false;
	*(char **)field = strdup(s);
	return true;
}

static bool load_pid(enum fxt_setting_id id, const char *s, void *field)
{
	(void)id;
	*(long *)field = parse_long(s);
	return true;
}

/* "tsc", or anything else: monotonic; empty: the default. */
static bool load_clock(enum fxt_setting_id id, const char *s, void *field)
{
	(void)id;
	*(enum agent_clock *)field = strcmp(s, "tsc") == 0 ? AGENT_CLOCK_TSC
				     : *s		   ? AGENT_CLOCK_MONOTONIC
							   : AGENT_CLOCK_AUTO;
	return true;
}

static bool load_status_fd(enum fxt_setting_id id, const char *s, void *field)
{
	(void)id;
	parse_status_fd(s, field);
	return true;
}

static load_fn *const loaders[] = {
	[FXT_T_BOOL] = load_bool,
	[FXT_T_SIZE] = load_size,
	[FXT_T_SIZE_NZ] = load_size,
	[FXT_T_DURATION] = load_duration,
	[FXT_T_COUNT] = load_count,
	[FXT_T_RATE] = load_rate,
	[FXT_T_DEPTH] = load_depth,
	[FXT_T_MODE] = load_mode,
	[FXT_T_LIBC] = load_libc,
	[FXT_T_REGEXES] = load_text,
	[FXT_T_GLOBS] = load_text,
	[FXT_T_PATH] = load_text,
	[FXT_T_PID] = load_pid,
	[FXT_T_CLOCK] = load_clock,
	[FXT_T_STATUS_FD] = load_status_fd,
};

/* Where each row goes in agent_cfg (F(member)), or NO_FIELD (NF): the
 * rows derive() reads itself, and fxt-run's. */
#define NO_FIELD  SIZE_MAX
#define F(member) offsetof(struct agent_config, member)
#define NF	  NO_FIELD
static const size_t field_off[FXT_S_COUNT] = {
#define X(ID, SHORT, OPT, ARG, TYPE, SCOPE, FIELD, ...) [FXT_S_##ID] = FIELD,
#include "run/settings.def"
#undef X
};
#undef F
#undef NF

/* Each field as wide as its type's loader writes it. */
#define AGENT_W_BOOL	  sizeof(bool)
#define AGENT_W_SIZE	  sizeof(uint64_t)
#define AGENT_W_SIZE_NZ	  sizeof(uint64_t)
#define AGENT_W_DURATION  sizeof(uint64_t)
#define AGENT_W_SECONDS	  0 /* fxt-run's only */
#define AGENT_W_COUNT	  sizeof(unsigned)
#define AGENT_W_RATE	  sizeof(unsigned)
#define AGENT_W_DEPTH	  sizeof(unsigned)
#define AGENT_W_MODE	  sizeof(enum fxt_mode)
#define AGENT_W_LIBC	  sizeof(unsigned)
#define AGENT_W_REGEXES	  sizeof(char *)
#define AGENT_W_GLOBS	  sizeof(char *)
#define AGENT_W_PATH	  sizeof(char *)
#define AGENT_W_PID	  sizeof(long)
#define AGENT_W_CLOCK	  sizeof(enum agent_clock)
#define AGENT_W_STATUS_FD sizeof(struct agent_status_ref)
#define AGENT_W_FLAG	  0 /* no field: derive()'s, or fxt-run's */
#define AGENT_W_RULES	  0
#define AGENT_W_TEMPLATE  0
#define AGENT_W_IMAGE	  0
#define AGENT_W_LAUNCHER  0
#define AGENT_W_WORDS	  0
#define F(member)	  sizeof(((struct agent_config *)0)->member)
#define NF		  0
#define X(ID, SHORT, OPT, ARG, TYPE, SCOPE, FIELD, ...)                                      \
	_Static_assert(FIELD == 0 || FIELD == AGENT_W_##TYPE, #ID ": a field of its type's " \
								  "width");
#include "run/settings.def"
#undef X
#undef F
#undef NF

/* The row's text, or NULL when unset. */
static const char *get_row(agent_settings_get_fn *get, void *ctx, enum fxt_setting_id id)
{
	return get(ctx, fxt_settings[id].env);
}

/* Loads row id: its text, else its default, through its type's loader.
 * Returns whether the field was set. */
static bool load_row(agent_settings_get_fn *get, void *ctx, enum fxt_setting_id id)
{
	const char *s = get_row(get, ctx, id);

	if (s == NULL)
		s = fxt_settings[id].def;
	if (s == NULL || field_off[id] == NO_FIELD || loaders[fxt_settings[id].type] == NULL)
		return false;
	return loaders[fxt_settings[id].type](id, s, (char *)&agent_cfg + field_off[id]);
}

/* What is not one row's: the names, the mode's consequences, the buffer
 * sizes against each other, the image, fxt-run's identity. */
static void derive(agent_settings_get_fn *get, void *ctx, bool buffer_loaded)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pg = page > 0 ? (uint64_t)page : 4096;

	load_program();
	load_output(get_row(get, ctx, FXT_S_OUTPUT));
	load_snapshot_rules(get_row(get, ctx, FXT_S_SNAPSHOT_IF),
			    get_row(get, ctx, FXT_S_MODE) != NULL);
	if (!buffer_loaded)
		agent_cfg.buffer_size = run_mode_default_buffer(agent_cfg.mode);
	if (agent_cfg.chunk_size < AGENT_MIN_CHUNK_SIZE)
		agent_cfg.chunk_size = AGENT_MIN_CHUNK_SIZE;
	if (agent_cfg.chunk_size > (1ull << 30))
		agent_cfg.chunk_size = 1ull << 30;
	agent_cfg.chunk_size = (agent_cfg.chunk_size + pg - 1) / pg * pg;
	if (agent_mode_stream() && agent_cfg.buffer_size < agent_cfg.chunk_size)
		agent_cfg.buffer_size = agent_cfg.chunk_size;
	/* A thread's buffer: whole pages, at least AGENT_MIN_THREAD_BUFFER. */
	if (!agent_mode_stream()) {
		if (agent_cfg.buffer_size < AGENT_MIN_THREAD_BUFFER)
			agent_cfg.buffer_size = AGENT_MIN_THREAD_BUFFER;
		agent_cfg.buffer_size = agent_cfg.buffer_size / pg * pg;
	}

	/* FXT_IMAGE counts only in the image that FXT_EXEC_PID's exec made. */
	agent_cfg.image = 1;
	if (agent_cfg.exec_pid == (long)getpid()) {
		long image = parse_long(get_row(get, ctx, FXT_S_IMAGE));
		agent_cfg.image = image >= 2 && image < 1000000 ? (unsigned)image : 2;
	}
	parse_launcher(get_row(get, ctx, FXT_S_LAUNCHER));
}

void agent_config_load_from(agent_settings_get_fn *get, void *ctx)
{
	bool buffer_loaded = false;

	/* First, so that the other rows can log. */
	load_row(get, ctx, FXT_S_DEBUG);
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		enum fxt_setting_scope sc = fxt_settings[i].scope;
		bool set;

		if (i == FXT_S_DEBUG || (sc != FXT_SC_AGENT && sc != FXT_SC_INTERNAL))
			continue;
		set = load_row(get, ctx, (enum fxt_setting_id)i);
		if (i == FXT_S_BUFFER_SIZE)
			buffer_loaded = set;
	}
	derive(get, ctx, buffer_loaded);

	agent_dbg("output=%s mode=%s buffer=%llu chunk=%llu max=%llu status_fd=%d",
		  agent_cfg.output, run_mode_name(agent_cfg.mode),
		  (unsigned long long)agent_cfg.buffer_size,
		  (unsigned long long)agent_cfg.chunk_size, (unsigned long long)agent_cfg.max_size,
		  agent_cfg.status_fd.fd);
}

/* The environment's FXT_ variables, found in one pass over it at start:
 * the table's rows are then looked up among these few rather than each by
 * getenv() through the whole environment (every exec'd image pays this
 * start: some 15,000 instructions of getenv() before).  Past ENV_FXT_MAX
 * of them, getenv() as before.  The first of a name wins, as in getenv().
 * Each is kept past its "FXT_", as every row's name starts so. */
#define ENV_FXT_MAX 64

struct env_fxt {
	const char *var[ENV_FXT_MAX];
	unsigned n;
	bool more;
};

static bool fxt_prefixed(const char *s)
{
	return s[0] == 'F' && s[1] == 'X' && s[2] == 'T' && s[3] == '_';
}

static const char *env_get(void *ctx, const char *env)
{
	const struct env_fxt *e = ctx;

	if (e->more || !fxt_prefixed(env))
		return getenv(env);
	for (unsigned i = 0; i < e->n; i++) {
		const char *v = e->var[i], *k = env + 4;

		while (*k && *v == *k)
			v++, k++;
		if (!*k && *v == '=')
			return v + 1;
	}
	return NULL;
}

void agent_config_load(void)
{
	extern char **environ;
	struct env_fxt e = { .n = 0 };

	for (char **p = environ; p && *p; p++) {
		if (!fxt_prefixed(*p))
			continue;
		if (e.n == ENV_FXT_MAX) {
			e.more = true;
			break;
		}
		e.var[e.n++] = *p + 4;
	}
	agent_config_load_from(env_get, &e);
}

struct block {
	const char *buf;
	size_t len;
};

static const char *block_get(void *ctx, const char *env)
{
	const struct block *b = ctx;

	return fxt_block_get(b->buf, b->len, env);
}

int agent_config_load_block(const char *block, size_t len)
{
	struct block b = { block, len };

	if (!fxt_block_valid(block, len))
		return -EINVAL;
	/* (Strings of an earlier window's settings are left: a few bytes.) */
	agent_cfg = (struct agent_config)AGENT_CFG_INIT;
	agent_config_load_from(block_get, &b);
	return 0;
}
