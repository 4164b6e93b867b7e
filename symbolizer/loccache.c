/* Functions' source locations kept across runs, one file per module by
 * its build ID (FXT_SRCLINE_CACHE; see loccache_dir()).
 *
 * A function's location (fxt_sym_info.loc, "src/parse.c:118") costs the
 * decoding of its unit's line program, millions of instructions for a
 * large unit, in every process and every run that asks for it; the run
 * cache (runcache.h) only spares the processes of one run the addresses
 * an earlier one asked.  Here the locations a symbolizer made are kept in
 * DIR/BUILDID.loc, read by the next symbolizer of that module (a later
 * process of the run, the next run), which decodes nothing for them.
 *
 * Never wrong: a file serves a module only when its build ID, the
 * module's file identity (device, inode, size, modification and change
 * times: rewriting the file, even with the same build ID, size and
 * mtime, changes its ctime), and those of the separate debug file the
 * lines came from (when not from the module itself) are what they were
 * when it was written; else it is ignored and replaced.  Only
 * modules with DWARF are kept (a debug file installed later is then
 * found).  Bounded: LC_MAX_ENTRIES locations a file, LC_MAX_FILES files
 * (the oldest removed).  Written whole to a temporary file and renamed, so
 * that a reader sees a file whole or not at all; a file that does not read
 * as one (cut short, another version) is ignored.  The temporary file has
 * no name while it is written (O_TMPFILE, where the file system allows);
 * it is named BUILDID.loc.PID-START-SEQ.tmp, by its writer's pid and
 * start time, only from its link to its rename (or all along without
 * O_TMPFILE): one its writer left, killed, is removed by the next writer
 * in the folder (lc_tidy()), as is an older version's BUILDID.loc.XXXXXX
 * an hour old.
 *
 * The file: struct lc_head, the build ID, the debug file's path (padded
 * to 8 bytes), the entries (struct lc_ent, by address, each once), then
 * the locations' bytes, each location followed by a NUL.  Native byte
 * order (lc_head.order says which).  A reader maps it and answers from
 * the mapping: a location is a string there, handed to the caller's
 * arena with the mapping (fxt_sym__loccache_get()), not copied; an entry
 * is checked when it is asked for (its bytes inside the file, its NUL),
 * not the file whole when it is opened (the order of the entries only
 * where it matters, lc_write()'s merge): a later run's conversion reads
 * the few hundred kilobytes it needs and no more (bench/srcline.sh).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/writeall.h"
#include "run/proc.h"
#include "run/settings.h"
#include "symbolizer/internal.h"

#define LC_MAGIC       "FXTLOC02" /* 01: no NULs, no parts */
#define LC_ORDER       0x01020304u
#define LC_MAX_ENTRIES (1u << 20)
#define LC_MAX_BYTES   (64u << 20) /* of locations */
#define LC_MAX_FILES   256
#define LC_ID_MAX      64
#define LC_TMP_STALE   3600 /* s: an unnamed writer's temporary file is left */

/* A file as it is: a write, a copy over it, a touch each change it. */
struct lc_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

struct lc_head {
	char magic[8];
	uint32_t order, nent;
	uint32_t idlen, dbglen; /* the build ID's bytes, the debug file's path */
	uint64_t strsize;	/* the locations' bytes */
	struct lc_id elf, dbg;	/* dbglen 0: dbg all 0 */
};

struct lc_ent {
	uint64_t vaddr;	     /* the function's ELF virtual address */
	uint32_t off, len;   /* its location in the locations' bytes (a NUL after
				them); len 0: none */
	uint32_t file, line; /* its parts (fxt_sym_info.loc_file, loc_line) */
};

/* A location made here, to be written. */
struct lc_new {
	uint64_t vaddr;
	const char *loc; /* NULL: none (-ENOENT); in the symbolizer's arena */
	uint32_t len, file, line;
};

