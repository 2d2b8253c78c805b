/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef BENCH_CALLOPS_H
#define BENCH_CALLOPS_H

#define NOTHERS 100

int target(int x);
extern int (*const others[NOTHERS])(int);

#endif
