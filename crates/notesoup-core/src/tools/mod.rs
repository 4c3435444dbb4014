//! Tools: the shared operations behind every host's tools, with bounded results.
