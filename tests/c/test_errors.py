"""Status codes become typed, picklable errors carrying CANN's text."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import fired_faults

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.errors import AclError, OutOfMemoryError, status_name


@pytest.mark.parametrize("status, name", [
    (0, "ACL_SUCCESS"),
    (100000, "ACL_ERROR_INVALID_PARAM"),
    (100001, "ACL_ERROR_UNINITIALIZE"),
    (107002, "ACL_ERROR_RT_CONTEXT_NULL"),
    (207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"),
    (507015, "ACL_ERROR_RT_AICORE_EXCEPTION"),
    (161001, "ACLNN_ERR_PARAM_NULLPTR"),
    (161002, "ACLNN_ERR_PARAM_INVALID"),
    (361001, "ACLNN_ERR_RUNTIME_ERROR"),
    (561103, "ACLNN_ERR_INNER_NULLPTR"),
])
def test_status_names_come_from_the_headers(status, name):
    assert status_name(status) == name


def test_unknown_status_still_makes_an_error():
    error = AclError(987654, "aclrtSomething", "")
    assert error.name == "UNKNOWN(987654)"
    assert "987654" in str(error) and "aclrtSomething" in str(error)
    assert "no message" in str(error)
    assert error.category == "unknown"


def test_error_text_names_api_code_and_message():
    error = AclError(161002, "aclnnMseLossBackwardGetWorkspaceSize", "self has a bad dtype")
    text = str(error)
    assert "aclnnMseLossBackwardGetWorkspaceSize" in text
    assert "ACLNN_ERR_PARAM_INVALID (161002)" in text
    assert "self has a bad dtype" in text
    assert error.category.startswith("invalid argument")


@pytest.mark.parametrize("status", [200000, 207001, 207018])
def test_out_of_memory_statuses_map_to_memory_error(status):
    error = AclError.from_status(status, "aclrtMalloc", "no memory")
    assert isinstance(error, OutOfMemoryError)
    assert isinstance(error, MemoryError) and isinstance(error, RuntimeError)


@pytest.mark.parametrize("error", [
    AclError(161002, "aclnnX", "bad"),
    OutOfMemoryError(207001, "aclrtMalloc", "requested 10 bytes"),
    aclnn_py.LibraryNotFoundError("nothing found", ["/a/lib64/libascendcl.so", "/b"]),
    aclnn_py.UnavailableError("aclnnNewOp", "/x/libopapi.so"),
    AclError(42, "aclFoo"),
])
def test_errors_pickle(error):
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)
    assert clone.args == error.args


def test_library_not_found_is_an_oserror_listing_paths():
    error = aclnn_py.LibraryNotFoundError("nothing", ["/p/one", "/p/two"])
    assert isinstance(error, OSError)
    assert "/p/one" in str(error) and "/p/two" in str(error)


def test_check_raises_with_canns_message_and_clears_it(device):
    with pytest.raises(AclError) as info:
        ll.malloc(0)
    assert info.value.status == 100000
    assert info.value.api == "aclrtMalloc"
    assert info.value.message  # the emulator's own text, fetched by aclGetRecentErrMsg
    assert ll.recent_error_message() == ""  # fetching cleared it


@pytest.mark.emulator_only
def test_injected_status_reaches_the_caller_with_its_message():
    aclnn_py.empty_cache()  # so that the call allocates
    aclnn_py.emulator.inject_fault("aclrtMalloc", 507899)
    with pytest.raises(AclError) as info:
        aclnn_py.mse_loss_backward(np.ones(3, np.float32), np.ones(3, np.float32),
                                   np.ones(3, np.float32))
    assert info.value.status == 507899 and info.value.api == "aclrtMalloc"
    assert "injected fault, status 507899" in info.value.message
    assert fired_faults() == ["aclrtMalloc"]


@pytest.mark.emulator_only
def test_out_of_memory_after_the_pool_retry_says_how_much_was_asked_for():
    aclnn_py.empty_cache()
    aclnn_py.emulator.inject_fault("aclrtMalloc", 207001, nth=1)
    aclnn_py.emulator.inject_fault("aclrtMalloc", 207001, nth=2)
    with pytest.raises(OutOfMemoryError) as info:
        aclnn_py.mse_loss_backward(np.ones(3, np.float32), np.ones(3, np.float32),
                                   np.ones(3, np.float32))
    assert info.value.status == 207001 and info.value.api == "aclrtMalloc"
    # the call's one device block: grad, x and y staged 512 bytes apart, then the result
    assert "requested 1548 bytes on device 0" in info.value.message
    assert "bytes free of" in info.value.message and "injected" in info.value.message
    assert fired_faults() == ["aclrtMalloc", "aclrtMalloc"]  # the call and the pool's retry
