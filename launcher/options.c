/* fxt-run's command line: the options, --help (the source of man fxt-run)
 * and --version, and --recover's options among its paths. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"
#include "run/settings.h"
#include "spool/names.h"
#include "spool/recording.h"

#ifndef FXT_PKGLIBDIR
#define FXT_PKGLIBDIR "/usr/local/lib/fxtrace"
#endif

#define AGENT_NAME "libfxt-agent.so"

/* --sample without a rate. */
#define DEFAULT_SAMPLE_HZ 1000u

/* --help: also the source of man fxt-run (help2man), hence its shape:
 * options with their descriptions two spaces apart, then paragraphs that
 * help2man makes sections of ("Exit status:", "Environment:",
 * "Examples:"). */
/* -o's escapes (spool/names.h), checked before anything runs. */
static void check_template(const char *tmpl)
{
	struct run_template_values v = { 1, 0, "p", "h" };
	char buf[PATH_MAX], bad = 0;

	if (run_output_expand(buf, sizeof(buf), tmpl, &v, &bad) == -EINVAL) {
		if (bad)
			die(EXIT_USAGE,
			    "-o %s: unknown escape '%%%c' (%%p pid, %%t time, %%n program, "
			    "%%h host, %%%% a '%%')",
			    tmpl, bad);
		die(EXIT_USAGE, "-o %s: a '%%' at the end (write %%%% for a '%%')", tmpl);
	}
}

/* --snapshot-if: "NAME>DURATION" (spool/recording.h). */
static void check_snapshot_rule(const char *rule, const struct options *o)
{
	struct fxt_snapshot_rule r;
	unsigned n = 1;

	for (const char *p = o->snapshot_if; p && *p; p++)
		n += *p == '\n';
	if (n > FXT_MAX_SNAPSHOT_RULES)
		die(EXIT_USAGE, "--snapshot-if: at most %u rules", FXT_MAX_SNAPSHOT_RULES);
	if (strchr(rule, '\n') != NULL || fxt__snapshot_rule_parse(rule, strlen(rule), &r) != 0)
		die(EXIT_USAGE,
		    "--snapshot-if: '%s' is not NAME>DURATION (a function's name or glob, or "
		    "libc.GROUP; a duration such as 10ms)",
		    rule);
}

static unsigned parse_max_snapshots(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > 1000000)
		die(EXIT_USAGE, "--max-snapshots: not a count in 1..1000000: '%s'", s);
	return (unsigned)v;
}

/* With --snapshot-if: the flight recorder, unless another --mode was
 * asked for; the libc groups its rules name recorded. */
static void check_snapshots(struct options *o)
{
	unsigned groups = AGENT_G_DEFAULT;

	if (!o->snapshot_if) {
		if (o->max_snapshots)
			die(EXIT_USAGE, "--max-snapshots: without --snapshot-if");
		return;
	}
	if (o->mode_given && o->mode != FXT_MODE_CIRCULAR)
		die(EXIT_USAGE,
		    "--snapshot-if: snapshots are of the flight recorder "
		    "(--mode=circular), not of --mode=%s",
		    fxt__mode_name(o->mode));
	o->mode = FXT_MODE_CIRCULAR;
	o->mode_given = true;
	if (o->libc)
		agent_libc_parse(o->libc, &groups);
	for (const char *p = o->snapshot_if; *p;) {
		size_t len = strcspn(p, "\n");
		struct fxt_snapshot_rule r;

		if (fxt__snapshot_rule_parse(p, len, &r) == 0 && r.libc_group &&
		    !(groups & r.libc_group))
			die(EXIT_USAGE,
			    "--snapshot-if: %s is not recorded; add it with --libc (e.g. "
			    "--libc=default,%s)",
			    r.name, agent_group_name(r.libc_group));
		p += len + (p[len] == '\n');
	}
}