struct loc_cache {
	char *path; /* DIR/BUILDID.loc */
	unsigned char id[LC_ID_MAX];
	size_t idlen;
	struct stat elf; /* the module's file */
	/* The file read: its mapping, entries and bytes (NULL: none). */
	void *map;
	size_t mapsize;
	const struct lc_ent *ent;
	size_t nent, hint;
	const char *str;
	uint64_t strsize;
	struct arena *given; /* the arena the mapping went to, NULL: none */
	/* What this symbolizer made; written at close. */
	struct lc_new *add;
	size_t nadd, capadd;
	bool dwarf_known; /* where the lines come from is known: may write */
	char *dbg;	  /* that separate debug file, NULL: the module */
	struct stat dbg_st;
	uint64_t hits;
};

/* ------------------------------------------------------------ where */

/* The folder of the cache files: FXT_SRCLINE_CACHE; unset,
 * $XDG_CACHE_HOME/fxtrace/srcline or ~/.cache/fxtrace/srcline; NULL when
 * "off" (or empty), or there is no home.  In buf. */
static const char *loccache_dir(char *buf, size_t size)
{
	const char *d = getenv(FXT_ENV(SRCLINE_CACHE)), *home;
	int n;

	if (d)
		return *d && strcmp(d, "off") != 0 && strlen(d) < size ? strcpy(buf, d) : NULL;
	if ((home = getenv("XDG_CACHE_HOME")) && home[0] == '/')
		n = snprintf(buf, size, "%s/fxtrace/srcline", home);
	else if ((home = getenv("HOME")) && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/fxtrace/srcline", home);
	else
		return NULL;
	return n > 0 && (size_t)n < size ? buf : NULL;
}

/* mkdir -p of dir (0700: the names of a user's source files). */
static int make_dirs(char *dir)
{
	for (char *p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		int rc = mkdir(dir, 0700);
		*p = c;
		if (rc != 0 && errno != EEXIST)
			return -errno;
		if (c == '\0')
			return 0;
	}
}

static void id_of(struct lc_id *id, const struct stat *st)
{
	memset(id, 0, sizeof(*id));
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	id->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
	id->ctime_sec = (int64_t)st->st_ctim.tv_sec;
	id->ctime_nsec = (int64_t)st->st_ctim.tv_nsec;
}

static bool same_file(const struct stat *st, const struct lc_id *id)
{
	struct lc_id now;

	id_of(&now, st);
	return memcmp(&now, id, sizeof(now)) == 0;
}

/* ------------------------------------------------------------ reading */

/* Maps lc->path and checks it against the module: the entries in lc when
 * it serves it, else nothing (a file that is not one, another build). */
static void lc_read(struct loc_cache *lc)
{
	const struct lc_head *h;
	const unsigned char *p;
	struct stat st;
	size_t need;
	int fd = open(lc->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(*h) ||
	    (uint64_t)st.st_size >
		(uint64_t)LC_MAX_BYTES + LC_MAX_ENTRIES * sizeof(struct lc_ent) + 8192) {
		close(fd);
		return;
	}
	lc->mapsize = (size_t)st.st_size;
	lc->map = mmap(NULL, lc->mapsize, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (lc->map == MAP_FAILED) {
		lc->map = NULL;
		return;
	}
	h = lc->map;
	p = (const unsigned char *)(h + 1);
	need = sizeof(*h) + (((size_t)h->idlen + h->dbglen + 7) & ~(size_t)7);
	if (memcmp(h->magic, LC_MAGIC, 8) != 0 || h->order != LC_ORDER || h->idlen != lc->idlen ||
	    h->dbglen >= PATH_MAX || h->nent > LC_MAX_ENTRIES || h->strsize > LC_MAX_BYTES ||
	    need + (size_t)h->nent * sizeof(struct lc_ent) + h->strsize != lc->mapsize ||
	    memcmp(p, lc->id, lc->idlen) != 0 || !same_file(&lc->elf, &h->elf))
		goto ignore;
	if (h->dbglen) {
		char dbg[PATH_MAX];

		memcpy(dbg, p + h->idlen, h->dbglen);
		dbg[h->dbglen] = '\0';
		if (stat(dbg, &st) != 0 || !same_file(&st, &h->dbg))
			goto ignore;
	}
	lc->ent = (const struct lc_ent *)((const char *)lc->map + need);
	lc->nent = h->nent;
	lc->str = (const char *)(lc->ent + lc->nent);
	lc->strsize = h->strsize;
	return;
ignore:
	munmap(lc->map, lc->mapsize);
	lc->map = NULL;
	lc->ent = NULL;
	lc->nent = 0;
}

struct loc_cache *fxt_sym__loccache_open(Dwfl_Module *mod, const struct stat *st)
{
	const unsigned char *id;
	GElf_Addr idaddr;
	char dir[PATH_MAX];
	struct loc_cache *lc;
	int idlen = dwfl_module_build_id(mod, &id, &idaddr);
	size_t n;

	if (idlen <= 0 || idlen > LC_ID_MAX || !loccache_dir(dir, sizeof(dir)))
		return NULL;
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return NULL;
	n = strlen(dir);
	lc->path = malloc(n + 2 * (size_t)idlen + sizeof("/.loc"));
	if (!lc->path) {
		free(lc);
		return NULL;
	}
	lc->elf = *st;
	memcpy(lc->path, dir, n);
	lc->path[n++] = '/';
	for (int i = 0; i < idlen; i++, n += 2)
		snprintf(lc->path + n, 3, "%02x", id[i]);
	strcpy(lc->path + n, ".loc");
	memcpy(lc->id, id, (size_t)idlen);
	lc->idlen = (size_t)idlen;
	lc_read(lc);
	return lc;
}

int fxt_sym__loccache_get(struct loc_cache *lc, uint64_t vaddr, struct arena *a, const char **loc,
			  size_t *len, uint32_t *file, uint32_t *line)
{
	size_t lo = 0, hi = lc->nent, i = lc->hint;
	const struct lc_ent *e;
	char *copy;

	/* Functions are mostly asked in address order: the one after the
	 * last answer first. */
	if (!(i < lc->nent && lc->ent[i].vaddr == vaddr)) {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (lc->ent[mid].vaddr < vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == lc->nent || lc->ent[lo].vaddr != vaddr)
			return 0;
		i = lo;
	}
	/* (An entry whose bytes leave the file, or end in no NUL: not
	 * kept, decoded again.  The search needs no order to answer right:
	 * what it finds has the address asked for.) */
	e = &lc->ent[i];
	if (e->len &&
	    ((uint64_t)e->off + e->len >= lc->strsize || lc->str[e->off + e->len] != '\0'))
		return 0;
	lc->hint = i + 1;
	lc->hits++;
	*len = e->len;
	*loc = lc->str + e->off;
	/* (Parts that are not the text's: none said.) */
	*file = (e->file & ~FXT_SYM_LOC_INL) < e->len ? e->file : 0;
	*line = e->line;
	if (!e->len || lc->given == a)
		return 1;
	/* The mapping outlives the symbolizer with `a`, which frees it;
	 * else (another arena, or no memory for that) the location copied. */
	if (!lc->given && fxt_sym__arena_keep_map(a, lc->map, lc->mapsize) == 0) {
		lc->given = a;
		return 1;
	}
	copy = fxt_sym__arena_alloc(a, e->len + 1, 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, *loc, e->len + 1);
	*loc = copy;
	return 1;
}

/* ------------------------------------------------------------ writing */

void fxt_sym__loccache_dwarf(struct loc_cache *lc, const char *debug_file)
{
	if (lc->dwarf_known)
		return;
	if (debug_file) {
		lc->dbg = strdup(debug_file);
		if (!lc->dbg || strlen(debug_file) >= PATH_MAX ||
		    stat(debug_file, &lc->dbg_st) != 0)
			return; /* not known: not written */
	}
	lc->dwarf_known = true;
}

void fxt_sym__loccache_put(struct loc_cache *lc, uint64_t vaddr, const char *loc, size_t len,
			   uint32_t file, uint32_t line)
{
	if (!lc->dwarf_known || len > UINT32_MAX / 2 || lc->nent + lc->nadd >= LC_MAX_ENTRIES)
		return;
	if (lc->nadd == lc->capadd) {
		size_t ncap = lc->capadd ? lc->capadd * 2 : 256;
		struct lc_new *nv = realloc(lc->add, ncap * sizeof(*nv));

		if (!nv)
			return;
		lc->add = nv;
		lc->capadd = ncap;
	}
	lc->add[lc->nadd].vaddr = vaddr;
	lc->add[lc->nadd].loc = len ? loc : NULL;
	lc->add[lc->nadd].len = (uint32_t)len;
	lc->add[lc->nadd].file = len ? file : 0;
	lc->add[lc->nadd].line = len ? line : 0;
	lc->nadd++;
}

static int new_cmp(const void *a, const void *b)
{
	const struct lc_new *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Whether `name` is a temporary file of a writer that is gone: NAME.loc.
 * PID-START-SEQ.tmp of a process that no longer runs (lc_write()), or an
 * older version's NAME.loc.XXXXXX (mkostemp(): no writer named) last
 * written LC_TMP_STALE seconds ago. */
static bool lc_stale_tmp(const char *name, const struct stat *st)
{
	const char *p = strstr(name, ".loc."), *q;
	unsigned long long pid, start;
	char *end;

	if (!p)
		return false;
	p += 5;
	q = strchr(p, '.');
	if (!q && strlen(p) == 6)
		return st->st_mtim.tv_sec + LC_TMP_STALE < time(NULL);
	if (!q || strcmp(q, ".tmp") != 0 || *p < '0' || *p > '9')
		return false;
	errno = 0;
	pid = strtoull(p, &end, 10);
	if (*end != '-' || end[1] < '0' || end[1] > '9')
		return false;
	start = strtoull(end + 1, &end, 10);
	if (*end != '-' || errno != 0 || pid == 0 || pid > INT32_MAX)
		return false;
	return !run_proc_alive((long)pid, (uint64_t)start);
}

/* The folder's temporary files whose writers are gone removed
 * (lc_stale_tmp()); with `trim`, beyond LC_MAX_FILES files, the oldest
 * (by modification time) removed. */
static void lc_tidy(const char *dir, bool trim)
{
	char path[PATH_MAX], old[PATH_MAX];
	struct timespec oldest = { 0, 0 };
	size_t count = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	old[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		bool loc = n >= 5 && strcmp(de->d_name + n - 4, ".loc") == 0;
		struct stat st;

		if ((!loc && !strstr(de->d_name, ".loc.")) || (loc && !trim) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    stat(path, &st) != 0)
			continue;
		if (!loc) {
			if (lc_stale_tmp(de->d_name, &st))
				unlink(path);
			continue;
		}
		count++;
		if (!old[0] || st.st_mtim.tv_sec < oldest.tv_sec ||
		    (st.st_mtim.tv_sec == oldest.tv_sec && st.st_mtim.tv_nsec < oldest.tv_nsec)) {
			oldest = st.st_mtim;
			strcpy(old, path);
		}
	}
	closedir(d);
	if (count > LC_MAX_FILES && old[0])
		unlink(old);
}

/* A file in folder `dir` for the `size` bytes at buf, named `tmp` (`dir`
 * then "/NAME"): written unnamed (O_TMPFILE) and linked as tmp, else
 * created as tmp.  0 or -errno; on failure, tmp is not there. */
static int lc_put_tmp(const char *dir, const char *tmp, const void *buf, size_t size)
{
	char self[48];
	bool named = false;
	int fd = -1, err = 0;

#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#endif
	if (fd < 0) {
		fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		named = true;
	}
	if (fxt_write_all(fd, buf, size) < 0)
		err = -EIO;
	if (!err && !named) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0)
			err = -errno;
		else
			named = true;
	}
	if (close(fd) != 0 && !err)
		err = -EIO;
	if (err && named)
		unlink(tmp);
	return err;
}

/* The made entries sorted by address, each once (two addresses in one
 * function ask for its start).  They come in the order the functions
 * were first called, mostly ascending runs: a natural merge sort, one
 * pass over them per halving of the runs (qsort() took as long as the
 * line program).  Without memory for it, qsort(). */
static void adds_sort(struct loc_cache *lc)
{
	struct lc_new *a = lc->add, *b = NULL;
	size_t n = lc->nadd, i, j, runs = 1;

	for (i = 1; i < n; i++)
		runs += a[i - 1].vaddr > a[i].vaddr;
	if (runs > 1 && (b = malloc(n * sizeof(*b))) == NULL) {
		qsort(a, n, sizeof(*a), new_cmp);
		runs = 1;
	}
	while (runs > 1) {
		struct lc_new *t;
		size_t k = 0;

		runs = 0;
		for (i = 0; i < n; runs++) {
			size_t m = i + 1, e;

			while (m < n && a[m - 1].vaddr <= a[m].vaddr)
				m++;
			for (e = m < n ? m + 1 : m; e < n && a[e - 1].vaddr <= a[e].vaddr; e++)
				;
			for (j = m; i < m || j < e;)
				b[k++] =
				    j == e || (i < m && a[i].vaddr <= a[j].vaddr) ? a[i++] : a[j++];
			i = e;
		}
		t = a;
		a = b;
		b = t;
		if (runs == 1)
			break;
	}
	if (a != lc->add) {
		memcpy(lc->add, a, n * sizeof(*a));
		b = a;
	}
	if (b != lc->add)
		free(b);
	for (i = 1, j = 1; i < n; i++)
		if (lc->add[i].vaddr != lc->add[j - 1].vaddr)
			lc->add[j++] = lc->add[i];
	if (n)
		lc->nadd = j;
}

/* How many of the file's entries lc_write() merges: all when they are
 * in order and each inside the file with its NUL, else none (the file
 * is no longer one of ours: replaced whole).  The readers check an
 * entry when they take it (fxt_sym__loccache_get()). */
static size_t lc_old(const struct loc_cache *lc)
{
	for (size_t i = 0; i < lc->nent; i++) {
		const struct lc_ent *e = &lc->ent[i];

		if ((i && e[-1].vaddr >= e->vaddr) ||
		    (e->len && ((uint64_t)e->off + e->len >= lc->strsize ||
				lc->str[e->off + e->len] != '\0')))
			return 0;
	}
	return lc->nent;
}

/* The file's entries and those made here, merged by address (the file's
 * when both have one), into a new file renamed over lc->path: built in
 * memory, written at once. */
static void lc_write(struct loc_cache *lc)
{
	size_t dbglen = lc->dbg ? strlen(lc->dbg) : 0, i, j, k, n = 0, head, size;
	size_t nold = lc_old(lc);
	uint64_t strsize = 0;
	struct lc_head *h;
	struct lc_ent *ent;
	char *buf, *str, *tmp = NULL, *dir = NULL, *slash, state;
	static unsigned seq; /* two writers of one module in a process */
	uint64_t start;
	bool existed;

	adds_sort(lc);
	for (i = 0, j = 0; i < nold || j < lc->nadd; n++) {
		bool from_file =
		    j == lc->nadd || (i < nold && lc->ent[i].vaddr <= lc->add[j].vaddr);
		uint32_t len;

		if (from_file && j < lc->nadd && lc->ent[i].vaddr == lc->add[j].vaddr)
			j++;
		len = from_file ? lc->ent[i++].len : lc->add[j++].len;
		strsize += len ? len + 1 : 0; /* with its NUL */
	}
	if (strsize > LC_MAX_BYTES || n > LC_MAX_ENTRIES)
		return;
	head = sizeof(*h) + ((lc->idlen + dbglen + 7) & ~(size_t)7);
	size = head + n * sizeof(*ent) + (size_t)strsize;
	buf = calloc(1, size);
	if (!buf)
		return;
	h = (struct lc_head *)buf;
	memcpy(h->magic, LC_MAGIC, 8);
	h->order = LC_ORDER;
	h->nent = (uint32_t)n;
	h->idlen = (uint32_t)lc->idlen;
	h->dbglen = (uint32_t)dbglen;
	h->strsize = strsize;
	id_of(&h->elf, &lc->elf);
	if (lc->dbg) {
		id_of(&h->dbg, &lc->dbg_st);
		memcpy(buf + sizeof(*h) + lc->idlen, lc->dbg, dbglen);
	}
	memcpy(buf + sizeof(*h), lc->id, lc->idlen);
	ent = (struct lc_ent *)(buf + head);
	str = (char *)(ent + n);
	for (i = 0, j = 0, k = 0; k < n; k++) {
		bool from_file =
		    j == lc->nadd || (i < nold && lc->ent[i].vaddr <= lc->add[j].vaddr);
		const char *s;

		if (from_file && j < lc->nadd && lc->ent[i].vaddr == lc->add[j].vaddr)
			j++;
		if (from_file) {
			ent[k] = lc->ent[i];
			s = lc->str + lc->ent[i++].off;
		} else {
			ent[k].vaddr = lc->add[j].vaddr;
			ent[k].len = lc->add[j].len;
			ent[k].file = lc->add[j].file;
			ent[k].line = lc->add[j].line;
			s = lc->add[j++].loc;
		}
		ent[k].off = (uint32_t)(str - (char *)(ent + n));
		if (ent[k].len) { /* s is NULL for "no location" */
			memcpy(str, s, ent[k].len);
			str += ent[k].len + 1; /* its NUL: buf is calloc()'d */
		}
	}
	tmp = malloc(strlen(lc->path) + sizeof(".loc.-18446744073709551615-4294967295.tmp") + 24);
	if (!tmp || run_proc_stat_read(0, &state, &start) != 0)
		goto out;
	strcpy(tmp, lc->path);
	slash = strrchr(tmp, '/');
	*slash = '\0';
	if (make_dirs(tmp) < 0)
		goto out;
	existed = access(lc->path, F_OK) == 0;
	dir = strdup(tmp);
	*slash = '/';
	sprintf(tmp + strlen(tmp), ".%ld-%llu-%u.tmp", (long)getpid(), (unsigned long long)start,
		__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	if (!dir || lc_put_tmp(dir, tmp, buf, size) != 0)
		goto out;
	if (rename(tmp, lc->path) != 0) {
		unlink(tmp);
		goto out;
	}
	lc_tidy(dir, !existed);
out:
	free(dir);
	free(tmp);
	free(buf);
}

/* Whether new locations are written to the cache's files (read either way). */
static bool lc_keep = true;

void fxt_sym_loccache_keep(bool keep)
{
	lc_keep = keep;
}

bool fxt_sym__loccache_served(const struct loc_cache *lc)
{
	return lc->ent != NULL;
}

bool fxt_sym__loccache_kept(void)
{
	char dir[PATH_MAX];

	return lc_keep && loccache_dir(dir, sizeof(dir)) != NULL;
}

void fxt_sym__loccache_close(struct loc_cache *lc, uint64_t *hits, uint64_t *made)
{
	if (!lc)
		return;
	if (hits)
		*hits += lc->hits;
	if (made)
		*made += lc->nadd;
	if (lc_keep && lc->nadd && lc->dwarf_known)
		lc_write(lc);
	if (lc->map && !lc->given)
		munmap(lc->map, lc->mapsize);
	free(lc->add);
	free(lc->dbg);
	free(lc->path);
	free(lc);
}
