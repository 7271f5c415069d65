#!/usr/bin/python3
"""rocelab_mininet: rocelab fabrics in Mininet (Debian's mininet 2.3.0).

Every switch of the net runs in ONE `rocelab-dp` process (the DPDK data plane
that emulates the whole fabric: leaves, spines, links, PFC, ECMP); Mininet
creates the hosts (network namespaces) and one veth pair per host, and
rocelab-dp opens the switch-side end of each pair (net_af_packet). Switch to
switch links are NOT Mininet links: they live inside rocelab-dp, with the
rates, delays and losses of the topology.

Run it with /usr/bin/python3 (the Debian python that can import mininet),
as root, and preferably inside the sandbox of scripts/mininet.sh: Mininet's
clean-up (`mn -c`, and mn's error path) kills processes by name and deletes
every `*-ethN` link machine-wide; the sandbox gives it its own network, PID
and mount namespaces and a private /tmp.

With mn (all switches of the net become one rocelab-dp):

    scripts/mininet.sh --topo clos,2,2,2                 # = the line below, sandboxed
    mn --custom topologies/rocelab_mininet.py --topo clos,2,2,2 \\
       --switch rocelab --host rocelab --controller none [--test pingall]
    mn --custom topologies/rocelab_mininet.py --topo rocelab,topologies/default.yaml \\
       --switch rocelab --host rocelab --controller none
    mn -c --custom topologies/rocelab_mininet.py         # clean-up, ours included

As a script (sandboxed: scripts/mininet.sh --python topologies/rocelab_mininet.py
OPTIONS; a script given to --python must not live in /tmp, which is private):

    /usr/bin/python3 topologies/rocelab_mininet.py --topo clos,2,2,2 --pingall
    /usr/bin/python3 topologies/rocelab_mininet.py --topo topologies/default.yaml \
                     --iperf3 h0,h4 --cli
    /usr/bin/python3 topologies/rocelab_mininet.py --topo tree,2,2 --switch bridge --iperf3 h1,h4
    /usr/bin/python3 topologies/rocelab_mininet.py --clean

What the module provides (mn picks up the dictionaries `topos`, `switches`,
`hosts` at the end of the file):

  topos['clos']      RocelabClos(S, L, H): the 2-tier Clos `clos,SPINES,LEAVES,
                     HOSTS_PER_LEAF` (rocelab-topo --clos S,L,H: switches leaf0..,
                     spine0.., hosts h0.. with h0..h(H-1) on leaf0)
  topos['rocelab']   RocelabTopo(path): any rocelab YAML topology
                     (`--topo rocelab,FILE`; the script also takes a bare FILE.yaml)
  switches['rocelab'] RocelabSwitch: all RocelabSwitch nodes of a net run as one
                     rocelab-dp (batchStartup/batchShutdown)
  switches['bridge'] RocelabBridge: Mininet's LinuxBridge driven by iproute2
                     (`ip link ... type bridge`) instead of brctl, which Debian
                     ships in bridge-utils, not installed here; for comparisons on
                     tree topologies (`--topo tree,DEPTH,FANOUT --switch bridge`).
                     Mininet's own `--switch lxbr` works too where brctl exists.
  hosts['rocelab']   RocelabHost: offloads off (`ethtool -K IF tx off tso off
                     gso off gro off rx off`: TCP's partial checksums are wrong
                     after forwarding by a software switch), IPv6 off (rocelab-dp
                     routes IPv4; it drops IPv6 and counts it as drop "ipv6"),
                     the topology's MTU; addresses below
  Cleanup            rocelab_cleanup() is registered with Mininet's
                     addCleanupCallback: `mn -c --custom THIS_FILE` and
                     `THIS_FILE --clean` stop every rocelab-dp this module
                     started (by PID from its state file, checking the PID still
                     runs that fabric) and delete the interfaces it recorded.

Topology to Mininet: the Topo runs `rocelab-topo --json FILE` (or --json-clos
S,L,H) for the resolved topology and derived addresses. Every rocelab switch
becomes a Mininet switch, every `attach: veth` host a Mininet host linked to
its leaf; hosts with other attachments (emulated NICs, vhost VMs, PCI NICs)
stay in the fabric as the file says and are not Mininet nodes. A host gets:

  IPv4 10.(L>>8).(L&255).(i+1)/24 (leaf L in file order, host i under it),
  MAC 02:00:0a:(L>>8):(L&255):(i+1), default route via the gateway .254
  (answered by its leaf with proxy ARP), MTU from the topology.
  (`rocelab-topo --routes FILE` prints them; the IPv6 addresses it shows are
  not configured: the data plane does not forward IPv6 yet.)

Interface names: a host's is HOST-eth0, the switch side SWITCH-ethP with P
the rocelab port number (0-based, as in rocelab-dp's tables and `rocelab-topo
--routes`); names over 15 characters become rlhI-eth0 / rlsS-ethP (I, S the
host and switch index in the file). Mininet's own port number is P+1.

At start (batchStartup) RocelabSwitch writes the resolved topology back as
YAML into a private directory /tmp/rocelab-mininet/rocelab-mn-XXXXXXXX/, with
each host's `ifname` set to the switch-side interface of its Mininet link,
turns offloads off and sets MTU 9500 on those interfaces, and runs

    timeout --kill-after=5 SECONDS rocelab-dp --topology topo.yaml \\
            --name rocelab-mn-XXXXXXXX [ROCELAB_DP_ARGS]

in its own session, waiting for its banner ("rocelab-dp: ... telemetry").
The name is the DPDK file prefix and telemetry name (dpdk-telemetry.py -f
NAME; in scripts/mininet.sh's sandbox /run/dpdk is private, so query it from
inside, e.g. with mn's `sh` command). At stop (batchShutdown) it sends
SIGTERM (rocelab-dp prints its tables into its log), waits, SIGKILLs what is
left, by PID, and removes its directory and /run/dpdk/NAME. Mininet deletes
the links before it stops the switches, so rocelab-dp sees its ports vanish
for a moment first; that is harmless.

Environment:
  ROCELAB_DP          rocelab-dp to run (default REPO/build/dataplane/rocelab-dp)
  ROCELAB_TOPO        rocelab-topo (default: build/topology beside rocelab-dp's folder)
  ROCELAB_DP_TIMEOUT  the timeout wrapper's limit in seconds (default 86400)
  ROCELAB_DP_ARGS     extra rocelab-dp options, split on blanks (e.g.
                      "--csv /root/links.csv"; paths outside the private /tmp)
  ROCELAB_MN_LOG      copy rocelab-dp's log (banner, tables at exit) to this file
                      when the fabric stops

In the mn CLI start iperf3 by hand (Mininet's `iperf` hangs with Debian's
iperf 2.1.8):  h4 iperf3 -s -1 -D  then  h0 iperf3 -c h4 -t 3
Inside the sandbox Mininet prints "*** Error setting resource limits": some
of the sysctls it raises are not per network namespace; harmless.
"""

