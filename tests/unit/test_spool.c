/* Unit tests of what fxt-run and the agent share in spool/, table-driven:
 * the spelling of sizes (recording.h) and the names of a run's files
 * (names.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "spool/names.h"
#include "spool/recording.h"
#include "tests/lib/tap.h"

#define KIB (UINT64_C(1) << 10)
#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static void test_sizes(void)
{
	static const struct {
		const char *s;
		int rc;
		uint64_t want;
	} cases[] = {
		/* Bytes, with or without B. */
		{ "0", 0, 0 },
		{ "12", 0, 12 },
		{ "100B", 0, 100 },
		{ "100b", 0, 100 },
		{ "18446744073709551615", 0, UINT64_MAX },
		/* K, M, G: powers of 1024, alone or with B, i or iB, any case. */
		{ "4k", 0, 4 * KIB },
		{ "4K", 0, 4 * KIB },
		{ "4KB", 0, 4 * KIB },
		{ "4kb", 0, 4 * KIB },
		{ "4KiB", 0, 4 * KIB },
		{ "64M", 0, 64 * MIB },
		{ "64MB", 0, 64 * MIB },
		{ "64MiB", 0, 64 * MIB },
		{ "64MIB", 0, 64 * MIB },
		{ "64mib", 0, 64 * MIB },
		{ "64Mi", 0, 64 * MIB },
		{ "1G", 0, GIB },
		{ "1GiB", 0, GIB },
		{ "0M", 0, 0 },
		{ "17179869183G", 0, UINT64_C(17179869183) * GIB },
		/* Not sizes. */
		{ "", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1.5M", -EINVAL, 0 },
		{ "10X", -EINVAL, 0 },
		{ "1T", -EINVAL, 0 },
		{ "100iB", -EINVAL, 0 },
		{ "1MBB", -EINVAL, 0 },
		{ "1BM", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 },
		/* Too large. */
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999", -ERANGE, 0 },
		{ "17179869184G", -ERANGE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc = fxt__parse_size(cases[i].s, &v);
		if (cases[i].rc == 0)
			ok(rc == 0 && v == cases[i].want, "size '%s' = %llu (got %d, %llu)",
			   cases[i].s, (unsigned long long)cases[i].want, rc,
			   (unsigned long long)v);
		else
			ok(rc == cases[i].rc && v == 12345, "size '%s' refused with %d (got %d)",
			   cases[i].s, cases[i].rc, rc);
	}
	ok(fxt__parse_size(NULL, &(uint64_t){ 0 }) == -EINVAL, "size: NULL refused");
}

/* The names the agent and the converter give a run's files. */
static void test_names(void)
{
	static const struct {
		bool spool; /* run_spool_name(), else run_archive_name() */
		const char *out;
		long pid;
		unsigned n;
		const char *want, *what;
	} cases[] = {
		{ false, "/d/trace.fxt", 42, 1, "/d/trace.42.fxt", "before the extension" },
		{ false, "/d/trace.fxt.gz", 42, 1, "/d/trace.42.fxt.gz", "before .fxt.gz" },
		{ false, "/d.x/trace", 42, 1, "/d.x/trace.42",
		  "no extension, dot in the directory" },
		{ false, "/d/trace.fxt", 42, 3, "/d/trace.42.3.fxt", "a later image of a pid" },
		{ false, "/d/.hidden", 42, 1, "/d/.hidden.42", "a leading dot is no extension" },
		{ false, "/d/t.gz", 7, 1, "/d/t.7.gz", "plain .gz" },
		{ true, "/d/t.fxt", 7, 1, "/d/t.fxt.7.spool", "a first image's spool" },
		{ true, "/d/t.fxt", 7, 12, "/d/t.fxt.7.12.spool", "a later image's spool" },
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].spool)
			run_spool_name(buf, sizeof(buf), cases[i].out, cases[i].pid, cases[i].n);
		else
			run_archive_name(buf, sizeof(buf), cases[i].out, cases[i].pid, cases[i].n);
		ASSERT_STR_EQ(buf, cases[i].want, "naming: %s", cases[i].what);
	}
	run_spool_name(buf, 8, "/d/t.fxt", 7, 1);
	ASSERT_STR_EQ(buf, "/d/t.fx", "naming: cut to the buffer, NUL-terminated");
}

int main(void)
{
	test_sizes();
	test_names();
	done_testing();
	return exit_status();
}
