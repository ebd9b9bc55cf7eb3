/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Layout checks of the headers in include/gpuq/, at compile time in every
 * file that includes one (BPF objects and the agent alike), so the two sides
 * cannot build with different layouts. Sizes and offsets are worked out by hand from the field
 * lists, not taken from the compiler. C++ spells _Static_assert differently;
 * __builtin_offsetof needs no <stddef.h>, which BPF programs built on
 * vmlinux.h do not have.
 */
#ifndef GPUQ_ABI_ASSERT_H
#define GPUQ_ABI_ASSERT_H

#ifdef __cplusplus
#define GPUQ_ABI_ASSERT(cond, what) static_assert(cond, what)
#else
#define GPUQ_ABI_ASSERT(cond, what) _Static_assert(cond, what)
#endif
#define GPUQ_ABI_OFFSET(type, field, off)                                                          \
	GPUQ_ABI_ASSERT(__builtin_offsetof(struct type, field) == (off),                           \
			#type "." #field " is at " #off)
#define GPUQ_ABI_SIZE(type, size)                                                                  \
	GPUQ_ABI_ASSERT(sizeof(struct type) == (size), #type " is " #size " bytes")

#endif /* GPUQ_ABI_ASSERT_H */
