// SPDX-License-Identifier: GPL-2.0
/*
 * ptrid.c - SipHash-2-4 (Aumasson and Bernstein, 2012) of a single 64-bit
 * message word, written from the paper's description: a pointer is the only
 * input, so the general byte-stream code is not needed.
 */
#include <sys/random.h>
#include "ptrid.h"

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static inline void sipround(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

int ptrid_key_init(struct ptrid_key *key)
{
	return getrandom(key, sizeof(*key), 0) == sizeof(*key) ? 0 : -1;
}

uint32_t ptrid(const struct ptrid_key *key, uint64_t m)
{
	/* 8 message bytes: one full block, then the final block holds only the length */
	uint64_t v[4] = { key->k0 ^ 0x736f6d6570736575ull, key->k1 ^ 0x646f72616e646f6dull,
			  key->k0 ^ 0x6c7967656e657261ull, key->k1 ^ 0x7465646279746573ull };
	uint64_t last = (uint64_t)8 << 56, h;
	uint32_t id;

	v[3] ^= m;
	sipround(v);
	sipround(v);
	v[0] ^= m;
	v[3] ^= last;
	sipround(v);
	sipround(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	sipround(v);
	sipround(v);
	sipround(v);
	sipround(v);
	h = v[0] ^ v[1] ^ v[2] ^ v[3];
	id = (uint32_t)h;
	return id ? id : 1;
}
