/* fxt-dump: prints, checks and counts the records of an FXT archive.
 *
 * The line format is documented in help[] below and is an interface:
 * end-to-end tests grep it.  Change it only by adding fields at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/reader.h>

#include "config.h"
#include "fxt/counts.h"
#include "tools/front/common.h"
#include "tools/dump/dump.h"

#define MAX_SHOWN 20 /* problems printed per level by --check */

#define NAME "fxt-dump"

static const char help[] =
    "Usage: fxt-dump [OPTION]... FILE\n"
    "Print, check or count the records of an FXT archive.\n"
    "FILE is a file, plain, gzip or zstd, or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  -c, --check      validate the archive against the FXT spec; print the\n"
    "                   first problems with their byte offsets; exit 1 on errors\n"
    "  -s, --stats      print counts of records, events, threads, drops, time span\n"
    "                   (--check and --stats print no records)\n"
    "  -n, --normalize  print records for golden tests: no timestamps or\n"
    "                   durations, pids/tids/flow ids renumbered from 1 in order\n"
    "                   of first appearance, no init/string/thread records,\n"
    "                   pointers shown as *\n"
    "  -q, --quiet      with --check, print errors only; otherwise print no\n"
    "                   diagnostics\n"
    "  -h, --help       print this help and exit\n"
    "  -V, --version    print the version and exit\n"
    "\n"
    "Output: one line per record, its kind and its fields (events, logs and\n"
    "context switches begin with their time, ts=SEC.NSEC).  Strings are in\n"
    "double quotes, with \\\" \\\\ \\n \\t and \\xNN escapes.\n"
    "\n"
    "Record lines:\n"
    "  magic             the magic record\n"
    "  provider_info     provider_info id=ID name=\"NAME\"\n"
    "  provider_section  provider_section id=ID\n"
    "  provider_event    provider_event id=ID event=buffer_full|N\n"
    "  trace_info        trace_info type=N\n"
    "  init              init ticks_per_second=N\n"
    "  string            string index=N str=\"S\"\n"
    "  thread            thread index=N pid=P tid=T\n"
    "  event             ts=SEC.NSEC pid=P tid=T event TYPE cat=\"C\" name=\"N\"\n"
    "                    [dur=Dns] [id=N] [args={...}]; TYPE: instant counter\n"
    "                    begin end complete async_begin async_instant async_end\n"
    "                    flow_begin flow_step flow_end; dur for complete events,\n"
    "                    id for counter, async and flow events (counter id or\n"
    "                    correlation id)\n"
    "  blob              blob name=\"N\" type=N size=BYTES\n"
    "  uobj              uobj ptr=0xADDR pid=P name=\"N\" [args={...}]\n"
    "  kobj              kobj type=process|thread|N koid=K name=\"N\" [args={...}]\n"
    "                    (type=function koid=0xADDR: fxtrace's source location of\n"
    "                    a function, args module and loc)\n"
    "  cswitch           ts=SEC.NSEC cswitch cpu=N out_pid=P out_tid=T\n"
    "                    out_state=N out_prio=N in_pid=P in_tid=T in_prio=N\n"
    "  log               ts=SEC.NSEC pid=P tid=T log msg=\"M\"\n"
    "  large_blob        [ts=SEC.NSEC pid=P tid=T] large_blob\n"
    "                    format=event|attachment cat=\"C\" name=\"N\" size=BYTES\n"
    "                    [args={...}]\n"
    "  args              args={NAME:TYPE=VALUE, ...}, TYPE one of null i32 u32\n"
    "                    i64 u64 f64 str ptr koid bool (a null argument is\n"
    "                    NAME:null)\n"
    "\n"
    "--check prints \"FILE: offset N: error|warning|note: RULE\" lines, then\n"
    "\"FILE: ok|invalid (R records, E errors, W warnings)\".  Warnings (a duration\n"
    "end without begin, begins never ended) do not fail it.  Flows begun and never\n"
    "ended (their other end not traced, as a pipe's reader) are counted in a note.\n"
    "Begins and ends are paired per thread in time order, as Perfetto pairs them\n"
    "(the FXT spec does not make file order time order); a note says how many\n"
    "the file has out of time order.  Records print in file order.  A string\n"
    "reference to an index never registered (an error) reads as \"" FXT_UNREGISTERED_STRING "\",\n"
    "here and in every tool that prints names.\n"
    "--stats prints \"KEY VALUE\" lines: bytes records record.TYPE event.TYPE\n"
    "providers processes threads strings buffer_full dropped overwritten\n"
    "kernel_lost first_ns last_ns span_ns events.  events, threads, processes,\n"
    "dropped and overwritten are what fxt-run's summary line says of the archive it wrote: events "
    "are\n"
    "event records of every type\n"
    "(record.event); threads, the (process, thread) pairs with at least one event\n"
    "or log record (a thread's sample track is one); processes, those with a\n"
    "process kernel object or a thread; dropped, the calls the instants \"fxt: N\n"
    "records dropped\" count; overwritten, those \"fxt: N records overwritten\"\n"
    "count (fxt-run --mode=circular); kernel_lost, the kernel's events that\n"
    "the instants \"fxt: N kernel events lost\" count (fxt-run --kernel,\n"
    "fxt-import: the kernel's ring buffer was full).\n"
    "\n"
    "Exit status:\n"
    "  0   the archive was read (with --check: it is valid; warnings allowed)\n"
    "  1   the archive is damaged: records were read, then one that cannot be\n"
    "      (printed with its offset); or --check found errors in it\n"
    "  2   bad usage; or FILE cannot be read, or is not an FXT archive at all\n"
    "      (empty, or not one record can be read), with or without --check: one\n"
    "      line on standard error names the file and the problem\n";

