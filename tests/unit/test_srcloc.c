/* The functions' source locations an archive carries (tools/front/srcloc.c):
 * records written as fxt-run writes them (include/fxt/format.h,
 * FXT_OBJ_FUNCTION), read back through the reader, looked up by category
 * and name: 600 functions (the table grows), the first record of a
 * function wins, records of other kernel objects or without the arguments
 * say nothing, and a table without records finds nothing; in both forms of
 * the location, the text and the file's ref with the line.  And fxt-export
 * (tools/export/export_chrome.c) gives a slice its function's location
 * when the record comes after the slice, as fxt-run writes the locations
 * its lookup had later (convert/pipeline.h). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fxt/format.h>
#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"
#include "tools/export/export.h"
#include "tools/front/common.h"
#include "tools/front/srcloc.h"

static struct fxt_writer *w;

/* A function's record; `module` NULL: without that argument. */
static void function_loc(uint64_t addr, const char *module, const char *name, const char *loc)
{
	struct fxt_arg a[2];
	unsigned n = 0;

	memset(a, 0, sizeof(a));
	if (module) {
		a[n].type = FXT_ARG_STRING;
		a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG_MODULE);
		a[n++].v.str = fxt_writer_cstring(w, module);
	}
	a[n].type = FXT_ARG_STRING;
	a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG);
	a[n++].v.str = fxt_sref_inline(loc, strlen(loc));
	if (fxt_writer_kernel_object(w, FXT_OBJ_FUNCTION, addr, fxt_writer_cstring(w, name), a, n) <
	    0)
		bail_out("fxt_writer_kernel_object");
}

/* A function's record in the form fxt-run writes since 2026-11-29
 * (include/fxt/format.h): the file's ref, the line, "inlined" when
 * `inl`; `line` 0 with no file: neither argument (a record of ours that
 * says nothing). */
static void function_fl(uint64_t addr, const char *name, const char *file, uint32_t line, bool inl)
{
	struct fxt_arg a[4];
	unsigned n = 0;

	memset(a, 0, sizeof(a));
	a[n].type = FXT_ARG_STRING;
	a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG_MODULE);
	a[n++].v.str = fxt_writer_cstring(w, "app");
	if (file) {
		a[n].type = FXT_ARG_STRING;
		a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG_FILE);
		a[n++].v.str = fxt_writer_cstring(w, file);
		a[n].type = FXT_ARG_UINT32;
		a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG_LINE);
		a[n++].v.u32 = line;
	}
	if (inl) {
		a[n].type = FXT_ARG_BOOL;
		a[n].name = fxt_writer_cstring(w, FXT_LOC_ARG_INLINED);
		a[n++].v.b = true;
	}
	if (fxt_writer_kernel_object(w, FXT_OBJ_FUNCTION, addr, fxt_writer_cstring(w, name), a, n) <
	    0)
		bail_out("fxt_writer_kernel_object");
}

/* `json` of `len` bytes exported from the archive in memory, into a
 * memory stream (`file` false: a pipe's way, the locations skimmed
 * first) or a file (one pass, again from the start when a location comes
 * late for a slice written).  0 or the export's error. */
static int export_to(const void *mem, size_t len, bool file, char **json, size_t *json_len,
		     struct export_stats *st)
{
	struct tool_input in = { 0 };
	char err[256];
	FILE *f;
	int rc;

	in.mem = mem;
	in.len = len;
	*json = NULL;
	*json_len = 0;
	f = file ? tmpfile() : open_memstream(json, json_len);
	if (!f)
		bail_out("open_memstream");
	if (file && fputs("before\n", f) < 0) /* the export starts past it */
		bail_out("fputs");
	rc = export_chrome(&in, f, true, st, err, sizeof(err));
	if (file) {
		long n = ftell(f);

		*json = calloc(1, n > 0 ? (size_t)n + 1 : 1);
		if (!*json || fseek(f, 0, SEEK_SET) != 0 ||
		    (n > 0 && fread(*json, 1, (size_t)n, f) != (size_t)n))
			bail_out("reading the export back");
		*json_len = (size_t)n;
	}
	fclose(f);
	return rc;
}

/* A slice of app's "f" at `ts`. */
static void slice_f(uint64_t ts)
{
	struct fxt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = FXT_EVENT_DURATION_COMPLETE;
	ev.ts = ts;
	ev.extra = ts + 1000;
	ev.thread = fxt_writer_thread(w, 7, 7);
	ev.category = fxt_writer_cstring(w, "app");
	ev.name = fxt_writer_cstring(w, "f");
	if (fxt_writer_event(w, &ev) < 0)
		bail_out("fxt_writer_event");
}

/* An archive of app: a located function "g" first when `g_first`, two
 * slices of "f", "f"'s location record after them when `late` (else
 * before them).  Exported into a memory stream and into a file, both
 * ways the same, and each slice has its function's location. */
