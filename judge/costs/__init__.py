"""The cost feature in one place: the [cost] table, measuring, the report's section, its view."""
