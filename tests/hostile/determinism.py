#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Same input, same bytes: every output form of patchsite, whatever the
environment and wherever the image is.

    determinism.py --patchsite BIN IMAGE...

Each output form (record list, --symbolize, json, asm on stdout and -o,
elf -o, audit text and json, record --in-place -o OUT, record --in-place
on the image itself, pin, repad -o, repad --in-place, embed -o) is
produced in three settings that differ in
everything but the image's bytes: the locale (LC_ALL=C, C.UTF-8, POSIX via
LANG), TZ (UTC, Asia/Kolkata, America/St_Johns), the working directory,
and the image's path (absolute; relative with spaces in the name; a long
path), and the output files' names.  Exit status, stdout and every
written file must be byte-identical across the three (in stdout, the image
and output paths themselves, which the rewriting commands' reports name,
are replaced by @IMG and @OUT first).
Prints `ok - determinism IMAGE FORM` / `not ok - ...`; exit 1 on a failure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

FORMS = [
    ("list", ["record"], None),
    ("symbolize", ["record", "--symbolize"], None),
    ("json", ["record", "--format=json"], None),
    ("asm", ["record", "--format=asm"], None),
    ("asm -o", ["record", "--format=asm", "-o", "@OUT"], "@OUT"),
    ("elf -o", ["record", "--format=elf", "-o", "@OUT"], "@OUT"),
    ("audit", ["audit"], None),
    ("audit json", ["audit", "--format=json"], None),
    ("in-place -o", ["record", "--in-place", "-o", "@OUT"], "@OUT"),
    ("in-place", ["record", "--in-place"], "@IMG"),
    ("pin", ["pin"], "@IMG"),
    ("repad -o", ["repad", "-o", "@OUT"], "@OUT"),
    ("repad --in-place", ["repad", "--in-place"], "@IMG"),
    ("embed -o", ["embed", "-o", "@OUT"], "@OUT"),
]


def settings(work):
    """(env, cwd, image path, output path) for each setting; directories made."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "TZ"))}
    a = os.path.join(work, "a")
    b = os.path.join(work, "b", "deeper")
    c = os.path.join(work, "c")
    d = os.path.join(work, "d" * 60, "e" * 60, "f" * 60)
    for x in (a, b, c, d):
        os.makedirs(x, exist_ok=True)
    return [
        (dict(base, LC_ALL="C", TZ="UTC"), a, os.path.join(a, "image"), os.path.join(a, "out")),
        (dict(base, LC_ALL="C.UTF-8", LANG="C.UTF-8", TZ="Asia/Kolkata"), b,
         os.path.join("..", "..", "c", "another name with spaces.elf"),
         os.path.join("..", "..", "c", "table output.o")),
        (dict(base, LANG="POSIX", TZ="America/St_Johns", LC_NUMERIC="C.UTF-8"), "/",
         os.path.join(d, "vmlinux-copy"), os.path.join(d, "o")),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--patchsite", required=True)
    ap.add_argument("images", nargs="+")
    a = ap.parse_args()
    binary = os.path.abspath(a.patchsite)
    failed = 0
    work = tempfile.mkdtemp(prefix="patchsite-determinism.")
    try:
        for image in a.images:
            name = os.path.relpath(image, os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "fixtures", "out"))
            for form, args, outfile in FORMS:
                results = []
                for env, cwd, img, out in settings(work):
                    absimg = os.path.join(cwd, img)
                    absout = os.path.join(cwd, out)
                    shutil.copyfile(image, absimg)
                    if os.path.exists(absout):
                        os.unlink(absout)
                    argv = [binary] + [img if x == "@IMG" else out if x == "@OUT" else x
                                       for x in args] + [img]
                    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
                    data = None
                    if outfile and p.returncode == 0:
                        with open(absout if outfile == "@OUT" else absimg, "rb") as f:
                            data = f.read()
                    stdout = p.stdout.replace(out.encode(), b"@OUT").replace(img.encode(), b"@IMG")
                    results.append((p.returncode, stdout, data, p.stderr))
                    os.unlink(absimg)
                    if os.path.exists(absout):
                        os.unlink(absout)
                first = results[0]
                why = []
                if first[0] not in (0, 1, 2):
                    # 0, 1 (audit findings) or 2 (refused): anything else is a
                    # crash or a sanitizer's report, never a result
                    why.append("exit %d, not 0, 1 or 2: %s" % (
                        first[0], first[3].decode("utf-8", "replace")[:300]))
                for k, r in enumerate(results[1:], 1):
                    if r[0] != first[0]:
                        why.append("setting %d: exit %d, setting 0: exit %d" % (k, r[0], first[0]))
                    if r[1] != first[1]:
                        why.append("setting %d: stdout differs" % k)
                    if r[2] != first[2]:
                        why.append("setting %d: the written file differs" % k)
                if first[0] not in (0, 1):
                    # an error is fine if the form does not apply (no table to
                    # write in place), but it must be the same everywhere
                    msg = first[3].decode("utf-8", "replace").strip()
                    label = "determinism %s %s (exit %d: %s)" % (name, form, first[0],
                                                                 msg.split(": ", 2)[-1])
                else:
                    label = "determinism %s %s" % (name, form)
                if why:
                    failed += 1
                    print("not ok - %s" % label)
                    for w in why:
                        print("#   " + w)
                else:
                    print("ok - %s" % label)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
