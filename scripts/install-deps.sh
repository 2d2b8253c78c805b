#!/bin/sh
# Install what patchsite needs to build and test, on Debian.  Does nothing
# when everything is already there; needs root (or sudo) otherwise.
set -e
pkgs="make gcc pkg-config libelf-dev libdw-dev zlib1g-dev liblzma-dev libzstd-dev liblz4-dev libbz2-dev liblzo2-dev check
      elfutils python3 gzip xz-utils zstd bzip2 lzop clang libclang-rt-14-dev time
      dpkg-dev llvm-14 autoconf automake libtool g++ uftrace strace
      debhelper fakeroot lintian git man-db groff-base curl"
# each architecture's cross compiler, binutils and runner: fixtures/arches.mk
here=$(dirname "$0")
pkgs="$pkgs $(sed -n 's/^PKGS_[A-Za-z0-9_]*[[:space:]]*:=[[:space:]]*//p' "$here/../fixtures/arches.mk")"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
