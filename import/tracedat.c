/* trace-cmd's trace.dat (v6, v7; plain or compressed) -> FXT, read through
 * libtracecmd and libtraceevent: they parse the file, its sections, its
 * compression, its clocks (TSC2NSEC, offsets) and each event's format;
 * this file only maps what they hand out to FXT records:
 *
 *   sched_switch            a context switch record (cpu, the outgoing
 *                           thread's state and priority, both threads)
 *   sched_waking / _wakeup  an instant on the woken thread; and, when the
 *   / _wakeup_new           thread was not already runnable, a slice
 *                           "runnable" from then to its next switch-in,
 *                           with a flow from it to the "running" slice
 *                           that starts there (Perfetto binds flows to
 *                           slices, and shows the wake-up latency)
 *   ftrace print / bprint   a log record and an instant "print" (Perfetto
 *   (trace_marker)          ignores log records), the text in "message"
 *   ftrace kernel_stack     an instant with the frames, named from the
 *                           file's kallsyms, in "stack"
 *   every other event       an instant on its thread, category = system,
 *                           the event's own fields as arguments (integers
 *                           signed or not, pointers, strings; arrays other
 *                           than strings are left out), at most 15
 *   lost events             "fxt: N kernel events lost" on the thread of the
 *                           next event, and the provider's buffer-full event
 *
 * Threads are named from the file's saved command lines, and named again
 * when the comm fields of the scheduler events say their name changed
 * (an exec), as `trace-cmd report` prints them.  trace.dat keeps no thread-group
 * ids, so each thread is its own process (koid = tid).  Each buffer
 * (instance) is a provider of its own, the top buffer first.  Timestamps
 * are the library's: nanoseconds on the file's trace clock.
 *
 * One file past 800 lines: the event mapping, the threads' scheduling
 * states and the time-ordered read share one stream's state and its
 * string caches, and nothing outside this file needs any of them.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/format.h>

#include "common/addrtab.h"
#include "import/import.h"

#ifndef HAVE_LIBTRACECMD

int import_tracedat(struct import_ctx *ic)
{
	return import_fail(ic, -ENOTSUP, 0,
			   "a trace.dat file, but fxtrace was built without libtracecmd "
			   "(install libtracecmd-dev and configure again)");
}

#else

#include <event-parse.h>
#include <trace-cmd.h>
#include <trace-seq.h>

#ifdef HAVE_TRACECMD_GET_TRACE_CLOCK
/* Exported by libtracecmd (all versions since 2.9) but declared only in
 * its private header; configure checks that the library has it. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
#endif

/* What becomes of an event, found once per event type. */
enum ev_kind { EV_GENERIC, EV_SWITCH, EV_WAKEUP, EV_PRINT, EV_BPRINT, EV_STACK };

#define MAX_ARGS 15

struct ev_field {
	struct tep_format_field *f;
	struct fxt_string_slot name;
	enum { F_INT, F_UINT, F_PTR, F_STR, F_DYNSTR } kind;
};

struct ev_info {
	struct tep_event *ev;
	enum ev_kind kind;
	struct fxt_string_slot cat, name;
	unsigned nfields;
	struct ev_field fields[MAX_ARGS];
	/* sched_switch / sched_wakeup fields */
	struct tep_format_field *prev_pid, *prev_prio, *prev_state, *prev_comm;
	struct tep_format_field *next_pid, *next_prio, *next_comm;
	struct tep_format_field *pid, *comm, *size, *caller, *buf;
};

/* A thread's scheduling state, for the runnable/running slices. */
enum { T_UNKNOWN, T_RUNNABLE, T_RUNNING, T_OFF };

struct thread {
	uint64_t key; /* tid + 1 (addrtab.h) */
	uint8_t state;
	bool named;
	bool mapped;   /* the agent's thread (ic->tgid_of): no slices of ours */
	uint64_t pid;  /* its process's koid: the tgid, or the tid itself */
	char comm[17]; /* its name as last written (TASK_COMM_LEN is 16) */
	uint64_t flow; /* the flow its "runnable" slice began, 0: none */
	struct fxt_thread_slot slot;
};

