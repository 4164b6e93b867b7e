/* Agent settings: every FXT_* variable (run/settings.def), read once (see
 * settings.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/settings.h"
#include "agent/libc.h"
#include "agent/log.h"
#include "run/settings.h"
#include "spool/names.h"

struct agent_config agent_cfg = {
	.buffer_size = FXT_DEFAULT_BUFFER_STREAM,
	.chunk_size = AGENT_DEFAULT_CHUNK_SIZE,
	.max_size = AGENT_DEFAULT_MAX_SIZE,
	.status_fd = -1,
};

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

/* FXT_STATUS_FD: "FD" or "FD:DEV:INO".  With the file's identity, the fd
 * is taken only if it still refers to that file: a process between fxt-run
 * and us may have closed it and opened a file of its own on the same
 * number, which must not get our status line.  Returns the fd or -1. */
static int parse_status_fd(const char *s)
{
	unsigned long long fd, dev = 0, ino = 0;
	bool identified = false;
	struct stat st;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	fd = strtoull(s, &end, 10);
	if (*end == ':') {
		identified = true;
		dev = strtoull(end + 1, &end, 10);
		if (*end != ':')
			return -1;
		ino = strtoull(end + 1, &end, 10);
	}
	if (errno || *end || fd >= 1u << 20)
		return -1;
	if (fstat((int)fd, &st) != 0)
		return -1;
	if (identified &&
	    ((unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino)) {
		agent_dbg(FXT_ENV(STATUS_FD) "=%s: fd %llu is another file now; no status line", s,
			  fd);
		return -1;
	}
	return (int)fd;
}

/* A copy of variable `name`, when set and not empty. */
static void load_string(const char *name, char **field)
{
	const char *s = getenv(name);

	if (s && *s)
		*field = strdup(s);
}

static void load_size(const char *name, uint64_t *field)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s)
		return;
	if (fxt__parse_size(s, &v) < 0) {
		agent_dbg("%s=%s is not a size; using %llu", name, s, (unsigned long long)*field);
		return;
	}
	*field = v;
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

/* FXT_OUTPUT, a template (spool/names.h): fxt-run gives every process
 * the name escaped, as does the first process of a run without it, once
 * it expanded it (agent_output_export()); so every process of a run
 * comes to the same name.  Unset: PROGRAM.fxt.  Made absolute against
 * the current directory. */