import argparse
import inspect
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from mininet.clean import addCleanupCallback
from mininet.log import error, info, output, warn
from mininet.node import Host, Switch
from mininet.nodelib import LinuxBridge
from mininet.topo import Topo

# mn --custom exec()s this file without __file__; the code object knows its path.
_THIS_FILE = os.path.abspath(inspect.currentframe().f_code.co_filename)
_REPO = os.path.dirname(os.path.dirname(_THIS_FILE))
# Per-fabric state (topology, log, PIDs) lives under here; clean-up reads it.
STATE_ROOT = '/tmp/rocelab-mininet'
_BANNER = re.compile(r'^rocelab-dp: .*telemetry', re.M)
_IFNAMSIZ = 15


# ------------------------------------------------------------------ tools

def rocelab_dp_path():
    """rocelab-dp: $ROCELAB_DP, else REPO/build/dataplane/rocelab-dp."""
    return os.environ.get('ROCELAB_DP') or os.path.join(_REPO, 'build', 'dataplane',
                                                         'rocelab-dp')


def rocelab_topo_path():
    """rocelab-topo: $ROCELAB_TOPO, in topology/ beside rocelab-dp's folder, next to
    rocelab-dp (installed), REPO/build/topology, or PATH."""
    if os.environ.get('ROCELAB_TOPO'):
        return os.environ['ROCELAB_TOPO']
    dp_dir = os.path.dirname(rocelab_dp_path())
    for cand in (os.path.join(dp_dir, '..', 'topology', 'rocelab-topo'),
                 os.path.join(dp_dir, 'rocelab-topo'),
                 os.path.join(_REPO, 'build', 'topology', 'rocelab-topo')):
        if os.access(cand, os.X_OK):
            return cand
    return shutil.which('rocelab-topo') or 'rocelab-topo'