static const struct option longopts[] = {
	{ "check", no_argument, NULL, 'c' },
	{ "stats", no_argument, NULL, 's' },
	{ "normalize", no_argument, NULL, 'n' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static const struct tool_cli cli = { NAME, help, "csnq", longopts };

/* Problems are held back until the first record (see say()). */
#define MAX_HELD 8

struct dump {
	const char *path;
	bool check, stats, normalize, quiet;
	FILE *out;
	struct fxt_reader *r;
	struct checker *checker;
	bool oom;

	uint64_t nerrors, nwarnings, ninfos;

	/* The lines of the problems reported before any record, held back
	 * until a record shows the input is an archive at all.  If none comes,
	 * one "not an FXT archive" line replaces them. */
	struct held {
		FILE *to;
		char text[320];
	} held[MAX_HELD];
	unsigned nheld;

	/* --normalize: first-appearance numbering. */
	struct pairmap pids, tids, ids;

	/* --stats */
	uint64_t nrecords, rec_count[16], ev_count[FXT_EVENT_TYPE_COUNT + 1];
	struct pairmap providers;
	struct fxt__counts counts; /* events, threads, processes, dropped */
	uint64_t nstrings, buffer_full;
	uint64_t first_ns, last_ns;
	bool have_ts;
};

/* ------------------------------------------------------------- problems */

static const char *level_name(enum fxt_diag_level level)
{
	switch (level) {
	case FXT_DIAG_ERROR:
		return "error";
	case FXT_DIAG_WARNING:
		return "warning";
	default:
		return "note";
	}
}

/* Prints a line of diagnostics to `to`, or holds it back while no record
 * was read yet. */
static void say(struct dump *d, FILE *to, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct dump *d, FILE *to, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (d->nrecords) {
		vfprintf(to, fmt, ap);
	} else if (d->nheld < MAX_HELD) {
		d->held[d->nheld].to = to;
		vsnprintf(d->held[d->nheld++].text, sizeof(d->held[0].text), fmt, ap);
	}
	va_end(ap);
}

static void flush_held(struct dump *d)
{
	for (unsigned i = 0; i < d->nheld; i++)
		fputs(d->held[i].text, d->held[i].to);
	d->nheld = 0;
}

static void on_diag(void *ctx, enum fxt_diag_level level, uint64_t off, const char *msg)
{
	struct dump *d = ctx;
	uint64_t *count = level == FXT_DIAG_ERROR     ? &d->nerrors
			  : level == FXT_DIAG_WARNING ? &d->nwarnings
						      : &d->ninfos;
	++*count;
	if (d->check) {
		if (level != FXT_DIAG_ERROR && d->quiet)
			return;
		if (*count <= MAX_SHOWN)
			say(d, d->out, "%s: offset %" PRIu64 ": %s: %s\n", d->path, off,
			    level_name(level), msg);
		else if (*count == MAX_SHOWN + 1)
			say(d, d->out, "%s: more %ss not shown\n", d->path, level_name(level));
	} else if (!d->quiet && level != FXT_DIAG_INFO) {
		fflush(d->out);
		say(d, stderr, NAME ": %s: offset %" PRIu64 ": %s: %s\n", d->path, off,
		    level_name(level), msg);
	}
}

/* ------------------------------------------------------------- printing */

static void put_str(FILE *f, struct fxt_string s)
{
	bool utf8 = fxt_utf8_valid(s.data, s.len);
	putc('"', f);
	for (uint32_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.data[i];
		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
			fprintf(f, "\\x%02x", c);
		} else {
			putc(c, f);
		}
	}
	putc('"', f);
}

/* The number of `v` in order of first appearance (from 1). */
static uint64_t renumber(struct dump *d, struct pairmap *m, uint64_t v)
{
	bool created;
	uint64_t *slot = pairmap_get(m, v, 0, &created);
	if (!slot) {
		d->oom = true;
		return 0;
	}
	if (created)
		*slot = m->count;
	return *slot;
}

static uint64_t pid_of(struct dump *d, uint64_t pid)
{
	return d->normalize ? renumber(d, &d->pids, pid) : pid;
}

static uint64_t tid_of(struct dump *d, uint64_t tid)
{
	return d->normalize ? renumber(d, &d->tids, tid) : tid;
}

static void put_ts(struct dump *d, uint64_t ticks)
{
	if (d->normalize)
		return;
	uint64_t ns = fxt_reader_ticks_to_ns(d->r, ticks);
	fprintf(d->out, "ts=%" PRIu64 ".%09" PRIu64 " ", ns / 1000000000u, ns % 1000000000u);
}

static void put_thread(struct dump *d, uint64_t pid, uint64_t tid)
{
	fprintf(d->out, "pid=%" PRIu64 " tid=%" PRIu64 " ", pid_of(d, pid), tid_of(d, tid));
}

static void put_args(struct dump *d, const struct fxt_record *rec)
{
	FILE *f = d->out;
	if (rec->nargs == 0)
		return;
	fputs(" args={", f);
	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];
		if (i)
			fputs(", ", f);
		fprintf(f, "%.*s:%s", (int)a->name.len, a->name.data, fxt_arg_type_name(a->type));
		switch (a->type) {
		case FXT_ARG_NULL:
			break;
		case FXT_ARG_INT32:
		case FXT_ARG_INT64:
			fprintf(f, "=%" PRId64, a->v.i);
			break;
		case FXT_ARG_UINT32:
		case FXT_ARG_UINT64:
			fprintf(f, "=%" PRIu64, a->v.u);
			break;
		case FXT_ARG_DOUBLE:
			fprintf(f, "=%.17g", a->v.d);
			break;
		case FXT_ARG_STRING:
			putc('=', f);
			put_str(f, a->v.s);
			break;
		case FXT_ARG_POINTER:
			if (d->normalize)
				fputs("=*", f);
			else
				fprintf(f, "=0x%" PRIx64, a->v.u);
			break;
		case FXT_ARG_KOID:
			/* The "process" argument of thread objects is a pid. */
			if (a->name.len == 7 && memcmp(a->name.data, "process", 7) == 0)
				fprintf(f, "=%" PRIu64, pid_of(d, a->v.u));
			else
				fprintf(f, "=%" PRIu64, a->v.u);
			break;
		case FXT_ARG_BOOL:
			fputs(a->v.b ? "=true" : "=false", f);
			break;
		default:
			break;
		}
	}
	putc('}', f);
}

