/* merge_append_begin()/merge_append_end() (convert/merge.h): a part's
 * records appended to a plain archive say what merge_archives(out, {out,
 * part}) writes (the same records, in the same order, and no mark of time
 * order when the part has none; out's kept when the part is in time order
 * under a provider of its own, undone under out's provider); a failed append leaves the archive as it was,
 * its mark too; a compressed archive, a file that is not one, and a missing
 * one are refused (merged instead by the caller). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "convert/merge.h"
#include "tests/lib/tap.h"

static char dir[] = "/tmp/test_merge_append.XXXXXX";

static const char *at(const char *name)
{
	static char paths[4][256];
	static unsigned next;
	char *p = paths[next++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* Provider `id`'s records: its info, its initialization, three events of
 * thread (id, 1) named PREFIX0..2 from time t. */
static void records(struct fxt_writer *w, uint32_t id, const char *prefix, uint64_t t)
{
	char name[32];

	fxt_writer_provider(w, id, "p");
	fxt_writer_initialization(w, 1000000000);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		struct fxt_event ev = { .type = FXT_EVENT_INSTANT,
					.ts = t + (uint64_t)i,
					.thread = fxt_writer_thread(w, id, 1),
					.category = fxt_writer_cstring(w, "c"),
					.name = fxt_writer_cstring(w, name) };
		if (fxt_writer_event(w, &ev) != 0)
			bail_out("fxt_writer_event failed");
	}
}

/* An archive at `path`: the magic record, the mark if `marked`, then
 * provider id's records. */
static void archive(const char *path, bool marked, uint32_t id, const char *prefix, uint64_t t)
{
	struct fxt_writer *w;

	if (fxt_writer_open_path(&w, path, 0) != 0)
		bail_out("cannot create an archive");
	fxt_writer_magic(w);
	if (marked)
		fxt_writer_time_ordered(w);
	records(w, id, prefix, t);
	if (fxt_writer_close(w) != 0)
		bail_out("cannot write an archive");
}

/* What a reader gives of `path`: each event as "provider:name@ts ",
 * and whether it says the archive is in time order. */
static void events(const char *path, char *out, size_t cap, bool *marked)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	uint32_t provider = 0;
	size_t n = 0;

	out[0] = '\0';
	if (fxt_reader_open_path(&r, path, FXT_READER_TIME_ORDER) != 0)
		bail_out("cannot read an archive");
	while (fxt_reader_next(r, &rec) == 1) {
		if (rec.type == FXT_RECORD_METADATA &&
		    rec.u.meta.type == FXT_METADATA_PROVIDER_INFO)
			provider = rec.u.meta.provider_id;
		if (rec.type == FXT_RECORD_EVENT && n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%u:%.*s@%llu ", provider,
					      (int)rec.u.event.name.len, rec.u.event.name.data,
					      (unsigned long long)rec.u.event.ts);
	}
	*marked = fxt_reader_time_ordered(r);
	fxt_reader_free(r);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap, f) : 0;

	if (f)
		fclose(f);
	return n;
}

