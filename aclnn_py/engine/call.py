"""``aclnn_py.call``: any operator, through its header (``ops.catalog``).

The call is made into an :class:`~aclnn_py.ops.specs.OperatorSpec` (one per operator
and pattern of arguments left out), so it runs through the curated operators' launch
path, launch cache, staging and fallbacks. Arguments are converted by their C type;
the operator itself checks what it supports and refuses with CANN's status and
message. Signatures with in-place (``...Ref``) tensors, tensors left out (None) or
tensor lists run phase 1 on every launch (their executors are not rebound:
rebinding a list's tensors would need ``aclSetDynamicInputTensorAddr``), and so do operators
whose phase 2 takes parameters of its own (it is given phase 1's objects again, or the
arguments given for the parameters only it has, which come after phase 1's). The
arrays of a tensor list travel among the launch's arrays, one each, named
``<parameter>[<i>]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _caches
from ..errors import LibraryNotFoundError, UnavailableError
from ..ops.dtypes import acl_dtype, all_dtypes
from ..ops.specs import Attribute, OperatorSpec, c_complex, c_float
from ..runtime import arrays as _arrays
from ..runtime.arrays import DeviceArray, contiguous_strides, empty, to_device
from ..runtime.streams import Stream
from .dispatch import fast_call, launch_on_device, launch_on_host
from .launch import OneShotLaunch
from .tensors import TensorCall, involved
from .validate import (
    arguments,
    as_array,
    broadcast_shapes,
    check_no_partial_overlap,
    check_out,
    placement,
    reference_dtype,
)

if TYPE_CHECKING:  # imported where used: importing aclnn_py reads no headers
    from ..ops import catalog

_INTEGERS = {
    **{name: (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
       for name, bits in (("int8_t", 8), ("int16_t", 16), ("int32_t", 32), ("int64_t", 64),
                          ("int", 32), ("long", 64), ("long long", 64))},
    **{name: (0, (1 << bits) - 1)
       for name, bits in (("uint8_t", 8), ("uint16_t", 16), ("uint32_t", 32), ("uint64_t", 64),
                          ("unsigned int", 32), ("size_t", 64))},
}
_FLOATS = {"float", "double"}
_STRINGS = {"char *", "const char *"}
_SCALARS = {"aclScalar *", "const aclScalar *"}
_SCALAR_LISTS = {"aclScalarList *", "const aclScalarList *"}
_INT_ARRAYS = {"aclIntArray *", "const aclIntArray *"}
_FLOAT_ARRAYS = {"aclFloatArray *", "const aclFloatArray *"}
_BOOL_ARRAYS = {"aclBoolArray *", "const aclBoolArray *"}
_DTYPES = {"aclDataType"}


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _items(where: str, value: Any, what: str) -> tuple[Any, ...]:
    """The items of an array attribute: a list, tuple or other sequence, or a 1-d array."""
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise TypeError(f"{where} must be a sequence of {what}, got a {value.ndim}-d array")
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{where} must be a sequence of {what}, got {type(value).__name__}")
    return tuple(value)


def _integer(c_type: str, where: str, name: str, value: Any) -> int:
    if not _is_integer(value):
        raise TypeError(f"{where} must be an integer, got {type(value).__name__}")
    low, high = _INTEGERS[c_type]
    if not low <= int(value) <= high:
        raise ValueError(f"{where} must be in [{low}, {high}], got {value}")
    return int(value)


def _bool(c_type: str, where: str, name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where} must be a bool, got {type(value).__name__}")
    return bool(value)


def _float(c_type: str, where: str, name: str, value: Any) -> Any:
    if not _is_real(value):
        raise TypeError(f"{where} must be a real number, got {type(value).__name__}")
    return c_float(float(value))


def _string(c_type: str, where: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a str, got {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{where} must not contain NUL characters")
    return value


def _data_type(c_type: str, where: str, name: str, value: Any) -> int:
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"{where} must be a numpy dtype (or anything numpy.dtype() takes), "
                        f"got {value!r}") from None
    return acl_dtype(dtype, all_dtypes(), argument=name)


def _scalar_dtype(where: str, value: Any) -> np.dtype:
    """The dtype an aclScalar argument travels as: its own for a bool or numpy scalar, int64
    for a Python int (in range), float64 for a Python float."""
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, int):
        low, high = _INTEGERS["int64_t"]
        if not low <= value <= high:
            raise ValueError(f"{where}: a Python int travels as an int64 scalar, so it must "
                             f"be in [{low}, {high}], got {value} (pass a numpy scalar "
                             "for another dtype)")
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    raise TypeError(f"{where} must be a Python number or a numpy scalar, got "
                    f"{type(value).__name__}")


def _scalar(c_type: str, where: str, name: str, value: Any) -> tuple[int, np.dtype, Any]:
    dtype = _scalar_dtype(where, value)
    item = value.item() if isinstance(value, np.generic) else value
    if isinstance(item, float):
        item = c_float(item)
    elif isinstance(item, complex):
        item = c_complex(item)
    return (acl_dtype(dtype, all_dtypes(), argument=name), dtype, item)


def _scalar_list(c_type: str, where: str, name: str, value: Any) -> tuple[Any, ...]:
    """An aclScalarList's scalars, each converted as one aclScalar (an array gives its items
    as numpy scalars of its dtype)."""
    if isinstance(value, np.ndarray):
        value = list(value)
    return tuple(_scalar(c_type, f"{where}[{index}]", name, item)
                 for index, item in enumerate(_items(where, value, "numbers")))


def _int_array(c_type: str, where: str, name: str, value: Any) -> tuple[int, ...]:
    items = _items(where, value, "integers")
    for item in items:
        if not _is_integer(item):
            raise TypeError(f"{where} must hold integers, got {item!r}")
    return tuple(int(item) for item in items)


def _float_array(c_type: str, where: str, name: str, value: Any) -> tuple[Any, ...]:
    items = _items(where, value, "real numbers")
    for item in items:
        if not _is_real(item):
            raise TypeError(f"{where} must hold real numbers, got {item!r}")
    return tuple(c_float(float(item)) for item in items)


def _bool_array(c_type: str, where: str, name: str, value: Any) -> tuple[bool, ...]:
    items = _items(where, value, "bools")
    for item in items:
        if not isinstance(item, (bool, np.bool_)):
            raise TypeError(f"{where} must hold bools, got {item!r}")
    return tuple(bool(item) for item in items)


# The converter of each C type an attribute may have: (C type, "operator: name (C type)",
# name, value) -> the C value.
_CONVERTERS: dict[str, Callable[[str, str, str, Any], Any]] = {
    **dict.fromkeys(_INTEGERS, _integer), "bool": _bool, **dict.fromkeys(_FLOATS, _float),
    **dict.fromkeys(_STRINGS, _string), **dict.fromkeys(_DTYPES, _data_type),
    **dict.fromkeys(_SCALARS, _scalar), **dict.fromkeys(_SCALAR_LISTS, _scalar_list),
    **dict.fromkeys(_INT_ARRAYS, _int_array),
    **dict.fromkeys(_FLOAT_ARRAYS, _float_array), **dict.fromkeys(_BOOL_ARRAYS, _bool_array)}


def convert_attribute(operator: str, parameter: catalog.Parameter, value: Any) -> Any:
    """The C value of an attribute (hashable: it is part of the launch-cache key)."""
    from ..ops import headers as _headers

    c_type, name = _headers.bare(parameter.c_type), parameter.name
    where = f"{operator}: {name} ({c_type})"
    if value is None:
        if parameter.optional and c_type.endswith("*"):
            return None
        raise TypeError(f"{where} is required; None is accepted only for pointer parameters "
                        "whose name ends in Optional or that the operator's doc lets be NULL")
    converter = _CONVERTERS.get(c_type)
    if converter is None:
        raise TypeError(f"{where}: aclnn_py cannot pass arguments of C type {c_type} yet")
    return converter(c_type, where, name, value)


def _outputs(signature: catalog.Signature, out: Any) -> tuple[list[catalog.Parameter],
                                                            tuple[Any, ...] | None]:
    """The output parameters and what is given for each (None when out= is not given): an
    array, or for a tensor list the sequence of its arrays."""
    from ..ops import catalog
    from ..ops import headers as _headers

    given = None if out is None else tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if signature.roles_known:
        outputs = [p for p in signature.parameters if p.role == "output"]
        if out is not None and len(outputs) == 1 and \
                _headers.bare(outputs[0].c_type) in catalog.TENSOR_LIST_TYPES:
            given = (out,)  # out= is that list's arrays
    else:
        if given is None:
            raise TypeError(_unknown_roles(signature))
        tensors = [p for p in signature.parameters if p.is_tensor]
        if len(given) > len(tensors):
            raise TypeError(f"{signature.name}: out= has {len(given)} arrays but the operator "
                            f"has {len(tensors)} tensor parameters")
        outputs = tensors[len(tensors) - len(given):]
    if given is not None and len(given) != len(outputs):
        names = ", ".join(p.name for p in outputs)
        raise TypeError(f"{signature.name}: out= must give {len(outputs)} arrays ({names}), "
                        f"got {len(given)}")
    return outputs, given


def _unknown_roles(signature: catalog.Signature) -> str:
    """Why a call of an operator whose written tensors nobody knows is refused, and what
    to do."""
    tensors = [f"{p.name} ({p.c_type})" for p in signature.parameters if p.is_tensor]
    return (f"{signature.name}: which of its tensors are outputs or updated in place is not "
            f"known (its tensor parameters: {', '.join(tensors) or 'none'}; no role table "
            "entry or operator description applies, and CANN's naming conventions find "
            "none), so nothing would come back. State them once with "
            f"aclnn_py.register_roles({signature.name!r}, outputs=[...], inout=[...]), or "
            "pass out= with the output arrays (they bind to the last tensor parameters)")


def _fast_converter(parameter: catalog.Parameter) -> Any:
    """For the per-call path: a function giving an attribute's C value exactly as
    :func:`convert_attribute` does, for the common spellings only (None otherwise)."""
    from ..ops import headers as _headers

    c_type = _headers.bare(parameter.c_type)
    if c_type in _INTEGERS:
        low, high = _INTEGERS[c_type]
        return lambda v: v if type(v) is int and low <= v <= high else None
    if c_type == "bool":
        return lambda v: v if type(v) is bool else None
    if c_type in _FLOATS:
        return lambda v: (v if v else c_float(v)) if type(v) is float else None
    if c_type in _STRINGS:
        return lambda v: v if type(v) is str and "\0" not in v else None
    if c_type in _SCALARS:
        scalar_types = {kind: (acl_dtype(np.dtype(kind), all_dtypes()), np.dtype(kind))
                        for kind in (bool, int, float)}
        scalar_types[int] = (scalar_types[int][0], np.dtype(np.int64))
        scalar_types[float] = (acl_dtype(np.dtype(np.float64), all_dtypes()),
                               np.dtype(np.float64))

        low, high = _INTEGERS["int64_t"]

        def scalar(v: Any) -> Any:
            found = scalar_types.get(type(v))
            if found is None or (type(v) is int and not low <= v <= high):
                return None
            return (*found, v if v or type(v) is not float else c_float(v))

        return scalar
    return lambda v: None


_MAX_SPECS = 1024  # each table is cleared when it reaches this many entries
_specs: _caches.Bounded[tuple[Any, ...], OperatorSpec] = _caches.bounded(
    "call specs", _MAX_SPECS, holds="the operator spec of each call shape of call()",
    of="shapes")
# Calls of one operator with n positional arguments, no keywords and no out=, that ran
# before with every tensor given: (spec, positions of the tensors, of the attributes).
_fast: _caches.Bounded[tuple[str, int], tuple[OperatorSpec, tuple[int, ...], tuple[int, ...]]] \
    = _caches.bounded("call fast paths", _MAX_SPECS, holds="where the tensors and attributes "
                      "sit in a repeated call() of an operator",
                      of="operators and argument counts")
_forgetting = False  # whether the catalog's forget() clears _specs and _fast yet


def _spec(signature: catalog.Signature, library: Path, present: tuple[str, ...],
          outputs: tuple[str, ...], left_out: tuple[str, ...],
          lists: tuple[tuple[str, int], ...] = ()) -> OperatorSpec:
    """The spec of a call of ``signature`` (bound to ``library``) with the tensors
    ``present`` as inputs, ``outputs`` as outputs, the tensors ``left_out`` passed as NULL
    and each tensor list of ``lists`` (parameter, number of arrays) made of its arrays
    ``<parameter>[<i>]``."""
    global _forgetting
    if not _forgetting:
        from ..ops import catalog

        catalog.on_forget(_fast.clear)
        catalog.on_forget(_specs.clear)
        _forgetting = True
    key = (signature, present, outputs, lists)
    found = _specs.get(key)
    if found is not None:
        return found
    tensors = {name: index for index, name in enumerate((*present, *outputs))}
    sizes = dict(lists)
    attributes = [p for p in signature.parameters if not p.is_tensor]
    attribute_index = {p.name: index for index, p in enumerate(attributes)}

    def entry(p: catalog.Parameter) -> tuple[str, int] | tuple[str, int, int]:
        if p.name in sizes:
            return ("list", tensors.get(f"{p.name}[0]", 0), sizes[p.name])
        if p.name in tensors:
            return ("tensor", tensors[p.name])
        if p.name in attribute_index:
            return ("attribute", attribute_index[p.name])
        return ("null", 0)

    # Phase 2's parameters of its own get the objects of phase 1's of the same name (or the
    # arguments given for those only phase 2 has): every launch is then a phase 1 and a
    # phase 2, as the objects are passed again.
    phase2 = tuple(entry(p) for p in signature.phase2)
    inplace = any(p.role == "inout" for p in signature.parameters)
    return _specs.put(key, OperatorSpec(
        signature.name, signature.name, present,
        tuple(Attribute(p.name, p.c_type, None, lambda v: v, _fast_converter(p))
              for p in attributes),
        same_dtype=False, dtypes=all_dtypes(), max_rank=64, outputs=outputs,
        library=str(library), order=tuple(entry(p) for p in signature.phase1_parameters),
        phase2=phase2, repeatable=not inplace and not left_out and not lists and not phase2
        and signature.name not in DATA_DEPENDENT, elementwise=False))


def operators(*, callable: bool = False, computed: bool | None = None) -> list[str]:
    """:func:`aclnn_py.operators` (the public layer documents it)."""
    from ..ops import catalog

    names = catalog.operators(callable=callable)
    kernels = _emulated_kernels()
    if kernels is None:
        return names if computed is not False else []
    packaged = {name for name in (names if callable else catalog.operators(callable=True))
                if catalog.from_package(name)}  # computed by their package's own library

    def computes(name: str) -> bool:
        return name in kernels or name in packaged

    if callable:
        names = [name for name in names if computes(name)]
    if computed is not None:
        names = [name for name in names if computes(name) == computed]
    return names


def signature(name: str) -> catalog.Signature:
    """:func:`aclnn_py.signature` (the public layer documents it)."""
    import dataclasses

    from ..ops import catalog
    from ..ops.rules import accepted_dtypes
    from ..runtime.process import soc_name

    found = catalog.signature(_checked_name(name))
    computed_by = ""
    kernels = _emulated_kernels()
    if kernels is not None:
        computed_by = kernels.get(found.name, "its package's library"
                                  if found.package and found.callable else "not computed")
    callable_here = found.callable and computed_by != "not computed"
    return dataclasses.replace(found, dtypes=accepted_dtypes(found.name, soc_name() or ""),
                               computed_by=computed_by, callable=callable_here)


def _emulated_kernels() -> dict[str, str] | None:
    """On the emulator, what computes each operator it computes ("C kernel", "Python
    kernel", "user kernel"); None on CANN."""
    from .._c import lowlevel as _ll

    if not _ll.emulator_loaded():
        return None
    from ..emulator import _kernels

    kinds = {name: "C kernel" for name in _kernels.c_kernels()}
    for name, kernel in _kernels.table().items():
        kinds.setdefault(name, "Python kernel" if kernel.builtin else "user kernel")
    return kinds


def _checked_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"the operator name must be a str such as 'aclnnAdd', got "
                        f"{type(name).__name__}")
    return name


