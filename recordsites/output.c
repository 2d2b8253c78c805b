// SPDX-License-Identifier: GPL-2.0-only
/*
 * output.c - the table in each form a build needs.
 *
 * Strategy: every form is rendered into memory first (open_memstream, the
 * ELF builder, or for the default list of a linked image, the one a kernel
 * build asks for, a plain buffer with no stream in between) and only then
 * written, to stdout or atomically to a file, so a failure never leaves
 * half a table behind.  That list on stdout is the exception: making it
 * cannot fail, so it is made and written 64 KiB at a time.  Nothing in the
 * output depends on the input's path, the time or the locale.
 */
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recordsites/recordsites.h"

/*
 * Names for the line-oriented outputs (list --symbolize, audit's text): the
 * image may name a symbol or section with spaces, newlines or terminal
 * escapes, which would split a line or forge one.  A byte that is not
 * printable ASCII, a space or a backslash is written as \xNN, so every
 * record stays one line of whitespace-separated fields.  Always terminates
 * buf; a name too long for it is cut at an escape boundary.
 */
static void text_escape(char *buf, size_t len, const char *s, bool keep_space)
{
	size_t n = 0;

	if (!len)
		return;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p > 0x20 || (keep_space && *p == ' ')) && *p < 0x7f && *p != '\\';
		size_t need = plain ? 1 : 4;

		if (n + need >= len)
			break;
		if (plain)
			buf[n++] = (char)*p;
		else
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", *p);
	}
	buf[n] = '\0';
}

void record_text_name(char *buf, size_t len, const char *s)
{
	text_escape(buf, len, s, false);
}

/* The same for free text (a DWARF producer string): spaces stay. */
void record_text_str(char *buf, size_t len, const char *s)
{
	text_escape(buf, len, s, true);
}

void record_symbolize(struct record *r, uint64_t addr, const struct elfio_symbol *f, char *buf,
		      size_t len)
{
	char name[400];

	(void)r;
	if (!f) {
		snprintf(buf, len, "?");
		return;
	}
	record_text_name(name, sizeof(name), f->name);
	if (addr >= f->addr)
		snprintf(buf, len, "%s+0x%" PRIx64, name, addr - f->addr);
	else
		snprintf(buf, len, "%s-0x%" PRIx64, name, f->addr - addr);
}

/* An address for the text outputs: elfio's form, with a section name escaped. */
void record_text_addr(struct record *r, uint64_t addr, char *buf, size_t len)
{
	char raw[256];

	elfio_format_addr(r->e, addr, raw, sizeof(raw));
	record_text_name(buf, len, raw);
}

/* A JSON string (or null), escaped; names come from the image and may hold anything. */
void record_json_string(FILE *o, const char *s)
{
	if (!s) {
		fputs("null", o);
		return;
	}
	fputc('"', o);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(o, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(o, "\\u%04x", *p);
		else
			fputc(*p, o);
	}
	fputc('"', o);
}

static const char *type_name(struct record *r)
{
	switch (elfio_ehdr(r->e)->e_type) {
	case ET_REL: return "REL";
	case ET_EXEC: return "EXEC";
	default: return "DYN";
	}
}

/*
 * The 8 hex digits of x as 8 ASCII bytes, the most significant digit in the
 * least significant byte: stored with htole64, it reads first on any host.
 */
