/* fxt-run --args/--retval at a launch: the programs the command line runs
 * by exec, as far as their files and its words say, without running
 * anything, so that their functions' values are planned for too (args.c):
 * a script's interpreter (its "#!" line; env's program there), env's
 * program past its assignments, a shell's -c command's first word past
 * assignments and "exec" ("sh -c 'X=1 exec ./app'").  What a program
 * chooses at run time (pyenv's shim picking a python, a script's own
 * commands) is not known here.
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"
#include "symbolizer/symbolizer.h"

/* Whether `name` is a shell's ("sh", "bash", ...). */
static bool is_shell(const char *name)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ksh", "mksh", "zsh", "ash" };

	for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

/* Whether `w` is a shell's assignment "NAME=VALUE". */
static bool is_assignment(const char *w)
{
	size_t n = strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");

	return n > 0 && w[n] == '=' && !(w[0] >= '0' && w[0] <= '9');
}

/* The program a shell's command text runs first: its first word, past
 * assignments and "exec" / "env" ("X=1 exec ./app --x"); NULL when that
 * is no plain word (a quote, an expansion, a compound command). */
static char *command_program(const char *cmd)
{
	for (;;) {
		size_t n;
		char *w;

		cmd += strspn(cmd, " \t\n");
		n = strcspn(cmd, " \t\n;&|<>()$`\"'\\{}*?[");
		if (n == 0 || (cmd[n] && !strchr(" \t\n;&|", cmd[n])))
			return NULL;
		w = strndup(cmd, n);
		if (!w)
			die(EXIT_USAGE, "out of memory");
		if (!is_assignment(w) && strcmp(w, "exec") != 0 && strcmp(w, "env") != 0)
			return w;
		free(w);
		cmd += n;
	}
}

/* The program that `path` run with the arguments *args (*n; unknown:
 * NULL) executes in its turn, as far as its file or its command line
 * says (malloc'd), or NULL: a script's interpreter ("#!/usr/bin/env
 * python3": python3 in $PATH), env's program past its assignments, a
 * shell's -c command's first word.  *args and *n become that program's
 * arguments where they are known (env's).  Only reads: nothing is run. */
static char *exec_next(const char *path, char *const **argsp, size_t *np)
{
	char *const *args = *argsp;
	size_t n = *np;

	const char *base = strrchr(path, '/');
	char head[256], *name = NULL, *next = NULL;
	size_t i = 0;
	FILE *f;
	int err;

	base = base ? base + 1 : path;
	*argsp = NULL;
	*np = 0;
	f = fopen(path, "re");
	if (f && fgets(head, sizeof(head), f) && strncmp(head, "#!", 2) == 0) {
		/* "#!INTERP [ARG]": the interpreter, or env's program. */
		char *interp = head + 2 + strspn(head + 2, " \t"), *arg;

		interp[strcspn(interp, "\n")] = '\0';
		arg = interp + strcspn(interp, " \t");
		if (*arg)
			*arg++ = '\0';
		arg += strspn(arg, " \t");
		arg[strcspn(arg, " \t")] = '\0';
		base = strrchr(interp, '/');
		if (base && strcmp(base + 1, "env") == 0 && *arg && !is_assignment(arg) &&
		    arg[0] != '-')
			name = strdup(arg);
		else if (*interp)
			name = strdup(interp);
		fclose(f);
		goto found;
	}
	if (f)
		fclose(f);
	if (!args)
		return NULL;
	if (strcmp(base, "env") == 0) {
		while (i < n && (is_assignment(args[i]) || strcmp(args[i], "-i") == 0 ||
				 strcmp(args[i], "-") == 0))
			i++;
		if (i < n && strcmp(args[i], "--") == 0)
			i++;
		if (i < n && args[i][0] != '-') {
			name = strdup(args[i]);
			*argsp = args + i + 1;
			*np = n - i - 1;
		}
	} else if (is_shell(base)) {
		/* Its options ("-c", "-ec", "-x -c"), then the command text. */
		bool c = false;

		for (; i < n && args[i][0] == '-' && strcmp(args[i], "--") != 0; i++) {
			if (strcmp(args[i], "-o") == 0 || strcmp(args[i], "+o") == 0)
				return NULL;
			c |= strchr(args[i], 'c') != NULL;
		}
		if (c && i < n)
			name = command_program(args[i]);
	}
found:
	if (name) {
		next = program_path(name, &err);
		free(name);
	}
	return next;
}

size_t exec_chain(const char *program, char *const *argv, char **out, size_t cap)
{
	char *path = strdup(program), *const *args = argv + 1;
	size_t n = 0, nout = 0;

	while (args[n])
		n++;
	for (unsigned depth = 0; path && depth < 2 * cap; depth++) {
		struct fxt_sym_layout l;
		char *real = realpath(path, NULL), *next;
		bool seen = false;

		for (size_t i = 0; real && i < nout; i++)
			seen |= strcmp(out[i], real) == 0;
		if (real && !seen && nout < cap && fxt_sym_elf_layout(real, &l) == 0)
			out[nout++] = real;
		else
			free(real);
		next = exec_next(path, &args, &n);
		free(path);
		path = next;
	}
	free(path);
	return nout;
}
