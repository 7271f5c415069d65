# SPDX-License-Identifier: BSD-3-Clause
"""The command line of rocelab's Python tools (issue 39, "fail fast, fail kindly"):
--help prints the usage on stdout and exits 0 (argparse's own); a bad argument is one
line on stderr, "PROG: WHAT; see --help", and exit 2 (argparse prints the whole usage
first), an unknown option named before any missing argument (a typo is the cause)."""
import argparse
import difflib
import sys


def nearest(word, choices):
    """' (did you mean X?)' for the choice closest to word, or ''."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


class ArgParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose error() is one line and exit 2, and which names an
    unknown option first."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}; see --help\n")

    def unknown_option(self, argv):
        """The first argument that looks like an option and is none of ours (or None).
        The word after an option that takes a value is that value, not an option."""
        known = self._option_string_actions
        skip = False
        for arg in argv:
            if skip or arg == "-":
                skip = False
                continue
            if arg == "--":
                return None
            if not arg.startswith("-") or arg[1:2].isdigit():
                continue
            name = arg.split("=", 1)[0]
            match = [k for k in known if k == name or (name.startswith("--") and k.startswith(name))]
            if not match:
                return arg
            skip = "=" not in arg and known[match[0]].nargs != 0
        return None

    def check_options(self, args):
        """The arguments (sys.argv[1:] for None) after refusing an unknown option."""
        argv = sys.argv[1:] if args is None else list(args)
        bad = self.unknown_option(argv)
        if bad is not None:
            self.error(f"unknown option {bad}" + nearest(bad.split("=", 1)[0], self._option_string_actions))
        return argv

    def parse_args(self, args=None, namespace=None):
        return super().parse_args(self.check_options(args), namespace)

    def parse_intermixed_args(self, args=None, namespace=None):
        return super().parse_intermixed_args(self.check_options(args), namespace)
