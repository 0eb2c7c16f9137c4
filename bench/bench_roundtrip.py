"""Round-trip benchmark of the Python API on the embedded and directory stores.

Small tensors measure per-call overhead (microseconds); a large tensor
measures throughput (GB/s) next to a plain memcpy and torch.save/torch.load
measured in the same run. Results: JSON + a RESULTS.md section.
"""

from __future__ import annotations

import argparse
import io
import tempfile

import torch

import gotensor
from _report import median_time, update_markdown, write_json


def _bare_call():
    """A gopy call that does nothing (Ping where the build has it)."""
    from gotensor._native_lib import native
    if hasattr(native, "ping"):
        return lambda: native.ping(1)
    return lambda: native.set_workers(0)  # older builds: a call that only reads a setting


def small(store, nbytes: int) -> dict:
    t = torch.randn(nbytes // 4)
    out = torch.empty_like(t)
    n = 2000
    bare = _bare_call()

    def rt():
        store.write_tensor("small", t)
        store.read_tensor("small")

    def rt_out():
        store.write_tensor("small", t)
        store.read_tensor("small", out=out)

    def torch_io():
        buf = io.BytesIO()
        torch.save(t, buf)
        buf.seek(0)
        torch.load(buf)

    store.write_tensor("small", t)
    return {
        "gotensor_us": median_time(rt, number=n) * 1e6,
        "gotensor_out_us": median_time(rt_out, number=n) * 1e6,
        "write_us": median_time(lambda: store.write_tensor("small", t), number=n) * 1e6,
        "read_us": median_time(lambda: store.read_tensor("small"), number=n) * 1e6,
        "read_out_us": median_time(lambda: store.read_tensor("small", out=out), number=n) * 1e6,
        "bare_call_us": median_time(bare, number=n * 5) * 1e6,
        "memcpy_us": median_time(lambda: out.copy_(t), number=n) * 1e6 * 2,  # out and back
        "torch_save_load_us": median_time(torch_io, number=n // 10) * 1e6,
    }


def large(store, nbytes: int) -> dict:
    g = torch.Generator().manual_seed(0)
    t = torch.randn(nbytes // 2, generator=g).to(torch.bfloat16)
    out = torch.empty_like(t)
    copy = torch.empty_like(t)
    w = median_time(lambda: store.write_tensor("large", t), repeat=5)
    r = median_time(lambda: store.read_tensor("large", out=out), repeat=5)
    assert torch.equal(out.view(torch.int16), t.view(torch.int16))
    m = median_time(lambda: copy.copy_(t), repeat=5)
    c = median_time(lambda: t.clone(), repeat=5)
    gb = nbytes / 1e9
    return {
        "write_gbps": gb / w, "read_gbps": gb / r, "roundtrip_gbps": gb / (w + r),
        "memcpy_gbps": gb / m, "memcpy_roundtrip_gbps": gb / (2 * m),
        "roundtrip_vs_memcpy": (2 * m) / (w + r),
        "clone_gbps": gb / c, "write_vs_clone": c / w,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default="bench/results/roundtrip.json")
    ap.add_argument("--md", default="bench/RESULTS.md")
    ap.add_argument("--large-mib", type=int, default=256)
    ap.add_argument("--stores", default="mem,file,nosync", help="comma-separated subset of mem,file,nosync")
    args = ap.parse_args()
    records = []
    with tempfile.TemporaryDirectory() as d:
        urls = {"mem": "mem://", "file": f"file://{d}/store", "nosync": f"file://{d}/nosync?fsync=false"}
        for url in (urls[k] for k in args.stores.split(",")):
            kind = url.split(":")[0] + (" fsync=false" if "fsync" in url else "")
            with gotensor.open(url) as s:
                sm = small(s, 1024)
                records.append({"store": kind, "case": "1KiB", **sm})
                print(f"{kind:4s} 1 KiB write+read: {sm['gotensor_us']:.1f} us (write {sm['write_us']:.1f}, "
                      f"read {sm['read_us']:.1f}; with out=: {sm['gotensor_out_us']:.1f} us, read(out=) alone "
                      f"{sm['read_out_us']:.1f} us; bare gopy call {sm['bare_call_us']:.2f} us; "
                      f"memcpy x2 {sm['memcpy_us']:.1f} us; torch.save+load {sm['torch_save_load_us']:.1f} us)", flush=True)
                lg = large(s, args.large_mib << 20)
                records.append({"store": kind, "case": f"{args.large_mib}MiB", **lg})
                print(f"{kind:4s} {args.large_mib} MiB: write {lg['write_gbps']:.2f} GB/s, read {lg['read_gbps']:.2f} GB/s, "
                      f"round trip {lg['roundtrip_gbps']:.2f} GB/s vs memcpy round trip "
                      f"{lg['memcpy_roundtrip_gbps']:.2f} GB/s ({lg['roundtrip_vs_memcpy']:.2f}x); "
                      f"write vs torch clone {lg['clone_gbps']:.2f} GB/s ({lg['write_vs_clone']:.2f}x)", flush=True)
    write_json(args.json, records)
    rows = ["| store | 1 KiB write+read (us) | same with out= (us) | read(out=) alone (us) | bare gopy call (us) | "
            "torch.save+load 1 KiB (us) | "
            f"{args.large_mib} MiB write (GB/s) | read (GB/s) | round trip (GB/s) | memcpy round trip (GB/s) | ratio | torch clone (GB/s) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sm, lg in zip(records[::2], records[1::2]):
        rows.append(f"| {sm['store']} | {sm['gotensor_us']:.1f} | {sm['gotensor_out_us']:.1f} | {sm['read_out_us']:.1f} | "
                    f"{sm['bare_call_us']:.2f} | {sm['torch_save_load_us']:.1f} | "
                    f"{lg['write_gbps']:.2f} | {lg['read_gbps']:.2f} | {lg['roundtrip_gbps']:.2f} | "
                    f"{lg['memcpy_roundtrip_gbps']:.2f} | {lg['roundtrip_vs_memcpy']:.2f} | {lg['clone_gbps']:.2f} |")
    body = ("## Round trip through the Python API (codec none)\n\n"
            "`make bench` (bench/bench_roundtrip.py), medians; bf16 tensor for the large case; memcpy is "
            "torch `copy_` into a preallocated tensor, measured in the same run. ratio = memcpy round-trip "
            "time / gotensor round-trip time. torch clone (allocate + copy) is what any store that keeps a copy "
            "must at least do. The file store fsyncs every write unless opened with `?fsync=false`.\n\n" + "\n".join(rows))
    update_markdown(args.md, "roundtrip", body)


if __name__ == "__main__":
    main()
