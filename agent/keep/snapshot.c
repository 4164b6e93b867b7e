/* Flight-recorder snapshots on slow calls (see snapshot.h). */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/ticks.h"
#include "agent/log.h"
#include "agent/cfg.h"
#include "agent/keep/snapshot.h"
#include "spool/format.h"
#include "spool/libc_table.h"
#include "run/names.h"
#include "run/session.h"
#include "spool/stage.h"

unsigned agent_snap_libc;

/* What set a snapshot off. */
struct trigger {
	uint64_t addr;	  /* the function; 0 for a libc call */
	unsigned libc_fn; /* the libc function's id + 1; 0 for a function */
	unsigned rule;
	uint64_t dur_ns;
	uint64_t tid;
	uint64_t end_ts;
};

/* One snapshot at a time; what follows is under the lock. */
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static bool snap_over;	    /* the run took its FXT_MAX_SNAPSHOTS */
static struct session sess; /* for the run's count of snapshots */
static bool sess_failed;
static unsigned char copy_buf[64 << 10];

/* Copies [off, off + len) of `in` to the same place in `out`. */
static int copy_range(int in, int out, uint64_t off, uint64_t len)
{
	int err;

	while (len) {
		size_t n = len < sizeof(copy_buf) ? (size_t)len : sizeof(copy_buf);
		ssize_t r = pread(in, copy_buf, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		err = spool_write_all(out, copy_buf, (uint64_t)r, off);
		if (err)
			return err;
		off += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 0;
}

/* The chunks of the live spool `in` (of `size` bytes at the start) into
 * `out`, each as it was before its copy began: a chunk whose thread
 * recycled it meanwhile (another seq) is left in the copy as an unowned
 * one (serial 0: no records).  Returns 0 and where the chunks end. */
static int copy_chunks(int in, int out, uint64_t size, uint64_t *end)
{
	struct spool_chunk c, again;
	uint64_t off = SPOOL_HEADER_SIZE;
	int err = 0;

	while (!err && off + sizeof(c) <= size) {
		if (pread(in, &c, sizeof(c), (off_t)off) != (ssize_t)sizeof(c) ||
		    !spool_chunk_ok(&c, off, size))
			break; /* being made: the spool ends here for the copy */
		err = copy_range(in, out, off, c.size);
		if (!err &&
		    (pread(in, &again, sizeof(again), (off_t)off) != (ssize_t)sizeof(again) ||
		     again.seq != c.seq || again.serial != c.serial))
			c.serial = 0;
		if (!err)
			err = spool_write_all(out, &c, sizeof(c), off);
		off += c.size;
	}
	*end = off;
	return err;
}

/* The seal at `off`: the thread table of now. */
static int write_seal(int out, uint64_t off)
{
	struct spool_seal seal;
	struct spool_seal_thread th;
	uint64_t n = 0;
	int err = 0;

	memset(&seal, 0, sizeof(seal));
	pthread_mutex_lock(&agent.lock);
	for (struct tbuf *tb = agent.threads; tb && !err; tb = tb->next) {
		agent_seal_thread(tb, &th);
		if (!th.name[0])
			agent_thread_comm(th.tid, th.name, sizeof(th.name));
		err = spool_write_all(out, &th, sizeof(th), off + sizeof(seal) + n * sizeof(th));
		n++;
	}
	pthread_mutex_unlock(&agent.lock);
	seal.magic = SPOOL_SEAL_MAGIC;
	seal.size = sizeof(seal) + n * sizeof(th);
	/* After every record copied: frames still open close here. */
	seal.now_ts = agent_ticks();
	agent_clock_start(&seal.base_ticks, &seal.base_ns);
	seal.lost = __atomic_load_n(&agent.lost, __ATOMIC_RELAXED);
	seal.nthreads = n;
	return err ? err : spool_write_all(out, &seal, sizeof(seal), off);
}

/* The header, last: the live one's, sealed, with what set it off. */
static int write_header(int in, int out, uint64_t seal_off, const struct trigger *tr, unsigned n)
{
	struct spool_header *h = (struct spool_header *)copy_buf;
	const struct fxt_snapshot_rule *rule = &agent_cfg.snap_rules[tr->rule];

	_Static_assert(sizeof(copy_buf) >= SPOOL_HEADER_SIZE, "the header fits the buffer");
	if (pread(in, copy_buf, SPOOL_HEADER_SIZE, 0) != (ssize_t)SPOOL_HEADER_SIZE)
		return -EIO;
	if (!spool_header_ok(h))
		return -EBADMSG;
	h->state = SPOOL_SEALED;
	h->seal_off = seal_off;
	h->owner = SPOOL_OWNER_NONE;
	h->first_staged = 0;
	h->snapshot = n;
	h->snap_libc_fn = tr->libc_fn;
	h->snap_addr = tr->addr;
	h->snap_tid = tr->tid;
	h->snap_end_ts = tr->end_ts;
	h->snap_dur_ns = tr->dur_ns;
	h->snap_limit_ns = rule->limit_ns;
	run_snapshot_rule_format(rule, h->snap_rule, sizeof(h->snap_rule));
	return spool_write_all(out, copy_buf, SPOOL_HEADER_SIZE, 0);
}

/* Snapshot n: the spool copied into OUT.snapN.spool (through a ".part"
 * name fxt-run does not look at). */
static int copy_spool(const struct trigger *tr, unsigned n)
{
	char path[PATH_MAX + 64], part[PATH_MAX + 80];
	uint64_t end = 0;
	struct stat sb;
	uint64_t t0 = agent_mono_ns();
	int in, out, err;

	run_snapshot_name(path, sizeof(path), agent_cfg.output, n, true);
	agent_fmt(part, sizeof(part), "%s.part", path);
	in = open(agent.spool.path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	unlink(part);
	out = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	err = fstat(in, &sb) != 0 ? -errno : 0;
	if (!err)
		err = copy_chunks(in, out, (uint64_t)sb.st_size, &end);
	if (!err)
		err = write_seal(out, end);
	if (!err)
		err = write_header(in, out, end, tr, n);
	close(in);
	if (close(out) != 0 && !err)
		err = -errno;
	if (!err && rename(part, path) != 0)
		err = -errno;
	if (err)
		unlink(part);
	else
		agent_dbg("snapshot %u: %s (%llu bytes) in %llu us", n, path,
			  (unsigned long long)end,
			  (unsigned long long)((agent_mono_ns() - t0) / 1000));
	return err;
}

/* The run's next snapshot number, 0 when the run has taken them all (or
 * its session cannot be had). */
static unsigned next_number(void)
{
	char path[PATH_MAX + 64];
	unsigned n;

	if (!sess.hdr && !sess_failed) {
		run_session_path(path, sizeof(path), agent_cfg.output, agent_cfg.root_pid);
		sess_failed = run_session_map(&sess, path) != 0;
		if (sess_failed)
			agent_dbg("snapshots: no session %s; none taken", path);
	}
	if (!sess.hdr)
		return 0;
	n = __atomic_add_fetch(&sess.hdr->snapshots, 1, __ATOMIC_SEQ_CST);
	return n <= agent_cfg.max_snapshots ? n : 0;
}

static void take(struct tstate *t, const struct trigger *tr)
{
	unsigned n;
	int err;

	if (__atomic_load_n(&snap_over, __ATOMIC_RELAXED) || pthread_mutex_trylock(&snap_lock) != 0)
		return;
	t->busy++; /* nothing of ours is recorded meanwhile */
	n = next_number();
	if (!n) {
		__atomic_store_n(&snap_over, true, __ATOMIC_RELAXED);
	} else {
		err = copy_spool(tr, n);
		if (err)
			agent_dbg("snapshot %u: not taken: %s", n, strerror(-err));
	}
	agent_busy_leave(t);
	pthread_mutex_unlock(&snap_lock);
}

static uint64_t tid_of(const struct tstate *t)
{
	return t->tb ? t->tb->tid : (uint64_t)gettid();
}

void agent_snapshot_fn(struct tstate *t, uint64_t fn, unsigned rule, uint64_t dur_ns)
{
	struct trigger tr = { fn, 0, rule, dur_ns, tid_of(t), agent_ticks() };

	take(t, &tr);
}

/* The group of libc function `fn` when a rule watches it, else 0. */
static unsigned watched_group(unsigned fn)
{
	const struct agent_fn_info *info = agent_fn_lookup(fn);

	return info ? info->group & agent_snap_libc : 0;
}

void agent_snapshot_libc_begin(struct tstate *t, unsigned fn)
{
	t->w_libc_t0 = watched_group(fn) ? agent_mono_ns() : 0;
}

void agent_snapshot_libc_end(struct tstate *t, unsigned fn)
{
	unsigned group = t->w_libc_t0 ? watched_group(fn) : 0;
	uint64_t dur_ns = group ? agent_mono_ns() - t->w_libc_t0 : 0;

	t->w_libc_t0 = 0;
	for (unsigned i = 0; group && i < agent_cfg.nsnap_rules; i++) {
		const struct fxt_snapshot_rule *r = &agent_cfg.snap_rules[i];

		if ((r->libc_group & group) && dur_ns > r->limit_ns) {
			struct trigger tr = { 0, fn + 1, i, dur_ns, tid_of(t), agent_ticks() };

			take(t, &tr);
			return;
		}
	}
}

/* Whether this process may convert the snapshot spool at `path`: one of
 * its own, sealed, that nobody took; takes it. */
static bool claim_own(const char *path)
{
	struct spool_header *h;
	bool mine = false;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return false;
	if (spool_header_ok(h) && h->snapshot && h->pid == (uint64_t)agent.pid &&
	    h->state == SPOOL_SEALED)
		mine = spool_claim(h, SPOOL_OWNER_NONE, SPOOL_OWNER_SELF);
	munmap(h, 4096);
	return mine;
}

void agent_snapshot_convert_own(agent_snapshot_convert_fn *convert, const char *session)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], archive[PATH_MAX + 64];
	const char *slash = strrchr(agent_cfg.output, '/');
	struct dirent *de;
	unsigned n;
	DIR *d;
	int err;

	if (!agent_cfg.nsnap_rules || !slash)
		return;
	if ((size_t)(slash - agent_cfg.output) >= sizeof(dir))
		return;
	memcpy(dir, agent_cfg.output, (size_t)(slash - agent_cfg.output));
	dir[slash - agent_cfg.output] = '\0';
	d = opendir(dir[0] ? dir : "/");
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!run_snapshot_spool_parse(agent_cfg.output, de->d_name, &n))
			continue;
		agent_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!claim_own(path))
			continue;
		run_snapshot_name(archive, sizeof(archive), agent_cfg.output, n, false);
		err = convert ? convert(path, archive, session) : -ENOSYS;
		if (err < 0)
			agent_err("snapshot %u: writing %s failed: %s; its records are in %s", n,
				  archive, strerror(-err), path);
		else
			unlink(path);
	}
	closedir(d);
}
