#include <fxt/writer.h>
size_t fxt_enc_magic(uint64_t *out, size_t cap){ if (cap) out[0]=FXT_MAGIC_RECORD; return 1; }
