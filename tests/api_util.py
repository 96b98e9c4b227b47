"""What the Python package's tests share (tests/api_python.py,
tests/api_motion.py): the repository's paths, the package on sys.path,
a test decorator that counts, the command line run, the last line
"N passed, N failed" and the exit status."""
import os
import subprocess
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOLOSIM = os.environ.get("HOLOSIM", os.path.join(ROOT, "bin", "holosim"))
sys.path.insert(0, os.path.join(ROOT, "python"))

_counts = {"passed": 0, "failed": 0}


def test(fn):
    """Run fn now; an exception is a failure, printed with its traceback."""
    try:
        fn()
        _counts["passed"] += 1
    except Exception:
        _counts["failed"] += 1
        print("FAIL: %s" % fn.__name__)
        traceback.print_exc(limit=3, file=sys.stdout)
    return fn


def cli(*args):
    """holosim ARGS...: (exit code, stdout, stderr)."""
    p = subprocess.run([HOLOSIM] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def finish():
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    sys.exit(1 if _counts["failed"] else 0)
