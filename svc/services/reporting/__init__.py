"""A report's life: filed (intake, redaction, files), listed and searched, changed, commented,
counted, exported, fanned out, kept or erased, and its repro kit."""
