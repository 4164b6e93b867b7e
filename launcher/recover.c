/* fxt-run --recover [-o OUT] [-f] SPOOL|DIR...: what a run left when
 * fxt-run itself was killed (or the machine's session ended) becomes the
 * one archive the run would have left, as lttng-crash does for LTTng.
 *
 * A run whose fxt-run is gone leaves, next to its archive RUN (run/names.h):
 * the spools of the processes that were running or not converted yet;
 * the archives fxt-run had converted but not merged yet; the archives the
 * processes that ended after it wrote themselves (the owner protocol of
 * spool/format.h: RUN for the root, RUN's stem.PID.fxt for the others);
 * a conversion or a merge cut short (.fxt-partial.NAME, .RUN.merge.XXXXXX);
 * the session, fxt-run's control file and its spare spool files (empty:
 * removed without a word).  RUN itself is this run's: fxt-run
 * runs no program over an existing archive (nor does it, with -f, keep it).
 *
 * Given a directory, --recover finds every run there whose fxt-run is gone
 * (by its spools, its control file or its session), converts the spools,
 * merges them with the archives the run left into OUT (-o, or RUN), says
 * what it merged, and removes the rest: nothing but OUT is left, unless a
 * process of the run still runs (its spool is its own; a later --recover
 * merges its archive).  Given spools, it converts and merges those.  The
 * parts go only once OUT is written.  Exit status 0 when something was
 * recovered, 1 when nothing could be, 2 on usage errors. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convert/convert.h"
#include "launcher/launcher.h"
#include "run/control.h"
#include "run/names.h"
#include "run/proc.h"

/* One run found: its files are named after `name`. */
struct run {
	char *name;		 /* RUN, absolute */
	char *dir;		 /* its directory when given as one (all its files count) */
	long live;		 /* the pid of its fxt-run, still running: left alone */
	struct name_list spools; /* to convert */
};

struct runs {
	struct run *v;
	size_t n, cap;
};

/* The run named `name` (absolute), added if new. */
static struct run *run_get(struct runs *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].name, name) == 0)
			return &rs->v[i];
	if (rs->n == rs->cap) {
		size_t ncap = rs->cap != 0 ? 2 * rs->cap : 4;
		struct run *nv = realloc(rs->v, ncap * sizeof(*nv));
		if (nv == NULL)
			die(EXIT_USAGE, "out of memory");
		rs->v = nv;
		rs->cap = ncap;
	}
	struct run *r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	if ((r->name = strdup(name)) == NULL)
		die(EXIT_USAGE, "out of memory");
	return r;
}

static void runs_free(struct runs *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].name);
		free(rs->v[i].dir);
		name_list_free(&rs->v[i].spools);
	}
	free(rs->v);
}

static void add_name(struct name_list *l, const char *name)
{
	if (name_list_add(l, name) != 0)
		die(EXIT_USAGE, "out of memory");
}

/* "DIR/" and the first len bytes of name (malloc'd). */
static char *join(const char *dir, const char *name, size_t len)
{
	char *p;
	if (asprintf(&p, "%s/%.*s", dir, (int)len, name) < 0)
		die(EXIT_USAGE, "out of memory");
	return p;
}

/* The runs in directory `given` whose fxt-run is gone: each spool's, and
 * those that left a control file of a dead fxt-run or the session of a
 * dead root but no spool (their processes converted their own).  Returns
 * how many files told of one. */
static size_t scan_dir(struct runs *rs, const char *given)
{
	char *dir = realpath(given, NULL);
	DIR *d = dir != NULL ? opendir(dir) : NULL;
	struct dirent *de;
	size_t found = 0;

	if (d == NULL)
		die(EXIT_USAGE, "%s: %s", given, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		size_t len;
		long pid;
		char *name = NULL;
		struct run *r;

		if ((len = run_spool_output(n)) != 0) {
			name = join(dir, n, len);
			r = run_get(rs, name);
			char *spool = join(dir, n, strlen(n));
			add_name(&r->spools, spool);
			free(spool);
		} else if ((len = run_pid_file_output(n, RUN_CONTROL_SUFFIX, &pid)) != 0) {
			/* A run whose fxt-run is alive is its own. */
			name = join(dir, n, len);
			r = run_get(rs, name);
			if (run_proc_alive(pid, 0))
				r->live = pid;
		} else if ((len = run_pid_file_output(n, RUN_SESSION_SUFFIX, &pid)) != 0) {
			/* A live root's (without fxt-run) tells of nothing. */
			if (run_proc_alive(pid, 0))
				continue;
			name = join(dir, n, len);
			r = run_get(rs, name);
		} else {
			continue;
		}
		found++;
		if (r->dir == NULL && (r->dir = strdup(dir)) == NULL)
			die(EXIT_USAGE, "out of memory");
		free(name);
	}
	closedir(d);
	free(dir);
	return found;
}

