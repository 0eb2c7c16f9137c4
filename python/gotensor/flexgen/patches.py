"""What FlexGen needs patched for a GoTensorDevice, and weights served from a store.

FlexGen treats a disk tensor's .data as a file path when it loads weights,
downloads weights it cannot find, and its TorchTensor.delete frees only the
first part of a compressed or mixed tensor (its TorchDisk leaks the rest).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from flexgen import pytorch_backend as pb
from flexgen.pytorch_backend import DeviceType, TorchTensor

import gotensor

from .device import GoTensorDevice

_originals: dict[str, Any] = {}
_weights: list = []  # [(store, prefix)]: where FlexGen's -np weight files are read from instead


def read_weights_from(url_or_store, prefix: str = "") -> None:
    """Serve FlexGen's weight files from a store filled by `gotensor load`:
    a weight file <dir>/<name>-np/<tensor> is read from key prefix+<tensor>
    when that key exists, and FlexGen no longer downloads missing weights."""
    store = url_or_store if isinstance(url_or_store, gotensor.Store) else gotensor.open(url_or_store)
    _weights[:] = [(store, prefix)]


def _weight_from_store(filename: str):
    for store, prefix in _weights:
        key = prefix + os.path.basename(filename)
        if store.exists(key):
            return store.read_tensor(key).numpy()
    return None


def install() -> None:
    """Patch flexgen so that tensors on a GoTensorDevice load from numpy
    through gotensor, weights come from the store of read_weights_from()
    where it has them, and compressed or mixed tensors free their parts
    (FlexGen's own TorchDisk leaks those files)."""
    if _originals:
        return
    pb.fix_recursive_import()
    from flexgen import flex_opt
    _originals.update(load_from_np=TorchTensor.load_from_np, load_from_np_file=TorchTensor.load_from_np_file,
                      delete=TorchTensor.delete, download_opt_weights=flex_opt.download_opt_weights)

    def load_from_np(self, np_array):
        if isinstance(self.device, GoTensorDevice):
            return self.device.load_from_np(self, np_array)
        return _originals["load_from_np"](self, np_array)

    def load_from_np_file(self, filename):
        arr = _weight_from_store(filename)
        if arr is not None:
            return self.load_from_np(arr)
        if isinstance(self.device, GoTensorDevice):
            return self.device.load_from_np(self, np.load(filename))
        return _originals["load_from_np_file"](self, filename)

    def delete(self):
        dev = self.device
        if dev is not None and dev.device_type == DeviceType.COMPRESSED:
            for part in self.data[:2]:
                if part.device is not None and isinstance(part.device, GoTensorDevice):
                    part.delete()
        elif dev is not None and dev.device_type == DeviceType.MIXED:
            for part in self.data[0]:
                if part is not None and part.device is not None:
                    part.delete()
        return _originals["delete"](self)

    def download_opt_weights(model_name, path):
        if _weights:  # served from the store: nothing to download
            return
        return _originals["download_opt_weights"](model_name, path)

    TorchTensor.load_from_np = load_from_np
    TorchTensor.load_from_np_file = load_from_np_file
    TorchTensor.delete = delete
    flex_opt.download_opt_weights = download_opt_weights


def uninstall() -> None:
    """Undo install()."""
    from flexgen import flex_opt
    for name, fn in _originals.items():
        setattr(flex_opt if name == "download_opt_weights" else TorchTensor, name, fn)
    _originals.clear()
    _weights.clear()