static void usage(void)
{
	fputs("Usage: fxt-run [OPTION]... [--] PROGRAM [ARG]...\n"
	      "  or:  fxt-run --recover [-o FILE] [-f] [-q] [--keep-parts] SPOOL|DIR...\n"
	      "Run PROGRAM under the fxtrace agent and write what it did to a Fuchsia Trace\n"
	      "Format archive: every call of its functions built with -finstrument-functions,\n"
	      "its calls into the C library, stack samples; threads, fork and exec followed.\n"
	      "\n",
	      stdout);
	fxt_settings_usage_options(stdout);
	fputs("\n"
	      "SIZE is a number of bytes, optionally followed by B, or by K, M or G (powers\n"
	      "of 1024) optionally followed by B or iB, in either case: 4096, 64k, 64MiB.\n"
	      "\n"
	      "The agent is $FXT_AGENT if set, else " AGENT_NAME " next to fxt-run (or in\n"
	      "its .libs/), else the one installed in " FXT_PKGLIBDIR ".\n"
	      "\n"
	      "Each traced process (PROGRAM, its children, the programs they run) records\n"
	      "into a spool next to FILE, which fxt-run turns into that process's archive as\n"
	      "soon as the process is done; when PROGRAM exits, fxt-run merges them into\n"
	      "FILE, one FXT provider per process, PROGRAM's first, and prints one summary\n"
	      "line.  A process still running then (a daemon) writes its own archive when it\n"
	      "exits.  A process that ends before it seals its spool (_exit or exit_group\n"
	      "rather than exit, abort, a signal, SIGKILL) leaves it, and fxt-run converts\n"
	      "it all the same, saying how the process ended as far as it knows (\"ended by\n"
	      "_exit(3)\", \"killed by SIGKILL\", or \"recovered from spool\"); if fxt-run\n"
	      "itself is killed, the program runs on, and `fxt-run --recover DIR` makes its\n"
	      "archive later, of the spools and archives the run left.  fxt-run warns when\n"
	      "PROGRAM cannot be traced (static, set-user-ID, or with file capabilities and\n"
	      "not run by root) and when none of its own functions was recorded (not built\n"
	      "with -finstrument-functions).\n"
	      "\n"
	      "The summary line says what FILE holds, as `fxt-dump --stats FILE` counts it:\n"
	      "its events (event records of every type: slices, instants, counters, flow\n"
	      "events), its threads (each thread with at least one event; a thread's\n"
	      "--sample track is one of its own), the calls dropped past --max-size (or\n"
	      "past a thread's --buffer-size in oneshot mode), the calls overwritten in\n"
	      "circular mode (when there are), and for a merged FILE its processes (and the "
	      "per-process archives merged, when\n"
	      "more: a process leaves one more after each exec); with --keep-parts, one\n"
	      "such line per archive.  With --sample, a warning counts the threads that\n"
	      "could not be sampled and says why (a program with a SIGPROF handler of its\n"
	      "own blocked SIGPROF in them; otherwise threads that block SIGPROF are\n"
	      "sampled); fxt-report lists them.\n"
	      "\n"
	      "Exit status:\n"
	      "  N       PROGRAM's exit status\n"
	      "  128+N   PROGRAM was killed by signal N\n"
	      "  127     PROGRAM was not found\n"
	      "  126     PROGRAM was found but cannot be executed\n"
	      "  2       fxt-run's own errors (options, the agent, FILE), before PROGRAM runs\n"
	      "  0, 1    with --recover: 0 when it wrote an archive, 1 when there was nothing\n"
	      "          to recover\n"
	      "\n"
	      "Environment:\n",
	      stdout);
	fxt_settings_usage_env(stdout);
	fputs("\n"
	      "The FXT_* variables above are what fxt-run passes to the agent (or reads\n"
	      "itself: FXT_AGENT, FXT_RUN_DEBUG); without fxt-run, LD_PRELOAD the agent and\n"
	      "set them by hand.\n"
	      "\n"
	      "Examples:\n"
	      "  $ fxt-run -o app.fxt -- ./app --its --own --arguments\n"
	      "  $ fxt-run --libc=all --sample -o sort.fxt -- sort -n numbers.txt\n"
	      "  $ fxt-run --mode=circular --buffer-size=4M -o last.fxt -- ./server\n"
	      "  $ fxt-run --recover .\n",
	      stdout);
}

/* Dies unless every group of the --libc list is known, naming the first
 * unknown one.  The agent parses the list itself (FXT_LIBC), with the same
 * function: it gets it as given. */
static void check_libc(const char *list)
{
	unsigned groups;

	if (agent_libc_parse(list, &groups) == 0)
		return;
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		char *one = strndup(p, len);
		if (one == NULL)
			die(EXIT_USAGE, "out of memory");
		if (agent_libc_parse(one, &groups) != 0)
			die(EXIT_USAGE,
			    "--libc: unknown group '%s' (groups: io, mem, thread, sync, proc, "
			    "sleep, log; or all, none, default)",
			    one);
		free(one);
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	die(EXIT_USAGE, "--libc: invalid list '%s'", list); /* not reached */
}

/* Dies unless `re` is a POSIX extended regular expression (as the agent
 * compiles it, agent/filter.c) without a newline (the list separator). */
