/* Converting a test spool (spool_test_writer.h) and reading its archive
 * back, for the conversion's unit tests (test_convert_pipeline.c: hook
 * records, test_convert_tagged.c: tagged records): conv_to() runs the
 * pipeline (convert/pipeline.h) with a conv_opts, reads the archive with
 * the reader into a struct archive and checks that the conversion counted
 * what the reader counts; the rest finds events and checks them.  Private
 * to those tests: include it once per program (it defines the functions
 * the symbolizer names). */
#ifndef FXT_TESTS_CONVERT_TEST_ARCHIVE_H
#define FXT_TESTS_CONVERT_TEST_ARCHIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/pipeline.h"
#include "spool/records.h"
#include "tests/lib/tap.h"
#include "tests/unit/agent_test_nest.h"
#include "tests/unit/spool_test_writer.h"

#define EXIT SPOOL_EXIT_BIT

/* Real functions, so that the symbolizer names them. */
__attribute__((noinline)) void agent_test_alpha(void);
__attribute__((noinline)) void agent_test_beta(void);
__attribute__((noinline)) void agent_test_gamma(void);
void agent_test_alpha(void)
{
	__asm__ volatile("");
}
void agent_test_beta(void)
{
	__asm__ volatile("");
}
void agent_test_gamma(void)
{
	__asm__ volatile("");
}

/* Functions with a body of some bytes, for pcs inside them (samples). */
__attribute__((noinline)) int agent_test_work(int n);
__attribute__((noinline)) int agent_test_outer(int n);
int agent_test_work(int n)
{
	volatile int x = 0;

	for (int i = 0; i < n; i++)
		x += i;
	return x;
}
int agent_test_outer(int n)
{
	return agent_test_work(n) + agent_test_work(n + 1);
}

#define A ((uint64_t)(uintptr_t)agent_test_alpha)
#define B ((uint64_t)(uintptr_t)agent_test_beta)
#define C ((uint64_t)(uintptr_t)agent_test_gamma)

struct arg {
	char name[32];
	int type;
	int64_t i;
	uint64_t u;
	char s[256];
};

struct ev {
	uint64_t tid, ts, end;
	int type;
	char name[256], cat[64];
	unsigned nargs;
	struct arg args[8];
};

struct logrec {
	uint64_t tid, ts;
	char msg[256];
};

struct archive {
	struct ev *ev;
	size_t nev;
	uint64_t tps;
	int magic_first, provider_id_ok, buffer_full;
	unsigned kobj_process, kobj_thread;
	char process_name[64];
	struct {
		uint64_t koid;
		char name[64];
	} threads[8]; /* the first thread kernel objects */
	struct logrec logs[16];
	size_t nlogs;
	int errors;
	struct fxt__counts counts; /* as fxt-dump --stats counts them */
};

static inline void diag_cb(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	struct archive *a = ctx;

	if (level == FXT_DIAG_ERROR) {
		a->errors++;
		diag("reader error at %llu: %s", (unsigned long long)off, msg);
	}
}

static inline void copy(char *dst, size_t cap, struct fxt_string s)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;

	memcpy(dst, s.data, n);
	dst[n] = '\0';
}

