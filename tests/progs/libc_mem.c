/* libc_mem: a program built without hooks, for the mem group's tests.
 *
 *	libc_mem count N SIZE   N mallocs of SIZE bytes, a pause of a few
 *	                        milliseconds (so that the heap counter is
 *	                        written at its peak), then N frees.  Prints
 *	                        the blocks' total usable size.
 *	libc_mem compat         frees and reallocates blocks allocated before
 *	                        any library's constructor ran (.preinit_array,
 *	                        so before the agent's), and uses every other
 *	                        allocation function, checking what they
 *	                        return.  Exits 1 on the first wrong result.
 *
 * Output goes through snprintf and write: no stdio buffer on the heap, so
 * that the heap counter ends where it started. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_BLOCKS 1000

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(1, buf, (size_t)n) != n)
		exit(2);
}

#define CHECK(cond)                                                   \
	do {                                                          \
		if (!(cond)) {                                        \
			say("FAILED line %d: %s\n", __LINE__, #cond); \
			exit(1);                                      \
		}                                                     \
	} while (0)

static int count(long n, long size)
{
	static void *blocks[MAX_BLOCKS];
	struct timespec pause = { 0, 5 * 1000 * 1000 };
	size_t usable = 0;

	if (n < 1 || n > MAX_BLOCKS || size < 1)
		return 2;
	for (long i = 0; i < n; i++) {
		blocks[i] = malloc((size_t)size);
		CHECK(blocks[i] != NULL);
		usable += malloc_usable_size(blocks[i]);
	}
	nanosleep(&pause, NULL);
	for (long i = 0; i < n; i++)
		free(blocks[i]);
	say("%ld blocks of %ld bytes, usable %zu\n", n, size, usable);
	return 0;
}

/* Allocated before any constructor: the agent's wrappers pass them
 * through (the agent is not initialised yet). */
static char *early_a, *early_b, *early_c;

static void early_alloc(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	early_a = malloc(100);
	early_b = calloc(1, 50);
	early_c = strdup("allocated before the agent");
}

__attribute__((section(".preinit_array"),
	       used)) static void (*const preinit)(int, char **, char **) = early_alloc;

static bool aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static int compat(void)
{
	/* volatile: the compiler must not see (and warn about) sizes it
	 * knows will fail. */
	volatile size_t huge = SIZE_MAX / 2;
	long page = sysconf(_SC_PAGESIZE);
	void *p, *q;
	char *s;
	int *v;

	CHECK(early_a && early_b && early_c);
	CHECK(!strcmp(early_c, "allocated before the agent"));
	free(early_a);
	for (int i = 0; i < 50; i++)
		CHECK(early_b[i] == 0);
	early_b = realloc(early_b, 100000);
	CHECK(early_b != NULL);
	for (int i = 0; i < 50; i++)
		CHECK(early_b[i] == 0);
	free(early_b);
	s = realloc(early_c, 4);
	CHECK(s != NULL && !memcmp(s, "allo", 4));
	free(s);

	CHECK(posix_memalign(&p, 64, 100) == 0 && aligned(p, 64));
	CHECK(malloc_usable_size(p) >= 100);
	free(p);
	CHECK(posix_memalign(&p, 3, 100) == EINVAL);
	p = aligned_alloc(256, 512);
	CHECK(p && aligned(p, 256));
	free(p);
	p = memalign(128, 1000);
	CHECK(p && aligned(p, 128));
	free(p);
	p = valloc(100);
	CHECK(p && aligned(p, (size_t)page));
	free(p);
	p = pvalloc(100);
	CHECK(p && aligned(p, (size_t)page) && malloc_usable_size(p) >= (size_t)page);
	free(p);

	v = calloc(1000, sizeof(*v));
	CHECK(v != NULL);
	for (int i = 0; i < 1000; i++)
		CHECK(v[i] == 0);
	for (int i = 0; i < 1000; i++)
		v[i] = i;
	v = reallocarray(v, 5000, sizeof(*v));
	CHECK(v != NULL && v[999] == 999);
	errno = 0;
	CHECK(reallocarray(v, huge, 4) == NULL && errno == ENOMEM);
	CHECK(v[0] == 0 && v[999] == 999); /* still ours */
	free(v);

	p = realloc(NULL, 10);
	CHECK(p != NULL);
	p = realloc(p, 0); /* frees it (glibc) */
	free(p);
	errno = 0;
	CHECK(malloc(huge) == NULL && errno == ENOMEM);
	free(NULL);

	p = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	CHECK(p != MAP_FAILED);
	memset(p, 7, (size_t)page * 2);
	q = mremap(p, (size_t)page * 2, (size_t)page * 8, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED && ((char *)q)[page] == 7);
	CHECK(munmap(q, (size_t)page * 8) == 0);
	errno = 0;
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, -1, 0) == MAP_FAILED && errno == EBADF);
	errno = 0;
	CHECK(munmap((void *)1, 4096) == -1 && errno == EINVAL);
	say("compat ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "count"))
		return count(atol(argv[2]), atol(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "compat"))
		return compat();
	say("usage: libc_mem count N SIZE | compat\n");
	return 2;
}
