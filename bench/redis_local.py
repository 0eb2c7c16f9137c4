"""Local Redis servers and clusters on loopback for tests and benchmarks: each server in its own temporary
folder, stopped (SIGKILL) on exit, even when the caller fails, and when this process dies (parent-death
signal). Needs Debian's redis-server (and redis-cli for clusters).

    with redis_server() as srv:               # srv.url == "redis://127.0.0.1:P"
    with redis_cluster(3, 1) as cl:           # 3 masters, each with a replica; cl.url names every node
"""

import contextlib
import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

REDIS = shutil.which("redis-server")
CLI = shutil.which("redis-cli")


def _free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    """A loopback port free now whose cluster bus port (+10000) is free too, below 55535."""
    for _ in range(500):
        p = random.randrange(20000, 55000)
        if _free(p) and _free(p + 10000):
            return p
    raise RuntimeError("no free port")


def _die_with_parent():
    try:
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Server:
    def __init__(self, *extra, password=None):
        self.dir = tempfile.mkdtemp(prefix="gt-redis-")
        self.port = free_port()
        self.password = password
        self.args = [REDIS, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
                     "--dir", self.dir, "--protected-mode", "no", "--loglevel", "warning",
                     "--logfile", os.path.join(self.dir, "redis.log"), *extra]
        if password:
            self.args += ["--requirepass", password]
        self.p = None
        self.start()

    @property
    def addr(self):
        return f"127.0.0.1:{self.port}"

    @property
    def url(self):
        return f"redis://{self.addr}"

    def cli(self, *args):
        env = dict(os.environ, REDISCLI_AUTH=self.password) if self.password else None
        return subprocess.run([CLI, "-h", "127.0.0.1", "-p", str(self.port), *args], capture_output=True, text=True,
                              env=env, timeout=30).stdout

    def start(self):
        self.p = subprocess.Popen(self.args, preexec_fn=_die_with_parent, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64):
                        return
            except OSError:
                pass
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"redis-server did not start on {self.port}: " + open(os.path.join(self.dir, "redis.log")).read())

    def info(self, field):
        for line in self.cli("info").splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
        return ""

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def kill(self):
        if self.p is not None and self.p.poll() is None:
            self.p.send_signal(signal.SIGKILL)
            self.p.wait()

    def close(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    def __init__(self, masters=3, replicas=1, *extra):
        self.nodes = []
        try:
            for _ in range(masters * (1 + replicas)):
                self.nodes.append(Server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                         "--cluster-node-timeout", "2000", *extra))
            out = subprocess.run([CLI, "--cluster", "create", *[n.addr for n in self.nodes], "--cluster-replicas",
                                  str(replicas), "--cluster-yes"], capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise RuntimeError("redis-cli --cluster create: " + out.stdout + out.stderr)
            self.wait_ok()
        except BaseException:
            self.close()
            raise

    @property
    def url(self):
        return "redis://" + ",".join(n.addr for n in self.nodes)

    def wait_ok(self, within=30):
        deadline = time.time() + within
        while time.time() < deadline:
            ok = True
            for n in self.nodes:
                if not n.alive():
                    continue
                if "cluster_state:ok" not in n.cli("cluster", "info"):
                    ok = False
                    break
                if n.info("role") == "slave" and n.info("master_link_status") != "up":
                    ok = False
                    break
            if ok:
                return
            time.sleep(0.1)
        raise RuntimeError("cluster not ok")

    def masters(self):
        return [n for n in self.nodes if n.alive() and n.info("role") == "master"]

    def close(self):
        for n in self.nodes:
            n.close()


@contextlib.contextmanager
def redis_server(*extra, password=None):
    s = Server(*extra, password=password)
    try:
        yield s
    finally:
        s.close()


@contextlib.contextmanager
def redis_cluster(masters=3, replicas=1, *extra):
    c = Cluster(masters, replicas, *extra)
    try:
        yield c
    finally:
        c.close()
