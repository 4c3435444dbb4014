//! Boot: the snapshot of the five homes and the pure renderer of the boot text.
