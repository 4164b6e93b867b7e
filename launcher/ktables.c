/* fxt-run --kernel's tables (ktables.h): the event formats, read from
 * tracefs for the events enabled only, and the kernel's tables of the
 * tasks' names (saved_cmdlines) and tgids (saved_tgids), the whole
 * system's: 6,500 and 8,000 lines here; and the tasks of a process
 * (/proc), for the pid filter. */
#include "config.h"

#ifdef HAVE_LIBTRACECMD

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

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

static int by_tid(const void *a, const void *b)
{
	int x = ((const struct ktgid *)a)->tid, y = ((const struct ktgid *)b)->tid;

	return (x > y) - (x < y);
}

/* saved_tgids: "TID TGID" lines (in tid order, from this kernel: sorted
 * anyway, for ktables_tgid_of()'s binary search: a scan of the 8,000
 * for each of a pipeline's 1,000 threads took 140 ms). */
static void tgids_load(struct ktgids *m)
{
	char *text = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	size_t cap = 0;

	memset(m, 0, sizeof(*m));
	/* strtol(), not sscanf(): glibc's sscanf() takes the string's
	 * length first, each line the rest of the file's (30,000 lines here:
	 * 300 ms). */
	for (char *p = text; p && *p;) {
		char *end, *end2;
		long tid = strtol(p, &end, 10), tgid = strtol(end, &end2, 10);
		if (end != p && end2 != end && tgid > 0) {
			if (m->n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct ktgid *v = realloc(m->v, ncap * sizeof(*v));
				if (v == NULL)
					break;
				m->v = v;
				cap = ncap;
			}
			m->v[m->n++] = (struct ktgid){ (int)tid, (int)tgid };
		}
		char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	free(text);
	if (m->n > 1)
		qsort(m->v, m->n, sizeof(*m->v), by_tid);
}

void ktables_names(struct tep_handle *tep, struct ktgids *m)
{
	tracefs_load_cmdlines(NULL, tep);
	tgids_load(m);
}

void ktables_free(struct ktgids *m)
{
	free(m->v);
	free(m->pids);
	memset(m, 0, sizeof(*m));
}

int ktables_tgid_of(void *arg, int tid, bool *agent)
{
	const struct ktgids *m = arg;
	struct ktgid key = { tid, 0 };
	const struct ktgid *e = m->n ? bsearch(&key, m->v, m->n, sizeof(*m->v), by_tid) : NULL;

	if (e == NULL)
		return -1;
	for (size_t j = 0; j < m->npids; j++)
		if (m->pids[j] == e->tgid)
			*agent = true;
	return e->tgid;
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
