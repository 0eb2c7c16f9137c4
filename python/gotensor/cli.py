"""The `gotensor` command: info, serve, load, put, export, ls, stat, get, rm.

Only what a subcommand needs is imported: `--help`, `--version` and `serve`
never load torch. `serve` execs the Go node (gotensor/bin/gotensor-serve)
with its arguments unparsed: the node declares its flags and prints its
usage, here as `gotensor serve`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import Sequence

NODE = "gotensor-serve"
SERVE = "gotensor serve"  # argv[0] of the node `gotensor serve` starts: the name its usage message gives


def _info(args) -> int:
    import json

    import gotensor
    data = gotensor.info()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"gotensor {data['version']} ({data['go_version']}, {data['os']}/{data['arch']})")
    print(f"  cpus:    {data['cpus']} (codec workers: {data['workers']})")
    print(f"  codecs:  {', '.join(data['codecs'])}")
    print(f"  stores:  {', '.join(s + '://' for s in data['stores'])}")
    built = data.get("transports", [])
    print("  transports: " + ", ".join(f"{t}://" + ("" if t in built else " (not in this build: see README, Install)")
                                       for t in ("tcp", "ucx")))
    libs = data.get("libraries", {})
    print("  libraries:  " + (", ".join(f"{lib} " + ("yes" if on else "no") for lib, on in libs.items()) or "none"))
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


def node_binary() -> str:
    """The Go memory node: the package's bin/ (where `pip install .` puts
    it), else gotensor-serve on PATH."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", NODE)
    if os.access(exe, os.X_OK):
        return exe
    found = shutil.which(NODE)
    if found is None:
        from .errors import Unsupported
        raise Unsupported(f"the memory node {NODE} is not installed beside gotensor ({exe}) nor on PATH; "
                          "reinstall with `pip install .` from a source checkout")
    return found


def _serve(argv: Sequence[str]) -> int:
    """Replace this process with the Go node, which parses argv itself."""
    exe = node_binary()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [SERVE, *argv])
    return 1  # not reached


def _token(args) -> str | None:
    """The secret of --token-file (None: the URL or GOTENSOR_TOKEN, if any)."""
    if not getattr(args, "token_file", ""):
        return None
    from .errors import InvalidArgument
    try:
        with open(args.token_file, encoding="utf-8") as f:
            token = f.read().strip()
    except OSError as e:
        raise InvalidArgument(f"reading token file {args.token_file}: {e.strerror}") from None
    if not token:
        raise InvalidArgument(f"token file {args.token_file} is empty")
    return token


def _open(args, readonly: bool = False):
    """The store of args.url; readonly: a file:// store is opened without
    taking its lock or creating anything (a read beside its owner)."""
    import gotensor
    url = args.url
    if readonly and url.startswith("file://") and "readonly=" not in url:
        url += ("&" if "?" in url else "?") + "readonly=true"
    return gotensor.open(url, token=_token(args))


def _load(args) -> int:
    from .load import load
    if args.to.startswith("mem://"):
        print("gotensor load: warning: a mem:// store lives in this process and is gone when the command "
              "exits; load into file:// or a node (tcp://, ucx://) to keep the tensors", file=sys.stderr)
    r = load(args.src, args.to, prefix=args.prefix, codec=args.codec, dtype=args.dtype,
             progress=not args.quiet, token=_token(args), atomic=args.atomic)
    print(f"loaded {r['tensors']} tensors, {r['raw_bytes'] / 1e6:.1f} MB -> {r['stored_bytes'] / 1e6:.1f} MB "
          f"stored in {r['url']} ({r['seconds']:.1f} s)")
    return 0


def _export(args) -> int:
    from .export import export
    with _open(args, readonly=True) as store:
        r = export(store, args.to, prefix=args.prefix, progress=not args.quiet)
    print(f"exported {r['tensors']} tensors, {r['raw_bytes'] / 1e6:.1f} MB to {args.to}")
    return 0