static inline int read_archive(const void *data, size_t len, struct archive *a, uint64_t pid)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	size_t cap = 0;
	int first = 1, ret;

	memset(a, 0, sizeof(*a));
	if (fxt_reader_open_mem(&r, data, len, FXT_READER_VALIDATE) < 0)
		return -1;
	fxt_reader_set_diag(r, diag_cb, a);
	while ((ret = fxt_reader_next(r, &rec)) > 0) {
		if (fxt__counts_record(&a->counts, &rec) < 0)
			abort();
		if (first)
			a->magic_first = rec.type == FXT_RECORD_METADATA &&
					 rec.u.meta.type == FXT_METADATA_TRACE_INFO;
		first = 0;
		if (rec.type == FXT_RECORD_METADATA &&
		    rec.u.meta.type == FXT_METADATA_PROVIDER_INFO)
			a->provider_id_ok = rec.u.meta.provider_id == (uint32_t)pid;
		if (rec.type == FXT_RECORD_METADATA &&
		    rec.u.meta.type == FXT_METADATA_PROVIDER_EVENT &&
		    rec.u.meta.event == FXT_PROVIDER_EVENT_BUFFER_FULL)
			a->buffer_full++;
		if (rec.type == FXT_RECORD_INITIALIZATION)
			a->tps = rec.u.init.ticks_per_second;
		if (rec.type == FXT_RECORD_KERNEL_OBJECT &&
		    rec.u.kobj.obj_type == FXT_OBJ_PROCESS) {
			a->kobj_process++;
			copy(a->process_name, sizeof(a->process_name), rec.u.kobj.name);
		}
		if (rec.type == FXT_RECORD_KERNEL_OBJECT && rec.u.kobj.obj_type == FXT_OBJ_THREAD) {
			if (a->kobj_thread < sizeof(a->threads) / sizeof(a->threads[0])) {
				a->threads[a->kobj_thread].koid = rec.u.kobj.koid;
				copy(a->threads[a->kobj_thread].name, sizeof(a->threads[0].name),
				     rec.u.kobj.name);
			}
			a->kobj_thread++;
		}
		if (rec.type == FXT_RECORD_EVENT) {
			struct ev *e;
			if (a->nev == cap) {
				cap = cap ? cap * 2 : 256;
				a->ev = realloc(a->ev, cap * sizeof(*a->ev));
			}
			e = &a->ev[a->nev++];
			e->tid = rec.u.event.tid;
			e->ts = rec.u.event.ts;
			e->end = rec.u.event.extra;
			e->type = rec.u.event.type;
			copy(e->name, sizeof(e->name), rec.u.event.name);
			copy(e->cat, sizeof(e->cat), rec.u.event.category);
			e->nargs = rec.nargs < 8 ? rec.nargs : 8;
			for (unsigned k = 0; k < e->nargs; k++) {
				const struct fxt_arg_value *v = &rec.args[k];
				struct arg *g = &e->args[k];
				memset(g, 0, sizeof(*g));
				copy(g->name, sizeof(g->name), v->name);
				g->type = v->type;
				if (v->type == FXT_ARG_STRING)
					copy(g->s, sizeof(g->s), v->v.s);
				else if (v->type == FXT_ARG_INT32 || v->type == FXT_ARG_INT64)
					g->i = v->v.i;
				else if (v->type == FXT_ARG_BOOL)
					g->i = v->v.b;
				else
					g->u = v->v.u;
			}
		}
		if (rec.type == FXT_RECORD_LOG && a->nlogs < 16) {
			a->logs[a->nlogs].tid = rec.u.log.tid;
			a->logs[a->nlogs].ts = rec.u.log.ts;
			copy(a->logs[a->nlogs].msg, sizeof(a->logs[0].msg), rec.u.log.msg);
			a->nlogs++;
		}
	}
	fxt_reader_free(r);
	return ret;
}

/* What conv_to() gives the pipeline besides the test spool; zero: a
 * sealed spool whose threads are named "t<serial>", converted whole. */
