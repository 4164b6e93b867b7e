/* Replaying one thread's records into its reconstruction (see replay.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert/replay.h"
#include "convert/entries.h"
#include "common/grow.h"
#include "run/argspec.h"
#include "spool/format.h"
#include "spool/libc_table.h"

/* Whether `pc` lies in the agent's own code. */
#define IN_AGENT(in, pc) ((pc) >= (in)->agent_lo && (pc) < (in)->agent_hi)

/* The flow events the sync pairing binds to the SYNC slot at `pos`. */
static int sync_flows(struct replay *d, uint64_t pos)
{
	const struct sync_action *v = d->pp->actions;
	size_t i = conv_prepass_actions_at(d->pp, pos);
	int err = 0;

	for (; i < d->pp->nactions && v[i].pos == pos && !err; i++) {
		struct recon_arg a = { .key = v[i].phase, .type = ARGT_FLOW, .value = v[i].id };
		err = recon_arg(d->r, &a, NULL);
	}
	return err;
}

/* PIPE: a read gets a flow END ("at end") from each write (in the session
 * log) whose first byte it consumed; a write's own FLOW begin is in the
 * spool already. */
static int pipe_record(struct replay *d, const uint64_t *p)
{
	const struct conv_input *in = d->in;
	uint64_t off = p[0], key = ev_pipe_key(p[1]), count = p[2];
	unsigned op = ev_pipe_op(p[1]);
	struct recon_arg a = { .key = KEY_STREAM_OFFSET, .type = EV_ARG_U64, .value = off };
	size_t lo = 0, hi = in->npipe_writes;
	int err = recon_arg(d->r, &a, NULL);

	if (err < 0 || op != EV_PIPE_READ)
		return err;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct session_write *sw = &in->pipe_writes[mid];
		if (sw->key < key || (sw->key == key && sw->off < off))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < in->npipe_writes && !err; lo++) {
		const struct session_write *sw = &in->pipe_writes[lo];
		struct recon_arg f = { .key = EV_FLOW_END | FLOW_AT_END, .type = ARGT_FLOW };
		if (sw->key != key || sw->off - off >= count)
			break;
		f.value = sw->flow_id;
		err = recon_arg(d->r, &f, NULL);
	}
	return err;
}

/* A libc call's frame identity for the recon and the name table: its tag
 * and function, and the function again in bits 4.. (payload bits, 0 in
 * the record's identity), where the name table's cache of recent
 * entries looks: without it, every call would share one cache entry. */
static inline uint64_t call_frame(uint64_t w1)
{
	return (w1 & EV_CALL_ADDR_MASK) | ((uint64_t)ev_call_fn(w1) << 4);
}

/* A libc call's enter at `ts`: its frame, and its caller (a return
 * address, 0: none) as an argument. */
static inline int call_enter(struct replay *d, uint64_t ts, uint64_t frame, uint64_t caller)
{
	struct recon_arg a = { .key = AGENT_KEY_CALLER, .type = ARGT_RETURN, .value = caller };
	int err;

	d->st->libc_calls++;
	err = recon_feed(d->r, ts, frame);
	if (!err && caller)
		err = recon_arg(d->r, &a, NULL);
	return err;
}

/* The entries of a call's result, from the `payload` of its exit, for a
 * function whose result is of kind `res` (enum agent_res): none when an
 * ARG carried it (or the function returns nothing), the result, and the
 * errno's name when it is one.  Returns how many (0 to 2).  The one rule
 * for both ways a call is replayed (call_exit(), once_record()). */
static inline unsigned result_entries(unsigned res, uint64_t payload, struct recon_arg *a)
{
	if (res == AGENT_RES_VOID || payload == EV_RESULT_SPILLED)
		return 0;
	a[0] = (struct recon_arg){ .key = AGENT_KEY_RESULT };
	a[0].type = res == AGENT_RES_PTR ? EV_ARG_PTR : EV_ARG_I64;
	a[0].value = res == AGENT_RES_PTR ? payload : (uint64_t)ev_payload_int(payload);
	if (res != AGENT_RES_ERRNO || !a[0].value)
		return 1;
	a[1] = a[0];
	a[1].key = KEY_ERROR;
	a[1].type = EV_ARG_ERRNO;
	return 2;
}