static void test_export(bool g_first, bool late, const char *what)
{
	char *mem_json, *file_json;
	size_t mem_len, file_len, len;
	struct export_stats st;
	const char *p;
	int rc;

	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, 1000000000);
	fxt_writer_process_name(w, 7, "app");
	fxt_writer_thread_name(w, 7, 7, "app");
	if (g_first)
		function_loc(0x2000, "app", "g", "src/g.c:1");
	if (!late)
		function_loc(0x1000, "app", "f", "src/late.c:7");
	slice_f(1000);
	slice_f(3000);
	if (late)
		function_loc(0x1000, "app", "f", "src/late.c:7");
	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	p = fxt_writer_mem_data(w, &len);
	rc = export_to(p, len, false, &mem_json, &mem_len, NULL);
	ok(rc == 0, "%s: exported into memory", what);
	ok(mem_json && (p = strstr(mem_json, "\"args\":{\"" FXT_LOC_ARG "\":\"src/late.c:7\"}")) &&
	       strstr(p + 1, "\"args\":{\"" FXT_LOC_ARG "\":\"src/late.c:7\"}"),
	   "%s: both slices of f have its location", what);
	rc = export_to(fxt_writer_mem_data(w, &len), len, true, &file_json, &file_len, &st);
	ok(rc == 0, "%s: exported into a file", what);
	ok(file_len == mem_len + 7 && memcmp(file_json, "before\n", 7) == 0 &&
	       memcmp(file_json + 7, mem_json, mem_len) == 0,
	   "%s: the same JSON, after what the file had", what);
	if (file_len != mem_len + 7)
		diag("%s\n---\n%s", mem_json, file_json);
	ok(st.slices == 2 && st.processes == 1 && st.threads == 1, "%s: counted once", what);
	free(mem_json);
	free(file_json);
	fxt_writer_close(w);
}

static const char *find(const struct tool_srcloc *l, const char *cat, const char *name)
{
	return tool_srcloc_find(l, cat, strlen(cat), name, strlen(name));
}

int main(void)
{
	struct tool_srcloc l = { 0 };
	struct fxt_reader *r;
	struct fxt_record rec;
	char name[32], loc[32];
	const void *data;
	size_t len;
	unsigned seen = 0;
	bool all = true;
	int rc;

	ok(find(&l, "app", "main") == NULL, "an empty table finds nothing");
	if (fxt_writer_open_mem(&w, 0) < 0)
		bail_out("fxt_writer_open_mem");
	fxt_writer_magic(w);
	fxt_writer_provider(w, 1, "test");
	fxt_writer_initialization(w, 1000000000);
	fxt_writer_thread_name(w, 1, 1, "main");
	for (unsigned i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		snprintf(loc, sizeof(loc), "src/f.c:%u", i + 1);
		function_loc(0x1000 + i, "app", name, loc);
	}
	function_loc(0x1000, "app", "f0", "other.c:9");		    /* another process's build */
	function_loc(0x2000, "libc.so.6", "f1", "(no debug info)"); /* another module */
	function_loc(0x3000, NULL, "nomodule", "x.c:1");	    /* not ours: no module */
	function_fl(0x4000, "fl", "src/g.c", 42, false);	    /* file and line */
	function_fl(0x4010, "fl_inl", "/usr/include/h.h", 4294967295u, true);
	function_fl(0x4020, "fl_none", NULL, 0, false);
	if (fxt_writer_flush(w) < 0)
		bail_out("fxt_writer_flush");
	data = fxt_writer_mem_data(w, &len);
	if (fxt_reader_open_mem(&r, data, len, 0) < 0)
		bail_out("fxt_reader_open_mem");
	while ((rc = fxt_reader_next(r, &rec)) > 0) {
		int k = tool_srcloc_see(&l, &rec);

		if (k < 0)
			bail_out("tool_srcloc_see");
		seen += (unsigned)k;
	}
	ok(rc == 0, "the archive reads to its end");
	ASSERT_EQ_U64(seen, 606, "every function record is taken for one, the thread's is not");
	for (unsigned i = 0; i < 600; i++) {
		const char *got;

		snprintf(name, sizeof(name), "f%u", i);
		snprintf(loc, sizeof(loc), "src/f.c:%u", i + 1);
		got = find(&l, "app", name);
		all = all && got && strcmp(got, loc) == 0;
	}
	ok(all, "600 functions: each found, the first record's location");
	ok(find(&l, "libc.so.6", "f1") && !strcmp(find(&l, "libc.so.6", "f1"), "(no debug info)"),
	   "the same name in another module: its own");
	ok(find(&l, "app", "nomodule") == NULL && find(&l, "", "nomodule") == NULL,
	   "a record without the module argument: nothing");
	ok(find(&l, "app", "fl") && !strcmp(find(&l, "app", "fl"), "src/g.c:42"),
	   "file and line: the text FILE:LINE");
	ok(find(&l, "app", "fl_inl") &&
	       !strcmp(find(&l, "app", "fl_inl"), "/usr/include/h.h:4294967295" FXT_LOC_INLINED),
	   "file, line and inlined: FILE:LINE (inlined)");
	ok(find(&l, "app", "fl_none") == NULL, "a record with neither text nor file: nothing");
	ok(find(&l, "app", "main") == NULL, "a function without a record: NULL");
	ok(find(&l, "ap", "pf0") == NULL, "the key is the pair, not the bytes in a row");
	tool_srcloc_free(&l);
	fxt_reader_free(r);
	fxt_writer_close(w);
	test_export(false, true, "a location after the slices, none before");
	test_export(true, true, "a location after the slices, another before");
	test_export(true, false, "the location before the slices");
	done_testing();
	return exit_status();
}
