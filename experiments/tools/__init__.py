"""Tools the paper experiments share: reading run records, the science report, and the
first-steps and initial-signal probes of a run."""
