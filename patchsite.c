// SPDX-License-Identifier: GPL-2.0-only
/*
 * patchsite.c - the command line.  It parses options and calls the layers:
 * elfio (files), recordsites (finding and checking sites).  Nothing else
 * lives here.
 *
 * Exit codes: 0 success (audit: clean), 1 audit findings, 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfio.h"
#include "recordsites.h"
#include "rewriter.h"

#define EXIT_FINDINGS	1
#define EXIT_ERROR	2

static const char usage_text[] =
	"usage: patchsite <command> [options] IMAGE\n"
	"\n"
	"Find, check and write ftrace patch sites (mcount/fentry calls, patchable\n"
	"NOP areas, arm64/riscv64 CALL_OPS literals) in linked ELF images and\n"
	"relocatable objects, for x86_64, arm64 and riscv64.\n"
	"\n"
	"commands:\n"
	"  record IMAGE         find every site, verify it by decoding, print the table\n"
	"      --symbolize          print ADDRESS FUNC+0xOFF FLAVOUR\n"
	"      --format=FMT         list (default), json, asm, elf\n"
	"      -o, --output=FILE    write to FILE (atomically) instead of stdout\n"
	"      --patchable=N,M      the -fpatchable-function-entry=N,M layout, when the\n"
	"                           image has no table to infer it from\n"
	"      --nop-mcount         x86: sites are 5-byte NOPs at entry (-mnop-mcount)\n"
	"      --in-place           write the sorted table into the image's own reserved\n"
	"                           table (the __start/__stop_mcount_loc region, or the\n"
	"                           __mcount_loc or __patchable_function_entries section)\n"
	"                           and its .rela.dyn addends, where the image lies,\n"
	"                           under an undo journal IMAGE.patchsite-journal that\n"
	"                           the next command rolls back if this one is killed;\n"
	"                           with -o, into a copy\n"
	"      --keep-misaligned    with --in-place: list misaligned CALL_OPS sites too\n"
	"      --fsync              with --in-place: make the journal, then the image,\n"
	"                           durable (survives a power cut, not only a kill)\n"
	"\n"
	"  audit IMAGE          report misaligned CALL_OPS literals, table entries that are\n"
	"                       not sites (stale), sites missing from the table, duplicates\n"
	"      --format=FMT         text (default) or json\n"
	"      --align=N            literal alignment to check (default 8)\n"
	"      --patchable=N,M, --nop-mcount   as for record\n"
	"\n"
	"  pin OBJ|THIN-ARCHIVE...   riscv64, before the final link: keep linker\n"
	"                       relaxation from shrinking the calls ftrace rewrites with a\n"
	"                       fixed-size sequence (ftrace_call, ftrace_graph_call,\n"
	"                       ftrace_regs_call, -pg calls to _mcount)\n"
	"      --point=NAME         also pin the call at label NAME (repeatable)\n"
	"      --no-mcount          leave -pg calls to _mcount relaxable\n"
	"      --dry-run            report, write nothing\n"
	"\n"
	"  repad IN.o -o OUT.o | --in-place IN.o   arm64, riscv64, before the final link\n"
	"                       (an archive: every object in it; a thin one --in-place):\n"
	"                       insert NOP padding so that every CALL_OPS ops literal is\n"
	"                       8-byte aligned after any link (R_RISCV_ALIGN where the linker\n"
	"                       relaxes); moves symbols, relocations and resolved\n"
	"                       PC-relative branches behind each insertion\n"
	"      --quiet              no report line (for build systems)\n"
	"\n"
	"  embed IMAGE -o OUT   arm64 program (ET_EXEC or PIE, -fpatchable-function-entry=4,2):\n"
	"                       add a PT_LOAD with the CALL_OPS trampoline, a no-op ops and\n"
	"                       the site table, point every literal at the no-op ops and\n"
	"                       leave every site disabled (MOV X9, X30; NOP); attach at run\n"
	"                       time with libpatchsite-callops (linked or LD_PRELOADed)\n"
	"\n"
	"  --help, --version\n"
	"\n"
	"Exit status: 0 success, 1 findings (audit), 2 error.\n";

static bool usage_said;

static int usage_error(const char *fmt, const char *arg)
{
	usage_said = true;
	fprintf(stderr, "patchsite: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'patchsite --help'\n");
	return EXIT_ERROR;
}

static int parse_nm(const char *s, int *n, int *m)
{
	char *end;
	long a = strtol(s, &end, 10), b = 0;

	if (end == s || a < 0 || a > 64)
		return -1;
	if (*end == ',') {
		const char *q = end + 1;
		b = strtol(q, &end, 10);
		if (end == q || b < 0 || b > a)
			return -1;
	}
	if (*end)
		return -1;
	*n = (int)a;
	*m = (int)b;
	return 0;
}

enum { OPT_FORMAT = 256, OPT_SYMBOLIZE, OPT_PATCHABLE, OPT_NOP_MCOUNT, OPT_IN_PLACE,
       OPT_KEEP_MISALIGNED, OPT_ALIGN, OPT_FSYNC };

/* Options that shape how sites are found, shared by record and audit. */
static int site_option(int c, struct record_options *ro)
{
	char *end;

	switch (c) {
	case OPT_PATCHABLE:
		if (parse_nm(optarg, &ro->patchable_n, &ro->patchable_m))
			return usage_error("--patchable takes N or N,M with 0 <= M <= N <= 64, "
					   "not '%s'", optarg);
		return 0;
	case OPT_NOP_MCOUNT:
		ro->force_nop_mcount = true;
		return 0;
	case OPT_ALIGN: {
		unsigned long a = strtoul(optarg, &end, 0);
		if (*end || !a || a > 4096 || (a & (a - 1)))
			return usage_error("--align takes a power of two, not '%s'", optarg);
		ro->align = (unsigned int)a;
		return 0;
	}
	}
	return -1;
}

