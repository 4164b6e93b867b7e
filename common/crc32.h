/* The CRC-32 that a .gnu_debuglink section stores for its debug file
 * (objcopy --add-gnu-debuglink): the IEEE 802.3 polynomial, reflected
 * (0xEDB88320), initial value and final xor all ones; zlib's crc32() gives
 * the same value.  Here so that the agent, which links no zlib, and the
 * symbolizer check a debug file the same way (common/debugpath.h).
 * Four bytes a step through tables built on the stack for a long buffer,
 * four bits a step for a short one: no state shared between threads. */
#ifndef FXT_COMMON_CRC32_H
#define FXT_COMMON_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of `len` more bytes at p, given the CRC of the bytes before them
 * (0 for none): fxt__crc32(fxt__crc32(0, a, n), b, m) is the CRC of a then
 * b. */
uint32_t fxt__crc32(uint32_t crc, const void *p, size_t len);

#endif /* FXT_COMMON_CRC32_H */
