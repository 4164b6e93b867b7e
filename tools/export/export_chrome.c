/* Chrome trace-event JSON export: one pass over the records, each event
 * written as it is read (nothing is held but the output buffer).
 *
 * Mapping (the JSON format of chrome://tracing, also read by Perfetto and
 * speedscope):
 *   duration complete        "X" with "dur"
 *   duration begin / end     "B" / "E"
 *   instant                  "i", thread scope
 *   counter                  "C", the arguments are the series; "id" when
 *                            the FXT counter id is not 0
 *   async begin/instant/end  "b" / "n" / "e" with "id"
 *   flow begin/step/end      "s" / "t" / "f" with "id"; the end binds to its
 *                            enclosing slice ("bp":"e"), as FXT flows do
 *   log record               "i" named "log", category "log", the message
 *                            in args.message
 *   kernel object process    "M" process_name
 *   kernel object thread     "M" thread_name (pid from its "process" arg)
 *   kernel object function   nothing of its own: its source location
 *                            (include/fxt/format.h, FXT_OBJ_FUNCTION) goes
 *                            into args.loc of the function's "X" and "B"
 *                            (unless they carry one: fxt-run --srcline),
 *                            wherever the record is: fxt-run writes it
 *                            after the slices when its lookup had it
 *                            later.  Into a file (or stdout that is one),
 *                            the export notes the functions of the slices
 *                            it wrote without a location, and when a
 *                            location of one turns up, it reads the whole
 *                            archive for them (locations_first()) and
 *                            writes the file again from its start: one
 *                            pass unless a late location matters.
 *                            Into a pipe, a file or memory is first
 *                            skimmed for them; standard input is read
 *                            once: there, only the records before a
 *                            slice give it a location
 * A stack sample's slice (on a sample track, koid tid | FXT_SAMPLE_KOID_BIT)
 * keeps its track and gets EXPORT_SAMPLE_CATEGORY after its category, so
 * that nothing takes it for a call; or it is left out, with its track's
 * name, when samples are not wanted.
 * Other records (context switches, blobs, userspace objects) are skipped.
 * Timestamps are microseconds with three decimals (the nanoseconds), so
 * no precision is lost in the text; ids are hex strings, as a JSON number
 * is a double to most readers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "tools/front/escape.h"
#include "tools/front/common.h"
#include "tools/front/srcloc.h"
#include "tools/export/export.h"

/* A write buffer in front of the FILE: event lines are assembled with a
 * few hand-written formatters, which is several times faster than
 * fprintf on millions of events. */
struct jout {
	FILE *f;
	size_t n;
	int err; /* sticky, -errno */
	char buf[1 << 16];
};

struct exporter {
	struct jout o;
	bool samples; /* the stack samples' slices are exported */
	struct export_stats st;
	uint64_t nevents;	 /* written so far, for the separators */
	struct tool_srcloc locs; /* the functions' source locations */
	int locs_err;		 /* -ENOMEM: some were not kept */
	/* One pass into a file (export_chrome()): the functions of slices
	 * written without a location; `blind`: a slice written before any
	 * location was known (its function not noted); `late`: a location
	 * of one of them came after it (the export starts again). */
	bool track, blind, late;
	struct tool_srcloc missed;
};