def load_topology(path=None, clos=None):
    """The resolved topology (a dict, `rocelab-topo --json` format) of a YAML
    file or of the Clos (spines, leaves, hosts_per_leaf). Raises ValueError with
    rocelab-topo's message when the topology is invalid."""
    if clos is not None:
        args = ['--json-clos', ','.join(str(int(x)) for x in clos)]
    else:
        args = ['--json', path]
    tool = rocelab_topo_path()
    try:
        res = subprocess.run([tool] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=60, check=False)
    except FileNotFoundError:
        raise ValueError('rocelab-topo not found at %s (build: ninja -C build, or set '
                         'ROCELAB_TOPO)' % tool) from None
    if res.returncode != 0:
        raise ValueError(res.stderr.decode(errors='replace').strip() or
                         'rocelab-topo %s failed (exit %d)' % (' '.join(args), res.returncode))
    return json.loads(res.stdout.decode())


def _q(s):
    """A YAML double-quoted scalar (a JSON string is one)."""
    return json.dumps(str(s))


def _us(ns):
    """flowlet_timeout_us from nanoseconds, exact ("100", "12.5")."""
    whole, frac = divmod(int(ns), 1000)
    return str(whole) if frac == 0 else ('%d.%03d' % (whole, frac)).rstrip('0')


def topology_yaml(spec, ifnames=None, comment=''):
    """The resolved topology `spec` (load_topology()) as rocelab YAML with every
    setting written out, so the file loads into the same fabric (same ports,
    addresses, seeds, QoS, events). ifnames maps host name -> the interface
    rocelab-dp opens for that veth host (default: the spec's ifname)."""
    ifnames = ifnames or {}
    out = ['# Generated by rocelab_mininet.py%s.' % (' from ' + comment if comment else ''),
           '# Every setting is written out; host ifnames are the Mininet interfaces.',
           'name: %s' % _q(spec['name']),
           'switches:']
    for s in spec['switches']:
        out.append('  - {name: %s, role: %s, buffer: %s, profile: %s, algo: %s, seed: %d, '
                   'lb: %s, flowlet_timeout_us: %s, resilient_buckets: %d}' % (
                       _q(s['name']), _q(s['role']), _q(s['buffer']), _q(s['profile']),
                       _q(s['algo']), s['seed'], _q(s['lb']), _us(s['flowlet_timeout_ns']),
                       s['resilient_buckets']))
    out.append('hosts:')
    for h in spec['hosts']:
        fields = ['name: %s' % _q(h['name']), 'attach: %s' % _q(h['attach']),
                  'mtu: %d' % h['mtu']]
        if h['attach'] == 'veth':
            fields += ['netns: %s' % _q(h['netns']),
                       'ifname: %s' % _q(ifnames.get(h['name'], h['ifname']))]
        elif h['attach'] == 'vhost':
            fields.append('socket: %s' % _q(h['socket']))
        elif h['attach'] == 'pci':
            fields.append('pci: %s' % _q(h['pci']))
        out.append('  - {%s}' % ', '.join(fields))
    # Every link (host links included, in the loader's order) under links:, so
    # each switch numbers its ports exactly as in the original file.
    out.append('links:')
    for l in spec['links']:
        out.append('  - {name: %s, ends: [%s, %s], rate: %d, delay: %dns, mtu: %d, loss: %r}' % (
            _q(l['name']), _q(l['ends'][0]), _q(l['ends'][1]), l['rate_bps'], l['delay_ns'],
            l['mtu'], float(l['loss'])))
    if spec['events']:
        out.append('events:')
        for e in spec['events']:
            kind = 'link' if 'link' in e else 'switch'
            out.append('  - {at: %dns, %s: %s, action: %s}' % (e['at_ns'], kind, _q(e[kind]),
                                                                e['action']))
    q = spec['qos']
    out += ['qos:',
            '  dscp_map: [%s]' % ', '.join(str(p) for p in q['dscp_prio']),
            '  lossless: [%s]' % ', '.join(str(p) for p in q['lossless']),
            '  control: %d' % q['control'],
            '  dwrr: [%s]' % ', '.join(str(w) for w in q['dwrr']),
            '  ecn: {enabled: %s, kmin: %d, kmax: %d, pmax: %r}' % (
                'true' if q['ecn']['enabled'] else 'false', q['ecn']['kmin'],
                q['ecn']['kmax'], float(q['ecn']['pmax']))]
    return '\n'.join(out) + '\n'


