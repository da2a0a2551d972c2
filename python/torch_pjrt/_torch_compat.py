"""The torch releases torch_pjrt builds against, and the Python-side
differences between them, in one place (the C++ ones are in
csrc/aten/torch_compat.h). A bridge added here names the torch change it
bridges; everything else is written against the newest release (the
package's Python side needs none for 2.11 to 2.14 today).

This module imports nothing (setup.py reads RELEASES from it before torch
may be imported, and the package reads it before its extension loads)."""

# The releases (major.minor) this source builds against; a wheel is built
# against one of them and requires it.
RELEASES = ("2.11", "2.12", "2.13", "2.14")

# The same range as a requirement: what the package's changes to torch
# itself (its Dynamo, inductor and GradScaler hooks) were written and tested
# for, named when one of them fails to apply.
TORCH_RELEASES = f"torch>={RELEASES[0]},<{RELEASES[-1].split('.')[0]}.{int(RELEASES[-1].split('.')[1]) + 1}"

