/* A function's source location record (emit.h, conv_emit_loc();
 * include/fxt/format.h, FXT_OBJ_FUNCTION): the location "FILE:LINE" as
 * the file's ref and the line (as the symbolizer made them, else
 * split_loc()), the text when it is no such
 * location or with --srcline, written straight into the writer's buffer
 * in one pass, the keys' and the file's refs kept across functions
 * (file_words()). */
#include <config.h>

#include <string.h>

#include <fxt/format.h>
#include <fxt/utf8.h>

#include "convert/emit.h"

/* "FILE:LINE[ (inlined)]" split: FILE's length in *file_len, LINE in
 * *line, whether inlined in *inl; false when `loc` is no such text, or
 * not one that FILE, ":", LINE in decimal and the suffix give back
 * byte for byte (tools/front/srcloc.c, tool_srcloc_text()): then the
 * record carries the text (include/fxt/format.h). */
static bool split_loc(const char *loc, size_t len, size_t *file_len, uint32_t *line, bool *inl)
{
	const size_t sl = sizeof(FXT_LOC_INLINED) - 1;
	uint64_t v = 0, mul = 1;
	unsigned c = 0;
	size_t d;

	/* (A suffix ends in ')', which no line does.) */
	*inl = len > sl && loc[len - 1] == ')' && memcmp(loc + len - sl, FXT_LOC_INLINED, sl) == 0;
	if (*inl)
		len -= sl;
	/* The line's digits from the last, its value with them (at most 10:
	 * no overflow of v). */
	for (d = len; d > 0 && len - d < 10 && (c = (unsigned char)loc[d - 1] - '0') <= 9; d--) {
		v += c * mul;
		mul *= 10;
	}
	if (d == len || d < 2 || loc[d - 1] != ':' || (len - d > 1 && loc[d] == '0') ||
	    v > UINT32_MAX)
		return false; /* (10 digits and one more before them: no ':' there) */
	*file_len = d - 1;
	*line = (uint32_t)v;
	return true;
}

/* A location's arguments: key, type and value (a string's ref, a uint32,
 * a bool's true), as the record's words or the general encoder's. */
struct loc_arg {
	struct fxt_sref key, str;
	unsigned type;
	uint32_t num;
};

static bool indexed(struct fxt_sref r)
{
	return r.ref && !fxt_strref_is_inline(r.ref);
}

/* The FXT_OBJ_FUNCTION record of conv_emit_loc() in one pass, straight
 * into the writer's buffer, when its name and every argument's key and
 * string are indexed refs; else (or on an error, which it then says) the
 * general encoder.  One a function: the encoder's two passes, and the
 * location as text (up to a path's length, a string per function), were
 * most of what a location cost past reading the line table
 * (bench/srcline.sh). */
static void put_function(struct emit_ctx *ctx, struct sym_entry *e, struct fxt_sref name,
			 const struct loc_arg *a, unsigned nargs)
{
	struct fxt_arg ga[4];
	bool fast = indexed(name);
	uint64_t *out;

	for (unsigned i = 0; i < nargs; i++)
		fast =
		    fast && indexed(a[i].key) && (a[i].type != FXT_ARG_STRING || indexed(a[i].str));
	if (fast && (out = fxt_writer_reserve(ctx->w, 2 + nargs)) != NULL) {
		out[0] = fxt_field(FXT_RECORD_KERNEL_OBJECT, 0, 3) | fxt_field(2 + nargs, 4, 15) |
			 fxt_field(FXT_OBJ_FUNCTION, 16, 23) | fxt_field(name.ref, 24, 39) |
			 fxt_field(nargs, 40, 43);
		out[1] = e->addr;
		for (unsigned i = 0; i < nargs; i++)
			out[2 + i] =
			    fxt_arg_header(a[i].type, 1, a[i].key.ref,
					   a[i].type == FXT_ARG_STRING ? a[i].str.ref : a[i].num);
		fxt_writer_commit(ctx->w, 2 + nargs);
		return;
	}
	memset(ga, 0, sizeof(ga));
	for (unsigned i = 0; i < nargs; i++) {
		ga[i].type = a[i].type;
		ga[i].name = a[i].key;
		if (a[i].type == FXT_ARG_STRING)
			ga[i].v.str = a[i].str;
		else if (a[i].type == FXT_ARG_UINT32)
			ga[i].v.u32 = a[i].num;
		else
			ga[i].v.b = a[i].num != 0;
	}
	fxt_writer_kernel_object(ctx->w, FXT_OBJ_FUNCTION, e->addr, name, ga, nargs);
}

#define LOC_KEY(w, slot, key) fxt_writer_string_cached(w, slot, key, strlen(key))

/* The module's, the file's and the line's keys and the file's ref of a
 * FILE:LINE location whose FILE is `len` bytes of e->loc, in com's
 * loc_words: as interned for the last file (its functions come together)
 * while the writer registered fewer than half FXT_WRITER_REF_LIFE
 * strings since (the other half: the record's own, the function's name
 * and module), else interned now; false when the file is no valid UTF-8
 * (a string record must be: the text then, cleaned). */