static void j_flush(struct jout *o)
{
	if (o->n && !o->err && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->err = -(errno ? errno : EIO);
	o->n = 0;
}

/* Room for `len` bytes; len must be below sizeof(buf). */
static inline char *j_room(struct jout *o, size_t len)
{
	if (o->n + len > sizeof(o->buf))
		j_flush(o);
	return o->buf + o->n;
}

static void j_mem(struct jout *o, const char *s, size_t len)
{
	while (len) {
		size_t chunk = len < 4096 ? len : 4096;
		memcpy(j_room(o, chunk), s, chunk);
		o->n += chunk;
		s += chunk;
		len -= chunk;
	}
}

#define J_LIT(o, lit) j_mem((o), (lit), sizeof(lit) - 1)

static void j_u64(struct jout *o, uint64_t v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	j_mem(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

static void j_i64(struct jout *o, int64_t v)
{
	if (v < 0) {
		J_LIT(o, "-");
		j_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		j_u64(o, (uint64_t)v);
	}
}

/* Nanoseconds as microseconds: "12.345". */
static void j_us(struct jout *o, uint64_t ns)
{
	char *p;

	j_u64(o, ns / 1000);
	p = j_room(o, 4);
	p[0] = '.';
	p[1] = (char)('0' + ns / 100 % 10);
	p[2] = (char)('0' + ns / 10 % 10);
	p[3] = (char)('0' + ns % 10);
	o->n += 4;
}

static void j_hex(struct jout *o, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "\"0x%" PRIx64 "\"", v);
	j_mem(o, tmp, (size_t)n);
}

static void j_double(struct jout *o, double d)
{
	char tmp[32];
	int n;

	if (!isfinite(d)) { /* JSON has no NaN or infinity */
		J_LIT(o, "null");
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.17g", d);
	j_mem(o, tmp, (size_t)n);
}

static void j_put(void *o, const char *s, size_t len)
{
	j_mem(o, s, len);
}

/* A JSON string literal (tools/front/escape.h): most names need no escaping,
 * and are copied without a call. */
static void j_str(struct jout *o, const char *s, size_t len)
{
	size_t plain = tool_json_plain(s, len);

	J_LIT(o, "\"");
	j_mem(o, s, plain);
	if (plain < len)
		tool_json_escape(s + plain, len - plain, j_put, o);
	J_LIT(o, "\"");
}

static void j_fstr(struct jout *o, const struct fxt_string *s)
{
	j_str(o, s->data, s->len);
}

/* ,"args":{...} for the record's arguments and, when not NULL, the
 * slice's source location "loc" (nothing when there is neither). */
static void j_args(struct jout *o, const struct fxt_record *rec, const char *loc)
{
	if (!rec->nargs && !loc)
		return;
	J_LIT(o, ",\"args\":{");
	if (loc) {
		J_LIT(o, "\"" FXT_LOC_ARG "\":");
		j_str(o, loc, strlen(loc));
		if (rec->nargs)
			J_LIT(o, ",");
	}
	for (unsigned i = 0; i < rec->nargs; i++) {
		const struct fxt_arg_value *a = &rec->args[i];

		if (i)
			J_LIT(o, ",");
		j_fstr(o, &a->name);
		J_LIT(o, ":");
		switch (a->type) {
		case FXT_ARG_NULL:
			J_LIT(o, "null");
			break;
		case FXT_ARG_INT32:
		case FXT_ARG_INT64:
			j_i64(o, a->v.i);
			break;
		case FXT_ARG_UINT32:
		case FXT_ARG_UINT64:
		case FXT_ARG_KOID:
			j_u64(o, a->v.u);
			break;
		case FXT_ARG_DOUBLE:
			j_double(o, a->v.d);
			break;
		case FXT_ARG_STRING:
			j_fstr(o, &a->v.s);
			break;
		case FXT_ARG_POINTER:
			j_hex(o, a->v.u);
			break;
		case FXT_ARG_BOOL:
			if (a->v.b)
				J_LIT(o, "true");
			else
				J_LIT(o, "false");
			break;
		default:
			J_LIT(o, "null");
			break;
		}
	}
	J_LIT(o, "}");
}

/* The start of an event object: separator, ph, pid, tid. */
static void j_begin(struct exporter *x, const char *ph, uint64_t pid, uint64_t tid)
{
	struct jout *o = &x->o;

	if (x->nevents++)
		J_LIT(o, ",\n{\"ph\":\"");
	else
		J_LIT(o, "{\"ph\":\"");
	j_mem(o, ph, strlen(ph));
	J_LIT(o, "\",\"pid\":");
	j_u64(o, pid);
	J_LIT(o, ",\"tid\":");
	j_u64(o, tid);
}

/* The category, with EXPORT_SAMPLE_CATEGORY after it for a sample. */
static void j_name_cat(struct jout *o, const struct fxt_string *cat, const struct fxt_string *name,
		       bool sampled)
{
	size_t plain = tool_json_plain(cat->data, cat->len);

	J_LIT(o, ",\"name\":");
	j_fstr(o, name);
	if (!sampled) {
		J_LIT(o, ",\"cat\":");
		j_fstr(o, cat);
		return;
	}
	J_LIT(o, ",\"cat\":\"");
	j_mem(o, cat->data, plain);
	if (plain < cat->len)
		tool_json_escape(cat->data + plain, cat->len - plain, j_put, o);
	if (cat->len)
		J_LIT(o, ",");
	J_LIT(o, EXPORT_SAMPLE_CATEGORY "\"");
}

/* The source location of a slice's function, when the archive gave one
 * and the slice carries none of its own. */
static const char *slice_loc(struct exporter *x, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	const char *loc;
	int rc;

	if ((!x->locs.n && (!x->track || x->blind)) ||
	    (ev->type != FXT_EVENT_DURATION_COMPLETE && ev->type != FXT_EVENT_DURATION_BEGIN))
		return NULL;
	for (unsigned i = 0; i < rec->nargs; i++)
		if (rec->args[i].name.len == strlen(FXT_LOC_ARG) &&
		    memcmp(rec->args[i].name.data, FXT_LOC_ARG, strlen(FXT_LOC_ARG)) == 0)
			return NULL;
	if (!x->locs.n) {
		x->blind = true;
		return NULL;
	}
	loc = tool_srcloc_find(&x->locs, ev->category.data, ev->category.len, ev->name.data,
			       ev->name.len);
	if (!loc && x->track &&
	    (rc = tool_srcloc_note(&x->missed, ev->category.data, ev->category.len, ev->name.data,
				   ev->name.len)) < 0)
		x->locs_err = rc;
	return loc;
}

static void export_event(struct exporter *x, struct fxt_reader *r, const struct fxt_record *rec)
{
	const typeof(rec->u.event) *ev = &rec->u.event;
	uint64_t ts = fxt_reader_ticks_to_ns(r, ev->ts), end;
	bool sampled = (ev->tid & FXT_SAMPLE_KOID_BIT) != 0;
	struct jout *o = &x->o;
	const char *ph;

	if (sampled && !x->samples)
		return;
	switch (ev->type) {
	case FXT_EVENT_INSTANT:
		ph = "i";
		x->st.instants++;
		break;
	case FXT_EVENT_COUNTER:
		ph = "C";
		x->st.counters++;
		break;
	case FXT_EVENT_DURATION_BEGIN:
		ph = "B";
		break;
	case FXT_EVENT_DURATION_END:
		ph = "E";
		break;
	case FXT_EVENT_DURATION_COMPLETE:
		ph = "X";
		break;
	case FXT_EVENT_ASYNC_BEGIN:
		ph = "b";
		x->st.async++;
		break;
	case FXT_EVENT_ASYNC_INSTANT:
		ph = "n";
		x->st.async++;
		break;
	case FXT_EVENT_ASYNC_END:
		ph = "e";
		x->st.async++;
		break;
	case FXT_EVENT_FLOW_BEGIN:
		ph = "s";
		x->st.flows++;
		break;
	case FXT_EVENT_FLOW_STEP:
		ph = "t";
		x->st.flows++;
		break;
	case FXT_EVENT_FLOW_END:
		ph = "f";
		x->st.flows++;
		break;
	default:
		return; /* a type the reader knows but JSON has no use for */
	}
	if (ev->type == FXT_EVENT_DURATION_BEGIN || ev->type == FXT_EVENT_DURATION_END ||
	    ev->type == FXT_EVENT_DURATION_COMPLETE) {
		if (sampled)
			x->st.samples++;
		else
			x->st.slices++;
	}
	j_begin(x, ph, ev->pid, ev->tid);
	j_name_cat(o, &ev->category, &ev->name, sampled);
	J_LIT(o, ",\"ts\":");
	j_us(o, ts);
	switch (ev->type) {
	case FXT_EVENT_INSTANT:
		J_LIT(o, ",\"s\":\"t\"");
		break;
	case FXT_EVENT_COUNTER:
		if (ev->extra) {
			J_LIT(o, ",\"id\":");
			j_hex(o, ev->extra);
		}
		break;
	case FXT_EVENT_DURATION_COMPLETE:
		end = fxt_reader_ticks_to_ns(r, ev->extra);
		J_LIT(o, ",\"dur\":");
		j_us(o, end > ts ? end - ts : 0);
		break;
	case FXT_EVENT_FLOW_END:
		J_LIT(o, ",\"bp\":\"e\"");
		/* fall through */
	case FXT_EVENT_ASYNC_BEGIN:
	case FXT_EVENT_ASYNC_INSTANT:
	case FXT_EVENT_ASYNC_END:
	case FXT_EVENT_FLOW_BEGIN:
	case FXT_EVENT_FLOW_STEP:
		J_LIT(o, ",\"id\":");
		j_hex(o, ev->extra);
		break;
	default:
		break;
	}
	j_args(o, rec, slice_loc(x, rec));
	J_LIT(o, "}");
}

static void export_kobj(struct exporter *x, const struct fxt_record *rec)
{
	struct jout *o = &x->o;
	uint64_t pid = 0;
	size_t had = x->locs.n;
	int rc = tool_srcloc_see(&x->locs, rec);

	if (rc < 0)
		x->locs_err = rc;
	if (x->locs.n > had && x->track) { /* a new location: late for a slice? */
		const struct fxt_string *cat, *name;

		tool_srcloc_key(rec, &cat, &name);
		if (x->blind || (x->missed.n && tool_srcloc_find(&x->missed, cat->data, cat->len,
								 name->data, name->len)))
			x->late = true;
	}
	if (rc != 0 || rec->u.kobj.name.len == 0)
		return;
	if (rec->u.kobj.obj_type == FXT_OBJ_PROCESS) {
		j_begin(x, "M", rec->u.kobj.koid, 0);
		J_LIT(o, ",\"name\":\"process_name\"");
		x->st.processes++;
	} else if (rec->u.kobj.obj_type == FXT_OBJ_THREAD) {
		if ((rec->u.kobj.koid & FXT_SAMPLE_KOID_BIT) && !x->samples)
			return;
		for (unsigned i = 0; i < rec->nargs; i++) {
			const struct fxt_arg_value *a = &rec->args[i];
			if (a->type == FXT_ARG_KOID && a->name.len == 7 &&
			    memcmp(a->name.data, "process", 7) == 0)
				pid = a->v.u;
		}
		j_begin(x, "M", pid, rec->u.kobj.koid);
		J_LIT(o, ",\"name\":\"thread_name\"");
		x->st.threads++;
	} else {
		return;
	}
	J_LIT(o, ",\"args\":{\"name\":");
	j_fstr(o, &rec->u.kobj.name);
	J_LIT(o, "}}");
}

static void export_log(struct exporter *x, struct fxt_reader *r, const struct fxt_record *rec)
{
	struct jout *o = &x->o;

	j_begin(x, "i", rec->u.log.pid, rec->u.log.tid);
	J_LIT(o, ",\"name\":\"log\",\"cat\":\"log\",\"s\":\"t\",\"ts\":");
	j_us(o, fxt_reader_ticks_to_ns(r, rec->u.log.ts));
	J_LIT(o, ",\"args\":{\"message\":");
	j_fstr(o, &rec->u.log.msg);
	J_LIT(o, "}}");
	x->st.logs++;
}

/* The functions' locations of an archive that can be read twice (a file,
 * memory), noted before its records are exported: fxt-run writes those
 * its symbol lookup had later after the thread's slices
 * (convert/pipeline.h).  The plain events, nearly all of an archive,
 * skimmed the reader's short way.  An archive the skim cannot open or
 * read to its end is left to the export, which says why. */
static void locations_first(struct exporter *x, const struct tool_input *in)
{
	struct fxt_plain ev[256];
	struct fxt_reader *r = NULL;
	struct fxt_record rec;
	int rc;

	if (in->mem)
		rc = fxt_reader_open_mem(&r, in->mem, in->len, 0);
	else if (in->path && strcmp(in->path, "-") != 0)
		rc = fxt_reader_open_path(&r, in->path, 0);
	else
		return;
	if (rc < 0)
		return;
	for (;;) {
		if (fxt_reader_next_plain(r, ev, sizeof(ev) / sizeof(ev[0])))
			continue;
		if (fxt_reader_next(r, &rec) <= 0)
			break;
		rc = tool_srcloc_see(&x->locs, &rec);
		if (rc < 0) {
			x->locs_err = rc;
			break;
		}
	}
	fxt_reader_free(r);
}

static int export_record(void *ctx, struct fxt_reader *r, const struct fxt_record *rec)
{
	struct exporter *x = ctx;

	tool_losses_record(&x->st.losses, rec);
	switch (rec->type) {
	case FXT_RECORD_EVENT:
		export_event(x, r, rec);
		break;
	case FXT_RECORD_KERNEL_OBJECT:
		export_kobj(x, rec);
		break;
	case FXT_RECORD_LOG:
		export_log(x, r, rec);
		break;
	default:
		break;
	}
	return x->late ? -ECANCELED : x->o.err;
}

/* The output back to `start`, where the export began, for it to start
 * again: what was written is cut off.  0 or -errno. */
static int rewind_output(struct exporter *x, FILE *out, off_t start)
{
	x->o.n = 0;
	if (fflush(out) != 0 || ftruncate(fileno(out), start) != 0 ||
	    fseeko(out, start, SEEK_SET) != 0)
		return -(errno ? errno : EIO);
	return 0;
}

int export_chrome(const struct tool_input *in, FILE *out, bool samples, struct export_stats *st,
		  char *err, size_t errlen)
{
	struct exporter *x = calloc(1, sizeof(*x)); /* 64 KiB: not on the stack */
	off_t start = 0;
	struct stat sb;
	int rc, fd;

	if (!x) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	x->o.f = out;
	x->samples = samples;
	/* One pass into a file that can be cut back (a late location that
	 * matters starts it again), where the archive can be read twice;
	 * else the locations first, or (standard input) none after. */
	if ((in->mem || (in->path && strcmp(in->path, "-") != 0)) && (fd = fileno(out)) >= 0 &&
	    fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (start = ftello(out)) >= 0)
		x->track = true;
	else
		locations_first(x, in);
	J_LIT(&x->o, "{\"traceEvents\":[\n");
	rc = tool_read_input(in, export_record, x, err, errlen);
	if (x->late) {
		x->track = false;
		x->late = false;
		tool_srcloc_free(&x->missed);
		rc = rewind_output(x, out, start);
		if (rc < 0) {
			x->o.err = rc;
		} else {
			memset(&x->st, 0, sizeof(x->st));
			x->nevents = 0;
			locations_first(x, in);
			J_LIT(&x->o, "{\"traceEvents\":[\n");
			rc = tool_read_input(in, export_record, x, err, errlen);
		}
	}
	if (rc == 0) {
		J_LIT(&x->o, "\n],\n\"displayTimeUnit\":\"ns\"}\n");
		j_flush(&x->o);
		if (!x->o.err && fflush(out) != 0)
			x->o.err = -(errno ? errno : EIO);
	}
	if (x->o.err) { /* the output failed: say so with -EIO */
		snprintf(err, errlen, "%s", strerror(-x->o.err));
		rc = -EIO;
	} else if (rc == -EIO) {
		rc = -EINVAL; /* an input error, not to be taken for the output's */
	}
	if (!rc && x->locs_err) { /* out of memory: not quietly without them */
		snprintf(err, errlen, "%s", strerror(-x->locs_err));
		rc = x->locs_err;
	}
	if (st)
		*st = x->st;
	tool_srcloc_free(&x->locs);
	tool_srcloc_free(&x->missed);
	free(x);
	return rc;
}