def run(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any,
        stream: Stream | None, allocator: TensorCall | None = None) -> Any:
    """``aclnn_py.call(name, *args, out=out, stream=stream, **kwargs)``; ``allocator``:
    the torch call whose outputs torch allocates (its tensors
    are DeviceArrays in ``args`` by now)."""
    if allocator is None and not kwargs and out is None and type(name) is str:
        fast = _fast.get((name, len(args)))
        if fast is not None:
            spec, tensors, attributes = fast
            inputs = [args[i] for i in tensors]
            attribute_args = tuple(args[i] for i in attributes)
            result = fast_call(spec, inputs, attribute_args, None, stream)
            if result is not None:
                return result
            if involved(inputs, None, stream):
                result = _fast_tensor_call(spec, inputs, attribute_args, stream)
                if result is not None:
                    return result
    if allocator is None and involved((*args, *kwargs.values()), out, stream):
        return _tensor_call(name, args, kwargs, out, TensorCall(stream))
    return _bound_call(name, args, kwargs, out, stream, allocator)


@dataclass
class _Arguments:
    """A call's arguments converted: the input arrays (a tensor list's as
    ``<parameter>[<i>]``), each tensor list's length, the attributes' C values, the tensors
    left out, and the in-place tensors (tensor list or None, its arrays)."""

    arrays: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, int] = field(default_factory=dict)
    c_attributes: list[Any] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    inout_groups: list[tuple[str | None, list[str]]] = field(default_factory=list)

    @property
    def inouts(self) -> list[str]:
        return [member for _, group in self.inout_groups for member in group]


