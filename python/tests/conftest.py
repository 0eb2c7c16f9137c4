import pytest

import gotensor


@pytest.fixture(params=["mem", "file"])
def store(request, tmp_path):
    url = "mem://" if request.param == "mem" else f"file://{tmp_path}/store"
    with gotensor.open(url) as s:
        yield s
