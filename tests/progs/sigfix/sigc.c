/* A fixture of the signature test (tests/unit/test_signature.c): C
 * functions taking and returning every kind of value the x86-64 calling
 * convention tells apart.  Built twice, at -O0 and at -O2 (where the
 * functions main inlines keep an out-of-line copy whose DWARF refers to
 * an abstract one).  Never run by the test: only loaded into a
 * symbolizer. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum color { RED, GREEN = 5, BLUE = -2 };
enum big { BIG_LO = 1, BIG_HI = 0xffffffffu };
struct point {
	int x, y;
};
struct dpair {
	double a, b;
};
struct big24 {
	long a, b, c;
};
struct mixed {
	long l;
	double d;
};
struct lpair {
	long a, b;
};
struct fpair {
	float a, b;
};
union num {
	int i;
	float f;
};
struct __attribute__((packed)) pk {
	char c;
	int i;
};
struct bits {
	unsigned a : 3;
	unsigned b : 29;
	double d;
};
union wide {
	double d;
	long l;
};
typedef const char *cstr;
typedef enum color color_t;

int sig_ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f);
long sig_ints64(int64_t a, uint64_t b, bool c, char d, enum color e, enum big f);
void *sig_ptrs(void *p, const char *s, cstr t, unsigned char *u, int **pp, const uint8_t *bytes);
double sig_floats(float f, double d);
int sig_structs(struct point p, struct dpair dp, struct big24 b, struct mixed m);
double sig_interleave(int a, double b, long c, float d, char e, double f);
long sig_seven(long a, long b, long c, long d, long e, long f, long g);
double sig_nine(double a, double b, double c, double d, double e, double f, double g, double h,
		double i);
struct big24 sig_retmem(int a, double b);
int sig_variadic(const char *fmt, ...);
__int128 sig_i128(int a, __int128 b, unsigned __int128 c);
struct mixed sig_retmixed(long l);
struct dpair sig_retdpair(double x);
struct point sig_retpoint(int x);
long double sig_ld(long double x, int a);
_Complex double sig_cplx(_Complex float cf, _Complex double cd);
long sig_regsout(long a, long b, long c, long d, long e, struct point p, long f);
long sig_regsout2(long a, long b, long c, long d, long e, struct lpair q, long f);
int sig_aggr(union num u, struct fpair fp, struct pk p);
void sig_void(void);
unsigned short sig_ushort(short s);
int sig_bits(struct bits b, union wide w, color_t c);
__float128 sig_f128(__float128 q, double d);

volatile long sink;

int sig_ints(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f)
{
	return a + b + c + d + (int)e + (int)f;
}

long sig_ints64(int64_t a, uint64_t b, bool c, char d, enum color e, enum big f)
{
	return a + (long)b + c + d + e + (long)f;
}

void *sig_ptrs(void *p, const char *s, cstr t, unsigned char *u, int **pp, const uint8_t *bytes)
{
	sink = (long)s + (long)t + (long)u + (long)pp + (long)bytes;
	return p;
}

double sig_floats(float f, double d)
{
	return f + d;
}

int sig_structs(struct point p, struct dpair dp, struct big24 b, struct mixed m)
{
	return p.x + p.y + (int)dp.a + (int)dp.b + (int)b.c + (int)m.l + (int)m.d;
}

double sig_interleave(int a, double b, long c, float d, char e, double f)
{
	return a + b + (double)c + d + e + f;
}

long sig_seven(long a, long b, long c, long d, long e, long f, long g)
{
	return a + b + c + d + e + f + g;
}

double sig_nine(double a, double b, double c, double d, double e, double f, double g, double h,
		double i)
{
	return a + b + c + d + e + f + g + h + i;
}

struct big24 sig_retmem(int a, double b)
{
	struct big24 r = { a, (long)b, 3 };

	return r;
}

int sig_variadic(const char *fmt, ...)
{
	return fmt[0];
}

__int128 sig_i128(int a, __int128 b, unsigned __int128 c)
{
	return a + b + (__int128)c;
}

struct mixed sig_retmixed(long l)
{
	struct mixed m = { l, 2.5 };

	return m;
}

struct dpair sig_retdpair(double x)
{
	struct dpair d = { x, x * 2 };

	return d;
}

struct point sig_retpoint(int x)
{
	struct point p = { x, x + 1 };

	return p;
}

long double sig_ld(long double x, int a)
{
	return x + a;
}

_Complex double sig_cplx(_Complex float cf, _Complex double cd)
{
	return cf + cd;
}

/* p takes the last GPR; q needs two, gets none, and f takes r9. */
long sig_regsout(long a, long b, long c, long d, long e, struct point p, long f)
{
	return a + b + c + d + e + p.x + f;
}

long sig_regsout2(long a, long b, long c, long d, long e, struct lpair q, long f)
{
	return a + b + c + d + e + q.a + f;
}

int sig_aggr(union num u, struct fpair fp, struct pk p)
{
	return u.i + (int)fp.a + p.i;
}

void sig_void(void)
{
	sink = 1;
}

unsigned short sig_ushort(short s)
{
	return (unsigned short)(s + 1);
}

int sig_bits(struct bits b, union wide w, color_t c)
{
	return (int)(b.a + b.b + b.d) + (int)w.l + c;
}

__float128 sig_f128(__float128 q, double d)
{
	return q + d;
}

int main(int argc, char **argv)
{
	struct point p = { argc, 2 };
	struct dpair dp = { 1.5, 2.5 };
	struct big24 b = { 1, 2, 3 };
	struct mixed m = { 4, 5.5 };
	struct lpair q = { 6, 7 };
	struct fpair fp = { 1.0f, 2.0f };
	union num u = { .i = argc };
	struct pk pk = { 'a', argc };
	_Complex float cf = argc;
	_Complex double cd = argc;

	sink = sig_ints((int8_t)argc, 2, 3, 4, 5, 6);
	sink = sig_ints64(argc, 2, true, 'c', GREEN, BIG_HI);
	sink = (long)sig_ptrs(argv, argv[0], argv[0], (unsigned char *)argv[0], NULL,
			      (const uint8_t *)argv[0]);
	sink = (long)sig_floats(1.0f, argc);
	sink = sig_structs(p, dp, b, m);
	sink = (long)sig_interleave(argc, 2.0, 3, 4.0f, 'e', 6.0);
	sink = sig_seven(argc, 2, 3, 4, 5, 6, 7);
	sink = (long)sig_nine(argc, 2, 3, 4, 5, 6, 7, 8, 9);
	sink = sig_retmem(argc, 2.0).c;
	sink = sig_variadic("%d", argc);
	sink = (long)sig_i128(argc, 2, 3);
	sink = (long)sig_retmixed(argc).d;
	sink = (long)sig_retdpair(argc).b;
	sink = sig_retpoint(argc).y;
	sink = (long)sig_ld(argc, 2);
	sink = (long)__real__ sig_cplx(cf, cd);
	sink = sig_regsout(argc, 2, 3, 4, 5, p, 7);
	sink = sig_regsout2(argc, 2, 3, 4, 5, q, 7);
	sink = sig_aggr(u, fp, pk);
	sig_void();
	sink = sig_ushort((short)argc);
	sink = sig_bits((struct bits){ 1, 2, 3.0 }, (union wide){ .l = argc }, RED);
	sink = (long)sig_f128(argc, 2.0);
	printf("%ld\n", sink);
	return 0;
}
