/* patchme: a program built without -finstrument-functions (-O2), for
 * run-time patching (fxt-run --patch, tests/e2e/patch.sh).  Each part
 * makes a known number of calls and prints a result that depends on them
 * running right:
 *
 *   fib_rec(20)        recursion: 21891 calls
 *   rip_first          its first instruction reads a global through %rip
 *                      (relocated into the trampoline): 1000 calls
 *   count_tail(5)      a tail call to itself (jmp to its entry), 10 times:
 *                      60 calls
 *   keeps_regs         calls leaves_regs (10 calls), which changes no
 *                      register but %rax, and checks the others a call may
 *                      change are as they were (-fipa-ra callers rely on it)
 *   dispatch, interp   a switch through a jump table (800 calls), computed
 *                      gotos through a table of labels (100 calls)
 *   loop_back          jumps back into its first 5 bytes: left alone
 *   tiny, tiny_xor     shorter than the patch: left alone
 *   worker x 4 threads each calls leaf() 5000 times
 *   on_signal          a SIGUSR1 handler calling leaf() 3 times, 10 signals
 *   dive(50)           longjmp()s out of 50 nested calls, 3 times; the
 *                      calls after it still nest
 *   coroutine          a coroutine (swapcontext) of 4 steps, its stack
 *                      below the main stack, then above: co_body 2 calls,
 *                      co_step 8, co_leaf 8
 *   altstack           a SIGUSR2 handler on an alternate signal stack that
 *                      lies above the frames it interrupts, 5 times, 2 of
 *                      them left by siglongjmp()
 *   maps               prints the mappings that are writable and
 *                      executable at once ("none")
 *   churn              (only when named) 2000 threads one after the other,
 *                      each calling leaf(); then the process's size
 *   late               (only when named) 4 threads whose key destructor
 *                      calls fib_rec(8) 100 times, at their end, after
 *                      the agent's (its key is older) gave their shadow
 *                      stack back: the sum of what it returned
 *
 * Arguments: none (all), or the names of the parts to run.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "tests/progs/wx_maps.h"

#define NOINLINE __attribute__((noinline, noclone))

int counter; /* rip_first's */
int rip_first(int v);
int loop_back(int n);
int tiny(void);
int tiny_xor(void);
int keeps_regs(void);
int count_tail(long n);

/* Written in assembly, so that their first bytes are known. */
__asm__(".text\n"
	".globl rip_first\n.type rip_first, @function\n"
	"rip_first:\n"
	"\tmovl counter(%rip), %eax\n" /* 6 bytes, RIP-relative */
	"\taddl %edi, %eax\n"
	"\tmovl %eax, counter(%rip)\n"
	"\tret\n"
	".size rip_first, .-rip_first\n"
	".globl loop_back\n.type loop_back, @function\n"
	"loop_back:\n"
	"\txorl %eax, %eax\n"	/* 2 bytes */
	"1:\taddl %edi, %eax\n" /* the loop's head, 2 bytes in */
	"\tdecl %edi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size loop_back, .-loop_back\n"
	/* keeps_regs calls leaves_regs, which changes no register but
	 * %rax, with a known value in each other one a call may change,
	 * as a caller built with -fipa-ra may; it returns a bit for each
	 * of them that changed. */
	/* count_tail(n) jumps back to its own entry n times: a tail call to
	 * itself, as gcc makes of one; n + 1 calls. */
	".globl count_tail\n.type count_tail, @function\n"
	"count_tail:\n"
	"\ttestq %rdi, %rdi\n"
	"\tje 1f\n"
	"\tdecq %rdi\n"
	"\tjmp count_tail\n"
	"1:\txorl %eax, %eax\n"
	"\tret\n"
	".size count_tail, .-count_tail\n"
	".globl leaves_regs\n.type leaves_regs, @function\n"
	"leaves_regs:\n"
	"\tpushq %rbp\n"
	"\tmovq %rsp, %rbp\n"
	"\tmovl $7, %eax\n"
	"\tpopq %rbp\n"
	"\tret\n"
	".size leaves_regs, .-leaves_regs\n"
	".globl keeps_regs\n.type keeps_regs, @function\n"
	"keeps_regs:\n"
	"\tmovq $0x11, %rcx\n"
	"\tmovq $0x12, %rdx\n"
	"\tmovq $0x13, %rsi\n"
	"\tmovq $0x14, %rdi\n"
	"\tmovq $0x15, %r8\n"
	"\tmovq $0x16, %r9\n"
	"\tmovq $0x17, %r10\n"
	"\tmovq $0x18, %r11\n"
	"\tsubq $8, %rsp\n"
	"\tcall leaves_regs\n"
	"\taddq $8, %rsp\n"
	"\txorl %eax, %eax\n"
	"\tcmpq $0x11, %rcx\n\tje 1f\n\torl $1, %eax\n1:\n"
	"\tcmpq $0x12, %rdx\n\tje 1f\n\torl $2, %eax\n1:\n"
	"\tcmpq $0x13, %rsi\n\tje 1f\n\torl $4, %eax\n1:\n"
	"\tcmpq $0x14, %rdi\n\tje 1f\n\torl $8, %eax\n1:\n"
	"\tcmpq $0x15, %r8\n\tje 1f\n\torl $16, %eax\n1:\n"
	"\tcmpq $0x16, %r9\n\tje 1f\n\torl $32, %eax\n1:\n"
	"\tcmpq $0x17, %r10\n\tje 1f\n\torl $64, %eax\n1:\n"
	"\tcmpq $0x18, %r11\n\tje 1f\n\torl $128, %eax\n1:\n"
	"\tret\n"
	".size keeps_regs, .-keeps_regs\n"
	".globl tiny\n.type tiny, @function\n"
	"tiny:\n"
	"\tret\n"
	".size tiny, .-tiny\n"
	".globl tiny_xor\n.type tiny_xor, @function\n"
	"tiny_xor:\n"
	"\txorl %eax, %eax\n"
	"\tret\n"
	".size tiny_xor, .-tiny_xor\n");

