/* The run-time patch planner (agent/patch/plan.h) on hand-written x86-64 bytes:
 * what it displaces, how it relocates (RIP-relative operands, short and
 * conditional jumps, a call), and each reason it leaves a function alone.
 * The relocated bytes are checked against the encodings written out here. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "agent/patch/plan.h"
#include "tests/lib/tap.h"

#define ADDR 0x400000ull /* where the function "is" */
#define AT   0x500000ull /* where its displaced code will run */

static struct patch_plan P;

static const char *plan_of(const uint8_t *code, size_t size, uint64_t at)
{
	if (fxt_patch_plan(code, size, ADDR, at, NULL, &P) != 0)
		return "ERROR";
	return P.why ? P.why : "patchable";
}

/* A module for the jump tables: its code at ADDR (0x100 bytes), its data
 * at ADDR + 0x100. */
static uint8_t image[0x200];
static const struct patch_region regions[] = {
	{ ADDR, 0x100, image, 1 },
	{ ADDR + 0x100, 0x100, image + 0x100, 0 },
};
static const struct patch_mem module = { regions, 2 };

static const char *plan_in_module(size_t size)
{
	if (fxt_patch_plan(image, size, ADDR, AT, &module, &P) != 0)
		return "ERROR";
	return P.why ? P.why : "patchable";
}

static void put_i32(size_t at, int32_t v)
{
	memcpy(image + at, &v, 4);
}

static void put_u64(size_t at, uint64_t v)
{
	memcpy(image + at, &v, 8);
}

static int32_t rd32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

