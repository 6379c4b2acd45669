"""Owners of CANN's host-side objects: aclTensor, aclScalar, the aclnn arrays and tensor
lists (one class, :class:`Handle`, with a table of kinds), and the executor of the
two-phase call.

Each sits in an ``aclpyHandle`` of the host library, destroyed in C when collected (no
Python code, so no lock or interrupt can get in the way).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

from .._c import lowlevel as ll
from ..errors import AclError
from .process import activate, logger
from .streams import Stream


@dataclass(frozen=True)
class HandleKind:
    """One kind of CANN object a :class:`Handle` can own."""

    code: int                     # its ``aclpyHandle`` kind (headers/aclnn_py_host.h)
    destroy_api: str              # the CANN function that destroys it
    create: Callable[..., Any]    # ``create(owned, *arguments)``: the object, made in ``owned``


def _tensor_list(owned: Any, tensors: Sequence[Handle]) -> Any:
    # aclDestroyTensorList destroys the list's tensors: the list takes them over, so their
    # own destroy() does nothing afterwards. If the list cannot be made they keep them.
    handle = ll.create_owned_tensor_list(owned, [tensor._owned for tensor in tensors])
    for tensor in tensors:
        tensor.handle = ll.NULL
    return handle


def _scalar_list(owned: Any, scalars: Sequence[Handle]) -> Any:
    # As _tensor_list: aclDestroyScalarList destroys the list's scalars.
    handle = ll.create_owned_scalar_list(owned, [scalar._owned for scalar in scalars])
    for scalar in scalars:
        scalar.handle = ll.NULL
    return handle


KINDS: dict[str, HandleKind] = {
    # (shape, acl dtype, strides, offset, storage size, data): shape, strides and offset
    # count elements; the storage is one dimension of ``storage size`` elements at ``data``.
    "tensor": HandleKind(ll.HANDLE_TENSOR, "aclDestroyTensor",
                         lambda owned, shape, dtype, strides, offset, storage, data:
                         ll.create_owned_tensor(owned, shape, dtype, strides, offset,
                                                (storage,), data)),
    # (value, acl dtype): a float for ACL_FLOAT / ACL_DOUBLE, else a one-element numpy
    # array of the dtype; CANN copies the value at creation.
    "scalar": HandleKind(ll.HANDLE_SCALAR, "aclDestroyScalar", ll.create_owned_scalar),
    # (values,): CANN copies them.
    "int_array": HandleKind(ll.HANDLE_INT_ARRAY, "aclDestroyIntArray",
                            lambda owned, values: ll.create_owned_int_array(
                                owned, tuple(int(v) for v in values))),
    "float_array": HandleKind(ll.HANDLE_FLOAT_ARRAY, "aclDestroyFloatArray",
                              lambda owned, values: ll.create_owned_float_array(
                                  owned, tuple(float(v) for v in values))),
    "bool_array": HandleKind(ll.HANDLE_BOOL_ARRAY, "aclDestroyBoolArray",
                             lambda owned, values: ll.create_owned_bool_array(
                                 owned, tuple(bool(v) for v in values))),
    # (tensor handles,): the list owns its tensors from then on.
    "tensor_list": HandleKind(ll.HANDLE_TENSOR_LIST, "aclDestroyTensorList", _tensor_list),
    # (scalar handles,): the list owns its scalars from then on.
    "scalar_list": HandleKind(ll.HANDLE_SCALAR_LIST, "aclDestroyScalarList", _scalar_list),
}


class Handle:
    """Owns one CANN object of a kind in :data:`KINDS` through an ``aclpyHandle``
    (``_owned``), which destroys it in C when the owner is collected without
    :meth:`destroy`; ``handle`` is the object."""

    __slots__ = ("handle", "_owned", "_kind")

    def __init__(self, kind: str, *arguments: Any) -> None:
        made = self._kind = KINDS[kind]
        owned = self._owned = ll.new_handle(made.code)
        self.handle = made.create(owned, *arguments)

    def destroy(self) -> None:
        """Release the object now. Safe to call twice."""
        ll.handle_release(self._owned, self._kind.destroy_api)

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.destroy()


class CString:
    """A NUL-terminated copy of a str for a ``const char *`` argument, kept as long as the
    executor that may read it."""

    __slots__ = ("handle",)

    def __init__(self, text: str) -> None:
        self.handle = ll.c_string(text)

    def destroy(self) -> None:
        """Nothing to release in CANN: the memory goes with this object."""




class Executor:
    """Owns the ``aclOpExecutor`` that phase 1 of ``operator`` returned.

    This class is the one place that encodes who owns an executor. We own it
    from phase 1 (CANN writes it straight into an ``aclpyHandle``, which
    destroys it in C if the object is collected). Then either:

    * :meth:`make_repeatable` succeeds: the executor stays ours across any number
      of launches (:attr:`launcher`) until :meth:`close` (or collection) destroys it;
    * or it does not (CANN refuses executors from its executor cache, among others,
      and CANN 8.0.RC2 lacks the API): :meth:`launch_once` hands it to phase 2, which
      frees it whether the launch succeeds or not. It is never launched or destroyed
      by us afterwards. One never launched is destroyed by :meth:`close`; without
      ``aclDestroyAclOpExecutor`` (8.0.RC2) it cannot be, which is why callers launch
      right after phase 1.
    """

    __slots__ = ("operator", "library", "device", "repeatable", "workspace_size", "handle",
                 "phase2_arguments", "_launcher", "_keepalive", "_owned")

    def __init__(self, operator: str, *arguments: Any, keepalive: tuple[Any, ...] = (),
                 library: str = "", phase2_arguments: tuple[Any, ...] = ()) -> None:
        """Phase 1 of ``operator`` over the C ``arguments``; ``library``: where it was bound
        from (``ll.bind_operator``), "" for the operators of the loaded CANN libraries;
        ``phase2_arguments``: what phase 2 takes besides the usual four, for an operator
        whose phase 2 has parameters of its own (launched once only, by
        :meth:`launch_once`)."""
        self.operator = operator
        self.library = library
        self.phase2_arguments = phase2_arguments
        self.device = activate()
        self.repeatable = False
        self._launcher: Any = None
        # The executor refers to the aclTensors: until phase 2 returns, or for as long as
        # it lives when repeatable.
        self._keepalive = keepalive
        self._owned = ll.new_handle(ll.HANDLE_EXECUTOR)
        self.workspace_size, self.handle = ll.operator_workspace_size(
            operator, *arguments, owner=self._owned, library=library)

    def make_repeatable(self) -> bool:
        """Allow any number of launches (``aclSetAclOpExecutorRepeatable``); False when the
        loaded CANN lacks that API or refuses this executor, which stays a one-shot one.

        A refusal is an answer, not an error: CANN returns 561000 for an executor from its
        executor cache (the same operator and signature already ran non-repeatably in
        the process), for AI CPU kernels and same-address view copies (hicann/opbase
        ``acl_op_api.cpp``, ``op_cache.cpp``, docs ``aclSetAclOpExecutorRepeatable.md``);
        Huawei's ATB then launches the executor the ordinary way (hicann/ascend-
        transformer-boost ``src/atb/runner/aclnn_runner.cpp``), as aclnn_py does.
        """
        if ll.repeatable_api_missing() or self.phase2_arguments:
            return False
        try:
            ll.set_executor_repeatable(self.handle)
        except AclError as refusal:
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("%s: no repeatable executor (%s); launching it once", self.operator,
                             refusal)
            return False
        self.repeatable = True
        return True

    @property
    def launcher(self) -> Any:
        """Phase 2 of a repeatable executor, ``launcher(workspace, workspace_size, handle,
        stream_handle)``, looked up once (launches are the per-call path)."""
        launcher = self._launcher
        if launcher is None:
            launcher = self._launcher = ll.operator_launcher(self.operator, self.library)
        return launcher

    def launch(self, workspace: Any, stream: Stream) -> None:
        """Phase 2 of a repeatable executor on ``stream`` with ``workspace`` (a device
        pointer, or NULL for none)."""
        if not self.repeatable:  # cleared by close()
            raise RuntimeError(f"{self.operator}: this executor is closed or not repeatable")
        self.launcher(workspace, self.workspace_size, self.handle, stream.handle)

    def launch_once(self, workspace: Any, stream_handle: Any) -> None:
        """Phase 2 of a one-shot executor, which hands it to CANN in the same C call
        (``aclpyHandleLaunch``): CANN frees it inside phase 2, success or not."""
        if self.repeatable:
            raise RuntimeError(f"{self.operator}: a repeatable executor is launched by launch()")
        ll.launch_consuming(self._owned, ll.operator_phase2(self.operator, self.library), workspace,
                            self.workspace_size, stream_handle, self.operator,
                            self.phase2_arguments)

    def close(self) -> None:
        """Destroy the executor if it is still ours (not handed to a launch_once). Safe to
        call twice."""
        self.repeatable = False  # no launch may reach a destroyed executor
        ll.handle_release(self._owned, "aclDestroyAclOpExecutor")
        self._keepalive = ()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
