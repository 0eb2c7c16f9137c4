"""The `gotensor` command."""

from __future__ import annotations

import argparse
import json
import sys


def _info(args) -> int:
    import gotensor
    data = gotensor.info()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"gotensor {data['version']} ({data['go_version']}, {data['os']}/{data['arch']})")
    print(f"  cpus:    {data['cpus']} (codec workers: {data['workers']})")
    print(f"  codecs:  {', '.join(data['codecs'])}")
    print(f"  stores:  {', '.join(s + '://' for s in data['stores'])}")
    print(f"  dtypes:  {', '.join(data['dtypes'])}")
    print(f"  engine:  {data['engine']}")
    hw = data["hardware"]
    numa = ", ".join(f"node {n['id']}: {_cpus(n['cpus'])}" for n in hw["numa_nodes"]) or "unknown"
    print(f"  NUMA:    {numa}")
    if hw["gpus"]:
        for g in hw["gpus"]:
            print(f"  GPU {g['index']}:   {g['name']} {g['uuid']} {g['memory_free'] / 2**30:.1f}/"
                  f"{g['memory_total'] / 2**30:.1f} GiB free, PCI {g['pci_bus_id']}, NUMA {g['numa_node']}, "
                  f"CPUs {_cpus(g['cpu_affinity'])}")
        print(f"  GPU-local codec workers: {'on' if hw['gpu_affinity'] else 'off'}")
    else:
        print(f"  GPUs:    none ({hw['gpu_status']})")
    rdma = hw["rdma_devices"]
    print("  RDMA:    " + (", ".join(f"{d['name']} port {p['port']} {p['state']} {p['rate']} {p['link_layer']}"
                                      for d in rdma for p in d["ports"]) or "none (/sys/class/infiniband is empty)"))
    ucx = hw["ucx"]
    print("  UCX:     " + (f"{ucx.get('version') or 'installed'} ({ucx['library']}); transports: "
                          f"{', '.join(ucx.get('transports') or []) or 'unknown (no ucx_info)'}"
                          if ucx["available"] else "not installed (libucp.so.0 not found)"))
    doca = hw["doca"]
    print(f"  DOCA:    engine {'built in' if doca['built'] else 'not built (-tags doca)'}; "
          f"SDK {doca.get('sdk') or 'not found'}")
    return 0


def _cpus(cpus) -> str:
    """[0,1,2,3,8] -> "0-3,8"."""
    out, start = [], None
    for i, c in enumerate(cpus):
        if start is None:
            start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(f"{start}-{c}" if c != start else f"{c}")
            start = None
    return ",".join(out) or "-"


def _load(args) -> int:
    from .load import load
    r = load(args.src, args.to, prefix=args.prefix, codec=args.codec, progress=not args.quiet)
    print(f"loaded {r['tensors']} tensors, {r['raw_bytes'] / 1e6:.1f} MB -> {r['stored_bytes'] / 1e6:.1f} MB "
          f"stored in {args.to} ({r['seconds']:.1f} s)")
    return 0


def _serve(args) -> int:
    import time

    from . import errors
    from ._native_lib import native
    capacity = errors.call(native.parse_size, args.capacity)
    desc = errors.call(native.serve, args.listen, args.transport, capacity, args.dir, args.token_file,
                       args.tls_cert, args.tls_key)
    h, url = desc.split(";", 1)
    tls = " with TLS (clients add ?tls=1 or ?ca=FILE)" if args.tls_cert else ""
    print(f"gotensor serve: listening on {url}{tls} (capacity {args.capacity}, dir {args.dir or 'none'})", flush=True)
    try:
        while True:  # Go serves; Python only waits for Ctrl-C / SIGTERM
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        errors.call(native.stop_serve, int(h))
    return 0


def _interrupt(*_):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    import signal
    signal.signal(signal.SIGTERM, _interrupt)  # `gotensor serve` stops cleanly on SIGTERM too
    p = argparse.ArgumentParser(prog="gotensor", description="Tensor offloading through a Go core.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("info", help="describe this build and machine")
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    pi.set_defaults(fn=_info)
    pl = sub.add_parser("load", help="load a model's weights (.safetensors or a FlexGen -np directory) into a store")
    pl.add_argument("src", help="a .safetensors file or a FlexGen <model>-np directory")
    pl.add_argument("--to", required=True, metavar="URL", help="store URL, e.g. file:///data/weights or mem://")
    pl.add_argument("--prefix", default="", help="prepended to every tensor name")
    pl.add_argument("--codec", default="auto", help="codec for every tensor (default auto)")
    pl.add_argument("--quiet", action="store_true", help="no progress bar")
    pl.set_defaults(fn=_load)
    ps = sub.add_parser("serve", help="run a memory node other processes reach with tcp:// or ucx://host:port")
    ps.add_argument("--listen", default="127.0.0.1:7707", help="host:port (non-loopback needs --token-file)")
    ps.add_argument("--transport", default="tcp", choices=["tcp", "ucx"], help="tcp, or ucx (RDMA where the NIC has it; UCX_TLS picks UCX's transports)")
    ps.add_argument("--capacity", default="0", help="bytes the node holds, e.g. 8GiB (0: unbounded)")
    ps.add_argument("--dir", default="", help="persist frames in this directory, served again after a restart")
    ps.add_argument("--token-file", default="", help="file holding the shared secret clients must prove")
    ps.add_argument("--tls-cert", default="", help="PEM certificate: the tcp transport then speaks TLS 1.3")
    ps.add_argument("--tls-key", default="", help="PEM private key of --tls-cert")
    ps.set_defaults(fn=_serve)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except Exception as e:  # a clear message, not a traceback
        from .errors import GotensorError
        if isinstance(e, GotensorError):
            print(f"gotensor: {e}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
