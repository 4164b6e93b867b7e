/* Unit tests of a libc call's slice written straight into the writer's
 * buffer (convert/emitcall.c, conv_emit_call()): the archive's bytes are
 * those of the general encoder (fxt_writer_event() with the arguments as
 * an fxt_arg array, their strings registered in the same order), on the
 * first call of a function and on those whose refs are cached; the
 * entries it cannot write are left to the general encoder.  A ONCE
 * record's slice (conv_emit_once()): conv_emit_call()'s bytes, written
 * once what it refers to is registered, and left to it before. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/emit.h"
#include "spool/libc_table.h"
#include "symbolizer/symbolizer.h"
#include "tests/lib/tap.h"

#define PID 4000
#define TID 4001

/* A lookup naming 0x1000 "caller_a" and 0x2000 "caller_b" (a return
 * address is named after the function it returns into: pc - 1). */
static const struct fxt_sym_info *lookup(void *ctx, uint64_t addr)
{
	static struct fxt_sym_info info;

	(void)ctx;
	memset(&info, 0, sizeof(info));
	info.name = addr < 0x2000 ? "caller_a" : "caller_b";
	info.module = "prog";
	info.start = addr & ~0xfffull;
	return &info;
}

/* One libc call: its function, its caller, its entries but the caller. */
struct call {
	unsigned fn;
	uint64_t caller; /* a return address */
	uint64_t start, end;
	unsigned n;
	struct recon_arg v[4];
};

