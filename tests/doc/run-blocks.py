#!/usr/bin/env python3
"""tests/doc/run-blocks.py - run the documentation's runnable examples.

Strategy: a fenced block opened by ```sh run in README.md or doc/*.md is a
transcript.  `$ CMD` starts a command, `> MORE` continues it (here-documents,
long pipelines), and every other line until the next `$` is what CMD prints
(stdout and stderr together).  Each block runs, as one bash script, in a
fresh scratch directory where `fixtures`, `build` and `runtime` are links to
the source tree's and the tree's `patchsite` is first on PATH, so a block
reads exactly what a reader in the source tree would type.  A command that
exits with status N != 0 prints `[exit N]` after its output: a block that
shows no such line asserts exit 0.  Parts that vary are written `...`: a
line that is only `...` matches any number of lines (none too), `...`
inside a line matches any text on that line.  A block whose commands are
shown without output and must only succeed shows nothing after them.

usage: run-blocks.py TOP [FILE.md...]   (default: README.md doc/*.md)
Then every relative link [text](path) of the pages must name a file.
Prints `ok - FILE:LINE` / `not ok - FILE:LINE` with the difference, then
`N passed, M failed`; exits 1 when something failed.
"""
import glob, os, re, subprocess, sys, tempfile, shutil

MARK = '@@patchsite-doc-%d@@'


def blocks(path):
    """Yield (line, [(cmd, [expected lines])]) for each runnable block."""
    lines = open(path).read().split('\n')
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```sh run':
            start = i + 1
            cmds = []
            i += 1
            while i < len(lines) and lines[i].strip() != '```':
                l = lines[i]
                if l.startswith('$ '):
                    cmds.append([l[2:], []])
                elif l.startswith('> ') and cmds and not cmds[-1][1]:
                    cmds[-1][0] += '\n' + l[2:]
                elif l == '>' and cmds and not cmds[-1][1]:
                    cmds[-1][0] += '\n'
                elif cmds:
                    cmds[-1][1].append(l)
                elif l.strip():
                    raise SystemExit('%s:%d: output before the first $ command' % (path, i + 1))
                i += 1
            yield start, cmds
        i += 1


def line_match(want, got):
    if '...' not in want:
        return want.rstrip() == got.rstrip()
    rx = '.*'.join(re.escape(p) for p in want.rstrip().split('...'))
    return re.fullmatch(rx, got.rstrip()) is not None


def match(want, got):
    """want may hold `...` lines (any number of lines)."""
    while want and want[-1] == '':
        want = want[:-1]
    while got and got[-1] == '':
        got = got[:-1]
    memo = {}

    def m(i, j):
        if (i, j) in memo:
            return memo[i, j]
        if i == len(want):
            r = j == len(got)
        elif want[i].strip() == '...':
            r = any(m(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and line_match(want[i], got[j]) and m(i + 1, j + 1)
        memo[i, j] = r
        return r
    return m(0, 0)


def run_block(top, cmds):
    d = tempfile.mkdtemp(prefix='doc-block.')
    try:
        for name in ('fixtures', 'build', 'runtime'):
            os.symlink(os.path.join(top, name), os.path.join(d, name))
        script = []
        for n, (cmd, _) in enumerate(cmds):
            script.append("printf '%s\\n'" % (MARK % n))
            script.append('{\n%s\n} 2>&1; __s=$?; [ $__s -eq 0 ] || echo "[exit $__s]"' % cmd)
        env = dict(os.environ, PATH=top + ':' + os.environ['PATH'], LC_ALL='C')
        env.pop('LD_PRELOAD', None)
        p = subprocess.run(['bash', '-c', '\n'.join(script)], cwd=d, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=600)
        out = p.stdout.decode(errors='replace').split('\n')
        parts, cur = {}, None
        for l in out:
            mm = re.fullmatch(r'@@patchsite-doc-(\d+)@@', l)
            if mm:
                cur = int(mm.group(1))
                parts[cur] = []
            elif cur is not None:
                parts[cur].append(l)
        errs = []
        for n, (cmd, want) in enumerate(cmds):
            got = parts.get(n)
            if got is None:
                errs.append('$ %s\n  (never ran)' % cmd)
            elif not match(want, got):
                errs.append('$ %s\n  shown:\n%s\n  printed:\n%s' % (
                    cmd, '\n'.join('    ' + w for w in want),
                    '\n'.join('    ' + g for g in got)))
        return errs
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    top = os.path.abspath(sys.argv[1])
    files = sys.argv[2:] or [os.path.join(top, 'README.md')] + \
        sorted(glob.glob(os.path.join(top, 'doc', '*.md')))
    passed = failed = 0
    for f in files:
        for line, cmds in blocks(f):
            where = '%s:%d' % (os.path.relpath(f, top), line)
            errs = run_block(top, cmds)
            if errs:
                failed += 1
                print('not ok - %s' % where)
                for e in errs:
                    print('# ' + e.replace('\n', '\n# '))
            else:
                passed += 1
                print('ok - %s' % where)
    # every relative link of these pages names a file of the tree
    for f in files:
        text = re.sub(r'```.*?```', '', open(f).read(), flags=re.S)
        bad = [l for l in re.findall(r'\]\(([^)#\s]+)', text)
               if '://' not in l and not l.startswith('mailto:')
               and not os.path.exists(os.path.join(os.path.dirname(f), l))]
        where = os.path.relpath(f, top)
        if bad:
            failed += 1
            print('not ok - %s: links to nothing: %s' % (where, ', '.join(bad)))
        else:
            passed += 1
            print('ok - %s: its links resolve' % where)
    print('%d passed, %d failed' % (passed, failed))
    sys.exit(1 if failed or not passed else 0)


if __name__ == '__main__':
    main()
