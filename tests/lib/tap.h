/* A small TAP producer for unit tests: plan, ok, and assertions that print
 * both operands on failure.  Header-only; private to tests/.
 *
 *	int main(void) {
 *		plan(2);
 *		ok(1 + 1 == 2, "arithmetic");
 *		ASSERT_EQ_U64(fxt_bits(0xf0, 4, 7), 0xf, "fxt_bits");
 *		return exit_status();
 *	}
 */
#ifndef FXT_TESTS_TAP_H
#define FXT_TESTS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_planned, tap_run, tap_failed;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

/* For tests whose count is only known at the end: call done_testing(). */
static inline void done_testing(void)
{
	tap_planned = tap_run;
	printf("1..%d\n", tap_run);
	fflush(stdout);
}

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static inline int ok_at(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	if (!cond)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline void skip(int n, const char *why)
{
	for (int i = 0; i < n; i++) {
		tap_run++;
		printf("ok %d # SKIP %s\n", tap_run, why);
	}
	fflush(stdout);
}

/* Stops the test program: the harness reports the plan as not met. */
static inline void bail_out(const char *why)
{
	printf("Bail out! %s\n", why);
	fflush(stdout);
	exit(1);
}

static inline int exit_status(void)
{
	if (tap_planned != tap_run) {
		printf("# planned %d tests but ran %d\n", tap_planned, tap_run);
		return 1;
	}
	return tap_failed ? 1 : 0;
}

#define ASSERT_EQ_U64(got, want, ...)                                                   \
	do {                                                                            \
		uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want);              \
		if (!ok(got_ == want_, __VA_ARGS__))                                    \
			diag("  got 0x%016" PRIx64 " (%" PRIu64 "), want 0x%016" PRIx64 \
			     " (%" PRIu64 ")",                                          \
			     got_, got_, want_, want_);                                 \
	} while (0)

#define ASSERT_EQ_I64(got, want, ...)                                          \
	do {                                                                   \
		int64_t got_ = (int64_t)(got), want_ = (int64_t)(want);        \
		if (!ok(got_ == want_, __VA_ARGS__))                           \
			diag("  got %" PRId64 ", want %" PRId64, got_, want_); \
	} while (0)

#define ASSERT_STR_EQ(got, want, ...)                                             \
	do {                                                                      \
		const char *got_ = (got), *want_ = (want);                        \
		if (!ok(got_ && want_ && strcmp(got_, want_) == 0, __VA_ARGS__))  \
			diag("  got \"%s\", want \"%s\"", got_ ? got_ : "(null)", \
			     want_ ? want_ : "(null)");                           \
	} while (0)

/* Length-delimited strings (e.g. struct fxt_string) against a C string. */
#define ASSERT_MEM_STR(data, len, want, ...)                                                 \
	do {                                                                                 \
		const char *d_ = (const char *)(data), *want_ = (want);                      \
		size_t len_ = (size_t)(len);                                                 \
		if (!ok(len_ == strlen(want_) && memcmp(d_, want_, len_) == 0, __VA_ARGS__)) \
			diag("  got \"%.*s\", want \"%s\"", (int)len_, d_ ? d_ : "", want_); \
	} while (0)

/* Compares word arrays and prints the first differing word. */
#define ASSERT_WORDS(got, ngot, want, nwant, ...)                                                \
	do {                                                                                     \
		const uint64_t *g_ = (got), *w_ = (want);                                        \
		size_t ng_ = (ngot), nw_ = (nwant), i_;                                          \
		for (i_ = 0; i_ < ng_ && i_ < nw_ && g_[i_] == w_[i_]; i_++)                     \
			;                                                                        \
		if (!ok(ng_ == nw_ && i_ == nw_, __VA_ARGS__)) {                                 \
			diag("  got %zu words, want %zu", ng_, nw_);                             \
			if (i_ < ng_ && i_ < nw_)                                                \
				diag("  word %zu: got 0x%016" PRIx64 ", want 0x%016" PRIx64, i_, \
				     g_[i_], w_[i_]);                                            \
		}                                                                                \
	} while (0)

#endif /* FXT_TESTS_TAP_H */
