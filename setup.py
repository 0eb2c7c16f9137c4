"""Builds gotensor's Go parts during `pip install .`.

gopy turns the Go package gotensor/pybind into a CPython extension
(gotensor/_native). gopy v0.4.10 only runs on current Go when built against
golang.org/x/tools v0.52.0, so it is built from tools/gopy first. The memory
node cmd/gotensor-serve is built into gotensor/bin/ (`gotensor serve` execs
it, so a node never loads Python's heavy modules) and into the scripts
directory, which puts `gotensor-serve` on PATH.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.install_scripts import install_scripts
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
PKG = "github.com/gotensor/gotensor/gotensor/pybind"
NODE = "gotensor-serve"


def _run(cmd, cwd, env):
    print("gotensor build:", " ".join(cmd), flush=True)
    subprocess.check_call(cmd, cwd=cwd, env=env)


def _ucx_tags(env):
    """`ucx` where libucx is found; GOTENSOR_UCX=0 leaves UCX out, =1 insists."""
    want = env.get("GOTENSOR_UCX", "")
    if want == "0":
        return []
    found = shutil.which("pkg-config") is not None and subprocess.call(
        ["pkg-config", "--exists", "ucx"], env=env) == 0
    if want == "1" and not found:
        sys.exit("error: GOTENSOR_UCX=1 but pkg-config finds no ucx: install libucx-dev (UCX >= 1.13)")
    return ["ucx"] if found else []


def _libdeflate_tags(env):
    """`libdeflate` where pkg-config finds it (Debian's libdeflate-dev): faster DEFLATE decoding."""
    found = shutil.which("pkg-config") is not None and subprocess.call(
        ["pkg-config", "--exists", "libdeflate"], env=env) == 0
    return ["libdeflate"] if found and env.get("GOTENSOR_LIBDEFLATE", "") != "0" else []


def _libzstd_tags(env):
    """`libzstd` where pkg-config finds libzstd >= 1.5.4 (Debian's libzstd-dev): the zstd codecs through libzstd."""
    found = shutil.which("pkg-config") is not None and subprocess.call(
        ["pkg-config", "--atleast-version=1.5.4", "libzstd"], env=env) == 0
    return ["libzstd"] if found and env.get("GOTENSOR_LIBZSTD", "") != "0" else []




def _go_env():
    go = shutil.which("go")
    if go is None:
        sys.exit(
            "error: building gotensor needs the Go toolchain (go >= 1.26) on PATH, and none was found.\n"
            "Install it from https://go.dev/dl/ (or your package manager), then run `pip install .` again."
        )
    bin_dir = os.path.join(ROOT, "build", "bin")
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), CGO_ENABLED="1")
    # go-nvml's generated bindings call functions newer NVML headers deprecate
    env["CGO_CFLAGS"] = (env.get("CGO_CFLAGS", "-O2 -g") + " -Wno-deprecated-declarations").strip()
    return go, bin_dir, env


def build_native(dest):
    go, bin_dir, env = _go_env()
    tags = _ucx_tags(env) + _libdeflate_tags(env) + _libzstd_tags(env)
    _run([go, "build", "-o", bin_dir + os.sep, "github.com/go-python/gopy", "golang.org/x/tools/cmd/goimports"],
         os.path.join(ROOT, "tools", "gopy"), env)
    out = os.path.join(ROOT, "build", "_gopy")  # gopy wants its output inside the Go module
    shutil.rmtree(out, ignore_errors=True)
    # -dynamic-link: the extension takes libpython's symbols from the interpreter that loads it, as
    # extension modules do, rather than linking libpython (which a manylinux wheel may not).
    env["CGO_LDFLAGS_ALLOW"] = ".*"
    _run([os.path.join(bin_dir, "gopy"), "build", "-output=" + out, "-vm=" + sys.executable,
          "-rename=true", "-name=gtnative", "-dynamic-link=true", *(["-build-tags=" + ",".join(tags)] if tags else []), PKG], ROOT, env)
    os.makedirs(dest, exist_ok=True)
    files = [os.path.join(out, f) for f in ("__init__.py", "go.py", "pybind.py")]
    files += glob.glob(os.path.join(out, "_gtnative*.so"))
    if len(files) < 4:
        sys.exit(f"error: gopy produced no extension in {out}")
    for f in files:
        shutil.copy2(f, dest)


def build_node(dest):
    """cmd/gotensor-serve into dest (with UCX where _ucx_tags finds it)."""
    go, _, env = _go_env()
    tags = _ucx_tags(env)
    os.makedirs(dest, exist_ok=True)
    _run([go, "build", *(["-tags", ",".join(tags)] if tags else []), "-trimpath", "-o",
          os.path.join(dest, NODE), "./cmd/gotensor-serve"], ROOT, env)


class BuildPy(build_py):
    def run(self):
        super().run()
        build_native(os.path.join(self.build_lib, "gotensor", "_native"))
        build_node(os.path.join(self.build_lib, "gotensor", "bin"))


class InstallScripts(install_scripts):
    """The scripts directory (on PATH) gets the Go node itself, no Python launcher."""

    def run(self):
        super().run()
        node = os.path.join(self.get_finalized_command("build_py").build_lib, "gotensor", "bin", NODE)
        os.makedirs(self.install_dir, exist_ok=True)
        target = os.path.join(self.install_dir, NODE)
        shutil.copy2(node, target)
        self.outfiles.append(target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # the wheel carries a native extension
        return True

    def has_scripts(self):  # the Go node, installed by InstallScripts
        return True


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildPy, "install_scripts": InstallScripts}, distclass=BinaryDistribution,
          scripts=[])  # has_scripts() is True: InstallScripts adds the node
