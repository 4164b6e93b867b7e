/* The plan of a function's patch (see plan.h), with Capstone. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <capstone/capstone.h>

#include "agent/patch/plan.h"

/* One disassembler for the process, opened on first use; plans are made
 * one at a time (under the lock), each decoding into the same insn. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static csh handle;
static cs_insn *insn; /* the one instruction decoded at a time */
static bool opened;

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static bool is_endbr64(const uint8_t *p, uint64_t size)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	return size >= 4 && memcmp(p, endbr64, 4) == 0;
}

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (unsigned i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* The target of a direct branch (its immediate operand), 0 when the
 * instruction has none. */
static uint64_t branch_target(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		return (uint64_t)x->operands[0].imm;
	return 0;
}

static bool is_rip_relative(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (unsigned i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return true;
	return false;
}

/* Whether an instruction reads memory through an index register (a
 * table: `movslq (%rdx,%rax,4),%rax`, `jmp *.L4(,%rax,8)`; not `lea`,
 * which only computes, nor a long nop, `nopl 0(%rax,%rax,1)`). */
static bool reads_indexed(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (in->id == X86_INS_LEA || in->id == X86_INS_NOP)
		return false;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM &&
		    x->operands[i].mem.index != X86_REG_INVALID)
			return true;
	return false;
}

/* How many instructions before an indirect jump are looked at for the
 * read of a jump table's entry. */
#define TABLE_WINDOW 6
/* At most so many table bases a function, entries a table. */
#define TABLE_BASES   64
#define TABLE_ENTRIES 65536

/* The region of mem holding [a, a + n), or NULL. */
static const struct patch_region *region_of(const struct patch_mem *mem, uint64_t a, uint64_t n)
{
	for (unsigned i = 0; i < mem->n; i++) {
		const struct patch_region *r = &mem->v[i];
		if (a >= r->addr && a - r->addr <= r->size && n <= r->size - (a - r->addr))
			return r;
	}
	return NULL;
}

static bool read_mem(const struct patch_mem *mem, uint64_t a, void *out, size_t n)
{
	const struct patch_region *r = region_of(mem, a, n);
	if (!r)
		return false;
	memcpy(out, r->bytes + (a - r->addr), n);
	return true;
}

static bool is_code(const struct patch_mem *mem, uint64_t a)
{
	const struct patch_region *r = region_of(mem, a, 1);
	return r && r->exec;
}

/* Where the function's instructions point into data: the possible bases
 * of its jump tables. */
struct bases {
	uint64_t v[TABLE_BASES];
	unsigned n;
};

static void add_base(struct bases *b, const struct patch_mem *mem, uint64_t a)
{
	const struct patch_region *r = mem ? region_of(mem, a, 4) : NULL;
	if (!r || r->exec || b->n == TABLE_BASES)
		return;
	for (unsigned i = 0; i < b->n; i++)
		if (b->v[i] == a)
			return;
	b->v[b->n++] = a;
}

/* The data addresses `in` names: a RIP-relative operand's (`lea
 * T(%rip)`), and the pointer there when it is loaded (`mov
 * T@GOTPCREL(%rip)`); an absolute table's (`jmp *T(,%rax,8)`). */
static void note_bases(const cs_insn *in, const struct patch_mem *mem, struct bases *b)
{
	const cs_x86 *x = &in->detail->x86;

	if (!mem)
		return;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *o = &x->operands[i];
		if (o->type != X86_OP_MEM)
			continue;
		if (o->mem.base == X86_REG_RIP) {
			uint64_t a = in->address + in->size + (uint64_t)o->mem.disp;
			uint64_t ptr;
			add_base(b, mem, a);
			if (in->id == X86_INS_MOV && read_mem(mem, a, &ptr, 8))
				add_base(b, mem, ptr);
		} else if (o->mem.base == X86_REG_INVALID && o->mem.index != X86_REG_INVALID) {
			add_base(b, mem, (uint64_t)o->mem.disp);
		}
	}
}

/* One table entry's target: whether it leads into the displaced bytes
 * [addr, hi); counted in *inside when it lies in the function. */
