/* fxt-run --patch: the folder where each traced process says what it
 * patched (agent/patch/patch.h: FXT_PATCH_REPORT/patch.PID), and the summary
 * made of it after the run: "patched N of M functions of PROG (K skipped:
 * ...)", once per program, and with --patch-list every function and why;
 * "patched no function of PROG: WHY" for a library that could not be.  A
 * stripped module patched by its exports only (no debug file found) is
 * said, with the package that would bring its debug file (dpkg -S, run
 * here, never in the traced process).  The folder is named after fxt-run's
 * pid (fxt-patch.PID.XXXXXX): one left by an fxt-run killed outright (no
 * atexit) is removed by the next fxt-run that makes one.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "run/argspec.h"

extern char **environ;

/* The folder made, until patch_report_collect() has removed it: removed at
 * fxt-run's exit otherwise (an error after it was made, e.g. an archive
 * that exists). */
static const char *report_dir;

/* The reports read out of it by patch_report_collect(), each a process's
 * file's name (its folder's path and "patch.PID") and its text, in the
 * order the processes started. */
static struct {
	char **names, **texts;
	size_t n;
	bool collected;
} taken;

/* Removes the folder with what the run put in it (reports, --args's spec). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (d) {
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, "patch.", 6) == 0 ||
			    strcmp(e->d_name, FXT_ARGSPEC_FILE) == 0) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(dir);
}

static void remove_at_exit(void)
{
	if (report_dir)
		remove_dir(report_dir);
}

/* Removes from TMP the folders whose fxt-run is gone (killed with SIGKILL:
 * its atexit never ran).  A pid in use again by another process keeps its
 * folder until that one is gone too. */
static void remove_stale(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	char path[4096];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name;
		char *end;
		long pid;

		if (strncmp(p, "fxt-patch.", 10) != 0)
			continue;
		pid = strtol(p + 10, &end, 10);
		if (end == p + 10 || *end != '.' || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, p);
		remove_dir(path);
	}
	closedir(d);
}

char *patch_report_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	remove_stale(tmp);
	if (asprintf(&dir, "%s/fxt-patch.%ld.XXXXXX", tmp, (long)getpid()) < 0)
		die(EXIT_USAGE, "out of memory");
	if (!mkdtemp(dir))
		die(EXIT_USAGE, "cannot make a folder for the patch reports (%s): %s", dir,
		    strerror(errno));
	report_dir = dir;
	atexit(remove_at_exit);
	return dir;
}

/* The reasons of one program, counted. */
struct reasons {
	char *why[32];
	unsigned n[32];
	unsigned k;
};

static void count_reason(struct reasons *r, const char *why)
{
	for (unsigned i = 0; i < r->k; i++) {
		if (strcmp(r->why[i], why) == 0) {
			r->n[i]++;
			return;
		}
	}
	if (r->k < 32 && (r->why[r->k] = strdup(why)) != NULL)
		r->n[r->k++] = 1;
}

/* One module's section: its summary line, once per module of the run. */
struct section {
	char exe[4096];
	unsigned patched, skipped;
	struct reasons r;
	char *why;    /* the module could not be patched at all: why */
	bool said;    /* its module was summed up already (another process) */
	bool exports; /* stripped, no debug file: its exports only */
	char *debug;  /* stripped: the debug file that named its functions */
};

/* The first line `dpkg -S PATH` prints, into buf (without its newline);
 * empty when dpkg is not there or owns no such file.  dpkg runs without
 * the agent (LD_PRELOAD) and the run's FXT_* variables. */