static int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "patchable", required_argument, NULL, OPT_PATCHABLE },
		{ "nop-mcount", no_argument, NULL, OPT_NOP_MCOUNT },
		{ "align", required_argument, NULL, OPT_ALIGN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_options ro;
	struct audit a;
	bool json = false;
	struct elfio *e;
	struct record *r = NULL;
	int c, ret;

	record_options_init(&ro);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == OPT_FORMAT) {
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return usage_error("unknown audit format '%s' (text, json)", optarg);
			continue;
		}
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		ret = site_option(c, &ro);
		if (ret > 0)
			return ret;
		if (ret < 0)
			return usage_error("%s", "bad option to 'audit'");
	}
	if (optind + 1 != argc)
		return usage_error("%s", "audit takes exactly one IMAGE");

	e = elfio_open(argv[optind], 0);
	if (!e)
		return EXIT_ERROR;
	ret = record_scan(e, &ro, &r);
	if (!ret)
		ret = audit_run(r, &a);
	if (!ret) {
		audit_print(r, &a, json, stdout);
		ret = a.n ? EXIT_FINDINGS : 0;
		audit_free(&a);
		if (fflush(stdout)) {
			elfio_error("<stdout>", "write error: %s", strerror(errno));
			ret = EXIT_ERROR;
		}
	} else {
		ret = EXIT_ERROR;
	}
	record_free(r);
	elfio_close(e);
	return ret;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "symbolize", no_argument, NULL, OPT_SYMBOLIZE },
		{ "output", required_argument, NULL, 'o' },
		{ "patchable", required_argument, NULL, OPT_PATCHABLE },
		{ "nop-mcount", no_argument, NULL, OPT_NOP_MCOUNT },
		{ "align", required_argument, NULL, OPT_ALIGN },
		{ "in-place", no_argument, NULL, OPT_IN_PLACE },
		{ "keep-misaligned", no_argument, NULL, OPT_KEEP_MISALIGNED },
		{ "fsync", no_argument, NULL, OPT_FSYNC },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_options ro;
	struct inplace_options io = { 0 };
	bool in_place = false;
	enum out_format fmt = OUT_LIST;
	const char *out = NULL;
	struct elfio *e = NULL;
	struct record *r = NULL;
	int c, ret;

	record_options_init(&ro);
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IN_PLACE:
			in_place = true;
			break;
		case OPT_KEEP_MISALIGNED:
			io.keep_misaligned = true;
			break;
		case OPT_FSYNC:
			io.fsync = true;
			break;
		case OPT_PATCHABLE:
		case OPT_NOP_MCOUNT:
		case OPT_ALIGN:
			ret = site_option(c, &ro);
			if (ret)
				return ret;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "list"))
				fmt = fmt == OUT_SYMBOLIZE ? OUT_SYMBOLIZE : OUT_LIST;
			else if (!strcmp(optarg, "json"))
				fmt = OUT_JSON;
			else if (!strcmp(optarg, "asm"))
				fmt = OUT_ASM;
			else if (!strcmp(optarg, "elf"))
				fmt = OUT_ELF;
			else
				return usage_error("unknown format '%s' (list, json, asm, elf)", optarg);
			break;
		case OPT_SYMBOLIZE:
			fmt = OUT_SYMBOLIZE;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "bad option to 'record'");
		}
	}
	if (optind + 1 != argc)
		return usage_error("%s", "record takes exactly one IMAGE");
	if (fmt == OUT_ELF && !out)
		return usage_error("%s", "--format=elf needs -o FILE");
	if (io.fsync && !in_place)
		return usage_error("%s", "--fsync goes with --in-place");
	if (in_place && fmt != OUT_LIST)
		return usage_error("%s", "--in-place writes the image; it takes no --format");

	e = elfio_open(argv[optind], 0);
	if (!e)
		return EXIT_ERROR;
	ret = record_scan(e, &ro, &r);
	/*
	 * One line on stderr, after the work succeeded: what was written, and
	 * how the layout was established and whether the table agreed.
	 */
	char what[1024];
	if (!ret)
		record_describe(r, what, sizeof(what));
	if (!ret && in_place) {
		struct inplace_report rep;
		ret = record_write_in_place(r, &io, out ? out : argv[optind], &rep);
		if (!ret) {
			fprintf(stderr, "patchsite: %s: %s: %zu of %zu slots used, %zu .rela.dyn "
				"entries updated%s", out ? out : argv[optind], rep.table, rep.used,
				rep.slots, rep.relocs, rep.changed ? "" : ", already up to date");
			if (rep.left_out)
				fprintf(stderr, ", %zu misaligned sites left out", rep.left_out);
			fprintf(stderr, "; before: %s\n", what);
		}
	} else if (!ret) {
		ret = record_output(r, fmt, out);
		if (!ret)
			fprintf(stderr, "patchsite: %s: %s\n", argv[optind], what);
	}
	record_free(r);
	elfio_close(e);
	return ret ? EXIT_ERROR : 0;
}

