"""How a call runs: validation, the launch path and its per-stream cache, the numpy
path (staged round trips), chunking of arrays larger than the device, and calls
spread over several devices, and ``aclnn_py.call``'s machinery (``call``: any operator
through its header).

It uses ``ops`` to know an operator and ``runtime`` for the resources it launches on.
"""
