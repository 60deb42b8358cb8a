"""`python -m aftermath ARGS` runs `aftermath ARGS` (the program the wheel
installed beside this interpreter), as the same process."""

import os
import sys

from aftermath import program


def main():
    exe = program()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("aftermath: %s is missing: reinstall the wheel\n" % exe)
        return 2
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
