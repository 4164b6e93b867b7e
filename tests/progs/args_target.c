/* A program whose functions take and return every kind of value
 * fxt-run --args/--retval shows (symbolizer/signature.h), each called
 * with known values, for tests/e2e/args.sh.  Built -O2 -g without
 * -finstrument-functions: its functions are patched.  Each prints
 * nothing; main prints "done" and exits 0.
 *
 *   args_target            every function once
 *   args_target bad        take_str() with a pointer to unmapped memory,
 *                          one to a string without a NUL for a page,
 *                          and NULL
 *   args_target N          lookup(i) for i in 0..N-1, returning -1 for
 *                          i == N - 1 (a failure at the end)
 *   args_target keys       resolve(key) for the keys 7, 42, 3, 42, -1, each
 *                          of which calls lookup(key) (fxt-run --include
 *                          'resolve@arg1==42', tests/e2e/args-include.sh)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noipa, used))

enum color { RED, GREEN = 5, BLUE };

struct pair {
	int a, b;
};

struct vec2 {
	double x, y;
};

struct big {
	long v[3];
};

static volatile long sink;

int take_ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint64_t f);
unsigned take_misc(bool flag, char ch, enum color color, enum color other, void *ptr);
double take_floats(float f, double d, int i, double e);
const char *take_str(const char *s, size_t len);
long take_structs(struct pair p, struct vec2 v, struct big b, int after);
int take_many(int a1, int a2, int a3, int a4, int a5, int a6, int a7);
struct big ret_big(int x);
int take_var(const char *fmt, ...);
bool ret_bool(int x);
enum color ret_color(int x);
int lookup(int key);
int resolve(int key);

KEEP int take_ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint64_t f)
{
	sink += a + b + c + d + e + (long)f;
	return (int)(sink & 0x7f) - 200;
}

KEEP unsigned take_misc(bool flag, char ch, enum color color, enum color other, void *ptr)
{
	sink += flag + ch + color + other + (long)(uintptr_t)ptr;
	return 4000000000u;
}

KEEP double take_floats(float f, double d, int i, double e)
{
	sink += (long)(f + d + i + e);
	return d * 2;
}

KEEP const char *take_str(const char *s, size_t len)
{
	sink += (long)len;
	return s;
}

KEEP long take_structs(struct pair p, struct vec2 v, struct big b, int after)
{
	sink += p.a + p.b + (long)(v.x + v.y) + b.v[0] + b.v[2] + after;
	return -1234567890123L;
}

KEEP int take_many(int a1, int a2, int a3, int a4, int a5, int a6, int a7)
{
	sink += a1 + a2 + a3 + a4 + a5 + a6 + a7;
	return a7;
}

KEEP struct big ret_big(int x)
{
	struct big b = { { x, x + 1, x + 2 } };
	sink += x;
	return b;
}

KEEP int take_var(const char *fmt, ...)
{
	sink += (long)strlen(fmt);
	return 3;
}

KEEP bool ret_bool(int x)
{
	sink += x;
	return x > 0;
}

KEEP enum color ret_color(int x)
{
	sink += x;
	return x ? BLUE : RED;
}

KEEP int lookup(int key)
{
	sink += key;
	return key < 0 ? -1 : key;
}

KEEP int resolve(int key)
{
	return lookup(key) + 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "keys") == 0) {
		static const int keys[] = { 7, 42, 3, 42, -1 };

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			resolve(keys[i]);
		puts("done");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "lengths") == 0) {
		/* Around the edges of what a record holds: 8 bytes in its
		 * head, 16 a slot after it, 64 at most. */
		static const char text[] =
		    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?+";
		static const size_t lens[] = { 0, 7, 8, 9, 63, 64, 65 };
		char s[sizeof(text)];

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			memcpy(s, text, lens[i]);
			s[lens[i]] = '\0';
			take_str(s, lens[i]);
		}
		puts("done");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "bad") == 0) {
		long page = sysconf(_SC_PAGESIZE);
		char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		memset(p, 'x', (size_t)page); /* no NUL before the unmapped page */
		munmap(p + page, (size_t)page);
		take_str(p + page, 1);	       /* unmapped */
		take_str(p + page - 100, 100); /* runs into it */
		take_str(NULL, 0);
		take_str(p, (size_t)page); /* longer than what is read */
		puts("done");
		return 0;
	}
	if (argc > 1) {
		int n = atoi(argv[1]);

		for (int i = 0; i < n; i++)
			lookup(i == n - 1 ? -i : i);
		puts("done");
		return 0;
	}
	char str[] = "GET /index.html HTTP/1.1";
	struct pair p = { 3, -4 };
	struct vec2 v = { 1.5, -2.25 };
	struct big b = { { 7, 8, 9 } };
	take_ints(-5, 250, -300, 65000, -70000, 1ull << 40);
	take_misc(true, 'a', GREEN, (enum color)42, (void *)(uintptr_t)0x1234);
	take_floats(1.5f, -2.75, 9, 1e10);
	take_str(str, strlen(str));
	take_structs(p, v, b, 77);
	take_many(1, 2, 3, 4, 5, 6, 7);
	sink += ret_big(10).v[1];
	take_var("%d %s", 1, "x");
	ret_bool(1);
	ret_color(1);
	puts("done");
	return 0;
}