static NOINLINE int fib_rec(int n)
{
	return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2);
}

static volatile long sink;

static NOINLINE void leaf(long v)
{
	sink += v;
}

static NOINLINE void *worker(void *arg)
{
	for (long i = 0; i < 5000; i++)
		leaf(i + (long)arg);
	return NULL;
}

static NOINLINE void on_signal(int sig)
{
	for (int i = 0; i < 3; i++)
		leaf(sig);
}

static jmp_buf env;

static NOINLINE void dive(int depth)
{
	if (depth < 0)
		return;
	if (depth == 0)
		longjmp(env, 1);
	dive(depth - 1);
	sink++; /* not a tail call */
}

/* A handler on an alternate signal stack above the frames it interrupts
 * (the stack is in main()'s frame): 5 signals, raised 2 patched frames
 * deep, each handler calling alt_leaf() 3 times; the last 2 leave by
 * siglongjmp(). */
static sigjmp_buf alt_env;
static volatile int alt_jump;

static NOINLINE void alt_leaf(long v)
{
	sink -= v;
}

static NOINLINE void on_alt(int sig)
{
	for (int i = 0; i < 3; i++)
		alt_leaf(sig);
	if (alt_jump)
		siglongjmp(alt_env, 1);
}

static NOINLINE int alt_inner(int i)
{
	raise(SIGUSR2);
	sink += i;
	return i;
}

static NOINLINE int alt_outer(int i)
{
	int v = alt_inner(i);
	sink++; /* not a tail call */
	return v + 1;
}

static NOINLINE int on_alt_stack(char *stack, size_t size)
{
	stack_t ss = { .ss_sp = stack, .ss_size = size };
	struct sigaction sa;
	volatile int sum = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alt;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR2, &sa, NULL) != 0)
		return -1;
	for (volatile int i = 0; i < 5; i++) {
		alt_jump = i >= 3;
		if (sigsetjmp(alt_env, 1) == 0)
			sum += alt_outer(i);
	}
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return sum;
}

/* A switch gcc dispatches through a jump table, and an interpreter's
 * computed gotos (a table of label addresses). */
static NOINLINE int dispatch(int op, int v)
{
	switch (op) {
	case 0:
		return v + 1;
	case 1:
		return v * 3;
	case 2:
		return v - 7;
	case 3:
		return v ^ 0x55;
	case 4:
		return v << 2;
	case 5:
		return v / 3;
	case 6:
		return -v;
	case 7:
		return v & 0xff;
	default:
		return v;
	}
}

static NOINLINE int interp(const unsigned char *code)
{
	static const void *const ops[] = { &&op_inc, &&op_dbl, &&op_end };
	int acc = 0;

	goto *ops[*code++];
op_inc:
	acc++;
	goto *ops[*code++];
op_dbl:
	acc *= 2;
	goto *ops[*code++];
op_end:
	return acc;
}

/* A coroutine (swapcontext): co_body runs on a stack of its own, 4 steps
 * each entered from co_step on the main stack.  Run twice: its stack below
 * the main one, then above. */
static ucontext_t co_main, co_ctx;
static volatile int co_n;

static NOINLINE void co_leaf(int v)
{
	sink += 3 * v;
}

