/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * direct_count: an ops->direct_call target that counts its calls and
 * returns into the traced function's body, by each architecture's
 * direct-call convention (runtime/patcher/<arch>.h).  Single-threaded use
 * (the benchmark's loop): a plain increment.
 */
#if defined(__x86_64__)
/* Called by the site's CALL: (%rsp) is where the body resumes; only r11
   is scratch, and the flags are not the traced function's to keep. */
	.text
	.p2align 4
	.globl	direct_count
	.type	direct_count, @function
direct_count:
	endbr64
	incq	direct_calls(%rip)
	ret
	.size	direct_count, . - direct_count
#elif defined(__aarch64__)
/* Entered by the trampoline's BR X17: x30 is where the body resumes, x9 the
   caller's LR; x10, x11, x16, x17 are scratch. */
	.text
	.balign	8
	.globl	direct_count
	.type	direct_count, %function
direct_count:
	bti	c
	adrp	x16, direct_calls
	ldr	x17, [x16, :lo12:direct_calls]
	add	x17, x17, #1
	str	x17, [x16, :lo12:direct_calls]
	mov	x10, x30
	mov	x30, x9
	ret	x10
	.size	direct_count, . - direct_count
#elif defined(__riscv)
/* Entered by the trampoline's `jr t4`: t0 is where the body resumes, ra the
   traced function's return address; t1, t3, t4 are scratch. */
	.option	norelax
	.text
	.balign	8
	.globl	direct_count
	.type	direct_count, %function
direct_count:
	lla	t1, direct_calls
	ld	t3, 0(t1)
	addi	t3, t3, 1
	sd	t3, 0(t1)
	jr	t0
	.size	direct_count, . - direct_count
#else
#error "direct.S: no direct-call convention for this target"
#endif

	.bss
	.balign	8
	.globl	direct_calls
	.type	direct_calls, %object
direct_calls:
	.zero	8
	.size	direct_calls, 8

	.section .note.GNU-stack, "", %progbits
