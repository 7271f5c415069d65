# SPDX-License-Identifier: BSD-3-Clause
"""The fabric as a picture: nodes by tier (hosts, RTSW, CTSW, ATSW), positions,
and the link directions each drawn line stands for.

A Topo comes from `rocelab-topo --json` (topo_from_json / topo_load) or, when
no topology file is given, is inferred from a run's link list (topo_infer).
scene_build() lays it out; above HOSTS_MAX hosts, the hosts of a leaf become one
rack node; above TIER_MAX nodes in a tier, consecutive nodes of that tier are
drawn as one group, so a 1,024-host fabric stays readable.
"""

import json
import os
import shutil
import subprocess

TIERS = ["host", "rtsw", "ctsw", "atsw"]  # bottom to top
TIER_LABEL = {"host": "hosts", "rtsw": "RTSW (leaf)", "ctsw": "CTSW (spine)",
              "atsw": "ATSW (aggregation)"}
HOSTS_MAX = 64  # more hosts than this: one node per rack (a leaf's hosts)
TIER_MAX = 32   # more switches in a tier than this: groups of consecutive ones


class TopoError(Exception):
    """The topology could not be read; str() says why."""


class Topo:
    """Nodes (name -> role, in file order: switches, then hosts), each host's
    leaf, and the links as (name, end_a, end_b)."""

    def __init__(self, name, roles, host_leaf, links, attach=None):
        self.name, self.roles, self.host_leaf, self.links = name, roles, host_leaf, links
        self.attach = attach or {}  # host -> veth, emulated, net_null, ... (when known)

    def switches(self):
        return [n for n, r in self.roles.items() if r != "host"]


def topo_from_json(d):
    """A Topo from the JSON of `rocelab-topo --json`."""
    roles = {s["name"]: s["role"] for s in d["switches"]}
    roles.update({h["name"]: "host" for h in d["hosts"]})
    links = [(lk["name"], lk["ends"][0], lk["ends"][1]) for lk in d["links"]]
    return Topo(d["name"], roles, {h["name"]: h["leaf"] for h in d["hosts"]}, links,
                {h["name"]: h["attach"] for h in d["hosts"]})


# where rocelab-topo is built, newest layout first (it moved from dataplane/ to topology/)
TOPO_TOOL_BUILT = [("build", "topology", "rocelab-topo"), ("build", "dataplane", "rocelab-topo")]


def find_topo_tool(root, installed_dir=None):
    """rocelab-topo: built in the checkout at `root`, else installed in
    installed_dir (next to the calling program), else on PATH; "rocelab-topo"
    when none is found (topo_load then says so)."""
    cands = [os.path.join(root, *parts) for parts in TOPO_TOOL_BUILT]
    if installed_dir:
        cands.append(os.path.join(installed_dir, "rocelab-topo"))
    for c in cands:
        if os.access(c, os.X_OK):
            return os.path.normpath(c)
    return shutil.which("rocelab-topo") or "rocelab-topo"


def topo_load(path, topo_tool):
    """Resolve a topology YAML with rocelab-topo --json. Raises TopoError."""
    try:
        p = subprocess.run([topo_tool, "--json", path], capture_output=True, text=True,
                           timeout=120)
    except OSError as e:
        raise TopoError(f"{topo_tool}: {e.strerror} (build it: ninja -C build)") from None
    if p.returncode != 0:
        raise TopoError(p.stderr.strip() or f"{topo_tool} --json {path}: exit {p.returncode}")
    return topo_from_json(json.loads(p.stdout))


def topo_infer(name, chans):
    """A Topo from link directions alone: a node with a single neighbour that
    itself has several is a host, hosts' neighbours are leaves, the leaves'
    other neighbours spines, the rest aggregation switches."""
    nbr, links, seen = {}, [], set()
    for c in chans:
        nbr.setdefault(c.src, set()).add(c.dst)
        nbr.setdefault(c.dst, set()).add(c.src)
        if c.link not in seen:
            seen.add(c.link)
            links.append((c.link, c.src, c.dst))
    roles = {}
    for n, ns in nbr.items():
        if len(ns) == 1 and len(nbr[next(iter(ns))]) > 1:
            roles[n] = "host"
    for n in list(roles):
        roles.setdefault(next(iter(nbr[n])), "rtsw")
    for n in [n for n, r in roles.items() if r == "rtsw"]:
        for m in nbr[n]:
            roles.setdefault(m, "ctsw")
    for n in nbr:
        roles.setdefault(n, "atsw")
    host_leaf = {n: next(iter(nbr[n])) for n, r in roles.items() if r == "host"}
    order = sorted(nbr, key=lambda n: (roles[n] == "host", list(nbr).index(n)))
    return Topo(name, {n: roles[n] for n in order}, host_leaf, links)


