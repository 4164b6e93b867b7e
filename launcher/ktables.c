/* fxt-run --kernel's tables (ktables.h): the event formats, read from
 * tracefs for the events enabled only; the tasks' names, from the
 * scheduler's events' comm fields (else the kernel's saved_cmdlines, the
 * whole system's: 6,500 lines here); their tgids (task:task_newtask's
 * clone flags, /proc at the start and at the end; else saved_tgids, the
 * whole system's: 8,000-31,000 lines); and the tasks of a process
 * (/proc), for the pid filter. */
#include "config.h"

#ifdef HAVE_LIBTRACECMD

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "common/addrtab.h"
#include "launcher/kpages.h"
#include "launcher/ktables.h"
#include "launcher/launcher.h"

/* The events enabled ("*": the system's every event): only their formats
 * are read (tracefs_local_events() reads all of them and
 * /proc/kallsyms: 0.7 s here; a system's every event, 30 of sched's, the
 * most of what the end took with a short run). */
#define MAX_ENABLED 32
static struct {
	char sys[64], ev[64];
} enabled[MAX_ENABLED];
static size_t nenabled;

void ktables_want(const char *sys, const char *ev)
{
	if (nenabled < MAX_ENABLED) {
		snprintf(enabled[nenabled].sys, sizeof(enabled[nenabled].sys), "%s", sys);
		snprintf(enabled[nenabled].ev, sizeof(enabled[nenabled].ev), "%s", ev);
		nenabled++;
	}
}

/* Parses the format of event sys:ev into tep. */
static void parse_format(struct tep_handle *tep, const char *sys, const char *ev)
{
	int size;
	char *buf = tracefs_event_file_read(NULL, sys, ev, "format", &size);

	if (buf != NULL)
		tep_parse_event(tep, buf, (unsigned long)size, sys);
	free(buf);
}

struct tep_handle *ktables_formats(void)
{
	struct tep_handle *tep = tep_alloc();
	char *buf;
	int size;

	if (tep == NULL)
		return NULL;
	tep_set_file_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, (int)sizeof(long));
	tep_set_page_size(tep, (int)sysconf(_SC_PAGESIZE));
	buf = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (buf == NULL ||
	    tep_parse_header_page(tep, buf, (unsigned long)size, sizeof(long)) != 0) {
		free(buf);
		tep_free(tep);
		return NULL;
	}
	free(buf);
	for (size_t i = 0; i < nenabled; i++) {
		if (strcmp(enabled[i].ev, "*") != 0) {
			parse_format(tep, enabled[i].sys, enabled[i].ev);
			continue;
		}
		char **evs = tracefs_system_events(NULL, enabled[i].sys);
		for (size_t j = 0; evs && evs[j]; j++)
			parse_format(tep, enabled[i].sys, evs[j]);
		tracefs_list_free(evs);
	}
	return tep;
}

/* (tid, tgid) appended to *v (*n of cap): 0, or -ENOMEM. */
static int put_tgid(struct ktgid **v, size_t *n, size_t *cap, long tid, long tgid)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct ktgid *nv = realloc(*v, ncap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct ktgid){ (int)tid, (int)tgid };
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	int x = ((const struct ktgid *)a)->tid, y = ((const struct ktgid *)b)->tid;

	return (x > y) - (x < y);
}

/* saved_tgids: "TID TGID" lines (in tid order, from this kernel: sorted
 * anyway, for ktables_tgid_of()'s binary search: a scan of the 8,000
 * for each of a pipeline's 1,000 threads took 140 ms). */
void ktables_tgids(struct ktgids *m)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	size_t cap = 0;

	free(m->v);
	m->v = NULL;
	m->n = 0;
	/* strtol(), not sscanf(): glibc's sscanf() takes the string's
	 * length first, each line the rest of the file's (30,000 lines here:
	 * 300 ms). */
	for (char *p = text; p && *p;) {
		char *end, *end2;
		long tid = strtol(p, &end, 10), tgid = strtol(end, &end2, 10);
		if (end != p && end2 != end && tgid > 0 &&
		    put_tgid(&m->v, &m->n, &cap, tid, tgid) < 0)
			break;
		char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	free(text);
	if (m->n > 1)
		qsort(m->v, m->n, sizeof(*m->v), by_tid);
}

