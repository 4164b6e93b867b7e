#!/bin/sh
# bench/src-setup.sh PKG DIR: fetches the source of Debian's package PKG
# into DIR, for the benchmarks that build real programs (Lua 5.4, lua5.4,
# for bench/run.sh; lua5.4 and SQLite, sqlite3, for bench/patch-compare.sh),
# and prints the path of the unpacked tree (DIR/PKG-VERSION).
#
#   make bench-lua-setup           (lua5.4; DIR = ${XDG_CACHE_HOME:-~/.cache}/fxt-bench,
#                                   where `make bench` looks), or
#   sh bench/src-setup.sh PKG DIR
#
# On a Debian (or derived) system it does, only as far as needed:
#   1. If apt knows no source package PKG and no deb-src entry exists,
#      adds one for Debian's own archive, derived from the first enabled
#      `deb` entry whose URI is a Debian archive (.../debian) and whose
#      suite is the release's codename (VERSION_CODENAME of os-release):
#      the same URI, suite, components (and Signed-By / options).  It goes
#      into a file of its own, /etc/apt/sources.list.d/fxt-bench-src.sources
#      (deb822, when the entry came from a .sources file) or
#      fxt-bench-src.list; no existing entry is changed.
#   2. Runs `apt-get update` if it added the entry, or if a deb-src entry
#      existed but apt had not read its index yet.
#   3. Installs dpkg-dev (apt-get source unpacks with dpkg-source) if it is
#      missing.
#   4. Runs `apt-get source PKG` in DIR, unless a PKG-*/ tree (with its
#      debian/ directory) is already there.
# Running it again changes nothing.  Steps 1-3 need root (sudo is used if
# present and needed).  Output: the tree's directory on stdout, progress on
# stderr.
set -eu

[ $# -eq 2 ] || { echo "usage: src-setup.sh PKG DIR" >&2; exit 2; }
PKG=$1
DIR=$2
LIST_DIR=/etc/apt/sources.list.d
OUR=$LIST_DIR/fxt-bench-src

say() { echo "src-setup: $*" >&2; }
die() { say "$*"; exit 1; }

# found: the tree of an already fetched source, if any.
found() {
  f_src=
  for f in "$DIR"/"$PKG"-*; do
    [ -f "$f/debian/control" ] && f_src=$f
  done
  [ -n "$f_src" ] && (cd "$f_src" && pwd)
}

mkdir -p "$DIR"
if src=$(found); then
  say "already fetched"
  echo "$src"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found (not a Debian system?)"
as_root=
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then as_root=sudo; fi
fi
root() { # CMD...: run CMD as root
  [ "$(id -u)" -eq 0 ] || [ -n "$as_root" ] || die "need root for: $*"
  $as_root "$@"
}

# has_src: apt has read a source index that lists the package.
has_src() { apt-cache showsrc "$PKG" 2>/dev/null | grep -q '^Package:'; }

# src_entry_exists: some enabled deb-src entry exists, one-line or deb822.
src_entry_exists() {
  for f in /etc/apt/sources.list "$LIST_DIR"/*.list; do
    [ -f "$f" ] && grep -q '^[[:space:]]*deb-src[[:space:]]' "$f" && return 0
  done
  for f in "$LIST_DIR"/*.sources; do
    [ -f "$f" ] || continue
    awk 'BEGIN { RS = ""; FS = "\n"; found = 0 }
      {
        types = 0; off = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Types:/ && $i ~ /[[:space:]]deb-src([[:space:]]|$)/) types = 1
          if ($i ~ /^Enabled:[[:space:]]*no/) off = 1
        }
        if (types && !off) found = 1
      }
      END { exit !found }' "$f" && return 0
  done
  return 1
}

# new_entry: prints "list" or "sources", then the deb-src entry to add.
new_entry() {
  # shellcheck source=/dev/null
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release; add a deb-src line by hand"
  # deb822 files first (Debian 12 and later ship debian.sources).
  for f in "$LIST_DIR"/*.sources; do
    [ -f "$f" ] || continue
    e=$(awk -v code="$codename" 'BEGIN { RS = ""; FS = "\n" }
      {
        types = uris = comps = signed = ""; off = 0; suite = 0
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^#/) continue
          key = line; sub(/:.*/, "", key)
          val = line; sub(/^[^:]*:[[:space:]]*/, "", val)
          if (key == "Types") types = " " val " "
          else if (key == "URIs") uris = val
          else if (key == "Components") comps = val
          else if (key == "Signed-By") signed = val
          else if (key == "Enabled" && val ~ /^no/) off = 1
          else if (key == "Suites") {
            n = split(val, s, /[[:space:]]+/)
            for (j = 1; j <= n; j++) if (s[j] == code) suite = 1
          }
        }
        # Signed-By may be a multi-line inline key: keep only a file name.
        if (signed !~ /^\//) signed = ""
        split(uris, u, /[[:space:]]+/)
        if (!off && suite && types ~ / deb / && u[1] ~ /\/debian\/?($|\/)/ && comps != "") {
          print "sources"
          print "Types: deb-src"
          print "URIs: " u[1]
          print "Suites: " code
          print "Components: " comps
          if (signed != "") print "Signed-By: " signed
          exit
        }
      }' "$f")
    [ -z "$e" ] || { echo "$e"; return 0; }
  done
  # One-line format: deb [options] URI SUITE COMPONENTS...
  for f in /etc/apt/sources.list "$LIST_DIR"/*.list; do
    [ -f "$f" ] || continue
    e=$(awk -v code="$codename" '
      $1 == "deb" {
        i = 2; opts = ""
        if ($2 ~ /^\[/) {
          while (i <= NF && $i !~ /\]$/) { opts = opts $i " "; i++ }
          opts = opts $i " "; i++
        }
        if ($i ~ /\/debian\/?$/ && $(i + 1) == code) {
          line = "deb-src " opts
          for (; i <= NF; i++) line = line $i (i < NF ? " " : "")
          print "list"; print line; exit
        }
      }' "$f")
    [ -z "$e" ] || { echo "$e"; return 0; }
  done
  die "no deb entry for Debian's archive ($codename) in the apt sources; add a deb-src line by hand"
}

if ! has_src; then
  if src_entry_exists; then
    say "a deb-src entry exists; apt-get update to read it"
  else
    e=$(new_entry)
    kind=$(echo "$e" | head -n 1)
    say "adding $OUR.$kind:"
    echo "$e" | sed 1d | sed 's/^/    /' >&2
    echo "$e" | sed 1d | root tee "$OUR.$kind" >/dev/null
  fi
  root apt-get update >&2
  has_src || die "apt still knows no source package $PKG after apt-get update"
fi

if ! command -v dpkg-source >/dev/null 2>&1; then
  say "installing dpkg-dev (for dpkg-source)"
  root apt-get install -y --no-install-recommends dpkg-dev >&2
fi

say "apt-get source $PKG in $DIR"
(cd "$DIR" && apt-get source "$PKG" >&2) || die "apt-get source $PKG failed"
src=$(found) || die "no $PKG-*/debian/control in $DIR after apt-get source"
echo "$src"
