#!/usr/bin/env python3
"""Every patchsite run in tests/ has its exit status asserted before its
output is read (issue 19).  A grep-level reading of the test scripts; run
by `make e2e`, it fails with one line per finding, `FILE:LINE: what`.

    lint-tests.py [FILE...]        (default: every test script of tests/)

Its last line counts the files as checks: `N passed, M failed` (a file
passes when it has no finding), as the test scripts end.

Shell (tests/e2e/*.sh, tests/kernel/*.sh; heredoc bodies, which are other
programs' text, and comments are not read):
  - patchsite is run only through ps_run/ps_check (tests/e2e/lib.sh):
    `$PATCHSITE ARG...` (also $PATCHSITE_PLAIN, '$PATCHSITE' inside sh -c
    strings) or `.../patchsite COMMAND` elsewhere is a finding;
  - whatever runs patchsite, its status is used: in an if/while/!, before
    && or ||, or read ($ps_rc, $?) by the next statement; `|| :` and
    `|| true` swallow it, a pipe hides it (`... | grep -q` has grep's
    status), a command substitution loses it;
  - ps_run's STATUS is never `*`;
  - the helpers lib.sh no longer has are not called (`notok`: `not_ok`;
    `run`, `then_check`: `ps_check`, then `check`), and no script defines
    a `run` of its own (a program under qemu is `qrun`).
Python (tests/e2e/*.py, tests/hostile/*.py, tests/compare_outputs.py,
tests/kernel/*.py): a subprocess call whose command is not a literal
program name (so may be patchsite) passes check=True, or its result's
returncode is read in the same function, or the result is handed to a
function that judges it.
"""
import ast
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

VAR = r"\$\{?PATCHSITE(?:_PLAIN)?\}?"
# a patchsite variable used as a command: followed by a command, an option
# or "$@" (not: --patchsite "$PATCHSITE" --jobs, which hands it to a helper)
RAW = re.compile(r"(?<!--patchsite )(?<!--patchsite \")(?<!--plain )(?<!--plain \")[\"']?" + VAR +
                 r"[\"']?\s+\\?[\"']?(?:record|audit|repad|pin|embed|arches|trace|help|--?[a-zA-Z]|\\?\$@)")
LITERAL = re.compile(r"(?:^|[\s;&|(`'\"])(?:\.{0,2}/)?[\w./-]*/patchsite[\"']?\s+(?:record|audit|repad|pin|embed|trace)\b")
MENTION = re.compile(r"[\"']?" + VAR)
RUNNER = re.compile(r"\bps_run\b")
# what lib.sh had before one spelling and one way to run patchsite
REMOVED = re.compile(r"(?:^|[;&|(!{]|\b(?:then|do|else|if|elif|while|until))\s*(notok|then_check|run)(?=\s|$)")
RUN_DEF = re.compile(r"(?:^|[;&|{]|\s)(run|notok|then_check)\s*\(\)")
REMOVED_USE = {"notok": "not_ok", "then_check": "check after ps_check", "run": "ps_check (a program under qemu: qrun)"}


def command_position(before):
    """Is what follows `before` a command (after env assignments, timeout,
    env, exec...)?"""
    b = before
    while True:
        m = re.search(r"(^|\s)(\w+=(?:\"[^\"]*\"|'[^']*'|[^\s\"'()`]*)|\$\{\w+:[-+][^}]*\}|timeout\s+\S+|env|nohup|exec|time|command)\s+$", b)
        if not m:
            break
        b = b[:m.start(2)]
    return re.search(r"(^|[;&|(!{`]|\$\(|\b(then|do|else|if|elif|while|until)|\bsh -c\s+\")\s*$", b)
HEREDOC = re.compile(r"<<-?\s*([\"']?)(\w+)\1")


def statements(lines):
    """(first line number, text) of each statement: continuation lines
    joined, heredoc bodies and comment lines left out."""
    out = []
    i = 0
    cur, start = None, 0
    while i < len(lines):
        line = lines[i]
        if cur is None:
            if line.strip().startswith("#"):
                i += 1
                continue
            cur, start = line, i + 1
        else:
            cur += " " + line.strip()
        tags = [m.group(2) for m in HEREDOC.finditer(line)]
        i += 1
        if tags:
            for tag in tags:
                while i < len(lines) and lines[i].strip() != tag:
                    i += 1
                i += 1
        if cur.rstrip().endswith("\\"):
            cur = cur.rstrip()[:-1]
            continue
        if re.search(r"(&&|\|\||\|)\s*$", cur):
            continue            # a list or pipeline goes on on the next line
        out.append((start, cur))
        cur = None
    if cur is not None:
        out.append((start, cur))
    return out


