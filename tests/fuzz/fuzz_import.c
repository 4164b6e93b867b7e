/* libFuzzer target: fxt-import's path over arbitrary bytes: the format
 * sniffing, then the ktrace reader (import/ktrace.c), into a memory
 * writer, whose archive is then read back whole.  trace.dat goes through
 * libtracecmd, which fxt-import runs in a child process because the
 * library trusts its input; it is not fuzzed here.  Build: configure
 * --enable-fuzzing CC=clang; run: make fuzz-import [FUZZ_SECONDS=N]. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fxt/reader.h>
#include <fxt/writer.h>

#include "import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct import_ctx ic;
	const void *out;
	size_t len;

	if (fd < 0 && (fd = memfd_create("fuzz-import", 0)) < 0)
		return 0;
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (import_sniff(data, size) == IMPORT_TRACEDAT)
		return 0;
	memset(&ic, 0, sizeof(ic));
	ic.path = "fuzz";
	ic.fd = fd;
	ic.next_provider = 1;
	if (fxt_writer_open_mem(&ic.w, 0) != 0)
		return 0;
	int rc = fxt_writer_magic(ic.w);
	if (rc == 0)
		rc = import_ktrace(&ic);
	if (rc == 0 && fxt_writer_flush(ic.w) == 0 && (out = fxt_writer_mem_data(ic.w, &len))) {
		/* What it wrote must read back without damage. */
		struct fxt_reader *r;
		struct fxt_record rec;
		if (fxt_reader_open_mem(&r, out, len, 0) == 0) {
			int n;
			while ((n = fxt_reader_next(r, &rec)) > 0)
				;
			if (n < 0) {
				fprintf(stderr, "fuzz_import: the archive written is damaged\n");
				__builtin_trap();
			}
			fxt_reader_free(r);
		}
	}
	fxt_writer_free(ic.w);
	return 0;
}