static void dpkg_owner(const char *path, char *buf, size_t size)
{
	char prog[] = "dpkg", opt[] = "-S";
	char *argv[] = { prog, opt, (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	size_t n = 0, nenv = 0;
	char **env;
	int fd[2], status;
	pid_t pid;

	buf[0] = '\0';
	for (char **e = environ; *e; e++)
		nenv++;
	if (!(env = calloc(nenv + 1, sizeof(*env))))
		return;
	nenv = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "FXT_", 4) != 0)
			env[nenv++] = *e;
	if (pipe2(fd, O_CLOEXEC) != 0) {
		free(env);
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "dpkg", &fa, NULL, argv, env) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(fd[1]);
	for (ssize_t r; pid > 0 && n + 1 < size && (r = read(fd[0], buf + n, size - 1 - n)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	close(fd[0]);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (pid > 0 &&
	    (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		buf[0] = '\0';
}

/* The package that installed the file at path (Debian's dpkg), into pkg;
 * else empty.  Tried as the path, its real path, and without /usr (a
 * merged /usr: dpkg may know /bin/sort for /usr/bin/sort). */
static void package_of(const char *path, char *pkg, size_t size)
{
	char real[PATH_MAX], line[1024];
	const char *tries[3] = { path, NULL, NULL };

	if (realpath(path, real) && strcmp(real, path) != 0)
		tries[1] = real;
	if (strncmp(tries[1] ? tries[1] : path, "/usr/", 5) == 0)
		tries[2] = (tries[1] ? tries[1] : path) + 4;
	pkg[0] = '\0';
	for (int i = 0; i < 3 && !pkg[0]; i++) {
		if (!tries[i])
			continue;
		dpkg_owner(tries[i], line, sizeof(line));
		/* "PKG[:ARCH][, PKG2...]: PATH" */
		size_t len = strcspn(line, ":, ");
		if (line[0] && line[len] && len < size)
			snprintf(pkg, size, "%.*s", (int)len, line);
	}
}

/* What a stripped module was patched by: only its exports, and the
 * package whose -dbgsym would name all its functions. */
static void say_symbols(const struct section *sec, bool list)
{
	char pkg[256];

	if (sec->debug && list)
		fprintf(stderr, "fxt-run: %s: functions named by its debug file %s\n",
			display_name(sec->exe), sec->debug);
	if (!sec->exports)
		return;
	package_of(sec->exe, pkg, sizeof(pkg));
	if (pkg[0])
		fprintf(stderr,
			"fxt-run: %s: only its exported functions (no symbol table; a debug "
			"file would name all: install %s-dbgsym)\n",
			display_name(sec->exe), pkg);
	else
		fprintf(stderr,
			"fxt-run: %s: only its exported functions (no symbol table, and no "
			"debug file found for it)\n",
			display_name(sec->exe));
}

static void section_end(struct section *sec, char ***seen, size_t *nseen, bool list)
{
	if (sec->exe[0] && !sec->said && sec->why)
		fprintf(stderr, "fxt-run: patched no function of %s: %s\n", display_name(sec->exe),
			sec->why);
	else if (sec->exe[0] && !sec->said) {
		fprintf(stderr, "fxt-run: patched %u of %u functions of %s", sec->patched,
			sec->patched + sec->skipped, display_name(sec->exe));
		for (unsigned i = 0; i < sec->r.k; i++)
			fprintf(stderr, "%s%u %s", i ? ", " : " (skipped: ", sec->r.n[i],
				sec->r.why[i]);
		fprintf(stderr, "%s\n", sec->r.k ? ")" : "");
		say_symbols(sec, list);
		if (sec->patched && args_unplanned(sec->exe))
			fprintf(stderr,
				"fxt-run: %s: patched without --args/--retval values: fxt-run's "
				"command line does not run it by exec (name it there)\n",
				display_name(sec->exe));
	}
	if (sec->exe[0] && !sec->said) {
		char **v = realloc(*seen, (*nseen + 1) * sizeof(*v));
		if (v) {
			*seen = v;
			if ((v[*nseen] = strdup(sec->exe)) != NULL)
				(*nseen)++;
		}
	}
	for (unsigned i = 0; i < sec->r.k; i++)
		free(sec->r.why[i]);
	free(sec->why);
	free(sec->debug);
	memset(sec, 0, sizeof(*sec));
}

/* One report (a process's file, its text): a section a module. */
static void one_report(char *text, bool list, char ***seen, size_t *nseen)
{
	FILE *f = text[0] ? fmemopen(text, strlen(text), "r") : NULL;
	char *line = NULL;
	size_t cap = 0;
	struct section *sec = calloc(1, sizeof(*sec));

	if (!f || !sec) {
		if (f)
			fclose(f);
		free(sec);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "exe ", 4) == 0) {
			section_end(sec, seen, nseen, list);
			snprintf(sec->exe, sizeof(sec->exe), "%s", line + 4);
			for (size_t i = 0; i < *nseen; i++)
				sec->said |= strcmp((*seen)[i], sec->exe) == 0;
		} else if (strncmp(line, "patched ", 8) == 0) {
			sec->patched++;
			if (list && !sec->said)
				fprintf(stderr, "fxt-run: patched %s\n", line + 8);
		} else if (strcmp(line, "symbols exports") == 0) {
			sec->exports = true;
		} else if (strncmp(line, "symbols debug ", 14) == 0) {
			free(sec->debug);
			sec->debug = strdup(line + 14);
		} else if (strncmp(line, "unpatched ", 10) == 0) {
			free(sec->why);
			sec->why = strdup(line + 10);
		} else if (strncmp(line, "skipped ", 8) == 0) {
			char *tab = strchr(line + 8, '\t');
			sec->skipped++;
			if (tab) {
				*tab = '\0';
				count_reason(&sec->r, tab + 1);
			}
			if (list && !sec->said)
				fprintf(stderr, "fxt-run: skipped %s: %s\n", line + 8,
					tab ? tab + 1 : "?");
		}
	}
	section_end(sec, seen, nseen, list);
	free(sec);
	free(line);
	fclose(f);
}

/* A report file's whole text (malloc'd), or NULL. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0;
	size_t got;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *t = realloc(text, cap = len + 4096 + 1 + cap);
			if (!t) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = t;
		}
		got = fread(text + len, 1, cap - 1 - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	text[len] = '\0';
	return text;
}

void patch_report_collect(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (taken.collected)
		return;
	taken.collected = true;
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "patch.", 6) != 0)
			continue;
		char **v = realloc(names, (n + 1) * sizeof(*v));
		if (!v)
			break;
		names = v;
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) >= 0)
			n++;
	}
	closedir(d);
	/* In the order the processes started (their pids, mostly). */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	taken.texts = calloc(n ? n : 1, sizeof(*taken.texts));
	for (size_t i = 0; i < n && taken.texts; i++)
		taken.texts[i] = read_text(names[i]);
	for (size_t i = 0; i < n && !taken.texts; i++)
		free(names[i]);
	taken.names = taken.texts ? names : (free(names), NULL);
	taken.n = taken.texts ? n : 0;
	remove_dir(dir);
	if (report_dir == dir)
		report_dir = NULL;
}

void patch_report_finish(const char *dir, bool list, bool quiet, const char *what)
{
	char **seen = NULL;
	size_t nseen = 0;

	patch_report_collect(dir);
	for (size_t i = 0; i < taken.n; i++)
		if (taken.texts[i] && (!quiet || list))
			one_report(taken.texts[i], list, &seen, &nseen);
	if (taken.n == 0 && !quiet)
		fprintf(stderr, "fxt-run: %s: no process patched anything (FXT_DEBUG=1 says why)\n",
			what);
	for (size_t i = 0; i < taken.n; i++) {
		free(taken.names[i]);
		free(taken.texts[i]);
	}
	free(taken.names);
	free(taken.texts);
	memset(&taken, 0, sizeof(taken));
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
}
