# SPDX-License-Identifier: BSD-3-Clause
"""An experiment file checked before any run (issue 39, "fail fast, fail kindly"):
every key and every variant, the profile names, the topology file, the collective's
key=value pairs that can be checked without rocelab-dp. A mistake in the last variant
is found before the first run, named FILE:LINE in the user's file (from the YAML
loader's node marks), with the valid keys or values and the nearest one.

  exp = expcheck.load(path)      the file as a dict, checked; ExpError if bad
  ExpError(msg, code)            code 2: bad input; 1: a run failed (experiment.py)
"""
import difflib
import os

try:
    import yaml
except ImportError:  # experiment.main() says which package to install
    yaml = None


class ExpError(Exception):
    """What went wrong, and the exit code: 2 for bad input, 1 for a failed run."""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


# The file's keys (experiments/README.md "Format"); REQUIRED must be there.
TOP_KEYS = ("name", "title", "topology", "collective", "workload", "jobs", "seeds", "placements",
            "variants", "baseline", "claim", "nccl", "nic", "dp_args", "slow")
REQUIRED = ("name", "topology", "variants", "baseline")
# what runs: one of these (collective: --coll; workload: --workload; jobs: --jobs FILE)
WHAT_RUNS = ("collective", "workload", "jobs")
VARIANT_KEYS = ("label", "switch", "topology", "coll", "dp_args", "nccl", "policy")
# workload: and jobs: (scripts/exp_jobs.py): --workload's kinds, the scheduler's policies
# (workload/wl_sched.c), the claim kinds that need no placement
WORKLOAD_KINDS = ("chakra:", "astra:", "llm:")
POLICIES = ("packed", "spread", "random", "topology-aware")
JOBS_CLAIM_KINDS = ("gain", "note")
# a variant's switch: is merged into defaults.switch (topology/topo.c switch_val_keys);
# names from hashing/rl_hash.c (profile_names, algo_names) and topology/topo.c (lb_names)
SWITCH_KEYS = ("buffer", "profile", "algo", "seed", "lb", "flowlet_timeout_us",
               "resilient_buckets")
SWITCH_VALUES = {"profile": ("5tuple", "eecmp", "dqpn", "3tuple"),
                 "algo": ("crc16", "crc32", "crc32c", "xor", "toeplitz"),
                 "lb": ("ecmp", "resilient", "flowlet", "pinning")}
# The --coll language (keys, values, ranges) has one owner, the key table of
# nic_emul/ne_coll_keys.c: here only the shape "key=value,..."; experiment.py asks
# rocelab-dp --check --coll for every variant's whole spec before the first run.
PLACEMENT_KEYS = ("racks", "hosts_per_rack", "servers_per_rack", "pick", "order", "seed")
PLACEMENT_VALUES = {"order": ("rack-aware", "interleave", "random"), "pick": ("first", "random")}
CLAIM_KINDS = {"gain": ("paper_pct",), "degradation": ("variant", "from", "to", "paper_pct"),
               "note": ()}