# ------------------------------------------------------------------ topologies

def _intf_name(preferred, fallback):
    return preferred if len(preferred) <= _IFNAMSIZ else fallback


class RocelabTopo(Topo):
    """A rocelab YAML topology (`--topo rocelab,FILE`) as a Mininet Topo.

    Adds every switch, every veth host (with its derived IP, MAC, gateway and
    MTU as host parameters) and one Mininet link per veth host to its leaf.
    Fabric links stay inside rocelab-dp. self.rocelab is the resolved
    topology (rocelab-topo --json); every switch gets it as parameter
    `rocelab`, which RocelabSwitch needs."""

    def build(self, path=None, clos=None):  # pylint: disable=arguments-differ
        if path is None and clos is None:
            path = os.path.join(_REPO, 'topologies', 'default.yaml')
        spec = load_topology(path=path, clos=clos)
        spec['source'] = path if clos is None else 'clos,%d,%d,%d' % tuple(clos)
        self.rocelab = spec
        for i, s in enumerate(spec['switches']):
            self.addSwitch(s['name'], dpid='%x' % (i + 1), rocelab=spec)
        sw_index = {s['name']: i for i, s in enumerate(spec['switches'])}
        seen = set()
        for i, h in enumerate(spec['hosts']):
            if h['attach'] != 'veth':
                continue
            self.addHost(h['name'], ip='%s/%d' % (h['ipv4'], h['prefix4']), mac=h['mac'],
                         defaultRoute='via ' + h['gateway4'], rl_mtu=h['mtu'])
            hif = _intf_name('%s-eth0' % h['name'], 'rlh%d-eth0' % i)
            sif = _intf_name('%s-eth%d' % (h['leaf'], h['leaf_port']),
                             'rls%d-eth%d' % (sw_index[h['leaf']], h['leaf_port']))
            if sif in seen:
                raise ValueError('interface name %s is used twice; rename a switch' % sif)
            seen.add(sif)
            self.addLink(h['name'], h['leaf'], port1=0, port2=h['leaf_port'] + 1,
                         intfName1=hif, intfName2=sif)


class RocelabClos(RocelabTopo):
    """The 2-tier Clos `clos,SPINES,LEAVES,HOSTS_PER_LEAF` (rocelab-topo --clos)."""

    def build(self, spines=2, leaves=2, hosts=2):  # pylint: disable=arguments-differ
        RocelabTopo.build(self, clos=(spines, leaves, hosts))


# ------------------------------------------------------------------ hosts

def _offloads_off(node, intf):
    node.cmd('ethtool -K %s tx off tso off gso off gro off rx off >/dev/null 2>&1' % intf)


class RocelabHost(Host):
    """A Mininet host with offloads off on its interfaces, IPv6 off and the
    topology's MTU (parameter rl_mtu). Works on any topology (on Mininet's own
    topologies it keeps Mininet's addresses)."""

    def config(self, rl_mtu=None, **params):  # pylint: disable=arguments-differ
        r = Host.config(self, **params)
        self.cmd('sysctl -qw net.ipv6.conf.all.disable_ipv6=1 '
                 'net.ipv6.conf.default.disable_ipv6=1')
        for intf in self.intfList():
            if intf.name == 'lo':
                continue
            _offloads_off(self, intf.name)
            if rl_mtu:
                self.cmd('ip link set %s mtu %d' % (intf.name, int(rl_mtu)))
        return r


# ------------------------------------------------------------------ the fabric process

