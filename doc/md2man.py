#!/usr/bin/env python3
"""doc/md2man.py - make a man page from a doc/ page.

Strategy: the pages are written in a small, regular subset of Markdown, so
a converter of our own (no pandoc at build time) turns it into man(7):
`# name(N)` is the title, `## X` a section (.SH), `### X` and deeper a
subsection (.SS), fenced and indented blocks literal (.nf), `- ` items
tagged paragraphs, tables literal lines; `code` is bold, **x** bold,
[text](link) its text.  The output depends on the page alone (no date), so
the committed pages can be checked against a fresh conversion.

usage: md2man.py PAGE.md VERSION > PAGE.N
"""
import re
import sys


def esc(s):
    s = s.replace('\\', '\\e')
    return s


def breakable(code):
    """Let a long code word break after , / _ ( (\\: is an invisible break point)."""
    if len(code) < 30:
        return code
    return re.sub(r'([,/(_])', r'\1\\:', code)


def inline(s):
    s = esc(s)
    s = re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', s)
    s = re.sub(r'\*\*([^*]+)\*\*', r'\\fB\1\\fR', s)
    s = re.sub(r'`+([^`]+)`+', lambda m: '\\fB' + breakable(m.group(1)) + '\\fR', s)
    s = s.replace('-', '\\-')
    if s.startswith('.') or s.startswith("'"):
        s = '\\&' + s
    return s


def literal(s):
    s = esc(s).replace('-', '\\-')
    if s.startswith('.') or s.startswith("'"):
        s = '\\&' + s
    return s


def main():
    src, version = sys.argv[1], sys.argv[2]
    lines = open(src).read().split('\n')
    m = re.match(r'# (\S+)\((\d)\)', lines[0])
    if not m:
        sys.exit('%s: the first line must be "# name(N)"' % src)
    name, sec = m.group(1), m.group(2)
    out = ['.\\" Made by doc/md2man.py from %s: edit that page, then make man.' % src.split('/')[-1],
           '.TH "%s" "%s" "" "patchsite %s" "patchsite"' % (name.upper(), sec, version),
           '.ad l', '.nh']
    i, para = 1, False
    while i < len(lines):
        l = lines[i]
        if l.startswith('```'):
            i += 1
            out.append('.PP\n.RS 4\n.nf')
            while i < len(lines) and not lines[i].startswith('```'):
                t = lines[i]
                if t.startswith('$ ') or t.startswith('> '):
                    t = t[2:] if t.startswith('> ') else t
                out.append(literal(t))
                i += 1
            out.append('.fi\n.RE')
            para = False
        elif l.startswith('    ') and not para:
            out.append('.PP\n.RS 4\n.nf')
            while i < len(lines) and (lines[i].startswith('    ') or lines[i] == ''):
                if lines[i] == '' and not (i + 1 < len(lines) and lines[i + 1].startswith('    ')):
                    break
                out.append(literal(lines[i][4:]))
                i += 1
            out.append('.fi\n.RE')
            continue
        elif re.match(r'#{2} ', l):
            out.append('.SH %s' % l[3:].upper().replace('"', ''))
            para = False
        elif re.match(r'#{3,} ', l):
            out.append('.SS "%s"' % re.sub(r'`', '', l.lstrip('#').strip()).replace('"', ''))
            para = False
        elif l.startswith('|'):
            out.append('.PP\n.nf')
            while i < len(lines) and lines[i].startswith('|'):
                if not re.match(r'\|\s*-', lines[i]):
                    cells = [c.strip() for c in lines[i].strip('|').split('|')]
                    out.append(literal(re.sub(r'`', '', '  '.join(cells))))
                i += 1
            out.append('.fi')
            para = False
            continue
        elif re.match(r'\s*[-*] ', l) or re.match(r'\s*\d+\. ', l):
            item = re.sub(r'^\s*([-*]|\d+\.) ', '', l)
            mm = re.match(r'(`[^`]+`(?:, `[^`]+`)*):\s*(.*)', item)
            if mm and not l.startswith(' ') and re.fullmatch(r'`[^` ]+`', mm.group(1)):
                out.append('.TP\n.B ' + literal(mm.group(1)[1:-1]))
                out.append(inline(mm.group(2)))
            elif mm and not l.startswith(' '):
                out.append('.TP\n' + inline(mm.group(1)))
                out.append(inline(mm.group(2)))
            else:
                out.append('.IP \\(bu 2')
                out.append(inline(item))
            para = True
        elif l.strip() == '':
            para = False
        else:
            if not para:
                out.append('.PP')
                para = True
            out.append(inline(l.strip()))
        i += 1
    print('\n'.join(out))


if __name__ == '__main__':
    main()