static int cmd_pin(int argc, char **argv)
{
	enum { OPT_POINT = 300, OPT_NO_MCOUNT, OPT_DRY_RUN };
	static const struct option opts[] = {
		{ "point", required_argument, NULL, OPT_POINT },
		{ "no-mcount", no_argument, NULL, OPT_NO_MCOUNT },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pin_options po = { .pin_mcount = true };
	struct pin_report rep;
	const char **points = calloc((size_t)argc + 1, sizeof(*points));
	size_t np = 0;
	int c, ret;

	if (!points)
		return EXIT_ERROR;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_POINT:
			points[np++] = optarg;
			break;
		case OPT_NO_MCOUNT:
			po.pin_mcount = false;
			break;
		case OPT_DRY_RUN:
			po.dry_run = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(points);
			return 0;
		default:
			free(points);
			return usage_error("%s", "bad option to 'pin'");
		}
	}
	if (optind >= argc) {
		free(points);
		return usage_error("%s", "pin takes one or more objects or thin archives");
	}
	po.extra_points = points;
	ret = pin_objects((const char *const *)argv + optind, (size_t)(argc - optind), &po, &rep);
	free(points);
	if (ret)
		return EXIT_ERROR;
	printf("pin: %zu objects read, %zu rewritten%s; patch points: %zu pinned, %zu already "
	       "fixed-size; _mcount calls: %zu pinned, %zu already fixed-size\n", rep.objects,
	       rep.written, po.dry_run ? " (dry run: none written)" : "", rep.points,
	       rep.points_already, rep.mcount, rep.mcount_already);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

static int cmd_repad(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "in-place", no_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct repad_report rep;
	const char *out = NULL;
	bool in_place = false, quiet = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			in_place = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "bad option to 'repad'");
		}
	}
	if (optind + 1 != argc)
		return usage_error("%s", "repad takes exactly one object or archive");
	if (!!out == in_place)
		return usage_error("%s", "repad needs -o OUT.o or --in-place");
	if (repad_file(argv[optind], in_place ? argv[optind] : out, &rep))
		return EXIT_ERROR;
	if (quiet)
		return 0;
	printf("%s: padded %zu functions, %zu bytes added; %zu sections realigned or grown, "
	       "%zu branches re-encoded, %zu relocations and %zu symbols moved\n",
	       in_place ? argv[optind] : out, rep.functions, rep.bytes, rep.sections,
	       rep.branches, rep.relocs, rep.symbols);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

static int cmd_embed(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct embed_report rep;
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("%s", "bad option to 'embed'");
		}
	}
	if (optind + 1 != argc || !out)
		return usage_error("%s", "embed takes one IMAGE and -o OUT");
	if (embed_image(argv[optind], out, &rep))
		return EXIT_ERROR;
	printf("%s: embedded %zu sites (%zu misaligned left out), trampoline at 0x%" PRIx64
	       "; new PT_LOAD R+X at 0x%" PRIx64 ", offset 0x%" PRIx64 ", %" PRIu64 " bytes\n",
	       out, rep.sites, rep.misaligned, rep.tramp, rep.seg_addr, rep.seg_offset,
	       rep.seg_size);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

/*
 * Every exit 2 must say why, in one line.  The commands report through
 * elfio_error()/elfio_err() or usage_error(); should a failure path forget
 * to, say so here rather than exit silently (fuzz_cli treats this line as
 * a bug).
 */
static int run(int (*cmd)(int, char **), int argc, char **argv)
{
	unsigned long before = elfio_errors_reported();
	int rc = cmd(argc, argv);

	if (rc == EXIT_ERROR && !usage_said && elfio_errors_reported() == before)
		fprintf(stderr, "patchsite: %s: %s failed and gave no reason (a bug: please "
			"report it)\n", argv[argc - 1], argv[0]);
	return rc;
}

int main(int argc, char **argv)
{
	usage_said = false;	/* main() runs many times in fuzz_cli */
	if (argc < 2)
		return usage_error("%s", "no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("patchsite %s\n", PATCHSITE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return run(cmd_record, argc - 1, argv + 1);
	if (!strcmp(argv[1], "audit"))
		return run(cmd_audit, argc - 1, argv + 1);
	if (!strcmp(argv[1], "pin"))
		return run(cmd_pin, argc - 1, argv + 1);
	if (!strcmp(argv[1], "repad"))
		return run(cmd_repad, argc - 1, argv + 1);
	if (!strcmp(argv[1], "embed"))
		return run(cmd_embed, argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