def _proc_args(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().split(b'\0')
    except OSError:
        return []


def _is_ours(pid, name):
    """pid runs (not a zombie) and has our unique fabric name on its command line."""
    return bool(pid) and name.encode() in _proc_args(pid)


def _children(pid):
    kids = []
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open('/proc/%s/stat' % d) as f:
                    if int(f.read().rsplit(')', 1)[1].split()[1]) == pid:
                        kids.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return kids


def _stop_pids(pids, name, grace=10.0):
    """SIGTERM the PIDs that still run fabric `name`, wait up to grace s, SIGKILL the rest."""
    live = [p for p in pids if _is_ours(p, name)]
    for p in live:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + grace
    while time.time() < deadline and any(_is_ours(p, name) for p in live):
        time.sleep(0.05)
    for p in live:
        if _is_ours(p, name):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _remove_runtime(name, state_dir):
    shutil.rmtree(os.path.join('/var/run/dpdk', name), ignore_errors=True)
    shutil.rmtree(state_dir, ignore_errors=True)


class RocelabFabric(object):
    """One rocelab-dp process serving a net's RocelabSwitch nodes."""

    def __init__(self, spec, ifnames):
        self.spec = spec
        self.ifnames = ifnames  # host -> switch-side interface
        self.name = 'rocelab-mn-' + secrets.token_hex(4)
        self.dir = None
        self.proc = None
        self.dp_pid = None
        self.log = None

    def _save_state(self):
        st = {'name': self.name, 'dir': self.dir, 'ifnames': sorted(self.ifnames.values()),
              'timeout_pid': self.proc.pid if self.proc else None, 'dp_pid': self.dp_pid}
        tmp = os.path.join(self.dir, 'state.json.tmp')
        with open(tmp, 'w') as f:
            json.dump(st, f)
        os.replace(tmp, os.path.join(self.dir, 'state.json'))

    def start(self, wait=30.0):
        dp = rocelab_dp_path()
        if not os.access(dp, os.X_OK):
            raise RuntimeError('rocelab-dp not found at %s (build: ninja -C build, or set '
                               'ROCELAB_DP)' % dp)
        os.makedirs(STATE_ROOT, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=self.name + '.', dir=STATE_ROOT)
        topo = os.path.join(self.dir, 'topo.yaml')
        with open(topo, 'w') as f:
            f.write(topology_yaml(self.spec, self.ifnames, self.spec.get('source', '')))
        self.log = os.path.join(self.dir, 'dp.log')
        limit = os.environ.get('ROCELAB_DP_TIMEOUT', '86400')
        cmd = ['timeout', '--kill-after=5', limit, dp, '--topology', topo, '--name', self.name]
        cmd += shlex.split(os.environ.get('ROCELAB_DP_ARGS', ''))
        info('*** rocelab-dp: %s\n' % ' '.join(cmd))
        self._save_state()  # the directory is there even if we die while starting
        with open(self.log, 'wb') as logf:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        self._save_state()
        deadline = time.time() + wait
        text = ''
        while time.time() < deadline:
            with open(self.log, errors='replace') as f:
                text = f.read()
            if _BANNER.search(text):
                break
            status = self.proc.poll()
            if status is not None:
                self.stop(quiet=True)
                raise RuntimeError('rocelab-dp exited during start (status %s):\n%s' % (
                    status, text[-3000:]))
            time.sleep(0.05)
        else:
            self.stop(quiet=True)
            raise RuntimeError('rocelab-dp printed no banner within %.0f s:\n%s' % (
                wait, text[-3000:]))
        kids = _children(self.proc.pid)
        self.dp_pid = kids[0] if kids else None
        self._save_state()
        info('*** %s\n' % _BANNER.search(text).group(0))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, quiet=False):
        """Stop rocelab-dp (SIGTERM: it prints its tables), by PID; clean up."""
        if self.proc is None:
            return ''
        _stop_pids([p for p in (self.proc.pid, self.dp_pid) if p], self.name)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        text = ''
        try:
            with open(self.log, errors='replace') as f:
                text = f.read()
        except OSError:
            pass
        if os.environ.get('ROCELAB_MN_LOG') and not quiet:
            with open(os.environ['ROCELAB_MN_LOG'], 'w') as f:
                f.write(text)
        _remove_runtime(self.name, self.dir)
        if not quiet:
            m = re.search(r'^rocelab-dp: ran .*$', text, re.M)
            info('*** %s\n' % (m.group(0) if m else 'rocelab-dp stopped (status %s)' %
                               self.proc.returncode))
        self.proc = None
        return text