static void print_event(struct dump *d, const struct fxt_record *rec)
{
	FILE *f = d->out;
	const __typeof__(rec->u.event) *ev = &rec->u.event;

	put_ts(d, ev->ts);
	put_thread(d, ev->pid, ev->tid);
	fprintf(f, "event %s cat=", fxt_event_type_name(ev->type));
	put_str(f, ev->category);
	fputs(" name=", f);
	put_str(f, ev->name);
	switch (ev->type) {
	case FXT_EVENT_DURATION_COMPLETE:
		if (!d->normalize) {
			uint64_t b = fxt_reader_ticks_to_ns(d->r, ev->ts);
			uint64_t e = fxt_reader_ticks_to_ns(d->r, ev->extra);
			fprintf(f, " dur=%" PRIu64 "ns", e >= b ? e - b : 0);
		}
		break;
	case FXT_EVENT_COUNTER:
		fprintf(f, " id=%" PRIu64, ev->extra);
		break;
	case FXT_EVENT_ASYNC_BEGIN:
	case FXT_EVENT_ASYNC_INSTANT:
	case FXT_EVENT_ASYNC_END:
	case FXT_EVENT_FLOW_BEGIN:
	case FXT_EVENT_FLOW_STEP:
	case FXT_EVENT_FLOW_END:
		fprintf(f, " id=%" PRIu64,
			d->normalize ? renumber(d, &d->ids, ev->extra) : ev->extra);
		break;
	default:
		break;
	}
	put_args(d, rec);
	putc('\n', f);
}

