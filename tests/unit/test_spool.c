/* Unit tests of what fxt-run and the agent share in spool/, table-driven:
 * the spelling of sizes (recording.h) and the names of a run's files
 * (names.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "run/argspec.h"
#include "run/names.h"
#include "run/recording.h"
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
		int rc = run_parse_size(cases[i].s, &v);
		if (cases[i].rc == 0)
			ok(rc == 0 && v == cases[i].want, "size '%s' = %llu (got %d, %llu)",
			   cases[i].s, (unsigned long long)cases[i].want, rc,
			   (unsigned long long)v);
		else
			ok(rc == cases[i].rc && v == 12345, "size '%s' refused with %d (got %d)",
			   cases[i].s, cases[i].rc, rc);
	}
	ok(run_parse_size(NULL, &(uint64_t){ 0 }) == -EINVAL, "size: NULL refused");
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

/* What the formatters make, the parsers read back, for names of every
 * shape; and they read nothing else. */
static void test_round_trips(void)
{
	static const char *const outs[] = {
		"/d/trace.fxt", "/d/trace.fxt.gz", "/d.x/trace",
		"/d/.hidden",	"/d/t.gz",	   "/d/a.b.c",
	};
	static const long pids[] = { 1, 42, 4194304 };
	static const unsigned ns[] = { 1, 2, 12 };
	char buf[256];
	unsigned bad = 0, checked = 0;

	for (size_t o = 0; o < sizeof(outs) / sizeof(outs[0]); o++) {
		const char *out = outs[o];
		size_t dir = (size_t)(strrchr(out, '/') - out) + 1;
		for (size_t p = 0; p < sizeof(pids) / sizeof(pids[0]); p++) {
			for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
				long pid = 0;
				unsigned n = 0;

				run_archive_name(buf, sizeof(buf), out, pids[p], ns[i]);
				if (!run_archive_parse(out, buf + dir, &pid, &n) ||
				    pid != pids[p] || n != ns[i]) {
					diag("archive %s of %s: pid %ld, n %u", buf, out, pid, n);
					bad++;
				}
				run_spool_name(buf, sizeof(buf), out, pids[p], ns[i]);
				pid = 0;
				n = 0;
				if (!run_spool_parse(out, buf + dir, &pid, &n) || pid != pids[p] ||
				    n != ns[i] || run_spool_output(buf) != strlen(out)) {
					diag("spool %s of %s: pid %ld, image %u", buf, out, pid, n);
					bad++;
				}
				checked += 2;
			}
			long pid = 0;
			run_pid_file_name(buf, sizeof(buf), out, pids[p], RUN_SESSION_SUFFIX);
			if (!run_pid_file_parse(out, buf + dir, RUN_SESSION_SUFFIX, &pid) ||
			    pid != pids[p] ||
			    run_pid_file_parse(out, buf + dir, RUN_CONTROL_SUFFIX, &pid)) {
				diag("session %s of %s: pid %ld", buf, out, pid);
				bad++;
			}
			checked++;
		}
	}
	ok(bad == 0, "names: %u made and read back", checked);

	run_pid_file_name(buf, sizeof(buf), "/d/t.fxt", 77, RUN_CONTROL_SUFFIX);
	ASSERT_STR_EQ(buf, "/d/t.fxt.77.run", "naming: fxt-run's control file");
	run_pid_file_name(buf, sizeof(buf), "/d/t.fxt", 5, RUN_SESSION_SUFFIX);
	ASSERT_STR_EQ(buf, "/d/t.fxt.5.session", "naming: the session");

	/* fxt-run's spare spool files: read back, and no other file of the
	 * run's. */
	{
		long lpid = 0, pid;
		unsigned n;

		run_spare_name(buf, sizeof(buf), "/d/t.fxt", 77, RUN_SPARE_SLOTS - 1);
		ASSERT_STR_EQ(buf, "/d/t.fxt.77.spare.63", "naming: a spare spool file");
		ok(run_spare_parse("/d/t.fxt", buf + 3, &lpid) && lpid == 77,
		   "spare: read back, with fxt-run's pid");
		ok(!run_spool_parse("/d/t.fxt", buf + 3, &pid, &n) &&
		       !run_archive_parse("/d/t.fxt", buf + 3, &pid, &n) &&
		       !run_pid_file_parse("/d/t.fxt", buf + 3, RUN_CONTROL_SUFFIX, &pid),
		   "spare: no spool, archive or control file");
		run_spare_name(buf, sizeof(buf), "/d/trace", 8, 0);
		ok(run_spare_parse("/d/trace", buf + 3, &lpid) && lpid == 8 &&
		       !run_archive_parse("/d/trace", buf + 3, &pid, &n),
		   "spare: OUT without extension, no archive");
		ok(!run_spare_parse("/d/t.fxt", "t.fxt.77.spare.64", &lpid) &&
		       !run_spare_parse("/d/t.fxt", "t.fxt.77.spare", &lpid) &&
		       !run_spare_parse("/d/t.fxt", "t.fxt.spare.1", &lpid) &&
		       !run_spare_parse("/d/t.fxt", "u.fxt.77.spare.1", &lpid) &&
		       !run_spare_parse("/d/t.fxt", "t.fxt.77.spare.1.spool", &lpid),
		   "spare: not a spare (slot past the last, none, no pid, another run, more)");
	}
}