def rocelab_cleanup():
    """Mininet clean-up callback: stop every rocelab-dp this module started
    (state files under /tmp/rocelab-mininet), by PID, and delete the
    interfaces it used. Safe to call when nothing runs."""
    if not os.path.isdir(STATE_ROOT):
        return
    for d in sorted(os.listdir(STATE_ROOT)):
        path = os.path.join(STATE_ROOT, d, 'state.json')
        try:
            with open(path) as f:
                st = json.load(f)
        except (OSError, ValueError):
            continue
        name = st.get('name', '')
        pids = [p for p in (st.get('timeout_pid'), st.get('dp_pid')) if p]
        if not st.get('dp_pid') and st.get('timeout_pid'):
            pids += _children(st['timeout_pid'])
        info('*** rocelab: stopping fabric %s (PIDs %s)\n' % (name, pids))
        _stop_pids(pids, name)
        for ifname in st.get('ifnames', []):
            subprocess.run(['ip', 'link', 'del', ifname], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=10, check=False)
        _remove_runtime(name, os.path.join(STATE_ROOT, d))


addCleanupCallback(rocelab_cleanup)


# ------------------------------------------------------------------ switches

class RocelabSwitch(Switch):
    """A rocelab switch. All RocelabSwitch nodes of a net are ONE rocelab-dp
    process, started in batchStartup and stopped in batchShutdown; the
    switches' Mininet interfaces are the host ports it opens. Needs a rocelab
    topology (RocelabTopo / RocelabClos: each switch has the `rocelab`
    parameter)."""

    def __init__(self, name, rocelab=None, **params):
        Switch.__init__(self, name, **params)
        self.rocelab = rocelab
        self.fabric = None

    def start(self, controllers):
        """Nothing per switch: batchStartup starts the fabric."""
        pass

    def connected(self):
        return self.fabric is not None and self.fabric.running()

    def stop(self, deleteIntfs=True):
        if self.fabric is not None:
            self.fabric.stop()
            self.fabric = None
        Switch.stop(self, deleteIntfs)

    @classmethod
    def batchStartup(cls, switches, **_kw):
        """Start one rocelab-dp for all `switches` (those of one net). Returns them."""
        switches = list(switches)
        if not switches:
            return []
        spec = switches[0].rocelab
        if spec is None:
            raise RuntimeError('--switch rocelab needs a rocelab topology (--topo clos,S,L,H '
                               'or rocelab,FILE); for Mininet topologies use --switch bridge')
        if any(s.rocelab is not spec for s in switches):
            raise RuntimeError('rocelab: the switches of a net must come from one topology')
        names = {s['name'] for s in spec['switches']}
        missing = names - {s.name for s in switches}
        if missing:
            raise RuntimeError('rocelab: switches %s are not RocelabSwitch nodes of this net'
                               % ', '.join(sorted(missing)))
        ifnames = {}
        for sw in switches:
            for intf in sw.intfList():
                link = getattr(intf, 'link', None)
                if not link:
                    continue
                peer = link.intf1 if link.intf2 is intf else link.intf2
                if isinstance(peer.node, Switch):
                    warn('*** rocelab: Mininet link %s-%s between switches is not used: fabric '
                         'links live in rocelab-dp\n' % (intf.name, peer.name))
                    continue
                ifnames[peer.node.name] = intf.name
                sw.cmd('ip link set %s mtu 9500' % intf.name)
                sw.cmd('sysctl -qw net.ipv6.conf.%s.disable_ipv6=1' % intf.name.replace('.', '/'))
                _offloads_off(sw, intf.name)
        absent = [h['name'] for h in spec['hosts']
                  if h['attach'] == 'veth' and h['name'] not in ifnames]
        if absent:
            raise RuntimeError('rocelab: veth hosts %s have no Mininet link to their leaf'
                               % ', '.join(absent))
        fabric = RocelabFabric(spec, ifnames)
        fabric.start()
        for sw in switches:
            sw.fabric = fabric
        return switches

    @classmethod
    def batchShutdown(cls, switches, **_kw):
        """Stop the rocelab-dp of these switches (by PID). Returns them."""
        for sw in switches:
            if sw.fabric is not None:
                sw.fabric.stop()  # the first one stops it; the others see proc None
            sw.fabric = None
        return switches


