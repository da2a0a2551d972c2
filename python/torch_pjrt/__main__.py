"""python -m torch_pjrt <command>: conformance | bench | pytorch-tests | info | env

info and env are user tools (_info.py, _env.py); conformance, bench and
pytorch-tests are developer tools, in the tools/ subpackage."""
import sys


def main():
    cmds = {"conformance", "bench", "pytorch-tests", "info", "env"}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print("usage: python -m torch_pjrt {conformance|bench|pytorch-tests|info|env} [options]", file=sys.stderr)
        return 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "info":  # first: it also reports a package that failed to load
        from . import _info
        return _info.main(rest)
    import _torch_pjrt_autoload as record
    if record.error is not None:
        print(record.error, file=sys.stderr)
        return 1
    if cmd == "conformance":
        from .tools import conformance
        return conformance.main(rest)
    if cmd == "pytorch-tests":
        from .tools import pytorch_tests
        return pytorch_tests.main(rest)
    if cmd == "bench":
        from .tools.bench import cli
        return cli.main(rest)
    if cmd == "env":  # the README's table of environment variables
        from . import _env
        print(_env.markdown_table(), end="")
        return 0


if __name__ == "__main__":
    sys.exit(main())