/* Names that are not the run's files. */
static void test_not_names(void)
{
	static const struct {
		char kind; /* a: archive, s: spool, p: session */
		const char *out, *name, *what;
	} cases[] = {
		{ 'a', "/d/trace.fxt", "trace.fxt", "the root's archive is no other process's" },
		{ 'a', "/d/trace.fxt", "trace.x.fxt", "a pid is digits" },
		{ 'a', "/d/trace.fxt", "trace..fxt", "an empty pid" },
		{ 'a', "/d/trace.fxt", "trace.-4.fxt", "a negative pid" },
		{ 'a', "/d/trace.fxt", "trace.42.fxt.gz", "another extension" },
		{ 'a', "/d/trace.fxt.gz", "trace.42.fxt", "another extension (gzip)" },
		{ 'a', "/d/trace.fxt", "other.42.fxt", "another run" },
		{ 'a', "/d/trace.fxt", "trace.42.3.4.fxt", "three numbers" },
		{ 'a', "/d/trace.fxt", "trace.4294967296.fxt", "a pid past 32 bits" },
		{ 'a', "/d/trace.fxt", "trace.42.fxt.spool", "a spool" },
		{ 'a', "/d/trace", "trace.42.spool", "a spool, OUT without extension" },
		{ 's', "/d/t.fxt", "t.fxt.spool", "a spool without a pid" },
		{ 's', "/d/t.fxt", "t.fxt.7.spool.x", "more after .spool" },
		{ 's', "/d/t.fxt", "t.fxt.7a.spool", "a pid is digits (spool)" },
		{ 's', "/d/t.fxt", "u.fxt.7.spool", "another run's spool" },
		{ 's', "/d/t.fxt", "t.fxt.7.2.3.spool", "three numbers (spool)" },
		{ 's', "/d/t.fxt", "t.7.fxt", "an archive" },
		{ 'p', "/d/t.fxt", "t.fxt.7.2.session", "a session has one number" },
		{ 'p', "/d/t.fxt", "t.fxt.session", "a session without a pid" },
		{ 'p', "/d/t.fxt", "t.fxt.7.run", "a control file is no session" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long pid;
		unsigned n;
		bool yes =
		    cases[i].kind == 'a' ? run_archive_parse(cases[i].out, cases[i].name, &pid, &n)
		    : cases[i].kind == 's'
			? run_spool_parse(cases[i].out, cases[i].name, &pid, &n)
			: run_pid_file_parse(cases[i].out, cases[i].name, RUN_SESSION_SUFFIX, &pid);
		ok(!yes, "not a name: %s (%s)", cases[i].name, cases[i].what);
	}

	/* A spool found alone: OUT is what precedes .PID[.N].spool. */
	ASSERT_EQ_U64(run_spool_output("/d/t.fxt.7.spool"), 8, "spool output: .PID");
	ASSERT_EQ_U64(run_spool_output("/d/t.fxt.7.12.spool"), 8, "spool output: .PID.N");
	ASSERT_EQ_U64(run_spool_output("/d/t.fxt.spool"), 8, "spool output: no pid");
	ASSERT_EQ_U64(run_spool_output("t.fxt.x7.spool"), 8, "spool output: not digits");
	ASSERT_EQ_U64(run_spool_output("/d/t.fxt.7"), 0, "spool output: no .spool");
	ASSERT_EQ_U64(run_spool_output(".spool"), 0, "spool output: nothing before .spool");

	/* A run's session or control file found alone (fxt-run --recover of a
	 * run that left no spool): OUT and the pid. */
	{
		long pid = 0;
		ASSERT_EQ_U64(run_pid_file_output("/d/t.fxt.42.session", RUN_SESSION_SUFFIX, &pid),
			      8, "pid file output: session");
		ASSERT_EQ_U64((uint64_t)pid, 42, "pid file output: its pid");
		ASSERT_EQ_U64(run_pid_file_output("t.fxt.7.run", RUN_CONTROL_SUFFIX, &pid), 5,
			      "pid file output: control file");
		ASSERT_EQ_U64(run_pid_file_output("t.fxt.run", RUN_CONTROL_SUFFIX, &pid), 0,
			      "pid file output: no pid");
		ASSERT_EQ_U64(run_pid_file_output("t.fxt.x7.run", RUN_CONTROL_SUFFIX, &pid), 0,
			      "pid file output: not digits");
		ASSERT_EQ_U64(run_pid_file_output("/d/.7.run", RUN_CONTROL_SUFFIX, &pid), 0,
			      "pid file output: nothing before the pid");
		ASSERT_EQ_U64(run_pid_file_output("t.fxt.7.spool", RUN_CONTROL_SUFFIX, &pid), 0,
			      "pid file output: another suffix");
	}
}

/* -o / FXT_OUTPUT templates: each escape, the errors, and that an
 * escaped name expands to itself. */
static void test_templates(void)
{
	/* 2026-11-26 09:30:15 UTC. */
	const struct run_template_values v = { 41870, 1795685415LL, "app", "build-3" };
	static const struct {
		const char *tmpl, *want;
	} cases[] = {
		{ "run.fxt", "run.fxt" },
		{ "run-%p.fxt", "run-41870.fxt" },
		{ "run-%t.fxt", "run-20261126-093015.fxt" },
		{ "%n-%h.fxt", "app-build-3.fxt" },
		{ "100%%-%p%p", "100%-4187041870" },
		{ "/d/%n/%n.fxt.gz", "/d/app/app.fxt.gz" },
	};
	const struct run_template_values epoch = { 1, 0, "", "" };
	char buf[64], esc[64], back[64], bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok(run_output_expand(buf, sizeof(buf), cases[i].tmpl, &v, NULL) == 0,
		   "template %s: expands", cases[i].tmpl);
		ASSERT_STR_EQ(buf, cases[i].want, "template %s", cases[i].tmpl);
		ok(run_output_escape(esc, sizeof(esc), buf) == 0 &&
		       run_output_expand(back, sizeof(back), esc, &epoch, NULL) == 0,
		   "template %s: escaped and expanded again", cases[i].tmpl);
		ASSERT_STR_EQ(back, buf, "template %s: the escaped name is itself", cases[i].tmpl);
	}
	run_output_expand(buf, sizeof(buf), "%t", &epoch, NULL);
	ASSERT_STR_EQ(buf, "19700101-000000", "template: %%t at the Epoch");
	ok(run_output_expand(buf, sizeof(buf), "a%qb", &v, &bad) == -EINVAL && bad == 'q',
	   "template: an unknown escape is -EINVAL, and named");
	bad = 'x';
	ok(run_output_expand(buf, sizeof(buf), "a%", &v, &bad) == -EINVAL && bad == 0,
	   "template: a '%%' at the end is -EINVAL, named as 0");
	ok(run_output_expand(buf, 6, "ab%p", &v, NULL) == -ENAMETOOLONG,
	   "template: too long for the buffer");
	ok(run_output_expand(buf, 8, "ab%p", &v, NULL) == 0 && strcmp(buf, "ab41870") == 0,
	   "template: exactly the buffer");
	ok(run_output_escape(esc, 4, "a%b") == -ENAMETOOLONG, "escape: too long");
	ok(run_output_escape(esc, 5, "a%b") == 0 && strcmp(esc, "a%%b") == 0,
	   "escape: exactly the buffer");
}

