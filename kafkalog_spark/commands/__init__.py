"""`kafkalog` subcommands: one module each, each with ``add_parser(subparsers)``."""