/* result_entries() of function `fn`. */
static inline unsigned call_result(unsigned fn, uint64_t payload, struct recon_arg *a)
{
	const struct agent_fn_info *fi = agent_fn_lookup(fn);

	return fi ? result_entries(fi->res, payload, a) : 0;
}

/* A libc call's exit at `ts`: the result (call_result()), unless the
 * frame is not the innermost one (then the exit closes frames left open
 * above it), then the frame's end. */
static inline int call_exit(struct replay *d, uint64_t ts, uint64_t frame, unsigned fn,
			    uint64_t payload)
{
	struct recon_arg a[2];
	unsigned n = recon_top(d->r) == frame ? call_result(fn, payload, a) : 0;
	int err = 0;

	for (unsigned i = 0; i < n && !err; i++)
		err = recon_arg(d->r, &a[i], NULL);
	if (!err)
		err = recon_feed(d->r, ts, frame | SPOOL_EXIT_BIT);
	return err;
}

/* What a ONCE record of each function needs from spool/libc_table.h
 * (agent_fn_once(), its result's kind), in a table made at load: two
 * switches a record, with indirect jumps, cost more than the rest of it. */
static struct once_fn {
	bool once;
	uint8_t key, type, op;
	uint8_t res; /* enum agent_res */
	/* A recon_once of it: fn, key, type, res_type and steps (without a
	 * caller) as its records' are; the result's bits kept (0: none). */
	struct recon_once ro;
	uint64_t res_mask;
	uint64_t frame;	    /* call_frame() */
} once_fns[EV_FN_MASK + 1]; /* by any fn a record holds */

__attribute__((constructor)) static void once_fns_init(void)
{
	for (unsigned fn = 0; fn < AGENT_FN_COUNT; fn++) {
		const struct agent_fn_info *fi = agent_fn_lookup(fn);
		struct agent_once o;

		if (!fi || !agent_fn_once(fn, &o) || o.key > UINT8_MAX)
			continue;
		struct recon_arg res[2];
		/* result_entries() of a result that fits, not an errno. */
		unsigned nres = result_entries(fi->res, 0, res);

		once_fns[fn] = (struct once_fn){ true, (uint8_t)o.key, (uint8_t)o.type,
						 (uint8_t)o.op, (uint8_t)fi->res };
		once_fns[fn].ro = (struct recon_once){
			.fn = (uint16_t)fn,
			.key = (uint8_t)o.key,
			.type = (uint8_t)o.type,
			.res_type = nres ? (uint8_t)(res[0].type + 1) : 0,
			/* The argument, the result, the SYNC's step, the exit. */
			.steps = (uint8_t)(1u + nres + (o.op != 0) + 1u),
		};
		once_fns[fn].res_mask = nres ? UINT64_MAX : 0;
		once_fns[fn].frame = call_frame(EV_CALL_ADDR(fn));
	}
}

/* ONCE records taken in one run at most (recon_leaf_once()). */
#define ONCE_RUN 64

/* Whether the record at p (slots up to `stop`) is a ONCE head whose
 * whole record is there, with its ONCE_ARG, of a function once_run()
 * takes (`pairs`: the sync pairing has actions, and a function that
 * makes a SYNC takes the general way). */
static inline bool once_head(const uint64_t *p, const uint64_t *stop, bool pairs)
{
	const struct once_fn *f;
	uint64_t w1;

	if (stop - p < 4)
		return false;
	w1 = p[1];
	f = &once_fns[ev_call_fn(w1)];
	return ev_tag(w1) == EV_TAG_ONCE &&
	       ((p[3] ^ w1) & (EV_TAG_BITS | (uint64_t)EV_FN_MASK << EV_FN_SHIFT)) ==
		   ev_tag_bits(EV_TAG_ONCE ^ EV_TAG_ONCE_ARG) &&
	       f->once && !(f->op && pairs);
}

/* The ONCE records from p on (slots up to `stop`) whose frames can go to
 * the sink as they are (recon_leaf_once()), up to ONCE_RUN of them one
 * after the other: how many went (each two slots), 0 when the first takes
 * the general way (tagged(): a record cut by `stop`, torn, with flows, an
 * errno's name, a sink that did not take it), or -errno.  The caller
 * looks at the first with once_head(): most that fail, fail there. */
