#!/bin/sh
# End-to-end test of the x86_64 runtime (issue 26) on a real server none of
# us wrote: Debian's nginx, built from its source package with -pg
# -mfentry, embedded, serving files under load from curl while a preloaded
# tracer attaches and detaches ops to every function in rounds, in the
# master and in every worker it forks, through reloads that fork new
# workers.
#
#   PATCHSITE=/path/to/patchsite sh tests/e2e/realserver.sh  (as root, or with sudo)
#   (KEEP=1: the work directory is kept, its path printed)
#
# Strategy: nginx is the classic shape issue 26 is about.  Its master
# blocks a set of signals (sigprocmask) and waits in sigsuspend; it forks
# its workers at start and on every SIGHUP; each worker runs an event loop
# and, built --with-threads and configured `aio threads`, a thread pool
# whose threads block every signal (pthread_sigmask of a full set, SIGTRAP
# included) and read the files the worker sends: traced nginx functions run
# on threads that cannot take the runtime's SIGTRAP.  It builds in a couple
# of minutes on 2 cores with a minimal configure (no rewrite, gzip or PCRE:
# none of them is needed to serve files), and curl, in Debian, is the
# client.
#
# The tracer is fixtures/realserver/forkchurn.so (churn.c of
# fixtures/realprog-x86, which a pthread_atfork handler restarts in every
# forked child): CHURN_STEADY=1 attaches a counting ops to every traced
# function before main (inherited by the workers); CHURN_ROUNDS=1 runs a
# thread in the master and one in each worker that attach and detach other
# ops on every function in rounds until exit.  Each process writes its
# summary at exit (the master CHURN_OUT, a worker CHURN_OUT.PID).
#
# The ready tracer (runtime/tracer, libpatchsite-trace.so, counts only) is
# the other way in: preloaded with PATCHSITE_TRACE_CTL, a controller
# writes `attach *` and `detach` to its FIFO in rounds while the load runs
# and the master forks (the FIFO reaches the master: a worker has no
# control thread).
#
# One run per program (the unembedded nginx, the embedded one with no
# tracer, the embedded one under the ready tracer and its FIFO, the
# embedded one under forkchurn.so), each:
#   start nginx (master_process on, daemon off, 2 workers, its files in a
#   private prefix), wait until it answers; two curl clients in parallel,
#   each ROUNDS invocations fetching every file of the docroot once (20
#   files, 1 byte to 300 KiB, random bytes), one SIGHUP (reload: the master
#   forks two new workers while the load runs), then SIGQUIT (graceful
#   stop).  Checks, against oracles that are not patchsite:
#   - no hang: every step has a timeout; the master exits 0 on SIGQUIT
#   - every response: HTTP 200 and the body byte for byte the docroot file
#     (cmp), for every request the clients made
#   - the server counted what the client did: its access log has one line
#     per request, each `200`
#   - no crash: nginx's error log has no [alert], [crit] or [emerg] line
#     (the master logs a worker that died on a signal as [alert]), no
#     core file
#   for the run under the ready tracer:
#   - it answered every command the controller wrote (`ctl: attached N
#     functions`, `ctl: detached N functions` on stderr, which nginx
#     sends to its error log: one of each per round)
#   and, for the run under forkchurn.so:
#   - every process wrote its summary (a process killed by a signal writes
#     none), no API call failed but for x86_64's documented refusal
#     (-EDEADLK: a thread blocks SIGTRAP, nothing changed; noted), each ran
#     rounds (>= 1: the workers live
#     only as long as the load)
#   - counts exact: the steady ops' calls of ngx_http_log_handler (the
#     access log's handler: once per request), summed over the workers,
#     equal the requests the clients made; as many of
#     ngx_http_create_request
#
# Source: `apt-get source nginx` once (tests/e2e/debsrc.sh), cached in
# build/nginx-src (NGINX_CACHE); the built nginx in build/nginx-x86/KEY
# (NGINX_BUILD, KEY from the source and flags).  Needs gcc, make, curl,
# dpkg-dev, nm (scripts/install-deps.sh) and `make -C fixtures/realserver`.
# Nothing is skipped.

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PATCHSITE=${PATCHSITE:-$root/patchsite}
NGINX_CACHE=${NGINX_CACHE:-$root/build/nginx-src}
NGINX_BUILD=${NGINX_BUILD:-$root/build/nginx-x86}
FX=${FX:-$root/fixtures/realserver/out}
FLAVOUR=${FLAVOUR:--pg -mfentry}
ROUNDS=${ROUNDS:-25}
PORT=${PORT:-$((20000 + $$ % 20000))}