def _tensor_array(name: str, p: catalog.Parameter, argument: str, value: Any,
                  like: Any) -> Any:
    """The array a tensor argument ``value`` (of parameter ``p``, named ``argument``) is."""
    array = as_array(value, like, argument)
    if isinstance(array, DeviceArray):
        array.require_live(argument)
    if p.role == "inout":
        _check_inplace(name, argument, value, array)
    acl_dtype(array.dtype, all_dtypes(), argument=argument)
    return array


def _converted(name: str, parameters: list[catalog.Parameter],
               values: dict[str, Any]) -> _Arguments:
    """Every argument of the call of ``name`` as ``_Arguments``."""
    from ..ops import catalog
    from ..ops import headers as _headers

    like = reference_dtype([member for p in parameters if p.is_tensor
                            for member in _tensor_values(p, values.get(p.name))])
    found = _Arguments()
    for p in parameters:
        value = values.get(p.name)
        if not p.is_tensor:
            found.c_attributes.append(convert_attribute(name, p, value))
        elif value is None:
            if not p.optional:
                raise TypeError(f"{name}: {p.name} is a required tensor; None is accepted only "
                                "for tensors whose name ends in Optional or that the "
                                "operator's doc lets be NULL")
            found.left_out.append(p.name)
        elif _headers.bare(p.c_type) in catalog.TENSOR_LIST_TYPES:
            members = _members(name, p.name, value)
            found.lists[p.name] = len(members)
            group = []
            for index, member in enumerate(members):
                member_name = f"{p.name}[{index}]"
                found.arrays[member_name] = _tensor_array(name, p, member_name, member, like)
                group.append(member_name)
            if p.role == "inout":
                found.inout_groups.append((p.name, group))
        else:
            found.arrays[p.name] = _tensor_array(name, p, p.name, value, like)
            if p.role == "inout":
                found.inout_groups.append((None, [p.name]))
    return found


