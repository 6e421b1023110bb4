"""Demo data: the published curves shipped in data/ and the builder that imports them."""
