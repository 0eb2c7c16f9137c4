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
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="gotensor", description="Tensor offloading through a Go core.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("info", help="describe this build and machine")
    pi.add_argument("--json", action="store_true", help="machine-readable output")
    pi.set_defaults(fn=_info)
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
