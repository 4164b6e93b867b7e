/* libkillafter.so: preloaded by tests/e2e/launcher-recover.sh to kill a
 * converter at the worst moment, deterministically.  link() and rename()
 * that put a file whose name ends in KILLAFTER_SUFFIX (".fxt" if unset) in
 * place, not a partial one (convert/convert.h), SIGKILL their process
 * right after they succeed, in the program named by KILLAFTER_PROG (its
 * short name: "fxt-run", "loop") and for the call named by KILLAFTER_CALL
 * ("link", the default: a process's archive; "rename": the root's).  The archive is then written
 * and its spool still there, as when fxt-run, or a process converting its
 * own spool, is killed between the two.  "pwrite": a pwrite() of 16 bytes
 * (the mark a conversion leaves in a spool's header, convert/convert.c)
 * into a file whose name ends in the suffix: for an archive written into a
 * batch of fxt-run's, its spool marked, before the batch says it whole.
 * "rename-before": SIGKILL just before such a rename(), the new file
 * written whole but not yet in place (srcline-cache.sh: a kept-lines file,
 * KILLAFTER_SUFFIX=.loc). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PARTIAL ".fxt-partial."

static bool armed(const char *call, const char *path)
{
	const char *prog = getenv("KILLAFTER_PROG"), *want = getenv("KILLAFTER_CALL");
	const char *suffix = getenv("KILLAFTER_SUFFIX");
	const char *base = strrchr(path, '/');
	size_t len, slen;

	base = base != NULL ? base + 1 : path;
	len = strlen(base);
	suffix = suffix != NULL ? suffix : ".fxt";
	slen = strlen(suffix);
	return prog != NULL && strcmp(prog, program_invocation_short_name) == 0 &&
	       strcmp(want != NULL ? want : "link", call) == 0 && len > slen &&
	       strcmp(base + len - slen, suffix) == 0 &&
	       strncmp(base, PARTIAL, strlen(PARTIAL)) != 0;
}

int link(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
	    (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
	int rc;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(from, to);
	if (rc == 0 && armed("link", to))
		raise(SIGKILL);
	return rc;
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
	    (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	int rc;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (armed("rename-before", to))
		raise(SIGKILL);
	rc = real(from, to);
	if (rc == 0 && armed("rename", to))
		raise(SIGKILL);
	return rc;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t (*real)(int, const void *, size_t, off_t) =
	    (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
	char link[64], path[4096];
	ssize_t rc, n;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(fd, buf, len, off);
	if (rc != 16 || len != 16)
		return rc;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		if (armed("pwrite", path))
			raise(SIGKILL);
	}
	return rc;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}