static void print_metadata(struct dump *d, const struct fxt_record *rec)
{
	FILE *f = d->out;
	const __typeof__(rec->u.meta) *m = &rec->u.meta;

	switch (m->type) {
	case FXT_METADATA_PROVIDER_INFO:
		fprintf(f, "provider_info id=%" PRIu64 " name=", pid_of(d, m->provider_id));
		put_str(f, m->name);
		putc('\n', f);
		break;
	case FXT_METADATA_PROVIDER_SECTION:
		fprintf(f, "provider_section id=%" PRIu64 "\n", pid_of(d, m->provider_id));
		break;
	case FXT_METADATA_PROVIDER_EVENT:
		fprintf(f, "provider_event id=%" PRIu64 " event=", pid_of(d, m->provider_id));
		if (m->event == FXT_PROVIDER_EVENT_BUFFER_FULL)
			fputs("buffer_full\n", f);
		else
			fprintf(f, "%u\n", m->event);
		break;
	case FXT_METADATA_TRACE_INFO:
		if (m->trace_info_type == FXT_TRACE_INFO_MAGIC)
			fputs("magic\n", f);
		else
			fprintf(f, "trace_info type=%u\n", m->trace_info_type);
		break;
	default:
		fprintf(f, "metadata type=%u\n", m->type);
		break;
	}
}

