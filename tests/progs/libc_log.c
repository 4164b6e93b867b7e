/* libc_log: an uninstrumented program (built without
 * -finstrument-functions) that prints through every path the log group
 * records, for tests/e2e/libc-log.sh.  Built twice: plainly, and with
 * -O2 -D_FORTIFY_SOURCE=2 (libc_log_fortify), which turns printf & co.
 * into the __*_chk entry points Debian's programs call.
 *
 *	libc_log lines N   N lines "line I" on stdout, one printf each
 *	libc_log mixed     a bit of everything, on stdout and stderr
 *	libc_log err N     err(N, ...) with errno ENOENT
 *	libc_log errx N    errx(N, ...)
 *	libc_log error N   error(N, EACCES, ...)
 *	libc_log big N     one printf of a line of N bytes (newline included)
 *	libc_log threads   two threads print 20 lines each, a word at a time
 *	libc_log unlocked  lines ended by putc_unlocked / putchar_unlocked, as
 *	                   Debian's tar -t prints names
 *	libc_log macros    lines stored by inline code only; returns from main
 *	libc_log specifier N  N printf lines through a conversion of the
 *	                   program's own (register_printf_specifier) whose
 *	                   handler counts its calls; then the count, on stdout
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* fputs_unlocked */
#endif
#include <err.h>
#include <errno.h>
#include <error.h>
#include <printf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* Defeats the compiler's printf -> puts/putchar rewrites for the calls
 * that must stay printf. */
static const char *volatile empty = "";

static int mixed(void)
{
	static char longline[3001];
	static const char bin[] = { 'b', 'i', 'n', '\0', 'a', 'r', 'y', '\n' };
	FILE *nul;
	int n = 0;

	printf("out %d\n", 1);
	fprintf(stderr, "err %s\n", "two");
	puts("puts line");
	printf("par%s", empty);
	printf("tial%s", empty);
	printf(" line%s\n", empty);
	fputs("fputs line\n", stdout);
	fputc('c', stdout);
	putc('d', stdout);
	putchar('\n');
	errno = EEXIST;
	printf("errno says %m%s\n", empty);
	printf("count%n%s\n", &n, empty);
	printf("n=%d\n", n);
	fflush(stdout);
	dprintf(1, "dprintf %d\n", 9);
	memset(longline, 'a', sizeof(longline) - 1);
	printf("%s\n", longline);
	fwrite(bin, 1, sizeof(bin), stdout);
	/* Output to other files is not the program's log. */
	if ((nul = fopen("/dev/null", "w")) != NULL) {
		fprintf(nul, "not logged %d\n", 1);
		fputs("not logged\n", nul);
		fputc('x', nul);
		fflush(nul);
		dprintf(fileno(nul), "not logged %d\n", 3);
		fclose(nul);
	}
	fflush(stdout);
	errno = ENOENT;
	perror("perror");
	errno = EACCES;
	warn("warn %d", 3);
	warnx("warnx %s", "x");
	error(0, ENOENT, "error %d", 1);
	error_at_line(0, 0, "file.c", 42, "at line %d", 42);
	syslog(LOG_WARNING, "syslog %d", 7);
	printf("last line without newline%s", empty);
	return 0;
}

/* Each line in three calls, so that lines are assembled per thread. */
static void *printer(void *arg)
{
	const char *name = arg;

	for (int i = 1; i <= 20; i++) {
		fputs(name, stdout);
		printf(" %d", i);
		putchar('\n');
	}
	return NULL;
}

static int threads(void)
{
	static char a[] = "tA", b[] = "tB";
	pthread_t ta, tb;

	if (pthread_create(&ta, NULL, printer, a) || pthread_create(&tb, NULL, printer, b))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	return 0;
}

/* The newlines are stored into stdout's buffer by inline code (no call):
 * the agent finds them at the next call. */
static int unlocked(void)
{
	static const char *const names[] = { "dir/", "dir/a.txt", "dir/b.txt" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		fputs_unlocked(names[i], stdout);
		if (i % 2)
			putc_unlocked('\n', stdout);
		else
			putchar_unlocked('\n');
	}
	printf("end%s\n", empty);
	return 0;
}

/* No call at all: found in stdout's buffer at exit. */
static int macros(void)
{
	for (char c = '1'; c <= '3'; c++) {
		putchar_unlocked('m');
		putchar_unlocked(c);
		putchar_unlocked('\n');
	}
	return 0;
}

/* %W: the word "call" and its number; each call of the handler counts,
 * so that a printf formatted twice is seen in the output. */
static int specifier_calls;

static int specifier_print(FILE *f, const struct printf_info *info, const void *const *args)
{
	(void)info;
	(void)args;
	return fprintf(f, "call %d", ++specifier_calls);
}

static int specifier_arginfo(const struct printf_info *info, size_t n, int *types, int *sizes)
{
	(void)info;
	(void)n;
	(void)types;
	(void)sizes;
	return 0;
}

static int specifier(int n)
{
	if (register_printf_specifier('W', specifier_print, specifier_arginfo) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		/* %W is ours: not the compiler's to check. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-extra-args"
		printf("line %W\n", 0);
#pragma GCC diagnostic pop
	}
	printf("%d calls\n", specifier_calls);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int code = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(what, "lines")) {
		for (int i = 1; i <= code; i++)
			printf("line %d\n", i);
		return 0;
	}
	if (!strcmp(what, "mixed"))
		return mixed();
	if (!strcmp(what, "threads"))
		return threads();
	if (!strcmp(what, "unlocked"))
		return unlocked();
	if (!strcmp(what, "macros"))
		return macros();
	if (!strcmp(what, "big") && code > 0) {
		char *s = malloc((size_t)code);

		if (!s)
			return 1;
		memset(s, 'b', (size_t)code - 1);
		s[code - 1] = '\0';
		printf("%s\n", s);
		free(s);
		return 0;
	}
	if (!strcmp(what, "specifier"))
		return specifier(code);
	if (!strcmp(what, "err")) {
		errno = ENOENT;
		err(code, "fatal %d", code);
	}
	if (!strcmp(what, "errx"))
		errx(code, "fatal %s", "x");
	if (!strcmp(what, "error")) {
		error(code, EACCES, "fatal %d", code);
		return 0;
	}
	fprintf(
	    stderr,
	    "usage: libc_log lines N|mixed|err N|errx N|error N|big N|threads|unlocked|macros|"
	    "specifier N\n");
	return 2;
}
