"""commands - one module a subcommand of `hourglass` (trace-cmd's trace-<cmd>.c shape), each
with its NAME_main(argv); cli.py dispatches and imports only the one asked for. record is
hgtools.record, which hourglass record starts without argparse (__main__.py)."""