static bool into_first_bytes(uint64_t to, uint64_t addr, uint64_t size, uint64_t hi,
			     unsigned *inside)
{
	*inside += to >= addr && to < addr + size;
	return to >= addr && to < hi;
}

/* The tables at the bases, read as gcc and clang lay them out: 32-bit
 * offsets from the table (PIC switches) or 64-bit addresses (switches
 * without PIC, computed gotos), as long as each entry points into code.
 * NULL when some entry points into the function and none into [entry,
 * hi), the displaced bytes. */
static const char *check_tables(const struct bases *b, const struct patch_mem *mem, uint64_t addr,
				uint64_t size, uint64_t hi)
{
	unsigned inside = 0;

	for (unsigned i = 0; i < b->n; i++) {
		uint64_t t = b->v[i];
		for (unsigned k = 0; k < TABLE_ENTRIES; k++) {
			int32_t e;
			if (!read_mem(mem, t + 4ull * k, &e, 4) ||
			    !is_code(mem, t + (uint64_t)(int64_t)e))
				break;
			if (into_first_bytes(t + (uint64_t)(int64_t)e, addr, size, hi, &inside))
				return "a jump table into the first bytes";
		}
		for (unsigned k = 0; k < TABLE_ENTRIES; k++) {
			uint64_t to;
			if (!read_mem(mem, t + 8ull * k, &to, 8) || !is_code(mem, to))
				break;
			if (into_first_bytes(to, addr, size, hi, &inside))
				return "a jump table into the first bytes";
		}
	}
	return inside ? NULL : "an indirect jump (a jump table)";
}

/* Every instruction of the function (at addr): none may jump to its entry
 * or into the displaced bytes [lo, hi), call into them past lo, nor jump
 * through a jump table with an entry there or that cannot be found (in
 * mem; see check_tables()).  An indirect jump is a jump table's when it is
 * marked `notrack` (CET) or when it, or one of the TABLE_WINDOW
 * instructions before it, reads memory through an index register (what
 * gcc and clang emit to dispatch a switch: `movslq (%rdx,%rax,4),%rax;
 * add %rdx,%rax; jmp *%rax`); any other is a tail call through a pointer,
 * which leaves the function like a return.  NULL when none does. */
static const char *scan_function(cs_insn *in, const uint8_t *code, uint64_t size, uint64_t addr,
				 uint64_t lo, uint64_t hi, const struct patch_mem *mem)
{
	struct bases bases = { .n = 0 };
	bool table = false;
	const uint64_t entry = addr;
	const uint8_t *p = code;
	uint64_t left = size, at = addr;
	const char *why = NULL;
	unsigned since_indexed = TABLE_WINDOW + 1; /* instructions since an indexed read */

	while (left > 0) {
		if (!cs_disasm_iter(handle, &p, &left, &at, in)) {
			why = "bytes that do not decode";
			break;
		}
		since_indexed = reads_indexed(in) ? 0 : since_indexed + 1;
		note_bases(in, mem, &bases);
		bool call = in_group(in, X86_GRP_CALL);
		bool jump = in_group(in, X86_GRP_JUMP) || in_group(in, X86_GRP_BRANCH_RELATIVE) ||
			    in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE ||
			    in->id == X86_INS_LOOPNE || in->id == X86_INS_JRCXZ ||
			    in->id == X86_INS_JECXZ;
		if (!jump && !call)
			continue;
		uint64_t t = branch_target(in);
		if (t == 0) {
			if (jump && (since_indexed <= TABLE_WINDOW ||
				     in->detail->x86.prefix[1] == X86_PREFIX_DS)) {
				if (!mem) {
					why = "an indirect jump (a jump table)";
					break;
				}
				table = true; /* its tables are read at the end */
			}
			continue; /* an indirect call returns where it was */
		}
		/* A call to the entry is a call (recursion), and so is a jmp
		 * there (a tail call to itself, as gcc makes of one, counted
		 * as the source's call, as uftrace counts it); a conditional
		 * jump there is a loop, whose turns would count as calls. */
		bool self_tail = in->id == X86_INS_JMP && (t == entry || t == lo);
		if (call || self_tail ? (t > lo && t < hi) : (t >= entry && t < hi)) {
			why = "a jump back into the first bytes";
			break;
		}
	}
	if (!why && table)
		why = check_tables(&bases, mem, addr, size, hi);
	return why;
}

