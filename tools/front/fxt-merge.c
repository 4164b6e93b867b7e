/* fxt-merge: FXT archives side by side in one, on one clock (convert/merge.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fxt/reader.h>

#include "import/import.h"
#include "tools/front/common.h"
#include "convert/merge.h"

#define NAME "fxt-merge"

static const char help[] =
    "Usage: fxt-merge [OPTION]... ARCHIVE... -o OUT.fxt\n"
    "Put FXT archives side by side in one: fxt-run's archives, fxt-import's\n"
    "kernel traces, other writers' FXT files.  Each keeps its providers (a\n"
    "process, a trace.dat buffer), so Perfetto shows them together, and their\n"
    "timestamps are aligned on CLOCK_MONOTONIC, the clock of fxt-run's archives:\n"
    "  an archive of fxt-run, or another writer's   kept as it is\n"
    "  imported on clock mono or mono_raw           kept as it is\n"
    "  imported on clock boot                       moved by CLOCK_MONOTONIC -\n"
    "                    CLOCK_BOOTTIME, as now: it must come from this machine,\n"
    "                    since its last boot (a note says so)\n"
    "  any other clock (local, global, x86-tsc ...) an error: record the kernel\n"
    "                    trace with `trace-cmd record -C mono`, or say how far to\n"
    "                    move it with --shift, or merge as is with --no-align\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT        the archive to write (required); written whole or\n"
    "                          not at all; .gz or .zst compresses it\n"
    "  -s, --shift ARCHIVE=NS  move ARCHIVE's timestamps by NS nanoseconds (an\n"
    "                          integer, may be negative) instead of by its clock\n"
    "      --no-align          keep every archive's timestamps as they are\n"
    "  -q, --quiet             do not print the summary line\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n"
    "\n"
    "Exit status:\n"
    "  0   OUT was written\n"
    "  1   an ARCHIVE is not an FXT archive, or its clock cannot be aligned\n"
    "  2   bad usage, or an ARCHIVE cannot be read or OUT written\n";

enum { OPT_NO_ALIGN = 256 };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "shift", required_argument, NULL, 's' },
	{ "no-align", no_argument, NULL, OPT_NO_ALIGN },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static const struct tool_cli cli = { NAME, help, "o:s:q", longopts };

struct user_shift {
	const char *path;
	int64_t ns;
	bool used;
};

struct merge_ctx {
	const char *const *parts;
	struct user_shift *shifts;
	size_t nshifts;
	bool no_align;
	bool boot_said;
	char err[512];
};

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int shift_of(void *vctx, size_t part, const char *name, size_t len, int64_t *shift_ns)
{
	struct merge_ctx *m = vctx;
	char clock[32];

	*shift_ns = 0;
	for (size_t i = 0; i < m->nshifts; i++) {
		if (strcmp(m->shifts[i].path, m->parts[part]) == 0) {
			*shift_ns = m->shifts[i].ns;
			return 0;
		}
	}
	if (m->no_align || !import_clock_of_provider(name, len, clock, sizeof(clock)))
		return 0; /* not imported: the agent's CLOCK_MONOTONIC, or a writer's own */
	if (strcmp(clock, "mono") == 0 || strcmp(clock, "mono_raw") == 0)
		return 0;
	if (strcmp(clock, "boot") == 0) {
		*shift_ns = clock_ns(CLOCK_MONOTONIC) - clock_ns(CLOCK_BOOTTIME);
		if (!m->boot_said) {
			m->boot_said = true;
			fprintf(stderr,
				NAME ": note: %s is on CLOCK_BOOTTIME: moved by %" PRId64
				     " ns, which holds if it was recorded on this machine since "
				     "its last boot\n",
				m->parts[part], *shift_ns);
		}
		return 0;
	}
	snprintf(m->err, sizeof(m->err),
		 "%s: provider \"%.*s\" is on clock %s, which cannot be aligned with "
		 "CLOCK_MONOTONIC: record with `trace-cmd record -C mono`, or give "
		 "--shift %s=NS or --no-align",
		 m->parts[part], (int)len, name, clock, m->parts[part]);
	return -EDOM;
}