/* The runs given: spools, and directories (or death).  A spool whose
 * name does not say its run is `out`'s (-o), or death when there is none.
 * A directory with nothing to recover says so. */
static void list_runs(char *const *args, const char *out, struct runs *rs)
{
	for (char *const *a = args; *a != NULL; a++) {
		struct stat sb;
		if (stat(*a, &sb) != 0)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		if (S_ISDIR(sb.st_mode)) {
			if (scan_dir(rs, *a) == 0)
				fprintf(stderr,
					"fxt-run: --recover: nothing to recover in %s (no spool, "
					"and no "
					"run whose fxt-run was killed)\n",
					*a);
			continue;
		}
		char *real = realpath(*a, NULL), *name = NULL;
		if (real == NULL)
			die(EXIT_USAGE, "%s: %s", *a, strerror(errno));
		size_t len = run_spool_output(real);
		if (len == 0 && out == NULL)
			die(EXIT_USAGE,
			    "--recover: %s is not named OUT.PID.spool; give the archive's name "
			    "with -o",
			    *a);
		/* The run's name, absolute as a directory's runs'. */
		if (len != 0 && (name = strndup(real, len)) == NULL)
			die(EXIT_USAGE, "out of memory");
		free(real);
		struct run *r = run_get(rs, name != NULL ? name : out);
		add_name(&r->spools, *a);
		free(name);
	}
	for (size_t i = 0; i < rs->n; i++) {
		struct run *r = &rs->v[i];
		/* An fxt-run killed a moment ago may still be going (its
		 * mappings take a while to let go of): it gets a second, as a
		 * killed process's spool does (spools_recover()). */
		for (int t = 0; t < 50 && r->live != 0 && run_proc_alive(r->live, 0); t++) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (r->live != 0 && !run_proc_alive(r->live, 0))
			r->live = 0;
		if (r->live == 0) {
			name_list_sort(&r->spools, 0);
			continue;
		}
		fprintf(stderr,
			"fxt-run: --recover: fxt-run (pid %ld) is still running %s's program: its "
			"files are left to it\n",
			r->live, display_name(r->name));
		free(r->name);
		free(r->dir);
		name_list_free(&r->spools);
		*r = rs->v[--rs->n];
		i--;
	}
}

/* Whether path and `name` are one file (or one name, when neither exists). */
static bool same_file(const char *path, const char *name)
{
	struct stat a, b;

	if (stat(path, &a) != 0 || stat(name, &b) != 0)
		return strcmp(path, name) == 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Whether the archive of `pid`, image `image`, in run `r`'s directory is
 * a batch of a dead fxt-run of pid `pid` (its control file is there,
 * run/control.h): then *committed is what that fxt-run said was whole in
 * it (0: not known). */
static bool batch_of(const struct run *r, long pid, unsigned image, uint64_t *committed)
{
	char ctl[PATH_MAX + 64];
	struct run_bell *b;
	struct stat sb;

	run_ctl_path(ctl, sizeof(ctl), r->name, pid);
	if (image < 1 || image > RUN_BATCHES || stat(ctl, &sb) != 0 || run_proc_alive(pid, 0))
		return false;
	b = run_bell_map(ctl);
	*committed = b ? __atomic_load_n(&b->batch_len[image - 1], __ATOMIC_ACQUIRE) : 0;
	if (b)
		munmap((char *)b - RUN_BELL_OFF, RUN_CTL_SIZE);
	return true;
}

/* The batches run `r` left (a killed fxt-run's): each cut to what was
 * whole in it, before the spools are converted (convert_batch_settle()). */
static void settle_batches(const struct run *r)
{
	DIR *d = opendir(r->dir[0] != '\0' ? r->dir : "/");
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		uint64_t committed;
		unsigned image;
		long pid;

		if (!run_archive_parse(r->name, de->d_name, &pid, &image) ||
		    !batch_of(r, pid, image, &committed) || committed == 0)
			continue;
		char *path = join(r->dir, de->d_name, strlen(de->d_name));
		int err = convert_batch_settle(path, committed);
		if (err < 0)
			fprintf(stderr,
				"fxt-run: --recover: cannot cut %s to its whole archives: %s\n",
				display_name(path), strerror(-err));
		free(path);
	}
	if (d != NULL)
		closedir(d);
}

