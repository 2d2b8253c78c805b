#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write an x86-64 assembler source with N tiny -mfentry functions.

    mkfuncs.py N OUT.s
    as --64 -o OUT.o OUT.s && ld -static -e _start -o OUT OUT.o

Each function f<i> is `call __fentry__; ret` (6 bytes, a sized STT_FUNC),
so `patchsite record OUT` must find exactly N sites: _start and __fentry__
are plain `ret`.  __fentry__ is local to the file, so the assembler
resolves the calls itself and the link has no relocations to apply.
"""
import sys


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: mkfuncs.py N OUT.s")
    n = int(sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write("\t.text\n"
                "\t.globl _start\n\t.type _start,@function\n_start:\n\tret\n"
                "\t.size _start,.-_start\n"
                "\t.type __fentry__,@function\n__fentry__:\n\tret\n"
                "\t.size __fentry__,.-__fentry__\n")
        chunk = []
        for i in range(n):
            # a constant .size assembles twice as fast as .-f<i>
            chunk.append("\t.type f%d,@function\n\t.size f%d,6\nf%d:\tcall __fentry__\n\tret\n"
                         % (i, i, i))
            if len(chunk) == 4096:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
        f.write('\t.section .note.GNU-stack,"",@progbits\n')


if __name__ == "__main__":
    main()
