"""``toolwire models``: the model specs, and which of them can run here now.

toolwire models           # spec, model, status
toolwire models --json

A local spec is ready when llama-cpp-python and its model's packages are installed; a
hosted one when its key is in the environment (a served model, ``--base-url``, may need
none). Nothing is downloaded, loaded or sent: the answer comes from the installed
distributions and the environment alone.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["model_rows", "register"]


def register(subparsers: Any) -> None:
    """Add the ``models`` subcommand."""
    parser = subparsers.add_parser(
        "models",
        help="list the model specs: which are installed, which need a key",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print a JSON list")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the specs and their status."""
    import json

    rows = model_rows()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["spec"]) for r in rows)
    model_width = max(len(r["model"]) for r in rows)
    print(f"{'spec':{width}}  {'model':{model_width}}  status")
    for r in rows:
        print(f"{r['spec']:{width}}  {r['model']:{model_width}}  {r['status']}")
    return 0


def model_rows() -> list[dict[str, Any]]:
    """One row per spec form (``toolwire.providers.spec.SPECS``): ``spec``, ``model``,
    ``ready`` (whether it can run here as it is) and ``status`` (why, or what to do)."""
    from ..providers.spec import SPECS

    rows = []
    for spec, model in SPECS:
        ready, status = _status(spec)
        rows.append({"spec": spec, "model": model, "ready": ready, "status": status})
    return rows


def _status(spec: str) -> tuple[bool, str]:
    prefix = spec.partition(":")[0]
    if prefix == "local":
        return _local_status(spec)
    import os

    from ..providers.spec import key_env

    env = key_env(prefix)
    if os.environ.get(env):
        return True, f"key set ({env})"
    return False, f"needs {env} (a served model with --base-url may not)"


def _local_status(spec: str) -> tuple[bool, str]:
    import importlib.util

    from ..providers.local import EMBEDDED_PARTS, SHIPPED_DISTRIBUTION

    if importlib.util.find_spec("llama_cpp") is None:
        return False, "not installed: pip install '.[local]' in a checkout"
    needs = {"local": EMBEDDED_PARTS, "local:smollm2": (SHIPPED_DISTRIBUTION,)}.get(spec, ())
    missing = [name for name in needs if not _installed(name)]
    if missing and spec == "local" and _assembled():
        return True, "installed (assembled in the cache; its packages were removed)"
    if missing:
        return False, f"not installed ({', '.join(missing)}): pip install '.[local]'"
    if spec.startswith("local:ORG"):
        if importlib.util.find_spec("huggingface_hub") is None:
            return False, "needs huggingface-hub: pip install huggingface-hub"
        return True, "installed (downloads the file on first use)"
    return True, "installed"


def _assembled() -> bool:
    """The default model's joined GGUF is in the cache: all a run reads."""
    from ..providers.local import EMBEDDED_FILE, cache_dir

    return (cache_dir() / EMBEDDED_FILE).is_file()


def _installed(distribution: str) -> bool:
    from importlib import metadata

    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True