def _call_stream(name: str, arrays: dict[str, Any], flat_names: tuple[str, ...],
                 flat_given: list[Any] | None, stream: Stream | None) -> tuple[bool, Stream]:
    """Whether the call runs on device arrays, and the stream it runs on, after checking
    the outputs given and that every device array is on one device."""
    on_device = any(isinstance(a, DeviceArray) for a in arrays.values()) or (
        flat_given is not None and any(isinstance(a, DeviceArray) for a in flat_given))
    devices = [a.device for a in arrays.values() if isinstance(a, DeviceArray)]
    if flat_given is not None:
        for output, array in zip(flat_names, flat_given):
            check_out(array, on_device, name=output, operator=name)
        check_no_partial_overlap(tuple(zip(flat_names, flat_given)), tuple(arrays.items()),
                                 name)
        devices += [a.device for a in flat_given if isinstance(a, DeviceArray)]
    if len(set(devices)) > 1:
        raise ValueError(f"{name}: the device arrays must be on one device; got devices "
                         f"{sorted(set(devices))}")
    return on_device, placement(devices, None, stream)


def _bound_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any,
                stream: Stream | None, allocator: TensorCall | None) -> Any:
    """:func:`run` past its fast paths: the operator bound from its header, the arguments
    converted, the outputs allocated, the launch."""
    from ..ops import catalog

    signature = catalog.signature(_checked_name(name))
    library = catalog.bind(signature)
    outputs, given = _outputs(signature, out)
    all_outputs = outputs
    output_names = tuple(p.name for p in outputs)
    parameters = [p for p in signature.parameters if p.name not in output_names]
    parameter_names = tuple(p.name for p in parameters)
    values = arguments(name, parameter_names, args, _spelled(name, parameter_names, kwargs))
    missing = [p.name for p in parameters if p.name not in values and not p.optional]
    if missing:
        raise TypeError(f"{name} is missing {', '.join(missing)} (its parameters: "
                        f"{', '.join(p.name for p in parameters)})")
    converted = _converted(name, parameters, values)
    arrays, lists, left_out = converted.arrays, converted.lists, converted.left_out
    inouts = converted.inouts
    outputs, given, skipped = _written(name, outputs, given)
    left_out += skipped
    flat_names, flat_given = _flat_outputs(name, outputs, given, lists)
    on_device, stream = _call_stream(name, arrays, flat_names, flat_given, stream)
    if name in DATA_DEPENDENT:
        return _data_dependent_call(
            _spec(signature, library, tuple(arrays), flat_names, tuple(left_out)), arrays,
            tuple(converted.c_attributes), flat_given, [p.name in skipped for p in all_outputs],
            on_device, stream, allocator, bool(inouts or lists))
    if flat_given is None:
        flat_given = list(_allocate(name, _rule_values(values, arrays, lists), arrays,
                                    flat_names, on_device, stream.device, allocator))
    spec = _spec(signature, library, tuple(arrays), flat_names, tuple(left_out),
                 tuple(lists.items()))
    simple = len(outputs) == 1 and not inouts and not left_out and not lists and \
        signature.roles_known
    if simple and not kwargs and out is None and len(args) == len(parameters):
        # (every parameter given by position: the repeat reads each from its place)
        names = [p.name for p in parameters]
        _fast.put((name, len(args)), (spec, tuple(names.index(n) for n in arrays), tuple(
            index for index, p in enumerate(parameters) if not p.is_tensor)))
    if on_device and simple and out is None and allocator is None:
        # cached as the curated calls are
        inputs, result = list(arrays.values()), flat_given[0]
        return launch_on_device(spec, tuple(converted.c_attributes), inputs, inputs, [],
                                stream, lambda: result)
    raw = tuple(values.get(p.name) for p in parameters if not p.is_tensor)
    results = _launched(spec, converted, flat_given, on_device, simple, raw,
                        None if out is None else flat_given[0], stream)
    return _returned(converted, outputs, all_outputs, skipped, results, signature)


