"""The Examples sections of the public functions' docstrings run as written (doctest)."""

from __future__ import annotations

import doctest

import pytest

import aclnn_py

WITH_EXAMPLES = ("mse_loss_backward", "mse_loss", "l1_loss", "l1_loss_backward",
                 "smooth_l1_loss", "smooth_l1_loss_backward", "add", "call", "signature",
                 "operators", "to_device", "empty")


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_run_as_written(name):
    function = getattr(aclnn_py, name)
    assert "Examples\n" in function.__doc__ and ">>>" in function.__doc__, name
    tests = doctest.DocTestFinder(recurse=False).find(function, name, globs={})
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted and not result.failed, f"{name}: {result}"