. "$here/lib.sh"
showlog() { sed 's/^/# /' "$1" | tail -n "${2:-30}"; }

work=$(mktemp -d)
chmod 755 "$work"
[ -z "${KEEP:-}" ] || echo "# work directory $work"
# at exit: end what this test started and left (a worker whose master was
# killed), found by this run's private directory in their command lines
reap() {
	for p in $(ps -eo pid=,args= | awk -v w="$work/" 'index($0, w) && $2 !~ /awk|ps/ { print $1 }'); do
		[ "$p" != $$ ] && kill -9 "$p" 2>/dev/null
	done
}
trap 'reap; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
ps_init "$work"
ps_need_patchsite
[ "$(uname -m)" = x86_64 ] || { echo "# this is $(uname -m)" >"$work/why"; not_ok "a native x86_64 machine" "$work/why"; finish; }
for t in gcc make curl nm cmp timeout apt-get dpkg-source dpkg-buildflags; do
	command -v "$t" >/dev/null 2>&1 || { echo "# $t not found" >"$work/why"; not_ok "tool $t is installed" "$work/why"; }
done
[ -f "$FX/forkchurn.so" ] || { echo "# $FX/forkchurn.so missing (make -C fixtures/realserver)" >"$work/why"; not_ok "fixture forkchurn.so" "$work/why"; finish; }

# ---------------------------------------------------------------- source
. "$here/debsrc.sh"
if debsrc nginx "$NGINX_CACHE" configure src/core/nginx.c src/core/ngx_thread_pool.c \
	src/os/unix/ngx_process_cycle.c >"$work/debsrc.out" 2>&1; then
	src=$debsrc_dir
	ok "source: $debsrc_how"
else
	not_ok "source: apt-get source nginx" "$work/debsrc.out"
	finish
fi

# ---------------------------------------------------------------- build
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS) $FLAVOUR"
ldflags="-Wl,-Bsymbolic-functions $(dpkg-buildflags --get LDFLAGS) -pg"
conf="--with-threads --without-http_rewrite_module --without-http_gzip_module --without-pcre"
key=$(printf '%s\n' "$(basename "$src")" "$cflags" "$ldflags" "$conf" | cksum | cut -d' ' -f1)
prog=$NGINX_BUILD/$key/nginx
build() {
	b=$work/nginx-build
	cp -R "$src" "$b" || return 1
	# shellcheck disable=SC2086 # conf is words
	if ! (cd "$b" && ./configure --prefix="$work/unused" $conf \
		--with-cc-opt="$cflags" --with-ld-opt="$ldflags") >"$work/configure.log" 2>&1; then
		not_ok "configure" "$work/configure.log"; return 1
	fi
	ok "configure ($conf, CFLAGS=$cflags)"
	if ! (cd "$b" && env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL \
		timeout 1200 nice make -j2) >"$work/make.log" 2>&1; then
		not_ok "build: make" "$work/make.log"; return 1
	fi
	rm -rf "$NGINX_BUILD/$key"
	mkdir -p "$NGINX_BUILD/$key" && cp "$b/objs/nginx" "$prog" && touch "$NGINX_BUILD/$key/.complete"
}
if [ -f "$NGINX_BUILD/$key/.complete" ]; then
	ok "build: cached in $NGINX_BUILD/$key"
else
	if build; then ok "build: objs/nginx"; else finish; fi
fi

nm "$prog" >"$work/nginx.nm"
for f in ngx_http_log_handler ngx_http_create_request ngx_thread_pool_cycle; do
	grep -q " [tT] $f\$" "$work/nginx.nm" ||
		{ echo "# $f not in nm $prog" >"$work/why"; not_ok "nginx has $f" "$work/why"; finish; }