struct import_stream {
	struct import_ctx *ic;
	struct tep_handle *tep;
	uint32_t provider;
	struct ev_info **evs; /* by event id */
	size_t nevs;
	struct addrtab threads; /* struct thread */
	uint64_t next_flow;
	uint64_t last_ts;
	int last_tid; /* the thread of the last event */
	int *cpu_in;  /* each CPU's thread last switched in, -1: none yet */
	size_t ncpu;
	bool buffer_full;
	int err;
	struct trace_seq seq;
	struct fxt_string_slot s_running, s_runnable, s_wakeup, s_sched, s_print, s_message,
	    s_stack, s_depth, s_waker, s_cpu;
};

/* ------------------------------------------------------------- threads */

/* The thread of `tid` (the table's key is tid + 1: 0 marks an empty slot);
 * NULL when out of memory.  A call that adds another thread may move
 * it (common/addrtab.h); on_switch() looks the first of its two up
 * again for that. */
static struct thread *thread_of(struct import_stream *s, int tid)
{
	bool added = false;
	struct thread *t = addrtab_get(&s->threads, (uint64_t)(int64_t)tid + 1, &added);

	if (t != NULL && added) {
		bool agent = false;
		int pid =
		    s->ic->tgid_of && tid != 0 ? s->ic->tgid_of(s->ic->tgid_arg, tid, &agent) : -1;
		t->mapped = agent && pid > 0;
		t->pid = (uint64_t)(pid > 0 ? pid : tid);
	}
	return t;
}

/* Names the thread (and its process: koid = tid): from `comm`, an event's
 * comm field (the task's name at that moment: named again when it
 * changed, as at an exec), or with comm NULL from the saved command
 * lines, once. */
static void thread_name(struct import_stream *s, struct thread *t, int tid, const char *comm,
			size_t len)
{
	const char *name = comm;
	char buf[sizeof(t->comm)];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	if (name != NULL && len > 0) {
		if (t->named && strncmp(t->comm, comm, len) == 0 && t->comm[len] == '\0')
			return;
	} else {
		if (t->named)
			return;
		name = tid == 0 ? "swapper" : tep_data_comm_from_pid(s->tep, tid);
		if (name == NULL || strcmp(name, "<...>") == 0)
			return; /* a later comm field may name it */
		len = strnlen(name, sizeof(buf) - 1);
	}
	memcpy(buf, name, len);
	buf[len] = '\0';
	/* The agent's processes are named by its archive; another is named
	 * by its threads (Perfetto wants a name for each process). */
	int err = t->mapped ? 0 : fxt_writer_process_name(s->ic->w, t->pid, buf);
	if (err == 0)
		err = fxt_writer_thread_name(s->ic->w, t->pid, (uint64_t)tid, buf);
	if (err < 0 && !s->err)
		s->err = err;
	memcpy(t->comm, buf, len + 1);
	if (!t->named)
		s->ic->st.threads++;
	t->named = true;
}

static struct fxt_tref tref(struct import_stream *s, struct thread *t, int tid)
{
	return fxt_writer_thread_cached(s->ic->w, &t->slot, t->pid, (uint64_t)tid);
}

static struct fxt_sref str(struct import_stream *s, struct fxt_string_slot *slot, const char *lit)
{
	return fxt_writer_string_cached(s->ic->w, slot, lit, strlen(lit));
}

/* --------------------------------------------------------------- events */

static void put(struct import_stream *s, const struct fxt_event *e)
{
	int err = fxt_writer_event(s->ic->w, e);

	if (err < 0 && !s->err)
		s->err = err;
	s->ic->st.records++;
}

static void slice(struct import_stream *s, struct thread *t, int tid, enum fxt_event_type type,
		  uint64_t ts, struct fxt_string_slot *name, const char *lit)
{
	struct fxt_event e = { .type = type, .ts = ts };

	/* With the agent's threads known (a recording filtered to the
	 * program's threads: fxt-run --kernel), no slices.  Its threads'
	 * states are the context switch records (a slice would cross the
	 * calls' slices on the thread's track); and the kernel records other
	 * threads' switches only to and from the program's, so a "running"
	 * slice would last over every switch it did not record (a task that
	 * ran after one of ours would run until one of ours ran again). */
	if (s->ic->tgid_of)
		return;
	e.thread = tref(s, t, tid);
	e.category = str(s, &s->s_sched, "sched");
	e.name = str(s, name, lit);
	put(s, &e);
}

static void flow(struct import_stream *s, struct thread *t, int tid, enum fxt_event_type type,
		 uint64_t ts, uint64_t id)
{
	struct fxt_event e = { .type = type, .ts = ts, .extra = id };

	e.thread = tref(s, t, tid);
	e.category = str(s, &s->s_sched, "sched");
	e.name = str(s, &s->s_wakeup, "wakeup");
	put(s, &e);
}

