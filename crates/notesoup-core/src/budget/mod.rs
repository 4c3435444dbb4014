//! Budget: constants, thresholds, the countdown and the reminder and warning texts.
