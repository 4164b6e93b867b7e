/* A process with its own allocator, for attach-libc.sh: fxt-run -p
 * --libc=mem must make the wrappers call this malloc, not the C
 * library's (which would hand out memory this free() does not know).
 *
 *   attach_malloc
 *
 * It defines malloc, free, calloc, realloc, the aligned ones and
 * malloc_usable_size (a bump allocator: each block has a header with its
 * size and a mark; nothing is reused), prints "ready", then reads lines:
 * "mem N" makes N strings with strdup() (the C library's malloc call,
 * through its GOT) and frees them, and says "done mem N".  At the end of
 * its input: "blocks: A allocated, F freed, X foreign" (X: frees of a
 * pointer not its own, which it does not pass on), exit 0 if X is 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ARENA (64u << 20)
#define MARK 0xf7ace11u

struct head {
	size_t size;
	uint32_t mark;
	uint32_t pad[1];
};

static unsigned char arena[ARENA] __attribute__((aligned(64)));
static size_t used;
static unsigned long allocated, freed, foreign;

static struct head *head_of(void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (a < (uintptr_t)arena + sizeof(struct head) || a >= (uintptr_t)arena + ARENA)
		return NULL;
	return (struct head *)p - 1;
}

void *memalign(size_t align, size_t size)
{
	size_t old = __atomic_load_n(&used, __ATOMIC_RELAXED), start, end;
	struct head *h;

	if (align < 16)
		align = 16;
	do {
		start = (old + sizeof(struct head) + align - 1) & ~(align - 1);
		end = start + size;
		if (end > ARENA || end < start) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&used, &old, end, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	h = (struct head *)(arena + start) - 1;
	h->size = size;
	h->mark = MARK;
	__atomic_add_fetch(&allocated, 1, __ATOMIC_RELAXED);
	return arena + start;
}

void *malloc(size_t size)
{
	return memalign(16, size);
}

void free(void *p)
{
	struct head *h = head_of(p);

	if (!p)
		return;
	if (!h || h->mark != MARK) {
		__atomic_add_fetch(&foreign, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	p = malloc(n * size);
	return p ? memset(p, 0, n * size) : NULL;
}

size_t malloc_usable_size(void *p)
{
	struct head *h = head_of(p);

	return h && h->mark == MARK ? h->size : 0;
}

void *realloc(void *p, size_t size)
{
	struct head *h = head_of(p);
	void *q;

	if (!p)
		return malloc(size);
	if (!h || h->mark != MARK) {
		__atomic_add_fetch(&foreign, 1, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return NULL;
	}
	q = malloc(size);
	if (q) {
		memcpy(q, p, h->size < size ? h->size : size);
		free(p);
	}
	return q;
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p = memalign(align, size);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

void *valloc(size_t size)
{
	return memalign(4096, size);
}

void *pvalloc(size_t size)
{
	return memalign(4096, (size + 4095) & ~(size_t)4095);
}

int main(void)
{
	char line[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n = 0, i;

		if (sscanf(line, "mem %lu", &n) != 1)
			continue;
		for (i = 0; i < n; i++) {
			char *s = strdup("fxtrace");

			if (!s)
				break;
			free(s);
		}
		printf("done mem %lu\n", i);
	}
	printf("blocks: %s allocated, %s freed, %lu foreign\n", allocated ? "some" : "none",
	       freed ? "some" : "none", foreign);
	return foreign != 0;
}
