// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_main.c - runs every Check suite.  Each tests/check_<module>.c
 * exports `Suite *<module>_suite(void)`; the architectures are not listed
 * here: arch_suite() runs every one of fixtures/arches.mk from the table
 * tests/arch/gen.py writes.
 */
#include <check.h>
#include <stdlib.h>

#include "tests/check_suites.h"

int main(void)
{
	SRunner *sr = srunner_create(arch_suite());

	srunner_add_suite(sr, arch_caps_suite());
	srunner_add_suite(sr, elfio_suite());
	srunner_add_suite(sr, bootimg_suite());
	srunner_add_suite(sr, decompress_suite());
	srunner_add_suite(sr, embed_suite());
	srunner_add_suite(sr, recordsites_suite());
	srunner_add_suite(sr, repad_suite());
	srunner_add_suite(sr, batch_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