/* Adds an archive the run left, unless known (converted just now). */
static void add_found(struct parts *ps, const char *path, long pid, unsigned image, bool quiet)
{
	struct archive_stats st = { 0 };
	struct stat sb;

	if (parts_find(ps, path) != NULL || !is_archive(path))
		return;
	if (quiet) {
		if (stat(path, &sb) == 0)
			st.bytes = (uint64_t)sb.st_size;
	} else {
		archive_stats(path, &st);
	}
	if (image == 0) /* RUN: the root's, whose pid its name does not say */
		pid = archive_first_pid(path);
	struct part *pt = parts_add(ps, path, pid, image);
	if (pt == NULL) {
		archive_stats_free(&st);
		return;
	}
	pt->st = st;
	pt->left = true;
}

/* A batch the run left (batch K of a killed fxt-run, cut already): a
 * part per archive in it, the first (the one a spool's conversion found
 * already, if any: converted_before()) with the whole batch's numbers. */
static void add_batch(struct parts *ps, const char *path, unsigned k, bool quiet)
{
	struct convert_batch_member *v;
	struct part *pt;
	size_t n;

	if (convert_batch_read(path, k, &v, &n) < 0) {
		add_found(ps, path, 0, k, quiet); /* as an archive */
		return;
	}
	pt = parts_find(ps, path);
	if (pt == NULL) {
		add_found(ps, path, v[0].pid, k, quiet);
		pt = parts_find(ps, path);
	}
	if (pt != NULL) {
		pt->pid = v[0].pid;
		pt->provider = v[0].pid;
		pt->image = k;
		pt->off = v[0].off;
		pt->len = v[0].end - v[0].off;
		pt->left = true;
	}
	for (size_t i = 1; pt != NULL && i < n; i++)
		parts_add_range(ps, path, v[i].pid, k, v[i].off, v[i].end - v[i].off);
	free(v);
}

/* The archives run `r` left in its directory: RUN (the root's) and its
 * processes'. */
static void collect_archives(const struct run *r, struct parts *ps, bool quiet, bool keep_parts)
{
	DIR *d = opendir(r->dir[0] != '\0' ? r->dir : "/");
	struct dirent *de;

	add_found(ps, r->name, 0, 0, quiet);
	while (d != NULL && (de = readdir(d)) != NULL) {
		uint64_t committed;
		long pid;
		unsigned image;
		if (!run_archive_parse(r->name, de->d_name, &pid, &image))
			continue;
		char *path = join(r->dir, de->d_name, strlen(de->d_name));
		/* (--keep-parts: a batch is left as the archive it is.) */
		if (!keep_parts && batch_of(r, pid, image, &committed))
			add_batch(ps, path, image, quiet);
		else
			add_found(ps, path, pid, image, quiet);
		free(path);
	}
	if (d != NULL)
		closedir(d);
}

/* Whether a spool of process `pid` (any: 0) of run `r` is still there. */
static bool spool_left(const struct run *r, const struct name_list *left, long pid)
{
	for (size_t i = 0; i < left->n; i++) {
		long p;
		unsigned image;
		if (run_spool_parse(r->name, left->v[i], &p, &image) && (pid == 0 || p == pid))
			return true;
	}
	return false;
}

/* Once run `r` is recovered: removes what it left that holds nothing any
 * more (names to `removed`).  A conversion cut short (its spool was
 * converted again), a merge cut short, and the session and the dead
 * fxt-run's control file, by which a later --recover finds the run: kept
 * when `keep_marks` (the merge failed), and while a process of the run
 * still runs (it keeps its spool, and converts it with the session) or,
 * unless `parts_stay` (--keep-parts), one wrote an archive since the
 * merge.  Returns how many of those spools and archives there are. */
static size_t clean_run(const struct run *r, long root, bool keep_marks, bool parts_stay,
			struct name_list *removed)
{
	const char *base = strrchr(r->name, '/') + 1; /* absolute */
	const size_t plen = strlen(CONVERT_PARTIAL_PREFIX), blen = strlen(base);
	struct name_list names = { 0 }, left = { 0 };
	DIR *d = opendir(r->dir[0] != '\0' ? r->dir : "/");
	struct dirent *de;

