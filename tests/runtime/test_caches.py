"""Every cache in one registry, each bounded, all emptied by ``empty_cache()``, shown by the
doctor."""

from __future__ import annotations

import numpy as np

import aclnn_py
from aclnn_py import _caches
from aclnn_py.engine import launch_cache, numpy_path
from aclnn_py.runtime import arrays, results

EXPECTED = {"launches", "device memory pool", "page-locked pool", "numpy results",
            "numpy call layouts", "contiguous strides", "array layout ids", "call specs",
            "call fast paths", "operator signatures", "role table entries",
            "bound operator functions", "custom operator libraries", "chunking streams",
            "device constants"}


def _use_every_cache() -> None:
    x = np.ones(3, np.float32)
    aclnn_py.mse_loss_backward(x, x, x)                       # numpy path: layouts, pools
    device = aclnn_py.to_device(x)
    aclnn_py.mse_loss_backward(device, device, device).numpy()  # launches
    aclnn_py.mse_loss_backward(1.0, device, device).numpy()     # device constants
    aclnn_py.call("aclnnAdd", x, x, 1)                         # call specs, signatures
    np.asarray(aclnn_py.mse_loss_backward(1.0, np.ones(1 << 19, np.float32), 0.0, "none"))


def test_every_cache_is_registered_with_a_bound():
    _use_every_cache()
    found = _caches.sizes()
    assert set(found) >= EXPECTED
    for name, cache in found.items():
        assert isinstance(cache["size"], int) and cache["size"] >= 0, name
        assert cache["bound"] and cache["holds"], name
        assert cache["unit"] in ("entries", "bytes"), name


def test_empty_cache_empties_every_cache_it_can_through_the_registry():
    _use_every_cache()
    before = _caches.sizes()
    for name in ("launches", "numpy call layouts", "contiguous strides", "call specs",
                 "device memory pool", "page-locked pool", "device constants"):
        assert before[name]["size"] > 0, name
    aclnn_py.empty_cache()
    after = _caches.sizes()
    for cache in _caches.caches():
        if cache.empty is not None:
            assert after[cache.name]["size"] == 0, cache.name
    assert not any(entry.launches for entry in launch_cache._by_stream.values())
    assert not numpy_path._layouts
    assert not arrays._contiguous and results.cached_result_bytes() == 0


def test_the_emptying_order_puts_what_holds_device_memory_before_the_pools():
    stages = [cache.stage for cache in _caches.caches()]
    assert stages == sorted(stages)
    names = [cache.name for cache in _caches.caches()]
    assert names.index("launches") < names.index("device memory pool")


def test_the_doctor_shows_the_caches_and_their_sizes():
    from aclnn_py import doctor

    found = doctor.report()
    assert set(found["caches"]) >= EXPECTED
    text = doctor.format_report(found)
    assert "caches (aclnn_py.empty_cache() empties them):" in text
    assert "numpy call layouts" in text


def test_call_s_tables_stay_within_their_bound(monkeypatch):
    from aclnn_py.engine import call as _call

    monkeypatch.setattr(_call._specs, "maxsize", 2)
    monkeypatch.setattr(_call._fast, "maxsize", 2)
    x = np.ones(3, np.float32)
    # aclnnAdd's last argument is alpha; the losses' is the reduction, 0 ("none")
    for operator, last in (("aclnnAdd", 1), ("aclnnMseLoss", 0), ("aclnnL1Loss", 0),
                           ("aclnnAdd", 1)):
        aclnn_py.call(operator, x, x, last)
        assert len(_call._specs) <= 2 and len(_call._fast) <= 2
    np.testing.assert_array_equal(aclnn_py.call("aclnnAdd", x, x, 1), 2 * x)
    aclnn_py.empty_cache()