/* Snapshots: their names both ways, and the rules of --snapshot-if. */
static void test_snapshots(void)
{
	struct fxt_snapshot_rule r;
	char buf[128];
	unsigned n = 0;

	run_snapshot_name(buf, sizeof(buf), "/d/run.fxt", 3, false);
	ASSERT_STR_EQ(buf, "/d/run.snap3.fxt", "snapshot: before the extension");
	run_snapshot_name(buf, sizeof(buf), "/d/run.fxt.gz", 12, false);
	ASSERT_STR_EQ(buf, "/d/run.snap12.fxt.gz", "snapshot: before .fxt.gz");
	run_snapshot_name(buf, sizeof(buf), "/d/run.fxt", 3, true);
	ASSERT_STR_EQ(buf, "/d/run.fxt.snap3.spool", "snapshot: its spool");
	ok(run_snapshot_parse("/d/run.fxt", "run.snap12.fxt", &n) && n == 12, "snapshot: parsed");
	ok(!run_snapshot_parse("/d/run.fxt", "run.snap.fxt", &n) &&
	       !run_snapshot_parse("/d/run.fxt", "run.snap1.fxt.gz", &n) &&
	       !run_snapshot_parse("/d/run.fxt", "run.12.fxt", &n) &&
	       !run_snapshot_parse("/d/run.fxt", "xrun.snap1.fxt", &n),
	   "snapshot: nothing else parsed");
	ok(run_snapshot_spool_parse("/d/run.fxt", "run.fxt.snap7.spool", &n) && n == 7,
	   "snapshot spool: parsed");
	ok(!run_snapshot_spool_parse("/d/run.fxt", "run.fxt.7.spool", &n) &&
	       !run_snapshot_spool_parse("/d/run.fxt", "run.fxt.snap7.spool.part", &n),
	   "snapshot spool: nothing else (a process's spool, a copy being made)");
	ASSERT_EQ_U64(run_spool_output("/d/run.fxt.snap7.spool"), strlen("/d/run.fxt"),
		      "spool output: a snapshot's");

	ok(run_snapshot_rule_parse("parse>10ms", 10, &r) == 0 && strcmp(r.name, "parse") == 0 &&
	       r.limit_ns == 10000000 && r.libc_group == 0,
	   "rule: a function");
	ok(run_snapshot_rule_parse("operator>>(int)>2us", 19, &r) == 0 &&
	       strcmp(r.name, "operator>>(int)") == 0 && r.limit_ns == 2000,
	   "rule: split at the last '>'");
	ok(run_snapshot_rule_parse("libc.io>1.5ms", 13, &r) == 0 && r.libc_group == AGENT_G_IO &&
	       r.limit_ns == 1500000,
	   "rule: a libc group");
	ok(run_snapshot_rule_parse("parse>10msXX", 10, &r) == 0, "rule: only its length is read");
	ok(run_snapshot_rule_parse("parse10ms", 9, &r) == -EINVAL &&
	       run_snapshot_rule_parse(">10ms", 5, &r) == -EINVAL &&
	       run_snapshot_rule_parse("parse>", 6, &r) == -EINVAL &&
	       run_snapshot_rule_parse("parse>soon", 10, &r) == -EINVAL &&
	       run_snapshot_rule_parse("libc.disk>1ms", 13, &r) == -EINVAL,
	   "rule: no '>', no name, no or a bad duration, an unknown group");

	/* Rules on a value (fxt-run --patch). */
	char text[128];
	size_t pos = 0;
	const char *what = NULL;
	ok(run_snapshot_rule_parse("open_db@retval<0", 16, &r) == 0 &&
	       strcmp(r.name, "open_db") == 0 && r.value_of == FXT_SNAP_RETVAL &&
	       r.op == FXT_OP_LT && r.value == 0 && !r.negative,
	   "value rule: retval<0");
	ok(run_snapshot_rule_parse("read@arg2>=4096", 15, &r) == 0 && r.value_of == 2 &&
	       r.op == FXT_OP_GE && r.value == 4096,
	   "value rule: arg2>=4096");
	ok(run_snapshot_rule_parse("f@retval==NULL", 14, &r) == 0 && r.op == FXT_OP_EQ &&
	       r.value == 0,
	   "value rule: NULL");
	ok(run_snapshot_rule_parse("f@arg1!=-0x10", 13, &r) == 0 && r.op == FXT_OP_NE &&
	       (int64_t)r.value == -16 && r.negative,
	   "value rule: a negative hexadecimal number");
	run_snapshot_rule_format(&r, text, sizeof(text));
	ok(strcmp(text, "f@arg1!=-16") == 0, "value rule: as text");
	ok(run_snapshot_rule_parse_at("f@retval<x", 10, &r, &pos, &what) == -EINVAL && pos == 9 &&
	       strcmp(what, "an integer or NULL") == 0,
	   "value rule: what is wrong, and where");
	ok(run_snapshot_rule_parse_at("f@arg1=>1", 9, &r, &pos, &what) == -EINVAL && pos == 6,
	   "value rule: an operator that is none");
	ok(run_snapshot_rule_parse("@retval<0", 9, &r) == -EINVAL &&
	       run_snapshot_rule_parse("libc.io@retval<0", 16, &r) == -EINVAL,
	   "value rule: no name, a libc group");
	r.op = FXT_OP_LT;
	r.value = 0;
	r.negative = false;
	ok(run_snapshot_value_holds(&r, 0xffffffff, 4, true) &&
	       !run_snapshot_value_holds(&r, 0xffffffff, 4, false) &&
	       !run_snapshot_value_holds(&r, 0xffffffff, 8, true),
	   "value test: width and sign (an int -1 in eax)");
	r.op = FXT_OP_GT;
	r.value = (uint64_t)-5;
	r.negative = true;
	ok(run_snapshot_value_holds(&r, 3, 8, false) &&
	       run_snapshot_value_holds(&r, 0xfe, 1, true) &&
	       !run_snapshot_value_holds(&r, 0xf0, 1, true),
	   "value test: a negative constant, unsigned and signed values");
}

