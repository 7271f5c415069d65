"""Where rocelab's programs and data files are, for the Python commands.

Two layouts:
- a source tree (ROOT holds meson.build): the programs built in ROOT/build,
  results in ROOT/results;
- an installed copy (meson install, the .deb): the scripts in
  PREFIX/share/rocelab/scripts, so ROOT is PREFIX/share/rocelab with topologies/,
  experiments/ and tools/ beside them; the programs in PREFIX/bin, else on PATH;
  results in the current directory's results/.

ROOT is found from this file's real path, so a command that is a symbolic link
(bin/rocelab-experiment) still finds its data.
"""
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def in_source_tree():
    """True when ROOT is a checkout (it holds meson.build), False when installed."""
    return os.path.isfile(os.path.join(ROOT, "meson.build"))


def program(name, env, built):
    """The program NAME to run: $ENV when set; in a source tree ROOT/build/BUILT/NAME
    (even when not built yet, so the error says where it was looked for); installed,
    PREFIX/bin/NAME, else NAME on PATH. Returns a path, or NAME when none is found."""
    if os.environ.get(env):
        return os.environ[env]
    if in_source_tree():
        return os.path.join(ROOT, "build", built, name)
    beside = os.path.normpath(os.path.join(ROOT, "..", "..", "bin", name))
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which(name) or name


def experiment_file(arg):
    """The experiment file ARG names: ARG itself when it exists, else a shipped one,
    ROOT/experiments/ARG (or ARG.yaml), so `rocelab-experiment e1-nccl` works from
    any directory. Returns ARG unchanged when neither exists (the loader says so)."""
    if os.path.exists(arg) or os.sep in arg:
        return arg
    for cand in (arg, arg + ".yaml"):
        path = os.path.join(ROOT, "experiments", cand)
        if os.path.isfile(path):
            return path
    return arg


def results_dir(name):
    """The default results folder of experiment NAME: ROOT/results/NAME in a source
    tree, results/NAME under the current directory when installed (ROOT is then not
    the user's to write)."""
    base = ROOT if in_source_tree() else os.getcwd()
    return os.path.join(base, "results", name)
