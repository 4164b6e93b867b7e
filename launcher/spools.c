/* The run's spools.  Every traced process records into its spool,
 * OUT.PID.spool (image N of a pid after N - 1 execs: OUT.PID.N.spool;
 * spool/format.h, run/names.h), and seals it at exit and before exec.
 * fxt-run converts each spool of the run (the root pid in its header is
 * ours) into that process's archive (convert/convert.h) as soon as it is
 * sealed or its process is gone, whatever killed it, while the program
 * runs: a long build does not pile up spools.  When the program is done,
 * the spools of processes still running are left to them (the owner
 * protocol of spool/format.h): such a process converts its own at exit. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convert/convert.h"
#include "launcher/drain.h"
#include "launcher/early.h"
#include "launcher/launcher.h"
#include "run/settings.h"
#include "spool/format.h"
#include "run/control.h"
#include "run/names.h"
#include "run/proc.h"
#include "run/session.h"
#include "symbolizer/runcache.h"

/* A spool fxt-run looks at: its descriptor, open for reading and writing
 * (its conversion goes on with it: no second open by path), and its
 * header page, mapped shared (the owner protocol needs its atomics on the
 * very memory the process sees).  Kept from pass to pass while its
 * process runs (struct spool_kept), so a spool is opened once. */
struct spool_view {
	struct spool_header *h;
	size_t len;
	int fd;
	struct stat sb; /* when opened */
};

/* A live process's spool, its view kept for the next pass. */
struct spool_kept {
	char *name;   /* in OUT's directory */
	uint64_t ino; /* its directory entry's (d_ino): the same file */
	bool seen;    /* by the pass under way */
	struct spool_view v;
};

/* 0, -errno, -EBADMSG (no spool of this version) or -EAGAIN (being
 * created: the magic comes last).  v->sb is filled in whenever the file
 * could be opened (-ENOENT: not there). */
