#!/usr/bin/env python3
"""Checks of tests/e2e/realprog-x86.sh on the summaries that
fixtures/realprog-x86/churn.c writes at exit (CHURN_OUT), against oracles
that are not patchsite: objdump's disassembly, nm's symbol table, gprof's
flat profile and the test suite's own output.  Each command prints one line
of figures and exits 0, or prints what differs and exits 1.

  realprog-x86.py sites SUMMARY DISASM
      the runtime's traced functions (`site` lines) are the functions whose
      code calls __fentry__ in `objdump -d` of the program before embed
  realprog-x86.py churn SUMMARY MINROUNDS
      no API call failed, at least MINROUNDS rounds, attachments and churn
      calls counted
  realprog-x86.py reclaim SUMMARY
      (churn-stats.so) the x86_64 patcher reclaimed retired trampoline
      slots and no reclaim round timed out; how many INT3s of rounds the
      program met is printed, not checked (it depends on how the two
      threads are scheduled: none at all on a loaded 2-core machine)
  realprog-x86.py gprof SUMMARY NM GPROF [NAME...]
      the steady ops' count of every function equals gprof's call count
      (`gprof -b -p -z`) of the program before embed, by name.  For the
      NAMEs (called from outside the program's text too, which gprof does
      not count) and for the functions gprof folds GCC clones into (it
      then loses the calls from a clone into its host as self-calls), the
      steady count must be at least gprof's
  realprog-x86.py passes SUMMARY NM OUTPUT NAME
      the steady ops' count of function NAME (one call per test) equals the
      N of `100%: Checks: N, Failed: 0` and the number of `PASS: ` lines in
      OUTPUT (the suite's own report)
  realprog-x86.py same SUMMARY SUMMARY
      the two summaries' steady counts are the same for every function
"""
import bisect
import os
import re
import sys


def summary(path):
    s = {'site': [], 'fn': {}, 'error': []}
    if not os.path.exists(path):
        sys.exit('%s: no summary: the run did not reach its exit' % path)
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == 'site':
            s['site'].append(int(f[1], 16))
        elif f[0] == 'fn':
            s['fn'][int(f[1], 16)] = int(f[2])
        elif f[0] == 'error':
            s['error'].append(line.strip())
        elif f[0] == 'stats':
            s.setdefault('stats', {})[f[1]] = int(f[2])
        else:
            s[f[0]] = int(f[1])
    if 'errors' not in s:
        sys.exit('%s: no `errors` line: the summary is incomplete' % path)
    return s


def symbols(path):
    """address -> [names] of the text symbols of `nm` output"""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[1] in 'tTwW':
            out.setdefault(int(f[0], 16), []).append(f[2])
    return out


def gprof_keeps(name):
    """Whether gprof names a function by this symbol.  gprof drops symbols
    with `$`, and those with a `.` suffix other than digits, `.clone.N` or
    `.constprop.N` (GCC's `.part.N` and `.isra.N` clones): the code of a
    dropped symbol counts as the kept symbol's before it."""
    if '$' in name:
        return False
    rest = re.sub(r'\.(clone|constprop)\.', '.', name)
    return all(p.isdigit() for p in rest.split('.')[1:])


def by_name(s, syms, path):
    """the steady counts summed per function name as gprof names it: the
    last symbol at or before the function's address that gprof keeps; and
    the names into which gprof folds a traced clone"""
    kept = {a: [n for n in names if gprof_keeps(n)] for a, names in syms.items()}
    addrs = sorted(a for a, names in kept.items() if names)
    counts, folded = {}, set()
    for addr, n in s['fn'].items():
        if addr not in syms:
            sys.exit('%s: traced function at %#x has no symbol in nm' % (path, addr))
        i = bisect.bisect_right(addrs, addr) - 1
        if i < 0:
            sys.exit('%s: no symbol gprof keeps at or before %#x' % (path, addr))
        # aliases share one count; gprof names one of them
        for name in kept[addrs[i]]:
            counts[name] = counts.get(name, 0) + n
            if addrs[i] != addr:
                folded.add(name)
    return counts, folded


def cmd_sites(summ, disasm):
    s = summary(summ)
    want, fn = set(), None
    for line in open(disasm):
        m = re.match(r'([0-9a-f]+) <(.*)>:$', line)
        if m:
            fn = int(m.group(1), 16)
        elif re.search(r'\scall\s.*<__fentry__(@[\w.]+)?>', line):
            if fn is None:
                sys.exit('%s: a call to __fentry__ before any function' % disasm)
            want.add(fn)
    got = set(s['site'])
    if s.get('sites') != len(s['site']) or len(got) != len(s['site']):
        sys.exit('ps_count() %s, %d site lines, %d distinct' % (s.get('sites'), len(s['site']), len(got)))
    if got != want:
        print('objdump: %d functions call __fentry__; the runtime traces %d' % (len(want), len(got)))
        for a in sorted(want - got)[:10]:
            print('  not traced: %#x' % a)
        for a in sorted(got - want)[:10]:
            print('  traced, no __fentry__ call: %#x' % a)
        sys.exit(1)
    print('%d traced functions, the %d that call __fentry__ (objdump)' % (len(got), len(want)))


def cmd_churn(summ, minrounds):
    s = summary(summ)
    bad = []
    if s['errors']:
        bad.append('%d API calls failed: %s' % (s['errors'], '; '.join(s['error'])))
    if s.get('rounds', 0) < int(minrounds):
        bad.append('%d rounds, want >= %s' % (s.get('rounds', 0), minrounds))
    if s.get('attachments', 0) <= 0:
        bad.append('no attachment')
    if s.get('churn_calls', 0) <= 0:
        bad.append('the churn ops saw no call')
    print('%d rounds, %d function attachments, %d calls counted while attached, %d errors' %
          (s.get('rounds', 0), s.get('attachments', 0), s.get('churn_calls', 0), s['errors']))
    if bad:
        print('\n'.join(bad))
        sys.exit(1)


