# tests/e2e/repadlib.sh - what the repad tests (repad.sh, repad-zlib.sh,
# repad-kernel.sh) share: the CALL_OPS literals counted by literals.py (not
# patchsite), patchsite audit held against that count, eu-elflint.
# Sourced after lib.sh and ps_init; uses $here (tests/e2e) and $PY.
#
# Strategy: each function is a check's command (`check NAME FUNCTION ARG...`):
# it returns 0 or 1 and prints why it failed as `# ` lines, which check
# shows as the failure's detail.
#
#   count_literals IMAGE [--allow-none]   sets $nmis (misaligned) and $nlit
#                                          (all literals), as literals.py counts
#   has_misaligned IMAGE                  some literal is misaligned
#   none_misaligned IMAGE                 there are literals, none misaligned
#   none_misaligned ORIG PADDED           PADDED has as many literals as ORIG,
#                                          none misaligned
#   audit_agrees IMAGE                    patchsite audit: exit 1 and one
#                                          `misaligned:` line per misaligned
#                                          literal, or exit 0 and none
#   elflint OBJ                           eu-elflint --gnu-ld, on a file that exists
#   ps_ok [OPTIONS] STATUS OUT -- ARG...  ps_run; on a wrong status its message
#                                          as `# ` lines

# Misaligned CALL_OPS literals of IMAGE as literals.py (not patchsite) counts
# them: sets $nmis and $nlit (all literals); fails, with literals.py's
# message, when it cannot count.
count_literals() { # IMAGE [--allow-none]
	nmis='?' nlit='?'
	_rl_c=$("${PY:-python3}" "$here/literals.py" counts ${2:-} "$1") || return 1
	set -- $_rl_c
	[ $# -eq 2 ] || { echo "# literals.py printed '$_rl_c'"; return 1; }
	nmis=$1 nlit=$2
}

has_misaligned() { # IMAGE: some literal is misaligned
	count_literals "$1" && [ "$nmis" -gt 0 ] ||
		{ echo "# $1: literals.py: $nmis of $nlit literals misaligned, want > 0"; return 1; }
}

none_misaligned() { # IMAGE, or ORIG PADDED
	if [ $# -eq 2 ]; then
		_rl_n=
		count_literals "$1" && _rl_n=$nlit && count_literals "$2" && [ "$nlit" -gt 0 ] &&
			[ "$nmis" -eq 0 ] && [ "$nlit" -eq "$_rl_n" ] ||
			{ echo "# $2: literals.py: $nmis of $nlit literals misaligned, want 0 of ${_rl_n:-?}"; return 1; }
	else
		count_literals "$1" && [ "$nlit" -gt 0 ] && [ "$nmis" -eq 0 ] ||
			{ echo "# $1: literals.py: $nmis of $nlit literals misaligned, want 0 of > 0"; return 1; }
	fi
}

# patchsite audit IMAGE agrees with literals.py: exit 1 and as many
# `misaligned:` lines as literals.py counts, or exit 0 and none when it counts
# none.  Any other status (2: audit could not read IMAGE) fails, and so does
# exit 1 for findings of another kind: the repad tests' objects and programs
# have none.
audit_agrees() { # IMAGE
	count_literals "$1" || return 1
	_rl_exp=0
	[ "$nmis" -gt 0 ] && _rl_exp=1
	if ! ps_run -e "$ps_dir/audit.err" "$_rl_exp" "$ps_dir/audit.out" -- audit "$1"; then
		sed 's/^/# /' "$ps_msg"
		echo "# literals.py: $nmis of $nlit misaligned"
		return 1
	fi
	_rl_got=$(grep -c '^misaligned:' "$ps_dir/audit.out")
	[ "$_rl_got" -eq "$nmis" ] || {
		echo "# patchsite audit $1: exit $ps_rc (want $_rl_exp), $_rl_got misaligned; literals.py: $nmis of $nlit"
		grep -v '^misaligned:' "$ps_dir/audit.out" | sed 's/^/# /' | tail -n 5
		sed -n '1,3s/^/# /p' "$ps_dir/audit.err"
		return 1
	}
}

elflint() { # OBJ: eu-elflint --gnu-ld, on a file that exists
	[ -s "$1" ] || { echo "# $1: missing"; return 1; }
	eu-elflint --gnu-ld --quiet "$1"
}

# ps_ok [OPTIONS] STATUS OUT -- ARG...: ps_run, and on a wrong status its
# message as `# ` lines (the detail of the check that called it)
ps_ok() { ps_run "$@" || { sed 's/^/# /' "$ps_msg"; return 1; }; }
