#!/bin/sh
# Writes that fail (issue 30), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_full.sh       (make check runs it)
#
#   devfull    every command writing to /dev/full (each write fails with
#              ENOSPC) exits 1 with "cannot write" on stderr, never 0
#   fsize      a CSV cut by the file size limit (ulimit -f) ends with its
#              last complete row: no half row, exit 1
CLI_NAME=full
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"

M=$ROOT/models

if [ -w /dev/full ]; then
    # full NAME ARGS...: stdout to /dev/full
    full() {
        begin "devfull-$1"
        shift
        $TO "$H" "$@" >/dev/full 2>"$T/err"
        rc=$?
        : >"$T/out"
        rc_is 1
        err_has "cannot write"
        end
    }
    full derive derive "$M/double_pendulum.yaml"
    full derive-wrt derive --wrt x "x^3"
    full check check "$M/pendulum.yaml"
    full eval eval "1+2"
    full help help
    full help-run help run
    full usage --help
    full version --version
    full columns columns "$M/pendulum.yaml"
    full equilibrium equilibrium "$M/hoop_equilibrium.yaml"
    full modes modes "$M/double_pendulum_modes.yaml"
    full run run "$M/pendulum.yaml" --t-end 1
    full run-o run "$M/pendulum.yaml" --t-end 1 -o /dev/full
    full events run "$M/sphere_liftoff.yaml" --t-end 1 -o "$T/ev.csv" --events /dev/full
    full summary run "$M/pendulum.yaml" --t-end 1 -o "$T/s.csv" --summary /dev/full

    begin devfull-stderr-message
    hs derive "$M/pendulum.yaml"
    rc_is 0
    [ -s "$T/out" ] || no "derive printed nothing"
    end
else
    echo "cli_full.sh: /dev/full is not writable here: the devfull tests are skipped"
fi

# A run whose CSV reaches the file size limit: SIGXFSZ ignored (as a shell
# with `ulimit -f` and a trap would leave it), the write fails with EFBIG.
begin fsize
(
    ulimit -f 8 2>/dev/null || exit 77      # 8 blocks of 512 bytes: 4096 bytes
    trap '' XFSZ
    exec $TO "$H" run "$M/double_pendulum.yaml" --t-end 10 --dt 0.01 -o "$T/cut.csv"
) 2>"$T/err"
rc=$?
if [ "$rc" = 77 ]; then
    echo "cli_full.sh: ulimit -f is not available: fsize skipped"
else
    rc_is 1
    err_has "cannot write"
    size=$(wc -c <"$T/cut.csv" | tr -d ' ')
    [ "$size" -le 4096 ] || no "the CSV has $size bytes, above the limit"
    [ "$size" -gt 0 ] || no "the CSV is empty"
    # every line complete: a newline at the end, and as many fields as the header
    [ "$(tail -c 1 "$T/cut.csv" | od -An -c | tr -d ' ')" = '\n' ] ||
        no "the CSV ends in the middle of a row"
    awk -F, 'NR == 1 { n = NF } NF != n { bad = 1 } END { exit bad }' "$T/cut.csv" ||
        no "a row with another number of fields than the header"
fi
end

summary
