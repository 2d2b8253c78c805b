// SPDX-License-Identifier: GPL-2.0-only
/*
 * check_main.c - runs every Check suite.  Each tests/check_<module>.c
 * exports `Suite *<module>_suite(void)`; the architectures are not listed
 * here: arch_suite() runs every one of fixtures/arches.mk from the table
 * tests/arch/gen.py writes.
 *
 * Two runners.  The decoder cases (arch_suite: about 900 loop iterations,
 * each a pure decode of a heap copy of its bytes) run in this process, not
 * one child each: under the sanitizers every forked child pays a
 * LeakSanitizer scan at its exit, which cost far more than the decode.
 * They run last: what a suite run in this process allocates and frees
 * stays in ASan's quarantine, which every child forked afterwards would
 * walk again in its own scan (bench/RESULTS.md has the times).  A leak
 * there is still caught, by the scan at this process's exit (a non-zero
 * exit status, which tests/testrun.sh counts as a failure); a crash ends
 * the run without its summary line (a failure); a hang is ended by
 * alarm().  Every other suite forks a child per test, as
 * the environment says (CK_FORK: the Makefile sets yes), for its timeouts
 * and its exit and signal tests.  The two runners' results are printed as
 * one: each failure as Check prints it, then Check's own summary line over
 * both, which tests/testrun.sh reads.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/check_suites.h"

/* the decoder cases' whole run may take this long before SIGALRM ends it */
#define ARCH_ALARM_SECONDS 600

static void report(SRunner *sr, int *checks, int *failures, int *errors)
{
	TestResult **tr = srunner_failures(sr);
	int n = srunner_ntests_failed(sr);

	for (int i = 0; i < n; i++) {
		/* as Check prints one (its tr_str is not exported) */
		printf("%s:%d:%c:%s: %s\n", tr_lfile(tr[i]), tr_lno(tr[i]),
		       tr_rtype(tr[i]) == CK_ERROR ? 'E' : 'F', tr_tcname(tr[i]), tr_msg(tr[i]));
		if (tr_rtype(tr[i]) == CK_ERROR)
			(*errors)++;
		else
			(*failures)++;
	}
	free(tr);
	*checks += srunner_ntests_run(sr);
}

int main(void)
{
	SRunner *decode = srunner_create(arch_suite());
	SRunner *sr = srunner_create(arch_caps_suite());
	int checks = 0, failures = 0, errors = 0;

	srunner_add_suite(sr, elfio_suite());
	srunner_add_suite(sr, bootimg_suite());
	srunner_add_suite(sr, decompress_suite());
	srunner_add_suite(sr, embed_suite());
	srunner_add_suite(sr, recordsites_suite());
	srunner_add_suite(sr, repad_suite());
	srunner_add_suite(sr, batch_suite());
	srunner_run_all(sr, CK_SILENT);

	/* last: what they allocate and free stays in ASan's quarantine, which
	 * a forked child's LeakSanitizer scan would walk again */
	srunner_set_fork_status(decode, CK_NOFORK);
	alarm(ARCH_ALARM_SECONDS);
	srunner_run_all(decode, CK_SILENT);
	alarm(0);

	report(decode, &checks, &failures, &errors);
	report(sr, &checks, &failures, &errors);
	/* Check's own summary format (CK_NORMAL's last line) */
	printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
	       checks ? (int)(100.0 * (checks - failures - errors) / checks) : 0,
	       checks, failures, errors);
	/* before the leak scan at exit, which ends the process with _exit */
	fflush(stdout);
	srunner_free(decode);
	srunner_free(sr);
	return failures + errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