static inline long once_run(struct replay *d, const uint64_t *p, const uint64_t *stop)
{
	struct recon_slot s[ONCE_RUN];
	struct recon_once o[ONCE_RUN];
	const bool pairs = d->pp->nactions != 0;
	size_t n;
	int err;

	for (n = 0; n < ONCE_RUN && once_head(p, stop, pairs); n++, p += 4) {
		const uint64_t w1 = p[1];
		const struct once_fn *f = &once_fns[ev_call_fn(w1)];
		uint64_t res = p[3] & EV_PAYLOAD_MASK;
		int64_t v = ev_payload_int(res);

		/* The result's entry, result_entries()'s: an errno's name goes
		 * the general way. */
		if (res == EV_RESULT_SPILLED || (f->res == AGENT_RES_ERRNO && v))
			break; /* not in a ONCE record (torn), or an errno */
		o[n] = f->ro;
		o[n].result = (f->res == AGENT_RES_PTR ? res : (uint64_t)v) & f->res_mask;
		o[n].caller = w1 & EV_PAYLOAD_MASK;
		o[n].value = p[2];
		o[n].steps += o[n].caller != 0; /* its entry */
		s[n].addr = f->frame;
		s[n].start = p[0];
	}
	if (!n)
		return 0;
	err = recon_leaf_once(d->r, s, o, n);
	if (err <= 0)
		return err;
	d->st->libc_calls += (uint64_t)err;
	return err;
}

/* How many of the `want` slots from p are DATA (or FRAME) slots. */
static size_t payload_run(const uint64_t *p, const uint64_t *stop, size_t want, unsigned tag)
{
	size_t n = 0;

	while (n < want && p + 2 * n < stop && ev_tag(p[2 * n + 1]) == tag)
		n++;
	return n;
}

/* The bytes of a record whose head says `declared` of them follow it in
 * DATA slots from `data` on (STR_MAX at most): false when those slots may
 * go on past `stop` (read the record again); else *len is what there is
 * (less for a torn record), *got the slots it takes, and the bytes are
 * copied to `bytes` unless it is NULL. */
static bool data_bytes(const uint64_t *data, const uint64_t *stop, bool more, uint64_t declared,
		       char *bytes, size_t *len, size_t *got)
{
	size_t n = declared < STR_MAX ? (size_t)declared : STR_MAX, want = ev_data_slots(n);

	*got = payload_run(data, stop, want, EV_TAG_DATA);
	if (*got < want && more && data + 2 * *got >= stop)
		return false;
	if (n > *got * EV_DATA_BYTES)
		n = *got * EV_DATA_BYTES; /* torn: what there is */
	if (bytes)
		ev_get_data(data, bytes, n);
	*len = n;
	return true;
}

/* A value read at a patched call of fn (a REG, a HOOKV's): an argument
 * of the innermost open frame only if that frame is fn's (a filter may
 * have left the entry out, and the innermost frame is another then). */
static int reg_value(struct replay *d, const struct recon_arg *a, uint64_t fn, const char *bytes)
{
	if (recon_top(d->r) != fn) {
		d->st->fn_args_orphan++;
		return 0;
	}
	d->st->fn_args++;
	return recon_arg(d->r, a, bytes);
}

/* A tagged record at p (slots up to `stop`; `more`: the chunk goes on
 * after stop).  Returns the slots it used (at least 1), 0 when it needs
 * slots past `stop` (read again from p), or -errno.  Whatever the slots
 * say, this never reads outside [p, stop): torn records, orphan payload
 * slots and unknown tags are skipped. */
