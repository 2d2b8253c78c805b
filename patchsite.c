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
#include <sys/stat.h>

#include "elfio/bootimg.h"
#include "elfio/elfio.h"
#include "recordsites/package.h"
#include "recordsites/recordsites.h"
#include "rewriter/rewriter.h"
#include "trace/inject.h"
#include "trace/trace.h"

#define EXIT_FINDINGS	1
#define EXIT_ERROR	2

static const char intro_text[] =
	"usage: patchsite <command> [options] IMAGE...\n"
	"\n"
	"Find, check and write ftrace patch sites (mcount/fentry calls, patchable\n"
	"NOP areas, arm64/riscv64 CALL_OPS literals) in linked ELF images and\n"
	"relocatable objects, for the architectures 'patchsite arches' lists.\n"
	"\n"
	"commands:\n";

/* Each command's help: `patchsite COMMAND --help` prints its own. */
static const char help_record[] =
	"  record IMAGE         find every site, verify it by decoding, print the table\n"
	"      --symbolize          print ADDRESS FUNC+0xOFF FLAVOUR\n"
	"      --format=FMT         list (default), json, asm, elf\n"
	"      -o, --output=FILE    write to FILE (atomically) instead of stdout ('-': stdout)\n"
	"      --patchable=N,M      state the layout: -fpatchable-function-entry=N,M, where\n"
	"                           the code alone does not decide it (checked against\n"
	"                           the code: a layout it does not bear out is refused)\n"
	"      --nop-mcount         state it: x86 5-byte NOPs at entry (-mnop-mcount)\n"
	"      --calls              state it: calls to mcount/__fentry__ (-pg, -mfentry)\n"
	"      --system-map=FILE    a boot image's (vmlinuz) symbols from FILE, not from its\n"
	"                           kallsyms tables (a System.map beside it is read unasked)\n"
	"      --config=FILE        the kernel's build config (for a boot image)\n"
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
	"      -v, --verbose        say on stderr how the layout was established (and,\n"
	"                           with --in-place, what was written)\n"
	"      -q, --quiet          say nothing on success (the default)\n";

static const char help_audit[] =
	"  audit IMAGE|DIR...   report misaligned CALL_OPS literals, table entries that are\n"
	"                       not sites (stale), sites missing from the table, duplicates;\n"
	"                       many images, or directories walked for vmlinux*, vmlinuz*, .ko,\n"
	"                       .ko.gz, .ko.xz, .ko.zst: a line per finding, a total\n"
	"      --format=FMT         text (default) or json\n"
	"      --system-map=FILE    a boot image's (vmlinuz) symbols from FILE, not from its\n"
	"                           kallsyms tables (a System.map beside it is read unasked)\n"
	"      --config=FILE        the kernel's build config (for a boot image)\n"
	"      --ignore=KIND,...    findings of these kinds do not fail the run (misaligned,\n"
	"                           stale, missing, duplicate, short, unsorted, shifted,\n"
	"                           weak: stale entries outside every function)\n"
	"      -j, --jobs=N         images audited at once (default: one a core)\n"
	"      -v, --verbose        many images: every image's first line, clean or not\n"
	"      -q, --quiet          many images: the total only when something failed\n"
	"      --align=N            literal alignment to check (default 8)\n"
	"      --patchable=N,M, --nop-mcount, --calls   as for record\n";

static const char help_pin[] =
	"  pin OBJ|THIN-ARCHIVE...   riscv64, before the final link: keep linker\n"
	"                       relaxation from shrinking the calls ftrace rewrites with a\n"
	"                       fixed-size sequence (ftrace_call, ftrace_graph_call,\n"
	"                       ftrace_regs_call, -pg calls to _mcount)\n"
	"      --point=NAME         also pin the call at label NAME (repeatable)\n"
	"      --no-mcount          leave -pg calls to _mcount relaxable\n"
	"      --dry-run            report, write nothing\n"
	"      -v, --verbose        a line per object, and a report line\n"
	"      -q, --quiet          say nothing on success (the default)\n";