class Node:
    """A drawn node: an id, a label, its tier, x in [0, 1], and the topology
    nodes it stands for."""

    def __init__(self, nid, label, tier, members):
        self.id, self.label, self.tier, self.members = nid, label, tier, members
        self.x, self.y = 0.0, float(TIERS.index(tier))


class Line:
    """A drawn link direction between two drawn nodes ("A>B") and the run's
    link directions it stands for (keys "from>to")."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.key = f"{src}>{dst}"
        self.members = []


class Scene:
    """Nodes, lines and a map from topology node to drawn node."""

    def __init__(self, name, nodes, lines, node_of, aggregated):
        self.name, self.nodes, self.lines = name, nodes, lines
        self.node_of, self.aggregated = node_of, aggregated

    def node(self, nid):
        return next(n for n in self.nodes if n.id == nid)


def _order(topo, tier, prev_pos, nbr):
    """Nodes of a tier: hosts by leaf, leaves in file order, higher tiers by the
    mean position of their lower neighbours (keeps zones together)."""
    nodes = [n for n, r in topo.roles.items() if r == tier]
    if tier in ("host", "rtsw") or not prev_pos:
        return nodes

    def bary(n):
        xs = [prev_pos[m] for m in nbr.get(n, ()) if m in prev_pos]
        return sum(xs) / len(xs) if xs else 0.0
    return sorted(nodes, key=lambda n: (bary(n), nodes.index(n)))


def _group(names, limit):
    """Consecutive names in groups of at most ceil(len/limit) when above limit."""
    if len(names) <= limit:
        return [[n] for n in names]
    size = -(-len(names) // limit)
    return [names[i:i + size] for i in range(0, len(names), size)]


def _label(members):
    return members[0] if len(members) == 1 else f"{members[0]}..{members[-1]}"


def _tier_nodes(topo, tier, order, node_of):
    """The drawn nodes of one switch tier (grouped above TIER_MAX)."""
    out = []
    for g in _group(order, TIER_MAX):
        nid = _label(g)
        for m in g:
            node_of[m] = nid
        out.append(Node(nid, nid, tier, g))
    return out


def _host_nodes(topo, node_of):
    """Hosts, one node each, or one rack node per drawn leaf above HOSTS_MAX."""
    hosts = [n for n, r in topo.roles.items() if r == "host"]
    leaf_rank = {n: i for i, n in enumerate(topo.roles)}
    hosts.sort(key=lambda h: leaf_rank.get(topo.host_leaf.get(h), 0))
    if len(hosts) <= HOSTS_MAX:
        for h in hosts:
            node_of[h] = h
        return [Node(h, h, "host", [h]) for h in hosts]
    racks = {}
    for h in hosts:
        racks.setdefault(node_of.get(topo.host_leaf.get(h), "?"), []).append(h)
    out = []
    for leaf, members in racks.items():
        nid = f"rack {leaf}"
        for h in members:
            node_of[h] = nid
        out.append(Node(nid, f"{len(members)} hosts", "host", members))
    return out


def _place(nodes):
    """Spread each tier's nodes evenly over x in [0, 1]."""
    by_tier = {}
    for n in nodes:
        by_tier.setdefault(n.tier, []).append(n)
    for tier in by_tier.values():
        for i, n in enumerate(tier):
            n.x = (i + 0.5) / len(tier)


def scene_build(topo, chans=None):
    """Lay out a Topo. chans: the run's directions (Chan objects); without
    them each link gives both directions. Lines keep the order of the
    directions; a line's members are the directions it aggregates."""
    nbr = {}
    for _, a, b in topo.links:
        nbr.setdefault(a, set()).add(b)
        nbr.setdefault(b, set()).add(a)
    node_of, nodes, pos = {}, [], {}
    for tier in TIERS[1:]:
        order = _order(topo, tier, pos, nbr)
        tier_nodes = _tier_nodes(topo, tier, order, node_of)
        pos = {m: i / max(1, len(order)) for i, m in enumerate(order)}
        nodes += tier_nodes
    hosts = _host_nodes(topo, node_of)
    nodes = hosts + nodes
    _place(nodes)
    keys = [(c.src, c.dst) for c in chans] if chans is not None else \
        [d for _, a, b in topo.links for d in ((a, b), (b, a))]
    lines = {}
    for src, dst in keys:
        a, b = node_of.get(src), node_of.get(dst)
        if a is None or b is None:
            raise TopoError(f"link direction {src}>{dst}: {src if a is None else dst} "
                            f"is not in the topology {topo.name}")
        ln = lines.setdefault((a, b), Line(a, b))
        ln.members.append(f"{src}>{dst}")
    aggregated = any(len(n.members) > 1 for n in nodes)
    return Scene(topo.name, nodes, list(lines.values()), node_of, aggregated)
