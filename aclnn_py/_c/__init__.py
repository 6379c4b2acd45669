"""The C layer: the only code that touches cffi.

``_ffi`` holds the C declarations of ``headers/`` (generated at install time),
``codes`` CANN's enum values and status names, ``loader`` finds and opens the CANN
libraries (or the bundled emulator), and ``lowlevel`` has one checked Python
function per C call: every status passes through its ``check``. The layers above
import ``lowlevel``; none of them sees ``ffi``.
"""