def _launched(spec: OperatorSpec, converted: _Arguments, flat_given: list[Any],
              on_device: bool, simple: bool, raw: tuple[Any, ...], out: Any,
              stream: Stream) -> list[Any]:
    """Launch a converted call whose outputs are ``flat_given``; returns the arrays it
    updated in place, then its outputs."""
    arrays, inouts = converted.arrays, converted.inouts
    attributes = tuple(converted.c_attributes)
    inputs = list(arrays.values())
    if on_device:
        launch_on_device(spec, attributes, inputs, inputs, flat_given, stream)
    else:  # staged: one output, nothing in place (simple), no empty input
        names = list(arrays)
        launch_on_host(spec, attributes, inputs, raw, inputs, flat_given, out, stream,
                       staged=simple and all(a.size for a in inputs),
                       inplace=[names.index(name) for name in inouts])
    return [*(arrays[n] for n in inouts), *flat_given]


def _returned(converted: _Arguments, outputs: list[catalog.Parameter],
              all_outputs: list[catalog.Parameter], skipped: list[str], results: list[Any],
              signature: catalog.Signature) -> Any:
    """What a call returns: its in-place tensors (a tensor list's as a list), then its
    outputs (None for one left out); one value alone, or None for an operator that writes
    nothing."""
    inouts = converted.inouts
    updated = iter(results[:len(inouts)])
    written = iter(_grouped(outputs, converted.lists, results[len(inouts):]))
    found = [next(updated) if group is None else [next(updated) for _ in members]
             for group, members in converted.inout_groups]
    found += [None if p.name in skipped else next(written) for p in all_outputs]
    if not found and signature.returns_nothing:
        return None
    return found[0] if len(found) == 1 else tuple(found)


