"""Export layouts: one class per layout, one module each, listed once in `registry.LAYOUTS`."""
