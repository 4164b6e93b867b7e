/* Unit tests of the function records the conversion writes
 * (FXT_OBJ_FUNCTION, convert/emit.c): one per function, with its module
 * and its source location, whichever of the two encoders wrote it, many
 * distinct locations, and locations the lookup has later (after the
 * thread's slices; before them, on each, with loc_args).  Spools and archives as in
 * test_convert_pipeline.c (convert_test_archive.h). */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include <fxt/reader.h>

#include "convert/entries.h"
#include "convert/pipeline.h"
#include "tools/front/srcloc.h"
#include "tests/unit/convert_test_archive.h"

/* Locations for test_func_records(): FILE:LINE ones, which the record
 * carries as its file's ref and the line (include/fxt/format.h; also
 * inlined, line 0 and the largest uint32), then the ones it carries as
 * text: a file not UTF-8 (cleaned), longer than MESSAGE_MAX (no
 * FILE:LINE, the general encoder's), no debug info, and FILE:LINE ones
 * whose line the integer would not give back as written (a leading
 * zero, past uint32, no file).  rec_new: whether in the first form. */
static char long_loc[MESSAGE_MAX + 100];
static const char *const rec_locs[] = {
	"a.c:1",	  "caf\xe9.c:2", "src/b.c:12 (inlined)", "c.c:0",
	"d.c:4294967295", long_loc,	 "(no debug info)",	 "e.c:007",
	"f.c:4294967296", ":5",
};
static const bool rec_new[] = { true, false, true, true, true, false, false, false, false, false };
#define REC_N (sizeof(rec_locs) / sizeof(rec_locs[0]))

static const struct fxt_sym_info *rec_lookup(void *ctx, uint64_t addr)
{
	static struct fxt_sym_info info[REC_N];
	static char names[REC_N][16];
	size_t i = ((addr - 0x1000) / 16) % REC_N;

	(void)ctx;
	snprintf(names[i], sizeof(names[i]), "g%zu", i);
	info[i] = (struct fxt_sym_info){
		.name = names[i], .module = "mod", .start = addr, .loc = rec_locs[i]
	};
	return &info[i];
}

/* Each function's location record (FXT_OBJ_FUNCTION) names it, its module
 * and its location as conv_inline_value() leaves it (UTF-8, cut at
 * MESSAGE_MAX), read back by the readers' tool_srcloc_text(), in the form
 * rec_new says, whichever encoder wrote it. */
static void test_func_records(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	void *keep = NULL;
	size_t keep_len = 0, seen = 0, bad = 0, badform = 0;
	struct fxt_reader *r;
	struct fxt_record rec;

	memset(long_loc, 'x', sizeof(long_loc) - 1);
	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < REC_N; i++) {
		test_hook(&t, 0x1000 + i * 16);
		test_hook(&t, (0x1000 + i * 16) | EXIT);
	}
	t.tid = 13;
	convert_ok(
	    &a,
	    &(struct conv_opts){
		.now = ~0ull >> 2, .lookup = rec_lookup, .keep = &keep, .keep_len = &keep_len },
	    &st, "function records");
	if (keep && fxt_reader_open_mem(&r, keep, keep_len, FXT_READER_VALIDATE) == 0) {
		while (fxt_reader_next(r, &rec) > 0) {
			static char want[MESSAGE_MAX + 100];
			const struct fxt_string *mod = NULL;
			bool text = false;
			char *loc;
			size_t i, n;

			if (rec.type != FXT_RECORD_KERNEL_OBJECT ||
			    rec.u.kobj.obj_type != FXT_OBJ_FUNCTION)
				continue;
			i = (rec.u.kobj.koid - 0x1000) / 16;
			for (unsigned k = 0; k < rec.nargs; k++) {
				if (rec.args[k].type != FXT_ARG_STRING)
					continue;
				if (rec.args[k].name.len == strlen(FXT_LOC_ARG_MODULE) &&
				    !memcmp(rec.args[k].name.data, FXT_LOC_ARG_MODULE,
					    rec.args[k].name.len))
					mod = &rec.args[k].v.s;
				else if (rec.args[k].name.len == strlen(FXT_LOC_ARG) &&
					 !memcmp(rec.args[k].name.data, FXT_LOC_ARG,
						 rec.args[k].name.len))
					text = true;
			}
			seen++;
			loc = tool_srcloc_text(&rec);
			if (i >= REC_N || !mod || !loc) {
				free(loc);
				bad++;
				continue;
			}
			if (text == rec_new[i] || rec.nargs != (text ? 2u : i == 2 ? 4u : 3u)) {
				diag("  function %zu: %u arguments, %s", i, rec.nargs,
				     text ? "the text" : "file and line");
				badform++;
			}
			n = fxt_utf8_cut(want,
					 fxt_utf8_clean(want, rec_locs[i], strlen(rec_locs[i])),
					 MESSAGE_MAX);
			if (rec.u.kobj.name.len != 2 || memcmp(rec.u.kobj.name.data, "g", 1) ||
			    rec.u.kobj.name.data[1] != (char)('0' + i) || mod->len != 3 ||
			    memcmp(mod->data, "mod", 3) || strlen(loc) != n ||
			    memcmp(loc, want, n)) {
				diag("  function %zu: %.*s module=%.*s loc=%.40s", i,
				     (int)rec.u.kobj.name.len, rec.u.kobj.name.data, (int)mod->len,
				     mod->data, loc);
				bad++;
			}
			free(loc);
		}
		fxt_reader_free(r);
	}
	ASSERT_EQ_U64(badform, 0,
		      "function records: FILE:LINE as the file's ref and the line, else the text");
	ASSERT_EQ_U64(seen, REC_N, "function records: one a function");
	ASSERT_EQ_U64(bad, 0, "function records: name, module and location, as made inline");
	free(keep);
	free(a.ev);
}

