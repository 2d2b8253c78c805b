#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check patchsite's JSON against its documentation, field by field.

The man page's JSON OUTPUT section lists, under one .SS heading per kind of
object, each field as `.TP` then `.B name`.  This runs patchsite (record and
audit on one image, audit on several) and checks that every object of each
kind has exactly the documented fields (those the document marks "Objects
only" may be absent), and schema 1.  Exit 0, or 1 naming each difference.

  json-schema.py PATCHSITE MANPAGE EXEC-IMAGE OBJECT
"""
import json
import re
import subprocess
import sys


def documented(man):
    text = open(man).read()
    sec = text.split(".SH JSON OUTPUT", 1)[1].split("\n.SH ", 1)[0]
    kinds = {}
    for part in re.split(r"^\.SS ", sec, flags=re.M)[1:]:
        name = part.split("\n", 1)[0].strip('"').split(" ")[0]
        fields = re.findall(r"^\.TP\n\.B (\S+)\n(.*)$", part, flags=re.M)
        kinds[name] = {f: ("only" in why) for f, why in fields}
    return kinds


def run(args, want):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode not in want:
        sys.exit("%s: exit %d, want %s: %s" % (" ".join(args), p.returncode, want,
                                                p.stderr.decode()))
    return json.loads(p.stdout)


def check(kind, obj, docs, errors, where):
    doc = docs[kind]
    have, need = set(obj), {f for f, opt in doc.items() if not opt}
    for f in sorted(have - set(doc)):
        errors.append("%s: %s has field '%s' that the man page does not document" % (where, kind, f))
    for f in sorted(need - have):
        errors.append("%s: %s lacks documented field '%s'" % (where, kind, f))
    if "schema" in doc and obj.get("schema") != 1:
        errors.append("%s: %s schema is %r, not 1" % (where, kind, obj.get("schema")))


def main():
    ps, man, exe, obj = sys.argv[1:5]
    docs = documented(man)
    for k in ("record", "site", "audit", "table", "finding", "batch", "image"):
        if k not in docs:
            sys.exit("the man page documents no '%s' object" % k)
    errors = []
    for img in (exe, obj):
        r = run([ps, "record", "--format=json", img], (0,))
        check("record", r, docs, errors, img)
        if not r["sites"]:
            errors.append("%s: no sites to check" % img)
        for s in r["sites"]:
            check("site", s, docs, errors, img)
        a = run([ps, "audit", "--format=json", img], (0, 1))
        check("audit", a, docs, errors, img)
        for t in a["tables"]:
            check("table", t, docs, errors, img)
        for f in a["findings"]:
            check("finding", f, docs, errors, img)
        if img == exe and not a["findings"]:
            errors.append("%s: no findings to check (the image has them on purpose)" % img)
    b = run([ps, "audit", "--format=json", exe, obj], (0, 1))
    check("batch", b, docs, errors, "batch")
    for i in b["images"]:
        check("image", i, docs, errors, "batch")
        check("audit", i["audit"], docs, errors, "batch " + i["path"])
    for e in errors:
        print(e)
    sys.exit(1 if errors else 0)


main()
