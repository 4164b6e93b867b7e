/* fxt-run's command line: the options (their rows, spelling and checks are
 * the settings table's, run/settings.def; here, what fxt-run does with its
 * own and the checks across options), --help (the source of man fxt-run)
 * and --version, and --recover's options among its paths. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"
#include "run/settings.h"
#include "run/recording.h"

#ifndef FXT_PKGLIBDIR
#define FXT_PKGLIBDIR "/usr/local/lib/fxtrace"
#endif

#define AGENT_NAME "libfxt-agent.so"

/* With --snapshot-if: the flight recorder (run_mode_resolve()), another
 * --mode refused; the libc groups its rules name recorded. */
static void check_snapshots(struct options *o)
{
	struct fxt_values *v = &o->set;
	const char *rules = v->v[FXT_S_SNAPSHOT_IF].s;
	unsigned groups = AGENT_G_DEFAULT;
	const char *why;

	if (!v->given[FXT_S_SNAPSHOT_IF]) {
		if (v->given[FXT_S_MAX_SNAPSHOTS])
			die(EXIT_USAGE, "--max-snapshots: without --snapshot-if");
		return;
	}
	v->v[FXT_S_MODE].u =
	    run_mode_resolve(v->given[FXT_S_MODE], (enum fxt_mode)v->v[FXT_S_MODE].u, true, &why);
	if (why)
		die(EXIT_USAGE,
		    "--snapshot-if: snapshots are of the flight recorder "
		    "(--mode=circular), not of --mode=%s",
		    run_mode_name((unsigned)v->v[FXT_S_MODE].u));
	v->given[FXT_S_MODE] = true;
	if (v->given[FXT_S_LIBC])
		run_libc_parse(v->v[FXT_S_LIBC].s, &groups);
	for (const char *p = rules; *p;) {
		size_t len = strcspn(p, "\n");
		struct fxt_snapshot_rule r;

		if (run_snapshot_rule_parse(p, len, &r) == 0 && r.libc_group &&
		    !(groups & r.libc_group))
			die(EXIT_USAGE,
			    "--snapshot-if: %s is not recorded; add it with --libc (e.g. "
			    "--libc=default,%s)",
			    r.name, run_libc_group_name(r.libc_group));
		p += len + (p[len] == '\n');
	}
}

/* --help: also the source of man fxt-run (help2man), hence its shape:
 * options with their descriptions two spaces apart, then paragraphs that
 * help2man makes sections of ("Exit status:", "Environment:",
 * "Examples:").  The options' lines and the Environment block are the
 * table's (run/settings.def). */
static void usage(void)
{
	fputs("Usage: fxt-run [OPTION]... [--] PROGRAM [ARG]...\n"
	      "  or:  fxt-run -p PID [--patch=REGEX] [--libc=LIST] [--sample] [--duration=T] "
	      "[OPTION]...\n"
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
	      "itself: FXT_AGENT, FXT_RUN_DEBUG, FXT_RUN_LATE, FXT_KERNEL_BUFFER,\n"
	      "FXT_SRCLINE_CACHE, FXT_LIBZSTD); without fxt-run, LD_PRELOAD the agent and\n"
	      "set them by hand.\n"
	      "\n"
	      "Examples:\n"
	      "  $ fxt-run -o app.fxt -- ./app --its --own --arguments\n"
	      "  $ fxt-run --libc=all --sample -o sort.fxt -- sort -n numbers.txt\n"
	      "  $ fxt-run --mode=circular --buffer-size=4M -o last.fxt -- ./server\n"
	      "  $ fxt-run --recover .\n",
	      stdout);
}

/* getopt's tables, from the rows that are options: each option's value is
 * its short letter, or 256 + its row. */
static void options_table(struct option *lo, char *shortopts)
{
	char *p = shortopts;

	/* '+': stop at PROGRAM, whose own options are not ours.  ':': we
	 * print the errors ourselves, on one line. */
	*p++ = '+';
	*p++ = ':';
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		const struct fxt_setting *row = &fxt_settings[i];

		if (row->opt == NULL)
			continue;
		lo->name = row->opt;
		lo->has_arg = row->arg == NULL	   ? no_argument
			      : row->arg[0] == '[' ? optional_argument
						   : required_argument;
		lo->flag = NULL;
		lo->val = row->short_opt ? row->short_opt : 256 + (int)i;
		lo++;
		if (row->short_opt) {
			*p++ = row->short_opt;
			if (row->arg != NULL)
				*p++ = ':';
		}
	}
	*lo = (struct option){ 0 };
	*p = '\0';
}

/* The row of getopt's value c. */
static enum fxt_setting_id option_row(int c)
{
	if (c >= 256)
		return (enum fxt_setting_id)(c - 256);
	for (size_t i = 0; i < FXT_S_COUNT; i++)
		if (fxt_settings[i].short_opt == c)
			return (enum fxt_setting_id)i;
	return FXT_S_COUNT;
}

