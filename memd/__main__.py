"""`python -m memd` runs the CLI."""

from memd.cli.main import main

raise SystemExit(main())