static const char help_repad[] =
	"  repad IN.o -o OUT.o | --in-place IN.o   before the final link (an archive:\n"
	"                       every object in it; a thin one --in-place): insert NOP\n"
	"                       padding so that every arm64/riscv64 CALL_OPS ops literal is\n"
	"                       8-byte aligned after any link (R_RISCV_ALIGN where the linker\n"
	"                       relaxes); moves symbols, relocations and resolved\n"
	"                       PC-relative branches behind each insertion.  An object\n"
	"                       with nothing to pad (any x86_64 object) is left byte for byte\n"
	"      -o, --output=OUT     write the padded object (or archive) to OUT\n"
	"      --in-place           rewrite IN where it lies\n"
	"      -v, --verbose        a report line: what was padded and moved\n"
	"      -q, --quiet          say nothing on success (the default)\n";

static const char help_embed[] =
	"  embed IMAGE -o OUT   arm64 program (ET_EXEC or PIE, -fpatchable-function-entry=4,2):\n"
	"                       add a PT_LOAD with the CALL_OPS trampoline, a no-op ops and\n"
	"                       the site table, point every literal at the no-op ops and\n"
	"                       leave every site disabled (MOV X9, X30; NOP); attach at run\n"
	"                       time with libpatchsite-callops (linked or LD_PRELOADed);\n"
	"                       riscv64 the same (=8,4 with C, =4,2 without), each site\n"
	"                       left as auipc t0, hi20(trampoline); nop;\n"
	"                       x86_64 program (-pg -mfentry [-mnop-mcount] or\n"
	"                       -fpatchable-function-entry=5, ENDBR64 or not): every\n"
	"                       site becomes one 5-byte NOP, and the PT_LOAD holds the\n"
	"                       site table and a 128 KiB trampoline room (zeros)\n"
	"      -o, --output=OUT     the embedded program (required)\n"
	"      -v, --verbose        a report line: sites, trampoline, the new segment\n"
	"      -q, --quiet          say nothing on success (the default)\n";

static const char help_arches[] =
	"  arches               print what each architecture supports: a row per\n"
	"                       architecture, a column per command (in-place: record\n"
	"                       --in-place; runtime: libpatchsite-callops), yes or no;\n"
	"                       a command refuses an image of an architecture without it\n";

static const char outro_text[] =
	"\n"
	"  --help, --version    (COMMAND --help: that command's help)\n"
	"\n"
	"Exit status: 0 success, 1 findings (audit), 2 error.\n";

static void help(const char *cmd_help)
{
	if (cmd_help) {
		fputs(cmd_help, stdout);
		return;
	}
	fputs(intro_text, stdout);
	fputs(help_record, stdout);
	fputc('\n', stdout);
	fputs(help_audit, stdout);
	fputc('\n', stdout);
	fputs(help_pin, stdout);
	fputc('\n', stdout);
	fputs(help_repad, stdout);
	fputc('\n', stdout);
	fputs(help_embed, stdout);
	fputc('\n', stdout);
	fputs(help_arches, stdout);
	fputc('\n', stdout);
	fputs(trace_help, stdout);
	fputs(outro_text, stdout);
}

static bool usage_said;
static const char *cur_cmd;	/* the command being run, for usage errors */

/* One line: what is wrong with the command line, and where the help is. */
static int usage_error(const char *fmt, const char *arg)
{
	usage_said = true;
	fprintf(stderr, "patchsite: %s%s", cur_cmd ? cur_cmd : "", cur_cmd ? ": " : "");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see 'patchsite %s%s--help')\n", cur_cmd ? cur_cmd : "", cur_cmd ? " " : "");
	return EXIT_ERROR;
}

