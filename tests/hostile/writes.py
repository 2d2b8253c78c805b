#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Crash-safe writes: prove that a failed or interrupted write leaves the
target as it was and no temporary behind.

    writes.py inject   --patchsite PLAIN --shim failshim.so --image IMG
    writes.py diskfull --patchsite BIN --image IMG [--shim failshim.so --plain PLAIN]
    writes.py kill     --patchsite PLAIN --image IMG [--pad-mb 200] [--kills 20]

inject: every command that writes (record -o FILE in each format, record
    --in-place, record --in-place -o OUT, OUT new or existing; pin, repad -o,
    repad --in-place and embed -o on the --pin-image, --repad-image and
    --embed-image given) is run with
    one of write/pwrite/fsync/rename/copy_file_range/fchmod/close/mkostemp
    failing (tests/hostile/failshim.c, LD_PRELOAD, with the plain build):
    exit 2, one `patchsite: ` line naming the target, the target
    byte-identical (or still absent), no .patchsite.* left, and the shim's
    log proves the failure was injected.  Errors patchsite must ride out
    (EINTR, and EXDEV/ENOSYS from copy_file_range, which fall back to
    read/write) must give exactly the normal result.
diskfull: the same commands on a tmpfs of a few MB that is full (mounted
    here; needs root).  Where no tmpfs can be mounted the shim's ENOSPC
    mode stands in, and the test says so.
kill: `record --in-place` of the image padded with a PAD-MB non-alloc
    section, killed with SIGKILL at random points of its run: the target is
    byte-identical to the original or to the result of an uninterrupted
    run, once `patchsite audit` has rolled back a journal the kill left;
    nothing is left beside it.  (tests/e2e/inplace.sh kills at every write.)