def _ls(args) -> int:
    with _open(args, readonly=True) as store:
        keys = store.keys(args.prefix)
        if not args.long:
            for key in keys:
                print(key)
            return 0
        rows = []
        for key in keys:
            try:
                st = store.stat(key)
            except KeyError:  # deleted since the listing (KeyNotFound is a KeyError)
                continue
            ratio = st["raw_bytes"] / st["stored_bytes"] if st["stored_bytes"] else 0
            rows.append((st["dtype"], _shape(st["shape"]), _human(st["raw_bytes"]), _human(st["stored_bytes"]),
                         f"{ratio:.2f}", st["codec"], key))
        head = ("DTYPE", "SHAPE", "RAW", "STORED", "RATIO", "CODEC", "KEY")
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
        for r in [head, *rows]:
            print("  ".join(c.rjust(w) if i in (2, 3, 4) else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return 0


def _human(n: int) -> str:
    """1536 -> "1.5 KiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _shape(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _stat(args) -> int:
    import json
    with _open(args, readonly=True) as store:
        if args.key is None:
            data: dict = {"url": store.url, "usage": store.usage()}
            if not args.quick:
                data["tensors"] = _summary(store)
        else:
            data = store.stat(args.key)
            data["shape"] = list(data["shape"])
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        _print_tree(data)
    return 0


def _summary(store) -> dict:
    """Raw and stored bytes, ratio and tensors per codec of what the store
    holds, from each key's header."""
    raw = stored = 0
    codecs: dict[str, int] = {}
    for key in store.keys():
        st = store.stat(key)
        raw, stored = raw + st["raw_bytes"], stored + st["stored_bytes"]
        codecs[st["codec"]] = codecs.get(st["codec"], 0) + 1
    return {"raw_bytes": raw, "stored_bytes": stored, "ratio": round(raw / stored, 3) if stored else 0,
            "codecs": codecs}


def _print_tree(data: dict, indent: int = 0) -> None:
    for k, v in data.items():
        if isinstance(v, dict):
            print(" " * indent + f"{k}:")
            _print_tree(v, indent + 2)
        else:
            v = f"{v:.4g}" if isinstance(v, float) else v
            print(" " * indent + f"{k + ':':{max(1, 22 - indent)}} {v}")


def _get(args) -> int:
    with _open(args, readonly=True) as store:
        if args.out is None:
            print(store.read_tensor(args.key))
            return 0
        from .errors import InvalidArgument
        if args.out.endswith(".safetensors"):
            from .export import save_tensors
            save_tensors({args.key: store.read_tensor(args.key)}, args.out)
        elif args.out.endswith(".npy"):
            st = store.stat(args.key)
            if st["dtype"] == "bfloat16" or st["dtype"].startswith("float8"):
                raise InvalidArgument(f"--out {args.out}: numpy's .npy format has no {st['dtype']} (a reader would get "
                                      f"raw 'V' records); write FILE.safetensors instead")
            import numpy as np
            np.save(args.out, store.read_array(args.key))
        else:
            raise InvalidArgument(f"--out {args.out}: write FILE.npy or FILE.safetensors")
    return 0


def _put(args) -> int:
    from .load import read_file
    tensors = read_file(args.file)
    with _open(args) as store:
        if len(tensors) == 1 and "" in tensors:
            store.write_tensor(args.key, tensors[""], codec=args.codec)
            keys = [args.key]
        else:  # a file of several tensors: KEY/name each
            items = {f"{args.key}/{name}": t for name, t in tensors.items()}
            store.write_tensors(items, codec=args.codec)
            keys = list(items)
        raw = sum(store.stat(k)["raw_bytes"] for k in keys)
        stored = sum(store.stat(k)["stored_bytes"] for k in keys)
    what = keys[0] if len(keys) == 1 else f"{len(keys)} keys under {args.key}/"
    print(f"put {what}: {_human(raw)} -> {_human(stored)} stored")
    return 0


def _rm(args) -> int:
    from .errors import InvalidArgument
    if bool(args.keys) == (args.prefix is not None):
        raise InvalidArgument("rm takes KEY... or --prefix P (one of them)")
    with _open(args) as store:
        keys = args.keys or store.keys(args.prefix)
        for key in keys:
            store.delete(key)
    if args.prefix is not None:
        print(f"deleted {len(keys)} keys starting with {args.prefix!r}")
    return 0


def _version() -> str:
    import gotensor
    return f"gotensor {gotensor.__version__}"


class _Version(argparse.Action):
    """--version, resolved only when asked for (it loads the Go core)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default where it has a meaningful one."""

    def _get_help_string(self, action):
        if action.default in ("", None, False) or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


def _store_args(p: argparse.ArgumentParser, key: str | None = None) -> None:
    p.add_argument("url", metavar="URL", help="store URL, e.g. file:///data/weights or tcp://host:7707")
    if key == "optional":
        p.add_argument("key", metavar="KEY", nargs="?", help="a key (without it: the whole store)")
    elif key == "required":
        p.add_argument("key", metavar="KEY")
    p.add_argument("--token-file", default="", metavar="FILE", help="file holding the node's shared secret")


def parser() -> argparse.ArgumentParser:
    fmt = _Help
    p = argparse.ArgumentParser(prog="gotensor", description="Tensor offloading through a Go core.")
    p.add_argument("--version", action=_Version, help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True)

    pi = sub.add_parser("info", help="describe this build and machine", formatter_class=fmt)
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    pi.set_defaults(fn=_info)

    # listed for `gotensor --help` only: main() hands `serve`'s arguments to the node before parsing
    ps = sub.add_parser("serve", add_help=False,
                        help="run a memory node other processes reach with tcp:// or ucx://host:port "
                             "(`gotensor serve -h` lists its flags)")
    ps.set_defaults(fn=lambda _args: _serve([]))

    pl = sub.add_parser("load", help="load a model's weights (.safetensors or a FlexGen -np directory) into a store",
                        formatter_class=fmt)
    pl.add_argument("src", help="a .safetensors file or a FlexGen <model>-np directory")
    pl.add_argument("--to", required=True, metavar="URL", help="store URL, e.g. file:///data/weights or tcp://host:7707")
    pl.add_argument("--prefix", default="", help="prepended to every tensor name")
    pl.add_argument("--codec", default="auto",
                    help="codec for every tensor; a tensor it cannot code is stored with auto (and named)")
    pl.add_argument("--dtype", default=None, choices=["float16", "bfloat16", "float32", "float64"],
                    help="convert floating-point tensors to this dtype first (default: keep)")
    pl.add_argument("--token-file", default="", metavar="FILE", help="file holding the node's shared secret")
    pl.add_argument("--quiet", action="store_true", help="no progress bar (none is drawn when stderr is not a terminal)")
    pl.add_argument("--atomic", action="store_true", help="on a failure, delete the keys this run wrote: all or nothing")
    pl.set_defaults(fn=_load)

    pp = sub.add_parser("put", help="a .npy, .safetensors or .pt file into a key", formatter_class=fmt)
    _store_args(pp, key="required")
    pp.add_argument("file", metavar="FILE", help="a .npy array, or a .safetensors / .pt file of tensors "
                    "(one tensor: KEY; several: KEY/name each)")
    pp.add_argument("--codec", default="auto", help="codec (auto, none, planes, zstd, ...)")
    pp.set_defaults(fn=_put)

    pe = sub.add_parser("export", help="write a store's tensors to a .safetensors file", formatter_class=fmt)
    _store_args(pe)
    pe.add_argument("--to", required=True, metavar="FILE", help="the .safetensors file to write")
    pe.add_argument("--prefix", default="", help="only keys starting with this; names in the file drop it")
    pe.add_argument("--quiet", action="store_true", help="no progress bar (none is drawn when stderr is not a terminal)")
    pe.set_defaults(fn=_export)

    pls = sub.add_parser("ls", help="list a store's keys", formatter_class=fmt)
    _store_args(pls)
    pls.add_argument("prefix", nargs="?", default="", metavar="PREFIX", help="only keys starting with this")
    pls.add_argument("-l", "--long", action="store_true", help="a table: dtype, shape, raw and stored size, ratio, codec")
    pls.set_defaults(fn=_ls)

    pst = sub.add_parser("stat", help="a tensor's header (dtype, shape, sizes, codec), or the store's usage "
                         "and what it holds (bytes, ratio, tensors per codec)",
                         formatter_class=fmt)
    _store_args(pst, key="optional")
    pst.add_argument("--json", action="store_true", help="machine-readable output")
    pst.add_argument("--quick", action="store_true", help="without KEY: skip reading every key's header")
    pst.set_defaults(fn=_stat)

    pg = sub.add_parser("get", help="print a tensor, or save it as .safetensors or .npy", formatter_class=fmt)
    _store_args(pg, key="required")
    pg.add_argument("--out", default=None, metavar="FILE", help="write the tensor to FILE.safetensors (any dtype) or "
                    "FILE.npy (numpy's dtypes) instead")
    pg.set_defaults(fn=_get)

    pr = sub.add_parser("rm", help="delete keys, or every key under a prefix", formatter_class=fmt)
    _store_args(pr)
    pr.add_argument("keys", nargs="*", metavar="KEY")
    pr.add_argument("--prefix", default=None, metavar="P", help="delete every key starting with P")
    pr.set_defaults(fn=_rm)
    return p


def _quiet_stdout() -> None:
    """The reader of our stdout left (`gotensor info | head -1`): drop what
    is still buffered instead of failing again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _scrub(text: str, args) -> str:
    """text without any secret this command was given (URL token=, --token-file, GOTENSOR_TOKEN)."""
    import re
    from urllib.parse import unquote
    secrets = {os.environ.get("GOTENSOR_TOKEN", "")}
    for url in (getattr(args, "url", ""), getattr(args, "to", "")):
        secrets.update(unquote(m) for m in re.findall(r"[?&]token=([^&]*)", url or ""))
    try:
        secrets.add(_token(args) or "")
    except Exception:  # noqa: BLE001 - an unreadable token file holds no secret to hide
        pass
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


# The exit status of a failed command, by the kind of its error (argparse's
# usage errors exit 2, as InvalidArgument does).
EXIT_CODES = {"InvalidArgument": 2, "KeyNotFound": 3, "CorruptData": 4, "StoreFull": 5, "Unavailable": 6,
              "Unauthorized": 7, "Timeout": 8, "Unsupported": 9, "StoreClosed": 10, "InternalError": 1}


def _kind_of(e: BaseException) -> str:
    """The gotensor kind an exception is reported as."""
    from .errors import GotensorError
    if isinstance(e, GotensorError):
        return type(e).__name__
    if isinstance(e, PermissionError):
        return "Unauthorized"
    if isinstance(e, (FileNotFoundError, IsADirectoryError, NotADirectoryError, ValueError)):
        return "InvalidArgument"
    if isinstance(e, OSError):
        return "Unavailable"
    return "InternalError"


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    text = str(e) or type(e).__name__
    return text if type(e).__module__.startswith("gotensor") else f"{type(e).__name__}: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """The `gotensor` command line: parse argv (default sys.argv[1:]), run
    the command and return its exit status. Errors are printed as one line,
    `gotensor: Kind: message`, never a traceback (GOTENSOR_DEBUG=1 adds it);
    the status says the kind (EXIT_CODES)."""
    args = None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["serve"]:
            return _serve(argv[1:])
        args = parser().parse_args(argv)
        rc = args.fn(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the try
        return rc
    except BrokenPipeError:
        _quiet_stdout()
        return 0  # the reader chose to stop reading: not an error of ours
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a clear line, not a traceback
        kind = _kind_of(e)
        print(_scrub(f"gotensor: {kind}: {_message(e)}", args), file=sys.stderr)
        if os.environ.get("GOTENSOR_DEBUG"):
            import traceback
            traceback.print_exc()
        return EXIT_CODES.get(kind, 1)


if __name__ == "__main__":
    sys.exit(main())
