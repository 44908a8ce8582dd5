"""The `memd` command line: `main` (the entry point), `parser` (one builder per verb), `commands`
(dispatch), `verbs`, `watch` and `context_hook` (client verbs), `render`, `serve`, `background`,
`init`, `hook` (the prompt hook's stdlib-only fast path) and `exit_codes`.

Rule: this file imports nothing, so `memd context --hook claude` reaches `memd.cli.hook`'s fast
path on the standard library alone.
"""