int main(int argc, char **argv)
{
	struct merge_ctx m = { 0 };
	struct merge_part_result *res = NULL;
	const char *output = NULL;
	bool quiet = false;
	int c, rc, status = TOOL_EXIT_ERROR;

	m.shifts = calloc((size_t)argc, sizeof(*m.shifts));
	if (m.shifts == NULL)
		return tool_error(NAME, "out of memory");
	while ((c = tool_getopt(argc, argv, &cli)) != -1) {
		char *eq, *end;
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 's':
			eq = strrchr(optarg, '=');
			if (eq == NULL || eq == optarg) {
				status = tool_usage_error(
				    NAME, "--shift wants ARCHIVE=NS, not '%s'", optarg);
				goto out;
			}
			errno = 0;
			m.shifts[m.nshifts].ns = strtoll(eq + 1, &end, 10);
			if (errno || end == eq + 1 || *end) {
				status = tool_usage_error(
				    NAME, "--shift %s: NS must be an integer of nanoseconds",
				    optarg);
				goto out;
			}
			*eq = '\0';
			m.shifts[m.nshifts++].path = optarg;
			break;
		case OPT_NO_ALIGN:
			m.no_align = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			goto out;
		}
	}
	if (output == NULL) {
		status = tool_usage_error(NAME, "say where to write: -o OUT.fxt");
		goto out;
	}
	if (optind == argc) {
		status = tool_usage_error(NAME, "missing ARCHIVE");
		goto out;
	}
	size_t n = (size_t)(argc - optind);
	const char *const *parts = (const char *const *)argv + optind;
	for (size_t i = 0; i < m.nshifts; i++) {
		bool found = false;
		for (size_t j = 0; j < n && !found; j++)
			found = strcmp(parts[j], m.shifts[i].path) == 0;
		if (!found) {
			status = tool_usage_error(NAME, "--shift names %s, which is not an ARCHIVE",
						  m.shifts[i].path);
			goto out;
		}
	}
	/* Every ARCHIVE is checked first: a bad one fails the merge before
	 * anything is written. */
	for (size_t i = 0; i < n; i++) {
		struct fxt_reader *r;
		struct fxt_record rec;
		rc = fxt_reader_open_path(&r, parts[i], FXT_READER_RAW);
		if (rc < 0) {
			tool_error(NAME, "%s: %s", parts[i], strerror(-rc));
			goto out;
		}
		rc = fxt_reader_next(r, &rec);
		bool ok = rc > 0 && fxt_reader_saw_magic(r);
		fxt_reader_free(r);
		if (!ok) {
			tool_error(NAME, "%s: offset 0: not an FXT archive (no magic record)",
				   parts[i]);
			status = 1;
			goto out;
		}
	}
	m.parts = parts;
	res = calloc(n, sizeof(*res));
	if (res == NULL) {
		tool_error(NAME, "out of memory");
		goto out;
	}
	rc = merge_archives_shifted(output, parts, n, shift_of, &m, res);
	if (rc == -EDOM) {
		tool_error(NAME, "%s", m.err);
		status = 1;
		goto out;
	}
	if (rc < 0) {
		if (rc == -ENODATA)
			tool_error(NAME, "no ARCHIVE is an FXT archive");
		else
			tool_error(NAME, "%s: %s", output, strerror(-rc));
		status = rc == -ENODATA ? 1 : TOOL_EXIT_ERROR;
		goto out;
	}
	uint64_t records = 0, clamped = 0;
	status = TOOL_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		records += res[i].records;
		clamped += res[i].clamped;
		if (res[i].not_an_archive) {
			tool_error(NAME, "%s: offset 0: not an FXT archive (left out)", parts[i]);
			status = 1;
		} else if (res[i].truncated) {
			fprintf(stderr,
				NAME ": %s: truncated: merged up to its last whole record\n",
				parts[i]);
		}
	}
	if (clamped)
		fprintf(stderr, NAME ": %" PRIu64 " timestamps moved before 0 were set to 0\n",
			clamped);
	if (!quiet)
		fprintf(stderr, NAME ": %zu archive%s, %" PRIu64 " records -> %s\n", n,
			n == 1 ? "" : "s", records, output);
out:
	free(res);
	free(m.shifts);
	return status;
}