static int spool_view_open(const char *path, struct spool_view *v)
{
	int err = 0;

	v->h = NULL;
	v->len = 4096;
	v->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (v->fd < 0)
		return -errno;
	if (fstat(v->fd, &v->sb) != 0) {
		err = -errno;
		memset(&v->sb, 0, sizeof(v->sb));
	} else if (!S_ISREG(v->sb.st_mode)) {
		err = -EBADMSG;
	} else if ((uint64_t)v->sb.st_size < v->len) {
		err = v->sb.st_size == 0 ? -EAGAIN : -EBADMSG;
	} else {
		void *p = mmap(NULL, v->len, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
		if (p == MAP_FAILED)
			err = -errno;
		else
			v->h = p;
	}
	if (!err && __atomic_load_n(&v->h->magic, __ATOMIC_ACQUIRE) == 0)
		err = -EAGAIN;
	else if (!err && !spool_header_ok(v->h))
		err = -EBADMSG;
	if (err) {
		if (v->h)
			munmap(v->h, v->len);
		v->h = NULL;
		close(v->fd);
		v->fd = -1;
	}
	return err;
}

/* Whether the spool at `path` was never born: its process died while
 * creating it, before the magic that comes last (spool/format.h,
 * "Creation"), so before any record.  Such a spool holds no record: it is
 * removed.  A spool being
 * created by a live process is not; one whose header does not even name
 * its process yet is taken for unborn only when `any_pid` (--recover: the
 * run is over). */
static bool spool_unborn(const char *path, bool any_pid)
{
	struct spool_header h;
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	bool unborn;

	if (fd < 0)
		return false;
	unborn = fstat(fd, &sb) == 0 && (uint64_t)sb.st_size <= SPOOL_UNBORN_MAX &&
		 ((sb.st_size == 0 && any_pid) ||
		  (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == 0 &&
		   (h.pid != 0 ? !run_proc_alive((long)h.pid, h.start_time) : any_pid)));
	close(fd);
	return unborn;
}

static void spool_view_close(struct spool_view *v)
{
	if (v->h)
		munmap(v->h, v->len);
	v->h = NULL;
	if (v->fd >= 0)
		close(v->fd);
	v->fd = -1;
}

/* The session's pipe writes for a conversion: loaded at a pass's first
 * conversion, again whenever the log has grown since (or had a write
 * claimed but not yet filled in), and when --recover moves on to another
 * run's session. */
static void load_writes(struct spools *r, struct convert_opts *o)
{
	uint64_t mark = 0;
	int err = 0;

	/* Mapped once it is there, for the run (for --recover, for each
	 * run's session in turn): its mark then read without a system call. */
	if (r->sess.hdr && strcmp(r->sess_of, r->session) != 0)
		run_session_unmap(&r->sess);
	if (!r->sess.hdr) {
		err = run_session_open_read(&r->sess, r->session);
		if (err == 0)
			snprintf(r->sess_of, sizeof(r->sess_of), "%s", r->session);
	}
	if (r->sess.hdr)
		mark = run_session_mark(&r->sess);

	/* No session file (no process has piped yet): no writes, and no
	 * second open to find that out again; loaded once it is there. */
	if (err == -ENOENT) {
		free(r->writes);
		r->writes = NULL;
		r->nwrites = 0;
		r->writes_loaded = false;
	}
	/* Loaded already, but not since the log grew: a process done now may
	 * have read what was written after the load (a pipeline's reader that
	 * ended while the pass converted another spool got no flow). */
	else if (err != 0 || mark != r->writes_mark)
		r->writes_loaded = false;
	if (err != -ENOENT && (!r->writes_loaded || strcmp(r->writes_of, r->session) != 0)) {
		free(r->writes);
		r->writes = NULL;
		r->nwrites = 0;
		r->writes_mark = mark;
		if (!r->sess.hdr || run_session_writes(&r->sess, &r->writes, &r->nwrites) != 0) {
			r->writes = NULL;
			r->nwrites = 0;
		}
		/* A write claimed but not filled in was left out: load again. */
		if (r->nwrites < (mark < SESSION_LOG_SLOTS ? mark : SESSION_LOG_SLOTS))
			r->writes_mark = UINT64_MAX;
		r->writes_loaded = true;
		snprintf(r->writes_of, sizeof(r->writes_of), "%s", r->session);
	}
	o->writes = r->writes;
	o->nwrites = r->nwrites;
	o->writes_loaded = true;
}

/* A part's numbers, counted as its archive was written (what a reader
 * finds), from the conversion's result (whose counts it takes). */
static void part_counted(struct part *pt, struct convert_result *res, long pid)
{
	pt->st.bytes = res->bytes;
	archive_stats_free(&pt->st);
	pt->st.n = res->counts;
	memset(&res->counts, 0, sizeof(res->counts));
	pt->st.calls = res->calls;
	pt->st.deep = res->deep;
	pt->st.max_depth = res->max_depth;
	pt->st.deep_pid = (uint64_t)pid;
	pt->st.deep_tid = res->deep_tid;
	pt->recovered = !res->sealed;
	pt->exit_status = res->exit_status;
}

/* The largest spool converted into a batch: its archive is made in
 * memory first.  A process that recorded more gets a file of its own (its
 * file is a small part of its cost). */
#define BATCH_SPOOL_MAX (4u << 20)

/* The batch process `pid`'s archive goes to (made when needed), or NULL:
 * a file of its own. */
static struct convert_batch *batch_for(struct spools *r, uint32_t pid)
{
	char path[PATH_MAX + 64];
	unsigned k;

	for (k = 0; k < r->nbatches; k++)
		if (!convert_batch_has(&r->batches[k], pid))
			return &r->batches[k];
	if (k >= RUN_BATCHES || !r->bell)
		return NULL;
	if (!r->batches && !(r->batches = calloc(RUN_BATCHES, sizeof(*r->batches))))
		return NULL;
	run_archive_name(path, sizeof(path), r->out, r->lpid, k + 1);
	if (convert_batch_open(&r->batches[k], path, &r->bell->batch_len[k]) < 0) {
		r->batching = false; /* (a name taken, a full disk): files as before */
		return NULL;
	}
	r->nbatches++;
	return &r->batches[k];
}

/* Converts the claimed spool of process `pid` (not the root) into a batch
 * when it is small and was not converted early: 1 done, 0 not (*early:
 * what the early converter did of it, for the conversion into a file). */
static int convert_batched(struct spools *r, const char *spool, int fd, long pid,
			   struct convert_opts *o, struct convert_early **early)
{
	struct convert_batch_member *m;
	struct convert_result res;
	struct convert_batch *b;
	char path[PATH_MAX + 64];
	struct stat sb;
	struct part *pt;
	int rc;

	*early = early_take(r->early, spool);
	if (*early && convert_early_fed(*early) != 0)
		return 0;
	if ((fd >= 0 ? fstat(fd, &sb) : stat(spool, &sb)) != 0 ||
	    (uint64_t)sb.st_size > BATCH_SPOOL_MAX || !(b = batch_for(r, (uint32_t)pid)))
		return 0;
	convert_early_free(*early);
	*early = NULL;
	run_archive_name(path, sizeof(path), r->out, r->lpid, (unsigned)(b - r->batches) + 1);
	o->batch = b;
	rc = convert_spool(spool, path, o, &res);
	o->batch = NULL;
	if (rc < 0)
		return 0; /* the spool is there: into a file of its own, or said why not */
	m = &b->v[b->n - 1];
	pt = parts_add_range(r->ps, path, pid, res.image, m->off, m->end - m->off);
	if (pt != NULL)
		part_counted(pt, &res, pid);
	summary_filters(res.filter_included, res.filter_excluded);
	convert_result_free(&res);
	return 1;
}

/* Converts one claimed spool, open as *fd (the conversion's; -1 if given
 * away), into its process's archive: image 1 of the
 * root's pid at OUT, any other at OUT.PID[.N].fxt, created exclusively as
 * the agent names them.  Removes the spool once the archive is written.
 * A spool whose converter was killed once its archive had its name is
 * not converted again: that archive is the part. */
static int convert_one(struct spools *r, const char *spool, int *fd, long pid, long root,
		       unsigned image)
{
	bool is_root = pid == root && image == 1;
	struct convert_opts o = { .session = r->session,
				  .cache = r->syms,
				  .consume = true,
				  .srcline = r->srcline,
				  .recycle = spares_recycle,
				  .keep_removed = spools_keep_removed,
				  .recycle_ctx = r,
				  .spool_fd = fd };
	struct convert_result res;
	char path[PATH_MAX + 64];
	unsigned n = 0;
	struct stat sb;
	int rc;

	load_writes(r, &o);
	if (r->batching && pid != root) {
		rc = convert_batched(r, spool, *fd, pid, &o, &o.early);
		if (rc != 0) {
			convert_early_free(o.early);
			return rc < 0 ? rc : 0;
		}
	} else {
		o.early = early_take(r->early, spool);
	}
	/* The root's first image is OUT; its later images follow OUT, named
	 * from .ROOT; the others' start at .PID. */
	rc = convert_spool_named(spool, r->out, pid,
				 is_root       ? 0
				 : pid == root ? image - 1
					       : image,
				 &o, &res, path, sizeof(path), &n);
	convert_early_free(o.early);
	if (rc < 0)
		return rc;
	struct part *pt = parts_add(r->ps, path, pid, is_root ? 0 : n);
	if (pt != NULL && res.converted_before) {
		/* A killed converter's: read back, as an archive the run left. */
		archive_stats_free(&pt->st);
		if (!r->quiet)
			archive_stats(path, &pt->st);
		else if (stat(path, &sb) == 0)
			pt->st.bytes = (uint64_t)sb.st_size;
		pt->left = true;
		pt->recovered = !res.sealed;
		pt->exit_status = res.exit_status;
	} else if (pt != NULL) {
		part_counted(pt, &res, pid);
		pt->st.bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : res.bytes;
	}
	summary_filters(res.filter_included, res.filter_excluded);
	convert_result_free(&res);
	return 0;
}

/* Converts a snapshot's spool (agent/keep/snapshot.h), claimed, into
 * OUT's stem.snapN.EXT, replacing an archive of that name (fxt-run checked
 * at its start that none was there, or -f); removes the spool. */
static int convert_snapshot(struct spools *r, const char *spool, unsigned n)
{
	struct convert_opts o = { .session = r->session,
				  .cache = r->syms,
				  .consume = true,
				  .srcline = r->srcline,
				  .keep_removed = spools_keep_removed,
				  .recycle_ctx = r };
	struct convert_result res;
	char path[PATH_MAX + 64];
	int rc;

	load_writes(r, &o);
	run_snapshot_name(path, sizeof(path), r->out, n, false);
	rc = convert_spool(spool, path, &o, &res);
	convert_result_free(&res);
	if (rc < 0)
		return rc;
	if (name_list_add(&r->snapshots, path) != 0)
		return -ENOMEM;
	return 0;
}

static void say_exec(long pid)
{
	fprintf(stderr,
		"fxt-run: process %ld ran another program (exec): not followed; its records "
		"until then are kept\n",
		pid);
}

/* Remembers process pid (fxt-run -p), once. */
static void note_proc(struct spools *r, long pid, uint64_t start_time, bool said)
{
	struct spools_proc *v;

	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid && r->procs[i].start_time == start_time) {
			r->procs[i].said |= said;
			return;
		}
	v = realloc(r->procs, (r->nprocs + 1) * sizeof(*v));
	if (!v)
		return;
	r->procs = v;
	v[r->nprocs++] = (struct spools_proc){ pid, start_time, said };
}