struct conv_opts {
	uint64_t now;	    /* the seal's time */
	size_t fifo_max;    /* 0: the default */
	bool names_unknown; /* every thread's name "", as the agent leaves a
			     * thread whose /proc/self/task/TID/comm is gone */
	bool recovered;	    /* no thread table, as for a killed process's
			     * spool: threads known from their chunks alone */
	uint64_t lost;
	unsigned groups, sample_hz;
	bool no_waits; /* conv_input's: no acquisition waited */
	uint64_t agent_lo, agent_hi;
	const struct session_write *writes;
	size_t nwrites;
	uint64_t min_ns; /* FXT_MIN_DURATION */
	/* The spool's clock: ticks per second (0: 10^9, ns) and its time
	 * base (conv_input's base_ticks, base_ns). */
	uint64_t tps, base_ticks, base_ns;
	/* Set: names from this lookup rather than the process's symbols;
	 * loc_args as fxt-run --srcline. */
	conv_lookup_fn *lookup;
	void *lookup_ctx;
	bool loc_args;
	conv_loc_fn *loc_later; /* the locations lookup says FXT_SYM_LOC_LATER */
	/* Set: a malloc'd copy of the archive, for the caller to free(). */
	void **keep;
	size_t *keep_len;
	/* Set: the spool converted early first (conv_early_new(),
	 * convert/pipeline.h), `early` steps of `early_step` chunks, then the
	 * archive's conversion goes on from it; the archive is written to a
	 * file (the early threads' events are appended from theirs, or the
	 * first one's file becomes the archive).  The
	 * chunks fed early go to *early_fed when early_fed is set. */
	unsigned early, early_step;
	uint64_t *early_fed;
	/* Set: the first thread's file is copied into the archive when it is
	 * small (CONV_EARLY_COPY_MAX); else it becomes the archive, as
	 * a large one does. */
	bool early_copy_small;
	/* Set: called with the spool's descriptor before each early step
	 * (its number), to change the file between steps. */
	void (*early_file)(int spool_fd, unsigned step);
};

/* Whether the conversion counted what a reader of its archive counts (every
 * conv_to() checks it): 0, or -1 after saying what differs. */
static inline int same_counts(const struct fxt__counts *conv, const struct fxt__counts *read)
{
	struct fxt__counts both = { 0 };
	int same;

	if (fxt__counts_add(&both, conv) < 0 || fxt__counts_add(&both, read) < 0)
		abort();
	same = conv->events == read->events && conv->dropped == read->dropped &&
	       conv->unsampled == read->unsampled && conv->unsampled_why == read->unsampled_why &&
	       fxt__counts_threads(conv) == fxt__counts_threads(read) &&
	       fxt__counts_threads(&both) == fxt__counts_threads(read) &&
	       fxt__counts_processes(conv) == fxt__counts_processes(read) &&
	       fxt__counts_processes(&both) == fxt__counts_processes(read);
	if (!same)
		diag("counts: conversion %llu events, %llu threads, %llu processes, %llu dropped; "
		     "archive %llu, %llu, %llu, %llu; together %llu threads",
		     (unsigned long long)conv->events,
		     (unsigned long long)fxt__counts_threads(conv),
		     (unsigned long long)fxt__counts_processes(conv),
		     (unsigned long long)conv->dropped, (unsigned long long)read->events,
		     (unsigned long long)fxt__counts_threads(read),
		     (unsigned long long)fxt__counts_processes(read),
		     (unsigned long long)read->dropped,
		     (unsigned long long)fxt__counts_threads(&both));
	fxt__counts_free(&both);
	return same ? 0 : -1;
}

/* Converts the test spool into memory and reads it back.  The conversion's
 * counts (conv_stats.counts) must be the archive's (fxt/counts.h). */