/* --include's patterns with a test (run/recording.h), and the argspec
 * lines that carry it to the agent (run/argspec.h). */
static void test_include_tests(void)
{
	struct fxt_snapshot_rule r;
	struct fxt_argspec_cond cond, incl;
	const char *module, *symbol, *what = NULL;
	uint32_t caps;
	size_t pos = 0;
	char line[256];

	ok(run_include_test_parse("lookup@arg1==42", 15, &r, &pos, &what) == 1 &&
	       strcmp(r.name, "lookup") == 0 && r.value_of == 1 && r.op == FXT_OP_EQ &&
	       r.value == 42,
	   "include test: a pattern and its test");
	ok(run_include_test_parse("^(parse|lookup)$", 16, &r, &pos, &what) == 0 &&
	       run_include_test_parse("a>b", 3, &r, &pos, &what) == 0 &&
	       run_include_test_parse("user@host", 9, &r, &pos, &what) == 0,
	   "include test: none (a plain pattern, with '>' or '@' in it)");
	ok(run_include_test_parse("lookup@retval<0", 15, &r, &pos, &what) == -EINVAL && pos == 7 &&
	       strncmp(what, "argN", 4) == 0,
	   "include test: retval refused, at its column");
	ok(run_include_test_parse("lookup@arg1=4", 13, &r, &pos, &what) == -EINVAL && pos == 11,
	   "include test: a bad operator, at its column");

	cond = (struct fxt_argspec_cond){ 2, FXT_REG_RAX, 4, true };
	incl = (struct fxt_argspec_cond){ 5, FXT_REG_GPR0, 8, false };
	ok(run_argspec_format(line, sizeof(line), "app", "lookup", 0x100001, &cond, &incl) > 0 &&
	       strcmp(line, "app\tlookup\t0x100001\t2:16:4:1\ti5:0:8:0\n") == 0,
	   "argspec: both tests in the line");
	line[strlen(line) - 1] = '\0';
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == 0 &&
	       strcmp(symbol, "lookup") == 0 && caps == 0x100001 && cond.rule == 2 &&
	       cond.reg == FXT_REG_RAX && cond.width == 4 && cond.is_signed && incl.rule == 5 &&
	       incl.reg == FXT_REG_GPR0 && incl.width == 8 && !incl.is_signed,
	   "argspec: ... read back");
	snprintf(line, sizeof(line), "app\tlookup\t0x1\ti3:0:4:1");
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == 0 &&
	       cond.rule == FXT_ARGSPEC_NO_RULE && incl.rule == 3 && caps == 1,
	   "argspec: the include test alone");
	snprintf(line, sizeof(line), "app\tlookup\t0x1\ti3:0:4:1\t2:16:4:1");
	ok(run_argspec_parse(line, &module, &symbol, &caps, &cond, &incl) == -EINVAL,
	   "argspec: tests out of order: the line is skipped");
}

int main(void)
{
	test_sizes();
	test_names();
	test_round_trips();
	test_not_names();
	test_templates();
	test_snapshots();
	test_include_tests();
	done_testing();
	return exit_status();
}