/* Ends a "runnable" slice that no switch-in ends (the trace ends first, or
 * its switch-in was lost): its flow, if any, ends in it, so that no flow
 * is left dangling. */
static void end_runnable(struct import_stream *s, struct thread *t, int tid, uint64_t ts)
{
	if (t->flow)
		flow(s, t, tid, FXT_EVENT_FLOW_END, ts, t->flow);
	t->flow = 0;
	slice(s, t, tid, FXT_EVENT_DURATION_END, ts, &s->s_runnable, "runnable");
}

static uint64_t read_field(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	if (f == NULL || tep_read_number_field(f, rec->data, &v) != 0)
		return 0;
	return v;
}

static int64_t read_signed(struct tep_format_field *f, struct tep_record *rec)
{
	uint64_t v = read_field(f, rec);

	if (f != NULL && f->size > 0 && f->size < 8) {
		unsigned bits = (unsigned)f->size * 8;
		if (v & (1ull << (bits - 1)))
			v |= ~0ull << bits;
	}
	return (int64_t)v;
}

/* The bytes of a char-array field (NUL-terminated within it, or not). */
static const char *field_chars(struct tep_format_field *f, struct tep_record *rec, size_t *len)
{
	if (f == NULL || f->offset < 0 || f->offset + f->size > rec->size) {
		*len = 0;
		return NULL;
	}
	const char *p = (const char *)rec->data + f->offset;
	*len = strnlen(p, (size_t)f->size);
	return p;
}

static struct ev_info *info_of(struct import_stream *s, struct tep_record *rec)
{
	int id = tep_data_type(s->tep, rec);

	if (id < 0)
		return NULL;
	if ((size_t)id >= s->nevs) {
		size_t n = (size_t)id + 64;
		struct ev_info **ne = realloc(s->evs, n * sizeof(*ne));
		if (ne == NULL)
			return NULL;
		memset(ne + s->nevs, 0, (n - s->nevs) * sizeof(*ne));
		s->evs = ne;
		s->nevs = n;
	}
	if (s->evs[id] != NULL)
		return s->evs[id];

	struct tep_event *ev = tep_find_event(s->tep, id);
	if (ev == NULL)
		return NULL;
	struct ev_info *in = calloc(1, sizeof(*in));
	if (in == NULL)
		return NULL;
	in->ev = ev;
	const char *sys = ev->system ? ev->system : "", *name = ev->name ? ev->name : "";
	if (strcmp(name, "sched_switch") == 0) {
		in->kind = EV_SWITCH;
		in->prev_pid = tep_find_field(ev, "prev_pid");
		in->prev_prio = tep_find_field(ev, "prev_prio");
		in->prev_state = tep_find_field(ev, "prev_state");
		in->prev_comm = tep_find_field(ev, "prev_comm");
		in->next_pid = tep_find_field(ev, "next_pid");
		in->next_prio = tep_find_field(ev, "next_prio");
		in->next_comm = tep_find_field(ev, "next_comm");
		if (!in->prev_pid || !in->next_pid)
			in->kind = EV_GENERIC;
	} else if (strcmp(name, "sched_wakeup") == 0 || strcmp(name, "sched_waking") == 0 ||
		   strcmp(name, "sched_wakeup_new") == 0) {
		in->kind = EV_WAKEUP;
		in->pid = tep_find_field(ev, "pid");
		in->comm = tep_find_field(ev, "comm");
		if (!in->pid)
			in->kind = EV_GENERIC;
	} else if (strcmp(sys, "ftrace") == 0 && strcmp(name, "print") == 0) {
		in->kind = EV_PRINT;
		in->buf = tep_find_field(ev, "buf");
	} else if (strcmp(sys, "ftrace") == 0 && strcmp(name, "bprint") == 0) {
		in->kind = EV_BPRINT;
	} else if (strcmp(sys, "ftrace") == 0 && strcmp(name, "kernel_stack") == 0) {
		in->kind = EV_STACK;
		in->size = tep_find_field(ev, "size");
		in->caller = tep_find_field(ev, "caller");
		if (!in->caller)
			in->kind = EV_GENERIC;
	}
	/* The arguments of a generic event (and a wake-up's instant). */
	for (struct tep_format_field *f = ev->format.fields; f && in->nfields < MAX_ARGS;
	     f = f->next) {
		struct ev_field *a = &in->fields[in->nfields];
		if (f->flags & TEP_FIELD_IS_STRING)
			a->kind = (f->flags & TEP_FIELD_IS_DYNAMIC) ? F_DYNSTR : F_STR;
		else if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
			continue;
		else if (f->flags & TEP_FIELD_IS_POINTER)
			a->kind = F_PTR;
		else if (f->size < 1 || f->size > 8)
			continue;
		else
			a->kind = (f->flags & TEP_FIELD_IS_SIGNED) ? F_INT : F_UINT;
		a->f = f;
		in->nfields++;
	}
	s->evs[id] = in;
	return in;
}