void options_parse(int argc, char **argv, struct options *o)
{
	struct option longopts[FXT_S_COUNT + 1];
	char shortopts[2 + 2 * FXT_S_COUNT + 1], why[512];
	int c;

	memset(o, 0, sizeof(*o));
	options_table(longopts, shortopts);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		enum fxt_setting_id id = c == ':' || c == '?' ? FXT_S_COUNT : option_row(c);

		switch (id) {
		case FXT_S_FORCE:
			o->force = true;
			break;
		case FXT_S_QUIET:
			o->quiet = true;
			break;
		case FXT_S_KEEP_PARTS:
			o->keep_parts = true;
			break;
		case FXT_S_SRCLINE:
			o->srcline = true;
			break;
		case FXT_S_RECOVER:
			o->recover = true;
			break;
		case FXT_S_PATCH_LIST:
			o->patch_list = true;
			break;
		case FXT_S_HELP:
			usage();
			exit(0);
		case FXT_S_VERSION:
			printf("fxt-run (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		case FXT_S_COUNT:
			if (c == ':')
				die(EXIT_USAGE, "option '%s' needs an argument (see --help)",
				    argv[optind - 1]);
			if (optopt != 0)
				die(EXIT_USAGE, "unknown option '-%c' (see --help)", optopt);
			die(EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
		default: /* a setting: the table checks and keeps it */
			if (fxt_setting_parse(id, optarg, &o->set, why, sizeof(why)) != 0)
				die(EXIT_USAGE, "%s", why);
			if (id == FXT_S_OUTPUT)
				o->output = o->set.v[id].s;
			break;
		}
	}
	if (o->set.given[FXT_S_PID]) {
		if (optind < argc)
			die(EXIT_USAGE,
			    "-p: attach to a process or run a program, not both "
			    "(%s given)",
			    argv[optind]);
		if (o->recover)
			die(EXIT_USAGE, "-p: not with --recover");
	} else if (optind >= argc) {
		die(EXIT_USAGE, o->recover ? "--recover: no spool or directory given (see --help)"
					   : "no program to run (see --help)");
	} else if (o->set.given[FXT_S_DURATION]) {
		die(EXIT_USAGE, "--duration: only with -p (a program runs until it exits)");
	}
	o->argv = argv + optind;
	check_snapshots(o);
	if (o->patch_list && !o->set.given[FXT_S_PATCH])
		die(EXIT_USAGE, "--patch-list: say what to patch with --patch (see --help)");
	if (o->set.given[FXT_S_PATCH_MODULE] && !o->set.given[FXT_S_PATCH])
		die(EXIT_USAGE, "--patch-module: say what to patch with --patch (see --help)");
	/* Launched, a program built with -finstrument-functions needs no
	 * --patch for them (args_check_launch()). */
	bool attached = o->set.given[FXT_S_PID];
	if (o->set.given[FXT_S_ARGS] && !o->set.given[FXT_S_PATCH] && attached)
		die(EXIT_USAGE, "--args: the arguments are read at patched entries: say what to "
				"patch with --patch (see --help)");
	if (o->set.given[FXT_S_SNAPSHOT_IF] && !o->set.given[FXT_S_PATCH] && attached)
		for (const char *l = o->set.v[FXT_S_SNAPSHOT_IF].s; l && *l;) {
			size_t len = strcspn(l, "\n");
			struct fxt_snapshot_rule r;

			if (run_snapshot_rule_parse(l, len, &r) == 0 && r.value_of)
				die(EXIT_USAGE,
				    "--snapshot-if '%.*s': a value is read at patched calls: say "
				    "what to patch with --patch (see --help)",
				    (int)len, l);
			l += len + (l[len] == '\n');
		}
	if (o->set.given[FXT_S_INCLUDE] && !o->set.given[FXT_S_PATCH])
		for (const char *l = o->set.v[FXT_S_INCLUDE].s; l && *l;) {
			size_t len = strcspn(l, "\n"), pos;
			struct fxt_snapshot_rule r;
			const char *what;

			if (run_include_test_parse(l, len, &r, &pos, &what) == 1)
				die(EXIT_USAGE,
				    "--include '%.*s': the argument is read at patched entries: say "
				    "what to patch with --patch (see --help)",
				    (int)len, l);
			l += len + (l[len] == '\n');
		}
	if (o->set.given[FXT_S_RETVAL] && !o->set.given[FXT_S_PATCH] && attached)
		die(EXIT_USAGE, "--retval: the return values are read at patched returns: say "
				"what to patch with --patch (see --help)");
#ifndef HAVE_CAPSTONE
	if (o->set.given[FXT_S_PATCH])
		die(EXIT_USAGE, "--patch: this fxtrace was built without Capstone (install "
				"libcapstone-dev and build again)");
#endif
}

void options_free(struct options *o)
{
	if (o->output == o->set.v[FXT_S_OUTPUT].s)
		o->output = NULL;
	fxt_values_free(&o->set);
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
		} else if (opts && strcmp(a, "--srcline") == 0) {
			o->srcline = true;
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