/* getopt's '?', said in one line (opterr is 0: getopt itself says nothing). */
static int bad_option(char **argv)
{
	const char *arg = argv[optind - 1];
	char one[3] = { '-', (char)optopt, 0 };

	/* a short option's letter; a long option as it was written */
	if (optopt > 0 && optopt < 128 && (!arg || strncmp(arg, "--", 2)))
		arg = one;
	return usage_error("bad option '%s' (unknown, or without its argument)", arg ? arg : "?");
}

static int parse_nm(const char *s, int *n, int *m)
{
	char *end;
	long a = strtol(s, &end, 10), b = 0;

	if (end == s || a < 0 || a > 64)
		return -EINVAL;
	if (*end == ',') {
		const char *q = end + 1;
		b = strtol(q, &end, 10);
		if (end == q || b < 0 || b > a)
			return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	*n = (int)a;
	*m = (int)b;
	return 0;
}

enum { OPT_FORMAT = 256, OPT_SYMBOLIZE, OPT_PATCHABLE, OPT_NOP_MCOUNT, OPT_CALLS, OPT_IGNORE,
       OPT_IN_PLACE, OPT_KEEP_MISALIGNED, OPT_ALIGN, OPT_FSYNC, OPT_SYSTEM_MAP, OPT_CONFIG };

/* Options that shape how sites are found, shared by record and audit: 0,
 * an exit status (a usage error), or -ENOENT when C is not one of them. */
static int site_option(int c, struct record_options *ro)
{
	char *end;

	if ((c == OPT_PATCHABLE || c == OPT_NOP_MCOUNT || c == OPT_CALLS) &&
	    record_options_stated(ro))
		return usage_error("%s", "--patchable, --nop-mcount and --calls each state the "
				   "layout: give one");
	switch (c) {
	case OPT_PATCHABLE:
		if (parse_nm(optarg, &ro->patchable_n, &ro->patchable_m))
			return usage_error("--patchable takes N or N,M with 0 <= M <= N <= 64, "
					   "not '%s'", optarg);
		return 0;
	case OPT_NOP_MCOUNT:
		ro->force_nop_mcount = true;
		return 0;
	case OPT_CALLS:
		ro->force_calls = true;
		return 0;
	case OPT_ALIGN: {
		unsigned long a = strtoul(optarg, &end, 0);
		if (*end || !a || a > 4096 || (a & (a - 1)))
			return usage_error("--align takes a power of two, not '%s'", optarg);
		ro->align = (unsigned int)a;
		return 0;
	}
	case OPT_SYSTEM_MAP:	/* a boot image's symbols (elfio/bootimg.c) */
		bootimg_set_system_map(optarg);
		return 0;
	case OPT_CONFIG:
		bootimg_set_config(optarg);
		return 0;
	}
	return -ENOENT;	/* not one of these options */
}

/* The package audit's total line, from its counts. */
static void print_total(const struct package_totals *t)
{
	/* the findings of all images by kind, then what was ignored */
	char kinds[512] = "";
	size_t kl = 0;

	for (int k = 0; k < FIND_COUNT; k++)
		if (t->count[k] && kl < sizeof(kinds))
			kl += (size_t)snprintf(kinds + kl, sizeof(kinds) - kl, "%s%zu %s",
					       kl ? ", " : " (", t->count[k], finding_kind_name(k));
	if (kl && kl < sizeof(kinds))
		snprintf(kinds + kl, sizeof(kinds) - kl, ")");
	printf("total: %zu images: %zu clean, %zu with findings%s, %zu could not be read",
	       t->images, t->clean, t->with_findings, kinds, t->unreadable);
	for (int k = 0, first = 1; k < FIND_COUNT; k++)
		if (t->ignored[k]) {
			printf("%s %zu %s", first ? "; ignored:" : ",", t->ignored[k],
			       finding_kind_name(k));
			first = 0;
		}
	putchar('\n');
}

static int audit_package(const struct package_options *o, bool quiet, char **args, int nargs)
{
	struct package_totals t;

	if (package_audit(o, args, nargs, &t))
		return EXIT_ERROR;
	if (t.said)
		usage_said = true;	/* a worker gave its reason */
	if (!o->json && (!quiet || t.with_findings || t.unreadable || t.run))
		print_total(&t);
	if (fflush(stdout)) {
		elfio_error("<stdout>", "write error: %s", strerror(errno));
		return EXIT_ERROR;
	}
	if (t.run || t.unreadable)
		return EXIT_ERROR;
	return t.with_findings ? EXIT_FINDINGS : 0;
}

static int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "patchable", required_argument, NULL, OPT_PATCHABLE },
		{ "nop-mcount", no_argument, NULL, OPT_NOP_MCOUNT },
		{ "calls", no_argument, NULL, OPT_CALLS },
		{ "align", required_argument, NULL, OPT_ALIGN },
		{ "system-map", required_argument, NULL, OPT_SYSTEM_MAP },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "ignore", required_argument, NULL, OPT_IGNORE },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct package_options ctx;
	bool quiet = false;
	int c, ret;

	memset(&ctx, 0, sizeof(ctx));
	record_options_init(&ctx.ro);
	ctx.ro.cap = ARCH_CAP_AUDIT;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hj:vq", opts, NULL)) != -1) {
		if (c == OPT_FORMAT) {
			if (!strcmp(optarg, "json"))
				ctx.json = true;
			else if (strcmp(optarg, "text"))
				return usage_error("unknown audit format '%s' (text, json)", optarg);
			continue;
		}
		if (c == OPT_IGNORE) {
			if (audit_ignore_parse(optarg, &ctx.ignore))
				return usage_error("--ignore takes kinds of finding (misaligned, stale, "
						   "missing, duplicate, short, unsorted, shifted, weak), "
						   "not '%s'", optarg);
			continue;
		}
		if (c == 'j') {
			char *end;
			unsigned long j = strtoul(optarg, &end, 10);
			if (*end || !j || j > 256)
				return usage_error("-j takes a number of jobs from 1 to 256, not '%s'",
						   optarg);
			ctx.jobs = (unsigned int)j;
			continue;
		}
		if (c == 'v' || c == 'q') {
			ctx.verbose = c == 'v';
			quiet = c == 'q';
			continue;
		}
		if (c == 'h') {
			help(help_audit);
			return 0;
		}
		ret = site_option(c, &ctx.ro);
		if (ret > 0)
			return ret;
		if (ret < 0)
			return bad_option(argv);
	}
	if (optind >= argc)
		return usage_error("%s", "audit takes one or more IMAGEs or directories");

	/* many images, or a directory: the batch's report and total */
	struct stat st;
	if (optind + 1 < argc || (stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)))
		return audit_package(&ctx, quiet, argv + optind, argc - optind);

	ret = package_audit_image(&ctx, argv[optind], stdout, NULL);
	if (fflush(stdout)) {
		elfio_error("<stdout>", "write error: %s", strerror(errno));
		ret = EXIT_ERROR;
	}
	return ret;
}

