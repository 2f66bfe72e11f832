"""How sure is each number: standard errors, 95% intervals and paired tests for the pack's metrics (pure,
seeded; each scorer gives its ``Resampling``; docs/uncertainty.md)."""
