/* The run's per-process archives ("parts"): converted from a spool,
 * reported on the status file, or found in OUT's directory; ordered as
 * the merged archive lists them; merged into OUT (merge.h), or left apart
 * with --keep-parts. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "convert/merge.h"
#include "run/names.h"
#include "run/proc.h"

/* ------------------------------------------------------------ name lists */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int name_list_add(struct name_list *l, const char *name)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap != 0 ? 2 * l->cap : 16;
		char **nv = realloc(l->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	if ((l->v[l->n] = strdup(name)) == NULL)
		return -ENOMEM;
	l->n++;
	return 0;
}

void name_list_sort(struct name_list *l, size_t from)
{
	if (l->n > from + 1)
		qsort(l->v + from, l->n - from, sizeof(*l->v), cmp_name);
}

static bool name_list_has(const struct name_list *l, const char *name)
{
	return l->n != 0 && bsearch(&name, l->v, l->n, sizeof(*l->v), cmp_name) != NULL;
}

void name_list_free(struct name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* ----------------------------------------------------------------- parts */

struct part *parts_find(const struct parts *ps, const char *path)
{
	for (size_t i = 0; i < ps->n; i++)
		if (strcmp(ps->v[i].path, path) == 0)
			return &ps->v[i];
	return NULL;
}

/* The part at `path`, added if new (zeroed but for its names).  NULL when
 * out of memory: the archive is then neither summarised nor merged, and
 * stays where its process wrote it. */
struct part *parts_add(struct parts *ps, const char *path, long pid, unsigned image)
{
	struct part *pt = parts_find(ps, path);

	if (pt != NULL)
		return pt;
	return parts_add_range(ps, path, pid, image, 0, 0);
}

struct part *parts_add_range(struct parts *ps, const char *path, long pid, unsigned image,
			     uint64_t off, uint64_t len)
{
	struct part *pt;

	if (ps->n == ps->cap) {
		size_t ncap = ps->cap != 0 ? 2 * ps->cap : 16;
		struct part *nv = realloc(ps->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return NULL;
		ps->v = nv;
		ps->cap = ncap;
	}
	pt = &ps->v[ps->n];
	memset(pt, 0, sizeof(*pt));
	pt->path = strdup(path);
	if (pt->path == NULL)
		return NULL;
	pt->pid = pid;
	pt->image = image;
	pt->off = off;
	pt->len = len;
	pt->provider = (uint32_t)pid;
	pt->exit_status = -1;
	pt->wait_status = -1;
	ps->n++;
	return pt;
}

void parts_set_wait_status(struct parts *ps, long root, int status)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].pid == root)
			ps->v[i].wait_status = status;
}

/* Whether a recovered part's process exited, with a status, rather than
 * was killed: through _exit(), or (the root, whose status fxt-run has)
 * some other way that did not seal its spool (a bare exit_group, as Go's
 * os.Exit; a seal that failed). */
static bool part_exited(const struct part *pt, int *status)
{
	if (pt->exit_status >= 0) {
		*status = pt->exit_status;
		return true;
	}
	if (pt->wait_status >= 0 && WIFEXITED(pt->wait_status)) {
		*status = WEXITSTATUS(pt->wait_status);
		return true;
	}
	return false;
}

/* What a part's summary line says after its numbers: how a process that
 * did not seal its spool ended, as far as fxt-run knows, or the part's
 * note; NULL for nothing.  In buf. */
static const char *part_note(const struct part *pt, char *buf, size_t cap)
{
	int status;

	if (!pt->recovered)
		return pt->note;
	if (pt->exit_status >= 0)
		snprintf(buf, cap, "ended by _exit(%d), not exit(): converted from its spool",
			 pt->exit_status);
	else if (part_exited(pt, &status))
		snprintf(buf, cap,
			 "exited with status %d but did not seal its spool: converted from it",
			 status);
	else if (pt->wait_status >= 0 && WIFSIGNALED(pt->wait_status))
		snprintf(buf, cap, "killed by SIG%s: recovered from spool",
			 sigabbrev_np(WTERMSIG(pt->wait_status)) != NULL
			     ? sigabbrev_np(WTERMSIG(pt->wait_status))
			     : "?");
	else
		snprintf(buf, cap, "recovered from spool");
	return buf;
}

