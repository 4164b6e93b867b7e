/* Recovery of a dead process's spool (see recover.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "agent/flush.h"
#include "agent/session.h"
#include "agent/spool.h"
#include "launcher/recover.h"
#include "symbolizer/symbolizer.h"

/* Reads and checks the fixed part of the header and the module list. */
static int read_header(int fd, struct spool_header **out)
{
	struct spool_header *h = malloc(SPOOL_HEADER_SIZE);
	ssize_t got;

	if (!h)
		return -ENOMEM;
	got = pread(fd, h, SPOOL_HEADER_SIZE, 0);
	if (got < 0) {
		int err = -errno;
		free(h);
		return err;
	}
	if ((size_t)got < SPOOL_HEADER_SIZE || h->magic != SPOOL_MAGIC ||
	    h->version != SPOOL_VERSION || h->header_size != SPOOL_HEADER_SIZE ||
	    h->nmodules > SPOOL_MAX_MODULES) {
		free(h);
		return -EBADMSG;
	}
	h->program[sizeof(h->program) - 1] = '\0';
	for (uint32_t i = 0; i < h->nmodules; i++)
		h->modules[i].path[SPOOL_MODULE_PATH - 1] = '\0';
	*out = h;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rate(uint64_t ticks, uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / ns);
}

/* Ticks per second of the dead process's clock. */
static uint64_t ticks_per_second(const struct spool_header *h)
{
	if (!h->clock_tsc)
		return 1000000000u;
#if defined(__x86_64__)
	{
		/* The process ran on this machine, whose TSC is invariant
		 * (the agent only uses it then): now is the calibration
		 * point farthest from the start, so the most precise. */
		uint64_t t = __rdtsc(), ns = mono_ns();
		if (ns > h->start_ns + 1000000u && t > h->start_ticks)
			return rate(t - h->start_ticks, ns - h->start_ns);
	}
#endif
	if (h->last_ns > h->start_ns && h->last_ticks > h->start_ticks)
		return rate(h->last_ticks - h->start_ticks, h->last_ns - h->start_ns);
	return 1000000000u;
}

long recover_spool_pid(const char *spool_path)
{
	struct spool_header *h;
	long pid;
	int fd = open(spool_path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	err = read_header(fd, &h);
	close(fd);
	if (err < 0)
		return err;
	pid = (long)h->pid;
	free(h);
	return pid;
}

int recover_spool(const char *spool_path, const char *archive_path, int no_clobber,
		  const char *session, struct recover_result *res)
{
	struct session_write *writes = NULL;
	size_t nwrites = 0;
	struct spool_header *h = NULL;
	struct fxt_sym *sym = NULL;
	struct fxt_writer *w = NULL;
	struct flush_input in;
	struct flush_stats st;
	struct stat sb;
	int fd, err;

	memset(res, 0, sizeof(*res));
	fd = open(spool_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) != 0) {
		err = -errno;
		goto out_fd;
	}
	err = read_header(fd, &h);
	if (err < 0)
		goto out_fd;

	sym = fxt_sym_new(0);
	if (!sym) {
		err = -ENOMEM;
		goto out_header;
	}
	/* The main program first, as the process listed it; a module
	 * refused for overlapping an earlier one is no error. */
	for (uint32_t i = 0; i < h->nmodules; i++)
		fxt_sym_add_module(sym, h->modules[i].path, h->modules[i].bias);

	memset(&in, 0, sizeof(in));
	in.pid = h->pid;
	in.process_name = h->program;
	in.ticks_per_second = ticks_per_second(h);
	in.base_ticks = h->start_ticks;
	in.base_ns = h->start_ns;
	in.now_ts = 0; /* open frames close after their thread's last record */
	in.spool_fd = fd;
	in.spool_end = (uint64_t)sb.st_size;
	in.sym = sym;
	in.libc_groups = h->libc_groups;
	in.sample_hz = h->sample_hz;
	/* No session (none given, or nothing was piped): no pipe flows. */
	if (session && session_load_writes(session, &writes, &nwrites) == 0) {
		in.pipe_writes = writes;
		in.npipe_writes = nwrites;
	}

	err = fxt_writer_open_path(&w, archive_path, no_clobber ? FXT_WRITER_NO_CLOBBER : 0);
	if (err < 0)
		goto out_sym;
	err = agent_flush_archive(w, &in, &st);
	{
		int cerr = fxt_writer_close(w);
		if (!err)
			err = cerr;
	}
	if (err < 0) {
		unlink(archive_path); /* no half archive */
		goto out_sym;
	}
	res->pid = h->pid;
	res->events = st.events;
	res->threads = st.threads;
	res->records = st.records;
out_sym:
	free(writes);
	fxt_sym_free(sym);
out_header:
	free(h);
out_fd:
	close(fd);
	return err;
}
