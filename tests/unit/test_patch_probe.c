/* The copy of a string argument with plain loads straight into its REG
 * record (agent/patch/probe.S, fxt__patch_probe_reg), with a fault
 * handler of the test's own that does what the agent's does (probe.c):
 * at every place of the string in its word and every length up to past
 * FXT_ARG_STR_MAX, the record, once sealed (spool/records.h), is word for
 * word the one ev_reg_put_str() builds from the string; the head and
 * what lies past the record's room are never written; a string that
 * ends right before an unmapped page is read whole, one that runs into
 * it comes back cut where the memory ends (nothing: unreadable). */
#include "config.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/patch/patch.h"
#include "run/argspec.h"
#include "spool/records.h"
#include "tests/lib/tap.h"

#define ROOM   10 /* words: a string's REG at its longest */
#define CANARY 0xa5a5a5a5a5a5a5a5ull

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	if (si->si_code > 0 && pc >= (uintptr_t)fxt__patch_probe_reg &&
	    pc < (uintptr_t)fxt__patch_probe_end) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fxt__patch_probe_landing;
		return;
	}
	_exit(99);
}

/* The record the agent writes for the string at s (rtargs.c): opened,
 * copied, sealed.  rec[ROOM..ROOM + 1]: must stay CANARY. */
static int copy(uint64_t rec[ROOM + 2], const char *s, long *r, int *head_kept)
{
	const uint64_t w1 = ev_reg_str_open_w1(ev_reg_w1(FXT_REG_GPR0 + 2, 0x401234));
	long n;

	for (unsigned i = 0; i < ROOM + 2; i++)
		rec[i] = CANARY;
	rec[0] = (uint64_t)(uintptr_t)s;
	rec[1] = w1;
	n = *r = fxt__patch_probe_reg(rec, s, FXT_ARG_STR_MAX + 1);
	*head_kept = rec[1] == w1;
	if (n >= 0)
		return (int)ev_reg_str_seal(rec, n > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX : (size_t)n,
					    n > FXT_ARG_STR_MAX, false);
	n = ~n;
	if (!n) {
		rec[0] = (uint64_t)(uintptr_t)s;
		return (int)ev_reg_str_seal(rec, 0, false, true);
	}
	return (int)ev_reg_str_seal(rec, n > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX : (size_t)n, true,
				    false);
}

/* Whether rec (slots of it) is the REG of the `len` bytes at s, cut or
 * not, as ev_reg_put_str() builds it. */
static int same(const uint64_t *rec, int slots, const char *s, size_t len, bool cut)
{
	uint64_t want[ROOM];
	char room[EV_REG_STR_HEAD + EV_REG_STR_RAW_MAX * EV_RAW_BYTES] = { 0 };

	memcpy(room, s, len);
	want[1] = ev_reg_str_w1(FXT_REG_GPR0 + 2, 0x401234, len, cut);
	ev_reg_put_str(want, room, len);
	if (slots != (int)(1 + ev_reg_str_raw(len)) || rec[1] != want[1])
		return 0;
	for (int i = 0; i < 2 * slots; i++)
		if (rec[i] != want[i])
			return 0;
	return 1;
}

/* The record of the string at s (len bytes, NUL after it unless it
 * runs into the unmapped page) checked: the copy's answer `r`, the record
 * of its first `want` bytes, cut or not; counted in bad[] (its kind, the
 * room past the record, the head) with a line for the first of a kind. */
static void check(const char *s, long r_want, size_t want, bool cut, int bad[3], const char *kind,
		  size_t off, size_t len)
{
	uint64_t rec[ROOM + 2];
	int head, slots;
	long r;

	slots = copy(rec, s, &r, &head);
	bad[2] += !head;
	bad[1] += rec[ROOM] != CANARY || rec[ROOM + 1] != CANARY;
	if (r == r_want && (r == ~0l ? slots == 1 && rec[0] == (uint64_t)(uintptr_t)s &&
					   ev_reg_str(rec[1]) ==
					       EV_REG_STR_UNREADABLE >> EV_REG_STR_SHIFT
				     : same(rec, slots, s, want, cut)))
		return;
	if (!bad[0]++)
		diag("%s: off %zu len %zu: %ld", kind, off, len, r);
}

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *end = m + page; /* an unmapped page after it */
	struct sigaction sa;
	int mid[3] = { 0 }, edge[3] = { 0 }, cut[3] = { 0 };

	plan(5);
	if (m == MAP_FAILED || munmap(end, (size_t)page) != 0)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= FXT_ARG_STR_MAX + 6; len++) {
			size_t want = len > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX : len;
			long whole = len > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX + 1 : (long)len;
			char *s;

			/* In the middle of memory, bytes that are not NULs after it. */
			s = m + 64 + off;
			memset(m, 'Z', (size_t)page);
			for (size_t i = 0; i < len; i++)
				s[i] = (char)('a' + (i + off) % 26);
			s[len] = '\0';
			check(s, whole, want, len > FXT_ARG_STR_MAX, mid, "middle", off, len);
			/* Its NUL the last byte before the unmapped page. */
			s = end - len - 1 - off;
			memset(m, 'Z', (size_t)page);
			for (size_t i = 0; i < len; i++)
				s[i] = (char)('A' + i % 26);
			s[len] = '\0';
			check(s, whole, want, len > FXT_ARG_STR_MAX, edge, "page's end", off, len);
			/* No NUL before the unmapped page: cut where it begins. */
			s = end - len;
			memset(m, 'Z', (size_t)page);
			check(s, len > FXT_ARG_STR_MAX ? FXT_ARG_STR_MAX + 1 : ~(long)len, want, true, cut,
			      "into the unmapped page", off, len);
		}
	ok(!mid[0], "strings of 0..70 bytes at each place in a word: the record put_str builds");
	ok(!edge[0], "a string that ends right before an unmapped page: read whole");
	ok(!cut[0], "one that runs into it: cut where the memory ends (unreadable: nothing read)");
	ok(!mid[1] && !edge[1] && !cut[1], "nothing written past a string REG's room");
	ok(!mid[2] && !edge[2] && !cut[2], "the head never written by the copy");
	return exit_status();
}
