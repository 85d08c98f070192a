"""``python -m training.lease {prepare,run}``: see ``training.lease``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.lease", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    from training.lease import prepare, run

    prepare.add_arguments(commands.add_parser(
        "prepare", help="build .lease/ (data, wheels, manifest) and print what will travel"))
    run.add_arguments(commands.add_parser(
        "run", help="train until a deadline on the accelerator and write a bundle"))
    for name, text in (("leave-behind", "leave the largest releases out of what a call copies"),
                       ("restore", "bring back what leave-behind left out")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--out", default=".lease", help=argparse.SUPPRESS)
        sub.add_argument("--root", default=".", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    handlers = {"prepare": prepare.main, "run": run.main,
                "leave-behind": prepare.leave_behind_main, "restore": prepare.restore_main}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
