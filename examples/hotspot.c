/* hotspot: a small batch job for comparing runs.
 *
 * main() processes 400 records; each goes through parse(), checksum() and
 * store().  With --slow, checksum() does a third more rounds: the kind of
 * regression fxt-diff should find, while parse() and store() stay the same.
 *
 *   fxt-run -o base.fxt -- examples/hotspot
 *   fxt-run -o new.fxt  -- examples/hotspot --slow
 *   fxt-diff base.fxt new.fxt
 */
#include <stdio.h>
#include <string.h>

#include "example.h"

#define RECORDS 400

static volatile unsigned long sink;

EXAMPLE_NOINLINE static unsigned long parse(unsigned i)
{
	unsigned long v = i;
	for (int k = 0; k < 2000; k++)
		v = v * 6364136223846793005ul + 1442695040888963407ul;
	return v;
}

EXAMPLE_NOINLINE static unsigned long checksum(unsigned long v, int rounds)
{
	for (int k = 0; k < rounds; k++)
		v ^= (v << 13) ^ (v >> 7) ^ (v << 17);
	return v;
}

EXAMPLE_NOINLINE static void store(unsigned long v)
{
	for (int k = 0; k < 1000; k++)
		sink += v >> (k & 31);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 && strcmp(argv[1], "--slow") == 0 ? 8000 : 6000;

	for (unsigned i = 0; i < RECORDS; i++)
		store(checksum(parse(i), rounds));
	printf("hotspot: %u records, checksum rounds %d\n", RECORDS, rounds);
	return 0;
}