/* The tgid of tid in the sorted v[n], -1 if not there. */
static int find_tgid(const struct ktgid *v, size_t n, int tid)
{
	struct ktgid key = { tid, 0 };
	const struct ktgid *e = n ? bsearch(&key, v, n, sizeof(*v), by_tid) : NULL;

	return e ? e->tgid : -1;
}

/* Task tid's tgid from /proc/TID/status (a thread's own folder is there,
 * though not listed), -1 if it is gone, or if it started after `before`
 * (clock ticks since boot, as /proc/TID/stat's start time; 0: any): a
 * task of that tid made since, not the one the events saw. */
static int proc_tgid(int tid, uint64_t before)
{
	char path[64], line[512];
	int tgid = -1;
	FILE *f;

	if (before) {
		snprintf(path, sizeof(path), "/proc/%d/stat", tid);
		f = fopen(path, "re");
		if (f == NULL)
			return -1;
		char *p = fgets(line, sizeof(line), f);
		fclose(f);
		p = p ? strrchr(line, ')') : NULL; /* the name may hold anything */
		/* state, then fields 4 to 22 (the start time) */
		for (int i = 0; p && i < 20; i++)
			p = strchr(p + 1, ' ');
		if (p == NULL || strtoull(p + 1, NULL, 10) > before)
			return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tgid = (int)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(f);
	return tgid > 0 ? tgid : -1;
}

void ktables_start(struct ktgids *m)
{
	DIR *procs = opendir("/proc");
	struct dirent *e;
	size_t cap = 0;

	if (procs == NULL)
		return;
	while ((e = readdir(procs)) != NULL) {
		char dir[64], *end;
		long pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || *end != '\0')
			continue;
		snprintf(dir, sizeof(dir), "/proc/%ld/task", pid);
		DIR *tasks = opendir(dir);
		if (tasks == NULL)
			continue; /* gone meanwhile */
		struct dirent *t;
		while ((t = readdir(tasks)) != NULL) {
			long tid = strtol(t->d_name, &end, 10);
			if (tid > 0 && *end == '\0' &&
			    put_tgid(&m->start, &m->nstart, &cap, tid, pid) < 0)
				break;
		}
		closedir(tasks);
	}
	closedir(procs);
	if (m->nstart > 1)
		qsort(m->start, m->nstart, sizeof(*m->start), by_tid);
}

/* Every task created while recording, the whole system's, from perf's
 * task events (PERF_RECORD_FORK: the new task's pid and tid, its time):
 * a dummy event on each CPU (no sample, no tracepoint: nothing to wait
 * for at its start or end), its ring buffer of FORKS_PAGES pages read
 * while the program runs by a thread of its own (forks_main()), every
 * FORKS_READ_MS and when a CPU's buffer is a quarter full (perf's
 * watermark), into `forks_tab`, and once more at the end: a run that
 * creates more tasks than the buffer holds loses none while the thread
 * keeps up (read only at the end, the buffer held some 8,000 tasks a CPU,
 * and a run past that fell back to saved_tgids, which may be stale).
 * Those of other processes that ended meanwhile are in no table of the
 * kernel's but saved_tgids. */
#define FORKS_PAGES    128 /* 512 KiB a CPU: some 8,000 tasks (a fork and an exit each) */
#define FORKS_MAX_CPUS 256
#define FORKS_READ_MS  100
static struct {
	int fd;
	void *base;
} forks[FORKS_MAX_CPUS];
static int nforks;
static size_t forks_map;
/* The reader thread, whether it runs, its stop (an eventfd, and a flag
 * it sees within FORKS_READ_MS); what it read (struct kfork by tid) and
 * whether perf lost some. */
static pthread_t forks_reader;
static bool forks_reader_on, forks_quit;
static int forks_stop = -1;
static struct addrtab forks_tab;
static bool forks_tab_lost;