static void copy(const char *from, const char *to)
{
	static char buf[1 << 16];
	size_t n = slurp(from, buf, sizeof(buf));
	FILE *f = fopen(to, "wb");

	if (f == NULL || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
		bail_out("cannot copy");
}

int main(void)
{
	static char want[4096], got[4096], before[1 << 16], after[1 << 16];
	struct merge_append app;
	bool marked;
	int err;

	plan(17);
	if (mkdtemp(dir) == NULL)
		bail_out("mkdtemp failed");

	/* The reference: out (marked) and the part, merged. */
	archive(at("out.fxt"), true, 3, "a", 100);
	archive(at("part.fxt"), false, 4, "k", 50);
	copy(at("out.fxt"), at("ref.fxt"));
	const char *parts[2] = { at("ref.fxt"), at("part.fxt") };
	if (merge_archives(at("ref.fxt"), parts, 2, NULL) != 0)
		bail_out("merge_archives failed");
	events(at("ref.fxt"), want, sizeof(want), &marked);
	ok(!marked, "merged: no mark (the part has none)");

	/* The same part appended. */
	copy(at("out.fxt"), at("app.fxt"));
	err = merge_append_begin(&app, at("app.fxt"));
	ok(err == 0, "a plain archive: appended to (%d)", err);
	if (err == 0) {
		records(app.w, 4, "k", 50);
		err = merge_append_end(&app, 0, false, 4);
	}
	ok(err == 0, "... and closed (%d)", err);
	events(at("app.fxt"), got, sizeof(got), &marked);
	ASSERT_STR_EQ(got, want, "appended: the merged archive's events, in its order");
	ok(!marked, "appended: no mark (out's undone)");
	ok(strstr(got, "4:k0@50 ") != NULL && strstr(got, "3:a2@102 ") != NULL,
	   "... both providers' events (%s)", got);

	/* A part in time order, under a provider of its own: marked, as
	 * merge_archives() marks it; under out's provider: not. */
	archive(at("mpart.fxt"), true, 4, "k", 50);
	copy(at("out.fxt"), at("mref.fxt"));
	const char *mparts[2] = { at("mref.fxt"), at("mpart.fxt") };
	if (merge_archives(at("mref.fxt"), mparts, 2, NULL) != 0)
		bail_out("merge_archives failed");
	events(at("mref.fxt"), want, sizeof(want), &marked);
	ok(marked, "merged with a marked part: marked");
	copy(at("out.fxt"), at("mapp.fxt"));
	err = merge_append_begin(&app, at("mapp.fxt"));
	if (err == 0) {
		records(app.w, 4, "k", 50);
		err = merge_append_end(&app, 0, true, 4);
	}
	events(at("mapp.fxt"), got, sizeof(got), &marked);
	ok(err == 0 && marked, "appended in time order, provider 4 after 3: out's mark kept (%d)",
	   err);
	ASSERT_STR_EQ(got, want, "... the merged archive's events");
	copy(at("out.fxt"), at("sapp.fxt"));
	err = merge_append_begin(&app, at("sapp.fxt"));
	if (err == 0) {
		records(app.w, 3, "k", 50);
		err = merge_append_end(&app, 0, true, 3);
	}
	events(at("sapp.fxt"), got, sizeof(got), &marked);
	ok(err == 0 && !marked, "appended under out's own provider: mark undone (%d)", err);

	/* A failed append: out as it was, mark included. */
	copy(at("out.fxt"), at("fail.fxt"));
	size_t nbefore = slurp(at("fail.fxt"), before, sizeof(before));
	err = merge_append_begin(&app, at("fail.fxt"));
	if (err == 0) {
		records(app.w, 4, "k", 50);
		err = merge_append_end(&app, -EIO, false, 4);
	}
	ok(err == -EIO, "a failed append says its error (%d)", err);
	size_t nafter = slurp(at("fail.fxt"), after, sizeof(after));
	ok(nafter == nbefore && memcmp(before, after, nbefore) == 0,
	   "... and leaves out byte for byte as it was (%zu, %zu bytes)", nbefore, nafter);
	events(at("fail.fxt"), got, sizeof(got), &marked);
	ok(marked, "... its mark too");

	/* Refused: merged instead. */
	archive(at("z.fxt.gz"), true, 3, "a", 100);
	ok(merge_append_begin(&app, at("z.fxt.gz")) == -ENOTSUP, "a compressed archive: refused");
	FILE *f = fopen(at("text.fxt"), "w");
	if (f == NULL || fputs("not an archive, 32 bytes long..\n", f) < 0 || fclose(f) != 0)
		bail_out("cannot write a text file");
	ok(merge_append_begin(&app, at("text.fxt")) == -ENOTSUP, "not an archive: refused");
	ok(merge_append_begin(&app, at("none.fxt")) == -ENOENT, "a missing archive: -ENOENT");
	ok(app.fd == -1 && app.w == NULL, "... nothing left open");

	const char *names[] = { "out.fxt",  "part.fxt", "ref.fxt",  "app.fxt",	"fail.fxt",
				"z.fxt.gz", "text.fxt", "mpart.fxt", "mref.fxt", "mapp.fxt",
				"sapp.fxt" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		unlink(at(names[i]));
	rmdir(dir);
	return exit_status();
}