static void check_regex(const char *opt, const char *re)
{
	regex_t r;
	char msg[128];
	int rc;

	if (re[0] == '\0' || strchr(re, '\n'))
		die(EXIT_USAGE, "%s: invalid pattern '%s'", opt, re);
	rc = regcomp(&r, re, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r, msg, sizeof(msg));
		die(EXIT_USAGE, "%s: '%s' is not a regular expression: %s", opt, re, msg);
	}
	regfree(&r);
}

/* Appends `s` to the newline-separated list *list (malloc'd). */
static void append_line(char **list, const char *s)
{
	size_t old = *list ? strlen(*list) : 0;
	char *v = realloc(*list, old + strlen(s) + 2);

	if (v == NULL)
		die(EXIT_USAGE, "out of memory");
	if (old)
		v[old++] = '\n';
	strcpy(v + old, s);
	*list = v;
}

/* --depth=N: 1 to 1000000, or death. */
static unsigned parse_depth(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (v == 0 || errno != 0 || *end != '\0' || v > 1000000)
		die(EXIT_USAGE, "--depth: invalid depth '%s' (1 to 1000000)", s);
	return (unsigned)v;
}

/* The rate of --sample=HZ: a decimal number from 1 to AGENT_MAX_SAMPLE_HZ,
 * or death. */
static unsigned parse_sample(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (v == 0 || errno != 0 || *end != '\0' || v > AGENT_MAX_SAMPLE_HZ)
		die(EXIT_USAGE, "--sample: invalid rate '%s' (1 to %u samples per second)", s,
		    AGENT_MAX_SAMPLE_HZ);
	return (unsigned)v;
}