int ktables_forks_open(void)
{
	struct perf_event_attr attr;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long page = sysconf(_SC_PAGESIZE);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.task = 1;
	attr.exclude_kernel = 1;
	/* poll() says POLLIN once a quarter of the buffer is written */
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(FORKS_PAGES / 4 * page);
	forks_map = (size_t)(FORKS_PAGES + 1) * (size_t)page;
	for (long c = 0; c < ncpu && c < FORKS_MAX_CPUS; c++) {
		int fd =
		    (int)syscall(SYS_perf_event_open, &attr, -1, (int)c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue; /* a CPU offline */
			int err = -errno;
			ktables_forks_close();
			return err;
		}
		void *base = mmap(NULL, forks_map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED) {
			int err = -errno;
			close(fd);
			ktables_forks_close();
			return err;
		}
		forks[nforks].fd = fd;
		forks[nforks].base = base;
		nforks++;
	}
	return nforks > 0 ? 0 : -ENODEV;
}

/* The reader stopped (nothing when it does not run). */
static void forks_reader_stop(void)
{
	if (forks_reader_on) {
		uint64_t one = 1;
		__atomic_store_n(&forks_quit, true, __ATOMIC_RELEASE);
		if (write(forks_stop, &one, sizeof(one)) < 0) {
			/* (seen at the next period) */
		}
		pthread_join(forks_reader, NULL);
		forks_reader_on = false;
	}
	if (forks_stop >= 0) {
		close(forks_stop);
		forks_stop = -1;
	}
}

void ktables_forks_close(void)
{
	forks_reader_stop();
	for (int i = 0; i < nforks; i++) {
		munmap(forks[i].base, forks_map);
		close(forks[i].fd);
	}
	nforks = 0;
	if (forks_tab.elem)
		addrtab_free(&forks_tab);
	forks_tab = (struct addrtab){ 0 };
	forks_tab_lost = false;
}

/* A task's tgid from perf's records, the latest of its tid. */
struct kfork {
	uint64_t key; /* tid + 1 */
	uint64_t time;
	int tgid;
};

/* Each CPU's records so far into forks_tab (the reader's, or the end's
 * once it is stopped).  0 or -ENOMEM. */