/* Whether OUT is known, or (unless out_only) the root reported an archive. */
bool parts_have_root(const struct parts *ps, pid_t root, bool out_only)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].image == 0 || (!out_only && ps->v[i].pid == (long)root))
			return true;
	return false;
}

void parts_free(struct parts *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->v[i].path);
		archive_stats_free(&ps->v[i].st);
	}
	free(ps->v);
}

/* The root process neither reported nor left a spool: it replaced itself
 * with an uninstrumented image, or its archive or spool could not be
 * written.  Reads what is there.  A file at out that is no archive (no
 * magic record: the agent failed or died writing it) is this run's (out
 * did not exist, or -f removed it, before the program ran): it goes.
 * Returns whether there is no file at all (said once the other archives
 * are known). */
bool parts_find_root(struct parts *ps, const char *prog, const char *out, pid_t root, bool quiet)
{
	struct archive_stats st;
	int rc;

	/* Under -q no numbers are printed: only the magic record is read. */
	if (quiet) {
		memset(&st, 0, sizeof(st));
		rc = is_archive(out) ? 0 : access(out, F_OK) == 0 ? -ENODATA : -errno;
	} else {
		rc = archive_stats(out, &st);
	}
	if (rc == 0 || st.error != NULL) {
		struct part *pt = parts_add(ps, out, (long)root, 0);
		if (pt != NULL)
			pt->st = st;
		else
			archive_stats_free(&st);
		return false;
	}
	archive_stats_free(&st);
	if (rc == -ENODATA) {
		bool removed = unlink(out) == 0;
		if (!quiet)
			fprintf(stderr,
				"fxt-run: %s: the trace is lost: %s is not an archive (%s)%s, and "
				"there is no spool to recover it from\n",
				prog, display_name(out), st.bytes != 0 ? "truncated" : "empty",
				removed ? "; removed it" : "");
		return false;
	}
	if (rc != -ENOENT && !quiet)
		fprintf(stderr, "fxt-run: cannot read %s: %s\n", display_name(out), strerror(-rc));
	return rc == -ENOENT;
}

/* The names of the archives of other processes in OUT's directory before
 * the program ran: none of them is this run's, since the agent creates
 * those names exclusively (a taken name makes it try ".PID.2"...).  So a
 * part a --keep-parts run left is never merged into the next run's OUT,
 * however close in time the two runs are.  Sorted.  Best effort: a
 * directory that cannot be read, or no memory, gives a shorter list (the
 * time check still applies). */
void parts_list_old(struct name_list *l, const char *out, const char *dir)
{
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");
	struct dirent *de;

	memset(l, 0, sizeof(*l));
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		long pid;
		unsigned image;
		if (run_archive_parse(out, de->d_name, &pid, &image) &&
		    name_list_add(l, de->d_name) != 0)
			break;
	}
	closedir(d);
	name_list_sort(l, 0);
}

static bool newer_than(const char *path, time_t since)
{
	struct stat sb;
	return stat(path, &sb) == 0 && sb.st_mtime >= since;
}

/* The processes that closed the status fd (daemons, programs that close
 * every fd above 2), and every process under -q, write their archives
 * without a report.  Every archive of a process other than the root in
 * OUT's directory written since `since`, not there before the run (`old`)
 * and not known yet is added; its
 * numbers are read unless `quiet`.  One whose process is still running
 * may be half written: it is marked so. */