Prints `ok - ...` / `not ok - ...`; exits 1 if anything failed.
"""
import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILED = 0


def ok(name):
    print("ok - %s" % name, flush=True)


def not_ok(name, why=""):
    global FAILED
    FAILED += 1
    print("not ok - %s" % name, flush=True)
    for ln in str(why).splitlines()[:30]:
        print("#   " + ln, flush=True)


def digest(path):
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def temps(d):
    """Temporaries of the atomic writer and journals of in-place edits."""
    return sorted(f for f in os.listdir(d)
                  if f.startswith(".patchsite.") or f.endswith(".patchsite-journal"))


def snapshot(path):
    return digest(path) if os.path.exists(path) else None


# The commands that write: (name, argv, target, source image, writer).
# writer "copy": an edit list applied to a copy of the input
# (copy_file_range, then pwrite of the edits); "whole": the output is
# written whole (pwrite), as record -o, repad (rebuilt by libelf) and embed
# (the image with its new segment) do; "inplace": the image edited where it
# lies (record --in-place: the journal's write, the image's pwrite, fsync
# with --fsync, the journal's unlink).  --pin-image, --repad-image and
# --embed-image add pin, repad and embed on images they accept.
def commands(img, out, a):
    cmds = [
        ("record -o list", ["record", "-o", out, img], out, a.image, "whole"),
        ("record --symbolize -o", ["record", "--symbolize", "-o", out, img], out, a.image, "whole"),
        ("record json -o", ["record", "--format=json", "-o", out, img], out, a.image, "whole"),
        ("record asm -o", ["record", "--format=asm", "-o", out, img], out, a.image, "whole"),
        ("record elf -o", ["record", "--format=elf", "-o", out, img], out, a.image, "whole"),
        ("record --in-place", ["record", "--in-place", img], img, a.image, "inplace"),
        ("record --in-place --fsync", ["record", "--in-place", "--fsync", img], img, a.image,
         "inplace-fsync"),
        ("record --in-place -o", ["record", "--in-place", "-o", out, img], out, a.image, "copy"),
    ]
    if getattr(a, "pin_image", None):
        cmds.append(("pin", ["pin", img], img, a.pin_image, "copy"))
    if getattr(a, "repad_image", None):
        cmds += [("repad -o", ["repad", img, "-o", out], out, a.repad_image, "whole"),
                 ("repad --in-place", ["repad", "--in-place", img], img, a.repad_image, "whole")]
    if getattr(a, "embed_image", None):
        cmds.append(("embed -o", ["embed", img, "-o", out], out, a.embed_image, "whole"))
    return cmds


def check_failed_run(name, p, target, before, dirs, extra_checks=()):
    """Judge a run that must have failed cleanly."""
    err = p.stderr.decode("utf-8", "replace")
    why = []
    if p.returncode != 2:
        why.append("exit status %d, expected 2" % p.returncode)
    lines = err.splitlines()
    if len(lines) != 1 or not err.startswith("patchsite: ") or not err.endswith("\n"):
        why.append("stderr is not one 'patchsite: ' line: %r" % err[:500])
    elif os.path.basename(target) not in err:
        why.append("stderr does not name %s: %r" % (target, err))
    for path, old in before.items():
        if snapshot(path) != old:
            why.append("%s changed (or appeared)" % path)
    for check in extra_checks:
        w = check()
        if w:
            why.append(w)
    for d in dirs:
        t = temps(d)
        if t:
            why.append("temporary left in %s: %s" % (d, t))
            for f in t:
                os.unlink(os.path.join(d, f))
    if why:
        not_ok(name, "\n".join(why))
    else:
        ok(name)


# ------------------------------------------------------------------ inject

def inject(a):
    shim = os.path.abspath(a.shim)
    work = tempfile.mkdtemp(prefix="patchsite-inject.")
    try:
        img = os.path.join(work, "image")
        out = os.path.join(work, "out")
        log = os.path.join(work, "shim.log")

        # reference results, no shim
        ref = {}
        for name, argv, target, src, writer in commands(img, out, a):
            shutil.copyfile(src, img)
            if os.path.exists(out):
                os.unlink(out)
            p = subprocess.run([a.patchsite] + argv, capture_output=True)
            if p.returncode != 0:
                not_ok("inject reference %s" % name, p.stderr.decode())
                continue
            ref[name] = digest(target)

        calls = {
            "whole": ["pwrite", "fchmod", "fsync", "close", "rename", "mkostemp"],
            "copy": ["copy_file_range", "pwrite", "fchmod", "fsync", "close", "rename",
                     "mkostemp"],
            "inplace": ["write", "pwrite", "unlink"],
            "inplace-fsync": ["write", "pwrite", "unlink", "fsync"],
        }
        for name, argv, target, src, kind in commands(img, out, a):
            variants = [(c, {}) for c in calls[kind]]
            if kind.startswith("inplace"):
                # the journal (write), the image (pwrite): torn by a full disk,
                # or the image's bytes landing wrong (the read-back sees it)
                variants += [("write", {"FAILSHIM_ERRNO": "ENOSPC", "FAILSHIM_SHORT": "1"}),
                             ("pwrite", {"FAILSHIM_ERRNO": "ENOSPC", "FAILSHIM_SHORT": "1"}),
                             ("pwrite", {"FAILSHIM_CORRUPT": "1"})]
                if kind == "inplace-fsync":
                    variants += [("fsync", {"FAILSHIM_ERRNO": "EDQUOT", "FAILSHIM_NTH": "2"})]
            else:
                variants += [("pwrite", {"FAILSHIM_ERRNO": "ENOSPC", "FAILSHIM_SHORT": "1"}),
                             ("fsync", {"FAILSHIM_ERRNO": "EDQUOT"}),
                             ("rename", {"FAILSHIM_ERRNO": "EXDEV"})]
            if kind == "copy":
                variants += [("copy_file_range", {"FAILSHIM_ERRNO": "ENOSPC", "FAILSHIM_SHORT": "1"}),
                             ("pwrite", {"FAILSHIM_NTH": "5"}),
                             # the copy falls back to pread/pwrite, whose write fails
                             ("pwrite", {"FAILSHIM_FORCE": "copy_file_range=EXDEV",
                                         "FAILSHIM_ERRNO": "ENOSPC"})]
            for out_exists in ((False, True) if target == out else (False,)):
                for call, env in variants:
                    shutil.copyfile(src, img)
                    if os.path.exists(out):
                        os.unlink(out)
                    if out_exists:
                        with open(out, "wb") as f:
                            f.write(b"the previous output\n")
                    if os.path.exists(log):
                        os.unlink(log)
                    e = dict(os.environ)
                    e.update(env)
                    e.update({"LD_PRELOAD": shim, "FAILSHIM_CALL": call, "FAILSHIM_LOG": log})
                    if kind.startswith("inplace"):
                        e["FAILSHIM_TARGET"] = img
                    label = "inject %s%s: %s fails (%s)" % (
                        name, " over an existing OUT" if out_exists else "", call,
                        ",".join("%s=%s" % kv for kv in sorted(env.items())) or "EIO")
                    before = {img: digest(src)}
                    before[out] = snapshot(out) if target == out else None
                    if target != out:
                        before.pop(out)
                    p = subprocess.run([a.patchsite] + argv, capture_output=True, env=e)

                    def injected():
                        if not os.path.exists(log) and "FAILSHIM_CORRUPT" not in env:
                            return "the shim never injected the failure (no call to %s?)" % call
                        return None

                    def journal_recovered():
                        # a journal that could not be removed: the next command does
                        j = img + ".patchsite-journal"
                        if call != "unlink" or not os.path.exists(j):
                            return None
                        r = subprocess.run([a.patchsite, "audit", img], capture_output=True)
                        if r.returncode not in (0, 1) or os.path.exists(j):
                            return "audit did not remove the journal (exit %d)" % r.returncode
                        if digest(img) != before[img]:
                            return "the image changed when audit rolled the journal back"
                        return None
                    check_failed_run(label, p, target, before, [work],
                                     [injected, journal_recovered])

            # errors to ride out: the result must be the normal one
            rideouts = [("pwrite", {"FAILSHIM_ERRNO": "EINTR"})]
            if kind.startswith("inplace"):
                rideouts += [("write", {"FAILSHIM_ERRNO": "EINTR"})]
            if kind == "copy":
                rideouts += [("copy_file_range", {"FAILSHIM_ERRNO": "EXDEV"}),
                             ("copy_file_range", {"FAILSHIM_ERRNO": "ENOSYS", "FAILSHIM_STICKY": "1"}),
                             ("copy_file_range", {"FAILSHIM_ERRNO": "EINTR"}),
                             ("pwrite", {"FAILSHIM_FORCE": "copy_file_range=EXDEV",
                                         "FAILSHIM_ERRNO": "EINTR", "FAILSHIM_NTH": "3"})]
            for call, env in rideouts:
                shutil.copyfile(src, img)
                if os.path.exists(out):
                    os.unlink(out)
                if os.path.exists(log):
                    os.unlink(log)
                e = dict(os.environ)
                e.update(env)
                e.update({"LD_PRELOAD": shim, "FAILSHIM_CALL": call, "FAILSHIM_LOG": log})
                if kind.startswith("inplace"):
                    e["FAILSHIM_TARGET"] = img
                label = "inject %s: %s gives %s once, the result is unchanged" % (
                    name, call, env["FAILSHIM_ERRNO"])
                p = subprocess.run([a.patchsite] + argv, capture_output=True, env=e)
                why = []
                if p.returncode != 0:
                    why.append("exit %d: %s" % (p.returncode, p.stderr.decode()))
                elif digest(target) != ref.get(name):
                    why.append("the output differs from a run without the error")
                if not os.path.exists(log):
                    why.append("the shim never injected the error")
                if temps(work):
                    why.append("temporary left: %s" % temps(work))
                if why:
                    not_ok(label, "\n".join(why))
                else:
                    ok(label)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------ diskfull

def fill(d, leave):
    """Fill the filesystem of d, then free `leave` bytes."""
    path = os.path.join(d, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for bs in (1 << 16, 4096, 1):
            block = b"\xa5" * bs
            while True:
                try:
                    if os.write(fd, block) <= 0:
                        break
                except OSError:
                    break
    finally:
        os.close(fd)
    size = os.path.getsize(path)
    os.truncate(path, max(0, size - leave))


def diskfull(a):
    mnt = tempfile.mkdtemp(prefix="patchsite-full.")
    biggest = max(os.path.getsize(c[3]) for c in commands("i", "o", a))
    mb = max(4, (3 * biggest >> 20) + 2)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0755" % mb, "tmpfs", mnt],
                       capture_output=True)
    if r.returncode != 0:
        print("# diskfull: cannot mount a tmpfs here (%s); using failshim's ENOSPC mode instead"
              % r.stderr.decode().strip(), flush=True)
        os.rmdir(mnt)
        return diskfull_shim(a)
    print("# diskfull: a %d MiB tmpfs at %s" % (mb, mnt), flush=True)
    try:
        img = os.path.join(mnt, "image")
        out = os.path.join(mnt, "out")
        for name, argv, target, src, kind in commands(img, out, a):
            image_size = os.path.getsize(src)
            for out_exists in ((False, True) if target == out else (False,)):
                for f in os.listdir(mnt):
                    os.unlink(os.path.join(mnt, f))
                shutil.copyfile(src, img)
                if out_exists:
                    with open(out, "wb") as f:
                        f.write(b"the previous output\n")
                # rewritten over the input: room for part of the copy; otherwise
                # (and in place, which needs room for its journal) none at all
                leave = image_size // 2 if target == img and kind in ("copy", "whole") else 0
                fill(mnt, leave)
                before = {img: digest(img)}
                if target == out:
                    before[out] = snapshot(out)
                p = subprocess.run([a.patchsite] + argv, capture_output=True)
                label = "diskfull %s%s (%s free)" % (
                    name, " over an existing OUT" if out_exists else "",
                    "%d KiB" % (leave >> 10) if leave else "nothing")

                def nospace():
                    if "No space left" not in p.stderr.decode("utf-8", "replace"):
                        return "the error is not ENOSPC: %r" % p.stderr.decode()[:300]
                    return None
                check_failed_run(label, p, target, before, [mnt], [nospace])
    finally:
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)


def diskfull_shim(a):
    if not a.shim or not a.plain:
        not_ok("diskfull: no tmpfs and no --shim/--plain to stand in")
        return
    a2 = argparse.Namespace(patchsite=a.plain, shim=a.shim)
    work = tempfile.mkdtemp(prefix="patchsite-enospc.")
    try:
        img = os.path.join(work, "image")
        out = os.path.join(work, "out")
        for name, argv, target, src, kind in commands(img, out, a):
            shutil.copyfile(src, img)
            if os.path.exists(out):
                os.unlink(out)
            call = {"copy": "copy_file_range", "whole": "pwrite"}.get(kind, "write")
            e = dict(os.environ, LD_PRELOAD=os.path.abspath(a2.shim), FAILSHIM_CALL=call,
                     FAILSHIM_ERRNO="ENOSPC", FAILSHIM_SHORT="1")
            before = {img: digest(img)}
            if target == out:
                before[out] = None
            p = subprocess.run([a2.patchsite] + argv, capture_output=True, env=e)
            check_failed_run("diskfull (shim ENOSPC) %s" % name, p, target, before, [work])
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------ kill

def kill(a):
    rng = random.Random(int(os.environ.get("KILL_SEED", "0")) or None)
    work = tempfile.mkdtemp(prefix="patchsite-kill.", dir=a.workdir)
    try:
        pad = os.path.join(work, "pad")
        block = bytes(rng.getrandbits(8) for _ in range(1 << 16)) * 16      # 1 MiB
        with open(pad, "wb") as f:
            for _ in range(a.pad_mb):
                f.write(block)
        orig = os.path.join(work, "orig")
        r = subprocess.run([a.objcopy, "--add-section", ".pad=%s" % pad,
                            "--set-section-flags", ".pad=contents,readonly", a.image, orig],
                           capture_output=True)
        os.unlink(pad)
        if r.returncode != 0:
            not_ok("kill: make a %d MB image with %s" % (a.pad_mb, a.objcopy), r.stderr.decode())
            return
        size = os.path.getsize(orig)
        with open(orig, "rb") as f:
            b_orig = f.read()
        # the uninterrupted result, and how long it takes
        img = os.path.join(work, "image")
        shutil.copyfile(orig, img)
        t0 = time.monotonic()
        p = subprocess.run([a.patchsite, "record", "--in-place", img], capture_output=True)
        dt = time.monotonic() - t0
        if p.returncode != 0:
            not_ok("kill: uninterrupted record --in-place of the %d MB image" % (size >> 20),
                   p.stderr.decode())
            return
        with open(img, "rb") as f:
            b_new = f.read()
        if b_new == b_orig:
            not_ok("kill: the image needs no change, so the test would prove nothing")
            return
        print("# kill: %d MB image, an uninterrupted record --in-place takes %.2f s" %
              (size >> 20, dt), flush=True)
        # Each round the target is a fresh copy of the pristine one: the image is
        # edited where it lies (a hard link would see the edit).
        stats = {"original": 0, "new": 0, "journal": 0}
        deadline = time.monotonic() + a.budget
        for k in range(a.kills):
            if time.monotonic() > deadline:
                not_ok("kill: time budget of %.0f s spent after %d of %d kills" %
                       (a.budget, k, a.kills))
                break
            if os.path.exists(img):
                os.unlink(img)
            shutil.copyfile(orig, img)
            at = rng.uniform(0, dt * 1.1)
            p = subprocess.Popen([a.patchsite, "record", "--in-place", img],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(at)
            p.kill()
            p.wait()
            label = "kill -9 at %.3f s of %.3f s" % (at, dt)
            if p.returncode not in (0, -signal.SIGKILL):
                # killed, or done before the kill: anything else is a failure
                not_ok(label, "record --in-place exit %d (neither 0 nor SIGKILL)" % p.returncode)
                continue
            state = ""
            if os.path.exists(img + ".patchsite-journal"):
                # killed between the journal and its removal: the next command rolls back
                stats["journal"] += 1
                r = subprocess.run([a.patchsite, "audit", img], capture_output=True)
                if r.returncode not in (0, 1):
                    not_ok(label, "audit after the kill: exit %d: %s" %
                           (r.returncode, r.stderr.decode()))
                    continue
                state = "journal rolled back by audit, "
            with open(img, "rb") as f:
                got = f.read()
            left = temps(work)
            if got == b_orig:
                stats["original"] += 1
                state += "original intact"
            elif got == b_new:
                stats["new"] += 1
                state += "complete new image"
            else:
                not_ok(label, "the image is neither the original nor the complete result")
                continue
            if left:
                not_ok(label, "left beside it: %s" % left)
                for f in left:
                    os.unlink(os.path.join(work, f))
                continue
            ok("%s: %s" % (label, state))
        with open(orig, "rb") as f:
            if f.read() != b_orig:
                not_ok("kill: the pristine copy changed")
        print("# kill: %(original)d kills left the original, %(new)d the complete new image; "
              "%(journal)d left a journal that audit rolled back" % stats, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["inject", "diskfull", "kill"])
    ap.add_argument("--patchsite", required=True)
    ap.add_argument("--image", required=True)
    ap.add_argument("--shim")
    ap.add_argument("--pin-image", help="a riscv64 object for pin")
    ap.add_argument("--repad-image", help="an arm64 or riscv64 object with misaligned literals")
    ap.add_argument("--embed-image", help="an arm64 program for embed")
    ap.add_argument("--plain")
    ap.add_argument("--objcopy", default="objcopy")
    ap.add_argument("--pad-mb", type=int, default=200)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--budget", type=float, default=50, help="seconds for the kill loop")
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    {"inject": inject, "diskfull": diskfull, "kill": kill}[a.mode](a)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