static inline uint64_t hex8(uint32_t x)
{
	uint64_t t = x;

	/* one nibble a byte, the last nibble in the first byte */
	t = ((t & 0xffff0000ull) << 16) | (t & 0xffffull);
	t = ((t & 0x0000ff000000ff00ull) << 8) | (t & 0x000000ff000000ffull);
	t = ((t & 0x00f000f000f000f0ull) << 4) | (t & 0x000f000f000f000full);
	t = __builtin_bswap64(t);	/* the first nibble in the first byte */
	/* '0' + d, and 'a' - '0' - 10 more where d > 9 */
	return t + 0x3030303030303030ull +
	       (((t + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * 0x27;
}

/* "0x" + lowercase hex, no padding, newline, at p; returns the bytes written */
static size_t put_hex_line(char *p, uint64_t v)
{
	char d[16];
	uint64_t hi = htole64(hex8((uint32_t)(v >> 32))), lo = htole64(hex8((uint32_t)v));
	/* digits: 1 for 0, else one per started nibble */
	unsigned int nd = v ? (67 - (unsigned int)__builtin_clzll(v)) / 4 : 1;

	memcpy(d, &hi, 8);
	memcpy(d + 8, &lo, 8);
	p[0] = '0';
	p[1] = 'x';
	memcpy(p + 2, d + 16 - nd, nd);
	p[2 + nd] = '\n';
	return 3 + nd;
}

/*
 * The plain list of a linked image, the default output: one buffer of
 * 19 bytes or less a line, written as it is (no stream in between).
 * NULL with errno set when out of memory.
 */
static char *render_plain_list(const struct record *r, size_t *len)
{
	/*
	 * malloc'd: record_output frees it with free(), beside open_memstream's
	 * buffer (the library's) and elfio_build_table_object's (*buf malloc'd)
	 */
	char *buf = malloc(r->nsites * 19 + 1);

	*len = 0;
	if (!buf)
		return NULL;
	for (size_t i = 0; i < r->nsites; i++)
		*len += put_hex_line(buf + *len, r->sites[i].addr);
	return buf;
}

/*
 * The same list to stdout in pieces of 64 KiB: making it cannot fail, so
 * there is no half-made table to hold back, and a buffer the size of the
 * list would be a page fault for every 4 KiB of it.  0 or -EIO.
 */
static int write_plain_list(const struct record *r, FILE *o)
{
	char buf[65536];
	size_t len = 0;

	for (size_t i = 0; i < r->nsites; i++) {
		len += put_hex_line(buf + len, r->sites[i].addr);
		if (len > sizeof(buf) - 20 || i + 1 == r->nsites) {
			if (fwrite(buf, 1, len, o) != len)
				return -EIO;
			len = 0;
		}
	}
	return 0;
}

static void emit_list(struct record *r, FILE *o, bool sym)
{
	char a[256], f[512];

	/* (the plain list of a linked image never comes here: record_output) */
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		record_text_addr(r, s->addr, a, sizeof(a));
		if (!sym) {
			fprintf(o, "%s\n", a);
			continue;
		}
		record_symbolize(r, s->addr, s->func, f, sizeof(f));
		fprintf(o, "%s %s %s%s\n", a, f, site_flavour_name(s->flavour),
			s->misaligned ? " misaligned" : "");
	}
}

static void emit_json(struct record *r, FILE *o)
{
	char a[256];
	unsigned int seen = 0;

	fprintf(o, "{\"schema\":%d,\"machine\":\"%s\",\"type\":\"%s\",\"flavours\":[",
		RECORD_JSON_SCHEMA, r->arch->name, type_name(r));
	for (size_t i = 0; i < r->nsites; i++)
		seen |= 1u << r->sites[i].flavour;
	for (int f = 0, first = 1; f < FLAVOUR_COUNT; f++) {
		if (seen & (1u << f)) {
			fprintf(o, "%s\"%s\"", first ? "" : ",", site_flavour_name((enum site_flavour)f));
			first = 0;
		}
	}
	fprintf(o, "],\"site_count\":%zu,\"sites\":[", r->nsites);
	for (size_t i = 0; i < r->nsites; i++) {
		const struct site *s = &r->sites[i];
		elfio_format_addr(r->e, s->addr, a, sizeof(a));
		fprintf(o, "%s\n{\"address\":", i ? "," : "");
		record_json_string(o, a);
		if (elfio_is_rel(r->e)) {
			struct elfio_section *sec = elfio_addr_to_sec(r->e, s->addr);
			fputs(",\"section\":", o);
			record_json_string(o, sec ? sec->name : "");
			fprintf(o, ",\"section_offset\":%" PRIu64, sec ? s->addr - sec->addr : 0);
		}
		fputs(",\"function\":", o);
		if (s->func) {
			record_json_string(o, s->func->name);
			fprintf(o, ",\"offset\":%" PRId64, (int64_t)(s->addr - s->func->addr));
		} else {
			fputs("null,\"offset\":null", o);
		}
		fprintf(o, ",\"flavour\":\"%s\",\"misaligned\":%s}", site_flavour_name(s->flavour),
			s->misaligned ? "true" : "false");
	}
	fputs("\n]}\n", o);
}

/* GNU as accepts a bare section name as its symbol when it looks like one. */
static bool plain_name(const char *s)
{
	for (; *s; s++)
		if (!(*s == '.' || *s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static int emit_asm(struct record *r, FILE *o)
{
	char a[64];
	bool rel = elfio_is_rel(r->e);

	fprintf(o, "/* __mcount_loc: %zu patch sites (%s, %s), generated by patchsite */\n",
		r->nsites, r->arch->name, type_name(r));
	if (rel) {
		fputs("/* link this object first: ld -r -o OUT.o THIS.o INPUT.o */\n", o);
		/* declare every referenced section, empty, so its symbol exists */
		bool *used = elfio_calloc(elfio_nsections(r->e), sizeof(*used));
		if (!used)
			return -ENOMEM;
		for (size_t k = 0; k < r->nsites; k++) {
			struct elfio_section *s = elfio_addr_to_sec(r->e, r->sites[k].addr);
			if (s)
				used[s->index] = true;
		}
		for (size_t i = 0; i < elfio_nsections(r->e); i++) {
			struct elfio_section *s = elfio_section(r->e, i);
			if (!used[i])
				continue;
			if (!plain_name(s->name)) {
				elfio_err(r->e, "section name '%s' cannot be written as assembler",
					  s->name);
				elfio_free(used);
				return -EINVAL;
			}
			fprintf(o, "\t.section %s,\"a%s%s\",%%progbits\n", s->name,
				(s->shdr.sh_flags & SHF_EXECINSTR) ? "x" : "",
				(s->shdr.sh_flags & SHF_WRITE) ? "w" : "");
		}
		elfio_free(used);
	}
	fputs("\t.section __mcount_loc,\"a\",%progbits\n\t.balign 8\n", o);
	for (size_t i = 0; i < r->nsites; i++) {
		uint64_t addr = r->sites[i].addr;
		if (rel) {
			struct elfio_section *s = elfio_addr_to_sec(r->e, addr);
			fprintf(o, "\t.quad %s+0x%" PRIx64 "\n", s->name, addr - s->addr);
		} else {
			snprintf(a, sizeof(a), "0x%" PRIx64, addr);
			fprintf(o, "\t.quad %s\n", a);
		}
	}
	return 0;
}

/* Sections that hold sites must have unique names for a reference by name to work. */
static int cmp_sec_name(const void *a, const void *b)
{
	const struct elfio_section *x = *(const struct elfio_section *const *)a;
	const struct elfio_section *y = *(const struct elfio_section *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

static int check_unique_names(struct record *r)
{
	struct elfio_section *prev = NULL;
	size_t nsec = elfio_nsections(r->e), n = 0;
	struct elfio_section **v = elfio_calloc(nsec, sizeof(*v));
	bool *dup = elfio_calloc(nsec, sizeof(*dup));
	int ret = 0;

	/*
	 * Which SHF_ALLOC sections share a name, found by sorting once: an
	 * object with a section per function has tens of thousands of them.
	 */
	if (!v || !dup) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t j = 1; j < nsec; j++) {
		struct elfio_section *t = elfio_section(r->e, j);
		if (t->shdr.sh_flags & SHF_ALLOC)
			v[n++] = t;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_sec_name);
	for (size_t j = 1; j < n; j++)
		if (!strcmp(v[j]->name, v[j - 1]->name))
			dup[v[j]->index] = dup[v[j - 1]->index] = true;
	for (size_t i = 0; i < r->nsites; i++) {
		struct elfio_section *s = elfio_addr_to_sec(r->e, r->sites[i].addr);
		if (s == prev)
			continue;
		prev = s;
		if (s && dup[s->index]) {
			elfio_err(r->e, "two sections are named '%s': a table that refers "
				  "to sections by name would be ambiguous", s->name);
			ret = -EINVAL;
			goto out;
		}
	}
out:
	elfio_free(v);
	elfio_free(dup);
	return ret;
}

static int build_elf(struct record *r, uint8_t **buf, size_t *len)
{
	struct elfio_table_ref *refs = elfio_calloc(r->nsites, sizeof(*refs));
	bool rel = elfio_is_rel(r->e);
	int ret;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsites; i++) {
		uint64_t addr = r->sites[i].addr;
		if (rel) {
			struct elfio_section *s = elfio_addr_to_sec(r->e, addr);
			refs[i].secname = s->name;
			refs[i].sec_flags = s->shdr.sh_flags;
			refs[i].value = addr - s->addr;
		} else {
			refs[i].value = addr;
		}
	}
	ret = elfio_build_table_object(r->arch->machine, elfio_ehdr(r->e)->e_flags,
				       r->arch->abs64_reloc, "__mcount_loc", refs, r->nsites, buf,
				       len);
	elfio_free(refs);
	return ret;
}

int record_output(struct record *r, enum out_format fmt, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	uint8_t *bin = NULL;
	int ret = 0;

	if ((fmt == OUT_ASM || fmt == OUT_ELF) && elfio_is_rel(r->e)) {
		ret = check_unique_names(r);
		if (ret)
			return ret;
	}
	if (fmt == OUT_ELF) {
		ret = build_elf(r, &bin, &len);
		if (ret == -ENOMEM)
			elfio_err(r->e, "out of memory for the table object of %zu sites", r->nsites);
		else if (ret)
			elfio_err(r->e, "cannot build the table object: %s", strerror(-ret));
		if (ret)
			return ret;
		text = (char *)bin;
	} else if (fmt == OUT_LIST && !elfio_is_rel(r->e) && !path) {
		ret = write_plain_list(r, stdout);
		if (fflush(stdout))
			ret = -errno;
		if (ret)
			elfio_error("<stdout>", "write error: %s", strerror(errno));
		return ret;
	} else if (fmt == OUT_LIST && !elfio_is_rel(r->e)) {
		text = render_plain_list(r, &len);
		if (!text) {
			elfio_err(r->e, "out of memory for the list of %zu sites", r->nsites);
			return -ENOMEM;
		}
	} else {
		static const char *const names[] = {
			[OUT_LIST] = "list", [OUT_SYMBOLIZE] = "symbolized list",
			[OUT_JSON] = "JSON", [OUT_ASM] = "assembler",
		};
		const char *name = (size_t)fmt < sizeof(names) / sizeof(names[0]) && names[fmt] ?
				   names[fmt] : "output";
		FILE *o = open_memstream(&text, &len);
		if (!o) {
			elfio_err(r->e, "out of memory for the %s table", name);
			return -ENOMEM;
		}
		switch (fmt) {
		case OUT_LIST:
			emit_list(r, o, false);
			break;
		case OUT_SYMBOLIZE:
			emit_list(r, o, true);
			break;
		case OUT_JSON:
			emit_json(r, o);
			break;
		default:
			ret = emit_asm(r, o);
			break;
		}
		/*
		 * A write that could not grow the buffer sets the error flag; one
		 * that fails in fclose leaves text NULL (glibc frees the buffer).
		 */
		int bad = ferror(o);
		if ((fclose(o) || bad || !text) && !ret)
			ret = -ENOMEM;
		if (ret) {
			if (ret == -ENOMEM)
				elfio_err(r->e, "out of memory for the %s table of %zu sites", name,
					  r->nsites);
			free(text);
			return ret;
		}
	}

	if (path) {
		ret = elfio_write_file_atomic(path, text, len, 0644);
	} else {
		if (len && fwrite(text, 1, len, stdout) != len)
			ret = -EIO;
		if (fflush(stdout))
			ret = -errno;
		if (ret)
			elfio_error("<stdout>", "write error: %s", strerror(errno));
	}
	free(text);
	return ret;
}