/* Names and locations for test_many_locs(): "f<addr>" at "f.c:<addr>",
 * made once per address and kept (the name table holds the lookup's
 * strings until the conversion ends). */
#define LOCS_N 40000
static struct fxt_sym_info loc_infos[LOCS_N];

static const struct fxt_sym_info *loc_lookup(void *ctx, uint64_t addr)
{
	struct fxt_sym_info *info = &loc_infos[((addr - 0x1000) / 16) % LOCS_N];
	char buf[32];

	(void)ctx;
	if (!info->name) {
		snprintf(buf, sizeof(buf), "f%llx", (unsigned long long)addr);
		info->name = strdup(buf);
		snprintf(buf, sizeof(buf), "f.c:%llu", (unsigned long long)addr);
		info->loc = strdup(buf);
		info->module = "m";
		info->start = addr;
		if (!info->name || !info->loc)
			bail_out("strdup");
	}
	return info;
}

/* fxt-run --srcline with more than 32,767 strings (names and locations,
 * 80,000): every slice carries its own function's name and "loc" (the
 * hot path's words follow the evictions), and a location record comes
 * once per function. */
static void test_many_locs(void)
{
	const uint64_t n = LOCS_N, again = 2000;
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	size_t bad = 0, k = 0;
	char want[32], wloc[32];
	void *keep = NULL;
	size_t keep_len = 0, nloc = 0;
	struct fxt_reader *r;
	struct fxt_record rec;

	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < n + again; i++) {
		uint64_t addr = 0x1000 + (i % n) * 16;
		test_hook(&t, addr);
		test_hook(&t, addr | EXIT);
	}
	t.tid = 12;
	convert_ok(&a,
		   &(struct conv_opts){ .now = ~0ull >> 2,
					.lookup = loc_lookup,
					.loc_args = true,
					.keep = &keep,
					.keep_len = &keep_len },
		   &st, "locs");
	ASSERT_EQ_U64(st.events, n + again, "locs: all events");
	for (size_t i = 0; i < a.nev; i++) {
		uint64_t addr = 0x1000 + (k % n) * 16;

		if (a.ev[i].type != FXT_EVENT_DURATION_COMPLETE)
			continue;
		snprintf(want, sizeof(want), "f%llx", (unsigned long long)addr);
		snprintf(wloc, sizeof(wloc), "f.c:%llu", (unsigned long long)addr);
		if ((strcmp(a.ev[i].name, want) != 0 || a.ev[i].nargs != 1 ||
		     strcmp(a.ev[i].args[0].name, FXT_LOC_ARG) != 0 ||
		     strcmp(a.ev[i].args[0].s, wloc) != 0) &&
		    bad++ < 3)
			diag("  event %zu: %s %s=%s, want %s loc=%s", k, a.ev[i].name,
			     a.ev[i].nargs ? a.ev[i].args[0].name : "-",
			     a.ev[i].nargs ? a.ev[i].args[0].s : "-", want, wloc);
		k++;
	}
	ASSERT_EQ_U64(bad, 0, "locs: every slice carries its own name and location");
	if (keep && fxt_reader_open_mem(&r, keep, keep_len, 0) == 0) {
		while (fxt_reader_next(r, &rec) > 0)
			nloc += rec.type == FXT_RECORD_KERNEL_OBJECT &&
				rec.u.kobj.obj_type == FXT_OBJ_FUNCTION;
		fxt_reader_free(r);
	}
	ASSERT_EQ_U64(nloc, n, "locs: one location record per function");
	for (size_t i = 0; i < LOCS_N; i++) {
		free((char *)loc_infos[i].name);
		free((char *)loc_infos[i].loc);
	}
	free(keep);
	free(a.ev);
}