static void load_output(void)
{
	const char *s = getenv(FXT_ENV(OUTPUT));
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

/* FXT_SNAPSHOT_IF and FXT_MAX_SNAPSHOTS: the rules, which make the mode
 * circular unless FXT_MODE chose another (they are then ignored). */
static void load_snapshot_rules(bool mode_given)
{
	const char *s = getenv(FXT_ENV(SNAPSHOT_IF)), *m = getenv(FXT_ENV(MAX_SNAPSHOTS));
	long max = m && *m ? parse_long(m) : FXT_DEFAULT_MAX_SNAPSHOTS;

	agent_cfg.max_snapshots = max > 0 && max <= 1000000 ? (unsigned)max : 0;
	if (m && *m && !agent_cfg.max_snapshots)
		agent_dbg(FXT_ENV(MAX_SNAPSHOTS) "=%s: not a count in 1..1000000; no snapshots", m);
	while (s && *s && agent_cfg.nsnap_rules < FXT_MAX_SNAPSHOT_RULES) {
		size_t len = strcspn(s, "\n");
		struct fxt_snapshot_rule *r = &agent_cfg.snap_rules[agent_cfg.nsnap_rules];

		if (len && fxt__snapshot_rule_parse(s, len, r) == 0)
			agent_cfg.nsnap_rules++;
		else if (len)
			agent_dbg(FXT_ENV(SNAPSHOT_IF) ": a rule is not NAME>DURATION; left out");
		s += len + (s[len] == '\n');
	}
	if (!agent_cfg.nsnap_rules || !agent_cfg.max_snapshots) {
		agent_cfg.nsnap_rules = 0;
	} else if (!mode_given) {
		agent_cfg.mode = FXT_MODE_CIRCULAR;
	} else if (agent_cfg.mode != FXT_MODE_CIRCULAR) {
		agent_dbg(FXT_ENV(SNAPSHOT_IF) ": the mode is not circular; no snapshots");
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

void agent_config_load(void)
{
	const char *s;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pg = page > 0 ? (uint64_t)page : 4096;

	s = getenv(FXT_ENV(DEBUG));
	agent_cfg.debug = s && *s && strcmp(s, "0") != 0;

	load_program();
	load_output();
	s = getenv(FXT_ENV(MODE));
	if (s && fxt__mode_parse(s, &agent_cfg.mode) < 0) {
		agent_dbg(FXT_ENV(MODE) "=%s: not a mode (" FXT_MODE_NAMES "); using stream", s);
		agent_cfg.mode = FXT_MODE_STREAM;
	}
	load_snapshot_rules(s != NULL);
	agent_cfg.buffer_size = agent_cfg.mode == FXT_MODE_STREAM ? FXT_DEFAULT_BUFFER_STREAM
								  : FXT_DEFAULT_BUFFER_THREAD;
	load_size(FXT_ENV(BUFFER_SIZE), &agent_cfg.buffer_size);
	load_size(FXT_ENV(CHUNK_SIZE), &agent_cfg.chunk_size);
	load_size(FXT_ENV(MAX_SIZE), &agent_cfg.max_size);
	if (agent_cfg.chunk_size < AGENT_MIN_CHUNK_SIZE)
		agent_cfg.chunk_size = AGENT_MIN_CHUNK_SIZE;
	if (agent_cfg.chunk_size > (1ull << 30))
		agent_cfg.chunk_size = 1ull << 30;
	agent_cfg.chunk_size = (agent_cfg.chunk_size + pg - 1) / pg * pg;
	if (agent_cfg.mode == FXT_MODE_STREAM && agent_cfg.buffer_size < agent_cfg.chunk_size)
		agent_cfg.buffer_size = agent_cfg.chunk_size;
	/* A thread's buffer: whole pages, at least AGENT_MIN_THREAD_BUFFER. */
	if (agent_cfg.mode != FXT_MODE_STREAM) {
		if (agent_cfg.buffer_size < AGENT_MIN_THREAD_BUFFER)
			agent_cfg.buffer_size = AGENT_MIN_THREAD_BUFFER;
		agent_cfg.buffer_size = agent_cfg.buffer_size / pg * pg;
	}

	s = getenv(FXT_ENV(CLOCK));
	if (s && strcmp(s, "tsc") == 0)
		agent_cfg.clock = AGENT_CLOCK_TSC;
	else if (s && *s)
		agent_cfg.clock = AGENT_CLOCK_MONOTONIC;
	else
		agent_cfg.clock = AGENT_CLOCK_AUTO;

	agent_cfg.status_fd = parse_status_fd(getenv(FXT_ENV(STATUS_FD)));
	agent_cfg.root_pid = parse_long(getenv(FXT_ENV(ROOT_PID)));
	agent_cfg.exec_pid = parse_long(getenv(FXT_ENV(EXEC_PID)));
	agent_cfg.image = 1;
	if (agent_cfg.exec_pid == (long)getpid()) {
		long image = parse_long(getenv(FXT_ENV(IMAGE)));
		agent_cfg.image = image >= 2 && image < 1000000 ? (unsigned)image : 2;
	}
	parse_launcher(getenv(FXT_ENV(LAUNCHER)));

	agent_cfg.libc_groups = AGENT_G_DEFAULT;
	s = getenv(FXT_ENV(LIBC));
	if (s && agent_libc_parse(s, &agent_cfg.libc_groups) < 0) {
		agent_dbg(FXT_ENV(LIBC) "=%s: unknown group; using the default", s);
		agent_cfg.libc_groups = AGENT_G_DEFAULT;
	}
	s = getenv(FXT_ENV(SAMPLE));
	if (s && *s) {
		long hz = parse_long(s);
		if (hz < 0 || hz > (long)AGENT_MAX_SAMPLE_HZ)
			agent_dbg(FXT_ENV(SAMPLE) "=%s: not a rate in 0..%u Hz; not sampling", s,
				  AGENT_MAX_SAMPLE_HZ);
		else
			agent_cfg.sample_hz = (unsigned)hz;
	}

	load_string(FXT_ENV(PATCH), &agent_cfg.patch);
	load_string(FXT_ENV(PATCH_MODULE), &agent_cfg.patch_modules);
	load_string(FXT_ENV(PATCH_REPORT), &agent_cfg.patch_report);
	load_string(FXT_ENV(INCLUDE), &agent_cfg.include);
	load_string(FXT_ENV(EXCLUDE), &agent_cfg.exclude);
	load_string(FXT_ENV(MODULE), &agent_cfg.modules);
	s = getenv(FXT_ENV(DEPTH));
	if (s && *s) {
		long d = parse_long(s);
		if (d < 0 || d > 1000000)
			agent_dbg(FXT_ENV(DEPTH) "=%s: not a depth; no bound", s);
		else
			agent_cfg.depth = (unsigned)d;
	}
	s = getenv(FXT_ENV(MIN_DURATION));
	if (s && *s && fxt__parse_duration(s, &agent_cfg.min_duration_ns) < 0) {
		agent_dbg(FXT_ENV(MIN_DURATION) "=%s: not a duration; every call kept", s);
		agent_cfg.min_duration_ns = 0;
	}

	agent_dbg("output=%s mode=%s buffer=%llu chunk=%llu max=%llu status_fd=%d",
		  agent_cfg.output, fxt__mode_name(agent_cfg.mode),
		  (unsigned long long)agent_cfg.buffer_size,
		  (unsigned long long)agent_cfg.chunk_size, (unsigned long long)agent_cfg.max_size,
		  agent_cfg.status_fd);
}
