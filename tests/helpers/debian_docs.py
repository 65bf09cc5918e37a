"""Real documentation sites from Debian's archive, fetched with `apt-get download` and unpacked.

Each package is pinned to the version of Debian 12 (bookworm) the tests were written against;
the unpacked trees are cached under $HOPFORGE_TEST_CACHE (default ~/.cache/hopforge-tests).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# package -> (version, folder of the site inside the package)
SITES = {
    "python-attr-doc": ("22.2.0-1", "usr/share/doc/python-attr-doc/html"),  # Sphinx
    "mkdocs-doc": ("1.4.2+dfsg-2", "usr/share/doc/mkdocs/html"),  # MkDocs
    "libjsoncpp-doc": ("1.9.5-4", "usr/share/doc/libjsoncpp-doc"),  # Doxygen
    "libcommons-lang3-java-doc": (  # Javadoc
        "3.12.0-2+deb12u1",
        "usr/share/doc/libcommons-lang3-java/api",
    ),
    "python3.11-doc": ("3.11.2-6+deb12u8", "usr/share/doc/python3.11/html"),  # Sphinx, large
}


def cache_dir() -> Path:
    return Path(os.environ.get("HOPFORGE_TEST_CACHE", Path.home() / ".cache" / "hopforge-tests"))


def debian_site(package: str) -> Path:
    """The unpacked documentation folder of `package` (downloaded on first use)."""
    version, inner = SITES[package]
    root = cache_dir() / "debian" / f"{package}_{version}"
    if not (root / inner).is_dir():
        if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
            raise RuntimeError(f"apt-get and dpkg-deb are needed to fetch {package}")
        work = root.with_name(root.name + ".tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        done = subprocess.run(
            ["apt-get", "download", f"{package}={version}"],
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        debs = list(work.glob("*.deb"))
        if done.returncode != 0 or not debs:
            raise RuntimeError(
                f"apt-get download {package}={version} failed ({done.stderr.strip()[-300:]}); "
                "run `apt-get update` first, or set HOPFORGE_TEST_CACHE to a folder that has it"
            )
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(work / "tree")], check=True)
        shutil.rmtree(root, ignore_errors=True)
        (work / "tree").rename(root)
        shutil.rmtree(work, ignore_errors=True)
    return root / inner