def nearest(word, valid):
    """' (did you mean X?)' for the valid word closest to word, or ''."""
    close = difflib.get_close_matches(str(word), [str(v) for v in valid], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown(what, word, valid):
    """The message for a word that is not one of valid: all of them and the nearest."""
    return f"unknown {what} {word!r}{nearest(word, valid)}; valid: {', '.join(map(str, valid))}"


class Marked:
    """A YAML file loaded with its lines: data (the file as Python values) and
    where(*path), "FILE:LINE" of the value at path (mapping keys and list indexes),
    or of the closest enclosing value the file has."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path) as f:
                text = f.read()
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            self.data = yaml.safe_load(text)
        except OSError as e:
            raise ExpError(f"{path}: {e.strerror}") from e
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            at = f"{path}:{mark.line + 1}" if mark else path
            raise ExpError(f"{at}: not valid YAML: {getattr(e, 'problem', None) or e}") from e
        self.lines = {}
        if node is not None:
            self._walk(node, ())

    def _walk(self, node, path):
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    self._walk(v, path + (k.value,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, path + (i,))

    def where(self, *path):
        while path not in self.lines and path:
            path = path[:-1]
        return f"{self.path}:{self.lines[path]}" if path in self.lines else self.path

    def fail(self, path, msg):
        """ExpError naming FILE:LINE of path."""
        return ExpError(f"{self.where(*path)}: {msg}")


def check_keys(m, path, mapping, valid, what):
    """Every key of mapping is one of valid."""
    for k in mapping:
        if k not in valid:
            raise m.fail(path + (k,), unknown(what, k, valid))


def check_kv(m, path, spec, what):
    """A --coll suffix "k=v,k=v": its shape (its keys and values: rocelab-dp, later)."""
    if not isinstance(spec, str):
        raise m.fail(path, f"{what}: expected \"key=value,...\" (rocelab-dp --coll), got {spec!r}")
    for pair in filter(None, spec.split(",")):
        k, eq, v = pair.partition("=")
        if not eq or not k:
            raise m.fail(path, f"{what}: {pair!r} is not key=value")


def check_nccl(m, path, keys):
    """A `nccl:` mapping of --coll keys (model, NCCL_*, proxy costs): its shape."""
    if keys is None:
        return
    if not isinstance(keys, dict):
        raise m.fail(path, "nccl: expected a mapping of --coll keys (NCCL_IB_QPS_PER_CONNECTION: "
                     f"16, ...), got {keys!r}")
    for k, v in keys.items():
        if isinstance(v, (dict, list)) or "," in str(v) or "=" in str(v):
            raise m.fail(path + (k,), f"nccl: {k}: expected one value, got {v!r}")


def check_dp_args(m, path, args):
    if args is not None and not (isinstance(args, list) and all(isinstance(x, str) for x in args)):
        raise m.fail(path, "dp_args: expected a list of rocelab-dp arguments ([\"--mbufs\", "
                     f"\"131071\"]), got {args!r}")


def check_variant(m, i, v, labels):
    """Variant i: its keys, label, switch settings, topology overrides, coll, nccl, dp_args."""
    p = ("variants", i)
    if not isinstance(v, dict):
        raise m.fail(p, f"a variant is a mapping ({{label: ..., switch: ...}}), got {v!r}")
    check_keys(m, p, v, VARIANT_KEYS, "variant key")
    label = v.get("label")
    if not isinstance(label, str) or not label:
        raise m.fail(p, "a variant needs a label (text)")
    if label in labels:
        raise m.fail(p + ("label",), f"label {label!r} is used twice")
    labels.append(label)
    sw = v.get("switch")
    if sw is not None:
        if not isinstance(sw, dict):
            raise m.fail(p + ("switch",), f"switch: expected a mapping ({{profile: eecmp}}), got {sw!r}")
        check_keys(m, p + ("switch",), sw, SWITCH_KEYS, "switch key")
        for k, names in SWITCH_VALUES.items():
            if k in sw and sw[k] not in names:
                raise m.fail(p + ("switch", k), f"switch: {k}: " + unknown("name", sw[k], names))
    if v.get("topology") is not None and not isinstance(v["topology"], dict):
        raise m.fail(p + ("topology",), "topology: expected a mapping merged into the topology "
                     f"({{qos: {{lossless: []}}}}), got {v['topology']!r}")
    if v.get("coll") is not None:
        check_kv(m, p + ("coll",), v["coll"], "coll")
    check_nccl(m, p + ("nccl",), v.get("nccl"))
    check_dp_args(m, p + ("dp_args",), v.get("dp_args"))


def topology_hosts(path):
    """The host names of a topology file ([] when it lists none, or cannot be read:
    rocelab-dp --check says why before the runs)."""
    try:
        with open(path) as f:
            topo = yaml.safe_load(f)
        return [h["name"] for h in topo.get("hosts") or [] if isinstance(h, dict) and "name" in h]
    except (OSError, yaml.YAMLError, AttributeError, TypeError):
        return []


def check_hosts(m, pls, hosts):
    """Placements given as "h0+h4+...": hosts of the topology, each once, at least 2."""
    for name, spec in pls.items():
        if not isinstance(spec, str) or spec == "all" or not hosts:
            continue
        ring = spec.split("+")
        where = ("placements", name)
        for h in ring:
            if h not in hosts:
                raise m.fail(where, f"placement {name!r}: " + unknown("host", h, hosts))
        if len(set(ring)) != len(ring) or len(ring) < 2:
            raise m.fail(where, f"placement {name!r}: a ring of 2 or more hosts, each once "
                         f"(h0+h4+h1+...), got {spec!r}")


def check_topology(m, exp):
    """The topology: {generate: SPEC} (rocelab-topo checks SPEC), or a file that exists,
    whose hosts the placements name."""
    t = exp["topology"]
    if isinstance(t, dict) and list(t) == ["generate"] and isinstance(t["generate"], str):
        return
    if not isinstance(t, str):
        raise m.fail(("topology",), "topology: expected a file name or {generate: \"KEY=VALUE,...\"} "
                     f"(rocelab-topo --generate), got {t!r}")
    path = os.path.join(os.path.dirname(os.path.abspath(m.path)), t)
    if not os.path.isfile(path):
        raise m.fail(("topology",), f"topology: no such file {path}")
    check_hosts(m, exp.get("placements", {}), topology_hosts(path))


def check_placements(m, pls):
    """What can be checked without the fabric: the form, keys and names (the counts
    against the fabric's racks are experiment.placement_hosts')."""
    if not isinstance(pls, dict) or not pls:
        raise m.fail(("placements",), f"placements: expected a mapping NAME: \"h0+h1+...\" or "
                     f"NAME: {{racks: N, ...}}, got {pls!r}")
    for name, spec in pls.items():
        p = ("placements", name)
        if isinstance(spec, str):
            continue
        if not isinstance(spec, dict):
            raise m.fail(p, f"placement {name!r}: expected \"h0+h1+...\" or a mapping "
                         f"({{racks: N, hosts_per_rack: H, order: rack-aware|interleave|random, "
                         f"seed: S}}), got {spec!r}")
        check_keys(m, p, spec, PLACEMENT_KEYS, f"key of placement {name!r}:")
        if "hosts_per_rack" in spec and "servers_per_rack" in spec:
            raise m.fail(p + ("servers_per_rack",), f"placement {name!r}: give hosts_per_rack "
                         f"or servers_per_rack (whole servers), not both")
        for k, names in PLACEMENT_VALUES.items():
            if k in spec and spec[k] not in names:
                raise m.fail(p + (k,), f"placement {name!r}: {k}: expected one of "
                             f"{', '.join(names)}, got {spec[k]!r}{nearest(spec[k], names)}")


def check_claim(m, claim, labels, placements):
    if claim is None:
        return
    if not isinstance(claim, dict):
        raise m.fail(("claim",), f"claim: expected a mapping {{text: ..., kind: ...}}, got {claim!r}")
    kind = claim.get("kind", "gain")
    if kind not in CLAIM_KINDS:
        raise m.fail(("claim", "kind"), "claim: " + unknown("kind", kind, list(CLAIM_KINDS)))
    for k in CLAIM_KINDS[kind]:
        if k not in claim:
            raise m.fail(("claim",), f"claim: kind {kind} needs {k} "
                         f"({', '.join(CLAIM_KINDS[kind])})")
    if kind == "degradation":
        if claim["variant"] not in labels:
            raise m.fail(("claim", "variant"), "claim: " + unknown("variant", claim["variant"], labels))
        for k in ("from", "to"):
            if claim[k] not in placements:
                raise m.fail(("claim", k), f"claim: {k}: " + unknown("placement", claim[k], placements))


def check_jobs(m, exp):
    """workload: or jobs: (what can be checked here: rocelab-dp --check reads the rest
    before the runs): the workload's kind, the job file's presence, no placements, the
    variants' policies, a claim kind that needs no placement."""
    if "placements" in exp:
        raise m.fail(("placements",), "placements: only with collective:; the jobs' hosts are "
                     "the job file's scheduler's (a variant's policy:) or the workload's hosts=")
    if "workload" in exp:
        w = exp["workload"]
        if not isinstance(w, str) or not w.startswith(WORKLOAD_KINDS):
            raise m.fail(("workload",), f"workload: expected \"KIND:SOURCE[,key=value...]\" with KIND "
                         f"one of {', '.join(k[:-1] for k in WORKLOAD_KINDS)} (rocelab-dp --workload), "
                         f"got {w!r}")
    else:
        j = exp["jobs"]
        path = os.path.join(os.path.dirname(os.path.abspath(m.path)), str(j))
        if not isinstance(j, str) or not os.path.isfile(path):
            raise m.fail(("jobs",), f"jobs: expected a job file next to the experiment "
                         f"(docs/reference/rocelab-place.md), got {j!r}"
                         + (f": no such file {path}" if isinstance(j, str) else ""))
    for i, v in enumerate(exp.get("variants") or []):
        if isinstance(v, dict) and "policy" in v:
            if "jobs" not in exp:
                raise m.fail(("variants", i, "policy"), "policy: only with jobs: (the scheduler's)")
            if v["policy"] not in POLICIES:
                raise m.fail(("variants", i, "policy"), "policy: " + unknown("policy", v["policy"], POLICIES))
    kind = exp.get("claim", {}).get("kind", "gain") if isinstance(exp.get("claim"), dict) else "gain"
    if kind not in JOBS_CLAIM_KINDS:
        raise m.fail(("claim", "kind"), f"claim: kind {kind} compares placements; with "
                     f"{'workload' if 'workload' in exp else 'jobs'}: only {' or '.join(JOBS_CLAIM_KINDS)}")


def check(m):
    """Everything of the file m (a Marked) that can be checked without running."""
    exp = m.data
    if not isinstance(exp, dict):
        raise m.fail((), "not a mapping of experiment keys (see experiments/README.md)")
    check_keys(m, (), exp, TOP_KEYS, "key")
    for key in REQUIRED:
        if key not in exp:
            raise m.fail((), f"missing key '{key}'")
    runs = [k for k in WHAT_RUNS if k in exp]
    if len(runs) != 1:
        raise m.fail((runs[1],) if runs else (), f"one of {', '.join(WHAT_RUNS)} says what runs; "
                     f"got {', '.join(runs) if runs else 'none'}")
    if runs[0] != "collective":
        check_jobs(m, exp)
    else:
        check_kv(m, ("collective",), exp["collective"], "collective")
    for i, v in enumerate(exp.get("variants") or []):
        if runs[0] == "collective" and isinstance(v, dict) and "policy" in v:
            raise m.fail(("variants", i, "policy"), "policy: only with jobs: (the scheduler's)")
    seeds = exp.get("seeds", [1])
    if not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise m.fail(("seeds",), f"seeds: expected a list of integers ([1, 2, 3]), got {seeds!r}")
    check_placements(m, exp.get("placements", {"all": "all"}))
    check_nccl(m, ("nccl",), exp.get("nccl"))
    check_dp_args(m, ("dp_args",), exp.get("dp_args"))
    if exp.get("nic") is not None and not isinstance(exp["nic"], str):
        raise m.fail(("nic",), f"nic: expected \"key=value,...\" (rocelab-dp --nic), got {exp['nic']!r}")
    if not isinstance(exp["variants"], list) or not exp["variants"]:
        raise m.fail(("variants",), "variants: expected a list of variants")
    labels = []
    for i, v in enumerate(exp["variants"]):
        check_variant(m, i, v, labels)
    if exp["baseline"] not in labels:
        raise m.fail(("baseline",), "baseline: " + unknown("variant label", exp["baseline"], labels))
    check_claim(m, exp.get("claim"), labels, list(exp.get("placements", {"all": "all"})))
    check_topology(m, exp)


def load(path):
    """The experiment file at path, checked, with its defaults (seeds [1], placement
    all, title = name) and "_marked" (its Marked, for FILE:LINE later). Raises
    ExpError (code 2) naming FILE:LINE of the first mistake."""
    m = Marked(path)
    check(m)
    exp = m.data
    exp.setdefault("seeds", [1])
    if "collective" in exp:
        exp.setdefault("placements", {"all": "all"})
    exp.setdefault("title", exp["name"])
    exp["_marked"] = m
    return exp