class RocelabBridge(LinuxBridge):
    """Mininet's LinuxBridge with iproute2 instead of brctl (bridge-utils is
    not installed here): a kernel bridge per switch, all its interfaces
    enslaved, offloads off, STP with stp=True. For comparison runs on tree
    topologies (`--topo tree,2,2 --switch bridge`); it cannot run a rocelab
    Clos (routed /24 per leaf, ECMP)."""

    def __init__(self, name, rocelab=None, **params):
        if rocelab is not None:
            raise RuntimeError('--switch bridge cannot run a rocelab topology (a routed /24 per '
                               'leaf); use --switch rocelab, or a Mininet topology such as '
                               'tree,2,2')
        LinuxBridge.__init__(self, name, **params)

    def connected(self):
        if not self.stp:
            return True
        return 'state forwarding' in self.cmd('ip -d link show master', self.name)

    def start(self, _controllers):
        self.cmd('ip link del %s 2>/dev/null' % self.name)
        self.cmd('ip link add name %s type bridge stp_state %d priority %d' % (
            self.name, 1 if self.stp else 0, int(self.prio)))
        for i in self.intfList():
            if i.name == 'lo':
                continue
            _offloads_off(self, i.name)
            self.cmd('ip link set %s master %s' % (i.name, self.name))
        self.cmd('ip link set %s up' % self.name)

    def stop(self, deleteIntfs=True):
        self.cmd('ip link del %s 2>/dev/null' % self.name)
        Switch.stop(self, deleteIntfs)

    def dpctl(self, *args):
        return self.cmd('bridge', *args)

    @classmethod
    def setup(cls):
        pass


# mn --custom reads these.
topos = {'clos': RocelabClos, 'rocelab': RocelabTopo}
switches = {'rocelab': RocelabSwitch, 'bridge': RocelabBridge}
hosts = {'rocelab': RocelabHost}


# ------------------------------------------------------------------ script mode

def run_iperf3(src, dst, seconds=3, extra=''):
    """iperf3 TCP from host src to host dst, started by hand (Mininet's
    iperf() hangs with iperf 2.1.8). Returns (received bit/s, iperf3 JSON
    result); raises RuntimeError when iperf3 fails."""
    limit = int(seconds) + 30
    server = dst.popen(['timeout', str(limit), 'iperf3', '-s', '-1'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):  # until the server listens (port 5201)
            if ':5201' in dst.cmd('ss -Hltn sport = :5201'):
                break
            time.sleep(0.05)
        out = src.cmd('timeout %d iperf3 -c %s -t %d -J %s; echo "rc=$?"' % (
            limit, dst.IP(), int(seconds), extra))
        body, _, rc = out.rpartition('rc=')
        try:
            res = json.loads(body[body.index('{'):])
        except ValueError:
            raise RuntimeError('iperf3 printed no result (exit %s): %s' % (
                rc.strip(), out[-500:])) from None
        if rc.strip() != '0' or 'error' in res:
            raise RuntimeError('iperf3 failed (exit %s): %s' % (rc.strip(), res.get('error')))
        return res['end']['sum_received']['bits_per_second'], res
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)


def _build_topo(spec):
    """A Topo from --topo: clos,S,L,H | rocelab,FILE | FILE.yaml | a Mininet topo."""
    name, _, rest = spec.partition(',')
    if name == 'clos':
        nums = [int(x) for x in rest.split(',')] if rest else []
        if len(nums) != 3:
            raise ValueError('--topo clos,SPINES,LEAVES,HOSTS_PER_LEAF')
        return RocelabClos(*nums)
    if name == 'rocelab':
        return RocelabTopo(path=rest)
    if spec.endswith(('.yaml', '.yml')) or os.path.isfile(spec):
        return RocelabTopo(path=spec)
    from mininet.topo import LinearTopo, MinimalTopo, SingleSwitchTopo
    from mininet.topolib import TreeTopo
    from mininet.util import buildTopo
    return buildTopo({'minimal': MinimalTopo, 'linear': LinearTopo, 'single': SingleSwitchTopo,
                      'tree': TreeTopo}, spec)


