/* fxt-run --patch: the folder where each traced process says what it
 * patched (agent/patch/patch.h: FXT_PATCH_REPORT/patch.PID), and the summary
 * made of it after the run: "patched N of M functions of PROG (K skipped:
 * ...)", once per program, and with --patch-list every function and why;
 * "patched no function of PROG: WHY" for a library that could not be. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launcher.h"

char *patch_report_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/fxt-patch.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		die(EXIT_USAGE, "out of memory");
	if (!mkdtemp(dir))
		die(EXIT_USAGE, "cannot make a folder for the patch reports (%s): %s", dir,
		    strerror(errno));
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
	char *why; /* the module could not be patched at all: why */
	bool said; /* its module was summed up already (another process) */
};

static void section_end(struct section *sec, char ***seen, size_t *nseen)
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
	memset(sec, 0, sizeof(*sec));
}

/* One report file (a process): a section a module. */
static void one_report(const char *path, bool list, char ***seen, size_t *nseen)
{
	FILE *f = fopen(path, "r");
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
			section_end(sec, seen, nseen);
			snprintf(sec->exe, sizeof(sec->exe), "%s", line + 4);
			for (size_t i = 0; i < *nseen; i++)
				sec->said |= strcmp((*seen)[i], sec->exe) == 0;
		} else if (strncmp(line, "patched ", 8) == 0) {
			sec->patched++;
			if (list && !sec->said)
				fprintf(stderr, "fxt-run: patched %s\n", line + 8);
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
	section_end(sec, seen, nseen);
	free(sec);
	free(line);
	fclose(f);
}

void patch_report_finish(const char *dir, bool list, bool quiet)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **seen = NULL, **names = NULL;
	size_t nseen = 0, n = 0;

	if (!d)
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
	for (size_t i = 0; i < n; i++) {
		if (!quiet || list)
			one_report(names[i], list, &seen, &nseen);
		unlink(names[i]);
		free(names[i]);
	}
	if (n == 0 && !quiet)
		fprintf(stderr, "fxt-run: --patch: no process patched anything (FXT_DEBUG=1 "
				"says why)\n");
	free(names);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	rmdir(dir);
}