static void print_record(struct dump *d, const struct fxt_record *rec)
{
	FILE *f = d->out;

	switch (rec->type) {
	case FXT_RECORD_METADATA:
		print_metadata(d, rec);
		break;
	case FXT_RECORD_INITIALIZATION:
		if (!d->normalize)
			fprintf(f, "init ticks_per_second=%" PRIu64 "\n",
				rec->u.init.ticks_per_second);
		break;
	case FXT_RECORD_STRING:
		if (!d->normalize) {
			fprintf(f, "string index=%u str=", rec->u.string.index);
			put_str(f, rec->u.string.str);
			putc('\n', f);
		}
		break;
	case FXT_RECORD_THREAD:
		if (!d->normalize)
			fprintf(f, "thread index=%u pid=%" PRIu64 " tid=%" PRIu64 "\n",
				rec->u.thread.index, rec->u.thread.pid, rec->u.thread.tid);
		break;
	case FXT_RECORD_EVENT:
		print_event(d, rec);
		break;
	case FXT_RECORD_BLOB:
		fputs("blob name=", f);
		put_str(f, rec->u.blob.name);
		fprintf(f, " type=%u size=%" PRIu64 "\n", rec->u.blob.blob_type, rec->u.blob.size);
		break;
	case FXT_RECORD_USERSPACE_OBJECT:
		if (d->normalize)
			fputs("uobj ptr=*", f);
		else
			fprintf(f, "uobj ptr=0x%" PRIx64, rec->u.uobj.pointer);
		fprintf(f, " pid=%" PRIu64 " name=", pid_of(d, rec->u.uobj.pid));
		put_str(f, rec->u.uobj.name);
		put_args(d, rec);
		putc('\n', f);
		break;
	case FXT_RECORD_KERNEL_OBJECT: {
		unsigned t = rec->u.kobj.obj_type;
		uint64_t koid = rec->u.kobj.koid;
		if (t == FXT_OBJ_PROCESS)
			fprintf(f, "kobj type=process koid=%" PRIu64, pid_of(d, koid));
		else if (t == FXT_OBJ_THREAD)
			fprintf(f, "kobj type=thread koid=%" PRIu64, tid_of(d, koid));
		else if (t == FXT_OBJ_FUNCTION) /* its entry address */
			fprintf(f, "kobj type=function koid=0x%" PRIx64, koid);
		else
			fprintf(f, "kobj type=%u koid=%" PRIu64, t, koid);
		fputs(" name=", f);
		put_str(f, rec->u.kobj.name);
		put_args(d, rec);
		putc('\n', f);
		break;
	}
	case FXT_RECORD_CONTEXT_SWITCH: {
		const __typeof__(rec->u.cswitch) *cs = &rec->u.cswitch;
		put_ts(d, cs->ts);
		fprintf(f,
			"cswitch cpu=%u out_pid=%" PRIu64 " out_tid=%" PRIu64
			" out_state=%u out_prio=%u in_pid=%" PRIu64 " in_tid=%" PRIu64
			" in_prio=%u\n",
			cs->cpu, pid_of(d, cs->out_pid), tid_of(d, cs->out_tid), cs->out_state,
			cs->out_prio, pid_of(d, cs->in_pid), tid_of(d, cs->in_tid), cs->in_prio);
		break;
	}
	case FXT_RECORD_LOG:
		put_ts(d, rec->u.log.ts);
		put_thread(d, rec->u.log.pid, rec->u.log.tid);
		fputs("log msg=", f);
		put_str(f, rec->u.log.msg);
		putc('\n', f);
		break;
	case FXT_RECORD_LARGE: {
		const __typeof__(rec->u.large) *l = &rec->u.large;
		bool ev = l->format == FXT_BLOB_FORMAT_EVENT;
		if (ev) {
			put_ts(d, l->ts);
			put_thread(d, l->pid, l->tid);
		}
		fprintf(f, "large_blob format=%s cat=", ev ? "event" : "attachment");
		put_str(f, l->category);
		fputs(" name=", f);
		put_str(f, l->name);
		fprintf(f, " size=%" PRIu64, l->size);
		put_args(d, rec);
		putc('\n', f);
		break;
	}
	default:
		break;
	}
}

/* ---------------------------------------------------------------- stats */

static void seen(struct dump *d, struct pairmap *m, uint64_t a, uint64_t b)
{
	bool created;
	if (!pairmap_get(m, a, b, &created))
		d->oom = true;
}

static void seen_time(struct dump *d, uint64_t ticks)
{
	uint64_t ns = fxt_reader_ticks_to_ns(d->r, ticks);
	if (!d->have_ts || ns < d->first_ns)
		d->first_ns = ns;
	if (!d->have_ts || ns > d->last_ns)
		d->last_ns = ns;
	d->have_ts = true;
}