void parts_collect_unreported(struct parts *ps, const char *out, const char *dir, time_t since,
			      const struct name_list *old, bool quiet)
{
	DIR *d = opendir(dir[0] != '\0' ? dir : "/");
	if (d == NULL)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		long pid;
		unsigned image;
		char *path;

		if (!run_archive_parse(out, de->d_name, &pid, &image) ||
		    name_list_has(old, de->d_name))
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			break;
		if (parts_find(ps, path) != NULL || !newer_than(path, since) || !is_archive(path)) {
			free(path);
			continue;
		}
		struct archive_stats st = { 0 };
		int rc = quiet ? 0 : archive_stats(path, &st);
		struct part *pt = NULL;
		if (rc == 0 || st.error != NULL)
			pt = parts_add(ps, path, pid, image);
		if (pt != NULL) {
			pt->st = st;
			pt->note = "its process did not report it";
			pt->running = run_proc_alive(pid, 0);
		} else {
			archive_stats_free(&st);
		}
		free(path);
	}
	closedir(d);
}

/* At most this many child archives get a line of their own. */
#define MAX_CHILD_LINES 8

/* parts_sort()'s order; ctx points to the root's pid. */
static int part_cmp(const void *a, const void *b, void *ctx)
{
	const struct part *x = a, *y = b;
	long root = *(const long *)ctx;
	int xr = x->image == 0 ? 0 : x->pid == root ? 1 : 2;
	int yr = y->image == 0 ? 0 : y->pid == root ? 1 : 2;

	if (xr != yr)
		return xr - yr;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	if (strcmp(x->path, y->path) != 0)
		return strcmp(x->path, y->path);
	return x->off < y->off ? -1 : x->off > y->off;
}

void parts_sort(struct parts *ps, long root)
{
	if (ps->n > 1)
		qsort_r(ps->v, ps->n, sizeof(*ps->v), part_cmp, &root);
}

/* One line per archive (--keep-parts, or when merging failed). */
void parts_print(const struct parts *ps)
{
	unsigned nchildren = 0;
	uint64_t more_events = 0;

	for (size_t i = 0; i < ps->n; i++) {
		const struct part *pt = &ps->v[i];
		char buf[128];
		if (pt->image == 0)
			summary_line("", display_name(pt->path), &pt->st,
				     part_note(pt, buf, sizeof(buf)));
		else if (nchildren++ < MAX_CHILD_LINES)
			summary_line("child archive ", display_name(pt->path), &pt->st,
				     part_note(pt, buf, sizeof(buf)));
		else
			more_events += pt->st.n.events;
	}
	if (nchildren > MAX_CHILD_LINES)
		fprintf(stderr, "fxt-run: and %u more child archives (%" PRIu64 " events)\n",
			nchildren - MAX_CHILD_LINES, more_events);
}

/* The batches removed by a merge: each once, though many parts name it. */
struct removed {
	const char *v[16];
	size_t n;
};

/* Whether `path` was removed already; else notes it (as far as there is
 * room: a batch not noted is tried again, and its ENOENT said nothing). */
static bool removed_before(struct removed *rm, const char *path)
{
	for (size_t k = 0; k < rm->n; k++)
		if (strcmp(rm->v[k], path) == 0)
			return true;
	if (rm->n < sizeof(rm->v) / sizeof(rm->v[0]))
		rm->v[rm->n++] = path;
	return false;
}

/* Merges the archives of the processes that are done into OUT, removes
 * them, and says so in one line (or prints the only archive's line).
 * Returns 0, or -errno when the merge failed: the archives are then as
 * their processes left them. */
