/* mkktrace: writes Darwin ktrace V3 test files, built by hand from the
 * layout of ktrace(5) (../shared/seeds/002_...) and xnu's kdebug records,
 * for tests/e2e/import-ktrace.sh and the import fuzzer's seeds (there are
 * no public ktrace files to test with).
 *
 *   mkktrace KIND OUT
 *
 * KIND:
 *   basic      header (timebase 125/3), a thread map and an unknown chunk
 *              among the header chunks, then events: on thread 0x101
 *              (pid 7, "worker") START/END of 0x04010004 around a nested
 *              START/END of 0x04010008, and an instant 0x01300000; on
 *              thread 0x202 (not in the map) an END that matches no START
 *              and a START left open; an unknown body chunk of 13 bytes
 *              (padded) between two event chunks
 *   many N     (as "many" followed by a count) N events, alternately
 *              START and END of one debugid on 4 threads
 *   late       on thread 0x101 (pid 7): START/END of 0x04010004 at 30 and
 *              150, then START/END of 0x04010008 at 60 and 120 (before
 *              the thread's latest time: out of time order)
 *   truncated  "basic" cut in the middle of its second event chunk
 *   bigchunk   a body chunk whose size runs past the end of the file
 *   badsize    an events chunk of 100 bytes (not a multiple of 64)
 *   badtime    a timebase denominator of 0
 *   v2         the magic of version 2 (0x55aa0200)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static long nbytes;

static void put(const void *p, size_t n)
{
	if (fwrite(p, 1, n, out) != n) {
		perror("mkktrace: write");
		exit(2);
	}
	nbytes += (long)n;
}

static void u16(uint16_t v)
{
	put(&v, 2);
}
static void u32(uint32_t v)
{
	put(&v, 4);
}
static void u64(uint64_t v)
{
	put(&v, 8);
}

static void pad8(void)
{
	static const char zero[8];
	if (nbytes % 8)
		put(zero, (size_t)(8 - nbytes % 8));
}

static void chunk(uint32_t tag, uint64_t size)
{
	u32(tag);
	u16(1);
	u16(0);
	u64(size);
}

static void header(uint32_t magic, uint64_t header_size, uint32_t denom)
{
	u32(magic);
	u16(3);
	u16(0);
	u64(header_size);
	u32(125); /* timebase numerator: ns = ticks * 125 / 3 */
	u32(denom);
	u64(1000);	 /* timestamp */
	u64(1700000000); /* walltime seconds */
	u32(250000);	 /* microseconds */
	u32(0);		 /* minutes west */
	u32(0);		 /* dst */
	u32(1);		 /* flags: 64-bit */
}

static void event(uint64_t ts, uint64_t tid, uint32_t debugid, uint32_t cpu, uint64_t a1)
{
	u64(ts);
	u64(a1);
	u64(2);
	u64(3);
	u64(4);
	u64(tid);
	u32(debugid);
	u32(cpu);
	u64(0);
}

/* Header chunks: a thread map of one thread, an unknown chunk of 5 bytes. */
#define HEADER_CHUNKS (16 + 32 + 16 + 8)

static void header_chunks(void)
{
	char name[20] = "worker";
	chunk(0x1d00, 32);
	u64(0x101);
	u32(7);
	put(name, sizeof(name));
	chunk(0x7777, 5);
	put("abcde", 5);
	pad8();
}

static void basic(int cut)
{
	header(0x55aa0300u, 56 - 16 + HEADER_CHUNKS, 3);
	header_chunks();
	chunk(0x1e00, 5 * 64);
	event(30, 0x101, 0x04010004 | 1, 0, 11);  /* START outer */
	event(60, 0x101, 0x04010008 | 1, 0, 12);  /* START inner */
	event(90, 0x101, 0x01300000, 1, 13);	  /* instant */
	event(120, 0x101, 0x04010008 | 2, 0, 14); /* END inner */
	event(150, 0x101, 0x04010004 | 2, 0, 15); /* END outer */
	chunk(0x9999, 13);
	put("0123456789abc", 13);
	pad8();
	chunk(0x1e00, 2 * 64);
	event(180, 0x202, 0x05020010 | 2, 1, 16); /* END with no START */
	if (cut) {
		put("partial", 7);
		return;
	}
	event(210, 0x202, 0x05020014 | 1, 1, 17); /* START left open */
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: mkktrace KIND [N] OUT\n");
		return 2;
	}
	out = fopen(argv[argc - 1], "wb");
	if (out == NULL) {
		perror(argv[argc - 1]);
		return 2;
	}
	const char *kind = argv[1];
	if (strcmp(kind, "basic") == 0) {
		basic(0);
	} else if (strcmp(kind, "late") == 0) {
		header(0x55aa0300u, 56 - 16 + HEADER_CHUNKS, 3);
		header_chunks();
		chunk(0x1e00, 4 * 64);
		event(30, 0x101, 0x04010004 | 1, 0, 11);
		event(150, 0x101, 0x04010004 | 2, 0, 12);
		event(60, 0x101, 0x04010008 | 1, 0, 13);
		event(120, 0x101, 0x04010008 | 2, 0, 14);
	} else if (strcmp(kind, "truncated") == 0) {
		basic(1);
	} else if (strcmp(kind, "many") == 0 && argc == 4) {
		unsigned long n = strtoul(argv[2], NULL, 10);
		header(0x55aa0300u, 56 - 16, 1);
		chunk(0x1e00, (uint64_t)n * 64);
		for (unsigned long i = 0; i < n; i++)
			event(1000 + i * 10, 0x10 + (i / 2) % 4, 0x04010004 | (i % 2 ? 2 : 1),
			      (uint32_t)(i % 2), i);
	} else if (strcmp(kind, "bigchunk") == 0) {
		header(0x55aa0300u, 56 - 16, 1);
		chunk(0x1e00, 1u << 20);
		event(10, 1, 0x04010004, 0, 0);
	} else if (strcmp(kind, "badsize") == 0) {
		header(0x55aa0300u, 56 - 16, 1);
		chunk(0x1e00, 100);
		event(10, 1, 0x04010004, 0, 0);
		put("0123456789012345678901234567890123456", 36);
		pad8();
	} else if (strcmp(kind, "badtime") == 0) {
		header(0x55aa0300u, 56 - 16, 0);
	} else if (strcmp(kind, "v2") == 0) {
		header(0x55aa0200u, 56 - 16, 1);
	} else {
		fprintf(stderr, "mkktrace: unknown kind %s\n", kind);
		return 2;
	}
	if (fclose(out) != 0) {
		perror("mkktrace: close");
		return 2;
	}
	return 0;
}