/* Appends the relocated form of `in` (at its original address) to the
 * plan's code, which will run at `at`.  NULL, or why it cannot be. */
static const char *relocate(const cs_insn *in, uint64_t at, struct patch_plan *plan)
{
	uint64_t new_addr = at + plan->code_len;
	uint8_t *out = plan->code + plan->code_len;
	const cs_x86 *x = &in->detail->x86;

	if (plan->code_len + in->size + 4 > PATCH_CODE_MAX || plan->code_len + 18 > PATCH_CODE_MAX)
		return "too many bytes to displace";
	/* Branches with only an 8-bit form (Capstone 4 puts them in no jump
	 * group) and xbegin's relative fallback. */
	if (in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE || in->id == X86_INS_LOOPNE ||
	    in->id == X86_INS_JRCXZ || in->id == X86_INS_JECXZ || in->id == X86_INS_JCXZ ||
	    in->id == X86_INS_XBEGIN)
		return "a loop instruction in the first bytes";
	if (in_group(in, X86_GRP_BRANCH_RELATIVE) && !in_group(in, X86_GRP_JUMP) &&
	    !in_group(in, X86_GRP_CALL))
		return "a relative branch not understood";
	if (in_group(in, X86_GRP_CALL)) {
		/* A direct call: it is the last displaced instruction (a call
		 * is 5 bytes).  Its return address is pushed as it was, the
		 * instruction after it in the function (untouched), so that the
		 * callee returns there and the unwinder sees the function:
		 * push $lo; movl $hi, 4(%rsp); jmp target. */
		uint64_t t = branch_target(in), ret = in->address + in->size;
		if (t == 0)
			return "an indirect call in the first bytes";
		int64_t rel = (int64_t)(t - (new_addr + 18));
		if (!fits32(rel))
			return "a call the trampoline cannot reach";
		uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);
		out[0] = 0x68;
		memcpy(out + 1, &lo, 4);
		out[5] = 0xc7;
		out[6] = 0x44;
		out[7] = 0x24;
		out[8] = 0x04;
		memcpy(out + 9, &hi, 4);
		out[13] = 0xe9;
		int32_t r32 = (int32_t)rel;
		memcpy(out + 14, &r32, 4);
		plan->code_len += 18;
		return NULL;
	}
	if (in_group(in, X86_GRP_JUMP) && branch_target(in) != 0) {
		uint64_t t = branch_target(in);
		if (in->id == X86_INS_JMP) {
			int64_t rel = (int64_t)(t - (new_addr + 5));
			if (!fits32(rel))
				return "a jump the trampoline cannot reach";
			out[0] = 0xe9;
			int32_t r32 = (int32_t)rel;
			memcpy(out + 1, &r32, 4);
			plan->code_len += 5;
			return NULL;
		}
		/* jcc: 0x70+cc rel8, or 0x0f 0x80+cc rel32 */
		uint8_t cc;
		if (in->size == 2 && (in->bytes[0] & 0xf0) == 0x70)
			cc = in->bytes[0] & 0x0f;
		else if (in->size == 6 && in->bytes[0] == 0x0f && (in->bytes[1] & 0xf0) == 0x80)
			cc = in->bytes[1] & 0x0f;
		else
			return "a conditional jump not understood";
		int64_t rel = (int64_t)(t - (new_addr + 6));
		if (!fits32(rel))
			return "a jump the trampoline cannot reach";
		out[0] = 0x0f;
		out[1] = (uint8_t)(0x80 | cc);
		int32_t r32 = (int32_t)rel;
		memcpy(out + 2, &r32, 4);
		plan->code_len += 6;
		return NULL;
	}
	memcpy(out, in->bytes, in->size);
	if (is_rip_relative(in)) {
		/* Where the 32-bit displacement is: Capstone 4 says for most
		 * instructions; for some (SSE moves) it does not, and it is
		 * then the last 4 bytes before the immediate, if they hold the
		 * displacement Capstone decoded. */
		unsigned off = x->encoding.disp_offset;
		int32_t d;
		if (off == 0 || x->encoding.disp_size != 4) {
			if (in->size < 4u + x->encoding.imm_size + 1u)
				return "a RIP-relative operand not understood";
			off = in->size - x->encoding.imm_size - 4u;
		}
		if (off + 4u > in->size)
			return "a RIP-relative operand not understood";
		memcpy(&d, in->bytes + off, 4);
		if ((int64_t)d != x->disp)
			return "a RIP-relative operand not understood";
		int64_t nd = (int64_t)d + (int64_t)(in->address - new_addr);
		if (!fits32(nd))
			return "a RIP-relative operand the trampoline cannot reach";
		int32_t n32 = (int32_t)nd;
		memcpy(out + off, &n32, 4);
	}
	plan->code_len += in->size;
	return NULL;
}

