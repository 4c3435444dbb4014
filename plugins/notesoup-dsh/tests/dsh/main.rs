//! Integration tests of notesoup-dsh.
