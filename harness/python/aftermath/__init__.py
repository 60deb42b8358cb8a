"""aftermath: the harness's programs live in the environment's bin/ (the wheel
puts them there); this package finds them for `python -m aftermath`."""

import os
import sysconfig

__all__ = ["program"]


def program(name="aftermath"):
    """The path of one of aftermath's programs in this environment's bin/."""
    return os.path.join(sysconfig.get_path("scripts"), name)
