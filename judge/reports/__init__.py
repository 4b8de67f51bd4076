"""Reports and their words: the report's schema, its diagnostics and sections, both languages."""
