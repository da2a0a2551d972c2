"""python -m torch_pjrt.tools.bench: the same as `python -m torch_pjrt bench`."""
import sys

from .cli import main

sys.exit(main())