/* What cmd_record's steps share: its options. */
struct record_cmd {
	struct record_options ro;
	struct inplace_options io;
	bool in_place, symbolize, format_given, to_stdout, verbose;
	enum out_format fmt;
	const char *out;	/* -o, or NULL */
};

/* --format=F into c->fmt (--symbolize's list stays one). 0 or the usage error's status. */
static int record_format(struct record_cmd *c, const char *f)
{
	c->format_given = strcmp(f, "list") != 0;
	if (!strcmp(f, "list"))
		c->fmt = c->fmt == OUT_SYMBOLIZE ? OUT_SYMBOLIZE : OUT_LIST;
	else if (!strcmp(f, "json"))
		c->fmt = OUT_JSON;
	else if (!strcmp(f, "asm"))
		c->fmt = OUT_ASM;
	else if (!strcmp(f, "elf"))
		c->fmt = OUT_ELF;
	else
		return usage_error("unknown format '%s' (list, json, asm, elf)", f);
	return 0;
}

static const struct option record_opts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "symbolize", no_argument, NULL, OPT_SYMBOLIZE },
	{ "output", required_argument, NULL, 'o' },
	{ "patchable", required_argument, NULL, OPT_PATCHABLE },
	{ "nop-mcount", no_argument, NULL, OPT_NOP_MCOUNT },
	{ "calls", no_argument, NULL, OPT_CALLS },
	{ "align", required_argument, NULL, OPT_ALIGN },
	{ "system-map", required_argument, NULL, OPT_SYSTEM_MAP },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "in-place", no_argument, NULL, OPT_IN_PLACE },
	{ "keep-misaligned", no_argument, NULL, OPT_KEEP_MISALIGNED },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "fsync", no_argument, NULL, OPT_FSYNC },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options, in order: true when the command ends here (help, an error), with *status. */
