"""The package works installed, not only from a checkout.

A wheel built from the checkout and installed with ``--target`` into an empty folder must import
every module of ``factories`` from there, with the working directory elsewhere: package data
(``tolerances.json``) ships, and nothing locates files through the repository root.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

IMPORT_EVERY_MODULE = r"""
import importlib, pkgutil, sys
import factories
target = sys.argv[1]
assert factories.__file__.startswith(target), factories.__file__
names = ["factories"] + [
    m.name for m in pkgutil.walk_packages(factories.__path__, "factories.")
]
for name in names:
    module = importlib.import_module(name)
    assert module.__file__.startswith(target), (name, module.__file__)
from factories.accuracy import tolerance_for
tolerance_for("emulated")
print(len(names))
"""


def _pip(*args: str, cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--no-deps", "--disable-pip-version-check", "-q"],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("wheels")
    _pip("wheel", "--no-build-isolation", "-w", str(wheels), str(REPO), cwd=wheels)
    (wheel,) = wheels.glob("vllm_rocm_mla_guard-*.whl")
    target = tmp_path_factory.mktemp("target")
    _pip("install", "--target", str(target), str(wheel), cwd=wheels)
    return target


def test_wheel_imports_every_module_from_an_empty_target(installed_wheel: Path, tmp_path: Path):
    """``-S`` keeps this environment's editable install (a site ``.pth`` finder) out of the
    way; the dependencies come from site-packages on ``PYTHONPATH``, after the target."""
    site_packages = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed_wheel), site_packages])}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", IMPORT_EVERY_MODULE, str(installed_wheel)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert int(proc.stdout.split()[-1]) > 30


def test_wheel_ships_the_tolerance_file(installed_wheel: Path):
    assert (installed_wheel / "factories" / "accuracy" / "tolerances.json").is_file()