	if (d == NULL)
		return 0;
	size_t nparts = 0;
	while ((de = readdir(d)) != NULL) {
		long pid;
		unsigned image;
		add_name(&names, de->d_name);
		if (run_spool_parse(r->name, de->d_name, &pid, &image))
			add_name(&left, de->d_name);
		else if (!parts_stay && run_archive_parse(r->name, de->d_name, &pid, &image)) {
			char *path = join(r->dir, de->d_name, strlen(de->d_name));
			nparts += is_archive(path);
			free(path);
		}
	}
	closedir(d);
	keep_marks |= nparts != 0;
	for (size_t i = 0; i < names.n; i++) {
		const char *n = names.v[i];
		long pid;
		unsigned image;
		bool garbage = false;

		if (strncmp(n, CONVERT_PARTIAL_PREFIX, plen) == 0) {
			/* Its process's spool is converted, or it is gone. */
			if (strcmp(n + plen, base) == 0)
				garbage = root != 0 ? !spool_left(r, &left, root)
						    : !spool_left(r, &left, 0);
			else if (run_archive_parse(r->name, n + plen, &pid, &image))
				garbage = !spool_left(r, &left, pid);
		} else if (n[0] == '.' && strncmp(n + 1, base, blen) == 0 &&
			   strncmp(n + 1 + blen, ".merge.", 7) == 0 &&
			   strlen(n + 1 + blen + 7) == 6) {
			garbage = true; /* convert/merge.c's temporary file */
		} else if (run_spare_parse(r->name, n, &pid)) {
			/* An empty file of fxt-run's, nothing of the run's:
			 * removed without a word. */
			if (!run_proc_alive(pid, 0)) {
				char *path = join(r->dir, n, strlen(n));
				unlink(path);
				free(path);
			}
			continue;
		} else if (run_pid_file_parse(r->name, n, RUN_SESSION_SUFFIX, &pid) ||
			   run_pid_file_parse(r->name, n, RUN_CONTROL_SUFFIX, &pid)) {
			/* Kept while a spool is, or the parts are, for a
			 * later --recover to find the run by. */
			garbage =
			    !keep_marks && !spool_left(r, &left, 0) && !run_proc_alive(pid, 0);
		}
		if (!garbage)
			continue;
		char *path = join(r->dir, n, strlen(n));
		if (unlink(path) == 0)
			add_name(removed, path);
		free(path);
	}
	size_t nleft = left.n + nparts;
	name_list_free(&names);
	name_list_free(&left);
	return nleft;
}

/* "what: a, b, c and N more" on one line (nothing when the list is empty). */
static void say_names(const char *what, const struct name_list *l)
{
	const size_t shown = 4;

	if (l->n == 0)
		return;
	fprintf(stderr, "fxt-run: %s: ", what);
	for (size_t i = 0; i < l->n && i < shown; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : ", ", display_name(l->v[i]));
	if (l->n > shown)
		fprintf(stderr, " and %zu more", l->n - shown);
	fputc('\n', stderr);
}

