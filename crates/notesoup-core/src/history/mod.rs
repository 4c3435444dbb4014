//! History: the host-neutral decoded event model, windows, paging, search and read.
