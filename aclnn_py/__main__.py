"""``python -m aclnn_py``: the doctor (see :mod:`aclnn_py.doctor`)."""

import sys

from .doctor import main

sys.exit(main())
