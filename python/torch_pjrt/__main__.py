"""python -m torch_pjrt <command>: conformance | bench | info | env"""
import sys


def main():
    cmds = {"conformance", "bench", "info", "env"}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print("usage: python -m torch_pjrt {conformance|bench|info|env} [options]", file=sys.stderr)
        return 2
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "info":  # first: it also reports a package that failed to load
        from .tools import info
        return info.main(rest)
    import _torch_pjrt_autoload as record
    if record.error is not None:
        print(record.error, file=sys.stderr)
        return 1
    if cmd == "conformance":
        from .tools import conformance
        return conformance.main(rest)
    if cmd == "bench":
        from .tools import bench
        return bench.main(rest)
    if cmd == "env":  # the README's table of environment variables
        from . import _env
        print(_env.markdown_table(), end="")
        return 0


if __name__ == "__main__":
    sys.exit(main())