/* A lookup whose locations come later (FXT_SYM_LOC_LATER, a view whose
 * thread still decodes them: symbolizer/runcache.h), and the later look-up
 * of them, counted. */
#define LATER_N 50
static unsigned later_asked;

static const struct fxt_sym_info *later_lookup(void *ctx, uint64_t addr)
{
	static struct fxt_sym_info info[LATER_N];
	static char names[LATER_N][16];
	size_t i = ((addr - 0x1000) / 16) % LATER_N;

	(void)ctx;
	snprintf(names[i], sizeof(names[i]), "h%zu", i);
	info[i] = (struct fxt_sym_info){
		.name = names[i], .module = "mod", .start = addr, .loc = FXT_SYM_LOC_LATER
	};
	return &info[i];
}

static const char *later_loc(void *ctx, uint64_t addr, uint32_t *file, uint32_t *line)
{
	static char locs[LATER_N][16];
	size_t i = ((addr - 0x1000) / 16) % LATER_N;

	(void)ctx;
	later_asked++;
	snprintf(locs[i], sizeof(locs[i]), "later.c:%zu", i + 1);
	/* Every other one with its parts said, as the symbolizer says them
	 * (fxt_sym_info.loc_file, loc_line): the same record either way. */
	*file = i % 2 ? 0 : (uint32_t)strlen("later.c");
	*line = i % 2 ? 0 : (uint32_t)(i + 1);
	return locs[i];
}

/* Each function's record, its location asked once: after the thread's
 * last slice; with loc_args (fxt-run --srcline), before its first slice,
 * which carries it too. */
static void test_later_locs(bool loc_args)
{
	const char *how = loc_args ? "later, --srcline" : "later";
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	void *keep = NULL;
	size_t keep_len = 0, nrec = 0, bad = 0, badslice = 0;
	uint64_t last_slice = 0, first_rec = ~0ull, last_rec = 0;
	struct fxt_reader *r;
	struct fxt_record rec;
	char want[32];

	test_spool_reset(1 << 20, 0);
	for (uint64_t k = 0; k < 3; k++)
		for (uint64_t i = 0; i < LATER_N; i++) {
			test_hook(&t, 0x1000 + i * 16);
			test_hook(&t, (0x1000 + i * 16) | EXIT);
		}
	t.tid = 14;
	later_asked = 0;
	convert_ok(&a,
		   &(struct conv_opts){ .now = ~0ull >> 2,
					.lookup = later_lookup,
					.loc_later = later_loc,
					.loc_args = loc_args,
					.keep = &keep,
					.keep_len = &keep_len },
		   &st, how);
	ASSERT_EQ_U64(st.events, 3 * LATER_N, "%s: all events", how);
	ASSERT_EQ_U64(later_asked, LATER_N, "%s: each location asked once", how);
	if (keep && fxt_reader_open_mem(&r, keep, keep_len, FXT_READER_VALIDATE) == 0) {
		while (fxt_reader_next(r, &rec) > 0) {
			uint64_t pos = fxt_reader_record_pos(r);

			if (rec.type == FXT_RECORD_EVENT &&
			    rec.u.event.type == FXT_EVENT_DURATION_COMPLETE) {
				last_slice = pos;
				badslice += loc_args != (rec.nargs == 1);
				continue;
			}
			if (rec.type != FXT_RECORD_KERNEL_OBJECT ||
			    rec.u.kobj.obj_type != FXT_OBJ_FUNCTION)
				continue;
			nrec++;
			first_rec = pos < first_rec ? pos : first_rec;
			last_rec = pos;
			snprintf(want, sizeof(want), "later.c:%llu",
				 (unsigned long long)((rec.u.kobj.koid - 0x1000) / 16 + 1));
			{
				char *loc = tool_srcloc_text(&rec);

				bad += !loc || strcmp(loc, want) != 0;
				free(loc);
			}
		}
		fxt_reader_free(r);
	}
	ASSERT_EQ_U64(nrec, LATER_N, "%s: one record a function", how);
	ASSERT_EQ_U64(bad, 0, "%s: each record its function's location", how);
	ASSERT_EQ_U64(badslice, 0, "%s: a loc argument on each slice only with loc_args", how);
	if (loc_args)
		ok(first_rec < last_slice && last_rec < last_slice,
		   "%s: the records come before the slices (the slices need the string)", how);
	else
		ok(first_rec > last_slice, "%s: the records come after the thread's slices", how);
	free(keep);
	free(a.ev);
}