static inline int conv_to(struct archive *a, const struct conv_opts *o, struct conv_stats *st)
{
	struct fxt_writer *w;
	struct conv_thread th[512];
	struct conv_input in;
	size_t n = 0;
	const void *data;
	size_t len;
	int err;

	for (struct test_thread *tb = test_spool.threads; tb && n < 512; tb = tb->next) {
		memset(&th[n], 0, sizeof(th[n]));
		th[n].serial = tb->serial;
		th[n].tid = tb->tid;
		if (!o->names_unknown)
			snprintf(th[n].name, sizeof(th[n].name), "t%u", tb->serial);
		th[n].dropped = tb->dropped;
		th[n].first_drop_ts = tb->first_drop_ts;
		th[n].stop_ts = tb->stop_ts;
		th[n].end_ts = tb->end_ts;
		n++;
	}
	memset(&in, 0, sizeof(in));
	in.pid = 4242;
	in.process_name = "unit";
	in.ticks_per_second = o->tps ? o->tps : 1000000000;
	in.base_ticks = o->base_ticks;
	in.base_ns = o->base_ns;
	in.now_ts = o->now;
	in.spool_fd = test_spool_fd(in.pid, &in.spool_end);
	in.lost = o->lost;
	in.threads = o->recovered ? NULL : th;
	in.nthreads = o->recovered ? 0 : n;
	in.fifo_max = o->fifo_max;
	in.libc_groups = o->groups;
	in.sample_hz = o->sample_hz;
	in.no_waits = o->no_waits;
	in.agent_lo = o->agent_lo;
	in.agent_hi = o->agent_hi;
	in.pipe_writes = o->writes;
	in.npipe_writes = o->nwrites;
	in.min_duration_ns = o->min_ns;
	in.lookup = o->lookup;
	in.lookup_ctx = o->lookup_ctx;
	in.loc_later = o->loc_later;
	in.loc_args = o->loc_args;
	in.sym = fxt_sym_new(0);
	fxt_sym_add_self(in.sym);
	int out_fd = -1;
	void *map = NULL;
	struct conv_early *early = NULL;

	if (o->early) {
		out_fd = memfd_create("archive", MFD_CLOEXEC);
		if (out_fd < 0 || fxt_writer_open_fd(&w, out_fd, 0) < 0 ||
		    conv_early_new(&early, &in, getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", 0) <
			0)
			return -1;
		if (!o->early_copy_small)
			conv_early_copy_max(early, 0);
		for (unsigned i = 0; i < o->early; i++) {
			if (o->early_file)
				o->early_file(in.spool_fd, i);
			if (conv_early_step(early, o->early_step) < 0)
				return -1;
		}
		if (o->early_fed)
			*o->early_fed = conv_early_fed(early);
		in.early = early;
	} else if (fxt_writer_open_mem(&w, 0) < 0) {
		return -1;
	}
	err = conv_archive(w, &in, st);
	fxt_writer_flush(w);
	conv_early_free(early);
	if (out_fd >= 0) {
		/* Here, or in an early thread's file that became the archive
		 * (fxt_writer_move_to_fd()). */
		len = (size_t)fxt_writer_bytes(w);
		map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fxt_writer_fd(w), 0) : NULL;
		if (map == MAP_FAILED)
			return -1;
		data = map;
	} else {
		data = fxt_writer_mem_data(w, &len);
	}
	if (o->keep) {
		free(*o->keep);
		*o->keep = malloc(len + 1);
		if (*o->keep)
			memcpy(*o->keep, data, len);
		*o->keep_len = len;
	}
	if (!err)
		err = read_archive(data, len, a, in.pid);
	if (!err)
		err = same_counts(&st->counts, &a->counts);
	fxt__counts_free(&st->counts);
	fxt__counts_free(&a->counts);
	fxt_writer_free(w);
	if (map)
		munmap(map, len);
	if (out_fd >= 0)
		close(out_fd);
	fxt_sym_free(in.sym);
	close(in.spool_fd);
	return err;
}

/* conv_to() as two checks: "WHAT: converted", "WHAT: reader finds no
 * error". */
static inline void convert_ok(struct archive *a, const struct conv_opts *o, struct conv_stats *st,
			      const char *what)
{
	ASSERT_EQ_I64(conv_to(a, o, st), 0, "%s: converted", what);
	ASSERT_EQ_I64(a->errors, 0, "%s: reader finds no error", what);
}

static inline size_t count(const struct archive *a, uint64_t tid, int type, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nev; i++)
		n += a->ev[i].tid == tid && a->ev[i].type == type &&
		     (!name || strcmp(a->ev[i].name, name) == 0);
	return n;
}

