#!/bin/sh
# fxt-dump's record lines, --normalize and --stats on known archives.
. "$abs_top_srcdir/tests/e2e/dump-common.sh"

plan 14

dump "$A/valid.fxt"
is "$rc" 0 "valid archive: exit 0"
is "$err" "" "valid archive: no diagnostics"
is "$out" "$(cat <<'EOT'
magic
provider_info id=10 name="demo"
init ticks_per_second=2000000000
string index=1 str="cat"
string index=2 str="main"
string index=3 str="work"
string index=4 str="inner"
string index=5 str="flow"
thread index=1 pid=10 tid=11
thread index=2 pid=10 tid=12
kobj type=process koid=10 name="demo"
kobj type=thread koid=11 name="main" args={process:koid=10}
ts=0.000000150 pid=10 tid=11 event complete cat="cat" name="inner" dur=50ns
ts=0.000000100 pid=10 tid=11 event complete cat="cat" name="work" dur=150ns
ts=0.000000300 pid=10 tid=11 event complete cat="cat" name="work" dur=150ns
ts=0.000000050 pid=10 tid=11 event complete cat="cat" name="main" dur=450ns
ts=0.000000175 pid=10 tid=11 event flow_begin cat="cat" name="flow" id=77
ts=0.000000350 pid=10 tid=12 event begin cat="cat" name="work"
ts=0.000000355 pid=10 tid=12 event flow_end cat="cat" name="flow" id=77
ts=0.000000400 pid=10 tid=12 event end cat="cat" name="work"
ts=0.000000225 pid=10 tid=11 event instant cat="cat" name="main" args={n:i32=-3, s:str="a \"q\"", d:f64=0.5, b:bool=true, p:ptr=0x1000}
ts=0.000000230 pid=10 tid=11 event counter cat="cat" name="work" id=1 args={bytes:u64=4096}
ts=0.000000235 pid=10 tid=12 event instant cat="cat" name="fxt: 12 records dropped"
ts=0.000000240 pid=10 tid=12 log msg="hello\n"
provider_event id=10 event=buffer_full
blob name="raw" type=1 size=3
uobj ptr=0x1000 pid=10 name="obj"
ts=0.000000245 cswitch cpu=1 out_pid=10 out_tid=11 out_state=3 out_prio=0 in_pid=10 in_tid=12 in_prio=0
EOT
)" "record lines"

dump "$A/valid.fxt.gz"
is "$rc" 0 "gzip archive: exit 0"
is "$(printf '%s\n' "$out" | md5sum)" "$("$FXT_DUMP" "$A/valid.fxt" | md5sum)" "gzip prints the same"

out=$("$FXT_DUMP" - <"$A/valid.fxt.gz"); rc=$?
is "$rc/$(printf '%s\n' "$out" | wc -l)" "0/28" "standard input"

dump --normalize "$A/two-providers.fxt"
is "$out" "$(cat <<'EOT'
magic
provider_info id=1 name="demo"
pid=1 tid=1 event instant cat="cat" name="main"
provider_info id=2 name="other"
pid=2 tid=2 event instant cat="cat2" name="other_main"
provider_section id=1
pid=1 tid=1 event instant cat="cat" name="main"
EOT
)" "--normalize: provider tables, renumbered pids and tids"

dump --normalize "$A/valid.fxt"
is "$(printf '%s\n' "$out" | grep -c 'ts=\|dur=\|^string \|^thread \|^init ')" "0" "--normalize: no times, no tables"
is "$(printf '%s\n' "$out" | grep 'instant' | head -1)" \
  'pid=1 tid=1 event instant cat="cat" name="main" args={n:i32=-3, s:str="a \"q\"", d:f64=0.5, b:bool=true, p:ptr=*}' \
  "--normalize: pointers hidden"

dump --stats "$A/valid.fxt"
is "$rc" 0 "--stats: exit 0"
is "$(printf '%s\n' "$out" | grep -E '^(bytes|records|record.event|event.complete|event.begin|event.flow_begin|providers|processes|threads|strings|buffer_full|dropped|first_ns|last_ns|span_ns) ')" "$(cat <<'EOT'
bytes 720
records 28
record.event 11
event.begin 1
event.complete 4
event.flow_begin 1
providers 1
processes 1
threads 2
strings 5
buffer_full 1
dropped 12
first_ns 50
last_ns 500
span_ns 450
EOT
)" "--stats counts"

dump --stats "$A/unknown.fxt"
is "$(printf '%s\n' "$out" | grep -E '^(records|record.reserved|event.instant) ')" "records 11
event.instant 1" "--stats: a reserved record type is not counted"

dump "$A/unknown.fxt"
is "$(printf '%s\n' "$out" | tail -1)" 'ts=0.000000050 pid=10 tid=11 event instant cat="cat" name="main"' \
  "unknown record and argument types skipped"
is "$err" "" "skipping is not an error"

finish
