#!/bin/sh
# Programs that tear OpenSSL down before they exit (curl, and
# tests/progs/ssl_cleanup), traced with fxt-run and with a plain LD_PRELOAD
# of the agent: the agent symbolizes at exit inside the process, and must
# find debuginfo in local files only.  Were libdebuginfod loaded (libdwfl's
# standard callbacks do it), its libcurl would initialise OpenSSL again
# after OPENSSL_cleanup: a crash (exit 139), and a symbolizer that may wait
# on the network.  So: exit status and output unchanged, downloads intact,
# archives valid, with DEBUGINFOD_URLS unset and pointing at a port where
# nothing listens; libdebuginfod never loaded (LD_DEBUG=files); and no
# connect() to that port (strace, when it can trace here).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 25

PY=$(command -v "${PYTHON3:-python3}" 2>/dev/null || command -v python3 2>/dev/null)
CURL=$(command -v curl 2>/dev/null)
SSLPROG=$PROGS/ssl_cleanup
DEAD_URLS=http://127.0.0.1:1
# Each traced run is bounded: a symbolizer waiting on the network fails
# the test instead of hanging it.
LIMIT=60

skip_n() {
  s_i=0
  while [ "$s_i" -lt "$1" ]; do
    skip "$2"
    s_i=$((s_i + 1))
  done
}

# The HTTP server, stopped whatever happens (the EXIT trap replaces the
# one scratch set, and removes $TMPD too).
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=
  fi
}
trap 'stop_server; cd /; rm -rf "$TMPD"' EXIT
trap 'exit 130' HUP INT TERM

mkdir www
# 300 KB that no text transform leaves unchanged.
head -c 300000 /dev/urandom >www/data.bin

# python3 -m http.server on port 0: the kernel picks a free port, which
# the server prints (-u: unbuffered); then wait until it answers.
port=
if [ -n "$PY" ] && [ -n "$CURL" ]; then
  "$PY" -u -m http.server 0 --bind 127.0.0.1 --directory www >server.log 2>&1 &
  server_pid=$!
  i=0
  while [ "$i" -lt 100 ] && [ -z "$port" ]; do
    port=$(sed -n 's/^Serving HTTP on .* port \([0-9][0-9]*\) .*/\1/p' server.log)
    [ -n "$port" ] || sleep 0.1
    i=$((i + 1))
  done
  i=0
  while [ -n "$port" ] && [ "$i" -lt 50 ] &&
    ! "$CURL" -s -o /dev/null "http://127.0.0.1:$port/data.bin"; do
    sleep 0.1
    i=$((i + 1))
  done
  [ "$i" -lt 50 ] || port=
fi
URL=http://127.0.0.1:$port/data.bin

# curl_case NAME ENV...: curl downloads data.bin under fxt-run, then with
# the agent preloaded (no fxt-run), with the environment ENV... (6 tests).
curl_case() {
  c_name=$1; shift
  rm -f "$c_name".*
  c_rc=0
  env "$@" timeout -k 5 "$LIMIT" "$FXT_RUN" -q -o "$c_name.run.fxt" -- "$CURL" -s -o "$c_name.run.out" "$URL" \
    >"$c_name.run.log" 2>&1 || c_rc=$?
  is "$c_rc" 0 "$c_name: curl under fxt-run exits 0"
  ok "$c_name: curl under fxt-run downloads the file intact" cmp -s www/data.bin "$c_name.run.out"
  check_archive "$c_name: fxt-run's archive" "$c_name.run.fxt"

  c_rc=0
  timeout -k 5 "$LIMIT" env "$@" LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$c_name.pre.fxt" \
    "$CURL" -s -o "$c_name.pre.out" "$URL" >"$c_name.pre.log" 2>&1 || c_rc=$?
  is "$c_rc" 0 "$c_name: curl with the agent preloaded exits 0"
  ok "$c_name: curl with the agent preloaded downloads the file intact" \
    cmp -s www/data.bin "$c_name.pre.out"
  check_archive "$c_name: the preloaded agent's archive" "$c_name.pre.fxt"
}

