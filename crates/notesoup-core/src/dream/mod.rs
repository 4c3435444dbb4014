//! Dream: lock, gates, jail, crumpled-only delete, Git audit, doctor and report.