static const struct call calls[] = {
	{ AGENT_FN_pthread_mutex_lock,
	  0x1011,
	  100,
	  120,
	  2,
	  { { AGENT_KEY_MUTEX, EV_ARG_PTR, 0xabc0, 0, 0 },
	    { AGENT_KEY_RESULT, EV_ARG_I64, 0, 0, 0 } } },
	{ AGENT_FN_malloc,
	  0x2022,
	  130,
	  140,
	  2,
	  { { AGENT_KEY_SIZE, EV_ARG_U64, 64, 0, 0 },
	    { AGENT_KEY_RESULT, EV_ARG_PTR, 0x5000, 0, 0 } } },
	/* Cached refs: the same function, key and caller again. */
	{ AGENT_FN_pthread_mutex_lock,
	  0x1011,
	  150,
	  160,
	  2,
	  { { AGENT_KEY_MUTEX, EV_ARG_PTR, 0xabc0, 0, 0 },
	    { AGENT_KEY_RESULT, EV_ARG_I64, (uint64_t)-3, 0, 0 } } },
	/* A bool, and a code address named like a caller. */
	{ AGENT_FN_pthread_mutex_lock,
	  0x2022,
	  170,
	  190,
	  3,
	  { { AGENT_KEY_WAITED, EV_ARG_BOOL, 1, 0, 0 },
	    { AGENT_KEY_START_ROUTINE, EV_ARG_CODE, 0x1000, 0, 0 },
	    { AGENT_KEY_RESULT, EV_ARG_I64, 0, 0, 0 } } },
	{ AGENT_FN_free, 0x1011, 200, 210, 1, { { AGENT_KEY_PTR, EV_ARG_PTR, 0x5000, 0, 0 } } },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static struct fxt_sref intern(struct fxt_writer *w, const char *s)
{
	return fxt_writer_string(w, s, strlen(s));
}

/* A writer in memory and what conv_emit_call() writes into it with. */
struct emitter {
	struct fxt_writer *w;
	struct emit_common com;
	struct conv_stats st;
	struct emit_ctx ctx;
};

static int emitter_open(struct emitter *e)
{
	memset(e, 0, sizeof(*e));
	if (fxt_writer_open_mem(&e->w, 0) < 0)
		return -1;
	e->com.w = e->w;
	e->com.st = &e->st;
	e->com.scratch = malloc(EMIT_SCRATCH);
	conv_names_init(&e->com.names, lookup, NULL, NULL);
	conv_tb_init(&e->com.tb, 1000000000u, 0, 0);
	conv_emit_init(&e->ctx, &e->com, PID, TID, 0, NULL);
	return e->com.scratch ? 0 : -1;
}

static void emitter_free(struct emitter *e)
{
	fxt_writer_free(e->w);
	conv_names_free(&e->com.names);
	free(e->com.scratch);
}

/* The general encoder's archive of the calls: the thread, then for each
 * call its arguments' strings (a value, then its name), its category and
 * name, and the event. */
static int general(struct fxt_writer *w, const struct conv_tb *tb)
{
	struct fxt_tref th = fxt_writer_thread(w, PID, TID);

	for (size_t i = 0; i < NCALLS; i++) {
		const struct call *c = &calls[i];
		const struct agent_fn_info *fi = agent_fn_lookup(c->fn);
		struct fxt_arg args[5];
		struct fxt_event ev;
		unsigned n = 0;

		memset(args, 0, sizeof(args));
		args[n].type = FXT_ARG_STRING;
		args[n].v.str = intern(w, c->caller < 0x2000 ? "caller_a" : "caller_b");
		args[n++].name = intern(w, agent_key_name(AGENT_KEY_CALLER));
		for (unsigned k = 0; k < c->n; k++, n++) {
			const struct recon_arg *a = &c->v[k];
			switch (a->type) {
			case EV_ARG_CODE:
				args[n].type = FXT_ARG_STRING;
				args[n].v.str = intern(w, "caller_a");
				break;
			case EV_ARG_BOOL:
				args[n].type = FXT_ARG_BOOL;
				args[n].v.b = a->value != 0;
				break;
			case EV_ARG_PTR:
				args[n].type = FXT_ARG_POINTER;
				args[n].v.ptr = a->value;
				break;
			case EV_ARG_I64:
				args[n].type = FXT_ARG_INT64;
				args[n].v.i64 = (int64_t)a->value;
				break;
			default:
				args[n].type = FXT_ARG_UINT64;
				args[n].v.u64 = a->value;
				break;
			}
			args[n].name = intern(w, agent_key_name(a->key));
		}
		memset(&ev, 0, sizeof(ev));
		ev.type = FXT_EVENT_DURATION_COMPLETE;
		ev.thread = th;
		ev.category = intern(w, fi->category);
		ev.name = intern(w, fi->name);
		ev.ts = conv_tb_ns(tb, c->start);
		ev.extra = conv_tb_ns(tb, c->end);
		ev.args = args;
		ev.nargs = n;
		if (fxt_writer_event(w, &ev) < 0)
			return -1;
	}
	return fxt_writer_flush(w);
}

static void list_of(const struct call *c, struct recon_args *l, struct recon_arg *v)
{
	memset(l, 0, sizeof(*l));
	v[0] = (struct recon_arg){ AGENT_KEY_CALLER, ARGT_RETURN, c->caller, 0, 0 };
	memcpy(v + 1, c->v, c->n * sizeof(*v));
	l->n = l->cap = 1 + c->n;
	l->v = v;
}

/* ONCE records, as the replay gives them (recon_once): a lock, a
 * malloc, the same again (cached), a free (no result), a lock from
 * another caller (its name not registered yet), then from it again, an
 * unlock without a caller. */
static const struct {
	struct recon_once o;
	uint64_t start, end;
} onces[] = {
	{ { 0x1011, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  100,
	  103 },
	{ { 0x1011, 64, 0x5000, AGENT_FN_malloc, AGENT_KEY_SIZE, EV_ARG_U64, EV_ARG_PTR + 1 },
	  110,
	  113 },
	{ { 0x1011, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  120,
	  123 },
	{ { 0x1011, 96, 0x5040, AGENT_FN_malloc, AGENT_KEY_SIZE, EV_ARG_U64, EV_ARG_PTR + 1 },
	  130,
	  133 },
	{ { 0x1011, 0x5000, 0, AGENT_FN_free, AGENT_KEY_PTR, EV_ARG_PTR, 0 }, 140, 142 },
	{ { 0x1011, 0x5040, 0, AGENT_FN_free, AGENT_KEY_PTR, EV_ARG_PTR, 0 }, 150, 152 },
	{ { 0x2022, 0xabc0, (uint64_t)-1, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  160,
	  163 },
	{ { 0x2022, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  170,
	  173 },
	{ { 0, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  180,
	  183 },
	/* Each function again, twice: nothing registered since. */
	{ { 0x1011, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  190,
	  193 },
	{ { 0x2022, 32, 0x5080, AGENT_FN_malloc, AGENT_KEY_SIZE, EV_ARG_U64, EV_ARG_PTR + 1 },
	  200,
	  203 },
	{ { 0x1011, 0x5080, 0, AGENT_FN_free, AGENT_KEY_PTR, EV_ARG_PTR, 0 }, 210, 212 },
	{ { 0x2022, 0xabc0, 0, AGENT_FN_pthread_mutex_lock, AGENT_KEY_MUTEX, EV_ARG_PTR,
	    EV_ARG_I64 + 1 },
	  220,
	  223 },
	{ { 0x2022, 48, 0x50c0, AGENT_FN_malloc, AGENT_KEY_SIZE, EV_ARG_U64, EV_ARG_PTR + 1 },
	  230,
	  233 },
	{ { 0x2022, 0x50c0, 0, AGENT_FN_free, AGENT_KEY_PTR, EV_ARG_PTR, 0 }, 240, 242 },
};
/* Those that must be left to conv_emit_call(): a function's, a caller's
 * first (strings to register); and those that must not (the last three). */
static const size_t fall_back[] = { 0, 1, 4, 6 }, direct_last = 3;
#define NONCES (sizeof(onces) / sizeof(onces[0]))

/* A ONCE record's entries, as recon_leaf() gets them from the replay. */
static void once_list(const struct recon_once *o, struct recon_args *l, struct recon_arg *v)
{
	unsigned n = 0;

	memset(l, 0, sizeof(*l));
	if (o->caller)
		v[n++] = (struct recon_arg){ AGENT_KEY_CALLER, ARGT_RETURN, o->caller, 0, 0 };
	v[n++] = (struct recon_arg){ o->key, o->type, o->value, 0, 0 };
	if (o->res_type)
		v[n++] = (struct recon_arg){ AGENT_KEY_RESULT, o->res_type - 1u, o->result, 0, 0 };
	l->n = l->cap = n;
	l->v = v;
}

/* The ONCE records written by conv_emit_once() where it can, else (and
 * with `once` false, always) by conv_emit_call(); how many went by
 * conv_emit_once(), or -1; direct[i] says whether record i did. */
static int write_onces(struct emitter *e, bool once, bool *direct_i)
{
	int direct = 0;

	for (size_t i = 0; i < NONCES && direct >= 0; i++) {
		struct recon_slot s = { EV_CALL_ADDR(onces[i].o.fn), onces[i].start, onces[i].end };
		struct recon_arg v[3];
		struct recon_args l;
		int r = once ? conv_emit_once(&e->ctx, &s, &onces[i].o, 1) : 0;

		direct_i[i] = r == 1;
		if (r == 1) {
			direct++;
			continue;
		}
		once_list(&onces[i].o, &l, v);
		if (r < 0 || conv_emit_call(&e->ctx, &s, &l) != 1)
			direct = -1;
	}
	return direct;
}

/* The entries of either table, at most. */
#define NENTRIES (NONCES > NCALLS ? NONCES : NCALLS)

/* The sides compared.  Each writes into its emitter and says how many of
 * its entries went straight into the buffer (-1: an error); direct[i]
 * says whether entry i did. */
static int calls_direct(struct emitter *e, bool *direct_i)
{
	int direct = 0;

	for (size_t i = 0; i < NCALLS; i++) {
		const struct call *c = &calls[i];
		struct recon_slot s = { EV_CALL_ADDR(c->fn), c->start, c->end };
		struct recon_arg v[5];
		struct recon_args l;

		list_of(c, &l, v);
		direct_i[i] = conv_emit_call(&e->ctx, &s, &l) == 1;
		direct += direct_i[i];
	}
	return direct;
}

static int calls_general(struct emitter *e, bool *direct_i)
{
	(void)direct_i;
	return general(e->w, &e->com.tb) == 0 ? 0 : -1;
}

static int onces_once(struct emitter *e, bool *direct_i)
{
	return write_onces(e, true, direct_i);
}

static int onces_call(struct emitter *e, bool *direct_i)
{
	return write_onces(e, false, direct_i);
}

/* What side a's count must be: every call, written straight. */
static bool all_calls(int n, const bool *direct_i)
{
	(void)direct_i;
	return n == (int)NCALLS;
}

/* Some ONCE records by conv_emit_once(), the last direct_last among
 * them, but none of the first of a function or a caller. */
static bool some_onces(int n, const bool *direct_i)
{
	bool first = false, last = true;

	for (size_t i = 0; i < sizeof(fall_back) / sizeof(fall_back[0]); i++)
		first = first || direct_i[fall_back[i]];
	for (size_t i = NONCES - direct_last; i < NONCES; i++)
		last = last && direct_i[i];
	return n > 0 && !first && last;
}

/* After the calls: an errno's name (an inline string) is the general
 * encoder's, and conv_emit_call() writes nothing of it. */
static void errno_left(struct emitter *e)
{
	struct recon_arg v[2] = { { AGENT_KEY_RESULT, EV_ARG_I64, 2, 0, 0 },
				  { KEY_ERROR, EV_ARG_ERRNO, 2, 0, 0 } };
	struct recon_args l = { .n = 2, .cap = 2, .v = v };
	struct recon_slot s = { EV_CALL_ADDR(AGENT_FN_open), 300, 310 };
	size_t before = fxt_writer_bytes(e->w);

	ok(conv_emit_call(&e->ctx, &s, &l) == 0 && before == fxt_writer_bytes(e->w),
	   "an errno's name: left to the general encoder, nothing written");
}

int main(void)
{
	/* Two ways of writing the same entries, whose bytes must be the
	 * same: a's count checked by a_ok, b's count 0 (all its entries
	 * by the way a falls back on), then the bytes. */
	static const struct {
		const char *a_what, *b_what, *same;
		int (*a)(struct emitter *e, bool *direct_i);
		int (*b)(struct emitter *e, bool *direct_i);
		bool (*a_ok)(int n, const bool *direct_i);
		void (*after)(struct emitter *e); /* more checks on a's emitter */
	} cases[] = {
		{ "every call written straight", "both written",
		  "the general encoder's bytes, strings registered in the same order", calls_direct,
		  calls_general, all_calls, errno_left },
		{ "ONCE records: some written by conv_emit_once(), the last ones among them; the "
		  "first of a function or a caller left to conv_emit_call()",
		  "and all by conv_emit_call()", "conv_emit_once()'s bytes are conv_emit_call()'s",
		  onces_once, onces_call, some_onces, NULL },
	};
	bool direct_a[NENTRIES], direct_b[NENTRIES];

	plan(7);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct emitter a, b;
		const void *da, *db;
		size_t la, lb;

		if (emitter_open(&a) < 0 || emitter_open(&b) < 0)
			bail_out("writers");
		int na = cases[i].a(&a, direct_a), nb = cases[i].b(&b, direct_b);
		ok(na >= 0 && fxt_writer_flush(a.w) == 0 && cases[i].a_ok(na, direct_a), "%s (%d)",
		   cases[i].a_what, na);
		ok(nb == 0 && fxt_writer_flush(b.w) == 0, "%s (%d)", cases[i].b_what, nb);
		da = fxt_writer_mem_data(a.w, &la);
		db = fxt_writer_mem_data(b.w, &lb);
		ok(la == lb && la > 0 && memcmp(da, db, la) == 0, "%s (%zu and %zu)", cases[i].same,
		   la, lb);
		if (cases[i].after)
			cases[i].after(&a);
		emitter_free(&a);
		emitter_free(&b);
	}
	return exit_status();
}