void spools_say_execs(struct spools *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct spools_proc *p = &r->procs[i];

		if (!p->said && run_proc_alive(p->pid, p->start_time) && !proc_has_agent(p->pid)) {
			p->said = true;
			if (!r->quiet)
				say_exec(p->pid);
		}
	}
}

bool proc_has_agent(long pid)
{
	char path[64], line[PATH_MAX + 128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libfxt-agent.so") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* A spool whose process left its start time to fxt-run (spool/format.h):
 * whether the process runs, and if so its start time, written into the
 * header (unless someone did first) and into *start. */
static bool spool_fill_start(struct spool_header *h, long pid, uint64_t *start)
{
	uint64_t none = 0, t;

	if (!run_proc_alive_since(pid, &t))
		return false;
	if (t == 0)
		return true; /* unreadable: as run_proc_alive() judges it */
	if (!__atomic_compare_exchange_n(&h->start_time, &none, t, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		*start = none;
		return none == t;
	}
	*start = t;
	return true;
}

/* Looks at one spool of the run, its view `v` as spool_view_open() made
 * it (rc), and converts it if its process is done with it, through the
 * view's descriptor.  At the end (`final`), the spool of a live process is
 * left to that process.  Returns false while its process still runs (its
 * view may then be kept for the next pass); the caller closes the view. */
static bool consider_spool(struct spools *r, const char *path, struct spool_view *v, int rc,
			   bool final)
{
	if (rc == -EAGAIN && spool_unborn(path, r->recover)) {
		unlink(path);
		return true;
	}
	if (rc == -EAGAIN || rc == -ENOENT)
		return rc == -ENOENT || final; /* being created, or gone */
	if (rc < 0 || v->h == NULL) {
		if (final && !r->quiet)
			fprintf(stderr, "fxt-run: %s is not a spool this fxt-run can read (%s)\n",
				display_name(path), strerror(rc < 0 ? -rc : EINVAL));
		return true;
	}
	struct spool_header *h = v->h;
	long pid = (long)h->pid;
	unsigned image = h->image ? h->image : 1;
	long root = r->root ? r->root : (long)h->root_pid;
	if (r->root && (long)h->root_pid != r->root) {
		return true; /* another run's */
	}
	if (r->recover)
		run_session_path(r->session, sizeof(r->session), r->out, root);
	uint32_t owner = __atomic_load_n(&h->owner, __ATOMIC_SEQ_CST);
	bool sealed = __atomic_load_n(&h->state, __ATOMIC_SEQ_CST) == SPOOL_SEALED;
	uint64_t h_start = __atomic_load_n(&h->start_time, __ATOMIC_ACQUIRE);
	bool alive = h_start || r->recover ? run_proc_alive(pid, h_start)
					    : spool_fill_start(h, pid, &h_start);
	bool mine = false;

	/* Attached: a process without the agent any more ran another program
	 * (sealed before, if its exec went through a wrapper bound in its GOT;
	 * else not, and done with its spool all the same). */
	if (alive && r->attached && !h->snapshot && pid != r->root) {
		bool exec = !proc_has_agent(pid);

		/* Looked at again at the end: sealed by its exec wrapper, the
		 * process may not have run the new program yet. */
		note_proc(r, pid, h->start_time, exec);
		if (exec) {
			alive = false;
			if (!r->quiet)
				say_exec(pid);
		}
	} else if (alive && r->attached && !h->snapshot && !proc_has_agent(pid)) {
		alive = false; /* the root: fxt-run -p says it of its own */
	}

	if (h->snapshot) {
		/* Sealed from the start; its process may go on. */
		unsigned n = h->snapshot;
		mine = spool_claim(h, SPOOL_OWNER_NONE, SPOOL_OWNER_LAUNCHER) ||
		       (r->recover && !(owner == SPOOL_OWNER_SELF && alive));
		rc = mine ? convert_snapshot(r, path, n) : 0;
		if (rc < 0 && !r->quiet)
			fprintf(stderr,
				"fxt-run: snapshot %u cannot be converted (%s); it stays in %s "
				"(try: fxt-run --recover %s)\n",
				n, strerror(-rc), display_name(path), display_name(path));
		return true;
	}

	if (!sealed && alive) {
		/* Its process converts it at its exit, fxt-run being done. */
		if (final && !r->quiet)
			fprintf(stderr,
				"fxt-run: process %ld is still running; it writes its archive "
				"when it exits (its records are in %s)\n",
				pid, display_name(path));
		return false;
	}
	if (owner == SPOOL_OWNER_SELF && alive) {
		return true; /* converting its own */
	}
	mine = spool_claim(h, SPOOL_OWNER_NONE, SPOOL_OWNER_LAUNCHER) ||
	       ((r->recover || final) && owner != SPOOL_OWNER_NONE);
	if (!mine)
		return true;
	r->cur_dead = !alive && !r->attached; /* attached: one that exec'd is not */
	/* The root's, gone or sealed: the run ends (this pass may come
	 * before supervise() has seen the exit, or before the root, sealed
	 * at its exit, is gone: a loaded machine's window; a root that
	 * ran another program only keeps its old spool's pages until the
	 * end). */
	r->cur_last = (r->cur_dead || sealed) && r->root != 0 && pid == r->root;
	rc = convert_one(r, path, &v->fd, pid, root, image);
	r->cur_dead = false;
	r->cur_last = false;
	r->converted++;
	if (rc < 0 && !r->quiet)
		fprintf(stderr,
			"fxt-run: the records of process %ld cannot be converted (%s); they "
			"stay in %s (try: fxt-run --recover %s)\n",
			pid, strerror(-rc), display_name(path), display_name(path));
	return true;
}

/* Views kept at most (a descriptor each); past it, opened at each pass. */
#define KEPT_MAX 256

/* The kept view of `name` if it is still that file (its directory
 * entry's inode), or NULL. */
static struct spool_kept *kept_find(struct spools *r, const char *name, uint64_t ino)
{
	for (size_t i = 0; i < r->nkept; i++)
		if (r->kept[i].ino == ino && strcmp(r->kept[i].name, name) == 0)
			return &r->kept[i];
	return NULL;
}

/* Keeps the view of a live process's spool `name` for the next pass
 * (closed if it cannot be). */
static void kept_add(struct spools *r, const char *name, uint64_t ino, struct spool_view *v)
{
	char *copy = r->nkept < KEPT_MAX ? strdup(name) : NULL;

	if (copy && r->nkept == r->capkept) {
		size_t cap = r->capkept ? 2 * r->capkept : 16;
		struct spool_kept *nv = realloc(r->kept, cap * sizeof(*nv));
		if (nv) {
			r->kept = nv;
			r->capkept = cap;
		}
	}
	if (!copy || r->nkept == r->capkept) {
		free(copy);
		spool_view_close(v);
		return;
	}
	r->kept[r->nkept++] = (struct spool_kept){ copy, ino, true, *v };
}

/* Closes the kept views not seen by the pass (all: `all`). */
static void kept_prune(struct spools *r, bool all)
{
	for (size_t i = 0; i < r->nkept;) {
		struct spool_kept *k = &r->kept[i];

		if (!all && k->seen) {
			k->seen = false;
			i++;
			continue;
		}
		spool_view_close(&k->v);
		free(k->name);
		*k = r->kept[--r->nkept];
	}
}

/* One pass over OUT's directory: converts every spool of the run whose
 * process is done; r->running counts the others.  A spool is opened once:
 * the view of a live process's is kept from pass to pass (until it is
 * converted, or gone). */
void spools_scan(struct spools *r, bool final)
{
	DIR *d = opendir(r->dir[0] != '\0' ? r->dir : "/");
	struct dirent *de;

	r->running = 0;
	r->converted = 0;
	r->writes_loaded = false; /* reloaded at the pass's first conversion */
	/* The modules stat'ed once a pass. */
	fxt_symcache_new_pass(r->syms);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		struct spool_kept *k;
		struct spool_view v;
		char *path;
		long pid;
		unsigned image;
		int rc = 0;

		if (!run_spool_parse(r->out, de->d_name, &pid, &image) &&
		    !run_snapshot_spool_parse(r->out, de->d_name, &image)) {
			spares_stale(r, de->d_name);
			continue;
		}
		if (asprintf(&path, "%s/%s", r->dir, de->d_name) < 0)
			break;
		k = kept_find(r, de->d_name, (uint64_t)de->d_ino);
		if (k != NULL) {
			v = k->v; /* seen, and of the run, before */
			k->v.h = NULL;
			k->v.fd = -1;
			k->seen = false; /* taken: kept again below if it runs */
		} else {
			rc = spool_view_open(path, &v);
			if (rc == -ENOENT ||
			    (v.fd < 0 && rc != -EAGAIN && rc != -EBADMSG &&
			     stat(path, &v.sb) != 0) ||
			    !(r->recover || v.sb.st_mtime >= r->since)) {
				spool_view_close(&v);
				free(path);
				continue;
			}
		}
		if (!consider_spool(r, path, &v, rc, final)) {
			r->running++;
			if (v.h != NULL && !final) {
				if (k != NULL) {
					k->v = v;
					k->seen = true;
				} else {
					kept_add(r, de->d_name, (uint64_t)de->d_ino, &v);
				}
				v.h = NULL;
				v.fd = -1;
			}
		}
		spool_view_close(&v);
		free(path);
	}
	closedir(d);
	kept_prune(r, final);
	if (r->spares && r->bell && !final && r->converted && (!r->finishing || r->running))
		spares_fill(r);
}

void spools_set_root(struct spools *r, long root)
{
	r->root = root;
	run_session_path(r->session, sizeof(r->session), r->out, root);
}

int spools_init(struct spools *r, struct parts *ps, const char *out, long root, time_t since,
		bool quiet)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->dir = strdup(out);
	if (r->dir == NULL)
		return -ENOMEM;
	*strrchr(r->dir, '/') = '\0'; /* out is absolute */
	r->since = since;
	r->quiet = quiet;
	r->ps = ps;
	r->syms = fxt_symcache_new(); /* NULL: each conversion makes its own */
	if (r->syms) /* lines the early thread left: a thread beside the conversion */
		fxt_symcache_set_ahead(r->syms, getenv(FXT_ENV(RUN_LATE)) == NULL);
	r->lpid = (long)getpid();
	spools_set_root(r, root);
	return 0;
}

/* FXT_RUN_DEBUG set: how the run's symbol cache did, on stderr. */
static void symcache_debug(const struct spools *r)
{
	uint64_t hits, misses, kept, made;

	if (getenv(FXT_ENV(RUN_DEBUG)) == NULL || r->syms == NULL)
		return;
	fxt_symcache_counts(r->syms, &hits, &misses);
	fxt_symcache_loc_counts(r->syms, &kept, &made);
	fprintf(stderr,
		"fxt-run: symbols: %" PRIu64 " from the run's cache, %" PRIu64 " looked up\n", hits,
		misses);
	fprintf(stderr,
		"fxt-run: source lines: %" PRIu64 " from the files kept across runs, %" PRIu64
		" decoded and kept\n",
		kept, made);
}

/* The end of the run: every spool whose process is done is converted;
 * processes that are exiting get a moment (a SIGKILLed process with a
 * large spool takes a while to go); the rest are left to themselves. */
void spools_finish(struct spools *r, const char *ctl)
{
	r->finishing = true;
	spools_scan(r, false);
	for (int i = 0; i < 25 && r->running != 0; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		spools_scan(r, false);
	}
	/* From now on a process that seals converts its own spool; the last
	 * pass sees every spool sealed before (run/control.h). */
	int err = ctl != NULL ? run_ctl_set(ctl, RUN_CTL_CLOSING) : 0;
	if (err != 0 && !r->quiet)
		fprintf(stderr, "fxt-run: cannot write %s: %s\n", display_name(ctl),
			strerror(-err));
	spools_scan(r, true);
	spares_remove(r);
	/* A batch that got no archive (its first one failed) holds nothing. */
	for (unsigned k = 0; k < r->nbatches; k++) {
		char path[PATH_MAX + 64];

		if (r->batches[k].n != 0)
			continue;
		run_archive_name(path, sizeof(path), r->out, r->lpid, k + 1);
		unlink(path);
	}
}

/* consider_spool() of the spool at `path`, its view opened and closed. */
static bool consider_path(struct spools *r, const char *path, bool final)
{
	struct spool_view v;
	int rc = spool_view_open(path, &v);
	bool done = consider_spool(r, path, &v, rc, final);

	spool_view_close(&v);
	return done;
}

int spools_recover(struct spools *r, const char *path)
{
	struct spool_view v;
	int rc = spool_view_open(path, &v);

	/* Being created: by a process killed meanwhile that is still going
	 * (a killed process takes a moment to end), it gets a second to end,
	 * then its spool, holding no record, goes; by a live one, it stays. */
	for (int i = 0; rc == -EAGAIN && i <= 50; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (spool_unborn(path, true)) {
			unlink(path); /* no record in it */
			return 0;
		}
		if (i == 50)
			break;
		nanosleep(&ts, NULL);
		rc = spool_view_open(path, &v);
	}
	if (rc < 0)
		return rc;
	spool_view_close(&v);
	/* A process killed a moment ago may still be going (a large spool's
	 * pages take a while to let go of): it gets a second, as at the end
	 * of a run (spools_finish()), before it counts as still running. */
	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (consider_path(r, path, false))
			return 0;
		nanosleep(&ts, NULL);
	}
	consider_path(r, path, true);
	return 0;
}

void spools_free(struct spools *r)
{
	kept_prune(r, true);
	free(r->kept);
	r->kept = NULL;
	r->capkept = 0;
	spools_release_removed(r);
	for (unsigned k = 0; k < r->nbatches; k++)
		convert_batch_close(&r->batches[k]);
	free(r->batches);
	r->batches = NULL;
	r->nbatches = 0;
	free(r->procs);
	r->procs = NULL;
	name_list_free(&r->snapshots);
	free(r->writes);
	run_session_unmap(&r->sess);
	symcache_debug(r);
	fxt_symcache_free(r->syms);
	free(r->dir);
	if (r->bell)
		munmap((char *)r->bell - RUN_BELL_OFF, RUN_CTL_SIZE);
	r->bell = NULL;
}