int main(void)
{
	plan(42);

	/* push %rbp; mov %rsp,%rbp; sub $16,%rsp; ...; leave; ret */
	static const uint8_t frame[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83,
					 0xec, 0x10, 0x90, 0xc9, 0xc3 };
	ok(strcmp(plan_of(frame, sizeof(frame), AT), "patchable") == 0, "a frame prologue");
	ok(P.keep == 0 && P.len == 8 && P.code_len == 8 && memcmp(P.code, frame, 8) == 0,
	   "... displaces push, mov, sub (8 bytes) as they are (len %u)", P.len);

	/* endbr64 stays at the entry; the patch goes after it */
	static const uint8_t endbr[] = {
		0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3
	};
	ok(strcmp(plan_of(endbr, sizeof(endbr), AT), "patchable") == 0 && P.keep == 4 && P.len == 5,
	   "endbr64 is kept, the next 5 bytes displaced (keep %u, len %u)", P.keep, P.len);

	/* Too short: ret; xor %eax,%eax; ret; endbr64; ret */
	static const uint8_t ret1[] = { 0xc3 };
	static const uint8_t xorret[] = { 0x31, 0xc0, 0xc3 };
	static const uint8_t endret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	ok(strcmp(plan_of(ret1, 1, AT), "shorter than the patch") == 0, "ret: too short");
	ok(strcmp(plan_of(xorret, 3, AT), "shorter than the patch") == 0, "xor; ret: too short");
	ok(strcmp(plan_of(endret, 5, AT), "shorter than the patch") == 0,
	   "endbr64; ret: too short");
	/* A ret inside the first 5 bytes of a longer symbol (padding after):
	 * the padding is only overwritten. */
	static const uint8_t retpad[] = { 0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90 };
	ok(strcmp(plan_of(retpad, sizeof(retpad), AT), "patchable") == 0 && P.len == 5 &&
	       P.code_len == 3 && memcmp(P.code, retpad, 3) == 0,
	   "xor; ret; nops in the symbol: xor and ret displaced, the nops overwritten");

	/* RIP-relative first: mov 0x100(%rip),%eax; add %edi,%eax; ret */
	static const uint8_t rip[] = { 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x01, 0xf8, 0xc3 };
	ok(strcmp(plan_of(rip, sizeof(rip), AT), "patchable") == 0 && P.len == 6 && P.code_len == 6,
	   "a RIP-relative load first: displaced");
	/* target = ADDR + 6 + 0x100; from AT: disp' = target - (AT + 6) */
	ok(rd32(P.code + 2) == (int32_t)(ADDR + 6 + 0x100 - (AT + 6)),
	   "... its displacement aimed at the same address from the trampoline (%d)",
	   rd32(P.code + 2));
	ok(strcmp(plan_of(rip, sizeof(rip), ADDR + (3ull << 31)),
		  "a RIP-relative operand the trampoline cannot reach") == 0,
	   "... out of reach from a trampoline 6 GiB away: left alone");

	/* movdqa 0x100(%rip),%xmm0 first: an SSE move whose displacement
	 * Capstone 4 does not place (encoding.disp_offset 0) */
	static const uint8_t sse[] = { 0x66, 0x0f, 0x6f, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3 };
	ok(strcmp(plan_of(sse, sizeof(sse), AT), "patchable") == 0 && P.len == 8,
	   "movdqa from %%rip first: displaced (%s)", P.why ? P.why : "patchable");
	ok(rd32(P.code + 4) == (int32_t)(ADDR + 8 + 0x100 - (AT + 8)),
	   "... its displacement aimed at the same address (%d)", rd32(P.code + 4));

	/* test %edi,%edi; je +0x10; ... : the jcc rel8 becomes jcc rel32 */
	static const uint8_t jcc[] = { 0x85, 0xff, 0x74, 0x10, 0x89, 0xf8, 0x90, 0x90,
				       0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
				       0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	ok(strcmp(plan_of(jcc, sizeof(jcc), AT), "patchable") == 0 && P.len == 6,
	   "test; je rel8; mov: displaced (len %u)", P.len);
	ok(P.code_len == 2 + 6 + 2 && P.code[2] == 0x0f && P.code[3] == 0x84,
	   "... je rel8 became je rel32 (0f 84)");
	ok((uint64_t)((int64_t)(AT + 2 + 6) + rd32(P.code + 4)) == ADDR + 4 + 0x10,
	   "... aimed at the original target");

	/* A call in the first bytes: push the return address it had, jump. */
	static const uint8_t call[] = {
		0x48, 0x63, 0xff, 0xe8, 0x10, 0x00, 0x00, 0x00, 0x90, 0xc3
	};
	ok(strcmp(plan_of(call, sizeof(call), AT), "patchable") == 0 && P.len == 8,
	   "movslq; call: displaced (len %u)", P.len);
	uint32_t lo, hi;
	memcpy(&lo, P.code + 3 + 1, 4);
	memcpy(&hi, P.code + 3 + 9, 4);
	ok(P.code_len == 3 + 18 && P.code[3] == 0x68 && P.code[3 + 5] == 0xc7 &&
	       P.code[3 + 13] == 0xe9,
	   "... the call became push $lo; movl $hi,4(%%rsp); jmp");
	ok(((uint64_t)hi << 32 | lo) == ADDR + 8, "... pushing the address after the call");
	ok((uint64_t)((int64_t)(AT + 3 + 18) + rd32(P.code + 3 + 14)) == ADDR + 8 + 0x10,
	   "... jumping to the callee");

	/* A jump back into the displaced bytes (a loop head 2 bytes in). */
	static const uint8_t loop[] = { 0x31, 0xc0, 0x01, 0xf8, 0xff, 0xcf, 0x75, 0xfa, 0xc3 };
	ok(strcmp(plan_of(loop, sizeof(loop), AT), "a jump back into the first bytes") == 0,
	   "a loop whose head is in the first bytes: left alone");
	/* A conditional jump back to the entry itself (a loop). */
	static const uint8_t self[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xf8, 0xc3 };
	ok(strcmp(plan_of(self, sizeof(self), AT), "a jump back into the first bytes") == 0,
	   "a conditional jump to the entry (a loop): left alone");
	/* A jmp to the entry: a tail call to itself (test %rdi,%rdi; je
	 * ret; dec %rdi; jmp entry; ret), counted as the calls they are. */
	static const uint8_t selftail[] = { 0x48, 0x85, 0xff, 0x74, 0x05, 0x48,
					    0xff, 0xcf, 0xeb, 0xf6, 0xc3 };
	ok(strcmp(plan_of(selftail, sizeof(selftail), AT), "patchable") == 0,
	   "a jmp to the entry (a tail call to itself): patchable");
	/* A call to the entry (recursion) is fine. */
	static const uint8_t recur[] = { 0x48, 0x83, 0xec, 0x08, 0x90, 0xe8, 0xf6, 0xff,
					 0xff, 0xff, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	ok(strcmp(plan_of(recur, sizeof(recur), AT), "patchable") == 0,
	   "a call to its own entry (recursion): patchable");

	/* A jump table, as gcc and clang dispatch a switch in PIC: sub
	 * $8,%rsp; lea T(%rip),%rdx; movslq (%rdx,%rax,4),%rax; add
	 * %rdx,%rax; jmp *%rax. */
	static const uint8_t table[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x8d, 0x15,
					 0x00, 0x00, 0x00, 0x00, 0x48, 0x63, 0x04,
					 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xc3 };
	ok(strcmp(plan_of(table, sizeof(table), AT), "an indirect jump (a jump table)") == 0,
	   "a jump table (PIC: an indexed read, then jmp *%%rax): left alone");
	/* Without PIC: sub $8,%rsp; nop; jmp *T(,%rax,8). */
	static const uint8_t table8[] = { 0x48, 0x83, 0xec, 0x08, 0x90, 0xff,
					  0x24, 0xc5, 0x00, 0x00, 0x00, 0x00 };
	ok(strcmp(plan_of(table8, sizeof(table8), AT), "an indirect jump (a jump table)") == 0,
	   "a jump table (jmp *T(,%%rax,8)): left alone");
	/* The table found and read: sub $8,%rsp; lea T(%rip),%rdx (T at
	 * ADDR + 0x100); movslq (%rdx,%rax,4),%rax; add %rdx,%rax; jmp *%rax;
	 * case 0 (0x14): add $8,%rsp; ret; case 1 (0x19): the same.  The
	 * displaced bytes are sub and lea: [0, 0x0b). */
	static const uint8_t sw[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x8d, 0x15, 0xf5, 0x00, 0x00,
				      0x00, 0x48, 0x63, 0x04, 0x82, 0x48, 0x01, 0xd0, 0xff, 0xe0,
				      0x48, 0x83, 0xc4, 0x08, 0xc3, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	memcpy(image, sw, sizeof(sw));
	put_i32(0x100, 0x14 - 0x100);
	put_i32(0x104, 0x19 - 0x100);
	put_i32(0x108, 0x7fffffff); /* no code there: the table's end */
	ok(strcmp(plan_in_module(sizeof(sw)), "patchable") == 0,
	   "a jump table read (32-bit offsets), no entry into the first bytes: patchable");
	put_i32(0x104, 0x04 - 0x100);
	ok(strcmp(plan_in_module(sizeof(sw)), "a jump table into the first bytes") == 0,
	   "... an entry into the displaced bytes: left alone");
	put_i32(0x100, 0x7fffffff);
	ok(strcmp(plan_in_module(sizeof(sw)), "an indirect jump (a jump table)") == 0,
	   "... no entry into the function (the table not found): left alone");
	/* 64-bit addresses (a computed goto, a switch without PIC):
	 * jmp *T(,%rax,8) after sub and a nop. */
	static const uint8_t sw8[] = { 0x48, 0x83, 0xec, 0x08, 0x90, 0xff, 0x24, 0xc5, 0x00,
				       0x01, 0x40, 0x00, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	memset(image, 0, sizeof(image));
	memcpy(image, sw8, sizeof(sw8));
	put_u64(0x100, ADDR + 0x0c);
	put_u64(0x108, ADDR + 0x0c);
	ok(strcmp(plan_in_module(sizeof(sw8)), "patchable") == 0,
	   "a table of addresses (jmp *T(,%%rax,8)), none into the first bytes: patchable");
	put_u64(0x108, ADDR + 0x04);
	ok(strcmp(plan_in_module(sizeof(sw8)), "a jump table into the first bytes") == 0,
	   "... one to the byte after the displaced sub: left alone");

	/* CET marks a jump table's jump: notrack jmp *%rax. */
	static const uint8_t notrack[] = { 0x48, 0x83, 0xec, 0x08, 0x90, 0x3e, 0xff, 0xe0 };
	ok(strcmp(plan_of(notrack, sizeof(notrack), AT), "an indirect jump (a jump table)") == 0,
	   "notrack jmp *%%rax: a jump table, left alone");
	/* A tail call through a pointer: sub $8,%rsp; add $8,%rsp; mov
	 * 16(%rdi),%rax; lea (,%rsi,4),%rdi (indexed, but no read); jmp
	 * *%rax. */
	static const uint8_t itail[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08,
					 0x48, 0x8b, 0x47, 0x10, 0x48, 0x8d, 0x3c, 0xb5,
					 0x00, 0x00, 0x00, 0x00, 0xff, 0xe0 };
	ok(strcmp(plan_of(itail, sizeof(itail), AT), "patchable") == 0,
	   "a tail call through a pointer (jmp *%%rax, no table read): patchable");
	/* An indirect call in the first bytes. */
	static const uint8_t icall[] = { 0xff, 0xd0, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	ok(strcmp(plan_of(icall, sizeof(icall), AT), "an indirect call in the first bytes") == 0,
	   "an indirect call in the first bytes: left alone");
	/* A nop sled (-fpatchable-function-entry=5, -mnop-mcount): nothing to
	 * copy, the stub jumps back past it. */
	static const uint8_t sled[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x31, 0xc0, 0xc3 };
	ok(strcmp(plan_of(sled, sizeof(sled), AT), "patchable") == 0 && P.len == 5 &&
	       P.code_len == 0,
	   "a 5-byte nop sled: used as it is, nothing displaced to run");
	static const uint8_t sled1[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	ok(strcmp(plan_of(sled1, sizeof(sled1), AT), "patchable") == 0 && P.len == 5 &&
	       P.code_len == 0,
	   "five 1-byte nops before a ret: the same");
	/* An unconditional jmp before 5 bytes (a tail call, or over padding
	 * to a loop's test): relocated, the padding after it only
	 * overwritten. */
	static const uint8_t tail[] = { 0xeb, 0x10, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	ok(strcmp(plan_of(tail, sizeof(tail), AT), "patchable") == 0 && P.len == 5 &&
	       P.code_len == 5 && P.code[0] == 0xe9 &&
	       rd32(P.code + 1) == (int32_t)(ADDR + 0x12 - (AT + 5)),
	   "jmp rel8 first: a jmp rel32 to its target, the nops after it not run");
	/* ... but not when something jumps into those bytes: jmp +3; nop x3;
	 * nop; jmp back to byte 2. */
	static const uint8_t into_pad[] = { 0xeb, 0x03, 0x90, 0x90, 0x90, 0x90, 0xeb, 0xfa, 0xc3 };
	ok(strcmp(plan_of(into_pad, sizeof(into_pad), AT), "a jump back into the first bytes") == 0,
	   "jmp first, a jump into the bytes after it: left alone");
	/* ret after a test: test %edi,%edi; jne +1; ret; then the code jne
	 * goes to (5 bytes in: past the patch). */
	static const uint8_t early_ret[] = { 0x85, 0xff, 0x75, 0x01, 0xc3, 0x31, 0xc0, 0xc3 };
	ok(strcmp(plan_of(early_ret, sizeof(early_ret), AT), "patchable") == 0 && P.len == 5,
	   "a ret within the first 5 bytes: displaced with them");
	/* loop / jrcxz cannot be widened. */
	static const uint8_t lp[] = { 0x90, 0xe2, 0xfd, 0x90, 0x90, 0x90, 0xc3 };
	ok(strcmp(plan_of(lp, sizeof(lp), AT), "a loop instruction in the first bytes") == 0,
	   "loop in the first bytes: left alone");
	/* Bytes that do not decode. */
	static const uint8_t bad[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x06, 0x06, 0xc3 };
	ok(strcmp(plan_of(bad, sizeof(bad), AT), "bytes that do not decode") == 0,
	   "an invalid opcode in the body (%s)", P.why ? P.why : "patchable");
	/* No size. */
	ok(strcmp(plan_of(frame, 0, AT), "no size in the symbol table") == 0, "size 0: left alone");
	/* A function whose symbol ends inside its first instruction. */
	ok(strcmp(plan_of(frame, 3, AT), "shorter than the patch") == 0,
	   "a symbol shorter than its instructions: too short");
	return exit_status();
}