def _flat_broadcast(arrays: dict[str, Any]) -> list[tuple[tuple[int, ...], np.dtype]]:
    """aclnnMaskedSelect's out: 1-d, of as many elements as self and mask broadcast to, of
    self's dtype (hicann/ops-math conversion/masked_select_v3/docs/aclnnMaskedSelect.md;
    torch_npu's op-plugin MaskedSelectKernelNpuOpApi.cpp allocates it so)."""
    shape = broadcast_shapes([a.shape for a in arrays.values()])
    if shape is None:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in arrays.items())
        raise ValueError(f"aclnnMaskedSelect: self and mask do not broadcast ({shapes})")
    return [((math.prod(shape),), arrays["self"].dtype)]


# Operators whose outputs' extents depend on the data: their l0 kernels take an output-shape
# argument, and CANN's launch waits for the stream and gives each output aclTensor its real
# view shape before phase 2 returns (hicann/opbase src/nnopbase/composite_op/aclnn_engine/
# op_kernel.h, outshape.h; the operators: hicann/ops-math conversion/masked_select_v3/op_api/
# masked_select.cpp; hicann/ops-nn index/non_zero/op_api/nonzero.cpp, index/unique_consecutive/
# op_api/unique_consecutive.cpp, index/unique_with_counts_ext2/op_host/op_api/
# unique_with_counts_ext2.cpp). call() reads the view shapes back (aclGetViewShape, as torch_npu's
# op-plugin does) and returns the real extents. The emulator has the same list
# (emulator/src/ops_generic.c). Each maps to the layouts call() allocates its outputs with when
# out= is not given; None: out= is needed.
DATA_DEPENDENT: dict[str, Callable[[dict[str, Any]], list[tuple[tuple[int, ...], np.dtype]]]
                     | None] = {
    "aclnnMaskedSelect": _flat_broadcast, "aclnnNonzero": None, "aclnnNonzeroV2": None,
    "aclnnUnique": None, "aclnnUnique2": None, "aclnnUniqueConsecutive": None,
    "aclnnUniqueDim": None,
}


def _data_dependent_call(spec: OperatorSpec, arrays: dict[str, Any],
                         attributes: tuple[Any, ...], given: list[Any] | None,
                         skipped: list[bool], on_device: bool, stream: Stream,
                         allocator: TensorCall | None, unsupported: bool) -> Any:
    """A call of a :data:`DATA_DEPENDENT` operator: its outputs allocated as large as the
    data may need (or ``given``), the launch (one-shot: phase 1 every time), its end waited
    for, and each output returned as its real extent: the first elements of the array,
    viewed with the view shape CANN gave its aclTensor (for numpy, the first elements
    copied back into it)."""
    operator = spec.cann
    if unsupported:
        raise TypeError(f"{operator}: its outputs' extents depend on the data, and call() "
                        "reads them back for tensor outputs only (no tensor list, nothing "
                        "updated in place)")
    device = stream.device
    if given is None:
        rule = DATA_DEPENDENT[operator]
        if rule is None:
            raise TypeError(f"{operator}: its outputs' extents depend on the data, and aclnn_py "
                            "does not know how large they must be; pass out= with arrays of "
                            "the sizes its documentation requires")
        layouts = rule(arrays)
        if allocator is not None and allocator.like is not None:
            given = [allocator.new_array(shape, dtype) for shape, dtype in layouts]
        elif on_device:
            given = [empty(shape, dtype, device=device) for shape, dtype in layouts]
        else:
            given = [np.empty(shape, dtype) for shape, dtype in layouts]
    outputs = [array if isinstance(array, DeviceArray) else empty(array.shape, array.dtype,
                                                                  device=device)
               for array in given]
    inputs = [to_device(array, device=device, stream=stream) for array in arrays.values()]
    launcher = OneShotLaunch(spec, attributes, device, read_shapes=len(outputs))
    try:
        launcher.launch(stream, [*inputs, *outputs])
        stream.synchronize()  # phase 2 waited already; the numpy path copies back now
    finally:
        launcher.close()
    results = []
    for array, result, shape in zip(given, outputs, launcher.view_shapes):
        count = math.prod(shape)
        if isinstance(array, np.ndarray):
            flat = array.reshape(-1)[:count]  # C-contiguous (check_out), or made here
            flat[...] = result.reshape(-1)[:count].numpy() if count else flat
            results.append(flat.reshape(shape))
        elif array.shape == shape:
            results.append(array if allocator is None else allocator.result(array))
        elif allocator is not None and allocator.result(array) is not array:
            tensor = allocator.result(array)  # a torch tensor: its first elements, viewed
            results.append(tensor.as_strided(shape, contiguous_strides(shape),
                                             tensor.storage_offset()))
        else:
            results.append(array.reshape(-1)[:count].reshape(shape))
    written = iter(results)
    returned = [None if left_out else next(written) for left_out in skipped]
    return returned[0] if len(returned) == 1 else tuple(returned)


