"""The `memd` command line: `main` (the entry point), `parser` (one builder per verb), `dispatch`
(a parsed command line to its verb), `usage_errors`, `verbs`, `watch` and `context_hook` (client
verbs), `render`, `serve`, `background`, `init`, `hook` (the prompt hook's stdlib-only fast path)
and `exit_codes`.

Rule: this file imports nothing, so `memd context --hook claude` reaches `memd.cli.hook`'s fast
path on the standard library alone.
"""
