"""Everything that owns a device resource: the process's ACL state and devices,
streams and events, aclTensor and executor handles, memory pools and device arrays.

Each object releases what it owns deterministically (``close``/``free``, context
managers), with a safety net for what is only collected.
"""