/* Functions for test_many_files(): "h<addr>" at "dir/d<N>.c:<line>", a
 * file for the first 38,000 functions, then a file every three, made once
 * per address and kept. */
static struct fxt_sym_info file_infos[LOCS_N];

static void file_loc(uint64_t i, char *buf, size_t cap)
{
	snprintf(buf, cap, "dir/d%llu.c:%llu", (unsigned long long)(i < 38000 ? 0 : i / 3),
		 (unsigned long long)(i * 7 + 1));
}

static const struct fxt_sym_info *file_lookup(void *ctx, uint64_t addr)
{
	uint64_t i = ((addr - 0x1000) / 16) % LOCS_N;
	struct fxt_sym_info *info = &file_infos[i];
	char buf[48];

	(void)ctx;
	if (!info->name) {
		snprintf(buf, sizeof(buf), "h%llx", (unsigned long long)addr);
		info->name = strdup(buf);
		file_loc(i, buf, sizeof(buf));
		info->loc = strdup(buf);
		info->module = "m";
		info->start = addr;
		if (!info->name || !info->loc)
			bail_out("strdup");
	}
	return info;
}

/* 40,000 functions, one call each, 38,000 of one file, then of a file
 * every three: more strings (their names and files) than the writer's
 * table holds, so the location words conv_emit_loc() keeps from one
 * function to the next (the keys', the file's) must be interned again as
 * the writer's contract says (FXT_WRITER_REF_LIFE), not kept for the
 * whole file: every record's refs registered (the reader validates) and
 * its location, read back as text, its function's (kept forever, the
 * first file's ref names a function by the 32,768th string). */
static void test_many_files(void)
{
	struct test_thread t = { 0 };
	struct archive a;
	struct conv_stats st;
	void *keep = NULL;
	size_t keep_len = 0, nrec = 0, bad = 0;
	struct fxt_reader *r;
	struct fxt_record rec;
	char want[48];
	int rc = -1;

	test_spool_reset(1 << 20, 0);
	for (uint64_t i = 0; i < LOCS_N; i++) {
		test_hook(&t, 0x1000 + i * 16);
		test_hook(&t, (0x1000 + i * 16) | EXIT);
	}
	t.tid = 15;
	convert_ok(
	    &a,
	    &(struct conv_opts){
		.now = ~0ull >> 2, .lookup = file_lookup, .keep = &keep, .keep_len = &keep_len },
	    &st, "files");
	if (keep && fxt_reader_open_mem(&r, keep, keep_len, FXT_READER_VALIDATE) == 0) {
		while ((rc = fxt_reader_next(r, &rec)) > 0) {
			char *loc;

			if (rec.type != FXT_RECORD_KERNEL_OBJECT ||
			    rec.u.kobj.obj_type != FXT_OBJ_FUNCTION)
				continue;
			nrec++;
			file_loc((rec.u.kobj.koid - 0x1000) / 16, want, sizeof(want));
			loc = tool_srcloc_text(&rec);
			if ((!loc || strcmp(loc, want) != 0 || rec.nargs != 3) && bad++ < 3)
				diag("  function %llx: %s, want %s",
				     (unsigned long long)rec.u.kobj.koid, loc ? loc : "(none)",
				     want);
			free(loc);
		}
		fxt_reader_free(r);
	}
	ok(rc == 0, "files: the archive reads to its end, every ref registered");
	ASSERT_EQ_U64(nrec, LOCS_N, "files: one record a function");
	ASSERT_EQ_U64(bad, 0, "files: each record its function's file and line");
	for (size_t i = 0; i < LOCS_N; i++) {
		free((char *)file_infos[i].name);
		free((char *)file_infos[i].loc);
	}
	free(keep);
	free(a.ev);
}

int main(void)
{
	plan(31);
	test_many_files();
	test_many_locs();
	test_func_records();
	test_later_locs(false);
	test_later_locs(true);
	return exit_status();
}
