//! Settings: the `notesoup` key, the global/project merge and validation.