done
addr() { sed -n "s/^0*\\([0-9a-f]*\\) [tT] $1\$/\\1/p" "$work/nginx.nm" | head -n 1; }

emb=$work/nginx.emb
if ps_run 0 "$work/embed.out" -- embed "$prog" -o "$emb"; then
	ok "embed nginx"
else
	not_ok "embed nginx" "$ps_msg"; finish
fi

# ---------------------------------------------------------------- docroot
mkdir -p "$work/html"
i=0
for n in 1 100 1000 4095 4096 4097 10000 32768 65535 65536 65537 100000 131072 \
	150000 200000 250000 262144 300000 307200 12345; do
	head -c "$n" /dev/urandom >"$work/html/f$i"
	i=$((i + 1))
done
nfiles=$i

# ---------------------------------------------------------------- runs
# serve TAG BIN [VAR=VALUE...]: run BIN as nginx in $work/TAG with the
# environment given, under load; sets $served (requests the clients made)
serve() {
	_t=$1 _b=$2
	shift 2
	d=$work/$_t
	mkdir -p "$d/logs" "$d/got"
	cat >"$d/nginx.conf" <<EOF
daemon off;
master_process on;
user root;
worker_processes 2;
error_log $d/logs/error.log warn;
pid $d/logs/nginx.pid;
thread_pool default threads=4;
events { worker_connections 512; }
http {
	access_log $d/logs/access.log;
	default_type application/octet-stream;
	sendfile off;
	aio threads;
	keepalive_requests 7;
	server {
		listen 127.0.0.1:$PORT;
		root $work/html;
		location / { }
	}
}
EOF
	(cd "$d" && exec timeout -k 10 180 env "$@" "$_b" -p "$d" -c "$d/nginx.conf") >"$d/out" 2>"$d/err" &
	_m=$!
	# wait until it answers (each answered probe is one request)
	probes=0
	_w=0
	while [ "$_w" -lt 120 ]; do
		c=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/f0")
		[ "$c" = 200 ] && { probes=1; break; }
		[ "$c" = 000 ] || probes=$((probes + 1))
		kill -0 "$_m" 2>/dev/null || break
		sleep 1
		_w=$((_w + 1))
	done
	if [ "$probes" -eq 0 ]; then
		echo "# no answer on port $PORT" >"$d/why"; showlog "$d/err" >>"$d/why"
		[ -f "$d/logs/error.log" ] && showlog "$d/logs/error.log" >>"$d/why"
		not_ok "$_t: nginx answers" "$d/why"
		kill "$_m" 2>/dev/null; wait "$_m"
		served=-1
		return 1
	fi
	ok "$_t: nginx answers"
	deadline=$(($(date +%s) + 120))
	# two clients, each ROUNDS curl invocations fetching every file once
	for c in 1 2; do
		(
			r=0
			while [ "$r" -lt "$ROUNDS" ] && [ "$(date +%s)" -lt "$deadline" ]; do
				set --
				k=0
				while [ "$k" -lt "$nfiles" ]; do
					set -- "$@" "http://127.0.0.1:$PORT/f$k" -o "$d/got/c$c.r$r.f$k"
					k=$((k + 1))
				done
				timeout 120 curl -sS --max-time 60 -w '%{http_code}\n' "$@" >>"$d/codes.$c" 2>>"$d/curl.err"
				echo "$?" >>"$d/rcs.$c"
				r=$((r + 1))
			done
		) &
		eval "_c$c=\$!"
	done
	# with $ctl (the ready tracer's control FIFO): a controller attaching
	# every function and detaching them, in rounds, until the clients end
	if [ -n "$ctl" ]; then
		: >"$d/ctl.rounds"
		(
			while kill -0 "$_c1" 2>/dev/null || kill -0 "$_c2" 2>/dev/null; do
				timeout 20 sh -c "echo 'attach *' >'$ctl'" || { echo "# attach write timed out"; break; }
				sleep 0.3
				timeout 20 sh -c "echo detach >'$ctl'" || { echo "# detach write timed out"; break; }
				echo round >>"$d/ctl.rounds"
				sleep 0.2
			done
		) >"$d/ctl.out" 2>&1 &
		_k=$!
	fi
	sleep 2
	kill -HUP "$(cat "$d/logs/nginx.pid")" 2>/dev/null
	echo "HUP sent" >>"$d/signals"
	wait "$_c1"
	wait "$_c2"
	[ -z "$ctl" ] || wait "$_k"
	[ "$(date +%s)" -lt "$deadline" ] || echo "# the clients stopped at their deadline (120 s)" >"$d/late"
	# the master and its workers now, to end what a killed master leaves
	_mp=$(cat "$d/logs/nginx.pid")
	ps -eo pid=,ppid= | awk -v m="$_mp" '$2 == m { print $1 }' >"$d/pids"
	echo "$_mp" >>"$d/pids"
	kill -QUIT "$_mp" 2>/dev/null
	wait "$_m"
	rc=$?
	for p in $(cat "$d/pids"); do
		grep -q '^nginx' "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" && echo "# pid $p was left, killed"
	done >"$d/left"
	served=$((probes + 2 * ROUNDS * nfiles))

	if [ "$rc" -eq 0 ]; then
		ok "$_t: master exits 0 on SIGQUIT (no hang, no crash)"
	else
		{ echo "# exit status $rc (124: timeout; 128+N: signal N)"; cat "$d/left"; showlog "$d/err"; } >"$d/why"
		not_ok "$_t: master exits 0 on SIGQUIT (no hang, no crash)" "$d/why"
	fi
	check "$_t: every curl exited 0" sh -c "! grep -v '^0\$' '$d/rcs.1' '$d/rcs.2' && cat '$d/curl.err' && [ ! -s '$d/curl.err' ]"
	bad=0
	for c in 1 2; do
		r=0
		while [ "$r" -lt "$ROUNDS" ]; do
			k=0
			while [ "$k" -lt "$nfiles" ]; do
				cmp -s "$work/html/f$k" "$d/got/c$c.r$r.f$k" || { bad=$((bad + 1)); echo "# differs: c$c.r$r.f$k"; }
				k=$((k + 1))
			done
			r=$((r + 1))
		done
	done >"$d/cmp.out"
	n200=$(cat "$d/codes.1" "$d/codes.2" 2>/dev/null | grep -c '^200$')
	if [ "$bad" -eq 0 ] && [ "$n200" -eq $((2 * ROUNDS * nfiles)) ]; then
		ok "$_t: every response 200 and the docroot file byte for byte ($n200)"
	else
		echo "# $bad bodies differ or are missing, $n200 of $((2 * ROUNDS * nfiles)) answered 200" >>"$d/cmp.out"
		[ -f "$d/late" ] && cat "$d/late" >>"$d/cmp.out"
		not_ok "$_t: every response 200 and the docroot file byte for byte" "$d/cmp.out"
	fi
	lines=$(wc -l <"$d/logs/access.log" 2>/dev/null || echo 0)
	n200log=$(awk '$9 == 200' "$d/logs/access.log" 2>/dev/null | wc -l)
	if [ "$lines" -eq "$served" ] && [ "$n200log" -eq "$served" ]; then
		ok "$_t: access log: one 200 line per request ($served)"
	else
		echo "# access log: $lines lines, $n200log with 200; the clients made $served requests" >"$d/why"
		not_ok "$_t: access log: one 200 line per request" "$d/why"
	fi
	if grep -E '\[(alert|crit|emerg)\]' "$d/logs/error.log" >"$d/alerts" 2>&1; then
		not_ok "$_t: error log has no alert, crit or emerg (a worker dead on a signal is an alert)" "$d/alerts"
	else
		ok "$_t: error log has no alert, crit or emerg"
	fi
	check "$_t: no core file" sh -c "! ls '$d' | grep -E '^core'"
	return 0
}

