# The harness the command-line test scripts (tests/cli_*.sh) share; each
# sets CLI_NAME (for messages and its scratch folder) and CLI_TIMEOUT (the
# time limit per holosim command, when coreutils' timeout is there), then
# sources this file:
#
#   H, ROOT, TESTS  the binary under test (HOLOSIM, else bin/holosim), the
#                   repository, the tests folder; T a scratch folder
#   begin NAME ... end      one test; `no MESSAGE` inside records a failure
#   hs ARGS...              holosim: stdout in $T/out, stderr in $T/err,
#                           exit status in $rc
#   rc_is N, out_has S, out_lacks S, err_has S, err_lacks S, out_empty,
#   err_empty, out_line N S, out_lines N      checks of the last hs
#   summary                 the last line, "N passed, N failed", and the status
LC_ALL=C
export LC_ALL

H=${HOLOSIM:-bin/holosim}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
TESTS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$TESTS")

if [ ! -x "$H" ]; then
    echo "$CLI_NAME.sh: $H is not an executable (build it with make)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-$CLI_NAME.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM

if [ -n "${CLI_TIMEOUT:-}" ] && command -v timeout >/dev/null 2>&1; then
    TO="timeout $CLI_TIMEOUT"
else
    TO=""
fi

pass=0
fail=0
begin() { name=$1; why=; }
no() { why="${why:+$why; }$*"; }
end() {
    if [ -z "$why" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $why"
        [ -s "$T/err" ] && echo "  stderr: $(head -n 3 "$T/err" | cut -c1-200)"
    fi
    return 0
}
hs() {
    $TO "$H" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}
rc_is() { [ "$rc" = "$1" ] || no "exit $rc, want $1"; }
out_has() { grep -F -q -e "$1" "$T/out" || no "stdout lacks '$1'"; }
out_lacks() { grep -F -q -e "$1" "$T/out" && no "stdout has '$1'"; return 0; }
err_has() { grep -F -q -e "$1" "$T/err" || no "stderr lacks '$1'"; }
err_lacks() { grep -F -q -e "$1" "$T/err" && no "stderr has '$1'"; return 0; }
out_empty() { [ -s "$T/out" ] && no "stdout is not empty ($(head -n 1 "$T/out" | cut -c1-60))"; return 0; }
err_empty() { [ -s "$T/err" ] && no "stderr is not empty ($(head -n 1 "$T/err" | cut -c1-100))"; return 0; }
out_line() {
    got=$(sed -n "$1p" "$T/out")
    [ "$got" = "$2" ] || no "stdout line $1 is '$got', want '$2'"
}
out_lines() {
    got=$(wc -l <"$T/out" | tr -d ' ')
    [ "$got" = "$1" ] || no "stdout has $got lines, want $1"
}
summary() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