static bool record_args(struct record_cmd *c, int argc, char **argv, int *status)
{
	int o;

	optind = 1;
	*status = 0;
	while ((o = getopt_long(argc, argv, "o:hvq", record_opts, NULL)) != -1) {
		switch (o) {
		case OPT_IN_PLACE:
			c->in_place = true;
			break;
		case OPT_KEEP_MISALIGNED:
			c->io.keep_misaligned = true;
			break;
		case OPT_FSYNC:
			c->io.fsync = true;
			break;
		case OPT_PATCHABLE:
		case OPT_NOP_MCOUNT:
		case OPT_CALLS:
		case OPT_ALIGN:
		case OPT_SYSTEM_MAP:
		case OPT_CONFIG:
			*status = site_option(o, &c->ro);
			if (*status)
				return true;
			break;
		case OPT_FORMAT:
			*status = record_format(c, optarg);
			if (*status)
				return true;
			break;
		case OPT_SYMBOLIZE:
			c->fmt = OUT_SYMBOLIZE;
			c->symbolize = true;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'q':
			c->verbose = false;
			break;
		case 'o':
			c->out = optarg;
			break;
		case 'h':
			help(help_record);
			return true;
		default:
			*status = bad_option(argv);
			return true;
		}
	}
	return false;
}

/* The options that do not go together, and one IMAGE. 0 or the usage error's status. */
static int record_check_args(struct record_cmd *c, int argc)
{
	if (optind + 1 != argc)
		return usage_error("%s", "record takes exactly one IMAGE");
	if (c->symbolize && c->format_given)
		return usage_error("%s", "--symbolize is a form of the list: it takes no other --format");
	if (c->fmt == OUT_ELF && !c->out)
		return usage_error("%s", "--format=elf needs -o FILE (or -o - for standard output)");
	c->to_stdout = c->out && !strcmp(c->out, "-");
	if (c->to_stdout && c->in_place)
		return usage_error("%s", "--in-place writes an image: -o - (standard output) is not one");
	if (c->io.fsync && !c->in_place)
		return usage_error("%s", "--fsync goes with --in-place");
	if (c->in_place && c->fmt != OUT_LIST)
		return usage_error("%s", "--in-place writes the image; it takes no --format");
	if (c->in_place)
		c->ro.cap = ARCH_CAP_IN_PLACE;
	return 0;
}

/*
 * The table written into the image (at -o, or where it lies); --verbose:
 * the line saying so, with what (record_describe's, before the write).
 */
static int record_in_place(struct record_cmd *c, struct record *r, const char *image,
			   const char *what)
{
	const char *dest = c->out ? c->out : image;
	struct inplace_report rep;
	int ret = record_write_in_place(r, &c->io, dest, &rep);

	if (!ret && c->verbose) {
		fprintf(stderr, "%s: %s: %zu of %zu slots used, %zu .rela.dyn entries updated%s",
			dest, rep.table, rep.used, rep.slots, rep.relocs,
			rep.changed ? "" : ", already up to date");
		if (rep.left_out)
			fprintf(stderr, ", %zu misaligned sites left out", rep.left_out);
		fprintf(stderr, "; before: %s\n", what);
	}
	return ret;
}

