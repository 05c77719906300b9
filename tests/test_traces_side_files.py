"""`regio traces import` reads a trace's side files (LICENSE*, PROVENANCE.md) only when they are
small regular files inside the folder they are found in: a symlink to a secret is not copied
into the trace, a FIFO does not hang the import."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from regio.cli import main
from regio.traces import bundled_traces_dir, import_file, read_trace
from regio.traces.sidefiles import MAX_SIDE_FILE_BYTES, SideFileWarning

SECRET = "SECRET-KEY-0123456789"
SOURCE = "function_calling_simple.traj"

fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")


def trace_folder(tmp_path: Path) -> Path:
    """A folder holding one bundled SWE-agent trace, no side files; a secret beside it."""
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(bundled_traces_dir() / "swe-agent" / SOURCE, folder / SOURCE)
    (tmp_path / "secret.txt").write_text(f"{SECRET}\nCopyright nobody\n")
    return folder


def test_a_licence_beside_the_trace_is_read_into_its_header(tmp_path: Path) -> None:
    folder = trace_folder(tmp_path)
    (folder / "LICENSE").write_text("MIT License\n\nCopyright (c) 2024 someone\n")
    trace = import_file(folder / SOURCE).traces[0]
    assert trace.header.license == "MIT License; Copyright (c) 2024 someone"


def test_a_licence_symlink_inside_the_folder_is_read(tmp_path: Path) -> None:
    folder = trace_folder(tmp_path)
    (folder / "COPYING.txt").write_text("Apache License 2.0\n")
    (folder / "LICENSE").symlink_to(folder / "COPYING.txt")
    assert import_file(folder / SOURCE).traces[0].header.license == "Apache License 2.0"


def test_a_licence_symlink_out_of_the_folder_is_not_read(tmp_path: Path) -> None:
    folder = trace_folder(tmp_path)
    (folder / "LICENSE").symlink_to(tmp_path / "secret.txt")
    with pytest.warns(SideFileWarning, match="outside the trace's folder"):
        trace = import_file(folder / SOURCE).traces[0]
    assert SECRET not in trace.header.license
    assert trace.header.license == ""


def test_a_provenance_symlink_out_of_the_folder_is_not_read(tmp_path: Path) -> None:
    folder = trace_folder(tmp_path)
    (tmp_path / "secret.txt").write_text(f"| {SOURCE} | {SECRET} |\n")
    (folder / "PROVENANCE.md").symlink_to(tmp_path / "secret.txt")
    with pytest.warns(SideFileWarning, match="outside the trace's folder"):
        trace = import_file(folder / SOURCE).traces[0]
    assert SECRET not in trace.header.provenance


def test_an_oversized_licence_is_not_read(tmp_path: Path) -> None:
    folder = trace_folder(tmp_path)
    (folder / "LICENSE").write_text("MIT License\n" + "x" * MAX_SIDE_FILE_BYTES)
    with pytest.warns(SideFileWarning, match="over the 65,536-byte limit"):
        assert import_file(folder / SOURCE).traces[0].header.license == ""


@fifo_only
@pytest.mark.parametrize("name", ["LICENSE", "PROVENANCE.md"])
def test_a_fifo_side_file_does_not_hang_the_import(tmp_path: Path, name: str) -> None:
    folder = trace_folder(tmp_path)
    os.mkfifo(folder / name)
    out = tmp_path / "out"
    codes: list[int] = []
    worker = threading.Thread(
        target=lambda: codes.append(main(["traces", "import", str(folder), "--out", str(out)])),
        daemon=True,  # on a regio that opens the FIFO, the thread blocks for ever
    )
    with pytest.warns(SideFileWarning, match="not a regular file"):
        worker.start()
        worker.join(timeout=60)
    assert codes == [0], "the import blocked on the FIFO"
    trace = read_trace(next(out.glob("*.jsonl")))
    assert trace.header.license == "" and trace.header.provenance == ""
