#!/usr/bin/python3
"""scripts/experiment.py as a library (issue 39, items 5 and 8), imported here:
  - run_experiment(path) runs a small experiment (2 variants, 2 sizes, 4 ranks on the
    virtual clock) and returns its rows, which are results.csv's, read from rocelab-dp's
    --json documents (read_dp_json) and rounded as the nccl-tests lines print them;
  - errors raise ExpError, never SystemExit: a bad variant (code 2, FILE:LINE), a
    missing or foreign --json document (code 1);
  - plot(): the busbw picture's y axis starts at 0, the line rate is a line at the
    slowest host link's rate, a long title stays inside the image.
Prints TAP-like lines; exit 1 when a check fails.

usage: test_experiment_lib.py ROCELAB_DP DATA_DIR
"""
import csv
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import experiment  # noqa: E402
from expcheck import ExpError  # noqa: E402

passed = failed = 0


def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}")


def raises(fn):
    """The ExpError fn raises, or None; a SystemExit fails the test (a library must not exit)."""
    try:
        fn()
    except ExpError as e:
        return e
    except SystemExit as e:
        print(f"# SystemExit({e.code}) from a library call")
    return None


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    dp, data = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    with tempfile.TemporaryDirectory(prefix="rl-explib-") as tmp:
        exp_path = os.path.join(tmp, "small.yaml")
        with open(exp_path, "w") as f:
            f.write(f"name: small\ntitle: small\ntopology: {data}/emulated.yaml\n"
                    "collective: op=allreduce,sizes=64K:128K,data=on,chunk=32K\n"
                    "seeds: [1]\nplacements: {full: h0+h4+h1+h5}\n"
                    "variants:\n  - {label: 1 QP, coll: qps=1}\n"
                    "  - {label: 2 QPs split, coll: \"qps=2,mode=split\"}\n"
                    "baseline: 1 QP\n")
        out = os.path.join(tmp, "out")
        res = experiment.run_experiment(exp_path, out=out, pictures=False, dp=dp)
        rows = res["rows"]
        check(f"run_experiment returns 2 variants x 2 sizes ({len(rows)} rows), every element right",
              len(rows) == 4 and all(r["wrong"] == "0" for r in rows))
        with open(os.path.join(out, "results.csv")) as f:
            csv_rows = list(csv.DictReader(f))
        check("its rows are results.csv's (size, time, algbw, busbw)",
              [(int(c["size"]), float(c["time_us"]), float(c["algbw"]), float(c["busbw"])) for c in csv_rows]
              == [(r["size"], r["time_us"], r["algbw"], r["busbw"]) for r in rows])
        check("busbw = algbw x 1.5 at 4 ranks (to the 2 decimals printed)",
              all(abs(r["busbw"] - 1.5 * r["algbw"]) <= 0.011 for r in rows))
        check("the mean busbw per (variant, placement, size) is returned",
              res["busbw"][("2 QPs split", "full", 131072)] == rows[3]["busbw"])

        # one run by hand: read_dp_json gives what the text's nccl-tests line prints
        doc = os.path.join(tmp, "one.json")
        txt = os.popen(f"'{dp}' --clock virtual --flows 0 --name rl-explib-{os.getpid()} "
                       f"--topology '{data}/emulated.yaml' --coll op=allreduce,sizes=64K --json '{doc}' "
                       "2>/dev/null").read()
        got = experiment.read_dp_json(doc)
        line = next(l for l in txt.splitlines() if l.split()[:1] == ["65536"]).split()
        r = got["rows"][0]
        check(f"read_dp_json: size, time, algbw, busbw, #wrong as the line prints them ({' '.join(line[5:9])})",
              [r["size"], r["time_us"], r["algbw"], r["busbw"], r["wrong"]]
              == [int(line[0]), float(line[5]), float(line[6]), float(line[7]), line[8]])
        check(f"read_dp_json: the line rate is the host links' 100G = 12.5 GB/s ({got['line_rate_GBps']})",
              got["line_rate_GBps"] == 12.5)

        bad = os.path.join(tmp, "bad.yaml")
        with open(exp_path) as f, open(bad, "w") as g:
            g.write(f.read().replace("mode=split", "mode=roundrobin"))
        e = raises(lambda: experiment.run_experiment(bad, out=os.path.join(tmp, "bad"), pictures=False, dp=dp))
        check(f"a bad variant raises ExpError, code 2, naming FILE:LINE ({e})",
              e is not None and e.code == 2 and f"{bad}:9:" in str(e))
        e = raises(lambda: experiment.read_dp_json(os.path.join(tmp, "none.json")))
        check(f"a missing --json document raises ExpError, code 1 ({e})", e is not None and e.code == 1)
        foreign = os.path.join(tmp, "foreign.json")
        with open(foreign, "w") as f:
            json.dump({"format": "other/9"}, f)
        e = raises(lambda: experiment.read_dp_json(foreign))
        check(f"a document of another format raises ExpError, code 1 ({e})", e is not None and e.code == 1)

        # the busbw picture
        exp = {"title": "E1 at 128 ranks: ECMP against E-ECMP with 1, 4 and 16 QPs per connection, "
                        "split and round-robin, NCCL model, over a two-zone Clos fabric" * 2,
               "placements": {"full": "x"}, "variants": [{"label": "a"}, {"label": "b"}]}
        pts = {("a", "full", 1 << 20): 9.5, ("a", "full", 1 << 21): 10.0,
               ("b", "full", 1 << 20): 9.0, ("b", "full", 1 << 21): 9.8}
        fig = experiment.plot(exp, pts, os.path.join(tmp, "busbw.png"), 12.5)
        ax = fig.axes[0]
        check(f"busbw.png: the y axis starts at 0 (from {ax.get_ylim()[0]}) and shows the line rate",
              ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 12.5)
        flat = [ln for ln in ax.get_lines() if list(ln.get_ydata()) == [12.5, 12.5]]
        check("busbw.png: a line at the line rate, 12.5 GB/s, in the legend",
              len(flat) == 1 and "line rate" in flat[0].get_label())
        renderer = fig.canvas.get_renderer()
        box = fig._suptitle.get_window_extent(renderer)
        width = fig.get_size_inches()[0] * fig.dpi
        check(f"busbw.png: the title fits inside the image ({box.x0:.0f}..{box.x1:.0f} of {width:.0f} px)",
              box.x0 >= 0 and box.x1 <= width and "\n" in fig._suptitle.get_text())
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