static int cmd_record(int argc, char **argv)
{
	struct record_cmd c = { .fmt = OUT_LIST };
	struct elfio *e;
	struct record *r = NULL;
	char what[1024];
	int ret;

	record_options_init(&c.ro);
	if (record_args(&c, argc, argv, &ret) || (ret = record_check_args(&c, argc)))
		return ret;
	e = elfio_open(argv[optind], 0);
	if (!e)
		return EXIT_ERROR;
	ret = record_scan(e, &c.ro, &r);
	/*
	 * Silent on success, as binutils are.  --verbose: one line on stderr
	 * after the work succeeded, what was written, how the layout was
	 * established and whether the table agreed; not in the
	 * `patchsite: FILE: problem` form of an error.
	 */
	if (!ret && c.verbose)
		ret = record_describe(r, what, sizeof(what));
	if (!ret && c.in_place) {
		ret = record_in_place(&c, r, argv[optind], what);
	} else if (!ret) {
		ret = record_output(r, c.fmt, c.to_stdout ? NULL : c.out);
		if (!ret && c.verbose)
			fprintf(stderr, "%s: %s\n", argv[optind], what);
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pin_options po = { .pin_mcount = true };
	struct pin_report rep;
	const char **points = elfio_calloc((size_t)argc + 1, sizeof(*points));
	size_t np = 0;
	int c, ret;

	if (!points) {
		elfio_error(argv[argc - 1], "out of memory for the list of patch points");
		return EXIT_ERROR;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "hvq", opts, NULL)) != -1) {
		switch (c) {
		case OPT_POINT:
			points[np++] = optarg;
			break;
		case OPT_NO_MCOUNT:
			po.pin_mcount = false;
			break;
		case 'v':
		case 'q':
			po.verbose = c == 'v';
			break;
		case OPT_DRY_RUN:
			po.dry_run = true;
			break;
		case 'h':
			help(help_pin);
			elfio_free(points);
			return 0;
		default:
			elfio_free(points);
			return bad_option(argv);
		}
	}
	if (optind >= argc) {
		elfio_free(points);
		return usage_error("%s", "pin takes one or more objects or thin archives");
	}
	po.extra_points = points;
	ret = pin_objects((const char *const *)argv + optind, (size_t)(argc - optind), &po, &rep);
	elfio_free(points);
	if (ret)
		return EXIT_ERROR;
	if (!po.verbose && !po.dry_run)
		return 0;
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct repad_report rep;
	const char *out = NULL;
	bool in_place = false, quiet = true;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:hqv", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			in_place = true;
			break;
		case 'v':
			quiet = false;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			help(help_repad);
			return 0;
		default:
			return bad_option(argv);
		}
	}
	if (optind + 1 != argc)
		return usage_error("%s", "repad takes exactly one object or archive");
	if (!!out == in_place)
		return usage_error("%s", "repad needs -o OUT.o or --in-place");
	if (out && !strcmp(out, "-"))
		return usage_error("%s", "repad writes an object: -o - (standard output) is not one");
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct embed_report rep;
	const char *out = NULL;
	bool verbose = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:hvq", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'v':
		case 'q':
			verbose = c == 'v';
			break;
		case 'h':
			help(help_embed);
			return 0;
		default:
			return bad_option(argv);
		}
	}
	if (optind + 1 != argc || !out)
		return usage_error("%s", "embed takes one IMAGE and -o OUT");
	if (!strcmp(out, "-"))
		return usage_error("%s", "embed writes a program: -o - (standard output) is not one");
	if (embed_image(argv[optind], out, &rep))
		return EXIT_ERROR;
	if (!verbose)
		return 0;
	printf("%s: embedded %zu sites (%zu misaligned left out), trampoline at 0x%" PRIx64
	       "; new PT_LOAD R+X at 0x%" PRIx64 ", offset 0x%" PRIx64 ", %" PRIu64 " bytes\n",
	       out, rep.sites, rep.misaligned, rep.tramp, rep.seg_addr, rep.seg_offset,
	       rep.seg_size);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