/* Whether the flow never goes on to the next instruction. */
static bool ends_flow(const cs_insn *in)
{
	return in->id == X86_INS_JMP || in_group(in, X86_GRP_RET) || in_group(in, X86_GRP_IRET) ||
	       in->id == X86_INS_HLT || in->id == X86_INS_UD2 || in->id == X86_INS_INT3;
}

/* The displaced instructions, from code (at addr) on: at least
 * PATCH_JMP_SIZE bytes of whole instructions, relocated.  After one that
 * ends the flow (a jmp over the padding to a loop's test, a ret), the
 * bytes up to the patch's end are only overwritten: no flow reaches them
 * but a jump, and scan_function() lets none jump there. */
static const char *displace(cs_insn *in, const uint8_t *code, uint64_t size, uint64_t addr,
			    uint64_t at, struct patch_plan *plan)
{
	const uint8_t *p = code;
	uint64_t left = size, pc = addr;
	const char *why = NULL;
	bool dead = false;

	while (plan->len < PATCH_JMP_SIZE && !why) {
		if (left == 0) {
			why = "shorter than the patch";
			break;
		}
		if (!cs_disasm_iter(handle, &p, &left, &pc, in)) {
			/* Cut inside an instruction: the symbol ends first. */
			why = left < 15 ? "shorter than the patch" : "bytes that do not decode";
			break;
		}
		/* A nop needs no copy: a sled left for patching
		 * (-fpatchable-function-entry, -pg -mnop-mcount -mfentry)
		 * is used as it is, the stub jumping back past it. */
		if (!dead && in->id != X86_INS_NOP) {
			why = relocate(in, at, plan);
			dead = ends_flow(in);
		}
		plan->len += in->size;
	}
	return why;
}

__attribute__((visibility("default"))) int fxt_patch_plan(const uint8_t *code, uint64_t size,
							  uint64_t addr, uint64_t at,
							  const struct patch_mem *mem,
							  struct patch_plan *plan)
{
	int err = 0;

	memset(plan, 0, sizeof(*plan));
	pthread_mutex_lock(&lock);
	if (!opened) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK ||
		    cs_option(handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
			err = -EINVAL;
			goto out;
		}
		if ((insn = cs_malloc(handle)) == NULL) {
			cs_close(&handle);
			err = -ENOMEM;
			goto out;
		}
		opened = true;
	}
	if (size == 0) {
		plan->why = "no size in the symbol table";
		goto out;
	}
	plan->keep = is_endbr64(code, size) ? 4 : 0;
	if (size < plan->keep + PATCH_JMP_SIZE) {
		plan->why = "shorter than the patch";
		goto out;
	}
	plan->why =
	    displace(insn, code + plan->keep, size - plan->keep, addr + plan->keep, at, plan);
	if (plan->why)
		goto out;
	/* Re-checked over the whole function: a jump to the patched entry
	 * itself, as well as into the bytes after it. */
	plan->why = scan_function(insn, code, size, addr, addr + plan->keep,
				  addr + plan->keep + plan->len, mem);
out:
	pthread_mutex_unlock(&lock);
	return err;
}
