#!/usr/bin/python3
"""Tests of topologies/rocelab_mininet.py that need no root and no DPDK:
rocelab-topo --json / --json-clos, the YAML the module writes for rocelab-dp
(it must load into the same fabric: ports, addresses, seeds, QoS, events),
and the Mininet Topo it builds (nodes, links, interface names, addresses
checked against the scheme in topologies/README.md, computed here
independently).

    /usr/bin/python3 test_topo_module.py ROCELAB_TOPO

Prints `ok - ...` / `not ok - ...` and `N passed, N failed`; exit 1 on failure.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOPO_DIR = os.path.join(REPO, 'topologies')

passed = failed = 0


def check(desc, cond, detail=''):
    global passed, failed
    if cond:
        passed += 1
        print('ok - ' + desc)
    else:
        failed += 1
        print('not ok - ' + desc + (': ' + detail if detail else ''))


def comparable(spec):
    """The resolved topology without what may legitimately differ."""
    d = json.loads(json.dumps(spec))
    for k in ('name', 'path', 'source'):
        d.pop(k, None)
    for h in d['hosts']:
        h.pop('ifname')
    return d


def first_difference(a, b):
    for k in a:
        if a[k] != b.get(k):
            return '%s: %s ... vs %s ...' % (k, str(a[k])[:200], str(b.get(k))[:200])
    return 'keys differ'


def reload(rm, text):
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as f:
        f.write(text)
    try:
        return rm.load_topology(path=f.name)
    finally:
        os.unlink(f.name)


def expected_addresses(spec):
    """host -> (ip/24, mac, gateway) from the README's scheme."""
    leaves = [s['name'] for s in spec['switches'] if s['role'] == 'rtsw']
    per_leaf = {}
    out = {}
    # a host's index under its leaf follows the leaf's port order
    for s in spec['switches']:
        if s['role'] != 'rtsw':
            continue
        hosts = [p['peer'] for p in s['ports'] if p['peer_kind'] == 'host']
        per_leaf[s['name']] = hosts
    for leaf, hosts in per_leaf.items():
        L = leaves.index(leaf)
        for i, h in enumerate(hosts):
            out[h] = ('10.%d.%d.%d/24' % (L >> 8, L & 255, i + 1),
                      '02:00:0a:%02x:%02x:%02x' % (L >> 8, L & 255, i + 1),
                      'via 10.%d.%d.254' % (L >> 8, L & 255))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    os.environ['ROCELAB_TOPO'] = os.path.abspath(sys.argv[1])
    sys.path.insert(0, TOPO_DIR)
    import rocelab_mininet as rm  # pylint: disable=import-outside-toplevel

    # --json-clos: the Clos the README describes
    spec = rm.load_topology(clos=(2, 3, 2))
    check('--json-clos 2,3,2: 5 switches, 6 hosts, 6 + 6 links',
          (len(spec['switches']), len(spec['hosts']), len(spec['links'])) == (5, 6, 12))
    h5 = [h for h in spec['hosts'] if h['name'] == 'h5'][0]
    check('--json-clos: h5 (leaf2, second host) is 10.0.2.2, 02:00:0a:00:02:02, gw 10.0.2.254',
          (h5['leaf'], h5['ipv4'], h5['mac'], h5['gateway4']) ==
          ('leaf2', '10.0.2.2', '02:00:0a:00:02:02', '10.0.2.254'), str(h5))

    # the YAML written for rocelab-dp loads into the same fabric
    sources = [('topologies/' + f, {'path': os.path.join(TOPO_DIR, f)})
               for f in ('default.yaml', 'clos-4x4x16.yaml', '3tier-2zones.yaml')]
    sources += [('clos,4,4,4', {'clos': (4, 4, 4)}), ('clos,1,3,5', {'clos': (1, 3, 5)})]
    for label, kw in sources:
        spec = rm.load_topology(**kw)
        ifn = {h['name']: 'mn%d-eth0' % i for i, h in enumerate(spec['hosts'])
               if h['attach'] == 'veth'}
        try:
            back = reload(rm, rm.topology_yaml(spec, ifn, label))
        except ValueError as e:
            check('%s: the generated YAML loads' % label, False, str(e))
            continue
        a, b = comparable(spec), comparable(back)
        check('%s: the generated YAML is the same fabric (%d switches, %d hosts, %d links, '
              '%d events)' % (label, len(spec['switches']), len(spec['hosts']),
                              len(spec['links']), len(spec['events'])),
              a == b, first_difference(a, b) if a != b else '')
        got = {h['name']: h['ifname'] for h in back['hosts'] if h['attach'] == 'veth'}
        check('%s: every veth host opens its Mininet interface' % label, got == ifn)
    spec = rm.load_topology(path=os.path.join(TOPO_DIR, '3tier-2zones.yaml'))
    check('3tier-2zones.yaml has events to carry over (the test above is not vacuous)',
          len(spec['events']) > 0)

    # the Mininet Topo
    topo = rm.RocelabClos(2, 2, 2)
    check('clos,2,2,2 Topo: 4 switches, 4 hosts, 4 Mininet links (fabric links stay in '
          'rocelab-dp)', (len(topo.switches()), len(topo.hosts()), len(topo.links())) ==
          (4, 4, 4))
    links = sorted(topo.links(withInfo=True))
    names = sorted((i['intfName1'], i['intfName2']) for _, _, i in links)
    check('clos,2,2,2 Topo: interfaces HOST-eth0 <-> LEAF-eth<rocelab port>',
          names == [('h0-eth0', 'leaf0-eth0'), ('h1-eth0', 'leaf0-eth1'),
                    ('h2-eth0', 'leaf1-eth0'), ('h3-eth0', 'leaf1-eth1')], str(names))
    for label, t in (('clos,4,4,4', rm.RocelabClos(4, 4, 4)),
                     ('default.yaml', rm.RocelabTopo(os.path.join(TOPO_DIR, 'default.yaml')))):
        exp = expected_addresses(t.rocelab)
        got = {h: (t.nodeInfo(h)['ip'], t.nodeInfo(h)['mac'], t.nodeInfo(h)['defaultRoute'])
               for h in t.hosts()}
        check('%s Topo: host IP/MAC/gateway follow 10.(L>>8).(L&255).(i+1) and '
              '02:00:0a:..' % label, got == exp and len(got) > 0,
              str(sorted(set(got.items()) ^ set(exp.items()))[:4]))
    t = rm.RocelabTopo(os.path.join(TOPO_DIR, 'clos-4x4x16.yaml'))
    n_veth = sum(1 for h in t.rocelab['hosts'] if h['attach'] == 'veth')
    check('clos-4x4x16.yaml (emulated NICs): only veth hosts become Mininet hosts (%d of %d)'
          % (n_veth, len(t.rocelab['hosts'])), len(t.hosts()) == n_veth)

    # long names fall back to short interface names
    longy = ('switches:\n'
             '  - {name: leaf-with-a-long-name, role: rtsw}\n'
             '  - {name: spine0, role: ctsw}\n'
             'hosts:\n'
             '  - {name: host-with-long-name, leaf: leaf-with-a-long-name}\n'
             '  - {name: h1, leaf: leaf-with-a-long-name}\n'
             'links:\n'
             '  - [leaf-with-a-long-name, spine0]\n')
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as f:
        f.write(longy)
    try:
        t = rm.RocelabTopo(f.name)
        ifs = sorted(n for _, _, i in t.links(withInfo=True)
                     for n in (i['intfName1'], i['intfName2']))
        check('long names: interface names fit IFNAMSIZ and are unique',
              all(len(n) <= 15 for n in ifs) and len(set(ifs)) == len(ifs), str(ifs))
        check('long names: rlh0-eth0 / rls0-eth0 fallbacks, Mininet names otherwise',
              ifs == ['h1-eth0', 'rlh0-eth0', 'rls0-eth0', 'rls0-eth1'], str(ifs))
    finally:
        os.unlink(f.name)

    # a bad topology is refused with rocelab-topo's FILE:LINE message
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as f:
        f.write('switches:\n  - {name: leaf0, role: rtsw, colour: red}\nhosts:\n'
                '  - {name: h0, leaf: leaf0}\n')
    try:
        rm.RocelabTopo(f.name)
        check('a bad topology raises ValueError', False, 'no exception')
    except ValueError as e:
        check("a bad topology raises ValueError with FILE:LINE (got '%s')" % e,
              ('%s:2:' % f.name) in str(e) and 'colour' in str(e))
    finally:
        os.unlink(f.name)

    # rocelab-topo --json on a missing file and a bad --json-clos both exit 2 (bad input)
    rc1 = subprocess.run([sys.argv[1], '--json', '/nonexistent.yaml'], capture_output=True,
                         timeout=30, check=False).returncode
    rc2 = subprocess.run([sys.argv[1], '--json-clos', '2,2'], capture_output=True,
                         timeout=30, check=False).returncode
    check('rocelab-topo --json missing file exits 2, --json-clos 2,2 exits 2 (got %d, %d)'
          % (rc1, rc2), (rc1, rc2) == (2, 2))

    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
