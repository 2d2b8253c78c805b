/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BENCH_CALLOPS_H
#define BENCH_CALLOPS_H

#define NOTHERS 1000

int target(int x);
extern int (*const others[NOTHERS])(int);

/* direct.S: an ops->direct_call target that counts its calls */
void direct_count(void);
extern unsigned long direct_calls;

#endif