def _parse_args(argv):
    p = argparse.ArgumentParser(
        prog='rocelab_mininet.py', formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split('\n\n', 1)[0],
        epilog=__doc__.split('\n\n', 1)[1] +
        '\nExit status: 0 ok; 1 a ping was lost, iperf3 failed or the net did not start;'
        ' 2 bad arguments.')
    p.add_argument('--topo', default='clos,2,2,2',
                   help='clos,S,L,H | rocelab,FILE | FILE.yaml | a Mininet topology such as '
                        'tree,2,2 (default clos,2,2,2)')
    p.add_argument('--switch', choices=['rocelab', 'bridge'], default=None,
                   help='rocelab (default for rocelab topologies) or bridge (default otherwise)')
    p.add_argument('--pingall', action='store_true',
                   help='net.pingAll(); fails unless 0%% loss (the default action)')
    p.add_argument('--iperf3', metavar='SRC,DST', help='iperf3 TCP from host SRC to DST')
    p.add_argument('--time', type=int, default=3, help='iperf3 seconds (default 3)')
    p.add_argument('--cli', action='store_true', help='open the Mininet CLI')
    p.add_argument('--wait', action='store_true',
                   help='after the actions print "rocelab_mininet: ready" and block until '
                        'SIGTERM/SIGINT')
    p.add_argument('--clean', action='store_true',
                   help="run Mininet's clean-up (ours included) and exit; in a sandbox only")
    p.add_argument('-v', '--verbosity', default='info',
                   choices=['debug', 'info', 'output', 'warning', 'error'])
    return p.parse_args(argv)


def _script(argv):
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    args = _parse_args(argv)
    setLogLevel(args.verbosity)
    if args.clean:
        from mininet.clean import cleanup as mn_cleanup
        mn_cleanup()
        return 0
    try:
        topo = _build_topo(args.topo)
    except (ValueError, TypeError, KeyError) as e:
        error('rocelab_mininet: --topo %s: %s\n' % (args.topo, e))
        return 2
    rl = hasattr(topo, 'rocelab')
    switch = args.switch or ('rocelab' if rl else 'bridge')
    if switch == 'rocelab' and not rl:
        error('rocelab_mininet: --switch rocelab needs a rocelab topology\n')
        return 2
    if switch == 'bridge' and rl:
        error('rocelab_mininet: --switch bridge cannot run a rocelab topology (a routed /24 '
              'per leaf); try --topo tree,2,2\n')
        return 2
    try:
        net = Mininet(topo=topo, switch=switches[switch], host=RocelabHost, controller=None,
                      autoSetMacs=not rl)
    except Exception as e:  # pylint: disable=broad-except
        error('rocelab_mininet: building the net: %s: %s\n' % (type(e).__name__, e))
        return 1

    def on_term(_sig, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    rc = 0
    try:
        net.start()
        if args.pingall or not (args.iperf3 or args.cli or args.wait):
            loss = net.pingAll()
            output('rocelab_mininet: pingall loss %s%%\n' % loss)
            if loss != 0:
                rc = 1
        if args.iperf3:
            src, dst = args.iperf3.split(',')
            bps, res = run_iperf3(net.get(src), net.get(dst), args.time)
            output('rocelab_mininet: iperf3 %s -> %s: %.1f Mbit/s received, %d retransmits\n'
                   % (src, dst, bps / 1e6, res['end']['sum_sent'].get('retransmits', -1)))
            if bps <= 0:
                rc = 1
        if args.cli:
            from mininet.cli import CLI
            CLI(net)
        if args.wait:
            output('rocelab_mininet: ready\n')
            sys.stdout.flush()
            while True:
                time.sleep(1)
    except KeyboardInterrupt:
        info('*** interrupted\n')
    except Exception as e:  # pylint: disable=broad-except
        error('rocelab_mininet: %s: %s\n' % (type(e).__name__, e))
        rc = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        net.stop()
    return rc


if __name__ == '__main__':
    sys.exit(_script(sys.argv[1:]))