static void event_args(struct import_stream *s, struct ev_info *in, struct tep_record *rec,
		       struct fxt_arg *args, unsigned *nargs)
{
	unsigned n = 0;

	for (unsigned i = 0; i < in->nfields; i++) {
		struct ev_field *a = &in->fields[i];
		struct fxt_arg *o = &args[n];
		size_t len;
		const char *p;
		int dlen;

		switch (a->kind) {
		case F_INT:
			o->type = FXT_ARG_INT64;
			o->v.i64 = read_signed(a->f, rec);
			break;
		case F_UINT:
			o->type = FXT_ARG_UINT64;
			o->v.u64 = read_field(a->f, rec);
			break;
		case F_PTR:
			o->type = FXT_ARG_POINTER;
			o->v.ptr = read_field(a->f, rec);
			break;
		case F_STR:
			p = field_chars(a->f, rec, &len);
			if (p == NULL)
				continue;
			o->type = FXT_ARG_STRING;
			o->v.str = fxt_writer_string(s->ic->w, p, len);
			break;
		case F_DYNSTR:
			p = tep_get_field_raw(&s->seq, in->ev, a->f->name, rec, &dlen, 0);
			if (p == NULL || dlen < 0)
				continue;
			len = strnlen(p, (size_t)dlen);
			o->type = FXT_ARG_STRING;
			o->v.str = len <= 64 ? fxt_writer_string(s->ic->w, p, len)
					     : fxt_sref_inline(p, len < FXT_MAX_STRING_LEN
								      ? len
								      : FXT_MAX_STRING_LEN);
			break;
		}
		o->name =
		    fxt_writer_string_cached(s->ic->w, &a->name, a->f->name, strlen(a->f->name));
		n++;
	}
	*nargs = n;
}

static void instant(struct import_stream *s, struct ev_info *in, struct thread *t, int tid,
		    uint64_t ts, const struct fxt_arg *args, unsigned nargs)
{
	struct fxt_event e = { .type = FXT_EVENT_INSTANT, .ts = ts, .args = args, .nargs = nargs };
	const char *sys = in->ev->system ? in->ev->system : "";
	const char *name = in->ev->name ? in->ev->name : "";

	e.thread = tref(s, t, tid);
	e.category = fxt_writer_string_cached(s->ic->w, &in->cat, sys, strlen(sys));
	e.name = fxt_writer_string_cached(s->ic->w, &in->name, name, strlen(name));
	put(s, &e);
}

/* Linux's task state bits -> the state FXT gives the outgoing thread. */
static unsigned fxt_state(int64_t prev_state)
{
	uint64_t st = (uint64_t)prev_state & 0xff; /* TASK_REPORT bits */

	if (prev_state & 0x100) /* TASK_REPORT_MAX: preempted while running */
		return FXT_THREAD_RUNNING;
	if (st == 0)
		return FXT_THREAD_RUNNING; /* R: preempted, still runnable */
	if (st & (0x10 | 0x20))
		return FXT_THREAD_DEAD; /* X, Z */
	if (st & (0x04 | 0x08))
		return FXT_THREAD_SUSPENDED; /* T, t */
	return FXT_THREAD_BLOCKED;	     /* S, D, I, P */
}

/* The thread of `tid`, named from the event's comm field `comm`; NULL
 * (s->err set) when out of memory.  It may move others (thread_of()). */
static struct thread *comm_thread(struct import_stream *s, int tid, struct tep_format_field *comm,
				  struct tep_record *rec)
{
	struct thread *t = thread_of(s, tid);
	const char *c;
	size_t len;

	if (t == NULL) {
		s->err = -ENOMEM;
		return NULL;
	}
	c = field_chars(comm, rec, &len);
	thread_name(s, t, tid, c, len);
	return t;
}