ctl=
serve plain "$prog"
serve embedded "$emb"
ctl=$work/traced.fifo
mkfifo "$ctl"
serve traced "$emb" LD_PRELOAD="$FX/tracer/libpatchsite-trace.so" PATCHSITE_TRACE_CTL="$ctl" \
	PATCHSITE_TRACE_TIME=off PATCHSITE_TRACE_OUT="$work/traced/table.%p"
d=$work/traced
nr=$(wc -l <"$d/ctl.rounds")
# nginx sends its stderr to its error log once that is open
na=$(cat "$d/err" "$d/logs/error.log" | grep -c 'ctl: attached [0-9]* functions')
nd=$(cat "$d/err" "$d/logs/error.log" | grep -c 'ctl: detached [0-9]* functions')
if [ "$nr" -ge 1 ] && [ "$na" -eq "$nr" ] && [ "$nd" -eq "$nr" ] && [ ! -s "$d/ctl.out" ]; then
	ok "traced: the tracer answered every command ($nr rounds of attach * / detach)"
else
	{ echo "# $nr rounds written, $na attach and $nd detach answers"; cat "$d/ctl.out"; showlog "$d/logs/error.log" 10; } >"$d/why"
	not_ok "traced: the tracer answered every command" "$d/why"
fi
ctl=
serve churned "$emb" LD_PRELOAD="$FX/forkchurn.so" CHURN_OUT="$work/churned/sum" \
	CHURN_STEADY=1 CHURN_ROUNDS=1