def _tensor_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any,
                 adopted: TensorCall) -> Any:
    """The call given torch NPU tensors or a torch stream (``engine.tensors``): the tensors,
    in tensor lists and ``out=`` too, as DeviceArrays over their memory, the outputs not
    given allocated by torch, the results handed back as the tensors."""
    def adopt(value: Any, where: str) -> Any:
        if isinstance(value, (list, tuple)):
            return type(value)(adopt(member, f"{where}[{index}]")
                               for index, member in enumerate(value))
        return adopted.adopt(value, where)

    args = tuple(adopt(value, f"argument {index}") for index, value in enumerate(args))
    kwargs = {key: adopt(value, key) for key, value in kwargs.items()}
    out = None if out is None else adopt(out, "out")
    devices = [value.device for value in _flattened((*args, *kwargs.values(), out))
               if type(value) is DeviceArray]
    stream = adopted.stream(devices[0] if devices else None)
    results = run(name, args, kwargs, out, stream, adopted)
    adopted.finish()
    if isinstance(results, tuple):
        return tuple(_given_back(adopted, each) for each in results)
    return _given_back(adopted, results)


def _fast_tensor_call(spec: OperatorSpec, inputs: list[Any], values: tuple[Any, ...],
                      stream: Any) -> Any:
    """A repeated call of one output given torch tensors: over their DeviceArrays, the
    output allocated by torch as :func:`_allocate` shapes it, when the launch cache has the
    signature; else None (the caller takes the full path)."""
    adopted = TensorCall(stream)
    arrays = [adopted.adopt(value, name) for value, name in zip(inputs, spec.inputs)]
    if not all(type(array) is DeviceArray for array in arrays):
        return None
    shape = broadcast_shapes([array.shape for array in arrays]) if arrays else None
    if shape is None:
        return None
    target = adopted.stream(arrays[0].device)
    out = adopted.new_array(shape, arrays[0].dtype) if adopted.like is not None else None
    result = fast_call(spec, arrays, values, out, target)
    if result is None:
        return None
    adopted.finish()
    return adopted.result(result)


def _flattened(values: Sequence[Any]) -> list[Any]:
    """``values`` with lists and tuples among them opened, once."""
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, (list, tuple)) else (value,))
    return flat


def _given_back(adopted: TensorCall, value: Any) -> Any:
    if isinstance(value, list):
        return [adopted.result(member) for member in value]
    return adopted.result(value)


def _written(operator: str, outputs: list[catalog.Parameter], given: tuple[Any, ...] | None
             ) -> tuple[list[catalog.Parameter], tuple[Any, ...] | None, list[str]]:
    """The outputs the call writes, the arrays given for them, and the optional outputs
    left out (passed as NULL): those given as None in ``out=``, or without ``out=`` every
    ``...Optional`` output unless all of them are."""
    if given is None:
        skipped = [p.name for p in outputs if p.optional]
        if len(skipped) == len(outputs):
            skipped = []
        return [p for p in outputs if p.name not in skipped], None, skipped
    skipped = []
    for p, entry in zip(outputs, given):
        if entry is None:
            if not p.optional:
                raise TypeError(f"{operator}: out= gives None for {p.name}, which is not "
                                "optional; None is accepted only for outputs whose name ends "
                                "in Optional")
            skipped.append(p.name)
    return ([p for p in outputs if p.name not in skipped],
            tuple(entry for entry in given if entry is not None), skipped)