static void on_switch(struct import_stream *s, struct ev_info *in, struct tep_record *rec)
{
	int prev = (int)read_signed(in->prev_pid, rec), next = (int)read_signed(in->next_pid, rec);
	int64_t state = read_signed(in->prev_state, rec);
	struct fxt_context_switch cs = { 0 };
	struct thread *tp, *tn;

	if (!comm_thread(s, prev, in->prev_comm, rec) ||
	    !(tn = comm_thread(s, next, in->next_comm, rec)))
		return;
	tp = thread_of(s, prev); /* found: moves nothing */
	unsigned cpu = (unsigned)rec->cpu;
	if (cpu >= s->ncpu) {
		int *a = realloc(s->cpu_in, ((size_t)cpu + 1) * sizeof(*a));
		if (a == NULL) {
			s->err = -ENOMEM;
			return;
		}
		for (size_t i = s->ncpu; i <= cpu; i++)
			a[i] = -1;
		s->cpu_in = a;
		s->ncpu = (size_t)cpu + 1;
	}
	if (tp->mapped && s->cpu_in[cpu] >= 0 && s->cpu_in[cpu] != prev)
		s->ic->st.unrecorded++;
	s->cpu_in[cpu] = next;
	cs.in_thread = tref(s, tn, next);
	cs.out_thread = tref(s, tp, prev);
	cs.cpu = (unsigned)rec->cpu & 0xff;
	cs.out_state = fxt_state(state);
	cs.out_prio = (unsigned)read_field(in->prev_prio, rec) & 0xff;
	cs.in_prio = (unsigned)read_field(in->next_prio, rec) & 0xff;
	cs.ts = rec->ts;
	int err = fxt_writer_context_switch(s->ic->w, &cs);
	if (err < 0 && !s->err)
		s->err = err;
	s->ic->st.records++;

	/* The slices (not for the idle threads: one koid on every CPU). */
	if (prev != 0 && prev != next) {
		if (tp->state == T_RUNNING)
			slice(s, tp, prev, FXT_EVENT_DURATION_END, rec->ts, &s->s_running,
			      "running");
		else if (tp->state == T_RUNNABLE) /* its switch-in is not in the file */
			end_runnable(s, tp, prev, rec->ts);
		tp->state = T_OFF;
		if (cs.out_state == FXT_THREAD_RUNNING) { /* preempted: runnable */
			slice(s, tp, prev, FXT_EVENT_DURATION_BEGIN, rec->ts, &s->s_runnable,
			      "runnable");
			tp->state = T_RUNNABLE;
			tp->flow = 0;
		}
	}
	if (next != 0 && prev != next) {
		if (tn->state == T_RUNNABLE)
			slice(s, tn, next, FXT_EVENT_DURATION_END, rec->ts, &s->s_runnable,
			      "runnable");
		if (tn->state != T_RUNNING) {
			slice(s, tn, next, FXT_EVENT_DURATION_BEGIN, rec->ts, &s->s_running,
			      "running");
			if (tn->state == T_RUNNABLE && tn->flow)
				flow(s, tn, next, FXT_EVENT_FLOW_END, rec->ts, tn->flow);
		}
		tn->flow = 0;
		tn->state = T_RUNNING;
	}
}

static void on_wakeup(struct import_stream *s, struct ev_info *in, struct tep_record *rec)
{
	int tid = (int)read_signed(in->pid, rec);
	struct thread *t = comm_thread(s, tid, in->comm, rec);
	struct fxt_arg args[MAX_ARGS + 1];
	unsigned nargs;

	if (t == NULL)
		return;
	/* With the agent's threads known, another process's wake-up is not
	 * ours: the kernel records it when it comes in an interrupt while
	 * one of ours runs. */
	if (s->ic->tgid_of && !t->mapped)
		return;
	event_args(s, in, rec, args, &nargs);
	instant(s, in, t, tid, rec->ts, args, nargs);
	if (tid == 0 || t->state == T_RUNNING || t->state == T_RUNNABLE)
		return;
	t->state = T_RUNNABLE;
	t->flow = 0;
	if (!t->mapped) {
		slice(s, t, tid, FXT_EVENT_DURATION_BEGIN, rec->ts, &s->s_runnable, "runnable");
		t->flow = ++s->next_flow;
		flow(s, t, tid, FXT_EVENT_FLOW_BEGIN, rec->ts, t->flow);
		return;
	}
	/* The agent's thread: the flow goes from the call its waker is in
	 * (the current task, when it is the agent's too: an unlock, a
	 * write) to the call the woken thread is in when it runs. */
	int wtid = tep_data_pid(s->tep, rec);
	struct thread *w = wtid > 0 && wtid != tid ? thread_of(s, wtid) : NULL;
	if (w == NULL || !w->mapped)
		return;
	thread_name(s, w, wtid, NULL, 0);
	t = thread_of(s, tid); /* found: moves nothing */
	t->flow = ++s->next_flow;
	flow(s, w, wtid, FXT_EVENT_FLOW_BEGIN, rec->ts, t->flow);
}