# ---------------------------------------------------------------- tracer
# every process's summary: the master's and one per worker (4: two at
# start, two after the reload)
d=$work/churned
sums=$(ls "$d"/sum.* 2>/dev/null | wc -l)
if [ -f "$d/sum" ] && [ "$sums" -ge 4 ]; then
	ok "churned: summaries of the master and of $sums workers (a process killed by a signal writes none)"
else
	ls -la "$d" >"$d/why" 2>&1
	not_ok "churned: summaries of the master and >= 4 workers ($sums found)" "$d/why"
fi
# x86_64's refusal (callops.h: -EDEADLK, a thread blocks SIGTRAP: nothing
# changed) is the contract's answer for a worker whose thread pool blocks
# every signal; it is noted, and ends that process's rounds (churn.c stops
# at its first error).  Any other failure fails.
refused=$(cat "$d"/sum* 2>/dev/null | grep -c '^error .*: -35 (')
[ "$refused" -eq 0 ] || note "churned: $refused process(es) had a change refused with -EDEADLK (a thread blocks SIGTRAP): $(grep -h '^error .*: -35 (' "$d"/sum* | sed 's/^error //' | tr '\n' ';')"
errs=$(cat "$d"/sum* 2>/dev/null | awk '$1 == "errors" { s += $2 } END { print s + 0 }')
errs=$((errs - refused))
# a process refused at its very first round (its pool already blocking
# SIGTRAP) ran none: that is the refusal noted above, not a missing round
norounds=$(for s in "$d"/sum*; do
	[ -f "$s" ] && ! grep -q '^error .*: -35 (' "$s" &&
		awk '$1 == "rounds" && $2 < 1 { print FILENAME }' "$s"
done)
if [ "$errs" -eq 0 ] && [ -z "$norounds" ] && [ -f "$d/sum" ]; then
	ok "churned: no API call failed (but for -EDEADLK refusals), every process ran rounds (master: $(awk '$1 == "rounds" { print $2 }' "$d/sum"))"
else
	{ echo "# $errs errors; no rounds in: $norounds"; grep -h '^error' "$d"/sum* | sed 's/^/# /'; } >"$d/why"
	not_ok "churned: no API call failed, every process ran rounds" "$d/why"
fi
for f in ngx_http_log_handler ngx_http_create_request; do
	a=$(addr "$f")
	n=$(cat "$d"/sum.* 2>/dev/null | awk -v a="$a" '$1 == "fn" && $2 == a { s += $3 } END { print s + 0 }')
	m=$(awk -v a="$a" '$1 == "fn" && $2 == a { print $3 }' "$d/sum" 2>/dev/null)
	if [ "$n" -eq "$served" ] && [ "${m:-x}" = 0 ]; then
		ok "churned: counts: $f called once per request in the workers ($n), never in the master"
	else
		echo "# $f: the workers' steady ops counted $n, the master's ${m:-none}; the clients made $served requests" >"$d/why"
		not_ok "churned: counts: $f called once per request" "$d/why"
	fi
done
finish
