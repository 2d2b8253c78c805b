/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PATCHSITE_CHECK_SUITES_H
#define PATCHSITE_CHECK_SUITES_H
#include <check.h>

Suite *arch_suite(void);		/* every architecture: tests/arch/ */
Suite *arch_caps_suite(void);
Suite *elfio_suite(void);
Suite *bootimg_suite(void);	/* elfio/bootimg.c, elfio/kallsyms.c */
Suite *decompress_suite(void);	/* the one decompressor family: elfio/decompress.c */
Suite *embed_suite(void);
Suite *recordsites_suite(void);
Suite *repad_suite(void);		/* the one DWARF reader as repad uses it; repad's plan */
Suite *batch_suite(void);		/* the package audit: recordsites/batch.c, package.c */

#endif