static long tagged(struct replay *d, const uint64_t *p, const uint64_t *stop, bool more,
		   uint64_t pos)
{
	const uint64_t w0 = p[0], w1 = p[1];
	struct conv_stats *st = d->st;
	struct recon *r = d->r;
	struct recon_arg a = { 0 };
	char bytes[STR_MAX];
	size_t want, got, len;
	int err = 0;

	switch (ev_tag(w1)) {
	case EV_TAG_CALL: {
		uint64_t frame = call_frame(w1), payload = w1 & EV_PAYLOAD_MASK;

		err = w1 & EV_EXIT_BIT ? call_exit(d, w0, frame, ev_call_fn(w1), payload)
				       : call_enter(d, w0, frame, payload);
		return err < 0 ? err : 1;
	}
	case EV_TAG_ONCE: {
		/* The full form's enter, ARG, SYNC and exit, from two slots:
		 * one leaf frame (recon_leaf()), unless the SYNC has flows. */
		unsigned fn = ev_call_fn(w1), n = 0;
		uint64_t frame = call_frame(EV_CALL_ADDR(fn)), payload;
		struct recon_arg v[4];
		struct agent_once o;
		bool once;

		if (p + 2 >= stop)
			return more ? 0 : 1;
		if (ev_tag(p[3]) != EV_TAG_ONCE_ARG || ev_call_fn(p[3]) != fn)
			return 1; /* torn */
		payload = p[3] & EV_PAYLOAD_MASK;
		once = agent_fn_once(fn, &o);
		if (once && o.op && d->pp->nactions) {
			err = call_enter(d, w0, frame, w1 & EV_PAYLOAD_MASK);
			a.key = o.key;
			a.type = o.type;
			a.value = p[2];
			if (!err)
				err = recon_arg(r, &a, NULL);
			if (!err)
				err = recon_arg(r, NULL, NULL);
			/* The SYNC's place: its ONCE_ARG slot (prepass.c). */
			if (!err)
				err = sync_flows(d, pos + SPOOL_RECORD_SIZE);
			if (!err)
				err = call_exit(d, w0, frame, fn, payload);
			return err < 0 ? err : 2;
		}
		st->libc_calls++;
		if (w1 & EV_PAYLOAD_MASK)
			v[n++] = (struct recon_arg){ .key = AGENT_KEY_CALLER,
						     .type = ARGT_RETURN,
						     .value = w1 & EV_PAYLOAD_MASK };
		if (once)
			v[n++] = (struct recon_arg){ .key = o.key, .type = o.type, .value = p[2] };
		n += call_result(fn, payload, &v[n]);
		err = recon_leaf(r, w0, frame, v, n, once && o.op);
		return err < 0 ? err : 2;
	}
	case EV_TAG_ARG:
		a.key = ev_key(w1);
		a.type = ev_arg_type(w1);
		if (a.type > EV_ARG_BOOL)
			a.type = EV_ARG_U64;
		a.value = w0;
		err = recon_arg(r, &a, NULL);
		return err < 0 ? err : 1;
	case EV_TAG_STR:
		if (!data_bytes(p + 2, stop, more, w0, bytes, &len, &got))
			return 0;
		a.key = ev_key(w1);
		a.type = ARGT_STR;
		a.len = (uint32_t)len;
		err = recon_arg(r, &a, bytes);
		return err < 0 ? err : (long)(1 + got);
	case EV_TAG_FLOW:
		a.key = ev_flow_phase(w1) | (w1 & EV_FLOW_AT_END ? FLOW_AT_END : 0);
		a.type = ARGT_FLOW;
		a.value = w0;
		err = recon_arg(r, (a.key & 3) <= EV_FLOW_END ? &a : NULL, NULL);
		return err < 0 ? err : 1;
	case EV_TAG_SYNC:
		err = recon_arg(r, NULL, NULL);
		if (!err && d->pp->nactions)
			err = sync_flows(d, pos);
		return err < 0 ? err : 1;
	case EV_TAG_LOG: {
		unsigned stream = ev_log_stream(w1), prio = ev_log_prio(w1);
		bool shown = stream >= EV_LOG_STDOUT && stream <= EV_LOG_SYSLOG;

		if (!data_bytes(p + 2, stop, more, ev_log_len(w1), shown ? bytes : NULL, &len,
				&got))
			return 0;
		if (shown) {
			err = conv_log_bytes(d->logs, stream, prio, w0, bytes, len);
			/* A syslog message is a line of its own. */
			if (!err && stream == EV_LOG_SYSLOG)
				err = conv_log_end(d->logs, stream);
		}
		return err < 0 ? err : (long)(1 + got);
	}
	case EV_TAG_COUNTER:
		if (ev_counter_id(w1) == EV_COUNTER_HEAP) {
			err = conv_heap_add(d->heap, w0, ev_counter_delta(w1));
			if (err < 0)
				return err;
		}
		return 1;
	case EV_TAG_SAMPLE: {
		uint64_t pcs[EV_SAMPLE_MAX_DEPTH + 1];
		unsigned depth = ev_sample_depth(w1);
		if (depth > EV_SAMPLE_MAX_DEPTH)
			depth = EV_SAMPLE_MAX_DEPTH;
		want = (depth + 1) / 2;
		got = payload_run(p + 2, stop, want, EV_TAG_FRAME);
		if (got < want && more && p + 2 + 2 * got >= stop)
			return 0;
		if (depth > 2 * got)
			depth = (unsigned)(2 * got);
		for (size_t i = 0; i < got; i++) {
			pcs[2 * i] = p[2 + 2 * i];
			pcs[2 * i + 1] = ev_frame_pc(p[3 + 2 * i]);
		}
		if (ev_sample_unsampled(w1)) {
			/* Not sampled from here on: an instant saying why. */
			err = recon_mark(d->r, w0, MARK_UNSAMPLED + ev_sample_unsampled(w1));
			return err < 0 ? err : 1;
		}
		if (d->sampling && depth) {
			const struct conv_input *in = d->in;
			unsigned skip = 0;
			/* Taken inside the agent: the frames it called (the C
			 * library's) are its work too; with no agent frame
			 * found, the innermost one stands for it. */
			if (ev_sample_agent(w1)) {
				while (skip < depth && !IN_AGENT(in, pcs[skip]))
					skip++;
				if (skip == depth) {
					skip = 0;
					pcs[0] = CONV_AGENT_PC;
				}
			}
			/* The agent's innermost frames: one "fxtrace" frame. */
			if (skip < depth && IN_AGENT(in, pcs[skip])) {
				while (skip < depth && IN_AGENT(in, pcs[skip]))
					skip++;
				pcs[--skip] = CONV_AGENT_PC;
			}
			/* A thread that did not wait was running, or
			 * runnable (preempted): its frames go on. */
			err = stackchart_sample(d->sc, w0, pcs + skip, depth - skip,
						ev_sample_waited(w1) ? ev_sample_periods(w1) : 0);
			if (err == -ENOSYS) {
				d->sampling = false; /* no stack charts in this build */
				err = 0;
			}
			st->samples++;
		}
		return err < 0 ? err : (long)(1 + got);
	}
	case EV_TAG_REG: {
		unsigned str = ev_reg_str(w1), raw = ev_raw_slots(w1);

		a.key = ev_reg_num(w1);
		a.type = ARGT_REG;
		a.value = w0;
		if (str >= EV_REG_STR_UNREADABLE >> EV_REG_STR_SHIFT) {
			a.type = ARGT_REGSTR; /* w0 is the pointer */
			a.key |= REG_STR_UNREADABLE;
		} else if (str) {
			/* Its bytes in w0 and the RAW slots after it. */
			if (p + 2 + 2 * raw > stop) {
				if (more)
					return 0;
				raw = (unsigned)((stop - p - 2) / 2); /* torn: what there is */
			}
			a.type = ARGT_REGSTR;
			a.value = 0;
			a.len = (uint32_t)ev_reg_get_str(p, raw, bytes);
			if (w1 & EV_REG_STR_TRUNCATED)
				a.key |= REG_STR_TRUNCATED;
		}
		err = reg_value(d, &a, ev_reg_fn(w1), a.type == ARGT_REGSTR ? bytes : NULL);
		return err < 0 ? err : 1 + (long)raw;
	}
	case EV_TAG_HOOKV: {
		unsigned regs = ev_hookv_regs(w1), raw = ev_raw_slots(w1), k = 0;
		uint64_t addr = ev_hookv_addr(w1), fn = addr & ~SPOOL_EXIT_BIT;
		bool exit = addr != fn;

		if (p + 2 + 2 * raw > stop) {
			if (more)
				return 0;
			raw = (unsigned)((stop - p - 2) / 2); /* torn: what there is */
		}
		if (!exit)
			err = recon_feed(r, w0, addr);
		/* Its values, as the REG records it stands for. */
		for (unsigned i = 0; i < 6 && err >= 0; i++) {
			if (!(regs & (1u << i)))
				continue;
			if (k >= 2 * raw)
				break;
			a.key = (exit ? FXT_REG_RAX : FXT_REG_GPR0) + i;
			a.type = ARGT_REG;
			a.value = p[2 + k++];
			err = reg_value(d, &a, fn, NULL);
		}
		if (exit && err >= 0)
			err = recon_feed(r, w0, addr);
		return err < 0 ? err : 1 + (long)raw;
	}
	case EV_TAG_PIPE:
		if (p + 2 >= stop)
			return more ? 0 : 1;
		if (ev_tag(p[3]) != EV_TAG_DATA)
			return 1; /* torn */
		err = pipe_record(d, p);
		return err < 0 ? err : 2;
	default: /* DATA or FRAME without a head, or a tag of a later agent */
		return 1;
	}
}