static inline long nesting(const struct archive *a, uint64_t tid)
{
	struct ivl *v = malloc((a->nev + 1) * sizeof(*v));
	size_t n = 0;
	long bad;

	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && a->ev[i].type == FXT_EVENT_DURATION_COMPLETE) {
			v[n].start = a->ev[i].ts;
			v[n].end = a->ev[i].end;
			n++;
		}
	bad = ivl_check_nesting(v, n);
	free(v);
	return bad;
}

static inline uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* The events of `tid` in stream order are in start order and nest (see
 * agent_test_nest.h); the reason goes to the TAP diagnostics. */
static inline int stream_ok(const struct archive *a, uint64_t tid)
{
	struct nest_ev *v = malloc((a->nev + 1) * sizeof(*v));
	size_t n = 0;
	const char *why;
	long bad;

	for (size_t i = 0; i < a->nev; i++) {
		const struct ev *e = &a->ev[i];
		if (e->tid != tid || e->type == FXT_EVENT_COUNTER ||
		    (e->type >= FXT_EVENT_FLOW_BEGIN && e->type <= FXT_EVENT_FLOW_END))
			continue;
		switch (e->type) {
		case FXT_EVENT_DURATION_COMPLETE:
			v[n].kind = NEST_COMPLETE;
			break;
		case FXT_EVENT_DURATION_BEGIN:
			v[n].kind = NEST_BEGIN;
			break;
		case FXT_EVENT_DURATION_END:
			v[n].kind = NEST_END;
			break;
		default:
			v[n].kind = NEST_INSTANT;
			break;
		}
		v[n].addr = name_hash(e->name);
		v[n].start = e->ts;
		v[n].end = e->type == FXT_EVENT_DURATION_END ? e->ts : e->end;
		n++;
	}
	bad = nest_check_stream(v, n, &why);
	if (bad >= 0)
		diag("  tid %llu, event %ld of %zu: %s", (unsigned long long)tid, bad, n, why);
	free(v);
	return bad < 0;
}

static inline const struct ev *find(const struct archive *a, uint64_t tid, const char *name)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && strcmp(a->ev[i].name, name) == 0)
			return &a->ev[i];
	return NULL;
}

static inline const struct ev *find_type(const struct archive *a, uint64_t tid, int type,
					 const char *name)
{
	for (size_t i = 0; i < a->nev; i++)
		if (a->ev[i].tid == tid && a->ev[i].type == type &&
		    (!name || strcmp(a->ev[i].name, name) == 0))
			return &a->ev[i];
	return NULL;
}

static inline const struct arg *arg_of(const struct ev *e, const char *name)
{
	for (unsigned i = 0; e && i < e->nargs; i++)
		if (strcmp(e->args[i].name, name) == 0)
			return &e->args[i];
	return NULL;
}

/* Argument `name` of `e` is the string `want`. */
static inline void expect_str(const struct ev *e, const char *name, const char *want,
			      const char *what)
{
	const struct arg *g = arg_of(e, name);

	ok(g && g->type == FXT_ARG_STRING && strcmp(g->s, want) == 0, "%s: %s = \"%s\"", what, name,
	   want);
	if (g && (g->type != FXT_ARG_STRING || strcmp(g->s, want) != 0))
		diag("  type %d, \"%s\"", g->type, g->s);
}

static inline void expect_int(const struct ev *e, const char *name, int type, uint64_t want,
			      const char *what)
{
	const struct arg *g = arg_of(e, name);
	uint64_t got =
	    g ? (type == FXT_ARG_INT64 || type == FXT_ARG_BOOL ? (uint64_t)g->i : g->u) : 0;

	ok(g && g->type == type && got == want, "%s: %s = %lld (type %d)", what, name,
	   (long long)want, type);
	if (g && (g->type != type || got != want))
		diag("  type %d, value %lld", g->type, (long long)got);
	if (!g)
		diag("  no argument %s (%u arguments)", name, e ? e->nargs : 0);
}

#endif /* FXT_TESTS_CONVERT_TEST_ARCHIVE_H */