int parts_merge(struct parts *ps, const char *out, bool quiet)
{
	const char **paths = calloc(ps->n + 1, sizeof(*paths));
	const struct part **merged = calloc(ps->n + 1, sizeof(*merged));
	struct merge_part_result *res = calloc(ps->n + 1, sizeof(*res));
	struct merge_range *ranges = calloc(ps->n + 1, sizeof(*ranges));
	size_t n = 0, nrecovered = 0, nexited = 0, ntruncated = 0;
	const struct part *only = NULL;
	struct removed rm = { .n = 0 };
	struct archive_stats sum;
	bool counted = true;
	int err = 0;

	memset(&sum, 0, sizeof(sum));
	if (paths == NULL || merged == NULL || res == NULL || ranges == NULL) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ps->n; i++) {
		const struct part *pt = &ps->v[i];
		if (pt->running) {
			if (!quiet)
				fprintf(stderr,
					"fxt-run: process %ld is still running: its archive %s is "
					"left apart\n",
					pt->pid, display_name(pt->path));
			continue;
		}
		merged[n] = pt;
		ranges[n] = (struct merge_range){ pt->off, pt->len, pt->provider };
		paths[n++] = pt->path;
		only = pt;
		if (pt->recovered) {
			int status;
			if (part_exited(pt, &status))
				nexited++;
			else
				nrecovered++;
		}
	}
	if (n == 0)
		goto out;
	/* The root's archive alone is the archive: nothing to rewrite. */
	if (n == 1 && strcmp(paths[0], out) == 0 && only->st.error == NULL && !only->len) {
		char buf[128];
		if (!quiet)
			summary_line("", display_name(out), &only->st,
				     part_note(only, buf, sizeof(buf)));
		goto out;
	}
	err = merge_archives_ranges(out, paths, n, ranges, NULL, NULL, res);
	if (err < 0) {
		if (!quiet)
			fprintf(stderr, "fxt-run: cannot merge the archives into %s: %s\n",
				display_name(out), strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ntruncated += res[i].truncated;
		/* What the reader found beyond a cut is still in OUT. */
		if (merged[i]->st.error != NULL && !res[i].truncated)
			sum.error = merged[i]->st.error;
		if (res[i].not_an_archive)
			continue; /* not merged: left as it is */
		/* OUT holds what each part held: its events and drops, its
		 * threads and process, which are another image's too when it
		 * exec'd (the same pid and tid), counted once. */
		if (!quiet && fxt__counts_add(&sum.n, &merged[i]->st.n) != 0)
			counted = false;
		sum.calls += merged[i]->st.calls;
		summary_add_deep(&sum, &merged[i]->st);
		/* A batch goes once (its archives are ranges of it). */
		if (merged[i]->len && removed_before(&rm, paths[i]))
			continue;
		if (strcmp(paths[i], out) != 0 && unlink(paths[i]) != 0 &&
		    !(merged[i]->len && errno == ENOENT) && !quiet)
			fprintf(stderr, "fxt-run: cannot remove %s: %s\n", display_name(paths[i]),
				strerror(errno));
	}
	if (!quiet) {
		uint64_t nprocs = fxt__counts_processes(&sum.n);
		size_t nimages = n;
		struct stat sb;
		char note[256];
		int len;

		for (size_t i = 0; i < n; i++)
			nimages -= res[i].not_an_archive;
		if (!counted)
			sum.error = "out of memory: fewer threads and processes than it holds";
		len = snprintf(note, sizeof(note), "%" PRIu64 " process%s", nprocs,
			       nprocs == 1 ? "" : "es");
		if (nimages > nprocs) /* (a part merged before counts as one) */
			len += snprintf(note + len, sizeof(note) - (size_t)len, ", %zu images",
					nimages);
		if (nexited != 0)
			len +=
			    snprintf(note + len, sizeof(note) - (size_t)len,
				     ", %zu exited without sealing their spool (converted from it)",
				     nexited);
		if (nrecovered != 0)
			len += snprintf(note + len, sizeof(note) - (size_t)len,
					", %zu recovered from spool", nrecovered);
		if (ntruncated != 0)
			snprintf(note + len, sizeof(note) - (size_t)len,
				 ", %zu truncated (their last records are lost)", ntruncated);
		if (stat(out, &sb) == 0)
			sum.bytes = (uint64_t)sb.st_size;
		summary_line("", display_name(out), &sum, note);
	}
out:
	archive_stats_free(&sum);
	free(paths);
	free(merged);
	free(res);
	free(ranges);
	return err;
}
