#!/bin/sh
# README.md's command lines, run as a newcomer would: verbatim, in order, in
# a clean copy of the repository (POSIX sh).
#
#   HOLOSIM=bin/holosim sh tests/cli_readme.sh       (what `make check` runs)
#
# The conventions are stated at the top of README.md's source (an HTML
# comment, invisible when rendered): a command line is a code-block line
# starting with "$ "; it must exit 0 unless it ends with "# exit N"; the
# lines after it are the first lines it prints (stdout, then stderr), where
# a line ending in "..." matches by its prefix, a line "..." stands for any
# number of lines, and a wall time (a number followed by " s" at the end of
# a line) may differ.  "make ..." lines are not run: they build, and this
# test uses the binary it is given (copied to bin/holosim of the copy, with
# the libraries of lib/ beside it; it never rebuilds).  Every ```yaml block
# must be a model `holosim check` accepts.  After the last command, `git status --porcelain` in the copy
# must be empty: no tracked file changed, no file left outside out/.
#
# The copy holds the tracked files of the working tree (git ls-files), so
# an uncommitted README is tested as it stands.  The last line of output is
# always `N passed, N failed`.

LC_ALL=C
export LC_ALL

H=${HOLOSIM:-bin/holosim}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
TESTS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$TESTS")
unset HOLOSIM        # the scripts find bin/holosim of the copy, as a reader's would

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}

if [ ! -x "$H" ]; then
    bad "$H is not an executable (build it with make)"
    finish
fi
if ! command -v git >/dev/null 2>&1 || ! git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    echo "cli_readme.sh: no git or not a git checkout: nothing to test"
    finish
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-readme.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
C=$T/repo
mkdir "$C"

# ---- the clean copy ---------------------------------------------------------

