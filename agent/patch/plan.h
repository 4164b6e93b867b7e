/* Run-time patching, the plan: whether a function's entry can be patched
 * safely, and the instructions the patch displaces, relocated to run from
 * a trampoline.  x86-64, decoded with Capstone.  Built into
 * libfxt-patch.so, which the agent loads only when FXT_PATCH asks for
 * patching (agent/patch/patch.h), and linked by the unit tests.
 *
 * The patch is a 5-byte `jmp rel32` at the entry (after an `endbr64`,
 * which stays where indirect calls land).  It displaces the whole
 * instructions that overlap those 5 bytes.  A function is left alone, with
 * the reason, when
 *   - it is shorter than the patch, or a displaced instruction ends it
 *     (ret, an unconditional jmp before 5 bytes, int3, ...), or cannot be
 *     relocated (loop, jrcxz, an indirect call or jump; a RIP-relative
 *     operand that the trampoline cannot reach);
 *   - an instruction of the function jumps into the displaced bytes past
 *     the first (a loop back into the prologue), or through a jump table
 *     with an entry there, or through a jump table the planner cannot
 *     find (it looks for the tables the function's instructions address,
 *     in the memory it is given, read as 32-bit offsets from the table or
 *     as 64-bit addresses: gcc's and clang's switches, computed gotos);
 *   - a byte of it does not decode.
 * Relocation: RIP-relative operands get the displacement for their new
 * address; jcc and jmp with an 8- or 32-bit offset become their 32-bit
 * forms aimed at the original target; a direct call (always the last
 * displaced instruction: it is 5 bytes) pushes the return address it had,
 * in the function, and jumps to its target.
 */
#ifndef FXT_PATCH_PLAN_H
#define FXT_PATCH_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the jump written at the entry. */
#define PATCH_JMP_SIZE 5
/* Room for the relocated instructions (at most 4 instructions of at most
 * 15 bytes, each of which relocation may lengthen by 4). */
#define PATCH_CODE_MAX 80

struct patch_plan {
	uint32_t keep;	   /* bytes left at the entry: 4 for endbr64, else 0 */
	uint32_t len;	   /* bytes displaced, from entry + keep (>= 5) */
	uint32_t code_len; /* bytes of code[] */
	uint8_t code[PATCH_CODE_MAX];
	const char *why; /* NULL: patchable; else why not (a static string) */
};

/* Memory the planner may read to follow jump tables: the segments of the
 * function's module, as mapped (a table's entries are relocated by then). */
struct patch_region {
	uint64_t addr, size;
	const uint8_t *bytes; /* where the planner reads addr's bytes */
	int exec;	      /* code: where a table's entries may point */
};

struct patch_mem {
	const struct patch_region *v;
	unsigned n;
};

/* Plans the patch of the function whose `size` bytes are at `code`, mapped
 * at address `addr`; the displaced instructions will run from `at`; `mem`
 * (or NULL: no jump table is followed) is what it may read.  Returns 0
 * with plan->why NULL when it can be patched, 0 with plan->why set when it
 * must be left alone, -ENOMEM or -EINVAL (no disassembler). */
int fxt_patch_plan(const uint8_t *code, uint64_t size, uint64_t addr, uint64_t at,
		   const struct patch_mem *mem, struct patch_plan *plan);

typedef int fxt_patch_plan_fn(const uint8_t *, uint64_t, uint64_t, uint64_t,
			      const struct patch_mem *, struct patch_plan *);

#endif /* FXT_PATCH_PLAN_H */