static bool file_words(struct emit_common *com, struct fxt_writer *w, const struct sym_entry *e,
		       size_t len)
{
	bool same = com->loc_file_len == len && memcmp(com->loc_file, e->loc, len) == 0;

	if (same && com->loc_words_ok &&
	    fxt_writer_registrations(w) - com->loc_regs < FXT_WRITER_REF_LIFE / 2)
		return true;
	if (!same) {
		memset(&com->loc_file_slot, 0, sizeof(com->loc_file_slot));
		com->loc_file_len = 0;
		if (!fxt_utf8_valid(e->loc, len))
			return false;
		if (len <= sizeof(com->loc_file)) {
			memcpy(com->loc_file, e->loc, len);
			com->loc_file_len = len;
		}
	}
	com->loc_file_ref = com->loc_file_len
				? fxt_writer_string_cached(w, &com->loc_file_slot, e->loc, len)
				: fxt_writer_string(w, e->loc, len); /* too long to keep */
	com->loc_mod_key = LOC_KEY(w, &com->loc_module_slot, FXT_LOC_ARG_MODULE);
	com->loc_file_key = LOC_KEY(w, &com->loc_file_key_slot, FXT_LOC_ARG_FILE);
	com->loc_line_key = LOC_KEY(w, &com->loc_line_key_slot, FXT_LOC_ARG_LINE);
	com->loc_regs = fxt_writer_registrations(w);
	com->loc_words_ok = com->loc_file_len && indexed(com->loc_file_ref) &&
			    indexed(com->loc_mod_key) && indexed(com->loc_file_key) &&
			    indexed(com->loc_line_key);
	return true;
}

void conv_emit_loc(struct emit_ctx *ctx, struct sym_entry *e)
{
	struct emit_common *com = ctx->com;
	char *scratch = com->scratch;
	struct fxt_sref name;
	struct loc_arg a[4];
	unsigned nargs = 2;
	size_t file_len;
	uint32_t line;
	bool inl;

	e->loc_done = true;
	if ((e->loc_later && !conv_names_loc_due(ctx->names, e, com->loc_args)) || !e->loc)
		return; /* none, or after the thread's events (conv_names_take_later()) */
	a[0].type = a[1].type = FXT_ARG_STRING;
	/* The parts the symbolizer said (what split_loc() would give back:
	 * symbolizer.h), else read from the text. */
	if (e->loc_file) {
		file_len = e->loc_file & ~FXT_SYM_LOC_INL;
		line = e->loc_line;
		inl = (e->loc_file & FXT_SYM_LOC_INL) != 0;
	}
	if (!com->loc_args &&
	    (e->loc_file || split_loc(e->loc, e->loc_len, &file_len, &line, &inl)) &&
	    file_words(com, ctx->w, e, file_len)) {
		a[0].key = com->loc_mod_key;
		a[1].key = com->loc_file_key;
		a[1].str = com->loc_file_ref;
		a[2].type = FXT_ARG_UINT32;
		a[2].key = com->loc_line_key;
		a[2].num = line;
		nargs = 3;
		if (inl) {
			a[3].type = FXT_ARG_BOOL;
			a[3].key = LOC_KEY(ctx->w, &com->loc_inl_key_slot, FXT_LOC_ARG_INLINED);
			a[3].num = 1;
			nargs = 4;
		}
	} else {
		a[0].key = LOC_KEY(ctx->w, &com->loc_module_slot, FXT_LOC_ARG_MODULE);
		a[1].key = LOC_KEY(ctx->w, &com->loc_key_slot, FXT_LOC_ARG);
		/* The text: with loc_args, the table entry the slices'
		 * FXT_LOC_ARG share; else (no FILE:LINE, "(no debug info)", or
		 * a file not UTF-8) a table entry too (one for all that say the
		 * same), or cleaned, inline. */
		a[1].str = com->loc_args ||
				   (e->loc_len <= MESSAGE_MAX && fxt_utf8_valid(e->loc, e->loc_len))
			       ? fxt_writer_string_cached(ctx->w, &e->loc_slot, e->loc, e->loc_len)
			       : conv_inline_value(&scratch, e->loc, e->loc_len, MESSAGE_MAX);
	}
	a[0].str = fxt_writer_string_cached(ctx->w, &e->cat_slot, e->cat, e->cat_len);
	name = fxt_writer_string_cached(ctx->w, &e->name_slot, e->name, e->name_len);
	ctx->names->epoch++; /* strings registered */
	if (!com->loc_args) {
		/* The slices' refs are these (conv_function_refs() has nothing
		 * to do for them then): no string registered after them. */
		e->cat_ref = a[0].str;
		e->name_ref = name;
		e->ref_bits = fxt_event_header_refs(e->cat_ref.ref, e->name_ref.ref);
		e->epoch = ctx->names->epoch;
	}
	if (nargs == 3 && com->loc_words_ok && indexed(a[0].str) && indexed(name)) {
		/* The common one, its words known indexed: put_function()'s
		 * without its tests. */
		uint64_t *out = fxt_writer_reserve(ctx->w, 5);

		if (out) {
			out[0] = fxt_field(FXT_RECORD_KERNEL_OBJECT, 0, 3) | fxt_field(5, 4, 15) |
				 fxt_field(FXT_OBJ_FUNCTION, 16, 23) | fxt_field(name.ref, 24, 39) |
				 fxt_field(3, 40, 43);
			out[1] = e->addr;
			out[2] = fxt_arg_header(FXT_ARG_STRING, 1, a[0].key.ref, a[0].str.ref);
			out[3] = fxt_arg_header(FXT_ARG_STRING, 1, a[1].key.ref, a[1].str.ref);
			out[4] = fxt_arg_header(FXT_ARG_UINT32, 1, a[2].key.ref, line);
			fxt_writer_commit(ctx->w, 5);
			return;
		}
	}
	put_function(ctx, e, name, a, nargs);
}