# ssl_case NAME ENV...: ssl_cleanup under fxt-run, then preloaded, with
# ENV...: the same stdout and exit status as a plain run (4 tests).
ssl_case() {
  s_name=$1; shift
  rm -f "$s_name".*
  s_want="0 $(cat plain-ssl.out)"
  s_rc=0
  env "$@" timeout -k 5 "$LIMIT" "$FXT_RUN" -q -o "$s_name.run.fxt" -- "$SSLPROG" \
    >"$s_name.run.out" 2>"$s_name.run.err" || s_rc=$?
  is "$s_rc $(cat "$s_name.run.out")" "$s_want" "$s_name: under fxt-run: status 0, output unchanged"
  check_archive "$s_name: fxt-run's archive" "$s_name.run.fxt"

  s_rc=0
  timeout -k 5 "$LIMIT" env "$@" LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$s_name.pre.fxt" "$SSLPROG" \
    >"$s_name.pre.out" 2>"$s_name.pre.err" || s_rc=$?
  is "$s_rc $(cat "$s_name.pre.out")" "$s_want" \
    "$s_name: with the agent preloaded: status 0, output unchanged"
  check_archive "$s_name: the preloaded agent's archive" "$s_name.pre.fxt"
}

# --------------------------------------------------------------------- curl
if [ -z "$PY" ] || [ -z "$CURL" ]; then
  skip_n 16 "curl or python3 not installed"
elif [ -z "$port" ]; then
  ok "python3 -m http.server answers on 127.0.0.1" false
  sed 's/^/#   server: /' server.log | head -5
  skip_n 15 "no HTTP server"
else
  ok "python3 -m http.server answers on 127.0.0.1:$port" true
  curl_case curl -u DEBUGINFOD_URLS
  curl_case curl-urls DEBUGINFOD_URLS="$DEAD_URLS"

  # libdebuginfod is never loaded, in any process of the run.
  rm -rf ld && mkdir ld
  env DEBUGINFOD_URLS="$DEAD_URLS" LD_DEBUG=files LD_DEBUG_OUTPUT="$TMPD/ld/run" \
    timeout -k 5 "$LIMIT" "$FXT_RUN" -q -o ld.fxt -- "$CURL" -s -o ld.out "$URL" >/dev/null 2>&1
  ld_hits=$(grep -h libdebuginfod ld/* 2>/dev/null | head -3)
  ok "LD_DEBUG=files: curl under fxt-run never loads libdebuginfod" \
    test -n "$(ls ld)" -a -z "$ld_hits"
  [ -z "$ld_hits" ] || diag "$ld_hits"

  # No connect() to the dead debuginfod URL: the agent's exit does not
  # touch the network.  The trace must show curl's own connect() to the
  # server, or strace could not trace here.
  if command -v strace >/dev/null 2>&1 && strace -f -o /dev/null true 2>/dev/null; then
    timeout -k 5 "$LIMIT" strace -f -qq -e trace=connect -o st.trace \
      -E DEBUGINFOD_URLS="$DEAD_URLS" -E LD_PRELOAD="$AGENT_SO" -E FXT_OUTPUT=st.fxt \
      "$CURL" -s -o st.out "$URL" >/dev/null 2>&1
    check_archive "strace: the preloaded agent's archive" st.fxt
    ok "strace: curl connects to the server ($port), never to port 1" \
      test -n "$(grep "htons($port)" st.trace)" -a -z "$(grep 'htons(1)' st.trace)"
    grep 'htons(1)' st.trace | head -3 | sed 's/^/#   /'
  else
    skip_n 2 "strace not installed or cannot trace here"
  fi
fi

# -------------------------------------------------------------- ssl_cleanup
if [ ! -x "$SSLPROG" ]; then
  skip_n 9 "tests/progs/ssl_cleanup not built (configure found no openssl)"
else
  p_rc=0
  "$SSLPROG" >plain-ssl.out 2>&1 || p_rc=$?
  is "$p_rc $(tail -n 1 plain-ssl.out)" "0 ssl_cleanup: done" "ssl_cleanup alone: status 0, its last line"
  ssl_case ssl -u DEBUGINFOD_URLS
  ssl_case ssl-urls DEBUGINFOD_URLS="$DEAD_URLS"
fi

finish