void options_parse(int argc, char **argv, struct options *o)
{
	enum {
		OPT_BUFFER_SIZE = 256,
		OPT_MAX_SIZE,
		OPT_LIBC,
		OPT_SAMPLE,
		OPT_KEEP_PARTS,
		OPT_RECOVER,
		OPT_MODE,
		OPT_INCLUDE,
		OPT_EXCLUDE,
		OPT_MODULE,
		OPT_DEPTH,
		OPT_MIN_DURATION,
		OPT_SNAPSHOT_IF,
		OPT_MAX_SNAPSHOTS,
		OPT_PATCH,
		OPT_PATCH_MODULE,
		OPT_PATCH_LIST
	};
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "libc", required_argument, NULL, OPT_LIBC },
		{ "sample", optional_argument, NULL, OPT_SAMPLE },
		{ "keep-parts", no_argument, NULL, OPT_KEEP_PARTS },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "module", required_argument, NULL, OPT_MODULE },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
		{ "snapshot-if", required_argument, NULL, OPT_SNAPSHOT_IF },
		{ "max-snapshots", required_argument, NULL, OPT_MAX_SNAPSHOTS },
		{ "patch", required_argument, NULL, OPT_PATCH },
		{ "patch-module", required_argument, NULL, OPT_PATCH_MODULE },
		{ "patch-list", no_argument, NULL, OPT_PATCH_LIST },
		{ "recover", no_argument, NULL, OPT_RECOVER },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	/* '+': stop at PROGRAM, whose own options are not ours.  ':': we
	 * print the errors ourselves, on one line. */
	while ((c = getopt_long(argc, argv, "+:o:fqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (optarg[0] == '\0')
				die(EXIT_USAGE, "-o: empty file name");
			/* The agent writes archives with seeks and renames of
			 * its own, and several processes may write: a file. */
			if (strcmp(optarg, "-") == 0)
				die(EXIT_USAGE,
				    "-o -: cannot write the archive to standard output; "
				    "give a file name");
			check_template(optarg);
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_BUFFER_SIZE:
			if (fxt__parse_size(optarg, &o->buffer_bytes) != 0 || o->buffer_bytes == 0)
				die(EXIT_USAGE, "--buffer-size: invalid size '%s'", optarg);
			o->buffer_size = optarg;
			break;
		case OPT_MAX_SIZE:
			if (fxt__parse_size(optarg, &o->max_bytes) != 0)
				die(EXIT_USAGE, "--max-size: invalid size '%s'", optarg);
			o->max_size = optarg;
			break;
		case OPT_LIBC:
			check_libc(optarg);
			o->libc = optarg;
			break;
		case OPT_SAMPLE:
			o->sample_hz = optarg != NULL ? parse_sample(optarg) : DEFAULT_SAMPLE_HZ;
			break;
		case OPT_KEEP_PARTS:
			o->keep_parts = true;
			break;
		case OPT_INCLUDE:
			check_regex("--include", optarg);
			append_line(&o->include, optarg);
			break;
		case OPT_EXCLUDE:
			check_regex("--exclude", optarg);
			append_line(&o->exclude, optarg);
			break;
		case OPT_MODULE:
			if (optarg[0] == '\0' || strchr(optarg, '\n'))
				die(EXIT_USAGE, "--module: invalid glob '%s'", optarg);
			append_line(&o->modules, optarg);
			break;
		case OPT_DEPTH:
			o->depth = parse_depth(optarg);
			break;
		case OPT_MIN_DURATION:
			if (fxt__parse_duration(optarg, &o->min_duration_ns) != 0)
				die(EXIT_USAGE,
				    "--min-duration: invalid duration '%s' (a number and ns, us, "
				    "ms "
				    "or s: 10us)",
				    optarg);
			o->min_duration = optarg;
			break;
		case OPT_MODE:
			if (fxt__mode_parse(optarg, &o->mode) != 0)
				die(EXIT_USAGE,
				    "--mode: unknown mode '%s' (modes: " FXT_MODE_NAMES ")",
				    optarg);
			o->mode_given = true;
			break;
		case OPT_SNAPSHOT_IF:
			check_snapshot_rule(optarg, o);
			append_line(&o->snapshot_if, optarg);
			break;
		case OPT_MAX_SNAPSHOTS:
			o->max_snapshots = parse_max_snapshots(optarg);
			break;
		case OPT_RECOVER:
			o->recover = true;
			break;
		case OPT_PATCH:
			check_regex("--patch", optarg);
			append_line(&o->patch, optarg);
			break;
		case OPT_PATCH_MODULE:
			if (optarg[0] == '\0' || strchr(optarg, '\n'))
				die(EXIT_USAGE, "--patch-module: invalid glob '%s'", optarg);
			append_line(&o->patch_modules, optarg);
			break;
		case OPT_PATCH_LIST:
			o->patch_list = true;
			break;
		case 'h':
			usage();
			exit(0);
		case 'V':
			printf("fxt-run (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		case ':':
			die(EXIT_USAGE, "option '%s' needs an argument (see --help)",
			    argv[optind - 1]);
		default:
			if (optopt != 0)
				die(EXIT_USAGE, "unknown option '-%c' (see --help)", optopt);
			die(EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die(EXIT_USAGE, o->recover ? "--recover: no spool or directory given (see --help)"
					   : "no program to run (see --help)");
	o->argv = argv + optind;
	check_snapshots(o);
	if (o->patch_list && !o->patch)
		die(EXIT_USAGE, "--patch-list: say what to patch with --patch (see --help)");
	if (o->patch_modules && !o->patch)
		die(EXIT_USAGE, "--patch-module: say what to patch with --patch (see --help)");
#ifndef HAVE_CAPSTONE
	if (o->patch)
		die(EXIT_USAGE, "--patch: this fxtrace was built without Capstone (install "
				"libcapstone-dev and build again)");
#endif
}

void options_free(struct options *o)
{
	free(o->include);
	free(o->exclude);
	free(o->modules);
	free(o->snapshot_if);
	free(o->patch);
	free(o->patch_modules);
	o->include = o->exclude = o->modules = o->snapshot_if = o->patch = NULL;
	o->patch_modules = NULL;
}

/* --recover takes its options anywhere among the paths. */
char **options_recover(struct options *o)
{
	size_t n = 0, j = 0;
	char **paths;
	bool opts = true;

	while (o->argv[n] != NULL)
		n++;
	paths = calloc(n + 1, sizeof(*paths));
	if (paths == NULL)
		die(EXIT_USAGE, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char *a = o->argv[i];
		if (opts && strcmp(a, "--") == 0) {
			opts = false;
		} else if (opts && (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
			if (i + 1 == n)
				die(EXIT_USAGE, "option '%s' needs an argument (see --help)", a);
			o->output = o->argv[++i];
		} else if (opts && strncmp(a, "--output=", 9) == 0) {
			o->output = a + 9;
		} else if (opts && (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0)) {
			o->force = true;
		} else if (opts && (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)) {
			o->quiet = true;
		} else if (opts && strcmp(a, "--keep-parts") == 0) {
			o->keep_parts = true;
		} else if (opts && a[0] == '-' && a[1] != '\0') {
			die(EXIT_USAGE, "--recover: unknown option '%s' (see --help)", a);
		} else {
			paths[j++] = a;
		}
	}
	if (j == 0)
		die(EXIT_USAGE, "--recover: no spool or directory given (see --help)");
	if (o->output != NULL && o->output[0] == '\0')
		die(EXIT_USAGE, "-o: empty file name");
	return paths;
}