static void on_print(struct import_stream *s, struct ev_info *in, struct tep_record *rec,
		     struct thread *t, int tid)
{
	const char *p = NULL;
	size_t len = 0;
	int dlen;

	if (in->kind == EV_PRINT && in->buf != NULL) {
		if (in->buf->flags & TEP_FIELD_IS_DYNAMIC) {
			p = tep_get_field_raw(&s->seq, in->ev, "buf", rec, &dlen, 0);
			len = p && dlen > 0 ? strnlen(p, (size_t)dlen) : 0;
		} else if (in->buf->offset >= 0 && in->buf->offset <= rec->size) {
			p = (const char *)rec->data + in->buf->offset;
			len = strnlen(p, (size_t)(rec->size - in->buf->offset));
		}
	} else {
		trace_seq_reset(&s->seq);
		tep_print_event(s->tep, &s->seq, rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&s->seq);
		p = s->seq.buffer;
		len = p ? strlen(p) : 0;
	}
	if (p == NULL)
		p = "";
	while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\0'))
		len--;
	if (len > FXT_MAX_STRING_LEN)
		len = FXT_MAX_STRING_LEN;
	struct fxt_tref th = tref(s, t, tid);
	int err = fxt_writer_log(s->ic->w, rec->ts, th, p, len);
	if (err < 0 && !s->err)
		s->err = err;
	s->ic->st.records++;
	struct fxt_arg a = { .type = FXT_ARG_STRING };
	a.name = str(s, &s->s_message, "message");
	a.v.str = fxt_sref_inline(p, len);
	instant(s, in, t, tid, rec->ts, &a, 1);
}

static void on_stack(struct import_stream *s, struct ev_info *in, struct tep_record *rec,
		     struct thread *t, int tid)
{
	struct tep_format_field *f = in->caller;
	int lsize = f->elementsize > 0 ? (int)f->elementsize : 8;
	uint64_t depth = in->size ? read_field(in->size, rec) : (uint64_t)f->arraylen;
	char text[4096];
	size_t used = 0;
	unsigned n = 0;

	text[0] = '\0';
	for (uint64_t i = 0; i < depth; i++) {
		int off = f->offset + (int)i * lsize;
		if (off < 0 || off + lsize > rec->size)
			break;
		uint64_t addr = 0;
		memcpy(&addr, (const char *)rec->data + off, (size_t)(lsize < 8 ? lsize : 8));
		if (lsize == 8 && addr == ~0ull)
			break; /* the end marker of older kernels */
		/* "name (0xaddr)" a line, written by hand: snprintf() was a
		 * fifth of the import of a trace with a stack per event. */
		const char *fn = tep_find_function(s->tep, addr);
		size_t fl = fn ? strlen(fn) : 1;
		if (used + fl + 24 > sizeof(text))
			break;
		if (n)
			text[used++] = '\n';
		memcpy(text + used, fn ? fn : "?", fl);
		used += fl;
		memcpy(text + used, " (0x", 4);
		used += 4;
		int digits = 1;
		while (digits < 16 && (addr >> (4 * digits)))
			digits++;
		for (int d = digits - 1; d >= 0; d--)
			text[used++] = "0123456789abcdef"[(addr >> (4 * d)) & 0xf];
		text[used++] = ')';
		n++;
	}
	struct fxt_arg a[2] = { { .type = FXT_ARG_STRING }, { .type = FXT_ARG_UINT64 } };
	a[0].name = str(s, &s->s_stack, "stack");
	a[0].v.str = fxt_sref_inline(text, used);
	a[1].name = str(s, &s->s_depth, "depth");
	a[1].v.u64 = n;
	instant(s, in, t, tid, rec->ts, a, 2);
}

