/* fxt_reader_clone_at() on compressed files (fxt/source.c): clones share
 * a cache of decoded stretches (from one gzip member or zstd frame to the
 * next), so a wrong byte there would be read by every clone after.  An
 * archive of 1.2 M counter events (48 MB decoded: more stretches than the
 * cache holds, which then lets the oldest go) is written as .fxt.gz and
 * .fxt.zst by fxtrace's writer, and as one gzip member (gzip -c's: the
 * places are then inside it, after a deflate block, a window saved); clones at 400 events picked at
 * random (a third of them where an earlier one was: from the cache), some near the end, read the
 * 300 events from there (every 50th, 300,000: through many stretches), each compared with the words
 * written.  Clones read right before the cache too: this guards it. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "tests/lib/tap.h"

#define NEV    1200000u
#define NCLONE 400u
#define NREAD  300u

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0x9e3779b97f4a7c15);
	return x ^ (x >> 29);
}

/* Event i's words: a counter with a u64 argument, its values from i. */
static size_t event_words(uint64_t *w, size_t cap, uint64_t i)
{
	struct fxt_arg arg = { .type = FXT_ARG_UINT64, .name = fxt_sref_index(2) };
	struct fxt_event ev = { .type = FXT_EVENT_COUNTER,
				.ts = 1000 + i * 7 + (mix(i) & 3),
				.thread = fxt_tref_index(1),
				.category = fxt_sref_index(1),
				.name = fxt_sref_index(2),
				.args = &arg,
				.nargs = 1,
				.extra = i % 5 };

	arg.v.u64 = mix(i) & 0xffffff;
	return fxt_enc_event(w, cap, &ev);
}

static void put_words(struct fxt_writer *w, const uint64_t *words, size_t n)
{
	if (n == 0 || fxt_writer_words(w, words, n) != 0)
		bail_out("writing words failed");
}

/* The archive at path; "one.gz" in its name: plain, then gzipped whole
 * by zlib, one member. */
static void write_archive(const char *path)
{
	struct fxt_writer *w;
	uint64_t buf[16];
	bool one = strstr(path, "one.gz") != NULL;
	char plain[300];

	snprintf(plain, sizeof(plain), "%s.plain", path);
	if (fxt_writer_open_path(&w, one ? plain : path, one ? 0 : fxt_writer_path_flags(path)) !=
	    0)
		bail_out("cannot write the archive");
	fxt_writer_magic(w);
	put_words(w, buf, fxt_enc_string(buf, 16, 1, "cat", 3));
	put_words(w, buf, fxt_enc_string(buf, 16, 2, "value", 5));
	put_words(w, buf, fxt_enc_thread(buf, 16, 1, 10, 11));
	for (uint64_t i = 0; i < NEV; i++)
		put_words(w, buf, event_words(buf, 16, i));
	if (fxt_writer_close(w) != 0)
		bail_out("closing the archive failed");
	if (one) {
		FILE *in = fopen(plain, "rb");
		gzFile out = gzopen(path, "wb1");
		static char chunk[1 << 16];
		size_t got;

		if (!in || !out)
			bail_out("cannot gzip the archive");
		while ((got = fread(chunk, 1, sizeof(chunk), in)) > 0)
			if (gzwrite(out, chunk, (unsigned)got) != (int)got)
				bail_out("gzwrite failed");
		fclose(in);
		if (gzclose(out) != Z_OK)
			bail_out("gzclose failed");
		unlink(plain);
	}
}

/* Reads n events from c, the first being event i: how many match. */
static unsigned read_from(struct fxt_reader *c, uint64_t i, unsigned n)
{
	struct fxt_record rec;
	uint64_t want[16];
	unsigned good = 0;

	for (unsigned k = 0; k < n && i + k < NEV; k++) {
		size_t nw = event_words(want, 16, i + k);

		if (fxt_reader_next(c, &rec) != 1 || rec.nwords != nw ||
		    memcmp(fxt_reader_record_bytes(c), want, nw * 8) != 0)
			return good;
		good++;
	}
	return good;
}

static void check(const char *path)
{
	struct fxt_reader *r;
	struct fxt_record rec;
	uint64_t *off = malloc(NEV * sizeof(*off)), n = 0, seed = 1, pick[NCLONE];
	unsigned bad = 0, fails = 0;

	if (!off)
		bail_out("out of memory");
	write_archive(path);
	if (fxt_reader_open_path(&r, path, 0) != 0)
		bail_out("cannot read the archive");
	/* the whole archive once: the places noted, each event's offset */
	for (;;) {
		uint64_t at = fxt_reader_offset(r);
		int rc = fxt_reader_next(r, &rec);

		if (rc != 1)
			break;
		if (rec.type == FXT_RECORD_EVENT && n < NEV)
			off[n++] = at;
	}
	ASSERT_EQ_U64(n, NEV, "%s: the events read through", strrchr(path, '/') + 1);
	for (unsigned k = 0; k < NCLONE; k++) {
		struct fxt_reader *c;
		uint64_t i;
		unsigned want;

		seed = mix(seed + k);
		i = (k % 3 == 2) ? pick[seed % k] : seed % NEV;
		if (k % 7 == 3) /* near the end: the last stretch, the end */
			i = NEV - 1 - seed % 64;
		pick[k] = i;
		want = k % 50 == 10 ? 300000 : NREAD;
		if (NEV - i < want)
			want = (unsigned)(NEV - i);
		if (fxt_reader_clone_at(r, off[i], &c) != 0) {
			fails++;
			continue;
		}
		if (read_from(c, i, want) != want)
			bad++;
		fxt_reader_free(c);
	}
	ok(fails == 0 && bad == 0,
	   "%s: %u clones at random events read what was written (%u failed, %u read wrong)",
	   strrchr(path, '/') + 1, NCLONE, fails, bad);
	fxt_reader_free(r);
	unlink(path);
	free(off);
}

int main(void)
{
	char dir[] = "/tmp/test_reader_zclone.XXXXXX", path[256];

	plan(6);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	snprintf(path, sizeof(path), "%s/a.fxt.zst", dir);
	check(path);
	snprintf(path, sizeof(path), "%s/a.fxt.gz", dir);
	check(path);
	snprintf(path, sizeof(path), "%s/one.gz.fxt.gz", dir);
	check(path);
	rmdir(dir);
	return exit_status();
}