(cd "$ROOT" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | (cd "$C" && tar -xf -) ||
    { bad "cannot copy the tracked files"; finish; }
(cd "$C" && git init -q && git add -A &&
    git -c user.name=readme -c user.email=readme@localhost commit -qm copy) >/dev/null 2>&1 ||
    { bad "cannot make a git repository of the copy"; finish; }
mkdir -p "$C/bin" && cp "$H" "$C/bin/holosim" || { bad "cannot copy $H"; finish; }
# the library `make` builds beside it (README: From Python, From C; lib/ is
# ignored by git), from the tree under test
if [ -d "$ROOT/lib" ]; then
    mkdir -p "$C/lib" && cp -P "$ROOT"/lib/libholosim.* "$C/lib/" ||
        { bad "cannot copy $ROOT/lib"; finish; }
fi
[ -z "$(cd "$C" && git status --porcelain)" ] ||
    bad "the copy is not clean before the commands run (is bin/ ignored?)"

# ---- README.md into commands and samples ------------------------------------

# Writes $T/cmd.N (the command), $T/rc.N (the exit status wanted), $T/want.N
# (the sample lines), $T/model.N.yaml (the yaml blocks), and $T/lint (code
# lines that look like commands but lack the "$ ").
awk -v dir="$T" '
function flush_cmd() { if (cmd != "") { close(dir "/want." nc); cmd = "" } }
function new_cmd(line,   f) {
    flush_cmd()
    nc++
    cmd = line
    sub(/^\$ /, "", cmd)
    want = dir "/want." nc
    printf "" > want
}
function end_cmd_text(   rc, f) {
    f = dir "/cmd." nc
    print cmd > f
    close(f)
    rc = 0
    if (match(cmd, /#[ ]*exit[ ]+[0-9]+[ ]*$/)) {
        rc = substr(cmd, RSTART, RLENGTH)
        gsub(/[^0-9]/, "", rc)
    }
    f = dir "/rc." nc
    print rc > f
    close(f)
    incmd = 0
}
BEGIN { nc = 0; ny = 0; incmd = 0; cmd = ""; fence = ""; comment = 0; prev_blank = 1; block = 0 }
{
    line = $0
    if (comment) { if (line ~ /-->/) comment = 0; next }
    if (fence == "" && line ~ /^<!--/) { if (line !~ /-->/) comment = 1; next }
    if (fence != "") {                           # inside ``` ... ```
        if (line ~ /^```/) { if (fence == "yaml") close(yf); fence = ""; flush_cmd(); next }
        if (fence == "yaml") { print line > yf; next }
        code = line
    } else if (line ~ /^```/) {
        fence = substr(line, 4)
        if (fence == "") fence = "text"
        if (fence == "yaml") { ny++; yf = dir "/model." ny ".yaml"; printf "" > yf }
        next
    } else if (line ~ /^    / && (prev_blank || block)) {
        code = substr(line, 5)
        block = 1
    } else {
        if (incmd) end_cmd_text()
        flush_cmd()
        block = 0
        prev_blank = (line ~ /^[ \t]*$/)
        next
    }
    prev_blank = 0
    if (incmd) {                                 # a continued command line
        cmd = cmd "\n" code
        if (code !~ /\\$/) end_cmd_text()
        next
    }
    if (code ~ /^\$ /) {
        new_cmd(code)
        incmd = 1
        if (code !~ /\\$/) end_cmd_text()
        next
    }
    if (cmd != "") { print code > want; next }
    if (code ~ /^(bin\/|scripts\/|holosim |make |sh |cd )/) print NR ": " code > (dir "/lint")
}
END { if (incmd) end_cmd_text(); flush_cmd(); print nc > (dir "/ncmd"); print ny > (dir "/nyaml") }
' "$ROOT/README.md"

ncmd=$(cat "$T/ncmd")
nyaml=$(cat "$T/nyaml")
if [ -s "$T/lint" ]; then
    while IFS= read -r l; do bad "README.md:$l: a command line without '\$ '"; done <"$T/lint"
else
    ok
fi
[ "$ncmd" -ge 15 ] && ok || bad "only $ncmd command lines found in README.md"

# ---- the sample lines --------------------------------------------------------

# match WANT GOT: 0 when the printed lines GOT start as the sample WANT says.
match() {
    awk '
    function norm(s) { sub(/[0-9]+(\.[0-9]+)? s$/, "N s", s); return s }
    function same(w, g,   p) {
        if (w ~ /\.\.\.$/ && w != "...") {
            p = substr(w, 1, length(w) - 3)
            return substr(g, 1, length(p)) == p
        }
        return norm(w) == norm(g)
    }
    NR == FNR { want[++nw] = $0; next }
    { got[++ng] = $0 }
    END {
        j = 1
        for (i = 1; i <= nw; i++) {
            if (want[i] == "...") {
                if (i == nw) exit 0
                while (j <= ng && !same(want[i + 1], got[j])) j++
                if (j > ng) { print "no line like \"" want[i + 1] "\" after \"...\""; exit 1 }
                continue
            }
            if (j > ng) { print "printed " ng " lines; sample line " i " is \"" want[i] "\""; exit 1 }
            if (!same(want[i], got[j])) {
                print "line " j " is \"" got[j] "\", the README shows \"" want[i] "\""
                exit 1
            }
            j++
        }
        exit 0
    }' "$1" "$2"
}

# ---- run them ------------------------------------------------------------------

TO=
command -v timeout >/dev/null 2>&1 && TO="timeout 300"
i=1
while [ "$i" -le "$ncmd" ]; do
    cmd=$(cat "$T/cmd.$i")
    case $cmd in
    make\ *) i=$((i + 1)); continue ;;       # builds: not run here (see above)
    esac
    want_rc=$(cat "$T/rc.$i")
    (cd "$C" && $TO sh -c "$cmd" >"$T/out" 2>"$T/err")
    rc=$?
    cat "$T/out" "$T/err" >"$T/got"
    short=$(printf '%s' "$cmd" | head -n 1 | cut -c1-90)
    if [ "$rc" != "$want_rc" ]; then
        bad "\$ $short: exit $rc, the README says $want_rc"
        sed -n '1,3s/^/  /p' "$T/err"
    elif ! match "$T/want.$i" "$T/got" >"$T/why"; then
        bad "\$ $short: $(cat "$T/why")"
    else
        ok
    fi
    i=$((i + 1))
done

# ---- the models shown --------------------------------------------------------

i=1
while [ "$i" -le "$nyaml" ]; do
    if (cd "$C" && bin/holosim check "$T/model.$i.yaml" >/dev/null 2>"$T/err"); then
        ok
    else
        bad "yaml block $i of README.md: $(head -n 1 "$T/err")"
    fi
    i=$((i + 1))
done

# ---- nothing changed -----------------------------------------------------------

st=$(cd "$C" && git status --porcelain)
if [ -z "$st" ]; then
    ok
else
    bad "the README's commands changed the tree: $(echo "$st" | head -n 5 | tr '\n' ' ')"
fi
[ -d "$C/out" ] && ok || bad "no out/ directory after the commands"

finish
