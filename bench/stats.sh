# bench/stats.sh: awk and shell functions the bench scripts share
# (sourced, not run).  AWK_ORDER: median(a, k) and least(a, k) of
# a[1..k]; median sorts a in place (insertion sort: a few rounds per
# figure).  cpu_s: below.
# shellcheck shell=sh disable=SC2034 # used by the scripts that source it
AWK_ORDER='
function median(a, k,   i, j, t) {
  for (i = 2; i <= k; i++)
    for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
function least(a, k,   i, m) {
  m = a[1]
  for (i = 2; i <= k; i++) if (a[i] < m) m = a[i]
  return m
}
'

# cpu_s FILE: the CPU seconds (user + system) of the children this shell
# had waited for when `times >FILE` ran in it (its second line; `times` in
# a command substitution would be the subshell's).
cpu_s() {
  awk 'NR == 2 {
    s = 0
    for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] }
    printf "%.3f\n", s
  }' "$1"
}