static void lost(struct import_stream *s, long long n, uint64_t ts, struct thread *t, int tid)
{
	char name[64];

	if (!s->buffer_full) {
		s->buffer_full = true;
		int err = fxt_writer_provider_event(s->ic->w, s->provider,
						    FXT_PROVIDER_EVENT_BUFFER_FULL);
		if (err < 0 && !s->err)
			s->err = err;
	}
	/* -1: the kernel knew events were lost, not how many. */
	if (n < 0)
		snprintf(name, sizeof(name), "fxt: events lost (count unknown)");
	else
		snprintf(name, sizeof(name), FXT_DROP_PREFIX "%lld" FXT_KERNEL_LOST_SUFFIX, n);
	s->ic->st.lost += n > 0 ? (uint64_t)n : 0;
	struct fxt_event e = { .type = FXT_EVENT_INSTANT, .ts = ts };
	e.thread = tref(s, t, tid);
	e.category = fxt_writer_cstring(s->ic->w, "fxt");
	e.name = fxt_writer_cstring(s->ic->w, name);
	put(s, &e);
}

int import_stream_record(struct import_stream *s, struct tep_record *rec)
{
	struct ev_info *in;
	struct thread *t;
	int tid;

	s->ic->st.events++;
	/* Every event written is at this record's time or at the stream's
	 * latest: records in time order give each thread's events in time
	 * order (the mark); one earlier than the latest withdraws it. */
	if (rec->ts > s->last_ts)
		s->last_ts = rec->ts;
	else if (rec->ts < s->last_ts)
		s->ic->st.unordered++;
	in = info_of(s, rec);
	if (in == NULL) {
		s->ic->st.skipped++;
		return 0;
	}
	tid = tep_data_pid(s->tep, rec);
	t = thread_of(s, tid);
	if (t == NULL) {
		s->err = -ENOMEM;
		return 1;
	}
	thread_name(s, t, tid, NULL, 0);
	if (rec->missed_events)
		lost(s, rec->missed_events, rec->ts, t, tid);
	s->last_tid = tid;

	switch (in->kind) {
	case EV_SWITCH:
		on_switch(s, in, rec);
		break;
	case EV_WAKEUP:
		on_wakeup(s, in, rec);
		break;
	case EV_PRINT:
	case EV_BPRINT:
		on_print(s, in, rec, t, tid);
		break;
	case EV_STACK:
		on_stack(s, in, rec, t, tid);
		break;
	case EV_GENERIC: {
		struct fxt_arg args[MAX_ARGS];
		unsigned nargs;
		event_args(s, in, rec, args, &nargs);
		instant(s, in, t, tid, rec->ts, args, nargs);
		break;
	}
	}
	return s->err ? 1 : 0; /* non-zero stops the iteration */
}

static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	(void)h;
	(void)cpu;
	return import_stream_record(data, rec);
}

/* The records of every CPU of h, merged by time, to on_record().
 * tracecmd_iterate_events() would do the same, but goes quadratic on
 * compressed files (libtracecmd 3.1.6: 57 s for 12 M events, where reading
 * each CPU in turn with tracecmd_read_data() takes 9 s): here each CPU's
 * next record waits in a binary heap keyed by time.  0 or -errno. */