def status_use(stmts, k, pos):
    """How the status of the command at `pos` in statement k is used: None
    when it is, else what is wrong."""
    text = stmts[k][1]
    before, after = text[:pos], text[pos:]
    if re.search(r"\$\((?:[^()]|\([^()]*\))*$", before) and not re.match(r"\s*\w+=\$\(", text):
        return "its status is lost in a command substitution"
    # inside `sh -c "..."`: the string's last command gives sh its status
    if re.search(r"\bsh -c\s+\"[^\"]*$", before):
        inner = after.split('"', 1)[0]
        if not re.search(r"(?<![|&])[|;](?![|])|&(?!&)", re.sub(r"\|\||&&", "", inner)) and \
                not re.search(r"&&|\|\|", inner):
            return None
    # the rest of this simple command: up to ; & && || | or the end
    m = re.search(r"(\|\||&&|\||;|&(?!&)|$)", re.sub(r"\"[^\"]*\"|'[^']*'", lambda q: "_" * len(q.group(0)), after))
    sep = m.group(1)
    if sep == "|":
        return "a pipe hides its status (the pipeline's is the last command's)"
    if sep == "||" and re.match(r"\|\|\s*(:|true)(\s|;|$)", after[m.start():]):
        return "|| : swallows its status"
    if sep in ("&&", "||"):
        return None
    if sep == "&":
        return None             # in the background: `wait $!` reports it
    lead = before.strip()
    if re.search(r"(^|;|\s)(if|elif|while|until|!)\s*$", lead) or re.search(r"(&&|\|\|)\s*$", lead) \
            or re.search(r"(^|\s)(if|elif|while|until|!)\s", lead):
        return None
    if k + 1 < len(stmts) and re.search(r"\$\?|\$\{?ps_rc\b", stmts[k + 1][1]):
        return None
    # the last statement of a function: its status is the function's
    if k + 1 < len(stmts) and re.match(r"\s*}\s*$", stmts[k + 1][1]):
        return None
    if re.search(r"\}\s*$", after.strip()) and "{" in before:
        return None
    return "its status is not checked"


def lint_shell(path, rel):
    found = []
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    stmts = statements(lines)
    for k, (n, text) in enumerate(stmts):
        starts = set()
        for m in RAW.finditer(text):
            if re.search(r"\s--?[A-Za-z][\w-]*\s+$", text[:m.start()]):
                continue        # the value of another program's option (addr2line -e)
            starts.add(m.start())
        for m in MENTION.finditer(text):
            if command_position(text[:m.start()]) and not any(abs(m.start() - x) <= 1 for x in starts):
                starts.add(m.start())
        for pos in sorted(starts):
            why = status_use(stmts, k, pos)
            found.append("%s:%d: runs patchsite without ps_run%s" %
                         (rel, n, "; " + why if why else ""))
        bare = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'", lambda q: "_" * len(q.group(0)), text)
        for m in REMOVED.finditer(bare):
            found.append("%s:%d: %s is gone from lib.sh: use %s" % (rel, n, m.group(1), REMOVED_USE[m.group(1)]))
        for m in RUN_DEF.finditer(bare):
            found.append("%s:%d: defines %s(): a name lib.sh used to have (use another)" % (rel, n, m.group(1)))
        for m in LITERAL.finditer(text):
            found.append("%s:%d: runs a patchsite binary by path without ps_run" % (rel, n))
        for m in RUNNER.finditer(text):
            if re.match(r"\s*\(\)", text[m.end():]) or text[:m.start()].rstrip().endswith("ps_check"):
                continue
            if re.search(r"(?:^|\s)'?\*'?\s+\S+\s+--(\s|$)", text[m.end():]):
                found.append("%s:%d: ps_run with STATUS '*' checks nothing" % (rel, n))
            why = status_use(stmts, k, m.start())
            if why:
                found.append("%s:%d: ps_run: %s" % (rel, n, why))
    return found


CALLS = {"run", "Popen", "call", "check_output", "check_call"}


def lint_python(path, rel):
    found = []
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def scope(node):
        while node in parents and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node = parents[node]
        return node

    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in CALLS and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "subprocess"):
            continue
        if node.func.attr in ("check_output", "check_call"):
            continue
        if any(k.arg == "check" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in node.keywords):
            continue
        argv = node.args[0] if node.args else None
        if isinstance(argv, ast.List) and argv.elts and isinstance(argv.elts[0], ast.Constant):
            continue            # a literal program (zstd, mount): not patchsite
        parent = parents.get(node)
        name = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and \
                isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
        if name is None:
            found.append("%s:%d: subprocess.%s: its result (and status) is not kept" %
                         (rel, node.lineno, node.func.attr))
            continue
        used = False
        for n in ast.walk(scope(node)):
            if isinstance(n, ast.Attribute) and n.attr == "returncode" and \
                    isinstance(n.value, ast.Name) and n.value.id == name:
                used = True
            if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == name
                                               for a in n.args):
                used = True     # handed to a function that judges it
        if not used:
            found.append("%s:%d: subprocess.%s: %s.returncode is never read" %
                         (rel, node.lineno, node.func.attr, name))
    return found


def default_files():
    pats = ["tests/e2e/*.sh", "tests/kernel/*.sh", "tests/e2e/*.py", "tests/hostile/*.py",
            "tests/compare_outputs.py", "tests/kernel/*.py"]
    files = []
    for p in pats:
        files += sorted(glob.glob(os.path.join(ROOT, p)))
    # the helper itself runs "$_ps_bin" "$@": it is the one place allowed to
    return [f for f in files if os.path.basename(f) not in ("lib.sh", "lint-tests.py")
            or os.path.dirname(f) != HERE]


def main():
    files = sys.argv[1:] or default_files()
    found = []
    bad = 0
    for f in files:
        rel = os.path.relpath(f, ROOT) if f.startswith(ROOT) else f
        if f.endswith(".py"):
            these = lint_python(f, rel)
        else:
            these = lint_shell(f, rel)
        bad += 1 if these else 0
        found += these
    for line in found:
        print(line)
    print("lint-tests: %d files, %d findings" % (len(files), len(found)))
    print("%d passed, %d failed" % (len(files) - bad, bad))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