def cmd_reclaim(summ):
    st = summary(summ).get('stats')
    if not st:
        sys.exit('%s: no stats (not churn-stats.so?)' % summ)
    emul = st['emul_call'] + st['emul_nop'] + st['reexec']
    print('%d slots, %d reclaims (%d kept a slot a thread was in, %d timed out); '
          '%d INT3s met by the program (%d CALL, %d NOP emulated, %d re-executed); %d batches, %d syncs' %
          (st['slots_total'], st['reclaims'], st['reclaim_kept'], st['reclaim_timeouts'], emul,
           st['emul_call'], st['emul_nop'], st['reexec'], st['batches'], st['syncs']))
    bad = []
    if st['reclaims'] <= 0:
        bad.append('no reclaim: retired slots were never reused')
    if st['reclaim_timeouts']:
        bad.append('a reclaim round timed out')
    if bad:
        print('\n'.join(bad))
        sys.exit(1)


def gprof_calls(path):
    """name -> calls from `gprof -b -p -z` (a blank calls column is 0)"""
    calls, seen = {}, False
    for line in open(path):
        f = line.split()
        if len(f) >= 2 and f[-1] == 'name' and 'calls' in f:
            seen = True
            continue
        if not seen or not f or not re.match(r'[0-9.]+$', f[0]):
            continue
        if len(f) >= 7 and f[3].isdigit():
            n = int(f[3])
        elif len(f) == 4:
            n = 0
        else:
            sys.exit('%s: cannot read %r' % (path, line))
        calls[f[-1]] = calls.get(f[-1], 0) + n
    if not seen:
        sys.exit('%s: no flat profile' % path)
    return calls


def cmd_gprof(summ, nm, gprof, *outside):
    s = summary(summ)
    if not s['fn']:
        sys.exit('%s: no steady counts' % summ)
    syms = symbols(nm)
    ours, folded = by_name(s, syms, summ)
    theirs = gprof_calls(gprof)
    alias = {}
    for names in syms.values():
        for name in names:
            alias[name] = names
    bad, total, n, n_ge = [], 0, 0, 0
    for name in sorted(set(ours) | set(theirs)):
        if name not in ours or name not in theirs:
            # gprof lists every function of the text (untraced ones with no
            # calls), and names one of a traced function's aliases
            if name not in theirs and any(a in theirs for a in alias.get(name, ())):
                continue
            if ours.get(name, 0) or theirs.get(name, 0):
                bad.append('%s: steady %s, gprof %s' % (name, ours.get(name), theirs.get(name)))
            continue
        a, b = ours[name], theirs[name]
        if name in outside or name in folded:
            if a < b or a == 0:
                bad.append('%s (%s): steady %d < gprof %d' %
                           (name, 'also called from outside the text' if name in outside
                            else 'gprof folds clones into it', a, b))
            n_ge += 1
        elif a != b:
            bad.append('%s: steady %d, gprof %d' % (name, a, b))
        else:
            n += 1
        total += a
    print('%d calls; %d functions: steady ops = gprof; %d (%s and %d that gprof folds GCC clones into): steady >= gprof' %
          (total, n, n_ge, ', '.join(outside) or 'none', len(folded)))
    if bad:
        print('%d differ:' % len(bad))
        print('\n'.join(bad[:20]))
        sys.exit(1)


def cmd_passes(summ, nm, output, name):
    s = summary(summ)
    addrs = [a for a, names in symbols(nm).items() if name in names]
    if len(addrs) != 1 or addrs[0] not in s['fn']:
        sys.exit('%s: %d symbols, traced: %s' % (name, len(addrs), addrs and addrs[0] in s['fn']))
    lines = open(output, errors='replace').read().split('\n')
    passes = sum(1 for line in lines if line.startswith('PASS: '))
    checks = [int(m.group(1)) for m in (re.match(r'100%: Checks: (\d+), Failed: 0$', l) for l in lines) if m]
    n = s['fn'][addrs[0]]
    print('%s called %d times (steady ops); the suite ran %s tests and %d passed' %
          (name, n, '/'.join(map(str, checks)) or 'no', passes))
    if checks != [n] or n != passes:
        sys.exit(1)


def cmd_same(a, b):
    s, t = summary(a), summary(b)
    if not s['fn'] or s['fn'] != t['fn']:
        diff = [x for x in sorted(set(s['fn']) | set(t['fn'])) if s['fn'].get(x) != t['fn'].get(x)]
        print('%d of %d functions differ' % (len(diff), len(s['fn'])))
        for x in diff[:10]:
            print('  %#x: %s vs %s' % (x, s['fn'].get(x), t['fn'].get(x)))
        sys.exit(1)
    print('%d functions, %d calls, the same count for every function in both runs' % (len(s['fn']), sum(s['fn'].values())))


CMDS = {'sites': (cmd_sites, 2), 'churn': (cmd_churn, 2), 'reclaim': (cmd_reclaim, 1), 'gprof': (cmd_gprof, 3),
        'passes': (cmd_passes, 4), 'same': (cmd_same, 2)}

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS or len(sys.argv) - 2 < CMDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    fn, nargs = CMDS[sys.argv[1]]
    if sys.argv[1] != 'gprof' and len(sys.argv) - 2 != nargs:
        sys.exit(__doc__)
    fn(*sys.argv[2:])
