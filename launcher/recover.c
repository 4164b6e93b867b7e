/* fxt-run --recover [-o OUT] [-f] SPOOL|DIR...: every spool given, or
 * found in a directory given, becomes its process's archive, and they are
 * merged into OUT as a run would have merged them, as lttng-crash does
 * for LTTng.  For spools left behind when fxt-run itself was killed, or
 * the machine's session ended.  Exit status 0 when something was
 * recovered, 1 when nothing could be, 2 on usage errors. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/convert.h"
#include "launcher/launcher.h"
#include "spool/names.h"
#include "spool/proc.h"

/* After --recover of a directory: the archives its processes wrote
 * themselves (fxt-run was gone) join the merge, and the files of runs
 * whose processes are all gone (session, control file) go. */
static void recover_dir_rest(struct parts *ps, const char *given, const char *out)
{
	/* Absolute, as the parts converted here are named. */
	char *dir = realpath(given, NULL);
	DIR *d = dir != NULL ? opendir(dir) : NULL;
	const size_t plen = strlen(CONVERT_PARTIAL_PREFIX);
	const char *base = strrchr(out, '/') + 1; /* out is absolute */
	struct dirent *de;

	if (d == NULL) {
		free(dir);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		char *path;
		long pid;
		unsigned image;

		if (asprintf(&path, "%s/%s", dir, n) < 0)
			break;
		if (run_archive_parse(out, n, &pid, &image) && is_archive(path) &&
		    parts_find(ps, path) == NULL) {
			struct part *pt = parts_add(ps, path, pid, image);
			struct stat sb;
			if (pt != NULL) {
				pt->note = "written by its process";
				if (stat(path, &sb) == 0)
					pt->st.bytes = (uint64_t)sb.st_size;
				archive_stats(path, &pt->st);
			}
		} else if (strncmp(n, CONVERT_PARTIAL_PREFIX, plen) == 0 &&
			   (strcmp(n + plen, base) == 0 ||
			    run_archive_parse(out, n + plen, &pid, &image))) {
			unlink(path); /* a conversion killed halfway: its spool is here */
		} else if (run_pid_file_parse(out, n, RUN_SESSION_SUFFIX, &pid) ||
			   run_pid_file_parse(out, n, RUN_CONTROL_SUFFIX, &pid)) {
			/* The session (PID: the root) or fxt-run's control file
			 * of a run whose process is gone. */
			if (pid > 0 && !proc_alive(pid, 0))
				unlink(path);
		}
		free(path);
	}
	closedir(d);
	free(dir);
}

static void add_spool(struct name_list *l, const char *path)
{
	if (name_list_add(l, path) != 0)
		die(EXIT_USAGE, "out of memory");
}

/* The spools given, and those found in the directories given (sorted). */
static void list_spools(char *const *args, struct name_list *spools)
{
	for (char *const *a = args; *a != NULL; a++) {
		struct stat sb;
		if (stat(*a, &sb) != 0)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		if (!S_ISDIR(sb.st_mode)) {
			add_spool(spools, *a);
			continue;
		}
		DIR *d = opendir(*a);
		if (d == NULL)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		struct dirent *de;
		size_t before = spools->n;
		while ((de = readdir(d)) != NULL) {
			char *p;
			size_t len = strlen(de->d_name);
			if (len < 7 || strcmp(de->d_name + len - 6, ".spool") != 0)
				continue;
			if (asprintf(&p, "%s/%s", *a, de->d_name) < 0)
				die(EXIT_USAGE, "out of memory");
			add_spool(spools, p);
			free(p);
		}
		closedir(d);
		name_list_sort(spools, before);
		if (spools->n == before)
			die(EXIT_USAGE, "--recover: no spool (*.spool) in %s", *a);
	}
}

/* Without -o: the archive the spools were written for (malloc'd), the
 * same for all of them, or death. */
static char *derive_output(const struct name_list *spools)
{
	char *derived = NULL;

	for (size_t i = 0; i < spools->n; i++) {
		size_t len = run_spool_output(spools->v[i]);
		if (len == 0)
			die(EXIT_USAGE,
			    "--recover: %s is not named OUT.PID.spool; give the archive's name "
			    "with -o",
			    spools->v[i]);
		char *one = strndup(spools->v[i], len);
		if (one == NULL)
			die(EXIT_USAGE, "out of memory");
		if (derived != NULL && strcmp(one, derived) != 0)
			die(EXIT_USAGE,
			    "--recover: spools of several runs (%s, %s); recover them one run at a "
			    "time, or merge them with -o FILE",
			    derived, one);
		free(derived);
		derived = one;
	}
	return derived;
}

int recover_main(const struct options *given)
{
	struct options o = *given;
	char **args = options_recover(&o);
	struct name_list spools = { 0 };
	char *derived = NULL;

	list_spools(args, &spools);
	/* OUT: -o, else the name the spools were written for. */
	if (o.output == NULL)
		o.output = derived = derive_output(&spools);
	static char *no_argv[] = { (char *)"spool", NULL };
	o.argv = no_argv;
	char *out = output_path(&o, NULL); /* a name, not a template */
	if (o.force && unlink(out) != 0 && errno != ENOENT)
		die(EXIT_USAGE, "cannot remove %s: %s", display_name(out), strerror(errno));

	struct parts parts = { 0 };
	struct spools r;
	if (spools_init(&r, &parts, out, 0, 0, o.quiet) != 0)
		die(EXIT_USAGE, "out of memory");
	r.recover = true;
	size_t bad = 0;
	for (size_t i = 0; i < spools.n; i++) {
		int rc = spools_recover(&r, spools.v[i]);
		if (rc < 0) {
			bad++;
			fprintf(stderr, "fxt-run: %s: %s\n", spools.v[i],
				rc == -EBADMSG || rc == -EAGAIN
				    ? "not an fxtrace spool (or of another version)"
				    : strerror(-rc));
		}
	}
	for (char *const *a = args; *a != NULL; a++) {
		struct stat sb;
		if (stat(*a, &sb) == 0 && S_ISDIR(sb.st_mode))
			recover_dir_rest(&parts, *a, out);
	}
	long root = 0;
	for (size_t i = 0; i < parts.n; i++)
		if (parts.v[i].image == 0)
			root = parts.v[i].pid;
	parts_sort(&parts, root);
	int code = parts.n != 0 ? 0 : 1;
	if (parts.n == 0 && bad < spools.n) /* else each said why */
		fprintf(stderr, "fxt-run: --recover: nothing recovered; %s not written\n",
			display_name(out));
	else if (o.keep_parts || parts_merge(&parts, out, o.quiet) != 0) {
		if (!o.quiet)
			parts_print(&parts);
	}
	parts_free(&parts);
	spools_free(&r);
	free(out);
	free(derived);
	free(args);
	name_list_free(&spools);
	return code;
}