/*
 * The capability matrix, from arch/'s table: a header row, then a row per
 * architecture in the table's order, `yes` or `no` under each command.
 * Columns are as wide as their heading (and "yes"), two spaces apart, so
 * the table changes only when an architecture or a capability does.
 */
static int cmd_arches(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, w0 = (int)strlen("arch");

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c != 'h')
			return bad_option(argv);
		help(help_arches);
		return 0;
	}
	if (optind != argc)
		return usage_error("%s", "arches takes no arguments");
	for (size_t i = 0; i < arch_count(); i++)
		if ((int)strlen(arch_at(i)->name) > w0)
			w0 = (int)strlen(arch_at(i)->name);
	for (size_t i = 0; i <= arch_count(); i++) {
		const struct arch_ops *a = i ? arch_at(i - 1) : NULL;

		printf("%-*s", w0, a ? a->name : "arch");
		for (int k = 0; k < ARCH_CAP_COUNT; k++) {
			const char *cell = !a ? arch_cap_name(k) : arch_can(a, k) ? "yes" : "no";
			int w = (int)strlen(arch_cap_name(k));

			/* no trailing blanks: the last column is not padded */
			printf("  %-*s", k + 1 < ARCH_CAP_COUNT ? (w > 3 ? w : 3) : 0, cell);
		}
		putchar('\n');
	}
	if (fflush(stdout)) {
		elfio_error("<stdout>", "write error: %s", strerror(errno));
		return EXIT_ERROR;
	}
	return 0;
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
	int rc;

	cur_cmd = argv[0];
	opterr = 0;		/* bad_option() says it, in one line */
	rc = cmd(argc, argv);
	if (rc == EXIT_ERROR && !usage_said && elfio_errors_reported() == before)
		fprintf(stderr, "patchsite: %s: %s failed and gave no reason (a bug: please "
			"report it)\n", argv[argc - 1], argv[0]);
	return rc;
}

/*
 * `patchsite trace -p PID` attaches to a running program (trace/inject.c);
 * without -p it runs one (trace/cmd.c).  -p is looked for among the
 * options, before `--` or the program's name.
 */
static int trace_wants_pid(int argc, char **argv)
{
	static const char *const valued[] = { "-F", "-N", "-D", "-t", "-o", NULL };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int skip = 0;

		if (!strcmp(a, "--") || a[0] != '-')
			return 0;
		if (!strncmp(a, "-p", 2) || !strncmp(a, "--pid", 5))
			return 1;
		for (int k = 0; valued[k]; k++)
			if (!strcmp(a, valued[k]))
				skip = 1;
		i += skip;
	}
	return 0;
}

int main(int argc, char **argv)
{
	usage_said = false;	/* main() runs many times in fuzz_cli */
	cur_cmd = NULL;
	if (argc < 2)
		return usage_error("%s", "no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		help(NULL);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("patchsite %s\narchitectures:", PATCHSITE_VERSION);
		for (size_t i = 0; i < arch_count(); i++)
			printf("%s %s", i ? "," : "", arch_at(i)->name);
		printf(" ('patchsite arches' lists what each supports)\n");
		return fflush(stdout) ? EXIT_ERROR : 0;
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
	if (!strcmp(argv[1], "arches"))
		return run(cmd_arches, argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace")) {
		if (trace_wants_pid(argc - 1, argv + 1))	/* -p PID: trace/inject.c */
			return run(trace_attach_cmd, argc - 1, argv + 1);
		/* not run(): exit status 2 may be the traced program's own */
		opterr = 0;
		return cmd_trace(argc - 1, argv + 1);
	}
	return usage_error("unknown command '%s'", argv[1]);
}
