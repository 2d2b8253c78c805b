# tests/e2e/debsrc.sh - a Debian source package for an e2e test: fetched
# with `apt-get source` once and cached (sourced after lib.sh and ps_init;
# repad-zlib.sh and realprog-x86.sh use it).
#
#   if debsrc PKG CACHE FILE...; then src=$debsrc_dir ...
#
# sets $debsrc_dir to the unpacked source tree in CACHE: the directory
# CACHE/*/ that holds every FILE (paths relative to the tree), once
# CACHE/.complete says a fetch finished.  $debsrc_how says where it came
# from (`cached NAME in CACHE`, or `apt-get source PKG[=VERSION] -> NAME`).
# When the cache has no such tree, CACHE is emptied and the source fetched:
#   - when no enabled deb-src entry exists (other than ours), one is added
#     in /etc/apt/sources.list.d/patchsite-src.{sources,list}, copied from
#     the machine's own `deb` entries (same URIs, suites, components and
#     Signed-By);
#   - `apt-get update`, then `apt-get source PKG` (the candidate); if that
#     fails (a mirror without the newest upload's files answers 404), each
#     other version `apt-cache showsrc PKG` lists, newest first; all of them
#     failing is a failure.
# On failure it returns 1 and prints why as `# ` lines (apt's own messages).
# The fetch holds a lock (flock) on CACHE's parent directory: scripts that
# `make e2e` runs side by side (realprog-x86.sh and realprog-riscv64.sh share
# the expat cache; repad-zlib.sh runs apt-get update too) fetch one at a time,
# and the one that waited finds the tree the other fetched.
# Needs root or sudo (scripts/install-deps.sh does the same), dpkg-dev.

debsrc_sudo=""
[ "$(id -u)" -eq 0 ] || debsrc_sudo=sudo

debsrc_log() { sed 's/^/# /' "$1" | tail -n "${2:-15}"; }

# An enabled deb-src entry anywhere (other than ours)?  One-line format:
# `deb-src ...`; deb822: a `Types:` field that lists deb-src.
debsrc_have() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in */patchsite-src.*) continue ;; esac
		grep -Eq '^[[:space:]]*deb-src[[:space:]]|^Types:.*(^|[[:space:]])deb-src([[:space:]]|$)' "$f" && return 0
	done
	return 1
}

# Write our deb-src entries, copied from the enabled `deb` entries.
debsrc_add() {
	_ds_s=$ps_dir/debsrc.sources
	_ds_l=$ps_dir/debsrc.list
	: >"$_ds_s"
	: >"$_ds_l"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in */patchsite-src.*) continue ;; esac
		# One stanza per record (blank-line separated): keep those whose
		# Types has `deb`, with Types replaced by deb-src.
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     $0 ~ /(^|\n)Types:[ \t]*([^\n]*[ \t])?deb([ \t]|\n|$)/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$_ds_s"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		case $f in */patchsite-src.*) continue ;; esac
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$_ds_l"
	done
	[ -s "$_ds_s" ] || [ -s "$_ds_l" ] || return 1
	$debsrc_sudo rm -f /etc/apt/sources.list.d/patchsite-src.sources /etc/apt/sources.list.d/patchsite-src.list || return 1
	if [ -s "$_ds_s" ]; then
		$debsrc_sudo cp "$_ds_s" /etc/apt/sources.list.d/patchsite-src.sources || return 1
		$debsrc_sudo chmod 644 /etc/apt/sources.list.d/patchsite-src.sources || return 1
	fi
	if [ -s "$_ds_l" ]; then
		$debsrc_sudo cp "$_ds_l" /etc/apt/sources.list.d/patchsite-src.list || return 1
		$debsrc_sudo chmod 644 /etc/apt/sources.list.d/patchsite-src.list || return 1
	fi
}

debsrc_find() { # CACHE FILE...: the complete tree in CACHE on stdout
	_ds_c=$1
	shift
	[ -f "$_ds_c/.complete" ] || return 1
	for d in "$_ds_c"/*/; do
		[ -d "$d" ] || continue
		_ds_ok=1
		for f in "$@"; do
			[ -e "$d$f" ] || { _ds_ok=0; break; }
		done
		[ "$_ds_ok" -eq 1 ] && { echo "${d%/}"; return 0; }
	done
	return 1
}

debsrc_get() { # PKG[=VERSION] CACHE: one apt-get source attempt into an emptied CACHE
	rm -rf "$2"
	mkdir -p "$2" || return 1
	# apt drops to user _apt for downloads; let it write here.
	chown _apt "$2" 2>/dev/null
	(cd "$2" && apt-get source -qq "$1") >"$ps_dir/debsrc.log" 2>&1
}

debsrc() { # PKG CACHE FILE...
	debsrc_dir=
	debsrc_how=
	_ds_p=$1
	_ds_c=$2
	shift 2
	if debsrc_dir=$(debsrc_find "$_ds_c" "$@"); then
		debsrc_how="cached $(basename "$debsrc_dir") in $_ds_c"
		return 0
	fi
	mkdir -p "$(dirname "$_ds_c")" || return 1
	exec 9<"$(dirname "$_ds_c")" || return 1
	flock 9 || { exec 9<&-; echo "# cannot lock $(dirname "$_ds_c")"; return 1; }
	debsrc_fetch "$_ds_p" "$_ds_c" "$@"
	_ds_rc=$?
	exec 9<&-
	return $_ds_rc
}

debsrc_fetch() { # PKG CACHE FILE...: debsrc's fetch, under its lock
	_ds_p=$1
	_ds_c=$2
	shift 2
	# fetched while this one waited for the lock
	if debsrc_dir=$(debsrc_find "$_ds_c" "$@"); then
		debsrc_how="cached $(basename "$debsrc_dir") in $_ds_c"
		return 0
	fi
	if ! debsrc_have; then
		debsrc_add || { echo "# no deb entry to copy a deb-src entry from"; return 1; }
		echo "# added deb-src entries in /etc/apt/sources.list.d/patchsite-src.*"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$debsrc_sudo apt-get update -qq >"$ps_dir/debsrc.log" 2>&1 ||
		{ echo "# apt-get update failed:"; debsrc_log "$ps_dir/debsrc.log"; return 1; }
	_ds_what=$_ds_p
	if ! debsrc_get "$_ds_p" "$_ds_c"; then
		echo "# apt-get source $_ds_p failed:"
		debsrc_log "$ps_dir/debsrc.log" 5
		_ds_what=
		for v in $(apt-cache showsrc "$_ds_p" 2>/dev/null | sed -n 's/^Version: //p' | sort -u -r -V); do
			if debsrc_get "$_ds_p=$v" "$_ds_c"; then
				_ds_what="$_ds_p=$v"
				break
			fi
			echo "# apt-get source $_ds_p=$v failed:"
			debsrc_log "$ps_dir/debsrc.log" 5
		done
		[ -n "$_ds_what" ] || { echo "# no version of source package $_ds_p could be fetched"; return 1; }
	fi
	touch "$_ds_c/.complete"
	debsrc_dir=$(debsrc_find "$_ds_c" "$@") ||
		{ echo "# apt-get source $_ds_what unpacked no tree with $*"; ls "$_ds_c" | sed 's/^/# /'; return 1; }
	debsrc_how="apt-get source $_ds_what -> $(basename "$debsrc_dir")"
}
