"""examples/quickstart.ipynb runs from top to bottom (executed with nbclient)."""

from __future__ import annotations

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"

EXTRAS = 'the notebook extras are not installed: pip install ".[notebook]"'


def test_the_quickstart_notebook_runs(tmp_path, monkeypatch):
    """Every cell runs without an error, the training cell prints its falling loss, and the
    plot cell shows an image (the kernel's inline backend)."""
    nbformat = pytest.importorskip("nbformat", reason=EXTRAS)
    nbclient = pytest.importorskip("nbclient", reason=EXTRAS)
    pytest.importorskip("ipykernel", reason=EXTRAS)
    pytest.importorskip("matplotlib", reason=EXTRAS)
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    text = "".join(output.get("text", "") for output in outputs)
    assert "loss " in text and " -> " in text
    assert any("image/png" in output.get("data", {}) for output in outputs)
