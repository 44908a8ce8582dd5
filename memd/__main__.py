"""`python -m memd` runs the CLI."""

from memd.entry import main

raise SystemExit(main())
