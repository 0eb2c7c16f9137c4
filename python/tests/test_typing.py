"""The package's annotations and docstrings, as a user's type checker and
help() see them."""

import importlib.resources
import inspect
import os
import subprocess
import sys
import sysconfig

import pytest

import gotensor

# A user program written against the public API; under mypy --strict it
# fails where a public signature is unannotated (disallow_untyped_calls) or
# returns Any where the program expects a type (warn_return_any).
PROGRAM = '''
from concurrent.futures import Future

import numpy as np
import numpy.typing as npt
import torch

import gotensor


def roundtrip(store: gotensor.Store, t: torch.Tensor) -> torch.Tensor:
    store.write_tensor("k", t, codec="auto", timeout=5.0)
    store.write_tensor("k", t[:1], rows=slice(0, 1))
    return store.read_tensor("k", device="cpu", timeout=5)


def into(store: gotensor.Store, buf: torch.Tensor, arr: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    same: torch.Tensor = store.read_tensor("k", out=buf)
    part: torch.Tensor = store.read_tensor("k", rows=slice(0, 1))
    assert same.shape[1:] == part.shape[1:]
    return store.read_tensor("a", out=arr)


def asynchronously(store: gotensor.Store, t: torch.Tensor) -> torch.Tensor:
    w: Future[None] = store.write_tensor_async("k", t)
    w.result()
    r: Future[torch.Tensor] = store.read_tensor_async("k")
    return r.result(timeout=10)


def many(store: gotensor.Store) -> dict[str, torch.Tensor]:
    store.write_tensors({"a": torch.zeros(2)}, codec="none")
    store.write_tensors([("b", np.zeros(2, dtype=np.float32))])
    return store.read_tensors(["a", "b"])


def keys(store: gotensor.Store) -> int:
    names: list[str] = store.keys("a", timeout=1.0)
    info: dict[str, object] = store.stat("a", timeout=1.0)
    present: bool = store.exists("a", timeout=1.0) and "a" in store
    store.delete("a", timeout=1.0)
    return len(store) + len(names) + len(info) + int(present) + int(store.usage()["keys"])


def module_level() -> npt.NDArray[np.generic]:
    gotensor.write_tensor("m", torch.ones(3))
    f: Future[torch.Tensor] = gotensor.read_tensor_async("m")
    t: torch.Tensor = gotensor.read_tensor("m")
    assert torch.equal(f.result(), t) and gotensor.exists("m")
    gotensor.set_workers(gotensor.set_workers(0))
    ver: str = gotensor.__version__
    assert ver and gotensor.info(hardware=False)["version"]
    return gotensor.read_array("m")


def errors() -> str | None:
    try:
        with gotensor.open("mem://typed", token=None) as store:
            store.read_tensor("missing")
    except gotensor.KeyNotFound as e:
        return e.key
    except gotensor.GotensorError:
        raise
    return None
'''


def _site_packages(path: str) -> bool:
    return os.path.realpath(path) in {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}


def test_the_package_ships_py_typed():
    assert importlib.resources.files("gotensor").joinpath("py.typed").is_file()


def test_a_typed_user_program_passes_mypy_strict(tmp_path, request):
    pytest.importorskip("mypy", reason="mypy is not installed (pip install '.[test]')")
    pytest.importorskip("torch")
    prog = tmp_path / "user.py"
    prog.write_text(PROGRAM)
    root = os.path.dirname(os.path.dirname(gotensor.__file__))
    env = dict(os.environ)
    if not _site_packages(root):  # a source checkout on sys.path: point mypy at it
        env["MYPYPATH"] = root
    # silent: torch's and numpy's own typing is theirs to keep; gotensor's
    # signatures are what this program sees
    cache = request.config.cache.mkdir("mypy") if request.config.cache is not None else tmp_path / "mypy-cache"
    cmd = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
           "--cache-dir", str(cache), str(prog)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def _public(obj):
    for name, member in inspect.getmembers(obj):
        if name.startswith("_") and name not in ("__init__", "__len__"):
            continue
        if inspect.isfunction(member) or isinstance(member, property):
            yield name, member


def test_every_name_in_all_resolves_and_has_a_docstring():
    assert len(set(gotensor.__all__)) == len(gotensor.__all__)
    for name in gotensor.__all__:
        assert not name.startswith("_"), name
        obj = getattr(gotensor, name)
        assert (inspect.getdoc(obj) or "").strip(), f"gotensor.{name} has no docstring"
    assert set(gotensor.__all__) >= {n for n in dir(gotensor) if not n.startswith("_")
                                     and (inspect.isfunction(getattr(gotensor, n)) or inspect.isclass(getattr(gotensor, n)))
                                     and getattr(getattr(gotensor, n), "__module__", "").startswith("gotensor")}


@pytest.mark.parametrize("name", ["Store", "OpFuture"])
def test_public_methods_are_annotated_and_documented(name):
    from gotensor._completer import OpFuture
    cls = {"Store": gotensor.Store, "OpFuture": OpFuture}[name]
    for name, fn in _public(cls):
        if isinstance(fn, property) or not fn.__module__.startswith("gotensor"):
            continue
        sig = inspect.signature(fn)
        assert sig.return_annotation is not inspect.Signature.empty, f"{cls.__name__}.{name} has no return type"
        for p in list(sig.parameters.values())[1:]:
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                assert p.annotation is not inspect.Parameter.empty, f"{cls.__name__}.{name}({p.name}) is unannotated"
        if name != "__init__" or cls is gotensor.Store:
            assert (inspect.getdoc(fn) or "").strip(), f"{cls.__name__}.{name} has no docstring"


def test_module_functions_are_annotated():
    for name in gotensor.__all__:
        fn = getattr(gotensor, name)
        if inspect.isfunction(fn):
            sig = inspect.signature(fn)
            assert sig.return_annotation is not inspect.Signature.empty, name
            assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values()), name


def test_import_gotensor_stays_light():
    code = "import sys, gotensor; print('torch' in sys.modules, 'numpy' in sys.modules, len(gotensor.__all__))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split()[:2] == ["False", "False"], r.stdout


def test_len_counts_the_keys(store):
    import torch
    assert len(store) == 0
    for i in range(3):
        store.write_tensor(f"k{i}", torch.zeros(2))
    assert len(store) == 3
    store.delete("k1")
    assert len(store) == 2 == len(store.keys())


def test_flexgen_public_api_is_documented():
    gtf = pytest.importorskip("gotensor.flexgen")
    for name in gtf.__all__:
        obj = getattr(gtf, name)
        assert (inspect.getdoc(obj) or "").strip(), f"gotensor.flexgen.{name} has no docstring"
    for name, fn in _public(gtf.GoTensorDevice):
        if fn.__module__.startswith("gotensor") and name != "__init__":
            assert (inspect.getdoc(fn) or "").strip(), f"GoTensorDevice.{name} has no docstring"