/* A growing array of frame identities. */
struct frames {
	uint64_t *v;
	size_t n, cap;
};

static int frames_push(struct frames *f, uint64_t id)
{
	if (fxt__grow((void **)&f->v, &f->cap, f->n + 1, sizeof(*f->v)) < 0)
		return -ENOMEM;
	f->v[f->n++] = id;
	return 0;
}

/* A frame's exit: pops it (and any left open above it) off `open`, or,
 * when no frame is open, it is one of those open before the records. */
static int frames_exit(struct frames *open, struct frames *before, uint64_t id)
{
	for (size_t i = open->n; i-- > 0;) {
		if (open->v[i] == id) {
			open->n = i;
			return 0;
		}
	}
	return open->n ? 0 : frames_push(before, id);
}

int conv_replay_open_frames(const struct conv_input *in, const struct chunk_ref *chunks, size_t n,
			    uint64_t *buf, uint64_t **out, size_t *nout, uint64_t *first_ts)
{
	struct frames open = { 0 }, before = { 0 };
	int err = 0;

	*first_ts = 0;
	for (size_t c = 0; c < n && !err; c++) {
		uint64_t off = chunks[c].off + SPOOL_CHUNK_HEADER_SIZE;
		uint64_t end = chunks[c].off + chunks[c].size;
		size_t skip = 0; /* RAW slots at the start of the next block */

		while (off < end && !err) {
			const uint64_t *p, *start, *stop;

			err = conv_chunk_read(in->spool_fd, in->spool_map, in->spool_map_len,
					      &chunks[c], off, buf, &start, &stop);
			if (err < 0)
				break;
			for (p = start + 2 * skip; p < stop && !err; p += 2) {
				const uint64_t w1 = p[1], *head = p;
				unsigned tag = ev_tag(w1);
				uint64_t id;

				p += 2 * ev_raw_slots(w1); /* payload of its own */
				if (ev_is_pair(w1) && !*first_ts)
					*first_ts = head[0] ? head[0] : 1;
				if (!w1 || (tag != EV_TAG_NONE && tag != EV_TAG_CALL &&
					    tag != EV_TAG_HOOKV))
					continue; /* payload, other records, unwritten, PAIRs
						     (nothing left open) */
				if (!*first_ts)
					*first_ts = head[0] ? head[0] : 1;
				id = tag == EV_TAG_CALL	   ? call_frame(w1)
				     : tag == EV_TAG_HOOKV ? ev_hookv_addr(w1) & ~SPOOL_EXIT_BIT
							   : w1 & ~SPOOL_EXIT_BIT;
				if (w1 & SPOOL_EXIT_BIT)
					err = frames_exit(&open, &before, id);
				else
					err = frames_push(&open, id);
			}
			skip = ev_raw_skip(p, stop);
			off += (uint64_t)((const char *)stop - (const char *)start);
		}
	}
	free(open.v);
	if (err < 0) {
		free(before.v);
		return err;
	}
	/* Found innermost first: outermost first, as they were entered. */
	for (size_t i = 0; i < before.n / 2; i++) {
		uint64_t t = before.v[i];
		before.v[i] = before.v[before.n - 1 - i];
		before.v[before.n - 1 - i] = t;
	}
	*out = before.v;
	*nout = before.n;
	return 0;
}

