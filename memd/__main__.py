"""`python -m memd` runs the CLI."""

from memd.cli import main

raise SystemExit(main())
