/* fxt: the front command, git-style.  `fxt COMMAND ARG...` runs the
 * program fxt-COMMAND with ARG... by exec, so that its standard streams
 * and its exit status are the command's own; the fxt-* programs stay
 * commands of their own (scripts call fxt-run directly).
 *
 * fxt-COMMAND is looked up in the directory of the running fxt first (in
 * the build tree, the one above tools/fxt), then in PATH.  The directory
 * first, so that an fxt runs the programs of its own build tree or
 * installation, whatever older fxtrace PATH holds; PATH after, so that an
 * fxt copied elsewhere still finds an installed one.
 *
 * The commands are one table: a later `fxt import` or `fxt merge` is a
 * row, and the one-line summaries are also the NAME lines of the man pages
 * (man/local.mk reads them from `fxt --help`). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/front/common.h"

#define NAME "fxt"

static const struct command {
	const char *name;    /* runs fxt-NAME */
	const char *summary; /* one line, for --help and the man page's NAME */
} commands[] = {
	{ "run", "trace a program's calls into a Fuchsia Trace Format archive" },
	{ "dump", "print, check or count the records of an FXT archive" },
	{ "report", "where the time went: per function, thread or process" },
	{ "diff", "per-function changes between runs, with a significance test" },
	{ "flame", "flame graphs (SVG), differential flame graphs, folded stacks" },
	{ "tree", "the call tree: calls, total and self time per call path" },
	{ "replay", "every call in time order, nested, with its arguments" },
	{ "view", "the call tree, timelines and calls, interactive in the terminal" },
	{ "export", "convert an FXT archive to Chrome trace-event JSON" },
	{ "import", "convert a trace-cmd trace.dat or a Darwin ktrace file to FXT" },
	{ "merge", "put FXT archives side by side in one, on one clock" },
	{ "waits", "who made each thread wait, for how long, from an archive's flows" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char help_head[] =
    "Usage: fxt [OPTION] COMMAND [ARG]...\n"
    "  or:  fxt help COMMAND\n"
    "Run an fxtrace command: trace a program, read its FXT archives.\n"
    "`fxt COMMAND ARG...` runs the program fxt-COMMAND with ARG...: its\n"
    "standard input, output, error and exit status are the command's own.\n"
    "\n"
    "Commands:\n";

static const char help_tail[] =
    "  help      show a command's help: `fxt help COMMAND` is\n"
    "            `fxt-COMMAND --help`\n"
    "\n"
    "Options:\n"
    "  -h, --help      print this help and exit\n"
    "  -V, --version   print the version and exit\n"
    "\n"
    "fxt-COMMAND is looked up in the directory of fxt itself first (its build\n"
    "tree, or where fxtrace was installed), then in PATH: an fxt runs the\n"
    "programs of its own build or installation.\n"
    "\n"
    "Exit status:\n"
    "  N     the command's own status, whatever it is\n"
    "  2     bad usage: no COMMAND, an unknown one, an unknown option\n"
    "  126   fxt-COMMAND was found but cannot be run\n"
    "  127   fxt-COMMAND was found neither next to fxt nor in PATH\n";

/* The help text, assembled once from the table. */
static const char *help_text(void)
{
	static char buf[4096];
	size_t n = 0;

	if (buf[0])
		return buf;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", help_head);
	for (size_t i = 0; i < NCOMMANDS && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  %-8s  %s\n", commands[i].name,
				      commands[i].summary);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "%s", help_tail);
	return buf;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Puts in buf the path of `prog` in the directory of the running fxt, or,
 * when that is a build tree's tools/ (fxt is built as tools/fxt: fxt/ is
 * the codec's folder), in the directory above, where the fxt-* programs
 * are built.  Returns 0, or -ENOENT when there is none. */
static int next_to_self(const char *prog, char *buf, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	self[n] = 0;
	for (int up = 0; up < 2 && (slash = strrchr(self, '/')); up++) {
		*slash = 0; /* self is now the directory */
		if (up == 1 && strcmp(slash + 1, "tools") != 0)
			break;
		if ((size_t)snprintf(buf, size, "%s/%s", self, prog) < size &&
		    access(buf, F_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Runs fxt-CMD with argv (argv[0] is replaced).  Returns only on failure,
 * with the exit status to use (said). */
static int run_command(const struct command *cmd, char **argv)
{
	char prog[64], path[PATH_MAX];
	int err;

	snprintf(prog, sizeof(prog), "fxt-%s", cmd->name);
	argv[0] = prog;
	fflush(stdout);
	if (next_to_self(prog, path, sizeof(path)) == 0) {
		execv(path, argv);
		err = errno;
		tool_error(NAME, "%s: %s", path, strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	execvp(prog, argv);
	err = errno;
	if (err == ENOENT) {
		tool_error(NAME, "%s: not found next to fxt nor in PATH", prog);
		return 127;
	}
	tool_error(NAME, "%s: %s", prog, strerror(err));
	return 126;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { NULL, 0, NULL, 0 } };
	struct tool_cli cli = { NAME, help_text(), "+", longopts };
	const struct command *cmd;
	char *help_argv[] = { NULL, (char *)"--help", NULL };

	if (tool_getopt(argc, argv, &cli) != -1)
		return TOOL_EXIT_ERROR;
	if (optind == argc) {
		fputs(cli.help, stderr);
		return TOOL_EXIT_ERROR;
	}
	if (strcmp(argv[optind], "help") == 0) {
		if (optind + 1 == argc) {
			fputs(cli.help, stdout);
			return tool_flush_stdout(NAME);
		}
		if (optind + 2 != argc)
			return tool_usage_error(NAME, "help takes one COMMAND");
		cmd = find_command(argv[optind + 1]);
		if (!cmd)
			return tool_error(NAME, "'%s' is not an fxt command (see 'fxt --help')",
					  argv[optind + 1]);
		return run_command(cmd, help_argv);
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return tool_error(NAME, "'%s' is not an fxt command (see 'fxt --help')",
				  argv[optind]);
	return run_command(cmd, &argv[optind]);
}