/* Hook records (tag 0: nearly all) take the first, cheapest branch.  Not
 * inlined: on its own, the loop keeps its state in registers. */
__attribute__((noinline)) int conv_replay_chunk(struct replay *d, const struct chunk_ref *c,
						uint64_t *buf, uint64_t *mark_ts)
{
	uint64_t off = c->off + SPOOL_CHUNK_HEADER_SIZE, end = c->off + c->size;
	/* Locals, not pointers the recon's stores might alias: registers. */
	uint64_t records = 0, mts = *mark_ts;
	struct recon *r = d->r;
	int err = 0;

	while (off < end && !err) {
		const uint64_t *p, *start, *stop;
		bool more;

		err = conv_chunk_read(d->in->spool_fd, d->in->spool_map, d->in->spool_map_len, c,
				      off, buf, &start, &stop);
		if (err < 0)
			break;
		more = off + (uint64_t)((const char *)stop - (const char *)start) < end;
		for (p = start; p < stop; p += 2) {
			const uint64_t w1 = p[1];
			/* One compare keeps hook records (an address in
			 * [1, 2^56), maybe with the exit bit) on the fast
			 * path; the rest is rare. */
			if (__builtin_expect((w1 << 1) - 2 >= (1ull << (EV_TAG_SHIFT + 1)) - 2,
					     0)) {
				long n;
				/* A leaf's enter and exit in one slot: as
				 * the two records below would go. */
				if (ev_is_pair(w1)) {
					const uint64_t fn = ev_pair_fn(w1),
						       ts1 = p[0] + ev_pair_dur(w1);
					if (__builtin_expect(p[0] >= mts, 0)) {
						err = recon_mark(r, mts, MARK_DROPS);
						mts = NO_MARK;
						if (err < 0)
							break;
					}
					if (__builtin_expect(ts1 >= mts, 0)) {
						err = recon_feed(r, p[0], fn);
						if (err >= 0)
							err = recon_mark(r, mts, MARK_DROPS);
						mts = NO_MARK;
						if (err >= 0)
							err =
							    recon_feed(r, ts1, fn | SPOOL_EXIT_BIT);
					} else {
						err = recon_pair(r, p[0], ts1, fn);
					}
					if (err < 0)
						break;
					records += 2;
					continue;
				}
				/* A zero second word: never written (the rest
				 * of a chunk being filled) or a slot reserved
				 * by a hook that a signal handler interrupted
				 * for good (exit() in the handler).  Skip it. */
				if (!w1)
					continue;
				if (w1 & EV_TAG_BITS) {
					/* A hook record with values: the marks
					 * before it, as before a hook's. */
					if (ev_tag(w1) == EV_TAG_HOOKV && p[0] >= mts) {
						err = recon_mark(r, mts, MARK_DROPS);
						mts = NO_MARK;
						if (err < 0)
							break;
					}
					/* Most of them, with --libc=all: runs
					 * of ONCE records. */
					if (once_head(p, stop, d->pp->nactions != 0)) {
						n = once_run(d, p, stop);
						if (n < 0) {
							err = (int)n;
							break;
						}
						if (n > 0) {
							records += (uint64_t)n;
							p += 4 * n - 2;
							continue;
						}
					}
					n = tagged(d, p, stop, more,
						   off + (uint64_t)((const char *)p -
								    (const char *)start));
					if (n <= 0) {
						/* An error, or the record goes on
						 * past the block: read from p. */
						err = (int)n;
						break;
					}
					records++;
					p += 2 * (n - 1);
					continue;
				}
				/* The exit of address 0: a hook record. */
			}
			if (__builtin_expect(p[0] >= mts, 0)) {
				err = recon_mark(r, mts, MARK_DROPS);
				mts = NO_MARK;
				if (err < 0)
					break;
			}
			/* An enter whose exit is the next record, in this
			 * block and before the next mark: one call that
			 * called nothing, in one go (recon_pair()). */
			if (!(w1 & SPOOL_EXIT_BIT) && p + 2 < stop &&
			    p[3] == (w1 | SPOOL_EXIT_BIT) && p[2] < mts) {
				err = recon_pair(r, p[0], p[2], w1);
				if (err < 0)
					break;
				records += 2;
				p += 2;
				continue;
			}
			err = recon_feed(r, p[0], w1);
			if (err < 0)
				break;
			records++;
		}
		off += (uint64_t)((const char *)p - (const char *)start);
	}
	conv_chunk_done(d->in->spool_map, d->in->spool_map_len, c);
	d->st->records += records;
	*mark_ts = mts;
	return err;
}