static void stats_record(struct dump *d, const struct fxt_record *rec)
{
	d->rec_count[rec->type & 15]++;
	if (fxt__counts_record(&d->counts, rec) < 0)
		d->oom = true;
	switch (rec->type) {
	case FXT_RECORD_METADATA:
		if (rec->u.meta.type == FXT_METADATA_PROVIDER_INFO ||
		    rec->u.meta.type == FXT_METADATA_PROVIDER_SECTION)
			seen(d, &d->providers, rec->u.meta.provider_id, 0);
		if (rec->u.meta.type == FXT_METADATA_PROVIDER_EVENT &&
		    rec->u.meta.event == FXT_PROVIDER_EVENT_BUFFER_FULL)
			d->buffer_full++;
		break;
	case FXT_RECORD_STRING:
		d->nstrings++;
		break;
	case FXT_RECORD_EVENT: {
		const __typeof__(rec->u.event) *ev = &rec->u.event;
		d->ev_count[ev->type < FXT_EVENT_TYPE_COUNT ? ev->type : FXT_EVENT_TYPE_COUNT]++;
		seen_time(d, ev->ts);
		if (ev->type == FXT_EVENT_DURATION_COMPLETE)
			seen_time(d, ev->extra);
		break;
	}
	case FXT_RECORD_LOG:
		seen_time(d, rec->u.log.ts);
		break;
	case FXT_RECORD_CONTEXT_SWITCH:
		seen_time(d, rec->u.cswitch.ts);
		break;
	default:
		break;
	}
}

static void print_stats(struct dump *d)
{
	FILE *f = d->out;
	static const unsigned types[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15 };

	fprintf(f, "bytes %" PRIu64 "\n", fxt_reader_offset(d->r));
	fprintf(f, "records %" PRIu64 "\n", d->nrecords);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		fprintf(f, "record.%s %" PRIu64 "\n", fxt_record_type_name(types[i]),
			d->rec_count[types[i]]);
	for (unsigned t = 0; t < FXT_EVENT_TYPE_COUNT; t++)
		fprintf(f, "event.%s %" PRIu64 "\n", fxt_event_type_name(t), d->ev_count[t]);
	if (d->ev_count[FXT_EVENT_TYPE_COUNT])
		fprintf(f, "event.unknown %" PRIu64 "\n", d->ev_count[FXT_EVENT_TYPE_COUNT]);
	fprintf(f, "providers %zu\n", d->providers.count);
	fprintf(f, "processes %" PRIu64 "\n", fxt__counts_processes(&d->counts));
	fprintf(f, "threads %" PRIu64 "\n", fxt__counts_threads(&d->counts));
	fprintf(f, "strings %" PRIu64 "\n", d->nstrings);
	fprintf(f, "buffer_full %" PRIu64 "\n", d->buffer_full);
	fprintf(f, "dropped %" PRIu64 "\n", d->counts.dropped);
	fprintf(f, "overwritten %" PRIu64 "\n", d->counts.overwritten);
	fprintf(f, "kernel_lost %" PRIu64 "\n", d->counts.kernel_lost);
	fprintf(f, "first_ns %" PRIu64 "\n", d->first_ns);
	fprintf(f, "last_ns %" PRIu64 "\n", d->last_ns);
	fprintf(f, "span_ns %" PRIu64 "\n", d->last_ns - d->first_ns);
	fprintf(f, "events %" PRIu64 "\n", d->counts.events);
}

/* ----------------------------------------------------------------- main */