int recover_main(const struct options *given)
{
	struct options o = *given;
	char **args = options_recover(&o);
	struct runs runs = { 0 };
	static char *no_argv[] = { (char *)"spool", NULL };
	char *out = NULL;

	o.argv = no_argv;
	/* -o: checked now, named once (a name, not a template). */
	if (o.output != NULL) {
		struct options chk = o;
		chk.force = true; /* whether it may be replaced: below */
		out = output_path(&chk, NULL);
	}
	list_runs(args, out, &runs);
	if (runs.n == 0) { /* each directory said so */
		free(out);
		free(args);
		return 1;
	}
	if (out == NULL) {
		if (runs.n > 1)
			die(EXIT_USAGE,
			    "--recover: spools of several runs (%s, %s); recover them one run at a "
			    "time, or merge them with -o FILE",
			    display_name(runs.v[0].name), display_name(runs.v[1].name));
		struct options chk = o;
		chk.output = runs.v[0].name;
		chk.force = true;
		out = output_path(&chk, NULL);
	}
	/* OUT may be a run's own archive (its root's, written after fxt-run
	 * died): it is merged with the rest.  Any other file is replaced only
	 * with -f, and only by the merged archive. */
	bool own = false;
	for (size_t i = 0; i < runs.n; i++)
		own |= same_file(out, runs.v[i].name);
	if (!own && !o.force && access(out, F_OK) == 0)
		die(EXIT_USAGE, "%s exists; use -f to overwrite it or -o to choose another name",
		    display_name(out));

	struct parts parts = { 0 };
	struct name_list found = { 0 }, removed = { 0 };
	size_t nspools = 0, nlisted = 0, bad = 0;
	for (size_t i = 0; i < runs.n; i++) {
		struct run *ru = &runs.v[i];
		struct spools r;
		if (spools_init(&r, &parts, ru->name, 0, 0, o.quiet) != 0)
			die(EXIT_USAGE, "out of memory");
		r.recover = true;
		r.srcline = o.srcline;
		if (ru->dir != NULL)
			settle_batches(ru);
		nlisted += ru->spools.n;
		for (size_t j = 0; j < ru->spools.n; j++) {
			size_t before = parts.n;
			int rc = spools_recover(&r, ru->spools.v[j]);
			/* (An archive a killed conversion had written counts as
			 * one the run left.) */
			nspools += parts.n > before && !parts.v[parts.n - 1].left;
			/* Gone: its process converted it meanwhile. */
			if (rc < 0 && rc != -ENOENT) {
				bad++;
				fprintf(stderr, "fxt-run: %s: %s\n", ru->spools.v[j],
					rc == -EBADMSG || rc == -EAGAIN
					    ? "not an fxtrace spool (or of another version)"
					    : strerror(-rc));
			}
		}
		spools_free(&r);
		/* The archives the run left: all of them in its directory;
		 * given spools alone, RUN when it is OUT (not to lose it). */
		if (ru->dir != NULL)
			collect_archives(ru, &parts, o.quiet, o.keep_parts);
		else if (same_file(out, ru->name))
			add_found(&parts, ru->name, 0, 0, o.quiet);
	}
	long root = 0;
	for (size_t i = 0; i < parts.n; i++)
		if (parts.v[i].image == 0)
			root = parts.v[i].pid;
	parts_sort(&parts, root);
	int code = parts.n != 0 ? 0 : 1;
	bool failed = false; /* the merge: the parts stay, and what finds them */
	if (parts.n == 0) {
		if (bad < nlisted || nlisted == 0) /* else each said why */
			fprintf(stderr, "fxt-run: --recover: nothing recovered; %s not written\n",
				display_name(out));
	} else {
		/* What is merged: the spools converted, the archives found. */
		for (size_t i = 0; i < parts.n; i++)
			if (parts.v[i].left)
				add_name(&found, parts.v[i].path);
		if (!o.quiet && (found.n != 0 || nspools > 1)) {
			char what[160];
			int len = snprintf(what, sizeof(what), "--recover: %s",
					   o.keep_parts ? "converted" : "merged");
			if (nspools != 0)
				len += snprintf(what + len, sizeof(what) - (size_t)len,
						" %zu spool%s%s", nspools, nspools == 1 ? "" : "s",
						found.n != 0 ? " and" : "");
			if (found.n != 0)
				snprintf(what + len, sizeof(what) - (size_t)len,
					 " the %zu archive%s the run had left", found.n,
					 found.n == 1 ? "" : "s");
			if (found.n != 0)
				say_names(what, &found);
			else
				fprintf(stderr, "fxt-run: %s\n", what);
		}
		failed = !o.keep_parts && parts_merge(&parts, out, o.quiet) != 0;
		if ((o.keep_parts || failed) && !o.quiet)
			parts_print(&parts);
	}
	size_t nleft = 0;
	for (size_t i = 0; i < runs.n; i++)
		if (runs.v[i].dir != NULL)
			nleft +=
			    clean_run(&runs.v[i], root, failed, o.keep_parts || failed, &removed);
	if (!o.quiet) {
		say_names("--recover: removed what the run left besides", &removed);
		if (nleft != 0)
			fprintf(
			    stderr,
			    "fxt-run: --recover: %zu spools or archives of processes still running "
			    "(or just ended) stay: run fxt-run --recover again once they have "
			    "exited, to merge them\n",
			    nleft);
	}
	name_list_free(&found);
	name_list_free(&removed);
	parts_free(&parts);
	runs_free(&runs);
	free(out);
	free(args);
	return code;
}
