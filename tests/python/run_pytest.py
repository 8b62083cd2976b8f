#!/usr/bin/env python3
"""ctest's entry to the pytest suite in this folder: exit 77 (skipped) where pytest, numpy or the
rltrain module cannot be imported, else pytest's own exit status. Arguments go to pytest."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e} (tools/setup.sh --test installs it)")
    sys.exit(77)
try:
    import rltrain  # noqa: F401
except ImportError as e:
    print(f"rltrain cannot be imported from PYTHONPATH={os.environ.get('PYTHONPATH', '')}: {e}")
    sys.exit(1)
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__)), *sys.argv[1:]]))
