#!/usr/bin/env python3
# Run a command (stdout to the null device, stderr kept) and print its wall
# and CPU (user + system) time in microseconds and its peak resident set in
# KB: "WALL CPU MAXRSS".  os.wait4 gives the child's own resource usage at
# microsecond resolution (GNU time's %U has 10 ms).  Exit status: the
# command's.
#   python3 bench/timecmd.py OUT_FILE CMD ARGS...    (OUT_FILE gets stdout)
import os, sys, time
out = open(sys.argv[1], "wb")
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out.fileno(), 1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
t1 = time.perf_counter()
print(int((t1 - t0) * 1e6), int((ru.ru_utime + ru.ru_stime) * 1e6), ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
