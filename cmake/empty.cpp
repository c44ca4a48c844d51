// Placeholder source for a pipeline stage with no files yet.