static int forks_take(void)
{
	struct rec {
		struct perf_event_header h;
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	};
	long page = sysconf(_SC_PAGESIZE);

	if (forks_tab.elem == 0)
		forks_tab = ADDRTAB_INIT(struct kfork);
	for (int i = 0; i < nforks; i++) {
		struct perf_event_mmap_page *meta = forks[i].base;
		const unsigned char *data = (const unsigned char *)forks[i].base + page;
		uint64_t size = (uint64_t)FORKS_PAGES * (uint64_t)page;
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;

		/* Full: perf drops what does not fit, and says so (a
		 * PERF_RECORD_LOST) only once it has room again, which the
		 * end's read would not see. */
		if (head - tail + 2 * sizeof(struct rec) > size)
			forks_tab_lost = true;
		while (tail + sizeof(struct perf_event_header) <= head) {
			unsigned char buf[sizeof(struct rec)];
			struct perf_event_header h;
			for (size_t k = 0; k < sizeof(h); k++)
				((unsigned char *)&h)[k] = data[(tail + k) % size];
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			if (h.type == PERF_RECORD_LOST)
				forks_tab_lost = true;
			if (h.type == PERF_RECORD_FORK && h.size >= sizeof(struct rec)) {
				for (size_t k = 0; k < sizeof(buf); k++)
					buf[k] = data[(tail + k) % size];
				struct rec r;
				memcpy(&r, buf, sizeof(r));
				struct kfork *f =
				    addrtab_get(&forks_tab, (uint64_t)r.tid + 1, NULL);
				if (f == NULL) {
					__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
					return -ENOMEM;
				}
				if (f->time == 0 || r.time >= f->time) {
					f->time = r.time ? r.time : 1;
					f->tgid = (int)r.pid;
				}
			}
			tail += h.size;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	return 0;
}

/* The reader: each CPU's records into forks_tab every FORKS_READ_MS and
 * when a buffer is a quarter full, until forks_reader_stop(). */
static void *forks_main(void *arg)
{
	struct pollfd pf[FORKS_MAX_CPUS + 1];

	(void)arg;
	pf[0] = (struct pollfd){ .fd = forks_stop, .events = POLLIN };
	for (int i = 0; i < nforks; i++)
		pf[i + 1] = (struct pollfd){ .fd = forks[i].fd, .events = POLLIN };
	for (;;) {
		if (forks_take() < 0)
			forks_tab_lost = true; /* (out of memory: saved_tgids then) */
		if (poll(pf, (nfds_t)nforks + 1, FORKS_READ_MS) < 0 && errno != EINTR)
			break;
		if (pf[0].revents || __atomic_load_n(&forks_quit, __ATOMIC_ACQUIRE))
			break;
	}
	return NULL;
}

void ktables_forks_start(void)
{
	if (nforks == 0 || forks_reader_on)
		return;
	if (forks_stop < 0)
		forks_stop = eventfd(0, EFD_CLOEXEC);
	forks_quit = false;
	if (forks_stop >= 0)
		forks_reader_on = kthread_start(&forks_reader, forks_main, NULL);
}

int ktables_forks_read(struct ktgids *m)
{
	if (nforks == 0)
		return -ENODEV;
	forks_reader_stop();
	if (forks_take() < 0)
		forks_tab_lost = true;
	if (m->forked.elem)
		addrtab_free(&m->forked);
	m->forked = forks_tab;
	m->forks_lost = m->forks_lost || forks_tab_lost;
	forks_tab = (struct addrtab){ 0 };
	return 0;
}

/* The tgid of tid while the pages are read in time order: a task created
 * since the start is in m->born, one from before in m->start, else (its
 * creation before recording, its table read after) /proc. */
static int tgid_now(const struct ktgids *m, int tid)
{
	const struct kborn *b = m->born.elem ? addrtab_find(&m->born, (uint64_t)tid + 1) : NULL;
	int tgid;

	if (b != NULL)
		return b->tgid;
	tgid = find_tgid(m->start, m->nstart, tid);
	return tgid > 0 ? tgid : proc_tgid(tid, m->end_ticks);
}

/* A task's last name in the events. */
struct comm {
	uint64_t key; /* tid + 1 (addrtab.h) */
	char name[16];
};

/* The comm fields of the events read, each with its pid field: (field
 * of the name, field of the tid) pairs by event, found once each. */
#define COMM_EVENTS 64
struct comm_pass {
	struct tep_handle *tep;
	struct addrtab names; /* struct comm */
	/* task:task_newtask (id -1: not recorded): the tgids into m->born */
	int newtask;
	struct tep_format_field *child, *flags;
	struct ktgids *m;
	struct {
		int id;
		struct tep_event *ev;
		struct tep_format_field *f[4]; /* name, tid, name, tid */
	} ev[COMM_EVENTS];
	int nev;
};

static void comm_put(struct comm_pass *p, struct tep_event *ev, struct tep_format_field *name,
		     struct tep_format_field *pid, struct tep_record *rec)
{
	unsigned long long tid = 0;
	int len = 0;
	char *s;

	if (name == NULL || pid == NULL || tep_read_number_field(pid, rec->data, &tid) != 0 ||
	    (int)tid <= 0)
		return;
	s = tep_get_field_raw(NULL, ev, name->name, rec, &len, 0);
	if (s == NULL || len <= 0)
		return;
	struct comm *c = addrtab_get(&p->names, (uint64_t)(int)tid + 1, NULL);
	if (c == NULL)
		return;
	size_t n = strnlen(s, (size_t)len < sizeof(c->name) ? (size_t)len : sizeof(c->name) - 1);
	memcpy(c->name, s, n);
	c->name[n] = '\0';
}

/* The tgid of a task no task:task_newtask event gave: one that runs
 * now (/proc: the latest task of that tid, as saved_tgids would say, but
 * not one started since recording ended), else one from the start; -1
 * (each its own process) for one created and ended while recording by
 * another process. */
static int resolve(struct ktgids *m, int tid)
{
	const struct kfork *f = m->forked.elem ? addrtab_find(&m->forked, (uint64_t)tid + 1) : NULL;

	if (f != NULL && f->tgid > 0) {
		m->from_forks++;
		return f->tgid;
	}
	int tgid = proc_tgid(tid, m->end_ticks);

	if (tgid > 0) {
		m->from_proc++;
		return tgid;
	}
	tgid = find_tgid(m->start, m->nstart, tid);
	if (tgid > 0)
		m->from_start++;
	else
		m->unknown++;
	return tgid > 0 ? tgid : -1;
}

/* A task created (task:task_newtask, in its creator's context): a
 * thread (CLONE_THREAD) of its creator's process, else a process. */
static void born(struct comm_pass *p, struct tep_record *rec)
{
	unsigned long long child = 0, flags = 0;
	int parent = tep_data_pid(p->tep, rec);

	if (tep_read_number_field(p->child, rec->data, &child) != 0 || (int)child <= 0 ||
	    tep_read_number_field(p->flags, rec->data, &flags) != 0)
		return;
	int tgid = (int)child;
	if (flags & CLONE_THREAD) {
		tgid = tgid_now(p->m, parent);
		if (tgid <= 0)
			return; /* left to the end's /proc */
	}
	bool added = false;
	struct kborn *b = addrtab_get(&p->m->born, child + 1, &added);
	if (b != NULL)
		b->tgid = tgid;
	p->m->created += added;
}

static int comm_record(void *arg, struct tep_record *rec)
{
	struct comm_pass *p = arg;
	int id = tep_data_type(p->tep, rec), i = 0;

	if (id == p->newtask) {
		born(p, rec);
		return 0; /* it names no task: the parent's name, copied */
	}
	while (i < p->nev && p->ev[i].id != id)
		i++;
	if (i == p->nev) {
		struct tep_event *ev = tep_find_event(p->tep, id);
		if (ev == NULL || p->nev == COMM_EVENTS)
			return 0;
		p->ev[i].id = id;
		p->ev[i].ev = ev;
		p->ev[i].f[0] = tep_find_field(ev, "prev_comm");
		p->ev[i].f[1] = tep_find_field(ev, "prev_pid");
		p->ev[i].f[2] = tep_find_field(ev, "next_comm");
		p->ev[i].f[3] = tep_find_field(ev, "next_pid");
		if (p->ev[i].f[0] == NULL) {
			/* the wake-ups' and exit's comm and pid; fork's child */
			p->ev[i].f[0] = tep_find_field(ev, "comm");
			p->ev[i].f[1] = tep_find_field(ev, "pid");
			if (p->ev[i].f[0] == NULL) {
				p->ev[i].f[0] = tep_find_field(ev, "child_comm");
				p->ev[i].f[1] = tep_find_field(ev, "child_pid");
			}
		}
		p->nev++;
	}
	/* The task of the event, named or not by a comm field. */
	int tid = tep_data_pid(p->tep, rec);
	if (tid > 0)
		addrtab_get(&p->names, (uint64_t)tid + 1, NULL);
	comm_put(p, p->ev[i].ev, p->ev[i].f[0], p->ev[i].f[1], rec);
	comm_put(p, p->ev[i].ev, p->ev[i].f[2], p->ev[i].f[3], rec);
	return 0;
}

/* The name of task `tid` if it still runs (/proc/TID/comm), else "". */
static void proc_comm(int tid, char *name, size_t cap)
{
	char path[64];
	FILE *f;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(name, (int)cap, f) == NULL)
		name[0] = '\0';
	name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

void ktables_names(struct tep_handle *tep, struct ktgids *m)
{
	/* saved_cmdlines (the whole system's, 6,500 lines: 20-80 ms while
	 * the archives are converted) only without the scheduler's events,
	 * whose comm fields name every task that ran, each as it was in the
	 * run (saved_cmdlines is a cache of the system's latest: a name
	 * evicted is "<...>", a pid since reused by another task names that
	 * one).  A task the events name nowhere (a waker of another process,
	 * say) is named from /proc while it runs. */
	if (tep_find_event_by_name(tep, "sched", "sched_switch") == NULL) {
		tracefs_load_cmdlines(NULL, tep);
	} else {
		struct comm_pass p = { .tep = tep, .names = ADDRTAB_INIT(struct comm), .m = m };
		struct tep_event *nt = tep_find_event_by_name(tep, "task", "task_newtask");
		p.newtask = nt ? nt->id : -1;
		p.child = nt ? tep_find_field(nt, "pid") : NULL;
		p.flags = nt ? tep_find_field(nt, "clone_flags") : NULL;
		if (p.child == NULL || p.flags == NULL)
			p.newtask = -1;
		if (m->born.elem == 0)
			m->born = ADDRTAB_INIT(struct kborn);
		kpages_each(tep, comm_record, &p);
		for (size_t i = 0; i < p.names.cap; i++) {
			struct comm *c = addrtab_slot(&p.names, i);
			if (c && !c->name[0])
				proc_comm((int)(c->key - 1), c->name, sizeof(c->name));
			if (c && c->name[0])
				tep_register_comm(tep, c->name, (int)(c->key - 1));
		}
		/* Every other task's tgid now, in this thread (the events'
		 * writer, which waits for the parts, then only looks them up):
		 * /proc at the end for each (2 reads: 10-100 us each here). */
		for (size_t i = 0; !m->saved && i < p.names.cap; i++) {
			struct comm *c = addrtab_slot(&p.names, i);
			if (c == NULL || addrtab_find(&m->born, c->key) != NULL)
				continue;
			int tgid = resolve(m, (int)(c->key - 1));
			struct kborn *b = addrtab_get(&m->born, c->key, NULL);
			if (b != NULL)
				b->tgid = tgid;
		}
		addrtab_free(&p.names);
	}
}

void ktables_free(struct ktgids *m)
{
	free(m->v);
	free(m->start);
	if (m->born.elem)
		addrtab_free(&m->born);
	if (m->forked.elem)
		addrtab_free(&m->forked);
	free(m->pids);
	memset(m, 0, sizeof(*m));
}

void ktables_move(struct ktgids *to, struct ktgids *from)
{
	long *pids = to->pids;
	size_t npids = to->npids;

	*to = *from;
	to->pids = pids;
	to->npids = npids;
	free(from->pids);
	memset(from, 0, sizeof(*from));
}

int ktables_tgid_of(void *arg, int tid, bool *agent)
{
	struct ktgids *m = arg;
	int tgid;

	if (m->saved) {
		tgid = find_tgid(m->v, m->n, tid);
	} else {
		/* A task of the events: its tgid found (ktables_names());
		 * another (none here), found now. */
		const struct kborn *b =
		    m->born.elem ? addrtab_find(&m->born, (uint64_t)tid + 1) : NULL;
		tgid = b ? b->tgid : resolve(m, tid);
	}
	if (tgid <= 0)
		return -1;
	for (size_t j = 0; j < m->npids; j++)
		if (m->pids[j] == tgid)
			*agent = true;
	return tgid;
}

/* The tasks of process `pid` (/proc/PID/task) not in `have` yet, appended
 * to it as " TID" each (all of them: pid itself when the folder cannot be
 * read).  The number added. */
int ktables_tasks(pid_t pid, char *have, size_t cap)
{
	char dir[64], tid[sizeof(((struct dirent *)0)->d_name) + 2];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
	d = opendir(dir);
	if (d == NULL) {
		snprintf(tid, sizeof(tid), " %ld ", (long)pid);
		if (strstr(have, tid) == NULL && strlen(have) + strlen(tid) < cap) {
			strcat(have, tid + 1);
			strcat(have, " ");
			n++;
		}
		return n;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(tid, sizeof(tid), " %s ", e->d_name);
		if (strstr(have, tid) != NULL || strlen(have) + strlen(tid) >= cap)
			continue;
		strcat(have, tid + 1);
		strcat(have, " ");
		n++;
	}
	closedir(d);
	return n;
}

#endif /* HAVE_LIBTRACECMD */