static int read_in_order(struct import_stream *s, struct tracecmd_input *h)
{
	int ncpu = tep_get_cpus(s->tep), n = 0, err = 0;
	struct tep_record **heap;

	if (ncpu <= 0)
		return 0;
	heap = calloc((size_t)ncpu, sizeof(*heap));
	if (heap == NULL)
		return -ENOMEM;
	for (int c = 0; c < ncpu; c++) {
		struct tep_record *r = tracecmd_read_data(h, c);
		if (r == NULL)
			continue;
		/* sift up */
		int i = n++;
		while (i > 0 && heap[(i - 1) / 2]->ts > r->ts) {
			heap[i] = heap[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		heap[i] = r;
	}
	while (n > 0) {
		struct tep_record *top = heap[0];
		int cpu = top->cpu;
		if (on_record(h, top, cpu, s) != 0)
			err = s->err;
		tracecmd_free_record(top);
		struct tep_record *r = err ? NULL : tracecmd_read_data(h, cpu);
		if (r == NULL)
			r = heap[--n];
		/* sift r down from the root */
		int i = 0;
		for (;;) {
			int c = 2 * i + 1;
			if (c >= n)
				break;
			if (c + 1 < n && heap[c + 1]->ts < heap[c]->ts)
				c++;
			if (heap[c]->ts >= r->ts)
				break;
			heap[i] = heap[c];
			i = c;
		}
		if (n > 0)
			heap[i] = r;
		if (err)
			break;
	}
	while (n > 0)
		tracecmd_free_record(heap[--n]);
	free(heap);
	return err;
}

/* Ends the slices still open when the stream ends. */
static void close_open(struct import_stream *s)
{
	for (size_t i = 0; i < s->threads.cap; i++) {
		struct thread *t = addrtab_slot(&s->threads, i);
		if (t == NULL)
			continue;
		int tid = (int)(t->key - 1);
		if (t->state == T_RUNNING)
			slice(s, t, tid, FXT_EVENT_DURATION_END, s->last_ts, &s->s_running,
			      "running");
		else if (t->state == T_RUNNABLE)
			end_runnable(s, t, tid, s->last_ts);
		t->state = T_OFF;
	}
}

static const char *clock_of(struct tracecmd_input *h)
{
	const char *c = NULL;

#ifdef HAVE_TRACECMD_GET_TRACE_CLOCK
	c = tracecmd_get_trace_clock(h);
#else
	(void)h;
#endif
	return c && *c ? c : "local";
}

int import_stream_begin(struct import_ctx *ic, struct tep_handle *tep, const char *name,
			const char *clock, struct import_stream **out)
{
	struct import_stream *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (s == NULL)
		return import_fail(ic, -ENOMEM, 0, "out of memory");
	s->ic = ic;
	s->threads = ADDRTAB_INIT(struct thread);
	s->tep = tep;
	err = import_provider(ic, name, clock, &s->provider);
	if (err < 0) {
		free(s);
		return err;
	}
	trace_seq_init(&s->seq);
	*out = s;
	return 0;
}

int import_stream_lost(struct import_stream *s, uint64_t n)
{
	struct thread *t = thread_of(s, s->last_tid);

	if (n == 0 || s->err)
		return s->err;
	if (t == NULL)
		return s->err = -ENOMEM;
	lost(s, n > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)n, s->last_ts, t, s->last_tid);
	return s->err;
}

int import_stream_end(struct import_stream *s, int err)
{
	struct import_ctx *ic = s->ic;

	if (err < 0 && !s->err)
		s->err = import_fail(ic, err, 0, "%s", strerror(-err));
	if (!s->err)
		close_open(s);
	trace_seq_destroy(&s->seq);
	for (size_t i = 0; i < s->nevs; i++)
		free(s->evs[i]);
	free(s->evs);
	free(s->cpu_in);
	addrtab_free(&s->threads);
	err = s->err;
	free(s);
	if (err && !ic->err[0])
		import_fail(ic, err, 0, "%s", strerror(-err));
	return err;
}

static int import_stream(struct import_ctx *ic, struct tracecmd_input *h, const char *buffer)
{
	struct tep_handle *tep = tracecmd_get_tep(h);
	struct import_stream *s;
	char name[160];
	int err;

	if (tep == NULL)
		return import_fail(ic, -EINVAL, 0, "libtracecmd found no event formats");
	snprintf(name, sizeof(name), "trace-cmd %s", buffer);
	err = import_stream_begin(ic, tep, name, clock_of(h), &s);
	if (err < 0)
		return err;
	return import_stream_end(s, read_in_order(s, h));
}

int import_tracedat(struct import_ctx *ic)
{
	struct tracecmd_input *h;
	int err;

	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	/* Plugins only change how events print; loading them would run code
	 * from the user's and the system's plugin folders. */
	h = tracecmd_open_fd(dup(ic->fd), TRACECMD_FL_LOAD_NO_PLUGINS);
	if (h == NULL) {
		struct stat st;
		uint64_t size = fstat(ic->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
		return import_fail(ic, -EINVAL, size,
				   "libtracecmd cannot read this trace.dat (truncated, damaged, "
				   "or a version it does not know)");
	}
	err = import_stream(ic, h, "top");
	int nb = tracecmd_buffer_instances(h);
	for (int i = 0; i < nb && err == 0; i++) {
		struct tracecmd_input *bh = tracecmd_buffer_instance_handle(h, i);
		const char *bn = tracecmd_buffer_instance_name(h, i);
		char label[96];
		if (bh == NULL) {
			err = import_fail(ic, -EINVAL, 0, "libtracecmd cannot open buffer %d", i);
			break;
		}
		snprintf(label, sizeof(label), "buffer %s", bn ? bn : "?");
		err = import_stream(ic, bh, label);
		tracecmd_close(bh);
	}
	tracecmd_close(h);
	return err;
}

#endif /* HAVE_LIBTRACECMD */
