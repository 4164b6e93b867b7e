/* The debuglink CRC-32 (see crc32.h). */
#include <config.h>

#include "common/crc32.h"

/* The CRC of each 4-bit value, reflected polynomial 0xEDB88320. */
static const uint32_t nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
	0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

static uint32_t by_nibbles(uint32_t crc, const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		crc ^= b[i];
		crc = (crc >> 4) ^ nibble[crc & 15];
		crc = (crc >> 4) ^ nibble[crc & 15];
	}
	return crc;
}

uint32_t fxt__crc32(uint32_t crc, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint32_t t[4][256];
	size_t i = 0;

	crc = ~crc;
	if (len >= 16384) {
		/* A whole file: four bytes a step through tables made here, on
		 * the stack (no state shared between threads): t[0][v] is the
		 * CRC of byte v, t[k][v] that of byte v followed by k zeros. */
		for (unsigned v = 0; v < 256; v++) {
			uint32_t c = v;
			c = (c >> 4) ^ nibble[c & 15];
			t[0][v] = (c >> 4) ^ nibble[c & 15];
		}
		for (unsigned v = 0; v < 256; v++)
			for (unsigned k = 1; k < 4; k++)
				t[k][v] = (t[k - 1][v] >> 8) ^ t[0][t[k - 1][v] & 255];
		for (; len - i >= 4; i += 4) {
			uint32_t w = crc ^ ((uint32_t)b[i] | (uint32_t)b[i + 1] << 8 |
					    (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24);
			crc = t[3][w & 255] ^ t[2][(w >> 8) & 255] ^ t[1][(w >> 16) & 255] ^
			      t[0][w >> 24];
		}
	}
	return ~by_nibbles(crc, b + i, len - i);
}