static NOINLINE void co_body(void)
{
	for (int i = 0; i < 3; i++) {
		co_leaf(i);
		swapcontext(&co_ctx, &co_main);
	}
	co_leaf(9);
	co_n++;
}

static NOINLINE int co_step(void)
{
	swapcontext(&co_main, &co_ctx);
	sink++; /* not a tail call */
	return 1;
}

static NOINLINE int coroutine(char *stack, size_t size)
{
	volatile int steps = 0;

	if (getcontext(&co_ctx) != 0)
		return -1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = size;
	co_ctx.uc_link = &co_main;
	makecontext(&co_ctx, co_body, 0);
	for (int i = 0; i < 4; i++)
		steps += co_step();
	return steps;
}

static NOINLINE void *churn_thread(void *arg)
{
	leaf((long)arg);
	return NULL;
}

static pthread_key_t late_key;
static long late_sum;

static void late_dtor(void *arg)
{
	for (long i = 0; i < 100; i++)
		late_sum += fib_rec(8) + i * (long)arg;
}

static NOINLINE void *late_thread(void *arg)
{
	pthread_setspecific(late_key, arg);
	late_sum += fib_rec(3);
	return NULL;
}

/* The process's virtual size, in MiB. */
static long vm_mib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib < 0 ? -1 : kib / 1024;
}

static bool want(int argc, char **argv, const char *part)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], part) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	if (want(argc, argv, "fib"))
		printf("fib_rec(20) = %d\n", fib_rec(20));
	if (want(argc, argv, "rip")) {
		int v = 0;
		for (int i = 0; i < 1000; i++)
			v = rip_first(i);
		printf("rip_first: %d\n", v);
	}
	if (want(argc, argv, "tail")) {
		int r = 0;
		for (int i = 0; i < 10; i++)
			r += count_tail(5);
		printf("tail: %d\n", r);
	}
	if (want(argc, argv, "regs")) {
		int changed = 0;
		for (int i = 0; i < 10; i++)
			changed |= keeps_regs();
		printf("regs: %s (%#x)\n", changed ? "changed" : "kept", (unsigned)changed);
	}
	if (want(argc, argv, "tables")) {
		static const unsigned char prog[] = { 0, 1, 0, 1, 1, 2 }; /* ((1*2)+1)*4 */
		int v = 1, acc = 0;
		for (int i = 0; i < 800; i++)
			v = dispatch(i % 9, v);
		for (int i = 0; i < 100; i++)
			acc += interp(prog);
		printf("tables: %d %d\n", v, acc);
	}
	if (want(argc, argv, "short")) {
		printf("loop_back(10) = %d, tiny = %d\n", loop_back(10), tiny_xor());
		tiny();
	}
	if (want(argc, argv, "threads")) {
		pthread_t t[4];
		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("threads: done\n");
	}
	if (want(argc, argv, "signals")) {
		signal(SIGUSR1, on_signal);
		for (int i = 0; i < 10; i++)
			raise(SIGUSR1);
		printf("signals: done\n");
	}
	if (want(argc, argv, "longjmp")) {
		volatile int n = 0;
		for (volatile int i = 0; i < 3; i++) {
			if (setjmp(env) == 0)
				dive(50);
			else
				n++;
		}
		leaf(n); /* after the jumps, calls still nest */
		printf("longjmp: %d\n", n);
	}
	if (want(argc, argv, "altstack")) {
		char stack[1 << 16]; /* above on_alt_stack()'s frames */
		printf("altstack: %d\n", on_alt_stack(stack, sizeof(stack)));
	}
	if (want(argc, argv, "coroutine")) {
		static char low[1 << 16];
		char high[1 << 16]; /* above coroutine()'s frames */
		int a = coroutine(low, sizeof(low));
		int b = coroutine(high, sizeof(high));
		printf("coroutine: %d %d %d\n", a, b, co_n);
	}
	if (want(argc, argv, "maps"))
		print_wx_maps();
	/* Only when named: 2000 threads one after the other, then the
	 * process's size (what each thread took is given back). */
	if (argc > 1 && want(argc, argv, "churn")) {
		for (long i = 0; i < 2000; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, churn_thread, (void *)i) == 0)
				pthread_join(t, NULL);
		}
		printf("churn: %ld MiB\n", vm_mib());
	}
	if (argc > 1 && want(argc, argv, "late") && pthread_key_create(&late_key, late_dtor) == 0) {
		for (long i = 1; i <= 4; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, late_thread, (void *)i) == 0)
				pthread_join(t, NULL);
		}
		printf("late: %ld\n", late_sum);
	}
	return 0;
}