def _spelled(operator: str, names: tuple[str, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with each keyword given as the operator's spelling of its idea
    (:mod:`.ops.spellings`: ``keepdim=`` for ``keepDims``)."""
    from ..ops.spellings import parameter_for

    spelled: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for keyword, value in kwargs.items():
        name = parameter_for(keyword, names)
        if name in spelled:
            raise TypeError(f"{operator} got {name!r} twice (as {given_as[name]!r} and "
                            f"{keyword!r})")
        spelled[name], given_as[name] = value, keyword
    return spelled


def _tensor_values(parameter: catalog.Parameter, value: Any) -> tuple[Any, ...]:
    """The values given for a tensor parameter: a tensor list's members, or the one value."""
    from ..ops import catalog
    from ..ops import headers as _headers

    if value is None:
        return ()
    if isinstance(value, (list, tuple)) and \
            _headers.bare(parameter.c_type) in catalog.TENSOR_LIST_TYPES:
        return tuple(value)
    return (value,)


def _members(operator: str, name: str, value: Any) -> list[Any]:
    """The arrays of a tensor list argument ``name``: a list or tuple, no None."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{operator}: {name} is a tensor list: pass a list or tuple of arrays, "
                        f"got {type(value).__name__}")
    for index, member in enumerate(value):
        if member is None:
            raise TypeError(f"{operator}: {name}[{index}] is None; a tensor list holds arrays")
    return list(value)


def _flat_outputs(operator: str, outputs: list[catalog.Parameter], given: tuple[Any, ...] | None,
                  lists: dict[str, int]) -> tuple[tuple[str, ...], list[Any] | None]:
    """The output arrays' names and the arrays given (None when out= is not), a tensor list's
    arrays one by one as ``<parameter>[<i>]`` (their number recorded in ``lists``)."""
    from ..ops import catalog
    from ..ops import headers as _headers

    if given is None:
        for p in outputs:
            if _headers.bare(p.c_type) in catalog.TENSOR_LIST_TYPES:
                raise TypeError(f"{operator}: the arrays of the output tensor list {p.name} cannot "
                                "be inferred; pass out= with them")
        return tuple(p.name for p in outputs), None
    names: list[str] = []
    flat: list[Any] = []
    for p, entry in zip(outputs, given):
        if _headers.bare(p.c_type) in catalog.TENSOR_LIST_TYPES:
            members = _members(operator, f"out {p.name}", entry)
            lists[p.name] = len(members)
            names += [f"{p.name}[{index}]" for index in range(len(members))]
            flat += members
        else:
            names.append(p.name)
            flat.append(entry)
    if not flat:
        raise TypeError(f"{operator}: out= gives no array to write")
    return tuple(names), flat


def _grouped(outputs: list[catalog.Parameter], lists: dict[str, int], flat: list[Any]
             ) -> list[Any]:
    """The output arrays per output parameter: a tensor list's as a list."""
    grouped: list[Any] = []
    position = 0
    for p in outputs:
        if p.name in lists:
            grouped.append(flat[position:position + lists[p.name]])
            position += lists[p.name]
        else:
            grouped.append(flat[position])
            position += 1
    return grouped


def _check_inplace(operator: str, name: str, value: Any, array: Any) -> None:
    if isinstance(array, DeviceArray):
        return
    if array is not value or not array.flags.writeable or not array.flags.c_contiguous:
        raise TypeError(f"{operator}: {name} is updated in place, so it must be a writable "
                        "C-contiguous numpy array of native byte order, or a DeviceArray; got "
                        f"{type(value).__name__}")


def _rule_values(values: dict[str, Any], arrays: dict[str, Any], lists: dict[str, int]
                 ) -> dict[str, Any]:
    """A call's values for its output rule (:mod:`.ops.outputs`): the arrays by parameter
    name (a tensor list's as a list), the other arguments as given."""
    found = dict(values)
    found.update(arrays)
    for name, count in lists.items():
        found[name] = [arrays[f"{name}[{index}]"] for index in range(count)]
    return found


def _allocate(operator: str, values: dict[str, Any], arrays: dict[str, Any],
              names: tuple[str, ...], on_device: bool, device: int,
              allocator: TensorCall | None = None) -> tuple[Any, ...]:
    """The outputs ``names`` of a call, of the shape and dtype the operator's output rule
    gives (:mod:`.ops.outputs`), else of the broadcast shape of the tensor inputs and the
    first input's dtype (by torch, through ``allocator``, when the call was given torch
    tensors). An operator that only updates tensors in place (aclnnForeachZeroInplace) has
    none to allocate, whatever its tensors' shapes."""
    from ..ops.outputs import OutputLayout, infer

    if not names:
        return ()
    layouts = infer(operator, values) or {}
    fallback: OutputLayout | None = None
    made: list[Any] = []
    for name in names:
        layout = layouts.get(name)
        if layout is None:
            if fallback is None:
                fallback = _broadcast_layout(operator, name, arrays)
            layout = fallback
        if allocator is not None and allocator.like is not None:
            made.append(allocator.new_array(layout.shape, layout.dtype))
        elif on_device:
            made.append(empty(layout.shape, layout.dtype, device=device))
        else:
            made.append(np.empty(layout.shape, layout.dtype))
    return tuple(made)


def _broadcast_layout(operator: str, name: str, arrays: dict[str, Any]) -> Any:
    """The layout of an output no rule knows: the tensor inputs' broadcast shape and the
    first input's dtype, as an elementwise operator's; else a TypeError or ValueError naming
    the output and saying to pass it."""
    from ..ops.outputs import OutputLayout

    where = (f"{operator}: {name} cannot be inferred (aclnn_py has no output rule for "
             f"{operator}")
    advice = (f"); pass out= with an array for {name} of the shape and dtype CANN's doc of "
              f"{operator} gives (signature({operator!r}) lists its outputs)")
    if not arrays:
        raise TypeError(f"{where}, and it has no tensor inputs{advice}")
    shape = broadcast_shapes([a.shape for a in arrays.values()])
    if shape is None:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in arrays.items())
        raise ValueError(f"{where}, and its inputs do not broadcast: {shapes}{advice}")
    return OutputLayout(shape, next(iter(arrays.values())).dtype)


def _cast(array: DeviceArray, dtype: np.dtype) -> DeviceArray:
    """``DeviceArray.astype``: ``array`` as a new C-contiguous array of ``dtype``, by
    ``aclnnCast`` on the current stream, or through the host where CANN lacks it."""
    result = empty(array.shape, dtype, device=array.device)
    if not array.size:
        return result
    try:
        run("aclnnCast", (array, dtype), {}, result, None)
    except (LibraryNotFoundError, UnavailableError):
        result.copy_from(array.numpy().astype(dtype))
    return result


_arrays.cast_through = _cast