static int run(struct dump *d)
{
	struct fxt_record rec;
	bool damaged = false;
	int rc;

	while ((rc = fxt_reader_next(d->r, &rec)) > 0) {
		if (d->nrecords++ == 0)
			flush_held(d);
		if (d->stats)
			stats_record(d, &rec);
		if (d->check && checker_record(d->checker, &rec) < 0)
			d->oom = true;
		if (!d->check && !d->stats)
			print_record(d, &rec);
		if (d->oom)
			break;
	}
	/* Not one record: the input is no archive at all, which is bad input
	 * (2) like a missing file, not a damaged archive (1), with or without
	 * --check; one line says so instead of the problems held back. */
	if (d->nrecords == 0 && !d->oom) {
		const char *why = rc < 0 ? fxt_reader_error(d->r, NULL) : NULL;

		fflush(d->out);
		if (rc < 0)
			return tool_error(NAME, "%s: not an FXT archive (%s)", d->path,
					  why ? why : "unreadable");
		return tool_error(NAME, "%s: empty file, not an FXT archive", d->path);
	}
	if (rc < 0) {
		uint64_t off = 0;
		const char *why = fxt_reader_error(d->r, &off);
		damaged = true;
		if (d->check) {
			on_diag(d, FXT_DIAG_ERROR, off, why);
		} else {
			fflush(d->out);
			fprintf(stderr, NAME ": %s: offset %" PRIu64 ": %s\n", d->path, off, why);
		}
	}
	if (d->oom) {
		fflush(d->out);
		return tool_error(NAME, "%s: out of memory", d->path);
	}
	if (d->check) {
		bool sorted;
		uint64_t late = fxt_reader_late(d->r, &sorted);
		char msg[160];

		if (late) {
			snprintf(msg, sizeof(msg),
				 "%" PRIu64 " duration begin(s)/end(s) out of time order on their "
				 "thread: %s",
				 late,
				 sorted ? "paired in time order, as Perfetto sorts them"
				 : fxt_reader_time_ordered(d->r)
				     ? "paired in file order (the archive says it is in time order)"
				     : "too many to sort, some paired in file order");
			on_diag(d, FXT_DIAG_INFO, 0, msg);
		}
		checker_finish(d->checker);
		if (!d->quiet)
			fprintf(d->out,
				"%s: %s (%" PRIu64 " records, %" PRIu64 " errors, %" PRIu64
				" warnings)\n",
				d->path, d->nerrors ? "invalid" : "ok", d->nrecords, d->nerrors,
				d->nwarnings);
	}
	if (d->stats)
		print_stats(d);
	/* An error the reader reported and read past (no magic record, a
	 * string that is not UTF-8 ...) makes the archive invalid too. */
	return damaged || d->nerrors ? TOOL_EXIT_FOUND : TOOL_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct dump d = { .out = stdout };
	char spool[1024];
	int c, status;

	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		switch (c) {
		case 'c':
			d.check = true;
			break;
		case 's':
			d.stats = true;
			break;
		case 'n':
			d.normalize = true;
			break;
		case 'q':
			d.quiet = true;
			break;
		default:
			return TOOL_EXIT_ERROR;
		}
	}
	if (argc - optind != 1)
		return tool_usage_error(NAME, "%s",
					argc - optind ? "one FILE only" : "missing FILE");
	d.path = argv[optind];

	if (tool_is_spool(d.path, spool, sizeof(spool)))
		return tool_error(NAME, "%s: %s", d.path, spool);
	/* --check pairs each thread's events in time order, as Perfetto does;
	 * the records print in file order. */
	status = fxt_reader_open_path(&d.r, d.path,
				      d.check ? FXT_READER_VALIDATE | FXT_READER_TIME_ORDER : 0);
	if (status)
		return tool_error(NAME, "%s: %s", d.path, strerror(-status));
	fxt_reader_set_diag(d.r, on_diag, &d);
	if (d.check && checker_new(&d.checker, on_diag, &d) < 0) {
		fxt_reader_free(d.r);
		return tool_error(NAME, "%s: out of memory", d.path);
	}
	pairmap_init(&d.pids);
	pairmap_init(&d.tids);
	pairmap_init(&d.ids);
	pairmap_init(&d.providers);

	status = run(&d);
	if (tool_flush_stdout(NAME))
		status = TOOL_EXIT_ERROR;
	pairmap_free(&d.pids);
	pairmap_free(&d.tids);
	pairmap_free(&d.ids);
	pairmap_free(&d.providers);
	fxt__counts_free(&d.counts);
	checker_free(d.checker);
	fxt_reader_free(d.r);
	return status;
}
