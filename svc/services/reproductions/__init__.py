"""Reproductions (docs/repro-kit.md, "The runner"; contract v6 §25): a report's steps run in a
browser against the project's staging origin, and what came of it: `reproduced` when the
report's own error or failed request comes again, `not_reproduced`, `inconclusive` (the report
holds neither) or `failed` (a step could not run).

`runs` is the service (who may ask, the queue, the verdict, what the report gets); `browser`
runs one test in a process of its own, with the sandbox beside it (sandbox.mjs, progress.mjs).
"""
