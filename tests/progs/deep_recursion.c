/* deep_recursion: a recursion DEPTH calls deep (default 1,000,000, or the
 * first argument), run in a thread with a 1 GiB stack so that no ulimit
 * is needed.  dive() is called DEPTH + 1 times, in one chain; the thread
 * is named "diver".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/example.h"

#define STACK_SIZE ((size_t)1 << 30)

EXAMPLE_NOINLINE static unsigned long dive(unsigned long n)
{
	if (n == 0)
		return 0;
	return 1 + dive(n - 1);
}

static void *diver(void *arg)
{
	unsigned long depth = *(unsigned long *)arg;

	pthread_setname_np(pthread_self(), "diver");
	*(unsigned long *)arg = dive(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long depth = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long result = depth;
	pthread_attr_t attr;
	pthread_t tid;
	int err;

	pthread_attr_init(&attr);
	err = pthread_attr_setstacksize(&attr, STACK_SIZE);
	if (err == 0)
		err = pthread_create(&tid, &attr, diver, &result);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		fprintf(stderr, "deep_recursion: %s\n", strerror(err));
		return 1;
	}
	pthread_join(tid, NULL);
	printf("deep_recursion: depth %lu\n", result);
	return result == depth ? 0 : 1;
}
