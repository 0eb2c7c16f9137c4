"""Type aliases of gotensor's public signatures (for type checkers only:
nothing here is imported at run time, so `import gotensor` stays light)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Tuple, TypeVar, Union

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import torch

    #: what a tensor argument may be: a torch tensor or a numpy array
    TensorLike = Union[torch.Tensor, npt.NDArray[Any]]
    #: the destination of a read (out=): its own type comes back
    OutT = TypeVar("OutT", torch.Tensor, npt.NDArray[Any])
    #: where a new tensor is put (device=): "cpu", "cuda:1", torch.device(...), a CUDA index
    Device = Union[str, torch.device, int]
    #: write_tensors' items: a mapping or (key, tensor) pairs
    Items = Union[Mapping[str, TensorLike], Iterable[Tuple[str, TensorLike]]]
    Array = npt.NDArray[Any]
    DType = np.dtype[Any]
